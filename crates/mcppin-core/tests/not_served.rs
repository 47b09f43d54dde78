//! Optional lists a server declares but does not implement (`-32601 Method not found`), as
//! published servers on the Python SDK below 2 answer `resources/templates/list`: recorded as
//! not served in the manifest and the lockfile (version 4, docs/formats.md), so that a later
//! reading serving items there is a departure for `mcppin verify` and for the guard, and a
//! reading that still does not serve them holds.

use std::fmt::Write as _;
use std::time::Duration;

use mcppin_core::Error;
use mcppin_core::engine::{ApprovedServer, Config, Forward, Mode, Session};
use mcppin_core::lockfile::{LockedServer, Lockfile};
use mcppin_core::manifest::Manifest;
use mcppin_core::policy::{Options, Policy, Status, verify};
use mcppin_core::surface::ItemKind;

const TOOL: &str =
    r#"{"name":"read_query","description":"Run a SELECT query","inputSchema":{"type":"object"}}"#;
const PROMPT: &str = r#"{"name":"mcp-demo","description":"A demo prompt"}"#;
const TEMPLATE: &str = r#"{"uriTemplate":"memo://{name}","name":"memo"}"#;

/// A manifest of one server `db` at `version`: `prompts` and `templates` are the items of
/// those lists, `not_served` the JSON of the member (or nothing).
fn manifest_text(version: u64, prompts: &str, templates: &str, not_served: &str) -> String {
    let not_served = if not_served.is_empty() {
        String::new()
    } else {
        format!(r#","not_served":{not_served}"#)
    };
    format!(
        r#"{{"schema_version":{version},"complete":true,"servers":[{{"id":"db","reported_name":"sqlite",
        "prompts":[{prompts}],"resource_templates":[{templates}],"tools":[{TOOL}]{not_served}}}]}}"#
    )
}

fn manifest(prompts: &str, templates: &str, not_served: &str) -> Manifest {
    Manifest::parse(manifest_text(4, prompts, templates, not_served).as_bytes()).unwrap()
}

/// The capture of mcp-server-sqlite 2025.4.25: prompts served, templates not.
fn unserved_templates() -> Manifest {
    manifest(PROMPT, "", r#"["resource_templates"]"#)
}

fn policies(report: &mcppin_core::policy::Report) -> Vec<(Policy, Option<&str>, bool)> {
    report
        .findings
        .iter()
        .map(|f| (f.policy(), f.item.as_deref(), f.gated))
        .collect()
}

#[test]
fn a_manifest_records_the_lists_not_served_at_version_4() {
    let m = unserved_templates();
    let db = &m.servers["db"];
    assert!(db.widened);
    assert_eq!(
        db.not_served.iter().copied().collect::<Vec<_>>(),
        [ItemKind::ResourceTemplate]
    );
    let bytes = m.to_bytes();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(text.contains(r#""schema_version": 4"#), "{text}");
    assert!(text.contains(r#""not_served": ["#), "{text}");
    assert_eq!(Manifest::parse(&bytes).unwrap(), m);
    // Both lists, written in code point order whatever order they were read in.
    let both = manifest("", "", r#"["resource_templates","prompts"]"#);
    let text = String::from_utf8(both.to_bytes()).unwrap();
    let compact: String = text.split_whitespace().collect();
    assert!(
        compact.contains(r#""not_served":["prompts","resource_templates"]"#),
        "{text}"
    );
}

#[test]
fn a_manifest_whose_lists_were_all_served_records_none_not_served() {
    let m = manifest(PROMPT, TEMPLATE, "");
    let text = String::from_utf8(m.to_bytes()).unwrap();
    assert!(text.contains(r#""schema_version": 4"#), "{text}");
    assert!(!text.contains("not_served"), "{text}");
    // A version 3 manifest reads as before.
    let v3 = manifest_text(3, PROMPT, TEMPLATE, "");
    assert_eq!(Manifest::parse(v3.as_bytes()).unwrap(), m);
}

#[test]
fn not_served_before_version_4_is_refused_naming_the_version() {
    let v3 = manifest_text(3, "", "", r#"["prompts"]"#);
    let err = Manifest::parse(v3.as_bytes()).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::LaterVersionMember { pointer, name, version: 3, since: 4, .. }
                if pointer == "/servers/0/not_served" && name == "not_served"
        ),
        "{err:?}"
    );
    let lock = r#"{"schema_version":3,"approval_serial":1,"servers":[{"id":"db","prompts":[],
        "resource_templates":[],"tools":[],"not_served":["prompts"]}]}"#;
    let err = Lockfile::parse(lock.as_bytes()).unwrap_err();
    assert!(
        matches!(&err, Error::UnknownMember { pointer, .. } if pointer == "/servers/0/not_served"),
        "{err:?}"
    );
}

#[test]
fn a_list_named_not_served_holds_no_item() {
    let text = manifest_text(4, "", TEMPLATE, r#"["resource_templates"]"#);
    let err = Manifest::parse(text.as_bytes()).unwrap_err();
    assert!(
        matches!(&err, Error::Invalid { pointer, .. } if pointer == "/servers/0/resource_templates/0"),
        "{err:?}"
    );
    let lock = Lockfile::approve(None, &manifest("", TEMPLATE, ""), &[]).unwrap();
    let text = String::from_utf8(lock.to_bytes()).unwrap().replacen(
        r#""resource_templates": ["#,
        r#""not_served": ["resource_templates"], "resource_templates": ["#,
        1,
    );
    let text = text.replacen(r#""schema_version": 3"#, r#""schema_version": 4"#, 1);
    let err = Lockfile::parse(text.as_bytes()).unwrap_err();
    assert!(
        matches!(&err, Error::Invalid { pointer, .. } if pointer == "/servers/0/resource_templates/0"),
        "{err:?}"
    );
}

#[test]
fn not_served_names_each_optional_list_once() {
    for (not_served, pointer) in [
        (r#"["tools"]"#, "/servers/0/not_served/0"),
        (r#"["resources"]"#, "/servers/0/not_served/0"),
        (r#"["prompts","prompts"]"#, "/servers/0/not_served/1"),
        (r#"[1]"#, "/servers/0/not_served/0"),
        (r#""prompts""#, "/servers/0/not_served"),
    ] {
        let text = manifest_text(4, "", "", not_served);
        let err = Manifest::parse(text.as_bytes()).unwrap_err();
        assert!(
            matches!(&err, Error::Invalid { pointer: p, .. } if p == pointer),
            "{not_served}: {err:?}"
        );
    }
    // Only beside the widened surface: a capture that did not read the lists says nothing.
    let bare = r#"{"schema_version":4,"complete":true,"servers":[{"id":"db","tools":[],
        "not_served":["prompts"]}]}"#;
    let err = Manifest::parse(bare.as_bytes()).unwrap_err();
    assert!(
        matches!(&err, Error::Invalid { pointer, .. } if pointer == "/servers/0/not_served"),
        "{err:?}"
    );
}

#[test]
fn the_lockfile_records_the_lists_not_served_at_version_4() {
    let lock = Lockfile::approve(None, &unserved_templates(), &[]).unwrap();
    assert_eq!(lock.schema_version(), 4);
    let bytes = lock.to_bytes();
    let back = Lockfile::parse(&bytes).unwrap();
    assert_eq!(back, lock);
    assert_eq!(
        back.servers["db"]
            .not_served
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        [ItemKind::ResourceTemplate]
    );
    // Locking the same capture again writes the same bytes and keeps the serial.
    let again = Lockfile::approve(Some(&back), &unserved_templates(), &[]).unwrap();
    assert_eq!(again.to_bytes(), bytes);
    assert_eq!(again.approval_serial, 1);
    // Approving a capture that serves the list moves the serial and drops the record.
    let served = Lockfile::approve(Some(&back), &manifest(PROMPT, TEMPLATE, ""), &[]).unwrap();
    assert_eq!(served.approval_serial, 2);
    assert_eq!(served.schema_version(), 4);
    assert!(served.servers["db"].not_served.is_empty());
    // Approving only the new template says the list is served, the rest stays.
    let item = "db/memo:~1~1{name}".parse().unwrap();
    let one = Lockfile::approve(Some(&back), &manifest(PROMPT, TEMPLATE, ""), &[item]).unwrap();
    assert!(one.servers["db"].not_served.is_empty());
    assert!(
        one.servers["db"]
            .resource_templates
            .contains_key("memo://{name}")
    );
}

#[test]
fn a_later_capture_serving_a_list_not_served_is_a_gated_departure() {
    let lock = Lockfile::approve(None, &unserved_templates(), &[]).unwrap();
    let served = manifest(PROMPT, TEMPLATE, "");
    let report = verify(&lock, &served, &Options::default());
    assert_eq!(
        policies(&report),
        [(Policy::ResourceTemplateAdded, Some("memo://{name}"), true)]
    );
    assert_eq!(report.status(), Status::Fail);
    assert_eq!(report.exit_code(), 1);
}

#[test]
fn a_capture_that_still_does_not_serve_the_list_holds() {
    let lock = Lockfile::approve(None, &unserved_templates(), &[]).unwrap();
    let report = verify(&lock, &unserved_templates(), &Options::default());
    assert_eq!(policies(&report), []);
    assert_eq!(report.status(), Status::Pass);
    assert_eq!(report.matched, 2);
    // Serving the list empty adds nothing a client sees.
    let report = verify(&lock, &manifest(PROMPT, "", ""), &Options::default());
    assert_eq!(policies(&report), []);
}

#[test]
fn an_approved_list_the_server_stops_serving_is_reported_removed() {
    let lock = Lockfile::approve(None, &manifest(PROMPT, TEMPLATE, ""), &[]).unwrap();
    let report = verify(&lock, &unserved_templates(), &Options::default());
    assert_eq!(
        policies(&report),
        [(Policy::ResourceTemplateRemoved, Some("memo://{name}"), true)]
    );
}

// The guard on the wire: the same approval, judged message by message.

fn approved() -> LockedServer {
    let lock = Lockfile::approve(None, &unserved_templates(), &[]).unwrap();
    lock.servers["db"].clone()
}

fn shown(forward: &Forward) -> String {
    match forward {
        Forward::Nothing => "nothing".to_owned(),
        Forward::Original => "original".to_owned(),
        Forward::Replace(bytes) => format!("replaced: {}", String::from_utf8_lossy(bytes)),
    }
}

/// Feeds a client request and the server's answer to it as `mcppin-guard` does (its refusals
/// name it); returns the transcript.
fn exchange(mode: Mode, request: &str, answer: &str) -> String {
    let mut config = Config::default();
    config.mode = mode;
    config.events = true;
    config.refuser = "mcppin-guard";
    let mut session = Session::new(ApprovedServer::unsigned(approved()), config);
    let mut out = String::new();
    let now = Duration::from_millis(10);
    let action = session.client_line(request.as_bytes(), now);
    writeln!(
        out,
        "c {request}\n  to server: {}",
        shown(&action.to_server)
    )
    .unwrap();
    let action = session.server_line(answer.as_bytes(), now);
    writeln!(out, "s {answer}\n  to client: {}", shown(&action.to_client)).unwrap();
    for note in &action.notes {
        // A refused tool's changes are lines under its heading.
        for line in note.to_string().lines() {
            writeln!(out, "  note: {line}").unwrap();
        }
    }
    for event in &action.events {
        writeln!(out, "  event: {}", serde_json::to_string(event).unwrap()).unwrap();
    }
    if let Some(stop) = &action.stop {
        writeln!(out, "  stop: {stop:?}").unwrap();
    }
    out
}

const TEMPLATES_LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"resources/templates/list"}"#;

#[test]
fn the_guard_refuses_a_list_the_lock_says_was_not_served() {
    let answer =
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"resourceTemplates":[{TEMPLATE}]}}}}"#);
    let refused = exchange(Mode::Refuse, TEMPLATES_LIST, &answer);
    assert!(
        refused.contains(
            "mcppin-guard refused resources/templates/list: 1 departed (resource-template-added)"
        ),
        "{refused}"
    );
    insta::assert_snapshot!("refused", refused);
    // Quarantine withholds the unapproved template, as it would any unapproved item.
    let withheld = exchange(Mode::Quarantine, TEMPLATES_LIST, &answer);
    assert!(
        withheld
            .contains(r#"replaced: {"jsonrpc":"2.0","id":1,"result":{"resourceTemplates":[]}}"#),
        "{withheld}"
    );
    insta::assert_snapshot!("withheld", withheld);
}

#[test]
fn the_guard_passes_method_not_found_for_a_list_not_served() {
    let answer = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#;
    let passed = exchange(Mode::Refuse, TEMPLATES_LIST, answer);
    assert!(passed.contains("  to client: original"), "{passed}");
    assert!(!passed.contains("note:"), "{passed}");
    assert!(!passed.contains("stop:"), "{passed}");
    insta::assert_snapshot!("method_not_found", passed);
    // The other list, served as approved, passes too.
    let prompts = r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list"}"#;
    let answer = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"prompts":[{PROMPT}]}}}}"#);
    let passed = exchange(Mode::Refuse, prompts, &answer);
    assert!(passed.contains("  to client: original"), "{passed}");
}

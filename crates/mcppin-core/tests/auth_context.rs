//! Authorization contexts (docs/formats.md, "Authorization context"): a label per server in
//! the manifest and the lockfile; one lockfile holds one server under several contexts; a
//! surface is compared only with the approval of its own context; older files read as the
//! default context.

use mcppin_core::lockfile::Lockfile;
use mcppin_core::manifest::Manifest;
use mcppin_core::policy::{Options, Reason, Status, verify};
use mcppin_core::report;
use mcppin_core::surface::{AuthContext, AuthContextError};
use mcppin_core::{Document, Error};

/// A manifest of server `docs` serving `tools` (JSON), captured under `context`.
fn manifest(context: Option<&str>, tools: &str) -> Manifest {
    let member = context.map_or(String::new(), |c| format!(r#""auth_context":"{c}","#));
    Manifest::parse(
        format!(
            r#"{{"schema_version":4,"complete":true,"servers":[{{"id":"docs",{member}"tools":{tools}}}]}}"#
        )
        .as_bytes(),
    )
    .unwrap()
}

const READER: &str = r#"[{"name":"search"}]"#;
const ADMIN: &str = r#"[{"name":"search"},{"name":"delete_all"}]"#;

fn label(text: &str) -> AuthContext {
    text.parse().unwrap()
}

#[test]
fn a_label_is_bounded_and_plain() {
    for good in ["a", "read-only", "ci.bot_2", &"x".repeat(64)] {
        assert_eq!(label(good).as_str(), good);
    }
    for (bad, why) in [
        ("", AuthContextError::Length),
        (&"x".repeat(65), AuthContextError::Length),
        ("-x", AuthContextError::Character),
        (".x", AuthContextError::Character),
        ("a b", AuthContextError::Character),
        ("a/b", AuthContextError::Character),
        ("r\u{e9}ader", AuthContextError::Character),
        ("Bearer:abc", AuthContextError::Character),
        ("default", AuthContextError::Reserved),
    ] {
        assert_eq!(bad.parse::<AuthContext>(), Err(why), "{bad:?}");
    }
}

#[test]
fn one_lockfile_holds_one_server_under_several_contexts() {
    let lock = Lockfile::approve(None, &manifest(Some("reader"), READER), &[]).unwrap();
    assert!(lock.servers.is_empty());
    assert_eq!(lock.approval_serial, 1);
    let lock = Lockfile::approve(Some(&lock), &manifest(Some("admin"), ADMIN), &[]).unwrap();
    let lock = Lockfile::approve(Some(&lock), &manifest(None, READER), &[]).unwrap();
    assert_eq!(lock.approval_serial, 3);
    assert_eq!(
        lock.contexts_of("docs"),
        [None, Some(&label("admin")), Some(&label("reader"))]
    );
    assert_eq!(
        lock.entry("docs", Some(&label("admin")))
            .unwrap()
            .tools
            .len(),
        2
    );
    assert_eq!(
        lock.entry("docs", Some(&label("reader")))
            .unwrap()
            .tools
            .len(),
        1
    );
    // Written with the default first, then the labels in order, and read back the same.
    let bytes = lock.to_bytes();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let admin = text.find(r#""auth_context": "admin""#).unwrap();
    let reader = text.find(r#""auth_context": "reader""#).unwrap();
    assert!(admin < reader, "{text}");
    assert_eq!(text.matches(r#""id": "docs""#).count(), 3, "{text}");
    let again = Lockfile::parse(&bytes).unwrap();
    assert_eq!(again, lock);
    // Re-locking one context unchanged writes the same bytes and keeps the serial.
    let same = Lockfile::approve(Some(&again), &manifest(Some("admin"), ADMIN), &[]).unwrap();
    assert_eq!(same.to_bytes(), bytes);
    // A change in one context moves the serial and leaves the others as they were.
    let moved = Lockfile::approve(
        Some(&again),
        &manifest(Some("reader"), r#"[{"name":"search","description":"x"}]"#),
        &[],
    )
    .unwrap();
    assert_eq!(moved.approval_serial, 4);
    assert_eq!(
        moved.entry("docs", Some(&label("admin"))),
        again.entry("docs", Some(&label("admin")))
    );
    assert_eq!(moved.entry("docs", None), again.entry("docs", None));
}

#[test]
fn a_surface_is_compared_with_the_approval_of_its_own_context() {
    let lock = Lockfile::approve(None, &manifest(Some("reader"), READER), &[]).unwrap();
    let lock = Lockfile::approve(Some(&lock), &manifest(Some("admin"), ADMIN), &[]).unwrap();
    // The admin surface holds against the admin approval, though the reader one has fewer
    // tools.
    let r = verify(&lock, &manifest(Some("admin"), ADMIN), &Options::default());
    assert_eq!(r.status(), Status::Pass, "{}", report::to_text(&r));
    assert_eq!(r.matched, 2);
    // The admin tools served under the reader context are drift of the reader approval.
    let r = verify(&lock, &manifest(Some("reader"), ADMIN), &Options::default());
    assert_eq!(r.status(), Status::Fail);
    assert_eq!(r.findings[0].item.as_deref(), Some("delete_all"));
}

#[test]
fn surfaces_of_different_contexts_are_not_compared() {
    let lock = Lockfile::approve(None, &manifest(Some("reader"), READER), &[]).unwrap();
    // Captured under admin, approved under reader only: not compared (exit 3), both named.
    let r = verify(&lock, &manifest(Some("admin"), ADMIN), &Options::default());
    assert_eq!(r.status(), Status::Partial);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(
        r.unverified[0].reason,
        Reason::AuthContextDiffers {
            approved: vec!["reader".to_owned()],
            served: "admin".to_owned()
        }
    );
    let text = report::to_text(&r);
    assert!(
        text.contains(
            "not compared: docs\n  captured under authorization context admin, approved under \
             reader only"
        ),
        "{text}"
    );
    assert_eq!(report::from_json(&report::to_json(&r)).unwrap(), r);
    // The default context is a context: a capture without a label against a labelled
    // approval, and the reverse.
    let r = verify(&lock, &manifest(None, READER), &Options::default());
    assert_eq!(r.status(), Status::Partial);
    assert!(report::to_text(&r).contains("context default, approved under reader only"));
    let unlabelled = Lockfile::approve(None, &manifest(None, READER), &[]).unwrap();
    let r = verify(
        &unlabelled,
        &manifest(Some("reader"), READER),
        &Options::default(),
    );
    assert_eq!(r.status(), Status::Partial);
    // Not new, not gone: the server was not compared.
    let servers = report::ServerChanges::between(
        &unlabelled,
        &manifest(Some("reader"), READER),
        &Options::default(),
    );
    assert!(servers.new.is_empty() && servers.gone.is_empty());
}

#[test]
fn older_files_read_as_the_default_context() {
    let v3 = br#"{"schema_version":3,"approval_serial":1,"servers":[{"id":"docs","tools":[]}]}"#;
    let lock = Lockfile::parse(v3).unwrap();
    assert_eq!(lock.contexts_of("docs"), [None]);
    let served = Manifest::parse(
        br#"{"schema_version":3,"complete":true,"servers":[{"id":"docs","tools":[]}]}"#,
    )
    .unwrap();
    assert_eq!(
        verify(&lock, &served, &Options::default()).status(),
        Status::Pass
    );
}

#[test]
fn the_member_is_version_4_and_a_label() {
    let v3 = br#"{"schema_version":3,"approval_serial":1,"servers":[{"id":"docs","auth_context":"reader","tools":[]}]}"#;
    assert!(matches!(
        Lockfile::parse(v3),
        Err(Error::LaterVersionMember { document: Document::Lockfile, ref pointer, since: 4, .. })
            if pointer == "/servers/0/auth_context"
    ));
    let m3 = br#"{"schema_version":3,"complete":true,"servers":[{"id":"docs","auth_context":"reader","tools":[]}]}"#;
    assert!(matches!(
        Manifest::parse(m3),
        Err(Error::LaterVersionMember {
            document: Document::Manifest,
            since: 4,
            ..
        })
    ));
    for bad in [r#""default""#, r#""a b""#, "1", r#""""#] {
        let text = format!(
            r#"{{"schema_version":4,"approval_serial":1,"servers":[{{"id":"docs","auth_context":{bad},"tools":[]}}]}}"#
        );
        assert!(
            matches!(
                Lockfile::parse(text.as_bytes()),
                Err(Error::Invalid { ref pointer, .. }) if pointer == "/servers/0/auth_context"
            ),
            "{bad}"
        );
    }
    // The key is the server and its context: one pair twice is refused.
    let twice = br#"{"schema_version":4,"approval_serial":1,"servers":[
        {"id":"docs","auth_context":"reader","tools":[]},
        {"id":"docs","tools":[]},
        {"id":"docs","auth_context":"reader","tools":[]}]}"#;
    assert!(matches!(
        Lockfile::parse(twice),
        Err(Error::DuplicateServer { ref pointer, .. }) if pointer == "/servers/2"
    ));
    // The manifest writes what it read.
    let m = manifest(Some("reader"), READER);
    assert_eq!(Manifest::parse(&m.to_bytes()).unwrap(), m);
    assert!(
        String::from_utf8(m.to_bytes())
            .unwrap()
            .contains(r#""auth_context": "reader""#)
    );
}

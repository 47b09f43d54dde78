//! The hook's checks, each where it fires and where it holds.

use super::*;
use crate::engine::{RequestId, ToolAdmission};
use crate::manifest::Manifest;

const AT: &str = "2026-08-01T09:30:00.000Z";

/// A lockfile approving `servers`: each id with its tools (plain objects with a name).
fn lock(servers: &[(&str, &[&str])]) -> Lockfile {
    let entries: Vec<String> = servers
        .iter()
        .map(|(id, tools)| {
            let tools: Vec<String> = tools
                .iter()
                .map(|t| format!(r#"{{"name": {}}}"#, Value::from(*t)))
                .collect();
            format!(
                r#"{{"id": {}, "tools": [{}]}}"#,
                Value::from(*id),
                tools.join(",")
            )
        })
        .collect();
    let manifest = format!(
        r#"{{"schema_version": 2, "complete": true, "servers": [{}]}}"#,
        entries.join(",")
    );
    Lockfile::approve(None, &Manifest::parse(manifest.as_bytes()).unwrap(), &[]).unwrap()
}

fn call(tool_name: &str, server_name: Option<&str>) -> Call {
    Call {
        event: "PreToolUse".into(),
        tool_name: tool_name.into(),
        server_name: server_name.map(str::to_owned),
    }
}

fn approved(lock: &Lockfile, server: &str, tool: &str) -> Digest {
    match lock.servers[server].tools[tool].pin() {
        Pin::Digest(d) => *d,
        Pin::Undecidable(_) => panic!("undecidable"),
    }
}

#[test]
fn names_are_normalised_as_claude_code_does() {
    assert_eq!(normalize("files"), "files");
    assert_eq!(normalize("my-server_2"), "my-server_2");
    assert_eq!(normalize("a.b c/d:e"), "a_b_c_d_e");
    assert_eq!(normalize("caf\u{e9}"), "caf_", "one UTF-16 unit, one _");
    assert_eq!(normalize("x\u{1F600}y"), "x__y", "two UTF-16 units, two _");
    assert_eq!(
        normalize("claude.ai Google  Drive!"),
        "claude_ai_Google_Drive"
    );
    assert_eq!(normalize("not claude.ai  x"), "not_claude_ai__x");
    assert_eq!(normalize(""), "");
    assert_eq!(tool_name("a.b", "get it"), "mcp__a_b__get_it");
}

#[test]
fn the_documented_input_shapes_are_read() {
    // Claude Code's documented PreToolUse input, then with the mcp_server member 2.1.328 adds
    // for an MCP tool.
    let plain = br#"{"session_id": "abc123", "transcript_path": "/home/u/.claude/projects/p/abc123.jsonl",
        "cwd": "/home/u/p", "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "mcp__docs__search", "tool_input": {"query": "x"}, "tool_use_id": "toolu_01"}"#;
    assert_eq!(Call::parse(plain).unwrap(), call("mcp__docs__search", None));
    let with_server = br#"{"session_id": "abc123", "hook_event_name": "PreToolUse",
        "tool_name": "mcp__my_docs__search", "tool_input": {},
        "mcp_server": {"name": "my.docs", "source": "project"}}"#;
    assert_eq!(
        Call::parse(with_server).unwrap(),
        call("mcp__my_docs__search", Some("my.docs"))
    );
    // The arguments are not judged: a lone surrogate or a repeated member there passes.
    let odd_arguments = br#"{"hook_event_name": "PreToolUse", "tool_name": "mcp__a__b",
        "tool_input": {"t": "\ud800", "k": 1, "k": 2}}"#;
    assert!(Call::parse(odd_arguments).is_ok());
}

#[test]
fn an_input_that_cannot_be_read_is_refused() {
    assert!(matches!(Call::parse(b"{"), Err(InputError::Json(_))));
    assert!(matches!(Call::parse(b""), Err(InputError::Json(_))));
    assert_eq!(Call::parse(b"[]"), Err(InputError::NotObject));
    assert_eq!(
        Call::parse(br#"{"hook_event_name": "PreToolUse"}"#),
        Err(InputError::Missing("tool_name"))
    );
    assert_eq!(
        Call::parse(br#"{"hook_event_name": "PreToolUse", "tool_name": 3}"#),
        Err(InputError::Missing("tool_name"))
    );
    assert_eq!(
        Call::parse(br#"{"tool_name": "mcp__a__b"}"#),
        Err(InputError::Missing("hook_event_name"))
    );
    assert_eq!(
        Call::parse(
            br#"{"hook_event_name": "PreToolUse", "tool_name": "mcp__a__b", "tool_name": "mcp__a__c"}"#
        ),
        Err(InputError::Repeated("tool_name"))
    );
    assert_eq!(
        Call::parse(
            br#"{"hook_event_name": "PreToolUse", "tool_name": "mcp__a__b", "mcp_server": {"name": "a", "name": "c"}}"#
        ),
        Err(InputError::Repeated("mcp_server.name"))
    );
    assert_eq!(
        Call::parse(br#"{"hook_event_name": "PostToolUse", "tool_name": "mcp__a__b"}"#),
        Err(InputError::Event("PostToolUse".into()))
    );
}

#[test]
fn a_call_maps_to_its_server_and_tool() {
    let lock = lock(&[("docs", &["search", "fetch"]), ("my.files", &["read file"])]);
    let target = resolve(&lock, &call("mcp__docs__search", None)).unwrap();
    assert_eq!((target.server, target.tool), ("docs", "search"));
    assert_eq!(target.approved, Some(approved(&lock, "docs", "search")));
    let target = resolve(&lock, &call("mcp__my_files__read_file", None)).unwrap();
    assert_eq!((target.server, target.tool), ("my.files", "read file"));
    let named = resolve(&lock, &call("mcp__my_files__read_file", Some("my.files"))).unwrap();
    assert_eq!(named.server, "my.files");
}

#[test]
fn a_call_to_nothing_approved_is_blocked() {
    let lock = lock(&[("docs", &["search"])]);
    assert_eq!(
        resolve(&lock, &call("mcp__docs__delete", None)),
        Err(Block::NotApproved {
            server: "docs".into()
        })
    );
    assert_eq!(
        resolve(&lock, &call("mcp__other__search", None)),
        Err(Block::UnknownServer)
    );
    assert_eq!(resolve(&lock, &call("Bash", None)), Err(Block::NotMcp));
    // The configured name given beside the tool name must be the lockfile's id.
    assert_eq!(
        resolve(&lock, &call("mcp__docs__search", Some("d.o.c.s"))),
        Err(Block::UnknownServer)
    );
}

#[test]
fn a_name_that_stands_for_two_tools_is_blocked() {
    let lock = lock(&[("my.docs", &["search"]), ("my_docs", &["search"])]);
    let Err(Block::Ambiguous { candidates }) = resolve(&lock, &call("mcp__my_docs__search", None))
    else {
        panic!("ambiguous")
    };
    assert_eq!(candidates.len(), 2);
    // Where the input names the configured server, the name is no longer ambiguous.
    let target = resolve(&lock, &call("mcp__my_docs__search", Some("my_docs"))).unwrap();
    assert_eq!(target.server, "my_docs");
    // A `__` inside a name: server a with tool b__c, server a__b with tool c.
    let lock = self::lock(&[("a", &["b__c"]), ("a__b", &["c"])]);
    assert!(matches!(
        resolve(&lock, &call("mcp__a__b__c", None)),
        Err(Block::Ambiguous { .. })
    ));
}

#[test]
fn an_undecidable_tool_is_blocked() {
    let manifest = Manifest::parse(
        br#"{"schema_version": 2, "complete": true, "servers": [
        {"id": "docs", "tools": [{"name": "big", "x": 9007199254740993}]}]}"#,
    )
    .unwrap();
    let lock = Lockfile::approve(None, &manifest, &[]).unwrap();
    assert!(matches!(
        resolve(&lock, &call("mcp__docs__big", None)),
        Err(Block::Undecidable { .. })
    ));
}

fn state(lock: &Lockfile, lock_digest: Digest, tools: &[&str]) -> State {
    State {
        server: "docs".into(),
        run: "r1".into(),
        pid: 42,
        process_start: Some(7),
        lock_digest,
        session_id: "r1".into(),
        catalog_generation: 2,
        tools: tools
            .iter()
            .map(|t| ((*t).to_owned(), approved(lock, "docs", t)))
            .collect(),
        observed_at: AT.into(),
    }
}

#[test]
fn the_state_must_admit_the_approved_tool_in_the_current_reading() {
    let lock = lock(&[("docs", &["search", "fetch"])]);
    let digest = Digest::of_bytes(b"lock");
    let target = resolve(&lock, &call("mcp__docs__search", None)).unwrap();
    let holds = state(&lock, digest, &["search"]);
    assert_eq!(check(&target, &holds, digest, true), Ok(()));

    let without = state(&lock, digest, &["fetch"]);
    assert!(matches!(
        check(&target, &without, digest, true),
        Err(Block::NotAdmitted { generation: 2, .. })
    ));
    let mut changed = holds.clone();
    changed
        .tools
        .insert("search".into(), Digest::of_bytes(b"other"));
    assert!(matches!(
        check(&target, &changed, digest, true),
        Err(Block::Changed { .. })
    ));
    assert!(matches!(
        check(&target, &holds, digest, false),
        Err(Block::Stale {
            why: Staleness::GuardGone,
            ..
        })
    ));
    let other_lock = Digest::of_bytes(b"another lock");
    assert!(matches!(
        check(&target, &holds, other_lock, true),
        Err(Block::Stale {
            why: Staleness::OtherLock { .. },
            ..
        })
    ));
    let mut other_server = holds.clone();
    other_server.server = "files".into();
    assert!(matches!(
        check(&target, &other_server, digest, true),
        Err(Block::Stale {
            why: Staleness::OtherServer,
            ..
        })
    ));
}

#[test]
fn a_state_reads_back_as_written_and_nothing_else_reads() {
    let lock = lock(&[("docs", &["search", "fetch"])]);
    let written = state(&lock, Digest::of_bytes(b"lock"), &["search", "fetch"]);
    let bytes = written.to_bytes("stdio");
    assert_eq!(State::parse(&bytes).unwrap(), written);
    let mut unknown = String::from_utf8(bytes.clone()).unwrap();
    unknown.insert_str(2, "\"extra\": 1,\n  ");
    assert!(matches!(
        State::parse(unknown.as_bytes()),
        Err(StateError::Member { member, .. }) if member == "/extra"
    ));
    let other_schema = String::from_utf8(bytes.clone())
        .unwrap()
        .replace(STATE_SCHEMA, "mcppin-lock-signature");
    assert!(State::parse(other_schema.as_bytes()).is_err());
    let other_version = String::from_utf8(bytes)
        .unwrap()
        .replace("\"schema_version\": 1", "\"schema_version\": 2");
    assert!(State::parse(other_version.as_bytes()).is_err());
    assert!(matches!(State::parse(b"{"), Err(StateError::Json(_))));
}

#[test]
fn state_file_names_hold_any_id_in_one_file() {
    assert_eq!(state_file_name("docs"), "docs.json");
    assert_eq!(state_file_name("a/b"), "a%2Fb.json");
    assert_eq!(state_file_name(".."), "%2E%2E.json");
    assert_ne!(state_file_name("a b"), state_file_name("a_b"));
}

fn listed(
    tool: &str,
    generation: u64,
    digest: Option<Digest>,
    allowed: bool,
    shown: bool,
) -> Event {
    Event::ToolAdmission(ToolAdmission {
        request_id: RequestId::new(b"1"),
        request_method: "tools/list",
        tool: tool.into(),
        catalog_generation: generation,
        approved_digest: digest.map(|d| d.to_string()),
        observed_digest: digest.map(|d| d.to_string()),
        decision: if allowed {
            Verdict::Allow
        } else {
            Verdict::Deny
        },
        reason: (!allowed).then_some("tool-changed"),
        shown: Some(shown),
        projection: None,
    })
}

#[test]
fn the_tracker_keeps_what_the_current_reading_admitted() {
    let a = Digest::of_bytes(b"a");
    let b = Digest::of_bytes(b"b");
    let guard = Guard {
        server: "docs",
        run: "r1",
        pid: 1,
        process_start: None,
        lock_digest: Digest::of_bytes(b"lock"),
    };
    let mut tracker = Tracker::new();
    assert!(tracker.observe(
        "s1",
        &[
            listed("a", 1, Some(a), true, true),
            listed("b", 1, Some(b), true, true)
        ]
    ));
    let state = tracker.state(&guard, AT);
    assert_eq!(state.catalog_generation, 1);
    assert_eq!(state.tools.len(), 2);
    assert!(
        !tracker.observe("s1", &[listed("a", 1, Some(a), true, true)]),
        "no change"
    );
    // The next reading: b rug-pulled and withheld, a shown.
    assert!(tracker.observe(
        "s1",
        &[
            listed("a", 2, Some(a), true, true),
            listed("b", 2, Some(b), false, false)
        ]
    ));
    let state = tracker.state(&guard, AT);
    assert_eq!(state.catalog_generation, 2);
    assert_eq!(state.tools.keys().collect::<Vec<_>>(), ["a"]);
    // A reading refused as a whole (refuse mode): allowed tools were not shown either.
    assert!(tracker.observe("s1", &[listed("a", 3, Some(a), true, false)]));
    assert!(tracker.state(&guard, AT).tools.is_empty());
    // Another session's reading starts afresh; a tool the lock does not know is never admitted.
    assert!(tracker.observe("s2", &[listed("new", 1, None, false, false)]));
    let state = tracker.state(&guard, AT);
    assert_eq!((state.session_id.as_str(), state.tools.len()), ("s2", 0));
}

#[test]
fn the_reasons_name_no_tool_the_lockfile_lacks() {
    let lock = lock(&[("docs", &["search"])]);
    let hostile = "IGNORE_PREVIOUS_INSTRUCTIONS";
    for blocked in [
        resolve(&lock, &call(&format!("mcp__docs__{hostile}"), None)),
        resolve(&lock, &call(&format!("mcp__{hostile}__x"), None)),
    ] {
        let reason = blocked.unwrap_err().to_string();
        assert!(!reason.contains(hostile), "{reason}");
    }
}

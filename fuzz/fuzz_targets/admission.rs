//! Admission of a `tools/list` answer, through the engine (the only way to the gate) in
//! quarantine: never panics, and what reaches the client in answer to the list (the answer as
//! it came, or rebuilt from its original bytes without the refused tools) reads back strictly
//! and lists approved tools only, each unchanged and once. The lock approves `search` and
//! `t0` to `t69`: more than 64 tools, so the session's sets of served tools by rank span two
//! words.
#![no_main]

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcppin_core::engine::{ApprovedServer, Config, Mode, Session};
use mcppin_core::lockfile::{LockedItem, LockedServer};
use mcppin_core::{Strictness, Value, canonicalize, parse, parse_with};

const APPROVED: &[u8] = br#"{"name":"search","description":"Search"}"#;
const LIST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

/// The approval, and the canonical form of each approved tool by name.
static APPROVAL: LazyLock<(ApprovedServer, HashMap<String, Vec<u8>>)> = LazyLock::new(|| {
    let mut server = LockedServer::default();
    let mut canonical = HashMap::new();
    let more = (0..70).map(|i| format!(r#"{{"name":"t{i}"}}"#).into_bytes());
    for item in std::iter::once(APPROVED.to_vec()).chain(more) {
        let approved = parse(&item).expect("fixed item");
        let name = approved
            .get("name")
            .and_then(Value::as_str)
            .expect("fixed name")
            .to_owned();
        canonical.insert(name.clone(), canonicalize(&approved).expect("fixed item"));
        server.tools.insert(name, LockedItem::approve(approved));
    }
    (ApprovedServer::unsigned(server), canonical)
});

fuzz_target!(|data: &[u8]| {
    let (approval, canonical) = &*APPROVAL;
    let mut config = Config::default();
    config.mode = Mode::Quarantine;
    let mut session = Session::new(approval.clone(), config);
    session.client_line(LIST, Duration::ZERO);
    let action = session.server_line(data, Duration::ZERO);
    let Some(shown) = action.to_client.bytes(data) else {
        return;
    };
    let value = parse_with(shown, Strictness::Relaxed).expect("what reaches the client is JSON");
    let messages = match value.as_array() {
        Some(batch) => batch.to_vec(),
        None => vec![value],
    };
    // Only the answer to the list carries a result: an answer to anything else is not
    // outstanding, and the engine stops the session on it.
    for message in messages {
        let Some(tools) = message
            .get("result")
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
        else {
            continue;
        };
        let bytes = shown.get(message.span().range()).expect("a span of the shown bytes");
        parse(bytes).expect("a shown answer reads back strictly");
        let mut shown_names = HashSet::new();
        for tool in tools {
            let name = tool
                .get("name")
                .and_then(Value::as_str)
                .expect("a shown tool has a name");
            assert_eq!(
                Some(&canonicalize(tool).expect("a shown tool has a canonical form")),
                canonical.get(name),
                "only approved tools, unchanged, are shown"
            );
            assert!(shown_names.insert(name), "no tool is shown twice in an answer");
        }
    }
});

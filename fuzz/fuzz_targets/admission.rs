//! Admission of a `tools/list` answer, through the engine (the only way to the gate) in
//! quarantine: never panics, and what reaches the client in answer to the list (the answer as
//! it came, or rebuilt from its original bytes without the refused tools) reads back strictly
//! and lists the approved tool alone, unchanged.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcppin_core::engine::{ApprovedServer, Config, Mode, Session};
use mcppin_core::lockfile::{LockedItem, LockedServer};
use mcppin_core::{Strictness, Value, canonicalize, parse, parse_with};

const APPROVED: &[u8] = br#"{"name":"search","description":"Search"}"#;
const LIST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

fuzz_target!(|data: &[u8]| {
    let approved = parse(APPROVED).expect("fixed item");
    let mut server = LockedServer::default();
    server
        .tools
        .insert("search".into(), LockedItem::approve(approved.clone()));
    let mut config = Config::default();
    config.mode = Mode::Quarantine;
    let mut session = Session::new(ApprovedServer::unsigned(server), config);
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
    let canonical = canonicalize(&approved).expect("fixed item");
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
        for tool in tools {
            assert_eq!(
                canonicalize(tool).expect("a shown tool has a canonical form"),
                canonical,
                "only the approved tool, unchanged, is shown"
            );
        }
    }
});

//! Admission of a `tools/list` answer, through the engine (the only way to the gate) in
//! quarantine: never panics, and what reaches the client in answer to the list (the answer as
//! it came, or rebuilt from its original bytes without the refused tools) reads back strictly
//! and lists approved tools only, each unchanged (its digest the approved one: a tool equal
//! to its approved form is admitted without hashing it, so this is checked by hashing) and
//! once. The lock approves `search`, `n` (with numbers, to spell apart) and `t0` to `t69`:
//! more than 64 tools, so the session's sets of served tools by rank span two words.
#![no_main]

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcppin_core::engine::{ApprovedServer, Config, Mode, Session};
use mcppin_core::lockfile::{LockedItem, LockedServer};
use mcppin_core::{Digest, Strictness, Value, canonicalize, digest, parse, parse_with};

const APPROVED: &[u8] = br#"{"name":"search","description":"Search"}"#;
const NUMBERS: &[u8] = br#"{"name":"n","limits":[1,0.5,-0,1e-7]}"#;
const LIST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

/// The canonical form and digest of each approved tool, by name.
type Pinned = HashMap<String, (Vec<u8>, Digest)>;

/// The approval, and what it pins.
static APPROVAL: LazyLock<(ApprovedServer, Pinned)> = LazyLock::new(|| {
    let mut server = LockedServer::default();
    let mut canonical = HashMap::new();
    let more = (0..70).map(|i| format!(r#"{{"name":"t{i}"}}"#).into_bytes());
    for item in [APPROVED.to_vec(), NUMBERS.to_vec()]
        .into_iter()
        .chain(more)
    {
        let approved = parse(&item).expect("fixed item");
        let name = approved
            .get("name")
            .and_then(Value::as_str)
            .expect("fixed name")
            .to_owned();
        let pinned = (
            canonicalize(&approved).expect("fixed item"),
            digest(&approved).expect("fixed item"),
        );
        canonical.insert(name.clone(), pinned);
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
        let bytes = shown
            .get(message.span().range())
            .expect("a span of the shown bytes");
        parse(bytes).expect("a shown answer reads back strictly");
        let mut shown_names = HashSet::new();
        for tool in tools {
            let name = tool
                .get("name")
                .and_then(Value::as_str)
                .expect("a shown tool has a name");
            let shown = (
                canonicalize(tool).expect("a shown tool has a canonical form"),
                digest(tool).expect("a shown tool has a digest"),
            );
            assert_eq!(
                Some(&shown),
                canonical.get(name),
                "only approved tools, unchanged, are shown"
            );
            assert!(
                shown_names.insert(name),
                "no tool is shown twice in an answer"
            );
        }
    }
});

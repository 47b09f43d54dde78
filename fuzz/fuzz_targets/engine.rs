//! The wire engine fed random interleavings of client and server lines: never panics, notes
//! hold no raw control characters, and no surface answer reaches the client unadmitted: every
//! tool of a `tools/list` answer shown is the approved one (its digest is the lock's pin for its
//! name), and a session-pinned answer shown (`prompts/get`, ...) is the first one shown for the
//! same request. Both are checked here, against the lock and the earlier answers, by reading
//! again, strictly, what the engine says to forward.
//!
//! The input is a session transcript, one line per message: `c` then the bytes the client
//! wrote, or `s` then the bytes the server wrote (one space after the letter is skipped); a
//! first line `quarantine` selects that mode; other lines are skipped. The seed corpus in
//! `fuzz/seeds/engine/` holds real sessions in this form (initialize, list pages, calls,
//! prompts, batches, rug pulls); the fuzzer mutates and splices them.
#![no_main]

use std::collections::HashMap;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcppin_core::admission::is_input_request;
use mcppin_core::engine::{Config, Mode, Session};
use mcppin_core::lockfile::{LockedItem, LockedServer, Pin};
use mcppin_core::value::Object;
use mcppin_core::{Strictness, Value, canonicalize, parse, parse_with};

/// The methods whose answers the engine pins for the session.
const SESSION_PINNED: [&str; 5] = [
    "initialize",
    "prompts/get",
    "prompts/list",
    "resources/templates/list",
    "server/discover",
];

const SUMMARIZE: &[u8] = br#"{"name":"summarize","description":"Summarize a text","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}"#;
const SEARCH: &[u8] =
    br#"{"name":"search","description":"Search the documents","inputSchema":{"type":"object"}}"#;

fn lock() -> LockedServer {
    let mut server = LockedServer::default();
    server.reported_name = Some("fixture".into());
    for tool in [SUMMARIZE, SEARCH] {
        let item = parse(tool).expect("fixed tool");
        let name = item
            .get("name")
            .and_then(Value::as_str)
            .expect("named")
            .to_owned();
        server.tools.insert(name, LockedItem::approve(item));
    }
    server
}

/// The key a client matches an answer by, as far as this check needs it: the canonical form
/// of the id, or its bytes in `line`.
fn key(id: &Value, line: &[u8]) -> Vec<u8> {
    canonicalize(id).unwrap_or_else(|_| line.get(id.span().range()).unwrap_or_default().to_vec())
}

/// The messages of a forwarded line: the line itself, or the elements of a batch.
fn messages(value: &Value) -> Vec<&Value> {
    match value.as_array() {
        Some(items) => items.iter().collect(),
        None => vec![value],
    }
}

fuzz_target!(|data: &[u8]| {
    let approved = lock();
    let pins: HashMap<String, Pin> = approved
        .tools
        .iter()
        .map(|(name, item)| (name.clone(), item.pin().clone()))
        .collect();
    let mut lines = data.split(|b| *b == b'\n').peekable();
    let mode = match lines.peek() {
        Some(first) if first.starts_with(b"quarantine") => Mode::Quarantine,
        _ => Mode::Refuse,
    };
    let mut session = Session::new(approved, Config { mode, events: true });
    // The method and params of each request the server was sent, by id, as the client will
    // match the answer.
    let mut asked: HashMap<Vec<u8>, (String, Vec<u8>)> = HashMap::new();
    // The first answer shown for each session-pinned request.
    let mut first: HashMap<(String, Vec<u8>), Vec<u8>> = HashMap::new();
    for (step, line) in lines.enumerate() {
        let now = Duration::from_millis(step as u64);
        let (side, rest) = match line.split_first() {
            Some((side @ (b'c' | b's'), rest)) => (*side, rest),
            _ => continue,
        };
        let bytes = rest.strip_prefix(b" ").unwrap_or(rest);
        if side == b'c' {
            let action = session.client_line(bytes, now);
            check_notes(&action.notes);
            for answer in &action.to_client {
                assert!(
                    parse_with(answer, Strictness::Relaxed).is_ok(),
                    "an answer in the server's place is JSON"
                );
            }
            if let Some(sent) = action.to_server.bytes(bytes) {
                let value =
                    parse_with(sent, Strictness::Relaxed).expect("forwarded lines are JSON");
                for message in messages(&value) {
                    if let (Some(id), Some(method)) = (
                        message.get("id"),
                        message.get("method").and_then(Value::as_str),
                    ) {
                        let params = message
                            .get("params")
                            .map_or_else(Vec::new, |p| key(p, sent));
                        asked.insert(key(id, sent), (method.to_owned(), params));
                    }
                }
            }
        } else {
            let action = session.server_line(bytes, now);
            check_notes(&action.notes);
            let Some(shown) = action.to_client.bytes(bytes) else {
                continue;
            };
            let Ok(value) = parse_with(shown, Strictness::Relaxed) else {
                panic!("a forwarded server line is JSON");
            };
            for message in messages(&value) {
                // Answers only: a server request carries an id of the server's own.
                let Some(id) = message
                    .get("id")
                    .filter(|_| message.get("method").is_none())
                else {
                    continue;
                };
                let Some((method, params)) = asked.remove(&key(id, shown)) else {
                    continue;
                };
                if message.get("result").is_none() {
                    continue;
                }
                let own = shown.get(message.span().range()).unwrap_or_default();
                if method == "tools/list" {
                    check_admitted(own, &pins);
                } else if SESSION_PINNED.contains(&method.as_str()) {
                    check_pinned(own, (method, params), &mut first);
                }
            }
        }
    }
    let _ = session.finish(Duration::ZERO);
});

/// Every tool of a `tools/list` answer the client is shown is the approved one.
fn check_admitted(message: &[u8], pins: &HashMap<String, Pin>) {
    let strict = parse(message).expect("a shown tools/list answer reads strictly");
    let Some(tools) = strict.pointer("/result/tools").and_then(Value::as_array) else {
        return;
    };
    for tool in tools {
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .expect("a shown tool has a name");
        let pin = pins.get(name).expect("a shown tool is in the lock");
        assert_eq!(
            &Pin::of(tool),
            pin,
            "a shown tool is the approved one: {name}"
        );
        assert!(matches!(pin, Pin::Digest(_)));
    }
}

/// A session-pinned answer the client is shown is the first one shown for the same request
/// (its `_meta` aside; an answer asking for input is not compared). Requests are told apart by
/// their canonical params here, more finely than the engine does, so every pair compared here
/// is one the engine compared too.
fn check_pinned(
    message: &[u8],
    request: (String, Vec<u8>),
    first: &mut HashMap<(String, Vec<u8>), Vec<u8>>,
) {
    let strict = parse(message).expect("a shown session-pinned answer reads strictly");
    let Some(result) = strict.get("result") else {
        return;
    };
    if is_input_request(result) {
        return;
    }
    let mut kept = Object::new();
    if let Some(members) = result.as_object() {
        for (name, value) in members.iter().filter(|(name, _)| *name != "_meta") {
            kept.insert(name, value.clone());
        }
    }
    let shown = match result.as_object() {
        Some(_) => canonicalize(&Value::from(kept)),
        None => canonicalize(result),
    }
    .expect("a shown session-pinned answer has a canonical form");
    let pinned = first.entry(request).or_insert_with(|| shown.clone());
    assert_eq!(
        *pinned, shown,
        "a shown session-pinned answer is the first one"
    );
}

fn check_notes(notes: &[String]) {
    for note in notes {
        assert!(
            !note.chars().any(|c| c.is_control()),
            "a note holds a raw control character: {note:?}"
        );
    }
}

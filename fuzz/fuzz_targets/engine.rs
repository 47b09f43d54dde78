//! The wire engine fed random interleavings of client and server lines: never panics, notes
//! hold no raw control characters, and no surface answer reaches the client unadmitted: every
//! tool of a `tools/list` answer shown is the approved one (its digest is the lock's pin for its
//! name), and a session-pinned answer shown as the server wrote it (`prompts/get`, ...) is the
//! first one so shown for the same request. Both are checked here, against the lock and the
//! earlier answers, by reading again, strictly, what the engine says to forward. Under a lock of the widened surface, an
//! answer to a method that lock covers (`prompts/list`, `resources/templates/list`, the
//! `instructions` of `initialize` and `server/discover`, the `description` of `prompts/get`)
//! is shown only when it was compared with the lock: its shape is the one the comparison
//! reads, and every item it shows is an approved one. A twin session reads every server line
//! outlined first ([`Line::read`]) where the session reads an awaited judged answer strictly
//! first, each tool served compared with its approved form while read: the two forward,
//! note, log and stop alike.
//!
//! The input is a session transcript, one line per message: `c` then the bytes the client
//! wrote, or `s` then the bytes the server wrote (one space after the letter is skipped); a
//! first line holding `quarantine` selects that mode, one holding `widened` a lock that
//! approves prompts, resource templates and instructions (none, when it also holds
//! `no-instructions`); other lines are skipped. The seed corpus in
//! `fuzz/seeds/engine/` holds real sessions in this form (initialize, list pages, calls,
//! prompts, batches, rug pulls); the fuzzer mutates and splices them.
#![no_main]

use std::collections::HashMap;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcppin_core::engine::{
    ApprovedServer, Config, Line, Mode, Note, ServerAction, Session, is_input_request,
};
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

const REVIEW: &[u8] =
    br#"{"name":"review","description":"Review a text","arguments":[{"name":"text"}]}"#;
const DRAFT: &[u8] = br#"{"name":"draft"}"#;
const FILE: &[u8] = br#"{"uriTemplate":"file:///{path}","name":"file"}"#;

fn lock(widened: bool, instructions: bool) -> LockedServer {
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
    if widened {
        server.widened = true;
        server.instructions = instructions.then(|| "Use search first.".into());
        for prompt in [REVIEW, DRAFT] {
            let item = parse(prompt).expect("fixed prompt");
            let name = item
                .get("name")
                .and_then(Value::as_str)
                .expect("named")
                .to_owned();
            server.prompts.insert(name, LockedItem::approve(item));
        }
        let item = parse(FILE).expect("fixed template");
        server
            .resource_templates
            .insert("file:///{path}".into(), LockedItem::approve(item));
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
    let mut lines = data.split(|b| *b == b'\n').peekable();
    let first_line = lines.peek().copied().unwrap_or_default();
    let said = |word: &[u8]| first_line.windows(word.len()).any(|w| w == word);
    let mode = if said(b"quarantine") {
        Mode::Quarantine
    } else {
        Mode::Refuse
    };
    let approved = lock(said(b"widened"), !said(b"no-instructions"));
    let pins: HashMap<String, Pin> = approved
        .tools
        .iter()
        .map(|(name, item)| (name.clone(), item.pin().clone()))
        .collect();
    let locked = approved.widened.then(|| approved.clone());
    let mut config = Config::default();
    config.mode = mode;
    config.events = true;
    let approved = ApprovedServer::unsigned(approved);
    let mut session = Session::new(approved.clone(), config);
    let mut twin = Session::new(approved, config);
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
            let _ = twin.client_line(bytes, now);
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
            check_alike(&action, &twin.server(&Line::read(bytes), now), bytes);
            if let Some(stop) = &action.stop {
                let text = stop.to_string();
                assert!(
                    !text.chars().any(|c| c.is_control()),
                    "a stop holds a raw control character: {text:?}"
                );
            }
            let Some(shown) = action.to_client.bytes(bytes) else {
                continue;
            };
            let Ok(value) = parse_with(shown, Strictness::Relaxed) else {
                panic!("a forwarded server line is JSON");
            };
            // What the server wrote for each id, to tell an answer forwarded as served from
            // one the engine rebuilt.
            let served = parse_with(bytes, Strictness::Relaxed).ok();
            let as_served: Vec<(Vec<u8>, &[u8])> = served
                .iter()
                .flat_map(messages)
                .filter_map(|m| {
                    let id = m.get("id")?;
                    Some((key(id, bytes), bytes.get(m.span().range())?))
                })
                .collect();
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
                    if let Some(locked) = &locked {
                        check_locked(own, &method, &params, locked);
                    }
                    // Quarantine rebuilds a list of a widened lock without its departed
                    // items, and shows them again once served as approved: such an answer is
                    // all approved items (checked above), and the session pin holds for the
                    // answers forwarded as served.
                    let rebuilt = !as_served
                        .iter()
                        .any(|(k, served)| *k == key(id, shown) && *served == own);
                    if !rebuilt {
                        check_pinned(own, (method, params), &mut first);
                    }
                }
            }
        }
    }
    let _ = session.finish(Duration::ZERO);
});

/// The session and its twin, which read the line outlined first, did alike.
fn check_alike(action: &ServerAction, twin: &ServerAction, line: &[u8]) {
    assert_eq!(action.to_client.bytes(line), twin.to_client.bytes(line));
    assert_eq!(
        action.stop.as_ref().map(ToString::to_string),
        twin.stop.as_ref().map(ToString::to_string)
    );
    assert_eq!(format!("{:?}", action.notes), format!("{:?}", twin.notes));
    assert_eq!(format!("{:?}", action.events), format!("{:?}", twin.events));
    assert_eq!(
        format!("{:?}", action.capabilities),
        format!("{:?}", twin.capabilities)
    );
}

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

/// An answer to a method a lock of the widened surface covers is shown only as that lock
/// approves it: a list page is an object holding its list as an array of approved items
/// (each the approved one for its key) and a `nextCursor` that is absent, `null` or a
/// string; the `instructions` of a handshake are the approved ones (absent when none are);
/// a prompt got is an approved one, described as approved or not described at all (an
/// absent description shows the model nothing it was not approved to see). An answer asking
/// for input is not compared.
fn check_locked(message: &[u8], method: &str, params: &[u8], locked: &LockedServer) {
    let strict = parse(message).expect("a shown locked answer reads strictly");
    let Some(result) = strict.get("result") else {
        return;
    };
    if is_input_request(result) {
        return;
    }
    let (member, key, approved) = match method {
        "prompts/list" => ("prompts", "name", &locked.prompts),
        "resources/templates/list" => (
            "resourceTemplates",
            "uriTemplate",
            &locked.resource_templates,
        ),
        "initialize" | "server/discover" => {
            assert!(
                result.as_object().is_some(),
                "a shown {method} result is an object"
            );
            let served = result.get("instructions").map(|i| {
                i.as_str()
                    .expect("shown instructions are a string")
                    .to_owned()
            });
            assert_eq!(
                served, locked.instructions,
                "shown instructions are the approved ones"
            );
            return;
        }
        "prompts/get" => {
            let params = parse_with(params, Strictness::Relaxed).ok();
            let name = params
                .as_ref()
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .expect("a shown prompts/get answer is to a request naming a prompt");
            let approved = locked
                .prompts
                .get(name)
                .and_then(LockedItem::approved)
                .unwrap_or_else(|| panic!("a shown prompt is approved: {name}"));
            let served = result.get("description").map(|d| {
                d.as_str()
                    .expect("a shown prompt description is a string")
                    .to_owned()
            });
            let approved = approved
                .get("description")
                .map(|d| d.as_str().expect("approved as a string").to_owned());
            if let Some(served) = served {
                assert_eq!(
                    Some(served),
                    approved,
                    "a shown prompt is described as approved"
                );
            }
            return;
        }
        _ => return,
    };
    let items = result
        .get(member)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("a shown {method} page holds its list as an array"));
    let cursor = result.get("nextCursor");
    assert!(
        cursor.is_none_or(|c| c.is_null() || c.as_str().is_some()),
        "a shown {method} page has a cursor the lock check reads"
    );
    for item in items {
        let name = item
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("a shown {method} item has a string {key}"));
        let pin = approved
            .get(name)
            .unwrap_or_else(|| panic!("a shown {method} item is approved: {name}"))
            .pin();
        assert_eq!(
            &Pin::of(item),
            pin,
            "a shown item is the approved one: {name}"
        );
    }
}

/// A session-pinned answer the client is shown as the server wrote it is the first one so
/// shown for the same request (its `_meta` aside; an answer asking for input is not compared). Requests are told apart by
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

/// Every line of every note is printable: no string from the wire reaches a terminal raw (a
/// refused tool's note is its heading and the indented lines of its changes).
fn check_notes(notes: &[Note]) {
    for note in notes {
        for line in note.to_string().lines() {
            assert!(
                !line.chars().any(|c| c.is_control()),
                "a note holds a raw control character: {line:?}"
            );
        }
    }
}

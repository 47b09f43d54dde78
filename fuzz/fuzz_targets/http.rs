//! The HTTP decisions of the wire layer (`mcppin_core::http`) driven as `mcppin-guard --listen`
//! drives them, in the same order, with arbitrary heads, bodies and SSE cuts: never panics,
//! and nothing unjudged is ever forwarded. Each session has a shadow `Session`, built alike
//! and fed the same messages by this harness alone; every body the server is sent is what the
//! shadow forwards of the client's bytes, and every JSON body and SSE event the client is
//! written is what the shadow forwards of the server's bytes (or the guard's own errors, or an
//! HTTP error passed as served: a non-2xx answer in another media type than JSON). Nothing is
//! written on a stream after its end; a session ended is found no more; the table holds no
//! more sessions than its bound and no id over 1,024 bytes; the guard's notes are one line of
//! text.
//!
//! The input is a transcript, one line each (as in `crates/mcppin-core/tests/http.rs`):
//! `> METHOD TARGET +name: value ... | body` (a client's request), `< STATUS +name: value ... |
//! body` (the server's answer to the last request that reached it), `e N chunk` (bytes of the
//! server's stream number N; `\n` and `\r` stand for line ends), `= N` (stream N ends; `= N broken`: it breaks off), `! KEY`
//! (the session kept under KEY is ended by another exchange). A first line holding
//! `quarantine` selects that mode, `replica` tags session ids `r1.`, a digit 1 to 3 the most
//! sessions. Lines that do not parse are skipped. The seeds in `fuzz/seeds/http/` are
//! transcripts of the library tests.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcppin_core::engine::{ApprovedServer, Config, Mode, Session, Stop};
use mcppin_core::http::{
    Belongs, BodyOut, BodyVerdict, End, EventStream, Exchange, HeadVerdict, Plain, Post, Reject,
    RequestVerdict, Route, SessionIds, SessionTable, SseVerdict, answered, belongs,
    is_decoding_header, relayed, route, splice,
};
use mcppin_core::lockfile::{LockedItem, LockedServer};
use mcppin_core::{Strictness, Value, digest, parse, parse_with, sse};

const MAX: usize = 4096;
const REFUSER: &str = "mcppin-guard";
const TOOL: &[u8] = br#"{"name":"summarize","inputSchema":{"type":"object"}}"#;

/// `replica`: the tag `r1.` on every id a client sees.
struct Ids(bool);

impl SessionIds for Ids {
    fn inward<'a>(&self, id: &'a str) -> Option<&'a str> {
        if self.0 {
            id.strip_prefix("r1.").filter(|rest| !rest.is_empty())
        } else {
            Plain.inward(id)
        }
    }

    fn outward(&self, id: &str) -> String {
        if self.0 {
            format!("r1.{id}")
        } else {
            Plain.outward(id)
        }
    }

    fn tags(&self) -> bool {
        self.0
    }
}

/// One open stream of the server's: the session, its key, whether it ends with the stream,
/// the stream, and the harness's own reader of the same bytes.
struct Open {
    number: usize,
    key: Option<String>,
    passing: bool,
    stream: EventStream,
    shadow: sse::Reader,
    events: Vec<sse::Event>,
}

struct Driver {
    table: SessionTable<usize>,
    max_sessions: usize,
    mode: Mode,
    ids: Ids,
    /// Each session and its shadow.
    sessions: Vec<(Session, Session)>,
    last: Option<(usize, Option<String>, ::http::Method)>,
    answers: Vec<Vec<u8>>,
    owed: mcppin_core::http::Owed,
    streams: Vec<Option<Open>>,
    step: u64,
    /// Per session, the ids (as the client wrote them) of the `tools/list` requests forwarded
    /// and not yet answered: an answer to one that reaches the client lists approved tools only.
    lists: Vec<Vec<Vec<u8>>>,
}

fn session(mode: Mode) -> Session {
    let mut server = LockedServer::default();
    let tool = parse(TOOL).expect("fixed tool");
    server
        .tools
        .insert("summarize".into(), LockedItem::approve(tool));
    let mut config = Config::default();
    config.mode = mode;
    config.refuser = REFUSER;
    Session::new(ApprovedServer::unsigned(server), config)
}

/// Whether `bytes` are the guard's own errors: one JSON-RPC error, or an array of them, each
/// with the guard's code and message.
fn is_own_error(bytes: &[u8]) -> bool {
    let Ok(value) = parse_with(bytes, Strictness::Relaxed) else {
        return false;
    };
    let messages: Vec<&Value> = match value.as_array() {
        Some(items) => items.iter().collect(),
        None => vec![&value],
    };
    !messages.is_empty()
        && messages.iter().all(|m| {
            let error = m.get("error");
            error
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str)
                .is_some_and(|t| t.starts_with(REFUSER))
                && error.and_then(|e| e.get("code")).is_some()
        })
}

/// Checks that every event of `bytes` is the guard's own error, without an id.
fn check_tail(bytes: &[u8]) {
    let mut reader = sse::Reader::new(usize::MAX);
    let mut events = Vec::new();
    reader.feed(bytes, &mut events).expect("unbounded");
    for event in events {
        let sse::Event::Message(message) = event else {
            panic!("a comment in the guard's tail");
        };
        assert!(
            message.id.is_none(),
            "the guard's error carries no event id"
        );
        let data = message.data.expect("the guard's error has data");
        assert!(is_own_error(&data), "not the guard's error: {data:?}");
    }
}

/// A note of the guard's is one line without control characters; an engine's note may go on
/// over lines of its own (a drift's evidence), each without control characters.
fn check_note(text: &str) {
    assert!(
        !text.chars().any(char::is_control),
        "a note holds a control: {text:?}"
    );
}

fn check_engine_note(text: &str) {
    for line in text.lines() {
        check_note(line);
    }
}

/// The `id` bytes of each request of `body` (one message or a batch) whose method is
/// `tools/list`.
fn listing_ids(body: &[u8]) -> Vec<Vec<u8>> {
    let Ok(value) = parse_with(body, Strictness::Relaxed) else {
        return Vec::new();
    };
    let messages: Vec<&Value> = match value.as_array() {
        Some(items) => items.iter().collect(),
        None => vec![&value],
    };
    messages
        .into_iter()
        .filter(|m| m.get("method").and_then(Value::as_str) == Some("tools/list"))
        .filter_map(|m| m.get("id"))
        .map(|id| body[id.span().start..id.span().end].to_vec())
        .collect()
}

/// Checks bytes written to the client (a body, or an event's data): each answer to an
/// outstanding `tools/list` of `lists` lists only the approved tool, unchanged; answered ids
/// leave `lists`.
fn check_listed(bytes: &[u8], lists: &mut Vec<Vec<u8>>) {
    let Ok(value) = parse_with(bytes, Strictness::Relaxed) else {
        return;
    };
    let messages: Vec<&Value> = match value.as_array() {
        Some(items) => items.iter().collect(),
        None => vec![&value],
    };
    let approved = digest(&parse(TOOL).expect("fixed tool")).expect("digest");
    for message in messages {
        let Some(id) = message.get("id") else {
            continue;
        };
        let id = &bytes[id.span().start..id.span().end];
        let Some(at) = lists.iter().position(|listed| listed == id) else {
            continue;
        };
        lists.remove(at);
        let tools = message
            .get("result")
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array);
        for tool in tools.into_iter().flatten() {
            assert_eq!(
                digest(tool).ok(),
                Some(approved),
                "a tool the lock does not approve reached the client"
            );
        }
    }
}

/// [`check_listed`] on the data of each event of `bytes`.
fn check_events_listed(bytes: &[u8], lists: &mut Vec<Vec<u8>>) {
    let mut reader = sse::Reader::new(usize::MAX);
    let mut events = Vec::new();
    if reader.feed(bytes, &mut events).is_err() {
        return;
    }
    for event in events {
        if let sse::Event::Message(message) = event
            && let Some(data) = message.data
        {
            check_listed(&data, lists);
        }
    }
}

/// Checks the head a client is given: the guard's own media type (a success is JSON or an
/// event stream; an HTTP error explained in text keeps its media type's essence, without
/// parameters) and no instruction to read the body otherwise.
fn check_head_toward_client(response: &::http::Response<()>) {
    let headers = response.headers();
    let types: Vec<_> = headers.get_all("content-type").iter().collect();
    let ours = types.is_empty() || types == ["application/json"] || types == ["text/event-stream"];
    let essence = types.len() == 1 && !types[0].as_bytes().contains(&b';');
    assert!(
        ours || (!response.status().is_success() && essence),
        "the client is given the media type {types:?} with {}",
        response.status()
    );
    for name in headers.keys().filter(|n| *n != "content-type") {
        assert!(
            !is_decoding_header(name.as_str()),
            "{name} given to the client"
        );
    }
}

impl Driver {
    fn check_table(&self) {
        assert!(
            self.table.open().len() <= self.max_sessions,
            "the table outgrew its bound"
        );
    }

    fn line(&mut self, line: &[u8]) {
        self.step += 1;
        let Some((&kind, rest)) = line.split_first() else {
            return;
        };
        let rest = rest.strip_prefix(b" ").unwrap_or(rest);
        match kind {
            b'>' => self.request(rest),
            b'<' => self.answer(rest),
            b'e' => self.chunk(rest),
            b'=' => self.stream_ends(rest),
            b'!' => {
                let key = String::from_utf8_lossy(rest);
                if let Some(number) = self.table.end(&key) {
                    self.finish(number);
                }
            }
            _ => {}
        }
        self.check_table();
    }

    fn now(&self) -> Duration {
        Duration::from_millis(self.step)
    }

    /// Ends session `number`, and its shadow, and every stream of it still open.
    fn finish(&mut self, number: usize) {
        let now = self.now();
        let (real, shadow) = &mut self.sessions[number - 1];
        real.finish(now);
        shadow.finish(now);
        for open in self.streams.iter_mut().flatten() {
            if open.number == number {
                check_tail(&open.stream.ended_elsewhere());
                assert!(open.stream.feed(b"data: {}\n\n").is_ok());
                assert!(
                    open.stream.next(real, now).is_none(),
                    "written after the end"
                );
            }
        }
        self.streams
            .iter_mut()
            .for_each(|s| drop(s.take_if(|o| o.number == number)));
    }

    fn end(&mut self, number: usize, key: Option<&str>, end: &End) {
        match end {
            End::Here | End::AtServer(_) => {
                if let Some(key) = key {
                    self.table.end(key);
                    assert!(self.table.find(key).is_none());
                }
                self.finish(number);
            }
            _ => {}
        }
    }

    fn request(&mut self, line: &[u8]) {
        let (head, body) = split_body(line);
        let head = String::from_utf8_lossy(head);
        let mut parts = head.split(" +");
        let Some((method, target)) = parts.next().and_then(|s| s.split_once(' ')) else {
            return;
        };
        let mut builder = ::http::Request::builder().method(method).uri(target);
        for (name, value) in parts.filter_map(|h| h.split_once(": ")) {
            builder = builder.header(name, value);
        }
        let Ok(request) = builder.body(()) else {
            return;
        };
        let opens = match route(&request, "/mcp", MAX) {
            Ok(Route::Post) => true,
            Ok(Route::Get | Route::Delete) => false,
            _ => return,
        };
        let headers = request.headers();
        let post = if opens {
            match Post::read(headers, body) {
                Ok(post) => Some(post),
                Err(_) => return,
            }
        } else {
            None
        };
        let (number, key) = match belongs(&self.table, headers, &self.ids, opens) {
            Err(_) => return,
            Ok(Belongs::Open { key, session }) => (session, Some(key)),
            Ok(_) => {
                self.sessions.push((session(self.mode), session(self.mode)));
                self.lists.push(Vec::new());
                (self.sessions.len(), None)
            }
        };
        let method = request.method().clone();
        let Some(post) = post else {
            self.last = Some((number, key, method));
            self.answers.clear();
            self.owed = Default::default();
            return;
        };
        let now = self.now();
        let (real, shadow) = &mut self.sessions[number - 1];
        let fed = !shadow.is_stopped();
        let judged = post.judge(real, now);
        let expected = fed.then(|| shadow.client_line(body, now));
        for note in &judged.notes {
            check_engine_note(&note.to_string());
        }
        match judged.verdict {
            RequestVerdict::Forward(forwarded) => {
                let expected = expected.expect("a stopped session forwards nothing");
                assert_eq!(
                    forwarded.body.bytes(body),
                    expected.to_server.bytes(body),
                    "the server is sent what the session forwards"
                );
                assert_eq!(forwarded.answers, expected.to_client);
                let sent = forwarded.headers(headers, &self.ids);
                let types: Vec<_> = sent.get_all("content-type").iter().collect();
                assert_eq!(types, ["application/json"]);
                // The guard's own `Content-Type` (checked above), and no other instruction on
                // how to read the body.
                for name in sent.keys().filter(|n| *n != "content-type") {
                    assert!(!is_decoding_header(name.as_str()), "{name} sent");
                }
                let ids: Vec<_> = sent.get_all("mcp-session-id").iter().collect();
                match &key {
                    Some(key) => assert_eq!(ids, [key.as_str()]),
                    None => assert!(ids.is_empty()),
                }
                if let Some(sent) = forwarded.body.bytes(body) {
                    self.lists[number - 1].extend(listing_ids(sent));
                }
                self.last = Some((number, key, method));
                self.answers = forwarded.answers;
                self.owed = forwarded.owed;
            }
            RequestVerdict::Answer(answer) => {
                let expected = expected.expect("a stopped session answers nothing");
                assert!(expected.to_server.bytes(body).is_none());
                assert_eq!(
                    answer.body(),
                    answered(expected.to_client, post.is_batch()).body()
                );
            }
            _ => {}
        }
    }

    fn answer(&mut self, line: &[u8]) {
        let Some((number, key, method)) = self.last.clone() else {
            return;
        };
        let (head, body) = split_body(line);
        let head = String::from_utf8_lossy(head);
        let mut parts = head.split(" +");
        let Some(status) = parts.next().and_then(|s| s.trim().parse::<u16>().ok()) else {
            return;
        };
        let mut builder = ::http::Response::builder().status(status);
        for (name, value) in parts.filter_map(|h| h.split_once(": ")) {
            builder = builder.header(name, value);
        }
        let Ok(response) = builder.body(()) else {
            return;
        };
        let (head, ()) = response.into_parts();
        let owed = std::mem::take(&mut self.owed);
        let exchange = Exchange::new(method, key.as_deref()).owing(owed.clone());
        let mut kept = None;
        let table = &mut self.table;
        let verdict = exchange.head(&head, |id| {
            table.keep(id, number)?;
            kept = Some(id.to_owned());
            Ok(())
        });
        if let Some(id) = &kept {
            assert!(id.len() <= 1024, "a session kept under a long id");
        }
        self.check_table();
        let key = key.or(kept);
        match verdict {
            HeadVerdict::Refuse { end, note, .. } => {
                if let Some(note) = note {
                    check_note(&note.to_string());
                }
                self.end(number, key.as_deref(), &end);
            }
            HeadVerdict::Empty { end } => {
                check_head_toward_client(&relayed(&head, None, &self.ids, ()));
                self.end(number, key.as_deref(), &end);
            }
            HeadVerdict::Stream { media, passing } => {
                check_head_toward_client(&relayed(&head, Some(&media), &self.ids, ()));
                for event in EventStream::prelude(&self.answers) {
                    check_tail(&event);
                }
                self.streams.push(Some(Open {
                    number,
                    key,
                    passing,
                    stream: EventStream::new(MAX, owed.clone(), REFUSER),
                    shadow: sse::Reader::new(MAX),
                    events: Vec::new(),
                }));
            }
            HeadVerdict::Body { media, .. } => {
                let answers = std::mem::take(&mut self.answers);
                let mut verdict = exchange.body(head.status, media.as_ref(), body, &answers);
                let mut expected = None;
                if let BodyVerdict::Judge = verdict {
                    let now = self.now();
                    let (real, shadow) = &mut self.sessions[number - 1];
                    let action = real.server_line(body, now);
                    expected = Some(shadow.server_line(body, now));
                    for note in &action.notes {
                        check_engine_note(&note.to_string());
                    }
                    verdict = exchange.judged(head.status, &action, body, media.as_ref(), &answers);
                }
                // A success without a body answers none of the requests the POST carried.
                let unanswered = body.is_empty() && head.status.is_success() && !owed.is_empty();
                match verdict {
                    BodyVerdict::Pass {
                        body: out,
                        end,
                        media: passed,
                        note,
                    } => {
                        if let Some(note) = note {
                            check_note(&note.to_string());
                        }
                        assert!(!unanswered, "requests left without an answer passed");
                        check_head_toward_client(&relayed(&head, passed.as_ref(), &self.ids, ()));
                        let own;
                        let written = match &out {
                            BodyOut::Bytes(bytes) => bytes.as_slice(),
                            BodyOut::Own(reject) => {
                                own = reject.body(REFUSER);
                                own.as_slice()
                            }
                            _ => body,
                        };
                        // A client reads messages from a success or a JSON body; an HTTP error
                        // explained in text passes with the guard's body (docs/guard.md).
                        let read = head.status.is_success()
                            || passed.as_ref().is_some_and(|m| m.is("application/json"));
                        if read {
                            check_listed(written, &mut self.lists[number - 1]);
                        }
                        // A success the session judged and did not stop on answers every
                        // request its POST carried.
                        if head.status.is_success()
                            && expected.as_ref().is_some_and(|e| e.stop.is_none())
                        {
                            let mut left = owed.clone();
                            left.strike_answers(written);
                            assert!(left.is_empty(), "a request left without its answer");
                        }
                        let json = media.as_ref().is_some_and(|m| m.is("application/json"));
                        match (&expected, out) {
                            (None, BodyOut::Same) => {
                                assert!(body.is_empty(), "a body passed unjudged");
                            }
                            (None, BodyOut::Own(reject)) => {
                                assert!(
                                    !json && !head.status.is_success(),
                                    "the guard's body in place of a body it judges"
                                );
                                assert_eq!(reject, Reject::ErrorBody(head.status));
                                assert!(is_own_error(&reject.body(REFUSER)));
                            }
                            (Some(expected), BodyOut::Same) => {
                                assert!(answers.is_empty());
                                assert_eq!(expected.to_client.bytes(body), Some(body));
                            }
                            (Some(expected), BodyOut::Bytes(bytes)) => {
                                let judged = expected
                                    .to_client
                                    .bytes(body)
                                    .expect("the session forwards something");
                                assert!(
                                    bytes == judged || bytes == splice(&answers, judged),
                                    "the client is written what the session forwards"
                                );
                            }
                            (None, BodyOut::Bytes(_)) => panic!("replaced unjudged"),
                            _ => {}
                        }
                        self.end(number, key.as_deref(), &end);
                    }
                    BodyVerdict::Answer(answer) => {
                        assert!(!unanswered, "requests left without an answer passed");
                        assert!(is_own_error(answer.body()) || answer.body().is_empty());
                    }
                    BodyVerdict::Refuse { end, note, .. } => {
                        if let Some(note) = note {
                            check_note(&note.to_string());
                        }
                        self.end(number, key.as_deref(), &end);
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn stream_of(&self, line: &[u8]) -> Option<(usize, Vec<u8>)> {
        let (n, rest) = match line.iter().position(|b| *b == b' ') {
            Some(at) => (&line[..at], &line[at + 1..]),
            None => (line, &[][..]),
        };
        let n: usize = std::str::from_utf8(n).ok()?.parse().ok()?;
        (n >= 1 && n <= self.streams.len()).then(|| (n, unescape(rest)))
    }

    fn chunk(&mut self, line: &[u8]) {
        let Some((n, chunk)) = self.stream_of(line) else {
            return;
        };
        let Some(mut open) = self.streams[n - 1].take() else {
            return;
        };
        let now = self.now();
        let shadow_read = open.shadow.feed(&chunk, &mut open.events);
        let mut ended = None;
        match open.stream.feed(&chunk) {
            Err(SseVerdict::End { bytes, end, note }) => {
                assert!(shadow_read.is_err(), "ended on an event the reader takes");
                check_tail(&bytes);
                if let Some(note) = note {
                    check_note(&note.to_string());
                }
                ended = Some(end);
            }
            Err(other) => panic!("{other:?}"),
            Ok(()) => {
                assert!(shadow_read.is_ok());
                let mut events = std::mem::take(&mut open.events).into_iter();
                let (real, shadow) = &mut self.sessions[open.number - 1];
                while let Some(judged) = open.stream.next(real, now) {
                    for note in &judged.notes {
                        check_engine_note(&note.to_string());
                    }
                    let event = events.next().expect("one verdict per event read");
                    let verdict = judged.verdict;
                    if let SseVerdict::Write(bytes) | SseVerdict::End { bytes, .. } = &verdict {
                        check_events_listed(bytes, &mut self.lists[open.number - 1]);
                    }
                    if let Some(end) = check_event(event, verdict, shadow, now) {
                        ended = Some(end);
                        break;
                    }
                }
                if ended.is_none() {
                    assert!(events.next().is_none(), "an event read was not judged");
                }
            }
        }
        match ended {
            None => self.streams[n - 1] = Some(open),
            Some(end) => {
                assert!(open.stream.feed(b"data: {}\n\n").is_ok());
                let (real, _) = &mut self.sessions[open.number - 1];
                assert!(
                    open.stream.next(real, now).is_none(),
                    "written after the end"
                );
                self.end(open.number, open.key.as_deref(), &end);
            }
        }
    }

    fn stream_ends(&mut self, line: &[u8]) {
        let Some((n, rest)) = self.stream_of(line) else {
            return;
        };
        let Some(open) = self.streams[n - 1].take() else {
            return;
        };
        let Open {
            mut stream,
            number,
            key,
            passing,
            ..
        } = open;
        // What the server left unanswered is answered here, by the guard's own errors.
        let broken = rest.ends_with(b"broken");
        if let Some(verdict) = stream.server_ended(&self.sessions[number - 1].0, broken) {
            let SseVerdict::End { bytes, end, note } = verdict else {
                panic!("a stream the server ended goes on: {verdict:?}");
            };
            check_tail(&bytes);
            if let Some(note) = note {
                check_note(&note.to_string());
            }
            self.end(number, key.as_deref(), &end);
            return;
        }
        if passing && !self.sessions[number - 1].0.is_stopped() {
            self.end(number, None, &End::Here);
        }
    }
}

/// Checks the verdict on one event against the shadow session; the session's end when the
/// stream ends.
fn check_event(
    event: sse::Event,
    verdict: SseVerdict,
    shadow: &mut Session,
    now: Duration,
) -> Option<End> {
    let message = match event {
        sse::Event::Comment => {
            assert_eq!(verdict, SseVerdict::Write(sse::comment().to_vec()));
            return None;
        }
        sse::Event::Message(message) => message,
    };
    if shadow.is_stopped() {
        let SseVerdict::End { bytes, end, .. } = verdict else {
            panic!("written in a stopped session: {verdict:?}");
        };
        check_tail(&bytes);
        return Some(end);
    }
    let Some(data) = message.data.as_deref().filter(|d| !d.is_empty()) else {
        assert_eq!(verdict, SseVerdict::Write(message.write(None)));
        return None;
    };
    let action = shadow.server_line(data, now);
    let forwarded = action.to_client.bytes(data);
    match (&action.stop, verdict) {
        (None, SseVerdict::Write(bytes)) => {
            let forwarded = forwarded.expect("written what the session forwards");
            assert_eq!(bytes, message.write(Some(forwarded)));
            None
        }
        (None, SseVerdict::End { bytes, end, .. }) => {
            // The session forwards nothing, or the event is of a type no client reads as a
            // message: nothing of it is written either way.
            let typed = message
                .event
                .as_deref()
                .is_some_and(|t| !t.is_empty() && t != b"message");
            assert!(
                forwarded.is_none() || typed,
                "an event the session passed was cut"
            );
            check_tail(&bytes);
            Some(end)
        }
        (Some(Stop::Drift), SseVerdict::End { bytes, end, .. }) => {
            let refusal = forwarded
                .map(|r| sse::Message::default().write(Some(r)))
                .unwrap_or_default();
            assert!(bytes.starts_with(&refusal), "the refusal, then the tail");
            check_tail(&bytes[refusal.len()..]);
            Some(end)
        }
        (Some(_), SseVerdict::End { bytes, end, .. }) => {
            check_tail(&bytes);
            Some(end)
        }
        (stop, verdict) => panic!("{stop:?} but {verdict:?}"),
    }
}

/// The head and the body of a request or answer line.
fn split_body(line: &[u8]) -> (&[u8], &[u8]) {
    match line.windows(3).position(|w| w == b" | ") {
        Some(at) => (&line[..at], &line[at + 3..]),
        None => (line, &[]),
    }
}

/// A chunk with `\n` and `\r` written as line ends.
fn unescape(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut bytes = text.iter().copied().peekable();
    while let Some(b) = bytes.next() {
        if b == b'\\' {
            match bytes.peek() {
                Some(b'n') => {
                    bytes.next();
                    out.push(b'\n');
                    continue;
                }
                Some(b'r') => {
                    bytes.next();
                    out.push(b'\r');
                    continue;
                }
                _ => {}
            }
        }
        out.push(b);
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let mut lines = data.split(|b| *b == b'\n');
    let first = lines.next().unwrap_or_default();
    let said = |word: &[u8]| first.windows(word.len()).any(|w| w == word);
    let max_sessions = first
        .iter()
        .find(|b| (b'1'..=b'3').contains(*b))
        .map_or(2, |b| usize::from(b - b'0'));
    let mut driver = Driver {
        table: SessionTable::new(max_sessions, Duration::from_secs(60)),
        max_sessions,
        mode: if said(b"quarantine") {
            Mode::Quarantine
        } else {
            Mode::Refuse
        },
        ids: Ids(said(b"replica")),
        sessions: Vec::new(),
        last: None,
        answers: Vec::new(),
        owed: Default::default(),
        streams: Vec::new(),
        step: 0,
        lists: Vec::new(),
    };
    for line in lines {
        driver.line(line);
    }
});

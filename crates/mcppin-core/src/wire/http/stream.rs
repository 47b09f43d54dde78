//! The server's SSE stream, judged event by event ([`EventStream`]), and what an exchange owes
//! its client on it ([`Owed`]): an answer to each request it forwarded, the server's or, when
//! the proxy ends the stream first, the proxy's own.

use std::collections::VecDeque;
use std::time::Duration;

use super::{Cause, End, HttpNote, Judged, Reject};
use crate::engine::{IdBytes, Session, Stop, error_answer, id_key};
use crate::escape_non_ascii;
use crate::jsonrpc::REFUSED;
use crate::outline::{Node, Outline, Shape};
use crate::sse;

/// The server's SSE stream in one exchange, judged event by event in the exchange's session:
/// the caller feeds the bytes as they arrive ([`EventStream::feed`]) and writes what
/// [`EventStream::next`] gives, one event at a time, before it asks for the next (so a client
/// that reads slowly holds the server back, and the session is locked per event).
///
/// When the stream ends on the proxy's verdict (a refusal, a violation, an event over the
/// bound, the session ended elsewhere) each request the exchange forwarded and no event
/// answered gets the proxy's error ([`Owed::tail`]): a client waits for an answer to each
/// request it sent.
#[derive(Debug)]
pub struct EventStream {
    reader: sse::Reader,
    /// Events read and not judged yet.
    queue: VecDeque<sse::Event>,
    owed: Owed,
    refuser: &'static str,
    /// Whether the stream ended on a verdict: nothing more is written.
    done: bool,
    /// Whether the last id an event set is not empty: a client can resume the stream after it
    /// (`Last-Event-ID`), and the rest of its answers may come then.
    resumable: bool,
}

/// What becomes of the server's stream after an event (or a chunk) of it.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum SseVerdict {
    /// These bytes are written, and the stream goes on.
    Write(Vec<u8>),
    /// These bytes are written (perhaps none), then the stream ends: nothing more of it is
    /// written.
    End {
        /// The last bytes: a refusal in the event's place and the proxy's answers to what is
        /// still owed.
        bytes: Vec<u8>,
        /// What becomes of the session ([`End::Goes`]: nothing more, it ended elsewhere).
        end: End,
        /// The note for the operator, if any.
        note: Option<HttpNote>,
    },
}

impl EventStream {
    /// A stream holding at most `max_message` bytes of one event, owing `owed` (of the
    /// forwarded request, [`Owed::of`]), whose errors begin with `refuser`.
    pub fn new(max_message: usize, owed: Owed, refuser: &'static str) -> Self {
        Self {
            reader: sse::Reader::new(max_message),
            queue: VecDeque::new(),
            owed,
            refuser,
            done: false,
            resumable: false,
        }
    }

    /// The proxy's own answers (to elements of a batch the server never saw), one event each
    /// without an id, written before anything of the server's.
    pub fn prelude(answers: &[Vec<u8>]) -> impl Iterator<Item = Vec<u8>> + '_ {
        answers
            .iter()
            .map(|answer| sse::Message::default().write(Some(answer)))
    }

    /// Reads a chunk of the server's stream (cut anywhere).
    ///
    /// # Errors
    ///
    /// [`SseVerdict::End`] when an event exceeds the bound: nothing of it is written, the
    /// session ends here and at the server, and what is owed is answered. Chunks after the
    /// end are not read.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), SseVerdict> {
        if self.done {
            return Ok(());
        }
        let mut events = Vec::new();
        let read = self.reader.feed(chunk, &mut events);
        self.queue.extend(events);
        match read {
            Ok(()) => Ok(()),
            Err(too_long) => {
                self.queue.clear();
                Err(self.end(
                    Vec::new(),
                    End::AtServer(Cause::Broken),
                    Some(HttpNote::EventTooLong(too_long)),
                ))
            }
        }
    }

    /// The verdict on the next event read, judged in `session` (the exchange's, at `now`):
    /// `None` when the chunks fed hold no whole event more, or the stream has ended.
    ///
    /// A comment is written as an empty one (its text means nothing to a client); an event
    /// without data (an id alone: the priming event of a resumable stream) is written as it
    /// came; a message is written as the session passes it (its `id`, `event` and `retry`
    /// kept). A refusal of drift is written without the event's id (a client resuming after
    /// it must not skip past it) and ends the stream; so does a violation, with nothing of
    /// the event written; and any event once the session has stopped.
    pub fn next(&mut self, session: &mut Session, now: Duration) -> Option<Judged<SseVerdict>> {
        if self.done {
            return None;
        }
        let message = match self.queue.pop_front()? {
            sse::Event::Comment => {
                return Some(Judged::of(SseVerdict::Write(sse::comment().to_vec())));
            }
            sse::Event::Message(message) => message,
        };
        if session.is_stopped() {
            return Some(Judged::of(self.end(Vec::new(), End::Goes, None)));
        }
        let Some(data) = message.data.as_deref().filter(|d| !d.is_empty()) else {
            // No message to judge, and none a client reads (WHATWG HTML 9.2.6 dispatches no
            // empty data).
            self.resumable = resumes(&message, self.resumable);
            return Some(Judged::of(SseVerdict::Write(message.write(None))));
        };
        let action = session.server_line(data, now);
        let verdict = match &action.stop {
            // An answer in an event no client reads as a message is one no client ever gets:
            // its request would wait for good.
            None if !is_message(message.event.as_deref()) && !answered(data).is_empty() => self
                .end(
                    Vec::new(),
                    End::AtServer(Cause::Broken),
                    Some(HttpNote::AnswerUnread),
                ),
            None => match action.to_client.bytes(data) {
                Some(bytes) => {
                    let event = message.write(Some(bytes));
                    self.owed.strike(&event);
                    self.resumable = resumes(&message, self.resumable);
                    SseVerdict::Write(event)
                }
                None => self.end(Vec::new(), End::Goes, None),
            },
            Some(Stop::Drift) => {
                let refusal = action
                    .to_client
                    .bytes(data)
                    .map(|refusal| sse::Message::default().write(Some(refusal)))
                    .unwrap_or_default();
                self.owed.strike(&refusal);
                self.end(refusal, End::AtServer(Cause::Drift), None)
            }
            Some(fatal) => {
                let note = HttpNote::Fatal(escape_non_ascii(&fatal.to_string()).into_owned());
                self.end(Vec::new(), End::AtServer(Cause::Broken), Some(note))
            }
        };
        Some(Judged {
            verdict,
            notes: action.notes,
            events: action.events,
        })
    }

    /// The server ended its stream, whole (`broken` false) or broken off: `None` when
    /// nothing is owed that `session` still awaits (an answer may have come on another
    /// stream), or when an event had an id (the client may resume the stream, and the
    /// answers come then); otherwise the proxy's answers to what is still owed, and the
    /// session ends here and at the server, which broke the protocol or whose answer could
    /// not be read (the client would wait for good).
    pub fn server_ended(&mut self, session: &Session, broken: bool) -> Option<SseVerdict> {
        self.owed.ids.retain(|(_, key)| session.awaits(key));
        if self.done || self.owed.is_empty() || self.resumable {
            self.done = true;
            return None;
        }
        let (cause, note) = if broken {
            (Cause::Unread, HttpNote::StreamBroke)
        } else {
            (Cause::Broken, HttpNote::StreamUnanswered)
        };
        Some(self.end(Vec::new(), End::AtServer(cause), Some(note)))
    }

    /// The stream ends because its session ended elsewhere (another exchange refused drift,
    /// the client ended it): the proxy's answers to what is still owed (perhaps none).
    pub fn ended_elsewhere(&mut self) -> Vec<u8> {
        match self.end(Vec::new(), End::Goes, None) {
            SseVerdict::End { bytes, .. } => bytes,
            SseVerdict::Write(bytes) => bytes,
        }
    }

    /// Ends the stream after `bytes`, answering what is still owed.
    fn end(&mut self, mut bytes: Vec<u8>, end: End, note: Option<HttpNote>) -> SseVerdict {
        if self.done {
            bytes.clear();
        } else {
            bytes.extend(self.owed.tail(self.refuser));
            self.owed = Owed::default();
        }
        self.done = true;
        self.queue.clear();
        SseVerdict::End { bytes, end, note }
    }
}

/// The requests of a forwarded body (one message or a batch) that are owed an answer on the
/// exchange's stream: each one's id as the client wrote it, and the key the engine matches
/// answers by (so `1` and `1.0` are one id, as they are to the engine).
#[derive(Clone, Debug, Default)]
pub struct Owed {
    ids: Vec<(Vec<u8>, IdBytes)>,
    /// How many requests the session had been fed once these were ([`Owed::forget`]);
    /// `None`: any request under their ids.
    fed: Option<u64>,
}

impl Owed {
    /// The requests of `forwarded` (the bytes that went to the server): every message with a
    /// `method` and a string or number `id`. A body that is not JSON owes nothing (the engine
    /// forwards none).
    pub fn of(forwarded: &[u8]) -> Self {
        let mut owed = Self::default();
        let Ok(outline) = Outline::parse(forwarded, 2) else {
            return owed;
        };
        for message in messages(outline.root()) {
            let [method, id] = message.pick(["method", "id"]);
            let Some(id) = id.first.filter(|id| is_id(*id)) else {
                continue;
            };
            if method.first.is_some() {
                owed.ids.push((id.bytes().to_vec(), id_key(id)));
            }
        }
        owed
    }

    /// The same requests, fed to `session` just now: [`Owed::forget`] then forgets them
    /// only, not a request the client sends later under one of their ids.
    #[must_use]
    pub fn fed_to(mut self, session: &Session) -> Self {
        self.fed = Some(session.requests_fed());
        self
    }

    /// Whether nothing is owed.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The ids owed, as the client wrote them, in the order it wrote them.
    pub fn ids(&self) -> impl Iterator<Item = &[u8]> {
        self.ids.iter().map(|(raw, _)| raw.as_slice())
    }

    /// Takes the ids an event answers, as it was written toward the client: the `id` of each
    /// answer (a message without `method`) in its `data`. An event of another type than
    /// `message` answers nothing: a client reads no message from it.
    pub fn strike(&mut self, event: &[u8]) {
        if self.ids.is_empty() {
            return;
        }
        let lines = || event.split(|b| *b == b'\n');
        let typed_otherwise = lines()
            .filter_map(|line| line.strip_prefix(b"event:"))
            .any(|t| !is_message(Some(t.strip_prefix(b" ").unwrap_or(t))));
        if typed_otherwise {
            return;
        }
        let mut data = Vec::new();
        for value in lines().filter_map(|line| line.strip_prefix(b"data:")) {
            data.extend_from_slice(value.strip_prefix(b" ").unwrap_or(value));
            data.push(b'\n');
        }
        self.strike_answers(&data);
    }

    /// Takes the ids `body` answers, as it was written toward the client (one message or a
    /// batch): the `id` of each answer (a message without `method`).
    pub fn strike_answers(&mut self, body: &[u8]) {
        if self.ids.is_empty() {
            return;
        }
        for key in answered(body) {
            self.ids.retain(|(_, owed)| *owed != key);
        }
    }

    /// The exchange is over, and no more of its answer will come (it was read whole, refused,
    /// or never came): the session forgets every request it owed that is still outstanding,
    /// as if its answer were lost ([`Session::forget`]). Its client got an HTTP error or the
    /// proxy's answer for it, and a server answers a POST's requests in that POST's answer
    /// only; kept, such requests would fill the session's bound on requests outstanding. A
    /// request the client sent later under one of their ids (once its answer came another
    /// way) is kept, when they were [`Owed::fed_to`] the session.
    /// Each call forgotten gets its `tool_completion` event (`no_answer`) when events are on.
    pub fn forget(&self, session: &mut Session, now: Duration) -> Vec<crate::engine::Event> {
        let mut events = Vec::new();
        let fed = self.fed.unwrap_or(u64::MAX);
        for (_, key) in &self.ids {
            events.extend(session.forget_key(key, fed, now));
        }
        events
    }

    /// The proxy's error answering each request still owed, one event each (without an event
    /// id: a client resuming after it must not skip past it), beginning with `refuser`; empty
    /// when nothing is owed.
    pub fn tail(&self, refuser: &str) -> Vec<u8> {
        let message = Reject::AnswerRefused.message(refuser);
        let mut events = Vec::new();
        for (raw, _) in &self.ids {
            let answer = error_answer(raw, REFUSED, &message);
            events.extend(sse::Message::default().write(Some(&answer)));
        }
        events
    }
}

/// Whether an event of this type is read as a message: no type, an empty one or `message`
/// (WHATWG HTML 9.2.6, as the SDKs' readers do).
fn is_message(event: Option<&[u8]>) -> bool {
    event.is_none_or(|t| t.is_empty() || t == b"message")
}

/// Whether a client can resume the stream after this event (`before`: after the ones before
/// it): the last id an event set is not empty. An empty one clears it, and the client then
/// resumes with no `Last-Event-ID` (WHATWG HTML 9.2.6).
fn resumes(message: &sse::Message, before: bool) -> bool {
    message.id.as_ref().map_or(before, |id| !id.is_empty())
}

/// The keys of the ids `body` answers (one message or a batch): the `id` of each answer (a
/// message without `method`).
fn answered(body: &[u8]) -> Vec<IdBytes> {
    let Ok(outline) = Outline::parse(body, 2) else {
        return Vec::new();
    };
    messages(outline.root())
        .into_iter()
        .filter_map(|message| {
            let [method, id] = message.pick(["method", "id"]);
            method
                .first
                .is_none()
                .then_some(id.first)
                .flatten()
                .map(id_key)
        })
        .collect()
}

/// The messages of a body: the elements of a batch, or the one message.
fn messages<'o, 'a>(root: Node<'o, 'a>) -> Vec<Node<'o, 'a>> {
    match root.shape() {
        Shape::Array => root
            .children()
            .filter(|m| m.shape() == Shape::Object)
            .collect(),
        Shape::Object => vec![root],
        _ => Vec::new(),
    }
}

/// Whether a value is an id a request can be answered by.
fn is_id(id: Node<'_, '_>) -> bool {
    matches!(id.shape(), Shape::String | Shape::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owed(ids: &Owed) -> Vec<String> {
        ids.ids()
            .map(|id| String::from_utf8_lossy(id).into_owned())
            .collect()
    }

    #[test]
    fn requests_are_owed_and_notifications_and_answers_are_not() {
        let body = br#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"},
            {"jsonrpc":"2.0","id":"x","method":"b"},{"jsonrpc":"2.0","id":2,"result":{}},
            {"jsonrpc":"2.0","id":null,"method":"c"},{"jsonrpc":"2.0","id":1.5e400,"method":"d"}]"#;
        assert_eq!(owed(&Owed::of(body)), ["1", "\"x\"", "1.5e400"]);
        assert_eq!(
            owed(&Owed::of(br#"{"jsonrpc":"2.0","id":7,"method":"a"}"#)),
            ["7"]
        );
        assert!(Owed::of(b"not json").is_empty());
    }

    #[test]
    fn an_answer_strikes_its_id_as_the_engine_matches_it() {
        let mut ids = Owed::of(br#"[{"id":1,"method":"a"},{"id":"x","method":"b"}]"#);
        // A request from the server with the same id answers nothing.
        ids.strike(b"data: {\"id\":1,\"method\":\"ping\"}\n\n");
        assert_eq!(owed(&ids), ["1", "\"x\""]);
        // An event of another type answers nothing.
        ids.strike(b"event: other\ndata: {\"id\":1,\"result\":{}}\n\n");
        assert_eq!(owed(&ids), ["1", "\"x\""]);
        // `1.0` is the id `1` (the engine's key), split over two data lines.
        ids.strike(b"id: 4\nevent: message\ndata: {\"id\":1.0,\ndata: \"result\":{}}\n\n");
        assert_eq!(owed(&ids), ["\"x\""]);
        ids.strike(b"data: [{\"id\":\"x\",\"error\":{}}]\n\n");
        assert!(ids.is_empty());
    }

    #[test]
    fn the_tail_answers_each_owed_request_with_its_id_as_written() {
        let ids = Owed::of(br#"[{"id":1.0,"method":"a"},{"id":"x","method":"b"}]"#);
        assert_eq!(
            String::from_utf8_lossy(&ids.tail("mcppin-guard")),
            "data: {\"jsonrpc\":\"2.0\",\"id\":1.0,\"error\":{\"code\":-32001,\"message\":\
             \"mcppin-guard refused the server's answer; the session was ended\"}}\n\n\
             data: {\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-32001,\"message\":\
             \"mcppin-guard refused the server's answer; the session was ended\"}}\n\n"
        );
        assert!(Owed::default().tail("mcppin-guard").is_empty());
    }
}

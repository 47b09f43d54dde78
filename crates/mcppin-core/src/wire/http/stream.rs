//! What an exchange owes its client on an SSE stream: an answer to each request it forwarded,
//! the server's or, when the proxy ends the stream first, the proxy's own.

use super::Reject;
use crate::engine::{IdBytes, error_answer, id_key};
use crate::jsonrpc::REFUSED;
use crate::outline::{Node, Outline, Shape};
use crate::sse;

/// The requests of a forwarded body (one message or a batch) that are owed an answer on the
/// exchange's stream: each one's id as the client wrote it, and the key the engine matches
/// answers by (so `1` and `1.0` are one id, as they are to the engine).
#[derive(Clone, Debug, Default)]
pub struct Owed {
    ids: Vec<(Vec<u8>, IdBytes)>,
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
            .any(|t| t.strip_prefix(b" ").unwrap_or(t) != b"message");
        if typed_otherwise {
            return;
        }
        let mut data = Vec::new();
        for value in lines().filter_map(|line| line.strip_prefix(b"data:")) {
            data.extend_from_slice(value.strip_prefix(b" ").unwrap_or(value));
            data.push(b'\n');
        }
        let Ok(outline) = Outline::parse(&data, 2) else {
            return;
        };
        for message in messages(outline.root()) {
            let [method, id] = message.pick(["method", "id"]);
            if method.first.is_none()
                && let Some(id) = id.first
            {
                let key = id_key(id);
                self.ids.retain(|(_, owed)| *owed != key);
            }
        }
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

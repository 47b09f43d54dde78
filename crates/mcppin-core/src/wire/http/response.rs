//! The answers a proxy writes to the client in the server's place, and the guard's answers
//! joined with the server's batch.

use std::borrow::Cow;

use ::http::header::{self, HeaderValue};
use ::http::{Response, StatusCode};

use crate::engine::join_parts;

/// The media type of a JSON body, as a proxy writes it.
pub const JSON: &str = "application/json";
/// The media type of an SSE stream, as a proxy writes it.
pub const EVENT_STREAM: &str = "text/event-stream";

/// The guard's own answers (to elements of a batch) and the server's answer as one batch: the
/// guard's first, then the server's elements (one message, or the elements of its array; an
/// empty array or no body adds none). The bytes of each are kept as they are.
pub fn splice(answers: &[Vec<u8>], forwarded: &[u8]) -> Vec<u8> {
    let trimmed = forwarded.trim_ascii();
    let inner = match trimmed
        .strip_prefix(b"[")
        .and_then(|t| t.strip_suffix(b"]"))
    {
        Some(inner) => inner.trim_ascii(),
        None => trimmed,
    };
    let mut parts: Vec<Cow<'_, [u8]>> = answers
        .iter()
        .map(|answer| Cow::Borrowed(answer.as_slice()))
        .collect();
    if !inner.is_empty() {
        parts.push(Cow::Borrowed(inner));
    }
    join_parts(&parts)
}

/// The answer to a request the guard answered whole, in the server's place: `202 Accepted`
/// without a body when there is nothing to answer (notifications), one message when a single
/// message was asked, and an array when a batch was (JSON-RPC 2.0 section 6: even of one).
pub fn answered(answers: Vec<Vec<u8>>, batch: bool) -> Response<Vec<u8>> {
    let body = match answers.len() {
        0 => {
            let mut response = Response::new(Vec::new());
            *response.status_mut() = StatusCode::ACCEPTED;
            return response;
        }
        1 if !batch => answers.into_iter().next().unwrap_or_default(),
        _ => splice(&answers, b""),
    };
    let mut response = Response::new(body);
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guards_answers_join_the_servers_batch() {
        let answers = vec![b"{\"id\":2}".to_vec()];
        assert_eq!(
            splice(&answers, b"[{\"id\":1}]"),
            b"[{\"id\":2},{\"id\":1}]"
        );
        assert_eq!(splice(&answers, b"{\"id\":1}"), b"[{\"id\":2},{\"id\":1}]");
        assert_eq!(
            splice(&answers, b" [ {\"id\":1} ] "),
            b"[{\"id\":2},{\"id\":1}]"
        );
        assert_eq!(splice(&answers, b"[]"), b"[{\"id\":2}]");
        assert_eq!(splice(&answers, b""), b"[{\"id\":2}]");
    }

    #[test]
    fn an_answer_in_the_servers_place_has_the_shape_of_the_request() {
        let none = answered(Vec::new(), true);
        assert_eq!(none.status(), StatusCode::ACCEPTED);
        assert!(none.body().is_empty() && none.headers().is_empty());
        let one = answered(vec![b"{\"id\":1}".to_vec()], false);
        assert_eq!(
            (one.status(), one.body().as_slice()),
            (StatusCode::OK, &b"{\"id\":1}"[..])
        );
        assert_eq!(one.headers()[header::CONTENT_TYPE], JSON);
        let batch_of_one = answered(vec![b"{\"id\":1}".to_vec()], true);
        assert_eq!(batch_of_one.body(), b"[{\"id\":1}]");
        let two = answered(vec![b"{\"id\":1}".to_vec(), b"{\"id\":2}".to_vec()], false);
        assert_eq!(two.body(), b"[{\"id\":1},{\"id\":2}]");
    }
}

//! Every HTTP error a proxy that judges MCP writes to its client: the status, the JSON-RPC
//! error code and the message of each, in one place. The message begins with the embedder's
//! name for itself (`engine::Config::refuser`), never a name of this crate's choosing.

use std::fmt;

use ::http::header::{self, HeaderValue};
use ::http::{Response, StatusCode};

use super::{JSON, Mirror, Refusal};
use crate::engine::error_answer;
use crate::jsonrpc::{HEADER_MISMATCH, INVALID_REQUEST, PARSE_ERROR, REFUSED};

/// The longest session id a server may assign, in bytes: a proxy keeps each open session
/// under its id, so the bound is what an idle session's id can cost.
pub const MAX_SESSION_ID: usize = 1024;

/// Why a session the server opened could not be kept under the id it assigned.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum NotKept {
    /// The id names a session already open (a server reusing ids would merge two sessions).
    Taken,
    /// The table holds as many sessions as it may (`--max-sessions`).
    Full,
    /// The id is longer than [`MAX_SESSION_ID`].
    TooLong,
}

impl NotKept {
    /// Whether the session is to be ended at the server: it was opened there under an id the
    /// proxy does not keep. Never for [`NotKept::Taken`]: that id is another client's.
    pub fn ends_at_server(self) -> bool {
        matches!(self, Self::Full | Self::TooLong)
    }
}

impl fmt::Display for NotKept {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Taken => "the server assigned the id of a session already open",
            Self::Full => "the guard holds --max-sessions sessions",
            Self::TooLong => {
                "the server assigned a session id longer than 1024 bytes (the most the guard \
                 keeps)"
            }
        })
    }
}

/// An HTTP error a proxy answers with instead of forwarding, or instead of the server's
/// answer. Its body is a JSON-RPC error with id null: the request was not read as one.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Reject {
    /// 431: the request head is over [`super::MAX_HEADERS`].
    HeadTooLarge,
    /// 404: a path other than the endpoint (and not metadata beside it).
    NotTheEndpoint,
    /// 405 with `Allow`: a method other than POST, GET and DELETE at the endpoint.
    MethodNotAllowed,
    /// 415: the client's head tells the server to read the body otherwise than as UTF-8.
    Decoding(Refusal),
    /// 415: a POST whose media type is not `application/json`.
    NotJsonMedia,
    /// 413: the body is over `--max-message` (declared or read).
    BodyTooLong {
        /// `--max-message`, in bytes.
        max: usize,
    },
    /// 400: the client's body broke off.
    BodyUnreadable,
    /// 408: the client's body did not arrive in time.
    BodySlow,
    /// 400 (parse error): the body is not a JSON-RPC message.
    NotJsonRpc,
    /// 400 (header mismatch): `Mcp-Method` or `Mcp-Name` disagree with the body.
    Mirrored(Mirror),
    /// 400: `Mcp-Session-Id` appears more than once.
    SessionRepeated,
    /// 404: the session id lacks this replica's tag.
    NotThisReplica,
    /// 404: no open session has the id (it ended, or never began).
    NoSuchSession,
    /// 503: a request that could open a session while the table is full.
    Full,
    /// 400 (refused): a notification the engine refused (no id to answer).
    NotificationRefused,
    /// 400: a path beside the endpoint with a dot segment.
    DotSegment,
    /// 504: the server did not answer in time.
    UpstreamTimeout,
    /// 502: the server could not be reached.
    Unreachable,
    /// 502 (refused): the server answered with a redirect.
    Redirect,
    /// 502 (refused): the server answered with a status that is no final HTTP answer (1xx,
    /// past 599); the session goes on.
    NotFinal,
    /// 502 (refused): the server's answer was refused and the session ended.
    AnswerRefused,
    /// 503 (or 502 for an id too long): the server opened a session that is not kept.
    NotOpened(NotKept),
    /// 404 (refused): the session ended (another exchange ended it) before its answer was
    /// judged: the answer a request arriving after the end gets, whichever came first.
    Ended,
    /// 502 (refused): an answer beside the endpoint names a charset or a coding.
    BesideDecoding,
    /// 502 (refused): an answer beside the endpoint is a redirect or an event stream.
    BesideNotMetadata,
    /// 502: an answer beside the endpoint was too long or too slow.
    BesideUnread,
    /// The server's own HTTP error status, with the proxy's body in place of the server's:
    /// a body that is not JSON (a text or HTML error page) is no MCP message, yet a client
    /// may put it before the model (the TypeScript SDK quotes it in the error it throws), and
    /// nothing judges it. Its headers pass as for any answer ([`super::BodyOut::Own`]).
    ErrorBody(StatusCode),
}

impl Reject {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::HeadTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Self::NotTheEndpoint | Self::NotThisReplica | Self::NoSuchSession | Self::Ended => {
                StatusCode::NOT_FOUND
            }
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Decoding(_) | Self::NotJsonMedia => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::BodyTooLong { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::BodySlow => StatusCode::REQUEST_TIMEOUT,
            Self::BodyUnreadable
            | Self::NotJsonRpc
            | Self::Mirrored(_)
            | Self::SessionRepeated
            | Self::NotificationRefused
            | Self::DotSegment => StatusCode::BAD_REQUEST,
            Self::Full | Self::NotOpened(NotKept::Taken | NotKept::Full) => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            Self::UpstreamTimeout => StatusCode::GATEWAY_TIMEOUT,
            Self::Unreachable
            | Self::Redirect
            | Self::NotFinal
            | Self::AnswerRefused
            | Self::NotOpened(NotKept::TooLong)
            | Self::BesideDecoding
            | Self::BesideNotMetadata
            | Self::BesideUnread => StatusCode::BAD_GATEWAY,
            Self::ErrorBody(status) => *status,
        }
    }

    /// The JSON-RPC error code (`crate::jsonrpc`).
    pub fn code(&self) -> i64 {
        match self {
            Self::NotJsonRpc => PARSE_ERROR,
            Self::Mirrored(_) => HEADER_MISMATCH,
            Self::NotificationRefused
            | Self::Redirect
            | Self::NotFinal
            | Self::AnswerRefused
            | Self::Ended
            | Self::BesideDecoding
            | Self::BesideNotMetadata
            | Self::ErrorBody(_) => REFUSED,
            _ => INVALID_REQUEST,
        }
    }

    /// The message, beginning with `refuser` (`mcppin-guard refused the server's answer
    /// (a redirect)`, `mcppin-guard: the body could not be read`); without a refuser, the
    /// sentence alone (`refused the server's answer (a redirect)`, `the body could not be
    /// read`).
    pub fn message(&self, refuser: &str) -> String {
        let (verb, text): (bool, String) = match self {
            Self::HeadTooLarge => (
                false,
                "the request head exceeds 64 KiB; nothing was forwarded".into(),
            ),
            Self::NotTheEndpoint => (
                true,
                "serves MCP only at the endpoint of its upstream".into(),
            ),
            Self::MethodNotAllowed => (false, "the MCP endpoint takes POST, GET and DELETE".into()),
            Self::Decoding(refusal) => (false, format!("{refusal}; nothing was forwarded")),
            Self::NotJsonMedia => (
                false,
                "a POST to the MCP endpoint carries application/json".into(),
            ),
            Self::BodyTooLong { max } => (
                false,
                format!("the body exceeds --max-message ({max} bytes); nothing was forwarded"),
            ),
            Self::BodyUnreadable => (false, "the body could not be read".into()),
            Self::BodySlow => (false, "the body did not arrive in time".into()),
            Self::NotJsonRpc => (
                false,
                "the body is not a JSON-RPC message (not JSON, not an object, or an empty \
                 batch); nothing was forwarded"
                    .into(),
            ),
            Self::Mirrored(why) => (false, format!("{why}; nothing was forwarded")),
            Self::SessionRepeated => (
                false,
                "the Mcp-Session-Id header is repeated; nothing was forwarded".into(),
            ),
            Self::NotThisReplica => (
                false,
                "this Mcp-Session-Id was not handed out by this replica (--replica); nothing \
                 was forwarded"
                    .into(),
            ),
            Self::NoSuchSession => (
                false,
                "no open session has this Mcp-Session-Id (it ended, or never began)".into(),
            ),
            Self::Full => (
                true,
                "could not open the session (--max-sessions); nothing was forwarded".into(),
            ),
            Self::NotificationRefused => (
                true,
                "refused the notification; nothing was forwarded".into(),
            ),
            Self::DotSegment => (
                false,
                "a path with a dot segment (`.`, `..`, percent-encoded or not) is refused; \
                 nothing was forwarded"
                    .into(),
            ),
            Self::UpstreamTimeout => (false, "the server did not answer in time".into()),
            Self::Unreachable => (false, "the server could not be reached".into()),
            Self::Redirect => (true, "refused the server's answer (a redirect)".into()),
            Self::NotFinal => (
                true,
                "refused the server's answer (a status that is no final HTTP answer)".into(),
            ),
            Self::AnswerRefused => (
                true,
                "refused the server's answer; the session was ended".into(),
            ),
            Self::NotOpened(_) => (true, "could not open the session".into()),
            Self::Ended => (false, "the session has ended".into()),
            Self::BesideDecoding => (
                true,
                "refused the server's answer beside the endpoint (a charset other than utf-8, \
                 or a coding)"
                    .into(),
            ),
            Self::BesideNotMetadata => (
                true,
                "refused the server's answer beside the endpoint (a redirect or an event \
                 stream)"
                    .into(),
            ),
            Self::BesideUnread => (false, "the server's answer was too long or too slow".into()),
            Self::ErrorBody(status) => (
                true,
                format!(
                    "refused the body of the server's HTTP error {} (not JSON, so no MCP \
                     message); its status is the server's",
                    status.as_u16()
                ),
            ),
        };
        match (refuser.is_empty(), verb) {
            (true, _) => text,
            (false, true) => format!("{refuser} {text}"),
            (false, false) => format!("{refuser}: {text}"),
        }
    }

    /// The body of [`Reject::response`]: a JSON-RPC error with id null, [`Reject::code`] and
    /// [`Reject::message`].
    pub fn body(&self, refuser: &str) -> Vec<u8> {
        error_answer(b"null", self.code(), &self.message(refuser))
    }

    /// The answer: [`Reject::status`], a JSON-RPC error with id null, [`Reject::code`] and
    /// [`Reject::message`], as `application/json`; a 405 names the methods in `Allow`.
    pub fn response(&self, refuser: &str) -> Response<Vec<u8>> {
        let mut response = Response::new(self.body(refuser));
        *response.status_mut() = self.status();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
        if *self == Self::MethodNotAllowed {
            headers.insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
        }
        response
    }
}

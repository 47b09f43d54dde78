//! What a proxy tells its operator about an exchange (on stderr, headed by the session), typed:
//! each note renders through `Display`, escaped where it carries text from the wire; and what
//! the verdicts of the other files share (`Judged`, `End`, `Cause`, `Unread`).

use std::fmt;

use super::{NotKept, Refusal};
use crate::engine::{Event, Note};
use crate::sse;

/// A verdict with the engine's notes (for stderr) and events (for the log) on the way to it.
#[derive(Debug)]
pub struct Judged<V> {
    /// The verdict.
    pub verdict: V,
    /// The engine's notes.
    pub notes: Vec<Note>,
    /// The engine's events.
    pub events: Vec<Event>,
}

impl<V> Judged<V> {
    pub(super) fn of(verdict: V) -> Self {
        Self {
            verdict,
            notes: Vec::new(),
            events: Vec::new(),
        }
    }
}

/// A note about one exchange of a session.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum HttpNote {
    /// The server answered with a redirect.
    Redirect,
    /// The server's answer named another session.
    AnotherSession,
    /// The server opened a session that is not kept.
    NotKept(NotKept),
    /// The server's answer tells the client to read its body otherwise than as UTF-8.
    Decoding(Refusal),
    /// The server's answer head is over [`super::MAX_HEADERS`].
    AnswerHeadTooLarge,
    /// The server answered a request with success, but with neither JSON nor an SSE stream
    /// (without a body, too).
    NeitherJsonNorSse,
    /// The server's answer left a request of its POST without an answer: a JSON body without
    /// it, a status that carries no answer, or a stream that ended before it.
    Unanswered,
    /// The server answered a request in an event no client reads as a message (an `event`
    /// type other than `message`).
    AnswerUnread,
    /// The server ended a stream it cannot resume (no event had an id) before answering
    /// every request of its POST: the proxy answered them.
    StreamUnanswered,
    /// The server answered with a status that is no final HTTP answer (1xx, past 599).
    NotFinal(u16),
    /// The server answered with an HTTP error whose body is not JSON: the client got the
    /// status with the proxy's own body ([`super::Reject::ErrorBody`]).
    ErrorBody {
        /// The status.
        status: u16,
        /// The start of the body, escaped and quoted (`crate::Excerpt`).
        excerpt: String,
    },
    /// The server broke the protocol or the strict reading (the engine's violation, escaped).
    Fatal(String),
    /// The server's answer could not be read whole.
    Unread(Unread),
    /// The server did not answer within the timeout.
    Timeout,
    /// The server could not be reached (why, escaped).
    Unreachable(String),
    /// An event of the server's stream is longer than the bound (`--max-message`).
    EventTooLong(sse::TooLong),
    /// The server's stream broke off: the stream ends; so does the session when a request
    /// of its POST was left unanswered and the stream cannot be resumed.
    StreamBroke,
    /// The session was ended, for this cause: later requests with its id get 404.
    Ended(Cause),
    /// The session was ended for want of use (`--session-idle`): later requests with its id
    /// get 404.
    Idle,
    /// A new session was refused: the table is full (`--max-sessions`).
    Full,
    /// The DELETE that ends the session at the server did not reach it.
    DeleteFailed,
}

/// Why a body could not be read whole, as the caller's bounded read says.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Unread {
    /// It is longer than the bound (`--max-message`).
    TooLong,
    /// It broke off.
    Broken,
    /// It did not arrive within the timeout.
    Slow,
}

impl fmt::Display for HttpNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Redirect => f.write_str(
                "the server answered with a redirect; refused, nothing of it was forwarded",
            ),
            Self::AnotherSession => f.write_str(
                "the server's answer names another session (Mcp-Session-Id repeated, or not \
                 this session's); refused, nothing of it was forwarded",
            ),
            Self::NotKept(not_kept) => write!(f, "refused a new session: {not_kept}"),
            Self::Decoding(refusal) => write!(f, "{refusal}; the server's answer was refused"),
            Self::AnswerHeadTooLarge => {
                f.write_str("the server could not be reached: the answer's head exceeds 64 KiB")
            }
            Self::NeitherJsonNorSse => {
                f.write_str("the server answered with neither JSON nor an SSE stream")
            }
            Self::AnswerUnread => f.write_str(
                "the server answered a request in an event of another type than message, which \
                 no client reads; refused, nothing of it was forwarded",
            ),
            Self::StreamUnanswered => f.write_str(
                "the server's stream ended before it answered every request of its POST (and \
                 cannot be resumed: no event had an id); the guard answered them",
            ),
            Self::NotFinal(status) => write!(
                f,
                "the server answered with status {status}, which is no final HTTP answer; \
                 refused, nothing of it was forwarded"
            ),
            Self::ErrorBody { status, excerpt } => write!(
                f,
                "the server answered with HTTP error {status} and a body that is not JSON \
                 ({excerpt}); the client got the status with the guard's own body"
            ),
            Self::Unanswered => f.write_str(
                "the server's answer leaves a request of the POST without its answer; refused, \
                 nothing of it was forwarded",
            ),
            Self::Fatal(violation) => f.write_str(violation),
            Self::Unread(Unread::TooLong) => f.write_str(
                "a message from the server exceeds --max-message; nothing of it was forwarded",
            ),
            Self::Unread(Unread::Broken) => f.write_str("the server's answer broke off"),
            Self::Unread(Unread::Slow) => {
                f.write_str("the server's answer did not arrive within --upstream-timeout")
            }
            Self::Timeout => f.write_str("the server did not answer within --upstream-timeout"),
            Self::Unreachable(why) => write!(f, "the server could not be reached: {why}"),
            Self::EventTooLong(too_long) => {
                write!(f, "{too_long} (--max-message); nothing of it was forwarded")
            }
            Self::StreamBroke => f.write_str("the server's stream broke off"),
            Self::Ended(cause) => write!(
                f,
                "{cause}: the session was ended; later requests with its id get 404"
            ),
            Self::Idle => f.write_str(
                "idle for longer than --session-idle: the session was ended; later requests \
                 with its id get 404",
            ),
            Self::Full => {
                f.write_str("refused a new session: the guard holds --max-sessions sessions")
            }
            Self::DeleteFailed => {
                f.write_str("the DELETE that ends the session at the server failed")
            }
        }
    }
}

/// Why a proxy ends a session at the server, as its note says.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Cause {
    /// The server broke the protocol (or the HTTP rules a proxy judges by).
    Broken,
    /// Drift was refused.
    Drift,
    /// The server's answer could not be read.
    Unread,
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Broken => "the server broke the protocol",
            Self::Drift => "drift was refused",
            Self::Unread => "the server's answer could not be read",
        })
    }
}

/// What becomes of the session after a verdict on the server's answer.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum End {
    /// It goes on.
    Goes,
    /// It ends here, and the server is not told (it ended the session itself, or the client
    /// did, or the session was never kept under an id).
    Here,
    /// It ends here and, when kept under an id, at the server too: a DELETE carrying the
    /// client's credentials ([`super::end_request`]).
    AtServer(Cause),
    /// The server opened a session under this id that is not kept: ended at the server alone
    /// (never for an id another session is kept under: see [`NotKept::ends_at_server`]).
    AtServerOnly(String),
}

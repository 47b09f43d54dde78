//! The verdicts on a client's request: from its head alone, refused (and with what) or which
//! way it goes; then the session it belongs to; then its body, judged by the engine: refused,
//! answered here, or forwarded with the answers it is owed.

use std::time::Duration;

use ::http::header::{self, HeaderValue};
use ::http::{HeaderMap, Method, Request, Response};

use super::{
    JSON, Judged, MAX_HEADERS, Owed, Reject, SESSION_ID, SessionIds, SessionTable, answered,
    check_headers, check_mirrored, header_text, request_head_size, toward_server,
};
use crate::engine::{Forward, Line, Session};

/// Where a request the head admits goes.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Route {
    /// A POST to the endpoint: its body is read (at most `max_message` bytes) and judged.
    Post,
    /// A GET to the endpoint: the stream of server messages.
    Get,
    /// A DELETE to the endpoint: the end of a session.
    Delete,
    /// A GET of metadata beside the endpoint (`/.well-known/...`, OAuth discovery, RFC 9728
    /// and RFC 8414): it carries no MCP message, and passes unjudged (`beside_uri`).
    Beside,
}

/// Routes a request to the MCP endpoint at `endpoint_path` by its head, checked in this
/// order: the head's size ([`Reject::HeadTooLarge`]), the path ([`Reject::NotTheEndpoint`]
/// unless metadata beside it), the method ([`Reject::MethodNotAllowed`]), and for a POST the
/// decoding instructions ([`Reject::Decoding`]), the media type ([`Reject::NotJsonMedia`])
/// and a declared `Content-Length` over `max_message` ([`Reject::BodyTooLong`], before a
/// byte is read).
///
/// # Errors
///
/// The first [`Reject`] that applies.
pub fn route<B>(
    request: &Request<B>,
    endpoint_path: &str,
    max_message: usize,
) -> Result<Route, Reject> {
    if request_head_size(request.method(), request.uri(), request.headers()) > MAX_HEADERS {
        return Err(Reject::HeadTooLarge);
    }
    let path = request.uri().path();
    if path != endpoint_path {
        if path.starts_with("/.well-known/") && request.method() == Method::GET {
            return Ok(Route::Beside);
        }
        return Err(Reject::NotTheEndpoint);
    }
    match *request.method() {
        Method::POST => {}
        Method::GET => return Ok(Route::Get),
        Method::DELETE => return Ok(Route::Delete),
        _ => return Err(Reject::MethodNotAllowed),
    }
    // The body is judged as UTF-8 JSON: a head telling the server to read it otherwise (a
    // charset, a coding) is refused before anything is read or forwarded.
    let media = check_headers(request.headers()).map_err(Reject::Decoding)?;
    if !media.is_some_and(|m| m.is(JSON)) {
        return Err(Reject::NotJsonMedia);
    }
    let declared =
        header_text(request.headers(), "content-length").and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max_message as u64) {
        return Err(Reject::BodyTooLong { max: max_message });
    }
    Ok(Route::Post)
}

/// The session a request belongs to.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Belongs<T> {
    /// The open session its `Mcp-Session-Id` names, with the key it is kept under (the
    /// server's id, without a tag of [`SessionIds`]).
    Open {
        /// The server's id.
        key: String,
        /// The caller's session, as the table holds it.
        session: T,
    },
    /// No `Mcp-Session-Id`: a session of its own, kept if the server assigns one.
    Fresh,
}

/// Finds the session of a request by its `Mcp-Session-Id`, in `table`, through `ids`.
/// `opens` is whether the request could open a session (a POST): refused while the table is
/// full, before the server opens one it could not keep.
///
/// # Errors
///
/// In this order: [`Reject::SessionRepeated`] for the header named twice (whichever one a
/// server or balancer takes may not be the one the request is judged by),
/// [`Reject::NotThisReplica`] for an id `ids` does not take in, [`Reject::NoSuchSession`] for
/// an id that names no open session (never opened, ended by the client, ended after drift),
/// [`Reject::Full`] for a request that `opens` without an id while the table is full.
pub fn belongs<T: Clone>(
    table: &SessionTable<T>,
    headers: &HeaderMap,
    ids: &impl SessionIds,
    opens: bool,
) -> Result<Belongs<T>, Reject> {
    let mut named = headers.get_all(SESSION_ID).iter();
    if named.next().is_none() {
        if opens && table.is_full() {
            return Err(Reject::Full);
        }
        return Ok(Belongs::Fresh);
    }
    if named.next().is_some() {
        return Err(Reject::SessionRepeated);
    }
    let id = header_text(headers, SESSION_ID);
    if id.is_some_and(|id| ids.inward(id).is_none()) {
        return Err(Reject::NotThisReplica);
    }
    let key = id.and_then(|id| ids.inward(id));
    match key.and_then(|key| table.find(key).map(|session| (key, session))) {
        Some((key, session)) => Ok(Belongs::Open {
            key: key.to_owned(),
            session: session.clone(),
        }),
        None => Err(Reject::NoSuchSession),
    }
}

/// A POST's body, read as one JSON-RPC message or batch and checked against the headers that
/// mirror it; not yet judged.
#[derive(Debug)]
pub struct Post<'b> {
    line: Line<'b>,
    /// Whether the body is a batch: answered with an array, even of one answer (JSON-RPC 2.0
    /// section 6).
    batch: bool,
}

impl<'b> Post<'b> {
    /// Reads the body of a POST whose head [`route`] admitted.
    ///
    /// # Errors
    ///
    /// [`Reject::NotJsonRpc`] for a body no session could route (not JSON, not an object, an
    /// empty batch, a carriage return inside it), then [`Reject::Mirrored`] for an
    /// `Mcp-Method` or `Mcp-Name` header the body disagrees with.
    pub fn read(headers: &HeaderMap, body: &'b [u8]) -> Result<Self, Reject> {
        let line = Line::read(body);
        if !line.is_routable() {
            return Err(Reject::NotJsonRpc);
        }
        check_mirrored(headers, &line).map_err(Reject::Mirrored)?;
        Ok(Self {
            batch: body.trim_ascii_start().starts_with(b"["),
            line,
        })
    }

    /// Whether the body is a batch.
    pub fn is_batch(&self) -> bool {
        self.batch
    }

    /// Judges the body in `session` (the caller holds its lock) at `now`: refused, answered
    /// here, or forwarded.
    pub fn judge(&self, session: &mut Session, now: Duration) -> Judged<RequestVerdict> {
        if session.is_stopped() {
            // Ended by another exchange since it was found.
            return Judged::of(RequestVerdict::Refuse(Reject::NoSuchSession));
        }
        let action = session.client(&self.line, now);
        let verdict = match action.to_server.bytes(self.line.bytes()) {
            // A notification the engine refused (there is no id to answer): not accepted.
            None if action.to_client.is_empty() => {
                RequestVerdict::Refuse(Reject::NotificationRefused)
            }
            None => RequestVerdict::Answer(answered(action.to_client, self.batch)),
            Some(forwarded) => RequestVerdict::Forward(Forwarded {
                owed: Owed::of(forwarded).fed_to(session),
                body: action.to_server,
                answers: action.to_client,
                batch: self.batch,
            }),
        };
        Judged {
            verdict,
            notes: action.notes,
            events: action.events,
        }
    }
}

/// What becomes of a POST's body.
#[derive(Debug)]
#[non_exhaustive]
pub enum RequestVerdict {
    /// Refused, and nothing is forwarded.
    Refuse(Reject),
    /// Answered here, in the server's place, and nothing is forwarded ([`answered`]).
    Answer(Response<Vec<u8>>),
    /// Forwarded to the server.
    Forward(Forwarded),
}

/// A POST's body on its way to the server.
#[derive(Debug)]
pub struct Forwarded {
    /// What goes to the server: the body as it came (never copied), or the engine's
    /// replacement (a batch without its refused elements).
    pub body: Forward,
    /// The requests forwarded, each owed an answer.
    pub owed: Owed,
    /// The proxy's own answers to elements of a batch, which go to the client with the
    /// server's answer ([`super::splice`]).
    pub answers: Vec<Vec<u8>>,
    /// Whether the body was a batch.
    pub batch: bool,
}

impl Forwarded {
    /// The head of the POST to the server: the client's headers as [`toward_server`] passes
    /// them, under the proxy's own media type for the bytes it judged (no parameter of the
    /// client's).
    pub fn headers(&self, from: &HeaderMap, ids: &impl SessionIds) -> HeaderMap {
        let mut out = toward_server(from, ids);
        out.insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
        out
    }
}

//! The first verdict on a client's request, from its head alone: refused (and with what), or
//! which way it goes.

use ::http::{Method, Request};

use super::{JSON, MAX_HEADERS, Reject, check_headers, header_text, request_head_size};

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

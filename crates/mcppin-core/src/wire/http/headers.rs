//! Headers as a proxy must handle them (RFC 9110 section 7.6.1): hop-by-hop headers stay on
//! their hop, headers that mirror a body are kept consistent with it, and the session id is
//! carried between the client's name for it and the server's ([`SessionIds`]).

use std::fmt;

use ::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use ::http::{Method, Request, StatusCode, Uri};
use base64::Engine as _;

use super::{MediaType, Refusal, asks_for_decoding, check_decoding, is_decoding_header};
use crate::engine::Line;

/// The most bytes of a request or answer head (the first line and the headers): a longer one
/// is refused. An HTTP reader's buffer is set to the same size, and may grow to about twice it
/// while a head arrives: a head it cannot parse within that is refused by the reader itself.
pub const MAX_HEADERS: usize = 64 * 1024;

/// `Mcp-Session-Id`: the session the server assigned (2025-03-26 to 2025-11-25).
pub const SESSION_ID: &str = "mcp-session-id";
/// `Mcp-Protocol-Version`: the protocol version a client speaks (2025-06-18 on).
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method`: the body's `method` (2026-07-28).
const METHOD: &str = "mcp-method";
/// `Mcp-Name`: the body's `params.name` or `params.uri` (2026-07-28).
const NAME: &str = "mcp-name";

/// The media type of a JSON body, as a proxy writes it.
pub const JSON: &str = "application/json";
/// The media type of an SSE stream, as a proxy writes it.
pub const EVENT_STREAM: &str = "text/event-stream";

/// Hop-by-hop headers (RFC 9110 section 7.6.1, and the older `Keep-Alive` and
/// `Proxy-Connection`), never passed on.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The headers of one hop, for the next: without the hop-by-hop ones (and those `Connection`
/// names), without `Host` (the client of the next hop sets it), `Content-Length` (set for the
/// body actually sent), without every header that says how a body is read (`Content-Type`,
/// `Content-Encoding`, ...: the proxy writes its own media type for the bytes it judged) and,
/// toward the server, without those asking for a body read otherwise (`Accept-Encoding`,
/// `Accept-Charset`, `Range`, ...: the engine judges the bytes it reads as UTF-8, whole) and
/// `Expect` (the proxy has the whole body before it asks the server anything: a
/// `100 Continue` was already the proxy's to give).
pub fn pass_on(from: &HeaderMap, toward_server: bool) -> HeaderMap {
    let named: Vec<String> = from
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|name| name.trim().to_ascii_lowercase())
        .collect();
    let mut out = HeaderMap::with_capacity(from.len());
    for (name, value) in from {
        let text = name.as_str();
        let dropped = HOP_BY_HOP.contains(&text)
            || named.iter().any(|n| n == text)
            || name == header::HOST
            || name == header::CONTENT_LENGTH
            || is_decoding_header(text)
            || (toward_server && (asks_for_decoding(text) || name == header::EXPECT));
        if !dropped {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

/// The size of a head as written on the wire: `first_line` (the request or status line) and
/// each header as `name: value` with its line end.
pub fn head_size(first_line: usize, headers: &HeaderMap) -> usize {
    headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .fold(first_line + 2, usize::saturating_add)
}

/// The size of a request head: the request line (method, target, `HTTP/1.1`, two spaces) and
/// the headers ([`head_size`]).
pub fn request_head_size(method: &Method, uri: &Uri, headers: &HeaderMap) -> usize {
    let line = method.as_str().len() + uri.to_string().len() + 10;
    head_size(line, headers)
}

/// The size of an answer head: the status line (`HTTP/1.1 200 OK`, with the canonical reason
/// phrase) and the headers ([`head_size`]).
pub fn response_head_size(status: StatusCode, headers: &HeaderMap) -> usize {
    let line = 13 + status.canonical_reason().map_or(0, str::len);
    head_size(line, headers)
}

/// Checks a head for an instruction to read its body otherwise than as the UTF-8 bytes the
/// proxy judges ([`check_decoding`]); the media type it names, if any.
///
/// # Errors
///
/// The [`Refusal`] for the first such instruction.
pub fn check_headers(headers: &HeaderMap) -> Result<Option<MediaType>, Refusal> {
    check_decoding(
        headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_bytes())),
    )
}

/// The value of a header as text: its first value, when that is visible ASCII.
pub fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Why the headers mirroring a body (`Mcp-Method`, `Mcp-Name`) were refused. The message
/// names no value from the request.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Mirror {
    /// `Mcp-Method` or `Mcp-Name` appears more than once.
    Repeated,
    /// A mirroring header on a body that is not one message (a batch).
    NotOneMessage,
    /// `Mcp-Method` is not the body's `method`.
    Method,
    /// `Mcp-Name` (decoded) is not the body's `params.name` or `params.uri`.
    Name,
}

impl fmt::Display for Mirror {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Repeated => "the Mcp-Method or Mcp-Name header is repeated",
            Self::NotOneMessage => "Mcp-Method or Mcp-Name on a body that is not a single message",
            Self::Method => "the Mcp-Method header does not match the method of the body",
            Self::Name => {
                "the Mcp-Name header does not match params.name or params.uri of the body"
            }
        })
    }
}

/// Checks `Mcp-Method` and `Mcp-Name`, when present, against the body they mirror
/// (2026-07-28, "Server Validation"): a gateway or server that routes by the header must see
/// the request the proxy judged.
///
/// # Errors
///
/// The [`Mirror`] rule the headers break.
pub fn check_mirrored(headers: &HeaderMap, line: &Line<'_>) -> Result<(), Mirror> {
    let method = headers.get_all(METHOD).iter().collect::<Vec<_>>();
    let name = headers.get_all(NAME).iter().collect::<Vec<_>>();
    if method.is_empty() && name.is_empty() {
        return Ok(());
    }
    if method.len() > 1 || name.len() > 1 {
        return Err(Mirror::Repeated);
    }
    let Some(mirrored) = line.mirrored() else {
        return Err(Mirror::NotOneMessage);
    };
    if let Some(header) = method.first()
        && header.to_str().ok() != mirrored.method.as_deref()
    {
        return Err(Mirror::Method);
    }
    if let Some(header) = name.first() {
        let decoded = header.to_str().ok().and_then(decode);
        if decoded.is_none() || decoded.as_deref() != mirrored.name.as_deref() {
            return Err(Mirror::Name);
        }
    }
    Ok(())
}

/// A header value, decoded when it is in the Base64 sentinel form `=?base64?...?=`
/// (2026-07-28, "Value Encoding"); `None` when the form holds no valid Base64 of UTF-8.
fn decode(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(value.to_owned()),
    }
}

/// Whether a path holds a `.` or `..` segment, written plainly or percent-encoded (`%2e`,
/// `%2E`, mixed), with `/`, `\` or their encoded forms as separators: a server resolving dot
/// segments (as WHATWG URL parsing does) would read another path than the one checked.
pub fn has_dot_segment(path: &str) -> bool {
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let escaped = (b == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                i += 3;
            }
            None => {
                decoded.push(b);
                i += 1;
            }
        }
    }
    decoded
        .split(|b| *b == b'/' || *b == b'\\')
        .any(|segment| segment == b"." || segment == b"..")
}

/// The URI of another path on the endpoint's server (`/.well-known/...`): `path_and_query` on
/// the endpoint's scheme and authority; `None` for a path with a dot segment (a server
/// resolving it could serve its MCP endpoint there) or one that is no URI path.
pub fn beside_uri(endpoint: &Uri, path_and_query: &str) -> Option<Uri> {
    let path = path_and_query.split('?').next().unwrap_or_default();
    if has_dot_segment(path) {
        return None;
    }
    let mut parts = endpoint.clone().into_parts();
    parts.path_and_query = Some(path_and_query.parse().ok()?);
    Uri::from_parts(parts).ok()
}

/// The client's name for a session and the server's: a proxy behind a load balancer tags the
/// ids it hands out (`mcppin-guard --replica`), one alone passes them as they are ([`Plain`]).
pub trait SessionIds {
    /// The server's id inside the id a client sent; `None` when it is not this proxy's.
    fn inward<'a>(&self, id: &'a str) -> Option<&'a str>;
    /// The id a client sees for the server's `id`.
    fn outward(&self, id: &str) -> String;
    /// Whether ids are changed on the way (`inward` and `outward` are not the identity).
    fn tags(&self) -> bool;
}

/// Session ids passed as the server assigned them.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct Plain;

impl SessionIds for Plain {
    fn inward<'a>(&self, id: &'a str) -> Option<&'a str> {
        Some(id)
    }

    fn outward(&self, id: &str) -> String {
        id.to_owned()
    }

    fn tags(&self) -> bool {
        false
    }
}

/// The client's headers for the server: [`pass_on`], and with tagged ids the session id
/// without its tag, as the server assigned it (dropped when it is not text or not this
/// proxy's).
pub fn toward_server(from: &HeaderMap, ids: &impl SessionIds) -> HeaderMap {
    let mut out = pass_on(from, true);
    if ids.tags() && out.contains_key(SESSION_ID) {
        let inward = header_text(from, SESSION_ID)
            .and_then(|id| ids.inward(id))
            .and_then(|id| HeaderValue::from_str(id).ok());
        out.remove(SESSION_ID);
        if let Some(value) = inward {
            out.insert(HeaderName::from_static(SESSION_ID), value);
        }
    }
    out
}

/// The client's headers for a path beside the endpoint: [`pass_on`] without any session id (a
/// server serving MCP there gets no session to answer in).
pub fn toward_beside(from: &HeaderMap) -> HeaderMap {
    let mut out = pass_on(from, true);
    out.remove(SESSION_ID);
    out
}

/// The server's headers for the client: [`pass_on`], and with tagged ids each session id
/// tagged. One that is not text is dropped: it cannot be tagged, and a request carrying it
/// would never come back to this proxy.
pub fn toward_client(from: &HeaderMap, ids: &impl SessionIds) -> HeaderMap {
    let mut out = pass_on(from, false);
    if ids.tags() && out.contains_key(SESSION_ID) {
        let tagged: Vec<HeaderValue> = from
            .get_all(SESSION_ID)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .filter_map(|id| HeaderValue::from_str(&ids.outward(id)).ok())
            .collect();
        out.remove(SESSION_ID);
        for value in tagged {
            out.append(HeaderName::from_static(SESSION_ID), value);
        }
    }
    out
}

/// What a proxy needs to end a session at the server: the headers of the request that ends
/// it (the client's `Authorization` goes with the DELETE, never into a log).
#[derive(Clone, Debug, Default)]
pub struct Ending {
    authorization: Option<HeaderValue>,
    version: Option<HeaderValue>,
}

impl Ending {
    /// What a request with `headers` gives the DELETE that may end its session.
    pub fn of(headers: &HeaderMap) -> Self {
        Self {
            authorization: headers.get(header::AUTHORIZATION).cloned(),
            version: headers.get(PROTOCOL_VERSION).cloned(),
        }
    }
}

/// The DELETE that ends the session `key` (the server's id) at `endpoint`: its id, the
/// `Authorization` and `Mcp-Protocol-Version` of [`Ending`]. The caller gives it a body and
/// sends it.
pub fn end_request(endpoint: &Uri, key: &str, ending: &Ending) -> Request<()> {
    let mut request = Request::new(());
    *request.method_mut() = Method::DELETE;
    *request.uri_mut() = endpoint.clone();
    let headers = request.headers_mut();
    if let Ok(value) = HeaderValue::from_str(key) {
        headers.insert(HeaderName::from_static(SESSION_ID), value);
    }
    if let Some(value) = &ending.authorization {
        headers.insert(header::AUTHORIZATION, value.clone());
    }
    if let Some(value) = &ending.version {
        headers.insert(HeaderName::from_static(PROTOCOL_VERSION), value.clone());
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut out = HeaderMap::new();
        for (name, value) in pairs {
            out.append(*name, HeaderValue::from_static(value));
        }
        out
    }

    #[test]
    fn hop_by_hop_headers_stay_on_their_hop() {
        let from = map(&[
            ("connection", "close, x-private"),
            ("x-private", "1"),
            ("keep-alive", "timeout=5"),
            ("transfer-encoding", "chunked"),
            ("host", "guard"),
            ("content-length", "9"),
            ("accept-encoding", "gzip"),
            ("accept-charset", "latin1"),
            ("range", "bytes=0-1"),
            ("content-type", "application/json; charset=utf-16"),
            ("content-encoding", "gzip"),
            ("expect", "100-continue"),
            ("authorization", "Bearer t"),
            ("mcp-session-id", "s"),
        ]);
        let to_server = pass_on(&from, true);
        let names: Vec<&str> = to_server.keys().map(HeaderName::as_str).collect();
        assert_eq!(names, ["authorization", "mcp-session-id"]);
        let to_client = pass_on(&from, false);
        assert!(to_client.contains_key("accept-encoding"));
        assert!(
            !to_client.contains_key("content-type") && !to_client.contains_key("content-encoding")
        );
    }

    #[test]
    fn a_head_counts_its_first_line_and_every_header_line() {
        assert_eq!(head_size(14, &map(&[])), 16);
        let headers = map(&[("x-a", "12345"), ("x-a", "6")]);
        assert_eq!(head_size(14, &headers), 16 + (3 + 5 + 4) + (3 + 1 + 4));
        let uri: Uri = "/mcp".parse().expect("a path");
        // `POST /mcp HTTP/1.1` and its line end.
        assert_eq!(request_head_size(&Method::POST, &uri, &map(&[])), 20);
        // `HTTP/1.1 200 OK` and its line end.
        assert_eq!(response_head_size(StatusCode::OK, &map(&[])), 17);
    }

    #[test]
    fn mirrored_headers_must_match_the_body() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#;
        let line = Line::read(body);
        assert_eq!(check_mirrored(&map(&[]), &line), Ok(()));
        let good = map(&[("mcp-method", "tools/call"), ("mcp-name", "echo")]);
        assert_eq!(check_mirrored(&good, &line), Ok(()));
        let encoded = map(&[("mcp-name", "=?base64?ZWNobw==?=")]);
        assert_eq!(check_mirrored(&encoded, &line), Ok(()));
        for (bad, why) in [
            (map(&[("mcp-method", "tools/list")]), Mirror::Method),
            (map(&[("mcp-name", "other")]), Mirror::Name),
            (map(&[("mcp-name", "=?base64?!!?=")]), Mirror::Name),
            // Base64 is read strictly: no missing padding.
            (map(&[("mcp-name", "=?base64?ZWNobw?=")]), Mirror::Name),
            (
                map(&[("mcp-method", "tools/call"), ("mcp-method", "tools/call")]),
                Mirror::Repeated,
            ),
        ] {
            assert_eq!(check_mirrored(&bad, &line), Err(why), "{bad:?}");
        }
        let batch = Line::read(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert_eq!(
            check_mirrored(&map(&[("mcp-method", "ping")]), &batch),
            Err(Mirror::NotOneMessage)
        );
    }

    #[test]
    fn dot_segments_are_found_however_written() {
        for path in [
            "/.well-known/../mcp",
            "/.well-known/./x",
            "/.well-known/%2e%2e/mcp",
            "/.well-known/%2E./mcp",
            "/.well-known/.%2E/mcp",
            "/.well-known/..%2fmcp",
            "/.well-known/..\\mcp",
            "/.well-known/x/..",
        ] {
            assert!(has_dot_segment(path), "{path}");
        }
    }

    #[test]
    fn names_holding_dots_are_no_dot_segments() {
        for path in [
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-authorization-server/mcp",
            "/.well-known/a..b/...",
            "/.well-known/%2e%2e%2e",
            "/.well-known/x%2",
        ] {
            assert!(!has_dot_segment(path), "{path}");
        }
    }
}

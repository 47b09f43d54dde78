//! Headers as a proxy must handle them (RFC 9110 section 7.6.1): hop-by-hop headers stay on
//! their hop, headers that mirror a body are kept consistent with it.

use base64::Engine;
use hyper::HeaderMap;
use hyper::header::{self, HeaderName};
use mcppin_core::engine::Line;
use mcppin_core::http::{self, MediaType, Refusal};

/// The most bytes of a request or answer head (the first line and the headers): a longer one
/// is refused. Hyper's read buffer is set to the same size, and may grow to about twice it
/// while a head arrives: a head it cannot parse within that is refused by hyper itself.
pub(crate) const MAX_HEADERS: usize = 64 * 1024;

/// `Mcp-Session-Id`: the session the server assigned (2025-03-26 to 2025-11-25).
pub(crate) const SESSION_ID: &str = "mcp-session-id";
/// `Mcp-Method`: the body's `method` (2026-07-28).
const METHOD: &str = "mcp-method";
/// `Mcp-Name`: the body's `params.name` or `params.uri` (2026-07-28).
const NAME: &str = "mcp-name";

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
/// `Content-Encoding`, ...: the guard writes its own media type for the bytes it judged) and,
/// toward the server, without those asking for a body read otherwise (`Accept-Encoding`,
/// `Accept-Charset`, `Range`, ...: the engine judges the bytes it reads as UTF-8, whole) and
/// `Expect` (the guard has the whole body before it asks the server anything: a
/// `100 Continue` was already the guard's to give).
pub(crate) fn pass_on(from: &HeaderMap, toward_server: bool) -> HeaderMap {
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
            || http::is_decoding_header(text)
            || (toward_server && (http::asks_for_decoding(text) || name == header::EXPECT));
        if !dropped {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

/// The size of a head as written on the wire: `first_line` (the request or status line) and
/// each header as `name: value` with its line end.
pub(crate) fn head_size(first_line: usize, headers: &HeaderMap) -> usize {
    headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .fold(first_line + 2, usize::saturating_add)
}

/// Checks a head for an instruction to read its body otherwise than as the UTF-8 bytes the
/// guard judges ([`http::check_decoding`]); the media type it names, if any.
pub(crate) fn decoding(headers: &HeaderMap) -> Result<Option<MediaType>, Refusal> {
    http::check_decoding(
        headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_bytes())),
    )
}

/// The value of a header as text, when it is there once and is visible ASCII.
pub(crate) fn text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Checks `Mcp-Method` and `Mcp-Name`, when present, against the body they mirror
/// (2026-07-28, "Server Validation"): a gateway or server that routes by the header must see
/// the request the guard judged. The message names no value from the request.
pub(crate) fn check_mirrored(headers: &HeaderMap, line: &Line<'_>) -> Result<(), &'static str> {
    let method = headers.get_all(METHOD).iter().collect::<Vec<_>>();
    let name = headers.get_all(NAME).iter().collect::<Vec<_>>();
    if method.is_empty() && name.is_empty() {
        return Ok(());
    }
    if method.len() > 1 || name.len() > 1 {
        return Err("the Mcp-Method or Mcp-Name header is repeated");
    }
    let Some(mirrored) = line.mirrored() else {
        return Err("Mcp-Method or Mcp-Name on a body that is not a single message");
    };
    if let Some(header) = method.first()
        && header.to_str().ok() != mirrored.method.as_deref()
    {
        return Err("the Mcp-Method header does not match the method of the body");
    }
    if let Some(header) = name.first() {
        let decoded = header.to_str().ok().and_then(decode);
        if decoded.is_none() || decoded.as_deref() != mirrored.name.as_deref() {
            return Err("the Mcp-Name header does not match params.name or params.uri of the body");
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

/// A header name known to be valid.
pub(crate) fn name(text: &'static str) -> HeaderName {
    HeaderName::from_static(text)
}

#[cfg(test)]
mod tests {
    use hyper::header::HeaderValue;

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
        for bad in [
            map(&[("mcp-method", "tools/list")]),
            map(&[("mcp-name", "other")]),
            map(&[("mcp-name", "=?base64?!!?=")]),
            map(&[("mcp-method", "tools/call"), ("mcp-method", "tools/call")]),
        ] {
            assert!(check_mirrored(&bad, &line).is_err(), "{bad:?}");
        }
        let batch = Line::read(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert!(check_mirrored(&map(&[("mcp-method", "ping")]), &batch).is_err());
    }
}

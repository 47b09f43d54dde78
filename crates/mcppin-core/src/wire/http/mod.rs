//! HTTP heads as a proxy that judges bodies must read them: which headers tell a reader how to
//! decode a body, and whether a body so described reads as the UTF-8 text a proxy judged.
//!
//! A body is judged as UTF-8 JSON (or an SSE stream of it). A peer that decodes it by another
//! instruction of the head (a `charset` parameter, a `Content-Encoding`, a `Transfer-Encoding`
//! coding other than `chunked`, a MIME `Content-Transfer-Encoding`, a `Content-Range` that makes
//! it a part of something else) reads text the proxy never judged. So a head carrying such an
//! instruction is refused ([`check_decoding`]), and what a proxy forwards carries no header of
//! [`is_decoding_header`] from its peer: it writes its own media type, without parameters.
//!
//! The headers a proxy passes between client and server, and the session id it carries
//! between the client's name for it and the server's, are ruled here too ([`pass_on`],
//! [`toward_server`], [`toward_client`], [`SessionIds`]), in the types of the `http` crate and
//! without I/O.
//!
//! The `Content-Type` grammar is RFC 9110 section 8.3.1 (`type "/" subtype *( OWS ";" OWS
//! [ parameter ] )`, tokens of section 5.6.2, quoted strings of section 5.6.4), read strictly:
//! visible ASCII only, no comma (a list of media types is no media type).
//!
//! ```
//! use mcppin_core::http::{Refusal, check_decoding};
//!
//! let head = [("content-type", &b"application/json; charset=UTF-8"[..])];
//! assert_eq!(check_decoding(head)?.map(|m| m.essence().to_owned()).as_deref(),
//!            Some("application/json"));
//! let latin1 = [("content-type", &b"application/json; charset=latin1"[..])];
//! assert_eq!(check_decoding(latin1), Err(Refusal::Charset));
//! let gzip = [("content-encoding", &b"gzip"[..])];
//! assert_eq!(check_decoding(gzip), Err(Refusal::ContentEncoding));
//! # Ok::<(), Refusal>(())
//! ```

use std::fmt;

mod headers;
mod note;
mod reject;
mod request;
mod response;
mod stream;
mod table;

pub use headers::{
    EVENT_STREAM, Ending, JSON, MAX_HEADERS, Mirror, Plain, SESSION_ID, SessionIds, beside_uri,
    check_headers, check_mirrored, end_request, has_dot_segment, head_size, header_text, pass_on,
    request_head_size, response_head_size, toward_beside, toward_client, toward_server,
};
pub use note::{Cause, End, HttpNote, Judged, Unread};
pub use reject::{MAX_SESSION_ID, NotKept, Reject};
pub use request::{Belongs, Forwarded, Post, RequestVerdict, Route, belongs, route};
pub use response::{
    BodyOut, BodyVerdict, Exchange, HeadVerdict, answered, beside_answer, relayed, relayed_beside,
    splice, unread,
};
pub use stream::{EventStream, Owed, SseVerdict};
pub use table::{Activity, SessionTable};

/// The headers of a message that say how its body is read, lowercase. A proxy writes its own
/// (a bare media type) and never passes these on from a peer.
const DECODING: [&str; 5] = [
    "content-type",
    "content-encoding",
    "content-transfer-encoding",
    "content-range",
    "transfer-encoding",
];

/// The headers of a request that ask the server for a body read some other way than as
/// UTF-8, whole and unencoded, lowercase: a proxy that judges the answer does not pass them on.
const ASKING: [&str; 5] = [
    "accept-charset",
    "accept-encoding",
    "range",
    "if-range",
    "te",
];

/// A `Content-Type` value: its `type/subtype` and its parameters.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct MediaType {
    /// `type/subtype`, lowercase.
    essence: String,
    /// The parameters in order: names lowercase, values unquoted.
    parameters: Vec<(String, String)>,
}

/// Why a head is refused: it tells a reader to decode the body otherwise than as the UTF-8
/// bytes a proxy judges, or says so ambiguously.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Refusal {
    /// `Content-Type` appears more than once: readers take the first, the last, or join them.
    RepeatedContentType,
    /// The `Content-Type` value is not one media type of RFC 9110 section 8.3.1 in visible
    /// ASCII.
    MalformedContentType,
    /// A `charset` other than UTF-8, one named twice, or one in the extended form of RFC 8187
    /// (`charset*`).
    Charset,
    /// A `Content-Encoding` other than `identity` (the body is compressed or otherwise coded).
    ContentEncoding,
    /// A `Transfer-Encoding` coding other than `chunked` (which the HTTP layer decodes).
    TransferEncoding,
    /// A `Content-Transfer-Encoding` (MIME: base64, quoted-printable, ...).
    ContentTransferEncoding,
    /// A `Content-Range`: the body is a part of something else.
    ContentRange,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::RepeatedContentType => "the Content-Type header is repeated",
            Self::MalformedContentType => "the Content-Type header is not one media type",
            Self::Charset => "the Content-Type names a charset other than utf-8",
            Self::ContentEncoding => "the body has a Content-Encoding other than identity",
            Self::TransferEncoding => "the body has a Transfer-Encoding other than chunked",
            Self::ContentTransferEncoding => "the body has a Content-Transfer-Encoding",
            Self::ContentRange => "the body is a range (Content-Range)",
        })
    }
}

impl MediaType {
    /// Reads a `Content-Type` value (RFC 9110 section 8.3.1), surrounding whitespace allowed.
    ///
    /// # Errors
    ///
    /// [`Refusal::MalformedContentType`] for anything else: bytes outside visible ASCII (tab
    /// and space aside), a missing or empty type or subtype, a parameter without `=` or value,
    /// an unterminated quoted string, anything after a parameter but `;`.
    pub fn parse(value: &[u8]) -> Result<Self, Refusal> {
        let bad = Refusal::MalformedContentType;
        let mut at = Cursor {
            bytes: value,
            at: 0,
        };
        at.skip_space();
        let kind = at.token().ok_or(bad)?;
        if !at.eat(b'/') {
            return Err(bad);
        }
        let subtype = at.token().ok_or(bad)?;
        let essence = format!("{kind}/{subtype}").to_ascii_lowercase();
        let mut parameters = Vec::new();
        loop {
            at.skip_space();
            if at.is_done() {
                break;
            }
            if !at.eat(b';') {
                return Err(bad);
            }
            at.skip_space();
            if at.is_done() || at.peek() == Some(b';') {
                // An empty parameter (`a/b;` or `a/b;;c=d`) is allowed by the grammar.
                continue;
            }
            let name = at.token().ok_or(bad)?.to_ascii_lowercase();
            if !at.eat(b'=') {
                return Err(bad);
            }
            let value = if at.peek() == Some(b'"') {
                at.quoted().ok_or(bad)?
            } else {
                at.token().ok_or(bad)?.to_owned()
            };
            parameters.push((name, value));
        }
        Ok(Self {
            essence,
            parameters,
        })
    }

    /// The `type/subtype`, lowercase.
    pub fn essence(&self) -> &str {
        &self.essence
    }

    /// Whether this is the media type `essence` (compared without case, parameters ignored).
    pub fn is(&self, essence: &str) -> bool {
        self.essence.eq_ignore_ascii_case(essence)
    }

    /// The parameters in order: names lowercase, values unquoted.
    pub fn parameters(&self) -> impl Iterator<Item = (&str, &str)> {
        self.parameters
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
    }
}

/// Whether the header `name` (any case) says how a body is read: a proxy never passes it on
/// from a peer, and writes its own `Content-Type`.
pub fn is_decoding_header(name: &str) -> bool {
    DECODING.iter().any(|d| d.eq_ignore_ascii_case(name))
}

/// Whether the request header `name` (any case) asks the server for a body read otherwise than
/// as UTF-8, whole and unencoded (`Accept-Charset`, `Accept-Encoding`, `Range`, ...): a proxy
/// judging the answer never passes it on.
pub fn asks_for_decoding(name: &str) -> bool {
    ASKING.iter().any(|d| d.eq_ignore_ascii_case(name))
}

/// Checks a head (each header as its name and value; a repeated header appears once per line)
/// for an instruction to read its body otherwise than as the UTF-8 bytes on the wire. Returns
/// the media type, if the head names one.
///
/// Accepted: one `Content-Type` whose only `charset`, if any, is UTF-8 (any case, quoted or
/// not); `Content-Encoding: identity`; `Transfer-Encoding: chunked`. Other parameters are
/// accepted: a proxy writes the media type without them.
///
/// # Errors
///
/// The [`Refusal`] for the first instruction found that reads the body otherwise.
pub fn check_decoding<'a>(
    headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<Option<MediaType>, Refusal> {
    let mut media = None;
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("content-type") {
            if media.is_some() {
                return Err(Refusal::RepeatedContentType);
            }
            let parsed = MediaType::parse(value)?;
            check_charset(&parsed)?;
            media = Some(parsed);
        } else if name.eq_ignore_ascii_case("content-encoding") {
            if !only(value, "identity") {
                return Err(Refusal::ContentEncoding);
            }
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            if !only(value, "chunked") {
                return Err(Refusal::TransferEncoding);
            }
        } else if name.eq_ignore_ascii_case("content-transfer-encoding") {
            return Err(Refusal::ContentTransferEncoding);
        } else if name.eq_ignore_ascii_case("content-range") {
            return Err(Refusal::ContentRange);
        }
    }
    Ok(media)
}

/// At most one `charset`, and that one UTF-8; none in the extended form (`charset*`).
fn check_charset(media: &MediaType) -> Result<(), Refusal> {
    let mut seen = false;
    for (name, value) in media.parameters() {
        if name.starts_with("charset*") {
            return Err(Refusal::Charset);
        }
        if name == "charset" {
            if seen || !value.eq_ignore_ascii_case("utf-8") {
                return Err(Refusal::Charset);
            }
            seen = true;
        }
    }
    Ok(())
}

/// Whether a list header value holds `coding` and nothing else (one or more times, any case).
fn only(value: &[u8], coding: &str) -> bool {
    let Ok(text) = std::str::from_utf8(value) else {
        return false;
    };
    let mut any = false;
    for item in text.split(',') {
        let item = item.trim_matches([' ', '\t']);
        if item.is_empty() {
            continue;
        }
        if !item.eq_ignore_ascii_case(coding) {
            return false;
        }
        any = true;
    }
    any
}

/// A position in a header value.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn is_done(&self) -> bool {
        self.at >= self.bytes.len()
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.at += 1;
            return true;
        }
        false
    }

    /// OWS: spaces and tabs.
    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    /// A token of RFC 9110 section 5.6.2; `None` when empty.
    fn token(&mut self) -> Option<&'a str> {
        let start = self.at;
        while self.peek().is_some_and(is_tchar) {
            self.at += 1;
        }
        let token = self.bytes.get(start..self.at)?;
        if token.is_empty() {
            return None;
        }
        // Every tchar is ASCII.
        std::str::from_utf8(token).ok()
    }

    /// A quoted string of RFC 9110 section 5.6.4, unquoted; `None` when unterminated or
    /// holding a byte outside tab, space and visible ASCII.
    fn quoted(&mut self) -> Option<String> {
        if !self.eat(b'"') {
            return None;
        }
        let mut out = String::new();
        loop {
            let byte = self.peek()?;
            self.at += 1;
            match byte {
                b'"' => return Some(out),
                b'\\' => {
                    let escaped = self.peek().filter(|b| is_text(*b))?;
                    self.at += 1;
                    out.push(char::from(escaped));
                }
                b if is_text(b) => out.push(char::from(b)),
                _ => return None,
            }
        }
    }
}

/// `tchar` of RFC 9110 section 5.6.2.
fn is_tchar(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// Tab, space or visible ASCII (the `obs-text` of RFC 9110 is refused).
fn is_text(byte: u8) -> bool {
    byte == b'\t' || (b' '..=b'~').contains(&byte)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head<'a>(pairs: &'a [(&'a str, &'a str)]) -> Vec<(&'a str, &'a [u8])> {
        pairs.iter().map(|(n, v)| (*n, v.as_bytes())).collect()
    }

    fn check(pairs: &[(&str, &str)]) -> Result<Option<String>, Refusal> {
        check_decoding(head(pairs)).map(|m| m.map(|m| m.essence().to_owned()))
    }

    #[test]
    fn reads_a_media_type_with_its_parameters() {
        let media = MediaType::parse(b" Application/JSON ; Charset=\"UTF-8\";q=\"a\\\"b\" ")
            .expect("a media type");
        assert_eq!(media.essence(), "application/json");
        assert!(media.is("APPLICATION/json"));
        let parameters: Vec<(&str, &str)> = media.parameters().collect();
        assert_eq!(parameters, [("charset", "UTF-8"), ("q", "a\"b")]);
        assert_eq!(
            MediaType::parse(b"text/event-stream;").map(|m| m.parameters.len()),
            Ok(0)
        );
    }

    #[test]
    fn refuses_what_is_not_one_media_type() {
        for bad in [
            &b""[..],
            b"application",
            b"application/",
            b"/json",
            b"application/json, text/html",
            b"application/json charset=utf-8",
            b"application/json; charset",
            b"application/json; charset=",
            b"application/json; charset=\"utf-8",
            b"application/json; charset=\"utf\x01\"",
            b"application/json; =utf-8",
            b"application/j\xc3\xa9son",
            b"application/json; charset=\"\xe9\"",
            b"application/json\r\n; charset=utf-16",
        ] {
            assert_eq!(
                MediaType::parse(bad),
                Err(Refusal::MalformedContentType),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn holds_for_utf_8_and_no_instruction() {
        for pairs in [
            &[][..],
            &[("content-type", "application/json")],
            &[("Content-Type", "application/json; charset=utf-8")],
            &[("content-type", "application/json;charset=\"UTF-8\"")],
            &[("content-type", "text/event-stream; charset=Utf-8; x=y")],
            &[("content-encoding", "identity")],
            &[("content-encoding", "Identity, identity")],
            &[("transfer-encoding", "chunked")],
            &[("transfer-encoding", "chunked, Chunked")],
            &[("x-other", "gzip"), ("content-language", "de")],
        ] {
            assert!(check(pairs).is_ok(), "{pairs:?}");
        }
        assert_eq!(
            check(&[("content-type", "Text/Event-Stream; charset=utf-8")]),
            Ok(Some("text/event-stream".to_owned()))
        );
    }

    #[test]
    fn fires_on_a_charset_other_than_utf_8() {
        for value in [
            "application/json; charset=utf-16",
            "application/json; charset=\"UTF-16LE\"",
            "application/json; charset=latin1",
            "application/json; charset=iso-8859-1",
            "application/json; charset=utf8",
            "application/json; charset=utf-7",
            "application/json; charset=\"utf-8 \"",
            "application/json; charset=utf-8; charset=utf-16",
            "application/json; charset=utf-8; CHARSET=utf-8",
            "application/json; charset*=utf-8''utf-8",
            "application/json; charset*0=utf-16",
            "text/event-stream; charset=windows-1252",
        ] {
            assert_eq!(
                check(&[("content-type", value)]),
                Err(Refusal::Charset),
                "{value}"
            );
        }
    }

    #[test]
    fn fires_on_a_repeated_content_type() {
        let pairs = [
            ("content-type", "application/json"),
            ("Content-Type", "application/json"),
        ];
        assert_eq!(check(&pairs), Err(Refusal::RepeatedContentType));
    }

    #[test]
    fn fires_on_every_coding_the_reader_did_not_decode() {
        for (pairs, refusal) in [
            (
                &[("content-encoding", "gzip")][..],
                Refusal::ContentEncoding,
            ),
            (
                &[("Content-Encoding", "identity, br")],
                Refusal::ContentEncoding,
            ),
            (
                &[("content-encoding", "identity"), ("content-encoding", "x")],
                Refusal::ContentEncoding,
            ),
            (&[("content-encoding", "")], Refusal::ContentEncoding),
            (&[("content-encoding", "\u{e9}")], Refusal::ContentEncoding),
            (
                &[("transfer-encoding", "gzip, chunked")],
                Refusal::TransferEncoding,
            ),
            (
                &[("content-transfer-encoding", "base64")],
                Refusal::ContentTransferEncoding,
            ),
            (&[("content-range", "bytes 0-1/9")], Refusal::ContentRange),
        ] {
            assert_eq!(check(pairs), Err(refusal), "{pairs:?}");
        }
    }

    #[test]
    fn names_every_header_that_says_how_a_body_is_read() {
        for name in ["Content-Type", "content-encoding", "Transfer-Encoding"] {
            assert!(is_decoding_header(name), "{name}");
        }
        for name in [
            "Accept-Charset",
            "accept-encoding",
            "Range",
            "If-Range",
            "TE",
        ] {
            assert!(asks_for_decoding(name), "{name}");
        }
        for name in [
            "authorization",
            "mcp-session-id",
            "content-length",
            "accept",
        ] {
            assert!(
                !is_decoding_header(name) && !asks_for_decoding(name),
                "{name}"
            );
        }
    }
}

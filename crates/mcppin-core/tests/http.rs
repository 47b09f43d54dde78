//! The HTTP decisions of the wire layer, without sockets: which headers pass between client
//! and server and how the session id is carried (docs/guard.md, "Streamable HTTP"), and the
//! guard's answers joined with the server's batch.

use http::header::{HeaderMap, HeaderValue};
use http::{Method, Uri};
use mcppin_core::http::{
    Ending, Plain, SessionIds, beside_uri, end_request, toward_beside, toward_client, toward_server,
};

/// `--replica r1`: the tag `r1.` on every id a client sees.
struct Tagged;

impl SessionIds for Tagged {
    fn inward<'a>(&self, id: &'a str) -> Option<&'a str> {
        id.strip_prefix("r1.").filter(|rest| !rest.is_empty())
    }

    fn outward(&self, id: &str) -> String {
        format!("r1.{id}")
    }

    fn tags(&self) -> bool {
        true
    }
}

fn map(pairs: &[(&'static str, &[u8])]) -> HeaderMap {
    let mut out = HeaderMap::new();
    for (name, value) in pairs {
        out.append(
            *name,
            HeaderValue::from_bytes(value).expect("a header value"),
        );
    }
    out
}

fn ids(headers: &HeaderMap) -> Vec<&[u8]> {
    headers
        .get_all("mcp-session-id")
        .iter()
        .map(HeaderValue::as_bytes)
        .collect()
}

#[test]
fn without_a_tag_session_ids_pass_unchanged_both_ways() {
    let request = map(&[("mcp-session-id", b"s-1"), ("authorization", b"Bearer t")]);
    let to_server = toward_server(&request, &Plain);
    assert_eq!(ids(&to_server), [b"s-1"]);
    assert!(to_server.contains_key("authorization"));
    let answer = map(&[("mcp-session-id", b"s-1")]);
    assert_eq!(ids(&toward_client(&answer, &Plain)), [b"s-1"]);
}

#[test]
fn a_tag_goes_on_toward_the_client_and_comes_off_toward_the_server() {
    let answer = map(&[("mcp-session-id", b"s-1")]);
    assert_eq!(ids(&toward_client(&answer, &Tagged)), [b"r1.s-1"]);
    let request = map(&[("mcp-session-id", b"r1.s-1")]);
    assert_eq!(ids(&toward_server(&request, &Tagged)), [b"s-1"]);
    // An id without this replica's tag reaches the server as no id at all.
    let foreign = map(&[("mcp-session-id", b"r2.s-1")]);
    assert!(ids(&toward_server(&foreign, &Tagged)).is_empty());
}

#[test]
fn a_session_id_that_is_not_text_is_dropped_when_it_would_be_tagged() {
    let answer = map(&[("mcp-session-id", b"s-\xe9")]);
    assert!(ids(&toward_client(&answer, &Tagged)).is_empty());
    // Untagged, it passes as it came (the client's next request with it gets 404).
    assert_eq!(ids(&toward_client(&answer, &Plain)), [b"s-\xe9"]);
}

#[test]
fn no_session_id_goes_beside_the_endpoint() {
    let request = map(&[("mcp-session-id", b"s-1"), ("authorization", b"Bearer t")]);
    let beside = toward_beside(&request);
    assert!(ids(&beside).is_empty());
    assert!(beside.contains_key("authorization"));
    let endpoint: Uri = "https://example.test:8443/mcp?k=1".parse().expect("a URI");
    let uri = beside_uri(&endpoint, "/.well-known/oauth-protected-resource/mcp?x=y");
    assert_eq!(
        uri.map(|u| u.to_string()).as_deref(),
        Some("https://example.test:8443/.well-known/oauth-protected-resource/mcp?x=y")
    );
    for climbing in ["/.well-known/../mcp", "/.well-known/%2e%2E/mcp?x=y"] {
        assert_eq!(beside_uri(&endpoint, climbing), None, "{climbing}");
    }
}

#[test]
fn the_delete_that_ends_a_session_carries_the_clients_credentials() {
    let endpoint: Uri = "http://127.0.0.1:9/mcp".parse().expect("a URI");
    let request = map(&[
        ("authorization", b"Bearer t"),
        ("mcp-protocol-version", b"2025-06-18"),
        ("cookie", b"c=1"),
    ]);
    let delete = end_request(&endpoint, "s-1", &Ending::of(&request));
    assert_eq!(delete.method(), Method::DELETE);
    assert_eq!(delete.uri(), &endpoint);
    let headers = delete.headers();
    assert_eq!(ids(headers), [b"s-1"]);
    assert_eq!(
        headers.get("authorization").map(HeaderValue::as_bytes),
        Some(&b"Bearer t"[..])
    );
    assert_eq!(
        headers
            .get("mcp-protocol-version")
            .map(HeaderValue::as_bytes),
        Some(&b"2025-06-18"[..])
    );
    assert_eq!(headers.len(), 3, "{headers:?}");
    let bare = end_request(&endpoint, "s-1", &Ending::of(&HeaderMap::new()));
    assert_eq!(bare.headers().len(), 1);
}

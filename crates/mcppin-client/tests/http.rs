//! Remote capture over HTTP: sessions of every era against small in-test HTTP servers (for the
//! answers no honest server gives), and against the reference server-everything in its
//! `streamableHttp` and `sse` modes (the same tools as over stdio).

use mcppin_testkit::peer;

use std::io::Write;
use std::net::TcpStream;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use mcppin_client::{
    ClientInfo, Connection, DEFAULT_MAX_LINE, Error, HttpKind, HttpOptions, HttpServer,
    HttpTransport, Protocol, Revision, ServerCapture, ServerCommand, Session, SessionOptions,
    capture,
};
use mcppin_core::http::Refusal;
use peer::{
    Peer, Request, json_server, mcp_answer, respond, respond_json, start_events, write_split,
};

const SECRET: &str = "tok-5ecret-value-9731";

fn options(protocol: Protocol, timeout: Duration) -> SessionOptions {
    SessionOptions {
        protocol,
        timeout,
        start_timeout: timeout,
        client: ClientInfo {
            name: "mcppin-test".to_owned(),
            version: "0.0.0".to_owned(),
        },
        capabilities: mcppin_core::Object::new(),
    }
}

fn server(url: String, kind: HttpKind) -> HttpServer {
    HttpServer {
        url,
        kind,
        headers: [("Authorization".to_owned(), format!("Bearer {SECRET}"))].into(),
    }
}

fn http_options(max_message: usize, timeout: Duration) -> HttpOptions {
    HttpOptions {
        max_message,
        timeout,
    }
}

/// Opens a session over HTTP and reads the tools twice; the transport is closed (DELETE).
fn capture_over(
    server: &HttpServer,
    protocol: Protocol,
    max_message: usize,
    timeout: Duration,
) -> Result<ServerCapture, Error> {
    let transport = HttpTransport::connect(server, http_options(max_message, timeout))?;
    let mut session = Session::open(transport, &options(protocol, timeout))?;
    let captured = capture(&mut session, NonZeroU32::new(2).unwrap());
    let mut transport = session.into_transport();
    transport.close()?;
    captured
}

fn names(capture: &ServerCapture) -> Vec<String> {
    let mut names: Vec<String> = capture
        .tools
        .iter()
        .map(|t| {
            t.get("name")
                .and_then(mcppin_core::Value::as_str)
                .unwrap()
                .to_owned()
        })
        .collect();
    names.sort();
    names
}

/// Asserts that no request and no error text holds the secret, beyond the configured header.
#[track_caller]
fn assert_secret_kept(peer: &Peer, message: &str) {
    assert!(!message.contains(SECRET), "{message}");
    for request in peer.requests() {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {SECRET}").as_str()),
            "{request:?}"
        );
    }
}

#[test]
fn speaks_streamable_http_with_json_answers_and_a_session() {
    let peer = Peer::start(json_server);
    let captured = capture_over(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        Protocol::default(),
        DEFAULT_MAX_LINE,
        Duration::from_secs(10),
    )
    .unwrap();
    assert_eq!(names(&captured), ["add", "echo"]);
    assert!(captured.agreed);
    assert_eq!(captured.reported_name.as_deref(), Some("peer"));
    // Neither the configuration nor the transport shows a secret in its Debug form.
    let mut configured = server(
        format!("{}?key={SECRET}", peer.url("/mcp")),
        HttpKind::Detect,
    );
    let transport =
        HttpTransport::connect(&configured, http_options(1024, Duration::from_secs(1))).unwrap();
    configured
        .headers
        .insert("X-Other".to_owned(), SECRET.to_owned());
    for debug in [format!("{configured:?}"), format!("{transport:?}")] {
        assert!(!debug.contains(SECRET), "{debug}");
        assert!(debug.contains(&peer.url("")), "{debug}");
        assert!(!debug.contains("/mcp"), "{debug}");
    }
    let requests = peer.requests();
    let posts: Vec<&Request> = requests.iter().filter(|r| r.method == "POST").collect();
    // initialize, initialized, tools/list twice.
    assert_eq!(posts.len(), 4, "{requests:#?}");
    let init = posts[0];
    assert_eq!(init.rpc_method(), "initialize");
    assert_eq!(
        init.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(init.header("mcp-session-id"), None);
    for later in &posts[1..] {
        assert_eq!(later.header("mcp-session-id"), Some("sess-1"), "{later:?}");
        assert_eq!(later.header("mcp-protocol-version"), Some("2025-11-25"));
    }
    // The optional GET stream was asked for (405 here; its thread may still be sending it),
    // and the session ended with DELETE.
    let mut requests = requests;
    for _ in 0..100 {
        if requests.iter().any(|r| r.method == "GET") {
            break;
        }
        thread::sleep(Duration::from_millis(50));
        requests = peer.requests();
    }
    let get = requests.iter().find(|r| r.method == "GET").expect("a GET");
    assert_eq!(get.header("mcp-session-id"), Some("sess-1"));
    let delete = requests
        .iter()
        .find(|r| r.method == "DELETE")
        .expect("a DELETE");
    assert_eq!(delete.header("mcp-session-id"), Some("sess-1"));
    assert_secret_kept(&peer, "");
}

#[test]
fn answers_a_ping_the_server_sends_on_the_get_stream() {
    // The server holds its answer to tools/list until the client has answered the ping it
    // sent on the GET stream: the answer's POST must not wait behind the request's.
    let pinged = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&pinged);
    let peer = Peer::start(move |request: &Request, stream: &mut TcpStream| {
        let body = request.json();
        match request.method.as_str() {
            "GET" => {
                start_events(stream, &[]);
                let ping = r#"{"jsonrpc":"2.0","id":"p-1","method":"ping"}"#;
                let _ = write!(stream, "data: {ping}\n\n");
                let _ = stream.flush();
                thread::sleep(Duration::from_secs(3));
            }
            "POST" if body["id"] == "p-1" && body.get("result").is_some() => {
                seen.fetch_add(1, Ordering::SeqCst);
                respond(stream, "202 Accepted", &[], b"");
            }
            "POST" if request.rpc_method() == "tools/list" => {
                for _ in 0..200 {
                    if seen.load(Ordering::SeqCst) > 0 {
                        return json_server(request, stream);
                    }
                    thread::sleep(Duration::from_millis(25));
                }
                respond(stream, "500 Internal Server Error", &[], b"");
            }
            _ => json_server(request, stream),
        }
    });
    let transport = HttpTransport::connect(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        http_options(DEFAULT_MAX_LINE, Duration::from_secs(10)),
    )
    .unwrap();
    let mut session = Session::open(
        transport,
        &options(Protocol::default(), Duration::from_secs(10)),
    )
    .unwrap();
    assert_eq!(session.list_tools().unwrap().len(), 2);
    assert_eq!(pinged.load(Ordering::SeqCst), 1);
}

/// Answers each request with an event stream written a few bytes at a time, CRLF line ends,
/// a comment and a notification before the answer.
fn split_sse_server(request: &Request, stream: &mut TcpStream) {
    match (request.method.as_str(), mcp_answer(request)) {
        ("POST", Some(answer)) => {
            start_events(stream, &[("Mcp-Session-Id", "s-2")]);
            let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
            let events = format!(
                ": keep-alive\r\n\r\nevent: message\r\ndata: {note}\r\n\r\nid: e1\r\ndata: {answer}\r\n\r\n"
            );
            write_split(stream, events.as_bytes(), 3);
        }
        ("POST", None) => respond(stream, "202 Accepted", &[], b""),
        _ => respond(stream, "405 Method Not Allowed", &[], b""),
    }
}

#[test]
fn reads_answers_from_event_streams_split_across_chunks() {
    let peer = Peer::start(split_sse_server);
    let captured = capture_over(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        Protocol::Exact(Revision::V2025_06_18),
        DEFAULT_MAX_LINE,
        Duration::from_secs(10),
    )
    .unwrap();
    assert_eq!(names(&captured), ["add", "echo"]);
    assert_eq!(captured.protocol_version, Revision::V2025_06_18);
}

#[test]
fn refuses_an_event_larger_than_the_message_bound() {
    let peer = Peer::start(|request: &Request, stream: &mut TcpStream| {
        if request.method != "POST" {
            return respond(stream, "405 Method Not Allowed", &[], b"");
        }
        start_events(stream, &[]);
        let big = format!("data: {}\n\n", "x".repeat(10_000));
        write_split(stream, big.as_bytes(), 4096);
    });
    let err = capture_over(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        Protocol::default(),
        4096,
        Duration::from_secs(10),
    )
    .unwrap_err();
    assert!(matches!(err, Error::LineTooLong { limit: 4096 }), "{err}");
}

#[test]
fn refuses_a_json_body_larger_than_the_message_bound() {
    let peer = Peer::start(|request: &Request, stream: &mut TcpStream| {
        let _ = request;
        let body = format!("{{\"pad\":\"{}\"}}", "y".repeat(10_000));
        respond(
            stream,
            "200 OK",
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        );
    });
    let err = capture_over(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        Protocol::default(),
        4096,
        Duration::from_secs(10),
    )
    .unwrap_err();
    assert!(matches!(err, Error::LineTooLong { limit: 4096 }), "{err}");
}

#[test]
fn a_404_to_a_session_request_ends_the_capture() {
    let peer = Peer::start(|request: &Request, stream: &mut TcpStream| {
        if request.rpc_method() == "tools/list" {
            return respond(stream, "404 Not Found", &[], b"");
        }
        json_server(request, stream);
    });
    let err = capture_over(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        Protocol::default(),
        DEFAULT_MAX_LINE,
        Duration::from_secs(10),
    )
    .unwrap_err();
    assert!(
        matches!(err, Error::SessionEnded { ref method } if method == "tools/list"),
        "{err}"
    );
}

#[test]
fn does_not_follow_a_redirect_and_names_only_its_origin() {
    let elsewhere = Peer::start(json_server);
    let target = format!("{}?key={SECRET}", elsewhere.url("/moved"));
    let peer = Peer::start(move |_request: &Request, stream: &mut TcpStream| {
        respond(
            stream,
            "307 Temporary Redirect",
            &[("Location", &target)],
            b"",
        );
    });
    let err = capture_over(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        Protocol::default(),
        DEFAULT_MAX_LINE,
        Duration::from_secs(10),
    )
    .unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(err, Error::Redirect { status: 307, .. }),
        "{message}"
    );
    assert!(
        message.contains(&format!("to \"{}\"", elsewhere.url(""))),
        "{message}"
    );
    assert!(
        !message.contains("/moved") && !message.contains("key="),
        "{message}"
    );
    assert!(elsewhere.requests().is_empty(), "the redirect was followed");
}

#[test]
fn times_out_on_a_server_that_never_answers() {
    let peer = Peer::start(|_request: &Request, stream: &mut TcpStream| {
        start_events(stream, &[]);
        // Headers, then nothing: the answer never comes (the connection stays open).
        thread::sleep(Duration::from_secs(5));
    });
    let err = capture_over(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        Protocol::default(),
        DEFAULT_MAX_LINE,
        Duration::from_millis(500),
    )
    .unwrap_err();
    assert!(
        matches!(err, Error::Timeout { ref method, .. } if method == "initialize"),
        "{err}"
    );
}

#[test]
fn a_dropped_transport_stops_reading_a_stream_of_keep_alives() {
    let ended = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&ended);
    let peer = Peer::start(move |_request: &Request, stream: &mut TcpStream| {
        start_events(stream, &[]);
        // Comments only, for up to 20 s: the client must hang up on its own.
        for _ in 0..400 {
            if stream.write_all(b": keep-alive\n\n").is_err() || stream.flush().is_err() {
                seen.fetch_add(1, Ordering::SeqCst);
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
    });
    let err = capture_over(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        Protocol::default(),
        DEFAULT_MAX_LINE,
        Duration::from_millis(300),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    for _ in 0..200 {
        if ended.load(Ordering::SeqCst) > 0 {
            return;
        }
        thread::sleep(Duration::from_millis(50));
    }
    panic!("the stream was still read 10 s after the transport was dropped");
}

#[test]
fn times_out_on_a_server_that_never_sends_its_headers() {
    let peer = Peer::start(|_request: &Request, _stream: &mut TcpStream| {
        thread::sleep(Duration::from_secs(5));
    });
    let err = capture_over(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        Protocol::default(),
        DEFAULT_MAX_LINE,
        Duration::from_millis(500),
    )
    .unwrap_err();
    assert!(
        matches!(err, Error::Timeout { ref method, .. } if method == "initialize"),
        "{err}"
    );
}

#[test]
fn an_https_url_speaks_tls_and_fails_against_plain_http() {
    // The TLS set-up (rustls, ring, the system's roots) runs; the handshake with a plain
    // HTTP peer fails as an HTTP error, without the URL's secrets.
    let peer = Peer::start(json_server);
    let url = format!("https://127.0.0.1:{}/mcp?key={SECRET}", peer.addr.port());
    let err = capture_over(
        &server(url, HttpKind::Streamable),
        Protocol::default(),
        DEFAULT_MAX_LINE,
        Duration::from_secs(10),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Http { .. }), "{err}");
    assert!(!err.to_string().contains(SECRET), "{err}");
    assert!(!format!("{err:?}").contains(SECRET), "{err:?}");
}

#[test]
fn refuses_a_url_that_is_not_http() {
    let err = HttpTransport::connect(
        &server(
            "ftp://example.invalid/mcp?key=abcdefgh".to_owned(),
            HttpKind::Streamable,
        ),
        http_options(DEFAULT_MAX_LINE, Duration::from_secs(1)),
    )
    .unwrap_err();
    assert!(matches!(err, Error::BadRemote { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "the url ftp://example.invalid is not an http or https URL"
    );
}

#[test]
fn never_shows_a_secret_the_server_echoes() {
    // In the body of an HTTP error: the body is not shown.
    let peer = Peer::start(|request: &Request, stream: &mut TcpStream| {
        let echoed = format!(
            "bad token: {}",
            request.header("authorization").unwrap_or("")
        );
        respond(stream, "401 Unauthorized", &[], echoed.as_bytes());
    });
    let err = capture_over(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        Protocol::default(),
        DEFAULT_MAX_LINE,
        Duration::from_secs(10),
    )
    .unwrap_err();
    assert!(
        matches!(err, Error::HttpStatus { status: 401, .. }),
        "{err}"
    );
    assert_secret_kept(&peer, &format!("{err} {err:?}"));

    // In a JSON-RPC error, and in a tool description: refused, never recorded.
    for tools_list in [false, true] {
        let peer = Peer::start(move |request: &Request, stream: &mut TcpStream| {
            let token = request.header("authorization").unwrap_or("").to_owned();
            let Some(mut answer) = mcp_answer(request) else {
                return json_server(request, stream);
            };
            if tools_list && request.rpc_method() == "tools/list" {
                answer["result"]["tools"][0]["description"] = token.into();
            } else if !tools_list {
                answer = serde_json::json!({"jsonrpc": "2.0", "id": answer["id"],
                    "error": {"code": -32000, "message": format!("denied {token}")}});
            }
            respond_json(stream, &[], &answer);
        });
        let err = capture_over(
            &server(peer.url("/mcp"), HttpKind::Streamable),
            Protocol::default(),
            DEFAULT_MAX_LINE,
            Duration::from_secs(10),
        )
        .unwrap_err();
        assert!(matches!(err, Error::SecretEchoed { .. }), "{err}");
        assert_secret_kept(&peer, &format!("{err} {err:?}"));
    }
}

#[test]
fn resumes_a_broken_event_stream_with_last_event_id() {
    let posts = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&posts);
    let peer = Peer::start(move |request: &Request, stream: &mut TcpStream| {
        match request.method.as_str() {
            "GET" if request.header("last-event-id") == Some("ev-7") => {
                // The resumed stream carries the pending answer to tools/list.
                let pending = serde_json::json!({"jsonrpc": "2.0", "id": 2,
                    "result": {"tools": [{"name": "late", "inputSchema": {"type": "object"}}]}});
                start_events(stream, &[]);
                let _ = write!(stream, "id: ev-8\ndata: {pending}\n\n");
            }
            "GET" => respond(stream, "405 Method Not Allowed", &[], b""),
            "DELETE" => respond(stream, "200 OK", &[], b""),
            _ if request.rpc_method() == "tools/list" => {
                seen.fetch_add(1, Ordering::SeqCst);
                // A priming event with an id and a retry time, then the stream breaks.
                start_events(stream, &[]);
                let _ = write!(stream, "id: ev-7\nretry: 10\ndata:\n\n");
            }
            _ => json_server(request, stream),
        }
    });
    let transport = HttpTransport::connect(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        http_options(DEFAULT_MAX_LINE, Duration::from_secs(10)),
    )
    .unwrap();
    let mut session = Session::open(
        transport,
        &options(Protocol::default(), Duration::from_secs(10)),
    )
    .unwrap();
    let tools = session.list_tools().unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(posts.load(Ordering::SeqCst), 1, "tools/list was sent again");
    let resumed = peer
        .requests()
        .into_iter()
        .find(|r| r.header("last-event-id").is_some())
        .expect("a resuming GET");
    assert_eq!(resumed.header("mcp-session-id"), Some("sess-1"));
}

/// A server answering tools/list as an event stream under `media`, directly (`resume`
/// false) or on the GET resuming a stream that broke before its answer.
fn tools_stream_under(media: &'static str, resume: bool) -> Peer {
    let asked = std::sync::Mutex::new(serde_json::Value::Null);
    Peer::start(
        move |request: &Request, stream: &mut TcpStream| match request.method.as_str() {
            "GET" if request.header("last-event-id").is_some() => {
                let id = asked.lock().unwrap().clone();
                let pending = serde_json::json!({"jsonrpc": "2.0", "id": id,
                    "result": {"tools": [{"name": "late", "inputSchema": {"type": "object"}}]}});
                respond(
                    stream,
                    "200 OK",
                    &[("Content-Type", media)],
                    format!("id: ev-8\ndata: {pending}\n\n").as_bytes(),
                );
            }
            "GET" => respond(stream, "405 Method Not Allowed", &[], b""),
            "DELETE" => respond(stream, "200 OK", &[], b""),
            _ if request.rpc_method() == "tools/list" && resume => {
                *asked.lock().unwrap() = request.json()["id"].clone();
                start_events(stream, &[]);
                let _ = write!(stream, "id: ev-7\nretry: 10\ndata:\n\n");
            }
            _ if request.rpc_method() == "tools/list" => {
                let answer = mcp_answer(request).unwrap();
                respond(
                    stream,
                    "200 OK",
                    &[("Content-Type", media)],
                    format!("data: {answer}\n\n").as_bytes(),
                );
            }
            _ => json_server(request, stream),
        },
    )
}

#[test]
fn refuses_an_answer_a_client_would_decode_by_another_charset() {
    // A client decoding an event stream by its charset (the Python SDK's reader does)
    // read other text than the capture, which read every answer as UTF-8.
    let list = |media: &'static str, resume: bool| {
        let peer = tools_stream_under(media, resume);
        capture_over(
            &server(peer.url("/mcp"), HttpKind::Streamable),
            Protocol::default(),
            DEFAULT_MAX_LINE,
            Duration::from_secs(10),
        )
    };
    for resume in [false, true] {
        for media in [
            "text/event-stream; charset=utf-7",
            "text/event-stream; charset=\"ISO-8859-1\"",
            "text/event-stream; charset=utf-8; charset=utf-16",
        ] {
            let err = list(media, resume).unwrap_err();
            assert!(
                matches!(err, Error::Decoding { refusal: Refusal::Charset, ref method }
                    if method.starts_with("tools/list")),
                "{media} {resume}: {err}"
            );
        }
        let held = list("text/event-stream; charset=UTF-8", resume).unwrap();
        assert!(!held.tools.is_empty());
    }
    // The event stream of the HTTP+SSE transport (2024-11-05) likewise.
    let peer = Peer::start(|request: &Request, stream: &mut TcpStream| {
        respond(
            stream,
            "200 OK",
            &[("Content-Type", "text/event-stream; charset=utf-7")],
            format!("event: endpoint\ndata: {}\n\n", request.target).as_bytes(),
        );
    });
    let err = HttpTransport::connect(
        &server(peer.url("/sse"), HttpKind::Sse),
        http_options(DEFAULT_MAX_LINE, Duration::from_secs(10)),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Decoding {
                refusal: Refusal::Charset,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_stream_ending_before_its_answer_without_an_id_is_an_error() {
    let peer = Peer::start(|request: &Request, stream: &mut TcpStream| {
        if request.rpc_method() == "initialize" {
            start_events(stream, &[]);
            let _ = write!(stream, ": nothing\n\n");
            return;
        }
        respond(stream, "405 Method Not Allowed", &[], b"");
    });
    let err = capture_over(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        Protocol::default(),
        DEFAULT_MAX_LINE,
        Duration::from_secs(10),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Closed { .. }), "{err}");
}

#[test]
fn speaks_2026_07_28_statelessly_with_the_mirrored_headers() {
    let peer = Peer::start(|request: &Request, stream: &mut TcpStream| {
        // A server that checks what the revision requires, as a modern server must.
        let body = request.json();
        let revision = &body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"];
        let ok = request.header("mcp-method") == body["method"].as_str()
            && request.header("mcp-protocol-version") == revision.as_str()
            && request.header("mcp-session-id").is_none();
        if !ok {
            return respond(stream, "400 Bad Request", &[], b"");
        }
        respond_json(stream, &[], &mcp_answer(request).unwrap());
    });
    let captured = capture_over(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        Protocol::Exact(Revision::V2026_07_28),
        DEFAULT_MAX_LINE,
        Duration::from_secs(10),
    )
    .unwrap();
    assert_eq!(names(&captured), ["add", "echo"]);
    assert_eq!(captured.reported_name.as_deref(), Some("modern"));
    assert!(peer.requests().iter().all(|r| r.method == "POST"));
}

#[test]
fn auto_falls_back_to_initialize_when_the_probe_is_refused_over_http() {
    // A 2025-11-25 server refuses a request without a session as the TypeScript SDK does:
    // HTTP 400 with a JSON-RPC error of no id.
    let peer = Peer::start(|request: &Request, stream: &mut TcpStream| {
        if request.rpc_method() == "server/discover" {
            let refusal = serde_json::json!({"jsonrpc": "2.0", "id": null,
                "error": {"code": -32000, "message": "Bad Request: Server not initialized"}});
            let body = refusal.to_string();
            return respond(
                stream,
                "400 Bad Request",
                &[("Content-Type", "application/json")],
                body.as_bytes(),
            );
        }
        json_server(request, stream);
    });
    let captured = capture_over(
        &server(peer.url("/mcp"), HttpKind::Streamable),
        Protocol::Auto,
        DEFAULT_MAX_LINE,
        Duration::from_secs(10),
    )
    .unwrap();
    assert_eq!(captured.protocol_version, Revision::V2025_11_25);
}

/// An HTTP+SSE server (2024-11-05): GET /sse names /message as its endpoint; answers go on
/// the stream.
fn legacy_server(endpoint: &'static str) -> Peer {
    let (tx, rx) = std::sync::mpsc::channel::<serde_json::Value>();
    let rx = std::sync::Mutex::new(rx);
    Peer::start(
        move |request: &Request, stream: &mut TcpStream| match request.method.as_str() {
            "GET" => {
                start_events(stream, &[]);
                let _ = write!(stream, "event: endpoint\ndata: {endpoint}\n\n");
                let _ = stream.flush();
                let rx = rx.lock().unwrap();
                while let Ok(answer) = rx.recv_timeout(Duration::from_secs(5)) {
                    let _ = write!(stream, "event: message\ndata: {answer}\n\n");
                    let _ = stream.flush();
                }
            }
            _ => {
                if let Some(answer) = mcp_answer(request) {
                    let _ = tx.send(answer);
                }
                respond(stream, "202 Accepted", &[], b"Accepted");
            }
        },
    )
}

#[test]
fn speaks_the_http_sse_transport_of_2024_11_05() {
    let peer = legacy_server("/message?sessionId=abc");
    let captured = capture_over(
        &server(peer.url("/sse"), HttpKind::Sse),
        Protocol::Exact(Revision::V2024_11_05),
        DEFAULT_MAX_LINE,
        Duration::from_secs(10),
    )
    .unwrap();
    assert_eq!(names(&captured), ["add", "echo"]);
    let posts: Vec<Request> = peer
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert!(
        posts.iter().all(|r| r.target == "/message?sessionId=abc"),
        "{posts:#?}"
    );
    assert_secret_kept(&peer, "");
}

#[test]
fn refuses_an_endpoint_on_another_origin() {
    let peer = legacy_server("http://127.0.0.2:9/steal");
    let err = HttpTransport::connect(
        &server(peer.url("/sse"), HttpKind::Sse),
        http_options(DEFAULT_MAX_LINE, Duration::from_secs(10)),
    )
    .unwrap_err();
    assert!(err.to_string().contains("another origin"), "{err}");
}

#[test]
fn detects_an_http_sse_server_when_no_type_is_configured() {
    // The legacy server answers POST on its stream URL with 405, as an HTTP+SSE server does.
    let inner = legacy_server("/message");
    let inner_url = inner.url("");
    let peer = Peer::start(move |request: &Request, stream: &mut TcpStream| {
        if request.method == "POST" && request.target == "/sse" {
            return respond(stream, "405 Method Not Allowed", &[], b"");
        }
        // Everything else is the legacy server's: relay by answering a redirect-free copy.
        let mut upstream = TcpStream::connect(inner_url.trim_start_matches("http://")).unwrap();
        let mut head = format!(
            "{} {} HTTP/1.1\r\nContent-Length: {}\r\n",
            request.method,
            request.target,
            request.body.len()
        );
        for (n, v) in &request.headers {
            if !n.eq_ignore_ascii_case("content-length") {
                head.push_str(&format!("{n}: {v}\r\n"));
            }
        }
        head.push_str("\r\n");
        upstream.write_all(head.as_bytes()).unwrap();
        upstream.write_all(&request.body).unwrap();
        let _ = std::io::copy(&mut upstream, stream);
    });
    let captured = capture_over(
        &server(peer.url("/sse"), HttpKind::Detect),
        Protocol::Exact(Revision::V2024_11_05),
        DEFAULT_MAX_LINE,
        Duration::from_secs(10),
    )
    .unwrap();
    assert_eq!(names(&captured), ["add", "echo"]);
}

// The reference server, over HTTP and over stdio.

fn everything_script() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../testdata/servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(
        path.exists(),
        "{} is missing: install the pinned reference servers with \
         `npm ci --prefix testdata/servers --ignore-scripts` (the step in .ci/run)",
        path.display()
    );
    path
}

/// server-everything listening on a free port, killed on drop.
struct Everything {
    child: Child,
    port: u16,
}

impl Everything {
    fn start(mode: &str) -> Self {
        let port = peer::free_port();
        let child = Command::new("node")
            .arg(everything_script())
            .arg(mode)
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start node");
        let server = Self { child, port };
        peer::wait_for_port(port);
        server
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn stdio_names() -> Vec<String> {
    let command = ServerCommand::new("node")
        .arg(everything_script())
        .arg("stdio");
    let connection = Connection::open(&command, DEFAULT_MAX_LINE).unwrap();
    let timeout = Duration::from_secs(30);
    let mut session = Session::open(connection, &options(Protocol::default(), timeout)).unwrap();
    let captured = capture(&mut session, NonZeroU32::new(1).unwrap()).unwrap();
    session.into_transport().shutdown().unwrap();
    names(&captured)
}

#[test]
fn server_everything_serves_the_same_tools_over_streamable_http_and_stdio() {
    let everything = Everything::start("streamableHttp");
    let timeout = Duration::from_secs(30);
    let over_http = capture_over(
        &server(everything.url("/mcp"), HttpKind::Streamable),
        Protocol::default(),
        DEFAULT_MAX_LINE,
        timeout,
    )
    .unwrap();
    assert!(over_http.agreed);
    assert_eq!(over_http.protocol_version, Revision::V2025_11_25);
    let http_names = names(&over_http);
    assert!(http_names.iter().any(|n| n == "echo"), "{http_names:?}");
    assert_eq!(http_names, stdio_names());
}

#[test]
fn server_everything_serves_the_same_tools_over_http_sse() {
    let everything = Everything::start("sse");
    let over_sse = capture_over(
        &server(everything.url("/sse"), HttpKind::Sse),
        Protocol::Exact(Revision::V2024_11_05),
        DEFAULT_MAX_LINE,
        Duration::from_secs(30),
    )
    .unwrap();
    assert_eq!(over_sse.protocol_version, Revision::V2024_11_05);
    assert_eq!(names(&over_sse), stdio_names());
}

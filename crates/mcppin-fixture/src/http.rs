//! The fixture over Streamable HTTP (`--http ADDR`): the same scripted behaviours as over
//! stdio, at the endpoint `/mcp`, with HTTPS when `--tls-cert` and `--tls-key` are given.
//!
//! `initialize` opens a session (`Mcp-Session-Id: fixture-session-N`), each with its own
//! counters; requests without a session id (2026-07-28) share one stateless server. Answers are
//! JSON, or SSE with `--sse` and whenever one request gets several messages (the delayed rug
//! pull's answer and its `notifications/tools/list_changed`). GET with a session id opens the
//! stream of server messages, which stays open and quiet after a first comment (405 without a
//! session id); DELETE ends a session. `--record` gets every body received, one line
//! each, plus `DELETE <id>` and `authorization: <value>` lines, so a test can prove what
//! reached the server and what never did.

use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http_body_util::channel::Channel;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;

use crate::{Reply, Script, Server};

/// The endpoint path.
const ENDPOINT: &str = "/mcp";

/// The body of an answer.
type Out = BoxBody<Bytes, std::convert::Infallible>;

/// The largest request body read.
const MAX_BODY: usize = 64 * 1024 * 1024;

struct Sessions {
    open: HashMap<String, Server<'static>>,
    stateless: Server<'static>,
    next: u64,
}

/// Serves `script` over HTTP on `addr` until killed.
pub(crate) fn run(script: Script, addr: &str) -> ExitCode {
    let script: &'static Script = Box::leak(Box::new(script));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => return fail(&format!("cannot start the runtime: {err}")),
    };
    match runtime.block_on(serve(script, addr)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => fail(&message),
    }
}

fn fail(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "mcppin-fixture: {message}");
    ExitCode::from(2)
}

async fn serve(script: &'static Script, addr: &str) -> Result<(), String> {
    let tls = match (&script.tls_cert, &script.tls_key) {
        (Some(cert), Some(key)) => Some(acceptor(cert, key)?),
        (None, None) => None,
        _ => return Err("--tls-cert and --tls-key go together".into()),
    };
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let _ = writeln!(
        std::io::stderr(),
        "fixture: listening on {scheme}://{local}{ENDPOINT}"
    );
    let sessions = Arc::new(Mutex::new(Sessions {
        open: HashMap::new(),
        stateless: Server::new(script),
        next: 0,
    }));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let sessions = Arc::clone(&sessions);
        let tls = tls.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let sessions = Arc::clone(&sessions);
                async move {
                    Ok::<_, std::convert::Infallible>(handle(script, &sessions, request).await)
                }
            });
            match tls {
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(stream).await {
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    }
                }
                None => {
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                }
            }
        });
    }
}

fn acceptor(
    cert: &std::path::Path,
    key: &std::path::Path,
) -> Result<tokio_rustls::TlsAcceptor, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|e| format!("{}: {e}", cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("{}: {e}", key.display()))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .map_err(|e| format!("the TLS certificate: {e}"))?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

fn record(script: &Script, line: &str) {
    if let Some(path) = &script.record {
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| writeln!(f, "{line}"));
    }
}

async fn handle(
    script: &'static Script,
    sessions: &Mutex<Sessions>,
    request: Request<Incoming>,
) -> Response<Out> {
    if request.uri().path() != ENDPOINT {
        return status(StatusCode::NOT_FOUND);
    }
    if let Some(auth) = request.headers().get(header::AUTHORIZATION) {
        record(
            script,
            &format!(
                "authorization: {}",
                String::from_utf8_lossy(auth.as_bytes())
            ),
        );
    }
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let lock = || sessions.lock().unwrap_or_else(PoisonError::into_inner);
    match *request.method() {
        Method::POST => {}
        Method::DELETE => {
            let Some(id) = session else {
                return status(StatusCode::BAD_REQUEST);
            };
            record(script, &format!("DELETE {id}"));
            return match lock().open.remove(&id) {
                Some(_) => status(StatusCode::OK),
                None => status(StatusCode::NOT_FOUND),
            };
        }
        Method::GET => {
            let Some(id) = session else {
                return status(StatusCode::METHOD_NOT_ALLOWED);
            };
            record(script, &format!("GET {id}"));
            if !lock().open.contains_key(&id) {
                return status(StatusCode::NOT_FOUND);
            }
            return quiet_stream();
        }
        _ => return status(StatusCode::METHOD_NOT_ALLOWED),
    }
    let Ok(body) = Limited::new(request.into_body(), MAX_BODY).collect().await else {
        return status(StatusCode::PAYLOAD_TOO_LARGE);
    };
    let body = body.to_bytes();
    record(script, &String::from_utf8_lossy(&body));
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return status(StatusCode::BAD_REQUEST);
    };
    let method = message.get("method").and_then(Value::as_str).unwrap_or("");
    let (reply, assigned) = {
        let mut sessions = lock();
        match &session {
            Some(id) => match sessions.open.get_mut(id) {
                Some(server) => (server.handle(&message), None),
                None => return session_not_found(),
            },
            None if method == "initialize" => {
                let mut server = Server::new(script);
                let reply = server.handle(&message);
                sessions.next += 1;
                let id = format!("fixture-session-{}", sessions.next);
                sessions.open.insert(id.clone(), server);
                (reply, Some(id))
            }
            None => (sessions.stateless.handle(&message), None),
        }
    };
    let mut response = match reply {
        Reply::Nothing => status(StatusCode::ACCEPTED),
        Reply::Send(answer) if !script.sse => json(answer.to_string()),
        Reply::Send(answer) => events(&[answer.to_string()]),
        Reply::Many(answers) => {
            let texts: Vec<String> = answers.iter().map(Value::to_string).collect();
            events(&texts)
        }
        Reply::Raw(text) if !script.sse => json(text),
        Reply::Raw(text) => events(&[text]),
        Reply::Die(why) => {
            let _ = writeln!(std::io::stderr(), "fixture: {why}");
            status(StatusCode::INTERNAL_SERVER_ERROR)
        }
    };
    if let Some(id) = assigned
        && let Ok(value) = HeaderValue::from_str(&id)
    {
        response.headers_mut().insert("mcp-session-id", value);
    }
    response
}

/// The answer to a request in a session the server does not hold (never opened, or ended):
/// 404 with a JSON-RPC error, as the TypeScript SDK's server writes it. A client reading 404
/// starts a new session.
fn session_not_found() -> Response<Out> {
    let mut response = json(
        r#"{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}"#
            .to_owned(),
    );
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

fn status(code: StatusCode) -> Response<Out> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = code;
    response
}

fn json(text: String) -> Response<Out> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// An SSE answer: one `message` event per message, in order.
fn events(messages: &[String]) -> Response<Out> {
    let mut text = String::new();
    for message in messages {
        text.push_str("event: message\ndata: ");
        text.push_str(message);
        text.push_str("\n\n");
    }
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
}

/// The stream of server messages: a comment, then nothing, open until the client leaves or
/// the fixture is stopped.
fn quiet_stream() -> Response<Out> {
    let (mut sender, body) = Channel::<Bytes>::new(1);
    tokio::spawn(async move {
        if sender
            .send_data(Bytes::from_static(b": open\n\n"))
            .await
            .is_ok()
        {
            std::future::pending::<()>().await;
        }
    });
    let mut response = Response::new(body.boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
}

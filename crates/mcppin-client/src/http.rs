//! MCP over HTTP for capture: Streamable HTTP and the HTTP+SSE transport of 2024-11-05, as a
//! [`Transport`] under the same [`crate::Session`] as stdio.
//!
//! - Streamable HTTP, 2025-03-26 to 2025-11-25 ("Transports", "Streamable HTTP"): every message
//!   is a POST with `Accept: application/json, text/event-stream`; a request is answered with a
//!   JSON body or an event stream, a notification or response with 202. The `Mcp-Session-Id`
//!   the answer to `initialize` sets is sent on every later request, `MCP-Protocol-Version`
//!   once the revision is agreed. After `notifications/initialized` the optional GET stream is
//!   opened; [`HttpTransport::close`] ends the session with DELETE. An event stream that breaks
//!   before its answer is resumed with GET and `Last-Event-ID`.
//! - Streamable HTTP, 2026-07-28: no session, no GET stream, no resumption; every POST carries
//!   `MCP-Protocol-Version` (the body's `_meta` revision), `Mcp-Method` and, for `tools/call`,
//!   `resources/read` and `prompts/get`, `Mcp-Name` (Base64 sentinel form when the value is not
//!   plain ASCII).
//! - HTTP+SSE, 2024-11-05: a GET opens an event stream whose first `endpoint` event names the
//!   URL to POST to (on the same origin, or it is refused); answers arrive on the stream.
//!
//! Bounds: each message (JSON body or event data) is at most the `max_message` of
//! [`HttpOptions`], like a stdio line; connecting and every read wait at most its `timeout`;
//! redirects are never followed (the error names only the origin of the location).
//!
//! # Security
//!
//! Configured header values and the URL's query and userinfo are secrets ([`Secrets`]): they go
//! only to the configured origin, are marked sensitive for the HTTP client, are never part of
//! an error, and an answer that repeats one is refused ([`Error::SecretEchoed`]) rather than
//! shown or recorded. Bodies of HTTP error answers are never shown.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use base64::Engine as _;
use mcppin_core::http::{Refusal, check_decoding};
use mcppin_core::sse::{Event, Reader};
use mcppin_core::{Kind, Object, Strictness, Value, parse_with};
use reqwest::blocking::{Client, Response};
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use reqwest::{StatusCode, Url};

use crate::Error;
use crate::config::{HttpKind, HttpServer};
use crate::revision::Revision;
use crate::session::META_PROTOCOL_VERSION;
use crate::transport::{Received, Transport};

/// The `Accept` header of every POST (both answer forms must be accepted).
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// The session header of Streamable HTTP (2025-03-26 to 2025-11-25).
const SESSION_ID: &str = "mcp-session-id";
/// The revision header of Streamable HTTP.
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// How many times an event stream that broke before its answer is resumed.
const MAX_RESUMES: u32 = 3;
/// The longest wait before resuming, whatever `retry:` asks.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(5);
/// Secrets shorter than this are not searched for in answers (one or two characters would
/// match unrelated text); they are still never shown.
const MIN_SECRET_LEN: usize = 6;
/// How many answers wait for the session at most; readers block beyond it.
const QUEUE: usize = 16;

/// Settings of an HTTP link.
#[derive(Clone, Copy, Debug)]
pub struct HttpOptions {
    /// The largest message (JSON body or event data), in bytes.
    pub max_message: usize,
    /// How long connecting, and each read of an answer, may take.
    pub timeout: Duration,
}

/// The secret parts of a remote server's configuration: header values (and the last word of
/// them, so a bearer token is found alone), the URL's userinfo and its query (whole, and each
/// value).
#[derive(Clone, Default)]
pub struct Secrets {
    values: Vec<String>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} values)", self.values.len())
    }
}

impl Secrets {
    /// The secrets of an expanded server entry.
    #[must_use]
    pub fn of(server: &HttpServer) -> Self {
        let mut values = Vec::new();
        for value in server.headers.values() {
            values.push(value.clone());
            // `Bearer TOKEN`, `Basic CREDENTIALS`: the credential alone too, not the scheme.
            if let Some((_, credential)) = value.trim().rsplit_once(char::is_whitespace) {
                values.push(credential.to_owned());
            }
        }
        if let Ok(url) = Url::parse(&server.url) {
            values.push(url.username().to_owned());
            values.extend(url.password().map(str::to_owned));
            if let Some(query) = url.query() {
                values.push(query.to_owned());
                for pair in query.split('&') {
                    values.push(pair.to_owned());
                    if let Some((_, value)) = pair.split_once('=') {
                        values.push(value.to_owned());
                    }
                }
                values.extend(url.query_pairs().map(|(_, v)| v.into_owned()));
            }
        }
        values.retain(|v| v.len() >= MIN_SECRET_LEN);
        // Longest first, so that redaction replaces a whole value before a word of it.
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        values.dedup();
        Self { values }
    }

    /// Whether `bytes` contain any secret: as they are, or, when they are JSON with escapes,
    /// in a string or member name once its escapes are decoded (`\u0074ok...` is the token
    /// to every reader of the answer, and to the manifest written from it).
    #[must_use]
    pub fn found_in(&self, bytes: &[u8]) -> bool {
        if self.values.is_empty() {
            return false;
        }
        if self.in_text(bytes) {
            return true;
        }
        if memchr::memchr(b'\\', bytes).is_none() {
            return false;
        }
        let Ok(value) = parse_with(bytes, Strictness::Relaxed) else {
            return false;
        };
        let mut stack = vec![&value];
        while let Some(value) = stack.pop() {
            match value.kind() {
                Kind::String(text) if self.in_text(text.as_bytes()) => return true,
                Kind::Array(items) => stack.extend(items.iter()),
                Kind::Object(object) => {
                    for (name, member) in object.iter() {
                        if self.in_text(name.as_bytes()) {
                            return true;
                        }
                        stack.push(member);
                    }
                }
                _ => {}
            }
        }
        false
    }

    fn in_text(&self, bytes: &[u8]) -> bool {
        self.values
            .iter()
            .any(|s| memchr::memmem::find(bytes, s.as_bytes()).is_some())
    }

    /// `text` with every secret replaced by `<redacted>`: a last guard for text shown to a
    /// user, which should hold none in the first place.
    #[must_use]
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.values {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), "<redacted>");
            }
        }
        out
    }
}

pub use crate::redact::{origin, redact_url};

/// A link to a remote MCP server: a [`Transport`] over HTTP.
///
/// `send` hands the message to a thread that POSTs the messages one after the other, in the
/// order sent; the answers (JSON bodies, the events of the streams, and the errors of the
/// requests) are what `receive` returns. Waiting for an answer is thus bounded by the
/// session's timeout alone, and a slow server is seen waiting, as over stdio.
///
/// It is blocking: call it from a thread, not from inside an async runtime (the HTTP client
/// runs one of its own, which cannot be started or stopped from within another).
#[derive(Debug)]
pub struct HttpTransport {
    shared: Arc<Shared>,
    jobs: SyncSender<(Vec<u8>, Outgoing)>,
    incoming: Receiver<Result<Vec<u8>, Error>>,
}

/// The thread that POSTs the messages, owning what the order of messages decides.
#[derive(Debug)]
struct Poster {
    shared: Arc<Shared>,
    mode: Mode,
    /// Whether a POST was answered yet (the fallback to HTTP+SSE is decided on the first).
    answered: bool,
    get_stream: bool,
}

#[derive(Debug)]
enum Mode {
    /// Streamable HTTP; `detect` falls back to HTTP+SSE on the first POST.
    Streamable { detect: bool },
    /// HTTP+SSE (2024-11-05), posting to the endpoint the stream named.
    Legacy { endpoint: Url },
}

/// What the reader threads share with the transport.
struct Shared {
    client: Client,
    url: Url,
    headers: HeaderMap,
    secrets: Secrets,
    options: HttpOptions,
    session_id: Mutex<Option<HeaderValue>>,
    /// The revision agreed by `initialize`, for `MCP-Protocol-Version`.
    revision: Mutex<Option<Revision>>,
    /// Whether the link speaks HTTP+SSE.
    legacy: AtomicBool,
    /// Set when the transport is dropped: reader threads stop at their next read, even on a
    /// stream that only ever sends keep-alive comments.
    dropped: AtomicBool,
    /// The SHA-256 of the public key of the certificate the server last presented (HTTPS).
    server_key: Mutex<Option<String>>,
    sender: SyncSender<Result<Vec<u8>, Error>>,
}

impl HttpTransport {
    /// Connects to `server` (variables already expanded). For HTTP+SSE (`type: sse`) the event
    /// stream is opened here and its endpoint awaited; Streamable HTTP connects on the first
    /// message.
    ///
    /// # Errors
    ///
    /// [`Error::BadRemote`] for a URL that is not `http` or `https` or a header that is not
    /// valid HTTP (named, its value never shown); for HTTP+SSE, the errors of opening the
    /// stream.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::collections::BTreeMap;
    /// use std::num::NonZeroU32;
    /// use std::time::Duration;
    /// use mcppin_client::{ClientInfo, HttpKind, HttpOptions, HttpServer, HttpTransport,
    ///                     Protocol, Session, SessionOptions, capture};
    ///
    /// let server = HttpServer {
    ///     url: "https://mcp.example.com/mcp".to_owned(),
    ///     kind: HttpKind::Streamable,
    ///     headers: BTreeMap::from([("Authorization".to_owned(), "Bearer t0ken".to_owned())]),
    /// };
    /// let timeout = Duration::from_secs(30);
    /// let options = HttpOptions { max_message: mcppin_client::DEFAULT_MAX_LINE, timeout };
    /// let transport = HttpTransport::connect(&server, options)?;
    /// let client = ClientInfo { name: "me".to_owned(), version: "1".to_owned() };
    /// let capabilities = mcppin_core::Object::new();
    /// let options = SessionOptions {
    ///     protocol: Protocol::Auto,
    ///     timeout,
    ///     start_timeout: timeout,
    ///     client,
    ///     capabilities,
    /// };
    /// let mut session = Session::open(transport, &options)?;
    /// let surface = capture(&mut session, NonZeroU32::new(2).expect("two"))?;
    /// session.into_transport().close()?; // DELETE, when the server gave a session
    /// # let _ = surface;
    /// # Ok::<(), mcppin_client::Error>(())
    /// ```
    pub fn connect(server: &HttpServer, options: HttpOptions) -> Result<Self, Error> {
        let url = Url::parse(&server.url).map_err(|e| Error::BadRemote {
            problem: format!("the url is not a URL: {e}"),
        })?;
        if !matches!(url.scheme(), "http" | "https") || !url.has_host() {
            return Err(Error::BadRemote {
                problem: format!(
                    "the url {} is not an http or https URL",
                    origin(&server.url)
                ),
            });
        }
        let mut headers = HeaderMap::new();
        for (name, value) in &server.headers {
            let bad = || Error::BadRemote {
                problem: format!(
                    "header {}: not a valid HTTP header name and value",
                    crate::error::quoted(name)
                ),
            };
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
            let mut value = HeaderValue::from_str(value).map_err(|_| bad())?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let client = client(options)?;
        let (sender, incoming) = mpsc::sync_channel(QUEUE);
        let shared = Arc::new(Shared {
            client,
            url,
            headers,
            secrets: Secrets::of(server),
            options,
            session_id: Mutex::new(None),
            revision: Mutex::new(None),
            legacy: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
            server_key: Mutex::new(None),
            sender,
        });
        let mode = match server.kind {
            HttpKind::Streamable => Mode::Streamable { detect: false },
            HttpKind::Detect => Mode::Streamable { detect: true },
            HttpKind::Sse => Mode::Legacy {
                endpoint: open_legacy_stream(&shared)?,
            },
        };
        let (jobs, queued) = mpsc::sync_channel(QUEUE);
        let poster = Poster {
            shared: Arc::clone(&shared),
            mode,
            answered: false,
            get_stream: false,
        };
        thread::spawn(move || poster.run(&queued));
        Ok(Self {
            shared,
            jobs,
            incoming,
        })
    }

    /// The SHA-256 (lowercase hex) of the public key (`SubjectPublicKeyInfo`) of the
    /// certificate the server presented on the latest HTTPS answer, once there was one
    /// ([`crate::artifact::spki_sha256`]); `None` over plain HTTP.
    #[must_use]
    pub fn server_key(&self) -> Option<String> {
        self.shared
            .server_key
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether the link speaks HTTP+SSE (configured, or detected on the first POST).
    #[must_use]
    pub fn is_legacy(&self) -> bool {
        self.shared.legacy.load(Ordering::SeqCst)
    }

    /// Ends the session: DELETE with the `Mcp-Session-Id`, when the server gave one (a 405
    /// means the server does not let clients end sessions, which is allowed).
    ///
    /// # Errors
    ///
    /// [`Error::Http`] when the request fails, [`Error::HttpStatus`] for another error status.
    pub fn close(&mut self) -> Result<(), Error> {
        let Some(session) = self.shared.session() else {
            return Ok(());
        };
        let mut request = self
            .shared
            .client
            .delete(self.shared.url.clone())
            .headers(self.shared.headers.clone())
            .header(SESSION_ID, session);
        if let Some(revision) = self.shared.revision() {
            request = request.header(PROTOCOL_VERSION, revision.as_str());
        }
        let response = request
            .send()
            .map_err(|e| http_error("ending the session", e))?;
        let status = response.status();
        if status.is_success() || status == StatusCode::METHOD_NOT_ALLOWED {
            Ok(())
        } else {
            Err(Error::HttpStatus {
                method: "DELETE (ending the session)".to_owned(),
                status: status.as_u16(),
            })
        }
    }
}

impl Poster {
    /// POSTs each message in turn; an error goes to the session as its next answer.
    ///
    /// A request after the first is POSTed from a thread of its own: its answer may wait for
    /// the client's answer to a request of the server (a `ping` on the GET stream), which the
    /// session sends meanwhile. Notifications, responses and the first request (which
    /// decides the session and the transport) are POSTed here, in order.
    fn run(mut self, jobs: &Receiver<(Vec<u8>, Outgoing)>) {
        while let Ok((body, out)) = jobs.recv() {
            let what = out.what();
            let request = out.id.is_some() && out.method.is_some();
            let posted = match self.mode {
                Mode::Streamable { .. } if request && self.answered => {
                    let shared = Arc::clone(&self.shared);
                    thread::spawn(move || {
                        if let Err(err) = post_streamable(&shared, &body, &out, false) {
                            shared.deliver(Err(err), &out.what());
                        }
                    });
                    Ok(())
                }
                Mode::Streamable { detect } => {
                    let first = !self.answered;
                    self.answered = true;
                    match post_streamable(&self.shared, &body, &out, detect && first) {
                        Ok(Fallback::Stay) => {
                            let legacy_era = out.revision != Some(Revision::V2026_07_28);
                            if out.method.as_deref() == Some("notifications/initialized")
                                && legacy_era
                            {
                                self.open_get_stream();
                            }
                            Ok(())
                        }
                        Ok(Fallback::Legacy(endpoint)) => {
                            self.shared.legacy.store(true, Ordering::SeqCst);
                            self.mode = Mode::Legacy { endpoint };
                            self.post_legacy(&body, &out)
                        }
                        Err(err) => Err(err),
                    }
                }
                Mode::Legacy { .. } => self.post_legacy(&body, &out),
            };
            if let Err(err) = posted
                && !self.shared.deliver(Err(err), &what)
            {
                return;
            }
        }
    }

    fn post_legacy(&mut self, body: &[u8], out: &Outgoing) -> Result<(), Error> {
        let Mode::Legacy { endpoint } = &self.mode else {
            return Ok(());
        };
        let response = self
            .shared
            .client
            .post(endpoint.clone())
            .headers(self.shared.headers.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.to_vec())
            .send()
            .map_err(|e| send_error(&out.what(), e, self.shared.options.timeout))?;
        self.shared.note_certificate(&response);
        let status = response.status();
        if status.is_redirection() {
            return Err(redirect(&out.what(), &response));
        }
        if !status.is_success() {
            return Err(Error::HttpStatus {
                method: out.what(),
                status: status.as_u16(),
            });
        }
        // The answer comes on the event stream; the body ("Accepted") is read and dropped.
        let _ = read_bounded(response, self.shared.options.max_message, &out.what());
        Ok(())
    }

    /// Opens the GET stream of a session (2025-03-26 to 2025-11-25): the server may send
    /// requests and notifications on it. A 405 means the server offers none.
    fn open_get_stream(&mut self) {
        if self.get_stream {
            return;
        }
        self.get_stream = true;
        let shared = Arc::clone(&self.shared);
        let revision = shared.revision();
        thread::spawn(move || {
            let mut request = shared
                .client
                .get(shared.url.clone())
                .headers(shared.headers.clone())
                .header(header::ACCEPT, "text/event-stream");
            if let Some(session) = shared.session() {
                request = request.header(SESSION_ID, session);
            }
            if let Some(revision) = revision {
                request = request.header(PROTOCOL_VERSION, revision.as_str());
            }
            let Ok(response) = request.send() else {
                return;
            };
            if response.status() != StatusCode::OK || !is_event_stream(&response) {
                return;
            }
            // Messages on this stream are requests and notifications only; a broken stream
            // ends it quietly (it is optional, and nothing waits on it).
            let mut decoder = Events::new(shared.options.max_message);
            let _ = pump(&shared, response, &mut decoder, "the GET stream", |_| false);
        });
    }
}

/// What the first POST of a link without a `type` decided.
enum Fallback {
    /// Streamable HTTP it is.
    Stay,
    /// An HTTP+SSE server: its stream is open, POST to this endpoint.
    Legacy(Url),
}

/// POSTs one message over Streamable HTTP and passes its answer on (a JSON body now, the
/// events of a stream from a reader thread). With `detect`, an HTTP 400, 404 or 405 without a
/// JSON-RPC error opens the HTTP+SSE stream instead (2025-03-26, "Backwards Compatibility").
fn post_streamable(
    shared: &Arc<Shared>,
    body: &[u8],
    out: &Outgoing,
    detect: bool,
) -> Result<Fallback, Error> {
    let mut request = shared
        .client
        .post(shared.url.clone())
        .headers(shared.headers.clone())
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, ACCEPT_BOTH);
    let modern = out.revision == Some(Revision::V2026_07_28);
    if modern {
        request = request.header(PROTOCOL_VERSION, Revision::V2026_07_28.as_str());
        if let Some(method) = &out.method {
            request = request.header("mcp-method", header_safe(method));
        }
        if let Some(name) = &out.name {
            request = request.header("mcp-name", header_safe(name));
        }
    } else {
        if let Some(revision) = shared.revision() {
            request = request.header(PROTOCOL_VERSION, revision.as_str());
        }
        if let Some(session) = shared.session() {
            request = request.header(SESSION_ID, session);
        }
    }
    let response = request
        .body(body.to_vec())
        .send()
        .map_err(|e| send_error(&out.what(), e, shared.options.timeout))?;
    shared.note_certificate(&response);
    let status = response.status();
    if status.is_redirection() {
        return Err(redirect(&out.what(), &response));
    }
    if status.is_client_error() || status.is_server_error() {
        if status == StatusCode::NOT_FOUND && shared.session().is_some() && !modern {
            return Err(Error::SessionEnded { method: out.what() });
        }
        let error = json_rpc_error(response, shared.options.max_message);
        match (error, &out.id) {
            (Some(error), Some(id)) => {
                let answer = answer_with_error(id, error)?;
                shared.deliver(Ok(answer), &out.what());
                return Ok(Fallback::Stay);
            }
            (None, _) if detect && matches!(status.as_u16(), 400 | 404 | 405) => {
                return open_legacy_stream(shared).map(Fallback::Legacy);
            }
            _ => {
                return Err(Error::HttpStatus {
                    method: out.what(),
                    status: status.as_u16(),
                });
            }
        }
    }
    if !modern
        && let Some(session) = response.headers().get(SESSION_ID)
        && shared.session().is_none()
    {
        if !session.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b)) {
            return Err(Error::Protocol {
                method: out.what(),
                problem: "an Mcp-Session-Id that is not visible ASCII",
            });
        }
        let mut session = session.clone();
        session.set_sensitive(true);
        *shared
            .session_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(session);
    }
    if out.id.is_none() || out.method.is_none() {
        // A notification or a response: 202 and no body (any body is ignored).
        return Ok(Fallback::Stay);
    }
    if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
        return Err(Error::Protocol {
            method: out.what(),
            problem: "HTTP 202 without an answer to a request",
        });
    }
    let media = media(&response).map_err(|refusal| Error::Decoding {
        method: out.what(),
        refusal,
    })?;
    match media.as_str() {
        "application/json" => {
            let answer = read_bounded(response, shared.options.max_message, &out.what())?;
            shared.deliver(Ok(answer), &out.what());
            Ok(Fallback::Stay)
        }
        "text/event-stream" => {
            let reader = StreamReader {
                shared: Arc::clone(shared),
                method: out.what(),
                awaited: out.id.clone(),
                resumable: !modern,
            };
            thread::spawn(move || reader.run(response));
            Ok(Fallback::Stay)
        }
        _ => Err(Error::Protocol {
            method: out.what(),
            problem: "an answer that is neither application/json nor text/event-stream",
        }),
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        self.shared.dropped.store(true, Ordering::SeqCst);
    }
}

impl Transport for HttpTransport {
    fn send(&mut self, message: &[u8]) -> Result<(), Error> {
        let out = Outgoing::parse(message);
        self.jobs
            .send((message.to_vec(), out))
            .map_err(|_| Error::Closed {
                doing: "sending to the server (the sending thread ended)".to_owned(),
            })
    }

    fn receive(&mut self, timeout: Duration) -> Result<Received, Error> {
        match self.incoming.recv_timeout(timeout) {
            Ok(next) => next.map(Received::Line),
            Err(RecvTimeoutError::Timeout) => Ok(Received::TimedOut),
            // The transport holds a sender itself: never disconnected while it lives.
            Err(RecvTimeoutError::Disconnected) => Ok(Received::Closed),
        }
    }

    fn agreed(&mut self, revision: Revision) {
        *self
            .shared
            .revision
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(revision);
    }
}

impl std::fmt::Debug for Shared {
    /// The URL without its secret parts; header names only.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("origin", &origin(self.url.as_str()))
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// Keeps the key of the certificate `response` came over, when it came over TLS.
    fn note_certificate(&self, response: &Response) {
        let key = response
            .extensions()
            .get::<reqwest::tls::TlsInfo>()
            .and_then(reqwest::tls::TlsInfo::peer_certificate)
            .and_then(crate::artifact::spki_sha256);
        if key.is_some() {
            *self
                .server_key
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = key;
        }
    }

    fn session(&self) -> Option<HeaderValue> {
        self.session_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn revision(&self) -> Option<Revision> {
        *self.revision.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Passes a message from a stream to the session; `false` when the session is gone.
    fn deliver(&self, message: Result<Vec<u8>, Error>, method: &str) -> bool {
        let message = match message {
            Ok(m) if self.secrets.found_in(&m) => Err(Error::SecretEchoed {
                method: method.to_owned(),
            }),
            other => other,
        };
        self.sender.send(message).is_ok()
    }
}

/// What the transport needs to know of an outgoing message (built by the session, so always
/// well-formed; anything unreadable is sent as it is, as a notification would be).
#[derive(Debug, Default)]
struct Outgoing {
    method: Option<String>,
    id: Option<Value>,
    /// `params.name` or `params.uri` of `tools/call`, `prompts/get`, `resources/read`.
    name: Option<String>,
    /// The revision in `params._meta` (2026-07-28 requests).
    revision: Option<Revision>,
}

impl Outgoing {
    fn parse(message: &[u8]) -> Self {
        let Ok(value) = parse_with(message, Strictness::Relaxed) else {
            return Self::default();
        };
        let method = value
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let params = value.get("params");
        let name = match method.as_deref() {
            Some("tools/call" | "prompts/get") => params.and_then(|p| p.get("name")),
            Some("resources/read") => params.and_then(|p| p.get("uri")),
            _ => None,
        }
        .and_then(Value::as_str)
        .map(str::to_owned);
        let revision = params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .and_then(Value::as_str)
            .and_then(|r| r.parse().ok());
        Self {
            method,
            id: value.get("id").cloned(),
            name,
            revision,
        }
    }

    /// How the message is named in errors: its method, or "a response".
    fn what(&self) -> String {
        self.method
            .clone()
            .unwrap_or_else(|| "a response to the server".to_owned())
    }
}

/// Reads the event stream that answers one POST, resuming it once broken when it can.
struct StreamReader {
    shared: Arc<Shared>,
    method: String,
    /// The id of the request the stream answers.
    awaited: Option<Value>,
    resumable: bool,
}

impl StreamReader {
    fn run(self, response: Response) {
        let mut decoder = Events::new(self.shared.options.max_message);
        let awaited = self.awaited.clone();
        let answers = |data: &[u8]| is_answer_to(data, awaited.as_ref());
        let mut outcome = pump(&self.shared, response, &mut decoder, &self.method, answers);
        let mut resumes = 0;
        loop {
            let cause = match outcome {
                Pumped::Answered | Pumped::SessionGone => return,
                Pumped::Failed(err) => {
                    // A message too long or an echoed secret: the stream is not resumed.
                    let _ = self.shared.deliver(Err(err), &self.method);
                    return;
                }
                Pumped::Ended(cause) => cause,
            };
            let last_id = decoder.last_event_id();
            let Some(last_id) = last_id.filter(|_| self.resumable && resumes < MAX_RESUMES) else {
                let err = match cause {
                    Some(source) => {
                        http_error(&format!("reading the answer to {}", self.method), source)
                    }
                    None => Error::Closed {
                        doing: format!(
                            "waiting for the answer to {} (its event stream ended first)",
                            self.method
                        ),
                    },
                };
                let _ = self.shared.deliver(Err(err), &self.method);
                return;
            };
            resumes += 1;
            thread::sleep(decoder.retry().unwrap_or_default().min(MAX_RETRY_WAIT));
            let mut request = self
                .shared
                .client
                .get(self.shared.url.clone())
                .headers(self.shared.headers.clone())
                .header(header::ACCEPT, "text/event-stream")
                .header("last-event-id", last_id);
            if let Some(session) = self.shared.session() {
                request = request.header(SESSION_ID, session);
            }
            if let Some(revision) = self.shared.revision() {
                request = request.header(PROTOCOL_VERSION, revision.as_str());
            }
            outcome = match request.send() {
                Ok(response)
                    if response.status() == StatusCode::OK && is_event_stream(&response) =>
                {
                    // A fresh decoder: the new stream starts at a line boundary; the last id
                    // carries over for a further resumption.
                    let mut next = Events::new(self.shared.options.max_message);
                    let pumped = pump(&self.shared, response, &mut next, &self.method, answers);
                    if next.last_event_id().is_some() {
                        decoder = next;
                    }
                    pumped
                }
                Ok(response) => Pumped::Failed(match media(&response) {
                    Err(refusal) if response.status() == StatusCode::OK => Error::Decoding {
                        method: format!("{} (resuming its event stream)", self.method),
                        refusal,
                    },
                    _ => Error::HttpStatus {
                        method: format!("{} (resuming its event stream)", self.method),
                        status: response.status().as_u16(),
                    },
                }),
                Err(source) => Pumped::Ended(Some(source)),
            };
        }
    }
}

/// How reading a stream ended.
enum Pumped {
    /// The awaited answer was delivered.
    Answered,
    /// The session no longer listens.
    SessionGone,
    /// The stream ended (cleanly, or by a read error) before the answer.
    Ended(Option<reqwest::Error>),
    /// A bound was passed or a secret echoed: nothing more is read.
    Failed(Error),
}

/// The slack of the event reader's bound over the message bound: room for the field names,
/// line ends, and the `id`, `event` and `retry` fields of an event whose data is a message of
/// the largest size allowed.
const EVENT_SLACK: usize = 4096;

/// One event a client acts on: it had `data`.
struct Dispatched {
    /// The event type; `message` when the event named none.
    kind: String,
    /// The data: the `data` lines joined with LF.
    data: Vec<u8>,
}

/// The events of a stream, read by [`Reader`] (docs/export.md, "Remote servers"): events with
/// data only, and none whose data exceeds the message bound.
struct Events {
    reader: Reader,
    max_message: usize,
    read: Vec<Event>,
    ready: VecDeque<Dispatched>,
}

impl Events {
    fn new(max_message: usize) -> Self {
        Self {
            reader: Reader::new(max_message.saturating_add(EVENT_SLACK)),
            max_message,
            read: Vec::new(),
            ready: VecDeque::new(),
        }
    }

    /// Reads the next bytes of the stream.
    ///
    /// [`Error::LineTooLong`] when an event's data, or a line or an event, passes the bound;
    /// nothing more may be read then.
    fn push(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let limit = self.max_message;
        self.reader
            .feed(bytes, &mut self.read)
            .map_err(|_| Error::LineTooLong { limit })?;
        for event in self.read.drain(..) {
            let Event::Message(message) = event else {
                continue; // a comment (keep-alive)
            };
            let Some(data) = message.data else {
                continue; // an id or a retry time alone: nothing to pass on
            };
            if data.len() > limit {
                return Err(Error::LineTooLong { limit });
            }
            let kind = match message.event {
                Some(kind) if !kind.is_empty() => String::from_utf8_lossy(&kind).into_owned(),
                _ => "message".to_owned(),
            };
            self.ready.push_back(Dispatched { kind, data });
        }
        Ok(())
    }

    fn next_event(&mut self) -> Option<Dispatched> {
        self.ready.pop_front()
    }

    /// The id to resume the stream with (`Last-Event-ID`).
    fn last_event_id(&self) -> Option<String> {
        self.reader
            .last_event_id()
            .map(|id| String::from_utf8_lossy(id).into_owned())
    }

    fn retry(&self) -> Option<Duration> {
        self.reader.retry()
    }
}

/// Reads events from `response` and passes their data on, until `done` says a message was the
/// awaited one.
fn pump(
    shared: &Shared,
    mut response: Response,
    decoder: &mut Events,
    method: &str,
    done: impl Fn(&[u8]) -> bool,
) -> Pumped {
    let mut buffer = vec![0; 16 * 1024];
    loop {
        if shared.dropped.load(Ordering::SeqCst) {
            return Pumped::SessionGone;
        }
        let read = match response.read(&mut buffer) {
            Ok(0) => return Pumped::Ended(None),
            Ok(n) => n,
            Err(err) => return Pumped::Ended(reqwest_cause(err)),
        };
        if let Err(err) = decoder.push(buffer.get(..read).unwrap_or_default()) {
            return Pumped::Failed(err);
        }
        while let Some(event) = decoder.next_event() {
            if event.kind != "message" || event.data.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if shared.secrets.found_in(&event.data) {
                return Pumped::Failed(Error::SecretEchoed {
                    method: method.to_owned(),
                });
            }
            let answered = done(&event.data);
            if !shared.deliver(Ok(event.data), method) {
                return Pumped::SessionGone;
            }
            if answered {
                return Pumped::Answered;
            }
        }
    }
}

/// The HTTP client's error inside an I/O error from reading a body.
fn reqwest_cause(err: std::io::Error) -> Option<reqwest::Error> {
    err.into_inner()?
        .downcast::<reqwest::Error>()
        .ok()
        .map(|e| *e)
}

/// Whether an event's data is the response to `id`.
fn is_answer_to(data: &[u8], id: Option<&Value>) -> bool {
    let Some(id) = id else {
        return false;
    };
    let Ok(message) = parse_with(data, Strictness::Relaxed) else {
        return false;
    };
    message.get("method").is_none()
        && message
            .get("id")
            .and_then(Value::as_number)
            .zip(id.as_number())
            .is_some_and(|(a, b)| a.literal() == b.literal())
}

/// Opens the HTTP+SSE stream (2024-11-05) and waits for its `endpoint` event; a thread then
/// passes the `message` events on.
fn open_legacy_stream(shared: &Arc<Shared>) -> Result<Url, Error> {
    let doing = "the event stream";
    let response = shared
        .client
        .get(shared.url.clone())
        .headers(shared.headers.clone())
        .header(header::ACCEPT, "text/event-stream")
        .send()
        .map_err(|e| send_error("the GET of the event stream", e, shared.options.timeout))?;
    shared.note_certificate(&response);
    let status = response.status();
    if status.is_redirection() {
        return Err(redirect(doing, &response));
    }
    if status != StatusCode::OK {
        return Err(Error::HttpStatus {
            method: doing.to_owned(),
            status: status.as_u16(),
        });
    }
    let media = media(&response).map_err(|refusal| Error::Decoding {
        method: doing.to_owned(),
        refusal,
    })?;
    if media != "text/event-stream" {
        return Err(Error::Protocol {
            method: doing.to_owned(),
            problem: "an answer to GET that is not text/event-stream",
        });
    }
    let (found, endpoint) = mpsc::sync_channel(1);
    let reader = Arc::clone(shared);
    thread::spawn(move || legacy_reader(&reader, response, &found));
    let wait = shared.options.timeout;
    let data = match endpoint.recv_timeout(wait) {
        Ok(result) => result?,
        Err(RecvTimeoutError::Timeout) => {
            return Err(Error::Timeout {
                method: "the endpoint event of the event stream".to_owned(),
                after: wait,
            });
        }
        Err(RecvTimeoutError::Disconnected) => {
            return Err(Error::Closed {
                doing: "waiting for the endpoint event of the event stream".to_owned(),
            });
        }
    };
    let text = std::str::from_utf8(&data).map_err(|_| Error::Protocol {
        method: doing.to_owned(),
        problem: "an endpoint that is not UTF-8",
    })?;
    let endpoint = shared.url.join(text.trim()).map_err(|_| Error::Protocol {
        method: doing.to_owned(),
        problem: "an endpoint that is not a URL",
    })?;
    if endpoint.origin() != shared.url.origin() {
        // The configured headers go to the configured origin only.
        return Err(Error::Protocol {
            method: doing.to_owned(),
            problem: "an endpoint on another origin than the configured url",
        });
    }
    Ok(endpoint)
}

/// The HTTP+SSE stream: the first `endpoint` event goes to `found`, `message` events to the
/// session.
fn legacy_reader(
    shared: &Shared,
    mut response: Response,
    found: &SyncSender<Result<Vec<u8>, Error>>,
) {
    let method = "the event stream";
    let mut decoder = Events::new(shared.options.max_message);
    let mut buffer = vec![0; 16 * 1024];
    let mut endpoint_sent = false;
    let fail = |err: Error, endpoint_sent: bool| {
        if endpoint_sent {
            let _ = shared.deliver(Err(err), method);
        } else {
            let _ = found.send(Err(err));
        }
    };
    loop {
        if shared.dropped.load(Ordering::SeqCst) {
            return;
        }
        let read = match response.read(&mut buffer) {
            Ok(0) | Err(_) => {
                let err = Error::Closed {
                    doing: "reading the server's event stream".to_owned(),
                };
                return fail(err, endpoint_sent);
            }
            Ok(n) => n,
        };
        if let Err(err) = decoder.push(buffer.get(..read).unwrap_or_default()) {
            return fail(err, endpoint_sent);
        }
        while let Some(event) = decoder.next_event() {
            if shared.secrets.found_in(&event.data) {
                let err = Error::SecretEchoed {
                    method: method.to_owned(),
                };
                return fail(err, endpoint_sent);
            }
            match event.kind.as_str() {
                "endpoint" if !endpoint_sent => {
                    endpoint_sent = true;
                    if found.send(Ok(event.data)).is_err() {
                        return;
                    }
                }
                "message" if endpoint_sent => {
                    let listening = shared.deliver(Ok(event.data), method);
                    if !listening {
                        return;
                    }
                }
                _ => {}
            }
        }
    }
}

/// The TLS configuration of every HTTPS connection mcppin makes (the export's remote servers,
/// the guard's upstream): rustls with ring, trusting the system's roots
/// (rustls-platform-verifier: the trust store the user's other tools use) and `extra_roots`
/// (the guard's `--upstream-ca`).
///
/// # Errors
///
/// When no root is found (a system without a trust store, and no extra root), or an extra root
/// is not a CA certificate rustls can use.
pub fn tls_config(
    extra_roots: Vec<rustls::pki_types::CertificateDer<'static>>,
) -> Result<rustls::ClientConfig, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = if extra_roots.is_empty() {
        rustls_platform_verifier::Verifier::new(Arc::clone(&provider))?
    } else {
        rustls_platform_verifier::Verifier::new_with_extra_roots(
            extra_roots,
            Arc::clone(&provider),
        )?
    };
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth())
}

/// The HTTP client: no redirects, no proxy from the environment, [`tls_config`], the connect
/// and read bounds.
fn client(options: HttpOptions) -> Result<Client, Error> {
    let tls = tls_config(Vec::new()).map_err(|e| Error::BadRemote {
        problem: format!("cannot set up TLS: {e}"),
    })?;
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(options.timeout)
        .timeout(options.timeout)
        .tls_backend_preconfigured(tls)
        // The server's certificate, for the key recorded beside a remote server's URL.
        .tls_info(true)
        .build()
        .map_err(|e| http_error("setting up the HTTP client", e))
}

/// The error of a request that got no answer: [`Error::Timeout`] when the wait ran out (as a
/// stdio server that does not answer), else [`Error::Http`].
fn send_error(method: &str, source: reqwest::Error, after: Duration) -> Error {
    if source.is_timeout() {
        Error::Timeout {
            method: method.to_owned(),
            after,
        }
    } else {
        http_error(&format!("sending {method}"), source)
    }
}

fn http_error(doing: &str, source: reqwest::Error) -> Error {
    Error::Http {
        doing: doing.to_owned(),
        source: source.without_url(),
    }
}

fn redirect(method: &str, response: &Response) -> Error {
    let location = response
        .headers()
        .get(header::LOCATION)
        .and_then(|l| l.to_str().ok())
        .map(|l| match response.url().join(l) {
            Ok(url) => origin(url.as_str()),
            Err(_) => "<invalid url>".to_owned(),
        })
        .unwrap_or_else(|| "nowhere (no Location)".to_owned());
    Error::Redirect {
        method: method.to_owned(),
        status: response.status().as_u16(),
        location,
    }
}

/// The media type of an answer, lowercase, without parameters (empty when it names none).
///
/// # Errors
///
/// The [`Refusal`] of a head telling a client to read the body otherwise than as the UTF-8
/// bytes the capture reads ([`mcppin_core::http::check_decoding`]): a client decoding by a
/// `charset=utf-7` reads text the capture never held, so such an answer is no surface.
fn media(response: &Response) -> Result<String, Refusal> {
    let head = response
        .headers()
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_bytes()));
    Ok(check_decoding(head)?
        .map(|m| m.essence().to_owned())
        .unwrap_or_default())
}

/// Whether an answer is an event stream the capture reads as sent.
fn is_event_stream(response: &Response) -> bool {
    media(response).is_ok_and(|m| m == "text/event-stream")
}

/// Reads a whole body of at most `max` bytes.
fn read_bounded(response: Response, max: usize, method: &str) -> Result<Vec<u8>, Error> {
    if response
        .content_length()
        .is_some_and(|n| n > u64::try_from(max).unwrap_or(u64::MAX))
    {
        return Err(Error::LineTooLong { limit: max });
    }
    let mut body = Vec::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    response
        .take(limit)
        .read_to_end(&mut body)
        .map_err(|e| match reqwest_cause(e) {
            Some(source) => http_error(&format!("reading the answer to {method}"), source),
            None => Error::Closed {
                doing: format!("reading the answer to {method}"),
            },
        })?;
    if body.len() > max {
        return Err(Error::LineTooLong { limit: max });
    }
    Ok(body)
}

/// The `error` member of a JSON-RPC error in an HTTP error answer, if the body is one.
fn json_rpc_error(response: Response, max: usize) -> Option<Value> {
    if media(&response).ok()? != "application/json" {
        return None;
    }
    let body = read_bounded(response, max, "").ok()?;
    let message = parse_with(&body, Strictness::Relaxed).ok()?;
    let error = message.get("error")?;
    error.get("code")?.as_number()?;
    Some(error.clone())
}

/// A response to `id` carrying `error`: an HTTP error answer as the session reads answers.
fn answer_with_error(id: &Value, error: Value) -> Result<Vec<u8>, Error> {
    let mut answer = Object::new();
    answer.insert("jsonrpc", "2.0");
    answer.insert("id", id.clone());
    answer.insert("error", error);
    mcppin_core::canonicalize(&Value::from(answer)).map_err(|source| Error::Malformed {
        method: "an HTTP error answer".to_owned(),
        source: Box::new(source),
    })
}

/// A header value for `Mcp-Method` / `Mcp-Name`: as it is when plain visible ASCII (spaces
/// inside allowed), else the Base64 sentinel form `=?base64?...?=` (2026-07-28, Streamable
/// HTTP, "Value Encoding"), which a value looking like the sentinel also takes.
fn header_safe(value: &str) -> String {
    let visible = value
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b));
    let padded = value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']);
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    let plain = !value.is_empty() && visible && !padded && !sentinel;
    if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(stream: &[u8], size: usize, max: usize) -> Result<Vec<(String, Vec<u8>)>, Error> {
        let mut events = Events::new(max);
        let mut out = Vec::new();
        for chunk in stream.chunks(size) {
            events.push(chunk)?;
            while let Some(event) = events.next_event() {
                out.push((event.kind, event.data));
            }
        }
        Ok(out)
    }

    #[test]
    fn only_events_with_data_are_passed_on_typed_message_by_default() {
        let stream =
            b": ping\nevent: ping\n\nid: 1\n\nretry: 9\n\ndata:\n\nevent: endpoint\ndata: /m\n\n";
        let read = events(stream, 5, 64).unwrap();
        assert_eq!(
            read,
            [
                ("message".to_owned(), Vec::new()),
                ("endpoint".to_owned(), b"/m".to_vec())
            ]
        );
        let mut reader = Events::new(64);
        reader.push(stream).unwrap();
        assert_eq!(reader.last_event_id().as_deref(), Some("1"));
        assert_eq!(reader.retry(), Some(Duration::from_millis(9)));
    }

    #[test]
    fn event_data_is_bounded_by_the_message_bound_exactly() {
        let exact = format!("id: 7\ndata: {}\n\n", "z".repeat(64));
        assert_eq!(events(exact.as_bytes(), 3, 64).unwrap()[0].1.len(), 64);
        let over = format!("data: {}\n\n", "z".repeat(65));
        assert!(matches!(
            events(over.as_bytes(), 3, 64),
            Err(Error::LineTooLong { limit: 64 })
        ));
        // Across lines: the data joined with LF counts.
        let lines = format!("data: {}\n", "y".repeat(40)).repeat(2) + "\n";
        assert!(matches!(
            events(lines.as_bytes(), 5, 64),
            Err(Error::LineTooLong { limit: 64 })
        ));
        // A line that never ends is refused as it grows past the bound and its slack.
        let endless = vec![b'x'; 64 + EVENT_SLACK + 1];
        assert!(matches!(
            events(&endless, 7, 64),
            Err(Error::LineTooLong { limit: 64 })
        ));
    }

    #[test]
    fn encodes_header_values_that_are_not_plain_ascii() {
        assert_eq!(header_safe("get_weather"), "get_weather");
        assert_eq!(
            header_safe("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(header_safe(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(header_safe("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            header_safe("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn collects_the_secrets_of_a_server_and_redacts_them() {
        let server = HttpServer {
            url: "https://user:hunter22@api.invalid/mcp?key=s3cr3tk3y&region=eu".to_owned(),
            kind: HttpKind::Streamable,
            headers: [("Authorization".to_owned(), "Bearer tok3n-abcdef".to_owned())].into(),
        };
        let secrets = Secrets::of(&server);
        assert!(secrets.found_in(b"echo: tok3n-abcdef"));
        assert!(secrets.found_in(b"hunter22"));
        assert!(secrets.found_in(b"?key=s3cr3tk3y"));
        assert!(!secrets.found_in(b"Bearer is a word, eu a region"));
        // Escaped in a JSON string or member name: the same secret to a reader.
        assert!(secrets.found_in(br#"{"d": "\u0074ok3n-abcdef"}"#));
        assert!(secrets.found_in(br#"{"hunter\u0032\u0032": 1}"#));
        assert!(!secrets.found_in(br#"{"d": "\u0074ok3n"}"#));
        assert!(!secrets.found_in(br#"not json \u0074ok3n-abcdef"#));
        assert_eq!(
            secrets.redact("sent Bearer tok3n-abcdef and s3cr3tk3y"),
            "sent <redacted> and <redacted>"
        );
        assert!(!format!("{secrets:?}").contains("tok3n"));
        assert_eq!(redact_url(&server.url), "https://api.invalid/mcp");
        assert_eq!(redact_url("not a url"), "<invalid url>");
    }

    #[test]
    fn reads_what_the_transport_needs_from_an_outgoing_message() {
        let out = Outgoing::parse(
            br#"{"id":3,"jsonrpc":"2.0","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo"}}"#,
        );
        assert_eq!(out.method.as_deref(), Some("tools/call"));
        assert_eq!(out.name.as_deref(), Some("echo"));
        assert_eq!(out.revision, Some(Revision::V2026_07_28));
        assert!(out.id.is_some());
        let note = Outgoing::parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert!(note.id.is_none() && note.revision.is_none() && note.name.is_none());
    }

    #[test]
    fn recognises_the_answer_a_stream_waits_for() {
        let id = Value::from(7_u64);
        assert!(is_answer_to(br#"{"id":7,"result":{}}"#, Some(&id)));
        assert!(!is_answer_to(br#"{"id":7,"method":"ping"}"#, Some(&id)));
        assert!(!is_answer_to(br#"{"id":8,"result":{}}"#, Some(&id)));
        assert!(!is_answer_to(b"not json", Some(&id)));
    }
}

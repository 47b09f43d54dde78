//! `mcppin-guard --extmcp-listen`: the guard as a guardrail processor of an MCP gateway
//! (agentgateway's `ExtMcp` hook; docs/gateway.md). The gateway calls it over gRPC before each
//! request goes to a target and before each answer reaches the client; the processor answers
//! pass, a replaced result, or a denial.
//!
//! A thin adapter, as the stdio and HTTP guards are: this module serves unary gRPC over
//! cleartext HTTP/2 (hyper's server, the messages of `mcppin-extmcp`), `processor` maps each
//! phase to the lines an engine `Session` judges. No decision is made here.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Context;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use hyper::server::conn::http2;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcppin_extmcp::{CHECK_REQUEST, CHECK_RESPONSE, McpRequest, McpResponse, frame, unframe};
use prost::Message;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::exit::{Exit, Fail};
use crate::listen::{self, Stops};
use crate::log::Log;

mod processor;

pub(crate) use processor::{Config as ProcessorConfig, Processor, Target};

/// How the processor is served.
#[derive(Debug)]
pub(crate) struct Config {
    pub(crate) listen: std::net::SocketAddr,
    /// The longest gRPC message accepted, in bytes.
    pub(crate) max_message: usize,
    pub(crate) max_connections: usize,
    /// How long the gateway may take to send one check's message (`--upstream-timeout`).
    pub(crate) read_timeout: Duration,
    /// The guard run's id: each session's log lines carry it with the session's number.
    pub(crate) run_id: String,
}

/// gRPC status codes the processor answers with (grpc/doc/statuscode.md).
const OK: u8 = 0;
const INVALID_ARGUMENT: u8 = 3;
const DEADLINE_EXCEEDED: u8 = 4;
const RESOURCE_EXHAUSTED: u8 = 8;
const UNIMPLEMENTED: u8 = 12;

/// How many `--max-message` messages are read at once, at most: the bytes of messages being
/// read (or judged) are bounded together, not only each on its own.
const MESSAGES_AT_ONCE: usize = 4;

/// What every call shares.
struct Shared {
    processor: Mutex<Processor>,
    log: Log,
    started: Instant,
    max_message: usize,
    /// The bytes of the messages being read or judged, together: `MESSAGES_AT_ONCE` times
    /// `--max-message`.
    reading: Arc<Semaphore>,
    read_timeout: Duration,
    run_id: String,
    log_failed: std::sync::atomic::AtomicBool,
}

/// Serves until SIGINT, SIGTERM or SIGHUP, then returns: exit 0.
pub(crate) fn run(config: Config, processor: Processor, log: Log) -> anyhow::Result<Exit> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let exit = runtime.block_on(serve(config, processor, log));
    runtime.shutdown_timeout(Duration::from_secs(2));
    exit
}

async fn serve(config: Config, processor: Processor, log: Log) -> anyhow::Result<Exit> {
    let mut stops = Stops::install()?;
    let listener = TcpListener::bind(config.listen).await.map_err(|e| {
        Fail::new(
            Exit::Usage,
            format!("cannot listen on {}: {e}", config.listen),
        )
    })?;
    let local = listener.local_addr().context("the listening address")?;
    say(&format!(
        "ExtMcp guardrail processor listening on {local} (gRPC over cleartext HTTP/2)"
    ));
    let shared = Arc::new(Shared {
        processor: Mutex::new(processor),
        log,
        started: Instant::now(),
        max_message: config.max_message,
        reading: Arc::new(Semaphore::new(
            config
                .max_message
                .saturating_add(mcppin_extmcp::FRAME_HEADER)
                .saturating_mul(MESSAGES_AT_ONCE)
                .min(Semaphore::MAX_PERMITS),
        )),
        read_timeout: config.read_timeout,
        run_id: config.run_id,
        log_failed: std::sync::atomic::AtomicBool::new(false),
    });
    let connections = Arc::new(Semaphore::new(config.max_connections.max(1)));
    while let Some((stream, permit)) =
        listen::next_connection(&listener, &connections, &mut stops).await
    {
        let shared = Arc::clone(&shared);
        let activity = Arc::new(Activity::new());
        let busy = Arc::clone(&activity);
        let service = service_fn(move |request| {
            let shared = Arc::clone(&shared);
            let busy = Arc::clone(&busy);
            async move {
                let _call = busy.begin();
                Ok::<_, std::convert::Infallible>(call(&shared, request).await)
            }
        });
        let connection = http2::Builder::new(TokioExecutor::new())
            .max_frame_size(1 << 20)
            .serve_connection(TokioIo::new(stream), service);
        let idle = config.read_timeout;
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            // A connection without a check in flight for --upstream-timeout is closed (the
            // gateway connects again): a peer that connects and sends nothing, or never ends
            // its headers, would otherwise hold its place (--max-connections) for good.
            loop {
                tokio::select! {
                    _ = connection.as_mut() => break,
                    () = tokio::time::sleep(idle) => {
                        if activity.idle_for() >= idle {
                            connection.as_mut().graceful_shutdown();
                            let _ = tokio::time::timeout(idle, connection.as_mut()).await;
                            break;
                        }
                    }
                }
            }
            drop(permit);
        });
    }
    say("stopped by a signal");
    Ok(Exit::Clean)
}

/// The calls of one connection in flight, and when the last one ended.
struct Activity {
    calls: Mutex<(usize, Instant)>,
}

/// One call in flight; its end is noted when dropped.
struct Busy<'a>(&'a Activity);

impl Activity {
    fn new() -> Self {
        Self {
            calls: Mutex::new((0, Instant::now())),
        }
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, (usize, Instant)> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn begin(&self) -> Busy<'_> {
        self.calls().0 += 1;
        Busy(self)
    }

    /// How long the connection has had no call in flight (zero while one is).
    fn idle_for(&self) -> Duration {
        let (calls, since) = *self.calls();
        if calls > 0 {
            Duration::ZERO
        } else {
            since.elapsed()
        }
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        let mut calls = self.0.calls();
        calls.0 = calls.0.saturating_sub(1);
        calls.1 = Instant::now();
    }
}

/// One unary call: the request's one message read whole (bounded), judged, answered with its
/// status in the trailers.
async fn call(shared: &Shared, request: Request<Incoming>) -> Response<Unary> {
    let path = request.uri().path().to_owned();
    if request.method() != hyper::Method::POST || (path != CHECK_REQUEST && path != CHECK_RESPONSE)
    {
        return Unary::status(UNIMPLEMENTED, "no such method");
    }
    let limit = shared
        .max_message
        .saturating_add(mcppin_extmcp::FRAME_HEADER);
    // Bounded in time as in size: a stream stalled mid-message would otherwise hold its
    // connection's place (--max-connections) for as long as the gateway keeps it open.
    let whole = read(request.into_body(), limit, &shared.reading);
    // The message's share of the bytes read at once is held until it is answered.
    let (body, _held) = match tokio::time::timeout(shared.read_timeout, whole).await {
        Ok(Ok(whole)) => whole,
        Ok(Err(why)) => return Unary::status(RESOURCE_EXHAUSTED, why),
        Err(_) => {
            return Unary::status(
                DEADLINE_EXCEEDED,
                "the message did not arrive whole within --upstream-timeout",
            );
        }
    };
    let message = match unframe(&body, shared.max_message) {
        Ok(message) => message,
        Err(e) => return Unary::status(INVALID_ARGUMENT, &e.to_string()),
    };
    let now = shared.started.elapsed();
    let (answer, said) = if path == CHECK_REQUEST {
        let Ok(request) = McpRequest::decode(message) else {
            return Unary::status(INVALID_ARGUMENT, "not an McpRequest");
        };
        let (verdict, said) = shared.processor().check_request(&request, now);
        (verdict.encode_to_vec(), said)
    } else {
        let Ok(response) = McpResponse::decode(message) else {
            return Unary::status(INVALID_ARGUMENT, "not an McpResponse");
        };
        let (verdict, said) = shared.processor().check_response(&response, now);
        (verdict.encode_to_vec(), said)
    };
    shared.tell(said);
    match frame(&answer) {
        Ok(body) => Unary::ok(body),
        Err(e) => Unary::status(RESOURCE_EXHAUSTED, &e.to_string()),
    }
}

/// A call's body, read whole: at most `limit` bytes, each taken from `reading` as it comes
/// (never waited for: a check beyond the bound is answered at once).
async fn read(
    mut body: Incoming,
    limit: usize,
    reading: &Arc<Semaphore>,
) -> Result<(Vec<u8>, Option<OwnedSemaphorePermit>), &'static str> {
    const FAILED: &str = "the message is longer than --max-message, or the stream failed";
    let mut bytes = Vec::new();
    let mut held: Option<OwnedSemaphorePermit> = None;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(|_| FAILED)?.into_data() else {
            continue;
        };
        if bytes.len().saturating_add(data.len()) > limit {
            return Err(FAILED);
        }
        let share = u32::try_from(data.len()).map_err(|_| FAILED)?;
        let permit = Arc::clone(reading)
            .try_acquire_many_owned(share)
            .map_err(|_| {
                "the processor reads as many messages at once as it holds (4 times \
                 --max-message)"
            })?;
        match &mut held {
            Some(held) => held.merge(permit),
            None => held = Some(permit),
        }
        bytes.extend_from_slice(&data);
    }
    Ok((bytes, held))
}

impl Shared {
    fn processor(&self) -> std::sync::MutexGuard<'_, Processor> {
        self.processor
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes a phase's notes to stderr and its events to the log; a failing write ends
    /// nothing and is reported once.
    fn tell(&self, said: processor::Said) {
        if !said.notes.is_empty() {
            let mut text = String::new();
            for note in &said.notes {
                text.push_str("mcppin-guard: ");
                text.push_str(note);
                text.push('\n');
            }
            use std::io::Write;
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
        for (number, events) in said.events {
            let session_id = format!("{}-{number}", self.run_id);
            if let Err(err) = self.log.events_in(&session_id, &events)
                && !self
                    .log_failed
                    .swap(true, std::sync::atomic::Ordering::Relaxed)
            {
                say(&crate::log::failed("the log", &err));
            }
        }
    }
}

/// The body of a unary gRPC answer: the message, if any, then the trailers with its status.
pub(crate) struct Unary {
    data: Option<Bytes>,
    trailers: Option<HeaderMap>,
}

impl Unary {
    fn response(data: Option<Bytes>, status: u8, message: Option<&str>) -> Response<Self> {
        let mut trailers = HeaderMap::new();
        trailers.insert("grpc-status", HeaderValue::from(u16::from(status)));
        if let Some(message) = message {
            // grpc-message is percent-encoded; the processor's own texts are ASCII words.
            let encoded: String = message
                .bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() || b == b' ' || b == b'-' || b == b'.' {
                        char::from(b).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect();
            if let Ok(value) = HeaderValue::from_str(&encoded) {
                trailers.insert("grpc-message", value);
            }
        }
        let mut response = Response::new(Self {
            data,
            trailers: Some(trailers),
        });
        *response.status_mut() = StatusCode::OK;
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
        response
    }

    fn ok(body: Vec<u8>) -> Response<Self> {
        Self::response(Some(Bytes::from(body)), OK, None)
    }

    fn status(status: u8, message: &str) -> Response<Self> {
        Self::response(None, status, Some(message))
    }
}

impl Body for Unary {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        let frame = match this.data.take() {
            Some(data) => Some(Frame::data(data)),
            None => this.trailers.take().map(Frame::trailers),
        };
        std::task::Poll::Ready(frame.map(Ok))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none() && self.trailers.is_none()
    }
}

/// One line on stderr, prefixed with the guard's name.
fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "mcppin-guard: {text}");
}

//! `mcppin-guard --listen`: the guard in front of a remote server, as a reverse proxy for the
//! Streamable HTTP transport of MCP (docs/guard.md, "In front of a remote server").
//!
//! A thin adapter over the wire engine, as the stdio proxy is: one
//! [`Session`](mcppin_core::engine::Session) per MCP session (per `Mcp-Session-Id` the
//! server assigned), every client message fed with `Session::client`, every server message (a
//! JSON body, each event of an SSE stream) fed with `Session::server` before anything of it is
//! forwarded. This module owns the sockets, the tasks and the signals, `session` the session
//! table; the bytes are judged by the engine only.
//!
//! Requests without `Mcp-Session-Id` (the `initialize` that opens a session; every request of
//! the stateless 2026-07-28 revision) get a fresh session of their own: when the server's
//! answer assigns a session id, that session is kept under it; otherwise it ends with the
//! exchange. The lock's pins hold for every request either way; the session pins (the first
//! answer to a `prompts/get`, ...) hold within one session, so a stateless exchange pins only
//! within its own answer stream. What stateless exchanges withhold (tools in quarantine,
//! prompts that departed from the lock) is one guard-wide set: each fresh session starts
//! with it, and what a stateless exchange's readings withhold or lift is carried back to it.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use hyper::Uri;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use mcppin_core::engine::ApprovedServer;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

use crate::exit::{Exit, Fail};
use crate::listen::{self, Stops};
use crate::log::Log;

mod config;
mod exchange;
mod replica;
mod session;
mod upstream;

use session::{State, eprintln_guard};

pub(crate) use config::Config;
pub(crate) use replica::Replica;

/// How long the guard waits, once told to stop, for open exchanges to end.
const GRACE: Duration = Duration::from_secs(2);

/// Serves until SIGINT, SIGTERM or SIGHUP, then ends every exchange within [`GRACE`] and
/// returns: exit 0.
pub(crate) fn run(config: Config, approved: ApprovedServer, log: Log) -> anyhow::Result<Exit> {
    // The URL's query and userinfo may hold a token: no message shows them.
    let upstream: Uri = config.upstream.parse().map_err(|e| {
        Fail::new(
            Exit::Usage,
            format!(
                "--upstream {}: {e}",
                mcppin_client::http::redact_url(&config.upstream)
            ),
        )
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let exit = runtime.block_on(serve(config, upstream, approved, log));
    // Tasks still running (a stream whose client does not read) are dropped here, bounded.
    runtime.shutdown_timeout(GRACE);
    exit
}

async fn serve(
    config: Config,
    upstream: Uri,
    approved: ApprovedServer,
    log: Log,
) -> anyhow::Result<Exit> {
    let upstream = upstream::Upstream::new(upstream, &config.upstream_ca, config.timeout)
        .map_err(|e| Fail::new(Exit::Usage, format!("{e:#}")))?;
    let mut stops = Stops::install()?;
    let listener = TcpListener::bind(config.listen).await.map_err(|e| {
        Fail::new(
            Exit::Usage,
            format!("cannot listen on {}: {e}", config.listen),
        )
    })?;
    let local = listener.local_addr().context("the listening address")?;
    let (stop, stopping) = watch::channel(false);
    let path = upstream.endpoint_path().to_owned();
    let state = Arc::new(State::new(&config, upstream, approved, log, stopping));
    eprintln_guard(&format!("listening on http://{local}{path}"));
    if let Some(replica) = &config.replica {
        eprintln_guard(&format!(
            "replica {}: the session ids handed to clients begin with {}.",
            replica.tag(),
            replica.tag()
        ));
    }
    let connections = Arc::new(Semaphore::new(config.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    {
        let state = Arc::clone(&state);
        let every =
            (config.session_idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(60));
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            loop {
                ticks.tick().await;
                state.sweep();
            }
        });
    }
    while let Some((stream, permit)) =
        listen::next_connection(&listener, &connections, &mut stops).await
    {
        let state = Arc::clone(&state);
        let service = service_fn(move |request| {
            let state = Arc::clone(&state);
            async move { Ok::<_, std::convert::Infallible>(exchange::handle(state, request).await) }
        });
        let mut builder = http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(config.timeout)
            .max_buf_size(mcppin_core::http::MAX_HEADERS);
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            let _ = connection.await;
            drop(permit);
        });
    }
    drop(listener);
    let _ = stop.send(true);
    let _ = tokio::time::timeout(GRACE, graceful.shutdown()).await;
    for guarded in state.open() {
        state.end(&guarded);
    }
    eprintln_guard("stopped by a signal");
    Ok(Exit::Clean)
}

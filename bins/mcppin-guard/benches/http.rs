//! What `mcppin-guard --listen` costs (docs/performance.md, "Guard over HTTP"): the latency a
//! `tools/call` round trip gains through the guard against the same request direct and through
//! nginx `proxy_pass` (the floor of any HTTP process in the middle), at 1, 64 and 1,000
//! concurrent sessions, the requests per second of each, and the guard's resident memory per
//! idle session.
//!
//! Run with `cargo bench -p mcppin-guard --bench http`; `-- --only latency|memory` runs one
//! part. The upstream is this program itself: a minimal Streamable HTTP MCP server (JSON
//! answers, `Mcp-Session-Id`) that answers each request at once, so the numbers show the proxy
//! and nothing else, the worst case for a proxy. Direct, nginx and guarded runs take turns at
//! each level, so a disturbance on the machine falls on all three. Every run is bounded in count
//! and in time. The latency part fails, naming the install, where nginx is not installed.
#![expect(
    clippy::disallowed_methods,
    reason = "the one unbounded wait is `kill`, which returns at once"
)]

use std::convert::Infallible;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcppin_core::lockfile::Lockfile;
use mcppin_core::manifest::Manifest;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::Barrier;

/// The protocol revision the sessions speak.
const PROTOCOL: &str = "2025-11-25";

/// How much to measure: the full run under `cargo bench`, a smoke run under `cargo test`.
#[derive(Clone, Copy)]
struct Sizes {
    /// (concurrent sessions, `tools/call` requests per session, the pause between two requests
    /// of a session in the paced runs) per level.
    levels: &'static [(usize, usize, Duration)],
    /// Turns of direct and guarded runs per level; samples of all turns are pooled.
    turns: usize,
    /// The most one run may take; sessions stop sending when it has passed.
    bound: Duration,
    /// Idle sessions opened for the memory measurement.
    idle: usize,
}

const FULL: Sizes = Sizes {
    levels: &[
        (1, 5_000, Duration::from_millis(1)),
        (64, 200, Duration::from_millis(20)),
        (1_000, 10, Duration::from_secs(1)),
    ],
    turns: 3,
    bound: Duration::from_secs(60),
    idle: 5_000,
};

const SMOKE: Sizes = Sizes {
    levels: &[
        (1, 20, Duration::from_millis(1)),
        (8, 5, Duration::from_millis(5)),
    ],
    turns: 1,
    bound: Duration::from_secs(20),
    idle: 20,
};

type Http = Client<HttpConnector, Full<Bytes>>;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return; // `cargo bench -- --list`
    }
    // `cargo bench` passes --bench; `cargo test --all-targets` runs this as a smoke test.
    let sizes = if args.iter().any(|a| a == "--bench") {
        FULL
    } else {
        SMOKE
    };
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let upstream = serve().await;
        let dir = tempfile::tempdir().expect("temp dir");
        let lock = dir.path().join("bench.lock.json");
        std::fs::write(&lock, lock_bytes()).expect("write lock");
        if only.is_none_or(|o| o == "latency") {
            latency(sizes, &upstream, &lock).await;
        }
        if only.is_none_or(|o| o == "memory") {
            memory(sizes, &upstream, &lock).await;
        }
    });
}

/// The tools the upstream serves, and the lock approves.
fn tools() -> Value {
    json!([
        {"name": "echo", "description": "Echoes the message back.",
         "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}},
                         "required": ["message"]}},
        {"name": "add", "description": "Adds two numbers.",
         "inputSchema": {"type": "object", "properties": {"a": {"type": "number"},
                         "b": {"type": "number"}}, "required": ["a", "b"]}}
    ])
}

fn lock_bytes() -> Vec<u8> {
    let manifest = json!({"schema_version": 2, "complete": true, "servers": [
        {"id": "bench", "reported_name": "mcppin-bench", "tools": tools()}]});
    let manifest = Manifest::parse(manifest.to_string().as_bytes()).expect("manifest");
    Lockfile::approve(None, &manifest, &[])
        .expect("approve")
        .to_bytes()
}

/// Starts the in-process upstream and returns its URL.
async fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let sessions = Arc::new(AtomicU64::new(0));
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let sessions = Arc::clone(&sessions);
            tokio::spawn(async move {
                let service = service_fn(move |request| answer(request, Arc::clone(&sessions)));
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    format!("http://{addr}/mcp")
}

/// The upstream's answer: JSON for requests, 202 for notifications, 405 for the GET stream.
async fn answer(
    request: Request<Incoming>,
    sessions: Arc<AtomicU64>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let json = |status: StatusCode, body: Value| {
        Response::builder()
            .status(status)
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body.to_string())))
            .expect("response")
    };
    let empty = |status: StatusCode| {
        Response::builder()
            .status(status)
            .body(Full::new(Bytes::new()))
            .expect("response")
    };
    match *request.method() {
        Method::POST => {}
        Method::DELETE => return Ok(empty(StatusCode::OK)),
        _ => return Ok(empty(StatusCode::METHOD_NOT_ALLOWED)),
    }
    let Ok(body) = request.into_body().collect().await else {
        return Ok(empty(StatusCode::BAD_REQUEST));
    };
    let Ok(message) = serde_json::from_slice::<Value>(&body.to_bytes()) else {
        return Ok(empty(StatusCode::BAD_REQUEST));
    };
    let Some(id) = message.get("id").cloned() else {
        return Ok(empty(StatusCode::ACCEPTED));
    };
    let result = match message["method"].as_str() {
        Some("initialize") => {
            let session = sessions.fetch_add(1, Ordering::Relaxed);
            let mut response = json(
                StatusCode::OK,
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": {"name": "mcppin-bench", "version": "1.0.0"}}}),
            );
            let value = HeaderValue::from_str(&format!("bench-session-{session:016x}"))
                .expect("header value");
            response.headers_mut().insert("mcp-session-id", value);
            return Ok(response);
        }
        Some("tools/list") => json!({"tools": tools()}),
        Some("tools/call") => {
            let text = message["params"]["arguments"]["message"].clone();
            json!({"content": [{"type": "text", "text": text}]})
        }
        Some("ping") => json!({}),
        _ => {
            return Ok(json(
                StatusCode::OK,
                json!({"jsonrpc": "2.0", "id": id,
                       "error": {"code": -32601, "message": "method not found"}}),
            ));
        }
    };
    Ok(json(
        StatusCode::OK,
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
    ))
}

/// A guard in front of `upstream`, listening on a free loopback port; killed on drop.
struct Guard {
    child: Child,
    url: String,
}

impl Guard {
    fn start(lock: &Path, upstream: &str) -> Self {
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
            .arg("--lock")
            .arg(lock)
            .args([
                "--server",
                "bench",
                "--listen",
                &listen,
                "--upstream",
                upstream,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("start mcppin-guard");
        wait_listening(&mut child, "mcppin-guard", port);
        Self {
            child,
            url: format!("http://{listen}/mcp"),
        }
    }

    /// The guard's resident memory (`VmRSS`), in KiB.
    fn rss_kib(&self) -> u64 {
        mcppin_testkit::resident_kib(self.child.id())
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// nginx as a plain reverse proxy in front of `upstream`: one worker per core, kept-alive
/// connections on both sides, no log; stopped (master and workers) on drop.
struct Nginx {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Nginx {
    fn start(upstream: &str) -> Self {
        let nginx = std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .chain([std::path::PathBuf::from("/usr/sbin")])
            .map(|dir| dir.join("nginx"))
            .find(|p| p.is_file())
            .expect("nginx is not installed: apt-get install nginx (a step of .ci/run)");
        let upstream = upstream
            .strip_prefix("http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .expect("the upstream's URL");
        let port = free_port();
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path().display();
        let conf = format!(
            "daemon off;\n\
             worker_processes auto;\n\
             pid {d}/nginx.pid;\n\
             error_log {d}/error.log error;\n\
             events {{ worker_connections 4096; }}\n\
             http {{\n\
             \x20   access_log off;\n\
             \x20   client_body_temp_path {d}/body;\n\
             \x20   proxy_temp_path {d}/proxy;\n\
             \x20   fastcgi_temp_path {d}/fastcgi;\n\
             \x20   uwsgi_temp_path {d}/uwsgi;\n\
             \x20   scgi_temp_path {d}/scgi;\n\
             \x20   upstream bench {{ server {upstream}; keepalive 1024; }}\n\
             \x20   server {{\n\
             \x20       listen 127.0.0.1:{port};\n\
             \x20       keepalive_requests 1000000;\n\
             \x20       location / {{\n\
             \x20           proxy_pass http://bench;\n\
             \x20           proxy_http_version 1.1;\n\
             \x20           proxy_set_header Connection \"\";\n\
             \x20           proxy_buffering off;\n\
             \x20       }}\n\
             \x20   }}\n\
             }}\n"
        );
        let path = dir.path().join("nginx.conf");
        std::fs::write(&path, conf).expect("write nginx.conf");
        let mut child = Command::new(nginx)
            .arg("-p")
            .arg(dir.path())
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .arg("-c")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("start nginx");
        wait_listening(&mut child, "nginx", port);
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            _dir: dir,
        }
    }
}

impl Nginx {
    /// The master's pid and its workers' (waiting for the workers, which start after the
    /// master listens, for at most 30 s).
    fn pids(&self) -> Vec<u32> {
        let master = self.child.id();
        let start = Instant::now();
        loop {
            let children =
                std::fs::read_to_string(format!("/proc/{master}/task/{master}/children"))
                    .expect("read nginx's workers");
            let workers: Vec<u32> = children
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect();
            if !workers.is_empty() {
                return std::iter::once(master).chain(workers).collect();
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "nginx started no worker in 30 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The user and system CPU time `pids` have used so far (`/proc/PID/stat`, in clock ticks of
/// 1/100 s, the unit Linux shows user space on every architecture).
fn cpu(pids: &[u32]) -> Duration {
    let ticks: u64 = pids
        .iter()
        .map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read stat");
            // Fields after the command name, which is in parentheses and may hold spaces.
            let rest = stat.rsplit_once(')').expect("a stat line").1;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            // utime and stime: fields 14 and 15 of the line, 12 and 13 after the name.
            fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime")
        })
        .sum();
    Duration::from_millis(ticks * 10)
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // TERM to the master stops its workers too; KILL would leave them running.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// A loopback port free now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Waits until `child` accepts connections on `port`, for at most 30 s.
fn wait_listening(child: &mut Child, name: &str, port: u16) {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let start = Instant::now();
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{name} exited ({status}) before listening");
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{name} is not listening after 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An HTTP/1.1 client keeping its connections alive.
fn client() -> Http {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(usize::MAX)
        .build(connector)
}

/// POSTs `message` and returns the status, the session id answered and the body, or why the
/// exchange failed (a connection reset, a body cut short).
async fn post(
    http: &Http,
    url: &str,
    session: Option<&str>,
    message: &Value,
) -> Result<(StatusCode, Option<String>, Bytes), String> {
    let mut request = Request::post(url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream");
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", PROTOCOL);
    }
    let request = request
        .body(Full::new(Bytes::from(message.to_string())))
        .expect("request");
    let response = http.request(request).await.map_err(|e| format!("{e:?}"))?;
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("{e:?}"))?
        .to_bytes();
    Ok((status, session, body))
}

/// Opens a session: `initialize`, then `notifications/initialized`. Returns its id.
async fn open(http: &Http, url: &str) -> Result<String, String> {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "mcppin-bench-client", "version": "1.0.0"}}});
    let (status, session, body) = post(http, url, None, &initialize).await?;
    let session = session
        .filter(|_| status == StatusCode::OK)
        .ok_or_else(|| format!("initialize: {status}: {}", String::from_utf8_lossy(&body)))?;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, body) = post(http, url, Some(&session), &initialized).await?;
    if status != StatusCode::ACCEPTED {
        return Err(format!(
            "initialized: {status}: {}",
            String::from_utf8_lossy(&body)
        ));
    }
    Ok(session)
}

async fn close(http: &Http, url: &str, session: &str) -> Result<(), String> {
    let request = Request::delete(url)
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", PROTOCOL)
        .body(Full::new(Bytes::new()))
        .expect("request");
    let response = http.request(request).await.map_err(|e| format!("{e:?}"))?;
    response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("{e:?}"))?;
    Ok(())
}

/// What one run measured.
#[derive(Default)]
struct Sample {
    /// Every answered round trip.
    times: Vec<Duration>,
    /// From the first request to the last answer.
    took: Duration,
    /// Exchanges that failed (no answer, or not a JSON-RPC answer), and the first reason.
    errors: usize,
    first_error: Option<String>,
}

/// One run: `sessions` sessions open at once, then each sends `requests` `tools/call`
/// requests one at a time: back to back (`pause` none: the load saturates the machine, which
/// measures throughput), or one every `pause` (sessions spread over it), as agents send them.
async fn run(
    url: &str,
    sessions: usize,
    requests: usize,
    bound: Duration,
    pause: Option<Duration>,
) -> Sample {
    let opened = Arc::new(Barrier::new(sessions + 1));
    let mut tasks = Vec::with_capacity(sessions);
    for n in 0..sessions {
        // A client per session, as each MCP client has its own: one kept-alive connection per
        // session, not a pool shared by all (whose idle extra connections would count against
        // the guard's --max-connections).
        let http = client();
        let url = url.to_owned();
        let opened = Arc::clone(&opened);
        tasks.push(tokio::spawn(async move {
            let mut sample = Sample::default();
            let fail = |sample: &mut Sample, e: String| {
                sample.errors += 1;
                sample.first_error.get_or_insert(e);
            };
            let session = open(&http, &url).await;
            opened.wait().await;
            let session = match session {
                Ok(session) => session,
                Err(e) => {
                    fail(&mut sample, e);
                    return sample;
                }
            };
            let deadline = Instant::now() + bound;
            sample.times.reserve(requests);
            let mut ticks = pause.map(|pause| {
                let offset = pause.mul_f64(n as f64 / sessions as f64);
                let mut ticks =
                    tokio::time::interval_at(tokio::time::Instant::now() + offset, pause);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                ticks
            });
            for i in 0..requests {
                if let Some(ticks) = &mut ticks {
                    ticks.tick().await;
                }
                if Instant::now() > deadline {
                    break;
                }
                let call = json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"message": format!("{n}/{i}")}}});
                let start = Instant::now();
                match post(&http, &url, Some(&session), &call).await {
                    Ok((StatusCode::OK, _, body)) if body.starts_with(b"{") => {
                        sample.times.push(start.elapsed());
                    }
                    Ok((status, _, body)) => {
                        fail(
                            &mut sample,
                            format!("{status}: {}", String::from_utf8_lossy(&body)),
                        );
                    }
                    Err(e) => fail(&mut sample, e),
                }
            }
            if let Err(e) = close(&http, &url, &session).await {
                fail(&mut sample, e);
            }
            sample
        }));
    }
    opened.wait().await;
    let start = Instant::now();
    let mut all = Sample::default();
    for task in tasks {
        let one = task.await.expect("session task");
        all.times.extend(one.times);
        all.errors += one.errors;
        if all.first_error.is_none() {
            all.first_error = one.first_error;
        }
    }
    all.took = start.elapsed();
    all
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    let i = (sorted.len() * p / 100).min(sorted.len().saturating_sub(1));
    sorted.get(i).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

async fn latency(sizes: Sizes, upstream: &str, lock: &Path) {
    let guard = Guard::start(lock, upstream);
    let nginx = Nginx::start(upstream);
    println!(
        "tools/call round trips on loopback, upstream answering at once; {} turns of direct, \
         nginx proxy_pass and guarded runs per level, samples pooled",
        sizes.turns
    );
    let urls = [upstream, nginx.url.as_str(), guard.url.as_str()];
    // Whose CPU time is counted: none for direct (the upstream is this program), nginx's
    // processes, the guard's.
    let pids = [Vec::new(), nginx.pids(), vec![guard.child.id()]];
    println!();
    println!("paced: each session sends one request every pause (added latency)");
    table(sizes, urls, &pids, true).await;
    println!();
    println!(
        "back to back: each session sends its next request on the answer (throughput; the CPU \
         time the process in the middle used per request does not depend on the host's load)"
    );
    table(sizes, urls, &pids, false).await;
}

/// The three ways of a run: direct, through nginx, through the guard.
const WAYS: [&str; 3] = ["direct", "nginx", "guard"];

async fn table(sizes: Sizes, urls: [&str; 3], pids: &[Vec<u32>; 3], paced: bool) {
    println!(
        "| sessions | pause | requests | direct p50 | direct p99 | direct req/s | nginx p50 | \
         nginx p99 | nginx req/s | guard p50 | guard p99 | guard req/s | guard added p50 | \
         guard added p99 | guard / nginx req/s | guard / direct req/s | nginx CPU per request | \
         guard CPU per request | failed |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &(sessions, requests, pause) in sizes.levels {
        let pause = paced.then_some(pause);
        let mut samples = [Sample::default(), Sample::default(), Sample::default()];
        let mut used = [Duration::ZERO; 3];
        for _ in 0..sizes.turns {
            for ((sample, url), (pids, used)) in
                samples.iter_mut().zip(urls).zip(pids.iter().zip(&mut used))
            {
                let before = cpu(pids);
                let one = run(url, sessions, requests, sizes.bound, pause).await;
                *used += cpu(pids).saturating_sub(before);
                sample.times.extend(one.times);
                sample.took += one.took;
                sample.errors += one.errors;
                if sample.first_error.is_none() {
                    sample.first_error = one.first_error;
                }
            }
        }
        let stats: Vec<(Duration, Duration, f64)> = samples
            .iter_mut()
            .map(|sample| {
                sample.times.sort_unstable();
                let rate = sample.times.len() as f64 / sample.took.as_secs_f64();
                (
                    percentile(&sample.times, 50),
                    percentile(&sample.times, 99),
                    rate,
                )
            })
            .collect();
        let (d50, d99, drate) = stats[0];
        let (n50, n99, nrate) = stats[1];
        let (g50, g99, grate) = stats[2];
        let pause = pause.map_or_else(|| "none".to_owned(), |p| format!("{} ms", p.as_millis()));
        println!(
            "| {sessions} | {pause} | {} | {} ms | {} ms | {drate:.0} | {} ms | {} ms | {nrate:.0} \
             | {} ms | {} ms | {grate:.0} | {} ms | {} ms | {:.2} | {:.2} | {:.1} us | {:.1} us \
             | {} / {} / {} |",
            samples[2].times.len(),
            ms(d50),
            ms(d99),
            ms(n50),
            ms(n99),
            ms(g50),
            ms(g99),
            ms(g50.saturating_sub(d50)),
            ms(g99.saturating_sub(d99)),
            grate / nrate,
            grate / drate,
            used[1].as_secs_f64() * 1e6 / samples[1].times.len().max(1) as f64,
            used[2].as_secs_f64() * 1e6 / samples[2].times.len().max(1) as f64,
            samples[0].errors,
            samples[1].errors,
            samples[2].errors,
        );
        for (name, sample) in WAYS.iter().zip(&samples) {
            if let Some(e) = &sample.first_error {
                println!(
                    "  {name}: {} failed exchanges, the first: {e}",
                    sample.errors
                );
            }
        }
    }
}

async fn memory(sizes: Sizes, upstream: &str, lock: &Path) {
    let guard = Guard::start(lock, upstream);
    let http = client();
    // One whole session first, so what every session needs once (buffers, the runtime's
    // threads, the lock's tables) is already in the baseline.
    let warm = open(&http, &guard.url).await.expect("open a session");
    close(&http, &guard.url, &warm)
        .await
        .expect("close a session");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = guard.rss_kib();
    // Opened one after the other over one pooled connection: the sessions, not connections,
    // are what is measured.
    let mut open_sessions = Vec::with_capacity(sizes.idle);
    for _ in 0..sizes.idle {
        open_sessions.push(open(&http, &guard.url).await.expect("open a session"));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = guard.rss_kib();
    let per = (after.saturating_sub(before)) as f64 * 1024.0 / sizes.idle as f64;
    println!(
        "mcppin-guard resident memory (VmRSS): {before} KiB, {after} KiB with {} idle sessions \
         open: {per:.0} bytes per idle session",
        sizes.idle
    );
    for session in &open_sessions {
        close(&http, &guard.url, session)
            .await
            .expect("close a session");
    }
}

//! What `mcppin-guard --extmcp-listen` costs a gateway (docs/performance.md, "Guard inside a
//! gateway"): the time the gateway waits for the processor per `tools/list` of 1,000 tools and
//! per `tools/call` (both phases: the request, then the answer), and the processor's resident
//! memory per session.
//!
//! Run with `cargo bench -p mcppin-guard --bench extmcp`. This program plays the gateway: one
//! HTTP/2 connection on loopback, unary gRPC calls one after another, each phase's answer read
//! whole, as agentgateway waits for it. The whole round trip of a phase counts (loopback, the
//! HTTP/2 framing and the judgement), since the gateway waits for all of it. Every run is
//! bounded in count and in time.

use std::process::Command;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use mcppin_core::lockfile::Lockfile;
use mcppin_core::manifest::Manifest;
use mcppin_extmcp::{
    CHECK_REQUEST, CHECK_RESPONSE, McpRequest, McpRequestResult, McpResponse, McpResponseResult,
    Verdict, frame, metadata_str, string_struct, unframe,
};
use mcppin_testkit::{Listening, resident_kib};
use prost::Message;
use serde_json::{Value, json};

/// How much to measure: the full run under `cargo bench`, a smoke run under `cargo test`.
#[derive(Clone, Copy)]
struct Sizes {
    tools: usize,
    lists: usize,
    calls: usize,
    /// Sessions opened for the memory measurement (one `tools/list` each).
    sessions: usize,
    bound: Duration,
}

const FULL: Sizes = Sizes {
    tools: 1_000,
    lists: 300,
    calls: 5_000,
    sessions: 1_000,
    bound: Duration::from_secs(120),
};

const SMOKE: Sizes = Sizes {
    tools: 50,
    lists: 5,
    calls: 20,
    sessions: 5,
    bound: Duration::from_secs(20),
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let sizes = if args.iter().any(|a| a == "--bench") {
        FULL
    } else {
        SMOKE
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let lock = dir.path().join("bench.lock.json");
    std::fs::write(&lock, lock_bytes(sizes.tools)).expect("write lock");
    let processor = Processor::start(&lock);
    let mut gateway = Gateway::connect(&processor.listening.at);
    let list = shown(sizes.tools);
    println!(
        "tools/list of {} tools: a {}-byte result",
        sizes.tools,
        list.len()
    );

    let started = Instant::now();
    let mut lists = Vec::new();
    for _ in 0..sizes.lists {
        if started.elapsed() > sizes.bound {
            break;
        }
        let at = Instant::now();
        gateway.exchange("s-list", "tools/list", None, &list);
        lists.push(at.elapsed());
    }
    let mut calls = Vec::new();
    let params = r#"{"name":"tool-7","arguments":{"x":"hello"}}"#;
    let answer = r#"{"content":[{"type":"text","text":"hello"}]}"#;
    let started = Instant::now();
    for _ in 0..sizes.calls {
        if started.elapsed() > sizes.bound {
            break;
        }
        let at = Instant::now();
        gateway.exchange("s-list", "tools/call", Some(params), answer);
        calls.push(at.elapsed());
    }
    println!("| phase pair | count | p50 ms | p99 ms |");
    println!("|---|---|---|---|");
    for (name, mut times) in [
        (format!("tools/list of {} tools", sizes.tools), lists),
        ("tools/call".to_owned(), calls),
    ] {
        times.sort();
        println!(
            "| {name} | {} | {} | {} |",
            times.len(),
            ms(percentile(&times, 50)),
            ms(percentile(&times, 99))
        );
    }

    let before = processor.rss_kib();
    let started = Instant::now();
    let mut opened = 0;
    for n in 0..sizes.sessions {
        if started.elapsed() > sizes.bound {
            break;
        }
        gateway.exchange(&format!("s-{n}"), "tools/list", None, &list);
        opened += 1;
    }
    let after = processor.rss_kib();
    println!(
        "resident memory (VmRSS): {before} KiB, {after} KiB with {opened} more sessions, each \
         after one tools/list of {} tools: {:.1} KiB per session",
        sizes.tools,
        after.saturating_sub(before) as f64 / opened.max(1) as f64
    );
}

fn tools(count: usize) -> Vec<Value> {
    (0..count)
        .map(|i| {
            json!({"name": format!("tool-{i}"),
                   "description": format!("Does thing number {i} with the text it is given."),
                   "inputSchema": {"type": "object",
                                   "properties": {"x": {"type": "string"}},
                                   "required": ["x"]},
                   "execution": {"taskSupport": "forbidden"}})
        })
        .collect()
}

fn lock_bytes(count: usize) -> Vec<u8> {
    let manifest = json!({"schema_version": 2, "complete": true, "servers": [
        {"id": "bench", "reported_name": "mcppin-bench", "tools": tools(count)}]});
    let manifest = Manifest::parse(manifest.to_string().as_bytes()).expect("manifest");
    Lockfile::approve(None, &manifest, &[])
        .expect("approve")
        .to_bytes()
}

/// The list as the gateway shows it: `execution` dropped, its own list members added.
fn shown(count: usize) -> String {
    let tools: Vec<Value> = tools(count)
        .into_iter()
        .map(|mut t| {
            t.as_object_mut().expect("object").remove("execution");
            t
        })
        .collect();
    json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": tools})
        .to_string()
}

/// The processor under measurement, killed when dropped.
struct Processor {
    listening: Listening,
}

impl Processor {
    fn start(lock: &std::path::Path) -> Self {
        let listening = Listening::start(
            Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
                .arg("--lock")
                .arg(lock)
                .args(["--extmcp-listen", "127.0.0.1:0", "--target", "bench"]),
        );
        Self { listening }
    }

    fn rss_kib(&self) -> u64 {
        resident_kib(self.listening.id())
    }
}

struct Gateway {
    send: hyper::client::conn::http2::SendRequest<Full<Bytes>>,
    runtime: tokio::runtime::Runtime,
}

impl Gateway {
    fn connect(addr: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let send = runtime.block_on(async {
            let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
            stream.set_nodelay(true).expect("nodelay");
            let (send, connection) =
                hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .max_frame_size(1 << 20)
                    .initial_stream_window_size(8 << 20)
                    .initial_connection_window_size(8 << 20)
                    .handshake(hyper_util::rt::TokioIo::new(stream))
                    .await
                    .expect("h2 handshake");
            tokio::spawn(connection);
            send
        });
        Self { send, runtime }
    }

    fn call(&mut self, path: &str, message: Vec<u8>) -> Vec<u8> {
        let request = Request::post(format!("http://processor{path}"))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(Full::new(Bytes::from(frame(&message).expect("frame"))))
            .expect("request");
        let send = &mut self.send;
        self.runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(30), async {
                let response = send.send_request(request).await.expect("call");
                let body = response.into_body().collect().await.expect("body");
                unframe(&body.to_bytes(), 1 << 24)
                    .expect("one message")
                    .to_vec()
            })
            .await
            .expect("the processor answers within 30 s")
        })
    }

    /// Both phases of one request; panics unless both pass.
    fn exchange(&mut self, session: &str, method: &str, params: Option<&str>, result: &str) {
        let request = McpRequest {
            service_names: vec!["bench".into()],
            method: method.into(),
            metadata_context: Some(string_struct([("session", session.to_owned())])),
            mcp_request: params.map(|p| p.as_bytes().to_vec()),
        };
        let asked =
            McpRequestResult::decode(&self.call(CHECK_REQUEST, request.encode_to_vec())[..])
                .expect("McpRequestResult");
        assert!(matches!(asked.result, Some(Verdict::Pass(_))), "{asked:?}");
        let token = metadata_str(asked.metadata.as_ref(), "mcppin").expect("mcppin metadata");
        let response = McpResponse {
            service_names: vec!["bench".into()],
            method: method.into(),
            metadata_context: Some(string_struct([
                ("session", session.to_owned()),
                ("mcppin", token.to_owned()),
            ])),
            mcp_response: result.as_bytes().to_vec(),
        };
        let answered =
            McpResponseResult::decode(&self.call(CHECK_RESPONSE, response.encode_to_vec())[..])
                .expect("McpResponseResult");
        assert!(
            matches!(answered.result, Some(Verdict::Pass(_))),
            "{answered:?}"
        );
    }
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    let i = (sorted.len() * p / 100).min(sorted.len().saturating_sub(1));
    sorted.get(i).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

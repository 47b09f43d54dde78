//! Two `mcppin-guard --listen` replicas behind nginx with the configuration of docs/guard.md
//! ("Replicas behind nginx"), read from the page so the two cannot drift apart: whole sessions
//! of the MCP TypeScript SDK run through it to the reference `server-everything`, and stateless
//! (2026-07-28) requests to the fixture server.
//!
//! Skipped, with a message, where nginx is not installed (`.ci/run` installs it).

mod peers;
mod util;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use peers::{
    Proc, everything_http, free_port, guard_http, guard_http_for, installed, lock_everything,
    path_var,
};
use serde_json::{Value, json};

/// The addresses in the documented configuration: nginx's, then the two replicas'.
const FRONT: &str = "127.0.0.1:8080";
const REPLICAS: [&str; 2] = ["127.0.0.1:8101", "127.0.0.1:8102"];

/// Concurrent sessions per run: enough that both replicas carry some (the chance that all land
/// on one is 2 in 2^SESSIONS).
const SESSIONS: usize = 16;

fn nginx() -> Option<PathBuf> {
    let path = path_var();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin")])
        .map(|dir| dir.join("nginx"))
        .find(|p| p.is_file())
}

/// The one `nginx` block of docs/guard.md.
fn documented_config() -> String {
    let doc = std::fs::read_to_string(peers::root().join("docs/guard.md")).expect("docs/guard.md");
    let blocks: Vec<&str> = doc
        .split("```nginx\n")
        .skip(1)
        .map(|rest| rest.split("\n```").next().expect("a closed block"))
        .collect();
    assert_eq!(
        blocks.len(),
        1,
        "docs/guard.md shows one nginx configuration"
    );
    blocks[0].to_owned()
}

/// Replaces `from` by `to` in `text`, where `from` appears exactly once.
#[track_caller]
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "the configuration of docs/guard.md names {from} once:\n{text}"
    );
    text.replace(from, to)
}

/// nginx in the foreground, one process (killing it leaves no worker behind), with the
/// documented configuration, listening on `front` and
/// balancing over `replicas`; every request is logged as
/// `session id sent|session id answered|upstream addresses tried|upstream statuses|status|method`
/// in `routed.log`.
fn start_nginx(dir: &Path, nginx: &Path, front: &str, replicas: [&str; 2]) -> Proc {
    let mut site = replace_once(&documented_config(), FRONT, front);
    for (documented, actual) in REPLICAS.iter().zip(replicas) {
        site = replace_once(&site, documented, actual);
    }
    std::fs::write(dir.join("mcppin-guard.conf"), site).expect("write the site");
    let d = dir.display();
    let main = format!(
        "daemon off;\n\
         master_process off;\n\
         pid {d}/nginx.pid;\n\
         error_log {d}/error.log info;\n\
         events {{ worker_connections 1024; }}\n\
         http {{\n\
         \x20   log_format routed '$http_mcp_session_id|$upstream_http_mcp_session_id|$upstream_addr|$upstream_status|$status|$request_method';\n\
         \x20   access_log {d}/routed.log routed;\n\
         \x20   client_body_temp_path {d}/body;\n\
         \x20   proxy_temp_path {d}/proxy;\n\
         \x20   fastcgi_temp_path {d}/fastcgi;\n\
         \x20   uwsgi_temp_path {d}/uwsgi;\n\
         \x20   scgi_temp_path {d}/scgi;\n\
         \x20   include {d}/mcppin-guard.conf;\n\
         }}\n"
    );
    std::fs::write(dir.join("nginx.conf"), main).expect("write nginx.conf");
    let port: u16 = front
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("a port");
    let mut proc = Proc::start(
        dir,
        "nginx",
        Command::new(nginx)
            .arg("-p")
            .arg(dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(dir.join("nginx.conf")),
    );
    proc.wait_listening(port);
    proc
}

/// Runs `count` concurrent whole sessions of the SDK client against `url`.
fn sessions(dir: &Path, url: &str, count: usize) -> Vec<Value> {
    let script = installed(
        "sdk-client",
        "sessions.mjs",
        "npm ci --prefix testdata/sdk-client --ignore-scripts",
    );
    installed(
        "sdk-client",
        "node_modules/@modelcontextprotocol/sdk/package.json",
        "npm ci --prefix testdata/sdk-client --ignore-scripts",
    );
    let out = Command::new("node")
        .arg(script)
        .arg(url)
        .arg(count.to_string())
        .current_dir(dir)
        .env_clear()
        .env("PATH", path_var())
        .output()
        .expect("node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "sessions.mjs: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_str(stdout.trim()).expect("summary is JSON");
    summary["sessions"].as_array().expect("sessions").clone()
}

/// Per session id, the replica that answered each of its requests (the last address nginx
/// tried), from `routed.log`; the `initialize` that opened the session is the request without
/// a session id whose answer carried it.
/// Each entry is (replica, whether the request opened the session).
fn routes(dir: &Path) -> BTreeMap<String, Vec<(String, bool)>> {
    let log = std::fs::read_to_string(dir.join("routed.log")).expect("routed.log");
    let mut out = BTreeMap::<String, Vec<(String, bool)>>::new();
    let given = |id: &str| !id.is_empty() && id != "-";
    for line in log.lines() {
        let fields: Vec<&str> = line.split('|').collect();
        let [sent, answered, tried, _, status, _] = fields[..] else {
            panic!("unexpected log line {line:?}");
        };
        let session = if given(sent) { sent } else { answered };
        if !given(session) || !status.starts_with('2') {
            continue;
        }
        let last = tried.rsplit(", ").next().unwrap_or(tried).to_owned();
        out.entry(session.to_owned())
            .or_default()
            .push((last, !given(sent)));
    }
    out
}

#[test]
fn whole_sessions_through_nginx_stay_on_one_replica() {
    let Some(nginx) = nginx() else {
        eprintln!("SKIPPED: nginx is not installed (apt-get install nginx; .ci/run installs it)");
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let dir = dir.path();
    let lock = lock_everything(dir, |_| {});
    let (_server, upstream) = everything_http(dir);
    let (guard_a, url_a) = guard_http(dir, &lock, &upstream, &[]);
    let (guard_b, url_b) = guard_http(dir, &lock, &upstream, &[]);
    let replica = |url: &str| {
        url.trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned()
    };
    let replicas = [replica(&url_a), replica(&url_b)];
    let front = format!("127.0.0.1:{}", free_port());
    let _nginx = start_nginx(dir, &nginx, &front, [&replicas[0], &replicas[1]]);

    let sessions = sessions(dir, &format!("http://{front}/mcp"), SESSIONS);
    let logs = || {
        format!(
            "--- guard A\n{}\n--- guard B\n{}",
            guard_a.log(),
            guard_b.log()
        )
    };
    assert_eq!(sessions.len(), SESSIONS);
    let mut ids = BTreeSet::new();
    for session in &sessions {
        assert!(session.get("error").is_none(), "{session}\n{}", logs());
        let n = &session["n"];
        let steps = session["steps"].as_array().expect("steps");
        let tools = steps[0]["tools"].as_array().expect("tools");
        assert!(tools.iter().any(|t| t == "echo"), "{session}");
        assert_eq!(steps[1]["echo"], format!("Echo: session {n}"), "{session}");
        assert_eq!(steps[2]["tools"], steps[0]["tools"], "{session}");
        assert_eq!(steps[3]["terminated"], true, "{session}");
        let id = session["session_id"].as_str().expect("a session id");
        assert!(ids.insert(id.to_owned()), "two sessions with id {id}");
    }

    // nginx's own record: each session's requests, its initialize first, all ended at one
    // replica, and both replicas carried sessions.
    let routes = routes(dir);
    let mut carriers = BTreeSet::new();
    for id in &ids {
        let served = routes
            .get(id)
            .unwrap_or_else(|| panic!("no request of {id} logged"));
        assert_eq!(
            served.iter().filter(|(_, opened)| *opened).count(),
            1,
            "session {id}: one initialize logged: {served:?}"
        );
        let first = &served[0].0;
        assert!(
            served.iter().all(|(r, _)| r == first),
            "session {id} answered by {served:?}"
        );
        carriers.insert(first.clone());
    }
    assert_eq!(
        carriers,
        replicas.iter().cloned().collect::<BTreeSet<_>>(),
        "both replicas carry sessions"
    );
}

#[test]
fn a_drifted_surface_is_refused_through_nginx() {
    // The replicas behind nginx still judge: with a lock whose `echo` wording differs from
    // what the server serves, every session's first list is refused.
    let Some(nginx) = nginx() else {
        eprintln!("SKIPPED: nginx is not installed (apt-get install nginx; .ci/run installs it)");
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let dir = dir.path();
    let lock = lock_everything(dir, peers::edit_echo);
    let (_server, upstream) = everything_http(dir);
    let (_guard_a, url_a) = guard_http(dir, &lock, &upstream, &[]);
    let (_guard_b, url_b) = guard_http(dir, &lock, &upstream, &[]);
    let replica = |url: &str| {
        url.trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned()
    };
    let front = format!("127.0.0.1:{}", free_port());
    let _nginx = start_nginx(dir, &nginx, &front, [&replica(&url_a), &replica(&url_b)]);

    let sessions = sessions(dir, &format!("http://{front}/mcp"), 4);
    for session in &sessions {
        let message = session["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("mcppin-guard refused tools/list"),
            "{session}"
        );
    }
}

/// POSTs a stateless (2026-07-28) `tools/list` to `url`; returns the status and the body.
fn stateless_list(url: &str, id: u64) -> (u16, String) {
    let uri: hyper::Uri = url.parse().expect("a URL");
    let authority = uri.authority().expect("an authority").as_str().to_owned();
    let message = util::request(
        id,
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    );
    let request = Request::post(uri.path())
        .header("host", &authority)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-method", "tools/list")
        .header("mcp-protocol-version", "2026-07-28")
        .body(Full::new(Bytes::from(message.to_string())))
        .expect("a request");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let exchange = async {
            let stream = tokio::net::TcpStream::connect(&authority)
                .await
                .expect("connect");
            let (mut sender, connection) =
                hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                    .await
                    .expect("handshake");
            tokio::spawn(connection);
            let response = sender.send_request(request).await.expect("an answer");
            let status = response.status().as_u16();
            let body = response
                .into_body()
                .collect()
                .await
                .expect("a body")
                .to_bytes();
            (status, String::from_utf8_lossy(&body).into_owned())
        };
        tokio::time::timeout(Duration::from_secs(30), exchange)
            .await
            .expect("an answer within 30 s")
    })
}

#[test]
fn stateless_requests_through_nginx_need_no_affinity() {
    // 2026-07-28 requests carry no session id: the documented configuration spreads them over
    // both replicas, and each is judged and answered wherever it lands.
    let Some(nginx) = nginx() else {
        eprintln!("SKIPPED: nginx is not installed (apt-get install nginx; .ci/run installs it)");
        return;
    };
    let dir = util::Dir::new();
    let lock = dir.lock(&mcppin_fixture::surface(false));
    let port = free_port();
    let mut server = Proc::start(
        dir.path(),
        "fixture",
        Command::new(mcppin_fixture::locate_example("mcppin-fixture")).args([
            "--http",
            &format!("127.0.0.1:{port}"),
            "--era",
            "modern",
        ]),
    );
    server.wait_listening(port);
    let upstream = format!("http://127.0.0.1:{port}/mcp");
    let (_guard_a, url_a) = guard_http_for(dir.path(), &lock, "fixture", &upstream, &[]);
    let (_guard_b, url_b) = guard_http_for(dir.path(), &lock, "fixture", &upstream, &[]);
    let replica = |url: &str| {
        url.trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned()
    };
    let replicas = [replica(&url_a), replica(&url_b)];
    let front = format!("127.0.0.1:{}", free_port());
    let _nginx = start_nginx(dir.path(), &nginx, &front, [&replicas[0], &replicas[1]]);

    for id in 1..=SESSIONS as u64 {
        let (status, body) = stateless_list(&format!("http://{front}/mcp"), id);
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert_eq!(answer["id"], id, "{answer}");
        assert!(answer["result"]["tools"].is_array(), "{answer}");
    }
    let log = std::fs::read_to_string(dir.path().join("routed.log")).expect("routed.log");
    let served: BTreeSet<&str> = log
        .lines()
        .filter_map(|line| line.split('|').nth(2))
        .collect();
    assert_eq!(
        served,
        replicas.iter().map(String::as_str).collect::<BTreeSet<_>>(),
        "both replicas answer stateless requests, none is tried twice:\n{log}"
    );
}

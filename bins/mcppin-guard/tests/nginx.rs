//! Two `mcppin-guard --listen` replicas (`--replica r1`, `--replica r2`) behind nginx with the
//! configuration of docs/guard.md ("Replicas behind nginx"), read from the page so the two
//! cannot drift apart: whole sessions of the MCP TypeScript SDK run through it to the reference
//! `server-everything`, each request of a session routed by its tag straight to its replica;
//! stateless (2026-07-28) requests and a replica that stops, with the fixture server.
//!
//! Fails, naming the install, where nginx is not installed (`.ci/run` installs it).

mod peers;
mod util;

use std::collections::BTreeSet;
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

/// The addresses in the documented configuration: nginx's, then the two replicas' (each named
/// in the pool and in its own group).
const FRONT: &str = "127.0.0.1:8080";
const REPLICAS: [&str; 2] = ["127.0.0.1:8101", "127.0.0.1:8102"];
/// The tags the documented configuration routes on, replica by replica.
const TAGS: [&str; 2] = ["r1", "r2"];

/// Concurrent sessions per run: enough that both replicas carry some (the chance that all land
/// on one is 2 in 2^SESSIONS).
const SESSIONS: usize = 16;

fn nginx() -> PathBuf {
    let path = path_var();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin")])
        .map(|dir| dir.join("nginx"))
        .find(|p| p.is_file())
        .expect("nginx is not installed: apt-get install nginx (a step of .ci/run)")
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

/// Replaces `from` by `to` in `text`, where `from` appears exactly `times` times.
#[track_caller]
fn replace(text: &str, from: &str, to: &str, times: usize) -> String {
    assert_eq!(
        text.matches(from).count(),
        times,
        "the configuration of docs/guard.md names {from} {times} times:\n{text}"
    );
    text.replace(from, to)
}

/// nginx in the foreground, one process (killing it leaves no worker behind), with the
/// documented configuration, listening on `front` and
/// balancing over `replicas`; every request is logged as
/// `session id sent|session id answered|upstream addresses tried|upstream statuses|status|method`
/// in `routed.log`.
fn start_nginx(dir: &Path, nginx: &Path, front: &str, replicas: [&str; 2]) -> Proc {
    let mut site = replace(&documented_config(), FRONT, front, 1);
    for (documented, actual) in REPLICAS.iter().zip(replicas) {
        site = replace(&site, documented, actual, 2);
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
    // Many sessions of a real client, each a process of its own: a wider bound than one run's.
    let out = mcppin_testkit::output_within(
        Command::new("node")
            .arg(script)
            .arg(url)
            .arg(count.to_string())
            .current_dir(dir)
            .env_clear()
            .env("PATH", path_var()),
        Duration::from_secs(120),
    )
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

/// One request as nginx logged it.
#[derive(Debug)]
struct Routed {
    /// The `Mcp-Session-Id` the client sent, or the one the answer carried (the request that
    /// opened the session); empty for neither.
    session: String,
    /// Whether the request opened the session (it sent no id).
    opened: bool,
    /// The upstream addresses nginx tried, in order.
    tried: Vec<String>,
    status: String,
    method: String,
}

impl Routed {
    /// Whether the replica answered, or the client's own GET stream ended with its session:
    /// the SDK client opens the stream beside its first requests and drops it when it ends the
    /// session, so the GET races the DELETE. It ends with nginx's 499 (the client closed it)
    /// or the replica's 404 (the session ended before the server answered it, or before it
    /// arrived); routing is checked apart (`tried`).
    fn answered(&self) -> bool {
        self.status.starts_with('2')
            || (self.method == "GET" && (self.status == "499" || self.status == "404"))
    }
}

/// Every request nginx logged in `routed.log`.
fn routed(dir: &Path) -> Vec<Routed> {
    let log = std::fs::read_to_string(dir.join("routed.log")).expect("routed.log");
    let given = |id: &str| !id.is_empty() && id != "-";
    log.lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('|').collect();
            let [sent, answered, tried, _, status, method] = fields[..] else {
                panic!("unexpected log line {line:?}");
            };
            let session = if given(sent) { sent } else { answered };
            Routed {
                session: if given(session) { session } else { "" }.to_owned(),
                opened: !given(sent),
                tried: tried.split(", ").map(str::to_owned).collect(),
                status: status.to_owned(),
                method: method.to_owned(),
            }
        })
        .collect()
}

/// Asserts that nginx sent every request to one replica, the first it tried: no request
/// went to a replica that does not hold its session and on to another.
#[track_caller]
fn one_hop_each(routed: &[Routed]) {
    for request in routed {
        assert_eq!(
            request.tried.len(),
            1,
            "tried twice: {request:?}\n{routed:#?}"
        );
    }
}

#[test]
fn whole_sessions_through_nginx_stay_on_one_replica() {
    let nginx = nginx();
    let dir = tempfile::tempdir().expect("temp dir");
    let dir = dir.path();
    let lock = lock_everything(dir, |_| {});
    let (_server, upstream) = everything_http(dir);
    let (guard_a, url_a) = guard_http(dir, &lock, &upstream, &["--replica", TAGS[0]]);
    let (guard_b, url_b) = guard_http(dir, &lock, &upstream, &["--replica", TAGS[1]]);
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

    // nginx's own record: no request was tried at two replicas; each session's requests,
    // its initialize among them, went to one replica, the one its tag names; both replicas
    // carried sessions.
    let routed = routed(dir);
    one_hop_each(&routed);
    let mut carriers = BTreeSet::new();
    for id in &ids {
        let served: Vec<&Routed> = routed.iter().filter(|r| &r.session == id).collect();
        assert_eq!(
            served.iter().filter(|r| r.opened).count(),
            1,
            "session {id}: one initialize logged: {served:?}"
        );
        assert!(served.len() > 1, "session {id}: {served:?}");
        let tag = id.split('.').next().unwrap_or_default();
        let at = TAGS
            .iter()
            .position(|t| *t == tag)
            .unwrap_or_else(|| panic!("session {id} carries no replica's tag"));
        assert!(
            served
                .iter()
                .all(|r| r.tried == [replicas[at].clone()] && r.answered()),
            "session {id} (tag {tag}, replica {}): {served:?}",
            replicas[at]
        );
        carriers.insert(at);
    }
    assert_eq!(carriers.len(), 2, "both replicas carry sessions: {ids:?}");
}

#[test]
fn a_drifted_surface_is_refused_through_nginx() {
    // The replicas behind nginx still judge: with a lock whose `echo` wording differs from
    // what the server serves, every session's first list is refused.
    let nginx = nginx();
    let dir = tempfile::tempdir().expect("temp dir");
    let dir = dir.path();
    let lock = lock_everything(dir, peers::edit_echo);
    let (_server, upstream) = everything_http(dir);
    let (_guard_a, url_a) = guard_http(dir, &lock, &upstream, &["--replica", TAGS[0]]);
    let (_guard_b, url_b) = guard_http(dir, &lock, &upstream, &["--replica", TAGS[1]]);
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
    one_hop_each(&routed(dir));
}

/// A replica's address as nginx names it: the host and port of its URL.
fn replica(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned()
}

/// One answer through nginx.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: hyper::HeaderMap,
    body: String,
}

/// POSTs `message` to `url` with `headers` (and the JSON ones); bounded in time.
fn post(url: &str, headers: &[(&str, &str)], message: &Value) -> Answer {
    let uri: hyper::Uri = url.parse().expect("a URL");
    let authority = uri.authority().expect("an authority").as_str().to_owned();
    let mut request = Request::post(uri.path())
        .header("host", &authority)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request
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
            let headers = response.headers().clone();
            let body = response
                .into_body()
                .collect()
                .await
                .expect("a body")
                .to_bytes();
            Answer {
                status,
                headers,
                body: String::from_utf8_lossy(&body).into_owned(),
            }
        };
        tokio::time::timeout(Duration::from_secs(30), exchange)
            .await
            .expect("an answer within 30 s")
    })
}

/// POSTs a stateless (2026-07-28) `tools/list` to `url`.
fn stateless_list(url: &str, id: u64) -> Answer {
    let message = util::request(
        id,
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    );
    post(
        url,
        &[
            ("mcp-method", "tools/list"),
            ("mcp-protocol-version", "2026-07-28"),
        ],
        &message,
    )
}

/// The fixture server over HTTP (`--era` as given), and its endpoint.
fn fixture_http(dir: &Path, era: &str) -> (Proc, String) {
    let port = free_port();
    let mut server = Proc::start(
        dir,
        "fixture",
        Command::new(mcppin_fixture::locate("guard-fixture")).args([
            "--http",
            &format!("127.0.0.1:{port}"),
            "--era",
            era,
        ]),
    );
    server.wait_listening(port);
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

#[test]
fn stateless_requests_through_nginx_need_no_affinity() {
    // 2026-07-28 requests carry no session id: the documented configuration spreads them over
    // both replicas, and each is judged and answered wherever it lands.
    let nginx = nginx();
    let dir = util::Dir::new();
    let lock = dir.lock(&mcppin_fixture::surface(false));
    let (_server, upstream) = fixture_http(dir.path(), "modern");
    let guard =
        |tag: &str| guard_http_for(dir.path(), &lock, "fixture", &upstream, &["--replica", tag]);
    let (_guard_a, url_a) = guard(TAGS[0]);
    let (_guard_b, url_b) = guard(TAGS[1]);
    let replicas = [replica(&url_a), replica(&url_b)];
    let front = format!("127.0.0.1:{}", free_port());
    let _nginx = start_nginx(dir.path(), &nginx, &front, [&replicas[0], &replicas[1]]);

    for id in 1..=SESSIONS as u64 {
        let answered = stateless_list(&format!("http://{front}/mcp"), id);
        assert_eq!(answered.status, 200, "{answered:?}");
        assert!(
            !answered.headers.contains_key("mcp-session-id"),
            "{answered:?}"
        );
        let answer: Value =
            serde_json::from_str(&answered.body).unwrap_or_else(|e| panic!("{e}: {answered:?}"));
        assert_eq!(answer["id"], id, "{answer}");
        assert!(answer["result"]["tools"].is_array(), "{answer}");
    }
    let routed = routed(dir.path());
    one_hop_each(&routed);
    let served: BTreeSet<&str> = routed.iter().map(|r| r.tried[0].as_str()).collect();
    assert_eq!(
        served,
        replicas.iter().map(String::as_str).collect::<BTreeSet<_>>(),
        "both replicas answer stateless requests: {routed:#?}"
    );
}

#[test]
fn a_session_whose_replica_stopped_gets_404_through_nginx() {
    // Its pins lived in the replica: the session is gone, and 404 tells the client to open a
    // new one, which the pool gives to the replica still running.
    let nginx = nginx();
    let dir = util::Dir::new();
    let lock = dir.lock(&mcppin_fixture::surface(false));
    let (_server, upstream) = fixture_http(dir.path(), "legacy");
    let guard =
        |tag: &str| guard_http_for(dir.path(), &lock, "fixture", &upstream, &["--replica", tag]);
    let mut guards = [Some(guard(TAGS[0])), Some(guard(TAGS[1]))];
    let replicas = guards
        .each_ref()
        .map(|g| replica(&g.as_ref().expect("a guard").1));
    let front = format!("127.0.0.1:{}", free_port());
    let _nginx = start_nginx(dir.path(), &nginx, &front, [&replicas[0], &replicas[1]]);
    let url = format!("http://{front}/mcp");
    let list = |session: &str| {
        post(
            &url,
            &[("mcp-session-id", session)],
            &util::request(2, "tools/list", json!({})),
        )
    };
    let open = || {
        let answer = post(&url, &[], &util::initialize(1));
        assert_eq!(answer.status, 200, "{answer:?}");
        answer
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("a session id")
            .to_owned()
    };

    // Round robin: two new sessions, one on each replica.
    let sessions = [open(), open()];
    let tags: BTreeSet<&str> = sessions
        .iter()
        .map(|s| s.split('.').next().unwrap_or_default())
        .collect();
    assert_eq!(tags, TAGS.into_iter().collect(), "{sessions:?}");
    for session in &sessions {
        assert_eq!(list(session).status, 200, "{session}");
    }
    let (gone, kept) = if sessions[0].starts_with("r1.") {
        (&sessions[0], &sessions[1])
    } else {
        (&sessions[1], &sessions[0])
    };

    // r1 stops.
    drop(guards[0].take());
    let answer = list(gone);
    assert_eq!(answer.status, 404, "{answer:?}");
    let error: Value =
        serde_json::from_str(&answer.body).unwrap_or_else(|e| panic!("{e}: {answer:?}"));
    assert_eq!(
        error["error"]["message"], "the session ended: its replica is gone",
        "{answer:?}"
    );
    assert_eq!(
        list(kept).status,
        200,
        "the other replica's session goes on"
    );
    let reopened = open();
    assert!(reopened.starts_with("r2."), "{reopened}");
    assert_eq!(list(&reopened).status, 200);

    // No replica left: a new session is not told its session ended, it is told no replica
    // could take it.
    drop(guards[1].take());
    let answer = post(&url, &[], &util::initialize(1));
    assert_eq!(answer.status, 502, "{answer:?}");
    assert_eq!(list(&reopened).status, 404);
}

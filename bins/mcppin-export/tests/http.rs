//! Remote servers exported over HTTP by the real binary: the reference server-everything over
//! Streamable HTTP and HTTP+SSE (the same surface as over stdio), and small in-test HTTP
//! servers for failures. No secret of the configuration reaches stdout, stderr or the
//! manifest.

mod util;

use mcppin_testkit::peer;

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::Duration;

use peer::{Peer, Request, json_server, mcp_answer, respond, respond_json, start_events};
use util::{Dir, Run, fixture, json_string};

const SECRET: &str = "tok-5ecret-value-9731";
const QUERY_SECRET: &str = "qs-k3y-00417";

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

fn path_var() -> String {
    std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".to_owned())
}

/// Exports `config.json` with the secret in the environment (`TOKEN`, `KEY`).
fn export(dir: &Dir, extra: &[&str]) -> Run {
    let path = path_var();
    let mut args = vec!["--config", "config.json", "-o", "manifest.json"];
    args.extend_from_slice(extra);
    dir.export_env(
        &args,
        &[
            ("PATH", path.as_str()),
            ("HOME", &dir.path().to_string_lossy()),
            ("TOKEN", SECRET),
            ("KEY", QUERY_SECRET),
        ],
    )
}

/// Asserts that no output of the run, and no file in the directory, holds a secret.
#[track_caller]
fn assert_no_secret(dir: &Dir, run: &Run) {
    for secret in [SECRET, QUERY_SECRET] {
        assert!(
            !run.stdout.contains(secret) && !run.stderr.contains(secret),
            "{secret} shown\n--- stdout\n{}\n--- stderr\n{}",
            run.stdout,
            run.stderr
        );
        for entry in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == "config.json" {
                continue;
            }
            let bytes = std::fs::read(entry.path()).unwrap_or_default();
            assert!(
                memchr_find(&bytes, secret.as_bytes()).is_none(),
                "{secret} written to {name}"
            );
        }
    }
}

fn memchr_find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn tools_of(dir: &Dir, id: &str) -> serde_json::Value {
    let manifest: serde_json::Value = serde_json::from_slice(&dir.read("manifest.json")).unwrap();
    let server = manifest["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no server {id} in {manifest}"))
        .clone();
    server["tools"].clone()
}

#[test]
fn exports_server_everything_over_streamable_http_as_over_stdio() {
    let everything = Everything::start("streamableHttp");
    let dir = Dir::new();
    // Claude Code's .mcp.json shape: `type: http`, headers with ${VAR}; the stdio entry runs
    // the same server.
    dir.write(
        "config.json",
        format!(
            r#"{{"mcpServers": {{
              "remote": {{"type": "http", "url": {},
                          "headers": {{"Authorization": "Bearer ${{TOKEN}}"}}}},
              "local": {{"command": "node", "args": [{}, "stdio"]}}
            }}}}"#,
            json_string(&format!("{}?key=${{KEY}}", everything.url("/mcp"))),
            json_string(&everything_script().to_string_lossy())
        ),
    );
    let run = export(&dir, &["--verbose"]);
    run.code(0)
        .stderr_has("server \"remote\": ")
        .stderr_has("over 2025-11-25, 2 readings agree")
        .stderr_has("server \"local\": ");
    let remote = tools_of(&dir, "remote");
    assert!(remote.to_string().contains("\"echo\""), "{remote}");
    assert_eq!(remote, tools_of(&dir, "local"));
    assert_no_secret(&dir, &run);
}

#[test]
fn auto_falls_back_to_initialize_on_server_everything_over_http() {
    let everything = Everything::start("streamableHttp");
    let dir = Dir::new();
    dir.write(
        "config.json",
        format!(
            r#"{{"mcpServers": {{"remote": {{"url": {}}}}}}}"#,
            json_string(&everything.url("/mcp"))
        ),
    );
    export(&dir, &["--protocol", "auto"])
        .code(0)
        .stderr_has("server \"remote\": ")
        .stderr_has(" resource templates over 2025-11-25, 2 readings agree");
}

#[test]
fn exports_server_everything_over_http_sse() {
    let everything = Everything::start("sse");
    let dir = Dir::new();
    // VS Code's shape: `servers` with `type: sse`, beside the same server over stdio.
    dir.write(
        "config.json",
        format!(
            r#"{{"servers": {{"legacy": {{"type": "sse", "url": {},
                 "headers": {{"X-Api-Key": "${{env:TOKEN}}"}}}},
                 "local": {{"type": "stdio", "command": "node", "args": [{}, "stdio"]}}}}}}"#,
            json_string(&everything.url("/sse")),
            json_string(&everything_script().to_string_lossy())
        ),
    );
    let run = export(&dir, &["--protocol", "2024-11-05"]);
    run.code(0)
        .stderr_has("server \"legacy\": ")
        .stderr_has(" resource templates over 2024-11-05, 2 readings agree");
    assert_eq!(tools_of(&dir, "legacy"), tools_of(&dir, "local"));
    assert_no_secret(&dir, &run);
}

#[test]
fn detects_http_sse_on_server_everything_when_no_type_is_given() {
    let everything = Everything::start("sse");
    let dir = Dir::new();
    // Cursor's shape: a bare url. The first POST is refused as an HTTP+SSE server refuses it.
    dir.write(
        "config.json",
        format!(
            r#"{{"mcpServers": {{"docs": {{"url": {}}}}}}}"#,
            json_string(&everything.url("/sse"))
        ),
    );
    export(&dir, &["--protocol", "auto"])
        .code(0)
        .stderr_has("server \"docs\": ")
        .stderr_has(" resource templates over 2025-11-25, 2 readings agree");
}

#[test]
fn exports_a_2026_07_28_server_statelessly() {
    let peer = Peer::start(|request: &Request, stream: &mut TcpStream| {
        // A modern server refuses a request whose mirrored headers disagree with its body.
        let body = request.json();
        let revision = &body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"];
        if request.header("mcp-method") != body["method"].as_str()
            || request.header("mcp-protocol-version") != revision.as_str()
        {
            return respond(stream, "400 Bad Request", &[], b"");
        }
        respond_json(stream, &[], &mcp_answer(request).unwrap());
    });
    let dir = Dir::new();
    remote_config(&dir, &peer);
    let run = export(&dir, &["--protocol", "2026-07-28"]);
    run.code(0)
        .stderr_has("server \"web\": 2 tools, 0 prompts, 0 resource templates over 2026-07-28, 2 readings agree");
    assert!(peer.requests().iter().all(|r| r.method == "POST"));
    assert_no_secret(&dir, &run);
}

#[test]
fn one_unreachable_remote_server_fails_the_whole_export() {
    let dir = Dir::new();
    let closed = peer::free_port();
    dir.write(
        "config.json",
        format!(
            r#"{{"mcpServers": {{
              "a-good": {{"command": {}, "args": ["--pid-file", {}]}},
              "web": {{"url": "http://127.0.0.1:{closed}/mcp?key=${{KEY}}",
                       "headers": {{"Authorization": "Bearer ${{TOKEN}}"}}}}
            }}}}"#,
            json_string(&fixture().to_string_lossy()),
            json_string(&dir.path().join("a-good.pid").to_string_lossy())
        ),
    );
    let run = export(&dir, &[]);
    run.code(3)
        .stderr_has("server \"web\" could not be captured: http error while sending initialize");
    assert!(!dir.exists("manifest.json"));
    dir.assert_gone("a-good");
    assert_no_secret(&dir, &run);
}

fn remote_config(dir: &Dir, peer: &Peer) {
    dir.write(
        "config.json",
        format!(
            r#"{{"mcpServers": {{"web": {{"type": "http", "url": {},
                 "headers": {{"Authorization": "Bearer ${{TOKEN}}"}}}}}}}}"#,
            json_string(&format!("{}?key=${{KEY}}", peer.url("/mcp")))
        ),
    );
}

#[test]
fn exports_a_remote_server_and_records_no_secret() {
    let peer = Peer::start(json_server);
    let dir = Dir::new();
    remote_config(&dir, &peer);
    let run = export(&dir, &["--verbose"]);
    run.code(0)
        .stderr_has("server \"web\": 2 tools, 0 prompts, 0 resource templates over 2025-11-25, 2 readings agree");
    assert_no_secret(&dir, &run);
    // The secrets went to the server, and only there.
    let first = &peer.requests()[0];
    assert_eq!(
        first.header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );
    assert!(first.target.ends_with(&format!("?key={QUERY_SECRET}")));
    // Its launch identity is the URL as configured, without the query that carries a key.
    let manifest: serde_json::Value = serde_json::from_slice(&dir.read("manifest.json")).unwrap();
    assert_eq!(
        manifest["servers"][0]["launch"],
        serde_json::json!({"url": peer.url("/mcp")})
    );
}

#[test]
fn a_secret_echoed_by_the_server_is_never_shown_or_recorded() {
    // Echoed in an error body, in a JSON-RPC error message and in a tool description.
    for place in ["error body", "rpc error", "description"] {
        let peer = Peer::start(move |request: &Request, stream: &mut TcpStream| {
            let echoed = format!(
                "{} {}",
                request.header("authorization").unwrap_or(""),
                request.target
            );
            let Some(mut answer) = mcp_answer(request) else {
                return json_server(request, stream);
            };
            match place {
                "error body" => {
                    return respond(stream, "403 Forbidden", &[], echoed.as_bytes());
                }
                "rpc error" => {
                    answer = serde_json::json!({"jsonrpc": "2.0", "id": answer["id"],
                        "error": {"code": -32000, "message": echoed}});
                }
                _ if request.rpc_method() == "tools/list" => {
                    answer["result"]["tools"][0]["description"] = echoed.into();
                }
                _ => {}
            }
            respond_json(stream, &[("Mcp-Session-Id", "s")], &answer);
        });
        let dir = Dir::new();
        remote_config(&dir, &peer);
        let run = export(&dir, &["--verbose"]);
        run.code(3)
            .stderr_has("server \"web\" could not be captured");
        assert!(!dir.exists("manifest.json"), "{place}");
        assert_no_secret(&dir, &run);
    }
}

#[test]
fn a_remote_server_that_never_answers_times_out() {
    let peer = Peer::start(|_request: &Request, stream: &mut TcpStream| {
        start_events(stream, &[]);
        thread::sleep(Duration::from_secs(5));
    });
    let dir = Dir::new();
    remote_config(&dir, &peer);
    export(&dir, &["--timeout", "500ms"])
        .code(3)
        .stderr_has("server \"web\" could not be captured: no answer to initialize within 500ms")
        .stderr_has("(raise it with --timeout)");
    assert!(!dir.exists("manifest.json"));
}

#[test]
fn a_redirect_fails_the_export_naming_only_the_origin_of_the_location() {
    let peer = Peer::start(|_request: &Request, stream: &mut TcpStream| {
        let location = format!("https://elsewhere.invalid/mcp/{SECRET}/sse?key={QUERY_SECRET}");
        respond(stream, "302 Found", &[("Location", &location)], b"");
    });
    let dir = Dir::new();
    remote_config(&dir, &peer);
    let run = export(&dir, &[]);
    run.code(3).stderr_has(
        "a redirect (HTTP 302) to \"https://elsewhere.invalid\": redirects are not followed",
    );
    assert_no_secret(&dir, &run);
}

#[test]
fn a_remote_entry_with_an_undefined_variable_is_a_configuration_error() {
    let dir = Dir::new();
    dir.write(
        "config.json",
        r#"{"mcpServers": {"web": {"url": "https://x.invalid/mcp",
             "headers": {"Authorization": "Bearer ${NOT_SET}"}}}}"#,
    );
    export(&dir, &[])
        .code(4)
        .stderr_has("server \"web\": environment variable NOT_SET is not set");
}

#[test]
fn a_slow_remote_server_shows_progress_like_a_local_one() {
    use std::io::BufRead;
    let dir = Dir::new();
    // The server answers only once the test has seen the progress note: no timing involved.
    let go = dir.path().join("go");
    let peer = Peer::start(move |request: &Request, stream: &mut TcpStream| {
        while request.rpc_method() == "initialize" && !go.exists() {
            thread::sleep(Duration::from_millis(50));
        }
        json_server(request, stream);
    });
    remote_config(&dir, &peer);
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin-export"))
        .args([
            "--config",
            "config.json",
            "-o",
            "m.json",
            "--timeout",
            "120s",
        ])
        .current_dir(dir.path())
        .env_clear()
        .env("TOKEN", SECRET)
        .env("KEY", QUERY_SECRET)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().expect("a progress note").unwrap();
    assert_eq!(first, "mcppin-export: server \"web\": still starting (2 s)");
    dir.write("go", "");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(child.wait().unwrap().success(), "{rest:?}");
    let last = rest.last().expect("a summary line");
    assert!(
        last.starts_with("mcppin-export: server \"web\": 2 tools, 0 prompts, 0 resource templates over 2025-11-25"),
        "{rest:?}"
    );
}

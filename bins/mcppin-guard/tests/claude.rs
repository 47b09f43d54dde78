//! Claude Code (`testdata/claude-code`, pinned) as far as it runs without credentials or the
//! network: `claude doctor` accepts the hook settings of docs/guard.md, `claude mcp list`
//! connects to a server through the guard, and `claude -p` runs the hook before a call its
//! model makes, the model scripted on a loopback port (the one part that needs credentials).

mod peers;
mod util;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use util::{ClientEnd, Dir, Run, counter_surface};

fn claude() -> PathBuf {
    peers::installed(
        "claude-code",
        "node_modules/.bin/claude",
        "npm ci --prefix testdata/claude-code",
    )
}

/// Runs `claude` with `args` in `cwd`, its home in the test's directory, without the network
/// uses it can go without (update checks, telemetry).
fn run_claude(dir: &Dir, cwd: &Path, args: &[&str]) -> Run {
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    mcppin_testkit::run(
        Command::new(claude())
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .env("HOME", &home)
            .env("PATH", peers::path_var())
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1"),
        Vec::new(),
        ClientEnd::Closes,
    )
}

/// The hook settings docs/guard.md shows: the first JSON block after "The hook in the
/// settings".
fn documented_settings() -> Value {
    let guard_md = std::fs::read_to_string(peers::root().join("docs/guard.md")).unwrap();
    let after = guard_md
        .split_once("The hook in the settings")
        .expect("docs/guard.md shows the hook settings")
        .1;
    let block = after
        .split_once("```json\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .expect("a JSON block")
        .0;
    serde_json::from_str(block).expect("the documented settings are JSON")
}

#[test]
fn claude_code_accepts_the_documented_hook_settings() {
    let dir = Dir::new();
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let settings = documented_settings();
    let hook = &settings["hooks"]["PreToolUse"][0];
    assert_eq!(hook["matcher"], json!("mcp__.*"));
    assert!(
        hook["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .contains("mcppin-guard hook --lock ")
    );
    dir.write("project/.claude/settings.json", settings.to_string());
    let run = run_claude(&dir, &project, &["doctor"]);
    run.code(0)
        .stdout_has("Claude Code doctor")
        .stdout_lacks("Invalid settings");
    // The check it makes: the same settings with the matcher a number are refused.
    let mut broken = settings.clone();
    broken["hooks"]["PreToolUse"][0]["matcher"] = json!(3);
    dir.write("project/.claude/settings.json", broken.to_string());
    run_claude(&dir, &project, &["doctor"])
        .code(0)
        .stdout_has("Invalid settings")
        .stdout_has("hooks.PreToolUse.0");
}

#[test]
fn claude_mcp_list_connects_through_the_guard() {
    let dir = Dir::new();
    let lock = dir.lock(&counter_surface());
    let log = dir.path().join("admission.jsonl");
    let guard = env!("CARGO_BIN_EXE_mcppin-guard");
    let fixture = mcppin_fixture::locate("guard-fixture");
    let add = |id: &str| {
        let (lock, log, fixture) = (
            lock.to_str().unwrap(),
            log.to_str().unwrap(),
            fixture.to_str().unwrap(),
        );
        run_claude(
            &dir,
            dir.path(),
            &[
                "mcp", "add", "-s", "user", id, "--", guard, "--lock", lock, "--server", id,
                "--log", log, "--", fixture, "--mode", "counter",
            ],
        )
        .code(0);
    };
    // `fixture` is in the lockfile; `stranger` is not, and its guard refuses to start.
    add("fixture");
    add("stranger");
    let run = run_claude(&dir, dir.path(), &["mcp", "list"]);
    run.code(0);
    let line = |id: &str| {
        run.stdout
            .lines()
            .find(|l| l.starts_with(&format!("{id}: ")))
            .unwrap_or_else(|| panic!("no line for {id}: {run:?}"))
            .to_owned()
    };
    assert!(line("fixture").ends_with("- \u{2714} Connected"), "{run:?}");
    assert!(line("stranger").contains("Failed to connect"), "{run:?}");
    // What Claude Code was served went through the guard: its reading of the list, admitted.
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let listed: Vec<&Value> = lines
        .iter()
        .filter(|l| {
            l["event"] == json!("tool_admission") && l["request_method"] == json!("tools/list")
        })
        .collect();
    assert_eq!(listed.len(), counter_surface().len(), "{lines:#?}");
    assert!(listed.iter().all(|l| l["decision"] == json!("allow")));
    assert_eq!(
        mcppin_core::log::verify(std::fs::read(&log).unwrap().as_slice()).findings,
        []
    );
}

// A session: Claude Code runs the hook before a call of its model. The model is the one part
// that cannot run here (it needs credentials and the network): a loopback stand-in for the
// Messages API answers the first request with one call of `mcp__fixture__summarize` and the
// next with text, and records the tool results Claude Code sends back. Claude Code, its hook
// runner, the hook, the guard and the server are the real programs.

/// The scripted model on a loopback port; `results` collects the `tool_result` blocks sent.
struct Model {
    url: String,
    results: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
}

impl Model {
    fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let results = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = std::sync::Arc::clone(&results);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let kept = std::sync::Arc::clone(&kept);
                std::thread::spawn(move || answer(stream, &kept));
            }
        });
        Self { url, results }
    }
}

/// Answers one HTTP request: a streamed message calling the tool, or text once a tool result
/// came back.
fn answer(mut stream: std::net::TcpStream, results: &std::sync::Mutex<Vec<Value>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(30)));
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or_default();
    let returned: Vec<Value> = request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|c| c["type"] == json!("tool_result"))
        .cloned()
        .collect();
    let (block, delta, stop) = if returned.is_empty() {
        (
            json!({"type": "tool_use", "id": "toolu_01", "name": "mcp__fixture__summarize", "input": {}}),
            json!({"type": "input_json_delta", "partial_json": "{\"text\":\"hello\"}"}),
            "tool_use",
        )
    } else {
        results.lock().unwrap().extend(returned);
        (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": "done"}),
            "end_turn",
        )
    };
    let model = request["model"].clone();
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "model": model, "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop,
            "stop_sequence": null}, "usage": {"output_tokens": 5}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    let mut sse = String::new();
    for (name, data) in events {
        sse.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{sse}",
        sse.len()
    );
}

/// `claude -p` in `dir` against the scripted model, the fixture server behind the guard
/// (`--state state`), and the hook of `settings`.
fn session(dir: &Dir, model: &Model, hook_state: &str) -> Run {
    let guard = env!("CARGO_BIN_EXE_mcppin-guard");
    let fixture = mcppin_fixture::locate("guard-fixture");
    let lock = dir.path().join("mcp.lock.json");
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::create_dir_all(dir.path().join(hook_state)).unwrap();
    let servers = json!({"mcpServers": {"fixture": {"command": guard, "args": [
        "--lock", lock, "--server", "fixture", "--state", state, "--log",
        dir.path().join("admission.jsonl"), "--", fixture, "--mode", "counter"]}}});
    dir.write("servers.json", servers.to_string());
    let mut settings = documented_settings();
    settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = json!(format!(
        "{guard} hook --lock {} --state {}",
        lock.display(),
        dir.path().join(hook_state).display()
    ));
    dir.write("settings.json", settings.to_string());
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    mcppin_testkit::run(
        Command::new(claude())
            .args([
                "-p",
                "summarize hello",
                "--mcp-config",
                "servers.json",
                "--strict-mcp-config",
            ])
            .args([
                "--settings",
                "settings.json",
                "--allowedTools",
                "mcp__fixture__summarize",
            ])
            .current_dir(dir.path())
            .env_clear()
            .env("HOME", &home)
            .env("PATH", peers::path_var())
            .env("ANTHROPIC_API_KEY", "sk-test-not-a-key")
            .env("ANTHROPIC_BASE_URL", &model.url)
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            // MCP tools offered directly, not behind a search the scripted model cannot make.
            .env("ENABLE_TOOL_SEARCH", "false"),
        Vec::new(),
        ClientEnd::Closes,
    )
}

/// The guard's `tools/call` admissions in the log.
fn calls(dir: &Dir) -> Vec<Value> {
    dir.read("admission.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["request_method"] == json!("tools/call"))
        .collect()
}

#[test]
fn claude_code_runs_the_hook_and_the_admitted_call_goes_through_the_guard() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let model = Model::start();
    session(&dir, &model, "state").code(0);
    let results = model.results.lock().unwrap().clone();
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_ne!(results[0]["is_error"], json!(true), "{results:#?}");
    assert!(
        results[0].to_string().contains("summarize: done"),
        "{results:#?}"
    );
    let calls = calls(&dir);
    assert_eq!(calls.len(), 1, "{calls:#?}");
    assert_eq!(calls[0]["tool"], json!("summarize"));
    assert_eq!(calls[0]["decision"], json!("allow"));
}

#[test]
fn claude_code_runs_the_hook_and_a_blocked_call_never_reaches_the_guard() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let model = Model::start();
    // The hook reads another state directory than the guard writes: no state, blocked.
    session(&dir, &model, "elsewhere").code(0);
    let results = model.results.lock().unwrap().clone();
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(results[0]["is_error"], json!(true), "{results:#?}");
    let text = results[0]["content"].to_string();
    assert!(
        text.contains(
            "mcppin-guard hook: blocked: no state of the guard in front of server \\\"fixture\\\""
        ),
        "{text}"
    );
    assert_eq!(
        calls(&dir),
        Vec::<Value>::new(),
        "the guard never saw the call"
    );
}

//! Shared helpers for the guard's integration tests: a fresh temp dir per test, the real
//! binary with a cleared environment, the fixture server, lockfiles built from the fixture's
//! surface, and assertions that print exit code, stdout and stderr on failure.
#![allow(
    dead_code,
    unused_imports,
    reason = "each test file uses a different subset"
)]

use std::io::Write;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcppin_core::lockfile::Lockfile;
use mcppin_core::manifest::Manifest;
use mcppin_testkit::Scratch;
use serde_json::{Value, json};

pub use mcppin_testkit::StdinEnd as ClientEnd;
pub use mcppin_testkit::{Expect, HANG, Run, running, wait_for_pid};

/// A fresh temporary directory for one test ([`Scratch`]: `path`, `write`; `read` here gives
/// text).
pub struct Dir {
    dir: Scratch,
}

impl Deref for Dir {
    type Target = Scratch;

    fn deref(&self) -> &Scratch {
        &self.dir
    }
}

impl Dir {
    pub fn new() -> Self {
        Self {
            dir: Scratch::new(),
        }
    }

    /// The contents of `name`, empty when it does not exist.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    /// Writes `mcp.lock.json` approving `tools` for server `fixture` (named `mcppin-fixture`).
    pub fn lock(&self, tools: &[Value]) -> PathBuf {
        let manifest = json!({"schema_version": 2, "complete": true, "servers": [
            {"id": "fixture", "reported_name": "mcppin-fixture", "tools": tools}]});
        let manifest = Manifest::parse(manifest.to_string().as_bytes()).expect("manifest");
        let lock = Lockfile::approve(None, &manifest, &[]).expect("approve");
        self.write("mcp.lock.json", lock.to_bytes())
    }

    /// Runs the guard with `args` (before `--`), the fixture with `fixture_args` behind it,
    /// and `input` as the client's messages (one per line, then end of input).
    pub fn guard(&self, args: &[&str], fixture_args: &[&str], input: &[Value]) -> Run {
        let fixture = mcppin_fixture::locate("guard-fixture");
        let mut command: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        command.push("--".into());
        command.push(fixture.display().to_string());
        command.extend(fixture_args.iter().map(|s| (*s).to_owned()));
        self.run_guard(&command, input)
    }

    /// Runs the guard with the full command line `args` and `input` as the client's messages.
    pub fn run_guard(&self, args: &[String], input: &[Value]) -> Run {
        let mut stdin = String::new();
        for message in input {
            stdin.push_str(&message.to_string());
            stdin.push('\n');
        }
        self.run_guard_raw(args, &stdin)
    }

    /// Runs the guard with the full command line `args` and `stdin` as the client's bytes.
    pub fn run_guard_raw(&self, args: &[String], stdin: &str) -> Run {
        self.run_guard_bytes(args, stdin.as_bytes())
    }

    /// Runs the guard with the full command line `args` and `stdin` as the client's bytes,
    /// which need not be UTF-8.
    pub fn run_guard_bytes(&self, args: &[String], stdin: &[u8]) -> Run {
        self.run_guard_env(args, &[], stdin)
    }

    /// Runs the guard with the full command line `args`, exactly the environment `env`, and
    /// `stdin` as the client's bytes.
    pub fn run_guard_env(&self, args: &[String], env: &[(&str, &str)], stdin: &[u8]) -> Run {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
            .args(args)
            .current_dir(self.dir.path())
            .env_clear()
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcppin-guard");
        let mut pipe = child.stdin.take().expect("stdin");
        // The guard may stop reading (a refusal): ignore EPIPE.
        let _ = pipe.write_all(stdin);
        drop(pipe);
        let out = child.wait_with_output().expect("wait");
        Run::from_output(&out)
    }

    /// Runs the guard like an interactive client: each request is sent only once the answer
    /// to the previous one arrived (notifications are not waited for); stops sending when the
    /// guard closes its output.
    pub fn guard_interactive(&self, args: &[&str], fixture_args: &[&str], input: &[Value]) -> Run {
        use std::io::BufRead;
        let fixture = mcppin_fixture::locate("guard-fixture");
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
            .args(args)
            .arg("--")
            .arg(fixture)
            .args(fixture_args)
            .current_dir(self.dir.path())
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcppin-guard");
        let mut pipe = child.stdin.take().expect("stdin");
        let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut stdout = String::new();
        'session: for message in input {
            if writeln!(pipe, "{message}").is_err() {
                break;
            }
            let Some(id) = message.get("id") else {
                continue;
            };
            loop {
                let Some(Ok(line)) = lines.next() else {
                    break 'session;
                };
                stdout.push_str(&line);
                stdout.push('\n');
                let answer: Value = serde_json::from_str(&line).unwrap_or_default();
                if answer.get("id") == Some(id) && answer.get("method").is_none() {
                    break;
                }
            }
        }
        drop(pipe);
        for line in lines.map_while(Result::ok) {
            stdout.push_str(&line);
            stdout.push('\n');
        }
        let out = child.wait_with_output().expect("wait");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Runs the guard with the full command line `args`, writes `input` and keeps the client's
    /// input open until the guard exits: the server, not the client, ends the session. Stdout
    /// and stderr are drained side by side (a guard with much to say on stderr must not block
    /// on it), and a guard that does not exit within [`HANG`] fails the test.
    pub fn run_guard_held(&self, args: &[String], input: &[Value]) -> Run {
        let mut stdin = Vec::new();
        for message in input {
            stdin.extend_from_slice(message.to_string().as_bytes());
            stdin.push(b'\n');
        }
        self.run_guard_bounded_as(args, stdin, ClientEnd::StaysOpen)
    }

    /// Runs the fixture directly (no guard) with `input`: what a client sees without the guard.
    pub fn direct(&self, fixture_args: &[&str], input: &[Value]) -> String {
        let mut child = Command::new(mcppin_fixture::locate("guard-fixture"))
            .args(fixture_args)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn fixture");
        let mut pipe = child.stdin.take().expect("stdin");
        for message in input {
            let _ = writeln!(pipe, "{message}");
        }
        drop(pipe);
        let out = child.wait_with_output().expect("wait");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// A legacy `initialize` request.
pub fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}})
}

/// `notifications/initialized`.
pub fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

/// A request `method` with `params`.
pub fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A `tools/call` of `tool`.
pub fn call(id: u64, tool: &str) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": {"text": "hello"}}),
    )
}

/// A `prompts/get` of `summarize`.
pub fn prompt(id: u64) -> Value {
    request(
        id,
        "prompts/get",
        json!({"name": "summarize", "arguments": {"text": "hello"}}),
    )
}

/// The positive control of a "never reaches the server" test: an approved call (id
/// `"control"`) sent after the lines the test expects refused. Without it, a server that
/// recorded nothing at all (never started, recording elsewhere) would pass the test.
pub const CONTROL: &str = r#"{"jsonrpc":"2.0","id":"control","method":"tools/call","params":{"name":"summarize","arguments":{"text":"control"}}}"#;

/// Asserts that `run` wrote two answers: the guard's refusal of `id`, then the server's answer
/// to the [`CONTROL`] call (an error when the session had no handshake: what matters is that
/// the server read it).
pub fn refused_then_control(run: &Run, id: &Value) {
    let messages = answered_then_control(run, -32001);
    assert_eq!(messages[0]["id"], *id, "{}", run.stdout);
}

/// Asserts that `run` wrote two answers: the guard's error `code` to the line it refused,
/// then the server's answer to the [`CONTROL`] call. The two, for further checks.
pub fn answered_then_control(run: &Run, code: i64) -> Vec<Value> {
    let messages = run.messages();
    assert_eq!(messages.len(), 2, "{}", run.stdout);
    assert_eq!(messages[0]["error"]["code"], json!(code), "{}", run.stdout);
    assert_eq!(messages[1]["id"], json!("control"), "{}", run.stdout);
    messages
}

/// Asserts that the server of `dir` recorded the [`CONTROL`] call in `received.jsonl` and
/// nothing holding `never` (`context` names the case).
pub fn only_the_control_reached(dir: &Dir, never: &str, context: &str) {
    let received = dir.read("received.jsonl");
    assert!(
        received.contains(r#""id":"control""#),
        "{context}: the control call did not reach the server: {received}"
    );
    assert!(
        !received.contains(never),
        "{context}: reached the server: {received}"
    );
}

/// The fixture's honest `counter` surface.
pub fn counter_surface() -> Vec<Value> {
    let mut tools = mcppin_fixture::surface(false);
    tools.push(mcppin_fixture::summarize_tool(false));
    tools
}

/// Whether a process is alive.
pub fn alive(pid: &str) -> bool {
    Path::new(&format!("/proc/{}", pid.trim())).exists()
}

impl Dir {
    /// Runs the guard with the full command line `args`, writes `stdin` as the client's bytes
    /// from another thread and then closes the client's end. A guard still running after
    /// [`HANG`] is killed and the test fails: a hang is a failure, not a stuck test run.
    pub fn run_guard_bounded(&self, args: &[String], stdin: Vec<u8>) -> Run {
        self.run_guard_bounded_as(args, stdin, ClientEnd::Closes)
    }

    /// As [`Dir::run_guard_bounded`], with the client's end closed or held open to the end.
    pub fn run_guard_bounded_as(&self, args: &[String], stdin: Vec<u8>, end: ClientEnd) -> Run {
        mcppin_testkit::run(
            Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
                .args(args)
                .current_dir(self.path())
                .env_clear(),
            stdin,
            end,
        )
    }
}

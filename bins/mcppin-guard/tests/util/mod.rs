//! Shared helpers for the guard's integration tests: a fresh temp dir per test, the real
//! binary with a cleared environment, the fixture server, lockfiles built from the fixture's
//! surface, and assertions that print exit code, stdout and stderr on failure.
#![allow(dead_code, reason = "each test file uses a different subset")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcppin_core::lockfile::Lockfile;
use mcppin_core::manifest::Manifest;
use serde_json::{Value, json};

/// The outcome of one run of the binary.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Asserts the exit code, printing everything on failure.
    #[track_caller]
    pub fn code(&self, expected: i32) -> &Self {
        assert_eq!(
            self.code, expected,
            "exit code {} (expected {expected})\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    /// Asserts that stderr contains `needle`.
    #[track_caller]
    pub fn stderr_has(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    /// Asserts that stdout does not contain `needle` anywhere.
    #[track_caller]
    pub fn stdout_lacks(&self, needle: &str) -> &Self {
        assert!(
            !self.stdout.contains(needle),
            "stdout has {needle:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    /// The stdout lines, each read as JSON.
    #[track_caller]
    pub fn messages(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("stdout line {l:?}: {e}")))
            .collect()
    }

    /// Asserts stdout line by line: each line is one message, `expected[i]` says what it is.
    #[track_caller]
    pub fn lines(&self, expected: &[Expect]) -> &Self {
        let messages = self.messages();
        assert_eq!(
            messages.len(),
            expected.len(),
            "stdout has {} lines, expected {}\n--- stdout\n{}\n--- stderr\n{}",
            messages.len(),
            expected.len(),
            self.stdout,
            self.stderr
        );
        for (i, (message, expect)) in messages.iter().zip(expected).enumerate() {
            let ok = match expect {
                Expect::Result(id) => message["id"] == *id && message.get("result").is_some(),
                Expect::Refused(id) => {
                    message["id"] == *id && message["error"]["code"] == json!(-32001)
                }
                Expect::Notification(method) => {
                    message["method"] == json!(method) && message.get("id").is_none()
                }
            };
            assert!(
                ok,
                "stdout line {} is {message}, expected {expect:?}\n--- stdout\n{}\n--- stderr\n{}",
                i + 1,
                self.stdout,
                self.stderr
            );
        }
        self
    }
}

/// What one stdout line is.
#[derive(Debug)]
pub enum Expect {
    /// An answer with a result to this id.
    Result(Value),
    /// A -32001 error answer to this id.
    Refused(Value),
    /// A notification.
    Notification(&'static str),
}

/// A fresh temporary directory for one test.
pub struct Dir {
    dir: tempfile::TempDir,
}

impl Dir {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `contents` to `name` in the directory and returns its path.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).expect("write");
        path
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
        let fixture = mcppin_fixture::locate_example("mcppin-fixture");
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
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
            .args(args)
            .current_dir(self.dir.path())
            .env_clear()
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
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Runs the guard like an interactive client: each request is sent only once the answer
    /// to the previous one arrived (notifications are not waited for); stops sending when the
    /// guard closes its output.
    pub fn guard_interactive(&self, args: &[&str], fixture_args: &[&str], input: &[Value]) -> Run {
        use std::io::BufRead;
        let fixture = mcppin_fixture::locate_example("mcppin-fixture");
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
        let mut child = Command::new(mcppin_fixture::locate_example("mcppin-fixture"))
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

/// How long a test waits for the guard to exit on its own before it kills it and fails: far
/// above any shutdown the guard runs (grace periods included), so only a hang reaches it.
pub const HANG: std::time::Duration = std::time::Duration::from_secs(30);

impl Dir {
    /// Runs the guard with the full command line `args`, writes `stdin` as the client's bytes
    /// from another thread and then closes the client's end. A guard still running after
    /// [`HANG`] is killed and the test fails: a hang is a failure, not a stuck test run.
    pub fn run_guard_bounded(&self, args: &[String], stdin: Vec<u8>) -> Run {
        self.run_guard_bounded_as(args, stdin, ClientEnd::Closes)
    }

    /// As [`Dir::run_guard_bounded`], with the client's end closed or held open to the end.
    pub fn run_guard_bounded_as(&self, args: &[String], stdin: Vec<u8>, end: ClientEnd) -> Run {
        use std::io::Read;
        use std::time::Instant;
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
            .args(args)
            .current_dir(self.dir.path())
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcppin-guard");
        let mut pipe = child.stdin.take().expect("stdin");
        let (exited, wait_exit) = std::sync::mpsc::channel::<()>();
        // The guard may stop reading: a write that fails or blocks must not hold the test.
        let writer = std::thread::spawn(move || {
            let _ = pipe.write_all(&stdin);
            if end == ClientEnd::StaysOpen {
                let _ = wait_exit.recv();
            }
        });
        let drain = |mut from: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = from.read_to_end(&mut bytes);
                String::from_utf8_lossy(&bytes).into_owned()
            })
        };
        let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
        let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            if started.elapsed() > HANG {
                drop(exited);
                let _ = child.kill();
                let _ = child.wait();
                let stderr = stderr.join().unwrap_or_default();
                panic!("the guard did not exit within {HANG:?}: killed\n--- stderr\n{stderr}");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        drop(exited);
        let _ = writer.join();
        Run {
            code: status.code().unwrap_or(-1),
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        }
    }
}

/// Whether the client closes its end after its messages, or holds it open until the guard
/// exits (then the server, not the client, ends the session).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum ClientEnd {
    Closes,
    StaysOpen,
}

/// Whether process `pid` runs (a zombie has exited: it does not count).
pub fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// Waits up to [`HANG`] for `name` in `dir` to hold a process id, and returns it.
pub fn wait_for_pid(dir: &Path, name: &str) -> u32 {
    let started = std::time::Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(dir.join(name))
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
        {
            return pid;
        }
        assert!(started.elapsed() < HANG, "no process id in {name}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

//! What the integration tests of `mcppin`, `mcppin-export` and `mcppin-guard` share, written
//! once: [`Run`] (the outcome of one run, with assertions that print exit code, stdout and
//! stderr on failure), [`run`] (a binary run with its output drained and a bound on hangs),
//! [`output`] and [`status`] (`Command::output` and `Command::status` with that bound: the
//! unbounded ones are refused by clippy's configuration),
//! [`Scratch`] (a fresh directory per test), process helpers and [`npm`] (a local npm registry
//! for real `npx` installs), [`peer`] (a scriptable HTTP/1.1 server for remote-capture and
//! HTTP-guard tests), [`sarif`] (the official SARIF validator on a log a test wrote),
//! [`bench_tools`] (the tools of the list benchmarks);
//! and for every crate's tests, [`import`]: the file-level imports of
//! a crate's source and the circles among them. A dev-dependency only, never published; panics
//! are its way to fail a test.
#![warn(missing_docs)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub mod import;
mod listening;
pub mod npm;
pub mod peer;
pub mod sarif;

pub use listening::{Listening, resident_kib};

/// The tools of the list benchmarks (the guard's and the wire engine's), as JSON text:
/// `tool_0` to `tool_{count - 1}`, each about 356 bytes (a description, an input schema of two
/// properties, an annotation), in the member order a typical server writes (not RFC 8785's).
#[must_use]
pub fn bench_tools(count: usize) -> Vec<String> {
    (0..count)
        .map(|i| {
            format!(
                r#"{{"name":"tool_{i}","description":"Tool number {i}: reads the file at the given path of the workspace and returns at most limit lines of it.","inputSchema":{{"type":"object","properties":{{"path":{{"type":"string","description":"Path of the file"}},"limit":{{"type":"integer","minimum":1,"maximum":1000}}}},"required":["path"]}},"annotations":{{"readOnlyHint":true}}}}"#
            )
        })
        .collect()
}

/// How long a test waits for a binary to exit on its own before it kills it and fails: far
/// above any shutdown the binaries run (grace periods included), so only a hang reaches it.
pub const HANG: Duration = Duration::from_secs(30);

/// The outcome of one run of a binary.
#[derive(Debug)]
pub struct Run {
    /// The exit code, -1 when a signal ended the process.
    pub code: i32,
    /// Standard output, lossily decoded.
    pub stdout: String,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

impl Run {
    /// The outcome of a finished [`Command::output`].
    #[must_use]
    pub fn from_output(out: &Output) -> Self {
        Self {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn context(&self) -> String {
        format!("--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr)
    }

    /// Asserts the exit code, printing everything on failure.
    #[track_caller]
    pub fn code(&self, expected: i32) -> &Self {
        assert_eq!(
            self.code,
            expected,
            "exit code {} (expected {expected})\n{}",
            self.code,
            self.context()
        );
        self
    }

    /// Asserts that stdout contains `needle`.
    #[track_caller]
    pub fn stdout_has(&self, needle: &str) -> &Self {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}\n{}",
            self.context()
        );
        self
    }

    /// Asserts that stdout does not contain `needle` anywhere.
    #[track_caller]
    pub fn stdout_lacks(&self, needle: &str) -> &Self {
        assert!(
            !self.stdout.contains(needle),
            "stdout has {needle:?}\n{}",
            self.context()
        );
        self
    }

    /// Asserts that stderr contains `needle`.
    #[track_caller]
    pub fn stderr_has(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}\n{}",
            self.context()
        );
        self
    }

    /// Asserts that stderr does not contain `needle`.
    #[track_caller]
    pub fn stderr_lacks(&self, needle: &str) -> &Self {
        assert!(
            !self.stderr.contains(needle),
            "stderr has {needle:?}\n{}",
            self.context()
        );
        self
    }

    /// Asserts that stdout and stderr hold printable ASCII and line breaks only: nothing a
    /// terminal would act on or that would hide text (an escape sequence, a carriage return,
    /// a bidi override, a byte that is not UTF-8).
    #[track_caller]
    pub fn shows_nothing_raw(&self) -> &Self {
        for (name, text) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            let raw = text
                .chars()
                .find(|c| *c != '\n' && !(' '..='~').contains(c));
            assert!(raw.is_none(), "{name} holds {raw:?} raw: {text:?}");
        }
        self
    }
}

impl Run {
    /// The stdout lines, each read as JSON (a guard's or a server's messages).
    ///
    /// # Panics
    ///
    /// When a line is not JSON.
    #[track_caller]
    #[must_use]
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
            "stdout has {} lines, expected {}\n{}",
            messages.len(),
            expected.len(),
            self.context()
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
                "stdout line {} is {message}, expected {expect:?}\n{}",
                i + 1,
                self.context()
            );
        }
        self
    }
}

/// What one stdout line of a JSON-RPC session is, for [`Run::lines`].
#[derive(Debug)]
pub enum Expect {
    /// An answer with a result to this id.
    Result(Value),
    /// A -32001 error answer (the guard's refusal) to this id.
    Refused(Value),
    /// A notification.
    Notification(&'static str),
}

/// Whether standard input closes after the bytes written, or stays open until the process
/// exits (then the process, not its input, ends the run), or until it answered.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum StdinEnd {
    /// Closed after the bytes.
    Closes,
    /// Held open to the end.
    StaysOpen,
    /// Closed once stdout has shown this many lines (or ended): a client that reads its
    /// answers before it ends the session, for a server slow to start (the end of input
    /// begins the guard's shutdown order, whose grace a slow start can outlast).
    ClosesAfterLines(usize),
}

/// `command.output()` bounded by [`HANG`]: the exit status and everything the process wrote,
/// its stdin empty.
///
/// # Errors
///
/// When the process cannot be started.
///
/// # Panics
///
/// When the process, or one holding its output, runs longer than [`HANG`] (it is killed).
pub fn output(command: &mut Command) -> std::io::Result<Output> {
    output_within(command, HANG)
}

/// [`output`] with another bound than [`HANG`]: for a run that installs a published package
/// from the network first (the slow suites).
///
/// # Errors
///
/// When the process cannot be started.
///
/// # Panics
///
/// When the process, or one holding its output, runs longer than `limit` (it is killed).
pub fn output_within(command: &mut Command, limit: Duration) -> std::io::Result<Output> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let started = Instant::now();
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        let (sent, received) = mpsc::channel();
        thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            let _ = sent.send(bytes);
        });
        received
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let status = wait_within(&mut child, command, started, limit)?;
    let collect = |received: mpsc::Receiver<Vec<u8>>| {
        received
            .recv_timeout(limit.saturating_sub(started.elapsed()))
            .unwrap_or_else(|_| panic!("{command:?} exited, but its output stayed open"))
    };
    Ok(Output {
        status,
        stdout: collect(stdout),
        stderr: collect(stderr),
    })
}

/// `command.status()` bounded by [`HANG`] (the standard streams inherited, as `status` does).
///
/// # Errors
///
/// When the process cannot be started.
///
/// # Panics
///
/// When the process runs longer than [`HANG`] (it is killed).
pub fn status(command: &mut Command) -> std::io::Result<ExitStatus> {
    let mut child = command.spawn()?;
    wait_within(&mut child, command, Instant::now(), HANG)
}

/// Waits up to [`HANG`] for `child`, started elsewhere (a test that signals it meanwhile), to
/// exit.
///
/// # Errors
///
/// When its state cannot be read.
///
/// # Panics
///
/// When it runs longer than [`HANG`] (it is killed).
pub fn wait(child: &mut Child) -> std::io::Result<ExitStatus> {
    wait_within(child, &Command::new("the child"), Instant::now(), HANG)
}

/// Waits for `child` to exit, until `limit` after `started`; then kills it and fails.
fn wait_within(
    child: &mut Child,
    command: &Command,
    started: Instant,
    limit: Duration,
) -> std::io::Result<ExitStatus> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} did not exit within {limit:?}: killed");
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// Runs `command` with piped standard streams: writes `stdin` from another thread (a process
/// that stops reading cannot hold the test), drains stdout and stderr from two more, and waits
/// for the exit. A process still running after [`HANG`] is killed and the test fails: a hang
/// is a failure, not a stuck test run.
///
/// # Panics
///
/// When the process cannot be started, or hangs.
#[must_use]
pub fn run(command: &mut Command, stdin: Vec<u8>, end: StdinEnd) -> Run {
    run_within(command, stdin, end, HANG)
}

/// [`run`] with another bound than [`HANG`]: for a run that installs a published package from
/// the network first (the slow suites).
///
/// # Panics
///
/// When the process cannot be started, or runs longer than `limit`.
#[must_use]
pub fn run_within(command: &mut Command, stdin: Vec<u8>, end: StdinEnd, limit: Duration) -> Run {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    let mut pipe = child.stdin.take().expect("stdin");
    let (exited, wait_exit) = mpsc::channel::<()>();
    // Dropped by the stdout drain once it has read the lines `ClosesAfterLines` waits for, or
    // at the end of stdout.
    let (answered, wait_answered) = mpsc::channel::<()>();
    let writer = thread::spawn(move || {
        // The process may exit before reading everything (a usage error): ignore EPIPE.
        let _ = pipe.write_all(&stdin);
        match end {
            StdinEnd::Closes => {}
            StdinEnd::StaysOpen => {
                let _ = wait_exit.recv();
            }
            StdinEnd::ClosesAfterLines(_) => {
                let _ = wait_answered.recv();
            }
        }
    });
    let lines = match end {
        StdinEnd::ClosesAfterLines(lines) => lines,
        _ => 0,
    };
    let drain = |mut from: Box<dyn Read + Send>, answered: Option<mpsc::Sender<()>>| {
        thread::spawn(move || {
            let mut answered = answered.filter(|_| lines > 0);
            let mut seen = 0;
            let mut bytes = Vec::new();
            let mut chunk = [0_u8; 8192];
            loop {
                let n = match from.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                bytes.extend_from_slice(&chunk[..n]);
                if answered.is_some() {
                    // Counted in the new bytes only: a drain must keep up with a process
                    // writing megabytes.
                    seen += chunk[..n].iter().filter(|b| **b == b'\n').count();
                    if seen >= lines {
                        answered = None;
                    }
                }
            }
            drop(answered);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(
        Box::new(child.stdout.take().expect("stdout")),
        Some(answered),
    );
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")), None);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            drop(exited);
            let _ = child.kill();
            let _ = child.wait();
            let stderr = stderr.join().unwrap_or_default();
            panic!("{command:?} did not exit within {limit:?}: killed\n--- stderr\n{stderr}");
        }
        thread::sleep(Duration::from_millis(20));
    };
    drop(exited);
    let _ = writer.join();
    Run {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// A fresh temporary directory for one test, removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

impl Scratch {
    /// A new empty directory.
    ///
    /// # Panics
    ///
    /// When no temporary directory can be made.
    #[must_use]
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// Its path.
    #[must_use]
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `contents` to `name` in the directory (creating the folders on the way) and
    /// returns its path.
    ///
    /// # Panics
    ///
    /// When the file cannot be written.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, contents).expect("write");
        path
    }

    /// The bytes of `name`.
    ///
    /// # Panics
    ///
    /// When the file cannot be read.
    #[must_use]
    pub fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.dir.path().join(name)).expect("read")
    }
}

/// Whether process `pid` runs (a zombie has exited: it does not count).
#[must_use]
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

/// Waits up to [`HANG`] for the file `name` in `dir` to hold a process id, and returns it.
///
/// # Panics
///
/// When no id appears within [`HANG`].
#[must_use]
pub fn wait_for_pid(dir: &Path, name: &str) -> u32 {
    let started = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(dir.join(name))
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
        {
            return pid;
        }
        assert!(started.elapsed() < HANG, "no process id in {name}");
        thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_a_process_and_drains_both_streams() {
        let run = run(
            Command::new("sh").args(["-c", "cat; echo err >&2; exit 3"]),
            b"in\n".to_vec(),
            StdinEnd::Closes,
        );
        run.code(3)
            .stdout_has("in")
            .stderr_has("err")
            .stdout_lacks("err");
    }

    #[test]
    #[should_panic(expected = "exit code 0 (expected 1)")]
    fn a_wrong_code_fails_the_test() {
        let _ = run(&mut Command::new("true"), Vec::new(), StdinEnd::Closes).code(1);
    }

    #[test]
    fn a_scratch_directory_writes_and_reads_back() {
        let dir = Scratch::new();
        let path = dir.write("a/b.txt", "x");
        assert!(path.starts_with(dir.path()));
        assert_eq!(dir.read("a/b.txt"), b"x");
        assert!(running(std::process::id()));
    }
}

//! A process under test that says where it listens on stderr (`... listening on ADDR ...`),
//! as `mcppin-guard --listen`, `--extmcp-listen` and the fixture's `--http` do.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a process may take to say where it listens, and how long [`Listening::said`]
/// waits for a line.
const BOUND: Duration = Duration::from_secs(30);

/// A process that said where it listens, killed and reaped when dropped; its stderr is kept.
#[derive(Debug)]
pub struct Listening {
    child: Child,
    /// Its stderr so far, and a signal for each line added.
    stderr: Arc<(Mutex<String>, Condvar)>,
    reader: Option<JoinHandle<()>>,
    /// The first word after "listening on ": its address or URL.
    pub at: String,
}

impl Listening {
    /// Starts `command` (its stdin and stdout closed, stderr read by a thread) and waits,
    /// bounded, for its "listening on" line.
    ///
    /// # Panics
    ///
    /// When it cannot start, or says nothing of where it listens in time.
    #[must_use]
    pub fn start(command: &mut Command) -> Self {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
        let stderr = Arc::new((Mutex::new(String::new()), Condvar::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let pipe = child.stderr.take().expect("stderr");
        let kept = Arc::clone(&stderr);
        let reader = std::thread::spawn(move || {
            let mut lines = BufReader::new(pipe);
            let mut line = String::new();
            while lines.read_line(&mut line).unwrap_or(0) > 0 {
                if let Some(rest) = line.trim().split("listening on ").nth(1) {
                    let _ = tx.send(rest.split(' ').next().unwrap_or_default().to_owned());
                }
                kept.0.lock().expect("stderr").push_str(&line);
                kept.1.notify_all();
                line.clear();
            }
        });
        let Ok(at) = rx.recv_timeout(BOUND) else {
            let _ = child.kill();
            let _ = child.wait();
            let said = stderr.0.lock().expect("stderr").clone();
            panic!("{command:?} said nothing of where it listens; stderr:\n{said}");
        };
        Self {
            child,
            stderr,
            reader: Some(reader),
            at,
        }
    }

    /// Its process id.
    #[must_use]
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Its exit status, once it has ended.
    ///
    /// # Panics
    ///
    /// When it cannot be waited for.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("wait for the process")
    }

    /// What it wrote on stderr so far.
    #[must_use]
    pub fn stderr(&self) -> String {
        self.stderr.0.lock().expect("stderr").clone()
    }

    /// Whether stderr comes to contain `needle`, waiting for it (bounded: lines arrive
    /// through a thread).
    #[must_use]
    pub fn said(&self, needle: &str) -> bool {
        let deadline = Instant::now() + BOUND;
        let (text, added) = &*self.stderr;
        let mut text = text.lock().expect("stderr");
        loop {
            if text.contains(needle) {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            text = added.wait_timeout(text, left).expect("stderr").0;
        }
    }

    /// Kills it and returns all it wrote on stderr.
    #[must_use]
    pub fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        self.stderr()
    }
}

/// The resident memory (`VmRSS`) of process `pid`, in KiB.
///
/// # Panics
///
/// When `/proc/PID/status` cannot be read or holds no `VmRSS`.
#[must_use]
pub fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc status")
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

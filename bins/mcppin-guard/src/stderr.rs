//! The server's stderr, passed on to the guard's own as it comes: clients keep a server's
//! stderr as its log, and the guard stands where the server was (docs/guard.md, "The server's
//! stderr").
//!
//! Each line is escaped ([`mcppin_core::escape`]) and prefixed with `[ID] `, the server id of
//! `--server`, escaped too. A line is held up to [`MAX_LINE`] bytes: a longer one is written
//! cut, with a mark, and the rest of it is dropped as it is read.

use std::io::{self, Write};
use std::process::ChildStderr;
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

use mcppin_client::LogLines;
use mcppin_core::escape;

/// The longest stderr line passed on whole, in bytes.
pub(crate) const MAX_LINE: usize = mcppin_client::DEFAULT_MAX_LOG_LINE;

/// The thread that passes the server's stderr on.
#[derive(Debug)]
pub(crate) struct Relay {
    done: Receiver<()>,
}

impl Relay {
    /// Starts passing `pipe` on, each line prefixed with `[server] `.
    pub(crate) fn start(pipe: ChildStderr, server: &str) -> Self {
        let prefix = format!("[{}] ", escape(server));
        let (tx, done) = mpsc::channel();
        thread::spawn(move || {
            let mut lines = LogLines::new(pipe, MAX_LINE);
            while let Ok(Some(line)) = lines.next_line() {
                let mut text = prefix.clone();
                text.push_str(&line.escaped());
                if line.cut {
                    text.push_str(&format!(" [line cut: longer than {MAX_LINE} bytes]"));
                }
                text.push('\n');
                // One write per line, so lines of the guard's own do not split it.
                let _ = io::stderr().lock().write_all(text.as_bytes());
            }
            let _ = tx.send(());
        });
        Self { done }
    }

    /// Waits up to `grace` for the server's stderr to end, so its last words come before the
    /// guard's own closing lines. A process the server left behind can hold the pipe open:
    /// the wait is bounded.
    pub(crate) fn finish(self, grace: Duration) {
        let _ = self.done.recv_timeout(grace);
    }
}

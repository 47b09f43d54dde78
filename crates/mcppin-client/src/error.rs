//! The one error type of this crate.

use std::io;
use std::time::Duration;

/// Everything that can go wrong while starting, speaking to or stopping an MCP server.
///
/// Text that came from a server (an error message, a cursor, a tool name) is kept raw here:
/// escape it with [`mcppin_core::escape`] before showing it to a person.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server program could not be started (not found, not executable, bad `cwd`).
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The configured command, as given.
        program: String,
        /// What the operating system said.
        source: io::Error,
    },
    /// Reading from or writing to the server failed at the operating-system level.
    #[error("i/o error while {doing}: {source}")]
    Io {
        /// What was being done (`"writing to the server"`).
        doing: &'static str,
        /// What the operating system said.
        source: io::Error,
    },
    /// Signalling or waiting for the server's process group failed.
    #[error("cannot signal process group {pgid}: {source}")]
    Signal {
        /// The process group id.
        pgid: i32,
        /// What the operating system said.
        source: io::Error,
    },
    /// A line from the server exceeded the configured bound; nothing beyond the bound was
    /// buffered.
    #[error("a message from the server exceeds {limit} bytes")]
    LineTooLong {
        /// The bound, in bytes, excluding the newline.
        limit: usize,
    },
    /// The server's output ended in the middle of a line.
    #[error("the server's output ended inside a message ({len} bytes without a newline)")]
    UnterminatedLine {
        /// How many bytes the unterminated line held.
        len: usize,
    },
    /// A message handed to the framing layer contains a newline, which would split it in two.
    #[error("an outgoing message contains a newline at byte {offset}")]
    EmbeddedNewline {
        /// Where the newline is.
        offset: usize,
    },
    /// The server closed its output (or exited) while an answer was awaited.
    #[error("the server closed its output while {doing}")]
    Closed {
        /// What was awaited (`"waiting for the answer to tools/list"`).
        doing: String,
    },
    /// No answer arrived within the per-request timeout.
    #[error("no answer to {method} within {}", humanize(*.after))]
    Timeout {
        /// The request method.
        method: String,
        /// The timeout that passed.
        after: Duration,
    },
}

/// Formats a duration for a message (`30s`, `250ms`).
fn humanize(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

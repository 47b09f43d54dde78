//! The admission log as a hash chain (docs/formats.md, "Admission log"): the lines a guard run
//! writes, each naming the digest of the line before it, and the reader that checks them.
//!
//! A guard run is one chain. Its first line, `guard_start`, names the run, the server, the
//! lockfile (its digest) and the guard; every later line carries `seq` (its place in the run,
//! the start being 0) and `prev`, the digest of the run's line before it; the last,
//! `guard_stop`, is written when the guard stops and may be signed (the signature is
//! `mcppin-sign`'s). Several runs may append to one file: their lines interleave, each run
//! its own chain, told apart by `run`.
//!
//! **What is hashed: the bytes of the line as written**, without its newline. Not the
//! canonical form of the event: the evidence is the file, so the check reads the bytes the
//! file holds, with no second reading that could differ (a repeated member, an escape, a
//! number two readers round apart), and a line whose values have no RFC 8785 form (a client's
//! request id above 2^53 is kept as its literal) is hashed like any other. The writer
//! ([`Chain`]) writes each line in the RFC 8785 form of its object, so the bytes are also
//! the canonical form; a tool that rewrites the lines (a log shipper that re-serialises
//! JSON) breaks the chain, as any other edit does: ship the file as written. The signature of
//! a `guard_stop` covers the canonical form of that line's object without its `signature`
//! member, like a lockfile's signature envelope, and through its `prev` every line before it.
//!
//! [`Chain`] writes a run; [`Verifier`] (or [`verify`] for bytes in memory) reads a file and
//! returns a [`Report`] with the first break of each run, every gap, a cut last line, and
//! what could not be checked. This module does no I/O and reads no clock: the caller passes
//! the time of each line as text and writes the bytes.
//!
//! ```
//! use mcppin_core::log::{Chain, Start, verify};
//! use mcppin_core::{Digest, Object};
//!
//! let (mut chain, mut file) = Chain::start(&Start {
//!     run: "4d2-1",
//!     server: "docs",
//!     observed_at: "2026-08-01T09:30:00.000Z",
//!     guard: "mcppin-guard/0.1.0",
//!     transport: "stdio",
//!     mode: "refuse",
//!     lock_digest: Digest::of_bytes(b"the lockfile's canonical form"),
//!     approval_serial: 3,
//!     lock_key: None,
//!     log_key: None,
//! });
//! let mut event = Object::new();
//! event.insert("event", "tool_admission");
//! event.insert("tool", "search");
//! file.extend(chain.append("2026-08-01T09:30:01.000Z", event));
//! file.extend(chain.stop("2026-08-01T09:30:02.000Z", 0).into_line(None));
//! assert_eq!(verify(&file).exit_code(), 0);
//!
//! // One changed byte in the middle line breaks the chain at the line after it.
//! let changed = String::from_utf8(file.clone()).unwrap().replace("search", "s3arch");
//! let report = verify(changed.as_bytes());
//! assert_eq!(report.exit_code(), 1);
//! assert_eq!(report.findings[0].line, 3);
//! ```

mod verify;

pub use verify::{End, Finding, Kind, MAX_FINDINGS, Malformed, Report, Run, Verifier, verify};

use crate::canon::canonicalize_exact;
use crate::digest::Digest;
use crate::value::{Object, Value};

/// The `schema_version` of every line this module writes: 2, the first with the chain.
/// Version 1 lines (no chain) are read and reported as not verifiable.
pub const SCHEMA_VERSION: u64 = 2;

/// The `event` of a run's first line.
pub const START: &str = "guard_start";

/// The `event` of a run's last line, written when the guard stops.
pub const STOP: &str = "guard_stop";

/// The members the chain writes into every line; an event's own members of these names are
/// replaced.
pub const CHAIN_MEMBERS: [&str; 6] = [
    "schema_version",
    "run",
    "seq",
    "prev",
    "server",
    "observed_at",
];

/// What the first line of a run says: which guard started, in front of which server, under
/// which approval. Every member is the writer's own; none comes from a server or a client.
#[derive(Clone, Copy, Debug)]
pub struct Start<'a> {
    /// The run's id, unique per guard process (`run` in every line of the run).
    pub run: &'a str,
    /// The server's id in the lockfile (`--server`).
    pub server: &'a str,
    /// When the guard started, RFC 3339 (the caller's clock).
    pub observed_at: &'a str,
    /// The program and its version (`mcppin-guard/0.1.0`).
    pub guard: &'a str,
    /// How the guard reaches the server (`stdio`, `http`).
    pub transport: &'a str,
    /// What the guard does with drift (`refuse`, `quarantine`).
    pub mode: &'a str,
    /// The lockfile's digest: SHA-256 of its RFC 8785 form, undecidable literals as written
    /// (the `lock_digest` a signature envelope names).
    pub lock_digest: Digest,
    /// The lockfile's `approval_serial`.
    pub approval_serial: u64,
    /// The key whose signature of the lockfile was checked and held, if one was.
    pub lock_key: Option<Digest>,
    /// The key that will sign the run's `guard_stop`, if any: announced at the start, so an
    /// unsigned or otherwise signed end is a break.
    pub log_key: Option<Digest>,
}

/// The writer of one run's chain: it turns each event into the line to append (RFC 8785
/// form, the chain's members added, a newline at the end) and remembers that line's digest
/// for the next.
///
/// The caller writes each returned line whole, in the order returned, and nothing else
/// between them for this run.
#[derive(Debug)]
pub struct Chain {
    run: String,
    server: String,
    log_key: Option<Digest>,
    seq: u64,
    prev: Digest,
}

impl Chain {
    /// Starts a run: the chain, and its first line (`guard_start`, `seq` 0, no `prev`).
    #[must_use]
    pub fn start(start: &Start<'_>) -> (Self, Vec<u8>) {
        let mut header = Object::new();
        header.insert("event", START);
        header.insert("guard", start.guard);
        header.insert("transport", start.transport);
        header.insert("mode", start.mode);
        header.insert("lock_digest", start.lock_digest.to_string());
        header.insert("approval_serial", start.approval_serial);
        header.insert("lock_key", digest_or_null(start.lock_key));
        header.insert("log_key", digest_or_null(start.log_key));
        header.insert("schema_version", SCHEMA_VERSION);
        header.insert("run", start.run);
        header.insert("seq", 0_u64);
        header.insert("server", start.server);
        header.insert("observed_at", start.observed_at);
        let line = canonicalize_exact(&Value::from(header));
        let chain = Self {
            run: start.run.to_owned(),
            server: start.server.to_owned(),
            log_key: start.log_key,
            seq: 0,
            prev: Digest::of_bytes(&line),
        };
        (chain, terminated(line))
    }

    /// Sets the chain's members of the next line on `members` (`schema_version`, `run`, the
    /// next `seq`, `prev`, `server`, `observed_at`).
    fn link(&mut self, members: &mut Object, observed_at: &str) {
        self.seq += 1;
        members.insert("schema_version", SCHEMA_VERSION);
        members.insert("run", self.run.as_str());
        members.insert("seq", self.seq);
        members.insert("prev", self.prev.to_string());
        members.insert("server", self.server.as_str());
        members.insert("observed_at", observed_at);
    }

    /// The line for one event: `members` (its `event` and its own members) with the chain's
    /// members set (`schema_version`, `run`, `seq`, `prev`, `server`, `observed_at`).
    #[must_use]
    pub fn append(&mut self, observed_at: &str, mut members: Object) -> Vec<u8> {
        self.link(&mut members, observed_at);
        let line = canonicalize_exact(&Value::from(members));
        self.prev = Digest::of_bytes(&line);
        terminated(line)
    }

    /// The run's last line, `guard_stop`, with the guard's exit code, ready to be signed
    /// when the start announced a key. Nothing can be appended after it.
    #[must_use]
    pub fn stop(mut self, observed_at: &str, exit_code: u8) -> Stop {
        let mut members = Object::new();
        members.insert("event", STOP);
        members.insert("exit_code", u64::from(exit_code));
        members.insert("log_key", digest_or_null(self.log_key));
        self.link(&mut members, observed_at);
        Stop {
            members,
            key: self.log_key,
        }
    }

    /// The run's id.
    #[must_use]
    pub fn run(&self) -> &str {
        &self.run
    }

    /// How many lines follow the start so far.
    #[must_use]
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

/// A run's `guard_stop`, before it is written: sign [`Stop::signed_bytes`] with the key the
/// start announced ([`Stop::key`]), then write [`Stop::into_line`].
#[derive(Clone, Debug)]
pub struct Stop {
    members: Object,
    key: Option<Digest>,
}

impl Stop {
    /// The key the run's start announced (the line's `log_key`), which must sign it.
    #[must_use]
    pub fn key(&self) -> Option<Digest> {
        self.key
    }

    /// What a signature covers: the RFC 8785 form of the line's object without `signature`.
    /// Through `prev` it covers every line of the run before it.
    #[must_use]
    pub fn signed_bytes(&self) -> Vec<u8> {
        canonicalize_exact(&Value::from(self.members.clone()))
    }

    /// The line to write, with `signature` (the signature's text, base64) when given.
    ///
    /// A run whose start announced a key must end with its signature, and one that announced
    /// none without one: [`Verifier`] reports either mismatch as a break.
    #[must_use]
    pub fn into_line(mut self, signature: Option<&str>) -> Vec<u8> {
        if let Some(signature) = signature {
            self.members.insert("signature", signature);
        }
        terminated(canonicalize_exact(&Value::from(self.members)))
    }
}

fn digest_or_null(digest: Option<Digest>) -> Value {
    digest.map_or_else(Value::null, |d| Value::from(d.to_string()))
}

fn terminated(mut line: Vec<u8>) -> Vec<u8> {
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests;

//! The admission log (docs/guard.md `--log`): one JSON line per decision, written and flushed as it
//! is made, so that a session can be reconstructed from the file alone even when the guard is
//! killed. Each run of the guard is a hash chain (`mcppin_core::log`): a `guard_start` naming
//! the lockfile, the events, and a `guard_stop` written when the guard stops, signed with
//! `--log-key` when given.

use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use mcppin_core::engine::Event;
use mcppin_core::log::{Chain, Start};
use mcppin_sign::SigningKey;

/// Where times come from: the system clock, or a fixed one (`--now`, for tests).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Clock {
    System(Instant),
    Fixed(SystemTime),
}

impl Clock {
    /// The system clock, durations measured from now.
    pub(crate) fn system() -> Self {
        Self::System(Instant::now())
    }

    pub(crate) fn now(self) -> SystemTime {
        match self {
            Self::System(_) => SystemTime::now(),
            Self::Fixed(at) => at,
        }
    }

    /// The time since the guard started, for the engine's durations: zero under a fixed
    /// clock, which measures nothing.
    pub(crate) fn since_start(self) -> Duration {
        match self {
            Self::System(started) => started.elapsed(),
            Self::Fixed(_) => Duration::ZERO,
        }
    }

    /// The time of a line: RFC 3339 UTC with milliseconds.
    fn stamp(self) -> String {
        humantime::format_rfc3339_millis(self.now()).to_string()
    }
}

/// The log (when `--log` is given) and what every line carries: a handle, cloned for every
/// thread that writes (the forwarding threads, the signal handler), all writing one chain.
#[derive(Clone, Debug)]
pub(crate) struct Log {
    writer: Option<Arc<Mutex<Writer>>>,
    pub(crate) clock: Clock,
    session_id: String,
    server: String,
}

/// The open file and the run's chain; the chain is gone once the run's end is written.
struct Writer {
    file: File,
    chain: Option<Chain>,
    key: Option<SigningKey>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is never shown.
        f.debug_struct("Writer")
            .field("chain", &self.chain)
            .field("signed", &self.key.is_some())
            .finish_non_exhaustive()
    }
}

/// What the `guard_start` line says besides the run, the server and the time.
pub(crate) struct Opening {
    pub(crate) transport: &'static str,
    pub(crate) mode: &'static str,
    pub(crate) lock_digest: mcppin_core::Digest,
    pub(crate) approval_serial: u64,
    pub(crate) lock_key: Option<mcppin_core::Digest>,
}

impl Log {
    /// No log: nothing is written.
    pub(crate) fn none(clock: Clock, session_id: String, server: String) -> Self {
        Self {
            writer: None,
            clock,
            session_id,
            server,
        }
    }

    /// Starts the run's chain in `file`: writes its `guard_start` line. `session_id` is the
    /// run's id.
    pub(crate) fn start(
        mut file: File,
        key: Option<SigningKey>,
        opening: &Opening,
        clock: Clock,
        session_id: String,
        server: String,
    ) -> std::io::Result<Self> {
        let guard = concat!("mcppin-guard/", env!("CARGO_PKG_VERSION"));
        let (chain, line) = Chain::start(&Start {
            run: &session_id,
            server: &server,
            observed_at: &clock.stamp(),
            guard,
            transport: opening.transport,
            mode: opening.mode,
            lock_digest: opening.lock_digest,
            approval_serial: opening.approval_serial,
            lock_key: opening.lock_key,
            log_key: key.as_ref().map(|k| k.public_key().fingerprint()),
        });
        file.write_all(&line)?;
        file.flush()?;
        Ok(Self {
            writer: Some(Arc::new(Mutex::new(Writer {
                file,
                chain: Some(chain),
                key,
            }))),
            clock,
            session_id,
            server,
        })
    }

    /// The server id (`--server`).
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    /// Whether lines are written at all (the engine builds no events otherwise).
    pub(crate) fn enabled(&self) -> bool {
        self.writer.is_some()
    }

    /// Writes one event as a line of the chain and flushes it. A failing write ends nothing:
    /// the session goes on, and the failure is returned for the caller to report once.
    pub(crate) fn event(&self, event: &Event) -> std::io::Result<()> {
        self.event_in(&self.session_id, event)
    }

    /// Writes one event as [`Log::event`] does, for the session `session_id` (the HTTP guard
    /// runs many sessions, each its own id). After the run's end nothing more is written.
    pub(crate) fn event_in(&self, session_id: &str, event: &Event) -> std::io::Result<()> {
        let Some(writer) = &self.writer else {
            return Ok(());
        };
        let mut members = event.to_object();
        members.insert("session_id", session_id);
        let mut writer = writer.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(chain) = &mut writer.chain else {
            return Ok(());
        };
        let line = chain.append(&self.clock.stamp(), members);
        writer.file.write_all(&line)?;
        writer.file.flush()
    }

    /// Ends the run's chain: writes its `guard_stop` with the guard's exit code, signed with
    /// `--log-key` when given. Once only: a later call, and every later event, writes nothing.
    pub(crate) fn stop(&self, exit_code: u8) -> anyhow::Result<()> {
        let Some(writer) = &self.writer else {
            return Ok(());
        };
        let mut writer = writer.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(chain) = writer.chain.take() else {
            return Ok(());
        };
        let stop = chain.stop(&self.clock.stamp(), exit_code);
        let line = match &writer.key {
            Some(key) => mcppin_sign::log::sign(stop, key)?,
            None => stop.into_line(None),
        };
        writer.file.write_all(&line)?;
        writer.file.flush()?;
        Ok(())
    }
}

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

use crate::state::StateWriter;

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
    /// The state for a pre-call hook (`--state`), fed the same events.
    state: Option<Arc<Mutex<StateWriter>>>,
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

/// The line (after the guard's name) saying that what `doing` names could not be written,
/// for `err` of [`Log::events_in`] or [`Log::stop`]: its text names files (a `--state`
/// directory a server id is part of), shown in the `<U+XXXX>` notation.
pub(crate) fn failed(doing: &str, err: &anyhow::Error) -> String {
    format!(
        "cannot write {doing}: {}",
        mcppin_core::escape_non_ascii(&format!("{err:#}"))
    )
}

impl Log {
    /// No log: nothing is written.
    pub(crate) fn none(clock: Clock, session_id: String, server: String) -> Self {
        Self {
            writer: None,
            state: None,
            clock,
            session_id,
            server,
        }
    }

    /// Keeps the state for a pre-call hook too (`--state`), written whenever the current
    /// reading of the list changes.
    pub(crate) fn with_state(mut self, state: StateWriter) -> Self {
        self.state = Some(Arc::new(Mutex::new(state)));
        self
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
            state: None,
            clock,
            session_id,
            server,
        })
    }

    /// The server id (`--server`).
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    /// Whether events are recorded at all, in the log or the state (the engine builds no
    /// events otherwise).
    pub(crate) fn enabled(&self) -> bool {
        self.writer.is_some() || self.state.is_some()
    }

    /// Records the events of this run's one session ([`Log::events_in`]).
    pub(crate) fn events(&self, events: &[Event]) -> anyhow::Result<()> {
        self.events_in(&self.session_id, events)
    }

    /// Records the events of session `session_id` (the HTTP guard runs many sessions, each its
    /// own id): each as a line of the log, flushed, then the state once. A failing write ends
    /// nothing: the session goes on, and the failure is returned for the caller to report
    /// once.
    pub(crate) fn events_in(&self, session_id: &str, events: &[Event]) -> anyhow::Result<()> {
        let mut failed = None;
        for event in events {
            if let Err(err) = self.event_in(session_id, event) {
                failed.get_or_insert(anyhow::Error::new(err));
            }
        }
        if let Some(state) = &self.state {
            let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
            if let Err(err) = state.observe(session_id, events, &self.clock.stamp()) {
                failed.get_or_insert(err.context("cannot write the state"));
            }
        }
        failed.map_or(Ok(()), Err)
    }

    /// Writes one event as a line of the chain, for the session `session_id`, and flushes it.
    /// After the run's end nothing more is written.
    fn event_in(&self, session_id: &str, event: &Event) -> std::io::Result<()> {
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

    /// Ends the run: removes its state (a hook then blocks every call to the server), and
    /// writes the log's `guard_stop` with the guard's exit code, signed with `--log-key` when
    /// given. Once only: a later call, and every later event, writes nothing.
    pub(crate) fn stop(&self, exit_code: u8) -> anyhow::Result<()> {
        if let Some(state) = &self.state {
            state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove();
        }
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

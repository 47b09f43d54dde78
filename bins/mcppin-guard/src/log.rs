//! The admission log (docs/guard.md `--log`): one JSON line per decision, written and flushed as it
//! is made, so that a session can be reconstructed from the file alone even when the guard is
//! killed.

use std::fs::File;
use std::io::Write;
use std::time::{Duration, Instant, SystemTime};

use mcppin_core::engine::Event;
use serde::Serialize;

/// The `schema_version` of every line (docs/formats.md, "Admission log").
const SCHEMA_VERSION: u64 = 1;

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
}

/// The log file (when `--log` is given) and what every line carries.
#[derive(Debug)]
pub(crate) struct Log {
    file: Option<File>,
    pub(crate) clock: Clock,
    session_id: String,
    server: String,
}

/// One line of the log: the members every line carries, then the event's own.
#[derive(Serialize)]
struct Line<'a> {
    schema_version: u64,
    session_id: &'a str,
    server: &'a str,
    observed_at: String,
    #[serde(flatten)]
    event: &'a Event,
}

impl Log {
    pub(crate) fn new(
        file: Option<File>,
        clock: Clock,
        session_id: String,
        server: String,
    ) -> Self {
        Self {
            file,
            clock,
            session_id,
            server,
        }
    }

    /// The server id (`--server`).
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    /// Whether lines are written at all (the engine builds no events otherwise).
    pub(crate) fn enabled(&self) -> bool {
        self.file.is_some()
    }

    /// Writes one event as a line with the common members (`schema_version`, `session_id`,
    /// `server`, `observed_at`; `event` is the event's tag), and flushes it. A failing write
    /// ends nothing: the session goes on, and the failure is returned for the caller to report
    /// once.
    pub(crate) fn event(&mut self, event: &Event) -> std::io::Result<()> {
        let session_id = std::mem::take(&mut self.session_id);
        let written = self.event_in(&session_id, event);
        self.session_id = session_id;
        written
    }

    /// Writes one event as [`Log::event`] does, for the session `session_id` (the HTTP guard
    /// runs many sessions, each its own id).
    pub(crate) fn event_in(&mut self, session_id: &str, event: &Event) -> std::io::Result<()> {
        let Some(file) = &mut self.file else {
            return Ok(());
        };
        let line = Line {
            schema_version: SCHEMA_VERSION,
            session_id,
            server: &self.server,
            observed_at: humantime::format_rfc3339_millis(self.clock.now()).to_string(),
            event,
        };
        let mut bytes = serde_json::to_vec(&line).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        file.write_all(&bytes)?;
        file.flush()
    }
}

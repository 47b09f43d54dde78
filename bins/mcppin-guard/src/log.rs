//! The admission log (SPEC 6 `--log`): one JSON line per decision, written and flushed as it
//! is made, so that a session can be reconstructed from the file alone even when the guard is
//! killed.

use std::fs::File;
use std::io::Write;
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};

/// The `schema_version` of every line (docs/formats.md, "Admission log").
const SCHEMA_VERSION: u64 = 1;

/// Where times come from: the system clock, or a fixed one (`--now`, for tests).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Clock {
    System,
    Fixed(SystemTime),
}

impl Clock {
    pub(crate) fn now(self) -> SystemTime {
        match self {
            Self::System => SystemTime::now(),
            Self::Fixed(at) => at,
        }
    }

    /// A duration for the log: measured, or zero under a fixed clock.
    pub(crate) fn elapsed(self, since: std::time::Instant) -> Duration {
        match self {
            Self::System => since.elapsed(),
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

    /// Whether lines are written at all (callers skip building them otherwise).
    pub(crate) fn enabled(&self) -> bool {
        self.file.is_some()
    }

    /// Writes one event with the common members (`event`, `session_id`, `server`,
    /// `observed_at`) and `fields`. A failing write ends nothing: the session goes on, and the
    /// failure is returned for the caller to report once.
    pub(crate) fn event(&mut self, event: &str, fields: Value) -> std::io::Result<()> {
        let Some(file) = &mut self.file else {
            return Ok(());
        };
        let mut line = Map::new();
        line.insert("schema_version".into(), json!(SCHEMA_VERSION));
        line.insert("event".into(), json!(event));
        line.insert("session_id".into(), json!(self.session_id));
        line.insert("server".into(), json!(self.server));
        line.insert(
            "observed_at".into(),
            json!(humantime::format_rfc3339_millis(self.clock.now()).to_string()),
        );
        if let Value::Object(fields) = fields {
            line.extend(fields);
        }
        let mut bytes = serde_json::to_vec(&Value::Object(line)).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        file.write_all(&bytes)?;
        file.flush()
    }
}

//! The guard's state for a pre-call hook (`--state DIR`, docs/formats.md "Guard state"): which
//! tools the current reading of the list admitted, written atomically to `DIR/<server>.json`
//! whenever that changes, and removed when the guard stops. The process facts the hook needs to
//! tell a running guard from a gone one (`process_start`, [`alive`]) are here too.

use std::path::{Path, PathBuf};

use mcppin_core::Digest;
use mcppin_core::engine::Event;
use mcppin_core::hook::{Guard, Tracker, state_file_name};

/// The most bytes of a state file read (by the pre-call hook, and by the guard that removes its
/// own).
pub(crate) const MAX_STATE: usize = 16 * 1024 * 1024;

/// The state of one guard run, and where it goes.
#[derive(Debug)]
pub(crate) struct StateWriter {
    path: PathBuf,
    transport: &'static str,
    server: String,
    run: String,
    pid: u32,
    process_start: Option<u64>,
    lock_digest: Digest,
    tracker: Tracker,
}

impl StateWriter {
    /// The writer of `server`'s state in `dir`.
    pub(crate) fn new(
        dir: &Path,
        transport: &'static str,
        server: &str,
        run: &str,
        lock_digest: Digest,
    ) -> Self {
        let pid = std::process::id();
        Self {
            path: dir.join(state_file_name(server)),
            transport,
            server: server.to_owned(),
            run: run.to_owned(),
            pid,
            process_start: process_start(pid),
            lock_digest,
            tracker: Tracker::new(),
        }
    }

    /// Takes a session's events; writes the state when the current reading changed.
    pub(crate) fn observe(
        &mut self,
        session_id: &str,
        events: &[Event],
        at: &str,
    ) -> anyhow::Result<()> {
        if self.tracker.observe(session_id, events) {
            self.write(at)?;
        }
        Ok(())
    }

    /// Writes the state as it stands, through a temporary file and a rename; a link in its
    /// place is replaced, not followed.
    pub(crate) fn write(&self, at: &str) -> anyhow::Result<()> {
        let guard = Guard {
            server: &self.server,
            run: &self.run,
            pid: self.pid,
            process_start: self.process_start,
            lock_digest: self.lock_digest,
        };
        let bytes = self.tracker.state(&guard, at).to_bytes(self.transport);
        mcppin_cli::replace_entry(&self.path, &bytes)
    }

    /// Removes the state when it is still this run's (another guard may have written the file
    /// since).
    pub(crate) fn remove(&self) {
        // Only a regular file in its place is read: a link someone put there (to a pipe that
        // never ends, to /dev/zero) is neither followed nor removed.
        let file = self
            .path
            .symlink_metadata()
            .is_ok_and(|meta| meta.is_file());
        let ours = file
            .then(|| mcppin_cli::read_at_most(&self.path, MAX_STATE).ok())
            .flatten()
            .and_then(|bytes| mcppin_core::hook::State::parse(&bytes).ok())
            .is_some_and(|state| state.run == self.run);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// When process `pid` started, in clock ticks since boot (Linux: field 22 of
/// `/proc/PID/stat`); `None` where that cannot be read.
pub(crate) fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold anything: count after the last
    // closing one. Field 3 (the state) comes first there, field 22 is the 20th.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

/// Whether the guard process `pid` that started at `start` still runs: on Linux its
/// `/proc/PID/stat` is there, not a zombie, with the same start (so a process id used again is
/// another process); elsewhere, whether a signal could reach it.
pub(crate) fn alive(pid: u32, start: Option<u64>) -> bool {
    if Path::new("/proc/self/stat").exists() {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        return !zombie && (start.is_none() || process_start(pid) == start);
    }
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

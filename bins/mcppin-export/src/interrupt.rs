//! Stopping the servers when the export itself is interrupted (Ctrl-C, SIGTERM, SIGHUP).
//!
//! Servers run in their own process groups, so the terminal's SIGINT never reaches them, and a
//! process that dies of a signal runs no destructors. Without this, an interrupted export would
//! leave a server that ignores end of input running.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcppin_cli::signal::SignalStop;

pub(crate) use mcppin_cli::signal::{commit, signalled as interrupted, wait_for_exit};

/// The process groups of the servers running now.
#[derive(Clone, Debug, Default)]
pub(crate) struct Running {
    groups: Arc<Mutex<BTreeSet<u32>>>,
}

impl Running {
    /// Notes a started server.
    pub(crate) fn add(&self, id: u32) {
        self.groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id);
    }

    /// Notes a server that was stopped.
    pub(crate) fn remove(&self, id: u32) {
        self.groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
    }
}

/// Starts a thread that, on SIGINT, SIGTERM or SIGHUP, stops every running server's group
/// (SIGTERM, `grace`, SIGKILL) and exits with 128 + the signal number.
pub(crate) fn install(running: &Running, grace: Duration) -> std::io::Result<()> {
    let running = running.clone();
    let stop = move || {
        let groups: Vec<u32> = running
            .groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .copied()
            .collect();
        for id in groups {
            let _ = mcppin_client::stop_group(id, grace);
        }
    };
    SignalStop::register()?.on_signal(
        move |_| stop(),
        b"mcppin-export: interrupted; the servers were stopped and nothing was written\n",
    );
    Ok(())
}

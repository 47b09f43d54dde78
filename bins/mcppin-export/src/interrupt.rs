//! Stopping the servers when the export itself is interrupted (Ctrl-C, SIGTERM, SIGHUP).
//!
//! Servers run in their own process groups, so the terminal's SIGINT never reaches them, and a
//! process that dies of a signal runs no destructors. Without this, an interrupted export would
//! leave a server that ignores end of input running.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Set as soon as a signal arrived; the main thread then leaves the exit to the handler.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether the export was interrupted.
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Waits for the handler thread to stop the servers and exit the process.
pub(crate) fn wait_for_exit() -> ! {
    loop {
        thread::park();
    }
}

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
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    let running = running.clone();
    thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            INTERRUPTED.store(true, Ordering::SeqCst);
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
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                b"mcppin-export: interrupted; the servers were stopped and nothing was written\n",
            );
            std::process::exit(128 + signal);
        }
    });
    Ok(())
}

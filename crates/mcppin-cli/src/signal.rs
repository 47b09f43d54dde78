//! Stopping what a binary started when the binary itself is told to stop (Ctrl-C, SIGTERM,
//! SIGHUP).
//!
//! Servers run in their own process groups, so the terminal's SIGINT never reaches them, and a
//! process that dies of a signal runs no destructors: without a handler, a server that ignores
//! end of input would outlive the binary that started it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Set as soon as a signal arrived; the main thread then leaves the exit to the handler.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// Whether the run has begun to write what it made ([`commit`]): a signal then no longer stops
/// it. Held while the handler decides, so that the two never cross.
static COMMITTING: Mutex<bool> = Mutex::new(false);

/// Runs `write`, the last step of a run (the file it made), unless a signal came first: then
/// `None`, and the caller leaves the exit to the handler ([`wait_for_exit`]). A signal that
/// comes once `write` has begun is let be: the run ends as it would have, the file written
/// whole (through its temporary file, removed) and said so, never exited from halfway with a
/// temporary file left and "nothing was written" said after all.
pub fn commit<T>(write: impl FnOnce() -> T) -> Option<T> {
    {
        let mut committing = COMMITTING.lock().unwrap_or_else(PoisonError::into_inner);
        if signalled() {
            return None;
        }
        *committing = true;
    }
    Some(write())
}

/// Whether a signal told the process to stop. The run may end on its own meanwhile (a stopped
/// server closes its output); the exit is then left to the handler: call [`wait_for_exit`].
pub fn signalled() -> bool {
    SIGNALLED.load(Ordering::SeqCst)
}

/// Waits for the handler thread to finish stopping and exit the process.
pub fn wait_for_exit() -> ! {
    loop {
        thread::park();
    }
}

/// SIGINT, SIGTERM and SIGHUP, caught from [`SignalStop::register`] on: register before
/// starting what must be stopped, so that a signal arriving in between is not lost.
#[derive(Debug)]
pub struct SignalStop {
    signals: Signals,
}

impl SignalStop {
    /// Catches SIGINT, SIGTERM and SIGHUP from now on.
    ///
    /// # Errors
    ///
    /// The handler cannot be installed.
    pub fn register() -> std::io::Result<Self> {
        Ok(Self {
            signals: Signals::new([SIGINT, SIGTERM, SIGHUP])?,
        })
    }

    /// Starts the thread that, on the first of those signals, marks the process
    /// [`signalled`], runs `stop` with the exit code it is about to end with (stopping the
    /// servers, recording the end), writes `message` to stderr and exits with that code, 128 +
    /// the signal number.
    pub fn on_signal(mut self, stop: impl FnOnce(u8) + Send + 'static, message: &'static [u8]) {
        thread::spawn(move || {
            if let Some(signal) = self.signals.forever().next() {
                {
                    let committing = COMMITTING.lock().unwrap_or_else(PoisonError::into_inner);
                    if *committing {
                        // The run is writing its result: it ends on its own, as it would have.
                        return;
                    }
                    SIGNALLED.store(true, Ordering::SeqCst);
                }
                stop(u8::try_from(128 + signal).unwrap_or(u8::MAX));
                let _ = std::io::Write::write_all(&mut std::io::stderr(), message);
                // Told to stop: having stopped what it started, the process ends as one killed
                // by the signal would.
                std::process::exit(128 + signal);
            }
        });
    }
}

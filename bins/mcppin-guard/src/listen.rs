//! What the two listening adapters (`--listen`, `--extmcp-listen`) share: the signals that
//! stop them, and taking in one connection within `--max-connections`.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::net::{TcpListener, TcpStream};
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// SIGTERM, SIGINT and SIGHUP: each stops a listening guard.
pub(crate) struct Stops {
    terminate: Signal,
    interrupt: Signal,
    hangup: Signal,
}

impl Stops {
    /// Installs the three handlers.
    pub(crate) fn install() -> anyhow::Result<Self> {
        Ok(Self {
            terminate: signal(SignalKind::terminate()).context("cannot install SIGTERM")?,
            interrupt: signal(SignalKind::interrupt()).context("cannot install SIGINT")?,
            hangup: signal(SignalKind::hangup()).context("cannot install SIGHUP")?,
        })
    }

    /// Resolves when one of them arrives.
    async fn recv(&mut self) {
        tokio::select! {
            _ = self.terminate.recv() => {}
            _ = self.interrupt.recv() => {}
            _ = self.hangup.recv() => {}
        }
    }
}

/// The next connection, once one of the `places` is free (the place is held until the
/// returned permit is dropped); `None` once a signal stops the guard. A failed accept (out of
/// descriptors) gives the place back and tries again shortly. Answers go out as soon as they
/// are written (`TCP_NODELAY`): Nagle's algorithm would hold a second segment for the peer's
/// acknowledgement of the first.
pub(crate) async fn next_connection(
    listener: &TcpListener,
    places: &Arc<Semaphore>,
    stops: &mut Stops,
) -> Option<(TcpStream, OwnedSemaphorePermit)> {
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(places).acquire_owned() => permit.ok()?,
            () = stops.recv() => return None,
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stops.recv() => return None,
        };
        match accepted {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                return Some((stream, permit));
            }
            Err(_) => {
                drop(permit);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

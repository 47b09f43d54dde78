//! Writing to the server's stdin without ever blocking on it.
//!
//! A server that stops reading its stdin fills the pipe, and a blocking write would then hold
//! the client's direction forever: the guard would never see the client leave, and the
//! shutdown order would never start. The pipe is non-blocking instead; while it is full, the
//! writer waits on it and on the client's end of input together, so the client closing its end
//! is seen however the server behaves (docs/guard.md, "Shutdown").

use std::io::{self, Write};
use std::os::fd::BorrowedFd;
use std::process::ChildStdin;
use std::sync::{Mutex, MutexGuard, PoisonError};

use rustix::event::{PollFd, PollFlags, Timespec, poll};

/// How long one wait on a full pipe lasts before the writer looks again whether the session
/// was stopped meanwhile (see [`feed`]).
const WAIT: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 100_000_000,
};

/// The server's stdin, shared by the client's direction (which writes) and the main thread
/// (which closes it to stop the session). `None` once it is closed.
pub(crate) type ServerIn = Mutex<Option<ChildStdin>>;

/// Makes the server's stdin non-blocking, as [`feed`] needs it.
pub(crate) fn nonblocking(pipe: &ChildStdin) -> io::Result<()> {
    rustix::io::ioctl_fionbio(pipe, true).map_err(io::Error::from)
}

/// The client's end of input, watched while the server's stdin is full.
#[derive(Debug)]
pub(crate) struct Client<'a> {
    /// `None` once the client was seen to close it (it is not watched again).
    fd: Option<BorrowedFd<'a>>,
}

impl<'a> Client<'a> {
    pub(crate) fn new(fd: BorrowedFd<'a>) -> Self {
        Self { fd: Some(fd) }
    }

    /// Whether the client was seen to close its end while a write waited.
    pub(crate) fn closed(&self) -> bool {
        self.fd.is_none()
    }
}

/// How a [`feed`] ended.
#[derive(Debug, Eq, PartialEq)]
pub(crate) enum Fed {
    /// Every byte was written.
    Written,
    /// The server's stdin is closed (the server is gone, or the session was stopped): what was
    /// not written is dropped.
    Closed,
}

/// Writes `parts`, one after the other, to the server's stdin.
///
/// While the pipe is full it waits on it and on the client's end of input: when the client
/// closes its end, `hangup` is called once (the caller starts the shutdown order, which ends a
/// server that does not read), and the writing goes on until the server takes the bytes or its
/// stdin is closed. Every [`WAIT`] it asks `stopped` whether the session ended meanwhile, and
/// then closes the server's stdin itself (the main thread could not take it while a write
/// held it).
pub(crate) fn feed(
    server_in: &ServerIn,
    parts: &[&[u8]],
    client: &mut Client<'_>,
    stopped: impl Fn() -> bool,
    mut hangup: impl FnMut(),
) -> Fed {
    for part in parts {
        let mut sent = 0;
        while sent < part.len() {
            let mut slot = lock(server_in);
            let Some(pipe) = slot.as_ref() else {
                return Fed::Closed;
            };
            let rest = part.get(sent..).unwrap_or_default();
            match (&*pipe).write(rest) {
                Ok(0) => {
                    slot.take();
                    return Fed::Closed;
                }
                Ok(n) => {
                    sent += n;
                    continue;
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => {
                    // The server closed its end: its end of output tells the main thread.
                    slot.take();
                    return Fed::Closed;
                }
            }
            match wait(pipe, client.fd) {
                Ready::Pipe => {}
                Ready::ClientClosed => {
                    client.fd = None;
                    drop(slot);
                    hangup();
                }
                Ready::Nothing => {
                    drop(slot);
                    if stopped() {
                        lock(server_in).take();
                        return Fed::Closed;
                    }
                }
            }
        }
    }
    Fed::Written
}

/// What a wait found.
enum Ready {
    /// The pipe takes bytes again, or reports an error the next write will show.
    Pipe,
    /// The client closed its end of input.
    ClientClosed,
    /// [`WAIT`] passed.
    Nothing,
}

/// Waits up to [`WAIT`] until the pipe takes bytes or the client closes its end.
fn wait(pipe: &ChildStdin, client: Option<BorrowedFd<'_>>) -> Ready {
    let mut fds = vec![PollFd::new(pipe, PollFlags::OUT)];
    if let Some(fd) = &client {
        // HUP and ERR are always reported; RDHUP adds a socket whose peer stopped writing.
        fds.push(PollFd::new(fd, PollFlags::RDHUP));
    }
    match poll(&mut fds, Some(&WAIT)) {
        Ok(0) => return Ready::Nothing,
        Ok(_) => {}
        Err(_) => return Ready::Nothing,
    }
    let gone = PollFlags::HUP | PollFlags::RDHUP | PollFlags::ERR | PollFlags::NVAL;
    if fds.get(1).is_some_and(|fd| fd.revents().intersects(gone)) {
        return Ready::ClientClosed;
    }
    Ready::Pipe
}

fn lock(server_in: &ServerIn) -> MutexGuard<'_, Option<ChildStdin>> {
    server_in.lock().unwrap_or_else(PoisonError::into_inner)
}

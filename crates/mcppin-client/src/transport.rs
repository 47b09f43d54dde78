//! Moving lines between a client and a server: a bounded reader thread, a writer, timeouts.

use std::io::{Read, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use crate::Error;
use crate::frame::{LineReader, write_line};
use crate::process::{CapturedStderr, ServerCommand, ServerProcess, Shutdown};
use crate::revision::Revision;

/// What one wait for an incoming line produced.
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum Received {
    /// One line, without its newline.
    Line(Vec<u8>),
    /// The other side closed its output.
    Closed,
    /// Nothing arrived in time.
    TimedOut,
}

/// A line-oriented, two-way link to a server.
///
/// Sessions speak through this trait, so they run the same over a child process
/// ([`Connection`]) and over any pair of byte streams ([`Channel`]).
pub trait Transport {
    /// Sends one message as one line.
    ///
    /// # Errors
    ///
    /// [`Error::EmbeddedNewline`], or [`Error::Io`] when the other side is gone.
    fn send(&mut self, message: &[u8]) -> Result<(), Error>;

    /// Waits up to `timeout` for the next line.
    ///
    /// # Errors
    ///
    /// A framing error of the incoming stream ([`Error::LineTooLong`],
    /// [`Error::UnterminatedLine`], [`Error::Io`]); after one, the stream is unusable.
    fn receive(&mut self, timeout: Duration) -> Result<Received, Error>;

    /// Told the revision once the `initialize` handshake agreed on it, for a transport that
    /// carries it outside the messages (the `MCP-Protocol-Version` header of Streamable
    /// HTTP). The default does nothing; a wrapper must pass it on.
    fn agreed(&mut self, revision: Revision) {
        let _ = revision;
    }
}

impl<T: Transport + ?Sized> Transport for &mut T {
    fn send(&mut self, message: &[u8]) -> Result<(), Error> {
        (**self).send(message)
    }

    fn receive(&mut self, timeout: Duration) -> Result<Received, Error> {
        (**self).receive(timeout)
    }

    fn agreed(&mut self, revision: Revision) {
        (**self).agreed(revision);
    }
}

/// A [`Transport`] over any reader and writer: a thread reads bounded lines from `reader`.
///
/// The thread hands over one line at a time (a rendezvous channel), so at most two lines are
/// held in memory however fast the other side writes.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use mcppin_client::{Channel, Received, Transport};
///
/// let mut channel = Channel::new(&b"{\"id\":1}\n"[..], Vec::new(), 1024);
/// let wait = Duration::from_secs(5);
/// assert_eq!(channel.receive(wait)?, Received::Line(b"{\"id\":1}".to_vec()));
/// assert_eq!(channel.receive(wait)?, Received::Closed);
/// # Ok::<(), mcppin_client::Error>(())
/// ```
#[derive(Debug)]
pub struct Channel {
    writer: Option<Box<dyn WriteSend>>,
    incoming: Receiver<Result<Vec<u8>, Error>>,
    closed: bool,
}

/// A writer that can move to another thread, with a `Debug` stand-in.
trait WriteSend: Write + Send {}

impl<W: Write + Send> WriteSend for W {}

impl std::fmt::Debug for dyn WriteSend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<writer>")
    }
}

impl Channel {
    /// A channel reading lines of at most `max_line` bytes from `reader` and writing to
    /// `writer`.
    pub fn new<R, W>(reader: R, writer: W, max_line: usize) -> Self
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        let (tx, rx) = mpsc::sync_channel(0);
        thread::spawn(move || {
            let mut lines = LineReader::new(reader, max_line);
            loop {
                match lines.read_line() {
                    Ok(Some(line)) => {
                        if tx.send(Ok(line)).is_err() {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(err) => {
                        let _ = tx.send(Err(err));
                        break;
                    }
                }
            }
        });
        Self {
            writer: Some(Box::new(writer)),
            incoming: rx,
            closed: false,
        }
    }

    /// Closes the writing side (for a child process: its stdin, the first shutdown step).
    pub fn close_output(&mut self) {
        self.writer = None;
    }
}

impl Transport for Channel {
    fn send(&mut self, message: &[u8]) -> Result<(), Error> {
        match &mut self.writer {
            Some(writer) => write_line(writer, message),
            None => Err(Error::Io {
                doing: "writing to the server",
                source: std::io::ErrorKind::BrokenPipe.into(),
            }),
        }
    }

    fn receive(&mut self, timeout: Duration) -> Result<Received, Error> {
        if self.closed {
            return Ok(Received::Closed);
        }
        match self.incoming.recv_timeout(timeout) {
            Ok(Ok(line)) => Ok(Received::Line(line)),
            Ok(Err(err)) => {
                self.closed = true;
                Err(err)
            }
            Err(RecvTimeoutError::Timeout) => Ok(Received::TimedOut),
            Err(RecvTimeoutError::Disconnected) => {
                self.closed = true;
                Ok(Received::Closed)
            }
        }
    }
}

/// A server process and the [`Channel`] over its stdin and stdout.
///
/// Dropping it stops the server (the shutdown order of [`ServerProcess::shutdown`]).
#[derive(Debug)]
pub struct Connection {
    // Field order matters for Drop: the channel (and with it the server's stdin) goes first.
    channel: Channel,
    process: ServerProcess,
}

impl Connection {
    /// Starts `command` and connects to its stdin and stdout, reading lines of at most
    /// `max_line` bytes.
    ///
    /// # Errors
    ///
    /// [`Error::Spawn`] when the server cannot be started.
    pub fn open(command: &ServerCommand, max_line: usize) -> Result<Self, Error> {
        let mut process = command.spawn()?;
        let (Some(stdin), Some(stdout)) = (process.take_stdin(), process.take_stdout()) else {
            // `spawn` always pipes both; a process without them is stopped by its Drop.
            return Err(Error::Io {
                doing: "connecting to the server",
                source: std::io::ErrorKind::BrokenPipe.into(),
            });
        };
        Ok(Self {
            channel: Channel::new(stdout, stdin, max_line),
            process,
        })
    }

    /// The server's process (and process group) id.
    #[must_use]
    pub fn id(&self) -> u32 {
        self.process.id()
    }

    /// The server's stderr so far, when captured.
    #[must_use]
    pub fn stderr(&self) -> Option<CapturedStderr> {
        self.process.stderr()
    }

    /// Stops the server: closes its stdin, then the rest of the order of docs/export.md.
    ///
    /// # Errors
    ///
    /// As [`ServerProcess::shutdown`].
    pub fn shutdown(&mut self) -> Result<Shutdown, Error> {
        self.channel.close_output();
        self.process.shutdown()
    }
}

impl Transport for Connection {
    fn send(&mut self, message: &[u8]) -> Result<(), Error> {
        self.channel.send(message)
    }

    fn receive(&mut self, timeout: Duration) -> Result<Received, Error> {
        self.channel.receive(timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn talks_to_a_child_over_lines() {
        let mut conn = Connection::open(&ServerCommand::new("/bin/cat"), 1024).unwrap();
        conn.send(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .unwrap();
        assert_eq!(
            conn.receive(Duration::from_secs(10)).unwrap(),
            Received::Line(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec())
        );
        conn.shutdown().unwrap();
    }

    #[test]
    fn times_out_when_nothing_arrives() {
        let mut conn = Connection::open(&ServerCommand::new("/bin/cat"), 1024).unwrap();
        assert_eq!(
            conn.receive(Duration::from_millis(50)).unwrap(),
            Received::TimedOut
        );
    }

    #[test]
    fn reports_a_closed_stream() {
        let cmd = ServerCommand::new("/bin/sh").arg("-c").arg("exit 0");
        let mut conn = Connection::open(&cmd, 1024).unwrap();
        assert_eq!(
            conn.receive(Duration::from_secs(10)).unwrap(),
            Received::Closed
        );
    }

    #[test]
    fn refuses_an_overlong_line_from_the_server() {
        let cmd = ServerCommand::new("/bin/sh")
            .arg("-c")
            .arg("head -c 5000 /dev/zero | tr '\\0' x; echo");
        let mut conn = Connection::open(&cmd, 4096).unwrap();
        assert!(matches!(
            conn.receive(Duration::from_secs(10)),
            Err(Error::LineTooLong { limit: 4096 })
        ));
        assert_eq!(
            conn.receive(Duration::from_secs(10)).unwrap(),
            Received::Closed
        );
    }
}

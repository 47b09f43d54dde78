//! The two forwarding threads: each reads lines from one side, feeds them to the shared
//! [`Session`], and writes what it says to the other side (and answers, notes, log lines).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::fd::AsFd;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mcppin_client::{ClientProfile, LineReader};
use mcppin_core::engine::{Event, Line, Note, Session, Stop};

use crate::feed::{Client, ServerIn, feed};
use crate::log::Log;

/// The write buffer of each direction.
pub(crate) const BUFFER: usize = 64 * 1024;

/// How the server side ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The server closed its output.
    Eof,
    /// Drift was refused.
    Drift,
    /// The server runs another artifact than approved (or one the guard could not read),
    /// found once it was up: nothing it wrote was forwarded.
    Artifact,
    /// The server misbehaved or died; nothing of the offending message was forwarded.
    Fatal(String),
    /// The client stopped reading.
    ClientGone,
}

/// What the main thread hears.
#[derive(Debug)]
pub(crate) enum End {
    ClientEof,
    ClientFailed(String),
    Server(Outcome),
}

/// The client's side of the guard's stdout. Buffered: a thread flushes when it is about to wait
/// for input (see [`mcppin_client::LineReader::has_line`]), so a burst of messages costs one write, and no
/// message waits in the buffer while the guard waits.
pub(crate) type Out = Arc<Mutex<BufWriter<File>>>;

/// The state both forwarding threads share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) session: Session,
    /// Set once the client closed its input: the server's end of output is then clean.
    pub(crate) client_done: bool,
    log: Log,
    log_failed: bool,
}

impl Shared {
    pub(crate) fn new(session: Session, log: Log) -> Self {
        Self {
            session,
            client_done: false,
            log,
            log_failed: false,
        }
    }

    /// The time to feed the engine: measured when there is a log, whose completions need it.
    fn now(&self) -> Duration {
        if self.log.enabled() {
            self.log.clock.since_start()
        } else {
            Duration::ZERO
        }
    }

    /// Writes events to the log, each line flushed. A failing write ends nothing: the session
    /// goes on, and the failure is reported once.
    fn write(&mut self, events: &mut Vec<Event>) {
        if events.is_empty() {
            return;
        }
        if let Err(err) = self.log.events(events)
            && !self.log_failed
        {
            self.log_failed = true;
            let _ = writeln!(
                io::stderr(),
                "mcppin-guard: {}",
                crate::log::failed("the log", &err)
            );
        }
        events.clear();
    }
}

pub(crate) fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(crate) fn lock_out(out: &Out) -> MutexGuard<'_, BufWriter<File>> {
    out.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Logs the calls that never got an answer.
pub(crate) fn no_answers(shared: &Mutex<Shared>) {
    let mut state = lock(shared);
    let now = state.now();
    let mut events = state.session.finish(now);
    state.write(&mut events);
}

/// What to run when the client declared other capabilities than the capture the lock was
/// approved from: the export that captures the surface this client is served (with the
/// profile that declares exactly these capabilities, or a file holding them), then the lock.
/// The first line, then indented ones.
fn capture_advice(server: &str, declared: &mcppin_core::Value) -> String {
    let server = mcppin_core::shell_word(&mcppin_core::escape(server));
    let client = match ClientProfile::declaring(declared) {
        Some(profile) => format!("--client {profile}"),
        None => "--client-capabilities caps.json".to_owned(),
    };
    let mut advice = "to pin the surface this client is served, capture it as this client and \
                      lock it again:"
        .to_owned();
    if ClientProfile::declaring(declared).is_none() {
        advice.push_str(&format!(
            "\n  caps.json: {}",
            mcppin_core::report::value_text(declared)
        ));
    }
    advice.push_str(&format!(
        "\n  mcppin-export --config CONFIG --server {server} {client} -o manifest.json\
         \n  mcppin lock --approve {server} -o LOCK manifest.json"
    ));
    advice
}

/// What to run to approve the artifact a server runs now, when the guard refused it: the
/// first line, then indented ones.
pub(crate) fn artifact_advice(server: &str) -> String {
    let server = mcppin_core::shell_word(&mcppin_core::escape(server));
    format!(
        "to approve what the server runs now, capture it and lock it again:\
         \n  mcppin-export --config CONFIG --server {server} -o manifest.json\
         \n  mcppin lock --approve {server} -o LOCK manifest.json"
    )
}

/// Reads the artifact of the running server (what its launcher installed), once it is up.
pub(crate) type Probe = Box<dyn FnOnce() -> mcppin_core::artifact::Artifact + Send>;

/// Writes the engine's notes (escaped by the engine), then the guard's advice, to stderr,
/// each after the guard's name: the indented lines of a note (a diff under its heading)
/// follow it as they are.
pub(crate) fn print_notes(notes: &[Note], advice: Option<&str>) {
    if notes.is_empty() && advice.is_none() {
        return;
    }
    let mut stderr = io::stderr().lock();
    for note in notes {
        let _ = writeln!(stderr, "mcppin-guard: {note}");
    }
    if let Some(advice) = advice {
        let _ = writeln!(stderr, "mcppin-guard: {advice}");
    }
}

fn emit(out: &Out, message: &[u8], flush: bool) -> io::Result<()> {
    let mut out = lock_out(out);
    out.write_all(message)?;
    out.write_all(b"\n")?;
    if flush {
        out.flush()?;
    }
    Ok(())
}

/// The client-to-server direction.
///
/// Forwarded lines are gathered (at most [`BUFFER`] bytes, or one larger line) and written
/// when no further client line is buffered, by [`feed`]: a server that stops reading never
/// blocks this thread, which sees the client leave and starts the shutdown order. A last line
/// without a newline is read as a line: judged, then forwarded or answered like any other.
pub(crate) fn client_to_server(
    limit: usize,
    shared: &Mutex<Shared>,
    out: &Out,
    server_in: &ServerIn,
    tx: &Sender<End>,
) {
    let input = io::stdin();
    let mut client = Client::new(input.as_fd());
    let mut reader = LineReader::new(input.lock(), limit);
    let mut line = Vec::new();
    let mut outgoing: Vec<u8> = Vec::with_capacity(BUFFER);
    let stopped = || lock(shared).session.is_stopped();
    // Called once, when the client closes its end while the server is not reading.
    let hangup = || {
        lock(shared).client_done = true;
        let _ = tx.send(End::ClientEof);
    };
    loop {
        let last = match reader.read_line_into(&mut line) {
            Ok(true) => false,
            Ok(false) => break,
            // `line` holds the bytes after the last newline.
            Err(mcppin_client::Error::UnterminatedLine { .. }) => true,
            Err(mcppin_client::Error::LineTooLong { limit }) => {
                let _ = tx.send(End::ClientFailed(format!(
                    "a message from the client exceeds --max-message ({limit} bytes)"
                )));
                return;
            }
            Err(mcppin_client::Error::Io { source, .. }) => {
                let _ = tx.send(End::ClientFailed(format!(
                    "reading from the client: {source}"
                )));
                return;
            }
            Err(err) => {
                let _ = tx.send(End::ClientFailed(format!("reading from the client: {err}")));
                return;
            }
        };
        // Read before the lock is taken: the other direction need not wait for it.
        let read = Line::read(&line);
        let action = {
            let mut state = lock(shared);
            if state.session.is_stopped() {
                return;
            }
            let now = state.now();
            let mut action = state.session.client(&read, now);
            state.write(&mut action.events);
            action
        };
        print_notes(&action.notes, None);
        for answer in &action.to_client {
            if emit(out, answer, true).is_err() {
                break;
            }
        }
        if let Some(message) = action.to_server.bytes(&line) {
            if outgoing.len() + message.len() >= BUFFER {
                feed(server_in, &[&outgoing], &mut client, stopped, hangup);
                outgoing.clear();
            }
            if message.len() >= BUFFER {
                // Written from where it is, not copied.
                feed(server_in, &[message, b"\n"], &mut client, stopped, hangup);
            } else {
                outgoing.extend_from_slice(message);
                outgoing.push(b'\n');
            }
        }
        if last || !reader.has_line() {
            feed(server_in, &[&outgoing], &mut client, stopped, hangup);
            outgoing.clear();
        }
        if last {
            break;
        }
    }
    // The end of the client's input closes the server's stdin, the first step of the order.
    lock(shared).client_done = true;
    lock_in(server_in).take();
    if !client.closed() {
        let _ = tx.send(End::ClientEof);
    }
}

fn lock_in(server_in: &ServerIn) -> MutexGuard<'_, Option<std::process::ChildStdin>> {
    server_in
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The server-to-client direction; returns how it ended. With `probe`, the artifact of the
/// server is read once its first line came (it is up: its launcher has installed what it
/// runs) and judged before that line is: on a refusal, the requests waiting get refusals and
/// nothing the server wrote is forwarded.
pub(crate) fn server_to_client(
    pipe: impl io::Read,
    limit: usize,
    shared: &Mutex<Shared>,
    out: &Out,
    mut probe: Option<Probe>,
    expected: usize,
) -> Outcome {
    let mut reader = LineReader::new(pipe, limit);
    let mut line = reader.line_buffer(expected);
    loop {
        let read = reader.read_line_into(&mut line);
        if matches!(read, Ok(true))
            && let Some(probe) = probe.take()
        {
            // Read outside the lock: the client's direction goes on meanwhile.
            let observed = probe();
            let (check, advice) = {
                let mut state = lock(shared);
                let mut check = state.session.artifact(&observed);
                state.write(&mut check.events);
                let advice = check
                    .refused
                    .is_some()
                    .then(|| artifact_advice(state.log.server()));
                (check, advice)
            };
            print_notes(&check.notes, advice.as_deref());
            if check.refused.is_some() {
                for answer in &check.to_client {
                    if emit(out, answer, false).is_err() {
                        break;
                    }
                }
                let _ = lock_out(out).flush();
                return Outcome::Artifact;
            }
        }
        match read {
            Ok(true) => {}
            Ok(false) => {
                let _ = lock_out(out).flush();
                return Outcome::Eof;
            }
            Err(mcppin_client::Error::LineTooLong { limit }) => {
                lock(shared).session.stop();
                return Outcome::Fatal(format!(
                    "a message from the server exceeds --max-message ({limit} bytes); \
                     nothing of it was forwarded"
                ));
            }
            Err(mcppin_client::Error::UnterminatedLine { len }) if lock(shared).client_done => {
                // The client closed its input, so the shutdown order may have stopped the
                // server in the middle of a line: owed to nobody, dropped, and the session
                // the client ended ends cleanly (docs/guard.md, "Shutdown").
                lock(shared).session.stop();
                let _ = lock_out(out).flush();
                let _ = writeln!(
                    io::stderr(),
                    "mcppin-guard: the server's output ended inside a message ({len} bytes \
                     without a newline) after the client closed its input; it was dropped"
                );
                return Outcome::Eof;
            }
            Err(err) => {
                lock(shared).session.stop();
                return Outcome::Fatal(format!("{err}; nothing of it was forwarded"));
            }
        }
        // Read before the lock that judges it is taken, strictly first when the line may be
        // an answer the session judges (read once, not outlined and then read again).
        let answers = {
            let state = lock(shared);
            let session = &state.session;
            session
                .awaits_judged_answer()
                .then(|| session.answer_reader())
        };
        let read = match &answers {
            Some(answers) => answers.read(&line),
            None => Line::read(&line),
        };
        let (mut action, advice) = {
            let mut state = lock(shared);
            if state.session.is_stopped() {
                return Outcome::Drift;
            }
            let now = state.now();
            let mut action = state.session.server(&read, now);
            state.write(&mut action.events);
            let advice = action
                .capabilities
                .as_ref()
                .map(|hint| capture_advice(state.log.server(), &hint.declared));
            (action, advice)
        };
        print_notes(&action.notes, advice.as_deref());
        let flush = action.stop.is_some() || !reader.has_line();
        let sent = match action.to_client.bytes(&line) {
            Some(message) => emit(out, message, flush),
            None if flush => lock_out(out).flush(),
            None => Ok(()),
        };
        let stop = action.stop.take();
        // Frees the strict readings of the answer outside the lock: the client's direction
        // need not wait for it either.
        drop(action);
        drop(read);
        if sent.is_err() {
            return Outcome::ClientGone;
        }
        match stop {
            None => {}
            Some(Stop::Drift) => return Outcome::Drift,
            Some(fatal) => return Outcome::Fatal(fatal.to_string()),
        }
    }
}

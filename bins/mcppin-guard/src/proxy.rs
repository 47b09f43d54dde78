//! The proxy: two forwarding threads (client to server, server to client) around one shared
//! admission state, and the main thread that ends the session.
//!
//! Ordinary traffic is routed by the relaxed reader (SPEC 2.1) and forwarded as the bytes it
//! came in. Answers that carry text for the model are read again, strictly, and judged by
//! [`mcppin_core::admission::Gate`] before anything of them is written to the client.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context;
use mcppin_client::{
    DEFAULT_GRACE, Inherit, LineReader, ServerCommand, StderrMode, inherited_environment,
};
use mcppin_core::admission::{
    Decision, Gate, INPUT_REQUIRED_MEMBERS, PageReport, Reason, is_input_request, session_policy,
    shown,
};
use mcppin_core::fold;
use mcppin_core::lockfile::{LockedServer, Pin};
use mcppin_core::outline::{Node, Outline, Picked, Shape};
use mcppin_core::{Strictness, Value, escape, escape_non_ascii, parse, parse_with};
use serde_json::json;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::feed::{Client, ServerIn, feed};
use crate::log::Log;
use crate::stderr::Relay;
use crate::{Exit, Fail, Mode};

/// The JSON-RPC error code of a refusal (SPEC 6).
const REFUSED: i64 = -32001;

/// JSON-RPC 2.0 section 5.1: invalid JSON.
const PARSE_ERROR: i64 = -32700;

/// JSON-RPC 2.0 section 5.1: not a valid request object.
const INVALID_REQUEST: i64 = -32600;

/// The write buffer of each direction.
const BUFFER: usize = 64 * 1024;

/// The members a message is routed by.
const ROUTING: [&str; 4] = ["id", "method", "result", "error"];

/// Methods whose answers the session pin covers (the lock does not pin them yet).
const SESSION_PINNED: [&str; 4] = [
    "prompts/get",
    "prompts/list",
    "resources/templates/list",
    "server/discover",
];

/// What the proxy runs and how.
#[derive(Debug)]
pub(crate) struct Config {
    pub(crate) mode: Mode,
    pub(crate) max_message: usize,
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    /// The server's id, the prefix of its stderr lines.
    pub(crate) server: String,
}

/// A client request waiting for its answer. Tracking an ordinary call allocates nothing: the
/// method is a static name and a short id is kept inline.
#[derive(Debug)]
struct Pending {
    method: Cow<'static, str>,
    /// The params, kept for the methods whose answers are judged.
    params: Option<Value>,
    /// For `tools/call` when there is a log: the tool.
    tool: Option<String>,
    /// The id as the client wrote it.
    id: IdBytes,
    /// The number a JavaScript client's `Number(id)` makes of the id (see [`number_alias`]).
    alias: Option<u64>,
    started: Instant,
}

/// The bytes of a request id (as written, or its canonical form as the key it is matched by),
/// inline when short.
#[derive(Clone, Debug, Eq, Hash, PartialEq)]
enum IdBytes {
    /// Up to [`INLINE_ID`] bytes; the rest of the array is zero.
    Inline(u8, [u8; INLINE_ID]),
    Heap(Box<[u8]>),
}

/// The longest id kept inline.
const INLINE_ID: usize = 30;

impl IdBytes {
    fn new(bytes: &[u8]) -> Self {
        match u8::try_from(bytes.len()) {
            Ok(len) if bytes.len() <= INLINE_ID => {
                let mut inline = [0; INLINE_ID];
                inline[..bytes.len()].copy_from_slice(bytes);
                Self::Inline(len, inline)
            }
            _ => Self::Heap(bytes.into()),
        }
    }
}

impl std::ops::Deref for IdBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Self::Inline(len, bytes) => &bytes[..usize::from(*len)],
            Self::Heap(bytes) => bytes,
        }
    }
}

/// One line read under the relaxed rule, outside the lock both directions share.
enum Reading<'a> {
    /// Not JSON.
    Invalid(mcppin_core::Error),
    /// A carriage return inside the line: JSON whitespace to this reader, the end of a line to
    /// a reader with universal newlines (Python's text streams), which would read other
    /// messages out of the same bytes.
    InnerReturn,
    /// One message (an object), or some other value that is not an array.
    Single(Outline<'a>),
    /// A batch: the top array's elements are outlined down to the members of their members
    /// (`params.name`, `result.isError`).
    Batch(Outline<'a>),
}

impl<'a> Reading<'a> {
    fn of(line: &'a [u8]) -> Self {
        let body = line.strip_suffix(b"\r").unwrap_or(line);
        if memchr::memchr(b'\r', body).is_some() {
            return Self::InnerReturn;
        }
        let batch = line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
        match Outline::parse(line, if batch { 3 } else { 2 }) {
            Ok(outline) if outline.root().shape() == Shape::Array => Self::Batch(outline),
            Ok(outline) => Self::Single(outline),
            Err(err) => Self::Invalid(err),
        }
    }
}

/// The methods a client request can name without an allocation.
const KNOWN_METHODS: [&str; 8] = [
    "tools/call",
    "tools/list",
    "initialize",
    "prompts/get",
    "prompts/list",
    "resources/templates/list",
    "server/discover",
    "ping",
];

fn method_name(method: Cow<'_, str>) -> Cow<'static, str> {
    match KNOWN_METHODS.iter().find(|known| **known == method) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(method.into_owned()),
    }
}

/// The state both forwarding threads share.
#[derive(Debug)]
struct Shared {
    gate: Gate,
    mode: Mode,
    pending: HashMap<IdBytes, Pending>,
    /// The [`number_alias`] of every outstanding request that has one.
    aliases: HashSet<u64>,
    /// Set once the session is refused or failed: nothing more is forwarded either way.
    stopped: bool,
    /// Set once the client closed its input: the server's end of output is then clean.
    client_done: bool,
    /// The latest served digest of each tool, for call decisions in the log.
    observed: HashMap<String, Pin>,
    log: Log,
    log_failed: bool,
    /// Strict readings of answers being forwarded, freed after the write (see `surface`).
    spent: Vec<Value>,
    /// Log events of the server line being judged, held until its fate is known (whether the
    /// tools it lists reached the client).
    held: Option<Vec<(&'static str, serde_json::Value)>>,
}

/// How the server side ended.
#[derive(Debug)]
enum Outcome {
    /// The server closed its output.
    Eof,
    /// Drift was refused.
    Drift,
    /// The server misbehaved or died; nothing of the offending message was forwarded.
    Fatal(String),
    /// The client stopped reading.
    ClientGone,
}

/// What the main thread hears.
#[derive(Debug)]
enum End {
    ClientEof,
    ClientFailed(String),
    Server(Outcome),
}

/// The client's side of the guard's stdout. Buffered: a thread flushes when it is about to wait
/// for input (see [`LineReader::has_line`]), so a burst of messages costs one write, and no
/// message waits in the buffer while the guard waits.
type Out = Arc<Mutex<BufWriter<File>>>;

/// How often the main thread looks whether the server exited while its output stays open.
const WATCH: Duration = Duration::from_millis(100);

/// Set when a signal told the guard to stop: the signal thread then owns the exit.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// Whether a signal told the guard to stop. The session may end on its own meanwhile (the
/// stopped server closes its output); the exit is then left to the signal thread.
pub(crate) fn signalled() -> bool {
    SIGNALLED.load(Ordering::SeqCst)
}

/// Waits for the signal thread to stop the server and exit the process.
pub(crate) fn wait_for_signal_exit() -> ! {
    loop {
        thread::park();
    }
}

/// Starts a thread that, when the guard is told to stop (SIGINT, SIGTERM, SIGHUP: how clients
/// stop their servers), stops the server's process group (SIGTERM, the grace period, SIGKILL)
/// and exits with 128 + the signal number. The server runs in its own process group, and a
/// process killed by a signal runs no destructors: without this the server would outlive the
/// guard.
fn stop_server_on_signal(mut signals: Signals, group: u32) {
    thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            SIGNALLED.store(true, Ordering::SeqCst);
            let _ = mcppin_client::stop_group(group, DEFAULT_GRACE);
            let _ = io::stderr()
                .write_all(b"mcppin-guard: stopped by a signal; the server was stopped\n");
            std::process::exit(128 + signal);
        }
    });
}

/// Runs the session to its end and says how it ended.
pub(crate) fn run(config: &Config, approved: LockedServer, log: Log) -> anyhow::Result<Exit> {
    let mut command = ServerCommand::new(&config.program)
        .args(&config.args)
        .envs(inherited_environment(std::env::vars_os(), Inherit::All))
        .stderr(StderrMode::Pipe)
        .grace(DEFAULT_GRACE);
    // The server dies with the guard, even by SIGKILL: started from this (the main) thread
    // through the guard's own executable, which sets the parent-death signal before it
    // becomes the server. Without a path to itself the guard starts the server directly.
    if let Ok(exe) = std::env::current_exe() {
        command = command.die_with_parent(exe);
    }
    // Registered before the server starts, so a signal arriving in between is not lost.
    let signals =
        Signals::new([SIGINT, SIGTERM, SIGHUP]).context("cannot install the signal handler")?;
    let mut server = command
        .spawn()
        .map_err(|e| Fail::new(Exit::Server, e.to_string()))?;
    stop_server_on_signal(signals, server.id());
    let relay = server
        .take_stderr()
        .map(|pipe| Relay::start(pipe, &config.server));
    let stdin = server.take_stdin();
    if let Some(pipe) = &stdin {
        crate::feed::nonblocking(pipe).context("cannot set up the server's stdin")?;
    }
    let server_in: Arc<ServerIn> = Arc::new(Mutex::new(stdin));
    let server_out = server.take_stdout().context("the server has no stdout")?;
    let shared = Arc::new(Mutex::new(Shared {
        gate: Gate::new(approved),
        mode: config.mode,
        pending: HashMap::new(),
        aliases: HashSet::new(),
        stopped: false,
        client_done: false,
        observed: HashMap::new(),
        log,
        log_failed: false,
        spent: Vec::new(),
        held: None,
    }));
    let stdout = io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .context("cannot use stdout")?;
    let out: Out = Arc::new(Mutex::new(BufWriter::with_capacity(
        BUFFER,
        File::from(stdout),
    )));
    let (tx, rx) = mpsc::channel();

    {
        let (shared, out, server_in, tx) = (
            Arc::clone(&shared),
            Arc::clone(&out),
            Arc::clone(&server_in),
            tx.clone(),
        );
        let limit = config.max_message;
        thread::spawn(move || client_to_server(limit, &shared, &out, &server_in, &tx));
    }
    {
        let (shared, out) = (Arc::clone(&shared), Arc::clone(&out));
        let limit = config.max_message;
        thread::spawn(move || {
            let outcome = server_to_client(server_out, limit, &shared, &out);
            let _ = tx.send(End::Server(outcome));
        });
    }

    let mut stderr_lines = Vec::new();
    let mut client_eof = false;
    // Set once the server has exited and its group was stopped: how long its output may still
    // stay open (a process that left the group can hold it forever).
    let mut output_deadline: Option<Instant> = None;
    let exit = loop {
        let wait = output_deadline.map_or(WATCH, |d| d.saturating_duration_since(Instant::now()));
        let end = match rx.recv_timeout(wait) {
            Ok(end) => end,
            Err(RecvTimeoutError::Disconnected) => break Exit::Server,
            Err(RecvTimeoutError::Timeout) if output_deadline.is_some() => {
                // Everything read from the server was forwarded; what is still owed never comes.
                if client_eof || lock(&shared).client_done {
                    break Exit::Clean;
                }
                stderr_lines.push(
                    "mcppin-guard: the server exited while the session was open (a process it \
                     started still held its output)"
                        .to_owned(),
                );
                break Exit::Server;
            }
            Err(RecvTimeoutError::Timeout) => {
                if server.has_exited().unwrap_or(false) {
                    server.shutdown().context("stopping the server")?;
                    output_deadline = Some(Instant::now() + DEFAULT_GRACE);
                }
                continue;
            }
        };
        match end {
            End::ClientEof => {
                // The shutdown order: the client's end of input closes the server's stdin (done
                // by the client thread), then 2 s, SIGTERM, SIGKILL; answers keep flowing
                // meanwhile, until the server's output ends or a bounded wait after it exited.
                client_eof = true;
                server.shutdown().context("stopping the server")?;
                output_deadline = Some(Instant::now() + DEFAULT_GRACE);
            }
            End::ClientFailed(message) => {
                stop(&shared, &server_in);
                stderr_lines.push(format!("mcppin-guard: {}", escape_non_ascii(&message)));
                break Exit::Server;
            }
            End::Server(Outcome::Eof) if client_eof || lock(&shared).client_done => {
                break Exit::Clean;
            }
            End::Server(Outcome::Eof) => {
                stderr_lines.push(
                    "mcppin-guard: the server closed its output while the session was open"
                        .to_owned(),
                );
                break Exit::Server;
            }
            End::Server(Outcome::ClientGone) => break Exit::Clean,
            End::Server(Outcome::Drift) => break Exit::Drift,
            End::Server(Outcome::Fatal(message)) => {
                stderr_lines.push(format!("mcppin-guard: {}", escape_non_ascii(&message)));
                break Exit::Server;
            }
        }
    };
    stop(&shared, &server_in);
    let _ = lock_out(&out).flush();
    let _ = server.shutdown();
    no_answers(&shared);
    if let Some(relay) = relay {
        relay.finish(DEFAULT_GRACE);
    }
    let mut stderr = io::stderr().lock();
    for line in &stderr_lines {
        let _ = writeln!(stderr, "{line}");
    }
    if exit == Exit::Drift {
        let _ = writeln!(
            stderr,
            "mcppin-guard: the server was stopped; nothing after the refused answer was forwarded"
        );
    }
    Ok(exit)
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Stops forwarding and closes the server's stdin (the first step of the shutdown order),
/// dropping whatever was not yet written to it. A write that holds the pipe at this moment
/// closes it itself within a moment (see [`feed`]).
fn stop(shared: &Mutex<Shared>, server_in: &ServerIn) {
    lock(shared).stopped = true;
    if let Ok(mut stdin) = server_in.try_lock() {
        stdin.take();
    }
}

fn lock_out(out: &Out) -> MutexGuard<'_, BufWriter<File>> {
    out.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Logs the calls that never got an answer.
fn no_answers(shared: &Mutex<Shared>) {
    let mut state = lock(shared);
    let calls: Vec<Pending> = state
        .pending
        .drain()
        .map(|(_, p)| p)
        .filter(|p| p.method == "tools/call")
        .collect();
    for call in calls {
        state.completion(&call, "no_answer");
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
fn client_to_server(
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
    let stopped = || lock(shared).stopped;
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
        let reading = Reading::of(&line);
        let mut notes = Vec::new();
        let (forward, answers) = {
            let mut state = lock(shared);
            if state.stopped {
                return;
            }
            state.route_client(&line, &reading, &mut notes)
        };
        for note in notes {
            let _ = writeln!(io::stderr(), "mcppin-guard: {note}");
        }
        for answer in answers {
            if emit(out, &answer, true).is_err() {
                break;
            }
        }
        let message = match &forward {
            Forward::Line => Some(&line[..]),
            Forward::Bytes(bytes) => Some(&bytes[..]),
            Forward::Nothing => None,
        };
        if let Some(message) = message {
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

/// The server-to-client direction; returns how it ended.
fn server_to_client(
    pipe: impl io::Read,
    limit: usize,
    shared: &Mutex<Shared>,
    out: &Out,
) -> Outcome {
    let mut reader = LineReader::new(pipe, limit);
    let mut line = Vec::new();
    loop {
        match reader.read_line_into(&mut line) {
            Ok(true) => {}
            Ok(false) => {
                let _ = lock_out(out).flush();
                return Outcome::Eof;
            }
            Err(mcppin_client::Error::LineTooLong { limit }) => {
                lock(shared).stopped = true;
                return Outcome::Fatal(format!(
                    "a message from the server exceeds --max-message ({limit} bytes); \
                     nothing of it was forwarded"
                ));
            }
            Err(err) => {
                lock(shared).stopped = true;
                return Outcome::Fatal(format!("{err}; nothing of it was forwarded"));
            }
        }
        let reading = Reading::of(&line);
        let action = {
            let mut state = lock(shared);
            if state.stopped {
                return Outcome::Drift;
            }
            let action = state.route_server(&reading);
            if action.end.is_some() {
                state.stopped = true;
            }
            action
        };
        if !action.notes.is_empty() {
            let mut stderr = io::stderr().lock();
            for note in &action.notes {
                // Continuation lines (a diff under its heading) are indented, without the
                // prefix.
                let prefix = if note.starts_with(' ') {
                    ""
                } else {
                    "mcppin-guard: "
                };
                let _ = writeln!(stderr, "{prefix}{note}");
            }
        }
        let flush = action.end.is_some() || !reader.has_line();
        let sent = match &action.send {
            Forward::Line => emit(out, &line, flush),
            Forward::Bytes(message) => emit(out, message, flush),
            Forward::Nothing if flush => lock_out(out).flush(),
            Forward::Nothing => Ok(()),
        };
        // Outside the lock: the client's direction need not wait for it either.
        let spent = std::mem::take(&mut lock(shared).spent);
        drop(spent);
        if sent.is_err() {
            return Outcome::ClientGone;
        }
        if let Some(end) = action.end {
            return end;
        }
    }
}

/// How a new request's id stands to the outstanding ones, as a JavaScript client reads ids.
#[derive(Debug)]
enum Alias {
    /// It needs no tracking: a plain integer, or an id that reads as `NaN`.
    Untracked,
    /// It reads as the number of an outstanding request.
    Taken,
    /// Tracked by this alias while it is outstanding.
    Tracked(u64),
}

/// What to write on for one line read.
#[derive(Debug, Default)]
enum Forward {
    /// Nothing.
    #[default]
    Nothing,
    /// The line as it came.
    Line,
    /// These bytes in its place.
    Bytes(Vec<u8>),
}

/// What to do with one line from the server.
#[derive(Debug, Default)]
struct Action {
    /// What to write to the client.
    send: Forward,
    /// Lines for stderr (already escaped).
    notes: Vec<String>,
    /// The session ends after `send`.
    end: Option<Outcome>,
}

/// What becomes of one message (or batch element) from the client.
#[derive(Debug)]
enum Request {
    /// On to the server.
    Forward,
    /// Answered here, never forwarded.
    Answer(Vec<u8>),
    /// Neither forwarded nor answered (a notification the guard refuses: there is no id to
    /// answer), with a note for stderr.
    Drop(String),
}

/// What became of one message (or batch element) from the server.
#[derive(Debug)]
enum Element {
    Forward,
    Replace(Vec<u8>),
    Refuse(Vec<u8>),
    Fatal(String),
}

impl Shared {
    /// Routes one client line: what goes to the server, which answers go straight back.
    /// Notes for stderr go to `notes`.
    fn route_client(
        &mut self,
        line: &[u8],
        reading: &Reading<'_>,
        notes: &mut Vec<String>,
    ) -> (Forward, Vec<Vec<u8>>) {
        let invalid = |code: i64, note: String, message: &str| {
            let answer = error_answer(b"null", code, message);
            (Forward::Nothing, vec![answer], note)
        };
        let refused = match reading {
            // What this reader cannot read, a lenient server might: it never reaches the server.
            // The client gets the answer a server owes such a line (JSON-RPC 2.0 section 5.1).
            Reading::Invalid(err) => Some(invalid(
                PARSE_ERROR,
                format!("refused a line from the client that is not JSON ({err})"),
                "mcppin-guard refused a line that is not JSON",
            )),
            Reading::InnerReturn => Some(invalid(
                REFUSED,
                "refused a line from the client with a carriage return inside it".to_owned(),
                "mcppin-guard refused a line with a carriage return inside it",
            )),
            Reading::Single(outline) if outline.root().shape() != Shape::Object => Some(invalid(
                INVALID_REQUEST,
                "refused a line from the client that is not a JSON object".to_owned(),
                "mcppin-guard refused a line that is not a JSON object",
            )),
            Reading::Batch(outline)
                if outline.root().children().next().is_none()
                    || outline
                        .root()
                        .children()
                        .any(|e| e.shape() != Shape::Object) =>
            {
                Some(invalid(
                    INVALID_REQUEST,
                    "refused a batch from the client that is empty or holds a non-object"
                        .to_owned(),
                    "mcppin-guard refused a batch that is empty or holds something other than \
                     objects",
                ))
            }
            _ => None,
        };
        if let Some((forward, answers, note)) = refused {
            notes.push(note);
            return (forward, answers);
        }
        match reading {
            Reading::Invalid(_) | Reading::InnerReturn => (Forward::Nothing, Vec::new()),
            Reading::Single(outline) => match self.client_message(outline.root()) {
                Request::Forward => (Forward::Line, Vec::new()),
                Request::Answer(answer) => (Forward::Nothing, vec![answer]),
                Request::Drop(note) => {
                    notes.push(note);
                    (Forward::Nothing, Vec::new())
                }
            },
            Reading::Batch(outline) => {
                let mut kept = Vec::new();
                let mut answers = Vec::new();
                let mut elements = 0;
                for element in outline.root().children() {
                    elements += 1;
                    match self.client_message(element) {
                        Request::Forward => kept.push(element.span()),
                        Request::Answer(answer) => answers.push(answer),
                        Request::Drop(note) => notes.push(note),
                    }
                }
                let forward = if kept.len() == elements {
                    Forward::Line
                } else if kept.is_empty() {
                    Forward::Nothing
                } else {
                    let parts: Vec<Cow<'_, [u8]>> = kept
                        .iter()
                        .map(|span| Cow::Borrowed(line.get(span.range()).unwrap_or_default()))
                        .collect();
                    Forward::Bytes(join_parts(&parts))
                };
                (forward, answers)
            }
        }
    }

    /// Records one client request; answers it here instead of forwarding it when it calls a
    /// quarantined or unknown tool or is ambiguous.
    fn client_message(&mut self, message: Node<'_, '_>) -> Request {
        let [method, id, params] = message.pick(["method", "id", "params"]);
        let method_count = method.count;
        let [name] = params
            .first
            .map_or([Picked::default()], |p| p.pick(["name"]));
        // One reading for every reader (docs/threat-model.md, "Parser differentials"): a
        // repeated member, or a member name a case-insensitive reader (Go's encoding/json)
        // takes for another, would let the server read another request than the one admitted
        // here (a JavaScript server takes the last of repeated members, the guard would have
        // judged the first; a Go server reads `Name` or `\u004eame` as `name`). Checked before
        // anything is read from the members, and before a message without `method` is taken
        // for a response: `Method` is a method to a Go server.
        let envelope = message.name_conflict(&fold::ENVELOPE);
        // `None` without a method, `Some(None)` when it is not a string.
        let method = method.first.map(Node::as_str);
        let in_params = match (&envelope, &method) {
            (None, Some(Some(method))) => params
                .first
                .and_then(|p| p.name_conflict(fold::params_members(method))),
            _ => None,
        };
        let repeated = method_count > 1 || id.count > 1 || params.count > 1 || name.count > 1;
        if repeated || envelope.is_some() || in_params.is_some() {
            let why = match envelope.as_ref().or(in_params.as_ref()) {
                Some(conflict) => conflict.to_string(),
                None => "a member name repeats".to_owned(),
            };
            // When the id itself is ambiguous, the answer cannot name it (JSON-RPC 2.0
            // section 5: null when the id could not be read).
            let id_unclear = id.count > 1 || envelope.as_ref().is_some_and(|c| c.touches("id"));
            let refused = format!("mcppin-guard refused an ambiguous request: {why}");
            return match id.first {
                _ if id_unclear => Request::Answer(refusal(b"null", &refused)),
                Some(id) => Request::Answer(refusal(id.bytes(), &refused)),
                None => Request::Drop(format!(
                    "dropped an ambiguous notification from the client: {why}"
                )),
            };
        }
        let Some(method) = method else {
            // A response to a server request (or not a message at all): the server's to judge.
            return Request::Forward;
        };
        let Some(method) = method else {
            // JSON-RPC 2.0 section 4: `method` is a string. Forwarded, the request would reach
            // the server untracked, and its answer could not be matched.
            return Request::Answer(error_answer(
                id.first.map_or(&b"null"[..], Node::bytes),
                INVALID_REQUEST,
                "mcppin-guard refused a request whose method is not a string",
            ));
        };
        let tool = || name.first.and_then(Node::as_str).unwrap_or_default();
        let Some(id) = id.first else {
            // A notification. A `tools/call` without an id is still a call to a lenient
            // server: it passes the same gate, and is dropped when refused (no id to answer).
            if method == "tools/call" {
                let tool = tool();
                let decision = self.gate.call(&tool);
                self.call_admission(b"null", &tool, &decision);
                if let Decision::Deny(reason) = decision {
                    return Request::Drop(format!(
                        "dropped a tools/call notification from the client: {reason}: {}",
                        escape(&tool)
                    ));
                }
            }
            return Request::Forward;
        };
        let raw_id = id.bytes();
        let key_is_plain_integer = id.shape() == Shape::Number && is_canonical_integer(raw_id);
        let key = id_key(id);
        if self.pending.contains_key(&key) {
            // Its answer could not be told from the other one's: the first request's answer
            // would be routed (and judged, or not) as this one's.
            return Request::Answer(refusal(
                raw_id,
                "mcppin-guard refused a request whose id is already outstanding",
            ));
        }
        let alias = match self.alias_of(id, key_is_plain_integer) {
            Alias::Untracked => None,
            Alias::Tracked(alias) => Some(alias),
            Alias::Taken => {
                // The TypeScript SDK finds the request an answer belongs to by `Number(id)`: with
                // `1` and `"1"` (or two integers above 2^53 that round to one double) outstanding,
                // the answer the guard matched to one request would reach the other's handler.
                return Request::Answer(refusal(
                    raw_id,
                    "mcppin-guard refused a request whose id reads as the same number as an \
                     outstanding one's",
                ));
            }
        };
        let mut pending = Pending {
            method: method_name(method),
            params: None,
            tool: None,
            id: IdBytes::new(raw_id),
            alias,
            started: Instant::now(),
        };
        if pending.method == "tools/call" {
            let tool = tool();
            let decision = self.gate.call(&tool);
            self.call_admission(raw_id, &tool, &decision);
            if let Decision::Deny(reason) = decision {
                return Request::Answer(refusal(
                    raw_id,
                    &format!("mcppin-guard refused tools/call: {}", reason.policy()),
                ));
            }
            if self.log.enabled() {
                pending.tool = Some(tool.into_owned());
            }
        } else if pending.method == "tools/list" || SESSION_PINNED.contains(&&*pending.method) {
            // Kept whole: the answer is judged against these params.
            pending.params = params
                .first
                .and_then(|p| parse_with(p.bytes(), Strictness::Relaxed).ok());
        }
        if let Some(alias) = alias {
            self.aliases.insert(alias);
        }
        self.pending.insert(key, pending);
        Request::Forward
    }

    /// How a new request's id stands to the [`number_alias`]es of the outstanding ones.
    ///
    /// A plain integer id (the ids clients write) is told apart from every other plain integer
    /// by its key already, and is kept out of the set: the common case costs no hashing unless
    /// ids of other kinds are outstanding. Any other id is checked against the set and against
    /// the key of the plain integer it reads as.
    fn alias_of(&self, id: Node<'_, '_>, plain_integer: bool) -> Alias {
        if plain_integer {
            if self.aliases.is_empty() {
                return Alias::Untracked;
            }
            return match number_alias(id) {
                Some(alias) if self.aliases.contains(&alias) => Alias::Taken,
                _ => Alias::Untracked,
            };
        }
        let Some(alias) = number_alias(id) else {
            return Alias::Untracked;
        };
        let number = f64::from_bits(alias);
        let integer = (number.fract() == 0.0 && number.abs() < 1e15)
            .then(|| IdBytes::new(format!("{number:.0}").as_bytes()));
        let taken = self.aliases.contains(&alias)
            || integer.is_some_and(|key| self.pending.contains_key(&key));
        if taken {
            Alias::Taken
        } else {
            Alias::Tracked(alias)
        }
    }

    /// Logs the admission decision on a `tools/call` (`id` as the client wrote it).
    fn call_admission(&mut self, id: &[u8], tool: &str, decision: &Decision) {
        if !self.log.enabled() {
            return;
        }
        let approved = self
            .gate
            .server()
            .tools
            .get(tool)
            .map(|item| item.pin().clone());
        let observed = self.observed.get(tool).cloned();
        self.admission(
            id,
            "tools/call",
            tool,
            approved.as_ref(),
            observed.as_ref(),
            decision,
        );
    }

    /// Judges one server line and logs, for each tool it lists, whether the client was shown
    /// it: not when the line is refused or fails closed, whatever the tool's own decision.
    fn route_server(&mut self, reading: &Reading<'_>) -> Action {
        if !self.log.enabled() {
            return self.judge_server_line(reading);
        }
        self.held = Some(Vec::new());
        let action = self.judge_server_line(reading);
        let forwarded = action.end.is_none();
        for (event, mut fields) in self.held.take().unwrap_or_default() {
            if event == "tool_admission" && fields["request_method"] == "tools/list" {
                fields["shown"] = json!(forwarded && fields["decision"] == "allow");
            }
            self.write_log(event, fields);
        }
        action
    }

    /// Judges one server line. Routed by the relaxed rule (SPEC 2.1) without a value tree;
    /// only the answers that carry text for the model are read again, strictly, and judged.
    fn judge_server_line(&mut self, reading: &Reading<'_>) -> Action {
        let mut action = Action::default();
        let fatal = |message: String| Action {
            end: Some(Outcome::Fatal(format!(
                "{message}; nothing of it was forwarded"
            ))),
            ..Action::default()
        };
        match reading {
            Reading::Invalid(err) => {
                fatal(format!("the server sent a line that is not JSON ({err})"))
            }
            Reading::InnerReturn => fatal(
                "the server sent a line with a carriage return inside it (a client that ends \
                 lines there would read other messages)"
                    .to_owned(),
            ),
            Reading::Single(outline) if outline.root().shape() == Shape::Object => {
                let message = outline.root();
                match self.server_message(message.bytes(), message, &mut action.notes) {
                    Element::Forward => action.send = Forward::Line,
                    Element::Replace(new) => action.send = Forward::Bytes(new),
                    Element::Refuse(reply) => {
                        action.send = Forward::Bytes(reply);
                        action.end = Some(Outcome::Drift);
                    }
                    Element::Fatal(message) => return fatal(message),
                }
                action
            }
            Reading::Batch(outline) if outline.root().children().next().is_some() => {
                let mut parts: Vec<Cow<'_, [u8]>> = Vec::new();
                let mut changed = false;
                for element in outline.root().children() {
                    match self.server_message(element.bytes(), element, &mut action.notes) {
                        Element::Forward => parts.push(Cow::Borrowed(element.bytes())),
                        Element::Replace(new) => {
                            changed = true;
                            parts.push(Cow::Owned(new));
                        }
                        Element::Refuse(reply) => {
                            action.send = Forward::Bytes(reply);
                            action.end = Some(Outcome::Drift);
                            return action;
                        }
                        Element::Fatal(message) => return fatal(message),
                    }
                }
                action.send = if changed {
                    Forward::Bytes(join_parts(&parts))
                } else {
                    Forward::Line
                };
                action
            }
            _ => fatal("the server sent a line that is not a JSON object".to_owned()),
        }
    }

    /// Judges one server message (`bytes` are its own bytes, `message` its outline).
    fn server_message(
        &mut self,
        bytes: &[u8],
        message: Node<'_, '_>,
        notes: &mut Vec<String>,
    ) -> Element {
        if message.shape() != Shape::Object {
            return Element::Fatal("the server sent a batch element that is not an object".into());
        }
        let picked = message.pick(ROUTING);
        // The relaxed reading keeps repeated member names. A repeated routing member would let
        // the guard and the client read two different messages (the guard matching id 6, a
        // tools/call, while the client takes id 5, a tools/list answer): refused.
        if let Some((name, _)) = ROUTING.iter().zip(&picked).find(|(_, p)| p.count > 1) {
            return Element::Fatal(format!(
                "the server sent a message that repeats the member {name}"
            ));
        }
        // One reading for every reader (docs/threat-model.md, "Parser differentials"): a Go
        // client (encoding/json) takes `Result` or `reſult` for `result`, the last one winning.
        if let Some(conflict) = message.name_conflict(&fold::ENVELOPE) {
            return Element::Fatal(format!("the server sent an ambiguous message: {conflict}"));
        }
        let [id, method, result, error] = picked.map(|p| p.first);
        if let Some(error) = error {
            if error.shape() != Shape::Object {
                return Element::Fatal(
                    "the server sent an error answer whose error is not an object".into(),
                );
            }
            if let Some(conflict) = error.name_conflict(&fold::ERROR) {
                return Element::Fatal(format!(
                    "the server sent an ambiguous error answer: {conflict}"
                ));
            }
        }
        // JSON-RPC 2.0: a request carries `method` and never `result` or `error`; a response
        // carries exactly one of `result` and `error`. A message mixing them could be routed
        // one way here and read another way by the client (an unjudged `result`): refused.
        let (method, result, error) = (method.is_some(), result, error.is_some());
        if (method && (result.is_some() || error)) || (result.is_some() && error) {
            return Element::Fatal(
                "the server sent a message mixing method, result and error members".into(),
            );
        }
        if method {
            // A server request (sampling, elicitation, roots, ping) or a notification
            // (notifications/tools/list_changed among them): passes; the re-read it triggers is
            // what gets checked.
            return Element::Forward;
        }
        if error && id.is_some_and(|id| id.shape() == Shape::Null) {
            // JSON-RPC 2.0 section 5: the answer to a request whose id could not be read. It
            // answers nothing outstanding and carries no result; exempt from matching only
            // when it holds nothing else, or a client could read something else beside it.
            if message
                .children()
                .all(|m| ["jsonrpc", "id", "error"].iter().any(|n| m.is_named(n)))
            {
                return Element::Forward;
            }
            return Element::Fatal(
                "the server sent an error answer with id null that carries members other than \
                 jsonrpc, id and error"
                    .into(),
            );
        }
        let Some(id) = id else {
            return Element::Fatal(
                "the server sent a message that is neither request, notification nor response"
                    .into(),
            );
        };
        let id_bytes = id_key(id);
        let pending = self.pending.remove(&id_bytes);
        if let Some(alias) = pending.as_ref().and_then(|p| p.alias) {
            self.aliases.remove(&alias);
        }
        let Some(pending) = pending else {
            return Element::Fatal(format!(
                "the server answered id {} which is not outstanding (never asked or already \
                 answered)",
                escape(&String::from_utf8_lossy(&id_bytes))
            ));
        };
        if error {
            if pending.method == "tools/call" {
                self.completion(&pending, "protocol_error");
            }
            return Element::Forward;
        }
        let Some(result) = result else {
            return Element::Fatal(format!(
                "the server's answer to {} has neither result nor error",
                escape(&pending.method)
            ));
        };
        if let Some(members) = fold::result_members(&pending.method)
            && let Some(conflict) = result.name_conflict(members)
        {
            return Element::Fatal(format!(
                "the server's answer to {} is ambiguous: {conflict}",
                escape(&pending.method)
            ));
        }
        match &*pending.method {
            "tools/call" => {
                if self.log.enabled() {
                    let is_error = result.get("isError").map(Node::shape) == Some(Shape::True);
                    self.completion(&pending, if is_error { "is_error" } else { "result" });
                }
                Element::Forward
            }
            "tools/list" | "initialize" => self.surface(bytes, &pending, notes),
            method if SESSION_PINNED.contains(&method) => self.surface(bytes, &pending, notes),
            _ => Element::Forward,
        }
    }

    /// Reads a surface answer strictly and judges it. The reading is kept in `spent`, to be
    /// freed once the answer is on its way: freeing the tree of a thousand tools takes about
    /// as long as a sixth of judging them, and the client need not wait for it.
    fn surface(&mut self, bytes: &[u8], pending: &Pending, notes: &mut Vec<String>) -> Element {
        match parse(bytes) {
            Ok(strict) => {
                let element = self.judge(bytes, &strict, pending, notes);
                self.spent.push(strict);
                element
            }
            Err(err) => Element::Fatal(format!(
                "the server's answer to {} breaks strict reading: {err}",
                escape(&pending.method)
            )),
        }
    }

    /// Judges a surface answer from its strict reading.
    fn judge(
        &mut self,
        bytes: &[u8],
        strict: &Value,
        pending: &Pending,
        notes: &mut Vec<String>,
    ) -> Element {
        let Some(result) = strict.get("result") else {
            return Element::Fatal("a surface answer without result".into());
        };
        if is_input_request(result) {
            // 2026-07-28: the server asks the client for input; nothing to compare yet.
            return Element::Forward;
        }
        if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
            // It says input_required but carries more: that would reach a client unjudged.
            return Element::Fatal(format!(
                "the server's input_required answer to {} carries members other than {}",
                escape(&pending.method),
                INPUT_REQUIRED_MEMBERS.join(", ")
            ));
        }
        let method = &*pending.method;
        if (method == "initialize" || method == "server/discover")
            && let Some(renamed) = self.gate.identity(result)
        {
            let show = |name: &Option<String>| {
                name.as_deref()
                    .map_or_else(|| "(none)".to_owned(), |n| escape(n).into_owned())
            };
            notes.push(format!(
                "server-renamed: approved as {}, calls itself {} (reported, not refused)",
                show(&renamed.approved),
                show(&renamed.observed)
            ));
            self.write_log(
                "server_renamed",
                json!({"request_id": id_json(&pending.id),
                       "approved_name": renamed.approved, "observed_name": renamed.observed}),
            );
        }
        if method == "tools/list" {
            let report = self.gate.tools_page(pending.params.as_ref(), result);
            return self.tools_page(bytes, pending, &report, notes);
        }
        let decision = self
            .gate
            .session_answer(method, pending.params.as_ref(), result);
        let name = pending
            .params
            .as_ref()
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        self.write_log(
            "answer_admission",
            json!({"request_id": id_json(&pending.id), "method": method, "name": name,
                   "decision": decision_name(&decision),
                   "reason": decision.reason().map(Reason::policy)}),
        );
        let Decision::Deny(reason) = decision else {
            return Element::Forward;
        };
        let what = match &name {
            Some(n) => format!("{} {}", escape(method), escape(n)),
            None => escape(method).into_owned(),
        };
        let policy = session_policy(method);
        notes.push(match &reason {
            Reason::Undecidable(literals) => format!(
                "{policy}: the answer to {what} holds number literals no float64 reader can \
                 tell from their neighbours ({}), so it cannot be pinned",
                escape(&literals.join(", "))
            ),
            _ => format!(
                "{policy}: the answer to {what} differs from the first answer to the same \
                 request in this session"
            ),
        });
        // The method and the policy, not the name: the client already knows what it asked
        // for, and the message holds no string from the wire (docs/guard.md).
        let reply = refusal(
            &pending.id,
            &format!("mcppin-guard refused {}: {policy}", escape(method)),
        );
        match self.mode {
            Mode::Refuse => Element::Refuse(reply),
            Mode::Quarantine => Element::Replace(reply),
        }
    }

    fn tools_page(
        &mut self,
        bytes: &[u8],
        pending: &Pending,
        report: &PageReport,
        notes: &mut Vec<String>,
    ) -> Element {
        if self.log.enabled() {
            for tool in &report.tools {
                self.observed
                    .insert(tool.name.clone(), tool.observed.clone());
                self.admission(
                    &pending.id,
                    "tools/list",
                    &tool.name,
                    tool.approved.as_ref(),
                    Some(&tool.observed),
                    &tool.decision,
                );
            }
        }
        for name in &report.removed {
            notes.push(format!(
                "tool-removed: {} is approved but was not served (reported, not refused)",
                escape(name)
            ));
            self.write_log(
                "tool_removed",
                json!({"request_id": id_json(&pending.id), "tool": name,
                       "catalog_generation": report.generation}),
            );
        }
        if !report.drift() {
            return Element::Forward;
        }
        if let Some(reason) = &report.malformed {
            notes.push(format!("refused tools/list: {reason}"));
        }
        for tool in report.tools.iter().filter(|t| !t.decision.is_allow()) {
            let reason = tool
                .decision
                .reason()
                .map_or_else(String::new, ToString::to_string);
            notes.push(format!("{reason}: {}", escape(&tool.name)));
            // Short renderings of the values, each with its whole length (issue 10).
            for change in tool.changes() {
                let classes: Vec<&str> = change.classes.iter().map(|c| c.name()).collect();
                notes.push(format!(
                    "  {} ({})",
                    shown(&change.pointer),
                    classes.join(", ")
                ));
                let absent = || "(absent)".to_owned();
                notes.push(format!(
                    "    approved: {}",
                    change.old.clone().unwrap_or_else(absent)
                ));
                notes.push(format!(
                    "    served:   {}",
                    change.new.clone().unwrap_or_else(absent)
                ));
            }
            if tool.unlisted_changes() > 0 {
                notes.push(format!("  and {} more changes", tool.unlisted_changes()));
            }
        }
        // Counts and policies only: the names and the diff went to stderr (docs/guard.md).
        let summary = report.summary().unwrap_or_default();
        let reply = refusal(
            &pending.id,
            &format!("mcppin-guard refused tools/list: {summary}"),
        );
        match self.mode {
            Mode::Refuse => Element::Refuse(reply),
            Mode::Quarantine => {
                notes
                    .push("quarantined: the client sees only the approved, unchanged tools".into());
                match report.rebuild(bytes) {
                    Some(filtered) => Element::Replace(filtered),
                    None => Element::Replace(reply),
                }
            }
        }
    }

    fn admission(
        &mut self,
        id: &[u8],
        method: &str,
        tool: &str,
        approved: Option<&Pin>,
        observed: Option<&Pin>,
        decision: &Decision,
    ) {
        if !self.log.enabled() {
            return;
        }
        let generation = self.gate.generation();
        self.write_log(
            "tool_admission",
            json!({"request_id": id_json(id), "request_method": method, "tool": tool,
                   "catalog_generation": generation,
                   "approved_digest": approved.map(ToString::to_string),
                   "observed_digest": observed.map(ToString::to_string),
                   "decision": decision_name(decision),
                   "reason": decision.reason().map(Reason::policy)}),
        );
    }

    fn completion(&mut self, call: &Pending, outcome: &str) {
        if !self.log.enabled() {
            return;
        }
        let duration = self.log.clock.elapsed(call.started);
        self.write_log(
            "tool_completion",
            json!({"request_id": id_json(&call.id), "tool": call.tool, "outcome": outcome,
                   "duration_ms": u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)}),
        );
    }

    fn write_log(&mut self, event: &'static str, fields: serde_json::Value) {
        if let Some(held) = &mut self.held {
            held.push((event, fields));
            return;
        }
        if let Err(err) = self.log.event(event, fields)
            && !self.log_failed
        {
            self.log_failed = true;
            let _ = writeln!(io::stderr(), "mcppin-guard: cannot write the log: {err}");
        }
    }
}

fn decision_name(decision: &Decision) -> &'static str {
    if decision.is_allow() { "allow" } else { "deny" }
}

/// The key an id is matched by: its canonical form (so `1` and `1.0` are one id), or its
/// bytes when it has none. A string without escapes and a short integer literal are already in
/// canonical form; anything else is read and canonicalised.
fn id_key(id: Node<'_, '_>) -> IdBytes {
    let raw = id.bytes();
    let canonical = match id.shape() {
        Shape::String => !raw.contains(&b'\\'),
        Shape::Number => is_canonical_integer(raw),
        _ => false,
    };
    if canonical {
        return IdBytes::new(raw);
    }
    // Read strictly: an id holding a lone surrogate or an integer above 2^53 has no canonical
    // form two readers agree on (`"\ud800"` and `"\udc00"` would both become U+FFFD, two
    // nanosecond timestamps one double), so it is matched by its bytes.
    let key = parse(raw)
        .ok()
        .filter(|value| value.undecidable_literals().is_empty())
        .and_then(|value| mcppin_core::canonicalize(&value).ok());
    IdBytes::new(key.as_deref().unwrap_or(raw))
}

/// What JavaScript's `Number(id)` makes of an id, as the bits of the double (`-0` as `0`):
/// `None` for `NaN` and for ids that are neither numbers nor strings. The TypeScript SDK finds
/// the request an answer belongs to by this number, so two outstanding ids with one alias
/// could not be told apart by such a client.
fn number_alias(id: Node<'_, '_>) -> Option<u64> {
    let number = match id.shape() {
        Shape::Number => std::str::from_utf8(id.bytes()).ok()?.parse::<f64>().ok()?,
        Shape::String => js_number(&id.as_str()?)?,
        _ => return None,
    };
    if number.is_nan() {
        return None;
    }
    Some(if number == 0.0 { 0 } else { number.to_bits() })
}

/// ECMAScript StringToNumber (ECMA-262 section 7.1.4.1.1): surrounding white space ignored,
/// the empty string is 0, `Infinity`, decimal literals with an optional sign, `0x`, `0o`,
/// `0b` integers; `None` where it gives `NaN`.
fn js_number(text: &str) -> Option<f64> {
    let text = text.trim_matches(|c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{FEFF}');
    if text.is_empty() {
        return Some(0.0);
    }
    let radix = match text.get(..2) {
        Some("0x" | "0X") => 16,
        Some("0o" | "0O") => 8,
        Some("0b" | "0B") => 2,
        _ => 10,
    };
    if radix != 10 {
        let digits = &text[2..];
        if digits.is_empty() {
            return None;
        }
        let mut value = 0.0_f64;
        for c in digits.chars() {
            value = value * f64::from(radix) + f64::from(c.to_digit(radix)?);
        }
        return Some(value);
    }
    let (negative, unsigned) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if unsigned == "Infinity" {
        return Some(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    // Digits, one optional point, an optional exponent: Rust's reader accepts this grammar
    // (and more, such as `inf` and `nan`, which the check keeps out).
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let mut parts = mantissa.splitn(2, '.');
    let whole = parts.next().unwrap_or_default();
    let fraction = parts.next().unwrap_or_default();
    let plain = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = plain(whole) && plain(fraction) && !(whole.is_empty() && fraction.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
        !digits.is_empty() && plain(digits)
    });
    if !(mantissa_ok && exponent_ok) {
        return None;
    }
    let value = unsigned.parse::<f64>().ok()?;
    Some(if negative { -value } else { value })
}

/// Whether a number literal is an integer written as its canonical form: an optional minus
/// (not before a lone zero), no leading zero, at most 15 digits (so exact in float64).
fn is_canonical_integer(literal: &[u8]) -> bool {
    let digits = literal.strip_prefix(b"-").unwrap_or(literal);
    let plain = !digits.is_empty()
        && digits.len() <= 15
        && digits.iter().all(u8::is_ascii_digit)
        && (digits[0] != b'0' || digits.len() == 1);
    plain && literal != b"-0"
}

/// The id for the log, as JSON.
fn id_json(raw: &[u8]) -> serde_json::Value {
    serde_json::from_slice(raw)
        .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(raw).into_owned()))
}

/// A JSON-RPC error answer with the client's id, code -32001.
///
/// `message` is what the model reads: it names the method and the policy, with counts, and
/// never a string the server chose (a tool name, a number literal) nor one of unbounded length
/// (docs/guard.md, "What the client sees"). The detail goes to stderr and the log.
fn refusal(id: &[u8], message: &str) -> Vec<u8> {
    error_answer(id, REFUSED, message)
}

/// A JSON-RPC error answer.
fn error_answer(id: &[u8], code: i64, message: &str) -> Vec<u8> {
    let mut out = br#"{"jsonrpc":"2.0","id":"#.to_vec();
    out.extend_from_slice(id);
    out.extend_from_slice(br#","error":{"code":"#);
    out.extend_from_slice(code.to_string().as_bytes());
    out.extend_from_slice(br#","message":"#);
    out.extend(serde_json::to_vec(message).unwrap_or_default());
    out.extend_from_slice(b"}}");
    out
}

/// `[` + `parts` joined by `,` + `]`.
fn join_parts(parts: &[Cow<'_, [u8]>]) -> Vec<u8> {
    let mut out = vec![b'['];
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(part);
    }
    out.push(b']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str) -> IdBytes {
        let outline = Outline::parse(id.as_bytes(), 0).unwrap();
        id_key(outline.root())
    }

    #[test]
    fn ids_equal_as_json_values_share_a_key() {
        assert_eq!(&*key("1"), b"1");
        assert_eq!(key("1"), key("1.0"));
        assert_eq!(key("1"), key("1e0"));
        assert_eq!(key("0"), key("-0"));
        assert_eq!(key("-7"), key("-7.00"));
        assert_eq!(key(r#""a""#), key(r#""\u0061""#));
        assert_eq!(key("123456789012345"), key("1.23456789012345e14"));
        assert_eq!(key("1234567890123456"), key("1234567890123456.0"));
    }

    #[test]
    fn ids_of_different_values_or_types_keep_apart() {
        // Integers above 2^53 and lone surrogates have no canonical form two readers agree
        // on: matched by their bytes, so two of them never share a key.
        assert_ne!(key("12345678901234567"), key("12345678901234568"));
        assert_eq!(&*key("12345678901234567"), b"12345678901234567");
        assert_ne!(key(r#""\ud800""#), key(r#""\udc00""#));
        assert_ne!(key("1"), key(r#""1""#));
        assert_ne!(key("1"), key("2"));
        assert_ne!(key(r#""a""#), key(r#""A""#));
        assert_ne!(key("null"), key(r#""null""#));
    }

    fn alias(id: &str) -> Option<u64> {
        let outline = Outline::parse(id.as_bytes(), 0).unwrap();
        number_alias(outline.root())
    }

    #[test]
    fn ids_a_javascript_client_reads_as_one_number_share_an_alias() {
        let one = alias("1");
        assert!(one.is_some());
        for same in [
            r#""1""#,
            r#"" 1 ""#,
            r#""1.0""#,
            r#""+1""#,
            r#""1e0""#,
            r#""0x1""#,
            r#""0b1""#,
            r#""0o1""#,
            r#"".1e1""#,
            r#""1.""#,
            r#""\u0031""#,
            "1.0",
            "1e0",
        ] {
            assert_eq!(alias(same), one, "{same}");
        }
        assert_eq!(alias(r#""""#), alias("0"), "the empty string is 0");
        assert_eq!(alias("-0"), alias("0"));
        assert_eq!(alias(r#""-Infinity""#), Some(f64::NEG_INFINITY.to_bits()));
        // 2^53 + 1 rounds to 2^53.
        assert_eq!(alias("9007199254740993"), alias("9007199254740992"));
    }

    #[test]
    fn ids_a_javascript_client_tells_apart_keep_apart() {
        for (a, b) in [("1", "2"), ("1", r#""2""#), ("10", r#""0x11""#)] {
            assert_ne!(alias(a), alias(b), "{a} {b}");
        }
        for nan in [
            r#""abc""#,
            r#""1a""#,
            r#""0x""#,
            r#""0xg""#,
            r#""inf""#,
            r#""nan""#,
            r#"".""#,
            r#""1e""#,
            r#""- 1""#,
            r#""--1""#,
            r#""-0x1""#,
            "null",
            "true",
            "[1]",
        ] {
            assert_eq!(alias(nan), None, "{nan}");
        }
    }

    #[test]
    fn only_plain_short_integers_skip_canonicalisation() {
        for plain in ["0", "7", "-7", "123456789012345"] {
            assert!(is_canonical_integer(plain.as_bytes()), "{plain}");
        }
        for other in ["-0", "01", "1.0", "1e3", "1234567890123456", "-", ""] {
            assert!(!is_canonical_integer(other.as_bytes()), "{other}");
        }
    }

    #[test]
    fn long_ids_are_kept_whole() {
        let long = format!(r#""{}""#, "x".repeat(100));
        assert!(matches!(key(&long), IdBytes::Heap(_)));
        assert_eq!(&*key(&long), long.as_bytes());
        assert!(matches!(key("12"), IdBytes::Inline(..)));
        assert_eq!(IdBytes::new(&[b'y'; INLINE_ID]).len(), INLINE_ID);
    }

    #[test]
    fn known_methods_are_named_without_an_allocation() {
        assert!(matches!(
            method_name(Cow::Owned("tools/call".into())),
            Cow::Borrowed(_)
        ));
        assert!(matches!(
            method_name(Cow::Borrowed("custom/x")),
            Cow::Owned(_)
        ));
    }
}

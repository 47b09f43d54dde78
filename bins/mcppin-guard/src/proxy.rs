//! The proxy: two forwarding threads (client to server, server to client, in [`crate::pump`])
//! around one shared [`Session`], and the main thread that ends the session.
//!
//! Every decision about the bytes is the engine's ([`mcppin_core::engine`]): this file starts
//! the server, watches it and the signals, and ends the session in the shutdown order
//! (docs/guard.md, "Shutdown").

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::fd::AsFd;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context;
use mcppin_cli::signal::SignalStop;
use mcppin_client::{
    DEFAULT_GRACE, Inherit, ServerCommand, StderrMode, artifact, inherited_environment,
};
use mcppin_core::engine::{self, ApprovedServer, Session};
use mcppin_core::escape_non_ascii;

use crate::exit::{Exit, Fail};
use crate::feed::ServerIn;
use crate::log::Log;
use crate::pump::{
    BUFFER, End, Out, Outcome, Probe, Shared, artifact_advice, client_to_server, lock, lock_out,
    no_answers, print_notes, server_to_client,
};
use crate::stderr::Relay;

/// What the proxy runs and how.
#[derive(Debug)]
pub(crate) struct Config {
    /// The engine's configuration (mode, events, the name refusals give).
    pub(crate) engine: engine::Config,
    pub(crate) max_message: usize,
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    /// The server's id, the prefix of its stderr lines.
    pub(crate) server: String,
}

/// How often the main thread looks whether the server exited while its output stays open.
const WATCH: Duration = Duration::from_millis(100);

pub(crate) use mcppin_cli::signal::{signalled, wait_for_exit as wait_for_signal_exit};

/// Runs the session to its end and says how it ended.
pub(crate) fn run(config: &Config, approved: ApprovedServer, log: Log) -> anyhow::Result<Exit> {
    let mut command = ServerCommand::new(&config.program)
        .args(&config.args)
        // The guard's own settings are not the server's.
        .envs(
            inherited_environment(std::env::vars_os(), Inherit::All)
                .into_iter()
                .filter(|(name, _)| {
                    !mcppin_core::launch::GUARD_ENV
                        .iter()
                        .any(|setting| name.as_os_str() == *setting)
                }),
        )
        .stderr(StderrMode::Pipe)
        .grace(DEFAULT_GRACE);
    // The server dies with the guard, even by SIGKILL: started from this (the main) thread
    // through the guard's own executable, which sets the parent-death signal before it
    // becomes the server. Without a path to itself the guard starts the server directly.
    if let Ok(exe) = std::env::current_exe() {
        command = command.die_with_parent(exe);
    }
    // What the server runs, where the lock pins it (docs/guard.md, "Artifact identity"): a
    // local program or an image the engine holds is checked before the server starts, and a
    // server whose artifact differs never starts; what `npx` or `uvx` installs exists only
    // once the launcher resolved it, and is checked before anything the server wrote is
    // forwarded.
    let mut check_once_up = false;
    if engine::pins_artifact(approved.surface()) {
        match artifact::before_start(&command) {
            Some(observed) => {
                let check = engine::check_artifact(
                    approved.surface(),
                    &observed,
                    engine::Moment::BeforeStart,
                    log.enabled(),
                );
                if let Err(err) = log.events(&check.events) {
                    let _ = writeln!(
                        io::stderr(),
                        "mcppin-guard: {}",
                        crate::log::failed("the log", &err)
                    );
                }
                if check.refused.is_some() {
                    print_notes(&check.notes, Some(&artifact_advice(&config.server)));
                    let _ = writeln!(io::stderr(), "mcppin-guard: the server was not started");
                    return Ok(Exit::Drift);
                }
            }
            None => check_once_up = true,
        }
    }
    // Registered before the server starts, so a signal arriving in between is not lost.
    let signals = SignalStop::register().context("cannot install the signal handler")?;
    let mut server = command
        .spawn()
        .map_err(|e| Fail::new(Exit::Server, e.to_string()))?;
    // On SIGINT, SIGTERM or SIGHUP (how clients stop their servers): stop the server's group
    // (SIGTERM, the grace period, SIGKILL), end the log's run, and exit with 128 + the signal
    // number.
    let group = server.id();
    let ending = log.clone();
    signals.on_signal(
        move |code| {
            let _ = mcppin_client::stop_group(group, DEFAULT_GRACE);
            if let Err(err) = ending.stop(code) {
                let _ = writeln!(
                    io::stderr().lock(),
                    "mcppin-guard: {}",
                    crate::log::failed("the log's end", &err)
                );
            }
        },
        b"mcppin-guard: stopped by a signal; the server was stopped\n",
    );
    let relay = server
        .take_stderr()
        .map(|pipe| Relay::start(pipe, &config.server));
    let stdin = server.take_stdin();
    if let Some(pipe) = &stdin {
        crate::feed::nonblocking(pipe).context("cannot set up the server's stdin")?;
    }
    let server_in: Arc<ServerIn> = Arc::new(Mutex::new(stdin));
    let server_out = server.take_stdout().context("the server has no stdout")?;
    // For the thread that judges the server's answers to warm up on (see below).
    let rehearsal = approved.clone();
    let session = Session::new(approved, config.engine);
    let shared = Arc::new(Mutex::new(Shared::new(session, log)));
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
        let probe: Option<Probe> = check_once_up.then(|| {
            let command = command.clone();
            let pid = server.id();
            Box::new(move || artifact::once_up(&command, pid)) as Probe
        });
        thread::spawn(move || {
            // While the server starts: the session's first list then judges at warm speed.
            let expected = rehearsal.warm_up().answer_bytes;
            let outcome = server_to_client(server_out, limit, &shared, &out, probe, expected);
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
            End::Server(Outcome::Artifact) => {
                stderr_lines.push(
                    "mcppin-guard: the server was stopped; nothing it wrote was forwarded"
                        .to_owned(),
                );
                break Exit::Drift;
            }
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

/// Stops forwarding and closes the server's stdin (the first step of the shutdown order),
/// dropping whatever was not yet written to it. A write that holds the pipe at this moment
/// closes it itself within a moment (see [`crate::feed::feed`]).
pub(crate) fn stop(shared: &Mutex<Shared>, server_in: &ServerIn) {
    lock(shared).session.stop();
    if let Ok(mut stdin) = server_in.try_lock() {
        stdin.take();
    }
}

//END

//! `mcppin-guard hook`: a PreToolUse verifier for Claude Code (docs/guard.md, "A pre-call hook
//! for Claude Code"). Reads the hook's JSON on stdin, maps the MCP tool's name to the
//! lockfile's server and tool, and allows the call (exit 0, nothing written) only when the tool
//! is approved and, with `--state`, admitted as approved in the current reading of the guard in
//! front of that server. Everything else exits 2 with the reason on stderr, which blocks the
//! call: Claude Code lets a call through on any other exit code, so this mode never ends with
//! one (a panic and a timeout included).

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use clap::Parser;
use mcppin_core::hook::{Block, Call, State, check, resolve, state_file_name};

/// The most bytes of hook input read (a call's arguments may be large): more blocks the call.
const MAX_INPUT: u64 = 16 * 1024 * 1024;

/// The most bytes of a state file read.
const MAX_STATE: usize = 16 * 1024 * 1024;

/// Check an MCP tool call before Claude Code makes it (a PreToolUse hook).
///
/// Reads the hook's JSON on standard input. Exits 0, writing nothing, when the tool
/// (`mcp__<server>__<tool>`) is an approved tool of the lockfile and, with --state, the
/// mcppin-guard in front of that server (run with the same --state) has admitted it as approved
/// in its current reading of the list. Otherwise exits 2 with the reason on standard error,
/// which blocks the call and tells the model why: an unreadable input, lockfile or state, a
/// signature that --pubkey requires and that cannot be read or does not hold, a name no
/// approved tool has or several have, a state that is missing, stale (its guard is gone, or it
/// was written under another lockfile), or that does not admit the tool in its approved form,
/// and no decision within --timeout. It never exits otherwise: Claude
/// Code lets a call through on any other code.
#[derive(Debug, Parser)]
#[command(name = "mcppin-guard hook", version)]
struct Cli {
    /// The lockfile holding the approved surface.
    #[arg(long, value_name = "FILE")]
    lock: PathBuf,
    /// The directory the guards in front of the servers write their state to (their --state).
    #[arg(long, value_name = "DIR")]
    state: Option<PathBuf>,
    /// Require a valid signature (`<lock>.sig`) by one of these public keys (SPKI PEM).
    #[arg(long, value_name = "FILE")]
    pubkey: Vec<PathBuf>,
    /// Block under a lockfile whose approval_serial is lower: an older approval put back.
    #[arg(long, value_name = "N")]
    min_serial: Option<u64>,
    /// Block when no decision was reached within this long (keep it well below the hook's
    /// timeout in the settings).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = humantime::parse_duration)]
    timeout: Duration,
}

/// Runs the hook with `args` (after `hook`).
pub(crate) fn main(args: &[OsString]) -> ExitCode {
    let argv: Vec<OsString> = std::iter::once(OsString::from("mcppin-guard hook"))
        .chain(args.iter().cloned())
        .collect();
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => {
            // --help, --version: asked by a person.
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        Err(err) => {
            // One line: the hook's reason is shown to the model as one message.
            let text = mcppin_cli::usage::refusal::<Cli>(&err, &argv);
            let lines: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
                .collect();
            return block(&lines.join(" "));
        }
    };
    let timeout = cli.timeout;
    let (tx, rx) = mpsc::channel();
    let started = std::thread::Builder::new().spawn(move || {
        let _ = tx.send(decide(&cli));
    });
    // A user at its limit of processes or of memory: a block, never the exit code of the
    // panic `thread::spawn` would end in, which lets the call through.
    if let Err(e) = started {
        return block(&format!("the check could not start: {e}"));
    }
    match rx.recv_timeout(timeout) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(reason)) => block(&reason),
        Err(mpsc::RecvTimeoutError::Timeout) => block(&format!(
            "no decision within {} (--timeout): the input, the lockfile or the state could not \
             be read in time",
            humantime::format_duration(timeout)
        )),
        // The check panicked: a block, never the exit code of a panic, which lets the call
        // through.
        Err(mpsc::RecvTimeoutError::Disconnected) => block("the check failed (internal error)"),
    }
}

/// Writes the reason on stderr and blocks the call: exit 2. Strings from the input are
/// escaped where the reason quotes them; what is left outside printable ASCII (a path) is
/// escaped here.
fn block(reason: &str) -> ExitCode {
    let _ = writeln!(
        std::io::stderr().lock(),
        "mcppin-guard hook: blocked: {}",
        mcppin_core::escape_non_ascii(reason)
    );
    ExitCode::from(2)
}

/// The decision: `Ok` allows the call, `Err` holds the reason it is blocked.
fn decide(cli: &Cli) -> Result<(), String> {
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_INPUT + 1)
        .read_to_end(&mut input)
        .map_err(|e| format!("cannot read the hook input: {e}"))?;
    if input.len() as u64 > MAX_INPUT {
        return Err(format!("the hook input is over {MAX_INPUT} bytes"));
    }
    let call = Call::parse(&input).map_err(|e| e.to_string())?;
    let (lockfile, lock_digest) = approval(cli)?;
    let target = resolve(&lockfile, &call).map_err(|b| b.to_string())?;
    let Some(dir) = &cli.state else {
        return Ok(());
    };
    let path = dir.join(state_file_name(target.server));
    let server = target.server.to_owned();
    let bytes = match mcppin_cli::read_at_most(&path, MAX_STATE) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Block::NoState { server }.to_string());
        }
        Err(e) => {
            let reason = format!("{}: {e}", path.display());
            return Err(Block::BadState { server, reason }.to_string());
        }
    };
    let state = State::parse(&bytes).map_err(|e| {
        let reason = format!("{}: {e}", path.display());
        Block::BadState {
            server: server.clone(),
            reason,
        }
        .to_string()
    })?;
    let alive = crate::state::alive(state.pid, state.process_start);
    check(&target, &state, lock_digest, alive).map_err(|b| b.to_string())
}

/// The lockfile as an approval (its signature with --pubkey, its serial with --min-serial),
/// and its digest: read and checked where the guard and `mcppin verify` read them
/// (`mcppin_cli::approval`), so the hook decides on the approval as the guard does. Without a
/// key, a signature plays no part (one that cannot be read is not checked, as in the guard).
fn approval(cli: &Cli) -> Result<(mcppin_core::lockfile::Lockfile, mcppin_core::Digest), String> {
    let files = mcppin_cli::approval::Files {
        lock: &cli.lock,
        pubkeys: &cli.pubkey,
        min_serial: cli.min_serial,
        max_age: None,
    };
    let (read, lock_digest) = mcppin_cli::approval::read_recorded(&files, |_, _| String::new())
        .map_err(|e| format!("{e:#}"))?;
    Ok((read.approved.lockfile, lock_digest))
}

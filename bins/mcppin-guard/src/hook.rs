//! `mcppin-guard hook`: a PreToolUse verifier for Claude Code (docs/guard.md, "A pre-call hook
//! for Claude Code"). Reads the hook's JSON on stdin, maps the MCP tool's name to the
//! lockfile's server and tool, and allows the call (exit 0, nothing written) only when the tool
//! is approved and, with `--state`, admitted as approved in the current reading of the guard in
//! front of that server. Everything else exits 2 with the reason on stderr, which blocks the
//! call: Claude Code lets a call through on any other exit code, so this mode never ends with
//! one (a panic and a timeout included).
//!
//! The decision is made in a child process (this binary again, with `--decide-for PID`), and the
//! hook's own process only waits for it: a check that the system ends (out of memory: an
//! abort, or the kernel's kill) or that outlasts `--timeout` is then a block, never the exit
//! code of a process that died, which would let the call through.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use clap::Parser;
use mcppin_core::hook::{Block, Call, State, check, resolve, state_file_name};

/// The most bytes of hook input read (a call's arguments may be large): more blocks the call.
const MAX_INPUT: u64 = 16 * 1024 * 1024;

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
/// no decision within --timeout, and a check the system ended (out of memory). It never exits
/// otherwise: Claude Code lets a call through on any other code (--help and --version exit 2
/// too).
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
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = mcppin_cli::duration::parse)]
    timeout: Duration,
    /// Decide in this process, for the hook process PID waiting for it: how the hook runs its
    /// check, in a child that ends with its parent.
    #[arg(long, hide = true, value_name = "PID")]
    decide_for: Option<u32>,
}

/// Runs the hook with `args` (after `hook`).
pub(crate) fn main(args: &[OsString]) -> ExitCode {
    catch_signals();
    let argv: Vec<OsString> = std::iter::once(OsString::from("mcppin-guard hook"))
        .chain(args.iter().cloned())
        .collect();
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => {
            // --help, --version: asked by a person, and exit 2 all the same: settings that
            // named the hook with either must not allow every call.
            let _ = err.print();
            return ExitCode::from(2);
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
    if let Some(parent) = cli.decide_for {
        // Ended with the hook process (Claude Code may kill it at its own timeout), so no check
        // is left running, blocked on a file that never ends.
        #[cfg(target_os = "linux")]
        if let Err(e) =
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
        {
            return block(&format!("the check cannot end with the hook: {e}"));
        }
        if std::os::unix::process::parent_id() != parent {
            return block("the hook process that started the check is gone");
        }
        // The first the kernel ends when memory runs out (under a cgroup's limit, it could
        // pick the waiting hook instead, whose end lets the call through).
        let _ = std::fs::write("/proc/self/oom_score_adj", "1000");
        return match decide(&cli) {
            Ok(()) => ExitCode::SUCCESS,
            Err(reason) => block(&reason),
        };
    }
    // A panic here would end the hook with exit code 101, which lets the call through.
    std::panic::catch_unwind(|| supervise(args, cli.timeout))
        .unwrap_or_else(|_| block("the check failed (internal error)"))
}

/// Turns every signal whose default would end the hook (with a code Claude Code takes as leave
/// to make the call) into exit 2, a block: those a wrapper or the system can send or leave
/// armed (SIGTERM, SIGHUP, SIGINT, a timer's SIGALRM inherited across exec, SIGIO from an input
/// set to signal, SIGXFSZ at a file-size limit, SIGXCPU at a CPU limit, ...). SIGCHLD, ignored
/// where the hook was started, would let the system reap the check unseen: it is caught.
fn catch_signals() {
    use rustix::process::Signal;
    use signal_hook::consts::signal::{
        SIGALRM, SIGCHLD, SIGHUP, SIGINT, SIGIO, SIGPROF, SIGQUIT, SIGSYS, SIGTERM, SIGTRAP,
        SIGUSR1, SIGUSR2, SIGVTALRM, SIGXCPU, SIGXFSZ,
    };
    let armed = Arc::new(AtomicBool::new(true));
    let ending = [
        SIGALRM,
        SIGHUP,
        SIGINT,
        SIGIO,
        SIGPROF,
        SIGQUIT,
        SIGSYS,
        SIGTERM,
        SIGTRAP,
        SIGUSR1,
        SIGUSR2,
        SIGVTALRM,
        SIGXCPU,
        SIGXFSZ,
        Signal::POWER.as_raw(),
        Signal::STKFLT.as_raw(),
    ];
    for signal in ending {
        let _ = signal_hook::flag::register_conditional_shutdown(signal, 2, Arc::clone(&armed));
    }
    let _ = signal_hook::flag::register(SIGCHLD, Arc::new(AtomicBool::new(false)));
}

/// The most bytes of the check's standard error relayed (its one line of reason, or a panic's
/// message); the rest is read and dropped.
const MAX_SAID: usize = 64 * 1024;

/// Runs the check in a child process reading the hook's standard input, and turns its end into
/// the hook's: exit 0 allows, anything else blocks. What the child said is relayed escaped.
fn supervise(args: &[OsString], timeout: Duration) -> ExitCode {
    // The flag is at most 100 years (`mcppin_cli::duration`), well within the clock.
    let Some(deadline) = Instant::now().checked_add(timeout) else {
        return block("--timeout is past what the clock can wait for");
    };
    // The running binary itself, even when the file was replaced since it started.
    let exe = if Path::new("/proc/self/exe").exists() {
        PathBuf::from("/proc/self/exe")
    } else {
        match std::env::current_exe() {
            Ok(exe) => exe,
            Err(e) => return block(&format!("the check could not start: {e}")),
        }
    };
    let spawned = Command::new(exe)
        .arg("hook")
        .arg("--decide-for")
        .arg(std::process::id().to_string())
        .args(args)
        .stdin(Stdio::inherit())
        // A pipe nobody reads, not /dev/null: the check writes nothing there, and opening a
        // /dev/null that is not the device could wait without end.
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    // A user at its limit of processes or of memory: a block.
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return block(&format!("the check could not start: {e}")),
    };
    drop(child.stdout.take());
    let mut said = Vec::new();
    let heard = hear(&mut child, deadline, &mut said);
    if heard != Heard::End {
        let _ = child.kill();
        let _ = child.wait();
        relay(&said);
        return block(&match heard {
            Heard::Failed(e) => format!("the check's end could not be awaited: {e}"),
            _ => format!(
                "no decision within {} (--timeout): the input, the lockfile or the state could \
                 not be read in time",
                humantime::format_duration(timeout)
            ),
        });
    }
    match child.wait() {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(status) if status.code() == Some(2) && !said.is_empty() => {
            relay(&said);
            ExitCode::from(2)
        }
        Ok(status) => {
            relay(&said);
            block(&format!(
                "the check ended without a decision ({})",
                ending(status)
            ))
        }
        Err(e) => block(&format!("the check ended without a decision: {e}")),
    }
}

/// How the wait for the check's standard error ended.
#[derive(Debug, PartialEq, Eq)]
enum Heard {
    /// It closed: the check has exited.
    End,
    /// The deadline passed first.
    Late,
    /// Polling or reading it failed.
    Failed(std::io::ErrorKind),
}

/// Reads what the child writes on standard error into `said` (at most [`MAX_SAID`] bytes)
/// until it closes it (it exits) or `deadline` passes.
fn hear(child: &mut Child, deadline: Instant, said: &mut Vec<u8>) -> Heard {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let Some(mut stderr) = child.stderr.take() else {
        return Heard::Failed(std::io::ErrorKind::BrokenPipe);
    };
    let mut chunk = [0u8; 8192];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Heard::Late;
        }
        let Ok(wait) = Timespec::try_from(left) else {
            return Heard::Failed(std::io::ErrorKind::InvalidInput);
        };
        let mut fds = [PollFd::new(&stderr, PollFlags::IN)];
        match poll(&mut fds, Some(&wait)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Heard::Failed(std::io::Error::from(e).kind()),
        }
        if fds[0].revents().is_empty() {
            continue;
        }
        match stderr.read(&mut chunk) {
            Ok(0) => return Heard::End,
            Ok(n) => {
                let room = MAX_SAID.saturating_sub(said.len());
                said.extend_from_slice(&chunk[..n.min(room)]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Heard::Failed(e.kind()),
        }
    }
}

/// Writes what the check said on stderr, each line escaped (a panic's message can quote
/// anything).
fn relay(said: &[u8]) {
    let text = String::from_utf8_lossy(said);
    let mut stderr = std::io::stderr().lock();
    for line in text.lines() {
        let _ = writeln!(stderr, "{}", mcppin_core::escape_non_ascii(line));
    }
}

/// How a process ended, in words: its exit code, or the signal that ended it.
fn ending(status: ExitStatus) -> String {
    use rustix::process::Signal;
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) if signal == Signal::KILL.as_raw() => {
            format!("ended by signal {signal}, as the system ends a process out of memory")
        }
        (None, Some(signal)) if signal == Signal::ABORT.as_raw() => {
            format!("ended by signal {signal}, as a process that cannot get memory aborts")
        }
        (None, Some(signal)) => format!("ended by signal {signal}"),
        (None, None) => "ended".to_owned(),
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
    let bytes = match mcppin_cli::read_at_most(&path, crate::state::MAX_STATE) {
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

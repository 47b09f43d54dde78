//! Starting an MCP server as a child process and stopping it, with everything it started.
//!
//! docs/export.md: a stdio server runs with the configured command, arguments, environment and
//! working directory, an inherited environment of only [`INHERITED_VARIABLES`] (everything on
//! request), in its own process group. Shutdown order: close stdin, wait, SIGTERM, wait, SIGKILL,
//! each signal to the whole group. [`ServerProcess`] runs that order from
//! [`ServerProcess::shutdown`] and, as a safety net, from `Drop`, so a server is stopped on
//! success, error, timeout and panic alike.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};

use crate::Error;

/// The variables a server inherits from the caller's environment by default (docs/export.md).
pub const INHERITED_VARIABLES: [&str; 8] = [
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR",
];

/// The proxy and certificate-authority variables a server also inherits by default
/// (docs/export.md): a client started from the user's environment passes them, and without
/// them `npx` or `uvx` behind a proxy, or a TLS-inspecting one, cannot fetch the server. They
/// name where to connect and whom to trust; a proxy URL may hold credentials, which go where
/// the user's other tools send them and are never shown.
pub const NETWORK_VARIABLES: [&str; 18] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
    "ALL_PROXY",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "NODE_USE_SYSTEM_CA",
    "PIP_CERT",
    "UV_NATIVE_TLS",
    "GIT_SSL_CAINFO",
    "DENO_CERT",
];

/// The default wait between the steps of the shutdown order.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);

/// The wait between SIGTERM and SIGKILL that `mcppin-export` gives a server by default
/// (`--kill-after`): long enough for a package manager stopped mid-install (`npx`, `uvx`) to
/// roll back what it was writing, so the user's cache is left whole.
pub const DEFAULT_KILL_AFTER: Duration = Duration::from_secs(10);

/// The default bound on captured stderr: the last 64 KiB are kept.
pub const DEFAULT_STDERR_LIMIT: usize = 64 * 1024;

/// How often a wait for a process polls.
const POLL: Duration = Duration::from_millis(10);

/// The first argument that runs a binary as the trampoline of [`ServerCommand::die_with_parent`]
/// (see [`exec_server`]). Not an option for people: binaries check for it before parsing their
/// command line and never list it.
pub const TRAMPOLINE_ARG: &str = "--mcppin-exec-server-dying-with-parent";

/// How much of the caller's environment a server inherits.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
#[non_exhaustive]
pub enum Inherit {
    /// Only [`INHERITED_VARIABLES`] and [`NETWORK_VARIABLES`] (the default: a server sees no
    /// tokens it was not given).
    #[default]
    Minimal,
    /// Everything (`--inherit-env`).
    All,
}

/// Selects what a server inherits from `parent`, the caller's environment.
///
/// The library never reads the environment itself: the binary passes `std::env::vars_os()`.
///
/// # Examples
///
/// ```
/// use mcppin_client::{Inherit, inherited_environment};
///
/// let parent = [("PATH", "/usr/bin"), ("GITHUB_TOKEN", "secret"), ("HTTPS_PROXY", "http://p:3128")];
/// let env = inherited_environment(parent, Inherit::Minimal);
/// assert_eq!(env.len(), 2);
/// assert!(env.contains_key(std::ffi::OsStr::new("PATH")));
/// assert!(env.contains_key(std::ffi::OsStr::new("HTTPS_PROXY")));
/// ```
pub fn inherited_environment<I, K, V>(parent: I, inherit: Inherit) -> BTreeMap<OsString, OsString>
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<OsString>,
    V: Into<OsString>,
{
    parent
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .filter(|(k, _)| inherits(inherit, k))
        .collect()
}

/// The names of the variables of `parent` that a server does not inherit under `inherit`,
/// sorted: what a message may name when a server fails to start (never their values).
///
/// # Examples
///
/// ```
/// use mcppin_client::{Inherit, withheld_variables};
///
/// let parent = [("PATH", "/usr/bin"), ("GITHUB_TOKEN", "secret"), ("AWS_PROFILE", "dev")];
/// assert_eq!(withheld_variables(parent, Inherit::Minimal), ["AWS_PROFILE", "GITHUB_TOKEN"]);
/// assert!(withheld_variables(parent, Inherit::All).is_empty());
/// ```
pub fn withheld_variables<I, K, V>(parent: I, inherit: Inherit) -> Vec<OsString>
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<OsString>,
    V: Into<OsString>,
{
    let mut names: Vec<OsString> = parent
        .into_iter()
        .map(|(k, _)| k.into())
        .filter(|k| !inherits(inherit, k))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Whether a variable named `name` is inherited under `inherit`.
fn inherits(inherit: Inherit, name: &OsStr) -> bool {
    inherit == Inherit::All
        || INHERITED_VARIABLES
            .iter()
            .chain(NETWORK_VARIABLES.iter())
            .any(|known| OsStr::new(known) == name)
}

/// What happens to a server's stderr.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum StderrMode {
    /// Kept in memory, at most the last `limit` bytes (see [`ServerProcess::stderr`]).
    Capture {
        /// How many bytes to keep (the most recent ones).
        limit: usize,
    },
    /// Written to the caller's stderr as it comes, unchanged.
    Inherit,
    /// A pipe the caller takes with [`ServerProcess::take_stderr`] and reads itself (a proxy
    /// that passes each line on, escaped and prefixed; see [`crate::LogLines`]).
    Pipe,
    /// Discarded.
    Discard,
}

impl Default for StderrMode {
    fn default() -> Self {
        Self::Capture {
            limit: DEFAULT_STDERR_LIMIT,
        }
    }
}

/// How to start a server: program, arguments, the complete environment, working directory.
///
/// The environment is exactly what is given: the child starts from an empty environment. Build
/// the inherited part with [`inherited_environment`] and add the configured variables on top.
///
/// # Examples
///
/// ```
/// use mcppin_client::ServerCommand;
///
/// let mut server = ServerCommand::new("cat").spawn()?;
/// let shutdown = server.shutdown()?;
/// // `cat` exits when its stdin is closed, the first step of the shutdown order.
/// assert!(shutdown.status.success());
/// # Ok::<(), mcppin_client::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ServerCommand {
    program: OsString,
    args: Vec<OsString>,
    env: BTreeMap<OsString, OsString>,
    cwd: Option<PathBuf>,
    stderr: StderrMode,
    grace: Duration,
    kill_after: Option<Duration>,
    trampoline: Option<PathBuf>,
}

impl ServerCommand {
    /// A command running `program` with no arguments and an empty environment.
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            stderr: StderrMode::default(),
            grace: DEFAULT_GRACE,
            kill_after: None,
            trampoline: None,
        }
    }

    /// Adds one argument.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one environment variable (replacing an earlier value).
    #[must_use]
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.insert(name.into(), value.into());
        self
    }

    /// Sets environment variables (replacing earlier values).
    #[must_use]
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        self.env
            .extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Sets the working directory of the server.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Sets what happens to the server's stderr (default: captured, last 64 KiB).
    #[must_use]
    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }

    /// Sets the wait between the steps of the shutdown order (default 2 s).
    #[must_use]
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Sets the wait between SIGTERM and SIGKILL, for the leader and for what is left of its
    /// group (default: the grace of [`ServerCommand::grace`]). A process that handles SIGTERM
    /// (a package manager that rolls back a half-written install) gets this long to finish.
    #[must_use]
    pub fn kill_after(mut self, wait: Duration) -> Self {
        self.kill_after = Some(wait);
        self
    }

    /// Makes the server die with the thread that starts it, even when the caller is killed by
    /// SIGKILL and runs no shutdown order: the server is started through `trampoline`, the
    /// caller's own executable, which sets a parent-death signal (SIGKILL, Linux) and then
    /// executes the server in its place: same process, process group, arguments, environment,
    /// working directory and standard streams.
    ///
    /// The caller's `main` must hand a command line that starts with [`TRAMPOLINE_ARG`] to
    /// [`exec_server`] before parsing it. The signal comes when the *thread* that called
    /// [`ServerCommand::spawn`] ends: spawn from a thread that lives as long as the server
    /// should (the main thread). It does not reach what the server starts, a server that is a
    /// set-user-ID or set-group-ID program or has file capabilities (the kernel clears the
    /// signal when executing one), nor other systems than Linux.
    #[must_use]
    pub fn die_with_parent(mut self, trampoline: impl Into<PathBuf>) -> Self {
        self.trampoline = Some(trampoline.into());
        self
    }

    /// The program as configured.
    #[must_use]
    pub fn program(&self) -> &OsStr {
        &self.program
    }

    /// The arguments as configured.
    #[must_use]
    pub fn arguments(&self) -> &[OsString] {
        &self.args
    }

    /// The complete environment the server gets.
    #[must_use]
    pub fn environment(&self) -> &BTreeMap<OsString, OsString> {
        &self.env
    }

    /// The working directory, when one is set.
    #[must_use]
    pub fn working_dir(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// Starts the server in a new process group, with piped stdin and stdout.
    ///
    /// # Errors
    ///
    /// [`Error::Spawn`] when the program cannot be started.
    pub fn spawn(&self) -> Result<ServerProcess, Error> {
        let mut command = match &self.trampoline {
            Some(trampoline) => {
                // The trampoline reports a failed exec only on the server's stderr: a program
                // that is not there at all is reported here, as a direct start would.
                self.resolve_program().map_err(|source| Error::Spawn {
                    program: self.program.to_string_lossy().into_owned(),
                    source,
                })?;
                let mut command = Command::new(trampoline);
                command
                    .arg(TRAMPOLINE_ARG)
                    .arg(std::process::id().to_string())
                    .arg(&self.program);
                command
            }
            None => Command::new(&self.program),
        };
        command
            .args(&self.args)
            .env_clear()
            .envs(&self.env)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match self.stderr {
                StderrMode::Capture { .. } | StderrMode::Pipe => Stdio::piped(),
                StderrMode::Inherit => Stdio::inherit(),
                StderrMode::Discard => Stdio::null(),
            });
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        let mut child = command.spawn().map_err(|source| Error::Spawn {
            program: self.program.to_string_lossy().into_owned(),
            source,
        })?;
        let pgid = Pid::from_child(&child);
        let (stderr, stderr_pipe) = match (self.stderr, child.stderr.take()) {
            (StderrMode::Capture { limit }, Some(pipe)) => {
                (Some(StderrCapture::start(pipe, limit)), None)
            }
            (_, pipe) => (None, pipe),
        };
        Ok(ServerProcess {
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            child,
            pgid,
            stderr,
            stderr_pipe,
            grace: self.grace,
            kill_after: self.kill_after.unwrap_or(self.grace),
            finished: None,
        })
    }
}

impl ServerCommand {
    /// Where executing the program finds it, as the start does: the path itself when it holds
    /// a `/` (from the working directory), else the first directory of the server's `PATH`
    /// (the system's default one when it has none) holding an executable file of that name
    /// (a relative directory, from the working directory).
    ///
    /// # Errors
    ///
    /// `NotFound` when there is no such file, `PermissionDenied` for a file named by a path
    /// that is not executable.
    pub fn resolve_program(&self) -> io::Result<PathBuf> {
        let program = Path::new(&self.program);
        if self.program.as_encoded_bytes().contains(&b'/') {
            let path = match &self.cwd {
                Some(dir) if program.is_relative() => dir.join(program),
                _ => program.to_path_buf(),
            };
            if path.is_file() && !executable(&path) {
                return Err(rustix::io::Errno::ACCESS.into());
            }
            return if path.is_file() {
                Ok(path)
            } else {
                Err(rustix::io::Errno::NOENT.into())
            };
        }
        let search = self
            .env
            .get(OsStr::new("PATH"))
            .map_or(OsStr::new(DEFAULT_PATH), OsString::as_os_str);
        std::env::split_paths(search)
            .map(|dir| match &self.cwd {
                Some(cwd) if dir.is_relative() => cwd.join(dir),
                _ => dir,
            })
            .map(|dir| dir.join(program))
            .find(|candidate| executable(candidate))
            .ok_or_else(|| rustix::io::Errno::NOENT.into())
    }
}

/// The search path of `execvp` when the environment has no `PATH` (glibc's `_CS_PATH`).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// Whether `path` is a file with an execute permission bit.
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A running server: the leader of its own process group.
///
/// Dropping it runs the shutdown order (see [`ServerProcess::shutdown`]) if that has not
/// happened yet, so nothing is left running when the caller returns early or panics.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    pgid: Pid,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: Option<StderrCapture>,
    stderr_pipe: Option<ChildStderr>,
    grace: Duration,
    kill_after: Duration,
    finished: Option<Shutdown>,
}

/// How a server ended.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Shutdown {
    /// The exit status of the group leader.
    pub status: ExitStatus,
    /// The step of the shutdown order that ended it.
    pub stage: Stage,
}

/// The step of the shutdown order at which the server's leader was gone.
#[derive(Clone, Copy, Debug, Eq, Ord, PartialEq, PartialOrd)]
#[non_exhaustive]
pub enum Stage {
    /// It had exited before the shutdown began (it crashed, or finished on its own).
    AlreadyExited,
    /// It exited after its stdin was closed.
    ClosedStdin,
    /// It exited after SIGTERM to its group.
    Terminated,
    /// It was killed by SIGKILL to its group.
    Killed,
}

impl ServerProcess {
    /// The process id of the server, which is also its process group id.
    #[must_use]
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Takes the server's stdin (closing it is the first step of the shutdown order: drop it,
    /// or leave it here and [`ServerProcess::shutdown`] closes it).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// Takes the server's stdout.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.stdout.take()
    }

    /// Takes the server's stderr, when it is a pipe ([`StderrMode::Pipe`]).
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.stderr_pipe.take()
    }

    /// What the server wrote to stderr so far, when it is captured (the last `limit` bytes).
    #[must_use]
    pub fn stderr(&self) -> Option<CapturedStderr> {
        self.stderr.as_ref().map(StderrCapture::snapshot)
    }

    /// Whether the server's leader has exited (without waiting; reaps it if so).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the status cannot be queried.
    pub fn has_exited(&mut self) -> Result<bool, Error> {
        if self.finished.is_some() {
            return Ok(true);
        }
        self.child
            .try_wait()
            .map(|status| status.is_some())
            .map_err(|source| Error::Io {
                doing: "waiting for the server",
                source,
            })
    }

    /// Stops the server in the order of docs/export.md and returns how it ended.
    ///
    /// Closes its stdin and waits up to the grace period; then sends SIGTERM to its process
    /// group and waits up to the kill-after wait ([`ServerCommand::kill_after`]); then SIGKILL
    /// to the group. Once the leader is gone, whatever is left in its group (a server started
    /// through `npx` or a shell) gets SIGTERM, the kill-after wait, and SIGKILL. Calling it
    /// again returns the first result.
    ///
    /// A process that moved itself out of the group (`setsid`) is beyond reach, as it is for
    /// any supervisor that does not own a PID namespace.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when waiting fails, [`Error::Signal`] when a signal cannot be sent for
    /// another reason than the group being gone.
    pub fn shutdown(&mut self) -> Result<Shutdown, Error> {
        if let Some(done) = self.finished {
            return Ok(done);
        }
        let done = self.stop_leader()?;
        self.finished = Some(done);
        if let Some(capture) = &mut self.stderr {
            capture.finish(self.grace);
        }
        Ok(done)
    }

    /// Runs the order. The group gets SIGTERM once: a process still cleaning up after it (a
    /// package manager's rollback) is not hit by a second one, which would end it at once.
    fn stop_leader(&mut self) -> Result<Shutdown, Error> {
        let io = |source| Error::Io {
            doing: "waiting for the server",
            source,
        };
        if let Some(status) = self.child.try_wait().map_err(io)? {
            self.stdin = None;
            sweep_group(self.pgid, self.kill_after)?;
            return Ok(Shutdown {
                status,
                stage: Stage::AlreadyExited,
            });
        }
        self.stdin = None;
        if let Some(status) = wait_for(&mut self.child, self.grace).map_err(io)? {
            sweep_group(self.pgid, self.kill_after)?;
            return Ok(Shutdown {
                status,
                stage: Stage::ClosedStdin,
            });
        }
        signal_group(self.pgid, Signal::TERM)?;
        let deadline = Instant::now() + self.kill_after;
        if let Some(status) = wait_for(&mut self.child, self.kill_after).map_err(io)? {
            // The rest of the group got the same SIGTERM: it has what is left of the wait.
            if !wait_group(
                self.pgid,
                deadline.saturating_duration_since(Instant::now()),
            ) {
                signal_group(self.pgid, Signal::KILL)?;
                wait_group(self.pgid, self.grace);
            }
            return Ok(Shutdown {
                status,
                stage: Stage::Terminated,
            });
        }
        signal_group(self.pgid, Signal::KILL)?;
        let status = self.child.wait().map_err(io)?;
        // Killed processes are reaped by their new parent; wait a bounded time for that.
        wait_group(self.pgid, self.grace);
        Ok(Shutdown {
            status,
            stage: Stage::Killed,
        })
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // The safety net: errors cannot be reported from here, and the order still runs.
        let _ = self.shutdown();
    }
}

/// Stops the process group `id` from outside its owner: SIGTERM, a wait of up to `grace` for
/// the group to empty, then SIGKILL.
///
/// This is for a signal handler of the caller (the user pressed Ctrl-C while servers run):
/// the [`ServerProcess`] values are owned elsewhere and cannot run their own order. Closing
/// stdin, the first step, happens anyway when the caller exits.
///
/// # Errors
///
/// [`Error::Signal`] when `id` is not a valid process group id or a signal cannot be sent for
/// another reason than the group being gone.
pub fn stop_group(id: u32, grace: Duration) -> Result<(), Error> {
    let pgid = i32::try_from(id)
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| Error::Signal {
            pgid: i32::try_from(id).unwrap_or(-1),
            source: io::ErrorKind::InvalidInput.into(),
        })?;
    sweep_group(pgid, grace)
}

/// Runs this process as the trampoline when `args` (the whole command line, program name
/// first) asks for it: becomes the server (see [`exec_server`]) and returns only the error
/// when it could not. `None` when the command line is an ordinary one, to be parsed as usual.
/// Every binary that starts servers with [`ServerCommand::die_with_parent`] calls it first.
#[must_use]
pub fn trampoline(mut args: impl Iterator<Item = OsString>) -> Option<Error> {
    if args.nth(1).is_some_and(|first| first == TRAMPOLINE_ARG) {
        Some(exec_server(args))
    } else {
        None
    }
}

/// The trampoline of [`ServerCommand::die_with_parent`]: `args` is the command line after
/// [`TRAMPOLINE_ARG`] (the parent's process id, the program, its arguments). Sets the
/// parent-death signal to SIGKILL, checks that the parent is still the process that started
/// this one (it may have died before the signal was set), and executes the program in place of
/// this process, which keeps its environment, working directory, process group and standard
/// streams.
///
/// Returns only when it could not do so; the caller then reports the error on stderr (the
/// server's) and exits with 127, as a shell does for a command it cannot run.
#[must_use]
pub fn exec_server(mut args: impl Iterator<Item = OsString>) -> Error {
    let usage = || Error::Spawn {
        program: TRAMPOLINE_ARG.to_owned(),
        source: io::ErrorKind::InvalidInput.into(),
    };
    let Some(parent) = args
        .next()
        .and_then(|pid| pid.to_str().and_then(|pid| pid.parse::<i32>().ok()))
        .and_then(Pid::from_raw)
    else {
        return usage();
    };
    let Some(program) = args.next() else {
        return usage();
    };
    let name = program.to_string_lossy().into_owned();
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Err(errno) = rustix::process::set_parent_process_death_signal(Some(Signal::KILL)) {
        return Error::Spawn {
            program: name,
            source: errno.into(),
        };
    }
    if rustix::process::getppid() != Some(parent) {
        return Error::Spawn {
            program: name,
            source: io::Error::other("the process that started it is gone"),
        };
    }
    let source = Command::new(program).args(args).exec();
    Error::Spawn {
        program: name,
        source,
    }
}

/// Polls `child` until it exits or `grace` passes.
fn wait_for(child: &mut Child, grace: Duration) -> io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + grace;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        thread::sleep(POLL);
    }
}

/// Sends `signal` to the group; a group that is already gone is not an error.
fn signal_group(pgid: Pid, signal: Signal) -> Result<(), Error> {
    match kill_process_group(pgid, signal) {
        Ok(()) | Err(rustix::io::Errno::SRCH) => Ok(()),
        Err(errno) => Err(Error::Signal {
            pgid: pgid.as_raw_nonzero().get(),
            source: errno.into(),
        }),
    }
}

/// Whether any process is left in the group.
fn group_alive(pgid: Pid) -> bool {
    test_kill_process_group(pgid).is_ok()
}

/// Polls until the group is empty or `grace` passes; returns whether it is empty.
fn wait_group(pgid: Pid, grace: Duration) -> bool {
    let deadline = Instant::now() + grace;
    loop {
        if !group_alive(pgid) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(POLL);
    }
}

/// Stops what is left of the group after its leader is gone: SIGTERM, a wait of `grace` for
/// the group to empty, SIGKILL, a wait.
///
/// The leader has been reaped, but its pid stays allocated while any process of the group
/// holds it as its group id, so the signals cannot reach an unrelated process.
fn sweep_group(pgid: Pid, grace: Duration) -> Result<(), Error> {
    if !group_alive(pgid) {
        return Ok(());
    }
    signal_group(pgid, Signal::TERM)?;
    if wait_group(pgid, grace) {
        return Ok(());
    }
    signal_group(pgid, Signal::KILL)?;
    // Killed processes are reaped by their new parent; wait a bounded time for that.
    wait_group(pgid, grace);
    Ok(())
}

/// What a server wrote to stderr: the last bytes, up to the configured bound.
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct CapturedStderr {
    /// The kept bytes, as written (possibly starting mid-line when older bytes were dropped).
    pub bytes: Vec<u8>,
    /// How many earlier bytes were dropped to respect the bound.
    pub dropped: u64,
}

impl CapturedStderr {
    /// The captured lines, each escaped for a terminal with [`mcppin_core::escape`] (invalid
    /// UTF-8 becomes U+FFFD first).
    ///
    /// # Examples
    ///
    /// ```
    /// use mcppin_client::CapturedStderr;
    ///
    /// let captured = CapturedStderr { bytes: b"ok\n\x1b[31mred\n".to_vec(), dropped: 0 };
    /// assert_eq!(captured.escaped_lines(), ["ok", "<U+001B>[31mred"]);
    /// ```
    #[must_use]
    pub fn escaped_lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.bytes)
            .lines()
            .map(|line| mcppin_core::escape(line).into_owned())
            .collect()
    }

    /// Whether nothing was captured.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty() && self.dropped == 0
    }
}

/// A thread that drains a server's stderr into a bounded buffer.
#[derive(Debug)]
struct StderrCapture {
    shared: Arc<Mutex<CapturedStderr>>,
    done: Option<Receiver<()>>,
}

impl StderrCapture {
    fn start(mut pipe: impl Read + Send + 'static, limit: usize) -> Self {
        let shared = Arc::new(Mutex::new(CapturedStderr::default()));
        let (tx, rx) = mpsc::channel();
        let sink = Arc::clone(&shared);
        thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        let mut captured = sink.lock().unwrap_or_else(PoisonError::into_inner);
                        captured.bytes.extend_from_slice(&chunk[..n]);
                        if captured.bytes.len() > limit {
                            let excess = captured.bytes.len() - limit;
                            captured.bytes.drain(..excess);
                            captured.dropped += excess as u64;
                        }
                    }
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send(());
        });
        Self {
            shared,
            done: Some(rx),
        }
    }

    fn snapshot(&self) -> CapturedStderr {
        self.shared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits (bounded) for the reader to reach the end of the pipe, so the last words of a
    /// dying server are kept.
    fn finish(&mut self, grace: Duration) {
        if let Some(done) = self.done.take() {
            let _ = done.recv_timeout(grace);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use super::*;

    fn sh(script: &str) -> ServerCommand {
        ServerCommand::new("/bin/sh")
            .arg("-c")
            .arg(script)
            .env("PATH", "/usr/bin:/bin")
            .grace(Duration::from_millis(300))
    }

    fn alive(pid: i32) -> bool {
        // A zombie has exited; only a live process counts.
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => !stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
            Err(_) => false,
        }
    }

    #[test]
    fn minimal_environment_keeps_only_the_listed_variables() {
        let parent = [
            ("HOME", "/home/u"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("LANG", "C"),
            ("TMPDIR", "/tmp"),
        ];
        let env = inherited_environment(parent, Inherit::Minimal);
        let names: Vec<_> = env
            .keys()
            .map(|k| k.to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["HOME", "LANG", "TMPDIR"]);
        assert_eq!(inherited_environment(parent, Inherit::All).len(), 4);
        assert_eq!(
            withheld_variables(parent, Inherit::Minimal),
            [OsString::from("AWS_SECRET_ACCESS_KEY")]
        );
    }

    #[test]
    fn minimal_environment_keeps_every_proxy_and_ca_variable() {
        // `uvx` behind a TLS-inspecting proxy failed with no hint.
        let parent: Vec<(&str, &str)> = NETWORK_VARIABLES.iter().map(|n| (*n, "v")).collect();
        let env = inherited_environment(parent.clone(), Inherit::Minimal);
        assert_eq!(env.len(), NETWORK_VARIABLES.len());
        assert!(withheld_variables(parent, Inherit::Minimal).is_empty());
        // Names are matched exactly: a look-alike is withheld.
        let near = [("HTTPS_PROXY_TOKEN", "x"), ("Https_Proxy", "y")];
        assert!(inherited_environment(near, Inherit::Minimal).is_empty());
        assert_eq!(withheld_variables(near, Inherit::Minimal).len(), 2);
    }

    #[test]
    fn the_child_sees_only_the_given_environment() {
        let mut server = sh("env > /dev/stderr").env("ONLY", "this").spawn().unwrap();
        server.shutdown().unwrap();
        let text = String::from_utf8(server.stderr().unwrap().bytes).unwrap();
        let mut names: Vec<_> = text
            .lines()
            .filter_map(|l| l.split_once('=').map(|(k, _)| k))
            .filter(|k| *k != "PWD" && *k != "SHLVL" && *k != "_")
            .collect();
        names.sort_unstable();
        assert_eq!(names, ["ONLY", "PATH"]);
    }

    #[test]
    fn runs_in_its_own_process_group() {
        let mut server = sh("cat >/dev/null").spawn().unwrap();
        let pid = Pid::from_raw(i32::try_from(server.id()).unwrap()).unwrap();
        assert_eq!(rustix::process::getpgid(Some(pid)).unwrap(), pid);
        assert_ne!(rustix::process::getpgid(None).unwrap(), pid);
        assert_eq!(server.shutdown().unwrap().stage, Stage::ClosedStdin);
    }

    #[test]
    fn a_server_that_exits_on_eof_stops_at_the_first_step() {
        let mut server = ServerCommand::new("/bin/cat").spawn().unwrap();
        let done = server.shutdown().unwrap();
        assert_eq!(done.stage, Stage::ClosedStdin);
        assert!(done.status.success());
    }

    #[test]
    fn a_server_that_ignores_eof_gets_sigterm() {
        let mut server = sh("exec sleep 30").spawn().unwrap();
        let done = server.shutdown().unwrap();
        assert_eq!(done.stage, Stage::Terminated);
        assert_eq!(done.status.signal(), Some(Signal::TERM.as_raw()));
    }

    #[test]
    fn a_server_that_ignores_sigterm_gets_sigkill() {
        let dir = tempfile::tempdir().unwrap();
        let ready = dir.path().join("ready");
        let script = format!(
            "trap '' TERM; : > {}; while :; do sleep 0.05; done",
            ready.display()
        );
        let mut server = sh(&script).spawn().unwrap();
        // The order starts once the shell has installed its trap.
        while !ready.exists() {
            thread::sleep(POLL);
        }
        let done = server.shutdown().unwrap();
        assert_eq!(done.stage, Stage::Killed);
        assert_eq!(done.status.signal(), Some(Signal::KILL.as_raw()));
    }

    #[test]
    fn a_crashed_server_is_reported_as_already_exited() {
        let mut server = sh("exit 7").spawn().unwrap();
        while !server.has_exited().unwrap() {
            thread::sleep(POLL);
        }
        let done = server.shutdown().unwrap();
        assert_eq!(done.stage, Stage::AlreadyExited);
        assert_eq!(done.status.code(), Some(7));
    }

    #[test]
    fn members_left_in_the_group_are_stopped_too() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild");
        // The leader starts a grandchild that ignores SIGTERM, records its pid and exits on EOF.
        let script = format!(
            "sh -c 'trap \"\" TERM; while :; do sleep 0.05; done' & echo $! > {}; cat >/dev/null",
            pidfile.display()
        );
        let mut server = sh(&script).spawn().unwrap();
        let grandchild = loop {
            if let Ok(text) = std::fs::read_to_string(&pidfile)
                && let Ok(pid) = text.trim().parse::<i32>()
            {
                break pid;
            }
            thread::sleep(POLL);
        };
        assert!(alive(grandchild));
        assert_eq!(server.shutdown().unwrap().stage, Stage::ClosedStdin);
        assert!(!alive(grandchild), "grandchild {grandchild} survived");
    }

    /// Starts `sh` as a leader that ignores EOF, with a grandchild that on SIGTERM writes
    /// `term`, takes `cleanup` to finish (a package manager rolling back an install), writes
    /// `clean` and exits; returns the server, the grandchild's pid and the log.
    fn leader_with_a_cleaning_grandchild(
        dir: &Path,
        cleanup: &str,
        kill_after: Duration,
    ) -> (ServerProcess, i32, PathBuf) {
        let pidfile = dir.join("grandchild");
        let log = dir.join("log");
        let script = format!(
            "sh -c 'trap \"echo term >> {log}; sleep {cleanup}; echo clean >> {log}; exit 0\" \
             TERM; echo $$ > {pid}; while :; do sleep 0.05; done' & exec sleep 30",
            log = log.display(),
            pid = pidfile.display(),
        );
        let server = sh(&script).kill_after(kill_after).spawn().unwrap();
        let grandchild = loop {
            if let Ok(text) = std::fs::read_to_string(&pidfile)
                && let Ok(pid) = text.trim().parse::<i32>()
            {
                break pid;
            }
            thread::sleep(POLL);
        };
        (server, grandchild, log)
    }

    #[test]
    fn sigterm_reaches_the_group_first_and_kill_after_lets_it_finish() {
        // An install stopped mid-write must get to roll back before SIGKILL.
        let dir = tempfile::tempdir().unwrap();
        let (mut server, grandchild, log) =
            leader_with_a_cleaning_grandchild(dir.path(), "0.5", Duration::from_secs(5));
        let done = server.shutdown().unwrap();
        assert_eq!(done.stage, Stage::Terminated);
        assert!(!alive(grandchild), "grandchild {grandchild} survived");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "term\nclean\n");
    }

    #[test]
    fn sigkill_follows_once_kill_after_has_passed() {
        let dir = tempfile::tempdir().unwrap();
        let (mut server, grandchild, log) =
            leader_with_a_cleaning_grandchild(dir.path(), "30", Duration::from_millis(300));
        let started = Instant::now();
        server.shutdown().unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(!alive(grandchild), "grandchild {grandchild} survived");
        // SIGTERM came first (the trap ran), SIGKILL cut the cleanup short.
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "term\n");
    }

    #[test]
    fn dropping_a_server_stops_its_group() {
        let server = sh("exec sleep 30").spawn().unwrap();
        let pid = i32::try_from(server.id()).unwrap();
        assert!(alive(pid));
        drop(server);
        assert!(!alive(pid));
    }

    #[test]
    fn a_panic_does_not_leave_the_server_running() {
        let mut pid = 0;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let server = sh("exec sleep 30").spawn().unwrap();
            pid = i32::try_from(server.id()).unwrap();
            panic!("the caller fails while the server runs");
        }));
        assert!(result.is_err());
        assert!(pid > 0 && !alive(pid));
    }

    #[test]
    fn stderr_is_captured_up_to_its_bound() {
        let mut server = sh("printf 'first\\n'; printf '0123456789\\nlast\\n' >&2")
            .stderr(StderrMode::Capture { limit: 8 })
            .spawn()
            .unwrap();
        server.shutdown().unwrap();
        let captured = server.stderr().unwrap();
        assert_eq!(captured.bytes, b"89\nlast\n");
        assert_eq!(captured.dropped, 8);
    }

    #[test]
    fn a_piped_stderr_is_left_to_the_caller() {
        let mut server = sh("printf 'one\\ntwo\\n' >&2")
            .stderr(StderrMode::Pipe)
            .spawn()
            .unwrap();
        let pipe = server.take_stderr().unwrap();
        assert!(server.take_stderr().is_none());
        assert_eq!(server.stderr(), None);
        let mut lines = crate::LogLines::new(pipe, 64);
        assert_eq!(lines.next_line().unwrap().unwrap().bytes, b"one");
        assert_eq!(lines.next_line().unwrap().unwrap().bytes, b"two");
        assert_eq!(lines.next_line().unwrap(), None);
        server.shutdown().unwrap();
        // Captured stderr is not a pipe to take.
        let mut captured = sh("true").spawn().unwrap();
        assert!(captured.take_stderr().is_none());
    }

    #[test]
    fn stop_group_stops_a_group_from_outside() {
        let server = sh("trap '' TERM; while :; do sleep 0.05; done")
            .spawn()
            .unwrap();
        let pid = i32::try_from(server.id()).unwrap();
        thread::sleep(Duration::from_millis(200));
        stop_group(server.id(), Duration::from_millis(200)).unwrap();
        assert!(!alive(pid));
        assert!(stop_group(0, Duration::ZERO).is_err());
        // The owner's own shutdown still completes on a group that is already gone.
        let mut server = server;
        assert_eq!(server.shutdown().unwrap().stage, Stage::AlreadyExited);
    }

    #[test]
    fn a_missing_program_is_a_spawn_error_through_the_trampoline_too() {
        for program in ["/nonexistent/server", "no-such-server-on-path"] {
            let err = ServerCommand::new(program)
                .env("PATH", "/usr/bin:/bin")
                .die_with_parent("/bin/true")
                .spawn()
                .unwrap_err();
            assert!(
                matches!(err, Error::Spawn { program: ref p, ref source }
                    if p == program && source.kind() == io::ErrorKind::NotFound),
                "{err}"
            );
        }
        // Found on the server's PATH: the trampoline is started (here one that just exits).
        let mut server = ServerCommand::new("sh")
            .env("PATH", "/usr/bin:/bin")
            .die_with_parent("/bin/true")
            .spawn()
            .unwrap();
        assert!(server.shutdown().unwrap().status.success());
    }

    #[test]
    fn the_trampoline_refuses_a_command_line_it_was_not_given() {
        for args in [&[][..], &["not-a-pid", "sh"][..], &["1"][..]] {
            let err = exec_server(args.iter().map(OsString::from));
            assert!(matches!(err, Error::Spawn { ref program, .. } if program == TRAMPOLINE_ARG));
        }
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let err = ServerCommand::new("/nonexistent/server")
            .spawn()
            .unwrap_err();
        assert!(
            matches!(err, Error::Spawn { ref program, .. } if program == "/nonexistent/server")
        );
    }
}

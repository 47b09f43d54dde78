//! `mcppin-guard`: the checkpoint on the wire (docs/guard.md).
//!
//! Goes into a client configuration where a stdio server command was, starts the server
//! behind it, forwards every message both ways byte for byte, and checks every answer that
//! carries text for the model against the lockfile before the client sees it.

use std::ffi::OsString;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::Context;
use clap::{ArgGroup, Parser, ValueEnum};
use mcppin_cli::approval;
use mcppin_client::DEFAULT_MAX_LINE;
use mcppin_core::engine;
use mcppin_core::engine::ApprovedServer;

mod exit;
mod extmcp;
mod feed;
mod hint;
mod hook;
mod http;
mod log;
mod proxy;
mod pump;
mod state;
mod stderr;

use exit::{Exit, Fail};

const EXIT_CODES: &str = "\
Exit codes (a public contract):
  0  the session ended cleanly (the client closed its input)
  1  drift was refused (refuse mode): the server was stopped; or the server's artifact is not
     the one the lock pins (either mode): the server was never started, or was stopped
     before anything it wrote was forwarded
  2  the command line is wrong (including a --log file that cannot be opened or written)
  3  the server died or misbehaved (non-JSON line, unsolicited or duplicate response id, a
     message over --max-message, an answer that breaks strict reading)
  4  the lockfile or its signature could not be read, it has no entry for --server, or the
     --log-key cannot be read (the server was never started)
With --listen (an HTTP proxy serving many sessions), drift and misbehaving servers end their
session, not the guard: it runs until SIGINT, SIGTERM or SIGHUP and then exits 0; it exits 2
when it cannot listen or --upstream is not a URL, 4 as above. With --extmcp-listen (a
gateway's guardrail processor) the same: drift denies and stops a session, the guard runs on.

`mcppin-guard hook --lock FILE [--state DIR]` is the pre-call check for Claude Code's
PreToolUse hooks: see `mcppin-guard hook --help` (it exits 0 or 2 only).";

/// A guard that refuses MCP tool-surface drift on the wire, mid-session: in front of a stdio
/// server, of a remote one with --listen, or inside an MCP gateway with --extmcp-listen.
#[derive(Debug, Parser)]
#[command(name = "mcppin-guard", version, about, after_help = EXIT_CODES)]
#[command(group(ArgGroup::new("listener").args(["listen", "extmcp_listen"])))]
struct Cli {
    /// The lockfile holding the approved surface (or MCPPIN_LOCK).
    #[arg(long, value_name = "FILE")]
    lock: Option<PathBuf>,
    /// The server's id in the lockfile (the key of its entry in the client configuration; or
    /// MCPPIN_SERVER).
    #[arg(long, value_name = "ID")]
    server: Option<String>,
    /// The authorization context the server runs under (a label, or MCPPIN_AUTH_CONTEXT): the
    /// guard enforces the lockfile's entry of this server under this context and refuses to
    /// start (exit 4) when the lockfile approves the server under other contexts only.
    /// Without it: the default context.
    #[arg(long, value_name = "LABEL")]
    auth_context: Option<String>,
    /// Require a valid signature (`<lock>.sig`) by one of these public keys (SPKI PEM; or
    /// MCPPIN_PUBKEY, paths separated by `:`).
    #[arg(long, value_name = "FILE")]
    pubkey: Vec<PathBuf>,
    /// Refuse (exit 4) a lockfile whose approval_serial is lower: an older approval put back.
    #[arg(long, value_name = "N")]
    min_serial: Option<u64>,
    /// Refuse (exit 4) a signature older than this (720h, 30d, 2weeks); needs --pubkey.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    max_signature_age: Option<Duration>,
    /// What to do with drift: stop the session (refuse, the default), or filter drifted items
    /// and go on (or MCPPIN_MODE).
    #[arg(long, value_enum)]
    mode: Option<Mode>,
    /// Append one JSON line per admission decision to this file: a hash chain per run of the
    /// guard, checked by `mcppin log verify`.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Sign the log's last line of the run (guard_stop) with this private key (PKCS#8 PEM from
    /// `mcppin key`, unencrypted): `mcppin log verify --pubkey` then proves the run's end.
    #[arg(long, value_name = "FILE", requires = "log")]
    log_key: Option<PathBuf>,
    /// Keep the state a pre-call hook checks (`mcppin-guard hook --state DIR`) in this
    /// directory: which tools the current reading of the list admitted, in `DIR/<server>.json`.
    #[arg(long, value_name = "DIR")]
    state: Option<PathBuf>,
    /// The longest message accepted from the server, in bytes; a longer one fails closed.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE)]
    max_message: usize,
    /// Fix the clock of the admission log (RFC 3339), for tests.
    #[arg(long, hide = true, value_name = "RFC3339")]
    now: Option<String>,
    /// Serve MCP over Streamable HTTP on this address (HOST:PORT) in front of --upstream,
    /// instead of starting a stdio server (no COMMAND then).
    #[arg(
        long,
        value_name = "ADDR",
        requires = "upstream",
        conflicts_with = "command"
    )]
    listen: Option<SocketAddr>,
    /// The MCP endpoint of the remote server (http:// or https://); the guard serves the same
    /// path.
    #[arg(long, value_name = "URL", requires = "listen")]
    upstream: Option<String>,
    /// Trust the certificates of this PEM file for an https:// upstream, besides the system's
    /// trust roots (a private CA or a self-signed server).
    #[arg(long, value_name = "FILE", requires = "listen")]
    upstream_ca: Vec<PathBuf>,
    /// How long the upstream may take to connect, to answer a request, to send a JSON body;
    /// also how long a client may take to send its headers and body (with --extmcp-listen:
    /// how long the gateway may take to send one check's message, and how long a connection
    /// without a check in flight is kept).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration)]
    upstream_timeout: Duration,
    /// The most sessions open at once; a new one beyond is refused with 503 (with
    /// --extmcp-listen: denied).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10_000,
        requires = "listener"
    )]
    max_sessions: usize,
    /// End a session after this long without a request or an open stream (1h, 30m).
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = humantime::parse_duration)]
    session_idle: Duration,
    /// The most client connections served at once; more wait to be accepted.
    #[arg(long, value_name = "N", default_value_t = 1024, requires = "listener")]
    max_connections: usize,
    /// Tag the session ids handed to clients `TAG.<the server's id>` (1 to 32 of A-Z a-z 0-9 _
    /// -), so a load balancer can send each session to its replica; an id without this tag
    /// gets 404.
    #[arg(long, value_name = "TAG", requires = "listen")]
    replica: Option<String>,
    /// Serve agentgateway's ExtMcp guardrail protocol (gRPC over cleartext HTTP/2) on this
    /// address (HOST:PORT): the gateway asks the guard about each request and answer of the
    /// targets --target maps (docs/gateway.md). No COMMAND, no --server then.
    #[arg(
        long,
        value_name = "ADDR",
        conflicts_with_all = ["command", "listen", "server", "state"]
    )]
    extmcp_listen: Option<SocketAddr>,
    /// With --extmcp-listen: the gateway's target NAME is held to the lockfile's entry ID
    /// (NAME alone: the entry of the same name). Give every target of the gateway's backend;
    /// a request to a target not given is denied.
    #[arg(long, value_name = "NAME=ID", value_parser = target_arg)]
    target: Vec<(String, String)>,
    /// With --extmcp-listen: the gateway's `mcp.prefixMode` (default conditional, the
    /// gateway's), which decides how it renames the targets' items; a guard given another one
    /// denies what the gateway shows.
    #[arg(long, value_enum, value_name = "MODE")]
    prefix_mode: Option<PrefixArg>,
    /// With --extmcp-listen: how the gateway writes each item out again, the members it
    /// keeps (default rmcp-3.1: agentgateway built on rmcp 3.x); an item holding any other
    /// member is refused, never passed.
    #[arg(long, value_name = "NAME")]
    projection: Option<String>,
    /// The server command and its arguments (after `--`, or first on the command line).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// The gateway's `mcp.prefixMode`.
#[derive(Clone, Copy, Debug, Eq, PartialEq, ValueEnum)]
enum PrefixArg {
    /// Prefix names only when the gateway has more than one target (its default).
    Conditional,
    /// Prefix names and URIs even of a single target.
    Always,
    /// Never prefix names (URIs of several targets are prefixed all the same).
    Never,
}

impl From<PrefixArg> for mcppin_core::projection::PrefixMode {
    fn from(mode: PrefixArg) -> Self {
        match mode {
            PrefixArg::Conditional => Self::Conditional,
            PrefixArg::Always => Self::Always,
            PrefixArg::Never => Self::Never,
        }
    }
}

/// `--target NAME=ID`, or `NAME` for the entry of the same name.
fn target_arg(text: &str) -> Result<(String, String), String> {
    let (name, id) = text.split_once('=').unwrap_or((text, text));
    if name.is_empty() || id.is_empty() {
        return Err("expected NAME=ID, both non-empty".to_owned());
    }
    Ok((name.to_owned(), id.to_owned()))
}

/// What happens when an answer drifts.
#[derive(Clone, Copy, Debug, Eq, PartialEq, ValueEnum)]
enum Mode {
    /// Answer the drifted request with an error, stop the server, exit 1.
    Refuse,
    /// Filter drifted items out, refuse calls to them, keep the session going.
    Quarantine,
}

impl Mode {
    /// The engine's configuration in this mode: the guard's refusals name it, and events are
    /// made when there is a log to write them to.
    fn engine(self, events: bool) -> engine::Config {
        let mut config = engine::Config::default();
        config.mode = match self {
            Self::Refuse => engine::Mode::Refuse,
            Self::Quarantine => engine::Mode::Quarantine,
        };
        config.events = events;
        config.refuser = "mcppin-guard";
        config
    }
}

fn main() -> ExitCode {
    if let Some(err) = mcppin_client::trampoline(std::env::args_os()) {
        // Started by itself to become the server (docs/guard.md, "Shutdown"), and the server
        // could not be executed. Stderr is the server's: the guard shows it.
        let _ = writeln!(
            std::io::stderr().lock(),
            "mcppin-guard: {}",
            mcppin_core::escape(&err.to_string())
        );
        return ExitCode::from(127);
    }
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|first| first == "hook") {
        return hook::main(&args[2..]);
    }
    let cli = match Cli::try_parse_from(with_separator(args.into_iter())) {
        Ok(cli) => cli,
        Err(err) => return hint::usage_error(&err),
    };
    let outcome = settings(cli).and_then(|(cli, settings)| run(cli, settings));
    if proxy::signalled() {
        proxy::wait_for_signal_exit();
    }
    match outcome {
        Ok(exit) => ExitCode::from(exit as u8),
        Err(err) => {
            let exit: Exit = mcppin_cli::exit::code_of(&err);
            let _ = writeln!(
                std::io::stderr().lock(),
                "mcppin-guard: {}",
                mcppin_core::escape_non_ascii(&format!("{err:#}"))
            );
            ExitCode::from(exit as u8)
        }
    }
}

/// The command line with `--` before a server command that comes first: every flag of the
/// guard starts with `-`, so a first word that does not is the server command. Some clients
/// (the MCP Inspector's CLI) drop the `--` of a configured command; with the settings in the
/// environment the command line is then the server command alone.
fn with_separator(args: impl Iterator<Item = OsString>) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.collect();
    if args
        .get(1)
        .is_some_and(|first| !first.to_string_lossy().starts_with('-'))
    {
        args.insert(1, OsString::from("--"));
    }
    args
}

/// The settings that come from the command line or the environment (docs/guard.md,
/// "Settings from the environment").
struct Settings {
    lock: PathBuf,
    /// Where the lock's path came from, `--lock` or `MCPPIN_LOCK`, for the messages about it.
    lock_from: &'static str,
    /// Where the public keys' paths came from, `--pubkey` or `MCPPIN_PUBKEY`.
    pubkey_from: &'static str,
    server: String,
    /// Where the server id came from, `--server` or `MCPPIN_SERVER`.
    server_from: &'static str,
    /// The authorization context, `None` for the default.
    auth_context: Option<mcppin_core::surface::AuthContext>,
    /// Where it came from, `--auth-context` or `MCPPIN_AUTH_CONTEXT`.
    auth_context_from: &'static str,
    mode: Mode,
}

/// Takes `--lock`, `--server`, `--mode` and `--pubkey` from the command line or from
/// MCPPIN_LOCK, MCPPIN_SERVER, MCPPIN_MODE and MCPPIN_PUBKEY. A setting given both ways is a
/// usage error: the two could disagree, and neither is more the user's than the other.
fn settings(mut cli: Cli) -> anyhow::Result<(Cli, Settings)> {
    let usage = |message: String| Fail::new(Exit::Usage, message);
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let both = |flag: &str, name: &str| {
        usage(format!(
            "{flag} and {name} are both given: set it once, on the command line or in the \
             environment"
        ))
    };
    let (lock, lock_from) = match (cli.lock.take(), env("MCPPIN_LOCK")) {
        (Some(_), Some(_)) => return Err(both("--lock", "MCPPIN_LOCK").into()),
        (Some(lock), None) => (lock, "--lock"),
        (None, Some(lock)) => (PathBuf::from(lock), "MCPPIN_LOCK"),
        (None, None) => {
            return Err(usage(
                "the following required argument was not provided: --lock <FILE> (or \
                 MCPPIN_LOCK in the environment)"
                    .to_owned(),
            )
            .into());
        }
    };
    let (server, server_from) = match (cli.server.take(), env("MCPPIN_SERVER")) {
        (Some(_), Some(_)) => return Err(both("--server", "MCPPIN_SERVER").into()),
        (Some(server), None) => (server, "--server"),
        (None, Some(server)) => (
            server.into_string().map_err(|v| {
                usage(format!(
                    "MCPPIN_SERVER {} is not UTF-8",
                    mcppin_core::escape(&v.to_string_lossy())
                ))
            })?,
            "MCPPIN_SERVER",
        ),
        // The processor's entries are named by --target.
        (None, None) if cli.extmcp_listen.is_some() => {
            if cli.target.is_empty() {
                return Err(usage(
                    "--extmcp-listen needs --target NAME=ID for each target of the gateway"
                        .to_owned(),
                )
                .into());
            }
            let ids: Vec<&str> = cli.target.iter().map(|(_, id)| id.as_str()).collect();
            (ids.join(","), "--target")
        }
        (None, None) => {
            return Err(usage(
                "the following required argument was not provided: --server <ID> (or \
                 MCPPIN_SERVER in the environment)"
                    .to_owned(),
            )
            .into());
        }
    };
    if cli.extmcp_listen.is_some() && server_from != "--target" {
        return Err(usage(format!(
            "{server_from} does not go with --extmcp-listen: name each target's entry with \
             --target NAME=ID"
        ))
        .into());
    }
    let mode = match (cli.mode.take(), env("MCPPIN_MODE")) {
        (Some(_), Some(_)) => return Err(both("--mode", "MCPPIN_MODE").into()),
        (Some(mode), None) => mode,
        (None, Some(text)) => {
            let text = text.to_string_lossy();
            Mode::from_str(&text, false).map_err(|_| {
                usage(format!(
                    "MCPPIN_MODE {}: expected refuse or quarantine",
                    mcppin_core::Excerpt::quoted(&text)
                ))
            })?
        }
        (None, None) => Mode::Refuse,
    };
    let (auth_context, auth_context_from) =
        match (cli.auth_context.take(), env("MCPPIN_AUTH_CONTEXT")) {
            (Some(_), Some(_)) => return Err(both("--auth-context", "MCPPIN_AUTH_CONTEXT").into()),
            (Some(label), None) => (Some(label), "--auth-context"),
            (None, Some(label)) => (
                Some(label.to_string_lossy().into_owned()),
                "MCPPIN_AUTH_CONTEXT",
            ),
            (None, None) => (None, "--auth-context"),
        };
    let auth_context = auth_context
        .map(|label| {
            label
                .parse::<mcppin_core::surface::AuthContext>()
                .map_err(|e| {
                    usage(format!(
                        "{auth_context_from} {}: {e}",
                        mcppin_core::Excerpt::quoted(&label)
                    ))
                })
        })
        .transpose()?;
    let mut pubkey_from = "--pubkey";
    if let Some(keys) = env("MCPPIN_PUBKEY") {
        if !cli.pubkey.is_empty() {
            return Err(both("--pubkey", "MCPPIN_PUBKEY").into());
        }
        cli.pubkey = std::env::split_paths(&keys).collect();
        pubkey_from = "MCPPIN_PUBKEY";
    }
    if cli.command.is_empty() && cli.listen.is_none() && cli.extmcp_listen.is_none() {
        return Err(usage(hint::NO_COMMAND.to_owned()).into());
    }
    if cli.max_signature_age.is_some() && cli.pubkey.is_empty() {
        return Err(
            usage("--max-signature-age needs --pubkey (or MCPPIN_PUBKEY)".to_owned()).into(),
        );
    }
    Ok((
        cli,
        Settings {
            lock,
            lock_from,
            pubkey_from,
            server,
            server_from,
            auth_context,
            auth_context_from,
            mode,
        },
    ))
}

fn run(cli: Cli, settings: Settings) -> anyhow::Result<Exit> {
    if cli.extmcp_listen.is_none()
        && (!cli.target.is_empty() || cli.prefix_mode.is_some() || cli.projection.is_some())
    {
        return Err(Fail::new(
            Exit::Usage,
            "--target, --prefix-mode and --projection go with --extmcp-listen (the gateway's \
             guardrail processor)",
        )
        .into());
    }
    if matches!(cli.prefix_mode, Some(PrefixArg::Never)) && cli.target.len() > 1 {
        // The gateway then shows the names of several targets without their prefix: which
        // target an item of a merged list came from cannot be told.
        return Err(Fail::new(
            Exit::Usage,
            "--prefix-mode never does not go with several --target: the gateway shows the \
             targets' names without the prefix that tells them apart",
        )
        .into());
    }
    if cli.listen.is_none() && (cli.upstream.is_some() || !cli.upstream_ca.is_empty()) {
        return Err(Fail::new(
            Exit::Usage,
            "--upstream and --upstream-ca go with --listen (the HTTP guard); a stdio server \
             command goes after --",
        )
        .into());
    }
    let replica = cli
        .replica
        .as_deref()
        .map(|tag| {
            tag.parse::<http::Replica>().map_err(|e| {
                Fail::new(
                    Exit::Usage,
                    format!("--replica {}: {e}", mcppin_core::Excerpt::quoted(tag)),
                )
            })
        })
        .transpose()?;
    let clock = match &cli.now {
        Some(text) => {
            let fixed = humantime::parse_rfc3339(text)
                .map_err(|e| Fail::new(Exit::Usage, format!("--now {text}: {e}")))?;
            log::Clock::Fixed(fixed)
        }
        None => log::Clock::system(),
    };
    let max_age = match cli.max_signature_age {
        None => None,
        Some(max_age) => Some((
            max_age,
            mcppin_sign::Timestamp::try_from(clock.now())
                .map_err(|e| Fail::new(Exit::Unreadable, format!("the clock: {e}")))?,
        )),
    };
    let files = approval::Files {
        lock: &settings.lock,
        pubkeys: &cli.pubkey,
        min_serial: cli.min_serial,
        max_age,
    };
    let ids: Vec<&str> = if cli.extmcp_listen.is_some() {
        cli.target.iter().map(|(_, id)| id.as_str()).collect()
    } else {
        vec![settings.server.as_str()]
    };
    let loaded = load(&files, &settings, &ids)?;
    let log_key = cli.log_key.as_deref().map(read_log_key).transpose()?;
    let started = clock.now();
    let session_id = session_id(started);
    // The state first: a directory it cannot be written to leaves no run begun in the log.
    let state = match &cli.state {
        Some(dir) => {
            let transport = if cli.listen.is_some() {
                "http"
            } else {
                "stdio"
            };
            let writer = state::StateWriter::new(
                dir,
                transport,
                &settings.server,
                &session_id,
                loaded.lock_digest,
            );
            writer
                .write(&humantime::format_rfc3339_millis(clock.now()).to_string())
                .map_err(|e| {
                    Fail::new(
                        Exit::Usage,
                        format!("cannot write the state in {}: {e:#}", dir.display()),
                    )
                })?;
            Some(writer)
        }
        None => None,
    };
    let log = match &cli.log {
        Some(path) => {
            let cannot = |e: std::io::Error| {
                Fail::new(
                    Exit::Usage,
                    format!("cannot open the log {}: {e}", path.display()),
                )
            };
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(cannot)?;
            let opening = log::Opening {
                transport: if cli.extmcp_listen.is_some() {
                    "extmcp"
                } else if cli.listen.is_some() {
                    "http"
                } else {
                    "stdio"
                },
                mode: match settings.mode {
                    Mode::Refuse => "refuse",
                    Mode::Quarantine => "quarantine",
                },
                lock_digest: loaded.lock_digest,
                approval_serial: loaded.approval_serial,
                lock_key: loaded.lock_key,
            };
            log::Log::start(
                file,
                log_key,
                &opening,
                clock,
                session_id.clone(),
                settings.server.clone(),
            )
            .map_err(cannot)?
        }
        None => log::Log::none(clock, session_id.clone(), settings.server.clone()),
    };
    let log = match state {
        Some(writer) => log.with_state(writer),
        None => log,
    };
    let outcome = serve(
        &cli,
        &settings,
        replica,
        session_id,
        loaded.servers,
        log.clone(),
    );
    // The run's last line, with the exit code the guard ends with; after a signal the handler
    // writes it (with 128 + the signal's number) as it stops the server.
    if !proxy::signalled() {
        let code = match &outcome {
            Ok(exit) => *exit as u8,
            Err(err) => mcppin_cli::exit::code_of::<Exit>(err) as u8,
        };
        if let Err(err) = log.stop(code) {
            let _ = writeln!(
                std::io::stderr().lock(),
                "mcppin-guard: cannot write the log's end: {err:#}"
            );
        }
    }
    outcome
}

/// Runs the guard over HTTP or stdio, once the approval is read and the log started.
fn serve(
    cli: &Cli,
    settings: &Settings,
    replica: Option<http::Replica>,
    session_id: String,
    servers: Vec<ApprovedServer>,
    log: log::Log,
) -> anyhow::Result<Exit> {
    if let Some(listen) = cli.extmcp_listen {
        return serve_extmcp(cli, settings, listen, session_id, &servers, log);
    }
    let approved = servers
        .into_iter()
        .next()
        .context("no lockfile entry was loaded")?;
    if let (Some(listen), Some(upstream)) = (cli.listen, &cli.upstream) {
        let config = http::Config {
            listen,
            upstream: upstream.clone(),
            upstream_ca: cli.upstream_ca.clone(),
            timeout: cli.upstream_timeout,
            engine: settings.mode.engine(log.enabled()),
            max_message: cli.max_message,
            max_sessions: cli.max_sessions,
            max_connections: cli.max_connections,
            session_idle: cli.session_idle,
            run_id: session_id,
            replica,
        };
        return http::run(config, approved, log);
    }
    let (program, args) = cli
        .command
        .split_first()
        .context("no server command after --")?;
    let config = proxy::Config {
        engine: settings.mode.engine(log.enabled()),
        max_message: cli.max_message,
        program: program.clone(),
        args: args.to_vec(),
        server: settings.server.clone(),
    };
    proxy::run(&config, approved, log)
}

/// Runs the guard as a gateway's guardrail processor: each `--target` held to its entry,
/// projected as the gateway shows it.
fn serve_extmcp(
    cli: &Cli,
    settings: &Settings,
    listen: SocketAddr,
    run_id: String,
    servers: &[ApprovedServer],
    log: log::Log,
) -> anyhow::Result<Exit> {
    let usage = |message: String| Fail::new(Exit::Usage, message);
    let name = cli.projection.as_deref().unwrap_or("rmcp-3.1");
    let projection = mcppin_core::projection::Projection::named(name).ok_or_else(|| {
        let known: Vec<&str> = mcppin_core::projection::Projection::ALL
            .iter()
            .map(|p| p.name())
            .collect();
        usage(format!(
            "--projection {}: expected one of {}",
            mcppin_core::Excerpt::quoted(name),
            known.join(", ")
        ))
    })?;
    let mode = cli
        .prefix_mode
        .map_or_else(Default::default, mcppin_core::projection::PrefixMode::from);
    let names: Vec<&str> = cli.target.iter().map(|(name, _)| name.as_str()).collect();
    if let Some(name) = names
        .iter()
        .enumerate()
        .find_map(|(i, name)| names[..i].contains(name).then_some(name))
    {
        return Err(usage(format!(
            "--target {} is given twice",
            mcppin_core::Excerpt::quoted(name)
        ))
        .into());
    }
    let mut targets = Vec::new();
    for ((name, id), approved) in cli.target.iter().zip(servers) {
        let target = extmcp::Target::new(
            name.clone(),
            id.clone(),
            approved,
            projection,
            mode,
            cli.target.len(),
        )
        .map_err(|e| {
            Fail::new(
                Exit::Unreadable,
                format!(
                    "{}: --target {}={}: {}",
                    settings.lock.display(),
                    mcppin_core::escape(&e.target),
                    mcppin_core::escape(&e.id),
                    e.error
                ),
            )
        })?;
        targets.push(target);
    }
    let mut engine = settings.mode.engine(log.enabled());
    engine.projection = Some(projection);
    let processor = extmcp::Processor::new(extmcp::ProcessorConfig {
        engine,
        targets,
        max_sessions: cli.max_sessions,
        idle: cli.session_idle,
        run: run_id.clone(),
    });
    let config = extmcp::Config {
        listen,
        max_message: cli.max_message,
        max_connections: cli.max_connections,
        read_timeout: cli.upstream_timeout,
        run_id,
    };
    extmcp::run(config, processor, log)
}

/// Reads the private key of `--log-key`: an unencrypted PKCS#8 PEM Ed25519 key. An encrypted
/// one is refused: the guard has no terminal to ask a passphrase at, and one in its
/// environment would reach the server's.
fn read_log_key(path: &Path) -> anyhow::Result<mcppin_sign::SigningKey> {
    let unreadable = |message: String| {
        Fail::new(
            Exit::Unreadable,
            format!("--log-key {}: {message}", path.display()),
        )
    };
    let pem = mcppin_cli::read_at_most(path, mcppin_cli::MAX_SMALL_FILE).map_err(|e| {
        unreadable(format!(
            "cannot read it: {e}{}",
            relative_hint("--log-key", path)
        ))
    })?;
    let pem = String::from_utf8(pem).map_err(|_| unreadable("not UTF-8 text".to_owned()))?;
    if mcppin_sign::SigningKey::is_encrypted_pem(&pem) {
        return Err(unreadable(
            "an encrypted key: the guard reads no passphrase; give it a key of its own for the \
             log, unencrypted (mcppin key -o FILE) and readable only by the guard's user"
                .to_owned(),
        )
        .into());
    }
    Ok(mcppin_sign::SigningKey::from_pem(&pem).map_err(|e| unreadable(e.to_string()))?)
}

/// The approval the guard runs under: the server's entry, and what the log's start names.
struct Loaded {
    /// The entry of each id asked for, in order.
    servers: Vec<ApprovedServer>,
    lock_digest: mcppin_core::Digest,
    approval_serial: u64,
    /// The key whose signature of the lockfile was verified, if one was.
    lock_key: Option<mcppin_core::Digest>,
}

/// Reads the lockfile, the signature beside it and the keys and checks them as an approval
/// ([`mcppin_cli::approval::read`], the reading `mcppin verify` makes, with its messages),
/// says on stderr what the signature check found, and finds the entry of each of `ids` (one
/// reading of the lockfile for all). Messages name the setting each path or id came from
/// (`--lock` or `MCPPIN_LOCK`, and so on).
fn load(files: &approval::Files<'_>, settings: &Settings, ids: &[&str]) -> anyhow::Result<Loaded> {
    let hint = |flag: &str, path: &Path| {
        let setting = match flag {
            "--lock" => settings.lock_from,
            "--pubkey" => settings.pubkey_from,
            other => other,
        };
        relative_hint(setting, path)
    };
    let read = approval::read(files, hint)?;
    let mut stderr = std::io::stderr().lock();
    if let Some(unread) = &read.unread_signature {
        let _ = writeln!(stderr, "mcppin-guard: {}", mcppin_core::escape(unread));
    }
    if let Some(note) = read.note() {
        let _ = writeln!(stderr, "mcppin-guard: {}", mcppin_core::escape(&note));
    }
    let lock = files.lock;
    let context = settings.auth_context.as_ref();
    let lockfile = &read.approved.lockfile;
    let unreadable = |message: String| Fail::new(Exit::Unreadable, message);
    let mut entries = Vec::new();
    for server in ids {
        let Some(entry) = read.approved.server_in(server, context) else {
            let contexts = lockfile.contexts_of(server);
            if contexts.is_empty() {
                let servers = &lockfile.servers;
                return Err(unreadable(hint::no_entry(
                    lock,
                    server,
                    settings.server_from,
                    servers,
                ))
                .into());
            }
            // Surfaces of different authorizations are never compared: the entry of another
            // context proves nothing about what this one is served.
            let names: Vec<&str> = contexts
                .iter()
                .map(|c| mcppin_core::surface::AuthContext::name(*c))
                .collect();
            return Err(unreadable(format!(
                "{}: server {} is approved under authorization context {} only, not {} ({}): \
             capture and lock it under {}, or start the guard with the context it was \
             approved under",
                lock.display(),
                mcppin_core::Excerpt::quoted(server),
                names.join(", "),
                mcppin_core::surface::AuthContext::name(context),
                settings.auth_context_from,
                mcppin_core::surface::AuthContext::name(context),
            ))
            .into());
        };
        entries.push(entry);
    }
    Ok(Loaded {
        servers: entries,
        lock_digest: read.approved.lock_digest,
        approval_serial: lockfile.approval_serial,
        lock_key: match read.approved.signature {
            mcppin_sign::Signature::Verified { key, .. } => Some(key),
            _ => None,
        },
    })
}

/// What to add to the refusal of a file the guard cannot read when its path is relative: it
/// was resolved against the working directory the client started the guard in, which the
/// client chooses (often `/` or its own install directory, rarely the configuration's
/// directory), so the message names that directory and the fix, in the terms of `setting`,
/// where the path came from: a flag (`--lock`) or an environment variable (`MCPPIN_LOCK`, set
/// in the entry's `env`). Empty for an absolute path.
fn relative_hint(setting: &str, path: &Path) -> String {
    if path.is_absolute() {
        return String::new();
    }
    let dir = std::env::current_dir().map_or_else(
        |e| format!("the working directory (unreadable: {e})"),
        |dir| dir.display().to_string(),
    );
    let (what, fix) = if setting.starts_with("--") {
        (
            format!("{setting} is a relative path"),
            format!("give {setting} an absolute path in the client configuration"),
        )
    } else {
        (
            format!("{setting} holds a relative path"),
            format!(
                "set {setting} to an absolute path in the entry's env in the client configuration"
            ),
        )
    };
    format!(
        "; {what}, resolved against {dir}, the working directory the client started \
         mcppin-guard in: {fix}"
    )
}

/// A session id unique enough to join log lines of one run: process id and start time.
fn session_id(started: SystemTime) -> String {
    let nanos = started
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{:x}-{:x}", std::process::id(), nanos)
}

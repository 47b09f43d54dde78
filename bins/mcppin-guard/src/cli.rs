//! The guard's command line: its flags, their help and the exit codes `--help` lists.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Parser, ValueEnum};
use mcppin_client::DEFAULT_MAX_LINE;
use mcppin_core::engine;

pub(crate) const EXIT_CODES: &str = "\
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
pub(crate) struct Cli {
    /// The lockfile holding the approved surface (or MCPPIN_LOCK).
    #[arg(long, value_name = "FILE")]
    pub(crate) lock: Option<PathBuf>,
    /// The server's id in the lockfile (the key of its entry in the client configuration; or
    /// MCPPIN_SERVER).
    #[arg(long, value_name = "ID")]
    pub(crate) server: Option<String>,
    /// The authorization context the server runs under (a label, or MCPPIN_AUTH_CONTEXT): the
    /// guard enforces the lockfile's entry of this server under this context and refuses to
    /// start (exit 4) when the lockfile approves the server under other contexts only.
    /// Without it: the default context.
    #[arg(long, value_name = "LABEL")]
    pub(crate) auth_context: Option<String>,
    /// Require a valid signature (`<lock>.sig`) by one of these public keys (SPKI PEM; or
    /// MCPPIN_PUBKEY, paths separated by `:`).
    #[arg(long, value_name = "FILE")]
    pub(crate) pubkey: Vec<PathBuf>,
    /// Refuse (exit 4) a lockfile whose approval_serial is lower: an older approval put back.
    #[arg(long, value_name = "N")]
    pub(crate) min_serial: Option<u64>,
    /// Refuse (exit 4) a signature older than this (720h, 30d, 2weeks); needs --pubkey.
    #[arg(long, value_name = "DURATION", value_parser = mcppin_cli::duration::parse)]
    pub(crate) max_signature_age: Option<Duration>,
    /// What to do with drift: stop the session (refuse, the default), or filter drifted items
    /// and go on (or MCPPIN_MODE).
    #[arg(long, value_enum)]
    pub(crate) mode: Option<Mode>,
    /// Append one JSON line per admission decision to this file: a hash chain per run of the
    /// guard, checked by `mcppin log verify`.
    #[arg(long, value_name = "FILE")]
    pub(crate) log: Option<PathBuf>,
    /// Sign the log's last line of the run (guard_stop) with this private key (PKCS#8 PEM from
    /// `mcppin key`, unencrypted): `mcppin log verify --pubkey` then proves the run's end.
    #[arg(long, value_name = "FILE", requires = "log")]
    pub(crate) log_key: Option<PathBuf>,
    /// Keep the state a pre-call hook checks (`mcppin-guard hook --state DIR`) in this
    /// directory: which tools the current reading of the list admitted, in `DIR/<server>.json`.
    #[arg(long, value_name = "DIR")]
    pub(crate) state: Option<PathBuf>,
    /// The longest message accepted from the server, in bytes; a longer one fails closed.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE)]
    pub(crate) max_message: usize,
    /// Fix the clock of the admission log (RFC 3339), for tests.
    #[arg(long, hide = true, value_name = "RFC3339")]
    pub(crate) now: Option<String>,
    /// Serve MCP over Streamable HTTP on this address (HOST:PORT) in front of --upstream,
    /// instead of starting a stdio server (no COMMAND then).
    #[arg(
        long,
        value_name = "ADDR",
        requires = "upstream",
        conflicts_with = "command"
    )]
    pub(crate) listen: Option<SocketAddr>,
    /// The MCP endpoint of the remote server (http:// or https://); the guard serves the same
    /// path.
    #[arg(long, value_name = "URL", requires = "listen")]
    pub(crate) upstream: Option<String>,
    /// Trust the certificates of this PEM file for an https:// upstream, besides the system's
    /// trust roots (a private CA or a self-signed server).
    #[arg(long, value_name = "FILE", requires = "listen")]
    pub(crate) upstream_ca: Vec<PathBuf>,
    /// How long the upstream may take to connect, to answer a request, to send a JSON body;
    /// also how long a client may take to send its headers and body (with --extmcp-listen:
    /// how long the gateway may take to send one check's message, and how long a connection
    /// without a check in flight is kept).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = mcppin_cli::duration::parse)]
    pub(crate) upstream_timeout: Duration,
    /// The most sessions open at once; a new one beyond is refused with 503 (with
    /// --extmcp-listen: denied).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10_000,
        requires = "listener"
    )]
    pub(crate) max_sessions: usize,
    /// End a session after this long without a request or an open stream (1h, 30m).
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = mcppin_cli::duration::parse)]
    pub(crate) session_idle: Duration,
    /// The most client connections served at once; more wait to be accepted.
    #[arg(long, value_name = "N", default_value_t = 1024, requires = "listener")]
    pub(crate) max_connections: usize,
    /// Tag the session ids handed to clients `TAG.<the server's id>` (1 to 32 of A-Z a-z 0-9 _
    /// -), so a load balancer can send each session to its replica; an id without this tag
    /// gets 404.
    #[arg(long, value_name = "TAG", requires = "listen")]
    pub(crate) replica: Option<String>,
    /// Serve agentgateway's ExtMcp guardrail protocol (gRPC over cleartext HTTP/2) on this
    /// address (HOST:PORT): the gateway asks the guard about each request and answer of the
    /// targets --target maps (docs/gateway.md). No COMMAND, no --server then.
    #[arg(
        long,
        value_name = "ADDR",
        conflicts_with_all = ["command", "listen", "server", "state"]
    )]
    pub(crate) extmcp_listen: Option<SocketAddr>,
    /// With --extmcp-listen: the gateway's target NAME is held to the lockfile's entry ID
    /// (NAME alone: the entry of the same name). Give every target of the gateway's backend;
    /// a request to a target not given is denied.
    #[arg(long, value_name = "NAME=ID", value_parser = target_arg)]
    pub(crate) target: Vec<(String, String)>,
    /// With --extmcp-listen: the gateway's `mcp.prefixMode` (default conditional, the
    /// gateway's), which decides how it renames the targets' items; a guard given another one
    /// denies what the gateway shows.
    #[arg(long, value_enum, value_name = "MODE")]
    pub(crate) prefix_mode: Option<PrefixArg>,
    /// With --extmcp-listen: how the gateway writes each item out again, the members it
    /// keeps (default rmcp-3.1: agentgateway built on rmcp 3.x); an item holding any other
    /// member is refused, never passed.
    #[arg(long, value_name = "NAME")]
    pub(crate) projection: Option<String>,
    /// The server command and its arguments (after `--`, or first on the command line).
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<OsString>,
}

/// The gateway's `mcp.prefixMode`.
#[derive(Clone, Copy, Debug, Eq, PartialEq, ValueEnum)]
pub(crate) enum PrefixArg {
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
pub(crate) enum Mode {
    /// Answer the drifted request with an error, stop the server, exit 1.
    Refuse,
    /// Filter drifted items out, refuse calls to them, keep the session going.
    Quarantine,
}

impl Mode {
    /// The engine's configuration in this mode: the guard's refusals name it, and events are
    /// made when there is a log to write them to.
    pub(crate) fn engine(self, events: bool) -> engine::Config {
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

/// The command line with `--` before a server command that comes first: every flag of the
/// guard starts with `-`, so a first word that does not is the server command. Some clients
/// (the MCP Inspector's CLI) drop the `--` of a configured command; with the settings in the
/// environment the command line is then the server command alone.
pub(crate) fn with_separator(args: impl Iterator<Item = OsString>) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.collect();
    if args
        .get(1)
        .is_some_and(|first| !first.to_string_lossy().starts_with('-'))
    {
        args.insert(1, OsString::from("--"));
    }
    args
}

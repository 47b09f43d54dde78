//! `mcppin-export`: run the MCP servers of a client configuration and write the manifest of
//! their tool surface (docs/export.md).
//!
//! A capture is only worth pinning if it is complete: a server that cannot be captured fails
//! the whole export (exit 3) and nothing is written, because an absent server is not a smaller
//! surface but an unknown one.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use clap::Parser;
use mcppin_client::artifact;
use mcppin_client::{
    CapturedStderr, ClientConfig, ClientInfo, ClientProfile, Connection, DEFAULT_MAX_LINE,
    HttpOptions, HttpServer, HttpTransport, Inherit, Protocol, Received, Revision, Secrets,
    ServerCapture, ServerCommand, ServerEntry, Session, SessionOptions, Stage, StderrMode,
    StdioServer, Transport, Variables, capture, inherited_environment, withheld_variables,
};
use mcppin_core::artifact::Artifact;
use mcppin_core::launch::Launch;
use mcppin_core::manifest::{Manifest, ServerSurface};
use mcppin_core::surface::AuthContext;
use mcppin_core::surface::ItemKind;
use mcppin_core::{Kind, Object, Value, escape, escape_non_ascii};

mod audit;
mod discover;
mod exit;
mod file;
mod interrupt;

use exit::{Exit, Fail};
use interrupt::Running;

const NAME: &str = "mcppin-export";

const EXIT_CODES: &str = "\
Exit codes (a public contract):
  0  the manifest was written
  2  the command line is wrong
  3  a server could not be captured (nothing written)
  4  the configuration could not be read, or the manifest not written (nothing written)
With --discover: 0 the list was printed (files that cannot be read are listed as such), 2 no
HOME or a flag of a capture given.
With --audit: 0 every entry is guarded as expected, 1 an entry bypasses the guard (weakened,
other-lock, unguarded, not-locked), 2 the command line is wrong, 4 the lockfile or a
configuration could not be read; no server is started.";

/// How much of a server's stderr is kept (the most recent bytes).
const STDERR_LIMIT: usize = 64 * 1024;

/// Run the MCP servers of a client configuration and write the manifest of their tool surface.
///
/// Every selected server is started (a remote one, with a `url`, reached over HTTP), read to
/// the last page of each list as many times as `--passes` says, and stopped. The manifest says
/// `complete: true` only when at least two readings of every server agree. Beside each server's
/// launch it records what the launch ran (its artifact): the digests of a local program and
/// its files, the packages npx installed, the distributions uvx installed, the image id the
/// engine ran, or the URL; or `unknown` with the reason.
#[derive(Debug, Parser)]
#[command(name = NAME, version, about, after_help = EXIT_CODES)]
struct Cli {
    /// The client configuration: `mcpServers` (Claude Desktop, Claude Code, Cursor, Windsurf),
    /// VS Code `servers`, or VS Code settings with `mcp.servers`.
    #[arg(long, value_name = "FILE", required_unless_present_any = ["discover", "audit"])]
    config: Option<PathBuf>,

    /// Audit the client configurations against this lockfile instead of capturing: every
    /// server entry of the --config file (or of every configuration --discover finds) is read,
    /// never run, and classified: guarded (behind mcppin-guard with this lockfile, as
    /// expected), weakened, other-lock, unguarded (in the lockfile, no guard) or not-locked.
    /// Exits 1 when any entry bypasses the guard.
    #[arg(long, value_name = "LOCK", conflicts_with_all = ["output", "servers"])]
    audit: Option<PathBuf>,

    /// --audit: the report format: text (the default), json or sarif.
    #[arg(long, value_enum)]
    format: Option<audit::Format>,

    /// --audit: the mode every guard must run in (refuse, the default, or quarantine); a guard
    /// in another is weakened.
    #[arg(long, value_name = "MODE", value_parser = ["refuse", "quarantine"])]
    audit_mode: Option<String>,

    /// List the client configurations found in their usual places (Claude Desktop, Claude
    /// Code, Cursor, VS Code, Windsurf) with their servers, and the command that captures
    /// each; reads only.
    #[arg(long, conflicts_with_all = ["output", "servers"])]
    discover: bool,

    /// The project of Claude Code's *local* scope: with --config, read the servers of
    /// `projects.<PATH>.mcpServers` in that file (Claude Code's ~/.claude.json) instead of its
    /// top-level ones; with --discover, the project whose local and project files are listed
    /// (default: the current directory).
    #[arg(long, value_name = "PATH")]
    project: Option<PathBuf>,

    /// Capture only this server (repeatable); the manifest then lists its scope.
    #[arg(long = "server", value_name = "ID")]
    servers: Vec<String>,

    /// The protocol revision to speak, or `auto` (probe server/discover, fall back to
    /// initialize).
    #[arg(long, value_name = "REV|auto", default_value = "2025-11-25", value_parser = parse_protocol)]
    protocol: Protocol,

    /// How many times to read each server's surface; complete needs two readings that agree.
    #[arg(long, value_name = "N", default_value = "2", value_parser = parse_passes)]
    passes: NonZeroU32,

    /// How long to wait for each answer (`30s`, `500ms`, `2m`); a local server's first answer
    /// waits --start-timeout instead.
    #[arg(long, value_name = "DUR", default_value = "30s", value_parser = mcppin_cli::duration::parse)]
    timeout: Duration,

    /// How long a local server may take to answer the request that opens its session: a first
    /// `npx`/`uvx` start installs its package before it answers.
    #[arg(long, value_name = "DUR", default_value = "5m", value_parser = mcppin_cli::duration::parse)]
    start_timeout: Duration,

    /// How long a server (and each process it started) has after SIGTERM to exit before it is
    /// killed with SIGKILL: a package manager stopped mid-install rolls back meanwhile.
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = mcppin_cli::duration::parse)]
    kill_after: Duration,

    /// Open each session as this client does: its `clientInfo` and capabilities
    /// (claude-desktop, claude-code, cursor, vscode). A server may serve a client declaring
    /// sampling, roots or elicitation more tools than one declaring none (the default).
    #[arg(long, value_name = "NAME")]
    client: Option<ClientProfile>,

    /// Declare the capabilities in FILE (a JSON object, as in `initialize`), instead of those
    /// of the --client profile or none.
    #[arg(long, value_name = "FILE")]
    client_capabilities: Option<PathBuf>,

    /// The authorization the servers are captured under, as a label you choose for it
    /// (`read-only`, `admin`): recorded per server in the manifest (never the credential),
    /// kept by `mcppin lock`, and compared only with an approval of the same context. 1 to
    /// 64 of A-Z a-z 0-9 . _ - starting with a letter or a digit. Without it: the default
    /// context.
    #[arg(long, value_name = "LABEL", value_parser = parse_auth_context)]
    auth_context: Option<AuthContext>,

    /// The answer to a VS Code input prompt: `${input:ID}` in the configuration becomes
    /// VALUE (repeatable).
    #[arg(long = "input", value_name = "ID=VALUE", value_parser = parse_input)]
    inputs: Vec<(String, String)>,

    /// The folder `${workspaceFolder}` stands for (VS Code); by default the folder holding the
    /// `.vscode` folder the configuration is in.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,

    /// Give servers the whole environment instead of only HOME LOGNAME PATH SHELL TERM USER
    /// LANG TMPDIR (and their configured `env`).
    #[arg(long)]
    inherit_env: bool,

    /// Show each server's stderr (escaped, prefixed with its id).
    #[arg(short, long, conflicts_with = "quiet")]
    verbose: bool,

    /// Print no progress: neither a line per server captured nor the notes while one starts
    /// (errors and warnings still print).
    #[arg(short, long)]
    quiet: bool,

    /// Where to write the manifest; `-` for stdout.
    #[arg(
        short,
        long,
        value_name = "FILE|-",
        required_unless_present_any = ["discover", "audit"]
    )]
    output: Option<PathBuf>,

    /// Fixes the capture time (RFC 3339), for tests.
    #[arg(long, hide = true, value_parser = humantime::parse_rfc3339)]
    now: Option<SystemTime>,

    /// The wait for a server to exit once its stdin is closed, for tests.
    #[arg(long, hide = true, default_value = "2s", value_parser = mcppin_cli::duration::parse)]
    grace: Duration,

    /// The root --discover finds system-wide files under (Claude Code's managed-mcp.json),
    /// for tests.
    #[arg(long, hide = true, value_name = "DIR", default_value = "/")]
    system_root: PathBuf,
}

/// `ID=VALUE`; the value may hold `=`, the id may not be empty.
fn parse_input(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((id, value)) if !id.is_empty() => Ok((id.to_owned(), value.to_owned())),
        _ => Err("expected ID=VALUE (the id of a VS Code input, then its value)".to_owned()),
    }
}

fn parse_protocol(text: &str) -> Result<Protocol, String> {
    text.parse()
        .map_err(|e: mcppin_client::Error| e.to_string())
}

/// A count of readings; 0 is refused saying which count to give instead.
fn parse_auth_context(text: &str) -> Result<AuthContext, String> {
    text.parse().map_err(|e| format!("{e}"))
}

fn parse_passes(text: &str) -> Result<NonZeroU32, String> {
    let n: u32 = text
        .parse()
        .map_err(|e: std::num::ParseIntError| e.to_string())?;
    NonZeroU32::new(n).ok_or_else(|| {
        "0 readings capture nothing; give --passes 2 (the default) for a complete capture, or \
         --passes 1 for a single reading (never complete)"
            .to_owned()
    })
}

fn main() -> ExitCode {
    if let Some(err) = mcppin_client::trampoline(std::env::args_os()) {
        // Started by itself to become a server that dies with the export (see
        // `capture_server`), and the server could not be executed. Stderr is the server's:
        // the export shows it.
        let _ = writeln!(
            std::io::stderr().lock(),
            "{NAME}: {}",
            escape(&err.to_string())
        );
        return ExitCode::from(127);
    }
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(err) => return mcppin_cli::usage::end::<Cli>(&err, &argv),
    };
    let outcome = run(&cli);
    if interrupt::interrupted() {
        // The handler stops the servers and exits with 128 + the signal.
        interrupt::wait_for_exit();
    }
    match outcome {
        Ok(exit) => exit.into(),
        Err(err) => {
            if exit::is_broken_pipe(&err) {
                return Exit::Written.into();
            }
            let _ = writeln!(
                std::io::stderr().lock(),
                "{NAME}: {}",
                escape_non_ascii(&format!("{err:#}"))
            );
            exit::code_of(&err).into()
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<Exit> {
    if let Some(lock) = &cli.audit {
        if cli.config.is_some() == cli.discover {
            return Err(Fail::new(
                Exit::Usage,
                "--audit reads the configurations of --config FILE or of --discover: give one",
            )
            .into());
        }
        let project = cli
            .project
            .as_deref()
            .map(discover::project_key)
            .transpose()?;
        let places = if cli.discover {
            Some(discover::places(cli.project.as_deref(), &cli.system_root)?)
        } else {
            None
        };
        return audit::run(&audit::Audit {
            lock,
            config: cli.config.as_deref(),
            project: project.as_deref(),
            places,
            mode: cli.audit_mode.as_deref().unwrap_or("refuse"),
            format: cli.format.unwrap_or(audit::Format::Text),
        });
    }
    if cli.format.is_some() || cli.audit_mode.is_some() {
        return Err(Fail::new(
            Exit::Usage,
            "--format and --audit-mode go with --audit LOCK",
        )
        .into());
    }
    if cli.discover && cli.config.is_some() {
        return Err(Fail::new(
            Exit::Usage,
            "--discover lists the configurations it finds: it takes no --config (give --audit \
             LOCK to audit them)",
        )
        .into());
    }
    let (Some(config_path), Some(output)) = (&cli.config, &cli.output) else {
        return discover::run(cli.project.as_deref(), &cli.system_root);
    };
    let project = cli
        .project
        .as_deref()
        .map(discover::project_key)
        .transpose()?;
    let config = read_config(config_path, project.as_deref())?;
    let ids = select(cli, config_path, &config)?;
    let environment: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let inputs: BTreeMap<String, String> = cli.inputs.iter().cloned().collect();
    let workspace = cli
        .workspace
        .clone()
        .or_else(|| default_workspace(config_path));
    let variables = Variables {
        environment: &environment,
        inputs: &inputs,
        workspace: workspace.as_deref(),
    };
    // Every selected entry is resolved before any server starts: a configuration error is
    // found without running anything.
    let mut servers = Vec::new();
    for id in &ids {
        let unreadable =
            |e: String| Fail::new(Exit::Unreadable, format!("{}: {e}", config_path.display()));
        match &config.servers[id.as_str()] {
            ServerEntry::Stdio(server) => {
                let mut launch = server.launch();
                let mut server = server
                    .expand_with(id, &variables)
                    .map_err(|e| unreadable(e.to_string()))?;
                if let Some(file) = server.env_file.take() {
                    // Opened as a file found is: a FIFO or a device named there neither hangs
                    // the export nor grows its memory.
                    let text = file::read_found(&file)
                        .map_err(|e| e.to_string())
                        .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8 text".to_owned()))
                        .map_err(|e| {
                            unreadable(format!(
                                "server {}: cannot read its envFile {}: {e}",
                                quoted(id),
                                file.display()
                            ))
                        })?;
                    server.add_env_file(&text);
                    // The guard's settings the file gives are part of the launch.
                    if let Launch::Stdio { guard, .. } = &mut launch {
                        guard.clone_from(&server.guard);
                    }
                }
                for (setting, path) in server.relative_guard_files(id, &variables) {
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "{NAME}: warning: server {}: the guard's {setting} {} is a relative \
                         path: a client starts mcppin-guard in a working directory of its own \
                         choosing (often / or the client's install directory), where it may not \
                         be found; give {setting} an absolute path",
                        quoted(id),
                        quoted(&path)
                    );
                }
                servers.push((id.as_str(), Resolved::Stdio(server), launch));
            }
            ServerEntry::Http(server) => {
                let launch = server.launch();
                let server = server
                    .expand_with(id, &variables)
                    .map_err(|e| unreadable(e.to_string()))?;
                servers.push((id.as_str(), Resolved::Http(server), launch));
            }
            // A kind of entry a later mcppin-client reads and this build cannot start.
            _ => {
                return Err(unreadable(format!(
                    "server {}: this build cannot capture this kind of server",
                    quoted(id)
                ))
                .into());
            }
        }
    }

    let (client, capabilities) = client_of(cli)?;

    let running = Running::default();
    interrupt::install(&running, cli.kill_after).context("cannot install the signal handler")?;

    let mut manifest = Manifest::new(true);
    manifest.protocol_version = match cli.protocol {
        Protocol::Exact(revision) => Some(revision.as_str().to_owned()),
        Protocol::Auto => None,
    };
    manifest.captured_by = Some(format!("{NAME}/{}", env!("CARGO_PKG_VERSION")));
    manifest.captured_at = Some(
        humantime::format_rfc3339_seconds(cli.now.unwrap_or_else(SystemTime::now)).to_string(),
    );
    if !cli.servers.is_empty() {
        manifest.scope = Some(ids.iter().cloned().collect());
    }
    for (id, server, launch) in &servers {
        let started = Instant::now();
        let options = SessionOptions {
            protocol: cli.protocol,
            timeout: cli.timeout,
            // A remote server installs nothing: its first answer waits as any other.
            start_timeout: match server {
                Resolved::Stdio(_) => cli.start_timeout,
                Resolved::Http(_) => cli.timeout,
            },
            client: client.clone(),
            capabilities: capabilities.clone(),
        };
        let (captured, artifact) = match server {
            Resolved::Stdio(server) => {
                capture_server(cli, &options, id, server, &running, started)?
            }
            Resolved::Http(server) => capture_remote(cli, &options, id, server, launch, started)?,
        };
        let took = started.elapsed();
        let reading = Reading {
            revision: captured.protocol_version,
            passes: captured.passes,
            agreed: captured.agreed,
        };
        let mut surface = surface_of(id, captured)?;
        surface.client_capabilities = Some(Value::from(capabilities.clone()));
        surface.launch = Some(launch.clone());
        surface.auth_context.clone_from(&cli.auth_context);
        if !cli.quiet {
            let _ = writeln!(
                std::io::stderr().lock(),
                "{NAME}: server {}: {}; artifact: {}",
                quoted(id),
                summary(&surface, &reading, took),
                escape(&artifact.summary())
            );
        }
        surface.artifact = Some(artifact);
        if !(reading.agreed && reading.passes >= 2) {
            manifest.complete = false;
            let why = if reading.agreed {
                "a single reading cannot show that the list held still"
            } else {
                "its readings disagreed (the list changed while it was read)"
            };
            let _ = writeln!(
                std::io::stderr().lock(),
                "{NAME}: warning: server {}: {why}; the manifest says complete: false",
                quoted(id)
            );
        }
        manifest.servers.insert((*id).to_owned(), surface);
    }
    // Whatever was read while the servers were being stopped is not a capture; once the write
    // has begun, a signal lets it finish.
    let bytes = manifest.to_bytes();
    match interrupt::commit(|| write_manifest(output, &bytes)) {
        Some(written) => written?,
        None => interrupt::wait_for_exit(),
    }
    Ok(Exit::Written)
}

/// The `clientInfo` and capabilities sessions open with: the `--client` profile's, the
/// capabilities of `--client-capabilities` instead of the profile's, or this exporter declaring
/// none.
fn client_of(cli: &Cli) -> anyhow::Result<(ClientInfo, Object)> {
    let client = match cli.client {
        Some(profile) => profile.client_info(),
        None => ClientInfo {
            name: NAME.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        },
    };
    let capabilities = match &cli.client_capabilities {
        Some(path) => {
            let unreadable = |message: String| Fail::new(Exit::Unreadable, message);
            let bytes = file::read_named(path)
                .map_err(|e| unreadable(format!("cannot read {}: {e}", path.display())))?;
            let value = mcppin_core::parse(&bytes)
                .map_err(|e| unreadable(format!("{}: {e}", path.display())))?;
            match value.into_kind() {
                Kind::Object(object) => object,
                _ => {
                    return Err(unreadable(format!(
                        "{}: the client capabilities are not a JSON object",
                        path.display()
                    ))
                    .into());
                }
            }
        }
        None => cli
            .client
            .map(ClientProfile::capabilities)
            .unwrap_or_default(),
    };
    Ok((client, capabilities))
}

/// The workspace of a configuration inside a `.vscode` folder: the folder holding it.
fn default_workspace(config: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(config).ok()?;
    let dir = absolute.parent()?;
    if dir.file_name()? != ".vscode" {
        return None;
    }
    dir.parent().map(Path::to_path_buf)
}

/// Reads the configuration: its server table, or with `project` the servers of that project's
/// local scope (Claude Code's `projects.<project>.mcpServers`).
fn read_config(path: &Path, project: Option<&str>) -> anyhow::Result<ClientConfig> {
    let unreadable = |message: String| Fail::new(Exit::Unreadable, message);
    let bytes = file::read_named(path)
        .map_err(|e| unreadable(format!("cannot read {}: {e}", path.display())))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| unreadable(format!("{}: not UTF-8 text", path.display())))?;
    match project {
        Some(project) => ClientConfig::parse_project(&text, project),
        None => ClientConfig::parse(&text),
    }
    .map_err(|e| unreadable(format!("{}: {e}", path.display())).into())
}

/// The ids to capture: every configured server, or the `--server` ones, each checked.
fn select(cli: &Cli, path: &Path, config: &ClientConfig) -> anyhow::Result<Vec<String>> {
    if cli.servers.is_empty() {
        return Ok(config.servers.keys().cloned().collect());
    }
    let mut ids = BTreeSet::new();
    for id in &cli.servers {
        if !config.servers.contains_key(id) {
            let known: Vec<_> = config.servers.keys().map(|k| quoted(k)).collect();
            return Err(Fail::new(
                Exit::Usage,
                format!(
                    "--server {}: no such server in {} (it has {})",
                    quoted(id),
                    path.display(),
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            )
            .into());
        }
        ids.insert(id.clone());
    }
    Ok(ids.into_iter().collect())
}

/// A selected server with its variables expanded.
enum Resolved {
    Stdio(StdioServer),
    Http(HttpServer),
}

/// Opens a session over `transport` (with the notes of a slow start) and reads the surface;
/// an error is returned as its message, which names the option that raises a timeout that
/// passed.
fn read_surface(
    cli: &Cli,
    options: &SessionOptions,
    id: &str,
    transport: &mut dyn Transport,
    started: Instant,
    start_option: &str,
) -> Result<ServerCapture, Failure> {
    let watched = Starting {
        inner: transport,
        id,
        started,
        next_note: FIRST_NOTE,
        open: false,
        quiet: cli.quiet,
    };
    let mut session = Session::open(watched, options).map_err(|e| Failure {
        message: explain(&e, start_option),
        started: false,
    })?;
    session.transport_mut().open = true;
    capture(&mut session, cli.passes).map_err(|e| Failure {
        message: explain(&e, "--timeout"),
        started: true,
    })
}

/// Why a surface could not be read, and whether the server had opened its session by then.
struct Failure {
    message: String,
    /// Whether the session opened: a server that never did may lack a variable it needs.
    started: bool,
}

/// The message of `err`; a timeout that passed says which option raises it.
fn explain(err: &mcppin_client::Error, option: &str) -> String {
    match err {
        mcppin_client::Error::Timeout { .. } => format!("{err} (raise it with {option})"),
        // A remote server's answer that stopped coming: its reads are bounded by --timeout.
        mcppin_client::Error::Http { source, .. } if source.is_timeout() => {
            format!("{err} (raise it with --timeout)")
        }
        _ => err.to_string(),
    }
}

/// Captures a remote server over HTTP (docs/export.md, "Remote servers"), then ends its
/// session; fails with exit 3. Secrets of its configuration never reach a message: the
/// client leaves them out, and every message is redacted once more here. Its artifact is the
/// launch's URL (as written: a variable in it stays a placeholder) with the key of the
/// certificate the server presented.
fn capture_remote(
    cli: &Cli,
    options: &SessionOptions,
    id: &str,
    server: &HttpServer,
    launch: &Launch,
    started: Instant,
) -> anyhow::Result<(ServerCapture, Artifact)> {
    let secrets = Secrets::of(server);
    let failed = |cause: String| -> anyhow::Error {
        Fail::new(
            Exit::Uncaptured,
            secrets.redact(&format!(
                "server {} could not be captured: {cause}",
                quoted(id)
            )),
        )
        .into()
    };
    let http = HttpOptions {
        max_message: DEFAULT_MAX_LINE,
        timeout: cli.timeout,
    };
    let mut transport = HttpTransport::connect(server, http).map_err(|e| failed(e.to_string()))?;
    let result = read_surface(cli, options, id, &mut transport, started, "--timeout");
    // Ending the session is a courtesy to the server: the capture stands without it.
    let _ = transport.close();
    let captured = result.map_err(|f| failed(f.message))?;
    let artifact = match launch {
        Launch::Remote { url } => artifact::remote(url, transport.server_key()),
        _ => artifact::remote(&server.url, transport.server_key()),
    };
    Ok((captured, artifact))
}

/// Starts one server, captures it and, while it still runs, reads what its launch ran (its
/// artifact: what `npx` or `uvx` installed exists only once the server is up), then stops it;
/// on failure, shows its stderr and fails with exit 3.
fn capture_server(
    cli: &Cli,
    options: &SessionOptions,
    id: &str,
    server: &StdioServer,
    running: &Running,
    started: Instant,
) -> anyhow::Result<(ServerCapture, Artifact)> {
    let inherit = if cli.inherit_env {
        Inherit::All
    } else {
        Inherit::Minimal
    };
    let mut command = ServerCommand::new(&server.command)
        .args(&server.args)
        .envs(inherited_environment(std::env::vars_os(), inherit))
        .envs(&server.env)
        .stderr(StderrMode::Capture {
            limit: STDERR_LIMIT,
        })
        .grace(cli.grace)
        .kill_after(cli.kill_after);
    if let Some(dir) = &server.cwd {
        command = command.current_dir(dir);
    }
    // The server dies with the export, even by SIGKILL: started from the main thread through
    // the export's own executable, which sets the parent-death signal before it becomes the
    // server. Without a path to itself the export starts the server directly.
    if let Ok(exe) = std::env::current_exe() {
        command = command.die_with_parent(exe);
    }
    let failed = |cause: String| -> anyhow::Error {
        Fail::new(
            Exit::Uncaptured,
            format!("server {} could not be captured: {cause}", quoted(id)),
        )
        .into()
    };
    let mut connection = Connection::open(&command, DEFAULT_MAX_LINE).map_err(|e| {
        note_withheld(id, inherit);
        failed(e.to_string())
    })?;
    running.add(connection.id());
    let result = read_surface(
        cli,
        options,
        id,
        &mut connection,
        started,
        "--start-timeout (a first start may still be installing the server's package)",
    );
    let artifact = result
        .is_ok()
        .then(|| artifact::once_up(&command, connection.id()));
    let stopped = connection.shutdown();
    running.remove(connection.id());
    let stderr = connection.stderr().unwrap_or_default();
    if cli.verbose || result.is_err() {
        show_stderr(id, &stderr);
    }
    let captured = match result {
        Ok(captured) => captured,
        Err(Failure {
            message: mut cause,
            started,
        }) => {
            if !started {
                note_withheld(id, inherit);
            }
            // A server that died on its own (before, or as, its stdin was closed) says so
            // through its status; one stopped by a signal from us was alive and is not.
            if let Ok(done) = &stopped
                && done.stage <= Stage::ClosedStdin
                && !done.status.success()
            {
                cause.push_str(&format!(" (the server exited: {})", done.status));
            }
            return Err(failed(cause));
        }
    };
    stopped.map_err(|e| failed(format!("it could not be stopped: {e}")))?;
    let artifact = artifact.unwrap_or_else(|| Artifact::Unknown {
        reason: "the server was not captured".to_owned(),
    });
    Ok((captured, artifact))
}

/// Says, when a server did not start, which variables of the export's environment it was not
/// given (names only, never values) and how to give them: a server behind a proxy, or one
/// reading a setting from its environment, fails to start without it.
fn note_withheld(id: &str, inherit: Inherit) {
    let withheld = withheld_variables(std::env::vars_os(), inherit);
    if withheld.is_empty() {
        return;
    }
    let names: Vec<String> = withheld
        .iter()
        .map(|name| quoted(&name.to_string_lossy()))
        .collect();
    let _ = writeln!(
        std::io::stderr().lock(),
        "{NAME}: note: server {} did not start; its environment left out {} variable{} of this \
         one: {} (names only; --inherit-env passes them all, the entry's \"env\" passes one)",
        quoted(id),
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        names.join(", ")
    );
}

/// How a server's surface was read, for its summary line.
struct Reading {
    revision: Revision,
    passes: u32,
    agreed: bool,
}

/// The line said of a server once it is captured: its items per kind, the revision spoken, the
/// readings and the time taken (`4 tools over 2025-11-25, 2 readings agree, 1.3 s`).
fn summary(surface: &ServerSurface, reading: &Reading, took: Duration) -> String {
    let items: Vec<String> = ItemKind::ALL
        .iter()
        .map(|&kind| {
            if surface.not_served.contains(&kind) {
                // Declared but answered with -32601: recorded as not served (docs/export.md).
                return format!("no {}s ({} not served)", kind.noun(), kind.list_method());
            }
            let n = surface.items(kind).len();
            format!("{n} {}{}", kind.noun(), if n == 1 { "" } else { "s" })
        })
        .collect();
    format!(
        "{} over {}, {} {} {}, {:.1} s",
        items.join(", "),
        reading.revision,
        reading.passes,
        if reading.passes == 1 {
            "reading"
        } else {
            "readings"
        },
        if reading.agreed { "agree" } else { "disagree" },
        took.as_secs_f64()
    )
}

/// When the first note that a server is still starting comes; each later one comes when the
/// wait has doubled (2, 4, 8, 16 s ...), so a long start makes a few lines, not a stream.
const FIRST_NOTE: Duration = Duration::from_secs(2);

/// The server's link while its session opens: says on stderr that the server is still
/// starting when it has not answered for a while (a cold `npx` downloads its package first).
/// The clock is read here, in the binary; the session only sees a transport.
struct Starting<'a> {
    inner: &'a mut dyn Transport,
    id: &'a str,
    /// When the server was started.
    started: Instant,
    /// The wait, since the start, at which the next note is due.
    next_note: Duration,
    /// Set once the session is open: no more notes.
    open: bool,
    quiet: bool,
}

impl Transport for Starting<'_> {
    fn send(&mut self, message: &[u8]) -> Result<(), mcppin_client::Error> {
        self.inner.send(message)
    }

    fn receive(&mut self, timeout: Duration) -> Result<Received, mcppin_client::Error> {
        if self.open || self.quiet {
            return self.inner.receive(timeout);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let now = Instant::now();
            let left = deadline.saturating_duration_since(now);
            let until_note = (self.started + self.next_note).saturating_duration_since(now);
            if left <= until_note {
                return self.inner.receive(left);
            }
            match self.inner.receive(until_note)? {
                Received::TimedOut => {
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "{NAME}: server {}: still starting ({} s)",
                        quoted(self.id),
                        self.next_note.as_secs()
                    );
                    self.next_note *= 2;
                }
                other => return Ok(other),
            }
        }
    }

    fn agreed(&mut self, revision: Revision) {
        self.inner.agreed(revision);
    }
}

/// A server id (or any raw string) quoted for a message: escaped, then in double quotes with
/// `"` and `\` backslashed, so two ids never read the same.
fn quoted(text: &str) -> String {
    format!("{:?}", escape(text))
}

/// Writes a server's captured stderr, each line escaped and prefixed with the server id.
fn show_stderr(id: &str, stderr: &CapturedStderr) {
    let mut out = std::io::stderr().lock();
    let prefix = escape(id);
    if stderr.dropped > 0 {
        let _ = writeln!(
            out,
            "[{prefix}] ({} earlier bytes of stderr dropped)",
            stderr.dropped
        );
    }
    for line in stderr.escaped_lines() {
        let _ = writeln!(out, "[{prefix}] {line}");
    }
}

fn surface_of(id: &str, captured: ServerCapture) -> anyhow::Result<ServerSurface> {
    let mut surface = ServerSurface::new();
    surface.reported_name = captured.reported_name;
    surface.protocol_version = Some(captured.protocol_version.as_str().to_owned());
    surface.passes = Some(u64::from(captured.passes));
    surface.widened = true;
    surface.instructions = captured.instructions;
    surface.not_served = captured.not_served;
    let kinds = [
        (ItemKind::Tool, captured.tools),
        (ItemKind::Prompt, captured.prompts),
        (ItemKind::ResourceTemplate, captured.resource_templates),
    ];
    for (kind, items) in kinds {
        for (i, item) in items.into_iter().enumerate() {
            // Tool names were checked unique by the session; this is the manifest's own guard,
            // and the only one for prompts and templates.
            let pointer = format!("/{}/{i}", kind.list_member());
            surface
                .items_mut(kind)
                .insert(id, kind, item, &pointer)
                .map_err(|e| {
                    Fail::new(
                        Exit::Uncaptured,
                        format!("server {} could not be captured: {e}", quoted(id)),
                    )
                })?;
        }
    }
    Ok(surface)
}

/// Writes the manifest to stdout, or to a file as [`mcppin_cli::write_atomic`] writes one.
fn write_manifest(output: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if output == Path::new("-") {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(bytes)?;
        stdout.flush()?;
        return Ok(());
    }
    mcppin_cli::write_atomic(output, bytes)
}

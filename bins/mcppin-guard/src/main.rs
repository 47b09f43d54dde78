//! `mcppin-guard`: the checkpoint on the wire (docs/guard.md).
//!
//! Goes into a client configuration where a stdio server command was, starts the server
//! behind it, forwards every message both ways byte for byte, and checks every answer that
//! carries text for the model against the lockfile before the client sees it.

use std::ffi::OsString;
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::Context;
use clap::Parser;
use mcppin_cli::approval;
use mcppin_core::engine::ApprovedServer;

mod cli;
mod exit;
mod extmcp;
mod feed;
mod hint;
mod hook;
mod http;
mod listen;
mod log;
mod proxy;
mod pump;
mod settings;
mod state;
mod stderr;

use cli::{Cli, Mode, PrefixArg, with_separator};
use exit::{Exit, Fail};
use settings::{Settings, settings};

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
    let argv = with_separator(args.into_iter());
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(err) => return hint::usage_error(&err, &argv),
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
            let file = mcppin_cli::open_to_append(path).map_err(cannot)?;
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
                "mcppin-guard: {}",
                log::failed("the log's end", &err)
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
    let (read, lock_digest) = approval::read_recorded(files, hint)?;
    let mut stderr = std::io::stderr().lock();
    if let Some(unread) = &read.unread_signature {
        let _ = writeln!(
            stderr,
            "mcppin-guard: {}",
            mcppin_core::escape_non_ascii(unread)
        );
    }
    if let Some(note) = read.note() {
        let _ = writeln!(
            stderr,
            "mcppin-guard: {}",
            mcppin_core::escape_non_ascii(&note)
        );
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
        lock_digest,
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

//! The settings a run takes from the command line or the environment (docs/guard.md,
//! "Settings from the environment"), checked against each other.

use std::path::PathBuf;

use clap::ValueEnum;

use crate::cli::{Cli, Mode};
use crate::exit::{Exit, Fail};
use crate::hint;

/// The settings that come from the command line or the environment (docs/guard.md,
/// "Settings from the environment").
pub(crate) struct Settings {
    pub(crate) lock: PathBuf,
    /// Where the lock's path came from, `--lock` or `MCPPIN_LOCK`, for the messages about it.
    pub(crate) lock_from: &'static str,
    /// Where the public keys' paths came from, `--pubkey` or `MCPPIN_PUBKEY`.
    pub(crate) pubkey_from: &'static str,
    pub(crate) server: String,
    /// Where the server id came from, `--server` or `MCPPIN_SERVER`.
    pub(crate) server_from: &'static str,
    /// The authorization context, `None` for the default.
    pub(crate) auth_context: Option<mcppin_core::surface::AuthContext>,
    /// Where it came from, `--auth-context` or `MCPPIN_AUTH_CONTEXT`.
    pub(crate) auth_context_from: &'static str,
    pub(crate) mode: Mode,
}

/// Takes `--lock`, `--server`, `--mode` and `--pubkey` from the command line or from
/// MCPPIN_LOCK, MCPPIN_SERVER, MCPPIN_MODE and MCPPIN_PUBKEY. A setting given both ways is a
/// usage error: the two could disagree, and neither is more the user's than the other.
pub(crate) fn settings(mut cli: Cli) -> anyhow::Result<(Cli, Settings)> {
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

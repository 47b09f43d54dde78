//! Refusals that say what to type instead: a `--server` the lockfile lacks, a server command
//! given without `--` before it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use mcppin_core::Excerpt;
use mcppin_core::lockfile::LockedServer;

use crate::exit::Exit;

/// The refusal of a command line without a server command (and without `--listen`).
pub(crate) const NO_COMMAND: &str = "no server command: it goes after --: mcppin-guard --lock \
     FILE --server ID -- <server command> (or --listen ADDR --upstream URL in front of a remote \
     server)";

/// How many server ids the refusal of an unknown `--server` lists.
const LISTED_IDS: usize = 8;

/// The refusal of a `--server` the lockfile has no entry for, naming the ids it has and the
/// setting the id came from (`--server`, or `MCPPIN_SERVER` in the entry's `env`).
pub(crate) fn no_entry(
    lock: &Path,
    server: &str,
    server_from: &str,
    servers: &BTreeMap<String, LockedServer>,
) -> String {
    let head = format!(
        "the lockfile {} has no entry for server {}; the server was not started",
        lock.display(),
        Excerpt::quoted(server)
    );
    if servers.is_empty() {
        return format!("{head}; it approves no server: approve this one with mcppin lock first");
    }
    let listed: Vec<String> = servers
        .keys()
        .take(LISTED_IDS)
        .map(|id| Excerpt::quoted(id).to_string())
        .collect();
    let more = match servers.len().saturating_sub(LISTED_IDS) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let name = if server_from.starts_with("--") {
        format!("with {server_from}")
    } else {
        format!("in {server_from}")
    };
    format!(
        "{head}; name one of its servers {name}: {}{more}",
        listed.join(", ")
    )
}

/// Ends the run on a command line clap refused (`argv`, as parsed). A server command given
/// without `--` before it gets a message saying where it goes; anything else, clap's own
/// (`mcppin_cli::usage`: nothing of the command line raw).
pub(crate) fn usage_error(err: &clap::Error, argv: &[OsString]) -> ExitCode {
    let Some(message) = missing_separator(err, argv.iter().cloned()) else {
        return mcppin_cli::usage::end::<crate::Cli>(err, argv);
    };
    let _ = writeln!(
        std::io::stderr().lock(),
        "mcppin-guard: {}",
        mcppin_core::escape(&message)
    );
    ExitCode::from(Exit::Usage as u8)
}

/// The message for a command line without `--` that clap refused for a word where only the
/// server command may stand.
fn missing_separator(
    err: &clap::Error,
    argv: impl IntoIterator<Item = OsString>,
) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};

    const USAGE: &str = "mcppin-guard --lock FILE --server ID -- <server command>";
    if argv.into_iter().skip(1).any(|arg| arg == "--") {
        return None;
    }
    match (err.kind(), err.get(ContextKind::InvalidArg)) {
        (ErrorKind::UnknownArgument, Some(ContextValue::String(word)))
            if !word.starts_with('-') =>
        {
            Some(format!(
                "unexpected argument '{word}': the server command goes after --: {USAGE}"
            ))
        }
        _ => None,
    }
}

//! `mcppin canon`: print the RFC 8785 canonical form.

use std::io::Write;
use std::path::PathBuf;

use crate::exit::{Exit, Fail};
use crate::input;

/// Print the RFC 8785 canonical form of a JSON document.
///
/// Exits 3 only for a number with no canonical form (overflow to infinity), 4 when the
/// document breaks a strict-reading rule.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The document, or - for standard input.
    file: PathBuf,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<Exit> {
    let (_, value) = input::json(&args.file)?;
    let canonical = mcppin_core::canonicalize(&value).map_err(|e| {
        Fail::new(
            Exit::Incomparable,
            format!("{}: {e}", input::name(&args.file)),
        )
    })?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&canonical)?;
    stdout.flush()?;
    Ok(Exit::Holds)
}

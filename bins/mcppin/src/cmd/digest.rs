//! `mcppin digest`: print the pinning digest.

use std::io::Write;
use std::path::PathBuf;

use crate::exit::{Exit, Fail};
use crate::input;

/// Print the pinning digest (sha256 of the canonical form) of a JSON document.
///
/// Exits 3 and lists the literals when the document holds an undecidable number (an integer
/// above 2^53, an overflow, a non-zero value that rounds to zero), 4 when the document breaks a
/// strict-reading rule.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The document, or - for standard input.
    file: PathBuf,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<Exit> {
    let (_, value) = input::json(&args.file)?;
    let digest = mcppin_core::digest(&value).map_err(|e| {
        Fail::of_category(e.category(), format!("{}: {e}", input::name(&args.file)))
    })?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{digest}")?;
    stdout.flush()?;
    Ok(Exit::Holds)
}

//! `mcppin canon`: print the RFC 8785 canonical form.

use std::io::Write;
use std::path::PathBuf;

use mcppin_core::{Kind, Position, Span, Value};

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
    let (bytes, value) = input::json(&args.file)?;
    let canonical = mcppin_core::canonicalize(&value).map_err(|e| {
        // The error names the literal (an excerpt of it); the position finds it in the file.
        let at = first_overflow(&value)
            .map(|span| format!(", at {}", Position::locate(&bytes, span.start)))
            .unwrap_or_default();
        Fail::of_category(
            e.category(),
            format!("{}: {e}{at} [{}]", input::name(&args.file), e.rule()),
        )
    })?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&canonical)?;
    stdout.flush()?;
    Ok(Exit::Holds)
}

/// The span of the first number, in document order, whose float64 value is infinite.
fn first_overflow(value: &Value) -> Option<Span> {
    match value.kind() {
        Kind::Number(n) if !n.as_f64().is_finite() => Some(value.span()),
        Kind::Array(items) => items.iter().find_map(first_overflow),
        Kind::Object(object) => object.values().find_map(first_overflow),
        _ => None,
    }
}

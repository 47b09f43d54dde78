//! Reading input files (or standard input for `-`).

use std::path::Path;

use anyhow::Context;
use mcppin_cli::{MAX_DOCUMENT, read_at_most, read_at_most_from};

/// Reads `path`, or standard input when it is `-`, to at most [`MAX_DOCUMENT`] bytes (a
/// lockfile, a manifest or a document to canonicalise: a link to `/dev/zero` is refused, not
/// read until memory runs out).
pub(crate) fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    if path == Path::new("-") {
        return read_at_most_from(std::io::stdin().lock(), MAX_DOCUMENT, 0)
            .context("cannot read standard input");
    }
    read_at_most(path, MAX_DOCUMENT).with_context(|| format!("cannot read {}", path.display()))
}

/// The name of a file in messages: printable ASCII, anything else in the `<U+XXXX>` notation
/// (a file name can hold a terminal's control sequence).
pub(crate) fn name(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_owned()
    } else {
        mcppin_core::escape_non_ascii(&path.display().to_string()).into_owned()
    }
}

/// Reads and strictly parses a JSON document; the error names the file, the position and the
/// rule.
pub(crate) fn json(path: &Path) -> anyhow::Result<(Vec<u8>, mcppin_core::Value)> {
    let bytes = read(path)?;
    let value = mcppin_core::parse(&bytes).map_err(|e| strict_error(path, &e.into()))?;
    Ok((bytes, value))
}

/// A strict-reading error, as one line naming the file, the position and the rule.
pub(crate) fn strict_error(path: &Path, err: &mcppin_core::Error) -> anyhow::Error {
    anyhow::anyhow!("{}: {} [{}]", name(path), err, err.rule())
}

//! Writing output files: atomically, and for secrets, never over an existing file by accident.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::Context;

use crate::exit::{Exit, Fail};

/// Writes `bytes` to `path` as [`mcppin_cli::write_atomic`] does: through a temporary file and
/// a rename (a device or a pipe in place, a link refused), with the mode a plain create gives.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    mcppin_cli::write_atomic(path, bytes)
}

/// Writes a secret to `path` with mode 0600. Without `force`, the file is created with
/// `create_new` and an existing file is refused (exit 2); with `force`, a new 0600 file
/// replaces it atomically.
pub(crate) fn write_secret(path: &Path, bytes: &[u8], force: bool) -> anyhow::Result<()> {
    if force {
        return mcppin_cli::replace_secret(path, bytes);
    }
    create_new(path, bytes, 0o600)
}

/// Creates `path` (never over an existing file: exit 2) with `mode` and writes `bytes` to it;
/// a write that fails (a full disk) removes what it created, so a retry is not refused as an
/// existing file.
pub(crate) fn create_new(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).mode(mode);
    let mut file = options.open(path).map_err(|e| refuse_existing(path, e))?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if written.is_err() {
        drop(file);
        let _ = std::fs::remove_file(path);
    }
    written.with_context(|| format!("cannot write {}", path.display()))
}

/// Refuses up front what a command writing several files would refuse of one of them, so that
/// it writes none: an existing `path` without `force` (exit 2); with `force`, one that is not
/// a regular file to replace (a link, a directory, a device: exit 4).
pub(crate) fn check_absent(path: &Path, force: bool) -> anyhow::Result<()> {
    if !force && path.symlink_metadata().is_ok() {
        return Err(exists(path));
    }
    if force {
        mcppin_cli::check_replaceable(path)?;
    }
    Ok(())
}

pub(crate) fn refuse_existing(path: &Path, err: std::io::Error) -> anyhow::Error {
    if err.kind() == std::io::ErrorKind::AlreadyExists {
        exists(path)
    } else {
        anyhow::Error::new(err).context(format!("cannot create {}", path.display()))
    }
}

fn exists(path: &Path) -> anyhow::Error {
    Fail::new(
        Exit::Usage,
        format!(
            "{} exists; not overwriting it without --force",
            path.display()
        ),
    )
    .into()
}

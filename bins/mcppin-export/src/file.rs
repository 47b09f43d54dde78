//! Reading client configurations and the files they name, bounded before they are read: a
//! configuration is small, and a path may lead anywhere (a link to `/dev/zero` never ends, a
//! FIFO without a writer never answers).

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// The most bytes a client configuration (or an `envFile` it names, or the
/// `--client-capabilities` file) may hold: 4 MiB, far above any real one (docs/export.md).
pub(crate) const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unread {
    /// Opening or reading it failed (`NotFound` when there is none).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// It is no regular file: what it is instead.
    #[error("not a regular file ({0})")]
    NotRegular(&'static str),
    /// It holds more than [`MAX_CONFIG_BYTES`].
    #[error("larger than {MAX_CONFIG_BYTES} bytes, the most a configuration may hold")]
    TooLarge,
}

/// Reads a file found by looking in a usual place, or named inside a configuration (an
/// `envFile`), where a path may lead anywhere: opened without waiting (a FIFO without a
/// writer opens at once, `mcppin_cli::open_to_read`), refused unless it is a regular file (checked on the open file, so
/// a link swapped in between cannot slip through), and read to at most [`MAX_CONFIG_BYTES`].
pub(crate) fn read_found(path: &Path) -> Result<Vec<u8>, Unread> {
    let file = mcppin_cli::open_to_read(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(Unread::NotRegular(describe(kind)));
    }
    read_bounded(file)
}

/// Reads a file the command line names (any kind: `--config <(...)` is a pipe), to at most
/// [`MAX_CONFIG_BYTES`]. Opened without waiting: a FIFO nobody writes reads as empty at once.
pub(crate) fn read_named(path: &Path) -> Result<Vec<u8>, Unread> {
    read_bounded(mcppin_cli::open_to_read(path)?)
}

fn read_bounded(file: File) -> Result<Vec<u8>, Unread> {
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(Unread::TooLarge);
    }
    Ok(bytes)
}

fn describe(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

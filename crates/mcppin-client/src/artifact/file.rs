//! Reading the files an artifact record is made of: regular files only, opened without
//! blocking, bounded, hashed. Shared by every launcher's reader.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use sha2::{Digest as _, Sha256};

/// Lowercase hex.
pub(super) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The SHA-256 of the regular file at `path` (lowercase hex). Opened without blocking, so a
/// FIFO put in its place never hangs the capture; anything but a regular file is refused.
pub(super) fn sha256_file(path: &Path) -> io::Result<String> {
    let mut file = open_regular(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

/// Opens `path` for reading when it is a regular file (symbolic links followed).
pub(super) fn open_regular(path: &Path) -> io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// The whole of a regular file of at most `limit` bytes.
pub(super) fn read_bounded(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {limit} bytes"),
        ));
    }
    Ok(bytes)
}

/// A path as text for a record, or `None` when it is not UTF-8 (a record never holds a path
/// other than the one on disk).
pub(super) fn text(path: &OsStr) -> Option<&str> {
    path.to_str()
}

/// A path for a reason: escaped later, with the rest of the reason, where it is shown.
pub(super) fn shown(path: &Path) -> String {
    format!("{:?}", path.to_string_lossy())
}

//! Files the binaries write, and where they look for a signature.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use tempfile::NamedTempFile;

/// `LOCK.sig` beside `LOCK` (docs/signing.md).
///
/// # Examples
///
/// ```
/// use std::path::Path;
/// assert_eq!(mcppin_cli::sig_path(Path::new("ci/mcp.lock.json")), Path::new("ci/mcp.lock.json.sig"));
/// ```
#[must_use]
pub fn sig_path(lock: &Path) -> PathBuf {
    let mut name = OsString::from(lock.as_os_str());
    name.push(".sig");
    PathBuf::from(name)
}

/// The most bytes a public key file or a signature envelope may hold: 64 KiB, where either is
/// under 1 KiB (docs/signing.md). A repository can hold a link to `/dev/zero` in their place.
pub const MAX_SMALL_FILE: usize = 64 << 10;

/// Reads `path` to at most `limit` bytes: a file that is a link to `/dev/zero`, or merely
/// huge, is refused without growing memory beyond the bound.
///
/// # Errors
///
/// As [`std::fs::read`], and [`std::io::ErrorKind::FileTooLarge`] (message `larger than
/// LIMIT bytes`) for a file holding more than `limit` bytes.
pub fn read_at_most(path: &Path, limit: usize) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    File::open(path)?
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("larger than {limit} bytes"),
        ));
    }
    Ok(bytes)
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// reader sees the old file or the new one, never half of one. The file gets the mode a plain
/// create gives (0666 less the umask), not a temporary file's 0600: what the tools write
/// (manifests, lockfiles, signatures) holds no secret.
///
/// # Errors
///
/// The temporary file cannot be created, written or renamed; the message names `path` (or
/// its directory).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_temp(temp_beside(path, 0o666)?, bytes, path)
}

/// A temporary file (`.mcppin-*.tmp`) in the directory of `path`, created with `mode` (the
/// umask applies, as to any new file), for [`write_temp`].
///
/// # Errors
///
/// The file cannot be created; the message names the directory.
pub fn temp_beside(path: &Path, mode: u32) -> anyhow::Result<NamedTempFile> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".mcppin-").suffix(".tmp");
    // The mode is given to open(2), so the umask applies as to any new file.
    builder.permissions(std::fs::Permissions::from_mode(mode));
    builder
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))
}

/// Writes `bytes` to `temp`, syncs it and renames it to `path`.
///
/// # Errors
///
/// The write, the sync or the rename fails; the message names `path`.
pub fn write_temp(mut temp: NamedTempFile, bytes: &[u8], path: &Path) -> anyhow::Result<()> {
    let write = |file: &mut File| file.write_all(bytes).and_then(|()| file.sync_all());
    write(temp.as_file_mut()).with_context(|| format!("cannot write {}", path.display()))?;
    temp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    #[test]
    fn reads_up_to_the_limit_and_refuses_more() {
        // A link to /dev/zero grows memory without end when read whole.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_at_most(&path, 5).unwrap(), b"12345");
        let err = read_at_most(&path, 4).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::FileTooLarge);
        assert_eq!(err.to_string(), "larger than 4 bytes");
        let zero = read_at_most(Path::new("/dev/zero"), MAX_SMALL_FILE).unwrap_err();
        assert_eq!(zero.kind(), std::io::ErrorKind::FileTooLarge);
        let missing = read_at_most(&dir.path().join("none"), 1).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn replaces_a_file_whole_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        std::fs::write(&path, b"old").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["out.json"]);
        // Not a temporary file's 0600: readable by the group at least when the umask allows.
        let mode = std::fs::metadata(&path).unwrap().mode() & 0o777;
        assert_ne!(mode, 0o600, "{mode:o}");
    }

    #[test]
    fn names_the_file_it_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("out.json");
        let err = write_atomic(&path, b"x").unwrap_err();
        assert!(
            format!("{err:#}").starts_with(&format!(
                "cannot create a temporary file in {}",
                dir.path().join("missing").display()
            )),
            "{err:#}"
        );
    }
}

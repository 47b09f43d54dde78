//! Files the binaries write, and where they look for a signature.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow, bail};

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

/// The most bytes a lockfile or a manifest may hold: 256 MiB, some fifty times a lockfile of
/// 10,000 tools (docs/formats.md). Reading one is bounded like reading a key, so a lockfile
/// replaced by a link to `/dev/zero` is refused instead of growing memory without end.
pub const MAX_DOCUMENT: usize = 256 << 20;

/// Reads `path` to at most `limit` bytes: a file that is a link to `/dev/zero`, or merely
/// huge, is refused without growing memory beyond the bound.
///
/// # Errors
///
/// As [`std::fs::read`], and [`std::io::ErrorKind::FileTooLarge`] (message `larger than
/// LIMIT bytes`) for a file holding more than `limit` bytes.
pub fn read_at_most(path: &Path, limit: usize) -> std::io::Result<Vec<u8>> {
    let file = File::open(path)?;
    // The size a regular file says it has, up to the bound, as the first capacity: the usual
    // file is read without growing the buffer (a device says nothing and grows it as read).
    let size = file
        .metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map_or(0, |meta| meta.len());
    let mut bytes = Vec::new();
    // Without room for the whole, the reading grows it, and a failure is reported there.
    let _ =
        bytes.try_reserve_exact(usize::try_from(size).map_or(limit, |size| size.min(limit)) + 1);
    file.take(limit as u64 + 1).read_to_end(&mut bytes)?;
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
/// A link is followed: the file it names is replaced and the link stays. A device or a pipe
/// (`/dev/null`, `/dev/stdout` on a terminal or a pipe, a FIFO) is written in place, never
/// renamed over: replacing it would put a plain file where the device was (docs/cli.md).
///
/// # Errors
///
/// The temporary file cannot be created, written or renamed; `path` is a directory or a link
/// to nothing; the message names `path` (or its directory).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    match destination(path)? {
        Destination::Replace(file) => replace(&file, bytes, 0o666),
        Destination::InPlace => {
            let write = |mut file: File| file.write_all(bytes);
            std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(write)
                .with_context(|| format!("cannot write {}", path.display()))
        }
    }
}

/// Replaces the directory entry `path` with a new file holding `bytes`, through a temporary
/// file and a rename, whatever the entry is: a link is replaced, never followed. For a file
/// only the program keeps (the guard's state): a link someone put in its place must not
/// redirect the write to the file it names.
///
/// # Errors
///
/// As [`write_atomic`].
pub fn replace_entry(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    replace(path, bytes, 0o666)
}

/// Replaces `path` with a new file of mode 0600 holding `bytes`, through a temporary file and
/// a rename, so that the secret is never readable by others, not even for a moment. A link is
/// followed as in [`write_atomic`]; anything but a regular file (a device, a pipe) is refused,
/// since a secret written there would leave the machine's files.
///
/// # Errors
///
/// As [`write_atomic`], and `path` is neither a regular file nor absent.
pub fn replace_secret(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    match destination(path)? {
        Destination::Replace(file) => replace(&file, bytes, 0o600),
        Destination::InPlace => bail!(
            "cannot write {}: not a regular file, and a secret is written only to one",
            path.display()
        ),
    }
}

/// Where a write to a path goes, decided before anything is written.
enum Destination {
    /// A regular file (the one a link names), or nothing yet: replaced through a rename.
    Replace(PathBuf),
    /// A device or a pipe: opened and written, never replaced.
    InPlace,
}

fn destination(path: &Path) -> anyhow::Result<Destination> {
    let fail = || format!("cannot write {}", path.display());
    let found = match path.symlink_metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Destination::Replace(path.to_owned()));
        }
        other => other.with_context(fail)?,
    };
    // What the path names once every link is followed (`/dev/stdout` is a link to a link).
    let target = if found.file_type().is_symlink() {
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                bail!("cannot write {}: a link to nothing", path.display())
            }
            other => other.with_context(fail)?,
        }
    } else {
        found.clone()
    };
    if target.is_dir() {
        bail!("cannot write {}: a directory", path.display());
    }
    if !target.is_file() {
        return Ok(Destination::InPlace);
    }
    if !found.file_type().is_symlink() {
        return Ok(Destination::Replace(path.to_owned()));
    }
    // The file the link names; a link through /proc to a deleted file has no name to replace.
    match std::fs::canonicalize(path) {
        Ok(file) => Ok(Destination::Replace(file)),
        Err(_) => Ok(Destination::InPlace),
    }
}

/// Writes `bytes` to a temporary file of `mode` (less the umask) beside `path`, syncs it and
/// renames it to `path`.
fn replace(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".mcppin-").suffix(".tmp");
    // The mode is given to open(2), so the umask applies as to any new file.
    builder.permissions(std::fs::Permissions::from_mode(mode));
    // tempfile's error adds the path in Rust's debug notation; the message names it once, in
    // the caller's notation, and keeps only what went wrong.
    let mut temp = builder.tempfile_in(dir).map_err(|e| {
        anyhow!(
            "cannot create a temporary file in {}: {}",
            dir.display(),
            std::io::Error::from(e.kind())
        )
    })?;
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
        // Named once, in the message's own notation (no `at path "..."` added by tempfile).
        assert_eq!(
            format!("{err:#}"),
            format!(
                "cannot create a temporary file in {}: entity not found",
                dir.path().join("missing").display()
            )
        );
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    fn fifo(path: &Path) {
        let made = mcppin_testkit::status(std::process::Command::new("mkfifo").arg(path));
        assert!(made.unwrap().success());
    }

    #[test]
    fn writes_a_pipe_in_place_and_never_puts_a_file_where_it_was() {
        use std::os::unix::fs::FileTypeExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pipe");
        fifo(&path);
        // Opened for reading and writing, so neither end waits for the other.
        let mut reader = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        write_atomic(&path, b"new").unwrap();
        let kind = std::fs::symlink_metadata(&path).unwrap().file_type();
        assert!(kind.is_fifo(), "{kind:?}");
        let mut got = [0; 3];
        reader.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"new");
        assert_eq!(names(dir.path()), ["pipe"]);
        // The null device, the other common case, is written the same way (a character device).
        write_atomic(Path::new("/dev/null"), b"new").unwrap();
        assert!(
            std::fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
    }

    #[test]
    fn follows_a_link_and_replaces_the_file_it_names() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        let file = dir.path().join("real").join("mcp.lock.json");
        std::fs::write(&file, b"old").unwrap();
        let link = dir.path().join("mcp.lock.json");
        std::os::unix::fs::symlink("real/mcp.lock.json", &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
        assert_eq!(names(&dir.path().join("real")), ["mcp.lock.json"]);
        assert_eq!(names(dir.path()), ["mcp.lock.json", "real"]);
        // A plain file is replaced as before: a new file, not the old one written over.
        let before = std::fs::metadata(&file).unwrap().ino();
        write_atomic(&file, b"newer").unwrap();
        assert_ne!(std::fs::metadata(&file).unwrap().ino(), before);
        assert_eq!(std::fs::read(&file).unwrap(), b"newer");
    }

    #[test]
    fn an_entry_of_its_own_is_replaced_and_a_link_there_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, b"keep").unwrap();
        let state = dir.path().join("state.json");
        std::os::unix::fs::symlink(&elsewhere, &state).unwrap();
        replace_entry(&state, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&state).unwrap().is_file());
        assert_eq!(std::fs::read(&state).unwrap(), b"new");
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"keep");
    }

    #[test]
    fn refuses_a_link_to_nothing_and_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("dangling");
        std::os::unix::fs::symlink("gone", &link).unwrap();
        let err = write_atomic(&link, b"x").unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            format!("cannot write {}: a link to nothing", link.display())
        );
        assert_eq!(names(dir.path()), ["dangling"]);
        let err = write_atomic(dir.path(), b"x").unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            format!("cannot write {}: a directory", dir.path().display())
        );
    }

    #[test]
    fn a_secret_replaces_only_a_regular_file_and_gets_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("pipe");
        fifo(&pipe);
        let err = replace_secret(&pipe, b"key").unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            format!(
                "cannot write {}: not a regular file, and a secret is written only to one",
                pipe.display()
            )
        );
        let file = dir.path().join("key.pem");
        std::fs::write(&file, b"old").unwrap();
        let link = dir.path().join("link.pem");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        replace_secret(&link, b"key").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"key");
        assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}

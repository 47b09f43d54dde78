//! Files the binaries write, and where they look for a signature.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use rustix::fs::{Mode, OFlags};

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

/// Reads `path` to at most `limit` bytes: a regular file that says it is larger is refused
/// before anything is read, and a file that is a link to `/dev/zero`, or grows as it is read,
/// is refused without growing memory beyond the bound.
///
/// # Errors
///
/// As [`std::fs::read`], and [`std::io::ErrorKind::FileTooLarge`] (message `larger than
/// LIMIT bytes`) for a file holding more than `limit` bytes.
pub fn read_at_most(path: &Path, limit: usize) -> std::io::Result<Vec<u8>> {
    let file = open_to_read(path)?;
    // The size a regular file says it has: over the bound it is refused unread, under it the
    // buffer is sized once (a device says nothing, and the buffer grows as it is read).
    let size = file
        .metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map_or(0, |meta| meta.len());
    if size > limit as u64 {
        return Err(too_large(limit));
    }
    #[expect(clippy::cast_possible_truncation, reason = "at most limit, a usize")]
    read_at_most_from(file, limit, size as usize)
}

/// Opens `path` for reading without waiting for a writer: a pipe put where a file belongs (a
/// lockfile, a signature, a key, a log) reads as empty at once, where a plain open would wait
/// for a writer without end, past every signal but SIGKILL. Reads then wait as usual.
///
/// # Errors
///
/// As [`File::open`].
pub fn open_to_read(path: &Path) -> std::io::Result<File> {
    open_without_waiting(path, OFlags::RDONLY, Mode::empty())
}

/// Opens `path` to append to it, creating it (mode 0666 less the umask), without waiting for a
/// reader: a pipe nobody reads is refused at once (`a pipe nobody reads`).
///
/// # Errors
///
/// As [`std::fs::OpenOptions::open`].
pub fn open_to_append(path: &Path) -> std::io::Result<File> {
    let flags = OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE;
    open_without_waiting(path, flags, Mode::from_raw_mode(0o666))
}

/// Opens `path` with `flags` without waiting for the other end of a pipe, then lets reads and
/// writes wait as usual (`O_NONBLOCK` for the open only). A pipe nobody reads, opened to write,
/// is refused with `a pipe nobody reads` (ENXIO).
fn open_without_waiting(path: &Path, flags: OFlags, mode: Mode) -> std::io::Result<File> {
    let opening = flags | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = rustix::fs::open(path, opening, mode).map_err(|e| {
        if e == rustix::io::Errno::NXIO && flags.contains(OFlags::WRONLY) {
            std::io::Error::other("a pipe nobody reads")
        } else {
            std::io::Error::from(e)
        }
    })?;
    rustix::fs::fcntl_setfl(&fd, flags & OFlags::APPEND)?;
    Ok(File::from(fd))
}

/// Reads `reader` to its end, at most `limit` bytes, into a buffer of `capacity` to begin
/// with (standard input, or a file [`read_at_most`] opened).
///
/// # Errors
///
/// As [`Read::read_to_end`], and [`std::io::ErrorKind::FileTooLarge`] for more than `limit`
/// bytes.
pub fn read_at_most_from(
    reader: impl Read,
    limit: usize,
    capacity: usize,
) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    // Without room for the whole, the reading grows it, and a failure is reported there.
    let _ = bytes.try_reserve_exact(capacity.min(limit).saturating_add(1));
    reader
        .take((limit as u64).saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

fn too_large(limit: usize) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::FileTooLarge,
        format!("larger than {limit} bytes"),
    )
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// reader sees the old file or the new one, never half of one. The file gets the mode a plain
/// create gives (0666 less the umask), not a temporary file's 0600: what the tools write
/// (manifests, lockfiles, signatures) holds no secret.
///
/// A character device or a pipe named as such (`/dev/null`, a FIFO) is written in place,
/// never renamed over: that would put a plain file where the device was. A link is refused,
/// never followed: a link committed to a repository must not turn the write into one of a
/// file elsewhere (docs/cli.md).
///
/// # Errors
///
/// The temporary file cannot be created, written or renamed; `path` is a link, a directory
/// or another kind of file (a block device, a socket); the message names `path` (or its
/// directory).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let fail = || format!("cannot write {}", path.display());
    match entry(path)? {
        Entry::Absent | Entry::File => replace(path, bytes, 0o666),
        Entry::Device => {
            // Opened without following a link and checked on the open file: what is written to
            // is what was checked, whatever took the path's place since. A pipe nobody reads is
            // refused at once, where a plain open would wait, past any signal, for a reader.
            let flags = OFlags::WRONLY | OFlags::NOFOLLOW;
            let mut file = open_without_waiting(path, flags, Mode::empty()).with_context(fail)?;
            let kind = file.metadata().with_context(fail)?.file_type();
            if kind.is_file() {
                return replace(path, bytes, 0o666);
            }
            if !(kind.is_char_device() || kind.is_fifo()) {
                bail!("{}: {}", fail(), Entry::Other.refusal());
            }
            file.write_all(bytes).with_context(fail)
        }
        refused => bail!("{}: {}", fail(), refused.refusal()),
    }
}

/// Replaces the directory entry `path` with a new file holding `bytes`, through a temporary
/// file and a rename, whatever the entry is: a link is replaced, never followed. For a file
/// only the program keeps (the guard's state), in a directory whose entries someone else may
/// have put there.
///
/// # Errors
///
/// The temporary file cannot be created, written or renamed; the message names `path` (or
/// its directory).
pub fn replace_entry(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    replace(path, bytes, 0o666)
}

/// Replaces `path` with a new file of mode 0600 holding `bytes`, through a temporary file and
/// a rename, so that the secret is never readable by others, not even for a moment. Only a
/// regular file or nothing is replaced: a link, a device or a pipe is refused, since a secret
/// written there would leave the file the user named.
///
/// # Errors
///
/// As [`write_atomic`], and `path` is neither a regular file nor absent.
pub fn replace_secret(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    check_replaceable(path)?;
    replace(path, bytes, 0o600)
}

/// Refuses `path` when [`replace_secret`] would: a command writing several files checks each
/// first, so that it writes none of them rather than some.
///
/// # Errors
///
/// `path` is neither a regular file nor absent; the message names it.
pub fn check_replaceable(path: &Path) -> anyhow::Result<()> {
    match entry(path)? {
        Entry::Absent | Entry::File => Ok(()),
        Entry::Device => bail!(
            "cannot write {}: not a regular file, and a secret is written only to one",
            path.display()
        ),
        refused => bail!("cannot write {}: {}", path.display(), refused.refusal()),
    }
}

/// What a path names, not following a link.
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    Absent,
    File,
    Link,
    Directory,
    /// A character device or a pipe.
    Device,
    /// A block device or a socket.
    Other,
}

impl Entry {
    fn refusal(&self) -> &'static str {
        match self {
            Self::Link => "a link, and no file is written through one (name the file it links to)",
            Self::Directory => "a directory",
            _ => "neither a regular file, a character device nor a pipe",
        }
    }
}

fn entry(path: &Path) -> anyhow::Result<Entry> {
    let kind = match path.symlink_metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Entry::Absent),
        other => other
            .with_context(|| format!("cannot write {}", path.display()))?
            .file_type(),
    };
    Ok(if kind.is_file() {
        Entry::File
    } else if kind.is_symlink() {
        Entry::Link
    } else if kind.is_dir() {
        Entry::Directory
    } else if kind.is_char_device() || kind.is_fifo() {
        Entry::Device
    } else {
        Entry::Other
    })
}

/// Writes `bytes` to a temporary file of `mode` (less the umask) beside `path`, syncs it and
/// renames it to `path`.
fn replace(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    // Created here rather than by tempfile, whose error would add the path in Rust's debug
    // notation and hide the system's error code. The mode is given to open(2), so the umask
    // applies as to any new file.
    let create = |temp: &Path| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(temp)
    };
    let mut temp = tempfile::Builder::new()
        .prefix(".mcppin-")
        .suffix(".tmp")
        .make_in(dir, create)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
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
        // A stream says no size: it is read up to the bound, and one byte more refused.
        assert_eq!(read_at_most_from(&b"1234"[..], 4, 0).unwrap(), b"1234");
        let err = read_at_most_from(&b"12345"[..], 4, 0).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::FileTooLarge);
    }

    #[test]
    fn a_pipe_nobody_writes_is_read_as_empty_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.lock.json.sig");
        fifo(&path);
        let (sent, received) = std::sync::mpsc::channel();
        std::thread::spawn(move || sent.send(read_at_most(&path, MAX_SMALL_FILE).unwrap()));
        let read = received
            .recv_timeout(mcppin_testkit::HANG)
            .expect("waited on the pipe");
        assert_eq!(read, b"");
    }

    #[test]
    fn a_socket_read_is_refused_in_the_system_s_words() {
        // ENXIO from a socket is no pipe without a reader: that wording is for writing only.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let err = read_at_most(&path, MAX_SMALL_FILE).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(6), "{err}");
    }

    #[test]
    fn a_file_that_says_it_is_too_large_is_refused_unread() {
        // A sparse file of 1 TiB: refused from its size alone, where reading it would take
        // minutes before the bound.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge");
        let file = File::create(&path).unwrap();
        file.set_len(1 << 40).unwrap();
        let err = read_at_most(&path, MAX_DOCUMENT).unwrap_err();
        assert_eq!(err.to_string(), "larger than 268435456 bytes");
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
        // Named once, in the message's own notation (no `at path "..."` added by tempfile),
        // and the system's own words for what went wrong.
        assert_eq!(
            format!("{err:#}"),
            format!(
                "cannot create a temporary file in {}: No such file or directory (os error 2)",
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
    }

    #[test]
    fn refuses_a_pipe_nobody_reads_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pipe");
        fifo(&path);
        let (sent, received) = std::sync::mpsc::channel();
        let target = path.clone();
        std::thread::spawn(move || {
            sent.send(format!("{:#}", write_atomic(&target, b"x").unwrap_err()))
        });
        let said = received
            .recv_timeout(mcppin_testkit::HANG)
            .expect("waited for a reader");
        assert_eq!(
            said,
            format!("cannot write {}: a pipe nobody reads", path.display())
        );
    }

    #[test]
    fn refuses_a_link_wherever_it_leads_and_leaves_both_as_they_were() {
        // A link committed to a repository (`mcp.lock.json.sig -> ~/.ssh/authorized_keys`)
        // must not turn the write into one of the file it names.
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("authorized_keys");
        std::fs::write(&elsewhere, b"keep").unwrap();
        fifo(&dir.path().join("pipe"));
        for (name, target) in [
            ("to-file", elsewhere.clone()),
            ("to-pipe", dir.path().join("pipe")),
            ("to-nothing", dir.path().join("gone")),
            ("to-dir", dir.path().to_owned()),
        ] {
            let link = dir.path().join(name);
            std::os::unix::fs::symlink(&target, &link).unwrap();
            for write in [write_atomic, replace_secret] {
                let err = write(&link, b"new").unwrap_err();
                assert_eq!(
                    format!("{err:#}"),
                    format!(
                        "cannot write {}: a link, and no file is written through one (name the \
                         file it links to)",
                        link.display()
                    )
                );
                assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
            }
        }
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"keep");
        assert_eq!(
            names(dir.path()),
            [
                "authorized_keys",
                "pipe",
                "to-dir",
                "to-file",
                "to-nothing",
                "to-pipe"
            ]
        );
    }

    #[test]
    fn replaces_a_plain_file_with_a_new_one_and_refuses_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.lock.json");
        std::fs::write(&file, b"old").unwrap();
        let before = std::fs::metadata(&file).unwrap().ino();
        write_atomic(&file, b"new").unwrap();
        assert_ne!(std::fs::metadata(&file).unwrap().ino(), before);
        assert_eq!(std::fs::read(&file).unwrap(), b"new");
        let err = write_atomic(dir.path(), b"x").unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            format!("cannot write {}: a directory", dir.path().display())
        );
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
    fn a_secret_replaces_only_a_regular_file_and_gets_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("pipe");
        fifo(&pipe);
        // Refused without opening it: nobody reads this pipe, an open for writing would wait.
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
        replace_secret(&file, b"key").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"key");
        assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);
    }
}

//! The approval files of `mcppin verify` and `mcppin-guard`, read in one place: the
//! lockfile, the signature beside it (`LOCK.sig`) and the trusted public keys, checked as one
//! approval by [`mcppin_sign::Approval::check`], so that both binaries read the same bytes
//! the same way and say the same words about them (docs/cli.md, docs/guard.md).

use std::path::{Path, PathBuf};
use std::time::Duration;

use mcppin_core::Digest;
use mcppin_sign::{
    Approval, Approved, Freshness, PublicKey, Refused, Signature, Subject, Timestamp,
};

use crate::fs::{MAX_DOCUMENT, MAX_SMALL_FILE, read_at_most, sig_path};

/// Where the approval of a lockfile comes from, as a command line gives it.
#[derive(Clone, Copy, Debug)]
pub struct Files<'a> {
    /// The lockfile.
    pub lock: &'a Path,
    /// The trusted public keys (`--pubkey`, SPKI PEM): when any is given, a signature by one
    /// of them is required.
    pub pubkeys: &'a [PathBuf],
    /// The lowest `approval_serial` accepted (`--min-serial`).
    pub min_serial: Option<u64>,
    /// The oldest a signature may be (`--max-signature-age`), and the time of the check.
    pub max_age: Option<(Duration, Timestamp)>,
}

/// A lockfile that passed its approval, with what was read on the way.
#[derive(Debug)]
pub struct Read {
    /// The approval: the lockfile and what its signature check found.
    pub approved: Approved,
    /// The lockfile's bytes, as read.
    pub lockfile: Vec<u8>,
    /// Where its signature is looked for (`LOCK.sig`).
    pub sig_path: PathBuf,
    /// A signature beside the lockfile that could not be read while no key was given: it was
    /// not checked, and this line says so (for stderr, after the binary's name).
    pub unread_signature: Option<String>,
}

impl Read {
    /// The line for stderr saying what the signature check found (`mcp.lock.json.sig:
    /// verified: key ...`), after the binary's name; `None` for an unsigned lockfile.
    #[must_use]
    pub fn note(&self) -> Option<String> {
        match self.approved.signature {
            Signature::Unsigned => None,
            _ => Some(format!(
                "{}: {}",
                self.sig_path.display(),
                self.approved.signature
            )),
        }
    }
}

/// Reads the lockfile, the signature beside it and the keys of `files`, and checks them as an
/// approval. `hint` says what to add to the message about a file that cannot be read, given
/// the flag that named it (`--lock`, `--pubkey`) and the file: the guard explains a relative
/// path there, `mcppin verify` adds nothing.
///
/// The lockfile is read to at most [`MAX_DOCUMENT`] bytes, the signature and the keys to at
/// most [`MAX_SMALL_FILE`]. Without a key, a signature that cannot be read is not needed: it
/// is reported in [`Read::unread_signature`], not refused.
///
/// # Errors
///
/// Each names the file: a lockfile, a signature (when a key is given) or a key that cannot be
/// read, a key that is not an Ed25519 public key, and every refusal of
/// [`mcppin_sign::Approval::check`] (the lockfile does not read; a missing, malformed,
/// foreign, invalid, stale or other lockfile's signature; a serial below the floor). None
/// carries an exit code: each binary's is 4 for all of them.
pub fn read(files: &Files<'_>, hint: impl Fn(&str, &Path) -> String) -> anyhow::Result<Read> {
    let (read, ()) = read_with(files, hint, |approval| {
        approval.check().map(|approved| (approved, ()))
    })?;
    Ok(read)
}

/// [`read`], with the lockfile's digest ([`mcppin_sign::Approval::check_recorded`]) for a
/// caller that names it in a record of what runs under the approval (the guard's log and
/// state); `read` takes it only to check a signature.
///
/// # Errors
///
/// Those of [`read`].
pub fn read_recorded(
    files: &Files<'_>,
    hint: impl Fn(&str, &Path) -> String,
) -> anyhow::Result<(Read, Digest)> {
    read_with(files, hint, |approval| approval.check_recorded())
}

/// [`read`], the approval checked by `check`, which may return something beside it.
fn read_with<T>(
    files: &Files<'_>,
    hint: impl Fn(&str, &Path) -> String,
    check: impl FnOnce(&Approval<'_>) -> Result<(Approved, T), Refused>,
) -> anyhow::Result<(Read, T)> {
    let lock = files.lock;
    let lockfile = read_at_most(lock, MAX_DOCUMENT).map_err(|e| {
        anyhow::anyhow!(
            "cannot read {}: {e}{}",
            lock.display(),
            hint("--lock", lock)
        )
    })?;
    let sig_path = sig_path(lock);
    let mut unread_signature = None;
    let signature = match read_at_most(&sig_path, MAX_SMALL_FILE) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            let message = format!(
                "cannot read {}: {e}{}",
                sig_path.display(),
                hint("--lock", &sig_path)
            );
            // Without a key the outcome does not depend on the signature (docs/cli.md): one
            // that cannot be read is said to be not checked, like one that does not hold.
            if !files.pubkeys.is_empty() {
                return Err(anyhow::anyhow!(message));
            }
            unread_signature = Some(format!("{message}: not checked (no --pubkey)"));
            None
        }
    };
    let keys = files
        .pubkeys
        .iter()
        .map(|path| read_public_key(path, &hint))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let approval = Approval {
        lockfile: &lockfile,
        signature: signature.as_deref(),
        keys: &keys,
        min_serial: files.min_serial,
        freshness: files
            .max_age
            .map(|(max_age, now)| Freshness { max_age, now }),
    };
    let (approved, more) = check(&approval).map_err(|refused| {
        let file = match refused.subject() {
            Subject::Signature => sig_path.as_path(),
            _ => lock,
        };
        anyhow::anyhow!("{}: {refused}", file.display())
    })?;
    Ok((
        Read {
            approved,
            lockfile,
            sig_path,
            unread_signature,
        },
        more,
    ))
}

/// Reads a PEM public key (`--pubkey`); `hint` adds a sentence to the error of a file that
/// cannot be read, given the flag's name and the path.
pub fn read_public_key(
    path: &Path,
    hint: &impl Fn(&str, &Path) -> String,
) -> anyhow::Result<PublicKey> {
    let text = read_at_most(path, MAX_SMALL_FILE)
        .and_then(|bytes| {
            String::from_utf8(bytes)
                .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
        })
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot read public key {}: {e}{}",
                path.display(),
                hint("--pubkey", path)
            )
        })?;
    PublicKey::from_pem(&text).map_err(|e| anyhow::anyhow!("public key {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: &str = r#"{"approval_serial": 1, "schema_version": 2, "servers": []}"#;

    fn files<'a>(lock: &'a Path, pubkeys: &'a [PathBuf]) -> Files<'a> {
        Files {
            lock,
            pubkeys,
            min_serial: None,
            max_age: None,
        }
    }

    fn none(_: &str, _: &Path) -> String {
        String::new()
    }

    #[test]
    fn an_unsigned_lockfile_is_an_approval_without_keys() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("mcp.lock.json");
        std::fs::write(&lock, LOCK).unwrap();
        let read = read(&files(&lock, &[]), none).unwrap();
        assert!(matches!(read.approved.signature, Signature::Unsigned));
        assert_eq!(read.lockfile, LOCK.as_bytes());
        assert_eq!(read.note(), None);
        assert_eq!(read.unread_signature, None);
    }

    #[test]
    fn a_signature_that_cannot_be_read_is_refused_with_keys_and_noted_without() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("mcp.lock.json");
        std::fs::write(&lock, LOCK).unwrap();
        let sig = dir.path().join("mcp.lock.json.sig");
        std::fs::write(&sig, vec![b' '; MAX_SMALL_FILE + 1]).unwrap();
        let key = dir.path().join("k.pub");
        std::fs::write(&key, "not a key").unwrap();
        let hint = |flag: &str, _: &Path| format!(" (hint for {flag})");
        let err = read(&files(&lock, &[key]), hint).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot read {}: larger than 65536 bytes (hint for --lock)",
                sig.display()
            )
        );
        let read = read(&files(&lock, &[]), hint).unwrap();
        assert_eq!(
            read.unread_signature.unwrap(),
            format!(
                "cannot read {}: larger than 65536 bytes (hint for --lock): not checked (no \
                 --pubkey)",
                sig.display()
            )
        );
    }

    #[test]
    fn each_file_that_fails_is_named_with_its_hint() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("mcp.lock.json");
        let hint = |flag: &str, _: &Path| format!(" (hint for {flag})");
        let err = read(&files(&lock, &[]), hint).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("cannot read {}: ", lock.display())),
            "{err}"
        );
        assert!(err.ends_with(" (hint for --lock)"), "{err}");
        std::fs::write(&lock, LOCK).unwrap();
        let key = dir.path().join("k.pub");
        let err = read(&files(&lock, std::slice::from_ref(&key)), hint)
            .unwrap_err()
            .to_string();
        assert!(err.ends_with(" (hint for --pubkey)"), "{err}");
        std::fs::write(&key, "not a key").unwrap();
        let err = read(&files(&lock, std::slice::from_ref(&key)), hint)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!("public key {}: ", key.display())),
            "{err}"
        );
        std::fs::write(&lock, "{").unwrap();
        let err = read(&files(&lock, &[]), none).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{}: ", lock.display())), "{err}");
    }
}

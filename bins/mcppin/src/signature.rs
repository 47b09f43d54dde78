//! The signature check of `mcppin verify`: `--pubkey`, `--min-serial`, `--max-signature-age`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Context;
use mcppin_core::lockfile::Lockfile;
use mcppin_core::{Digest, Value};
use mcppin_sign::{Freshness, PublicKey, Refusal, Timestamp};

use crate::exit::{Exit, Fail};
use crate::input;

/// The signature flags of `mcppin verify`.
#[derive(Debug, clap::Args)]
pub(crate) struct Flags {
    /// Require a valid signature (LOCK.sig) by this public key (SPKI PEM); repeat to accept
    /// any of several keys during a rotation. A missing, malformed, foreign or invalid
    /// signature exits 4.
    #[arg(long, value_name = "K.pub")]
    pubkey: Vec<PathBuf>,
    /// Refuse (exit 4) a lockfile whose approval_serial is lower: an older approval put back.
    #[arg(long, value_name = "N")]
    min_serial: Option<u64>,
    /// Refuse (exit 4) a signature older than this (720h, 30d, 2weeks); needs --pubkey.
    #[arg(long, value_name = "DURATION", requires = "pubkey", value_parser = parse_age)]
    max_signature_age: Option<Duration>,
    /// Fix the clock (RFC 3339 UTC, for tests).
    #[arg(long, hide = true, value_name = "RFC3339")]
    now: Option<Timestamp>,
}

/// What the signature check found, for the report.
#[derive(Debug, Eq, PartialEq)]
pub(crate) enum Outcome {
    /// No `--pubkey` and no signature beside the lockfile.
    Unsigned,
    /// No `--pubkey`: the signature beside the lockfile was not checked.
    Unchecked {
        /// What the envelope claims, unverified: its key and date, or why it is unreadable.
        claim: String,
    },
    /// The signature holds.
    Verified {
        /// The key that signed it.
        key: Digest,
        /// When it was signed.
        signed_at: Timestamp,
    },
}

impl Outcome {
    /// One line for stderr and the text report.
    pub(crate) fn note(&self, lock: &Path) -> Option<String> {
        let sig = input::name(&sig_path(lock));
        match self {
            Self::Unsigned => None,
            Self::Unchecked { claim } => Some(format!(
                "signature {sig} not checked (no --pubkey given); it claims {claim}"
            )),
            Self::Verified { key, signed_at } => Some(format!(
                "signature {sig} verified: key {key}, signed at {signed_at}"
            )),
        }
    }
}

/// The digest of a lockfile's canonical form, when a signature is to be checked.
pub(crate) type LockDigest = Option<Result<Digest, mcppin_core::Error>>;

impl Flags {
    /// The digest of the lockfile's canonical form, which a signature names, taken from the
    /// value as read (cheaper than rebuilding it from the [`Lockfile`]); `None` when no
    /// signature is to be checked.
    pub(crate) fn lock_digest(&self, lock: &Value) -> LockDigest {
        (!self.pubkey.is_empty())
            .then(|| Ok(Digest::of_bytes(&mcppin_core::canonicalize_exact(lock))))
    }
}

/// Checks the signature beside the lockfile at `path` and the lockfile's serial by the flags.
/// `lock` is the lockfile read from `path` and `lock_digest` what [`Flags::lock_digest`] gave
/// for the value it was read from (when `None`, the digest is rebuilt from `lock`).
///
/// # Errors
///
/// A [`Fail`] with exit 4 naming the refusal (missing, malformed, foreign key, invalid,
/// another lockfile, stale, serial below the floor), or exit 4 when a public key or the
/// signature file cannot be read.
pub(crate) fn check(
    args: &Flags,
    path: &Path,
    lock: &Lockfile,
    lock_digest: LockDigest,
) -> anyhow::Result<Outcome> {
    let sig_path = sig_path(path);
    let envelope = read_optional(&sig_path)?;
    let outcome = if args.pubkey.is_empty() {
        match envelope {
            None => Outcome::Unsigned,
            Some(bytes) => Outcome::Unchecked {
                claim: match mcppin_sign::Envelope::parse(&bytes) {
                    Ok(env) => format!(
                        "key {} at {}",
                        env.public_key_fingerprint(),
                        env.signed_at()
                    ),
                    Err(err) => format!("nothing readable: {err}"),
                },
            },
        }
    } else {
        let keys = args
            .pubkey
            .iter()
            .map(|path| read_public_key(path))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let lock_digest = lock_digest
            .unwrap_or_else(|| lock.digest())
            .map_err(|source| {
                crate::cmd::sign::lock_error(path, mcppin_sign::Error::Lockfile { source })
            })?;
        let freshness = match args.max_signature_age {
            None => None,
            Some(max_age) => Some(Freshness {
                max_age,
                now: now(args.now)?,
            }),
        };
        let env = mcppin_sign::verify(envelope.as_deref(), lock_digest, &keys, freshness)
            .map_err(|err| refusal(&sig_path, &err))?;
        Outcome::Verified {
            key: env.public_key_fingerprint(),
            signed_at: env.signed_at(),
        }
    };
    if let Some(min) = args.min_serial {
        mcppin_sign::check_serial(lock.approval_serial, min).map_err(|err| refusal(path, &err))?;
    }
    Ok(outcome)
}

/// The error for a refused signature: exit 4, saying which refusal and why.
fn refusal(path: &Path, err: &mcppin_sign::Error) -> anyhow::Error {
    let what = err.refusal().unwrap_or(Refusal::Malformed);
    Fail::new(
        Exit::Unreadable,
        format!("{what}: {}: {err}", input::name(path)),
    )
    .into()
}

fn read_public_key(path: &Path) -> anyhow::Result<PublicKey> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read public key {}", path.display()))?;
    PublicKey::from_pem(&text).with_context(|| format!("public key {}", path.display()))
}

/// The signature file's bytes, or `None` when there is none.
fn read_optional(path: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::Error::new(e).context(format!("cannot read {}", path.display()))),
    }
}

fn now(fixed: Option<Timestamp>) -> anyhow::Result<Timestamp> {
    match fixed {
        Some(now) => Ok(now),
        None => Timestamp::try_from(SystemTime::now()).context("the system clock"),
    }
}

fn parse_age(text: &str) -> Result<Duration, humantime::DurationError> {
    humantime::parse_duration(text)
}

/// `LOCK.sig` beside `LOCK`.
pub(crate) fn sig_path(lock: &Path) -> PathBuf {
    crate::cmd::sign::sig_path(lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_durations_the_docs_name() {
        for (text, seconds) in [
            ("720h", 720 * 3600),
            ("30d", 30 * 86_400),
            ("2weeks", 14 * 86_400),
            ("1day 12h", 36 * 3600),
        ] {
            assert_eq!(
                parse_age(text).unwrap(),
                Duration::from_secs(seconds),
                "{text}"
            );
        }
        assert!(parse_age("30").is_err());
        assert!(parse_age("soon").is_err());
    }
}

//! The approval of `mcppin verify`: the files and flags (`--pubkey`, `--min-serial`,
//! `--max-signature-age`) handed to [`mcppin_sign::Approval::check`].

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Context;
use mcppin_cli::approval;
use mcppin_core::report::{SignatureStatus, Signer};
use mcppin_sign::{Approved, Claim, Signature, Timestamp};

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
    #[arg(long, value_name = "DURATION", requires = "pubkey", value_parser = mcppin_cli::duration::parse)]
    max_signature_age: Option<Duration>,
    /// Fix the clock (RFC 3339 UTC, for tests).
    #[arg(long, hide = true, value_name = "RFC3339")]
    now: Option<Timestamp>,
}

/// Reads the lockfile at `path`, the signature beside it and the keys, and checks them as an
/// approval by the flags ([`mcppin_cli::approval::read`], the reading the guard makes too);
/// says on stderr when a signature beside it could not be read and was not needed.
///
/// # Errors
///
/// Exit 4 naming the file and the refusal (a lockfile that does not read, a missing,
/// malformed, foreign, invalid, stale or other lockfile's signature, a serial below the
/// floor); exit 4 when a file cannot be read, a public key is not one or the clock cannot be
/// read.
pub(crate) fn approve(args: &Flags, path: &Path) -> anyhow::Result<approval::Read> {
    let max_age = match args.max_signature_age {
        None => None,
        Some(max_age) => Some((max_age, now(args.now)?)),
    };
    let files = approval::Files {
        lock: path,
        pubkeys: &args.pubkey,
        min_serial: args.min_serial,
        max_age,
    };
    let read = approval::read(&files, |_, _| String::new())?;
    if let Some(unread) = &read.unread_signature {
        eprintln!("mcppin: {}", mcppin_core::escape_non_ascii(unread));
    }
    Ok(read)
}

/// What the JSON and SARIF reports say about the signature of `approved`: its status, with
/// the age of a verified signature at the time of the check (`--now`, else the clock).
///
/// # Errors
///
/// Exit 4 when the clock cannot be read (before 1970 or past 9999).
pub(crate) fn status(args: &Flags, approved: &Approved) -> anyhow::Result<SignatureStatus> {
    let approval_serial = approved.lockfile.approval_serial;
    let signer = |key: &mcppin_core::Digest, signed_at: &Timestamp| Signer {
        key: *key,
        signed_at: signed_at.to_string(),
    };
    Ok(match &approved.signature {
        Signature::Unsigned => SignatureStatus::Unsigned { approval_serial },
        Signature::Verified { key, signed_at, .. } => SignatureStatus::Verified {
            approval_serial,
            signer: signer(key, signed_at),
            age_seconds: now(args.now)?.since(*signed_at).as_secs(),
        },
        Signature::Unchecked(Claim::Reads { key, signed_at }) => SignatureStatus::Unchecked {
            approval_serial,
            claim: Some(signer(key, signed_at)),
        },
        // An unreadable claim, or a finding this version does not know: nothing verified.
        _ => SignatureStatus::Unchecked {
            approval_serial,
            claim: None,
        },
    })
}

fn now(fixed: Option<Timestamp>) -> anyhow::Result<Timestamp> {
    match fixed {
        Some(now) => Ok(now),
        None => Timestamp::try_from(SystemTime::now()).context("the system clock"),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mcppin_cli::duration::parse as parse_age;

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

//! The whole check of a lockfile's signature, and the rollback bounds.

use std::time::Duration;

use mcppin_core::lockfile::Lockfile;
use mcppin_core::{Digest, Value};

use crate::envelope::Envelope;
use crate::error::{Error, Timestamp};
use crate::key::PublicKey;

/// How far in the future a `signed_at` may lie before it is refused: clocks of the signer and
/// the checker disagree by seconds, never by more than this on a kept machine.
pub const CLOCK_SKEW: Duration = Duration::from_secs(5 * 60);

/// The freshness bound of a check: a signature older than `max_age` at `now` is refused.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Freshness {
    /// The oldest a signature may be.
    pub max_age: Duration,
    /// The time of the check (the caller's clock; this crate never reads one).
    pub now: Timestamp,
}

/// The digest a signature names for a lockfile: SHA-256 of the RFC 8785 canonical form of the
/// file, so re-indenting or reordering members keeps the signature and changing anything
/// inside breaks it (docs/formats.md).
///
/// The bytes must be a lockfile that passes its own check
/// ([`mcppin_core::lockfile::Lockfile::parse`]): a signature approves a lockfile, never an
/// arbitrary document. An item with undecidable number literals is signed too: its canonical
/// form does not tell such literals apart, but the lockfile lists them verbatim beside it
/// (`undecidable_literals`), and that list is covered.
///
/// # Errors
///
/// [`Error::Lockfile`] when the bytes break a strict-reading rule or are not a lockfile that
/// passes its self-check. The digest is over [`mcppin_core::canonicalize_exact`]: an
/// undecidable number literal is covered as written and where it stands.
///
/// # Examples
///
/// ```
/// let a = mcppin_sign::lock_digest(b"{\"approval_serial\": 1, \"schema_version\": 2, \"servers\": []}")?;
/// let b = mcppin_sign::lock_digest(b"{\n  \"servers\": [],\n  \"schema_version\": 2,\n  \"approval_serial\": 1\n}\n")?;
/// assert_eq!(a, b);
/// assert!(mcppin_sign::lock_digest(b"{\"servers\": []}").is_err());
/// # Ok::<(), mcppin_sign::Error>(())
/// ```
pub fn lock_digest(lockfile: &[u8]) -> Result<Digest, Error> {
    let check = |bytes: &[u8]| {
        let value = mcppin_core::parse(bytes)?;
        Lockfile::from_value(&value)?;
        Ok::<_, mcppin_core::Error>(digest_of(&value))
    };
    check(lockfile).map_err(|source| Error::Lockfile { source })
}

/// The digest a signature names, of a lockfile already read strictly: the one computation
/// behind [`lock_digest`] and [`crate::Approval::check`].
pub(crate) fn digest_of(lockfile: &Value) -> Digest {
    Digest::of_bytes(&mcppin_core::canonicalize_exact(lockfile))
}

/// Checks a lockfile's signature, in this order: it exists, the envelope is well formed, it
/// names one of the trusted `keys`, the signature verifies under that key, it is for
/// `lock_digest`, and, with `freshness`, it is neither too old nor dated in the future.
/// Returns the verified envelope.
///
/// Nothing the envelope says (its lockfile digest, its date) is looked at before the
/// signature over it holds.
///
/// # Errors
///
/// [`Error::Missing`] when `envelope` is `None`; the envelope errors of [`Envelope::parse`];
/// [`Error::ForeignKey`], [`Error::BadSignature`], [`Error::LockDigestMismatch`],
/// [`Error::SignedInFuture`] and [`Error::TooOld`]. [`Error::refusal`] tells them apart.
pub fn verify(
    envelope: Option<&[u8]>,
    lock_digest: Digest,
    keys: &[PublicKey],
    freshness: Option<Freshness>,
) -> Result<Envelope, Error> {
    let envelope = Envelope::parse(envelope.ok_or(Error::Missing)?)?;
    envelope.verify(keys)?;
    if envelope.lock_digest() != lock_digest {
        return Err(Error::LockDigestMismatch {
            signed: envelope.lock_digest(),
            actual: lock_digest,
        });
    }
    if let Some(Freshness { max_age, now }) = freshness {
        let signed_at = envelope.signed_at();
        if signed_at.since(now) > CLOCK_SKEW {
            return Err(Error::SignedInFuture { signed_at, now });
        }
        if now.since(signed_at) > max_age {
            return Err(Error::TooOld {
                signed_at,
                max_age,
                now,
            });
        }
    }
    Ok(envelope)
}

/// Refuses an approval serial below the floor: a lockfile's signature proves who approved it,
/// not that it is the newest approval, so CI pins the serial it last saw.
///
/// # Errors
///
/// [`Error::SerialTooLow`] when `serial < min`.
///
/// # Examples
///
/// ```
/// assert!(mcppin_sign::check_serial(7, 7).is_ok());
/// assert!(mcppin_sign::check_serial(6, 7).is_err());
/// ```
pub fn check_serial(serial: u64, min: u64) -> Result<(), Error> {
    if serial < min {
        return Err(Error::SerialTooLow { serial, min });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Refusal;
    use crate::key::SigningKey;

    const LOCK: &str = "{\"approval_serial\": 3, \"schema_version\": 2, \"servers\": []}";

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    /// A lockfile approving one tool with `schema` as its input schema.
    fn lock_with(schema: &str) -> Vec<u8> {
        let manifest = format!(
            r#"{{"schema_version":2,"complete":true,"servers":[{{"id":"s","tools":[{{"name":"t","inputSchema":{schema}}}]}}]}}"#
        );
        let manifest = mcppin_core::manifest::Manifest::parse(manifest.as_bytes()).unwrap();
        Lockfile::approve(None, &manifest, &[]).unwrap().to_bytes()
    }

    #[test]
    fn the_lock_digest_covers_where_an_undecidable_literal_stands() {
        // Both canonicalise alike (every such literal becomes 9007199254740992) and list the
        // same undecidable literal: only the literal as written tells them apart.
        let a = lock_with(r#"{"minimum":9007199254740992,"maximum":9007199254740993}"#);
        let b = lock_with(r#"{"minimum":9007199254740993,"maximum":9007199254740992}"#);
        assert_ne!(lock_digest(&a).unwrap(), lock_digest(&b).unwrap());
        // A literal that overflows float64 is covered as written too: such a lockfile can be
        // signed, and its signature checked, like any other.
        let overflow = lock_with(r#"{"default":1e400}"#);
        assert!(lock_digest(&overflow).is_ok());
        assert_ne!(
            lock_digest(&overflow).unwrap(),
            lock_digest(&lock_with(r#"{"default":1e401}"#)).unwrap()
        );
    }

    fn signed() -> (SigningKey, Vec<u8>) {
        let key = SigningKey::generate(&mut rand_core::OsRng);
        let env = key.sign(
            lock_digest(LOCK.as_bytes()).unwrap(),
            at("2026-08-01T09:20:00Z"),
        );
        (key, env.to_bytes())
    }

    fn refusal(result: Result<Envelope, Error>) -> Refusal {
        result.unwrap_err().refusal().unwrap()
    }

    #[test]
    fn holds_for_the_signed_lockfile_re_indented() {
        let (key, sig) = signed();
        let reindented =
            b"{\n    \"servers\": [ ],\n\t\"schema_version\": 2, \"approval_serial\": 3\n}";
        let env = verify(
            Some(&sig),
            lock_digest(reindented).unwrap(),
            &[key.public_key()],
            None,
        )
        .unwrap();
        assert_eq!(env.public_key_fingerprint(), key.public_key().fingerprint());
    }

    #[test]
    fn refuses_a_missing_signature() {
        let (key, _) = signed();
        let digest = lock_digest(LOCK.as_bytes()).unwrap();
        assert_eq!(
            refusal(verify(None, digest, &[key.public_key()], None)),
            Refusal::Missing
        );
    }

    #[test]
    fn refuses_a_changed_lockfile() {
        let (key, sig) = signed();
        let changed = lock_digest(LOCK.replace("3", "4").as_bytes()).unwrap();
        let err = verify(Some(&sig), changed, &[key.public_key()], None).unwrap_err();
        assert!(matches!(
            err,
            Error::LockDigestMismatch { signed, actual }
                if signed == lock_digest(LOCK.as_bytes()).unwrap() && actual == changed
        ));
    }

    #[test]
    fn accepts_any_of_several_keys_for_rotation() {
        let (key, sig) = signed();
        let old = SigningKey::generate(&mut rand_core::OsRng).public_key();
        let digest = lock_digest(LOCK.as_bytes()).unwrap();
        assert!(verify(Some(&sig), digest, &[old.clone(), key.public_key()], None).is_ok());
        assert_eq!(
            refusal(verify(Some(&sig), digest, &[old], None)),
            Refusal::ForeignKey
        );
    }

    #[test]
    fn bounds_the_age_of_a_signature() {
        let (key, sig) = signed();
        let digest = lock_digest(LOCK.as_bytes()).unwrap();
        let keys = [key.public_key()];
        let thirty_days = Duration::from_secs(30 * 86_400);
        let check = |now: &str| {
            verify(
                Some(&sig),
                digest,
                &keys,
                Some(Freshness {
                    max_age: thirty_days,
                    now: at(now),
                }),
            )
        };
        assert!(check("2026-08-31T09:20:00Z").is_ok());
        assert!(check("2026-08-01T09:20:00Z").is_ok());
        assert!(
            check("2026-08-01T09:15:00Z").is_ok(),
            "within the clock skew"
        );
        let err = check("2026-08-31T09:20:01Z").unwrap_err();
        assert!(matches!(err, Error::TooOld { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "signed at 2026-08-01T09:20:00Z, more than 30days before 2026-08-31T09:20:01Z"
        );
        assert!(matches!(
            check("2026-08-01T09:14:59Z"),
            Err(Error::SignedInFuture { .. })
        ));
    }

    #[test]
    fn checks_the_signature_before_anything_it_says() {
        // A tampered envelope for another lockfile and an old date is refused as a bad
        // signature, not as a digest mismatch or a stale date it merely claims.
        let (key, sig) = signed();
        let text = String::from_utf8(sig).unwrap();
        let env = Envelope::parse(text.as_bytes()).unwrap();
        let tampered = text
            .replace(
                &env.lock_digest().to_string(),
                &Digest::of_bytes(b"x").to_string(),
            )
            .replace("2026-08-01", "2020-01-01");
        let result = verify(
            Some(tampered.as_bytes()),
            lock_digest(LOCK.as_bytes()).unwrap(),
            &[key.public_key()],
            Some(Freshness {
                max_age: Duration::from_secs(60),
                now: at("2026-08-01T09:20:00Z"),
            }),
        );
        assert_eq!(refusal(result), Refusal::BadSignature);
    }

    #[test]
    fn lock_digest_is_the_lockfiles_own_digest_and_covers_undecidable_literals() {
        let manifest = |literal: &str| {
            mcppin_core::manifest::Manifest::parse(
                format!(
                    "{{\"schema_version\": 2, \"complete\": true, \"servers\": [{{\"id\": \"a\", \
                     \"tools\": [{{\"name\": \"t\", \"default\": {literal}}}]}}]}}"
                )
                .as_bytes(),
            )
            .unwrap()
        };
        let lock = |literal: &str| Lockfile::approve(None, &manifest(literal), &[]).unwrap();
        for literal in ["1", "9007199254740993"] {
            let bytes = lock(literal).to_bytes();
            assert_eq!(
                lock_digest(&bytes).unwrap(),
                Lockfile::parse(&bytes).unwrap().digest().unwrap(),
                "{literal}"
            );
        }
        // Two literals a float64 cannot tell apart still give two lock digests.
        assert_ne!(
            lock_digest(&lock("9007199254740993").to_bytes()).unwrap(),
            lock_digest(&lock("9007199254740993.0").to_bytes()).unwrap()
        );
    }

    #[test]
    fn refuses_to_digest_what_is_not_a_lockfile() {
        for bad in [
            &b"{\"a\":1,\"a\":2}"[..],
            b"{\"servers\": []}",
            b"{\"approval_serial\": 1, \"schema_version\": 2, \"servers\": [], \"x\": 1}",
            b"[]",
        ] {
            assert!(
                matches!(lock_digest(bad), Err(Error::Lockfile { .. })),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn serial_floor_fires_below_and_holds_at_or_above() {
        assert!(check_serial(3, 3).is_ok());
        assert!(check_serial(4, 3).is_ok());
        let err = check_serial(2, 3).unwrap_err();
        assert!(matches!(err, Error::SerialTooLow { serial: 2, min: 3 }));
        assert_eq!(err.refusal(), Some(Refusal::SerialTooLow));
        assert_eq!(err.to_string(), "approval_serial 2 is below the minimum 3");
    }
}

//! The approval: what makes a lockfile the approved surface, checked in one call by every
//! binary, with one set of messages.

use std::fmt;

use mcppin_core::Digest;
use mcppin_core::engine::ApprovedServer;
use mcppin_core::lockfile::Lockfile;

use crate::envelope::Envelope;
use crate::error::{Error, Refusal, Timestamp};
use crate::key::PublicKey;
use crate::verify::{Freshness, check_serial, verify};

/// Everything a lockfile is judged by before it counts as an approval: its bytes, the
/// signature envelope beside it, the trusted keys, the serial floor and the age bound.
///
/// The caller reads the files (`LOCK` and `LOCK.sig`) and passes their bytes; this crate does
/// no I/O and reads no clock (the time of the check is in `freshness`).
#[derive(Clone, Copy, Debug)]
pub struct Approval<'a> {
    /// The lockfile's bytes, as read.
    pub lockfile: &'a [u8],
    /// The bytes of the signature envelope beside the lockfile, `None` when there is none.
    pub signature: Option<&'a [u8]>,
    /// The trusted public keys; a signature by any of them holds. When empty, the signature
    /// is not checked, only reported ([`Signature::Unchecked`]).
    pub keys: &'a [PublicKey],
    /// The lowest `approval_serial` accepted (an older approval put back is refused).
    pub min_serial: Option<u64>,
    /// The age bound and the time of the check; only applies when keys are given.
    pub freshness: Option<Freshness>,
}

/// A lockfile that passed [`Approval::check`], with what the signature check found.
#[derive(Debug)]
#[non_exhaustive]
pub struct Approved {
    /// The approved surface.
    pub lockfile: Lockfile,
    /// What the signature check found.
    pub signature: Signature,
}

impl Approved {
    /// One server's approved surface, as the wire engine admits against it: the way from
    /// this check to a [`Session`](mcppin_core::engine::Session). `None` when the lockfile
    /// holds no server `id`.
    #[must_use]
    pub fn server(&self, id: &str) -> Option<ApprovedServer> {
        self.server_in(id, None)
    }

    /// One server's approved surface under an authorization context (`None`: the default
    /// one, as [`Approved::server`]). `None` when the lockfile does not approve server `id`
    /// under that context: an entry of another context is never taken in its place.
    #[must_use]
    pub fn server_in(
        &self,
        id: &str,
        context: Option<&mcppin_core::surface::AuthContext>,
    ) -> Option<ApprovedServer> {
        self.lockfile
            .entry(id, context)
            .map(|server| ApprovedServer::signature_checked(server.clone()))
    }
}

/// What the signature check of an approval found. Its `Display` is the note binaries print
/// beside the signature file's name (nothing to print for [`Signature::Unsigned`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum Signature {
    /// No keys were given and there is no signature beside the lockfile.
    Unsigned,
    /// No keys were given: the signature beside the lockfile was not checked. A signature
    /// nobody checks proves nothing, so this is said, never silently ignored.
    Unchecked(Claim),
    /// The signature holds: made by `key` over this lockfile, fresh enough when an age bound
    /// was given.
    Verified {
        /// The fingerprint of the key that signed.
        key: Digest,
        /// When it was signed (as the verified envelope says).
        signed_at: Timestamp,
        /// The lockfile's `approval_serial`, the number to pin as the next serial floor.
        serial: u64,
    },
}

/// What an unchecked signature claims, believed by nobody.
#[derive(Debug)]
#[non_exhaustive]
pub enum Claim {
    /// The envelope reads: it names this key and this date (neither verified).
    Reads {
        /// The fingerprint the envelope names.
        key: Digest,
        /// The date the envelope states.
        signed_at: Timestamp,
    },
    /// The envelope does not read.
    Unreadable(Error),
}

/// Why a lockfile is not an approval: a [`Refusal`] category (for the exit code) and the error
/// behind it (for the message).
///
/// Its `Display` is the whole message, minus the name of the file, which the binary puts in
/// front: [`Refused::subject`] says which file that is.
#[derive(Debug)]
pub struct Refused {
    refusal: Refusal,
    error: Error,
}

/// The file a refusal is about.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Subject {
    /// The lockfile.
    Lockfile,
    /// The signature envelope beside it.
    Signature,
}

impl Approval<'_> {
    /// Reads the lockfile strictly (it must pass its own check), then, when keys are given,
    /// checks its signature and freshness ([`verify`]), then its serial against the floor
    /// ([`check_serial`]); returns the lockfile with what the signature check found.
    ///
    /// The lockfile is read once: the digest the signature names is taken from the value as
    /// read (see [`crate::lock_digest`]).
    ///
    /// # Errors
    ///
    /// A [`Refused`] whose [`Refused::refusal`] is [`Refusal::Lockfile`] when the bytes break
    /// a strict-reading rule or the lockfile fails its own check; the refusals of [`verify`]
    /// (missing, malformed, foreign key, invalid, another lockfile, too old); and
    /// [`Refusal::SerialTooLow`].
    ///
    /// # Examples
    ///
    /// ```
    /// use mcppin_sign::{Approval, Refusal, Signature, SigningKey, lock_digest};
    ///
    /// let lock = b"{\"approval_serial\": 3, \"schema_version\": 2, \"servers\": []}";
    /// let key = SigningKey::generate(&mut rand_core::OsRng);
    /// let sig = key.sign(lock_digest(lock)?, "2026-08-01T09:20:00Z".parse()?).to_bytes();
    /// let keys = [key.public_key()];
    /// let approval = Approval {
    ///     lockfile: lock,
    ///     signature: Some(&sig),
    ///     keys: &keys,
    ///     min_serial: Some(3),
    ///     freshness: None,
    /// };
    /// let approved = approval.check().expect("approved");
    /// assert!(matches!(approved.signature, Signature::Verified { serial: 3, .. }));
    ///
    /// let refused = Approval { min_serial: Some(4), ..approval }.check().unwrap_err();
    /// assert_eq!(refused.refusal(), Refusal::SerialTooLow);
    /// assert_eq!(
    ///     refused.to_string(),
    ///     "approval serial below the floor: approval_serial 3 is below the minimum 4"
    /// );
    /// # Ok::<(), mcppin_sign::Error>(())
    /// ```
    pub fn check(&self) -> Result<Approved, Refused> {
        self.approve(self.read()?, None)
    }

    /// [`Approval::check`], returning the lockfile's digest beside the approval (the one a
    /// signature names, [`crate::lock_digest`]), for a caller that records what runs under
    /// it: a log, the state a pre-call hook compares. `check` takes the digest only to check
    /// a signature: for a lockfile of 10,000 tools it is a canonical writing and a SHA-256 of
    /// 15 MB, which a check alone does not need.
    ///
    /// # Errors
    ///
    /// Those of [`Approval::check`].
    pub fn check_recorded(&self) -> Result<(Approved, Digest), Refused> {
        let value = self.read()?;
        let digest = crate::verify::digest_of(&value);
        Ok((self.approve(value, Some(digest))?, digest))
    }

    /// The lockfile's bytes read strictly.
    fn read(&self) -> Result<mcppin_core::Value, Refused> {
        mcppin_core::parse(self.lockfile).map_err(|e| Refused::lockfile(e.into()))
    }

    /// The rest of the check, on the lockfile as read; `digest`, when the caller took it
    /// already, is its digest.
    fn approve(
        &self,
        value: mcppin_core::Value,
        digest: Option<Digest>,
    ) -> Result<Approved, Refused> {
        // With keys, the signature must name the lockfile's digest.
        let signed = (!self.keys.is_empty())
            .then(|| digest.unwrap_or_else(|| crate::verify::digest_of(&value)));
        let lockfile = Lockfile::try_from(value).map_err(Refused::lockfile)?;
        let signature = match signed {
            None => match self.signature {
                None => Signature::Unsigned,
                Some(bytes) => Signature::Unchecked(match Envelope::parse(bytes) {
                    Ok(envelope) => Claim::Reads {
                        key: envelope.public_key_fingerprint(),
                        signed_at: envelope.signed_at(),
                    },
                    Err(err) => Claim::Unreadable(err),
                }),
            },
            Some(digest) => {
                let envelope = verify(self.signature, digest, self.keys, self.freshness)
                    .map_err(Refused::signature)?;
                Signature::Verified {
                    key: envelope.public_key_fingerprint(),
                    signed_at: envelope.signed_at(),
                    serial: lockfile.approval_serial,
                }
            }
        };
        if let Some(min) = self.min_serial {
            check_serial(lockfile.approval_serial, min).map_err(Refused::signature)?;
        }
        Ok(Approved {
            lockfile,
            signature,
        })
    }
}

impl Refused {
    fn lockfile(source: mcppin_core::Error) -> Self {
        Self {
            refusal: Refusal::Lockfile,
            error: Error::Lockfile { source },
        }
    }

    /// A refusal of [`verify`] or [`check_serial`], which always carry one.
    fn signature(error: Error) -> Self {
        Self {
            refusal: error.refusal().unwrap_or(Refusal::Malformed),
            error,
        }
    }

    /// The category of the refusal, for the exit code.
    #[must_use]
    pub fn refusal(&self) -> Refusal {
        self.refusal
    }

    /// The file the refusal is about, which the binary names in front of the message.
    #[must_use]
    pub fn subject(&self) -> Subject {
        match self.refusal {
            Refusal::Lockfile | Refusal::SerialTooLow => Subject::Lockfile,
            _ => Subject::Signature,
        }
    }

    /// The error behind the refusal.
    #[must_use]
    pub fn error(&self) -> &Error {
        &self.error
    }
}

impl fmt::Display for Refused {
    /// `invalid signature: the signature does not verify with key sha256:…`; a lockfile that
    /// does not read says what and where, then the strict-reading rule (as every input file
    /// that does not read).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.error {
            Error::Lockfile { source } => write!(f, "{source} [{}]", source.rule()),
            error => write!(f, "{}: {error}", self.refusal),
        }
    }
}

/// No `source`: the message already holds the error's own text ([`Refused::error`] gives it).
impl std::error::Error for Refused {}

impl fmt::Display for Signature {
    /// `signature verified: key sha256:…, signed at 2026-08-01T09:20:00Z, approval_serial 3`,
    /// `signature not checked (no --pubkey given); it claims key sha256:… at …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unsigned => f.write_str("no signature"),
            Self::Unchecked(claim) => {
                f.write_str("signature not checked (no --pubkey given); it claims ")?;
                match claim {
                    Claim::Reads { key, signed_at } => write!(f, "key {key} at {signed_at}"),
                    Claim::Unreadable(err) => write!(f, "nothing readable: {err}"),
                }
            }
            Self::Verified {
                key,
                signed_at,
                serial,
            } => write!(
                f,
                "signature verified: key {key}, signed at {signed_at}, approval_serial {serial}"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::key::SigningKey;

    const LOCK: &[u8] = b"{\"approval_serial\": 3, \"schema_version\": 2, \"servers\": []}";
    const SIGNED_AT: &str = "2026-08-01T09:20:00Z";

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    /// A key and its envelope over [`LOCK`], signed at [`SIGNED_AT`].
    fn signed() -> (SigningKey, Vec<u8>) {
        let key = SigningKey::generate(&mut rand_core::OsRng);
        let envelope = key.sign(crate::lock_digest(LOCK).unwrap(), at(SIGNED_AT));
        (key, envelope.to_bytes())
    }

    /// The approval of [`LOCK`] with `signature` and `keys`, no floor and no age bound.
    fn approval<'a>(signature: Option<&'a [u8]>, keys: &'a [PublicKey]) -> Approval<'a> {
        Approval {
            lockfile: LOCK,
            signature,
            keys,
            min_serial: None,
            freshness: None,
        }
    }

    fn refused(approval: Approval<'_>) -> Refused {
        approval.check().unwrap_err()
    }

    #[test]
    fn an_approval_gives_the_engine_each_server_it_holds() {
        let manifest = mcppin_core::manifest::Manifest::parse(
            br#"{"schema_version": 2, "complete": true, "servers": [
                {"id": "docs", "tools": [{"name": "search"}]}]}"#,
        )
        .unwrap();
        let lock = Lockfile::approve(None, &manifest, &[]).unwrap().to_bytes();
        let approved = Approval {
            lockfile: &lock,
            ..approval(None, &[])
        }
        .check()
        .unwrap();
        let docs = approved.server("docs").expect("docs is approved");
        assert!(docs.surface().tools.contains_key("search"));
        assert!(approved.server("other").is_none());
    }

    #[test]
    fn a_recorded_check_gives_the_digest_a_signature_names() {
        let (key, sig) = signed();
        let keys = [key.public_key()];
        let digest = crate::lock_digest(LOCK).unwrap();
        for (signature, keys) in [(None, &[][..]), (Some(&sig[..]), &keys[..])] {
            let (approved, recorded) = approval(signature, keys).check_recorded().unwrap();
            assert_eq!(recorded, digest);
            let checked = approval(signature, keys).check().unwrap();
            assert_eq!(approved.lockfile, checked.lockfile);
            assert_eq!(
                approved.signature.to_string(),
                checked.signature.to_string()
            );
        }
        // Refused as the plain check refuses.
        let other = String::from_utf8_lossy(LOCK).replace('3', "4");
        let other = crate::lock_digest(other.as_bytes()).unwrap();
        let foreign = key.sign(other, at(SIGNED_AT)).to_bytes();
        let refused = approval(Some(&foreign), &keys)
            .check_recorded()
            .unwrap_err();
        assert_eq!(refused.refusal(), Refusal::LockDigestMismatch);
    }

    #[test]
    fn holds_unsigned_without_keys() {
        let approved = approval(None, &[]).check().unwrap();
        assert_eq!(approved.lockfile.approval_serial, 3);
        assert!(matches!(approved.signature, Signature::Unsigned));
    }

    #[test]
    fn holds_with_a_valid_signature_and_names_key_date_and_serial() {
        let (key, sig) = signed();
        let keys = [key.public_key()];
        let approved = Approval {
            min_serial: Some(3),
            freshness: Some(Freshness {
                max_age: Duration::from_secs(86_400),
                now: at("2026-08-02T09:20:00Z"),
            }),
            ..approval(Some(&sig), &keys)
        }
        .check()
        .unwrap();
        assert_eq!(
            approved.signature.to_string(),
            format!(
                "signature verified: key {}, signed at {SIGNED_AT}, approval_serial 3",
                keys[0].fingerprint()
            )
        );
    }

    #[test]
    fn reports_an_unchecked_signature_without_keys_and_holds() {
        let (key, sig) = signed();
        let approved = approval(Some(&sig), &[]).check().unwrap();
        assert!(matches!(
            approved.signature,
            Signature::Unchecked(Claim::Reads { key: k, signed_at })
                if k == key.public_key().fingerprint() && signed_at == at(SIGNED_AT)
        ));
        assert_eq!(
            approved.signature.to_string(),
            format!(
                "signature not checked (no --pubkey given); it claims key {} at {SIGNED_AT}",
                key.public_key().fingerprint()
            )
        );
        let approved = approval(Some(b"garbage"), &[]).check().unwrap();
        assert!(matches!(
            approved.signature,
            Signature::Unchecked(Claim::Unreadable(Error::EnvelopeJson { .. }))
        ));
        assert!(
            approved
                .signature
                .to_string()
                .starts_with("signature not checked (no --pubkey given); it claims nothing readable: the signature envelope is not strict JSON")
        );
    }

    #[test]
    fn refuses_an_unreadable_lockfile_before_its_signature() {
        let (key, sig) = signed();
        let keys = [key.public_key()];
        for bad in [
            &b"{\"a\": 1, \"a\": 2}"[..],
            b"{\"servers\": []}",
            b"{\"approval_serial\": 3, \"schema_version\": 2, \"servers\": [], \"x\": 1}",
        ] {
            for keys in [&keys[..], &[]] {
                let err = refused(Approval {
                    lockfile: bad,
                    ..approval(Some(&sig), keys)
                });
                assert_eq!(err.refusal(), Refusal::Lockfile);
                assert_eq!(err.subject(), Subject::Lockfile);
                assert!(matches!(err.error(), Error::Lockfile { .. }), "{err:?}");
            }
        }
        let err = refused(Approval {
            lockfile: b"{\"a\": 1, \"a\": 2}",
            ..approval(None, &[])
        });
        assert_eq!(
            err.to_string(),
            "duplicate member name \"a\" at line 1, column 10 (byte 9) [duplicate-member]",
            "the strict reader's message and rule"
        );
    }

    #[test]
    fn refuses_a_missing_signature_when_keys_are_given() {
        let (key, _) = signed();
        let err = refused(approval(None, &[key.public_key()]));
        assert_eq!(err.refusal(), Refusal::Missing);
        assert_eq!(err.subject(), Subject::Signature);
        assert_eq!(err.to_string(), "missing signature: no signature");
    }

    #[test]
    fn refuses_a_malformed_signature() {
        let (key, _) = signed();
        let err = refused(approval(Some(b"{}"), &[key.public_key()]));
        assert_eq!(err.refusal(), Refusal::Malformed);
        assert!(
            err.to_string().starts_with("malformed signature: "),
            "{err}"
        );
    }

    #[test]
    fn refuses_a_foreign_key_naming_both() {
        let (key, sig) = signed();
        let other = SigningKey::generate(&mut rand_core::OsRng).public_key();
        let err = refused(approval(Some(&sig), std::slice::from_ref(&other)));
        assert_eq!(err.refusal(), Refusal::ForeignKey);
        assert_eq!(
            err.to_string(),
            format!(
                "signature by a foreign key: signed by key {}, which is none of the given keys ({})",
                key.public_key().fingerprint(),
                other.fingerprint()
            )
        );
    }

    #[test]
    fn refuses_one_byte_of_the_signature_changed() {
        let (key, sig) = signed();
        let text = String::from_utf8(sig).unwrap();
        let at = text.find("\"signature\": \"").unwrap() + "\"signature\": \"".len();
        let other = if text[at..].starts_with('A') {
            "B"
        } else {
            "A"
        };
        let flipped = format!("{}{other}{}", &text[..at], &text[at + 1..]);
        let err = refused(approval(Some(flipped.as_bytes()), &[key.public_key()]));
        assert_eq!(err.refusal(), Refusal::BadSignature);
        assert_eq!(
            err.to_string(),
            format!(
                "invalid signature: the signature does not verify with key {}",
                key.public_key().fingerprint()
            )
        );
    }

    #[test]
    fn refuses_a_signature_for_another_lockfile() {
        let (key, sig) = signed();
        let err = refused(Approval {
            lockfile: b"{\"approval_serial\": 4, \"schema_version\": 2, \"servers\": []}",
            ..approval(Some(&sig), &[key.public_key()])
        });
        assert_eq!(err.refusal(), Refusal::LockDigestMismatch);
        assert!(
            err.to_string().starts_with(
                "signature for another lockfile: the signature is for lockfile digest"
            ),
            "{err}"
        );
    }

    #[test]
    fn refuses_a_signature_older_than_the_bound() {
        let (key, sig) = signed();
        let keys = [key.public_key()];
        let with_now = |now: &str| Approval {
            freshness: Some(Freshness {
                max_age: Duration::from_secs(86_400),
                now: at(now),
            }),
            ..approval(Some(&sig), &keys)
        };
        assert!(with_now("2026-08-02T09:20:00Z").check().is_ok());
        let err = refused(with_now("2026-08-02T09:20:01Z"));
        assert_eq!(err.refusal(), Refusal::TooOld);
        assert_eq!(err.subject(), Subject::Signature);
        assert_eq!(
            err.to_string(),
            "stale signature: signed at 2026-08-01T09:20:00Z, more than 1day before 2026-08-02T09:20:01Z"
        );
    }

    #[test]
    fn refuses_a_serial_below_the_floor_signed_or_not() {
        let (key, sig) = signed();
        let keys = [key.public_key()];
        for keys in [&keys[..], &[]] {
            let floor = |min| Approval {
                min_serial: Some(min),
                ..approval(Some(&sig), keys)
            };
            assert!(floor(3).check().is_ok());
            let err = refused(floor(4));
            assert_eq!(err.refusal(), Refusal::SerialTooLow);
            assert_eq!(err.subject(), Subject::Lockfile);
            assert_eq!(
                err.to_string(),
                "approval serial below the floor: approval_serial 3 is below the minimum 4"
            );
        }
    }

    #[test]
    fn the_signature_is_checked_over_the_lockfile_as_read_not_as_rebuilt() {
        // A lockfile re-indented keeps its signature; the digest is of the bytes read.
        let (key, sig) = signed();
        let reindented =
            b"{\n  \"servers\": [ ],\n\t\"schema_version\": 2, \"approval_serial\": 3\n}";
        assert!(
            Approval {
                lockfile: reindented,
                ..approval(Some(&sig), &[key.public_key()])
            }
            .check()
            .is_ok()
        );
    }
}

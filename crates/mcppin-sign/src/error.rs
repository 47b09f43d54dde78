//! The leaf of this crate: its one error type, the refusal each error stands for, and the
//! `signed_at` timestamp (RFC 3339, UTC, whole seconds), which errors carry and whose reading
//! fails with them. Every other file imports it; it imports none of them.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcppin_core::{Digest, Excerpt};

/// Everything that can go wrong while reading keys, signing, or checking a signature.
///
/// Text that came from a file (a member name, a timestamp) is kept raw here; the message shows
/// a short escaped excerpt of it ([`mcppin_core::Excerpt`]). No variant ever carries secret key material.
/// [`Error::refusal`] sorts the variants into the reasons a verifier reports.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A private key is not an Ed25519 private key in PKCS#8 PEM (RFC 8410), plain or
    /// encrypted (RFC 5958 section 3), or its embedded public key does not belong to it.
    #[error("not an Ed25519 private key in PKCS#8 PEM")]
    PrivateKey {
        /// What the PKCS#8 decoder refused.
        #[source]
        source: ed25519_dalek::pkcs8::Error,
    },
    /// A public key is not an Ed25519 public key in SPKI PEM (RFC 8410).
    #[error("not an Ed25519 public key in SPKI PEM")]
    PublicKey {
        /// What the SPKI decoder refused.
        #[source]
        source: ed25519_dalek::pkcs8::spki::Error,
    },
    /// The key file is empty (or holds only white space).
    #[error("the key file is empty")]
    EmptyKey,
    /// A well-formed key of another algorithm than Ed25519 (RSA, EC, X25519, Ed448...), named
    /// by the OID of its algorithm identifier.
    #[error(
        "{}: only Ed25519 keys are accepted",
        KeyKind::new(*.private, .oid, .curve.as_deref())
    )]
    KeyAlgorithm {
        /// Whether it is a private key (PKCS#8) or a public key (SPKI).
        private: bool,
        /// The algorithm's OID, dotted (`1.2.840.113549.1.1.1`).
        oid: String,
        /// The OID of the algorithm's parameters when they are one (an EC key's curve).
        curve: Option<String>,
    },
    /// A private key was given where a public key belongs.
    #[error("this is a private key; give the public key (the .pub file)")]
    PrivateKeyAsPublic,
    /// A public key (SPKI PEM) was given where a private key belongs.
    #[error("this is a public key; signing needs the private key")]
    PublicKeyAsPrivate,
    /// An encrypted private key (`-----BEGIN ENCRYPTED PRIVATE KEY-----`) was read without a
    /// passphrase ([`crate::SigningKey::from_pem`]); read it with
    /// [`crate::SigningKey::from_encrypted_pem`].
    #[error("the private key is encrypted and no passphrase was given")]
    EncryptedKey,
    /// The passphrase does not decrypt the key: the decryption fails, or what it gives is no
    /// PKCS#8 private key. Which of the two cannot be told apart, nor from a damaged key.
    #[error("wrong passphrase: the key does not decrypt with it (or the key file is damaged)")]
    Passphrase,
    /// An empty passphrase offered to encrypt a key: it would protect nothing.
    #[error("the passphrase is empty")]
    EmptyPassphrase,
    /// An encrypted private key whose scheme this build does not read: PBES1 or PKCS#12
    /// schemes, DES or 3DES, a PBKDF2 PRF other than HMAC-SHA-224/256/384/512. Named by the
    /// OID of the first algorithm identifier not supported.
    #[error(
        "the private key is encrypted with a scheme this build does not read (OID {oid}); \
         re-encrypt it with: openssl pkcs8 -topk8 -v2 aes-256-cbc -scrypt"
    )]
    KeyEncryption {
        /// The OID of the unsupported scheme, key derivation or cipher, dotted.
        oid: String,
    },
    /// An encrypted private key whose key derivation asks for more than this crate spends on
    /// it ([`crate::SigningKey::MAX_SCRYPT_MEMORY`], [`crate::SigningKey::MAX_KDF_WORK`],
    /// [`crate::SigningKey::MAX_PBKDF2_ITERATIONS`]):
    /// whoever wrote the file chose the cost, and a bound keeps it from exhausting memory.
    #[error(
        "the private key's key derivation asks too much ({cost}); re-encrypt it with: \
         openssl pkcs8 -topk8 -v2 aes-256-cbc -scrypt"
    )]
    KeyDerivationCost {
        /// The parameters, as `scrypt N=1048576 r=8 p=1` or `PBKDF2 1000000000 iterations`.
        cost: String,
    },
    /// A public key of small order: any message verifies under it, so it proves nothing.
    #[error("weak public key {fingerprint}: a key of small order proves nothing")]
    WeakPublicKey {
        /// The fingerprint of the refused key.
        fingerprint: Digest,
    },
    /// The lockfile cannot be signed or checked: it breaks a strict-reading rule or fails its
    /// own check (docs/formats.md). A number with no canonical form is signed as written.
    #[error("not a lockfile that can be signed: {source}")]
    Lockfile {
        /// The strict-reading or digest error.
        #[source]
        source: mcppin_core::Error,
    },
    /// A time outside what an RFC 3339 UTC timestamp of this crate can hold (before 1970 or
    /// after 9999).
    #[error("time outside 1970-01-01T00:00:00Z..=9999-12-31T23:59:59Z")]
    TimeOutOfRange,
    /// There is no signature to check.
    #[error("no signature")]
    Missing,
    /// The envelope breaks a strict-reading rule.
    #[error("the signature envelope is not strict JSON: {source}")]
    EnvelopeJson {
        /// The strict reader's error, with its position.
        #[source]
        source: mcppin_core::JsonError,
    },
    /// The envelope is not a JSON object.
    #[error("the signature envelope is not a JSON object")]
    EnvelopeNotObject,
    /// The envelope lacks a member this version signs.
    #[error("the signature envelope lacks the member \"{name}\"")]
    MissingMember {
        /// The missing member.
        name: &'static str,
    },
    /// The envelope holds a member this version does not sign (docs/formats.md): whatever it says
    /// would not be covered by the signature.
    #[error(
        "the signature envelope holds the member {}, which this version does not sign",
        Excerpt::quoted(.name)
    )]
    UnknownMember {
        /// The member name, raw.
        name: String,
    },
    /// A member has the wrong JSON type.
    #[error("the signature envelope member \"{name}\" must be {expected}")]
    MemberType {
        /// The member.
        name: &'static str,
        /// What it must be (`a string`, `a number`).
        expected: &'static str,
    },
    /// A member has a value this version does not know (`schema`, `schema_version`,
    /// `algorithm`).
    #[error(
        "the signature envelope member \"{name}\" is {}, expected {expected}",
        Excerpt::bare(.found)
    )]
    MemberValue {
        /// The member.
        name: &'static str,
        /// The value found, raw: a string as canonical JSON, a number as written.
        found: String,
        /// The one value this version accepts, as JSON.
        expected: &'static str,
    },
    /// A digest member is not `sha256:` and 64 lowercase hex digits.
    #[error(
        "the signature envelope member \"{name}\" is not a digest (sha256: and 64 lowercase hex digits)"
    )]
    MemberDigest {
        /// The member.
        name: &'static str,
    },
    /// `signed_at` is not an RFC 3339 UTC timestamp of the form `2026-08-01T09:20:00Z`.
    #[error(
        "{} is not a timestamp of the form 2026-08-01T09:20:00Z (RFC 3339, UTC, whole seconds)",
        Excerpt::quoted(.found)
    )]
    Timestamp {
        /// The text found, raw.
        found: String,
    },
    /// `signature` is not canonical padded base64 (RFC 4648 section 4) of 64 bytes.
    #[error("the signature is not padded base64 of 64 bytes")]
    SignatureEncoding,
    /// The envelope names a key that is none of the trusted ones.
    #[error("signed by key {found}, which is none of the given keys ({})", List(.expected))]
    ForeignKey {
        /// The fingerprint the envelope names.
        found: Digest,
        /// The fingerprints of the trusted keys.
        expected: Vec<Digest>,
    },
    /// The signature does not verify under the key the envelope names: the envelope or its
    /// signature was altered, or it was made by another key.
    #[error("the signature does not verify with key {key}")]
    BadSignature {
        /// The fingerprint of the key it was checked with.
        key: Digest,
    },
    /// A valid signature, but over another lockfile.
    #[error("the signature is for lockfile digest {signed}, but the lockfile's digest is {actual}")]
    LockDigestMismatch {
        /// The digest the signature covers.
        signed: Digest,
        /// The digest of the lockfile at hand.
        actual: Digest,
    },
    /// The signature is older than the maximum age allowed.
    #[error("signed at {signed_at}, more than {} before {now}", humantime::format_duration(*.max_age))]
    TooOld {
        /// When it was signed.
        signed_at: Timestamp,
        /// The maximum age allowed.
        max_age: Duration,
        /// The time of the check.
        now: Timestamp,
    },
    /// The signature claims a time after the check's clock (beyond [`crate::CLOCK_SKEW`]):
    /// a date in the future would keep a signature fresh for longer than intended.
    #[error("signed at {signed_at}, which is after {now}")]
    SignedInFuture {
        /// When it claims to be signed.
        signed_at: Timestamp,
        /// The time of the check.
        now: Timestamp,
    },
    /// The lockfile's `approval_serial` is below the floor given: an older approval put back.
    #[error("approval_serial {serial} is below the minimum {min}")]
    SerialTooLow {
        /// The lockfile's approval serial.
        serial: u64,
        /// The minimum required.
        min: u64,
    },
}

/// Why a lockfile is refused as an approval: the reasons a verifier reports (`--pubkey`,
/// `--min-serial`, `--max-signature-age`), one category each, for the exit code.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
#[non_exhaustive]
pub enum Refusal {
    /// There is no signature.
    Missing,
    /// The envelope cannot be read.
    Malformed,
    /// The envelope names a key that is not trusted.
    ForeignKey,
    /// The signature does not verify.
    BadSignature,
    /// The signature covers another lockfile.
    LockDigestMismatch,
    /// The signature is older than allowed (or dated in the future).
    TooOld,
    /// The lockfile's approval serial is below the floor.
    SerialTooLow,
    /// The lockfile itself does not read: it breaks a strict-reading rule or fails its own
    /// check. Reported by [`crate::Approval::check`]; [`Error::refusal`] never gives it.
    Lockfile,
}

impl Error {
    /// Which refusal of a signature check this error is; `None` for errors about keys, the
    /// lockfile itself or the clock.
    #[must_use]
    pub fn refusal(&self) -> Option<Refusal> {
        Some(match self {
            Self::Missing => Refusal::Missing,
            Self::EnvelopeJson { .. }
            | Self::EnvelopeNotObject
            | Self::MissingMember { .. }
            | Self::UnknownMember { .. }
            | Self::MemberType { .. }
            | Self::MemberValue { .. }
            | Self::MemberDigest { .. }
            | Self::Timestamp { .. }
            | Self::SignatureEncoding => Refusal::Malformed,
            Self::ForeignKey { .. } => Refusal::ForeignKey,
            Self::BadSignature { .. } => Refusal::BadSignature,
            Self::LockDigestMismatch { .. } => Refusal::LockDigestMismatch,
            Self::TooOld { .. } | Self::SignedInFuture { .. } => Refusal::TooOld,
            Self::SerialTooLow { .. } => Refusal::SerialTooLow,
            Self::PrivateKey { .. }
            | Self::PublicKey { .. }
            | Self::EmptyKey
            | Self::KeyAlgorithm { .. }
            | Self::PrivateKeyAsPublic
            | Self::PublicKeyAsPrivate
            | Self::EncryptedKey
            | Self::Passphrase
            | Self::EmptyPassphrase
            | Self::KeyEncryption { .. }
            | Self::KeyDerivationCost { .. }
            | Self::WeakPublicKey { .. }
            | Self::Lockfile { .. }
            | Self::TimeOutOfRange => return None,
        })
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Missing => "missing signature",
            Self::Malformed => "malformed signature",
            Self::ForeignKey => "signature by a foreign key",
            Self::BadSignature => "invalid signature",
            Self::LockDigestMismatch => "signature for another lockfile",
            Self::TooOld => "stale signature",
            Self::SerialTooLow => "approval serial below the floor",
            Self::Lockfile => "unreadable lockfile",
        })
    }
}

/// Writes digests separated by `, `, or `none` for an empty list.
struct List<'a>(&'a [Digest]);

impl fmt::Display for List<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

/// A key of another algorithm, as a message names it: `an RSA private key (OID ...)`.
struct KeyKind<'a> {
    private: bool,
    oid: &'a str,
    curve: Option<&'a str>,
}

impl<'a> KeyKind<'a> {
    fn new(private: bool, oid: &'a str, curve: Option<&'a str>) -> Self {
        Self {
            private,
            oid,
            curve,
        }
    }
}

impl fmt::Display for KeyKind<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let half = if self.private { "private" } else { "public" };
        // RFC 8017 (rsaEncryption), RFC 5480 (id-ecPublicKey), RFC 8410 (X25519, X448, Ed448).
        let name = match self.oid {
            "1.2.840.113549.1.1.1" => Some("an RSA"),
            "1.2.840.10045.2.1" => Some("an EC"),
            "1.3.101.110" => Some("an X25519"),
            "1.3.101.111" => Some("an X448"),
            "1.3.101.113" => Some("an Ed448"),
            _ => None,
        };
        match name {
            Some(name) => write!(f, "{name} {half} key (OID {}", self.oid)?,
            None => write!(f, "a {half} key of another algorithm (OID {}", self.oid)?,
        }
        if let Some(curve) = self.curve {
            // RFC 5480 section 2.1.1.1, and the curve SEC 2 adds.
            let curve_name = match curve {
                "1.2.840.10045.3.1.7" => "P-256, ",
                "1.3.132.0.34" => "P-384, ",
                "1.3.132.0.35" => "P-521, ",
                "1.3.132.0.10" => "secp256k1, ",
                _ => "",
            };
            write!(f, ", curve {curve_name}{curve}")?;
        }
        f.write_str(")")
    }
}

/// Seconds from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z, the last second a four-digit
/// year can name.
const MAX_SECONDS: u64 = 253_402_300_799;

/// A point in time with one text form, `2026-08-01T09:20:00Z` (RFC 3339 section 5.6, UTC,
/// whole seconds), between 1970 and 9999.
///
/// One form only, so that the text in an envelope and the time it stands for cannot disagree:
/// `2026-08-01T09:20:00.000Z`, `+00:00` and lowercase `t`/`z` are refused rather than
/// normalised.
///
/// # Examples
///
/// ```
/// use mcppin_sign::Timestamp;
/// let t: Timestamp = "2026-08-01T09:20:00Z".parse()?;
/// assert_eq!(t.to_string(), "2026-08-01T09:20:00Z");
/// assert!("2026-08-01T09:20:00+00:00".parse::<Timestamp>().is_err());
/// # Ok::<(), mcppin_sign::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct Timestamp {
    /// Seconds since the Unix epoch, at most [`MAX_SECONDS`].
    seconds: u64,
}

impl Timestamp {
    /// The time as a [`SystemTime`].
    #[must_use]
    pub fn to_system_time(self) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(self.seconds)
    }

    /// How long after `earlier` this is; zero when it is not after it.
    #[must_use]
    pub fn since(self, earlier: Self) -> Duration {
        Duration::from_secs(self.seconds.saturating_sub(earlier.seconds))
    }
}

impl TryFrom<SystemTime> for Timestamp {
    type Error = Error;

    /// Truncates to whole seconds.
    ///
    /// # Errors
    ///
    /// [`Error::TimeOutOfRange`] before 1970 or after 9999.
    fn try_from(time: SystemTime) -> Result<Self, Error> {
        let seconds = time
            .duration_since(UNIX_EPOCH)
            .map_err(|_| Error::TimeOutOfRange)?
            .as_secs();
        if seconds > MAX_SECONDS {
            return Err(Error::TimeOutOfRange);
        }
        Ok(Self { seconds })
    }
}

impl FromStr for Timestamp {
    type Err = Error;

    /// Reads the one form `YYYY-MM-DDTHH:MM:SSZ`.
    ///
    /// # Errors
    ///
    /// [`Error::Timestamp`] for anything else, including leap seconds and impossible dates.
    fn from_str(s: &str) -> Result<Self, Error> {
        let refuse = || Error::Timestamp {
            found: s.to_owned(),
        };
        // humantime reads more than this one form (fractions, `+00:00`, leap seconds folded
        // into :59): writing the time back and comparing keeps exactly one spelling.
        let time = humantime::parse_rfc3339(s).map_err(|_| refuse())?;
        let stamp = Self::try_from(time).map_err(|_| refuse())?;
        if stamp.to_string() != s {
            return Err(refuse());
        }
        Ok(stamp)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&humantime::format_rfc3339_seconds(self.to_system_time()), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_the_one_form() {
        for s in [
            "1970-01-01T00:00:00Z",
            "2026-08-01T09:20:00Z",
            "2024-02-29T23:59:59Z",
            "9999-12-31T23:59:59Z",
        ] {
            assert_eq!(s.parse::<Timestamp>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn rejects_every_other_spelling() {
        for s in [
            "",
            "2026-08-01T09:20:00",
            "2026-08-01T09:20:00.000Z",
            "2026-08-01T09:20:00.Z",
            "2026-08-01T09:20:00+00:00",
            "2026-08-01t09:20:00z",
            "2026-08-01 09:20:00Z",
            "2026-08-01T09:20:60Z",
            "2026-02-29T09:20:00Z",
            "1969-12-31T23:59:59Z",
            "2026-08-01T09:20:00Z ",
            "2026-8-01T09:20:00Z",
        ] {
            assert!(
                matches!(s.parse::<Timestamp>(), Err(Error::Timestamp { found }) if found == s),
                "{s:?}"
            );
        }
    }

    #[test]
    fn truncates_system_time_to_seconds_and_bounds_it() {
        let t = UNIX_EPOCH + Duration::new(1_785_000_000, 999_999_999);
        let stamp = Timestamp::try_from(t).unwrap();
        assert_eq!(
            stamp.to_system_time(),
            UNIX_EPOCH + Duration::from_secs(1_785_000_000)
        );
        assert!(matches!(
            Timestamp::try_from(UNIX_EPOCH - Duration::from_secs(1)),
            Err(Error::TimeOutOfRange)
        ));
        assert!(matches!(
            Timestamp::try_from(UNIX_EPOCH + Duration::from_secs(MAX_SECONDS + 1)),
            Err(Error::TimeOutOfRange)
        ));
    }

    #[test]
    fn since_saturates_at_zero() {
        let a: Timestamp = "2026-08-01T09:20:00Z".parse().unwrap();
        let b: Timestamp = "2026-08-02T09:20:00Z".parse().unwrap();
        assert_eq!(b.since(a), Duration::from_secs(86_400));
        assert_eq!(a.since(b), Duration::ZERO);
    }
}

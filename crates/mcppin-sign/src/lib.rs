//! Ed25519 keys and the detached signature envelope of mcppin lockfiles (docs/formats.md).
//!
//! A signed lockfile says which key approved it: [`SigningKey::sign`] writes an [`Envelope`]
//! naming the lockfile's digest (of its canonical form, so re-indenting keeps the signature),
//! the key's fingerprint and the signing time, signed over the RFC 8785 canonical form of the
//! envelope without its `signature` member. [`verify`] checks it against trusted
//! [`PublicKey`]s and, with [`Freshness`], its age; [`check_serial`] refuses an approval
//! older than a pinned floor. [`Approval::check`] is the whole approval in one call (the
//! lockfile read strictly, its signature, the serial floor and the age bound), with one
//! message per [`Refusal`]: `mcppin verify` and `mcppin-guard` both use it. The same keys
//! sign the end of an admission-log run ([`log::sign`]) and check it ([`log::check_ends`]). Keys are PKCS#8
//! PEM (private, plain or encrypted with a passphrase: [`SigningKey::to_encrypted_pem`]) and
//! SPKI PEM (public), the forms `openssl genpkey -algorithm ed25519` and `openssl pkey
//! -pubout` read and write.
//!
//! What this crate deliberately does not do: files, the clock or randomness of its own. The
//! caller reads the files, passes the time ([`Timestamp`]) and the random generator; a
//! signature cannot say it is the newest approval, which is what the serial floor and the
//! maximum age are for.
//!
//! ```
//! use mcppin_sign::{Freshness, PublicKey, SigningKey, Timestamp, lock_digest, verify};
//! use std::time::Duration;
//!
//! // `mcppin key`: a new key; the private half stays with the approver.
//! let key = SigningKey::generate(&mut rand_core::OsRng);
//! let public = PublicKey::from_pem(&key.public_key().to_pem())?;
//!
//! // `mcppin sign`: the envelope beside the lockfile.
//! let lock = b"{\"approval_serial\": 1, \"schema_version\": 2, \"servers\": []}";
//! let signed_at: Timestamp = "2026-08-01T09:20:00Z".parse()?;
//! let sig = key.sign(lock_digest(lock)?, signed_at).to_bytes();
//!
//! // `mcppin verify --pubkey K.pub --max-signature-age 30d`.
//! let fresh = Freshness { max_age: Duration::from_secs(30 * 86_400), now: signed_at };
//! let envelope = verify(Some(&sig), lock_digest(lock)?, &[public.clone()], Some(fresh))?;
//! assert_eq!(envelope.public_key_fingerprint(), public.fingerprint());
//!
//! // One changed byte inside the lockfile breaks it; re-indenting does not.
//! let changed = b"{\"approval_serial\": 2, \"schema_version\": 2, \"servers\": []}";
//! assert!(verify(Some(&sig), lock_digest(changed)?, &[public.clone()], None).is_err());
//! let reindented = b"{\n  \"approval_serial\": 1,\n  \"schema_version\": 2,\n  \"servers\": []\n}\n";
//! assert!(verify(Some(&sig), lock_digest(reindented)?, &[public], None).is_ok());
//! # Ok::<(), mcppin_sign::Error>(())
//! ```
#![warn(missing_docs, unreachable_pub)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

mod approval;
mod envelope;
mod error;
mod key;
pub mod log;
mod verify;

pub use approval::{Approval, Approved, Claim, Refused, Signature, Subject};
pub use envelope::{ALGORITHM, Envelope, SCHEMA, SCHEMA_VERSION};
pub use error::{Error, Refusal, Timestamp};
pub use key::{PublicKey, SigningKey};
/// The random-generator traits [`SigningKey::generate`] takes, in the version it takes them.
pub use rand_core;
pub use verify::{CLOCK_SKEW, Freshness, check_serial, lock_digest, verify};

//! The detached signature envelope of a lockfile (docs/formats.md).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use mcppin_core::{Digest, Kind, Object, Value};

use crate::error::{Error, Timestamp};
use crate::key::{PublicKey, SigningKey};

/// The value of the envelope's `schema` member.
pub const SCHEMA: &str = "mcppin-lock-signature";
/// The value of the envelope's `schema_version` member this version reads and writes.
pub const SCHEMA_VERSION: u64 = 1;
/// The value of the envelope's `algorithm` member.
pub const ALGORITHM: &str = "ed25519";

/// Every member of an envelope, in RFC 8785 order; all are required, no other is read.
const MEMBERS: [&str; 7] = [
    "algorithm",
    "lock_digest",
    "public_key_fingerprint",
    "schema",
    "schema_version",
    "signature",
    "signed_at",
];

/// A signature envelope: which lockfile, which key, when, and the Ed25519 signature over the
/// canonical form (RFC 8785) of the envelope without its `signature` member.
///
/// Holding an `Envelope` means it is well formed, not that it verifies: see
/// [`Envelope::verify`] and [`crate::verify`].
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Envelope {
    lock_digest: Digest,
    public_key_fingerprint: Digest,
    signed_at: Timestamp,
    signature: ed25519_dalek::Signature,
}

impl SigningKey {
    /// Signs a lockfile: the envelope names `lock_digest` (see [`crate::lock_digest`]), this
    /// key's fingerprint and `signed_at`, and the signature covers the canonical form of all
    /// three with the constant members (docs/formats.md).
    #[must_use]
    pub fn sign(&self, lock_digest: Digest, signed_at: Timestamp) -> Envelope {
        let mut envelope = Envelope {
            lock_digest,
            public_key_fingerprint: self.public_key().fingerprint(),
            signed_at,
            signature: ed25519_dalek::Signature::from_bytes(&[0; 64]),
        };
        envelope.signature = self.signature_of(&envelope.signed_bytes());
        envelope
    }
}

impl Envelope {
    /// Reads an envelope with the strict reader, refusing every member it does not sign.
    ///
    /// # Errors
    ///
    /// [`Error::EnvelopeJson`] when the bytes break a strict-reading rule,
    /// [`Error::EnvelopeNotObject`], [`Error::UnknownMember`], [`Error::MissingMember`],
    /// [`Error::MemberType`], [`Error::MemberValue`] (another schema, version or algorithm),
    /// [`Error::MemberDigest`], [`Error::Timestamp`] and [`Error::SignatureEncoding`].
    pub fn parse(bytes: &[u8]) -> Result<Self, Error> {
        let value = mcppin_core::parse(bytes).map_err(|source| Error::EnvelopeJson { source })?;
        let object = value.as_object().ok_or(Error::EnvelopeNotObject)?;
        // Unknown members first: whatever they say would not be covered by the signature.
        if let Some(name) = object.keys().find(|k| !MEMBERS.contains(k)) {
            return Err(Error::UnknownMember {
                name: name.to_owned(),
            });
        }
        let member = |name: &'static str| object.get(name).ok_or(Error::MissingMember { name });
        let text = |name: &'static str| {
            member(name)?.as_str().ok_or(Error::MemberType {
                name,
                expected: "a string",
            })
        };
        // `expected` is the one accepted value, `json` the same as JSON for the message.
        let constant = |name: &'static str, expected: &str, json: &'static str| {
            let value = text(name)?;
            if value == expected {
                Ok(())
            } else {
                Err(Error::MemberValue {
                    name,
                    found: Value::from(value).to_string(),
                    expected: json,
                })
            }
        };
        let digest = |name: &'static str| {
            text(name)?
                .parse::<Digest>()
                .map_err(|_| Error::MemberDigest { name })
        };

        constant("schema", SCHEMA, "\"mcppin-lock-signature\"")?;
        let version = member("schema_version")?;
        let Kind::Number(number) = version.kind() else {
            return Err(Error::MemberType {
                name: "schema_version",
                expected: "a number",
            });
        };
        // Plain digits only, as every format of this project reads its version: `1.0` and
        // `1e0` equal 1 as numbers but would give one file two spellings.
        if number.literal() != "1" {
            return Err(Error::MemberValue {
                name: "schema_version",
                found: number.literal().to_owned(),
                expected: "1 (in plain digits)",
            });
        }
        constant("algorithm", ALGORITHM, "\"ed25519\"")?;
        let lock_digest = digest("lock_digest")?;
        let public_key_fingerprint = digest("public_key_fingerprint")?;
        let signed_at = text("signed_at")?.parse::<Timestamp>()?;
        // The STANDARD engine requires canonical padding and zero trailing bits, so one
        // signature has one spelling.
        let raw = STANDARD
            .decode(text("signature")?)
            .map_err(|_| Error::SignatureEncoding)?;
        let raw: [u8; 64] = raw.try_into().map_err(|_| Error::SignatureEncoding)?;
        Ok(Self {
            lock_digest,
            public_key_fingerprint,
            signed_at,
            signature: ed25519_dalek::Signature::from_bytes(&raw),
        })
    }

    /// The file form: every member, sorted, two-space indent, a newline at the end.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut object = self.unsigned();
        object.insert("signature", STANDARD.encode(self.signature.to_bytes()));
        mcppin_core::to_pretty(&Value::from(object))
    }

    /// The bytes the signature covers: the RFC 8785 canonical form of the envelope without
    /// its `signature` member.
    #[must_use]
    pub fn signed_bytes(&self) -> Vec<u8> {
        // The object holds only strings and the integer 1, so the lossless canonical writer
        // behind Display applies.
        Value::from(self.unsigned()).to_string().into_bytes()
    }

    fn unsigned(&self) -> Object {
        let mut object = Object::new();
        object.insert("schema", SCHEMA);
        object.insert("schema_version", SCHEMA_VERSION);
        object.insert("algorithm", ALGORITHM);
        object.insert("lock_digest", self.lock_digest.to_string());
        object.insert(
            "public_key_fingerprint",
            self.public_key_fingerprint.to_string(),
        );
        object.insert("signed_at", self.signed_at.to_string());
        object
    }

    /// The digest of the lockfile this envelope is for.
    #[must_use]
    pub fn lock_digest(&self) -> Digest {
        self.lock_digest
    }

    /// The fingerprint of the key the envelope says signed it (unchecked until
    /// [`Envelope::verify`]).
    #[must_use]
    pub fn public_key_fingerprint(&self) -> Digest {
        self.public_key_fingerprint
    }

    /// When it says it was signed (unchecked until [`Envelope::verify`]).
    #[must_use]
    pub fn signed_at(&self) -> Timestamp {
        self.signed_at
    }

    /// The 64 signature bytes.
    #[must_use]
    pub fn signature(&self) -> [u8; 64] {
        self.signature.to_bytes()
    }

    /// Checks the signature with the trusted key whose fingerprint the envelope names, and
    /// returns that key. Checks neither the lockfile digest nor the age: see
    /// [`crate::verify`].
    ///
    /// Verification is strict (RFC 8032 section 5.1.7 with canonical `S` and no small-order
    /// points), so a signature has one valid encoding.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignKey`] when no key in `keys` has the envelope's fingerprint,
    /// [`Error::BadSignature`] when the signature does not verify under it.
    pub fn verify<'k>(&self, keys: &'k [PublicKey]) -> Result<&'k PublicKey, Error> {
        let key = keys
            .iter()
            .find(|k| k.fingerprint() == self.public_key_fingerprint)
            .ok_or_else(|| Error::ForeignKey {
                found: self.public_key_fingerprint,
                expected: keys.iter().map(PublicKey::fingerprint).collect(),
            })?;
        key.verifying_key()
            .verify_strict(&self.signed_bytes(), &self.signature)
            .map_err(|_| Error::BadSignature {
                key: key.fingerprint(),
            })?;
        Ok(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::SigningKey;

    const PRIVATE: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC
-----END PRIVATE KEY-----
";

    fn envelope() -> (SigningKey, Envelope) {
        let key = SigningKey::from_pem(PRIVATE).unwrap();
        let env = key.sign(
            Digest::of_bytes(b"lock"),
            "2026-08-01T09:20:00Z".parse().unwrap(),
        );
        (key, env)
    }

    /// The envelope's file form as a string, for tests that edit it.
    fn text() -> String {
        String::from_utf8(envelope().1.to_bytes()).unwrap()
    }

    #[test]
    fn writes_the_spec_form_and_reads_it_back() {
        let (key, env) = envelope();
        let text = String::from_utf8(env.to_bytes()).unwrap();
        let fingerprint = key.public_key().fingerprint();
        let signature = STANDARD.encode(env.signature());
        assert_eq!(
            text,
            format!(
                "{{\n  \"algorithm\": \"ed25519\",\n  \"lock_digest\": \"{}\",\n  \
                 \"public_key_fingerprint\": \"{fingerprint}\",\n  \"schema\": \
                 \"mcppin-lock-signature\",\n  \"schema_version\": 1,\n  \"signature\": \
                 \"{signature}\",\n  \"signed_at\": \"2026-08-01T09:20:00Z\"\n}}\n",
                Digest::of_bytes(b"lock")
            )
        );
        assert_eq!(Envelope::parse(text.as_bytes()).unwrap(), env);
    }

    #[test]
    fn signed_bytes_are_the_canonical_envelope_without_signature() {
        let (key, env) = envelope();
        assert_eq!(
            String::from_utf8(env.signed_bytes()).unwrap(),
            format!(
                "{{\"algorithm\":\"ed25519\",\"lock_digest\":\"{}\",\
                 \"public_key_fingerprint\":\"{}\",\"schema\":\"mcppin-lock-signature\",\
                 \"schema_version\":1,\"signed_at\":\"2026-08-01T09:20:00Z\"}}",
                Digest::of_bytes(b"lock"),
                key.public_key().fingerprint()
            )
        );
        // The file form, canonicalised with the signature removed, is the same bytes.
        let mut value = mcppin_core::parse(&env.to_bytes()).unwrap().into_kind();
        let Kind::Object(object) = &mut value else {
            panic!("object")
        };
        object.remove("signature");
        assert_eq!(
            mcppin_core::canonicalize(&Value::new(value)).unwrap(),
            env.signed_bytes()
        );
    }

    #[test]
    fn verifies_under_its_key_and_names_the_key() {
        let (key, env) = envelope();
        let keys = [key.public_key()];
        assert_eq!(env.verify(&keys).unwrap(), &keys[0]);
    }

    #[test]
    fn refuses_a_key_not_given_naming_both_ids() {
        let (key, env) = envelope();
        let other = SigningKey::generate(&mut rand_core::OsRng).public_key();
        let err = env.verify(std::slice::from_ref(&other)).unwrap_err();
        let Error::ForeignKey { found, expected } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(*found, key.public_key().fingerprint());
        assert_eq!(expected, &[other.fingerprint()]);
        let message = err.to_string();
        assert!(message.contains(&found.to_string()), "{message}");
        assert!(
            message.contains(&other.fingerprint().to_string()),
            "{message}"
        );
    }

    #[test]
    fn refuses_a_signature_with_one_bit_flipped() {
        let (key, env) = envelope();
        let mut raw = env.signature();
        raw[10] ^= 0x01;
        let tampered = text().replace(&STANDARD.encode(env.signature()), &STANDARD.encode(raw));
        let tampered = Envelope::parse(tampered.as_bytes()).unwrap();
        assert!(matches!(
            tampered.verify(&[key.public_key()]),
            Err(Error::BadSignature { key: k }) if k == key.public_key().fingerprint()
        ));
    }

    #[test]
    fn a_signature_cannot_be_lifted_onto_another_envelope() {
        let (key, env) = envelope();
        let other = key.sign(Digest::of_bytes(b"other lock"), env.signed_at());
        let lifted = text().replace(
            &env.lock_digest().to_string(),
            &other.lock_digest().to_string(),
        );
        let lifted = Envelope::parse(lifted.as_bytes()).unwrap();
        assert!(matches!(
            lifted.verify(&[key.public_key()]),
            Err(Error::BadSignature { .. })
        ));
        let redated = text().replace("2026-08-01T09:20:00Z", "2026-09-01T09:20:00Z");
        assert!(matches!(
            Envelope::parse(redated.as_bytes())
                .unwrap()
                .verify(&[key.public_key()]),
            Err(Error::BadSignature { .. })
        ));
    }

    #[test]
    fn refuses_an_extra_member() {
        let extended = text().replacen('{', "{\"comment\": \"approved by ops\",", 1);
        assert!(matches!(
            Envelope::parse(extended.as_bytes()),
            Err(Error::UnknownMember { name }) if name == "comment"
        ));
    }

    #[test]
    fn escapes_an_unknown_member_name_in_the_message() {
        let extended = text().replacen('{', "{\"\\u001b[2J\": 1,", 1);
        let err = Envelope::parse(extended.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("<U+001B>[2J"), "{err}");
    }

    #[test]
    fn quotes_a_short_excerpt_of_long_text_from_the_envelope() {
        // A message quotes at most a short excerpt of the input.
        let long = "w".repeat(1 << 20);
        let excerpt = |quote: &str| format!("{quote}{}{quote}... (1048576 bytes)", "w".repeat(64));
        let cases = [
            (
                text().replacen('{', &format!("{{\"{long}\": 1,"), 1),
                excerpt("\""),
            ),
            (
                text().replacen(
                    "\"schema_version\": 1",
                    &format!("\"schema_version\": 1{}", "0".repeat((1 << 20) - 1)),
                    1,
                ),
                format!("1{}... (1048576 bytes)", "0".repeat(63)),
            ),
            (
                text().replacen("\"ed25519\"", &format!("\"{long}\""), 1),
                // The value as JSON, quotes included.
                format!("\"{}... (1048578 bytes)", "w".repeat(63)),
            ),
            (
                text().replacen("\"2026-08-01T09:20:00Z\"", &format!("\"{long}\""), 1),
                excerpt("\""),
            ),
        ];
        for (edited, expected) in cases {
            let message = Envelope::parse(edited.as_bytes()).unwrap_err().to_string();
            assert!(message.len() < 300, "{} bytes", message.len());
            assert!(message.contains(&expected), "{message}");
        }
        // Short text is quoted whole.
        let other = text().replacen("\"ed25519\"", "\"ES256\"", 1);
        assert_eq!(
            Envelope::parse(other.as_bytes()).unwrap_err().to_string(),
            "the signature envelope member \"algorithm\" is \"ES256\", expected \"ed25519\""
        );
    }

    #[test]
    fn refuses_each_missing_member() {
        let env = mcppin_core::parse(&envelope().1.to_bytes()).unwrap();
        for name in MEMBERS {
            let mut object = env.as_object().unwrap().clone();
            object.remove(name);
            let bytes = mcppin_core::to_pretty(&Value::from(object));
            assert!(
                matches!(Envelope::parse(&bytes), Err(Error::MissingMember { name: n }) if n == name),
                "{name}"
            );
        }
    }

    #[test]
    fn refuses_wrong_types_and_values() {
        type Case = (&'static str, &'static str, fn(&Error) -> bool);
        let cases: [Case; 10] = [
            (
                "\"schema\": \"mcppin-lock-signature\"",
                "\"schema\": \"other\"",
                |e| matches!(e, Error::MemberValue { name: "schema", .. }),
            ),
            ("\"schema_version\": 1", "\"schema_version\": 2", |e| {
                matches!(
                    e,
                    Error::MemberValue {
                        name: "schema_version",
                        ..
                    }
                )
            }),
            ("\"schema_version\": 1", "\"schema_version\": \"1\"", |e| {
                matches!(
                    e,
                    Error::MemberType {
                        name: "schema_version",
                        ..
                    }
                )
            }),
            (
                "\"algorithm\": \"ed25519\"",
                "\"algorithm\": \"ES256\"",
                |e| {
                    matches!(
                        e,
                        Error::MemberValue {
                            name: "algorithm",
                            ..
                        }
                    )
                },
            ),
            ("\"algorithm\": \"ed25519\"", "\"algorithm\": null", |e| {
                matches!(
                    e,
                    Error::MemberType {
                        name: "algorithm",
                        ..
                    }
                )
            }),
            (
                "\"lock_digest\": \"sha256:",
                "\"lock_digest\": \"sha512:",
                |e| {
                    matches!(
                        e,
                        Error::MemberDigest {
                            name: "lock_digest"
                        }
                    )
                },
            ),
            (
                "\"public_key_fingerprint\": \"sha256:",
                "\"public_key_fingerprint\": \"SHA256:",
                |e| {
                    matches!(
                        e,
                        Error::MemberDigest {
                            name: "public_key_fingerprint"
                        }
                    )
                },
            ),
            ("09:20:00Z", "09:20:00.5Z", |e| {
                matches!(e, Error::Timestamp { .. })
            }),
            ("\"signature\": \"", "\"signature\": \"AAAA", |e| {
                matches!(e, Error::SignatureEncoding)
            }),
            ("\"signature\": \"", "\"signature\": \"!", |e| {
                matches!(e, Error::SignatureEncoding)
            }),
        ];
        for (from, to, expect) in cases {
            let edited = text().replacen(from, to, 1);
            assert_ne!(edited, text(), "{from}");
            let err = Envelope::parse(edited.as_bytes()).unwrap_err();
            assert!(expect(&err), "{to}: {err:?}");
            assert_eq!(err.refusal(), Some(crate::Refusal::Malformed));
        }
    }

    #[test]
    fn reads_schema_version_only_in_plain_digits() {
        // `1.0` and `1e0` equal 1 as numbers, but the formats of this project
        // spell a version in plain digits only, so one file has one spelling.
        assert!(Envelope::parse(text().as_bytes()).is_ok());
        for spelling in ["1.0", "1e0", "-1", "10"] {
            let edited = text().replacen(
                "\"schema_version\": 1",
                &format!("\"schema_version\": {spelling}"),
                1,
            );
            let err = Envelope::parse(edited.as_bytes()).unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::MemberValue {
                        name: "schema_version",
                        ..
                    }
                ),
                "{spelling}: {err:?}"
            );
            let message = err.to_string();
            assert!(message.contains("\"schema_version\""), "{message}");
            assert!(message.contains(spelling), "{message}");
            assert!(message.contains("plain digits"), "{message}");
        }
        // A leading zero is refused by the strict reader, a string as the wrong type.
        let leading_zero = text().replacen("\"schema_version\": 1", "\"schema_version\": 01", 1);
        assert!(matches!(
            Envelope::parse(leading_zero.as_bytes()),
            Err(Error::EnvelopeJson { .. })
        ));
        let string = text().replacen("\"schema_version\": 1", "\"schema_version\": \"1\"", 1);
        assert!(matches!(
            Envelope::parse(string.as_bytes()),
            Err(Error::MemberType {
                name: "schema_version",
                ..
            })
        ));
    }

    #[test]
    fn refuses_non_canonical_base64() {
        let env = envelope().1;
        let good = STANDARD.encode(env.signature());
        assert!(good.ends_with("=="));
        // The last character before the padding carries 4 unused bits: set one of them.
        let mut chars: Vec<char> = good.chars().collect();
        let i = chars.len() - 3;
        let idx = base64_index(chars[i]);
        chars[i] = base64_char(idx | 1);
        let bad: String = chars.into_iter().collect();
        assert_ne!(bad, good);
        for variant in [bad, good.trim_end_matches('=').to_owned()] {
            let edited = text().replace(&good, &variant);
            assert!(
                matches!(
                    Envelope::parse(edited.as_bytes()),
                    Err(Error::SignatureEncoding)
                ),
                "{variant}"
            );
        }
    }

    fn base64_index(c: char) -> u8 {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        ALPHABET.iter().position(|&a| char::from(a) == c).unwrap() as u8
    }

    fn base64_char(i: u8) -> char {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        char::from(ALPHABET[usize::from(i)])
    }

    #[test]
    fn refuses_what_the_strict_reader_refuses() {
        let duplicated = text().replacen('{', "{\"schema\": \"mcppin-lock-signature\",", 1);
        assert!(matches!(
            Envelope::parse(duplicated.as_bytes()),
            Err(Error::EnvelopeJson { .. })
        ));
        assert!(matches!(
            Envelope::parse(b"[]"),
            Err(Error::EnvelopeNotObject)
        ));
        assert!(matches!(
            Envelope::parse(b""),
            Err(Error::EnvelopeJson { .. })
        ));
    }
}

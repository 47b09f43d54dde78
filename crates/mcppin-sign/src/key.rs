//! Ed25519 keys: PKCS#8 PEM for the private half, SPKI PEM for the public half (RFC 8410).

use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::pkcs8::spki::{AlgorithmIdentifierRef, SubjectPublicKeyInfoRef, der};
use ed25519_dalek::pkcs8::{
    DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, KeypairBytes,
    ObjectIdentifier, PrivateKeyInfo,
};
use mcppin_core::Digest;
use rand_core::CryptoRngCore;
use zeroize::Zeroizing;

use crate::envelope::Envelope;
use crate::error::Error;
use crate::time::Timestamp;

/// An Ed25519 private key.
///
/// # Security
///
/// It has no `Debug`, `Display` or serialisation: the only way out is [`SigningKey::to_pem`],
/// which returns a buffer that is wiped when dropped. The key itself, and the PKCS#8 buffers it
/// passes through, are wiped when dropped.
///
/// ```compile_fail
/// fn printable<T: std::fmt::Debug>() {}
/// printable::<mcppin_sign::SigningKey>();
/// ```
///
/// ```compile_fail
/// fn printable<T: std::fmt::Display>() {}
/// printable::<mcppin_sign::SigningKey>();
/// ```
pub struct SigningKey {
    inner: ed25519_dalek::SigningKey,
}

/// An Ed25519 public key and its fingerprint.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct PublicKey {
    inner: ed25519_dalek::VerifyingKey,
    fingerprint: Digest,
}

impl SigningKey {
    /// Makes a new key from `rng`, which must be a cryptographically secure generator (the
    /// operating system's, `rand_core::OsRng`, outside tests).
    #[must_use]
    pub fn generate<R: CryptoRngCore + ?Sized>(rng: &mut R) -> Self {
        Self {
            inner: ed25519_dalek::SigningKey::generate(rng),
        }
    }

    /// Reads an unencrypted PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`), as written
    /// by [`SigningKey::to_pem`] or `openssl genpkey -algorithm ed25519`. A version 2 document
    /// (with the public key inside) is accepted when the public key belongs to the private one.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyKey`] for an empty text, [`Error::KeyAlgorithm`] for a key of another
    /// algorithm, [`Error::PrivateKey`] for anything else: an encrypted key, a public key,
    /// broken PEM or DER.
    pub fn from_pem(pem: &str) -> Result<Self, Error> {
        let inner = ed25519_dalek::SigningKey::from_pkcs8_pem(pem)
            .map_err(|source| other_algorithm(pem, true).unwrap_or(Error::PrivateKey { source }))?;
        Ok(Self { inner })
    }

    /// Writes the key as PKCS#8 PEM, version 1 (RFC 8410 section 7), the form
    /// `openssl genpkey` writes, with LF line endings.
    ///
    /// # Errors
    ///
    /// [`Error::PrivateKey`] if the encoder fails (it has no reason to for a 32-byte key).
    pub fn to_pem(&self) -> Result<Zeroizing<String>, Error> {
        let bytes = KeypairBytes {
            secret_key: self.inner.to_bytes(),
            public_key: None,
        };
        bytes
            .to_pkcs8_pem(LineEnding::LF)
            .map_err(|source| Error::PrivateKey { source })
    }

    /// The public half.
    #[must_use]
    pub fn public_key(&self) -> PublicKey {
        PublicKey::new(self.inner.verifying_key())
    }

    /// Signs a lockfile: the envelope names `lock_digest` (see [`crate::lock_digest`]), this
    /// key's fingerprint and `signed_at`, and the signature covers the canonical form of all
    /// three with the constant members (SPEC 3.3).
    #[must_use]
    pub fn sign(&self, lock_digest: Digest, signed_at: Timestamp) -> Envelope {
        Envelope::sign(
            &self.inner,
            self.public_key().fingerprint,
            lock_digest,
            signed_at,
        )
    }
}

impl PublicKey {
    fn new(inner: ed25519_dalek::VerifyingKey) -> Self {
        let fingerprint = Digest::of_bytes(&spki_der(&inner));
        Self { inner, fingerprint }
    }

    /// Reads an SPKI PEM public key (`-----BEGIN PUBLIC KEY-----`), as written by
    /// [`PublicKey::to_pem`] or `openssl pkey -pubout`; white space around it is ignored.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyKey`] for an empty text, [`Error::PrivateKeyAsPublic`] when given a
    /// private key, [`Error::KeyAlgorithm`] for a key of another algorithm, [`Error::PublicKey`]
    /// for any other input that is not an Ed25519 SPKI PEM document, [`Error::WeakPublicKey`]
    /// for a key of small order.
    pub fn from_pem(pem: &str) -> Result<Self, Error> {
        // Blank lines around the document are not part of it: a key kept in a CI variable and
        // written out with a newline of its own ends in one.
        let pem = pem.trim();
        let inner = match ed25519_dalek::VerifyingKey::from_public_key_pem(pem) {
            Ok(inner) => inner,
            Err(_) if pem.contains("PRIVATE KEY-----") => return Err(Error::PrivateKeyAsPublic),
            Err(source) => {
                return Err(other_algorithm(pem, false).unwrap_or(Error::PublicKey { source }));
            }
        };
        let key = Self::new(inner);
        if key.inner.is_weak() {
            return Err(Error::WeakPublicKey {
                fingerprint: key.fingerprint,
            });
        }
        Ok(key)
    }

    /// Writes the key as SPKI PEM with LF line endings, the form `openssl pkey -pubout`
    /// writes.
    #[must_use]
    pub fn to_pem(&self) -> String {
        #[expect(
            clippy::expect_used,
            reason = "encoding a 32-byte key into the fixed SPKI structure cannot fail"
        )]
        self.inner
            .to_public_key_pem(LineEnding::LF)
            .expect("SPKI PEM encoding of an Ed25519 key")
    }

    /// The fingerprint: the digest (`sha256:` and hex) of the key's SPKI DER encoding, the
    /// same as `openssl pkey -pubin -outform DER | sha256sum`.
    #[must_use]
    pub fn fingerprint(&self) -> Digest {
        self.fingerprint
    }

    pub(crate) fn verifying_key(&self) -> &ed25519_dalek::VerifyingKey {
        &self.inner
    }
}

/// Ed25519's algorithm identifier (RFC 8410 section 3).
const ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");

/// Why a key the decoder refused is no Ed25519 key, when that can be told: the text is empty,
/// or it is a well-formed key (`private`: PKCS#8, otherwise SPKI) of another algorithm. `None`
/// leaves the decoder's own reason standing (its error names Ed25519's OID whatever the key
/// holds).
fn other_algorithm(pem: &str, private: bool) -> Option<Error> {
    if pem.trim().is_empty() {
        return Some(Error::EmptyKey);
    }
    let (label, der) = der::pem::decode_vec(pem.as_bytes()).ok()?;
    // A private key's DER holds the secret: wiped when dropped.
    let der = Zeroizing::new(der);
    let algorithm: AlgorithmIdentifierRef<'_> = match (private, label) {
        (true, "PRIVATE KEY") => PrivateKeyInfo::try_from(der.as_slice()).ok()?.algorithm,
        (false, "PUBLIC KEY") => {
            SubjectPublicKeyInfoRef::try_from(der.as_slice())
                .ok()?
                .algorithm
        }
        _ => return None,
    };
    if algorithm.oid == ED25519 {
        return None;
    }
    Some(Error::KeyAlgorithm {
        private,
        oid: algorithm.oid.to_string(),
        curve: algorithm.parameters_oid().ok().map(|oid| oid.to_string()),
    })
}

/// The SPKI DER encoding of a public key (RFC 8410 section 4).
fn spki_der(key: &ed25519_dalek::VerifyingKey) -> Vec<u8> {
    #[expect(
        clippy::expect_used,
        reason = "encoding a 32-byte key into the fixed SPKI structure cannot fail"
    )]
    key.to_public_key_der()
        .expect("SPKI encoding of an Ed25519 key")
        .into_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8410 section 10.3, the example private key.
    const RFC8410_PRIVATE: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC
-----END PRIVATE KEY-----
";
    /// RFC 8410 section 10.1, the example public key (the same key pair).
    const RFC8410_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=
-----END PUBLIC KEY-----
";

    #[test]
    fn reads_the_rfc_8410_examples_and_writes_them_back() {
        let secret = SigningKey::from_pem(RFC8410_PRIVATE).unwrap();
        assert_eq!(secret.to_pem().unwrap().as_str(), RFC8410_PRIVATE);
        let public = PublicKey::from_pem(RFC8410_PUBLIC).unwrap();
        assert_eq!(secret.public_key(), public);
        assert_eq!(public.to_pem(), RFC8410_PUBLIC);
    }

    #[test]
    fn fingerprint_is_the_digest_of_the_spki_der() {
        let public = PublicKey::from_pem(RFC8410_PUBLIC).unwrap();
        let der = base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            "MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=",
        )
        .unwrap();
        assert_eq!(der.len(), 44);
        assert_eq!(public.fingerprint(), Digest::of_bytes(&der));
    }

    #[test]
    fn rejects_a_private_key_given_as_public_and_the_reverse() {
        assert!(matches!(
            PublicKey::from_pem(RFC8410_PRIVATE),
            Err(Error::PrivateKeyAsPublic)
        ));
        assert!(matches!(
            SigningKey::from_pem(RFC8410_PUBLIC),
            Err(Error::PrivateKey { .. })
        ));
    }

    #[test]
    fn reads_a_public_key_with_blank_lines_around_it() {
        // A key pasted into a CI variable and written out with a newline of its own ends in
        // a blank line; it is still the same key (issue 14, item 9).
        let key = PublicKey::from_pem(RFC8410_PUBLIC).unwrap();
        let pem = RFC8410_PUBLIC;
        for padded in [
            format!("{pem}\n"),
            format!("\n\n{pem}\r\n\n"),
            format!("  {pem}  "),
        ] {
            let read = PublicKey::from_pem(&padded).unwrap();
            assert_eq!(read.fingerprint(), key.fingerprint());
        }
    }

    #[test]
    fn rejects_broken_pem_and_other_algorithms() {
        // One bit of the OID flipped: 1.3.101.113, Ed448's.
        let flipped = RFC8410_PUBLIC.replace("MCowBQYDK2VwAyEA", "MCowBQYDK2VxAyEA");
        assert!(matches!(
            PublicKey::from_pem(&flipped),
            Err(Error::KeyAlgorithm { oid, private: false, .. }) if oid == "1.3.101.113"
        ));
        // DER cut short.
        let cut = RFC8410_PUBLIC.replace("MCowBQYDK2VwAyEA", "MCsw");
        assert!(matches!(
            PublicKey::from_pem(&cut),
            Err(Error::PublicKey { .. })
        ));
        assert!(matches!(
            PublicKey::from_pem("not a key"),
            Err(Error::PublicKey { .. })
        ));
        // An X25519 key (OID 1.3.101.110) is not an Ed25519 key.
        let x25519 = "-----BEGIN PUBLIC KEY-----
MCowBQYDK2VuAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=
-----END PUBLIC KEY-----
";
        assert!(matches!(
            PublicKey::from_pem(x25519),
            Err(Error::KeyAlgorithm { oid, .. }) if oid == "1.3.101.110"
        ));
    }

    /// Test keys of other algorithms, made by `openssl genpkey` (testdata/keys/README.md).
    const OTHERS: [(&str, &str, &str, &str); 4] = [
        (
            "RSA",
            "OID 1.2.840.113549.1.1.1",
            include_str!("../../../testdata/keys/test-rsa.pem"),
            include_str!("../../../testdata/keys/test-rsa.pem.pub"),
        ),
        (
            "EC",
            "OID 1.2.840.10045.2.1, curve P-256, 1.2.840.10045.3.1.7",
            include_str!("../../../testdata/keys/test-ec-p256.pem"),
            include_str!("../../../testdata/keys/test-ec-p256.pem.pub"),
        ),
        (
            "X25519",
            "OID 1.3.101.110",
            include_str!("../../../testdata/keys/test-x25519.pem"),
            include_str!("../../../testdata/keys/test-x25519.pem.pub"),
        ),
        (
            "Ed448",
            "OID 1.3.101.113",
            include_str!("../../../testdata/keys/test-ed448.pem"),
            include_str!("../../../testdata/keys/test-ed448.pem.pub"),
        ),
    ];

    #[test]
    fn names_the_algorithm_of_a_key_that_is_not_ed25519() {
        // Issue 10 item 9: every such key was reported with Ed25519's own OID.
        for (name, oid, private, public) in OTHERS {
            for (err, half) in [
                (SigningKey::from_pem(private).err().unwrap(), "private"),
                (PublicKey::from_pem(public).unwrap_err(), "public"),
            ] {
                assert!(
                    matches!(&err, Error::KeyAlgorithm { private, .. } if *private == (half == "private")),
                    "{name} {half}: {err:?}"
                );
                assert_eq!(
                    err.to_string(),
                    format!("an {name} {half} key ({oid}): only Ed25519 keys are accepted"),
                    "{name} {half}"
                );
            }
        }
    }

    #[test]
    fn names_an_unknown_algorithm_by_its_dotted_oid() {
        // The Ed25519 example key with its OID changed to 1.3.101.114 (an arc nobody uses).
        let other = RFC8410_PUBLIC.replace("MCowBQYDK2VwAyEA", "MCowBQYDK2VyAyEA");
        assert_eq!(
            PublicKey::from_pem(&other).unwrap_err().to_string(),
            "a public key of another algorithm (OID 1.3.101.114): only Ed25519 keys are accepted"
        );
    }

    #[test]
    fn says_a_key_file_is_empty() {
        for empty in ["", "\n", "  \r\n"] {
            assert!(matches!(SigningKey::from_pem(empty), Err(Error::EmptyKey)));
            assert!(matches!(PublicKey::from_pem(empty), Err(Error::EmptyKey)));
        }
        assert_eq!(Error::EmptyKey.to_string(), "the key file is empty");
        // Anything else that is not PEM keeps the decoder's own reason.
        assert!(matches!(
            SigningKey::from_pem("not a key"),
            Err(Error::PrivateKey { .. })
        ));
    }

    #[test]
    fn rejects_a_weak_public_key() {
        // The identity point (0, 1): of small order, every signature "verifies" for some
        // implementations.
        let mut der = base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            "MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=",
        )
        .unwrap();
        der[12..].fill(0);
        der[12] = 1;
        let pem = format!(
            "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &der)
        );
        assert!(matches!(
            PublicKey::from_pem(&pem),
            Err(Error::WeakPublicKey { .. })
        ));
    }

    #[test]
    fn rejects_a_version_2_private_key_whose_public_key_is_another() {
        let secret = SigningKey::from_pem(RFC8410_PRIVATE).unwrap();
        let mut bytes = KeypairBytes {
            secret_key: secret.inner.to_bytes(),
            public_key: Some(ed25519_dalek::pkcs8::PublicKeyBytes(
                *secret.public_key().inner.as_bytes(),
            )),
        };
        let good = bytes.to_pkcs8_pem(LineEnding::LF).unwrap();
        assert!(SigningKey::from_pem(&good).is_ok());
        bytes.secret_key[0] ^= 1;
        let bad = bytes.to_pkcs8_pem(LineEnding::LF).unwrap();
        assert!(matches!(
            SigningKey::from_pem(&bad),
            Err(Error::PrivateKey { .. })
        ));
    }
}

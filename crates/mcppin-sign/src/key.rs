//! Ed25519 keys: PKCS#8 PEM for the private half, SPKI PEM for the public half (RFC 8410).

use ed25519_dalek::Signer as _;
use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::pkcs8::spki::{AlgorithmIdentifierRef, SubjectPublicKeyInfoRef, der};
use ed25519_dalek::pkcs8::{
    DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, KeypairBytes,
    ObjectIdentifier, PrivateKeyInfo,
};
use mcppin_core::Digest;
use pkcs8::EncryptedPrivateKeyInfo;
use pkcs8::der::pem::PemLabel;
use pkcs8::der::{Decode, Reader, SliceReader};
use pkcs8::pkcs5::{self, pbes2};
use rand_core::CryptoRngCore;
use zeroize::Zeroizing;

use crate::error::Error;

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
    /// [`Error::EmptyKey`] for an empty text, [`Error::EncryptedKey`] for an encrypted key
    /// (see [`SigningKey::from_encrypted_pem`]), [`Error::PublicKeyAsPrivate`] for a public
    /// key, [`Error::KeyAlgorithm`] for a key of another algorithm, [`Error::PrivateKey`] for
    /// anything else: broken PEM or DER.
    pub fn from_pem(pem: &str) -> Result<Self, Error> {
        if Self::is_encrypted_pem(pem) {
            return Err(Error::EncryptedKey);
        }
        let inner = ed25519_dalek::SigningKey::from_pkcs8_pem(pem).map_err(|source| {
            if pem.contains("-----BEGIN PUBLIC KEY-----") {
                return Error::PublicKeyAsPrivate;
            }
            other_algorithm(pem, true).unwrap_or(Error::PrivateKey { source })
        })?;
        Ok(Self { inner })
    }

    /// Whether `pem` is an encrypted PKCS#8 private key (`-----BEGIN ENCRYPTED PRIVATE
    /// KEY-----`, RFC 5958 section 3), which needs [`SigningKey::from_encrypted_pem`].
    #[must_use]
    pub fn is_encrypted_pem(pem: &str) -> bool {
        pem.trim_start()
            .starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----")
    }

    /// Reads an encrypted PKCS#8 PEM private key (`-----BEGIN ENCRYPTED PRIVATE KEY-----`), as
    /// written by [`SigningKey::to_encrypted_pem`], `openssl genpkey -algorithm ed25519
    /// -aes-256-cbc` or `openssl pkcs8 -topk8 -v2 aes-256-cbc [-scrypt]`: PBES2 (RFC 8018
    /// section 6.2) with scrypt (RFC 7914) or PBKDF2 with HMAC-SHA-2, and AES-CBC.
    ///
    /// # Errors
    ///
    /// [`Error::Passphrase`] when `passphrase` does not decrypt it (or the ciphertext is
    /// damaged), [`Error::KeyEncryption`] for a scheme this build does not read (PBES1,
    /// PKCS#12, DES), [`Error::KeyDerivationCost`] for a key derivation asking for more than
    /// [`SigningKey::MAX_SCRYPT_MEMORY`], [`SigningKey::MAX_KDF_WORK`] or
    /// [`SigningKey::MAX_PBKDF2_ITERATIONS`],
    /// [`Error::PrivateKey`] for broken PEM or DER, [`Error::KeyAlgorithm`] when what the
    /// decryption gives is a key of another algorithm. A plain key (or anything else) is
    /// read as [`SigningKey::from_pem`] reads it, without the passphrase.
    ///
    /// # Security
    ///
    /// The decrypted key and every buffer it passes through are wiped when dropped.
    pub fn from_encrypted_pem(pem: &str, passphrase: &[u8]) -> Result<Self, Error> {
        if pem.trim().is_empty() {
            return Err(Error::EmptyKey);
        }
        let (label, der) = der::pem::decode_vec(pem.as_bytes()).map_err(|e| Error::PrivateKey {
            source: pkcs8::Error::Asn1(e.into()),
        })?;
        if label != "ENCRYPTED PRIVATE KEY" {
            // A plain key is read as it is; the passphrase is not needed.
            return Self::from_pem(pem);
        }
        let info = EncryptedPrivateKeyInfo::from_der(&der).map_err(|e| {
            unsupported_scheme(&der).unwrap_or(Error::PrivateKey { source: e.into() })
        })?;
        let params = match &info.encryption_algorithm {
            pkcs5::EncryptionScheme::Pbes2(params) => params,
            other => {
                return Err(Error::KeyEncryption {
                    oid: other.oid().to_string(),
                });
            }
        };
        check_cost(&params.kdf)?;
        let plain = info.decrypt(passphrase).map_err(|e| match e {
            pkcs8::Error::EncryptedPrivateKey(pkcs5::Error::UnsupportedAlgorithm { oid }) => {
                Error::KeyEncryption {
                    oid: oid.to_string(),
                }
            }
            _ => Error::Passphrase,
        })?;
        // Padding that happens to check out under a wrong passphrase gives bytes that are no
        // PKCS#8 document: a wrong passphrase too. A key of another algorithm is named.
        let inner = ed25519_dalek::SigningKey::from_pkcs8_der(plain.as_bytes()).map_err(|_| {
            match PrivateKeyInfo::try_from(plain.as_bytes()) {
                Ok(info) if info.algorithm.oid != ED25519 => Error::KeyAlgorithm {
                    private: true,
                    oid: info.algorithm.oid.to_string(),
                    curve: info
                        .algorithm
                        .parameters_oid()
                        .ok()
                        .map(|oid| oid.to_string()),
                },
                _ => Error::Passphrase,
            }
        })?;
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

    /// Writes the key as encrypted PKCS#8 PEM (`-----BEGIN ENCRYPTED PRIVATE KEY-----`, RFC
    /// 5958 section 3): PBES2 (RFC 8018) with scrypt (RFC 7914, N = 2^14, r = 8, p = 4, a
    /// 16-byte salt) and AES-256-CBC (a 16-byte IV), salt and IV from `rng`. The form
    /// `openssl pkcs8 -topk8 -v2 aes-256-cbc -scrypt` writes, with four times its work: N and
    /// r are the most openssl reads (it refuses scrypt needing more than 32 MiB), p multiplies
    /// the cost of every guess without asking for more memory.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyPassphrase`] for an empty passphrase, [`Error::PrivateKey`] if the
    /// encoder fails (it has no reason to).
    ///
    /// # Security
    ///
    /// The plain PKCS#8 document is wiped once encrypted, and the returned text when dropped.
    pub fn to_encrypted_pem<R: CryptoRngCore + ?Sized>(
        &self,
        rng: &mut R,
        passphrase: &[u8],
    ) -> Result<Zeroizing<String>, Error> {
        if passphrase.is_empty() {
            return Err(Error::EmptyPassphrase);
        }
        let mut salt = [0u8; 16];
        let mut iv = [0u8; 16];
        rng.fill_bytes(&mut salt);
        rng.fill_bytes(&mut iv);
        let encode = || -> Result<Zeroizing<String>, pkcs8::Error> {
            let scrypt = pkcs5::scrypt::Params::new(SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P, 32)
                .map_err(|_| pkcs8::Error::KeyMalformed)?;
            let params = pbes2::Parameters::scrypt_aes256cbc(scrypt, &salt, &iv)?;
            let bytes = KeypairBytes {
                secret_key: self.inner.to_bytes(),
                public_key: None,
            };
            let plain = bytes.to_pkcs8_der()?;
            let encrypted = PrivateKeyInfo::try_from(plain.as_bytes())?
                .encrypt_with_params(params, passphrase)?;
            Ok(encrypted.to_pem(EncryptedPrivateKeyInfo::PEM_LABEL, LineEnding::LF)?)
        };
        encode().map_err(|source| Error::PrivateKey { source })
    }

    /// The most memory an encrypted key's scrypt parameters may make the derivation allocate:
    /// 1 GiB (about 60 times what this crate's own keys use), counting every buffer scrypt
    /// (RFC 7914 section 6) holds at once: `V` of 128 * r * N bytes, `B` of 128 * r * p
    /// bytes and a block of 128 * r, so 128 * r * (N + p + 1) in all.
    pub const MAX_SCRYPT_MEMORY: u64 = 1 << 30;

    /// The most work an encrypted key's scrypt parameters may ask for: N * r * p block
    /// operations, 2^28 (1,024 times this crate's own keys).
    pub const MAX_KDF_WORK: u64 = 1 << 28;

    /// The most iterations an encrypted key's PBKDF2 parameters may ask for: 10 million
    /// (5,000 times openssl's default). PBKDF2 allocates nothing the file sizes: its output
    /// is the cipher's key.
    pub const MAX_PBKDF2_ITERATIONS: u32 = 10_000_000;

    pub(crate) fn inner(&self) -> &ed25519_dalek::SigningKey {
        &self.inner
    }

    /// The public half.
    #[must_use]
    pub fn public_key(&self) -> PublicKey {
        PublicKey::new(self.inner.verifying_key())
    }

    /// The Ed25519 signature of `bytes` (an envelope's signed form: see
    /// [`SigningKey::sign`](crate::SigningKey::sign)).
    pub(crate) fn signature_of(&self, bytes: &[u8]) -> ed25519_dalek::Signature {
        self.inner.sign(bytes)
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

/// The scrypt parameters of [`SigningKey::to_encrypted_pem`].
const SCRYPT_LOG_N: u8 = 14;
const SCRYPT_R: u32 = 8;
const SCRYPT_P: u32 = 4;

/// Refuses a key derivation that asks for more than [`SigningKey::MAX_SCRYPT_MEMORY`],
/// [`SigningKey::MAX_KDF_WORK`] or [`SigningKey::MAX_PBKDF2_ITERATIONS`]: the file chooses
/// the cost, and the scrypt crate allocates what it is told to, before it checks anything
/// but overflow. Each of N, r and p can make it allocate: r and N through `V`, r and p
/// through `B` (scrypt fills it by PBKDF2 first, whatever N is).
fn check_cost(kdf: &pbes2::Kdf<'_>) -> Result<(), Error> {
    if let Some(scrypt) = kdf.scrypt() {
        let n = scrypt.cost_parameter;
        let r = u64::from(scrypt.block_size);
        let p = u64::from(scrypt.parallelization);
        let memory = n
            .saturating_add(p)
            .saturating_add(1)
            .saturating_mul(r)
            .saturating_mul(128);
        let work = n.saturating_mul(r).saturating_mul(p);
        if memory > SigningKey::MAX_SCRYPT_MEMORY || work > SigningKey::MAX_KDF_WORK {
            return Err(Error::KeyDerivationCost {
                cost: format!("scrypt N={n} r={r} p={p}"),
            });
        }
    }
    if let Some(pbkdf2) = kdf.pbkdf2()
        && pbkdf2.iteration_count > SigningKey::MAX_PBKDF2_ITERATIONS
    {
        return Err(Error::KeyDerivationCost {
            cost: format!("PBKDF2 {} iterations", pbkdf2.iteration_count),
        });
    }
    Ok(())
}

/// The first algorithm of an encrypted key's scheme that the decoder does not know, when the
/// outer structure is sound (RFC 5958 section 3): the scheme itself (a PBES1 or PKCS#12 OID)
/// or, under PBES2 (RFC 8018 appendix A.4), its key derivation or cipher. `None` leaves the
/// decoder's own reason standing.
fn unsupported_scheme(der: &[u8]) -> Option<Error> {
    let mut reader = SliceReader::new(der).ok()?;
    let scheme = reader
        .sequence(|outer| {
            let scheme: AlgorithmIdentifierRef<'_> = outer.decode()?;
            let _data: der::asn1::OctetStringRef<'_> = outer.decode()?;
            Ok(scheme)
        })
        .ok()?;
    let unsupported = |oid: ObjectIdentifier| {
        Some(Error::KeyEncryption {
            oid: oid.to_string(),
        })
    };
    if scheme.oid != pbes2::PBES2_OID {
        return unsupported(scheme.oid);
    }
    let params = scheme.parameters?;
    let (kdf, cipher) = params
        .sequence(|inner| {
            let kdf: AlgorithmIdentifierRef<'_> = inner.decode()?;
            let cipher: AlgorithmIdentifierRef<'_> = inner.decode()?;
            Ok((kdf, cipher))
        })
        .ok()?;
    if pbes2::Kdf::try_from(kdf).is_err() {
        if let Some(prf) = kdf.parameters.and_then(|p| pbkdf2_prf(p)) {
            return unsupported(prf);
        }
        return unsupported(kdf.oid);
    }
    if pbes2::EncryptionScheme::try_from(cipher).is_err() {
        return unsupported(cipher.oid);
    }
    None
}

/// The PRF of PBKDF2 parameters (RFC 8018 appendix A.2) when it names one.
fn pbkdf2_prf(params: der::asn1::AnyRef<'_>) -> Option<ObjectIdentifier> {
    params
        .sequence(|p| {
            let _salt: der::asn1::AnyRef<'_> = p.decode()?;
            let _iterations: u32 = p.decode()?;
            let _length: Option<u16> = p.decode()?;
            let prf: Option<AlgorithmIdentifierRef<'_>> = p.decode()?;
            Ok(prf.map(|prf| prf.oid))
        })
        .ok()
        .flatten()
}

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
            Err(Error::PublicKeyAsPrivate)
        ));
    }

    #[test]
    fn reads_a_public_key_with_blank_lines_around_it() {
        // A key pasted into a CI variable and written out with a newline of its own ends in
        // a blank line; it is still the same key.
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
        // Every such key was reported with Ed25519's own OID.
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

    /// The test key alice, encrypted by openssl (testdata/keys/README.md).
    const ALICE: &str = include_str!("../../../testdata/keys/test-alice.pem");
    const PASSPHRASE: &[u8] = b"test passphrase";
    const ALICE_SCRYPT: &str = include_str!("../../../testdata/keys/test-alice-scrypt.pem");
    const ALICE_PBKDF2: &str = include_str!("../../../testdata/keys/test-alice-pbkdf2.pem");
    const ALICE_PBES1: &str = include_str!("../../../testdata/keys/test-alice-pbes1.pem");
    const ALICE_DES3: &str = include_str!("../../../testdata/keys/test-alice-des3.pem");

    fn alice() -> PublicKey {
        SigningKey::from_pem(ALICE).unwrap().public_key()
    }

    #[test]
    fn reads_keys_openssl_encrypted_with_scrypt_and_with_pbkdf2() {
        for pem in [ALICE_SCRYPT, ALICE_PBKDF2] {
            assert!(SigningKey::is_encrypted_pem(pem));
            let key = SigningKey::from_encrypted_pem(pem, PASSPHRASE).unwrap();
            assert_eq!(key.public_key(), alice());
        }
        assert!(!SigningKey::is_encrypted_pem(ALICE));
    }

    #[test]
    fn refuses_a_wrong_passphrase() {
        for pem in [ALICE_SCRYPT, ALICE_PBKDF2] {
            for wrong in [&b"test passphrasf"[..], b"", b"TEST PASSPHRASE"] {
                assert!(
                    matches!(
                        SigningKey::from_encrypted_pem(pem, wrong),
                        Err(Error::Passphrase)
                    ),
                    "{wrong:?}"
                );
            }
        }
    }

    #[test]
    fn refuses_an_encrypted_key_without_a_passphrase() {
        assert!(matches!(
            SigningKey::from_pem(ALICE_SCRYPT),
            Err(Error::EncryptedKey)
        ));
    }

    #[test]
    fn encrypts_and_reads_back_its_own_keys() {
        let key = SigningKey::generate(&mut rand_core::OsRng);
        let pem = key
            .to_encrypted_pem(&mut rand_core::OsRng, PASSPHRASE)
            .unwrap();
        assert!(pem.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"));
        assert!(pem.ends_with("-----END ENCRYPTED PRIVATE KEY-----\n"));
        // The secret is not in the file in any form an encoder would show it.
        let secret = key.inner.to_bytes();
        let der = der::pem::decode_vec(pem.as_bytes()).unwrap().1;
        assert!(!der.windows(32).any(|w| w == secret));
        let back = SigningKey::from_encrypted_pem(&pem, PASSPHRASE).unwrap();
        assert_eq!(back.public_key(), key.public_key());
        assert!(matches!(
            SigningKey::from_encrypted_pem(&pem, b"another"),
            Err(Error::Passphrase)
        ));
        // The parameters are the documented ones.
        let info = EncryptedPrivateKeyInfo::from_der(&der).unwrap();
        let pkcs5::EncryptionScheme::Pbes2(params) = &info.encryption_algorithm else {
            panic!("not PBES2");
        };
        let scrypt = params.kdf.scrypt().unwrap();
        assert_eq!(
            (
                scrypt.cost_parameter,
                scrypt.block_size,
                scrypt.parallelization
            ),
            (1 << 14, 8, 4)
        );
        assert_eq!(scrypt.salt.len(), 16);
        assert_eq!(params.encryption.oid(), pbes2::AES_256_CBC_OID);
        // Two encryptions of one key differ (salt and IV are fresh).
        let again = key
            .to_encrypted_pem(&mut rand_core::OsRng, PASSPHRASE)
            .unwrap();
        assert_ne!(pem, again);
    }

    #[test]
    fn refuses_to_encrypt_with_an_empty_passphrase() {
        let key = SigningKey::from_pem(ALICE).unwrap();
        assert!(matches!(
            key.to_encrypted_pem(&mut rand_core::OsRng, b""),
            Err(Error::EmptyPassphrase)
        ));
    }

    #[test]
    fn refuses_a_truncated_encrypted_key() {
        let body: Vec<&str> = ALICE_SCRYPT.lines().collect();
        // The last base64 line cut off: the DER ends early.
        let cut = format!(
            "{}\n{}\n",
            body[..body.len() - 2].join("\n"),
            body[body.len() - 1]
        );
        assert!(matches!(
            SigningKey::from_encrypted_pem(&cut, PASSPHRASE),
            Err(Error::PrivateKey { .. })
        ));
        // The ciphertext one block short, re-encoded: the structure holds, decryption fails.
        let (_, mut der) = der::pem::decode_vec(ALICE_SCRYPT.as_bytes()).unwrap();
        let data_at = der.len() - 64;
        assert_eq!(
            &der[data_at - 2..data_at],
            [0x04, 64],
            "OCTET STRING of 64 bytes"
        );
        assert_eq!(&der[..2], [0x30, 0x81], "SEQUENCE, length in one byte");
        der.truncate(der.len() - 16);
        der[data_at - 1] -= 16;
        der[2] -= 16;
        let pem = der::pem::encode_string("ENCRYPTED PRIVATE KEY", LineEnding::LF, &der).unwrap();
        assert!(matches!(
            SigningKey::from_encrypted_pem(&pem, PASSPHRASE),
            Err(Error::Passphrase)
        ));
        assert!(matches!(
            SigningKey::from_encrypted_pem("", PASSPHRASE),
            Err(Error::EmptyKey)
        ));
    }

    #[test]
    fn names_an_encryption_scheme_it_does_not_read() {
        // PKCS#12 pbeWithSHAAnd3-KeyTripleDES-CBC, and PBES2 with des-ede3-cbc.
        for (pem, oid) in [
            (ALICE_PBES1, "1.2.840.113549.1.12.1.3"),
            (ALICE_DES3, "1.2.840.113549.3.7"),
        ] {
            let err = SigningKey::from_encrypted_pem(pem, PASSPHRASE)
                .err()
                .unwrap();
            assert!(
                matches!(&err, Error::KeyEncryption { oid: o } if o == oid),
                "{err:?}"
            );
            assert!(
                err.to_string()
                    .contains("openssl pkcs8 -topk8 -v2 aes-256-cbc -scrypt")
            );
        }
    }

    #[test]
    fn refuses_a_key_derivation_that_asks_too_much() {
        let (_, der) = der::pem::decode_vec(ALICE_SCRYPT.as_bytes()).unwrap();
        let info = EncryptedPrivateKeyInfo::from_der(&der).unwrap();
        let pkcs5::EncryptionScheme::Pbes2(params) = &info.encryption_algorithm else {
            panic!("not PBES2");
        };
        let mut kdf = *params.kdf.scrypt().unwrap();
        // openssl's own parameters (N = 2^14, r = 8, p = 1) and this crate's hold.
        assert_eq!(
            (kdf.cost_parameter, kdf.block_size, kdf.parallelization),
            (1 << 14, 8, 1)
        );
        assert!(check_cost(&pbes2::Kdf::Scrypt(kdf)).is_ok());
        kdf.parallelization = 4;
        assert!(check_cost(&pbes2::Kdf::Scrypt(kdf)).is_ok());
        // 128 * 2^15 * 2^15 bytes = 128 GiB.
        kdf.parallelization = 1;
        kdf.cost_parameter = 1 << 15;
        kdf.block_size = 1 << 15;
        let err = check_cost(&pbes2::Kdf::Scrypt(kdf)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the private key's key derivation asks too much (scrypt N=32768 r=32768 p=1); \
             re-encrypt it with: openssl pkcs8 -topk8 -v2 aes-256-cbc -scrypt"
        );
        // Little memory, but 2^14 * 8 * 65535 block operations.
        kdf.cost_parameter = 1 << 14;
        kdf.block_size = 8;
        kdf.parallelization = u16::MAX;
        assert!(check_cost(&pbes2::Kdf::Scrypt(kdf)).is_err());

        // PBKDF2: openssl's 2048 iterations hold, a billion do not.
        let (_, der2) = der::pem::decode_vec(ALICE_PBKDF2.as_bytes()).unwrap();
        let info2 = EncryptedPrivateKeyInfo::from_der(&der2).unwrap();
        let pkcs5::EncryptionScheme::Pbes2(params2) = &info2.encryption_algorithm else {
            panic!("not PBES2");
        };
        let mut pbkdf2 = *params2.kdf.pbkdf2().unwrap();
        assert_eq!(pbkdf2.iteration_count, 2048);
        assert!(check_cost(&pbes2::Kdf::Pbkdf2(pbkdf2)).is_ok());
        pbkdf2.iteration_count = 1_000_000_000;
        assert!(matches!(
            check_cost(&pbes2::Kdf::Pbkdf2(pbkdf2)),
            Err(Error::KeyDerivationCost { cost }) if cost == "PBKDF2 1000000000 iterations"
        ));

        // Through the reader, the file's own parameters: N = 0x7fff, r = p = 127 (2^35 work).
        let mut bad = der.clone();
        let n_at = bad
            .windows(4)
            .position(|w| w == [0x02, 0x02, 0x40, 0x00])
            .unwrap();
        bad[n_at + 2..n_at + 4].copy_from_slice(&[0x7f, 0xff]);
        assert_eq!(
            &bad[n_at + 4..n_at + 10],
            [0x02, 0x01, 0x08, 0x02, 0x01, 0x01]
        );
        bad[n_at + 6] = 0x7f;
        bad[n_at + 9] = 0x7f;
        let pem = der::pem::encode_string("ENCRYPTED PRIVATE KEY", LineEnding::LF, &bad).unwrap();
        assert!(matches!(
            SigningKey::from_encrypted_pem(&pem, PASSPHRASE),
            Err(Error::KeyDerivationCost { cost }) if cost == "scrypt N=32767 r=127 p=127"
        ));
    }

    /// Whether scrypt parameters (N, r, p) pass [`check_cost`], and the cost it names if not.
    fn scrypt_cost(n: u64, r: u16, p: u16) -> Result<(), String> {
        let (_, der) = der::pem::decode_vec(ALICE_SCRYPT.as_bytes()).unwrap();
        let info = EncryptedPrivateKeyInfo::from_der(&der).unwrap();
        let pkcs5::EncryptionScheme::Pbes2(params) = &info.encryption_algorithm else {
            panic!("not PBES2");
        };
        let mut kdf = *params.kdf.scrypt().unwrap();
        kdf.cost_parameter = n;
        kdf.block_size = r;
        kdf.parallelization = p;
        match check_cost(&pbes2::Kdf::Scrypt(kdf)) {
            Ok(()) => Ok(()),
            Err(Error::KeyDerivationCost { cost }) => Err(cost),
            Err(other) => panic!("{other:?}"),
        }
    }

    /// The bytes scrypt allocates for (N, r, p): `V`, `B` and one block (RFC 7914 section 6).
    fn scrypt_memory(n: u64, r: u16, p: u16) -> u64 {
        n.saturating_add(u64::from(p) + 1)
            .saturating_mul(u64::from(r))
            .saturating_mul(128)
    }

    #[test]
    fn bounds_every_buffer_scrypt_allocates() {
        // N = 2, r = 65535, p = 2048 asked for 128 * r * p = 17 GB of `B`
        // while 128 * r * N and N * r * p stayed within their bounds.
        let refused = |n, r, p| {
            assert_eq!(
                scrypt_cost(n, r, p),
                Err(format!("scrypt N={n} r={r} p={p}"))
            );
        };
        let held = |n, r, p| {
            assert!(scrypt_memory(n, r, p) <= SigningKey::MAX_SCRYPT_MEMORY);
            assert!(n * u64::from(r) * u64::from(p) <= SigningKey::MAX_KDF_WORK);
            assert_eq!(scrypt_cost(n, r, p), Ok(()), "N={n} r={r} p={p}");
        };
        // p, through `B`: the largest p that fits holds, one more does not.
        assert!(128 * 2 * u64::from(u16::MAX) < SigningKey::MAX_SCRYPT_MEMORY);
        assert!(2 * u64::from(u16::MAX) * 2048 < SigningKey::MAX_KDF_WORK);
        assert!(scrypt_memory(2, u16::MAX, 126) > SigningKey::MAX_SCRYPT_MEMORY);
        held(2, u16::MAX, 125);
        refused(2, u16::MAX, 126);
        refused(2, u16::MAX, 2048);
        // N, through `V`.
        held(1 << 19, 8, 1);
        refused(1 << 20, 8, 1);
        // r, through both.
        held(1 << 14, 511, 1);
        refused(1 << 14, 512, 1);
        refused(1 << 11, u16::MAX, 1);
        // The exact bound holds: 128 * 8 * (N + p + 1) = 2^30 (an N no key can have, as it is
        // no power of two: the arithmetic alone).
        held((1 << 20) - 2, 8, 1);
        refused((1 << 20) - 1, 8, 1);
        // Work, N * r * p, with little memory; and N so large the sums saturate.
        refused(1 << 14, 8, u16::MAX);
        refused(u64::MAX, u16::MAX, u16::MAX);
        // PBKDF2's iteration count, at the bound and past it.
        let (_, der) = der::pem::decode_vec(ALICE_PBKDF2.as_bytes()).unwrap();
        let info = EncryptedPrivateKeyInfo::from_der(&der).unwrap();
        let pkcs5::EncryptionScheme::Pbes2(params) = &info.encryption_algorithm else {
            panic!("not PBES2");
        };
        let mut pbkdf2 = *params.kdf.pbkdf2().unwrap();
        pbkdf2.iteration_count = SigningKey::MAX_PBKDF2_ITERATIONS;
        assert!(check_cost(&pbes2::Kdf::Pbkdf2(pbkdf2)).is_ok());
        pbkdf2.iteration_count += 1;
        assert!(matches!(
            check_cost(&pbes2::Kdf::Pbkdf2(pbkdf2)),
            Err(Error::KeyDerivationCost { cost }) if cost == "PBKDF2 10000001 iterations"
        ));
    }

    #[test]
    fn says_a_public_key_is_no_private_key() {
        let public = include_str!("../../../testdata/keys/test-alice.pem.pub");
        assert!(matches!(
            SigningKey::from_pem(public),
            Err(Error::PublicKeyAsPrivate)
        ));
        assert!(matches!(
            SigningKey::from_encrypted_pem(public, PASSPHRASE),
            Err(Error::PublicKeyAsPrivate)
        ));
        // A plain key given to the encrypted reader is read as it is.
        assert_eq!(
            SigningKey::from_encrypted_pem(ALICE, PASSPHRASE)
                .unwrap()
                .public_key(),
            alice()
        );
    }
}

//! Digests of canonical JSON (docs/json.md).

use std::fmt;
use std::str::FromStr;

use sha2::{Digest as _, Sha256};

use crate::canon::{Sink, emit};
use crate::error::JsonError as Error;
use crate::value::Value;

/// A SHA-256 digest, written `sha256:` followed by 64 lowercase hex digits.
#[derive(Clone, Copy, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The SHA-256 digest of arbitrary bytes.
    #[must_use]
    pub fn of_bytes(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    /// The raw 32 bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

/// The pinning digest of a value: SHA-256 of its RFC 8785 canonical form.
///
/// # Errors
///
/// [`Error::Undecidable`] with every undecidable literal when the value holds one: such a value
/// has no digest, since two different served values could share it (docs/json.md).
///
/// # Examples
///
/// ```
/// let a = mcppin_core::parse(br#"{"name": "t", "n": 1.0}"#)?;
/// let b = mcppin_core::parse(br#"{ "n":1, "name":"t" }"#)?;
/// assert_eq!(mcppin_core::digest(&a)?, mcppin_core::digest(&b)?);
/// assert!(mcppin_core::digest(&a)?.to_string().starts_with("sha256:"));
///
/// let big = mcppin_core::parse(b"[9007199254740993]")?;
/// assert_eq!(mcppin_core::digest(&big).unwrap_err().rule(), "undecidable");
/// # Ok::<(), mcppin_core::Error>(())
/// ```
pub fn digest(value: &Value) -> Result<Digest, Error> {
    let mut sink = Hashing {
        hasher: Sha256::new(),
        buffer: Vec::with_capacity(CHUNK + 4096),
    };
    match emit(value, &mut sink) {
        Ok(()) => {
            sink.hasher.update(&sink.buffer);
            Ok(Digest(sink.hasher.finalize().into()))
        }
        // The writer stopped at the first undecidable literal (see `Sink::REFUSES_UNDECIDABLE`):
        // only now walk the whole value to list them all.
        Err(Error::Undecidable { .. }) => Err(Error::Undecidable {
            literals: value
                .undecidable_literals()
                .into_iter()
                .map(|n| n.literal().to_owned())
                .collect(),
        }),
        Err(e) => Err(e),
    }
}

/// How many canonical bytes are buffered before they are hashed.
const CHUNK: usize = 64 * 1024;

/// Hashes canonical bytes as they are written, in chunks.
struct Hashing {
    hasher: Sha256,
    buffer: Vec<u8>,
}

impl Hashing {
    #[inline]
    fn flush_if_full(&mut self) {
        if self.buffer.len() >= CHUNK {
            self.hasher.update(&self.buffer);
            self.buffer.clear();
        }
    }
}

impl Sink for Hashing {
    const REFUSES_UNDECIDABLE: bool = true;

    // Inlined into the canonical writer: it pushes a byte for every bracket, comma and colon.
    #[inline]
    fn push(&mut self, byte: u8) {
        self.buffer.push(byte);
        self.flush_if_full();
    }

    #[inline]
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
        self.flush_if_full();
    }

    fn reserve(&mut self, additional: usize) {
        self.buffer.reserve(additional);
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sha256:")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The text was not `sha256:` followed by 64 lowercase hex digits.
#[derive(Clone, Debug, Eq, PartialEq, thiserror::Error)]
#[error("not a digest: expected \"sha256:\" and 64 lowercase hex digits")]
pub struct DigestSyntaxError;

impl FromStr for Digest {
    type Err = DigestSyntaxError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let hex = s.strip_prefix("sha256:").ok_or(DigestSyntaxError)?;
        if hex.len() != 64 {
            return Err(DigestSyntaxError);
        }
        let mut out = [0u8; 32];
        for (i, pair) in hex.as_bytes().chunks_exact(2).enumerate() {
            let nibble = |c: u8| match c {
                b'0'..=b'9' => Ok(c - b'0'),
                b'a'..=b'f' => Ok(c - b'a' + 10),
                _ => Err(DigestSyntaxError),
            };
            out[i] = nibble(pair[0])? << 4 | nibble(pair[1])?;
        }
        Ok(Self(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_text_round_trips() {
        let d = Digest::of_bytes(b"abc");
        assert_eq!(
            d.to_string(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(d.to_string().parse::<Digest>(), Ok(d));
    }

    #[test]
    fn rejects_malformed_digest_text() {
        let good = Digest::of_bytes(b"abc").to_string();
        for bad in [
            good.to_uppercase(),
            good.replace("sha256:", "sha512:"),
            good[..70].to_owned(),
            format!("{good}0"),
            good.replace('b', "g"),
        ] {
            assert_eq!(bad.parse::<Digest>(), Err(DigestSyntaxError), "{bad}");
        }
    }

    #[test]
    fn digest_is_sha256_of_the_canonical_bytes_across_chunks() {
        // Strings of many lengths around the chunk size, so writes straddle chunk boundaries.
        let mut doc = String::from("[");
        for i in 0..40 {
            doc.push_str(&format!("\"{}\\n\",{i}.50,", "x\u{e9}".repeat(i * 997)));
        }
        doc.push_str(&format!("\"{}\"]", "y".repeat(CHUNK * 3 + 1)));
        let value = crate::parse(doc.as_bytes()).unwrap();
        let canonical = crate::canonicalize(&value).unwrap();
        assert!(canonical.len() > CHUNK * 4);
        assert_eq!(digest(&value), Ok(Digest::of_bytes(&canonical)));
    }

    #[test]
    fn undecidable_value_has_no_digest_and_lists_literals() {
        let v = crate::parse(br#"{"a":[1e400, 2], "b": 9007199254740993, "c": 1e-400}"#).unwrap();
        assert_eq!(
            digest(&v),
            Err(Error::Undecidable {
                literals: vec!["1e400".into(), "9007199254740993".into(), "1e-400".into()]
            })
        );
    }
}

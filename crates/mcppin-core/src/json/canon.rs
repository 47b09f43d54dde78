//! The RFC 8785 (JCS) canonical writer, and the one pretty byte form of our own files. It
//! also gives [`Value`] its `Display`: the value reads, the writer writes.

use std::fmt;

use crate::error::JsonError as Error;
use crate::number::Number;
use crate::value::{Kind, Value};

/// Writes the RFC 8785 canonical form of `value`.
///
/// Members are already in UTF-16 order (the reader and [`crate::Object`] keep them so);
/// strings get the minimal JCS escaping; numbers the ECMAScript `Number.prototype.toString`
/// form.
///
/// # Errors
///
/// [`Error::NonFiniteNumber`] for a literal that overflows float64: RFC 8785 section 3.2.2.3
/// gives it no form. Other undecidable literals canonicalise (`1E30` is `1e+30`); refusing
/// them is the job of [`crate::digest`].
///
/// # Examples
///
/// ```
/// let v = mcppin_core::parse(br#"{"b": 1E30, "a": "\u00e9\n", "c": [-0, 0.50]}"#)?;
/// let bytes = mcppin_core::canonicalize(&v)?;
/// assert_eq!(bytes, "{\"a\":\"é\\n\",\"b\":1e+30,\"c\":[0,0.5]}".as_bytes());
/// # Ok::<(), mcppin_core::Error>(())
/// ```
pub fn canonicalize(value: &Value) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(value.span().end - value.span().start + 64);
    write_canonical(value, &mut out)?;
    Ok(out)
}

/// Appends the RFC 8785 canonical form of `value` to `out`.
///
/// # Errors
///
/// As [`canonicalize`]; on error `out` holds a partial form and must be discarded.
pub fn write_canonical(value: &Value, out: &mut Vec<u8>) -> Result<(), Error> {
    emit(value, out)
}

/// Where canonical bytes go: a buffer, or (for a digest) a hash fed in chunks, so that a large
/// document is never held twice in memory.
pub(crate) trait Sink {
    /// Whether writing stops with [`Error::Undecidable`] (its list left empty) at the first
    /// undecidable literal: a digest must not exist for such a value, and checking while
    /// writing saves a second walk over the value.
    const REFUSES_UNDECIDABLE: bool = false;
    /// Whether an undecidable or non-finite number literal is written as it was read (the
    /// form of [`canonicalize_exact`]) rather than canonicalised or refused.
    const KEEPS_LITERALS: bool = false;

    /// Appends one byte.
    fn push(&mut self, byte: u8);
    /// Appends bytes.
    fn extend_from_slice(&mut self, bytes: &[u8]);
    /// Announces that about `additional` bytes follow.
    fn reserve(&mut self, additional: usize);
}

impl Sink for Vec<u8> {
    fn push(&mut self, byte: u8) {
        Vec::push(self, byte);
    }

    fn extend_from_slice(&mut self, bytes: &[u8]) {
        Vec::extend_from_slice(self, bytes);
    }

    fn reserve(&mut self, additional: usize) {
        Vec::reserve(self, additional);
    }
}

/// Writes the canonical form of `value` to any sink (see [`write_canonical`]).
pub(crate) fn emit<S: Sink>(value: &Value, out: &mut S) -> Result<(), Error> {
    match value.kind() {
        Kind::Null => out.extend_from_slice(b"null"),
        Kind::Bool(true) => out.extend_from_slice(b"true"),
        Kind::Bool(false) => out.extend_from_slice(b"false"),
        Kind::Number(n) if S::KEEPS_LITERALS => {
            if n.is_undecidable() || write_number(n, out).is_err() {
                out.extend_from_slice(n.literal().as_bytes());
            }
        }
        Kind::Number(n) => {
            if S::REFUSES_UNDECIDABLE && n.is_undecidable() {
                return Err(Error::Undecidable {
                    literals: Vec::new(),
                });
            }
            write_number(n, out)?;
        }
        Kind::String(s) => write_string(s.as_bytes(), out),
        Kind::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                emit(item, out)?;
            }
            out.push(b']');
        }
        Kind::Object(object) => {
            out.push(b'{');
            for (i, member) in object.members().iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(member.name.as_bytes(), out);
                out.push(b':');
                emit(&member.value, out)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// The RFC 8785 canonical form, except that a number literal that is undecidable (or
/// overflows float64) keeps the text it was written with: the form a lockfile's signature
/// covers (docs/formats.md). Canonicalising such literals would merge distinct ones
/// (`9007199254740993` and `9007199254740992` both become `9007199254740992`), so two lockfiles
/// that differ in where such a literal stands would share a digest. For values without such
/// literals it is exactly [`canonicalize`]'s output; it cannot fail.
///
/// # Examples
///
/// ```
/// use mcppin_core::{canonicalize, canonicalize_exact, parse};
///
/// let plain = parse(br#"{"b": 1.50, "a": "x"}"#)?;
/// assert_eq!(canonicalize_exact(&plain), canonicalize(&plain)?);
/// let big = parse(br#"{"min": 9007199254740992, "max": 9007199254740993}"#)?;
/// let swapped = parse(br#"{"min": 9007199254740993, "max": 9007199254740992}"#)?;
/// assert_eq!(canonicalize(&big)?, canonicalize(&swapped)?);
/// assert_ne!(canonicalize_exact(&big), canonicalize_exact(&swapped));
/// assert_eq!(canonicalize_exact(&parse(b"[1e400]")?), b"[1e400]");
/// # Ok::<(), mcppin_core::Error>(())
/// ```
#[must_use]
pub fn canonicalize_exact(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.span().end - value.span().start + 64);
    write_lossy(value, &mut out);
    out
}

/// The canonical form with an undecidable or non-finite number written as its literal.
pub(crate) fn write_lossy(value: &Value, out: &mut Vec<u8>) {
    let mut pretty = Pretty {
        out,
        indent: None,
        depth: 0,
    };
    pretty.value(value);
}

impl fmt::Display for Value {
    /// Writes the canonical form, a number without one as its literal ([`canonicalize_exact`]);
    /// use [`canonicalize`] where such a number must be an error.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = Vec::new();
        write_lossy(self, &mut out);
        f.write_str(&String::from_utf8_lossy(&out))
    }
}

/// Writes the one byte form of this project's own files: members in RFC 8785 order, two-space
/// indent, a newline at the end. Decidable numbers are written in their canonical form;
/// undecidable literals keep the text they were written with, so nothing is lost.
///
/// Two values that canonicalise alike produce the same bytes.
///
/// # Examples
///
/// ```
/// let v = mcppin_core::parse(br#"{"b":[],"a":{"x":1.50}}"#)?;
/// assert_eq!(
///     String::from_utf8(mcppin_core::to_pretty(&v)).unwrap(),
///     "{\n  \"a\": {\n    \"x\": 1.5\n  },\n  \"b\": []\n}\n"
/// );
/// # Ok::<(), mcppin_core::Error>(())
/// ```
#[must_use]
pub fn to_pretty(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let mut pretty = Pretty {
        out: &mut out,
        indent: Some(2),
        depth: 0,
    };
    pretty.value(value);
    out.push(b'\n');
    out
}

struct Pretty<'o> {
    out: &'o mut Vec<u8>,
    indent: Option<usize>,
    depth: usize,
}

impl Pretty<'_> {
    fn newline(&mut self) {
        if let Some(width) = self.indent {
            self.out.push(b'\n');
            self.out
                .extend(std::iter::repeat_n(b' ', width * self.depth));
        }
    }

    fn value(&mut self, value: &Value) {
        match value.kind() {
            Kind::Number(n) => {
                if n.is_undecidable() || write_number(n, self.out).is_err() {
                    self.out.extend_from_slice(n.literal().as_bytes());
                }
            }
            Kind::Array(items) if !items.is_empty() => {
                self.out.push(b'[');
                self.depth += 1;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.newline();
                    self.value(item);
                }
                self.depth -= 1;
                self.newline();
                self.out.push(b']');
            }
            Kind::Object(object) if !object.is_empty() => {
                self.out.push(b'{');
                self.depth += 1;
                for (i, member) in object.members().iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.newline();
                    write_string(member.name.as_bytes(), self.out);
                    self.out.push(b':');
                    if self.indent.is_some() {
                        self.out.push(b' ');
                    }
                    self.value(&member.value);
                }
                self.depth -= 1;
                self.newline();
                self.out.push(b'}');
            }
            Kind::Array(_) => self.out.extend_from_slice(b"[]"),
            Kind::Object(_) => self.out.extend_from_slice(b"{}"),
            _ => {
                // Scalars cannot fail except overflowing numbers, handled above.
                let _ = write_canonical(value, self.out);
            }
        }
    }
}

/// Writes a number in the ECMAScript `Number.prototype.toString` form (RFC 8785 section
/// 3.2.2.3).
fn write_number<S: Sink>(n: &Number, out: &mut S) -> Result<(), Error> {
    if n.is_canonical() {
        out.extend_from_slice(n.literal().as_bytes());
        return Ok(());
    }
    let v = n.as_f64();
    if !v.is_finite() {
        return Err(Error::NonFiniteNumber {
            literal: n.literal().to_owned(),
        });
    }
    if v == 0.0 {
        out.push(b'0');
        return Ok(());
    }
    let mut buffer = ryu_js::Buffer::new();
    out.extend_from_slice(buffer.format_finite(v).as_bytes());
    Ok(())
}

/// Bytes a JCS string must escape: controls, quote and backslash.
static ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// Writes a string with the minimal JCS escaping (RFC 8785 section 3.2.2.2).
fn write_string<S: Sink>(bytes: &[u8], out: &mut S) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if !ESCAPE[usize::from(b)] {
            continue;
        }
        out.extend_from_slice(&bytes[run..i]);
        run = i + 1;
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x09 => out.extend_from_slice(b"\\t"),
            0x0A => out.extend_from_slice(b"\\n"),
            0x0C => out.extend_from_slice(b"\\f"),
            0x0D => out.extend_from_slice(b"\\r"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xF)],
            ]),
        }
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

//! Request ids: the key an answer is matched by, and the number a JavaScript client reads.

use crate::outline::{Node, Shape};
use crate::parse;

/// The bytes of a request id (as written, or its canonical form as the key it is matched by),
/// inline when short, so that tracking an ordinary request allocates nothing.
#[derive(Clone, Debug, Eq, Hash, PartialEq)]
pub(crate) enum IdBytes {
    /// Up to [`INLINE_ID`] bytes; the rest of the array is zero.
    Inline(u8, [u8; INLINE_ID]),
    /// A longer id.
    Heap(Box<[u8]>),
}

/// The longest id kept inline.
pub(super) const INLINE_ID: usize = 30;

impl IdBytes {
    pub(crate) fn new(bytes: &[u8]) -> Self {
        match u8::try_from(bytes.len()) {
            Ok(len) if bytes.len() <= INLINE_ID => {
                let mut inline = [0; INLINE_ID];
                inline[..bytes.len()].copy_from_slice(bytes);
                Self::Inline(len, inline)
            }
            _ => Self::Heap(bytes.into()),
        }
    }
}

impl IdBytes {
    /// The bytes kept outside the value itself (none for a short id).
    pub(crate) fn heap_len(&self) -> usize {
        match self {
            Self::Inline(..) => 0,
            Self::Heap(bytes) => bytes.len(),
        }
    }
}

impl std::ops::Deref for IdBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Self::Inline(len, bytes) => &bytes[..usize::from(*len)],
            Self::Heap(bytes) => bytes,
        }
    }
}

/// The key an id is matched by: its canonical form (so `1` and `1.0` are one id), or its
/// bytes when it has none. A string without escapes and a short integer literal are already in
/// canonical form; anything else is read and canonicalised.
pub(crate) fn id_key(id: Node<'_, '_>) -> IdBytes {
    let raw = id.bytes();
    let canonical = match id.shape() {
        Shape::String => !raw.contains(&b'\\'),
        Shape::Number => is_canonical_integer(raw),
        _ => false,
    };
    if canonical {
        return IdBytes::new(raw);
    }
    // Read strictly: an id holding a lone surrogate or an integer above 2^53 has no canonical
    // form two readers agree on (`"\ud800"` and `"\udc00"` would both become U+FFFD, two
    // nanosecond timestamps one double), so it is matched by its bytes.
    let key = parse(raw)
        .ok()
        .filter(|value| value.undecidable_literals().is_empty())
        .and_then(|value| crate::canonicalize(&value).ok());
    IdBytes::new(key.as_deref().unwrap_or(raw))
}

/// What JavaScript's `Number(id)` makes of an id, as the bits of the double (`-0` as `0`):
/// `None` for `NaN` and for ids that are neither numbers nor strings. The TypeScript SDK finds
/// the request an answer belongs to by this number, so two outstanding ids with one alias
/// could not be told apart by such a client.
pub(super) fn number_alias(id: Node<'_, '_>) -> Option<u64> {
    let number = match id.shape() {
        Shape::Number => std::str::from_utf8(id.bytes()).ok()?.parse::<f64>().ok()?,
        Shape::String => js_number(&id.as_str()?)?,
        _ => return None,
    };
    if number.is_nan() {
        return None;
    }
    Some(if number == 0.0 { 0 } else { number.to_bits() })
}

/// ECMAScript StringToNumber (ECMA-262 section 7.1.4.1.1): surrounding white space ignored,
/// the empty string is 0, `Infinity`, decimal literals with an optional sign, `0x`, `0o`,
/// `0b` integers; `None` where it gives `NaN`.
fn js_number(text: &str) -> Option<f64> {
    let text = text.trim_matches(|c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{FEFF}');
    if text.is_empty() {
        return Some(0.0);
    }
    let radix = match text.get(..2) {
        Some("0x" | "0X") => 16,
        Some("0o" | "0O") => 8,
        Some("0b" | "0B") => 2,
        _ => 10,
    };
    if radix != 10 {
        let digits = &text[2..];
        if digits.is_empty() {
            return None;
        }
        let mut value = 0.0_f64;
        for c in digits.chars() {
            value = value * f64::from(radix) + f64::from(c.to_digit(radix)?);
        }
        return Some(value);
    }
    let (negative, unsigned) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if unsigned == "Infinity" {
        return Some(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    // Digits, one optional point, an optional exponent: Rust's reader accepts this grammar
    // (and more, such as `inf` and `nan`, which the check keeps out).
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let mut parts = mantissa.splitn(2, '.');
    let whole = parts.next().unwrap_or_default();
    let fraction = parts.next().unwrap_or_default();
    let plain = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = plain(whole) && plain(fraction) && !(whole.is_empty() && fraction.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
        !digits.is_empty() && plain(digits)
    });
    if !(mantissa_ok && exponent_ok) {
        return None;
    }
    let value = unsigned.parse::<f64>().ok()?;
    Some(if negative { -value } else { value })
}

/// Whether a number literal is an integer written as its canonical form: an optional minus
/// (not before a lone zero), no leading zero, at most 15 digits (so exact in float64).
pub(super) fn is_canonical_integer(literal: &[u8]) -> bool {
    let digits = literal.strip_prefix(b"-").unwrap_or(literal);
    let plain = !digits.is_empty()
        && digits.len() <= 15
        && digits.iter().all(u8::is_ascii_digit)
        && (digits[0] != b'0' || digits.len() == 1);
    plain && literal != b"-0"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outline::Outline;

    fn key(id: &str) -> IdBytes {
        let outline = Outline::parse(id.as_bytes(), 0).unwrap();
        id_key(outline.root())
    }

    #[test]
    fn ids_equal_as_json_values_share_a_key() {
        assert_eq!(&*key("1"), b"1");
        assert_eq!(key("1"), key("1.0"));
        assert_eq!(key("1"), key("1e0"));
        assert_eq!(key("0"), key("-0"));
        assert_eq!(key("-7"), key("-7.00"));
        assert_eq!(key(r#""a""#), key(r#""\u0061""#));
        assert_eq!(key("123456789012345"), key("1.23456789012345e14"));
        assert_eq!(key("1234567890123456"), key("1234567890123456.0"));
    }

    #[test]
    fn ids_of_different_values_or_types_keep_apart() {
        // Integers above 2^53 and lone surrogates have no canonical form two readers agree
        // on: matched by their bytes, so two of them never share a key.
        assert_ne!(key("12345678901234567"), key("12345678901234568"));
        assert_eq!(&*key("12345678901234567"), b"12345678901234567");
        assert_ne!(key(r#""\ud800""#), key(r#""\udc00""#));
        assert_ne!(key("1"), key(r#""1""#));
        assert_ne!(key("1"), key("2"));
        assert_ne!(key(r#""a""#), key(r#""A""#));
        assert_ne!(key("null"), key(r#""null""#));
    }

    fn alias(id: &str) -> Option<u64> {
        let outline = Outline::parse(id.as_bytes(), 0).unwrap();
        number_alias(outline.root())
    }

    #[test]
    fn ids_a_javascript_client_reads_as_one_number_share_an_alias() {
        let one = alias("1");
        assert!(one.is_some());
        for same in [
            r#""1""#,
            r#"" 1 ""#,
            r#""1.0""#,
            r#""+1""#,
            r#""1e0""#,
            r#""0x1""#,
            r#""0b1""#,
            r#""0o1""#,
            r#"".1e1""#,
            r#""1.""#,
            r#""\u0031""#,
            "1.0",
            "1e0",
        ] {
            assert_eq!(alias(same), one, "{same}");
        }
        assert_eq!(alias(r#""""#), alias("0"), "the empty string is 0");
        assert_eq!(alias("-0"), alias("0"));
        assert_eq!(alias(r#""-Infinity""#), Some(f64::NEG_INFINITY.to_bits()));
        // 2^53 + 1 rounds to 2^53.
        assert_eq!(alias("9007199254740993"), alias("9007199254740992"));
    }

    #[test]
    fn ids_a_javascript_client_tells_apart_keep_apart() {
        for (a, b) in [("1", "2"), ("1", r#""2""#), ("10", r#""0x11""#)] {
            assert_ne!(alias(a), alias(b), "{a} {b}");
        }
        for nan in [
            r#""abc""#,
            r#""1a""#,
            r#""0x""#,
            r#""0xg""#,
            r#""inf""#,
            r#""nan""#,
            r#"".""#,
            r#""1e""#,
            r#""- 1""#,
            r#""--1""#,
            r#""-0x1""#,
            "null",
            "true",
            "[1]",
        ] {
            assert_eq!(alias(nan), None, "{nan}");
        }
    }

    #[test]
    fn only_plain_short_integers_skip_canonicalisation() {
        for plain in ["0", "7", "-7", "123456789012345"] {
            assert!(is_canonical_integer(plain.as_bytes()), "{plain}");
        }
        for other in ["-0", "01", "1.0", "1e3", "1234567890123456", "-", ""] {
            assert!(!is_canonical_integer(other.as_bytes()), "{other}");
        }
    }

    #[test]
    fn long_ids_are_kept_whole() {
        let long = format!(r#""{}""#, "x".repeat(100));
        assert!(matches!(key(&long), IdBytes::Heap(_)));
        assert_eq!(&*key(&long), long.as_bytes());
        assert!(matches!(key("12"), IdBytes::Inline(..)));
        assert_eq!(IdBytes::new(&[b'y'; INLINE_ID]).len(), INLINE_ID);
    }
}

//! JSON numbers kept as their literal text, with correct rounding and undecidability.

use std::fmt;

/// 2^53, the largest magnitude below which every integer has its own float64.
const SAFE_LIMIT: f64 = 9_007_199_254_740_992.0;

/// A JSON number: the literal text as it was written, its float64 value (correctly rounded,
/// ties to even) and whether that value pins the literal down.
///
/// Sixteen bytes: a literal of up to 13 bytes (almost every literal) is kept inline and its
/// value computed when asked for, so reading a number allocates nothing; a longer literal is
/// kept on the heap with its value. Whether the literal is already in its canonical form is
/// decided once, when it is read, so writing it canonically is a copy.
#[derive(Clone, Debug)]
pub struct Number {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    Inline {
        len: u8,
        undecidable: Option<Undecidable>,
        canonical: bool,
        bytes: [u8; INLINE],
    },
    Heap(Box<Long>),
}

/// A literal too long to keep inline.
#[derive(Clone, Debug)]
struct Long {
    literal: Box<str>,
    value: f64,
    undecidable: Option<Undecidable>,
    canonical: bool,
}

/// The longest literal kept inline.
const INLINE: usize = 13;

/// Why a number literal is undecidable: float64 readers cannot tell it from its neighbours,
/// so two different served values could share one digest (docs/json.md).
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
#[non_exhaustive]
pub enum Undecidable {
    /// A value of magnitude above 2^53, in any notation: some clients read an integer there
    /// exactly (as a big integer), others round it, and every float64 there is an integer, so
    /// the canonical form of a fraction there is such an integer too.
    BeyondSafeInteger,
    /// The magnitude overflows float64 (it would be read as infinity).
    Overflow,
    /// A value that is not zero rounds to zero.
    Underflow,
}

impl fmt::Display for Undecidable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::BeyondSafeInteger => "integer above 2^53",
            Self::Overflow => "overflows float64",
            Self::Underflow => "non-zero value rounds to zero",
        })
    }
}

impl Number {
    /// Builds a number from a literal the reader has already checked against the RFC 8259
    /// grammar.
    pub(crate) fn from_valid_literal(literal: &str) -> Self {
        let short = literal.len() <= INLINE;
        let small = small_integer(literal);
        // Rust's float parsing is correctly rounded (round half to even) for every input.
        let value = small.unwrap_or_else(|| parse_f64(literal));
        // A plain integer of at most 15 digits is exact and decidable.
        let undecidable = match small {
            Some(_) => None,
            None => classify(literal, value),
        };
        let canonical = match small {
            // A plain integer below 10^15 is its own ECMAScript form, except -0.
            Some(_) => literal != "-0",
            None => {
                undecidable.is_none()
                    && value.is_finite()
                    && value != 0.0
                    && ryu_js::Buffer::new().format_finite(value) == literal
            }
        };
        match u8::try_from(literal.len()) {
            Ok(len) if short => {
                let mut bytes = [0; INLINE];
                bytes[..literal.len()].copy_from_slice(literal.as_bytes());
                Self {
                    repr: Repr::Inline {
                        len,
                        undecidable,
                        canonical,
                        bytes,
                    },
                }
            }
            _ => Self {
                repr: Repr::Heap(Box::new(Long {
                    literal: literal.into(),
                    value,
                    undecidable,
                    canonical,
                })),
            },
        }
    }

    /// The literal text exactly as written in the input.
    #[must_use]
    pub fn literal(&self) -> &str {
        match &self.repr {
            // Copied from a `&str` whole: always UTF-8; the fallback is unreachable.
            Repr::Inline { len, bytes, .. } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            Repr::Heap(long) => &long.literal,
        }
    }

    /// The correctly rounded float64 value (infinite when the literal overflows).
    #[must_use]
    pub fn as_f64(&self) -> f64 {
        match &self.repr {
            Repr::Inline { .. } => {
                let literal = self.literal();
                small_integer(literal).unwrap_or_else(|| parse_f64(literal))
            }
            Repr::Heap(long) => long.value,
        }
    }

    /// Whether the literal is written exactly as RFC 8785 writes its value (section 3.2.2.3).
    pub(crate) fn is_canonical(&self) -> bool {
        match &self.repr {
            Repr::Inline { canonical, .. } => *canonical,
            Repr::Heap(long) => long.canonical,
        }
    }

    /// Whether float64 cannot pin this literal down (see [`Undecidable`]).
    #[must_use]
    pub fn is_undecidable(&self) -> bool {
        self.undecidable().is_some()
    }

    /// Why the literal is undecidable, if it is.
    #[must_use]
    pub fn undecidable(&self) -> Option<Undecidable> {
        match &self.repr {
            Repr::Inline { undecidable, .. } => *undecidable,
            Repr::Heap(long) => long.undecidable,
        }
    }
}

impl PartialEq for Number {
    /// Numbers are equal when they canonicalise alike: equal float64 values (`-0` equals `0`),
    /// or, when either is undecidable, the same literal text.
    fn eq(&self, other: &Self) -> bool {
        // The same literal is the same number either way, and the common case. Inline
        // literals are copied into zeroed arrays, so whole arrays compare as the literals do.
        let same = match (&self.repr, &other.repr) {
            (
                Repr::Inline {
                    len: a, bytes: x, ..
                },
                Repr::Inline {
                    len: b, bytes: y, ..
                },
            ) => a == b && x == y,
            _ => self.literal() == other.literal(),
        };
        if same {
            return true;
        }
        if self.is_undecidable() || other.is_undecidable() {
            self.literal() == other.literal()
        } else {
            self.as_f64() == other.as_f64()
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.literal())
    }
}

impl From<u64> for Number {
    fn from(n: u64) -> Self {
        Self::from_valid_literal(&n.to_string())
    }
}

impl From<i64> for Number {
    fn from(n: i64) -> Self {
        Self::from_valid_literal(&n.to_string())
    }
}

/// The value of a plain integer literal of at most 15 digits (exact in a float64), or `None`
/// for any other literal.
fn small_integer(literal: &str) -> Option<f64> {
    let bytes = literal.as_bytes();
    let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
    if digits.is_empty() || digits.len() > 15 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut n: u64 = 0;
    for &d in digits {
        n = n * 10 + u64::from(d - b'0');
    }
    #[expect(clippy::cast_precision_loss, reason = "n < 10^15 < 2^53 is exact")]
    let value = n as f64;
    Some(if bytes.len() > digits.len() {
        -value
    } else {
        value
    })
}

fn parse_f64(literal: &str) -> f64 {
    literal.parse::<f64>().unwrap_or(f64::NAN)
}

/// Decides undecidability of a grammatical literal whose correctly rounded value is `value`.
///
/// Every float64 of magnitude above 2^53 is an integer, and the canonical form writes it as
/// one: so a literal that reads above 2^53 is undecidable whatever its notation, a fraction
/// such as `9007199254740993.5` included (its canonical form `9007199254740994` is an integer
/// above 2^53; found by fuzzing). At exactly 2^53 only an integral literal above
/// 2^53 that rounded down (`9007199254740993`) is undecidable. Only the rare cases (zero, or a
/// magnitude of exactly 2^53) look at the digits again.
fn classify(literal: &str, value: f64) -> Option<Undecidable> {
    if value.is_infinite() {
        return Some(Undecidable::Overflow);
    }
    if value == 0.0 {
        return (!Decimal::parse(literal).is_zero()).then_some(Undecidable::Underflow);
    }
    let magnitude = value.abs();
    if magnitude < SAFE_LIMIT {
        return None;
    }
    if magnitude > SAFE_LIMIT {
        return Some(Undecidable::BeyondSafeInteger);
    }
    let decimal = Decimal::parse(literal);
    (decimal.is_integral() && decimal.exceeds_safe_limit())
        .then_some(Undecidable::BeyondSafeInteger)
}

/// The exact value of a literal: the significant digits `int` followed by `frac` (no leading
/// or trailing zeros overall), times ten to the power `exponent`. Borrowed, so a huge literal
/// costs no allocation.
struct Decimal<'a> {
    int: &'a [u8],
    frac: &'a [u8],
    exponent: i64,
}

impl<'a> Decimal<'a> {
    fn parse(literal: &'a str) -> Self {
        let body = literal.strip_prefix('-').unwrap_or(literal).as_bytes();
        let (mantissa, exp) = match body.iter().position(|&b| b == b'e' || b == b'E') {
            Some(i) => (&body[..i], &body[i + 1..]),
            None => (body, &b""[..]),
        };
        let (mut int, mut frac) = match mantissa.iter().position(|&b| b == b'.') {
            Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
            None => (mantissa, &b""[..]),
        };
        // Saturate absurd exponents: the float64 value has already said overflow or zero.
        let exp_digits = exp.strip_prefix(b"-").or_else(|| exp.strip_prefix(b"+"));
        let magnitude = exp_digits.unwrap_or(exp).iter().fold(0i64, |acc, d| {
            acc.saturating_mul(10).saturating_add(i64::from(d - b'0'))
        });
        let mut exponent = if exp.starts_with(b"-") {
            -magnitude
        } else {
            magnitude
        };
        exponent = exponent.saturating_sub(i64::try_from(frac.len()).unwrap_or(i64::MAX));
        int = &int[leading_zeros(int)..];
        if int.is_empty() {
            frac = &frac[leading_zeros(frac)..];
        }
        let trailing = trailing_zeros(frac);
        frac = &frac[..frac.len() - trailing];
        exponent = exponent.saturating_add(i64::try_from(trailing).unwrap_or(i64::MAX));
        if frac.is_empty() {
            let trailing = trailing_zeros(int);
            int = &int[..int.len() - trailing];
            exponent = exponent.saturating_add(i64::try_from(trailing).unwrap_or(i64::MAX));
        }
        Self {
            int,
            frac,
            exponent,
        }
    }

    fn is_zero(&self) -> bool {
        self.int.is_empty() && self.frac.is_empty()
    }

    fn is_integral(&self) -> bool {
        self.exponent >= 0
    }

    /// Whether an integral value exceeds 2^53 exactly (called when it rounded to 2^53).
    fn exceeds_safe_limit(&self) -> bool {
        let len = i64::try_from(self.int.len() + self.frac.len()).unwrap_or(i64::MAX);
        let total = len.saturating_add(self.exponent);
        if total != 16 {
            return total > 16;
        }
        let digits = self
            .int
            .iter()
            .chain(self.frac)
            .chain(std::iter::repeat(&b'0'));
        digits
            .zip(b"9007199254740992")
            .map(|(d, limit)| d.cmp(limit))
            .find(|o| o.is_ne())
            == Some(std::cmp::Ordering::Greater)
    }
}

fn leading_zeros(digits: &[u8]) -> usize {
    digits.iter().take_while(|&&d| d == b'0').count()
}

fn trailing_zeros(digits: &[u8]) -> usize {
    digits.iter().rev().take_while(|&&d| d == b'0').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(s: &str) -> Number {
        Number::from_valid_literal(s)
    }

    #[test]
    fn integers_above_two_to_the_53_are_undecidable_in_every_notation() {
        for lit in [
            "9007199254740993",
            "-9007199254740993",
            "9007199254740993.0",
            "9.007199254740993e15",
            "90071992547409930e-1",
            "1e30",
            "1E30",
            "18446744073709551616",
            "9007199254740994",
            "1.5e300",
            // Fractions above 2^53: their canonical form is an integer above 2^53. Found by
            // fuzzing the canonical round trip.
            "9007199254740993.5",
            "123456789012345678.25",
            "44444444444444445444444.4400",
        ] {
            assert_eq!(
                num(lit).undecidable(),
                Some(Undecidable::BeyondSafeInteger),
                "{lit}"
            );
        }
    }

    #[test]
    fn safe_integers_and_fractions_are_decidable() {
        for lit in [
            "9007199254740992",
            "-9007199254740992",
            "9007199254740992.0",
            "9.007199254740992e15",
            "9007199254740991",
            "0.1",
            "1e-300",
            "9007199254740992.4",
            "-9007199254740991.5",
            "0",
            "-0",
            "0e400",
            "0.000e-999",
            "4.9e-324",
        ] {
            assert_eq!(num(lit).undecidable(), None, "{lit}");
        }
    }

    #[test]
    fn overflow_and_underflow_are_undecidable() {
        assert_eq!(num("1e400").undecidable(), Some(Undecidable::Overflow));
        assert_eq!(num("-1e400").undecidable(), Some(Undecidable::Overflow));
        assert_eq!(num("1e-400").undecidable(), Some(Undecidable::Underflow));
        assert_eq!(
            num("-2.5e-999999999999999999999").undecidable(),
            Some(Undecidable::Underflow)
        );
        assert_eq!(
            num("1e99999999999999999999").undecidable(),
            Some(Undecidable::Overflow)
        );
    }

    #[test]
    fn value_is_correctly_rounded() {
        // A 17-digit decimal that naive parsing mis-rounds.
        assert_eq!(num("0.30000000000000004").as_f64(), 0.1 + 0.2);
        assert_eq!(num("-0").as_f64().to_bits(), (-0.0f64).to_bits());
        assert_eq!(num("123456789012345").as_f64(), 123_456_789_012_345.0);
        assert_eq!(num("-12").as_f64(), -12.0);
    }

    #[test]
    fn knows_which_literals_are_already_canonical() {
        for lit in ["0", "1", "-12", "0.5", "1e-7", "1.5e-7", "123456789012345"] {
            assert!(num(lit).is_canonical(), "{lit}");
        }
        for lit in [
            "-0",
            "1.0",
            "1E1",
            "0.50",
            "1e21",
            "1e400",
            "9007199254740993",
            "0e5",
        ] {
            assert!(!num(lit).is_canonical(), "{lit}");
        }
    }

    #[test]
    fn equality_follows_the_canonical_value() {
        assert_eq!(num("1.0"), num("1"));
        assert_eq!(num("-0"), num("0"));
        assert_ne!(num("1e400"), num("2e400"));
        assert_ne!(num("9007199254740993"), num("9007199254740992"));
    }
}

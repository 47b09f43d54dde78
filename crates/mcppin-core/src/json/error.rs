//! The errors of the JSON layer (the strict reader, the canonical writer, the digest), the
//! [`Position`] and [`Excerpt`] their messages use, and the [`Category`] every error of this
//! crate has.

use std::fmt;

use crate::escape::{Escaped, escape};

/// What kind of failure an error is, for the exit-code contract of docs/cli.md: a binary picks
/// its code with `err.category()` instead of matching variants.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[non_exhaustive]
pub enum Category {
    /// The request names something that is not there or is not well formed (an approval
    /// selection): the command line is wrong, exit 2.
    Usage,
    /// The input reads, but something in it cannot be compared (an undecidable number
    /// literal, a number with no canonical form): exit 3.
    Incomparable,
    /// The input cannot be read: it breaks a strict-reading rule or a rule of its format,
    /// exit 4.
    Unreadable,
}

impl Category {
    /// The exit code of docs/cli.md for this category: 2, 3 or 4.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcppin_core::{Category, parse};
    /// let err = parse(b"{\"a\": 1, \"a\": 2}").unwrap_err();
    /// assert_eq!(err.category(), Category::Unreadable);
    /// assert_eq!(err.category().exit_code(), 4);
    /// ```
    #[must_use]
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Usage => 2,
            Self::Incomparable => 3,
            Self::Unreadable => 4,
        }
    }
}

/// A position in an input document: byte offset (0-based), line and column (1-based; the
/// column counts characters, so a multi-byte character is one column).
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Position {
    /// Offset of the offending byte from the start of the input.
    pub offset: usize,
    /// Line number, starting at 1; only LF ends a line.
    pub line: usize,
    /// Column on that line, in characters, starting at 1.
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` in `input`.
    #[must_use]
    pub fn locate(input: &[u8], offset: usize) -> Self {
        let offset = offset.min(input.len());
        let before = &input[..offset];
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        // Count characters: every byte that is not a UTF-8 continuation byte starts one.
        let column = before[line_start..]
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count()
            + 1;
        Self {
            offset,
            line,
            column,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {} (byte {})",
            self.line, self.column, self.offset
        )
    }
}
/// What the JSON layer refuses: the strict and relaxed readers (docs/json.md), the canonical
/// writer and the digest.
///
/// Reading errors carry the [`Position`] of the offending byte; each rule of docs/json.md has its
/// own variant, so a caller (and a test) can tell exactly which rule refused the input. Text
/// that came from the input (a member name) is kept raw here: escape it before showing it. The
/// messages show it as a short escaped [`Excerpt`].
#[derive(Clone, Debug, Eq, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum JsonError {
    /// The input is not valid UTF-8 (RFC 8259 section 8.1).
    #[error("invalid UTF-8 at {at}")]
    InvalidUtf8 {
        /// Where the invalid sequence starts.
        at: Position,
    },
    /// The input starts with a byte-order mark (RFC 8259 section 8.1 forbids adding one).
    #[error("byte-order mark at {at}")]
    ByteOrderMark {
        /// The start of the input.
        at: Position,
    },
    /// The input holds no value (empty or only whitespace).
    #[error("no JSON value in the input at {at}")]
    Empty {
        /// The end of the input.
        at: Position,
    },
    /// Something other than whitespace follows the value.
    #[error("content after the JSON value at {at}")]
    TrailingContent {
        /// The first byte after the value and its whitespace.
        at: Position,
    },
    /// The input ends inside a value.
    #[error("unexpected end of input at {at}")]
    UnexpectedEnd {
        /// The end of the input.
        at: Position,
    },
    /// A byte that cannot start or continue anything here.
    #[error("unexpected character '{}' at {at}", Escaped(.found.encode_utf8(&mut [0; 4])))]
    UnexpectedCharacter {
        /// The character found.
        found: char,
        /// Where it stands.
        at: Position,
    },
    /// A word that is not `true`, `false` or `null` (`NaN`, `Infinity`, `True`, `nul`).
    #[error("invalid literal at {at}: only true, false and null are JSON words")]
    InvalidLiteral {
        /// The first character of the word.
        at: Position,
    },
    /// A string delimited by single quotes.
    #[error("single-quoted string at {at}: JSON strings use double quotes")]
    SingleQuote {
        /// The opening quote.
        at: Position,
    },
    /// A `//` or `/*` comment.
    #[error("comment at {at}: JSON has no comments")]
    Comment {
        /// The first slash.
        at: Position,
    },
    /// A comma before `]` or `}`.
    #[error("trailing comma at {at}")]
    TrailingComma {
        /// The comma.
        at: Position,
    },
    /// An object member name that is not a string.
    #[error("object member name is not a string at {at}")]
    ExpectedMemberName {
        /// Where a name was expected.
        at: Position,
    },
    /// A member name not followed by `:`.
    #[error("expected ':' after the member name at {at}")]
    ExpectedColon {
        /// Where the colon was expected.
        at: Position,
    },
    /// Two values without a comma between them, or an unclosed array or object.
    #[error("expected ',' or '{expected}' at {at}")]
    ExpectedCommaOrClose {
        /// The closing bracket that would also fit.
        expected: char,
        /// Where the comma or bracket was expected.
        at: Position,
    },
    /// A number with a superfluous leading zero (`01`, `-00.5`).
    #[error("number with a leading zero at {at}")]
    LeadingZero {
        /// The zero.
        at: Position,
    },
    /// A number with a plus sign (`+1`).
    #[error("number with a plus sign at {at}")]
    PlusSign {
        /// The sign.
        at: Position,
    },
    /// A number without digits before the point (`.5`, `-.5`, `-`).
    #[error("number without integer digits at {at}")]
    MissingIntegerDigits {
        /// Where a digit was expected.
        at: Position,
    },
    /// A point not followed by a digit (`1.`, `1.e5`).
    #[error("number without digits after the decimal point at {at}")]
    MissingFractionDigits {
        /// Where a digit was expected.
        at: Position,
    },
    /// An exponent without digits (`1e`, `1e+`).
    #[error("number without exponent digits at {at}")]
    MissingExponentDigits {
        /// Where a digit was expected.
        at: Position,
    },
    /// A control character (U+0000..U+001F) inside a string, unescaped.
    #[error("unescaped control character U+{code:04X} in a string at {at}")]
    ControlCharacter {
        /// The code point.
        code: u32,
        /// Where it stands.
        at: Position,
    },
    /// A backslash followed by anything but `" \ / b f n r t u`, or a `\u` without four hex
    /// digits.
    #[error("invalid escape sequence at {at}")]
    InvalidEscape {
        /// The backslash.
        at: Position,
    },
    /// A `\u` escape that yields a surrogate without its partner (I-JSON section 2.1).
    #[error("escape yields an unpaired surrogate U+{code:04X} at {at}")]
    LoneSurrogate {
        /// The surrogate code unit.
        code: u32,
        /// The backslash of the escape.
        at: Position,
    },
    /// A noncharacter (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF), escaped or raw (I-JSON section 2.1).
    #[error("noncharacter U+{code:04X} at {at}")]
    Noncharacter {
        /// The code point.
        code: u32,
        /// Where it stands (the backslash, for an escape).
        at: Position,
    },
    /// A member name repeated in one object, compared after escapes are decoded (I-JSON
    /// section 2.3).
    #[error("duplicate member name {} at {at}", Excerpt::quoted(.name))]
    DuplicateMember {
        /// The repeated name.
        name: String,
        /// The second occurrence.
        at: Position,
    },
    /// Two member names of one object that differ but are equal after NFC normalisation.
    #[error(
        "member names {} and {} are equal after NFC normalisation at {at}",
        Excerpt::quoted(.first),
        Excerpt::quoted(.second)
    )]
    NfcDuplicateMember {
        /// The name that came first.
        first: String,
        /// The name that came second.
        second: String,
        /// The second occurrence.
        at: Position,
    },
    /// Arrays and objects nested deeper than the limit.
    #[error("nesting deeper than {limit} arrays and objects at {at}")]
    TooDeep {
        /// The limit (256).
        limit: usize,
        /// The bracket that would exceed it.
        at: Position,
    },
    /// An input of 4 GiB or more: the reader keeps offsets in 32 bits.
    #[error("input of {size} bytes is too large to read (at most {limit} bytes)")]
    TooLarge {
        /// The largest size read (4 GiB less one byte).
        limit: usize,
        /// The size of the input.
        size: usize,
    },
    /// A number whose float64 value is infinite has no canonical form (RFC 8785 section
    /// 3.2.2.3).
    #[error("number {} has no canonical form: it overflows float64", Excerpt::bare(.literal))]
    NonFiniteNumber {
        /// The literal text.
        literal: String,
    },
    /// A value holding undecidable number literals has no digest (docs/json.md).
    #[error(
        "no digest: {} undecidable number literal(s): {}",
        .literals.len(),
        Literals(.literals)
    )]
    Undecidable {
        /// The undecidable literals, as written, in document order.
        literals: Vec<String>,
    },
}

impl JsonError {
    /// Where in the input the error was found, for reading errors.
    #[must_use]
    pub fn position(&self) -> Option<Position> {
        match self {
            Self::InvalidUtf8 { at }
            | Self::ByteOrderMark { at }
            | Self::Empty { at }
            | Self::TrailingContent { at }
            | Self::UnexpectedEnd { at }
            | Self::UnexpectedCharacter { at, .. }
            | Self::InvalidLiteral { at }
            | Self::SingleQuote { at }
            | Self::Comment { at }
            | Self::TrailingComma { at }
            | Self::ExpectedMemberName { at }
            | Self::ExpectedColon { at }
            | Self::ExpectedCommaOrClose { at, .. }
            | Self::LeadingZero { at }
            | Self::PlusSign { at }
            | Self::MissingIntegerDigits { at }
            | Self::MissingFractionDigits { at }
            | Self::MissingExponentDigits { at }
            | Self::ControlCharacter { at, .. }
            | Self::InvalidEscape { at }
            | Self::LoneSurrogate { at, .. }
            | Self::Noncharacter { at, .. }
            | Self::DuplicateMember { at, .. }
            | Self::NfcDuplicateMember { at, .. }
            | Self::TooDeep { at, .. } => Some(*at),
            Self::TooLarge { .. } | Self::NonFiniteNumber { .. } | Self::Undecidable { .. } => None,
        }
    }

    /// A short stable name of the rule that refused the input (`duplicate-member`), for
    /// reports and machine-readable output.
    #[must_use]
    pub fn rule(&self) -> &'static str {
        match self {
            Self::InvalidUtf8 { .. } => "invalid-utf8",
            Self::ByteOrderMark { .. } => "byte-order-mark",
            Self::Empty { .. } => "empty",
            Self::TrailingContent { .. } => "trailing-content",
            Self::UnexpectedEnd { .. } => "unexpected-end",
            Self::UnexpectedCharacter { .. } => "unexpected-character",
            Self::InvalidLiteral { .. } => "invalid-literal",
            Self::SingleQuote { .. } => "single-quote",
            Self::Comment { .. } => "comment",
            Self::TrailingComma { .. } => "trailing-comma",
            Self::ExpectedMemberName { .. } => "expected-member-name",
            Self::ExpectedColon { .. } => "expected-colon",
            Self::ExpectedCommaOrClose { .. } => "expected-comma-or-close",
            Self::LeadingZero { .. } => "leading-zero",
            Self::PlusSign { .. } => "plus-sign",
            Self::MissingIntegerDigits { .. } => "missing-integer-digits",
            Self::MissingFractionDigits { .. } => "missing-fraction-digits",
            Self::MissingExponentDigits { .. } => "missing-exponent-digits",
            Self::ControlCharacter { .. } => "control-character",
            Self::InvalidEscape { .. } => "invalid-escape",
            Self::LoneSurrogate { .. } => "lone-surrogate",
            Self::Noncharacter { .. } => "noncharacter",
            Self::DuplicateMember { .. } => "duplicate-member",
            Self::NfcDuplicateMember { .. } => "nfc-duplicate-member",
            Self::TooDeep { .. } => "too-deep",
            Self::TooLarge { .. } => "too-large",
            Self::NonFiniteNumber { .. } => "non-finite-number",
            Self::Undecidable { .. } => "undecidable",
        }
    }

    /// Which kind of failure this is: [`Category::Incomparable`] for a number with no
    /// canonical form and for undecidable literals, [`Category::Unreadable`] for every reading
    /// error.
    #[must_use]
    pub fn category(&self) -> Category {
        match self {
            Self::NonFiniteNumber { .. } | Self::Undecidable { .. } => Category::Incomparable,
            _ => Category::Unreadable,
        }
    }
}

/// How many characters of a text from the input a message quotes; the rest is only counted.
pub const EXCERPT_CHARS: usize = 64;

/// How many undecidable literals a message lists; the rest are only counted.
const LISTED_LITERALS: usize = 8;

/// A text from the input as a message shows it: escaped with [`escape`] and, when longer than
/// [`EXCERPT_CHARS`] characters, cut there and followed by `...` and its whole length in
/// bytes. A hostile 10 MB number literal or member name then costs a terminal a line, and the
/// message keeps the position that finds it in the input.
///
/// # Examples
///
/// ```
/// use mcppin_core::Excerpt;
/// assert_eq!(Excerpt::quoted("read\u{1b}").to_string(), "\"read<U+001B>\"");
/// let long = "9".repeat(100);
/// assert_eq!(
///     Excerpt::bare(&long).to_string(),
///     format!("{}... (100 bytes)", "9".repeat(64))
/// );
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Excerpt<'a> {
    text: &'a str,
    quoted: bool,
    /// The text is already escaped (by the Display of its own type).
    escaped: bool,
}

impl<'a> Excerpt<'a> {
    /// The text between double quotes (a name, a pointer); the cut is marked after the quote.
    #[must_use]
    pub fn quoted(text: &'a str) -> Self {
        Self {
            text,
            quoted: true,
            escaped: false,
        }
    }

    /// The text as it is (a number literal).
    #[must_use]
    pub fn bare(text: &'a str) -> Self {
        Self {
            text,
            quoted: false,
            escaped: false,
        }
    }

    /// Text its own type has already escaped for display: only cut short.
    pub(crate) fn escaped(text: &'a str) -> Self {
        Self {
            text,
            quoted: false,
            escaped: true,
        }
    }
}

impl fmt::Display for Excerpt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (head, cut) = match self.text.char_indices().nth(EXCERPT_CHARS) {
            Some((end, _)) => (self.text.get(..end).unwrap_or_default(), true),
            None => (self.text, false),
        };
        let quote = if self.quoted { "\"" } else { "" };
        if self.escaped {
            write!(f, "{quote}{head}{quote}")?;
        } else {
            write!(f, "{quote}{}{quote}", escape(head))?;
        }
        if cut {
            write!(f, "... ({} bytes)", self.text.len())?;
        }
        Ok(())
    }
}

/// The first [`LISTED_LITERALS`] literals as excerpts, then how many more there are.
pub(crate) struct Literals<'a>(pub(crate) &'a [String]);

impl fmt::Display for Literals<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, literal) in self.0.iter().take(LISTED_LITERALS).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", Excerpt::bare(literal))?;
        }
        if self.0.len() > LISTED_LITERALS {
            write!(f, " and {} more", self.0.len() - LISTED_LITERALS)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A message quotes at most a short excerpt of the input.
    const LONG: usize = 1 << 20;

    #[test]
    fn quotes_a_short_excerpt_of_a_long_member_name_with_its_length_and_position() {
        let name = "x".repeat(LONG);
        let input = format!("{{\"{name}\": 1, \"{name}\": 2}}");
        let err = crate::parse(input.as_bytes()).unwrap_err();
        assert!(matches!(&err, JsonError::DuplicateMember { name: n, .. } if n.len() == LONG));
        let message = err.to_string();
        assert!(message.len() < 200, "{} bytes", message.len());
        assert_eq!(
            message,
            format!(
                "duplicate member name \"{}\"... ({LONG} bytes) at line 1, column {} (byte {})",
                "x".repeat(64),
                LONG + 9,
                LONG + 8
            )
        );
    }

    #[test]
    fn quotes_a_short_excerpt_of_a_long_number_literal() {
        let literal = format!("1{}", "0".repeat(10 << 20));
        let value = crate::parse(format!("[{literal}]").as_bytes()).unwrap();
        let err = crate::canonicalize(&value).unwrap_err();
        let message = err.to_string();
        assert_eq!(
            message,
            format!(
                "number 1{}... ({} bytes) has no canonical form: it overflows float64",
                "0".repeat(63),
                literal.len()
            )
        );
        let err = crate::digest(&value).unwrap_err();
        assert!(err.to_string().len() < 200, "{}", err.to_string().len());
    }

    #[test]
    fn lists_a_few_undecidable_literals_and_counts_the_rest() {
        let literals: Vec<String> = (0..10_000)
            .map(|i| format!("9007199254750{i:03}"))
            .collect();
        let value = crate::parse(format!("[{}]", literals.join(",")).as_bytes()).unwrap();
        let message = crate::digest(&value).unwrap_err().to_string();
        assert!(message.len() < 400, "{} bytes", message.len());
        assert!(
            message.starts_with(
                "no digest: 10000 undecidable number literal(s): 9007199254750000, \
                 9007199254750001,"
            ),
            "{message}"
        );
        assert!(message.ends_with(" and 9992 more"), "{message}");
    }

    #[test]
    fn quotes_short_text_whole_and_escaped() {
        let err = crate::parse(b"{\"a\\u202Eb\": 1, \"a\\u202Eb\": 2}").unwrap_err();
        assert_eq!(
            err.to_string(),
            "duplicate member name \"a<U+202E>b\" at line 1, column 17 (byte 16)"
        );
        let value = crate::parse(b"[1e400]").unwrap();
        assert_eq!(
            crate::canonicalize(&value).unwrap_err().to_string(),
            "number 1e400 has no canonical form: it overflows float64"
        );
        let value = crate::parse(b"[9007199254740993, 1e400]").unwrap();
        assert_eq!(
            crate::digest(&value).unwrap_err().to_string(),
            "no digest: 2 undecidable number literal(s): 9007199254740993, 1e400"
        );
    }
}

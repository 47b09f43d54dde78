//! The one error type of this crate.

use std::fmt;

use crate::escape::{Escaped, escape};
use crate::lockfile::{Pin, Selection};
use crate::surface::ItemKind;

/// One of this project's own document formats, for messages.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
#[non_exhaustive]
pub enum Document {
    /// A manifest (docs/formats.md).
    Manifest,
    /// A lockfile (docs/formats.md).
    Lockfile,
    /// A signature envelope (`LOCK.sig`, docs/signing.md).
    Signature,
}

impl fmt::Display for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Manifest => "manifest",
            Self::Lockfile => "lockfile",
            Self::Signature => "signature",
        })
    }
}

/// Top-level members only a manifest has (docs/formats.md).
const MANIFEST_ONLY: [&str; 5] = [
    "complete",
    "captured_at",
    "captured_by",
    "scope",
    "protocol_version",
];

impl Document {
    /// Which of this project's formats `value` is, told by the top-level members that only
    /// one of them has: `complete`, `captured_at`, `captured_by`, `scope` or
    /// `protocol_version` for a manifest, `approval_serial` for a lockfile, `schema` naming
    /// `mcppin-lock-signature` for a signature. `None` when the members say nothing or
    /// contradict each other: the reader's own errors then say what is wrong.
    ///
    /// Readers call it before anything else, so that a file given in the place of another
    /// is named as such instead of failing on its first unknown member.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcppin_core::{Document, parse};
    /// let lock = parse(br#"{"schema_version": 2, "approval_serial": 1, "servers": []}"#).unwrap();
    /// assert_eq!(Document::of(&lock), Some(Document::Lockfile));
    /// let manifest = parse(br#"{"schema_version": 2, "complete": true, "servers": []}"#).unwrap();
    /// assert_eq!(Document::of(&manifest), Some(Document::Manifest));
    /// assert_eq!(Document::of(&parse(b"{}").unwrap()), None);
    /// ```
    #[must_use]
    pub fn of(value: &crate::Value) -> Option<Self> {
        let object = value.as_object()?;
        if object.get("schema").and_then(crate::Value::as_str) == Some("mcppin-lock-signature") {
            return Some(Self::Signature);
        }
        let manifest = MANIFEST_ONLY.iter().any(|name| object.contains(name));
        let lockfile = object.contains("approval_serial");
        match (manifest, lockfile) {
            (true, false) => Some(Self::Manifest),
            (false, true) => Some(Self::Lockfile),
            _ => None,
        }
    }

    /// Refuses `value` when it is recognisably another of this project's formats than
    /// `expected` (see [`Document::of`]).
    pub(crate) fn expect(value: &crate::Value, expected: Self) -> Result<(), Error> {
        match Self::of(value) {
            Some(found) if found != expected => Err(Error::WrongDocument { expected, found }),
            _ => Ok(()),
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

/// Everything that can go wrong in this crate.
///
/// Reading errors carry the [`Position`] of the offending byte; each rule of docs/json.md has its
/// own variant, so a caller (and a test) can tell exactly which rule refused the input. Text
/// that came from the input (a member name) is kept raw here: escape it before showing it. The
/// messages show it as a short escaped [`Excerpt`].
#[derive(Clone, Debug, Eq, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
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
    /// A member that this project's format does not define (our formats refuse unknown names;
    /// served items are kept verbatim and never refused for theirs).
    #[error("unknown member {} at {}", Excerpt::quoted(.name), Excerpt::quoted(.pointer))]
    UnknownMember {
        /// The JSON pointer of the member.
        pointer: String,
        /// Its name.
        name: String,
    },
    /// A member the format requires is absent.
    #[error("missing member \"{name}\" in the object at {}", Excerpt::quoted(.pointer))]
    MissingMember {
        /// The JSON pointer of the object that lacks it.
        pointer: String,
        /// The member name.
        name: &'static str,
    },
    /// A member of the format has the wrong type or value.
    #[error("expected {expected} at {}", Excerpt::quoted(.pointer))]
    Invalid {
        /// The JSON pointer of the value.
        pointer: String,
        /// What the format wants there.
        expected: &'static str,
    },
    /// A `schema_version` this build does not know.
    #[error("{document} schema_version {version} is not supported by this build")]
    UnsupportedVersion {
        /// Which format.
        document: Document,
        /// The version found.
        version: u64,
    },
    /// A version 1 manifest: it makes no completeness statement (docs/formats.md).
    #[error(
        "manifest schema_version 1 is refused: it does not say whether the capture is complete, \
         and completeness cannot be assumed on a capture's behalf; capture again with a current \
         exporter"
    )]
    ManifestVersion1,
    /// A manifest without the `complete` member (docs/formats.md).
    #[error(
        "manifest has no \"complete\" member: whether the capture saw every item cannot be \
         assumed on its behalf, so it cannot be compared"
    )]
    MissingCompleteness,
    /// A document of another of this project's formats than the one expected: a manifest
    /// given as the lockfile, a lockfile given as the manifest (see [`Document::of`]).
    #[error("this is a {found}, not a {expected}")]
    WrongDocument {
        /// The format the reader reads.
        expected: Document,
        /// The format the document's members show.
        found: Document,
    },
    /// One server id listed twice.
    #[error("server {} listed twice, at {}", Excerpt::quoted(.id), Excerpt::quoted(.pointer))]
    DuplicateServer {
        /// The JSON pointer of the second entry.
        pointer: String,
        /// The server id.
        id: String,
    },
    /// Two items of one kind with one key in one server (for a capture: an error of the
    /// capture, docs/formats.md).
    #[error(
        "{kind} {} listed twice in one server, at {}",
        Excerpt::quoted(.name),
        Excerpt::quoted(.pointer)
    )]
    DuplicateItem {
        /// The JSON pointer of the second item.
        pointer: String,
        /// The kind of item.
        kind: ItemKind,
        /// The key they share.
        name: String,
    },
    /// A manifest's `scope` and its servers disagree: a server outside the scope, or a scoped
    /// server with no entry.
    #[error(
        "server {} and the capture's scope disagree, at {}",
        Excerpt::quoted(.id),
        Excerpt::quoted(.pointer)
    )]
    OutOfScope {
        /// The JSON pointer of the server entry or of `scope`.
        pointer: String,
        /// The server id.
        id: String,
    },
    /// A lockfile item whose recorded pin is not what its approved object gives: the file's
    /// halves disagree, so it cannot be trusted as an approval (docs/formats.md).
    #[error(
        "lockfile item at {} records {} but its approved object gives {}",
        Excerpt::quoted(.pointer),
        PinText(.recorded),
        PinText(.computed)
    )]
    PinMismatch {
        /// The JSON pointer of the item.
        pointer: String,
        /// What the file records.
        recorded: Pin,
        /// What the approved object beside it gives.
        computed: Pin,
    },
    /// A lockfile item whose approved object carries another key.
    #[error(
        "lockfile item {} holds an approved object named {}, at {}",
        Excerpt::quoted(.name),
        Excerpt::quoted(.approved),
        Excerpt::quoted(.pointer)
    )]
    NameMismatch {
        /// The JSON pointer of the approved object.
        pointer: String,
        /// The item's key.
        name: String,
        /// The key inside the approved object.
        approved: String,
    },
    /// An approval selection that is neither `SERVER` nor `SERVER/ITEM`.
    #[error("{} is not SERVER or SERVER/ITEM", Excerpt::quoted(.text))]
    InvalidSelection {
        /// The text given.
        text: String,
    },
    /// An approval selection naming something the manifest (or, for a removal, the
    /// lockfile) does not have.
    #[error("nothing to approve for {}: not in the manifest", SelectionText(.selection))]
    UnknownSelection {
        /// The selection.
        selection: Selection,
    },
    /// A version 1 lockfile item (a digest without its approved object) that must be kept
    /// but that the manifest cannot supply: the new lockfile could not store it whole.
    #[error(
        "{kind} {} is approved by a version 1 lockfile without its object, and the manifest \
         serves something else: approve it as served or lock the whole surface",
        Excerpt::escaped(&crate::surface::label(.server, Some(.name)))
    )]
    Version1Item {
        /// The server id.
        server: String,
        /// The kind of item.
        kind: ItemKind,
        /// The item key.
        name: String,
    },
    /// A served item nested deeper than a lockfile can hold it: written there, it would pass
    /// the strict reader's depth limit, and the file could not be read back (docs/formats.md,
    /// "Depth of served items").
    #[error(
        "{kind} \"{}\" of server \"{}\" nests {depth} levels deep, more than the {limit} \
         a lockfile can hold, at \"{}\"",
        Escaped(.name),
        Escaped(.server),
        Escaped(.pointer)
    )]
    ItemTooDeep {
        /// The server id.
        server: String,
        /// The JSON pointer of the item in the document it was read from or added to.
        pointer: String,
        /// The kind of item.
        kind: ItemKind,
        /// The item key.
        name: String,
        /// How many levels of arrays and objects the item nests, itself included.
        depth: usize,
        /// The most a lockfile holds ([`crate::surface::MAX_ITEM_DEPTH`]).
        limit: usize,
    },
}

impl Error {
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
            _ => None,
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
            Self::UnknownMember { .. } => "unknown-member",
            Self::MissingMember { .. } => "missing-member",
            Self::Invalid { .. } => "invalid",
            Self::UnsupportedVersion { .. } => "unsupported-version",
            Self::ManifestVersion1 => "manifest-version-1",
            Self::MissingCompleteness => "missing-completeness",
            Self::WrongDocument { .. } => "wrong-document",
            Self::DuplicateServer { .. } => "duplicate-server",
            Self::DuplicateItem { .. } => "duplicate-item",
            Self::OutOfScope { .. } => "out-of-scope",
            Self::PinMismatch { .. } => "pin-mismatch",
            Self::NameMismatch { .. } => "name-mismatch",
            Self::InvalidSelection { .. } => "invalid-selection",
            Self::UnknownSelection { .. } => "unknown-selection",
            Self::Version1Item { .. } => "version-1-item",
            Self::ItemTooDeep { .. } => "item-too-deep",
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
    fn escaped(text: &'a str) -> Self {
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

/// A pin in a message, its literals bounded like [`Literals`].
struct PinText<'a>(&'a Pin);

impl fmt::Display for PinText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Pin::Digest(d) => write!(f, "{d}"),
            Pin::Undecidable(literals) => {
                write!(f, "undecidable literals [{}]", Literals(literals))
            }
        }
    }
}

/// A selection in a message: as the selection writes itself (escaped), cut short.
struct SelectionText<'a>(&'a Selection);

impl fmt::Display for SelectionText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Excerpt::escaped(&self.0.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Issue 10 item 9: a message quotes at most a short excerpt of the input.
    const LONG: usize = 1 << 20;

    #[test]
    fn quotes_a_short_excerpt_of_a_long_member_name_with_its_length_and_position() {
        let name = "x".repeat(LONG);
        let input = format!("{{\"{name}\": 1, \"{name}\": 2}}");
        let err = crate::parse(input.as_bytes()).unwrap_err();
        assert!(matches!(&err, Error::DuplicateMember { name: n, .. } if n.len() == LONG));
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
        // Exactly the excerpt's length is still whole.
        let name = "y".repeat(64);
        let err = Error::UnknownMember {
            pointer: String::new(),
            name: name.clone(),
        };
        assert_eq!(
            err.to_string(),
            format!("unknown member \"{name}\" at \"\"")
        );
    }

    #[test]
    fn bounds_every_text_from_the_input() {
        let long = "z".repeat(LONG);
        let errors = [
            Error::NfcDuplicateMember {
                first: long.clone(),
                second: long.clone(),
                at: Position::default(),
            },
            Error::UnknownMember {
                pointer: long.clone(),
                name: long.clone(),
            },
            Error::MissingMember {
                pointer: long.clone(),
                name: "id",
            },
            Error::Invalid {
                pointer: long.clone(),
                expected: "a string",
            },
            Error::DuplicateServer {
                pointer: long.clone(),
                id: long.clone(),
            },
            Error::DuplicateItem {
                pointer: long.clone(),
                kind: ItemKind::Tool,
                name: long.clone(),
            },
            Error::OutOfScope {
                pointer: long.clone(),
                id: long.clone(),
            },
            Error::PinMismatch {
                pointer: long.clone(),
                recorded: Pin::Undecidable(vec![long.clone(); 1000]),
                computed: Pin::Digest(crate::Digest::of_bytes(b"")),
            },
            Error::NameMismatch {
                pointer: long.clone(),
                name: long.clone(),
                approved: long.clone(),
            },
            Error::InvalidSelection { text: long.clone() },
            Error::UnknownSelection {
                selection: Selection::Item {
                    server: long.clone(),
                    name: long.clone(),
                },
            },
            Error::Version1Item {
                server: long.clone(),
                kind: ItemKind::Tool,
                name: long.clone(),
            },
        ];
        for err in errors {
            let message = err.to_string();
            assert!(
                message.len() < 1000,
                "{}: {} bytes",
                err.rule(),
                message.len()
            );
            // A selection and a label are cut as they write themselves: `SERVER/ITEM`, escaped.
            let length = match err {
                Error::UnknownSelection { .. } | Error::Version1Item { .. } => 2 * LONG + 1,
                _ => LONG,
            };
            assert!(
                message.contains(&format!("... ({length} bytes)")),
                "{message}"
            );
        }
    }
}

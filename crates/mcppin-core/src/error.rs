//! The one error type of this crate.

use std::fmt;

use crate::escape::Escaped;
use crate::lockfile::{Pin, Selection};
use crate::surface::ItemKind;

/// One of this project's own document formats, for messages.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
#[non_exhaustive]
pub enum Document {
    /// A manifest (SPEC 3.1).
    Manifest,
    /// A lockfile (SPEC 3.2).
    Lockfile,
}

impl fmt::Display for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Manifest => "manifest",
            Self::Lockfile => "lockfile",
        })
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
/// Reading errors carry the [`Position`] of the offending byte; each rule of SPEC 2.1 has its
/// own variant, so a caller (and a test) can tell exactly which rule refused the input. Text
/// that came from the input (a member name) is kept raw here: escape it before showing it.
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
    #[error("duplicate member name \"{}\" at {at}", Escaped(.name))]
    DuplicateMember {
        /// The repeated name.
        name: String,
        /// The second occurrence.
        at: Position,
    },
    /// Two member names of one object that differ but are equal after NFC normalisation.
    #[error(
        "member names \"{}\" and \"{}\" are equal after NFC normalisation at {at}",
        Escaped(.first),
        Escaped(.second)
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
    #[error("number {} has no canonical form: it overflows float64", Escaped(.literal))]
    NonFiniteNumber {
        /// The literal text.
        literal: String,
    },
    /// A value holding undecidable number literals has no digest (SPEC 2.3).
    #[error(
        "no digest: {} undecidable number literal(s): {}",
        .literals.len(),
        Escaped(&.literals.join(", "))
    )]
    Undecidable {
        /// The undecidable literals, as written, in document order.
        literals: Vec<String>,
    },
    /// A member that this project's format does not define (our formats refuse unknown names;
    /// served items are kept verbatim and never refused for theirs).
    #[error("unknown member \"{}\" at \"{}\"", Escaped(.name), Escaped(.pointer))]
    UnknownMember {
        /// The JSON pointer of the member.
        pointer: String,
        /// Its name.
        name: String,
    },
    /// A member the format requires is absent.
    #[error("missing member \"{name}\" in the object at \"{}\"", Escaped(.pointer))]
    MissingMember {
        /// The JSON pointer of the object that lacks it.
        pointer: String,
        /// The member name.
        name: &'static str,
    },
    /// A member of the format has the wrong type or value.
    #[error("expected {expected} at \"{}\"", Escaped(.pointer))]
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
    /// A version 1 manifest: it makes no completeness statement (SPEC 3.1).
    #[error(
        "manifest schema_version 1 is refused: it does not say whether the capture is complete, \
         and completeness cannot be assumed on a capture's behalf; capture again with a current \
         exporter"
    )]
    ManifestVersion1,
    /// A manifest without the `complete` member (SPEC 3.1).
    #[error(
        "manifest has no \"complete\" member: whether the capture saw every item cannot be \
         assumed on its behalf, so it cannot be compared"
    )]
    MissingCompleteness,
    /// One server id listed twice.
    #[error("server \"{}\" listed twice, at \"{}\"", Escaped(.id), Escaped(.pointer))]
    DuplicateServer {
        /// The JSON pointer of the second entry.
        pointer: String,
        /// The server id.
        id: String,
    },
    /// Two items of one kind with one key in one server (for a capture: an error of the
    /// capture, SPEC 3.1).
    #[error("{kind} \"{}\" listed twice in one server, at \"{}\"", Escaped(.name), Escaped(.pointer))]
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
    #[error("server \"{}\" and the capture's scope disagree, at \"{}\"", Escaped(.id), Escaped(.pointer))]
    OutOfScope {
        /// The JSON pointer of the server entry or of `scope`.
        pointer: String,
        /// The server id.
        id: String,
    },
    /// A lockfile item whose recorded pin is not what its approved object gives: the file's
    /// halves disagree, so it cannot be trusted as an approval (SPEC 3.2).
    #[error(
        "lockfile item at \"{}\" records {recorded} but its approved object gives {computed}",
        Escaped(.pointer)
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
        "lockfile item \"{}\" holds an approved object named \"{}\", at \"{}\"",
        Escaped(.name),
        Escaped(.approved),
        Escaped(.pointer)
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
    #[error("\"{}\" is not SERVER or SERVER/ITEM", Escaped(.text))]
    InvalidSelection {
        /// The text given.
        text: String,
    },
    /// An approval selection naming something the manifest (or, for a removal, the
    /// lockfile) does not have.
    #[error("nothing to approve for {selection}: not in the manifest")]
    UnknownSelection {
        /// The selection.
        selection: Selection,
    },
    /// A version 1 lockfile item (a digest without its approved object) that must be kept
    /// but that the manifest cannot supply: the new lockfile could not store it whole.
    #[error(
        "{kind} {}/{} is approved by a version 1 lockfile without its object, and the manifest \
         serves something else: approve it as served or lock the whole surface",
        Escaped(.server),
        Escaped(.name)
    )]
    Version1Item {
        /// The server id.
        server: String,
        /// The kind of item.
        kind: ItemKind,
        /// The item key.
        name: String,
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
            Self::DuplicateServer { .. } => "duplicate-server",
            Self::DuplicateItem { .. } => "duplicate-item",
            Self::OutOfScope { .. } => "out-of-scope",
            Self::PinMismatch { .. } => "pin-mismatch",
            Self::NameMismatch { .. } => "name-mismatch",
            Self::InvalidSelection { .. } => "invalid-selection",
            Self::UnknownSelection { .. } => "unknown-selection",
            Self::Version1Item { .. } => "version-1-item",
        }
    }
}

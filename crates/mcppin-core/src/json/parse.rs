//! The strict I-JSON reader (docs/json.md: RFC 8259 grammar, RFC 7493 restrictions).
//!
//! One pass over the bytes after a whole-input UTF-8 check. Every refusal is its own
//! [`JsonError`](crate::JsonError) variant with the [`Position`] of the offending byte. Nesting is counted before
//! descending, so no input can exhaust the stack.
//!
//! Which error is reported: invalid UTF-8 and a byte-order mark first (the whole input is
//! checked before reading); after that the violation that comes first in the document. Member
//! names are compared when their object is complete, and when an object breaks off, a name
//! repeated before the break is reported in place of the later error.

use std::borrow::Cow;
use std::cmp::Ordering;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::{IsNormalized, is_nfc_quick};

use crate::error::{JsonError as Error, Position};
use crate::json::text::INLINE as INLINE_TEXT;
use crate::json::text::char_at;
use crate::number::Number;
use crate::value::{Kind, Member, Object, Span, Text, Value};

mod approved;

/// The deepest nesting of arrays and objects the reader accepts.
pub const MAX_DEPTH: usize = 256;

/// How strictly to read.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
#[non_exhaustive]
pub enum Strictness {
    /// Every rule of docs/json.md: for documents whose content is judged.
    #[default]
    Strict,
    /// RFC 8259 grammar, UTF-8 and the depth limit only: duplicate and NFC-equal member
    /// names, lone-surrogate escapes (decoded as U+FFFD) and noncharacters pass. For routing
    /// protocol traffic that is forwarded as its original bytes and never judged.
    Relaxed,
}

/// Reads one JSON document under every rule of docs/json.md.
///
/// # Errors
///
/// The first rule the input breaks, with its position.
///
/// # Examples
///
/// ```
/// let v = mcppin_core::parse(br#"{"b": [1.0, "x"], "a": null}"#)?;
/// assert_eq!(v.pointer("/b/1").and_then(|s| s.as_str()), Some("x"));
/// let err = mcppin_core::parse(br#"{"a": 1, "\u0061": 2}"#).unwrap_err();
/// assert_eq!(err.rule(), "duplicate-member");
/// assert_eq!(err.position().map(|p| p.offset), Some(9));
/// # Ok::<(), mcppin_core::Error>(())
/// ```
pub fn parse(input: &[u8]) -> Result<Value, Error> {
    parse_with(input, Strictness::Strict)
}

/// Reads one JSON document with the given strictness.
///
/// # Errors
///
/// The first rule the input breaks, with its position.
pub fn parse_with(input: &[u8], strictness: Strictness) -> Result<Value, Error> {
    read(input, strictness, None).map(|(value, _)| value)
}

/// The approved tools a reading compares served ones with ([`parse_answer`]).
pub(crate) trait ApprovedTools {
    /// The rank and approved form of tool `name`, when a served tool equal to it is pinned
    /// by the form's own digest (docs/performance.md, "Tools compared while read"). The rank
    /// is the tool's place among the approved ones, which the reading lists with each tool
    /// it takes, so that the tool is not looked up by its name again.
    fn approved_form(&self, name: &str) -> Option<(u32, &Value)>;

    /// How many tools are approved.
    fn len(&self) -> usize;
}

/// A tool of an answer's `/result/tools` read as its approved form ([`parse_answer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Taken {
    /// Its index in `/result/tools`.
    pub(crate) index: u32,
    /// The rank [`ApprovedTools::approved_form`] gave with its approved form.
    pub(crate) rank: u32,
}

/// Reads one answer strictly, as [`parse`] does, except that each element of `/result/tools`
/// that is an object served exactly as an approved tool of its name (`approved`) is compared
/// with that form while it is read, and not built: its slot holds only its `name` member, and
/// it is listed in the second value (by ascending index). Whatever else it is (another value, a
/// name not approved, any difference, anything the reader refuses) is read as [`parse`] reads
/// it, so that the reading and its errors are those of [`parse`] but for the tools listed.
pub(crate) fn parse_answer<'a>(
    input: &'a [u8],
    approved: &'a dyn ApprovedTools,
) -> Result<(Value, Vec<Taken>), Error> {
    read(input, Strictness::Strict, Some(approved))
}

/// Where the `tools` array of an answer's `result` starts.
fn tools_span(answer: &Value) -> Option<usize> {
    let tools = answer.get("result")?.get("tools")?;
    tools.as_array().map(|_| tools.span().start)
}

fn read<'a>(
    input: &'a [u8],
    strictness: Strictness,
    approved: Option<&'a dyn ApprovedTools>,
) -> Result<(Value, Vec<Taken>), Error> {
    if let Some(e) = too_large(input.len()) {
        return Err(e);
    }
    if input.starts_with(b"\xEF\xBB\xBF") {
        return Err(Error::ByteOrderMark {
            at: Position::locate(input, 0),
        });
    }
    let text = match std::str::from_utf8(input) {
        Ok(text) => text,
        Err(e) => {
            return Err(Error::InvalidUtf8 {
                at: Position::locate(input, e.valid_up_to()),
            });
        }
    };
    // Where an answer's tools are, when there are approved forms to compare them with.
    let tools_at = approved.and_then(|_| locate_tools(input, text));
    let mut parser = Parser {
        input,
        text,
        pos: 0,
        strict: strictness == Strictness::Strict,
        // Reading an answer leaves the counts out until a tool is not taken: most of its
        // arrays and objects are those of tools taken as their approved forms, never built.
        counts: if tools_at.is_some() {
            Vec::new()
        } else {
            element_counts(input)
        },
        counted: tools_at.is_none(),
        tools_at,
        approved: approved.filter(|_| tools_at.is_some()),
        taken: Vec::new(),
    };
    parser.skip_whitespace();
    if parser.pos == input.len() {
        return Err(Error::Empty { at: parser.here() });
    }
    let mut value = Value::null();
    parser.value(0, &mut value)?;
    parser.skip_whitespace();
    if parser.pos < input.len() {
        return Err(match parser.comment_at(parser.pos) {
            Some(e) => e,
            None => Error::TrailingContent { at: parser.here() },
        });
    }
    // Every array and object took its own count, no more, no less (tools taken as their
    // approved forms gave theirs back).
    debug_assert!(parser.counts.is_empty(), "counts left: {:?}", parser.counts);
    if !parser.taken.is_empty() && tools_span(&value) != tools_at {
        // The located array is not the reading's `/result/tools` (which no input the reader
        // reads can make it): nothing is taken.
        return read(input, strictness, None);
    }
    Ok((value, parser.taken))
}

/// The member names leading from an answer to its tools: `/result/tools`.
const TOOLS_ROUTE: [&str; 2] = ["result", "tools"];

/// Where the array of tools of the answer `input` starts: the value of the first `tools`
/// member of the first `result` member of the top object, found by skipping the members
/// before each. Exact for any input the reader reads; the reader checks the rest.
fn locate_tools(input: &[u8], text: &str) -> Option<usize> {
    let mut scan = Parser {
        input,
        text,
        pos: 0,
        strict: true,
        counts: Vec::new(),
        counted: false,
        tools_at: None,
        approved: None,
        taken: Vec::new(),
    };
    scan.skip_whitespace();
    for step in TOOLS_ROUTE {
        scan.find_member(step)?;
    }
    (scan.peek()? == b'[').then_some(scan.pos)
}

/// Bytes that end the fast scan of a string: quote, backslash, controls, and lead bytes of
/// code points from U+F000 up (where noncharacters live).
static STRING_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    let mut i = 0xEF;
    while i < 256 {
        t[i] = true;
        i += 1;
    }
    t
};

/// Pushes `item` and gives the slot it stands in, for the reader to fill in place.
fn push_slot<T>(items: &mut Vec<T>, item: T) -> &mut T {
    let at = items.len();
    items.push(item);
    &mut items[at]
}

/// A string as read: the input's own text when it holds no escape, or else decoded.
enum Str<'a> {
    /// The text, and the input's bytes from where it starts when there are enough of them
    /// to fill an inline text (copied whole, then cut to length: no call to copy a few bytes).
    Read(&'a str, Option<&'a [u8; INLINE_TEXT]>),
    Decoded(String),
}

impl Str<'_> {
    fn as_str(&self) -> &str {
        match self {
            Self::Read(text, _) => text,
            Self::Decoded(text) => text,
        }
    }

    /// Writes the string into `slot`, in place when it is short.
    fn write_to(self, slot: &mut Text) {
        match self {
            Self::Read(text, Some(window)) if text.len() <= INLINE_TEXT => {
                slot.assign_inline(window, text.len());
            }
            Self::Read(text, _) => slot.assign(text),
            Self::Decoded(text) => *slot = text.into(),
        }
    }
}

struct Parser<'a> {
    input: &'a [u8],
    /// The same bytes as text (checked once up front, so slicing never revalidates).
    text: &'a str,
    pos: usize,
    strict: bool,
    /// The number of elements or members of each array and object still to be read, the next
    /// one last (see [`element_counts`]).
    counts: Vec<u32>,
    /// Whether `counts` holds the counts of every array and object from `pos` on.
    counted: bool,
    /// Where the array of an answer's tools starts (`/result/tools`), when approved forms
    /// were given ([`parse_answer`]).
    tools_at: Option<usize>,
    approved: Option<&'a dyn ApprovedTools>,
    /// The tools taken as their approved forms.
    taken: Vec<Taken>,
}

impl<'a> Parser<'a> {
    fn here(&self) -> Position {
        self.at(self.pos)
    }

    fn at(&self, offset: usize) -> Position {
        Position::locate(self.input, offset)
    }

    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// A comment starting at `offset`, as an error, if there is one.
    fn comment_at(&self, offset: usize) -> Option<Error> {
        match self.input.get(offset..offset + 2) {
            Some(b"//" | b"/*") => Some(Error::Comment {
                at: self.at(offset),
            }),
            _ => None,
        }
    }

    /// The error for an unexpected byte at the current position, or end of input.
    fn unexpected(&self) -> Error {
        let Some(b) = self.peek() else {
            return Error::UnexpectedEnd { at: self.here() };
        };
        if let Some(e) = self.comment_at(self.pos) {
            return e;
        }
        if b == b'\'' {
            return Error::SingleQuote { at: self.here() };
        }
        Error::UnexpectedCharacter {
            found: self.char_here(),
            at: self.here(),
        }
    }

    fn char_here(&self) -> char {
        // The input is valid UTF-8 (checked up front) and pos is at a character boundary.
        char_at(self.input, self.pos).unwrap_or(char::REPLACEMENT_CHARACTER)
    }

    /// Reads one value into `slot`, where it will stay: values, member names and texts are
    /// written where their array or object keeps them, never returned through the stack and
    /// copied again (docs/performance.md, "Read in place").
    fn value(&mut self, depth: usize, slot: &mut Value) -> Result<(), Error> {
        let start = self.pos;
        match self.peek() {
            Some(b'{') => {
                self.check_depth(depth)?;
                slot.set_kind(Kind::Object(self.object(depth + 1)?));
            }
            Some(b'[') => {
                self.check_depth(depth)?;
                slot.set_kind(Kind::Array(self.array(depth + 1)?));
            }
            Some(b'"') => {
                let text = self.string()?;
                if let Some(slot) = slot.set_string() {
                    text.write_to(slot);
                }
            }
            Some(b'-' | b'0'..=b'9') => slot.set_kind(Kind::Number(self.number()?)),
            Some(b't') => slot.set_kind(self.word(b"true", Kind::Bool(true))?),
            Some(b'f') => slot.set_kind(self.word(b"false", Kind::Bool(false))?),
            Some(b'n') => slot.set_kind(self.word(b"null", Kind::Null)?),
            Some(b'+') => return Err(Error::PlusSign { at: self.here() }),
            Some(b'.') => return Err(Error::MissingIntegerDigits { at: self.here() }),
            Some(b) if b.is_ascii_alphabetic() => {
                return Err(Error::InvalidLiteral { at: self.here() });
            }
            _ => return Err(self.unexpected()),
        }
        slot.set_span(start, self.pos);
        Ok(())
    }

    /// Room for the elements or members of the array or object opening at `pos`: the count
    /// found by [`element_counts`], so that it is allocated once at its final size. Taking the
    /// count also releases the room of the counts already taken, so that the counts and the
    /// values read so far never hold more than the values will.
    fn capacity(&mut self) -> usize {
        let count = self.counts.pop().map_or(0, |n| n as usize);
        if self.counts.capacity() > 64 && self.counts.len() < self.counts.capacity() / 2 {
            self.counts.shrink_to_fit();
        }
        count.min(self.room_left())
    }

    /// The most elements the rest of the input can hold: every element takes at least two
    /// bytes with its separator (a count beyond that is only possible in an input that is
    /// refused further on).
    fn room_left(&self) -> usize {
        (self.input.len() - self.pos) / 2 + 1
    }

    fn check_depth(&self, depth: usize) -> Result<(), Error> {
        if depth >= MAX_DEPTH {
            return Err(Error::TooDeep {
                limit: MAX_DEPTH,
                at: self.here(),
            });
        }
        Ok(())
    }

    fn word(&mut self, word: &[u8], kind: Kind) -> Result<Kind, Error> {
        let end = self.pos + word.len();
        if self.input.get(self.pos..end) == Some(word) {
            self.pos = end;
            Ok(kind)
        } else {
            Err(Error::InvalidLiteral { at: self.here() })
        }
    }

    fn array(&mut self, depth: usize) -> Result<Box<[Value]>, Error> {
        // Only the elements of `/result/tools` are compared with approved forms.
        if self.tools_at == Some(self.pos) {
            self.elements::<true>(depth)
        } else {
            self.elements::<false>(depth)
        }
    }

    /// The elements of an array, of `/result/tools` when `TOOLS`.
    fn elements<const TOOLS: bool>(&mut self, depth: usize) -> Result<Box<[Value]>, Error> {
        // A page serves about as many tools as are approved, which sizes the array of an
        // answer read without counts.
        let room = match self.approved {
            Some(approved) if TOOLS && !self.counted => approved.len().min(self.room_left()),
            _ => self.capacity(),
        };
        let mut items = Vec::with_capacity(room);
        self.pos += 1; // '['
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Box::default());
        }
        loop {
            self.skip_whitespace();
            let index = items.len();
            let slot = push_slot(&mut items, Value::null());
            if !(TOOLS && self.take_approved(depth, slot, index)) {
                if TOOLS && !self.counted {
                    // A tool read in full: from here on, every array and object is
                    // allocated at its final size, as in any reading.
                    self.counts = element_counts(&self.input[self.pos..]);
                    self.counted = true;
                }
                self.value(depth, slot)?;
            }
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => {
                    let comma = self.pos;
                    self.pos += 1;
                    self.skip_whitespace();
                    if self.peek() == Some(b']') {
                        return Err(Error::TrailingComma { at: self.at(comma) });
                    }
                }
                Some(b']') => {
                    self.pos += 1;
                    return Ok(items.into_boxed_slice());
                }
                _ => return Err(self.expected_comma_or(']')),
            }
        }
    }

    fn expected_comma_or(&self, close: char) -> Error {
        match self.unexpected() {
            Error::UnexpectedCharacter { at, .. } => Error::ExpectedCommaOrClose {
                expected: close,
                at,
            },
            e => e,
        }
    }

    fn object(&mut self, depth: usize) -> Result<Object, Error> {
        let mut members = Vec::with_capacity(self.capacity());
        self.pos += 1; // '{'
        let read = self.read_members(depth, &mut members);
        if let Err(e) = read {
            // Names are checked once the object is complete; when the object breaks off, a
            // name repeated before the break is the earlier violation and is reported instead.
            return Err(match self.order_members(&mut members) {
                Err(repeat) if offset_of(&repeat) < offset_of(&e) => repeat,
                _ => e,
            });
        }
        self.order_members(&mut members)?;
        Ok(Object::from_sorted(members.into_boxed_slice()))
    }

    /// Reads the members of an object onto `members`, up to and including the `}`.
    fn read_members(&mut self, depth: usize, members: &mut Vec<Member>) -> Result<(), Error> {
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.skip_whitespace();
            let name_start = self.pos;
            let name = match self.peek() {
                Some(b'"') => self.string()?,
                _ => {
                    return Err(match self.unexpected() {
                        Error::UnexpectedCharacter { at, .. } => Error::ExpectedMemberName { at },
                        e => e,
                    });
                }
            };
            let name_span = Span {
                start: name_start,
                end: self.pos,
            };
            self.skip_whitespace();
            if self.peek() != Some(b':') {
                return Err(match self.unexpected() {
                    Error::UnexpectedCharacter { at, .. } => Error::ExpectedColon { at },
                    e => e,
                });
            }
            self.pos += 1;
            self.skip_whitespace();
            let member = push_slot(members, Member::new(Text::default(), Value::null()));
            member.set_name_span(name_span);
            name.write_to(&mut member.name);
            if let Err(e) = self.value(depth, &mut member.value) {
                // A member whose value breaks off was not read: its name is not compared.
                members.pop();
                return Err(e);
            }
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => {
                    let comma = self.pos;
                    self.pos += 1;
                    self.skip_whitespace();
                    if self.peek() == Some(b'}') {
                        return Err(Error::TrailingComma { at: self.at(comma) });
                    }
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.expected_comma_or('}')),
            }
        }
    }

    /// Sorts members into RFC 8785 order and, when strict, refuses a repeated name (I-JSON
    /// section 2.3) or two names equal after NFC normalisation.
    fn order_members(&self, members: &mut [Member]) -> Result<(), Error> {
        let sorted = members
            .windows(2)
            .all(|w| w[0].name.utf16_cmp(&w[1].name) == Ordering::Less);
        if !sorted {
            // Relaxed objects keep repeated names in document order. In place (no scratch
            // buffer as large as the object, which a stable sort takes).
            members.sort_unstable_by(|a, b| {
                a.name
                    .utf16_cmp(&b.name)
                    .then(a.name_start().cmp(&b.name_start()))
            });
        }
        if !self.strict {
            return Ok(());
        }
        // Sorted with no equal neighbours and all-ASCII names (always NFC) is the common case
        // and needs nothing more.
        let repeated = !sorted
            && members
                .windows(2)
                .any(|w| w[0].name.as_bytes() == w[1].name.as_bytes());
        let non_ascii = members.len() > 1 && members.iter().any(|m| !m.name.as_bytes().is_ascii());
        if repeated || non_ascii {
            self.refuse_first_repeat(members)?;
        }
        Ok(())
    }

    /// Refuses the first name, in document order, that repeats an earlier name of the object,
    /// exactly (after escapes are decoded) or after NFC normalisation.
    fn refuse_first_repeat(&self, members: &[Member]) -> Result<(), Error> {
        let mut keyed: Vec<(Cow<'_, str>, &Member)> = members
            .iter()
            .map(|m| {
                let key = if m.name.is_ascii() || is_nfc_quick(m.name.chars()) == IsNormalized::Yes
                {
                    Cow::Borrowed(&*m.name)
                } else {
                    Cow::Owned(m.name.nfc().collect())
                };
                (key, m)
            })
            .collect();
        keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.name_start().cmp(&b.1.name_start())));
        // In each group of equal keys (in document order) the second member is the first
        // repeat; the earliest of those across groups is the one to report.
        let mut repeat: Option<(&Member, &Member)> = None;
        let mut group = 0;
        for i in 1..keyed.len() {
            if keyed[i].0 != keyed[group].0 {
                group = i;
            } else if i == group + 1 {
                let (first, second) = (keyed[group].1, keyed[i].1);
                if repeat.is_none_or(|(_, r)| second.name_start() < r.name_start()) {
                    repeat = Some((first, second));
                }
            }
        }
        let Some((first, second)) = repeat else {
            return Ok(());
        };
        let at = self.at(second.name_span().start);
        Err(if first.name == second.name {
            Error::DuplicateMember {
                name: second.name.to_string(),
                at,
            }
        } else {
            Error::NfcDuplicateMember {
                first: first.name.to_string(),
                second: second.name.to_string(),
                at,
            }
        })
    }

    fn string(&mut self) -> Result<Str<'a>, Error> {
        self.pos += 1; // opening quote
        let start = self.pos;
        // Fast path: no escape, nothing to check.
        loop {
            let Some(&b) = self.input.get(self.pos) else {
                return Err(Error::UnexpectedEnd { at: self.here() });
            };
            if !STRING_STOP[usize::from(b)] {
                self.pos += 1;
                continue;
            }
            match b {
                b'"' => {
                    let s = self.text(start, self.pos);
                    let window = self
                        .input
                        .get(start..start + INLINE_TEXT)
                        .and_then(|w| w.try_into().ok());
                    self.pos += 1;
                    return Ok(Str::Read(s, window));
                }
                b'\\' => break,
                0..0x20 => return Err(self.control_character(b)),
                _ => self.pos += self.checked_char_len()?,
            }
        }
        let mut out = String::with_capacity(self.pos - start + 16);
        out.push_str(self.text(start, self.pos));
        loop {
            let Some(&b) = self.input.get(self.pos) else {
                return Err(Error::UnexpectedEnd { at: self.here() });
            };
            match b {
                b'"' => {
                    self.pos += 1;
                    return Ok(Str::Decoded(out));
                }
                b'\\' => self.escape(&mut out)?,
                0..0x20 => return Err(self.control_character(b)),
                _ => {
                    let run = self.pos;
                    while let Some(&c) = self.input.get(self.pos) {
                        if STRING_STOP[usize::from(c)] {
                            break;
                        }
                        self.pos += 1;
                    }
                    if self.pos > run {
                        out.push_str(self.text(run, self.pos));
                    } else {
                        let len = self.checked_char_len()?;
                        out.push_str(self.text(self.pos, self.pos + len));
                        self.pos += len;
                    }
                }
            }
        }
    }

    fn text(&self, start: usize, end: usize) -> &'a str {
        // Start and end are character boundaries of the checked text; the fallback is
        // unreachable.
        self.text.get(start..end).unwrap_or_default()
    }

    fn control_character(&self, b: u8) -> Error {
        Error::ControlCharacter {
            code: u32::from(b),
            at: self.here(),
        }
    }

    /// The length of the character at `pos` (lead byte 0xEF or above), refusing a noncharacter
    /// when strict.
    fn checked_char_len(&self) -> Result<usize, Error> {
        let c = self.char_here();
        if self.strict && is_noncharacter(u32::from(c)) {
            return Err(Error::Noncharacter {
                code: u32::from(c),
                at: self.here(),
            });
        }
        Ok(c.len_utf8())
    }

    fn escape(&mut self, out: &mut String) -> Result<(), Error> {
        let backslash = self.pos;
        let invalid = |p: &Self| Error::InvalidEscape {
            at: p.at(backslash),
        };
        let Some(&e) = self.input.get(self.pos + 1) else {
            return Err(Error::UnexpectedEnd {
                at: self.at(self.input.len()),
            });
        };
        self.pos += 2;
        let c = match e {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4().ok_or_else(|| invalid(self))?;
                let code = match unit {
                    0xD800..=0xDBFF => {
                        let low = (self.input.get(self.pos..self.pos + 2) == Some(b"\\u"))
                            .then(|| {
                                let save = self.pos;
                                self.pos += 2;
                                let low = self.hex4();
                                match low {
                                    Some(l @ 0xDC00..=0xDFFF) => Some(l),
                                    _ => {
                                        self.pos = save;
                                        None
                                    }
                                }
                            })
                            .flatten();
                        match low {
                            Some(low) => 0x1_0000 + ((unit - 0xD800) << 10) + (low - 0xDC00),
                            None => return self.lone_surrogate(unit, backslash, out),
                        }
                    }
                    0xDC00..=0xDFFF => return self.lone_surrogate(unit, backslash, out),
                    _ => unit,
                };
                if self.strict && is_noncharacter(code) {
                    return Err(Error::Noncharacter {
                        code,
                        at: self.at(backslash),
                    });
                }
                char::from_u32(code).ok_or_else(|| invalid(self))?
            }
            _ => return Err(invalid(self)),
        };
        out.push(c);
        Ok(())
    }

    fn lone_surrogate(&self, code: u32, backslash: usize, out: &mut String) -> Result<(), Error> {
        if self.strict {
            return Err(Error::LoneSurrogate {
                code,
                at: self.at(backslash),
            });
        }
        out.push(char::REPLACEMENT_CHARACTER);
        Ok(())
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.input.get(self.pos..self.pos + 4)?;
        let mut v = 0u32;
        for &d in digits {
            v = v * 16 + char::from(d).to_digit(16)?;
        }
        self.pos += 4;
        Some(v)
    }

    fn number(&mut self) -> Result<Number, Error> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    return Err(Error::LeadingZero {
                        at: self.at(self.pos - 1),
                    });
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(Error::MissingIntegerDigits { at: self.here() }),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(Error::MissingFractionDigits { at: self.here() });
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(Error::MissingExponentDigits { at: self.here() });
            }
            self.digits();
        }
        Ok(Number::from_valid_literal(self.text(start, self.pos)))
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
    }
}

/// The refusal of an input of `len` bytes whose offsets do not fit in 32 bits (see `Value`).
fn too_large(len: usize) -> Option<Error> {
    u32::try_from(len).is_err().then_some(Error::TooLarge {
        limit: u32::MAX as usize,
        size: len,
    })
}

/// The number of elements or members of each array and object of `input`, in the order they
/// open, reversed (the first one last, for [`Vec::pop`]).
///
/// A quick pass over the bytes before reading, so that the reader allocates every array and
/// object once, at its final size, instead of collecting its elements on a growing stack and
/// copying them out: that copy and the slack of the stack cost more than the values themselves.
/// For a valid document the counts are exact; for anything else they are only hints, bounded
/// by the input's size, and the reader refuses the input anyway.
fn element_counts(input: &[u8]) -> Vec<u32> {
    let mut counts: Vec<u32> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut i = 0;
    while let Some(&b) = input.get(i) {
        if !STRUCTURE[usize::from(b)] {
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                // To the closing quote: the next quote not escaped.
                loop {
                    match memchr::memchr2(b'"', b'\\', input.get(i + 1..).unwrap_or_default()) {
                        Some(at) if input[i + 1 + at] == b'\\' => i += at + 2,
                        Some(at) => {
                            i += at + 1;
                            break;
                        }
                        None => return finish(counts),
                    }
                }
            }
            b'[' | b'{' => {
                if open.len() > MAX_DEPTH {
                    // The reader refuses the input here.
                    break;
                }
                let next = input[i + 1..]
                    .iter()
                    .find(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
                open.push(counts.len());
                counts.push(u32::from(!matches!(next, Some(b']' | b'}'))));
            }
            b']' | b'}' => {
                open.pop();
            }
            _ => {
                // A comma.
                if let Some(count) = open.last().and_then(|&k| counts.get_mut(k)) {
                    *count = count.saturating_add(1);
                }
            }
        }
        i += 1;
    }
    finish(counts)
}

/// The counts in the order the reader takes them, at their final size.
fn finish(mut counts: Vec<u32>) -> Vec<u32> {
    counts.reverse();
    counts.shrink_to_fit();
    counts
}

/// The bytes [`element_counts`] looks at: quotes, brackets and commas.
static STRUCTURE: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'[' as usize] = true;
    t[b'{' as usize] = true;
    t[b']' as usize] = true;
    t[b'}' as usize] = true;
    t[b',' as usize] = true;
    t
};

/// The byte offset an error names (reading errors always name one).
fn offset_of(e: &Error) -> usize {
    e.position().map_or(usize::MAX, |p| p.offset)
}

/// Whether `code` is a Unicode noncharacter: U+FDD0..U+FDEF, or U+xFFFE / U+xFFFF in any plane.
#[must_use]
pub fn is_noncharacter(code: u32) -> bool {
    (0xFDD0..=0xFDEF).contains(&code) || (code & 0xFFFE == 0xFFFE && code <= 0x10_FFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_inputs_whose_offsets_do_not_fit_in_32_bits() {
        assert!(too_large(u32::MAX as usize).is_none());
        #[cfg(target_pointer_width = "64")]
        {
            let e = too_large(u32::MAX as usize + 1).expect("refused");
            assert_eq!(e.rule(), "too-large");
            assert!(matches!(e, Error::TooLarge { size, .. } if size == 1 << 32));
        }
    }

    #[test]
    fn counts_elements_and_members_in_opening_order() {
        let mut counts = element_counts(br#"[1, [], {"a": [2, 3], "b": "[,]"}, [ ], {}]"#);
        counts.reverse();
        assert_eq!(counts, [5, 0, 2, 2, 0, 0]);
    }

    #[test]
    fn counts_are_only_hints_for_malformed_input() {
        // Unclosed strings and brackets, stray closers: no panic, and the reader refuses.
        for input in [&br#"["\"#[..], b"]]]", b"[[[,,,", br#"{"a":["#, br#""[\\"#] {
            let _ = element_counts(input);
            assert!(parse(input).is_err());
        }
    }
}

//! Routing reads of protocol traffic: the outline of a message, read without a value tree.
//!
//! A proxy routes each message by a few members near its top (`id`, `method`, `params.name`,
//! `result.isError`) and forwards the rest as the bytes it came in (docs/json.md). Building a value
//! tree for that is most of the cost of routing. [`Outline::parse`] checks the whole input under
//! the relaxed rule ([`Strictness::Relaxed`]: RFC 8259 grammar, UTF-8, at most [`MAX_DEPTH`]
//! levels of nesting) and records only the top value, its members or elements, and the members
//! of objects below it down to a given level, each with its byte span and shape. The elements
//! of an array below the top are not recorded (a batch is an array at the top; the arrays
//! inside a message are content, not routing), so a line of a million small values costs one
//! record, and nothing is allocated per value.
//!
//! It accepts exactly what [`parse_with`]`(input, Strictness::Relaxed)` accepts. A refusal is
//! reported by that reader (so every error has one grammar's account, with its rule and
//! position), and member names and strings holding escapes are decoded by it too: the outline
//! only adds a faster way to the same answer.
//!
//! ```
//! use mcppin_core::outline::{Outline, Shape};
//!
//! let line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"s\u0065arch","arguments":{"q":[1,2]}}}"#;
//! let outline = Outline::parse(line, 2)?;
//! let message = outline.root();
//! assert_eq!(message.get("id").map(|id| id.bytes()), Some(&b"7"[..]));
//! let params = message.get("params").expect("params");
//! assert_eq!(params.get("name").and_then(|n| n.as_str()).as_deref(), Some("search"));
//! // Two levels down is as far as this outline reaches: `arguments` is a span, not a tree.
//! let arguments = params.get("arguments").expect("arguments");
//! assert_eq!(arguments.shape(), Shape::Object);
//! assert!(!arguments.is_outlined());
//! assert_eq!(arguments.bytes(), br#"{"q":[1,2]}"#);
//!
//! let err = Outline::parse(br#"{"id":1,}"#, 2).unwrap_err();
//! assert_eq!(err.rule(), "trailing-comma");
//! # Ok::<(), mcppin_core::Error>(())
//! ```

use std::borrow::Cow;

use crate::error::{JsonError as Error, Position};
use crate::parse::{ApprovedTools, MAX_DEPTH, Strictness, Taken, parse, parse_answer, parse_with};
use crate::value::{Kind, Span, Value};

/// The shape of an outlined value.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Shape {
    /// `{...}`
    Object,
    /// `[...]`
    Array,
    /// `"..."`
    String,
    /// A number literal.
    Number,
    /// `true`
    True,
    /// `false`
    False,
    /// `null`
    Null,
}

/// A message checked under the relaxed rule, with its first levels recorded.
///
/// Two outlines are equal when they were made of the same bytes and record the same values.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Outline<'a> {
    input: &'a [u8],
    /// The recorded values in document order; each one's descendants follow it.
    entries: Vec<Entry>,
}

/// One recorded value, in 16 bytes: a batch of a million tiny values costs at most 16 bytes
/// per input byte (docs/performance.md). The shape is read from the value's first byte, the
/// end of the name and whether a string holds an escape from the input when asked for.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
struct Entry {
    /// Offset of the value's first byte.
    start: u32,
    /// Offset one past the value's last byte.
    end: u32,
    /// Offset of the opening quote of the member name the value stands under, or [`UNNAMED`]
    /// for the top value and elements.
    name: u32,
    /// The index one past this entry's last recorded descendant, with [`OUTLINED`] set when
    /// the members or elements of the value are recorded.
    next: u32,
}

/// [`Entry::name`] of a value that stands under no member name.
const UNNAMED: u32 = u32::MAX;

/// The bit of [`Entry::next`] saying the value's members or elements are recorded (an index
/// never reaches it: every recorded value takes at least one byte of an input under 4 GiB, and
/// all but the first a separator too).
const OUTLINED: u32 = 1 << 31;

impl Entry {
    fn span(self) -> Span {
        Span {
            start: self.start as usize,
            end: self.end as usize,
        }
    }

    fn next(self) -> usize {
        (self.next & !OUTLINED) as usize
    }
}

impl<'a> Outline<'a> {
    /// Checks `input` under the relaxed rule and records the top value, its members or
    /// elements (when `levels` is at least 1), and the members of recorded objects down to
    /// `levels` levels below the top. The elements of arrays below the top are not recorded.
    ///
    /// # Errors
    ///
    /// The error [`parse_with`] reports for `input` under [`Strictness::Relaxed`], whenever
    /// that reader refuses it.
    pub fn parse(input: &'a [u8], levels: usize) -> Result<Self, Error> {
        let mut skim = Skim {
            input,
            pos: 0,
            levels,
            entries: Vec::with_capacity(8),
        };
        // Offsets are kept in 32 bits: a larger input is refused by the relaxed reader below.
        let valid = u32::try_from(input.len()).is_ok()
            && !input.starts_with(b"\xEF\xBB\xBF")
            && std::str::from_utf8(input).is_ok()
            && skim.document().is_some();
        if valid {
            return Ok(Self {
                input,
                entries: skim.entries,
            });
        }
        Err(match parse_with(input, Strictness::Relaxed) {
            Err(err) => err,
            // The two readers disagree: a defect, reported as a refusal where the outline
            // stopped rather than as an acceptance nobody checked.
            Ok(_) => Error::UnexpectedCharacter {
                found: char::REPLACEMENT_CHARACTER,
                at: Position::locate(input, skim.pos.min(input.len())),
            },
        })
    }

    /// Reads `input` strictly ([`parse`]) and outlines it from that reading, without a
    /// second pass over the bytes: the outline [`Outline::parse`] makes of the same input with
    /// the same `levels` (an input the strict reader accepts, the relaxed one accepts, with the
    /// same values at the same places).
    ///
    /// For an input that is read strictly anyway when it is what it seems (an answer the wire
    /// engine judges): routing it and judging it then read it once.
    ///
    /// # Errors
    ///
    /// The error [`parse`] reports for `input`.
    ///
    /// ```
    /// use mcppin_core::outline::Outline;
    ///
    /// let line = br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#;
    /// let (outline, value) = Outline::read_strictly(line, 2)?;
    /// assert_eq!(outline, Outline::parse(line, 2)?);
    /// assert_eq!(value, mcppin_core::parse(line)?);
    /// # Ok::<(), mcppin_core::Error>(())
    /// ```
    pub fn read_strictly(input: &'a [u8], levels: usize) -> Result<(Self, Value), Error> {
        let value = parse(input)?;
        Ok((Self::of_reading(input, &value, levels), value))
    }

    /// [`Outline::read_strictly`] with two levels (a single message as the wire engine
    /// routes it), the tools of `/result/tools` served as their `approved` forms taken as
    /// [`parse_answer`] takes them: listed, not built. The outline is the same: two levels
    /// record nothing below the `tools` array.
    pub(crate) fn read_answer(
        input: &'a [u8],
        approved: &'a dyn ApprovedTools,
    ) -> Result<(Self, Value, Vec<Taken>), Error> {
        let (value, taken) = parse_answer(input, approved)?;
        Ok((Self::of_reading(input, &value, 2), value, taken))
    }

    fn of_reading(input: &'a [u8], value: &Value, levels: usize) -> Self {
        let mut entries = Vec::with_capacity(8);
        record(&mut entries, value, UNNAMED, 0, levels);
        Self { input, entries }
    }

    /// The top value.
    #[must_use]
    pub fn root(&self) -> Node<'_, 'a> {
        Node {
            outline: self,
            index: 0,
        }
    }

    /// The input the outline was read from.
    #[must_use]
    pub fn input(&self) -> &'a [u8] {
        self.input
    }
}

/// A recorded value of an [`Outline`].
#[derive(Clone, Copy, Debug)]
pub struct Node<'o, 'a> {
    outline: &'o Outline<'a>,
    index: usize,
}

impl<'o, 'a> Node<'o, 'a> {
    fn entry(self) -> Entry {
        self.outline.entries[self.index]
    }

    /// The value's shape.
    #[must_use]
    pub fn shape(self) -> Shape {
        match self.outline.input.get(self.entry().start as usize) {
            Some(b'{') => Shape::Object,
            Some(b'[') => Shape::Array,
            Some(b'"') => Shape::String,
            Some(b't') => Shape::True,
            Some(b'f') => Shape::False,
            Some(b'n') => Shape::Null,
            _ => Shape::Number,
        }
    }

    /// The value's byte span in the input.
    #[must_use]
    pub fn span(self) -> Span {
        self.entry().span()
    }

    /// The value's bytes, exactly as they came.
    #[must_use]
    pub fn bytes(self) -> &'a [u8] {
        self.outline
            .input
            .get(self.span().range())
            .unwrap_or_default()
    }

    /// Whether the members or elements of this value were recorded: false for scalars, for
    /// every value at the deepest recorded level and for arrays below the top. Read
    /// [`Node::bytes`] again to go further down.
    #[must_use]
    pub fn is_outlined(self) -> bool {
        self.entry().next & OUTLINED != 0
    }

    /// The member name this value stands under, quotes included, and whether it holds an
    /// escape.
    fn name_token(self) -> Option<(Span, bool)> {
        let start = self.entry().name;
        if start == UNNAMED {
            return None;
        }
        let start = start as usize;
        // The name was checked as a string: it ends at the first quote not escaped.
        let input = self.outline.input;
        let mut i = start + 1;
        let mut escaped = false;
        while let Some(&b) = input.get(i) {
            match b {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    i += 2;
                }
                _ => i += 1,
            }
        }
        Some((Span { start, end: i + 1 }, escaped))
    }

    /// The member name this value stands under, decoded; `None` for the top value and array
    /// elements.
    #[must_use]
    pub fn name(self) -> Option<Cow<'a, str>> {
        let (span, escaped) = self.name_token()?;
        Some(decode(self.outline.input, span, escaped))
    }

    /// Whether this value stands under the member name `name` (compared after decoding).
    #[must_use]
    pub fn is_named(self, name: &str) -> bool {
        self.name_token()
            .is_some_and(|token| token_is(self.outline.input, token, name))
    }

    /// The string, decoded (lone-surrogate escapes become U+FFFD, as in the relaxed reader);
    /// `None` for any other shape.
    #[must_use]
    pub fn as_str(self) -> Option<Cow<'a, str>> {
        let span = self.span();
        let bytes = self.outline.input.get(span.range()).unwrap_or_default();
        (self.shape() == Shape::String)
            .then(|| decode(self.outline.input, span, bytes.contains(&b'\\')))
    }

    /// The recorded members or elements, in document order (repeated member names included);
    /// empty when the value [`is_outlined`](Node::is_outlined) is false.
    pub fn children(self) -> impl Iterator<Item = Node<'o, 'a>> + use<'o, 'a> {
        let outline = self.outline;
        let end = self.entry().next();
        let mut next = self.index + 1;
        std::iter::from_fn(move || {
            if next >= end {
                return None;
            }
            let node = Node {
                outline,
                index: next,
            };
            next = outline.entries[next].next();
            Some(node)
        })
    }

    /// The first member named `name`, when this is an outlined object.
    #[must_use]
    pub fn get(self, name: &str) -> Option<Node<'o, 'a>> {
        if self.shape() != Shape::Object {
            return None;
        }
        self.children().find(|member| member.is_named(name))
    }

    /// For each of `names`, its first member and how many members carry it, in one pass over
    /// the members of this outlined object (all `None` and 0 for anything else).
    ///
    /// ```
    /// let outline = mcppin_core::outline::Outline::parse(br#"{"id":1,"method":"a","id":2}"#, 1)?;
    /// let [id, params] = outline.root().pick(["id", "params"]);
    /// assert_eq!((id.count, id.first.map(|n| n.bytes())), (2, Some(&b"1"[..])));
    /// assert!(params.first.is_none());
    /// # Ok::<(), mcppin_core::Error>(())
    /// ```
    #[must_use]
    pub fn pick<const N: usize>(self, names: [&str; N]) -> [Picked<'o, 'a>; N] {
        let mut picked = [Picked::default(); N];
        if self.shape() != Shape::Object {
            return picked;
        }
        for member in self.children() {
            let Some(token) = member.name_token() else {
                continue;
            };
            for (name, slot) in names.iter().zip(picked.iter_mut()) {
                if token_is(self.outline.input, token, name) {
                    slot.count += 1;
                    slot.first.get_or_insert(member);
                }
            }
        }
        picked
    }

    /// The first way the member names of this outlined object read differently to a
    /// case-insensitive reader, given the members the protocol defines there
    /// ([`fold::conflict`](crate::fold::conflict)); `None` for anything but an outlined object.
    /// Nothing is allocated unless a name holds an escape or the object has many members.
    ///
    /// ```
    /// use mcppin_core::fold::Conflict;
    ///
    /// let line = br#"{"jsonrpc":"2.0","id":1,"result":{},"re\u017Fult":{}}"#;
    /// let outline = mcppin_core::outline::Outline::parse(line, 1)?;
    /// let conflict = outline.root().name_conflict(&["jsonrpc", "id", "result", "error"]);
    /// assert!(matches!(conflict, Some(Conflict::Variant { defined: "result", .. })));
    /// # Ok::<(), mcppin_core::Error>(())
    /// ```
    #[must_use]
    pub fn name_conflict(self, defined: &[&'static str]) -> Option<crate::fold::Conflict> {
        if self.shape() != Shape::Object {
            return None;
        }
        if self.plain_names_clear(defined) {
            return None;
        }
        crate::fold::conflict_in(|| self.children().filter_map(Node::name), defined)
    }

    /// Whether this object's member names are few, ASCII, written without escapes and free of
    /// conflicts: the case of every routed message, checked on the bytes as they came, with
    /// nothing decoded or allocated. `false` sends the caller to the full check.
    fn plain_names_clear(self, defined: &[&str]) -> bool {
        let mut seen: [&[u8]; crate::fold::PAIRWISE] = [&[]; crate::fold::PAIRWISE];
        for (count, member) in self.children().enumerate() {
            let Some((token, escaped)) = member.name_token() else {
                return false;
            };
            if escaped || count == seen.len() {
                return false;
            }
            let name = self
                .outline
                .input
                .get(token.start + 1..token.end - 1)
                .unwrap_or_default();
            if !name.is_ascii() {
                return false;
            }
            let variant = defined
                .iter()
                .any(|d| ascii_fold(name, d.as_bytes()) == Some(false));
            let twin = seen[..count].iter().any(|s| ascii_fold(s, name).is_some());
            if variant || twin {
                return false;
            }
            seen[count] = name;
        }
        true
    }

    /// How many members named `name` this outlined object has (relaxed reading keeps repeats).
    #[must_use]
    pub fn count(self, name: &str) -> usize {
        if self.shape() != Shape::Object {
            return 0;
        }
        self.children()
            .filter(|member| member.is_named(name))
            .count()
    }
}

/// Whether two ASCII names are equal ignoring case (`Some`), and if so whether exactly
/// (`Some(true)`), in one pass that stops at the first byte that tells them apart.
fn ascii_fold(a: &[u8], b: &[u8]) -> Option<bool> {
    if a.len() != b.len() {
        return None;
    }
    let mut exact = true;
    for (x, y) in a.iter().zip(b) {
        if x != y {
            if !x.eq_ignore_ascii_case(y) {
                return None;
            }
            exact = false;
        }
    }
    Some(exact)
}

/// What [`Node::pick`] found for one name.
#[derive(Clone, Copy, Debug, Default)]
pub struct Picked<'o, 'a> {
    /// The first member of that name.
    pub first: Option<Node<'o, 'a>>,
    /// How many members carry that name.
    pub count: usize,
}

/// Whether the member name `token` (its span, quotes included, and whether it holds an escape)
/// is `name` once decoded.
fn token_is(input: &[u8], (span, escaped): (Span, bool), name: &str) -> bool {
    if escaped {
        decode(input, span, true) == name
    } else {
        span.end - span.start == name.len() + 2
            && input.get(span.start + 1..span.end - 1) == Some(name.as_bytes())
    }
}

/// The string at `span` (quotes included), decoded by the relaxed reader when it holds escapes.
fn decode(input: &[u8], span: Span, escaped: bool) -> Cow<'_, str> {
    let bytes = input.get(span.range()).unwrap_or_default();
    if !escaped {
        let inner = bytes
            .get(1..bytes.len().saturating_sub(1))
            .unwrap_or_default();
        // The whole input was checked as UTF-8, and a span starts and ends on quotes.
        return std::str::from_utf8(inner).map_or(Cow::Borrowed(""), Cow::Borrowed);
    }
    match parse_with(bytes, Strictness::Relaxed).map(Value::into_kind) {
        Ok(Kind::String(s)) => Cow::Owned(s.into()),
        _ => Cow::Borrowed(""),
    }
}

/// Whether a recorded value opening with `open` at `depth` has its members or elements
/// recorded: an object's within `levels`, an array's only at the top (a batch). The one rule
/// of both ways to outline ([`Skim::value`] and [`record`]).
fn outlines(open: u8, depth: usize, levels: usize) -> bool {
    match open {
        b'{' => depth < levels,
        b'[' => depth == 0 && levels > 0,
        _ => false,
    }
}

/// Records `value` (under the member name starting at `name`) at `depth`, and below it what
/// [`Skim::value`] records of the same value: the members of objects within `levels`, the
/// elements of an array at the top, in document order.
fn record(entries: &mut Vec<Entry>, value: &Value, name: u32, depth: usize, levels: usize) {
    let open = match value.kind() {
        Kind::Object(_) => b'{',
        Kind::Array(_) => b'[',
        _ => b' ',
    };
    let outlined = outlines(open, depth, levels);
    // Spans of a strict reading fit in 32 bits: larger inputs are refused by the reader.
    let offset = |at: usize| u32::try_from(at).unwrap_or(u32::MAX);
    let span = value.span();
    let index = entries.len();
    entries.push(Entry {
        start: offset(span.start),
        end: offset(span.end),
        name,
        next: if outlined { OUTLINED } else { 0 },
    });
    if outlined {
        match value.kind() {
            Kind::Object(object) => {
                // Kept in name order: put back in document order.
                let mut members: Vec<_> = object.members().iter().collect();
                members.sort_unstable_by_key(|m| m.name_span().start);
                for member in members {
                    let name = offset(member.name_span().start);
                    record(entries, &member.value, name, depth + 1, levels);
                }
            }
            Kind::Array(items) => {
                for item in items {
                    record(entries, item, UNNAMED, depth + 1, levels);
                }
            }
            _ => {}
        }
    }
    let next = offset(entries.len());
    if let Some(entry) = entries.get_mut(index) {
        entry.next |= next;
    }
}

/// The checking pass: the grammar of [`crate::parse`]'s reader without building values.
/// Returns `None` at the first byte the relaxed reader would refuse.
struct Skim<'a> {
    input: &'a [u8],
    pos: usize,
    levels: usize,
    entries: Vec<Entry>,
}

impl Skim<'_> {
    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn document(&mut self) -> Option<()> {
        self.skip_whitespace();
        self.value(0, None, true)?;
        self.skip_whitespace();
        (self.pos == self.input.len()).then_some(())
    }

    /// Reads one value at `depth` (under the member name `name`), recorded when `record`.
    fn value(&mut self, depth: usize, name: Option<usize>, record: bool) -> Option<()> {
        let start = self.pos;
        let open = self.peek()?;
        let outlined = record && outlines(open, depth, self.levels);
        // Offsets fit in 32 bits: larger inputs are refused before skimming.
        let offset = |at: usize| u32::try_from(at).unwrap_or(u32::MAX);
        let record = record.then(|| {
            self.entries.push(Entry {
                start: offset(start),
                end: offset(start),
                name: name.map_or(UNNAMED, offset),
                next: if outlined { OUTLINED } else { 0 },
            });
            self.entries.len() - 1
        });
        match open {
            b'{' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                self.object(depth + 1, outlined)?;
            }
            b'[' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                self.array(depth + 1, outlined)?;
            }
            b'"' => {
                self.string()?;
            }
            b'-' | b'0'..=b'9' => self.number()?,
            b't' => self.word(b"true")?,
            b'f' => self.word(b"false")?,
            b'n' => self.word(b"null")?,
            _ => return None,
        }
        if let Some(index) = record {
            let next = offset(self.entries.len());
            let end = offset(self.pos);
            let entry = &mut self.entries[index];
            entry.end = end;
            entry.next |= next;
        }
        Some(())
    }

    fn word(&mut self, word: &[u8]) -> Option<()> {
        let end = self.pos + word.len();
        (self.input.get(self.pos..end) == Some(word)).then(|| {
            self.pos = end;
        })
    }

    fn array(&mut self, depth: usize, record: bool) -> Option<()> {
        self.pos += 1; // '['
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Some(());
        }
        loop {
            self.skip_whitespace();
            self.value(depth, None, record)?;
            self.skip_whitespace();
            match self.peek()? {
                b',' => {
                    self.pos += 1;
                    self.skip_whitespace();
                    if self.peek() == Some(b']') {
                        return None;
                    }
                }
                b']' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self, depth: usize, record: bool) -> Option<()> {
        self.pos += 1; // '{'
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Some(());
        }
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                return None;
            }
            let name_start = self.pos;
            self.string()?;
            self.skip_whitespace();
            if self.peek() != Some(b':') {
                return None;
            }
            self.pos += 1;
            self.skip_whitespace();
            self.value(depth, Some(name_start), record)?;
            self.skip_whitespace();
            match self.peek()? {
                b',' => {
                    self.pos += 1;
                    self.skip_whitespace();
                    if self.peek() == Some(b'}') {
                        return None;
                    }
                }
                b'}' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Reads a string (UTF-8 was checked up front); returns whether it holds an escape. Under
    /// the relaxed rule an escape is `\` and one of `"\/bfnrt`, or `\u` and four hex digits
    /// (lone surrogates and noncharacters pass).
    fn string(&mut self) -> Option<bool> {
        self.pos += 1; // opening quote
        let mut escaped = false;
        loop {
            // Eight bytes at a time while none of them needs a look.
            while let Some(word) = self.input.get(self.pos..self.pos + 8) {
                let word = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
                if needs_a_look(word) {
                    break;
                }
                self.pos += 8;
            }
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    return Some(escaped);
                }
                b'\\' => {
                    escaped = true;
                    match self.input.get(self.pos + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.pos += 2,
                        b'u' => {
                            let hex = self.input.get(self.pos + 2..self.pos + 6)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            self.pos += 6;
                        }
                        _ => return None,
                    }
                }
                0..0x20 => return None,
                _ => self.pos += 1,
            }
        }
    }

    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek()? {
            b'0' => {
                self.pos += 1;
                if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                    return None;
                }
            }
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return None;
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return None;
            }
            self.digits();
        }
        Some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
    }
}

/// Whether any byte of `word` is a quote, a backslash or a control character (below 0x20):
/// the classic has-zero-byte test, `(x - 0x01..) & !x & 0x80..`, on `word` with each of the
/// first two XORed away, and its has-less-than form for the third. Exact for "any".
fn needs_a_look(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let less_than = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGHS;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    (less_than(quote, 1) | less_than(backslash, 1) | less_than(word, 0x20)) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outline(input: &[u8]) -> Outline<'_> {
        Outline::parse(input, 2).expect("valid")
    }

    #[test]
    fn an_outline_from_the_strict_reading_is_the_outline_of_the_bytes() {
        let lines: [&[u8]; 7] = [
            br#" {"id" : 1, "params": {"name": "a", "arguments": {"x": [1]}}} "#,
            br#"{"z":1,"a":{"y":{},"b":[1,{"c":2}],"x":null},"m":"\u0041"}"#,
            br#"[{"b":1,"a":2},{"c":{"e":[],"d":{}}},3,"s",[4]]"#,
            br#"{"\u00e9":1,"f":{"k":true},"\u0062":2,"a":[]}"#,
            b"\"top\"",
            b"{}",
            b"[]\r",
        ];
        for line in lines {
            for levels in 0..4 {
                let (outline, value) = Outline::read_strictly(line, levels).expect("strict");
                assert_eq!(outline, Outline::parse(line, levels).expect("relaxed"));
                assert_eq!(value, parse(line).expect("strict"));
            }
        }
        // What the strict reader refuses is refused with its error, even where the relaxed
        // outline would pass.
        for line in [&br#"{"a":1,"a":2}"#[..], br#"{"a":"\ud800"}"#, b"{"] {
            assert_eq!(Outline::read_strictly(line, 2).err(), parse(line).err());
        }
    }

    #[test]
    fn records_members_two_levels_down_with_their_spans() {
        let line = br#" {"id" : 1, "params": {"name": "a", "arguments": {"x": [1]}}} "#;
        let o = outline(line);
        let root = o.root();
        assert_eq!(root.shape(), Shape::Object);
        assert_eq!(root.bytes(), &line[1..line.len() - 1]);
        let names: Vec<_> = root.children().filter_map(|n| n.name()).collect();
        assert_eq!(names, ["id", "params"]);
        let params = root.get("params").expect("params");
        assert!(params.is_outlined());
        let arguments = params.get("arguments").expect("arguments");
        assert!(!arguments.is_outlined());
        assert_eq!(arguments.children().count(), 0);
        assert_eq!(arguments.bytes(), br#"{"x": [1]}"#);
        assert_eq!(
            params.get("name").and_then(Node::as_str).as_deref(),
            Some("a")
        );
    }

    #[test]
    fn records_array_elements_as_children() {
        let o = outline(br#"[{"id":1},{"id":"two"},3]"#);
        let shapes: Vec<_> = o.root().children().map(Node::shape).collect();
        assert_eq!(shapes, [Shape::Object, Shape::Object, Shape::Number]);
        let ids: Vec<_> = o
            .root()
            .children()
            .filter_map(|e| e.get("id"))
            .map(Node::bytes)
            .collect();
        assert_eq!(ids, [&b"1"[..], &b"\"two\""[..]]);
    }

    #[test]
    fn decodes_escaped_names_and_strings() {
        let o = outline(br#"{"\u0069d":1,"method":"tools\/call","x":"\ud800"}"#);
        let root = o.root();
        assert_eq!(root.get("id").map(Node::bytes), Some(&b"1"[..]));
        assert_eq!(
            root.get("method").and_then(Node::as_str).as_deref(),
            Some("tools/call")
        );
        assert_eq!(
            root.get("x").and_then(Node::as_str).as_deref(),
            Some("\u{FFFD}")
        );
    }

    #[test]
    fn counts_repeated_member_names_after_decoding() {
        let o = outline(br#"{"id":1,"\u0069d":2,"method":"a"}"#);
        assert_eq!(o.root().count("id"), 2);
        assert_eq!(o.root().count("method"), 1);
        assert_eq!(o.root().count("params"), 0);
        // The first of the repeats is the one `get` returns.
        assert_eq!(o.root().get("id").map(Node::bytes), Some(&b"1"[..]));
    }

    #[test]
    fn picks_first_members_and_counts_in_one_pass() {
        let o = outline(br#"{"method":"m","\u0069d":1,"id":2,"params":{}}"#);
        let [id, method, result] = o.root().pick(["id", "method", "result"]);
        assert_eq!(id.count, 2);
        assert_eq!(id.first.map(Node::bytes), Some(&b"1"[..]));
        assert_eq!(method.count, 1);
        assert_eq!(method.first.and_then(Node::as_str).as_deref(), Some("m"));
        assert_eq!(result.count, 0);
        assert!(result.first.is_none());
        let array = outline(br#"[{"id":1}]"#);
        let [none] = array.root().pick(["id"]);
        assert_eq!((none.count, none.first.is_none()), (0, true));
    }

    #[test]
    fn scalars_have_no_members() {
        let o = outline(b"\"id\"");
        assert_eq!(o.root().get("id").map(Node::bytes), None);
        assert_eq!(o.root().count("id"), 0);
        assert!(!o.root().is_outlined());
        assert_eq!(o.root().name(), None);
    }

    #[test]
    fn refuses_with_the_relaxed_readers_error() {
        for input in [
            &b""[..],
            b"{",
            b"{\"a\":1,}",
            b"[1,]",
            b"{\"a\" 1}",
            b"01",
            b"\"\\x\"",
            b"\"\\u12\"",
            b"\"\x01\"",
            b"\xEF\xBB\xBF{}",
            b"{\"a\":\xff}",
            b"{} x",
            b"nul",
            b"-",
            b"1.",
            b"1e",
        ] {
            let expected = parse_with(input, Strictness::Relaxed).expect_err("refused");
            assert_eq!(Outline::parse(input, 2).expect_err("refused"), expected);
        }
    }

    #[test]
    fn finds_every_byte_that_needs_a_look_in_any_lane() {
        for lane in 0..8 {
            for byte in 0..=255u8 {
                let mut word = [b'a'; 8];
                word[lane] = byte;
                let expected = byte == b'"' || byte == b'\\' || byte < 0x20;
                assert_eq!(
                    needs_a_look(u64::from_le_bytes(word)),
                    expected,
                    "byte {byte:#x} in lane {lane}"
                );
            }
        }
        // Bytes of multi-byte characters next to each other never look like a stop.
        assert!(!needs_a_look(u64::from_le_bytes(
            *b"\xe2\x80\x8b\xc3\xa9\xff\x80\x7f"
        )));
    }

    #[test]
    fn records_no_elements_of_arrays_below_the_top() {
        // A million small values inside a message cost one record: memory stays a small
        // multiple of what routing needs, whatever the message holds.
        let line = format!(r#"{{"id":1,"result":[{}0]}}"#, "0,".repeat(100_000));
        let o = Outline::parse(line.as_bytes(), 3).expect("valid");
        assert_eq!(o.entries.len(), 3);
        let result = o.root().get("result").expect("result");
        assert!(!result.is_outlined());
        assert_eq!(result.children().count(), 0);
        assert!(size_of::<Entry>() <= 48);
    }

    #[test]
    fn keeps_the_depth_limit() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n)).into_bytes();
        assert!(Outline::parse(&deep(MAX_DEPTH), 2).is_ok());
        let err = Outline::parse(&deep(MAX_DEPTH + 1), 2).expect_err("too deep");
        assert_eq!(err.rule(), "too-deep");
    }
}

//! The JSON value type produced by the strict reader.
//!
//! A [`Value`] keeps what a pinning tool needs and a general-purpose JSON library throws away: the
//! literal text of every number (so no reader's rounding decides what was served) and the byte
//! span of every value in the input (so a proxy can forward the original bytes of an admitted
//! item). Object members are stored in RFC 8785 order (UTF-16 code units of their names), which
//! makes canonical writing a straight walk and member look-up a binary search.

use std::cmp::Ordering;
use std::ops::Range;

pub use crate::json::text::Text;
use crate::json::text::utf16_cmp_bytes;
use crate::number::Number;

/// A byte range `start..end` in the input a value was read from.
///
/// Values built in code rather than read have the empty span `0..0`.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Span {
    /// Offset of the first byte of the value.
    pub start: usize,
    /// Offset one past the last byte of the value.
    pub end: usize,
}

impl Span {
    /// The span as a range, for slicing the input it came from.
    #[must_use]
    pub fn range(self) -> Range<usize> {
        self.start..self.end
    }
}

/// A JSON value with its span in the input.
///
/// Equality compares content only (spans and number spelling ignored where the numbers are
/// equal as float64, see [`Number`]); use [`crate::digest`] for the pinning comparison.
///
/// A value is 32 bytes and holds its content in place (a number's literal and a text of up to
/// 22 bytes) or in exactly sized boxes, so reading a document costs at most 16 times its size
/// (docs/performance.md): the span is kept as two 32-bit offsets, which is why the reader
/// refuses inputs of 4 GiB or more.
#[derive(Clone, Debug)]
pub struct Value {
    kind: Kind,
    at: Offsets,
}

/// A span kept as two 32-bit offsets, the way values and member names hold theirs: the reader
/// refuses inputs whose offsets do not fit in 32 bits, so the conversions never saturate.
#[derive(Clone, Copy, Debug, Default)]
struct Offsets {
    start: u32,
    end: u32,
}

impl Offsets {
    fn of(span: Span) -> Self {
        Self {
            start: u32::try_from(span.start).unwrap_or(u32::MAX),
            end: u32::try_from(span.end).unwrap_or(u32::MAX),
        }
    }

    fn span(self) -> Span {
        // u32 to usize never truncates on the targets this crate builds for (32 and 64 bits).
        Span {
            start: self.start as usize,
            end: self.end as usize,
        }
    }
}

/// The kind of a JSON value and its content.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, with its literal text.
    Number(Number),
    /// A string, escapes decoded.
    String(Text),
    /// An array.
    Array(Box<[Value]>),
    /// An object.
    Object(Object),
}

/// A JSON object: members sorted by the UTF-16 code units of their names (RFC 8785 section
/// 3.2.3).
///
/// Objects read strictly never hold two members with the same name; objects read relaxed (for
/// routing only) may, and then keep them all, in document order among themselves.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Object {
    members: Box<[Member]>,
}

/// One member of an object: its name, the span of the name (quotes included) and its value.
///
/// 64 bytes: the name's span is kept as two 32-bit offsets, like a value's.
#[derive(Clone, Debug)]
pub struct Member {
    /// The member name, escapes decoded.
    pub name: Text,
    name_at: Offsets,
    /// The member value.
    pub value: Value,
}

impl Member {
    /// A member built in code, its name with the empty span.
    #[must_use]
    pub fn new(name: impl Into<Text>, value: impl Into<Value>) -> Self {
        Self {
            name: name.into(),
            name_at: Offsets::default(),
            value: value.into(),
        }
    }

    /// A member read with its name at `name_span`.
    pub(crate) fn with_span(name: Text, name_span: Span, value: Value) -> Self {
        Self {
            name,
            name_at: Offsets::of(name_span),
            value,
        }
    }

    /// Makes the name read at `span`.
    pub(crate) fn set_name_span(&mut self, span: Span) {
        self.name_at = Offsets::of(span);
    }

    /// Where the name starts in the input, for ordering members by their place.
    pub(crate) fn name_start(&self) -> u32 {
        self.name_at.start
    }

    /// Where the name stands in the input (quotes included).
    #[must_use]
    pub fn name_span(&self) -> Span {
        self.name_at.span()
    }
}

impl PartialEq for Member {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.value == other.value
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
    }
}

impl Value {
    /// A value built in code, with the empty span.
    #[must_use]
    pub fn new(kind: Kind) -> Self {
        Self {
            kind,
            at: Offsets::default(),
        }
    }

    /// Makes the value read at `start..end` (the reader fills values where they stay).
    pub(crate) fn set_span(&mut self, start: usize, end: usize) {
        self.at = Offsets::of(Span { start, end });
    }

    /// Makes the value `kind`.
    pub(crate) fn set_kind(&mut self, kind: Kind) {
        self.kind = kind;
    }

    /// Makes the value an empty string and gives its text to be written in place.
    pub(crate) fn set_string(&mut self) -> Option<&mut Text> {
        self.kind = Kind::String(Text::default());
        match &mut self.kind {
            Kind::String(text) => Some(text),
            _ => None,
        }
    }

    /// `null`.
    #[must_use]
    pub fn null() -> Self {
        Self::new(Kind::Null)
    }

    /// The kind and content of the value.
    #[must_use]
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// Consumes the value and returns its content.
    #[must_use]
    pub fn into_kind(self) -> Kind {
        self.kind
    }

    /// Where the value stands in the input it was read from.
    #[must_use]
    pub fn span(&self) -> Span {
        self.at.span()
    }

    /// The string content, if this is a string.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is `true` or `false`.
    #[must_use]
    pub fn as_bool(&self) -> Option<bool> {
        match self.kind {
            Kind::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The number, if this is a number.
    #[must_use]
    pub fn as_number(&self) -> Option<&Number> {
        match &self.kind {
            Kind::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    #[must_use]
    pub fn as_array(&self) -> Option<&[Value]> {
        match &self.kind {
            Kind::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The object, if this is an object.
    #[must_use]
    pub fn as_object(&self) -> Option<&Object> {
        match &self.kind {
            Kind::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The object, mutably, if this is an object (for readers that move items out).
    pub(crate) fn as_object_mut(&mut self) -> Option<&mut Object> {
        match &mut self.kind {
            Kind::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The elements, mutably, if this is an array (for readers that move items out).
    pub(crate) fn as_array_mut(&mut self) -> Option<&mut Box<[Value]>> {
        match &mut self.kind {
            Kind::Array(a) => Some(a),
            _ => None,
        }
    }

    /// Whether this is `null`.
    #[must_use]
    pub fn is_null(&self) -> bool {
        matches!(self.kind, Kind::Null)
    }

    /// The member `name` of an object (the first, for a relaxed object holding duplicates).
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.as_object().and_then(|o| o.get(name))
    }

    /// The value at an RFC 6901 JSON pointer (`""` is the value itself).
    ///
    /// Returns `None` when the pointer is malformed or names nothing.
    #[must_use]
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        let mut current = self;
        for token in rest.split('/') {
            let token = unescape_pointer_token(token)?;
            current = match &current.kind {
                Kind::Object(o) => o.get(&token)?,
                Kind::Array(a) => {
                    if token.len() > 1 && token.starts_with('0') {
                        return None;
                    }
                    a.get(token.parse::<usize>().ok()?)?
                }
                _ => return None,
            };
        }
        Some(current)
    }

    /// Every number literal in the value that a float64 cannot pin down (see
    /// [`Number::is_undecidable`]), in document order of their spans.
    #[must_use]
    pub fn undecidable_literals(&self) -> Vec<&Number> {
        let mut out = Vec::new();
        self.collect_undecidable(&mut out);
        out.sort_by_key(|(start, _)| *start);
        out.into_iter().map(|(_, n)| n).collect()
    }

    /// [`Value::undecidable_literals`] in the order the value's canonical form holds them
    /// (members by name, elements in order): however the value was spelled, the same list.
    /// A pin records them so, and a lockfile's reader finds them so in its canonical
    /// `approved` object.
    pub(crate) fn undecidable_literals_canonically(&self) -> Vec<&Number> {
        let mut out = Vec::new();
        self.collect_undecidable(&mut out);
        out.into_iter().map(|(_, n)| n).collect()
    }

    fn collect_undecidable<'a>(&'a self, out: &mut Vec<(u32, &'a Number)>) {
        match &self.kind {
            Kind::Number(n) if n.is_undecidable() => out.push((self.at.start, n)),
            Kind::Array(a) => a.iter().for_each(|v| v.collect_undecidable(out)),
            Kind::Object(o) => o.values().for_each(|v| v.collect_undecidable(out)),
            _ => {}
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Self::new(Kind::String(s.into()))
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Self::new(Kind::String(s.into()))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Self::new(Kind::Bool(b))
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Self {
        Self::new(Kind::Number(Number::from(n)))
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Self::new(Kind::Number(Number::from(n)))
    }
}

impl From<Number> for Value {
    fn from(n: Number) -> Self {
        Self::new(Kind::Number(n))
    }
}

impl From<Vec<Value>> for Value {
    fn from(a: Vec<Value>) -> Self {
        Self::new(Kind::Array(a.into_boxed_slice()))
    }
}

impl From<Object> for Value {
    fn from(o: Object) -> Self {
        Self::new(Kind::Object(o))
    }
}

impl Object {
    /// An empty object.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds an object from members already in RFC 8785 order and free of duplicates.
    pub(crate) fn from_sorted(members: Box<[Member]>) -> Self {
        Self { members }
    }

    /// Sets member `name` to `value`, replacing any member of that name; keeps the order.
    ///
    /// Each new member reallocates the object (it is held in an exactly sized box); build a
    /// large object with [`FromIterator`] instead.
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<Value>) {
        let name = name.into();
        let value = value.into();
        match self.search(&name) {
            Ok(i) => self.members[i].value = value,
            Err(i) => {
                let mut members = std::mem::take(&mut self.members).into_vec();
                members.insert(i, Member::new(name, value));
                self.members = members.into_boxed_slice();
            }
        }
    }

    /// Removes member `name` and returns its value.
    pub fn remove(&mut self, name: &str) -> Option<Value> {
        let i = self.search(name).ok()?;
        let mut members = std::mem::take(&mut self.members).into_vec();
        let removed = members.remove(i);
        self.members = members.into_boxed_slice();
        Some(removed.value)
    }

    /// The value of member `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.search(name).ok().map(|i| &self.members[i].value)
    }

    /// The value of member `name`, mutably.
    pub(crate) fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        self.search(name).ok().map(|i| &mut self.members[i].value)
    }

    /// The member `name` with its name span.
    #[must_use]
    pub fn member(&self, name: &str) -> Option<&Member> {
        self.search(name).ok().map(|i| &self.members[i])
    }

    /// Whether the object has a member `name`.
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.search(name).is_ok()
    }

    /// The members in RFC 8785 order.
    #[must_use]
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// Member names and values in RFC 8785 order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.members.iter().map(|m| (&*m.name, &m.value))
    }

    /// Member names in RFC 8785 order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.members.iter().map(|m| &*m.name)
    }

    /// Member values in RFC 8785 order of their names.
    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.members.iter().map(|m| &m.value)
    }

    /// The number of members.
    #[must_use]
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the object has no members.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub(crate) fn search(&self, name: &str) -> Result<usize, usize> {
        // Relaxed objects may hold equal names side by side: find the first.
        let i = self.members.partition_point(|m| {
            utf16_cmp_bytes(m.name.as_bytes(), name.as_bytes()) == Ordering::Less
        });
        match self.members.get(i) {
            Some(m) if m.name.as_bytes() == name.as_bytes() => Ok(i),
            _ => Err(i),
        }
    }
}

impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Object {
    /// A later member of a name replaces an earlier one, as [`Object::insert`] does.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut members: Vec<Member> = iter
            .into_iter()
            .map(|(k, v)| Member::new(k.into(), v))
            .collect();
        // Stable, so equal names stay in the order they came; the last of each is kept.
        members.sort_by(|a, b| utf16_cmp_bytes(a.name.as_bytes(), b.name.as_bytes()));
        let mut kept: Vec<Member> = Vec::with_capacity(members.len());
        for member in members {
            match kept.last_mut() {
                Some(last) if last.name == member.name => *last = member,
                _ => kept.push(member),
            }
        }
        Self {
            members: kept.into_boxed_slice(),
        }
    }
}

/// Compares two strings by their UTF-16 code units, as RFC 8785 section 3.2.3 orders members.
///
/// UTF-8 byte order equals code point order, which differs from UTF-16 order only where a
/// code point at or above U+10000 (a surrogate pair, 0xD800..0xDBFF first) meets one in
/// U+E000..U+FFFF. So bytes decide, except at the first differing character when that case
/// holds.
#[must_use]
pub fn utf16_cmp(a: &str, b: &str) -> Ordering {
    utf16_cmp_bytes(a.as_bytes(), b.as_bytes())
}

fn unescape_pointer_token(token: &str) -> Option<String> {
    if !token.contains('~') {
        return Some(token.to_owned());
    }
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next()? {
                '0' => out.push('~'),
                '1' => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// Escapes one reference token for an RFC 6901 JSON pointer (`~` as `~0`, `/` as `~1`).
#[must_use]
pub fn escape_pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_order_puts_supplementary_before_private_use() {
        // U+1F600 is D83D DE00 in UTF-16, which sorts before U+E000 though its code point is
        // higher.
        assert_eq!(utf16_cmp("\u{1F600}", "\u{E000}"), Ordering::Less);
        assert_eq!(utf16_cmp("\u{E000}", "\u{1F600}"), Ordering::Greater);
        assert_eq!(utf16_cmp("a\u{FFFF}", "a\u{10000}"), Ordering::Greater);
        assert_eq!(utf16_cmp("\u{10000}", "\u{10001}"), Ordering::Less);
        assert_eq!(utf16_cmp("\u{E000}", "\u{E001}"), Ordering::Less);
        assert_eq!(utf16_cmp("a", "ab"), Ordering::Less);
        assert_eq!(utf16_cmp("b", "a\u{1F600}"), Ordering::Greater);
        assert_eq!(utf16_cmp("same", "same"), Ordering::Equal);
    }

    #[test]
    fn utf16_order_matches_a_reference_on_many_pairs() {
        let samples = [
            "",
            "a",
            "b",
            "\u{7F}",
            "\u{80}",
            "\u{7FF}",
            "\u{800}",
            "\u{D7FF}",
            "\u{E000}",
            "\u{FFFD}",
            "\u{FFFF}",
            "\u{10000}",
            "\u{1F600}",
            "\u{10FFFF}",
            "a\u{E000}",
            "a\u{10000}",
            "\u{E000}a",
            "\u{10000}a",
            // The first difference after a common prefix of multi-byte characters.
            "\u{E9}\u{E000}",
            "\u{E9}\u{10000}",
            "\u{10000}\u{E000}",
            "\u{10000}\u{10001}",
            "\u{FFFF}\u{10FFFF}",
        ];
        for a in samples {
            for b in samples {
                let reference = a.encode_utf16().cmp(b.encode_utf16());
                assert_eq!(utf16_cmp(a, b), reference, "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn pointer_walks_objects_and_arrays() {
        let v = crate::parse(br#"{"a/b":{"c~d":[10,{"e":true}]}}"#).unwrap();
        assert_eq!(v.pointer("/a~1b/c~0d/1/e"), Some(&Value::from(true)));
        assert!(v.pointer("/a~1b/c~0d/01").is_none());
        assert!(v.pointer("/missing").is_none());
        assert!(v.pointer("a").is_none());
        assert_eq!(v.pointer(""), Some(&v));
    }

    #[test]
    fn values_and_numbers_stay_small() {
        // Reading costs at most 16 bytes per input byte (docs/performance.md): an array of
        // one-digit numbers takes two input bytes per value.
        assert!(size_of::<Value>() <= 32);
        assert!(size_of::<Number>() <= 16);
        assert!(size_of::<Member>() <= 64);
    }

    #[test]
    fn from_iter_keeps_the_last_of_equal_names_in_canonical_order() {
        let o: Object = [
            ("b", 1u64),
            ("a", 2),
            ("b", 3),
            ("\u{E000}", 4),
            ("\u{1F600}", 5),
        ]
        .into_iter()
        .collect();
        let keys: Vec<_> = o.keys().collect();
        assert_eq!(keys, ["a", "b", "\u{1F600}", "\u{E000}"]);
        assert_eq!(o.get("b"), Some(&Value::from(3u64)));
    }

    #[test]
    fn object_insert_keeps_canonical_order() {
        let mut o = Object::new();
        o.insert("b", 1u64);
        o.insert("a", 2u64);
        o.insert("\u{1F600}", 3u64);
        o.insert("\u{E000}", 4u64);
        let keys: Vec<_> = o.keys().collect();
        assert_eq!(keys, ["a", "b", "\u{1F600}", "\u{E000}"]);
        o.insert("a", 5u64);
        assert_eq!(o.len(), 4);
        assert_eq!(o.remove("a"), Some(Value::from(5u64)));
    }
}

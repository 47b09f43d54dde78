//! The text of a JSON string or member name, short ones kept inline.
//!
//! Most member names and many string values of a tool list are a few bytes long (`"type"`,
//! `"string"`, `"properties"`): a [`Text`] of up to 22 bytes holds its bytes in place and costs
//! no allocation, which is most of what reading such a list allocated (docs/performance.md,
//! "Cold first list"). A longer text is one exactly sized box. Either way a `Text` is 24 bytes
//! and a [`Kind`](crate::Kind) that holds one stays 24 bytes (its tag lives in the text's).

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// The longest text kept inline, in bytes.
pub(crate) const INLINE: usize = 22;

/// An immutable UTF-8 string: up to 22 bytes inline, longer on the heap.
///
/// It reads as a `&str` wherever one is expected (`Deref`, `AsRef<str>`, `Borrow<str>`), and
/// compares, orders and hashes as its text, however it is stored.
///
/// ```
/// use mcppin_core::value::Text;
/// let short = Text::from("name");
/// let long = Text::from("a description longer than twenty-two bytes");
/// assert_eq!(short, "name");
/// assert_eq!(long.len(), 42);
/// assert!(long.starts_with("a description"));
/// ```
#[derive(Clone)]
pub struct Text {
    repr: Repr,
}

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<str>),
}

impl Text {
    /// The text as a string slice.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match &self.repr {
            // Copied whole from a `&str` of at most INLINE bytes: always in bounds and always
            // UTF-8, so the fallback is unreachable.
            Repr::Inline { len, bytes } => bytes
                .get(..usize::from(*len))
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or_default(),
            Repr::Heap(text) => text,
        }
    }

    /// The text's UTF-8 bytes, without checking them again (what comparing and writing use).
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.repr {
            Repr::Inline { len, bytes } => bytes.get(..usize::from(*len)).unwrap_or_default(),
            Repr::Heap(text) => text.as_bytes(),
        }
    }

    /// Replaces the text. A short text is written into the inline bytes where they stand, so
    /// that a text read into its array or object is not composed on the stack and copied there
    /// (docs/performance.md, "Read in place").
    pub(crate) fn assign(&mut self, text: &str) {
        if let Repr::Inline { len, bytes } = &mut self.repr
            && let Ok(n) = u8::try_from(text.len())
            && text.len() <= INLINE
        {
            *len = n;
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            bytes[text.len()..].fill(0);
            return;
        }
        *self = Self::from(text);
    }

    /// Replaces the text by the first `len` bytes of `window` (`len` at most [`INLINE`], the
    /// bytes a checked text of that length), kept inline.
    pub(crate) fn assign_inline(&mut self, window: &[u8; INLINE], len: usize) {
        let mut bytes = *window;
        for (i, b) in bytes.iter_mut().enumerate() {
            if i >= len {
                *b = 0;
            }
        }
        let len = u8::try_from(len.min(INLINE)).unwrap_or(0);
        match &mut self.repr {
            Repr::Inline { len: l, bytes: b } => {
                *l = len;
                *b = bytes;
            }
            Repr::Heap(_) => self.repr = Repr::Inline { len, bytes },
        }
    }

    /// The inline array as stored, zeros after the text included (tests of in-place writes).
    #[cfg(test)]
    fn repr_bytes(&self) -> Option<(u8, [u8; INLINE])> {
        match &self.repr {
            Repr::Inline { len, bytes } => Some((*len, *bytes)),
            Repr::Heap(_) => None,
        }
    }

    /// The first eight bytes of the text, big-endian, zeros past its end: two texts whose
    /// keys differ are ordered by them wherever the first byte that tells them apart is below
    /// 0xEE in either ([`Text::utf16_cmp`]).
    fn prefix_key(&self) -> u64 {
        let mut key = [0; 8];
        match &self.repr {
            Repr::Inline { bytes, .. } => key.copy_from_slice(&bytes[..8]),
            Repr::Heap(text) => {
                let n = text.len().min(8);
                key[..n].copy_from_slice(&text.as_bytes()[..n]);
            }
        }
        u64::from_be_bytes(key)
    }

    /// The order of two texts by their UTF-16 code units (RFC 8785 section 3.2.3), decided on
    /// their first eight bytes when those tell them apart below 0xEE (where UTF-8 order is
    /// UTF-16 order), by [`utf16_cmp_bytes`] otherwise.
    pub(crate) fn utf16_cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.prefix_key(), other.prefix_key());
        if a != b {
            let skip = (a ^ b).leading_zeros() & !7;
            let (x, y) = ((a << skip) >> 56, (b << skip) >> 56);
            if x < 0xEE || y < 0xEE {
                return a.cmp(&b);
            }
        }
        utf16_cmp_bytes(self.as_bytes(), other.as_bytes())
    }

    /// Whether the text is kept inline (no allocation of its own).
    #[must_use]
    pub fn is_inline(&self) -> bool {
        matches!(self.repr, Repr::Inline { .. })
    }
}

impl Default for Text {
    fn default() -> Self {
        Self::from("")
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        match u8::try_from(text.len()) {
            Ok(len) if text.len() <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..text.len()].copy_from_slice(text.as_bytes());
                Self {
                    repr: Repr::Inline { len, bytes },
                }
            }
            _ => Self {
                repr: Repr::Heap(text.into()),
            },
        }
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        if text.len() <= INLINE {
            Self::from(text.as_str())
        } else {
            Self {
                repr: Repr::Heap(text.into_boxed_str()),
            }
        }
    }
}

impl From<Box<str>> for Text {
    fn from(text: Box<str>) -> Self {
        if text.len() <= INLINE {
            Self::from(&*text)
        } else {
            Self {
                repr: Repr::Heap(text),
            }
        }
    }
}

impl From<Text> for String {
    fn from(text: Text) -> Self {
        match text.repr {
            Repr::Heap(text) => text.into_string(),
            Repr::Inline { .. } => text.as_str().to_owned(),
        }
    }
}

impl From<Text> for Box<str> {
    fn from(text: Text) -> Self {
        match text.repr {
            Repr::Heap(text) => text,
            Repr::Inline { .. } => text.as_str().into(),
        }
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        match (&self.repr, &other.repr) {
            // An inline text's bytes past its length are always zero (it is only ever made by
            // copying into a zeroed array): whole arrays compare as the texts do, without a
            // call to compare slices.
            (Repr::Inline { len: a, bytes: x }, Repr::Inline { len: b, bytes: y }) => {
                a == b && x == y
            }
            _ => self.as_bytes() == other.as_bytes(),
        }
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Text {
    fn cmp(&self, other: &Self) -> Ordering {
        // UTF-8 byte order is code point order, the order of `str`.
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl Hash for Text {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// [`utf16_cmp`](crate::value::utf16_cmp) of the UTF-8 bytes of two strings (as [`Text::as_bytes`] gives them, without
/// checking them again).
pub(crate) fn utf16_cmp_bytes(ab: &[u8], bb: &[u8]) -> Ordering {
    let common = ab.iter().zip(bb).take_while(|(x, y)| x == y).count();
    let (Some(&x), Some(&y)) = (ab.get(common), bb.get(common)) else {
        return ab.len().cmp(&bb.len());
    };
    if x < 0xEE || y < 0xEE {
        // At least one differing character is below U+E000: code point order is UTF-16 order.
        return x.cmp(&y);
    }
    // The differing characters start at the same offset: the last lead byte at or before the
    // first difference (continuation bytes are 0x80..0xC0).
    let start = (0..=common)
        .rev()
        .find(|&i| ab.get(i).is_some_and(|&c| !(0x80..0xC0).contains(&c)))
        .unwrap_or(0);
    let first_unit = |bytes: &[u8]| char_at(bytes, start).map_or(0, utf16_first_unit);
    first_unit(ab).cmp(&first_unit(bb)).then_with(|| x.cmp(&y))
}

/// The character starting at `at` in UTF-8 bytes (`None` past the end or inside a character),
/// decoded from the next four bytes at most, so that it costs the same however long the input.
pub(crate) fn char_at(bytes: &[u8], at: usize) -> Option<char> {
    let bytes = bytes.get(at..bytes.len().min(at.saturating_add(4)))?;
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(bytes.get(..e.valid_up_to())?).ok()?,
    };
    text.chars().next()
}

fn utf16_first_unit(c: char) -> u32 {
    let c = u32::from(c);
    if c >= 0x1_0000 {
        0xD800 + ((c - 0x1_0000) >> 10)
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_inline_and_long_text_is_boxed() {
        for (text, inline) in [
            ("", true),
            ("type", true),
            ("twenty-two bytes long.", true),
            ("twenty-three bytes long", false),
            ("é".repeat(11).as_str(), true),
            ("é".repeat(12).as_str(), false),
        ] {
            for made in [
                Text::from(text),
                Text::from(text.to_owned()),
                Text::from(Box::<str>::from(text)),
            ] {
                assert_eq!(made.is_inline(), inline, "{text:?}");
                assert_eq!(made.as_str(), text);
                assert_eq!(String::from(made.clone()), text);
                assert_eq!(&*Box::<str>::from(made), text);
            }
        }
    }

    #[test]
    fn texts_order_by_their_utf16_code_units_whatever_their_first_eight_bytes() {
        // Characters on each side of every boundary the fast order reads: ASCII, NUL (the
        // padding past a short text's end), two- and three-byte characters below U+E000, the
        // private use area from U+E000 (after the surrogates in UTF-16, before them in code
        // points), the last BMP character, and characters beyond the BMP.
        let chars = [
            "",
            "\0",
            "a",
            "z",
            "\u{7f}",
            "é",
            "\u{7ff}",
            "\u{800}",
            "\u{d7ff}",
            "\u{e000}",
            "\u{fffd}",
            "\u{ffff}",
            "\u{10000}",
            "\u{1f600}",
            "\u{10ffff}",
        ];
        let mut texts = Vec::new();
        for prefix in ["", "abc", "abcdefg", "abcdefgh", "abcdefghijklmnopqrstu"] {
            for c in chars {
                for tail in ["", "\0", "x", "\u{ffff}", "\u{10000}"] {
                    texts.push(format!("{prefix}{c}{tail}"));
                }
            }
        }
        for a in &texts {
            for b in &texts {
                let expected = a.encode_utf16().cmp(b.encode_utf16());
                assert_eq!(
                    Text::from(a.as_str()).utf16_cmp(&Text::from(b.as_str())),
                    expected,
                    "{a:?} against {b:?}"
                );
            }
        }
    }

    #[test]
    fn a_text_replaced_in_place_equals_the_text_made_anew() {
        let long = "a description longer than twenty-two bytes";
        let input = format!("{long}{long}");
        for len in [0, 1, 5, 21, 22] {
            let text = &long[..len];
            let window: &[u8; INLINE] = input.as_bytes()[..INLINE].try_into().expect("window");
            for start in [Text::default(), Text::from("nonzero"), Text::from(long)] {
                let (mut assigned, mut windowed) = (start.clone(), start);
                assigned.assign(text);
                windowed.assign_inline(window, len);
                for replaced in [assigned, windowed] {
                    assert!(replaced.is_inline(), "{len} bytes");
                    // The bytes past the text are zero, as in a text made anew: equality
                    // compares the whole inline array.
                    assert_eq!(replaced.repr_bytes(), Text::from(text).repr_bytes());
                    assert_eq!(replaced, text);
                }
            }
        }
        let mut short = Text::from("id");
        short.assign(long);
        assert!(!short.is_inline());
        assert_eq!(short, long);
    }

    #[test]
    fn compares_and_hashes_as_its_text_however_stored() {
        use std::collections::hash_map::DefaultHasher;
        let hash = |t: &dyn Fn(&mut DefaultHasher)| {
            let mut h = DefaultHasher::new();
            t(&mut h);
            h.finish()
        };
        let long = "x".repeat(40);
        let a = Text::from(long.as_str());
        assert_eq!(a, long);
        assert_eq!(a, *long.as_str());
        assert_eq!(
            hash(&|h| a.hash(h)),
            hash(&|h| long.as_str().hash(h)),
            "Borrow<str> requires equal hashes"
        );
        let short = Text::from("b");
        assert_eq!(hash(&|h| short.hash(h)), hash(&|h| "b".hash(h)));
        let (a_short, y_short) = (Text::from("a"), Text::from("y"));
        assert!(a_short < short && short < a && y_short > a);
        assert_eq!(format!("{short} {short:?}"), "b \"b\"");
        assert_eq!(size_of::<Text>(), 24);
    }
}

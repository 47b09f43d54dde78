//! Properties of canonicalisation and digests over generated JSON: idempotence, independence
//! from member order and whitespace, and sensitivity to every string and number; values that
//! are equal have one digest.
//!
//! Documents are generated as a tree of our own and written out as JSON text with chosen
//! member order, whitespace and escapes, then read by the strict reader: so the properties
//! cover the reader, the canonical writer and the digest together.

use mcppin_core::{Digest, canonicalize, canonicalize_exact, digest, is_noncharacter, parse};
use proptest::prelude::*;
use unicode_normalization::UnicodeNormalization;

/// A generated JSON value. Object member names are distinct after NFC normalisation, numbers
/// are finite and of magnitude below 2^53 (decidable), strings hold no noncharacters.
#[derive(Clone, Debug)]
enum Json {
    Null,
    Bool(bool),
    Number(f64, Notation),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// How a number literal is spelled.
#[derive(Clone, Copy, Debug)]
enum Notation {
    Plain,
    Exponent,
    UpperExponent,
}

fn text() -> impl Strategy<Value = String> {
    let c = prop_oneof![
        3 => proptest::char::range('a', 'e'),
        2 => any::<char>(),
        1 => proptest::char::range('\u{10000}', '\u{10FFFF}'),
        1 => proptest::char::range('\u{0}', '\u{7F}'),
        1 => prop::sample::select(vec!['\u{e9}', 'e', '\u{301}', '\u{212B}', '\u{C5}', '\u{1F600}', '\u{E000}', '"', '\\', '\u{1b}', '\u{202E}']),
    ];
    prop::collection::vec(c, 0..6).prop_map(|cs| {
        cs.into_iter()
            .filter(|c| !is_noncharacter(u32::from(*c)))
            .collect()
    })
}

fn number() -> impl Strategy<Value = Json> {
    let limit = 9_007_199_254_740_992.0_f64;
    let value = prop_oneof![
        (-1_000_000i64..1_000_000).prop_map(|n| n as f64),
        any::<f64>().prop_filter("finite, below 2^53", move |x| x.is_finite()
            && x.abs() < limit),
        (-9_007_199_254_740_991i64..9_007_199_254_740_991).prop_map(|n| n as f64),
    ];
    let notation = prop_oneof![
        Just(Notation::Plain),
        Just(Notation::Exponent),
        Just(Notation::UpperExponent)
    ];
    (value, notation).prop_map(|(v, n)| Json::Number(v, n))
}

fn json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        number(),
        text().prop_map(Json::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            prop::collection::vec((text(), inner), 0..6).prop_map(|members| {
                // Keep the first of every set of NFC-equal names: the strict reader refuses
                // the others, and these properties are about documents it accepts.
                let mut seen = std::collections::HashSet::new();
                Json::Object(
                    members
                        .into_iter()
                        .filter(|(name, _)| seen.insert(name.nfc().collect::<String>()))
                        .collect(),
                )
            }),
        ]
    })
}

/// Choices for writing a document: member order, whitespace, escapes. A small xorshift
/// stream seeded by proptest, so every choice is reproducible from the seed.
struct Style(u64);

impl Style {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn whitespace(&mut self, out: &mut String) {
        for _ in 0..self.next() % 3 {
            out.push([' ', '\t', '\n', '\r'][usize::try_from(self.next() % 4).unwrap()]);
        }
    }

    fn write(&mut self, value: &Json, out: &mut String) {
        self.whitespace(out);
        match value {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(x, notation) => match notation {
                Notation::Plain => out.push_str(&format!("{x}")),
                Notation::Exponent => out.push_str(&format!("{x:e}")),
                Notation::UpperExponent => out.push_str(&format!("{x:E}")),
            },
            Json::String(s) => self.string(s, out),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    self.write(item, out);
                }
                self.whitespace(out);
                out.push(']');
            }
            Json::Object(members) => {
                let mut order: Vec<usize> = (0..members.len()).collect();
                for i in (1..order.len()).rev() {
                    let j = usize::try_from(self.next() % (i as u64 + 1)).unwrap();
                    order.swap(i, j);
                }
                out.push('{');
                for (k, &i) in order.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    self.whitespace(out);
                    self.string(&members[i].0, out);
                    self.whitespace(out);
                    out.push(':');
                    self.write(&members[i].1, out);
                }
                self.whitespace(out);
                out.push('}');
            }
        }
        self.whitespace(out);
    }

    /// A string literal: controls, quote and backslash escaped as they must be; any other
    /// character sometimes escaped as `\uXXXX` (a surrogate pair above U+FFFF).
    fn string(&mut self, s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            let must = c < ' ' || c == '"' || c == '\\';
            if must || self.next().is_multiple_of(4) {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            } else {
                out.push(c);
            }
        }
        out.push('"');
    }
}

fn write(value: &Json, seed: u64) -> String {
    let mut out = String::new();
    Style(seed | 1).write(value, &mut out);
    out
}

fn digest_of(text: &str) -> Digest {
    let value = parse(text.as_bytes()).unwrap_or_else(|e| panic!("{e}: {text}"));
    digest(&value).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The strings and numbers of a value (member names included), as mutable places.
enum Leaf<'a> {
    Text(&'a mut String),
    Name(&'a mut String, Vec<String>),
    Number(&'a mut f64),
}

fn leaves<'a>(value: &'a mut Json, out: &mut Vec<Leaf<'a>>) {
    match value {
        Json::Number(x, _) => out.push(Leaf::Number(x)),
        Json::String(s) => out.push(Leaf::Text(s)),
        Json::Array(items) => items.iter_mut().for_each(|v| leaves(v, out)),
        Json::Object(members) => {
            let names: Vec<String> = members.iter().map(|(n, _)| n.nfc().collect()).collect();
            for (name, v) in members.iter_mut() {
                out.push(Leaf::Name(name, names.clone()));
                leaves(v, out);
            }
        }
        Json::Null | Json::Bool(_) => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn canonicalisation_is_idempotent(value in json(), seed in any::<u64>()) {
        let text = write(&value, seed);
        let parsed = parse(text.as_bytes()).unwrap_or_else(|e| panic!("{e}: {text}"));
        let once = canonicalize(&parsed).expect("canonical");
        let again = canonicalize(&parse(&once).expect("canonical form reads back")).expect("canonical");
        prop_assert_eq!(once, again);
    }

    #[test]
    fn the_exact_form_is_the_canonical_form_of_decidable_documents(
        value in json(),
        seed in any::<u64>(),
    ) {
        // A lockfile signature covers the exact form: for decidable documents it must be the
        // RFC 8785 form, byte for byte, or signatures made before it existed would break.
        let text = write(&value, seed);
        let parsed = parse(text.as_bytes()).unwrap_or_else(|e| panic!("{e}: {text}"));
        prop_assert_eq!(canonicalize_exact(&parsed), canonicalize(&parsed).expect("canonical"));
    }

    #[test]
    fn member_order_and_whitespace_never_change_the_digest(
        value in json(),
        first in any::<u64>(),
        second in any::<u64>(),
    ) {
        let a = write(&value, first);
        let b = write(&value, second);
        prop_assert_eq!(digest_of(&a), digest_of(&b), "{} vs {}", a, b);
    }

    #[test]
    fn any_change_to_a_string_or_number_changes_the_digest(
        value in json(),
        pick in any::<prop::sample::Index>(),
        seed in any::<u64>(),
        extra in text(),
    ) {
        let before = digest_of(&write(&value, seed));
        let mut changed = value.clone();
        let mut places = Vec::new();
        leaves(&mut changed, &mut places);
        prop_assume!(!places.is_empty());
        let len = places.len();
        match places.swap_remove(pick.index(len)) {
            Leaf::Text(s) => {
                // Append something, or change the last character.
                let addition = if extra.is_empty() { "x".to_owned() } else { extra };
                s.push_str(&addition);
            }
            Leaf::Name(name, siblings) => {
                let renamed = format!("{name}{}", if extra.is_empty() { "x" } else { &extra });
                prop_assume!(!siblings.contains(&renamed.nfc().collect::<String>()));
                *name = renamed;
            }
            Leaf::Number(x) => {
                // The nearest double away from the value (towards zero for negatives), so the
                // smallest possible change.
                let bits = x.to_bits();
                *x = if *x < 0.0 { f64::from_bits(bits - 1) } else { f64::from_bits(bits + 1) };
            }
        }
        drop(places);
        let after = digest_of(&write(&changed, seed));
        prop_assert_ne!(before, after);
    }

    #[test]
    fn values_equal_after_any_spelling_have_one_digest(
        value in json(),
        first in any::<u64>(),
        second in any::<u64>(),
        pick in any::<prop::sample::Index>(),
    ) {
        // The guard takes the approved digest for a served tool equal to its approved form
        // without hashing it: equality must imply the digest, and hold across spellings.
        let a = parse(write(&value, first).as_bytes()).expect("generated");
        let b = parse(write(&value, second).as_bytes()).expect("generated");
        prop_assert!(a == b);
        prop_assert_eq!(digest(&a).ok(), digest(&b).ok());
        // A change to one leaf: whenever the two are still equal, the digests are too.
        let mut changed = value.clone();
        let mut places = Vec::new();
        leaves(&mut changed, &mut places);
        prop_assume!(!places.is_empty());
        let len = places.len();
        if let Leaf::Number(x) = places.swap_remove(pick.index(len)) {
            *x = -*x;
        }
        drop(places);
        let c = parse(write(&changed, second).as_bytes()).expect("generated");
        if a == c {
            prop_assert_eq!(digest(&a).ok(), digest(&c).ok());
        } else {
            prop_assert_ne!(digest(&a).ok(), digest(&c).ok());
        }
    }
}

//! The terminal notation is unambiguous: distinct texts never print the
//! same, and what prints is printable ASCII only. Proved by decoding: every `<U+` of the
//! output begins an escape, so the output can be read back into the text it came from. The
//! labels of servers and items built on it are unambiguous too (item 9).

use mcppin_core::escape;
use mcppin_core::lockfile::Selection;
use proptest::prelude::*;

/// Reads an escaped text back: `<U+` then uppercase hex digits then `>` is one code point,
/// anything else stands for itself.
fn unescape(printed: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = printed;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("<U+") {
            let end = after.find('>')?;
            let hex = &after[..end];
            if !(4..=6).contains(&hex.len()) || hex.bytes().any(|b| b.is_ascii_lowercase()) {
                return None;
            }
            out.push(char::from_u32(u32::from_str_radix(hex, 16).ok()?)?);
            rest = &after[end + 1..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    Some(out)
}

fn text() -> impl Strategy<Value = String> {
    let c = prop_oneof![
        4 => prop::sample::select(vec!['<', 'U', '+', '>', '0', '2', 'B', '3', 'C', 'u']),
        2 => proptest::char::range(' ', '~'),
        1 => any::<char>(),
        1 => prop::sample::select(vec!['\u{200B}', '\u{1b}', '\u{202E}', '\u{3C}', '\u{10FFFF}']),
    ];
    prop::collection::vec(c, 0..24).prop_map(|cs| cs.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn escaping_reads_back_and_prints_only_printable_ascii(text in text()) {
        let printed = escape(&text);
        prop_assert!(printed.bytes().all(|b| (0x20..0x7F).contains(&b)), "{printed}");
        prop_assert_eq!(mcppin_core::unescape(&printed), Some(text.clone()));
        prop_assert_eq!(unescape(&printed), Some(text));
    }

    #[test]
    fn distinct_texts_print_differently(a in text(), b in text()) {
        prop_assume!(a != b);
        prop_assert_ne!(escape(&a), escape(&b));
    }

    /// The pairs a random draw rarely meets: a text, and the same text with some of its
    /// characters replaced by the notation that stands for them.
    #[test]
    fn a_text_and_its_spelled_out_twin_print_differently(a in text(), mask in any::<u32>()) {
        let twin: String = a
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if mask.rotate_left(i as u32) & 1 == 1 {
                    format!("<U+{:04X}>", u32::from(c))
                } else {
                    c.to_string()
                }
            })
            .collect();
        prop_assume!(twin != a);
        prop_assert_ne!(escape(&a), escape(&twin));
    }
}

#[test]
fn the_literal_notation_and_the_character_print_differently() {
    // A description holding the text `<U+200B>` printed exactly as one
    // holding U+200B, so a reviewer saw one line where the surface had changed.
    assert_eq!(escape("a\u{200B}b"), "a<U+200B>b");
    assert_eq!(escape("a<U+200B>b"), "a<U+003C>U+200B>b");
    assert_eq!(
        unescape(&escape("a<U+200B>b")).as_deref(),
        Some("a<U+200B>b")
    );
}

#[test]
fn a_less_than_sign_outside_the_notation_is_left_alone() {
    for plain in [
        "a < b",
        "<b>bold</b>",
        "<u+200b>",
        "<U200B>",
        "<U",
        "<U-",
        "x<",
    ] {
        assert_eq!(escape(plain), plain);
    }
}

/// Ids and names drawn to collide: slashes, tildes, the notation and characters it escapes.
fn part() -> impl Strategy<Value = String> {
    let c = prop_oneof![
        4 => prop::sample::select(vec!['/', '~', '0', '1', 'a', '<', 'U', '+', '>']),
        1 => any::<char>(),
    ];
    prop::collection::vec(c, 1..8).prop_map(|cs| cs.into_iter().collect())
}

fn selection() -> impl Strategy<Value = Selection> {
    (part(), prop::option::of(part())).prop_map(|(server, name)| match name {
        Some(name) => Selection::Item { server, name },
        None => Selection::Server(server),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// The label a report prints is printable ASCII and selects exactly the
    /// server or item it labels, so two of them never print alike.
    #[test]
    fn a_label_selects_what_it_labels(selection in selection()) {
        let printed = selection.to_string();
        prop_assert!(printed.bytes().all(|b| (0x20..0x7F).contains(&b)), "{printed}");
        prop_assert_eq!(printed.parse::<Selection>(), Ok(selection));
    }

    #[test]
    fn distinct_selections_print_differently(a in selection(), b in selection()) {
        prop_assume!(a != b);
        prop_assert_ne!(a.to_string(), b.to_string());
    }
}

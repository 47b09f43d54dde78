//! The folding rule of one reading for every reader: what [`conflict`] reports is
//! what a plain pairwise comparison finds, for few members and for many; and the outline
//! reports it on the names as decoded, escapes included.

use mcppin_core::fold::{Conflict, ENVELOPE, conflict, fold_eq, result_members};
use mcppin_core::outline::Outline;
use proptest::prelude::*;

/// What [`conflict`] must report, found the plain way.
fn oracle(names: &[&str], defined: &[&'static str]) -> Option<Conflict> {
    for name in names {
        if let Some(d) = defined.iter().find(|d| **d != *name && fold_eq(name, d)) {
            return Some(Conflict::Variant {
                name: (*name).to_owned(),
                defined: d,
            });
        }
    }
    for (i, first) in names.iter().enumerate() {
        if let Some(second) = names[i + 1..].iter().find(|n| fold_eq(first, n)) {
            return Some(Conflict::Twins {
                first: (*first).to_owned(),
                second: (*second).to_owned(),
            });
        }
    }
    None
}

/// Names from letters that fold onto each other (`ſ` and `s`, the Kelvin sign and `k`, the
/// four i's) and some that fold onto nothing.
fn name() -> impl Strategy<Value = String> {
    let letters = prop::sample::select(vec![
        "s", "S", "ſ", "k", "K", "\u{212A}", "i", "I", "\u{130}", "\u{131}", "d", "é", "É", "_",
    ]);
    prop::collection::vec(letters, 1..4).prop_map(|l| l.concat())
}

/// Member names as written in JSON: plain ASCII in any case (the outline's fast path),
/// escaped, or non-ASCII.
fn raw_name() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "id",
        "ID",
        "Id",
        "tools",
        "Tools",
        "nextCursor",
        "NEXTCURSOR",
        "nextcursor",
        "result",
        "Result",
        "error",
        "x",
        "X",
        "y",
        "method",
        "i\\u0064",
        "re\\u017Fult",
        "ſ",
        "S",
        "_meta",
    ])
}

proptest! {
    #[test]
    fn agrees_with_pairwise_comparison(names in prop::collection::vec(name(), 0..40)) {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let defined = ["id", "sk", "kis"];
        prop_assert_eq!(conflict(&names, &defined), oracle(&names, &defined));
    }

    #[test]
    fn the_outline_reports_what_the_names_as_decoded_report(
        names in prop::collection::vec(raw_name(), 0..20)
    ) {
        let members: Vec<String> = names.iter().map(|n| format!("\"{n}\":0")).collect();
        let line = format!("{{{}}}", members.join(","));
        let outline = Outline::parse(line.as_bytes(), 1).unwrap();
        let decoded: Vec<String> = outline.root().children().map(|m| m.name().unwrap().into_owned()).collect();
        let decoded: Vec<&str> = decoded.iter().map(String::as_str).collect();
        prop_assert_eq!(outline.root().name_conflict(&ENVELOPE), conflict(&decoded, &ENVELOPE));
        let page = result_members("tools/list").unwrap();
        prop_assert_eq!(outline.root().name_conflict(page), conflict(&decoded, page));
    }

    #[test]
    fn folding_is_symmetric(a in name(), b in name()) {
        prop_assert_eq!(fold_eq(&a, &b), fold_eq(&b, &a));
    }
}

#[test]
fn the_outline_judges_names_as_decoded() {
    let line = br#"{"jsonrpc":"2.0","i\u0064":1,"re\u017Fult":{},"method":"x"}"#;
    let outline = Outline::parse(line, 1).unwrap();
    assert_eq!(
        outline.root().name_conflict(&ENVELOPE),
        Some(Conflict::Variant {
            name: "reſult".into(),
            defined: "result"
        })
    );
    let honest = br#"{"jsonrpc":"2.0","i\u0064":1,"result":{"\u017F":1,"S":2}}"#;
    let outline = Outline::parse(honest, 2).unwrap();
    assert_eq!(outline.root().name_conflict(&ENVELOPE), None);
    let result = outline.root().get("result").unwrap();
    assert!(result.name_conflict(&[]).is_some(), "ſ and S are one name");
    assert_eq!(
        result.get("S").unwrap().name_conflict(&ENVELOPE),
        None,
        "not an object"
    );
}

#[test]
fn finds_a_twin_among_many_members() {
    // A hostile object of 100,000 members (sorted, not compared pair by pair).
    let mut line = String::from("{");
    for i in 0..100_000 {
        line.push_str(&format!("\"m{i}\":0,"));
    }
    line.push_str("\"M99999\":1}");
    let outline = Outline::parse(line.as_bytes(), 1).unwrap();
    assert_eq!(
        outline.root().name_conflict(&ENVELOPE),
        Some(Conflict::Twins {
            first: "m99999".into(),
            second: "M99999".into()
        })
    );
}

#[test]
fn a_conflict_quotes_long_names_as_short_excerpts() {
    // A hostile peer chooses the names: two of 100,000 characters must not put them whole into
    // a message (the guard's stderr, the refusal a client's model reads).
    let long = "\u{85}".repeat(100_000);
    let (first, second) = (format!("{long}a"), format!("{long}A"));
    let twins = conflict(&[&first, &second], &ENVELOPE).expect("twins");
    let shown = twins.to_string();
    assert!(shown.len() < 2000, "{} bytes", shown.len());
    assert!(
        shown.starts_with("the member names \"<U+0085><U+0085>"),
        "{shown:.80}"
    );
    assert!(shown.contains("... (200001 bytes)"), "{shown:.80}");
    assert!(shown.ends_with("are one name to a case-insensitive reader"));
    // Short names are shown whole, escaped.
    let variant = conflict(&["reſult"], &ENVELOPE).expect("variant");
    assert_eq!(
        variant.to_string(),
        "the member name \"re<U+017F>ult\" is read as result by a case-insensitive reader"
    );
}

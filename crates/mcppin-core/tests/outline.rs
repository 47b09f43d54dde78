//! The outline reader agrees with the relaxed reader: the same inputs accepted, the same error
//! for every refusal, and every recorded value with the span, shape and name the value tree
//! gives it (members of objects down to the levels asked for, elements of the top array only). Checked on hand-picked edge cases, on generated valid documents with one byte
//! changed, and on generated token soup (mostly invalid).

use mcppin_core::outline::{Node, Outline, Shape};
use mcppin_core::{Kind, MAX_DEPTH, Strictness, Value, parse_with};
use proptest::prelude::*;

/// Asserts that the outline and the relaxed reader agree on `input` at every level count.
fn agree(input: &[u8]) {
    let relaxed = parse_with(input, Strictness::Relaxed);
    for levels in [0, 1, 2, 3] {
        match (&relaxed, Outline::parse(input, levels)) {
            (Ok(value), Ok(outline)) => same(outline.root(), value, None, levels, 0),
            (Err(expected), Err(found)) => assert_eq!(&found, expected, "{input:?}"),
            (r, o) => panic!(
                "disagree on {input:?}: relaxed {r:?}, outline {:?}",
                o.err()
            ),
        }
    }
}

/// Asserts that `node` records `value` (standing under `name`) and, down to `levels`, its
/// members or elements in document order.
fn same(node: Node<'_, '_>, value: &Value, name: Option<&str>, levels: usize, depth: usize) {
    assert_eq!(node.span(), value.span());
    assert_eq!(node.name().as_deref(), name);
    let shape = match value.kind() {
        Kind::Object(_) => Shape::Object,
        Kind::Array(_) => Shape::Array,
        Kind::String(s) => {
            assert_eq!(node.as_str().as_deref(), Some(&**s));
            Shape::String
        }
        Kind::Number(_) => Shape::Number,
        Kind::Bool(true) => Shape::True,
        Kind::Bool(false) => Shape::False,
        Kind::Null => Shape::Null,
    };
    assert_eq!(node.shape(), shape);
    let children: Vec<Node<'_, '_>> = node.children().collect();
    // Members of objects are recorded down to `levels`; elements of arrays only at the top.
    let outlined = match value.kind() {
        Kind::Object(_) => depth < levels,
        Kind::Array(_) => depth == 0 && levels > 0,
        _ => false,
    };
    assert_eq!(node.is_outlined(), outlined);
    if !outlined {
        assert!(children.is_empty());
        return;
    }
    match value.kind() {
        Kind::Object(object) => {
            let mut members: Vec<_> = object.members().iter().collect();
            members.sort_by_key(|m| m.name_span().start);
            assert_eq!(children.len(), members.len());
            for (child, member) in children.iter().zip(members) {
                same(*child, &member.value, Some(&member.name), levels, depth + 1);
                assert!(child.is_named(&member.name));
                let repeats = object
                    .members()
                    .iter()
                    .filter(|m| m.name == member.name)
                    .count();
                assert_eq!(node.count(&member.name), repeats);
                let [picked] = node.pick([&*member.name]);
                assert_eq!(picked.count, repeats);
                assert_eq!(
                    picked.first.and_then(|n| n.name()).as_deref(),
                    Some(&*member.name)
                );
            }
        }
        Kind::Array(items) => {
            assert_eq!(children.len(), items.len());
            for (child, item) in children.iter().zip(items) {
                same(*child, item, None, levels, depth + 1);
            }
        }
        _ => assert!(children.is_empty()),
    }
}

#[test]
fn agrees_on_edge_cases() {
    let cases: &[&[u8]] = &[
        b"",
        b" ",
        b"{}",
        b"[]",
        b" { } ",
        b"{\"a\":1}",
        b"{\"a\":1,\"a\":2}",
        b"{\"a\":1,\"\\u0061\":2}",
        b"{\"\\u00e9\":1,\"e\\u0301\":2}",
        b"[\"\\ud800\",\"\\udc00x\",\"\\ud83d\\ude00\",\"\\ud800\\u0041\"]",
        b"[\"\\uFFFF\",\"\xEF\xBF\xBF\",\"\\uFDD0\"]",
        b"[\"\\ud800\\u00zz\"]",
        b"[\"\\u00zz\"]",
        b"[\"\\u12\"]",
        b"[\"\\",
        b"[\"\\u",
        b"\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"",
        b"\"\\a\"",
        b"\"\t\"",
        b"\"\x7f\"",
        b"\"\x00\"",
        b"[-0,0,-0.0e-0,1E+2,12.5e3,9007199254740993,1e400]",
        b"[01]",
        b"[-01]",
        b"[-]",
        b"[+1]",
        b"[.5]",
        b"[1.]",
        b"[1.e3]",
        b"[1e]",
        b"[1e+]",
        b"[true,false,null]",
        b"[tru]",
        b"[True]",
        b"[nulll]",
        b"[NaN]",
        b"['a']",
        b"[1,]",
        b"{\"a\":1,}",
        b"[,1]",
        b"{,}",
        b"{\"a\"}",
        b"{\"a\" 1}",
        b"{1:1}",
        b"{\"a\":}",
        b"[1 2]",
        b"[1]]",
        b"{}{}",
        b"{} // c",
        b"{} /* c */",
        b"{}\n",
        b"\xEF\xBB\xBF{}",
        b"\xff",
        b"\"\xc3\"",
        b"\"\xed\xa0\x80\"",
        b"[\"\xf0\x9f\x98\x80\"]",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"isError\":false}}",
    ];
    for case in cases {
        agree(case);
    }
}

#[test]
fn agrees_on_the_depth_limit() {
    for depth in [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 100_000] {
        let arrays = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        agree(arrays.as_bytes());
        let objects = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        agree(objects.as_bytes());
        let open = "[".repeat(depth);
        agree(open.as_bytes());
    }
}

/// A valid JSON document, written with chosen whitespace and escapes.
fn document() -> impl Strategy<Value = String> {
    let scalar = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("false".to_owned()),
        prop::sample::select(vec![
            "0",
            "-0",
            "1.5",
            "-2e-3",
            "1E+400",
            "12345678901234567890"
        ])
        .prop_map(str::to_owned),
        prop::sample::select(vec![
            "\"\"",
            "\"id\"",
            "\"\\u0069d\"",
            "\"\\ud800\"",
            "\"caf\u{e9}\"",
            "\"tab\\tquote\\\"\"",
            "\"\u{1F600}\"",
        ])
        .prop_map(str::to_owned),
    ];
    scalar.prop_recursive(5, 40, 5, |inner| {
        let name = prop::sample::select(vec![
            "\"id\"",
            "\"method\"",
            "\"\\u0069d\"",
            "\"params\"",
            "\"\"",
            "\"\\ud800\"",
        ]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5)
                .prop_map(|items| format!("[ {} ]", items.join(" ,"))),
            prop::collection::vec((name, inner), 0..5).prop_map(|members| {
                let members: Vec<String> =
                    members.iter().map(|(n, v)| format!("{n} :{v}")).collect();
                format!("{{{}}}", members.join(",\n"))
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn agrees_on_documents_with_one_byte_changed(
        doc in document(),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(b"{}[],:\"\\ 0-+.eE\x01\xffatn".to_vec()),
        change in any::<bool>(),
    ) {
        let mut bytes = doc.into_bytes();
        agree(&bytes);
        if change && !bytes.is_empty() {
            let i = at.index(bytes.len());
            bytes[i] = byte;
            agree(&bytes);
        }
    }

    #[test]
    fn agrees_on_token_soup(tokens in prop::collection::vec(prop::sample::select(vec![
        "{", "}", "[", "]", ",", ":", " ", "\"a\"", "\"\\u0061\"", "\"\\ud800\"", "\"\\x\"",
        "1", "-0", "01", "1.", "2e5", "true", "nul", "\"", "\\", "\u{1}", "\u{e9}",
    ]), 0..24)) {
        agree(tokens.concat().as_bytes());
    }
}

//! Every refusal rule of the strict reader (docs/json.md), each with the exact variant and
//! position, next to an input where the rule holds; and every undecidable number form.

use mcppin_core::number::Undecidable;
use mcppin_core::{
    JsonError as Error, MAX_DEPTH, Position, Strictness, canonicalize, digest, parse, parse_with,
};

fn pos(offset: usize, line: usize, column: usize) -> Position {
    Position {
        offset,
        line,
        column,
    }
}

/// Asserts that `input` is refused with exactly `expected`.
#[track_caller]
fn refuses(input: impl AsRef<[u8]>, expected: Error) {
    let input = input.as_ref();
    assert_eq!(
        parse(input).map(|_| ()),
        Err(expected),
        "input {:?}",
        String::from_utf8_lossy(input)
    );
}

#[track_caller]
fn accepts(input: impl AsRef<[u8]>) {
    let input = input.as_ref();
    if let Err(e) = parse(input) {
        panic!("refused {:?}: {e}", String::from_utf8_lossy(input));
    }
}

#[test]
fn refuses_invalid_utf8() {
    refuses(b"[\"a\xff\"]", Error::InvalidUtf8 { at: pos(3, 1, 4) });
    // An overlong encoding and a surrogate encoded in UTF-8 are invalid UTF-8 too.
    refuses(b"\"\xc0\xaf\"", Error::InvalidUtf8 { at: pos(1, 1, 2) });
    refuses(
        b"\n\"\xed\xa0\x80\"",
        Error::InvalidUtf8 { at: pos(2, 2, 2) },
    );
    accepts("[\"a\u{ff}\"]");
}

#[test]
fn refuses_a_leading_byte_order_mark() {
    refuses(b"\xEF\xBB\xBF{}", Error::ByteOrderMark { at: pos(0, 1, 1) });
    // Inside a string U+FEFF is an ordinary character.
    accepts("\"\u{FEFF}\"");
}

#[test]
fn refuses_an_empty_input() {
    refuses(b"", Error::Empty { at: pos(0, 1, 1) });
    refuses(b" \n\t", Error::Empty { at: pos(3, 2, 2) });
    accepts(" \n0\t");
}

#[test]
fn refuses_content_after_the_value() {
    refuses(b"{} x", Error::TrailingContent { at: pos(3, 1, 4) });
    refuses(b"1 2", Error::TrailingContent { at: pos(2, 1, 3) });
    refuses(b"[]]", Error::TrailingContent { at: pos(2, 1, 3) });
    refuses(b"truex", Error::TrailingContent { at: pos(4, 1, 5) });
    refuses(b"0x10", Error::TrailingContent { at: pos(1, 1, 2) });
    accepts(b"{} \r\n");
}

#[test]
fn refuses_a_value_cut_short() {
    refuses(b"[1", Error::UnexpectedEnd { at: pos(2, 1, 3) });
    refuses(b"\"abc", Error::UnexpectedEnd { at: pos(4, 1, 5) });
    refuses(b"{\"a\":", Error::UnexpectedEnd { at: pos(5, 1, 6) });
    refuses(b"{\"a\"", Error::UnexpectedEnd { at: pos(4, 1, 5) });
    refuses(b"\"\\", Error::UnexpectedEnd { at: pos(2, 1, 3) });
    refuses(b"[1,", Error::UnexpectedEnd { at: pos(3, 1, 4) });
}

#[test]
fn refuses_an_unexpected_character() {
    refuses(
        b"[}",
        Error::UnexpectedCharacter {
            found: '}',
            at: pos(1, 1, 2),
        },
    );
    refuses(
        "\u{e9}",
        Error::UnexpectedCharacter {
            found: '\u{e9}',
            at: pos(0, 1, 1),
        },
    );
    // Only space, tab, LF and CR are whitespace: not form feed, not NO-BREAK SPACE.
    refuses(
        b"[\x0c1]",
        Error::UnexpectedCharacter {
            found: '\u{c}',
            at: pos(1, 1, 2),
        },
    );
    refuses(
        "[\u{a0}1]",
        Error::UnexpectedCharacter {
            found: '\u{a0}',
            at: pos(1, 1, 2),
        },
    );
    refuses(
        b"{\"a\":}",
        Error::UnexpectedCharacter {
            found: '}',
            at: pos(5, 1, 6),
        },
    );
}

#[test]
fn refuses_words_other_than_true_false_null() {
    for (input, offset) in [
        (&b"NaN"[..], 0),
        (b"Infinity", 0),
        (b"[-Infinity]", 2),
        (b"True", 0),
        (b"nul", 0),
        (b"[tru]", 1),
        (b"undefined", 0),
        (b"{\"a\":fals}", 5),
    ] {
        let at = pos(offset, 1, offset + 1);
        if input.starts_with(b"[-") {
            refuses(input, Error::MissingIntegerDigits { at });
        } else {
            refuses(input, Error::InvalidLiteral { at });
        }
    }
    accepts(b"[true,false,null]");
}

#[test]
fn refuses_single_quotes() {
    refuses(b"['a']", Error::SingleQuote { at: pos(1, 1, 2) });
    refuses(b"{'a':1}", Error::SingleQuote { at: pos(1, 1, 2) });
    accepts(b"[\"'a'\"]");
}

#[test]
fn refuses_comments() {
    refuses(b"[1, // x\n 2]", Error::Comment { at: pos(4, 1, 5) });
    refuses(b"/* x */ {}", Error::Comment { at: pos(0, 1, 1) });
    refuses(b"{} // x", Error::Comment { at: pos(3, 1, 4) });
    refuses(b"[1 /* x */]", Error::Comment { at: pos(3, 1, 4) });
    refuses(b"{\"a\" /**/ : 1}", Error::Comment { at: pos(5, 1, 6) });
    accepts(b"[\"// not a comment /* */\"]");
}

#[test]
fn refuses_trailing_commas() {
    refuses(b"[1,]", Error::TrailingComma { at: pos(2, 1, 3) });
    refuses(b"[1 , \n ]", Error::TrailingComma { at: pos(3, 1, 4) });
    refuses(b"{\"a\":1,}", Error::TrailingComma { at: pos(6, 1, 7) });
    accepts(b"[1,2]");
}

#[test]
fn refuses_member_names_that_are_not_strings() {
    refuses(b"{1:2}", Error::ExpectedMemberName { at: pos(1, 1, 2) });
    refuses(b"{a:2}", Error::ExpectedMemberName { at: pos(1, 1, 2) });
    refuses(b"{,}", Error::ExpectedMemberName { at: pos(1, 1, 2) });
}

#[test]
fn refuses_a_member_without_a_colon() {
    refuses(b"{\"a\" 1}", Error::ExpectedColon { at: pos(5, 1, 6) });
    refuses(b"{\"a\"=1}", Error::ExpectedColon { at: pos(4, 1, 5) });
}

#[test]
fn refuses_missing_commas_and_unclosed_containers() {
    refuses(
        b"[1 2]",
        Error::ExpectedCommaOrClose {
            expected: ']',
            at: pos(3, 1, 4),
        },
    );
    refuses(
        b"{\"a\":1 \"b\":2}",
        Error::ExpectedCommaOrClose {
            expected: '}',
            at: pos(7, 1, 8),
        },
    );
    refuses(
        b"[1}",
        Error::ExpectedCommaOrClose {
            expected: ']',
            at: pos(2, 1, 3),
        },
    );
}

#[test]
fn refuses_leading_zeros() {
    refuses(b"01", Error::LeadingZero { at: pos(0, 1, 1) });
    refuses(b"[-012]", Error::LeadingZero { at: pos(2, 1, 3) });
    refuses(b"00.5", Error::LeadingZero { at: pos(0, 1, 1) });
    accepts(b"[0, -0, 0.01, 10, 0e5]");
}

#[test]
fn refuses_plus_signs() {
    refuses(b"+1", Error::PlusSign { at: pos(0, 1, 1) });
    refuses(b"[1,+2]", Error::PlusSign { at: pos(3, 1, 4) });
    accepts(b"[1e+2, 1E+2]");
}

#[test]
fn refuses_numbers_without_integer_digits() {
    refuses(b".5", Error::MissingIntegerDigits { at: pos(0, 1, 1) });
    refuses(b"-.5", Error::MissingIntegerDigits { at: pos(1, 1, 2) });
    refuses(b"-", Error::MissingIntegerDigits { at: pos(1, 1, 2) });
    refuses(b"[-]", Error::MissingIntegerDigits { at: pos(2, 1, 3) });
}

#[test]
fn refuses_numbers_without_fraction_digits() {
    refuses(b"1.", Error::MissingFractionDigits { at: pos(2, 1, 3) });
    refuses(b"[1.e5]", Error::MissingFractionDigits { at: pos(3, 1, 4) });
    accepts(b"1.0e5");
}

#[test]
fn refuses_numbers_without_exponent_digits() {
    refuses(b"1e", Error::MissingExponentDigits { at: pos(2, 1, 3) });
    refuses(b"1e+", Error::MissingExponentDigits { at: pos(3, 1, 4) });
    refuses(b"[1E-x]", Error::MissingExponentDigits { at: pos(4, 1, 5) });
}

#[test]
fn refuses_raw_control_characters_in_strings() {
    refuses(
        b"\"a\tb\"",
        Error::ControlCharacter {
            code: 9,
            at: pos(2, 1, 3),
        },
    );
    refuses(
        b"[\"\x00\"]",
        Error::ControlCharacter {
            code: 0,
            at: pos(2, 1, 3),
        },
    );
    refuses(
        b"{\"a\x1fb\":1}",
        Error::ControlCharacter {
            code: 0x1f,
            at: pos(3, 1, 4),
        },
    );
    // A newline inside a string is a control character; after an escape the slow path
    // checks it too.
    refuses(
        b"\"\\n\n\"",
        Error::ControlCharacter {
            code: 10,
            at: pos(3, 1, 4),
        },
    );
    // DEL and C1 controls are allowed by RFC 8259.
    accepts("\"\u{7f}\u{80}\u{9f}\\t\\u0000\"");
}

#[test]
fn refuses_invalid_escapes() {
    for (input, offset) in [
        (&b"\"\\x\""[..], 1),
        (b"\"\\'\"", 1),
        (b"\"\\U0041\"", 1),
        (b"\"ab\\u12g4\"", 3),
        (b"\"\\u00\"", 1),
        (b"\"\\u", 1),
        (b"\"\\a\"", 1),
    ] {
        refuses(
            input,
            Error::InvalidEscape {
                at: pos(offset, 1, offset + 1),
            },
        );
    }
    accepts(br#""\" \\ \/ \b \f \n \r \t \u00e9 \u00E9""#);
}

#[test]
fn refuses_escapes_of_unpaired_surrogates() {
    for (input, code, offset) in [
        (r#""\ud800""#, 0xD800, 1),
        (r#""\udc00x""#, 0xDC00, 1),
        (r#"["a\ud800\u0041"]"#, 0xD800, 3),
        (r#""\ud800\ud800""#, 0xD800, 1),
        (r#""\udbff\ue000""#, 0xDBFF, 1),
        (r#"{"\ud83d":1}"#, 0xD83D, 2),
        (r#""\ude00\ud83d""#, 0xDE00, 1),
        (r#""x\uDFFF""#, 0xDFFF, 2),
    ] {
        refuses(
            input,
            Error::LoneSurrogate {
                code,
                at: pos(offset, 1, offset + 1),
            },
        );
    }
    accepts(r#""\ud83d\ude00 \uD83D\uDE00 \ud800\udc00 \udbff\udffd""#);
}

#[test]
fn refuses_noncharacters_raw_and_escaped_in_every_plane() {
    let mut noncharacters: Vec<u32> = (0xFDD0..=0xFDEF).collect();
    for plane in 0..=0x10 {
        noncharacters.push(plane << 16 | 0xFFFE);
        noncharacters.push(plane << 16 | 0xFFFF);
    }
    assert_eq!(noncharacters.len(), 66);
    for code in noncharacters {
        let c = char::from_u32(code).expect("a scalar value");
        // Raw, in a value and in a member name, after an ASCII prefix.
        refuses(
            format!("[\"ab{c}\"]"),
            Error::Noncharacter {
                code,
                at: pos(4, 1, 5),
            },
        );
        refuses(
            format!("{{\"{c}\":1}}"),
            Error::Noncharacter {
                code,
                at: pos(2, 1, 3),
            },
        );
        // Raw after an escape (the slow path of the string reader).
        refuses(
            format!("\"\\n{c}\""),
            Error::Noncharacter {
                code,
                at: pos(3, 1, 4),
            },
        );
        // Escaped, as one \u escape or as a surrogate pair.
        let mut units = [0u16; 2];
        let escaped: String = c
            .encode_utf16(&mut units)
            .iter()
            .map(|u| format!("\\u{u:04x}"))
            .collect();
        refuses(
            format!("[1,\"{escaped}\"]"),
            Error::Noncharacter {
                code,
                at: pos(4, 1, 5),
            },
        );
        refuses(
            format!("\"{}\"", escaped.to_uppercase().replace("\\U", "\\u")),
            Error::Noncharacter {
                code,
                at: pos(1, 1, 2),
            },
        );
    }
    // Their neighbours are ordinary characters.
    for code in [
        0xFDCF, 0xFDF0, 0xFFFD, 0xFFEF, 0x1FFFD, 0x20000, 0xEFFFD, 0x10FFFD, 0xE000, 0xF000,
    ] {
        let c = char::from_u32(code).expect("a scalar value");
        accepts(format!("{{\"{c}\":\"{c}\\n{c}\"}}"));
    }
}

#[test]
fn refuses_repeated_member_names_after_decoding_escapes() {
    refuses(
        br#"{"a":1,"\u0061":2}"#,
        Error::DuplicateMember {
            name: "a".into(),
            at: pos(7, 1, 8),
        },
    );
    refuses(
        br#"{"b":1,"a":2,"b":3,"a":4}"#,
        Error::DuplicateMember {
            name: "b".into(),
            at: pos(13, 1, 14),
        },
    );
    // Line and column count characters, not bytes.
    refuses(
        "{\n  \"\u{e9}\": 1,\n  \"\\u00e9\": 2\n}",
        Error::DuplicateMember {
            name: "\u{e9}".into(),
            at: pos(15, 3, 3),
        },
    );
    refuses(
        "{\"\u{1F600}\":1,\"\\ud83d\\ude00\":2}",
        Error::DuplicateMember {
            name: "\u{1F600}".into(),
            at: pos(10, 1, 8),
        },
    );
    // The same name in different objects is fine, and so is "a" next to "A".
    accepts(br#"{"a":{"a":1},"b":[{"a":1},{"a":2}],"A":0}"#);
}

#[test]
fn refuses_member_names_equal_after_nfc() {
    refuses(
        r#"{"\u00e9":1,"e\u0301":2}"#,
        Error::NfcDuplicateMember {
            first: "\u{e9}".into(),
            second: "e\u{301}".into(),
            at: pos(12, 1, 13),
        },
    );
    // ANGSTROM SIGN normalises to A WITH RING ABOVE; both raw.
    refuses(
        "{\"\u{212B}\":1,\"\u{C5}\":2}",
        Error::NfcDuplicateMember {
            first: "\u{212B}".into(),
            second: "\u{C5}".into(),
            at: pos(9, 1, 8),
        },
    );
    // Neither name is in NFC, both normalise alike.
    refuses(
        "{\"A\u{30A}\":1,\"\u{212B}\":2}",
        Error::NfcDuplicateMember {
            first: "A\u{30A}".into(),
            second: "\u{212B}".into(),
            at: pos(9, 1, 9),
        },
    );
    // NFC is not case folding or compatibility mapping: these are distinct names.
    accepts("{\"\u{e9}\":1,\"\u{c9}\":2,\"\u{FB01}\":3,\"fi\":4}");
}

#[test]
fn reports_the_first_repeat_in_document_order() {
    // The NFC repeat of the first name comes before the exact repeat.
    refuses(
        "{\"\u{e9}\":1,\"x\":2,\"e\u{301}\":3,\"\u{e9}\":4}",
        Error::NfcDuplicateMember {
            first: "\u{e9}".into(),
            second: "e\u{301}".into(),
            at: pos(14, 1, 14),
        },
    );
    // A repeated name comes before a later grammar error in the same object.
    refuses(
        br#"{"a":1,"a":2,"b":[1,]}"#,
        Error::DuplicateMember {
            name: "a".into(),
            at: pos(7, 1, 8),
        },
    );
    // A grammar error before the repeat is reported first.
    refuses(
        br#"{"a":[1,],"a":2}"#,
        Error::TrailingComma { at: pos(7, 1, 8) },
    );
}

fn nested(depth: usize) -> Vec<u8> {
    let mut doc = vec![b'['; depth];
    doc.extend(std::iter::repeat_n(b']', depth));
    doc
}

#[test]
fn accepts_256_levels_and_refuses_257() {
    assert_eq!(MAX_DEPTH, 256);
    let deepest = parse(&nested(256)).expect("256 levels are allowed");
    assert_eq!(canonicalize(&deepest).expect("canonical"), nested(256));
    refuses(
        nested(257),
        Error::TooDeep {
            limit: 256,
            at: pos(256, 1, 257),
        },
    );
    // Objects count the same as arrays.
    let mut objects = "{\"a\":".repeat(128) + &"[".repeat(128);
    accepts(objects.clone() + "0" + &"]".repeat(128) + &"}".repeat(128));
    objects.push('[');
    refuses(
        objects,
        Error::TooDeep {
            limit: 256,
            at: pos(128 * 5 + 128, 1, 128 * 5 + 129),
        },
    );
}

#[test]
fn refuses_100000_levels_with_an_error_not_a_stack_overflow() {
    let doc = nested(100_000);
    for strictness in [Strictness::Strict, Strictness::Relaxed] {
        assert_eq!(
            parse_with(&doc, strictness).map(|_| ()),
            Err(Error::TooDeep {
                limit: 256,
                at: pos(256, 1, 257),
            })
        );
    }
    let objects = "{\"a\":".repeat(100_000);
    refuses(
        objects,
        Error::TooDeep {
            limit: 256,
            at: pos(256 * 5, 1, 256 * 5 + 1),
        },
    );
}

#[test]
fn relaxed_reading_keeps_grammar_and_depth_but_lets_content_rules_pass() {
    let relaxed = |s: &str| parse_with(s.as_bytes(), Strictness::Relaxed);
    for input in [
        r#"{"a":1,"a":2}"#,
        r#"{"\u00e9":1,"e\u0301":2}"#,
        r#"["\ud800", "\udc00x"]"#,
        "[\"\u{FFFE}\", \"\\ufdd0\"]",
    ] {
        assert!(parse(input.as_bytes()).is_err(), "strict refuses {input}");
        assert!(relaxed(input).is_ok(), "relaxed accepts {input}");
    }
    let v = relaxed(r#"{"a":1,"a":2}"#).expect("relaxed");
    let o = v.as_object().expect("object");
    assert_eq!(o.len(), 2, "both members kept");
    assert_eq!(
        v.get("a").and_then(|a| a.as_number()).map(|n| n.literal()),
        Some("1")
    );
    assert_eq!(
        relaxed("[1,]").map(|_| ()),
        Err(Error::TrailingComma { at: pos(2, 1, 3) })
    );
    assert_eq!(
        relaxed("\"\u{1}\"").map(|_| ()),
        Err(Error::ControlCharacter {
            code: 1,
            at: pos(1, 1, 2)
        })
    );
}

/// Reads a one-number document and returns its digest outcome.
fn digest_of(literal: &str) -> Result<mcppin_core::Digest, Error> {
    let value = parse(format!("[{literal}]").as_bytes()).expect("reads");
    digest(&value)
}

#[test]
fn undecidable_literals_read_but_have_no_digest() {
    for (literal, why) in [
        ("9007199254740993", Undecidable::BeyondSafeInteger),
        ("-9007199254740993", Undecidable::BeyondSafeInteger),
        ("9007199254740993.0", Undecidable::BeyondSafeInteger),
        ("9007199254740993.000e0", Undecidable::BeyondSafeInteger),
        ("9.007199254740993e15", Undecidable::BeyondSafeInteger),
        ("0.9007199254740993E16", Undecidable::BeyondSafeInteger),
        ("900719925474099300e-2", Undecidable::BeyondSafeInteger),
        ("9007199254740994", Undecidable::BeyondSafeInteger),
        ("18446744073709551616", Undecidable::BeyondSafeInteger),
        ("1e30", Undecidable::BeyondSafeInteger),
        ("1E30", Undecidable::BeyondSafeInteger),
        ("-1.5e300", Undecidable::BeyondSafeInteger),
        // A fraction above 2^53 canonicalises to an integer above 2^53 (found by
        // fuzzing the canonical round trip).
        ("9007199254740993.5", Undecidable::BeyondSafeInteger),
        (
            "44444444444444445444444.4400",
            Undecidable::BeyondSafeInteger,
        ),
        ("1e400", Undecidable::Overflow),
        ("-1e400", Undecidable::Overflow),
        ("1e-400", Undecidable::Underflow),
        ("-1e-400", Undecidable::Underflow),
        ("0.0000001e-330", Undecidable::Underflow),
    ] {
        let value = parse(format!("{{\"n\":{literal}}}").as_bytes()).expect("reads");
        let number = value.get("n").and_then(|n| n.as_number()).expect("number");
        assert_eq!(number.undecidable(), Some(why), "{literal}");
        assert_eq!(number.literal(), literal);
        assert_eq!(
            digest_of(literal),
            Err(Error::Undecidable {
                literals: vec![literal.to_owned()]
            }),
            "{literal}"
        );
    }
}

#[test]
fn decidable_literals_have_a_digest() {
    for literal in [
        "9007199254740992",
        "-9007199254740992",
        "9007199254740992.0",
        "9.007199254740992e15",
        "9007199254740992e0",
        "0.9007199254740992e16",
        "9007199254740991",
        "9007199254740992.4",
        "0.1",
        "0.30000000000000004",
        "1e-300",
        "4.9e-324",
        "0",
        "-0",
        "0e400",
        "0.000e-999",
        "1.7976931348623157e308",
    ] {
        // 1.7976931348623157e308 is integral and far above 2^53: undecidable.
        let expected_decidable = literal != "1.7976931348623157e308";
        assert_eq!(digest_of(literal).is_ok(), expected_decidable, "{literal}");
    }
    // Exactly 2^53 in every notation pins the same digest.
    let pinned = digest_of("9007199254740992").expect("decidable");
    for same in [
        "9007199254740992.0",
        "9.007199254740992e15",
        "90071992547409920e-1",
    ] {
        assert_eq!(digest_of(same), Ok(pinned), "{same}");
    }
}

#[test]
fn the_canonical_form_of_a_decidable_value_has_the_same_digest() {
    // Regression: `44444444444444445444444.4400` was decidable while its canonical
    // form `4.4444444444444445e+22` was not, so a stored approval could not be re-digested.
    for literal in [
        "9007199254740992.4",
        "-9007199254740991.5",
        "0.1",
        "5e-324",
        "1e-7",
        "123.456e-7",
    ] {
        let value = parse(format!("[{literal}]").as_bytes()).expect("reads");
        let pinned = digest(&value);
        let canonical = canonicalize(&value).expect("canonical");
        let again = parse(&canonical).expect("reads back");
        assert_eq!(digest(&again), pinned, "{literal}");
    }
}

#[test]
fn canonical_form_exists_for_every_undecidable_literal_but_overflow() {
    let v = parse(br#"[1E30, 9007199254740993, 1e-400, -1e-400]"#).expect("reads");
    assert_eq!(
        canonicalize(&v).expect("canonical"),
        b"[1e+30,9007199254740992,0,0]"
    );
    for overflow in ["1e400", "-1e400", "1e99999999999999999999999"] {
        let v = parse(format!("{{\"a\":[{overflow}]}}").as_bytes()).expect("reads");
        assert_eq!(
            canonicalize(&v),
            Err(Error::NonFiniteNumber {
                literal: overflow.to_owned()
            })
        );
    }
}

#[test]
fn digest_lists_every_undecidable_literal_in_document_order() {
    let v = parse(br#"{"z":1e400,"a":[9007199254740993,{"m":1e-400}],"k":1}"#).expect("reads");
    assert_eq!(
        digest(&v),
        Err(Error::Undecidable {
            literals: vec!["1e400".into(), "9007199254740993".into(), "1e-400".into()]
        })
    );
}

#[test]
fn every_reading_error_names_its_rule_and_position() {
    let cases: &[(&[u8], &str)] = &[
        (b"[\"\xff\"]", "invalid-utf8"),
        (b"\xEF\xBB\xBF1", "byte-order-mark"),
        (b"", "empty"),
        (b"1 1", "trailing-content"),
        (b"[", "unexpected-end"),
        (b"[}", "unexpected-character"),
        (b"nan", "invalid-literal"),
        (b"'a'", "single-quote"),
        (b"//", "comment"),
        (b"[1,]", "trailing-comma"),
        (b"{1:1}", "expected-member-name"),
        (b"{\"a\"}", "expected-colon"),
        (b"[1 1]", "expected-comma-or-close"),
        (b"01", "leading-zero"),
        (b"+1", "plus-sign"),
        (b".1", "missing-integer-digits"),
        (b"1.", "missing-fraction-digits"),
        (b"1e", "missing-exponent-digits"),
        (b"\"\t\"", "control-character"),
        (b"\"\\q\"", "invalid-escape"),
        (b"\"\\ud800\"", "lone-surrogate"),
        (b"\"\\uffff\"", "noncharacter"),
        (b"{\"a\":1,\"a\":1}", "duplicate-member"),
        (b"{\"\\u00e9\":1,\"e\\u0301\":1}", "nfc-duplicate-member"),
    ];
    for (input, rule) in cases {
        let err = parse(input).expect_err("refused");
        assert_eq!(err.rule(), *rule, "{err}");
        let at = err.position().expect("reading errors have a position");
        assert!(err.to_string().contains(&at.to_string()), "{err}");
    }
    let deep = parse(&nested(300)).expect_err("too deep");
    assert_eq!(deep.rule(), "too-deep");
    assert!(
        deep.to_string().contains("line 1, column 257 (byte 256)"),
        "{deep}"
    );
}

//! The real `mcppin` binary: canon and digest, exit codes, messages.

mod util;

use util::Dir;

#[test]
fn canon_prints_the_canonical_form() {
    let dir = Dir::new();
    dir.write("a.json", br#"{ "b": 1E30, "a": [1.0, "\u00e9"] }"#);
    let run = dir.mcppin(&["canon", "a.json"]);
    run.code(0);
    assert_eq!(run.stdout, "{\"a\":[1,\"é\"],\"b\":1e+30}");
    assert_eq!(run.stderr, "");
}

#[test]
fn digest_refuses_a_duplicate_member_with_exit_4() {
    let dir = Dir::new();
    dir.write("d.json", br#"{"a":1,"\u0061":2}"#);
    dir.mcppin(&["digest", "d.json"])
        .code(4)
        .stderr_has("d.json: duplicate member name \"a\" at line 1, column 8 (byte 7)");
}

fn testdata(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

#[test]
fn canon_reproduces_every_cyberphone_output_byte_for_byte() {
    let dir = Dir::new();
    let inputs = std::fs::read_dir(testdata("rfc8785-cyberphone/input")).expect("vectors");
    let mut seen = 0;
    for entry in inputs {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).expect("name");
        let expected = std::fs::read(testdata(&format!("rfc8785-cyberphone/output/{name}")))
            .expect("expected output");
        let path = path.to_str().expect("UTF-8 path");
        let run = dir.mcppin(&["canon", path]);
        run.code(0);
        assert_eq!(run.stdout.as_bytes(), expected, "{name}");
        assert_eq!(run.stderr, "");
        seen += 1;
    }
    assert_eq!(seen, 6);
}

#[test]
fn canon_reads_standard_input() {
    let dir = Dir::new();
    let run = dir.mcppin_stdin(&["canon", "-"], b"[1.50, {\"b\":0,\"a\":-0}]\n");
    run.code(0);
    assert_eq!(run.stdout, "[1.5,{\"a\":0,\"b\":0}]");
}

#[test]
fn digest_prints_the_sha256_of_the_canonical_form() {
    let dir = Dir::new();
    dir.write("a.json", br#"{"name":"t","n":1.0}"#);
    dir.write("b.json", b"{ \"n\" : 1,\n  \"name\" : \"t\" }\n");
    dir.write("c.json", br#"{"name":"t","n":1.5}"#);
    // SHA-256 of the bytes {"n":1,"name":"t"}, computed independently.
    let a = dir.mcppin(&["digest", "a.json"]);
    a.code(0);
    assert_eq!(a.stderr, "");
    assert_eq!(
        a.stdout,
        "sha256:c6a6a64d4a47b279a1f9a8b8aa043470308cc725a4da242ae84e48d8abbc1271\n"
    );
    let b = dir.mcppin(&["digest", "b.json"]);
    b.code(0);
    assert_eq!(
        a.stdout, b.stdout,
        "whitespace and member order do not move it"
    );
    let c = dir.mcppin(&["digest", "c.json"]);
    c.code(0);
    assert_ne!(a.stdout, c.stdout, "a changed number moves it");
}

/// Every strict-reading rule through the binary: exit 4, one line naming the file, the line,
/// column and byte, and the rule; nothing on stdout.
#[test]
fn every_strict_reading_rule_exits_4_naming_file_position_and_rule() {
    let cases: &[(&[u8], &str)] = &[
        (b"[\"\xff\"]", "invalid UTF-8 at line 1, column 3 (byte 2) [invalid-utf8]"),
        (b"\xEF\xBB\xBF{}", "byte-order mark at line 1, column 1 (byte 0) [byte-order-mark]"),
        (b" \n", "no JSON value in the input at line 2, column 1 (byte 2) [empty]"),
        (b"{}\n{}", "content after the JSON value at line 2, column 1 (byte 3) [trailing-content]"),
        (b"[1,\n", "unexpected end of input at line 2, column 1 (byte 4) [unexpected-end]"),
        (b"[}", "unexpected character '}' at line 1, column 2 (byte 1) [unexpected-character]"),
        (b"[NaN]", "invalid literal at line 1, column 2 (byte 1): only true, false and null are JSON words [invalid-literal]"),
        (b"['a']", "single-quoted string at line 1, column 2 (byte 1): JSON strings use double quotes [single-quote]"),
        (b"[1 // c\n]", "comment at line 1, column 4 (byte 3): JSON has no comments [comment]"),
        (b"[1,]", "trailing comma at line 1, column 3 (byte 2) [trailing-comma]"),
        (b"{1:1}", "object member name is not a string at line 1, column 2 (byte 1) [expected-member-name]"),
        (b"{\"a\" 1}", "expected ':' after the member name at line 1, column 6 (byte 5) [expected-colon]"),
        (b"[1 2]", "expected ',' or ']' at line 1, column 4 (byte 3) [expected-comma-or-close]"),
        (b"[01]", "number with a leading zero at line 1, column 2 (byte 1) [leading-zero]"),
        (b"[+1]", "number with a plus sign at line 1, column 2 (byte 1) [plus-sign]"),
        (b"[.5]", "number without integer digits at line 1, column 2 (byte 1) [missing-integer-digits]"),
        (b"[1.]", "number without digits after the decimal point at line 1, column 4 (byte 3) [missing-fraction-digits]"),
        (b"[1e]", "number without exponent digits at line 1, column 4 (byte 3) [missing-exponent-digits]"),
        (b"[\"\t\"]", "unescaped control character U+0009 in a string at line 1, column 3 (byte 2) [control-character]"),
        (b"[\"\\x\"]", "invalid escape sequence at line 1, column 3 (byte 2) [invalid-escape]"),
        (b"[\"\\ud800\"]", "escape yields an unpaired surrogate U+D800 at line 1, column 3 (byte 2) [lone-surrogate]"),
        (b"[\"\xf4\x8f\xbf\xbf\"]", "noncharacter U+10FFFF at line 1, column 3 (byte 2) [noncharacter]"),
        (b"[\"\\ud83f\\udffe\"]", "noncharacter U+1FFFE at line 1, column 3 (byte 2) [noncharacter]"),
        (b"{\"a\":1,\"\\u0061\":2}", "duplicate member name \"a\" at line 1, column 8 (byte 7) [duplicate-member]"),
        (b"{\"\\u00e9\":1,\"e\\u0301\":2}", "member names \"<U+00E9>\" and \"e<U+0301>\" are equal after NFC normalisation at line 1, column 13 (byte 12) [nfc-duplicate-member]"),
        (b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
         "nesting deeper than 256 arrays and objects at line 1, column 257 (byte 256) [too-deep]"),
    ];
    let dir = Dir::new();
    for (i, (input, message)) in cases.iter().enumerate() {
        let name = format!("bad{i}.json");
        dir.write(&name, input);
        for command in ["canon", "digest"] {
            let run = dir.mcppin(&[command, &name]);
            run.code(4);
            assert_eq!(run.stdout, "", "{command} {name}");
            assert_eq!(
                run.stderr,
                format!("mcppin: {name}: {message}\n"),
                "{command}"
            );
        }
    }
}

#[test]
fn a_100000_deep_document_exits_4_cleanly() {
    let dir = Dir::new();
    let mut doc = "[".repeat(100_000);
    doc.push_str(&"]".repeat(100_000));
    dir.write("deep.json", &doc);
    for command in ["canon", "digest"] {
        dir.mcppin(&[command, "deep.json"])
            .code(4)
            .stderr_has("deep.json: nesting deeper than 256 arrays and objects at line 1, column 257 (byte 256) [too-deep]");
    }
    let mut ok = "[".repeat(256);
    ok.push_str(&"]".repeat(256));
    dir.write("ok.json", &ok);
    let run = dir.mcppin(&["canon", "ok.json"]);
    run.code(0);
    assert_eq!(run.stdout, ok);
}

#[test]
fn digest_exits_3_listing_every_undecidable_literal() {
    let dir = Dir::new();
    for literal in [
        "9007199254740993",
        "-9007199254740993",
        "9007199254740993.0",
        "9.007199254740993e15",
        "1e30",
        "1E30",
        "1e400",
        "1e-400",
    ] {
        dir.write("u.json", format!("{{\"n\": {literal}, \"ok\": 1}}"));
        let run = dir.mcppin(&["digest", "u.json"]);
        run.code(3);
        assert_eq!(run.stdout, "");
        assert_eq!(
            run.stderr,
            format!("mcppin: u.json: no digest: 1 undecidable number literal(s): {literal}\n")
        );
    }
    dir.write(
        "many.json",
        b"[1e400, {\"a\": 9007199254740993}, 0.1, 1e-400]",
    );
    dir.mcppin(&["digest", "many.json"])
        .code(3)
        .stderr_has("no digest: 3 undecidable number literal(s): 1e400, 9007199254740993, 1e-400");
    dir.write(
        "safe.json",
        b"[9007199254740992, 9.007199254740992e15, 0.1, 1e-300]",
    );
    dir.mcppin(&["digest", "safe.json"])
        .code(0)
        .stdout_has("sha256:");
}

#[test]
fn canon_is_plain_rfc8785_and_exits_3_only_for_overflow() {
    let dir = Dir::new();
    dir.write("u.json", b"[1E30, 9007199254740993, 1e-400]");
    let run = dir.mcppin(&["canon", "u.json"]);
    run.code(0);
    assert_eq!(run.stdout, "[1e+30,9007199254740992,0]");
    assert_eq!(run.stderr, "");
    dir.write("o.json", b"{\"big\": -1e400}");
    let run = dir.mcppin(&["canon", "o.json"]);
    run.code(3);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "mcppin: o.json: number -1e400 has no canonical form: it overflows float64, at line 1, \
         column 9 (byte 8) [non-finite-number]\n"
    );
}

#[test]
fn messages_quote_a_short_excerpt_of_a_long_literal_or_name() {
    // A 10 MB number literal put 10 MB on stderr.
    let dir = Dir::new();
    let literal = format!("1{}", "0".repeat(10 << 20));
    dir.write("big.json", format!("{{\"a\": [true, {literal}]}}"));
    let run = dir.mcppin(&["canon", "big.json"]);
    run.code(3);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        format!(
            "mcppin: big.json: number 1{}... ({} bytes) has no canonical form: it overflows \
             float64, at line 1, column 14 (byte 13) [non-finite-number]\n",
            "0".repeat(63),
            literal.len()
        )
    );
    let run = dir.mcppin(&["digest", "big.json"]);
    run.code(3)
        .stderr_has(&format!("({} bytes)", literal.len()));
    assert!(run.stderr.len() < 200, "{} bytes", run.stderr.len());

    let name = "n".repeat(1 << 20);
    dir.write("dup.json", format!("{{\"{name}\": 1, \"{name}\": 2}}"));
    let run = dir.mcppin(&["canon", "dup.json"]);
    run.code(4);
    assert_eq!(
        run.stderr,
        format!(
            "mcppin: dup.json: duplicate member name \"{}\"... ({} bytes) at line 1, column {} \
             (byte {}) [duplicate-member]\n",
            "n".repeat(64),
            name.len(),
            name.len() + 9,
            name.len() + 8
        )
    );
}

#[test]
fn server_text_in_messages_is_escaped() {
    let dir = Dir::new();
    dir.write(
        "esc.json",
        "{\"x\\u001b[2J\u{202e}\":1,\"x\\u001b[2J\\u202e\":2}".as_bytes(),
    );
    let run = dir.mcppin(&["digest", "esc.json"]);
    run.code(4);
    assert_eq!(
        run.stderr,
        "mcppin: esc.json: duplicate member name \"x<U+001B>[2J<U+202E>\" at line 1, column 18 (byte 19) [duplicate-member]\n"
    );
    assert!(!run.stderr.contains('\u{1b}') && !run.stderr.contains('\u{202e}'));
}

#[test]
fn usage_errors_exit_2() {
    let dir = Dir::new();
    dir.write("a.json", b"{}");
    for args in [
        &[][..],
        &["canon"],
        &["digest"],
        &["canon", "a.json", "extra"],
        &["frobnicate", "a.json"],
        &["digest", "--no-such-flag", "a.json"],
    ] {
        let run = dir.mcppin(args);
        run.code(2);
        assert_eq!(run.stdout, "", "{args:?}");
        assert!(!run.stderr.is_empty(), "{args:?}");
    }
    dir.mcppin(&["--help"]).code(0).stdout_has("Exit codes");
}

#[test]
fn a_refused_word_of_the_command_line_is_shown_in_the_notation() {
    // A shell glob can put a checked-out file's name on the command line, and clap quotes the
    // word it refuses.
    let dir = Dir::new();
    dir.write("a.json", b"{}");
    let hostile = "x\u{1b}]0;pwn\u{7}\r\u{202e}\nerror: forged";
    let shown = "x<U+001B>]0;pwn<U+0007><U+000D><U+202E><U+000A>error: forged";
    for (args, said) in [
        (
            vec!["verify", "--format", hostile, "--lock", "a.json", "a.json"],
            format!("error: invalid value '{shown}' for '--format <FORMAT>'"),
        ),
        (
            vec!["canon", "a.json", hostile],
            format!("error: unexpected argument '{shown}' found"),
        ),
    ] {
        let run = dir.mcppin(&args);
        run.code(2).stderr_has(&said).shows_nothing_raw();
        assert!(!run.stderr.contains("\nerror: forged"), "{}", run.stderr);
    }
    // Printable, clap's text as it was.
    dir.mcppin(&["canon", "a.json", "extra"])
        .code(2)
        .stderr_has("error: unexpected argument 'extra' found\n\nUsage: mcppin canon <FILE>\n");
}

#[test]
fn a_missing_file_exits_4() {
    let dir = Dir::new();
    for command in ["canon", "digest"] {
        let run = dir.mcppin(&[command, "missing.json"]);
        run.code(4);
        assert_eq!(run.stdout, "");
        run.stderr_has("mcppin: cannot read missing.json");
    }
}

#[test]
fn messages_tell_the_notation_from_the_character_it_stands_for() {
    // On stderr too, the text `<U+200B>` and a zero-width space differ, and
    // a message is escaped once (the last pass does not escape the escapes again).
    let dir = Dir::new();
    dir.write("text.json", "{\"a<U+200B>\":1,\"a<U+200B>\":2}");
    dir.write("char.json", "{\"a\u{200b}\":1,\"a\\u200b\":2}");
    let text = dir.mcppin(&["digest", "text.json"]);
    text.code(4);
    assert_eq!(
        text.stderr,
        "mcppin: text.json: duplicate member name \"a<U+003C>U+200B>\" at line 1, column 16 \
         (byte 15) [duplicate-member]\n"
    );
    let char = dir.mcppin(&["digest", "char.json"]);
    char.code(4);
    assert_eq!(
        char.stderr,
        "mcppin: char.json: duplicate member name \"a<U+200B>\" at line 1, column 9 (byte 10) \
         [duplicate-member]\n"
    );
}

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

//! `mcppin log verify`: an admission log's chains checked through the binary, every exit code.
//! The logs are written by the library the guard writes with (`mcppin_core::log::Chain`);
//! the guard's own tests run a session and check its log with this binary.

mod util;

use mcppin_core::log::{Chain, Start};
use mcppin_core::{Digest, Object};
use mcppin_sign::SigningKey;
use util::Dir;

const AT: &str = "2026-08-01T09:30:00.000Z";

fn key(name: &str) -> String {
    format!("{}/../../testdata/keys/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn alice() -> SigningKey {
    SigningKey::from_pem(&std::fs::read_to_string(key("test-alice.pem")).unwrap()).unwrap()
}

/// A run of three tool admissions, its end signed by test-alice when `signed`.
fn run(id: &str, signed: bool) -> String {
    let alice = alice();
    let (mut chain, first) = Chain::start(&Start {
        run: id,
        server: "docs",
        observed_at: AT,
        guard: "mcppin-guard/0.1.0",
        transport: "stdio",
        mode: "refuse",
        lock_digest: Digest::of_bytes(b"lock"),
        approval_serial: 1,
        lock_key: None,
        log_key: signed.then(|| alice.public_key().fingerprint()),
    });
    let mut bytes = first;
    for (tool, decision) in [("search", "allow"), ("fetch", "deny"), ("search", "allow")] {
        let mut event = Object::new();
        event.insert("event", "tool_admission");
        event.insert("session_id", id);
        event.insert("tool", tool);
        event.insert("decision", decision);
        bytes.extend(chain.append(AT, event));
    }
    let stop = chain.stop(AT, 0);
    if signed {
        bytes.extend(mcppin_sign::log::sign(stop, &alice).unwrap());
    } else {
        bytes.extend(stop.into_line(None));
    }
    String::from_utf8(bytes).unwrap()
}

#[test]
fn an_intact_log_holds() {
    let dir = Dir::new();
    dir.write("admission.jsonl", run("4d2-1", false));
    dir.mcppin(&["log", "verify", "admission.jsonl"])
        .code(0)
        .stdout_has("PASS: 1 run, 5 lines: every chain holds (the ends were not checked");
    dir.write("signed.jsonl", run("4d2-2", true));
    let run = dir.mcppin(&[
        "log",
        "verify",
        "--pubkey",
        &key("test-alice.pem.pub"),
        "signed.jsonl",
    ]);
    run.code(0);
    insta::assert_snapshot!("log_verify_signed", run.stdout);
    // The single-dash spelling, and standard input.
    let text = std::fs::read(dir.path().join("signed.jsonl")).unwrap();
    dir.mcppin_stdin(
        &["log", "verify", "-pubkey", &key("test-alice.pem.pub"), "-"],
        &text,
    )
    .code(0);
}

#[test]
fn a_changed_log_exits_1_naming_the_first_break() {
    let dir = Dir::new();
    let text = run("4d2-1", true).replacen("\"deny\"", "\"allow\"", 1);
    dir.write("admission.jsonl", &text);
    let run = dir.mcppin(&[
        "log",
        "verify",
        "--pubkey",
        &key("test-alice.pem.pub"),
        "admission.jsonl",
    ]);
    run.code(1);
    insta::assert_snapshot!("log_verify_changed", run.stdout);
}

#[test]
fn a_forged_line_of_another_version_in_a_signed_run_exits_1() {
    // A line other readers take for version 2 (`2.0`), an allow of a tool, set into a run whose
    // end is signed: no guard wrote it, whatever version it claims.
    let dir = Dir::new();
    let text = run("4d2-1", true);
    let mut lines: Vec<&str> = text.lines().collect();
    let forged = format!(
        "{{\"decision\":\"allow\",\"event\":\"tool_admission\",\"prev\":\"{}\",\
         \"run\":\"4d2-1\",\"schema_version\":2.0,\"seq\":2,\"tool\":\"rm\"}}",
        Digest::of_bytes(b"x")
    );
    lines.insert(2, &forged);
    dir.write("admission.jsonl", lines.join("\n") + "\n");
    dir.mcppin(&[
        "log",
        "verify",
        "--pubkey",
        &key("test-alice.pem.pub"),
        "admission.jsonl",
    ])
    .code(1)
    .stdout_has("line 3: not a line of the admission log: \"schema_version\" is not");
}

#[test]
fn a_cut_last_line_exits_1() {
    let dir = Dir::new();
    let text = run("4d2-1", false);
    dir.write("admission.jsonl", &text[..text.len() - 5]);
    dir.mcppin(&["log", "verify", "admission.jsonl"])
        .code(1)
        .stdout_has("line 5: the last line has no newline");
}

#[test]
fn what_cannot_be_proven_exits_3() {
    let dir = Dir::new();
    dir.write("empty.jsonl", "");
    dir.mcppin(&["log", "verify", "empty.jsonl"])
        .code(3)
        .stdout_has("the log holds no line: nothing to verify")
        .stdout_has("PARTIAL: ");
    dir.write(
        "v1.jsonl",
        "{\"event\":\"tool_admission\",\"schema_version\":1,\"session_id\":\"a\"}\n",
    );
    dir.mcppin(&["log", "verify", "v1.jsonl"])
        .code(3)
        .stdout_has("1 line of schema_version 1 (the first here), written before the chain");
    // With --pubkey, an unsigned end and a missing one prove nothing about the tail.
    dir.write("unsigned.jsonl", run("4d2-1", false));
    dir.mcppin(&[
        "log",
        "verify",
        "--pubkey",
        &key("test-alice.pem.pub"),
        "unsigned.jsonl",
    ])
    .code(3)
    .stdout_has("line 5: run \"4d2-1\": the guard_stop is not signed");
    let signed = run("4d2-1", true);
    let without_end: String = signed.split_inclusive('\n').take(4).collect();
    dir.write("open.jsonl", without_end);
    dir.mcppin(&[
        "log",
        "verify",
        "--pubkey",
        &key("test-alice.pem.pub"),
        "open.jsonl",
    ])
    .code(3)
    .stdout_has("line 4: run \"4d2-1\": no guard_stop");
}

#[test]
fn a_wrong_command_line_exits_2() {
    let dir = Dir::new();
    dir.mcppin(&["log", "verify"]).code(2).stderr_has("<FILE>");
    dir.mcppin(&["log", "check", "x"]).code(2);
    dir.mcppin(&["log", "verify", "--key", "k", "x"]).code(2);
}

#[test]
fn an_unreadable_log_or_key_exits_4() {
    let dir = Dir::new();
    dir.mcppin(&["log", "verify", "missing.jsonl"])
        .code(4)
        .stderr_has("mcppin: cannot read missing.jsonl: ");
    dir.write("admission.jsonl", run("4d2-1", true));
    dir.mcppin(&[
        "log",
        "verify",
        "--pubkey",
        &key("test-alice.pem"),
        "admission.jsonl",
    ])
    .code(4)
    .stderr_has("public key ");
    dir.mcppin(&[
        "log",
        "verify",
        "--pubkey",
        "missing.pub",
        "admission.jsonl",
    ])
    .code(4)
    .stderr_has("cannot read public key missing.pub");
    // A directory is no log.
    std::fs::create_dir(dir.path().join("logs")).unwrap();
    dir.mcppin(&["log", "verify", "logs"])
        .code(4)
        .stderr_has("cannot read logs");
}

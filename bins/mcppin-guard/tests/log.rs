//! The admission log (`--log`): a session reconstructed from the log alone.

mod peers;
mod util;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use util::{Dir, Run, call, counter_surface, initialize, prompt, request};

const NOW: &str = "2026-08-01T09:30:00Z";

fn read_log(dir: &Dir) -> Vec<Value> {
    dir.read("admission.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("log line {l:?}: {e}")))
        .collect()
}

/// The digest of a tool as served, computed independently of the guard.
fn digest_of(tool: &Value) -> String {
    let value = mcppin_core::parse(tool.to_string().as_bytes()).unwrap();
    mcppin_core::digest(&value).unwrap().to_string()
}

#[test]
fn a_session_is_reconstructed_from_the_log_alone() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let input = [
        initialize(1),
        request(2, "tools/list", json!({})),
        prompt(20),
        call(3, "summarize"),
        call(4, "read_text_file"),
        call(5, "summarize"),
        request(6, "tools/list", json!({})),
        call(7, "summarize"),
        call(8, "read_text_file"),
        call(10, "not_approved"),
    ];
    let args = [
        "--lock",
        "mcp.lock.json",
        "--server",
        "fixture",
        "--mode",
        "quarantine",
        "--log",
        "admission.jsonl",
        "--now",
        NOW,
    ];
    dir.guard_interactive(&args, &["--mode", "counter"], &input)
        .code(0);
    let all = read_log(&dir);

    // One run: its start, its events, its stop. Every line names the server and carries the
    // (fixed) time; every event belongs to one session, the run's.
    assert_eq!(all[0]["event"], json!("guard_start"), "{all:#?}");
    assert_eq!(all[all.len() - 1]["event"], json!("guard_stop"), "{all:#?}");
    for line in &all {
        assert_eq!(line["schema_version"], json!(2));
        assert_eq!(line["run"], all[0]["run"]);
        assert_eq!(line["server"], json!("fixture"));
        assert_eq!(line["observed_at"], json!("2026-08-01T09:30:00.000Z"));
    }
    let log = &all[1..all.len() - 1];
    let sessions: BTreeSet<_> = log.iter().map(|l| l["session_id"].to_string()).collect();
    assert_eq!(sessions.len(), 1, "{log:#?}");
    assert_eq!(log[0]["session_id"], all[0]["run"]);

    // Which tool definitions the session was shown, per reading of the list.
    let mut shown: BTreeMap<u64, BTreeSet<(String, String)>> = BTreeMap::new();
    let mut withheld: BTreeMap<u64, Vec<(String, String, String)>> = BTreeMap::new();
    for line in log.iter().filter(|l| {
        l["event"] == json!("tool_admission") && l["request_method"] == json!("tools/list")
    }) {
        let generation = line["catalog_generation"].as_u64().unwrap();
        let tool = line["tool"].as_str().unwrap().to_owned();
        let observed = line["observed_digest"].as_str().unwrap().to_owned();
        // In quarantine mode the client is shown exactly the allowed tools.
        assert_eq!(line["shown"], json!(line["decision"] == json!("allow")));
        if line["decision"] == json!("allow") {
            assert_eq!(line["approved_digest"], line["observed_digest"]);
            shown
                .entry(generation)
                .or_default()
                .insert((tool, observed));
        } else {
            let reason = line["reason"].as_str().unwrap().to_owned();
            withheld
                .entry(generation)
                .or_default()
                .push((tool, observed, reason));
        }
    }
    let honest: BTreeSet<_> = counter_surface()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), digest_of(t)))
        .collect();
    assert_eq!(
        shown[&1], honest,
        "the first reading showed the approved surface"
    );
    let mut second = honest.clone();
    second.retain(|(name, _)| name != "summarize");
    assert_eq!(shown[&2], second, "the second reading withheld summarize");
    assert_eq!(
        withheld[&2],
        [(
            "summarize".to_owned(),
            digest_of(&mcppin_fixture::summarize_tool(true)),
            "tool-changed".to_owned()
        )],
        "the rewritten definition is identified by its digest"
    );
    assert!(!withheld.contains_key(&1));

    // Which calls were allowed or denied.
    let calls: Vec<(u64, String, String)> = log
        .iter()
        .filter(|l| {
            l["event"] == json!("tool_admission") && l["request_method"] == json!("tools/call")
        })
        .map(|l| {
            (
                l["request_id"].as_u64().unwrap(),
                l["tool"].as_str().unwrap().to_owned(),
                format!("{}/{}", l["decision"].as_str().unwrap(), l["reason"]),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            (3, "summarize".into(), "allow/null".into()),
            (4, "read_text_file".into(), "allow/null".into()),
            (5, "summarize".into(), "allow/null".into()),
            (7, "summarize".into(), "deny/\"tool-quarantined\"".into()),
            (8, "read_text_file".into(), "allow/null".into()),
            (10, "not_approved".into(), "deny/\"tool-added\"".into()),
        ]
    );

    // How the allowed ones ended, joined by request id.
    let completions: BTreeMap<u64, String> = log
        .iter()
        .filter(|l| l["event"] == json!("tool_completion"))
        .map(|l| {
            assert_eq!(l["duration_ms"], json!(0), "a fixed clock measures nothing");
            (
                l["request_id"].as_u64().unwrap(),
                l["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let allowed: BTreeMap<u64, String> = [3, 4, 5, 8]
        .into_iter()
        .map(|id| (id, "result".to_owned()))
        .collect();
    assert_eq!(completions, allowed, "denied calls have no completion");

    // The handshake and the prompt were pinned for the session.
    let prompts: Vec<_> = log
        .iter()
        .filter(|l| l["event"] == json!("answer_admission"))
        .map(|l| {
            (
                l["method"].clone(),
                l["name"].clone(),
                l["decision"].clone(),
            )
        })
        .collect();
    assert_eq!(
        prompts,
        [
            (json!("initialize"), Value::Null, json!("allow")),
            (json!("prompts/get"), json!("summarize"), json!("allow"))
        ]
    );
}

#[test]
fn completions_record_tool_errors_protocol_errors_and_missing_answers() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let script = r#"read a; read b; read c; printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}' '{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}'; exit 0"#;
    let args = [
        "--lock",
        "mcp.lock.json",
        "--server",
        "fixture",
        "--log",
        "admission.jsonl",
        "--now",
        NOW,
        "--",
        "/bin/sh",
        "-c",
        script,
    ]
    .map(String::from);
    let input = [
        call(1, "summarize"),
        call(2, "summarize"),
        call(3, "summarize"),
    ];
    let run = dir.run_guard_held(&args, &input);
    run.code(3)
        .stderr_has("the server closed its output while the session was open");
    let outcomes: BTreeMap<u64, String> = read_log(&dir)
        .iter()
        .filter(|l| l["event"] == json!("tool_completion"))
        .map(|l| {
            (
                l["request_id"].as_u64().unwrap(),
                l["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            (1, "is_error".to_owned()),
            (2, "protocol_error".to_owned()),
            (3, "no_answer".to_owned())
        ]
        .into_iter()
        .collect()
    );
}

#[test]
fn a_refused_list_shows_nothing_in_the_log() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let args = [
        "--lock",
        "mcp.lock.json",
        "--server",
        "fixture",
        "--log",
        "admission.jsonl",
        "--now",
        NOW,
    ];
    let input = [
        initialize(1),
        request(2, "tools/list", json!({})),
        call(3, "summarize"),
        call(4, "summarize"),
        call(5, "summarize"),
        request(6, "tools/list", json!({})),
    ];
    dir.guard_interactive(&args, &["--mode", "counter"], &input)
        .code(1);
    let listed: Vec<(u64, String, bool, String)> = read_log(&dir)
        .iter()
        .filter(|l| {
            l["event"] == json!("tool_admission") && l["request_method"] == json!("tools/list")
        })
        .map(|l| {
            (
                l["catalog_generation"].as_u64().unwrap(),
                l["tool"].as_str().unwrap().to_owned(),
                l["shown"].as_bool().unwrap(),
                l["decision"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let first: Vec<_> = listed.iter().filter(|l| l.0 == 1).collect();
    assert!(!first.is_empty() && first.iter().all(|l| l.2), "{listed:?}");
    let second: Vec<_> = listed.iter().filter(|l| l.0 == 2).collect();
    // The refused reading: approved tools were allowed one by one, yet none reached the client.
    assert!(second.iter().any(|l| l.3 == "allow"), "{listed:?}");
    assert!(second.iter().all(|l| !l.2), "{listed:?}");
}

// The log as a hash chain (docs/formats.md, "Admission log"): written by the guard, checked by
// `mcppin log verify`, the library's reader, through the binaries.

/// The fingerprint of testdata/keys/test-alice.pem.
const ALICE: &str = "sha256:07a181dfdaf4ef6c373c776f25b8e70436301a8dd200ff5fef7c006fd17363ad";

/// A test key of testdata/keys: the private half for `--log-key`, or its `.pub`.
fn key(name: &str) -> String {
    format!("{}/../../testdata/keys/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A session of the counter fixture (quarantine mode) logged to `admission.jsonl`, its run's
/// end signed with test-alice's key.
fn signed_session(dir: &Dir) -> Run {
    let alice = key("test-alice.pem");
    let args = [
        "--lock",
        "mcp.lock.json",
        "--server",
        "fixture",
        "--mode",
        "quarantine",
        "--log",
        "admission.jsonl",
        "--log-key",
        &alice,
        "--now",
        NOW,
    ];
    let input = [
        initialize(1),
        request(2, "tools/list", json!({})),
        call(3, "summarize"),
        call(4, "read_text_file"),
        call(5, "summarize"),
        request(6, "tools/list", json!({})),
        call(7, "summarize"),
    ];
    dir.guard_interactive(&args, &["--mode", "counter"], &input)
}

/// `mcppin log verify` (built beside the guard) on `file` with `args`.
fn log_verify(dir: &Dir, file: &str, args: &[&str]) -> Run {
    let mcppin = peers::sibling("mcppin");
    mcppin_testkit::run(
        std::process::Command::new(mcppin)
            .args(["log", "verify"])
            .args(args)
            .arg(file)
            .current_dir(dir.path())
            .env_clear(),
        Vec::new(),
        util::ClientEnd::Closes,
    )
}

#[test]
fn a_session_s_log_is_a_chain_that_mcppin_log_verify_accepts() {
    let dir = Dir::new();
    let lock = dir.lock(&counter_surface());
    signed_session(&dir).code(0);
    let lines = read_log(&dir);

    // The start names the lockfile by the digest its signature would name, and the key that
    // signs the end; the stop records the exit code, signed.
    let start = &lines[0];
    let lock_digest = mcppin_sign::lock_digest(&std::fs::read(&lock).unwrap()).unwrap();
    assert_eq!(start["event"], json!("guard_start"));
    assert_eq!(start["lock_digest"], json!(lock_digest.to_string()));
    assert_eq!(start["approval_serial"], json!(1));
    assert_eq!(
        start["lock_key"],
        Value::Null,
        "no --pubkey: the lock's signature was not checked"
    );
    assert_eq!(start["transport"], json!("stdio"));
    assert_eq!(start["mode"], json!("quarantine"));
    assert_eq!(start["seq"], json!(0));
    assert_eq!(start["log_key"], json!(ALICE));
    let stop = &lines[lines.len() - 1];
    assert_eq!(stop["event"], json!("guard_stop"));
    assert_eq!(stop["exit_code"], json!(0));
    assert_eq!(stop["log_key"], json!(ALICE));
    assert!(stop["signature"].is_string());
    // Each line's seq follows the one before, and the chain reads back whole.
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line["seq"], json!(i), "{line}");
    }
    let report = mcppin_core::log::verify(dir.read("admission.jsonl").as_bytes());
    assert_eq!(report.findings, [], "{}", report.to_text());

    log_verify(&dir, "admission.jsonl", &[])
        .code(0)
        .stdout_has("PASS: 1 run")
        .stdout_has("stopped (exit 0), signed by sha256:");
    log_verify(
        &dir,
        "admission.jsonl",
        &["--pubkey", &key("test-alice.pem.pub")],
    )
    .code(0)
    .stdout_has("(verified)")
    .stdout_has("every run's end is signed by a given key");
    // Signed, but by a key not given: the end is not proven.
    log_verify(
        &dir,
        "admission.jsonl",
        &["--pubkey", &key("test-bob.pem.pub")],
    )
    .code(3)
    .stdout_has("not by a given key");
}

#[test]
fn a_tampered_copy_of_a_session_s_log_is_refused() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    signed_session(&dir).code(0);
    let text = dir.read("admission.jsonl");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let alice = key("test-alice.pem.pub");
    let check = |name: &str, tampered: String, args: &[&str]| {
        dir.write(name, tampered);
        log_verify(&dir, name, args)
    };

    // A denied call rewritten as allowed: the chain breaks at the line after it.
    let denied = lines
        .iter()
        .position(|l| l.contains("\"decision\":\"deny\""))
        .expect("a denied call");
    let mut flipped = lines.clone();
    let allowed = flipped[denied].replace("\"decision\":\"deny\"", "\"decision\":\"alow\"");
    flipped[denied] = &allowed;
    check("flipped.jsonl", flipped.concat(), &[])
        .code(1)
        .stdout_has(&format!("line {}: run ", denied + 2))
        .stdout_has("the chain breaks");

    // A line dropped from the middle.
    let mut dropped = lines.clone();
    dropped.remove(3);
    check("dropped.jsonl", dropped.concat(), &[])
        .code(1)
        .stdout_has("line 4: run ")
        .stdout_has("1 line of the run is missing here");

    // Two lines swapped.
    let mut swapped = lines.clone();
    swapped.swap(2, 3);
    check("swapped.jsonl", swapped.concat(), &[])
        .code(1)
        .stdout_has("out of order");

    // The last line cut inside.
    check("cut.jsonl", text[..text.len() - 20].to_owned(), &[])
        .code(1)
        .stdout_has("the last line has no newline");

    // The tail cut after a whole line: the chain alone cannot tell, the signed end can.
    let tail_cut = lines[..lines.len() - 2].concat();
    check("tail.jsonl", tail_cut.clone(), &[])
        .code(0)
        .stdout_has("not stopped");
    check("tail.jsonl", tail_cut, &["--pubkey", &alice])
        .code(3)
        .stdout_has("no guard_stop: nothing proves where the run ended");

    // The end's signature altered (one base64 character), or the exit code it signs.
    let stop = lines[lines.len() - 1];
    let at = stop.find("\"signature\":\"").unwrap() + 13;
    let mut forged = stop.to_owned();
    let swapped_char = if &stop[at..=at] == "A" { "B" } else { "A" };
    forged.replace_range(at..=at, swapped_char);
    let mut with_forged = lines.clone();
    let last = with_forged.len() - 1;
    with_forged[last] = &forged;
    check("forged.jsonl", with_forged.concat(), &["--pubkey", &alice])
        .code(1)
        .stdout_has("does not verify with key");
    let exit_changed = stop.replace("\"exit_code\":0", "\"exit_code\":1");
    with_forged[last] = &exit_changed;
    check("exit.jsonl", with_forged.concat(), &["--pubkey", &alice])
        .code(1)
        .stdout_has("does not verify with key");

    // Two logs spliced: this run's head, another run's tail.
    let other = Dir::new();
    other.lock(&counter_surface());
    signed_session(&other).code(0);
    let other_text = other.read("admission.jsonl");
    let other_lines: Vec<&str> = other_text.split_inclusive('\n').collect();
    let mut spliced = lines[..4].concat();
    spliced.push_str(&other_lines[4..].concat());
    check("spliced.jsonl", spliced, &[])
        .code(1)
        .stdout_has("its beginning is missing");
}

#[test]
fn runs_appended_to_one_log_are_each_a_chain() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    signed_session(&dir).code(0);
    signed_session(&dir).code(0);
    let report = mcppin_core::log::verify(dir.read("admission.jsonl").as_bytes());
    assert_eq!(report.findings, [], "{}", report.to_text());
    assert_eq!(report.runs.len(), 2);
    assert_ne!(report.runs[0].id, report.runs[1].id);
    log_verify(
        &dir,
        "admission.jsonl",
        &["--pubkey", &key("test-alice.pem.pub")],
    )
    .code(0)
    .stdout_has("PASS: 2 runs");
}

#[test]
fn the_end_of_a_run_records_how_the_guard_stopped() {
    // Refused drift: exit 1.
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let args = [
        "--lock",
        "mcp.lock.json",
        "--server",
        "fixture",
        "--log",
        "admission.jsonl",
        "--now",
        NOW,
    ];
    let input = [
        initialize(1),
        request(2, "tools/list", json!({})),
        call(3, "summarize"),
        call(4, "summarize"),
        call(5, "summarize"),
        request(6, "tools/list", json!({})),
    ];
    dir.guard_interactive(&args, &["--mode", "counter"], &input)
        .code(1);
    let lines = read_log(&dir);
    let stop = &lines[lines.len() - 1];
    assert_eq!(stop["event"], json!("guard_stop"));
    assert_eq!(stop["exit_code"], json!(1));
    assert_eq!(stop["log_key"], Value::Null);
    assert!(stop.get("signature").is_none());
    assert_eq!(
        mcppin_core::log::verify(dir.read("admission.jsonl").as_bytes()).exit_code(),
        0
    );
}

#[test]
fn a_guard_stopped_by_a_signal_ends_its_run_with_128_plus_the_signal() {
    use std::process::{Command, Stdio};
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let alice = key("test-alice.pem");
    let mut guard = Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
        .args(["--lock", "mcp.lock.json", "--server", "fixture", "--log"])
        .args(["admission.jsonl", "--log-key", &alice, "--now", NOW, "--"])
        .args(["/bin/sh", "-c", "echo $$ > server.pid; exec sleep 60"])
        .current_dir(dir.path())
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn mcppin-guard");
    // Held open: the guard must see the signal, not its client leaving.
    let client = guard.stdin.take();
    let _ = util::wait_for_pid(dir.path(), "server.pid");
    let status =
        mcppin_testkit::status(Command::new("kill").args(["-TERM", &guard.id().to_string()]))
            .expect("kill");
    assert!(status.success());
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = guard.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > util::HANG {
            let _ = guard.kill();
            panic!("the guard did not stop within {:?} of SIGTERM", util::HANG);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    drop(client);
    assert_eq!(status.code(), Some(128 + 15));
    let lines = read_log(&dir);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[1]["event"], json!("guard_stop"));
    assert_eq!(lines[1]["exit_code"], json!(143));
    log_verify(
        &dir,
        "admission.jsonl",
        &["--pubkey", &key("test-alice.pem.pub")],
    )
    .code(0)
    .stdout_has("stopped (exit 143)");
}

#[test]
fn a_log_key_that_cannot_sign_is_refused_before_the_server_starts() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let run = |log_key: &[&str], log: bool| {
        let mut args: Vec<String> = ["--lock", "mcp.lock.json", "--server", "fixture"]
            .map(String::from)
            .to_vec();
        if log {
            args.extend(["--log", "admission.jsonl"].map(String::from));
        }
        args.extend(log_key.iter().map(|s| (*s).to_owned()));
        args.extend(["--", "/bin/sh", "-c", "echo started > started"].map(String::from));
        dir.run_guard_bounded(&args, Vec::new())
    };
    let encrypted = key("test-alice-scrypt.pem");
    run(&["--log-key", &encrypted], true)
        .code(4)
        .stderr_has("an encrypted key: the guard reads no passphrase");
    let public = key("test-alice.pem.pub");
    run(&["--log-key", &public], true)
        .code(4)
        .stderr_has("--log-key ");
    run(&["--log-key", "missing.pem"], true)
        .code(4)
        .stderr_has("--log-key missing.pem: cannot read it");
    run(&["--log-key", &key("test-alice.pem")], false)
        .code(2)
        .stderr_has("--log");
    assert_eq!(dir.read("started"), "", "the server never started");
    assert_eq!(dir.read("admission.jsonl"), "", "nothing was logged");
}

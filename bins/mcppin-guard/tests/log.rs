//! The admission log (`--log`): a session reconstructed from the log alone.

mod util;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use util::{Dir, call, counter_surface, initialize, prompt, request};

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
    let log = read_log(&dir);

    // Every line belongs to one session, one server, and carries the (fixed) time.
    let sessions: BTreeSet<_> = log.iter().map(|l| l["session_id"].to_string()).collect();
    assert_eq!(sessions.len(), 1, "{log:#?}");
    for line in &log {
        assert_eq!(line["schema_version"], json!(1));
        assert_eq!(line["server"], json!("fixture"));
        assert_eq!(line["observed_at"], json!("2026-08-01T09:30:00.000Z"));
    }

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

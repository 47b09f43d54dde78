//! The fixture's honest answers validate against the official MCP schema of their revision
//! (testdata/mcp-schema), so the fixture is known to speak the protocol it claims.

use std::path::PathBuf;

use mcppin_fixture::{Era, Mode, Outcome, Script, serve};
use serde_json::{Value, json};

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const MODERN: &str = "2026-07-28";

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/mcp-schema")
}

/// A validator for one definition of one revision's schema.
fn validator(revision: &str, definition: &str) -> jsonschema::Validator {
    let path = schema_dir().join(revision).join("schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut schema: Value = serde_json::from_str(&text).unwrap();
    let defs = if schema.get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    };
    assert!(
        schema[defs].get(definition).is_some(),
        "{revision} has no {definition}"
    );
    schema["$ref"] = json!(format!("#/{defs}/{definition}"));
    jsonschema::validator_for(&schema).unwrap()
}

#[track_caller]
fn assert_valid(revision: &str, definition: &str, instance: &Value) {
    let v = validator(revision, definition);
    let errors: Vec<String> = v
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{revision} {definition} refuses {instance:#}:\n{}",
        errors.join("\n")
    );
}

/// Runs the fixture on `requests` and returns the lines it wrote, parsed.
fn exchange(script: &Script, requests: &[Value]) -> Vec<Value> {
    let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
    let mut out = Vec::new();
    let outcome = serve(script, input.as_bytes(), &mut out, std::io::sink());
    assert_eq!(outcome, Outcome::Exit(0));
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

fn legacy_session(revision: &str, script: &Script) -> Vec<Value> {
    exchange(
        script,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": revision, "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": ""}}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"cursor": "page-2"}}),
        ],
    )
}

#[test]
fn legacy_answers_validate_against_their_revision() {
    for revision in LEGACY {
        for modes in [
            vec![Mode::Honest],
            vec![Mode::Paginated],
            vec![Mode::RugPull],
        ] {
            let script = Script {
                modes: modes.into_iter().collect(),
                era: Era::Legacy,
                ..Script::default()
            };
            let answers = legacy_session(revision, &script);
            assert_eq!(answers.len(), 4, "{answers:#?}");
            assert_eq!(answers[0]["result"]["protocolVersion"], revision);
            assert_valid(revision, "InitializeResult", &answers[0]["result"]);
            for answer in &answers {
                assert_valid(revision, "JSONRPCMessage", answer);
            }
            for answer in &answers[1..] {
                if answer.get("result").is_some() {
                    assert_valid(revision, "ListToolsResult", &answer["result"]);
                }
            }
        }
    }
}

#[test]
fn modern_answers_validate_against_2026_07_28() {
    for modes in [vec![Mode::Honest], vec![Mode::Paginated]] {
        let script = Script {
            modes: modes.into_iter().collect(),
            era: Era::Modern,
            ..Script::default()
        };
        let answers = exchange(
            &script,
            &[
                json!({"jsonrpc": "2.0", "id": "d", "method": "server/discover",
                       "params": {"_meta": meta()}}),
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
                       "params": {"_meta": meta()}}),
                json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
                       "params": {"_meta": meta(), "cursor": ""}}),
            ],
        );
        assert_eq!(answers.len(), 3);
        for answer in &answers {
            assert_valid(MODERN, "JSONRPCMessage", answer);
        }
        assert_valid(MODERN, "DiscoverResult", &answers[0]["result"]);
        assert_valid(MODERN, "ListToolsResult", &answers[1]["result"]);
        assert_valid(MODERN, "ListToolsResult", &answers[2]["result"]);
    }
}

#[test]
fn the_official_example_validates_and_a_broken_tool_does_not() {
    // The check can fail: the specification's own example passes, a tool without its
    // inputSchema does not.
    let example_path = schema_dir()
        .join(MODERN)
        .join("examples/ListToolsResult/tools-list-with-cursor-and-ttl.json");
    let example: Value =
        serde_json::from_str(&std::fs::read_to_string(example_path).unwrap()).unwrap();
    assert_valid(MODERN, "ListToolsResult", &example);
    let broken = json!({"tools": [{"name": "x"}]});
    for revision in LEGACY.iter().chain([&MODERN]) {
        assert!(
            !validator(revision, "ListToolsResult").is_valid(&broken),
            "{revision}"
        );
    }
}

#[test]
fn refuses_the_era_it_does_not_speak() {
    let legacy = Script {
        era: Era::Legacy,
        ..Script::default()
    };
    let answers = exchange(
        &legacy,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta()}}),
        ],
    );
    assert_eq!(answers[0]["error"]["code"], -32601);
    assert_valid("2025-11-25", "JSONRPCMessage", &answers[0]);
    let modern = Script {
        era: Era::Modern,
        ..Script::default()
    };
    let answers = legacy_session("2025-11-25", &modern);
    assert_eq!(answers[0]["error"]["code"], -32601);
    assert_valid(MODERN, "JSONRPCMessage", &answers[0]);
}

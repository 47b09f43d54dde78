//! The guard on the real binary, over a lock that records optional lists the server did not
//! serve (`-32601 Method not found`, docs/formats.md `not_served`): the same answers pass
//! byte for byte, and a server that now serves such a list has it refused, or withheld in
//! quarantine, as any unapproved item.

mod util;

use mcppin_core::lockfile::Lockfile;
use mcppin_core::manifest::Manifest;
use serde_json::json;
use util::{Dir, Expect, initialize, initialized, request};

/// Writes `mcp.lock.json` approving the fixture as `--mode no-optional-lists` serves it: its
/// tools, no prompts, no resource templates, both lists recorded as not served.
fn lock_not_served(dir: &Dir) {
    let manifest = json!({"schema_version": 4, "complete": true, "servers": [{
        "id": "fixture",
        "reported_name": mcppin_fixture::SERVER_NAME,
        "instructions": "Files of the demo workspace. Use read_text_file to read one.",
        "tools": mcppin_fixture::surface(false),
        "prompts": [],
        "resource_templates": [],
        "not_served": ["prompts", "resource_templates"]}]});
    let manifest = Manifest::parse(manifest.to_string().as_bytes()).expect("manifest");
    let lock = Lockfile::approve(None, &manifest, &[]).expect("approve");
    assert_eq!(lock.schema_version(), 4);
    dir.write("mcp.lock.json", lock.to_bytes());
}

fn args(mode: &str) -> [&str; 6] {
    [
        "--lock",
        "mcp.lock.json",
        "--server",
        "fixture",
        "--mode",
        mode,
    ]
}

fn session() -> Vec<serde_json::Value> {
    vec![
        initialize(1),
        initialized(),
        request(2, "tools/list", json!({})),
        request(3, "resources/templates/list", json!({})),
        request(4, "prompts/list", json!({})),
    ]
}

#[test]
fn method_not_found_for_a_list_not_served_passes_byte_for_byte() {
    let dir = Dir::new();
    lock_not_served(&dir);
    let fixture = ["--mode", "no-optional-lists"];
    let run = dir.guard(&args("refuse"), &fixture, &session());
    run.code(0).stderr_lacks("departs from the lock");
    let messages = run.messages();
    assert_eq!(messages.len(), 4, "{}", run.stdout);
    for (index, id) in [(2, 3), (3, 4)] {
        assert_eq!(messages[index]["id"], json!(id));
        assert_eq!(messages[index]["error"]["code"], json!(-32601));
    }
    assert_eq!(run.stdout, dir.direct(&fixture, &session()));
}

#[test]
fn a_list_served_where_the_lock_says_not_served_is_refused() {
    let dir = Dir::new();
    lock_not_served(&dir);
    let fixture = ["--mode", "no-optional-lists", "--mode", "templates"];
    let run = dir.guard(&args("refuse"), &fixture, &session());
    run.code(1)
        .lines(&[
            Expect::Result(json!(1)),
            Expect::Result(json!(2)),
            Expect::Refused(json!(3)),
        ])
        .stdout_lacks("notes://")
        .stderr_has("resource-template-added: notes://{name} departs from the lock");
    assert_eq!(
        run.messages()[2]["error"]["message"],
        json!(
            "mcppin-guard refused resources/templates/list: 1 departed (resource-template-added)"
        )
    );
}

#[test]
fn quarantine_withholds_a_list_the_lock_says_was_not_served() {
    let dir = Dir::new();
    lock_not_served(&dir);
    let fixture = ["--mode", "no-optional-lists", "--mode", "templates"];
    let run = dir.guard(&args("quarantine"), &fixture, &session());
    run.code(0)
        .stdout_lacks("notes://")
        .stderr_has("resource-template-added: notes://{name} departs from the lock");
    let messages = run.messages();
    assert_eq!(messages[2]["id"], json!(3));
    assert_eq!(messages[2]["result"]["resourceTemplates"], json!([]));
    assert_eq!(messages[3]["error"]["code"], json!(-32601));
}

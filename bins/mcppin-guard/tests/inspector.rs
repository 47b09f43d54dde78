//! The MCP Inspector (`testdata/inspector`, pinned) driving a guarded fixture server, in its
//! CLI mode and in its `--config` mode: an entry that gives the guard its settings in `env`
//! works in both, though the Inspector's CLI takes `--server` as its own and drops `--`.

mod util;

use std::path::PathBuf;
use std::process::Command;

use mcppin_testkit::StdinEnd;
use util::{Dir, counter_surface};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn installed(file: &str) -> PathBuf {
    let path = root().join("testdata/inspector").join(file);
    assert!(
        path.exists(),
        "{} is missing: install it with `npm ci --prefix testdata/inspector` (a step of .ci/run)",
        path.display()
    );
    path
}

/// The Inspector with `args`, run by the pinned Node.js in `dir`, with an environment of its
/// own (a home inside `dir`, secrets kept in memory).
fn inspector(dir: &Dir, args: &[&str]) -> util::Run {
    let node = installed("node_modules/node/bin/node");
    let cli =
        installed("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    let bin = node.parent().expect("node's directory").to_path_buf();
    let mut command = Command::new(&node);
    command
        .arg(cli)
        .args(args)
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("HOME", dir.path().join("home"))
        .env("MCP_INSPECTOR_SECRET_STORE", "memory");
    mcppin_testkit::run(&mut command, Vec::new(), StdinEnd::Closes)
}

fn guard() -> String {
    env!("CARGO_BIN_EXE_mcppin-guard").to_owned()
}

fn fixture() -> String {
    mcppin_fixture::locate("guard-fixture")
        .display()
        .to_string()
}

fn lock(dir: &Dir) -> String {
    dir.lock(&counter_surface());
    dir.path().join("mcp.lock.json").display().to_string()
}

/// The tool names of a `tools/list` answer the Inspector printed.
fn tools(run: &util::Run) -> Vec<String> {
    let value: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", run.stdout, run.stderr));
    value["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {value}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn the_inspector_cli_runs_a_guard_configured_from_env() {
    let dir = Dir::new();
    let lock = lock(&dir);
    let run = inspector(
        &dir,
        &[
            "--cli",
            "-e",
            &format!("MCPPIN_LOCK={lock}"),
            "-e",
            "MCPPIN_SERVER=fixture",
            &guard(),
            &fixture(),
            "--mode",
            "counter",
            "--era",
            "legacy",
            "--method",
            "tools/list",
        ],
    );
    run.code(0);
    let direct = counter_surface()
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>();
    assert_eq!(tools(&run), direct);
    // The flags form is what the Inspector's CLI breaks: it takes --server as its own.
    let run = inspector(
        &dir,
        &[
            "--cli",
            &guard(),
            "--lock",
            &lock,
            "--server",
            "fixture",
            "--",
            &fixture(),
            "--method",
            "tools/list",
        ],
    );
    assert_ne!(run.code, 0, "{}", run.stderr);
    run.stdout_lacks("read_text_file");
}

#[test]
fn the_inspector_config_mode_runs_a_guard_configured_from_env() {
    let dir = Dir::new();
    let lock = lock(&dir);
    let config = serde_json::json!({"mcpServers": {"demo": {
        "command": guard(),
        "args": [fixture(), "--mode", "counter", "--era", "legacy"],
        "env": {"MCPPIN_LOCK": lock, "MCPPIN_SERVER": "fixture"}
    }}});
    dir.write("mcp.json", config.to_string());
    let run = inspector(
        &dir,
        &[
            "--cli",
            "--config",
            "mcp.json",
            "--server",
            "demo",
            "--method",
            "tools/list",
        ],
    );
    run.code(0);
    assert_eq!(tools(&run).len(), counter_surface().len());
    // A lock that approves the surface without read_text_file: the guard refuses the list,
    // and the user sees its reason, not only that the connection ended.
    let without: Vec<_> = counter_surface()
        .into_iter()
        .filter(|t| t["name"] != "read_text_file")
        .collect();
    dir.lock(&without);
    let run = inspector(
        &dir,
        &[
            "--cli",
            "--config",
            "mcp.json",
            "--server",
            "demo",
            "--method",
            "tools/list",
        ],
    );
    // The Inspector fails the call (exit 1) with the guard's JSON-RPC error as its message, and
    // shows the guard's stderr, which names the departure.
    run.code(1)
        .stderr_has("mcppin-guard: tool-added: read_text_file")
        .stderr_has("mcppin-guard refused tools/list: 1 tool added (tool-added)")
        .stdout_lacks("read_text_file");
}

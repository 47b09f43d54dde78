//! The MCP Inspector (`testdata/inspector`, pinned) driving a guarded fixture server, in its
//! CLI mode and in its `--config` mode: an entry that gives the guard its settings in `env`
//! works in both, though the Inspector's CLI takes `--server` as its own and drops `--`.

mod util;

use std::path::{Path, PathBuf};
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
    // A lock that approves another surface: the guard refuses, and says so on stderr.
    let other = Path::new(&lock).with_file_name("other.lock.json");
    std::fs::write(&other, "{\"schema_version\": 4, \"approval_serial\": 1, \"servers\": [{\"id\": \"fixture\", \"tools\": []}]}\n").unwrap();
    let config = serde_json::json!({"mcpServers": {"demo": {
        "command": guard(),
        "args": [fixture(), "--mode", "counter", "--era", "legacy"],
        "env": {"MCPPIN_LOCK": other.display().to_string(), "MCPPIN_SERVER": "fixture"}
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
    run.stderr_has("mcppin-guard: ");
    assert!(!run.stdout.contains("read_text_file"), "{}", run.stdout);
}

//! Real components end to end: the official MCP TypeScript SDK client (`testdata/sdk-client`)
//! drives sessions through the real guard to the real reference servers (`testdata/servers`),
//! with a lockfile made by the real `mcppin-export` and `mcppin lock`.
//!
//! These tests never skip: without the installed packages they fail with the command that
//! installs them (`.ci/run` runs both). They need `mcppin-export` and `mcppin` built beside the
//! guard, which `cargo test --workspace` does.

mod util;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use util::{Dir, Run};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// An installed file of a pinned npm package folder, or a failure naming the install command.
fn installed(folder: &str, file: &str) -> PathBuf {
    let path = root().join("testdata").join(folder).join(file);
    assert!(
        path.exists(),
        "{} is missing: install it with `npm ci --prefix testdata/{folder} --ignore-scripts` \
         (a step of .ci/run)",
        path.display()
    );
    path
}

/// A binary of the workspace built beside the guard.
fn sibling(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_mcppin-guard")).with_file_name(name);
    assert!(
        path.is_file(),
        "{} is not built: run `cargo build -p {name}` (cargo test --workspace builds it)",
        path.display()
    );
    path
}

fn path_var() -> String {
    std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".to_owned())
}

fn run(dir: &Dir, program: &Path, args: &[&str]) -> Run {
    let out = mcppin_testkit::output(
        Command::new(program)
            .args(args)
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", path_var()),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The reference servers as a Claude Desktop configuration would run them.
fn servers(dir: &Dir) -> Vec<(&'static str, &'static str, Vec<String>)> {
    let everything = installed("servers", "node_modules/.bin/mcp-server-everything");
    let filesystem = installed("servers", "node_modules/.bin/mcp-server-filesystem");
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    vec![
        (
            "everything",
            "everything",
            vec!["node".into(), everything.display().to_string()],
        ),
        (
            "filesystem",
            "filesystem",
            vec![
                "node".into(),
                filesystem.display().to_string(),
                workspace.display().to_string(),
            ],
        ),
    ]
}

/// Exports the servers' surface with `mcppin-export`, applies `edit` to the manifest (the
/// approval of something the server does not serve) and locks it with `mcppin lock`.
fn lock(dir: &Dir, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut entries = serde_json::Map::new();
    for (id, _, command) in servers(dir) {
        entries.insert(
            id.to_owned(),
            json!({"command": command[0], "args": command[1..]}),
        );
    }
    dir.write("mcp.json", json!({"mcpServers": entries}).to_string());
    run(
        dir,
        &sibling("mcppin-export"),
        &["--config", "mcp.json", "-o", "manifest.json"],
    )
    .code(0);
    let mut manifest: Value =
        serde_json::from_str(&dir.read("manifest.json")).expect("manifest is JSON");
    edit(&mut manifest);
    dir.write("manifest.json", manifest.to_string());
    run(
        dir,
        &sibling("mcppin"),
        &["lock", "-o", "mcp.lock.json", "manifest.json"],
    )
    .code(0);
    dir.path().join("mcp.lock.json")
}

/// Runs the SDK client's `scenario` against `command` and returns its summary.
fn client(dir: &Dir, scenario: &str, command: &[String]) -> Value {
    let script = installed("sdk-client", "client.mjs");
    installed(
        "sdk-client",
        "node_modules/@modelcontextprotocol/sdk/package.json",
    );
    let mut args = vec![script.display().to_string(), scenario.to_owned()];
    args.extend(command.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let node = PathBuf::from("node");
    let out = run(dir, &node, &args);
    out.code(0);
    serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "client summary {e}\n--- stdout\n{}\n--- stderr\n{}",
            out.stdout, out.stderr
        )
    })
}

fn guarded(lock: &Path, id: &str, command: &[String]) -> Vec<String> {
    let mut out = vec![
        sibling("mcppin-guard").display().to_string(),
        "--lock".into(),
        lock.display().to_string(),
        "--server".into(),
        id.into(),
        "--".into(),
    ];
    out.extend(command.iter().cloned());
    out
}

#[test]
fn with_a_matching_lock_the_sdk_client_works_as_without_the_guard() {
    let dir = Dir::new();
    let lock = lock(&dir, |_| {});
    for (id, scenario, command) in servers(&dir) {
        let direct = client(&dir, scenario, &command);
        let through = client(&dir, scenario, &guarded(&lock, id, &command));
        assert_eq!(
            through, direct,
            "{scenario}: the guard changed what the client saw"
        );
        let steps = through["steps"].as_array().unwrap();
        assert!(
            steps[1]["tools"].as_array().is_some_and(|t| !t.is_empty()),
            "{steps:?}"
        );
        for step in steps.iter().filter(|s| s.get("call").is_some()) {
            assert_eq!(step["isError"], json!(false), "{step}");
        }
        assert!(
            steps.iter().all(|s| s.get("error").is_none()),
            "{scenario}: {steps:?}"
        );
        if scenario == "everything" {
            // server-everything registers tools once the session is initialised and announces
            // them with notifications/tools/list_changed; the SDK re-reads the list, through
            // the guard, which checks the re-read.
            let reread = &steps.last().unwrap()["list_changed_reread"];
            assert_eq!(reread["tools"], steps[1]["tools"], "{steps:?}");
        }
    }
}

#[test]
fn with_one_description_edited_in_the_lock_the_session_is_refused() {
    let dir = Dir::new();
    let lock = lock(&dir, |manifest| {
        let servers = manifest["servers"].as_array_mut().unwrap();
        let everything = servers
            .iter_mut()
            .find(|s| s["id"] == "everything")
            .unwrap();
        let tools = everything["tools"].as_array_mut().unwrap();
        let echo = tools.iter_mut().find(|t| t["name"] == "echo").unwrap();
        let description = echo["description"].as_str().unwrap().to_owned();
        echo["description"] = json!(format!("{description} Approved wording."));
    });
    let (id, scenario, command) = servers(&dir).remove(0);
    let through = client(&dir, scenario, &guarded(&lock, id, &command));
    let steps = through["steps"].as_array().unwrap();
    assert_eq!(
        steps[0]["connected"],
        json!("mcp-servers/everything"),
        "{steps:?}"
    );
    let error = &steps[1]["error"];
    assert_eq!(error["code"], json!(-32001), "{steps:?}");
    // Counts and the policy (the SDK puts its prefix before them); the tool's name stays on
    // stderr.
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .ends_with(": mcppin-guard refused tools/list: 1 tool changed (tool-changed)"),
        "{error}"
    );
    assert_eq!(steps.len(), 2, "nothing after the refusal: {steps:?}");
    assert_eq!(through["guard_stderr_mentions_refusal"], json!(true));
}

/// The capabilities VS Code declares (`mcppin-export --client vscode`).
const VSCODE_CAPABILITIES: &str =
    r#"{"elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": true}, "sampling": {}}"#;

/// Exports server-everything with `export_flags`, locks it, and runs the SDK client through
/// the guard declaring `capabilities`; returns the client's summary (with the command's stderr).
fn everything_declaring(dir: &Dir, export_flags: &[&str], capabilities: &str) -> Value {
    let (id, scenario, command) = servers(dir).remove(0);
    dir.write(
        "mcp.json",
        json!({"mcpServers": {id: {"command": command[0], "args": command[1..]}}}).to_string(),
    );
    let mut args = vec!["--config", "mcp.json", "-o", "manifest.json"];
    args.extend_from_slice(export_flags);
    run(dir, &sibling("mcppin-export"), &args).code(0);
    run(
        dir,
        &sibling("mcppin"),
        &["lock", "-o", "mcp.lock.json", "manifest.json"],
    )
    .code(0);
    let lock = dir.path().join("mcp.lock.json");
    let script = installed("sdk-client", "client.mjs");
    let mut client_args = vec![script.display().to_string(), scenario.to_owned()];
    client_args.extend(guarded(&lock, id, &command));
    let out = mcppin_testkit::output(
        Command::new("node")
            .args(&client_args)
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", path_var())
            .env("MCPPIN_CLIENT_CAPABILITIES", capabilities)
            .env("MCPPIN_SHOW_STDERR", "1"),
    )
    .expect("run node");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("client summary {e}: {out:?}"))
}

#[test]
fn a_client_declaring_capabilities_passes_with_a_lock_exported_under_its_profile() {
    let dir = Dir::new();
    let through = everything_declaring(&dir, &["--client", "vscode"], VSCODE_CAPABILITIES);
    let steps = through["steps"].as_array().unwrap();
    assert!(steps.iter().all(|s| s.get("error").is_none()), "{steps:?}");
    let tools = steps[1]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 17, "{tools:?}");
    for conditional in [
        "get-roots-list",
        "trigger-sampling-request",
        "trigger-elicitation-request",
    ] {
        assert!(
            tools.contains(&json!(conditional)),
            "{conditional}: {tools:?}"
        );
    }
    let stderr = through["stderr"].as_str().unwrap();
    assert!(!stderr.contains("capabilities"), "{stderr}");
}

#[test]
fn a_client_declaring_capabilities_is_refused_under_a_bare_lock_with_the_export_to_run() {
    let dir = Dir::new();
    let through = everything_declaring(&dir, &[], VSCODE_CAPABILITIES);
    let steps = through["steps"].as_array().unwrap();
    let error = &steps[1]["error"];
    assert_eq!(error["code"], json!(-32001), "{steps:?}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .ends_with(": mcppin-guard refused tools/list: 4 tools added (tool-added)"),
        "{error}"
    );
    let stderr = through["stderr"].as_str().unwrap();
    for needle in [
        "mcppin-guard: tool-added: get-roots-list",
        "mcppin-guard: the client declared the capabilities {\"elicitation\":{\"form\":{},\"url\":{}},\"roots\":{\"listChanged\":true},\"sampling\":{}}, but the lock was captured under {}",
        "  mcppin-export --config CONFIG --server everything --client vscode -o manifest.json",
        "  mcppin lock --approve everything -o LOCK manifest.json",
    ] {
        assert!(stderr.contains(needle), "{needle} not in\n{stderr}");
    }
    // A client declaring what the capture declared gets no such advice.
    let bare = everything_declaring(&dir, &[], "{}");
    let stderr = bare["stderr"].as_str().unwrap();
    assert!(!stderr.contains("capabilities"), "{stderr}");
    assert!(
        bare["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s.get("error").is_none()),
        "{bare}"
    );
}

/// Locks server-everything with the description of its `simple-prompt` edited, and runs the
/// SDK client's `prompts` scenario through the guard in `mode`.
fn prompts_through_the_guard(dir: &Dir, mode: &str) -> Vec<Value> {
    let lock = lock(dir, |manifest| {
        let everything = manifest["servers"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|s| s["id"] == "everything")
            .unwrap();
        let prompt = everything["prompts"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|p| p["name"] == "simple-prompt")
            .unwrap();
        prompt["description"] = json!("Approved wording.");
    });
    let (id, _, command) = servers(dir).remove(0);
    let mut guard = guarded(&lock, id, &command);
    guard.splice(1..1, ["--mode".to_owned(), mode.to_owned()]);
    let through = client(dir, "prompts", &guard);
    through["steps"].as_array().unwrap().clone()
}

#[test]
fn a_prompt_that_departs_from_the_lock_is_refused() {
    let dir = Dir::new();
    let steps = prompts_through_the_guard(&dir, "refuse");
    assert_eq!(steps[1]["error"]["code"], json!(-32001), "{steps:?}");
    assert!(
        steps[1]["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("mcppin-guard refused prompts/list: 1 departed (prompt-changed)"),
        "{steps:?}"
    );
}

#[test]
fn quarantine_withholds_a_prompt_that_departs_from_the_lock() {
    let dir = Dir::new();
    let steps = prompts_through_the_guard(&dir, "quarantine");
    let prompts = steps[1]["prompts"].as_array().expect("a prompt list");
    assert!(!prompts.contains(&json!("simple-prompt")), "{steps:?}");
    assert!(prompts.contains(&json!("args-prompt")), "{steps:?}");
    assert_eq!(steps[2]["error"]["code"], json!(-32001), "{steps:?}");
    assert!(
        steps[2]["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("mcppin-guard refused prompts/get: prompt-changed"),
        "{steps:?}"
    );
}

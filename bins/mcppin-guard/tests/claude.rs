//! Claude Code (`testdata/claude-code`, pinned) as far as it runs without credentials or the
//! network: `claude doctor` accepts the hook settings of docs/guard.md, and `claude mcp list`
//! connects to a server through the guard. A session, which would run the hook itself, needs a
//! model: not here.

mod peers;
mod util;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use util::{ClientEnd, Dir, Run, counter_surface};

fn claude() -> PathBuf {
    peers::installed(
        "claude-code",
        "node_modules/.bin/claude",
        "npm ci --prefix testdata/claude-code",
    )
}

/// Runs `claude` with `args` in `cwd`, its home in the test's directory, without the network
/// uses it can go without (update checks, telemetry).
fn run_claude(dir: &Dir, cwd: &Path, args: &[&str]) -> Run {
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    mcppin_testkit::run(
        Command::new(claude())
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .env("HOME", &home)
            .env("PATH", peers::path_var())
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1"),
        Vec::new(),
        ClientEnd::Closes,
    )
}

/// The hook settings docs/guard.md shows: the first JSON block after "The hook in the
/// settings".
fn documented_settings() -> Value {
    let guard_md = std::fs::read_to_string(peers::root().join("docs/guard.md")).unwrap();
    let after = guard_md
        .split_once("The hook in the settings")
        .expect("docs/guard.md shows the hook settings")
        .1;
    let block = after
        .split_once("```json\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .expect("a JSON block")
        .0;
    serde_json::from_str(block).expect("the documented settings are JSON")
}

#[test]
fn claude_code_accepts_the_documented_hook_settings() {
    let dir = Dir::new();
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let settings = documented_settings();
    let hook = &settings["hooks"]["PreToolUse"][0];
    assert_eq!(hook["matcher"], json!("mcp__.*"));
    assert!(
        hook["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .contains("mcppin-guard hook --lock ")
    );
    dir.write("project/.claude/settings.json", settings.to_string());
    let run = run_claude(&dir, &project, &["doctor"]);
    run.code(0)
        .stdout_has("Claude Code doctor")
        .stdout_lacks("Invalid settings");
    // The check it makes: the same settings with the matcher a number are refused.
    let mut broken = settings.clone();
    broken["hooks"]["PreToolUse"][0]["matcher"] = json!(3);
    dir.write("project/.claude/settings.json", broken.to_string());
    run_claude(&dir, &project, &["doctor"])
        .code(0)
        .stdout_has("Invalid settings")
        .stdout_has("hooks.PreToolUse.0");
}

#[test]
fn claude_mcp_list_connects_through_the_guard() {
    let dir = Dir::new();
    let lock = dir.lock(&counter_surface());
    let log = dir.path().join("admission.jsonl");
    let guard = env!("CARGO_BIN_EXE_mcppin-guard");
    let fixture = mcppin_fixture::locate("guard-fixture");
    let add = |id: &str| {
        let (lock, log, fixture) = (
            lock.to_str().unwrap(),
            log.to_str().unwrap(),
            fixture.to_str().unwrap(),
        );
        run_claude(
            &dir,
            dir.path(),
            &[
                "mcp", "add", "-s", "user", id, "--", guard, "--lock", lock, "--server", id,
                "--log", log, "--", fixture, "--mode", "counter",
            ],
        )
        .code(0);
    };
    // `fixture` is in the lockfile; `stranger` is not, and its guard refuses to start.
    add("fixture");
    add("stranger");
    let run = run_claude(&dir, dir.path(), &["mcp", "list"]);
    run.code(0);
    let line = |id: &str| {
        run.stdout
            .lines()
            .find(|l| l.starts_with(&format!("{id}: ")))
            .unwrap_or_else(|| panic!("no line for {id}: {run:?}"))
            .to_owned()
    };
    assert!(line("fixture").ends_with("- \u{2714} Connected"), "{run:?}");
    assert!(line("stranger").contains("Failed to connect"), "{run:?}");
    // What Claude Code was served went through the guard: its reading of the list, admitted.
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let listed: Vec<&Value> = lines
        .iter()
        .filter(|l| {
            l["event"] == json!("tool_admission") && l["request_method"] == json!("tools/list")
        })
        .collect();
    assert_eq!(listed.len(), counter_surface().len(), "{lines:#?}");
    assert!(listed.iter().all(|l| l["decision"] == json!("allow")));
    assert_eq!(
        mcppin_core::log::verify(std::fs::read(&log).unwrap().as_slice()).findings,
        []
    );
}

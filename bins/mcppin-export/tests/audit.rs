//! `mcppin-export --audit LOCK` on the real binary: every entry of a configuration classified
//! against the lockfile (guarded, weakened, other-lock, unguarded, not-locked), located at its
//! file and line in text, JSON and SARIF, exit 1 when one bypasses the guard, and no server
//! ever started.

mod util;

use std::process::Command;

use serde_json::Value;
use util::{Dir, Run};

const LOCK: &str = r#"{"schema_version": 4, "approval_serial": 1, "servers": [
  {"id": "files", "tools": []},
  {"id": "quarantined", "tools": []},
  {"id": "elsewhere", "tools": []},
  {"id": "direct", "tools": []},
  {"id": "remote", "tools": []}
]}"#;

/// Runs `mcppin-export` in `dir` with `args` and exactly the environment `env`, bounded.
fn export(dir: &Dir, args: &[&str], env: &[(&str, &str)]) -> Run {
    mcppin_testkit::run(
        Command::new(env!("CARGO_BIN_EXE_mcppin-export"))
            .args(args)
            .current_dir(dir.path())
            .env_clear()
            .envs(env.iter().copied()),
        Vec::new(),
        mcppin_testkit::StdinEnd::Closes,
    )
}

/// A configuration with one entry of each standing; every command would leave a file behind
/// if it ran.
fn config(dir: &Dir) -> String {
    let lock = dir.path().join("mcp.lock.json");
    let lock = lock.to_str().unwrap();
    let ran = dir.path().join("ran");
    let ran = ran.to_str().unwrap();
    format!(
        r#"{{
  // guarded as expected
  "mcpServers": {{
    "files": {{"command": "mcppin-guard",
      "args": ["--lock", "{lock}", "--server", "files", "--pubkey", "/k.pub", "--", "sh", "-c", "touch {ran}"]}},
    "quarantined": {{"command": "/usr/bin/mcppin-guard", "args": ["sh", "-c", "touch {ran}"],
      "env": {{"MCPPIN_LOCK": "mcp.lock.json", "MCPPIN_SERVER": "quarantined", "MCPPIN_MODE": "quarantine"}}}},
    "elsewhere": {{"command": "mcppin-guard",
      "args": ["--lock", "/etc/other.lock.json", "--server", "elsewhere", "--", "sh", "-c", "touch {ran}"]}},
    "direct": {{"command": "sh", "args": ["-c", "touch {ran}"]}},
    "remote": {{"url": "https://mcp.example/mcp"}},
    "new": {{"command": "sh", "args": ["-c", "touch {ran}"]}},
  }}
}}"#
    )
}

#[test]
fn every_entry_is_classified_at_its_line_and_a_bypass_exits_1() {
    let dir = Dir::new();
    dir.write("mcp.lock.json", LOCK);
    // A signature beside the lockfile: a guard must check it.
    dir.write("mcp.lock.json.sig", "{}");
    dir.write("mcp.json", config(&dir));
    let run = export(
        &dir,
        &["--audit", "mcp.lock.json", "--config", "mcp.json"],
        &[],
    );
    run.code(1)
        .stdout_has("guarded     mcp.json:4  \"files\"\n")
        .stdout_has(
            "weakened    mcp.json:6  \"quarantined\": --mode quarantine where refuse is \
             expected; no --pubkey (or MCPPIN_PUBKEY): the signature beside the lockfile is not \
             checked\n",
        )
        .stdout_has(
            "other-lock  mcp.json:8  \"elsewhere\": behind mcppin-guard enforcing another \
             lockfile: \"/etc/other.lock.json\"\n",
        )
        .stdout_has(
            "unguarded   mcp.json:10  \"direct\": in the lockfile, but started without \
             mcppin-guard\n",
        )
        .stdout_has("unguarded   mcp.json:11  \"remote\": a remote server")
        .stdout_has(
            "not-locked  mcp.json:12  \"new\": not in the lockfile, and started without \
             mcppin-guard\n",
        )
        .stdout_has(
            "6 entries in 1 configuration: 1 guarded, 1 weakened, 1 other-lock, 2 unguarded, \
             1 not-locked\nFAIL: 5 entries bypass the guard as expected\n",
        );
    assert!(!dir.path().join("ran").exists(), "a server was started");

    // JSON: one entry per server, its file and line.
    let json = export(
        &dir,
        &[
            "--audit",
            "mcp.lock.json",
            "--config",
            "mcp.json",
            "--format",
            "json",
        ],
        &[],
    );
    json.code(1);
    let report: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report["status"], "FAIL");
    assert_eq!(report["signed"], true);
    let entries = report["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 6);
    let direct = entries.iter().find(|e| e["server"] == "direct").unwrap();
    assert_eq!(direct["standing"], "unguarded");
    assert_eq!(direct["line"], 10);
    assert_eq!(direct["config"], "mcp.json");

    // SARIF: a result per bypass, at the configuration's line.
    let sarif = export(
        &dir,
        &[
            "--audit",
            "mcp.lock.json",
            "--config",
            "mcp.json",
            "--format",
            "sarif",
        ],
        &[],
    );
    sarif.code(1);
    let log: Value = serde_json::from_str(&sarif.stdout).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 5);
    let other = results
        .iter()
        .find(|r| r["ruleId"] == "other-lock")
        .unwrap();
    let location = &other["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "mcp.json");
    assert_eq!(location["region"]["startLine"], 8);
    assert!(!dir.path().join("ran").exists(), "a server was started");
}

#[test]
fn a_configuration_whose_every_entry_is_guarded_passes() {
    let dir = Dir::new();
    dir.write("mcp.lock.json", LOCK);
    let lock = dir.path().join("mcp.lock.json");
    dir.write(
        "mcp.json",
        format!(
            r#"{{"mcpServers": {{"files": {{"command": "mcppin-guard",
              "args": ["--lock", "{}", "--server", "files", "--", "srv"]}}}}}}"#,
            lock.display()
        ),
    );
    export(
        &dir,
        &["--audit", "mcp.lock.json", "--config", "mcp.json"],
        &[],
    )
    .code(0)
    .stdout_has("PASS: every server is started behind mcppin-guard with this lockfile\n");
    // Quarantine is weakened unless it is what the audit expects.
    dir.write(
        "mcp.json",
        format!(
            r#"{{"mcpServers": {{"files": {{"command": "mcppin-guard",
              "args": ["--lock", "{}", "--server", "files", "--mode", "quarantine", "--", "srv"]}}}}}}"#,
            lock.display()
        ),
    );
    export(
        &dir,
        &["--audit", "mcp.lock.json", "--config", "mcp.json"],
        &[],
    )
    .code(1)
    .stdout_has("weakened ");
    export(
        &dir,
        &[
            "--audit",
            "mcp.lock.json",
            "--config",
            "mcp.json",
            "--audit-mode",
            "quarantine",
        ],
        &[],
    )
    .code(0);
}

#[test]
fn discover_audits_every_configuration_found() {
    let dir = Dir::new();
    dir.write("mcp.lock.json", LOCK);
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(home.join(".cursor")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        home.join(".cursor/mcp.json"),
        r#"{"mcpServers": {"direct": {"command": "srv"}}}"#,
    )
    .unwrap();
    let run = export(
        &dir,
        &[
            "--audit",
            "mcp.lock.json",
            "--discover",
            "--project",
            project.to_str().unwrap(),
            "--system-root",
            dir.path().to_str().unwrap(),
        ],
        &[("HOME", home.to_str().unwrap())],
    );
    run.code(1).stdout_has(&format!(
        "unguarded   {}:1  \"direct\"",
        home.join(".cursor/mcp.json").display()
    ));
}

#[test]
fn a_wrong_command_line_or_an_unreadable_input_is_no_verdict() {
    let dir = Dir::new();
    dir.write("mcp.lock.json", LOCK);
    dir.write("mcp.json", r#"{"mcpServers": {}}"#);
    // Neither --config nor --discover.
    export(&dir, &["--audit", "mcp.lock.json"], &[])
        .code(2)
        .stderr_has("--audit reads the configurations of --config FILE or of --discover");
    // --format belongs to --audit.
    export(
        &dir,
        &["--config", "mcp.json", "-o", "m.json", "--format", "json"],
        &[],
    )
    .code(2);
    export(
        &dir,
        &["--audit", "missing.json", "--config", "mcp.json"],
        &[],
    )
    .code(4)
    .stderr_has("cannot read the lockfile missing.json");
    dir.write("bad.json", "{\"schema_version\": 4,");
    export(&dir, &["--audit", "bad.json", "--config", "mcp.json"], &[]).code(4);
    // A lockfile over the bound is refused before it is read whole (a sparse file: no disk).
    let huge = std::fs::File::create(dir.path().join("huge.json")).unwrap();
    huge.set_len((256 << 20) + 1).unwrap();
    export(&dir, &["--audit", "huge.json", "--config", "mcp.json"], &[])
        .code(4)
        .stderr_has("cannot read the lockfile huge.json: larger than 268435456 bytes");
    export(
        &dir,
        &["--audit", "mcp.lock.json", "--config", "nope.json"],
        &[],
    )
    .code(4);
    // An empty configuration has nothing that bypasses.
    export(
        &dir,
        &["--audit", "mcp.lock.json", "--config", "mcp.json"],
        &[],
    )
    .code(0)
    .stdout_has("0 entries in 1 configuration");
}

/// The audit's SARIF log, checked by the official SARIF validator (needs
/// `testdata/tools/install.sh`; `scripts/test` runs it with `--ignored`): a log of bypasses
/// and a log of none, neither with an error or a warning but the tool's unnamed home page
/// (SARIF2005: the project has no public address to name).
#[test]
#[ignore = "needs testdata/tools/install.sh; scripts/test runs it"]
fn the_audits_sarif_validates() {
    let dir = Dir::new();
    dir.write("mcp.lock.json", LOCK);
    dir.write("mcp.json", config(&dir));
    let args = [
        "--audit",
        "mcp.lock.json",
        "--config",
        "mcp.json",
        "--format",
        "sarif",
    ];
    let bypassed = export(&dir, &args, &[]);
    bypassed.code(1);
    dir.write("bypassed.sarif", &bypassed.stdout);
    let lock = dir.path().join("mcp.lock.json");
    dir.write(
        "mcp.json",
        format!(
            r#"{{"mcpServers": {{"files": {{"command": "mcppin-guard",
              "args": ["--lock", "{}", "--server", "files", "--", "srv"]}}}}}}"#,
            lock.display()
        ),
    );
    let guarded = export(&dir, &args, &[]);
    guarded.code(0);
    dir.write("guarded.sarif", &guarded.stdout);
    for file in ["bypassed.sarif", "guarded.sarif"] {
        let (console, results) = mcppin_testkit::sarif::validate(dir.path(), file);
        for (rule, message) in &results {
            assert!(
                rule == "SARIF2005" && message == "Warning_ProvideToolnformationUri",
                "{file}: {rule} {message}\n{console}"
            );
        }
    }
    assert!(!dir.path().join("ran").exists(), "a server was started");
}

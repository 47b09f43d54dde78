//! The guard's check of what a server runs (docs/guard.md, "Artifact identity"), on the real
//! binary: a script edited in place is refused before it starts (the fixture behind it never
//! writes its pid or record file), an engine that cannot describe the image is refused before
//! anything is run, and a package `npx` installed at another version than approved ends the
//! session before the server's first answer reaches the client.
//!
//! The npm test runs a real `npx -y` install from a registry served by the test; it never
//! skips: without `npm`, `npx` and `node` on PATH it fails saying so.

mod util;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use mcppin_client::{ServerCommand, artifact};
use mcppin_core::artifact::{Artifact, NpmPackage};
use mcppin_core::lockfile::Lockfile;
use mcppin_core::manifest::Manifest;
use mcppin_testkit::npm::{self, Registry};
use serde_json::{Value, json};
use util::{Dir, Run, initialize, initialized, request};

/// Writes `mcp.lock.json` approving `tools` for server `fixture`, pinned to `artifact`.
fn lock_pinning(dir: &Dir, tools: &[Value], artifact: Artifact) -> PathBuf {
    let manifest = json!({"schema_version": 2, "complete": true, "servers": [
        {"id": "fixture", "reported_name": "mcppin-fixture", "tools": tools}]});
    let manifest = Manifest::parse(manifest.to_string().as_bytes()).expect("manifest");
    let mut lock = Lockfile::approve(None, &manifest, &[]).expect("approve");
    lock.servers.get_mut("fixture").expect("entry").artifact = Some(artifact);
    dir.write("mcp.lock.json", lock.to_bytes())
}

fn session() -> Vec<u8> {
    [
        initialize(1),
        initialized(),
        request(2, "tools/list", json!({})),
    ]
    .iter()
    .map(|m| format!("{m}\n"))
    .collect::<String>()
    .into_bytes()
}

/// Runs the guard in `dir` with `args` and exactly the environment `env`, the session's
/// messages as its input, bounded in time.
fn guard(dir: &Dir, args: &[&str], env: &[(&str, &str)]) -> Run {
    mcppin_testkit::run(
        Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
            .args(args)
            .current_dir(dir.path())
            .env_clear()
            .envs(env.iter().copied()),
        session(),
        mcppin_testkit::StdinEnd::Closes,
    )
}

/// [`guard`] with a client that closes its input once the two answers of the session came.
fn guard_until_answered(dir: &Dir, args: &[&str], env: &[(&str, &str)]) -> Run {
    mcppin_testkit::run(
        Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
            .args(args)
            .current_dir(dir.path())
            .env_clear()
            .envs(env.iter().copied()),
        session(),
        mcppin_testkit::StdinEnd::ClosesAfterLines(2),
    )
}

/// Writes `server.sh`, a script that runs the fixture, with `comment` in it.
fn script(dir: &Dir, comment: &str) {
    let fixture = mcppin_fixture::locate("guard-fixture");
    let path = dir.write(
        "server.sh",
        format!(
            "#!/bin/sh\n# {comment}\nexec '{}' \"$@\"\n",
            fixture.display()
        ),
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

const SCRIPT_ARGS: [&str; 5] = [
    "./server.sh",
    "--pid-file",
    "server.pid",
    "--record",
    "record.txt",
];

#[test]
fn an_edited_script_is_refused_before_the_server_starts() {
    let dir = Dir::new();
    script(&dir, "the approved script");
    // What the export records for this launch, run from this directory.
    let approved = artifact::before_start(
        &ServerCommand::new(SCRIPT_ARGS[0])
            .args(&SCRIPT_ARGS[1..])
            .current_dir(dir.path()),
    )
    .expect("a local program is read before it starts");
    assert_eq!(approved.kind(), "local", "{approved:?}");
    lock_pinning(&dir, &mcppin_fixture::surface(false), approved);
    let mut args = vec![
        "--lock",
        "mcp.lock.json",
        "--server",
        "fixture",
        "--log",
        "log.jsonl",
        "--",
    ];
    args.extend(SCRIPT_ARGS);

    // The approved script: the server starts and is served.
    let held = guard(&dir, &args, &[]);
    held.code(0);
    assert!(held.stdout.contains("read_text_file"), "{}", held.stdout);
    assert!(dir.path().join("server.pid").exists());
    let log = dir.read("log.jsonl");
    assert_eq!(
        last_artifact_admission(&log),
        ("before_start".to_owned(), "allow".to_owned(), Value::Null),
        "{log}"
    );

    // The same tools, other code: refused, and the server never starts.
    script(&dir, "the same tools, other code");
    std::fs::remove_file(dir.path().join("server.pid")).expect("rm pid");
    std::fs::remove_file(dir.path().join("record.txt")).expect("rm record");
    let refused = guard(&dir, &args, &[]);
    refused
        .code(1)
        .stderr_has(
            "mcppin-guard: artifact-changed: the server runs another artifact than the lock \
             approved\n  approved: program ./server.sh sha256:",
        )
        .stderr_has("\n  served:   program ./server.sh sha256:")
        .stderr_has("\n  mcppin lock --approve fixture -o LOCK manifest.json\n")
        .stderr_has("mcppin-guard: the server was not started\n");
    assert_eq!(refused.stdout, "", "nothing reaches the client");
    assert!(!dir.path().join("server.pid").exists(), "the server ran");
    assert!(
        !dir.path().join("record.txt").exists(),
        "the server read input"
    );
    let log = dir.read("log.jsonl");
    assert_eq!(
        last_artifact_admission(&log),
        (
            "before_start".to_owned(),
            "deny".to_owned(),
            json!("artifact-changed")
        ),
        "{log}"
    );
}

#[test]
fn an_image_the_engine_cannot_describe_is_refused_before_anything_runs() {
    let dir = Dir::new();
    // An engine whose daemon is down: it answers image inspect as Docker does then, and
    // records every command it is given.
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let record = dir.path().join("engine.txt");
    let engine = bin.join("docker");
    std::fs::write(
        &engine,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\necho '[]'\necho 'Cannot connect to the Docker \
             daemon at unix:///var/run/docker.sock.' >&2\nexit 1\n",
            record.display()
        ),
    )
    .expect("engine");
    std::fs::set_permissions(&engine, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let pinned = Artifact::Oci {
        image: "ghcr.io/example/docs:1.0".into(),
        digest: format!("sha256:{}", "3f".repeat(32)),
    };
    lock_pinning(&dir, &mcppin_fixture::surface(false), pinned);
    let path = format!("{}:/bin:/usr/bin", bin.display());
    let run = guard(
        &dir,
        &[
            "--lock",
            "mcp.lock.json",
            "--server",
            "fixture",
            "--",
            "docker",
            "run",
            "-i",
            "--rm",
            "ghcr.io/example/docs:1.0",
        ],
        &[("PATH", &path)],
    );
    run.code(1)
        .stderr_has("mcppin-guard: artifact-unknown: the server's artifact could not be read")
        .stderr_has("Cannot connect to the Docker daemon")
        .stderr_has(&format!(
            "  approved: oci ghcr.io/example/docs:1.0 sha256:{}",
            "3f".repeat(32)
        ))
        .stderr_has("mcppin-guard: the server was not started");
    assert_eq!(
        std::fs::read_to_string(&record).expect("the engine was asked"),
        "image inspect ghcr.io/example/docs:1.0\n",
        "only the image was inspected: nothing was run"
    );
}

/// The guard's environment for `npx` against `registry`, with the npm cache and HOME in `dir`.
fn npx_env(dir: &Path, registry: &str) -> Vec<(String, String)> {
    vec![
        ("PATH".into(), npm::path_var()),
        ("HOME".into(), dir.join("home").display().to_string()),
        ("npm_config_registry".into(), format!("{registry}/")),
        (
            "npm_config_cache".into(),
            dir.join("npm-cache").display().to_string(),
        ),
        ("npm_config_update_notifier".into(), "false".into()),
        ("npm_config_audit".into(), "false".into()),
        ("npm_config_fund".into(), "false".into()),
    ]
}

#[test]
fn another_version_installed_by_npx_ends_the_session_before_the_first_answer() {
    const NAME: &str = "docs-mcp-server";
    let dir = Dir::new();
    let approved = npm::pack(dir.path(), NAME, "1.0.0", npm::SERVER_JS, &[]);
    let next_js = format!("{}\n// other code, the same tools\n", npm::SERVER_JS);
    let next = npm::pack(dir.path(), NAME, "1.0.1", &next_js, &[]);
    let registry = Registry::start(&[approved.clone(), next.clone()]);
    let echo = json!({"name": "echo", "description": "Echo the text",
                      "inputSchema": {"type": "object"}});
    let pinned = Artifact::Npm {
        packages: vec![NpmPackage {
            name: NAME.into(),
            version: "1.0.0".into(),
            integrity: approved.integrity.clone(),
        }],
    };
    lock_pinning(&dir, &[echo], pinned);
    let env = npx_env(dir.path(), &registry.url);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    // The client reads both answers before it ends the session: npx installing under load
    // can take longer than the grace the end of input leaves the server.
    let run = |spec: &str| {
        guard_until_answered(
            &dir,
            &[
                "--lock",
                "mcp.lock.json",
                "--server",
                "fixture",
                "--log",
                "log.jsonl",
                "--",
                "npx",
                "-y",
                spec,
            ],
            &env,
        )
    };

    // The approved version: served.
    let held = run(&format!("{NAME}@1.0.0"));
    held.code(0);
    assert!(held.stdout.contains(r#""name":"echo""#), "{}", held.stdout);

    // npx resolves the name alone to 1.0.1: refused before its first answer.
    let refused = run(NAME);
    refused
        .code(1)
        .stderr_has(&format!(
            "mcppin-guard: artifact-changed: the server runs another artifact than the lock \
             approved\n  approved: npm {NAME}@1.0.0 {}\n  served:   npm {NAME}@1.0.1 {}\n",
            approved.integrity, next.integrity
        ))
        .stderr_has("mcppin-guard: the server was stopped; nothing it wrote was forwarded");
    let lines: Vec<Value> = refused
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    // The requests waiting when the server wrote its first line (initialize, and tools/list
    // when the guard had forwarded it by then) get refusals, and nothing else reaches the
    // client.
    assert_eq!(
        lines.first(),
        Some(
            &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message":
            "mcppin-guard refused initialize: the server runs another artifact than approved \
             (artifact-changed)"}})
        ),
        "{}",
        refused.stdout
    );
    for line in &lines[1..] {
        assert_eq!(line["id"], json!(2), "{line}");
        assert_eq!(line["error"]["code"], json!(-32001), "{line}");
    }
    let log = dir.read("log.jsonl");
    assert_eq!(
        last_artifact_admission(&log),
        (
            "once_up".to_owned(),
            "deny".to_owned(),
            json!("artifact-changed")
        ),
        "{log}"
    );
}

/// The last `artifact_admission` line of an admission log: when it was checked, the decision
/// and the reason.
fn last_artifact_admission(log: &str) -> (String, String, Value) {
    let line = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line"))
        .rfind(|l| l["event"] == json!("artifact_admission"))
        .expect("an artifact_admission line");
    (
        line["checked"].as_str().unwrap_or_default().to_owned(),
        line["decision"].as_str().unwrap_or_default().to_owned(),
        line["reason"].clone(),
    )
}

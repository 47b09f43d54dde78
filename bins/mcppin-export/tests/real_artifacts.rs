//! Artifact identity with real launchers and published servers (the slow suite: `#[ignore]`,
//! `.ci/run` runs it with `-- --ignored` after installing uv): a real `npx -y` install from
//! the npm registry and a real `uvx` install from PyPI, each captured by the real
//! `mcppin-export`, locked and verified with the real `mcppin`, then run through the real
//! `mcppin-guard`. The version comes from a variable of the configuration (`pkg@${VERSION}`),
//! as a configuration may write it: the launch stays the same words while the package moves
//! to another published version with the same tools, and only the artifact tells them apart.
//!
//! They never skip: without `npx`, or `uvx` of uv 0.13.9, on PATH they fail with the command
//! that installs it. The uv cache is `target/real-artifacts-home`, kept between runs.

mod util;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mcppin_testkit::{Run, StdinEnd};
use serde_json::{Value, json};
use util::Dir;

/// The longest one program may run: a cold `npx` or `uvx` installs its server first.
const LIMIT: Duration = Duration::from_secs(300);

/// The published npm server and two of its versions that serve the same tools.
const MEMORY: &str = "@modelcontextprotocol/server-memory";
const MEMORY_APPROVED: &str = "2026.7.4";
const MEMORY_NEXT: &str = "2026.8.31";

/// The published PyPI server and two of its versions that serve the same tools.
const TIME: &str = "mcp-server-time";
const TIME_APPROVED: &str = "2026.8.18";
const TIME_NEXT: &str = "2026.10.10";

/// A binary of the workspace built beside the export.
fn sibling(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_mcppin-export")).with_file_name(name);
    assert!(
        path.is_file(),
        "{} is not built: run `cargo build -p {name}` (cargo test --workspace builds it)",
        path.display()
    );
    path
}

/// The directory kept between runs for the uv cache.
fn home() -> PathBuf {
    let dir = Path::new(env!("CARGO_BIN_EXE_mcppin-export"))
        .parent()
        .and_then(Path::parent)
        .expect("target directory")
        .join("real-artifacts-home");
    std::fs::create_dir_all(&dir).expect("home");
    dir
}

/// The variables the tests pass on (proxy and certificate variables a machine behind a
/// TLS-inspecting proxy needs to reach the registries).
const NETWORK: [&str; 10] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
];

/// `PATH`, a `HOME` and caches of the test's own (npm's in `dir`, uv's kept in [`home`]), uv
/// told to use the machine's Python and never to download one, and `extra`.
fn environment(dir: &Dir, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let python = mcppin_testkit::output(
        Command::new("python3").args(["-c", "import sys; print(sys.executable)"]),
    )
    .expect("python3 is needed (apt-get install python3)");
    let mut env: Vec<(String, String)> = NETWORK
        .iter()
        .filter_map(|name| Some(((*name).to_owned(), std::env::var(name).ok()?)))
        .collect();
    env.extend([
        (
            "PATH".into(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()),
        ),
        ("HOME".into(), dir.path().join("home").display().to_string()),
        (
            "npm_config_cache".into(),
            dir.path().join("npm-cache").display().to_string(),
        ),
        ("npm_config_update_notifier".into(), "false".into()),
        ("npm_config_audit".into(), "false".into()),
        ("npm_config_fund".into(), "false".into()),
        (
            "UV_CACHE_DIR".into(),
            home().join("uv-cache").display().to_string(),
        ),
        (
            "UV_PYTHON".into(),
            String::from_utf8_lossy(&python.stdout).trim().to_owned(),
        ),
        ("UV_PYTHON_DOWNLOADS".into(), "never".into()),
    ]);
    env.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    env
}

/// Runs `program` in `dir` with exactly `env` and `stdin`, failed when it hangs.
fn run(dir: &Dir, program: &Path, args: &[&str], env: &[(String, String)], stdin: &[u8]) -> Run {
    std::fs::create_dir_all(dir.path().join("home")).expect("home");
    mcppin_testkit::run_within(
        Command::new(program)
            .args(args)
            .current_dir(dir.path())
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v))),
        stdin.to_vec(),
        StdinEnd::Closes,
        LIMIT,
    )
}

fn export(dir: &Dir, output: &str, env: &[(String, String)]) -> Run {
    run(
        dir,
        &sibling("mcppin-export"),
        &["--config", "mcp.json", "--inherit-env", "-o", output],
        env,
        b"",
    )
}

fn mcppin(dir: &Dir, args: &[&str]) -> Run {
    run(dir, &sibling("mcppin"), args, &[], b"")
}

fn artifact(dir: &Dir, manifest: &str) -> Value {
    let manifest: Value = serde_json::from_slice(&dir.read(manifest)).expect("manifest");
    manifest["servers"][0]["artifact"].clone()
}

/// Runs `command` behind the guard with the lock of `dir` and `env`, as an interactive client:
/// `initialize`, and once it is answered `notifications/initialized` and `tools/list`; the
/// client's end closes once `tools/list` is answered or the guard closes its output (a server
/// that reads the end of its input before it answers, as the SDK's do, would otherwise never
/// answer). Returns the exit code, what the client read, and the guard's stderr.
fn guarded(dir: &Dir, id: &str, command: &[&str], env: &[(String, String)]) -> Run {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut child = Command::new(sibling("mcppin-guard"))
        .args(["--lock", "mcp.lock.json", "--server", id, "--"])
        .args(command)
        .current_dir(dir.path())
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start mcppin-guard");
    let mut stdin = child.stdin.take().expect("stdin");
    let (lines, read) = std::sync::mpsc::channel::<String>();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let mut stderr = child.stderr.take().expect("stderr");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut send = |message: Value| {
        let _ = writeln!(stdin, "{message}");
        let _ = stdin.flush();
    };
    let mut seen = String::new();
    // Waits for the answer to `id`; false when the guard closed its output first.
    let mut answered = |want: u64| loop {
        match read.recv_timeout(LIMIT) {
            Ok(line) => {
                seen.push_str(&line);
                seen.push('\n');
                let message: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                if message["id"] == json!(want) {
                    break true;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break false,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                panic!("no answer to {want} within {LIMIT:?}")
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}),
    );
    if answered(1) {
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        answered(2);
    }
    drop(stdin);
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("mcppin-guard did not exit within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    for line in read.try_iter() {
        seen.push_str(&line);
        seen.push('\n');
    }
    Run {
        code: status.code().unwrap_or(-1),
        stdout: seen,
        stderr: errors.join().unwrap_or_default(),
    }
}

/// Captures the configuration with `VERSION` set to `approved`, locks it, captures it again
/// with `next`, and checks what verify and the guard make of it: the guard runs `command`
/// (the configuration's, the variable expanded as the client expands it) with each version.
/// Returns the approved artifact.
fn another_version_behind_the_same_launch(
    dir: &Dir,
    id: &str,
    command: impl Fn(&str) -> Vec<String>,
    approved: &str,
    next: &str,
) -> Value {
    let first = environment(dir, &[("VERSION", approved)]);
    export(dir, "approved.json", &first)
        .code(0)
        .stderr_has("; artifact: ");
    mcppin(dir, &["lock", "-o", "mcp.lock.json", "approved.json"]).code(0);
    let pinned = artifact(dir, "approved.json");
    eprintln!("artifact of {id} {approved}: {pinned:#}");
    let words = |version: &str| command(version);
    // The same version again: it holds, through verify and through the guard.
    export(dir, "again.json", &first).code(0);
    mcppin(dir, &["verify", "--lock", "mcp.lock.json", "again.json"]).code(0);
    let held = words(approved);
    let held: Vec<&str> = held.iter().map(String::as_str).collect();
    guarded(dir, id, &held, &first)
        .code(0)
        .stdout_has(r#""tools":["#);

    let second = environment(dir, &[("VERSION", next)]);
    export(dir, "manifest.json", &second).code(0);
    let verify = mcppin(dir, &["verify", "--lock", "mcp.lock.json", "manifest.json"]);
    verify
        .code(1)
        .stdout_has(&format!("artifact-changed [gated]: {id}\n"));
    for absent in ["tool-", "launch-changed"] {
        assert!(!verify.stdout.contains(absent), "{}", verify.stdout);
    }
    let moved = words(next);
    let moved: Vec<&str> = moved.iter().map(String::as_str).collect();
    let refused = guarded(dir, id, &moved, &second);
    refused
        .code(1)
        .stderr_has(
            "mcppin-guard: artifact-changed: the server runs another artifact than the lock \
             approved",
        )
        .stdout_has(
            "mcppin-guard refused initialize: the server runs another artifact than approved \
             (artifact-changed)",
        );
    assert!(
        !refused.stdout.contains(r#""tools":["#),
        "{}",
        refused.stdout
    );
    pinned
}

#[test]
#[ignore = "slow: a real npx install from the npm registry; .ci/run runs it"]
fn npx_pins_every_package_of_a_published_server_and_sees_another_version() {
    let dir = Dir::new();
    let spec = format!("{MEMORY}@${{VERSION}}");
    dir.write(
        "mcp.json",
        format!(
            "{:#}\n",
            json!({"mcpServers": {"memory": {"command": "npx", "args": ["-y", spec]}}})
        ),
    );
    let command = |version: &str| vec!["npx".into(), "-y".into(), format!("{MEMORY}@{version}")];
    let pinned = another_version_behind_the_same_launch(
        &dir,
        "memory",
        command,
        MEMORY_APPROVED,
        MEMORY_NEXT,
    );
    assert_eq!(pinned["kind"], "npm", "{pinned}");
    let packages = pinned["packages"].as_array().expect("packages");
    assert!(packages.len() > 10, "{pinned}");
    let server = packages
        .iter()
        .find(|p| p["name"] == MEMORY)
        .unwrap_or_else(|| panic!("{MEMORY} is not recorded: {pinned}"));
    assert_eq!(server["version"], MEMORY_APPROVED);
    for package in packages {
        let integrity = package["integrity"].as_str().unwrap_or_default();
        assert!(integrity.starts_with("sha512-"), "{package}");
    }
}

#[test]
#[ignore = "slow: a real uvx install from PyPI; .ci/run runs it"]
fn uvx_pins_every_distribution_of_a_published_server_and_sees_another_version() {
    let dir = Dir::new();
    let version = mcppin_testkit::output(Command::new("uv").arg("--version"))
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    assert!(
        version.starts_with("uv 0.13.9"),
        "uv 0.13.9 is needed on PATH (found {version:?}): python3 -m pip install uv==0.13.9 \
         (a step of .ci/run)"
    );
    let from = format!("{TIME}==${{VERSION}}");
    dir.write(
        "mcp.json",
        format!(
            "{:#}\n",
            json!({"mcpServers": {"time": {"command": "uvx",
                "args": ["--from", from, TIME, "--local-timezone", "UTC"]}}})
        ),
    );
    let command = |version: &str| {
        [
            "uvx",
            "--from",
            &format!("{TIME}=={version}"),
            TIME,
            "--local-timezone",
            "UTC",
        ]
        .map(str::to_owned)
        .to_vec()
    };
    let pinned =
        another_version_behind_the_same_launch(&dir, "time", command, TIME_APPROVED, TIME_NEXT);
    assert_eq!(pinned["kind"], "pypi", "{pinned}");
    let dists = pinned["dists"].as_array().expect("dists");
    let server = dists
        .iter()
        .find(|d| d["name"] == TIME)
        .unwrap_or_else(|| panic!("{TIME} is not recorded: {pinned}"));
    assert_eq!(server["version"], TIME_APPROVED);
    // uv downloaded every wheel: each is pinned by the wheel's SHA-256 it recorded.
    for dist in dists {
        let hash = dist["hash"].as_str().unwrap_or_default();
        assert!(hash.starts_with("sha256:"), "{dist}");
    }
}

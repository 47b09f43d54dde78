//! A real `npx -y` install from a registry served by the test, given up on while it downloads:
//! the export stops npm with SIGTERM and waits `--kill-after` (npm rolls back its half-written
//! install meanwhile), and the user's npm cache still starts the server afterwards.
//!
//! An export that gave up during a cold `npx -y` install killed npm mid-install and
//! left a cache that broke the server for the user's own client.
//!
//! The test never skips: without `npm` and `npx` on PATH it fails saying so.

mod util;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use mcppin_testkit::npm::{self, Registry};
use util::{Dir, Run, json_string};

const NAME: &str = "slow-mcp-server";
const VERSION: &str = "1.0.0";

/// Runs `command` for at most `limit`, killing it past that.
fn run_bounded(command: &mut Command, limit: Duration) -> Run {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e} (npm and npx must be on PATH)"));
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{command:?} ran longer than {limit:?}");
        }
        thread::sleep(Duration::from_millis(50));
    }
    Run::from_output(&child.wait_with_output().expect("output"))
}

/// Packs the package with `npm pack`: the small server, and incompressible bytes that make
/// the download long enough to stall in the middle of.
fn pack(dir: &Dir) -> npm::Package {
    let mut padding = vec![0u8; 4 << 20];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for byte in &mut padding {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *byte = x.to_le_bytes()[0];
    }
    npm::pack(
        dir.path(),
        NAME,
        VERSION,
        npm::SERVER_JS,
        &[("padding.bin", &padding)],
    )
}

/// A Claude Desktop configuration running `npx -y slow-mcp-server@1.0.0` against `registry`,
/// with the npm cache in `cache`.
fn config(dir: &Dir, registry: &str, cache: &Path) {
    dir.write(
        "claude_desktop_config.json",
        format!(
            r#"{{"mcpServers": {{"slow": {{"command": "npx", "args": ["-y", "{NAME}@{VERSION}"],
                "env": {{"npm_config_registry": {}, "npm_config_cache": {},
                         "npm_config_update_notifier": "false", "npm_config_audit": "false",
                         "npm_config_fund": "false"}}}}}}}}"#,
            json_string(&format!("{registry}/")),
            json_string(&cache.to_string_lossy())
        ),
    );
}

fn export(dir: &Dir, args: &[&str]) -> Run {
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcppin-export"));
    command
        .args([
            "--config",
            "claude_desktop_config.json",
            "-o",
            "manifest.json",
        ])
        .args(args)
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", npm::path_var())
        .env("HOME", &home);
    run_bounded(&mut command, Duration::from_secs(240))
}

/// The locks npm holds on its `npx` install directories (`_npx/<hash>/concurrency.lock`): one
/// left behind makes the next `npx` of that package wait a minute for it to go stale.
fn npx_locks(cache: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(cache.join("_npx")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.path().join("concurrency.lock"))
        .filter(|lock| lock.exists())
        .collect()
}

/// Starts a registry and a configuration of the package in a fresh directory.
fn setup() -> (Dir, Registry, PathBuf) {
    let dir = Dir::new();
    let registry = Registry::start(&[pack(&dir)]);
    let cache = dir.path().join("npm-cache");
    config(&dir, &registry.url, &cache);
    (dir, registry, cache)
}

/// The first export: a cold start whose download is slow, given up on at --start-timeout
/// while npm is unpacking; npm's download finishes 8 s after it asked. `kill_after` is the
/// `--kill-after` given, or none for the export's default.
fn give_up_mid_install(
    dir: &Dir,
    registry: &Registry,
    cache: &Path,
    kill_after: Option<&str>,
) -> Run {
    registry.state.hold_ms.store(8000, Ordering::SeqCst);
    let mut args = vec!["--start-timeout", "4s"];
    if let Some(kill_after) = kill_after {
        args.extend(["--kill-after", kill_after]);
    }
    let run = export(dir, &args);
    run.code(3).stderr_has(
        "server \"slow\" could not be captured: no answer to initialize within 4s (raise it \
         with --start-timeout",
    );
    assert!(!dir.exists("manifest.json"));
    assert!(
        registry.state.held.load(Ordering::SeqCst) >= 1,
        "npm never reached the download: the test gave up on nothing\n{}",
        run.stderr
    );
    assert_eq!(
        processes_mentioning(&cache.to_string_lossy()),
        Vec::<i32>::new(),
        "npm outlived the export"
    );
    registry.state.hold_ms.store(0, Ordering::SeqCst);
    run
}

/// Every process whose environment mentions `needle` (each test's npm cache is its own).
fn processes_mentioning(needle: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if String::from_utf8_lossy(&environ).contains(needle) {
            found.push(pid);
        }
    }
    found
}

#[test]
fn an_npx_install_given_up_on_leaves_a_cache_that_still_starts_the_server() {
    // With the default --kill-after: the one users get must be long enough for npm.
    let (dir, registry, cache) = setup();
    give_up_mid_install(&dir, &registry, &cache, None);
    // npm finished its download, rolled back and exited on SIGTERM before SIGKILL: it left no
    // lock (SIGKILL mid-unpack leaves one, as the next test shows), so the next npx of the
    // package neither waits for it to go stale nor finds a half-written package.
    assert_eq!(
        npx_locks(&cache),
        Vec::<PathBuf>::new(),
        "npm left its lock"
    );

    // The same cache, the registry now quick: the server starts and is captured.
    let run = export(&dir, &[]);
    run.code(0);
    let manifest = String::from_utf8(dir.read("manifest.json")).expect("utf-8");
    assert!(manifest.contains("\"echo\""), "{manifest}");
    assert!(registry.state.served.load(Ordering::SeqCst) >= 1);
}

#[test]
fn a_kill_after_too_short_for_npm_leaves_its_install_locked() {
    // What --kill-after's default protects: npm killed by SIGKILL while it unpacks leaves
    // its lock and a half-written package behind.
    let (dir, registry, cache) = setup();
    give_up_mid_install(&dir, &registry, &cache, Some("1s"));
    assert_eq!(npx_locks(&cache).len(), 1, "npm cleaned up after all");
}

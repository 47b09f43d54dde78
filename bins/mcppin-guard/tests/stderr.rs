//! The server's stderr through the real guard: passed on live, each line escaped and prefixed
//! with the server id, a line without end cut and its memory bounded.

mod util;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::json;
use util::{Dir, Expect, counter_surface, initialize, initialized, request};

/// The guard's command line for server `fixture` started through `sh -c SCRIPT`, where the
/// script ends by executing the fixture server (`$0`).
fn through_shell(script: &str) -> Vec<String> {
    let fixture = mcppin_fixture::locate("guard-fixture");
    [
        "--lock",
        "mcp.lock.json",
        "--server",
        "fixture",
        "--",
        "/bin/sh",
        "-c",
    ]
    .into_iter()
    .map(String::from)
    .chain([
        format!("{script}; exec \"$0\" --mode counter"),
        fixture.display().to_string(),
    ])
    .collect()
}

/// Kills `pid` if it still runs after two minutes: a guard that withholds the lines a test
/// waits for then fails the test instead of hanging it. Not a timing assertion: a passing run
/// never gets near it.
fn watchdog(pid: u32) {
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(120));
        let _ = mcppin_testkit::status(Command::new("kill").args(["-KILL", &pid.to_string()]));
    });
}

#[test]
fn the_servers_stderr_is_passed_on_escaped_and_prefixed() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let args = through_shell(r"printf '\033[2J\033[31mred\033[0m \033]0;owned\007 <U+0041>\n' >&2");
    let input = [
        initialize(1),
        initialized(),
        request(2, "tools/list", json!({})),
    ];
    let run = dir.run_guard(&args, &input);
    run.code(0)
        .lines(&[Expect::Result(json!(1)), Expect::Result(json!(2))])
        .stderr_has(
            "[fixture] <U+001B>[2J<U+001B>[31mred<U+001B>[0m <U+001B>]0;owned<U+0007> \
             <U+003C>U+0041>\n",
        )
        .stderr_has("[fixture] fixture: ready\n");
    assert!(
        !run.stderr.contains('\u{1b}') && !run.stderr.contains('\u{7}'),
        "raw escapes reached the terminal: {:?}",
        run.stderr
    );
}

#[test]
fn the_servers_stderr_comes_as_it_is_written() {
    // The line arrives while the session is open, not when it ends: the client's input stays
    // open until the server's line has been read from the guard's stderr.
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
        .args(through_shell("echo 'starting up' >&2"))
        .current_dir(dir.path())
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    watchdog(child.id());
    let stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().expect("a line before the end").unwrap();
    assert_eq!(first, "[fixture] starting up");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_server_id_is_escaped_in_the_prefix() {
    let dir = Dir::new();
    let hostile = "fix\u{1b}[2Jture";
    let manifest = json!({"schema_version": 2, "complete": true, "servers": [
        {"id": hostile, "reported_name": "mcppin-fixture", "tools": counter_surface()}]});
    let manifest = mcppin_core::manifest::Manifest::parse(manifest.to_string().as_bytes()).unwrap();
    let lock = mcppin_core::lockfile::Lockfile::approve(None, &manifest, &[]).unwrap();
    dir.write("mcp.lock.json", lock.to_bytes());
    let mut args = through_shell("true");
    args[3] = hostile.to_owned();
    let run = dir.run_guard(&args, &[initialize(1)]);
    run.code(0)
        .stderr_has("[fix<U+001B>[2Jture] fixture: ready");
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
}

#[test]
fn a_stderr_line_without_end_is_cut_and_memory_stays_bounded() {
    // 256 MiB on one line, then a newline and a last line. A guard that held the line would
    // grow by as much; the relay keeps at most 16 KiB of it.
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
        .args(through_shell(
            "head -c 268435456 /dev/zero | tr '\\0' x >&2; echo >&2; echo after >&2",
        ))
        .current_dir(dir.path())
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    watchdog(child.id());
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let cut = lines.next().unwrap().unwrap();
    assert!(cut.starts_with("[fixture] xxxx"), "{}", &cut[..40]);
    assert!(
        cut.ends_with(" [line cut: longer than 16384 bytes]"),
        "{}",
        &cut[cut.len() - 60..]
    );
    assert_eq!(cut.len(), "[fixture] ".len() + 16384 + 36);
    assert_eq!(lines.next().unwrap().unwrap(), "[fixture] after");
    // The guard is still running: its peak memory is what it needed for the line.
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let peak_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    assert!(peak_kib < 64 * 1024, "the guard peaked at {peak_kib} KiB");
    writeln!(stdin, "{}", initialize(1)).unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

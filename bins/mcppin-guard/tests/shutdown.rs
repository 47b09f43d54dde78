//! The end of a session through the real binary: bounded however the server behaves, and the
//! client's last words are judged like the others (docs/guard.md, "Shutdown").
//!
//! Every run goes through [`Dir::run_guard_bounded`]: a guard that hangs is killed and the
//! test fails, it never holds the test run.

mod util;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use util::{Dir, Expect, HANG, call, counter_surface, initialize, request, running, wait_for_pid};

/// The guard's command line (refuse mode) running `script` under `/bin/sh` as the server.
fn shell(script: &str) -> Vec<String> {
    ["--lock", "mcp.lock.json", "--server", "fixture", "--"]
        .into_iter()
        .chain(["/bin/sh", "-c", script])
        .map(String::from)
        .collect()
}

/// The guard's command line running the fixture server (honest, counting surface).
fn fixture() -> Vec<String> {
    ["--lock", "mcp.lock.json", "--server", "fixture", "--"]
        .into_iter()
        .map(String::from)
        .chain([
            mcppin_fixture::locate_example("mcppin-fixture")
                .display()
                .to_string(),
            "--mode".to_owned(),
            "counter".to_owned(),
        ])
        .collect()
}

/// Sends SIGKILL to process `pid` if it still runs (cleanup after a failed check).
fn kill(pid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// Waits up to [`HANG`] for process `pid` to stop running; returns whether it did.
fn gone(pid: u32) -> bool {
    let started = Instant::now();
    while running(pid) {
        if started.elapsed() > HANG {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

#[test]
fn a_server_that_stops_reading_does_not_stall_the_end_of_the_session() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    // The server never reads its stdin and ignores its end: the guard's writes to it fill the
    // pipe and block, and the client's end of input must still start the shutdown order.
    let script = "echo $$ > server.pid; exec sleep 60";
    let mut input = Vec::new();
    let pad = "x".repeat(1000);
    for _ in 0..100 {
        let notification =
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"pad": pad}});
        input.extend_from_slice(notification.to_string().as_bytes());
        input.push(b'\n');
    }
    let run = dir.run_guard_bounded(&shell(script), input);
    run.code(0);
    let server = wait_for_pid(dir.path(), "server.pid");
    let stopped = gone(server);
    kill(server);
    assert!(stopped, "the server {server} outlived the session");
}

#[test]
fn a_daemon_holding_the_servers_output_does_not_hold_the_guard() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    // The server answers, then exits when its input ends; a daemon it started in a session of
    // its own (out of reach of signals to the server's group) keeps its stdout open.
    let script = "setsid sleep 60 & echo $! > daemon.pid; read line; \
                  printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}'; cat > /dev/null";
    let input = format!("{}\n", request(1, "ping", json!({})));
    let run = dir.run_guard_bounded(&shell(script), input.into_bytes());
    let daemon = wait_for_pid(dir.path(), "daemon.pid");
    kill(daemon);
    run.code(0).lines(&[Expect::Result(json!(1))]);
}

#[test]
fn a_daemon_in_the_servers_group_is_stopped_with_it() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    // The same daemon left in the server's process group: the group's signals reach it.
    let script = "sleep 60 & echo $! > daemon.pid; read line; \
                  printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}'; cat > /dev/null";
    let input = format!("{}\n", request(1, "ping", json!({})));
    let run = dir.run_guard_bounded(&shell(script), input.into_bytes());
    let daemon = wait_for_pid(dir.path(), "daemon.pid");
    let stopped = gone(daemon);
    kill(daemon);
    run.code(0).lines(&[Expect::Result(json!(1))]);
    assert!(stopped, "the daemon {daemon} outlived the session");
}

/// The client's bytes: `lines`, each ended by a newline, then `last` without one.
fn unterminated(lines: &[Value], last: &Value) -> Vec<u8> {
    let mut bytes = Vec::new();
    for line in lines {
        bytes.extend_from_slice(line.to_string().as_bytes());
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(last.to_string().as_bytes());
    bytes
}

/// The answer to `id` among the guard's output.
fn answer(run: &util::Run, id: u64) -> Value {
    run.messages()
        .into_iter()
        .find(|m| m["id"] == json!(id))
        .unwrap_or_else(|| panic!("no answer to {id}\n{}\n{}", run.stdout, run.stderr))
}

#[test]
fn a_last_client_line_without_a_newline_is_judged_and_refused() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let input = unterminated(&[initialize(1)], &call(2, "exfiltrate"));
    let run = dir.run_guard_bounded(&fixture(), input);
    run.code(0);
    assert!(answer(&run, 1).get("result").is_some(), "{}", run.stdout);
    assert_eq!(
        answer(&run, 2)["error"]["code"],
        json!(-32001),
        "{}",
        run.stdout
    );
    assert_eq!(run.messages().len(), 2, "{}", run.stdout);
    assert!(!run.stderr.contains("server"), "{}", run.stderr);
}

#[test]
fn a_last_client_line_without_a_newline_is_forwarded_and_answered() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let input = unterminated(&[initialize(1)], &request(2, "tools/list", json!({})));
    let run = dir.run_guard_bounded(&fixture(), input);
    run.code(0)
        .lines(&[Expect::Result(json!(1)), Expect::Result(json!(2))]);
    assert_eq!(run.stderr, "", "nothing to report");
}

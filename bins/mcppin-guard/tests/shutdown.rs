//! The end of a session through the real binary: bounded however the server behaves, and the
//! client's last words are judged like the others (docs/guard.md, "Shutdown").
//!
//! Every run goes through [`Dir::run_guard_bounded`]: a guard that hangs is killed and the
//! test fails, it never holds the test run.

mod util;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use util::{
    ClientEnd, Dir, Expect, HANG, call, counter_surface, initialize, request, running, wait_for_pid,
};

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
            mcppin_fixture::locate("guard-fixture")
                .display()
                .to_string(),
            "--mode".to_owned(),
            "counter".to_owned(),
        ])
        .collect()
}

/// Sends SIGKILL to process `pid` if it still runs (cleanup after a failed check).
fn kill(pid: u32) {
    let _ = mcppin_testkit::status(
        Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .stderr(Stdio::null()),
    );
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
fn a_server_that_exits_mid_session_leaving_a_daemon_on_its_output_exits_3() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    // The client stays; the server answers and exits on its own, and the daemon keeps its
    // stdout open: the guard must notice the server is gone.
    let script = "setsid sleep 60 & echo $! > daemon.pid; read line; \
                  printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}'; exit 0";
    let input = format!("{}\n", request(1, "ping", json!({})));
    let run = dir.run_guard_bounded_as(&shell(script), input.into_bytes(), ClientEnd::StaysOpen);
    let daemon = wait_for_pid(dir.path(), "daemon.pid");
    kill(daemon);
    run.code(3)
        .lines(&[Expect::Result(json!(1))])
        .stderr_has("the server exited while the session was open");
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

#[test]
fn the_server_dies_with_a_guard_killed_by_sigkill() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let mut guard = Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
        .args(shell("echo $$ > server.pid; exec sleep 60"))
        .current_dir(dir.path())
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcppin-guard");
    // Held open: the guard must not see its client leave, only the kill.
    let client = guard.stdin.take();
    let server = wait_for_pid(dir.path(), "server.pid");
    assert!(running(server));
    guard.kill().expect("SIGKILL the guard");
    let _ = guard.wait();
    drop(client);
    let stopped = gone(server);
    kill(server);
    assert!(stopped, "the server {server} outlived the guard");
}

#[test]
fn the_server_runs_its_command_with_the_arguments_and_environment_given() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    // What the server sees of itself: its arguments, its environment, and that its stdin and
    // stdout are the guard's pipes (it answers a request it read).
    let script = "printf '%s|' \"$0\" \"$@\" > argv; env > env; read line; \
                  printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}'; cat > /dev/null";
    let mut args = shell(script);
    args.extend(["name", "a b", ""].map(String::from));
    let input = format!("{}\n", request(1, "ping", json!({})));
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcppin-guard"));
    command
        .args(&args)
        .current_dir(dir.path())
        .env_clear()
        .env("ONLY_THIS", "value")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn mcppin-guard");
    {
        use std::io::Write;
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(input.as_bytes()).expect("write");
    }
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(dir.read("argv"), "name|a b||");
    let mut names: Vec<String> = dir
        .read("env")
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_owned()))
        .filter(|k| !matches!(k.as_str(), "PWD" | "SHLVL" | "_" | "OLDPWD"))
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["ONLY_THIS"]);
}

#[test]
fn a_server_that_cannot_be_executed_exits_3() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    dir.write("server", "#!/bin/sh\n");
    let args: Vec<String> = [
        "--lock",
        "mcp.lock.json",
        "--server",
        "fixture",
        "--",
        "./server",
    ]
    .map(String::from)
    .to_vec();
    let input = format!("{}\n", initialize(1));
    dir.run_guard_bounded(&args, input.into_bytes())
        .code(3)
        .stderr_has("mcppin-guard: cannot start ./server: Permission denied");
}

#[test]
fn the_way_the_server_is_started_is_not_an_option() {
    let out =
        mcppin_testkit::output(Command::new(env!("CARGO_BIN_EXE_mcppin-guard")).arg("--help"))
            .expect("run mcppin-guard --help");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--max-message"), "{help}");
    assert!(!help.contains(mcppin_client::TRAMPOLINE_ARG), "{help}");
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
    // Only the server's own line, passed on (docs/guard.md, "The server's stderr").
    assert_eq!(
        run.stderr, "[fixture] fixture: ready\n",
        "nothing to report"
    );
}

//! `mcppin-guard hook`: Claude Code's PreToolUse input through the real binary, every way a call
//! is allowed or blocked, and the state a running guard writes for it (`--state`).

mod util;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};

use mcppin_core::Digest;
use serde_json::{Value, json};
use util::{ClientEnd, Dir, Run, call, counter_surface, initialize, request};

/// Claude Code's PreToolUse input for `tool_name`, as its documentation shows it.
fn input(tool_name: &str) -> Value {
    json!({
        "session_id": "abc123",
        "transcript_path": "/home/u/.claude/projects/p/abc123.jsonl",
        "cwd": "/home/u/p",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool_name,
        "tool_input": {"text": "hello"},
        "tool_use_id": "toolu_01ABC123"
    })
}

/// Runs the hook with `args` and `stdin`, its input then closed.
fn hook(dir: &Dir, args: &[&str], stdin: &[u8]) -> Run {
    hook_as(dir, args, stdin, ClientEnd::Closes)
}

fn hook_as(dir: &Dir, args: &[&str], stdin: &[u8], end: ClientEnd) -> Run {
    mcppin_testkit::run(
        Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
            .arg("hook")
            .args(args)
            .current_dir(dir.path())
            .env_clear(),
        stdin.to_vec(),
        end,
    )
}

fn allowed(run: &Run) {
    run.code(0);
    assert_eq!(
        (run.stdout.as_str(), run.stderr.as_str()),
        ("", ""),
        "{run:?}"
    );
}

fn blocked<'r>(run: &'r Run, reason: &str) -> &'r Run {
    run.code(2)
        .stderr_has("mcppin-guard hook: blocked: ")
        .stderr_has(reason);
    assert_eq!(run.stdout, "");
    run
}

#[test]
fn an_approved_tool_is_allowed_without_a_word() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let stdin = input("mcp__fixture__summarize").to_string();
    allowed(&hook(&dir, &["--lock", "mcp.lock.json"], stdin.as_bytes()));
    // With the configured name Claude Code 2.1.328 sends beside it.
    let mut named = input("mcp__fixture__summarize");
    named["mcp_server"] = json!({"name": "fixture", "source": "user"});
    allowed(&hook(
        &dir,
        &["--lock", "mcp.lock.json"],
        named.to_string().as_bytes(),
    ));
}

#[test]
fn a_call_nobody_approved_is_blocked() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let lock = ["--lock", "mcp.lock.json"];
    let run = |tool: &str| hook(&dir, &lock, input(tool).to_string().as_bytes());
    blocked(
        &run("mcp__fixture__delete_everything"),
        "server \"fixture\" has no approved tool of this name",
    )
    .stderr_lacks("delete_everything");
    blocked(
        &run("mcp__other__summarize"),
        "no server of the lockfile is named so",
    );
    blocked(&run("Bash"), "not an MCP tool");
    let mut other_server = input("mcp__fixture__summarize");
    other_server["mcp_server"] = json!({"name": "fixture.old"});
    blocked(
        &hook(&dir, &lock, other_server.to_string().as_bytes()),
        "no server of the lockfile is named so",
    );
}

#[test]
fn a_name_two_servers_could_have_is_blocked() {
    let dir = Dir::new();
    let manifest = json!({"schema_version": 2, "complete": true, "servers": [
        {"id": "my.docs", "tools": [{"name": "search"}]},
        {"id": "my_docs", "tools": [{"name": "search"}]}]});
    let manifest = mcppin_core::manifest::Manifest::parse(manifest.to_string().as_bytes()).unwrap();
    let lock = mcppin_core::lockfile::Lockfile::approve(None, &manifest, &[]).unwrap();
    dir.write("mcp.lock.json", lock.to_bytes());
    let stdin = input("mcp__my_docs__search").to_string();
    blocked(
        &hook(&dir, &["--lock", "mcp.lock.json"], stdin.as_bytes()),
        "stands for 2 approved tools",
    );
    let mut named = input("mcp__my_docs__search");
    named["mcp_server"] = json!({"name": "my.docs"});
    allowed(&hook(
        &dir,
        &["--lock", "mcp.lock.json"],
        named.to_string().as_bytes(),
    ));
}

#[test]
fn an_input_that_cannot_be_read_is_blocked() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let lock = ["--lock", "mcp.lock.json"];
    blocked(&hook(&dir, &lock, b""), "the hook input is not JSON");
    blocked(
        &hook(&dir, &lock, b"{\"tool_name\": "),
        "the hook input is not JSON",
    );
    blocked(&hook(&dir, &lock, b"[1]"), "not a JSON object");
    blocked(
        &hook(&dir, &lock, br#"{"hook_event_name": "PreToolUse"}"#),
        "no string \"tool_name\"",
    );
    let mut post = input("mcp__fixture__summarize");
    post["hook_event_name"] = json!("PostToolUse");
    blocked(
        &hook(&dir, &lock, post.to_string().as_bytes()),
        "not PreToolUse",
    );
    blocked(
        &hook(
            &dir,
            &lock,
            br#"{"hook_event_name": "PreToolUse", "tool_name": "mcp__fixture__summarize", "tool_name": "mcp__x__y"}"#,
        ),
        "\"tool_name\" more than once",
    );
    // Control characters in what is echoed are escaped.
    let mut odd = input("mcp__fixture__summarize");
    odd["hook_event_name"] = json!("Pre\u{1b}[2J");
    let run = hook(&dir, &lock, odd.to_string().as_bytes());
    blocked(&run, "<U+001B>[2J");
    assert!(!run.stderr.contains('\u{1b}'));
}

#[test]
fn a_check_that_cannot_start_is_a_block() {
    // A user at its limit of processes (a pids cgroup at its max, a runaway server): the
    // thread the hook decides on cannot start. The exit code of a panic would let the call
    // through. The limit binds no root: the hook runs as nobody, one process allowed.
    use std::os::unix::fs::PermissionsExt;

    let dir = Dir::new();
    dir.lock(&counter_surface());
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let stdin = input("mcp__fixture__summarize").to_string();
    let as_nobody = |processes: &str| {
        mcppin_testkit::run(
            Command::new("prlimit")
                .arg(format!("--nproc={processes}:{processes}"))
                .args([
                    "setpriv",
                    "--reuid=65534",
                    "--regid=65534",
                    "--clear-groups",
                ])
                .arg(env!("CARGO_BIN_EXE_mcppin-guard"))
                .args(["hook", "--lock", "mcp.lock.json"])
                .current_dir(dir.path())
                .env_clear(),
            stdin.clone().into_bytes(),
            ClientEnd::Closes,
        )
    };
    // The approved tool: allowed with room for the thread, blocked without.
    allowed(&as_nobody("1000"));
    blocked(&as_nobody("1"), "the check could not start: ");
}

#[test]
fn a_check_the_system_ends_for_want_of_memory_is_a_block() {
    // A process that cannot get memory is ended by the system (an abort, or the kernel's kill),
    // with an exit code Claude Code takes as leave to make the call. RLIMIT_DATA bounds the
    // heap and private mappings, not the binary's own pages.
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let stdin = input("mcp__fixture__summarize").to_string();
    let limited = |lock: &str| {
        mcppin_testkit::run(
            Command::new("prlimit")
                .arg(format!("--data={}", 64 << 20))
                .arg(env!("CARGO_BIN_EXE_mcppin-guard"))
                .args(["hook", "--lock", lock])
                .current_dir(dir.path())
                .env_clear(),
            stdin.clone().into_bytes(),
            ClientEnd::Closes,
        )
    };
    // Room for the check of the approved tool: allowed.
    allowed(&limited("mcp.lock.json"));
    // A lockfile of 20 MiB is read, but its ten million numbers cannot be held in 64 MiB.
    let mut huge = b"[".to_vec();
    huge.extend(b"0,".repeat(10 << 20));
    huge.extend(b"0]");
    std::fs::write(dir.path().join("huge.json"), huge).unwrap();
    blocked(
        &limited("huge.json"),
        "the check ended without a decision (ended by signal 6, as a process that cannot get \
         memory aborts)",
    );
}

#[test]
fn signals_where_the_hook_starts_never_let_a_call_through() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let hook_under = |wrapper: &[&str], tool: &str| {
        let mut command = Command::new(wrapper[0]);
        command
            .args(&wrapper[1..])
            .arg(env!("CARGO_BIN_EXE_mcppin-guard"))
            .args(["hook", "--lock", "mcp.lock.json"])
            .current_dir(dir.path())
            .env_clear();
        let stdin = input(&format!("mcp__fixture__{tool}")).to_string();
        mcppin_testkit::run(&mut command, stdin.into_bytes(), ClientEnd::Closes)
    };
    // SIGCHLD ignored by whoever started the hook: the system would reap the check unseen.
    allowed(&hook_under(&["env", "--ignore-signal=CHLD"], "summarize"));
    blocked(
        &hook_under(&["env", "--ignore-signal=CHLD"], "delete_everything"),
        "nobody approved it",
    );
    // Standard error a file over the file-size limit: SIGXFSZ at the reason would end the
    // hook with exit 153. The reason cannot be written, the call is blocked all the same.
    dir.write(
        "input.json",
        input("mcp__fixture__delete_everything").to_string(),
    );
    let status = mcppin_testkit::status(
        Command::new("prlimit")
            .args(["--fsize=0", env!("CARGO_BIN_EXE_mcppin-guard")])
            .args(["hook", "--lock", "mcp.lock.json"])
            .current_dir(dir.path())
            .env_clear()
            .stdin(std::fs::File::open(dir.path().join("input.json")).unwrap())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("hook.log")).unwrap()),
    )
    .unwrap();
    assert_eq!(status.code(), Some(2), "{status:?}");
}

#[test]
fn only_an_allowed_call_exits_0_not_help_nor_a_check_started_by_another() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let approved = input("mcp__fixture__summarize").to_string();
    // Settings that name the hook with --help or --version must not allow every call.
    for flag in ["--help", "--version"] {
        let run = hook(
            &dir,
            &["--lock", "mcp.lock.json", flag],
            approved.as_bytes(),
        );
        run.code(2).stdout_has("mcppin-guard");
    }
    // The check's own flag, given with a process id that is not its parent: no decision.
    blocked(
        &hook(
            &dir,
            &["--lock", "mcp.lock.json", "--decide-for", "1"],
            approved.as_bytes(),
        ),
        "the hook process that started the check is gone",
    );
    allowed(&hook(
        &dir,
        &["--lock", "mcp.lock.json"],
        approved.as_bytes(),
    ));
}

/// The hook on an input that never ends, once its check runs (its handlers then in place):
/// the hook and the process id of its check.
#[expect(
    clippy::zombie_processes,
    reason = "the hook is returned, and waited for, or killed and waited for on a hang"
)]
fn hook_with_its_check_running(dir: &Dir) -> (Child, u32) {
    let mut hook = Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
        .args(["hook", "--lock", "mcp.lock.json", "--timeout", "1h"])
        .current_dir(dir.path())
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let children = format!("/proc/{0}/task/{0}/children", hook.id());
    let started = std::time::Instant::now();
    loop {
        let listed = std::fs::read_to_string(&children).unwrap_or_default();
        if let Some(pid) = listed
            .split_whitespace()
            .next()
            .and_then(|p| p.parse().ok())
        {
            return (hook, pid);
        }
        if started.elapsed() > mcppin_testkit::HANG {
            let _ = hook.kill();
            let _ = hook.wait();
            panic!("no check process started");
        }
        std::thread::yield_now();
    }
}

#[test]
fn a_signal_that_would_end_the_hook_blocks_instead() {
    // A timer armed across exec (SIGALRM), an input set to signal (SIGIO), a wrapper's SIGTERM:
    // each would end the hook with a code Claude Code takes as leave to make the call.
    use rustix::process::{Pid, Signal, kill_process};
    let dir = Dir::new();
    dir.lock(&counter_surface());
    for signal in [
        Signal::ALARM,
        Signal::IO,
        Signal::TERM,
        Signal::HUP,
        Signal::USR1,
        Signal::XCPU,
    ] {
        let (mut hook, _) = hook_with_its_check_running(&dir);
        let pid = Pid::from_raw(i32::try_from(hook.id()).unwrap()).unwrap();
        kill_process(pid, signal).unwrap();
        let status = mcppin_testkit::wait(&mut hook).unwrap();
        assert_eq!(status.code(), Some(2), "{signal:?}: {status:?}");
    }
}

#[test]
fn a_check_ends_with_the_hook_process() {
    // Claude Code kills a hook that outlasts its own timeout: the check must not live on,
    // reading an input that never ends.
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let (mut hook, check) = hook_with_its_check_running(&dir);
    assert!(mcppin_testkit::running(check));
    hook.kill().unwrap();
    hook.wait().unwrap();
    let started = std::time::Instant::now();
    while mcppin_testkit::running(check) {
        assert!(
            started.elapsed() < mcppin_testkit::HANG,
            "the check outlived the hook"
        );
        std::thread::yield_now();
    }
}

#[test]
fn a_timeout_too_long_for_the_clock_is_a_block_not_a_panic() {
    // Past what the clock can add, it once ended the hook in a panic (exit 101): leave to call.
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let approved = input("mcp__fixture__summarize").to_string();
    let run = |timeout: &str| {
        hook(
            &dir,
            &["--lock", "mcp.lock.json", "--timeout", timeout],
            approved.as_bytes(),
        )
    };
    blocked(&run("500000000000years"), "longer than 100 years");
    allowed(&run("100years"));
}

#[test]
fn an_input_that_never_ends_is_blocked_in_time() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let run = hook_as(
        &dir,
        &["--lock", "mcp.lock.json", "--timeout", "1s"],
        b"{\"hook_event_name\": ",
        ClientEnd::StaysOpen,
    );
    blocked(&run, "no decision within 1s (--timeout)");
}

#[test]
fn an_unreadable_approval_or_command_line_is_blocked() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let stdin = input("mcp__fixture__summarize").to_string();
    let stdin = stdin.as_bytes();
    blocked(
        &hook(&dir, &["--lock", "missing.json"], stdin),
        "cannot read missing.json",
    );
    let bob = format!(
        "{}/../../testdata/keys/test-bob.pem.pub",
        env!("CARGO_MANIFEST_DIR")
    );
    blocked(
        &hook(&dir, &["--lock", "mcp.lock.json", "--pubkey", &bob], stdin),
        "mcp.lock.json.sig: ",
    );
    blocked(
        &hook(
            &dir,
            &["--lock", "mcp.lock.json", "--min-serial", "2"],
            stdin,
        ),
        "approval serial below the floor",
    );
    // A signature that cannot be read blocks where a key requires one, and plays no part
    // without, as in the guard.
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("mcp.lock.json.sig")).unwrap();
    blocked(
        &hook(&dir, &["--lock", "mcp.lock.json", "--pubkey", &bob], stdin),
        "cannot read mcp.lock.json.sig: larger than 65536 bytes",
    );
    allowed(&hook(&dir, &["--lock", "mcp.lock.json"], stdin));
    std::fs::remove_file(dir.path().join("mcp.lock.json.sig")).unwrap();
    // A usage error blocks too: any other exit code would let the call through.
    blocked(&hook(&dir, &["--lock"], stdin), "a value is required");
    blocked(
        &hook(&dir, &["--lock", "mcp.lock.json", "--bogus"], stdin),
        "unexpected argument",
    );
    blocked(&hook(&dir, &[], stdin), "--lock");
    let run = hook(
        &dir,
        &["--lock", "mcp.lock.json", "--timeout", "x\u{1b}]0;pwn\u{7}"],
        stdin,
    );
    blocked(
        &run,
        "invalid value 'x<U+001B>]0;pwn<U+0007>' for '--timeout <DURATION>'",
    )
    .shows_nothing_raw();
    // Asked by a person: shown, and exit 2 all the same (a hook exits 0 only to allow).
    hook(&dir, &["--help"], b"")
        .code(2)
        .stdout_has("PreToolUse");
}

/// A guard in front of the counter fixture (quarantine mode) with `--state state`, driven one
/// request at a time.
struct Session {
    child: Child,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Session {
    fn start(dir: &Dir) -> Self {
        Self::start_in(dir, "state")
    }

    /// [`Session::start`] with its state in the directory `state`.
    fn start_in(dir: &Dir, state: &str) -> Self {
        std::fs::create_dir_all(dir.path().join(state)).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
            .args([
                "--lock",
                "mcp.lock.json",
                "--server",
                "fixture",
                "--mode",
                "quarantine",
            ])
            .args(["--state", state, "--"])
            .arg(mcppin_fixture::locate("guard-fixture"))
            .args(["--mode", "counter"])
            .current_dir(dir.path())
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcppin-guard");
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self { child, lines }
    }

    /// Sends `message` and reads up to its answer.
    fn ask(&mut self, message: &Value) -> Value {
        writeln!(self.child.stdin.as_mut().unwrap(), "{message}").unwrap();
        loop {
            let line = self.lines.next().expect("an answer").expect("a line");
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer.get("id") == message.get("id") && answer.get("method").is_none() {
                return answer;
            }
        }
    }

    /// Closes the client's end and waits for the guard (bounded by its own shutdown).
    fn end(self) -> i32 {
        self.end_with_stderr().0
    }

    /// [`Session::end`], with what the guard wrote to stderr (a few lines: read once it
    /// ended).
    fn end_with_stderr(mut self) -> (i32, String) {
        drop(self.child.stdin.take());
        for _ in self.lines.by_ref() {}
        let code = self.child.wait().unwrap().code().unwrap_or(-1);
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut stderr).unwrap();
        (code, stderr)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_state_that_can_no_longer_be_written_is_named_in_the_notation() {
    // The directory's name is the operator's, yet it can come from a checkout; a session whose
    // state cannot be written goes on, and says so once, the name escaped.
    let state = "st\u{1b}]0;pwn\u{7}\u{202e}";
    for gone in [false, true] {
        let dir = Dir::new();
        dir.lock(&counter_surface());
        let mut session = Session::start_in(&dir, state);
        session.ask(&initialize(1));
        if gone {
            std::fs::remove_dir_all(dir.path().join(state)).unwrap();
        }
        let listed = session.ask(&request(2, "tools/list", json!({})));
        assert!(listed["result"]["tools"].is_array(), "{listed}");
        // Written as the session goes (removed when it ends).
        assert_eq!(dir.path().join(state).join("fixture.json").exists(), !gone);
        let (code, stderr) = session.end_with_stderr();
        assert_eq!(code, 0, "{stderr}");
        assert!(
            !stderr.contains(['\u{1b}', '\u{7}', '\u{202e}']),
            "raw: {stderr:?}"
        );
        let said = "mcppin-guard: cannot write the log: cannot write the state: ";
        if gone {
            assert_eq!(stderr.matches(said).count(), 1, "{stderr}");
            assert!(
                stderr.contains("st<U+001B>]0;pwn<U+0007><U+202E>"),
                "{stderr}"
            );
        } else {
            assert!(!stderr.contains(said), "{stderr}");
        }
    }
}

#[test]
fn a_link_put_where_the_state_goes_is_replaced_never_followed() {
    // Whoever can write the state directory must not turn the guard's write into one of a file
    // elsewhere (as root: any file).
    let dir = Dir::new();
    dir.lock(&counter_surface());
    std::fs::create_dir(dir.path().join("state")).unwrap();
    dir.write("elsewhere", "keep");
    std::os::unix::fs::symlink("../elsewhere", dir.path().join("state/fixture.json")).unwrap();
    let mut session = Session::start(&dir);
    session.ask(&initialize(1));
    session.ask(&request(2, "tools/list", json!({})));
    let entry = std::fs::symlink_metadata(dir.path().join("state/fixture.json")).unwrap();
    assert!(entry.is_file(), "{entry:?}");
    // Put there again while the guard runs, to a pipe nobody writes: the guard that removes its
    // own state at the end neither reads through it (it would wait without end) nor removes it.
    let made = mcppin_testkit::status(Command::new("mkfifo").arg(dir.path().join("pipe"))).unwrap();
    assert!(made.success());
    std::fs::remove_file(dir.path().join("state/fixture.json")).unwrap();
    std::os::unix::fs::symlink("../pipe", dir.path().join("state/fixture.json")).unwrap();
    let (code, stderr) = session.end_with_stderr();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(dir.read("elsewhere"), "keep");
    let entry = std::fs::symlink_metadata(dir.path().join("state/fixture.json")).unwrap();
    assert!(entry.is_symlink(), "{entry:?}");
}

#[test]
fn the_guard_s_current_reading_decides_each_call() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let args = ["--lock", "mcp.lock.json", "--state", "state"];
    let check = |tool: &str| {
        hook(
            &dir,
            &args,
            input(&format!("mcp__fixture__{tool}"))
                .to_string()
                .as_bytes(),
        )
    };
    let mut session = Session::start(&dir);
    session.ask(&initialize(1));
    // Started, nothing listed yet: no tool is admitted.
    blocked(
        &check("summarize"),
        "did not admit \"summarize\" in its current reading of the list (catalog generation 0)",
    );
    session.ask(&request(2, "tools/list", json!({})));
    allowed(&check("summarize"));
    allowed(&check("read_text_file"));
    let state: Value = serde_json::from_str(&dir.read("state/fixture.json")).unwrap();
    assert_eq!(state["catalog_generation"], json!(1));
    assert_eq!(state["transport"], json!("stdio"));
    assert_eq!(state["pid"], json!(session.child.id()));
    // Three calls, and the server rewrites summarize: the next reading withholds it.
    for id in 3..=5 {
        session.ask(&call(id, "summarize"));
    }
    let listed = session.ask(&request(6, "tools/list", json!({})));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"summarize"), "{names:?}");
    blocked(
        &check("summarize"),
        "(catalog generation 2): withheld, or not listed yet",
    );
    allowed(&check("read_text_file"));
    // The guard stops: its state goes with it.
    assert_eq!(session.end(), 0);
    assert!(!dir.path().join("state/fixture.json").exists());
    blocked(
        &check("read_text_file"),
        "no state of the guard in front of server \"fixture\"",
    );
}

/// A state for server `fixture` under `lock_digest`, by process `pid`, admitting `summarize`
/// as approved in `dir`'s lockfile.
fn state(dir: &Dir, pid: u32, lock_digest: Digest) -> String {
    let lock =
        mcppin_core::lockfile::Lockfile::parse(dir.read("mcp.lock.json").as_bytes()).unwrap();
    let mcppin_core::lockfile::Pin::Digest(approved) =
        lock.servers["fixture"].tools["summarize"].pin().clone()
    else {
        panic!("a digest")
    };
    json!({
        "catalog_generation": 1, "lock_digest": lock_digest.to_string(),
        "observed_at": "2026-08-01T09:30:00.000Z", "pid": pid, "process_start": null,
        "run": "r1", "schema": "mcppin-guard-state", "schema_version": 1, "server": "fixture",
        "session_id": "r1", "tools": {"summarize": approved.to_string()}, "transport": "stdio"
    })
    .to_string()
}

#[test]
fn a_stale_or_unreadable_state_is_blocked() {
    let dir = Dir::new();
    let lock = dir.lock(&counter_surface());
    std::fs::create_dir(dir.path().join("state")).unwrap();
    let digest = mcppin_sign::lock_digest(&std::fs::read(lock).unwrap()).unwrap();
    let args = ["--lock", "mcp.lock.json", "--state", "state"];
    let stdin = input("mcp__fixture__summarize").to_string();
    let check = || hook(&dir, &args, stdin.as_bytes());
    // A running process (this test) holding it: the state holds.
    dir.write(
        "state/fixture.json",
        state(&dir, std::process::id(), digest),
    );
    allowed(&check());
    // Written under another lockfile.
    dir.write(
        "state/fixture.json",
        state(&dir, std::process::id(), Digest::of_bytes(b"x")),
    );
    blocked(&check(), "is stale: it was written under lockfile sha256:");
    // Its guard is gone: a process that ran and ended.
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    dir.write("state/fixture.json", state(&dir, pid, digest));
    blocked(&check(), "is stale: the guard that wrote it is not running");
    // Not a state.
    dir.write("state/fixture.json", "{\"schema\": \"mcppin-guard-state\"");
    blocked(&check(), "cannot be read");
    let mut extra: Value = serde_json::from_str(&state(&dir, std::process::id(), digest)).unwrap();
    extra["admitted_everything"] = json!(true);
    dir.write("state/fixture.json", extra.to_string());
    blocked(
        &check(),
        "/admitted_everything: not a member of the guard state",
    );
}

#[test]
fn a_state_directory_the_guard_cannot_write_is_refused_before_the_server_starts() {
    let dir = Dir::new();
    dir.lock(&counter_surface());
    let args: Vec<String> = [
        "--lock",
        "mcp.lock.json",
        "--server",
        "fixture",
        "--state",
        "missing/dir",
        "--log",
        "admission.jsonl",
        "--",
        "/bin/sh",
        "-c",
        "echo started > started",
    ]
    .map(String::from)
    .to_vec();
    dir.run_guard_bounded(&args, Vec::new())
        .code(2)
        .stderr_has("cannot write the state in missing/dir");
    assert_eq!(dir.read("started"), "");
    assert_eq!(dir.read("admission.jsonl"), "", "no run begun in the log");
}

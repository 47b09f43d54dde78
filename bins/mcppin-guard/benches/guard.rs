//! What the guard costs (docs/performance.md): a 100,000-message stdio session direct, through a
//! plain `cat` relay (the floor of any proxy) and through the guard; the added latency on a
//! 1,000-tool `tools/list` answer, warm and cold (the first of a session); the pre-call hook's
//! run; the guard's peak resident memory.
//!
//! Run with `cargo bench -p mcppin-guard --bench guard`; `-- --only
//! session|real|list|cold|hook|memory` runs one part; `-- --baseline /ABSOLUTE/PATH` adds
//! another build of `mcppin-guard` (an earlier commit's) as one more configuration of the
//! session, list and cold parts, so that a change is measured against what it replaces in the
//! same run. The server of most parts is this program itself (`--serve`): it answers each
//! request at once, so the numbers show the proxy and nothing else, the worst case for a proxy.
//! The `real` part runs the same kind of session against the reference `server-everything`
//! (its `echo` tool, under Node.js, as installed by `scripts/test`), which is what a session
//! costs when a real server answers. Configurations take turns (each repeat of a
//! session, each round trip of the list), so a disturbance on the machine falls on all of them.
use std::ffi::OsString;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use mcppin_core::lockfile::Lockfile;
use mcppin_core::manifest::Manifest;

/// Tools in the large `tools/list` answer.
const TOOLS: usize = 1_000;

/// How much to measure: the full run under `cargo bench`, a smoke run under `cargo test`.
#[derive(Clone, Copy)]
struct Sizes {
    /// Requests per session: each is answered, so a session is twice as many messages.
    requests: usize,
    /// `tools/list` round trips timed per configuration.
    list_rounds: usize,
    /// The size of the largest message in the memory run.
    big: usize,
    /// The size of the `tools/list` answer the guard reads strictly in the memory run.
    big_list: usize,
    /// Fresh sessions whose first `tools/list` answer is timed.
    cold_sessions: usize,
    /// Repeats of each session; the median is reported.
    repeats: usize,
    /// `echo` calls in a session with the reference server.
    real_calls: usize,
    /// Pre-call hook runs timed per configuration.
    hook_calls: usize,
}

const FULL: Sizes = Sizes {
    requests: 50_000,
    list_rounds: 500,
    big: 8 * 1024 * 1024,
    big_list: 14_000_000,
    cold_sessions: 30,
    repeats: 3,
    real_calls: 50_000,
    hook_calls: 300,
};

const SMOKE: Sizes = Sizes {
    requests: 200,
    list_rounds: 3,
    big: 64 * 1024,
    big_list: 64 * 1024,
    cold_sessions: 1,
    repeats: 1,
    real_calls: 20,
    hook_calls: 2,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--serve") {
        serve();
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return; // `cargo bench -- --list`
    }
    // `cargo bench` passes --bench; `cargo test --all-targets` runs this as a smoke test.
    let sizes = if args.iter().any(|a| a == "--bench") {
        FULL
    } else {
        SMOKE
    };
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    let part = |name: &str| only.is_none_or(|o| o == name);
    let baseline = args
        .iter()
        .position(|a| a == "--baseline")
        .and_then(|i| args.get(i + 1))
        .map(Path::new);
    let Sizes {
        requests,
        list_rounds,
        big,
        big_list,
        cold_sessions,
        repeats,
        real_calls,
        hook_calls,
    } = sizes;
    let dir = tempfile::tempdir().expect("temp dir");
    let lock = dir.path().join("bench.lock.json");
    std::fs::write(&lock, lockfile()).expect("write lock");
    let me = std::env::current_exe().expect("own path");
    let guard = Path::new(env!("CARGO_BIN_EXE_mcppin-guard"));

    let mut configurations =
        configurations(vec![me.into(), "--serve".into()], guard, &lock, "bench").to_vec();
    if let Some(baseline) = baseline {
        let mut command = configurations[2].1.clone();
        command[0] = baseline.into();
        configurations.push(("baseline", command));
    }
    let guarded = &configurations[2].1;

    if part("session") {
        println!(
            "session: {requests} tools/call requests and their answers ({} messages), \
             median of {repeats}",
            2 * requests
        );
        for (pipelined, label) in [(true, "pipelined"), (false, "one at a time")] {
            compare(&configurations, repeats, label, |command| {
                session(command, pipelined, requests)
            });
        }
    }

    if part("real") {
        real_sessions(&dir, guard, real_calls, repeats);
    }

    if part("list") {
        println!("tools/list with {TOOLS} tools: median round trip over {list_rounds}");
        let commands: Vec<&[OsString]> = configurations.iter().map(|(_, c)| &c[..]).collect();
        let times = list_round_trips(&commands, list_rounds);
        let base = times[0];
        for ((name, _), time) in configurations.iter().zip(times) {
            println!(
                "  {name:<13} {:>8.3} ms  added {:+.3} ms",
                ms(time),
                ms(time) - ms(base)
            );
        }
    }

    if part("cold") {
        println!(
            "cold: the first tools/list with {TOOLS} tools of a fresh session, median of \
             {cold_sessions} sessions"
        );
        // Direct, then each guard (the cat relay has no session of its own to start).
        let timed: Vec<&(&str, Vec<OsString>)> = configurations
            .iter()
            .filter(|(name, _)| *name != "cat relay")
            .collect();
        let commands: Vec<&[OsString]> = timed.iter().map(|(_, c)| &c[..]).collect();
        for (warm_up, label) in [
            (false, "first request, timed from the start"),
            (true, "after one call"),
        ] {
            let times = cold_first_lists(&commands, cold_sessions, warm_up);
            let direct = times[0];
            for ((name, _), time) in timed[1..].iter().zip(&times[1..]) {
                println!(
                    "  {label:<36} direct {:>7.3} ms  {name} {:>7.3} ms  added {:+.3} ms  \
                     ratio {:.2}",
                    ms(direct),
                    ms(*time),
                    ms(*time) - ms(direct),
                    time.as_secs_f64() / direct.as_secs_f64()
                );
            }
        }
    }

    if part("hook") {
        hook_runs(guard, &lock, hook_calls);
    }

    if !part("memory") {
        return;
    }
    println!("mcppin-guard peak resident memory (VmHWM)");
    let idle = peak_rss(guarded, requests, 0, (0, "zeros"));
    let peak = peak_rss(guarded, requests, big, (0, "zeros"));
    let changed = peak_rss(guarded, requests, 0, (big_list, "zeros"));
    let added = peak_rss(guarded, requests, 0, (big_list, "zeros-new"));
    println!("  after {requests} calls and a {TOOLS}-tool list: {idle} KiB");
    println!("  after also one {big}-byte message: {peak} KiB");
    println!(
        "  after also one {big_list}-byte tools/list answer of one-digit numbers, read \
         strictly, the tool approved and changed: {changed} KiB"
    );
    println!("  the same, the tool not in the lock: {added} KiB");
}

/// The pre-call hook allowing an approved tool of the 1,000-tool lockfile, a whole process per
/// call as Claude Code runs it, side by side, taking turns: `true` (the floor of any process),
/// the check made in the hook's own process (`--decide-for` this program: the hook before its
/// check moved into a child process) and the hook as it runs (the check in a child).
fn hook_runs(guard: &Path, lock: &Path, calls: usize) {
    let input = br#"{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"mcp__bench__tool_7","tool_input":{"path":"a"},"tool_use_id":"t"}"#;
    let hook = |more: &[&str]| -> Vec<OsString> {
        let mut command: Vec<OsString> = vec![guard.into(), "hook".into()];
        command.extend(more.iter().map(OsString::from));
        command.extend(["--lock".into(), lock.into()]);
        command
    };
    let own = std::process::id().to_string();
    let configurations = [
        ("true", vec![OsString::from("true")]),
        ("one process", hook(&["--decide-for", &own])),
        ("hook", hook(&[])),
    ];
    let mut times = vec![Vec::new(); configurations.len()];
    for _ in 0..calls {
        for ((name, command), times) in configurations.iter().zip(&mut times) {
            let started = Instant::now();
            let mut child = Command::new(&command[0])
                .args(&command[1..])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn");
            let mut stdin = child.stdin.take().expect("stdin");
            // `true` may exit before reading: a broken pipe is no failure of the run.
            let _ = stdin.write_all(input);
            drop(stdin);
            let out = child.wait_with_output().expect("wait");
            times.push(started.elapsed());
            assert!(
                out.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let medians: Vec<Duration> = times.into_iter().map(median).collect();
    println!("pre-call hook: an approved tool of {TOOLS}, median of {calls} runs of each");
    for ((name, _), time) in configurations.iter().zip(&medians) {
        println!(
            "  {name:<12} {:>7.3} ms  over true {:+.3} ms",
            ms(*time),
            ms(*time) - ms(medians[0])
        );
    }
    println!(
        "  the check in a child process adds {:+.3} ms (hook / one process {:.2})",
        ms(medians[2]) - ms(medians[1]),
        medians[2].as_secs_f64() / medians[1].as_secs_f64()
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percent(time: Duration, base: Duration) -> f64 {
    (time.as_secs_f64() / base.as_secs_f64() - 1.0) * 100.0
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn spawn(command: &[OsString]) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    (child, stdin, stdout)
}

fn call(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"tool_0","arguments":{{"path":"a.txt"}}}}}}"#
    )
}

/// One session of `requests` calls; `pipelined` writes them all without waiting.
fn session(command: &[OsString], pipelined: bool, requests: usize) -> Duration {
    let start = Instant::now();
    let (mut child, stdin, mut stdout) = spawn(command);
    let mut line = String::new();
    if pipelined {
        let writer = std::thread::spawn(move || {
            let mut stdin = BufWriter::new(stdin);
            for id in 0..requests {
                writeln!(stdin, "{}", call(id)).expect("write");
            }
            stdin.flush().expect("flush");
            stdin
        });
        for _ in 0..requests {
            line.clear();
            stdout.read_line(&mut line).expect("read");
            assert!(line.contains("\"result\""), "{line}");
        }
        drop(writer.join().expect("writer"));
    } else {
        let mut stdin = stdin;
        for id in 0..requests {
            writeln!(stdin, "{}", call(id)).expect("write");
            stdin.flush().expect("flush");
            line.clear();
            stdout.read_line(&mut line).expect("read");
            assert!(line.contains("\"result\""), "{line}");
        }
        drop(stdin);
    }
    child.wait().expect("wait");
    start.elapsed()
}

/// Sessions of `calls` one-at-a-time `echo` calls to the reference `server-everything`: direct,
/// through `cat`, through the guard with a lock of what the server serves.
fn real_sessions(dir: &tempfile::TempDir, guard: &Path, calls: usize, repeats: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("testdata/servers/node_modules/.bin/mcp-server-everything");
    assert!(
        script.exists(),
        "{} is not installed: scripts/test installs it (or `-- --only` another part)",
        script.display()
    );
    let direct: Vec<OsString> = vec!["node".into(), script.into()];
    // The lock: the tools the server serves now, approved as they are.
    let (mut child, mut stdin, mut stdout) = spawn(&direct);
    let hello = handshake(&mut stdin, &mut stdout);
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":"list","method":"tools/list"}}"#
    )
    .expect("write");
    stdin.flush().expect("flush");
    let answer = answer_to(&mut stdout, r#""list""#);
    drop(stdin);
    child.wait().expect("wait");
    let tools = answer
        .split_once(r#""tools":"#)
        .and_then(|(_, rest)| rest.rsplit_once(r#"]"#))
        .map(|(tools, _)| format!("{tools}]"))
        .expect("a tools/list answer");
    // The name it reports, approved too (the guard reports a renamed server).
    let name = hello
        .split_once(r#""serverInfo":{"name":"#)
        .and_then(|(_, rest)| rest.split_once(','))
        .map_or("null", |(name, _)| name)
        .to_owned();
    let manifest = format!(
        r#"{{"schema_version":2,"complete":true,"servers":[{{"id":"everything","reported_name":{name},"tools":{tools}}}]}}"#
    );
    let manifest = Manifest::parse(manifest.as_bytes()).expect("manifest");
    let lock = dir.path().join("everything.lock.json");
    std::fs::write(
        &lock,
        Lockfile::approve(None, &manifest, &[])
            .expect("approve")
            .to_bytes(),
    )
    .expect("write lock");
    let configurations = configurations(direct, guard, &lock, "everything");
    println!(
        "real server (server-everything under Node.js): initialize, then {calls} echo calls one \
         at a time ({} messages), median of {repeats}",
        2 * calls + 3
    );
    compare(&configurations, repeats, "one at a time", |command| {
        echo_session(command, calls)
    });
}

/// The three ways a session runs: `direct`, through `cat` in each direction (the floor of any
/// process in the middle), and through the guard holding `lock` for `server`.
fn configurations(
    direct: Vec<OsString>,
    guard: &Path,
    lock: &Path,
    server: &str,
) -> [(&'static str, Vec<OsString>); 3] {
    let quoted: Vec<String> = direct
        .iter()
        .map(|arg| format!("'{}'", arg.to_string_lossy()))
        .collect();
    let relay: Vec<OsString> = vec![
        "/bin/sh".into(),
        "-c".into(),
        format!("cat | {} | cat", quoted.join(" ")).into(),
    ];
    let mut guarded: Vec<OsString> = vec![
        guard.into(),
        "--lock".into(),
        lock.into(),
        "--server".into(),
        server.into(),
        "--".into(),
    ];
    guarded.extend(direct.iter().cloned());
    [
        ("direct", direct),
        ("cat relay", relay),
        ("mcppin-guard", guarded),
    ]
}

/// Times `session` with each configuration `repeats` times, the configurations taking turns,
/// and prints the medians against the first.
fn compare(
    configurations: &[(&str, Vec<OsString>)],
    repeats: usize,
    label: &str,
    session: impl Fn(&[OsString]) -> Duration,
) {
    let mut times = vec![Vec::new(); configurations.len()];
    for _ in 0..repeats {
        for ((_, command), times) in configurations.iter().zip(&mut times) {
            times.push(session(command));
        }
    }
    let base = median(times[0].clone());
    for ((name, _), times) in configurations.iter().zip(times) {
        let time = median(times);
        println!(
            "  {label:<14} {name:<13} {:>9.1} ms  {:+6.1}% against direct",
            ms(time),
            percent(time, base)
        );
    }
}

/// `initialize` and `notifications/initialized`, as a client opens a session; returns the
/// answer to `initialize`.
fn handshake(stdin: &mut ChildStdin, stdout: &mut BufReader<ChildStdout>) -> String {
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":"init","method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"bench","version":"1"}}}}}}"#
    )
    .expect("write");
    stdin.flush().expect("flush");
    let answer = answer_to(stdout, r#""init""#);
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .expect("write");
    stdin.flush().expect("flush");
    answer
}

/// Reads lines until the answer to the request with the id written `id` (the server's
/// notifications and requests pass by).
fn answer_to(stdout: &mut BufReader<ChildStdout>, id: &str) -> String {
    let (ends, follows) = (format!(r#""id":{id}}}"#), format!(r#""id":{id},"#));
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).expect("read") > 0,
            "the server ended"
        );
        if (line.contains(&ends) || line.contains(&follows)) && !line.contains(r#""method""#) {
            return line;
        }
    }
}

/// One session with the reference server: spawn, handshake, `calls` echo calls, end.
fn echo_session(command: &[OsString], calls: usize) -> Duration {
    let start = Instant::now();
    let (mut child, mut stdin, mut stdout) = spawn(command);
    handshake(&mut stdin, &mut stdout);
    for id in 0..calls {
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello"}}}}}}"#
        )
        .expect("write");
        stdin.flush().expect("flush");
        let answer = answer_to(&mut stdout, &id.to_string());
        assert!(answer.contains("Echo: hello"), "{answer}");
    }
    drop(stdin);
    child.wait().expect("wait");
    start.elapsed()
}

/// The median time of one `tools/list` round trip with a `TOOLS`-tool answer, for each
/// command; the commands run side by side and take turns.
fn list_round_trips(commands: &[&[OsString]], rounds: usize) -> Vec<Duration> {
    let mut running: Vec<_> = commands.iter().map(|c| spawn(c)).collect();
    let mut times = vec![Vec::new(); commands.len()];
    let mut line = String::new();
    for id in 0..rounds {
        for ((_, stdin, stdout), times) in running.iter_mut().zip(&mut times) {
            let start = Instant::now();
            writeln!(
                stdin,
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#
            )
            .expect("write");
            stdin.flush().expect("flush");
            line.clear();
            stdout.read_line(&mut line).expect("read");
            times.push(start.elapsed());
            assert!(
                line.contains("tool_999"),
                "{}",
                &line[..line.len().min(200)]
            );
        }
    }
    for (mut child, stdin, _) in running {
        drop(stdin);
        child.wait().expect("wait");
    }
    times.into_iter().map(median).collect()
}

/// The median time of the first `tools/list` round trip of a fresh session, for each command,
/// the commands taking turns. With `warm_up`, the session answers one call first (so the
/// processes are up) and the list alone is timed; without, the list is the session's first
/// request and the time runs from the start of the process (the guard reads its lock and
/// starts the server meanwhile).
fn cold_first_lists(commands: &[&[OsString]], sessions: usize, warm_up: bool) -> Vec<Duration> {
    let mut times = vec![Vec::new(); commands.len()];
    let mut line = String::new();
    for _ in 0..sessions {
        for (command, times) in commands.iter().zip(&mut times) {
            let mut start = Instant::now();
            let (mut child, mut stdin, mut stdout) = spawn(command);
            if warm_up {
                writeln!(stdin, "{}", call(0)).expect("write");
                stdin.flush().expect("flush");
                line.clear();
                stdout.read_line(&mut line).expect("read");
                start = Instant::now();
            }
            writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list"}}"#).expect("write");
            stdin.flush().expect("flush");
            line.clear();
            stdout.read_line(&mut line).expect("read");
            times.push(start.elapsed());
            assert!(
                line.contains("tool_999"),
                "{}",
                &line[..line.len().min(200)]
            );
            drop(stdin);
            child.wait().expect("wait");
        }
    }
    times.into_iter().map(median).collect()
}

/// The guard's peak RSS in KiB after a session of calls, a large list and, when `big` is not
/// zero, one message of `big` bytes, and when `big_list.0` is not zero, a `tools/list` answer
/// of that many bytes, almost all one-digit numbers (the costliest shape to read), asked for
/// with the cursor `big_list.1`: `zeros` serves the approved `tool_0` changed, `zeros-new` a
/// tool the lock does not know.
fn peak_rss(
    command: &[OsString],
    requests: usize,
    big: usize,
    (big_list, cursor): (usize, &str),
) -> u64 {
    let (mut child, stdin, mut stdout) = spawn(command);
    let mut line = String::new();
    // Written from a thread while the answers are read: a client that writes without reading
    // would fill the pipes and stall the session.
    let cursor = cursor.to_owned();
    let writer = std::thread::spawn(move || {
        let mut stdin = BufWriter::new(stdin);
        for id in 0..requests {
            writeln!(stdin, "{}", call(id)).expect("write");
        }
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":"l","method":"tools/list"}}"#
        )
        .expect("write");
        if big > 0 {
            writeln!(
                stdin,
                r#"{{"jsonrpc":"2.0","id":"big","method":"big","params":{{"size":{big}}}}}"#
            )
            .expect("write");
        }
        if big_list > 0 {
            writeln!(
                stdin,
                r#"{{"jsonrpc":"2.0","id":"bigl","method":"tools/list","params":{{"cursor":"{cursor}","size":{big_list}}}}}"#
            )
            .expect("write");
        }
        stdin.flush().expect("flush");
        stdin
    });
    let answers = requests + 1 + usize::from(big > 0) + usize::from(big_list > 0);
    for _ in 0..answers {
        line.clear();
        stdout.read_line(&mut line).expect("read");
    }
    let mut status = String::new();
    std::fs::File::open(format!("/proc/{}/status", child.id()))
        .and_then(|mut f| f.read_to_string(&mut status))
        .expect("read /proc status");
    drop(writer.join().expect("writer"));
    child.wait().expect("wait");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The bench server: answers every request at once.
fn serve() {
    let tools = mcppin_testkit::bench_tools(TOOLS);
    let stdin = std::io::stdin();
    let mut input = BufReader::with_capacity(1 << 16, stdin.lock());
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        let id = id_of(&line);
        if line.contains(r#""cursor":"zeros"#) {
            // One tool whose schema is an array of zeros filling the answer to `size` bytes:
            // the approved `tool_0` changed, or with `zeros-new` a tool the lock lacks.
            let zeros = size_of(&line).saturating_sub(200) / 2;
            let name = if line.contains(r#""cursor":"zeros-new""#) {
                "tool_new"
            } else {
                "tool_0"
            };
            let _ = writeln!(
                out,
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"{name}","inputSchema":{{"type":"object","enum":[{}0]}}}}]}}}}"#,
                "0,".repeat(zeros)
            );
        } else if line.contains(r#""method":"tools/list""#) {
            let _ = writeln!(
                out,
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{}]}}}}"#,
                tools.join(",")
            );
        } else if line.contains(r#""method":"big""#) {
            let _ = writeln!(
                out,
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
                "x".repeat(size_of(&line))
            );
        } else {
            let _ = writeln!(
                out,
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"done"}}],"isError":false}}}}"#
            );
        }
        if input.buffer().is_empty() && out.flush().is_err() {
            break;
        }
    }
    let _ = out.flush();
}

fn size_of(line: &str) -> usize {
    let start = line.find(r#""size":"#).map_or(0, |i| i + 7);
    let digits: String = line[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap_or(0)
}

fn id_of(line: &str) -> &str {
    let start = line.find(r#""id":"#).map_or(0, |i| i + 5);
    let rest = &line[start..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    &rest[..end]
}

fn lockfile() -> Vec<u8> {
    let manifest = format!(
        r#"{{"schema_version":2,"complete":true,"servers":[{{"id":"bench","tools":[{}]}}]}}"#,
        mcppin_testkit::bench_tools(TOOLS).join(",")
    );
    let manifest = Manifest::parse(manifest.as_bytes()).expect("manifest");
    Lockfile::approve(None, &manifest, &[])
        .expect("approve")
        .to_bytes()
}

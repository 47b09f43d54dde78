//! `mcppin-export` on the real binary against the fixture server as a real process: what is
//! written, every exit code, every failure mode (message naming the server and the cause, no
//! manifest, no process left behind).

mod util;

use std::os::unix::fs::FileTypeExt as _;
use std::process::Command;

use mcppin_core::manifest::Manifest;
use mcppin_core::surface::ItemKind;
use util::{Dir, Run, fixture, json_string, mcppin};

const HONEST: [&str; 4] = [
    "list_directory",
    "read_text_file",
    "search_files",
    "write_note",
];

fn manifest(dir: &Dir, name: &str) -> Manifest {
    Manifest::parse(&dir.read(name)).expect("a manifest mcppin reads")
}

fn tool_names(manifest: &Manifest, id: &str) -> Vec<String> {
    manifest.servers[id]
        .tools
        .names()
        .map(str::to_owned)
        .collect()
}

/// Asserts the common outcome of a failed export: the exit code, the message naming the
/// server and the cause, no manifest, and the server gone.
#[track_caller]
fn assert_failed(dir: &Dir, run: &Run, code: i32, id: &str, cause: &str) {
    run.code(code)
        .stderr_has(&format!(
            "mcppin-export: server \"{id}\" could not be captured"
        ))
        .stderr_has(cause);
    assert!(!dir.exists("manifest.json"), "a manifest was written");
    dir.assert_gone(id);
}

#[test]
fn exports_an_honest_server() {
    let dir = Dir::new();
    dir.config(&[("demo", &[])]);
    let run = dir.export(&[
        "--config",
        "mcp.json",
        "-o",
        "manifest.json",
        "--now",
        "2026-08-01T09:12:00Z",
    ]);
    run.code(0);
    assert_eq!(run.stdout, "");
    assert_summary(&run.stderr, &["\"demo\""]);
    let m = manifest(&dir, "manifest.json");
    assert!(m.complete);
    assert_eq!(m.scope, None);
    assert_eq!(m.protocol_version.as_deref(), Some("2025-11-25"));
    assert_eq!(m.captured_at.as_deref(), Some("2026-08-01T09:12:00Z"));
    assert_eq!(
        m.captured_by.as_deref(),
        Some(concat!("mcppin-export/", env!("CARGO_PKG_VERSION")))
    );
    let server = &m.servers["demo"];
    assert_eq!(server.reported_name.as_deref(), Some("mcppin-fixture"));
    assert_eq!(server.protocol_version.as_deref(), Some("2025-11-25"));
    assert_eq!(server.passes, Some(2));
    assert_eq!(tool_names(&m, "demo"), HONEST);
    dir.assert_gone("demo");
}

#[test]
fn records_the_authorization_context_per_server_and_never_the_credential() {
    let dir = Dir::new();
    dir.config(&[("demo", &[]), ("other", &[])]);
    let run = dir.export(&[
        "--config",
        "mcp.json",
        "--auth-context",
        "read-only",
        "-o",
        "manifest.json",
    ]);
    run.code(0);
    let m = manifest(&dir, "manifest.json");
    for id in ["demo", "other"] {
        assert_eq!(
            m.servers[id].auth_context.as_ref().map(|c| c.as_str()),
            Some("read-only")
        );
    }
    // Without it: the default context, no member written.
    dir.export(&["--config", "mcp.json", "-o", "plain.json"])
        .code(0);
    assert!(
        manifest(&dir, "plain.json").servers["demo"]
            .auth_context
            .is_none()
    );
    assert!(
        !String::from_utf8(dir.read("plain.json"))
            .unwrap()
            .contains("auth_context")
    );
    // A credential is not a label: refused before any server starts.
    for bad in ["Bearer abc.def", "default", "", &"x".repeat(65)] {
        dir.export(&[
            "--config",
            "mcp.json",
            "--auth-context",
            bad,
            "-o",
            "bad.json",
        ])
        .code(2)
        .stderr_has("--auth-context");
        assert!(!dir.exists("bad.json"));
    }
    // A word clap refuses is quoted in the notation, never raw.
    let run = dir.export(&[
        "--config",
        "mcp.json",
        "--format",
        "x\u{1b}]0;pwn\u{7}\u{202e}",
    ]);
    run.code(2)
        .stderr_has("invalid value 'x<U+001B>]0;pwn<U+0007><U+202E>' for '--format")
        .shows_nothing_raw();
}

#[test]
fn keeps_tools_exactly_as_served() {
    let dir = Dir::new();
    dir.config(&[("demo", &[])]);
    dir.export(&["--config", "mcp.json", "-o", "manifest.json"])
        .code(0);
    let m = manifest(&dir, "manifest.json");
    for served in mcppin_fixture::surface(false) {
        let name = served["name"].as_str().unwrap();
        let served = mcppin_core::parse(&serde_json::to_vec(&served).unwrap()).unwrap();
        let kept = m.servers["demo"].tools.get(name).unwrap();
        assert_eq!(
            mcppin_core::canonicalize(kept).unwrap(),
            mcppin_core::canonicalize(&served).unwrap()
        );
    }
}

#[test]
fn writes_the_manifest_to_stdout_with_a_dash() {
    let dir = Dir::new();
    dir.config(&[("demo", &[])]);
    let run = dir.export(&[
        "--config",
        "mcp.json",
        "-o",
        "-",
        "--now",
        "2026-08-01T09:12:00Z",
    ]);
    run.code(0).stdout_has("\"schema_version\": 4");
    let m = Manifest::parse(run.stdout.as_bytes()).unwrap();
    assert_eq!(tool_names(&m, "demo"), HONEST);
    // One byte form: what was written is what the writer writes.
    assert_eq!(m.to_bytes(), run.stdout.as_bytes());
}

#[test]
fn writes_a_pipe_in_place_and_refuses_a_link() {
    let dir = Dir::new();
    dir.config(&[("demo", &[])]);
    let args = |out: &str| -> Vec<String> {
        [
            "--config",
            "mcp.json",
            "-o",
            out,
            "--now",
            "2026-08-01T09:12:00Z",
        ]
        .map(str::to_owned)
        .to_vec()
    };
    // A FIFO someone reads (as /dev/null is a device): written in place, never replaced.
    let pipe = dir.path().join("pipe");
    let made = mcppin_testkit::status(Command::new("mkfifo").arg(&pipe)).unwrap();
    assert!(made.success());
    // Held open for reading and writing first: the reader is there before the export opens the
    // pipe, and sees the end once both have let go.
    let hold = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&pipe)
        .unwrap();
    let reader = std::thread::spawn({
        let pipe = pipe.clone();
        move || std::fs::read(pipe).unwrap()
    });
    let run = dir.export(&args("pipe").iter().map(String::as_str).collect::<Vec<_>>());
    run.code(0);
    drop(hold);
    let m = Manifest::parse(&reader.join().unwrap()).unwrap();
    // Nobody reads it: refused at once, never waited on past every signal.
    let run = dir.export(&args("pipe").iter().map(String::as_str).collect::<Vec<_>>());
    run.code(4)
        .stderr_has("cannot write pipe: a pipe nobody reads");
    assert_eq!(tool_names(&m, "demo"), HONEST);
    assert!(
        std::fs::symlink_metadata(&pipe)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // A link (here to the exporter's standard output): refused, nothing written through it.
    let link = dir.path().join("out.json");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    let run = dir.export(
        &args("out.json")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    run.code(4).stderr_has(
        "cannot write out.json: a link, and no file is written through one (name the file it \
         links to)",
    );
    assert_eq!(run.stdout, "");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn a_configuration_through_a_pipe_is_read_and_a_pipe_nobody_writes_refused_at_once() {
    let dir = Dir::new();
    let config = dir.config(&[("demo", &[])]);
    // `--config <(...)`: a pipe with a writer, here standard input.
    let run = mcppin_testkit::run(
        Command::new(env!("CARGO_BIN_EXE_mcppin-export"))
            .args(["--config", "/dev/stdin", "-o", "-"])
            .current_dir(dir.path())
            .env_clear(),
        std::fs::read(config).unwrap(),
        mcppin_testkit::StdinEnd::Closes,
    );
    run.code(0);
    assert_eq!(
        tool_names(&Manifest::parse(run.stdout.as_bytes()).unwrap(), "demo"),
        HONEST
    );
    // A FIFO nobody writes: read as empty at once, never waited on.
    let made = mcppin_testkit::status(Command::new("mkfifo").arg(dir.path().join("mcp.pipe")));
    assert!(made.unwrap().success());
    dir.export(&["--config", "mcp.pipe", "-o", "m.json"])
        .code(4);
    assert!(!dir.exists("m.json"));
}

#[test]
fn speaks_every_protocol_revision() {
    for revision in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        let dir = Dir::new();
        dir.config(&[("demo", &[])]);
        dir.export(&[
            "--config",
            "mcp.json",
            "--protocol",
            revision,
            "-o",
            "m.json",
        ])
        .code(0);
        let m = manifest(&dir, "m.json");
        assert_eq!(m.protocol_version.as_deref(), Some(revision));
        assert_eq!(
            m.servers["demo"].protocol_version.as_deref(),
            Some(revision)
        );
        assert_eq!(tool_names(&m, "demo"), HONEST);
        dir.assert_gone("demo");
    }
}

#[test]
fn auto_uses_2026_07_28_when_offered_and_initialize_otherwise() {
    let dir = Dir::new();
    dir.config(&[
        ("modern", &["--era", "modern"]),
        ("legacy", &["--era", "legacy"]),
    ]);
    dir.export(&["--config", "mcp.json", "--protocol", "auto", "-o", "m.json"])
        .code(0);
    let m = manifest(&dir, "m.json");
    assert_eq!(m.protocol_version, None);
    assert_eq!(
        m.servers["modern"].protocol_version.as_deref(),
        Some("2026-07-28")
    );
    assert_eq!(
        m.servers["legacy"].protocol_version.as_deref(),
        Some("2025-11-25")
    );
    assert_eq!(tool_names(&m, "modern"), HONEST);
    assert_eq!(tool_names(&m, "legacy"), HONEST);
}

#[test]
fn a_modern_only_server_fails_a_legacy_export() {
    let dir = Dir::new();
    dir.config(&[("modern", &["--era", "modern"])]);
    let run = dir.export(&["--config", "mcp.json", "-o", "manifest.json"]);
    assert_failed(
        &dir,
        &run,
        3,
        "modern",
        "answered initialize with error -32601",
    );
}

#[test]
fn a_legacy_only_server_fails_a_2026_export() {
    let dir = Dir::new();
    dir.config(&[("legacy", &["--era", "legacy"])]);
    let run = dir.export(&[
        "--config",
        "mcp.json",
        "--protocol",
        "2026-07-28",
        "-o",
        "manifest.json",
    ]);
    assert_failed(
        &dir,
        &run,
        3,
        "legacy",
        "answered server/discover with error -32601",
    );
}

#[test]
fn an_optional_list_the_server_does_not_implement_is_captured_as_not_served() {
    // Servers on the Python SDK below 2 (mcp-server-sqlite 2025.4.25) declare `resources` and
    // answer resources/templates/list with -32601: the export once failed the configuration.
    let dir = Dir::new();
    dir.config(&[("db", &["--mode", "no-optional-lists"]), ("demo", &[])]);
    let run = dir.export(&["--config", "mcp.json", "-o", "m.json"]);
    run.code(0).stderr_has(
        "server \"db\": 4 tools, no prompts (prompts/list not served), no resource templates \
         (resources/templates/list not served) over 2025-11-25",
    );
    let m = manifest(&dir, "m.json");
    assert!(m.complete);
    assert_eq!(tool_names(&m, "db"), HONEST);
    let kinds = |id: &str| m.servers[id].not_served.iter().copied().collect::<Vec<_>>();
    assert_eq!(kinds("db"), [ItemKind::Prompt, ItemKind::ResourceTemplate]);
    assert_eq!(kinds("demo"), []);
    let text = String::from_utf8(dir.read("m.json")).unwrap();
    assert!(text.contains(r#""schema_version": 4"#), "{text}");
    dir.assert_gone("db");
}

#[test]
fn a_list_served_where_the_lock_says_not_served_fails_verify() {
    // End to end through the binaries: capture a server without resources/templates/list,
    // lock it, capture it again once it serves a template: mcppin verify fails (exit 1); a
    // capture that still does not serve it passes (exit 0).
    let dir = Dir::new();
    dir.config(&[("db", &["--mode", "no-optional-lists"])]);
    dir.export(&["--config", "mcp.json", "-o", "before.json"])
        .code(0);
    mcppin(&dir, &["lock", "-o", "mcp.lock.json", "before.json"]).code(0);
    let lock = String::from_utf8(dir.read("mcp.lock.json")).unwrap();
    assert!(lock.contains(r#""not_served": ["#), "{lock}");
    dir.export(&["--config", "mcp.json", "-o", "again.json"])
        .code(0);
    mcppin(&dir, &["verify", "--lock", "mcp.lock.json", "again.json"])
        .code(0)
        .stdout_has("PASS");
    dir.config(&[(
        "db",
        &["--mode", "no-optional-lists", "--mode", "templates"],
    )]);
    dir.export(&["--config", "mcp.json", "-o", "after.json"])
        .code(0);
    mcppin(&dir, &["verify", "--lock", "mcp.lock.json", "after.json"])
        .code(1)
        .stdout_has("resource-template-added")
        .stdout_has("notes://{name}");
}

#[test]
fn an_optional_list_failing_otherwise_fails_the_capture() {
    // Only -32601 on an optional list is "not served": a failure of tools/list, the list the
    // surface depends on, fails the capture (the other errors of optional lists are tested
    // against the session).
    let dir = Dir::new();
    dir.config(&[(
        "db",
        &["--mode", "no-optional-lists", "--mode", "malformed"],
    )]);
    let run = dir.export(&["--config", "mcp.json", "-o", "m.json"]);
    assert_failed(&dir, &run, 3, "db", "tools/list");
}

#[test]
fn follows_every_page() {
    let dir = Dir::new();
    dir.config(&[("demo", &["--mode", "paginated"])]);
    dir.export(&["--config", "mcp.json", "-o", "m.json"])
        .code(0);
    let m = manifest(&dir, "m.json");
    assert!(m.complete);
    assert_eq!(tool_names(&m, "demo"), HONEST);
}

#[test]
fn readings_that_disagree_make_an_incomplete_manifest() {
    let dir = Dir::new();
    dir.config(&[("demo", &["--mode", "shifting"])]);
    let run = dir.export(&["--config", "mcp.json", "-o", "m.json"]);
    run.code(0)
        .stderr_has("warning: server \"demo\": its readings disagreed")
        .stderr_has("complete: false");
    let m = manifest(&dir, "m.json");
    assert!(!m.complete);
    assert_eq!(m.servers["demo"].passes, Some(2));
    dir.assert_gone("demo");
}

#[test]
fn a_single_reading_is_never_complete() {
    let dir = Dir::new();
    dir.config(&[("demo", &[])]);
    let run = dir.export(&["--config", "mcp.json", "--passes", "1", "-o", "m.json"]);
    run.code(0)
        .stderr_has("a single reading cannot show that the list held still");
    let m = manifest(&dir, "m.json");
    assert!(!m.complete);
    assert_eq!(m.servers["demo"].passes, Some(1));
}

#[test]
fn three_readings_that_agree_are_complete() {
    let dir = Dir::new();
    dir.config(&[("demo", &["--mode", "paginated"])]);
    dir.export(&["--config", "mcp.json", "--passes", "3", "-o", "m.json"])
        .code(0);
    let m = manifest(&dir, "m.json");
    assert!(m.complete);
    assert_eq!(m.servers["demo"].passes, Some(3));
}

#[test]
fn narrowing_with_server_sets_the_scope() {
    let dir = Dir::new();
    dir.config(&[("a", &[]), ("b", &["--mode", "crash"])]);
    dir.export(&["--config", "mcp.json", "--server", "a", "-o", "m.json"])
        .code(0);
    let m = manifest(&dir, "m.json");
    assert_eq!(
        m.scope.map(|s| s.into_iter().collect::<Vec<_>>()),
        Some(vec!["a".to_owned()])
    );
    assert_eq!(m.servers.keys().collect::<Vec<_>>(), ["a"]);
    // The server outside the scope was never started.
    assert!(!dir.exists("b.pid"));
}

#[test]
fn an_unknown_server_id_is_a_usage_error() {
    let dir = Dir::new();
    dir.config(&[("a", &[])]);
    dir.export(&["--config", "mcp.json", "--server", "nope", "-o", "m.json"])
        .code(2)
        .stderr_has("--server \"nope\": no such server in mcp.json (it has \"a\")");
    assert!(!dir.exists("m.json"));
    assert!(!dir.exists("a.pid"));
}

#[test]
fn a_duplicate_tool_name_fails_the_export() {
    let dir = Dir::new();
    dir.config(&[("demo", &["--mode", "duplicate"])]);
    let run = dir.export(&["--config", "mcp.json", "-o", "manifest.json"]);
    assert_failed(
        &dir,
        &run,
        3,
        "demo",
        "the server lists tool \"read_text_file\" twice",
    );
}

#[test]
fn a_tool_too_deep_for_a_lockfile_fails_the_export() {
    // The answer carries a tool nesting 253 levels under the strict
    // reader's limit; the manifest holds it one level deeper and a lockfile two, so what was
    // written could not be read back.
    let dir = Dir::new();
    dir.config(&[("demo", &["--mode", "deep"])]);
    let run = dir.export(&["--config", "mcp.json", "-o", "manifest.json"]);
    assert_failed(
        &dir,
        &run,
        3,
        "demo",
        "tool \"deep\" of server \"demo\" nests 253 levels deep, more than the 251 a \
         lockfile can hold",
    );
}

#[test]
fn malformed_json_fails_the_export() {
    let dir = Dir::new();
    dir.config(&[("demo", &["--mode", "malformed"])]);
    let run = dir.export(&["--config", "mcp.json", "-o", "manifest.json"]);
    assert_failed(&dir, &run, 3, "demo", "malformed answer to tools/list");
}

#[test]
fn a_silent_server_times_out_and_is_stopped() {
    let dir = Dir::new();
    dir.config(&[("demo", &["--mode", "silent"])]);
    let run = dir.export(&[
        "--config",
        "mcp.json",
        "--timeout",
        "2s",
        "-o",
        "manifest.json",
    ]);
    assert_failed(
        &dir,
        &run,
        3,
        "demo",
        "no answer to tools/list within 2s (raise it with --timeout)",
    );
}

/// A configuration whose server `demo` runs `script` in `sh`, recording its pid in demo.pid.
fn shell_server(dir: &Dir, script: &str) {
    let pid = dir.path().join("demo.pid");
    let script = format!("echo $$ > {}; {script}", pid.display());
    dir.write(
        "mcp.json",
        format!(
            "{{\"mcpServers\": {{\"demo\": {{\"command\": \"/bin/sh\", \"args\": [\"-c\", {}]}}}}}}",
            json_string(&script)
        ),
    );
}

#[test]
fn a_duration_too_long_for_the_clock_is_a_usage_error() {
    // --start-timeout 500000000000years once ended the exporter in a panic (exit 101).
    let dir = Dir::new();
    dir.config(&[("demo", &[])]);
    for flag in ["--timeout", "--start-timeout", "--kill-after"] {
        dir.export(&[
            "--config",
            "mcp.json",
            "-o",
            "m.json",
            flag,
            "500000000000years",
        ])
        .code(2)
        .stderr_has("longer than 100 years");
    }
    assert!(!dir.path().join("m.json").exists());
}

#[test]
fn a_first_answer_waits_the_start_timeout_not_the_timeout() {
    // A first `npx` start installs before it answers; --timeout is per request.
    let dir = Dir::new();
    shell_server(
        &dir,
        &format!("sleep 2; exec {}", fixture().to_string_lossy()),
    );
    let run = dir.export(&[
        "--config",
        "mcp.json",
        "--timeout",
        "1s",
        "--start-timeout",
        "60s",
        "-o",
        "manifest.json",
    ]);
    run.code(0);
    assert!(dir.exists("manifest.json"));
}

#[test]
fn a_start_that_outlasts_the_start_timeout_names_the_option() {
    let dir = Dir::new();
    shell_server(&dir, "exec sleep 60");
    let run = dir.export(&[
        "--config",
        "mcp.json",
        "--start-timeout",
        "1s",
        "-o",
        "manifest.json",
    ]);
    assert_failed(
        &dir,
        &run,
        3,
        "demo",
        "no answer to initialize within 1s (raise it with --start-timeout (a first start may \
         still be installing the server's package))",
    );
}

#[test]
fn a_server_given_up_on_gets_sigterm_and_kill_after_to_clean_up() {
    // npm stopped mid-install must get to roll back before SIGKILL; the whole group
    // gets SIGTERM, a process cleaning up is given --kill-after, and nothing is left running.
    let dir = Dir::new();
    let log = dir.path().join("log");
    let child = dir.path().join("child.pid");
    shell_server(
        &dir,
        &format!(
            "sh -c 'trap \"echo term >> {log}; sleep 1; echo clean >> {log}; exit 0\" TERM; \
             echo $$ > {child}; while :; do sleep 0.05; done' & exec sleep 60",
            log = log.display(),
            child = child.display()
        ),
    );
    let run = dir.export(&[
        "--config",
        "mcp.json",
        "--start-timeout",
        "1s",
        "--kill-after",
        "10s",
        "-o",
        "manifest.json",
    ]);
    assert_failed(&dir, &run, 3, "demo", "no answer to initialize within 1s");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "term\nclean\n",
        "the cleanup was cut short"
    );
    // assert_failed saw the group empty: the child that cleaned up is gone too.
}

#[test]
fn kill_after_bounds_the_wait_for_a_server_that_ignores_sigterm() {
    let dir = Dir::new();
    shell_server(&dir, "trap '' TERM; while :; do sleep 0.05; done");
    let started = std::time::Instant::now();
    let run = dir.export(&[
        "--config",
        "mcp.json",
        "--start-timeout",
        "1s",
        "--kill-after",
        "500ms",
        "-o",
        "manifest.json",
    ]);
    assert_failed(&dir, &run, 3, "demo", "no answer to initialize within 1s");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn an_interrupted_export_stops_its_servers_and_writes_nothing() {
    use rustix::process::{Pid, Signal, kill_process};
    let dir = Dir::new();
    // A silent server also ignores the end of its input: only a signal stops it. It records
    // each request it reads, so the test knows when the export waits for its tool list.
    let record = dir.path().join("demo.requests");
    let record = record.to_string_lossy();
    dir.config(&[("demo", &["--mode", "silent", "--record", &record])]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin-export"))
        .args([
            "--config",
            "mcp.json",
            "--timeout",
            "60s",
            "--grace",
            "300ms",
        ])
        .args(["-o", "manifest.json"])
        .current_dir(dir.path())
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The export sends tools/list once the handshake is done, after it noted the server as
    // running: from then on the signal handler is the one that stops it.
    let bound = std::time::Duration::from_secs(60);
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(dir.path().join("demo.requests"))
        .is_ok_and(|requests| requests.contains("\"tools/list\""))
    {
        if started.elapsed() > bound {
            let _ = child.kill();
            panic!("the export never asked for the tool list");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    kill_process(pid, Signal::INT).unwrap();
    mcppin_testkit::wait(&mut child).unwrap();
    let out = child.wait_with_output().unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    run.code(130)
        .stderr_has("interrupted; the servers were stopped and nothing was written");
    assert!(!dir.exists("manifest.json"));
    dir.assert_gone("demo");
}

#[test]
fn a_signal_while_the_manifest_is_written_never_leaves_half_a_write() {
    use rustix::process::{Pid, Signal, kill_process};
    // SIGTERM the moment the temporary file appears, many times over: each run either wrote
    // the manifest whole and says so (exit 0), or wrote nothing and says that (exit 143);
    // no temporary file is ever left, and "nothing was written" is never said of a written one.
    let mut hit = 0;
    for _ in 0..20 {
        let dir = Dir::new();
        dir.config(&[("demo", &[])]);
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin-export"))
            .args(["--config", "mcp.json", "-o", "out.json"])
            .current_dir(dir.path())
            .env_clear()
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let temporary = |dir: &Dir| {
            std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(Result::ok)
                .any(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        };
        let started = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if temporary(&dir) {
                let pid = Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
                let _ = kill_process(pid, Signal::TERM);
                hit += 1;
                break;
            }
            assert!(started.elapsed() < mcppin_testkit::HANG, "the export hung");
            std::thread::yield_now();
        }
        let status = mcppin_testkit::wait(&mut child).unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert!(!temporary(&dir), "a temporary file was left: {stderr}");
        match status.code() {
            Some(0) => {
                Manifest::parse(&dir.read("out.json")).unwrap();
                assert!(!stderr.contains("nothing was written"), "{stderr}");
            }
            Some(143) => {
                assert!(!dir.exists("out.json"), "{stderr}");
                assert!(stderr.contains("nothing was written"), "{stderr}");
            }
            other => panic!("exit {other:?}: {stderr}"),
        }
    }
    assert!(
        hit > 0,
        "the signal never came while the manifest was written"
    );
}

#[test]
fn a_server_dies_with_an_export_killed_by_sigkill() {
    let dir = Dir::new();
    // A silent server also ignores the end of its input: only a signal stops it.
    dir.config(&[("demo", &["--mode", "silent"])]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin-export"))
        .args(["--config", "mcp.json", "--timeout", "60s"])
        .args(["-o", "manifest.json"])
        .current_dir(dir.path())
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !dir.exists("demo.pid") {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "the server never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = dir.pid("demo");
    child.kill().unwrap();
    let _ = child.wait();
    let started = std::time::Instant::now();
    while !util::group_members(pid).is_empty()
        && started.elapsed() < std::time::Duration::from_secs(30)
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let left = util::group_members(pid);
    for member in &left {
        let _ = mcppin_testkit::status(Command::new("kill").args(["-KILL", &member.to_string()]));
    }
    assert!(
        left.is_empty(),
        "the server {pid} outlived the export: {left:?}"
    );
}

#[test]
fn a_crash_mid_list_fails_the_export_and_shows_stderr() {
    let dir = Dir::new();
    dir.config(&[("demo", &["--mode", "crash"])]);
    let run = dir.export(&["--config", "mcp.json", "-o", "manifest.json"]);
    assert_failed(
        &dir,
        &run,
        3,
        "demo",
        "the server closed its output while waiting for the answer to tools/list",
    );
    run.stderr_has("[demo] fixture: crashing while the tool list is read")
        .stderr_has("(the server exited: exit status: 101)");
}

#[test]
fn hostile_stderr_is_shown_escaped() {
    let dir = Dir::new();
    dir.config(&[("demo", &["--mode", "hostile-stderr", "--mode", "crash"])]);
    let run = dir.export(&["--config", "mcp.json", "-o", "manifest.json"]);
    assert_failed(&dir, &run, 3, "demo", "closed its output");
    run.stderr_has("[demo] <U+001B>[2J<U+001B>[31mfixture: starting<U+001B>[0m")
        .stderr_has("<U+001B>]0;owned<U+0007> <U+202E>txt.exe");
    assert!(
        !run.stderr.contains('\u{1b}') && !run.stderr.contains('\u{202e}'),
        "raw escapes reached the terminal: {:?}",
        run.stderr
    );
}

#[test]
fn verbose_shows_the_stderr_of_servers_that_succeed() {
    let dir = Dir::new();
    dir.config(&[("demo", &["--mode", "hostile-stderr"])]);
    let run = dir.export(&["--config", "mcp.json", "-v", "-o", "m.json"]);
    run.code(0)
        .stderr_has("[demo] <U+001B>[2J")
        .stderr_has("[demo] fixture: ready")
        .stderr_has("server \"demo\": 4 tools, 0 prompts, 0 resource templates over 2025-11-25, 2 readings agree");
    assert!(!run.stderr.contains('\u{1b}'));
    // Without -v, a successful server's stderr is not shown.
    let quiet = dir.export(&["--config", "mcp.json", "-o", "m.json"]);
    quiet.code(0).stderr_lacks("[demo]");
}

/// Asserts that `stderr` is one summary line per server of `ids`, in that order: the id, the
/// items per kind, the revision, the readings, the time taken and the artifact (the fixture:
/// a local program).
#[track_caller]
fn assert_summary(stderr: &str, ids: &[&str]) {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), ids.len(), "{stderr}");
    for (line, id) in lines.iter().zip(ids) {
        let rest = line
            .strip_prefix(&format!(
                "mcppin-export: server {id}: 4 tools, 0 prompts, 0 resource templates over 2025-11-25, 2 readings agree, "
            ))
            .unwrap_or_else(|| panic!("not a summary of {id}: {line:?}\n{stderr}"));
        let (took, artifact) = rest
            .split_once("; artifact: ")
            .unwrap_or_else(|| panic!("no artifact in {line:?}"));
        assert!(
            artifact.starts_with(&format!("local {} sha256:", fixture().display())),
            "{line:?}"
        );
        let seconds = took
            .strip_suffix(" s")
            .unwrap_or_else(|| panic!("no time in {line:?}"));
        assert!(seconds.parse::<f64>().is_ok(), "{line:?}");
    }
}

#[test]
fn prints_one_line_per_server_as_it_is_captured() {
    let dir = Dir::new();
    dir.config(&[("b-docs", &[]), ("a-files", &["--mode", "paginated"])]);
    let run = dir.export(&["--config", "mcp.json", "-o", "m.json"]);
    run.code(0);
    assert_summary(&run.stderr, &["\"a-files\"", "\"b-docs\""]);
}

#[test]
fn the_summary_line_escapes_the_server_id() {
    let dir = Dir::new();
    let fixture = fixture();
    dir.write(
        "mcp.json",
        format!(
            "{{\"mcpServers\": {{\"\\u001b[31mdocs<U+0041>\": {{\"command\": {}}}}}}}",
            json_string(&fixture.to_string_lossy())
        ),
    );
    let run = dir.export(&["--config", "mcp.json", "-o", "m.json"]);
    run.code(0);
    assert_summary(&run.stderr, &["\"<U+001B>[31mdocs<U+003C>U+0041>\""]);
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
}

#[test]
fn quiet_silences_the_progress_but_not_the_errors() {
    let dir = Dir::new();
    let fixture = fixture();
    // A server slower to start than the first progress note (2 s).
    dir.write(
        "mcp.json",
        format!(
            "{{\"mcpServers\": {{\"slow\": {{\"command\": \"/bin/sh\", \"args\": [\"-c\", \
             \"sleep 3; exec {}\"]}}}}}}",
            fixture.to_string_lossy()
        ),
    );
    for quiet in ["-q", "--quiet"] {
        let run = dir.export(&["--config", "mcp.json", quiet, "-o", "m.json"]);
        run.code(0);
        assert_eq!(run.stderr, "", "{quiet} prints nothing on success");
    }
    dir.config(&[("demo", &["--mode", "crash"])]);
    dir.export(&["--config", "mcp.json", "-q", "-o", "m.json"])
        .code(3)
        .stderr_has("mcppin-export: server \"demo\" could not be captured")
        .stderr_has("[demo] fixture: crashing");
    dir.export(&["--config", "mcp.json", "-q", "-v", "-o", "m.json"])
        .code(2);
}

#[test]
fn a_slow_server_shows_progress_while_it_starts() {
    use std::io::BufRead;
    let dir = Dir::new();
    let fixture = fixture();
    // The server starts only once the test has seen the progress note: no timing involved.
    dir.write(
        "mcp.json",
        format!(
            "{{\"mcpServers\": {{\"slow\": {{\"command\": \"/bin/sh\", \"args\": [\"-c\", \
             \"while [ ! -e go ]; do sleep 0.05; done; exec {}\"]}}}}}}",
            fixture.to_string_lossy()
        ),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin-export"))
        .args(["--config", "mcp.json", "-o", "m.json", "--timeout", "120s"])
        .current_dir(dir.path())
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().expect("a progress note").unwrap();
    assert_eq!(
        first,
        "mcppin-export: server \"slow\": still starting (2 s)"
    );
    dir.write("go", "");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(child.wait().unwrap().success());
    let last = rest.last().expect("a summary line");
    assert!(
        last.starts_with("mcppin-export: server \"slow\": 4 tools, 0 prompts, 0 resource templates over 2025-11-25"),
        "{rest:?}"
    );
    // Notes come at 2, 4, 8, ... seconds: the ones before the summary are all of that form.
    for note in &rest[..rest.len() - 1] {
        assert!(note.contains(": still starting ("), "{rest:?}");
    }
}

#[test]
fn a_server_that_cannot_start_fails_the_export() {
    let dir = Dir::new();
    dir.write(
        "mcp.json",
        r#"{"mcpServers": {"ghost": {"command": "/nonexistent/mcp-server"}}}"#,
    );
    dir.export(&["--config", "mcp.json", "-o", "manifest.json"])
        .code(3)
        .stderr_has("server \"ghost\" could not be captured: cannot start /nonexistent/mcp-server");
    assert!(!dir.exists("manifest.json"));
}

#[test]
fn one_failing_server_fails_the_whole_export() {
    let dir = Dir::new();
    dir.config(&[("a-good", &[]), ("b-bad", &["--mode", "crash"])]);
    let run = dir.export(&["--config", "mcp.json", "-o", "manifest.json"]);
    assert_failed(&dir, &run, 3, "b-bad", "closed its output");
    dir.assert_gone("a-good");
}

#[test]
fn a_failed_export_leaves_an_existing_manifest_untouched() {
    let dir = Dir::new();
    dir.config(&[("demo", &["--mode", "malformed"])]);
    dir.write("manifest.json", "previous\n");
    dir.export(&["--config", "mcp.json", "-o", "manifest.json"])
        .code(3);
    assert_eq!(dir.read("manifest.json"), b"previous\n");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn an_output_that_cannot_be_written_exits_4_and_stops_the_server() {
    let dir = Dir::new();
    dir.config(&[("demo", &[])]);
    dir.export(&["--config", "mcp.json", "-o", "no/such/dir/m.json"])
        .code(4)
        .stderr_has("cannot create a temporary file in no/such/dir");
    dir.assert_gone("demo");
}

#[test]
fn reads_vs_code_files_with_comments_and_expands_variables() {
    let dir = Dir::new();
    let pid = dir.path().join("demo.pid");
    dir.write(
        ".vscode/mcp.json",
        format!(
            "// workspace servers\n{{\n  \"inputs\": [],\n  \"servers\": {{\n    \"demo\": {{\n      \
             \"type\": \"stdio\",\n      \"command\": \"${{FIXTURE}}\",\n      \
             \"args\": [\"--pid-file\", {}, \"--mode\", \"${{env:MODE}}\",],\n    }},\n  }},\n}}\n",
            json_string(&pid.to_string_lossy())
        ),
    );
    let fixture = fixture();
    let env = [
        ("FIXTURE", fixture.to_str().unwrap()),
        ("MODE", "paginated"),
    ];
    dir.export_env(&["--config", ".vscode/mcp.json", "-o", "m.json"], &env)
        .code(0);
    assert_eq!(tool_names(&manifest(&dir, "m.json"), "demo"), HONEST);
    dir.assert_gone("demo");
}

#[test]
fn reads_servers_inside_vs_code_settings() {
    let dir = Dir::new();
    let fixture = fixture();
    dir.write(
        "settings.json",
        format!(
            "{{\"editor.tabSize\": 2, \"mcp\": {{\"servers\": {{\"demo\": {{\"command\": {}}}}}}}}}",
            json_string(&fixture.to_string_lossy())
        ),
    );
    dir.export(&["--config", "settings.json", "-o", "m.json"])
        .code(0);
    assert_eq!(tool_names(&manifest(&dir, "m.json"), "demo"), HONEST);
}

#[test]
fn servers_get_only_the_minimal_environment_unless_told() {
    let dir = Dir::new();
    let fixture = fixture();
    dir.write(
        "mcp.json",
        format!(
            "{{\"mcpServers\": {{\"demo\": {{\"command\": \"/bin/sh\", \"args\": [\"-c\", \
             \"env | sort >&2; exec {}\"], \"env\": {{\"GIVEN\": \"yes\"}}}}}}}}",
            fixture.to_string_lossy()
        ),
    );
    let env = [
        ("HOME", "/home/tester"),
        ("PATH", "/usr/bin:/bin"),
        ("API_SECRET", "hunter2"),
    ];
    let run = dir.export_env(&["--config", "mcp.json", "-v", "-o", "m.json"], &env);
    run.code(0)
        .stderr_has("[demo] HOME=/home/tester")
        .stderr_has("[demo] GIVEN=yes")
        .stderr_lacks("API_SECRET");
    let run = dir.export_env(
        &[
            "--config",
            "mcp.json",
            "-v",
            "--inherit-env",
            "-o",
            "m.json",
        ],
        &env,
    );
    run.code(0).stderr_has("[demo] API_SECRET=hunter2");
}

#[test]
fn proxy_and_ca_variables_reach_the_server_and_tokens_do_not() {
    // `uvx` behind a TLS-inspecting proxy needs the proxy and the CA a client passes.
    let dir = Dir::new();
    shell_server(
        &dir,
        &format!("env | sort >&2; exec {}", fixture().to_string_lossy()),
    );
    let env = [
        ("PATH", "/usr/bin:/bin"),
        ("HTTPS_PROXY", "http://proxy.internal:3128"),
        ("no_proxy", "localhost"),
        ("SSL_CERT_FILE", "/etc/corp-ca.pem"),
        ("NODE_EXTRA_CA_CERTS", "/etc/corp-ca.pem"),
        ("UV_NATIVE_TLS", "1"),
        ("GITHUB_TOKEN", "hunter2"),
    ];
    dir.export_env(&["--config", "mcp.json", "-v", "-o", "m.json"], &env)
        .code(0)
        .stderr_has("[demo] HTTPS_PROXY=http://proxy.internal:3128")
        .stderr_has("[demo] no_proxy=localhost")
        .stderr_has("[demo] SSL_CERT_FILE=/etc/corp-ca.pem")
        .stderr_has("[demo] NODE_EXTRA_CA_CERTS=/etc/corp-ca.pem")
        .stderr_has("[demo] UV_NATIVE_TLS=1")
        .stderr_lacks("GITHUB_TOKEN")
        .stderr_lacks("did not start");
}

#[test]
fn a_server_that_fails_to_start_names_the_variables_it_was_not_given() {
    let dir = Dir::new();
    shell_server(&dir, "echo 'cannot reach the registry' >&2; exit 1");
    let env = [
        ("PATH", "/usr/bin:/bin"),
        ("HTTPS_PROXY", "http://proxy.internal:3128"),
        ("GITHUB_TOKEN", "hunter2"),
        ("AWS_PROFILE", "dev-account-7"),
    ];
    let run = dir.export_env(&["--config", "mcp.json", "-o", "m.json"], &env);
    run.code(3)
        .stderr_has(
            "mcppin-export: note: server \"demo\" did not start; its environment left out 2 \
             variables of this one: \"AWS_PROFILE\", \"GITHUB_TOKEN\" (names only; \
             --inherit-env passes them all, the entry's \"env\" passes one)",
        )
        .stderr_lacks("hunter2")
        .stderr_lacks("dev-account-7")
        .stderr_lacks("\"HTTPS_PROXY\"");
    // Given everything, nothing was left out: no note.
    dir.export_env(
        &["--config", "mcp.json", "--inherit-env", "-o", "m.json"],
        &env,
    )
    .code(3)
    .stderr_lacks("did not start");
    // A program that cannot be started at all gets the note too.
    dir.write(
        "mcp.json",
        "{\"mcpServers\": {\"demo\": {\"command\": \"/nonexistent/server\"}}}",
    );
    dir.export_env(&["--config", "mcp.json", "-o", "m.json"], &env)
        .code(3)
        .stderr_has("note: server \"demo\" did not start");
}

#[test]
fn a_server_that_fails_after_it_started_gets_no_note_of_variables() {
    let dir = Dir::new();
    dir.config(&[("demo", &["--mode", "malformed"])]);
    dir.export_env(
        &["--config", "mcp.json", "-o", "m.json"],
        &[("PATH", "/usr/bin:/bin"), ("GITHUB_TOKEN", "hunter2")],
    )
    .code(3)
    .stderr_has("malformed answer to tools/list")
    .stderr_lacks("did not start");
}

#[test]
fn an_unreadable_configuration_exits_4() {
    let dir = Dir::new();
    dir.export(&["--config", "missing.json", "-o", "m.json"])
        .code(4)
        .stderr_has("mcppin-export: cannot read missing.json");
    dir.write("broken.json", "{\"mcpServers\": ");
    dir.export(&["--config", "broken.json", "-o", "m.json"])
        .code(4)
        .stderr_has("broken.json: the configuration is not JSON");
    dir.write("other.json", "{\"editor.tabSize\": 2}");
    dir.export(&["--config", "other.json", "-o", "m.json"])
        .code(4)
        .stderr_has("no \"mcpServers\", \"servers\" or \"mcp\": {\"servers\"} object");
    assert!(!dir.exists("m.json"));
}

/// A configuration whose one server holds `depth` nested arrays under an unknown key.
fn nested_config(depth: usize) -> String {
    format!(
        "{{\"mcpServers\": {{\"a\": {{\"command\": \"x\", \"deep\": {}{}}}}}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

#[test]
fn a_configuration_nesting_too_deep_exits_4_without_overflowing_the_stack() {
    // About 12,000 levels aborted the process with a stack overflow.
    let dir = Dir::new();
    dir.write("deep.json", nested_config(100_000));
    let run = dir.export_bounded(&["--config", "deep.json", "-o", "m.json"]);
    run.code(4);
    assert_eq!(
        run.stderr,
        "mcppin-export: deep.json: the configuration nests arrays and objects deeper than 64 \
         levels (line 1, column 108)\n"
    );
    assert!(!dir.exists("m.json"));
}

#[test]
fn a_configuration_larger_than_the_bound_exits_4_without_reading_it_all() {
    // A link to /dev/zero grew memory without end.
    let dir = Dir::new();
    let max = 4 << 20;
    let over = format!("{{\"mcpServers\": {{}}}}{}", " ".repeat(max));
    dir.write("big.json", &over[..max + 1]);
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.json")).unwrap();
    for name in ["big.json", "zero.json"] {
        let run = dir.export_bounded(&["--config", name, "-o", "m.json"]);
        run.code(4);
        assert_eq!(
            run.stderr,
            format!(
                "mcppin-export: cannot read {name}: larger than 4194304 bytes, the most a \
                 configuration may hold\n"
            )
        );
    }
    assert!(!dir.exists("m.json"));
    // One byte less is read: a configuration of no server, captured as such.
    dir.write("big.json", &over[..max]);
    dir.export_bounded(&["--config", "big.json", "-o", "m.json"])
        .code(0);
    assert!(dir.exists("m.json"));
}

#[test]
fn an_input_variable_without_an_answer_is_refused_naming_the_flag() {
    let dir = Dir::new();
    dir.write(
        "mcp.json",
        r#"{"servers": {"gh": {"command": "gh-mcp", "env": {"TOKEN": "${input:token}"}}}}"#,
    );
    dir.export(&["--config", "mcp.json", "-o", "m.json"])
        .code(4)
        .stderr_has("server \"gh\": ${input:token} is a value VS Code prompts for; give it with --input token=VALUE");
    assert!(!dir.exists("m.json"));
}

/// A VS Code configuration whose server prints its environment and arguments on stderr, then
/// becomes the fixture: `-v` shows what the export expanded.
fn vs_code_env_printer(dir: &Dir, path: &str, extra: &str) {
    dir.write(
        path,
        format!(
            "{{\"servers\": {{\"demo\": {{\"type\": \"stdio\", \"command\": \"/bin/sh\", \
             \"args\": [\"-c\", \"env | sort >&2; echo ARG=$0 >&2; exec {}\", \"${{workspaceFolder}}/x\"], \
             \"env\": {{\"TOKEN\": \"${{input:token}}\", \"BOTH\": \"from env\"}}{extra}}}}}}}",
            fixture().to_string_lossy()
        ),
    );
}

#[test]
fn vs_code_inputs_workspace_and_env_file_are_supplied() {
    let dir = Dir::new();
    vs_code_env_printer(
        &dir,
        "app/.vscode/mcp.json",
        ", \"envFile\": \"${workspaceFolder}/.env\"",
    );
    dir.write(
        "app/.env",
        "# the server's settings\nexport FROM_FILE='yes'\nBOTH=from file\n",
    );
    let app = dir.path().join("app");
    let run = dir.export(&[
        "--config",
        "app/.vscode/mcp.json",
        "--input",
        "token=t=0k",
        "-v",
        "-o",
        "m.json",
    ]);
    run.code(0)
        .stderr_has("[demo] TOKEN=t=0k")
        .stderr_has("[demo] FROM_FILE=yes")
        .stderr_has("[demo] BOTH=from env")
        .stderr_has(&format!("[demo] ARG={}/x", app.display()));
    let m = manifest(&dir, "m.json");
    assert_eq!(tool_names(&m, "demo"), HONEST);
    // The launch is recorded as written: placeholders stay, env values never appear.
    let launch = m.servers["demo"]
        .launch
        .as_ref()
        .unwrap()
        .to_value()
        .to_string();
    assert!(launch.contains(r#""${workspaceFolder}/x""#), "{launch}");
    assert!(launch.contains(r#""env":["BOTH","TOKEN"]"#), "{launch}");
    assert!(
        launch.contains(r#""env_file":"${workspaceFolder}/.env""#),
        "{launch}"
    );
    let written = String::from_utf8(dir.read("m.json")).unwrap();
    assert!(
        !written.contains("t=0k") && !written.contains("from env"),
        "{written}"
    );
    // --workspace names another folder.
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(app.join(".env"), other.join(".env")).unwrap();
    let run = dir.export(&[
        "--config",
        "app/.vscode/mcp.json",
        "--input",
        "token=t",
        "--workspace",
        &other.to_string_lossy(),
        "-v",
        "-o",
        "m.json",
    ]);
    run.code(0)
        .stderr_has(&format!("[demo] ARG={}/x", other.display()));
}

#[test]
fn a_workspace_variable_outside_a_vscode_folder_names_the_flag() {
    let dir = Dir::new();
    vs_code_env_printer(&dir, "mcp.json", "");
    dir.export(&["--config", "mcp.json", "--input", "token=t", "-o", "m.json"])
        .code(4)
        .stderr_has("server \"demo\": ${workspaceFolder} is the folder VS Code has open; give it with --workspace DIR");
    assert!(!dir.exists("m.json"));
}

#[test]
fn a_missing_env_file_exits_4_naming_it() {
    let dir = Dir::new();
    vs_code_env_printer(
        &dir,
        "app/.vscode/mcp.json",
        ", \"envFile\": \"${workspaceFolder}/.env\"",
    );
    dir.export(&[
        "--config",
        "app/.vscode/mcp.json",
        "--input",
        "token=t",
        "-o",
        "m.json",
    ])
    .code(4)
    .stderr_has("server \"demo\": cannot read its envFile")
    .stderr_has("app/.env");
    assert!(!dir.exists("m.json"));
}

#[test]
fn an_env_file_that_is_no_regular_file_exits_4_without_waiting_or_growing() {
    // The envFile was opened blocking and read without a kind check: a FIFO
    // without a writer hung the export, a link to /dev/zero was read to the size bound.
    let dir = Dir::new();
    vs_code_env_printer(
        &dir,
        "app/.vscode/mcp.json",
        ", \"envFile\": \"${workspaceFolder}/.env\"",
    );
    let args = [
        "--config",
        "app/.vscode/mcp.json",
        "--input",
        "token=t",
        "-o",
        "m.json",
    ];
    let env = dir.path().join("app/.env");
    let status = mcppin_testkit::status(Command::new("mkfifo").arg(&env))
        .expect("mkfifo (coreutils) must be installed");
    assert!(status.success());
    dir.export_bounded(&args)
        .code(4)
        .stderr_has("server \"demo\": cannot read its envFile")
        .stderr_has("not a regular file (a FIFO)");
    std::fs::remove_file(&env).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &env).unwrap();
    dir.export_bounded(&args)
        .code(4)
        .stderr_has("not a regular file (a character device)");
    assert!(!dir.exists("m.json"));
    // A regular file, through a link too, is read.
    std::fs::remove_file(&env).unwrap();
    dir.write("app/real.env", "FROM_FILE=yes\n");
    std::os::unix::fs::symlink(dir.path().join("app/real.env"), &env).unwrap();
    dir.export_bounded(&args).code(0);
}

#[test]
fn a_malformed_input_flag_is_a_usage_error() {
    let dir = Dir::new();
    dir.config(&[("demo", &[])]);
    dir.export(&["--config", "mcp.json", "--input", "=x", "-o", "m.json"])
        .code(2)
        .stderr_has("expected ID=VALUE");
}

#[test]
fn a_guarded_entry_is_captured_as_the_server_behind_the_guard() {
    let dir = Dir::new();
    let pid = dir.path().join("demo.pid");
    dir.write(
        "mcp.json",
        format!(
            "{{\"mcpServers\": {{\"demo\": {{\"command\": \"/opt/bin/mcppin-guard\", \"args\": \
             [\"--lock\", \"mcp.lock.json\", \"--server\", \"demo\", \"--\", {}, \"--pid-file\", {}]}}}}}}",
            json_string(&fixture().to_string_lossy()),
            json_string(&pid.to_string_lossy())
        ),
    );
    dir.export(&["--config", "mcp.json", "-o", "m.json"])
        .code(0);
    let m = manifest(&dir, "m.json");
    assert_eq!(tool_names(&m, "demo"), HONEST);
    // The launch identity is the server's, behind the guard as written.
    let launch = m.servers["demo"].launch.as_ref().unwrap().to_value();
    assert_eq!(
        launch.get("command").and_then(|c| c.as_str()),
        fixture().to_str()
    );
    let guard = launch.get("guard").expect("the guard is recorded");
    assert_eq!(
        guard.get("command").and_then(|c| c.as_str()),
        Some("/opt/bin/mcppin-guard")
    );
    assert_eq!(
        guard.to_string(),
        r#"{"args":["--lock","mcp.lock.json","--server","demo"],"command":"/opt/bin/mcppin-guard"}"#
    );
    dir.assert_gone("demo");
}

/// `mcp.json` running the fixture as server `demo`, behind `guard` (the guard's program and
/// arguments) when given.
fn guarded_config(dir: &Dir, guard: Option<(&str, &[&str])>) {
    let server = [
        json_string(&fixture().to_string_lossy()),
        json_string("--pid-file"),
        json_string(&dir.path().join("demo.pid").to_string_lossy()),
    ];
    let (command, args) = match guard {
        Some((program, args)) => {
            let mut all: Vec<String> = args.iter().map(|a| json_string(a)).collect();
            all.push(json_string("--"));
            all.extend(server.iter().cloned());
            (json_string(program), all)
        }
        None => (server[0].clone(), server[1..].to_vec()),
    };
    dir.write(
        "mcp.json",
        format!(
            "{{\"mcpServers\": {{\"demo\": {{\"command\": {command}, \"args\": [{}]}}}}}}",
            args.join(", ")
        ),
    );
}

#[test]
fn a_guard_configured_from_env_is_part_of_the_launch() {
    // An entry may give the guard its settings in `env` and the server command
    // alone in `args`; the export captures the server and records the settings as the guard's.
    let dir = Dir::new();
    let write = |lock: &str| {
        dir.write(
            "mcp.json",
            format!(
                "{{\"mcpServers\": {{\"demo\": {{\"command\": \"mcppin-guard\", \"args\": [{}, \
                 \"--pid-file\", {}], \"env\": {{\"MCPPIN_LOCK\": {}, \"MCPPIN_SERVER\": \"demo\"}}}}}}}}",
                json_string(&fixture().to_string_lossy()),
                json_string(&dir.path().join("demo.pid").to_string_lossy()),
                json_string(lock)
            ),
        );
    };
    write("/etc/mcp.lock.json");
    dir.export(&["--config", "mcp.json", "-o", "approved.json"])
        .code(0);
    let m = manifest(&dir, "approved.json");
    assert_eq!(tool_names(&m, "demo"), HONEST);
    let launch = m.servers["demo"].launch.as_ref().unwrap().to_value();
    assert_eq!(
        launch.get("guard").map(ToString::to_string).as_deref(),
        Some(
            r#"{"args":[],"command":"mcppin-guard","env":{"MCPPIN_LOCK":"/etc/mcp.lock.json","MCPPIN_SERVER":"demo"}}"#
        )
    );
    mcppin(&dir, &["lock", "-o", "mcp.lock.json", "approved.json"]).code(0);
    write("/tmp/other.lock.json");
    dir.export(&["--config", "mcp.json", "-o", "served.json"])
        .code(0);
    mcppin(&dir, &["verify", "--lock", "mcp.lock.json", "served.json"])
        .code(1)
        .stdout_has("launch-changed [gated]: demo\n  approved: MCPPIN_LOCK=/etc/mcp.lock.json MCPPIN_SERVER=demo mcppin-guard -- ");
    dir.assert_gone("demo");
}

#[test]
fn the_guards_settings_in_an_env_file_are_part_of_the_launch() {
    // An envFile giving the guard MCPPIN_LOCK or MCPPIN_MODE could be edited to
    // point the guard at another lock, or switch its mode, without a launch change.
    let dir = Dir::new();
    dir.write(
        "mcp.json",
        format!(
            "{{\"servers\": {{\"demo\": {{\"command\": \"mcppin-guard\", \"args\": [{}, \
             \"--pid-file\", {}], \"env\": {{\"MCPPIN_SERVER\": \"demo\"}}, \
             \"envFile\": {}}}}}}}",
            json_string(&fixture().to_string_lossy()),
            json_string(&dir.path().join("demo.pid").to_string_lossy()),
            json_string(&dir.path().join(".env").to_string_lossy())
        ),
    );
    let approved = "MCPPIN_LOCK=/etc/mcp.lock.json\nMCPPIN_SERVER=other\nDEBUG=1\n";
    dir.write(".env", approved);
    dir.export(&["--config", "mcp.json", "-o", "approved.json"])
        .code(0);
    let m = manifest(&dir, "approved.json");
    let launch = m.servers["demo"].launch.as_ref().unwrap().to_value();
    // The entry's env wins over the file, as in VS Code.
    assert_eq!(
        launch.get("guard").map(ToString::to_string).as_deref(),
        Some(
            r#"{"args":[],"command":"mcppin-guard","env":{"MCPPIN_LOCK":"/etc/mcp.lock.json","MCPPIN_SERVER":"demo"}}"#
        )
    );
    mcppin(&dir, &["lock", "-o", "mcp.lock.json", "approved.json"]).code(0);
    let verify = |dir: &Dir| {
        dir.export(&["--config", "mcp.json", "-o", "served.json"])
            .code(0);
        mcppin(dir, &["verify", "--lock", "mcp.lock.json", "served.json"])
    };
    // Where it holds: the same file, or one whose other variables changed.
    verify(&dir).code(0);
    dir.write(".env", approved.replace("DEBUG=1", "DEBUG=2"));
    verify(&dir).code(0);
    for edited in [
        approved.replace("/etc/mcp.lock.json", "/tmp/other.lock.json"),
        format!("{approved}MCPPIN_MODE=quarantine\n"),
        approved.replace("MCPPIN_LOCK=/etc/mcp.lock.json\n", ""),
    ] {
        dir.write(".env", &edited);
        verify(&dir).code(1).stdout_has(
            "launch-changed [gated]: demo\n  approved: MCPPIN_LOCK=/etc/mcp.lock.json \
             MCPPIN_SERVER=demo mcppin-guard -- ",
        );
    }
    dir.assert_gone("demo");
}

#[test]
fn a_guarded_entry_with_a_relative_lock_is_exported_with_a_warning() {
    // A client starts the guard in a working directory of its own choosing, so a
    // relative --lock is looked for elsewhere than the user meant.
    let dir = Dir::new();
    guarded_config(
        &dir,
        Some((
            "mcppin-guard",
            &[
                "--lock",
                "mcp.lock.json",
                "--server",
                "demo",
                "--pubkey=${HOME}/k.pem",
            ],
        )),
    );
    let run = dir.export_env(
        &["--config", "mcp.json", "-o", "m.json", "--quiet"],
        &[("HOME", "/home/u")],
    );
    run.code(0);
    assert_eq!(
        run.stderr,
        "mcppin-export: warning: server \"demo\": the guard's --lock \"mcp.lock.json\" is a \
         relative path: a client starts mcppin-guard in a working directory of its own choosing \
         (often / or the client's install directory), where it may not be found; give --lock an \
         absolute path\n"
    );
    // Absolute paths, written out or through a variable, hold.
    let lock = dir.path().join("mcp.lock.json");
    guarded_config(
        &dir,
        Some((
            "mcppin-guard",
            &[
                "--lock",
                &lock.to_string_lossy(),
                "--server",
                "demo",
                "--pubkey=${HOME}/k.pem",
            ],
        )),
    );
    let run = dir.export_env(
        &["--config", "mcp.json", "-o", "m.json", "--quiet"],
        &[("HOME", "/home/u")],
    );
    run.code(0);
    assert_eq!(run.stderr, "");
}

#[test]
fn a_configuration_edited_to_drop_or_change_the_guard_fails_verify() {
    // Removing the guard from an entry, or pointing it at another lock, key, mode
    // or program, verified as PASS: the launch recorded only the command after `--`.
    let dir = Dir::new();
    let approved: (&str, &[&str]) = (
        "mcppin-guard",
        &[
            "--lock",
            "mcp.lock.json",
            "--server",
            "demo",
            "--pubkey",
            "k.pem",
        ],
    );
    guarded_config(&dir, Some(approved));
    dir.export(&["--config", "mcp.json", "-o", "approved.json"])
        .code(0);
    mcppin(&dir, &["lock", "-o", "mcp.lock.json", "approved.json"]).code(0);
    assert!(
        String::from_utf8(dir.read("mcp.lock.json"))
            .unwrap()
            .contains("\"guard\": {")
    );
    let verify = |dir: &Dir| {
        dir.export(&["--config", "mcp.json", "-o", "served.json"])
            .code(0);
        mcppin(dir, &["verify", "--lock", "mcp.lock.json", "served.json"])
    };
    verify(&dir).code(0);
    let edits: [Option<(&str, &[&str])>; 5] = [
        None,
        Some((
            "mcppin-guard",
            &[
                "--lock",
                "other.lock.json",
                "--server",
                "demo",
                "--pubkey",
                "k.pem",
            ],
        )),
        Some((
            "mcppin-guard",
            &["--lock", "mcp.lock.json", "--server", "demo"],
        )),
        Some((
            "mcppin-guard",
            &[
                "--lock",
                "mcp.lock.json",
                "--server",
                "demo",
                "--pubkey",
                "k.pem",
                "--mode",
                "quarantine",
            ],
        )),
        Some((
            "/tmp/mcppin-guard",
            &[
                "--lock",
                "mcp.lock.json",
                "--server",
                "demo",
                "--pubkey",
                "k.pem",
            ],
        )),
    ];
    for edit in edits {
        guarded_config(&dir, edit);
        verify(&dir)
            .code(1)
            .stdout_has("launch-changed [gated]: demo\n  approved: mcppin-guard --lock mcp.lock.json --server demo --pubkey k.pem -- ");
    }
    guarded_config(&dir, Some(approved));
    verify(&dir).code(0);
}

#[test]
fn an_undefined_variable_is_refused_with_a_message() {
    let dir = Dir::new();
    dir.write(
        "mcp.json",
        r#"{"mcpServers": {"db": {"command": "${DB_SERVER}"}}}"#,
    );
    dir.export(&["--config", "mcp.json", "-o", "m.json"])
        .code(4)
        .stderr_has("server \"db\": environment variable DB_SERVER is not set");
}

#[test]
fn bad_flags_are_usage_errors() {
    let dir = Dir::new();
    dir.config(&[("demo", &[])]);
    dir.export(&["--config", "mcp.json", "--passes", "0", "-o", "m.json"])
        .code(2);
    dir.export(&[
        "--config",
        "mcp.json",
        "--protocol",
        "2099-01-01",
        "-o",
        "m.json",
    ])
    .code(2)
    .stderr_has("unknown protocol revision \"2099-01-01\"");
    dir.export(&["--config", "mcp.json", "--timeout", "soon", "-o", "m.json"])
        .code(2);
    dir.export(&["--config", "mcp.json"]).code(2);
    assert!(!dir.exists("m.json"));
    assert!(!dir.exists("demo.pid"));
}

#[test]
fn help_states_the_exit_codes() {
    let dir = Dir::new();
    dir.export(&["--help"])
        .code(0)
        .stdout_has("3  a server could not be captured (nothing written)")
        .stdout_has("--inherit-env");
}

#[test]
fn failure_messages_are_stable() {
    // One stderr snapshot per failure mode: the server's own lines (escaped, prefixed with its
    // id) and then the one error line naming the server and the cause.
    for (name, modes, extra) in [
        ("duplicate", &["--mode", "duplicate"][..], &[][..]),
        ("malformed", &["--mode", "malformed"][..], &[][..]),
        ("crash", &["--mode", "crash"][..], &[][..]),
        (
            "hostile_stderr",
            &["--mode", "hostile-stderr", "--mode", "crash"][..],
            &[][..],
        ),
        (
            "silent",
            &["--mode", "silent"][..],
            &["--timeout", "2s"][..],
        ),
        ("modern_only", &["--era", "modern"][..], &[][..]),
    ] {
        let dir = Dir::new();
        dir.config(&[("demo", modes)]);
        let mut args = vec!["--config", "mcp.json", "-o", "manifest.json"];
        args.extend_from_slice(extra);
        let run = dir.export(&args);
        run.code(3);
        insta::assert_snapshot!(format!("failure_{name}_stderr"), run.stderr);
        dir.assert_gone("demo");
    }
}

#[test]
fn passes_0_says_which_count_to_give_instead() {
    // Clap said "number would be zero for non-zero type".
    let dir = Dir::new();
    dir.config(&[("demo", &[])]);
    let run = dir.export(&["--config", "mcp.json", "--passes", "0", "-o", "m.json"]);
    run.code(2).stderr_has(
        "invalid value '0' for '--passes <N>': 0 readings capture nothing; give --passes 2 \
         (the default) for a complete capture, or --passes 1 for a single reading (never \
         complete)\n",
    );
    assert!(!dir.path().join("m.json").exists());
    dir.export(&["--config", "mcp.json", "--passes", "two", "-o", "m.json"])
        .code(2)
        .stderr_has("invalid value 'two' for '--passes <N>': invalid digit");
    dir.export(&["--config", "mcp.json", "--passes", "1", "-o", "m.json"])
        .code(0);
}

#[test]
fn the_manifest_gets_the_mode_of_any_new_file() {
    // A manifest holds no secret: like a lockfile, it gets 0666 less the umask, not the 0600
    // of a temporary file. Compared with a file created here the plain way, so the test holds
    // under any umask.
    use std::os::unix::fs::PermissionsExt;
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let dir = Dir::new();
    let plain = mode(&dir.write("plain", "x"));
    dir.config(&[("demo", &[])]);
    dir.export(&["--config", "mcp.json", "-o", "manifest.json"])
        .code(0);
    assert_eq!(mode(&dir.path().join("manifest.json")), plain);
}

#[test]
fn a_client_profile_or_capabilities_file_is_recorded_per_server() {
    let dir = Dir::new();
    dir.config(&[("demo", &[])]);
    dir.export(&["--config", "mcp.json", "-o", "m.json"])
        .code(0);
    let bare = manifest(&dir, "m.json");
    assert_eq!(
        bare.servers["demo"]
            .client_capabilities
            .as_ref()
            .map(ToString::to_string),
        Some("{}".to_owned())
    );
    dir.export(&[
        "--config",
        "mcp.json",
        "--client",
        "claude-code",
        "-o",
        "m.json",
    ])
    .code(0);
    let code = manifest(&dir, "m.json");
    assert_eq!(
        code.servers["demo"]
            .client_capabilities
            .as_ref()
            .map(ToString::to_string),
        Some(r#"{"elicitation":{},"roots":{}}"#.to_owned())
    );
    dir.write("caps.json", r#"{"sampling": {}}"#);
    dir.export(&[
        "--config",
        "mcp.json",
        "--client",
        "vscode",
        "--client-capabilities",
        "caps.json",
        "-o",
        "m.json",
    ])
    .code(0);
    let custom = manifest(&dir, "m.json");
    assert_eq!(
        custom.servers["demo"]
            .client_capabilities
            .as_ref()
            .map(ToString::to_string),
        Some(r#"{"sampling":{}}"#.to_owned())
    );
}

#[test]
fn a_bad_client_flag_is_refused() {
    let dir = Dir::new();
    dir.config(&[("demo", &[])]);
    dir.export(&["--config", "mcp.json", "--client", "claude", "-o", "m.json"])
        .code(2)
        .stderr_has(
            "no client profile \"claude\" (known: claude-desktop, claude-code, cursor, vscode)",
        );
    dir.write("caps.json", r#"["roots"]"#);
    dir.export(&[
        "--config",
        "mcp.json",
        "--client-capabilities",
        "caps.json",
        "-o",
        "m.json",
    ])
    .code(4)
    .stderr_has("caps.json: the client capabilities are not a JSON object");
    dir.write("dup.json", r#"{"roots": {}, "roots": {}}"#);
    dir.export(&[
        "--config",
        "mcp.json",
        "--client-capabilities",
        "dup.json",
        "-o",
        "m.json",
    ])
    .code(4)
    .stderr_has("dup.json:");
    // Read to the same bound as a configuration.
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.json")).unwrap();
    dir.export_bounded(&[
        "--config",
        "mcp.json",
        "--client-capabilities",
        "zero.json",
        "-o",
        "m.json",
    ])
    .code(4)
    .stderr_has("cannot read zero.json: larger than 4194304 bytes");
    assert!(!dir.exists("m.json"));
}

//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `testdata/conformance` with the Node.js 22 it needs) against the reference `server-everything`
//! in its `streamableHttp` mode, direct and through `mcppin-guard --listen` holding a lock of
//! that server: every check that passes direct passes through the guard (docs/conformance.md).
//!
//! These tests never skip: without the installed packages they fail with the command that
//! installs them (`.ci/run` and `scripts/test` run it).

mod peers;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use peers::{Proc, everything_http, guard_http, installed, lock_everything, path_var};
use serde_json::json;

/// The checks that pass direct and cannot through the guard (scenario, check, status through
/// the guard), in the order of `regressions`. Each calls a tool of the suite's own test server
/// that `server-everything` does not have; direct, the server's "tool not found" answer (a
/// result with `isError`) happens to satisfy the check, while the guard refuses a call to a tool
/// the lock does not approve before it reaches the server (docs/conformance.md).
const CANNOT_PASS: [(&str, &str, &str); 3] = [
    // `test_reconnection` refused in a JSON answer: no event stream, so no priming event.
    ("server-sse-polling", "server-sse-priming-event", "missing"),
    // `test_error_handling`
    ("tools-call-error", "tools-call-error", "FAILURE"),
    // `test_simple_text`
    (
        "tools-call-simple-text",
        "tools-call-simple-text",
        "FAILURE",
    ),
];

/// A bound on one whole run of the suite (each scenario is bounded by `--timeout` as well).
const SUITE_BOUND: Duration = Duration::from_secs(300);

/// One check of one scenario: the scenario, the check's id, and which occurrence of that id in
/// the scenario it is (a few scenarios emit the same id more than once).
type CheckKey = (String, String, usize);

/// The status of every check of a run (`SUCCESS`, `FAILURE`, `WARNING`, `SKIPPED`, ...).
type Results = BTreeMap<CheckKey, String>;

/// The capabilities the suite's client declares in most scenarios. `server-everything` serves
/// two more tools to such a client than to one declaring none, which is how `mcppin-export`
/// captures (docs/conformance.md).
fn suite_client_capabilities() -> serde_json::Value {
    json!({"sampling": {}, "elicitation": {}})
}

/// A lock of what `server-everything` at `upstream` serves to the suite's client: the export
/// over stdio, its tools replaced by those served to a client declaring the suite's
/// capabilities, then `edit` applied.
fn lock_for_suite(
    dir: &Path,
    upstream: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> PathBuf {
    let served = peers::served_tools(dir, upstream, &suite_client_capabilities());
    lock_everything(dir, |manifest| {
        peers::approve_tools(manifest, &served);
        edit(manifest);
    })
}

const INSTALL: &str = "npm ci --prefix testdata/conformance --no-audit --no-fund";

fn node22() -> PathBuf {
    installed("conformance", "node_modules/.bin/node", INSTALL)
}

fn suite_script() -> PathBuf {
    installed(
        "conformance",
        "node_modules/@modelcontextprotocol/conformance/dist/index.js",
        INSTALL,
    )
}

/// Runs every server scenario of the suite (`--suite all`: active, pending, draft and
/// extensions) against `url` and reads the checks it wrote under `dir/<name>`.
fn run_suite(dir: &Path, name: &str, url: &str, scenario: Option<&str>) -> Results {
    let out = dir.join(name);
    let mut command = Command::new(node22());
    command
        .arg(suite_script())
        .args(["server", "--url", url, "--timeout", "10000", "-o"])
        .arg(&out);
    match scenario {
        Some(scenario) => command.args(["--scenario", scenario]),
        None => command.args(["--suite", "all"]),
    };
    command
        .env_clear()
        .env("PATH", path_var())
        .env("HOME", dir)
        .stdin(Stdio::null());
    let mut suite = Proc::start(dir, &format!("conformance-{name}"), &mut command);
    let start = Instant::now();
    // The suite exits 1 when any check fails, which against server-everything some do; the
    // checks it wrote are what the test compares.
    while suite.try_wait().is_none() {
        assert!(
            start.elapsed() < SUITE_BOUND,
            "the conformance suite against {url} did not finish in {SUITE_BOUND:?}\n{}",
            suite.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let results = read_results(&out);
    assert!(
        !results.is_empty(),
        "the conformance suite against {url} wrote no checks\n{}",
        suite.log()
    );
    results
}

/// Reads `<out>/server-<scenario>-<timestamp>/checks.json` for every scenario of a run.
fn read_results(out: &Path) -> Results {
    let mut results = Results::new();
    let Ok(entries) = std::fs::read_dir(out) else {
        return results;
    };
    for entry in entries {
        let entry = entry.expect("results entry");
        let folder = entry.file_name().to_string_lossy().into_owned();
        let scenario = scenario_of(&folder)
            .unwrap_or_else(|| panic!("unexpected results folder {folder}"))
            .to_owned();
        // A scenario that threw before it judged anything leaves its folder empty.
        let Ok(text) = std::fs::read_to_string(entry.path().join("checks.json")) else {
            results.insert((scenario, "(no checks)".to_owned(), 0), "ERROR".to_owned());
            continue;
        };
        let checks: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{folder}/checks.json: {e}"));
        let mut seen = BTreeMap::<String, usize>::new();
        for check in checks.as_array().expect("checks.json is an array") {
            let id = check["id"].as_str().expect("check id").to_owned();
            let status = check["status"].as_str().expect("check status").to_owned();
            let n = seen.entry(id.clone()).or_default();
            results.insert((scenario.clone(), id, *n), status);
            *n += 1;
        }
    }
    results
}

/// The scenario of a results folder: `server-<scenario>-<YYYY>-<MM>-<DD>T<hh>-<mm>-<ss>-<ms>Z`.
fn scenario_of(folder: &str) -> Option<&str> {
    let rest = folder.strip_prefix("server-")?;
    let mut cut = rest.len();
    for _ in 0..6 {
        cut = rest[..cut].rfind('-')?;
    }
    Some(&rest[..cut])
}

/// Every check that succeeded in `direct` and did not in `through`, with both statuses.
fn regressions(direct: &Results, through: &Results) -> Vec<String> {
    direct
        .iter()
        .filter(|(_, status)| *status == "SUCCESS")
        .filter_map(|(key, _)| {
            let after = through.get(key).map_or("missing", String::as_str);
            (after != "SUCCESS").then(|| format!("{}/{} #{}: {after}", key.0, key.1, key.2))
        })
        .collect()
}

/// Per scenario: (checks, of which passed).
fn by_scenario(results: &Results) -> BTreeMap<&str, (usize, usize)> {
    let mut out = BTreeMap::<&str, (usize, usize)>::new();
    for ((scenario, _, _), status) in results {
        let entry = out.entry(scenario.as_str()).or_default();
        entry.0 += 1;
        entry.1 += usize::from(status == "SUCCESS");
    }
    out
}

/// The table of docs/conformance.md: per scenario, (checks, pass direct, pass through the
/// guard).
fn documented_counts() -> BTreeMap<String, (usize, usize, usize)> {
    let doc = std::fs::read_to_string(peers::root().join("docs/conformance.md"))
        .expect("docs/conformance.md");
    doc.lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let count = |i: usize| -> usize {
                cells
                    .get(i)
                    .and_then(|c| c.parse().ok())
                    .unwrap_or_else(|| {
                        panic!("docs/conformance.md: no count in column {i}: {line}")
                    })
            };
            let scenario = cells.get(1).map_or("", |c| c.trim_matches('`'));
            (scenario.to_owned(), (count(3), count(4), count(5)))
        })
        .collect()
}

fn passes(results: &Results, scenario: &str, check: &str) -> bool {
    results
        .get(&(scenario.to_owned(), check.to_owned(), 0))
        .map(String::as_str)
        == Some("SUCCESS")
}

#[test]
fn every_check_that_passes_direct_passes_through_the_guard() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, upstream) = everything_http(dir.path());
    let lock = lock_for_suite(dir.path(), &upstream, |_| {});
    let (guard, url) = guard_http(dir.path(), &lock, &upstream, &[]);

    let direct = run_suite(dir.path(), "direct", &upstream, None);
    let through = run_suite(dir.path(), "through", &url, None);

    // The suite reached the server: a run that passes nothing would prove nothing.
    assert!(
        passes(&direct, "server-initialize", "server-initialize"),
        "{direct:#?}"
    );
    assert!(passes(&direct, "tools-list", "tools-list"), "{direct:#?}");

    // The counts of docs/conformance.md's table: the page shows what this run measured.
    let after = by_scenario(&through);
    let mut measured = BTreeMap::new();
    for (scenario, (checks, passed)) in by_scenario(&direct) {
        let (_, through_passed) = after.get(scenario).copied().unwrap_or_default();
        eprintln!(
            "{scenario}: {checks} checks, direct {passed}, through the guard {through_passed}"
        );
        measured.insert(scenario.to_owned(), (checks, passed, through_passed));
    }
    let documented = documented_counts();
    let stale: Vec<String> = documented
        .keys()
        .chain(measured.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|scenario| documented.get(*scenario) != measured.get(*scenario))
        .map(|scenario| {
            format!(
                "{scenario}: docs/conformance.md says {:?}, measured {:?}",
                documented.get(scenario),
                measured.get(scenario)
            )
        })
        .collect();
    assert!(
        stale.is_empty(),
        "docs/conformance.md's table (checks, pass direct, pass through the guard) is stale:\n{}",
        stale.join("\n")
    );
    let lost = regressions(&direct, &through);
    let expected: Vec<String> = CANNOT_PASS
        .iter()
        .map(|(scenario, check, status)| format!("{scenario}/{check} #0: {status}"))
        .collect();
    assert_eq!(
        lost,
        expected,
        "checks that pass direct and not through the guard, against those docs/conformance.md \
         lists\n--- guard log\n{}",
        guard.log()
    );
}

#[test]
fn through_a_guard_holding_another_surface_the_tool_list_check_fails() {
    // The comparison above can fail: a lock whose `echo` description differs from what the
    // server serves makes the guard refuse the list, and the suite notices.
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, upstream) = everything_http(dir.path());
    let lock = lock_for_suite(dir.path(), &upstream, peers::edit_echo);
    let (_guard, url) = guard_http(dir.path(), &lock, &upstream, &[]);

    let direct = run_suite(dir.path(), "direct", &upstream, Some("tools-list"));
    let through = run_suite(dir.path(), "through", &url, Some("tools-list"));

    assert!(passes(&direct, "tools-list", "tools-list"), "{direct:#?}");
    let lost = regressions(&direct, &through);
    assert!(
        lost.iter()
            .any(|l| l.starts_with("tools-list/tools-list #0: ")),
        "{lost:?}\n{through:#?}"
    );
}

#[test]
fn scenario_names_come_from_the_results_folders() {
    assert_eq!(
        scenario_of("server-tools-call-image-2026-12-01T02-31-21-339Z"),
        Some("tools-call-image")
    );
    assert_eq!(
        scenario_of("server-ping-2026-12-01T02-31-21-339Z"),
        Some("ping")
    );
    assert_eq!(scenario_of("client-ping-2026-12-01T02-31-21-339Z"), None);
    assert_eq!(scenario_of("server-ping"), None);
}

#[test]
fn a_check_that_passes_direct_only_is_a_regression() {
    let key = |s: &str, c: &str, n| (s.to_owned(), c.to_owned(), n);
    let direct: Results = [
        (key("ping", "ping", 0), "SUCCESS".to_owned()),
        (key("ping", "wire-schema-valid", 0), "SUCCESS".to_owned()),
        (key("caching", "caching", 0), "FAILURE".to_owned()),
    ]
    .into();
    let mut through = direct.clone();
    assert!(regressions(&direct, &through).is_empty());
    // A check failing through the guard that fails direct too is no regression.
    through.insert(key("caching", "caching", 0), "FAILURE".to_owned());
    assert!(regressions(&direct, &through).is_empty());
    through.insert(key("ping", "ping", 0), "FAILURE".to_owned());
    through.remove(&key("ping", "wire-schema-valid", 0));
    assert_eq!(
        regressions(&direct, &through),
        [
            "ping/ping #0: FAILURE",
            "ping/wire-schema-valid #0: missing"
        ]
    );
}

//! `mcppin verify --format sarif` checked by the official SARIF validator, the SARIF Multitool
//! (npm `@microsoft/sarif-multitool`, pinned in `testdata/tools/package-lock.json`).
//!
//! Needs `testdata/tools/install.sh` to have run, so it is ignored by a plain `cargo test`;
//! `.ci/run` installs the tool and runs it with `--ignored`.

mod util;

use util::Dir;

const BASE: &str = include_str!("../../../testdata/verify/base.json");
/// The one tool of the second server in `BASE`, as written there.
const DELIVERY_INSIGHTS: &str = r#"
        {
          "name": "delivery_insights",
          "description": "Delivery performance figures for one region.",
          "inputSchema": {"type": "object", "properties": {"region": {"type": "string"}}, "required": ["region"]}
        }
"#;

/// Validates `dir/file` with the SARIF Multitool ([`mcppin_testkit::sarif::validate`]).
fn validate(dir: &Dir, file: &str) -> (String, Vec<(String, String)>) {
    mcppin_testkit::sarif::validate(dir.path(), file)
}

/// The one finding the validator may report on a log written without `--sarif-help-base`:
/// SARIF2005, the tool names no `informationUri` (the project has no public address to name).
const NO_INFORMATION_URI: (&str, &str) = ("SARIF2005", "Warning_ProvideToolnformationUri");

/// Asserts the validator reports no error and no warning on `file`, but for
/// [`NO_INFORMATION_URI`] exactly once when the log was written without a help base.
fn assert_clean(dir: &Dir, file: &str, linked: bool) {
    let (console, results) = validate(dir, file);
    for line in console.lines() {
        let lower = line.to_ascii_lowercase();
        let accepted = !linked
            && lower.contains(": warning sarif2005: runs[0].tool.driver: ")
            && lower.contains("does not provide 'informationuri'");
        assert!(
            accepted || (!lower.contains(": error ") && !lower.contains(": warning ")),
            "{file}: {line}\n{console}"
        );
    }
    let expected: Vec<(String, String)> = if linked {
        Vec::new()
    } else {
        vec![(NO_INFORMATION_URI.0.into(), NO_INFORMATION_URI.1.into())]
    };
    assert_eq!(results, expected, "{file}: validator results\n{console}");
}

/// Changed, added, colliding, hidden characters, invalid and mixed-script names: every policy
/// that can fire on one capture against `BASE`.
fn failing() -> String {
    BASE.replacen("closest matches", "closest matches\\u202e", 1).replacen(
        "\"name\": \"delivery_insights\",",
        "\"name\": \"get_artic1e\"}, {\"name\": \"g\\u0435t article\"}, {\"name\": \"delivery_insights\",",
        1,
    )
}

/// Nothing proven: an approved tool an incomplete capture did not show (exit 3).
fn partial() -> String {
    assert!(BASE.contains(DELIVERY_INSIGHTS));
    BASE.replacen("\"complete\": true", "\"complete\": false", 1)
        .replacen(DELIVERY_INSIGHTS, "", 1)
}

/// A directory with `BASE` approved into `lock.json`.
fn locked() -> Dir {
    let dir = Dir::new();
    dir.write("approved.json", BASE);
    dir.mcppin(&["lock", "-o", "lock.json", "approved.json"])
        .code(0);
    dir
}

fn sarif(dir: &Dir, extra: &[&str], code: i32) -> mcppin_core::Value {
    let mut args = vec!["verify", "--format", "sarif"];
    args.extend_from_slice(extra);
    let run = dir.mcppin(&args);
    run.code(code);
    mcppin_core::parse(run.stdout.as_bytes()).unwrap_or_else(|e| {
        panic!(
            "{e}\n--- stdout\n{}\n--- stderr\n{}",
            run.stdout, run.stderr
        )
    })
}

fn at<'a>(value: &'a mcppin_core::Value, pointer: &str) -> &'a mcppin_core::Value {
    value
        .pointer(pointer)
        .unwrap_or_else(|| panic!("no {pointer} in {value}"))
}

fn text<'a>(value: &'a mcppin_core::Value, pointer: &str) -> &'a str {
    at(value, pointer)
        .as_str()
        .unwrap_or_else(|| panic!("{pointer} is no string in {value}"))
}

fn successful(log: &mcppin_core::Value) -> bool {
    at(log, "/runs/0/invocations/0/executionSuccessful")
        .as_bool()
        .unwrap()
}

/// The help base the validation runs name: a test address, never fetched (see the module
/// comment).
const HELP_BASE: &str = "https://docs.example/mcppin/docs/policies.md";

#[test]
#[ignore = "needs testdata/tools/install.sh; .ci/run runs it"]
fn sarif_reports_validate_with_no_warning_but_the_unnamed_information_uri() {
    // Without --sarif-help-base, the missing informationUri is the one
    // warning; with it, none.
    let dir = locked();
    for linked in [false, true] {
        let base: &[&str] = if linked {
            &["--sarif-help-base", HELP_BASE]
        } else {
            &[]
        };
        let scenarios = [
            ("pass.sarif", BASE.to_owned(), 0),
            ("fail.sarif", failing(), 1),
            ("partial.sarif", partial(), 3),
        ];
        for (file, served, code) in scenarios {
            dir.write("served.json", served);
            let mut args = vec!["verify", "--format", "sarif", "--lock", "lock.json"];
            args.extend_from_slice(base);
            args.push("served.json");
            let run = dir.mcppin(&args);
            run.code(code);
            let file = format!("{}{file}", if linked { "linked-" } else { "" });
            dir.write(&file, &run.stdout);
            assert_clean(&dir, &file, linked);
        }
        // No report: a lockfile with one byte of approved content changed (exit 4), and a
        // lockfile outside the root its path is given relative to (exit 2).
        let lock = String::from_utf8(dir.read("lock.json")).unwrap();
        dir.write(
            "tampered.json",
            lock.replacen("closest matches", "closest matchez", 1),
        );
        dir.write("served.json", BASE);
        for (file, flags, code) in [
            ("unreadable.sarif", &["--lock", "tampered.json"][..], 4),
            (
                "outside.sarif",
                &["--lock", "lock.json", "--sarif-root", "home"][..],
                2,
            ),
        ] {
            std::fs::create_dir_all(dir.path().join("home")).unwrap();
            let mut args = vec!["verify", "--format", "sarif"];
            args.extend_from_slice(flags);
            args.extend_from_slice(base);
            args.push("served.json");
            let run = dir.mcppin(&args);
            run.code(code);
            let file = format!("{}{file}", if linked { "linked-" } else { "" });
            dir.write(&file, &run.stdout);
            assert_clean(&dir, &file, linked);
        }
    }
}

/// A directory whose `lock.json` pins the artifact of `BASE`'s parcel server (left-pad 1.3.0
/// under parcel-mcp 3.1.0), and captures in which left-pad moved (`moved.json`) and in which
/// the artifact could not be pinned (`unknown.json`).
fn artifact_scenarios() -> Dir {
    let dir = Dir::new();
    let pinned = util::parcel_artifact(("1.3.0", &util::integrity("Lp")));
    dir.write("approved.json", util::with_artifact(BASE, &pinned));
    dir.mcppin(&["lock", "-o", "lock.json", "approved.json"])
        .code(0);
    let moved = util::parcel_artifact(("1.3.1", &util::integrity("Mq")));
    dir.write("moved.json", util::with_artifact(BASE, &moved));
    dir.write(
        "unknown.json",
        util::with_artifact(BASE, r#"{"kind": "unknown", "reason": "no npm lockfile"}"#),
    );
    dir
}

#[test]
#[ignore = "needs testdata/tools/install.sh; .ci/run runs it"]
fn sarif_reports_of_artifact_findings_validate() {
    let dir = artifact_scenarios();
    for (served, code) in [("moved.json", 1), ("unknown.json", 0)] {
        let run = dir.mcppin(&["verify", "--format", "sarif", "--lock", "lock.json", served]);
        run.code(code);
        let file = format!("{served}.sarif");
        dir.write(&file, &run.stdout);
        assert_clean(&dir, &file, false);
    }
}

#[test]
fn artifact_findings_name_both_pins_and_the_servers_entry() {
    let dir = artifact_scenarios();
    let lock = String::from_utf8(dir.read("lock.json")).unwrap();
    let entry = 1 + lock
        .lines()
        .position(|l| l.contains("\"id\": \"parcel\""))
        .unwrap();
    let result = |served: &str, code: i32| {
        let log = sarif(&dir, &["--lock", "lock.json", served], code);
        let results = at(&log, "/runs/0/results").as_array().unwrap();
        assert_eq!(results.len(), 1, "{log}");
        results[0].clone()
    };
    let changed = result("moved.json", 1);
    assert_eq!(text(&changed, "/ruleId"), "artifact-changed");
    assert_eq!(text(&changed, "/level"), "error");
    let message = text(&changed, "/message/text");
    assert!(
        message.contains(&format!(
            "approved: npm left-pad@1.3.0 {}\n  served:   npm left-pad@1.3.1 {}",
            util::integrity("Lp"),
            util::integrity("Mq")
        )),
        "{message}"
    );
    assert_eq!(
        text(
            &changed,
            "/locations/0/logicalLocations/0/fullyQualifiedName"
        ),
        "parcel"
    );
    let line = at(&changed, "/locations/0/physicalLocation/region/startLine");
    assert_eq!(line.as_number().unwrap().literal(), entry.to_string());

    let unknown = result("unknown.json", 0);
    assert_eq!(text(&unknown, "/ruleId"), "artifact-unknown");
    assert_ne!(text(&unknown, "/level"), "error");
    let message = text(&unknown, "/message/text");
    assert!(
        message.contains("reason: no npm lockfile")
            && message.contains(&format!(
                "not checked: npm left-pad@1.3.0 {}",
                util::integrity("Lp")
            )),
        "{message}"
    );
}

#[test]
fn sarif_links_only_to_a_help_base_it_is_given() {
    // The project has no public address, so none is made up.
    let dir = locked();
    dir.write("served.json", failing());
    dir.write("tampered.json", "{");
    for (lock, code) in [("lock.json", 1), ("tampered.json", 4)] {
        let log = sarif(&dir, &["--lock", lock, "served.json"], code);
        let driver = at(&log, "/runs/0/tool/driver");
        assert_eq!(driver.get("informationUri"), None, "{driver}");
        let rules = at(driver, "/rules").as_array().unwrap();
        assert!(rules.len() > 10, "{driver}");
        for rule in rules {
            assert_eq!(rule.get("helpUri"), None, "{rule}");
            let help = text(rule, "/help/markdown");
            assert!(help.contains("What to do"), "{help}");
        }
        // Nothing but the schema is an address.
        let written = log.to_string();
        assert_eq!(written.matches("://").count(), 1, "{written}");

        let mut flags = vec!["--sarif-help-base", HELP_BASE, "--lock", lock];
        flags.push("served.json");
        let linked = sarif(&dir, &flags, code);
        assert_eq!(
            text(&linked, "/runs/0/tool/driver/informationUri"),
            HELP_BASE
        );
        assert_eq!(
            text(&linked, "/runs/0/tool/driver/rules/0/helpUri"),
            format!("{HELP_BASE}#tool-changed")
        );
    }
}

#[test]
fn every_result_is_located_at_the_line_of_its_item_in_the_lockfile() {
    let dir = locked();
    let lock = String::from_utf8(dir.read("lock.json")).unwrap();
    let lines: Vec<&str> = lock.lines().collect();
    for (served, code) in [(failing(), 1), (partial(), 3)] {
        dir.write("served.json", served);
        let log = sarif(&dir, &["--lock", "lock.json", "served.json"], code);
        let results = at(&log, "/runs/0/results").as_array().unwrap();
        assert!(!results.is_empty());
        for result in results {
            let rule = text(result, "/ruleId");
            let location = at(result, "/locations/0/physicalLocation");
            assert_eq!(text(location, "/artifactLocation/uri"), "lock.json");
            assert_eq!(text(location, "/artifactLocation/uriBaseId"), "%SRCROOT%");
            let line: usize = at(location, "/region/startLine")
                .as_number()
                .unwrap()
                .literal()
                .parse()
                .unwrap();
            let label = text(result, "/locations/0/logicalLocations/0/fullyQualifiedName");
            let (server, item) = label.split_once('/').unwrap_or((label, ""));
            let approved = format!("\"name\": \"{item}\"");
            let expected = if !item.is_empty() && lock.contains(&approved) {
                approved
            } else {
                // An item the lockfile does not hold: its server's entry.
                format!("\"id\": \"{server}\"")
            };
            assert!(
                lines[line - 1].contains(&expected),
                "{rule} {label}: line {line} is {:?}, expected {expected}",
                lines[line - 1]
            );
            let print = text(result, "/partialFingerprints/mcppin~1v1");
            assert!(print.starts_with("sha256:"), "{print}");
        }
        if code == 1 {
            let rules: Vec<&str> = results.iter().map(|r| text(r, "/ruleId")).collect();
            for rule in [
                "tool-changed",
                "tool-added",
                "name-collision",
                "hidden-characters",
            ] {
                assert!(rules.contains(&rule), "{rules:?}");
            }
        }
        assert_eq!(successful(&log), code != 3);
    }
}

#[test]
fn fingerprints_hold_across_runs_and_lockfile_edits() {
    let dir = locked();
    dir.write("served.json", failing());
    let prints = |log: &mcppin_core::Value| -> Vec<String> {
        at(log, "/runs/0/results")
            .as_array()
            .unwrap()
            .iter()
            .map(|r| text(r, "/partialFingerprints/mcppin~1v1").to_owned())
            .collect()
    };
    let first = prints(&sarif(&dir, &["--lock", "lock.json", "served.json"], 1));
    let unique: std::collections::BTreeSet<_> = first.iter().collect();
    assert_eq!(unique.len(), first.len(), "{first:?}");
    // Re-indented: every line moves, no finding changes.
    let lock = String::from_utf8(dir.read("lock.json")).unwrap();
    dir.write("moved.json", format!("\n\n{}", lock.replace("\n", "\n  ")));
    let moved = sarif(&dir, &["--lock", "moved.json", "served.json"], 1);
    assert_eq!(prints(&moved), first);
}

#[test]
fn the_lockfile_path_is_relative_to_the_repository_root() {
    let dir = Dir::new();
    dir.write("repo/.git/HEAD", "ref: refs/heads/main\n");
    dir.write("repo/ci/approved.json", BASE);
    dir.write("repo/ci/served.json", failing());
    dir.mcppin(&[
        "lock",
        "-o",
        "repo/ci/my lock.json",
        "repo/ci/approved.json",
    ])
    .code(0);
    let uri = |flags: &[&str], code: i32| {
        let mut args = vec!["--lock", "repo/ci/my lock.json"];
        args.extend_from_slice(flags);
        args.push("repo/ci/served.json");
        let log = sarif(&dir, &args, code);
        text(
            &log,
            "/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri",
        )
        .to_owned()
    };
    // Found by walking up from the lockfile to the directory holding .git.
    assert_eq!(uri(&[], 1), "ci/my%20lock.json");
    assert_eq!(uri(&["--sarif-root", "."], 1), "repo/ci/my%20lock.json");
    // A lockfile that is a symbolic link is where the repository has it.
    std::os::unix::fs::symlink(
        dir.path().join("repo/ci/my lock.json"),
        dir.path().join("repo/linked.json"),
    )
    .unwrap();
    let log = sarif(
        &dir,
        &["--lock", "repo/linked.json", "repo/ci/served.json"],
        1,
    );
    assert_eq!(
        text(
            &log,
            "/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri"
        ),
        "linked.json"
    );
    // A lockfile outside the root named: a usage error, still a SARIF document.
    dir.write("repo/docs/README", "");
    let run = dir.mcppin(&[
        "verify",
        "--format",
        "sarif",
        "--sarif-root",
        "repo/docs",
        "--lock",
        "repo/ci/my lock.json",
        "repo/ci/served.json",
    ]);
    run.code(2)
        .stderr_has("name the repository root with --sarif-root");
    let log = mcppin_core::parse(run.stdout.as_bytes()).unwrap();
    assert!(!successful(&log));
}

#[test]
fn a_run_without_a_report_still_writes_sarif_with_the_reason() {
    let dir = locked();
    dir.write("served.json", BASE);
    let run = dir.mcppin(&[
        "verify",
        "--format",
        "sarif",
        "--lock",
        "missing\u{1b}[2K.json",
        "served.json",
    ]);
    run.code(4).stderr_has("cannot read missing");
    let log = mcppin_core::parse(run.stdout.as_bytes()).unwrap();
    assert!(!successful(&log));
    assert_eq!(
        at(&log, "/runs/0/invocations/0/exitCode")
            .as_number()
            .unwrap()
            .literal(),
        "4"
    );
    let reason = text(
        &log,
        "/runs/0/invocations/0/toolExecutionNotifications/0/message/text",
    );
    assert!(
        reason.starts_with("cannot read missing<U+001B>[2K.json"),
        "{reason}"
    );
    assert_eq!(at(&log, "/runs/0/results").as_array().unwrap().len(), 0);
    // Exit 2 from the run itself: a help base SARIF cannot use is refused before any output.
    let run = dir.mcppin(&[
        "verify",
        "--format",
        "sarif",
        "--sarif-help-base",
        "docs/policies.md",
        "--lock",
        "lock.json",
        "served.json",
    ]);
    run.code(2).stderr_has("absolute http(s) URL");
    // Rules link into the policies page, under the base given.
    let log = sarif(
        &dir,
        &[
            "--sarif-help-base",
            "https://docs.example/mcppin/policies.md",
            "--lock",
            "lock.json",
            "served.json",
        ],
        0,
    );
    assert_eq!(
        text(&log, "/runs/0/tool/driver/rules/1/helpUri"),
        "https://docs.example/mcppin/policies.md#tool-added"
    );
    assert!(successful(&log));
}

#[test]
#[ignore = "needs testdata/tools/install.sh; .ci/run runs it"]
fn the_validator_refuses_a_broken_log() {
    // Proves the check above can fail: a result without a message breaks the schema.
    let dir = Dir::new();
    dir.write(
        "broken.sarif",
        r#"{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0","runs":[{"tool":{"driver":{"name":"x","version":"1"}},"results":[{"ruleId":"r"}]}]}"#,
    );
    let (console, results) = validate(&dir, "broken.sarif");
    assert!(
        results.iter().any(|(rule, _)| rule != NO_INFORMATION_URI.0),
        "{console}"
    );
}

#[test]
fn sarif_documents_snapshot() {
    let dir = locked();
    let lock = String::from_utf8(dir.read("lock.json")).unwrap();
    dir.write(
        "tampered.json",
        lock.replacen("closest matches", "closest matchez", 1),
    );
    for (name, served, lock, code) in [
        ("sarif_fail", failing(), "lock.json", 1),
        ("sarif_partial", partial(), "lock.json", 3),
        ("sarif_unreadable", BASE.to_owned(), "tampered.json", 4),
    ] {
        dir.write("served.json", served);
        let run = dir.mcppin(&["verify", "--format", "sarif", "--lock", lock, "served.json"]);
        run.code(code);
        insta::assert_snapshot!(name, run.stdout);
    }
}

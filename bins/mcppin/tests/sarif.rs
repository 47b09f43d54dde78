//! `mcppin verify --format sarif` checked by the official SARIF validator, the SARIF Multitool
//! (npm `@microsoft/sarif-multitool`, pinned in `testdata/tools/package-lock.json`).
//!
//! Needs `testdata/tools/install.sh` to have run, so it is ignored by a plain `cargo test`;
//! `.ci/run` installs the tool and runs it with `--ignored`.
//!
//! The validator's rule SARIF2006 fetches every URI in the log over HTTP. Tests never touch the
//! network: the tool runs with an HTTP(S) proxy on a closed loopback port, so each fetch fails
//! at once and yields a note, which is neither an error nor a warning.

mod util;

use std::path::{Path, PathBuf};
use std::process::Command;

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

fn multitool() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tools/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool");
    assert!(
        path.exists(),
        "{} is missing: run testdata/tools/install.sh",
        path.display()
    );
    path
}

/// Validates `file` (in `dir`) at levels error and warning; returns the tool's console output,
/// and the results of its output log.
fn validate(dir: &Dir, file: &str) -> (String, usize) {
    let out = dir.path().join(format!("{file}.validation.sarif"));
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let run = Command::new(multitool())
        .arg("validate")
        .arg(dir.path().join(file))
        .arg("--output")
        .arg(&out)
        .args(["--level", "Error;Warning"])
        .env_clear()
        .env("HOME", &home)
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .output()
        .expect("run the SARIF multitool");
    let console = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(run.status.success(), "multitool failed:\n{console}");
    let log = std::fs::read(&out).expect("validation log");
    let log = log.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&log);
    let value = mcppin_core::parse(log).expect("validation log is JSON");
    let results = value
        .pointer("/runs/0/results")
        .and_then(|r| r.as_array())
        .map_or(0, <[_]>::len);
    (console, results)
}

fn assert_clean(dir: &Dir, file: &str) {
    let (console, results) = validate(dir, file);
    for line in console.lines() {
        let lower = line.to_ascii_lowercase();
        assert!(
            !lower.contains(": error ") && !lower.contains(": warning "),
            "{file}: {line}\n{console}"
        );
    }
    assert_eq!(results, 0, "{file}: validator results\n{console}");
}

#[test]
#[ignore = "needs testdata/tools/install.sh; .ci/run runs it"]
fn sarif_reports_validate_without_errors_or_warnings() {
    let dir = Dir::new();
    dir.write("approved.json", BASE);
    dir.mcppin(&["lock", "-o", "lock.json", "approved.json"])
        .code(0);
    let scenarios = [
        ("pass.sarif", BASE.to_owned(), 0),
        (
            // Changed, added, colliding, hidden characters, invalid and mixed-script names.
            "fail.sarif",
            BASE.replacen("closest matches", "closest matches\\u202e", 1).replacen(
                "\"name\": \"delivery_insights\",",
                "\"name\": \"get_artic1e\"}, {\"name\": \"g\\u0435t article\"}, {\"name\": \"delivery_insights\",",
                1,
            ),
            1,
        ),
        (
            // Nothing proven: an approved tool an incomplete capture did not show (exit 3).
            "partial.sarif",
            BASE.replacen("\"complete\": true", "\"complete\": false", 1)
                .replacen(DELIVERY_INSIGHTS, "", 1),
            3,
        ),
    ];
    assert!(BASE.contains(DELIVERY_INSIGHTS));
    for (file, served, code) in scenarios {
        dir.write("served.json", served);
        let run = dir.mcppin(&[
            "verify",
            "--format",
            "sarif",
            "--lock",
            "lock.json",
            "served.json",
        ]);
        run.code(code);
        dir.write(file, &run.stdout);
        assert_clean(&dir, file);
    }
}

#[test]
#[ignore = "needs testdata/tools/install.sh; .ci/run runs it"]
fn the_validator_refuses_a_broken_log() {
    // Proves the check above can fail: a result without a message breaks the schema.
    let dir = Dir::new();
    dir.write(
        "broken.sarif",
        r#"{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0","runs":[{"tool":{"driver":{"name":"x","version":"1","informationUri":"https://example.invalid/"}},"results":[{"ruleId":"r"}]}]}"#,
    );
    let (console, results) = validate(&dir, "broken.sarif");
    assert!(results > 0, "{console}");
}

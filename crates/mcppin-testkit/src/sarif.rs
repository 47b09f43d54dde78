//! The official SARIF validator, the SARIF Multitool (npm `@microsoft/sarif-multitool`, pinned
//! in `testdata/tools/package-lock.json`, installed by `testdata/tools/install.sh`), run on a
//! log a test wrote. Every binary of the workspace that writes SARIF is checked with it.
//!
//! The validator's rule SARIF2006 fetches every URI in the log over HTTP. Tests never touch the
//! network: the tool runs with an HTTP(S) proxy on a closed loopback port, so each fetch fails
//! at once and yields a note, which is neither an error nor a warning.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::{StdinEnd, run_within};

/// How long one validation may take (the tool starts a .NET runtime; seconds here).
const LIMIT: Duration = Duration::from_secs(180);

/// The validator's program; fails the test when it is not installed.
#[must_use]
pub fn multitool() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tools/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool");
    assert!(
        path.exists(),
        "{} is missing: run testdata/tools/install.sh",
        path.display()
    );
    path
}

/// Validates `dir/file` at levels error and warning; returns the tool's console output, and
/// the results of its output log as (rule id, message id) pairs. The tool's own failure fails
/// the test.
#[must_use]
pub fn validate(dir: &Path, file: &str) -> (String, Vec<(String, String)>) {
    let out = dir.join(format!("{file}.validation.sarif"));
    let home = dir.join("home");
    std::fs::create_dir_all(&home).expect("a home for the validator");
    let run = run_within(
        Command::new(multitool())
            .arg("validate")
            .arg(dir.join(file))
            .arg("--output")
            .arg(&out)
            .args(["--level", "Error;Warning"])
            .env_clear()
            .env("HOME", &home)
            .env("HTTP_PROXY", "http://127.0.0.1:9")
            .env("HTTPS_PROXY", "http://127.0.0.1:9")
            .env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
            .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1"),
        Vec::new(),
        StdinEnd::Closes,
        LIMIT,
    );
    let console = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.code, 0, "multitool failed:\n{console}");
    let log = std::fs::read(&out).expect("validation log");
    let log = log.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&log);
    let value: Value = serde_json::from_slice(log).expect("validation log is JSON");
    let results = value
        .pointer("/runs/0/results")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|r| {
            let field = |pointer: &str| {
                r.pointer(pointer)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            (field("/ruleId"), field("/message/id"))
        })
        .collect();
    (console, results)
}

//! verify on an arbitrary lockfile and manifest (the input split at its first NUL byte): it
//! never panics, its verdict follows its findings, every rendering is produced, the text and
//! SARIF reports are printable ASCII, and the JSON report reads back to the same report.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_core::lockfile::Lockfile;
use mcppin_core::manifest::Manifest;
use mcppin_core::policy::{Options, Status, verify};
use mcppin_core::report;

fuzz_target!(|data: &[u8]| {
    let Some(split) = data.iter().position(|&b| b == 0) else {
        return;
    };
    let (Ok(lock), Ok(manifest)) = (
        Lockfile::parse(&data[..split]),
        Manifest::parse(&data[split + 1..]),
    ) else {
        return;
    };
    let r = verify(&lock, &manifest, &Options::default());
    let gated = r.findings.iter().any(|f| f.gated);
    assert_eq!(r.status() == Status::Fail, gated);
    assert_eq!(r.status() == Status::Partial, !gated && !r.unverified.is_empty());
    assert!(report::to_text(&r).is_ascii());
    let lines = report::LockLines::index(&data[..split]);
    let context = report::SarifContext {
        tool_version: "0",
        lockfile_uri: "mcp.lock.json",
        lines: &lines,
        help_base: Some("https://docs.example/policies.md"),
    };
    assert!(report::to_sarif(&r, &context).to_string().is_ascii());
    let unlinked = report::SarifContext {
        help_base: None,
        ..context
    };
    assert!(report::to_sarif(&r, &unlinked).to_string().is_ascii());
    let json = mcppin_core::to_pretty(&report::to_json(&r));
    let value = mcppin_core::parse(&json).expect("the JSON report reads strictly");
    assert_eq!(report::from_json(&value).expect("and back"), r);
});

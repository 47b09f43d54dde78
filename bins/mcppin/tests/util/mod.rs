//! Shared helpers for the binary's integration tests: a fresh temp dir per test and the real
//! binary with a cleared environment (on [`mcppin_testkit`], which the three binaries' tests
//! share).
#![allow(
    dead_code,
    unused_imports,
    reason = "each test file uses a different subset"
)]

use std::ops::Deref;
use std::process::Command;

pub use mcppin_testkit::Run;
use mcppin_testkit::{Scratch, StdinEnd};

/// A fresh temporary directory for one test ([`Scratch`]: `path`, `write`, `read`).
pub struct Dir {
    dir: Scratch,
}

impl Deref for Dir {
    type Target = Scratch;

    fn deref(&self) -> &Scratch {
        &self.dir
    }
}

impl Dir {
    pub fn new() -> Self {
        Self {
            dir: Scratch::new(),
        }
    }

    /// Runs `mcppin` with `args` in this directory, with a cleared environment.
    pub fn mcppin(&self, args: &[&str]) -> Run {
        self.mcppin_stdin(args, b"")
    }

    /// Runs `mcppin` with `args` and `stdin`, in this directory, with a cleared environment.
    pub fn mcppin_stdin(&self, args: &[&str], stdin: &[u8]) -> Run {
        mcppin_testkit::run(
            Command::new(env!("CARGO_BIN_EXE_mcppin"))
                .args(args)
                .current_dir(self.path())
                .env_clear(),
            stdin.to_vec(),
            StdinEnd::Closes,
        )
    }
}

/// An npm `integrity` (SHA-512 in base64) made of the two characters `pair`, repeated.
pub fn integrity(pair: &str) -> String {
    format!("sha512-{}==", pair.repeat(43))
}

/// The npm artifact of the `parcel` server of `testdata/verify/base.json`: `parcel-mcp`
/// 3.1.0 and its dependency `left-pad` at `left_pad` (version, integrity).
pub fn parcel_artifact(left_pad: (&str, &str)) -> String {
    format!(
        r#"{{"kind": "npm", "packages": [{{"name": "left-pad", "version": "{}", "integrity": "{}"}}, {{"name": "parcel-mcp", "version": "3.1.0", "integrity": "{}"}}]}}"#,
        left_pad.0,
        left_pad.1,
        integrity("Pa")
    )
}

/// `base` (a manifest of version 3, `testdata/verify/base.json`) as version 4 with `artifact`
/// recorded for its `parcel` server.
pub fn with_artifact(base: &str, artifact: &str) -> String {
    let launch = r#""launch": {"command": "npx", "args": ["-y", "parcel-mcp@3.1.0"], "env": ["PARCEL_TOKEN"]},"#;
    assert_eq!(base.matches(launch).count(), 1, "the parcel launch");
    base.replacen("\"schema_version\": 3", "\"schema_version\": 4", 1)
        .replacen(
            launch,
            &format!("{launch}\n      \"artifact\": {artifact},"),
            1,
        )
}

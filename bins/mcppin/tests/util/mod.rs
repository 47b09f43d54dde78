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

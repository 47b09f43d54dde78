//! Shared helpers for the binary's integration tests: a fresh temp dir per test, the real
//! binary with a cleared environment, and assertions that print exit code, stdout and stderr
//! on failure.
#![allow(dead_code, reason = "each test file uses a different subset")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The outcome of one run of the binary.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Asserts the exit code, printing everything on failure.
    #[track_caller]
    pub fn code(&self, expected: i32) -> &Self {
        assert_eq!(
            self.code, expected,
            "exit code {} (expected {expected})\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    /// Asserts that stdout contains `needle`.
    #[track_caller]
    pub fn stdout_has(&self, needle: &str) -> &Self {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    /// Asserts that stderr contains `needle`.
    #[track_caller]
    pub fn stderr_has(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        self
    }
}

/// A fresh temporary directory for one test.
pub struct Dir {
    dir: tempfile::TempDir,
}

impl Dir {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `contents` to `name` in the directory and returns its path.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, contents).expect("write");
        path
    }

    pub fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.dir.path().join(name)).expect("read")
    }

    /// Runs `mcppin` with `args` in this directory, with a cleared environment.
    pub fn mcppin(&self, args: &[&str]) -> Run {
        self.mcppin_stdin(args, b"")
    }

    /// Runs `mcppin` with `args` and `stdin`, in this directory, with a cleared environment.
    pub fn mcppin_stdin(&self, args: &[&str], stdin: &[u8]) -> Run {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin"))
            .args(args)
            .current_dir(self.dir.path())
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcppin");
        let mut pipe = child.stdin.take().expect("stdin");
        // The binary may exit before reading everything (a usage error): ignore EPIPE.
        let _ = pipe.write_all(stdin);
        drop(pipe);
        let out = child.wait_with_output().expect("wait");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

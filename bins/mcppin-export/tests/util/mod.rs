//! Shared helpers for the binary's integration tests: a fresh temp dir per test, the real
//! binary with a cleared environment, the fixture server as a real process, and checks that
//! no server process outlives the export.
#![allow(
    dead_code,
    unused_imports,
    reason = "each test file uses a different subset"
)]

use std::ops::Deref;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use mcppin_testkit::Scratch;

pub use mcppin_testkit::Run;

/// The fixture server binary (built as an example of this package).
pub fn fixture() -> PathBuf {
    mcppin_fixture::locate("export-fixture")
}

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

    pub fn exists(&self, name: &str) -> bool {
        self.dir.path().join(name).exists()
    }

    /// Writes `mcp.json` with one fixture server per `(id, fixture args)`, each recording its
    /// pid in `<id>.pid`.
    pub fn config(&self, servers: &[(&str, &[&str])]) -> PathBuf {
        let entries: Vec<String> = servers
            .iter()
            .map(|(id, args)| {
                let pid = self.path().join(format!("{id}.pid"));
                let mut all: Vec<String> = args.iter().map(|a| json_string(a)).collect();
                all.push(json_string("--pid-file"));
                all.push(json_string(&pid.to_string_lossy()));
                format!(
                    "    {}: {{\"command\": {}, \"args\": [{}]}}",
                    json_string(id),
                    json_string(&fixture().to_string_lossy()),
                    all.join(", ")
                )
            })
            .collect();
        let text = format!(
            "{{\n  \"mcpServers\": {{\n{}\n  }}\n}}\n",
            entries.join(",\n")
        );
        self.write("mcp.json", text)
    }

    /// The pid a fixture server recorded.
    pub fn pid(&self, id: &str) -> i32 {
        let text = std::fs::read_to_string(self.path().join(format!("{id}.pid")))
            .unwrap_or_else(|e| panic!("server {id} recorded no pid: {e}"));
        text.trim().parse().expect("pid")
    }

    /// Asserts that the server `id` and every process of its group are gone.
    #[track_caller]
    pub fn assert_gone(&self, id: &str) {
        let pid = self.pid(id);
        let left = group_members(pid);
        assert!(
            left.is_empty(),
            "server {id} (pid {pid}) left {left:?} running"
        );
    }

    /// Runs `mcppin-export` with `args` in this directory, with a cleared environment.
    pub fn export(&self, args: &[&str]) -> Run {
        self.export_env(args, &[])
    }

    /// Runs `mcppin-export` with `args` in this directory, with a cleared environment and
    /// standard input closed; a run that hangs fails the test ([`mcppin_testkit::HANG`]).
    pub fn export_bounded(&self, args: &[&str]) -> Run {
        mcppin_testkit::run(
            Command::new(env!("CARGO_BIN_EXE_mcppin-export"))
                .args(args)
                .args(["--grace", "300ms"])
                .current_dir(self.dir.path())
                .env_clear(),
            Vec::new(),
            mcppin_testkit::StdinEnd::Closes,
        )
    }

    /// Runs `mcppin-export` with `args` and exactly the environment `env`.
    pub fn export_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let out = mcppin_testkit::output(
            Command::new(env!("CARGO_BIN_EXE_mcppin-export"))
                .args(args)
                .args(["--grace", "300ms"])
                .current_dir(self.dir.path())
                .env_clear()
                .envs(env.iter().copied())
                .stdin(Stdio::null()),
        )
        .expect("run mcppin-export");
        Run::from_output(&out)
    }
}

/// Runs the `mcppin` binary (built beside this package's binary by `cargo test --workspace`)
/// in `dir` with a cleared environment, bounded in time.
pub fn mcppin(dir: &Dir, args: &[&str]) -> Run {
    let path = std::path::Path::new(env!("CARGO_BIN_EXE_mcppin-export")).with_file_name("mcppin");
    assert!(
        path.is_file(),
        "{} is not built: run `cargo build -p mcppin` (cargo test --workspace builds it)",
        path.display()
    );
    let mut command = Command::new(path);
    command.args(args).current_dir(dir.path()).env_clear();
    mcppin_testkit::run(&mut command, Vec::new(), mcppin_testkit::StdinEnd::Closes)
}

/// Live (not zombie) processes whose process group is `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string() {
            members.push(pid);
        }
    }
    members
}

/// A JSON string literal for `text`.
pub fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

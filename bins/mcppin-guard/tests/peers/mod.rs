//! Real peers over HTTP for the guard's `--listen` tests: the reference `server-everything` in
//! its `streamableHttp` mode, a lockfile of its surface made by the real `mcppin-export` and
//! `mcppin lock`, and guards in front of it. Every process is killed when its handle drops, so
//! a failing assertion leaves nothing running.
#![allow(dead_code, reason = "each test file uses a different subset")]

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

/// How long a process may take to accept connections before the test fails.
const STARTUP: Duration = Duration::from_secs(30);

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// An installed file of a pinned npm package folder, or a failure naming the install command.
#[track_caller]
pub fn installed(folder: &str, file: &str, install: &str) -> PathBuf {
    let path = root().join("testdata").join(folder).join(file);
    assert!(
        path.exists(),
        "{} is missing: install it with `{install}` (a step of .ci/run and scripts/test)",
        path.display()
    );
    path
}

/// The reference server's entry point (`testdata/servers`).
pub fn everything_script() -> PathBuf {
    installed(
        "servers",
        "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        "npm ci --prefix testdata/servers --ignore-scripts",
    )
}

/// A binary of the workspace built beside the guard.
#[track_caller]
pub fn sibling(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_mcppin-guard")).with_file_name(name);
    assert!(
        path.is_file(),
        "{} is not built: run `cargo build -p {name}` (cargo test --workspace builds it)",
        path.display()
    );
    path
}

pub fn path_var() -> String {
    std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".to_owned())
}

/// A loopback port nothing listens on at the time of the call.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("local address").port()
}

/// A running process, killed and reaped on drop.
pub struct Proc {
    pub name: String,
    child: Child,
    log: PathBuf,
}

impl Proc {
    /// Starts `command` with its stdout and stderr in `dir/<name>.log`.
    pub fn start(dir: &Path, name: &str, command: &mut Command) -> Self {
        let log = dir.join(format!("{name}.log"));
        let file = std::fs::File::create(&log).expect("log file");
        let child = command
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("log file"))
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        Self {
            name: name.to_owned(),
            child,
            log,
        }
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The exit status, once the process has ended.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("wait for a child process")
    }

    /// What the process wrote so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the process accepts connections on `port`, failing when it exits or
    /// takes longer than thirty seconds.
    #[track_caller]
    pub fn wait_listening(&mut self, port: u16) {
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let start = Instant::now();
        loop {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "{} exited ({status}) before listening on {port}\n--- log\n{}",
                    self.name,
                    self.log()
                );
            }
            assert!(
                start.elapsed() < STARTUP,
                "{} is not listening on {port} after {STARTUP:?}\n--- log\n{}",
                self.name,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `server-everything` in its `streamableHttp` mode on a free port; its URL ends in `/mcp`.
pub fn everything_http(dir: &Path) -> (Proc, String) {
    let port = free_port();
    let mut server = Proc::start(
        dir,
        &format!("server-everything-{port}"),
        Command::new("node")
            .arg(everything_script())
            .arg("streamableHttp")
            .env_clear()
            .env("PATH", path_var())
            .env("PORT", port.to_string()),
    );
    server.wait_listening(port);
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

/// The guard's `--listen` proxy on a free port in front of `upstream`, holding `lock` for
/// server `everything`; its URL ends in `/mcp`.
pub fn guard_http(dir: &Path, lock: &Path, upstream: &str, extra: &[&str]) -> (Proc, String) {
    guard_http_for(dir, lock, "everything", upstream, extra)
}

/// The guard's `--listen` proxy on a free port in front of `upstream`, holding `lock` for
/// server `id`; its URL is the upstream's path on the guard's address.
pub fn guard_http_for(
    dir: &Path,
    lock: &Path,
    id: &str,
    upstream: &str,
    extra: &[&str],
) -> (Proc, String) {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut guard = Proc::start(
        dir,
        &format!("mcppin-guard-{port}"),
        Command::new(env!("CARGO_BIN_EXE_mcppin-guard"))
            .args(["--lock"])
            .arg(lock)
            .args(["--server", id, "--listen", &listen])
            .args(["--upstream", upstream])
            .args(extra)
            .env_clear()
            .env("PATH", path_var()),
    );
    guard.wait_listening(port);
    (guard, format!("http://{listen}/mcp"))
}

fn run_ok(dir: &Path, program: &Path, args: &[&str]) -> Output {
    let out = mcppin_testkit::output(
        Command::new(program)
            .args(args)
            .current_dir(dir)
            .env_clear()
            .env("PATH", path_var()),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    assert!(
        out.status.success(),
        "{} {args:?}: {}\n--- stdout\n{}\n--- stderr\n{}",
        program.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A lockfile of `server-everything`'s surface as server `everything`: exported over stdio by
/// the real `mcppin-export` (the surface is the same in every transport), `edit` applied to
/// the manifest (to approve something the server does not serve), locked by `mcppin lock`.
pub fn lock_everything(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let config = json!({"mcpServers": {"everything": {
        "command": "node",
        "args": [everything_script().display().to_string(), "stdio"],
    }}});
    std::fs::write(dir.join("mcp.json"), config.to_string()).expect("write mcp.json");
    run_ok(
        dir,
        &sibling("mcppin-export"),
        &["--config", "mcp.json", "-o", "manifest.json"],
    );
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("manifest");
    let mut manifest: serde_json::Value = serde_json::from_str(&text).expect("manifest is JSON");
    edit(&mut manifest);
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).expect("write manifest");
    run_ok(
        dir,
        &sibling("mcppin"),
        &["lock", "-o", "mcp.lock.json", "manifest.json"],
    );
    dir.join("mcp.lock.json")
}

/// Edits the approved description of `everything`'s `echo` tool: a lock the server departs
/// from on its first `tools/list`.
pub fn edit_echo(manifest: &mut serde_json::Value) {
    let Some(servers) = manifest["servers"].as_array_mut() else {
        panic!("manifest without servers: {manifest}");
    };
    let server = servers
        .iter_mut()
        .find(|s| s["id"] == "everything")
        .expect("server everything");
    let tools = server["tools"].as_array_mut().expect("tools");
    let echo = tools
        .iter_mut()
        .find(|t| t["name"] == "echo")
        .expect("tool echo");
    let description = echo["description"]
        .as_str()
        .expect("description")
        .to_owned();
    echo["description"] = json!(format!("{description} Approved wording."));
}

/// The tools `server-everything` at `url` serves to a client declaring `capabilities`, as
/// served (`testdata/sdk-client/surface.mjs`: plain HTTP, no SDK re-serialising them).
pub fn served_tools(dir: &Path, url: &str, capabilities: &serde_json::Value) -> serde_json::Value {
    let script = installed(
        "sdk-client",
        "surface.mjs",
        "npm ci --prefix testdata/sdk-client --ignore-scripts",
    );
    let out = run_ok(
        dir,
        Path::new("node"),
        &[
            &script.display().to_string(),
            url,
            &capabilities.to_string(),
        ],
    );
    serde_json::from_slice(&out.stdout).expect("surface.mjs prints the tools")
}

/// Approves `tools` as the whole tool surface of `everything` in an exported manifest.
pub fn approve_tools(manifest: &mut serde_json::Value, tools: &serde_json::Value) {
    let Some(servers) = manifest["servers"].as_array_mut() else {
        panic!("manifest without servers: {manifest}");
    };
    let server = servers
        .iter_mut()
        .find(|s| s["id"] == "everything")
        .expect("server everything");
    server["tools"] = tools.clone();
}

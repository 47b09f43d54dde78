//! A local npm registry for tests that run a real `npx` (or `npm exec`) install: packages made
//! by `npm pack` in the test, served over plain HTTP on 127.0.0.1 with the two answers npm asks
//! for (the packument, the tarball), so nothing reaches the network.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::{StdinEnd, run};

/// A stdio MCP server with one tool, as small as a published one gets (`node`, no
/// dependencies); the same tools whatever its package's version.
pub const SERVER_JS: &str = r#"#!/usr/bin/env node
const rl = require("readline").createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === "initialize") {
    send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion,
      capabilities: { tools: {} }, serverInfo: { name: "slow", version: "1.0.0" } } });
  } else if (m.method === "tools/list") {
    send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "echo",
      description: "Echo the text", inputSchema: { type: "object" } }] } });
  } else {
    send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
  }
});
"#;

/// A package made by `npm pack`.
#[derive(Clone, Debug)]
pub struct Package {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The tarball.
    pub tarball: Vec<u8>,
    /// Its `integrity` (`sha512-...`), as `npm pack` computed it.
    pub integrity: String,
}

/// Packs `name@version`, whose `bin` (named `name`) is `server.js` holding `server`, with the
/// other `files` beside it, in `dir/pack-<version>` with `npm pack`.
///
/// # Panics
///
/// When npm is missing or fails (the tests that use this never skip).
#[must_use]
pub fn pack(
    dir: &Path,
    name: &str,
    version: &str,
    server: &str,
    files: &[(&str, &[u8])],
) -> Package {
    let root = dir.join(format!("pack-{version}"));
    let pkg = root.join("pkg");
    std::fs::create_dir_all(&pkg).expect("mkdir");
    let manifest = json!({"name": name, "version": version, "bin": {name: "server.js"}});
    std::fs::write(pkg.join("package.json"), manifest.to_string()).expect("package.json");
    std::fs::write(pkg.join("server.js"), server).expect("server.js");
    for (file, bytes) in files {
        std::fs::write(pkg.join(file), bytes).expect("file");
    }
    let out = run(
        Command::new("npm")
            .args(["pack", "--json", "--pack-destination", ".."])
            .current_dir(&pkg)
            .env_clear()
            .env("PATH", path_var())
            .env("HOME", root.join("home"))
            .env("npm_config_cache", root.join("pack-cache"))
            .env("npm_config_update_notifier", "false"),
        Vec::new(),
        StdinEnd::Closes,
    );
    out.code(0);
    let packed: Value = serde_json::from_str(&out.stdout).expect("npm pack --json");
    let integrity = packed[0]["integrity"]
        .as_str()
        .expect("integrity")
        .to_owned();
    let filename = packed[0]["filename"].as_str().expect("filename");
    let tarball = std::fs::read(root.join(filename)).expect("tarball");
    Package {
        name: name.to_owned(),
        version: version.to_owned(),
        tarball,
        integrity,
    }
}

/// The test's `PATH`, where `npm`, `npx` and `node` are found.
#[must_use]
pub fn path_var() -> String {
    std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".to_owned())
}

/// What the registry did, shared with its connection threads.
#[derive(Debug, Default)]
pub struct State {
    /// How long (ms) a tarball download holds its last quarter back: a slow network.
    pub hold_ms: AtomicU64,
    /// Tarball downloads that were held.
    pub held: AtomicUsize,
    /// Tarball downloads sent whole (held or not).
    pub served: AtomicUsize,
}

/// A registry of the packages given, each name with every version given (the last one
/// `latest`).
#[derive(Debug)]
pub struct Registry {
    /// Its URL (`http://127.0.0.1:PORT`).
    pub url: String,
    /// What it did.
    pub state: Arc<State>,
}

impl Registry {
    /// Serves `packages` until the test ends.
    ///
    /// # Panics
    ///
    /// When it cannot listen.
    #[must_use]
    pub fn start(packages: &[Package]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let mut packuments: BTreeMap<String, Value> = BTreeMap::new();
        let mut tarballs: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for p in packages {
            let file = format!(
                "{}-{}.tgz",
                p.name.rsplit('/').next().unwrap_or(&p.name),
                p.version
            );
            let path = format!("/{}/-/{file}", p.name);
            let entry = packuments
                .entry(p.name.clone())
                .or_insert_with(|| json!({"name": p.name, "dist-tags": {}, "versions": {}}));
            entry["dist-tags"]["latest"] = json!(p.version);
            entry["versions"][&p.version] = json!({
                "name": p.name, "version": p.version, "bin": {&p.name: "server.js"},
                "dist": {"tarball": format!("{url}{path}"), "integrity": p.integrity}});
            tarballs.insert(path, p.tarball.clone());
        }
        let state = Arc::new(State::default());
        let shared = Arc::clone(&state);
        let packuments: Arc<BTreeMap<String, String>> = Arc::new(
            packuments
                .into_iter()
                .map(|(name, value)| (format!("/{name}"), value.to_string()))
                .collect(),
        );
        let tarballs = Arc::new(tarballs);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = Arc::clone(&shared);
                let (packuments, tarballs) = (Arc::clone(&packuments), Arc::clone(&tarballs));
                thread::spawn(move || serve(stream, &state, &packuments, &tarballs));
            }
        });
        Self { url, state }
    }
}

fn serve(
    mut stream: TcpStream,
    state: &State,
    packuments: &BTreeMap<String, String>,
    tarballs: &BTreeMap<String, Vec<u8>>,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => {}
        }
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or_default();
    // npm asks for a scoped name with its `/` escaped.
    let path = path.replace("%2f", "/").replace("%2F", "/");
    let head = |len: usize, kind: &str| {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {len}\r\n\
             Connection: close\r\n\r\n"
        )
    };
    if let Some(tarball) = tarballs.get(&path) {
        let _ = stream.write_all(head(tarball.len(), "application/octet-stream").as_bytes());
        let hold = state.hold_ms.load(Ordering::SeqCst);
        let mut sent = 0;
        if hold > 0 {
            state.held.fetch_add(1, Ordering::SeqCst);
            // Most of the package, then a pause: npm is mid-install when it is given up on.
            sent = tarball.len() * 3 / 4;
            let _ = stream.write_all(&tarball[..sent]);
            let _ = stream.flush();
            thread::sleep(Duration::from_millis(hold));
        }
        let _ = stream.write_all(&tarball[sent..]);
        state.served.fetch_add(1, Ordering::SeqCst);
    } else if let Some(body) = packuments.get(&path) {
        let _ = stream.write_all(head(body.len(), "application/json").as_bytes());
        let _ = stream.write_all(body.as_bytes());
    } else {
        let _ = stream
            .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    }
    let _ = stream.flush();
    let _ = reader.read(&mut [0u8; 1]);
}

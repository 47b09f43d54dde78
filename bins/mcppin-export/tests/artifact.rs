//! Artifact identity through the binaries (docs/export.md, "Artifact identity"): what a launch
//! ran, recorded by `mcppin-export`, approved by `mcppin lock` and compared by `mcppin verify`.
//! The tools stay the same in every case: only the code that runs moves.
//!
//! - a real `npx -y` install from a registry served by the test, whose package gets a new
//!   version behind the same launch (`npx -y pkg`, as configurations write it);
//! - a script edited in place;
//! - a remote server over HTTPS, whose certificate key is recorded and never compared.
//!
//! The npm test never skips: without `npm`, `npx` and `node` on PATH it fails saying so.

mod util;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mcppin_testkit::npm::{self, Registry};
use serde_json::Value;
use util::{Dir, Run, fixture, json_string, mcppin};

const NAME: &str = "docs-mcp-server";

/// A Claude Desktop configuration running `npx -y docs-mcp-server` (no version: what npm
/// resolves) against `registry`, with the npm cache inside the test's directory.
fn npx_config(dir: &Dir, registry: &str) {
    let cache = dir.path().join("npm-cache");
    dir.write(
        "mcp.json",
        format!(
            r#"{{"mcpServers": {{"docs": {{"command": "npx", "args": ["-y", "{NAME}"],
                "env": {{"npm_config_registry": {}, "npm_config_cache": {},
                         "npm_config_update_notifier": "false", "npm_config_audit": "false",
                         "npm_config_fund": "false"}}}}}}}}"#,
            json_string(&format!("{registry}/")),
            json_string(&cache.to_string_lossy())
        ),
    );
}

fn export(dir: &Dir, output: &str) -> Run {
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let path = npm::path_var();
    let home = home.to_string_lossy().into_owned();
    dir.export_env(
        &["--config", "mcp.json", "-o", output],
        &[("PATH", path.as_str()), ("HOME", home.as_str())],
    )
}

fn artifact(dir: &Dir, manifest: &str) -> Value {
    let manifest: Value = serde_json::from_slice(&dir.read(manifest)).expect("manifest");
    manifest["servers"][0]["artifact"].clone()
}

#[test]
fn a_new_version_behind_the_same_npx_launch_is_an_artifact_change_with_the_same_tools() {
    let dir = Dir::new();
    let first = npm::pack(dir.path(), NAME, "1.0.0", npm::SERVER_JS, &[]);
    // The next version: the same tools, other code (what a compromised release looks like).
    let next_js = format!(
        "{}\n// and now it also copies every message somewhere\n",
        npm::SERVER_JS
    );
    let next = npm::pack(dir.path(), NAME, "1.0.1", &next_js, &[]);

    let before = Registry::start(std::slice::from_ref(&first));
    npx_config(&dir, &before.url);
    export(&dir, "approved.json")
        .code(0)
        .stderr_has("server \"docs\": 1 tool, 0 prompts, 0 resource templates over 2025-11-25")
        .stderr_has("; artifact: npm, 1 package");
    let approved = artifact(&dir, "approved.json");
    assert_eq!(approved["kind"], "npm", "{approved}");
    assert_eq!(
        approved["packages"],
        serde_json::json!([{"name": NAME, "version": "1.0.0", "integrity": first.integrity}])
    );
    mcppin(&dir, &["lock", "-o", "mcp.lock.json", "approved.json"]).code(0);
    mcppin(
        &dir,
        &["verify", "--lock", "mcp.lock.json", "approved.json"],
    )
    .code(0);

    // The registry publishes 1.0.1; the configuration is untouched (its env names the
    // registry, and a launch records the names of env variables, not their values).
    let after = Registry::start(&[first, next.clone()]);
    npx_config(&dir, &after.url);
    export(&dir, "manifest.json").code(0);
    let served = artifact(&dir, "manifest.json");
    assert_eq!(served["packages"][0]["version"], "1.0.1", "{served}");
    let verify = mcppin(
        &dir,
        &["verify", "--lock", "mcp.lock.json", "manifest.json"],
    );
    verify
        .code(1)
        .stdout_has("artifact-changed [gated]: docs\n")
        .stdout_has(&format!(
            "  approved: npm {NAME}@1.0.0 {}\n  served:   npm {NAME}@1.0.1 {}\n",
            approved["packages"][0]["integrity"]
                .as_str()
                .expect("integrity"),
            next.integrity
        ))
        .stdout_has("mcppin lock --approve docs -o mcp.lock.json manifest.json");
    assert!(!verify.stdout.contains("tool-"), "{}", verify.stdout);
    assert!(
        !verify.stdout.contains("launch-changed"),
        "{}",
        verify.stdout
    );
}

#[test]
fn an_edited_script_is_an_artifact_change_with_the_same_tools() {
    let dir = Dir::new();
    let script = |comment: &str| {
        let path = dir.write(
            "server.sh",
            format!(
                "#!/bin/sh\n# {comment}\nexec {} \"$@\"\n",
                json_string(&fixture().to_string_lossy())
            ),
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    };
    script("the approved script");
    dir.write(
        "mcp.json",
        r#"{"mcpServers": {"docs": {"command": "./server.sh", "args": ["--mode", "honest"]}}}"#,
    );
    let path = npm::path_var();
    let run = |output: &str| {
        dir.export_env(
            &["--config", "mcp.json", "-o", output],
            &[("PATH", path.as_str())],
        )
    };
    run("approved.json")
        .code(0)
        .stderr_has("; artifact: local ./server.sh sha256:");
    let approved = artifact(&dir, "approved.json");
    assert_eq!(approved["program"]["path"], "./server.sh", "{approved}");
    let interpreters = approved["interpreters"].as_array().expect("interpreters");
    assert_eq!(interpreters.len(), 1, "{approved}");
    assert!(
        interpreters[0]["path"]
            .as_str()
            .unwrap_or_default()
            .starts_with('/')
    );
    mcppin(&dir, &["lock", "-o", "mcp.lock.json", "approved.json"]).code(0);

    script("the same tools, other code");
    run("manifest.json").code(0);
    let verify = mcppin(
        &dir,
        &["verify", "--lock", "mcp.lock.json", "manifest.json"],
    );
    verify
        .code(1)
        .stdout_has("artifact-changed [gated]: docs\n  approved: program ./server.sh sha256:")
        .stdout_has("\n  served:   program ./server.sh sha256:");
    assert!(!verify.stdout.contains("tool-"), "{}", verify.stdout);

    // Approving it makes it the pin, without moving anything else.
    mcppin(
        &dir,
        &[
            "lock",
            "--approve",
            "docs",
            "-o",
            "mcp.lock.json",
            "manifest.json",
        ],
    )
    .code(0)
    .stdout_has("artifact-changed [reported]: docs\n  approved: program ./server.sh sha256:")
    .stdout_has("approval_serial 2");
    mcppin(
        &dir,
        &["verify", "--lock", "mcp.lock.json", "manifest.json"],
    )
    .code(0);
}

/// The fixture serving over HTTPS with `cert`, killed on drop.
struct Https {
    child: Child,
    url: String,
}

impl Drop for Https {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Https {
    fn start(dir: &Dir, name: &str, cert: &rcgen::CertifiedKey, port: u16) -> Self {
        let cert_pem = dir.write(&format!("{name}.pem"), cert.cert.pem());
        let key_pem = dir.write(&format!("{name}.key"), cert.key_pair.serialize_pem());
        let mut child = Command::new(fixture())
            .arg("--http")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--tls-cert")
            .arg(&cert_pem)
            .arg("--tls-key")
            .arg(&key_pem)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the fixture");
        let (tx, rx) = std::sync::mpsc::channel();
        let pipe = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(url) = line.trim().split("listening on ").nth(1) {
                    let _ = tx.send(url.to_owned());
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the fixture's listening line")
            .replace("127.0.0.1", "localhost");
        Self { child, url }
    }
}

#[test]
fn a_remote_server_records_its_url_and_reports_but_never_compares_its_certificate_key() {
    let dir = Dir::new();
    // One port for both servers: the same URL.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let capture = |cert: &rcgen::CertifiedKey, output: &str| {
        let server = Https::start(&dir, output, cert, port);
        assert!(server.url.starts_with("https://"), "{}", server.url);
        dir.write(
            "mcp.json",
            format!(
                r#"{{"mcpServers": {{"web": {{"type": "http", "url": {}}}}}}}"#,
                json_string(&format!("{}?key=${{KEY}}", server.url))
            ),
        );
        // The system's trust store holds the test's certificate alone.
        let trusted = dir.path().join(format!("{output}.pem"));
        let run = dir.export_env(
            &["--config", "mcp.json", "-o", output],
            &[
                ("SSL_CERT_FILE", &trusted.to_string_lossy()),
                ("SSL_CERT_DIR", &dir.path().join("none").to_string_lossy()),
                ("KEY", "query-secret-1234"),
            ],
        );
        run.code(0);
        (run, server.url.clone())
    };
    let first = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let key = mcppin_client::artifact::spki_sha256(first.cert.der()).expect("a certificate");
    let (run, url) = capture(&first, "approved.json");
    run.stderr_has(&format!(
        "; artifact: remote {url}, key sha256:{}",
        &key[..12]
    ));
    let approved = artifact(&dir, "approved.json");
    assert_eq!(
        approved,
        serde_json::json!({"kind": "remote", "url": url, "spki_sha256": key})
    );
    assert!(!String::from_utf8_lossy(&dir.read("approved.json")).contains("query-secret"));
    mcppin(&dir, &["lock", "-o", "mcp.lock.json", "approved.json"]).code(0);

    // A rotated certificate (another key), the same URL: recorded, and still the approved
    // artifact.
    let rotated = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let other = mcppin_client::artifact::spki_sha256(rotated.cert.der()).expect("a certificate");
    assert_ne!(other, key);
    let (_, again) = capture(&rotated, "manifest.json");
    assert_eq!(again, url);
    let served = artifact(&dir, "manifest.json");
    assert_eq!(served["spki_sha256"], serde_json::json!(other));
    mcppin(
        &dir,
        &["verify", "--lock", "mcp.lock.json", "manifest.json"],
    )
    .code(0)
    .stdout_lacks("artifact-");
}

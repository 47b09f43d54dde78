//! Artifact identity of a container image with a real engine: an image built in the test from
//! the fixture server (no base image, nothing pulled), captured by the real `mcppin-export`
//! (`docker run`), locked, then rebuilt under the same tag with other bytes and the same tools:
//! `mcppin verify` reports `artifact-changed`, and `mcppin-guard` refuses to start it.
//!
//! `#[ignore]`: it needs a running Docker daemon, which not every machine has. `.ci/run` runs
//! it where `docker info` succeeds (`cargo test -p mcppin-export --test oci -- --ignored`);
//! run that way, it never skips: without a daemon it fails saying so.

mod util;

use std::path::{Path, PathBuf};
use std::process::Command;

use mcppin_testkit::{Run, StdinEnd};
use serde_json::{Value, json};
use util::{Dir, fixture, mcppin};

/// Runs `docker` with `args`, bounded, and asserts it succeeded.
fn docker(dir: &Dir, args: &[&str]) -> Run {
    let run = mcppin_testkit::run_within(
        Command::new("docker").args(args).current_dir(dir.path()),
        Vec::new(),
        StdinEnd::Closes,
        std::time::Duration::from_secs(300),
    );
    assert_eq!(
        run.code, 0,
        "docker {args:?} failed (a running Docker daemon is needed)\n{}{}",
        run.stdout, run.stderr
    );
    run
}

/// Copies `file` into the build context under its own absolute path.
fn copy_into(context: &Path, file: &Path) {
    let target = context
        .join("rootfs")
        .join(file.strip_prefix("/").expect("absolute"));
    std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
    std::fs::copy(file, &target).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
}

/// The shared libraries the fixture needs, as `ldd` lists them.
fn libraries(binary: &Path) -> Vec<PathBuf> {
    let out = mcppin_testkit::output(Command::new("ldd").arg(binary)).expect("ldd");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter(|word| word.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

/// Builds `tag` from scratch: the fixture server, its libraries, and `note` in a file (the
/// bytes that differ from one build to the next).
fn build(dir: &Dir, tag: &str, note: &str) {
    let context = dir.path().join(format!("context-{}", note.len()));
    let _ = std::fs::remove_dir_all(&context);
    let server = fixture();
    copy_into(&context, &server);
    for library in libraries(&server) {
        copy_into(&context, &library);
    }
    std::fs::write(context.join("rootfs/note.txt"), note).expect("note");
    std::fs::write(
        context.join("Dockerfile"),
        format!(
            "FROM scratch\nCOPY rootfs/ /\nENTRYPOINT [{}]\n",
            json!(server.display().to_string())
        ),
    )
    .expect("Dockerfile");
    docker(
        dir,
        &[
            "build",
            "--quiet",
            "-t",
            tag,
            &context.display().to_string(),
        ],
    );
}

/// Removes the test's images when it ends, passed or failed.
struct Images(Vec<String>);

impl Drop for Images {
    fn drop(&mut self) {
        for image in &self.0 {
            let _ = mcppin_testkit::output(Command::new("docker").args(["rmi", "--force", image]));
        }
    }
}

#[test]
#[ignore = "needs a running Docker daemon; .ci/run runs it where docker info succeeds"]
fn an_image_rebuilt_under_the_same_tag_is_an_artifact_change_and_is_not_started() {
    let dir = Dir::new();
    let tag = format!("mcppin-test-fixture:{}", std::process::id());
    let _cleanup = Images(vec![tag.clone()]);
    build(&dir, &tag, "the approved build");
    let id = docker(&dir, &["image", "inspect", "--format", "{{.Id}}", &tag]);
    let id = id.stdout.trim().to_owned();
    assert!(id.starts_with("sha256:"), "{id}");
    dir.write(
        "mcp.json",
        format!(
            "{:#}\n",
            json!({"mcpServers": {"image": {"command": "docker",
                "args": ["run", "-i", "--rm", tag, "--mode", "honest"]}}})
        ),
    );
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    let home = dir.path().display().to_string();
    let env = [("PATH", path.as_str()), ("HOME", home.as_str())];
    dir.export_env(
        &[
            "--config",
            "mcp.json",
            "--inherit-env",
            "-o",
            "approved.json",
        ],
        &env,
    )
    .code(0)
    .stderr_has(&format!("; artifact: oci {tag} {}", &id[..19]));
    let manifest: Value = serde_json::from_slice(&dir.read("approved.json")).expect("manifest");
    assert_eq!(
        manifest["servers"][0]["artifact"],
        json!({"kind": "oci", "image": tag, "digest": id})
    );
    mcppin(&dir, &["lock", "-o", "mcp.lock.json", "approved.json"]).code(0);

    // The same tag, other bytes, the same tools.
    build(&dir, &tag, "a build with other bytes");
    dir.export_env(
        &[
            "--config",
            "mcp.json",
            "--inherit-env",
            "-o",
            "manifest.json",
        ],
        &env,
    )
    .code(0);
    let verify = mcppin(
        &dir,
        &["verify", "--lock", "mcp.lock.json", "manifest.json"],
    );
    verify.code(1).stdout_has(&format!(
        "artifact-changed [gated]: image\n  approved: oci {tag} {id}\n"
    ));
    assert!(!verify.stdout.contains("tool-"), "{}", verify.stdout);

    // The guard holds it against the lock before it starts the container.
    let guard = Path::new(env!("CARGO_BIN_EXE_mcppin-export")).with_file_name("mcppin-guard");
    let run = mcppin_testkit::run(
        Command::new(guard)
            .args([
                "--lock",
                "mcp.lock.json",
                "--server",
                "image",
                "--",
                "docker",
                "run",
            ])
            .args(["-i", "--rm", &tag, "--mode", "honest"])
            .current_dir(dir.path())
            .env_clear()
            .envs(env),
        Vec::new(),
        StdinEnd::Closes,
    );
    run.code(1)
        .stderr_has("mcppin-guard: artifact-changed: the server runs another artifact than the lock approved")
        .stderr_has("mcppin-guard: the server was not started");
}

//! `docker run` and `podman run`: the image id the local engine holds for the image the launch
//! names.
//!
//! Asked of the engine the launch runs (its program as the start resolves it, with the server's
//! environment, so `DOCKER_HOST` and the like point it where the server goes) with `image
//! inspect IMAGE`, which reads the engine's store and never pulls. The id is the digest of the
//! image's configuration, which names its layers: what runs, not the registry's manifest
//! digest. An engine that is absent or unreachable leaves the artifact unknown, with its
//! message.

use std::io::Read;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use mcppin_core::artifact::{Artifact, is_oci_digest};
use mcppin_core::{Value, parse};

use crate::{Error, ServerCommand};

/// How long the engine may take to describe an image.
pub const INSPECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The most bytes of the engine's answer read.
const MAX_OUTPUT: u64 = 4 << 20;

/// What the engine says of an image.
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum Found {
    /// It holds the image: its artifact.
    Image(Artifact),
    /// It does not hold it (a start pulls it first).
    Absent,
    /// It could not be asked, with the reason.
    Unknown(String),
}

/// The image id of the first image of an engine's `image inspect` output (a JSON array of
/// image descriptions, each with its `Id`: `sha256:` and hex from Docker, the hex alone from
/// Podman, which names the same SHA-256); `None` for an empty array (no such image).
///
/// # Errors
///
/// [`Error::Record`] when the output is not such an array or the id is not a SHA-256 or SHA-512
/// digest.
pub fn image_id(output: &[u8]) -> Result<Option<String>, Error> {
    let record = "image inspect output";
    let bad = |at: &str, expected| Error::Record {
        record,
        at: at.to_owned(),
        expected,
    };
    let value = parse(output).map_err(|_| bad("its start", "a JSON array"))?;
    let images = value
        .as_array()
        .ok_or_else(|| bad("its start", "a JSON array of images"))?;
    let Some(first) = images.first() else {
        return Ok(None);
    };
    let id = first
        .get("Id")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("/0/Id", "the image id"))?;
    let id = if id.len() == 64 && !id.contains(':') {
        format!("sha256:{id}")
    } else {
        id.to_owned()
    };
    if !is_oci_digest(&id) {
        return Err(bad("/0/Id", "sha256: and 64 lowercase hex digits"));
    }
    Ok(Some(id))
}

/// What the engine `command` runs holds for `image`.
#[must_use]
pub fn image(command: &ServerCommand, image: &str) -> Found {
    let engine = match command.resolve_program() {
        Ok(engine) => engine,
        Err(e) => {
            return Found::Unknown(format!(
                "the container engine {:?} cannot be run: {e}",
                command.program().to_string_lossy()
            ));
        }
    };
    let mut inspect = Command::new(&engine);
    inspect
        .args(["image", "inspect", image])
        .env_clear()
        .envs(command.environment())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = command.working_dir() {
        inspect.current_dir(dir);
    }
    let engine_name = engine.file_name().map_or_else(
        || "the engine".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    let output = match run_bounded(&mut inspect, INSPECT_TIMEOUT) {
        Ok(output) => output,
        Err(reason) => return Found::Unknown(format!("{engine_name} image inspect: {reason}")),
    };
    match image_id(&output.stdout) {
        Ok(Some(digest)) if output.success => Found::Image(Artifact::Oci {
            image: image.to_owned(),
            digest,
        }),
        Ok(None) if absent(&output.stderr) => Found::Absent,
        Ok(_) | Err(_) => {
            let said = String::from_utf8_lossy(&output.stderr);
            let said = said
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no message");
            Found::Unknown(format!(
                "{engine_name} image inspect {image:?} failed: {}",
                said.chars().take(200).collect::<String>()
            ))
        }
    }
}

/// Whether the engine's message says it holds no such image (Docker, Podman).
fn absent(stderr: &[u8]) -> bool {
    let text = String::from_utf8_lossy(stderr).to_ascii_lowercase();
    ["no such image", "image not known", "failed to find image"]
        .iter()
        .any(|m| text.contains(m))
}

struct Output {
    success: bool,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Runs `command` to its end, for at most `limit` (then kills it), reading at most
/// [`MAX_OUTPUT`] bytes of each output.
fn run_bounded(command: &mut Command, limit: Duration) -> Result<Output, String> {
    let mut child = command.spawn().map_err(|e| e.to_string())?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(MAX_OUTPUT).read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break status,
            None if started.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer within {} s", limit.as_secs()));
            }
            None => thread::sleep(Duration::from_millis(20)),
        }
    };
    Ok(Output {
        success: status.success(),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    use super::*;

    fn testdata(name: &str) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/artifact/oci")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn reads_the_image_id_of_docker_and_podman() {
        let id = "sha256:3f57d9401f8d42f986df300f0c69192fc41da28ccc8d797829467780db3dd741";
        assert_eq!(
            image_id(&testdata("docker-image-inspect.json"))
                .unwrap()
                .as_deref(),
            Some(id)
        );
        assert_eq!(
            image_id(&testdata("podman-image-inspect.json"))
                .unwrap()
                .as_deref(),
            Some(id)
        );
        assert_eq!(image_id(b"[]\n").unwrap(), None);
        for bad in [&b"{}"[..], b"[{}]", br#"[{"Id":"sha256:00"}]"#, b"not json"] {
            assert!(
                matches!(image_id(bad), Err(Error::Record { .. })),
                "{bad:?}"
            );
        }
    }

    /// A stand-in engine: answers `image inspect` as the script says.
    fn engine(dir: &Path, script: &str) -> ServerCommand {
        let path = dir.join("docker");
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        ServerCommand::new("docker").env("PATH", format!("{}:/bin:/usr/bin", dir.display()))
    }

    #[test]
    fn tells_an_absent_image_from_an_unreachable_engine() {
        let dir = tempfile::tempdir().unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/artifact/oci/docker-image-inspect.json");
        let held = engine(dir.path(), &format!("cat '{}'", fixture.display()));
        assert!(
            matches!(image(&held, "srv:1"), Found::Image(Artifact::Oci { ref image, .. }) if image == "srv:1")
        );
        let absent = engine(
            dir.path(),
            "echo '[]'; echo 'Error: No such image: srv:1' >&2; exit 1",
        );
        assert_eq!(image(&absent, "srv:1"), Found::Absent);
        let down = engine(
            dir.path(),
            "echo '[]'; echo 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock.' >&2; exit 1",
        );
        let Found::Unknown(reason) = image(&down, "srv:1") else {
            panic!("unknown")
        };
        assert!(
            reason.contains("Cannot connect to the Docker daemon"),
            "{reason}"
        );
        let missing = ServerCommand::new("docker").env("PATH", "/nonexistent");
        assert!(matches!(image(&missing, "srv:1"), Found::Unknown(_)));
    }
}

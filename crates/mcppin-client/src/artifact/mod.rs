//! Artifact identity at capture: what a server's launch runs, as far as its launcher records it
//! (docs/export.md, "Artifact identity").
//!
//! Read from the local file system and the launcher's own records, never from the network, and
//! by running nothing but the server the configuration runs (and, for an image, the local
//! engine's `image inspect`, which never pulls):
//!
//! - a local program or script ([`local`]): the program as the start resolves it (`PATH`, the
//!   working directory, symbolic links), the interpreters its `#!` line names, and every
//!   argument that names an existing file, each with its SHA-256;
//! - `npx`, `npm exec` ([`npm`]): every package of the lockfile npm wrote for the launch in its
//!   cache (`_npx/<hash>/package-lock.json`), with its `integrity`;
//! - `uvx`, `uv tool run`, `pipx run` ([`python`]): every distribution of the environment the
//!   running server's interpreter belongs to, with the wheel hash uv's cache records, or the
//!   digest of its installed `RECORD` where none is recorded;
//! - `docker run`, `podman run` ([`oci`]): the image id the local engine holds for the image;
//! - a remote server: the URL without its query, and the SHA-256 of the certificate's key
//!   ([`spki_sha256`], read by the HTTP transport).
//!
//! What cannot be pinned is [`Artifact::Unknown`] with the reason, never guessed. The parsers
//! of the launchers' records are pure functions of bytes (and fuzzed); the rest of this module
//! finds and reads the files.
//!
//! ```
//! use mcppin_client::{ServerCommand, artifact};
//! use mcppin_core::artifact::Artifact;
//!
//! // A program on PATH: pinned before it starts.
//! let command = ServerCommand::new("sh").env("PATH", "/bin:/usr/bin");
//! let Some(Artifact::Local { program, .. }) = artifact::before_start(&command) else {
//!     panic!("a local program")
//! };
//! assert!(program.path.starts_with('/'));
//! ```

use mcppin_core::artifact::Artifact;
use mcppin_core::launch::Launch;
use sha2::{Digest as _, Sha256};

use crate::ServerCommand;
use file::hex;

mod file;
pub mod local;
pub mod npm;
pub mod oci;
pub mod python;

/// How a server command runs its server, as far as artifact identity goes.
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum Launcher {
    /// A program on the local file system, run as it is.
    Program,
    /// `npx` or `npm exec`: installs packages into npm's cache first.
    Npm,
    /// `uvx`, `uv tool run` or `pipx run`: installs distributions into an environment first.
    Python,
    /// `docker run` or `podman run` of this image (as the launch names it).
    Oci {
        /// The image reference.
        image: String,
    },
    /// A launcher whose install records are not read, with the reason.
    Unread(&'static str),
}

impl Launcher {
    /// The launcher of `command`, by the program's name and its first arguments.
    #[must_use]
    pub fn of(command: &ServerCommand) -> Self {
        let program = command.program().to_string_lossy();
        let name = program.rsplit('/').next().unwrap_or(&program);
        let args: Vec<String> = command
            .arguments()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let first = args.first().map(String::as_str);
        match (name, first) {
            ("npx", _) | ("npm", Some("exec" | "x")) => Self::Npm,
            ("uvx", _) | ("pipx", Some("run")) => Self::Python,
            ("uv", Some("tool")) if args.get(1).is_some_and(|a| a == "run") => Self::Python,
            ("pnpm", Some("dlx")) | ("pnpx", _) => Self::Unread(
                "pnpm dlx installs into pnpm's own store, whose records this version does not \
                 read",
            ),
            ("bunx", _) | ("bun", Some("x")) => Self::Unread(
                "bunx installs into bun's own cache, whose records this version does not read",
            ),
            ("docker" | "podman", Some("run" | "container")) => {
                let launch = Launch::Stdio {
                    command: program.clone().into_owned(),
                    args,
                    env: Default::default(),
                    env_file: None,
                    cwd: None,
                    guard: None,
                };
                match launch.package() {
                    Some(image) => Self::Oci {
                        image: image.to_string(),
                    },
                    None => Self::Unread("the container command names no image"),
                }
            }
            _ => Self::Program,
        }
    }
}

/// What `command` runs, when that can be known before it starts: a local program's files, an
/// image the engine already holds. `None` when only the started server shows it (what `npx`
/// or `uvx` installs, an image the engine pulls on start): [`once_up`] reads it then.
#[must_use]
pub fn before_start(command: &ServerCommand) -> Option<Artifact> {
    match Launcher::of(command) {
        Launcher::Program => Some(local::program(command)),
        Launcher::Oci { image } => match oci::image(command, &image) {
            oci::Found::Image(artifact) => Some(artifact),
            // Not in the engine's store: the start pulls it, and the started server shows it.
            oci::Found::Absent => None,
            oci::Found::Unknown(reason) => Some(Artifact::Unknown { reason }),
        },
        Launcher::Unread(reason) => Some(Artifact::Unknown {
            reason: reason.to_owned(),
        }),
        Launcher::Npm | Launcher::Python => None,
    }
}

/// What `command` runs, read once its server is up (`server`: the process id of the server
/// started from it, the leader of its process group, still running): what the launcher
/// installed for it, the image the engine ran, or a local program's files.
#[must_use]
pub fn once_up(command: &ServerCommand, server: u32) -> Artifact {
    match Launcher::of(command) {
        Launcher::Program => local::program(command),
        Launcher::Npm => npm::installed(command),
        Launcher::Python => python::installed(command, server),
        Launcher::Oci { image } => match oci::image(command, &image) {
            oci::Found::Image(artifact) => artifact,
            oci::Found::Absent => Artifact::Unknown {
                reason: format!(
                    "the container engine holds no image {image:?} although the server ran"
                ),
            },
            oci::Found::Unknown(reason) => Artifact::Unknown { reason },
        },
        Launcher::Unread(reason) => Artifact::Unknown {
            reason: reason.to_owned(),
        },
    }
}

/// The artifact of a remote server at `url` (the launch's URL: no query, fragment or user
/// information), with the SHA-256 of its certificate's key when the transport read one
/// ([`crate::HttpTransport::server_key`]).
#[must_use]
pub fn remote(url: &str, spki_sha256: Option<String>) -> Artifact {
    match Launch::remote(url) {
        Launch::Remote { url } => Artifact::Remote { url, spki_sha256 },
        _ => Artifact::Unknown {
            reason: "not the URL of a remote server".to_owned(),
        },
    }
}

/// The SHA-256 (lowercase hex) of the DER `SubjectPublicKeyInfo` of the X.509 certificate
/// `certificate` (DER), as HTTP public-key pinning hashed it (RFC 7469 section 2.4); `None`
/// for bytes that are not a certificate.
#[must_use]
pub fn spki_sha256(certificate: &[u8]) -> Option<String> {
    let der = rustls::pki_types::CertificateDer::from(certificate);
    let cert = webpki::EndEntityCert::try_from(&der).ok()?;
    Some(hex(&Sha256::digest(
        cert.subject_public_key_info().as_ref(),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_launcher_of_each_command() {
        let of =
            |program: &str, args: &[&str]| Launcher::of(&ServerCommand::new(program).args(args));
        assert_eq!(of("node", &["server.js"]), Launcher::Program);
        assert_eq!(of("/usr/local/bin/npx", &["-y", "pkg@1"]), Launcher::Npm);
        assert_eq!(of("npm", &["exec", "--", "pkg@1"]), Launcher::Npm);
        assert_eq!(of("npm", &["run", "start"]), Launcher::Program);
        assert_eq!(of("uvx", &["pkg==1"]), Launcher::Python);
        assert_eq!(of("uv", &["tool", "run", "pkg"]), Launcher::Python);
        assert_eq!(of("pipx", &["run", "pkg"]), Launcher::Python);
        assert_eq!(
            of("docker", &["run", "-i", "--rm", "ghcr.io/o/s:1.0"]),
            Launcher::Oci {
                image: "ghcr.io/o/s:1.0".into()
            }
        );
        assert!(matches!(of("pnpm", &["dlx", "pkg"]), Launcher::Unread(_)));
        assert!(matches!(of("bunx", &["pkg"]), Launcher::Unread(_)));
    }

    #[test]
    fn hashes_the_key_of_a_certificate_not_the_certificate() {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let expected = hex(&Sha256::digest(key.public_key_der()));
        assert_eq!(spki_sha256(cert.der()), Some(expected.clone()));
        // Another certificate for the same key: the same pin.
        let again = rcgen::CertificateParams::new(vec!["other.example".to_owned()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        assert_eq!(spki_sha256(again.der()), Some(expected));
        assert_eq!(spki_sha256(b"not a certificate"), None);
    }
}

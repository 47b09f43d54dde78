//! Artifact identity: what a server's launch ran, as far as the launcher records it
//! (docs/formats.md, "Artifact").
//!
//! A [`crate::launch::Launch`] says how a server is started as written; the same words run
//! other code when `npx -y pkg` resolves a new version, a script is edited in place or an
//! image tag moves. An [`Artifact`] records the bytes: the digests of a local program and of
//! the files its arguments name, the packages npm installed with their `integrity`, the
//! distributions uv installed with their hash, the digest an engine resolved an image to, or
//! the URL of a remote server. What a capture could not pin is [`Artifact::Unknown`], with
//! the reason, never guessed.
//!
//! ```
//! use mcppin_core::artifact::{Artifact, NpmPackage};
//!
//! let approved = Artifact::Npm { packages: vec![NpmPackage {
//!     name: "docs-mcp".into(), version: "1.2.0".into(), integrity: "sha512-AAAA".into() }] };
//! let served = Artifact::Npm { packages: vec![NpmPackage {
//!     name: "docs-mcp".into(), version: "1.2.1".into(), integrity: "sha512-BBBB".into() }] };
//! assert!(approved.approves(&approved));
//! assert!(!approved.approves(&served));
//! assert_eq!(approved.differences(&served).0, ["npm docs-mcp@1.2.0 sha512-AAAA"]);
//! ```

use std::fmt;

use crate::document::Error;
use crate::surface::{Fields, child, element, put, put_opt, string};
use crate::value::{Object, Value};

/// What a server's launch ran.
#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[non_exhaustive]
pub enum Artifact {
    /// A program started from the local file system (`node server.js`, `./server.sh`).
    Local {
        /// The program file the command resolved to (the interpreter, for a script run by
        /// one).
        program: File,
        /// Every argument that named an existing file, in argument order.
        files: Vec<File>,
    },
    /// The packages npm installed for the launch (`npx`), read from the lockfile npm wrote.
    Npm {
        /// The installed packages, sorted by name then version.
        packages: Vec<NpmPackage>,
    },
    /// The distributions uv or pipx installed for the launch (`uvx`, `pipx run`).
    Pypi {
        /// The installed distributions, sorted by name then version.
        dists: Vec<PypiDist>,
    },
    /// A container image as the local engine resolved it (`docker run`, `podman run`).
    Oci {
        /// The image as the launch names it (`ghcr.io/org/server:1.0`).
        image: String,
        /// The digest the engine resolved it to (`sha256:...`).
        digest: String,
    },
    /// A server reached over HTTP.
    Remote {
        /// The URL without query, fragment or user information.
        url: String,
        /// The SHA-256 of the server certificate's public key (hex), when the capture read
        /// it; reported, never compared: certificates rotate.
        spki_sha256: Option<String>,
    },
    /// The capture could not pin what runs.
    Unknown {
        /// Why (lowercase, no final period).
        reason: String,
    },
}

/// A local file and its digest.
#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct File {
    /// The path, as resolved (absolute for a program found on `PATH`, otherwise as written).
    pub path: String,
    /// The SHA-256 of its bytes (64 lowercase hex digits).
    pub sha256: String,
}

/// An npm package as npm's lockfile records it.
#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct NpmPackage {
    /// The package name (`@scope/name`).
    pub name: String,
    /// The resolved version.
    pub version: String,
    /// The registry's `integrity` (Subresource Integrity, `sha512-...`), as recorded.
    pub integrity: String,
}

/// A Python distribution as its installer recorded it.
#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct PypiDist {
    /// The distribution name, normalised (lowercase, runs of `-_.` as `-`).
    pub name: String,
    /// The installed version.
    pub version: String,
    /// The archive's hash as recorded (`sha256=...` or `sha256:...`).
    pub hash: String,
}

const KINDS: &str = "\"local\", \"npm\", \"pypi\", \"oci\", \"remote\" or \"unknown\"";

impl Artifact {
    /// The kind's name in our formats (`local`, `npm`, `pypi`, `oci`, `remote`, `unknown`).
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Local { .. } => "local",
            Self::Npm { .. } => "npm",
            Self::Pypi { .. } => "pypi",
            Self::Oci { .. } => "oci",
            Self::Remote { .. } => "remote",
            Self::Unknown { .. } => "unknown",
        }
    }

    /// Whether `served` runs what this approved artifact pinned. A remote server's
    /// certificate key is not compared (it rotates); an [`Artifact::Unknown`] on either side
    /// proves nothing and is never reported as another artifact.
    #[must_use]
    pub fn approves(&self, served: &Self) -> bool {
        match (self, served) {
            (Self::Unknown { .. }, _) | (_, Self::Unknown { .. }) => true,
            (Self::Remote { url: a, .. }, Self::Remote { url: b, .. }) => a == b,
            (a, b) => a == b,
        }
    }

    /// One line per pinned part (`npm pkg@1.0.0 sha512-...`, `local /bin/sh sha256:...`),
    /// in a stable order; not escaped for a terminal.
    #[must_use]
    pub fn entries(&self) -> Vec<String> {
        match self {
            Self::Local { program, files } => std::iter::once(format!(
                "program {} sha256:{}",
                program.path, program.sha256
            ))
            .chain(
                files
                    .iter()
                    .map(|f| format!("file {} sha256:{}", f.path, f.sha256)),
            )
            .collect(),
            Self::Npm { packages } => packages
                .iter()
                .map(|p| format!("npm {}@{} {}", p.name, p.version, p.integrity))
                .collect(),
            Self::Pypi { dists } => dists
                .iter()
                .map(|d| format!("pypi {}=={} {}", d.name, d.version, d.hash))
                .collect(),
            Self::Oci { image, digest } => vec![format!("oci {image} {digest}")],
            Self::Remote { url, .. } => vec![format!("remote {url}")],
            Self::Unknown { reason } => vec![format!("unknown ({reason})")],
        }
    }

    /// The entries of this approved artifact that `served` lacks, and those of `served` this
    /// one lacks: the old and the new versions and digests of what moved.
    #[must_use]
    pub fn differences(&self, served: &Self) -> (Vec<String>, Vec<String>) {
        let was = self.entries();
        let is = served.entries();
        let gone = was.iter().filter(|e| !is.contains(e)).cloned().collect();
        let new = is.iter().filter(|e| !was.contains(e)).cloned().collect();
        (gone, new)
    }

    /// Reads an artifact as [`Artifact::to_value`] writes it; `pointer` locates it for
    /// messages.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownMember`], [`Error::MissingMember`] or [`Error::Invalid`] for a member
    /// that is not of the format.
    pub fn from_value(value: &Value, pointer: &str) -> Result<Self, Error> {
        let kind = value
            .as_object()
            .and_then(|o| o.get("kind"))
            .and_then(Value::as_str);
        let members: &[&str] = match kind {
            Some("local") => &["kind", "program", "files"],
            Some("npm") => &["kind", "packages"],
            Some("pypi") => &["kind", "dists"],
            Some("oci") => &["kind", "image", "digest"],
            Some("remote") => &["kind", "url", "spki_sha256"],
            Some("unknown") => &["kind", "reason"],
            _ => {
                return Err(Error::Invalid {
                    pointer: child(pointer, "kind"),
                    expected: KINDS,
                });
            }
        };
        let f = Fields::new(value, pointer, members)?;
        let text = |name: &'static str| -> Result<String, Error> {
            Ok(string(f.required(name)?, &f.at(name))?.to_owned())
        };
        Ok(match kind {
            Some("local") => Self::Local {
                program: file(f.required("program")?, &f.at("program"))?,
                files: list(f.optional("files"), &f.at("files"), file)?,
            },
            Some("npm") => Self::Npm {
                packages: list(f.optional("packages"), &f.at("packages"), npm_package)?,
            },
            Some("pypi") => Self::Pypi {
                dists: list(f.optional("dists"), &f.at("dists"), pypi_dist)?,
            },
            Some("oci") => Self::Oci {
                image: text("image")?,
                digest: text("digest")?,
            },
            Some("remote") => Self::Remote {
                url: text("url")?,
                spki_sha256: match f.optional("spki_sha256") {
                    Some(v) => Some(sha256_hex(v, &f.at("spki_sha256"))?),
                    None => None,
                },
            },
            _ => Self::Unknown {
                reason: text("reason")?,
            },
        })
    }

    /// The artifact as a value of our formats: `kind` and the members of that kind.
    #[must_use]
    pub fn to_value(&self) -> Value {
        let mut o = Object::new();
        put(&mut o, "kind", self.kind());
        match self {
            Self::Local { program, files } => {
                put(&mut o, "program", file_value(program));
                put(
                    &mut o,
                    "files",
                    Value::from(files.iter().map(file_value).collect::<Vec<_>>()),
                );
            }
            Self::Npm { packages } => {
                let list = packages.iter().map(|p| {
                    let mut e = Object::new();
                    put(&mut e, "name", p.name.as_str());
                    put(&mut e, "version", p.version.as_str());
                    put(&mut e, "integrity", p.integrity.as_str());
                    Value::from(e)
                });
                put(&mut o, "packages", Value::from(list.collect::<Vec<_>>()));
            }
            Self::Pypi { dists } => {
                let list = dists.iter().map(|d| {
                    let mut e = Object::new();
                    put(&mut e, "name", d.name.as_str());
                    put(&mut e, "version", d.version.as_str());
                    put(&mut e, "hash", d.hash.as_str());
                    Value::from(e)
                });
                put(&mut o, "dists", Value::from(list.collect::<Vec<_>>()));
            }
            Self::Oci { image, digest } => {
                put(&mut o, "image", image.as_str());
                put(&mut o, "digest", digest.as_str());
            }
            Self::Remote { url, spki_sha256 } => {
                put(&mut o, "url", url.as_str());
                put_opt(&mut o, "spki_sha256", spki_sha256.as_deref());
            }
            Self::Unknown { reason } => put(&mut o, "reason", reason.as_str()),
        }
        Value::from(o)
    }
}

impl fmt::Display for Artifact {
    /// The entries on one line, separated by `, `; not escaped for a terminal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.entries().join(", "))
    }
}

fn file_value(f: &File) -> Value {
    let mut e = Object::new();
    put(&mut e, "path", f.path.as_str());
    put(&mut e, "sha256", f.sha256.as_str());
    Value::from(e)
}

fn list<T>(
    value: Option<&Value>,
    pointer: &str,
    read: fn(&Value, &str) -> Result<T, Error>,
) -> Result<Vec<T>, Error> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let items = crate::surface::array(value, pointer)?;
    items
        .iter()
        .enumerate()
        .map(|(i, v)| read(v, &element(pointer, i)))
        .collect()
}

fn file(value: &Value, pointer: &str) -> Result<File, Error> {
    let f = Fields::new(value, pointer, &["path", "sha256"])?;
    Ok(File {
        path: string(f.required("path")?, &f.at("path"))?.to_owned(),
        sha256: sha256_hex(f.required("sha256")?, &f.at("sha256"))?,
    })
}

fn npm_package(value: &Value, pointer: &str) -> Result<NpmPackage, Error> {
    let f = Fields::new(value, pointer, &["name", "version", "integrity"])?;
    Ok(NpmPackage {
        name: string(f.required("name")?, &f.at("name"))?.to_owned(),
        version: string(f.required("version")?, &f.at("version"))?.to_owned(),
        integrity: string(f.required("integrity")?, &f.at("integrity"))?.to_owned(),
    })
}

fn pypi_dist(value: &Value, pointer: &str) -> Result<PypiDist, Error> {
    let f = Fields::new(value, pointer, &["name", "version", "hash"])?;
    Ok(PypiDist {
        name: string(f.required("name")?, &f.at("name"))?.to_owned(),
        version: string(f.required("version")?, &f.at("version"))?.to_owned(),
        hash: string(f.required("hash")?, &f.at("hash"))?.to_owned(),
    })
}

fn sha256_hex(value: &Value, pointer: &str) -> Result<String, Error> {
    let text = string(value, pointer)?;
    if text.len() == 64
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        Ok(text.to_owned())
    } else {
        Err(Error::Invalid {
            pointer: pointer.to_owned(),
            expected: "64 lowercase hex digits",
        })
    }
}

/// The first `schema_version` of the manifest and the lockfile whose servers record their
/// artifact (`artifact`); an older document holding one is refused.
pub const ARTIFACT_SINCE: u64 = 4;

/// Reads the `artifact` of a server of a document of `document_version`, refusing it in a
/// version before [`ARTIFACT_SINCE`].
pub(crate) fn read(
    value: &Value,
    pointer: &str,
    document: crate::document::Document,
    document_version: u64,
) -> Result<Artifact, Error> {
    if document_version < ARTIFACT_SINCE {
        return Err(Error::LaterVersionMember {
            document,
            pointer: pointer.to_owned(),
            name: "artifact".to_owned(),
            version: document_version,
            since: ARTIFACT_SINCE,
        });
    }
    Artifact::from_value(value, pointer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    fn hex(c: char) -> String {
        std::iter::repeat_n(c, 64).collect()
    }

    fn local(script: char) -> Artifact {
        Artifact::Local {
            program: File {
                path: "/usr/bin/node".into(),
                sha256: hex('a'),
            },
            files: vec![File {
                path: "server.js".into(),
                sha256: hex(script),
            }],
        }
    }

    #[test]
    fn every_kind_reads_back_as_written() {
        let all = [
            local('b'),
            Artifact::Npm {
                packages: vec![NpmPackage {
                    name: "@s/p".into(),
                    version: "1.0.0".into(),
                    integrity: "sha512-x".into(),
                }],
            },
            Artifact::Pypi {
                dists: vec![PypiDist {
                    name: "mcp-server".into(),
                    version: "0.1".into(),
                    hash: "sha256=abc".into(),
                }],
            },
            Artifact::Oci {
                image: "img:1".into(),
                digest: "sha256:00".into(),
            },
            Artifact::Remote {
                url: "https://h/mcp".into(),
                spki_sha256: Some(hex('c')),
            },
            Artifact::Unknown {
                reason: "no lockfile".into(),
            },
        ];
        for a in all {
            assert_eq!(Artifact::from_value(&a.to_value(), "/a").unwrap(), a);
        }
    }

    #[test]
    fn an_edited_script_is_another_artifact() {
        assert!(local('b').approves(&local('b')));
        assert!(!local('b').approves(&local('c')));
        let (gone, new) = local('b').differences(&local('c'));
        assert_eq!(gone, [format!("file server.js sha256:{}", hex('b'))]);
        assert_eq!(new, [format!("file server.js sha256:{}", hex('c'))]);
    }

    #[test]
    fn a_rotated_certificate_and_an_unknown_capture_prove_nothing() {
        let remote = |key: char| Artifact::Remote {
            url: "https://h/mcp".into(),
            spki_sha256: Some(hex(key)),
        };
        assert!(remote('a').approves(&remote('b')));
        let unknown = Artifact::Unknown { reason: "r".into() };
        assert!(local('b').approves(&unknown));
        assert!(unknown.approves(&local('b')));
        let moved = Artifact::Remote {
            url: "https://other/mcp".into(),
            spki_sha256: None,
        };
        assert!(!remote('a').approves(&moved));
    }

    #[test]
    fn rejects_members_outside_the_format() {
        let bad = [
            (r#"{"kind":"tarball"}"#, "/a/kind"),
            (r#"{"reason":"x"}"#, "/a/kind"),
            (r#"{"kind":"unknown","reason":"x","extra":1}"#, "/a/extra"),
            (
                r#"{"kind":"local","program":{"path":"p","sha256":"AB"}}"#,
                "/a/program/sha256",
            ),
            (
                r#"{"kind":"npm","packages":[{"name":"p","version":"1"}]}"#,
                "/a/packages/0",
            ),
        ];
        for (text, at) in bad {
            let err = Artifact::from_value(&parse(text.as_bytes()).unwrap(), "/a").unwrap_err();
            let pointer = match &err {
                Error::Invalid { pointer, .. }
                | Error::UnknownMember { pointer, .. }
                | Error::MissingMember { pointer, .. } => pointer.clone(),
                other => panic!("{text}: {other:?}"),
            };
            assert_eq!(pointer, at, "{text}: {err}");
        }
    }
}

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
        /// The program file the command resolved to, as the system starts it (`node` for
        /// `node server.js`, the script for `./server.sh`).
        program: File,
        /// The interpreters the program's `#!` line runs it with, in the order they run
        /// (`/usr/bin/env`, then the `node` it finds); empty for a program that is no script.
        interpreters: Vec<File>,
        /// Every argument that named an existing file, in argument order.
        files: Vec<File>,
    },
    /// The packages npm installed for the launch (`npx`), read from the lockfile npm wrote.
    Npm {
        /// The installed packages, sorted by name then version.
        packages: Vec<NpmPackage>,
    },
    /// The distributions uv or pipx installed for the launch (`uvx`, `pipx run`), read from
    /// the environment the server ran in.
    Pypi {
        /// The installed distributions, sorted by name then version.
        dists: Vec<PypiDist>,
    },
    /// A container image as the local engine resolved it (`docker run`, `podman run`).
    Oci {
        /// The image as the launch names it (`ghcr.io/org/server:1.0`).
        image: String,
        /// The image id the engine resolved it to (`sha256:...`, [`is_oci_digest`]): the
        /// digest of the image's configuration, which names its layers.
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
    /// The path: as written for an argument or a program named by a path; absolute, with
    /// symbolic links resolved, for a program found on `PATH` and for an interpreter.
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
    /// The registry's `integrity` (Subresource Integrity, `sha512-...`, [`is_integrity`]), as
    /// recorded.
    pub integrity: String,
}

/// A Python distribution as its installer recorded it.
#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct PypiDist {
    /// The distribution name, normalised (lowercase, runs of `-_.` as `-`).
    pub name: String,
    /// The installed version.
    pub version: String,
    /// What pins its bytes ([`is_dist_hash`]): `sha256:HEX`, the SHA-256 of the wheel file
    /// its installer recorded; or `record-sha256:HEX`, where no wheel hash is recorded, the
    /// SHA-256 of the file list of its installed `RECORD` (each file with its digest).
    pub hash: String,
}

/// When a guard can check an artifact against the server it runs (docs/guard.md).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Check {
    /// Before the server starts: a local program's files, an image the engine holds.
    BeforeStart,
    /// Once the server is up, before its first message is forwarded: what npm or uv
    /// installed for the launch exists only once the launcher has resolved it.
    OnceUp,
    /// Never: a remote server (its certificate key is reported, not compared), or an artifact
    /// the capture could not pin.
    Never,
}

/// One part of an artifact that moved between the approval and a capture
/// ([`Artifact::moved`]).
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Moved {
    /// What the part is: `npm docs-mcp`, `pypi mcp-server-time`, `file server.js`,
    /// `program /usr/bin/node`, `oci ghcr.io/org/server:1`, `remote`.
    pub part: String,
    /// Its approved pin (`1.2.0 sha512-...`, `sha256:...`), `None` when the approval did not
    /// record the part.
    pub approved: Option<String>,
    /// Its captured pin, `None` when the capture did not record the part.
    pub served: Option<String>,
    /// What joins the part and a pin in an entry: `@` (npm), `==` (PyPI), else a space.
    pub joint: &'static str,
}

impl Moved {
    /// The approved entry of the part (`npm docs-mcp@1.2.0 sha512-...`), if any.
    #[must_use]
    pub fn approved_entry(&self) -> Option<String> {
        self.approved.as_ref().map(|pin| self.entry(pin))
    }

    /// The captured entry of the part, if any.
    #[must_use]
    pub fn served_entry(&self) -> Option<String> {
        self.served.as_ref().map(|pin| self.entry(pin))
    }

    fn entry(&self, pin: &str) -> String {
        format!("{}{}{pin}", self.part, self.joint)
    }
}

/// One pinned part of an artifact: what it is, the joint between the two in an entry, its pin.
#[derive(Debug, Eq, PartialEq)]
struct Part {
    what: String,
    joint: &'static str,
    pin: String,
}

impl Part {
    fn entry(&self) -> String {
        format!("{}{}{}", self.what, self.joint, self.pin)
    }
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

    /// Whether this is [`Artifact::Unknown`]: the capture could not pin what runs.
    #[must_use]
    pub fn is_unknown(&self) -> bool {
        matches!(self, Self::Unknown { .. })
    }

    /// The artifact in a few words, for a progress line: `local /usr/bin/node
    /// sha256:0123456789ab, 1 file`, `npm, 96 packages`, `pypi, 31 distributions by wheel
    /// hash`, `oci IMAGE sha256:0123456789ab`, `remote URL, key sha256:0123456789ab`,
    /// `unknown: REASON`; not escaped for a terminal.
    #[must_use]
    pub fn summary(&self) -> String {
        let short = |digest: &str| {
            let (algorithm, hex) = digest.split_once(':').unwrap_or(("sha256", digest));
            format!("{algorithm}:{}", hex.get(..12).unwrap_or(hex))
        };
        let count =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        match self {
            Self::Local {
                program,
                interpreters,
                files,
            } => {
                let mut text = format!("local {} {}", program.path, short(&program.sha256));
                if !interpreters.is_empty() {
                    text.push_str(&format!(
                        ", {}",
                        count(interpreters.len(), "interpreter", "interpreters")
                    ));
                }
                text.push_str(&format!(", {}", count(files.len(), "file", "files")));
                text
            }
            Self::Npm { packages } => {
                format!("npm, {}", count(packages.len(), "package", "packages"))
            }
            Self::Pypi { dists } => {
                let by_wheel = dists
                    .iter()
                    .filter(|d| d.hash.starts_with("sha256:"))
                    .count();
                let mut text = format!(
                    "pypi, {}",
                    count(dists.len(), "distribution", "distributions")
                );
                if by_wheel == dists.len() {
                    text.push_str(" by wheel hash");
                } else {
                    text.push_str(&format!(
                        " ({by_wheel} by wheel hash, {} by installed RECORD)",
                        dists.len() - by_wheel
                    ));
                }
                text
            }
            Self::Oci { image, digest } => format!("oci {image} {}", short(digest)),
            Self::Remote { url, spki_sha256 } => match spki_sha256 {
                Some(key) => format!("remote {url}, key {}", short(key)),
                None => format!("remote {url}"),
            },
            Self::Unknown { reason } => format!("unknown: {reason}"),
        }
    }

    /// When a guard can check this artifact against a server it runs (docs/guard.md).
    #[must_use]
    pub fn check(&self) -> Check {
        match self {
            Self::Local { .. } | Self::Oci { .. } => Check::BeforeStart,
            Self::Npm { .. } | Self::Pypi { .. } => Check::OnceUp,
            Self::Remote { .. } | Self::Unknown { .. } => Check::Never,
        }
    }

    /// One line per pinned part (`npm pkg@1.0.0 sha512-...`, `program /bin/sh sha256:...`),
    /// in a stable order; not escaped for a terminal.
    #[must_use]
    pub fn entries(&self) -> Vec<String> {
        self.parts().iter().map(Part::entry).collect()
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

    /// What moved from this approved artifact to `served`, part by part: a part both record
    /// with another pin (a package at another version, a file with another digest) is one
    /// [`Moved`] with both pins; a part only one of them records has the other side `None`.
    /// In the approved artifact's order, then the parts only `served` records.
    #[must_use]
    pub fn moved(&self, served: &Self) -> Vec<Moved> {
        let was = self.parts();
        let is = served.parts();
        let mut new: Vec<Option<&Part>> =
            is.iter().filter(|e| !was.contains(e)).map(Some).collect();
        let mut moved = Vec::new();
        for gone in was.iter().filter(|e| !is.contains(e)) {
            let paired = new
                .iter_mut()
                .find(|n| n.is_some_and(|n| n.what == gone.what))
                .and_then(Option::take);
            moved.push(Moved {
                part: gone.what.clone(),
                approved: Some(gone.pin.clone()),
                served: paired.map(|p| p.pin.clone()),
                joint: gone.joint,
            });
        }
        moved.extend(new.into_iter().flatten().map(|p| Moved {
            part: p.what.clone(),
            approved: None,
            served: Some(p.pin.clone()),
            joint: p.joint,
        }));
        moved
    }

    /// Each pinned part: what it is and its pin.
    fn parts(&self) -> Vec<Part> {
        let file = |role: &str, f: &File| Part {
            what: format!("{role} {}", f.path),
            joint: " ",
            pin: format!("sha256:{}", f.sha256),
        };
        match self {
            Self::Local {
                program,
                interpreters,
                files,
            } => std::iter::once(file("program", program))
                .chain(interpreters.iter().map(|f| file("interpreter", f)))
                .chain(files.iter().map(|f| file("file", f)))
                .collect(),
            Self::Npm { packages } => packages
                .iter()
                .map(|p| Part {
                    what: format!("npm {}", p.name),
                    joint: "@",
                    pin: format!("{} {}", p.version, p.integrity),
                })
                .collect(),
            Self::Pypi { dists } => dists
                .iter()
                .map(|d| Part {
                    what: format!("pypi {}", d.name),
                    joint: "==",
                    pin: format!("{} {}", d.version, d.hash),
                })
                .collect(),
            Self::Oci { image, digest } => vec![Part {
                what: format!("oci {image}"),
                joint: " ",
                pin: digest.clone(),
            }],
            Self::Remote { url, .. } => vec![Part {
                what: "remote".to_owned(),
                joint: " ",
                pin: url.clone(),
            }],
            Self::Unknown { reason } => vec![Part {
                what: "unknown".to_owned(),
                joint: " ",
                pin: format!("({reason})"),
            }],
        }
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
            Some("local") => &["kind", "program", "interpreters", "files"],
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
        let text =
            |name: &'static str| -> Result<String, Error> { named(f.required(name)?, &f.at(name)) };
        Ok(match kind {
            Some("local") => Self::Local {
                program: file(f.required("program")?, &f.at("program"))?,
                interpreters: list(f.optional("interpreters"), &f.at("interpreters"), file)?,
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
                digest: checked(
                    f.required("digest")?,
                    &f.at("digest"),
                    is_oci_digest,
                    "an image id: sha256: and 64 lowercase hex digits, or sha512: and 128",
                )?,
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
            Self::Local {
                program,
                interpreters,
                files,
            } => {
                put(&mut o, "program", file_value(program));
                put(
                    &mut o,
                    "interpreters",
                    Value::from(interpreters.iter().map(file_value).collect::<Vec<_>>()),
                );
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
        path: named(f.required("path")?, &f.at("path"))?,
        sha256: sha256_hex(f.required("sha256")?, &f.at("sha256"))?,
    })
}

fn npm_package(value: &Value, pointer: &str) -> Result<NpmPackage, Error> {
    let f = Fields::new(value, pointer, &["name", "version", "integrity"])?;
    Ok(NpmPackage {
        name: named(f.required("name")?, &f.at("name"))?,
        version: named(f.required("version")?, &f.at("version"))?,
        integrity: checked(
            f.required("integrity")?,
            &f.at("integrity"),
            is_integrity,
            "Subresource Integrity: sha512-, sha384-, sha256- or sha1- and base64",
        )?,
    })
}

fn pypi_dist(value: &Value, pointer: &str) -> Result<PypiDist, Error> {
    let f = Fields::new(value, pointer, &["name", "version", "hash"])?;
    Ok(PypiDist {
        name: named(f.required("name")?, &f.at("name"))?,
        version: named(f.required("version")?, &f.at("version"))?,
        hash: checked(
            f.required("hash")?,
            &f.at("hash"),
            is_dist_hash,
            "sha256: or record-sha256: and 64 lowercase hex digits",
        )?,
    })
}

fn sha256_hex(value: &Value, pointer: &str) -> Result<String, Error> {
    checked(value, pointer, is_sha256_hex, "64 lowercase hex digits")
}

/// A string that is not empty.
fn named(value: &Value, pointer: &str) -> Result<String, Error> {
    checked(
        value,
        pointer,
        |t| !t.is_empty(),
        "a string that is not empty",
    )
}

/// A string of the form `is` accepts.
fn checked(
    value: &Value,
    pointer: &str,
    is: impl Fn(&str) -> bool,
    expected: &'static str,
) -> Result<String, Error> {
    let text = string(value, pointer)?;
    if is(text) {
        Ok(text.to_owned())
    } else {
        Err(Error::Invalid {
            pointer: pointer.to_owned(),
            expected,
        })
    }
}

/// Whether `text` is 64 lowercase hex digits (a SHA-256 digest).
#[must_use]
pub fn is_sha256_hex(text: &str) -> bool {
    is_hex(text, 64)
}

fn is_hex(text: &str, len: usize) -> bool {
    text.len() == len
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Whether `text` is an npm `integrity`: one or more Subresource Integrity hashes (W3C SRI,
/// section 3.5), separated by single spaces, each `sha512-`, `sha384-`, `sha256-` or `sha1-`
/// (npm still records SHA-1 for packages published before SHA-512) and the digest in padded
/// base64 of its exact length.
#[must_use]
pub fn is_integrity(text: &str) -> bool {
    !text.is_empty()
        && text.split(' ').all(|hash| {
            let Some((algorithm, digest)) = hash.split_once('-') else {
                return false;
            };
            let bytes = match algorithm {
                "sha512" => 64,
                "sha384" => 48,
                "sha256" => 32,
                "sha1" => 20,
                _ => return false,
            };
            is_base64(digest, bytes)
        })
}

/// Whether `text` is the padded base64 (RFC 4648 section 4) of exactly `bytes` bytes.
fn is_base64(text: &str, bytes: usize) -> bool {
    let padding = (3 - bytes % 3) % 3;
    let len = bytes.div_ceil(3) * 4;
    text.len() == len
        && text.bytes().enumerate().all(|(i, b)| {
            if i >= len - padding {
                b == b'='
            } else {
                b.is_ascii_alphanumeric() || b == b'+' || b == b'/'
            }
        })
}

/// Whether `text` is an image id as an engine reports it: `sha256:` and 64 lowercase hex
/// digits, or `sha512:` and 128 (the algorithms the OCI image specification registers).
#[must_use]
pub fn is_oci_digest(text: &str) -> bool {
    match text.split_once(':') {
        Some(("sha256", hex)) => is_hex(hex, 64),
        Some(("sha512", hex)) => is_hex(hex, 128),
        _ => false,
    }
}

/// Whether `text` is the hash of a [`PypiDist`]: `sha256:` (the wheel file) or
/// `record-sha256:` (its installed `RECORD`), then 64 lowercase hex digits.
#[must_use]
pub fn is_dist_hash(text: &str) -> bool {
    text.strip_prefix("sha256:")
        .or_else(|| text.strip_prefix("record-sha256:"))
        .is_some_and(is_sha256_hex)
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
            interpreters: Vec::new(),
            files: vec![File {
                path: "server.js".into(),
                sha256: hex(script),
            }],
        }
    }

    /// The SRI form of a digest of `bytes` bytes, every base64 digit `c`.
    fn sri(bytes: usize, c: char) -> String {
        let algorithm = match bytes {
            64 => "sha512",
            20 => "sha1",
            _ => "sha256",
        };
        let digits = bytes * 4 / 3 + usize::from(!bytes.is_multiple_of(3));
        let padding = (3 - bytes % 3) % 3;
        format!(
            "{algorithm}-{}{}",
            std::iter::repeat_n(c, digits).collect::<String>(),
            "=".repeat(padding)
        )
    }

    #[test]
    fn every_kind_reads_back_as_written() {
        let all = [
            local('b'),
            Artifact::Local {
                program: File {
                    path: "./server.sh".into(),
                    sha256: hex('1'),
                },
                interpreters: vec![
                    File {
                        path: "/usr/bin/env".into(),
                        sha256: hex('2'),
                    },
                    File {
                        path: "/usr/bin/python3.12".into(),
                        sha256: hex('3'),
                    },
                ],
                files: Vec::new(),
            },
            Artifact::Npm {
                packages: vec![NpmPackage {
                    name: "@s/p".into(),
                    version: "1.0.0".into(),
                    integrity: sri(64, 'x'),
                }],
            },
            Artifact::Pypi {
                dists: vec![PypiDist {
                    name: "mcp-server".into(),
                    version: "0.1".into(),
                    hash: format!("sha256:{}", hex('d')),
                }],
            },
            Artifact::Oci {
                image: "img:1".into(),
                digest: format!("sha256:{}", hex('e')),
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
    fn pairs_each_moved_part_with_its_old_and_new_pin() {
        let npm = |versions: &[(&str, &str, char)]| Artifact::Npm {
            packages: versions
                .iter()
                .map(|(name, version, c)| NpmPackage {
                    name: (*name).into(),
                    version: (*version).into(),
                    integrity: sri(64, *c),
                })
                .collect(),
        };
        let approved = npm(&[
            ("a", "1.0.0", 'A'),
            ("b", "2.0.0", 'B'),
            ("gone", "1.0.0", 'G'),
        ]);
        let served = npm(&[
            ("a", "1.0.0", 'A'),
            ("b", "2.0.1", 'C'),
            ("new", "0.1.0", 'N'),
        ]);
        let moved = approved.moved(&served);
        assert_eq!(
            moved,
            [
                Moved {
                    part: "npm b".into(),
                    approved: Some(format!("2.0.0 {}", sri(64, 'B'))),
                    served: Some(format!("2.0.1 {}", sri(64, 'C'))),
                    joint: "@",
                },
                Moved {
                    part: "npm gone".into(),
                    approved: Some(format!("1.0.0 {}", sri(64, 'G'))),
                    served: None,
                    joint: "@",
                },
                Moved {
                    part: "npm new".into(),
                    approved: None,
                    served: Some(format!("0.1.0 {}", sri(64, 'N'))),
                    joint: "@",
                },
            ]
        );
        assert_eq!(
            moved[0].served_entry(),
            Some(format!("npm b@2.0.1 {}", sri(64, 'C')))
        );
        assert!(approved.moved(&approved).is_empty());
        assert_eq!(
            approved.entries()[1],
            format!("npm b@2.0.0 {}", sri(64, 'B'))
        );
    }

    #[test]
    fn says_when_a_guard_can_check_each_kind() {
        assert_eq!(local('b').check(), Check::BeforeStart);
        let oci = Artifact::Oci {
            image: "i".into(),
            digest: format!("sha256:{}", hex('e')),
        };
        assert_eq!(oci.check(), Check::BeforeStart);
        assert_eq!(Artifact::Npm { packages: vec![] }.check(), Check::OnceUp);
        assert_eq!(Artifact::Pypi { dists: vec![] }.check(), Check::OnceUp);
        let unknown = Artifact::Unknown { reason: "r".into() };
        assert_eq!(unknown.check(), Check::Never);
    }

    #[test]
    fn accepts_only_the_recorded_forms_of_each_digest() {
        assert!(is_integrity(&sri(64, 'A')));
        assert!(is_integrity(&sri(20, 'A')));
        assert!(is_integrity(&format!("{} {}", sri(64, 'A'), sri(20, 'B'))));
        for bad in [
            String::new(),
            "sha512-x".to_owned(),
            format!("md5-{}", &sri(64, 'A')[7..]),
            sri(64, 'A').replace("==", "A="),
            sri(64, '-'),
            format!("{}  {}", sri(64, 'A'), sri(20, 'B')),
            format!("{} ", sri(64, 'A')),
        ] {
            assert!(!is_integrity(&bad), "{bad}");
        }
        assert!(is_oci_digest(&format!("sha256:{}", hex('a'))));
        assert!(is_oci_digest(&format!("sha512:{}{}", hex('a'), hex('b'))));
        for bad in [
            "sha256:00".to_owned(),
            hex('a'),
            format!("sha256:{}", hex('A')),
        ] {
            assert!(!is_oci_digest(&bad), "{bad}");
        }
        assert!(is_dist_hash(&format!("sha256:{}", hex('a'))));
        assert!(is_dist_hash(&format!("record-sha256:{}", hex('a'))));
        for bad in [
            format!("sha256={}", hex('a')),
            format!("md5:{}", hex('a')),
            "sha256:0".into(),
        ] {
            assert!(!is_dist_hash(&bad), "{bad}");
        }
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
            (
                r#"{"kind":"npm","packages":[{"name":"p","version":"1","integrity":"sha512-x"}]}"#,
                "/a/packages/0/integrity",
            ),
            (
                r#"{"kind":"npm","packages":[{"name":"","version":"1","integrity":"sha1-AAAAAAAAAAAAAAAAAAAAAAAAAAA="}]}"#,
                "/a/packages/0/name",
            ),
            (
                r#"{"kind":"oci","image":"i","digest":"sha256:00"}"#,
                "/a/digest",
            ),
            (
                r#"{"kind":"pypi","dists":[{"name":"p","version":"1","hash":"sha256=ab"}]}"#,
                "/a/dists/0/hash",
            ),
            (r#"{"kind":"unknown","reason":""}"#, "/a/reason"),
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

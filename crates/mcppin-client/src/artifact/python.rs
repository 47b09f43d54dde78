//! `uvx`, `uv tool run` and `pipx run`: the distributions of the environment the server runs
//! in, each with the wheel hash its installer recorded.
//!
//! The environment is the one of the running server: among the processes of its group, an
//! interpreter or script whose path lies in a virtual environment (a directory holding
//! `pyvenv.cfg`) that has the launch's distribution installed (`/proc`, Linux). Each
//! `*.dist-info` of its `site-packages` gives a distribution's name and version (`METADATA`),
//! its installer (`INSTALLER`) and its wheel tags (`WHEEL`).
//!
//! uv (0.13.9 read here) installs each wheel by linking the files of an unpacked copy in its
//! cache (`<cache>/archive-v0/<id>/`), whose environment is itself such a copy, and records for
//! each downloaded wheel a cache entry (`<cache>/wheels-v8/pypi/<name>/<version>-<tags>.http`,
//! or `index/<index>/<name>/...` for another index): a MessagePack record of the copy's id, the
//! SHA-256 of the wheel file as downloaded, and the wheel's file name, then the HTTP cache
//! policy ([`archive_record`]). The entry whose copy shares the installed `METADATA` file, or
//! else the one entry of that version and tags, gives `sha256:<hash of the wheel>`.
//!
//! Where no such record exists (pip, which pipx runs, records no wheel hash; a wheel uv built
//! from a source distribution has none), the distribution is pinned by `record-sha256:`, the
//! SHA-256 of its installed files as `RECORD` lists them with their digests
//! ([`record_digest`]): what the installer wrote, not what the index served.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use mcppin_core::artifact::{Artifact, PypiDist, is_sha256_hex};
use mcppin_core::launch::Launch;
use sha2::{Digest as _, Sha256};

use super::file::{hex, read_bounded, shown};
use crate::{Error, ServerCommand};

/// The largest metadata file read (`METADATA`, `RECORD`, a cache entry).
pub const MAX_RECORD: u64 = 16 << 20;

/// The parts of uv's cache entry for a wheel this reader uses.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct ArchiveRecord {
    /// The id of the unpacked copy (`<cache>/archive-v0/<id>`).
    pub id: String,
    /// The SHA-256 digests recorded for the wheel (lowercase hex).
    pub sha256: Vec<String>,
    /// The wheel's file name (`idna-3.20-py3-none-any.whl`).
    pub filename: String,
}

/// Reads uv's cache entry for a wheel: a MessagePack array whose first three elements are the
/// copy's id, the list of the wheel's digests (each a map of one algorithm name, `Sha256`, to
/// its lowercase hex) and the wheel's file name; what follows the array (its other elements,
/// the HTTP cache policy) is not read.
///
/// # Errors
///
/// [`Error::Record`] naming the element that is not of that form.
pub fn archive_record(bytes: &[u8]) -> Result<ArchiveRecord, Error> {
    let bad = |at: &str, expected| Error::Record {
        record: "uv wheel cache entry",
        at: at.to_owned(),
        expected,
    };
    let mut reader = bytes;
    // The bound counts each array, map, string and value it enters: the digests lie 9 deep.
    let value = rmpv::decode::read_value_with_max_depth(&mut reader, 32)
        .map_err(|_| bad("byte 0", "a MessagePack array"))?;
    let items = value
        .as_array()
        .filter(|items| items.len() >= 3)
        .ok_or_else(|| bad("byte 0", "an array of at least 3 elements"))?;
    let id = items[0]
        .as_str()
        .filter(|id| {
            !id.is_empty()
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .ok_or_else(|| bad("element 0", "the id of the unpacked copy"))?;
    let mut sha256 = Vec::new();
    for digest in items[1]
        .as_array()
        .ok_or_else(|| bad("element 1", "a list of digests"))?
    {
        let map = digest
            .as_map()
            .ok_or_else(|| bad("element 1", "a digest: a map of an algorithm to hex"))?;
        for (algorithm, hex) in map {
            if algorithm.as_str() == Some("Sha256") {
                let hex = hex
                    .as_str()
                    .filter(|h| is_sha256_hex(h))
                    .ok_or_else(|| bad("element 1", "a SHA-256 as 64 lowercase hex digits"))?;
                sha256.push(hex.to_owned());
            }
        }
    }
    let filename = items[2]
        .as_str()
        .filter(|f| f.ends_with(".whl"))
        .ok_or_else(|| bad("element 2", "the wheel's file name"))?;
    Ok(ArchiveRecord {
        id: id.to_owned(),
        sha256,
        filename: filename.to_owned(),
    })
}

/// A wheel file name read (PEP 427): `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct WheelName {
    /// The distribution, normalised ([`normalize`]).
    pub name: String,
    /// The version, as written.
    pub version: String,
    /// Every tag the name stands for: the compressed tag sets expanded (`py2.py3-none-any` is
    /// `py2-none-any` and `py3-none-any`).
    pub tags: BTreeSet<String>,
}

/// Reads a wheel file name; `None` for one that is not of that form.
#[must_use]
pub fn wheel_name(filename: &str) -> Option<WheelName> {
    let stem = filename.strip_suffix(".whl")?;
    let parts: Vec<&str> = stem.split('-').collect();
    let (name, version, python, abi, platform) = match parts.as_slice() {
        [n, v, p, a, pl] | [n, v, _, p, a, pl] => (*n, *v, *p, *a, *pl),
        _ => return None,
    };
    if [name, version, python, abi, platform]
        .iter()
        .any(|p| p.is_empty())
    {
        return None;
    }
    let mut tags = BTreeSet::new();
    for p in python.split('.') {
        for a in abi.split('.') {
            for pl in platform.split('.') {
                tags.insert(format!("{p}-{a}-{pl}"));
            }
        }
    }
    Some(WheelName {
        name: normalize(name),
        version: version.to_owned(),
        tags,
    })
}

/// A distribution name normalised (PEP 503): lowercase, each run of `-`, `_` and `.` one `-`.
#[must_use]
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut run = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            run = true;
            continue;
        }
        if run && !out.is_empty() {
            out.push('-');
        }
        run = false;
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The `Name` and `Version` of a distribution's `METADATA` (core metadata: email-style headers
/// up to the first blank line), the name normalised.
///
/// # Errors
///
/// [`Error::Record`] when either is missing or empty.
pub fn metadata(bytes: &[u8]) -> Result<(String, String), Error> {
    let text = String::from_utf8_lossy(bytes);
    let header = |key: &str| {
        text.lines()
            .take_while(|line| !line.is_empty())
            .find_map(|line| {
                let (k, v) = line.split_once(':')?;
                k.eq_ignore_ascii_case(key).then(|| v.trim().to_owned())
            })
            .filter(|v| !v.is_empty())
    };
    let missing = |expected| Error::Record {
        record: "distribution METADATA",
        at: "its headers".to_owned(),
        expected,
    };
    let name = header("Name").ok_or_else(|| missing("a Name header"))?;
    let version = header("Version").ok_or_else(|| missing("a Version header"))?;
    Ok((normalize(&name), version))
}

/// The tags of a distribution's `WHEEL` file (every `Tag:` line).
#[must_use]
pub fn wheel_tags(bytes: &[u8]) -> BTreeSet<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == "Tag").then(|| v.trim().to_owned())
        })
        .filter(|tag| !tag.is_empty())
        .collect()
}

/// The SHA-256 (lowercase hex) of a distribution's installed files as its `RECORD` (a CSV of
/// path, hash, size; PEP 376 and the wheel specification) lists them: the lines `path,hash` of
/// every file it gives a hash for, sorted and joined by newlines, without the files the
/// installer writes itself or that depend on where it installed (the `.dist-info`'s
/// `INSTALLER`, `REQUESTED`, `RECORD` and `direct_url.json`, compiled `.pyc` files, and
/// anything outside `site-packages`: scripts, whose first line names the environment's
/// interpreter). Two installs of the same wheel give the same digest wherever they are.
///
/// # Errors
///
/// [`Error::Record`] for a line that is not a row of three fields, or a `RECORD` that lists no
/// file with a hash.
pub fn record_digest(bytes: &[u8]) -> Result<String, Error> {
    let bad = |line: usize, expected| Error::Record {
        record: "distribution RECORD",
        at: format!("line {line}"),
        expected,
    };
    let text = std::str::from_utf8(bytes).map_err(|_| bad(1, "UTF-8 text"))?;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let fields = csv_row(line).ok_or_else(|| bad(i + 1, "a CSV row: path,hash,size"))?;
        let [path, hash, _size] = fields.as_slice() else {
            return Err(bad(i + 1, "three fields: path,hash,size"));
        };
        let installer_file = path.split_once(".dist-info/").is_some_and(|(_, file)| {
            matches!(
                file,
                "INSTALLER" | "REQUESTED" | "RECORD" | "direct_url.json"
            )
        });
        if hash.is_empty()
            || installer_file
            || path.starts_with("../")
            || path.starts_with('/')
            || path.ends_with(".pyc")
        {
            continue;
        }
        rows.push(format!("{path},{hash}"));
    }
    if rows.is_empty() {
        return Err(bad(1, "at least one file with its hash"));
    }
    rows.sort();
    Ok(hex(&Sha256::digest(rows.join("\n").as_bytes())))
}

/// One CSV row (RFC 4180 quoting, as Python's `csv` writes it); `None` for a broken quote.
fn csv_row(line: &str) -> Option<Vec<String>> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut start = true;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (false, '"') if start => quoted = true,
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => {
                quoted = false;
                if !matches!(chars.peek(), None | Some(',')) {
                    return None;
                }
            }
            (false, ',') => {
                fields.push(std::mem::take(&mut field));
                start = true;
                continue;
            }
            (_, c) => field.push(c),
        }
        start = false;
    }
    if quoted {
        return None;
    }
    fields.push(field);
    Some(fields)
}

/// The distributions of the environment the server started from `command` runs in (`server`:
/// its process id, the leader of its group).
#[must_use]
pub fn installed(command: &ServerCommand, server: u32) -> Artifact {
    match read(command, server) {
        Ok(artifact) => artifact,
        Err(reason) => Artifact::Unknown { reason },
    }
}

fn read(command: &ServerCommand, server: u32) -> Result<Artifact, String> {
    let launch = Launch::Stdio {
        command: command.program().to_string_lossy().into_owned(),
        args: command
            .arguments()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        env: Default::default(),
        env_file: None,
        cwd: None,
        guard: None,
    };
    let wanted = launch
        .package()
        .map(|p| normalize(&p.name))
        .ok_or("the launch names no distribution")?;
    let envs: Vec<PathBuf> = environments(server)?
        .into_iter()
        .filter(|env| site_packages(env).is_some_and(|site| has_dist(&site, &wanted)))
        .collect();
    let env = match envs.as_slice() {
        [env] => env,
        [] => {
            return Err(format!(
                "no process of the server runs from an environment holding {wanted:?}"
            ));
        }
        _ => {
            return Err(format!(
                "the server's processes run from {} environments holding {wanted:?}",
                envs.len()
            ));
        }
    };
    let site = site_packages(env).ok_or("the environment has no site-packages")?;
    let cache = uv_cache(env);
    let mut dists = Vec::new();
    for info in dist_infos(&site) {
        dists.push(dist(&info, cache.as_deref())?);
    }
    if dists.is_empty() {
        return Err(format!(
            "the environment {} holds no distribution",
            shown(env)
        ));
    }
    dists.sort();
    Ok(Artifact::Pypi { dists })
}

/// The virtual environments the processes of group `group` run from: for each process, the
/// environment (a directory holding `pyvenv.cfg`) above each of the first words of its command
/// line that is an absolute path (the interpreter, the script it runs).
fn environments(group: u32) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir("/proc")
        .map_err(|e| format!("cannot list the server's processes (/proc, Linux): {e}"))?;
    let mut found = BTreeSet::new();
    for entry in entries.flatten() {
        if !entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        {
            continue;
        }
        let in_group = read_bounded(&entry.path().join("stat"), 1 << 16)
            .ok()
            .and_then(|stat| process_group(&stat))
            == Some(group);
        if !in_group {
            continue;
        }
        let Ok(cmdline) = read_bounded(&entry.path().join("cmdline"), 1 << 20) else {
            continue;
        };
        for word in cmdline.split(|&b| b == 0).take(3) {
            let path =
                Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(word));
            if path.is_absolute()
                && let Some(env) = path
                    .ancestors()
                    .skip(1)
                    .take(6)
                    .find(|dir| dir.join("pyvenv.cfg").is_file())
            {
                found.insert(std::fs::canonicalize(env).unwrap_or_else(|_| env.to_path_buf()));
            }
        }
    }
    Ok(found.into_iter().collect())
}

/// The process group of a process, from its `/proc/<pid>/stat` (`pid (comm) state ppid pgrp
/// ...`; `comm` may hold anything, so the fields are counted from its last `)`).
#[must_use]
pub fn process_group(stat: &[u8]) -> Option<u32> {
    let end = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&stat[end + 1..]).ok()?;
    rest.split_ascii_whitespace().nth(2)?.parse().ok()
}

/// `<env>/lib/python*/site-packages`.
fn site_packages(env: &Path) -> Option<PathBuf> {
    std::fs::read_dir(env.join("lib"))
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
        .map(|e| e.path().join("site-packages"))
        .find(|site| site.is_dir())
}

/// The `*.dist-info` directories of `site`, sorted.
fn dist_infos(site: &Path) -> Vec<PathBuf> {
    let mut infos: Vec<PathBuf> = std::fs::read_dir(site)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "dist-info") && p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    infos.sort();
    infos
}

fn has_dist(site: &Path, wanted: &str) -> bool {
    dist_infos(site).iter().any(|info| {
        read_bounded(&info.join("METADATA"), MAX_RECORD)
            .ok()
            .and_then(|bytes| metadata(&bytes).ok())
            .is_some_and(|(name, _)| name == wanted)
    })
}

/// The uv cache an environment of uv's lives in: `<cache>/archive-v0/<id>`.
fn uv_cache(env: &Path) -> Option<PathBuf> {
    let parent = env.parent()?;
    parent
        .file_name()?
        .to_str()?
        .starts_with("archive-v")
        .then(|| parent.parent().map(Path::to_path_buf))
        .flatten()
}

/// One installed distribution, with the wheel hash uv recorded for it, or its `RECORD` digest.
fn dist(info: &Path, cache: Option<&Path>) -> Result<PypiDist, String> {
    let file = |name: &str| {
        let path = info.join(name);
        read_bounded(&path, MAX_RECORD).map_err(|e| format!("cannot read {}: {e}", shown(&path)))
    };
    let (name, version) =
        metadata(&file("METADATA")?).map_err(|e| format!("{}: {e}", shown(info)))?;
    let installer = file("INSTALLER").unwrap_or_default();
    let by_uv = String::from_utf8_lossy(&installer).trim() == "uv";
    if by_uv
        && let Some(cache) = cache
        && let Some(hash) = wheel_hash(cache, info, &name, &version, &wheel_tags(&file("WHEEL")?))
    {
        return Ok(PypiDist {
            name,
            version,
            hash: format!("sha256:{hash}"),
        });
    }
    let record = record_digest(&file("RECORD")?).map_err(|e| format!("{}: {e}", shown(info)))?;
    Ok(PypiDist {
        name,
        version,
        hash: format!("record-sha256:{record}"),
    })
}

/// The SHA-256 of the wheel uv installed `info` from, by its cache entries for that name,
/// version and tags: the one whose unpacked copy shares the installed `METADATA`, or else the
/// one hash all of them record.
fn wheel_hash(
    cache: &Path,
    info: &Path,
    name: &str,
    version: &str,
    tags: &BTreeSet<String>,
) -> Option<String> {
    let installed = std::fs::metadata(info.join("METADATA")).ok()?;
    let info_name = info.file_name()?;
    let mut candidates = Vec::new();
    for wheels in subdirs(cache).filter(|d| {
        d.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("wheels-v"))
    }) {
        let mut dirs = vec![wheels.join("pypi").join(name)];
        dirs.extend(subdirs(&wheels.join("index")).map(|index| index.join(name)));
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let file_name = entry.file_name();
                let file_name = file_name.to_string_lossy();
                if !(file_name.ends_with(".http") && file_name.starts_with(&format!("{version}-")))
                {
                    continue;
                }
                let Some(record) = read_bounded(&path, MAX_RECORD)
                    .ok()
                    .and_then(|bytes| archive_record(&bytes).ok())
                else {
                    continue;
                };
                let matches = wheel_name(&record.filename)
                    .is_some_and(|w| w.name == name && w.version == version && &w.tags == tags);
                if matches && record.sha256.len() == 1 {
                    let linked = subdirs(cache)
                        .filter(|d| {
                            d.file_name()
                                .is_some_and(|n| n.to_string_lossy().starts_with("archive-v"))
                        })
                        .any(|archives| {
                            std::fs::metadata(
                                archives.join(&record.id).join(info_name).join("METADATA"),
                            )
                            .is_ok_and(|m| m.dev() == installed.dev() && m.ino() == installed.ino())
                        });
                    candidates.push((linked, record.sha256[0].clone()));
                }
            }
        }
    }
    let linked: BTreeSet<&String> = candidates
        .iter()
        .filter(|(l, _)| *l)
        .map(|(_, h)| h)
        .collect();
    let all: BTreeSet<&String> = candidates.iter().map(|(_, h)| h).collect();
    match (linked.len(), all.len()) {
        (1, _) | (0, 1) => linked.into_iter().chain(all).next().cloned(),
        _ => None,
    }
}

fn subdirs(dir: &Path) -> impl Iterator<Item = PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn testdata(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/artifact/uv")
            .join(name)
    }

    fn bytes(name: &str) -> Vec<u8> {
        let path = testdata(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn reads_the_wheel_hash_of_uvs_cache_entries() {
        let idna = archive_record(&bytes("idna-3.20-py3-none-any.http")).unwrap();
        assert_eq!(idna.id, "es7ggdg7LHoa742b");
        assert_eq!(idna.filename, "idna-3.20-py3-none-any.whl");
        // The SHA-256 of idna-3.20-py3-none-any.whl as PyPI serves it.
        assert_eq!(
            idna.sha256,
            ["ab7ae7122974553370f0bdb919e1a960b2cd1bc1ef0276416d896db81c14582c"]
        );
        let cffi = archive_record(&bytes(
            "cffi-2.1.1-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.http",
        ))
        .unwrap();
        let name = wheel_name(&cffi.filename).unwrap();
        assert_eq!(name.tags, wheel_tags(&bytes("cffi-2.1.1.WHEEL")));
        assert_eq!(name.tags.len(), 2);
    }

    #[test]
    fn refuses_a_cache_entry_of_another_form() {
        for bad in [
            &b""[..],
            b"\x91\xa1x",
            b"\x93\xa1x\x90\xa5x.tar",
            b"\x93\xa1!\x90\xa5x.whl",
        ] {
            assert!(
                matches!(archive_record(bad), Err(Error::Record { .. })),
                "{bad:?}"
            );
        }
        // A deeply nested value is refused, not followed.
        let deep = [&[0x91u8; 10_000][..], b"\xc0"].concat();
        assert!(archive_record(&deep).is_err());
    }

    #[test]
    fn reads_a_distributions_metadata_and_record() {
        let info = |f: &str| bytes(&format!("idna-3.20.dist-info/{f}"));
        assert_eq!(
            metadata(&info("METADATA")).unwrap(),
            ("idna".into(), "3.20".into())
        );
        assert_eq!(
            wheel_tags(&info("WHEEL")),
            BTreeSet::from(["py3-none-any".to_owned()])
        );
        let digest = record_digest(&info("RECORD")).unwrap();
        // The script (../../../bin/idna) and the installer's own files do not count: another
        // install of the same wheel, elsewhere and by another installer, has the same digest.
        let other = String::from_utf8(info("RECORD"))
            .unwrap()
            .lines()
            .filter(|l| {
                !l.starts_with("../") && !l.contains("/INSTALLER,") && !l.contains("/REQUESTED,")
            })
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            + "idna-3.20.dist-info/INSTALLER,sha256=AAAA,3\n../../bin/idna,sha256=BBBB,9\n\
               idna/__pycache__/core.cpython-311.pyc,,\n";
        assert_eq!(record_digest(other.as_bytes()).unwrap(), digest);
        // A file of the wheel that changed does.
        let edited = String::from_utf8(info("RECORD"))
            .unwrap()
            .replace("idna/core.py,sha256=", "idna/core.py,sha256=X");
        assert_ne!(record_digest(edited.as_bytes()).unwrap(), digest);
        assert!(record_digest(b"\"unterminated,x,1\n").is_err());
        assert!(record_digest(b"a,b\n").is_err());
        assert!(record_digest(b"x.dist-info/RECORD,,\n").is_err());
    }

    #[test]
    fn finds_the_environment_of_the_running_server_and_the_hash_of_each_wheel() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let copy = cache.join("archive-v0/es7ggdg7LHoa742b/idna-3.20.dist-info");
        let env = cache.join("archive-v0/Ev8n");
        let site = env.join("lib/python3.11/site-packages");
        let idna = site.join("idna-3.20.dist-info");
        let other = site.join("other-1.0.dist-info");
        for d in [
            &copy,
            &idna,
            &other,
            &env.join("bin"),
            &cache.join("wheels-v8/pypi/idna"),
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(env.join("pyvenv.cfg"), "uv = 0.13.9\n").unwrap();
        std::os::unix::fs::symlink("/bin/sh", env.join("bin/python")).unwrap();
        // uv links the installed files to its unpacked copy; RECORD it writes anew.
        std::fs::write(copy.join("METADATA"), bytes("idna-3.20.dist-info/METADATA")).unwrap();
        std::fs::hard_link(copy.join("METADATA"), idna.join("METADATA")).unwrap();
        for f in ["WHEEL", "RECORD", "INSTALLER"] {
            std::fs::write(idna.join(f), bytes(&format!("idna-3.20.dist-info/{f}"))).unwrap();
        }
        std::fs::write(
            cache.join("wheels-v8/pypi/idna/3.20-py3-none-any.http"),
            bytes("idna-3.20-py3-none-any.http"),
        )
        .unwrap();
        // Installed by pip: no wheel hash recorded.
        std::fs::write(other.join("METADATA"), "Name: Other\nVersion: 1.0\n\nbody").unwrap();
        std::fs::write(other.join("INSTALLER"), "pip\n").unwrap();
        std::fs::write(other.join("RECORD"), "other/__init__.py,sha256=AAAA,1\n").unwrap();

        // The server writes a line once it runs, and waits for its input to close. It is read
        // once up, as the guard and `mcppin export` read it: right after the start returns, the
        // new process may still be inside `exec`, its command line not yet the server's.
        let mut server = ServerCommand::new(env.join("bin/python"))
            .args(["-c", "echo up; read line"])
            .stderr(crate::StderrMode::Discard)
            .spawn()
            .unwrap();
        let mut up = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(server.take_stdout().unwrap()),
            &mut up,
        )
        .unwrap();
        assert_eq!(up, "up\n");
        let uvx = ServerCommand::new("uvx").args(["--from", "idna==3.20", "idna"]);
        let found = installed(&uvx, server.id());
        let missing = installed(&ServerCommand::new("uvx").arg("absent"), server.id());
        let _ = server.shutdown();
        assert_eq!(
            found,
            Artifact::Pypi {
                dists: vec![
                    PypiDist {
                        name: "idna".into(),
                        version: "3.20".into(),
                        hash: "sha256:ab7ae7122974553370f0bdb919e1a960b2cd1bc1ef0276416d896db81c14582c"
                            .into(),
                    },
                    PypiDist {
                        name: "other".into(),
                        version: "1.0".into(),
                        hash: format!(
                            "record-sha256:{}",
                            record_digest(b"other/__init__.py,sha256=AAAA,1\n").unwrap()
                        ),
                    },
                ]
            }
        );
        let Artifact::Unknown { reason } = missing else {
            panic!("{missing:?}")
        };
        assert!(reason.contains("\"absent\""), "{reason}");
    }

    #[test]
    fn reads_the_process_group_of_a_process() {
        assert_eq!(process_group(b"42 (node) S 1 42 42 0 -1"), Some(42));
        assert_eq!(process_group(b"7 (a) b) c) R 6 9 7 0"), Some(9));
        assert_eq!(process_group(b"7 (x"), None);
        assert_eq!(process_group(b"7 (x) R 6"), None);
    }

    #[test]
    fn normalises_names_and_reads_wheel_names() {
        assert_eq!(normalize("Mcp_Server.Time"), "mcp-server-time");
        assert_eq!(normalize("a--b"), "a-b");
        let w = wheel_name("mcp_server_time-2026.10.19-py3-none-any.whl").unwrap();
        assert_eq!(
            (w.name.as_str(), w.version.as_str()),
            ("mcp-server-time", "2026.10.19")
        );
        let w = wheel_name("six-1.17.0-1-py2.py3-none-any.whl").unwrap();
        assert_eq!(w.tags.len(), 2);
        assert_eq!(wheel_name("x-1.tar.gz"), None);
        assert_eq!(wheel_name("x-1-py3.whl"), None);
    }
}

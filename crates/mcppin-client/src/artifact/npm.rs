//! `npx` and `npm exec`: the packages npm installed for the launch, from the lockfile it wrote
//! in its cache.
//!
//! npm's `exec` (libnpmexec) installs the packages a launch names that the project does not
//! have into `<cache>/_npx/<hash>/`, where `<hash>` is the first 16 hex digits of the SHA-512
//! of the package specs as given, sorted and joined by newlines; it records the specs in that
//! directory's `package.json` (`_npx.packages`) and the installed tree, with each package's
//! `integrity`, in its `package-lock.json`. The cache is `--cache`, `npm_config_cache`, the
//! `cache` of the project's or the user's `.npmrc`, or `~/.npm`. Nothing is fetched: what is
//! recorded is what npm installed.
//!
//! A launch whose packages the project's `node_modules` or a global install provides is not run
//! from the cache, and is [`Artifact::Unknown`], as is a spec of a directory, file or git
//! repository (npm records no `integrity` for them).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcppin_core::artifact::{Artifact, NpmPackage, is_integrity};
use mcppin_core::{Value, parse};
use sha2::{Digest as _, Sha512};

use super::file::{hex, read_bounded, shown};
use crate::{Error, ServerCommand};

/// The largest npm lockfile or `package.json` read.
pub const MAX_RECORD: u64 = 64 << 20;

/// What a launch asks `npm exec` for, read from its words as npm reads them.
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct Request {
    /// The package specs, as given (`pkg@1.2.3`, `@scope/pkg`): every `--package`, or else the
    /// command's own.
    pub packages: Vec<String>,
    /// Whether the command names the package (no `--package`): npm then looks for it in the
    /// project and the global install before the cache.
    pub by_command: bool,
    /// `--cache`, when given.
    pub cache: Option<String>,
    /// `--userconfig`, when given.
    pub userconfig: Option<String>,
}

/// npm's options that take no value (its boolean settings and the switches `npx` adds):
/// every other option takes the next word as its value unless that word starts with `-`.
const SWITCHES: &[&str] = &[
    "all",
    "audit",
    "bin-links",
    "color",
    "dry-run",
    "force",
    "foreground-scripts",
    "fund",
    "global",
    "ignore-scripts",
    "include-workspace-root",
    "install-links",
    "json",
    "legacy-peer-deps",
    "link",
    "long",
    "offline",
    "package-lock",
    "package-lock-only",
    "parseable",
    "prefer-dedupe",
    "prefer-offline",
    "prefer-online",
    "progress",
    "strict-ssl",
    "strict-peer-deps",
    "timing",
    "unicode",
    "update-notifier",
    "usage",
    "version",
    "workspaces",
    "yes",
    "no-install",
    "quiet",
    "q",
    "version",
    "v",
    "help",
    "h",
];

/// npm's short options and what they stand for (`-y` is `--yes`).
const SHORTHANDS: &[(&str, &[&str])] = &[
    ("y", &["--yes"]),
    ("n", &["--no-yes"]),
    ("no", &["--no-yes"]),
    ("q", &["--loglevel", "warn"]),
    ("quiet", &["--loglevel", "warn"]),
    ("s", &["--loglevel", "silent"]),
    ("silent", &["--loglevel", "silent"]),
    ("d", &["--loglevel", "info"]),
    ("dd", &["--loglevel", "verbose"]),
    ("ddd", &["--loglevel", "silly"]),
    ("verbose", &["--loglevel", "verbose"]),
    ("reg", &["--registry"]),
    ("c", &["--call"]),
    ("f", &["--force"]),
    ("g", &["--global"]),
    ("C", &["--prefix"]),
    ("w", &["--workspace"]),
    ("ws", &["--workspaces"]),
];

/// Options that always take a value.
const WITH_VALUE: &[&str] = &["package", "p", "cache", "userconfig", "call", "c", "shell"];

/// Reads the words after `npx` (or after `npm exec`) as `npx` hands them to `npm exec`: options
/// up to the first word that is not one (or `--`), then the command and its arguments.
///
/// # Errors
///
/// [`Error::Record`] for a launch that runs no package from the cache: `--call` (a shell
/// command), or no package and no command.
pub fn request<S: AsRef<str>>(words: &[S]) -> Result<Request, Error> {
    let refused = |expected| Error::Record {
        record: "npm exec command line",
        at: "its arguments".to_owned(),
        expected,
    };
    let mut words: Vec<String> = words.iter().map(|w| w.as_ref().to_owned()).collect();
    let mut request = Request::default();
    let mut command = None;
    let mut i = 0;
    while i < words.len() {
        let word = words[i].clone();
        if word == "--" {
            command = words.get(i + 1).cloned();
            break;
        }
        let Some(option) = word.strip_prefix('-') else {
            command = Some(word);
            break;
        };
        let option = option.trim_start_matches('-');
        let (key, inline) = match option.split_once('=') {
            Some((key, value)) => (key.to_owned(), Some(value.to_owned())),
            None => (option.to_owned(), None),
        };
        if let Some((_, expansion)) = SHORTHANDS.iter().find(|(short, _)| *short == key) {
            let mut replaced: Vec<String> = expansion.iter().map(|s| (*s).to_owned()).collect();
            if let Some(value) = inline {
                replaced.push(value);
            }
            words.splice(i..=i, replaced);
            continue;
        }
        let takes_value = inline.is_none()
            && !SWITCHES.contains(&key.as_str())
            && (WITH_VALUE.contains(&key.as_str())
                || words.get(i + 1).is_some_and(|next| !next.starts_with('-')));
        let value = if takes_value {
            i += 1;
            words.get(i).cloned()
        } else {
            inline
        };
        match key.as_str() {
            "package" | "p" => request.packages.extend(value),
            "cache" => request.cache = value,
            "userconfig" => request.userconfig = value,
            "call" | "c" => return Err(refused("no --call: a shell command installs nothing")),
            _ => {}
        }
        i += 1;
    }
    if request.packages.is_empty() {
        request.packages.extend(command);
        request.by_command = true;
    }
    if request.packages.is_empty() {
        return Err(refused("a package or a command"));
    }
    Ok(request)
}

/// The name of the directory under `<cache>/_npx` that npm installs `packages` into: the first
/// 16 hex digits of the SHA-512 of the specs, sorted as npm sorts them (`localeCompare` with
/// the English collation) and joined by newlines.
#[must_use]
pub fn install_dir(packages: &[String]) -> String {
    let mut sorted: Vec<&String> = packages.iter().collect();
    sorted.sort_by(|a, b| collation(a).cmp(&collation(b)).then_with(|| a.cmp(b)));
    let joined = sorted
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let digest = Sha512::digest(joined.as_bytes());
    hex(&digest[..8])
}

/// A sort key that orders package specs as the English collation of `localeCompare` does at
/// its first level: punctuation before digits before letters, letters without case. Specs are
/// written in lowercase in practice; where this order and the collation disagree the directory
/// is found by its recorded specs instead ([`installed`]).
fn collation(text: &str) -> Vec<(u8, char)> {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphabetic() {
                (2, c.to_ascii_lowercase())
            } else if c.is_ascii_digit() {
                (1, c)
            } else {
                (0, c)
            }
        })
        .collect()
}

/// The package specs npm recorded for an install directory: `_npx.packages` of its
/// `package.json`.
///
/// # Errors
///
/// [`Error::Record`] when the file is not JSON or has no list of strings there.
pub fn recorded_packages(package_json: &[u8]) -> Result<Vec<String>, Error> {
    let record = "npm install directory package.json";
    let value = json(record, package_json)?;
    let bad = || Error::Record {
        record,
        at: "/_npx/packages".to_owned(),
        expected: "a list of package specs",
    };
    value
        .pointer("/_npx/packages")
        .and_then(Value::as_array)
        .ok_or_else(bad)?
        .iter()
        .map(|v| v.as_str().map(str::to_owned).ok_or_else(bad))
        .collect()
}

/// Every package an npm lockfile (`lockfileVersion` 2 or 3) records as installed, with its
/// `integrity`, sorted by name then version: the entries of `packages` but the root, under the
/// name in the entry (an alias) or its path's last `node_modules/` part. Bundled packages
/// (`inBundle`) come inside their parent's tarball and its integrity; links are the project's
/// own files and are refused, with anything else that has no integrity.
///
/// # Errors
///
/// [`Error::Record`] naming the JSON pointer of what is not of the form read.
pub fn lock_packages(lock: &[u8]) -> Result<Vec<NpmPackage>, Error> {
    let record = "npm lockfile";
    let value = json(record, lock)?;
    let at = |pointer: String, expected| Error::Record {
        record,
        at: pointer,
        expected,
    };
    match value.get("lockfileVersion").and_then(Value::as_number) {
        Some(n) if matches!(n.literal(), "2" | "3") => {}
        _ => {
            return Err(at(
                "/lockfileVersion".to_owned(),
                "lockfileVersion 2 or 3 (npm 7 and later)",
            ));
        }
    }
    let entries = value
        .get("packages")
        .and_then(Value::as_object)
        .ok_or_else(|| at("/packages".to_owned(), "an object of installed packages"))?;
    let mut packages = Vec::new();
    for (path, entry) in entries.iter() {
        if path.is_empty() {
            continue;
        }
        let pointer = format!(
            "/packages/{}",
            mcppin_core::value::escape_pointer_token(path)
        );
        let entry = entry
            .as_object()
            .ok_or_else(|| at(pointer.clone(), "an object"))?;
        let flag = |name: &str| entry.get(name).and_then(Value::as_bool) == Some(true);
        if flag("inBundle") {
            continue;
        }
        if flag("link") {
            return Err(at(
                pointer,
                "a package from the registry (a link to local files has no integrity)",
            ));
        }
        let name = match entry.get("name").and_then(Value::as_str) {
            Some(name) => name,
            None => path
                .rsplit_once("node_modules/")
                .map(|(_, name)| name)
                .filter(|name| !name.is_empty())
                .ok_or_else(|| at(pointer.clone(), "a path under node_modules/"))?,
        };
        let text = |member: &str, expected| {
            entry
                .get(member)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| at(format!("{pointer}/{member}"), expected))
        };
        let version = text("version", "the installed version")?;
        let integrity = text(
            "integrity",
            "the registry's integrity (a git or file dependency records none)",
        )?;
        if !is_integrity(&integrity) || version.is_empty() {
            return Err(at(
                format!("{pointer}/integrity"),
                "Subresource Integrity (sha512-...)",
            ));
        }
        packages.push(NpmPackage {
            name: name.to_owned(),
            version,
            integrity,
        });
    }
    packages.sort();
    packages.dedup();
    Ok(packages)
}

fn json(record: &'static str, bytes: &[u8]) -> Result<Value, Error> {
    parse(bytes).map_err(|e| Error::Record {
        record,
        at: match e.position() {
            Some(p) => format!("line {} column {}", p.line, p.column),
            None => "its end".to_owned(),
        },
        expected: "a JSON document",
    })
}

/// What npm installed for `command` (`npx ...` or `npm exec ...`), read after it started the
/// server.
#[must_use]
pub fn installed(command: &ServerCommand) -> Artifact {
    match read(command) {
        Ok(artifact) => artifact,
        Err(reason) => Artifact::Unknown { reason },
    }
}

fn read(command: &ServerCommand) -> Result<Artifact, String> {
    let words: Vec<String> = command
        .arguments()
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let program = command.program().to_string_lossy();
    let words = if program.rsplit('/').next() == Some("npm") {
        &words[1.min(words.len())..]
    } else {
        &words[..]
    };
    let request = request(words).map_err(|e| e.to_string())?;
    for spec in &request.packages {
        if spec.starts_with(['.', '/', '~']) || spec.contains(':') {
            return Err(format!(
                "{spec:?} is not a registry package (a directory, file, git or URL spec has no \
                 integrity)"
            ));
        }
    }
    let env = Env::of(command);
    let prefix = local_prefix(command.working_dir());
    if let Some(found) = in_project(&prefix, &request) {
        return Err(format!(
            "npx runs {} from the project's node_modules, not from its cache",
            shown(&found)
        ));
    }
    let cache = cache_dir(&request, &env, &prefix)?;
    let npx = cache.join("_npx");
    let dir = find_install(&npx, &request.packages)?;
    let lock = dir.join("package-lock.json");
    let bytes = read_bounded(&lock, MAX_RECORD)
        .map_err(|e| format!("cannot read npm's lockfile {}: {e}", shown(&lock)))?;
    let packages =
        lock_packages(&bytes).map_err(|e| format!("npm's lockfile {}: {e}", shown(&lock)))?;
    if packages.is_empty() {
        return Err(format!("npm's lockfile {} lists no package", shown(&lock)));
    }
    Ok(Artifact::Npm { packages })
}

/// The install directory of `packages` under `npx` (the `_npx` folder of the cache): the one
/// its name says, checked against the specs it records, or else the one recording them.
fn find_install(npx: &Path, packages: &[String]) -> Result<PathBuf, String> {
    let records = |dir: &Path| {
        read_bounded(&dir.join("package.json"), MAX_RECORD)
            .ok()
            .and_then(|bytes| recorded_packages(&bytes).ok())
            .is_some_and(|recorded| recorded == packages)
    };
    let named = npx.join(install_dir(packages));
    if records(&named) {
        return Ok(named);
    }
    let found: Vec<PathBuf> = std::fs::read_dir(npx)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|dir| records(dir))
                .collect()
        })
        .unwrap_or_default();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!(
            "npm's cache {} holds no install of {packages:?} (installed from another cache, \
             the project or a global install)",
            shown(npx)
        )),
        _ => Err(format!(
            "npm's cache {} holds {} installs of {packages:?}",
            shown(npx),
            found.len()
        )),
    }
}

/// The variables npm reads its settings from (`npm_config_*`, any case) and `HOME`, from the
/// server's environment.
struct Env {
    config: BTreeMap<String, String>,
    home: Option<PathBuf>,
}

impl Env {
    fn of(command: &ServerCommand) -> Self {
        let mut config = BTreeMap::new();
        let mut home = None;
        for (name, value) in command.environment() {
            let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
                continue;
            };
            if name == "HOME" {
                home = Some(PathBuf::from(value));
            }
            let lower = name.to_ascii_lowercase();
            if let Some(key) = lower.strip_prefix("npm_config_") {
                config.insert(key.replace('_', "-"), value.to_owned());
            }
        }
        Self { config, home }
    }
}

/// Where npm's cache is: `--cache`, `npm_config_cache`, the `cache` of the project's `.npmrc`,
/// then of the user's (`--userconfig`, `npm_config_userconfig`, `~/.npmrc`), then `~/.npm`.
fn cache_dir(request: &Request, env: &Env, prefix: &Path) -> Result<PathBuf, String> {
    if let Some(cache) = request.cache.as_ref().or(env.config.get("cache")) {
        return Ok(expand_home(cache, env.home.as_deref()));
    }
    let userconfig = request
        .userconfig
        .as_ref()
        .or(env.config.get("userconfig"))
        .map(|p| expand_home(p, env.home.as_deref()))
        .or_else(|| env.home.as_ref().map(|h| h.join(".npmrc")));
    for npmrc in std::iter::once(prefix.join(".npmrc")).chain(userconfig) {
        if let Ok(bytes) = read_bounded(&npmrc, 1 << 20)
            && let Some(cache) = npmrc_cache(&String::from_utf8_lossy(&bytes))
        {
            return Ok(expand_home(&cache, env.home.as_deref()));
        }
    }
    env.home
        .as_ref()
        .map(|home| home.join(".npm"))
        .ok_or_else(|| "the server's environment has no HOME, so npm's cache is unknown".to_owned())
}

/// The `cache` setting of an `.npmrc` (ini: `cache = DIR`, `;` and `#` comments), when set.
#[must_use]
pub fn npmrc_cache(text: &str) -> Option<String> {
    text.lines().rev().find_map(|line| {
        let line = line.trim();
        let (key, value) = line.split_once('=')?;
        (key.trim() == "cache").then(|| value.trim().trim_matches('"').to_owned())
    })
}

fn expand_home(path: &str, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

/// The project npm runs in: the nearest directory up from the working directory holding a
/// `package.json` or `node_modules`, else the working directory.
fn local_prefix(cwd: Option<&Path>) -> PathBuf {
    let start = cwd.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let start = std::path::absolute(&start).unwrap_or(start);
    start
        .ancestors()
        .find(|dir| dir.join("package.json").exists() || dir.join("node_modules").exists())
        .map_or(start.clone(), Path::to_path_buf)
}

/// A package of `request` the project's `node_modules` holds at a version the spec does not
/// rule out: npm runs that copy, not one from its cache.
fn in_project(prefix: &Path, request: &Request) -> Option<PathBuf> {
    request.packages.iter().find_map(|spec| {
        let (name, version) = split_spec(spec);
        let manifest = prefix.join("node_modules").join(name).join("package.json");
        let bytes = read_bounded(&manifest, MAX_RECORD).ok()?;
        let installed = parse(&bytes)
            .ok()?
            .get("version")
            .and_then(Value::as_str)
            .map(str::to_owned)?;
        let excluded = version.is_some_and(|v| is_exact(v) && v != installed);
        (!excluded).then_some(manifest)
    })
}

/// `name@version` as name and version (`@scope/name@1` too).
fn split_spec(spec: &str) -> (&str, Option<&str>) {
    match spec.get(1..).and_then(|rest| rest.rfind('@')) {
        Some(at) => (&spec[..=at], Some(&spec[at + 2..])),
        None => (spec, None),
    }
}

fn is_exact(version: &str) -> bool {
    version.split(['-', '+']).next().is_some_and(|core| {
        core.split('.').count() == 3 && core.split('.').all(|p| p.parse::<u64>().is_ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn testdata(name: &str) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/artifact/npm")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn reads_the_package_specs_as_npx_hands_them_to_npm_exec() {
        let packages = |words: &[&str]| request(words).unwrap().packages;
        assert_eq!(
            packages(&["-y", "@scope/pkg@1.2.3", "--port", "1"]),
            ["@scope/pkg@1.2.3"]
        );
        assert_eq!(packages(&["--yes", "pkg"]), ["pkg"]);
        assert_eq!(
            packages(&["-p", "a@1", "--package=b@2", "cmd"]),
            ["a@1", "b@2"]
        );
        assert_eq!(packages(&["--registry", "http://r/", "pkg@1"]), ["pkg@1"]);
        assert_eq!(packages(&["-q", "pkg@1"]), ["pkg@1"]);
        assert_eq!(packages(&["--", "pkg@1", "-y"]), ["pkg@1"]);
        assert!(request(&["-y", "pkg"]).unwrap().by_command);
        assert!(!request(&["-p", "pkg", "cmd"]).unwrap().by_command);
        let with_cache = request(&["--cache", "/c", "-y", "pkg"]).unwrap();
        assert_eq!(with_cache.cache.as_deref(), Some("/c"));
        assert!(request(&["-c", "echo hi"]).is_err());
        assert!(request(&["-y"]).is_err());
    }

    #[test]
    fn names_the_install_directory_as_npm_does() {
        // The directory npm 11 made for this spec (testdata/artifact/npm/README.md).
        assert_eq!(
            install_dir(&["@modelcontextprotocol/server-memory@2026.8.31".to_owned()]),
            "c98ccc168155bafa"
        );
    }

    #[test]
    fn reads_every_installed_package_of_an_npx_lockfile() {
        let packages = lock_packages(&testdata("server-memory-package-lock.json")).unwrap();
        // 99 entries, three of them a package installed twice at the same version.
        assert_eq!(packages.len(), 96);
        let memory = packages
            .iter()
            .find(|p| p.name == "@modelcontextprotocol/server-memory")
            .unwrap();
        assert_eq!(memory.version, "2026.8.31");
        assert!(memory.integrity.starts_with("sha512-"));
        let mut sorted = packages.clone();
        sorted.sort();
        assert_eq!(packages, sorted);
        assert_eq!(
            recorded_packages(&testdata("server-memory-package.json")).unwrap(),
            ["@modelcontextprotocol/server-memory@2026.8.31"]
        );
    }

    #[test]
    fn refuses_a_lockfile_that_does_not_pin_each_package() {
        let refused = |text: &str| match lock_packages(text.as_bytes()) {
            Err(Error::Record { at, .. }) => at,
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(
            refused(r#"{"lockfileVersion":1,"dependencies":{}}"#),
            "/lockfileVersion"
        );
        assert_eq!(refused(r#"{"lockfileVersion":3}"#), "/packages");
        assert_eq!(
            refused(r#"{"lockfileVersion":3,"packages":{"node_modules/a":{"version":"1"}}}"#),
            "/packages/node_modules~1a/integrity"
        );
        assert_eq!(
            refused(
                r#"{"lockfileVersion":3,"packages":{"node_modules/a":{"version":"1","integrity":"sha512-x"}}}"#
            ),
            "/packages/node_modules~1a/integrity"
        );
        assert_eq!(
            refused(r#"{"lockfileVersion":3,"packages":{"node_modules/a":{"link":true}}}"#),
            "/packages/node_modules~1a"
        );
        assert_eq!(refused("{"), "line 1 column 2");
        // A bundled package rides in its parent's tarball.
        let bundled = format!(
            r#"{{"lockfileVersion":3,"packages":{{"":{{}},"node_modules/a":{{"version":"1.0.0","integrity":"sha1-{}="}},"node_modules/a/node_modules/b":{{"version":"2.0.0","inBundle":true}}}}}}"#,
            "A".repeat(27)
        );
        assert_eq!(lock_packages(bundled.as_bytes()).unwrap().len(), 1);
    }

    #[test]
    fn reads_the_cache_setting_of_an_npmrc() {
        assert_eq!(
            npmrc_cache("registry=x\ncache = /var/npm\n"),
            Some("/var/npm".into())
        );
        assert_eq!(npmrc_cache("; cache=/no\n"), None);
    }
}

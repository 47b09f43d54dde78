//! Launch identity: how a server is started, as its client configuration writes it
//! (docs/export.md, "Launch identity").
//!
//! The incidents of this field moved how a server is started, not what its tools say: a
//! package version that turned malicious, a configuration edited after approval, a look-alike
//! package name. A [`Launch`] holds the command, arguments, environment variable *names* and
//! working directory as written before any expansion (so `${TOKEN}` stays a placeholder and
//! no secret value is held), or the URL of a remote server without its query. A server the
//! client runs behind `mcppin-guard` records the guard too ([`Guard`]): the guard decides
//! whether the runtime check runs and against which lock, so removing it or editing its
//! settings is a change of the launch like any other. [`Launch::package`]
//! reads the package or image a runner (`npx`, `uvx`, `pipx run`, `docker run`) fetches, with
//! its version or digest; [`Package::floating`] says when that version is not pinned.
//!
//! ```
//! use mcppin_core::launch::Launch;
//!
//! let launch = Launch::Stdio {
//!     command: "npx".to_owned(),
//!     args: vec!["-y".to_owned(), "@scope/server@1.2.3".to_owned()],
//!     env: Default::default(),
//!     env_file: None,
//!     cwd: None,
//!     guard: None,
//! };
//! let package = launch.package().unwrap();
//! assert_eq!((package.name.as_str(), package.version.as_deref()), ("@scope/server", Some("1.2.3")));
//! assert!(!package.floating());
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::document::Error;
use crate::surface::{Fields, put, put_opt, string, string_array, strings};
use crate::value::{Object, Value};

/// How a server is started.
#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[non_exhaustive]
pub enum Launch {
    /// A process spoken to over stdio.
    Stdio {
        /// `command`, as written.
        command: String,
        /// `args`, as written.
        args: Vec<String>,
        /// The names of the `env` variables (never their values).
        env: BTreeSet<String>,
        /// `envFile` (VS Code), as written.
        env_file: Option<String>,
        /// `cwd`, as written.
        cwd: Option<String>,
        /// The `mcppin-guard` the client runs the server behind, when it does.
        guard: Option<Guard>,
    },
    /// A server reached over HTTP.
    Remote {
        /// The URL without query, fragment or user information.
        url: String,
    },
}

/// The guard's part of a launch: `mcppin-guard ARGS -- SERVER`, with the server command left
/// to the [`Launch`] that holds it.
///
/// Kept as written, not interpreted: any edit of the guard's program path or of any of its
/// arguments (`--lock`, `--pubkey`, `--mode`, ...) is a change of the launch, even one that
/// means the same (`--mode refuse` written out where it was the default).
#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct Guard {
    /// The guard program, as written (`mcppin-guard`, `/usr/local/bin/mcppin-guard`).
    pub command: String,
    /// The guard's own arguments (those before the server command), as written.
    pub args: Vec<String>,
    /// The guard's settings the entry's `env` gives ([`GUARD_ENV`]), by name, values as
    /// written.
    pub env: BTreeMap<String, String>,
}

impl Guard {
    /// The guard's settings that name files (`--lock`, `--pubkey`, `--log`, then
    /// `MCPPIN_LOCK` and each path of `MCPPIN_PUBKEY`), as `(setting, path as written)`, in the
    /// order given: `--lock FILE` and `--lock=FILE`.
    /// A relative path is resolved against whatever working directory the client starts the
    /// guard in, so the export warns about one.
    #[must_use]
    pub fn files(&self) -> Vec<(&'static str, &str)> {
        const FILES: [&str; 3] = ["--lock", "--pubkey", "--log"];
        let mut found = Vec::new();
        let mut args = self.args.iter();
        // Every flag of the guard takes a value: the word after a flag without `=` is its value.
        while let Some(arg) = args.next() {
            let (name, value) = match arg.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (arg.as_str(), args.next().map(String::as_str)),
            };
            if let (Some(flag), Some(value)) = (FILES.iter().find(|f| **f == name), value) {
                found.push((*flag, value));
            }
        }
        if let Some(lock) = self.env.get("MCPPIN_LOCK") {
            found.push(("MCPPIN_LOCK", lock));
        }
        if let Some(keys) = self.env.get("MCPPIN_PUBKEY") {
            found.extend(keys.split(':').map(|key| ("MCPPIN_PUBKEY", key)));
        }
        found
    }
}

/// A guard's `env`: an object of [`GUARD_ENV`] names to strings.
fn guard_env(value: &Value, pointer: &str) -> Result<BTreeMap<String, String>, Error> {
    let object = crate::surface::object(value, pointer)?;
    let mut env = BTreeMap::new();
    for (name, value) in object.iter() {
        let at = crate::surface::child(pointer, name);
        if !GUARD_ENV.contains(&name) {
            return Err(Error::UnknownMember {
                pointer: at,
                name: name.to_owned(),
            });
        }
        env.insert(name.to_owned(), string(value, &at)?.to_owned());
    }
    Ok(env)
}

/// The package or image a runner fetches.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Package {
    /// The runner: `npx`, `uvx`, `pipx`, `docker`.
    pub runner: &'static str,
    /// The package name, or the image without tag and digest; for packages the launch names
    /// only through a file (`--with-requirements FILE`), that option as written, without a
    /// version.
    pub name: String,
    /// The version (or image tag) asked for, when one is.
    pub version: Option<String>,
    /// The image digest (`sha256:...`), when one is given.
    pub digest: Option<String>,
}

const STDIO_MEMBERS: &[&str] = &["command", "args", "env", "env_file", "cwd", "guard"];
const REMOTE_MEMBERS: &[&str] = &["url"];
const GUARD_MEMBERS: &[&str] = &["command", "args", "env"];

/// The environment variables `mcppin-guard` takes its settings from, in place of the flags
/// of the same meaning (`--auth-context`, `--lock`, `--mode`, `--pubkey`, `--server`;
/// docs/guard.md): the form no client's argument handling can break. A guarded entry records
/// the ones its `env` sets in the guard's part of the launch, with their values (paths, an id,
/// a mode and a context label, never secrets).
pub const GUARD_ENV: [&str; 5] = [
    "MCPPIN_AUTH_CONTEXT",
    "MCPPIN_LOCK",
    "MCPPIN_MODE",
    "MCPPIN_PUBKEY",
    "MCPPIN_SERVER",
];

/// The first `schema_version` of the manifest and the lockfile whose launches record the
/// guard (`guard`); an older document holding one is refused.
pub const GUARD_SINCE: u64 = 4;

impl Launch {
    /// The launch of a remote server at `url`: the query (`?...`), fragment (`#...`) and user
    /// information (`user:password@`) are left out, since they often carry a token.
    #[must_use]
    pub fn remote(url: &str) -> Self {
        let end = url.find(['?', '#']).unwrap_or(url.len());
        let url = &url[..end];
        let url = match url.split_once("://") {
            Some((scheme, rest)) => {
                let authority_end = rest.find('/').unwrap_or(rest.len());
                let (authority, path) = rest.split_at(authority_end);
                let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
                format!("{scheme}://{host}{path}")
            }
            None => url.to_owned(),
        };
        Self::Remote { url }
    }

    /// The first package or image a runner fetches ([`Launch::packages`]).
    #[must_use]
    pub fn package(&self) -> Option<Package> {
        self.packages().into_iter().next()
    }

    /// Every package or image a runner fetches, in the order the launch names them, when the
    /// command is `npx` or `npm exec` (every `-p`/`--package`, or the command's package), `uvx`
    /// or `uv tool run` (the command's package or `--from`, every `--with`, and each
    /// `--with-requirements FILE` as one package without a version: the launch does not say
    /// which versions the file holds), `uv run` (every `--with` and `--with-requirements`),
    /// `pipx run` (`--spec`, or the app) or `docker run` (`podman run` too).
    #[must_use]
    pub fn packages(&self) -> Vec<Package> {
        let Self::Stdio { command, args, .. } = self else {
            return Vec::new();
        };
        let program = command.rsplit(['/', '\\']).next().unwrap_or(command);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        match program {
            "npx" | "npx.cmd" => npx(&args),
            "npm" | "npm.cmd" => match args.split_first() {
                Some((&("exec" | "x"), rest)) => npx(rest),
                _ => Vec::new(),
            },
            "uvx" | "uvx.exe" => uvx(&args, true),
            "uv" | "uv.exe" => match args.split_first() {
                Some((&"tool", rest)) => match rest.split_first() {
                    Some((&"run", rest)) => uvx(rest, true),
                    _ => Vec::new(),
                },
                Some((&"run", rest)) => uvx(rest, false),
                _ => Vec::new(),
            },
            "pipx" => match args.split_first() {
                Some((&"run", rest)) => pipx_run(rest).into_iter().collect(),
                _ => Vec::new(),
            },
            "docker" | "podman" => match args.split_first() {
                Some((&"run", rest)) => docker_run(rest).into_iter().collect(),
                Some((&"container", rest)) => match rest.split_first() {
                    Some((&"run", rest)) => docker_run(rest).into_iter().collect(),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// Whether the server is run behind `mcppin-guard` ([`Guard`]).
    #[must_use]
    pub fn is_guarded(&self) -> bool {
        matches!(self, Self::Stdio { guard: Some(_), .. })
    }

    /// The launch without its guard's part: what a document before [`GUARD_SINCE`] recorded.
    #[must_use]
    pub fn without_guard(&self) -> Self {
        let mut launch = self.clone();
        if let Self::Stdio { guard, .. } = &mut launch {
            *guard = None;
        }
        launch
    }

    /// Whether `served` starts the server as this approved launch does, as far as a lockfile of
    /// `lock_version` recorded it: before [`GUARD_SINCE`] the guard was not recorded, so it is
    /// not compared (an older approval said nothing about it).
    #[must_use]
    pub fn approves(&self, served: &Self, lock_version: u64) -> bool {
        if lock_version < GUARD_SINCE {
            self.without_guard() == served.without_guard()
        } else {
            self == served
        }
    }

    /// Reads a launch as [`Launch::to_value`] writes it; `pointer` locates it for messages.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownMember`], [`Error::MissingMember`] or [`Error::Invalid`] for a member
    /// that is not of the format.
    pub fn from_value(value: &Value, pointer: &str) -> Result<Self, Error> {
        let remote = value.as_object().is_some_and(|o| o.get("url").is_some());
        if remote {
            let fields = Fields::new(value, pointer, REMOTE_MEMBERS)?;
            let url = string(fields.required("url")?, &fields.at("url"))?;
            return Ok(Self::Remote {
                url: url.to_owned(),
            });
        }
        let fields = Fields::new(value, pointer, STDIO_MEMBERS)?;
        let command = string(fields.required("command")?, &fields.at("command"))?.to_owned();
        let args = match fields.optional("args") {
            Some(v) => strings(v, &fields.at("args"))?,
            None => Vec::new(),
        };
        let env = match fields.optional("env") {
            Some(v) => strings(v, &fields.at("env"))?.into_iter().collect(),
            None => BTreeSet::new(),
        };
        let guard = fields
            .optional("guard")
            .map(|v| {
                let fields = Fields::new(v, &fields.at("guard"), GUARD_MEMBERS)?;
                Ok::<_, Error>(Guard {
                    command: string(fields.required("command")?, &fields.at("command"))?.to_owned(),
                    args: match fields.optional("args") {
                        Some(v) => strings(v, &fields.at("args"))?,
                        None => Vec::new(),
                    },
                    env: match fields.optional("env") {
                        Some(v) => guard_env(v, &fields.at("env"))?,
                        None => BTreeMap::new(),
                    },
                })
            })
            .transpose()?;
        Ok(Self::Stdio {
            command,
            args,
            env,
            env_file: fields.optional_string("env_file")?,
            cwd: fields.optional_string("cwd")?,
            guard,
        })
    }

    /// Reads the launch of a document of `document_version` ([`Launch::from_value`]), refusing
    /// a `guard` in a version before [`GUARD_SINCE`].
    pub(crate) fn read(
        value: &Value,
        pointer: &str,
        document: crate::document::Document,
        document_version: u64,
    ) -> Result<Self, Error> {
        if document_version < GUARD_SINCE
            && let Some(object) = value.as_object()
            && object.get("guard").is_some()
        {
            return Err(Error::LaterVersionMember {
                document,
                pointer: crate::surface::child(pointer, "guard"),
                name: "guard".to_owned(),
                version: document_version,
                since: GUARD_SINCE,
            });
        }
        Self::from_value(value, pointer)
    }

    /// The launch as a value of our formats (`command`, `args`, `env` names, `env_file`,
    /// `cwd`, `guard`; or `url`).
    #[must_use]
    pub fn to_value(&self) -> Value {
        let mut o = Object::new();
        match self {
            Self::Stdio {
                command,
                args,
                env,
                env_file,
                cwd,
                guard,
            } => {
                put(&mut o, "command", command.as_str());
                put(
                    &mut o,
                    "args",
                    string_array(args.iter().map(String::as_str)),
                );
                put(&mut o, "env", string_array(env.iter().map(String::as_str)));
                put_opt(&mut o, "env_file", env_file.as_deref());
                put_opt(&mut o, "cwd", cwd.as_deref());
                if let Some(guard) = guard {
                    let mut g = Object::new();
                    put(&mut g, "command", guard.command.as_str());
                    put(
                        &mut g,
                        "args",
                        string_array(guard.args.iter().map(String::as_str)),
                    );
                    if !guard.env.is_empty() {
                        let mut env = Object::new();
                        for (name, value) in &guard.env {
                            put(&mut env, name, value.as_str());
                        }
                        put(&mut g, "env", Value::from(env));
                    }
                    put(&mut o, "guard", Value::from(g));
                }
            }
            Self::Remote { url } => put(&mut o, "url", url.as_str()),
        }
        Value::from(o)
    }
}

impl fmt::Display for Launch {
    /// The launch on one line, each word quoted as a shell would need it (`npx -y pkg@1`,
    /// `env: TOKEN`), behind its guard when it has one (`mcppin-guard --lock l -- npx ...`), or
    /// the URL; not escaped for a terminal (the caller escapes).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stdio {
                command,
                args,
                env,
                env_file,
                cwd,
                guard,
            } => {
                if let Some(guard) = guard {
                    for (name, value) in &guard.env {
                        write!(f, "{name}={} ", crate::shell_word(value))?;
                    }
                    f.write_str(&crate::shell_word(&guard.command))?;
                    for arg in &guard.args {
                        write!(f, " {}", crate::shell_word(arg))?;
                    }
                    f.write_str(" -- ")?;
                }
                f.write_str(&crate::shell_word(command))?;
                for arg in args {
                    write!(f, " {}", crate::shell_word(arg))?;
                }
                if !env.is_empty() {
                    let names: Vec<&str> = env.iter().map(String::as_str).collect();
                    write!(f, " (env: {})", names.join(", "))?;
                }
                if let Some(file) = env_file {
                    write!(f, " (envFile: {file})")?;
                }
                if let Some(dir) = cwd {
                    write!(f, " (cwd: {dir})")?;
                }
                Ok(())
            }
            Self::Remote { url } => f.write_str(url),
        }
    }
}

impl Package {
    /// Whether the version is not pinned: none given, `latest`, a range or tag instead of an
    /// exact version, or an image without a digest.
    #[must_use]
    pub fn floating(&self) -> bool {
        if self.runner == "docker" {
            return self.digest.is_none();
        }
        match self.version.as_deref() {
            None => true,
            Some(version) => !is_exact_version(version),
        }
    }
}

impl fmt::Display for Package {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(version) = &self.version {
            let at = if matches!(self.runner, "docker") {
                ":"
            } else {
                "@"
            };
            write!(f, "{at}{version}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

/// `1.2.3`, `1.2.3-rc.1`, `1.2.3+build` (npm), `1.2` or `1.2.3.post1` (Python): digits and
/// dots first, nothing that reads as a range.
fn is_exact_version(version: &str) -> bool {
    let core_end = version.find(['-', '+']).unwrap_or(version.len());
    let core = &version[..core_end];
    core.split('.').count() >= 2
        && core.split('.').all(|part| {
            !part.is_empty()
                && !part.eq_ignore_ascii_case("x")
                && part.bytes().all(|b| b.is_ascii_alphanumeric())
        })
        && core.bytes().next().is_some_and(|b| b.is_ascii_digit())
}

/// `npx [options] PKG[@VERSION] [args]`, or every package of `-p`/`--package` (the first word
/// after the options is then the command, not a package).
fn npx(args: &[&str]) -> Vec<Package> {
    let mut found = Vec::new();
    let mut by_flag = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if let Some(spec) = arg.strip_prefix("--package=") {
            found.extend(npm_package(spec));
            by_flag = true;
        } else if matches!(*arg, "-p" | "--package") {
            found.extend(args.get(i + 1).and_then(|spec| npm_package(spec)));
            by_flag = true;
            i += 1;
        } else if matches!(*arg, "-c" | "--call") {
            break;
        } else if arg == &"--" || !arg.starts_with('-') {
            let spec = if arg == &"--" {
                args.get(i + 1)
            } else {
                Some(arg)
            };
            if !by_flag {
                found.extend(spec.and_then(|spec| npm_package(spec)));
            }
            break;
        }
        i += 1;
    }
    found
}

/// `name`, `name@version`, `@scope/name@version`; a path is no package.
fn npm_package(spec: &str) -> Option<Package> {
    if spec.starts_with(['.', '/']) || spec.is_empty() {
        return None;
    }
    let (name, version) = match spec.get(1..).and_then(|rest| rest.rfind('@')) {
        Some(at) => (&spec[..=at], Some(&spec[at + 2..])),
        None => (spec, None),
    };
    Some(Package {
        runner: "npx",
        name: name.to_owned(),
        version: version.filter(|v| !v.is_empty()).map(str::to_owned),
        digest: None,
    })
}

/// `uvx [options] PKG[==VERSION|@VERSION] [args]` (the command's package, or that of `--from`)
/// with every package of `--with`/`-w`; `command_is_package` is false for `uv run`, whose
/// command is never a package.
fn uvx(args: &[&str], command_is_package: bool) -> Vec<Package> {
    const WITH_VALUE: &[&str] = &[
        "--python",
        "-p",
        "--index",
        "--index-url",
        "--extra-index-url",
        "--with-editable",
        "--directory",
        "--project",
        "--env-file",
        "--cache-dir",
        "--config-file",
        "--constraints",
        "--overrides",
        "--refresh-package",
        "--reinstall-package",
        "--upgrade-package",
        "-P",
        "--index-strategy",
        "--keyring-provider",
        "--resolution",
        "--prerelease",
        "--exclude-newer",
        "--link-mode",
        "--python-platform",
    ];
    let mut found = Vec::new();
    let mut from = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            // A short flag with its value attached: `-wpkg`, `-w=pkg`.
            _ if arg.starts_with("-w") && arg.len() > 2 => {
                ("-w", Some(arg[2..].strip_prefix('=').unwrap_or(&arg[2..])))
            }
            _ => (*arg, None),
        };
        let value = |i: &mut usize| {
            inline.or_else(|| {
                *i += 1;
                args.get(*i).copied()
            })
        };
        match name {
            "--from" => {
                found.extend(value(&mut i).and_then(|spec| python_package("uvx", spec)));
                from = true;
            }
            "--with" | "-w" => {
                for spec in value(&mut i).map(with_list).unwrap_or_default() {
                    found.extend(python_package("uvx", &spec));
                }
            }
            "--with-requirements" => {
                // The packages are in a file, which can change without the launch changing:
                // no version of them is pinned by the launch.
                let file = value(&mut i).unwrap_or_default();
                found.push(Package {
                    runner: "uvx",
                    name: format!("--with-requirements {file}"),
                    version: None,
                    digest: None,
                });
            }
            _ if WITH_VALUE.contains(&name) => {
                let _ = value(&mut i);
            }
            "--" => {
                if command_is_package && !from {
                    found.extend(args.get(i + 1).and_then(|spec| python_package("uvx", spec)));
                }
                break;
            }
            _ if !arg.starts_with('-') => {
                if command_is_package && !from {
                    found.extend(python_package("uvx", arg));
                }
                break;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// The requirements of one `--with` value: comma-separated, where a part that starts with a
/// version operator continues the previous requirement (`pkg>=1,<2` is one).
fn with_list(value: &str) -> Vec<String> {
    let mut list: Vec<String> = Vec::new();
    for part in value.split(',') {
        let part = part.trim();
        match list.last_mut() {
            Some(last) if part.starts_with(['<', '>', '=', '!', '~']) => {
                last.push(',');
                last.push_str(part);
            }
            _ if part.is_empty() => {}
            _ => list.push(part.to_owned()),
        }
    }
    list
}

/// `pipx run [--spec SPEC] [options] APP[==VERSION] [args]`.
fn pipx_run(args: &[&str]) -> Option<Package> {
    const WITH_VALUE: &[&str] = &["--python", "--pip-args", "--index-url"];
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if let Some(spec) = arg.strip_prefix("--spec=") {
            return python_package("pipx", spec);
        }
        if *arg == "--spec" {
            return python_package("pipx", args.get(i + 1)?);
        }
        if WITH_VALUE.contains(arg) {
            i += 2;
            continue;
        }
        if !arg.starts_with('-') {
            return python_package("pipx", arg);
        }
        i += 1;
    }
    None
}

/// `name`, `name==1.2`, `name@1.2`, `name[extra]==1.2`; other specifiers (`>=`, `~=`) are
/// kept as the version, which then floats.
fn python_package(runner: &'static str, spec: &str) -> Option<Package> {
    if spec.starts_with(['.', '/']) || spec.is_empty() {
        return None;
    }
    let (name, version) = if let Some((name, version)) = spec.split_once("==") {
        (name, Some(version))
    } else if let Some((name, version)) = spec.split_once('@') {
        (name, Some(version))
    } else if let Some(at) = spec.find(['>', '<', '~', '!', '=']) {
        (&spec[..at], Some(&spec[at..]))
    } else {
        (spec, None)
    };
    let name = name.split('[').next().unwrap_or(name).trim();
    Some(Package {
        runner,
        name: name.to_owned(),
        version: version.filter(|v| !v.is_empty()).map(str::to_owned),
        digest: None,
    })
}

/// `docker run [options] IMAGE[:TAG][@DIGEST] [command]`.
fn docker_run(args: &[&str]) -> Option<Package> {
    // Options of `docker run` that take a value as the next argument.
    const WITH_VALUE: &[&str] = &[
        "-e",
        "--env",
        "--env-file",
        "-v",
        "--volume",
        "--mount",
        "--name",
        "-p",
        "--publish",
        "--network",
        "--net",
        "-w",
        "--workdir",
        "-u",
        "--user",
        "--entrypoint",
        "--platform",
        "-l",
        "--label",
        "--add-host",
        "--cpus",
        "-m",
        "--memory",
        "--pull",
        "--runtime",
        "--gpus",
        "--device",
        "--cap-add",
        "--cap-drop",
        "--security-opt",
        "--tmpfs",
        "--ulimit",
        "--log-driver",
        "--log-opt",
        "-h",
        "--hostname",
        "--ipc",
        "--pid",
        "--restart",
        "--shm-size",
        "--stop-signal",
        "--dns",
        "--group-add",
        "--label-file",
        "--cidfile",
        "--expose",
    ];
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if WITH_VALUE.contains(arg) {
            i += 2;
            continue;
        }
        if !arg.starts_with('-') {
            return Some(image(arg));
        }
        i += 1;
    }
    None
}

/// `registry/name:tag@sha256:...`: the tag is after the last `:` of the last path segment.
fn image(reference: &str) -> Package {
    let (rest, digest) = match reference.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest.to_owned())),
        None => (reference, None),
    };
    let segment_start = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[segment_start..].rfind(':') {
        Some(colon) => {
            let at = segment_start + colon;
            (&rest[..at], Some(rest[at + 1..].to_owned()))
        }
        None => (rest, None),
    };
    Package {
        runner: "docker",
        name: name.to_owned(),
        version: tag,
        digest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(command: &str, args: &[&str]) -> Launch {
        Launch::Stdio {
            command: command.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: BTreeSet::new(),
            env_file: None,
            cwd: None,
            guard: None,
        }
    }

    fn package(command: &str, args: &[&str]) -> Option<(String, Option<String>, bool)> {
        stdio(command, args)
            .package()
            .map(|p| (p.to_string(), p.version.clone(), p.floating()))
    }

    #[test]
    fn reads_npx_packages_and_their_versions() {
        let pinned = package("npx", &["-y", "@scope/server-x@1.2.3", "/data"]).unwrap();
        assert_eq!(pinned.0, "@scope/server-x@1.2.3");
        assert!(!pinned.2);
        assert!(!package("npx", &["server-x@1.0.0-linux"]).unwrap().2);
        for floating in [
            &["-y", "server-x"][..],
            &["server-x@1.x"],
            &["server-x@next"],
            &["--yes", "server-x@latest"],
            &["server-x@^1.2.0"],
            &["-y", "@scope/server-x"],
        ] {
            let found = package("npx", floating).unwrap();
            assert!(found.2, "{floating:?} should float: {found:?}");
        }
        let by_flag = package("/usr/bin/npx", &["-p", "pkg@2.0.0", "pkg-bin"]).unwrap();
        assert_eq!(by_flag.0, "pkg@2.0.0");
        assert_eq!(package("npx", &["./local-server"]), None);
        assert_eq!(package("node", &["server.js"]), None);
    }

    fn packages(command: &str, args: &[&str]) -> Vec<(String, bool)> {
        stdio(command, args)
            .packages()
            .iter()
            .map(|p| (p.to_string(), p.floating()))
            .collect()
    }

    #[test]
    fn reads_every_package_a_launch_fetches() {
        // Only the first package was read, so `npx -p a@1 -p b` hid a floating b.
        let p = |s: &str, floating: bool| (s.to_owned(), floating);
        assert_eq!(
            packages(
                "npx",
                &["-y", "-p", "a@1.0.0", "-p", "b", "a-bin", "-p", "c"]
            ),
            [p("a@1.0.0", false), p("b", true)]
        );
        assert_eq!(
            packages(
                "npx",
                &["--package=@s/a@1.0.0", "--package", "b@^2", "--", "a"]
            ),
            [p("@s/a@1.0.0", false), p("b@^2", true)]
        );
        assert_eq!(
            packages("npx", &["-p", "a@1.0.0", "-c", "a --flag"]),
            [p("a@1.0.0", false)]
        );
        assert_eq!(
            packages("uvx", &["--with", "b", "mcp-x==1.2.0", "--with", "c"]),
            [p("b", true), p("mcp-x@1.2.0", false)]
        );
        assert_eq!(
            packages(
                "uvx",
                &[
                    "--with=b==1.0,c>=1,<2",
                    "-w",
                    "d==2.0",
                    "--from",
                    "x==1.0",
                    "x-cmd"
                ]
            ),
            [
                p("b@1.0", false),
                p("c@>=1,<2", true),
                p("d@2.0", false),
                p("x@1.0", false)
            ]
        );
        assert_eq!(
            packages(
                "uv",
                &["tool", "run", "--python", "3.12", "--with", "b", "x==1.0"]
            ),
            [p("b", true), p("x@1.0", false)]
        );
        assert_eq!(
            packages("uv", &["run", "--with", "mcp==1.2.0", "server.py"]),
            [p("mcp@1.2.0", false)]
        );
        assert_eq!(packages("uv", &["pip", "install", "x"]), []);
        assert_eq!(
            packages("/usr/bin/uvx", &["--with-editable", "./lib", "x==1.0"]),
            [p("x@1.0", false)]
        );
    }

    #[test]
    fn packages_the_launch_does_not_name_float() {
        // `--with-requirements FILE` was skipped: the file's packages, whatever their
        // versions, were never reported; so were `-wPKG` and `npm exec PKG`.
        let p = |s: &str, floating: bool| (s.to_owned(), floating);
        assert_eq!(
            packages("uvx", &["--with-requirements", "reqs.txt", "mcp-x==1.2.0"]),
            [
                p("--with-requirements reqs.txt", true),
                p("mcp-x@1.2.0", false)
            ]
        );
        assert_eq!(
            packages("uv", &["run", "--with-requirements=r.txt", "server.py"]),
            [p("--with-requirements r.txt", true)]
        );
        assert_eq!(
            packages("uvx", &["-wb", "-w=c==1.0", "x==1.0"]),
            [p("b", true), p("c@1.0", false), p("x@1.0", false)]
        );
        assert_eq!(
            packages("npm", &["exec", "-y", "--", "server-x"]),
            [p("server-x", true)]
        );
        assert_eq!(
            packages("npm", &["x", "--package=server-x@1.0.0", "server-x"]),
            [p("server-x@1.0.0", false)]
        );
        // Where it holds: every package pinned, and npm doing something else.
        assert_eq!(
            packages("uvx", &["--with", "b==1.0", "x==1.0"]),
            [p("b@1.0", false), p("x@1.0", false)]
        );
        assert_eq!(packages("npm", &["start"]), []);
    }

    #[test]
    fn reads_python_runners() {
        let pinned = package("uvx", &["mcp-server-git==0.6.2", "--repo", "."]).unwrap();
        assert_eq!(
            (pinned.0.as_str(), pinned.2),
            ("mcp-server-git@0.6.2", false)
        );
        assert!(package("uvx", &["mcp-server-git"]).unwrap().2);
        assert!(package("uvx", &["mcp-server-git@latest"]).unwrap().2);
        assert!(package("uvx", &["--from", "pkg>=1.0", "cmd"]).unwrap().2);
        let pipx = package("pipx", &["run", "--spec", "tool[all]==1.4", "tool"]).unwrap();
        assert_eq!((pipx.0.as_str(), pipx.2), ("tool@1.4", false));
        assert_eq!(package("pipx", &["install", "tool"]), None);
    }

    #[test]
    fn reads_docker_images_and_wants_a_digest() {
        let tagged = package(
            "docker",
            &["run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/org/server:1.2"],
        )
        .unwrap();
        assert_eq!(tagged.0, "ghcr.io/org/server:1.2");
        assert!(tagged.2, "a tag without a digest floats");
        let digest = package(
            "docker",
            &["run", "-i", "localhost:5000/server:1.2@sha256:abc", "serve"],
        )
        .unwrap();
        assert_eq!(digest.0, "localhost:5000/server:1.2@sha256:abc");
        assert!(!digest.2);
        let bare = stdio("docker", &["run", "-i", "localhost:5000/server"])
            .package()
            .unwrap();
        assert_eq!(
            (bare.name.as_str(), bare.version),
            ("localhost:5000/server", None)
        );
    }

    #[test]
    fn a_remote_url_loses_its_query_fragment_and_credentials() {
        assert_eq!(
            Launch::remote("https://user:secret@mcp.example.com:8443/v1/mcp?token=abc#x"),
            Launch::Remote {
                url: "https://mcp.example.com:8443/v1/mcp".to_owned()
            }
        );
    }

    #[test]
    fn round_trips_through_its_value_and_refuses_unknown_members() {
        let launch = Launch::Stdio {
            command: "npx".to_owned(),
            args: vec!["-y".to_owned(), "${PKG}".to_owned()],
            env: BTreeSet::from(["TOKEN".to_owned()]),
            env_file: Some("${workspaceFolder}/.env".to_owned()),
            cwd: Some("/srv".to_owned()),
            guard: Some(Guard {
                command: "/opt/bin/mcppin-guard".to_owned(),
                args: vec!["--lock".to_owned(), "mcp.lock.json".to_owned()],
                env: BTreeMap::from([("MCPPIN_MODE".to_owned(), "quarantine".to_owned())]),
            }),
        };
        assert_eq!(
            Launch::from_value(&launch.to_value(), "/l").unwrap(),
            launch
        );
        let remote = Launch::remote("https://h/mcp");
        assert_eq!(
            Launch::from_value(&remote.to_value(), "/l").unwrap(),
            remote
        );
        let bad = crate::parse(br#"{"command": "x", "env": {"A": "secret"}}"#).unwrap();
        assert!(matches!(
            Launch::from_value(&bad, "/l"),
            Err(Error::Invalid { ref pointer, .. }) if pointer == "/l/env"
        ));
        let unknown = crate::parse(br#"{"url": "https://h", "command": "x"}"#).unwrap();
        assert!(matches!(
            Launch::from_value(&unknown, "/l"),
            Err(Error::UnknownMember { .. })
        ));
    }

    #[test]
    fn a_guard_names_the_files_it_reads() {
        let guard = Guard {
            command: "mcppin-guard".to_owned(),
            args: [
                "--lock",
                "l.json",
                "--server",
                "--log",
                "--pubkey=k.pem",
                "--pubkey",
                "/k2.pem",
                "--log",
            ]
            .map(str::to_owned)
            .to_vec(),
            env: BTreeMap::new(),
        };
        // `--log` after `--server` is the server's id, as the guard reads it; a last flag
        // without a value names nothing.
        assert_eq!(
            guard.files(),
            [
                ("--lock", "l.json"),
                ("--pubkey", "k.pem"),
                ("--pubkey", "/k2.pem")
            ]
        );
    }

    #[test]
    fn a_guard_is_refused_before_the_version_that_records_it() {
        let guarded = crate::parse(
            br#"{"command": "npx", "args": [], "guard": {"command": "mcppin-guard", "args": []}}"#,
        )
        .unwrap();
        for document in [
            crate::document::Document::Manifest,
            crate::document::Document::Lockfile,
        ] {
            assert!(matches!(
                Launch::read(&guarded, "/l", document, 3),
                Err(Error::LaterVersionMember { ref pointer, since: 4, version: 3, .. })
                    if pointer == "/l/guard"
            ));
            assert!(Launch::read(&guarded, "/l", document, GUARD_SINCE).is_ok());
        }
        let unknown = crate::parse(
            br#"{"command": "npx", "guard": {"command": "mcppin-guard", "mode": "off"}}"#,
        )
        .unwrap();
        assert!(matches!(
            Launch::from_value(&unknown, "/l"),
            Err(Error::UnknownMember { .. })
        ));
    }

    #[test]
    fn displays_as_a_command_line_without_values() {
        let launch = Launch::Stdio {
            command: "npx".to_owned(),
            args: vec!["-y".to_owned(), "a b".to_owned()],
            env: BTreeSet::from(["TOKEN".to_owned()]),
            env_file: None,
            cwd: None,
            guard: None,
        };
        assert_eq!(launch.to_string(), "npx -y 'a b' (env: TOKEN)");
        let Launch::Stdio { args, env, .. } = launch else {
            unreachable!()
        };
        let guarded = Launch::Stdio {
            command: "npx".to_owned(),
            args,
            env,
            env_file: None,
            cwd: None,
            guard: Some(Guard {
                command: "mcppin-guard".to_owned(),
                args: vec!["--lock".to_owned(), "my lock.json".to_owned()],
                env: BTreeMap::new(),
            }),
        };
        assert_eq!(
            guarded.to_string(),
            "mcppin-guard --lock 'my lock.json' -- npx -y 'a b' (env: TOKEN)"
        );
    }
}

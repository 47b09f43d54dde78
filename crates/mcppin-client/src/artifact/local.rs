//! A program on the local file system: resolved as the start resolves it, with the interpreters
//! of its `#!` line and the files its arguments name.
//!
//! The start executes the program found by [`ServerCommand::resolve_program`] (the path as
//! written from the working directory, or the first executable of that name on the server's
//! `PATH`); the kernel follows symbolic links and, for a file starting with `#!`, runs the
//! interpreter that line names with the rest of the line as one argument (Linux,
//! `fs/binfmt_script.c`), up to four levels deep. `/usr/bin/env NAME` finds `NAME` on `PATH`
//! in turn. Each file of that chain is recorded with its SHA-256, then every argument that
//! names an existing regular file holding code ([`is_code`]: `server.js`, `server.py`, a
//! script, a jar): the server's data (a database, a pid or log file it writes, a JSON
//! configuration) moves between runs without being other code, and is not pinned. What the
//! program loads by itself (a script's imports, a `-m` module, `node_modules`) is not either.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use mcppin_core::artifact::{Artifact, File};

use super::file::{open_regular, sha256_file, shown, text};
use crate::ServerCommand;

/// How many bytes of a file the kernel reads for its `#!` line (Linux `BINPRM_BUF_SIZE`).
pub const SHEBANG_BYTES: usize = 256;

/// How many interpreters deep the kernel follows `#!` lines (Linux: four, counting the
/// program).
const MAX_INTERPRETERS: usize = 4;

/// A `#!` line: the interpreter and the argument the kernel passes it before the script.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Shebang {
    /// The interpreter, as written (an absolute path, or one from the working directory).
    pub interpreter: String,
    /// The rest of the line, one argument, leading and trailing blanks removed; `None` when
    /// empty.
    pub argument: Option<String>,
}

/// Reads the `#!` line at the start of `head` (the first [`SHEBANG_BYTES`] bytes of a file) as
/// Linux does: after `#!` and blanks, the interpreter runs to the next blank, and the rest of
/// the line (to a newline or the end of `head`) is one argument. `None` when `head` does not
/// start with `#!`, names no interpreter, or the line is not UTF-8.
#[must_use]
pub fn shebang(head: &[u8]) -> Option<Shebang> {
    let head = &head[..head.len().min(SHEBANG_BYTES)];
    let line = head.strip_prefix(b"#!")?;
    let line = match line.iter().position(|&b| b == b'\n') {
        Some(end) => &line[..end],
        None => line,
    };
    let line = std::str::from_utf8(line).ok()?;
    let blank = |c: char| c == ' ' || c == '\t';
    let line = line.trim_matches(blank);
    let (interpreter, rest) = line.split_once(blank).unwrap_or((line, ""));
    if interpreter.is_empty() {
        return None;
    }
    let rest = rest.trim_matches(blank);
    Some(Shebang {
        interpreter: interpreter.to_owned(),
        argument: (!rest.is_empty()).then(|| rest.to_owned()),
    })
}

/// What `env ARGUMENT` runs, for the argument of a `#!/usr/bin/env` line: `Some((program,
/// PATH))`, the program as named and the `PATH` it is looked up on when the line sets one
/// (`None`: the process's). `-S` splits the argument into words (GNU and BSD `env`); without
/// it, the argument is the program's name, blanks and all. `None` when the line runs no
/// program or uses an option this reader does not follow.
#[must_use]
pub fn env_program(argument: &str) -> Option<(String, Option<Option<String>>)> {
    let words: Vec<&str> = match argument.strip_prefix("-S") {
        Some(rest) => rest.split([' ', '\t']).filter(|w| !w.is_empty()).collect(),
        None => vec![argument],
    };
    // `Some(None)`: the environment was cleared (`-i`), so there is no PATH.
    let mut path: Option<Option<String>> = None;
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        match word {
            "-i" | "--ignore-environment" | "-" => path = Some(None),
            "-u" | "--unset" => {
                if words.next()? == "PATH" {
                    path = Some(None);
                }
            }
            "--" => return words.next().map(|w| (w.to_owned(), path)),
            _ if word.starts_with('-') => return None,
            _ => match word.split_once('=') {
                Some(("PATH", value)) => path = Some(Some(value.to_owned())),
                Some(_) => {}
                None => return Some((word.to_owned(), path)),
            },
        }
    }
    None
}

/// The extensions of files that hold code: sources of the interpreters servers are written for,
/// and compiled programs and archives of them.
pub const CODE_EXTENSIONS: &[&str] = &[
    "js", "mjs", "cjs", "ts", "mts", "cts", "jsx", "tsx", "py", "pyw", "pyz", "pyc", "rb", "pl",
    "pm", "php", "lua", "sh", "bash", "zsh", "ps1", "jar", "war", "class", "wasm", "so", "dylib",
    "exe", "dll",
];

/// Whether a file named by an argument holds code: executable by someone (`mode`), starting
/// with `#!`, an ELF, Mach-O, WebAssembly or zip (jar) header (`head`, its first bytes), or
/// named with one of [`CODE_EXTENSIONS`].
#[must_use]
pub fn is_code(path: &Path, mode: u32, head: &[u8]) -> bool {
    const MAGIC: &[&[u8]] = &[
        b"#!",
        b"\x7fELF",
        b"\0asm",
        b"PK\x03\x04",
        b"\xcf\xfa\xed\xfe",
        b"\xca\xfe\xba\xbe",
    ];
    mode & 0o111 != 0
        || MAGIC.iter().any(|m| head.starts_with(m))
        || path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| CODE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// The artifact of a local program run by `command`, or [`Artifact::Unknown`] saying what
/// could not be read.
#[must_use]
pub fn program(command: &ServerCommand) -> Artifact {
    match read(command) {
        Ok(artifact) => artifact,
        Err(reason) => Artifact::Unknown { reason },
    }
}

fn read(command: &ServerCommand) -> Result<Artifact, String> {
    let written = command.program();
    let resolved = command.resolve_program().map_err(|e| {
        format!(
            "the program {} cannot be resolved as the start resolves it: {e}",
            shown(Path::new(written))
        )
    })?;
    let program = if written.as_encoded_bytes().contains(&b'/') {
        // Named by a path: recorded as written, so a lock made in one checkout holds in another.
        record(written_text(written)?, &resolved)?
    } else {
        record_resolved(&resolved)?
    };
    let interpreters = interpreters(command, &resolved)?;
    let mut files = Vec::new();
    for arg in command.arguments() {
        if arg.is_empty() {
            continue;
        }
        let path = match command.working_dir() {
            Some(dir) if Path::new(arg).is_relative() => dir.join(arg),
            _ => PathBuf::from(arg),
        };
        let Ok(metadata) = std::fs::metadata(&path) else {
            continue;
        };
        if !metadata.is_file() {
            continue;
        }
        use std::os::unix::fs::PermissionsExt as _;
        if is_code(&path, metadata.permissions().mode(), &read_head(&path)?) {
            files.push(record(written_text(arg)?, &path)?);
        }
    }
    Ok(Artifact::Local {
        program,
        interpreters,
        files,
    })
}

/// The interpreters the `#!` lines starting from `program` run, in order.
fn interpreters(command: &ServerCommand, program: &Path) -> Result<Vec<File>, String> {
    let mut chain = Vec::new();
    let mut current = program.to_path_buf();
    for _ in 0..MAX_INTERPRETERS {
        let head = read_head(&current)?;
        let Some(line) = shebang(&head) else {
            return Ok(chain);
        };
        let interpreter = resolve(command, Path::new(&line.interpreter), None)?;
        chain.push(record_resolved(&interpreter)?);
        let is_env = Path::new(&line.interpreter)
            .file_name()
            .is_some_and(|n| n == "env");
        current = match (is_env, line.argument.as_deref()) {
            (true, Some(argument)) => {
                let (name, path) = env_program(argument).ok_or_else(|| {
                    format!(
                        "the #! line of {} runs env {:?}, which this reader does not follow",
                        shown(&current),
                        argument
                    )
                })?;
                let found = resolve(command, Path::new(&name), path)?;
                chain.push(record_resolved(&found)?);
                found
            }
            _ => interpreter,
        };
    }
    Err(format!(
        "the #! lines starting from {} nest deeper than the system runs",
        shown(program)
    ))
}

/// `name` found as executing it from the server's environment would: a path, or a name on
/// `PATH` (the server's, or `path` when an `env` line sets it, `Some(None)` for none).
fn resolve(
    command: &ServerCommand,
    name: &Path,
    path: Option<Option<String>>,
) -> Result<PathBuf, String> {
    let mut lookup = ServerCommand::new(name.as_os_str());
    let search: Option<OsString> = match path {
        None => command
            .environment()
            .get(std::ffi::OsStr::new("PATH"))
            .cloned(),
        Some(set) => set.map(OsString::from),
    };
    if let Some(search) = search {
        lookup = lookup.env("PATH", search);
    }
    if let Some(dir) = command.working_dir() {
        lookup = lookup.current_dir(dir);
    }
    lookup
        .resolve_program()
        .map_err(|e| format!("the interpreter {} cannot be found: {e}", shown(name)))
}

/// The first bytes of a file, for its `#!` line.
fn read_head(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let file = open_regular(path).map_err(|e| format!("cannot read {}: {e}", shown(path)))?;
    let mut head = Vec::with_capacity(SHEBANG_BYTES);
    file.take(SHEBANG_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| format!("cannot read {}: {e}", shown(path)))?;
    Ok(head)
}

/// The record of the file at `path` under its real path: symbolic links resolved, absolute.
fn record_resolved(path: &Path) -> Result<File, String> {
    let real =
        std::fs::canonicalize(path).map_err(|e| format!("cannot resolve {}: {e}", shown(path)))?;
    let name = text(real.as_os_str())
        .ok_or_else(|| format!("the path {} is not UTF-8", shown(&real)))?
        .to_owned();
    record(name, &real)
}

/// The record of the file at `path`, named `name`.
fn record(name: String, path: &Path) -> Result<File, String> {
    let sha256 = sha256_file(path).map_err(|e| format!("cannot read {}: {e}", shown(path)))?;
    Ok(File { path: name, sha256 })
}

fn written_text(path: &std::ffi::OsStr) -> Result<String, String> {
    text(path)
        .map(str::to_owned)
        .ok_or_else(|| format!("the path {} is not UTF-8", shown(Path::new(path))))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::program as pin;
    use super::*;

    #[test]
    fn reads_a_shebang_line_as_linux_does() {
        let line = |text: &str| shebang(text.as_bytes());
        assert_eq!(
            line("#!/bin/sh\necho"),
            Some(Shebang {
                interpreter: "/bin/sh".into(),
                argument: None
            })
        );
        assert_eq!(
            line("#! /usr/bin/env  node --no-warnings \t\nrest"),
            Some(Shebang {
                interpreter: "/usr/bin/env".into(),
                argument: Some("node --no-warnings".into())
            })
        );
        assert_eq!(line("#!\n"), None);
        assert_eq!(line("\x7fELF"), None);
        assert_eq!(line("echo #!/bin/sh"), None);
        // Only the first 256 bytes count.
        let long = format!("#!/bin/{}", "x".repeat(300));
        assert_eq!(line(&long).unwrap().interpreter.len(), SHEBANG_BYTES - 2);
    }

    #[test]
    fn follows_env_lines_as_env_does() {
        assert_eq!(env_program("node"), Some(("node".into(), None)));
        assert_eq!(
            env_program("node --flag"),
            Some(("node --flag".into(), None))
        );
        assert_eq!(env_program("-S node --flag"), Some(("node".into(), None)));
        assert_eq!(
            env_program("-S PATH=/opt/bin A=1 python3 -u"),
            Some(("python3".into(), Some(Some("/opt/bin".into()))))
        );
        assert_eq!(env_program("-S -i node"), Some(("node".into(), Some(None))));
        assert_eq!(env_program("-S -- node"), Some(("node".into(), None)));
        assert_eq!(env_program("-S --chdir=/ node"), None);
        assert_eq!(env_program("-S A=1"), None);
    }

    fn executable(path: &Path, text: &str) {
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn pins_a_script_its_interpreters_and_the_files_it_is_given() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        // A script run through env, which finds `sh` on PATH.
        std::os::unix::fs::symlink("/bin/sh", bin.join("sh")).unwrap();
        executable(&dir.path().join("server.sh"), "#!/usr/bin/env sh\ncat\n");
        std::fs::write(dir.path().join("plugin.js"), "module.exports = {}").unwrap();
        // Data the server reads or writes: not pinned.
        std::fs::write(dir.path().join("config.json"), "{}").unwrap();
        std::fs::write(dir.path().join("server.pid"), "4242").unwrap();
        let command = ServerCommand::new("./server.sh")
            .args([
                "plugin.js",
                "config.json",
                "--pid-file",
                "server.pid",
                "--port",
                "missing.js",
            ])
            .env("PATH", &bin)
            .current_dir(dir.path());
        let Artifact::Local {
            program,
            interpreters,
            files,
        } = pin(&command)
        else {
            panic!("{:?}", pin(&command))
        };
        assert_eq!(program.path, "./server.sh");
        let env = std::fs::canonicalize("/usr/bin/env").unwrap();
        let sh = std::fs::canonicalize("/bin/sh").unwrap();
        assert_eq!(
            interpreters
                .iter()
                .map(|f| f.path.as_str())
                .collect::<Vec<_>>(),
            [env.to_str().unwrap(), sh.to_str().unwrap()]
        );
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, "plugin.js");
        // sha256sum of "module.exports = {}".
        assert_eq!(
            files[0].sha256,
            "35ab14b4a7b597c4cb3c568cddf39ee07c557cdd7e19f2eb8b83467eafd70609"
        );

        // An edit of the script, its tools untouched, is another artifact.
        let before = pin(&command);
        executable(
            &dir.path().join("server.sh"),
            "#!/usr/bin/env sh\ncat # edited\n",
        );
        assert_ne!(pin(&command), before);
    }

    #[test]
    fn resolves_a_bare_name_on_the_servers_path_to_its_real_file() {
        let dir = tempfile::tempdir().unwrap();
        executable(&dir.path().join("real"), "\x7fELF not really");
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("tool")).unwrap();
        let command = ServerCommand::new("tool").env("PATH", dir.path());
        let Artifact::Local {
            program,
            interpreters,
            ..
        } = pin(&command)
        else {
            panic!("a local program")
        };
        let real = std::fs::canonicalize(dir.path().join("real")).unwrap();
        assert_eq!(program.path, real.to_str().unwrap());
        assert!(interpreters.is_empty());
        // Not on the server's PATH: unknown, saying so.
        let command = ServerCommand::new("tool").env("PATH", "/nonexistent");
        let Artifact::Unknown { reason } = pin(&command) else {
            panic!("unknown")
        };
        assert!(reason.contains("\"tool\" cannot be resolved"), "{reason}");
    }

    #[test]
    fn tells_code_from_data() {
        let code = |name: &str, mode: u32, head: &[u8]| is_code(Path::new(name), mode, head);
        assert!(code("server.js", 0o644, b"const x"));
        assert!(code("SERVER.PY", 0o644, b"import os"));
        assert!(code("server", 0o755, b"anything"));
        assert!(code("server", 0o644, b"#!/bin/sh"));
        assert!(code("server.bin", 0o644, b"\x7fELF\x02"));
        assert!(code("app", 0o644, b"PK\x03\x04"));
        assert!(!code("data.db", 0o644, b"SQLite format 3\0"));
        assert!(!code("server.pid", 0o644, b"4242"));
        assert!(!code("config.json", 0o600, b"{}"));
    }

    #[test]
    fn a_fifo_named_as_an_argument_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        let command = ServerCommand::new("/bin/sh").arg(&fifo);
        let Artifact::Local { files, .. } = pin(&command) else {
            panic!("a local program")
        };
        assert!(files.is_empty());
    }
}

//! What the SARIF report of `mcppin verify` needs from outside the report: the lockfile's path
//! relative to the repository root, the URL the rules link to (only when given: the project
//! names no public address of its own), and the document written when the run ends without a
//! report.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use mcppin_core::report::{LockLines, SarifContext};

use crate::exit::{Exit, Fail};

/// Accepts an absolute `http` or `https` URL without a fragment: SARIF requires `helpUri` to be
/// absolute, and each rule adds `#` and its id.
pub(crate) fn parse_help_base(text: &str) -> Result<String, String> {
    let absolute = ["https://", "http://"]
        .iter()
        .any(|scheme| text.len() > scheme.len() && text.starts_with(scheme));
    if !absolute || text.contains('#') || text.chars().any(|c| !c.is_ascii_graphic()) {
        return Err("expected an absolute http(s) URL without a fragment (#)".to_owned());
    }
    Ok(text.to_owned())
}

/// The lockfile's path relative to the repository root, as a URI reference: `root` when
/// given, else the nearest directory above the lockfile holding `.git`, else the current
/// directory.
///
/// # Errors
///
/// Exit 2 when the lockfile is standard input, or lies outside the root; exit 4 when a path
/// cannot be resolved.
pub(crate) fn lockfile_uri(lock: &Path, root: Option<&Path>) -> anyhow::Result<String> {
    if lock == Path::new("-") {
        return Err(Fail::new(
            Exit::Usage,
            "--format sarif locates findings in the lockfile: give it as a file, not -",
        )
        .into());
    }
    // The directory resolved, the file name kept: a lockfile that is a symbolic link is
    // located where the repository has it, not where the link points.
    let lock = match (lock.parent(), lock.file_name()) {
        (Some(dir), Some(name)) => {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            std::fs::canonicalize(dir)
                .with_context(|| format!("cannot resolve {}", dir.display()))?
                .join(name)
        }
        _ => std::fs::canonicalize(lock)
            .with_context(|| format!("cannot resolve {}", lock.display()))?,
    };
    let root = match root {
        Some(root) => std::fs::canonicalize(root)
            .with_context(|| format!("--sarif-root {}", root.display()))
            .map_err(|e| Fail::new(Exit::Usage, format!("{e:#}")))?,
        None => match git_root(&lock) {
            Some(root) => root,
            None => std::env::current_dir()
                .and_then(std::fs::canonicalize)
                .context("the current directory")?,
        },
    };
    let relative = lock.strip_prefix(&root).map_err(|_| {
        Fail::new(
            Exit::Usage,
            format!(
                "{} is outside {}, the root SARIF paths are relative to; name the repository \
                 root with --sarif-root",
                lock.display(),
                root.display()
            ),
        )
    })?;
    Ok(mcppin_core::report::uri_path(
        relative.as_os_str().as_encoded_bytes(),
    ))
}

/// The nearest directory above `file` that holds `.git` (a directory, or the file a linked
/// work tree or submodule has).
fn git_root(file: &Path) -> Option<PathBuf> {
    file.ancestors()
        .skip(1)
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .map(Path::to_path_buf)
}

/// Writes the SARIF document of a run that ended with `err` instead of a report, so code
/// scanning shows why. Nothing is written once standard output is closed.
pub(crate) fn write_failure(help_base: Option<&str>, err: &anyhow::Error) {
    if crate::exit::is_broken_pipe(err) {
        return;
    }
    let lines = LockLines::default();
    let context = SarifContext {
        tool_version: env!("CARGO_PKG_VERSION"),
        lockfile_uri: "",
        lines: &lines,
        help_base,
    };
    let code = crate::exit::code_of(err) as u8;
    let log = mcppin_core::report::sarif_failure(&context, code, &format!("{err:#}"));
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(&mcppin_core::to_pretty(&log))
        .and_then(|()| stdout.flush());
}

//! `mcppin-export --discover`: the client configurations found in their usual places, each
//! with its servers and the command that captures it. Reads only; never edits a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use mcppin_client::discover::{Listed, Location, Places, Platform, inspect_location, locations};
use mcppin_core::escape;
use mcppin_core::shell_word;

use crate::exit::{Exit, Fail};
use crate::file::{Unread, read_found};

/// What was found at one location.
enum Found {
    Absent,
    Unreadable(Unread),
    Refused(String),
    Servers(Vec<Listed>),
}

/// Lists the configurations under the home directory (`HOME`), the project directory
/// (`project`, else the current one) and the system directories under `system` (`/`) on
/// stdout.
pub(crate) fn run(project: Option<&Path>, system: &Path) -> anyhow::Result<Exit> {
    let places = places(project, system)?;
    let mut out = String::new();
    let (mut files, mut servers) = (0, 0);
    let mut absent = Vec::new();
    let all = locations(&places, Platform::current());
    let outputs = output_names(&all);
    for (location, output) in all.iter().zip(&outputs) {
        let found = look(location);
        let scope = match &location.project {
            Some(project) => format!(
                "{}, {}",
                location.scope,
                escape(&project.display().to_string())
            ),
            None => location.scope.to_string(),
        };
        let title = format!(
            "{} ({scope}): {}",
            location.client,
            escape(&location.path.display().to_string())
        );
        match found {
            Found::Absent => {
                absent.push(title);
                continue;
            }
            Found::Unreadable(err) => out.push_str(&format!("{title}\n  cannot be read: {err}\n")),
            Found::Refused(why) => {
                out.push_str(&format!(
                    "{title}\n  cannot be captured: {}\n",
                    escape(&why)
                ));
            }
            Found::Servers(ids) if ids.is_empty() => {
                out.push_str(&format!("{title}\n  no servers\n"))
            }
            Found::Servers(listed) => {
                servers += listed.len();
                let names: Vec<String> = listed
                    .iter()
                    .map(|server| {
                        let name = format!("{:?}", escape(&server.id));
                        if server.remote {
                            format!("{name} (remote)")
                        } else {
                            name
                        }
                    })
                    .collect();
                out.push_str(&format!(
                    "{title}\n  {}: {}\n  capture: {}\n",
                    plural(listed.len(), "server"),
                    names.join(", "),
                    command(location, output)
                ));
            }
        }
        files += 1;
    }
    if files == 0 {
        out.push_str("no client configuration found\n");
    } else {
        out.push_str(&format!(
            "{} found, {}\n",
            plural(files, "configuration"),
            plural(servers, "server")
        ));
    }
    if !absent.is_empty() {
        out.push_str("not found:\n");
        for title in absent {
            out.push_str(&format!("  {title}\n"));
        }
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(Exit::Written)
}

/// Where the configurations are looked for: the home directory (`HOME`), the project directory
/// (`project`, else the current one) and the system directories under `system` (`/`).
pub(crate) fn places(project: Option<&Path>, system: &Path) -> anyhow::Result<Places> {
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            Fail::new(
                Exit::Usage,
                "--discover needs HOME (the home directory) to find the user's configurations",
            )
        })?;
    let project = match project {
        Some(project) => PathBuf::from(project_key(project)?),
        None => std::env::current_dir().map_err(|e| {
            Fail::new(
                Exit::Unreadable,
                format!("cannot tell the current directory: {e}"),
            )
        })?,
    };
    Ok(Places {
        home,
        project,
        config_home: std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from),
        system: system.to_path_buf(),
    })
}

fn look(location: &Location) -> Found {
    let bytes = match read_found(&location.path) {
        Ok(bytes) => bytes,
        Err(Unread::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => {
            return Found::Absent;
        }
        Err(err) => return Found::Unreadable(err),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return Found::Refused("not UTF-8 text".to_owned());
    };
    match inspect_location(&text, location) {
        Ok(ids) => Found::Servers(ids),
        Err(err) => Found::Refused(err.to_string()),
    }
}

/// The command that captures a configuration: all of it, remote servers included, opening
/// each session as its client does (`--client`, when there is a profile for it), into a file
/// of its own.
fn command(location: &Location, output: &str) -> String {
    let mut command = format!(
        "mcppin-export --config {}",
        shell_word(&location.path.to_string_lossy())
    );
    if let Some(project) = &location.project {
        command.push_str(&format!(
            " --project {}",
            shell_word(&project.to_string_lossy())
        ));
    }
    if let Some(profile) = location.client.profile() {
        command.push_str(&format!(" --client {}", profile.name()));
    }
    command.push_str(&format!(" -o {}", shell_word(output)));
    escape(&command).into_owned()
}

/// A distinct manifest file name per location: `manifest-<client>-<scope>.json`, and where two
/// locations share client and scope (VS Code's user `mcp.json` and `settings.json`), the file
/// name of each added (`manifest-vscode-user-settings.json`).
fn output_names(locations: &[Location]) -> Vec<String> {
    let base = |l: &Location| format!("manifest-{}-{}", l.client.slug(), l.scope);
    locations
        .iter()
        .map(|location| {
            let name = base(location);
            let shared = locations.iter().filter(|l| base(l) == name).count() > 1;
            match location.path.file_stem() {
                Some(stem) if shared => {
                    let stem: String = stem
                        .to_string_lossy()
                        .chars()
                        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                        .collect();
                    format!("{name}-{}.json", stem.trim_matches('-'))
                }
                _ => format!("{name}.json"),
            }
        })
        .collect()
}

fn plural(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// The key Claude Code files a project under: its absolute path as the system resolves it
/// (Claude Code takes the working directory it runs in), without a trailing `/`; a path that
/// does not exist is only made absolute, from the current directory.
pub(crate) fn project_key(path: &Path) -> anyhow::Result<String> {
    let absolute = std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .map_err(|e| {
            Fail::new(
                Exit::Usage,
                format!("--project {}: {e}", escape(&path.display().to_string())),
            )
        })?;
    let text = absolute.to_string_lossy();
    let trimmed = text.trim_end_matches('/');
    Ok(if trimmed.is_empty() { "/" } else { trimmed }.to_owned())
}

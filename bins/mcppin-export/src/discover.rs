//! `mcppin-export --discover`: the client configurations found in their usual places, each
//! with its servers and the command that captures it. Reads only; never edits a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use mcppin_client::discover::{Listed, Location, Places, Platform, inspect, locations};
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

/// Lists the configurations under the home directory (`HOME`) and the project directory (the
/// current one) on stdout.
pub(crate) fn run() -> anyhow::Result<Exit> {
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            Fail::new(
                Exit::Usage,
                "--discover needs HOME (the home directory) to find the user's configurations",
            )
        })?;
    let project = std::env::current_dir().map_err(|e| {
        Fail::new(
            Exit::Unreadable,
            format!("cannot tell the current directory: {e}"),
        )
    })?;
    let places = Places {
        home,
        project,
        config_home: std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from),
    };
    let mut out = String::new();
    let (mut files, mut servers) = (0, 0);
    let mut absent = Vec::new();
    for location in locations(&places, Platform::current()) {
        let found = look(&location);
        let title = format!(
            "{} ({}): {}",
            location.client,
            location.scope,
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
                    command(&location.path)
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
    match inspect(&text, location.shared) {
        Ok(ids) => Found::Servers(ids),
        Err(err) => Found::Refused(err.to_string()),
    }
}

/// The command that captures a configuration: all of it, remote servers included.
fn command(path: &Path) -> String {
    let command = format!(
        "mcppin-export --config {} -o manifest.json",
        shell_word(&path.to_string_lossy())
    );
    escape(&command).into_owned()
}

fn plural(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

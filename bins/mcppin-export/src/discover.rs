//! `mcppin-export --discover`: the client configurations found in their usual places, each
//! with its servers and the command that captures it. Reads only; never edits a file.

use std::io::Write;
use std::path::PathBuf;

use mcppin_client::discover::{Location, Places, Platform, inspect, locations, shell_word};
use mcppin_core::escape;

use crate::exit::{Exit, Fail};

/// What was found at one location.
enum Found {
    Absent,
    Unreadable(std::io::Error),
    Refused(String),
    Servers(Vec<String>),
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
            Found::Servers(ids) => {
                servers += ids.len();
                let quoted: Vec<String> =
                    ids.iter().map(|id| format!("{:?}", escape(id))).collect();
                out.push_str(&format!(
                    "{title}\n  {}: {}\n  capture: mcppin-export --config {} -o manifest.json\n",
                    plural(ids.len(), "server"),
                    quoted.join(", "),
                    escape(&shell_word(&location.path))
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
    let bytes = match std::fs::read(&location.path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Found::Absent,
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

fn plural(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

//! The client configuration reader (JSON with comments) on arbitrary text: it must never
//! panic or overflow its stack, and a file too deep to read is refused the same way whether it
//! is read as a configuration or looked at by `--discover`; the same for the local scope of a
//! project in Claude Code's `~/.claude.json` (`parse_project`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

use mcppin_client::discover::{Client, Location, Scope, inspect, inspect_location};
use mcppin_client::{ClientConfig, Error};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = ClientConfig::parse(text);
    let listed = inspect(text, false);
    let _ = inspect(text, true);
    assert_eq!(
        matches!(parsed, Err(Error::ConfigDepth { .. })),
        matches!(listed, Err(Error::ConfigDepth { .. }))
    );
    if let Ok(config) = parsed {
        assert_eq!(listed.map(|l| l.len()).ok(), Some(config.servers.len()));
    }
    let project = ClientConfig::parse_project(text, "/p");
    let local = Location {
        client: Client::ClaudeCode,
        scope: Scope::Local,
        path: PathBuf::from("/h/.claude.json"),
        shared: true,
        project: Some(PathBuf::from("/p")),
    };
    let listed = inspect_location(text, &local);
    assert_eq!(
        matches!(project, Err(Error::ConfigDepth { .. })),
        matches!(listed, Err(Error::ConfigDepth { .. }))
    );
    if let Ok(config) = project {
        assert_eq!(listed.map(|l| l.len()).ok(), Some(config.servers.len()));
    }
});

//! Where MCP clients keep their configurations, and which servers a configuration names.
//!
//! [`locations`] lists the usual files of Claude Desktop, Claude Code, Cursor, VS Code and
//! Windsurf for a home directory, a project directory and a system root the caller passes
//! (this crate reads no environment); [`inspect`] reads the text of one of them. Nothing here reads, writes or
//! edits a file: the caller reads each location and reports what it found.

use std::fmt;
use std::path::PathBuf;

use jsonc_parser::JsonValue;

use crate::{ClientConfig, ClientProfile, Error, ServerEntry};

/// An MCP client whose configuration files are known.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[non_exhaustive]
pub enum Client {
    /// Claude Desktop.
    ClaudeDesktop,
    /// Claude Code.
    ClaudeCode,
    /// Cursor.
    Cursor,
    /// Visual Studio Code.
    VsCode,
    /// Windsurf.
    Windsurf,
}

impl Client {
    /// The `--client` profile that opens sessions as this client does, when there is one.
    #[must_use]
    pub fn profile(self) -> Option<ClientProfile> {
        match self {
            Self::ClaudeDesktop => Some(ClientProfile::ClaudeDesktop),
            Self::ClaudeCode => Some(ClientProfile::ClaudeCode),
            Self::Cursor => Some(ClientProfile::Cursor),
            Self::VsCode => Some(ClientProfile::VsCode),
            Self::Windsurf => None,
        }
    }

    /// A short lowercase name for file names (`claude-code`).
    #[must_use]
    pub fn slug(self) -> &'static str {
        match self {
            Self::ClaudeDesktop => "claude-desktop",
            Self::ClaudeCode => "claude-code",
            Self::Cursor => "cursor",
            Self::VsCode => "vscode",
            Self::Windsurf => "windsurf",
        }
    }
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ClaudeDesktop => "Claude Desktop",
            Self::ClaudeCode => "Claude Code",
            Self::Cursor => "Cursor",
            Self::VsCode => "VS Code",
            Self::Windsurf => "Windsurf",
        })
    }
}

/// Whose servers a file holds.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[non_exhaustive]
pub enum Scope {
    /// The user's, for every project.
    User,
    /// One project's, in the project directory.
    Project,
    /// One project's, kept in the user's file (Claude Code's default scope: the servers of
    /// `projects.<project path>.mcpServers` in `~/.claude.json`).
    Local,
    /// The organisation's, deployed by an administrator to a system directory (Claude Code's
    /// `managed-mcp.json`, which, when present, is the only source of servers Claude Code
    /// loads).
    Managed,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Local => "local",
            Self::Managed => "managed",
        })
    }
}

/// The operating system whose locations to list.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Platform {
    /// Linux (and other systems with XDG directories).
    Linux,
    /// macOS.
    MacOs,
}

impl Platform {
    /// The platform this build is for.
    #[must_use]
    pub fn current() -> Self {
        if cfg!(target_os = "macos") {
            Self::MacOs
        } else {
            Self::Linux
        }
    }
}

/// The directories locations are found from, given by the caller.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Places {
    /// The user's home directory (`HOME`).
    pub home: PathBuf,
    /// The project directory (where the command runs).
    pub project: PathBuf,
    /// The user's configuration directory on Linux (`XDG_CONFIG_HOME`), when set; else
    /// `~/.config`.
    pub config_home: Option<PathBuf>,
    /// The root system-wide files are found under: `/` (a test passes a directory of its
    /// own).
    pub system: PathBuf,
}

/// One place a client keeps a configuration.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Location {
    /// The client that reads it.
    pub client: Client,
    /// Whose servers it holds.
    pub scope: Scope,
    /// The file.
    pub path: PathBuf,
    /// Whether the file holds other settings beside servers (`~/.claude.json`, VS Code's
    /// `settings.json`): without a server table it simply configures none.
    pub shared: bool,
    /// For [`Scope::Local`], the project whose servers these are: the key under `projects`
    /// (the project directory, as given).
    pub project: Option<PathBuf>,
}

/// The usual configuration files of every known client on `platform`, in a fixed order: per
/// client, an administrator's file first, then the user's, then the project's.
///
/// # Examples
///
/// ```
/// use std::path::PathBuf;
/// use mcppin_client::discover::{Client, Places, Platform, locations};
///
/// let places = Places {
///     home: PathBuf::from("/home/me"),
///     project: PathBuf::from("/home/me/app"),
///     config_home: None,
///     system: PathBuf::from("/"),
/// };
/// let found = locations(&places, Platform::Linux);
/// let cursor: Vec<_> = found.iter().filter(|l| l.client == Client::Cursor).collect();
/// assert_eq!(cursor[0].path, PathBuf::from("/home/me/.cursor/mcp.json"));
/// assert_eq!(cursor[1].path, PathBuf::from("/home/me/app/.cursor/mcp.json"));
/// let code = found.iter().find(|l| l.client == Client::ClaudeCode).unwrap();
/// assert_eq!(code.path, PathBuf::from("/etc/claude-code/managed-mcp.json"));
/// ```
#[must_use]
pub fn locations(places: &Places, platform: Platform) -> Vec<Location> {
    let home = places.home.as_path();
    let project = places.project.as_path();
    // Where desktop applications keep their user data: Electron's "appData" directory.
    let app_data = match platform {
        Platform::MacOs => home.join("Library/Application Support"),
        Platform::Linux => places
            .config_home
            .clone()
            .filter(|dir| dir.is_absolute())
            .unwrap_or_else(|| home.join(".config")),
    };
    // Where Claude Code's administrators deploy `managed-mcp.json` (its "MCP" page, managed
    // configuration: system-wide directories, not the user's home).
    let managed = match platform {
        Platform::MacOs => places
            .system
            .join("Library/Application Support/ClaudeCode/managed-mcp.json"),
        Platform::Linux => places.system.join("etc/claude-code/managed-mcp.json"),
    };
    let at = |client, scope, path: PathBuf| Location {
        client,
        scope,
        path,
        shared: false,
        project: None,
    };
    let shared = |client, scope, path: PathBuf| Location {
        client,
        scope,
        path,
        shared: true,
        project: None,
    };
    vec![
        at(
            Client::ClaudeDesktop,
            Scope::User,
            app_data.join("Claude/claude_desktop_config.json"),
        ),
        at(Client::ClaudeCode, Scope::Managed, managed),
        shared(Client::ClaudeCode, Scope::User, home.join(".claude.json")),
        Location {
            project: Some(project.to_path_buf()),
            ..shared(Client::ClaudeCode, Scope::Local, home.join(".claude.json"))
        },
        at(
            Client::ClaudeCode,
            Scope::Project,
            project.join(".mcp.json"),
        ),
        at(Client::Cursor, Scope::User, home.join(".cursor/mcp.json")),
        at(
            Client::Cursor,
            Scope::Project,
            project.join(".cursor/mcp.json"),
        ),
        at(
            Client::VsCode,
            Scope::User,
            app_data.join("Code/User/mcp.json"),
        ),
        shared(
            Client::VsCode,
            Scope::User,
            app_data.join("Code/User/settings.json"),
        ),
        at(
            Client::VsCode,
            Scope::Project,
            project.join(".vscode/mcp.json"),
        ),
        at(
            Client::Windsurf,
            Scope::User,
            home.join(".codeium/windsurf/mcp_config.json"),
        ),
    ]
}

/// One server a configuration names.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Listed {
    /// The server id (the key of its entry).
    pub id: String,
    /// Whether it is a remote server (`url`), captured over HTTP.
    pub remote: bool,
}

/// The servers a configuration file names, in id order.
///
/// A file that holds other settings ([`Location::shared`]) and no server table names none; any
/// other file must be a configuration [`ClientConfig::parse`] reads.
///
/// # Errors
///
/// As [`ClientConfig::parse`]: the text is not JSON (with comments), or it is not a client
/// configuration.
///
/// # Examples
///
/// ```
/// use mcppin_client::discover::{Listed, inspect};
///
/// let text = r#"{"mcpServers": {"docs": {"command": "d"}, "web": {"url": "https://x"}}}"#;
/// assert_eq!(
///     inspect(text, false)?,
///     [
///         Listed { id: "docs".to_owned(), remote: false },
///         Listed { id: "web".to_owned(), remote: true },
///     ]
/// );
/// assert!(inspect(r#"{"theme": "dark"}"#, true)?.is_empty());
/// assert!(inspect(r#"{"theme": "dark"}"#, false).is_err());
/// # Ok::<(), mcppin_client::Error>(())
/// ```
pub fn inspect(text: &str, shared: bool) -> Result<Vec<Listed>, Error> {
    if shared && !has_server_table(text) {
        return Ok(Vec::new());
    }
    Ok(ClientConfig::parse(text)?
        .servers
        .into_iter()
        .map(|(id, entry)| Listed {
            id,
            remote: matches!(entry, ServerEntry::Http(_)),
        })
        .collect())
}

/// The servers `location` names in `text`, the file's contents: for [`Scope::Local`] the
/// servers of its project (none when the file has no entry for the project: Claude Code adds
/// one only once the project is used), else as [`inspect`].
///
/// # Errors
///
/// As [`inspect`] and [`ClientConfig::parse_project`].
pub fn inspect_location(text: &str, location: &Location) -> Result<Vec<Listed>, Error> {
    let Some(project) = &location.project else {
        return inspect(text, location.shared);
    };
    if !has_project(text, &project.to_string_lossy()) {
        return Ok(Vec::new());
    }
    Ok(
        ClientConfig::parse_project(text, &project.to_string_lossy())?
            .servers
            .into_iter()
            .map(|(id, entry)| Listed {
                id,
                remote: matches!(entry, ServerEntry::Http(_)),
            })
            .collect(),
    )
}

/// Whether the text is a JSON object whose `projects` object has an entry for `project`.
/// Text that is not JSON has one here; [`ClientConfig::parse_project`] says what is wrong.
fn has_project(text: &str, project: &str) -> bool {
    // The bounded reader: a file too deep is refused by `parse_project`, never read here.
    let Ok(Some(JsonValue::Object(root))) = crate::config::parse_jsonc(text) else {
        return true;
    };
    matches!(root.get("projects"), Some(JsonValue::Object(projects)) if projects.get(project).is_some())
}

/// Whether the text is a JSON object with one of the server tables a configuration reads.
/// Text that is not JSON has none here; [`ClientConfig::parse`] says what is wrong with it.
fn has_server_table(text: &str) -> bool {
    let Ok(Some(JsonValue::Object(root))) = crate::config::parse_jsonc(text) else {
        return true;
    };
    let is_object = |value: Option<&JsonValue<'_>>| matches!(value, Some(JsonValue::Object(_)));
    is_object(root.get("mcpServers"))
        || is_object(root.get("servers"))
        || matches!(root.get("mcp"), Some(JsonValue::Object(mcp)) if is_object(mcp.get("servers")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places() -> Places {
        Places {
            home: PathBuf::from("/h"),
            project: PathBuf::from("/p"),
            config_home: None,
            system: PathBuf::from("/s"),
        }
    }

    fn paths(found: &[Location]) -> Vec<String> {
        found.iter().map(|l| l.path.display().to_string()).collect()
    }

    #[test]
    fn lists_every_client_on_linux() {
        assert_eq!(
            paths(&locations(&places(), Platform::Linux)),
            [
                "/h/.config/Claude/claude_desktop_config.json",
                "/s/etc/claude-code/managed-mcp.json",
                "/h/.claude.json",
                "/h/.claude.json",
                "/p/.mcp.json",
                "/h/.cursor/mcp.json",
                "/p/.cursor/mcp.json",
                "/h/.config/Code/User/mcp.json",
                "/h/.config/Code/User/settings.json",
                "/p/.vscode/mcp.json",
                "/h/.codeium/windsurf/mcp_config.json",
            ]
        );
    }

    #[test]
    fn follows_the_configuration_directory_when_it_is_absolute() {
        let mut places = places();
        places.config_home = Some(PathBuf::from("/xdg"));
        let found = paths(&locations(&places, Platform::Linux));
        assert_eq!(found[0], "/xdg/Claude/claude_desktop_config.json");
        assert_eq!(found[7], "/xdg/Code/User/mcp.json");
        places.config_home = Some(PathBuf::from("relative"));
        let found = paths(&locations(&places, Platform::Linux));
        assert_eq!(found[0], "/h/.config/Claude/claude_desktop_config.json");
    }

    #[test]
    fn lists_application_support_on_macos() {
        let found = paths(&locations(&places(), Platform::MacOs));
        assert_eq!(
            found[0],
            "/h/Library/Application Support/Claude/claude_desktop_config.json"
        );
        assert_eq!(
            found[7],
            "/h/Library/Application Support/Code/User/mcp.json"
        );
        // Claude Code's managed file is system-wide, not under the user's Library.
        assert_eq!(
            found[1],
            "/s/Library/Application Support/ClaudeCode/managed-mcp.json"
        );
        assert_eq!(found[2], "/h/.claude.json");
    }

    #[test]
    fn claude_code_has_a_managed_scope_read_as_a_project_file() {
        let found = locations(&places(), Platform::Linux);
        let managed: Vec<_> = found.iter().filter(|l| l.scope == Scope::Managed).collect();
        assert_eq!(managed.len(), 1);
        let managed = managed[0];
        assert_eq!(managed.client, Client::ClaudeCode);
        assert!(!managed.shared && managed.project.is_none());
        // The same shape as `.mcp.json`; an empty table (MCP turned off) names no server.
        let text = r#"{"mcpServers": {"approved": {"command": "a"}}}"#;
        assert_eq!(
            ids(&inspect_location(text, managed).unwrap()),
            [("approved", false)]
        );
        assert!(
            inspect_location(r#"{"mcpServers": {}}"#, managed)
                .unwrap()
                .is_empty()
        );
        assert!(inspect_location(r#"{"theme": "dark"}"#, managed).is_err());
    }

    #[test]
    fn a_shared_file_without_servers_names_none_and_a_dedicated_one_is_refused() {
        assert_eq!(
            inspect("{\"projects\": {}}", true).unwrap(),
            Vec::<Listed>::new()
        );
        assert!(matches!(
            inspect("{\"projects\": {}}", false),
            Err(Error::ConfigShape { server: None, .. })
        ));
        // A shared file with a broken table, or broken JSON, is still an error.
        assert!(inspect("{\"mcpServers\": {\"a\": 1}}", true).is_err());
        assert!(matches!(
            inspect("{\"mcpServers\": ", true),
            Err(Error::ConfigSyntax { .. })
        ));
    }

    #[test]
    fn claude_code_has_a_local_scope_for_the_project() {
        // `claude mcp add` puts a server under projects.<path> by default.
        let found = locations(&places(), Platform::Linux);
        let local: Vec<_> = found.iter().filter(|l| l.scope == Scope::Local).collect();
        assert_eq!(local.len(), 1);
        assert_eq!(local[0].client, Client::ClaudeCode);
        assert_eq!(local[0].path, PathBuf::from("/h/.claude.json"));
        assert_eq!(local[0].project, Some(PathBuf::from("/p")));
        assert!(
            found
                .iter()
                .all(|l| (l.scope == Scope::Local) == l.project.is_some())
        );
    }

    #[test]
    fn reads_the_local_scope_of_the_project_only() {
        let text = r#"{"mcpServers": {"user-wide": {"command": "u"}},
            "projects": {"/p": {"mcpServers": {"db": {"command": "x"}, "web": {"url": "https://w"}}},
                         "/other": {"mcpServers": {"not-this": {"command": "y"}}}}}"#;
        let found = locations(&places(), Platform::Linux);
        let user = found
            .iter()
            .find(|l| l.path.ends_with(".claude.json"))
            .unwrap();
        let local = found.iter().find(|l| l.scope == Scope::Local).unwrap();
        assert_eq!(
            ids(&inspect_location(text, user).unwrap()),
            [("user-wide", false)]
        );
        assert_eq!(
            ids(&inspect_location(text, local).unwrap()),
            [("db", false), ("web", true)]
        );
        // A project Claude Code has not seen, or one without servers, has none.
        let mut elsewhere = local.clone();
        elsewhere.project = Some(PathBuf::from("/new"));
        assert!(inspect_location(text, &elsewhere).unwrap().is_empty());
        let bare = r#"{"projects": {"/p": {"allowedTools": []}}}"#;
        assert!(inspect_location(bare, local).unwrap().is_empty());
        // A broken entry of the project is an error, as anywhere else.
        let broken = r#"{"projects": {"/p": {"mcpServers": {"a": 1}}}}"#;
        assert!(matches!(
            inspect_location(broken, local),
            Err(Error::ConfigShape { server: Some(ref s), .. }) if s == "a"
        ));
    }

    #[test]
    fn every_client_but_windsurf_has_a_profile() {
        assert_eq!(
            Client::ClaudeCode.profile(),
            Some(ClientProfile::ClaudeCode)
        );
        assert_eq!(Client::VsCode.profile(), Some(ClientProfile::VsCode));
        assert_eq!(Client::Windsurf.profile(), None);
    }

    fn ids(listed: &[Listed]) -> Vec<(&str, bool)> {
        listed.iter().map(|l| (l.id.as_str(), l.remote)).collect()
    }

    #[test]
    fn names_the_servers_of_every_shape() {
        let vs = r#"{"servers": {"b": {"type": "stdio", "command": "x"}, "a": {"url": "u"}}}"#;
        assert_eq!(
            ids(&inspect(vs, false).unwrap()),
            [("a", true), ("b", false)]
        );
        let settings = r#"{"mcp": {"servers": {"s": {"command": "x"}}}, // comment
            "editor.tabSize": 2,}"#;
        assert_eq!(ids(&inspect(settings, true).unwrap()), [("s", false)]);
        let windsurf = r#"{"mcpServers": {"w": {"serverUrl": "https://x"}}}"#;
        assert_eq!(ids(&inspect(windsurf, false).unwrap()), [("w", true)]);
    }
}

//! Client configuration files (docs/export.md): which servers an agent runs, and how.
//!
//! Three shapes are read: `{"mcpServers": {...}}` (Claude Desktop, Claude Code `.mcp.json`,
//! Cursor, Windsurf), VS Code's `{"servers": {...}}` with a `type` per server, and
//! `{"mcp": {"servers": {...}}}` inside VS Code user settings. The file is the user's own, so
//! comments and trailing commas are accepted; unknown keys are ignored (and never rewritten:
//! nothing here writes a configuration). `${VAR}` and `${env:VAR}` expand from an environment
//! map the caller passes; VS Code's `${input:ID}`, `${workspaceFolder}` and its other editor
//! variables from the [`Variables`] the caller passes, and `envFile` through
//! [`parse_env_file`] (the caller reads the file). An entry that runs `mcppin-guard ... --
//! CMD ARGS` is read as `CMD ARGS`: the configuration the client runs through the guard is
//! the one the export captures; the guard's part is kept for the launch identity
//! ([`StdioServer::guard`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jsonc_parser::tokens::Token;
use jsonc_parser::{JsonObject, JsonValue, ParseOptions};
use mcppin_core::launch::{GUARD_ENV, Guard, Launch};

use crate::Error;
use crate::error::quoted;

/// A parsed client configuration: its servers by id (the key of the server entry).
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct ClientConfig {
    /// The servers, ordered by id.
    pub servers: BTreeMap<String, ServerEntry>,
    /// The line (from 1) of each server's key in the file, by id: where a report about the
    /// entry points.
    pub lines: BTreeMap<String, usize>,
}

/// One configured server.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum ServerEntry {
    /// A server started as a process and spoken to over stdio.
    Stdio(StdioServer),
    /// A server reached over HTTP (`url`, or Windsurf's `serverUrl`).
    Http(HttpServer),
}

/// How a remote server is spoken to: the configuration's `type`.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum HttpKind {
    /// `http`, `streamable-http` or `streamableHttp`: Streamable HTTP (2025-03-26 on).
    Streamable,
    /// `sse`: the HTTP+SSE transport of 2024-11-05 (GET an event stream, POST to the
    /// endpoint it names).
    Sse,
    /// No `type`: Streamable HTTP, falling back to HTTP+SSE when the server refuses the first
    /// POST the way an HTTP+SSE server does (2025-03-26, "Backwards Compatibility").
    Detect,
}

/// A remote server: its URL and the headers to send, variables not yet expanded.
///
/// # Security
///
/// Header values and the URL's query and userinfo are secrets (tokens, API keys):
/// [`crate::http::Secrets`] collects them so that nothing shown or written repeats them.
#[derive(Clone, Eq, PartialEq)]
pub struct HttpServer {
    /// `url` (or `serverUrl`).
    pub url: String,
    /// `type`.
    pub kind: HttpKind,
    /// `headers`, by name.
    pub headers: BTreeMap<String, String>,
}

impl std::fmt::Debug for HttpServer {
    /// Shows the URL's origin, the kind and the header names only: header values and the
    /// URL's path, query and userinfo may hold secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("origin", &crate::redact::origin(&self.url))
            .field("kind", &self.kind)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl HttpServer {
    /// The server with `${VAR}`, `${env:VAR}` and `${VAR:-default}` expanded from
    /// `environment` in its URL and header values.
    ///
    /// # Errors
    ///
    /// As [`StdioServer::expand`].
    pub fn expand(&self, id: &str, environment: &BTreeMap<String, String>) -> Result<Self, Error> {
        self.expand_with(id, &Variables::environment(environment))
    }

    /// The server with every variable of [`Variables`] expanded in its URL and header values
    /// (VS Code's `${input:ID}` is the usual way to give a remote server its token).
    ///
    /// # Errors
    ///
    /// As [`StdioServer::expand_with`].
    pub fn expand_with(&self, id: &str, variables: &Variables<'_>) -> Result<Self, Error> {
        let x = |text: &str| expand(id, text, variables);
        Ok(Self {
            url: x(&self.url)?,
            kind: self.kind,
            headers: self
                .headers
                .iter()
                .map(|(k, v)| Ok((k.clone(), x(v)?)))
                .collect::<Result<_, Error>>()?,
        })
    }

    /// How the server is reached, as the configuration writes it before expansion: its URL
    /// without query, fragment or user information (header values are never recorded).
    #[must_use]
    pub fn launch(&self) -> Launch {
        Launch::remote(&self.url)
    }
}

/// A stdio server: what to run, with variables already expanded.
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct StdioServer {
    /// `command`.
    pub command: String,
    /// `args`.
    pub args: Vec<String>,
    /// `env`: variables set for the server on top of the inherited ones.
    pub env: BTreeMap<String, String>,
    /// `cwd`.
    pub cwd: Option<PathBuf>,
    /// `envFile` (VS Code): a file of `NAME=value` lines the server's environment starts from;
    /// `env` wins over it. The caller reads it ([`parse_env_file`], [`StdioServer::add_env_file`]).
    pub env_file: Option<PathBuf>,
    /// The `mcppin-guard` the entry runs the server behind, as written (`command` and `args`
    /// are then the server's, after the guard's `--`): part of the launch, never run by the
    /// export.
    pub guard: Option<Guard>,
}

/// What the variables of a configuration expand to.
///
/// `${VAR}`, `${env:VAR}` and `${VAR:-default}` come from `environment`; the rest are VS
/// Code's: `${input:ID}` from `inputs` (the editor prompts for them, the export takes them from
/// `--input ID=VALUE`), `${workspaceFolder}` and `${workspaceFolderBasename}` from `workspace`
/// (`--workspace DIR`), `${userHome}` from `HOME`, `${pathSeparator}` and `${/}` are `/`.
#[derive(Clone, Copy, Debug)]
pub struct Variables<'a> {
    /// The environment variables.
    pub environment: &'a BTreeMap<String, String>,
    /// The answers to VS Code's input prompts, by input id.
    pub inputs: &'a BTreeMap<String, String>,
    /// The folder VS Code has open, for `${workspaceFolder}`.
    pub workspace: Option<&'a Path>,
}

/// No answers to VS Code's prompts.
static NO_INPUTS: BTreeMap<String, String> = BTreeMap::new();

impl<'a> Variables<'a> {
    /// The variables of `environment` alone: no `${input:ID}` answers, no workspace.
    #[must_use]
    pub fn environment(environment: &'a BTreeMap<String, String>) -> Self {
        Self {
            environment,
            inputs: &NO_INPUTS,
            workspace: None,
        }
    }
}

/// VS Code variables that describe the editor's state at the moment (the open file, the
/// selection, ...): nothing outside the editor knows them.
const EDITOR_VARIABLES: [&str; 16] = [
    "file",
    "fileWorkspaceFolder",
    "relativeFile",
    "relativeFileDirname",
    "fileBasename",
    "fileBasenameNoExtension",
    "fileExtname",
    "fileDirname",
    "fileDirnameBasename",
    "cwd",
    "lineNumber",
    "columnNumber",
    "selectedText",
    "execPath",
    "defaultBuildTask",
    "workspaceRoot",
];

impl ClientConfig {
    /// Reads a configuration. Variables are left as written: [`StdioServer::expand`] resolves
    /// them for the servers actually run, so a server that is not selected cannot fail the
    /// others.
    ///
    /// # Errors
    ///
    /// [`Error::ConfigSyntax`] when the text is not JSON (with comments), [`Error::ConfigShape`]
    /// when it holds no server table or a server entry is not what a client would run.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use mcppin_client::{ClientConfig, ServerEntry};
    ///
    /// let text = r#"{
    ///   // Claude Desktop
    ///   "mcpServers": {
    ///     "files": {"command": "npx", "args": ["-y", "server-filesystem", "${HOME}"],},
    ///   },
    /// }"#;
    /// let config = ClientConfig::parse(text)?;
    /// let ServerEntry::Stdio(files) = &config.servers["files"] else { unreachable!() };
    /// let env = BTreeMap::from([("HOME".to_owned(), "/home/me".to_owned())]);
    /// let files = files.expand("files", &env)?;
    /// assert_eq!(files.args, ["-y", "server-filesystem", "/home/me"]);
    /// # Ok::<(), mcppin_client::Error>(())
    /// ```
    pub fn parse(text: &str) -> Result<Self, Error> {
        let root = parse_jsonc(text)?.ok_or_else(|| Error::ConfigSyntax {
            message: "the file holds no JSON value".to_owned(),
        })?;
        let JsonValue::Object(mut root) = root else {
            return Err(shape(None, "the top level is not an object"));
        };
        let table = if let Some(table) = root.take_object("mcpServers") {
            table
        } else if let Some(table) = root.take_object("servers") {
            table
        } else if let Some(table) = root
            .take_object("mcp")
            .and_then(|mut mcp| mcp.take_object("servers"))
        {
            table
        } else {
            return Err(shape(
                None,
                "no \"mcpServers\", \"servers\" or \"mcp\": {\"servers\"} object",
            ));
        };
        let mut config = read_table(table)?;
        config.lines = entry_lines(text, None);
        Ok(config)
    }

    /// Reads the servers of one project's *local* scope in Claude Code's user file
    /// (`~/.claude.json`): `projects.<project>.mcpServers`, where `claude mcp add` puts a
    /// server by default. `project` is the key as Claude Code writes it, the project's
    /// absolute path.
    ///
    /// A project whose entry has no `mcpServers` has no servers.
    ///
    /// # Errors
    ///
    /// [`Error::ConfigSyntax`] as [`ClientConfig::parse`]; [`Error::ConfigShape`] when the file
    /// has no `projects` object, no entry for `project` (the message lists the projects it
    /// has), or an entry is not a server a client runs.
    ///
    /// # Examples
    ///
    /// ```
    /// use mcppin_client::ClientConfig;
    ///
    /// let text = r#"{"mcpServers": {}, "projects": {"/home/me/app": {
    ///     "mcpServers": {"db": {"command": "uvx", "args": ["mcp-server-sqlite"]}}}}}"#;
    /// let config = ClientConfig::parse_project(text, "/home/me/app")?;
    /// assert!(config.servers.contains_key("db"));
    /// assert!(ClientConfig::parse_project(text, "/elsewhere").is_err());
    /// # Ok::<(), mcppin_client::Error>(())
    /// ```
    pub fn parse_project(text: &str, project: &str) -> Result<Self, Error> {
        let root = parse_jsonc(text)?.ok_or_else(|| Error::ConfigSyntax {
            message: "the file holds no JSON value".to_owned(),
        })?;
        let JsonValue::Object(mut root) = root else {
            return Err(shape(None, "the top level is not an object"));
        };
        let Some(mut projects) = root.take_object("projects") else {
            return Err(shape(
                None,
                "no \"projects\" object: a project's local scope is read from Claude Code's \
                 ~/.claude.json",
            ));
        };
        let Some(mut entry) = projects.take_object(project) else {
            let known: Vec<String> = projects.into_iter().map(|(key, _)| quoted(&key)).collect();
            return Err(shape(
                None,
                &format!(
                    "no project {} under \"projects\" (it has {})",
                    quoted(project),
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        };
        match entry.take_object("mcpServers") {
            Some(table) => {
                let mut config = read_table(table)?;
                config.lines = entry_lines(text, Some(project));
                Ok(config)
            }
            None => Ok(Self::default()),
        }
    }
}

/// Reads a server table: each entry by its id.
fn read_table(table: JsonObject<'_>) -> Result<ClientConfig, Error> {
    let mut servers = BTreeMap::new();
    for (id, entry) in table {
        let JsonValue::Object(entry) = entry else {
            return Err(shape(Some(&id), "the entry is not an object"));
        };
        let server = read_entry(&id, entry)?;
        servers.insert(id, server);
    }
    Ok(ClientConfig {
        servers,
        lines: BTreeMap::new(),
    })
}

/// The line of each server's key in the server table `ClientConfig::parse` reads (or, with
/// `project`, `projects.<project>.mcpServers`), read from the syntax tree of the same parser;
/// a key written twice is at its last line, the entry that is read.
fn entry_lines(text: &str, project: Option<&str>) -> BTreeMap<String, usize> {
    use jsonc_parser::ast::{Object, Value};
    let mut lines = BTreeMap::new();
    let Ok(parsed) =
        jsonc_parser::parse_to_ast(text, &Default::default(), &ParseOptions::default())
    else {
        return lines;
    };
    let Some(Value::Object(root)) = parsed.value else {
        return lines;
    };
    let table: Option<&Object<'_>> = match project {
        Some(project) => root
            .get_object("projects")
            .and_then(|p| p.get_object(project))
            .and_then(|p| p.get_object("mcpServers")),
        None => root
            .get_object("mcpServers")
            .or_else(|| root.get_object("servers"))
            .or_else(|| root.get_object("mcp").and_then(|m| m.get_object("servers"))),
    };
    for prop in table.map(|t| t.properties.as_slice()).unwrap_or_default() {
        let line = text
            .get(..prop.range.start)
            .map_or(0, |before| before.matches('\n').count())
            + 1;
        lines.insert(prop.name.clone().into_string(), line);
    }
    lines
}

/// The deepest nesting of arrays and objects a client configuration may have. Real ones nest
/// a handful of levels (VS Code settings: `mcp`, `servers`, an entry, `env`); the JSONC parser
/// recurses once per level, so a file nesting thousands would exhaust the stack.
pub const MAX_DEPTH: usize = 64;

/// Parses JSON with comments and trailing commas, once its nesting is known to stay within
/// [`MAX_DEPTH`]. The depth is counted on the parser's own tokens, so strings and comments
/// holding brackets are read as the parser reads them; where the tokens stop making sense the
/// parser reports the error, having recursed no deeper than what was counted.
pub(crate) fn parse_jsonc(text: &str) -> Result<Option<JsonValue<'_>>, Error> {
    check_depth(text)?;
    jsonc_parser::parse_to_value(text, &ParseOptions::default()).map_err(|err| {
        Error::ConfigSyntax {
            message: err.to_string(),
        }
    })
}

/// Refuses text whose arrays and objects nest deeper than [`MAX_DEPTH`], naming the line
/// and column of the first bracket too deep.
fn check_depth(text: &str) -> Result<(), Error> {
    let mut scanner = jsonc_parser::Scanner::new(text);
    let mut depth = 0usize;
    while let Ok(Some(token)) = scanner.scan() {
        match token {
            Token::OpenBrace | Token::OpenBracket => {
                depth += 1;
                if depth > MAX_DEPTH {
                    let before = &text[..scanner.token_start()];
                    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
                    return Err(Error::ConfigDepth {
                        limit: MAX_DEPTH,
                        line: before.matches('\n').count() + 1,
                        column: before[line_start..].chars().count() + 1,
                    });
                }
            }
            Token::CloseBrace | Token::CloseBracket => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn read_entry(id: &str, mut entry: JsonObject<'_>) -> Result<ServerEntry, Error> {
    let kind = entry.take_string("type").map(|t| t.into_owned());
    // Windsurf spells it `serverUrl`.
    if let Some(url) = entry
        .take_string("url")
        .or_else(|| entry.take_string("serverUrl"))
    {
        return read_http(id, url.into_owned(), kind.as_deref(), entry);
    }
    match kind.as_deref() {
        None | Some("stdio") => {}
        Some(other) => {
            return Err(Error::ConfigShape {
                server: Some(id.to_owned()),
                problem: format!("type {other:?} needs a url, and this entry has none"),
            });
        }
    }
    let command = match entry.take("command") {
        Some(JsonValue::String(c)) => c.into_owned(),
        Some(_) => return Err(shape(Some(id), "\"command\" is not a string")),
        None => return Err(shape(Some(id), "neither \"command\" nor \"url\"")),
    };
    let mut args = Vec::new();
    match entry.take("args") {
        None | Some(JsonValue::Null) => {}
        Some(JsonValue::Array(list)) => {
            for arg in list {
                let JsonValue::String(arg) = arg else {
                    return Err(shape(Some(id), "an argument is not a string"));
                };
                args.push(arg.into_owned());
            }
        }
        Some(_) => return Err(shape(Some(id), "\"args\" is not an array")),
    }
    let mut env = BTreeMap::new();
    match entry.take("env") {
        None | Some(JsonValue::Null) => {}
        Some(JsonValue::Object(vars)) => {
            for (name, value) in vars {
                let value = match value {
                    JsonValue::String(v) => v.into_owned(),
                    JsonValue::Number(n) => n.to_owned(),
                    JsonValue::Boolean(b) => b.to_string(),
                    _ => return Err(shape(Some(id), "an \"env\" value is not a string")),
                };
                env.insert(name, value);
            }
        }
        Some(_) => return Err(shape(Some(id), "\"env\" is not an object")),
    }
    let cwd = match entry.take("cwd") {
        None | Some(JsonValue::Null) => None,
        Some(JsonValue::String(dir)) => Some(PathBuf::from(dir.into_owned())),
        Some(_) => return Err(shape(Some(id), "\"cwd\" is not a string")),
    };
    let env_file = match entry.take("envFile") {
        None | Some(JsonValue::Null) => None,
        Some(JsonValue::String(file)) => Some(PathBuf::from(file.into_owned())),
        Some(_) => return Err(shape(Some(id), "\"envFile\" is not a string")),
    };
    let (command, args, mut guard) = unguarded(id, command, args)?;
    if let Some(guard) = &mut guard {
        // The guard's settings are the guard's, not the server's: the guard keeps them from
        // the server's environment too.
        for name in GUARD_ENV {
            if let Some(value) = env.remove(name) {
                guard.env.insert(name.to_owned(), value);
            }
        }
    }
    Ok(ServerEntry::Stdio(StdioServer {
        command,
        args,
        env,
        cwd,
        env_file,
        guard,
    }))
}

fn read_http(
    id: &str,
    url: String,
    kind: Option<&str>,
    mut entry: JsonObject<'_>,
) -> Result<ServerEntry, Error> {
    let kind = match kind {
        None => HttpKind::Detect,
        Some("http" | "streamable-http" | "streamableHttp") => HttpKind::Streamable,
        Some("sse") => HttpKind::Sse,
        Some(other) => {
            return Err(Error::ConfigShape {
                server: Some(id.to_owned()),
                problem: format!(
                    "type {} with a url: expected \"http\", \"streamable-http\" or \"sse\"",
                    quoted(other)
                ),
            });
        }
    };
    let mut headers = BTreeMap::new();
    match entry.take("headers") {
        None | Some(JsonValue::Null) => {}
        Some(JsonValue::Object(table)) => {
            for (name, value) in table {
                let JsonValue::String(value) = value else {
                    return Err(shape(Some(id), "a \"headers\" value is not a string"));
                };
                headers.insert(name, value.into_owned());
            }
        }
        Some(_) => return Err(shape(Some(id), "\"headers\" is not an object")),
    }
    Ok(ServerEntry::Http(HttpServer { url, kind, headers }))
}

/// The server behind `mcppin-guard ... -- CMD ARGS`: `CMD ARGS` and the guard's part; any
/// other command as it is.
///
/// The guard stands where the server command was (docs/guard.md), so a configuration guarded
/// for the client names the server after the guard's `--`. Capturing the guard itself would
/// capture the server through a lock that may not hold yet; the guard's part is recorded in
/// the launch instead, so that removing the guard or editing its settings is a change.
fn unguarded(
    id: &str,
    command: String,
    args: Vec<String>,
) -> Result<(String, Vec<String>, Option<Guard>), Error> {
    let program = Path::new(&command)
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or_default();
    if program != "mcppin-guard" && program != "mcppin-guard.exe" {
        return Ok((command, args, None));
    }
    // The server command may come first, with the settings in the entry's `env`: the guard
    // reads a first word that is not a flag as the server command.
    if args.first().is_some_and(|first| !first.starts_with('-')) {
        let mut server = args.into_iter();
        let server_command = server.next().unwrap_or_default();
        let guard = Guard {
            command,
            args: Vec::new(),
            env: BTreeMap::new(),
        };
        return Ok((server_command, server.collect(), Some(guard)));
    }
    let Some(split) = args.iter().position(|arg| arg == "--") else {
        return Err(shape(
            Some(id),
            "the entry runs mcppin-guard without \"--\" and the server command after it",
        ));
    };
    let mut args = args;
    let server_args = args.split_off(split + 1);
    args.pop();
    let mut server = server_args.into_iter();
    let Some(server_command) = server.next() else {
        return Err(shape(
            Some(id),
            "the entry runs mcppin-guard with nothing after \"--\"",
        ));
    };
    let guard = Guard {
        command,
        args,
        env: BTreeMap::new(),
    };
    Ok((server_command, server.collect(), Some(guard)))
}

impl StdioServer {
    /// The launch identity of the entry as written (call it before [`StdioServer::expand`]:
    /// `${TOKEN}` then stays a placeholder): command, arguments, the names of `env`, `envFile`,
    /// `cwd` and the guard's part.
    #[must_use]
    pub fn launch(&self) -> Launch {
        Launch::Stdio {
            command: self.command.clone(),
            args: self.args.clone(),
            env: self.env.keys().cloned().collect(),
            env_file: self
                .env_file
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned()),
            cwd: self.cwd.as_ref().map(|p| p.to_string_lossy().into_owned()),
            guard: self.guard.clone(),
        }
    }

    /// The server with `${VAR}`, `${env:VAR}` and `${VAR:-default}` expanded from
    /// `environment` in its command, arguments, environment values and working directory.
    ///
    /// # Errors
    ///
    /// [`Error::InputVariable`] for `${input:...}` (a VS Code prompt an exporter cannot
    /// answer), [`Error::UndefinedVariable`] for a variable missing from `environment`; both
    /// name `id`. As [`StdioServer::expand_with`] otherwise.
    pub fn expand(&self, id: &str, environment: &BTreeMap<String, String>) -> Result<Self, Error> {
        self.expand_with(id, &Variables::environment(environment))
    }

    /// The server with every variable of [`Variables`] expanded in its command, arguments,
    /// environment values, working directory and `envFile`.
    ///
    /// # Errors
    ///
    /// [`Error::InputVariable`] for `${input:ID}` without an answer in `inputs`,
    /// [`Error::WorkspaceVariable`] for `${workspaceFolder}` without a workspace,
    /// [`Error::EditorVariable`] for a variable only the editor knows (`${file}`,
    /// `${config:...}`, `${command:...}`), [`Error::UndefinedVariable`] for an environment
    /// variable that is not set; all name `id`.
    pub fn expand_with(&self, id: &str, variables: &Variables<'_>) -> Result<Self, Error> {
        let x = |text: &str| expand(id, text, variables);
        let path = |p: &Option<PathBuf>| -> Result<Option<PathBuf>, Error> {
            match p {
                Some(dir) => Ok(Some(PathBuf::from(x(&dir.to_string_lossy())?))),
                None => Ok(None),
            }
        };
        Ok(Self {
            command: x(&self.command)?,
            args: self.args.iter().map(|a| x(a)).collect::<Result<_, _>>()?,
            env: self
                .env
                .iter()
                .map(|(k, v)| Ok((k.clone(), x(v)?)))
                .collect::<Result<_, Error>>()?,
            cwd: path(&self.cwd)?,
            env_file: path(&self.env_file)?,
            guard: self.guard.clone(),
        })
    }

    /// The files the guard in front of the server reads (`--lock`, `--pubkey`, `--log`) whose
    /// paths are relative once the variables are expanded, as `(setting, path)`: the client
    /// starts the guard in a working directory of its own choosing, so the guard may look for
    /// them elsewhere than the user meant. A path whose variables cannot be expanded is judged
    /// as written.
    #[must_use]
    pub fn relative_guard_files(
        &self,
        id: &str,
        variables: &Variables<'_>,
    ) -> Vec<(&'static str, String)> {
        let Some(guard) = &self.guard else {
            return Vec::new();
        };
        guard
            .files()
            .into_iter()
            .map(|(setting, path)| {
                let path = expand(id, path, variables).unwrap_or_else(|_| path.to_owned());
                (setting, path)
            })
            .filter(|(_, path)| Path::new(path).is_relative())
            .collect()
    }

    /// Adds the variables of an `envFile` (its text, as [`parse_env_file`] reads it) to the
    /// server's environment, under those of `env`: as in VS Code, a variable that `env` sets
    /// keeps the value `env` gives it. Behind a guard, the guard's settings ([`GUARD_ENV`])
    /// the file gives are the guard's, as those of `env` are: they go to its part of the
    /// launch ([`StdioServer::guard`]), so an `envFile` edited to point the guard at another
    /// lock or mode changes the launch.
    pub fn add_env_file(&mut self, text: &str) {
        for (name, value) in parse_env_file(text) {
            match &mut self.guard {
                Some(guard) if GUARD_ENV.contains(&name.as_str()) => {
                    guard.env.entry(name).or_insert(value);
                }
                _ => {
                    self.env.entry(name).or_insert(value);
                }
            }
        }
    }
}

/// The variables of an `envFile`, read as VS Code reads it: line by line (CRLF and CR count as
/// line ends), blank lines and lines starting with `#` skipped, an optional `export ` prefix, the
/// name up to the first `=` or `:` outside quotes, the value trimmed and cut at a `#` outside
/// quotes; a value wrapped in matching `"`, `'` or `` ` `` loses them, and inside `"` the
/// sequences `\n` and `\r` become a line feed and a carriage return. A line without a
/// separator, or with an empty name, is skipped; a later line wins over an earlier one.
#[must_use]
pub fn parse_env_file(text: &str) -> BTreeMap<String, String> {
    let mut vars = BTreeMap::new();
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    for line in text.split('\n') {
        let mut line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(rest) = line.strip_prefix("export ") {
            line = rest.trim();
        }
        let Some(separator) = outside_quotes(line, |c| c == '=' || c == ':') else {
            continue;
        };
        let name = line[..separator].trim();
        let mut value = line[separator + 1..].trim();
        if let Some(comment) = outside_quotes(value, |c| c == '#') {
            value = value[..comment].trim();
        }
        let mut value = value.to_owned();
        for quote in ['"', '\'', '`'] {
            if value.len() >= 2 && value.starts_with(quote) && value.ends_with(quote) {
                value = value[1..value.len() - 1].to_owned();
                if quote == '"' {
                    value = value.replace("\\n", "\n").replace("\\r", "\r");
                }
                break;
            }
        }
        if !name.is_empty() {
            vars.insert(name.to_owned(), value);
        }
    }
    vars
}

/// The byte offset of the first character matching `wanted` outside `"`, `'` or `` ` ``
/// quotes (a quote preceded by a backslash does not close one).
fn outside_quotes(text: &str, wanted: impl Fn(char) -> bool) -> Option<usize> {
    let mut open: Option<char> = None;
    let mut previous = '\0';
    for (at, c) in text.char_indices() {
        match open {
            Some(quote) if c == quote && previous != '\\' => open = None,
            Some(_) => {}
            None if matches!(c, '"' | '\'' | '`') => open = Some(c),
            None if wanted(c) => return Some(at),
            None => {}
        }
        previous = c;
    }
    None
}

/// Expands the variables of [`Variables`] in `text`.
fn expand(server: &str, text: &str, variables: &Variables<'_>) -> Result<String, Error> {
    let environment = variables.environment;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            // An unclosed `${` is literal text.
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let reference = &after[..end];
        rest = &after[end + 1..];
        if let Some(name) = reference.strip_prefix("input:") {
            match variables.inputs.get(name) {
                Some(value) => out.push_str(value),
                None => {
                    return Err(Error::InputVariable {
                        server: server.to_owned(),
                        name: name.to_owned(),
                    });
                }
            }
            continue;
        }
        if let Some(value) = editor_variable(server, reference, variables)? {
            out.push_str(&value);
            continue;
        }
        let reference = reference.strip_prefix("env:").unwrap_or(reference);
        let (name, default) = match reference.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (reference, None),
        };
        match (environment.get(name), default) {
            (Some(value), _) => out.push_str(value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(Error::UndefinedVariable {
                    server: server.to_owned(),
                    name: name.to_owned(),
                });
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The value of a VS Code variable, `None` when `reference` is not one (it is then an
/// environment variable).
///
/// An environment variable of the same name stands in for `${workspaceFolder}` and the
/// editor-state variables when no flag gives them, as earlier versions read them.
fn editor_variable(
    server: &str,
    reference: &str,
    variables: &Variables<'_>,
) -> Result<Option<String>, Error> {
    let from_environment = || variables.environment.get(reference).cloned();
    let editor = |name: &str| Error::EditorVariable {
        server: server.to_owned(),
        name: name.to_owned(),
    };
    match reference {
        "workspaceFolder" | "workspaceFolderBasename" => {
            let Some(folder) = variables.workspace else {
                return from_environment()
                    .map(Some)
                    .ok_or_else(|| Error::WorkspaceVariable {
                        server: server.to_owned(),
                        name: reference.to_owned(),
                    });
            };
            if reference == "workspaceFolder" {
                return Ok(Some(folder.to_string_lossy().into_owned()));
            }
            let base = folder
                .file_name()
                .map(|b| b.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok(Some(base))
        }
        "userHome" => match variables.environment.get("HOME") {
            Some(home) => Ok(Some(home.clone())),
            None => Err(Error::UndefinedVariable {
                server: server.to_owned(),
                name: "HOME".to_owned(),
            }),
        },
        "pathSeparator" | "/" => Ok(Some("/".to_owned())),
        _ if reference.starts_with("config:") || reference.starts_with("command:") => {
            Err(editor(reference))
        }
        _ if EDITOR_VARIABLES.contains(&reference) => from_environment()
            .map(Some)
            .ok_or_else(|| editor(reference)),
        _ => Ok(None),
    }
}

fn shape(server: Option<&str>, problem: &str) -> Error {
    Error::ConfigShape {
        server: server.map(str::to_owned),
        problem: problem.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn stdio(config: &ClientConfig, id: &str) -> StdioServer {
        match &config.servers[id] {
            ServerEntry::Stdio(s) => s.clone(),
            other => panic!("{id} is {other:?}"),
        }
    }

    #[test]
    fn reads_the_mcp_servers_shape_with_comments_and_trailing_commas() {
        let text = r#"
        // Claude Desktop
        {
          "mcpServers": {
            /* the billing server */
            "billing": {
              "command": "node",
              "args": ["server.js", "--port", "0",],
              "env": {"TOKEN": "${env:TOKEN}", "LEVEL": 3},
              "cwd": "/srv/billing",
              "disabled": false,
              "autoApprove": [],
            },
          },
          "globalShortcut": "x",
        }"#;
        let config = ClientConfig::parse(text).unwrap();
        let billing = stdio(&config, "billing")
            .expand("billing", &env(&[("TOKEN", "t0k")]))
            .unwrap();
        assert_eq!(billing.command, "node");
        assert_eq!(billing.args, ["server.js", "--port", "0"]);
        assert_eq!(billing.env, env(&[("LEVEL", "3"), ("TOKEN", "t0k")]));
        assert_eq!(billing.cwd, Some(PathBuf::from("/srv/billing")));
    }

    #[test]
    fn reads_the_vs_code_shape_with_types() {
        let text = r#"{
          "inputs": [{"type": "promptString", "id": "key"}],
          "servers": {
            "files": {"type": "stdio", "command": "npx", "args": ["-y", "fs"]},
            "remote": {"type": "http", "url": "https://example.invalid/mcp"}
          }
        }"#;
        let config = ClientConfig::parse(text).unwrap();
        assert_eq!(stdio(&config, "files").command, "npx");
        assert_eq!(
            config.servers["remote"],
            ServerEntry::Http(HttpServer {
                url: "https://example.invalid/mcp".to_owned(),
                kind: HttpKind::Streamable,
                headers: BTreeMap::new(),
            })
        );
    }

    fn http(config: &ClientConfig, id: &str) -> HttpServer {
        match &config.servers[id] {
            ServerEntry::Http(s) => s.clone(),
            other => panic!("{id} is {other:?}"),
        }
    }

    #[test]
    fn reads_windsurf_remote_servers_as_remote() {
        let text = r#"{"mcpServers": {"r": {"serverUrl": "https://example.invalid/sse"}}}"#;
        let config = ClientConfig::parse(text).unwrap();
        assert_eq!(http(&config, "r").kind, HttpKind::Detect);
    }

    #[test]
    fn reads_each_clients_spelling_of_remote_servers() {
        // Claude Code (.mcp.json), Cursor (no type), VS Code (servers, ${env:...}).
        let text = r#"{
          "mcpServers": {
            "cc": {"type": "http", "url": "https://a.invalid/mcp",
                   "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "legacy": {"type": "sse", "url": "https://b.invalid/sse"},
            "streamable": {"type": "streamable-http", "url": "https://c.invalid/mcp"},
            "cursor": {"url": "https://d.invalid/mcp", "headers": {"X-Key": "${env:KEY}"}}
          }
        }"#;
        let config = ClientConfig::parse(text).unwrap();
        let e = env(&[("TOKEN", "t0k3n-value"), ("KEY", "k3y")]);
        let cc = http(&config, "cc").expand("cc", &e).unwrap();
        assert_eq!(cc.kind, HttpKind::Streamable);
        assert_eq!(cc.headers["Authorization"], "Bearer t0k3n-value");
        assert_eq!(http(&config, "legacy").kind, HttpKind::Sse);
        assert_eq!(http(&config, "streamable").kind, HttpKind::Streamable);
        let cursor = http(&config, "cursor").expand("cursor", &e).unwrap();
        assert_eq!(
            (cursor.kind, &*cursor.headers["X-Key"]),
            (HttpKind::Detect, "k3y")
        );
        // Debug output names headers, never their values.
        assert!(!format!("{cc:?}").contains("t0k3n-value"));
    }

    #[test]
    fn refuses_input_and_undefined_variables_in_remote_entries() {
        let text = r#"{"servers": {"gh": {"type": "http", "url": "https://x.invalid/${HOST}",
            "headers": {"Authorization": "Bearer ${input:token}"}}}}"#;
        let config = ClientConfig::parse(text).unwrap();
        let err = http(&config, "gh")
            .expand("gh", &env(&[("HOST", "h")]))
            .unwrap_err();
        assert!(matches!(err, Error::InputVariable { ref name, .. } if name == "token"));
        let err = http(&config, "gh").expand("gh", &env(&[])).unwrap_err();
        assert!(matches!(err, Error::UndefinedVariable { ref name, .. } if name == "HOST"));
    }

    #[test]
    fn refuses_an_unknown_remote_type_and_bad_headers() {
        let err = ClientConfig::parse(r#"{"mcpServers": {"x": {"type": "ws", "url": "u"}}}"#)
            .unwrap_err();
        assert!(matches!(err, Error::ConfigShape { server: Some(ref s), .. } if s == "x"));
        let err =
            ClientConfig::parse(r#"{"mcpServers": {"x": {"url": "u", "headers": {"A": 1}}}}"#)
                .unwrap_err();
        assert!(err.to_string().contains("headers"), "{err}");
    }

    #[test]
    fn reads_servers_inside_vs_code_settings() {
        let text = r#"{"editor.fontSize": 14, "mcp": {"servers": {"a": {"command": "a"}}}}"#;
        let config = ClientConfig::parse(text).unwrap();
        assert_eq!(stdio(&config, "a").command, "a");
    }

    fn x(
        server: &str,
        text: &str,
        environment: &BTreeMap<String, String>,
    ) -> Result<String, Error> {
        let inputs = BTreeMap::new();
        let variables = Variables {
            environment,
            inputs: &inputs,
            workspace: None,
        };
        expand(server, text, &variables)
    }

    #[test]
    fn expands_both_variable_spellings_and_defaults() {
        let e = env(&[("HOME", "/h"), ("PORT", "80")]);
        assert_eq!(x("s", "${HOME}/x:${env:PORT}", &e).unwrap(), "/h/x:80");
        assert_eq!(x("s", "${MISSING:-d}", &e).unwrap(), "d");
        assert_eq!(x("s", "no ${ closing", &e).unwrap(), "no ${ closing");
    }

    #[test]
    fn expands_vs_code_variables_from_inputs_and_the_workspace() {
        let e = env(&[("HOME", "/home/me")]);
        let inputs = env(&[("token", "t0k")]);
        let variables = Variables {
            environment: &e,
            inputs: &inputs,
            workspace: Some(Path::new("/src/app")),
        };
        let text = "${input:token} ${workspaceFolder}${/}x ${workspaceFolderBasename} ${userHome}";
        assert_eq!(
            expand("s", text, &variables).unwrap(),
            "t0k /src/app/x app /home/me"
        );
    }

    #[test]
    fn refuses_a_workspace_variable_without_a_workspace_naming_the_flag() {
        let err = x("s", "${workspaceFolder}/data", &env(&[])).unwrap_err();
        assert!(
            matches!(err, Error::WorkspaceVariable { ref name, .. } if name == "workspaceFolder")
        );
        assert!(err.to_string().contains("--workspace DIR"), "{err}");
        // An environment variable of the name stands in, as before the flag existed.
        let e = env(&[("workspaceFolder", "/w")]);
        assert_eq!(x("s", "${workspaceFolder}/data", &e).unwrap(), "/w/data");
    }

    #[test]
    fn refuses_editor_state_variables() {
        for text in [
            "${file}",
            "${selectedText}",
            "${config:editor.fontSize}",
            "${command:pick}",
        ] {
            let err = x("s", text, &env(&[])).unwrap_err();
            assert!(
                matches!(err, Error::EditorVariable { .. }),
                "{text}: {err:?}"
            );
            assert!(err.to_string().contains("no flag supplies it"), "{err}");
        }
    }

    #[test]
    fn captures_the_server_behind_a_guard_under_the_same_id() {
        let text = r#"{"mcpServers": {"files": {
            "command": "/usr/local/bin/mcppin-guard",
            "args": ["--lock", "mcp.lock.json", "--server", "files", "--", "npx", "-y", "fs", "--", "/tmp"],
            "env": {"A": "1"}
        }}}"#;
        let config = ClientConfig::parse(text).unwrap();
        let files = stdio(&config, "files");
        assert_eq!(files.command, "npx");
        assert_eq!(files.args, ["-y", "fs", "--", "/tmp"]);
        assert_eq!(files.env, env(&[("A", "1")]));
    }

    #[test]
    fn the_launch_keeps_placeholders_and_env_names_only() {
        let text = r#"{"mcpServers": {"gh": {"command": "mcppin-guard",
            "args": ["--lock", "l", "--", "npx", "-y", "gh-mcp@1.0.0", "--token", "${TOKEN}"],
            "env": {"GH_TOKEN": "ghp_secret"}, "cwd": "/srv"}}}"#;
        let launch = stdio(&ClientConfig::parse(text).unwrap(), "gh").launch();
        assert_eq!(
            launch.to_string(),
            "mcppin-guard --lock l -- npx -y gh-mcp@1.0.0 --token '${TOKEN}' (env: GH_TOKEN) (cwd: /srv)"
        );
        assert!(!launch.to_value().to_string().contains("ghp_secret"));
    }

    #[test]
    fn the_launch_records_the_guard_as_written() {
        // The guard is part of the launch; without it, a configuration edited to
        // drop the guard or to point it at another lock kept the launch it was approved with.
        let launch = |command: &str, args: &str| {
            let text =
                format!(r#"{{"mcpServers": {{"x": {{"command": "{command}", "args": {args}}}}}}}"#);
            stdio(&ClientConfig::parse(&text).unwrap(), "x").launch()
        };
        let approved = launch(
            "mcppin-guard",
            r#"["--lock", "mcp.lock.json", "--server", "x", "--", "npx", "-y", "s@1.0.0"]"#,
        );
        let Launch::Stdio {
            command,
            args,
            guard,
            ..
        } = &approved
        else {
            panic!("{approved:?}")
        };
        assert_eq!(
            (command.as_str(), args.as_slice()),
            ("npx", &["-y".to_owned(), "s@1.0.0".to_owned()][..])
        );
        assert_eq!(
            guard.as_ref().map(|g| (g.command.as_str(), g.args.clone())),
            Some((
                "mcppin-guard",
                vec![
                    "--lock".into(),
                    "mcp.lock.json".into(),
                    "--server".into(),
                    "x".into()
                ]
            ))
        );
        for edited in [
            launch("npx", r#"["-y", "s@1.0.0"]"#),
            launch(
                "mcppin-guard",
                r#"["--lock", "other.lock.json", "--server", "x", "--", "npx", "-y", "s@1.0.0"]"#,
            ),
            launch(
                "mcppin-guard",
                r#"["--lock", "mcp.lock.json", "--server", "x", "--mode", "quarantine", "--", "npx", "-y", "s@1.0.0"]"#,
            ),
            launch(
                "/tmp/mcppin-guard",
                r#"["--lock", "mcp.lock.json", "--server", "x", "--", "npx", "-y", "s@1.0.0"]"#,
            ),
        ] {
            assert_ne!(edited, approved, "{edited}");
        }
        assert_eq!(
            launch(
                "mcppin-guard",
                r#"["--lock", "mcp.lock.json", "--server", "x", "--", "npx", "-y", "s@1.0.0"]"#,
            ),
            approved
        );
    }

    #[test]
    fn a_guard_configured_from_env_keeps_its_settings_in_the_launch() {
        // The guard's settings may come from the entry's env, with the server
        // command first; they are the guard's part of the launch, not the server's env.
        let text = r#"{"mcpServers": {"x": {"command": "mcppin-guard",
            "args": ["npx", "-y", "s@1.0.0"],
            "env": {"MCPPIN_LOCK": "/etc/mcp.lock.json", "MCPPIN_SERVER": "x", "TOKEN": "t"}}}}"#;
        let server = stdio(&ClientConfig::parse(text).unwrap(), "x");
        assert_eq!((server.command.as_str(), server.args.len()), ("npx", 2));
        assert_eq!(server.env, env(&[("TOKEN", "t")]));
        let launch = server.launch();
        assert_eq!(
            launch.to_string(),
            "MCPPIN_LOCK=/etc/mcp.lock.json MCPPIN_SERVER=x mcppin-guard -- npx -y s@1.0.0 (env: TOKEN)"
        );
        let other =
            ClientConfig::parse(&text.replace("/etc/mcp.lock.json", "/tmp/other.json")).unwrap();
        assert_ne!(stdio(&other, "x").launch(), launch);
        // Without a guard the same names are the server's own.
        let plain = ClientConfig::parse(&text.replace("\"mcppin-guard\"", "\"node\"")).unwrap();
        assert!(stdio(&plain, "x").env.contains_key("MCPPIN_LOCK"));
    }

    #[test]
    fn refuses_a_guard_entry_without_a_server_command() {
        for args in [
            r#"["--lock", "l", "--server", "x"]"#,
            r#"["--lock", "l", "--"]"#,
        ] {
            let text = format!(
                r#"{{"mcpServers": {{"x": {{"command": "mcppin-guard", "args": {args}}}}}}}"#
            );
            let err = ClientConfig::parse(&text).unwrap_err();
            assert!(
                matches!(err, Error::ConfigShape { server: Some(ref s), .. } if s == "x"),
                "{err:?}"
            );
        }
    }

    #[test]
    fn leaves_other_commands_alone() {
        let text = r#"{"mcpServers": {"x": {"command": "not-mcppin-guard", "args": ["--", "y"]}}}"#;
        let x = stdio(&ClientConfig::parse(text).unwrap(), "x");
        assert_eq!(
            (x.command.as_str(), x.args.as_slice()),
            ("not-mcppin-guard", &["--".to_owned(), "y".to_owned()][..])
        );
    }

    #[test]
    fn reads_env_files_as_vs_code_does() {
        let text = "# comment\r\nexport A=1\rB = \"two # not a comment\" # comment\n\
                    C:'three'\nD=\"x\\ny\"\nE=`e`\nno separator\n=empty name\nA=again\n";
        let vars = parse_env_file(text);
        assert_eq!(
            vars,
            env(&[
                ("A", "again"),
                ("B", "two # not a comment"),
                ("C", "three"),
                ("D", "x\ny"),
                ("E", "e"),
            ])
        );
    }

    #[test]
    fn env_wins_over_the_env_file() {
        let text = r#"{"servers": {"s": {"command": "c", "env": {"A": "from env"},
                       "envFile": "${workspaceFolder}/.env"}}}"#;
        let config = ClientConfig::parse(text).unwrap();
        let e = env(&[]);
        let inputs = env(&[]);
        let variables = Variables {
            environment: &e,
            inputs: &inputs,
            workspace: Some(Path::new("/w")),
        };
        let mut s = stdio(&config, "s").expand_with("s", &variables).unwrap();
        assert_eq!(s.env_file, Some(PathBuf::from("/w/.env")));
        s.add_env_file("A=from file\nB=from file\n");
        assert_eq!(s.env, env(&[("A", "from env"), ("B", "from file")]));
    }

    #[test]
    fn the_guards_settings_from_an_env_file_are_the_guards() {
        // An envFile could point the guard at another lock, or switch its mode, while
        // the launch recorded only the guard's settings from `env`.
        let text = r#"{"servers": {"s": {"command": "mcppin-guard", "args": ["--", "c"],
                       "env": {"MCPPIN_MODE": "refuse"}, "envFile": "/w/.env"}}}"#;
        let config = ClientConfig::parse(text).unwrap();
        let mut s = stdio(&config, "s").expand("s", &env(&[])).unwrap();
        s.add_env_file("MCPPIN_LOCK=/tmp/other.lock.json\nMCPPIN_MODE=quarantine\nA=1\n");
        let guard = s.guard.as_ref().unwrap();
        assert_eq!(
            guard.env,
            env(&[
                ("MCPPIN_LOCK", "/tmp/other.lock.json"),
                ("MCPPIN_MODE", "refuse")
            ])
        );
        assert_eq!(s.env, env(&[("A", "1")]));
        // Without a guard the same names are the server's own.
        let plain = ClientConfig::parse(
            &text.replace("\"mcppin-guard\", \"args\": [\"--\", \"c\"]", "\"c\""),
        )
        .unwrap();
        let mut s = stdio(&plain, "s").expand("s", &env(&[])).unwrap();
        s.add_env_file("MCPPIN_LOCK=/tmp/other.lock.json\n");
        assert_eq!(
            s.env,
            env(&[
                ("MCPPIN_LOCK", "/tmp/other.lock.json"),
                ("MCPPIN_MODE", "refuse")
            ])
        );
    }

    #[test]
    fn refuses_an_undefined_variable() {
        let err = x("billing", "${NOPE}", &env(&[])).unwrap_err();
        assert!(
            matches!(err, Error::UndefinedVariable { ref server, ref name }
            if server == "billing" && name == "NOPE")
        );
    }

    #[test]
    fn refuses_input_variables_without_an_answer_naming_the_flag() {
        let text = r#"{"servers": {"gh": {"command": "gh", "env": {"T": "${input:token}"}}}}"#;
        let config = ClientConfig::parse(text).unwrap();
        let err = stdio(&config, "gh").expand("gh", &env(&[])).unwrap_err();
        assert!(matches!(err, Error::InputVariable { ref server, ref name }
            if server == "gh" && name == "token"));
        assert!(err.to_string().contains("--input token=VALUE"), "{err}");
    }

    #[test]
    fn refuses_a_file_without_a_server_table() {
        let err = ClientConfig::parse(r#"{"servers2": {}}"#).unwrap_err();
        assert!(matches!(err, Error::ConfigShape { server: None, .. }));
    }

    #[test]
    fn refuses_an_entry_with_neither_command_nor_url() {
        let err = ClientConfig::parse(r#"{"mcpServers": {"x": {"args": []}}}"#).unwrap_err();
        assert!(matches!(err, Error::ConfigShape { server: Some(ref s), .. } if s == "x"));
    }

    /// `depth` arrays opened inside the server table, and closed.
    fn nested(depth: usize) -> String {
        format!(
            "{{\"mcpServers\": {{\"a\": {{\"command\": \"x\", \"deep\": {}{}}}}}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        )
    }

    #[test]
    fn a_project_of_the_local_scope_is_read_under_the_same_depth_bound() {
        // `~/.claude.json` is read for a project's local scope by the same bounded reader.
        let deep = format!(
            "{{\"projects\": {{\"/p\": {{\"mcpServers\": {{\"a\": {{\"command\": \"x\", \
             \"deep\": {}{}}}}}}}}}}}",
            "[".repeat(200_000),
            "]".repeat(200_000)
        );
        assert!(matches!(
            ClientConfig::parse_project(&deep, "/p"),
            Err(Error::ConfigDepth {
                limit: MAX_DEPTH,
                ..
            })
        ));
        let location = crate::discover::Location {
            client: crate::discover::Client::ClaudeCode,
            scope: crate::discover::Scope::Local,
            path: PathBuf::from("/h/.claude.json"),
            shared: true,
            project: Some(PathBuf::from("/p")),
        };
        assert!(matches!(
            crate::discover::inspect_location(&deep, &location),
            Err(Error::ConfigDepth { .. })
        ));
        let shallow = deep
            .replace(&"[".repeat(200_000), "[")
            .replace(&"]".repeat(200_000), "]");
        assert_eq!(
            ClientConfig::parse_project(&shallow, "/p")
                .unwrap()
                .servers
                .len(),
            1
        );
    }

    #[test]
    fn refuses_nesting_deeper_than_the_bound_before_parsing() {
        // 12,000 levels overflowed the parser's stack and aborted the process;
        // a test thread's stack is smaller still.
        for depth in [MAX_DEPTH - 3, MAX_DEPTH - 2, 200_000] {
            let text = nested(depth);
            let result = ClientConfig::parse(&text);
            let listed = crate::discover::inspect(&text, true);
            if depth + 3 > MAX_DEPTH {
                let err = result.unwrap_err();
                assert!(
                    matches!(err, Error::ConfigDepth { limit: MAX_DEPTH, line: 1, column } if column == 46 + MAX_DEPTH - 2),
                    "{err:?}"
                );
                assert!(
                    err.to_string()
                        .starts_with("the configuration nests arrays and objects deeper than 64"),
                    "{err}"
                );
                assert!(
                    matches!(listed, Err(Error::ConfigDepth { .. })),
                    "{listed:?}"
                );
            } else {
                assert_eq!(result.unwrap().servers.len(), 1, "{depth}");
                assert_eq!(listed.unwrap().len(), 1, "{depth}");
            }
        }
    }

    #[test]
    fn refuses_nesting_deeper_than_the_bound_in_a_project_table() {
        // A configuration read per project (`projects` of a user file) and the discovery that
        // looks for the project's table are bounded like any other: 200,000 levels used to
        // overflow the parser's stack.
        for depth in [MAX_DEPTH - 5, 200_000] {
            let text = format!(
                "{{\"projects\": {{\"/p\": {{\"mcpServers\": {{\"a\": {{\"command\": \"x\", \
                 \"deep\": {}{}}}}}}}}}}}",
                "[".repeat(depth),
                "]".repeat(depth)
            );
            let result = ClientConfig::parse_project(&text, "/p");
            let location = crate::discover::Location {
                client: crate::discover::Client::ClaudeCode,
                scope: crate::discover::Scope::Local,
                path: "/home/me/.claude.json".into(),
                shared: false,
                project: Some("/p".into()),
            };
            let listed = crate::discover::inspect_location(&text, &location);
            if depth + 5 > MAX_DEPTH {
                assert!(
                    matches!(
                        result,
                        Err(Error::ConfigDepth {
                            limit: MAX_DEPTH,
                            line: 1,
                            ..
                        })
                    ),
                    "{result:?}"
                );
                assert!(
                    matches!(listed, Err(Error::ConfigDepth { .. })),
                    "{listed:?}"
                );
            } else {
                assert_eq!(result.unwrap().servers.len(), 1, "{depth}");
                assert_eq!(listed.unwrap().len(), 1, "{depth}");
            }
        }
    }

    #[test]
    fn counts_depth_on_tokens_not_on_brackets_in_strings_or_comments() {
        // Closing brackets inside strings and comments do not hide real nesting ...
        let hidden = format!(
            "// ]]]]]]\n{{\"mcpServers\": {{\"a\": {{\"command\": \"]]]]]]]]\", /* ]]]] */ \"deep\": {}{}}}}}}}",
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        let err = ClientConfig::parse(&hidden).unwrap_err();
        assert!(matches!(err, Error::ConfigDepth { line: 2, .. }), "{err:?}");
        // ... and opening ones there are no nesting.
        let quoted = format!(
            "{{\"mcpServers\": {{\"a\": {{\"command\": \"{}\" /* {} */}}}}}}",
            "[".repeat(10 * MAX_DEPTH),
            "{".repeat(10 * MAX_DEPTH)
        );
        assert_eq!(ClientConfig::parse(&quoted).unwrap().servers.len(), 1);
    }

    #[test]
    fn refuses_text_that_is_not_json() {
        let err = ClientConfig::parse("{\"mcpServers\": ").unwrap_err();
        assert!(matches!(err, Error::ConfigSyntax { .. }));
    }
}

//! Client configuration files (docs/export.md): which servers an agent runs, and how.
//!
//! Three shapes are read: `{"mcpServers": {...}}` (Claude Desktop, Claude Code `.mcp.json`,
//! Cursor, Windsurf), VS Code's `{"servers": {...}}` with a `type` per server, and
//! `{"mcp": {"servers": {...}}}` inside VS Code user settings. The file is the user's own, so
//! comments and trailing commas are accepted; unknown keys are ignored (and never rewritten:
//! nothing here writes a configuration). `${VAR}` and `${env:VAR}` expand from an environment
//! map the caller passes; `${input:...}` (a VS Code prompt) is refused, since an exporter
//! cannot ask.

use std::collections::BTreeMap;
use std::path::PathBuf;

use jsonc_parser::{JsonObject, JsonValue, ParseOptions};

use crate::Error;

/// A parsed client configuration: its servers by id (the key of the server entry).
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct ClientConfig {
    /// The servers, ordered by id.
    pub servers: BTreeMap<String, ServerEntry>,
}

/// One configured server.
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum ServerEntry {
    /// A server started as a process and spoken to over stdio.
    Stdio(StdioServer),
    /// A server reached over HTTP (`url`, or Windsurf's `serverUrl`).
    Http(HttpServer),
}

/// How a remote server is spoken to: the configuration's `type`.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
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
            .field("origin", &crate::http::origin(&self.url))
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
        let x = |text: &str| expand(id, text, environment);
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
}

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
        let root = jsonc_parser::parse_to_value(text, &ParseOptions::default())
            .map_err(|err| Error::ConfigSyntax {
                message: err.to_string(),
            })?
            .ok_or_else(|| Error::ConfigSyntax {
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
        let mut servers = BTreeMap::new();
        for (id, entry) in table {
            let JsonValue::Object(entry) = entry else {
                return Err(shape(Some(&id), "the entry is not an object"));
            };
            let server = read_entry(&id, entry)?;
            servers.insert(id, server);
        }
        Ok(Self { servers })
    }
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
    Ok(ServerEntry::Stdio(StdioServer {
        command,
        args,
        env,
        cwd,
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
                    crate::error::quoted(other)
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

impl StdioServer {
    /// The server with `${VAR}`, `${env:VAR}` and `${VAR:-default}` expanded from
    /// `environment` in its command, arguments, environment values and working directory.
    ///
    /// # Errors
    ///
    /// [`Error::InputVariable`] for `${input:...}` (a VS Code prompt an exporter cannot
    /// answer), [`Error::UndefinedVariable`] for a variable missing from `environment`; both
    /// name `id`.
    pub fn expand(&self, id: &str, environment: &BTreeMap<String, String>) -> Result<Self, Error> {
        let x = |text: &str| expand(id, text, environment);
        Ok(Self {
            command: x(&self.command)?,
            args: self.args.iter().map(|a| x(a)).collect::<Result<_, _>>()?,
            env: self
                .env
                .iter()
                .map(|(k, v)| Ok((k.clone(), x(v)?)))
                .collect::<Result<_, Error>>()?,
            cwd: match &self.cwd {
                Some(dir) => Some(PathBuf::from(x(&dir.to_string_lossy())?)),
                None => None,
            },
        })
    }
}

/// Expands `${VAR}`, `${env:VAR}` and `${VAR:-default}`; refuses `${input:...}`.
fn expand(
    server: &str,
    text: &str,
    environment: &BTreeMap<String, String>,
) -> Result<String, Error> {
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
        if let Some(name) = reference.strip_prefix("input:") {
            return Err(Error::InputVariable {
                server: server.to_owned(),
                name: name.to_owned(),
            });
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
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
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

    #[test]
    fn expands_both_variable_spellings_and_defaults() {
        let e = env(&[("HOME", "/h"), ("PORT", "80")]);
        assert_eq!(expand("s", "${HOME}/x:${env:PORT}", &e).unwrap(), "/h/x:80");
        assert_eq!(expand("s", "${MISSING:-d}", &e).unwrap(), "d");
        assert_eq!(expand("s", "no ${ closing", &e).unwrap(), "no ${ closing");
    }

    #[test]
    fn refuses_an_undefined_variable() {
        let err = expand("billing", "${NOPE}", &env(&[])).unwrap_err();
        assert!(
            matches!(err, Error::UndefinedVariable { ref server, ref name }
            if server == "billing" && name == "NOPE")
        );
    }

    #[test]
    fn refuses_input_variables() {
        let text = r#"{"servers": {"gh": {"command": "gh", "env": {"T": "${input:token}"}}}}"#;
        let config = ClientConfig::parse(text).unwrap();
        let err = stdio(&config, "gh").expand("gh", &env(&[])).unwrap_err();
        assert!(matches!(err, Error::InputVariable { ref server, ref name }
            if server == "gh" && name == "token"));
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

    #[test]
    fn refuses_text_that_is_not_json() {
        let err = ClientConfig::parse("{\"mcpServers\": ").unwrap_err();
        assert!(matches!(err, Error::ConfigSyntax { .. }));
    }
}

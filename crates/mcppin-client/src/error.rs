//! The one error type of this crate.

use std::fmt;
use std::io;
use std::time::Duration;

use mcppin_core::{EXCERPT_CHARS, Excerpt, Value};

/// Everything that can go wrong while starting, speaking to or stopping an MCP server.
///
/// Text that came from a server (an error message, a cursor, a tool name) or from the
/// configuration (a server id) is kept raw in the fields; the messages quote it escaped with
/// [`mcppin_core::escape`], so a message needs only [`mcppin_core::escape_non_ascii`] before it
/// reaches a terminal, and two different strings never read the same in it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server program could not be started (not found, not executable, bad `cwd`).
    #[error("cannot start {}: {source}", Excerpt::bare(.program))]
    Spawn {
        /// The configured command, as given.
        program: String,
        /// What the operating system said.
        source: io::Error,
    },
    /// Reading from or writing to the server failed at the operating-system level.
    #[error("i/o error while {doing}: {source}")]
    Io {
        /// What was being done (`"writing to the server"`).
        doing: &'static str,
        /// What the operating system said.
        source: io::Error,
    },
    /// Signalling or waiting for the server's process group failed.
    #[error("cannot signal process group {pgid}: {source}")]
    Signal {
        /// The process group id.
        pgid: i32,
        /// What the operating system said.
        source: io::Error,
    },
    /// A line from the server exceeded the configured bound; nothing beyond the bound was
    /// buffered.
    #[error("a message from the server exceeds {limit} bytes")]
    LineTooLong {
        /// The bound, in bytes, excluding the newline.
        limit: usize,
    },
    /// The server's output ended in the middle of a line.
    #[error("the server's output ended inside a message ({len} bytes without a newline)")]
    UnterminatedLine {
        /// How many bytes the unterminated line held.
        len: usize,
    },
    /// A message handed to the framing layer contains a newline, which would split it in two.
    #[error("an outgoing message contains a newline at byte {offset}")]
    EmbeddedNewline {
        /// Where the newline is.
        offset: usize,
    },
    /// The server closed its output (or exited) while an answer was awaited.
    #[error("the server closed its output while {doing}")]
    Closed {
        /// What was awaited (`"waiting for the answer to tools/list"`).
        doing: String,
    },
    /// No answer arrived within the per-request timeout.
    #[error("no answer to {method} within {}", humanize(*.after))]
    Timeout {
        /// The request method.
        method: String,
        /// The timeout that passed.
        after: Duration,
    },
    /// A protocol revision this build was not written against (on the command line or in
    /// a configuration).
    #[error(
        "unknown protocol revision {}: this build speaks 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 and 2026-07-28",
        quoted(.revision)
    )]
    UnknownRevision {
        /// The revision as given.
        revision: String,
    },
    /// The server speaks none of the revisions this build knows (it answered `initialize`
    /// with another revision, or `server/discover` without 2026-07-28).
    #[error("the server offers no protocol revision this build knows (offered: {})", list(.offered))]
    RevisionRefused {
        /// The revisions the server named, raw.
        offered: Vec<String>,
    },
    /// An answer the strict reader refuses (docs/json.md), or a line that is not JSON at all.
    #[error("malformed answer to {method}: {source}")]
    Malformed {
        /// The request being answered.
        method: String,
        /// The reading error, with its position in the line.
        source: Box<mcppin_core::JsonError>,
    },
    /// A well-formed answer that breaks the protocol (no result, a page without its list).
    #[error("protocol violation in the answer to {method}: {problem}")]
    Protocol {
        /// The request being answered.
        method: String,
        /// What was wrong.
        problem: &'static str,
    },
    /// An HTTP answer whose head tells a client to read its body otherwise than as the UTF-8
    /// bytes the capture reads (a `charset` other than UTF-8, a `Content-Encoding`, ...): a
    /// client decoding by it would read text the capture never held.
    #[error(
        "the answer to {method} tells a client to read it otherwise than the capture reads it: \
         {refusal}"
    )]
    Decoding {
        /// The request being answered.
        method: String,
        /// The instruction found.
        refusal: mcppin_core::http::Refusal,
    },
    /// The server answered a request with a JSON-RPC error.
    #[error("the server answered {method} with error {code}: {}", quoted(.message))]
    ServerError {
        /// The request.
        method: String,
        /// The JSON-RPC error code.
        code: i64,
        /// The error message, raw.
        message: String,
        /// The error's `data`, when present.
        data: Option<Box<Value>>,
    },
    /// A response to an id that is not outstanding.
    #[error(
        "a response to id {}, which was not asked, while waiting for {method}",
        Excerpt::bare(.id)
    )]
    UnexpectedResponse {
        /// The request being awaited.
        method: String,
        /// The id literal in the response.
        id: String,
    },
    /// A list returned a cursor it had returned before: following it would loop.
    #[error("{method} returned cursor {} a second time", quoted(.cursor))]
    RepeatedCursor {
        /// The list method.
        method: String,
        /// The repeated cursor, raw.
        cursor: String,
    },
    /// A list did not end within the page limit.
    #[error("{method} did not end within {limit} pages")]
    TooManyPages {
        /// The list method.
        method: String,
        /// The page limit.
        limit: usize,
    },
    /// Two tools of one server have the same name (docs/formats.md).
    #[error("the server lists tool {} twice", quoted(.name))]
    DuplicateTool {
        /// The duplicated name, raw.
        name: String,
    },
    /// The client configuration is not JSON, even allowing comments and trailing commas.
    #[error("the configuration is not JSON: {message}")]
    ConfigSyntax {
        /// The parser's message, with line and column.
        message: String,
    },
    /// The configuration nests arrays and objects deeper than [`crate::config::MAX_DEPTH`]
    /// levels: refused before it is parsed, as the parser recurses once per level.
    #[error(
        "the configuration nests arrays and objects deeper than {limit} levels (line {line}, \
         column {column})"
    )]
    ConfigDepth {
        /// The deepest nesting accepted.
        limit: usize,
        /// The line of the bracket one level too deep, from 1.
        line: usize,
        /// Its column, from 1, in characters.
        column: usize,
    },
    /// The configuration holds no server table, or an entry is not a server a client runs.
    #[error("{}{problem}", .server.as_ref().map(|s| format!("server {}: ", quoted(s))).unwrap_or_default())]
    ConfigShape {
        /// The server id, when the problem is in one entry.
        server: Option<String>,
        /// What is wrong.
        problem: String,
    },
    /// `${input:ID}` asks the user at start-up (VS Code), and no answer was given for `ID`.
    #[error(
        "server {}: ${{input:{name}}} is a value VS Code prompts for; give it with --input {name}=VALUE",
        quoted(.server)
    )]
    InputVariable {
        /// The server id.
        server: String,
        /// The input id.
        name: String,
    },
    /// An HTTP request could not be made or its answer not read (connection refused, TLS,
    /// a broken stream). The URL is never part of the message.
    #[error("http error while {doing}: {}", chain(.source))]
    Http {
        /// What was being done (`"sending tools/list"`).
        doing: String,
        /// What the HTTP client said, without the URL.
        source: reqwest::Error,
    },
    /// The server answered with an HTTP error status and no JSON-RPC error in the body. The
    /// body is not shown: a server may echo the request's headers in it.
    #[error("the server answered {method} with HTTP status {status}")]
    HttpStatus {
        /// The JSON-RPC method of the request, or what was asked (`"the event stream"`).
        method: String,
        /// The status code.
        status: u16,
    },
    /// The server answered with a redirect; headers are never sent to another location, and
    /// redirects are not followed.
    #[error(
        "the server answered {method} with a redirect (HTTP {status}) to {}: redirects are not followed; configure the final URL",
        quoted(.location)
    )]
    Redirect {
        /// The request.
        method: String,
        /// The status code.
        status: u16,
        /// The origin of the `Location` (scheme, host, port: a path may hold a key).
        location: String,
    },
    /// The server no longer knows the session (HTTP 404 to a request carrying
    /// `Mcp-Session-Id`).
    #[error("the server ended the session (HTTP 404 to {method})")]
    SessionEnded {
        /// The request.
        method: String,
    },
    /// An answer from the server repeats a configured secret (a header value, the URL's query
    /// or userinfo); it is neither shown nor recorded.
    #[error(
        "the server's answer to {method} repeats a configured secret (a header value or a part of the url); it is not recorded"
    )]
    SecretEchoed {
        /// The request being answered.
        method: String,
    },
    /// A remote server's URL or headers cannot be used.
    #[error("{problem}")]
    BadRemote {
        /// What is wrong, naming the header or the URL part but never a secret value.
        problem: String,
    },
    /// `${workspaceFolder}` (or `${workspaceFolderBasename}`) with no workspace known: the
    /// configuration is not inside a `.vscode` folder and none was given.
    #[error(
        "server {}: ${{{name}}} is the folder VS Code has open; give it with --workspace DIR",
        quoted(.server)
    )]
    WorkspaceVariable {
        /// The server id.
        server: String,
        /// The variable, without `${}`.
        name: String,
    },
    /// A VS Code variable only the running editor knows (`${file}`, `${selectedText}`,
    /// `${config:...}`, `${command:...}`).
    #[error(
        "server {}: ${{{name}}} is known only to the running editor, and no flag supplies it; set an environment variable of that name, or replace it in the configuration",
        quoted(.server)
    )]
    EditorVariable {
        /// The server id.
        server: String,
        /// The variable, without `${}`.
        name: String,
    },
    /// `${VAR}` names a variable the environment does not have.
    #[error("server {}: environment variable {name} is not set", quoted(.server))]
    UndefinedVariable {
        /// The server id.
        server: String,
        /// The variable.
        name: String,
    },
    /// A launcher's record of what it installed or runs (npm's lockfile, uv's cache entry, a
    /// container engine's image description, a distribution's metadata) is not of the form
    /// this version reads ([`crate::artifact`]).
    #[error("{record}: at {at}: expected {expected}")]
    Record {
        /// Which record (`npm lockfile`).
        record: &'static str,
        /// Where in it: a JSON pointer, `line N` or `byte N`.
        at: String,
        /// What the reader wants there.
        expected: &'static str,
    },
}

/// An error and its causes, joined with `: `.
fn chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut next = error.source();
    while let Some(cause) = next {
        let text = cause.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        next = cause.source();
    }
    out
}

/// Formats a duration for a message (`30s`, `250ms`).
fn humanize(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

/// How many strings of a list a message shows; the rest are only counted.
const LISTED: usize = 8;

/// Formats a list of raw strings for a message: the first few, each cut short.
fn list(items: &[String]) -> String {
    if items.is_empty() {
        return "none".to_owned();
    }
    let mut out = items
        .iter()
        .take(LISTED)
        .map(|i| Short(i).to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > LISTED {
        out.push_str(&format!(" and {} more", items.len() - LISTED));
    }
    out
}

/// A raw string in a message: escaped ([`mcppin_core::escape`]), then in double quotes with `"`
/// and `\` backslashed; its first [`EXCERPT_CHARS`] characters, then `...` and its length in
/// bytes when longer, so that a server's 10 MB string cannot put 10 MB on a terminal.
struct Short<'a>(&'a str);

/// A raw string quoted for a message, as [`Short`] writes it.
pub(crate) fn quoted(text: &str) -> String {
    Short(text).to_string()
}

impl fmt::Display for Short<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let escaped = mcppin_core::escape(self.0);
        match escaped.char_indices().nth(EXCERPT_CHARS) {
            None => write!(f, "{escaped:?}"),
            Some((end, _)) => write!(
                f,
                "{:?}... ({} bytes)",
                escaped.get(..end).unwrap_or_default(),
                self.0.len()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_a_short_excerpt_of_long_server_text() {
        // A message quotes at most a short excerpt of the input.
        let long = "q".repeat(1 << 20);
        let excerpt = format!("\"{}\"... (1048576 bytes)", "q".repeat(64));
        let errors = [
            Error::UnknownRevision {
                revision: long.clone(),
            },
            Error::RevisionRefused {
                offered: vec![long.clone(); 1000],
            },
            Error::ServerError {
                method: "tools/list".to_owned(),
                code: -32000,
                message: long.clone(),
                data: None,
            },
            Error::RepeatedCursor {
                method: "tools/list".to_owned(),
                cursor: long.clone(),
            },
            Error::DuplicateTool { name: long.clone() },
            Error::Spawn {
                program: long.clone(),
                source: io::Error::from(io::ErrorKind::NotFound),
            },
            Error::ConfigShape {
                server: Some(long.clone()),
                problem: "no command".to_owned(),
            },
            Error::InputVariable {
                server: long.clone(),
                name: "token".to_owned(),
            },
            Error::UndefinedVariable {
                server: long.clone(),
                name: "HOME".to_owned(),
            },
        ];
        for err in errors {
            let message = err.to_string();
            assert!(message.len() < 1000, "{} bytes", message.len());
            assert!(message.contains("... (1048576 bytes)"), "{message}");
            if !matches!(err, Error::Spawn { .. }) {
                assert!(message.contains(&excerpt), "{message}");
            }
        }
        let err = Error::UnexpectedResponse {
            method: "tools/list".to_owned(),
            id: long.clone(),
        };
        assert!(err.to_string().contains("(1048576 bytes)"));
        assert!(err.to_string().len() < 200);
        // Short text is quoted whole.
        assert_eq!(
            Error::DuplicateTool {
                name: "read\u{1b}".to_owned()
            }
            .to_string(),
            "the server lists tool \"read<U+001B>\" twice"
        );
        assert_eq!(
            Error::RevisionRefused {
                offered: vec!["a".to_owned(), "b".to_owned()]
            }
            .to_string(),
            "the server offers no protocol revision this build knows (offered: \"a\", \"b\")"
        );
    }

    #[test]
    fn messages_quote_server_text_escaped_once() {
        // A message needs only the last pass before a terminal, and the text
        // `<U+200B>` reads differently from a zero-width space.
        let named = |name: &str| Error::DuplicateTool { name: name.into() }.to_string();
        assert_eq!(
            named("a\u{200B}"),
            "the server lists tool \"a<U+200B>\" twice"
        );
        assert_eq!(
            named("a<U+200B>"),
            "the server lists tool \"a<U+003C>U+200B>\" twice"
        );
        assert_eq!(named("a\"b"), "the server lists tool \"a\\\"b\" twice");
        let refused = Error::RevisionRefused {
            offered: vec!["x\u{1b}".into()],
        };
        assert!(refused.to_string().ends_with("(offered: \"x<U+001B>\")"));
    }
}

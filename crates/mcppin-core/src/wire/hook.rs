//! The pre-call check of a client with hooks (docs/guard.md, "A pre-call hook for Claude
//! Code"): a tool call the client is about to make, mapped to the lockfile's server and tool,
//! allowed only when the tool is approved and, with the guard's state, admitted as approved in
//! the guard's current reading of the list.
//!
//! Three parts, no I/O: [`Call`] reads the hook's input (Claude Code's `PreToolUse` JSON);
//! [`resolve`] maps its `mcp__<server>__<tool>` name onto the lockfile the way Claude Code
//! builds such names ([`normalize`]), an ambiguous name being a block; [`check`] judges the
//! target against the guard's [`State`]. [`Tracker`] is the guard's side: it follows the
//! admission events of the sessions and gives the state to write.
//!
//! ```
//! use mcppin_core::hook::{Call, normalize, resolve};
//! use mcppin_core::lockfile::Lockfile;
//! use mcppin_core::manifest::Manifest;
//!
//! assert_eq!(normalize("my server.v2"), "my_server_v2");
//! let manifest = Manifest::parse(br#"{"schema_version": 2, "complete": true, "servers": [
//!     {"id": "my server", "tools": [{"name": "search"}]}]}"#)?;
//! let lock = Lockfile::approve(None, &manifest, &[])?;
//! let call = Call::parse(br#"{"hook_event_name": "PreToolUse", "session_id": "s",
//!     "tool_name": "mcp__my_server__search", "tool_input": {}}"#)?;
//! let target = resolve(&lock, &call).expect("one server and tool");
//! assert_eq!((target.server, target.tool), ("my server", "search"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;

use crate::digest::Digest;
use crate::engine::{Event, Verdict};
use crate::error::Excerpt;
use crate::lockfile::{Lockfile, Pin};
use crate::parse::{Strictness, parse_with};
use crate::value::{Object, Value};

/// The prefix of the names Claude Code gives MCP tools: `mcp__<server>__<tool>`.
pub const PREFIX: &str = "mcp__";

/// The `schema` member of a state file.
pub const STATE_SCHEMA: &str = "mcppin-guard-state";

/// The `schema_version` of a state file this version reads and writes.
pub const STATE_VERSION: u64 = 1;

/// Claude Code's form of a server or tool name inside `mcp__<server>__<tool>`: every UTF-16
/// code unit outside `A-Z a-z 0-9 _ -` becomes `_` (a character beyond U+FFFF, two code
/// units, becomes `__`); a name starting with `claude.ai ` then has its runs of `_` made one
/// and its leading and trailing `_` dropped. This is the rule of Claude Code 2.1.328
/// (`@anthropic-ai/claude-code`, read from its package: `t.replace(/[^a-zA-Z0-9_-]/g, "_")`,
/// a regular expression without the `u` flag, so it matches code units), applied alike to the
/// server's configured name and the tool's served name.
///
/// ```
/// use mcppin_core::hook::normalize;
/// assert_eq!(normalize("files"), "files");
/// assert_eq!(normalize("a.b c"), "a_b_c");
/// assert_eq!(normalize("x\u{1F600}y"), "x__y");
/// assert_eq!(normalize("claude.ai Google  Drive"), "claude_ai_Google_Drive");
/// ```
#[must_use]
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('_', c.len_utf16()));
        }
    }
    if name.starts_with("claude.ai ") {
        let mut collapsed = String::with_capacity(out.len());
        for c in out.chars() {
            if !(c == '_' && collapsed.ends_with('_')) {
                collapsed.push(c);
            }
        }
        out = collapsed.trim_matches('_').to_owned();
    }
    out
}

/// The name Claude Code gives tool `tool` of server `server`.
#[must_use]
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("{PREFIX}{}__{}", normalize(server), normalize(tool))
}

/// The file name of a server's state in the state directory: the id with every byte outside
/// `A-Z a-z 0-9 _ -` written `%XX`, then `.json`, so any id is one file of the directory and
/// two ids never share one.
///
/// ```
/// assert_eq!(mcppin_core::hook::state_file_name("docs"), "docs.json");
/// assert_eq!(mcppin_core::hook::state_file_name("../a b"), "%2E%2E%2Fa%20b.json");
/// ```
#[must_use]
pub fn state_file_name(server: &str) -> String {
    let mut out = String::with_capacity(server.len() + 5);
    for b in server.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out.push_str(".json");
    out
}

/// What the hook reads of its input: Claude Code's `PreToolUse` JSON.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub struct Call {
    /// `hook_event_name`.
    pub event: String,
    /// `tool_name`, `mcp__<server>__<tool>` for an MCP tool.
    pub tool_name: String,
    /// `mcp_server.name`, the server's name as configured, which Claude Code sends beside an
    /// MCP tool's name (2.1.328; absent from older versions).
    pub server_name: Option<String>,
}

/// Why the hook's input cannot be read: every one blocks the call.
#[derive(Clone, Debug, Eq, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// Not JSON.
    #[error("the hook input is not JSON: {0}")]
    Json(crate::JsonError),
    /// Not an object.
    #[error("the hook input is not a JSON object")]
    NotObject,
    /// A member the hook reads is missing or not a string.
    #[error("the hook input has no string \"{0}\"")]
    Missing(&'static str),
    /// A member the hook reads appears twice: two readers could take two calls from it.
    #[error("the hook input has \"{0}\" more than once")]
    Repeated(&'static str),
    /// Another hook event than `PreToolUse`.
    #[error("the hook input is a {} event, not PreToolUse: configure the hook under hooks.PreToolUse", Excerpt::quoted(.0))]
    Event(String),
}

impl Call {
    /// Reads the hook input: a JSON object with `hook_event_name` `PreToolUse` and a string
    /// `tool_name`; `mcp_server.name` is read when present. The rest (`tool_input`,
    /// `session_id`, `cwd`, `transcript_path`, ...) is not read: the arguments of a call decide
    /// nothing here. Read under the relaxed rule (the arguments may hold anything JSON
    /// allows), with the members read refused when repeated.
    ///
    /// # Errors
    ///
    /// An [`InputError`] for each way the input fails.
    pub fn parse(bytes: &[u8]) -> Result<Self, InputError> {
        let value = parse_with(bytes, Strictness::Relaxed).map_err(InputError::Json)?;
        let object = value.as_object().ok_or(InputError::NotObject)?;
        for name in ["hook_event_name", "tool_name", "mcp_server"] {
            if object.keys().filter(|k| *k == name).count() > 1 {
                return Err(InputError::Repeated(name));
            }
        }
        let string = |name: &'static str| {
            object
                .get(name)
                .and_then(Value::as_str)
                .ok_or(InputError::Missing(name))
        };
        let event = string("hook_event_name")?;
        if event != "PreToolUse" {
            return Err(InputError::Event(event.to_owned()));
        }
        let tool_name = string("tool_name")?.to_owned();
        let server_name = match object.get("mcp_server").and_then(Value::as_object) {
            Some(server) => {
                if server.keys().filter(|k| *k == "name").count() > 1 {
                    return Err(InputError::Repeated("mcp_server.name"));
                }
                server
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            }
            None => None,
        };
        Ok(Self {
            event: event.to_owned(),
            tool_name,
            server_name,
        })
    }
}

/// The lockfile's server and tool a call names.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub struct Target<'l> {
    /// The server's id.
    pub server: &'l str,
    /// The tool's name.
    pub tool: &'l str,
    /// The approved digest; `None` for a tool with undecidable literals.
    pub approved: Option<Digest>,
}

/// Why a call is blocked. Its `Display` is the reason the hook gives on stderr, which Claude
/// Code shows the model: it names only what the lockfile, the configuration and the guard
/// wrote, never a tool name the lockfile does not hold.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Block {
    /// The name is not `mcp__<server>__<tool>`.
    NotMcp,
    /// No server of the lockfile has a name Claude Code would write this way (or not the one
    /// `mcp_server.name` gives).
    UnknownServer,
    /// The server is in the lockfile, but no approved tool of it is named so.
    NotApproved {
        /// The server.
        server: String,
    },
    /// Several servers and tools of the lockfile are named so by Claude Code.
    Ambiguous {
        /// Each server and tool, as `server/tool`.
        candidates: Vec<(String, String)>,
    },
    /// The approved tool holds number literals with no digest: it cannot be compared.
    Undecidable {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// No state of the guard in front of the server.
    NoState {
        /// The server.
        server: String,
    },
    /// The state cannot be read.
    BadState {
        /// The server.
        server: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The state was written by a guard that is gone, or under another lockfile.
    Stale {
        /// The server.
        server: String,
        /// Why it is stale.
        why: Staleness,
    },
    /// The guard's current reading of the list did not admit the tool.
    NotAdmitted {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// The reading.
        generation: u64,
    },
    /// The guard admitted another form of the tool than the approved one.
    Changed {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// The approved digest.
        approved: Digest,
        /// The digest the guard admitted.
        admitted: Digest,
    },
}

/// Why a state no longer speaks for the guard in front of a server.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Staleness {
    /// The guard that wrote it is no longer running.
    GuardGone,
    /// It was written under another lockfile (another digest).
    OtherLock {
        /// The lockfile's digest now.
        expected: Digest,
        /// The digest the state names.
        found: Digest,
    },
    /// It is the state of another server.
    OtherServer,
}

/// Maps a call onto the lockfile: the servers whose names Claude Code writes as the name's
/// server part (and, when the input gives `mcp_server.name`, the server of exactly that id),
/// each with its approved tools the same way. One server and tool: the target. None: the server
/// is unknown, or the tool is not approved. Several: ambiguous, a block (two ids normalising
/// alike, `my.server` and `my_server`, or a `__` inside a name).
///
/// # Errors
///
/// The [`Block`] that stops the call.
pub fn resolve<'l>(lock: &'l Lockfile, call: &Call) -> Result<Target<'l>, Block> {
    if !call.tool_name.starts_with(PREFIX) {
        return Err(Block::NotMcp);
    }
    let servers: Vec<(&String, _)> = lock
        .servers
        .iter()
        .filter(|(id, _)| call.server_name.as_ref().is_none_or(|name| name == *id))
        .filter(|(id, _)| {
            let prefix = format!("{PREFIX}{}__", normalize(id));
            call.tool_name.starts_with(&prefix)
        })
        .collect();
    if servers.is_empty() {
        return Err(Block::UnknownServer);
    }
    let mut found = Vec::new();
    for (id, server) in &servers {
        for (name, item) in &server.tools {
            if tool_name(id, name) == call.tool_name {
                found.push((id.as_str(), name.as_str(), item));
            }
        }
    }
    match &found[..] {
        [] if servers.len() == 1 => Err(Block::NotApproved {
            server: servers[0].0.clone(),
        }),
        [] => Err(Block::UnknownServer),
        [(server, tool, item)] => match item.pin() {
            Pin::Digest(digest) => Ok(Target {
                server,
                tool,
                approved: Some(*digest),
            }),
            Pin::Undecidable(_) => Err(Block::Undecidable {
                server: (*server).to_owned(),
                tool: (*tool).to_owned(),
            }),
        },
        many => Err(Block::Ambiguous {
            candidates: many
                .iter()
                .map(|(s, t, _)| ((*s).to_owned(), (*t).to_owned()))
                .collect(),
        }),
    }
}

/// Judges a target against the guard's state: the state must be the server's, written under
/// this lockfile (`lock_digest`) by a guard still running (`alive`, which the caller found),
/// and its current reading must have admitted the tool in its approved form.
///
/// # Errors
///
/// The [`Block`] that stops the call.
pub fn check(
    target: &Target<'_>,
    state: &State,
    lock_digest: Digest,
    alive: bool,
) -> Result<(), Block> {
    let server = target.server.to_owned();
    let stale = |why| Block::Stale {
        server: server.clone(),
        why,
    };
    if state.server != target.server {
        return Err(stale(Staleness::OtherServer));
    }
    if state.lock_digest != lock_digest {
        return Err(stale(Staleness::OtherLock {
            expected: lock_digest,
            found: state.lock_digest,
        }));
    }
    if !alive {
        return Err(stale(Staleness::GuardGone));
    }
    let Some(approved) = target.approved else {
        return Err(Block::Undecidable {
            server,
            tool: target.tool.to_owned(),
        });
    };
    match state.tools.get(target.tool) {
        None => Err(Block::NotAdmitted {
            server,
            tool: target.tool.to_owned(),
            generation: state.catalog_generation,
        }),
        Some(admitted) if *admitted != approved => Err(Block::Changed {
            server,
            tool: target.tool.to_owned(),
            approved,
            admitted: *admitted,
        }),
        Some(_) => Ok(()),
    }
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = |text: &str| Excerpt::quoted(text).to_string();
        match self {
            Self::NotMcp => f.write_str(
                "the tool is not an MCP tool (its name does not start with mcp__): configure \
                 the hook with the matcher mcp__.*",
            ),
            Self::UnknownServer => f.write_str(
                "no server of the lockfile is named so: the call goes to a server nobody \
                 approved (tool-added)",
            ),
            Self::NotApproved { server } => write!(
                f,
                "server {} has no approved tool of this name: nobody approved it (tool-added)",
                q(server)
            ),
            Self::Ambiguous { candidates } => {
                write!(
                    f,
                    "the name stands for {} approved tools: ",
                    candidates.len()
                )?;
                for (i, (server, tool)) in candidates.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}/{}", q(server), q(tool))?;
                }
                f.write_str(" (server names Claude Code writes alike): rename a server")
            }
            Self::Undecidable { server, tool } => write!(
                f,
                "{}/{} holds number literals with no digest: it cannot be compared",
                q(server),
                q(tool)
            ),
            Self::NoState { server } => write!(
                f,
                "no state of the guard in front of server {}: is it run with the same --state?",
                q(server)
            ),
            Self::BadState { server, reason } => {
                write!(
                    f,
                    "the guard's state of server {} cannot be read: {reason}",
                    q(server)
                )
            }
            Self::Stale { server, why } => {
                write!(f, "the guard's state of server {} is stale: ", q(server))?;
                match why {
                    Staleness::GuardGone => f.write_str("the guard that wrote it is not running"),
                    Staleness::OtherLock { expected, found } => write!(
                        f,
                        "it was written under lockfile {found}, not this one ({expected})"
                    ),
                    Staleness::OtherServer => f.write_str("it is another server's"),
                }
            }
            Self::NotAdmitted {
                server,
                tool,
                generation,
            } => write!(
                f,
                "the guard in front of {} did not admit {} in its current reading of the list \
                 (catalog generation {generation}): withheld, or not listed yet",
                q(server),
                q(tool)
            ),
            Self::Changed {
                server,
                tool,
                approved,
                admitted,
            } => write!(
                f,
                "the guard in front of {} admitted {} as {admitted}, not as approved \
                 ({approved}) (tool-changed)",
                q(server),
                q(tool)
            ),
        }
    }
}

/// What the guard in front of a server has admitted (docs/formats.md, "Guard state"): written
/// by the guard to `<--state>/<server>.json`, read by the hook.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub struct State {
    /// The server's id.
    pub server: String,
    /// The guard run's id (as in the admission log).
    pub run: String,
    /// The guard's process id.
    pub pid: u32,
    /// When the guard's process started, in the operating system's own count (Linux: clock
    /// ticks since boot), so a process id used again is told apart; `None` where unknown.
    pub process_start: Option<u64>,
    /// The lockfile's digest.
    pub lock_digest: Digest,
    /// The session whose reading this is.
    pub session_id: String,
    /// The reading of the list (from 1; 0 before the first).
    pub catalog_generation: u64,
    /// The tools admitted in it, each with the digest admitted (its approved one).
    pub tools: BTreeMap<String, Digest>,
    /// When the state was written (RFC 3339).
    pub observed_at: String,
}

/// Why a state file cannot be read.
#[derive(Clone, Debug, Eq, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// It breaks a strict-reading rule.
    #[error("{0}")]
    Json(crate::JsonError),
    /// A member is missing, of the wrong type or unknown, or the schema or version is not this
    /// build's.
    #[error("{member}: {expected}")]
    Member {
        /// The member (a JSON pointer).
        member: String,
        /// What it must be.
        expected: &'static str,
    },
}

const STATE_MEMBERS: [&str; 12] = [
    "catalog_generation",
    "lock_digest",
    "observed_at",
    "pid",
    "process_start",
    "run",
    "schema",
    "schema_version",
    "server",
    "session_id",
    "tools",
    "transport",
];

impl State {
    /// Reads a state file strictly: every member known, each of its type.
    ///
    /// # Errors
    ///
    /// A [`StateError`].
    pub fn parse(bytes: &[u8]) -> Result<Self, StateError> {
        let value = crate::parse(bytes).map_err(StateError::Json)?;
        let bad = |member: &str, expected| StateError::Member {
            member: format!("/{member}"),
            expected,
        };
        let object = value.as_object().ok_or(bad("", "an object"))?;
        if let Some(unknown) = object.keys().find(|k| !STATE_MEMBERS.contains(k)) {
            return Err(bad(unknown, "not a member of the guard state"));
        }
        let text = |name: &'static str| {
            object
                .get(name)
                .and_then(Value::as_str)
                .ok_or(bad(name, "a string"))
        };
        let number = |name: &'static str| {
            object
                .get(name)
                .and_then(Value::as_number)
                .and_then(|n| plain(n.literal()))
                .ok_or(bad(name, "a non-negative integer in plain digits"))
        };
        if text("schema")? != STATE_SCHEMA {
            return Err(bad("schema", "mcppin-guard-state"));
        }
        if number("schema_version")? != STATE_VERSION {
            return Err(bad("schema_version", "1, the version this build reads"));
        }
        let digest = |text: &str, name: &str| {
            text.parse::<Digest>()
                .map_err(|_| bad(name, "a digest (sha256: and 64 lowercase hex digits)"))
        };
        let mut tools = BTreeMap::new();
        let listed = object
            .get("tools")
            .and_then(Value::as_object)
            .ok_or(bad("tools", "an object"))?;
        for (name, admitted) in listed.iter() {
            let admitted = admitted.as_str().ok_or(bad("tools", "digests"))?;
            tools.insert(name.to_owned(), digest(admitted, "tools")?);
        }
        Ok(Self {
            server: text("server")?.to_owned(),
            run: text("run")?.to_owned(),
            pid: u32::try_from(number("pid")?).map_err(|_| bad("pid", "a process id"))?,
            process_start: match object.get("process_start") {
                Some(v) if v.is_null() => None,
                _ => Some(number("process_start")?),
            },
            lock_digest: digest(text("lock_digest")?, "lock_digest")?,
            session_id: text("session_id")?.to_owned(),
            catalog_generation: number("catalog_generation")?,
            tools,
            observed_at: text("observed_at")?.to_owned(),
        })
    }

    /// The file's bytes: sorted members, two-space indent, a newline at the end.
    #[must_use]
    pub fn to_bytes(&self, transport: &str) -> Vec<u8> {
        let mut object = Object::new();
        object.insert("schema", STATE_SCHEMA);
        object.insert("schema_version", STATE_VERSION);
        object.insert("server", self.server.as_str());
        object.insert("run", self.run.as_str());
        object.insert("pid", u64::from(self.pid));
        object.insert(
            "process_start",
            self.process_start.map_or_else(Value::null, Value::from),
        );
        object.insert("lock_digest", self.lock_digest.to_string());
        object.insert("transport", transport);
        object.insert("session_id", self.session_id.as_str());
        object.insert("catalog_generation", self.catalog_generation);
        let tools: Object = self
            .tools
            .iter()
            .map(|(name, digest)| (name.clone(), Value::from(digest.to_string())))
            .collect();
        object.insert("tools", tools);
        object.insert("observed_at", self.observed_at.as_str());
        crate::to_pretty(&Value::from(object))
    }
}

fn plain(literal: &str) -> Option<u64> {
    if literal.is_empty()
        || !literal.bytes().all(|b| b.is_ascii_digit())
        || (literal.len() > 1 && literal.starts_with('0'))
    {
        return None;
    }
    literal.parse().ok().filter(|&n| n <= 1 << 53)
}

/// The guard's side: follows the admission events of its sessions and keeps what the current
/// reading of the list admitted, for the state file.
///
/// The current reading is the latest one of any session: a session's `tools/list` answer
/// with a newer catalog generation, or another session's, starts it afresh. A listed tool is
/// admitted when it was allowed and shown to the client; nothing else is.
#[derive(Clone, Debug, Default)]
pub struct Tracker {
    session_id: String,
    generation: u64,
    tools: BTreeMap<String, Digest>,
}

impl Tracker {
    /// A tracker before any reading.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the events of session `session_id`; returns whether the state changed.
    pub fn observe(&mut self, session_id: &str, events: &[Event]) -> bool {
        let mut changed = false;
        for event in events {
            let Event::ToolAdmission(admission) = event else {
                continue;
            };
            if admission.request_method != "tools/list" {
                continue;
            }
            if session_id != self.session_id || admission.catalog_generation != self.generation {
                session_id.clone_into(&mut self.session_id);
                self.generation = admission.catalog_generation;
                self.tools.clear();
                changed = true;
            }
            let shown = admission.decision == Verdict::Allow && admission.shown == Some(true);
            let approved = admission
                .approved_digest
                .as_deref()
                .and_then(|d| d.parse::<Digest>().ok());
            match (shown, approved) {
                (true, Some(digest)) => {
                    if self.tools.insert(admission.tool.clone(), digest) != Some(digest) {
                        changed = true;
                    }
                }
                _ => {
                    if self.tools.remove(&admission.tool).is_some() {
                        changed = true;
                    }
                }
            }
        }
        changed
    }

    /// The state to write, with what the guard knows of itself.
    #[must_use]
    pub fn state(&self, guard: &Guard<'_>, observed_at: &str) -> State {
        State {
            server: guard.server.to_owned(),
            run: guard.run.to_owned(),
            pid: guard.pid,
            process_start: guard.process_start,
            lock_digest: guard.lock_digest,
            session_id: self.session_id.clone(),
            catalog_generation: self.generation,
            tools: self.tools.clone(),
            observed_at: observed_at.to_owned(),
        }
    }
}

/// What the guard writing a state knows of itself.
#[derive(Clone, Copy, Debug)]
pub struct Guard<'a> {
    /// The server's id.
    pub server: &'a str,
    /// The run's id.
    pub run: &'a str,
    /// Its process id.
    pub pid: u32,
    /// When its process started (see [`State::process_start`]).
    pub process_start: Option<u64>,
    /// The lockfile's digest.
    pub lock_digest: Digest,
}

#[cfg(test)]
mod tests;

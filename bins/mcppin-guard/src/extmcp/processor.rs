//! What the processor answers each phase of a gateway's guardrail hook: the mapping between
//! the hook's messages and the lines an engine [`Session`] judges. The engine decides; this
//! module only finds the session, writes the line pair the engine reads, and turns the
//! engine's action into the hook's verdict.
//!
//! - A request phase becomes a client line `{"jsonrpc":"2.0","id":N,"method":M,"params":P}`
//!   with a number `N` of the processor's own; the verdict is returned with metadata
//!   `mcppin: "RUN.N"` (`RUN` the guard run's id), which the gateway hands back to the response phase (its `metadata`
//!   expression `mcpGuardrails.mcppin`), so that the answer is judged as the answer to that
//!   very request (`prompts/get` is pinned by its name and arguments, which its answer does
//!   not carry).
//! - A response phase becomes the server line `{"jsonrpc":"2.0","id":N,"result":R}`.
//! - The engine's answer in the server's place, or its refusal of an answer, becomes a
//!   denial (`PERMISSION_DENIED`: the client reads `-32001` and the guard's own message, no
//!   server text); a `tools/list` rebuilt without quarantined tools becomes a mutated result;
//!   a line forwarded as it came, a pass.
//!
//! Sessions are kept per (session, target): the key is the SHA-256 of the `session` metadata
//! value (it can carry the upstream's session id: the raw value is never kept or shown), with
//! the gateway's target name. Without `session`, each request is a session of its own, kept
//! from its request phase to its answer under its number only. The table is bounded: when it
//! is full after the idle sessions are dropped, a new session is denied (evicting an open one
//! would forget that it was stopped). What requests without a session withhold in quarantine
//! (tools whose served form was refused) is one set per target: each such request starts with
//! it, and what its answer withholds or lifts is carried back, so that a call of a withheld
//! tool is denied in a later request too.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use mcppin_core::engine::{self, ApprovedServer, Event, Forward, Note, Session, Stop, Withheld};
use mcppin_core::projection::{PrefixMode, Projection, Renaming};
use mcppin_core::{Digest, Excerpt};
use mcppin_extmcp::{
    McpRequest, McpRequestResult, McpResponse, McpResponseResult, Verdict, metadata_str,
    string_struct,
};

/// The metadata key of the processor's own number for a request: the gateway's configuration
/// returns it to the response phase as `mcpGuardrails.mcppin`.
pub(crate) const TOKEN_KEY: &str = "mcppin";

/// The metadata key of the client's session id (`request.headers["mcp-session-id"]`).
pub(crate) const SESSION_KEY: &str = "session";

/// Methods whose answer is judged with what their request asked (`prompts/get` is pinned by
/// its name and arguments) or admitted only through their request phase (a call's tool): an
/// answer of one whose request phase this processor did not see is denied. Any other answer
/// is judged on its own when its request phase ran elsewhere (another replica) or never (a
/// method the gateway hooks in its response phase only).
const NEEDS_REQUEST: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// One gateway target, mapped to its lockfile entry.
#[derive(Debug)]
pub(crate) struct Target {
    /// The gateway's name of it (`mcp.targets[].name`).
    pub(crate) name: String,
    /// The lockfile id whose approval it is held to.
    pub(crate) id: String,
    /// The approval projected and renamed as the gateway shows it.
    pub(crate) approved: ApprovedServer,
    /// How the gateway renames its items.
    renaming: Renaming,
}

/// Why a target cannot be held to its lockfile entry.
#[derive(Debug)]
pub(crate) struct Unprojectable {
    pub(crate) target: String,
    pub(crate) id: String,
    pub(crate) error: mcppin_core::projection::Unprojectable,
}

impl Target {
    /// How notes name it: the target and its entry, escaped.
    fn label(&self) -> String {
        format!(
            "target {}, entry {}",
            mcppin_core::escape(&self.name),
            mcppin_core::escape(&self.id)
        )
    }

    /// Target `name`, held to `approved` (the lockfile entry `id`), as a gateway with
    /// `targets` targets in `mode` shows it through `projection`.
    pub(crate) fn new(
        name: String,
        id: String,
        approved: &ApprovedServer,
        projection: &Projection,
        mode: PrefixMode,
        targets: usize,
    ) -> Result<Self, Unprojectable> {
        let renaming = Renaming::new(mode, targets, &name);
        match approved.projected(projection, &renaming) {
            Ok(approved) => Ok(Self {
                name,
                id,
                approved,
                renaming,
            }),
            Err(error) => Err(Unprojectable {
                target: name,
                id,
                error,
            }),
        }
    }
}

/// How the processor runs.
#[derive(Debug)]
pub(crate) struct Config {
    /// The engine's configuration (mode, events, refuser, projection).
    pub(crate) engine: engine::Config,
    /// Every target of the gateway, each mapped to its lockfile entry.
    pub(crate) targets: Vec<Target>,
    /// The most sessions kept at once.
    pub(crate) max_sessions: usize,
    /// How long a session is kept without a phase of it.
    pub(crate) idle: Duration,
    /// This run's id: the numbers handed to the gateway carry it, so that a number another
    /// processor (a replica) gave is never taken for one of this one's.
    pub(crate) run: String,
}

/// A session of one target.
#[derive(Debug)]
struct Kept {
    session: Session,
    /// Its number in this run (stderr notes and the log's `session_id`).
    number: u64,
    /// When a phase of it last came.
    used: Duration,
    /// The numbers of its requests whose answer has not come.
    pending: Vec<u64>,
    /// For a request without a session: what requests without a session withheld when it
    /// began (what its answer withholds or lifts is carried back to them).
    shared: Option<Withheld>,
}

/// Where a session is kept: under its key and target, or (a request without `session`)
/// under its request's number.
#[derive(Clone, Debug, Eq, Hash, PartialEq)]
enum Key {
    Session(Digest, usize),
    Alone(u64),
}

/// What one phase produced besides its verdict: for the log and stderr.
#[derive(Debug, Default)]
pub(crate) struct Said {
    /// Events, with the number of the session they belong to.
    pub(crate) events: Vec<(u64, Vec<Event>)>,
    /// Lines for stderr, already escaped.
    pub(crate) notes: Vec<String>,
}

impl Said {
    fn note(&mut self, number: u64, target: &str, text: &dyn std::fmt::Display) {
        self.notes
            .push(format!("session {number} ({target}): {text}"));
    }

    fn engine(&mut self, kept: &Kept, target: &str, notes: &[Note], events: Vec<Event>) {
        for note in notes {
            self.note(kept.number, target, note);
        }
        if !events.is_empty() {
            self.events.push((kept.number, events));
        }
    }
}

/// The processor: the targets and the sessions. Holds no clock: each phase is given `now`, a
/// duration from the processor's start.
#[derive(Debug)]
pub(crate) struct Processor {
    config: Config,
    kept: HashMap<Key, Kept>,
    next: u64,
    /// What requests without a session withhold, per target.
    alone: Vec<Withheld>,
}

impl Processor {
    pub(crate) fn new(config: Config) -> Self {
        Self {
            alone: vec![Withheld::default(); config.targets.len()],
            config,
            kept: HashMap::new(),
            next: 0,
        }
    }

    fn refused(&self, what: std::fmt::Arguments<'_>) -> String {
        format!("{} refused {what}", self.config.engine.refuser)
    }

    /// The one target a phase is for: every service name must be mapped, and a processor
    /// holding several targets judges one at a time.
    fn target(&self, method: &str, names: &[String]) -> Result<usize, String> {
        let method = method_word(method);
        let [name] = names else {
            if names.is_empty() {
                return Err(self.refused(format_args!(
                    "{method}: the gateway named no target (mcppin-unmapped)"
                )));
            }
            for name in names {
                if !self.config.targets.iter().any(|t| &t.name == name) {
                    return Err(self.unmapped(method, name));
                }
            }
            if names.len() != self.config.targets.len() {
                return Err(self.refused(format_args!(
                    "{method}: the gateway fans out to {} targets, --target maps {}: the \
                     gateway's renaming cannot be the one pinned (mcppin-unmapped)",
                    names.len(),
                    self.config.targets.len()
                )));
            }
            return Err(self.refused(format_args!(
                "{method}: an answer merged from several targets is not judged by this \
                 processor (mcppin-unmapped)"
            )));
        };
        self.config
            .targets
            .iter()
            .position(|t| &t.name == name)
            .ok_or_else(|| self.unmapped(method, name))
    }

    fn unmapped(&self, method: &str, name: &str) -> String {
        self.refused(format_args!(
            "{method}: gateway target {} is mapped to no lockfile entry (--target) \
             (mcppin-unmapped)",
            Excerpt::quoted(name)
        ))
    }

    /// Drops the sessions idle for longer than the TTL.
    fn sweep(&mut self, now: Duration) {
        let idle = self.config.idle;
        self.kept
            .retain(|_, kept| now.saturating_sub(kept.used) <= idle);
    }

    /// The session under `key`, made when there is none and room for one.
    fn session(&mut self, key: &Key, target: usize, now: Duration) -> Option<&mut Kept> {
        if !self.kept.contains_key(key) {
            self.sweep(now);
            if self.kept.len() >= self.config.max_sessions {
                return None;
            }
            self.next += 1;
            let approved = self.config.targets[target].approved.clone();
            let mut session = Session::new(approved, self.config.engine);
            let shared = match key {
                Key::Alone(_) => {
                    session.withhold(&self.alone[target]);
                    Some(self.alone[target].clone())
                }
                Key::Session(..) => None,
            };
            let kept = Kept {
                session,
                number: self.next,
                used: now,
                pending: Vec::new(),
                shared,
            };
            self.kept.insert(key.clone(), kept);
        }
        let kept = self.kept.get_mut(key)?;
        kept.used = now;
        Some(kept)
    }

    /// Judges a request about to go to the gateway's target.
    pub(crate) fn check_request(
        &mut self,
        request: &McpRequest,
        now: Duration,
    ) -> (McpRequestResult, Said) {
        let mut said = Said::default();
        let method = request.method.as_str();
        let target = match self.target(method, &request.service_names) {
            Ok(target) => target,
            Err(reason) => return (McpRequestResult::deny(reason), said),
        };
        let params = match request.mcp_request.as_deref() {
            None => None,
            Some(params) => match self.renamed(target, method, params) {
                Ok(params) => Some(params),
                Err(reason) => return (McpRequestResult::deny(reason), said),
            },
        };
        self.next += 1;
        let number = self.next;
        let key = match session_key(request.metadata_context.as_ref()) {
            Some(digest) => Key::Session(digest, target),
            None => Key::Alone(number),
        };
        let full = self.refused(format_args!(
            "{}: the processor holds --max-sessions sessions (mcppin-unavailable)",
            method_word(method)
        ));
        let stopped = self.refused(format_args!(
            "{}: the session was stopped (mcppin-stopped)",
            method_word(method)
        ));
        let name = self.config.targets[target].label();
        let Some(kept) = self.session(&key, target, now) else {
            return (McpRequestResult::deny(full), said);
        };
        if kept.session.is_stopped() {
            return (McpRequestResult::deny(stopped), said);
        }
        let line = request_line(number, method, params.as_deref());
        let action = kept.session.client_line(&line, now);
        said.engine(kept, &name, &action.notes, action.events);
        let verdict = if let Some(answer) = action.to_client.first() {
            McpRequestResult::deny(refusal_message(answer).unwrap_or(stopped))
        } else if action.to_server == Forward::Original {
            kept.pending.push(number);
            let token = format!("{}.{number}", self.config.run);
            McpRequestResult::pass(Some(string_struct([(TOKEN_KEY, token)])))
        } else {
            McpRequestResult::deny(stopped)
        };
        if matches!(key, Key::Alone(_)) && !matches!(verdict.result, Some(Verdict::Pass(_))) {
            self.kept.remove(&key);
        }
        (verdict, said)
    }

    /// Judges an answer about to reach the client.
    pub(crate) fn check_response(
        &mut self,
        response: &McpResponse,
        now: Duration,
    ) -> (McpResponseResult, Said) {
        let mut said = Said::default();
        let method = response.method.as_str();
        let word = method_word(method);
        let target = match self.target(method, &response.service_names) {
            Ok(target) => target,
            Err(reason) => return (McpResponseResult::deny(reason), said),
        };
        let metadata = response.metadata_context.as_ref();
        let token = metadata_str(metadata, TOKEN_KEY)
            .and_then(|t| t.strip_prefix(self.config.run.as_str())?.strip_prefix('.'))
            .and_then(number);
        let unmatched = self.refused(format_args!(
            "{word}: the answer cannot be matched with its request: the gateway hands back no \
             metadata {TOKEN_KEY} this processor gave (mcppin-unmatched)"
        ));
        let stopped = self.refused(format_args!(
            "{word}: the session was stopped (mcppin-stopped)"
        ));
        let full = self.refused(format_args!(
            "{word}: the processor holds --max-sessions sessions (mcppin-unavailable)"
        ));
        // The request this answers, when this processor saw its request phase.
        let digest = session_key(metadata);
        let matched = token.filter(|token| match &digest {
            Some(digest) => self
                .kept
                .get(&Key::Session(*digest, target))
                .is_some_and(|kept| kept.pending.contains(token)),
            None => self.kept.contains_key(&Key::Alone(*token)),
        });
        if matched.is_none() && NEEDS_REQUEST.contains(&method) {
            // What the request asked is part of the judgement: never guessed.
            return (McpResponseResult::deny(unmatched), said);
        }
        let key = match (digest, matched) {
            (Some(digest), _) => Key::Session(digest, target),
            (None, Some(token)) => Key::Alone(token),
            (None, None) => {
                self.next += 1;
                Key::Alone(self.next)
            }
        };
        let name = self.config.targets[target].label();
        let Some(kept) = self.session(&key, target, now) else {
            return (McpResponseResult::deny(full), said);
        };
        if kept.session.is_stopped() {
            return (McpResponseResult::deny(stopped), said);
        }
        let number = match matched {
            Some(token) => token,
            None => {
                // The request phase ran elsewhere (another replica), or never (a method hooked
                // in its response phase only): the request is judged now, without params,
                // which the answer of this method does not need.
                let number = match key {
                    Key::Alone(number) => number,
                    Key::Session(..) => {
                        self.next += 1;
                        self.next
                    }
                };
                let Some(kept) = self.kept.get_mut(&key) else {
                    return (McpResponseResult::deny(unmatched), said);
                };
                let action = kept
                    .session
                    .client_line(&request_line(number, method, None), now);
                said.engine(kept, &name, &action.notes, action.events);
                if action.to_server != Forward::Original {
                    return (McpResponseResult::deny(stopped), said);
                }
                number
            }
        };
        let malformed = self.refused(format_args!(
            "{word}: the answer breaks the protocol or strict reading (malformed-answer)"
        ));
        let Some(kept) = self.kept.get_mut(&key) else {
            return (McpResponseResult::deny(unmatched), said);
        };
        kept.pending.retain(|n| *n != number);
        let line = answer_line(number, &response.mcp_response);
        let action = kept.session.server_line(&line, now);
        said.engine(kept, &name, &action.notes, action.events);
        if action.to_client != Forward::Original
            && let Some(hint) =
                prefix_hint(&self.config.targets[target], method, &response.mcp_response)
        {
            said.note(kept.number, &name, &hint);
        }
        let verdict = match (&action.stop, &action.to_client) {
            (Some(Stop::Fatal(violation)), _) => {
                said.note(kept.number, &name, &format_args!("stopped: {violation}"));
                McpResponseResult::deny(malformed)
            }
            (_, Forward::Original) => McpResponseResult::pass(),
            (_, Forward::Replace(bytes)) => match replaced(bytes) {
                Replaced::Result(result) => McpResponseResult::mutated(result),
                Replaced::Error(message) => McpResponseResult::deny(message),
                Replaced::Unread => McpResponseResult::deny(stopped),
            },
            (_, Forward::Nothing) => McpResponseResult::deny(stopped),
        };
        if action.stop == Some(Stop::Drift) {
            said.note(
                kept.number,
                &name,
                &"drift was refused: the session is stopped, its later requests are denied",
            );
        }
        if matches!(key, Key::Alone(_))
            && let Some(kept) = self.kept.remove(&key)
            && let Some(before) = &kept.shared
        {
            carry(&mut self.alone[target], before, &kept.session.withheld());
        }
        (verdict, said)
    }

    /// The params of a request to the target, with the name the gateway took its prefix off
    /// put back: the projected approval names items as the gateway shows them.
    fn renamed(&self, target: usize, method: &str, params: &[u8]) -> Result<Vec<u8>, String> {
        let target = &self.config.targets[target];
        if !target.renaming.prefixes_names() || !matches!(method, "tools/call" | "prompts/get") {
            return Ok(params.to_vec());
        }
        let malformed = || {
            self.refused(format_args!(
                "{}: the gateway's params are not an object with a string name \
                 (malformed-request)",
                method_word(method)
            ))
        };
        let mut object: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(params).map_err(|_| malformed())?;
        let Some(serde_json::Value::String(name)) = object.get_mut("name") else {
            return Err(malformed());
        };
        *name = format!("{}_{name}", target.name);
        serde_json::to_vec(&object).map_err(|_| malformed())
    }
}

/// Why a list answer the engine did not pass may be the gateway renaming otherwise than
/// `--prefix-mode` says: every item's name has the target's prefix while the guard expects
/// none, or none has it while the guard expects it. `None` when the names do not tell.
fn prefix_hint(target: &Target, method: &str, result: &[u8]) -> Option<&'static str> {
    let member = match method {
        "tools/list" => "tools",
        "prompts/list" => "prompts",
        _ => return None,
    };
    let value = mcppin_core::parse(result).ok()?;
    let items = value.get(member)?.as_array()?;
    let prefix = format!("{}_", target.name);
    let names: Vec<&str> = items
        .iter()
        .filter_map(|item| item.get("name")?.as_str())
        .collect();
    let prefixed = names.iter().filter(|n| n.starts_with(&prefix)).count();
    let expected = target.renaming.prefixes_names();
    if names.is_empty() || (expected && prefixed > 0) || (!expected && prefixed < names.len()) {
        return None;
    }
    Some(if expected {
        "no name the gateway shows has the target's prefix, which --prefix-mode expects: \
         give the gateway's mcp.prefixMode"
    } else {
        "every name the gateway shows has the target's prefix, which --prefix-mode does not \
         expect: give the gateway's mcp.prefixMode"
    })
}

/// Applies to `all` what changed from `before` to `now`.
fn carry(all: &mut Withheld, before: &Withheld, now: &Withheld) {
    fn apply(all: &mut BTreeSet<String>, before: &BTreeSet<String>, now: &BTreeSet<String>) {
        for added in now.difference(before) {
            all.insert(added.clone());
        }
        for lifted in before.difference(now) {
            all.remove(lifted);
        }
    }
    apply(&mut all.tools, &before.tools, &now.tools);
    apply(&mut all.prompts, &before.prompts, &now.prompts);
}

/// A request number as this processor writes it (plain digits, no sign, no leading zero):
/// `+7` or `07` is a number it never gave.
fn number(text: &str) -> Option<u64> {
    text.parse::<u64>().ok().filter(|n| n.to_string() == text)
}

/// The key of a session: the SHA-256 of its `session` metadata value.
fn session_key(metadata: Option<&mcppin_extmcp::Struct>) -> Option<Digest> {
    metadata_str(metadata, SESSION_KEY)
        .filter(|s| !s.is_empty())
        .map(|s| Digest::of_bytes(s.as_bytes()))
}

/// A method for a message of the processor's own: the gateway's text is not repeated.
fn method_word(method: &str) -> &'static str {
    const KNOWN: [&str; 14] = [
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "completion/complete",
        "logging/setLevel",
        "server/discover",
    ];
    KNOWN
        .iter()
        .find(|known| **known == method)
        .copied()
        .unwrap_or("a request")
}

/// The client line of request `number`.
fn request_line(number: u64, method: &str, params: Option<&[u8]>) -> Vec<u8> {
    let mut line = format!(r#"{{"jsonrpc":"2.0","id":{number},"method":"#).into_bytes();
    line.extend_from_slice(&serde_json::to_vec(method).unwrap_or_default());
    if let Some(params) = params {
        line.extend_from_slice(br#","params":"#);
        line.extend_from_slice(params);
    }
    line.push(b'}');
    line
}

/// The server line answering request `number` with `result`.
fn answer_line(number: u64, result: &[u8]) -> Vec<u8> {
    let mut line = format!(r#"{{"jsonrpc":"2.0","id":{number},"result":"#).into_bytes();
    line.extend_from_slice(result);
    line.push(b'}');
    line
}

/// The message of an answer the engine wrote in the server's place.
fn refusal_message(answer: &[u8]) -> Option<String> {
    match replaced(answer) {
        Replaced::Error(message) => Some(message),
        _ => None,
    }
}

/// What the engine wrote in place of an answer.
enum Replaced {
    /// The result the client is shown instead (quarantine), as its bytes.
    Result(Vec<u8>),
    /// A refusal's message.
    Error(String),
    Unread,
}

fn replaced(line: &[u8]) -> Replaced {
    let Ok(value) = mcppin_core::parse(line) else {
        return Replaced::Unread;
    };
    if let Some(result) = value.get("result") {
        return match line.get(result.span().range()) {
            Some(bytes) => Replaced::Result(bytes.to_vec()),
            None => Replaced::Unread,
        };
    }
    match value.pointer("/error/message").and_then(|m| m.as_str()) {
        Some(message) => Replaced::Error(message.to_owned()),
        None => Replaced::Unread,
    }
}

#[cfg(test)]
mod tests;

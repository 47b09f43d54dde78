//! What the processor answers each phase of a gateway's guardrail hook: the mapping between
//! the hook's messages and the lines an engine [`Session`] judges. The engine decides; this
//! module only finds the sessions, writes the line pair each reads, and turns the engines'
//! actions into the hook's verdict.
//!
//! - A request phase becomes a client line `{"jsonrpc":"2.0","id":N,"method":M,"params":P}`
//!   with a number `N` of the processor's own; the verdict is returned with metadata
//!   `mcppin: "RUN.N"` (`RUN` the guard run's id), which the gateway hands back to the
//!   response phase (its `metadata` expression `mcpGuardrails.mcppin`), so that the answer is
//!   judged as the answer to that very request (`prompts/get` is pinned by its name and
//!   arguments, which its answer does not carry). A notification (which the gateway does not
//!   hook today) is fed without an id, and waits for no answer.
//! - A response phase becomes the server line `{"jsonrpc":"2.0","id":N,"result":R}`.
//! - The engine's answer in the server's place, or its refusal of an answer, becomes a
//!   denial (`PERMISSION_DENIED`: the client reads `-32001` and the guard's own message, no
//!   server text); a list rebuilt without quarantined items becomes a mutated result; a line
//!   forwarded as it came, a pass.
//! - A phase the gateway fans out to several targets (a list, `initialize`) is judged by each
//!   target's session: the request by each, the merged answer cut per target (`merged`). Any
//!   denial denies the whole; a session stopped stops its siblings (the other targets of the
//!   same gateway session).
//!
//! Sessions are kept per (session, target): the key is the SHA-256 of the `session` metadata
//! value (it can carry the upstream's session id: the raw value is never kept or shown), with
//! the gateway's target. Without `session`, each request stands alone: judged against the
//! lock only, and kept from its request phase to its answer only when the answer needs what
//! the request asked (`NEEDS_REQUEST`). The table and what each session waits for are bounded
//! (`table`). What requests without a session withhold in quarantine (tools whose served form
//! was refused) is one set per target: each such request starts with it, and what its answer
//! withholds or lifts is carried back, so that a call of a withheld tool is denied in a later
//! request too.

use std::time::Duration;

use mcppin_core::engine::{self, Event, Forward, Note, Session, Stop, Withheld};
use mcppin_core::{Excerpt, escape_non_ascii};
use mcppin_extmcp::{
    McpRequest, McpRequestResult, McpResponse, McpResponseResult, metadata_str, string_struct,
};

use lines::{
    Replaced, answer_line, carry, method_word, notification_line, prefix_hint, refusal_message,
    replaced, request_line, session_key,
};
use table::{Kept, Key, Table};

pub(crate) use target::Target;

mod lines;
mod merged;
mod table;
mod target;

/// The metadata key of the processor's own number for a request: the gateway's configuration
/// returns it to the response phase as `mcpGuardrails.mcppin`.
pub(crate) const TOKEN_KEY: &str = "mcppin";

/// Methods whose answer is judged with what their request asked (`prompts/get` is pinned by
/// its name and arguments) or admitted only through their request phase (a call's tool): an
/// answer of one whose request phase this processor did not see is denied. Any other answer
/// is judged on its own when its request phase ran elsewhere (another replica) or never (a
/// method the gateway hooks in its response phase only).
const NEEDS_REQUEST: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

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
        self.events_of(kept, events);
    }

    /// A denial of the processor's own (a target mapped to no entry, a name renamed otherwise,
    /// an answer matched with no request): no engine note tells it, so the operator reads it
    /// here.
    fn denied(&mut self, refuser: &str, reason: &str) {
        let text = reason.strip_prefix(refuser).unwrap_or(reason).trim_start();
        self.notes.push(escape_non_ascii(text).into_owned());
    }

    fn events_of(&mut self, kept: &Kept, events: Vec<Event>) {
        if !events.is_empty() {
            self.events.push((kept.number, events));
        }
    }
}

/// One target's verdict on its part of an answer.
enum Part {
    Pass,
    Mutated(Vec<u8>),
    Deny(String),
}

/// The processor: the targets and the sessions. Holds no clock: each phase is given `now`, a
/// duration from the processor's start.
#[derive(Debug)]
pub(crate) struct Processor {
    config: Config,
    kept: Table,
    next: u64,
    /// What requests without a session withhold, per target.
    alone: Vec<Withheld>,
}

impl Processor {
    pub(crate) fn new(config: Config) -> Self {
        Self {
            alone: vec![Withheld::default(); config.targets.len()],
            config,
            kept: Table::default(),
            next: 0,
        }
    }

    fn refused(&self, what: std::fmt::Arguments<'_>) -> String {
        format!("{} refused {what}", self.config.engine.refuser)
    }

    /// The targets a phase is for: every service name must be mapped, once; a phase fanned
    /// out to several targets must name every target given (the gateway's renaming depends
    /// on their number).
    fn targets(&self, method: &str, names: &[String]) -> Result<Vec<usize>, String> {
        let method = method_word(method);
        if names.is_empty() {
            return Err(self.refused(format_args!(
                "{method}: the gateway named no target (mcppin-unmapped)"
            )));
        }
        let mut targets = Vec::with_capacity(names.len());
        for name in names {
            let Some(target) = self.config.targets.iter().position(|t| &t.name == name) else {
                return Err(self.unmapped(method, name));
            };
            if targets.contains(&target) {
                return Err(self.refused(format_args!(
                    "{method}: the gateway named target {} twice (mcppin-unmapped)",
                    Excerpt::quoted(name)
                )));
            }
            targets.push(target);
        }
        if targets.len() > 1 && targets.len() != self.config.targets.len() {
            return Err(self.refused(format_args!(
                "{method}: the gateway fans out to {} targets, --target maps {}: the \
                 gateway's renaming cannot be the one pinned (mcppin-unmapped)",
                targets.len(),
                self.config.targets.len()
            )));
        }
        Ok(targets)
    }

    fn unmapped(&self, method: &str, name: &str) -> String {
        self.refused(format_args!(
            "{method}: gateway target {} is mapped to no lockfile entry (--target) \
             (mcppin-unmapped)",
            Excerpt::quoted(name)
        ))
    }

    /// The session under `key`, made when there is none and room for one. A new session of
    /// a gateway session whose other target's session was stopped starts stopped.
    fn session(&mut self, key: Key, target: usize, now: Duration) -> Option<&mut Kept> {
        if !self.kept.contains(&key) {
            self.next += 1;
            let approved = self.config.targets[target].approved.clone();
            let mut session = Session::new(approved, self.config.engine);
            let shared = match key {
                Key::Alone(..) => {
                    session.withhold(&self.alone[target]);
                    Some(self.alone[target].clone())
                }
                Key::Session(..) => None,
            };
            if self.kept.sibling_stopped(key, self.config.targets.len()) {
                session.stop();
            }
            let kept = Kept::new(session, self.next, now, shared);
            let (max, idle) = (self.config.max_sessions, self.config.idle);
            self.kept.insert(key, kept, max, now, idle)?;
        }
        let kept = self.kept.get_mut(&key)?;
        kept.used = now;
        Some(kept)
    }

    /// Judges a request about to go to the gateway's targets.
    pub(crate) fn check_request(
        &mut self,
        request: &McpRequest,
        now: Duration,
    ) -> (McpRequestResult, Said) {
        let mut said = Said::default();
        let method = request.method.as_str();
        let word = method_word(method);
        let targets = match self.targets(method, &request.service_names) {
            Ok(targets) => targets,
            Err(reason) => {
                said.denied(self.config.engine.refuser, &reason);
                return (McpRequestResult::deny(reason), said);
            }
        };
        let params = match (request.mcp_request.as_deref(), targets.as_slice()) {
            (None, _) => None,
            (Some(params), [target]) => match self.renamed(*target, method, params) {
                Ok(params) => Some(params),
                Err(reason) => {
                    said.denied(self.config.engine.refuser, &reason);
                    return (McpRequestResult::deny(reason), said);
                }
            },
            (Some(params), _) => Some(params.to_vec()),
        };
        let notification = method.starts_with("notifications/");
        self.next += 1;
        let number = self.next;
        let digest = session_key(request.metadata_context.as_ref());
        let full = self.refused(format_args!(
            "{word}: the processor holds --max-sessions sessions (mcppin-unavailable)"
        ));
        let stopped = self.refused(format_args!(
            "{word}: the session was stopped (mcppin-stopped)"
        ));
        let line = if notification {
            notification_line(method, params.as_deref())
        } else {
            request_line(number, method, params.as_deref())
        };
        let count = self.config.targets.len();
        let mut denial = None;
        let mut waiting = Vec::new();
        let mut stop = None;
        for &target in &targets {
            let key = match digest {
                Some(digest) => Key::Session(digest, target),
                None => Key::Alone(number, target),
            };
            let name = self.config.targets[target].label();
            let Some(kept) = self.session(key, target, now) else {
                denial = Some(full.clone());
                break;
            };
            if kept.session.is_stopped() {
                denial = Some(stopped.clone());
                stop = Some(key);
                break;
            }
            let forgotten = kept.make_room(now);
            said.events_of(kept, forgotten);
            let action = kept.session.client_line(&line, now);
            said.engine(kept, &name, &action.notes, action.events);
            if let Some(answer) = action.to_client.first() {
                denial = Some(refusal_message(answer).unwrap_or_else(|| stopped.clone()));
            } else if action.to_server != Forward::Original {
                denial = Some(stopped.clone());
            } else if !notification {
                let events = kept.wait(number, now);
                said.events_of(kept, events);
                waiting.push(key);
            }
            if kept.session.is_stopped() {
                stop = Some(key);
            }
            if denial.is_some() {
                break;
            }
        }
        if let Some(key) = stop {
            self.kept.stop_siblings(key, count);
        }
        if denial.is_some() {
            // The targets that took the request never see it: none waits for its answer.
            for key in &waiting {
                if let Some(kept) = self.kept.get_mut(key) {
                    let events = kept.forget(number, now);
                    said.events_of(kept, events);
                }
            }
        }
        if digest.is_none() {
            // A request without a session is kept to its answer only when the answer needs it.
            let keep = denial.is_none() && !notification && NEEDS_REQUEST.contains(&method);
            for &target in &targets {
                if !keep {
                    self.kept.remove(&Key::Alone(number, target));
                }
            }
        }
        let verdict = match denial {
            Some(reason) => McpRequestResult::deny(reason),
            None if notification => McpRequestResult::pass(None),
            None => {
                let token = format!("{}.{number}", self.config.run);
                McpRequestResult::pass(Some(string_struct([(TOKEN_KEY, token)])))
            }
        };
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
        let targets = match self.targets(method, &response.service_names) {
            Ok(targets) => targets,
            Err(reason) => {
                said.denied(self.config.engine.refuser, &reason);
                return (McpResponseResult::deny(reason), said);
            }
        };
        let metadata = response.metadata_context.as_ref();
        let token = metadata_str(metadata, TOKEN_KEY)
            .and_then(|t| t.strip_prefix(self.config.run.as_str())?.strip_prefix('.'))
            .and_then(number);
        let unmatched = self.refused(format_args!(
            "{word}: the answer cannot be matched with its request: the gateway hands back no \
             metadata {TOKEN_KEY} this processor gave (mcppin-unmatched)"
        ));
        // The request this answers, when this processor saw its request phase (and still
        // waits for its answer).
        let digest = session_key(metadata);
        let matched = token.filter(|token| {
            targets.iter().all(|&target| match digest {
                Some(digest) => self
                    .kept
                    .get(&Key::Session(digest, target))
                    .is_some_and(|kept| kept.waits(*token)),
                None => self.kept.contains(&Key::Alone(*token, target)),
            })
        });
        if matched.is_none() && NEEDS_REQUEST.contains(&method) {
            // What the request asked is part of the judgement: never guessed.
            said.denied(self.config.engine.refuser, &unmatched);
            return (McpResponseResult::deny(unmatched), said);
        }
        let split = if targets.len() > 1 {
            match merged::split(
                method,
                &response.mcp_response,
                &targets,
                &self.config.targets,
            ) {
                Ok(split) => Some(split),
                Err(why) => {
                    let reason = self.unsplit(word, &why);
                    return (McpResponseResult::deny(reason), said);
                }
            }
        } else {
            None
        };
        let alone = match (digest, matched) {
            (None, None) => {
                self.next += 1;
                Some(self.next)
            }
            _ => None,
        };
        let mut parts = Vec::with_capacity(targets.len());
        let mut stop = None;
        for (i, &target) in targets.iter().enumerate() {
            let key = match (digest, matched, alone) {
                (Some(digest), _, _) => Key::Session(digest, target),
                (None, Some(token), _) => Key::Alone(token, target),
                (None, None, number) => Key::Alone(number.unwrap_or_default(), target),
            };
            let result = split
                .as_ref()
                .map_or(response.mcp_response.as_slice(), |s| s.parts[i].as_slice());
            let part = self.judge_answer(key, target, method, matched, result, now, &mut said);
            if self.kept.get(&key).is_some_and(|k| k.session.is_stopped()) {
                stop = Some(key);
            }
            let denied = matches!(part, Part::Deny(_));
            parts.push(part);
            if denied {
                break;
            }
        }
        if let Some(key) = stop {
            self.kept.stop_siblings(key, self.config.targets.len());
        }
        if let Some(Part::Deny(reason)) = parts.iter().find(|p| matches!(p, Part::Deny(_))) {
            return (McpResponseResult::deny(reason.clone()), said);
        }
        let replaced: Vec<(usize, Vec<u8>)> = parts
            .into_iter()
            .enumerate()
            .filter_map(|(i, part)| match part {
                Part::Mutated(result) => Some((i, result)),
                _ => None,
            })
            .collect();
        let verdict = match (replaced.len(), split) {
            (0, _) => McpResponseResult::pass(),
            (_, None) => match replaced.into_iter().next() {
                Some((_, result)) => McpResponseResult::mutated(result),
                None => McpResponseResult::pass(),
            },
            (_, Some(split)) => match split.rebuilt(&response.mcp_response, &replaced) {
                Some(result) => McpResponseResult::mutated(result),
                None => McpResponseResult::deny(self.unsplit(word, &merged::Unsplit::Malformed)),
            },
        };
        (verdict, said)
    }

    /// The refusal of a merged answer that cannot be told apart per target.
    fn unsplit(&self, word: &str, why: &merged::Unsplit) -> String {
        match why {
            merged::Unsplit::Malformed => self.refused(format_args!(
                "{word}: the answer breaks the protocol or strict reading (malformed-answer)"
            )),
            merged::Unsplit::Unattributed => self.refused(format_args!(
                "{word}: an item of the gateway's merged answer carries no target's prefix \
                 (mcppin-unmapped)"
            )),
            merged::Unsplit::Instructions => self.refused(format_args!(
                "{word}: the gateway's merged instructions cannot be cut per target: a \
                 target's section is marked twice (instructions-changed)"
            )),
        }
    }

    /// Judges one target's part of an answer in the session under `key`: the request it
    /// answers is `matched`, or (its request phase ran elsewhere, or never) fed now without
    /// params, which the answer of such a method does not need.
    #[allow(clippy::too_many_arguments)]
    fn judge_answer(
        &mut self,
        key: Key,
        target: usize,
        method: &str,
        matched: Option<u64>,
        result: &[u8],
        now: Duration,
        said: &mut Said,
    ) -> Part {
        let word = method_word(method);
        let stopped = self.refused(format_args!(
            "{word}: the session was stopped (mcppin-stopped)"
        ));
        let full = self.refused(format_args!(
            "{word}: the processor holds --max-sessions sessions (mcppin-unavailable)"
        ));
        let malformed = self.refused(format_args!(
            "{word}: the answer breaks the protocol or strict reading (malformed-answer)"
        ));
        let name = self.config.targets[target].label();
        let fresh = match (key, matched) {
            (Key::Alone(number, _), _) => number,
            (Key::Session(..), Some(token)) => token,
            (Key::Session(..), None) => {
                self.next += 1;
                self.next
            }
        };
        let Some(kept) = self.session(key, target, now) else {
            return Part::Deny(full);
        };
        if kept.session.is_stopped() {
            return Part::Deny(stopped);
        }
        let number = match matched {
            Some(token) => token,
            None => {
                let action = kept
                    .session
                    .client_line(&request_line(fresh, method, None), now);
                said.engine(kept, &name, &action.notes, action.events);
                if action.to_server != Forward::Original {
                    return Part::Deny(stopped);
                }
                fresh
            }
        };
        let Some(kept) = self.kept.get_mut(&key) else {
            return Part::Deny(stopped);
        };
        kept.answered(number);
        let action = kept.session.server_line(&answer_line(number, result), now);
        said.engine(kept, &name, &action.notes, action.events);
        let single = self.config.targets.len() == 1;
        if action.to_client != Forward::Original
            && single
            && let Some(hint) = prefix_hint(&self.config.targets[target], method, result)
        {
            said.note(kept.number, &name, &hint);
        }
        let part = match (&action.stop, &action.to_client) {
            (Some(Stop::Fatal(violation)), _) => {
                said.note(kept.number, &name, &format_args!("stopped: {violation}"));
                Part::Deny(malformed)
            }
            (_, Forward::Original) => Part::Pass,
            (_, Forward::Replace(bytes)) => match replaced(bytes) {
                Replaced::Result(result) => Part::Mutated(result),
                Replaced::Error(message) => Part::Deny(message),
                Replaced::Unread => Part::Deny(stopped),
            },
            (_, Forward::Nothing) => Part::Deny(stopped),
        };
        if action.stop == Some(Stop::Drift) {
            said.note(
                kept.number,
                &name,
                &"drift was refused: the session is stopped, its later requests are denied",
            );
        }
        if matches!(key, Key::Alone(..))
            && let Some(kept) = self.kept.remove(&key)
            && let Some(before) = &kept.shared
        {
            carry(&mut self.alone[target], before, &kept.session.withheld());
        }
        part
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

/// A request number as this processor writes it (plain digits, no sign, no leading zero):
/// `+7` or `07` is a number it never gave.
fn number(text: &str) -> Option<u64> {
    text.parse::<u64>().ok().filter(|n| n.to_string() == text)
}

#[cfg(test)]
mod tests;

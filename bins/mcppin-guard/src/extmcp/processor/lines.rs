//! The lines the engine reads for each phase, and what its actions become: the words of the
//! processor's refusals, the refusal an engine answer carries, the result a quarantine writes.

use std::collections::BTreeSet;

use mcppin_core::Digest;
use mcppin_core::engine::Withheld;
use mcppin_extmcp::metadata_str;

use super::Target;

/// The metadata key of the client's session id (`request.headers["mcp-session-id"]`).
pub(super) const SESSION_KEY: &str = "session";

/// Why a list answer the engine did not pass may be the gateway renaming otherwise than
/// `--prefix-mode` says: every item's name has the target's prefix while the guard expects
/// none, or none has it while the guard expects it. `None` when the names do not tell.
pub(super) fn prefix_hint(target: &Target, method: &str, result: &[u8]) -> Option<&'static str> {
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
pub(super) fn carry(all: &mut Withheld, before: &Withheld, now: &Withheld) {
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

/// The key of a session: the SHA-256 of its `session` metadata value.
pub(super) fn session_key(metadata: Option<&mcppin_extmcp::Struct>) -> Option<Digest> {
    metadata_str(metadata, SESSION_KEY)
        .filter(|s| !s.is_empty())
        .map(|s| Digest::of_bytes(s.as_bytes()))
}

/// A method for a message of the processor's own: the gateway's text is not repeated.
pub(super) fn method_word(method: &str) -> &'static str {
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
pub(super) fn request_line(number: u64, method: &str, params: Option<&[u8]>) -> Vec<u8> {
    let mut line = format!(r#"{{"jsonrpc":"2.0","id":{number},"method":"#).into_bytes();
    line.extend_from_slice(&serde_json::to_vec(method).unwrap_or_default());
    if let Some(params) = params {
        line.extend_from_slice(br#","params":"#);
        line.extend_from_slice(params);
    }
    line.push(b'}');
    line
}

/// The client line of a notification (no id: no answer is waited for).
pub(super) fn notification_line(method: &str, params: Option<&[u8]>) -> Vec<u8> {
    let mut line = br#"{"jsonrpc":"2.0","method":"#.to_vec();
    line.extend_from_slice(&serde_json::to_vec(method).unwrap_or_default());
    if let Some(params) = params {
        line.extend_from_slice(br#","params":"#);
        line.extend_from_slice(params);
    }
    line.push(b'}');
    line
}

/// The server line answering request `number` with `result`.
pub(super) fn answer_line(number: u64, result: &[u8]) -> Vec<u8> {
    let mut line = format!(r#"{{"jsonrpc":"2.0","id":{number},"result":"#).into_bytes();
    line.extend_from_slice(result);
    line.push(b'}');
    line
}

/// The message of an answer the engine wrote in the server's place.
pub(super) fn refusal_message(answer: &[u8]) -> Option<String> {
    match replaced(answer) {
        Replaced::Error(message) => Some(message),
        _ => None,
    }
}

/// What the engine wrote in place of an answer.
pub(super) enum Replaced {
    /// The result the client is shown instead (quarantine), as its bytes.
    Result(Vec<u8>),
    /// A refusal's message.
    Error(String),
    Unread,
}

pub(super) fn replaced(line: &[u8]) -> Replaced {
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

//! What the engine tells the person running a session: the [`Note`]s of each action and the
//! [`Violation`] a session stops on. Each keeps its data (text from the wire raw) and renders
//! its message through `Display`, where every string from the wire is escaped and cut short.

use std::fmt;

use crate::JsonError;
use crate::admission::{Reason, ToolChange, shown};
use crate::error::Literals;
use crate::escape;
use crate::fold::Conflict;
use crate::projection::Foreign;
use crate::report::{GuardPolicy, Policy, value_text};
use crate::value::Value;

/// A note for the person running the session (stderr): what the engine refused, dropped or
/// noticed. The client reads none of it.
///
/// Its `Display` is one line, except [`Note::Tool`]: the heading, then one indented line per
/// part of each change. An embedder writes the first line after its own prefix
/// (`mcppin-guard: `) and the indented lines as they are.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Note {
    /// A client line no session routes, answered in the server's place.
    Unroutable(Unroutable),
    /// A notification from the client that two readers could read apart, dropped: there is no
    /// id to answer it with.
    AmbiguousNotification(Ambiguity),
    /// A `tools/call` notification from the client the gate refused, dropped.
    CallNotification {
        /// The tool it calls (raw).
        tool: String,
        /// Why the call is refused.
        reason: Reason,
    },
    /// The server calls itself by another name than the approved one (server-renamed,
    /// reported, not refused).
    ServerRenamed {
        /// The approved name; `None` when the approval recorded none (raw).
        approved: Option<String>,
        /// The name served; `None` when the server says nothing (raw).
        observed: Option<String>,
    },
    /// An approved item the reading of its list did not serve (`tool-removed`,
    /// `prompt-removed`, `resource-template-removed`; reported, not refused).
    NotServed {
        /// The policy.
        policy: Policy,
        /// The item's key (raw).
        key: String,
    },
    /// An answer pinned for the session that differs from the first answer to the same
    /// request, or that holds number literals no float64 reader pins down.
    SessionPin {
        /// The policy of the method (`prompt-changed`, ...).
        policy: GuardPolicy,
        /// The method (raw).
        method: String,
        /// The prompt's name, for `prompts/get` (raw).
        name: Option<String>,
        /// [`Reason::Undecidable`] for literals no float64 reader pins down, else
        /// [`Reason::SessionPinChanged`].
        reason: Reason,
    },
    /// An answer without the shape the protocol gives it, refused: nothing of it was
    /// compared with the lock.
    Malformed {
        /// The method answered (raw).
        method: String,
        /// Where it is malformed.
        reason: Reason,
    },
    /// A list answer holding an item with a member the session's projection drops: the
    /// gateway in front projects differently, so nothing of the answer was compared; refused
    /// as a malformed answer.
    Foreign {
        /// The method answered (raw).
        method: String,
        /// The item and its member.
        foreign: Foreign,
    },
    /// An item of the widened surface (a prompt, a resource template, the instructions) that
    /// departs from the lock.
    Departed {
        /// The policy.
        policy: Policy,
        /// The item's key; `None` for the instructions (raw).
        key: Option<String>,
        /// The method answered (raw).
        method: String,
    },
    /// A tool of a `tools/list` answer the gate refused, with what differs from its approval.
    Tool {
        /// The tool's name as served (raw).
        name: String,
        /// Why it is refused.
        reason: Reason,
        /// The first differing places (see [`ToolChange`]).
        changes: Vec<ToolChange>,
        /// How many more differ than `changes` lists.
        unlisted: usize,
    },
    /// Quarantine kept the session going without what departed.
    Quarantined(Quarantined),
    /// The client declared other capabilities than the capture the lock was approved from,
    /// and the difference may explain the page ([`ServerAction::capabilities`]).
    ///
    /// [`ServerAction::capabilities`]: super::ServerAction::capabilities
    Capabilities(CapabilitiesHint),
    /// The server runs another artifact than the lock approved, or one the guard could not
    /// read where the lock pins one: the server is refused ([`super::check_artifact`]).
    Artifact(ArtifactNote),
}

/// What a refused artifact moved: the note of [`super::check_artifact`].
///
/// Its `Display` is a heading, then one indented line per approved and served entry.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub struct ArtifactNote {
    /// `artifact-changed` or `artifact-unknown`.
    pub policy: Policy,
    /// Why the artifact could not be read (raw), for `artifact-unknown`.
    pub unread: Option<String>,
    /// Each moved part as its approved and its served entry ([`crate::artifact::Artifact::entries`],
    /// raw); for `artifact-unknown`, every approved entry with no served one.
    pub moved: Vec<(Option<String>, Option<String>)>,
}

impl fmt::Display for ArtifactNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.unread {
            Some(reason) => write!(
                f,
                "{}: the server's artifact could not be read ({}); the lock pins one, so it is \
                 refused",
                self.policy,
                escape(reason)
            )?,
            None => write!(
                f,
                "{}: the server runs another artifact than the lock approved",
                self.policy
            )?,
        }
        for (approved, served) in &self.moved {
            if let Some(entry) = approved {
                write!(f, "\n  approved: {}", escape(entry))?;
            }
            if let Some(entry) = served {
                write!(f, "\n  served:   {}", escape(entry))?;
            }
        }
        Ok(())
    }
}

/// A client line no session routes (see [`Line::is_routable`](super::Line::is_routable)).
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Unroutable {
    /// Not JSON.
    NotJson(JsonError),
    /// A carriage return inside the line.
    InnerReturn,
    /// JSON, but not an object.
    NotObject,
    /// A batch that is empty or holds something other than objects.
    BadBatch,
}

/// Why a request is ambiguous: one reading for every reader (docs/threat-model.md, "Parser
/// differentials").
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Ambiguity {
    /// Member names a case-insensitive reader reads differently.
    Conflict(Conflict),
    /// A member the request is routed by repeats.
    Repeated,
}

/// What quarantine kept from an answer that departed.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Quarantined {
    /// A `tools/list` answer, rebuilt with the approved, unchanged tools.
    Tools,
    /// A list of the widened surface, rebuilt with the approved, unchanged items.
    Items,
    /// A `prompts/get` answer: refused, and the prompt withheld for the session.
    Prompt,
}

/// How the server broke the protocol or strict reading: the session stops, and nothing of
/// the line was forwarded ([`Stop::Fatal`](super::Stop::Fatal)).
///
/// Its `Display` is the message for stderr, ending with "nothing of it was forwarded"; text
/// from the wire is escaped and cut short there.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Violation {
    /// A line that is not JSON.
    NotJson(JsonError),
    /// A carriage return inside a line: a client that ends lines there would read other
    /// messages.
    InnerReturn,
    /// A line that is neither an object nor a non-empty batch.
    NotObject,
    /// A batch element that is not an object.
    BatchElementNotObject,
    /// A message that repeats a member it is routed by (`jsonrpc`, `id`, `method`, `result`,
    /// `error`).
    RepeatedMember(&'static str),
    /// A message whose member names a case-insensitive reader reads differently.
    Ambiguous(Conflict),
    /// An error answer whose `error` is not an object.
    ErrorNotObject,
    /// An error answer whose `error` members a case-insensitive reader reads differently.
    AmbiguousError(Conflict),
    /// A message mixing `method`, `result` and `error`.
    MixedMembers,
    /// An error answer with id `null` that carries more than `jsonrpc`, `id` and `error`.
    NullIdWithMore,
    /// A message that is neither request, notification nor response.
    NotAMessage,
    /// A message whose `jsonrpc` member is missing or not the string `"2.0"`.
    NotJsonRpc2,
    /// An answer to an id that is not outstanding (never asked, or already answered).
    NotOutstanding {
        /// The id as the engine keys it (raw).
        id: String,
    },
    /// An answer with neither `result` nor `error`.
    NoResultNorError {
        /// The method answered (raw).
        method: String,
    },
    /// An answer whose `result` members a case-insensitive reader reads differently.
    AmbiguousResult {
        /// The method answered (raw).
        method: String,
        /// The conflict.
        conflict: Conflict,
    },
    /// An answer that carries text for the model and breaks strict reading.
    NotStrict {
        /// The method answered (raw).
        method: String,
        /// The strict reader's refusal.
        error: JsonError,
    },
    /// An answer the engine judges without a `result` after all.
    NoResult,
    /// An `input_required` answer that carries more than an input request.
    InputRequiredWithMore {
        /// The method answered (raw).
        method: String,
    },
}

/// The capabilities behind a departure: what the live client declared in `initialize`, and
/// what the client of the approved capture declared (the lockfile's `client_capabilities`).
#[derive(Clone, Debug, PartialEq)]
pub struct CapabilitiesHint {
    /// The live client's `capabilities` (`{}` when it sent none).
    pub declared: Value,
    /// The capabilities the approved surface was captured under.
    pub approved: Value,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unroutable(unroutable) => write!(f, "{unroutable}"),
            Self::Artifact(note) => write!(f, "{note}"),
            Self::AmbiguousNotification(why) => {
                write!(
                    f,
                    "dropped an ambiguous notification from the client: {why}"
                )
            }
            Self::CallNotification { tool, reason } => write!(
                f,
                "dropped a tools/call notification from the client: {reason}: {}",
                shown(tool)
            ),
            Self::ServerRenamed { approved, observed } => {
                let show =
                    |name: &Option<String>| name.as_deref().map_or_else(|| "(none)".into(), shown);
                write!(
                    f,
                    "server-renamed: approved as {}, calls itself {} (reported, not refused)",
                    show(approved),
                    show(observed)
                )
            }
            Self::NotServed { policy, key } => write!(
                f,
                "{policy}: {} is approved but was not served (reported, not refused)",
                shown(key)
            ),
            Self::SessionPin {
                policy,
                method,
                name,
                reason,
            } => {
                let what = match name {
                    Some(name) => format!("{} {}", escape(method), escape(name)),
                    None => escape(method).into_owned(),
                };
                match reason {
                    Reason::Undecidable(literals) => write!(
                        f,
                        "{policy}: the answer to {what} holds number literals no float64 reader \
                         can tell from their neighbours ({}), so it cannot be pinned",
                        Literals(literals)
                    ),
                    _ => write!(
                        f,
                        "{policy}: the answer to {what} differs from the first answer to the same \
                         request in this session"
                    ),
                }
            }
            Self::Malformed { method, reason } => {
                write!(f, "refused {}: {reason}", escape(method))
            }
            Self::Foreign { method, foreign } => {
                write!(f, "refused {}: {foreign}", escape(method))
            }
            Self::Departed {
                policy,
                key,
                method,
            } => {
                let what = key
                    .as_deref()
                    .map_or_else(|| "the instructions".to_owned(), shown);
                write!(
                    f,
                    "{policy}: {what} departs from the lock ({})",
                    escape(method)
                )
            }
            Self::Tool {
                name,
                reason,
                changes,
                unlisted,
            } => {
                write!(f, "{reason}: {}", shown(name))?;
                // Short renderings of the values, each with its whole length.
                let absent = "(absent)";
                for change in changes {
                    let classes: Vec<&str> = change.classes.iter().map(|c| c.name()).collect();
                    write!(
                        f,
                        "\n  {} ({})\n    approved: {}\n    served:   {}",
                        shown(&change.pointer),
                        classes.join(", "),
                        change.old.as_deref().unwrap_or(absent),
                        change.new.as_deref().unwrap_or(absent)
                    )?;
                }
                if *unlisted > 0 {
                    write!(f, "\n  and {unlisted} more changes")?;
                }
                Ok(())
            }
            Self::Quarantined(quarantined) => f.write_str(match quarantined {
                Quarantined::Tools => {
                    "quarantined: the client sees only the approved, unchanged tools"
                }
                Quarantined::Items => {
                    "quarantined: the client sees only the approved, unchanged items"
                }
                Quarantined::Prompt => "quarantined: the prompt is withheld for the session",
            }),
            Self::Capabilities(hint) => write!(
                f,
                "the client declared the capabilities {}, but the lock was captured under {}: a \
                 server may serve another surface to a client declaring other capabilities",
                value_text(&hint.declared),
                value_text(&hint.approved)
            ),
        }
    }
}

impl fmt::Display for Unroutable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotJson(err) => {
                write!(f, "refused a line from the client that is not JSON ({err})")
            }
            Self::InnerReturn => {
                f.write_str("refused a line from the client with a carriage return inside it")
            }
            Self::NotObject => {
                f.write_str("refused a line from the client that is not a JSON object")
            }
            Self::BadBatch => {
                f.write_str("refused a batch from the client that is empty or holds a non-object")
            }
        }
    }
}

impl fmt::Display for Ambiguity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Conflict(conflict) => write!(f, "{conflict}"),
            Self::Repeated => f.write_str("a member name repeats"),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotJson(err) => write!(f, "the server sent a line that is not JSON ({err})"),
            Self::InnerReturn => f.write_str(
                "the server sent a line with a carriage return inside it (a client that ends \
                 lines there would read other messages)",
            ),
            Self::NotObject => f.write_str("the server sent a line that is not a JSON object"),
            Self::BatchElementNotObject => {
                f.write_str("the server sent a batch element that is not an object")
            }
            Self::RepeatedMember(name) => {
                write!(
                    f,
                    "the server sent a message that repeats the member {name}"
                )
            }
            Self::Ambiguous(conflict) => {
                write!(f, "the server sent an ambiguous message: {conflict}")
            }
            Self::ErrorNotObject => {
                f.write_str("the server sent an error answer whose error is not an object")
            }
            Self::AmbiguousError(conflict) => {
                write!(f, "the server sent an ambiguous error answer: {conflict}")
            }
            Self::MixedMembers => {
                f.write_str("the server sent a message mixing method, result and error members")
            }
            Self::NullIdWithMore => f.write_str(
                "the server sent an error answer with id null that carries members other than \
                 jsonrpc, id and error",
            ),
            Self::NotAMessage => f.write_str(
                "the server sent a message that is neither request, notification nor response",
            ),
            Self::NotJsonRpc2 => f.write_str(
                "the server sent a message whose jsonrpc member is missing or not \"2.0\"",
            ),
            Self::NotOutstanding { id } => write!(
                f,
                "the server answered id {} which is not outstanding (never asked or already \
                 answered)",
                shown(id)
            ),
            Self::NoResultNorError { method } => write!(
                f,
                "the server's answer to {} has neither result nor error",
                escape(method)
            ),
            Self::AmbiguousResult { method, conflict } => write!(
                f,
                "the server's answer to {} is ambiguous: {conflict}",
                escape(method)
            ),
            Self::NotStrict { method, error } => write!(
                f,
                "the server's answer to {} breaks strict reading: {error}",
                escape(method)
            ),
            Self::NoResult => f.write_str("a surface answer without result"),
            Self::InputRequiredWithMore { method } => write!(
                f,
                "the server's input_required answer to {} carries members other than {}",
                escape(method),
                crate::admission::INPUT_REQUIRED_MEMBERS.join(", ")
            ),
        }?;
        f.write_str("; nothing of it was forwarded")
    }
}

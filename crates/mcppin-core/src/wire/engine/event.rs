//! The admission-log events (docs/formats.md, "Admission log"): typed values the engine
//! produces, serialised with serde.
//!
//! An event holds the members of its log line that the engine knows, `event` (the tag of
//! [`Event`]) included: [`Event::to_object`] gives them, and [`crate::log::Chain::append`] adds
//! the members every line carries (`schema_version`, `run`, `seq`, `prev`, `server`,
//! `observed_at`); `session_id` is the writer's, who knows its sessions.

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use crate::value::{Object, Value};
use crate::{Strictness, parse_with};

/// One line of the admission log, without the members every line carries.
///
/// Later versions may add events and members: match with a wildcard arm, and read the members
/// by name.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// A tool admitted or refused: one per tool of a `tools/list` answer, one per `tools/call`.
    ToolAdmission(ToolAdmission),
    /// An allowed call ended.
    ToolCompletion(ToolCompletion),
    /// A session-pinned answer (`prompts/get` and the others the lock does not pin) judged.
    AnswerAdmission(AnswerAdmission),
    /// An approved tool was not served on the last page of a reading of the list.
    ToolRemoved(ToolRemoved),
    /// The server calls itself by another name than the approved one.
    ServerRenamed(ServerRenamed),
    /// The artifact the server runs, checked against the approved one.
    ArtifactAdmission(ArtifactAdmission),
}

impl Event {
    /// The event's members as the admission log writes them (`event`, its tag, and its own
    /// members; the same as its `Serialize`, except that a request id keeps the number literal
    /// the client wrote): what [`crate::log::Chain::append`] takes.
    #[must_use]
    pub fn to_object(&self) -> Object {
        let mut object = Object::new();
        let tag = match self {
            Self::ToolAdmission(e) => {
                object.insert("request_id", e.request_id.to_value());
                object.insert("request_method", e.request_method);
                object.insert("tool", e.tool.as_str());
                object.insert("catalog_generation", e.catalog_generation);
                object.insert("approved_digest", optional(e.approved_digest.as_deref()));
                object.insert("observed_digest", optional(e.observed_digest.as_deref()));
                object.insert("decision", e.decision.as_str());
                object.insert("reason", optional(e.reason));
                if let Some(shown) = e.shown {
                    object.insert("shown", shown);
                }
                if let Some(projection) = e.projection {
                    object.insert("projection", projection);
                }
                "tool_admission"
            }
            Self::ToolCompletion(e) => {
                object.insert("request_id", e.request_id.to_value());
                object.insert("tool", optional(e.tool.as_deref()));
                object.insert("outcome", e.outcome.as_str());
                object.insert("duration_ms", e.duration_ms);
                "tool_completion"
            }
            Self::AnswerAdmission(e) => {
                object.insert("request_id", e.request_id.to_value());
                object.insert("method", e.method.as_str());
                object.insert("name", optional(e.name.as_deref()));
                object.insert("decision", e.decision.as_str());
                object.insert("reason", optional(e.reason));
                if let Some(projection) = e.projection {
                    object.insert("projection", projection);
                }
                "answer_admission"
            }
            Self::ToolRemoved(e) => {
                object.insert("request_id", e.request_id.to_value());
                object.insert("tool", e.tool.as_str());
                object.insert("catalog_generation", e.catalog_generation);
                "tool_removed"
            }
            Self::ServerRenamed(e) => {
                object.insert("request_id", e.request_id.to_value());
                object.insert("approved_name", optional(e.approved_name.as_deref()));
                object.insert("observed_name", optional(e.observed_name.as_deref()));
                "server_renamed"
            }
            Self::ArtifactAdmission(e) => {
                let entries = |list: &[String]| {
                    Value::from(
                        list.iter()
                            .map(|s| Value::from(s.as_str()))
                            .collect::<Vec<_>>(),
                    )
                };
                object.insert("checked", e.checked.as_str());
                object.insert("approved", entries(&e.approved));
                object.insert("observed", entries(&e.observed));
                object.insert("decision", e.decision.as_str());
                object.insert("reason", optional(e.reason));
                "artifact_admission"
            }
        };
        object.insert("event", tag);
        object
    }
}

fn optional(text: Option<&str>) -> Value {
    text.map_or_else(Value::null, Value::from)
}

/// The members of a `tool_admission` line.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ToolAdmission {
    /// The id of the request, as the client wrote it.
    pub request_id: RequestId,
    /// `tools/list` or `tools/call`.
    pub request_method: &'static str,
    /// The tool's name, as served or called.
    pub tool: String,
    /// The reading of the list this decision belongs to, from 1.
    pub catalog_generation: u64,
    /// The approved digest (`sha256:...`), or `None` for a tool the lock does not know.
    pub approved_digest: Option<String>,
    /// The digest of the latest served form, or `None` when none was seen.
    pub observed_digest: Option<String>,
    /// Allowed or denied.
    pub decision: Verdict,
    /// The policy that denied it (`tool-changed`, ...); `None` when allowed.
    pub reason: Option<&'static str>,
    /// For listed tools: whether the client was shown the definition (false for every tool of
    /// an answer refused as a whole). Absent for calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shown: Option<bool>,
    /// The projection the digests are of (`rmcp-3.1`), when the session sees a gateway's
    /// re-serialisation ([`Config::projection`](super::Config::projection)): then
    /// `approved_digest` is the projected pin, not the lockfile's raw one. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projection: Option<&'static str>,
}

/// The members of a `tool_completion` line.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ToolCompletion {
    /// The id of the call, as the client wrote it.
    pub request_id: RequestId,
    /// The tool called.
    pub tool: Option<String>,
    /// How the call ended.
    pub outcome: Completion,
    /// From the request to its end, in milliseconds of the caller's clock.
    pub duration_ms: u64,
}

/// The members of an `answer_admission` line.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct AnswerAdmission {
    /// The id of the request, as the client wrote it.
    pub request_id: RequestId,
    /// The method answered.
    pub method: String,
    /// The prompt name (`params.name`), if any.
    pub name: Option<String>,
    /// Allowed or denied.
    pub decision: Verdict,
    /// The policy that denied it; `None` when allowed.
    pub reason: Option<&'static str>,
    /// The projection the answer was compared through, as for [`ToolAdmission::projection`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projection: Option<&'static str>,
}

/// The members of a `tool_removed` line.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ToolRemoved {
    /// The id of the `tools/list` request whose answer ended the reading.
    pub request_id: RequestId,
    /// The approved tool that was not served.
    pub tool: String,
    /// The reading of the list.
    pub catalog_generation: u64,
}

/// The members of a `server_renamed` line.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ServerRenamed {
    /// The id of the request answered (`initialize`, `server/discover`).
    pub request_id: RequestId,
    /// The approved name, if any.
    pub approved_name: Option<String>,
    /// The name the server gave itself, if any.
    pub observed_name: Option<String>,
}

/// An admission decision as the log names it.
#[derive(Clone, Copy, Debug, Eq, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// `allow`.
    Allow,
    /// `deny`.
    Deny,
}

impl Verdict {
    /// The name the log gives it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
        }
    }
}

/// How an allowed call ended.
#[derive(Clone, Copy, Debug, Eq, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Completion {
    /// `result`: an answer with a result.
    Result,
    /// `is_error`: a result with `isError: true`.
    IsError,
    /// `protocol_error`: a JSON-RPC error answer.
    ProtocolError,
    /// `no_answer`: the session ended first.
    NoAnswer,
}

impl Completion {
    /// The name the log gives it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Result => "result",
            Self::IsError => "is_error",
            Self::ProtocolError => "protocol_error",
            Self::NoAnswer => "no_answer",
        }
    }
}

/// A request id as the client wrote it (its bytes), logged as the JSON value it reads as, or as
/// a string of its bytes when it reads as none.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct RequestId(Box<[u8]>);

impl RequestId {
    /// The id of these bytes.
    #[must_use]
    pub fn new(raw: &[u8]) -> Self {
        Self(raw.into())
    }

    /// The bytes as the client wrote them.
    #[must_use]
    pub fn raw(&self) -> &[u8] {
        &self.0
    }

    /// The id as the JSON value it reads as, number literals as written; a string of its
    /// bytes when it reads as none.
    #[must_use]
    pub fn to_value(&self) -> Value {
        parse_with(&self.0, Strictness::Relaxed)
            .unwrap_or_else(|_| Value::from(String::from_utf8_lossy(&self.0).into_owned()))
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match parse_with(&self.0, Strictness::Relaxed) {
            Ok(value) => Json(&value).serialize(serializer),
            Err(_) => serializer.serialize_str(&String::from_utf8_lossy(&self.0)),
        }
    }
}

/// A value read from the wire, serialised as serde's data model has it: an integer literal
/// as an integer when it fits 64 bits, any other number as the nearest double.
struct Json<'a>(&'a Value);

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value = self.0;
        if let Some(b) = value.as_bool() {
            serializer.serialize_bool(b)
        } else if let Some(number) = value.as_number() {
            let literal = number.literal();
            if let Ok(n) = literal.parse::<u64>() {
                serializer.serialize_u64(n)
            } else if let Ok(n) = literal.parse::<i64>() {
                serializer.serialize_i64(n)
            } else {
                serializer.serialize_f64(number.as_f64())
            }
        } else if let Some(text) = value.as_str() {
            serializer.serialize_str(text)
        } else if let Some(items) = value.as_array() {
            let mut seq = serializer.serialize_seq(Some(items.len()))?;
            for item in items {
                seq.serialize_element(&Json(item))?;
            }
            seq.end()
        } else if let Some(object) = value.as_object() {
            let mut map = serializer.serialize_map(Some(object.len()))?;
            for (name, member) in object.iter() {
                map.serialize_entry(name, &Json(member))?;
            }
            map.end()
        } else {
            serializer.serialize_unit()
        }
    }
}

/// When the guard read the artifact.
#[derive(Clone, Copy, Debug, Eq, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Moment {
    /// Before it started the server (a local program, an image the engine holds).
    BeforeStart,
    /// Once the server was up, before anything it wrote was forwarded (what `npx` or `uvx`
    /// installed).
    OnceUp,
}

impl Moment {
    /// The name the log gives it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BeforeStart => "before_start",
            Self::OnceUp => "once_up",
        }
    }
}

/// The members of an `artifact_admission` line of the admission log.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ArtifactAdmission {
    /// When the artifact was read.
    pub checked: Moment,
    /// The approved artifact's entries ([`crate::artifact::Artifact::entries`]).
    pub approved: Vec<String>,
    /// The entries of the artifact read.
    pub observed: Vec<String>,
    /// Allowed or denied.
    pub decision: Verdict,
    /// The policy that denied it (`artifact-changed`, `artifact-unknown`); `None` when allowed.
    pub reason: Option<&'static str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event as its object and as its `Serialize` form: the same members and values.
    #[test]
    fn the_object_of_an_event_is_its_serialised_form() {
        let id = RequestId::new(b"\"a\"");
        let events = [
            Event::ToolAdmission(ToolAdmission {
                request_id: RequestId::new(b"7"),
                request_method: "tools/list",
                tool: "search".into(),
                catalog_generation: 2,
                approved_digest: Some("sha256:ab".into()),
                observed_digest: None,
                decision: Verdict::Deny,
                reason: Some("tool-changed"),
                shown: Some(false),
                projection: Some("rmcp-3.1"),
            }),
            Event::ToolAdmission(ToolAdmission {
                request_id: RequestId::new(b"-3"),
                request_method: "tools/call",
                tool: "search".into(),
                catalog_generation: 1,
                approved_digest: None,
                observed_digest: Some("sha256:cd".into()),
                decision: Verdict::Allow,
                reason: None,
                shown: None,
                projection: None,
            }),
            Event::ToolCompletion(ToolCompletion {
                request_id: id.clone(),
                tool: None,
                outcome: Completion::IsError,
                duration_ms: 12,
            }),
            Event::AnswerAdmission(AnswerAdmission {
                request_id: id.clone(),
                method: "prompts/get".into(),
                name: Some("p".into()),
                decision: Verdict::Allow,
                reason: None,
                projection: Some("rmcp-3.1"),
            }),
            Event::ToolRemoved(ToolRemoved {
                request_id: id.clone(),
                tool: "gone".into(),
                catalog_generation: 3,
            }),
            Event::ServerRenamed(ServerRenamed {
                request_id: id,
                approved_name: Some("a".into()),
                observed_name: None,
            }),
            Event::ArtifactAdmission(ArtifactAdmission {
                checked: Moment::OnceUp,
                approved: vec!["npm a@1.0.0 sha512-x".into()],
                observed: vec![],
                decision: Verdict::Deny,
                reason: Some("artifact-changed"),
            }),
        ];
        for event in events {
            let serialised = serde_json::to_value(&event).unwrap();
            let object: serde_json::Value =
                serde_json::from_str(&Value::from(event.to_object()).to_string()).unwrap();
            assert_eq!(object, serialised);
        }
    }

    #[test]
    fn a_request_id_keeps_its_literal_in_the_object() {
        let event = Event::ToolRemoved(ToolRemoved {
            request_id: RequestId::new(b"9007199254740993"),
            tool: "t".into(),
            catalog_generation: 1,
        });
        let text = Value::from(event.to_object()).to_string();
        assert!(text.contains("\"request_id\":9007199254740993"), "{text}");
    }
}

//! The admission-log events (docs/formats.md, "Admission log"): typed values the engine
//! produces, serialised with serde.
//!
//! An event holds the members of its log line that the engine knows. The members every line
//! carries (`schema_version`, `event`, `session_id`, `server`, `observed_at`) are the writer's:
//! `event` is the tag of [`Event`] (serialise the event flattened into the writer's line), the
//! others belong to the process and its clock.

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use crate::value::Value;
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

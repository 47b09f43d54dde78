//! The messages of agentgateway's `ExtMcp` guardrail protocol (package
//! `agentgateway.dev.ext_mcp`), as a processor reads and answers them, and the gRPC framing of
//! one unary message.
//!
//! The gateway calls two unary methods of service `ExtMcp` on each processor it is configured
//! with (`mcpGuardrails.processors[]`): [`CHECK_REQUEST`] with an [`McpRequest`] before a
//! request goes upstream, answered by an [`McpRequestResult`], and [`CHECK_RESPONSE`] with an
//! [`McpResponse`] before an answer reaches the client, answered by an [`McpResponseResult`].
//! Each answer passes, replaces (`mutated`) or refuses ([`AuthorizationError`]; the client
//! gets a JSON-RPC error whose code follows [`Code`], `-32001` for
//! [`Code::PermissionDenied`]).
//!
//! The structs are written by hand from the protocol's field numbers and derive
//! [`prost::Message`]; they hold only what a processor uses. Fields they leave out are
//! skipped when read: the request's incoming HTTP headers (field 5 of `McpRequest`, which can
//! carry the client's session id: never kept) and the header mutation of a request's answer
//! (field 4 of `McpRequestResult`). Reading never panics: a malformed message, a string that
//! is not UTF-8, or nesting deeper than prost's recursion limit is a
//! [`prost::DecodeError`].
//!
//! ```
//! use mcppin_extmcp::{McpRequestResult, McpResponse, Verdict, unframe, frame};
//! use prost::Message;
//!
//! let response = McpResponse {
//!     service_names: vec!["everything".into()],
//!     method: "tools/list".into(),
//!     metadata_context: None,
//!     mcp_response: br#"{"tools":[]}"#.to_vec(),
//! };
//! let body = frame(&response.encode_to_vec())?;
//! let read = McpResponse::decode(unframe(&body, 1 << 20)?)?;
//! assert_eq!(read, response);
//!
//! let refusal = McpRequestResult::deny("mcppin-guard refused tools/call: tool-unknown");
//! assert!(matches!(refusal.result, Some(Verdict::Error(_))));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

pub use prost_types::{Struct, Value, value::Kind};

/// The service's full name.
pub const SERVICE: &str = "agentgateway.dev.ext_mcp.ExtMcp";

/// The HTTP/2 path of the request phase: `/agentgateway.dev.ext_mcp.ExtMcp/CheckRequest`.
pub const CHECK_REQUEST: &str = "/agentgateway.dev.ext_mcp.ExtMcp/CheckRequest";

/// The HTTP/2 path of the response phase: `/agentgateway.dev.ext_mcp.ExtMcp/CheckResponse`.
pub const CHECK_RESPONSE: &str = "/agentgateway.dev.ext_mcp.ExtMcp/CheckResponse";

/// What the request phase is given: a request about to go upstream.
#[derive(Clone, PartialEq, prost::Message)]
pub struct McpRequest {
    /// The gateway's target names the request goes to, unprefixed: one for a single-target
    /// method (`tools/call`), every target for a fan-out (`tools/list`).
    #[prost(string, repeated, tag = "1")]
    pub service_names: Vec<String>,
    /// The JSON-RPC method.
    #[prost(string, tag = "2")]
    pub method: String,
    /// The values of the processor's `metadata` expressions, one field per key; a key whose
    /// expression could not be evaluated is absent.
    #[prost(message, optional, tag = "3")]
    pub metadata_context: Option<Struct>,
    /// The JSON-RPC `params` as JSON bytes (the gateway's re-serialisation); absent when the
    /// method has none, and for every fan-out method.
    #[prost(bytes = "vec", optional, tag = "4")]
    pub mcp_request: Option<Vec<u8>>,
}

/// What the response phase is given: an upstream answer about to reach the client.
#[derive(Clone, PartialEq, prost::Message)]
pub struct McpResponse {
    /// As in [`McpRequest::service_names`].
    #[prost(string, repeated, tag = "1")]
    pub service_names: Vec<String>,
    /// The JSON-RPC method of the request answered.
    #[prost(string, tag = "2")]
    pub method: String,
    /// As in [`McpRequest::metadata_context`], with what the request phase returned readable
    /// through the gateway's `mcpGuardrails.<key>`.
    #[prost(message, optional, tag = "3")]
    pub metadata_context: Option<Struct>,
    /// The JSON-RPC `result` as JSON bytes (for a fan-out, the gateway's merged result).
    #[prost(bytes = "vec", tag = "4")]
    pub mcp_response: Vec<u8>,
}

/// The processor's verdict, in either phase.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Verdict {
    /// Let it go as it is.
    #[prost(message, tag = "1")]
    Pass(Pass),
    /// Replace the JSON-RPC `params` (request phase) or `result` (response phase) with these
    /// JSON bytes.
    #[prost(bytes = "vec", tag = "2")]
    Mutated(Vec<u8>),
    /// Refuse: the client gets a JSON-RPC error.
    #[prost(message, tag = "3")]
    Error(AuthorizationError),
}

/// The answer to [`McpRequest`].
#[derive(Clone, PartialEq, prost::Message)]
pub struct McpRequestResult {
    /// The verdict; a missing one is a protocol violation to the gateway.
    #[prost(oneof = "Verdict", tags = "1, 2, 3")]
    pub result: Option<Verdict>,
    /// Values the gateway keeps with the request and shows the later phases (the response
    /// phase's `metadata_context`, through the processor's metadata expressions).
    #[prost(message, optional, tag = "5")]
    pub metadata: Option<Struct>,
}

/// The answer to [`McpResponse`].
#[derive(Clone, PartialEq, prost::Message)]
pub struct McpResponseResult {
    /// The verdict; a missing one is a protocol violation to the gateway.
    #[prost(oneof = "Verdict", tags = "1, 2, 3")]
    pub result: Option<Verdict>,
}

/// The empty verdict that lets a message go.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct Pass {}

/// A refusal.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AuthorizationError {
    /// The [`Code`], as its number (an unknown number reads as [`Code::Unknown`]).
    #[prost(enumeration = "Code", tag = "1")]
    pub code: i32,
    /// The JSON-RPC error's `message`.
    #[prost(string, tag = "2")]
    pub reason: String,
    /// JSON the gateway puts in the error's `data`. The model reads it: a processor that
    /// quotes no server text leaves it out.
    #[prost(bytes = "vec", optional, tag = "3")]
    pub mcp_error: Option<Vec<u8>>,
}

/// The kind of a refusal, and the JSON-RPC error code the client gets for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum Code {
    /// `-32603`.
    Unknown = 0,
    /// `-32001`, mcppin's refusal code.
    PermissionDenied = 1,
    /// `-32003`.
    ResourceExhausted = 2,
    /// `-32600`.
    Invalid = 3,
}

impl McpRequestResult {
    /// Lets the request go, keeping `metadata` with it for the response phase.
    #[must_use]
    pub fn pass(metadata: Option<Struct>) -> Self {
        Self {
            result: Some(Verdict::Pass(Pass {})),
            metadata,
        }
    }

    /// Refuses the request with `reason` (`-32001`), with no `data`.
    #[must_use]
    pub fn deny(reason: impl Into<String>) -> Self {
        Self {
            result: Some(Verdict::Error(AuthorizationError::denied(reason))),
            metadata: None,
        }
    }
}

impl McpResponseResult {
    /// Lets the answer go.
    #[must_use]
    pub fn pass() -> Self {
        Self {
            result: Some(Verdict::Pass(Pass {})),
        }
    }

    /// Replaces the answer's `result` with `json`.
    #[must_use]
    pub fn mutated(json: Vec<u8>) -> Self {
        Self {
            result: Some(Verdict::Mutated(json)),
        }
    }

    /// Refuses the answer with `reason` (`-32001`), with no `data`.
    #[must_use]
    pub fn deny(reason: impl Into<String>) -> Self {
        Self {
            result: Some(Verdict::Error(AuthorizationError::denied(reason))),
        }
    }
}

impl AuthorizationError {
    /// A [`Code::PermissionDenied`] refusal with `reason` and no `data`.
    #[must_use]
    pub fn denied(reason: impl Into<String>) -> Self {
        Self {
            code: Code::PermissionDenied as i32,
            reason: reason.into(),
            mcp_error: None,
        }
    }
}

/// The string value of `key` in a metadata struct; `None` when the struct or the key is
/// absent, or the value is no string.
#[must_use]
pub fn metadata_str<'s>(metadata: Option<&'s Struct>, key: &str) -> Option<&'s str> {
    match metadata?.fields.get(key)?.kind.as_ref()? {
        Kind::StringValue(s) => Some(s),
        _ => None,
    }
}

/// A struct of string values, for [`McpRequestResult::metadata`].
#[must_use]
pub fn string_struct<'a>(fields: impl IntoIterator<Item = (&'a str, String)>) -> Struct {
    Struct {
        fields: fields
            .into_iter()
            .map(|(k, v)| {
                (
                    k.to_owned(),
                    Value {
                        kind: Some(Kind::StringValue(v)),
                    },
                )
            })
            .collect(),
    }
}

/// The bytes before a gRPC message: a compression flag and the message's length, big-endian.
pub const FRAME_HEADER: usize = 5;

/// One message as the body of a unary gRPC call: uncompressed, its length before it.
///
/// # Errors
///
/// [`FrameError::TooLarge`] for a message of 4 GiB or more, whose length the header cannot
/// hold.
pub fn frame(message: &[u8]) -> Result<Vec<u8>, FrameError> {
    let length = u32::try_from(message.len()).map_err(|_| FrameError::TooLarge {
        length: message.len(),
        limit: u32::MAX as usize,
    })?;
    let mut out = Vec::with_capacity(FRAME_HEADER + message.len());
    out.push(0);
    out.extend_from_slice(&length.to_be_bytes());
    out.extend_from_slice(message);
    Ok(out)
}

/// Why a body is not one framed message.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameError {
    /// The body ends before the header or before the length the header gives.
    Short {
        /// The body's length.
        got: usize,
        /// The length it needed.
        needed: usize,
    },
    /// The message is compressed (no compression is negotiated: the processor announces
    /// none).
    Compressed,
    /// The message is longer than the bound.
    TooLarge {
        /// The length the header gives.
        length: usize,
        /// The bound.
        limit: usize,
    },
    /// Bytes follow the message: a unary call carries one.
    Trailing {
        /// How many.
        extra: usize,
    },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Short { got, needed } => {
                write!(f, "gRPC body of {got} bytes, {needed} needed")
            }
            Self::Compressed => f.write_str("gRPC message compressed, none negotiated"),
            Self::TooLarge { length, limit } => {
                write!(
                    f,
                    "gRPC message of {length} bytes, above the {limit}-byte bound"
                )
            }
            Self::Trailing { extra } => {
                write!(
                    f,
                    "{extra} bytes after the one message of a unary gRPC call"
                )
            }
        }
    }
}

impl std::error::Error for FrameError {}

/// The one message of a unary call's body, at most `limit` bytes long.
///
/// # Errors
///
/// A [`FrameError`] when the body is not exactly one uncompressed message within `limit`.
pub fn unframe(body: &[u8], limit: usize) -> Result<&[u8], FrameError> {
    let Some((header, rest)) = body.split_first_chunk::<FRAME_HEADER>() else {
        return Err(FrameError::Short {
            got: body.len(),
            needed: FRAME_HEADER,
        });
    };
    let [flag, length @ ..] = *header;
    if flag != 0 {
        return Err(FrameError::Compressed);
    }
    let length = usize::try_from(u32::from_be_bytes(length)).unwrap_or(usize::MAX);
    if length > limit {
        return Err(FrameError::TooLarge { length, limit });
    }
    match rest.len().cmp(&length) {
        std::cmp::Ordering::Less => Err(FrameError::Short {
            got: body.len(),
            needed: FRAME_HEADER + length,
        }),
        std::cmp::Ordering::Greater => Err(FrameError::Trailing {
            extra: rest.len() - length,
        }),
        std::cmp::Ordering::Equal => Ok(rest),
    }
}

//! The JSON-RPC error codes this project reads and writes, each named once: those of
//! JSON-RPC 2.0 (section 5.1), those MCP adds (2026-07-28, "Error Codes"), and the code of a
//! refusal the engine answers in a server's place.

/// JSON-RPC 2.0 section 5.1: invalid JSON.
pub const PARSE_ERROR: i64 = -32700;

/// JSON-RPC 2.0 section 5.1: not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;

/// JSON-RPC 2.0 section 5.1: the method does not exist or is not available (a server that
/// does not implement a list).
pub const METHOD_NOT_FOUND: i64 = -32601;

/// The code of a refusal the engine answers in the server's place (docs/guard.md, "What the
/// client sees").
pub const REFUSED: i64 = -32001;

/// 2026-07-28 `HeaderMismatchError`: the headers of a Streamable HTTP request do not match
/// its body.
pub const HEADER_MISMATCH: i64 = -32020;

/// 2026-07-28 `MissingRequiredClientCapabilityError`: the request needs a capability the
/// client did not declare.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;

/// 2026-07-28 `UnsupportedProtocolVersionError`: the server does not speak the revision asked
/// for.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

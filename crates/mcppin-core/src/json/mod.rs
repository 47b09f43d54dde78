//! The JSON layer (docs/design.md, "Layers inside `mcppin-core`"): the strict reader and its
//! relaxed mode, values that keep every number's literal and every value's byte span, the
//! RFC 8785 canonical form, digests, the outline of a protocol message, member names a
//! case-insensitive reader reads differently, escaping for a terminal, server-sent event
//! streams, and the layer's errors. Nothing here knows MCP or this project's files.
//!
//! Each module is also named from the crate root, as its users name it
//! (`mcppin_core::value::Value`, `mcppin_core::parse`).

pub(crate) mod canon;
pub(crate) mod digest;
pub(crate) mod error;
pub(crate) mod escape;
pub mod fold;
pub mod number;
pub mod outline;
pub(crate) mod parse;
pub mod sse;
pub(crate) mod text;
pub mod value;

//! The wire layer (docs/design.md, "The wire engine"): every decision a guard makes about the
//! bytes of a session, without I/O. [`engine::Session`] is fed the messages of a session in
//! both directions and says what to forward, what to answer in the server's place and when
//! to stop; `admission` (private to the crate) holds the gate it consults; [`http`] reads the heads of Streamable
//! HTTP as a proxy that judges bodies must; [`jsonrpc`] names the error codes; [`log`] chains
//! the admission log's lines and verifies a log; [`hook`] decides a client's pre-call hook
//! from the lock and the guard's state file; [`projection`] derives, from the lock, the pins
//! of what a gateway that re-serialises answers through its own typed model shows.
//!
//! Each module is also named from the crate root (`mcppin_core::engine::Session`).

pub(crate) mod admission;
pub mod engine;
pub mod hook;
pub mod http;
pub mod jsonrpc;
pub mod log;
pub mod projection;

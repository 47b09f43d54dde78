//! Ed25519 keys and the detached signature envelope of mcppin lockfiles.
#![warn(missing_docs, unreachable_pub)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

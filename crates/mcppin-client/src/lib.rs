//! The only crate of mcppin that starts, speaks to or proxies MCP servers.
#![warn(missing_docs, unreachable_pub)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

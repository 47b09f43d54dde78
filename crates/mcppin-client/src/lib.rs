//! The only crate of mcppin that starts, speaks to or proxies MCP servers.
//!
//! - [`discover`]: where MCP clients keep their configurations (home and project directories
//!   passed in), and the server ids a configuration names.
//! - [`frame`]: newline-delimited JSON-RPC over a byte stream, with a bound on every line that
//!   is enforced while reading (nothing beyond the bound is ever buffered).
//! - [`process`]: a server as a child process in its own process group, with the minimal
//!   inherited environment and the shutdown order of docs/export.md (close stdin, wait,
//!   SIGTERM, wait, SIGKILL, to the whole group), also run on `Drop`, so nothing is left running
//!   after success, failure, timeout or panic.
//! - [`log`]: a server's stderr as bounded log lines, for a caller that passes them on live.
//! - [`transport`]: a reader thread and per-read timeouts over a process or any byte streams.
//! - [`http`]: remote servers over Streamable HTTP and the HTTP+SSE transport of 2024-11-05,
//!   as a second [`Transport`] under the same sessions, reading event streams with
//!   [`mcppin_core::sse`].
//!
//! What this crate deliberately does not do: read the environment, print, or exit. The caller
//! passes the environment it wants the server to inherit and renders errors itself.
//!
//! ```
//! use std::time::Duration;
//! use mcppin_client::{Connection, Inherit, Received, ServerCommand, Transport,
//!                     inherited_environment};
//!
//! // The binary passes `std::env::vars_os()`; only the minimal set reaches the server.
//! let env = inherited_environment([("PATH", "/usr/bin:/bin"), ("API_TOKEN", "t")],
//!                                 Inherit::Minimal);
//! let command = ServerCommand::new("cat").envs(env);
//! let mut server = Connection::open(&command, mcppin_client::DEFAULT_MAX_LINE)?;
//! server.send(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)?;
//! let echoed = server.receive(Duration::from_secs(10))?;
//! assert_eq!(echoed, Received::Line(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec()));
//! server.shutdown()?; // `cat` exits once its stdin is closed
//! # Ok::<(), mcppin_client::Error>(())
//! ```
#![warn(missing_docs, unreachable_pub)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod artifact;
pub mod audit;
pub mod capture;
pub mod config;
pub mod discover;
mod error;
pub mod frame;
pub mod http;
pub mod log;
pub mod process;
pub mod profile;
mod redact;
mod revision;
pub mod session;
pub mod transport;

pub use capture::{ServerCapture, capture};
pub use config::{
    ClientConfig, HttpKind, HttpServer, ServerEntry, StdioServer, Variables, parse_env_file,
};

pub use error::Error;
pub use frame::{DEFAULT_MAX_LINE, LineReader, write_line};
pub use http::{HttpOptions, HttpTransport, Secrets, origin, redact_url, tls_config};
pub use log::{DEFAULT_MAX_LOG_LINE, LogLine, LogLines};
pub use process::{
    CapturedStderr, DEFAULT_GRACE, DEFAULT_KILL_AFTER, INHERITED_VARIABLES, Inherit,
    NETWORK_VARIABLES, ServerCommand, ServerProcess, Shutdown, Stage, StderrMode, TRAMPOLINE_ARG,
    exec_server, inherited_environment, stop_group, trampoline, withheld_variables,
};
pub use profile::ClientProfile;
pub use session::{ClientInfo, MAX_PAGES, Protocol, Revision, Session, SessionOptions};
pub use transport::{Channel, Connection, Received, Transport};

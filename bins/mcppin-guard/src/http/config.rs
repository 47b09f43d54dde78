//! What the HTTP guard serves and how, as the command line gave it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use mcppin_core::engine;

use super::replica::Replica;

/// What the HTTP guard serves and how.
#[derive(Debug)]
pub(crate) struct Config {
    pub(crate) listen: SocketAddr,
    pub(crate) upstream: String,
    pub(crate) upstream_ca: Vec<PathBuf>,
    pub(crate) timeout: Duration,
    /// The engine's configuration (mode, events, the name refusals give).
    pub(crate) engine: engine::Config,
    pub(crate) max_message: usize,
    pub(crate) max_sessions: usize,
    pub(crate) max_connections: usize,
    /// How long a session may stay without a request or an open stream before it is ended.
    pub(crate) session_idle: Duration,
    /// The guard run's id: each session's log lines carry it with the session's number.
    pub(crate) run_id: String,
    /// `--replica`: the tag put on the session ids handed to clients.
    pub(crate) replica: Option<Replica>,
}

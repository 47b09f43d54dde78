//! Reading a server's surface completely, and more than once (docs/formats.md).
//!
//! MCP promises no snapshot across pages: a tool can move across a page boundary while a list is
//! read. The surface is therefore read `passes` times and called complete only when every
//! reading agrees.

use std::num::NonZeroU32;

use mcppin_core::Value;

use crate::Error;
use crate::session::{Revision, Session};
use crate::transport::Transport;

/// One server's surface as captured.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerCapture {
    /// What the server calls itself, when it says.
    pub reported_name: Option<String>,
    /// The revision the session spoke.
    pub protocol_version: Revision,
    /// How many times the surface was read.
    pub passes: u32,
    /// Whether every reading agreed.
    pub agreed: bool,
    /// The tools of the last reading, exactly as served, in the order served.
    pub tools: Vec<Value>,
}

/// Reads the tools of an open session `passes` times.
///
/// Readings agree when they hold the same tools by name with equal content; the order in which
/// a server lists them is not part of the surface. A server that did not declare the `tools`
/// capability has no tools and is not asked.
///
/// # Errors
///
/// The first error of any reading (see [`Session::list_tools`]).
pub fn capture<T: Transport>(
    session: &mut Session<T>,
    passes: NonZeroU32,
) -> Result<ServerCapture, Error> {
    let mut first: Option<Vec<Value>> = None;
    let mut last = Vec::new();
    let mut agreed = true;
    for _ in 0..passes.get() {
        let tools = if session.offers_tools() {
            session.list_tools()?
        } else {
            Vec::new()
        };
        let sorted = sorted_by_name(&tools);
        match &first {
            None => first = Some(sorted),
            Some(reference) => agreed &= *reference == sorted,
        }
        last = tools;
    }
    Ok(ServerCapture {
        reported_name: session.reported_name().map(str::to_owned),
        protocol_version: session.revision(),
        passes: passes.get(),
        agreed,
        tools: last,
    })
}

fn sorted_by_name(tools: &[Value]) -> Vec<Value> {
    let mut sorted = tools.to_vec();
    sorted.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    sorted
}

fn name_of(tool: &Value) -> &str {
    tool.get("name").and_then(Value::as_str).unwrap_or_default()
}

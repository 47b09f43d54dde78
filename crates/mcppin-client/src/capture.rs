//! Reading a server's surface completely, and more than once (docs/formats.md).
//!
//! MCP promises no snapshot across pages: a tool can move across a page boundary while a list is
//! read. The surface is therefore read `passes` times and called complete only when every
//! reading agrees.

use std::collections::BTreeSet;
use std::num::NonZeroU32;

use mcppin_core::Value;
use mcppin_core::surface::ItemKind;

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
    /// The prompts of the last reading (none when the server did not declare `prompts`).
    pub prompts: Vec<Value>,
    /// The resource templates of the last reading (none when the server did not declare
    /// `resources`).
    pub resource_templates: Vec<Value>,
    /// The server's `instructions`, when it gave any.
    pub instructions: Option<String>,
    /// The optional lists (prompts, resource templates) the server declared the capability
    /// of but answered with `-32601 Method not found` in the last reading: it serves no items
    /// there (docs/formats.md, `not_served`).
    pub not_served: BTreeSet<ItemKind>,
}

/// Reads the surface of an open session `passes` times: tools, prompts and resource templates
/// (docs/formats.md), with the `instructions` of the session.
///
/// Readings agree when they hold the same items by key with equal content and leave the same
/// lists unserved; the order in which a server lists them is not part of the surface. A
/// server that did not declare the `tools`, `prompts` or `resources` capability has none of
/// those items and is not asked. A server that declared `prompts` or `resources` but answers
/// `prompts/list` or `resources/templates/list` with `-32601 Method not found` does not
/// implement that optional list: it is recorded as not served, and the capture goes on.
///
/// # Errors
///
/// The first error of any reading (see [`Session::list_tools`]): any failure of
/// `tools/list` when the server declared `tools`, and any other failure of an optional list.
pub fn capture<T: Transport>(
    session: &mut Session<T>,
    passes: NonZeroU32,
) -> Result<ServerCapture, Error> {
    let mut first: Option<([Vec<Value>; 3], BTreeSet<ItemKind>)> = None;
    let mut last = [Vec::new(), Vec::new(), Vec::new()];
    let mut not_served = BTreeSet::new();
    let mut agreed = true;
    let offers =
        |session: &Session<T>, capability: &str| session.capabilities().get(capability).is_some();
    for _ in 0..passes.get() {
        let tools = if session.offers_tools() {
            session.list_tools()?
        } else {
            Vec::new()
        };
        let mut unserved = BTreeSet::new();
        let mut optional = |session: &mut Session<T>, kind: ItemKind, capability, key| {
            if !offers(session, capability) {
                return Ok(Vec::new());
            }
            let items = session.list_optional(kind.list_method(), key)?;
            if items.is_none() {
                unserved.insert(kind);
            }
            Ok::<_, Error>(items.unwrap_or_default())
        };
        let prompts = optional(session, ItemKind::Prompt, "prompts", "prompts")?;
        let templates = optional(
            session,
            ItemKind::ResourceTemplate,
            "resources",
            "resourceTemplates",
        )?;
        let sorted = [
            sorted_by(&tools, "name"),
            sorted_by(&prompts, "name"),
            sorted_by(&templates, "uriTemplate"),
        ];
        match &first {
            None => first = Some((sorted, unserved.clone())),
            Some(reference) => agreed &= *reference == (sorted, unserved.clone()),
        }
        last = [tools, prompts, templates];
        not_served = unserved;
    }
    let [tools, prompts, resource_templates] = last;
    Ok(ServerCapture {
        reported_name: session.reported_name().map(str::to_owned),
        protocol_version: session.revision(),
        passes: passes.get(),
        agreed,
        tools,
        prompts,
        resource_templates,
        instructions: session.instructions().map(str::to_owned),
        not_served,
    })
}

fn sorted_by(items: &[Value], key: &str) -> Vec<Value> {
    let key_of = |item: &Value| -> String {
        item.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let mut sorted = items.to_vec();
    sorted.sort_by_key(key_of);
    sorted
}

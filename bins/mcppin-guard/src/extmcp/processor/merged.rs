//! An answer the gateway merged from several targets, told apart per target and put back
//! together.
//!
//! - A `tools/list`, `prompts/list` or `resources/templates/list` answer holds the items of
//!   every target, each renamed with its target's prefix (`<target>_name`, `<target>+uri`,
//!   `ui://<target>+rest`): each item belongs to the target whose prefix is the longest one
//!   it carries. Each target is judged on the answer with its own items only, cut from the
//!   gateway's bytes; what quarantine keeps is put back together from the kept items' bytes.
//! - An `initialize` (or `server/discover`) answer is the gateway's own: its `serverInfo`, its
//!   capabilities, and instructions made of its preamble and, for each target that has some,
//!   `\n\n[<target>]\n` and that target's instructions. Each target is judged on the
//!   protocol version and its own instructions; its name is the approved one, since the
//!   gateway shows the client none of the targets' names.
//! - Any other answer is judged whole by each target.

use std::ops::Range;

use mcppin_core::surface::ItemKind;
use mcppin_core::{Value, parse};

use super::Target;

/// What each target is judged on, in the order of the targets given.
#[derive(Debug)]
pub(super) struct Split {
    /// The answer each target is judged on.
    pub(super) parts: Vec<Vec<u8>>,
    /// For a list: where its array is in the merged answer, and each target's items there.
    list: Option<Listed>,
}

#[derive(Debug)]
struct Listed {
    member: &'static str,
    array: Range<usize>,
    items: Vec<Vec<Range<usize>>>,
}

/// Why a merged answer cannot be told apart: the reason's words, for the processor's refusal.
#[derive(Debug, Eq, PartialEq)]
pub(super) enum Unsplit {
    /// Not an object of the method's shape, as the engine would refuse it.
    Malformed,
    /// An item carries no prefix of any target.
    Unattributed,
    /// The instructions name a target twice: they cannot be cut per target.
    Instructions,
}

/// The list member and item kind of a list method.
fn listed(method: &str) -> Option<(ItemKind, &'static str)> {
    match method {
        "tools/list" => Some((ItemKind::Tool, "tools")),
        "prompts/list" => Some((ItemKind::Prompt, "prompts")),
        "resources/templates/list" => Some((ItemKind::ResourceTemplate, "resourceTemplates")),
        _ => None,
    }
}

/// The member of an item of `kind` that its target's prefix is on.
fn key_member(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::ResourceTemplate => "uriTemplate",
        _ => "name",
    }
}

/// Tells `result` (the answer to `method`, merged from `targets`) apart per target.
pub(super) fn split(
    method: &str,
    result: &[u8],
    targets: &[usize],
    all: &[Target],
) -> Result<Split, Unsplit> {
    if let Some((kind, member)) = listed(method) {
        return split_list(kind, member, result, targets, all);
    }
    if matches!(method, "initialize" | "server/discover") {
        return split_initialize(result, targets, all);
    }
    Ok(Split {
        parts: targets.iter().map(|_| result.to_vec()).collect(),
        list: None,
    })
}

fn split_list(
    kind: ItemKind,
    member: &'static str,
    result: &[u8],
    targets: &[usize],
    all: &[Target],
) -> Result<Split, Unsplit> {
    let value = parse(result).map_err(|_| Unsplit::Malformed)?;
    let list = value.get(member).ok_or(Unsplit::Malformed)?;
    let array = list.span().range();
    let mut items = vec![Vec::new(); targets.len()];
    for item in list.as_array().ok_or(Unsplit::Malformed)? {
        let key = item
            .get(key_member(kind))
            .and_then(Value::as_str)
            .ok_or(Unsplit::Malformed)?;
        let owner = targets
            .iter()
            .enumerate()
            .filter_map(|(i, t)| Some((all[*t].renaming.prefix_len(kind, key)?, i)))
            .max_by_key(|(len, _)| *len)
            .ok_or(Unsplit::Unattributed)?
            .1;
        items[owner].push(item.span().range());
    }
    let parts = items
        .iter()
        .map(|spans| spliced(result, &array, spans))
        .collect();
    Ok(Split {
        parts,
        list: Some(Listed {
            member,
            array,
            items,
        }),
    })
}

/// `bytes` with the array at `array` holding the items at `spans` only.
fn spliced(bytes: &[u8], array: &Range<usize>, spans: &[Range<usize>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(&bytes[..array.start]);
    out.push(b'[');
    for (i, span) in spans.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&bytes[span.clone()]);
    }
    out.push(b']');
    out.extend_from_slice(&bytes[array.end..]);
    out
}

fn split_initialize(result: &[u8], targets: &[usize], all: &[Target]) -> Result<Split, Unsplit> {
    let value = parse(result).map_err(|_| Unsplit::Malformed)?;
    value.as_object().ok_or(Unsplit::Malformed)?;
    let version = value
        .get("protocolVersion")
        .map(|v| &result[v.span().range()]);
    let instructions = match value.get("instructions") {
        None => None,
        Some(text) => Some(text.as_str().ok_or(Unsplit::Malformed)?),
    };
    let names: Vec<&str> = targets.iter().map(|t| all[*t].name.as_str()).collect();
    let cut = match instructions {
        Some(text) => cut_instructions(text, &names)?,
        None => vec![None; names.len()],
    };
    let parts = targets
        .iter()
        .zip(cut)
        .map(|(t, own)| {
            let mut out = b"{".to_vec();
            if let Some(version) = version {
                out.extend_from_slice(br#""protocolVersion":"#);
                out.extend_from_slice(version);
                out.push(b',');
            }
            out.extend_from_slice(br#""capabilities":{}"#);
            if let Some(name) = &all[*t].approved.surface().reported_name {
                out.extend_from_slice(br#","serverInfo":{"name":"#);
                out.extend_from_slice(&serde_json::to_vec(name).unwrap_or_default());
                out.extend_from_slice(br#","version":""}"#);
            }
            if let Some(own) = own {
                out.extend_from_slice(br#","instructions":"#);
                out.extend_from_slice(&serde_json::to_vec(own).unwrap_or_default());
            }
            out.push(b'}');
            out
        })
        .collect();
    Ok(Split { parts, list: None })
}

/// Each target's own instructions in the gateway's merged ones: the text after its
/// `\n\n[<target>]\n` up to the next target's (the gateway's preamble comes before the
/// first). A target named twice leaves it unclear where one target's text ends.
fn cut_instructions<'t>(text: &'t str, names: &[&str]) -> Result<Vec<Option<&'t str>>, Unsplit> {
    let mut marks: Vec<(usize, usize, usize)> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let mark = format!("\n\n[{name}]\n");
        let found: Vec<usize> = text.match_indices(&mark).map(|(at, _)| at).collect();
        match found.as_slice() {
            [] => {}
            [at] => marks.push((*at, at + mark.len(), i)),
            _ => return Err(Unsplit::Instructions),
        }
    }
    marks.sort_unstable();
    if marks.windows(2).any(|w| w[1].0 < w[0].1) {
        return Err(Unsplit::Instructions);
    }
    let mut own = vec![None; names.len()];
    for (k, (_, start, i)) in marks.iter().enumerate() {
        let end = marks.get(k + 1).map_or(text.len(), |next| next.0);
        own[*i] = text.get(*start..end);
    }
    Ok(own)
}

impl Split {
    /// The merged answer as the client is shown it once the targets whose index is in
    /// `replaced` were answered with those results (quarantine): each target's kept items
    /// cut from the gateway's bytes, in the gateway's order. `None` when a replaced result
    /// is not a list of the target's own items (it is then refused whole).
    pub(super) fn rebuilt(&self, merged: &[u8], replaced: &[(usize, Vec<u8>)]) -> Option<Vec<u8>> {
        let list = self.list.as_ref()?;
        let mut kept: Vec<Range<usize>> = Vec::new();
        for (i, spans) in list.items.iter().enumerate() {
            let Some((_, result)) = replaced.iter().find(|(r, _)| *r == i) else {
                kept.extend(spans.iter().cloned());
                continue;
            };
            let value = parse(result).ok()?;
            let shown = value.get(list.member)?.as_array()?;
            let mut from = spans.iter();
            for item in shown {
                // The engine keeps the items it shows as they came, in their order.
                let bytes = result.get(item.span().range())?;
                let span = from.find(|span| merged.get((*span).clone()) == Some(bytes))?;
                kept.push(span.clone());
            }
        }
        kept.sort_unstable_by_key(|span| span.start);
        Some(spliced(merged, &list.array, &kept))
    }
}

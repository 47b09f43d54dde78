//! The human report: escaped, pure-ASCII text (see [`to_text`]).

use std::fmt::Write as _;

use super::{Evidence, Finding, NOT_COMPARED, Note, Policy, Reason, Report, ServerChanges, Status};
use crate::artifact::Artifact;
use crate::diff::Change;
use crate::escape::escape;
use crate::value::{Kind, Value};

/// The human report: one block per finding (findings alike across tools share one block), the
/// diff of a changed item as JSON pointers with old and new values, added and removed tools
/// outlined, what could not be compared, a summary of the policies that found something and
/// the verdict; nothing but the verdict when there is nothing to report. Pure ASCII: every
/// server string is escaped.
///
/// Without knowing which servers are new or gone, each of their tools is a finding of its own:
/// [`to_text_with`] shows such a server once.
#[must_use]
pub fn to_text(report: &Report) -> String {
    to_text_with(report, &ServerChanges::default())
}

/// [`to_text`], showing each server of `servers` once: a new server as one block outlining the
/// tools nobody approved, a gone one as one block naming its withdrawn tools.
#[must_use]
pub fn to_text_with(report: &Report, servers: &ServerChanges) -> String {
    let mut out = String::new();
    if !report.findings.is_empty() || !report.unverified.is_empty() {
        out = findings_text_with(report, servers);
        summary_text(report, &mut out);
    } else if !report.notes.is_empty() {
        out = findings_text_with(report, servers);
    }
    let _ = writeln!(out, "{}", verdict_text(report));
    out
}

/// The finding blocks and the not-compared entries of the text report, without summary
/// and verdict (for `mcppin lock`, which shows what it approves).
#[must_use]
pub fn findings_text(report: &Report) -> String {
    findings_text_with(report, &ServerChanges::default())
}

/// [`findings_text`], showing each server of `servers` once (as [`to_text_with`]).
#[must_use]
pub fn findings_text_with(report: &Report, servers: &ServerChanges) -> String {
    let mut out = String::new();
    // Notes first: the added and removed items they explain are the first blocks below.
    for note in &report.notes {
        note_text(note, &mut out);
        out.push('\n');
    }
    for block in blocks(report, servers) {
        block.write(&mut out);
        out.push('\n');
    }
    // Entries with the same reason share a block (a server missing from an incomplete capture
    // is one block naming its tools).
    let mut reasons: Vec<(String, Vec<String>)> = Vec::new();
    for u in &report.unverified {
        let reason = reason_text(&u.reason);
        let label = place(&u.server, u.item.as_deref());
        match reasons.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, labels)) => labels.push(label),
            None => reasons.push((reason, vec![label])),
        }
    }
    for (reason, labels) in reasons {
        if let [label] = labels.as_slice() {
            let _ = writeln!(out, "not compared: {label}");
        } else {
            let _ = writeln!(
                out,
                "not compared: {} alike:",
                plural(labels.len(), "entry")
            );
            for label in &labels {
                let _ = writeln!(out, "    {label}");
            }
        }
        let _ = writeln!(out, "  {reason}\n");
    }
    out
}

/// A note: what it says of its server, and what it explains.
fn note_text(note: &Note, out: &mut String) {
    match note {
        Note::ClientCapabilitiesDiffer {
            server,
            approved,
            served,
        } => {
            let _ = writeln!(
                out,
                "note: {}: captured declaring other client capabilities than the approved capture",
                place(server, None)
            );
            let _ = writeln!(
                out,
                "  approved: {}\n  served:   {}",
                value_text(approved),
                value_text(served)
            );
            let _ = writeln!(
                out,
                "  a server may offer other items to a client declaring other capabilities: items\n  \
                 of this server found added or removed may follow from the capture, not the\n  \
                 server (capture again declaring the approved ones: mcppin-export --client or\n  \
                 --client-capabilities); a changed item is not explained by it"
            );
        }
        Note::GuardNotCompared {
            server,
            lock_version,
        } => {
            let _ = writeln!(
                out,
                "note: {}: runs behind mcppin-guard, which a version {lock_version} lockfile does not \
                 record",
                place(server, None)
            );
            let _ = writeln!(
                out,
                "  the guard was not compared: removing it or editing its settings would pass;\n  \
                 lock again to record it (mcppin lock; the approval serial does not move)"
            );
        }
    }
}

/// One block of the text report.
enum Block<'r> {
    /// Findings of one policy and gate whose lines below the heading are the same: one
    /// finding, or the same change in several tools.
    Alike {
        policy: Policy,
        gated: bool,
        labels: Vec<String>,
        body: String,
    },
    /// The tool-added findings of a new server, or the tool-removed findings of a gone one.
    Server {
        policy: Policy,
        gated: bool,
        server: &'r str,
        findings: Vec<&'r Finding>,
    },
}

/// The findings as blocks, in policy order, each in the order of its first finding.
fn blocks<'r>(report: &'r Report, servers: &ServerChanges) -> Vec<Block<'r>> {
    let mut blocks: Vec<Block<'r>> = Vec::new();
    for f in &report.findings {
        let whole = match f.policy() {
            Policy::ToolAdded => servers.new.contains(&f.server),
            Policy::ToolRemoved => servers.gone.contains(&f.server),
            _ => false,
        };
        if whole {
            let found = blocks.iter_mut().find_map(|b| match b {
                Block::Server {
                    policy,
                    gated,
                    server,
                    findings,
                } if *policy == f.policy() && *gated == f.gated && *server == f.server => {
                    Some(findings)
                }
                _ => None,
            });
            match found {
                Some(findings) => findings.push(f),
                None => blocks.push(Block::Server {
                    policy: f.policy(),
                    gated: f.gated,
                    server: &f.server,
                    findings: vec![f],
                }),
            }
            continue;
        }
        let mut text = String::new();
        block_body(f, "  ", &mut text);
        let label = place(&f.server, f.item.as_deref());
        let found = blocks.iter_mut().find_map(|b| match b {
            Block::Alike {
                policy,
                gated,
                labels,
                body,
            } if *policy == f.policy() && *gated == f.gated && *body == text => Some(labels),
            _ => None,
        });
        match found {
            Some(labels) => labels.push(label),
            None => blocks.push(Block::Alike {
                policy: f.policy(),
                gated: f.gated,
                labels: vec![label],
                body: text,
            }),
        }
    }
    let rank = |p: Policy| Policy::ALL.iter().position(|q| *q == p);
    blocks.sort_by_key(|b| match b {
        Block::Alike { policy, .. } | Block::Server { policy, .. } => rank(*policy),
    });
    blocks
}

impl Block<'_> {
    fn write(&self, out: &mut String) {
        match self {
            Self::Alike {
                policy,
                gated,
                labels,
                body,
            } => {
                if let [label] = labels.as_slice() {
                    let _ = writeln!(out, "{} [{}]: {label}", policy.name(), mode(*gated));
                } else {
                    let _ = writeln!(
                        out,
                        "{} [{}]: the same in {}:",
                        policy.name(),
                        mode(*gated),
                        plural(
                            labels.len(),
                            if labels[0].contains('/') {
                                "tool"
                            } else {
                                "server"
                            }
                        )
                    );
                    for label in labels {
                        let _ = writeln!(out, "    {label}");
                    }
                }
                out.push_str(body);
            }
            Self::Server {
                policy,
                gated,
                server,
                findings,
            } => {
                let label = place(server, None);
                let tools = plural(findings.len(), "tool");
                if *policy == Policy::ToolAdded {
                    let _ = writeln!(
                        out,
                        "{} [{}]: server {label} is new: {tools} nobody approved",
                        policy.name(),
                        mode(*gated)
                    );
                    for f in findings {
                        let _ = writeln!(out, "  {}", place(&f.server, f.item.as_deref()));
                        block_body(f, "    ", out);
                    }
                } else {
                    let _ = writeln!(
                        out,
                        "{} [{}]: server {label} is gone from the capture: {tools} withdrawn",
                        policy.name(),
                        mode(*gated)
                    );
                    for f in findings {
                        let _ = writeln!(out, "    {}", place(&f.server, f.item.as_deref()));
                    }
                }
            }
        }
    }
}

pub(super) fn mode(gated: bool) -> &'static str {
    if gated { "gated" } else { "reported" }
}

/// `1 tool`, `2 tools`.
pub(super) fn plural(n: usize, noun: &str) -> String {
    match (n, noun.strip_suffix('y')) {
        (1, _) => format!("1 {noun}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        (_, None) => format!("{n} {noun}s"),
    }
}

/// The lines of a finding below its heading in the text report: an added or removed tool
/// outlined, anything else as [`finding_body`] writes it. `indent` is the indent of the lines.
fn block_body(f: &Finding, indent: &str, out: &mut String) {
    match &f.evidence {
        Evidence::ToolAdded { served: item, .. }
        | Evidence::ToolRemoved {
            approved: Some(item),
            ..
        } => tool_outline(item, indent, out),
        Evidence::ToolRemoved {
            approved: None,
            approved_pin,
        }
        | Evidence::PromptRemoved {
            approved: None,
            approved_pin,
        }
        | Evidence::ResourceTemplateRemoved {
            approved: None,
            approved_pin,
        } => {
            let _ = writeln!(out, "{indent}approved: {approved_pin}");
        }
        _ => {
            let mut body = String::new();
            finding_body(f, &mut body);
            for line in body.lines() {
                let _ = writeln!(out, "{}{line}", &indent[2..]);
            }
        }
    }
}

/// How many characters of a description an outline shows.
const DESCRIPTION_CHARS: usize = 100;
/// How many input properties an outline names.
const OUTLINE_PROPERTIES: usize = 12;

/// A tool in a few lines: its title, the first line of its description (cut to
/// [`DESCRIPTION_CHARS`], ` [...]` marking what was left out), the shape of its input (each
/// property with its type and whether it is required) and its annotations. The JSON report
/// holds the whole item.
pub(super) fn tool_outline(item: &Value, indent: &str, out: &mut String) {
    if let Some(title) = item.get("title") {
        let _ = writeln!(out, "{indent}title: {}", short_text(title));
    }
    match item.get("description") {
        Some(d) => {
            let _ = writeln!(out, "{indent}description: {}", short_text(d));
        }
        None => {
            let _ = writeln!(out, "{indent}description: (absent)");
        }
    }
    let _ = writeln!(
        out,
        "{indent}input: {}",
        input_shape(item.get("inputSchema"))
    );
    if let Some(annotations) = item.get("annotations") {
        let _ = writeln!(out, "{indent}annotations: {}", value_text(annotations));
    }
}

/// A string cut to its first line and [`DESCRIPTION_CHARS`] characters, quoted and escaped,
/// followed by ` [...]` when something was cut; any other value as [`value_text`] writes it.
fn short_text(value: &Value) -> String {
    let Some(text) = value.as_str() else {
        return value_text(value);
    };
    let line = text.split(['\n', '\r']).next().unwrap_or("");
    let shown: String = line.chars().take(DESCRIPTION_CHARS).collect();
    let mut out = String::new();
    quoted(&shown, &mut out);
    if shown.len() < text.len() {
        out.push_str(" [...]");
    }
    out
}

/// The properties of an input schema with their types, required ones marked: `query (string,
/// required), limit (integer)`.
fn input_shape(schema: Option<&Value>) -> String {
    let Some(schema) = schema else {
        return "(no inputSchema)".to_owned();
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let Some(properties) = properties.filter(|p| !p.is_empty()) else {
        return "no properties".to_owned();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut parts: Vec<String> = properties
        .iter()
        .take(OUTLINE_PROPERTIES)
        .map(|(name, property)| {
            let mut part = property_name(name);
            part.push_str(" (");
            part.push_str(&type_text(property));
            if required.contains(&name) {
                part.push_str(", required");
            }
            part.push(')');
            part
        })
        .collect();
    if properties.len() > OUTLINE_PROPERTIES {
        parts.push(format!(
            "and {} more",
            plural(properties.len() - OUTLINE_PROPERTIES, "property")
        ));
    }
    parts.join(", ")
}

/// A property name as it is when it is a plain word, quoted and escaped otherwise (so a name
/// holding `, ` or `(` cannot pass for two properties).
fn property_name(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '$'))
    {
        name.to_owned()
    } else {
        let mut out = String::new();
        quoted(name, &mut out);
        out
    }
}

/// The type of a property schema: its `type` (a union joined by `|`, an array with the type of
/// its items), `enum`, `const`, `$ref`, or `any`.
fn type_text(schema: &Value) -> String {
    let one = |t: &Value| match t.as_str() {
        Some(t) => property_name(t),
        None => value_text(t),
    };
    match schema.get("type") {
        Some(t) if t.as_str() == Some("array") => match schema.get("items") {
            Some(items) if items.as_object().is_some() => {
                format!("array of {}", type_text(items))
            }
            _ => "array".to_owned(),
        },
        Some(t) => match t.as_array() {
            Some(union) => union.iter().map(one).collect::<Vec<_>>().join("|"),
            None => one(t),
        },
        None if schema.get("enum").is_some() => "enum".to_owned(),
        None if schema.get("const").is_some() => "const".to_owned(),
        None if schema.get("$ref").is_some() => "$ref".to_owned(),
        None => "any".to_owned(),
    }
}

/// The per-policy summary: one line for each policy that found something, and one for what
/// could not be compared when anything was not.
pub(super) fn summary_text(report: &Report, out: &mut String) {
    out.push_str("summary:\n");
    for (policy, found, _) in report.summary() {
        if found == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "  {:<18} {}, {}",
            policy.name(),
            plural(found, "finding"),
            mode(report.gating.contains(&policy))
        );
    }
    if !report.unverified.is_empty() {
        let _ = writeln!(
            out,
            "  {:<18} {}",
            NOT_COMPARED,
            plural(report.unverified.len(), "item")
        );
    }
}

/// The last line: `PASS`, `FAIL` or `PARTIAL` with what earned it; never `PASS` when nothing
/// gated the run and something was found.
pub(super) fn verdict_text(report: &Report) -> String {
    let gated = report.findings.iter().filter(|f| f.gated).count();
    let found = report.findings.len();
    let matched = plural(report.matched, "approved item");
    match report.status() {
        Status::Pass if found == 0 => format!("PASS: {matched} matched, nothing to report"),
        Status::Pass if report.gating.is_empty() => format!(
            "{} reported, none gating (--fail-on none); {matched} matched",
            plural(found, "finding")
        ),
        Status::Pass => format!(
            "PASS: every gated policy holds; {matched} matched; {} reported, none gating",
            plural(found, "finding")
        ),
        Status::Fail => format!(
            "FAIL: {} {}{}",
            plural(gated, "gated finding"),
            if report
                .findings
                .iter()
                .any(|f| f.gated && f.policy().is_departure())
            {
                (if gated == 1 { "proves" } else { "prove" }).to_owned()
                    + " a departure from the approved surface"
            } else {
                // Gated policies of the served text (--fail-on all): no departure is proven.
                let policies: Vec<&str> = Policy::ALL
                    .iter()
                    .filter(|p| report.findings.iter().any(|f| f.gated && f.policy() == **p))
                    .map(|p| p.name())
                    .collect();
                format!("({})", policies.join(", "))
            },
            if report.unverified.is_empty() {
                String::new()
            } else {
                let n = report.unverified.len();
                format!(
                    "; {n} more {} could not be compared",
                    if n == 1 { "item" } else { "items" }
                )
            }
        ),
        Status::Partial => format!(
            "PARTIAL: no departure proven, but {} could not be compared and could hide one",
            plural(report.unverified.len(), "item")
        ),
    }
}

/// Where a finding is: its label ([`crate::surface::label`]), unambiguous whatever the ids.
pub(super) fn place(server: &str, item: Option<&str>) -> String {
    crate::surface::label(server, item)
}

pub(super) fn finding_text(f: &Finding, out: &mut String) {
    let mode = if f.gated { "gated" } else { "reported" };
    let _ = writeln!(
        out,
        "{} [{mode}]: {}",
        f.policy().name(),
        place(&f.server, f.item.as_deref())
    );
    finding_body(f, out);
}

/// The lines of a finding below its heading, each indented by two spaces.
fn finding_body(f: &Finding, out: &mut String) {
    match &f.evidence {
        Evidence::ToolChanged {
            changes,
            approved,
            served,
        }
        | Evidence::PromptChanged {
            changes,
            approved,
            served,
        }
        | Evidence::ResourceTemplateChanged {
            changes,
            approved,
            served,
        } => {
            let classes: Vec<&str> = f.classes().iter().map(|c| c.name()).collect();
            if !classes.is_empty() {
                let _ = writeln!(out, "  classes: {}", classes.join(", "));
            }
            if changes.is_empty() {
                // A version 1 lockfile holds digests only: name both.
                let _ = writeln!(out, "  approved: {approved}\n  served:   {served}");
            }
            for c in changes {
                change_text(c, out);
            }
        }
        Evidence::ToolAdded { served, .. }
        | Evidence::PromptAdded { served, .. }
        | Evidence::ResourceTemplateAdded { served, .. } => {
            let _ = writeln!(out, "  served: {}", opt_value_text(Some(served)));
        }
        Evidence::ToolRemoved {
            approved: Some(v), ..
        }
        | Evidence::PromptRemoved {
            approved: Some(v), ..
        }
        | Evidence::ResourceTemplateRemoved {
            approved: Some(v), ..
        } => {
            let _ = writeln!(out, "  approved: {}", value_text(v));
        }
        Evidence::ToolRemoved {
            approved: None,
            approved_pin,
        }
        | Evidence::PromptRemoved {
            approved: None,
            approved_pin,
        }
        | Evidence::ResourceTemplateRemoved {
            approved: None,
            approved_pin,
        } => {
            let _ = writeln!(out, "  approved: {approved_pin}");
        }
        Evidence::ToolRenamed { from, served, .. } => {
            let _ = writeln!(
                out,
                "  approved as: {}\n  served as:   {}\n  otherwise unchanged: {}",
                text_or_absent(Some(from)),
                text_or_absent(f.item.as_deref()),
                value_text(served)
            );
        }
        Evidence::LaunchChanged { approved, served } => {
            let _ = writeln!(
                out,
                "  approved: {}\n  served:   {}",
                escape(&approved.to_string()),
                escape(&served.to_string())
            );
        }
        Evidence::ArtifactChanged { approved, served } => {
            // The parts that moved, each with its old and its new version and digest.
            for moved in approved.moved(served) {
                if let Some(entry) = moved.approved_entry() {
                    let _ = writeln!(out, "  approved: {}", escape(&entry));
                }
                if let Some(entry) = moved.served_entry() {
                    let _ = writeln!(out, "  served:   {}", escape(&entry));
                }
            }
        }
        Evidence::ArtifactUnknown { reason, approved } => {
            let _ = writeln!(out, "  reason: {}", escape(reason));
            for entry in approved.iter().flat_map(Artifact::entries) {
                let _ = writeln!(out, "  not checked: {}", escape(&entry));
            }
        }
        Evidence::FloatingVersion { launch, package } => {
            let _ = writeln!(
                out,
                "  package: {} (no pinned version or digest)\n  launch:  {}",
                escape(package),
                escape(&launch.to_string())
            );
        }
        Evidence::ServerRenamed { approved, served }
        | Evidence::InstructionsChanged { approved, served } => {
            let _ = writeln!(
                out,
                "  approved: {}\n  served:   {}",
                text_or_absent(approved.as_deref()),
                text_or_absent(served.as_deref())
            );
        }
        Evidence::ProtocolChanged { approved, served } => {
            let _ = writeln!(
                out,
                "  approved: {}\n  served:   {}",
                text_or_absent(Some(approved)),
                text_or_absent(Some(served))
            );
        }
        Evidence::NameCollision {
            other: (server, item),
            kind,
        } => {
            let _ = writeln!(
                out,
                "  {} match with {}",
                kind.as_str(),
                place(server, Some(item))
            );
        }
        Evidence::HiddenCharacters {
            pointer,
            in_name,
            code_points,
        } => {
            let _ = writeln!(
                out,
                "  {} {}: {}",
                if *in_name {
                    "member name at"
                } else {
                    "text at"
                },
                escape(pointer),
                code_points_text(code_points)
            );
        }
        Evidence::MixedScriptName => {
            let _ = writeln!(out, "  the name draws on more than one writing system");
        }
        Evidence::InvalidToolName => {
            let _ = writeln!(out, "  the name is outside [A-Za-z0-9._-]{{1,128}}");
        }
    }
}

/// A server's name or protocol revision as the text report shows it: quoted and escaped, or
/// `(absent)`.
pub(super) fn text_or_absent(text: Option<&str>) -> String {
    text.map_or_else(|| "(absent)".to_owned(), |t| value_text(&Value::from(t)))
}

fn change_text(c: &Change, out: &mut String) {
    let classes: Vec<&str> = c.classes.iter().map(|c| c.name()).collect();
    let _ = writeln!(
        out,
        "  {}  ({})\n    - {}\n    + {}",
        escape(&c.pointer),
        classes.join(", "),
        place_text(c.old.as_ref()),
        place_text(c.new.as_ref()),
    );
}

/// One side of a change: `(absent)` when the place does not exist, the value otherwise (a
/// JSON `null` included, which is not absence).
pub(super) fn place_text(value: Option<&Value>) -> String {
    value.map_or_else(|| "(absent)".to_owned(), value_text)
}

pub(super) fn reason_text(reason: &Reason) -> String {
    match reason {
        Reason::Undecidable { literals } => format!(
            "holds undecidable number literal(s) {}: no digest, so no match can be claimed",
            escape(&literals.join(", "))
        ),
        Reason::Unseen => {
            "approved but not in this incomplete capture: its withdrawal cannot be proven".into()
        }
        Reason::OutsideScope => {
            "approved server outside the capture's scope: left unexamined (narrow with --server)"
                .into()
        }
        Reason::AuthContextDiffers { approved, served } => format!(
            "captured under authorization context {}, approved under {} only: surfaces of \
             different contexts are not compared (capture under an approved context, or lock \
             this capture as an approval of its own context)",
            escape(served),
            escape(&approved.join(", "))
        ),
    }
}

pub(super) fn code_points_text(points: &[u32]) -> String {
    points
        .iter()
        .map(|c| format!("U+{c:04X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn opt_value_text(value: Option<&Value>) -> String {
    match value {
        None => "(absent)".to_owned(),
        Some(v) if v.is_null() => "(absent)".to_owned(),
        Some(v) => value_text(v),
    }
}

/// A value on one line, JSON-like, every string escaped to printable ASCII (`<U+XXXX>`).
#[must_use]
pub fn value_text(value: &Value) -> String {
    let mut out = String::new();
    write_value_text(value, &mut out);
    out
}

fn write_value_text(value: &Value, out: &mut String) {
    match value.kind() {
        Kind::Null => out.push_str("null"),
        Kind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Kind::Number(n) => out.push_str(&escape(n.literal())),
        Kind::String(s) => quoted(s, out),
        Kind::Array(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value_text(v, out);
            }
            out.push(']');
        }
        Kind::Object(o) => {
            out.push('{');
            for (i, (k, v)) in o.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                quoted(k, out);
                out.push(':');
                write_value_text(v, out);
            }
            out.push('}');
        }
    }
}

fn quoted(s: &str, out: &mut String) {
    out.push('"');
    for c in escape(s).chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::lockfile::Lockfile;
    use crate::manifest::Manifest;
    use crate::policy::{FailOn, Options, verify};
    use crate::report::testing::*;

    #[test]
    fn a_note_stands_above_the_added_items_it_explains_and_is_escaped() {
        let approved = r#"{"schema_version":3,"complete":true,"servers":[{"id":"s",
            "client_capabilities":{},"tools":[{"name":"t"}]}]}"#;
        let served = approved
            .replace(
                r#""client_capabilities":{}"#,
                r#""client_capabilities":{"roots":{"\u001b[2K":1}}"#,
            )
            .replace(r#"{"name":"t"}"#, r#"{"name":"t"},{"name":"u"}"#);
        let text = to_text(&report(approved, &served));
        assert!(text.is_ascii() && !text.contains('\u{1b}'), "{text}");
        let note = text
            .find("note: s: captured declaring other client capabilities")
            .unwrap();
        let added = text.find("tool-added [gated]: s/u").unwrap();
        assert!(note < added, "{text}");
        assert!(text.contains("  approved: {}\n  served:   {\"roots\":{\"<U+001B>[2K\":1}}\n"));
        assert!(
            text.contains("a changed item is not explained by it"),
            "{text}"
        );
        assert!(!text.contains("--approve"), "{text}");
        // Without findings the note is still shown, above the verdict.
        let same = served.replace(r#",{"name":"u"}"#, "");
        let text = to_text(&report(approved, &same));
        assert!(text.starts_with("note: s: "), "{text}");
    }

    #[test]
    fn text_escapes_every_server_string() {
        let r = report(HOSTILE, HOSTILE);
        let text = to_text(&r);
        assert!(text.is_ascii());
        assert!(!text.contains('\u{1b}'));
        assert!(
            text.contains("ev<U+001B>[2Kil<U+202E>/t<U+200B>ool"),
            "{text}"
        );
        assert!(
            text.contains("text at /description: U+001B U+202E U+200B"),
            "{text}"
        );
    }

    #[test]
    fn text_outlines_an_added_tool_with_every_server_string_escaped() {
        let approved = r#"{"schema_version":2,"complete":true,"servers":[{"id":"s","tools":[]}]}"#;
        let served = r#"{"schema_version":2,"complete":true,"servers":[{"id":"s","tools":[
            {"name":"t","description":"Find\u001b[2K it\u202e\nthen more","inputSchema":{
              "properties":{"a, b (string)":{"type":"x\u200b"},"ok":{"enum":[1]}},
              "required":["ok"]}}]}]}"#;
        let text = to_text(&report(approved, served));
        assert!(text.is_ascii(), "{text}");
        assert!(
            text.contains(
                "tool-added [gated]: s/t\n  description: \"Find<U+001B>[2K it<U+202E>\" [...]\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("  input: \"a, b (string)\" (\"x<U+200B>\"), ok (enum, required)\n"),
            "{text}"
        );
        assert!(!text.contains("then more"), "{text}");
    }

    #[test]
    fn text_shows_a_new_server_once_only_when_told_it_is_new() {
        let served = r#"{"schema_version":2,"complete":true,"servers":[{"id":"s","tools":[
            {"name":"a","description":"A"},{"name":"b","description":"B"}]}]}"#;
        let empty = r#"{"schema_version":2,"complete":true,"servers":[]}"#;
        let r = report(empty, served);
        assert_eq!(to_text(&r).matches("tool-added [gated]").count(), 2);
        let mut servers = ServerChanges::default();
        servers.new.insert("s".to_owned());
        let text = to_text_with(&r, &servers);
        assert!(
            text.starts_with(
                "tool-added [gated]: server s is new: 2 tools nobody approved\n  s/a\n"
            ),
            "{text}"
        );
        assert_eq!(text.matches("tool-added [gated]").count(), 1, "{text}");
    }

    #[test]
    fn text_passes_in_one_line_and_never_over_findings_nothing_gates() {
        let r = report(
            HOSTILE.replace("\\u200b", "").as_str(),
            HOSTILE.replace("\\u200b", "").as_str(),
        );
        assert!(!r.findings.is_empty());
        assert!(
            to_text(&r).contains("\nPASS: every gated policy holds; 1 approved item matched; ")
        );
        let plain =
            r#"{"schema_version":2,"complete":true,"servers":[{"id":"s","tools":[{"name":"t"}]}]}"#;
        assert_eq!(
            to_text(&report(plain, plain)),
            "PASS: 1 approved item matched, nothing to report\n"
        );
        let a = Manifest::parse(plain.as_bytes()).unwrap();
        let s = Manifest::parse(plain.replace("\"t\"", "\"u\"").as_bytes()).unwrap();
        let none = verify(
            &Lockfile::approve(None, &a, &[]).unwrap(),
            &s,
            &Options::new(BTreeSet::new(), FailOn::None),
        );
        let text = to_text(&none);
        assert!(!text.contains("PASS"), "{text}");
        assert!(
            text.ends_with(
                "\n1 finding reported, none gating (--fail-on none); 0 approved items matched\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn text_tells_null_from_absent_and_keeps_server_text() {
        let approved = r#"{"schema_version":2,"complete":true,"servers":[{"id":"s","tools":[
            {"name":"t","description":"Returns (null) when empty","default":null}]}]}"#;
        let served = r#"{"schema_version":2,"complete":true,"servers":[{"id":"s","tools":[
            {"name":"t","description":"Returns null when empty"}]}]}"#;
        let text = to_text(&report(approved, served));
        assert!(
            text.contains("/default  (other)\n    - null\n    + (absent)"),
            "{text}"
        );
        assert!(text.contains("- \"Returns (null) when empty\""), "{text}");
        assert!(text.contains("+ \"Returns null when empty\""), "{text}");
    }
}

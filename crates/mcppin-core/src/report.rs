//! The three renderings of a [`Report`] (docs/cli.md): text for a person, JSON for a program
//! (read back by [`from_json`]), SARIF 2.1.0 for code-scanning tools.
//!
//! Text and SARIF render every string that came from a server or a file through
//! [`crate::escape`]: nothing outside printable ASCII reaches a terminal or a web view as
//! itself. JSON keeps the values exactly as served (it is for programs, which must escape
//! what they show).
//!
//! ```
//! use mcppin_core::lockfile::Lockfile;
//! use mcppin_core::manifest::Manifest;
//! use mcppin_core::policy::{Options, verify};
//! use mcppin_core::report;
//!
//! let m = Manifest::parse(br#"{"schema_version":2,"complete":true,"servers":[
//!   {"id":"docs","tools":[{"name":"search","description":"Find\u202e"}]}]}"#)?;
//! let r = verify(&Lockfile::approve(None, &m, &[])?, &m, &Options::default());
//! let text = report::to_text(&r);
//! assert!(text.contains("hidden-characters [reported]: docs/search") && text.is_ascii());
//! assert_eq!(report::from_json(&report::to_json(&r))?, r);
//! # Ok::<(), mcppin_core::Error>(())
//! ```

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::diff::{Change, ChangeClass};
use crate::digest::Digest;
use crate::error::Error;
use crate::escape::escape;
use crate::lockfile::{Lockfile, Pin};
use crate::manifest::Manifest;
use crate::policy::{Evidence, Finding, Options, Policy, Reason, Report, Status, Unverified};
use crate::scan::CollisionKind;
use crate::surface::{Fields, array, count, element, object, string, strings};
use crate::value::{Kind, Object, Value};

/// The `schema_version` of the JSON report.
pub const SCHEMA_VERSION: u64 = 1;

/// The rule id SARIF uses for what could not be compared (exit 3).
pub const NOT_COMPARED: &str = "not-compared";

// ---------------------------------------------------------------------------------------
// Text

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

/// The servers a run saw on one side only, so that reports show each once rather than once per
/// tool.
#[derive(Clone, Debug, Default, Eq, PartialEq)]
#[non_exhaustive]
pub struct ServerChanges {
    /// Servers the manifest serves and the lockfile does not hold.
    pub new: BTreeSet<String>,
    /// Servers the lockfile holds and a capture covering them no longer serves.
    pub gone: BTreeSet<String>,
}

impl ServerChanges {
    /// The servers found on one side only, among those `options` compares: new ones (served,
    /// never approved) and gone ones (approved, missing from a capture whose scope covers them;
    /// one outside the scope was not examined, so it is not gone).
    #[must_use]
    pub fn between(lock: &Lockfile, manifest: &Manifest, options: &Options) -> Self {
        let wanted = |id: &String| options.servers.is_empty() || options.servers.contains(id);
        let in_scope = |id: &String| manifest.scope.as_ref().is_none_or(|s| s.contains(id));
        Self {
            new: manifest
                .servers
                .keys()
                .filter(|id| wanted(id) && !lock.servers.contains_key(*id))
                .cloned()
                .collect(),
            gone: lock
                .servers
                .keys()
                .filter(|id| wanted(id) && in_scope(id) && !manifest.servers.contains_key(*id))
                .cloned()
                .collect(),
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

fn mode(gated: bool) -> &'static str {
    if gated { "gated" } else { "reported" }
}

/// `1 tool`, `2 tools`.
fn plural(n: usize, noun: &str) -> String {
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
fn tool_outline(item: &Value, indent: &str, out: &mut String) {
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
fn summary_text(report: &Report, out: &mut String) {
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
fn verdict_text(report: &Report) -> String {
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
fn place(server: &str, item: Option<&str>) -> String {
    crate::surface::label(server, item)
}

fn finding_text(f: &Finding, out: &mut String) {
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
        Evidence::ToolAdded { served, .. } => {
            let _ = writeln!(out, "  served: {}", opt_value_text(Some(served)));
        }
        Evidence::ToolRemoved {
            approved: Some(v), ..
        } => {
            let _ = writeln!(out, "  approved: {}", value_text(v));
        }
        Evidence::ToolRemoved {
            approved: None,
            approved_pin,
        } => {
            let _ = writeln!(out, "  approved: {approved_pin}");
        }
        Evidence::ServerRenamed { approved, served } => {
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
fn text_or_absent(text: Option<&str>) -> String {
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
fn place_text(value: Option<&Value>) -> String {
    value.map_or_else(|| "(absent)".to_owned(), value_text)
}

fn reason_text(reason: &Reason) -> String {
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
    }
}

fn code_points_text(points: &[u32]) -> String {
    points
        .iter()
        .map(|c| format!("U+{c:04X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn opt_value_text(value: Option<&Value>) -> String {
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

// ---------------------------------------------------------------------------------------
// JSON

/// What the signature check of the lockfile found, as the JSON and SARIF reports state it
/// (`docs/signing.md`). The binary that checked the approval fills it in
/// ([`Report::signature`]).
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum SignatureStatus {
    /// No signature beside the lockfile, and none required.
    Unsigned {
        /// The lockfile's `approval_serial`.
        approval_serial: u64,
    },
    /// A signature lies beside the lockfile but no key was given, so it was not checked and
    /// proves nothing.
    Unchecked {
        /// The lockfile's `approval_serial`.
        approval_serial: u64,
        /// What the signature claims, when it reads; `None` when it does not.
        claim: Option<Signer>,
    },
    /// The signature holds: made by a trusted key over exactly this lockfile.
    Verified {
        /// The lockfile's `approval_serial`, the number to pin as the next serial floor.
        approval_serial: u64,
        /// The key and the date.
        signer: Signer,
        /// How long before the check it was signed, in seconds (0 for a date after it).
        age_seconds: u64,
    },
}

/// Who signed a lockfile and when, as its signature envelope says.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Signer {
    /// The fingerprint of the key (SHA-256 of its SPKI DER encoding).
    pub key: Digest,
    /// When it was signed, RFC 3339 in UTC.
    pub signed_at: String,
}

impl SignatureStatus {
    /// The status's name in the reports: `unsigned`, `unchecked` or `verified`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Unsigned { .. } => "unsigned",
            Self::Unchecked { .. } => "unchecked",
            Self::Verified { .. } => "verified",
        }
    }

    /// The lockfile's `approval_serial`.
    #[must_use]
    pub fn approval_serial(&self) -> u64 {
        match self {
            Self::Unsigned { approval_serial }
            | Self::Unchecked {
                approval_serial, ..
            }
            | Self::Verified {
                approval_serial, ..
            } => *approval_serial,
        }
    }

    /// The key and date the signature names: verified, or only claimed when unchecked.
    #[must_use]
    pub fn signer(&self) -> Option<&Signer> {
        match self {
            Self::Unsigned { .. } => None,
            Self::Unchecked { claim, .. } => claim.as_ref(),
            Self::Verified { signer, .. } => Some(signer),
        }
    }
}

/// The JSON report (`schema_version` 1): values exactly as served, every finding with
/// policy, server, item, pointer, gated flag and change classes, the per-policy summary, the
/// run's `status` and `exit_code`, and the `signature` status when the report has one. See
/// `docs/formats.md`.
#[must_use]
pub fn to_json(report: &Report) -> Value {
    let mut o = Object::new();
    o.insert("schema_version", SCHEMA_VERSION);
    o.insert("status", report.status().name());
    o.insert("exit_code", u64::from(report.exit_code()));
    o.insert("matched", report.matched as u64);
    o.insert(
        "gating",
        Value::from(
            report
                .gating
                .iter()
                .map(|p| Value::from(p.name()))
                .collect::<Vec<_>>(),
        ),
    );
    let mut summary = Object::new();
    for (policy, found, gated) in report.summary() {
        let mut s = Object::new();
        s.insert("findings", found as u64);
        s.insert("gated", gated as u64);
        s.insert("gating", report.gating.contains(&policy));
        summary.insert(policy.name(), s);
    }
    o.insert("summary", summary);
    o.insert(
        "findings",
        Value::from(report.findings.iter().map(finding_json).collect::<Vec<_>>()),
    );
    o.insert(
        "unverified",
        Value::from(
            report
                .unverified
                .iter()
                .map(unverified_json)
                .collect::<Vec<_>>(),
        ),
    );
    if let Some(signature) = &report.signature {
        o.insert("signature", signature_json(signature, false));
    }
    Value::from(o)
}

/// The `signature` member: `status`, `checked`, `approval_serial`, and the `key`,
/// `signed_at` and `age_seconds` it has (`null` otherwise). `signed_at` is ASCII as the
/// signature crate writes it; with `escaped` (for SARIF) a date built by hand is escaped too.
fn signature_json(signature: &SignatureStatus, escaped: bool) -> Value {
    let mut o = Object::new();
    o.insert("status", signature.name());
    o.insert(
        "checked",
        matches!(signature, SignatureStatus::Verified { .. }),
    );
    o.insert("approval_serial", signature.approval_serial());
    let signer = signature.signer();
    o.insert(
        "key",
        signer.map_or_else(Value::null, |s| Value::from(s.key.to_string())),
    );
    o.insert(
        "signed_at",
        signer.map_or_else(Value::null, |s| {
            if escaped {
                Value::from(escape(&s.signed_at).into_owned())
            } else {
                Value::from(s.signed_at.as_str())
            }
        }),
    );
    o.insert(
        "age_seconds",
        match signature {
            SignatureStatus::Verified { age_seconds, .. } => Value::from(*age_seconds),
            _ => Value::null(),
        },
    );
    Value::from(o)
}

fn opt_str(o: &mut Object, name: &str, value: Option<&str>) {
    o.insert(name, value.map_or_else(Value::null, Value::from));
}

fn put_pin(o: &mut Object, prefix: &str, pin: Option<&Pin>) {
    match pin {
        Some(Pin::Digest(d)) => o.insert(format!("{prefix}_digest"), d.to_string()),
        Some(Pin::Undecidable(l)) => o.insert(
            format!("{prefix}_undecidable_literals"),
            Value::from(
                l.iter()
                    .map(|s| Value::from(s.as_str()))
                    .collect::<Vec<_>>(),
            ),
        ),
        None => {}
    }
}

fn finding_json(f: &Finding) -> Value {
    let mut o = Object::new();
    o.insert("policy", f.policy().name());
    o.insert("server", f.server.as_str());
    opt_str(&mut o, "item", f.item.as_deref());
    opt_str(&mut o, "pointer", f.pointer());
    o.insert("gated", f.gated);
    o.insert(
        "classes",
        Value::from(
            f.classes()
                .iter()
                .map(|c| Value::from(c.name()))
                .collect::<Vec<_>>(),
        ),
    );
    match &f.evidence {
        Evidence::ToolChanged {
            changes,
            approved,
            served,
        } => {
            o.insert(
                "changes",
                Value::from(changes.iter().map(change_json).collect::<Vec<_>>()),
            );
            put_pin(&mut o, "approved", Some(approved));
            put_pin(&mut o, "served", Some(served));
        }
        Evidence::ToolAdded { served, served_pin } => {
            o.insert("served", served.clone());
            put_pin(&mut o, "served", Some(served_pin));
        }
        Evidence::ToolRemoved {
            approved,
            approved_pin,
        } => {
            if let Some(v) = approved {
                o.insert("approved", v.clone());
            }
            put_pin(&mut o, "approved", Some(approved_pin));
        }
        Evidence::ServerRenamed { approved, served } => {
            opt_str(&mut o, "approved", approved.as_deref());
            opt_str(&mut o, "served", served.as_deref());
        }
        Evidence::ProtocolChanged { approved, served } => {
            o.insert("approved", approved.as_str());
            o.insert("served", served.as_str());
        }
        Evidence::NameCollision {
            other: (server, item),
            kind,
        } => {
            let mut other = Object::new();
            other.insert("server", server.as_str());
            other.insert("item", item.as_str());
            o.insert("other", other);
            o.insert("collision", kind.as_str());
        }
        Evidence::HiddenCharacters {
            in_name,
            code_points,
            ..
        } => {
            o.insert("in_name", *in_name);
            o.insert(
                "code_points",
                Value::from(
                    code_points
                        .iter()
                        .map(|c| Value::from(format!("U+{c:04X}")))
                        .collect::<Vec<_>>(),
                ),
            );
        }
        Evidence::MixedScriptName | Evidence::InvalidToolName => {}
    }
    Value::from(o)
}

fn change_json(c: &Change) -> Value {
    let mut o = Object::new();
    o.insert("pointer", c.pointer.as_str());
    if let Some(v) = &c.old {
        o.insert("old", v.clone());
    }
    if let Some(v) = &c.new {
        o.insert("new", v.clone());
    }
    o.insert(
        "classes",
        Value::from(
            c.classes
                .iter()
                .map(|c| Value::from(c.name()))
                .collect::<Vec<_>>(),
        ),
    );
    Value::from(o)
}

fn unverified_json(u: &Unverified) -> Value {
    let mut o = Object::new();
    o.insert("server", u.server.as_str());
    opt_str(&mut o, "item", u.item.as_deref());
    o.insert("reason", u.reason.name());
    if let Reason::Undecidable { literals } = &u.reason {
        o.insert(
            "literals",
            Value::from(
                literals
                    .iter()
                    .map(|s| Value::from(s.as_str()))
                    .collect::<Vec<_>>(),
            ),
        );
    }
    Value::from(o)
}

/// Reads a JSON report back into a [`Report`], checking that its `status`, `exit_code` and
/// `summary` are the ones its findings give.
///
/// # Errors
///
/// [`Error::Invalid`], [`Error::UnknownMember`] or [`Error::MissingMember`], with the JSON
/// pointer, for another `schema_version`, an unknown member, policy, class or reason, or a
/// verdict or summary that disagrees with the findings.
pub fn from_json(value: &Value) -> Result<Report, Error> {
    let f = Fields::new(
        value,
        "",
        &[
            "schema_version",
            "status",
            "exit_code",
            "matched",
            "gating",
            "summary",
            "findings",
            "unverified",
            "signature",
        ],
    )?;
    if count(f.required("schema_version")?, "/schema_version")? != SCHEMA_VERSION {
        return Err(invalid("/schema_version", "schema_version 1"));
    }
    let gating = strings(f.required("gating")?, "/gating")?
        .iter()
        .enumerate()
        .map(|(i, p)| {
            p.parse::<Policy>()
                .map_err(|_| invalid(&element("/gating", i), "a policy name"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let findings = array(f.required("findings")?, "/findings")?
        .iter()
        .enumerate()
        .map(|(i, v)| finding_from(v, &element("/findings", i)))
        .collect::<Result<Vec<_>, _>>()?;
    let unverified = array(f.required("unverified")?, "/unverified")?
        .iter()
        .enumerate()
        .map(|(i, v)| unverified_from(v, &element("/unverified", i)))
        .collect::<Result<Vec<_>, _>>()?;
    let matched = usize::try_from(count(f.required("matched")?, "/matched")?)
        .map_err(|_| invalid("/matched", "a count"))?;
    let mut report = Report::new(gating, findings, unverified, matched);
    report.signature = f
        .optional("signature")
        .map(|v| signature_from(v, "/signature"))
        .transpose()?;
    if string(f.required("status")?, "/status")? != report.status().name() {
        return Err(invalid("/status", "the status the findings give"));
    }
    if count(f.required("exit_code")?, "/exit_code")? != u64::from(report.exit_code()) {
        return Err(invalid("/exit_code", "the exit code the findings give"));
    }
    object(f.required("summary")?, "/summary")?;
    if f.required("summary")? != to_json(&report).get("summary").unwrap_or(&Value::null()) {
        return Err(invalid("/summary", "the summary the findings give"));
    }
    Ok(report)
}

fn signature_from(value: &Value, pointer: &str) -> Result<SignatureStatus, Error> {
    let f = Fields::new(
        value,
        pointer,
        &[
            "status",
            "checked",
            "approval_serial",
            "key",
            "signed_at",
            "age_seconds",
        ],
    )?;
    let approval_serial = count(f.required("approval_serial")?, &f.at("approval_serial"))?;
    let key = match opt_string_or_null(&f, "key")? {
        None => None,
        Some(k) => Some(
            k.parse::<Digest>()
                .map_err(|_| invalid(&f.at("key"), "a key fingerprint"))?,
        ),
    };
    let signed_at = opt_string_or_null(&f, "signed_at")?;
    let signer = match (key, signed_at) {
        (Some(key), Some(signed_at)) => Some(Signer { key, signed_at }),
        (None, None) => None,
        _ => {
            return Err(invalid(
                &f.at("signed_at"),
                "key and signed_at both or neither",
            ));
        }
    };
    let age = match f.required("age_seconds")? {
        v if v.is_null() => None,
        v => Some(count(v, &f.at("age_seconds"))?),
    };
    let at = f.at("status");
    let status = match (string(f.required("status")?, &at)?, signer, age) {
        ("unsigned", None, None) => SignatureStatus::Unsigned { approval_serial },
        ("unchecked", claim, None) => SignatureStatus::Unchecked {
            approval_serial,
            claim,
        },
        ("verified", Some(signer), Some(age_seconds)) => SignatureStatus::Verified {
            approval_serial,
            signer,
            age_seconds,
        },
        _ => {
            return Err(invalid(
                &at,
                "unsigned, unchecked or verified, with the members each has",
            ));
        }
    };
    let checked = f.required("checked")?.as_bool();
    if checked != Some(matches!(status, SignatureStatus::Verified { .. })) {
        return Err(invalid(&f.at("checked"), "true exactly when verified"));
    }
    Ok(status)
}

fn invalid(pointer: &str, expected: &'static str) -> Error {
    Error::Invalid {
        pointer: pointer.to_owned(),
        expected,
    }
}

fn opt_string_or_null(f: &Fields<'_>, name: &'static str) -> Result<Option<String>, Error> {
    match f.required(name)? {
        v if v.is_null() => Ok(None),
        v => Ok(Some(string(v, &f.at(name))?.to_owned())),
    }
}

fn pin_from(f: &Fields<'_>, prefix: &str) -> Result<Option<Pin>, Error> {
    let digest_name = format!("{prefix}_digest");
    let literals_name = format!("{prefix}_undecidable_literals");
    if let Some(d) = f.optional(&digest_name) {
        let at = f.at(&digest_name);
        return string(d, &at)?
            .parse()
            .map(|d| Some(Pin::Digest(d)))
            .map_err(|_| invalid(&at, "a digest"));
    }
    f.optional(&literals_name)
        .map(|l| strings(l, &f.at(&literals_name)).map(Pin::Undecidable))
        .transpose()
}

/// The members of a finding that hold evidence, each written by some policies only.
const EVIDENCE_MEMBERS: [&str; 11] = [
    "changes",
    "approved",
    "served",
    "approved_digest",
    "approved_undecidable_literals",
    "served_digest",
    "served_undecidable_literals",
    "other",
    "collision",
    "in_name",
    "code_points",
];

/// The evidence members `policy` writes (docs/formats.md).
fn evidence_members(policy: Policy) -> &'static [&'static str] {
    match policy {
        Policy::ToolChanged => &[
            "changes",
            "approved_digest",
            "approved_undecidable_literals",
            "served_digest",
            "served_undecidable_literals",
        ],
        Policy::ToolAdded => &["served", "served_digest", "served_undecidable_literals"],
        Policy::ToolRemoved => &[
            "approved",
            "approved_digest",
            "approved_undecidable_literals",
        ],
        Policy::ServerRenamed | Policy::ProtocolChanged => &["approved", "served"],
        Policy::NameCollision => &["other", "collision"],
        Policy::HiddenCharacters => &["in_name", "code_points"],
        Policy::MixedScriptName | Policy::InvalidToolName => &[],
    }
}

fn finding_from(value: &Value, pointer: &str) -> Result<Finding, Error> {
    let mut names = vec!["policy", "server", "item", "pointer", "gated", "classes"];
    names.extend(EVIDENCE_MEMBERS);
    let f = Fields::new(value, pointer, &names)?;
    let policy = string(f.required("policy")?, &f.at("policy"))?
        .parse::<Policy>()
        .map_err(|_| invalid(&f.at("policy"), "a policy name"))?;
    // A member of another policy's evidence has no place in this finding.
    if let Some(name) = EVIDENCE_MEMBERS
        .into_iter()
        .find(|n| f.optional(n).is_some() && !evidence_members(policy).contains(n))
    {
        return Err(Error::UnknownMember {
            pointer: f.at(name),
            name: name.to_owned(),
        });
    }
    let server = string(f.required("server")?, &f.at("server"))?;
    let item = opt_string_or_null(&f, "item")?;
    let gated = f
        .required("gated")?
        .as_bool()
        .ok_or_else(|| invalid(&f.at("gated"), "true or false"))?;
    let place = opt_string_or_null(&f, "pointer")?;
    if place.is_some() != (policy == Policy::HiddenCharacters) {
        return Err(invalid(
            &f.at("pointer"),
            "a pointer for hidden-characters, null for the other policies",
        ));
    }
    let pin = |prefix: &str, name: &'static str| {
        pin_from(&f, prefix)?.ok_or_else(|| Error::MissingMember {
            pointer: pointer.to_owned(),
            name,
        })
    };
    let evidence = match policy {
        Policy::ToolChanged => {
            let at = f.at("changes");
            Evidence::ToolChanged {
                changes: array(f.required("changes")?, &at)?
                    .iter()
                    .enumerate()
                    .map(|(i, c)| change_from(c, &element(&at, i)))
                    .collect::<Result<_, _>>()?,
                approved: pin("approved", "approved_digest")?,
                served: pin("served", "served_digest")?,
            }
        }
        Policy::ToolAdded => Evidence::ToolAdded {
            served: f.required("served")?.clone(),
            served_pin: pin("served", "served_digest")?,
        },
        Policy::ToolRemoved => Evidence::ToolRemoved {
            approved: f.optional("approved").cloned(),
            approved_pin: pin("approved", "approved_digest")?,
        },
        Policy::ServerRenamed => Evidence::ServerRenamed {
            approved: opt_string_or_null(&f, "approved")?,
            served: opt_string_or_null(&f, "served")?,
        },
        Policy::ProtocolChanged => Evidence::ProtocolChanged {
            approved: string(f.required("approved")?, &f.at("approved"))?.to_owned(),
            served: string(f.required("served")?, &f.at("served"))?.to_owned(),
        },
        Policy::NameCollision => {
            let o = Fields::new(f.required("other")?, &f.at("other"), &["server", "item"])?;
            let at = f.at("collision");
            Evidence::NameCollision {
                other: (
                    string(o.required("server")?, &o.at("server"))?.to_owned(),
                    string(o.required("item")?, &o.at("item"))?.to_owned(),
                ),
                kind: match string(f.required("collision")?, &at)? {
                    "exact" => CollisionKind::Exact,
                    "case-insensitive" => CollisionKind::CaseInsensitive,
                    "confusable" => CollisionKind::Confusable,
                    _ => return Err(invalid(&at, "exact, case-insensitive or confusable")),
                },
            }
        }
        Policy::HiddenCharacters => {
            let at = f.at("code_points");
            Evidence::HiddenCharacters {
                pointer: place.unwrap_or_default(),
                in_name: f
                    .required("in_name")?
                    .as_bool()
                    .ok_or_else(|| invalid(&f.at("in_name"), "true or false"))?,
                code_points: strings(f.required("code_points")?, &at)?
                    .iter()
                    .map(|s| {
                        s.strip_prefix("U+")
                            .and_then(|h| u32::from_str_radix(h, 16).ok())
                            .ok_or_else(|| invalid(&at, "code points written U+XXXX"))
                    })
                    .collect::<Result<_, _>>()?,
            }
        }
        Policy::MixedScriptName => Evidence::MixedScriptName,
        Policy::InvalidToolName => Evidence::InvalidToolName,
    };
    let finding = Finding::new(evidence, server, item.as_deref(), gated);
    let classes = strings(f.required("classes")?, &f.at("classes"))?;
    let names: Vec<&str> = finding.classes().iter().map(|c| c.name()).collect();
    if classes != names {
        return Err(invalid(&f.at("classes"), "the classes of the changes"));
    }
    Ok(finding)
}

fn change_from(value: &Value, pointer: &str) -> Result<Change, Error> {
    let f = Fields::new(value, pointer, &["pointer", "old", "new", "classes"])?;
    let at = f.at("classes");
    Ok(Change {
        pointer: string(f.required("pointer")?, &f.at("pointer"))?.to_owned(),
        old: f.optional("old").cloned(),
        new: f.optional("new").cloned(),
        classes: strings(f.required("classes")?, &at)?
            .iter()
            .map(|c| {
                c.parse::<ChangeClass>()
                    .map_err(|_| invalid(&at, "a change class"))
            })
            .collect::<Result<_, _>>()?,
    })
}

fn unverified_from(value: &Value, pointer: &str) -> Result<Unverified, Error> {
    let f = Fields::new(value, pointer, &["server", "item", "reason", "literals"])?;
    let at = f.at("reason");
    let reason = match string(f.required("reason")?, &at)? {
        "undecidable" => Reason::Undecidable {
            literals: strings(f.required("literals")?, &f.at("literals"))?,
        },
        "unseen-in-incomplete-capture" => Reason::Unseen,
        "outside-capture-scope" => Reason::OutsideScope,
        _ => return Err(invalid(&at, "a reason")),
    };
    Ok(Unverified {
        server: string(f.required("server")?, &f.at("server"))?.to_owned(),
        item: opt_string_or_null(&f, "item")?,
        reason,
    })
}

// ---------------------------------------------------------------------------------------
// SARIF

/// The `uriBaseId` of every location in the SARIF report: the root of the repository the
/// lockfile is in, as GitHub code scanning names it.
pub const SRCROOT: &str = "%SRCROOT%";

/// The key of the fingerprint each SARIF result carries in `partialFingerprints`.
pub const FINGERPRINT: &str = "mcppin/v1";

/// The longest reason a SARIF notification carries, in characters after escaping.
pub const MAX_REASON: usize = 2000;

/// What the SARIF report needs besides the [`Report`]: where the lockfile is and where the
/// rules' help lives. The caller finds both; this crate reads no files.
#[derive(Clone, Copy, Debug)]
pub struct SarifContext<'a> {
    /// The version of the tool that ran.
    pub tool_version: &'a str,
    /// The lockfile's path relative to the repository root ([`SRCROOT`]), as a URI reference:
    /// `/` between segments, percent-encoded ([`uri_path`]).
    pub lockfile_uri: &'a str,
    /// The lines of the lockfile's entries ([`LockLines::index`]).
    pub lines: &'a LockLines,
    /// The absolute URL of the policies page (`docs/policies.md`): each rule's `helpUri` is it,
    /// `#` and the rule id.
    pub help_base: &'a str,
}

/// The line of each server entry and each approved item in a lockfile, for the physical
/// locations of the SARIF report.
///
/// A server is found at the line of its `id`, an item at the line of its `name`: the line a
/// reviewer looks for, and the one that holds the name the finding reports.
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct LockLines {
    servers: std::collections::BTreeMap<String, usize>,
    items: std::collections::BTreeMap<(String, String), usize>,
}

impl LockLines {
    /// Indexes the lockfile `bytes` as read from disk. Bytes that do not read as JSON, or entries
    /// without an `id` or `name`, are left out: their findings point at line 1.
    #[must_use]
    pub fn index(bytes: &[u8]) -> Self {
        let mut lines = Self::default();
        let Ok(value) = crate::parse(bytes) else {
            return lines;
        };
        let newlines: Vec<usize> = bytes
            .iter()
            .enumerate()
            .filter_map(|(i, &b)| (b == b'\n').then_some(i))
            .collect();
        // Lines as `Position::locate` counts them (only LF ends one), by binary search.
        let line = |v: &Value| newlines.partition_point(|&nl| nl < v.span().start) + 1;
        // A string member of `o` and the line its value starts on.
        let member = |o: &Value, name: &str| {
            o.get(name)
                .and_then(|v| Some((v.as_str()?.to_owned(), line(v))))
        };
        let servers = value
            .get("servers")
            .and_then(Value::as_array)
            .unwrap_or(&[]);
        for entry in servers {
            let Some((server, at)) = member(entry, "id") else {
                continue;
            };
            lines.servers.entry(server.clone()).or_insert(at);
            for kind in crate::surface::ItemKind::ALL {
                let items = entry
                    .get(kind.list_member())
                    .and_then(Value::as_array)
                    .unwrap_or(&[]);
                for (name, at) in items.iter().filter_map(|item| member(item, "name")) {
                    lines.items.entry((server.clone(), name)).or_insert(at);
                }
            }
        }
        lines
    }

    /// The line of `item` of `server`, or of the server's entry when the lockfile does not
    /// approve the item (an added one), or 1 when it has no such server.
    #[must_use]
    pub fn line(&self, server: &str, item: Option<&str>) -> usize {
        item.and_then(|i| self.items.get(&(server.to_owned(), i.to_owned())))
            .or_else(|| self.servers.get(server))
            .copied()
            .unwrap_or(1)
    }
}

/// `path` (relative, segments split on `/`) as a URI reference: every byte outside the
/// unreserved set of RFC 3986 section 2.3 percent-encoded, `/` kept between segments.
#[must_use]
pub fn uri_path(path: &[u8]) -> String {
    let mut out = String::new();
    for &b in path {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The report as a SARIF 2.1.0 log for GitHub code scanning: one rule per policy (and one for
/// what could not be compared), each linking its section of the policies page; level `error`
/// for gated findings and `warning` for reported ones; every result located in the lockfile
/// (the line of the approved item, or of the server's entry for an added one) and by the
/// logical location `server/tool`, with a fingerprint that does not depend on lines or time.
/// Every server string is escaped as in [`to_text`]. A run that could not compare everything
/// (exit 3) is marked `executionSuccessful: false` with the reason as a notification. The
/// signature status, when the report has one, is in `runs[0].properties.signature`, as in
/// the JSON report.
#[must_use]
pub fn to_sarif(report: &Report, context: &SarifContext<'_>) -> Value {
    let mut results = Vec::new();
    for f in &report.findings {
        let index = Policy::ALL
            .iter()
            .position(|p| *p == f.policy())
            .unwrap_or(0);
        let mut text = String::new();
        finding_text(f, &mut text);
        let other = match &f.evidence {
            Evidence::NameCollision { other, .. } => Some(other),
            _ => None,
        };
        let identity = [
            Some(f.policy().name()),
            Some(f.server.as_str()),
            f.item.as_deref(),
            f.pointer(),
            other.map(|(s, _)| s.as_str()),
            other.map(|(_, i)| i.as_str()),
        ];
        results.push(sarif_result(
            context,
            (f.policy().name(), index),
            if f.gated { "error" } else { "warning" },
            text.trim_end(),
            (&f.server, f.item.as_deref()),
            &identity,
        ));
    }
    for u in &report.unverified {
        let text = format!(
            "not compared: {}: {}",
            place(&u.server, u.item.as_deref()),
            reason_text(&u.reason)
        );
        let identity = [
            Some(NOT_COMPARED),
            Some(u.server.as_str()),
            u.item.as_deref(),
            Some(u.reason.name()),
        ];
        results.push(sarif_result(
            context,
            (NOT_COMPARED, Policy::ALL.len()),
            "error",
            &text,
            (&u.server, u.item.as_deref()),
            &identity,
        ));
    }
    let failure = (report.exit_code() == 3).then(|| {
        format!(
            "{} approved item(s) or server(s) could not be compared and could hide a \
             departure (rule {NOT_COMPARED})",
            report.unverified.len()
        )
    });
    let mut run = sarif_run(
        context,
        &report.gating,
        report.exit_code(),
        failure.as_deref(),
    );
    run.insert("results", Value::from(results));
    let mut props = Object::new();
    props.insert("status", report.status().name());
    if let Some(signature) = &report.signature {
        props.insert("signature", signature_json(signature, true));
    }
    run.insert("properties", props);
    sarif_log(run)
}

/// The SARIF log of a run that produced no report: an input could not be read (exit 4) or the
/// command was refused (exit 2). It holds the rules, no results, and `reason` (escaped, cut to
/// [`MAX_REASON`] characters) as the notification of a run whose execution did not succeed,
/// so code scanning shows why instead of a missing upload.
#[must_use]
pub fn sarif_failure(context: &SarifContext<'_>, exit_code: u8, reason: &str) -> Value {
    let gating: Vec<Policy> = Policy::ALL
        .into_iter()
        .filter(|p| p.gated_by_default())
        .collect();
    let mut run = sarif_run(context, &gating, exit_code, Some(reason));
    run.insert("results", Value::from(Vec::<Value>::new()));
    sarif_log(run)
}

fn sarif_log(run: Object) -> Value {
    let mut log = Object::new();
    log.insert("$schema", "https://json.schemastore.org/sarif-2.1.0.json");
    log.insert("version", "2.1.0");
    log.insert("runs", Value::from(vec![Value::from(run)]));
    Value::from(log)
}

/// The run without results: the tool with its rules (level `error` for the `gating` policies)
/// and the invocation, which failed when `failure` gives a reason.
fn sarif_run(
    context: &SarifContext<'_>,
    gating: &[Policy],
    exit_code: u8,
    failure: Option<&str>,
) -> Object {
    let mut rules = Vec::new();
    for policy in Policy::ALL {
        rules.push(sarif_rule(
            context,
            policy.name(),
            policy.summary(),
            if gating.contains(&policy) {
                "error"
            } else {
                "warning"
            },
        ));
    }
    rules.push(sarif_rule(
        context,
        NOT_COMPARED,
        "An approved item or server could not be compared and could hide a departure.",
        "error",
    ));
    let mut driver = Object::new();
    driver.insert("name", "mcppin");
    driver.insert("version", context.tool_version);
    driver.insert("semanticVersion", context.tool_version);
    driver.insert("informationUri", context.help_base);
    driver.insert("rules", Value::from(rules));
    let mut tool = Object::new();
    tool.insert("driver", driver);
    let mut invocation = Object::new();
    invocation.insert("executionSuccessful", failure.is_none());
    invocation.insert("exitCode", u64::from(exit_code));
    if let Some(reason) = failure {
        let mut notification = Object::new();
        notification.insert("level", "error");
        notification.insert("message", message(&bounded(reason)));
        invocation.insert(
            "toolExecutionNotifications",
            Value::from(vec![Value::from(notification)]),
        );
    }
    let mut run = Object::new();
    run.insert("tool", tool);
    run.insert("invocations", Value::from(vec![Value::from(invocation)]));
    run
}

/// `text` escaped to printable ASCII and cut to [`MAX_REASON`] characters.
fn bounded(text: &str) -> String {
    let escaped = escape(text);
    if escaped.len() <= MAX_REASON {
        return escaped.into_owned();
    }
    // Escaped text is ASCII: every byte is a character boundary.
    format!("{}... (cut)", &escaped[..MAX_REASON])
}

fn message(text: &str) -> Object {
    let mut m = Object::new();
    m.insert("text", text);
    m
}

fn sarif_rule(context: &SarifContext<'_>, id: &str, summary: &str, level: &str) -> Value {
    let mut rule = Object::new();
    rule.insert("id", id);
    rule.insert(
        "name",
        id.split('-')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect::<String>(),
    );
    rule.insert("shortDescription", message(summary));
    rule.insert("fullDescription", message(summary));
    rule.insert("helpUri", format!("{}#{id}", context.help_base));
    rule.insert("help", message(summary));
    let mut config = Object::new();
    config.insert("level", level);
    rule.insert("defaultConfiguration", config);
    Value::from(rule)
}

/// A fingerprint of what a result is about (rule, server, item, pointer, ...), never of
/// where it is or when: the same finding keeps it across runs and edits of the lockfile.
fn fingerprint(identity: &[Option<&str>]) -> String {
    let parts: Vec<Value> = identity
        .iter()
        .map(|p| p.map_or_else(Value::null, Value::from))
        .collect();
    Digest::of_bytes(&crate::canonicalize_exact(&Value::from(parts))).to_string()
}

fn sarif_result(
    context: &SarifContext<'_>,
    (rule, index): (&str, usize),
    level: &str,
    text: &str,
    (server, item): (&str, Option<&str>),
    identity: &[Option<&str>],
) -> Value {
    let mut logical = Object::new();
    logical.insert("fullyQualifiedName", place(server, item));
    logical.insert("name", escape(item.unwrap_or(server)).into_owned());
    logical.insert("kind", if item.is_some() { "function" } else { "module" });
    let mut artifact = Object::new();
    artifact.insert("uri", context.lockfile_uri);
    artifact.insert("uriBaseId", SRCROOT);
    let mut region = Object::new();
    region.insert("startLine", context.lines.line(server, item) as u64);
    let mut physical = Object::new();
    physical.insert("artifactLocation", artifact);
    physical.insert("region", region);
    let mut location = Object::new();
    location.insert("physicalLocation", physical);
    location.insert("logicalLocations", Value::from(vec![Value::from(logical)]));
    let mut fingerprints = Object::new();
    fingerprints.insert(FINGERPRINT, fingerprint(identity));
    let mut result = Object::new();
    result.insert("ruleId", rule);
    result.insert("ruleIndex", index as u64);
    result.insert("level", level);
    result.insert("message", message(&format!("{text}.")));
    result.insert("locations", Value::from(vec![Value::from(location)]));
    result.insert("partialFingerprints", fingerprints);
    Value::from(result)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::lockfile::Lockfile;
    use crate::manifest::Manifest;
    use crate::policy::{FailOn, Options, verify};

    fn report(approved: &str, served: &str) -> Report {
        let a = Manifest::parse(approved.as_bytes()).unwrap();
        let s = Manifest::parse(served.as_bytes()).unwrap();
        verify(
            &Lockfile::approve(None, &a, &[]).unwrap(),
            &s,
            &Options::new(BTreeSet::new(), FailOn::Default),
        )
    }

    const HOSTILE: &str = r#"{"schema_version":2,"complete":true,"servers":[
        {"id":"ev\u001b[2Kil\u202e","tools":[{"name":"t\u200bool","description":"x\u001b[2K\u202e\u200by"}]}]}"#;

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
                "\n2 findings reported, none gating (--fail-on none); 0 approved items matched\n"
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

    #[test]
    fn json_round_trips_and_keeps_values_exact() {
        let changed = HOSTILE.replace("x\\u001b", "z\\u001b").replace(
            r#""description""#,
            r#""default":9007199254740993.0,"description""#,
        );
        let r = report(HOSTILE, &changed);
        assert_eq!(r.exit_code(), 1);
        let json = to_json(&r);
        let bytes = crate::to_pretty(&json);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.contains("9007199254740993.0"), "{text}");
        let back = from_json(&crate::parse(&bytes).unwrap()).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn json_refuses_a_summary_the_findings_do_not_give() {
        let r = report(HOSTILE, HOSTILE);
        let text = String::from_utf8(crate::to_pretty(&to_json(&r))).unwrap();
        let forged = text.replacen("\"findings\": 2", "\"findings\": 0", 1);
        assert_ne!(forged, text);
        assert!(matches!(
            from_json(&crate::parse(forged.as_bytes()).unwrap()),
            Err(Error::Invalid { pointer, .. }) if pointer == "/summary"
        ));
    }

    fn signer() -> Signer {
        Signer {
            key: Digest::of_bytes(b"key"),
            signed_at: "2026-08-01T09:20:00Z".to_owned(),
        }
    }

    fn statuses() -> [SignatureStatus; 4] {
        [
            SignatureStatus::Unsigned { approval_serial: 1 },
            SignatureStatus::Unchecked {
                approval_serial: 2,
                claim: None,
            },
            SignatureStatus::Unchecked {
                approval_serial: 3,
                claim: Some(signer()),
            },
            SignatureStatus::Verified {
                approval_serial: 7,
                signer: signer(),
                age_seconds: 86_400,
            },
        ]
    }

    #[test]
    fn json_states_the_signature_and_reads_it_back() {
        let mut r = report(TWO, TWO);
        for status in statuses() {
            r.signature = Some(status.clone());
            let json = to_json(&r);
            let sig = json.get("signature").unwrap();
            assert_eq!(str_at(sig, "/status"), status.name());
            let verified = matches!(status, SignatureStatus::Verified { .. });
            assert_eq!(sig.get("checked"), Some(&Value::from(verified)));
            assert_eq!(
                line_at(sig, "/approval_serial") as u64,
                status.approval_serial()
            );
            if verified {
                assert_eq!(str_at(sig, "/key"), Digest::of_bytes(b"key").to_string());
                assert_eq!(str_at(sig, "/signed_at"), "2026-08-01T09:20:00Z");
                assert_eq!(line_at(sig, "/age_seconds"), 86_400);
            } else {
                assert!(sig.get("age_seconds").unwrap().is_null(), "{sig}");
            }
            let bytes = crate::to_pretty(&json);
            assert_eq!(from_json(&crate::parse(&bytes).unwrap()).unwrap(), r);
            let sarif = sarif(&r, b"");
            assert_eq!(
                sarif.pointer("/runs/0/properties/signature"),
                Some(sig),
                "{sarif}"
            );
        }
        r.signature = None;
        assert!(to_json(&r).get("signature").is_none());
        assert!(
            sarif(&r, b"")
                .pointer("/runs/0/properties/signature")
                .is_none()
        );
    }

    #[test]
    fn json_refuses_a_signature_that_contradicts_itself() {
        let mut r = report(TWO, TWO);
        r.signature = statuses().into_iter().last();
        let text = String::from_utf8(crate::to_pretty(&to_json(&r))).unwrap();
        for (from, to) in [
            ("\"checked\": true", "\"checked\": false"),
            ("\"age_seconds\": 86400", "\"age_seconds\": null"),
            ("\"status\": \"verified\"", "\"status\": \"unsigned\""),
            (
                "\"signed_at\": \"2026-08-01T09:20:00Z\"",
                "\"signed_at\": null",
            ),
        ] {
            let forged = text.replacen(from, to, 1);
            assert_ne!(forged, text, "{from}");
            assert!(
                matches!(
                    from_json(&crate::parse(forged.as_bytes()).unwrap()),
                    Err(Error::Invalid { pointer, .. }) if pointer.starts_with("/signature/")
                ),
                "{from}"
            );
        }
    }

    #[test]
    fn json_refuses_evidence_of_another_policy_or_none_at_all() {
        let changed = HOSTILE.replace("x\\u001b", "z\\u001b");
        let r = report(HOSTILE, &changed);
        assert_eq!(
            r.findings.iter().map(Finding::policy).collect::<Vec<_>>(),
            [
                Policy::ToolChanged,
                Policy::HiddenCharacters,
                Policy::HiddenCharacters,
                Policy::InvalidToolName
            ]
        );
        let text = String::from_utf8(crate::to_pretty(&to_json(&r))).unwrap();
        assert_eq!(
            from_json(&crate::parse(text.as_bytes()).unwrap()).unwrap(),
            r
        );
        let without = |name: &str| {
            let at = text.find(&format!("\"{name}\"")).unwrap();
            let start = text[..at].rfind('\n').unwrap();
            let end = at + text[at..].find('\n').unwrap();
            format!("{}{}", &text[..start], &text[end..])
        };
        let forgeries = [
            // tool-changed carrying a member of hidden-characters' evidence.
            (
                text.replacen("\"changes\": [", "\"in_name\": true, \"changes\": [", 1),
                "unknown-member",
            ),
            // hidden-characters carrying tool-changed's.
            (
                text.replacen("\"code_points\"", "\"changes\"", 1),
                "unknown-member",
            ),
            // evidence missing.
            (without("served_digest"), "missing-member"),
            (without("in_name"), "missing-member"),
            // the pointer of hidden-characters on another policy.
            (
                text.replacen("\"pointer\": null", "\"pointer\": \"/description\"", 1),
                "invalid",
            ),
        ];
        for (forged, rule) in forgeries {
            assert_ne!(forged, text);
            match from_json(&crate::parse(forged.as_bytes()).unwrap()) {
                Err(e) => assert_eq!(e.rule(), rule, "{e}\n{forged}"),
                Ok(_) => panic!("read back:\n{forged}"),
            }
        }
    }

    #[test]
    fn json_refuses_a_status_the_findings_do_not_give() {
        let r = report(HOSTILE, HOSTILE);
        let text = String::from_utf8(crate::to_pretty(&to_json(&r))).unwrap();
        for (from, to, at) in [
            ("\"status\": \"PASS\"", "\"status\": \"FAIL\"", "/status"),
            ("\"status\": \"PASS\"", "\"status\": \"PARTIAL\"", "/status"),
            ("\"exit_code\": 0", "\"exit_code\": 1", "/exit_code"),
        ] {
            let forged = text.replacen(from, to, 1);
            assert_ne!(forged, text, "{from}");
            assert!(
                matches!(
                    from_json(&crate::parse(forged.as_bytes()).unwrap()),
                    Err(Error::Invalid { ref pointer, .. }) if pointer == at
                ),
                "{to}"
            );
        }
    }

    #[test]
    fn json_reads_back_every_status_the_findings_give() {
        let plain =
            r#"{"schema_version":2,"complete":true,"servers":[{"id":"s","tools":[{"name":"t"}]}]}"#;
        let changed = plain.replace("\"t\"}", "\"t\",\"description\":\"new\"}");
        let unseen = plain
            .replace("true", "false")
            .replace(r#"{"name":"t"}"#, "");
        for (served, status) in [
            (plain.to_owned(), Status::Pass),
            (changed, Status::Fail),
            (unseen, Status::Partial),
        ] {
            let r = report(plain, &served);
            assert_eq!(r.status(), status);
            let back = from_json(&to_json(&r)).unwrap();
            assert_eq!(back.status(), status);
            assert_eq!(back.exit_code(), status.exit_code());
        }
    }

    const HELP: &str = "https://docs.example/mcppin/docs/policies.md";

    /// The SARIF report of `r`, located in the lockfile `lock` (its bytes).
    fn sarif(r: &Report, lock: &[u8]) -> Value {
        let lines = LockLines::index(lock);
        to_sarif(
            r,
            &SarifContext {
                tool_version: "0.1.0",
                lockfile_uri: "config/mcp.lock.json",
                lines: &lines,
                help_base: HELP,
            },
        )
    }

    fn results(sarif: &Value) -> &[Value] {
        sarif
            .pointer("/runs/0/results")
            .and_then(Value::as_array)
            .unwrap()
    }

    fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
        v.pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{pointer} in {v}"))
    }

    fn line_at(v: &Value, pointer: &str) -> usize {
        let n = v.pointer(pointer).and_then(Value::as_number).unwrap();
        n.literal().parse().unwrap()
    }

    #[test]
    fn sarif_levels_follow_the_gate() {
        let parcel = HOSTILE.replace(r#"]}]}"#, r#"]},{"id":"p","tools":[{"name":"new"}]}]}"#);
        let r = report(HOSTILE, &parcel);
        let sarif = sarif(&r, b"");
        let levels: Vec<_> = results(&sarif)
            .iter()
            .map(|r| (str_at(r, "/ruleId"), str_at(r, "/level")))
            .collect();
        assert!(levels.contains(&("tool-added", "error")), "{levels:?}");
        assert!(
            levels.contains(&("hidden-characters", "warning")),
            "{levels:?}"
        );
        assert!(sarif.to_string().is_ascii());
    }

    const TWO: &str = r#"{"schema_version":2,"complete":true,"servers":[
        {"id":"docs","tools":[{"name":"search","description":"Find"},{"name":"fetch"}]},
        {"id":"mail","tools":[{"name":"send"}]}]}"#;

    #[test]
    fn sarif_locates_each_result_at_its_item_or_server_in_the_lockfile() {
        let approved = Manifest::parse(TWO.as_bytes()).unwrap();
        let lock = Lockfile::approve(None, &approved, &[]).unwrap().to_bytes();
        let text = String::from_utf8(lock.clone()).unwrap();
        let served = TWO.replace(r#""Find""#, r#""Find all""#).replace(
            r#"{"name":"send"}"#,
            r#"{"name":"send"},{"name":"forward"}"#,
        );
        let r = report(TWO, &served);
        let sarif = sarif(&r, &lock);
        let found = results(&sarif);
        assert_eq!(found.len(), 2, "{sarif}");
        for (result, rule, holds) in [
            (&found[0], "tool-changed", r#""name": "search""#),
            (&found[1], "tool-added", r#""id": "mail""#),
        ] {
            assert_eq!(str_at(result, "/ruleId"), rule);
            let at = "/locations/0/physicalLocation";
            assert_eq!(
                str_at(result, &format!("{at}/artifactLocation/uri")),
                "config/mcp.lock.json"
            );
            assert_eq!(
                str_at(result, &format!("{at}/artifactLocation/uriBaseId")),
                SRCROOT
            );
            let line = line_at(result, &format!("{at}/region/startLine"));
            let held = text.lines().nth(line - 1).unwrap();
            assert!(held.contains(holds), "{rule}: line {line} is {held:?}");
        }
        assert_eq!(
            str_at(&sarif, "/runs/0/tool/driver/rules/0/helpUri"),
            format!("{HELP}#tool-changed")
        );
        assert_eq!(
            sarif.pointer("/runs/0/invocations/0/executionSuccessful"),
            Some(&Value::from(true))
        );
    }

    #[test]
    fn lock_lines_fall_back_to_the_server_then_to_line_one() {
        let lock = b"{\"servers\": [\n {\"id\": \"a\",\n  \"tools\": [\n   {\"name\": \"t\"}]}],\n \"x\": 1}";
        let lines = LockLines::index(lock);
        assert_eq!(lines.line("a", Some("t")), 4);
        assert_eq!(lines.line("a", Some("new")), 2);
        assert_eq!(lines.line("a", None), 2);
        assert_eq!(lines.line("b", Some("t")), 1);
        assert_eq!(LockLines::index(b"{not json").line("a", Some("t")), 1);
    }

    #[test]
    fn sarif_fingerprints_name_the_finding_not_its_line() {
        let approved = Manifest::parse(TWO.as_bytes()).unwrap();
        let lock = Lockfile::approve(None, &approved, &[]).unwrap().to_bytes();
        let served = TWO.replace(r#""Find""#, r#""Find all""#);
        let r = report(TWO, &served);
        let print = |sarif: &Value| {
            str_at(
                &results(sarif)[0],
                &format!("/partialFingerprints/{}", FINGERPRINT.replace('/', "~1")),
            )
            .to_owned()
        };
        let once = print(&sarif(&r, &lock));
        let mut shifted = b"\n\n\n".to_vec();
        shifted.extend_from_slice(&lock);
        let moved = sarif(&r, &shifted);
        assert_ne!(
            line_at(
                &results(&moved)[0],
                "/locations/0/physicalLocation/region/startLine"
            ),
            line_at(
                &results(&sarif(&r, &lock))[0],
                "/locations/0/physicalLocation/region/startLine"
            )
        );
        assert_eq!(print(&moved), once);
        let other = report(
            TWO,
            &TWO.replace(r#"{"name":"fetch"}"#, r#"{"name":"fetch","x":1}"#),
        );
        assert_ne!(print(&sarif(&other, &lock)), once);
    }

    #[test]
    fn sarif_marks_a_partial_run_as_not_successful() {
        let unseen = TWO
            .replace(r#""complete":true"#, r#""complete":false"#)
            .replace(r#",{"name":"fetch"}"#, "");
        let r = report(TWO, &unseen);
        assert_eq!(r.exit_code(), 3);
        let sarif = sarif(&r, b"");
        let invocation = sarif.pointer("/runs/0/invocations/0").unwrap();
        assert_eq!(
            invocation.get("executionSuccessful"),
            Some(&Value::from(false))
        );
        assert!(
            str_at(invocation, "/toolExecutionNotifications/0/message/text")
                .starts_with("1 approved item(s) or server(s) could not be compared"),
            "{invocation}"
        );
        assert_eq!(str_at(&results(&sarif)[0], "/ruleId"), NOT_COMPARED);
    }

    #[test]
    fn sarif_failure_carries_the_reason_escaped_and_bounded() {
        let lines = LockLines::default();
        let context = SarifContext {
            tool_version: "0.1.0",
            lockfile_uri: "mcp.lock.json",
            lines: &lines,
            help_base: HELP,
        };
        let long = format!("bad \u{1b}[2K\u{202e} {}", "x".repeat(5000));
        let log = sarif_failure(&context, 4, &long);
        let invocation = log.pointer("/runs/0/invocations/0").unwrap();
        assert_eq!(
            invocation.get("executionSuccessful"),
            Some(&Value::from(false))
        );
        assert_eq!(line_at(invocation, "/exitCode"), 4);
        let text = str_at(invocation, "/toolExecutionNotifications/0/message/text");
        assert!(text.starts_with("bad <U+001B>[2K<U+202E> xxx"), "{text}");
        assert!(
            text.ends_with("... (cut)") && text.len() < MAX_REASON + 20,
            "{text}"
        );
        assert_eq!(results(&log).len(), 0);
    }

    #[test]
    fn uri_path_percent_encodes_outside_the_unreserved_set() {
        assert_eq!(uri_path(b"ci/mcp.lock.json"), "ci/mcp.lock.json");
        assert_eq!(
            uri_path("my locks/\u{e9}#1?.json".as_bytes()),
            "my%20locks/%C3%A9%231%3F.json"
        );
    }
}

//! Projection pins: what an approved item looks like after a gateway has read it into its own
//! typed model and written it out again.
//!
//! A gateway that parses each answer into typed items (agentgateway, on the `rmcp` SDK) never
//! passes the server's bytes on: members its model does not know are dropped, numbers and
//! member order are rewritten, and with several targets names and URIs gain the target as a
//! prefix. A policy processor behind such a gateway sees, and the client is shown, only that
//! projection, so a digest over the served bytes cannot match it. What can match is the
//! approval put through the same projection: [`Projection::server`] derives, from a
//! lockfile entry's approved objects, the entry a projected answer is admitted against
//! (each item projected, renamed as the gateway renames it, and pinned by its RFC 8785
//! digest). The lockfile does not change, and its raw digests stay what `mcppin verify` and
//! the other guards compare.
//!
//! A projection is a table of the members the gateway's model keeps, per kind of item and
//! per typed member below it (a tool's `annotations`, a prompt's `arguments`, each entry of
//! `icons`); a free-form member (`inputSchema`, `outputSchema`, `_meta`) is kept whole.
//! [`Projection::RMCP_3_1`] is the one of `rmcp` 3.1: agentgateway's main branch pins rmcp
//! 3.1.2, and v1.4.1's rmcp 3.0.0-beta.5 has the same item model. v1.4.0 builds on rmcp
//! 2.0.0, whose tool keeps `execution`: behind it, this projection's foreign-member check
//! refuses every tool that declares one.
//!
//! A served item carrying a member the projection drops means the gateway projects
//! differently (a newer model that keeps, say, a tool's `execution`): comparing its digest
//! with the projected pin would only say "changed". [`Projection::foreign`] finds that
//! member first, and its [`Foreign`] note names the flag that selects another projection.
//!
//! ```
//! use mcppin_core::lockfile::{LockedItem, LockedServer};
//! use mcppin_core::parse;
//! use mcppin_core::projection::{PrefixMode, Projection, Renaming};
//!
//! let mut approved = LockedServer::default();
//! let tool = parse(br#"{"name":"echo","inputSchema":{"type":"object"},
//!     "execution":{"taskSupport":"forbidden"}}"#)?;
//! approved.tools.insert("echo".into(), LockedItem::approve(tool));
//!
//! // Two targets behind the gateway: this one's names gain the prefix `everything_`.
//! let renaming = Renaming::new(PrefixMode::Conditional, 2, "everything");
//! let projected = Projection::RMCP_3_1.server(&approved, &renaming).expect("projectable");
//! let served = parse(br#"{"name":"everything_echo","inputSchema":{"type":"object"}}"#)?;
//! let pin = projected.tools["everything_echo"].pin();
//! assert_eq!(pin.digest(), Some(mcppin_core::digest(&served)?));
//!
//! // A gateway that kept `execution` projects differently: named, never compared.
//! let kept = parse(br#"{"name":"everything_echo","inputSchema":{"type":"object"},
//!     "execution":{"taskSupport":"forbidden"}}"#)?;
//! let foreign = Projection::RMCP_3_1.foreign(mcppin_core::surface::ItemKind::Tool, &kept);
//! assert!(foreign.expect("foreign").to_string().contains("--projection"));
//! # Ok::<(), mcppin_core::Error>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;

use crate::admission::shown;
use crate::lockfile::{LockedItem, LockedServer};
use crate::number::Number;
use crate::surface::ItemKind;
use crate::value::{Kind, Member, Object, Value, escape_pointer_token};

/// What a projection keeps of a member it knows.
#[derive(Debug, PartialEq, Eq)]
enum Keep {
    /// The value as it is (a string, a boolean, a free-form object such as `inputSchema`).
    Whole,
    /// An object of which only these members are kept.
    Members(&'static [(&'static str, Keep)]),
    /// An array of objects, of each of which only these members are kept.
    Each(&'static [(&'static str, Keep)]),
    /// A number held as a 32-bit float: rounded to the nearest `f32`, written in the shortest
    /// form that reads back as it.
    Float32,
}

/// `Icon`: the entries of `icons` (tools, prompts, resource templates).
const ICON: &[(&str, Keep)] = &[
    ("mimeType", Keep::Whole),
    ("sizes", Keep::Whole),
    ("src", Keep::Whole),
    ("theme", Keep::Whole),
];

/// `ToolAnnotations`.
const TOOL_ANNOTATIONS: &[(&str, Keep)] = &[
    ("destructiveHint", Keep::Whole),
    ("idempotentHint", Keep::Whole),
    ("openWorldHint", Keep::Whole),
    ("readOnlyHint", Keep::Whole),
    ("title", Keep::Whole),
];

/// `Tool`.
const TOOL: &[(&str, Keep)] = &[
    ("_meta", Keep::Whole),
    ("annotations", Keep::Members(TOOL_ANNOTATIONS)),
    ("description", Keep::Whole),
    ("icons", Keep::Each(ICON)),
    ("inputSchema", Keep::Whole),
    ("name", Keep::Whole),
    ("outputSchema", Keep::Whole),
    ("title", Keep::Whole),
];

/// `PromptArgument`.
const PROMPT_ARGUMENT: &[(&str, Keep)] = &[
    ("description", Keep::Whole),
    ("name", Keep::Whole),
    ("required", Keep::Whole),
    ("title", Keep::Whole),
];

/// `Prompt`.
const PROMPT: &[(&str, Keep)] = &[
    ("_meta", Keep::Whole),
    ("arguments", Keep::Each(PROMPT_ARGUMENT)),
    ("description", Keep::Whole),
    ("icons", Keep::Each(ICON)),
    ("name", Keep::Whole),
    ("title", Keep::Whole),
];

/// `Annotations` of a resource template (`priority` is an `f32` there).
const ANNOTATIONS: &[(&str, Keep)] = &[
    ("audience", Keep::Whole),
    ("lastModified", Keep::Whole),
    ("priority", Keep::Float32),
];

/// `ResourceTemplate`.
const RESOURCE_TEMPLATE: &[(&str, Keep)] = &[
    ("_meta", Keep::Whole),
    ("annotations", Keep::Members(ANNOTATIONS)),
    ("description", Keep::Whole),
    ("icons", Keep::Each(ICON)),
    ("mimeType", Keep::Whole),
    ("name", Keep::Whole),
    ("title", Keep::Whole),
    ("uriTemplate", Keep::Whole),
];

/// A gateway's typed model of served items: which members it keeps, by kind.
///
/// In a member the model knows, `null` counts as absent (an optional member read as `null`
/// is written out as no member at all); an empty object it knows stays (`"annotations": {}`
/// when none of its members was kept).
///
/// An `engine::Session` whose `Config::projection` names one admits against an
/// `ApprovedServer::projected` entry, and refuses a list answer holding an item with a member
/// the projection drops.
#[derive(Debug, PartialEq, Eq)]
pub struct Projection {
    name: &'static str,
    tool: &'static [(&'static str, Keep)],
    prompt: &'static [(&'static str, Keep)],
    resource_template: &'static [(&'static str, Keep)],
}

impl Projection {
    /// `rmcp-3.1`: the model of the `rmcp` SDK 3.1 (agentgateway's main branch pins 3.1.2), whose
    /// items hold exactly these members:
    ///
    /// - tool: `name`, `title`, `description`, `inputSchema`, `outputSchema`, `annotations`
    ///   (`title`, `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`),
    ///   `icons`, `_meta`;
    /// - prompt: `name`, `title`, `description`, `arguments` (`name`, `title`,
    ///   `description`, `required`), `icons`, `_meta`;
    /// - resource template: `uriTemplate`, `name`, `title`, `description`, `mimeType`,
    ///   `icons`, `_meta`, `annotations` (`audience`, `priority` as a 32-bit float,
    ///   `lastModified`);
    /// - an icon: `src`, `mimeType`, `sizes`, `theme`.
    ///
    /// `inputSchema`, `outputSchema` and `_meta` are kept whole. A tool's `execution` is not
    /// kept: a tool that declares it is shown without it.
    pub const RMCP_3_1: Self = Self {
        name: "rmcp-3.1",
        tool: TOOL,
        prompt: PROMPT,
        resource_template: RESOURCE_TEMPLATE,
    };

    /// Every projection, by name.
    pub const ALL: [&'static Self; 1] = [&Self::RMCP_3_1];

    /// The projection called `name` (`rmcp-3.1`), if there is one.
    #[must_use]
    pub fn named(name: &str) -> Option<&'static Self> {
        Self::ALL.into_iter().find(|p| p.name == name)
    }

    /// The projection's name, as flags and log events write it.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The first item of a list answer's `result` (`tools/list`, `prompts/list`,
    /// `resources/templates/list`) holding a member this projection drops; `None` for another
    /// method, and for a list whose items hold only members the projection keeps.
    #[must_use]
    pub fn foreign_in_list(&self, method: &str, result: &Value) -> Option<Foreign> {
        let (kind, member) = match method {
            "tools/list" => (ItemKind::Tool, "tools"),
            "prompts/list" => (ItemKind::Prompt, "prompts"),
            "resources/templates/list" => (ItemKind::ResourceTemplate, "resourceTemplates"),
            _ => return None,
        };
        result
            .get(member)?
            .as_array()?
            .iter()
            .find_map(|item| self.foreign(kind, item))
    }

    fn table(&self, kind: ItemKind) -> &'static [(&'static str, Keep)] {
        match kind {
            ItemKind::Tool => self.tool,
            ItemKind::Prompt => self.prompt,
            ItemKind::ResourceTemplate => self.resource_template,
        }
    }

    /// An approved item of `kind` as the gateway shows it: the members the model keeps,
    /// renamed by `renaming`. A value of another shape than the model's (an `annotations`
    /// that is no object) is left as it is: the gateway cannot read it, so never shows it.
    #[must_use]
    pub fn project(&self, kind: ItemKind, approved: &Value, renaming: &Renaming) -> Value {
        let mut projected = keep_members(approved, self.table(kind));
        renaming.apply(kind, &mut projected);
        projected
    }

    /// The first member of a served item (in canonical order, depth first) that this
    /// projection does not keep, as a note; `None` when the item holds only members the
    /// projection keeps. Free-form members (`inputSchema`, `_meta`) are not looked into.
    #[must_use]
    pub fn foreign(&self, kind: ItemKind, served: &Value) -> Option<Foreign> {
        let pointer = first_foreign(served, self.table(kind))?;
        let name = served
            .as_object()
            .and_then(|o| o.get(kind.key_member()))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Some(Foreign {
            projection: self.name,
            kind,
            name,
            pointer,
        })
    }

    /// The entry a projected answer is admitted against: every approved item of `approved`
    /// projected ([`Projection::project`]), keyed by its renamed key and pinned by its
    /// digest; everything else of the entry (instructions, reported name, what is not
    /// served) as it is.
    ///
    /// # Errors
    ///
    /// [`Unprojectable::DigestOnly`] for an item stored as a digest alone (a version 1
    /// lockfile: nothing to project), [`Unprojectable::Collision`] when two items have the
    /// same key once renamed.
    pub fn server(
        &self,
        approved: &LockedServer,
        renaming: &Renaming,
    ) -> Result<LockedServer, Unprojectable> {
        let mut projected = approved.clone();
        for kind in ItemKind::ALL {
            let mut items = BTreeMap::new();
            for (key, item) in approved.items(kind) {
                let object = item.approved().ok_or_else(|| Unprojectable::DigestOnly {
                    kind,
                    name: key.clone(),
                })?;
                let value = self.project(kind, object, renaming);
                let renamed = value
                    .as_object()
                    .and_then(|o| o.get(kind.key_member()))
                    .and_then(Value::as_str)
                    .map_or_else(|| key.clone(), str::to_owned);
                if items.contains_key(&renamed) {
                    return Err(Unprojectable::Collision {
                        kind,
                        name: renamed,
                    });
                }
                items.insert(renamed, LockedItem::approve(value));
            }
            *projected.items_mut(kind) = items;
        }
        Ok(projected)
    }
}

/// `value` with only the members of `table` that are not `null`, each kept as the table
/// says; `value` itself when it is no object.
fn keep_members(value: &Value, table: &[(&str, Keep)]) -> Value {
    let Some(object) = value.as_object() else {
        return value.clone();
    };
    let members: Vec<Member> = object
        .members()
        .iter()
        .filter(|m| !m.value.is_null())
        .filter_map(|m| {
            let keep = lookup(table, &m.name)?;
            Some(Member::with_span(
                m.name.clone(),
                m.name_span(),
                apply(&m.value, keep),
            ))
        })
        .collect();
    // The members stay in the order they were in: a subset of a sorted list is sorted.
    Value::new(Kind::Object(Object::from_sorted(
        members.into_boxed_slice(),
    )))
}

fn lookup<'t>(table: &'t [(&str, Keep)], name: &str) -> Option<&'t Keep> {
    table.iter().find(|(n, _)| *n == name).map(|(_, keep)| keep)
}

fn apply(value: &Value, keep: &Keep) -> Value {
    match keep {
        Keep::Whole => value.clone(),
        Keep::Members(table) => keep_members(value, table),
        Keep::Each(table) => match value.as_array() {
            Some(items) => Value::new(Kind::Array(
                items.iter().map(|i| keep_members(i, table)).collect(),
            )),
            None => value.clone(),
        },
        Keep::Float32 => match value.as_number() {
            Some(number) => float32(number),
            None => value.clone(),
        },
    }
}

/// A number read into an `f32` and written out again: the nearest `f32`, in the shortest form
/// that reads back as it. A number beyond the `f32` range is left as it is: the model refuses
/// to read it, so the gateway never shows the item.
fn float32(number: &Number) -> Value {
    // Rounding to the nearest f32 is what reading the number into an f32 field does.
    #[allow(clippy::cast_possible_truncation)]
    let narrow = number.as_f64() as f32;
    if !narrow.is_finite() {
        return Value::new(Kind::Number(number.clone()));
    }
    let mut buffer = ryu_js::Buffer::new();
    Value::new(Kind::Number(Number::from_valid_literal(
        buffer.format_finite(narrow),
    )))
}

/// The JSON pointer (below `value`) of the first member `table` does not keep. The pointer is
/// written only once such a member is found, on the way back out: an item holding only kept
/// members (every item of an honest list) costs no allocation.
fn first_foreign(value: &Value, table: &[(&str, Keep)]) -> Option<String> {
    let object = value.as_object()?;
    for member in object.members() {
        let Some(keep) = lookup(table, &member.name) else {
            return Some(format!("/{}", escape_pointer_token(&member.name)));
        };
        let below = match keep {
            Keep::Whole | Keep::Float32 => None,
            Keep::Members(inner) => first_foreign(&member.value, inner),
            Keep::Each(inner) => member
                .value
                .as_array()
                .unwrap_or_default()
                .iter()
                .enumerate()
                .find_map(|(i, v)| Some(format!("/{i}{}", first_foreign(v, inner)?))),
        };
        if let Some(below) = below {
            return Some(format!("/{}{below}", escape_pointer_token(&member.name)));
        }
    }
    None
}

/// How the gateway's `prefixMode` names the items of several targets (agentgateway's
/// `mcp.prefixMode`).
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
#[non_exhaustive]
pub enum PrefixMode {
    /// Prefix only when the gateway serves more than one target (the gateway's default).
    #[default]
    Conditional,
    /// Prefix even a single target.
    Always,
    /// Never prefix names; several targets' resource URIs are prefixed all the same.
    Never,
}

/// How the gateway renames the items of one target: tool and prompt names become
/// `<target>_<name>`, resource template URIs `<target>+<uri>` (`ui://<target>+<rest>` for an
/// MCP Apps `ui://` URI, also in a tool's `_meta.ui.resourceUri`); a URI without a scheme
/// stays as it is.
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct Renaming {
    /// The prefix of names, when names are prefixed.
    names: Option<String>,
    /// The prefix of URIs, when URIs are prefixed.
    uris: Option<String>,
}

impl Renaming {
    /// No renaming: a single target under `prefixMode` `conditional` or `never`.
    #[must_use]
    pub fn none() -> Self {
        Self::default()
    }

    /// The renaming of target `target` when the gateway serves `targets` targets in `mode`:
    /// names are prefixed under `always`, and under `conditional` with more than one target;
    /// URIs are prefixed under `always`, and with more than one target in any mode.
    #[must_use]
    pub fn new(mode: PrefixMode, targets: usize, target: &str) -> Self {
        let several = targets != 1;
        let uris = several || mode == PrefixMode::Always;
        let names = uris && !(several && mode == PrefixMode::Never);
        Self {
            names: names.then(|| target.to_owned()),
            uris: uris.then(|| target.to_owned()),
        }
    }

    /// Whether names are prefixed.
    #[must_use]
    pub fn prefixes_names(&self) -> bool {
        self.names.is_some()
    }

    /// Whether URIs are prefixed.
    #[must_use]
    pub fn prefixes_uris(&self) -> bool {
        self.uris.is_some()
    }

    /// How many leading bytes of `key` are this target's prefix as the gateway writes it: a
    /// tool's or prompt's name (`<target>_`), a resource template's URI (`<target>+`, or
    /// `ui://<target>+` for an MCP Apps URI). `None` when this renaming does not prefix such
    /// keys, or `key` does not carry the prefix. The gateway merges the lists of its targets
    /// into one: the target whose prefix is the longest one a key carries is the one it came
    /// from.
    #[must_use]
    pub fn prefix_len(&self, kind: ItemKind, key: &str) -> Option<usize> {
        match kind {
            ItemKind::Tool | ItemKind::Prompt => {
                let target = self.names.as_deref()?;
                let rest = key.strip_prefix(target)?;
                rest.starts_with('_').then_some(target.len() + 1)
            }
            ItemKind::ResourceTemplate => {
                let target = self.uris.as_deref()?;
                let (skipped, rest) = match strip_ui(key) {
                    Some(rest) => (5, rest),
                    None => (0, key),
                };
                let after = rest.strip_prefix(target)?;
                after.starts_with('+').then_some(skipped + target.len() + 1)
            }
        }
    }

    fn apply(&self, kind: ItemKind, item: &mut Value) {
        let Some(object) = item.as_object_mut() else {
            return;
        };
        match kind {
            ItemKind::Tool | ItemKind::Prompt => {
                if let (Some(target), Some(name)) = (&self.names, object.get_mut("name"))
                    && let Some(text) = name.as_str()
                {
                    *name = Value::from(format!("{target}_{text}"));
                }
                if kind == ItemKind::Tool
                    && let (Some(target), Some(meta)) = (&self.uris, object.get_mut("_meta"))
                {
                    rename_ui_meta(target, meta);
                }
            }
            ItemKind::ResourceTemplate => {
                if let (Some(target), Some(uri)) = (&self.uris, object.get_mut("uriTemplate"))
                    && let Some(text) = uri.as_str()
                {
                    *uri = Value::from(resource_uri(target, text));
                }
            }
        }
    }
}

/// A URI of target `target` as the gateway shows it when it prefixes URIs.
fn resource_uri(target: &str, uri: &str) -> String {
    if let Some(rest) = strip_ui(uri) {
        format!("ui://{target}+{rest}")
    } else if has_scheme(uri) {
        format!("{target}+{uri}")
    } else {
        uri.to_owned()
    }
}

/// The part after `ui://` (the scheme matched without regard to case).
fn strip_ui(uri: &str) -> Option<&str> {
    let scheme = uri.get(..5)?;
    scheme.eq_ignore_ascii_case("ui://").then(|| &uri[5..])
}

/// Whether `uri` begins with an RFC 3986 scheme and its `:`.
fn has_scheme(uri: &str) -> bool {
    let mut bytes = uri.bytes();
    if !bytes.next().is_some_and(|b| b.is_ascii_alphabetic()) {
        return false;
    }
    for b in bytes {
        match b {
            b':' => return true,
            b if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.') => {}
            _ => return false,
        }
    }
    false
}

/// Renames the MCP Apps resource of a tool's `_meta`: `ui.resourceUri` and the older
/// `ui/resourceUri`, each when it is a `ui://` URI.
fn rename_ui_meta(target: &str, meta: &mut Value) {
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    let rename = |value: &mut Value| {
        if let Some(rest) = value.as_str().and_then(strip_ui) {
            *value = Value::from(format!("ui://{target}+{rest}"));
        }
    };
    if let Some(ui) = meta.get_mut("ui").and_then(Value::as_object_mut)
        && let Some(uri) = ui.get_mut("resourceUri")
    {
        rename(uri);
    }
    if let Some(uri) = meta.get_mut("ui/resourceUri") {
        rename(uri);
    }
}

/// Why a lockfile entry cannot be projected.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Unprojectable {
    /// The item is stored as a digest alone (a version 1 lockfile).
    DigestOnly {
        /// The kind of the item.
        kind: ItemKind,
        /// Its key in the lockfile.
        name: String,
    },
    /// Two items have this key once renamed.
    Collision {
        /// The kind of the items.
        kind: ItemKind,
        /// The renamed key.
        name: String,
    },
}

impl fmt::Display for Unprojectable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DigestOnly { kind, name } => write!(
                f,
                "{} {} is stored as a digest alone: a projection needs the approved object \
                 (lock it again with mcppin lock)",
                kind.noun(),
                shown(name)
            ),
            Self::Collision { kind, name } => write!(
                f,
                "two {}s are both shown as {} once renamed as the gateway renames them",
                kind.noun(),
                shown(name)
            ),
        }
    }
}

impl std::error::Error for Unprojectable {}

/// A served item holding a member the projection does not keep: the gateway projects
/// differently, so the item is refused rather than compared.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Foreign {
    /// The projection compared against (`rmcp-3.1`).
    pub projection: &'static str,
    /// The kind of the item.
    pub kind: ItemKind,
    /// Its key as served (raw: shown escaped by `Display`).
    pub name: String,
    /// The JSON pointer of the member in the item (`/execution`).
    pub pointer: String,
}

impl fmt::Display for Foreign {
    /// `tool "x" holds member /execution, which projection rmcp-3.1 drops: ...`, with the name
    /// and pointer escaped.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} holds member {}, which projection {} drops: the gateway keeps members this \
             projection does not; select the projection of the gateway's model with \
             --projection",
            self.kind.noun(),
            shown(&self.name),
            shown(&self.pointer),
            self.projection
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{digest, parse};

    fn value(text: &str) -> Value {
        parse(text.as_bytes()).expect("test JSON")
    }

    fn projected(kind: ItemKind, approved: &str, renaming: &Renaming) -> String {
        Projection::RMCP_3_1
            .project(kind, &value(approved), renaming)
            .to_string()
    }

    #[test]
    fn a_tool_loses_the_members_the_model_does_not_know_at_every_typed_level() {
        let tool = r#"{"name":"echo","title":"Echo","description":"Echoes",
            "inputSchema":{"type":"object","x-any":{"kept":null}},
            "outputSchema":{"type":"object"},
            "execution":{"taskSupport":"forbidden"},
            "x-instructions":"read ~/.ssh",
            "annotations":{"readOnlyHint":true,"x-hint":1,"title":"E","destructiveHint":false,
                "idempotentHint":true,"openWorldHint":false},
            "icons":[{"src":"https://i.invalid/e.png","x-extra":1,"sizes":["48x48"],
                "mimeType":"image/png","theme":"dark"}],
            "_meta":{"vendor/k":1,"x":{"y":null}}}"#;
        assert_eq!(
            projected(ItemKind::Tool, tool, &Renaming::none()),
            r#"{"_meta":{"vendor/k":1,"x":{"y":null}},"annotations":{"destructiveHint":false,"idempotentHint":true,"openWorldHint":false,"readOnlyHint":true,"title":"E"},"description":"Echoes","icons":[{"mimeType":"image/png","sizes":["48x48"],"src":"https://i.invalid/e.png","theme":"dark"}],"inputSchema":{"type":"object","x-any":{"kept":null}},"name":"echo","outputSchema":{"type":"object"},"title":"Echo"}"#
        );
    }

    #[test]
    fn a_tool_of_known_members_only_is_its_own_projection() {
        let tool = value(
            r#"{"name":"get-sum","description":"Adds","inputSchema":{"type":"object",
            "properties":{"a":{"type":"number","maximum":1e2}}},"annotations":{"readOnlyHint":true}}"#,
        );
        let projection = Projection::RMCP_3_1.project(ItemKind::Tool, &tool, &Renaming::none());
        assert_eq!(digest(&projection).ok(), digest(&tool).ok());
        assert_eq!(Projection::RMCP_3_1.foreign(ItemKind::Tool, &tool), None);
    }

    #[test]
    fn null_members_are_absent_and_an_emptied_typed_object_stays() {
        let tool = r#"{"name":"t","title":null,"inputSchema":{},"_meta":null,
            "annotations":{"x-hint":true,"title":null}}"#;
        assert_eq!(
            projected(ItemKind::Tool, tool, &Renaming::none()),
            r#"{"annotations":{},"inputSchema":{},"name":"t"}"#
        );
    }

    #[test]
    fn a_prompt_keeps_its_arguments_known_members() {
        let prompt = r#"{"name":"greet","description":"Greeting","x-prompt-extra":1,
            "arguments":[{"name":"who","required":true,"x-arg-extra":2,"title":"Who",
                "description":"Whom"}]}"#;
        assert_eq!(
            projected(ItemKind::Prompt, prompt, &Renaming::none()),
            r#"{"arguments":[{"description":"Whom","name":"who","required":true,"title":"Who"}],"description":"Greeting","name":"greet"}"#
        );
    }

    #[test]
    fn a_template_priority_is_read_as_a_32_bit_float() {
        let template = r#"{"uriTemplate":"memo://{id}","name":"memo","x-template-extra":1,
            "annotations":{"priority":0.1,"audience":["user"],"x":1,
                "lastModified":"2026-01-01T00:00:00Z"}}"#;
        // 0.1 is no f32: the nearest f32 is written 0.1 by an f32 writer, and reads back
        // as 0.10000000149011612 in a float64.
        assert_eq!(
            projected(ItemKind::ResourceTemplate, template, &Renaming::none()),
            r#"{"annotations":{"audience":["user"],"lastModified":"2026-01-01T00:00:00Z","priority":0.1},"name":"memo","uriTemplate":"memo://{id}"}"#
        );
        let exact = r#"{"uriTemplate":"a:b","name":"a","annotations":{"priority":0.123456789}}"#;
        assert_eq!(
            projected(ItemKind::ResourceTemplate, exact, &Renaming::none()),
            r#"{"annotations":{"priority":0.12345679},"name":"a","uriTemplate":"a:b"}"#
        );
        let huge = r#"{"uriTemplate":"a:b","name":"a","annotations":{"priority":1e300}}"#;
        assert_eq!(
            projected(ItemKind::ResourceTemplate, huge, &Renaming::none()),
            r#"{"annotations":{"priority":1e300},"name":"a","uriTemplate":"a:b"}"#,
            "beyond the f32 range: as it is (the gateway cannot read the item)"
        );
    }

    #[test]
    fn renaming_follows_the_prefix_mode_and_the_number_of_targets() {
        let cases = [
            (PrefixMode::Conditional, 1, false, false),
            (PrefixMode::Conditional, 2, true, true),
            (PrefixMode::Always, 1, true, true),
            (PrefixMode::Always, 3, true, true),
            (PrefixMode::Never, 1, false, false),
            (PrefixMode::Never, 2, false, true),
        ];
        for (mode, targets, names, uris) in cases {
            let renaming = Renaming::new(mode, targets, "t");
            assert_eq!(
                (renaming.prefixes_names(), renaming.prefixes_uris()),
                (names, uris),
                "{mode:?} with {targets} targets"
            );
        }
    }

    #[test]
    fn names_uris_and_app_resources_are_prefixed_with_the_target() {
        let renaming = Renaming::new(PrefixMode::Conditional, 2, "docs");
        let tool = r#"{"name":"search","inputSchema":{},"_meta":{"ui":{"resourceUri":
            "ui://search/app.html","visibility":["app"]},"ui/resourceUri":"UI://search/app.html",
            "other":"ui://x"}}"#;
        assert_eq!(
            projected(ItemKind::Tool, tool, &renaming),
            r#"{"_meta":{"other":"ui://x","ui":{"resourceUri":"ui://docs+search/app.html","visibility":["app"]},"ui/resourceUri":"ui://docs+search/app.html"},"inputSchema":{},"name":"docs_search"}"#
        );
        let prompt = r#"{"name":"greet"}"#;
        assert_eq!(
            projected(ItemKind::Prompt, prompt, &renaming),
            r#"{"name":"docs_greet"}"#
        );
        for (uri, shown) in [
            ("memo://{id}", "docs+memo://{id}"),
            ("urn:x:{id}", "docs+urn:x:{id}"),
            ("ui://w/{id}", "ui://docs+w/{id}"),
            ("{path}", "{path}"),
            ("1x:{y}", "1x:{y}"),
        ] {
            let template = format!(r#"{{"uriTemplate":"{uri}","name":"n"}}"#);
            assert_eq!(
                projected(ItemKind::ResourceTemplate, &template, &renaming),
                format!(r#"{{"name":"n","uriTemplate":"{shown}"}}"#),
                "{uri}"
            );
        }
        // Without prefixes nothing is renamed, `_meta` included.
        assert!(projected(ItemKind::Tool, tool, &Renaming::none()).contains("\"ui://search/"));
    }

    #[test]
    fn a_shown_key_is_told_by_the_prefix_of_its_target() {
        let a = Renaming::new(PrefixMode::Conditional, 2, "a");
        let ab = Renaming::new(PrefixMode::Conditional, 2, "a_b");
        // Names: `<target>_`; the longer target's prefix is the longer match.
        assert_eq!(a.prefix_len(ItemKind::Tool, "a_echo"), Some(2));
        assert_eq!(a.prefix_len(ItemKind::Prompt, "a_b_echo"), Some(2));
        assert_eq!(ab.prefix_len(ItemKind::Tool, "a_b_echo"), Some(4));
        assert_eq!(ab.prefix_len(ItemKind::Tool, "a_echo"), None);
        assert_eq!(a.prefix_len(ItemKind::Tool, "ab_echo"), None);
        assert_eq!(a.prefix_len(ItemKind::Tool, "a"), None);
        // URIs: `<target>+`, and `ui://<target>+` for an app's resource.
        assert_eq!(
            a.prefix_len(ItemKind::ResourceTemplate, "a+demo://{id}"),
            Some(2)
        );
        assert_eq!(
            a.prefix_len(ItemKind::ResourceTemplate, "UI://a+widget/{id}"),
            Some(7)
        );
        assert_eq!(
            a.prefix_len(ItemKind::ResourceTemplate, "a_demo://{id}"),
            None
        );
        assert_eq!(
            a.prefix_len(ItemKind::ResourceTemplate, "demo://{id}"),
            None
        );
        // A renaming that does not prefix claims nothing.
        let never = Renaming::new(PrefixMode::Never, 2, "a");
        assert_eq!(never.prefix_len(ItemKind::Tool, "a_echo"), None);
        assert_eq!(
            never.prefix_len(ItemKind::ResourceTemplate, "a+demo://x"),
            Some(2)
        );
        assert_eq!(Renaming::none().prefix_len(ItemKind::Tool, "a_echo"), None);
    }

    #[test]
    fn foreign_names_the_first_member_the_projection_drops() {
        let check = |kind, served: &str| {
            Projection::RMCP_3_1
                .foreign(kind, &value(served))
                .map(|f| f.pointer)
        };
        assert_eq!(
            check(
                ItemKind::Tool,
                r#"{"name":"echo","inputSchema":{},"execution":{}}"#
            ),
            Some("/execution".to_owned())
        );
        assert_eq!(
            check(
                ItemKind::Tool,
                r#"{"name":"e","inputSchema":{},"icons":[{"src":"a"},{"src":"b","x~/":1}]}"#
            ),
            Some("/icons/1/x~0~1".to_owned())
        );
        assert_eq!(
            check(
                ItemKind::Prompt,
                r#"{"name":"p","arguments":[{"name":"a","x":1}]}"#
            ),
            Some("/arguments/0/x".to_owned())
        );
        assert_eq!(
            check(
                ItemKind::ResourceTemplate,
                r#"{"uriTemplate":"a:b","name":"a","annotations":{"x":1}}"#
            ),
            Some("/annotations/x".to_owned())
        );
        // Free-form members are never looked into; known members only hold.
        assert_eq!(
            check(
                ItemKind::Tool,
                r#"{"name":"e","inputSchema":{"x":1},"_meta":{"y":2},"outputSchema":{"z":3}}"#
            ),
            None
        );
    }

    #[test]
    fn the_foreign_note_names_the_flag_and_escapes_server_text() {
        let served = value(r#"{"name":"e\u001b[31m","inputSchema":{},"execution":{}}"#);
        let note = Projection::RMCP_3_1
            .foreign(ItemKind::Tool, &served)
            .expect("foreign");
        let text = note.to_string();
        assert!(text.contains("--projection"), "{text}");
        assert!(text.contains("rmcp-3.1"), "{text}");
        assert!(text.contains("/execution"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
    }

    #[test]
    fn a_server_entry_is_projected_renamed_and_pinned() {
        let mut approved = LockedServer::default();
        approved.tools.insert(
            "echo".into(),
            LockedItem::approve(value(
                r#"{"name":"echo","inputSchema":{},"execution":{"taskSupport":"optional"}}"#,
            )),
        );
        approved.prompts.insert(
            "greet".into(),
            LockedItem::approve(value(r#"{"name":"greet","x":1}"#)),
        );
        approved.instructions = Some("Use echo.".into());
        let renaming = Renaming::new(PrefixMode::Always, 1, "e");
        let projected = Projection::RMCP_3_1
            .server(&approved, &renaming)
            .expect("projectable");
        let served = value(r#"{"name":"e_echo","inputSchema":{}}"#);
        assert_eq!(
            projected.tools["e_echo"].pin().digest(),
            Some(digest(&served).expect("digest"))
        );
        assert_ne!(
            approved.tools["echo"].pin(),
            projected.tools["e_echo"].pin(),
            "the raw pin stays the lockfile's"
        );
        assert_eq!(
            projected.prompts.keys().collect::<Vec<_>>(),
            ["e_greet"],
            "renamed keys"
        );
        assert_eq!(projected.instructions.as_deref(), Some("Use echo."));
    }

    #[test]
    fn an_entry_without_approved_objects_or_with_colliding_renames_is_unprojectable() {
        let digest = format!("{}", digest(&value(r#"{"name":"t"}"#)).expect("digest"));
        let v1 = crate::lockfile::Lockfile::parse(
            format!(
                r#"{{"schema_version":1,"approval_serial":1,"servers":[{{"id":"s","tools":[{{"name":"t","digest":"{digest}"}}]}}]}}"#
            )
            .as_bytes(),
        )
        .expect("a version 1 lockfile");
        let v1 = &v1.servers["s"];
        assert_eq!(
            Projection::RMCP_3_1.server(v1, &Renaming::none()),
            Err(Unprojectable::DigestOnly {
                kind: ItemKind::Tool,
                name: "t".into()
            })
        );
        let mut two = LockedServer::default();
        for uri in ["UI://a", "ui://a"] {
            two.resource_templates.insert(
                uri.into(),
                LockedItem::approve(value(&format!(r#"{{"uriTemplate":"{uri}","name":"n"}}"#))),
            );
        }
        let renaming = Renaming::new(PrefixMode::Conditional, 2, "t");
        let Err(collision) = Projection::RMCP_3_1.server(&two, &renaming) else {
            panic!("a collision")
        };
        assert_eq!(
            collision.to_string(),
            "two resource templates are both shown as ui://t+a once renamed as the gateway \
             renames them"
        );
        assert!(Projection::RMCP_3_1.server(&two, &Renaming::none()).is_ok());
    }

    #[test]
    fn projections_are_found_by_name() {
        assert_eq!(
            Projection::named("rmcp-3.1").map(Projection::name),
            Some("rmcp-3.1")
        );
        assert!(Projection::named("rmcp-9").is_none());
    }
}

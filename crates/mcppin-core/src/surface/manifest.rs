//! The manifest: a captured surface, as `mcppin-export` or a gateway writes it (docs/formats.md).
//!
//! ```
//! use mcppin_core::manifest::Manifest;
//!
//! let bytes = br#"{"schema_version": 2, "complete": true, "servers": [
//!   {"id": "docs", "tools": [{"name": "search_docs", "inputSchema": {"type": "object"}}]}]}"#;
//! let manifest = Manifest::parse(bytes)?;
//! assert!(manifest.complete);
//! assert!(manifest.servers["docs"].tools.contains("search_docs"));
//! // One byte form: re-reading what was written gives the same bytes.
//! let written = manifest.to_bytes();
//! assert_eq!(Manifest::parse(&written)?.to_bytes(), written);
//! # Ok::<(), mcppin_core::Error>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::artifact::{self, Artifact};
use crate::canon::to_pretty;
use crate::document::{Document, Error};
use crate::launch::Launch;
use crate::parse::parse;
use crate::surface::{
    AUTH_CONTEXT, AuthContext, Fields, ItemKind, Items, NOT_SERVED, array, check_not_served, count,
    element, not_served_value, put, put_opt, read_auth_context, read_not_served, string,
    string_array, take_list,
};
use crate::value::{Kind, Object, Value};

/// The `schema_version` this crate writes; it reads this one and versions 2 and 3
/// ([`READ_VERSIONS`]).
pub const SCHEMA_VERSION: u64 = 4;

/// The `schema_version` that added the server member `not_served` (docs/formats.md): an
/// earlier manifest holding it is refused.
pub const NOT_SERVED_VERSION: u64 = 4;

/// The `schema_version`s this crate reads: 2, which has none of the server members
/// [`VERSION_3_MEMBERS`], 3, whose launches record no guard, and 4, which adds the launch's
/// `guard` and the server's `not_served` (docs/formats.md).
pub const READ_VERSIONS: [u64; 3] = [2, 3, 4];

/// The server members version 3 added: a version 2 manifest holding one is refused, naming
/// it and the version.
pub const VERSION_3_MEMBERS: [&str; 5] = [
    "client_capabilities",
    "launch",
    "prompts",
    "resource_templates",
    "instructions",
];

/// A captured surface: per server, everything it served, kept verbatim.
///
/// Holding a `Manifest` means the document passed every strict-reading rule, declared
/// `schema_version` 2, 3 or 4 and its completeness, and no server lists two items with one key.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Manifest {
    /// The protocol revision the capture asked for, if it says.
    pub protocol_version: Option<String>,
    /// True only when every server was read to the last page and all readings agreed
    /// (docs/formats.md)
    ///. An incomplete capture cannot prove that an item was withdrawn.
    pub complete: bool,
    /// When the capture was made (RFC 3339), as written; never interpreted.
    pub captured_at: Option<String>,
    /// What made the capture (`mcppin-export/0.1.0`).
    pub captured_by: Option<String>,
    /// The servers the capture claims to cover, when it covers only some; `None` means the
    /// capture is the whole surface an agent sees.
    pub scope: Option<BTreeSet<String>>,
    /// The servers, by configuration id.
    pub servers: BTreeMap<String, ServerSurface>,
}

/// What one server served.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ServerSurface {
    /// What the server calls itself (`serverInfo.name`), absent when it says nothing.
    pub reported_name: Option<String>,
    /// The protocol revision the session negotiated.
    pub protocol_version: Option<String>,
    /// How many times the surface was read (docs/formats.md).
    pub passes: Option<u64>,
    /// The capabilities the capturing client declared (an object, `{}` for none), when the
    /// capture says: a server may serve another surface to a client declaring other ones.
    pub client_capabilities: Option<Value>,
    /// How the server is started, as the configuration writes it, when the capture says.
    pub launch: Option<Launch>,
    /// What the launch ran, when the capture says (version 4 on).
    pub artifact: Option<Artifact>,
    /// The authorization the surface was captured under (version 4 on); `None` is the
    /// default context.
    pub auth_context: Option<AuthContext>,
    /// The tools, kept exactly as served.
    pub tools: Items,
    /// Whether the capture read the widened surface: prompts, resource templates and
    /// `instructions` (docs/formats.md). Without it those were not read, and nothing is known
    /// of them.
    pub widened: bool,
    /// The prompts, kept exactly as served (meaningful when `widened`).
    pub prompts: Items,
    /// The resource templates, kept exactly as served (meaningful when `widened`).
    pub resource_templates: Items,
    /// The server's `instructions`, when it gave any (meaningful when `widened`).
    pub instructions: Option<String>,
    /// The optional lists the server declared the capability of but does not implement
    /// (`-32601 Method not found`): their items are empty, and a later reading that serves
    /// items there is compared with that (meaningful when `widened`; version 4).
    pub not_served: BTreeSet<ItemKind>,
}

impl ServerSurface {
    /// An empty surface.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The items of `kind`.
    #[must_use]
    pub fn items(&self, kind: ItemKind) -> &Items {
        match kind {
            ItemKind::Tool => &self.tools,
            ItemKind::Prompt => &self.prompts,
            ItemKind::ResourceTemplate => &self.resource_templates,
        }
    }

    /// The items of `kind`, for adding.
    pub fn items_mut(&mut self, kind: ItemKind) -> &mut Items {
        match kind {
            ItemKind::Tool => &mut self.tools,
            ItemKind::Prompt => &mut self.prompts,
            ItemKind::ResourceTemplate => &mut self.resource_templates,
        }
    }
}

const MANIFEST_MEMBERS: &[&str] = &[
    "schema_version",
    "protocol_version",
    "complete",
    "captured_at",
    "captured_by",
    "scope",
    "servers",
];
const SERVER_MEMBERS: &[&str] = &[
    "id",
    "reported_name",
    "protocol_version",
    "passes",
    "client_capabilities",
    "launch",
    "artifact",
    AUTH_CONTEXT,
    "tools",
    "prompts",
    "resource_templates",
    "instructions",
    NOT_SERVED,
];

impl Manifest {
    /// An empty manifest making the given completeness statement.
    #[must_use]
    pub fn new(complete: bool) -> Self {
        Self {
            protocol_version: None,
            complete,
            captured_at: None,
            captured_by: None,
            scope: None,
            servers: BTreeMap::new(),
        }
    }

    /// Reads a manifest under every strict-reading rule.
    ///
    /// # Errors
    ///
    /// A strict-reading error of [`crate::parse`], or the first rule of the format the
    /// document breaks (see [`Manifest::from_value`]).
    pub fn parse(bytes: &[u8]) -> Result<Self, Error> {
        Self::read(parse(bytes)?)
    }

    /// Reads a manifest from a value already read strictly.
    ///
    /// # Errors
    ///
    /// - [`Error::WrongDocument`] for a lockfile or a signature (see [`Document::of`]);
    /// - [`Error::ManifestVersion1`] for `schema_version` 1, [`Error::UnsupportedVersion`] for
    ///   any other version but 2, 3 and 4;
    /// - [`Error::LaterVersionMember`] for a launch `guard` in a manifest before version 4;
    /// - [`Error::LaterVersionMember`] for a version 2 manifest holding a member of version 3;
    /// - [`Error::MissingCompleteness`] when `complete` is absent;
    /// - [`Error::UnknownMember`], [`Error::MissingMember`], [`Error::Invalid`] for members of
    ///   the format (served items are kept as they are and never judged here);
    /// - [`Error::DuplicateServer`], [`Error::DuplicateItem`];
    /// - [`Error::OutOfScope`] when `scope` and the servers listed disagree.
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        Self::read(value.clone())
    }

    /// Reads the manifest, moving the served items out of `value` instead of copying them.
    fn read(mut value: Value) -> Result<Self, Error> {
        Document::expect(&value, Document::Manifest)?;
        let mut entries = take_list(&mut value, "servers");
        let value = &value;
        // The version decides which members exist, so it is read before anything else.
        let version = crate::surface::object(value, "")?
            .get("schema_version")
            .map(|v| count(v, "/schema_version"))
            .transpose()?;
        let version = match version {
            Some(v) if READ_VERSIONS.contains(&v) => v,
            Some(1) => return Err(Error::ManifestVersion1),
            Some(v) => {
                return Err(Error::UnsupportedVersion {
                    document: Document::Manifest,
                    version: v,
                });
            }
            None => {
                return Err(Error::MissingMember {
                    pointer: String::new(),
                    name: "schema_version",
                });
            }
        };
        let fields = Fields::new(value, "", MANIFEST_MEMBERS)?;
        let complete = match fields.optional("complete") {
            None => return Err(Error::MissingCompleteness),
            Some(v) => v.as_bool().ok_or_else(|| Error::Invalid {
                pointer: fields.at("complete"),
                expected: "true or false",
            })?,
        };
        let scope = fields
            .optional("scope")
            .map(|v| read_scope(v, &fields.at("scope")))
            .transpose()?;
        let mut servers = BTreeMap::new();
        let list_pointer = fields.at("servers");
        array(fields.required("servers")?, &list_pointer)?;
        for (i, entry) in entries.iter_mut().enumerate() {
            let pointer = element(&list_pointer, i);
            let (id, server) = read_server(entry, &pointer, version)?;
            if let Some(scope) = &scope
                && !scope.contains(&id)
            {
                return Err(Error::OutOfScope { pointer, id });
            }
            if servers.contains_key(&id) {
                return Err(Error::DuplicateServer { pointer, id });
            }
            servers.insert(id, server);
        }
        if let Some(missing) = scope
            .iter()
            .flatten()
            .find(|id| !servers.contains_key(id.as_str()))
        {
            return Err(Error::OutOfScope {
                pointer: fields.at("scope"),
                id: missing.clone(),
            });
        }
        Ok(Self {
            protocol_version: fields.optional_string("protocol_version")?,
            complete,
            captured_at: fields.optional_string("captured_at")?,
            captured_by: fields.optional_string("captured_by")?,
            scope,
            servers,
        })
    }

    /// The manifest as a value, in the form [`Manifest::from_value`] reads.
    #[must_use]
    pub fn to_value(&self) -> Value {
        let mut o = Object::new();
        put(&mut o, "schema_version", SCHEMA_VERSION);
        put_opt(&mut o, "protocol_version", self.protocol_version.as_deref());
        put(&mut o, "complete", self.complete);
        put_opt(&mut o, "captured_at", self.captured_at.as_deref());
        put_opt(&mut o, "captured_by", self.captured_by.as_deref());
        if let Some(scope) = &self.scope {
            put(
                &mut o,
                "scope",
                string_array(scope.iter().map(String::as_str)),
            );
        }
        let servers = self
            .servers
            .iter()
            .map(|(id, server)| {
                let mut s = Object::new();
                put(&mut s, "id", id.as_str());
                put_opt(&mut s, "reported_name", server.reported_name.as_deref());
                put_opt(
                    &mut s,
                    "protocol_version",
                    server.protocol_version.as_deref(),
                );
                if let Some(passes) = server.passes {
                    put(&mut s, "passes", passes);
                }
                if let Some(capabilities) = &server.client_capabilities {
                    put(&mut s, "client_capabilities", capabilities.clone());
                }
                if let Some(launch) = &server.launch {
                    put(&mut s, "launch", launch.to_value());
                }
                if let Some(artifact) = &server.artifact {
                    put(&mut s, "artifact", artifact.to_value());
                }
                if let Some(context) = &server.auth_context {
                    put(&mut s, AUTH_CONTEXT, context.as_str());
                }
                for kind in ItemKind::ALL {
                    if !kind.always_listed() && !server.widened {
                        continue;
                    }
                    let items = server.items(kind).iter().map(|(_, v)| v.clone()).collect();
                    put(&mut s, kind.list_member(), Value::new(Kind::Array(items)));
                }
                if server.widened {
                    put_opt(&mut s, "instructions", server.instructions.as_deref());
                    if !server.not_served.is_empty() {
                        put(&mut s, NOT_SERVED, not_served_value(&server.not_served));
                    }
                }
                Value::from(s)
            })
            .collect();
        put(&mut o, "servers", Value::new(Kind::Array(servers)));
        Value::from(o)
    }

    /// The one byte form of the manifest: sorted keys, two-space indent, trailing newline,
    /// servers by id and items by key (see [`crate::to_pretty`]).
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        to_pretty(&self.to_value())
    }
}

impl TryFrom<Value> for Manifest {
    type Error = Error;

    /// Reads a manifest from a value already read strictly, as [`Manifest::from_value`] does,
    /// moving the served items out of it instead of copying them.
    fn try_from(value: Value) -> Result<Self, Error> {
        Self::read(value)
    }
}

fn read_scope(value: &Value, pointer: &str) -> Result<BTreeSet<String>, Error> {
    let mut scope = BTreeSet::new();
    for (i, v) in array(value, pointer)?.iter().enumerate() {
        let at = element(pointer, i);
        let id = string(v, &at)?;
        if !scope.insert(id.to_owned()) {
            return Err(Error::DuplicateServer {
                pointer: at,
                id: id.to_owned(),
            });
        }
    }
    Ok(scope)
}

fn read_server(
    value: &mut Value,
    pointer: &str,
    version: u64,
) -> Result<(String, ServerSurface), Error> {
    if version < 3
        && let Some(name) = crate::surface::object(value, pointer)?
            .keys()
            .find(|k| VERSION_3_MEMBERS.contains(k))
    {
        return Err(Error::LaterVersionMember {
            document: Document::Manifest,
            pointer: crate::surface::child(pointer, name),
            name: name.to_owned(),
            version,
            since: 3,
        });
    }
    if version < NOT_SERVED_VERSION && crate::surface::object(value, pointer)?.contains(NOT_SERVED)
    {
        return Err(Error::LaterVersionMember {
            document: Document::Manifest,
            pointer: crate::surface::child(pointer, NOT_SERVED),
            name: NOT_SERVED.to_owned(),
            version,
            since: NOT_SERVED_VERSION,
        });
    }
    let lists = ItemKind::ALL.map(|kind| take_list(value, kind.list_member()));
    let value = &*value;
    let fields = Fields::new(value, pointer, SERVER_MEMBERS)?;
    let id = string(fields.required("id")?, &fields.at("id"))?.to_owned();
    let mut server = ServerSurface {
        reported_name: fields.optional_string("reported_name")?,
        protocol_version: fields.optional_string("protocol_version")?,
        passes: fields
            .optional("passes")
            .map(|v| count(v, &fields.at("passes")))
            .transpose()?,
        client_capabilities: fields
            .optional("client_capabilities")
            .map(|v| {
                crate::surface::object(v, &fields.at("client_capabilities")).map(|_| v.clone())
            })
            .transpose()?,
        launch: fields
            .optional("launch")
            .map(|v| Launch::read(v, &fields.at("launch"), Document::Manifest, version))
            .transpose()?,
        artifact: fields
            .optional("artifact")
            .map(|v| artifact::read(v, &fields.at("artifact"), Document::Manifest, version))
            .transpose()?,
        auth_context: read_auth_context(&fields, Document::Manifest, version)?,
        tools: Items::new(),
        widened: fields.optional("prompts").is_some()
            || fields.optional("resource_templates").is_some()
            || fields.optional("instructions").is_some(),
        prompts: Items::new(),
        resource_templates: Items::new(),
        instructions: fields.optional_string("instructions")?,
        not_served: fields
            .optional(NOT_SERVED)
            .map(|v| read_not_served(v, &fields.at(NOT_SERVED)))
            .transpose()?
            .unwrap_or_default(),
    };
    for (kind, items) in ItemKind::ALL.into_iter().zip(lists) {
        if !kind.always_listed() && !server.widened {
            continue;
        }
        let list_pointer = fields.at(kind.list_member());
        array(fields.required(kind.list_member())?, &list_pointer)?;
        for (i, item) in items.into_iter().enumerate() {
            server
                .items_mut(kind)
                .insert(&id, kind, item, &element(&list_pointer, i))?;
        }
    }
    check_not_served(&fields, &server.not_served, server.widened, |k| {
        server.items(k).len()
    })?;
    Ok((id, server))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Manifest, Error> {
        Manifest::parse(text.as_bytes())
    }

    const GOOD: &str = r#"{"schema_version":2,"protocol_version":"2025-11-25","complete":true,
        "captured_at":"2026-08-01T09:12:00Z","captured_by":"mcppin-export/0.1.0","scope":["billing"],
        "servers":[{"id":"billing","reported_name":"stripe-mcp","protocol_version":"2025-11-25",
        "passes":2,"tools":[{"name":"z","x-unknown":[1,2]},{"name":"a","inputSchema":{"type":"object"}}]}]}"#;

    #[test]
    fn keeps_the_client_capabilities_of_a_server() {
        let text = r#"{"schema_version":3,"complete":true,"servers":[{"id":"a",
            "client_capabilities":{"roots":{"listChanged":true},"sampling":{}},"tools":[]}]}"#;
        let m = read(text).unwrap();
        let caps = m.servers["a"].client_capabilities.as_ref().unwrap();
        assert_eq!(
            caps.to_string(),
            r#"{"roots":{"listChanged":true},"sampling":{}}"#
        );
        let again = Manifest::parse(&m.to_bytes()).unwrap();
        assert_eq!(again, m);
        // Absent stays absent: a capture that does not say is not a capture under `{}`.
        let bare =
            read(r#"{"schema_version":2,"complete":true,"servers":[{"id":"a","tools":[]}]}"#)
                .unwrap();
        assert_eq!(bare.servers["a"].client_capabilities, None);
        assert!(
            !String::from_utf8(bare.to_bytes())
                .unwrap()
                .contains("client_capabilities")
        );
    }

    #[test]
    fn keeps_the_launch_of_a_server() {
        let text = r#"{"schema_version":3,"complete":true,"servers":[{"id":"a",
            "launch":{"command":"npx","args":["-y","pkg@1.0.0"],"env":["TOKEN"]},"tools":[]}]}"#;
        let m = read(text).unwrap();
        let launch = m.servers["a"].launch.as_ref().unwrap();
        assert_eq!(launch.to_string(), "npx -y pkg@1.0.0 (env: TOKEN)");
        assert_eq!(Manifest::parse(&m.to_bytes()).unwrap(), m);
        let values = r#"{"schema_version":3,"complete":true,"servers":[{"id":"a",
            "launch":{"command":"x","env":{"TOKEN":"secret"}},"tools":[]}]}"#;
        assert!(
            matches!(read(values), Err(Error::Invalid { ref pointer, .. })
            if pointer == "/servers/0/launch/env")
        );
    }

    #[test]
    fn refuses_client_capabilities_that_are_not_an_object() {
        let text = r#"{"schema_version":3,"complete":true,"servers":[{"id":"a",
            "client_capabilities":["roots"],"tools":[]}]}"#;
        let err = read(text).unwrap_err();
        assert!(
            matches!(err, Error::Invalid { ref pointer, .. } if pointer == "/servers/0/client_capabilities"),
            "{err:?}"
        );
    }

    #[test]
    fn reads_every_member_and_keeps_items_verbatim() {
        let m = read(GOOD).unwrap();
        assert!(m.complete);
        assert_eq!(m.scope, Some(BTreeSet::from(["billing".to_owned()])));
        let s = &m.servers["billing"];
        assert_eq!(s.reported_name.as_deref(), Some("stripe-mcp"));
        assert_eq!(s.passes, Some(2));
        assert_eq!(s.tools.names().collect::<Vec<_>>(), ["a", "z"]);
        let z = s.tools.get("z").unwrap();
        assert_eq!(z.to_string(), r#"{"name":"z","x-unknown":[1,2]}"#);
    }

    #[test]
    fn reading_an_owned_value_agrees_with_reading_a_borrowed_one() {
        let variants = [
            GOOD,
            r#"{"schema_version":2,"complete":true,"servers":[{"id":"a","tools":[{"name":"x"},{"name":"x"}]}]}"#,
            r#"{"schema_version":2,"complete":true,"servers":[{"id":"a","tools":[{"title":"x"}]}]}"#,
            r#"{"schema_version":2,"complete":true,"servers":[{"id":"a","tools":{}}]}"#,
            r#"{"schema_version":2,"complete":true,"servers":[{"id":"a","tools":[],"x":[]}]}"#,
            r#"{"schema_version":2,"complete":true,"servers":[{"tools":[{"name":"x"}]}]}"#,
            r#"{"schema_version":2,"complete":true,"servers":{}}"#,
        ];
        let mut refusals = 0;
        for variant in variants {
            let value = parse(variant.as_bytes()).unwrap();
            let borrowed = Manifest::from_value(&value);
            refusals += usize::from(borrowed.is_err());
            assert_eq!(Manifest::try_from(value), borrowed, "{variant}");
        }
        assert_eq!(refusals, variants.len() - 1);
    }

    #[test]
    fn writes_one_byte_form_that_reads_back() {
        let m = read(GOOD).unwrap();
        let bytes = m.to_bytes();
        assert_eq!(read(std::str::from_utf8(&bytes).unwrap()).unwrap(), m);
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.ends_with("}\n"));
        // Items by key: "a" is written before "z" though it was served second.
        assert!(text.find("\"a\"").unwrap() < text.find("\"z\"").unwrap());
    }

    #[test]
    fn refuses_version_1_saying_why() {
        let err = read(r#"{"schema_version":1,"servers":[]}"#).unwrap_err();
        assert_eq!(err, Error::ManifestVersion1);
        assert!(err.to_string().contains("completeness"), "{err}");
    }

    #[test]
    fn refuses_a_manifest_without_completeness() {
        let err = read(r#"{"schema_version":2,"servers":[]}"#).unwrap_err();
        assert_eq!(err, Error::MissingCompleteness);
        assert!(err.to_string().contains("cannot be assumed"), "{err}");
    }

    #[test]
    fn names_a_lockfile_or_a_signature_given_as_the_manifest() {
        // A swapped file failed on its first unknown member.
        for (text, found) in [
            (
                r#"{"schema_version":2,"approval_serial":1,"servers":[]}"#,
                Document::Lockfile,
            ),
            (
                r#"{"schema_version":1,"approval_serial":1,"servers":[]}"#,
                Document::Lockfile,
            ),
            (
                r#"{"schema":"mcppin-lock-signature","schema_version":1}"#,
                Document::Signature,
            ),
        ] {
            let err = read(text).unwrap_err();
            assert_eq!(
                err,
                Error::WrongDocument {
                    expected: Document::Manifest,
                    found
                },
                "{text}"
            );
            assert_eq!(err.rule(), "wrong-document");
        }
        assert_eq!(
            read(r#"{"schema_version":2,"approval_serial":1,"servers":[]}"#)
                .unwrap_err()
                .to_string(),
            "this is a lockfile, not a manifest"
        );
        // Members of both formats say nothing: the reader's own error stands.
        assert!(matches!(
            read(r#"{"schema_version":2,"complete":true,"approval_serial":1,"servers":[]}"#),
            Err(Error::UnknownMember { .. })
        ));
        assert!(read(GOOD).is_ok());
    }

    #[test]
    fn refuses_unknown_versions() {
        assert_eq!(
            read(r#"{"schema_version":5,"complete":true,"servers":[]}"#),
            Err(Error::UnsupportedVersion {
                document: Document::Manifest,
                version: 5
            })
        );
    }

    #[test]
    fn reads_versions_2_to_4_and_writes_4() {
        let v2 = read(r#"{"schema_version":2,"complete":true,"servers":[{"id":"a","tools":[]}]}"#)
            .unwrap();
        let v3 = read(r#"{"schema_version":3,"complete":true,"servers":[{"id":"a","tools":[]}]}"#)
            .unwrap();
        let v4 = read(r#"{"schema_version":4,"complete":true,"servers":[{"id":"a","tools":[]}]}"#)
            .unwrap();
        assert_eq!(v2, v3);
        assert_eq!(v3, v4);
        assert!(
            String::from_utf8(v2.to_bytes())
                .unwrap()
                .contains("\"schema_version\": 4,")
        );
        // A version 3 launch records no guard: one there is refused, naming the version.
        let guarded = r#"{"schema_version":3,"complete":true,"servers":[{"id":"a","tools":[],
            "launch":{"command":"npx","guard":{"command":"mcppin-guard","args":[]}}}]}"#;
        assert!(matches!(
            read(guarded),
            Err(Error::LaterVersionMember { ref pointer, version: 3, since: 4, .. })
                if pointer == "/servers/0/launch/guard"
        ));
        assert!(read(&guarded.replace("\"schema_version\":3", "\"schema_version\":4")).is_ok());
    }

    #[test]
    fn a_version_2_manifest_with_a_version_3_member_names_both() {
        // The members version 3 added; an older reader refused them as unknown.
        for name in VERSION_3_MEMBERS {
            let value = if name == "instructions" {
                r#""x""#
            } else if name == "launch" {
                r#"{"command":"x"}"#
            } else if name == "client_capabilities" {
                "{}"
            } else {
                "[]"
            };
            let text = format!(
                r#"{{"schema_version":2,"complete":true,"servers":[{{"id":"a","tools":[],"{name}":{value}}}]}}"#
            );
            let err = read(&text).unwrap_err();
            assert_eq!(
                err,
                Error::LaterVersionMember {
                    document: Document::Manifest,
                    pointer: format!("/servers/0/{name}"),
                    name: name.into(),
                    version: 2,
                    since: 3
                }
            );
            assert_eq!(
                err.to_string(),
                format!(
                    "manifest schema_version 2 has no member \"{name}\" at \"/servers/0/{name}\": \
                     it was added in schema_version 3"
                )
            );
            // Prompts, resource templates and instructions are read together.
            let other = match name {
                "prompts" => r#","resource_templates":[]"#,
                "resource_templates" => r#","prompts":[]"#,
                "instructions" => r#","prompts":[],"resource_templates":[]"#,
                _ => "",
            };
            let v3 = text
                .replace("\"schema_version\":2", "\"schema_version\":3")
                .replace("\"tools\":[]", &format!("\"tools\":[]{other}"));
            assert!(read(&v3).is_ok(), "{v3}");
        }
    }

    #[test]
    fn refuses_unknown_members_of_our_own_format_with_their_pointer() {
        assert_eq!(
            read(r#"{"schema_version":2,"complete":true,"servers":[],"extra":1}"#),
            Err(Error::UnknownMember {
                pointer: "/extra".into(),
                name: "extra".into()
            })
        );
        assert_eq!(
            read(
                r#"{"schema_version":2,"complete":true,"servers":[{"id":"a","tools":[],"x~y":0}]}"#
            ),
            Err(Error::UnknownMember {
                pointer: "/servers/0/x~0y".into(),
                name: "x~y".into()
            })
        );
    }

    #[test]
    fn refuses_duplicate_tool_names_in_one_server() {
        assert_eq!(
            read(
                r#"{"schema_version":2,"complete":true,"servers":[{"id":"a","tools":[{"name":"t"},{"name":"t","description":"x"}]}]}"#
            ),
            Err(Error::DuplicateItem {
                pointer: "/servers/0/tools/1".into(),
                kind: ItemKind::Tool,
                name: "t".into()
            })
        );
    }

    #[test]
    fn accepts_one_tool_name_on_two_servers() {
        let m = read(
            r#"{"schema_version":2,"complete":true,"servers":[{"id":"a","tools":[{"name":"t"}]},{"id":"b","tools":[{"name":"t"}]}]}"#,
        )
        .unwrap();
        assert_eq!(m.servers.len(), 2);
    }

    #[test]
    fn refuses_duplicate_servers_and_scope_disagreements() {
        assert!(matches!(
            read(
                r#"{"schema_version":2,"complete":true,"servers":[{"id":"a","tools":[]},{"id":"a","tools":[]}]}"#
            ),
            Err(Error::DuplicateServer { .. })
        ));
        assert_eq!(
            read(
                r#"{"schema_version":2,"complete":true,"scope":["a"],"servers":[{"id":"b","tools":[]}]}"#
            ),
            Err(Error::OutOfScope {
                pointer: "/servers/0".into(),
                id: "b".into()
            })
        );
        assert_eq!(
            read(
                r#"{"schema_version":2,"complete":true,"scope":["a","b"],"servers":[{"id":"b","tools":[]}]}"#
            ),
            Err(Error::OutOfScope {
                pointer: "/scope".into(),
                id: "a".into()
            })
        );
    }

    #[test]
    fn refuses_wrong_types_with_their_pointer() {
        assert_eq!(
            read(r#"{"schema_version":2,"complete":"yes","servers":[]}"#),
            Err(Error::Invalid {
                pointer: "/complete".into(),
                expected: "true or false"
            })
        );
        assert_eq!(
            read(
                r#"{"schema_version":2,"complete":true,"servers":[{"id":"a","reported_name":null,"tools":[]}]}"#
            ),
            Err(Error::Invalid {
                pointer: "/servers/0/reported_name".into(),
                expected: "a string"
            })
        );
        assert_eq!(
            read(r#"{"schema_version":2,"complete":true,"servers":[{"id":"a"}]}"#),
            Err(Error::MissingMember {
                pointer: "/servers/0".into(),
                name: "tools"
            })
        );
    }

    #[test]
    fn strict_reading_covers_served_items() {
        let err = read(
            r#"{"schema_version":2,"complete":true,"servers":[{"id":"a","tools":[{"name":"t","name":"u"}]}]}"#,
        )
        .unwrap_err();
        assert_eq!(err.rule(), "duplicate-member");
    }
}

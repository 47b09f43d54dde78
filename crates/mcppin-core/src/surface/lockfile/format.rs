//! The lockfile read and written (docs/formats.md): strict reading that checks every pin
//! against the approved object beside it, and the one byte form it is written in.

use std::collections::BTreeMap;

use super::{LockedItem, LockedServer, Lockfile, Pin, SCHEMA_VERSION};
use crate::artifact;
use crate::canon::to_pretty;
use crate::digest::Digest;
use crate::document::{Document, Error};
use crate::launch::Launch;
use crate::parse::parse;
use crate::surface::{
    AUTH_CONTEXT, AuthContext, Fields, ItemKind, NOT_SERVED, array, check_not_served, count,
    element, item_key, not_served_value, object, put, put_opt, read_auth_context, read_not_served,
    string, string_array, strings, take_list, take_member,
};
use crate::value::{Kind, Object, Value};

const LOCK_MEMBERS: &[&str] = &["schema_version", "approval_serial", "servers"];
const SERVER_MEMBERS: &[&str] = &["id", "reported_name", "protocol_version", "tools"];
/// Version 3 adds how the server is started and the client capabilities of the capture.
const SERVER_MEMBERS_V3: &[&str] = &[
    "id",
    "reported_name",
    "protocol_version",
    "launch",
    "artifact",
    "client_capabilities",
    "tools",
    "prompts",
    "resource_templates",
    "instructions",
    AUTH_CONTEXT,
];
/// Version 4 adds the optional lists a server did not serve and the artifact (read in version
/// 3 only to be refused naming the version that added it).
const SERVER_MEMBERS_V4: &[&str] = &[
    "id",
    "reported_name",
    "protocol_version",
    "launch",
    "artifact",
    "client_capabilities",
    "tools",
    "prompts",
    "resource_templates",
    "instructions",
    NOT_SERVED,
    AUTH_CONTEXT,
];
const INSTRUCTIONS_MEMBERS: &[&str] = &["approved", "digest"];
const ITEM_MEMBERS_V1: &[&str] = &["name", "digest"];
const ITEM_MEMBERS_V2: &[&str] = &["name", "digest", "undecidable_literals", "approved"];

impl Lockfile {
    /// Reads a lockfile under every strict-reading rule and checks it against itself.
    ///
    /// # Errors
    ///
    /// A strict-reading error of [`crate::parse`], or what [`Lockfile::from_value`] refuses.
    pub fn parse(bytes: &[u8]) -> Result<Self, Error> {
        Self::read(parse(bytes)?)
    }

    /// Reads a lockfile (version 1, 2, 3 or 4) from a value already read strictly.
    ///
    /// # Errors
    ///
    /// - [`Error::WrongDocument`] for a manifest or a signature (see [`Document::of`]);
    /// - [`Error::UnsupportedVersion`] for a version other than 1, 2, 3 and 4;
    /// - [`Error::LaterVersionMember`] for a launch `guard` in a lockfile before version 4;
    /// - [`Error::PinMismatch`] when a recorded digest (or list of undecidable literals) is
    ///   not what the approved object beside it gives, [`Error::NameMismatch`] when the
    ///   approved object names another item;
    /// - [`Error::UnknownMember`], [`Error::MissingMember`], [`Error::Invalid`] for members of
    ///   the format; [`Error::DuplicateServer`], [`Error::DuplicateItem`].
    pub fn from_value(value: &Value) -> Result<Self, Error> {
        Self::read(value.clone())
    }

    /// Reads the lockfile, moving the approved objects out of `value` instead of copying them.
    fn read(mut value: Value) -> Result<Self, Error> {
        Document::expect(&value, Document::Lockfile)?;
        let mut entries = take_list(&mut value, "servers");
        let value = &value;
        let version = object(value, "")?
            .get("schema_version")
            .map(|v| count(v, "/schema_version"))
            .transpose()?
            .ok_or_else(|| Error::MissingMember {
                pointer: String::new(),
                name: "schema_version",
            })?;
        if !(1..=SCHEMA_VERSION).contains(&version) {
            return Err(Error::UnsupportedVersion {
                document: Document::Lockfile,
                version,
            });
        }
        let fields = Fields::new(value, "", LOCK_MEMBERS)?;
        let approval_serial = count(
            fields.required("approval_serial")?,
            &fields.at("approval_serial"),
        )?;
        let mut lock = Self {
            schema_version: version,
            approval_serial,
            servers: BTreeMap::new(),
            contexts: BTreeMap::new(),
        };
        let list_pointer = fields.at("servers");
        array(fields.required("servers")?, &list_pointer)?;
        for (i, entry) in entries.iter_mut().enumerate() {
            let pointer = element(&list_pointer, i);
            let (id, context, server) = read_server(entry, &pointer, version)?;
            // The key is the server and its authorization context.
            if lock.entry(&id, context.as_ref()).is_some() {
                return Err(Error::DuplicateServer { pointer, id });
            }
            lock.insert(id, context, server);
        }
        Ok(lock)
    }

    /// The lockfile as a value, in the form of its own version.
    #[must_use]
    pub fn to_value(&self) -> Value {
        let mut o = Object::new();
        put(&mut o, "schema_version", self.schema_version);
        put(&mut o, "approval_serial", self.approval_serial);
        let servers = self
            .entries()
            .map(|(id, context, server)| {
                let mut s = Object::new();
                put(&mut s, "id", id);
                if let Some(context) = context {
                    put(&mut s, AUTH_CONTEXT, context.as_str());
                }
                put_opt(&mut s, "reported_name", server.reported_name.as_deref());
                put_opt(
                    &mut s,
                    "protocol_version",
                    server.protocol_version.as_deref(),
                );
                if self.schema_version >= 3 {
                    if let Some(launch) = &server.launch {
                        put(&mut s, "launch", launch.to_value());
                    }
                    if let Some(artifact) = &server.artifact {
                        put(&mut s, "artifact", artifact.to_value());
                    }
                    if let Some(capabilities) = &server.client_capabilities {
                        put(&mut s, "client_capabilities", capabilities.clone());
                    }
                }
                for kind in ItemKind::ALL {
                    if !(kind.always_listed() || server.widened && self.schema_version >= 3) {
                        continue;
                    }
                    let items = server
                        .items(kind)
                        .iter()
                        .map(|(name, item)| item_value(name, item))
                        .collect();
                    put(&mut s, kind.list_member(), Value::new(Kind::Array(items)));
                }
                if server.widened
                    && self.schema_version >= 3
                    && let Some(text) = &server.instructions
                {
                    let mut i = Object::new();
                    put(&mut i, "approved", text.as_str());
                    put(
                        &mut i,
                        "digest",
                        Pin::of(&Value::from(text.as_str())).to_string(),
                    );
                    put(&mut s, "instructions", Value::from(i));
                }
                if server.widened && !server.not_served.is_empty() {
                    put(&mut s, NOT_SERVED, not_served_value(&server.not_served));
                }
                Value::from(s)
            })
            .collect();
        put(&mut o, "servers", Value::new(Kind::Array(servers)));
        Value::from(o)
    }

    /// The one byte form: sorted keys, two-space indent, trailing newline, servers by id (and
    /// one id's entries by authorization context, the default first), items by key, no
    /// timestamps.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        to_pretty(&self.to_value())
    }

    /// The digest of the lockfile's canonical form, which a signature envelope names as
    /// `lock_digest` (docs/formats.md): [`crate::canonicalize_exact`], so an undecidable literal is
    /// covered as written and where it stands.
    ///
    /// # Errors
    ///
    /// None today; kept fallible so that a future form may refuse.
    pub fn digest(&self) -> Result<Digest, Error> {
        let value = self.to_value();
        Ok(Digest::of_bytes(&crate::canonicalize_exact(&value)))
    }
}

impl TryFrom<Value> for Lockfile {
    type Error = Error;

    /// Reads a lockfile from a value already read strictly, as [`Lockfile::from_value`] does,
    /// moving the approved objects out of it instead of copying them.
    fn try_from(value: Value) -> Result<Self, Error> {
        Self::read(value)
    }
}

fn item_value(name: &str, item: &LockedItem) -> Value {
    let mut o = Object::new();
    put(&mut o, "name", name);
    match &item.pin {
        Pin::Digest(d) => put(&mut o, "digest", d.to_string()),
        Pin::Undecidable(literals) => put(
            &mut o,
            "undecidable_literals",
            string_array(literals.iter().map(String::as_str)),
        ),
    }
    if let Some(approved) = &item.approved {
        put(&mut o, "approved", Value::clone(approved));
    }
    Value::from(o)
}

fn read_server(
    value: &mut Value,
    pointer: &str,
    version: u64,
) -> Result<(String, Option<AuthContext>, LockedServer), Error> {
    let lists = ItemKind::ALL.map(|kind| take_list(value, kind.list_member()));
    let value = &*value;
    let known = match version {
        4.. => SERVER_MEMBERS_V4,
        3 => SERVER_MEMBERS_V3,
        _ => SERVER_MEMBERS,
    };
    let fields = Fields::new(value, pointer, known)?;
    let id = string(fields.required("id")?, &fields.at("id"))?.to_owned();
    let context = read_auth_context(&fields, Document::Lockfile, version)?;
    let mut server = LockedServer {
        reported_name: fields.optional_string("reported_name")?,
        protocol_version: fields.optional_string("protocol_version")?,
        launch: fields
            .optional("launch")
            .map(|v| Launch::read(v, &fields.at("launch"), Document::Lockfile, version))
            .transpose()?,
        artifact: fields
            .optional("artifact")
            .map(|v| artifact::read(v, &fields.at("artifact"), Document::Lockfile, version))
            .transpose()?,
        client_capabilities: fields
            .optional("client_capabilities")
            .map(|v| object(v, &fields.at("client_capabilities")).map(|_| v.clone()))
            .transpose()?,
        tools: BTreeMap::new(),
        widened: fields.optional("prompts").is_some()
            || fields.optional("resource_templates").is_some()
            || fields.optional("instructions").is_some(),
        prompts: BTreeMap::new(),
        resource_templates: BTreeMap::new(),
        instructions: fields
            .optional("instructions")
            .map(|v| read_instructions(v, &fields.at("instructions")))
            .transpose()?,
        not_served: fields
            .optional(NOT_SERVED)
            .map(|v| read_not_served(v, &fields.at(NOT_SERVED)))
            .transpose()?
            .unwrap_or_default(),
    };
    for (kind, mut entries) in ItemKind::ALL.into_iter().zip(lists) {
        if !kind.always_listed() && !server.widened {
            continue;
        }
        let list_pointer = fields.at(kind.list_member());
        array(fields.required(kind.list_member())?, &list_pointer)?;
        for (i, entry) in entries.iter_mut().enumerate() {
            let pointer = element(&list_pointer, i);
            let (name, item) = read_item(entry, &pointer, kind, version)?;
            if server.items(kind).contains_key(&name) {
                return Err(Error::DuplicateItem {
                    pointer,
                    kind,
                    name,
                });
            }
            server.items_mut(kind).insert(name, item);
        }
    }
    check_not_served(&fields, &server.not_served, server.widened, |k| {
        server.items(k).len()
    })?;
    Ok((id, context, server))
}

/// The approved `instructions`: the text beside its digest, checked like an item's.
fn read_instructions(value: &Value, pointer: &str) -> Result<String, Error> {
    let fields = Fields::new(value, pointer, INSTRUCTIONS_MEMBERS)?;
    let text = string(fields.required("approved")?, &fields.at("approved"))?;
    let at = fields.at("digest");
    let recorded = Pin::Digest(
        string(fields.required("digest")?, &at)?
            .parse::<Digest>()
            .map_err(|_| Error::Invalid {
                pointer: at,
                expected: "\"sha256:\" and 64 lowercase hex digits",
            })?,
    );
    let computed = Pin::of(&Value::from(text));
    if computed != recorded {
        return Err(Error::PinMismatch {
            pointer: pointer.to_owned(),
            recorded,
            computed,
        });
    }
    Ok(text.to_owned())
}

fn read_item(
    value: &mut Value,
    pointer: &str,
    kind: ItemKind,
    version: u64,
) -> Result<(String, LockedItem), Error> {
    // Moved out first and checked in its turn below; `null` stands in its place meanwhile.
    let approved = take_member(value, "approved");
    let value = &*value;
    let known = if version == 1 {
        ITEM_MEMBERS_V1
    } else {
        ITEM_MEMBERS_V2
    };
    let fields = Fields::new(value, pointer, known)?;
    let name = string(fields.required("name")?, &fields.at("name"))?.to_owned();
    let read_digest = |v: &Value| -> Result<Digest, Error> {
        string(v, &fields.at("digest"))?
            .parse::<Digest>()
            .map_err(|_| Error::Invalid {
                pointer: fields.at("digest"),
                expected: "\"sha256:\" and 64 lowercase hex digits",
            })
    };
    if version == 1 {
        let pin = Pin::Digest(read_digest(fields.required("digest")?)?);
        return Ok((
            name,
            LockedItem {
                pin,
                approved: None,
            },
        ));
    }
    let recorded = match (
        fields.optional("digest"),
        fields.optional("undecidable_literals"),
    ) {
        (Some(d), None) => Pin::Digest(read_digest(d)?),
        (None, Some(l)) => Pin::Undecidable(strings(l, &fields.at("undecidable_literals"))?),
        _ => {
            return Err(Error::Invalid {
                pointer: pointer.to_owned(),
                expected: "exactly one of \"digest\" and \"undecidable_literals\"",
            });
        }
    };
    let Some(approved) = approved else {
        return Err(Error::MissingMember {
            pointer: pointer.to_owned(),
            name: "approved",
        });
    };
    let approved_pointer = fields.at("approved");
    let approved_name = item_key(kind, &approved, &approved_pointer)?;
    if approved_name != name {
        return Err(Error::NameMismatch {
            pointer: approved_pointer,
            name,
            approved: approved_name.to_owned(),
        });
    }
    let computed = Pin::of(&approved);
    if computed != recorded {
        return Err(Error::PinMismatch {
            pointer: pointer.to_owned(),
            recorded,
            computed,
        });
    }
    Ok((
        name,
        LockedItem {
            pin: recorded,
            approved: Some(std::sync::Arc::new(approved)),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockfile::testing::*;

    #[test]
    fn names_a_manifest_or_a_signature_given_as_the_lockfile() {
        // A swapped file failed on its first unknown member.
        for (text, found) in [
            (v1(), Document::Manifest),
            (
                r#"{"schema_version":2,"scope":[],"servers":[]}"#,
                Document::Manifest,
            ),
            (
                r#"{"algorithm":"ed25519","schema":"mcppin-lock-signature"}"#,
                Document::Signature,
            ),
        ] {
            assert_eq!(
                Lockfile::parse(text.as_bytes()),
                Err(Error::WrongDocument {
                    expected: Document::Lockfile,
                    found
                }),
                "{text}"
            );
        }
        assert_eq!(
            Lockfile::parse(v1().as_bytes()).unwrap_err().to_string(),
            "this is a manifest, not a lockfile"
        );
        // Members of both formats say nothing: the reader's own error stands.
        assert!(matches!(
            Lockfile::parse(
                br#"{"schema_version":2,"approval_serial":1,"complete":true,"servers":[]}"#
            ),
            Err(Error::UnknownMember { .. })
        ));
        let lock = Lockfile::approve(None, &manifest(v1()), &[]).unwrap();
        assert_eq!(Lockfile::parse(&lock.to_bytes()).unwrap(), lock);
    }

    #[test]
    fn refuses_an_edited_approved_object() {
        let lock = Lockfile::approve(None, &manifest(v1()), &[]).unwrap();
        let text = String::from_utf8(lock.to_bytes()).unwrap();
        let edited = text.replace(
            "\"description\": \"Search\"",
            "\"description\": \"Search!\"",
        );
        assert_ne!(edited, text);
        let err = Lockfile::parse(edited.as_bytes()).unwrap_err();
        assert!(
            matches!(&err, Error::PinMismatch { pointer, .. } if pointer == "/servers/0/tools/1"),
            "{err:?}"
        );
        let edited = text.replace(
            "\"default\": 9007199254740993",
            "\"default\": 9007199254740995",
        );
        assert!(matches!(
            Lockfile::parse(edited.as_bytes()),
            Err(Error::PinMismatch { .. })
        ));
        let renamed = text.replace(
            "\"Search\",\n            \"name\": \"search_docs\"",
            "\"Search\",\n            \"name\": \"search_docz\"",
        );
        assert_ne!(renamed, text);
        assert!(matches!(
            Lockfile::parse(renamed.as_bytes()),
            Err(Error::NameMismatch { .. })
        ));
    }

    #[test]
    fn reading_an_owned_value_agrees_with_reading_a_borrowed_one() {
        let text = String::from_utf8(
            Lockfile::approve(None, &manifest(v1()), &[])
                .unwrap()
                .to_bytes(),
        )
        .unwrap();
        let zero = format!("sha256:{}", "0".repeat(64));
        let item = |members: &str| {
            format!(
                r#"{{"schema_version":2,"approval_serial":1,"servers":[{{"id":"a","tools":[{members}]}}]}}"#
            )
        };
        let variants = [
            text,
            item(&format!(
                r#"{{"name":"x","digest":"{zero}","approved":{{"name":"x"}}}}"#
            )),
            item(&format!(
                r#"{{"name":"x","digest":"{zero}","approved":[1]}}"#
            )),
            item(&format!(r#"{{"name":"x","digest":"{zero}"}}"#)),
            item(&format!(
                r#"{{"name":"x","digest":"{zero}","approved":{{}},"x":1}}"#
            )),
            item(&format!(
                r#"{{"name":"y","digest":"{zero}","approved":{{"name":"x"}}}}"#
            )),
            r#"{"schema_version":2,"approval_serial":1,"servers":[{"id":"a","tools":{}}]}"#.into(),
            r#"{"schema_version":2,"approval_serial":1,"servers":{}}"#.into(),
        ];
        let mut refusals = 0;
        for variant in &variants {
            let value = parse(variant.as_bytes()).unwrap();
            let borrowed = Lockfile::from_value(&value);
            refusals += usize::from(borrowed.is_err());
            assert_eq!(Lockfile::try_from(value), borrowed, "{variant}");
        }
        assert_eq!(refusals, variants.len() - 1);
    }

    #[test]
    fn version_3_pins_the_instructions_and_version_2_knows_no_widened_members() {
        let text = |version: u64, digest: &str| {
            format!(
                r#"{{"schema_version":{version},"approval_serial":1,"servers":[{{"id":"a","tools":[],
                "prompts":[],"resource_templates":[],
                "instructions":{{"approved":"Be brief.","digest":"{digest}"}}}}]}}"#
            )
        };
        let right = Pin::of(&Value::from("Be brief.")).to_string();
        let lock = Lockfile::parse(text(3, &right).as_bytes()).unwrap();
        assert_eq!(lock.servers["a"].instructions.as_deref(), Some("Be brief."));
        assert!(lock.servers["a"].widened);
        let wrong = Pin::of(&Value::from("Be long.")).to_string();
        assert!(matches!(
            Lockfile::parse(text(3, &wrong).as_bytes()),
            Err(Error::PinMismatch { ref pointer, .. }) if pointer == "/servers/0/instructions"
        ));
        assert!(matches!(
            Lockfile::parse(text(2, &right).as_bytes()),
            Err(Error::UnknownMember { .. })
        ));
    }

    #[test]
    fn an_artifact_needs_version_4() {
        let text = |version: u64| {
            format!(
                r#"{{"schema_version":{version},"approval_serial":1,"servers":[{{"id":"a","tools":[],
                "artifact":{{"kind":"oci","image":"img:1","digest":"sha256:{}"}}}}]}}"#,
                "0".repeat(64)
            )
        };
        assert!(matches!(
            Lockfile::parse(text(3).as_bytes()),
            Err(Error::LaterVersionMember { ref pointer, version: 3, since: 4, .. })
                if pointer == "/servers/0/artifact"
        ));
        let lock = Lockfile::parse(text(4).as_bytes()).unwrap();
        assert_eq!(lock.servers["a"].artifact.as_ref().unwrap().kind(), "oci");
        assert_eq!(Lockfile::parse(&lock.to_bytes()).unwrap(), lock);
    }

    #[test]
    fn a_guard_in_a_launch_needs_version_4() {
        let text = |version: u64| {
            format!(
                r#"{{"schema_version":{version},"approval_serial":1,"servers":[{{"id":"a","tools":[],
                "launch":{{"command":"npx","args":[],"env":[],"guard":{{"command":"mcppin-guard","args":["--lock","l"]}}}}}}]}}"#
            )
        };
        assert!(matches!(
            Lockfile::parse(text(3).as_bytes()),
            Err(Error::LaterVersionMember { ref pointer, version: 3, since: 4, .. })
                if pointer == "/servers/0/launch/guard"
        ));
        let lock = Lockfile::parse(text(4).as_bytes()).unwrap();
        assert_eq!(Lockfile::parse(&lock.to_bytes()).unwrap(), lock);
        assert!(
            String::from_utf8(lock.to_bytes())
                .unwrap()
                .contains("\"guard\": {")
        );
    }

    #[test]
    fn refuses_unknown_members_and_versions() {
        assert_eq!(
            Lockfile::parse(br#"{"schema_version":2,"approval_serial":1,"servers":[],"x":0}"#),
            Err(Error::UnknownMember {
                pointer: "/x".into(),
                name: "x".into()
            })
        );
        assert_eq!(
            Lockfile::parse(br#"{"schema_version":5,"approval_serial":1,"servers":[]}"#),
            Err(Error::UnsupportedVersion {
                document: Document::Lockfile,
                version: 5
            })
        );
        assert!(matches!(
            Lockfile::parse(
                br#"{"schema_version":2,"approval_serial":1,"servers":[{"id":"a","tools":[{"name":"t","approved":{"name":"t"}}]}]}"#
            ),
            Err(Error::Invalid { .. })
        ));
    }
}

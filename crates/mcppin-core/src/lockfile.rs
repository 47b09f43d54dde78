//! The lockfile: the approved surface, each item stored whole beside its digest (docs/formats.md).
//!
//! Reading checks the file against itself: every digest is recomputed from the approved
//! object beside it, so a file whose halves disagree is refused rather than trusted.
//! Writing produces one byte form, so re-locking an unchanged surface writes identical bytes
//! and a signature over them keeps holding.
//!
//! ```
//! use mcppin_core::lockfile::{Lockfile, Selection};
//! use mcppin_core::manifest::Manifest;
//!
//! let manifest = Manifest::parse(br#"{"schema_version": 2, "complete": true, "servers": [
//!   {"id": "docs", "tools": [{"name": "search_docs", "description": "Search the docs"}]}]}"#)?;
//! let lock = Lockfile::approve(None, &manifest, &[])?;
//! assert_eq!(lock.approval_serial, 1);
//! let bytes = lock.to_bytes();
//! let again = Lockfile::approve(Some(&Lockfile::parse(&bytes)?), &manifest, &[])?;
//! assert_eq!(again.to_bytes(), bytes, "an unchanged surface writes identical bytes");
//! # Ok::<(), mcppin_core::Error>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::canon::to_pretty;
use crate::digest::{Digest, digest};
use crate::error::{Document, Error};
use crate::manifest::{Manifest, ServerSurface};
use crate::parse::parse;
use crate::surface::{
    Fields, ItemKind, array, count, element, item_key, label, object, parse_label, put, put_opt,
    string, string_array, strings, take_list, take_member,
};
use crate::value::{Kind, Object, Value};

/// The `schema_version` this crate writes.
pub const SCHEMA_VERSION: u64 = 2;

/// An approved surface. Holding a `Lockfile` means it passed the self-check: every pin
/// matches the approved object beside it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Lockfile {
    schema_version: u64,
    /// Counts approvals: moved by one each time the approved surface moves (docs/formats.md).
    pub approval_serial: u64,
    /// The approved servers, by configuration id.
    pub servers: BTreeMap<String, LockedServer>,
}

/// The approved surface of one server.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct LockedServer {
    /// What the server called itself when approved; absent when it said nothing.
    pub reported_name: Option<String>,
    /// The protocol revision it was approved over.
    pub protocol_version: Option<String>,
    /// The approved tools, by name.
    pub tools: BTreeMap<String, LockedItem>,
}

impl LockedServer {
    /// The approved items of `kind`.
    #[must_use]
    pub fn items(&self, kind: ItemKind) -> &BTreeMap<String, LockedItem> {
        match kind {
            ItemKind::Tool => &self.tools,
        }
    }

    /// The approved items of `kind`, for changing.
    pub fn items_mut(&mut self, kind: ItemKind) -> &mut BTreeMap<String, LockedItem> {
        match kind {
            ItemKind::Tool => &mut self.tools,
        }
    }
}

/// One approved item: its pin and, from version 2 on, the whole approved object.
#[derive(Clone, Debug, PartialEq)]
pub struct LockedItem {
    pin: Pin,
    approved: Option<Value>,
}

/// What an item is pinned by.
#[derive(Clone, Debug, Eq, Hash, PartialEq)]
pub enum Pin {
    /// The digest of the item's canonical form.
    Digest(Digest),
    /// The item holds number literals a float64 cannot pin down, so it has no digest (docs/json.md)
    ///; it is compared by its canonical form only where that is decidable, which is
    /// never: such an item is never reported as matching.
    Undecidable(Vec<String>),
}

impl Pin {
    /// The pin of a served item: its digest, or its undecidable literals.
    #[must_use]
    pub fn of(item: &Value) -> Self {
        match digest(item) {
            Ok(d) => Self::Digest(d),
            Err(_) => Self::Undecidable(
                item.undecidable_literals()
                    .into_iter()
                    .map(|n| n.literal().to_owned())
                    .collect(),
            ),
        }
    }

    /// The digest, when the item has one.
    #[must_use]
    pub fn digest(&self) -> Option<Digest> {
        match self {
            Self::Digest(d) => Some(*d),
            Self::Undecidable(_) => None,
        }
    }
}

impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Digest(d) => write!(f, "{d}"),
            Self::Undecidable(literals) => write!(
                f,
                "undecidable literals [{}]",
                crate::escape(&literals.join(", "))
            ),
        }
    }
}

impl LockedItem {
    /// Approves a served item as it is.
    ///
    /// [`Lockfile::approve`] takes its items from a [`Manifest`], whose items all fit a
    /// lockfile ([`crate::surface::MAX_ITEM_DEPTH`]). An item built by hand is not checked
    /// here: one nesting deeper can be compared, but a lockfile holding it would be written in
    /// a form its reader refuses.
    #[must_use]
    pub fn approve(item: Value) -> Self {
        Self {
            pin: Pin::of(&item),
            approved: Some(item),
        }
    }

    /// The pin.
    #[must_use]
    pub fn pin(&self) -> &Pin {
        &self.pin
    }

    /// The approved object; `None` only for items read from a version 1 lockfile, which
    /// stored digests alone.
    #[must_use]
    pub fn approved(&self) -> Option<&Value> {
        self.approved.as_ref()
    }
}

/// What `mcppin lock --approve` takes from the manifest: a whole server, or one item of it.
#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub enum Selection {
    /// `SERVER`: the server's whole surface, its name and protocol revision; naming a server
    /// that a complete capture covering it no longer serves approves its withdrawal.
    Server(String),
    /// `SERVER/ITEM`: one item (of any kind) with that key; approving an item the manifest
    /// no longer has, from a complete capture, approves its removal.
    Item {
        /// The server id.
        server: String,
        /// The item key (a tool name).
        name: String,
    },
}

impl FromStr for Selection {
    type Err = Error;

    /// `SERVER` or `SERVER/ITEM`, each part written as [`label`] writes it (`~1` for a `/`
    /// inside a part, `~0` for a `~`, `<U+XXXX>` escapes read back): the text a report prints
    /// for an item selects that item. The first `/` separates the parts; a later one belongs
    /// to the item key.
    fn from_str(s: &str) -> Result<Self, Error> {
        match parse_label(s) {
            Some((server, None)) => Ok(Self::Server(server)),
            Some((server, Some(name))) => Ok(Self::Item { server, name }),
            None => Err(Error::InvalidSelection { text: s.to_owned() }),
        }
    }
}

impl fmt::Display for Selection {
    /// The label ([`label`]), which reads back as the same selection.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Server(s) => f.write_str(&label(s, None)),
            Self::Item { server, name } => f.write_str(&label(server, Some(name))),
        }
    }
}

const LOCK_MEMBERS: &[&str] = &["schema_version", "approval_serial", "servers"];
const SERVER_MEMBERS: &[&str] = &["id", "reported_name", "protocol_version", "tools"];
const ITEM_MEMBERS_V1: &[&str] = &["name", "digest"];
const ITEM_MEMBERS_V2: &[&str] = &["name", "digest", "undecidable_literals", "approved"];

impl Default for Lockfile {
    fn default() -> Self {
        Self::new()
    }
}

impl Lockfile {
    /// An empty lockfile of the current version, serial 0.
    #[must_use]
    pub fn new() -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            approval_serial: 0,
            servers: BTreeMap::new(),
        }
    }

    /// The `schema_version` the file was read with (new lockfiles: [`SCHEMA_VERSION`]).
    #[must_use]
    pub fn schema_version(&self) -> u64 {
        self.schema_version
    }

    /// Reads a lockfile under every strict-reading rule and checks it against itself.
    ///
    /// # Errors
    ///
    /// A strict-reading error of [`crate::parse`], or what [`Lockfile::from_value`] refuses.
    pub fn parse(bytes: &[u8]) -> Result<Self, Error> {
        Self::read(parse(bytes)?)
    }

    /// Reads a lockfile (version 1 or 2) from a value already read strictly.
    ///
    /// # Errors
    ///
    /// - [`Error::WrongDocument`] for a manifest or a signature (see [`Document::of`]);
    /// - [`Error::UnsupportedVersion`] for a version other than 1 and 2;
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
        let mut servers = BTreeMap::new();
        let list_pointer = fields.at("servers");
        array(fields.required("servers")?, &list_pointer)?;
        for (i, entry) in entries.iter_mut().enumerate() {
            let pointer = element(&list_pointer, i);
            let (id, server) = read_server(entry, &pointer, version)?;
            if servers.contains_key(&id) {
                return Err(Error::DuplicateServer { pointer, id });
            }
            servers.insert(id, server);
        }
        Ok(Self {
            schema_version: version,
            approval_serial,
            servers,
        })
    }

    /// The lockfile as a value, in the form of its own version.
    #[must_use]
    pub fn to_value(&self) -> Value {
        let mut o = Object::new();
        put(&mut o, "schema_version", self.schema_version);
        put(&mut o, "approval_serial", self.approval_serial);
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
                for kind in ItemKind::ALL {
                    let items = server
                        .items(kind)
                        .iter()
                        .map(|(name, item)| item_value(name, item))
                        .collect();
                    put(&mut s, kind.list_member(), Value::new(Kind::Array(items)));
                }
                Value::from(s)
            })
            .collect();
        put(&mut o, "servers", Value::new(Kind::Array(servers)));
        Value::from(o)
    }

    /// The one byte form: sorted keys, two-space indent, trailing newline, servers by id,
    /// items by key, no timestamps.
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

    /// Whether two lockfiles approve the same surface: the same servers, names, protocol
    /// revisions and items. The serial and the version of the file do not count.
    #[must_use]
    pub fn same_surface(&self, other: &Self) -> bool {
        self.servers.len() == other.servers.len()
            && self.servers.iter().all(|(id, a)| {
                other.servers.get(id).is_some_and(|b| {
                    a.reported_name == b.reported_name
                        && a.protocol_version == b.protocol_version
                        && ItemKind::ALL
                            .iter()
                            .all(|&k| same_items(a.items(k), b.items(k)))
                })
            })
    }

    /// The lockfile that approves `manifest`, starting from `previous` (docs/cli.md, `lock`).
    ///
    /// With an empty `selection`, every server of the manifest is approved as captured; the
    /// servers of `previous` outside a scoped capture's scope stay as they were. With a
    /// selection, only the named servers or items are taken from the manifest and the rest of
    /// `previous` stays; selecting a server or item that a complete capture covering it no
    /// longer serves approves its withdrawal. An incomplete capture cannot prove a withdrawal,
    /// so approved items it did not see are kept. `approval_serial` moves by one when the approved surface moved,
    /// and starts at 1. Items carried from a version 1 lockfile regain their approved object
    /// from the manifest when the digests agree.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownSelection`] when a selection names a server or item the manifest (and,
    /// for a removal, the lockfile) does not have; [`Error::Version1Item`] when a version 1
    /// item is kept but the manifest cannot supply its approved object.
    pub fn approve(
        previous: Option<&Self>,
        manifest: &Manifest,
        selection: &[Selection],
    ) -> Result<Self, Error> {
        let mut next = previous.cloned().unwrap_or_default();
        next.schema_version = SCHEMA_VERSION;
        if selection.is_empty() {
            for (id, surface) in &manifest.servers {
                let kept = next.servers.remove(id);
                next.servers
                    .insert(id.clone(), approve_server(kept, surface, manifest.complete));
            }
            let in_scope = |id: &str| {
                manifest
                    .scope
                    .as_ref()
                    .is_none_or(|scope| scope.contains(id))
            };
            // A server missing from an incomplete capture was not seen, not withdrawn.
            next.servers.retain(|id, _| {
                manifest.servers.contains_key(id) || !in_scope(id) || !manifest.complete
            });
        }
        for choice in selection {
            match choice {
                Selection::Server(id) => match manifest.servers.get(id) {
                    Some(surface) => {
                        let kept = next.servers.remove(id);
                        next.servers
                            .insert(id.clone(), approve_server(kept, surface, manifest.complete));
                    }
                    // Approving the withdrawal of a server that a complete capture covering it
                    // no longer serves; anything else names nothing.
                    None if manifest.complete
                        && manifest.scope.as_ref().is_none_or(|s| s.contains(id))
                        && next.servers.remove(id).is_some() => {}
                    None => {
                        return Err(Error::UnknownSelection {
                            selection: choice.clone(),
                        });
                    }
                },
                Selection::Item { server, name } => {
                    approve_item(&mut next, manifest, server, name).ok_or_else(|| {
                        Error::UnknownSelection {
                            selection: choice.clone(),
                        }
                    })?;
                }
            }
        }
        recover_version1(&mut next, manifest)?;
        next.approval_serial = match previous {
            None => 1,
            Some(p) if p.same_surface(&next) => p.approval_serial,
            Some(p) => p.approval_serial.saturating_add(1),
        };
        Ok(next)
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

fn same_items(a: &BTreeMap<String, LockedItem>, b: &BTreeMap<String, LockedItem>) -> bool {
    a.len() == b.len()
        && a.iter().all(|(name, x)| {
            b.get(name).is_some_and(|y| {
                x.pin == y.pin
                    && match (&x.approved, &y.approved) {
                        (Some(p), Some(q)) => p == q,
                        _ => true,
                    }
            })
        })
}

fn approve_server(
    kept: Option<LockedServer>,
    surface: &ServerSurface,
    complete: bool,
) -> LockedServer {
    let mut server = LockedServer {
        reported_name: surface.reported_name.clone(),
        protocol_version: surface.protocol_version.clone(),
        tools: BTreeMap::new(),
    };
    for kind in ItemKind::ALL {
        let items = server.items_mut(kind);
        if !complete {
            // Unseen is not withdrawn: keep what an incomplete capture did not show.
            if let Some(kept) = &kept {
                items.extend(kept.items(kind).iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        for (name, item) in surface.items(kind).iter() {
            items.insert(name.to_owned(), LockedItem::approve(item.clone()));
        }
    }
    server
}

/// Approves one item by key; `None` when there is nothing of that name to approve.
fn approve_item(next: &mut Lockfile, manifest: &Manifest, server: &str, name: &str) -> Option<()> {
    let surface = manifest.servers.get(server)?;
    let mut done = false;
    for kind in ItemKind::ALL {
        if let Some(item) = surface.items(kind).get(name) {
            let entry = next
                .servers
                .entry(server.to_owned())
                .or_insert_with(|| LockedServer {
                    reported_name: surface.reported_name.clone(),
                    protocol_version: surface.protocol_version.clone(),
                    tools: BTreeMap::new(),
                });
            entry
                .items_mut(kind)
                .insert(name.to_owned(), LockedItem::approve(item.clone()));
            done = true;
        } else if manifest.complete {
            // Approving the withdrawal of an item a complete capture no longer shows.
            if let Some(entry) = next.servers.get_mut(server) {
                done |= entry.items_mut(kind).remove(name).is_some();
            }
        }
    }
    done.then_some(())
}

fn recover_version1(next: &mut Lockfile, manifest: &Manifest) -> Result<(), Error> {
    for (id, server) in &mut next.servers {
        for kind in ItemKind::ALL {
            for (name, item) in server.items_mut(kind).iter_mut() {
                if item.approved.is_some() {
                    continue;
                }
                let served = manifest
                    .servers
                    .get(id)
                    .and_then(|s| s.items(kind).get(name))
                    .filter(|v| Pin::of(v) == item.pin)
                    .ok_or_else(|| Error::Version1Item {
                        server: id.clone(),
                        kind,
                        name: name.clone(),
                    })?;
                item.approved = Some(served.clone());
            }
        }
    }
    Ok(())
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
        put(&mut o, "approved", approved.clone());
    }
    Value::from(o)
}

fn read_server(
    value: &mut Value,
    pointer: &str,
    version: u64,
) -> Result<(String, LockedServer), Error> {
    let lists = ItemKind::ALL.map(|kind| take_list(value, kind.list_member()));
    let value = &*value;
    let fields = Fields::new(value, pointer, SERVER_MEMBERS)?;
    let id = string(fields.required("id")?, &fields.at("id"))?.to_owned();
    let mut server = LockedServer {
        reported_name: fields.optional_string("reported_name")?,
        protocol_version: fields.optional_string("protocol_version")?,
        tools: BTreeMap::new(),
    };
    for (kind, mut entries) in ItemKind::ALL.into_iter().zip(lists) {
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
    Ok((id, server))
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
            approved: Some(approved),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(text: &str) -> Manifest {
        Manifest::parse(text.as_bytes()).unwrap()
    }

    fn v1() -> &'static str {
        r#"{"schema_version":2,"complete":true,"servers":[
            {"id":"docs","reported_name":"docs-mcp","tools":[
              {"name":"search_docs","description":"Search"},
              {"name":"big","default":9007199254740993}]},
            {"id":"parcel","tools":[{"name":"delivery_insights"}]}]}"#
    }

    #[test]
    fn names_a_manifest_or_a_signature_given_as_the_lockfile() {
        // Issue 14 item 3: a swapped file failed on its first unknown member.
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
    fn approve_pins_every_item_and_reads_back() {
        let lock = Lockfile::approve(None, &manifest(v1()), &[]).unwrap();
        assert_eq!(lock.approval_serial, 1);
        let docs = &lock.servers["docs"];
        assert!(matches!(docs.tools["search_docs"].pin(), Pin::Digest(_)));
        assert_eq!(
            docs.tools["big"].pin(),
            &Pin::Undecidable(vec!["9007199254740993".into()])
        );
        let bytes = lock.to_bytes();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.contains("\"undecidable_literals\": [\n"), "{text}");
        assert!(!text.contains("\"digest\": \"sha256:") || text.contains("search_docs"));
        assert_eq!(Lockfile::parse(&bytes).unwrap(), lock);
    }

    #[test]
    fn relocking_an_unchanged_surface_keeps_serial_and_bytes() {
        let m = manifest(v1());
        let first = Lockfile::approve(None, &m, &[]).unwrap();
        let second = Lockfile::approve(Some(&first), &m, &[]).unwrap();
        assert_eq!(second.approval_serial, 1);
        assert_eq!(second.to_bytes(), first.to_bytes());
    }

    #[test]
    fn a_moved_surface_moves_the_serial_by_one() {
        let first = Lockfile::approve(None, &manifest(v1()), &[]).unwrap();
        let changed = manifest(&v1().replace("\"Search\"", "\"Search. Pass the email\""));
        let second = Lockfile::approve(Some(&first), &changed, &[]).unwrap();
        assert_eq!(second.approval_serial, 2);
        let renamed = manifest(&v1().replace("docs-mcp", "docs-mcp2"));
        assert_eq!(
            Lockfile::approve(Some(&second), &renamed, &[])
                .unwrap()
                .approval_serial,
            3
        );
    }

    #[test]
    fn approve_selection_takes_only_the_named_items() {
        let first = Lockfile::approve(None, &manifest(v1()), &[]).unwrap();
        let v2 = manifest(
            &v1()
                .replace("\"Search\"", "\"Search. Pass the email\"")
                .replace(
                    "{\"name\":\"delivery_insights\"}",
                    "{\"name\":\"delivery_insights\"},{\"name\":\"get_article\"}",
                ),
        );
        let sel = [Selection::Item {
            server: "parcel".into(),
            name: "get_article".into(),
        }];
        let next = Lockfile::approve(Some(&first), &v2, &sel).unwrap();
        assert!(next.servers["parcel"].tools.contains_key("get_article"));
        // The changed search_docs was not named: its old approval stays.
        assert_eq!(
            next.servers["docs"].tools["search_docs"],
            first.servers["docs"].tools["search_docs"]
        );
        assert_eq!(next.approval_serial, 2);
        let unknown = [Selection::Item {
            server: "parcel".into(),
            name: "nope".into(),
        }];
        assert_eq!(
            Lockfile::approve(Some(&first), &v2, &unknown),
            Err(Error::UnknownSelection {
                selection: unknown[0].clone()
            })
        );
        let whole = [Selection::Server("docs".into())];
        let next = Lockfile::approve(Some(&first), &v2, &whole).unwrap();
        assert_ne!(
            next.servers["docs"].tools["search_docs"],
            first.servers["docs"].tools["search_docs"]
        );
        assert!(!next.servers["parcel"].tools.contains_key("get_article"));
    }

    #[test]
    fn approving_a_withdrawn_server_needs_a_complete_capture_covering_it() {
        // Issue 14, item 4: `--approve SERVER` could not approve a server's withdrawal.
        let first = Lockfile::approve(None, &manifest(v1()), &[]).unwrap();
        let gone = r#"{"schema_version":2,"complete":true,"servers":[
            {"id":"docs","reported_name":"docs-mcp","tools":[
              {"name":"search_docs","description":"Search"},
              {"name":"big","default":9007199254740993}]}]}"#;
        let sel = [Selection::Server("parcel".into())];
        let next = Lockfile::approve(Some(&first), &manifest(gone), &sel).unwrap();
        assert_eq!(next.servers.keys().collect::<Vec<_>>(), ["docs"]);
        assert_eq!(next.approval_serial, 2);
        let refused = Err(Error::UnknownSelection {
            selection: sel[0].clone(),
        });
        let incomplete = gone.replace("\"complete\":true", "\"complete\":false");
        assert_eq!(
            Lockfile::approve(Some(&first), &manifest(&incomplete), &sel),
            refused
        );
        let scoped = gone.replace(
            "\"complete\":true",
            "\"complete\":true,\"scope\":[\"docs\"]",
        );
        assert_eq!(
            Lockfile::approve(Some(&first), &manifest(&scoped), &sel),
            refused
        );
        assert_eq!(Lockfile::approve(None, &manifest(gone), &sel), refused);
    }

    #[test]
    fn approving_a_withdrawn_item_needs_a_complete_capture() {
        let first = Lockfile::approve(None, &manifest(v1()), &[]).unwrap();
        let without = v1().replace(r#"{"name":"delivery_insights"}"#, r#"{"name":"other"}"#);
        let sel = [Selection::Item {
            server: "parcel".into(),
            name: "delivery_insights".into(),
        }];
        let next = Lockfile::approve(Some(&first), &manifest(&without), &sel).unwrap();
        assert!(
            !next.servers["parcel"]
                .tools
                .contains_key("delivery_insights")
        );
        assert!(!next.servers["parcel"].tools.contains_key("other"));
        assert_eq!(next.approval_serial, 2);
        let incomplete = without.replace("\"complete\":true", "\"complete\":false");
        assert_ne!(incomplete, without);
        assert_eq!(
            Lockfile::approve(Some(&first), &manifest(&incomplete), &sel),
            Err(Error::UnknownSelection {
                selection: sel[0].clone()
            })
        );
    }

    #[test]
    fn an_incomplete_capture_keeps_unseen_approvals() {
        let first = Lockfile::approve(None, &manifest(v1()), &[]).unwrap();
        let partial = manifest(
            r#"{"schema_version":2,"complete":false,"servers":[
            {"id":"docs","reported_name":"docs-mcp","tools":[{"name":"search_docs","description":"Search"}]},
            {"id":"parcel","tools":[]}]}"#,
        );
        let next = Lockfile::approve(Some(&first), &partial, &[]).unwrap();
        assert!(next.servers["docs"].tools.contains_key("big"));
        assert_eq!(next.approval_serial, 1);
        let complete = manifest(
            r#"{"schema_version":2,"complete":true,"servers":[
            {"id":"docs","reported_name":"docs-mcp","tools":[{"name":"search_docs","description":"Search"}]},
            {"id":"parcel","tools":[]}]}"#,
        );
        let next = Lockfile::approve(Some(&first), &complete, &[]).unwrap();
        assert!(!next.servers["docs"].tools.contains_key("big"));
        assert_eq!(next.approval_serial, 2);
        // A whole server missing from an incomplete capture is unseen too, not withdrawn.
        let without_parcel = manifest(
            r#"{"schema_version":2,"complete":false,"servers":[
            {"id":"docs","reported_name":"docs-mcp","tools":[{"name":"search_docs","description":"Search"}]}]}"#,
        );
        let next = Lockfile::approve(Some(&first), &without_parcel, &[]).unwrap();
        assert_eq!(next.servers.get("parcel"), first.servers.get("parcel"));
        let complete_without = manifest(
            r#"{"schema_version":2,"complete":true,"servers":[
            {"id":"docs","reported_name":"docs-mcp","tools":[{"name":"search_docs","description":"Search"}]}]}"#,
        );
        let next = Lockfile::approve(Some(&first), &complete_without, &[]).unwrap();
        assert!(
            !next.servers.contains_key("parcel"),
            "a complete capture withdraws it"
        );
    }

    #[test]
    fn a_scoped_capture_leaves_other_servers_alone() {
        let first = Lockfile::approve(None, &manifest(v1()), &[]).unwrap();
        let scoped = manifest(
            r#"{"schema_version":2,"complete":true,"scope":["parcel"],"servers":[
            {"id":"parcel","tools":[{"name":"delivery_insights"}]}]}"#,
        );
        let next = Lockfile::approve(Some(&first), &scoped, &[]).unwrap();
        assert_eq!(next.to_bytes(), first.to_bytes());
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
    fn refuses_unknown_members_and_versions() {
        assert_eq!(
            Lockfile::parse(br#"{"schema_version":2,"approval_serial":1,"servers":[],"x":0}"#),
            Err(Error::UnknownMember {
                pointer: "/x".into(),
                name: "x".into()
            })
        );
        assert_eq!(
            Lockfile::parse(br#"{"schema_version":3,"approval_serial":1,"servers":[]}"#),
            Err(Error::UnsupportedVersion {
                document: Document::Lockfile,
                version: 3
            })
        );
        assert!(matches!(
            Lockfile::parse(
                br#"{"schema_version":2,"approval_serial":1,"servers":[{"id":"a","tools":[{"name":"t","approved":{"name":"t"}}]}]}"#
            ),
            Err(Error::Invalid { .. })
        ));
    }

    #[test]
    fn reads_version_1_and_upgrades_from_a_matching_manifest() {
        let m = manifest(
            r#"{"schema_version":2,"complete":true,"servers":[{"id":"docs","tools":[{"name":"search_docs","description":"Search"}]}]}"#,
        );
        let d = digest(&m.servers["docs"].tools.get("search_docs").unwrap().clone()).unwrap();
        let v1 = format!(
            r#"{{"schema_version":1,"approval_serial":4,"servers":[{{"id":"docs","tools":[{{"name":"search_docs","digest":"{d}"}}]}}]}}"#
        );
        let old = Lockfile::parse(v1.as_bytes()).unwrap();
        assert_eq!(old.schema_version(), 1);
        assert_eq!(old.servers["docs"].tools["search_docs"].approved(), None);
        // Written back in its own version, it reads the same.
        assert_eq!(Lockfile::parse(&old.to_bytes()).unwrap(), old);
        let upgraded = Lockfile::approve(Some(&old), &m, &[]).unwrap();
        assert_eq!(upgraded.schema_version(), 2);
        assert_eq!(upgraded.approval_serial, 4, "the surface did not move");
        assert!(
            upgraded.servers["docs"].tools["search_docs"]
                .approved()
                .is_some()
        );
        // A version 1 item the manifest cannot supply stops a partial approval.
        let other = manifest(
            r#"{"schema_version":2,"complete":true,"servers":[{"id":"docs","tools":[{"name":"search_docs","description":"Changed"},{"name":"x"}]}]}"#,
        );
        let sel = [Selection::Item {
            server: "docs".into(),
            name: "x".into(),
        }];
        assert!(matches!(
            Lockfile::approve(Some(&old), &other, &sel),
            Err(Error::Version1Item { .. })
        ));
    }

    #[test]
    fn selection_text_splits_at_the_first_slash() {
        assert_eq!("a".parse(), Ok(Selection::Server("a".into())));
        assert_eq!(
            "a/b/c".parse(),
            Ok(Selection::Item {
                server: "a".into(),
                name: "b/c".into()
            })
        );
        for bad in ["", "/x", "a/"] {
            assert!(bad.parse::<Selection>().is_err(), "{bad}");
        }
    }

    fn item(server: &str, name: &str) -> Selection {
        Selection::Item {
            server: server.into(),
            name: name.into(),
        }
    }

    #[test]
    fn every_server_id_and_item_name_can_be_selected() {
        // Issue 10, item 9: server "a/b" with tool "c" and server "a" with tool "b/c" printed
        // the same label, and a server id holding "/" could not be approved at all.
        assert_eq!("a~1b/c".parse(), Ok(item("a/b", "c")));
        assert_eq!("a/b~1c".parse(), Ok(item("a", "b/c")));
        assert_eq!("a~1b".parse(), Ok(Selection::Server("a/b".into())));
        assert_eq!("a~0b/~0~1".parse(), Ok(item("a~b", "~/")));
        assert_eq!(
            "ev<U+001B>il/t<U+003C>U+200B>".parse(),
            Ok(item("ev\u{1b}il", "t<U+200B>"))
        );
        for bad in ["a~2", "a~", "a/b~", "<U+>", "a<U+1F>", "a<U+0041"] {
            assert_eq!(
                bad.parse::<Selection>(),
                Err(Error::InvalidSelection { text: bad.into() }),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_selection_prints_as_the_label_that_selects_it() {
        for selection in [
            item("a/b", "c"),
            item("a", "b/c"),
            item("~0", "~1/"),
            item("ev\u{1b}il", "t<U+200B>\u{200B}"),
            Selection::Server("a/b~".into()),
        ] {
            let label = selection.to_string();
            assert!(label.bytes().all(|b| (0x20..0x7F).contains(&b)), "{label}");
            assert_eq!(label.parse(), Ok(selection), "{label}");
        }
        assert_eq!(item("a/b", "c").to_string(), "a~1b/c");
        assert_eq!(item("a", "b/c").to_string(), "a/b~1c");
    }
}

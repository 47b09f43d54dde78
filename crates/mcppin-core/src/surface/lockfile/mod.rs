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
//!
//! This file holds the types; `format` reads and writes the file (docs/formats.md) and
//! `approve` computes the lockfile `mcppin lock` writes ([`Lockfile::approve`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::artifact::Artifact;
use crate::launch::Launch;
use crate::manifest::Manifest;
use crate::surface::{AuthContext, ItemKind};
use crate::value::Value;

mod approve;
mod format;

pub use crate::surface::document::{INSTRUCTIONS_LABEL, Pin, Selection};

/// The `schema_version` this crate writes.
pub const SCHEMA_VERSION: u64 = 4;

/// The `schema_version` that added the server member `not_served` (docs/formats.md): an
/// earlier lockfile holding it is refused.
pub const NOT_SERVED_VERSION: u64 = 4;

/// An approved surface. Holding a `Lockfile` means it passed the self-check: every pin
/// matches the approved object beside it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Lockfile {
    schema_version: u64,
    /// Counts approvals: moved by one each time the approved surface moves (docs/formats.md).
    pub approval_serial: u64,
    /// The servers approved under the default authorization context (no label), by
    /// configuration id.
    pub servers: BTreeMap<String, LockedServer>,
    /// The servers approved under a labelled authorization context (docs/formats.md,
    /// "Authorization context"), by configuration id, then by label: one server may be approved
    /// under several contexts, each its own surface.
    pub contexts: BTreeMap<String, BTreeMap<AuthContext, LockedServer>>,
}

/// What a lockfile approves for one capture: for each server, the entry of the context the
/// capture was made under (see [`Lockfile::for_capture`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CaptureView {
    /// The entries of the capture's contexts, in `servers` by id (`contexts` is empty): what
    /// the capture is compared with.
    pub lock: Lockfile,
    /// The context each entry of `lock` was taken from, by id.
    pub taken: BTreeMap<String, Option<AuthContext>>,
    /// The other entries, left out of the comparison: (id, context, entry).
    pub others: Vec<(String, Option<AuthContext>, LockedServer)>,
    /// The servers the capture serves under a context the lockfile does not approve them
    /// under, though it approves them under others: these cannot be compared.
    pub differs: Vec<ContextDiffers>,
}

/// A server captured under one authorization context and approved under others only.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub struct ContextDiffers {
    /// The server id.
    pub server: String,
    /// The contexts the lockfile approves it under (`None`: the default), default first.
    pub approved: Vec<Option<AuthContext>>,
    /// The context it was captured under.
    pub served: Option<AuthContext>,
}

/// The approved surface of one server.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct LockedServer {
    /// What the server called itself when approved; absent when it said nothing.
    pub reported_name: Option<String>,
    /// The protocol revision it was approved over.
    pub protocol_version: Option<String>,
    /// How it is started, as approved (version 3 on; absent when the capture did not say).
    pub launch: Option<Launch>,
    /// What the launch ran, as approved (version 4 on; absent when no artifact was approved:
    /// an older lockfile, or a capture that did not say).
    pub artifact: Option<Artifact>,
    /// The capabilities the client declared when the approved surface was captured (an
    /// object; version 3 on, absent when the capture did not say).
    pub client_capabilities: Option<Value>,
    /// The approved tools, by name.
    pub tools: BTreeMap<String, LockedItem>,
    /// Whether the approval covers the widened surface: prompts, resource templates and
    /// `instructions` (version 3 on). Without it they are not compared.
    pub widened: bool,
    /// The approved prompts, by name (meaningful when `widened`).
    pub prompts: BTreeMap<String, LockedItem>,
    /// The approved resource templates, by `uriTemplate` (meaningful when `widened`).
    pub resource_templates: BTreeMap<String, LockedItem>,
    /// The approved `instructions`, `None` when the server gave none (meaningful when
    /// `widened`).
    pub instructions: Option<String>,
    /// The optional lists the server declared but did not serve (`-32601 Method not found`)
    /// when approved: their approved items are none, so whatever a later reading serves there
    /// is unapproved (meaningful when `widened`; version 4). A kind named here has no items.
    pub not_served: BTreeSet<ItemKind>,
}

impl LockedServer {
    /// The approved items of `kind`.
    #[must_use]
    pub fn items(&self, kind: ItemKind) -> &BTreeMap<String, LockedItem> {
        match kind {
            ItemKind::Tool => &self.tools,
            ItemKind::Prompt => &self.prompts,
            ItemKind::ResourceTemplate => &self.resource_templates,
        }
    }

    /// The approved items of `kind`, for changing.
    pub fn items_mut(&mut self, kind: ItemKind) -> &mut BTreeMap<String, LockedItem> {
        match kind {
            ItemKind::Tool => &mut self.tools,
            ItemKind::Prompt => &mut self.prompts,
            ItemKind::ResourceTemplate => &mut self.resource_templates,
        }
    }
}

/// One approved item: its pin and, from version 2 on, the whole approved object. When the
/// object is kept, the pin is always its own (`Pin::of`): every way to make one computes it or
/// checks it, which is what lets the guard give a served tool equal to the object that pin.
#[derive(Clone, Debug, PartialEq)]
pub struct LockedItem {
    pin: Pin,
    /// Shared with the index of a guard's approval (`mcppin_core::engine::ApprovedServer`),
    /// which compares served tools with it.
    approved: Option<Arc<Value>>,
}

impl LockedItem {
    /// Approves a served item as it is.
    ///
    /// [`Lockfile::approve`] takes its items from a [`Manifest`], whose items all fit a
    /// lockfile ([`crate::surface::MAX_ITEM_DEPTH`]). An item built by
    /// hand is not checked here: one nesting deeper can be compared, but a lockfile holding it
    /// would be written in a form its reader refuses.
    #[must_use]
    pub fn approve(item: Value) -> Self {
        Self {
            pin: Pin::of(&item),
            approved: Some(Arc::new(item)),
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
        self.approved.as_deref()
    }

    /// The approved object, shared.
    pub(crate) fn approved_shared(&self) -> Option<&Arc<Value>> {
        self.approved.as_ref()
    }
}

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
            contexts: BTreeMap::new(),
        }
    }

    /// The entry of server `id` approved under `context` (`None`: the default context).
    #[must_use]
    pub fn entry(&self, id: &str, context: Option<&AuthContext>) -> Option<&LockedServer> {
        match context {
            None => self.servers.get(id),
            Some(label) => self.contexts.get(id).and_then(|c| c.get(label)),
        }
    }

    /// The contexts server `id` is approved under, the default first, then the labels in
    /// order; empty when the lockfile does not hold it.
    #[must_use]
    pub fn contexts_of(&self, id: &str) -> Vec<Option<&AuthContext>> {
        let default = self.servers.contains_key(id).then_some(None);
        let labels = self
            .contexts
            .get(id)
            .into_iter()
            .flat_map(|c| c.keys().map(Some));
        default.into_iter().chain(labels).collect()
    }

    /// Every entry: (id, context, entry), by id, the default context first.
    pub fn entries(&self) -> impl Iterator<Item = (&str, Option<&AuthContext>, &LockedServer)> {
        let ids: BTreeSet<&String> = self.servers.keys().chain(self.contexts.keys()).collect();
        ids.into_iter().flat_map(move |id| {
            let default = self.servers.get(id).map(|s| (id.as_str(), None, s));
            let labels = self
                .contexts
                .get(id)
                .into_iter()
                .flat_map(move |c| c.iter().map(move |(l, s)| (id.as_str(), Some(l), s)));
            default.into_iter().chain(labels)
        })
    }

    /// What this lockfile approves for `manifest`: each server the manifest serves, under the
    /// context it was captured under; each server it does not serve, under the first context
    /// of the capture (the contexts of its servers, the default for a capture of none) the
    /// lockfile approves it under. Surfaces of different contexts are never compared: a served
    /// server approved only under other contexts is named in [`CaptureView::differs`] and left
    /// out of the view.
    #[must_use]
    pub fn for_capture(&self, manifest: &Manifest) -> CaptureView {
        let mut captured: Vec<Option<&AuthContext>> = Vec::new();
        for surface in manifest.servers.values() {
            if !captured.contains(&surface.auth_context.as_ref()) {
                captured.push(surface.auth_context.as_ref());
            }
        }
        if captured.is_empty() {
            captured.push(None);
        }
        let mut view = CaptureView {
            lock: Self {
                schema_version: self.schema_version,
                approval_serial: self.approval_serial,
                servers: BTreeMap::new(),
                contexts: BTreeMap::new(),
            },
            taken: BTreeMap::new(),
            others: Vec::new(),
            differs: Vec::new(),
        };
        for (id, context, server) in self.entries() {
            let wanted = match manifest.servers.get(id) {
                Some(surface) => surface.auth_context.as_ref(),
                None => captured
                    .iter()
                    .copied()
                    .find(|c| self.entry(id, *c).is_some())
                    .unwrap_or(None),
            };
            if context == wanted {
                view.lock.servers.insert(id.to_owned(), server.clone());
                view.taken.insert(id.to_owned(), context.cloned());
            } else {
                view.others
                    .push((id.to_owned(), context.cloned(), server.clone()));
            }
        }
        for (id, surface) in &manifest.servers {
            if !view.lock.servers.contains_key(id) && !self.contexts_of(id).is_empty() {
                view.differs.push(ContextDiffers {
                    server: id.clone(),
                    approved: self
                        .contexts_of(id)
                        .into_iter()
                        .map(|c| c.cloned())
                        .collect(),
                    served: surface.auth_context.clone(),
                });
            }
        }
        view
    }

    /// Puts the entry of `id` approved under `context`, replacing any there.
    pub fn insert(&mut self, id: String, context: Option<AuthContext>, server: LockedServer) {
        match context {
            None => {
                self.servers.insert(id, server);
            }
            Some(label) => {
                self.contexts.entry(id).or_default().insert(label, server);
            }
        }
    }

    /// The `schema_version` the file was read with (new lockfiles: [`SCHEMA_VERSION`]).
    #[must_use]
    pub fn schema_version(&self) -> u64 {
        self.schema_version
    }

    /// Whether two lockfiles approve the same surface: the same servers, names, protocol
    /// revisions, items, launches and client capabilities. The serial and the version of the
    /// file do not count, and neither does a launch, a launch's guard (before version 4), an
    /// artifact or capabilities `self` does not record (an older lockfile said nothing about them:
    /// recording them is an upgrade, not a change).
    #[must_use]
    pub fn same_surface(&self, other: &Self) -> bool {
        self.entries().count() == other.entries().count()
            && self.entries().all(|(id, context, a)| {
                other
                    .entry(id, context)
                    .is_some_and(|b| self.same_server(a, b))
            })
    }

    /// Whether the entry `b` approves the surface the entry `a` of this lockfile does.
    fn same_server(&self, a: &LockedServer, b: &LockedServer) -> bool {
        a.reported_name == b.reported_name
            && a.protocol_version == b.protocol_version
            && match (&a.launch, &b.launch) {
                (None, _) => true,
                (Some(was), Some(is)) => was.approves(is, self.schema_version),
                (Some(_), None) => false,
            }
            && match (&a.artifact, &b.artifact) {
                (None, _) => true,
                (Some(was), Some(is)) => was.approves(is) && is.approves(was),
                (Some(_), None) => false,
            }
            && (!a.widened
                || (b.widened && a.instructions == b.instructions && a.not_served == b.not_served))
            && (a.client_capabilities.is_none() || a.client_capabilities == b.client_capabilities)
            && ItemKind::ALL
                .iter()
                .all(|&k| same_items(a.items(k), b.items(k)))
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

/// Fixtures the tests of the lockfile share.
#[cfg(test)]
mod testing {
    use crate::manifest::Manifest;

    pub(super) fn manifest(text: &str) -> Manifest {
        Manifest::parse(text.as_bytes()).unwrap()
    }

    pub(super) fn v1() -> &'static str {
        r#"{"schema_version":2,"complete":true,"servers":[
            {"id":"docs","reported_name":"docs-mcp","tools":[
              {"name":"search_docs","description":"Search"},
              {"name":"big","default":9007199254740993}]},
            {"id":"parcel","tools":[{"name":"delivery_insights"}]}]}"#
    }
}

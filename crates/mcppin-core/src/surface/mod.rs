//! The surface layer (docs/design.md, "Layers inside `mcppin-core`"): this project's own
//! files, read strictly and written in one byte form, each item pinned whole by digest: the
//! [`manifest`] (a captured surface), the [`lockfile`] (the approved one), how a server is
//! launched ([`launch`]) and what its launch ran ([`artifact`]), and the errors of reading
//! them.
//!
//! The surface of a server is its tools, prompts and resource templates, and its
//! `instructions` string (docs/formats.md). Code that walks a surface goes through
//! [`ItemKind`] so that a new kind is one enum variant, not a rewrite; [`Items`] holds the
//! items of one kind keyed by name.
//!
//! Each module is also named from the crate root (`mcppin_core::lockfile::Lockfile`).

pub mod artifact;
pub(crate) mod document;
mod item;
pub mod launch;
pub mod lockfile;
pub mod manifest;

pub use document::{ItemKind, label};
pub(crate) use item::{
    AUTH_CONTEXT, Fields, NOT_SERVED, array, check_not_served, child, count, element, item_key,
    not_served_value, object, put, put_opt, read_auth_context, read_not_served, string,
    string_array, strings, take_list, take_member,
};
pub use item::{AuthContext, AuthContextError, Items, MAX_ITEM_DEPTH, nesting};

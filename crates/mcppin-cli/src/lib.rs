//! What the binaries `mcppin`, `mcppin-export` and `mcppin-guard` share, written once: the
//! exit-code contract ([`exit`]), writing a file through a temporary file and a rename
//! ([`write_atomic`], [`replace_secret`], [`replace_entry`]), reading one to a bound
//! ([`read_at_most`]), the signature beside a lockfile ([`sig_path`]), the approval files of
//! `mcppin verify` and the guard read and checked in one place ([`approval`]), and stopping
//! the servers a binary started when it is told to stop ([`signal`]), a command line clap
//! refused shown without raw control characters ([`usage`]), and every duration flag read with
//! one bound ([`duration`]).
//!
//! An internal crate (never published) on top of `mcppin-core` and `mcppin-sign` only:
//! `mcppin` must never depend on `mcppin-client`, even through this crate. Unlike the libraries, it speaks
//! `anyhow`, the error type of every binary's `run()`.
#![warn(missing_docs, unreachable_pub)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod approval;
pub mod duration;
pub mod exit;
mod fs;
pub mod signal;
pub mod usage;

pub use fs::{
    MAX_DOCUMENT, MAX_SMALL_FILE, check_replaceable, open_to_append, open_to_read, read_at_most,
    read_at_most_from, replace_entry, replace_secret, sig_path, write_atomic,
};

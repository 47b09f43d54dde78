//! The three renderings of a [`Report`](crate::policy::Report) (docs/cli.md): text for a
//! person, JSON for a program (read back by [`from_json`]), SARIF 2.1.0 for code-scanning
//! tools.
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
//!
//! The module holds the types the renderings share; each rendering lives in a file of its own:
//! `text` (the human report), `json` (the JSON report written), `read` (the JSON report read
//! back, [`from_json`]) and `sarif` (the SARIF log and the lockfile line index it locates
//! results with).

use std::collections::BTreeSet;

use crate::digest::Digest;
use crate::lockfile::Lockfile;
use crate::manifest::Manifest;
use crate::policy::Options;

mod json;
mod read;
mod sarif;
mod text;

pub use json::to_json;
pub use read::from_json;
pub use sarif::{
    FINGERPRINT, LockLines, MAX_REASON, SRCROOT, SarifContext, sarif_failure, to_sarif, uri_path,
};
pub use text::{findings_text, findings_text_with, to_text, to_text_with, value_text};

/// The `schema_version` of the JSON report.
pub const SCHEMA_VERSION: u64 = 1;

/// The rule id SARIF uses for what could not be compared (exit 3).
pub const NOT_COMPARED: &str = "not-compared";

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

/// What the signature check of the lockfile found, as the JSON and SARIF reports state it
/// (`docs/signing.md`). The binary that checked the approval fills it in
/// ([`Report::signature`](crate::policy::Report::signature)).
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

/// Fixtures the tests of every rendering share.
#[cfg(test)]
mod testing {
    use std::collections::BTreeSet;

    use super::*;
    use crate::policy::{FailOn, Report, verify};
    use crate::value::Value;

    pub(super) fn report(approved: &str, served: &str) -> Report {
        let a = Manifest::parse(approved.as_bytes()).unwrap();
        let s = Manifest::parse(served.as_bytes()).unwrap();
        verify(
            &Lockfile::approve(None, &a, &[]).unwrap(),
            &s,
            &Options::new(BTreeSet::new(), FailOn::Default),
        )
    }

    pub(super) const HOSTILE: &str = r#"{"schema_version":2,"complete":true,"servers":[
        {"id":"ev\u001b[2Kil\u202e","tools":[{"name":"t\u200bool","description":"x\u001b[2K\u202e\u200by"}]}]}"#;

    pub(super) fn signer() -> Signer {
        Signer {
            key: Digest::of_bytes(b"key"),
            signed_at: "2026-08-01T09:20:00Z".to_owned(),
        }
    }

    pub(super) fn statuses() -> [SignatureStatus; 4] {
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

    pub(super) const HELP: &str = "https://docs.example/mcppin/docs/policies.md";

    /// The SARIF report of `r`, located in the lockfile `lock` (its bytes), its rules linking
    /// to [`HELP`].
    pub(super) fn sarif(r: &Report, lock: &[u8]) -> Value {
        sarif_linking(r, lock, Some(HELP))
    }

    /// The SARIF report of `r`, located in the lockfile `lock` (its bytes), its rules linking
    /// to `help_base` when given.
    pub(super) fn sarif_linking(r: &Report, lock: &[u8], help_base: Option<&str>) -> Value {
        let lines = LockLines::index(lock);
        to_sarif(
            r,
            &SarifContext {
                tool_version: "0.1.0",
                lockfile_uri: "config/mcp.lock.json",
                lines: &lines,
                help_base,
            },
        )
    }

    pub(super) fn results(sarif: &Value) -> &[Value] {
        sarif
            .pointer("/runs/0/results")
            .and_then(Value::as_array)
            .unwrap()
    }

    pub(super) fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
        v.pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("{pointer} in {v}"))
    }

    pub(super) fn line_at(v: &Value, pointer: &str) -> usize {
        let n = v.pointer(pointer).and_then(Value::as_number).unwrap();
        n.literal().parse().unwrap()
    }

    pub(super) const TWO: &str = r#"{"schema_version":2,"complete":true,"servers":[
        {"id":"docs","tools":[{"name":"search","description":"Find"},{"name":"fetch"}]},
        {"id":"mail","tools":[{"name":"send"}]}]}"#;
}

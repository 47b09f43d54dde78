//! What a judgement found, and its four renderings (docs/cli.md).
//!
//! A [`Report`] holds every [`Finding`] of a run of [`crate::policy::verify`], each of a
//! [`Policy`] and carrying its [`Evidence`], everything not compared ([`Unverified`]), the
//! notes, the signature check's [`SignatureStatus`] and the verdict ([`Status`]). It is
//! rendered as text for a person, JSON for a program (read back by [`from_json`]), SARIF
//! 2.1.0 for code-scanning tools and Markdown for a pull request or a job summary.
//!
//! Text, SARIF and Markdown render every string that came from a server or a file through
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
//! The module holds the report's types, which the comparison and every rendering share; each
//! rendering lives in a file of its own:
//! `text` (the human report), `json` (the JSON report written), `read` (the JSON report read
//! back, [`from_json`]), `sarif` (the SARIF log and the lockfile line index it locates
//! results with) and `markdown` (the page for a pull request, [`to_markdown`]).

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use crate::artifact::Artifact;
use crate::diff::{Change, ChangeClass};
use crate::digest::Digest;
use crate::launch::Launch;
use crate::lockfile::Pin;
use crate::scan::CollisionKind;
use crate::value::Value;

mod json;
mod markdown;
mod read;
mod sarif;
mod text;

pub use json::to_json;
pub use markdown::{
    MARKDOWN_LIMIT, MarkdownContext, failure_markdown, findings_markdown, to_markdown,
};
pub use read::from_json;
pub use sarif::{
    FINGERPRINT, LockLines, MAX_REASON, SRCROOT, SarifContext, sarif_failure, to_sarif, uri_path,
};
pub use text::{findings_text, findings_text_with, to_text, to_text_with, value_text};

/// The `schema_version` of the JSON report.
pub const SCHEMA_VERSION: u64 = 1;

/// The rule id SARIF uses for what could not be compared (exit 3).
pub const NOT_COMPARED: &str = "not-compared";

/// One finding of one policy: where it is, whether it gates, and its evidence, which names
/// the policy (a finding cannot carry the evidence of another policy).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Finding {
    /// The server id.
    pub server: String,
    /// The item key (tool name), when the finding is about an item.
    pub item: Option<String>,
    /// Whether the finding gates (fails the run).
    pub gated: bool,
    /// What the policy found.
    pub evidence: Evidence,
}

/// What a policy found, one variant per policy of [`Policy::ALL`] (docs/formats.md names the
/// report members each one writes).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Evidence {
    /// An approved tool changed.
    ToolChanged {
        /// The differences, each classified (none for a version 1 lockfile, which holds no
        /// object to compare with).
        changes: Vec<Change>,
        /// The approved pin.
        approved: Pin,
        /// The served pin.
        served: Pin,
    },
    /// A tool nobody approved.
    ToolAdded {
        /// The served tool.
        served: Value,
        /// Its pin.
        served_pin: Pin,
    },
    /// An approved tool no longer offered.
    ToolRemoved {
        /// The approved tool (`None` from a version 1 lockfile, which holds digests only).
        approved: Option<Value>,
        /// Its approved pin.
        approved_pin: Pin,
    },
    /// An approved tool offered under another name, otherwise unchanged.
    ToolRenamed {
        /// The approved name.
        from: String,
        /// The approved tool.
        approved: Value,
        /// The served tool (under the new name).
        served: Value,
    },
    /// An approved prompt changed (fields as for [`Evidence::ToolChanged`]).
    PromptChanged {
        /// The differences, each classified.
        changes: Vec<Change>,
        /// The approved pin.
        approved: Pin,
        /// The served pin.
        served: Pin,
    },
    /// A prompt nobody approved.
    PromptAdded {
        /// The served prompt.
        served: Value,
        /// Its pin.
        served_pin: Pin,
    },
    /// An approved prompt no longer offered.
    PromptRemoved {
        /// The approved prompt.
        approved: Option<Value>,
        /// Its approved pin.
        approved_pin: Pin,
    },
    /// An approved resource template changed.
    ResourceTemplateChanged {
        /// The differences, each classified.
        changes: Vec<Change>,
        /// The approved pin.
        approved: Pin,
        /// The served pin.
        served: Pin,
    },
    /// A resource template nobody approved.
    ResourceTemplateAdded {
        /// The served template.
        served: Value,
        /// Its pin.
        served_pin: Pin,
    },
    /// An approved resource template no longer offered.
    ResourceTemplateRemoved {
        /// The approved template.
        approved: Option<Value>,
        /// Its approved pin.
        approved_pin: Pin,
    },
    /// The server's instructions moved.
    InstructionsChanged {
        /// The approved instructions (`None`: none).
        approved: Option<String>,
        /// The served instructions (`None`: none).
        served: Option<String>,
    },
    /// The server is started otherwise than approved.
    LaunchChanged {
        /// The approved launch.
        approved: Launch,
        /// The captured launch.
        served: Launch,
    },
    /// The server runs another artifact than approved.
    ArtifactChanged {
        /// The approved artifact.
        approved: Artifact,
        /// The captured artifact.
        served: Artifact,
    },
    /// The capture could not pin what the server runs.
    ArtifactUnknown {
        /// Why.
        reason: String,
        /// The artifact the lockfile approved, which this capture could not check (`None`
        /// when it approved none, or an unknown one).
        approved: Option<Artifact>,
    },
    /// The launch fetches a package or image without a pinned version.
    FloatingVersion {
        /// The captured launch.
        launch: Launch,
        /// The package or image, as the launch names it (`pkg@latest`, `image:tag`).
        package: String,
    },
    /// The server's reported name moved.
    ServerRenamed {
        /// The approved name (`None`: absent).
        approved: Option<String>,
        /// The served name (`None`: absent).
        served: Option<String>,
    },
    /// The server negotiated another protocol revision.
    ProtocolChanged {
        /// The approved revision.
        approved: String,
        /// The served revision.
        served: String,
    },
    /// The tool's name collides with another's.
    NameCollision {
        /// The other (server, item).
        other: (String, String),
        /// How the names match.
        kind: CollisionKind,
    },
    /// Text in the item occupies no visible space.
    HiddenCharacters {
        /// The JSON pointer of the string or member in the item.
        pointer: String,
        /// Whether the hidden text is in a member name.
        in_name: bool,
        /// The hidden code points.
        code_points: Vec<u32>,
    },
    /// The tool name draws on more than one writing system.
    MixedScriptName,
    /// The tool name is outside `[A-Za-z0-9._-]{1,128}`.
    InvalidToolName,
}

impl Evidence {
    /// The policy whose evidence this is.
    #[must_use]
    pub fn policy(&self) -> Policy {
        match self {
            Self::ToolChanged { .. } => Policy::ToolChanged,
            Self::ToolAdded { .. } => Policy::ToolAdded,
            Self::ToolRemoved { .. } => Policy::ToolRemoved,
            Self::ToolRenamed { .. } => Policy::ToolRenamed,
            Self::PromptChanged { .. } => Policy::PromptChanged,
            Self::PromptAdded { .. } => Policy::PromptAdded,
            Self::PromptRemoved { .. } => Policy::PromptRemoved,
            Self::ResourceTemplateChanged { .. } => Policy::ResourceTemplateChanged,
            Self::ResourceTemplateAdded { .. } => Policy::ResourceTemplateAdded,
            Self::ResourceTemplateRemoved { .. } => Policy::ResourceTemplateRemoved,
            Self::InstructionsChanged { .. } => Policy::InstructionsChanged,
            Self::ServerRenamed { .. } => Policy::ServerRenamed,
            Self::LaunchChanged { .. } => Policy::LaunchChanged,
            Self::ArtifactChanged { .. } => Policy::ArtifactChanged,
            Self::ArtifactUnknown { .. } => Policy::ArtifactUnknown,
            Self::FloatingVersion { .. } => Policy::FloatingVersion,
            Self::ProtocolChanged { .. } => Policy::ProtocolChanged,
            Self::NameCollision { .. } => Policy::NameCollision,
            Self::HiddenCharacters { .. } => Policy::HiddenCharacters,
            Self::MixedScriptName => Policy::MixedScriptName,
            Self::InvalidToolName => Policy::InvalidToolName,
        }
    }
}

impl Finding {
    /// A finding of `evidence` at `server` (and `item`), gating or not.
    #[must_use]
    pub fn new(evidence: Evidence, server: &str, item: Option<&str>, gated: bool) -> Self {
        Self {
            server: server.to_owned(),
            item: item.map(str::to_owned),
            gated,
            evidence,
        }
    }

    /// The policy, as the evidence names it.
    #[must_use]
    pub fn policy(&self) -> Policy {
        self.evidence.policy()
    }

    /// The JSON pointer into the item of hidden-characters, `None` for the other policies.
    #[must_use]
    pub fn pointer(&self) -> Option<&str> {
        match &self.evidence {
            Evidence::HiddenCharacters { pointer, .. } => Some(pointer),
            _ => None,
        }
    }

    /// The differences of a changed item (empty for the other policies).
    #[must_use]
    pub fn changes(&self) -> &[Change] {
        match &self.evidence {
            Evidence::ToolChanged { changes, .. }
            | Evidence::PromptChanged { changes, .. }
            | Evidence::ResourceTemplateChanged { changes, .. } => changes,
            _ => &[],
        }
    }

    /// The change classes of a changed item, sorted and without repeats.
    #[must_use]
    pub fn classes(&self) -> Vec<ChangeClass> {
        let set: BTreeSet<ChangeClass> = self
            .changes()
            .iter()
            .flat_map(|c| c.classes.iter().copied())
            .collect();
        set.into_iter().collect()
    }
}

/// Something that could not be compared: it could hide a departure.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub struct Unverified {
    /// The server id.
    pub server: String,
    /// The item key, when it is about one item.
    pub item: Option<String>,
    /// Why it could not be compared.
    pub reason: Reason,
}

/// Why something could not be compared.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Reason {
    /// The approved or the served item holds number literals a float64 cannot pin down.
    Undecidable {
        /// The literals.
        literals: Vec<String>,
    },
    /// An approved item the capture did not show, and the capture is incomplete: it may
    /// have been withdrawn, or the capture may have missed it.
    Unseen,
    /// An approved server outside the capture's scope: nothing about it was examined.
    OutsideScope,
    /// A server captured under an authorization context the lockfile does not approve it
    /// under: it approves it under others only, and surfaces of different contexts are not
    /// compared (a server may serve other tools to another authorization).
    AuthContextDiffers {
        /// The contexts the lockfile approves the server under (`default` for the unlabelled
        /// one).
        approved: Vec<String>,
        /// The context of the capture (`default` for the unlabelled one).
        served: String,
    },
}

impl Reason {
    /// The reason's name in reports.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Undecidable { .. } => "undecidable",
            Self::Unseen => "unseen-in-incomplete-capture",
            Self::OutsideScope => "outside-capture-scope",
            Self::AuthContextDiffers { .. } => "auth-context-differs",
        }
    }
}

/// The gate's verdict.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Status {
    /// Every gated policy holds and everything was compared (exit 0).
    Pass,
    /// A gated finding: a departure was proven (exit 1).
    Fail,
    /// Nothing gated was proven, but something that could hide a departure was not compared
    /// (exit 3).
    Partial,
}

impl Status {
    /// `PASS`, `FAIL` or `PARTIAL`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Pass => "PASS",
            Self::Fail => "FAIL",
            Self::Partial => "PARTIAL",
        }
    }

    /// The exit code of docs/cli.md.
    #[must_use]
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Pass => 0,
            Self::Fail => 1,
            Self::Partial => 3,
        }
    }
}

/// The outcome of [`verify`](crate::policy::verify): every finding, everything not compared,
/// and the verdict.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Report {
    /// The policies that gated this run.
    pub gating: Vec<Policy>,
    /// Every finding, by server, item and policy.
    pub findings: Vec<Finding>,
    /// Everything that could not be compared.
    pub unverified: Vec<Unverified>,
    /// How many approved items were compared and matched.
    pub matched: usize,
    /// What the signature check of the lockfile found, when the caller checked it
    /// ([`verify`](crate::policy::verify) leaves it `None`: it judges surfaces, not approvals).
    pub signature: Option<SignatureStatus>,
    /// What explains findings without being one: they change no verdict.
    pub notes: Vec<Note>,
}

/// A fact of the comparison that explains findings without being one (it gates nothing and
/// changes no verdict).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Note {
    /// The manifest was captured declaring other client capabilities than the approved capture:
    /// a server may offer a client declaring `sampling`, `roots` or `elicitation` tools it does
    /// not offer one declaring none, so the server's added and removed items may follow from
    /// the capture rather than from the server. Changed items are never explained by it.
    ClientCapabilitiesDiffer {
        /// The server id.
        server: String,
        /// The capabilities of the approved capture (the lockfile's).
        approved: Value,
        /// The capabilities of this capture (the manifest's).
        served: Value,
    },
    /// The lockfile is of a version before launches recorded the guard
    /// ([`crate::launch::GUARD_SINCE`]) and the manifest runs the server behind
    /// `mcppin-guard`: the guard was not compared, so removing it or editing its settings
    /// would pass. Locking again records it (the serial does not move).
    GuardNotCompared {
        /// The server id.
        server: String,
        /// The lockfile's `schema_version`.
        lock_version: u64,
    },
}

impl Note {
    /// The note's name in the reports (`client-capabilities-differ`).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::ClientCapabilitiesDiffer { .. } => "client-capabilities-differ",
            Self::GuardNotCompared { .. } => "guard-not-compared",
        }
    }

    /// The server the note is about.
    #[must_use]
    pub fn server(&self) -> &str {
        match self {
            Self::ClientCapabilitiesDiffer { server, .. }
            | Self::GuardNotCompared { server, .. } => server,
        }
    }
}

impl Report {
    /// A report from its findings and unverified entries; its verdict is [`Report::status`].
    #[must_use]
    pub fn new(
        gating: Vec<Policy>,
        findings: Vec<Finding>,
        unverified: Vec<Unverified>,
        matched: usize,
    ) -> Self {
        Self {
            gating,
            findings,
            unverified,
            matched,
            signature: None,
            notes: Vec::new(),
        }
    }

    /// The verdict, computed from the content so that it never contradicts it: FAIL when a
    /// gated finding exists (1 wins over 3), else PARTIAL when something was not compared,
    /// else PASS.
    #[must_use]
    pub fn status(&self) -> Status {
        if self.findings.iter().any(|f| f.gated) {
            Status::Fail
        } else if !self.unverified.is_empty() {
            Status::Partial
        } else {
            Status::Pass
        }
    }

    /// The exit code of the verdict (0, 1 or 3, docs/cli.md).
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        self.status().exit_code()
    }

    /// How many findings each policy has, and how many of them gate, in [`Policy::ALL`]
    /// order (every policy listed).
    #[must_use]
    pub fn summary(&self) -> Vec<(Policy, usize, usize)> {
        Policy::ALL
            .into_iter()
            .map(|p| {
                let of: Vec<_> = self.findings.iter().filter(|f| f.policy() == p).collect();
                (p, of.len(), of.iter().filter(|f| f.gated).count())
            })
            .collect()
    }
}

/// A policy of docs/policies.md.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[non_exhaustive]
pub enum Policy {
    /// An approved tool no longer canonicalises to what was approved.
    ToolChanged,
    /// A server offers a tool nobody approved.
    ToolAdded,
    /// An approved tool is no longer offered (provable only from a complete capture in
    /// scope).
    ToolRemoved,
    /// An approved tool is no longer offered and an unapproved one is, and the two differ only
    /// in the name.
    ToolRenamed,
    /// An approved prompt no longer canonicalises to what was approved.
    PromptChanged,
    /// A server offers a prompt nobody approved.
    PromptAdded,
    /// An approved prompt is no longer offered (a complete capture).
    PromptRemoved,
    /// An approved resource template no longer canonicalises to what was approved.
    ResourceTemplateChanged,
    /// A server offers a resource template nobody approved.
    ResourceTemplateAdded,
    /// An approved resource template is no longer offered (a complete capture).
    ResourceTemplateRemoved,
    /// A server's `instructions` are not the approved ones (including to or from none).
    InstructionsChanged,
    /// A server's `reported_name` moved, including to absent.
    ServerRenamed,
    /// A server is started otherwise than approved: another command, argument, package,
    /// version, image or URL.
    LaunchChanged,
    /// A server runs other code than approved: another program or script digest, package
    /// version or integrity, distribution hash, image digest or URL.
    ArtifactChanged,
    /// The capture could not pin what a server's launch runs.
    ArtifactUnknown,
    /// A server's launch fetches a package or image whose version is not pinned.
    FloatingVersion,
    /// A server negotiated another protocol revision than the one it was approved over.
    ProtocolChanged,
    /// Two tools have the same name, the same name ignoring case, or the same confusable
    /// skeleton.
    NameCollision,
    /// A string or member name in an item carries text that occupies no visible space.
    HiddenCharacters,
    /// A tool name draws on more than one writing system.
    MixedScriptName,
    /// A tool name is outside `[A-Za-z0-9._-]{1,128}`.
    InvalidToolName,
}

impl Policy {
    /// Every policy, in report order.
    pub const ALL: [Self; 21] = [
        Self::ToolChanged,
        Self::ToolAdded,
        Self::ToolRemoved,
        Self::ToolRenamed,
        Self::PromptChanged,
        Self::PromptAdded,
        Self::PromptRemoved,
        Self::ResourceTemplateChanged,
        Self::ResourceTemplateAdded,
        Self::ResourceTemplateRemoved,
        Self::InstructionsChanged,
        Self::ServerRenamed,
        Self::LaunchChanged,
        Self::ArtifactChanged,
        Self::ArtifactUnknown,
        Self::FloatingVersion,
        Self::ProtocolChanged,
        Self::NameCollision,
        Self::HiddenCharacters,
        Self::MixedScriptName,
        Self::InvalidToolName,
    ];

    /// The policy's name (`tool-changed`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::ToolChanged => "tool-changed",
            Self::ToolAdded => "tool-added",
            Self::ToolRemoved => "tool-removed",
            Self::ToolRenamed => "tool-renamed",
            Self::PromptChanged => "prompt-changed",
            Self::PromptAdded => "prompt-added",
            Self::PromptRemoved => "prompt-removed",
            Self::ResourceTemplateChanged => "resource-template-changed",
            Self::ResourceTemplateAdded => "resource-template-added",
            Self::ResourceTemplateRemoved => "resource-template-removed",
            Self::InstructionsChanged => "instructions-changed",
            Self::ServerRenamed => "server-renamed",
            Self::LaunchChanged => "launch-changed",
            Self::ArtifactChanged => "artifact-changed",
            Self::ArtifactUnknown => "artifact-unknown",
            Self::FloatingVersion => "floating-version",
            Self::ProtocolChanged => "protocol-changed",
            Self::NameCollision => "name-collision",
            Self::HiddenCharacters => "hidden-characters",
            Self::MixedScriptName => "mixed-script-name",
            Self::InvalidToolName => "invalid-tool-name",
        }
    }

    /// Whether `--fail-on default` gates on it (the departures from the approval) or only
    /// reports it.
    #[must_use]
    pub fn gated_by_default(self) -> bool {
        matches!(
            self,
            Self::ToolChanged
                | Self::ToolAdded
                | Self::ToolRemoved
                | Self::ToolRenamed
                | Self::PromptChanged
                | Self::PromptAdded
                | Self::PromptRemoved
                | Self::ResourceTemplateChanged
                | Self::ResourceTemplateAdded
                | Self::ResourceTemplateRemoved
                | Self::InstructionsChanged
                | Self::ServerRenamed
                | Self::LaunchChanged
                | Self::ArtifactChanged
        )
    }

    /// Whether a finding of this policy proves a departure from the approved surface (as
    /// opposed to a property of the served text, which holds whatever was approved).
    #[must_use]
    pub fn is_departure(self) -> bool {
        matches!(
            self,
            Self::ToolChanged
                | Self::ToolAdded
                | Self::ToolRemoved
                | Self::ToolRenamed
                | Self::PromptChanged
                | Self::PromptAdded
                | Self::PromptRemoved
                | Self::ResourceTemplateChanged
                | Self::ResourceTemplateAdded
                | Self::ResourceTemplateRemoved
                | Self::InstructionsChanged
                | Self::ServerRenamed
                | Self::LaunchChanged
                | Self::ArtifactChanged
                | Self::ProtocolChanged
        )
    }

    /// What the policy checks, in one sentence.
    #[must_use]
    pub fn summary(self) -> &'static str {
        match self {
            Self::ToolChanged => "An approved tool no longer canonicalises to what was approved.",
            Self::ToolAdded => "A server offers a tool nobody approved.",
            Self::ToolRemoved => "An approved tool is no longer offered by a complete capture.",
            Self::ToolRenamed => {
                "An approved tool is offered under another name, its definition otherwise unchanged."
            }
            Self::PromptChanged => {
                "An approved prompt no longer canonicalises to what was approved."
            }
            Self::PromptAdded => "A server offers a prompt nobody approved.",
            Self::PromptRemoved => "An approved prompt is no longer offered by a complete capture.",
            Self::ResourceTemplateChanged => {
                "An approved resource template no longer canonicalises to what was approved."
            }
            Self::ResourceTemplateAdded => "A server offers a resource template nobody approved.",
            Self::ResourceTemplateRemoved => {
                "An approved resource template is no longer offered by a complete capture."
            }
            Self::InstructionsChanged => "A server's instructions are not the approved ones.",
            Self::ServerRenamed => "A server reports another name than the one approved.",
            Self::LaunchChanged => "A server is started otherwise than approved.",
            Self::ArtifactChanged => "A server runs other code than the approved artifact.",
            Self::ArtifactUnknown => "The capture could not pin what a server runs.",
            Self::FloatingVersion => {
                "A server's launch fetches a package or image without a pinned version."
            }
            Self::ProtocolChanged => {
                "A server negotiated another protocol revision than the approved one."
            }
            Self::NameCollision => {
                "Two tools share a name, a name ignoring case, or a confusable skeleton."
            }
            Self::HiddenCharacters => "Text in an item occupies no visible space.",
            Self::MixedScriptName => "A tool name draws on more than one writing system.",
            Self::InvalidToolName => "A tool name is outside [A-Za-z0-9._-]{1,128}.",
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A policy the guard applies on the wire (docs/guard.md): one of [`Policy`], or one only the
/// guard has. Every policy name has one source: [`Policy::name`] for the first, this type's
/// [`GuardPolicy::name`] for the others.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[non_exhaustive]
pub enum GuardPolicy {
    /// A policy `mcppin verify` applies too (the guard applies tool-changed and tool-added).
    Surface(Policy),
    /// A call to a tool whose latest served form was refused.
    ToolQuarantined,
    /// A tool name appears twice in one page of the list.
    DuplicateTool,
    /// An answer without the shape the protocol gives it.
    MalformedAnswer,
    /// A session-pinned answer to another method changed.
    SessionPinChanged,
}

impl GuardPolicy {
    /// The policies only the guard has.
    pub const GUARD_ONLY: [Self; 4] = [
        Self::ToolQuarantined,
        Self::DuplicateTool,
        Self::MalformedAnswer,
        Self::SessionPinChanged,
    ];

    /// The policy's name (`tool-quarantined`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Surface(policy) => policy.name(),
            Self::ToolQuarantined => "tool-quarantined",
            Self::DuplicateTool => "duplicate-tool",
            Self::MalformedAnswer => "malformed-answer",
            Self::SessionPinChanged => "session-pin-changed",
        }
    }
}

impl fmt::Display for GuardPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The text was not the name of a policy.
#[derive(Clone, Debug, Eq, PartialEq, thiserror::Error)]
#[error("unknown policy \"{}\"", crate::escape(.0))]
pub struct UnknownPolicy(pub String);

impl FromStr for Policy {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownPolicy(s.to_owned()))
    }
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

/// What the signature check of the lockfile found, as the JSON and SARIF reports state it
/// (`docs/signing.md`). The binary that checked the approval fills it in
/// ([`Report::signature`](Report::signature)).
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
    use crate::lockfile::Lockfile;
    use crate::manifest::Manifest;
    use crate::policy::{FailOn, Options, verify};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_name_is_given_once() {
        let names: Vec<&str> = Policy::ALL
            .into_iter()
            .map(GuardPolicy::Surface)
            .chain(GuardPolicy::GUARD_ONLY)
            .map(GuardPolicy::name)
            .collect();
        let unique: BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        assert_eq!(GuardPolicy::Surface(Policy::ToolAdded).name(), "tool-added");
        assert_eq!(GuardPolicy::ToolQuarantined.to_string(), "tool-quarantined");
        for p in GuardPolicy::GUARD_ONLY {
            assert!(
                p.name().parse::<Policy>().is_err(),
                "{p} gates no verify run"
            );
        }
    }
}

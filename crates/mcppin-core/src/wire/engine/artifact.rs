//! The guard's check of what a server runs (docs/guard.md, "Artifact identity"): the artifact
//! the guard read of the server against the one the lock approved.
//!
//! The guard reads the artifact (files, the engine's image, the launcher's records); this
//! decides whether the server may run, what stderr and the log say, and, once the server is up,
//! what the client is told ([`super::Session::artifact`]). A lock that pins an artifact holds
//! only for that artifact: another one is refused (`artifact-changed`), and so is one the guard
//! could not read (`artifact-unknown`): what could not be checked is not what was approved. A
//! lock that pins none, or an unknown one, is not checked.

use crate::artifact::Artifact;
use crate::lockfile::LockedServer;
use crate::report::Policy;

use super::event::{ArtifactAdmission, Event, Moment, Verdict};
use super::note::{ArtifactNote, Note};

/// What the guard does with the artifact it read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArtifactCheck {
    /// The policy that refuses the server, `None` when it may run (or nothing was checked).
    pub refused: Option<Policy>,
    /// Once the server is up ([`super::Session::artifact`]): the refusals to write to the
    /// client, one line each, for the requests that were waiting.
    pub to_client: Vec<Vec<u8>>,
    /// What to tell the person running the session: on a refusal, a [`Note::Artifact`].
    pub notes: Vec<Note>,
    /// The `artifact_admission` event, when events are on and something was checked.
    pub events: Vec<Event>,
}

/// Whether the lock's entry `approved` has the guard check the artifact of the server at all:
/// only when it pins one.
#[must_use]
pub fn pins_artifact(approved: &LockedServer) -> bool {
    approved.artifact.as_ref().is_some_and(|a| !a.is_unknown())
}

/// Judges `observed`, the artifact the guard read at `moment`, against the lock's entry.
#[must_use]
pub fn check_artifact(
    approved: &LockedServer,
    observed: &Artifact,
    moment: Moment,
    events: bool,
) -> ArtifactCheck {
    let Some(pinned) = approved.artifact.as_ref().filter(|a| !a.is_unknown()) else {
        return ArtifactCheck::default();
    };
    let refused = if let Artifact::Unknown { .. } = observed {
        Some(Policy::ArtifactUnknown)
    } else if pinned.approves(observed) {
        None
    } else {
        Some(Policy::ArtifactChanged)
    };
    let notes = match refused {
        None => Vec::new(),
        Some(policy) => {
            let unread = match observed {
                Artifact::Unknown { reason } => Some(reason.clone()),
                _ => None,
            };
            let moved = if unread.is_some() {
                pinned
                    .entries()
                    .into_iter()
                    .map(|e| (Some(e), None))
                    .collect()
            } else {
                pinned
                    .moved(observed)
                    .iter()
                    .map(|moved| (moved.approved_entry(), moved.served_entry()))
                    .collect()
            };
            vec![Note::Artifact(ArtifactNote {
                policy,
                unread,
                moved,
            })]
        }
    };
    let events = if events {
        vec![Event::ArtifactAdmission(ArtifactAdmission {
            checked: moment,
            approved: pinned.entries(),
            observed: observed.entries(),
            decision: if refused.is_some() {
                Verdict::Deny
            } else {
                Verdict::Allow
            },
            reason: refused.map(Policy::name),
        })]
    } else {
        Vec::new()
    };
    ArtifactCheck {
        refused,
        to_client: Vec::new(),
        notes,
        events,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::{File, NpmPackage};

    fn npm(version: &str, digit: char) -> Artifact {
        Artifact::Npm {
            packages: vec![NpmPackage {
                name: "docs-mcp".into(),
                version: version.into(),
                integrity: format!("sha512-{}==", digit.to_string().repeat(86)),
            }],
        }
    }

    fn approving(artifact: Option<Artifact>) -> LockedServer {
        LockedServer {
            artifact,
            ..LockedServer::default()
        }
    }

    #[test]
    fn holds_for_the_approved_artifact_and_refuses_another() {
        let lock = approving(Some(npm("1.2.0", 'A')));
        let held = check_artifact(&lock, &npm("1.2.0", 'A'), Moment::OnceUp, true);
        assert_eq!(held.refused, None);
        assert!(held.notes.is_empty());
        assert!(matches!(
            &held.events[..],
            [Event::ArtifactAdmission(ArtifactAdmission {
                decision: Verdict::Allow,
                reason: None,
                ..
            })]
        ));
        let moved = check_artifact(&lock, &npm("1.2.1", 'B'), Moment::OnceUp, true);
        assert_eq!(moved.refused, Some(Policy::ArtifactChanged));
        assert_eq!(moved.notes.len(), 1);
        assert_eq!(
            moved.notes[0].to_string(),
            format!(
                "artifact-changed: the server runs another artifact than the lock approved\n  \
                 approved: npm docs-mcp@1.2.0 sha512-{}==\n  served:   npm docs-mcp@1.2.1 \
                 sha512-{}==",
                "A".repeat(86),
                "B".repeat(86)
            )
        );
        let line = serde_json::to_string(&moved.events[0]).unwrap();
        assert!(
            line.starts_with(r#"{"event":"artifact_admission","checked":"once_up","approved":["npm docs-mcp@1.2.0 "#),
            "{line}"
        );
        assert!(
            line.ends_with(r#""decision":"deny","reason":"artifact-changed"}"#),
            "{line}"
        );
    }

    #[test]
    fn a_session_refuses_each_waiting_request_and_stops_on_another_artifact() {
        use crate::engine::{ApprovedServer, Config, Forward, Session};
        let now = std::time::Duration::ZERO;
        let config = Config {
            refuser: "mcppin-guard",
            ..Config::default()
        };
        let session_of = |lock| Session::new(ApprovedServer::unsigned(lock), config);
        let mut session = session_of(approving(Some(npm("1.2.0", 'A'))));
        session.client_line(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            now,
        );
        session.client_line(br#"{"jsonrpc":"2.0","id":"x","method":"custom/verb"}"#, now);
        let check = session.artifact(&npm("1.2.1", 'B'));
        assert_eq!(check.refused, Some(Policy::ArtifactChanged));
        // In the order of the time they were fed, then of their ids' bytes.
        assert_eq!(
            check.to_client,
            [
                br#"{"jsonrpc":"2.0","id":"x","error":{"code":-32001,"message":"mcppin-guard refused a request: the server runs another artifact than approved (artifact-changed)"}}"#.to_vec(),
                br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"mcppin-guard refused initialize: the server runs another artifact than approved (artifact-changed)"}}"#.to_vec(),
            ]
        );
        assert!(session.is_stopped());
        // Nothing the server writes after it is forwarded.
        let answer = br#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
        assert_eq!(session.server_line(answer, now).to_client, Forward::Nothing);

        // The approved artifact: the session goes on, the answer is forwarded.
        let mut session = session_of(approving(Some(npm("1.2.0", 'A'))));
        session.client_line(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            now,
        );
        let check = session.artifact(&npm("1.2.0", 'A'));
        assert_eq!((check.refused, check.to_client.len()), (None, 0));
        assert!(!session.is_stopped());
        assert_eq!(
            session.server_line(answer, now).to_client,
            Forward::Original
        );
    }

    #[test]
    fn refuses_what_it_could_not_read_where_the_lock_pins_an_artifact() {
        let unknown = Artifact::Unknown {
            reason: "npm's cache holds no install\u{1b}[2J".into(),
        };
        let check = check_artifact(
            &approving(Some(npm("1.2.0", 'A'))),
            &unknown,
            Moment::OnceUp,
            false,
        );
        assert_eq!(check.refused, Some(Policy::ArtifactUnknown));
        let note = check.notes[0].to_string();
        assert!(note.contains("no install<U+001B>[2J"), "{note}");
        assert!(check.events.is_empty());
    }

    #[test]
    fn checks_nothing_where_the_lock_pins_no_artifact() {
        let script = Artifact::Local {
            program: File {
                path: "/bin/sh".into(),
                sha256: "a".repeat(64),
            },
            interpreters: Vec::new(),
            files: Vec::new(),
        };
        for lock in [
            approving(None),
            approving(Some(Artifact::Unknown { reason: "r".into() })),
        ] {
            assert!(!pins_artifact(&lock));
            assert_eq!(
                check_artifact(&lock, &script, Moment::BeforeStart, true),
                ArtifactCheck::default()
            );
        }
    }
}

//! The JSON report written: values exactly as served (see [`to_json`]).

use super::{Evidence, Finding, Note, Reason, Report, SCHEMA_VERSION, SignatureStatus, Unverified};
use crate::diff::Change;
use crate::escape::escape;
use crate::lockfile::Pin;
use crate::value::{Object, Value};

/// The JSON report (`schema_version` 1): values exactly as served, every finding with
/// policy, server, item, pointer, gated flag and change classes, the per-policy summary, the
/// run's `status` and `exit_code`, and the `signature` status when the report has one. See
/// `docs/formats.md`.
#[must_use]
pub fn to_json(report: &Report) -> Value {
    let mut o = Object::new();
    o.insert("schema_version", SCHEMA_VERSION);
    o.insert("status", report.status().name());
    o.insert("exit_code", u64::from(report.exit_code()));
    o.insert("matched", report.matched as u64);
    o.insert(
        "gating",
        Value::from(
            report
                .gating
                .iter()
                .map(|p| Value::from(p.name()))
                .collect::<Vec<_>>(),
        ),
    );
    let mut summary = Object::new();
    for (policy, found, gated) in report.summary() {
        let mut s = Object::new();
        s.insert("findings", found as u64);
        s.insert("gated", gated as u64);
        s.insert("gating", report.gating.contains(&policy));
        summary.insert(policy.name(), s);
    }
    o.insert("summary", summary);
    o.insert(
        "findings",
        Value::from(report.findings.iter().map(finding_json).collect::<Vec<_>>()),
    );
    o.insert(
        "unverified",
        Value::from(
            report
                .unverified
                .iter()
                .map(unverified_json)
                .collect::<Vec<_>>(),
        ),
    );
    if let Some(signature) = &report.signature {
        o.insert("signature", signature_json(signature, false));
    }
    // Only when there is one: a report without notes reads as it always did.
    if !report.notes.is_empty() {
        o.insert(
            "notes",
            Value::from(report.notes.iter().map(note_json).collect::<Vec<_>>()),
        );
    }
    Value::from(o)
}

/// One note: `note` (its name), `server`, and what it says.
fn note_json(note: &Note) -> Value {
    let mut o = Object::new();
    o.insert("note", note.name());
    o.insert("server", note.server());
    match note {
        Note::ClientCapabilitiesDiffer {
            approved, served, ..
        } => {
            o.insert("approved", approved.clone());
            o.insert("served", served.clone());
        }
        Note::GuardNotCompared { lock_version, .. } => {
            o.insert("lock_version", *lock_version);
        }
    }
    Value::from(o)
}

/// The `signature` member: `status`, `checked`, `approval_serial`, and the `key`,
/// `signed_at` and `age_seconds` it has (`null` otherwise). `signed_at` is ASCII as the
/// signature crate writes it; with `escaped` (for SARIF) a date built by hand is escaped too.
pub(super) fn signature_json(signature: &SignatureStatus, escaped: bool) -> Value {
    let mut o = Object::new();
    o.insert("status", signature.name());
    o.insert(
        "checked",
        matches!(signature, SignatureStatus::Verified { .. }),
    );
    o.insert("approval_serial", signature.approval_serial());
    let signer = signature.signer();
    o.insert(
        "key",
        signer.map_or_else(Value::null, |s| Value::from(s.key.to_string())),
    );
    o.insert(
        "signed_at",
        signer.map_or_else(Value::null, |s| {
            if escaped {
                Value::from(escape(&s.signed_at).into_owned())
            } else {
                Value::from(s.signed_at.as_str())
            }
        }),
    );
    o.insert(
        "age_seconds",
        match signature {
            SignatureStatus::Verified { age_seconds, .. } => Value::from(*age_seconds),
            _ => Value::null(),
        },
    );
    Value::from(o)
}

fn opt_str(o: &mut Object, name: &str, value: Option<&str>) {
    o.insert(name, value.map_or_else(Value::null, Value::from));
}

fn put_pin(o: &mut Object, prefix: &str, pin: Option<&Pin>) {
    match pin {
        Some(Pin::Digest(d)) => o.insert(format!("{prefix}_digest"), d.to_string()),
        Some(Pin::Undecidable(l)) => o.insert(
            format!("{prefix}_undecidable_literals"),
            Value::from(
                l.iter()
                    .map(|s| Value::from(s.as_str()))
                    .collect::<Vec<_>>(),
            ),
        ),
        None => {}
    }
}

fn finding_json(f: &Finding) -> Value {
    let mut o = Object::new();
    o.insert("policy", f.policy().name());
    o.insert("server", f.server.as_str());
    opt_str(&mut o, "item", f.item.as_deref());
    opt_str(&mut o, "pointer", f.pointer());
    o.insert("gated", f.gated);
    o.insert(
        "classes",
        Value::from(
            f.classes()
                .iter()
                .map(|c| Value::from(c.name()))
                .collect::<Vec<_>>(),
        ),
    );
    match &f.evidence {
        Evidence::ToolChanged {
            changes,
            approved,
            served,
        }
        | Evidence::PromptChanged {
            changes,
            approved,
            served,
        }
        | Evidence::ResourceTemplateChanged {
            changes,
            approved,
            served,
        } => {
            o.insert(
                "changes",
                Value::from(changes.iter().map(change_json).collect::<Vec<_>>()),
            );
            put_pin(&mut o, "approved", Some(approved));
            put_pin(&mut o, "served", Some(served));
        }
        Evidence::ToolAdded { served, served_pin }
        | Evidence::PromptAdded { served, served_pin }
        | Evidence::ResourceTemplateAdded { served, served_pin } => {
            o.insert("served", served.clone());
            put_pin(&mut o, "served", Some(served_pin));
        }
        Evidence::ToolRemoved {
            approved,
            approved_pin,
        }
        | Evidence::PromptRemoved {
            approved,
            approved_pin,
        }
        | Evidence::ResourceTemplateRemoved {
            approved,
            approved_pin,
        } => {
            if let Some(v) = approved {
                o.insert("approved", v.clone());
            }
            put_pin(&mut o, "approved", Some(approved_pin));
        }
        Evidence::ToolRenamed {
            from,
            approved,
            served,
        } => {
            o.insert("from", from.as_str());
            o.insert("approved", approved.clone());
            o.insert("served", served.clone());
        }
        Evidence::LaunchChanged { approved, served } => {
            o.insert("approved", approved.to_value());
            o.insert("served", served.to_value());
        }
        Evidence::ArtifactChanged { approved, served } => {
            o.insert("approved", approved.to_value());
            o.insert("served", served.to_value());
        }
        Evidence::ArtifactUnknown { reason, approved } => {
            o.insert("reason", reason.as_str());
            if let Some(approved) = approved {
                o.insert("approved", approved.to_value());
            }
        }
        Evidence::FloatingVersion { launch, package } => {
            o.insert("launch", launch.to_value());
            o.insert("package", package.as_str());
        }
        Evidence::ServerRenamed { approved, served }
        | Evidence::InstructionsChanged { approved, served } => {
            opt_str(&mut o, "approved", approved.as_deref());
            opt_str(&mut o, "served", served.as_deref());
        }
        Evidence::ProtocolChanged { approved, served } => {
            o.insert("approved", approved.as_str());
            o.insert("served", served.as_str());
        }
        Evidence::NameCollision {
            other: (server, item),
            kind,
        } => {
            let mut other = Object::new();
            other.insert("server", server.as_str());
            other.insert("item", item.as_str());
            o.insert("other", other);
            o.insert("collision", kind.as_str());
        }
        Evidence::HiddenCharacters {
            in_name,
            code_points,
            ..
        } => {
            o.insert("in_name", *in_name);
            o.insert(
                "code_points",
                Value::from(
                    code_points
                        .iter()
                        .map(|c| Value::from(format!("U+{c:04X}")))
                        .collect::<Vec<_>>(),
                ),
            );
        }
        Evidence::MixedScriptName | Evidence::InvalidToolName => {}
    }
    Value::from(o)
}

fn change_json(c: &Change) -> Value {
    let mut o = Object::new();
    o.insert("pointer", c.pointer.as_str());
    if let Some(v) = &c.old {
        o.insert("old", v.clone());
    }
    if let Some(v) = &c.new {
        o.insert("new", v.clone());
    }
    o.insert(
        "classes",
        Value::from(
            c.classes
                .iter()
                .map(|c| Value::from(c.name()))
                .collect::<Vec<_>>(),
        ),
    );
    Value::from(o)
}

fn unverified_json(u: &Unverified) -> Value {
    let mut o = Object::new();
    o.insert("server", u.server.as_str());
    opt_str(&mut o, "item", u.item.as_deref());
    o.insert("reason", u.reason.name());
    if let Reason::Undecidable { literals } = &u.reason {
        o.insert(
            "literals",
            Value::from(
                literals
                    .iter()
                    .map(|s| Value::from(s.as_str()))
                    .collect::<Vec<_>>(),
            ),
        );
    }
    if let Reason::AuthContextDiffers { approved, served } = &u.reason {
        o.insert(
            "approved_contexts",
            Value::from(
                approved
                    .iter()
                    .map(|s| Value::from(s.as_str()))
                    .collect::<Vec<_>>(),
            ),
        );
        o.insert("served_context", served.as_str());
    }
    Value::from(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::Digest;
    use crate::report::from_json;
    use crate::report::testing::*;

    #[test]
    fn json_states_the_signature_and_reads_it_back() {
        let mut r = report(TWO, TWO);
        for status in statuses() {
            r.signature = Some(status.clone());
            let json = to_json(&r);
            let sig = json.get("signature").unwrap();
            assert_eq!(str_at(sig, "/status"), status.name());
            let verified = matches!(status, SignatureStatus::Verified { .. });
            assert_eq!(sig.get("checked"), Some(&Value::from(verified)));
            assert_eq!(
                line_at(sig, "/approval_serial") as u64,
                status.approval_serial()
            );
            if verified {
                assert_eq!(str_at(sig, "/key"), Digest::of_bytes(b"key").to_string());
                assert_eq!(str_at(sig, "/signed_at"), "2026-08-01T09:20:00Z");
                assert_eq!(line_at(sig, "/age_seconds"), 86_400);
            } else {
                assert!(sig.get("age_seconds").unwrap().is_null(), "{sig}");
            }
            let bytes = crate::to_pretty(&json);
            assert_eq!(from_json(&crate::parse(&bytes).unwrap()).unwrap(), r);
            let sarif = sarif(&r, b"");
            assert_eq!(
                sarif.pointer("/runs/0/properties/signature"),
                Some(sig),
                "{sarif}"
            );
        }
        r.signature = None;
        assert!(to_json(&r).get("signature").is_none());
        assert!(
            sarif(&r, b"")
                .pointer("/runs/0/properties/signature")
                .is_none()
        );
    }
}

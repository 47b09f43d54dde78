//! The JSON report read back into a [`Report`], checked against its own findings (see
//! [`from_json`]).

use super::{
    Evidence, Finding, Note, Policy, Reason, Report, SCHEMA_VERSION, SignatureStatus, Signer,
    Unverified, to_json,
};
use crate::artifact::Artifact;
use crate::diff::{Change, ChangeClass};
use crate::digest::Digest;
use crate::document::Error;
use crate::launch::Launch;
use crate::lockfile::Pin;
use crate::scan::CollisionKind;
use crate::surface::{Fields, array, count, element, object, string, strings};
use crate::value::Value;

/// Reads a JSON report back into a [`Report`], checking that its `status`, `exit_code` and
/// `summary` are the ones its findings give.
///
/// # Errors
///
/// [`Error::Invalid`], [`Error::UnknownMember`] or [`Error::MissingMember`], with the JSON
/// pointer, for another `schema_version`, an unknown member, policy, class or reason, or a
/// verdict or summary that disagrees with the findings.
pub fn from_json(value: &Value) -> Result<Report, Error> {
    let f = Fields::new(
        value,
        "",
        &[
            "schema_version",
            "status",
            "exit_code",
            "matched",
            "gating",
            "summary",
            "findings",
            "unverified",
            "signature",
            "notes",
        ],
    )?;
    if count(f.required("schema_version")?, "/schema_version")? != SCHEMA_VERSION {
        return Err(invalid("/schema_version", "schema_version 1"));
    }
    let gating = strings(f.required("gating")?, "/gating")?
        .iter()
        .enumerate()
        .map(|(i, p)| {
            p.parse::<Policy>()
                .map_err(|_| invalid(&element("/gating", i), "a policy name"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let findings = array(f.required("findings")?, "/findings")?
        .iter()
        .enumerate()
        .map(|(i, v)| finding_from(v, &element("/findings", i)))
        .collect::<Result<Vec<_>, _>>()?;
    let unverified = array(f.required("unverified")?, "/unverified")?
        .iter()
        .enumerate()
        .map(|(i, v)| unverified_from(v, &element("/unverified", i)))
        .collect::<Result<Vec<_>, _>>()?;
    let matched = usize::try_from(count(f.required("matched")?, "/matched")?)
        .map_err(|_| invalid("/matched", "a count"))?;
    let mut report = Report::new(gating, findings, unverified, matched);
    report.signature = f
        .optional("signature")
        .map(|v| signature_from(v, "/signature"))
        .transpose()?;
    if let Some(notes) = f.optional("notes") {
        report.notes = array(notes, "/notes")?
            .iter()
            .enumerate()
            .map(|(i, v)| note_from(v, &element("/notes", i)))
            .collect::<Result<Vec<_>, _>>()?;
    }
    if string(f.required("status")?, "/status")? != report.status().name() {
        return Err(invalid("/status", "the status the findings give"));
    }
    if count(f.required("exit_code")?, "/exit_code")? != u64::from(report.exit_code()) {
        return Err(invalid("/exit_code", "the exit code the findings give"));
    }
    object(f.required("summary")?, "/summary")?;
    if f.required("summary")? != to_json(&report).get("summary").unwrap_or(&Value::null()) {
        return Err(invalid("/summary", "the summary the findings give"));
    }
    Ok(report)
}

/// One note, as [`super::json`] writes it.
fn note_from(value: &Value, pointer: &str) -> Result<Note, Error> {
    let f = Fields::new(
        value,
        pointer,
        &["note", "server", "approved", "served", "lock_version"],
    )?;
    let server = string(f.required("server")?, &f.at("server"))?.to_owned();
    match string(f.required("note")?, &f.at("note"))? {
        "client-capabilities-differ" => {
            let approved = f.required("approved")?;
            let served = f.required("served")?;
            object(approved, &f.at("approved"))?;
            object(served, &f.at("served"))?;
            Ok(Note::ClientCapabilitiesDiffer {
                server,
                approved: approved.clone(),
                served: served.clone(),
            })
        }
        "guard-not-compared" => {
            let at = f.at("lock_version");
            let lock_version = count(f.required("lock_version")?, &at)?;
            if lock_version >= crate::launch::GUARD_SINCE {
                return Err(invalid(
                    &at,
                    "a lockfile version before the guard was recorded",
                ));
            }
            Ok(Note::GuardNotCompared {
                server,
                lock_version,
            })
        }
        _ => Err(invalid(&f.at("note"), "a note name")),
    }
}

fn signature_from(value: &Value, pointer: &str) -> Result<SignatureStatus, Error> {
    let f = Fields::new(
        value,
        pointer,
        &[
            "status",
            "checked",
            "approval_serial",
            "key",
            "signed_at",
            "age_seconds",
        ],
    )?;
    let approval_serial = count(f.required("approval_serial")?, &f.at("approval_serial"))?;
    let key = match opt_string_or_null(&f, "key")? {
        None => None,
        Some(k) => Some(
            k.parse::<Digest>()
                .map_err(|_| invalid(&f.at("key"), "a key fingerprint"))?,
        ),
    };
    let signed_at = opt_string_or_null(&f, "signed_at")?;
    let signer = match (key, signed_at) {
        (Some(key), Some(signed_at)) => Some(Signer { key, signed_at }),
        (None, None) => None,
        _ => {
            return Err(invalid(
                &f.at("signed_at"),
                "key and signed_at both or neither",
            ));
        }
    };
    let age = match f.required("age_seconds")? {
        v if v.is_null() => None,
        v => Some(count(v, &f.at("age_seconds"))?),
    };
    let at = f.at("status");
    let status = match (string(f.required("status")?, &at)?, signer, age) {
        ("unsigned", None, None) => SignatureStatus::Unsigned { approval_serial },
        ("unchecked", claim, None) => SignatureStatus::Unchecked {
            approval_serial,
            claim,
        },
        ("verified", Some(signer), Some(age_seconds)) => SignatureStatus::Verified {
            approval_serial,
            signer,
            age_seconds,
        },
        _ => {
            return Err(invalid(
                &at,
                "unsigned, unchecked or verified, with the members each has",
            ));
        }
    };
    let checked = f.required("checked")?.as_bool();
    if checked != Some(matches!(status, SignatureStatus::Verified { .. })) {
        return Err(invalid(&f.at("checked"), "true exactly when verified"));
    }
    Ok(status)
}

fn invalid(pointer: &str, expected: &'static str) -> Error {
    Error::Invalid {
        pointer: pointer.to_owned(),
        expected,
    }
}

fn opt_string_or_null(f: &Fields<'_>, name: &'static str) -> Result<Option<String>, Error> {
    match f.required(name)? {
        v if v.is_null() => Ok(None),
        v => Ok(Some(string(v, &f.at(name))?.to_owned())),
    }
}

fn pin_from(f: &Fields<'_>, prefix: &str) -> Result<Option<Pin>, Error> {
    let digest_name = format!("{prefix}_digest");
    let literals_name = format!("{prefix}_undecidable_literals");
    if let Some(d) = f.optional(&digest_name) {
        let at = f.at(&digest_name);
        return string(d, &at)?
            .parse()
            .map(|d| Some(Pin::Digest(d)))
            .map_err(|_| invalid(&at, "a digest"));
    }
    f.optional(&literals_name)
        .map(|l| strings(l, &f.at(&literals_name)).map(Pin::Undecidable))
        .transpose()
}

/// The members of a finding that hold evidence, each written by some policies only.
const EVIDENCE_MEMBERS: [&str; 15] = [
    "changes",
    "from",
    "launch",
    "package",
    "approved",
    "served",
    "approved_digest",
    "approved_undecidable_literals",
    "served_digest",
    "served_undecidable_literals",
    "other",
    "collision",
    "in_name",
    "code_points",
    "reason",
];

/// The evidence members `policy` writes (docs/formats.md).
fn evidence_members(policy: Policy) -> &'static [&'static str] {
    match policy {
        Policy::ToolChanged | Policy::PromptChanged | Policy::ResourceTemplateChanged => &[
            "changes",
            "approved_digest",
            "approved_undecidable_literals",
            "served_digest",
            "served_undecidable_literals",
        ],
        Policy::ToolAdded | Policy::PromptAdded | Policy::ResourceTemplateAdded => {
            &["served", "served_digest", "served_undecidable_literals"]
        }
        Policy::ToolRemoved | Policy::PromptRemoved | Policy::ResourceTemplateRemoved => &[
            "approved",
            "approved_digest",
            "approved_undecidable_literals",
        ],
        Policy::ToolRenamed => &["from", "approved", "served"],
        Policy::ServerRenamed
        | Policy::ProtocolChanged
        | Policy::LaunchChanged
        | Policy::ArtifactChanged
        | Policy::InstructionsChanged => &["approved", "served"],
        Policy::FloatingVersion => &["launch", "package"],
        Policy::ArtifactUnknown => &["reason", "approved"],
        Policy::NameCollision => &["other", "collision"],
        Policy::HiddenCharacters => &["in_name", "code_points"],
        Policy::MixedScriptName | Policy::InvalidToolName => &[],
    }
}

fn finding_from(value: &Value, pointer: &str) -> Result<Finding, Error> {
    let mut names = vec!["policy", "server", "item", "pointer", "gated", "classes"];
    names.extend(EVIDENCE_MEMBERS);
    let f = Fields::new(value, pointer, &names)?;
    let policy = string(f.required("policy")?, &f.at("policy"))?
        .parse::<Policy>()
        .map_err(|_| invalid(&f.at("policy"), "a policy name"))?;
    // A member of another policy's evidence has no place in this finding.
    if let Some(name) = EVIDENCE_MEMBERS
        .into_iter()
        .find(|n| f.optional(n).is_some() && !evidence_members(policy).contains(n))
    {
        return Err(Error::UnknownMember {
            pointer: f.at(name),
            name: name.to_owned(),
        });
    }
    let server = string(f.required("server")?, &f.at("server"))?;
    let item = opt_string_or_null(&f, "item")?;
    let gated = f
        .required("gated")?
        .as_bool()
        .ok_or_else(|| invalid(&f.at("gated"), "true or false"))?;
    let place = opt_string_or_null(&f, "pointer")?;
    if place.is_some() != (policy == Policy::HiddenCharacters) {
        return Err(invalid(
            &f.at("pointer"),
            "a pointer for hidden-characters, null for the other policies",
        ));
    }
    let pin = |prefix: &str, name: &'static str| {
        pin_from(&f, prefix)?.ok_or_else(|| Error::MissingMember {
            pointer: pointer.to_owned(),
            name,
        })
    };
    let evidence = match policy {
        Policy::ToolChanged | Policy::PromptChanged | Policy::ResourceTemplateChanged => {
            let at = f.at("changes");
            let changes = array(f.required("changes")?, &at)?
                .iter()
                .enumerate()
                .map(|(i, c)| change_from(c, &element(&at, i)))
                .collect::<Result<_, _>>()?;
            let approved = pin("approved", "approved_digest")?;
            let served = pin("served", "served_digest")?;
            match policy {
                Policy::PromptChanged => Evidence::PromptChanged {
                    changes,
                    approved,
                    served,
                },
                Policy::ResourceTemplateChanged => Evidence::ResourceTemplateChanged {
                    changes,
                    approved,
                    served,
                },
                _ => Evidence::ToolChanged {
                    changes,
                    approved,
                    served,
                },
            }
        }
        Policy::ToolAdded | Policy::PromptAdded | Policy::ResourceTemplateAdded => {
            let served = f.required("served")?.clone();
            let served_pin = pin("served", "served_digest")?;
            match policy {
                Policy::PromptAdded => Evidence::PromptAdded { served, served_pin },
                Policy::ResourceTemplateAdded => {
                    Evidence::ResourceTemplateAdded { served, served_pin }
                }
                _ => Evidence::ToolAdded { served, served_pin },
            }
        }
        Policy::ToolRemoved | Policy::PromptRemoved | Policy::ResourceTemplateRemoved => {
            let approved = f.optional("approved").cloned();
            let approved_pin = pin("approved", "approved_digest")?;
            match policy {
                Policy::PromptRemoved => Evidence::PromptRemoved {
                    approved,
                    approved_pin,
                },
                Policy::ResourceTemplateRemoved => Evidence::ResourceTemplateRemoved {
                    approved,
                    approved_pin,
                },
                _ => Evidence::ToolRemoved {
                    approved,
                    approved_pin,
                },
            }
        }
        Policy::InstructionsChanged => Evidence::InstructionsChanged {
            approved: opt_string_or_null(&f, "approved")?,
            served: opt_string_or_null(&f, "served")?,
        },
        Policy::ToolRenamed => Evidence::ToolRenamed {
            from: string(f.required("from")?, &f.at("from"))?.to_owned(),
            approved: f.required("approved")?.clone(),
            served: f.required("served")?.clone(),
        },
        Policy::LaunchChanged => Evidence::LaunchChanged {
            approved: Launch::from_value(f.required("approved")?, &f.at("approved"))?,
            served: Launch::from_value(f.required("served")?, &f.at("served"))?,
        },
        Policy::ArtifactChanged => Evidence::ArtifactChanged {
            approved: Artifact::from_value(f.required("approved")?, &f.at("approved"))?,
            served: Artifact::from_value(f.required("served")?, &f.at("served"))?,
        },
        Policy::ArtifactUnknown => Evidence::ArtifactUnknown {
            reason: string(f.required("reason")?, &f.at("reason"))?.to_owned(),
            approved: f
                .optional("approved")
                .map(|a| Artifact::from_value(a, &f.at("approved")))
                .transpose()?,
        },
        Policy::FloatingVersion => Evidence::FloatingVersion {
            launch: Launch::from_value(f.required("launch")?, &f.at("launch"))?,
            package: string(f.required("package")?, &f.at("package"))?.to_owned(),
        },
        Policy::ServerRenamed => Evidence::ServerRenamed {
            approved: opt_string_or_null(&f, "approved")?,
            served: opt_string_or_null(&f, "served")?,
        },
        Policy::ProtocolChanged => Evidence::ProtocolChanged {
            approved: string(f.required("approved")?, &f.at("approved"))?.to_owned(),
            served: string(f.required("served")?, &f.at("served"))?.to_owned(),
        },
        Policy::NameCollision => {
            let o = Fields::new(f.required("other")?, &f.at("other"), &["server", "item"])?;
            let at = f.at("collision");
            Evidence::NameCollision {
                other: (
                    string(o.required("server")?, &o.at("server"))?.to_owned(),
                    string(o.required("item")?, &o.at("item"))?.to_owned(),
                ),
                kind: match string(f.required("collision")?, &at)? {
                    "exact" => CollisionKind::Exact,
                    "case-insensitive" => CollisionKind::CaseInsensitive,
                    "confusable" => CollisionKind::Confusable,
                    _ => return Err(invalid(&at, "exact, case-insensitive or confusable")),
                },
            }
        }
        Policy::HiddenCharacters => {
            let at = f.at("code_points");
            Evidence::HiddenCharacters {
                pointer: place.unwrap_or_default(),
                in_name: f
                    .required("in_name")?
                    .as_bool()
                    .ok_or_else(|| invalid(&f.at("in_name"), "true or false"))?,
                code_points: strings(f.required("code_points")?, &at)?
                    .iter()
                    .map(|s| {
                        s.strip_prefix("U+")
                            .and_then(|h| u32::from_str_radix(h, 16).ok())
                            .ok_or_else(|| invalid(&at, "code points written U+XXXX"))
                    })
                    .collect::<Result<_, _>>()?,
            }
        }
        Policy::MixedScriptName => Evidence::MixedScriptName,
        Policy::InvalidToolName => Evidence::InvalidToolName,
    };
    let finding = Finding::new(evidence, server, item.as_deref(), gated);
    let classes = strings(f.required("classes")?, &f.at("classes"))?;
    let names: Vec<&str> = finding.classes().iter().map(|c| c.name()).collect();
    if classes != names {
        return Err(invalid(&f.at("classes"), "the classes of the changes"));
    }
    Ok(finding)
}

fn change_from(value: &Value, pointer: &str) -> Result<Change, Error> {
    let f = Fields::new(value, pointer, &["pointer", "old", "new", "classes"])?;
    let at = f.at("classes");
    Ok(Change {
        pointer: string(f.required("pointer")?, &f.at("pointer"))?.to_owned(),
        old: f.optional("old").cloned(),
        new: f.optional("new").cloned(),
        classes: strings(f.required("classes")?, &at)?
            .iter()
            .map(|c| {
                c.parse::<ChangeClass>()
                    .map_err(|_| invalid(&at, "a change class"))
            })
            .collect::<Result<_, _>>()?,
    })
}

fn unverified_from(value: &Value, pointer: &str) -> Result<Unverified, Error> {
    let f = Fields::new(
        value,
        pointer,
        &[
            "server",
            "item",
            "reason",
            "literals",
            "approved_contexts",
            "served_context",
        ],
    )?;
    let at = f.at("reason");
    let reason = match string(f.required("reason")?, &at)? {
        "undecidable" => Reason::Undecidable {
            literals: strings(f.required("literals")?, &f.at("literals"))?,
        },
        "unseen-in-incomplete-capture" => Reason::Unseen,
        "outside-capture-scope" => Reason::OutsideScope,
        "auth-context-differs" => Reason::AuthContextDiffers {
            approved: strings(f.required("approved_contexts")?, &f.at("approved_contexts"))?,
            served: string(f.required("served_context")?, &f.at("served_context"))?.to_owned(),
        },
        _ => return Err(invalid(&at, "a reason")),
    };
    Ok(Unverified {
        server: string(f.required("server")?, &f.at("server"))?.to_owned(),
        item: opt_string_or_null(&f, "item")?,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Status;
    use crate::report::testing::*;

    #[test]
    fn json_round_trips_and_keeps_values_exact() {
        let changed = HOSTILE.replace("x\\u001b", "z\\u001b").replace(
            r#""description""#,
            r#""default":9007199254740993.0,"description""#,
        );
        let r = report(HOSTILE, &changed);
        assert_eq!(r.exit_code(), 1);
        let json = to_json(&r);
        let bytes = crate::to_pretty(&json);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.contains("9007199254740993.0"), "{text}");
        let back = from_json(&crate::parse(&bytes).unwrap()).unwrap();
        assert_eq!(back, r);
    }

    /// A report with a client-capabilities note: approved declaring none, served declaring
    /// roots with one more tool.
    fn noted() -> Report {
        let approved = r#"{"schema_version":3,"complete":true,"servers":[{"id":"s",
            "client_capabilities":{},"tools":[{"name":"t"}]}]}"#;
        let served = approved
            .replace(
                r#""client_capabilities":{}"#,
                r#""client_capabilities":{"roots":{"\u001b":1}}"#,
            )
            .replace(r#"{"name":"t"}"#, r#"{"name":"t"},{"name":"u"}"#);
        report(approved, &served)
    }

    #[test]
    fn json_round_trips_a_note_and_writes_none_when_there_is_none() {
        let r = noted();
        assert_eq!(r.notes.len(), 1);
        let json = to_json(&r);
        let note = json.get("notes").and_then(|n| n.as_array()).unwrap();
        assert_eq!(
            note[0].get("note").and_then(Value::as_str),
            Some("client-capabilities-differ")
        );
        assert_eq!(from_json(&json).unwrap(), r);
        let plain = report(HOSTILE, HOSTILE);
        assert!(to_json(&plain).get("notes").is_none());
    }

    #[test]
    fn json_round_trips_the_guard_note_and_refuses_a_version_that_records_the_guard() {
        let mut r = report(HOSTILE, HOSTILE);
        r.notes = vec![Note::GuardNotCompared {
            server: "s".to_owned(),
            lock_version: 3,
        }];
        let json = to_json(&r);
        assert_eq!(from_json(&json).unwrap(), r);
        let text = String::from_utf8(crate::to_pretty(&json))
            .unwrap()
            .replace("\"lock_version\": 3", "\"lock_version\": 4");
        let err = from_json(&crate::parse(text.as_bytes()).unwrap()).unwrap_err();
        assert!(err.to_string().contains("/notes/0/lock_version"), "{err}");
    }

    #[test]
    fn json_refuses_a_note_it_does_not_know() {
        let text = String::from_utf8(crate::to_pretty(&to_json(&noted())))
            .unwrap()
            .replace("client-capabilities-differ", "weather");
        let err = from_json(&crate::parse(text.as_bytes()).unwrap()).unwrap_err();
        assert!(err.to_string().contains("/notes/0/note"), "{err}");
    }

    #[test]
    fn json_refuses_a_summary_the_findings_do_not_give() {
        let r = report(HOSTILE, HOSTILE);
        let text = String::from_utf8(crate::to_pretty(&to_json(&r))).unwrap();
        let forged = text.replacen("\"findings\": 2", "\"findings\": 0", 1);
        assert_ne!(forged, text);
        assert!(matches!(
            from_json(&crate::parse(forged.as_bytes()).unwrap()),
            Err(Error::Invalid { pointer, .. }) if pointer == "/summary"
        ));
    }

    #[test]
    fn json_refuses_a_signature_that_contradicts_itself() {
        let mut r = report(TWO, TWO);
        r.signature = statuses().into_iter().last();
        let text = String::from_utf8(crate::to_pretty(&to_json(&r))).unwrap();
        for (from, to) in [
            ("\"checked\": true", "\"checked\": false"),
            ("\"age_seconds\": 86400", "\"age_seconds\": null"),
            ("\"status\": \"verified\"", "\"status\": \"unsigned\""),
            (
                "\"signed_at\": \"2026-08-01T09:20:00Z\"",
                "\"signed_at\": null",
            ),
        ] {
            let forged = text.replacen(from, to, 1);
            assert_ne!(forged, text, "{from}");
            assert!(
                matches!(
                    from_json(&crate::parse(forged.as_bytes()).unwrap()),
                    Err(Error::Invalid { pointer, .. }) if pointer.starts_with("/signature/")
                ),
                "{from}"
            );
        }
    }

    #[test]
    fn json_refuses_evidence_of_another_policy_or_none_at_all() {
        let changed = HOSTILE.replace("x\\u001b", "z\\u001b");
        let r = report(HOSTILE, &changed);
        assert_eq!(
            r.findings.iter().map(Finding::policy).collect::<Vec<_>>(),
            [
                Policy::ToolChanged,
                Policy::HiddenCharacters,
                Policy::HiddenCharacters,
                Policy::InvalidToolName
            ]
        );
        let text = String::from_utf8(crate::to_pretty(&to_json(&r))).unwrap();
        assert_eq!(
            from_json(&crate::parse(text.as_bytes()).unwrap()).unwrap(),
            r
        );
        let without = |name: &str| {
            let at = text.find(&format!("\"{name}\"")).unwrap();
            let start = text[..at].rfind('\n').unwrap();
            let end = at + text[at..].find('\n').unwrap();
            format!("{}{}", &text[..start], &text[end..])
        };
        let forgeries = [
            // tool-changed carrying a member of hidden-characters' evidence.
            (
                text.replacen("\"changes\": [", "\"in_name\": true, \"changes\": [", 1),
                "unknown-member",
            ),
            // hidden-characters carrying tool-changed's.
            (
                text.replacen("\"code_points\"", "\"changes\"", 1),
                "unknown-member",
            ),
            // evidence missing.
            (without("served_digest"), "missing-member"),
            (without("in_name"), "missing-member"),
            // the pointer of hidden-characters on another policy.
            (
                text.replacen("\"pointer\": null", "\"pointer\": \"/description\"", 1),
                "invalid",
            ),
        ];
        for (forged, rule) in forgeries {
            assert_ne!(forged, text);
            match from_json(&crate::parse(forged.as_bytes()).unwrap()) {
                Err(e) => assert_eq!(e.rule(), rule, "{e}\n{forged}"),
                Ok(_) => panic!("read back:\n{forged}"),
            }
        }
    }

    #[test]
    fn json_refuses_a_status_the_findings_do_not_give() {
        let r = report(HOSTILE, HOSTILE);
        let text = String::from_utf8(crate::to_pretty(&to_json(&r))).unwrap();
        for (from, to, at) in [
            ("\"status\": \"PASS\"", "\"status\": \"FAIL\"", "/status"),
            ("\"status\": \"PASS\"", "\"status\": \"PARTIAL\"", "/status"),
            ("\"exit_code\": 0", "\"exit_code\": 1", "/exit_code"),
        ] {
            let forged = text.replacen(from, to, 1);
            assert_ne!(forged, text, "{from}");
            assert!(
                matches!(
                    from_json(&crate::parse(forged.as_bytes()).unwrap()),
                    Err(Error::Invalid { ref pointer, .. }) if pointer == at
                ),
                "{to}"
            );
        }
    }

    #[test]
    fn json_reads_back_every_status_the_findings_give() {
        let plain =
            r#"{"schema_version":2,"complete":true,"servers":[{"id":"s","tools":[{"name":"t"}]}]}"#;
        let changed = plain.replace("\"t\"}", "\"t\",\"description\":\"new\"}");
        let unseen = plain
            .replace("true", "false")
            .replace(r#"{"name":"t"}"#, "");
        for (served, status) in [
            (plain.to_owned(), Status::Pass),
            (changed, Status::Fail),
            (unseen, Status::Partial),
        ] {
            let r = report(plain, &served);
            assert_eq!(r.status(), status);
            let back = from_json(&to_json(&r)).unwrap();
            assert_eq!(back.status(), status);
            assert_eq!(back.exit_code(), status.exit_code());
        }
    }
}

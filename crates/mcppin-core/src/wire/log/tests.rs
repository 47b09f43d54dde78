//! The chain written and read back: each check where it fires and where it holds.

use super::*;
use crate::{Number, parse};

const AT: &str = "2026-08-01T09:30:00.000Z";

fn start(run: &str, log_key: Option<Digest>) -> (Chain, Vec<u8>) {
    Chain::start(&Start {
        run,
        server: "docs",
        observed_at: AT,
        guard: "mcppin-guard/0.1.0",
        transport: "stdio",
        mode: "refuse",
        lock_digest: Digest::of_bytes(b"lock"),
        approval_serial: 3,
        lock_key: None,
        log_key,
    })
}

fn event(tool: &str) -> Object {
    let mut event = Object::new();
    event.insert("event", "tool_admission");
    event.insert("session_id", "r1");
    event.insert("request_id", 7_u64);
    event.insert("tool", tool);
    event.insert("decision", "allow");
    event
}

/// A run of `events` tool admissions, stopped: its lines, each with its newline.
fn run(id: &str, events: usize) -> Vec<Vec<u8>> {
    let (mut chain, first) = start(id, None);
    let mut lines = vec![first];
    for i in 0..events {
        lines.push(chain.append(AT, event(&format!("tool{i}"))));
    }
    lines.push(chain.stop(AT, 0).into_line(None));
    lines
}

fn joined(lines: &[Vec<u8>]) -> Vec<u8> {
    lines.concat()
}

fn kinds(report: &Report) -> Vec<(u64, Kind)> {
    report
        .findings
        .iter()
        .map(|f| (f.line, f.kind.clone()))
        .collect()
}

#[test]
fn a_run_as_written_holds() {
    let report = verify(&joined(&run("r1", 3)));
    assert_eq!(kinds(&report), []);
    assert_eq!(report.exit_code(), 0);
    assert_eq!(report.lines, 5);
    let [only] = &report.runs[..] else {
        panic!("{report:?}")
    };
    assert_eq!(
        (
            only.id.as_str(),
            only.start_line,
            only.lines,
            only.last_line
        ),
        ("r1", Some(1), 5, 5)
    );
    assert_eq!(only.server.as_deref(), Some("docs"));
    assert_eq!(only.lock_digest, Some(Digest::of_bytes(b"lock")));
    let end = only.end.as_ref().expect("stopped");
    assert_eq!((end.line, end.exit_code, end.key), (5, Some(0), None));
    assert!(!only.broken);
}

#[test]
fn every_line_is_the_canonical_form_of_its_object_and_names_the_digest_of_the_one_before() {
    let lines = run("r1", 2);
    for pair in lines.windows(2) {
        let (before, line) = (&pair[0], &pair[1]);
        let content = line.strip_suffix(b"\n").unwrap();
        let value = parse(content).unwrap();
        assert_eq!(canonicalize_exact(&value), content);
        let before = Digest::of_bytes(before.strip_suffix(b"\n").unwrap());
        assert_eq!(
            value.get("prev").and_then(Value::as_str),
            Some(&*before.to_string())
        );
    }
    let header = parse(lines[0].strip_suffix(b"\n").unwrap()).unwrap();
    assert!(header.get("prev").is_none());
    assert_eq!(header.get("event").and_then(Value::as_str), Some(START));
}

#[test]
fn an_event_cannot_overwrite_the_chain_members() {
    let (mut chain, _) = start("r1", None);
    let mut forged = event("t");
    forged.insert("seq", 99_u64);
    forged.insert("run", "other");
    forged.insert("prev", "sha256:00");
    let line = chain.append(AT, forged);
    let value = parse(line.strip_suffix(b"\n").unwrap()).unwrap();
    assert_eq!(
        value
            .get("seq")
            .and_then(Value::as_number)
            .map(Number::literal),
        Some("1")
    );
    assert_eq!(value.get("run").and_then(Value::as_str), Some("r1"));
}

#[test]
fn a_request_id_beyond_two_to_the_53_is_kept_as_written_and_chained() {
    let (mut chain, first) = start("r1", None);
    let mut big = event("t");
    big.insert("request_id", parse(b"9007199254740993").unwrap());
    let line = chain.append(AT, big);
    assert!(line.windows(16).any(|w| w == b"9007199254740993"));
    let stop = chain.stop(AT, 0).into_line(None);
    assert_eq!(verify(&[first, line, stop].concat()).exit_code(), 0);
}

#[test]
fn a_changed_byte_breaks_the_chain_at_the_line_after_it() {
    let mut lines = run("r1", 3);
    let text = String::from_utf8(lines[2].clone())
        .unwrap()
        .replace("tool1", "tool9");
    lines[2] = text.into_bytes();
    let report = verify(&joined(&lines));
    let [
        (
            4,
            Kind::Broken {
                previous_line: 3,
                expected,
                found,
            },
        ),
    ] = &kinds(&report)[..]
    else {
        panic!("{report:?}")
    };
    assert_eq!(
        *expected,
        Digest::of_bytes(lines[2].strip_suffix(b"\n").unwrap())
    );
    assert_ne!(expected, found);
    assert_eq!(
        report.findings[0].line, 4,
        "found at the line after the changed one"
    );
    assert_eq!(report.exit_code(), 1);
    assert!(report.runs[0].broken);
}

#[test]
fn a_changed_prev_breaks_the_chain_at_its_own_line() {
    let mut lines = run("r1", 3);
    let text = String::from_utf8(lines[2].clone()).unwrap();
    let at = text.find("\"prev\":\"sha256:").unwrap() + 15;
    let mut bytes = text.into_bytes();
    bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
    lines[2] = bytes;
    let report = verify(&joined(&lines));
    // The changed prev is found at its own line, and the line's changed bytes at the next.
    assert!(
        matches!(
            &kinds(&report)[..],
            [
                (
                    3,
                    Kind::Broken {
                        previous_line: 2,
                        ..
                    }
                ),
                (
                    4,
                    Kind::Broken {
                        previous_line: 3,
                        ..
                    }
                )
            ]
        ),
        "{report:?}"
    );
}

#[test]
fn a_dropped_line_is_a_gap() {
    let mut lines = run("r1", 3);
    lines.remove(2);
    let report = verify(&joined(&lines));
    assert_eq!(
        kinds(&report),
        [(
            3,
            Kind::Gap {
                expected: 2,
                found: 3
            }
        )]
    );
    assert_eq!(report.exit_code(), 1);
}

#[test]
fn two_lines_swapped_are_a_gap_then_a_line_out_of_order() {
    let mut lines = run("r1", 3);
    lines.swap(2, 3);
    let report = verify(&joined(&lines));
    assert_eq!(
        kinds(&report),
        [
            (
                3,
                Kind::Gap {
                    expected: 2,
                    found: 3
                }
            ),
            (
                4,
                Kind::OutOfOrder {
                    expected: 4,
                    found: 2
                }
            ),
        ]
    );
}

#[test]
fn a_cut_inside_the_last_line_is_a_break() {
    let bytes = joined(&run("r1", 2));
    let cut = &bytes[..bytes.len() - 10];
    let report = verify(cut);
    assert_eq!(kinds(&report), [(4, Kind::Cut)]);
    assert_eq!(report.exit_code(), 1);
    let only_the_newline = &bytes[..bytes.len() - 1];
    assert_eq!(kinds(&verify(only_the_newline)), [(4, Kind::Cut)]);
}

#[test]
fn a_cut_between_lines_is_not_seen_without_the_end() {
    // What the chain alone cannot prove: the signed end does (mcppin-sign's check).
    let mut lines = run("r1", 3);
    lines.truncate(3);
    let report = verify(&joined(&lines));
    assert_eq!(kinds(&report), []);
    assert_eq!(report.exit_code(), 0);
    assert!(report.runs[0].end.is_none());
    assert!(report.to_text().contains("not stopped"));
}

#[test]
fn a_line_that_is_not_json_is_a_break_and_the_run_goes_on_after_it() {
    let mut lines = run("r1", 3);
    lines[2] = b"{\"schema_version\": 2, \"run\": \n".to_vec();
    let report = verify(&joined(&lines));
    let found = kinds(&report);
    assert!(
        matches!(found[0], (3, Kind::Malformed(Malformed::NotJson(_)))),
        "{found:?}"
    );
    assert_eq!(
        found[1],
        (
            4,
            Kind::Gap {
                expected: 2,
                found: 3
            }
        )
    );
    assert_eq!(found.len(), 2);
}

#[test]
fn members_the_chain_reads_must_be_there_once() {
    let repeated = b"{\"event\":\"x\",\"prev\":\"a\",\"prev\":\"b\",\"run\":\"r\",\"schema_version\":2,\"seq\":1}\n";
    assert_eq!(
        kinds(&verify(repeated)),
        [(1, Kind::Malformed(Malformed::Repeated("prev")))]
    );
    let escaped_twin = b"{\"event\":\"x\",\"prev\":\"a\",\"pr\\u0065v\":\"b\",\"run\":\"r\",\"schema_version\":2,\"seq\":1}\n";
    assert_eq!(
        kinds(&verify(escaped_twin)),
        [(1, Kind::Malformed(Malformed::Repeated("prev")))]
    );
    let no_seq = b"{\"event\":\"x\",\"run\":\"r\",\"schema_version\":2}\n";
    assert_eq!(
        kinds(&verify(no_seq)),
        [(1, Kind::Malformed(Malformed::Missing("seq")))]
    );
    let fraction = b"{\"event\":\"x\",\"run\":\"r\",\"schema_version\":2,\"seq\":1.0}\n";
    assert!(matches!(
        &kinds(&verify(fraction))[..],
        [(1, Kind::Malformed(Malformed::Invalid { member: "seq", .. }))]
    ));
    let array = b"[1]\n";
    assert_eq!(
        kinds(&verify(array)),
        [(1, Kind::Malformed(Malformed::NotObject))]
    );
    let start_with_prev =
        b"{\"event\":\"guard_start\",\"prev\":null,\"run\":\"r\",\"schema_version\":2,\"seq\":0}\n";
    assert_eq!(
        kinds(&verify(start_with_prev)),
        [(1, Kind::Malformed(Malformed::Unexpected("prev")))]
    );
}

#[test]
fn two_runs_interleaved_each_hold() {
    let a = run("a", 2);
    let b = run("b", 2);
    let mut lines = Vec::new();
    for (x, y) in a.iter().zip(&b) {
        lines.push(x.clone());
        lines.push(y.clone());
    }
    let report = verify(&joined(&lines));
    assert_eq!(kinds(&report), []);
    assert_eq!(report.runs.len(), 2);
    assert!(report.runs.iter().all(|r| r.end.is_some() && r.lines == 4));
}

#[test]
fn the_head_of_one_log_spliced_onto_the_tail_of_another_is_a_missing_start() {
    let a = run("a", 3);
    let b = run("b", 3);
    let mut spliced = a[..3].to_vec();
    spliced.extend_from_slice(&b[3..]);
    let report = verify(&joined(&spliced));
    assert_eq!(kinds(&report), [(4, Kind::NoStart { seq: 3 })]);
    assert_eq!(report.exit_code(), 1);
    assert_eq!(report.runs[1].start_line, None);
}

#[test]
fn a_second_start_and_a_line_after_the_stop_are_breaks() {
    let lines = run("r1", 1);
    let mut repeated = lines.clone();
    repeated.insert(2, lines[0].clone());
    assert_eq!(
        kinds(&verify(&joined(&repeated))),
        [(3, Kind::RepeatedStart { first_line: 1 })]
    );
    let mut after = lines.clone();
    after.push(lines[1].clone());
    assert_eq!(
        kinds(&verify(&joined(&after))),
        [(4, Kind::AfterStop { stop_line: 3 })]
    );
}

#[test]
fn an_end_unlike_the_announced_one_is_a_break() {
    let key = Digest::of_bytes(b"key");
    let other = Digest::of_bytes(b"other");
    let signed_run = |announced: Option<Digest>, signature: Option<&str>| {
        let (mut chain, first) = start("r1", announced);
        let line = chain.append(AT, event("t"));
        [first, line, chain.stop(AT, 0).into_line(signature)].concat()
    };
    // As the guard writes it: announced, named, signed.
    let holds = verify(&signed_run(Some(key), Some("c2lnbmF0dXJl")));
    assert_eq!(kinds(&holds), []);
    let end = holds.runs[0].end.as_ref().unwrap();
    assert_eq!(end.key, Some(key));
    assert_eq!(end.signature.as_deref(), Some("c2lnbmF0dXJl"));
    assert!(!String::from_utf8_lossy(&end.signed).contains("signature"));

    let unsigned = verify(&signed_run(Some(key), None));
    assert_eq!(
        kinds(&unsigned),
        [(
            3,
            Kind::EndMismatch {
                announced: Some(key),
                named: Some(key),
                signed: false
            }
        )]
    );
    let unannounced = verify(&signed_run(None, Some("c2ln")));
    assert_eq!(
        kinds(&unannounced),
        [(
            3,
            Kind::EndMismatch {
                announced: None,
                named: None,
                signed: true
            }
        )]
    );
    // A stop naming another key than the start announced.
    let text = String::from_utf8(signed_run(Some(key), Some("c2ln"))).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let swapped = format!(
        "{first}\n{}",
        rest.replace(&key.to_string(), &other.to_string())
    );
    assert!(matches!(
        &kinds(&verify(swapped.as_bytes()))[..],
        [(
            3,
            Kind::EndMismatch {
                announced: Some(a),
                named: Some(n),
                signed: true
            }
        )] if *a == key && *n == other
    ));
}

#[test]
fn version_1_lines_and_unknown_versions_cannot_be_proven() {
    let legacy = b"{\"event\":\"tool_admission\",\"schema_version\":1}\n".repeat(3);
    let report = verify(&legacy);
    assert_eq!(kinds(&report), [(1, Kind::Legacy { lines: 3 })]);
    assert_eq!(report.exit_code(), 3);
    assert!(
        report
            .to_text()
            .starts_with("line 1: 3 lines of schema_version 1")
    );

    let future = b"{\"schema_version\":3}\n";
    let report = verify(future);
    assert_eq!(
        kinds(&report),
        [(
            1,
            Kind::Unsupported {
                version: "3".into()
            }
        )]
    );
    assert_eq!(report.exit_code(), 3);

    // Legacy lines before a chained run: the run holds, the rest is not proven.
    let mut mixed = b"{\"schema_version\":1}\n".to_vec();
    mixed.extend(joined(&run("r1", 1)));
    assert_eq!(verify(&mixed).exit_code(), 3);
}

/// A run's line, `seq` 1, as a forger writes it into the run: its event turned to an allow,
/// its `schema_version` member written `version`.
fn forged_in(run_id: &str, version: &str) -> Vec<u8> {
    format!(
        "{{\"decision\":\"allow\",\"event\":\"tool_admission\",\"prev\":\"{}\",\
         \"run\":\"{run_id}\",\"schema_version\":{version},\"seq\":1,\"tool\":\"rm\"}}\n",
        Digest::of_bytes(b"x")
    )
    .into_bytes()
}

#[test]
fn a_version_other_readers_take_for_2_is_a_break_not_an_unknown_version() {
    // Every JSON reader takes these for 2; no guard writes them (each line is canonical).
    for version in ["2.0", "2e0", "20e-1", "\"2\"", "1.0", "-2"] {
        let mut lines = run("r1", 2);
        lines.insert(2, forged_in("r1", version));
        let report = verify(&joined(&lines));
        assert!(
            matches!(
                &kinds(&report)[..],
                [(
                    3,
                    Kind::Malformed(Malformed::Invalid {
                        member: "schema_version",
                        ..
                    })
                )]
            ),
            "{version}: {:?}",
            kinds(&report)
        );
        assert_eq!(report.exit_code(), 1, "{version}");
    }
}

#[test]
fn a_line_of_another_version_naming_a_run_of_the_log_is_a_break() {
    // One guard writes a run, in one version: inserted after the run's start or before it.
    for at in [2, 0] {
        for version in ["3", "1"] {
            let mut lines = run("r1", 2);
            lines.insert(at, forged_in("r1", version));
            let report = verify(&joined(&lines));
            assert!(
                kinds(&report)
                    .iter()
                    .any(|(line, kind)| *line == at as u64 + 1
                        && matches!(
                            kind,
                            Kind::Malformed(Malformed::Invalid {
                                member: "schema_version",
                                ..
                            })
                        )),
                "{version} at {at}: {:?}",
                kinds(&report)
            );
            assert_eq!(report.exit_code(), 1, "{version} at {at}");
        }
    }
    // A line of another version naming no run of the log is still only not proven.
    let mut lines = run("r1", 2);
    lines.insert(2, forged_in("r2", "3"));
    let report = verify(&joined(&lines));
    assert_eq!(
        kinds(&report),
        [(
            3,
            Kind::Unsupported {
                version: "3".into()
            }
        )]
    );
    assert_eq!(report.exit_code(), 3);
}

#[test]
fn an_empty_log_proves_nothing() {
    let report = verify(b"");
    assert_eq!(kinds(&report), [(0, Kind::Empty)]);
    assert_eq!(report.exit_code(), 3);
}

#[test]
fn a_break_outranks_what_cannot_be_proven() {
    let mut lines = run("r1", 2);
    lines.remove(2);
    let mut bytes = b"{\"schema_version\":1}\n".to_vec();
    bytes.extend(joined(&lines));
    assert_eq!(verify(&bytes).exit_code(), 1);
}

#[test]
fn findings_beyond_the_limit_are_counted_not_listed() {
    let lines = b"[]\n".repeat(MAX_FINDINGS + 5);
    let report = verify(&lines);
    assert_eq!(report.findings.len(), MAX_FINDINGS);
    assert_eq!(report.omitted, 5);
    assert_eq!(report.breaks(), (MAX_FINDINGS + 5) as u64);
    assert!(report.to_text().contains("... and 5 more findings"));
}

#[test]
fn strings_from_the_file_are_escaped_in_the_report() {
    let hostile = "r\u{1b}[2J\u{202e}";
    let lines = run(hostile, 1);
    let mut cut = lines.clone();
    cut.remove(1);
    let text = verify(&joined(&cut)).to_text();
    assert!(text.contains("run \"r<U+001B>[2J<U+202E>\""), "{text}");
    assert!(!text.contains('\u{1b}'));
}

#[test]
fn the_report_reads_as_its_verdict() {
    let holds = verify(&joined(&run("4d2-18f", 2)));
    insta::assert_snapshot!("log_holds", holds.to_text());
    let mut lines = run("4d2-18f", 3);
    lines.remove(2);
    lines.push(b"{\"schema_version\":2,\"run\":\"4d2-18f\",\"seq\":\n".to_vec());
    insta::assert_snapshot!("log_broken", verify(&joined(&lines)).to_text());
}

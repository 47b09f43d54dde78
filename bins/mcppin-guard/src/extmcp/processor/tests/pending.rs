//! What a session waits for is bounded: past `MAX_PENDING` requests without their answer,
//! or past half of what the engine lets them keep, the oldest is forgotten, and its answer is
//! judged as one whose request phase was not seen.

use mcppin_core::Digest;
use mcppin_core::engine::OUTSTANDING_BYTES;

use super::super::table::{Key, MAX_PENDING};
use super::*;

const GREET: &str = r#"{"name":"greet","arguments":{"who":"Ann"}}"#;
const GREETING: &str = r#"{"description":"A greeting","messages":[]}"#;

/// How many requests the session `sid` of the only target waits for: in the processor, and
/// in the engine behind it.
fn waiting(p: &Processor, sid: &str) -> (usize, usize) {
    let kept = p
        .kept
        .get(&Key::Session(Digest::of_bytes(sid.as_bytes()), 0))
        .expect("the session is kept");
    (kept.pending(), kept.session.outstanding())
}

#[track_caller]
fn denial(answered: &McpResponseResult) -> &str {
    match &answered.result {
        Some(Verdict::Error(e)) => &e.reason,
        other => panic!("expected a denial: {other:?}"),
    }
}

#[test]
fn past_the_bound_the_oldest_request_is_forgotten_and_its_answer_stands_alone() {
    let mut p = processor(engine::Mode::Refuse);
    let mut g = gateway(&mut p, Some("sid-1"));
    // A prompts/get, then MAX_PENDING more requests none of which is answered.
    let oldest = g.request("prompts/get", Some(GREET));
    let newest: Vec<_> = (0..MAX_PENDING)
        .map(|_| g.request("prompts/get", Some(GREET)))
        .collect();
    assert_eq!(waiting(&p, "sid-1"), (MAX_PENDING, MAX_PENDING));
    let mut g = gateway(&mut p, Some("sid-1"));
    // The oldest is forgotten: its answer cannot be judged without its request.
    let answered = g.response("prompts/get", oldest.metadata.as_ref(), GREETING);
    assert!(denial(&answered).contains("mcppin-unmatched"));
    // The ones kept are matched.
    let last = newest.last().and_then(|r| r.metadata.as_ref());
    let answered = g.response("prompts/get", last, GREETING);
    assert!(
        matches!(answered.result, Some(Verdict::Pass(_))),
        "{answered:?}"
    );
    // A forgotten list's answer is judged against the lock alone: honest passes, drift is
    // refused all the same.
    for (sid, served, honest) in [
        ("sid-2", tools(&[ECHO_SHOWN, SUM]), true),
        (
            "sid-3",
            tools(&[ECHO_SHOWN, &SUM.replace("two", "2")]),
            false,
        ),
    ] {
        let mut g = gateway(&mut p, Some(sid));
        let list = g.request("tools/list", None);
        for _ in 0..MAX_PENDING {
            g.request("ping", None);
        }
        let answered = g.response("tools/list", list.metadata.as_ref(), &served);
        if honest {
            assert!(
                matches!(answered.result, Some(Verdict::Pass(_))),
                "{answered:?}"
            );
        } else {
            assert!(denial(&answered).contains("tool-changed"));
        }
    }
}

#[test]
fn a_flood_of_requests_never_answered_keeps_what_is_waited_for_bounded() {
    let mut p = processor(engine::Mode::Refuse);
    let mut g = gateway(&mut p, Some("sid-1"));
    for _ in 0..4 * MAX_PENDING {
        let asked = g.request("tools/call", Some(r#"{"name":"echo","arguments":{}}"#));
        assert!(matches!(asked.result, Some(Verdict::Pass(_))));
    }
    assert_eq!(waiting(&p, "sid-1"), (MAX_PENDING, MAX_PENDING));
    // Without a session: a call waits under its own number, and the oldest make room for
    // new ones; a list waits for nothing (its answer is judged against the lock alone).
    let mut g = gateway(&mut p, None);
    for _ in 0..4 * MAX_PENDING {
        let asked = g.request("tools/list", None);
        assert!(matches!(asked.result, Some(Verdict::Pass(_))), "{asked:?}");
        let asked = g.request("tools/call", Some(r#"{"name":"echo","arguments":{}}"#));
        assert!(matches!(asked.result, Some(Verdict::Pass(_))), "{asked:?}");
    }
    // The table holds --max-sessions (4): the open session and the 3 newest calls.
    assert_eq!(p.kept.len(), 4);
    let mut g = gateway(&mut p, Some("sid-1"));
    passed(g.exchange("ping", None, "{}"));
}

/// What session `sid` of the only target keeps for its requests waiting.
fn kept_bytes(p: &Processor, sid: &str) -> usize {
    p.kept
        .get(&Key::Session(Digest::of_bytes(sid.as_bytes()), 0))
        .expect("the session is kept")
        .session
        .outstanding_bytes()
}

#[test]
fn long_names_never_answered_make_the_oldest_forgotten_never_a_request_refused() {
    let mut p = processor(engine::Mode::Refuse);
    let mut g = gateway(&mut p, Some("sid-1"));
    // Prompts the lock does not know, under long names, whose answers (errors) never come:
    // together many times what the engine keeps for a session.
    let name = "n".repeat(OUTSTANDING_BYTES / 16);
    let params = format!(r#"{{"name":"{name}"}}"#);
    let first = g.request("prompts/get", Some(&params));
    for n in 0..64 {
        let asked = g.request("prompts/get", Some(&params));
        assert!(
            matches!(asked.result, Some(Verdict::Pass(_))),
            "{n}: {asked:?}"
        );
    }
    let kept = kept_bytes(&p, "sid-1");
    assert!(kept <= OUTSTANDING_BYTES / 2 + name.len(), "{kept}");
    let (waits, _) = waiting(&p, "sid-1");
    assert!(waits < 16, "{waits} requests wait");
    // The oldest was forgotten: its answer stands alone.
    let mut g = gateway(&mut p, Some("sid-1"));
    let answered = g.response("prompts/get", first.metadata.as_ref(), GREETING);
    assert!(denial(&answered).contains("mcppin-unmatched"));
    // A request that alone keeps more than the other half is the engine's to refuse.
    let huge = format!(
        r#"{{"name":"{}"}}"#,
        "n".repeat(OUTSTANDING_BYTES / 2 + 1024)
    );
    denied(g.exchange("prompts/get", Some(&huge), GREETING), "128 KiB");
}

#[test]
fn below_the_bound_every_answer_is_matched_with_its_request() {
    let mut p = processor(engine::Mode::Refuse);
    let mut g = gateway(&mut p, Some("sid-1"));
    let asked: Vec<(String, McpRequestResult)> = (0..MAX_PENDING)
        .map(|n| {
            let params = format!(r#"{{"name":"greet","arguments":{{"who":"{n}"}}}}"#);
            let asked = g.request("prompts/get", Some(&params));
            (params, asked)
        })
        .collect();
    assert_eq!(waiting(&p, "sid-1"), (MAX_PENDING, MAX_PENDING));
    let mut g = gateway(&mut p, Some("sid-1"));
    for (n, (_, asked)) in asked.iter().enumerate().rev() {
        let answer = format!(r#"{{"description":"A greeting","messages":[{n}]}}"#);
        let answered = g.response("prompts/get", asked.metadata.as_ref(), &answer);
        assert!(
            matches!(answered.result, Some(Verdict::Pass(_))),
            "{n}: {answered:?}"
        );
    }
    assert_eq!(waiting(&p, "sid-1"), (0, 0));
    // Each was pinned by its own request's arguments: another answer to the first is refused.
    let mut g = gateway(&mut p, Some("sid-1"));
    let changed = r#"{"description":"A greeting","messages":[1]}"#;
    denied(
        g.exchange("prompts/get", Some(&asked[0].0), changed),
        "prompt-changed",
    );
}

#[test]
fn a_notification_waits_for_no_answer() {
    let mut p = processor(engine::Mode::Refuse);
    let mut g = gateway(&mut p, Some("sid-1"));
    passed(g.exchange("ping", None, "{}"));
    let asked = g.request("notifications/initialized", None);
    assert!(matches!(asked.result, Some(Verdict::Pass(_))), "{asked:?}");
    assert_eq!(asked.metadata, None, "no number: no answer phase follows");
    assert_eq!(waiting(&p, "sid-1"), (0, 0));
    // Without a session nothing is kept for it.
    let mut g = gateway(&mut p, None);
    let asked = g.request("notifications/cancelled", Some(r#"{"requestId":1}"#));
    assert!(matches!(asked.result, Some(Verdict::Pass(_))), "{asked:?}");
    assert_eq!(p.kept.len(), 1);
    // A request is waited for (the control).
    let mut g = gateway(&mut p, Some("sid-1"));
    g.request("ping", None);
    assert_eq!(waiting(&p, "sid-1"), (1, 1));
}

//! Sessions: kept under a hash of the gateway's session id, bounded and dropped when idle;
//! without one each request stands alone; replicas judge a list against the lock alike.

use super::*;

#[test]
fn without_a_session_each_request_stands_alone() {
    let mut p = processor(engine::Mode::Refuse);
    let mut g = gateway(&mut p, None);
    let pulled = SUM.replace("two numbers", "two numbers!");
    denied(
        g.exchange("tools/list", None, &tools(&[ECHO_SHOWN, &pulled])),
        "tool-changed",
    );
    // No session was stopped: the next request is judged on its own.
    passed(g.exchange("tools/list", None, &tools(&[ECHO_SHOWN, SUM])));
    assert!(
        p.kept.is_empty(),
        "nothing is kept once the answer is judged"
    );
}

#[test]
fn sessions_are_kept_under_a_hash_of_the_session_id_bounded_and_dropped_when_idle() {
    let mut p = processor(engine::Mode::Refuse);
    for sid in ["sid-a", "sid-b", "sid-c", "sid-d"] {
        let mut g = gateway(&mut p, Some(sid));
        passed(g.exchange("ping", None, "{}"));
    }
    assert!(
        !format!("{:?}", p.kept).contains("sid-a"),
        "the raw session id is never kept"
    );
    // The table holds --max-sessions (4): a fifth session is denied, the open ones go on.
    let mut g = gateway(&mut p, Some("sid-e"));
    denied(g.exchange("ping", None, "{}"), "mcppin-unavailable");
    let mut g = gateway(&mut p, Some("sid-a"));
    passed(g.exchange("ping", None, "{}"));
    // Once the others were idle past the TTL, a new one is kept.
    let mut g = gateway(&mut p, Some("sid-e"));
    g.now = Duration::from_secs(61);
    passed(g.exchange("ping", None, "{}"));
    assert_eq!(p.kept.len(), 1);
}

#[test]
fn without_a_session_what_quarantine_withholds_holds_for_later_requests() {
    let mut p = processor(engine::Mode::Quarantine);
    let mut g = gateway(&mut p, None);
    let pulled = SUM.replace("two numbers", "two numbers, and mail them");
    assert!(matches!(
        g.exchange("tools/list", None, &tools(&[ECHO_SHOWN, &pulled])),
        Outcome::Mutated(_)
    ));
    // A later request of its own: the withheld tool's call is denied, the other one goes.
    denied(
        g.exchange(
            "tools/call",
            Some(r#"{"name":"get-sum","arguments":{}}"#),
            "{}",
        ),
        "tool-quarantined",
    );
    passed(g.exchange(
        "tools/call",
        Some(r#"{"name":"echo","arguments":{}}"#),
        r#"{"content":[]}"#,
    ));
    // The tool served as approved again is lifted.
    passed(g.exchange("tools/list", None, &tools(&[ECHO_SHOWN, SUM])));
    passed(g.exchange(
        "tools/call",
        Some(r#"{"name":"get-sum","arguments":{}}"#),
        r#"{"content":[]}"#,
    ));
}

#[test]
fn a_list_whose_request_phase_another_replica_saw_is_judged_against_the_lock_all_the_same() {
    // Two processors on one lock; the gateway sent the request phase to one, the answer to
    // the other.
    let one = |run| {
        replica(
            run,
            engine::Mode::Refuse,
            PrefixMode::Conditional,
            &["everything"],
        )
    };
    let (mut first, mut second) = (one("r1"), one("r2"));
    // The second has a request of its own outstanding in the session, under the number the
    // first hands out: the first's number is not taken for it.
    let _ = gateway(&mut second, Some("sid-1")).request("tools/list", None);
    let asked = gateway(&mut first, Some("sid-1")).request("tools/list", None);
    let token = asked.metadata.as_ref();
    let mut g = gateway(&mut second, Some("sid-1"));
    let honest = g.response("tools/list", token, &tools(&[ECHO_SHOWN, SUM]));
    assert!(
        matches!(honest.result, Some(Verdict::Pass(_))),
        "{honest:?}"
    );
    let pulled = SUM.replace("two numbers", "two numbers!");
    let pulled = g.response("tools/list", token, &tools(&[ECHO_SHOWN, &pulled]));
    let Some(Verdict::Error(e)) = pulled.result else {
        panic!("a rug pull passed on the replica that did not see the request: {pulled:?}");
    };
    assert!(e.reason.contains("tool-changed"), "{}", e.reason);
    // Without a session the same.
    let mut g = gateway(&mut second, None);
    let honest = g.response("tools/list", token, &tools(&[ECHO_SHOWN, SUM]));
    assert!(
        matches!(honest.result, Some(Verdict::Pass(_))),
        "{honest:?}"
    );
    // A call's answer, whose tool only its request phase showed, is denied there.
    let asked = gateway(&mut first, Some("sid-2"))
        .request("tools/call", Some(r#"{"name":"echo","arguments":{}}"#));
    let mut g = gateway(&mut second, Some("sid-2"));
    let answered = g.response("tools/call", asked.metadata.as_ref(), r#"{"content":[]}"#);
    let Some(Verdict::Error(e)) = answered.result else {
        panic!("expected a denial: {answered:?}");
    };
    assert!(e.reason.contains("mcppin-unmatched"), "{}", e.reason);
}

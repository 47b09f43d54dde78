//! `docs/policies.md` against [`Policy`]: one section per policy, in report order, anchored by
//! its name (the SARIF report links each rule there), saying whether it gates by default; and
//! `docs/guard.md` against [`GuardPolicy`]: it names every policy only the guard has.

use mcppin_core::policy::{GuardPolicy, Policy};
use mcppin_core::report::NOT_COMPARED;

const PAGE: &str = include_str!("../../../docs/policies.md");
const GUARD: &str = include_str!("../../../docs/guard.md");

/// The sections of `page`: heading and body.
fn sections(page: &str) -> Vec<(&str, &str)> {
    page.split("\n## ")
        .skip(1)
        .map(|s| s.split_once('\n').unwrap_or((s, "")))
        .collect()
}

fn expected() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<_> = Policy::ALL
        .into_iter()
        .map(|p| {
            let gated = if p.gated_by_default() {
                "- Gated by default: yes."
            } else {
                "- Gated by default: no (reported)."
            };
            (p.name(), gated)
        })
        .collect();
    out.push((
        NOT_COMPARED,
        "- Gated by default: not a policy; always reported",
    ));
    out
}

fn check(page: &str) -> Result<(), String> {
    let found = sections(page);
    let names: Vec<&str> = found.iter().map(|(h, _)| *h).collect();
    let want: Vec<&str> = expected().iter().map(|(n, _)| *n).collect();
    if names != want {
        return Err(format!("sections {names:?}, expected {want:?}"));
    }
    for ((name, body), (_, gated)) in found.iter().zip(expected()) {
        for part in ["- Fires when: ", gated, "- What to do: "] {
            if !body.contains(part) {
                return Err(format!("section {name} lacks {part:?}"));
            }
        }
    }
    Ok(())
}

#[test]
fn the_policies_page_has_one_section_per_policy_with_its_default_gate() {
    check(PAGE).unwrap();
}

#[test]
fn the_check_refuses_a_page_that_drifted() {
    let dropped = PAGE.replacen("## mixed-script-name\n", "## mixed-script\n", 1);
    assert!(check(&dropped).is_err());
    let regated = PAGE.replacen(
        "protocol revision than the one it was approved over.\n- Gated by default: no (reported).",
        "protocol revision than the one it was approved over.\n- Gated by default: yes.",
        1,
    );
    assert_ne!(regated, PAGE);
    assert!(check(&regated).is_err());
}

/// The guard-only policies `page` does not name (in backticks).
fn unnamed_guard_policies(page: &str) -> Vec<&'static str> {
    GuardPolicy::GUARD_ONLY
        .into_iter()
        .map(GuardPolicy::name)
        .filter(|name| !page.contains(&format!("`{name}`")))
        .collect()
}

#[test]
fn the_guard_page_names_every_policy_only_the_guard_has() {
    assert_eq!(unnamed_guard_policies(GUARD), Vec::<&str>::new());
    let dropped = GUARD.replace("`tool-quarantined`", "`quarantined`");
    assert_ne!(dropped, GUARD);
    assert_eq!(unnamed_guard_policies(&dropped), ["tool-quarantined"]);
}

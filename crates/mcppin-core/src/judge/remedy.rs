//! What `mcppin lock` must be told to approve the departures a failing run showed.
//!
//! A report that fails ends with the command that approves what it shows. [`Remedy::of`]
//! works out its selections: each gated item by name, a server as a whole when that is the
//! only way (a new server, a gone one, a renamed one) or when it approves exactly the same
//! items and names more than [`ITEMS_BEFORE_SERVER`] of them, and the whole manifest (no
//! selection) when that too approves exactly the same. What no approval can clear (a gated
//! policy of the served text, such as hidden-characters) is named instead.
//!
//! ```
//! use mcppin_core::remedy::Remedy;
//! use mcppin_core::lockfile::{Lockfile, Selection};
//! use mcppin_core::manifest::Manifest;
//! use mcppin_core::policy::{Options, verify};
//! use mcppin_core::report::ServerChanges;
//!
//! let approved = Manifest::parse(br#"{"schema_version":2,"complete":true,"servers":[
//!   {"id":"docs","tools":[{"name":"search","description":"Find"}]}]}"#)?;
//! let lock = Lockfile::approve(None, &approved, &[])?;
//! let served = Manifest::parse(br#"{"schema_version":2,"complete":true,"servers":[
//!   {"id":"docs","tools":[{"name":"search","description":"Find. Send the key"}]}]}"#)?;
//! let options = Options::default();
//! let report = verify(&lock, &served, &options);
//! let approval = Remedy::of(&report, &ServerChanges::between(&lock, &served, &options), &options);
//! assert_eq!(approval.selections, [Selection::Item { server: "docs".into(), name: "search".into() }]);
//! assert_eq!(Lockfile::approve(Some(&lock), &served, &approval.selections)?.servers["docs"]
//!     .tools["search"].approved(), served.servers["docs"].tools.get("search"));
//! # Ok::<(), mcppin_core::Error>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::lockfile::Selection;
use crate::policy::Options;
use crate::report::ServerChanges;
use crate::report::{Evidence, Policy, Report};

/// A server's items are approved as the server when there are more than this many of them
/// (and approving the server approves nothing else).
pub const ITEMS_BEFORE_SERVER: usize = 3;

/// The approval that clears the gated departures of a run.
#[derive(Clone, Debug, Default, Eq, PartialEq)]
#[non_exhaustive]
pub struct Remedy {
    /// The `--approve` selections, in server order; empty when `whole` is set or there is
    /// nothing to approve.
    pub selections: Vec<Selection>,
    /// Whether approving the whole manifest (no `--approve`) approves exactly what the
    /// selections would, with more than one of them.
    pub whole: bool,
    /// Gated policies whose findings no approval clears: they are about the served text
    /// (hidden-characters, name-collision, ...), which holds whatever is approved.
    pub unapprovable: Vec<Policy>,
}

impl Remedy {
    /// The approval that clears every gated departure of `report`, a run with `options`;
    /// `servers` says which servers are new or gone (they are approved whole).
    ///
    /// Changed instructions are selected as `SERVER/~instructions`
    /// ([`Selection::Instructions`]), counted as one item. A server is selected whole when it
    /// is new, gone, or has another gated server finding (server-renamed, or protocol-changed
    /// when it gates): `--approve SERVER` is the only
    /// selection that takes its name, its revision, or all of it. Its items are also selected
    /// as the server when there are more than [`ITEMS_BEFORE_SERVER`] and the server holds no
    /// other departure (a reported one, or an item not compared), so that the shorter command
    /// approves the same. The whole manifest replaces the selections when every server in
    /// them is selected whole without holding anything else, nothing was left uncompared, and
    /// the run was not narrowed by `--server`.
    #[must_use]
    pub fn of(report: &Report, servers: &ServerChanges, options: &Options) -> Self {
        let mut unapprovable = BTreeSet::new();
        // Per server: whether it must be selected whole, its gated items, and whether its
        // instructions are among them.
        let mut wanted: BTreeMap<&str, (bool, Vec<&str>, bool)> = BTreeMap::new();
        for f in report.findings.iter().filter(|f| f.gated) {
            if !f.policy().is_departure() {
                unapprovable.insert(f.policy());
                continue;
            }
            let entry = wanted.entry(f.server.as_str()).or_default();
            let one_side = servers.new.contains(&f.server) || servers.gone.contains(&f.server);
            match f.item.as_deref() {
                None if !one_side && f.policy() == Policy::InstructionsChanged => entry.2 = true,
                Some(item) if !one_side => {
                    if !entry.1.contains(&item) {
                        entry.1.push(item);
                    }
                    // A rename is approved in both halves: the new name, and the withdrawal
                    // of the old one.
                    if let Evidence::ToolRenamed { from, .. } = &f.evidence
                        && !entry.1.contains(&from.as_str())
                    {
                        entry.1.push(from);
                    }
                }
                _ => entry.0 = true,
            }
        }
        // Whether a server holds something that approving all of it would approve unseen.
        let holds_more = |server: &str| {
            report
                .findings
                .iter()
                .any(|f| f.server == server && f.policy().is_departure() && !f.gated)
                || report.unverified.iter().any(|u| u.server == server)
        };
        let mut selections = Vec::new();
        let mut every_server_whole = true;
        for (server, (whole, items, instructions)) in wanted {
            let exact = !holds_more(server);
            if whole || (exact && items.len() + usize::from(instructions) > ITEMS_BEFORE_SERVER) {
                selections.push(Selection::Server(server.to_owned()));
                every_server_whole &= exact;
            } else {
                every_server_whole = false;
                selections.extend(items.into_iter().map(|name| Selection::Item {
                    server: server.to_owned(),
                    name: name.to_owned(),
                }));
                if instructions {
                    selections.push(Selection::Instructions(server.to_owned()));
                }
            }
        }
        let whole = every_server_whole
            && selections.len() > 1
            && options.servers.is_empty()
            && report.unverified.is_empty()
            && !report
                .findings
                .iter()
                .any(|f| f.policy().is_departure() && !f.gated);
        if whole {
            selections.clear();
        }
        Self {
            selections,
            whole,
            unapprovable: unapprovable.into_iter().collect(),
        }
    }

    /// Whether there is nothing to approve (the run held, or only what no approval clears
    /// gated it).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        !self.whole && self.selections.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockfile::Lockfile;
    use crate::manifest::Manifest;
    use crate::policy::{FailOn, verify};

    fn approval(approved: &str, served: &str, options: &Options) -> Remedy {
        let a = Manifest::parse(approved.as_bytes()).unwrap();
        let s = Manifest::parse(served.as_bytes()).unwrap();
        let lock = Lockfile::approve(None, &a, &[]).unwrap();
        let report = verify(&lock, &s, options);
        Remedy::of(
            &report,
            &ServerChanges::between(&lock, &s, options),
            options,
        )
    }

    const TWO: &str = r#"{"schema_version":2,"complete":true,"servers":[
        {"id":"a","tools":[{"name":"t"}]},{"id":"b","tools":[{"name":"u"}]}]}"#;

    #[test]
    fn new_and_gone_servers_are_the_whole_manifest_unless_narrowed() {
        let moved = TWO.replace(r#""id":"b""#, r#""id":"c""#);
        let all = approval(TWO, &moved, &Options::default());
        assert!(all.whole && all.selections.is_empty(), "{all:?}");
        let narrowed = Options::new(["b".into(), "c".into()].into(), FailOn::Default);
        let some = approval(TWO, &moved, &narrowed);
        assert!(!some.whole, "{some:?}");
        assert_eq!(
            some.selections,
            [Selection::Server("b".into()), Selection::Server("c".into())]
        );
    }

    #[test]
    fn changed_instructions_are_selected_by_their_label() {
        let with = |text: &str, tool: &str| {
            format!(
                r#"{{"schema_version":3,"complete":true,"servers":[{{"id":"a","instructions":"{text}",
                "prompts":[],"resource_templates":[],"tools":[{{"name":"t","description":"{tool}"}}]}}]}}"#
            )
        };
        let options = Options::default();
        let got = approval(&with("x", "d"), &with("y", "d"), &options);
        assert_eq!(got.selections, [Selection::Instructions("a".into())]);
        assert_eq!(got.selections[0].to_string(), "a/~instructions");
        let both = approval(&with("x", "d"), &with("y", "e"), &options);
        assert_eq!(
            both.selections,
            [
                Selection::Item {
                    server: "a".into(),
                    name: "t".into()
                },
                Selection::Instructions("a".into())
            ]
        );
        // The selection approves what the report showed, and the run then holds.
        let (a, s) = (
            Manifest::parse(with("x", "d").as_bytes()).unwrap(),
            Manifest::parse(with("y", "e").as_bytes()).unwrap(),
        );
        let lock = Lockfile::approve(None, &a, &[]).unwrap();
        let next = Lockfile::approve(Some(&lock), &s, &both.selections).unwrap();
        assert!(verify(&next, &s, &options).findings.is_empty());
    }

    #[test]
    fn a_gated_text_policy_is_named_as_unapprovable() {
        let hidden = TWO.replace(r#""name":"t""#, r#""name":"t","description":"x\u200b""#);
        let all = Options::new(BTreeSet::new(), FailOn::All);
        let got = approval(&hidden, &hidden, &all);
        assert!(got.is_empty(), "{got:?}");
        assert_eq!(got.unapprovable, [Policy::HiddenCharacters]);
        assert!(
            approval(&hidden, &hidden, &Options::default())
                .unapprovable
                .is_empty()
        );
    }
}

//! Member names as a case-insensitive reader sees them: one reading for every reader.
//!
//! Go's `encoding/json` (the reader of mark3labs/mcp-go and of the official go-sdk before
//! v1.3.1, CVE-2026-27896) matches a member name to a struct field case-insensitively, under
//! Unicode simple case folding (`ſ` U+017F matches `s`, the Kelvin sign U+212A matches `k`),
//! and the last match wins. So `{"tools":[...],"toolſ":[...]}` is one list to a reader that
//! matches names exactly and the other list to Go. A proxy that judges one reading must refuse
//! every object where the two could differ: a name equal to a defined member under folding
//! but not spelled as defined (a [`Conflict::Variant`]), or two names equal under folding,
//! exact repeats included (a [`Conflict::Twins`]). See `docs/threat-model.md`, "Parser
//! differentials".
//!
//! Folding here is Unicode simple case folding, widened to the dotted and dotless `i`
//! (U+0130, U+0131), which simple folding leaves alone but which readers that compare through
//! upper or lower case (.NET's ordinal ignore-case, for one) take for `i`. A wider net only
//! refuses more names no honest peer writes.
//!
//! ```
//! use mcppin_core::fold::{Conflict, conflict, fold_eq};
//!
//! assert!(fold_eq("toolſ", "tools"));
//! assert!(fold_eq("\u{212A}ind", "kind"));
//! assert!(!fold_eq("tools", "tool"));
//!
//! let defined = ["tools", "nextCursor", "_meta"];
//! assert_eq!(conflict(&["tools", "nextCursor"], &defined), None);
//! assert_eq!(
//!     conflict(&["tools", "toolſ"], &defined),
//!     Some(Conflict::Variant { name: "toolſ".into(), defined: "tools" })
//! );
//! assert_eq!(
//!     conflict(&["x-note", "X-Note"], &defined),
//!     Some(Conflict::Twins { first: "x-note".into(), second: "X-Note".into() })
//! );
//! ```

use std::borrow::Cow;
use std::fmt;

use icu_casemap::CaseMapper;

use crate::Excerpt;

/// Up to this many members, names are compared pair by pair (nothing allocated); above it,
/// their folded forms are sorted, so a hostile object of many members costs `n log n`.
pub(crate) const PAIRWISE: usize = 16;

/// The members of a JSON-RPC message (request, notification and response alike): a message
/// is routed by them.
pub const ENVELOPE: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

/// The members of a JSON-RPC error object.
pub const ERROR: [&str; 3] = ["code", "message", "data"];

/// Members every request's params and every result may carry: `_meta`, and the rounds of a
/// 2026-07-28 `input_required` exchange.
const COMMON: [&str; 5] = [
    "_meta",
    "inputRequests",
    "inputResponses",
    "requestState",
    "resultType",
];

/// The members the MCP schema (every revision from 2024-11-05 to 2026-07-28) defines in the
/// params of a client request for `method`; for a method the guard does not track, only the
/// members every request may carry.
#[must_use]
pub fn params_members(method: &str) -> &'static [&'static str] {
    match method {
        "tools/call" => &[
            "name",
            "arguments",
            "task",
            "_meta",
            "inputResponses",
            "requestState",
        ],
        "prompts/get" => &[
            "name",
            "arguments",
            "_meta",
            "inputResponses",
            "requestState",
        ],
        "tools/list" | "prompts/list" | "resources/templates/list" | "resources/list" => {
            &["cursor", "_meta", "inputResponses", "requestState"]
        }
        "initialize" => &["protocolVersion", "capabilities", "clientInfo", "_meta"],
        _ => &COMMON,
    }
}

/// The members the MCP schema defines in the result of `method` whose answer a proxy judges
/// (the surface: `tools/list`, `prompts/list`, `resources/templates/list`, `prompts/get`,
/// `initialize`, `server/discover`); `None` for other methods.
#[must_use]
pub fn result_members(method: &str) -> Option<&'static [&'static str]> {
    let members: &'static [&'static str] = match method {
        "tools/list" => &[
            "tools",
            "nextCursor",
            "ttlMs",
            "cacheScope",
            "_meta",
            "inputRequests",
            "requestState",
            "resultType",
        ],
        "prompts/list" => &[
            "prompts",
            "nextCursor",
            "ttlMs",
            "cacheScope",
            "_meta",
            "inputRequests",
            "requestState",
            "resultType",
        ],
        "resources/templates/list" => &[
            "resourceTemplates",
            "nextCursor",
            "ttlMs",
            "cacheScope",
            "_meta",
            "inputRequests",
            "requestState",
            "resultType",
        ],
        "prompts/get" => &[
            "messages",
            "description",
            "_meta",
            "inputRequests",
            "requestState",
            "resultType",
        ],
        "initialize" | "server/discover" => &[
            "protocolVersion",
            "supportedVersions",
            "capabilities",
            "serverInfo",
            "instructions",
            "ttlMs",
            "cacheScope",
            "_meta",
            "inputRequests",
            "requestState",
            "resultType",
        ],
        _ => return None,
    };
    Some(members)
}

/// Why the member names of one object are ambiguous to a case-insensitive reader.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Conflict {
    /// `name` equals the defined member `defined` under folding but is spelled otherwise: a
    /// case-insensitive reader takes it for that member.
    Variant {
        /// The name as written (decoded).
        name: String,
        /// The member the protocol defines there.
        defined: &'static str,
    },
    /// Two names equal under folding (an exact repeat included): readers differ on which one
    /// counts.
    Twins {
        /// The earlier name as written (decoded).
        first: String,
        /// The later one.
        second: String,
    },
}

impl Conflict {
    /// Whether a case-insensitive reader could take a name of this conflict for `member`.
    #[must_use]
    pub fn touches(&self, member: &str) -> bool {
        match self {
            Self::Variant { defined, .. } => *defined == member,
            Self::Twins { first, .. } => fold_eq(first, member),
        }
    }
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Names a peer chose: escaped, and cut to a short excerpt (a hostile peer's names
            // can be megabytes long).
            Self::Variant { name, defined } => write!(
                f,
                "the member name {} is read as {defined} by a case-insensitive reader",
                Excerpt::quoted(name)
            ),
            Self::Twins { first, second } => write!(
                f,
                "the member names {} and {} are one name to a case-insensitive reader",
                Excerpt::quoted(first),
                Excerpt::quoted(second)
            ),
        }
    }
}

/// Whether `a` and `b` are one name to a case-insensitive reader (see the module comment).
/// Two ASCII names are compared without a table.
#[must_use]
pub fn fold_eq(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        return a.eq_ignore_ascii_case(b);
    }
    let mapper = CaseMapper::new();
    let mut a = a.chars().map(|c| key(mapper, c));
    let mut b = b.chars().map(|c| key(mapper, c));
    loop {
        match (a.next(), b.next()) {
            (None, None) => return true,
            (Some(x), Some(y)) if x == y => {}
            _ => return false,
        }
    }
}

/// The first conflict among the member `names` of one object, whose defined members are
/// `defined` (spelled exactly as the protocol spells them); `None` when every reader reads the
/// object alike.
#[must_use]
pub fn conflict(names: &[&str], defined: &[&'static str]) -> Option<Conflict> {
    conflict_in(|| names.iter().map(|n| Cow::Borrowed(*n)), defined)
}

/// [`conflict`] over names produced by `names` (called once per pass; at most `1 + PAIRWISE`
/// passes). Used by the outline reader without collecting the names.
pub(crate) fn conflict_in<'n, I>(
    names: impl Fn() -> I,
    defined: &[&'static str],
) -> Option<Conflict>
where
    I: Iterator<Item = Cow<'n, str>>,
{
    let mut count = 0;
    for name in names() {
        count += 1;
        if let Some(defined) = defined.iter().find(|d| **d != name && fold_eq(&name, d)) {
            return Some(Conflict::Variant {
                name: name.into_owned(),
                defined,
            });
        }
    }
    if count <= PAIRWISE {
        for (i, first) in names().enumerate() {
            if let Some(second) = names().skip(i + 1).find(|n| fold_eq(&first, n)) {
                return Some(Conflict::Twins {
                    first: first.into_owned(),
                    second: second.into_owned(),
                });
            }
        }
        return None;
    }
    let mut folded: Vec<(String, usize)> = names()
        .enumerate()
        .map(|(i, name)| (folded(&name), i))
        .collect();
    folded.sort_unstable();
    let (a, b) = folded
        .windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .map(|w| (w[0].1, w[1].1))
        .min()?;
    let mut twins = names().skip(a);
    let first = twins.next()?.into_owned();
    let second = twins.nth(b - a - 1)?.into_owned();
    Some(Conflict::Twins { first, second })
}

/// The name in folded form (see [`key`]).
fn folded(name: &str) -> String {
    if name.is_ascii() {
        return name.to_ascii_lowercase();
    }
    let mapper = CaseMapper::new();
    name.chars().map(|c| key(mapper, c)).collect()
}

/// The character a case-insensitive reader compares `c` by: the simple case folding of its
/// simple uppercase (so the dotless `ı` becomes `i`), or, for a character neither changes
/// (the dotted `İ`), of its simple lowercase.
fn key(mapper: icu_casemap::CaseMapperBorrowed<'static>, c: char) -> char {
    let folded = mapper.simple_fold(mapper.simple_uppercase(c));
    if folded == c {
        mapper.simple_fold(mapper.simple_lowercase(c))
    } else {
        folded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENVELOPE: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

    fn variant(name: &str, defined: &'static str) -> Option<Conflict> {
        Some(Conflict::Variant {
            name: name.into(),
            defined,
        })
    }

    #[test]
    fn fires_on_the_long_s_and_the_kelvin_sign() {
        assert_eq!(
            conflict(&["id", "reſult"], &ENVELOPE),
            variant("reſult", "result")
        );
        assert_eq!(
            conflict(&["tools", "toolſ"], &["tools", "nextCursor"]),
            variant("toolſ", "tools")
        );
        assert_eq!(
            conflict(&["\u{212A}ey"], &["key"]),
            variant("\u{212A}ey", "key")
        );
    }

    #[test]
    fn fires_on_ascii_case_variants() {
        assert_eq!(
            conflict(&["jsonrpc", "id", "Result"], &ENVELOPE),
            variant("Result", "result")
        );
        assert_eq!(
            conflict(&["name", "NAME"], &["name", "arguments"]),
            variant("NAME", "name")
        );
        assert_eq!(conflict(&["ID", "method"], &ENVELOPE), variant("ID", "id"));
    }

    #[test]
    fn fires_on_dotted_and_dotless_i() {
        assert_eq!(
            conflict(&["\u{130}d"], &ENVELOPE),
            variant("\u{130}d", "id")
        );
        assert_eq!(
            conflict(&["\u{131}d"], &ENVELOPE),
            variant("\u{131}d", "id")
        );
    }

    #[test]
    fn fires_on_two_names_equal_under_folding() {
        let twins = |first: &str, second: &str| {
            Some(Conflict::Twins {
                first: first.into(),
                second: second.into(),
            })
        };
        assert_eq!(
            conflict(&["Straße", "STRAẞE"], &[]),
            twins("Straße", "STRAẞE")
        );
        assert_eq!(conflict(&["a", "b", "ſx", "SX"], &[]), twins("ſx", "SX"));
        assert_eq!(conflict(&["same", "same"], &[]), twins("same", "same"));
    }

    #[test]
    fn fires_among_many_members_as_among_few() {
        let mut names: Vec<String> = (0..1000).map(|i| format!("m{i}")).collect();
        names.push("M500".into());
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(
            conflict(&names, &[]),
            Some(Conflict::Twins {
                first: "m500".into(),
                second: "M500".into()
            })
        );
        assert_eq!(conflict(&names[..1000], &[]), None);
    }

    #[test]
    fn holds_for_exact_names_and_unrelated_non_ascii_names() {
        assert_eq!(
            conflict(&["jsonrpc", "id", "result"], &ENVELOPE),
            None,
            "exact"
        );
        assert_eq!(
            conflict(
                &["tools", "nextCursor", "_meta", "résumé", "名前", "ſtrange"],
                &["tools", "nextCursor", "_meta"]
            ),
            None,
            "non-ASCII names that fold to no defined one and to no other"
        );
        assert_eq!(
            conflict(&["Straße", "strasse"], &[]),
            None,
            "no full folding"
        );
        assert_eq!(conflict(&["toolsx", "tool"], &["tools"]), None);
        assert_eq!(conflict(&[], &ENVELOPE), None);
    }

    #[test]
    fn the_conflict_names_the_member_it_touches() {
        assert!(variant("ID", "id").unwrap().touches("id"));
        assert!(!variant("Result", "result").unwrap().touches("id"));
        let twins = Conflict::Twins {
            first: "Id".into(),
            second: "iD".into(),
        };
        assert!(twins.touches("id"));
        assert!(!twins.touches("method"));
    }

    #[test]
    fn the_message_escapes_what_it_quotes() {
        let shown = Conflict::Twins {
            first: "a\u{200B}\n".into(),
            second: "A\u{200B}\n".into(),
        }
        .to_string();
        assert!(
            !shown.contains('\n') && !shown.contains('\u{200B}'),
            "{shown}"
        );
    }
}

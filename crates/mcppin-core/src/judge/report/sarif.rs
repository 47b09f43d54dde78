//! The SARIF 2.1.0 log for code-scanning tools, located in the lockfile by [`LockLines`]
//! (see [`to_sarif`]).

use std::fmt::Write as _;

use super::json::signature_json;
use super::text::{finding_text, place, reason_text};
use super::{Evidence, NOT_COMPARED, Policy, Report};
use crate::digest::Digest;
use crate::escape::escape;
use crate::value::{Object, Value};

/// The `uriBaseId` of every location in the SARIF report: the root of the repository the
/// lockfile is in, as GitHub code scanning names it.
pub const SRCROOT: &str = "%SRCROOT%";

/// The key of the fingerprint each SARIF result carries in `partialFingerprints`.
pub const FINGERPRINT: &str = "mcppin/v1";

/// The longest reason a SARIF notification carries, in characters after escaping.
pub const MAX_REASON: usize = 2000;

/// The policies page, built in: each rule's `help` carries its section, so a code-scanning
/// alert explains the policy and what to do even where `helpUri` cannot be reached.
const POLICIES_PAGE: &str = include_str!("../../../../../docs/policies.md");

/// Where [`POLICIES_PAGE`] and the pages it links to live in the repository.
const POLICIES_DIR: &str = "docs/";

/// The file name of [`POLICIES_PAGE`].
const POLICIES_FILE: &str = "policies.md";

/// What the SARIF report needs besides the [`Report`]: where the lockfile is and where the
/// rules' help lives. The caller finds both; this crate reads no files.
#[derive(Clone, Copy, Debug)]
pub struct SarifContext<'a> {
    /// The version of the tool that ran.
    pub tool_version: &'a str,
    /// The lockfile's path relative to the repository root ([`SRCROOT`]), as a URI reference:
    /// `/` between segments, percent-encoded ([`uri_path`]).
    pub lockfile_uri: &'a str,
    /// The lines of the lockfile's entries ([`LockLines::index`]).
    pub lines: &'a LockLines,
    /// The absolute URL of the policies page (`docs/policies.md`), when one is known: each
    /// rule's `helpUri` is it, `#` and the rule id, and the tool's `informationUri` is it.
    /// `None` writes neither (no placeholder address is ever written); each rule's `help`
    /// still carries its whole section, naming the repository path of each page it links to.
    pub help_base: Option<&'a str>,
}

/// The line of each server entry and each approved item in a lockfile, for the physical
/// locations of the SARIF report.
///
/// A server is found at the line of its `id`, an item at the line of its `name`: the line a
/// reviewer looks for, and the one that holds the name the finding reports.
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct LockLines {
    servers: std::collections::BTreeMap<String, usize>,
    items: std::collections::BTreeMap<(String, String), usize>,
}

impl LockLines {
    /// Indexes the lockfile `bytes` as read from disk. Bytes that do not read as JSON, or entries
    /// without an `id` or `name`, are left out: their findings point at line 1.
    #[must_use]
    pub fn index(bytes: &[u8]) -> Self {
        let mut lines = Self::default();
        let Ok(value) = crate::parse(bytes) else {
            return lines;
        };
        let newlines: Vec<usize> = bytes
            .iter()
            .enumerate()
            .filter_map(|(i, &b)| (b == b'\n').then_some(i))
            .collect();
        // Lines as `Position::locate` counts them (only LF ends one), by binary search.
        let line = |v: &Value| newlines.partition_point(|&nl| nl < v.span().start) + 1;
        // A string member of `o` and the line its value starts on.
        let member = |o: &Value, name: &str| {
            o.get(name)
                .and_then(|v| Some((v.as_str()?.to_owned(), line(v))))
        };
        let servers = value
            .get("servers")
            .and_then(Value::as_array)
            .unwrap_or(&[]);
        for entry in servers {
            let Some((server, at)) = member(entry, "id") else {
                continue;
            };
            lines.servers.entry(server.clone()).or_insert(at);
            for kind in crate::surface::ItemKind::ALL {
                let items = entry
                    .get(kind.list_member())
                    .and_then(Value::as_array)
                    .unwrap_or(&[]);
                for (name, at) in items.iter().filter_map(|item| member(item, "name")) {
                    lines.items.entry((server.clone(), name)).or_insert(at);
                }
            }
        }
        lines
    }

    /// The line of `item` of `server`, or of the server's entry when the lockfile does not
    /// approve the item (an added one), or 1 when it has no such server.
    #[must_use]
    pub fn line(&self, server: &str, item: Option<&str>) -> usize {
        item.and_then(|i| self.items.get(&(server.to_owned(), i.to_owned())))
            .or_else(|| self.servers.get(server))
            .copied()
            .unwrap_or(1)
    }
}

/// `path` (relative, segments split on `/`) as a URI reference: every byte outside the
/// unreserved set of RFC 3986 section 2.3 percent-encoded, `/` kept between segments.
#[must_use]
pub fn uri_path(path: &[u8]) -> String {
    let mut out = String::new();
    for &b in path {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The report as a SARIF 2.1.0 log for GitHub code scanning: one rule per policy (and one for
/// what could not be compared), each linking its section of the policies page; level `error`
/// for gated findings and `warning` for reported ones; every result located in the lockfile
/// (the line of the approved item, or of the server's entry for an added one) and by the
/// logical location `server/tool`, with a fingerprint that does not depend on lines or time.
/// Every server string is escaped as in [`to_text`](super::to_text). A run that could not
/// compare everything (exit 3) is marked `executionSuccessful: false` with the reason as a
/// notification. The signature status, when the report has one, is in
/// `runs[0].properties.signature`, as in the JSON report.
#[must_use]
pub fn to_sarif(report: &Report, context: &SarifContext<'_>) -> Value {
    let mut results = Vec::new();
    for f in &report.findings {
        let index = Policy::ALL
            .iter()
            .position(|p| *p == f.policy())
            .unwrap_or(0);
        let mut text = String::new();
        finding_text(f, &mut text);
        let other = match &f.evidence {
            Evidence::NameCollision { other, .. } => Some(other),
            _ => None,
        };
        let identity = [
            Some(f.policy().name()),
            Some(f.server.as_str()),
            f.item.as_deref(),
            f.pointer(),
            other.map(|(s, _)| s.as_str()),
            other.map(|(_, i)| i.as_str()),
        ];
        results.push(sarif_result(
            context,
            (f.policy().name(), index),
            if f.gated { "error" } else { "warning" },
            text.trim_end(),
            (&f.server, f.item.as_deref()),
            &identity,
        ));
    }
    for u in &report.unverified {
        let text = format!(
            "not compared: {}: {}",
            place(&u.server, u.item.as_deref()),
            reason_text(&u.reason)
        );
        let identity = [
            Some(NOT_COMPARED),
            Some(u.server.as_str()),
            u.item.as_deref(),
            Some(u.reason.name()),
        ];
        results.push(sarif_result(
            context,
            (NOT_COMPARED, Policy::ALL.len()),
            "error",
            &text,
            (&u.server, u.item.as_deref()),
            &identity,
        ));
    }
    let failure = (report.exit_code() == 3).then(|| {
        format!(
            "{} approved item(s) or server(s) could not be compared and could hide a \
             departure (rule {NOT_COMPARED})",
            report.unverified.len()
        )
    });
    let mut run = sarif_run(
        context,
        &report.gating,
        report.exit_code(),
        failure.as_deref(),
    );
    run.insert("results", Value::from(results));
    let mut props = Object::new();
    props.insert("status", report.status().name());
    if let Some(signature) = &report.signature {
        props.insert("signature", signature_json(signature, true));
    }
    run.insert("properties", props);
    sarif_log(run)
}

/// The SARIF log of a run that produced no report: an input could not be read (exit 4) or the
/// command was refused (exit 2). It holds the rules, no results, and `reason` (escaped, cut to
/// [`MAX_REASON`] characters) as the notification of a run whose execution did not succeed,
/// so code scanning shows why instead of a missing upload.
#[must_use]
pub fn sarif_failure(context: &SarifContext<'_>, exit_code: u8, reason: &str) -> Value {
    let gating: Vec<Policy> = Policy::ALL
        .into_iter()
        .filter(|p| p.gated_by_default())
        .collect();
    let mut run = sarif_run(context, &gating, exit_code, Some(reason));
    run.insert("results", Value::from(Vec::<Value>::new()));
    sarif_log(run)
}

fn sarif_log(run: Object) -> Value {
    let mut log = Object::new();
    log.insert("$schema", "https://json.schemastore.org/sarif-2.1.0.json");
    log.insert("version", "2.1.0");
    log.insert("runs", Value::from(vec![Value::from(run)]));
    Value::from(log)
}

/// The run without results: the tool with its rules (level `error` for the `gating` policies)
/// and the invocation, which failed when `failure` gives a reason.
fn sarif_run(
    context: &SarifContext<'_>,
    gating: &[Policy],
    exit_code: u8,
    failure: Option<&str>,
) -> Object {
    let mut rules = Vec::new();
    for policy in Policy::ALL {
        rules.push(sarif_rule(
            context,
            policy.name(),
            policy.summary(),
            if gating.contains(&policy) {
                "error"
            } else {
                "warning"
            },
        ));
    }
    rules.push(sarif_rule(
        context,
        NOT_COMPARED,
        "An approved item or server could not be compared and could hide a departure.",
        "error",
    ));
    let mut driver = Object::new();
    driver.insert("name", "mcppin");
    driver.insert("version", context.tool_version);
    driver.insert("semanticVersion", context.tool_version);
    if let Some(base) = context.help_base {
        driver.insert("informationUri", base);
    }
    driver.insert("rules", Value::from(rules));
    let mut tool = Object::new();
    tool.insert("driver", driver);
    let mut invocation = Object::new();
    invocation.insert("executionSuccessful", failure.is_none());
    invocation.insert("exitCode", u64::from(exit_code));
    if let Some(reason) = failure {
        let mut notification = Object::new();
        notification.insert("level", "error");
        notification.insert("message", message(&bounded(reason)));
        invocation.insert(
            "toolExecutionNotifications",
            Value::from(vec![Value::from(notification)]),
        );
    }
    let mut run = Object::new();
    run.insert("tool", tool);
    run.insert("invocations", Value::from(vec![Value::from(invocation)]));
    run
}

/// `text` escaped to printable ASCII and cut to [`MAX_REASON`] characters.
fn bounded(text: &str) -> String {
    let escaped = escape(text);
    if escaped.len() <= MAX_REASON {
        return escaped.into_owned();
    }
    // Escaped text is ASCII: every byte is a character boundary.
    format!("{}... (cut)", &escaped[..MAX_REASON])
}

fn message(text: &str) -> Object {
    let mut m = Object::new();
    m.insert("text", text);
    m
}

fn sarif_rule(context: &SarifContext<'_>, id: &str, summary: &str, level: &str) -> Value {
    let mut rule = Object::new();
    rule.insert("id", id);
    rule.insert(
        "name",
        id.split('-')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect::<String>(),
    );
    rule.insert("shortDescription", message(summary));
    rule.insert("fullDescription", message(summary));
    if let Some(base) = context.help_base {
        rule.insert("helpUri", format!("{base}#{id}"));
    }
    rule.insert("help", help(id, summary, context.help_base));
    let mut config = Object::new();
    config.insert("level", level);
    rule.insert("defaultConfiguration", config);
    Value::from(rule)
}

/// A rule's `help`: the section of the policies page that documents it, as Markdown and as
/// plain text. A code-scanning viewer shows the Markdown and has no page to resolve its
/// relative links against: with `help_base` they are made absolute against it, without one
/// each names the page's path in the repository instead. The summary alone where the page has
/// no such section.
fn help(id: &str, summary: &str, help_base: Option<&str>) -> Object {
    let Some(section) = policy_section(POLICIES_PAGE, id) else {
        return message(summary);
    };
    let markdown = match help_base {
        Some(page) => {
            let base = page.rfind('/').map_or(page, |end| &page[..=end]);
            absolute_links(section, base, page)
        }
        None => repository_links(section, POLICIES_DIR, POLICIES_FILE),
    };
    let mut help = Object::new();
    help.insert("text", markdown.replace('`', ""));
    help.insert("markdown", markdown);
    help
}

/// The body of the section headed `## id` in `page` (between its heading and the next level-2
/// heading), trimmed.
fn policy_section<'p>(page: &'p str, id: &str) -> Option<&'p str> {
    let heading = format!("## {id}\n");
    let start = if page.starts_with(&heading) {
        heading.len()
    } else {
        page.find(&format!("\n{heading}"))? + 1 + heading.len()
    };
    let body = &page[start..];
    let end = body.find("\n## ").unwrap_or(body.len());
    Some(body[..end].trim())
}

/// `markdown` with each inline link target `](target)` that is relative made absolute: a
/// fragment alone (`#x`) against `page`, anything else against the directory `base`.
fn absolute_links(markdown: &str, base: &str, page: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut rest = markdown;
    while let Some(at) = rest.find("](") {
        let (head, tail) = rest.split_at(at + 2);
        out.push_str(head);
        let end = tail.find(')').unwrap_or(tail.len());
        let target = &tail[..end];
        if target.starts_with('#') {
            out.push_str(page);
        } else if !target.contains("://") {
            out.push_str(base);
        }
        out.push_str(target);
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `markdown` with each inline link `[label](target)` whose target is relative written as the
/// target's path in the repository, in code: `` `dir/target` `` alone where the label is the
/// target's file name, else after the label. A fragment alone (`#x`) is a place in `page`.
/// Absolute links are kept.
fn repository_links(markdown: &str, dir: &str, page: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut rest = markdown;
    while let Some(at) = rest.find("](") {
        let (head, tail) = rest.split_at(at);
        let tail = &tail[2..];
        let end = tail.find(')').unwrap_or(tail.len());
        let target = &tail[..end];
        let label_at = head.rfind('[');
        match label_at {
            Some(open) if !target.contains("://") => {
                let label = &head[open + 1..];
                let path = if target.starts_with('#') {
                    format!("{dir}{page}{target}")
                } else {
                    format!("{dir}{target}")
                };
                out.push_str(&head[..open]);
                let file = target.split('#').next().unwrap_or_default();
                if label != file && !(target.starts_with('#') && label == page) {
                    out.push_str(label);
                    out.push(' ');
                }
                out.push('`');
                out.push_str(&path);
                out.push('`');
                rest = tail.get(end + 1..).unwrap_or_default();
            }
            _ => {
                out.push_str(head);
                out.push_str("](");
                out.push_str(target);
                rest = &tail[end..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A fingerprint of what a result is about (rule, server, item, pointer, ...), never of
/// where it is or when: the same finding keeps it across runs and edits of the lockfile.
fn fingerprint(identity: &[Option<&str>]) -> String {
    let parts: Vec<Value> = identity
        .iter()
        .map(|p| p.map_or_else(Value::null, Value::from))
        .collect();
    Digest::of_bytes(&crate::canonicalize_exact(&Value::from(parts))).to_string()
}

fn sarif_result(
    context: &SarifContext<'_>,
    (rule, index): (&str, usize),
    level: &str,
    text: &str,
    (server, item): (&str, Option<&str>),
    identity: &[Option<&str>],
) -> Value {
    let mut logical = Object::new();
    logical.insert("fullyQualifiedName", place(server, item));
    logical.insert("name", escape(item.unwrap_or(server)).into_owned());
    logical.insert("kind", if item.is_some() { "function" } else { "module" });
    let mut artifact = Object::new();
    artifact.insert("uri", context.lockfile_uri);
    artifact.insert("uriBaseId", SRCROOT);
    let mut region = Object::new();
    region.insert("startLine", context.lines.line(server, item) as u64);
    let mut physical = Object::new();
    physical.insert("artifactLocation", artifact);
    physical.insert("region", region);
    let mut location = Object::new();
    location.insert("physicalLocation", physical);
    location.insert("logicalLocations", Value::from(vec![Value::from(logical)]));
    let mut fingerprints = Object::new();
    fingerprints.insert(FINGERPRINT, fingerprint(identity));
    let mut result = Object::new();
    result.insert("ruleId", rule);
    result.insert("ruleIndex", index as u64);
    result.insert("level", level);
    result.insert("message", message(&format!("{text}.")));
    result.insert("locations", Value::from(vec![Value::from(location)]));
    result.insert("partialFingerprints", fingerprints);
    Value::from(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockfile::Lockfile;
    use crate::manifest::Manifest;
    use crate::report::testing::*;

    #[test]
    fn sarif_levels_follow_the_gate() {
        let parcel = HOSTILE.replace(r#"]}]}"#, r#"]},{"id":"p","tools":[{"name":"new"}]}]}"#);
        let r = report(HOSTILE, &parcel);
        let sarif = sarif(&r, b"");
        let levels: Vec<_> = results(&sarif)
            .iter()
            .map(|r| (str_at(r, "/ruleId"), str_at(r, "/level")))
            .collect();
        assert!(levels.contains(&("tool-added", "error")), "{levels:?}");
        assert!(
            levels.contains(&("hidden-characters", "warning")),
            "{levels:?}"
        );
        assert!(sarif.to_string().is_ascii());
    }

    #[test]
    fn every_rule_carries_its_section_of_the_policies_page_as_help() {
        let approved = Manifest::parse(TWO.as_bytes()).unwrap();
        let lock = Lockfile::approve(None, &approved, &[]).unwrap().to_bytes();
        let sarif = sarif(&report(TWO, TWO), &lock);
        let rules = sarif.pointer("/runs/0/tool/driver/rules").unwrap();
        let rules = rules.as_array().unwrap();
        assert_eq!(rules.len(), Policy::ALL.len() + 1);
        for (i, rule) in rules.iter().enumerate() {
            let id = str_at(rule, "/id");
            let markdown = str_at(rule, "/help/markdown");
            let own = policy_section(POLICIES_PAGE, id).unwrap();
            assert!(markdown.starts_with("- Fires when:"), "{id}: {markdown}");
            assert!(markdown.contains("What to do"), "{id}: {markdown}");
            assert_eq!(own.lines().count(), markdown.lines().count(), "{id}");
            assert!(!markdown.contains("## "), "{id} runs into the next section");
            assert!(!str_at(rule, "/help/text").contains('`'), "{id}");
            // Relative links are made absolute against the page they were written in.
            assert!(!markdown.contains("](cli.md"), "{id}: {markdown}");
            assert!(!markdown.contains("](#"), "{id}: {markdown}");
            assert_eq!(i < Policy::ALL.len(), id != NOT_COMPARED);
        }
        let changed = str_at(&rules[0], "/help/markdown");
        assert!(changed.contains("mcppin lock -o LOCK --approve SERVER/TOOL MANIFEST"));
    }

    #[test]
    fn without_a_help_base_no_rule_or_tool_carries_an_address() {
        // No placeholder address; each rule keeps its whole help text.
        let approved = Manifest::parse(TWO.as_bytes()).unwrap();
        let lock = Lockfile::approve(None, &approved, &[]).unwrap().to_bytes();
        let sarif = sarif_linking(&report(TWO, TWO), &lock, None);
        let driver = sarif.pointer("/runs/0/tool/driver").unwrap();
        assert_eq!(driver.get("informationUri"), None);
        let rules = driver.get("rules").and_then(Value::as_array).unwrap();
        assert_eq!(rules.len(), Policy::ALL.len() + 1);
        for rule in rules {
            let id = str_at(rule, "/id");
            assert_eq!(rule.get("helpUri"), None, "{id}");
            let markdown = str_at(rule, "/help/markdown");
            let own = policy_section(POLICIES_PAGE, id).unwrap();
            assert_eq!(own.lines().count(), markdown.lines().count(), "{id}");
            assert!(markdown.contains("What to do"), "{id}: {markdown}");
            assert!(!markdown.contains("]("), "{id}: {markdown}");
            assert!(!markdown.contains("://"), "{id}: {markdown}");
        }
        let launch = rules
            .iter()
            .find(|r| str_at(r, "/id") == "launch-changed")
            .unwrap();
        assert!(
            str_at(launch, "/help/markdown").contains("(`docs/export.md#launch-identity`)"),
            "{launch}"
        );
        // With a base, the same rules link to it.
        let linked = sarif_linking(&report(TWO, TWO), &lock, Some(HELP));
        assert_eq!(str_at(&linked, "/runs/0/tool/driver/informationUri"), HELP);
        assert_eq!(
            str_at(&linked, "/runs/0/tool/driver/rules/0/helpUri"),
            format!("{HELP}#tool-changed")
        );
    }

    #[test]
    fn repository_links_name_the_path_of_each_relative_target() {
        let page = "See [cli.md](cli.md#y), [the z](#b), [policies.md](#c), [odd](x.md) \
                    and [w](https://w.example/). A ](lone one) stays.";
        assert_eq!(
            repository_links(page, "docs/", "p.md"),
            "See `docs/cli.md#y`, the z `docs/p.md#b`, policies.md `docs/p.md#c`, \
             odd `docs/x.md` and [w](https://w.example/). A ](lone one) stays."
        );
        assert_eq!(
            repository_links("[p.md](#c)", "docs/", "p.md"),
            "`docs/p.md#c`"
        );
        assert_eq!(repository_links("[a](b", "d/", "p.md"), "a `d/b`");
    }

    #[test]
    fn help_falls_back_to_the_summary_and_resolves_relative_links() {
        let help = help("no-such-policy", "A summary.", Some(HELP));
        assert_eq!(Value::from(help).to_string(), r#"{"text":"A summary."}"#);
        let page =
            "# P\n\n## a\n\nSee [x](cli.md#y), [z](#b) and [w](https://w.example/).\n## b\n\nB.\n";
        let a = policy_section(page, "a").unwrap();
        assert_eq!(
            absolute_links(a, "https://d.example/docs/", "https://d.example/docs/p.md"),
            "See [x](https://d.example/docs/cli.md#y), [z](https://d.example/docs/p.md#b) \
             and [w](https://w.example/)."
        );
        assert_eq!(policy_section(page, "b"), Some("B."));
        assert_eq!(policy_section(page, "c"), None);
        assert_eq!(policy_section("## c\nC", "c"), Some("C"));
    }

    #[test]
    fn sarif_locates_each_result_at_its_item_or_server_in_the_lockfile() {
        let approved = Manifest::parse(TWO.as_bytes()).unwrap();
        let lock = Lockfile::approve(None, &approved, &[]).unwrap().to_bytes();
        let text = String::from_utf8(lock.clone()).unwrap();
        let served = TWO.replace(r#""Find""#, r#""Find all""#).replace(
            r#"{"name":"send"}"#,
            r#"{"name":"send"},{"name":"forward"}"#,
        );
        let r = report(TWO, &served);
        let sarif = sarif(&r, &lock);
        let found = results(&sarif);
        assert_eq!(found.len(), 2, "{sarif}");
        for (result, rule, holds) in [
            (&found[0], "tool-changed", r#""name": "search""#),
            (&found[1], "tool-added", r#""id": "mail""#),
        ] {
            assert_eq!(str_at(result, "/ruleId"), rule);
            let at = "/locations/0/physicalLocation";
            assert_eq!(
                str_at(result, &format!("{at}/artifactLocation/uri")),
                "config/mcp.lock.json"
            );
            assert_eq!(
                str_at(result, &format!("{at}/artifactLocation/uriBaseId")),
                SRCROOT
            );
            let line = line_at(result, &format!("{at}/region/startLine"));
            let held = text.lines().nth(line - 1).unwrap();
            assert!(held.contains(holds), "{rule}: line {line} is {held:?}");
        }
        assert_eq!(
            str_at(&sarif, "/runs/0/tool/driver/rules/0/helpUri"),
            format!("{HELP}#tool-changed")
        );
        assert_eq!(
            sarif.pointer("/runs/0/invocations/0/executionSuccessful"),
            Some(&Value::from(true))
        );
    }

    #[test]
    fn lock_lines_fall_back_to_the_server_then_to_line_one() {
        let lock = b"{\"servers\": [\n {\"id\": \"a\",\n  \"tools\": [\n   {\"name\": \"t\"}]}],\n \"x\": 1}";
        let lines = LockLines::index(lock);
        assert_eq!(lines.line("a", Some("t")), 4);
        assert_eq!(lines.line("a", Some("new")), 2);
        assert_eq!(lines.line("a", None), 2);
        assert_eq!(lines.line("b", Some("t")), 1);
        assert_eq!(LockLines::index(b"{not json").line("a", Some("t")), 1);
    }

    #[test]
    fn sarif_fingerprints_name_the_finding_not_its_line() {
        let approved = Manifest::parse(TWO.as_bytes()).unwrap();
        let lock = Lockfile::approve(None, &approved, &[]).unwrap().to_bytes();
        let served = TWO.replace(r#""Find""#, r#""Find all""#);
        let r = report(TWO, &served);
        let print = |sarif: &Value| {
            str_at(
                &results(sarif)[0],
                &format!("/partialFingerprints/{}", FINGERPRINT.replace('/', "~1")),
            )
            .to_owned()
        };
        let once = print(&sarif(&r, &lock));
        let mut shifted = b"\n\n\n".to_vec();
        shifted.extend_from_slice(&lock);
        let moved = sarif(&r, &shifted);
        assert_ne!(
            line_at(
                &results(&moved)[0],
                "/locations/0/physicalLocation/region/startLine"
            ),
            line_at(
                &results(&sarif(&r, &lock))[0],
                "/locations/0/physicalLocation/region/startLine"
            )
        );
        assert_eq!(print(&moved), once);
        let other = report(
            TWO,
            &TWO.replace(r#"{"name":"fetch"}"#, r#"{"name":"fetch","x":1}"#),
        );
        assert_ne!(print(&sarif(&other, &lock)), once);
    }

    #[test]
    fn sarif_marks_a_partial_run_as_not_successful() {
        let unseen = TWO
            .replace(r#""complete":true"#, r#""complete":false"#)
            .replace(r#",{"name":"fetch"}"#, "");
        let r = report(TWO, &unseen);
        assert_eq!(r.exit_code(), 3);
        let sarif = sarif(&r, b"");
        let invocation = sarif.pointer("/runs/0/invocations/0").unwrap();
        assert_eq!(
            invocation.get("executionSuccessful"),
            Some(&Value::from(false))
        );
        assert!(
            str_at(invocation, "/toolExecutionNotifications/0/message/text")
                .starts_with("1 approved item(s) or server(s) could not be compared"),
            "{invocation}"
        );
        assert_eq!(str_at(&results(&sarif)[0], "/ruleId"), NOT_COMPARED);
    }

    #[test]
    fn sarif_failure_carries_the_reason_escaped_and_bounded() {
        let lines = LockLines::default();
        let context = SarifContext {
            tool_version: "0.1.0",
            lockfile_uri: "mcp.lock.json",
            lines: &lines,
            help_base: Some(HELP),
        };
        let long = format!("bad \u{1b}[2K\u{202e} {}", "x".repeat(5000));
        let log = sarif_failure(&context, 4, &long);
        let invocation = log.pointer("/runs/0/invocations/0").unwrap();
        assert_eq!(
            invocation.get("executionSuccessful"),
            Some(&Value::from(false))
        );
        assert_eq!(line_at(invocation, "/exitCode"), 4);
        let text = str_at(invocation, "/toolExecutionNotifications/0/message/text");
        assert!(text.starts_with("bad <U+001B>[2K<U+202E> xxx"), "{text}");
        assert!(
            text.ends_with("... (cut)") && text.len() < MAX_REASON + 20,
            "{text}"
        );
        assert_eq!(results(&log).len(), 0);
    }

    #[test]
    fn uri_path_percent_encodes_outside_the_unreserved_set() {
        assert_eq!(uri_path(b"ci/mcp.lock.json"), "ci/mcp.lock.json");
        assert_eq!(
            uri_path("my locks/\u{e9}#1?.json".as_bytes()),
            "my%20locks/%C3%A9%231%3F.json"
        );
    }
}

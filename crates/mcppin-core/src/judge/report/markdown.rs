//! The Markdown report: for a pull request comment or a GitHub job summary (see
//! [`to_markdown`]).
//!
//! # Security
//!
//! Server text reaches the page only as the text report writes it ([`crate::escape`]: printable
//! ASCII, no line break) and only where a Markdown renderer reads nothing into it:
//!
//! - in a fenced code block whose fence is a run of backticks one longer than the longest run
//!   in the block (at least three). CommonMark (0.31, section 4.5) closes a fenced block only on
//!   a line holding a run of at least as many backticks as the opening fence, so no line of the
//!   block can close it, and nothing inside a code block is read as Markdown or HTML (no link,
//!   image, tag, emphasis, table, mention or autolink);
//! - in an inline code span whose delimiters are likewise one longer than the longest run of
//!   backticks inside it, padded by a space on each side (which the renderer strips);
//! - in the `<summary>` line of a server's section, an HTML block that Markdown never reads
//!   into, inside `<code>` (where GitHub links no mention, issue or commit), with every
//!   character but letters and digits written as a numeric character reference, so that no
//!   `<`, `&` or quote of the server's can open a tag or an attribute.
//!
//! Everything else on the page is this module's own words.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::text::{
    code_points_text, mode, opt_value_text, place, place_text, plural, reason_text, text_or_absent,
    tool_outline, verdict_text,
};
use super::{Evidence, Finding, Note, Policy, Report, ServerChanges, SignatureStatus, Unverified};
use crate::artifact::Artifact;
use crate::diff::Change;
use crate::escape::escape;
use crate::value::Value;

/// The most a Markdown report writes, in characters (the report is ASCII, so also in bytes):
/// below GitHub's 65,536 characters for a pull request comment, with room for a heading of the
/// workflow's own, and far below its 1 MiB for a job summary. A longer report is cut, whole
/// findings at a time, and says how many findings and servers it left out.
pub const MARKDOWN_LIMIT: usize = 60_000;

/// What a Markdown report shows beside the findings.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct MarkdownContext<'a> {
    /// The servers seen on one side only: each section says so.
    pub servers: &'a ServerChanges,
    /// The command that approves what the report shows (`mcppin lock --approve ...`), shown in
    /// a code block of its own; `None` when there is nothing to approve.
    pub command: Option<String>,
    /// Lines shown in a code block at the end (what no approval clears; what `lock` wrote).
    pub closing: Vec<String>,
    /// The most the report writes, in characters ([`MARKDOWN_LIMIT`] for GitHub).
    pub limit: usize,
}

impl<'a> MarkdownContext<'a> {
    /// A context with no command and no closing lines, bounded by [`MARKDOWN_LIMIT`].
    #[must_use]
    pub fn new(servers: &'a ServerChanges) -> Self {
        Self {
            servers,
            command: None,
            closing: Vec::new(),
            limit: MARKDOWN_LIMIT,
        }
    }
}

/// The report of `mcppin verify --format markdown`: a heading with the verdict, the verdict's
/// line, what each policy found and what the signature check found, one collapsible section
/// per server holding its findings (each a `diff` code block with the before and after of
/// each change, server text escaped as in the text report), then the approving command.
/// At most `context.limit` characters: a report that would be longer leaves out whole
/// findings and says how many, and of how many servers.
#[must_use]
pub fn to_markdown(report: &Report, context: &MarkdownContext<'_>) -> String {
    let status = report.status().name();
    let mut head = format!("### mcppin verify: {status}\n\n");
    let _ = writeln!(head, "**{}**\n", verdict_text(report));
    let found: Vec<String> = report
        .summary()
        .into_iter()
        .filter(|(_, found, _)| *found > 0)
        .map(|(policy, found, _)| {
            format!(
                "{} {found} {}",
                policy.name(),
                mode(report.gating.contains(&policy))
            )
        })
        .collect();
    if !found.is_empty() || !report.unverified.is_empty() {
        let mut line = String::new();
        if !found.is_empty() {
            let _ = write!(line, "Found: {}.", found.join(", "));
        }
        if !report.unverified.is_empty() {
            if !line.is_empty() {
                line.push(' ');
            }
            let _ = write!(
                line,
                "Not compared: {}.",
                plural(report.unverified.len(), "item")
            );
        }
        let _ = writeln!(head, "{line}\n");
    }
    if let Some(signature) = &report.signature {
        let _ = write!(
            head,
            "Lockfile: approval_serial {}, ",
            signature.approval_serial()
        );
        let signer = signature.signer().map(|s| {
            format!(
                "key {}, signed {}",
                code_span(&s.key.to_string()),
                code_span(&escape(&s.signed_at))
            )
        });
        match (signature, signer) {
            (SignatureStatus::Verified { .. }, Some(signer)) => {
                let _ = write!(head, "signature verified ({signer})");
            }
            (SignatureStatus::Unchecked { .. }, Some(signer)) => {
                let _ = write!(
                    head,
                    "signature not checked, no key given (it claims {signer})"
                );
            }
            (SignatureStatus::Unchecked { .. }, None) => {
                head.push_str("signature not checked, no key given (it does not read)");
            }
            _ => head.push_str("not signed"),
        }
        head.push_str(".\n\n");
    }
    let mut tail = String::new();
    if let Some(command) = &context.command {
        tail.push_str("To approve these changes:\n\n");
        tail.push_str(&code_block("sh", std::slice::from_ref(command)));
        tail.push('\n');
    }
    if !context.closing.is_empty() {
        tail.push_str(&code_block("text", &context.closing));
        tail.push('\n');
    }
    page(head, report, context, tail)
}

/// What `mcppin lock --diff-format markdown` shows of the approval it writes: `title` as the
/// heading (the command's own words: how many changes it approves), one collapsible section
/// per server holding what moved against the existing lockfile (as [`to_markdown`]), and the
/// lines of `context.closing` (what was written) in a code block. Bounded as [`to_markdown`].
#[must_use]
pub fn findings_markdown(report: &Report, title: &str, context: &MarkdownContext<'_>) -> String {
    let head = format!("### mcppin lock: {title}\n\n");
    let mut tail = String::new();
    if !context.closing.is_empty() {
        tail.push_str(&code_block("text", &context.closing));
        tail.push('\n');
    }
    page(head, report, context, tail)
}

/// The page of a run that could not compare anything (exit 2 or 4: a wrong command line, an
/// unreadable input or approval): the heading says so with the exit code, and `message` (the
/// error with its causes, escaped by whoever wrote it) is shown in a code block, so that a job
/// summary says why the check did not run instead of staying empty.
#[must_use]
pub fn failure_markdown(code: u8, message: &str) -> String {
    let lines: Vec<String> = message
        .lines()
        .map(|line| crate::escape::escape_non_ascii(line).into_owned())
        .collect();
    format!(
        "### mcppin verify: could not compare (exit {code})\n\n{}\n",
        code_block("text", &lines)
    )
}

/// One server's part of the page.
struct Section {
    /// The `<details><summary>` line.
    open: String,
    /// The blocks: a fenced code block each, followed by a blank line.
    blocks: Vec<String>,
    /// How many of `blocks` are findings (the others are notes and not-compared entries).
    findings: Vec<bool>,
}

/// How many characters the line saying what a cut section left out may take.
const OMITTED_LINE: usize = 160;
/// How many characters the notice of a cut report may take.
const CUT_NOTICE: usize = 400;
/// What closes a section.
const CLOSE: &str = "</details>\n\n";

/// The page: `head`, the sections, `tail`, cut to `context.limit`.
fn page(head: String, report: &Report, context: &MarkdownContext<'_>, tail: String) -> String {
    let sections = sections(report, context.servers);
    let mut tail = tail;
    // The approving command is what a reviewer acts on; one too long to leave room for
    // anything else is named rather than shown.
    if head.len() + tail.len() + CUT_NOTICE > context.limit / 2 {
        tail = "The approving command is too long for this report: the text report (mcppin \
                verify without --format) ends with it.\n\n"
            .to_owned();
    }
    let whole: usize = sections
        .iter()
        .map(|s| s.open.len() + s.blocks.iter().map(String::len).sum::<usize>() + CLOSE.len())
        .sum();
    let mut out = head;
    if out.len() + whole + tail.len() <= context.limit {
        for s in &sections {
            out.push_str(&s.open);
            s.blocks.iter().for_each(|b| out.push_str(b));
            out.push_str(CLOSE);
        }
        out.push_str(&tail);
        return out;
    }
    let mut budget = context
        .limit
        .saturating_sub(out.len() + tail.len() + CUT_NOTICE);
    let (mut left_findings, mut left_entries, mut servers_cut) = (0usize, 0usize, 0usize);
    for s in &sections {
        let fixed = s.open.len() + OMITTED_LINE + CLOSE.len();
        if fixed > budget {
            left_findings += s.findings.iter().filter(|f| **f).count();
            left_entries += s.findings.iter().filter(|f| !**f).count();
            servers_cut += 1;
            continue;
        }
        budget -= fixed;
        out.push_str(&s.open);
        let (mut omitted, mut omitted_entries) = (0, 0);
        for (block, finding) in s.blocks.iter().zip(&s.findings) {
            if block.len() <= budget {
                budget -= block.len();
                out.push_str(block);
            } else if *finding {
                omitted += 1;
            } else {
                omitted_entries += 1;
            }
        }
        if omitted + omitted_entries > 0 {
            servers_cut += 1;
            left_findings += omitted;
            left_entries += omitted_entries;
            let _ = writeln!(
                out,
                "Not shown here: {}; the report is cut to {} characters.\n",
                left_out(omitted, omitted_entries),
                context.limit
            );
        }
        out.push_str(CLOSE);
    }
    let _ = writeln!(
        out,
        "**This report was cut to {} characters; not shown: {}, of {}.** The text report \
         (the same command without --format, or --diff-format) shows everything.\n",
        context.limit,
        left_out(left_findings, left_entries),
        plural(servers_cut, "server"),
    );
    out.push_str(&tail);
    out
}

/// `3 findings`, `3 findings and 1 other entry` (a note or something not compared).
fn left_out(findings: usize, entries: usize) -> String {
    if entries == 0 {
        plural(findings, "finding")
    } else {
        format!(
            "{} and {}",
            plural(findings, "finding"),
            plural(entries, "other entry")
        )
    }
}

/// One section per server holding a finding, a note or something not compared, in server
/// order; each section's findings in policy order.
fn sections(report: &Report, servers: &ServerChanges) -> Vec<Section> {
    #[derive(Default)]
    struct Of<'r> {
        notes: Vec<&'r Note>,
        findings: Vec<&'r Finding>,
        unverified: Vec<&'r Unverified>,
    }
    let mut by_server: BTreeMap<&str, Of<'_>> = BTreeMap::new();
    for n in &report.notes {
        by_server.entry(n.server()).or_default().notes.push(n);
    }
    for f in &report.findings {
        by_server.entry(&f.server).or_default().findings.push(f);
    }
    for u in &report.unverified {
        by_server.entry(&u.server).or_default().unverified.push(u);
    }
    let rank = |p: Policy| Policy::ALL.iter().position(|q| *q == p);
    by_server
        .into_iter()
        .map(|(server, mut of)| {
            of.findings.sort_by_key(|f| rank(f.policy()));
            let gated = of.findings.iter().filter(|f| f.gated).count();
            let mut counts = vec![plural(of.findings.len(), "finding")];
            if gated > 0 {
                counts.push(format!("{gated} gated"));
            }
            if !of.unverified.is_empty() {
                counts.push(format!("{} not compared", of.unverified.len()));
            }
            if servers.new.contains(server) {
                counts.push("new server".to_owned());
            }
            if servers.gone.contains(server) {
                counts.push("gone from the capture".to_owned());
            }
            let open = format!(
                "<details><summary>server <code>{}</code>: {}</summary>\n\n",
                html_text(&escape(server)),
                counts.join(", ")
            );
            let mut blocks = Vec::new();
            let mut findings = Vec::new();
            for n in of.notes {
                blocks.push(diff_block(&note_lines(n)));
                findings.push(false);
            }
            for f in of.findings {
                blocks.push(diff_block(&finding_lines(f)));
                findings.push(true);
            }
            for u in of.unverified {
                let lines = vec![
                    format!("not compared: {}", place(&u.server, u.item.as_deref())),
                    format!("reason: {}", reason_text(&u.reason)),
                ];
                blocks.push(diff_block(&lines));
                findings.push(false);
            }
            Section {
                open,
                blocks,
                findings,
            }
        })
        .collect()
}

/// A finding as the lines of a `diff` block: its heading, then what was approved as `-`
/// lines and what is served as `+` lines, each value as the text report writes it.
fn finding_lines(f: &Finding) -> Vec<String> {
    let mut lines = vec![format!(
        "{} [{}]: {}",
        f.policy().name(),
        mode(f.gated),
        place(&f.server, f.item.as_deref())
    )];
    let mut push = |prefix: &str, text: &str| lines.push(format!("{prefix}{text}"));
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
            let classes: Vec<&str> = f.classes().iter().map(|c| c.name()).collect();
            if !classes.is_empty() {
                push("classes: ", &classes.join(", "));
            }
            if changes.is_empty() {
                // A version 1 lockfile holds digests only: name both.
                push("-", &approved.to_string());
                push("+", &served.to_string());
            }
            for c in changes {
                change_lines(c, &mut push);
            }
        }
        Evidence::ToolAdded { served: item, .. } => outline_lines("+", item, &mut push),
        Evidence::ToolRemoved {
            approved: Some(item),
            ..
        } => outline_lines("-", item, &mut push),
        Evidence::PromptAdded { served, .. } | Evidence::ResourceTemplateAdded { served, .. } => {
            push("+", &opt_value_text(Some(served)));
        }
        Evidence::PromptRemoved {
            approved: Some(v), ..
        }
        | Evidence::ResourceTemplateRemoved {
            approved: Some(v), ..
        } => push("-", &opt_value_text(Some(v))),
        Evidence::ToolRemoved {
            approved: None,
            approved_pin,
        }
        | Evidence::PromptRemoved {
            approved: None,
            approved_pin,
        }
        | Evidence::ResourceTemplateRemoved {
            approved: None,
            approved_pin,
        } => push("-", &approved_pin.to_string()),
        Evidence::ToolRenamed { from, served, .. } => {
            push("-name: ", &text_or_absent(Some(from)));
            push("+name: ", &text_or_absent(f.item.as_deref()));
            push("otherwise unchanged: ", &opt_value_text(Some(served)));
        }
        Evidence::LaunchChanged { approved, served } => {
            push("-", &escape(&approved.to_string()));
            push("+", &escape(&served.to_string()));
        }
        Evidence::ArtifactChanged { approved, served } => {
            let (gone, new) = approved.differences(served);
            for entry in gone {
                push("-", &escape(&entry));
            }
            for entry in new {
                push("+", &escape(&entry));
            }
        }
        Evidence::ArtifactUnknown { reason, approved } => {
            push("reason: ", &escape(reason));
            for entry in approved.iter().flat_map(Artifact::entries) {
                push("not checked: ", &escape(&entry));
            }
        }
        Evidence::FloatingVersion { launch, package } => {
            push(
                "package: ",
                &format!("{} (no pinned version or digest)", escape(package)),
            );
            push("launch: ", &escape(&launch.to_string()));
        }
        Evidence::ServerRenamed { approved, served }
        | Evidence::InstructionsChanged { approved, served } => {
            push("-", &text_or_absent(approved.as_deref()));
            push("+", &text_or_absent(served.as_deref()));
        }
        Evidence::ProtocolChanged { approved, served } => {
            push("-", &text_or_absent(Some(approved)));
            push("+", &text_or_absent(Some(served)));
        }
        Evidence::NameCollision {
            other: (server, item),
            kind,
        } => push(
            kind.as_str(),
            &format!(" match with {}", place(server, Some(item))),
        ),
        Evidence::HiddenCharacters {
            pointer,
            in_name,
            code_points,
        } => push(
            if *in_name {
                "member name at "
            } else {
                "text at "
            },
            &format!("{}: {}", escape(pointer), code_points_text(code_points)),
        ),
        Evidence::MixedScriptName => push("the name draws on more than one writing system", ""),
        Evidence::InvalidToolName => push("the name is outside [A-Za-z0-9._-]{1,128}", ""),
    }
    lines
}

/// A change as a hunk: `@@ POINTER (classes) @@`, then the old value as a `-` line and the
/// new one as a `+` line (`(absent)` where the place does not exist).
fn change_lines(c: &Change, push: &mut impl FnMut(&str, &str)) {
    let classes: Vec<&str> = c.classes.iter().map(|c| c.name()).collect();
    push(
        "@@ ",
        &format!("{} ({}) @@", escape(&c.pointer), classes.join(", ")),
    );
    push("-", &place_text(c.old.as_ref()));
    push("+", &place_text(c.new.as_ref()));
}

/// A tool outlined as the text report outlines it, each line behind `prefix`.
fn outline_lines(prefix: &str, item: &Value, push: &mut impl FnMut(&str, &str)) {
    let mut text = String::new();
    tool_outline(item, "", &mut text);
    for line in text.lines() {
        push(prefix, line);
    }
}

/// A note as the lines of a `diff` block.
fn note_lines(note: &Note) -> Vec<String> {
    match note {
        Note::ClientCapabilitiesDiffer {
            server,
            approved,
            served,
        } => vec![
            format!(
                "note: {}: captured declaring other client capabilities than the approved capture",
                place(server, None)
            ),
            format!("-{}", opt_value_text(Some(approved))),
            format!("+{}", opt_value_text(Some(served))),
            "a server may offer other items to a client declaring other capabilities: items of \
             this server found added or removed may follow from the capture, not the server \
             (capture again declaring the approved ones: mcppin-export --client or \
             --client-capabilities); a changed item is not explained by it"
                .to_owned(),
        ],
        Note::GuardNotCompared {
            server,
            lock_version,
        } => vec![
            format!(
                "note: {}: runs behind mcppin-guard, which a version {lock_version} lockfile does \
                 not record",
                place(server, None)
            ),
            "the guard was not compared: removing it or editing its settings would pass; lock \
             again to record it (mcppin lock; the approval serial does not move)"
                .to_owned(),
        ],
    }
}

fn diff_block(lines: &[String]) -> String {
    let mut block = code_block("diff", lines);
    block.push('\n');
    block
}

/// `lines` as a fenced code block with `info` as its info string: the fence is a run of
/// backticks one longer than the longest run in the lines (at least three), so that no line
/// can close it (CommonMark 0.31, section 4.5).
fn code_block(info: &str, lines: &[String]) -> String {
    let fence = "`".repeat(
        lines
            .iter()
            .map(|l| longest_run(l))
            .max()
            .unwrap_or(0)
            .max(2)
            + 1,
    );
    let mut out = format!("{fence}{info}\n");
    for line in lines {
        // Escaped text holds no line break; a line of ours never does either.
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
    out
}

/// `text` (escaped, one line) as an inline code span: delimited by a run of backticks one
/// longer than the longest run in it, and padded with a space on each side where the text
/// starts or ends with a backtick or both ends are spaces, which the renderer strips again
/// (CommonMark 0.31, section 6.1).
fn code_span(text: &str) -> String {
    let ticks = "`".repeat(longest_run(text) + 1);
    let pad = text.starts_with('`')
        || text.ends_with('`')
        || (text.starts_with(' ') && text.ends_with(' '));
    if pad {
        format!("{ticks} {text} {ticks}")
    } else {
        format!("{ticks}{text}{ticks}")
    }
}

/// The length of the longest run of backticks in `text`.
fn longest_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// `text` for an HTML element's content: letters and digits as they are, every other
/// character as a numeric character reference (`&#60;` for `<`).
fn html_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            let _ = write!(out, "&#{};", u32::from(c));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testing::*;

    #[test]
    fn a_fence_is_longer_than_any_run_of_backticks_it_holds() {
        assert_eq!(longest_run("a```b`"), 3);
        let block = code_block("diff", &["+x ```` y".to_owned(), "```".to_owned()]);
        assert!(block.starts_with("`````diff\n"), "{block}");
        assert!(block.ends_with("\n`````\n"), "{block}");
        assert_eq!(code_block("sh", &["ls".to_owned()]), "```sh\nls\n```\n");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`a"), "`` `a ``");
        assert_eq!(code_span(" a "), "`  a  `");
        assert_eq!(code_span("sha256:00"), "`sha256:00`");
    }

    #[test]
    fn html_text_leaves_no_markup_character() {
        assert_eq!(html_text("a<b>&\"'@x"), "a&#60;b&#62;&#38;&#34;&#39;&#64;x");
    }

    #[test]
    fn a_failure_shows_its_message_in_code() {
        let md = failure_markdown(4, "lock.json: bad\n```\n<b>x</b>\u{202e}");
        assert_eq!(
            md,
            "### mcppin verify: could not compare (exit 4)\n\n\
             ````text\nlock.json: bad\n```\n<b>x</b><U+202E>\n````\n\n"
        );
    }

    #[test]
    fn a_report_without_findings_is_its_verdict() {
        let r = report(TWO, TWO);
        let md = to_markdown(&r, &MarkdownContext::new(&ServerChanges::default()));
        assert_eq!(
            md,
            "### mcppin verify: PASS\n\n**PASS: 3 approved items matched, nothing to report**\n\n"
        );
    }
}

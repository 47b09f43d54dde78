//! `mcppin lock`: approve a captured surface into a lockfile.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use mcppin_core::artifact::Artifact;
use mcppin_core::lockfile::{CaptureView, Lockfile, Selection};
use mcppin_core::manifest::{Manifest, ServerSurface};
use mcppin_core::policy::{FailOn, Options, Report, verify};
use mcppin_core::report::ServerChanges;
use mcppin_core::surface::{AuthContext, ItemKind};
use mcppin_core::{Category, Error, escape, escape_non_ascii, report};

use crate::cmd::sign::sig_path;
use crate::exit::{Exit, Fail};
use crate::{input, output};

/// Approve a captured surface: write the lockfile.
///
/// With an existing lockfile at -o, shows the diff it approves against it and moves
/// approval_serial by one only when the approved surface moved; an unchanged surface writes
/// identical bytes. Reports hidden characters and name collisions but still writes (you cannot
/// fix what you have not pinned). With --approve, says how many changes it approved and how
/// many stay unapproved. Never deletes LOCK.sig; says when it no longer matches what was
/// written. Exits 0 when written, 2 for a wrong command line (an --approve naming nothing
/// in the manifest), 4 when the manifest or the existing lockfile cannot be read.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The lockfile to write; an existing one is the starting point of the approval.
    #[arg(short = 'o', long = "output", value_name = "LOCK")]
    output: PathBuf,
    /// Approve only this server, or one item as SERVER/TOOL (repeatable); everything else
    /// keeps its existing approval. Approving a tool a complete capture no longer has approves
    /// its removal. Written as reports print it: `/` inside an id or name as ~1, `~` as ~0.
    #[arg(long, value_name = "SERVER[/TOOL]", value_parser = parse_selection)]
    approve: Vec<Selection>,
    /// How the diff it approves is shown: text, or markdown (for a pull request comment or a
    /// GitHub job summary, as `mcppin verify --format markdown` shows a report).
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    diff_format: DiffFormat,
    /// The captured surface (manifest).
    manifest: PathBuf,
}

/// How `lock` shows what it approves on standard output.
#[derive(Clone, Copy, Debug, Eq, PartialEq, clap::ValueEnum)]
enum DiffFormat {
    /// For a person: every server string escaped to printable ASCII.
    Text,
    /// Markdown: one collapsible section per server, server text escaped as in the text
    /// report and kept in code; at most 60,000 characters.
    Markdown,
}

fn parse_selection(text: &str) -> Result<Selection, String> {
    text.parse().map_err(|e: Error| e.to_string())
}

pub(crate) fn run(args: &Args) -> anyhow::Result<Exit> {
    let (_, manifest_value) = input::json(&args.manifest)?;
    let manifest =
        Manifest::try_from(manifest_value).map_err(|e| input::strict_error(&args.manifest, &e))?;
    let existing = read_existing(&args.output)?;
    let previous = existing.as_ref().map(|(_, lock)| lock);
    let next =
        Lockfile::approve(previous, &manifest, &args.approve).map_err(|e| match e.category() {
            Category::Usage => Fail::of_category(e.category(), format!("--approve: {e}")).into(),
            _ => anyhow::Error::new(e),
        })?;
    let bytes = next.to_bytes();

    // The entries of the capture's authorization contexts, each diffed against the previous
    // approval of the same context; a server approved under other contexts only gets an entry
    // of its own, shown as new.
    let view = next.for_capture(&manifest);
    let surface = approved_surface(&view);
    let mut before = previous.cloned().unwrap_or_default();
    let mut beside = Vec::new();
    for differs in previous
        .map(|p| p.for_capture(&manifest).differs)
        .unwrap_or_default()
    {
        before.servers.remove(&differs.server);
        before.contexts.remove(&differs.server);
        let names: Vec<&str> = differs
            .approved
            .iter()
            .map(|c| AuthContext::name(c.as_ref()))
            .collect();
        beside.push(format!(
            "server {} is approved under authorization context {} beside {}: each context is \
             its own approval",
            escape(&differs.server),
            AuthContext::name(differs.served.as_ref()),
            names.join(", ")
        ));
    }
    let options = Options::new(BTreeSet::new(), FailOn::None);
    let mut shown = verify(&before, &surface, &options);
    let servers = ServerChanges::between(&before, &surface, &options);
    let approving = shown.clone();
    if previous.is_none() {
        // A first lock approves everything: list only what deserves a look.
        shown.findings.retain(|f| !f.policy().is_departure());
    }
    // What was approved and written, below the findings.
    let mut closing = beside;
    if !args.approve.is_empty() {
        closing.push(unapproved_text(&approving, &next, &manifest));
    }
    for (id, pinned, reason) in kept_artifacts(&next, &manifest) {
        closing.push(format!(
            "note: server {:?}: the capture did not pin what it runs ({}); the lockfile keeps \
             the approved artifact ({})",
            escape(id),
            escape(reason),
            escape(&pinned.to_string())
        ));
    }
    if !manifest.complete {
        closing.push(
            "note: the capture is incomplete (\"complete\": false): approved items it did not \
             show stay approved; a complete capture can approve their removal"
                .to_owned(),
        );
    }
    let name = input::name(&args.output);
    let unchanged = existing.as_ref().is_some_and(|(old, _)| *old == bytes);
    if unchanged {
        closing.push(format!(
            "{name} unchanged (approval_serial {})",
            next.approval_serial
        ));
    } else {
        output::write_atomic(&args.output, &bytes)?;
        // Every entry counts, under whichever authorization context it is approved.
        let items: usize = next
            .entries()
            .map(|(_, _, s)| {
                ItemKind::ALL
                    .iter()
                    .map(|k| s.items(*k).len())
                    .sum::<usize>()
            })
            .sum();
        let servers: BTreeSet<&str> = next.entries().map(|(id, _, _)| id).collect();
        closing.push(format!(
            "wrote {name}: {} server(s), {items} item(s), approval_serial {}",
            servers.len(),
            next.approval_serial
        ));
    }

    let mut stdout = std::io::stdout().lock();
    match args.diff_format {
        DiffFormat::Text => {
            if previous.is_some() && !shown.findings.is_empty() {
                writeln!(stdout, "approving, against the existing lockfile:\n")?;
            }
            stdout.write_all(report::findings_text_with(&shown, &servers).as_bytes())?;
            for line in &closing {
                writeln!(stdout, "{line}")?;
            }
        }
        DiffFormat::Markdown => {
            let found = shown.findings.len();
            let title = match (previous.is_some(), found) {
                (true, 0) => "nothing moved against the existing lockfile".to_owned(),
                (true, n) => format!(
                    "approving, against the existing lockfile: {}",
                    finding_count(n)
                ),
                (false, 0) => "first approval".to_owned(),
                (false, n) => format!("first approval, {} worth a look", finding_count(n)),
            };
            let mut context = report::MarkdownContext::new(&servers);
            context.closing = closing;
            stdout.write_all(report::findings_markdown(&shown, &title, &context).as_bytes())?;
        }
    }
    stdout.flush()?;
    check_signature(&args.output, &bytes);
    Ok(Exit::Holds)
}

/// `1 finding`, `2 findings`.
fn finding_count(n: usize) -> String {
    if n == 1 {
        "1 finding".to_owned()
    } else {
        format!("{n} findings")
    }
}

/// How many changes `--approve` took (the departures of the new approval from the old one)
/// and how many of the manifest's stay unapproved, with what `mcppin verify` will make of
/// them: `approved 1 change; 3 changes stay unapproved: mcppin verify will still fail on them`.
fn unapproved_text(shown: &Report, next: &Lockfile, manifest: &Manifest) -> String {
    let departures = |r: &Report| {
        r.findings
            .iter()
            .filter(|f| f.policy().is_departure())
            .count()
    };
    let approved = departures(shown);
    let left = verify(next, manifest, &Options::default());
    let stay = departures(&left);
    let mut text = format!(
        "approved {approved} change{}; ",
        if approved == 1 { "" } else { "s" }
    );
    if stay == 0 {
        text.push_str("none stays unapproved");
        return text;
    }
    let (one, them) = if stay == 1 {
        ("change stays", "it")
    } else {
        ("changes stay", "them")
    };
    let what = if left.findings.iter().any(|f| f.gated) {
        "mcppin verify will still fail on"
    } else {
        "mcppin verify will still report"
    };
    text.push_str(&format!("{stay} {one} unapproved: {what} {them}"));
    text
}

/// The servers whose capture did not pin what runs (`unknown`, or no artifact recorded) while
/// the lockfile written keeps a pinned artifact for them: (id, the pin kept, why the capture
/// could not pin one).
fn kept_artifacts<'a>(
    next: &'a Lockfile,
    manifest: &'a Manifest,
) -> Vec<(&'a str, &'a Artifact, &'a str)> {
    manifest
        .servers
        .iter()
        .filter_map(|(id, surface)| {
            let reason = match &surface.artifact {
                Some(Artifact::Unknown { reason }) => reason.as_str(),
                None => "it recorded no artifact",
                Some(_) => return None,
            };
            let pinned = next.servers.get(id)?.artifact.as_ref()?;
            (!pinned.is_unknown()).then_some((id.as_str(), pinned, reason))
        })
        .collect()
}

/// The lockfile at `path` with its bytes, when there is one: a regular file. A device or a
/// pipe named as the output (`/dev/null`, a FIFO) holds no approval to move on from.
fn read_existing(path: &Path) -> anyhow::Result<Option<(Vec<u8>, Lockfile)>> {
    if !path.symlink_metadata().is_ok_and(|meta| meta.is_file()) {
        return Ok(None);
    }
    let (bytes, value) = input::json(path)?;
    let lock = Lockfile::try_from(value).map_err(|e| {
        anyhow::anyhow!(
            "{}: {e} [{}]; not overwriting a lockfile that cannot be read",
            input::name(path),
            e.rule()
        )
    })?;
    Ok(Some((bytes, lock)))
}

/// The approved surface of the entries of a capture's contexts, as a complete capture under
/// those contexts, to diff against the old approval.
fn approved_surface(view: &CaptureView) -> Manifest {
    let mut manifest = Manifest::new(true);
    for (id, server) in &view.lock.servers {
        let mut surface = ServerSurface::new();
        surface.auth_context = view.taken.get(id).cloned().flatten();
        surface.reported_name.clone_from(&server.reported_name);
        surface
            .protocol_version
            .clone_from(&server.protocol_version);
        // The launch, artifact, capabilities and widened surface too: the diff shown names a
        // launch, an artifact or instructions being approved, not only items.
        surface.launch.clone_from(&server.launch);
        surface.artifact.clone_from(&server.artifact);
        surface
            .client_capabilities
            .clone_from(&server.client_capabilities);
        surface.widened = server.widened;
        surface.instructions.clone_from(&server.instructions);
        for kind in ItemKind::ALL {
            for item in server.items(kind).values() {
                if let Some(approved) = item.approved() {
                    // Keys are unique in a lockfile and its items fit one, so inserting
                    // cannot fail.
                    let _ = surface
                        .items_mut(kind)
                        .insert(id, kind, approved.clone(), "");
                }
            }
        }
        manifest.servers.insert(id.clone(), surface);
    }
    manifest
}

/// Says on stderr when the signature beside the lockfile no longer matches it. Never
/// deletes it: a stale signature fails verify loudly, a missing one might go unnoticed.
fn check_signature(lock: &Path, written: &[u8]) {
    let sig = sig_path(lock);
    let Ok(envelope) = mcppin_cli::read_at_most(&sig, mcppin_cli::MAX_SMALL_FILE) else {
        return;
    };
    // Library messages escape what they quote; the last pass keeps the paths safe too.
    let say = |message: String| {
        let _ = writeln!(
            std::io::stderr().lock(),
            "mcppin: {}",
            escape_non_ascii(&message)
        );
    };
    let digest = match mcppin_sign::lock_digest(written) {
        Ok(d) => d,
        Err(e) => {
            say(format!("{}: {e}", input::name(lock)));
            return;
        }
    };
    match mcppin_sign::Envelope::parse(&envelope) {
        Ok(env) if env.lock_digest() == digest => {}
        Ok(env) => say(format!(
            "{} no longer matches {}: it signs {}, the lockfile is now {}; \
             sign it again with mcppin sign --lock {} --key KEY",
            input::name(&sig),
            input::name(lock),
            env.lock_digest(),
            digest,
            input::name(lock)
        )),
        Err(e) => say(format!(
            "{} cannot be read ({e}); it does not sign {} ({digest})",
            input::name(&sig),
            input::name(lock)
        )),
    }
}

//! `mcppin verify`: compare a captured surface with its approval and exit by the contract.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use mcppin_core::manifest::Manifest;
use mcppin_core::policy::{FailOn, Options, Policy, Status};
use mcppin_core::remedy::Remedy;
use mcppin_core::{report, to_pretty};

use crate::exit::{Exit, Fail};
use crate::input;

/// Verify a captured surface (a manifest) against the approved one (a lockfile).
///
/// Compares every approved server and item with what was captured, evaluates every policy and
/// prints the report. Exits 0 when every gated policy holds, 1 when a departure from the
/// approved surface was proven, 3 when something could not be compared (an undecidable
/// number literal, an approved tool an incomplete capture did not show, an approved server
/// outside a scoped capture), 4 when the lockfile or the manifest cannot be read. 1 wins over
/// 3; the report lists both.
///
/// Without --lock, the lockfile is ./mcp.lock.json. A manifest given as the lockfile, or a
/// lockfile as the manifest, is named as such (exit 4).
///
/// With --pubkey, the lockfile must carry a valid signature (LOCK.sig) by one of the keys,
/// else exit 4 naming why (missing, malformed, foreign key, invalid, for another lockfile,
/// stale); without it, a signature beside the lockfile is reported as not checked.
///
/// Policies gated by default: tool-changed, tool-added, tool-removed, server-renamed.
/// Reported only: protocol-changed, name-collision, hidden-characters, mixed-script-name,
/// invalid-tool-name.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The lockfile holding the approved surface [default: ./mcp.lock.json].
    #[arg(long, value_name = "LOCK")]
    pub(crate) lock: Option<PathBuf>,
    /// Compare only this server (repeatable); matches a capture scoped to it.
    #[arg(long = "server", value_name = "ID")]
    pub(crate) servers: Vec<String>,
    /// Which policies fail the run: default, all, none, or a comma list of policy names.
    #[arg(long, value_name = "LIST", default_value = "default", value_parser = parse_fail_on)]
    pub(crate) fail_on: FailOn,
    /// The report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
    /// The captured surface (manifest, from mcppin-export or a gateway).
    pub(crate) manifest: PathBuf,
    #[command(flatten)]
    pub(crate) signature: crate::signature::Flags,
    /// SARIF: the repository root the lockfile's path is given relative to. Default: the
    /// nearest directory above the lockfile holding .git, else the current directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) sarif_root: Option<PathBuf>,
    /// SARIF: the absolute URL of the policies page each rule links to (URL#policy), also
    /// the tool's informationUri. Without it the rules carry no helpUri: each still carries
    /// its whole help text.
    #[arg(long, value_name = "URL", value_parser = crate::sarif::parse_help_base)]
    pub(crate) sarif_help_base: Option<String>,
}

/// How the report is written to standard output.
#[derive(Clone, Copy, Debug, Eq, PartialEq, clap::ValueEnum)]
pub(crate) enum Format {
    /// For a person: every server string escaped to printable ASCII.
    Text,
    /// The JSON report, schema_version 1 (docs/formats.md).
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
    /// Markdown for a pull request comment or a GitHub job summary: one collapsible section
    /// per server, server text escaped as in the text report and kept in code; at most
    /// 60,000 characters.
    Markdown,
}

fn parse_fail_on(text: &str) -> Result<FailOn, String> {
    text.parse().map_err(|e| {
        let names: Vec<&str> = Policy::ALL.iter().map(|p| p.name()).collect();
        format!(
            "{e}; expected default, all, none or a comma list of: {}",
            names.join(", ")
        )
    })
}

/// The lockfile `verify` reads when `--lock` names none, in the current directory.
const DEFAULT_LOCK: &str = "mcp.lock.json";

pub(crate) fn run(args: &Args) -> anyhow::Result<Exit> {
    let result = compare(args);
    match (args.format, &result) {
        (Format::Sarif, Err(err)) => {
            crate::sarif::write_failure(args.sarif_help_base.as_deref(), err);
        }
        (Format::Markdown, Err(err)) if !crate::exit::is_broken_pipe(err) => {
            let code = crate::exit::code_of(err) as u8;
            let page = report::failure_markdown(code, &format!("mcppin: {err:#}"));
            let mut stdout = std::io::stdout().lock();
            let _ = stdout
                .write_all(page.as_bytes())
                .and_then(|()| stdout.flush());
        }
        _ => {}
    }
    result
}

fn compare(args: &Args) -> anyhow::Result<Exit> {
    let lock_path = lock_path(args.lock.as_deref())?;
    let lock_path = lock_path.as_path();
    // The two files are independent until compared: read them side by side (docs/performance.md
    // holds verify to a multiple of sha256sum over the same bytes).
    let (lock, manifest) = std::thread::scope(|scope| {
        let manifest = scope.spawn(|| read_manifest(&args.manifest));
        let lock = crate::signature::approve(&args.signature, lock_path);
        let manifest = manifest
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("reading the manifest failed")));
        (lock, manifest)
    });
    // Before anything is compared: a lockfile whose signature does not hold is unreadable as
    // an approval (exit 4).
    let read = lock?;
    if let Some(note) = read.note() {
        let _ = writeln!(
            std::io::stderr().lock(),
            "mcppin: {}",
            mcppin_core::escape_non_ascii(&note)
        );
    }
    // The JSON and SARIF reports state the signature check (the text report has the note).
    let signature = (args.format != Format::Text)
        .then(|| crate::signature::status(&args.signature, &read.approved))
        .transpose()?;
    let lock_bytes = read.lockfile;
    let lock = read.approved.lockfile;
    let manifest = manifest?;

    let servers: BTreeSet<String> = args.servers.iter().cloned().collect();
    if let Some(unknown) = servers
        .iter()
        .find(|id| !lock.servers.contains_key(*id) && !manifest.servers.contains_key(*id))
    {
        return Err(Fail::new(
            Exit::Usage,
            format!(
                "--server {}: neither the lockfile nor the manifest has this server",
                mcppin_core::escape(unknown)
            ),
        )
        .into());
    }
    let options = Options::new(servers, args.fail_on.clone());
    let mut verdict = mcppin_core::policy::verify(&lock, &manifest, &options);
    verdict.signature = signature;

    let rendered = match args.format {
        Format::Text => {
            let servers = report::ServerChanges::between(&lock, &manifest, &options);
            let mut text = report::to_text_with(&verdict, &servers);
            if verdict.status() == Status::Fail {
                let approval = Remedy::of(&verdict, &servers, &options);
                text.push_str(&approval_text(&approval, lock_path, &args.manifest));
            }
            text.into_bytes()
        }
        Format::Markdown => {
            let servers = report::ServerChanges::between(&lock, &manifest, &options);
            let mut context = report::MarkdownContext::new(&servers);
            if verdict.status() == Status::Fail {
                let approval = Remedy::of(&verdict, &servers, &options);
                context.command = approval_command(&approval, lock_path, &args.manifest);
                context.closing = unapprovable_lines(&approval);
            }
            report::to_markdown(&verdict, &context).into_bytes()
        }
        Format::Json => to_pretty(&report::to_json(&verdict)),
        Format::Sarif => {
            let uri = crate::sarif::lockfile_uri(lock_path, args.sarif_root.as_deref())?;
            let lines = report::LockLines::index(&lock_bytes);
            let context = report::SarifContext {
                tool_version: env!("CARGO_PKG_VERSION"),
                lockfile_uri: &uri,
                lines: &lines,
                help_base: args.sarif_help_base.as_deref(),
            };
            to_pretty(&report::to_sarif(&verdict, &context))
        }
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&rendered)?;
    stdout.flush()?;
    // The process ends right after this: freeing a surface of thousands of items one
    // allocation at a time would take a tenth of the run (docs/performance.md benchmark), and the
    // operating system takes the memory back at once.
    std::mem::forget(lock);
    std::mem::forget(manifest);
    Ok(match verdict.exit_code() {
        0 => Exit::Holds,
        1 => Exit::Departure,
        _ => Exit::Incomparable,
    })
}

/// The lines a failing text report ends with: the `mcppin lock` command that approves what
/// it showed (with the lockfile and the manifest this run compared, so it approves exactly
/// the surface verified here, not a new capture), and the gated policies no approval clears.
fn approval_text(approval: &Remedy, lock: &Path, manifest: &Path) -> String {
    let mut out = String::new();
    if let Some(command) = approval_command(approval, lock, manifest) {
        out.push_str("to approve these changes: ");
        out.push_str(&command);
        out.push('\n');
    }
    for line in unapprovable_lines(approval) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The `mcppin lock` command that approves what a failing run showed, `None` when no approval
/// clears anything it showed.
fn approval_command(approval: &Remedy, lock: &Path, manifest: &Path) -> Option<String> {
    if approval.is_empty() {
        return None;
    }
    let mut words = vec!["mcppin".to_owned(), "lock".to_owned()];
    for selection in &approval.selections {
        let label = selection.to_string();
        if label.starts_with('-') {
            words.push(mcppin_core::shell_word(&format!("--approve={label}")));
        } else {
            words.push("--approve".to_owned());
            words.push(mcppin_core::shell_word(&label));
        }
    }
    words.push("-o".to_owned());
    words.push(path_word(lock));
    words.push(path_word(manifest));
    Some(words.join(" "))
}

/// What to do about the gated policies no approval clears, a line each.
fn unapprovable_lines(approval: &Remedy) -> Vec<String> {
    let mut out = Vec::new();
    // A floating version is fixed in the client configuration; the other policies no
    // approval clears are about the served text, fixed by the server.
    let (launch, text): (Vec<Policy>, Vec<Policy>) = approval
        .unapprovable
        .iter()
        .partition(|p| **p == Policy::FloatingVersion);
    if !launch.is_empty() {
        out.push(
            "no approval clears floating-version: pin each package's version in the client \
             configuration (pkg@1.2.3, pkg==1.2.3, image@sha256:...), capture and lock again, or \
             leave it out of --fail-on"
                .to_owned(),
        );
    }
    if !text.is_empty() {
        let names: Vec<&str> = text.iter().map(|p| p.name()).collect();
        out.push(format!(
            "no approval clears {}: change what the server serves, or leave {} out of --fail-on",
            names.join(", "),
            if names.len() == 1 { "it" } else { "them" }
        ));
    }
    out
}

/// A path as one shell word; one starting with `-` gets `./` so that it is not read as a flag.
/// A path that is not printable ASCII is written escaped (`<U+XXXX>`): safe to show, though
/// not to paste.
fn path_word(path: &Path) -> String {
    let text = path.to_string_lossy();
    let text = mcppin_core::escape_non_ascii(&text);
    if text.starts_with('-') {
        mcppin_core::shell_word(&format!("./{text}"))
    } else {
        mcppin_core::shell_word(&text)
    }
}

/// The lockfile to read: the one `--lock` names, else `./mcp.lock.json`, which must exist.
fn lock_path(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(path) = given {
        return Ok(path.to_owned());
    }
    let path = PathBuf::from(DEFAULT_LOCK);
    if path.symlink_metadata().is_err() {
        return Err(Fail::new(
            Exit::Unreadable,
            format!(
                "no lockfile given and none in the current directory: looked for \
                 ./{DEFAULT_LOCK}; name another with --lock LOCK"
            ),
        )
        .into());
    }
    Ok(path)
}

fn read_manifest(path: &Path) -> anyhow::Result<Manifest> {
    let (_, value) = input::json(path)?;
    Manifest::try_from(value).map_err(|e| input::strict_error(path, &e))
}

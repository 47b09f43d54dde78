//! `mcppin-export --audit LOCK`: every server entry of the client configurations (one with
//! `--config`, every one found with `--discover`) read, never run, and classified against the
//! lockfile (docs/export.md, "Auditing the configurations"). The standing of an entry is
//! decided by `mcppin_client::audit`; this file reads the files and renders the report.

use std::io::Write;
use std::path::{Path, PathBuf};

use mcppin_client::ClientConfig;
use mcppin_client::audit::{Audited, Expected, Standing, classify};
use mcppin_client::discover::{Places, Platform, inspect_location, locations};
use mcppin_core::lockfile::Lockfile;
use mcppin_core::value::{Object, Value};
use mcppin_core::{escape, to_pretty};

use crate::exit::{Exit, Fail};
use crate::file::{Unread, read_found};

/// How the audit is written.
#[derive(Clone, Copy, Debug, Eq, PartialEq, clap::ValueEnum)]
pub(crate) enum Format {
    /// A line per entry, every string of a file escaped.
    Text,
    /// The JSON audit report (docs/formats.md).
    Json,
    /// SARIF 2.1.0, each result at the configuration file and line of its entry.
    Sarif,
}

/// One entry of one configuration and its standing.
struct Row {
    config: PathBuf,
    line: usize,
    server: String,
    audited: Audited,
}

/// What the audit reads: the lockfile, where the configurations are, what it expects.
pub(crate) struct Audit<'a> {
    pub(crate) lock: &'a Path,
    pub(crate) config: Option<&'a Path>,
    pub(crate) project: Option<&'a str>,
    pub(crate) places: Option<Places>,
    pub(crate) mode: &'a str,
    pub(crate) format: Format,
}

pub(crate) fn run(audit: &Audit<'_>) -> anyhow::Result<Exit> {
    let unreadable = |message: String| Fail::new(Exit::Unreadable, message);
    let name = escape(&audit.lock.display().to_string()).into_owned();
    let bytes = mcppin_cli::read_at_most(audit.lock, mcppin_cli::MAX_DOCUMENT)
        .map_err(|e| unreadable(format!("cannot read the lockfile {name}: {e}")))?;
    let lock = Lockfile::parse(&bytes).map_err(|e| unreadable(format!("{name}: {e}")))?;
    let canonical = std::fs::canonicalize(audit.lock)
        .map_err(|e| unreadable(format!("cannot resolve the lockfile {name}: {e}")))?;
    let signed = mcppin_cli::sig_path(audit.lock).exists();

    // The configurations: the one named, or every one found in its usual place.
    let mut configs: Vec<(PathBuf, ClientConfig)> = Vec::new();
    if let Some(path) = audit.config {
        let text = read_text(path)?;
        let parsed = match audit.project {
            Some(project) => ClientConfig::parse_project(&text, project),
            None => ClientConfig::parse(&text),
        }
        .map_err(|e| unreadable(format!("{}: {e}", path.display())))?;
        configs.push((path.to_owned(), parsed));
    }
    if let Some(places) = &audit.places {
        for location in locations(places, Platform::current()) {
            let text = match read_found(&location.path) {
                Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
                    unreadable(format!("{}: not UTF-8 text", location.path.display()))
                })?,
                Err(Unread::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(unreadable(format!(
                        "cannot read {}: {e}",
                        location.path.display()
                    ))
                    .into());
                }
            };
            // A file that holds other settings and no server table configures none.
            let listed = inspect_location(&text, &location)
                .map_err(|e| unreadable(format!("{}: {e}", location.path.display())))?;
            if listed.is_empty() {
                continue;
            }
            let parsed = match &location.project {
                Some(project) => ClientConfig::parse_project(&text, &project.to_string_lossy()),
                None => ClientConfig::parse(&text),
            }
            .map_err(|e| unreadable(format!("{}: {e}", location.path.display())))?;
            configs.push((location.path.clone(), parsed));
        }
    }

    let mut rows = Vec::new();
    for (path, config) in &configs {
        // A relative lockfile path is resolved against the configuration's directory here;
        // the guard resolves it against whatever directory the client starts it in.
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let same_lock =
            |written: &str| std::fs::canonicalize(dir.join(written)).is_ok_and(|p| p == canonical);
        let mut expected = Expected::new(&lock, same_lock);
        expected.signed = signed;
        expected.mode = audit.mode;
        for (id, entry) in &config.servers {
            rows.push(Row {
                config: path.clone(),
                line: config.lines.get(id).copied().unwrap_or(1),
                server: id.clone(),
                audited: classify(id, entry, &expected),
            });
        }
    }

    let rendered = match audit.format {
        Format::Text => text(&rows, configs.len()).into_bytes(),
        Format::Json => to_pretty(&json(&rows, &name, signed, audit.mode)),
        Format::Sarif => to_pretty(&sarif(&rows)),
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&rendered)?;
    stdout.flush()?;
    Ok(if rows.iter().any(|r| r.audited.standing.bypasses()) {
        Exit::Bypassed
    } else {
        Exit::Written
    })
}

fn read_text(path: &Path) -> anyhow::Result<String> {
    let unreadable = |message: String| Fail::new(Exit::Unreadable, message);
    let bytes = crate::file::read_named(path)
        .map_err(|e| unreadable(format!("cannot read {}: {e}", path.display())))?;
    Ok(String::from_utf8(bytes)
        .map_err(|_| unreadable(format!("{}: not UTF-8 text", path.display())))?)
}

fn place(row: &Row) -> String {
    format!("{}:{}", escape(&row.config.display().to_string()), row.line)
}

/// A line per entry (`STANDING  FILE:LINE  "ID": why`), then the count of each standing.
fn text(rows: &[Row], configs: usize) -> String {
    let mut out = String::new();
    for row in rows {
        out.push_str(&format!(
            "{:<11} {}  {}",
            row.audited.standing.name(),
            place(row),
            mcppin_core::Excerpt::quoted(&row.server)
        ));
        if !row.audited.reasons.is_empty() {
            out.push_str(": ");
            out.push_str(&row.audited.reasons.join("; "));
        }
        out.push('\n');
    }
    let counts: Vec<String> = Standing::ALL
        .iter()
        .map(|s| {
            let n = rows.iter().filter(|r| r.audited.standing == *s).count();
            format!("{n} {}", s.name())
        })
        .collect();
    let bypass = rows
        .iter()
        .filter(|r| r.audited.standing.bypasses())
        .count();
    out.push_str(&format!(
        "{} in {}: {}\n{}\n",
        plural(rows.len(), "entry"),
        plural(configs, "configuration"),
        counts.join(", "),
        if bypass == 0 {
            "PASS: every server is started behind mcppin-guard with this lockfile".to_owned()
        } else {
            format!("FAIL: {} the guard as expected", {
                let n = plural(bypass, "entry");
                if bypass == 1 {
                    format!("{n} bypasses")
                } else {
                    format!("{n} bypass")
                }
            })
        }
    ));
    out
}

fn plural(n: usize, noun: &str) -> String {
    match (n, noun.strip_suffix('y')) {
        (1, _) => format!("1 {noun}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        (_, None) => format!("{n} {noun}s"),
    }
}

fn string_list(items: &[String]) -> Value {
    Value::from(
        items
            .iter()
            .map(|s| Value::from(s.as_str()))
            .collect::<Vec<_>>(),
    )
}

/// The JSON audit report: `schema_version` 1, the lockfile, and an entry per server.
fn json(rows: &[Row], lock: &str, signed: bool, mode: &str) -> Value {
    let mut o = Object::new();
    o.insert("schema_version", 1u64);
    o.insert("lockfile", lock);
    o.insert("signed", signed);
    o.insert("expected_mode", mode);
    let entries: Vec<Value> = rows
        .iter()
        .map(|row| {
            let mut e = Object::new();
            e.insert("config", row.config.to_string_lossy().as_ref());
            e.insert("line", row.line as u64);
            e.insert("server", row.server.as_str());
            e.insert("standing", row.audited.standing.name());
            e.insert("bypasses", row.audited.standing.bypasses());
            e.insert("reasons", string_list(&row.audited.reasons));
            Value::from(e)
        })
        .collect();
    o.insert("entries", Value::from(entries));
    let bypass = rows.iter().any(|r| r.audited.standing.bypasses());
    o.insert("status", if bypass { "FAIL" } else { "PASS" });
    Value::from(o)
}

/// SARIF 2.1.0: a rule per standing that bypasses, a result per such entry at its
/// configuration file and line.
fn sarif(rows: &[Row]) -> Value {
    let rules: Vec<Value> = Standing::ALL
        .iter()
        .filter(|s| s.bypasses())
        .map(|s| {
            let mut rule = Object::new();
            rule.insert("id", s.name());
            let mut text = Object::new();
            text.insert("text", rule_text(*s));
            rule.insert("shortDescription", Value::from(text));
            Value::from(rule)
        })
        .collect();
    let results: Vec<Value> = rows
        .iter()
        .filter(|r| r.audited.standing.bypasses())
        .map(|row| {
            let mut message = Object::new();
            message.insert(
                "text",
                format!(
                    "server {}: {}",
                    mcppin_core::Excerpt::quoted(&row.server),
                    row.audited.reasons.join("; ")
                )
                .as_str(),
            );
            let mut artifact = Object::new();
            artifact.insert("uri", uri(&row.config).as_str());
            let mut region = Object::new();
            region.insert("startLine", row.line as u64);
            let mut physical = Object::new();
            physical.insert("artifactLocation", Value::from(artifact));
            physical.insert("region", Value::from(region));
            let mut location = Object::new();
            location.insert("physicalLocation", Value::from(physical));
            let mut result = Object::new();
            result.insert("ruleId", row.audited.standing.name());
            result.insert("level", "error");
            result.insert("message", Value::from(message));
            result.insert("locations", Value::from(vec![Value::from(location)]));
            Value::from(result)
        })
        .collect();
    let mut driver = Object::new();
    driver.insert("name", "mcppin-export --audit");
    driver.insert("version", env!("CARGO_PKG_VERSION"));
    driver.insert("rules", Value::from(rules));
    let mut tool = Object::new();
    tool.insert("driver", Value::from(driver));
    let mut run = Object::new();
    run.insert("tool", Value::from(tool));
    run.insert("results", Value::from(results));
    let mut log = Object::new();
    log.insert("$schema", "https://json.schemastore.org/sarif-2.1.0.json");
    log.insert("version", "2.1.0");
    log.insert("runs", Value::from(vec![Value::from(run)]));
    Value::from(log)
}

fn rule_text(standing: Standing) -> &'static str {
    match standing {
        Standing::Weakened => {
            "started behind mcppin-guard with this lockfile, but weaker than expected"
        }
        Standing::OtherLock => "started behind mcppin-guard enforcing another lockfile",
        Standing::Unguarded => "in the lockfile, but started without mcppin-guard",
        _ => "not in the lockfile",
    }
}

/// The configuration's path as a SARIF URI: percent-encoded, `file://` for an absolute path.
fn uri(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if path.is_absolute() {
        format!("file://{out}")
    } else {
        out
    }
}

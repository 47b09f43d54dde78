//! Reading an admission log back: every run's chain followed line by line, each break, gap,
//! reordering and cut reported where it is, and the runs' ends kept for the signature check.

use std::collections::HashMap;
use std::fmt::{self, Write as _};

use crate::canon::canonicalize_exact;
use crate::digest::Digest;
use crate::error::{Excerpt, JsonError};
use crate::parse::{Strictness, parse_with};
use crate::value::{Object, Value};

use super::{START, STOP};

/// How many findings a [`Report`] lists; the rest are only counted ([`Report::omitted`]), so a
/// hostile file costs a bounded report.
pub const MAX_FINDINGS: usize = 100;

/// The members whose value the check reads: each may appear once in a line. Two of one name
/// would let two readers follow two different chains.
const READ_MEMBERS: [&str; 8] = [
    "schema_version",
    "event",
    "run",
    "seq",
    "prev",
    "log_key",
    "signature",
    "exit_code",
];

/// A line of another version than 2 naming a run of the log: one guard writes a run, in one
/// version.
const OTHER_VERSION: Malformed = Malformed::Invalid {
    member: "schema_version",
    expected: "2, the version of the run it names",
};

/// Checks a whole log held in memory: [`Verifier`] fed every line.
///
/// # Examples
///
/// ```
/// let report = mcppin_core::log::verify(b"{\"schema_version\": 1, \"event\": \"tool_admission\"}\n");
/// assert_eq!(report.exit_code(), 3, "a version 1 line carries no chain: nothing proves it");
/// ```
#[must_use]
pub fn verify(bytes: &[u8]) -> Report {
    let mut verifier = Verifier::new();
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        verifier.feed(line);
    }
    verifier.finish()
}

/// Follows the runs of a log line by line, holding only each run's last digest, so a file of
/// any length is checked in one pass.
#[derive(Debug, Default)]
pub struct Verifier {
    report: Report,
    index: HashMap<String, usize>,
    states: Vec<State>,
    /// The first version 1 line and how many there are.
    legacy: Option<(u64, u64)>,
    /// The runs named by lines of another version than 2, each with the first such line: a
    /// run of the log starting later is then broken there.
    other_versions: HashMap<String, u64>,
    cut: bool,
}

/// Where a run's chain stands: the seq the next line must carry and the digest its `prev`
/// must name.
#[derive(Debug)]
struct State {
    expected: u64,
    prev: Digest,
}

/// What a check of a log found: its runs and the findings, in the order of their lines.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Report {
    /// How many lines the log holds (a cut last line included).
    pub lines: u64,
    /// Every run, in the order of its first line.
    pub runs: Vec<Run>,
    /// The findings, by line, at most [`MAX_FINDINGS`].
    pub findings: Vec<Finding>,
    /// How many findings were found beyond those listed.
    pub omitted: u64,
    /// Whether the runs' ends were checked against trusted keys (by `mcppin-sign`).
    pub ends_checked: bool,
    breaks: u64,
    unproven: u64,
    first_break: Option<u64>,
}

/// One run of the guard (one chain) as the log shows it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Run {
    /// The run's id (`run`), as the file holds it: escape it before showing it.
    pub id: String,
    /// The line of its `guard_start`; `None` when the run's first line here is a later one.
    pub start_line: Option<u64>,
    /// The server id its start names.
    pub server: Option<String>,
    /// When its start says the guard started.
    pub started_at: Option<String>,
    /// The lockfile digest its start names.
    pub lock_digest: Option<Digest>,
    /// The key its start announced for the end's signature.
    pub log_key: Option<Digest>,
    /// How many of its lines the log holds.
    pub lines: u64,
    /// The line of its last line read.
    pub last_line: u64,
    /// Its `guard_stop`, when there is one.
    pub end: Option<End>,
    /// Whether a break was found in it.
    pub broken: bool,
    /// The key whose signature of the end was verified (set by `mcppin-sign`).
    pub sealed_by: Option<Digest>,
}

/// A run's `guard_stop`, as read.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct End {
    /// Its line.
    pub line: u64,
    /// The guard's exit code it records.
    pub exit_code: Option<u64>,
    /// The key it names (`log_key`).
    pub key: Option<Digest>,
    /// The signature's text (base64), when signed.
    pub signature: Option<String>,
    /// What the signature covers: the RFC 8785 form of the line's object without
    /// `signature`.
    pub signed: Vec<u8>,
}

/// One thing the check found, at a line.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub struct Finding {
    /// The line (from 1); 0 for the file as a whole.
    pub line: u64,
    /// The run it is about, when known.
    pub run: Option<String>,
    /// What was found.
    pub kind: Kind,
}

/// What a finding is. [`Kind::is_break`] tells a proven alteration from what could not be
/// proven.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Kind {
    /// The line is not a line of the log (a break: the guard writes none such).
    Malformed(Malformed),
    /// The last line has no newline: the file was cut inside a line (a break).
    Cut,
    /// The line's `prev` is not the digest of its run's line before it (a break: that line
    /// or this `prev` was changed).
    Broken {
        /// The digest of the run's line before it.
        expected: Digest,
        /// The digest this line names.
        found: Digest,
        /// The line of the run's line before it.
        previous_line: u64,
    },
    /// The line's `seq` skips ahead: lines of the run are missing before it (a break).
    Gap {
        /// The seq that should come next.
        expected: u64,
        /// The seq the line carries.
        found: u64,
    },
    /// The line's `seq` is one the run has already passed: moved or repeated (a break).
    OutOfOrder {
        /// The seq that should come next.
        expected: u64,
        /// The seq the line carries.
        found: u64,
    },
    /// The run's first line here is not its `guard_start`: its beginning is missing (a
    /// break: cut, or spliced from another file).
    NoStart {
        /// The seq of the first line found.
        seq: u64,
    },
    /// A second `guard_start` for a run (a break).
    RepeatedStart {
        /// The line of the first.
        first_line: u64,
    },
    /// A line of a run after its `guard_stop` (a break).
    AfterStop {
        /// The line of the `guard_stop`.
        stop_line: u64,
    },
    /// The end's key or signature is not what the run's start announced (a break): a
    /// `guard_stop` naming another key, unsigned though a key was announced, or signed
    /// though none was.
    EndMismatch {
        /// The key the start announced.
        announced: Option<Digest>,
        /// The key the end names.
        named: Option<Digest>,
        /// Whether the end carries a signature.
        signed: bool,
    },
    /// The end's signature does not verify under the trusted key it names (a break: forged,
    /// or the run was altered).
    BadSignature {
        /// The key.
        key: Digest,
    },
    /// Lines of `schema_version` 1, written before the chain: nothing proves them.
    Legacy {
        /// How many.
        lines: u64,
    },
    /// A `schema_version` this build does not know: not checked.
    Unsupported {
        /// The version as written.
        version: String,
    },
    /// The log holds no line: nothing to verify.
    Empty,
    /// With trusted keys: the run has no `guard_stop`, so nothing proves where it ended (the
    /// guard was killed, or the lines after its last were cut).
    NotStopped,
    /// With trusted keys: the run's `guard_stop` is not signed.
    Unsigned,
    /// With trusted keys: the end is signed by none of them.
    ForeignKey {
        /// The key the end names.
        found: Digest,
        /// The trusted keys.
        expected: Vec<Digest>,
    },
}

/// Why a line is not a line of the log.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub enum Malformed {
    /// It is not JSON (the reading error, its offset counted from the line's start).
    NotJson(JsonError),
    /// It is JSON but not an object.
    NotObject,
    /// A member the format requires is missing.
    Missing(&'static str),
    /// A member the check reads appears more than once.
    Repeated(&'static str),
    /// A member that has no place in the line (`prev` in a `guard_start`).
    Unexpected(&'static str),
    /// A member holds what the format does not allow there.
    Invalid {
        /// The member.
        member: &'static str,
        /// What it must hold.
        expected: &'static str,
    },
}

impl Finding {
    /// A finding at `line` (0 for the file as a whole), about `run` when known.
    #[must_use]
    pub fn new(line: u64, run: Option<String>, kind: Kind) -> Self {
        Self { line, run, kind }
    }
}

impl Kind {
    /// Whether the finding proves that the log is not what the guard wrote (exit 1), rather
    /// than something that could not be proven (exit 3).
    #[must_use]
    pub fn is_break(&self) -> bool {
        !matches!(
            self,
            Self::Legacy { .. }
                | Self::Unsupported { .. }
                | Self::Empty
                | Self::NotStopped
                | Self::Unsigned
                | Self::ForeignKey { .. }
        )
    }
}

impl Verifier {
    /// A verifier before the first line.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the next line: its bytes up to and including its newline, or the file's last
    /// bytes when they end without one (a cut line; nothing is read after it).
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.cut || bytes.is_empty() {
            return;
        }
        self.report.lines += 1;
        let line = self.report.lines;
        let Some(content) = bytes.strip_suffix(b"\n") else {
            self.cut = true;
            self.find(line, None, Kind::Cut);
            return;
        };
        if let Err(malformed) = self.read(line, content) {
            self.find(line, None, Kind::Malformed(malformed));
        }
    }

    /// The report, once every line was fed.
    #[must_use]
    pub fn finish(mut self) -> Report {
        if let Some((first, lines)) = self.legacy {
            self.find(first, None, Kind::Legacy { lines });
        }
        if self.report.lines == 0 {
            self.find(0, None, Kind::Empty);
        }
        self.report
    }

    fn read(&mut self, line: u64, content: &[u8]) -> Result<(), Malformed> {
        let value = parse_with(content, Strictness::Relaxed).map_err(Malformed::NotJson)?;
        let object = value.as_object().ok_or(Malformed::NotObject)?;
        for name in READ_MEMBERS {
            if object.keys().filter(|k| *k == name).count() > 1 {
                return Err(Malformed::Repeated(name));
            }
        }
        // Every guard writes its version in plain digits: `2.0`, `2e0` or `"2"`, which other
        // readers take for 2, is no guard's line, never a version this build does not know.
        let version = count(object, "schema_version")?;
        if version != 2 {
            if let Some(run) = object.get("run").and_then(Value::as_str) {
                // One guard writes a run, in one version: a line of another version naming a
                // run of this log (before its start or after) is not the guard's.
                if self.index.contains_key(run) {
                    return Err(OTHER_VERSION);
                }
                self.other_versions.entry(run.to_owned()).or_insert(line);
            }
            if version == 1 {
                let (_, lines) = self.legacy.get_or_insert((line, 0));
                *lines += 1;
            } else {
                let version = version.to_string();
                self.find(line, None, Kind::Unsupported { version });
            }
            return Ok(());
        }
        let run = string(object, "run")?;
        let seq = count(object, "seq")?;
        let event = string(object, "event")?;
        if event == START {
            self.start(line, content, object, run, seq)
        } else {
            self.event(line, content, object, run, seq, event == STOP)
        }
    }

    fn start(
        &mut self,
        line: u64,
        content: &[u8],
        object: &Object,
        run: &str,
        seq: u64,
    ) -> Result<(), Malformed> {
        if seq != 0 {
            return Err(Malformed::Invalid {
                member: "seq",
                expected: "0 in a guard_start",
            });
        }
        if object.contains("prev") {
            return Err(Malformed::Unexpected("prev"));
        }
        let log_key = optional_digest(object, "log_key")?;
        let lock_digest = optional_digest(object, "lock_digest")?;
        if let Some(&i) = self.index.get(run) {
            let first_line = self.report.runs[i].start_line.unwrap_or(0);
            self.find(line, Some(run), Kind::RepeatedStart { first_line });
            return Ok(());
        }
        self.index.insert(run.to_owned(), self.report.runs.len());
        self.states.push(State {
            expected: 1,
            prev: Digest::of_bytes(content),
        });
        self.report.runs.push(Run {
            id: run.to_owned(),
            start_line: Some(line),
            server: object
                .get("server")
                .and_then(Value::as_str)
                .map(str::to_owned),
            started_at: object
                .get("observed_at")
                .and_then(Value::as_str)
                .map(str::to_owned),
            lock_digest,
            log_key,
            lines: 1,
            last_line: line,
            end: None,
            broken: false,
            sealed_by: None,
        });
        self.other_version_before(run);
        Ok(())
    }

    fn event(
        &mut self,
        line: u64,
        content: &[u8],
        object: &Object,
        run: &str,
        seq: u64,
        stop: bool,
    ) -> Result<(), Malformed> {
        let prev = optional_digest(object, "prev")?.ok_or(Malformed::Missing("prev"))?;
        let end = if stop {
            Some(end(line, content)?)
        } else {
            None
        };
        let digest = Digest::of_bytes(content);
        let i = match self.index.get(run) {
            Some(&i) => i,
            None => {
                // Followed from here on, so that one missing head is one finding.
                self.find(line, Some(run), Kind::NoStart { seq });
                self.index.insert(run.to_owned(), self.report.runs.len());
                self.states.push(State {
                    expected: seq.saturating_add(1),
                    prev: digest,
                });
                self.report.runs.push(Run {
                    id: run.to_owned(),
                    start_line: None,
                    server: object
                        .get("server")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    started_at: None,
                    lock_digest: None,
                    log_key: None,
                    lines: 1,
                    last_line: line,
                    end,
                    broken: true,
                    sealed_by: None,
                });
                self.other_version_before(run);
                return Ok(());
            }
        };
        if let Some(stopped) = &self.report.runs[i].end {
            let stop_line = stopped.line;
            self.find(line, Some(run), Kind::AfterStop { stop_line });
            return Ok(());
        }
        let state = &self.states[i];
        let (expected, previous) = (state.expected, state.prev);
        if seq < expected {
            // A stray line: the chain goes on from where it was, so a line moved back is one
            // finding where it stands.
            self.find(
                line,
                Some(run),
                Kind::OutOfOrder {
                    expected,
                    found: seq,
                },
            );
            return Ok(());
        }
        if seq > expected {
            self.find(
                line,
                Some(run),
                Kind::Gap {
                    expected,
                    found: seq,
                },
            );
        } else if prev != previous {
            let previous_line = self.report.runs[i].last_line;
            let kind = Kind::Broken {
                expected: previous,
                found: prev,
                previous_line,
            };
            self.find(line, Some(run), kind);
        }
        // Followed from this line on: one changed line is one finding, not one per line after it.
        self.states[i] = State {
            expected: seq.saturating_add(1),
            prev: digest,
        };
        let entry = &mut self.report.runs[i];
        entry.lines += 1;
        entry.last_line = line;
        if let Some(end) = end {
            let announced = if entry.start_line.is_some() {
                entry.log_key
            } else {
                end.key
            };
            let signed = end.signature.is_some();
            let mismatch = announced != end.key || end.key.is_some() != signed;
            let named = end.key;
            entry.end = Some(end);
            if mismatch {
                let kind = Kind::EndMismatch {
                    announced,
                    named,
                    signed,
                };
                self.find(line, Some(run), kind);
            }
        }
        Ok(())
    }

    /// A run of the log begins: a line of another version that named it before is a break.
    fn other_version_before(&mut self, run: &str) {
        if let Some(line) = self.other_versions.remove(run) {
            self.find(line, Some(run), Kind::Malformed(OTHER_VERSION));
        }
    }

    fn find(&mut self, line: u64, run: Option<&str>, kind: Kind) {
        if kind.is_break()
            && let Some(run) = run
            && let Some(&i) = self.index.get(run)
        {
            self.report.runs[i].broken = true;
        }
        self.report.push(Finding {
            line,
            run: run.map(str::to_owned),
            kind,
        });
    }
}

/// Reads a `guard_stop` line: strictly (every member of it is the guard's own), its key,
/// signature and exit code, and the bytes its signature covers.
fn end(line: u64, content: &[u8]) -> Result<End, Malformed> {
    let value = parse_with(content, Strictness::Strict).map_err(Malformed::NotJson)?;
    let mut object = value.as_object().ok_or(Malformed::NotObject)?.clone();
    let key = optional_digest(&object, "log_key")?;
    let exit_code = match object.get("exit_code") {
        None => None,
        Some(_) => Some(count(&object, "exit_code")?),
    };
    let signature = match object.remove("signature") {
        None => None,
        Some(text) => Some(
            text.as_str()
                .ok_or(Malformed::Invalid {
                    member: "signature",
                    expected: "a string",
                })?
                .to_owned(),
        ),
    };
    Ok(End {
        line,
        exit_code,
        key,
        signature,
        signed: canonicalize_exact(&Value::from(object)),
    })
}

fn string<'o>(object: &'o Object, member: &'static str) -> Result<&'o str, Malformed> {
    object
        .get(member)
        .ok_or(Malformed::Missing(member))?
        .as_str()
        .ok_or(Malformed::Invalid {
            member,
            expected: "a string",
        })
}

/// A non-negative integer in plain digits, at most 2^53.
fn count(object: &Object, member: &'static str) -> Result<u64, Malformed> {
    let invalid = Malformed::Invalid {
        member,
        expected: "a non-negative integer in plain digits",
    };
    let literal = object
        .get(member)
        .ok_or(Malformed::Missing(member))?
        .as_number()
        .ok_or_else(|| invalid.clone())?
        .literal();
    if !literal.bytes().all(|b| b.is_ascii_digit())
        || (literal.len() > 1 && literal.starts_with('0'))
    {
        return Err(invalid);
    }
    literal
        .parse::<u64>()
        .ok()
        .filter(|&n| n <= 1 << 53)
        .ok_or(invalid)
}

/// A digest, `null` or absent.
fn optional_digest(object: &Object, member: &'static str) -> Result<Option<Digest>, Malformed> {
    match object.get(member) {
        None => Ok(None),
        Some(value) if value.is_null() => Ok(None),
        Some(value) => value
            .as_str()
            .and_then(|text| text.parse().ok())
            .map(Some)
            .ok_or(Malformed::Invalid {
                member,
                expected: "a digest (sha256: and 64 lowercase hex digits) or null",
            }),
    }
}

impl Report {
    /// Adds a finding in the order of lines, listing at most [`MAX_FINDINGS`].
    pub fn push(&mut self, finding: Finding) {
        if finding.kind.is_break() {
            self.breaks += 1;
            self.first_break = Some(
                self.first_break
                    .map_or(finding.line, |l| l.min(finding.line)),
            );
        } else {
            self.unproven += 1;
        }
        let at = self.findings.partition_point(|f| f.line <= finding.line);
        if self.findings.len() < MAX_FINDINGS {
            self.findings.insert(at, finding);
        } else {
            self.omitted += 1;
        }
    }

    /// The exit code of the check (docs/cli.md): 1 when a break was found, else 3 when
    /// something could not be proven, else 0.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        if self.breaks > 0 {
            1
        } else if self.unproven > 0 {
            3
        } else {
            0
        }
    }

    /// How many findings prove an alteration, listed or not.
    #[must_use]
    pub fn breaks(&self) -> u64 {
        self.breaks
    }

    /// The report for a person: one line per run, one per finding, and the verdict. Every
    /// string from the file is escaped ([`crate::escape`]) and cut short ([`Excerpt`]).
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for run in &self.runs {
            let _ = writeln!(out, "{}", RunLine(run, self.ends_checked));
        }
        for finding in &self.findings {
            let _ = writeln!(out, "{finding}");
        }
        if self.omitted > 0 {
            let _ = writeln!(out, "... and {} more findings", self.omitted);
        }
        let _ = writeln!(out, "{}", self.verdict());
        out
    }

    fn verdict(&self) -> String {
        let events: u64 = self.runs.iter().map(|r| r.lines).sum();
        let size = format!(
            "{} {}, {} {}",
            self.runs.len(),
            plural(self.runs.len() as u64, "run", "runs"),
            events,
            plural(events, "line", "lines")
        );
        match self.exit_code() {
            1 => format!(
                "FAIL: the log is not what the guard wrote: {} {}, the first at line {}",
                self.breaks,
                plural(self.breaks, "break", "breaks"),
                self.first_break.unwrap_or(0)
            ),
            3 => format!(
                "PARTIAL: no alteration found in {size}, but {} {} could not be proven",
                self.unproven,
                plural(self.unproven, "thing", "things")
            ),
            _ if self.ends_checked => {
                format!(
                    "PASS: {size}: every chain holds and every run's end is signed by a given key"
                )
            }
            _ => format!(
                "PASS: {size}: every chain holds (the ends were not checked: without --pubkey a \
                 run cut after a whole line reads as one that ended there)"
            ),
        }
    }
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// A run's line of the report.
struct RunLine<'a>(&'a Run, bool);

impl fmt::Display for RunLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self(run, checked) = *self;
        write!(f, "run {}:", Excerpt::quoted(&run.id))?;
        if let Some(server) = &run.server {
            write!(f, " server {},", Excerpt::quoted(server))?;
        }
        if let Some(lock) = run.lock_digest {
            write!(f, " lock {lock},")?;
        }
        if let Some(at) = &run.started_at {
            write!(f, " started {},", Excerpt::bare(at))?;
        }
        write!(
            f,
            " {} {} (lines {}-{})",
            run.lines,
            plural(run.lines, "line", "lines"),
            run.start_line.unwrap_or(0),
            run.last_line
        )?;
        if run.start_line.is_none() {
            write!(f, ", no start")?;
        }
        match &run.end {
            None => write!(f, ", not stopped")?,
            Some(end) => {
                write!(f, ", stopped")?;
                if let Some(code) = end.exit_code {
                    write!(f, " (exit {code})")?;
                }
                match (run.sealed_by, end.key, checked) {
                    (Some(key), _, _) => write!(f, ", signed by {key} (verified)")?,
                    (None, Some(key), false) => {
                        write!(f, ", signed by {key} (not checked: no --pubkey)")?;
                    }
                    (None, Some(key), true) => write!(f, ", signed by {key} (not verified)")?,
                    (None, None, _) => write!(f, ", unsigned")?,
                }
            }
        }
        if run.broken {
            write!(f, "; BROKEN")?;
        }
        Ok(())
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: ", self.line)?;
        }
        if let Some(run) = &self.run {
            write!(f, "run {}: ", Excerpt::quoted(run))?;
        }
        match &self.kind {
            Kind::Malformed(malformed) => {
                write!(f, "not a line of the admission log: {malformed}")
            }
            Kind::Cut => f.write_str(
                "the last line has no newline: the file was cut inside a line (or the guard \
                 stopped in the middle of writing it)",
            ),
            Kind::Broken {
                expected,
                found,
                previous_line,
            } => write!(
                f,
                "the chain breaks: prev names {found}, but the run's line before it (line \
                 {previous_line}) has the digest {expected}: that line was changed, or this \
                 line's prev was"
            ),
            Kind::Gap { expected, found } => {
                let missing = found - expected;
                write!(
                    f,
                    "seq {found} where {expected} comes next: {missing} {} of the run {} \
                     missing here (dropped, or moved)",
                    plural(missing, "line", "lines"),
                    plural(missing, "is", "are")
                )
            }
            Kind::OutOfOrder { expected, found } => write!(
                f,
                "seq {found} where {expected} comes next: a line out of order (moved, or \
                 repeated)"
            ),
            Kind::NoStart { seq } => write!(
                f,
                "the run's first line here is seq {seq}, not its guard_start: its beginning \
                 is missing (cut, or spliced from another log)"
            ),
            Kind::RepeatedStart { first_line } => {
                write!(f, "a second guard_start (the first is line {first_line})")
            }
            Kind::AfterStop { stop_line } => {
                write!(f, "a line after the run's guard_stop (line {stop_line})")
            }
            Kind::EndMismatch {
                announced,
                named,
                signed,
            } => match (announced, named, signed) {
                (Some(a), Some(n), _) if a != n => write!(
                    f,
                    "the guard_stop names key {n}, but the run's guard_start announced {a}"
                ),
                (Some(a), None, _) => write!(
                    f,
                    "the guard_stop names no key, but the run's guard_start announced {a}"
                ),
                (None, Some(n), _) => write!(
                    f,
                    "the guard_stop names key {n}, but the run's guard_start announced none"
                ),
                (_, Some(n), false) => {
                    write!(f, "the guard_stop is not signed, though it names key {n}")
                }
                _ => f.write_str("the guard_stop is signed, though it names no key"),
            },
            Kind::BadSignature { key } => write!(
                f,
                "the signature of the guard_stop does not verify with key {key}: forged, or the \
                 run was changed"
            ),
            Kind::Legacy { lines } => write!(
                f,
                "{lines} {} of schema_version 1 (the first here), written before the chain: \
                 nothing proves {}",
                plural(*lines, "line", "lines"),
                plural(*lines, "it", "them")
            ),
            Kind::Unsupported { version } => write!(
                f,
                "schema_version {} is not supported by this build: not checked",
                Excerpt::bare(version)
            ),
            Kind::Empty => f.write_str("the log holds no line: nothing to verify"),
            Kind::NotStopped => f.write_str(
                "no guard_stop: nothing proves where the run ended (the guard was killed, or \
                 the lines after this one were cut)",
            ),
            Kind::Unsigned => f.write_str(
                "the guard_stop is not signed (the guard ran without --log-key): nothing \
                 proves where the run ended",
            ),
            Kind::ForeignKey { found, expected } => {
                write!(
                    f,
                    "the guard_stop is signed by key {found}, not by a given key ("
                )?;
                for (i, key) in expected.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{key}")?;
                }
                f.write_str("): nothing proves where the run ended")
            }
        }
    }
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotJson(err) => match err.position() {
                Some(at) => write!(
                    f,
                    "not JSON ({} at byte {} of the line)",
                    err.rule(),
                    at.offset
                ),
                None => write!(f, "not JSON ({})", err.rule()),
            },
            Self::NotObject => f.write_str("not a JSON object"),
            Self::Missing(member) => write!(f, "\"{member}\" is missing"),
            Self::Repeated(member) => write!(f, "\"{member}\" appears more than once"),
            Self::Unexpected(member) => write!(f, "\"{member}\" has no place in it"),
            Self::Invalid { member, expected } => write!(f, "\"{member}\" is not {expected}"),
        }
    }
}

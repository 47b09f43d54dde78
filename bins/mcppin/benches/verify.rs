//! docs/performance.md: `mcppin verify` of a 10,000-tool surface (about 20 MB of manifest and
//! lockfile) within 3x of `sha256sum` of the same files.
//!
//! Generates a deterministic, realistic manifest (schema_version 2, complete, eight servers,
//! nested input and output schemas, annotations, some non-ASCII text), runs `mcppin lock` on it
//! once, then times `sha256sum MANIFEST LOCK`, `mcppin verify` and `mcppin verify --pubkey` (the
//! same lockfile, signed) side by side, alternating, and prints wall-time medians, CPU time and
//! the ratios to sha256sum.
//!
//! ```text
//! cargo bench -p mcppin --bench verify [-- --tools N --runs N --keep DIR]
//! ```
//!
//! `--keep DIR` writes the files into DIR and leaves them there (for profiling); `--generate`
//! only writes the manifest and stops.
#![expect(
    clippy::disallowed_methods,
    reason = "a benchmark times whole runs: the bounded runs of the tests poll for the exit, which would be timed too"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use mcppin_core::{Kind, Object, Value, to_pretty};

const SERVERS: [(&str, &str); 8] = [
    ("billing", "stripe-mcp"),
    ("crm", "hubspot-connector"),
    ("docs", "confluence-mcp"),
    ("files", "filesystem"),
    ("github", "github-mcp-server"),
    ("search", "web-search"),
    ("tickets", "jira-mcp"),
    ("warehouse", "snowflake-mcp"),
];

const VERBS: [&str; 16] = [
    "get", "list", "create", "update", "delete", "search", "archive", "restore", "export",
    "import", "sync", "approve", "assign", "close", "merge", "preview",
];

const NOUNS: [&str; 24] = [
    "invoice",
    "customer",
    "refund",
    "page",
    "space",
    "file",
    "directory",
    "issue",
    "pull_request",
    "branch",
    "commit",
    "ticket",
    "comment",
    "sprint",
    "table",
    "query",
    "warehouse",
    "report",
    "contact",
    "deal",
    "pipeline",
    "attachment",
    "label",
    "webhook",
];

const WORDS: [&str; 48] = [
    "the",
    "a",
    "record",
    "account",
    "current",
    "user",
    "returns",
    "matching",
    "items",
    "filter",
    "by",
    "optional",
    "when",
    "set",
    "otherwise",
    "all",
    "results",
    "are",
    "paginated",
    "using",
    "cursor",
    "limit",
    "maximum",
    "number",
    "of",
    "entries",
    "in",
    "one",
    "response",
    "must",
    "be",
    "valid",
    "identifier",
    "format",
    "ISO",
    "8601",
    "timestamp",
    "owner",
    "workspace",
    "project",
    "status",
    "field",
    "value",
    "sorted",
    "ascending",
    "descending",
    "order",
    "only",
];

/// A few strings a real surface carries that are not ASCII (all visible text).
const NON_ASCII: [&str; 4] = [
    "Résumé des entrées",
    "東京オフィスの在庫",
    "Größe in Bytes",
    "Ελάχιστη τιμή",
];

struct Options {
    tools: usize,
    runs: usize,
    keep: Option<PathBuf>,
    generate_only: bool,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("verify bench: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let options = options()?;
    let temp;
    let dir = match &options.keep {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            dir.clone()
        }
        None => {
            temp = tempfile::tempdir().map_err(|e| e.to_string())?;
            temp.path().to_owned()
        }
    };
    let manifest = dir.join("manifest.json");
    let lock = dir.join("mcp.lock.json");

    let bytes = to_pretty(&generate(options.tools));
    std::fs::write(&manifest, &bytes).map_err(|e| format!("{}: {e}", manifest.display()))?;
    if options.generate_only {
        println!("wrote {} ({} bytes)", manifest.display(), bytes.len());
        return Ok(());
    }

    let mcppin = env!("CARGO_BIN_EXE_mcppin");
    let lock_arg = utf8(&lock)?;
    let manifest_arg = utf8(&manifest)?;
    let started = Instant::now();
    check(mcppin, &["lock", "-o", lock_arg, manifest_arg])?;
    let lock_time = started.elapsed();

    // The same lockfile, signed, in a folder of its own (a signature beside the unsigned one
    // would be reported by every plain verify).
    let signed_dir = dir.join("signed");
    std::fs::create_dir_all(&signed_dir).map_err(|e| format!("{}: {e}", signed_dir.display()))?;
    let signed_lock = signed_dir.join("mcp.lock.json");
    let key = signed_dir.join("signing-key.pem");
    std::fs::copy(&lock, &signed_lock).map_err(|e| format!("{}: {e}", signed_lock.display()))?;
    let (signed_arg, key_arg) = (utf8(&signed_lock)?, utf8(&key)?);
    let public_key = format!("{key_arg}.pub");
    check(mcppin, &["key", "--force", "-o", key_arg])?;
    check(mcppin, &["sign", "--lock", signed_arg, "--key", key_arg])?;

    let commands: [(&str, Vec<&str>); 3] = [
        ("sha256sum", vec!["sha256sum", manifest_arg, lock_arg]),
        (
            "verify",
            vec![mcppin, "verify", "--lock", lock_arg, manifest_arg],
        ),
        (
            "verify --pubkey",
            vec![
                mcppin,
                "verify",
                "--lock",
                signed_arg,
                "--pubkey",
                &public_key,
                manifest_arg,
            ],
        ),
    ];
    // One untimed run of each warms the page cache and proves each succeeds.
    for (_, command) in &commands {
        check(command[0], &command[1..])?;
    }
    let mut walls = vec![Vec::with_capacity(options.runs); commands.len()];
    let mut cpus = vec![Some(Duration::ZERO); commands.len()];
    // Alternating runs share whatever else the machine is doing.
    for _ in 0..options.runs {
        for (i, (_, command)) in commands.iter().enumerate() {
            let (wall, cpu) = timed(command)?;
            walls[i].push(wall);
            cpus[i] = cpus[i].zip(cpu).map(|(a, b)| a + b);
        }
    }

    let manifest_len = file_len(&manifest)?;
    let lock_len = file_len(&lock)?;
    let total_mb = (manifest_len + lock_len) as f64 / 1e6;
    let runs = u32::try_from(options.runs).unwrap_or(u32::MAX);
    let mut report = String::new();
    let _ = writeln!(
        report,
        "surface:   {} tools on {} servers",
        options.tools,
        SERVERS.len()
    );
    let _ = writeln!(
        report,
        "files:     manifest {:.1} MB + lock {:.1} MB = {total_mb:.1} MB",
        manifest_len as f64 / 1e6,
        lock_len as f64 / 1e6
    );
    let _ = writeln!(report, "lock:      {} (one run)", ms(lock_time));
    let _ = writeln!(
        report,
        "{} runs each, alternating; wall: median (min-max); cpu: user+sys, mean per run",
        options.runs
    );
    let base_wall = median(&mut walls[0]);
    let base_cpu = cpus[0];
    for (i, (name, _)) in commands.iter().enumerate() {
        let wall = median(&mut walls[i]);
        let mut line = format!(
            "{name:<16} wall {} ({}-{}), {:.0} MB/s",
            ms(wall),
            ms(walls[i][0]),
            ms(walls[i][walls[i].len() - 1]),
            total_mb / wall.as_secs_f64()
        );
        if let Some(cpu) = cpus[i] {
            let _ = write!(line, "; cpu {}", ms(cpu / runs));
        }
        if i > 0 {
            let _ = write!(
                line,
                "; ratio to sha256sum: wall {:.2}",
                wall.as_secs_f64() / base_wall.as_secs_f64()
            );
            if let (Some(cpu), Some(base)) = (cpus[i], base_cpu) {
                let _ = write!(line, ", cpu {:.2}", cpu.as_secs_f64() / base.as_secs_f64());
            }
        }
        let _ = writeln!(report, "{line}");
    }
    let _ = writeln!(report, "the target is verify / sha256sum <= 3");
    print!("{report}");
    Ok(())
}

fn utf8(path: &Path) -> Result<&str, String> {
    path.to_str()
        .ok_or_else(|| format!("{}: path is not UTF-8", path.display()))
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        tools: 10_000,
        runs: 7,
        keep: None,
        generate_only: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            // Passed by `cargo bench`.
            "--bench" => {}
            "--tools" => options.tools = number(args.next())?,
            "--runs" => options.runs = number(args.next())?.max(1),
            "--keep" => options.keep = Some(args.next().ok_or("--keep needs a folder")?.into()),
            "--generate" => options.generate_only = true,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

fn number(arg: Option<String>) -> Result<usize, String> {
    let arg = arg.ok_or("a flag needs a number")?;
    arg.parse().map_err(|_| format!("not a number: {arg:?}"))
}

fn check(program: &str, args: &[&str]) -> Result<(), String> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{program} {} failed ({}):\n{}{}",
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

/// Wall time of one run and, where Linux tells it, its CPU time (user + system, 10 ms
/// resolution), which other load on the machine disturbs less; output discarded; a run that
/// fails ends the benchmark.
fn timed(command: &[&str]) -> Result<(Duration, Option<Duration>), String> {
    let cpu_before = children_cpu();
    let started = Instant::now();
    let status = Command::new(command[0])
        .args(&command[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("{}: {e}", command[0]))?;
    let elapsed = started.elapsed();
    if !status.success() {
        return Err(format!("{} failed ({status})", command.join(" ")));
    }
    let cpu = cpu_before
        .zip(children_cpu())
        .map(|(before, after)| after.saturating_sub(before));
    Ok((elapsed, cpu))
}

/// User plus system time of this process's waited-for children (`cutime` and `cstime` of
/// proc(5)), or `None` off Linux.
fn children_cpu() -> Option<Duration> {
    static TICKS: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    let ticks = (*TICKS.get_or_init(|| {
        let out = Command::new("getconf").arg("CLK_TCK").output().ok()?;
        let ticks: u64 = String::from_utf8(out.stdout).ok()?.trim().parse().ok()?;
        (ticks > 0).then_some(ticks)
    }))?;
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name in parentheses, starting with field 3 (state).
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let cutime: u64 = fields.get(13)?.parse().ok()?;
    let cstime: u64 = fields.get(14)?.parse().ok()?;
    Some(Duration::from_secs_f64(
        (cutime + cstime) as f64 / ticks as f64,
    ))
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn file_len(path: &Path) -> Result<u64, String> {
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The manifest of docs/formats.md for `tools` tools spread over the servers, the same every run.
fn generate(tools: usize) -> Value {
    let mut rng = Rng(0x6d63_7070_696e_0001);
    let mut per_server: Vec<Vec<Value>> = vec![Vec::new(); SERVERS.len()];
    for i in 0..tools {
        per_server[i % SERVERS.len()].push(tool(i, &mut rng));
    }
    let servers: Vec<Value> = SERVERS
        .iter()
        .zip(per_server)
        .map(|((id, reported), tools)| {
            object([
                ("id", (*id).into()),
                ("reported_name", (*reported).into()),
                ("protocol_version", "2025-11-25".into()),
                ("passes", 2_u64.into()),
                ("tools", tools.into()),
            ])
        })
        .collect();
    object([
        ("schema_version", 2_u64.into()),
        ("protocol_version", "2025-11-25".into()),
        ("complete", true.into()),
        ("captured_at", "2026-08-01T09:12:00Z".into()),
        ("captured_by", "mcppin-export/0.1.0".into()),
        ("servers", servers.into()),
    ])
}

fn tool(i: usize, rng: &mut Rng) -> Value {
    let verb = VERBS[rng.below(VERBS.len())];
    let noun = NOUNS[rng.below(NOUNS.len())];
    let name = format!("{verb}_{noun}_{i:05}");
    let sentence_count = 1 + rng.below(2);
    let mut members = vec![
        ("name", Value::from(name)),
        (
            "title",
            format!("{} {}", capitalise(verb), noun.replace('_', " ")).into(),
        ),
        ("description", sentences(rng, sentence_count).into()),
        ("inputSchema", schema(rng, 0)),
    ];
    let read_only = matches!(verb, "get" | "list" | "search" | "preview" | "export");
    if rng.below(2) == 0 {
        members.push((
            "annotations",
            object([
                ("title", format!("{verb} {noun}").into()),
                ("readOnlyHint", read_only.into()),
                ("destructiveHint", (verb == "delete").into()),
                ("idempotentHint", (read_only || verb == "update").into()),
                ("openWorldHint", (rng.below(2) == 0).into()),
            ]),
        ));
    }
    if rng.below(5) == 0 {
        members.push(("outputSchema", schema(rng, 1)));
    }
    if rng.below(10) == 0 {
        members.push((
            "_meta",
            object([("io.example/category", NOUNS[rng.below(NOUNS.len())].into())]),
        ));
    }
    object(members)
}

/// A JSON Schema object; `depth` limits nesting so a tool stays a realistic size.
fn schema(rng: &mut Rng, depth: usize) -> Value {
    let count = if depth == 0 {
        1 + rng.below(3)
    } else {
        1 + rng.below(2)
    };
    let mut properties = Object::new();
    let mut required = Vec::new();
    for p in 0..count {
        let name = format!("{}_{}", WORDS[rng.below(WORDS.len())], p);
        if rng.below(2) == 0 {
            required.push(Value::from(name.as_str()));
        }
        properties.insert(name, property(rng, depth));
    }
    object([
        ("type", "object".into()),
        ("properties", properties.into()),
        ("required", required.into()),
        ("additionalProperties", false.into()),
    ])
}

fn property(rng: &mut Rng, depth: usize) -> Value {
    let description = if rng.below(40) == 0 {
        format!(
            "{} {}",
            NON_ASCII[rng.below(NON_ASCII.len())],
            sentences(rng, 1)
        )
    } else {
        sentences(rng, 1)
    };
    // Kinds 5 and 6 nest; only top-level properties do, one in six of them.
    let pick = rng.below(if depth == 0 { 12 } else { 5 });
    let mut o = match if pick > 6 { pick % 5 } else { pick } {
        0 => object_of([
            ("type", "string".into()),
            ("maxLength", (64 + 64 * rng.below(8) as u64).into()),
        ]),
        1 => {
            let options: Vec<Value> = (0..2 + rng.below(4))
                .map(|_| WORDS[rng.below(WORDS.len())].into())
                .collect();
            object_of([("type", "string".into()), ("enum", options.into())])
        }
        2 => object_of([
            ("type", "integer".into()),
            ("minimum", 0_u64.into()),
            ("maximum", 10_u64.pow(1 + rng.below(6) as u32).into()),
            ("default", 10_u64.into()),
        ]),
        3 => object_of([
            ("type", vec!["string".into(), "null".into()].into()),
            ("format", "date-time".into()),
        ]),
        4 => object_of([("type", "boolean".into())]),
        5 => object_of([
            ("type", "array".into()),
            ("items", schema(rng, depth + 1)),
            ("maxItems", 100_u64.into()),
        ]),
        _ => match schema(rng, depth + 1).into_kind() {
            Kind::Object(nested) => nested,
            _ => Object::new(),
        },
    };
    o.insert("description", description);
    o.into()
}

fn sentences(rng: &mut Rng, count: usize) -> String {
    let mut out = String::new();
    for s in 0..count {
        if s > 0 {
            out.push(' ');
        }
        let words = 3 + rng.below(5);
        for w in 0..words {
            let word = WORDS[rng.below(WORDS.len())];
            if w == 0 {
                out.push_str(&capitalise(word));
            } else {
                out.push(' ');
                out.push_str(word);
            }
        }
        out.push('.');
    }
    out
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

fn object(members: impl IntoIterator<Item = (&'static str, Value)>) -> Value {
    object_of(members).into()
}

fn object_of(members: impl IntoIterator<Item = (&'static str, Value)>) -> Object {
    members.into_iter().collect()
}

/// SplitMix64: a fixed seed gives the same surface on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

//! Strict read + canonicalise + digest, against serde_json (parse into `Value` + `to_vec`) and
//! the existing JCS crates, on generated documents. Run with `cargo bench -p mcppin-core
//! --bench canon`; prints MB/s and the ratio of each time to serde_json's.
//!
//! The documents are generated deterministically (a fixed-seed xorshift), so every run and
//! every machine measures the same bytes: a `tools/list` answer of 100 tools with nested input
//! and output schemas (about 200 KB), and a 10 MB document of the same kind.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn main() {
    // `cargo bench` passes `--bench`; a name filter is not supported (there are two cases).
    let small = tools_list(100, 0x5EED);
    let large = tools_list_of_size(10 * 1024 * 1024, 0xB16);
    println!(
        "mcppin-core benchmark: MB/s (1 MB = 10^6 bytes), best of {ROUNDS} interleaved rounds \
         of CPU time; ratio = time / serde_json time"
    );
    for (label, doc) in [
        ("tools/list, 100 tools", &small),
        ("large document", &large),
    ] {
        check_agreement(doc);
        let rows: [(&str, Run); 5] = [
            (
                "mcppin-core: strict read + canonicalise + digest",
                ours_digest,
            ),
            ("mcppin-core: strict read + canonicalise", ours_canon),
            (
                "serde_json (float_roundtrip): from_slice::<Value> + to_vec",
                serde_json_parse_write,
            ),
            ("serde_jcs: from_slice::<Value> + to_vec", serde_jcs_canon),
            (
                "serde_json_canonicalizer: from_slice::<Value> + to_vec",
                canonicalizer_canon,
            ),
        ];
        let times = measure(doc, &rows.map(|(_, f)| f));
        let baseline = times[2];
        println!();
        println!("{label}: {} bytes", doc.len());
        println!("| implementation | MB/s | ratio to serde_json |");
        println!("|---|---:|---:|");
        for ((name, _), time) in rows.iter().zip(times) {
            println!(
                "| {name} | {:.1} | {:.2} |",
                mb_per_s(doc.len(), time),
                time.as_secs_f64() / baseline.as_secs_f64()
            );
        }
    }
}

/// One measured operation; returns something derived from its result, so it cannot be skipped.
type Run = fn(&[u8]) -> usize;

fn ours_digest(doc: &[u8]) -> usize {
    let value = mcppin_core::parse(doc).expect("strict read");
    let digest = mcppin_core::digest(&value).expect("decidable");
    usize::from(digest.as_bytes()[0])
}

fn ours_canon(doc: &[u8]) -> usize {
    let value = mcppin_core::parse(doc).expect("strict read");
    mcppin_core::canonicalize(&value).expect("canonical").len()
}

fn serde_json_parse_write(doc: &[u8]) -> usize {
    let value: serde_json::Value = serde_json::from_slice(doc).expect("serde_json read");
    serde_json::to_vec(&value).expect("serde_json write").len()
}

fn serde_jcs_canon(doc: &[u8]) -> usize {
    let value: serde_json::Value = serde_json::from_slice(doc).expect("serde_json read");
    serde_jcs::to_vec(&value).expect("serde_jcs write").len()
}

fn canonicalizer_canon(doc: &[u8]) -> usize {
    let value: serde_json::Value = serde_json::from_slice(doc).expect("serde_json read");
    serde_json_canonicalizer::to_vec(&value)
        .expect("canonicalizer write")
        .len()
}

/// The three canonicalisers must agree on the bytes, or the comparison means nothing.
fn check_agreement(doc: &[u8]) {
    let ours = mcppin_core::canonicalize(&mcppin_core::parse(doc).expect("read")).expect("canon");
    let value: serde_json::Value = serde_json::from_slice(doc).expect("serde_json read");
    assert_eq!(ours, serde_jcs::to_vec(&value).expect("serde_jcs"));
    assert_eq!(
        ours,
        serde_json_canonicalizer::to_vec(&value).expect("canonicalizer")
    );
}

const ROUNDS: usize = 7;

/// Best time per run of each function, over rounds that take turns (so a change in machine
/// load hits every implementation alike); each turn runs at least 0.3 s and 3 times. Time is
/// the thread's CPU time where Linux reports it (`/proc/thread-self/schedstat`, updated at
/// scheduler ticks, hence whole turns), so time spent waiting for a core shared with other
/// work is not counted; wall time otherwise.
fn measure(doc: &[u8], fs: &[Run]) -> Vec<Duration> {
    let mut best = vec![Duration::MAX; fs.len()];
    for f in fs {
        black_box(f(black_box(doc)));
    }
    for _ in 0..ROUNDS {
        for (f, best) in fs.iter().zip(&mut best) {
            let turn = Instant::now();
            let clock = Clock::start();
            let mut runs = 0u32;
            while runs < 3 || turn.elapsed() < Duration::from_millis(300) {
                black_box(f(black_box(doc)));
                runs += 1;
            }
            *best = (*best).min(clock.elapsed() / runs);
        }
    }
    best
}

/// CPU time of this thread if available, else wall time.
enum Clock {
    Cpu(Duration),
    Wall(Instant),
}

impl Clock {
    fn start() -> Self {
        match thread_cpu_time() {
            Some(t) => Self::Cpu(t),
            None => Self::Wall(Instant::now()),
        }
    }

    fn elapsed(&self) -> Duration {
        match self {
            Self::Cpu(start) => thread_cpu_time().map_or(Duration::ZERO, |now| now - *start),
            Self::Wall(start) => start.elapsed(),
        }
    }
}

/// The first field of `/proc/thread-self/schedstat`: nanoseconds this thread ran on a CPU.
fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

fn mb_per_s(bytes: usize, time: Duration) -> f64 {
    #[expect(
        clippy::cast_precision_loss,
        reason = "document sizes are far below 2^52"
    )]
    let bytes = bytes as f64;
    bytes / time.as_secs_f64() / 1e6
}

/// A deterministic pseudo-random source (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        let i = usize::try_from(self.below(items.len() as u64)).expect("small");
        items[i]
    }
}

const WORDS: &[&str] = &[
    "the",
    "file",
    "path",
    "read",
    "write",
    "repository",
    "issue",
    "query",
    "search",
    "result",
    "returns",
    "list",
    "of",
    "matching",
    "documents",
    "optional",
    "maximum",
    "number",
    "items",
    "cursor",
    "page",
    "user",
    "account",
    "invoice",
    "amount",
    "currency",
    "timestamp",
    "when",
    "set",
    "only",
    "format",
    "encoded",
    "as",
    "a",
    "string",
    "Unicode",
    "café",
    "naïve",
    "größe",
    "日本語",
    "emoji 🙂",
    "quoted \"text\"",
    "line\nbreak",
    "tab\tstop",
    "back\\slash",
];

fn sentence(rng: &mut Rng, min: u64, spread: u64) -> String {
    let words = min + rng.below(spread);
    let mut s = String::new();
    for i in 0..words {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(rng.pick(WORDS));
    }
    s.push('.');
    s
}

/// A JSON string literal with the escapes a server would write.
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn schema(out: &mut String, rng: &mut Rng, depth: u32) {
    let kind = if depth >= 3 {
        rng.below(4)
    } else {
        rng.below(6)
    };
    out.push_str("{\"type\": ");
    match kind {
        0 => {
            out.push_str("\"string\", \"description\": ");
            json_string(out, &sentence(rng, 6, 14));
            if rng.below(3) == 0 {
                out.push_str(", \"enum\": [\"asc\", \"desc\", \"relevance\"]");
            }
            let _ = write!(out, ", \"maxLength\": {}", 16 + rng.below(4096));
        }
        1 => {
            let _ = write!(
                out,
                "\"integer\", \"minimum\": 0, \"maximum\": {}, \"default\": {}",
                rng.below(1_000_000),
                rng.below(100)
            );
        }
        2 => {
            let _ = write!(
                out,
                "\"number\", \"minimum\": -{}.{}, \"exclusiveMaximum\": {}.5e{}",
                rng.below(1000),
                rng.below(100),
                rng.below(100),
                rng.below(10)
            );
        }
        3 => out.push_str("\"boolean\", \"default\": false"),
        4 => {
            out.push_str("\"array\", \"items\": ");
            schema(out, rng, depth + 1);
            let _ = write!(out, ", \"maxItems\": {}", rng.below(500));
        }
        _ => {
            out.push_str("\"object\", \"properties\": {");
            let n = 2 + rng.below(5);
            for i in 0..n {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(
                    out,
                    "\"{}_{}\": ",
                    rng.pick(WORDS).replace(['"', '\\', '\n', '\t', ' '], "_"),
                    i
                );
                schema(out, rng, depth + 1);
            }
            out.push_str("}, \"required\": [], \"additionalProperties\": false");
        }
    }
    out.push('}');
}

fn tool(out: &mut String, rng: &mut Rng, index: usize) {
    let _ = write!(
        out,
        "\n    {{\"name\": \"tool_{index}_{}\", ",
        rng.pick(&["read", "write", "search", "list"])
    );
    out.push_str("\"title\": ");
    json_string(out, &sentence(rng, 3, 1));
    out.push_str(", \"description\": ");
    json_string(out, &sentence(rng, 30, 60));
    out.push_str(",\n     \"inputSchema\": {\"type\": \"object\", \"properties\": {");
    let n = 4 + rng.below(6);
    for i in 0..n {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "\"param_{i}\": ");
        schema(out, rng, 1);
    }
    out.push_str("}, \"required\": [\"param_0\"]},\n     \"outputSchema\": ");
    schema(out, rng, 2);
    let _ = write!(
        out,
        ",\n     \"annotations\": {{\"readOnlyHint\": {}, \"destructiveHint\": false, \"openWorldHint\": true}}}}",
        rng.below(2) == 0
    );
}

/// A `tools/list` JSON-RPC answer with `count` tools.
fn tools_list(count: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed);
    let mut out = String::from("{\"jsonrpc\": \"2.0\", \"id\": 2, \"result\": {\"tools\": [");
    for i in 0..count {
        if i > 0 {
            out.push(',');
        }
        tool(&mut out, &mut rng, i);
    }
    out.push_str("\n  ], \"nextCursor\": \"eyJwYWdlIjogMn0=\"}}\n");
    out.into_bytes()
}

/// A `tools/list` answer of at least `size` bytes.
fn tools_list_of_size(size: usize, seed: u64) -> Vec<u8> {
    let mut count = 100;
    loop {
        let doc = tools_list(count, seed);
        if doc.len() >= size {
            return doc;
        }
        count = count * size / doc.len() + 1;
    }
}

//! Reading a document costs at most 16 times its size plus a small constant, whatever its
//! shape (docs/performance.md, "Memory"). The shapes are those that cost the most per
//! input byte: many tiny values (an array of one-digit numbers is the worst), tiny containers,
//! short strings, many short members, deep nesting; and a long string for contrast.
//!
//! The global allocator of this test binary counts every heap allocation, so this file holds a
//! single test: a second one running beside it would be counted too.

use mcppin_core::Strictness;
use mcppin_core::outline::Outline;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// The size of each generated document, about.
const SIZE: usize = 256 * 1024;

/// Bytes a reading may take beyond 16 times its input, whatever the input: the reader's own
/// bookkeeping (a count per open array or object, 256 levels at most).
const CONSTANT: usize = 16 * 1024;

#[test]
fn reading_costs_at_most_sixteen_times_the_input_for_every_shape() {
    let mut report = Vec::new();
    let mut over = Vec::new();
    for (shape, doc) in shapes() {
        let limit = 16 * doc.len() + CONSTANT;
        let readings: [(&str, Read); 3] = [
            ("strict", |d| {
                usize::from(mcppin_core::parse(d).expect("strict read").is_null())
            }),
            ("relaxed", |d| {
                let v = mcppin_core::parse_with(d, Strictness::Relaxed).expect("relaxed read");
                usize::from(v.is_null())
            }),
            // The routing reader of the guard: a batch is an array at the top, every element
            // recorded.
            ("outline", |d| {
                usize::from(Outline::parse(d, 2).expect("outline").root().is_outlined())
            }),
        ];
        for (reader, read) in readings {
            let peak = peak_bytes(|| read(&doc));
            report.push(format!(
                "{shape} ({} bytes), {reader}: peak {peak} bytes, {:.1} per input byte",
                doc.len(),
                peak as f64 / doc.len() as f64
            ));
            if peak > limit {
                over.push(format!("{shape}, {reader}: {peak} > {limit}"));
            }
        }
    }
    // Shown with `--nocapture`; the numbers in docs/performance.md come from here.
    println!("{}", report.join("\n"));
    assert!(
        over.is_empty(),
        "over 16x the input plus {CONSTANT}:\n{}\n\nall readings:\n{}",
        over.join("\n"),
        report.join("\n")
    );
}

/// One reading of a document; returns something derived from its result, so it is not skipped.
type Read = fn(&[u8]) -> usize;

/// The most bytes on the heap at any moment while `f` runs (what it keeps and what it frees).
fn peak_bytes(f: impl FnOnce() -> usize) -> usize {
    let profiler = dhat::Profiler::builder().testing().build();
    std::hint::black_box(f());
    let peak = dhat::HeapStats::get().max_bytes;
    drop(profiler);
    peak
}

fn shapes() -> Vec<(&'static str, Vec<u8>)> {
    let repeat = |item: &str| -> Vec<u8> {
        let n = SIZE / (item.len() + 1);
        format!("[{}]", vec![item; n].join(",")).into_bytes()
    };
    // Distinct member names, as short as they can be: "0", "1", ..., "a", ..., "10", ...
    let mut members = Vec::new();
    let mut i = 0usize;
    let mut len = 0;
    while len < SIZE {
        let member = format!("\"{i:x}\":0");
        len += member.len() + 1;
        members.push(member);
        i += 1;
    }
    let members = format!("{{{}}}", members.join(",")).into_bytes();
    // Chains 255 deep: `[[[...[0]...]]]`, side by side in one array.
    let chain = format!("{}0{}", "[".repeat(254), "]".repeat(254));
    vec![
        ("array of one-digit numbers", repeat("0")),
        ("array of empty arrays", repeat("[]")),
        ("array of empty objects", repeat("{}")),
        ("array of one-element arrays", repeat("[0]")),
        ("array of empty strings", repeat("\"\"")),
        ("array of one-character strings", repeat("\"a\"")),
        ("array of escaped one-character strings", repeat("\"\\n\"")),
        ("array of short numbers in exponent form", repeat("1e5")),
        ("array of long numbers", repeat("0.1234567890123456789")),
        ("array of one-member objects", repeat("{\"a\":0}")),
        ("object of many short members", members),
        ("deep nesting", repeat(&chain)),
        (
            "one long string",
            format!("\"{}\"", "x".repeat(SIZE)).into_bytes(),
        ),
    ]
}

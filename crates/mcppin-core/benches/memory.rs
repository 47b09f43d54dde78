//! Peak heap memory of reading a document, per input shape: the strict reader, and the outline
//! the guard routes each line by. Run with `cargo bench -p mcppin-core --bench memory`; prints
//! a table of peak heap bytes per input byte (the bound is 16, docs/performance.md).
//!
//! The global allocator of this program counts every heap allocation (so nothing else runs
//! beside a reading); the shapes are generated, each about `SIZE` bytes.

use std::hint::black_box;

use mcppin_core::outline::Outline;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// The size of each document under `cargo bench`; `cargo test --all-targets` runs a smaller one.
const SIZE: usize = 4 * 1024 * 1024;
const SMOKE: usize = 16 * 1024;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let size = if args.iter().any(|a| a == "--bench") {
        SIZE
    } else {
        SMOKE
    };
    println!("mcppin-core peak heap while reading, per input byte (bound: 16)");
    println!("| shape | input bytes | strict read | outline (guard routing) |");
    println!("|---|---:|---:|---:|");
    for (shape, doc) in shapes(size) {
        let strict =
            peak_bytes(|| usize::from(mcppin_core::parse(&doc).expect("strict read").is_null()));
        let outline = peak_bytes(|| {
            usize::from(
                Outline::parse(&doc, 2)
                    .expect("outline")
                    .root()
                    .is_outlined(),
            )
        });
        let per_byte = |peak: usize| peak as f64 / doc.len() as f64;
        println!(
            "| {shape} | {} | {:.1} | {:.1} |",
            doc.len(),
            per_byte(strict),
            per_byte(outline)
        );
    }
}

/// The most bytes on the heap at any moment while `f` runs.
fn peak_bytes(f: impl FnOnce() -> usize) -> usize {
    let profiler = dhat::Profiler::builder().testing().build();
    black_box(f());
    let peak = dhat::HeapStats::get().max_bytes;
    drop(profiler);
    peak
}

fn shapes(size: usize) -> Vec<(&'static str, Vec<u8>)> {
    let repeat = |item: &str| -> Vec<u8> {
        let n = size / (item.len() + 1);
        format!("[{}]", vec![item; n].join(",")).into_bytes()
    };
    let mut members = Vec::new();
    let mut len = 0;
    while len < size {
        let member = format!("\"{:x}\":0", members.len());
        len += member.len() + 1;
        members.push(member);
    }
    let members = format!("{{{}}}", members.join(",")).into_bytes();
    let chain = format!("{}0{}", "[".repeat(254), "]".repeat(254));
    vec![
        ("array of one-digit numbers", repeat("0")),
        ("array of empty arrays", repeat("[]")),
        ("array of empty objects", repeat("{}")),
        ("array of one-element arrays", repeat("[0]")),
        ("array of one-character strings", repeat("\"a\"")),
        ("array of one-member objects", repeat("{\"a\":0}")),
        ("object of many short members", members),
        ("deep nesting (chains 255 deep)", repeat(&chain)),
        (
            "one long string",
            format!("\"{}\"", "x".repeat(size)).into_bytes(),
        ),
    ]
}

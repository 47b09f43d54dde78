//! The real `mcppin` binary keeps to the memory bound of docs/performance.md on the costliest
//! shape, an array of one-digit numbers (a 50 MB file of zeros took 3.7 GB).
//!
//! The reading may take 16 bytes per input byte; `mcppin canon` also holds the file it read and
//! the canonical form it writes, one byte per input byte each, and the program itself (a few
//! MiB). Its peak resident memory is read from `/proc` while it is blocked writing its output
//! into a pipe nobody reads yet: by then the file is read and canonicalised.
#![cfg(target_os = "linux")]

use std::io::Read;
use std::process::{Command, Stdio};

/// The input size: large enough that the per-byte cost dwarfs the program's own memory.
const SIZE: usize = 4 * 1024 * 1024;

/// The program's own resident memory (code, libraries, buffers), generously.
const PROGRAM: u64 = 16 * 1024 * 1024;

#[test]
fn canon_of_an_array_of_one_digit_numbers_stays_within_eighteen_times_the_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("zeros.json");
    let doc = format!("[{}]", vec!["0"; SIZE / 2].join(","));
    std::fs::write(&path, &doc).expect("write");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcppin"))
        .arg("canon")
        .arg(&path)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcppin");
    let mut stdout = child.stdout.take().expect("stdout");
    // The first byte of output: reading and canonicalising are over, and the rest of the
    // output (far more than a pipe holds) keeps the process alive until it is read.
    let mut first = [0u8; 1];
    stdout.read_exact(&mut first).expect("first byte of output");
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", child.id())).expect("read /proc status");
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).expect("rest of output");
    let exit = child.wait().expect("wait");
    assert!(exit.success(), "mcppin canon failed: {exit}");
    assert_eq!(first[0], b'[');
    assert_eq!(
        rest.len() + 1,
        doc.len(),
        "the canonical form, as long as the input"
    );

    let peak_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc status");
    let peak = peak_kib * 1024;
    let input = doc.len() as u64;
    let limit = 18 * input + PROGRAM;
    assert!(
        peak <= limit,
        "peak resident memory {peak} bytes for {input} input bytes ({:.1} per byte), over 18 \
         times the input plus {PROGRAM}",
        peak as f64 / input as f64
    );
}

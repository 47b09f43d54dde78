//! RFC 8785 conformance: the cyberphone vectors, the Appendix B number table, the section 3.2.3
//! sorting example and the ES6 number sequence, all through the strict reader and the canonical
//! writer of this crate.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use mcppin_core::{JsonError as Error, canonicalize, parse};
use sha2::{Digest as _, Sha256};

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

fn read(rel: &str) -> Vec<u8> {
    let path = testdata(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn canon(input: &[u8]) -> Vec<u8> {
    let value = parse(input).unwrap_or_else(|e| panic!("{e}"));
    canonicalize(&value).unwrap_or_else(|e| panic!("{e}"))
}

fn hex_to_bytes(text: &str) -> Vec<u8> {
    text.split_ascii_whitespace()
        .map(|pair| u8::from_str_radix(pair, 16).unwrap_or_else(|e| panic!("{pair:?}: {e}")))
        .collect()
}

#[test]
fn every_cyberphone_input_canonicalises_to_its_output_and_outhex() {
    let mut names: Vec<String> = std::fs::read_dir(testdata("rfc8785-cyberphone/input"))
        .expect("input dir")
        .map(|e| e.expect("entry").file_name().into_string().expect("name"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "arrays.json",
            "french.json",
            "structures.json",
            "unicode.json",
            "values.json",
            "weird.json"
        ]
    );
    for name in &names {
        let got = canon(&read(&format!("rfc8785-cyberphone/input/{name}")));
        let output = read(&format!("rfc8785-cyberphone/output/{name}"));
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&output),
            "{name} against output/"
        );
        let stem = name.trim_end_matches(".json");
        let outhex = read(&format!("rfc8785-cyberphone/outhex/{stem}.txt"));
        let expected = hex_to_bytes(std::str::from_utf8(&outhex).expect("hex is ASCII"));
        assert_eq!(got, expected, "{name} against outhex/");
    }
}

/// The canonical form of one double, reached the way a served document reaches it: the
/// shortest round-trip literal of the double, read by the strict reader, written by the
/// canonical writer.
fn canonical_number(bits: u64) -> Result<String, Error> {
    let literal = format!("{:e}", f64::from_bits(bits));
    let value = parse(literal.as_bytes())?;
    let bytes = canonicalize(&value)?;
    Ok(String::from_utf8(bytes).expect("canonical form is UTF-8"))
}

#[test]
fn rfc8785_appendix_b_every_row() {
    let table = String::from_utf8(read("rfc8785/appendix-b.txt")).expect("UTF-8");
    let mut rows = 0;
    for line in table.lines() {
        let (hex, expected) = line.split_once(' ').expect("two columns");
        let bits = u64::from_str_radix(hex, 16).expect("hex");
        let got = canonical_number(bits);
        if expected == "error" {
            // NaN and Infinity have no JSON literal at all, so the reader refuses their only
            // spelling; a literal that overflows to Infinity reads but has no canonical form.
            assert!(!f64::from_bits(bits).is_finite(), "{hex}");
            assert!(
                matches!(got, Err(Error::InvalidLiteral { .. })),
                "{hex}: {got:?}"
            );
        } else {
            assert_eq!(got.as_deref(), Ok(expected), "{hex}");
        }
        rows += 1;
    }
    assert_eq!(rows, 26, "Appendix B has 26 rows");
    let overflow = parse(b"1e400").expect("reads");
    assert_eq!(
        canonicalize(&overflow),
        Err(Error::NonFiniteNumber {
            literal: "1e400".into()
        })
    );
}

#[test]
fn rfc8785_section_3_2_3_sorting_example() {
    let got = canon(&read("rfc8785/sorting-input.json"));
    let expected = read("rfc8785/sorting-output.json");
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&expected)
    );
}

/// The ES6 number sequence of the cyberphone NOTICE: the fixed patterns, then 2000 doubles
/// from the smallest normal one up, then doubles read from a SHA-256 chain.
struct Es6Sequence {
    fixed: std::vec::IntoIter<u64>,
    next_k: u64,
    block: [u8; 32],
    pending: Vec<u64>,
}

impl Es6Sequence {
    fn new() -> Self {
        let text = String::from_utf8(read("rfc8785-cyberphone/es6_static_u64.txt")).expect("UTF-8");
        let fixed: Vec<u64> = text
            .lines()
            .map(|l| u64::from_str_radix(l.trim(), 16).expect("hex"))
            .collect();
        assert_eq!(fixed.len(), 168);
        Self {
            fixed: fixed.into_iter(),
            next_k: 0,
            block: [0; 32],
            pending: Vec::new(),
        }
    }
}

impl Iterator for Es6Sequence {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        if let Some(bits) = self.fixed.next() {
            return Some(bits);
        }
        if self.next_k < 2000 {
            self.next_k += 1;
            return Some(0x0010_0000_0000_0000 + self.next_k - 1);
        }
        loop {
            if let Some(bits) = self.pending.pop() {
                let d = f64::from_bits(bits);
                if d != 0.0 && d.is_finite() {
                    return Some(bits);
                }
                continue;
            }
            self.block = Sha256::digest(self.block).into();
            // Four doubles per block, in block order (popped from the back).
            self.pending = self
                .block
                .chunks_exact(8)
                .rev()
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect();
        }
    }
}

/// Hashes the first lines of the sequence and checks each published hash up to `lines`.
fn check_es6_sequence(lines: u64) {
    const PUBLISHED: [(u64, &str); 6] = [
        (
            1_000,
            "be18b62b6f69cdab33a7e0dae0d9cfa869fda80ddc712221570f9f40a5878687",
        ),
        (
            10_000,
            "b9f7a8e75ef22a835685a52ccba7f7d6bdc99e34b010992cbc5864cd12be6892",
        ),
        (
            100_000,
            "22776e6d4b49fa294a0d0f349268e5c28808fe7e0cb2bcbe28f63894e494d4c7",
        ),
        (
            1_000_000,
            "49415fee2c56c77864931bd3624faad425c3c577d6d74e89a83bc725506dad16",
        ),
        (
            10_000_000,
            "b9f8a44a91d46813b21b9602e72f112613c91408db0b8341fb94603d9db135e0",
        ),
        (
            100_000_000,
            "0f7dda6b0837dde083c5d6b896f7d62340c8a2415b0c7121d83145e08a755272",
        ),
    ];
    let mut hasher = Sha256::new();
    let mut line = String::new();
    let mut checked = 0;
    for (n, bits) in (1..=lines).zip(Es6Sequence::new()) {
        line.clear();
        let number = canonical_number(bits).unwrap_or_else(|e| panic!("{bits:x}: {e}"));
        writeln!(line, "{bits:x},{number}").expect("write to String");
        hasher.update(line.as_bytes());
        if let Some((_, hash)) = PUBLISHED.iter().find(|(at, _)| *at == n) {
            let got: String = hasher
                .clone()
                .finalize()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(got, *hash, "SHA-256 of the first {n} lines");
            checked += 1;
        }
    }
    assert!(checked > 0, "no published hash within {lines} lines");
}

#[test]
fn es6_number_sequence_first_million_lines() {
    check_es6_sequence(1_000_000);
}

#[test]
#[ignore = "100,000,000 lines: minutes of CPU; run with --ignored"]
fn es6_number_sequence_all_hundred_million_lines() {
    check_es6_sequence(100_000_000);
}

//! The reader, strict and relaxed, on arbitrary bytes: it must never panic, every error names a
//! position inside the input, and whatever is read canonicalises, digests and pretty-prints
//! without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_core::{Strictness, canonicalize, digest, parse_with, to_pretty};

fuzz_target!(|data: &[u8]| {
    let strict = parse_with(data, Strictness::Strict);
    let relaxed = parse_with(data, Strictness::Relaxed);
    for result in [&strict, &relaxed] {
        match result {
            Ok(value) => {
                assert!(value.span().end <= data.len());
                let _ = canonicalize(value);
                let _ = digest(value);
                let _ = to_pretty(value);
                let _ = value.to_string();
            }
            Err(e) => {
                let at = e.position().expect("reading errors have a position");
                assert!(at.offset <= data.len());
                assert!(at.line >= 1 && at.column >= 1);
                let _ = e.to_string();
            }
        }
    }
    // Relaxed reading only lets content rules pass: whatever strict accepts, it accepts alike.
    if let Ok(value) = &strict {
        assert_eq!(relaxed.as_ref().ok(), Some(value));
    }
});

//! The folding rule on arbitrary member names (one per line): it reports a conflict exactly
//! when a plain pairwise comparison finds one, whichever way it compares (pair by pair or
//! sorted), and folding is symmetric.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_core::fold::{ENVELOPE, conflict, fold_eq};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let names: Vec<&str> = text.split('\n').collect();
    let variant = names
        .iter()
        .any(|n| ENVELOPE.iter().any(|d| d != n && fold_eq(n, d)));
    let mut twins = false;
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            assert_eq!(fold_eq(a, b), fold_eq(b, a));
            twins |= fold_eq(a, b);
        }
    }
    assert_eq!(conflict(&names, &ENVELOPE).is_some(), variant || twins);
});

//! The manifest reader on arbitrary bytes: it never panics, and whatever it accepts is written
//! in one byte form that reads back to the same manifest and the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_core::manifest::Manifest;

fuzz_target!(|data: &[u8]| {
    let Ok(manifest) = Manifest::parse(data) else {
        return;
    };
    let bytes = manifest.to_bytes();
    let again = Manifest::parse(&bytes).expect("a written manifest reads back");
    assert_eq!(again, manifest, "reading back gives the same manifest");
    assert_eq!(again.to_bytes(), bytes, "one byte form");
});

//! Canonical round trip: what the strict reader accepts canonicalises to bytes the strict
//! reader accepts again and that canonicalise to themselves; the pretty form reads back to the
//! same canonical bytes; a digest survives the trip. Every object's members are in RFC 8785
//! order, checked against the UTF-16 encoding of their names.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_core::{Kind, Value, canonicalize, digest, parse, to_pretty};

/// Asserts that the members of every object in `value` are in strictly increasing UTF-16 order.
fn assert_ordered(value: &Value) {
    match value.kind() {
        Kind::Object(object) => {
            for pair in object.members().windows(2) {
                let (a, b) = (&pair[0].name, &pair[1].name);
                assert!(a.encode_utf16().lt(b.encode_utf16()), "{a:?} before {b:?}");
            }
            object.values().for_each(assert_ordered);
        }
        Kind::Array(items) => items.iter().for_each(assert_ordered),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = parse(data) else {
        return;
    };
    assert_ordered(&value);
    let Ok(canonical) = canonicalize(&value) else {
        return;
    };
    let again = parse(&canonical).expect("the canonical form reads back strictly");
    let twice = canonicalize(&again).expect("the canonical form canonicalises");
    assert_eq!(canonical, twice, "canonicalisation is idempotent");
    let pretty = to_pretty(&value);
    let from_pretty = parse(&pretty).expect("the pretty form reads back strictly");
    if let Ok(digest_before) = digest(&value) {
        assert_eq!(canonicalize(&from_pretty).ok(), Some(canonical));
        assert_eq!(digest(&again).ok(), Some(digest_before));
        assert_eq!(digest(&from_pretty).ok(), Some(digest_before));
    }
});

//! Canonical round trip: what the strict reader accepts canonicalises to bytes the strict
//! reader accepts again and that canonicalise to themselves; the pretty form reads back to the
//! same canonical bytes; a digest survives the trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_core::{canonicalize, digest, parse, to_pretty};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = parse(data) else {
        return;
    };
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

//! The readers of a Python environment's records (`mcppin_client::artifact::python`) on
//! arbitrary bytes: uv's cache entry for a wheel (MessagePack, then the HTTP cache policy), a
//! distribution's `METADATA`, `WHEEL` and `RECORD`, a wheel's file name and a process's
//! `/proc/<pid>/stat`. No panic, no unbounded recursion; every digest read is of the form an
//! artifact holds. Seeds: the records uv wrote in `testdata/artifact/uv/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_client::artifact::python::{
    archive_record, metadata, process_group, record_digest, wheel_name, wheel_tags,
};
use mcppin_core::artifact::{is_dist_hash, is_sha256_hex};

fuzz_target!(|data: &[u8]| {
    if let Ok(record) = archive_record(data) {
        assert!(record.sha256.iter().all(|h| is_sha256_hex(h)));
        let _ = wheel_name(&record.filename);
    }
    let _ = metadata(data);
    let _ = wheel_tags(data);
    if let Ok(digest) = record_digest(data) {
        assert!(is_dist_hash(&format!("record-sha256:{digest}")));
    }
    let _ = wheel_name(&String::from_utf8_lossy(data));
    let _ = process_group(data);
});

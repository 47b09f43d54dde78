//! The reader of a container engine's `image inspect` output
//! (`mcppin_client::artifact::oci::image_id`) on arbitrary bytes: no panic, and an id read is
//! of the form an artifact holds. Seeds: `testdata/artifact/oci/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_client::artifact::oci::image_id;
use mcppin_core::artifact::is_oci_digest;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(id)) = image_id(data) {
        assert!(is_oci_digest(&id), "{id}");
    }
});

//! The lockfile reader on arbitrary bytes: it never panics; whatever it accepts passed its
//! self-check, is written in one byte form that reads back to the same lockfile and bytes, and
//! re-approving its own surface leaves serial and bytes alone.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_core::lockfile::Lockfile;
use mcppin_core::manifest::{Manifest, ServerSurface};
use mcppin_core::surface::ItemKind;

fuzz_target!(|data: &[u8]| {
    let Ok(lock) = Lockfile::parse(data) else {
        return;
    };
    let bytes = lock.to_bytes();
    let again = Lockfile::parse(&bytes).expect("a written lockfile reads back");
    assert_eq!(again, lock, "reading back gives the same lockfile");
    assert_eq!(again.to_bytes(), bytes, "one byte form");

    // The approved surface as a complete capture: approving it again changes nothing.
    if lock.schema_version() != 2 {
        return;
    }
    let mut manifest = Manifest::new(true);
    for (id, server) in &lock.servers {
        let mut surface = ServerSurface::new();
        surface.reported_name.clone_from(&server.reported_name);
        surface.protocol_version.clone_from(&server.protocol_version);
        for kind in ItemKind::ALL {
            for item in server.items(kind).values() {
                let approved = item.approved().expect("version 2 items hold their object");
                surface
                    .items_mut(kind)
                    .insert(id, kind, approved.clone(), "")
                    .expect("lockfile keys are unique and its items fit one");
            }
        }
        manifest.servers.insert(id.clone(), surface);
    }
    let relocked = Lockfile::approve(Some(&lock), &manifest, &[]).expect("its own surface");
    assert_eq!(relocked.approval_serial, lock.approval_serial);
    assert_eq!(relocked.to_bytes(), bytes, "an unchanged surface re-locks to the same bytes");
});

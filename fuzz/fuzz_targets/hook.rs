//! The pre-call hook's readers: any bytes as Claude Code's hook input and as a guard state are
//! read or refused without a panic; a state read writes back to bytes that read the same, and
//! a call read maps onto a lockfile without a panic, its block reason printable ASCII.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcppin_core::hook::{Call, State, resolve};
use mcppin_core::lockfile::Lockfile;
use mcppin_core::manifest::Manifest;

fuzz_target!(|data: &[u8]| {
    static LOCK: OnceLock<Lockfile> = OnceLock::new();
    let lock = LOCK.get_or_init(|| {
        let manifest = Manifest::parse(
            br#"{"schema_version": 2, "complete": true, "servers": [
            {"id": "my.docs", "tools": [{"name": "search"}, {"name": "a__b"}]},
            {"id": "my_docs", "tools": [{"name": "search"}]},
            {"id": "claude.ai Drive", "tools": [{"name": "read file"}]}]}"#,
        )
        .expect("manifest");
        Lockfile::approve(None, &manifest, &[]).expect("lockfile")
    });
    if let Ok(call) = Call::parse(data) {
        if let Err(block) = resolve(lock, &call) {
            let text = block.to_string();
            assert!(text.bytes().all(|b| (0x20..0x7f).contains(&b)), "{text}");
        }
    }
    if let Ok(state) = State::parse(data) {
        let again = State::parse(&state.to_bytes("stdio")).expect("a written state reads back");
        assert_eq!(again, state);
    }
});

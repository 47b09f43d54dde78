//! The client configuration reader (JSON with comments) on arbitrary text: it must never
//! panic or overflow its stack, and a file too deep to read is refused the same way whether it
//! is read as a configuration or looked at by `--discover`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_client::discover::inspect;
use mcppin_client::{ClientConfig, Error};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = ClientConfig::parse(text);
    let listed = inspect(text, false);
    let _ = inspect(text, true);
    assert_eq!(
        matches!(parsed, Err(Error::ConfigDepth { .. })),
        matches!(listed, Err(Error::ConfigDepth { .. }))
    );
    if let Ok(config) = parsed {
        assert_eq!(listed.map(|l| l.len()).ok(), Some(config.servers.len()));
    }
});

//! Admission log reader: any bytes are read without a panic, whole or fed line by line in any
//! cut (the two give one report), with or without keys; the report renders as printable ASCII
//! and its exit code is one of the contract's.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcppin_core::log::{Verifier, verify};
use mcppin_sign::PublicKey;

/// RFC 8410 section 10.1, the example public key.
const KEY: &str = "-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=
-----END PUBLIC KEY-----
";

fuzz_target!(|data: &[u8]| {
    static KEYS: OnceLock<Vec<PublicKey>> = OnceLock::new();
    let keys = KEYS.get_or_init(|| vec![PublicKey::from_pem(KEY).expect("the RFC 8410 key")]);
    let whole = verify(data);
    let mut verifier = Verifier::new();
    for line in data.split_inclusive(|&b| b == b'\n') {
        verifier.feed(line);
    }
    let fed = verifier.finish();
    assert_eq!(whole.findings, fed.findings);
    assert_eq!(whole.lines, fed.lines);
    assert!(matches!(whole.exit_code(), 0 | 1 | 3));
    let text = whole.to_text();
    assert!(text.bytes().all(|b| b == b'\n' || (0x20..0x7f).contains(&b)), "{text}");
    let mut checked = fed;
    mcppin_sign::log::check_ends(&mut checked, keys);
    assert!(matches!(checked.exit_code(), 0 | 1 | 3));
    let _ = checked.to_text();
});

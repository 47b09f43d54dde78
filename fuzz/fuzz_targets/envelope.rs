//! Signature envelope reader: any input is refused or read without a panic; what is read
//! writes back to a file that reads the same, and its signed bytes are strict canonical JSON.
//! Checking it against a key never panics either.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcppin_sign::{Envelope, PublicKey};

/// RFC 8410 section 10.1, the example public key.
const KEY: &str = "-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=
-----END PUBLIC KEY-----
";

fuzz_target!(|data: &[u8]| {
    static KEYS: OnceLock<Vec<PublicKey>> = OnceLock::new();
    let keys = KEYS.get_or_init(|| vec![PublicKey::from_pem(KEY).expect("the RFC 8410 key")]);
    let Ok(envelope) = Envelope::parse(data) else {
        return;
    };
    let again = Envelope::parse(&envelope.to_bytes()).expect("the file form reads back");
    assert_eq!(again, envelope);
    let signed = mcppin_core::parse(&envelope.signed_bytes()).expect("signed bytes are strict");
    assert_eq!(
        mcppin_core::canonicalize(&signed).expect("canonical"),
        envelope.signed_bytes()
    );
    let _ = envelope.verify(keys);
});

//! The readers of a local program's first bytes (`mcppin_client::artifact::local`) on
//! arbitrary bytes: the `#!` line, the argument of an `env` line and the test of whether a
//! file holds code. No panic; an interpreter read is never empty and never spans a line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_client::artifact::local::{env_program, is_code, shebang};

fuzz_target!(|data: &[u8]| {
    if let Some(line) = shebang(data) {
        assert!(!line.interpreter.is_empty());
        assert!(!line.interpreter.contains('\n'));
        if let Some(argument) = &line.argument {
            let _ = env_program(argument);
        }
    }
    let text = String::from_utf8_lossy(data);
    let _ = env_program(&text);
    let _ = is_code(std::path::Path::new(text.as_ref()), u32::from(data.first().copied().unwrap_or(0)), data);
});

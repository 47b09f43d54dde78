//! The readers of npm's records of an `npx` install (`mcppin_client::artifact::npm`) on
//! arbitrary bytes: the lockfile, the install directory's `package.json`, an `.npmrc` and the
//! words of a command line. No panic; every package read has an `integrity` of the form an
//! artifact holds, so the artifact made of them reads back as written. Seeds: the records npm
//! wrote in `testdata/artifact/npm/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_client::artifact::npm::{lock_packages, npmrc_cache, recorded_packages, request};
use mcppin_core::artifact::Artifact;

fuzz_target!(|data: &[u8]| {
    if let Ok(packages) = lock_packages(data) {
        let artifact = Artifact::Npm { packages };
        assert_eq!(Artifact::from_value(&artifact.to_value(), "").as_ref(), Ok(&artifact));
    }
    let _ = recorded_packages(data);
    let text = String::from_utf8_lossy(data);
    let _ = npmrc_cache(&text);
    let words: Vec<&str> = text.split('\0').collect();
    if let Ok(request) = request(&words) {
        assert!(!request.packages.is_empty());
    }
});

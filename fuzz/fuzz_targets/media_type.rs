//! The `Content-Type` reader and the decoding check of `mcppin_core::http` on arbitrary bytes:
//! no panic; a media type read has a lowercase `type/subtype` of tokens; written back (every
//! value quoted) it reads as the same media type; and the decoding check accepts a head with
//! that one `Content-Type` only when it reads and names no charset but UTF-8, once.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_core::http::{MediaType, Refusal, check_decoding};

fuzz_target!(|data: &[u8]| {
    let read = MediaType::parse(data);
    let checked = check_decoding([("content-type", data)]);
    match &read {
        Err(refusal) => {
            assert_eq!(*refusal, Refusal::MalformedContentType);
            assert_eq!(checked, Err(Refusal::MalformedContentType));
        }
        Ok(media) => {
            let essence = media.essence();
            assert_eq!(essence, essence.to_ascii_lowercase());
            assert_eq!(essence.matches('/').count(), 1, "{essence}");
            let mut written = essence.to_owned();
            for (name, value) in media.parameters() {
                let quoted = value.replace('\\', "\\\\").replace('"', "\\\"");
                written.push_str(&format!("; {name}=\"{quoted}\""));
            }
            assert_eq!(MediaType::parse(written.as_bytes()).as_ref(), Ok(media));
            // `charset`, and its extended forms (`charset*`, `charset*0`).
            let charsets: Vec<(&str, &str)> = media
                .parameters()
                .filter(|(name, _)| *name == "charset" || name.starts_with("charset*"))
                .collect();
            let utf8 = match charsets[..] {
                [] => true,
                [(name, value)] => name == "charset" && value.eq_ignore_ascii_case("utf-8"),
                _ => false,
            };
            match &checked {
                Ok(Some(checked)) => {
                    assert!(utf8, "{data:?}");
                    assert_eq!(checked, media);
                }
                Ok(None) => panic!("a Content-Type read as none"),
                Err(refusal) => {
                    assert!(!utf8, "{data:?}");
                    assert_eq!(*refusal, Refusal::Charset);
                }
            }
        }
    }
});

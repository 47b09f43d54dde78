//! The SSE reader on arbitrary bytes: no panic, the limit holds, and the events read do not
//! depend on where the stream was cut into chunks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_core::sse::{Event, Reader};

fuzz_target!(|data: &[u8]| {
    let Some((&cut, stream)) = data.split_first() else {
        return;
    };
    let limit = 64;
    let mut whole = Reader::new(limit);
    let mut expected = Vec::new();
    let whole_result = whole.feed(stream, &mut expected);
    let (a, b) = stream.split_at(usize::from(cut).min(stream.len()));
    let mut split = Reader::new(limit);
    let mut found = Vec::new();
    let split_result = split.feed(a, &mut found).and_then(|()| split.feed(b, &mut found));
    assert_eq!(whole_result.is_ok(), split_result.is_ok());
    if whole_result.is_ok() {
        assert_eq!(found, expected);
    }
    for event in &expected {
        if let Event::Message(message) = event {
            assert!(message.data.as_ref().map_or(0, Vec::len) <= limit);
        }
    }
});

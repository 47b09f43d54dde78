//! The event-stream decoder of remote capture: never panics, gives the same events (or the
//! same refusal) however the stream is cut into chunks, and never yields data beyond its bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcppin_client::sse::{SseDecoder, SseEvent};

/// The bound the decoder is given: small, so that the fuzzer reaches it.
const LIMIT: usize = 256;

fuzz_target!(|data: &[u8]| {
    // The first byte picks a chunk size; the rest is the stream.
    let Some((&size, stream)) = data.split_first() else {
        return;
    };
    let whole = decode(stream, stream.len().max(1));
    let chunked = decode(stream, usize::from(size % 16) + 1);
    assert_eq!(whole, chunked, "chunking changed the events");
    if let Ok(events) = whole {
        for event in events {
            assert!(event.data.len() <= LIMIT, "data beyond the bound");
        }
    }
});

fn decode(stream: &[u8], size: usize) -> Result<Vec<SseEvent>, String> {
    let mut decoder = SseDecoder::new(LIMIT);
    let mut events = Vec::new();
    for chunk in stream.chunks(size) {
        decoder.push(chunk).map_err(|e| e.to_string())?;
        while let Some(event) = decoder.next_event() {
            events.push(event);
        }
    }
    Ok(events)
}

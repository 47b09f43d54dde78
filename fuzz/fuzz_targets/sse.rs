//! The SSE reader on arbitrary bytes (the guard's and the export's, `mcppin_core::sse`): no
//! panic; the same events, the same refusal, the same last event id, retry time and mid-event
//! state however the stream is cut into chunks (once at any byte, or in chunks of any small
//! size); and never data past the limit.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcppin_core::sse::{Event, Reader};

/// The bound the reader is given: small, so that the fuzzer reaches it.
const LIMIT: usize = 64;

/// What reading a stream gave: its events (or the refusal) and the reader's state after it.
#[derive(Debug, PartialEq)]
struct Read {
    events: Result<Vec<Event>, ()>,
    last_event_id: Option<Vec<u8>>,
    retry: Option<Duration>,
    mid_event: bool,
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks a cut, the second a chunk size; the rest is the stream.
    let [cut, size, stream @ ..] = data else {
        return;
    };
    let whole = read(&[stream]);
    let (a, b) = stream.split_at(usize::from(*cut).min(stream.len()));
    assert_eq!(read(&[a, b]), whole, "a cut changed what was read");
    let chunks: Vec<&[u8]> = stream.chunks(usize::from(size % 16) + 1).collect();
    assert_eq!(read(&chunks), whole, "chunking changed what was read");
    if let Ok(events) = &whole.events {
        for event in events {
            if let Event::Message(message) = event {
                assert!(message.data.as_ref().map_or(0, Vec::len) <= LIMIT, "data past the limit");
            }
        }
    }
});

fn read(chunks: &[&[u8]]) -> Read {
    let mut reader = Reader::new(LIMIT);
    let mut events = Vec::new();
    for chunk in chunks {
        if reader.feed(chunk, &mut events).is_err() {
            // The reader must not be fed again; its state is not compared.
            return Read {
                events: Err(()),
                last_event_id: None,
                retry: None,
                mid_event: false,
            };
        }
    }
    Read {
        last_event_id: reader.last_event_id().map(<[u8]>::to_vec),
        retry: reader.retry(),
        mid_event: reader.is_mid_event(),
        events: Ok(events),
    }
}

//! Server-sent events: a bounded, incremental reader and the writer of one event, without I/O.
//!
//! The Streamable HTTP transport of MCP answers a request with an SSE stream whose events
//! carry JSON-RPC messages in their `data` (docs/guard.md, "In front of a remote server"). The
//! reader follows the event stream interpretation of the WHATWG HTML standard (section 9.2.6):
//! lines end with CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of the
//! next are one line end); a line starting with a colon is a comment; `field: value` loses one
//! space after the colon; `data` lines join with LF; a blank line ends the event. A leading
//! byte order mark is dropped.
//!
//! Unlike a browser, the reader hands on events that have no `data` (an `id` alone: the
//! priming event of a resumable stream) and comments, so that a proxy can pass them on; and it
//! holds at most `limit` bytes of one event, so that a stream never grows the reader's memory
//! past it.
//!
//! A client reads the same events and also asks the reader what the stream set for a
//! reconnection: [`Reader::last_event_id`] (the `Last-Event-ID` to resume with),
//! [`Reader::retry`] (the wait before reconnecting) and [`Reader::is_mid_event`] (whether the
//! stream was cut in the middle of an event, whose fields are then lost).
//!
//! ```
//! use mcppin_core::sse::{Event, Reader};
//!
//! let mut reader = Reader::new(1024);
//! let mut events = Vec::new();
//! reader.feed(b"id: 7\r\ndata: {\"jsonrpc\":", &mut events)?;
//! reader.feed(b"\"2.0\"}\r\n\r\n", &mut events)?;
//! let [Event::Message(message)] = &events[..] else { panic!("one event") };
//! assert_eq!(message.id.as_deref(), Some(&b"7"[..]));
//! assert_eq!(message.data.as_deref(), Some(&br#"{"jsonrpc":"2.0"}"#[..]));
//! # Ok::<(), mcppin_core::sse::TooLong>(())
//! ```

/// One thing read from a stream.
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum Event {
    /// An event: the fields read before a blank line.
    Message(Message),
    /// A comment line (its text is not kept: it means nothing to a client).
    Comment,
}

/// The fields of one event, as read.
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct Message {
    /// The last `id` field, if any (an id holding NUL is ignored, as the standard says).
    pub id: Option<Vec<u8>>,
    /// The last `event` field, if any.
    pub event: Option<Vec<u8>>,
    /// The last `retry` field made of ASCII digits only, if any.
    pub retry: Option<Vec<u8>>,
    /// The `data` lines joined with LF; `None` when the event had no `data` field.
    pub data: Option<Vec<u8>>,
}

impl Message {
    /// Writes the event: its `id`, `event` and `retry` fields, then `data` (this one, not the
    /// event's own, when given: a replacement) as one `data` line per line, then a blank line.
    #[must_use]
    pub fn write(&self, data: Option<&[u8]>) -> Vec<u8> {
        let data = data.or(self.data.as_deref());
        let mut out = Vec::with_capacity(data.map_or(0, <[u8]>::len) + 32);
        for (name, value) in [
            ("id", &self.id),
            ("event", &self.event),
            ("retry", &self.retry),
        ] {
            if let Some(value) = value {
                field(&mut out, name, value);
            }
        }
        if let Some(data) = data {
            for line in split_lines(data) {
                field(&mut out, "data", line);
            }
        }
        out.push(b'\n');
        out
    }
}

/// Writes a comment line that ends no event (a keep-alive).
#[must_use]
pub fn comment() -> &'static [u8] {
    b":\n"
}

/// An event (or a line) longer than the reader's limit.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
#[error("an event of the stream exceeds {limit} bytes")]
pub struct TooLong {
    /// The limit, in bytes.
    pub limit: usize,
}

/// An incremental reader of an event stream: feed it the bytes as they arrive.
#[derive(Debug)]
pub struct Reader {
    limit: usize,
    /// The bytes of the line being read.
    line: Vec<u8>,
    /// The event being read.
    message: Message,
    /// Whether the event has any field yet.
    started: bool,
    /// Bytes the event holds so far (its fields, for the limit).
    held: usize,
    /// The last byte fed was a CR: an LF next is part of the same line end.
    after_cr: bool,
    /// Whether the first bytes (and a byte order mark among them) were seen.
    at_start: bool,
    /// The id of the last event ended by a blank line that set one (the standard's last event
    /// ID string).
    last_id: Option<Vec<u8>>,
    /// The last valid `retry` field read, in milliseconds.
    retry: Option<u64>,
}

impl Reader {
    /// A reader that holds at most `limit` bytes of one event.
    #[must_use]
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            line: Vec::new(),
            message: Message::default(),
            started: false,
            held: 0,
            after_cr: false,
            at_start: true,
            last_id: None,
            retry: None,
        }
    }

    /// The id the last event ended set (an `id` field in force when a blank line ended it): the
    /// `Last-Event-ID` to resume the stream with. It carries over events that set none, and an
    /// `id` field with no value sets it to the empty id.
    #[must_use]
    pub fn last_event_id(&self) -> Option<&[u8]> {
        self.last_id.as_deref()
    }

    /// The reconnection time the stream asked for: the last `retry` field of ASCII digits read
    /// (a value too large for `u64` milliseconds is ignored).
    #[must_use]
    pub fn retry(&self) -> Option<std::time::Duration> {
        self.retry.map(std::time::Duration::from_millis)
    }

    /// Whether the bytes fed so far end in the middle of a line or of an event (an event ends
    /// only with a blank line: a stream cut here loses it).
    #[must_use]
    pub fn is_mid_event(&self) -> bool {
        self.started || (!self.at_start && !self.line.is_empty())
    }

    /// Reads `bytes`, appending every event they complete to `events`.
    ///
    /// # Errors
    ///
    /// [`TooLong`] when an event (its fields and the line being read) exceeds the limit; the
    /// reader must not be fed again.
    pub fn feed(&mut self, mut bytes: &[u8], events: &mut Vec<Event>) -> Result<(), TooLong> {
        if self.at_start {
            // A BOM may arrive split over chunks; until three bytes came, wait.
            const BOM: &[u8] = b"\xEF\xBB\xBF";
            let seen = self.line.len();
            let take = bytes.len().min(BOM.len().saturating_sub(seen));
            self.line
                .extend_from_slice(bytes.get(..take).unwrap_or_default());
            bytes = bytes.get(take..).unwrap_or_default();
            if self.line.len() < BOM.len() && BOM.starts_with(&self.line) {
                return Ok(());
            }
            self.at_start = false;
            let held = std::mem::take(&mut self.line);
            let rest = held.strip_prefix(BOM).unwrap_or(&held);
            self.scan(rest, events)?;
        }
        self.scan(bytes, events)
    }

    fn scan(&mut self, mut bytes: &[u8], events: &mut Vec<Event>) -> Result<(), TooLong> {
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        while let Some(end) = bytes.iter().position(|b| *b == b'\n' || *b == b'\r') {
            let (head, tail) = bytes.split_at(end);
            self.take(head)?;
            let line = std::mem::take(&mut self.line);
            self.line_end(&line, events)?;
            self.line = line;
            self.line.clear();
            let cr = tail.first() == Some(&b'\r');
            bytes = tail.get(1..).unwrap_or_default();
            if cr {
                match bytes.first() {
                    Some(b'\n') => bytes = bytes.get(1..).unwrap_or_default(),
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        self.take(bytes)
    }

    /// Holds part of the line being read, within the limit.
    fn take(&mut self, bytes: &[u8]) -> Result<(), TooLong> {
        if self.held + self.line.len() + bytes.len() > self.limit {
            return Err(TooLong { limit: self.limit });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn line_end(&mut self, line: &[u8], events: &mut Vec<Event>) -> Result<(), TooLong> {
        if line.is_empty() {
            if self.started {
                let mut message = std::mem::take(&mut self.message);
                if let Some(id) = &message.id {
                    self.last_id = Some(id.clone());
                }
                if let Some(data) = &mut message.data
                    && data.last() == Some(&b'\n')
                {
                    data.pop();
                }
                events.push(Event::Message(message));
            }
            self.started = false;
            self.held = 0;
            return Ok(());
        }
        if line.first() == Some(&b':') {
            events.push(Event::Comment);
            return Ok(());
        }
        let (name, value) = match line.iter().position(|b| *b == b':') {
            Some(colon) => {
                let value = line.get(colon + 1..).unwrap_or_default();
                (
                    line.get(..colon).unwrap_or_default(),
                    value.strip_prefix(b" ").unwrap_or(value),
                )
            }
            None => (line, &b""[..]),
        };
        self.held += line.len() + 1;
        if self.held > self.limit {
            return Err(TooLong { limit: self.limit });
        }
        match name {
            b"data" => {
                let data = self.message.data.get_or_insert_with(Vec::new);
                data.extend_from_slice(value);
                data.push(b'\n');
            }
            b"id" if !value.contains(&0) => self.message.id = Some(value.to_vec()),
            b"event" => self.message.event = Some(value.to_vec()),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.message.retry = Some(value.to_vec());
                if let Some(millis) = std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.parse::<u64>().ok())
                {
                    self.retry = Some(millis);
                }
            }
            // Unknown fields are ignored (WHATWG HTML 9.2.6); they still start an event only
            // as the standard's reader does: not at all.
            _ => return Ok(()),
        }
        self.started = true;
        Ok(())
    }
}

/// Splits on LF (the only line end `data` can hold once read); an empty input is one empty
/// line.
fn split_lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    data.split(|b| *b == b'\n')
}

fn field(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(chunks: &[&[u8]], limit: usize) -> Result<Vec<Event>, TooLong> {
        let mut reader = Reader::new(limit);
        let mut events = Vec::new();
        for chunk in chunks {
            reader.feed(chunk, &mut events)?;
        }
        Ok(events)
    }

    fn message(id: Option<&str>, data: Option<&str>) -> Event {
        Event::Message(Message {
            id: id.map(|i| i.as_bytes().to_vec()),
            data: data.map(|d| d.as_bytes().to_vec()),
            ..Message::default()
        })
    }

    #[test]
    fn every_line_end_ends_a_line() {
        for stream in [
            &b"data: a\n\ndata: b\n\n"[..],
            b"data: a\r\n\r\ndata: b\r\n\r\n",
            b"data: a\r\rdata: b\r\r",
        ] {
            let events = read_all(&[stream], 100).unwrap();
            assert_eq!(
                events,
                [message(None, Some("a")), message(None, Some("b"))],
                "{stream:?}"
            );
        }
    }

    #[test]
    fn events_split_anywhere_read_the_same() {
        let stream = b"\xEF\xBB\xBFid: 1\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n: ping\r\n\r\n";
        let whole = read_all(&[stream], 1000).unwrap();
        assert_eq!(whole.len(), 2);
        let Event::Message(first) = &whole[0] else {
            panic!("{whole:?}")
        };
        assert_eq!(first.data.as_deref(), Some(&b"{\"a\":\n1}"[..]));
        assert_eq!(first.event.as_deref(), Some(&b"message"[..]));
        assert_eq!(whole[1], Event::Comment);
        for cut in 0..stream.len() {
            let (a, b) = stream.split_at(cut);
            assert_eq!(read_all(&[a, b], 1000).unwrap(), whole, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(read_all(&bytes, 1000).unwrap(), whole);
    }

    /// Found by the fuzz target: a first chunk ending in CR (read through the byte order mark
    /// check) forgot the CR, so the LF of the next chunk ended a second, empty line.
    #[test]
    fn a_cr_ending_the_first_chunk_and_an_lf_starting_the_next_are_one_line_end() {
        let whole = read_all(&[b"x\r\ndata: 1\n\n"], 100).unwrap();
        assert_eq!(read_all(&[b"x\r", b"\ndata: 1\n\n"], 100).unwrap(), whole);
        // The line ends count toward the limit the same way, however the stream is cut.
        let stream = b"x\r\ndata: 123456\n";
        for limit in 10..16 {
            assert_eq!(
                read_all(&[&stream[..2], &stream[2..]], limit).is_ok(),
                read_all(&[stream], limit).is_ok(),
                "limit {limit}"
            );
        }
    }

    #[test]
    fn an_id_alone_is_an_event_and_fields_lose_one_space() {
        let events = read_all(&[b"id:  x\n\nretry: 10\nretry: 1a\ndata\n\n"], 100).unwrap();
        assert_eq!(events[0], message(Some(" x"), None));
        let Event::Message(second) = &events[1] else {
            panic!("{events:?}")
        };
        assert_eq!(second.retry.as_deref(), Some(&b"10"[..]));
        assert_eq!(second.data.as_deref(), Some(&b""[..]));
    }

    #[test]
    fn unknown_fields_and_blank_lines_make_no_event() {
        assert_eq!(read_all(&[b"\n\nfoo: bar\n\n"], 100).unwrap(), []);
    }

    #[test]
    fn an_event_over_the_limit_is_refused() {
        assert_eq!(
            read_all(&[b"data: 0123456789\n"], 8),
            Err(TooLong { limit: 8 })
        );
        // Many short data lines count together.
        let mut stream = Vec::new();
        for _ in 0..10 {
            stream.extend_from_slice(b"data: 1\n");
        }
        assert_eq!(read_all(&[&stream], 40), Err(TooLong { limit: 40 }));
        // A line that never ends is refused as it grows, not at its end.
        let endless = vec![b'x'; 9];
        assert_eq!(read_all(&[&endless], 8), Err(TooLong { limit: 8 }));
        // The limit is per event.
        let two = b"data: 12345\n\ndata: 12345\n\n";
        assert_eq!(read_all(&[two], 13).unwrap().len(), 2);
    }

    #[test]
    fn written_events_read_back_the_same() {
        let original = Message {
            id: Some(b"e-1".to_vec()),
            event: Some(b"message".to_vec()),
            retry: Some(b"500".to_vec()),
            data: Some(b"{\"a\":\n1}".to_vec()),
        };
        let written = original.write(None);
        assert_eq!(
            read_all(&[&written], 100).unwrap(),
            [Event::Message(original.clone())]
        );
        let replaced = original.write(Some(b"{}"));
        let Event::Message(read) = &read_all(&[&replaced], 100).unwrap()[0] else {
            panic!()
        };
        assert_eq!(read.data.as_deref(), Some(&b"{}"[..]));
        assert_eq!(read.id, original.id);
    }

    fn read_in_chunks(stream: &[u8], size: usize, limit: usize) -> (Vec<Event>, Reader) {
        let mut reader = Reader::new(limit);
        let mut events = Vec::new();
        for chunk in stream.chunks(size.max(1)) {
            reader.feed(chunk, &mut events).unwrap();
        }
        (events, reader)
    }

    #[test]
    fn every_chunking_reads_the_same_events_last_id_and_retry() {
        let stream = b"\xEF\xBB\xBF: keep-alive\r\nid: 1\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n\
            retry: 250\rdata:x\r\rid\nevent:endpoint\ndata: /messages?sessionId=9\n\n";
        let (whole, reader) = read_in_chunks(stream, stream.len(), 1024);
        let data: Vec<_> = whole
            .iter()
            .filter_map(|event| match event {
                Event::Message(message) => message.data.as_deref(),
                Event::Comment => None,
            })
            .collect();
        assert_eq!(data, [&b"{\"a\":\n1}"[..], b"x", b"/messages?sessionId=9"]);
        // `id` without a value sets the empty id; the retry time is the last one read.
        assert_eq!(reader.last_event_id(), Some(&b""[..]));
        assert_eq!(reader.retry(), Some(std::time::Duration::from_millis(250)));
        for size in 1..stream.len() {
            let (events, chunked) = read_in_chunks(stream, size, 1024);
            assert_eq!(events, whole, "chunks of {size}");
            assert_eq!(chunked.last_event_id(), reader.last_event_id());
            assert_eq!(chunked.retry(), reader.retry());
        }
    }

    #[test]
    fn the_last_id_carries_over_events_that_set_none() {
        let (_, reader) = read_in_chunks(b"id: 42\nretry: 1500\ndata:\n\ndata: 2\n\n", 64, 64);
        assert_eq!(reader.last_event_id(), Some(&b"42"[..]));
        assert_eq!(reader.retry(), Some(std::time::Duration::from_millis(1500)));
        // An id takes effect when its event ends, not before.
        let (_, reader) = read_in_chunks(b"id: 1\n\nid: 2\ndata: x\n", 64, 64);
        assert_eq!(reader.last_event_id(), Some(&b"1"[..]));
        // A retry too large for u64 milliseconds, or not all digits, is ignored.
        let (_, reader) = read_in_chunks(
            b"retry: 7\nretry: 99999999999999999999\nretry: 5s\n",
            64,
            64,
        );
        assert_eq!(reader.retry(), Some(std::time::Duration::from_millis(7)));
        let (_, reader) = read_in_chunks(b"data: x\n\n", 64, 64);
        assert_eq!((reader.last_event_id(), reader.retry()), (None, None));
    }

    #[test]
    fn a_stream_cut_inside_an_event_or_a_line_is_mid_event() {
        for (stream, mid) in [
            (&b"event: ping\n\ndata: half"[..], true),
            (b"data: whole\n", true),
            (b"data: x\n\n", false),
            (b": ping\n", false),
            (b": pi", true),
            (b"", false),
            (b"\xEF\xBB\xBF", false),
        ] {
            assert_eq!(
                read_in_chunks(stream, 3, 64).1.is_mid_event(),
                mid,
                "{stream:?}"
            );
        }
    }

    #[test]
    fn a_comment_over_the_limit_is_refused_as_it_grows() {
        let mut stream = b": ".to_vec();
        stream.extend(std::iter::repeat_n(b'x', 100));
        let mut reader = Reader::new(64);
        let mut events = Vec::new();
        let refused = stream
            .chunks(7)
            .map(|chunk| reader.feed(chunk, &mut events))
            .find(Result::is_err);
        assert_eq!(refused, Some(Err(TooLong { limit: 64 })));
    }
}

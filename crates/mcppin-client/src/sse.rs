//! Server-sent events (the `text/event-stream` format of the WHATWG HTML standard, section
//! 9.2.6 "Interpreting an event stream"), decoded incrementally with a bound on every event.
//!
//! The decoder owns no socket: bytes go in as they arrive, in chunks of any size, and whole
//! events come out. Lines end with CRLF, LF or CR; a line split across chunks (even between CR
//! and LF) is joined. A line or an event's data longer than the bound is an error as soon as
//! the bound is passed, so nothing beyond the bound is ever buffered.

use std::collections::VecDeque;
use std::time::Duration;

use crate::Error;

/// One dispatched event.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct SseEvent {
    /// The event type (`event:` field); `message` when the event named none.
    pub event: String,
    /// The data: the `data:` lines joined with LF.
    pub data: Vec<u8>,
    /// The last event id in force when the event was dispatched (`id:` of this or an earlier
    /// event), for resuming the stream with `Last-Event-ID`.
    pub id: Option<String>,
}

/// An incremental event-stream decoder with a bound on lines and on each event's data.
///
/// # Examples
///
/// ```
/// use mcppin_client::sse::SseDecoder;
///
/// let mut decoder = SseDecoder::new(1024);
/// decoder.push(b"id: 7\nevent: message\ndata: {\"id\"")?;
/// assert!(decoder.next_event().is_none());
/// decoder.push(b":1}\n\n")?;
/// let event = decoder.next_event().expect("one event");
/// assert_eq!(event.data, b"{\"id\":1}");
/// assert_eq!(event.id.as_deref(), Some("7"));
/// # Ok::<(), mcppin_client::Error>(())
/// ```
#[derive(Debug)]
pub struct SseDecoder {
    limit: usize,
    /// The current, unterminated line.
    line: Vec<u8>,
    /// The previous chunk ended with CR: a leading LF of the next chunk belongs to it.
    after_cr: bool,
    /// Nothing was read yet: a leading byte order mark is skipped.
    at_start: bool,
    data: Vec<u8>,
    has_data: bool,
    event: String,
    last_id: Option<String>,
    retry: Option<Duration>,
    ready: VecDeque<SseEvent>,
}

/// How much longer than the bound a line may be: its field name, colon and space.
const FIELD_SLACK: usize = 16;

/// The UTF-8 byte order mark, skipped once at the start of a stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseDecoder {
    /// A decoder refusing lines and event data longer than `limit` bytes.
    #[must_use]
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            data: Vec::new(),
            has_data: false,
            event: String::new(),
            last_id: None,
            retry: None,
            ready: VecDeque::new(),
        }
    }

    /// Feeds the next bytes of the stream; completed events are queued for
    /// [`SseDecoder::next_event`].
    ///
    /// # Errors
    ///
    /// [`Error::LineTooLong`] when a line or an event's data passes the bound; the decoder is
    /// then unusable.
    pub fn push(&mut self, mut chunk: &[u8]) -> Result<(), Error> {
        if self.at_start && !chunk.is_empty() {
            // The BOM may itself arrive split: hold a partial one until it is whole.
            let held = self.line.len();
            let take = (BOM.len() - held).min(chunk.len());
            let candidate = [&self.line[..], chunk.get(..take).unwrap_or_default()].concat();
            if BOM.starts_with(&candidate) {
                if candidate.len() == BOM.len() {
                    self.line.clear();
                    self.at_start = false;
                } else {
                    self.line = candidate;
                    return Ok(());
                }
                chunk = chunk.get(take..).unwrap_or_default();
            } else {
                self.at_start = false;
            }
        }
        for &byte in chunk {
            match byte {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' => self.end_line()?,
                b'\r' => {
                    self.end_line()?;
                    self.after_cr = true;
                }
                _ => {
                    self.after_cr = false;
                    // Room for the field name before the bounded value (`data: `).
                    if self.line.len() >= self.limit.saturating_add(FIELD_SLACK) {
                        return Err(Error::LineTooLong { limit: self.limit });
                    }
                    self.line.push(byte);
                }
            }
        }
        Ok(())
    }

    /// The next completed event, if any.
    pub fn next_event(&mut self) -> Option<SseEvent> {
        self.ready.pop_front()
    }

    /// The last event id the stream set, for `Last-Event-ID` on reconnection.
    #[must_use]
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The reconnection time the stream asked for (`retry:`), if any.
    #[must_use]
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Whether the stream ended in the middle of a line or of an event (an event is only
    /// dispatched by a blank line, so its data is then discarded).
    #[must_use]
    pub fn is_mid_event(&self) -> bool {
        !self.line.is_empty() || self.has_data
    }

    fn end_line(&mut self) -> Result<(), Error> {
        self.at_start = false;
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch();
            return Ok(());
        }
        if line.first() == Some(&b':') {
            return Ok(()); // a comment (keep-alive)
        }
        let (field, value) = match memchr::memchr(b':', &line) {
            Some(colon) => {
                let value = line.get(colon + 1..).unwrap_or_default();
                let value = value.strip_prefix(b" ").unwrap_or(value);
                (line.get(..colon).unwrap_or_default(), value)
            }
            None => (&line[..], &b""[..]),
        };
        match field {
            b"data" => {
                // The data as dispatched: the lines so far with their LFs, then this value.
                if self.data.len().saturating_add(value.len()) > self.limit {
                    return Err(Error::LineTooLong { limit: self.limit });
                }
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
                self.has_data = true;
            }
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"id" if !value.contains(&0) => {
                self.last_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry = std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.parse::<u64>().ok())
                    .map(Duration::from_millis);
            }
            _ => {} // unknown fields are ignored
        }
        Ok(())
    }

    fn dispatch(&mut self) {
        let event = std::mem::take(&mut self.event);
        if !self.has_data {
            return;
        }
        self.has_data = false;
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // the LF after the last data line
        self.ready.push_back(SseEvent {
            event: if event.is_empty() {
                "message".to_owned()
            } else {
                event
            },
            data,
            id: self.last_id.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_chunks(stream: &[u8], size: usize, limit: usize) -> Result<Vec<SseEvent>, Error> {
        let mut decoder = SseDecoder::new(limit);
        let mut events = Vec::new();
        for chunk in stream.chunks(size.max(1)) {
            decoder.push(chunk)?;
            while let Some(e) = decoder.next_event() {
                events.push(e);
            }
        }
        Ok(events)
    }

    #[test]
    fn decodes_the_same_events_whatever_the_chunking() {
        let stream = b"\xEF\xBB\xBF: keep-alive\r\nid: 1\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n\
            retry: 250\rdata:x\r\rid\nevent:endpoint\ndata: /messages?sessionId=9\n\n";
        let whole = decode_in_chunks(stream, stream.len(), 1024).unwrap();
        assert_eq!(
            whole,
            [
                SseEvent {
                    event: "message".into(),
                    data: b"{\"a\":\n1}".to_vec(),
                    id: Some("1".into())
                },
                SseEvent {
                    event: "message".into(),
                    data: b"x".to_vec(),
                    id: Some("1".into())
                },
                SseEvent {
                    event: "endpoint".into(),
                    data: b"/messages?sessionId=9".to_vec(),
                    id: Some(String::new())
                },
            ]
        );
        for size in 1..stream.len() {
            assert_eq!(
                decode_in_chunks(stream, size, 1024).unwrap(),
                whole,
                "{size}"
            );
        }
    }

    #[test]
    fn keeps_the_retry_time_and_the_last_id() {
        let mut decoder = SseDecoder::new(64);
        decoder.push(b"id: 42\nretry: 1500\ndata:\n\n").unwrap();
        assert_eq!(decoder.last_event_id(), Some("42"));
        assert_eq!(decoder.retry(), Some(Duration::from_millis(1500)));
        // An empty data line is an event with empty data (a priming event).
        assert_eq!(decoder.next_event().unwrap().data, b"");
    }

    #[test]
    fn drops_an_event_without_data_and_a_stream_cut_mid_event() {
        let mut decoder = SseDecoder::new(64);
        decoder.push(b"event: ping\n\ndata: half").unwrap();
        assert!(decoder.next_event().is_none());
        assert!(decoder.is_mid_event());
    }

    #[test]
    fn refuses_a_line_longer_than_the_bound() {
        let mut stream = b": ".to_vec();
        stream.extend(std::iter::repeat_n(b'x', 100));
        let err = decode_in_chunks(&stream, 7, 64).unwrap_err();
        assert!(matches!(err, Error::LineTooLong { limit: 64 }));
    }

    #[test]
    fn refuses_event_data_longer_than_the_bound_across_lines() {
        let line = format!("data: {}\n", "y".repeat(40));
        let stream = line.repeat(3);
        let err = decode_in_chunks(stream.as_bytes(), 5, 64).unwrap_err();
        assert!(matches!(err, Error::LineTooLong { limit: 64 }));
        // Exactly at the bound is accepted.
        let exact = format!("data: {}\n\n", "z".repeat(64));
        let events = decode_in_chunks(exact.as_bytes(), 3, 64).unwrap();
        assert_eq!(events[0].data.len(), 64);
    }
}

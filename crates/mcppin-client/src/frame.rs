//! Newline-delimited JSON-RPC framing over a byte stream (the MCP stdio transport).
//!
//! The MCP stdio transport sends one JSON-RPC message per line, UTF-8, with no embedded
//! newlines. A hostile server can send a line of any length, so [`LineReader`] takes a bound
//! and refuses a longer line as soon as the bound is crossed: it never holds more than the bound
//! plus its fixed read buffer, however long the line on the wire.

use std::io::{self, BufRead, BufReader, Read, Write};

use crate::Error;

/// The default bound on one message: 16 MiB (docs/guard.md, `--max-message`).
pub const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;

/// The size of the read buffer beside the line being assembled.
const READ_BUFFER: usize = 64 * 1024;

/// The largest line buffer [`LineReader::read_line_into`] keeps between lines.
const KEPT_CAPACITY: usize = 1024 * 1024;

/// Reads newline-terminated lines of at most `limit` bytes from a byte stream.
///
/// # Examples
///
/// ```
/// use mcppin_client::LineReader;
///
/// let mut lines = LineReader::new(&b"{\"a\":1}\n{\"b\":2}\n"[..], 64);
/// assert_eq!(lines.read_line()?.as_deref(), Some(&b"{\"a\":1}"[..]));
/// assert_eq!(lines.read_line()?.as_deref(), Some(&b"{\"b\":2}"[..]));
/// assert_eq!(lines.read_line()?, None);
/// # Ok::<(), mcppin_client::Error>(())
/// ```
#[derive(Debug)]
pub struct LineReader<R> {
    inner: BufReader<R>,
    limit: usize,
}

impl<R: Read> LineReader<R> {
    /// A reader of lines of at most `limit` bytes (the newline not counted).
    pub fn new(inner: R, limit: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(READ_BUFFER.min(limit.saturating_add(1)), inner),
            limit,
        }
    }

    /// An empty buffer for [`LineReader::read_line_into`] with room for a line of about
    /// `expected` bytes (at most the bound, and at most what the reader keeps between lines),
    /// its memory already touched: a reader that knows how long a coming line will be (a
    /// guard, from the tool list it approved) pays for that memory before the line arrives.
    ///
    /// ```
    /// let lines = mcppin_client::LineReader::new(&b""[..], 1000);
    /// let buffer = lines.line_buffer(4096);
    /// assert!(buffer.is_empty());
    /// assert!(buffer.capacity() >= 1000);
    /// ```
    #[must_use]
    pub fn line_buffer(&self, expected: usize) -> Vec<u8> {
        let mut buffer = vec![0; expected.min(self.limit).min(KEPT_CAPACITY)];
        buffer.clear();
        buffer
    }

    /// The bound this reader enforces.
    #[must_use]
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Whether a complete line is already buffered, so that the next [`LineReader::read_line`]
    /// returns without waiting on the stream. A proxy flushes what it forwarded when this is
    /// false: it is about to wait, and nothing may sit in its buffers meanwhile.
    ///
    /// ```
    /// let mut lines = mcppin_client::LineReader::new(&b"{}\n{}\n"[..], 64);
    /// lines.read_line()?;
    /// assert!(lines.has_line());
    /// lines.read_line()?;
    /// assert!(!lines.has_line());
    /// # Ok::<(), mcppin_client::Error>(())
    /// ```
    #[must_use]
    pub fn has_line(&self) -> bool {
        memchr::memchr(b'\n', self.inner.buffer()).is_some()
    }

    /// Reads the next line, without its `\n`; `Ok(None)` at the end of the stream.
    ///
    /// A `\r` before the `\n` is kept: it is JSON whitespace, and a proxy forwards the bytes as
    /// they came. Empty lines are returned as empty vectors; skipping them is the caller's
    /// choice.
    ///
    /// # Errors
    ///
    /// [`Error::LineTooLong`] as soon as the line exceeds the bound (the rest of the stream is
    /// then unusable: the reader does not resynchronise on a hostile stream),
    /// [`Error::UnterminatedLine`] when the stream ends inside a line, [`Error::Io`] when
    /// reading fails.
    pub fn read_line(&mut self) -> Result<Option<Vec<u8>>, Error> {
        let mut line = Vec::new();
        Ok(self.read_line_into(&mut line)?.then_some(line))
    }

    /// Reads the next line into `line` (replacing what it held), without its `\n`; `false` at
    /// the end of the stream. A proxy that reads every message into one buffer allocates only
    /// when a longer line than any before arrives; a buffer grown past 1 MiB by one large
    /// message is given back before the next line is read.
    ///
    /// # Errors
    ///
    /// As [`LineReader::read_line`]. On [`Error::UnterminatedLine`], `line` holds the bytes
    /// after the last newline: a proxy that must judge a peer's last words (a client may end
    /// its input without a final newline) reads them there.
    pub fn read_line_into(&mut self, line: &mut Vec<u8>) -> Result<bool, Error> {
        line.clear();
        if line.capacity() > KEPT_CAPACITY {
            line.shrink_to(READ_BUFFER);
        }
        loop {
            let available = match self.inner.fill_buf() {
                Ok(bytes) => bytes,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(Error::Io {
                        doing: "reading from the server",
                        source,
                    });
                }
            };
            if available.is_empty() {
                return if line.is_empty() {
                    Ok(false)
                } else {
                    Err(Error::UnterminatedLine { len: line.len() })
                };
            }
            let (chunk, newline) = match memchr::memchr(b'\n', available) {
                Some(at) => (&available[..at], true),
                None => (available, false),
            };
            if line.len() + chunk.len() > self.limit {
                return Err(Error::LineTooLong { limit: self.limit });
            }
            line.extend_from_slice(chunk);
            let used = chunk.len() + usize::from(newline);
            self.inner.consume(used);
            if newline {
                return Ok(true);
            }
        }
    }
}

/// Writes `message` followed by `\n` and flushes.
///
/// # Errors
///
/// [`Error::EmbeddedNewline`] when `message` contains a newline (it would become two
/// messages; nothing is written then), [`Error::Io`] when writing fails.
///
/// # Examples
///
/// ```
/// let mut out = Vec::new();
/// mcppin_client::write_line(&mut out, br#"{"jsonrpc":"2.0","method":"ping","id":1}"#)?;
/// assert!(out.ends_with(b"}\n"));
/// assert!(mcppin_client::write_line(&mut out, b"{\n}").is_err());
/// # Ok::<(), mcppin_client::Error>(())
/// ```
pub fn write_line<W: Write + ?Sized>(out: &mut W, message: &[u8]) -> Result<(), Error> {
    if let Some(offset) = message.iter().position(|&b| b == b'\n') {
        return Err(Error::EmbeddedNewline { offset });
    }
    let io = |source| Error::Io {
        doing: "writing to the server",
        source,
    };
    out.write_all(message).map_err(io)?;
    out.write_all(b"\n").map_err(io)?;
    out.flush().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_buffer_is_sized_within_the_bound_and_what_is_kept() {
        let small = LineReader::new(&b""[..], 100);
        assert_eq!(small.line_buffer(5000).capacity(), 100);
        let large = LineReader::new(&b""[..], DEFAULT_MAX_LINE);
        assert_eq!(large.line_buffer(5000).capacity(), 5000);
        let buffer = large.line_buffer(DEFAULT_MAX_LINE);
        assert_eq!(
            buffer.capacity(),
            KEPT_CAPACITY,
            "the reader would shrink a larger one"
        );
        // Reading a line into it keeps its room.
        let mut lines = LineReader::new(&b"{}\n"[..], DEFAULT_MAX_LINE);
        let mut line = lines.line_buffer(4096);
        assert!(lines.read_line_into(&mut line).expect("read"));
        assert_eq!((line.as_slice(), line.capacity()), (&b"{}"[..], 4096));
    }

    /// A reader that yields an endless line and counts how much was read from it.
    struct Endless {
        served: usize,
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            buf.fill(b'x');
            self.served += buf.len();
            Ok(buf.len())
        }
    }

    #[test]
    fn reads_lines_and_ends_cleanly() {
        let mut lines = LineReader::new(&b"one\r\n\ntwo\n"[..], 16);
        assert_eq!(lines.read_line().unwrap(), Some(b"one\r".to_vec()));
        assert_eq!(lines.read_line().unwrap(), Some(Vec::new()));
        assert_eq!(lines.read_line().unwrap(), Some(b"two".to_vec()));
        assert_eq!(lines.read_line().unwrap(), None);
    }

    #[test]
    fn accepts_a_line_exactly_at_the_bound() {
        let mut lines = LineReader::new(&b"12345\n"[..], 5);
        assert_eq!(lines.read_line().unwrap(), Some(b"12345".to_vec()));
    }

    #[test]
    fn refuses_a_line_one_byte_over_the_bound() {
        let mut lines = LineReader::new(&b"123456\n"[..], 5);
        assert!(matches!(
            lines.read_line(),
            Err(Error::LineTooLong { limit: 5 })
        ));
    }

    #[test]
    fn stops_reading_an_endless_line_at_the_bound() {
        let mut endless = Endless { served: 0 };
        let limit = 1 << 20;
        let result = LineReader::new(&mut endless, limit).read_line();
        assert!(matches!(result, Err(Error::LineTooLong { .. })));
        // At most the bound plus one read buffer was pulled from the stream.
        assert!(endless.served <= limit + READ_BUFFER, "{}", endless.served);
    }

    #[test]
    fn refuses_a_stream_that_ends_inside_a_line() {
        let mut lines = LineReader::new(&b"{\"a\":1}\n{\"b\""[..], 64);
        assert!(lines.read_line().unwrap().is_some());
        assert!(matches!(
            lines.read_line(),
            Err(Error::UnterminatedLine { len: 4 })
        ));
    }

    #[test]
    fn an_unterminated_last_line_is_left_in_the_buffer() {
        let mut lines = LineReader::new(&b"{\"a\":1}\n{\"b\":2}"[..], 64);
        let mut line = Vec::new();
        assert!(lines.read_line_into(&mut line).unwrap());
        assert!(matches!(
            lines.read_line_into(&mut line),
            Err(Error::UnterminatedLine { len: 7 })
        ));
        assert_eq!(line, b"{\"b\":2}");
    }

    #[test]
    fn reads_into_one_buffer_and_gives_back_a_large_one() {
        let big = vec![b'x'; 2 * KEPT_CAPACITY];
        let mut input = b"{\"a\":1}\n".to_vec();
        input.extend_from_slice(&big);
        input.extend_from_slice(b"\n{}\n");
        let mut lines = LineReader::new(&input[..], 4 * KEPT_CAPACITY);
        let mut line = b"left over".to_vec();
        assert!(lines.read_line_into(&mut line).unwrap());
        assert_eq!(line, b"{\"a\":1}");
        assert!(lines.read_line_into(&mut line).unwrap());
        assert_eq!(line, big);
        assert!(lines.read_line_into(&mut line).unwrap());
        assert_eq!(line, b"{}");
        assert!(line.capacity() <= KEPT_CAPACITY);
        assert!(!lines.read_line_into(&mut line).unwrap());
        assert!(line.is_empty());
    }

    #[test]
    fn writes_one_line_per_message() {
        let mut out = Vec::new();
        write_line(&mut out, b"{}").unwrap();
        write_line(&mut out, b"[]").unwrap();
        assert_eq!(out, b"{}\n[]\n");
    }

    #[test]
    fn refuses_to_write_a_message_with_a_newline() {
        let mut out = Vec::new();
        assert!(matches!(
            write_line(&mut out, b"{\"a\":\n1}"),
            Err(Error::EmbeddedNewline { offset: 5 })
        ));
        assert!(out.is_empty());
    }
}

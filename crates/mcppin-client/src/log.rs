//! A server's stderr as log lines, each bounded, for a caller that passes them on as they come.
//!
//! A server's stderr is its log: clients show it to the user. A hostile or broken server can
//! write a line of any length without a newline, so [`LogLines`] holds at most `max_line` bytes
//! of a line: the rest, up to the next newline, is read and dropped, and the line is marked
//! [`LogLine::cut`]. Memory stays bounded however long the line on the wire.

use std::io::{self, BufRead, BufReader, Read};

/// The default bound on one log line: 16 KiB.
pub const DEFAULT_MAX_LOG_LINE: usize = 16 * 1024;

/// One line of a log stream, without its newline (and without a carriage return before it).
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct LogLine {
    /// The bytes of the line as written, at most the bound (possibly not UTF-8).
    pub bytes: Vec<u8>,
    /// Whether the line was longer than the bound: `bytes` holds its start, the rest was
    /// dropped.
    pub cut: bool,
}

impl LogLine {
    /// The line escaped for a terminal with [`mcppin_core::escape`] (invalid UTF-8 becomes
    /// U+FFFD first).
    ///
    /// # Examples
    ///
    /// ```
    /// use mcppin_client::LogLine;
    ///
    /// let line = LogLine { bytes: b"\x1b[31mred <U+0041>".to_vec(), cut: false };
    /// assert_eq!(line.escaped(), "<U+001B>[31mred <U+003C>U+0041>");
    /// ```
    #[must_use]
    pub fn escaped(&self) -> String {
        mcppin_core::escape(&String::from_utf8_lossy(&self.bytes)).into_owned()
    }
}

/// Reads a byte stream as log lines of at most `max_line` bytes each.
///
/// A line over the bound is returned as soon as the bound is crossed, marked cut; what
/// follows up to its newline is dropped as it is read. A cut falls before a UTF-8 sequence
/// that the bound would split. The last line is returned even without a newline.
///
/// # Examples
///
/// ```
/// use mcppin_client::{LogLine, LogLines};
///
/// let mut lines = LogLines::new(&b"ok\r\n0123456789\nlast"[..], 4);
/// assert_eq!(lines.next_line()?, Some(LogLine { bytes: b"ok".to_vec(), cut: false }));
/// assert_eq!(lines.next_line()?, Some(LogLine { bytes: b"0123".to_vec(), cut: true }));
/// assert_eq!(lines.next_line()?, Some(LogLine { bytes: b"last".to_vec(), cut: false }));
/// assert_eq!(lines.next_line()?, None);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct LogLines<R> {
    inner: BufReader<R>,
    max_line: usize,
    line: Vec<u8>,
    /// The rest of a cut line is being dropped, up to its newline.
    dropping: bool,
}

impl<R: Read> LogLines<R> {
    /// Reads `reader` as lines of at most `max_line` bytes (at least 1).
    pub fn new(reader: R, max_line: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(8 * 1024, reader),
            max_line: max_line.max(1),
            line: Vec::new(),
            dropping: false,
        }
    }

    /// The next line, or `None` at the end of the stream.
    ///
    /// # Errors
    ///
    /// A read error of the stream (interrupted reads are retried).
    pub fn next_line(&mut self) -> io::Result<Option<LogLine>> {
        loop {
            let available = match self.inner.fill_buf() {
                Ok(available) => available,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            if available.is_empty() {
                self.dropping = false;
                if self.line.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(self.take(false)));
            }
            let newline = memchr::memchr(b'\n', available);
            let end = newline.unwrap_or(available.len());
            let used = newline.map_or(end, |i| i + 1);
            if self.dropping {
                self.inner.consume(used);
                self.dropping = newline.is_none();
                continue;
            }
            let room = self.max_line - self.line.len();
            if end <= room {
                self.line.extend_from_slice(&available[..end]);
                self.inner.consume(used);
                if newline.is_some() {
                    if self.line.last() == Some(&b'\r') {
                        self.line.pop();
                    }
                    return Ok(Some(self.take(false)));
                }
                continue;
            }
            self.line.extend_from_slice(&available[..room]);
            self.inner.consume(used);
            self.dropping = newline.is_none();
            return Ok(Some(self.take(true)));
        }
    }

    fn take(&mut self, cut: bool) -> LogLine {
        let mut bytes = std::mem::take(&mut self.line);
        if cut {
            // A sequence the bound split would show as U+FFFD: cut before it instead.
            if let Err(err) = std::str::from_utf8(&bytes)
                && err.error_len().is_none()
            {
                bytes.truncate(err.valid_up_to());
            }
        }
        LogLine { bytes, cut }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], max_line: usize) -> Vec<(String, bool)> {
        let mut lines = LogLines::new(input, max_line);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            out.push((String::from_utf8_lossy(&line.bytes).into_owned(), line.cut));
        }
        out
    }

    #[test]
    fn splits_lines_and_keeps_a_last_line_without_newline() {
        assert_eq!(
            all(b"a\nbc\r\n\nd", 8),
            [
                ("a".to_owned(), false),
                ("bc".to_owned(), false),
                (String::new(), false),
                ("d".to_owned(), false)
            ]
        );
        assert_eq!(all(b"", 8), []);
    }

    #[test]
    fn cuts_a_line_over_the_bound_and_drops_its_rest() {
        assert_eq!(
            all(b"12345678\n123456789\nnext\n", 8),
            [
                ("12345678".to_owned(), false),
                ("12345678".to_owned(), true),
                ("next".to_owned(), false)
            ]
        );
    }

    #[test]
    fn a_line_that_never_ends_holds_at_most_the_bound() {
        // 64 MiB without a newline, read through the 8 KiB buffer: one cut line, then the end.
        let endless = io::repeat(b'x').take(64 * 1024 * 1024);
        let mut lines = LogLines::new(endless, 100);
        let first = lines.next_line().unwrap().unwrap();
        assert_eq!((first.bytes.len(), first.cut), (100, true));
        assert!(lines.line.capacity() <= 8 * 1024);
        assert_eq!(lines.next_line().unwrap(), None);
    }

    #[test]
    fn a_cut_does_not_split_a_character() {
        // "aé" is 61 C3 A9: a bound of 2 would keep half of the é.
        let mut lines = LogLines::new("aé and more\n".as_bytes(), 2);
        let line = lines.next_line().unwrap().unwrap();
        assert_eq!((line.bytes, line.cut), (b"a".to_vec(), true));
        assert_eq!(lines.next_line().unwrap(), None);
    }

    #[test]
    fn escapes_what_reaches_a_terminal() {
        let line = LogLine {
            bytes: b"\x1b]0;owned\x07 \xff <U+".to_vec(),
            cut: false,
        };
        assert_eq!(
            line.escaped(),
            "<U+001B>]0;owned<U+0007> <U+FFFD> <U+003C>U+"
        );
    }
}

//! Rendering untrusted text for a terminal (docs/cli.md).

use std::borrow::Cow;
use std::fmt;

/// Renders `text` so that nothing outside printable ASCII reaches a terminal as itself: every
/// other code point (controls, DEL, and everything from U+0080 up) is written `<U+XXXX>`, at
/// least four hex digits, uppercase. A terminal escape, a bidi override or a zero-width
/// character can then neither act nor hide.
///
/// The notation escapes itself: a `<` that starts the text `<U+` is written `<U+003C>`, so
/// every `<U+` of the output begins an escape. The output can therefore be read back into the
/// text it came from, and two different texts never print the same (a description holding
/// the literal text `<U+200B>` prints `<U+003C>U+200B>`, one holding U+200B prints
/// `<U+200B>`). Any other `<` is left as it is.
///
/// # Security
///
/// Use it for every string that came from a server or a file before it reaches stdout,
/// stderr or a report meant for a person.
///
/// # Examples
///
/// ```
/// use mcppin_core::escape;
/// assert_eq!(escape("read_file"), "read_file");
/// assert_eq!(escape("a\u{1b}[2Kb\u{202E}\u{200B}"), "a<U+001B>[2Kb<U+202E><U+200B>");
/// assert_eq!(escape("<U+200B> <b>"), "<U+003C>U+200B> <b>");
/// ```
#[must_use]
pub fn escape(text: &str) -> Cow<'_, str> {
    if text.bytes().all(|b| (0x20..0x7F).contains(&b)) && !text.contains(NOTATION) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (at, c) in text.char_indices() {
        if (' '..='~').contains(&c) && !(c == '<' && text[at..].starts_with(NOTATION)) {
            out.push(c);
        } else {
            out.push_str(&format!("<U+{:04X}>", u32::from(c)));
        }
    }
    Cow::Owned(out)
}

/// What every escape starts with.
const NOTATION: &str = "<U+";

/// Reads text written by [`escape`] back into the text it came from: each `<U+XXXX>` (uppercase
/// hex, four digits or as many as the code point needs) is that code point, anything else
/// stands for itself. `None` when a `<U+` does not begin such an escape.
///
/// ```
/// use mcppin_core::{escape, unescape};
/// let text = "a<U+200B>\u{200B}\u{1b}";
/// assert_eq!(unescape(&escape(text)).as_deref(), Some(text));
/// assert_eq!(unescape("<U+12"), None);
/// ```
#[must_use]
pub fn unescape(printed: &str) -> Option<String> {
    let mut out = String::with_capacity(printed.len());
    let mut rest = printed;
    while let Some(at) = rest.find(NOTATION) {
        out.push_str(&rest[..at]);
        let after = &rest[at + NOTATION.len()..];
        let end = after.find('>')?;
        let hex = &after[..end];
        let c = u32::from_str_radix(hex, 16)
            .ok()
            .and_then(char::from_u32)
            .filter(|&c| format!("{:04X}", u32::from(c)) == hex)?;
        out.push(c);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// The last pass before a terminal, for a message composed of parts that each went through
/// [`escape`] where they came from a server or a file: writes `<U+XXXX>` for every code point
/// outside printable ASCII and leaves everything else, `<U+` included, as it is. Text that
/// [`escape`] wrote passes unchanged, so no part is escaped twice.
///
/// # Security
///
/// It keeps a terminal safe from any text, but it is not a substitute for [`escape`] on a
/// string a server chose: only [`escape`] makes the notation unambiguous.
///
/// ```
/// use mcppin_core::{escape, escape_non_ascii};
/// let message = format!("tool \"{}\" in {}", escape("a<U+200B>"), "caf\u{e9}.json");
/// assert_eq!(escape_non_ascii(&message), "tool \"a<U+003C>U+200B>\" in caf<U+00E9>.json");
/// ```
#[must_use]
pub fn escape_non_ascii(text: &str) -> Cow<'_, str> {
    if text.bytes().all(|b| (0x20..0x7F).contains(&b)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if (' '..='~').contains(&c) {
            out.push(c);
        } else {
            out.push_str(&format!("<U+{:04X}>", u32::from(c)));
        }
    }
    Cow::Owned(out)
}

/// A [`Display`](fmt::Display) wrapper that writes its text through [`escape`].
#[derive(Clone, Copy, Debug)]
pub struct Escaped<'a>(pub &'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&escape(self.0))
    }
}

/// `text` as one word for a POSIX shell, for a command a person may paste: as it is when it
/// holds only characters no shell treats specially there (`~` and `=` only past the start,
/// where they would expand or assign), else in single quotes (a `'` inside written `'\''`).
///
/// Quoting is not escaping for a terminal: give it text already passed through [`escape`] or
/// [`escape_non_ascii`] when it came from a server.
///
/// # Examples
///
/// ```
/// use mcppin_core::shell_word;
///
/// assert_eq!(shell_word("/home/me/.cursor/mcp.json"), "/home/me/.cursor/mcp.json");
/// assert_eq!(shell_word("docs/search~1x"), "docs/search~1x");
/// assert_eq!(shell_word("~/mcp.json"), "'~/mcp.json'");
/// assert_eq!(shell_word("/tmp/it's"), r"'/tmp/it'\''s'");
/// ```
#[must_use]
pub fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && !text.starts_with(['~', '='])
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./@%+,:-~=".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_everything_outside_printable_ascii() {
        assert_eq!(escape("tab\there"), "tab<U+0009>here");
        assert_eq!(escape("\u{7F}\u{80}é"), "<U+007F><U+0080><U+00E9>");
        assert_eq!(escape("\u{E0041}"), "<U+E0041>");
        assert_eq!(escape("\n"), "<U+000A>");
    }

    #[test]
    fn escapes_the_start_of_the_notation_itself() {
        assert_eq!(escape("<U+200B>"), "<U+003C>U+200B>");
        assert_eq!(escape("<<U+"), "<<U+003C>U+");
        assert_eq!(escape("<\u{200B}"), "<<U+200B>");
    }

    #[test]
    fn the_last_pass_leaves_escaped_text_as_it_is() {
        for text in ["a<U+200B>\u{1b}", "<U+200B>", "plain", "\u{202E}<U+"] {
            let once = escape(text);
            assert_eq!(escape_non_ascii(&once), once, "{text}");
        }
        assert_eq!(escape_non_ascii("\u{1b}[2J<U+1>"), "<U+001B>[2J<U+1>");
    }

    #[test]
    fn unescape_refuses_what_escape_never_writes() {
        for bad in [
            "<U+",
            "<U+>",
            "<U+200b>",
            "<U+0200B>",
            "<U+41>",
            "<U+D800>",
            "<U+110000>",
        ] {
            assert_eq!(unescape(bad), None, "{bad}");
        }
        assert_eq!(unescape("<U+0041><u+0041>").as_deref(), Some("A<u+0041>"));
    }

    #[test]
    fn leaves_printable_ascii_alone() {
        let all: String = (' '..='~').collect();
        assert!(matches!(escape(&all), Cow::Borrowed(_)));
        assert!(matches!(escape("a < b <u+1> <U"), Cow::Borrowed(_)));
    }
}

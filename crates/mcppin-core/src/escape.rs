//! Rendering untrusted text for a terminal (SPEC 4.3).

use std::borrow::Cow;
use std::fmt;

/// Renders `text` so that nothing outside printable ASCII reaches a terminal as itself: every
/// other code point (controls, DEL, and everything from U+0080 up) is written `<U+XXXX>`, at
/// least four hex digits, uppercase. A terminal escape, a bidi override or a zero-width
/// character can then neither act nor hide.
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
/// ```
#[must_use]
pub fn escape(text: &str) -> Cow<'_, str> {
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
    fn leaves_printable_ascii_alone() {
        let all: String = (' '..='~').collect();
        assert!(matches!(escape(&all), Cow::Borrowed(_)));
    }
}

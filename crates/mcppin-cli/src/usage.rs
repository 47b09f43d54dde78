//! A command line clap refused, shown without what the command line could do to a terminal.
//!
//! clap quotes the words it refuses (`unexpected argument '…' found`, `invalid value '…' for
//! '--format <FORMAT>'`), and a word can be a file name from a checked-out repository that a
//! shell glob put there, holding a terminal's control sequence or a right-to-left override.
//! Printed as clap prints it, such a word reaches a terminal raw; piped, clap drops what looks
//! like a styling sequence and leaves the rest (a carriage return, U+202E) as it was. Here the
//! refusal is rendered without styling, and every character of it outside printable ASCII is
//! shown in the `<U+XXXX>` notation (`mcppin_core::escape_non_ascii`), a line break inside a
//! quoted word included. Help and version, which quote nothing of the command line, are left
//! to clap.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::CommandFactory;
use clap::builder::styling::Styles;
use clap::error::{ContextKind, ContextValue, Error};
use mcppin_core::escape_non_ascii;

/// The text of `err`, clap's refusal of `argv` for `T` (from [`clap::Parser::try_parse_from`]),
/// for stderr: clap's message and usage, without styling, every character outside printable
/// ASCII in the `<U+XXXX>` notation, lines as clap broke them.
#[must_use]
pub fn refusal<T: CommandFactory>(err: &Error, argv: &[OsString]) -> String {
    // The same command line read again by the command without styling gives the same refusal
    // with nothing of clap's own between the words; one that reads (the refusal came from
    // turning what was read into `T`) keeps the first, whose styling `to_string` drops.
    let plain = T::command()
        .styles(Styles::plain())
        .try_get_matches_from(argv)
        .err()
        .filter(|plain| plain.kind() == err.kind());
    let Some(mut plain) = plain else {
        return lines(&err.to_string());
    };
    // Each quoted word in the notation before clap lays the lines out, so that a line break
    // inside one is no line of clap's (the usage is the command's own, its lines clap's).
    let escaped: Vec<_> = plain
        .context()
        .filter(|(kind, _)| *kind != ContextKind::Usage)
        .filter_map(|(kind, value)| Some((kind, escaped(value)?)))
        .collect();
    for (kind, value) in escaped {
        plain.insert(kind, value);
    }
    lines(&plain.render().ansi().to_string())
}

/// Ends the run on `err`, clap's answer to `argv` for `T`: help and version printed as clap
/// prints them (exit 0), a refusal on stderr as [`refusal`] shows it (exit 2, the usage
/// error of every binary, docs/cli.md).
pub fn end<T: CommandFactory>(err: &Error, argv: &[OsString]) -> ExitCode {
    if !err.use_stderr() {
        let _ = err.print();
        return ExitCode::SUCCESS;
    }
    let _ = std::io::stderr()
        .lock()
        .write_all(refusal::<T>(err, argv).as_bytes());
    // clap's code for a refusal, 2, is every binary's usage error.
    ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2))
}

/// `value` with its text in the notation, when any of it is outside printable ASCII.
fn escaped(value: &ContextValue) -> Option<ContextValue> {
    let printable = |text: &str| text.bytes().all(|b| (0x20..0x7F).contains(&b));
    match value {
        ContextValue::String(text) if !printable(text) => {
            Some(ContextValue::String(escape_non_ascii(text).into_owned()))
        }
        ContextValue::Strings(texts) if !texts.iter().all(|text| printable(text)) => {
            Some(ContextValue::Strings(
                texts
                    .iter()
                    .map(|t| escape_non_ascii(t).into_owned())
                    .collect(),
            ))
        }
        // A suggestion quoting the word (`tip: to pass '…' as a value, use '-- …'`), made by
        // the command without styling: what looks like styling in it is the word's.
        ContextValue::StyledStr(text) => {
            let text = text.ansi().to_string();
            (!printable(&text))
                .then(|| ContextValue::StyledStr(escape_non_ascii(&text).into_owned().into()))
        }
        ContextValue::StyledStrs(texts) => {
            let texts: Vec<String> = texts.iter().map(|t| t.ansi().to_string()).collect();
            (!texts.iter().all(|text| printable(text))).then(|| {
                ContextValue::StyledStrs(
                    texts
                        .iter()
                        .map(|t| escape_non_ascii(t).into_owned().into())
                        .collect(),
                )
            })
        }
        _ => None,
    }
}

/// `text` line by line, each in the notation.
fn lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        out.push_str(&escape_non_ascii(body));
        out.push_str(end);
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    #[command(name = "tool")]
    struct Cli {
        #[arg(long, value_parser = ["text", "json"])]
        format: Option<String>,
        #[arg(long)]
        count: Option<u32>,
        file: Option<std::path::PathBuf>,
    }

    fn argv(words: &[&str]) -> Vec<OsString> {
        std::iter::once("tool")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    }

    fn shown(words: &[&str]) -> String {
        let argv = argv(words);
        let err = Cli::try_parse_from(&argv).unwrap_err();
        assert!(err.use_stderr(), "{err}");
        refusal::<Cli>(&err, &argv)
    }

    #[test]
    fn a_refused_word_is_shown_in_the_notation() {
        let hostile = "x\u{1b}]0;pwn\u{7}\r\u{202e}\nerror: forged.json";
        let flag = format!("--{hostile}");
        for words in [
            &["a", hostile][..],
            &["--format", hostile],
            &["--count", hostile],
            &[&flag],
        ] {
            let text = shown(words);
            assert!(
                text.bytes()
                    .all(|b| b == b'\n' || (0x20..0x7F).contains(&b)),
                "{text:?}"
            );
            assert!(
                text.contains("x<U+001B>]0;pwn<U+0007><U+000D><U+202E><U+000A>error: forged.json"),
                "{words:?}: {text}"
            );
            assert!(
                !text.lines().any(|l| l.starts_with("error: forged")),
                "{text}"
            );
            assert!(text.starts_with("error: "), "{text}");
        }
    }

    #[test]
    fn a_refusal_of_printable_words_is_clap_s_text() {
        let argv = argv(&["--format", "xml"]);
        let err = Cli::try_parse_from(&argv).unwrap_err();
        let text = refusal::<Cli>(&err, &argv);
        assert_eq!(text, err.to_string());
        assert!(
            text.starts_with("error: invalid value 'xml' for '--format <FORMAT>'\n"),
            "{text}"
        );
        assert!(text.contains("[possible values: text, json]"), "{text}");
    }
}

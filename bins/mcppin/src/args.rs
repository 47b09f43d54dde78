//! Command-line spelling: the single-dash form of every long flag (`-lock`) is accepted too,
//! so command lines written for the reference Go tool keep working (docs/cli.md).

use std::collections::BTreeSet;
use std::ffi::OsString;

use clap::Command;

/// Rewrites `-name` and `-name=value` to `--name...` when `name` is a long flag of `command`
/// or any of its subcommands. Nothing after `--` is touched.
pub(crate) fn normalise(
    argv: impl IntoIterator<Item = OsString>,
    command: &Command,
) -> Vec<OsString> {
    let mut longs = BTreeSet::new();
    collect_longs(command, &mut longs);
    let mut out = Vec::new();
    let mut rest = false;
    for arg in argv {
        if rest {
            out.push(arg);
            continue;
        }
        if arg == "--" {
            rest = true;
            out.push(arg);
            continue;
        }
        let rewritten = arg.to_str().and_then(|s| {
            let body = s.strip_prefix('-').filter(|b| !b.starts_with('-'))?;
            let name = body.split_once('=').map_or(body, |(n, _)| n);
            (name.len() > 1 && longs.contains(name)).then(|| OsString::from(format!("-{s}")))
        });
        out.push(rewritten.unwrap_or(arg));
    }
    out
}

fn collect_longs(command: &Command, longs: &mut BTreeSet<String>) {
    for arg in command.get_arguments() {
        if let Some(long) = arg.get_long() {
            longs.insert(long.to_owned());
        }
    }
    for sub in command.get_subcommands() {
        collect_longs(sub, longs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_dash_long_flags_become_double_dash() {
        let cmd = Command::new("t")
            .arg(clap::Arg::new("lock").long("lock"))
            .arg(clap::Arg::new("out").short('o'));
        let argv = [
            "t", "-lock", "x", "-lock=y", "-o", "z", "-unknown", "--", "-lock",
        ]
        .map(OsString::from);
        let got = normalise(argv, &cmd);
        let want = [
            "t", "--lock", "x", "--lock=y", "-o", "z", "-unknown", "--", "-lock",
        ]
        .map(OsString::from);
        assert_eq!(got, want);
    }
}

//! The passphrase of an encrypted private key: from `MCPPIN_KEY_PASSPHRASE`, else asked on the
//! terminal without echo. Never from a flag: a flag stays in the shell history and shows in
//! the process list.

use std::io::IsTerminal;

use zeroize::Zeroizing;

use crate::exit::{Exit, Fail};

/// The environment variable holding the passphrase.
pub(crate) const VARIABLE: &str = "MCPPIN_KEY_PASSPHRASE";

/// Whether the passphrase is asked once (to read a key) or twice (to encrypt one, so that a
/// typing mistake does not lock the key away).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub(crate) enum Ask {
    Once,
    Twice,
}

/// Where a passphrase came from, for messages.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub(crate) enum Source {
    Environment,
    Terminal,
}

/// The passphrase from [`VARIABLE`], or asked on the terminal when standard input is one;
/// `None` when neither is there. `prompt` is what the terminal shows.
///
/// # Errors
///
/// A [`Fail`] with exit 2 when the two answers of [`Ask::Twice`] differ; the terminal's
/// own error when it cannot be read.
pub(crate) fn get(prompt: &str, ask: Ask) -> anyhow::Result<Option<(Zeroizing<String>, Source)>> {
    if let Some(value) = std::env::var_os(VARIABLE) {
        let value = value.into_string().map_err(|_| {
            Fail::new(
                Exit::Usage,
                format!("{VARIABLE} is not UTF-8; set it to the passphrase as text"),
            )
        })?;
        return Ok(Some((Zeroizing::new(value), Source::Environment)));
    }
    if !std::io::stdin().is_terminal() {
        return Ok(None);
    }
    let first = Zeroizing::new(rpassword::prompt_password(prompt)?);
    if ask == Ask::Twice {
        let second = Zeroizing::new(rpassword::prompt_password("the same passphrase again: ")?);
        if first != second {
            return Err(
                Fail::new(Exit::Usage, "the two passphrases differ; nothing written").into(),
            );
        }
    }
    Ok(Some((first, Source::Terminal)))
}

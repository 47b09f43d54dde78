//! `mcppin key`: make a signing key pair.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use mcppin_sign::SigningKey;
use zeroize::Zeroizing;

use crate::exit::{Exit, Fail};
use crate::output;
use crate::passphrase::{self, Ask};

/// Make an Ed25519 signing key: FILE (PKCS#8 PEM, mode 0600) and FILE.pub (SPKI PEM).
///
/// Neither file is overwritten without --force. Keep FILE with the approver (or in the CI
/// secret store of the signing job); commit FILE.pub where `mcppin verify --pubkey` reads it.
///
/// With --encrypt, FILE is encrypted PKCS#8 (scrypt and AES-256-CBC), which `mcppin sign` and
/// `openssl pkey` read with the passphrase. The passphrase comes from the environment
/// variable MCPPIN_KEY_PASSPHRASE or, when standard input is a terminal, is asked there twice
/// without echo. There is no flag for it: a flag would stay in the shell history.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Where to write the private key; the public key goes to the same name plus `.pub`.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
    /// Replace existing files.
    #[arg(long)]
    force: bool,
    /// Encrypt the private key with a passphrase (from MCPPIN_KEY_PASSPHRASE or the
    /// terminal, never from a flag).
    #[arg(long)]
    encrypt: bool,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<Exit> {
    let public_path = pub_path(&args.output);
    output::check_absent(&args.output, args.force)?;
    output::check_absent(&public_path, args.force)?;
    let passphrase = if args.encrypt {
        Some(encryption_passphrase()?)
    } else {
        None
    };

    let key = SigningKey::generate(&mut rand_core::OsRng);
    let secret = match &passphrase {
        None => key.to_pem(),
        Some(passphrase) => key.to_encrypted_pem(&mut rand_core::OsRng, passphrase.as_bytes()),
    }
    .context("cannot encode the private key")?;
    let public = key.public_key();
    output::write_secret(&args.output, secret.as_bytes(), args.force)?;
    if let Err(err) = write_public(&public_path, &public.to_pem(), args.force) {
        // Without its public half the private key is of no use: leave nothing half made.
        if !args.force {
            let _ = std::fs::remove_file(&args.output);
        }
        return Err(err);
    }

    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "wrote {} (private key, {}mode 0600) and {} (public key)\nfingerprint {}",
        crate::input::name(&args.output),
        if args.encrypt { "encrypted, " } else { "" },
        crate::input::name(&public_path),
        public.fingerprint()
    )?;
    stdout.flush()?;
    Ok(Exit::Holds)
}

/// The passphrase to encrypt a new key with: from the environment, else asked twice on the
/// terminal; exit 2 when there is none or it is empty.
fn encryption_passphrase() -> anyhow::Result<Zeroizing<String>> {
    let got = passphrase::get("passphrase for the new key: ", Ask::Twice)?;
    let Some((passphrase, _)) = got else {
        return Err(Fail::new(
            Exit::Usage,
            format!(
                "--encrypt needs a passphrase: set {} or run mcppin key from a terminal \
                 to be asked for it; nothing written",
                passphrase::VARIABLE
            ),
        )
        .into());
    };
    if passphrase.is_empty() {
        return Err(Fail::new(
            Exit::Usage,
            "the passphrase is empty: an empty passphrase protects nothing; nothing written",
        )
        .into());
    }
    Ok(passphrase)
}

fn write_public(path: &Path, pem: &str, force: bool) -> anyhow::Result<()> {
    if force {
        return output::write_atomic(path, pem.as_bytes());
    }
    output::create_new(path, pem.as_bytes(), 0o666)
}

/// `FILE.pub` beside `FILE`.
pub(crate) fn pub_path(private: &Path) -> PathBuf {
    let mut name = OsString::from(private.as_os_str());
    name.push(".pub");
    PathBuf::from(name)
}

//! `mcppin sign`: sign a lockfile.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context;
use mcppin_sign::{SigningKey, Timestamp};
use zeroize::Zeroizing;

use crate::exit::{Exit, Fail};
use crate::passphrase::{self, Ask, Source};
use crate::{input, output};

/// Sign a lockfile: writes LOCK.sig, the detached Ed25519 signature envelope.
///
/// The signature names the digest of the lockfile's canonical form (re-indenting keeps it
/// valid; any change inside breaks it), the key's fingerprint and the time. A lockfile holding
/// a number with no canonical form (above 2^53, or overflowing float64) is signed as written.
/// Exits 4 when the lockfile or the key cannot be read (a lockfile that fails its own check
/// included).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The lockfile to sign.
    #[arg(long, value_name = "LOCK")]
    lock: PathBuf,
    /// The private key (PKCS#8 PEM, from `mcppin key` or `openssl genpkey -algorithm
    /// ed25519`), plain or encrypted. The passphrase of an encrypted key comes from
    /// MCPPIN_KEY_PASSPHRASE or, when standard input is a terminal, is asked there; never
    /// from a flag (it would stay in the shell history).
    #[arg(long, value_name = "KEY")]
    key: PathBuf,
    /// Fix the clock (RFC 3339 UTC, for tests).
    #[arg(long, hide = true, value_name = "RFC3339")]
    now: Option<Timestamp>,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<Exit> {
    let lock = input::read(&args.lock)?;
    let lock_digest = mcppin_sign::lock_digest(&lock).map_err(|e| lock_error(&args.lock, e))?;
    let key = read_key(&args.key)?;
    let now = match args.now {
        Some(now) => now,
        None => Timestamp::try_from(SystemTime::now()).context("the system clock")?,
    };
    let envelope = key.sign(lock_digest, now);
    let sig_path = sig_path(&args.lock);
    output::write_atomic(&sig_path, &envelope.to_bytes())?;

    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "signed {} ({lock_digest}) with key {} at {now}\nwrote {}",
        input::name(&args.lock),
        envelope.public_key_fingerprint(),
        input::name(&sig_path)
    )?;
    stdout.flush()?;
    Ok(Exit::Holds)
}

/// The most bytes a private key file may hold: an Ed25519 key in PEM is under 400 bytes, an
/// encrypted one under 500; 64 KiB leaves room for comments and text around it.
const MAX_KEY_BYTES: usize = 64 << 10;

/// Reads a private key, plain or encrypted (asking for the passphrase); warns when others
/// may read it. At most [`MAX_KEY_BYTES`] are read: a key file that is a link to
/// `/dev/zero` does not grow memory.
fn read_key(path: &Path) -> anyhow::Result<SigningKey> {
    let name = input::name(path);
    // Allocated once at its most: no reallocation leaves a copy of the key behind unwiped.
    let mut bytes = Zeroizing::new(Vec::with_capacity(MAX_KEY_BYTES + 1));
    mcppin_cli::open_to_read(path)
        .and_then(|file| file.take(MAX_KEY_BYTES as u64 + 1).read_to_end(&mut bytes))
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() > MAX_KEY_BYTES {
        return Err(Fail::new(
            Exit::Unreadable,
            format!("{name}: larger than {MAX_KEY_BYTES} bytes: no private key file is"),
        )
        .into());
    }
    let pem = std::str::from_utf8(&bytes).map_err(|_| {
        anyhow::anyhow!("{name}: not PEM text (a DER key? openssl pkey -outform PEM converts it)")
    })?;
    let key = if SigningKey::is_encrypted_pem(pem) {
        read_encrypted(path, pem)?
    } else {
        SigningKey::from_pem(pem).map_err(|e| key_error(path, e, None))?
    };
    if let Ok(meta) = std::fs::metadata(path) {
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(
                stderr,
                "mcppin: warning: {} can be read by others (mode {mode:04o}); chmod 600 it",
                mcppin_core::escape(&path.display().to_string())
            );
        }
    }
    Ok(key)
}

/// Reads an encrypted private key with the passphrase from the environment or the terminal.
fn read_encrypted(path: &Path, pem: &str) -> anyhow::Result<SigningKey> {
    let name = input::name(path);
    let prompt = format!("passphrase for {}: ", mcppin_core::escape(&name));
    let Some((passphrase, source)) = passphrase::get(&prompt, Ask::Once)? else {
        return Err(Fail::new(
            Exit::Unreadable,
            format!(
                "{name}: the private key is encrypted: set {} to its passphrase, or run mcppin \
                 sign from a terminal to be asked for it",
                passphrase::VARIABLE
            ),
        )
        .into());
    };
    SigningKey::from_encrypted_pem(pem, passphrase.as_bytes())
        .map_err(|e| key_error(path, e, Some(source)))
}

/// The error for a private key that cannot be used (exit 4), saying what to give instead
/// where that can be told.
fn key_error(path: &Path, err: mcppin_sign::Error, source: Option<Source>) -> anyhow::Error {
    let name = input::name(path);
    let message = match &err {
        mcppin_sign::Error::PublicKeyAsPrivate => {
            let private = name
                .strip_suffix(".pub")
                .filter(|stem| !stem.is_empty())
                .map_or_else(
                    || "the private key (the file mcppin key -o wrote, not its .pub)".to_owned(),
                    |stem| format!("the private key {stem} (without .pub)"),
                );
            format!("{name}: this is a public key; sign needs {private}")
        }
        mcppin_sign::Error::Passphrase => match source {
            Some(Source::Environment) => {
                format!(
                    "{name}: {err}; the passphrase came from {}",
                    passphrase::VARIABLE
                )
            }
            _ => format!("{name}: {err}"),
        },
        _ => {
            return anyhow::Error::new(err).context(name);
        }
    };
    Fail::new(Exit::Unreadable, message).into()
}

/// The error for a lockfile that cannot be signed or checked: it is not a lockfile passing its
/// own check (exit 4). A number with no canonical form is no reason: the signed form keeps it
/// as written.
pub(crate) fn lock_error(path: &Path, err: mcppin_sign::Error) -> anyhow::Error {
    let message = match &err {
        // A manifest or a signature given as the lockfile: the reason says it all.
        mcppin_sign::Error::Lockfile {
            source: source @ mcppin_core::Error::WrongDocument { .. },
        } => format!("{}: {source} [{}]", input::name(path), source.rule()),
        mcppin_sign::Error::Lockfile { source } => {
            format!("{}: {err} [{}]", input::name(path), source.rule())
        }
        _ => format!("{}: {err}", input::name(path)),
    };
    Fail::new(Exit::Unreadable, message).into()
}

pub(crate) use mcppin_cli::sig_path;

//! `mcppin log verify`: check an admission log's hash chains.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;

use anyhow::Context;
use mcppin_core::log::Verifier;

use crate::exit::{Exit, Fail};
use crate::input;

/// The longest line read: far beyond any line a guard writes (its longest carries a client's
/// tool name, bounded by the messages it reads), so that a hostile file costs bounded memory.
const MAX_LINE: u64 = 64 * 1024 * 1024;

/// Check the admission logs mcppin-guard writes (--log).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    Verify(VerifyArgs),
}

/// Check an admission log: every run's hash chain, line by line.
///
/// Reports the first line where a run's chain breaks (a changed line, a changed prev), every
/// gap (a dropped line), a line out of order, a run whose beginning is missing (cut, or spliced
/// from another log), a line after a run's end, and a last line cut inside. With --pubkey,
/// each run must end with a guard_stop signed by one of the keys (mcppin-guard --log-key):
/// that proves the run's tail, which the chain alone cannot (a run cut after a whole line reads
/// as one that ended there).
///
/// Exit 0 every chain holds (with --pubkey: and every end is signed by a given key); 1 the log
/// is not what the guard wrote (a break, a gap, a cut line, a signature that does not verify);
/// 3 something could not be proven (lines of schema_version 1, an empty log; with --pubkey, a
/// run without a guard_stop, unsigned or signed by another key); 2 usage; 4 the log or a key
/// cannot be read.
#[derive(Debug, clap::Args)]
struct VerifyArgs {
    /// Require every run to end with a guard_stop signed by this public key (SPKI PEM, the
    /// .pub of the --log-key); repeat to accept any of several keys.
    #[arg(long, value_name = "K.pub")]
    pubkey: Vec<PathBuf>,
    /// The admission log, or - for standard input.
    file: PathBuf,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<Exit> {
    match &args.command {
        Command::Verify(args) => verify(args),
    }
}

fn verify(args: &VerifyArgs) -> anyhow::Result<Exit> {
    let keys = args
        .pubkey
        .iter()
        .map(|path| mcppin_cli::approval::read_public_key(path, &|_, _| String::new()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let name = input::name(&args.file);
    let reader: Box<dyn Read> = if args.file == std::path::Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(
            mcppin_cli::open_to_read(&args.file).with_context(|| format!("cannot read {name}"))?,
        )
    };
    let mut reader = BufReader::new(reader);
    let mut verifier = Verifier::new();
    let mut line = Vec::new();
    let mut number = 0_u64;
    loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)
            .with_context(|| format!("cannot read {name}"))?;
        if read == 0 {
            break;
        }
        number += 1;
        if line.len() as u64 > MAX_LINE {
            return Err(Fail::new(
                Exit::Unreadable,
                format!("{name}: line {number} is longer than {MAX_LINE} bytes: not a log"),
            )
            .into());
        }
        verifier.feed(&line);
    }
    let mut report = verifier.finish();
    if !keys.is_empty() {
        mcppin_sign::log::check_ends(&mut report, &keys);
    }
    let mut stdout = std::io::stdout().lock();
    write!(stdout, "{}", report.to_text())?;
    stdout.flush()?;
    Ok(match report.exit_code() {
        0 => Exit::Holds,
        1 => Exit::Departure,
        _ => Exit::Incomparable,
    })
}

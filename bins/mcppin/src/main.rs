//! `mcppin`: pin the tool surface of MCP servers and refuse drift.
//!
//! Files in, report and exit code out. This binary never starts or talks to a server.

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

mod args;
mod cmd;
mod exit;
mod input;
mod output;
mod passphrase;
mod sarif;
mod signature;

use exit::Exit;

const EXIT_CODES: &str = "\
Exit codes (a public contract):
  0  every gated policy holds (log verify: every chain holds)
  1  a departure from the approved surface was proven (log verify: the log was altered)
  2  the command line is wrong
  3  something could not be compared (undecidable literal, incomplete capture, scope;
     log verify: something could not be proven)
  4  an input could not be read (malformed file, strict-reading violation, bad lockfile or
     signature)";

/// Pin the tool surface of MCP servers and refuse drift.
#[derive(Debug, Parser)]
#[command(name = "mcppin", version, about, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Lock(cmd::lock::Args),
    Verify(cmd::verify::Args),
    Key(cmd::key::Args),
    Sign(cmd::sign::Args),
    Canon(cmd::canon::Args),
    Digest(cmd::digest::Args),
    Log(cmd::log::Args),
}

fn main() -> ExitCode {
    let argv = args::normalise(std::env::args_os(), &Cli::command());
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(err) => return mcppin_cli::usage::end::<Cli>(&err, &argv),
    };
    match run(cli) {
        Ok(exit) => exit.into(),
        Err(err) => {
            if exit::is_broken_pipe(&err) {
                return Exit::Holds.into();
            }
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(
                stderr,
                "mcppin: {}",
                mcppin_core::escape_non_ascii(&format!("{err:#}"))
            );
            exit::code_of(&err).into()
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<Exit> {
    match cli.command {
        Command::Lock(args) => cmd::lock::run(&args),
        Command::Verify(args) => cmd::verify::run(&args),
        Command::Canon(args) => cmd::canon::run(&args),
        Command::Digest(args) => cmd::digest::run(&args),
        Command::Key(args) => cmd::key::run(&args),
        Command::Sign(args) => cmd::sign::run(&args),
        Command::Log(args) => cmd::log::run(&args),
    }
}

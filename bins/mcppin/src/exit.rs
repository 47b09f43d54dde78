//! The exit-code contract of docs/cli.md, in one place.

use std::process::ExitCode;

/// How a run ended; the numbers are a public contract.
#[derive(Clone, Copy, Debug, Eq, Ord, PartialEq, PartialOrd)]
pub(crate) enum Exit {
    /// 0: every gated policy holds.
    Holds = 0,
    /// 1: a departure from the approved surface was proven.
    Departure = 1,
    /// 2: the command line is wrong (clap exits 2 itself for what it can see).
    Usage = 2,
    /// 3: something could not be compared.
    Incomparable = 3,
    /// 4: an input could not be read.
    Unreadable = 4,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit as u8)
    }
}

/// An error that ends the run with a given exit code; errors without one are unreadable input
/// (4).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct Fail {
    pub(crate) exit: Exit,
    pub(crate) message: String,
}

impl Fail {
    pub(crate) fn new(exit: Exit, message: impl Into<String>) -> Self {
        Self {
            exit,
            message: message.into(),
        }
    }
}

/// The exit code an error ends the run with.
pub(crate) fn code_of(err: &anyhow::Error) -> Exit {
    err.chain()
        .find_map(|e| e.downcast_ref::<Fail>())
        .map_or(Exit::Unreadable, |f| f.exit)
}

/// Whether the error is a closed stdout pipe, which ends the program quietly.
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

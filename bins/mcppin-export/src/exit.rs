//! The exit-code contract of docs/export.md, in one place.

use std::process::ExitCode;

/// How a run ended; the numbers are a public contract.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub(crate) enum Exit {
    /// 0: the manifest was written (with --audit: every entry is guarded as expected).
    Written = 0,
    /// 1: with --audit, an entry bypasses the guard.
    Bypassed = 1,
    /// 2: the command line is wrong (clap exits 2 itself for what it can see).
    Usage = 2,
    /// 3: a server could not be captured; nothing was written.
    Uncaptured = 3,
    /// 4: the configuration could not be read (or the manifest not written); nothing was
    /// written.
    Unreadable = 4,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit as u8)
    }
}

impl mcppin_cli::exit::Code for Exit {
    const UNREADABLE: Self = Self::Unreadable;

    fn code(self) -> u8 {
        self as u8
    }

    fn of_category(category: mcppin_core::Category) -> Self {
        match category {
            mcppin_core::Category::Usage => Self::Usage,
            // Export's 3 means a server could not be captured, never a
            // document that cannot be compared.
            _ => Self::Unreadable,
        }
    }
}

/// An error that ends the run with a given exit code; errors without one are 4.
pub(crate) type Fail = mcppin_cli::exit::Fail<Exit>;

pub(crate) use mcppin_cli::exit::is_broken_pipe;

/// The exit code an error ends the run with.
pub(crate) fn code_of(err: &anyhow::Error) -> Exit {
    mcppin_cli::exit::code_of(err)
}

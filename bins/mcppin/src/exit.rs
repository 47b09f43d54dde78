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

impl mcppin_cli::exit::Code for Exit {
    const UNREADABLE: Self = Self::Unreadable;

    fn code(self) -> u8 {
        self as u8
    }

    fn of_category(category: mcppin_core::Category) -> Self {
        match category {
            mcppin_core::Category::Usage => Self::Usage,
            mcppin_core::Category::Incomparable => Self::Incomparable,
            _ => Self::Unreadable,
        }
    }
}

/// An error that ends the run with a given exit code; errors without one are unreadable input
/// (4).
pub(crate) type Fail = mcppin_cli::exit::Fail<Exit>;

pub(crate) use mcppin_cli::exit::is_broken_pipe;

/// The exit code an error ends the run with.
pub(crate) fn code_of(err: &anyhow::Error) -> Exit {
    mcppin_cli::exit::code_of(err)
}

//! The exit-code contract of docs/guard.md, in one place.

/// How a run ended; the numbers are a public contract.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub(crate) enum Exit {
    /// 0: the session ended cleanly.
    Clean = 0,
    /// 1: drift was refused.
    Drift = 1,
    /// 2: the command line is wrong.
    Usage = 2,
    /// 3: the server died or misbehaved.
    Server = 3,
    /// 4: the lockfile or its signature could not be read, or no entry.
    Unreadable = 4,
}

impl mcppin_cli::exit::Code for Exit {
    const UNREADABLE: Self = Self::Unreadable;

    fn code(self) -> u8 {
        self as u8
    }

    fn of_category(category: mcppin_core::Category) -> Self {
        match category {
            mcppin_core::Category::Usage => Self::Usage,
            // The guard's 3 means the server died or misbehaved, never a
            // document that cannot be compared.
            _ => Self::Unreadable,
        }
    }
}

/// An error that ends the run with a given exit code.
pub(crate) type Fail = mcppin_cli::exit::Fail<Exit>;

//! The exit-code contract (docs/cli.md, docs/export.md, docs/guard.md): 0 holds, 1 departure
//! proven, 2 usage, 3 could not compare (or capture, or keep the server), 4 input unreadable.
//!
//! Each binary names its codes in its own enum (`mcppin-export`'s 0 is `Written`, the guard's
//! 3 is `Server`) and implements [`Code`] for it; the rest is here: [`Fail`], the error that
//! ends a run with a given code, [`code_of`], which finds it in an error's chain, and
//! [`is_broken_pipe`].

use std::fmt;

use mcppin_core::Category;

/// A binary's exit codes: a `Copy` enum whose discriminants are the codes.
pub trait Code: Copy + fmt::Debug + Send + Sync + 'static {
    /// The code of an error that carries none: an input that could not be read (4).
    const UNREADABLE: Self;

    /// The number the process exits with.
    fn code(self) -> u8;

    /// The code of a library error's [`Category`]: 2, 3 or 4.
    fn of_category(category: Category) -> Self;
}

/// An error that ends the run with a given exit code; errors without one end it with
/// [`Code::UNREADABLE`].
#[derive(Debug)]
pub struct Fail<E: Code> {
    /// The code.
    pub exit: E,
    /// What went wrong, as the binary prints it after its name.
    pub message: String,
}

impl<E: Code> Fail<E> {
    /// An error ending the run with `exit`.
    pub fn new(exit: E, message: impl Into<String>) -> Self {
        Self {
            exit,
            message: message.into(),
        }
    }

    /// An error ending the run with the code of `category`.
    pub fn of_category(category: Category, message: impl Into<String>) -> Self {
        Self::new(E::of_category(category), message)
    }
}

impl<E: Code> fmt::Display for Fail<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E: Code> std::error::Error for Fail<E> {}

/// The exit code an error ends the run with: that of the first [`Fail`] in its chain, else
/// [`Code::UNREADABLE`].
pub fn code_of<E: Code>(err: &anyhow::Error) -> E {
    err.chain()
        .find_map(|e| e.downcast_ref::<Fail<E>>())
        .map_or(E::UNREADABLE, |f| f.exit)
}

/// Whether the error is a closed stdout pipe, which ends the program quietly.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, Eq, PartialEq)]
    enum Exit {
        Usage = 2,
        Incomparable = 3,
        Unreadable = 4,
    }

    impl Code for Exit {
        const UNREADABLE: Self = Self::Unreadable;

        fn code(self) -> u8 {
            self as u8
        }

        fn of_category(category: Category) -> Self {
            match category {
                Category::Usage => Self::Usage,
                Category::Incomparable => Self::Incomparable,
                _ => Self::Unreadable,
            }
        }
    }

    #[test]
    fn finds_the_code_in_the_chain_or_falls_back_to_unreadable() {
        let failed = anyhow::Error::new(Fail::new(Exit::Usage, "--x: wrong")).context("outer");
        assert_eq!(code_of::<Exit>(&failed), Exit::Usage);
        assert_eq!(format!("{failed:#}"), "outer: --x: wrong");
        let plain = anyhow::anyhow!("cannot read x");
        assert_eq!(code_of::<Exit>(&plain), Exit::Unreadable);
    }

    #[test]
    fn picks_the_code_of_a_category() {
        let err = mcppin_core::digest(&mcppin_core::parse(b"[1e400]").unwrap()).unwrap_err();
        let fail = Fail::<Exit>::of_category(err.category(), err.to_string());
        assert_eq!(fail.exit.code(), 3);
        let err = mcppin_core::parse(b"[1,]").unwrap_err();
        assert_eq!(Fail::<Exit>::of_category(err.category(), "").exit.code(), 4);
    }

    #[test]
    fn tells_a_closed_pipe_from_other_errors() {
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert!(is_broken_pipe(&anyhow::Error::new(pipe).context("writing")));
        let other = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert!(!is_broken_pipe(&anyhow::Error::new(other)));
    }
}

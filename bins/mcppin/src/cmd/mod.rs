//! One module per subcommand.

pub(crate) mod canon;
pub(crate) mod digest;

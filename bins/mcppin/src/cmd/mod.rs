//! One module per subcommand.

pub(crate) mod canon;
pub(crate) mod digest;
pub(crate) mod key;
pub(crate) mod lock;
pub(crate) mod log;
pub(crate) mod sign;
pub(crate) mod verify;

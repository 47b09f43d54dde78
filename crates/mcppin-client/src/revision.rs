//! The protocol revisions of MCP this build was written against.

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// A protocol revision this build was written against.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[non_exhaustive]
pub enum Revision {
    /// 2024-11-05 (initialize handshake).
    V2024_11_05,
    /// 2025-03-26 (initialize handshake).
    V2025_03_26,
    /// 2025-06-18 (initialize handshake).
    V2025_06_18,
    /// 2025-11-25 (initialize handshake; the default).
    V2025_11_25,
    /// 2026-07-28 (no handshake: per-request `_meta`, `server/discover`).
    V2026_07_28,
}

impl Revision {
    /// Every revision, oldest first.
    pub const ALL: [Self; 5] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];

    /// The newest revision that opens with `initialize`.
    pub const LATEST_LEGACY: Self = Self::V2025_11_25;

    /// The revision string (`"2025-11-25"`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// Whether the revision opens with the `initialize` handshake.
    #[must_use]
    pub fn has_handshake(self) -> bool {
        self != Self::V2026_07_28
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Revision {
    type Err = Error;

    /// Parses a revision string.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownRevision`] for a revision this build was not written against.
    fn from_str(s: &str) -> Result<Self, Error> {
        Self::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| Error::UnknownRevision {
                revision: s.to_owned(),
            })
    }
}

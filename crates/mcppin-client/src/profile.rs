//! Client profiles: how named MCP clients introduce themselves (docs/export.md, "Client
//! profiles").
//!
//! A server may serve a different surface to different clients: one that declares `sampling`,
//! `roots` or `elicitation` can be offered tools a client declaring nothing never sees. An
//! export that is to pin the surface a real client meets must therefore open its sessions the
//! way that client does: with its `clientInfo` and its capabilities. Each profile below says,
//! in docs/export.md, where its values were read.

use std::fmt;
use std::str::FromStr;

use mcppin_core::{Object, Value};

use crate::session::ClientInfo;

/// A named MCP client whose `initialize` an export can imitate.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[non_exhaustive]
pub enum ClientProfile {
    /// Claude Desktop (`claude-desktop`).
    ClaudeDesktop,
    /// Claude Code (`claude-code`).
    ClaudeCode,
    /// Cursor (`cursor`).
    Cursor,
    /// Visual Studio Code (`vscode`).
    VsCode,
}

impl ClientProfile {
    /// Every profile, in the order help texts list them.
    pub const ALL: [Self; 4] = [
        Self::ClaudeDesktop,
        Self::ClaudeCode,
        Self::Cursor,
        Self::VsCode,
    ];

    /// The name `--client` takes (`claude-desktop`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::ClaudeDesktop => "claude-desktop",
            Self::ClaudeCode => "claude-code",
            Self::Cursor => "cursor",
            Self::VsCode => "vscode",
        }
    }

    /// The `clientInfo` the client sends.
    #[must_use]
    pub fn client_info(self) -> ClientInfo {
        let (name, version) = match self {
            Self::ClaudeDesktop => ("claude-ai", "0.1.0"),
            Self::ClaudeCode => ("claude-code", "2.1.76"),
            Self::Cursor => ("cursor-vscode", "1.0.0"),
            Self::VsCode => ("Visual Studio Code", "1.105.0"),
        };
        ClientInfo {
            name: name.to_owned(),
            version: version.to_owned(),
        }
    }

    /// The `capabilities` the client declares in `initialize`.
    #[must_use]
    pub fn capabilities(self) -> Object {
        let empty = || Value::from(Object::new());
        let mut capabilities = Object::new();
        match self {
            Self::ClaudeDesktop => {
                capabilities.insert("roots", empty());
            }
            Self::ClaudeCode | Self::Cursor => {
                capabilities.insert("elicitation", empty());
                capabilities.insert("roots", empty());
            }
            Self::VsCode => {
                let mut elicitation = Object::new();
                elicitation.insert("form", empty());
                elicitation.insert("url", empty());
                let mut roots = Object::new();
                roots.insert("listChanged", true);
                capabilities.insert("elicitation", elicitation);
                capabilities.insert("roots", roots);
                capabilities.insert("sampling", empty());
            }
        }
        capabilities
    }

    /// The profile that declares exactly `capabilities`, if one does.
    #[must_use]
    pub fn declaring(capabilities: &Value) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|p| Value::from(p.capabilities()) == *capabilities)
    }
}

impl fmt::Display for ClientProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a profile.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct UnknownProfile(pub String);

impl fmt::Display for UnknownProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<_> = ClientProfile::ALL.iter().map(|p| p.name()).collect();
        write!(
            f,
            "no client profile {:?} (known: {})",
            mcppin_core::escape(&self.0),
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownProfile {}

impl FromStr for ClientProfile {
    type Err = UnknownProfile;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownProfile(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_reads_back_from_its_name() {
        for profile in ClientProfile::ALL {
            assert_eq!(profile.name().parse::<ClientProfile>(), Ok(profile));
            assert_eq!(
                ClientProfile::declaring(&Value::from(profile.capabilities())),
                // Claude Code and Cursor declare the same: the first one is named.
                Some(if profile == ClientProfile::Cursor {
                    ClientProfile::ClaudeCode
                } else {
                    profile
                })
            );
        }
    }

    #[test]
    fn refuses_an_unknown_name_listing_the_known_ones() {
        let err = "claude".parse::<ClientProfile>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "no client profile \"claude\" (known: claude-desktop, claude-code, cursor, vscode)"
        );
    }

    #[test]
    fn vs_code_declares_sampling_roots_and_elicitation() {
        let caps = Value::from(ClientProfile::VsCode.capabilities());
        for name in ["sampling", "roots", "elicitation"] {
            assert!(caps.get(name).is_some(), "{name}");
        }
        assert!(ClientProfile::declaring(&Value::from(Object::new())).is_none());
    }
}

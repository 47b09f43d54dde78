//! `--replica TAG`: the guard marks the session ids it hands to clients with its tag, so that a
//! load balancer sends every later request of a session to the replica that holds it
//! (docs/guard.md, "Replicas behind nginx").
//!
//! The server mints the session id in its answer to `initialize`, after the balancer has
//! already picked a replica: the balancer cannot hash an id it has not seen yet to the replica
//! that will hold it. With a tag, the id the client sees is `TAG.` followed by the server's id,
//! and the balancer routes on the tag. The server never sees the tag: it is taken off every
//! request before it is forwarded, and a request whose id carries another tag (or none) is
//! answered 404 without forwarding anything.

use std::fmt;
use std::str::FromStr;

/// The longest tag.
const MAX_TAG: usize = 32;

/// A replica's tag, 1 to 32 of `A-Z a-z 0-9 _ -`; holds the prefix it puts on session ids.
#[derive(Clone, Debug, Eq, PartialEq)]
pub(crate) struct Replica {
    /// `TAG.`: the tag and the dot that ends it (a tag holds no dot, so the first dot of an
    /// id ends the tag, whatever the server's id holds).
    prefix: String,
}

/// Why a `--replica` tag was refused.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub(crate) struct BadTag;

impl fmt::Display for BadTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a replica tag is 1 to {MAX_TAG} ASCII letters, digits, '_' or '-'"
        )
    }
}

impl std::error::Error for BadTag {}

impl FromStr for Replica {
    type Err = BadTag;

    fn from_str(tag: &str) -> Result<Self, BadTag> {
        let allowed = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
        if tag.is_empty() || tag.len() > MAX_TAG || !tag.bytes().all(allowed) {
            return Err(BadTag);
        }
        Ok(Self {
            prefix: format!("{tag}."),
        })
    }
}

impl Replica {
    /// The tag, without its dot.
    pub(crate) fn tag(&self) -> &str {
        self.prefix.strip_suffix('.').unwrap_or(&self.prefix)
    }

    /// The id the client sees for the server's `id`: the tag, a dot, the server's id. Visible
    /// ASCII (0x21 to 0x7E, what MCP allows in `Mcp-Session-Id`) when the server's id is.
    pub(crate) fn outward(&self, id: &str) -> String {
        format!("{}{id}", self.prefix)
    }

    /// The server's id inside the id a client sent; `None` when it does not carry this
    /// replica's tag (another replica's session, or an id no replica gave).
    pub(crate) fn inward<'a>(&self, id: &'a str) -> Option<&'a str> {
        id.strip_prefix(self.prefix.as_str())
            .filter(|rest| !rest.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_short_ascii_words() {
        for good in ["r1", "R_2", "eu-west-1", &"a".repeat(32)] {
            let replica: Replica = good.parse().expect(good);
            assert_eq!(replica.tag(), good);
        }
        for bad in ["", "r.1", "r 1", "r/1", "é", "r1\n", &"a".repeat(33)] {
            assert_eq!(bad.parse::<Replica>(), Err(BadTag), "{bad:?}");
        }
    }

    #[test]
    fn the_tag_goes_on_outward_and_comes_off_inward() {
        let r1: Replica = "r1".parse().expect("a tag");
        let outward = r1.outward("fixture-session-1");
        assert_eq!(outward, "r1.fixture-session-1");
        assert_eq!(r1.inward(&outward), Some("fixture-session-1"));
        // The server's id may hold dots of its own: only the tag comes off.
        assert_eq!(r1.inward("r1.a.b"), Some("a.b"));
    }

    #[test]
    fn ids_without_this_replicas_tag_are_not_its_own() {
        let r1: Replica = "r1".parse().expect("a tag");
        for other in [
            "r2.fixture-session-1",
            "fixture-session-1",
            "r1",
            "r1.",
            "r10.x",
            "R1.x",
            "",
        ] {
            assert_eq!(r1.inward(other), None, "{other:?}");
        }
    }
}

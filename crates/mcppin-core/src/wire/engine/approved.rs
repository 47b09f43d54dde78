//! What a session admits against: one server's approved surface, made in one of two ways,
//! each of which says how the lockfile came to be trusted.

use std::sync::Arc;

use crate::admission::ToolIndex;
use crate::canon::write_lossy;
use crate::lockfile::{LockedItem, LockedServer};
use crate::projection::{Projection, Renaming, Unprojectable};

/// One server's approved surface, as a [`Session`](super::Session) admits against it.
///
/// Two ways make one, and each says how the lockfile came to be the approval:
///
/// - `mcppin_sign::Approval::check`, which reads the lockfile strictly and checks its
///   signature against the trusted keys, its serial floor and its age, then
///   `mcppin_sign::Approved::server`: what `mcppin-guard` does, and what a gateway with
///   signed lockfiles does;
/// - [`ApprovedServer::unsigned`], which takes a server's entry as its approval with no
///   signature checked: for an embedder whose lockfiles are not signed (and says so to its
///   users), and for tests.
///
/// Cloning is cheap (the surface is shared, never copied): a transport running many sessions
/// of one approval clones it for each.
///
/// ```
/// use mcppin_core::engine::{ApprovedServer, Config, Session};
/// use mcppin_core::lockfile::Lockfile;
///
/// let lock = Lockfile::parse(br#"{"schema_version": 2, "approval_serial": 1, "servers": [
///     {"id": "docs", "tools": []}]}"#)?;
/// // No signature is checked here: the lockfile is trusted as it was read.
/// let approved = ApprovedServer::unsigned(lock.servers["docs"].clone());
/// let session = Session::new(approved, Config::default());
/// # Ok::<(), mcppin_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ApprovedServer {
    server: Arc<LockedServer>,
    /// The approved tools by name, made once here so that no session's first list pays for it.
    tools: Arc<ToolIndex>,
}

/// The most [`ApprovedServer::warm_up`] rehearses with: about 3,000 tools of a few hundred
/// bytes, so that a lock of many more costs start-up no more than that.
pub const WARM_UP_BYTES: usize = 1024 * 1024;

/// What [`ApprovedServer::warm_up`] rehearsed.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub struct WarmUp {
    /// The length of the answer it judged: about what the server's own `tools/list` answer
    /// will take, for a transport sizing the buffer it reads lines into.
    pub answer_bytes: usize,
    /// How many tools it served and saw admitted: all it served, unless one was refused
    /// (an approved object holding an undecidable literal), then none.
    pub admitted: usize,
}

impl ApprovedServer {
    /// A server's entry of a lockfile taken as its approval **with no signature checked**:
    /// whoever handed the lockfile over is trusted. A signed lockfile goes through
    /// `mcppin_sign::Approval::check` instead.
    #[must_use]
    pub fn unsigned(server: LockedServer) -> Self {
        Self::made(server)
    }

    /// The door of a signature check: `mcppin_sign::Approved::server` makes its approvals
    /// here, after `mcppin_sign::Approval::check` held. Rust has no way to let only that crate
    /// call it; called without that check, it makes an unsigned approval look checked, so
    /// it is left out of the documentation: use [`ApprovedServer::unsigned`].
    #[doc(hidden)]
    #[must_use]
    pub fn signature_checked(server: LockedServer) -> Self {
        Self::made(server)
    }

    fn made(server: LockedServer) -> Self {
        Self {
            tools: Arc::new(ToolIndex::of(&server)),
            server: Arc::new(server),
        }
    }

    /// The same approval as a gateway with `projection` and `renaming` shows it
    /// ([`Projection::server`]): the approved items projected, renamed and pinned by digest,
    /// for a session whose [`Config::projection`](super::Config) is `projection`. It is
    /// checked as this approval was (signed or not); the lockfile's raw pins stay where they
    /// are.
    ///
    /// # Errors
    ///
    /// [`Unprojectable`] when an item is stored as a digest alone, or two items collide once
    /// renamed.
    pub fn projected(
        &self,
        projection: &Projection,
        renaming: &Renaming,
    ) -> Result<Self, Unprojectable> {
        Ok(Self::made(projection.server(&self.server, renaming)?))
    }

    /// The page [`ApprovedServer::warm_up`] judges, and how many tools it serves.
    ///
    /// A tool's size is taken from the bytes it was read from (a lockfile writes each in a
    /// form at least as long as the canonical one), before it is written: a tool too large
    /// for what is left is skipped unwritten, so no approval, however large one of its tools,
    /// makes the rehearsal longer than the bound. A tool not read from bytes has no size to
    /// go by and is left out.
    pub(super) fn rehearsal_page(&self) -> (Vec<u8>, usize) {
        let mut answer = br#"{"jsonrpc":"2.0","id":0,"result":{"tools":["#.to_vec();
        let mut served = 0;
        for approved in self.server.tools.values().filter_map(LockedItem::approved) {
            let size = approved.span().end - approved.span().start;
            if size == 0 || answer.len() + size > WARM_UP_BYTES {
                continue;
            }
            if served > 0 {
                answer.push(b',');
            }
            write_lossy(approved, &mut answer);
            served += 1;
        }
        answer.extend_from_slice(br#"],"nextCursor":"warm-up"}}"#);
        (answer, served)
    }

    /// The approved surface.
    #[must_use]
    pub fn surface(&self) -> &LockedServer {
        &self.server
    }

    /// The shared surface and its index, for the session's gate.
    pub(super) fn shared(&self) -> (Arc<LockedServer>, Arc<ToolIndex>) {
        (Arc::clone(&self.server), Arc::clone(&self.tools))
    }
}

//! The requests of a session waiting for their answers, and what they keep.
//!
//! Each keeps a record of fixed size, and beyond it only what its answer is matched and judged
//! by: a long id (twice: as written, and its canonical form), a method the engine does not
//! know by name, the name of a tool or prompt, the digest of the params as a server reads them
//! ([`Asked`]). Never the params themselves: they may be as long as a message, and a client can
//! leave many requests unanswered (a gateway never shows the guard an answer that is an
//! error). A session has at most [`OUTSTANDING_REQUESTS`] outstanding, and what they keep
//! beyond their records is at most [`OUTSTANDING_BYTES`] together (docs/guard.md).

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::Duration;

use super::id::IdBytes;
use super::judged_strictly;
use crate::admission::Asked;

/// The most requests outstanding in one session: a request past it is answered in the
/// server's place and never forwarded. Each keeps a record of about 300 bytes (its share of
/// the table included), so a session's records stay near 1 MiB; a client that waits for
/// thousands of answers at once is not one an MCP server serves.
pub const OUTSTANDING_REQUESTS: usize = 4096;

/// The most bytes the requests outstanding in one session keep together beyond their
/// fixed-size records: their ids, methods and names. A request that would keep more is
/// answered in the server's place and never forwarded. Ordinary requests keep nothing beyond
/// the record (a short id is kept inline, a known method by name); a request whose id is a
/// UUID keeps 76 bytes (the id as written and as matched), so about 1,700 of them fit.
pub const OUTSTANDING_BYTES: usize = 128 * 1024;

/// A client request waiting for its answer. Tracking an ordinary call allocates nothing: the
/// method is a static name and a short id is kept inline.
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) method: Cow<'static, str>,
    /// For the methods whose answers are judged: what of the params they are judged by.
    pub(super) asked: Option<Box<Asked>>,
    /// For `tools/call` when events are on: the tool.
    pub(super) tool: Option<String>,
    /// The id as the client wrote it.
    pub(super) id: IdBytes,
    /// The number a JavaScript client's `Number(id)` makes of the id (see
    /// [`number_alias`](super::id::number_alias)).
    pub(super) alias: Option<u64>,
    /// When it was fed.
    pub(super) started: Duration,
}

impl Pending {
    /// The bytes it keeps beyond its record, with `key`, the id it is kept under.
    fn kept(&self, key: &IdBytes) -> usize {
        let method = match &self.method {
            Cow::Borrowed(_) => 0,
            Cow::Owned(method) => method.len(),
        };
        key.heap_len()
            + self.id.heap_len()
            + method
            + self.asked.as_ref().map_or(0, |asked| asked.kept())
            + self.tool.as_ref().map_or(0, String::len)
    }
}

/// The requests outstanding, by the key their answers are matched by, and the bytes they
/// keep.
#[derive(Debug, Default)]
pub(super) struct Outstanding {
    /// Each with the number of requests fed before it: the order [`Outstanding::drain`]
    /// gives them in.
    by_key: HashMap<IdBytes, (u64, Pending)>,
    /// How many requests were fed.
    fed: u64,
    /// What [`Pending::kept`] adds up to over `by_key`.
    bytes: usize,
    /// How many of them wait for an answer the session reads strictly and judges.
    judged: usize,
}

impl Outstanding {
    pub(super) fn len(&self) -> usize {
        self.by_key.len()
    }

    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    pub(super) fn contains(&self, key: &IdBytes) -> bool {
        self.by_key.contains_key(key)
    }

    /// Whether `pending`, kept under `key`, fits beside the requests outstanding.
    pub(super) fn fits(&self, key: &IdBytes, pending: &Pending) -> bool {
        self.by_key.len() < OUTSTANDING_REQUESTS
            && self.bytes + pending.kept(key) <= OUTSTANDING_BYTES
    }

    /// Whether any of them waits for an answer the session reads strictly and judges.
    pub(super) fn awaits_judged(&self) -> bool {
        self.judged > 0
    }

    pub(super) fn insert(&mut self, key: IdBytes, pending: Pending) {
        self.bytes += pending.kept(&key);
        self.judged += usize::from(judged_strictly(&pending.method));
        self.fed += 1;
        if let Some((_, old)) = self.by_key.insert(key.clone(), (self.fed, pending)) {
            self.released(&key, old);
        }
    }

    pub(super) fn remove(&mut self, key: &IdBytes) -> Option<Pending> {
        let (_, pending) = self.by_key.remove(key)?;
        Some(self.released(key, pending))
    }

    /// How many requests were fed so far: the order of the last one.
    pub(super) fn fed(&self) -> u64 {
        self.fed
    }

    /// [`Outstanding::remove`] of the request under `key` when it was among the first
    /// `fed` requests fed, and not one fed later under the same id.
    pub(super) fn remove_fed_by(&mut self, key: &IdBytes, fed: u64) -> Option<Pending> {
        if self.by_key.get(key).is_none_or(|(order, _)| *order > fed) {
            return None;
        }
        self.remove(key)
    }

    /// `pending`, taken out from under `key`: what it kept is no longer counted.
    fn released(&mut self, key: &IdBytes, pending: Pending) -> Pending {
        self.bytes -= pending.kept(key);
        self.judged -= usize::from(judged_strictly(&pending.method));
        pending
    }

    /// Every request outstanding, in the order they were fed (so that what a session's end
    /// says of them, its log included, is the same from run to run); none is left.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = Pending> {
        self.bytes = 0;
        self.judged = 0;
        let mut fed: Vec<(u64, Pending)> = self.by_key.drain().map(|(_, fed)| fed).collect();
        fed.sort_unstable_by_key(|(order, _)| *order);
        fed.into_iter().map(|(_, pending)| pending)
    }
}

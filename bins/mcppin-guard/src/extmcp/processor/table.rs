//! The processor's sessions: one engine [`Session`] per (session, target), the requests each
//! waits an answer for, and the bounds on both.
//!
//! - The table holds at most `--max-sessions` sessions; the ones idle past `--session-idle`
//!   are dropped first. A request without a session kept to its answer is dropped before any
//!   session is refused, the oldest first: it is a request waiting, not a session whose stop
//!   must be remembered. An open session is never evicted: that would forget it was stopped.
//! - A session waits for at most [`MAX_PENDING`] answers, and requests without a session for
//!   at most as many together: past that, the oldest request is forgotten (in the engine too),
//!   and its answer, should it come, is one whose request phase was not seen. The gateway
//!   calls no answer phase for an answer that is a JSON-RPC error, nor for a request a later
//!   processor of its chain denied, so without the bound a session would keep every such
//!   request until it went idle. For the same reason the oldest are forgotten before a request
//!   is fed while what they keep (long names) passes half of the engine's
//!   [`OUTSTANDING_BYTES`]: the engine refuses a request only past all of it, and so never one
//!   of a session whose earlier requests were answered with errors.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::Duration;

use mcppin_core::Digest;
use mcppin_core::engine::{Event, OUTSTANDING_BYTES, Session, Withheld};

/// The most requests a session waits an answer for (and requests without a session, all
/// together): a gateway session rarely has more than a few in flight.
pub(crate) const MAX_PENDING: usize = 1024;

/// Where a session is kept: under its key and target, or (a request without `session`)
/// under its request's number and target.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub(super) enum Key {
    Session(Digest, usize),
    Alone(u64, usize),
}

impl Key {
    /// The key of the same session for another target.
    pub(super) fn sibling(self, target: usize) -> Self {
        match self {
            Self::Session(digest, _) => Self::Session(digest, target),
            Self::Alone(number, _) => Self::Alone(number, target),
        }
    }
}

/// A session of one target.
#[derive(Debug)]
pub(super) struct Kept {
    pub(super) session: Session,
    /// Its number in this run (stderr notes and the log's `session_id`).
    pub(super) number: u64,
    /// When a phase of it last came.
    pub(super) used: Duration,
    /// The numbers of its requests whose answer has not come, oldest first.
    pending: VecDeque<u64>,
    /// For a request without a session: what requests without a session withheld when it
    /// began (what its answer withholds or lifts is carried back to them).
    pub(super) shared: Option<Withheld>,
}

impl Kept {
    pub(super) fn new(
        session: Session,
        number: u64,
        now: Duration,
        shared: Option<Withheld>,
    ) -> Self {
        Self {
            session,
            number,
            used: now,
            pending: VecDeque::new(),
            shared,
        }
    }

    /// Records request `number` as waiting for its answer. Past [`MAX_PENDING`] the oldest
    /// is forgotten: its events (a call's completion without an answer) are returned.
    pub(super) fn wait(&mut self, number: u64, now: Duration) -> Vec<Event> {
        self.pending.push_back(number);
        let mut events = Vec::new();
        while self.pending.len() > MAX_PENDING {
            if let Some(oldest) = self.pending.pop_front() {
                events.extend(self.session.forget(oldest, now));
            }
        }
        events
    }

    /// Forgets the oldest requests while what the waiting ones keep passes half of
    /// [`OUTSTANDING_BYTES`]: called before a request is fed, so that the engine refuses only
    /// a request that alone keeps more than the other half. Their events are returned.
    pub(super) fn make_room(&mut self, now: Duration) -> Vec<Event> {
        let mut events = Vec::new();
        while self.session.outstanding_bytes() > OUTSTANDING_BYTES / 2 {
            let Some(oldest) = self.pending.pop_front() else {
                break;
            };
            events.extend(self.session.forget(oldest, now));
        }
        events
    }

    /// Whether request `number` waits for its answer.
    pub(super) fn waits(&self, number: u64) -> bool {
        self.pending.contains(&number)
    }

    /// Request `number` is answered (or will never be: it was denied after it was recorded).
    pub(super) fn answered(&mut self, number: u64) {
        if let Some(at) = self.pending.iter().position(|n| *n == number) {
            self.pending.remove(at);
        }
    }

    /// Request `number` will never be answered: forgotten here and in the engine.
    pub(super) fn forget(&mut self, number: u64, now: Duration) -> Vec<Event> {
        self.answered(number);
        self.session.forget(number, now)
    }

    #[cfg(test)]
    pub(super) fn pending(&self) -> usize {
        self.pending.len()
    }
}

/// The sessions, bounded.
#[derive(Debug, Default)]
pub(super) struct Table {
    kept: HashMap<Key, Kept>,
    /// The keys of requests without a session, oldest first (their numbers grow).
    alone: BTreeSet<Key>,
}

impl Table {
    pub(super) fn get(&self, key: &Key) -> Option<&Kept> {
        self.kept.get(key)
    }

    pub(super) fn get_mut(&mut self, key: &Key) -> Option<&mut Kept> {
        self.kept.get_mut(key)
    }

    pub(super) fn contains(&self, key: &Key) -> bool {
        self.kept.contains_key(key)
    }

    pub(super) fn remove(&mut self, key: &Key) -> Option<Kept> {
        self.alone.remove(key);
        self.kept.remove(key)
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.kept.len()
    }

    #[cfg(test)]
    pub(super) fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// Drops the sessions idle for longer than `idle`.
    fn sweep(&mut self, now: Duration, idle: Duration) {
        self.kept
            .retain(|_, kept| now.saturating_sub(kept.used) <= idle);
        let kept = &self.kept;
        self.alone.retain(|key| kept.contains_key(key));
    }

    /// Drops the oldest request without a session.
    fn drop_oldest_alone(&mut self) -> bool {
        match self.alone.pop_first() {
            Some(key) => {
                self.kept.remove(&key);
                true
            }
            None => false,
        }
    }

    /// Keeps `kept` under `key` (not yet kept), when there is room for it: `None` when the
    /// table holds `max` sessions that are neither idle nor requests without a session.
    pub(super) fn insert(
        &mut self,
        key: Key,
        kept: Kept,
        max: usize,
        now: Duration,
        idle: Duration,
    ) -> Option<&mut Kept> {
        if self.kept.len() >= max {
            self.sweep(now, idle);
        }
        while self.kept.len() >= max {
            if !self.drop_oldest_alone() {
                return None;
            }
        }
        if matches!(key, Key::Alone(..)) {
            self.alone.insert(key);
            while self.alone.len() > MAX_PENDING {
                self.drop_oldest_alone();
            }
        }
        Some(self.kept.entry(key).or_insert(kept))
    }

    /// Stops every session of the gateway session `key` belongs to: a drift refused in one
    /// target's list stops the merged answers of the others too.
    pub(super) fn stop_siblings(&mut self, key: Key, targets: usize) {
        if let Key::Session(..) = key {
            for target in 0..targets {
                if let Some(kept) = self.kept.get_mut(&key.sibling(target)) {
                    kept.session.stop();
                }
            }
        }
    }

    /// Whether a session of the gateway session `key` belongs to was stopped.
    pub(super) fn sibling_stopped(&self, key: Key, targets: usize) -> bool {
        matches!(key, Key::Session(..))
            && (0..targets).any(|target| {
                self.kept
                    .get(&key.sibling(target))
                    .is_some_and(|kept| kept.session.is_stopped())
            })
    }
}

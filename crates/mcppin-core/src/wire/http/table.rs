//! The sessions a proxy holds, under the ids the server assigned: keep, find, end, full, idle
//! at a given time; and what its stateless exchanges withhold, carried from one to the next.
//! No clock and no lock: the caller says what time it is and holds the table under its own
//! lock.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use super::{MAX_SESSION_ID, NotKept};
use crate::engine::{ApprovedServer, Config, Session, Withheld};

/// How a session was last used, as the caller measures it.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct Activity {
    /// When it was last used (a request, or an event of one of its streams), on the clock
    /// [`SessionTable::idle_at`] is given.
    pub used: Duration,
    /// Its streams open now: a session with one is never idle.
    pub streams: usize,
}

/// The open sessions of a proxy (each a `T` of the caller's: the engine session with what the
/// caller keeps beside it), and the set its stateless exchanges withhold.
#[derive(Debug)]
pub struct SessionTable<T> {
    open: HashMap<String, T>,
    max_sessions: usize,
    idle: Duration,
    /// What stateless exchanges withhold, carried from one to the next: approved names only
    /// (the engine admits no other), so it never grows past the lock.
    withheld: Withheld,
}

impl<T: Clone> SessionTable<T> {
    /// A table holding at most `max_sessions` sessions, each ended once idle for longer than
    /// `idle`.
    pub fn new(max_sessions: usize, idle: Duration) -> Self {
        Self {
            open: HashMap::new(),
            max_sessions,
            idle,
            withheld: Withheld::default(),
        }
    }

    /// Keeps `session` under `key`, the id the server assigned.
    ///
    /// # Errors
    ///
    /// In this order: [`NotKept::TooLong`] for a key over [`MAX_SESSION_ID`] bytes,
    /// [`NotKept::Taken`] for the key of a session already open (a server reusing ids would
    /// merge two sessions), [`NotKept::Full`] when the table holds `max_sessions`.
    pub fn keep(&mut self, key: &str, session: T) -> Result<(), NotKept> {
        if key.len() > MAX_SESSION_ID {
            return Err(NotKept::TooLong);
        }
        if self.open.contains_key(key) {
            return Err(NotKept::Taken);
        }
        if self.is_full() {
            return Err(NotKept::Full);
        }
        self.open.insert(key.to_owned(), session);
        Ok(())
    }

    /// The session kept under `key`, if it is open.
    pub fn find(&self, key: &str) -> Option<&T> {
        self.open.get(key)
    }

    /// Ends the session kept under `key`: it is no longer found. Returns it, if it was open.
    pub fn end(&mut self, key: &str) -> Option<T> {
        self.open.remove(key)
    }

    /// Whether the table holds `max_sessions` sessions: a request that could open another is
    /// refused before it reaches the server.
    pub fn is_full(&self) -> bool {
        self.open.len() >= self.max_sessions
    }

    /// Every open session.
    pub fn open(&self) -> Vec<T> {
        self.open.values().cloned().collect()
    }

    /// The sessions idle at `now`: no open stream, and last used longer than `idle` ago
    /// (exactly `idle` ago is not idle yet). They are not ended here: the caller ends each
    /// (the server is not told: the proxy holds none of the client's credentials).
    pub fn idle_at(&self, now: Duration, activity: impl Fn(&T) -> Activity) -> Vec<T> {
        self.open
            .values()
            .filter(|session| {
                let activity = activity(session);
                activity.streams == 0 && now.saturating_sub(activity.used) > self.idle
            })
            .cloned()
            .collect()
    }

    /// A fresh engine session, not yet kept under any id, withholding what stateless
    /// exchanges withhold now; and that set, for [`SessionTable::carry`].
    pub fn fresh(&self, approved: ApprovedServer, config: Config) -> (Session, Withheld) {
        let withheld = self.withheld.clone();
        let mut session = Session::new(approved, config);
        session.withhold(&withheld);
        (session, withheld)
    }

    /// Carries what a stateless exchange's readings withheld or lifted since it last shared
    /// (`shared`, then `now`) into the set every later fresh session starts with: names added
    /// are withheld, names gone are lifted, others' changes kept. `shared` becomes `now`.
    pub fn carry(&mut self, shared: &mut Withheld, now: Withheld) {
        if now == *shared {
            return;
        }
        apply(&mut self.withheld.tools, &shared.tools, &now.tools);
        apply(&mut self.withheld.prompts, &shared.prompts, &now.prompts);
        *shared = now;
    }
}

/// Applies to `all` what changed from `before` to `now`.
fn apply(all: &mut BTreeSet<String>, before: &BTreeSet<String>, now: &BTreeSet<String>) {
    for added in now.difference(before) {
        all.insert(added.clone());
    }
    for lifted in before.difference(now) {
        all.remove(lifted);
    }
}

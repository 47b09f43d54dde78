//! The sessions of the HTTP guard: one [`Guarded`] per MCP session, the table that keeps
//! them under the ids the server assigned, and the [`State`] every exchange shares.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use mcppin_core::engine::{self, ApprovedServer, Event, Note, Session, Withheld};
use mcppin_core::http::{Activity, HttpNote, NotKept, SessionIds, SessionTable};
use tokio::sync::watch;

use super::config::Config;
use super::replica::Replica;
use super::upstream::Upstream;
use crate::log::Log;

/// One MCP session through the guard.
#[derive(Debug)]
pub(crate) struct Guarded {
    /// The session's number in this run (stderr notes and the log's `session_id`).
    pub(super) number: u64,
    session: Mutex<Session>,
    /// The `Mcp-Session-Id` the server assigned, which it is kept under (the server's own,
    /// without the `--replica` tag); `None` before the server assigned one, and once
    /// the session ended.
    key: Mutex<Option<String>>,
    /// Turns true when the session ends: its open streams end with it.
    ended: watch::Sender<bool>,
    /// When it was last used (a request, or an event of one of its streams), in milliseconds
    /// since the guard started.
    used: AtomicU64,
    /// Its streams open now: a session with one is never idle.
    streams: AtomicUsize,
    /// What the session withheld when it last shared with the guard-wide set (at first, the
    /// set it started with); `None` once kept under a session id, when it shares no more.
    shared: Mutex<Option<Withheld>>,
}

impl Guarded {
    pub(crate) fn session(&self) -> MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn shared(&self) -> MutexGuard<'_, Option<Withheld>> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn key(&self) -> MutexGuard<'_, Option<String>> {
        self.key.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks the session used now.
    pub(crate) fn touch(&self, state: &State) {
        self.used.store(state.elapsed(), Ordering::Relaxed);
    }

    /// Counts a stream of the session open until the returned value is dropped.
    pub(crate) fn stream(self: &Arc<Self>) -> OpenStream {
        self.streams.fetch_add(1, Ordering::Relaxed);
        OpenStream(Arc::clone(self))
    }

    /// Resolves once the session has ended (at once if it already has).
    pub(crate) async fn ended(&self) {
        let mut ended = self.ended.subscribe();
        let _ = ended.wait_for(|ended| *ended).await;
    }
}

/// A stream of a session, counted while it is open.
#[derive(Debug)]
pub(crate) struct OpenStream(Arc<Guarded>);

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.streams.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What every exchange shares.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) upstream: Upstream,
    pub(crate) max_message: usize,
    pub(crate) timeout: Duration,
    started: Instant,
    approved: ApprovedServer,
    engine: engine::Config,
    /// The open sessions, and what stateless exchanges withhold.
    table: Mutex<SessionTable<Arc<Guarded>>>,
    next: AtomicU64,
    log: Mutex<Log>,
    log_failed: AtomicBool,
    run_id: String,
    replica: Option<Replica>,
    /// Turns true when the guard is told to stop: open streams end.
    pub(crate) stopping: watch::Receiver<bool>,
}

impl State {
    /// The state of a guard that starts now, holding no session yet.
    pub(super) fn new(
        config: &Config,
        upstream: Upstream,
        approved: ApprovedServer,
        log: Log,
        stopping: watch::Receiver<bool>,
    ) -> Self {
        Self {
            upstream,
            max_message: config.max_message,
            timeout: config.timeout,
            started: Instant::now(),
            approved,
            engine: config.engine,
            table: Mutex::new(SessionTable::new(config.max_sessions, config.session_idle)),
            next: AtomicU64::new(0),
            log: Mutex::new(log),
            log_failed: AtomicBool::new(false),
            run_id: config.run_id.clone(),
            replica: config.replica.clone(),
            stopping,
        }
    }

    /// Who refuses, as clients read it (the engine's `refuser`).
    pub(crate) fn refuser(&self) -> &'static str {
        self.engine.refuser
    }

    /// Every session kept under an id now.
    pub(super) fn open(&self) -> Vec<Arc<Guarded>> {
        self.table().open()
    }

    pub(crate) fn table(&self) -> MutexGuard<'_, SessionTable<Arc<Guarded>>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A fresh session, not yet kept under any id, withholding what stateless exchanges
    /// withhold now.
    pub(crate) fn fresh(&self) -> Arc<Guarded> {
        let number = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (session, withheld) = self.table().fresh(self.approved.clone(), self.engine);
        Arc::new(Guarded {
            number,
            session: Mutex::new(session),
            key: Mutex::new(None),
            ended: watch::Sender::new(false),
            used: AtomicU64::new(self.elapsed()),
            streams: AtomicUsize::new(0),
            shared: Mutex::new(Some(withheld)),
        })
    }

    /// Carries what a stateless exchange's readings withheld or lifted since it last shared
    /// into the guard-wide set (a session kept under an id shares nothing: its readings are
    /// its own). Called after each server message the session judged.
    pub(crate) fn share(&self, guarded: &Guarded) {
        let mut shared = guarded.shared();
        let Some(before) = shared.as_mut() else {
            return;
        };
        let now = guarded.session().withheld();
        if now == *before {
            return;
        }
        self.table().carry(before, now);
    }

    /// Keeps `guarded` under the id the server assigned.
    pub(crate) fn keep(&self, key: &str, guarded: &Arc<Guarded>) -> Result<(), NotKept> {
        {
            // The table stays locked until the session knows its key: an `end` finds it
            // whole.
            let mut table = self.table();
            table.keep(key, Arc::clone(guarded))?;
            *guarded.key() = Some(key.to_owned());
        }
        // Not under the table's lock: `share` takes the table while holding this.
        *guarded.shared() = None;
        Ok(())
    }

    /// Ends a session: it is no longer found by its id (later requests get 404), nothing more
    /// is forwarded on any of its streams, its calls without an answer are logged. Returns the
    /// id it was kept under, if any.
    pub(crate) fn end(&self, guarded: &Guarded) -> Option<String> {
        let key = guarded.key().take();
        if let Some(key) = &key {
            self.table().end(key);
        }
        let events = guarded.session().finish(self.now());
        self.write(guarded, events);
        guarded.ended.send_replace(true);
        key
    }

    /// Milliseconds since the guard started (for idle sessions; never fed to the engine).
    fn elapsed(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Ends the sessions idle for longer than `--session-idle`: no request and no open
    /// stream. The server is not told (the guard holds no credentials of the client's to send
    /// a DELETE with); a client coming back gets 404 and opens a new session.
    pub(super) fn sweep(&self) {
        let now = Duration::from_millis(self.elapsed());
        let stale = self.table().idle_at(now, |g| Activity {
            used: Duration::from_millis(g.used.load(Ordering::Relaxed)),
            streams: g.streams.load(Ordering::Relaxed),
        });
        for guarded in stale {
            self.end(&guarded);
            self.say(&guarded, &HttpNote::Idle);
        }
    }

    /// The time to feed the engine: measured when there is a log, whose completions need it.
    pub(crate) fn now(&self) -> Duration {
        let log = self.log();
        if log.enabled() {
            log.clock.since_start()
        } else {
            Duration::ZERO
        }
    }

    fn log(&self) -> MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes a session's events to the log, each line flushed; a failing write ends nothing
    /// and is reported once.
    pub(crate) fn write(&self, guarded: &Guarded, events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        let session_id = format!("{}-{}", self.run_id, guarded.number);
        let log = self.log();
        if let Err(err) = log.events_in(&session_id, &events)
            && !self.log_failed.swap(true, Ordering::Relaxed)
        {
            eprintln_guard(&crate::log::failed("the log", &err));
        }
    }

    /// Writes the engine's notes (escaped by the engine) to stderr, each headed by the
    /// session's number; the indented lines of a note (a diff under its heading) follow it as
    /// they are.
    pub(crate) fn notes(&self, guarded: &Guarded, notes: &[Note]) {
        if notes.is_empty() {
            return;
        }
        let mut text = String::new();
        for note in notes {
            text.push_str(&format!(
                "mcppin-guard: session {}: {note}\n",
                guarded.number
            ));
        }
        use std::io::Write;
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }

    /// A line of the guard's own about a session on stderr.
    pub(crate) fn say(&self, guarded: &Guarded, note: &HttpNote) {
        say(guarded.number, note);
    }
}

/// The session ids clients see: the server's, or with `--replica` tagged.
impl SessionIds for State {
    fn inward<'a>(&self, id: &'a str) -> Option<&'a str> {
        match &self.replica {
            None => Some(id),
            Some(replica) => replica.inward(id),
        }
    }

    fn outward(&self, id: &str) -> String {
        match &self.replica {
            None => id.to_owned(),
            Some(replica) => replica.outward(id),
        }
    }

    fn tags(&self) -> bool {
        self.replica.is_some()
    }
}

/// A line of the guard's own about session `number` on stderr.
pub(super) fn say(number: u64, note: &HttpNote) {
    eprintln_guard(&format!("session {number}: {note}"));
}

/// One line on stderr, prefixed with the guard's name.
pub(super) fn eprintln_guard(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "mcppin-guard: {text}");
}

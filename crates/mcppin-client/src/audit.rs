//! Which servers of a client configuration bypass the guard: each entry read (never run) and
//! classified against a lockfile (docs/export.md, "Auditing the configurations").
//!
//! ```
//! use mcppin_client::ClientConfig;
//! use mcppin_client::audit::{Expected, Standing, classify};
//! use mcppin_core::lockfile::Lockfile;
//!
//! let lock = Lockfile::parse(br#"{"schema_version":4,"approval_serial":1,"servers":[
//!   {"id":"files","tools":[]},{"id":"web","tools":[]}]}"#).unwrap();
//! let config = ClientConfig::parse(r#"{"mcpServers": {
//!   "files": {"command": "mcppin-guard",
//!             "args": ["--lock", "/etc/mcp.lock.json", "--server", "files", "--", "srv"]},
//!   "web": {"command": "npx", "args": ["-y", "web-mcp@1.0.0"]},
//!   "new": {"command": "new-mcp"}}}"#).unwrap();
//! let expected = Expected::new(&lock, |path: &str| path == "/etc/mcp.lock.json");
//! let standing = |id: &str| classify(id, &config.servers[id], &expected).standing;
//! assert_eq!(standing("files"), Standing::Guarded);
//! assert_eq!(standing("web"), Standing::Unguarded);
//! assert_eq!(standing("new"), Standing::NotLocked);
//! ```

use mcppin_core::launch::Guard;
use mcppin_core::lockfile::Lockfile;
use mcppin_core::{Excerpt, escape};

use crate::config::ServerEntry;

/// How one entry of a configuration stands against the lockfile.
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
#[non_exhaustive]
pub enum Standing {
    /// Started behind `mcppin-guard` enforcing this lockfile's entry for it, in the expected
    /// mode, checking the signature when the lockfile is signed.
    Guarded,
    /// Behind `mcppin-guard` with this lockfile, but weaker than expected: another mode,
    /// no key while the lockfile is signed, another server's entry, or no server named.
    Weakened,
    /// Behind `mcppin-guard` enforcing another lockfile (or none named).
    OtherLock,
    /// In the lockfile, but started without `mcppin-guard` (a remote server included: a guard
    /// in front of a URL cannot be seen in the configuration).
    Unguarded,
    /// Not in the lockfile at all (under any authorization context); a guard would refuse to
    /// start it.
    NotLocked,
}

impl Standing {
    /// Every standing, in the order reports list them.
    pub const ALL: [Self; 5] = [
        Self::Guarded,
        Self::Weakened,
        Self::OtherLock,
        Self::Unguarded,
        Self::NotLocked,
    ];

    /// The standing's name in reports: `guarded`, `weakened`, `other-lock`, `unguarded`,
    /// `not-locked`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Guarded => "guarded",
            Self::Weakened => "weakened",
            Self::OtherLock => "other-lock",
            Self::Unguarded => "unguarded",
            Self::NotLocked => "not-locked",
        }
    }

    /// Whether the entry bypasses the guard as the audit expects it: everything but
    /// [`Standing::Guarded`].
    #[must_use]
    pub fn bypasses(self) -> bool {
        self != Self::Guarded
    }
}

/// What the audit expects of a guarded entry.
pub struct Expected<'a> {
    /// The lockfile the guards must enforce.
    pub lock: &'a Lockfile,
    /// Whether a signature lies beside it: a guard must then check it (`--pubkey`).
    pub signed: bool,
    /// The mode guards must run in: `refuse` (the default), or `quarantine` when the operator
    /// accepts it.
    pub mode: &'a str,
    /// Whether a lockfile path, as a guard's settings write it, is the audited lockfile.
    pub same_lock: Box<dyn Fn(&str) -> bool + 'a>,
}

impl<'a> Expected<'a> {
    /// Expects guards enforcing `lock` (the paths `same_lock` accepts) in refuse mode, the
    /// lockfile unsigned.
    pub fn new(lock: &'a Lockfile, same_lock: impl Fn(&str) -> bool + 'a) -> Self {
        Self {
            lock,
            signed: false,
            mode: "refuse",
            same_lock: Box::new(same_lock),
        }
    }
}

/// One entry's standing and why.
#[derive(Clone, Debug, Eq, PartialEq)]
#[non_exhaustive]
pub struct Audited {
    /// The standing.
    pub standing: Standing,
    /// Why, a sentence each, every string of the configuration escaped (empty for a guarded
    /// entry).
    pub reasons: Vec<String>,
}

/// The guard's settings as an entry gives them: its flags before `--`, and the `MCPPIN_*`
/// variables of the entry's `env` (docs/guard.md, "Settings from the environment").
#[derive(Clone, Debug, Default, Eq, PartialEq)]
#[non_exhaustive]
pub struct GuardSettings {
    /// `--lock` or `MCPPIN_LOCK`.
    pub lock: Option<String>,
    /// `--server` or `MCPPIN_SERVER`.
    pub server: Option<String>,
    /// `--mode` or `MCPPIN_MODE`.
    pub mode: Option<String>,
    /// `--pubkey` (each) or `MCPPIN_PUBKEY` (split at `:`).
    pub pubkeys: Vec<String>,
}

impl GuardSettings {
    /// The settings of `guard`. Every flag of the guard takes a value: `--flag VALUE` or
    /// `--flag=VALUE`.
    #[must_use]
    pub fn of(guard: &Guard) -> Self {
        let mut settings = Self::default();
        let mut args = guard.args.iter();
        while let Some(arg) = args.next() {
            let (name, value) = match arg.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (arg.as_str(), args.next().cloned()),
            };
            // The guard also reads the single-dash spelling of its long flags.
            let name = name.strip_prefix("--").or_else(|| name.strip_prefix('-'));
            match (name, value) {
                (Some("lock"), Some(v)) => settings.lock = Some(v),
                (Some("server"), Some(v)) => settings.server = Some(v),
                (Some("mode"), Some(v)) => settings.mode = Some(v),
                (Some("pubkey"), Some(v)) => settings.pubkeys.push(v),
                _ => {}
            }
        }
        let env = |name: &str| guard.env.get(name).filter(|v| !v.is_empty()).cloned();
        settings.lock = settings.lock.or_else(|| env("MCPPIN_LOCK"));
        settings.server = settings.server.or_else(|| env("MCPPIN_SERVER"));
        settings.mode = settings.mode.or_else(|| env("MCPPIN_MODE"));
        if let Some(keys) = env("MCPPIN_PUBKEY") {
            settings
                .pubkeys
                .extend(keys.split(':').filter(|k| !k.is_empty()).map(str::to_owned));
        }
        settings
    }
}

/// How the entry `id` of a configuration stands against `expected`.
#[must_use]
pub fn classify(id: &str, entry: &ServerEntry, expected: &Expected<'_>) -> Audited {
    let locked = |id: &str| !expected.lock.contexts_of(id).is_empty();
    let audited = |standing, reasons: Vec<String>| Audited { standing, reasons };
    let guard = match entry {
        ServerEntry::Http(_) if locked(id) => {
            return audited(
                Standing::Unguarded,
                vec![
                    "a remote server: the configuration reaches its URL directly (a guard in \
                     front of it, mcppin-guard --listen, cannot be seen from here)"
                        .to_owned(),
                ],
            );
        }
        ServerEntry::Stdio(server) => server.guard.as_ref(),
        ServerEntry::Http(_) => None,
    };
    let Some(guard) = guard else {
        return if locked(id) {
            audited(
                Standing::Unguarded,
                vec!["in the lockfile, but started without mcppin-guard".to_owned()],
            )
        } else {
            audited(
                Standing::NotLocked,
                vec!["not in the lockfile, and started without mcppin-guard".to_owned()],
            )
        };
    };
    let settings = GuardSettings::of(guard);
    match &settings.lock {
        None => {
            return audited(
                Standing::OtherLock,
                vec!["behind mcppin-guard naming no lockfile (no --lock, no MCPPIN_LOCK)".into()],
            );
        }
        Some(lock) if !(expected.same_lock)(lock) => {
            return audited(
                Standing::OtherLock,
                vec![format!(
                    "behind mcppin-guard enforcing another lockfile: {}",
                    Excerpt::quoted(lock)
                )],
            );
        }
        Some(_) => {}
    }
    let server = settings.server.as_deref().unwrap_or(id);
    if !locked(server) {
        return audited(
            Standing::NotLocked,
            vec![format!(
                "the lockfile has no entry for server {}: the guard refuses to start it",
                Excerpt::quoted(server)
            )],
        );
    }
    let mut reasons = Vec::new();
    match &settings.server {
        None => reasons.push(
            "the guard names no server (no --server, no MCPPIN_SERVER): it refuses to start"
                .to_owned(),
        ),
        Some(other) if other != id => reasons.push(format!(
            "the guard enforces the approval of server {}, not of {}",
            Excerpt::quoted(other),
            Excerpt::quoted(id)
        )),
        Some(_) => {}
    }
    let mode = settings.mode.as_deref().unwrap_or("refuse");
    if mode != expected.mode {
        reasons.push(format!(
            "--mode {} where {} is expected",
            escape(mode),
            expected.mode
        ));
    }
    if expected.signed && settings.pubkeys.is_empty() {
        reasons.push(
            "no --pubkey (or MCPPIN_PUBKEY): the signature beside the lockfile is not checked"
                .to_owned(),
        );
    }
    if reasons.is_empty() {
        audited(Standing::Guarded, reasons)
    } else {
        audited(Standing::Weakened, reasons)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ClientConfig;

    const LOCK: &[u8] = br#"{"schema_version":4,"approval_serial":1,"servers":[
        {"id":"a","tools":[]},{"id":"b","auth_context":"reader","tools":[]}]}"#;

    fn standing(entry: &str, signed: bool, mode: &str) -> Audited {
        let lock = Lockfile::parse(LOCK).unwrap();
        let config =
            ClientConfig::parse(&format!(r#"{{"mcpServers": {{"a": {entry}}}}}"#)).unwrap();
        let mut expected = Expected::new(&lock, |p| p == "/l.json");
        expected.signed = signed;
        expected.mode = mode;
        classify("a", &config.servers["a"], &expected)
    }

    fn guarded(args: &str, env: &str) -> String {
        format!(
            r#"{{"command": "/usr/bin/mcppin-guard", "args": [{args}, "--", "srv"], "env": {{{env}}}}}"#
        )
    }

    #[test]
    fn a_guard_with_this_lock_in_the_expected_mode_holds() {
        let entry = guarded(r#""--lock", "/l.json", "--server", "a""#, "");
        assert_eq!(
            standing(&entry, false, "refuse"),
            Audited {
                standing: Standing::Guarded,
                reasons: vec![]
            }
        );
        // The settings from the environment, and the = spelling, count the same.
        let entry = r#"{"command": "mcppin-guard", "args": ["srv"],
            "env": {"MCPPIN_LOCK": "/l.json", "MCPPIN_SERVER": "a", "MCPPIN_PUBKEY": "/k.pub"}}"#;
        assert_eq!(standing(entry, true, "refuse").standing, Standing::Guarded);
        let entry = guarded(
            r#""--lock=/l.json", "--server=a", "--mode=quarantine", "--pubkey=/k""#,
            "",
        );
        assert_eq!(
            standing(&entry, true, "quarantine").standing,
            Standing::Guarded
        );
    }

    #[test]
    fn weaker_settings_are_named() {
        let entry = guarded(
            r#""--lock", "/l.json", "--server", "a", "--mode", "quarantine""#,
            "",
        );
        let found = standing(&entry, true, "refuse");
        assert_eq!(found.standing, Standing::Weakened);
        assert_eq!(
            found.reasons,
            [
                "--mode quarantine where refuse is expected",
                "no --pubkey (or MCPPIN_PUBKEY): the signature beside the lockfile is not checked"
            ]
        );
        // Another server's approval: the guard enforces the wrong entry.
        let entry = guarded(r#""--lock", "/l.json", "--server", "b""#, "");
        let found = standing(&entry, false, "refuse");
        assert_eq!(found.standing, Standing::Weakened);
        assert_eq!(
            found.reasons,
            ["the guard enforces the approval of server \"b\", not of \"a\""]
        );
    }

    #[test]
    fn another_lock_no_guard_and_no_entry_bypass() {
        let entry = guarded(r#""--lock", "/other.json", "--server", "a""#, "");
        assert_eq!(
            standing(&entry, false, "refuse").standing,
            Standing::OtherLock
        );
        let entry = guarded(r#""--server", "a""#, "");
        assert_eq!(
            standing(&entry, false, "refuse").standing,
            Standing::OtherLock
        );
        assert_eq!(
            standing(r#"{"command": "srv"}"#, false, "refuse").standing,
            Standing::Unguarded
        );
        assert_eq!(
            standing(r#"{"url": "https://x.example/mcp"}"#, false, "refuse").standing,
            Standing::Unguarded
        );
        let entry = guarded(r#""--lock", "/l.json", "--server", "zz""#, "");
        assert_eq!(
            standing(&entry, false, "refuse").standing,
            Standing::NotLocked
        );
        assert!(Standing::ALL.iter().filter(|s| s.bypasses()).count() == 4);
    }
}

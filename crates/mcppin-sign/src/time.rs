//! The `signed_at` timestamp: RFC 3339, UTC, whole seconds.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::Error;

/// Seconds from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z, the last second a four-digit
/// year can name.
const MAX_SECONDS: u64 = 253_402_300_799;

/// A point in time with one text form, `2026-08-01T09:20:00Z` (RFC 3339 section 5.6, UTC,
/// whole seconds), between 1970 and 9999.
///
/// One form only, so that the text in an envelope and the time it stands for cannot disagree:
/// `2026-08-01T09:20:00.000Z`, `+00:00` and lowercase `t`/`z` are refused rather than
/// normalised.
///
/// # Examples
///
/// ```
/// use mcppin_sign::Timestamp;
/// let t: Timestamp = "2026-08-01T09:20:00Z".parse()?;
/// assert_eq!(t.to_string(), "2026-08-01T09:20:00Z");
/// assert!("2026-08-01T09:20:00+00:00".parse::<Timestamp>().is_err());
/// # Ok::<(), mcppin_sign::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub struct Timestamp {
    /// Seconds since the Unix epoch, at most [`MAX_SECONDS`].
    seconds: u64,
}

impl Timestamp {
    /// The time as a [`SystemTime`].
    #[must_use]
    pub fn to_system_time(self) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(self.seconds)
    }

    /// How long after `earlier` this is; zero when it is not after it.
    #[must_use]
    pub fn since(self, earlier: Self) -> Duration {
        Duration::from_secs(self.seconds.saturating_sub(earlier.seconds))
    }
}

impl TryFrom<SystemTime> for Timestamp {
    type Error = Error;

    /// Truncates to whole seconds.
    ///
    /// # Errors
    ///
    /// [`Error::TimeOutOfRange`] before 1970 or after 9999.
    fn try_from(time: SystemTime) -> Result<Self, Error> {
        let seconds = time
            .duration_since(UNIX_EPOCH)
            .map_err(|_| Error::TimeOutOfRange)?
            .as_secs();
        if seconds > MAX_SECONDS {
            return Err(Error::TimeOutOfRange);
        }
        Ok(Self { seconds })
    }
}

impl FromStr for Timestamp {
    type Err = Error;

    /// Reads the one form `YYYY-MM-DDTHH:MM:SSZ`.
    ///
    /// # Errors
    ///
    /// [`Error::Timestamp`] for anything else, including leap seconds and impossible dates.
    fn from_str(s: &str) -> Result<Self, Error> {
        let refuse = || Error::Timestamp {
            found: s.to_owned(),
        };
        // humantime reads more than this one form (fractions, `+00:00`, leap seconds folded
        // into :59): writing the time back and comparing keeps exactly one spelling.
        let time = humantime::parse_rfc3339(s).map_err(|_| refuse())?;
        let stamp = Self::try_from(time).map_err(|_| refuse())?;
        if stamp.to_string() != s {
            return Err(refuse());
        }
        Ok(stamp)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&humantime::format_rfc3339_seconds(self.to_system_time()), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_the_one_form() {
        for s in [
            "1970-01-01T00:00:00Z",
            "2026-08-01T09:20:00Z",
            "2024-02-29T23:59:59Z",
            "9999-12-31T23:59:59Z",
        ] {
            assert_eq!(s.parse::<Timestamp>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn rejects_every_other_spelling() {
        for s in [
            "",
            "2026-08-01T09:20:00",
            "2026-08-01T09:20:00.000Z",
            "2026-08-01T09:20:00.Z",
            "2026-08-01T09:20:00+00:00",
            "2026-08-01t09:20:00z",
            "2026-08-01 09:20:00Z",
            "2026-08-01T09:20:60Z",
            "2026-02-29T09:20:00Z",
            "1969-12-31T23:59:59Z",
            "2026-08-01T09:20:00Z ",
            "2026-8-01T09:20:00Z",
        ] {
            assert!(
                matches!(s.parse::<Timestamp>(), Err(Error::Timestamp { found }) if found == s),
                "{s:?}"
            );
        }
    }

    #[test]
    fn truncates_system_time_to_seconds_and_bounds_it() {
        let t = UNIX_EPOCH + Duration::new(1_785_000_000, 999_999_999);
        let stamp = Timestamp::try_from(t).unwrap();
        assert_eq!(
            stamp.to_system_time(),
            UNIX_EPOCH + Duration::from_secs(1_785_000_000)
        );
        assert!(matches!(
            Timestamp::try_from(UNIX_EPOCH - Duration::from_secs(1)),
            Err(Error::TimeOutOfRange)
        ));
        assert!(matches!(
            Timestamp::try_from(UNIX_EPOCH + Duration::from_secs(MAX_SECONDS + 1)),
            Err(Error::TimeOutOfRange)
        ));
    }

    #[test]
    fn since_saturates_at_zero() {
        let a: Timestamp = "2026-08-01T09:20:00Z".parse().unwrap();
        let b: Timestamp = "2026-08-02T09:20:00Z".parse().unwrap();
        assert_eq!(b.since(a), Duration::from_secs(86_400));
        assert_eq!(a.since(b), Duration::ZERO);
    }
}

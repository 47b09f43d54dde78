//! Durations on the command line (`30s`, `5m`, `720h`, `2weeks`), in humantime's notation and
//! bounded: every binary's duration flags read through [`parse`].

use std::time::Duration;

/// The longest duration a flag takes: 100 years (of 365.25 days, as humantime counts `years`),
/// far beyond any timeout or age. A longer one cannot always be added to the clock (a deadline
/// past what it holds ended the program in a panic).
pub const MAX: Duration = Duration::from_secs(36_525 * 86_400);

/// Reads a flag's duration, for clap's `value_parser`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// assert_eq!(mcppin_cli::duration::parse("90s"), Ok(Duration::from_secs(90)));
/// assert!(mcppin_cli::duration::parse("500000000000years").is_err());
/// ```
///
/// # Errors
///
/// Not humantime's notation, or longer than [`MAX`] (100 years).
pub fn parse(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text).map_err(|e| e.to_string())?;
    if duration > MAX {
        return Err("longer than 100 years".to_owned());
    }
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_up_to_100_years_and_refuses_more() {
        assert_eq!(parse("100years"), Ok(MAX));
        assert_eq!(parse("36525days"), Ok(MAX));
        assert_eq!(
            parse("36525days 1s"),
            Err("longer than 100 years".to_owned())
        );
        assert_eq!(
            parse("500000000000years"),
            Err("longer than 100 years".to_owned())
        );
        assert!(parse("soon").is_err());
    }
}

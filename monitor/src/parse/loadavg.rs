//! `/proc/loadavg`: `1m 5m 15m running/total last_pid`.

use super::number;
use crate::error::ParseError;

const FILE: &str = "/proc/loadavg";

/// Load averages and scheduling entity counts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoadAvg {
    /// Average over 1 minute.
    pub one: f64,
    /// Average over 5 minutes.
    pub five: f64,
    /// Average over 15 minutes.
    pub fifteen: f64,
    /// Runnable scheduling entities now.
    pub running: u64,
    /// Scheduling entities (threads) in the system.
    pub total: u64,
}

/// Parses the text of `/proc/loadavg`.
pub fn parse(text: &str) -> Result<LoadAvg, ParseError> {
    let f: Vec<&str> = text.split_ascii_whitespace().collect();
    if f.len() < 4 {
        return Err(ParseError::new(
            FILE,
            1,
            format!("expected at least 4 fields, found {}", f.len()),
        ));
    }
    let (running, total) = f[3].split_once('/').ok_or_else(|| {
        ParseError::new(FILE, 1, format!("expected running/total, found `{}`", f[3]))
    })?;
    Ok(LoadAvg {
        one: number(FILE, 1, "1-minute load", f[0])?,
        five: number(FILE, 1, "5-minute load", f[1])?,
        fifteen: number(FILE, 1, "15-minute load", f[2])?,
        running: number(FILE, 1, "running", running)?,
        total: number(FILE, 1, "total", total)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_averages_and_the_entity_counts_are_read() {
        let l = parse("1.02 1.52 1.48 1/86 31432\n").unwrap();
        assert_eq!((l.one, l.five, l.fifteen), (1.02, 1.52, 1.48));
        assert_eq!((l.running, l.total), (1, 86));
    }

    #[test]
    fn a_missing_slash_is_an_error() {
        let e = parse("1.0 1.0 1.0 186 3\n").unwrap_err();
        assert_eq!(e.file, "/proc/loadavg");
        assert!(e.message.contains("running/total"), "{e}");
    }
}

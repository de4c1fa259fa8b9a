//! Durations as people write them, one syntax for every perfflow tool: the
//! monitor's `-i`/`-c` and the runtime's interval options.
//!
//! A duration is a number followed by a unit: `ns`, `us`, `ms`, `s`, `m`
//! (or `min`), `h`, in any case (`500ms`, `2s`, `1.5m`, `0.5S`); blanks may
//! separate them. A number alone is read as seconds, and the caller is told
//! so ([`Parsed::unit_assumed`]) to say it in one line: `2` is two seconds
//! in both the monitor and the runtime.
//!
//! Parsing never panics: values that are not numbers, not finite, not
//! positive, or outside the caller's bounds (which keeps every accepted
//! duration small enough to add to an `Instant`) are errors that name the
//! text and what was expected.

use std::fmt;
use std::time::Duration;

/// The accepted syntax, as a phrase completing "expected ...".
pub const SYNTAX: &str = "a number with a unit ns, us, ms, s, m or h (e.g. 500ms, 2s, 1.5m); \
                          a number alone is seconds";

/// A parsed duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parsed {
    /// The duration.
    pub duration: Duration,
    /// True when the text had no unit and was read as seconds.
    pub unit_assumed: bool,
}

impl Parsed {
    /// The line to print when no unit was given, e.g. "`2` has no unit:
    /// read as 2 seconds (write 2s or 2000ms)".
    pub fn note(&self, text: &str) -> Option<String> {
        self.unit_assumed.then(|| {
            let secs = self.duration.as_secs_f64();
            format!(
                "`{}` has no unit: read as {secs} seconds (write {secs}s or {}ms)",
                text.trim(),
                secs * 1e3
            )
        })
    }
}

/// Why a text is not an accepted duration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DurationError {
    /// No number could be read.
    NotANumber { text: String },
    /// The number is followed by something that is not a unit.
    UnknownUnit { text: String, unit: String },
    /// Zero, negative, or not finite.
    NotPositive { text: String },
    /// Shorter than the caller's minimum.
    TooShort { text: String, min: Duration },
    /// Longer than the caller's maximum.
    TooLong { text: String, max: Duration },
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::NotANumber { text } => write!(f, "`{text}` is not a duration"),
            DurationError::UnknownUnit { text, unit } => {
                write!(f, "`{text}` has an unknown unit `{unit}`")
            }
            DurationError::NotPositive { text } => {
                write!(f, "`{text}` is not a positive duration")
            }
            DurationError::TooShort { text, min } => {
                write!(f, "`{text}` is shorter than {}", Human(*min))
            }
            DurationError::TooLong { text, max } => {
                write!(f, "`{text}` is longer than {}", Human(*max))
            }
        }
    }
}

impl std::error::Error for DurationError {}

/// A bound written with the largest unit that keeps it whole.
struct Human(Duration);

impl fmt::Display for Human {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0.as_nanos();
        for (unit, size) in [
            ("h", 3_600_000_000_000u128),
            ("m", 60_000_000_000),
            ("s", 1_000_000_000),
            ("ms", 1_000_000),
            ("us", 1_000),
        ] {
            if ns >= size && ns % size == 0 {
                return write!(f, "{}{unit}", ns / size);
            }
        }
        write!(f, "{ns}ns")
    }
}

/// Parses `text` as a duration between `min` and `max` inclusive.
pub fn parse(text: &str, min: Duration, max: Duration) -> Result<Parsed, DurationError> {
    let shown = text.trim();
    let owned = || shown.to_string();
    let split = shown
        .find(|c: char| c.is_alphabetic() && !matches!(c, 'e' | 'E'))
        .or_else(|| {
            // An exponent `e` is part of the number only when digits follow.
            shown.find(|c: char| c.is_alphabetic()).filter(|&i| {
                !shown[i + 1..]
                    .trim_start_matches(['+', '-'])
                    .starts_with(|c: char| c.is_ascii_digit())
            })
        })
        .unwrap_or(shown.len());
    let (number, unit) = shown.split_at(split);
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" => 1.0,
        "ns" => 1e-9,
        "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(DurationError::UnknownUnit {
                text: owned(),
                unit: unit.trim().to_string(),
            })
        }
    };
    let number = number.trim();
    // `f64::from_str` also reads `inf` and `nan`, which the unit split
    // above has already sent to `UnknownUnit`; digits are all that is left.
    let value: f64 = number
        .parse()
        .map_err(|_| DurationError::NotANumber { text: owned() })?;
    let seconds = value * scale;
    if !seconds.is_finite() || seconds <= 0.0 {
        return Err(DurationError::NotPositive { text: owned() });
    }
    if seconds > max.as_secs_f64() {
        return Err(DurationError::TooLong { text: owned(), max });
    }
    let duration = Duration::try_from_secs_f64(seconds)
        .map_err(|_| DurationError::TooLong { text: owned(), max })?;
    if duration < min {
        return Err(DurationError::TooShort { text: owned(), min });
    }
    Ok(Parsed {
        duration,
        unit_assumed: unit.trim().is_empty(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Duration = Duration::from_millis(1);
    const MAX: Duration = Duration::from_secs(86_400);

    fn ok(text: &str) -> Parsed {
        parse(text, MIN, MAX).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn numbers_with_units_are_read_in_those_units() {
        assert_eq!(ok("500ms").duration, Duration::from_millis(500));
        assert_eq!(ok("2s").duration, Duration::from_secs(2));
        assert_eq!(ok("0.5S").duration, Duration::from_millis(500));
        assert_eq!(ok("1.5m").duration, Duration::from_secs(90));
        assert_eq!(ok("1min").duration, Duration::from_secs(60));
        assert_eq!(ok("1h").duration, Duration::from_secs(3600));
        assert_eq!(ok("2000us").duration, Duration::from_millis(2));
        assert_eq!(ok("5000000ns").duration, Duration::from_millis(5));
        assert_eq!(ok(" 10 ms ").duration, Duration::from_millis(10));
        assert_eq!(ok("1e3ms").duration, Duration::from_secs(1));
        assert_eq!(ok("1e-1s").duration, Duration::from_millis(100));
        assert!(!ok("2s").unit_assumed);
    }

    #[test]
    fn a_number_alone_is_seconds_and_says_so() {
        let p = ok("2");
        assert_eq!(p.duration, Duration::from_secs(2));
        assert!(p.unit_assumed);
        assert_eq!(
            p.note("2").unwrap(),
            "`2` has no unit: read as 2 seconds (write 2s or 2000ms)"
        );
        assert_eq!(ok("0.25").duration, Duration::from_millis(250));
        assert_eq!(ok("1e1").duration, Duration::from_secs(10));
        assert!(ok("2ms").note("2ms").is_none());
    }

    #[test]
    fn bad_text_is_an_error_naming_it() {
        for t in [
            "",
            "abc",
            "5x",
            "ms",
            "-1s",
            "0",
            "0ms",
            "nan",
            "inf",
            "-inf",
            "1e",
            "1..2s",
            "1e300",
            "1e300h",
            "1e-300",
            "18446744073709551616s",
            "0.5ms",
            "2d",
            "١٠ms",
        ] {
            let e = parse(t, MIN, MAX).expect_err(t).to_string();
            assert!(e.contains(&format!("`{}`", t.trim())), "{t}: {e}");
        }
    }

    #[test]
    fn bounds_are_inclusive_and_named_in_the_error() {
        assert_eq!(ok("1ms").duration, MIN);
        assert_eq!(ok("24h").duration, MAX);
        assert_eq!(
            parse("25h", MIN, MAX).unwrap_err().to_string(),
            "`25h` is longer than 24h"
        );
        assert_eq!(
            parse("10ms", Duration::from_millis(20), MAX)
                .unwrap_err()
                .to_string(),
            "`10ms` is shorter than 20ms"
        );
    }
}

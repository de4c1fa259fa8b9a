//! Values in units people read: `1.5 GiB`, `230 MiB/s`, `45 %`, `120 W`,
//! `3.2 M/s`, never `1.61e9`.
//!
//! A unit string as the metric files write it (`bytes`, `bytes/s`, `%`,
//! `W`, `uJ`, `1/s`, `count`, `MHz`, `s`, ...) becomes a [`Unit`]; a
//! [`Scale`] divides values by a factor and names the result, chosen once
//! per axis (from its largest value) or per number. Bytes take binary
//! prefixes (KiB = 1024 B), everything else decimal ones (k, M, G).

/// What kind of quantity a series holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unit {
    /// Bytes: B, KiB, MiB, GiB, TiB.
    Bytes,
    /// Bytes per second: B/s, KiB/s, ... .
    BytesPerSecond,
    /// A percentage.
    Percent,
    /// Seconds: s, min, h for long spans, ms and µs for short ones.
    Seconds,
    /// A plain number (a count, a ratio): k, M, G, T prefixes.
    Number,
    /// A count per second: /s, k/s, M/s, G/s.
    PerSecond,
    /// An SI unit (`W`, `J`, `Hz`, ...) taking decimal prefixes from µ to T.
    Si(String),
    /// Anything else: the number with decimal prefixes, then the unit.
    Other(String),
}

impl Unit {
    /// The unit a metric file's unit string means; `None` or an empty
    /// string is a plain number.
    pub fn parse(text: Option<&str>) -> Unit {
        let t = text.unwrap_or("").trim();
        match t {
            "" | "count" | "1" | "ratio" | "tasks" => Unit::Number,
            "bytes" | "byte" | "B" => Unit::Bytes,
            "bytes/s" | "B/s" => Unit::BytesPerSecond,
            "KiB" => Unit::Bytes,
            "%" | "percent" => Unit::Percent,
            "s" | "seconds" => Unit::Seconds,
            "1/s" | "/s" | "count/s" => Unit::PerSecond,
            "W" | "J" | "Hz" | "V" | "A" => Unit::Si(t.to_string()),
            "MHz" => Unit::Si("Hz".to_string()),
            "mW" => Unit::Si("W".to_string()),
            "uJ" | "µJ" => Unit::Si("J".to_string()),
            "ns" => Unit::Seconds,
            _ => Unit::Other(t.to_string()),
        }
    }

    /// What one value in the unit string `text` is in this unit's base
    /// (`MHz` values are millions of Hz, `uJ` millionths of a J, `KiB`
    /// 1024 bytes, `ns` a billionth of a second).
    pub fn base_factor(text: Option<&str>) -> f64 {
        match text.unwrap_or("").trim() {
            "MHz" => 1e6,
            "mW" => 1e-3,
            "uJ" | "µJ" => 1e-6,
            "KiB" => 1024.0,
            "ns" => 1e-9,
            _ => 1.0,
        }
    }

    /// The unit shown after the plain number (`%`, `W`, `°C`), if any.
    fn suffix(&self) -> &str {
        match self {
            Unit::Bytes => "B",
            Unit::BytesPerSecond => "B/s",
            Unit::Percent => "%",
            Unit::Seconds => "s",
            Unit::Number => "",
            Unit::PerSecond => "/s",
            Unit::Si(u) | Unit::Other(u) => u,
        }
    }

    /// The scale for values up to `magnitude` (in absolute value).
    pub fn scale(&self, magnitude: f64) -> Scale {
        let m = if magnitude.is_finite() {
            magnitude.abs()
        } else {
            0.0
        };
        match self {
            Unit::Percent => Scale::new(1.0, "%", true),
            Unit::Bytes | Unit::BytesPerSecond => {
                let rate = matches!(self, Unit::BytesPerSecond);
                let names = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
                let mut i = 0;
                // (A hair under a power, from a round trip through log10,
                // still counts as it.)
                while i + 1 < names.len() && m >= 1024f64.powi(i as i32 + 1) * (1.0 - 1e-9) {
                    i += 1;
                }
                let name = if rate {
                    format!("{}/s", names[i])
                } else {
                    names[i].to_string()
                };
                Scale::new(1024f64.powi(i as i32), &name, false)
            }
            Unit::Seconds => {
                if m >= 2.0 * 3600.0 {
                    Scale::new(3600.0, "h", false)
                } else if m >= 2.0 * 60.0 {
                    Scale::new(60.0, "min", false)
                } else if m >= 1.0 || m == 0.0 {
                    Scale::new(1.0, "s", false)
                } else if m >= 1e-3 {
                    Scale::new(1e-3, "ms", false)
                } else {
                    Scale::new(1e-6, "µs", false)
                }
            }
            Unit::Number | Unit::PerSecond | Unit::Other(_) => {
                let (factor, prefix) = decimal_prefix(m, false);
                let unit = self.suffix();
                let name = match (prefix, unit) {
                    ("", "/s") => "/s".to_string(),
                    (p, "/s") => format!("{p}/s"),
                    (p, "") => p.to_string(),
                    (p, u) => format!("{p} {u}").trim().to_string(),
                };
                Scale::new(factor, &name, false)
            }
            Unit::Si(u) => {
                let (factor, prefix) = decimal_prefix(m, true);
                Scale::new(factor, &format!("{prefix}{u}"), true)
            }
        }
    }

    /// `value` in its own best scale with three significant digits, for
    /// titles and tables: `1.50 GiB`, `45.2 %`, `3.20 M/s`, `0`.
    pub fn format(&self, value: f64) -> String {
        if !value.is_finite() {
            return value.to_string();
        }
        let scale = self.scale(value);
        let v = scale.apply(value);
        // Decimals of the rounded value: 0.99996 shows as 1.00, not 1.000.
        let rounded: f64 = format!("{v:.*}", significant_decimals(v))
            .parse()
            .unwrap_or(v);
        scale.label(v, significant_decimals(rounded))
    }
}

/// The factor and prefix (`k`, `M`, ...) for a magnitude; SI units also go
/// below one (`m`, `µ`).
fn decimal_prefix(m: f64, small: bool) -> (f64, &'static str) {
    const BIG: [(f64, &str); 5] = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    for (f, p) in BIG {
        if m >= f {
            return (f, p);
        }
    }
    if small && m > 0.0 && m < 1e-3 {
        (1e-6, "µ")
    } else if small && m > 0.0 && m < 1.0 {
        (1e-3, "m")
    } else {
        (1.0, "")
    }
}

/// Decimals for three significant digits of `v` (at most 3).
fn significant_decimals(v: f64) -> usize {
    let a = v.abs();
    if a == 0.0 || a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    }
}

/// A factor values are divided by, and the name of the result.
#[derive(Debug, Clone, PartialEq)]
pub struct Scale {
    /// What one displayed unit is worth in the series' base unit.
    pub factor: f64,
    /// Shown after the number (`GiB`, `k/s`, `%`), maybe empty.
    pub name: String,
    /// Whether a space separates number and name (`45 %` vs `3k`).
    spaced: bool,
}

impl Scale {
    fn new(factor: f64, name: &str, spaced: bool) -> Scale {
        // Binary and decimal unit names read better with a space too,
        // except the bare prefixes of plain numbers (`3k`, `2.5M`).
        // A bare rate (`12.0/s`) reads as one unit.
        let spaced = (spaced || name.len() > 1 || name == "B" || name == "s" || name == "h")
            && !name.starts_with('/');
        Scale {
            factor,
            name: name.to_string(),
            spaced,
        }
    }

    /// A scale of `factor` called `name`.
    pub fn named(factor: f64, name: &str) -> Scale {
        Scale::new(factor, name, false)
    }

    /// `value` divided by the factor.
    pub fn apply(&self, value: f64) -> f64 {
        value / self.factor
    }

    /// A scaled number with `decimals` decimals and the name; trailing
    /// zeros after the point are kept only where `decimals` asks for them.
    pub fn label(&self, scaled: f64, decimals: usize) -> String {
        let mut n = format!("{scaled:.decimals$}");
        if n == "-0" || n.starts_with("-0.") && n[1..].chars().all(|c| c == '0' || c == '.') {
            n = n[1..].to_string();
        }
        if self.name.is_empty() {
            n
        } else if self.spaced {
            format!("{n} {}", self.name)
        } else {
            format!("{n}{}", self.name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_take_binary_prefixes() {
        let u = Unit::parse(Some("bytes"));
        assert_eq!(u.format(6.24e8), "595 MiB");
        assert_eq!(u.format(1536.0), "1.50 KiB");
        assert_eq!(u.format(3.0 * 1024f64.powi(3)), "3.00 GiB");
        assert_eq!(u.format(0.0), "0 B");
        assert_eq!(u.format(10f64.powf(1073741824f64.log10())), "1.00 GiB");
        assert_eq!(Unit::parse(Some("bytes/s")).format(2.5e6), "2.38 MiB/s");
    }

    #[test]
    fn counts_and_rates_take_decimal_prefixes() {
        assert_eq!(Unit::parse(Some("count")).format(3_200_000.0), "3.20M");
        assert_eq!(Unit::parse(Some("1/s")).format(45_000.0), "45.0 k/s");
        assert_eq!(Unit::parse(Some("1/s")).format(12.0), "12.0/s");
        assert_eq!(Unit::parse(None).format(0.5), "0.500");
    }

    #[test]
    fn si_units_go_below_one_and_percent_stays_percent() {
        assert_eq!(Unit::parse(Some("W")).format(0.25), "250 mW");
        assert_eq!(Unit::parse(Some("W")).format(1250.0), "1.25 kW");
        assert_eq!(Unit::parse(Some("%")).format(45.25), "45.2 %");
        assert_eq!(Unit::parse(Some("s")).format(7300.0), "2.03 h");
        assert_eq!(
            Unit::parse(Some("instructions/cycle")).format(1.5),
            "1.50 instructions/cycle"
        );
    }

    #[test]
    fn scaled_source_units_name_their_base() {
        assert_eq!(Unit::parse(Some("MHz")), Unit::Si("Hz".into()));
        assert_eq!(Unit::base_factor(Some("MHz")), 1e6);
        assert_eq!(Unit::parse(Some("MHz")).format(2400.0 * 1e6), "2.40 GHz");
        assert_eq!(Unit::base_factor(Some("uJ")), 1e-6);
    }
}

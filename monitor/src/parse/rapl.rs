//! RAPL energy counters of the `powercap` framework:
//! `/sys/class/powercap/intel-rapl:<p>[:<d>]/{name,energy_uj,max_energy_range_uj}`
//! (the same layout serves AMD processors).
//!
//! `energy_uj` is a cumulative count of microjoules that wraps to zero after
//! reaching `max_energy_range_uj`. Since Linux 5.10 `energy_uj` is readable
//! by root only.

use super::sysfs::parse_u64;
use crate::error::ParseError;

/// Parses `energy_uj` (microjoules).
pub fn parse_energy_uj(text: &str) -> Result<u64, ParseError> {
    parse_u64("/sys/class/powercap/intel-rapl:<N>/energy_uj", text)
}

/// Parses `max_energy_range_uj` (microjoules).
pub fn parse_max_energy_range_uj(text: &str) -> Result<u64, ParseError> {
    parse_u64(
        "/sys/class/powercap/intel-rapl:<N>/max_energy_range_uj",
        text,
    )
}

/// The domain name from the `name` file (`package-0`, `core`, `dram`...),
/// qualified by the parent's name for subdomains (`package-0/core`).
pub fn domain_name(name_text: &str, parent: Option<&str>) -> String {
    let own = name_text.trim();
    match parent {
        Some(p) => format!("{p}/{own}"),
        None => own.to_string(),
    }
}

/// Energy consumed between two readings, allowing for one wrap of the
/// counter at `max_range_uj`. `None` if the counter went backwards and no
/// range is known (or the reading exceeds it), since the energy is then
/// unknown.
pub fn energy_delta_uj(prev: u64, cur: u64, max_range_uj: Option<u64>) -> Option<u64> {
    if cur >= prev {
        return Some(cur - prev);
    }
    let max = max_range_uj?;
    if prev > max {
        return None;
    }
    Some(max - prev + cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn energy_is_read_in_microjoules() {
        assert_eq!(parse_energy_uj("123456789\n").unwrap(), 123456789);
        let e = parse_energy_uj("").unwrap_err();
        assert!(e.file.ends_with("energy_uj"), "{e}");
    }

    #[test]
    fn a_counter_that_wrapped_gives_the_energy_across_the_wrap() {
        let max = 262143328850;
        assert_eq!(energy_delta_uj(max - 1_000, 4_000, Some(max)), Some(5_000));
        assert_eq!(energy_delta_uj(10, 25, Some(max)), Some(15));
    }

    #[test]
    fn a_counter_that_went_backwards_without_a_range_gives_no_energy() {
        assert_eq!(energy_delta_uj(100, 50, None), None);
    }

    #[test]
    fn subdomains_are_named_after_their_package() {
        assert_eq!(domain_name("core\n", Some("package-0")), "package-0/core");
        assert_eq!(domain_name("package-1\n", None), "package-1");
    }
}

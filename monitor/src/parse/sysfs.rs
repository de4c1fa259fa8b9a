//! Small sysfs value formats: single numbers, CPU lists (`0-3,8`), cache
//! sizes (`32K`), `cpufreq` frequencies (kHz) and per-node `meminfo`.

use super::{kilobytes, number};
use crate::error::ParseError;

/// Parses a file holding one unsigned integer (sysfs attributes such as
/// `energy_uj`, InfiniBand counters, `scaling_cur_freq`).
pub fn parse_u64(file: &str, text: &str) -> Result<u64, ParseError> {
    number(file, 1, "value", text)
}

/// Parses a CPU list such as `0-3,8,10-11` into CPU numbers. An empty list
/// (a memory-only NUMA node) gives an empty vector.
pub fn parse_cpu_list(file: &str, text: &str) -> Result<Vec<u32>, ParseError> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let a: u32 = number(file, 1, "range start", a)?;
                let b: u32 = number(file, 1, "range end", b)?;
                if b < a {
                    return Err(ParseError::new(
                        file,
                        1,
                        format!("range `{part}` runs backwards"),
                    ));
                }
                out.extend(a..=b);
            }
            None => out.push(number(file, 1, "cpu", part)?),
        }
    }
    Ok(out)
}

/// Parses a cache size such as `32K`, `1024K` or `32M` into bytes.
pub fn parse_size(file: &str, text: &str) -> Result<u64, ParseError> {
    let t = text.trim();
    let (digits, mult) = match t.as_bytes().last() {
        Some(b'K') => (&t[..t.len() - 1], 1u64 << 10),
        Some(b'M') => (&t[..t.len() - 1], 1 << 20),
        Some(b'G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    let n: u64 = number(file, 1, "size", digits)?;
    Ok(n.saturating_mul(mult))
}

/// Parses `scaling_cur_freq` (kHz) into MHz.
pub fn parse_cpufreq_mhz(text: &str) -> Result<f64, ParseError> {
    let khz = parse_u64(
        "/sys/devices/system/cpu/cpu<N>/cpufreq/scaling_cur_freq",
        text,
    )?;
    Ok(khz as f64 / 1000.0)
}

/// Reads `MemTotal` (bytes) from `/sys/devices/system/node/node<N>/meminfo`,
/// whose lines look like `Node 0 MemTotal:  11495628 kB`.
pub fn parse_node_mem_total(text: &str) -> Result<Option<u64>, ParseError> {
    const FILE: &str = "/sys/devices/system/node/node<N>/meminfo";
    for (i, line) in text.lines().enumerate() {
        if let Some((key, value)) = line.split_once(':') {
            if key.trim_end().ends_with("MemTotal") {
                return kilobytes(FILE, i + 1, "MemTotal", value).map(Some);
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_expand_ranges_and_singles() {
        assert_eq!(
            parse_cpu_list("f", "0-3,8,10-11\n").unwrap(),
            vec![0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_cpu_list("f", "\n").unwrap(), Vec::<u32>::new());
    }

    #[test]
    fn a_backwards_cpu_range_is_an_error() {
        let e = parse_cpu_list("/sys/x/cpulist", "3-1").unwrap_err();
        assert_eq!(e.file, "/sys/x/cpulist");
    }

    #[test]
    fn cache_sizes_carry_binary_suffixes() {
        assert_eq!(parse_size("f", "32K\n").unwrap(), 32 * 1024);
        assert_eq!(parse_size("f", "32768K").unwrap(), 32 << 20);
        assert_eq!(parse_size("f", "2M").unwrap(), 2 << 20);
        assert!(parse_size("f", "big").is_err());
    }

    #[test]
    fn cpufreq_is_read_in_khz_and_given_in_mhz() {
        assert_eq!(parse_cpufreq_mhz("2596150\n").unwrap(), 2596.15);
    }

    #[test]
    fn node_meminfo_gives_the_node_total() {
        let text = "Node 0 MemTotal:       11495628 kB\nNode 0 MemFree:         9772684 kB\n";
        assert_eq!(parse_node_mem_total(text).unwrap(), Some(11495628 * 1024));
        assert_eq!(parse_node_mem_total("").unwrap(), None);
    }
}

//! `/proc/<pid>/smaps_rollup` (Linux 4.14+): the sums of `/proc/<pid>/smaps`
//! over all mappings. The first line names the address range; the rest are
//! `Key: <n> kB` lines.
//!
//! The unique set size (USS, memory that would be freed if the process
//! exited) is `Private_Clean + Private_Dirty + Private_Hugetlb`.

use super::{key_values, kilobytes};
use crate::error::ParseError;

const FILE: &str = "/proc/<pid>/smaps_rollup";

/// Memory totals of one process, in bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SmapsRollup {
    /// `Rss`.
    pub rss: Option<u64>,
    /// `Pss`: proportional set size.
    pub pss: Option<u64>,
    /// `Shared_Clean`.
    pub shared_clean: Option<u64>,
    /// `Shared_Dirty`.
    pub shared_dirty: Option<u64>,
    /// `Private_Clean`.
    pub private_clean: Option<u64>,
    /// `Private_Dirty`.
    pub private_dirty: Option<u64>,
    /// `Private_Hugetlb`.
    pub private_hugetlb: Option<u64>,
    /// `Swap`.
    pub swap: Option<u64>,
}

impl SmapsRollup {
    /// Unique set size, if the private counters are present.
    pub fn uss(&self) -> Option<u64> {
        Some(self.private_clean? + self.private_dirty? + self.private_hugetlb.unwrap_or(0))
    }
}

/// Parses the text of `/proc/<pid>/smaps_rollup`.
pub fn parse(text: &str) -> Result<SmapsRollup, ParseError> {
    let mut r = SmapsRollup::default();
    for (line, key, value) in key_values(text) {
        if line == 1 && text.lines().next().is_some_and(|l| l.contains('[')) {
            continue; // the address-range header
        }
        let slot = match key {
            "Rss" => &mut r.rss,
            "Pss" => &mut r.pss,
            "Shared_Clean" => &mut r.shared_clean,
            "Shared_Dirty" => &mut r.shared_dirty,
            "Private_Clean" => &mut r.private_clean,
            "Private_Dirty" => &mut r.private_dirty,
            "Private_Hugetlb" => &mut r.private_hugetlb,
            "Swap" => &mut r.swap,
            _ => continue,
        };
        *slot = Some(kilobytes(FILE, line, key, value)?);
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "557764651000-7ffca94df000 ---p 00000000 00:00 0                          [rollup]\nRss:                1708 kB\nPss:                 479 kB\nPss_Dirty:           112 kB\nShared_Clean:       1504 kB\nShared_Dirty:          0 kB\nPrivate_Clean:        92 kB\nPrivate_Dirty:       112 kB\nReferenced:         1708 kB\nAnonymous:           112 kB\nPrivate_Hugetlb:       0 kB\nSwap:                 16 kB\nSwapPss:               0 kB\nLocked:                0 kB\n";

    #[test]
    fn uss_is_the_sum_of_private_counters() {
        let r = parse(TEXT).unwrap();
        assert_eq!(r.rss, Some(1708 * 1024));
        assert_eq!(r.uss(), Some((92 + 112) * 1024));
        assert_eq!(r.swap, Some(16 * 1024));
    }

    #[test]
    fn an_empty_rollup_of_a_kernel_thread_has_no_uss() {
        let r = parse("").unwrap();
        assert_eq!(r.uss(), None);
    }

    #[test]
    fn a_malformed_value_is_an_error_naming_the_line() {
        let text = TEXT.replace("Private_Dirty:       112 kB", "Private_Dirty:       ?? kB");
        let e = parse(&text).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("/proc/<pid>/smaps_rollup", 8));
    }
}

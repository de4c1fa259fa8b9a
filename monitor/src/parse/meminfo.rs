//! `/proc/meminfo`: `Key: <n> kB` lines, see proc(5). `MemAvailable`
//! appeared in Linux 3.14; the other optional lines depend on configuration.

use super::{end_line, key_values, kilobytes};
use crate::error::ParseError;

const FILE: &str = "/proc/meminfo";

/// System memory in bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meminfo {
    /// `MemTotal`: usable RAM.
    pub mem_total: u64,
    /// `MemFree`: unused RAM.
    pub mem_free: u64,
    /// `MemAvailable`: estimate of memory available for new work.
    pub mem_available: Option<u64>,
    /// `Buffers`.
    pub buffers: Option<u64>,
    /// `Cached`: page cache (excluding swap cache).
    pub cached: Option<u64>,
    /// `Shmem`.
    pub shmem: Option<u64>,
    /// `SReclaimable`: reclaimable slab.
    pub s_reclaimable: Option<u64>,
    /// `SwapTotal`.
    pub swap_total: Option<u64>,
    /// `SwapFree`.
    pub swap_free: Option<u64>,
}

impl Meminfo {
    /// Memory in use: `MemTotal - MemAvailable`, or on kernels without
    /// `MemAvailable`, `MemTotal - MemFree - Buffers - Cached`.
    pub fn used(&self) -> u64 {
        match self.mem_available {
            Some(avail) => self.mem_total.saturating_sub(avail),
            None => self
                .mem_total
                .saturating_sub(self.mem_free)
                .saturating_sub(self.buffers.unwrap_or(0))
                .saturating_sub(self.cached.unwrap_or(0)),
        }
    }

    /// Swap in use, if the kernel reports swap.
    pub fn swap_used(&self) -> Option<u64> {
        Some(self.swap_total?.saturating_sub(self.swap_free?))
    }
}

/// Parses the text of `/proc/meminfo`.
pub fn parse(text: &str) -> Result<Meminfo, ParseError> {
    let mut m = Meminfo::default();
    let (mut total, mut free) = (None, None);
    for (line, key, value) in key_values(text) {
        let slot = match key {
            "MemTotal" => &mut total,
            "MemFree" => &mut free,
            "MemAvailable" => &mut m.mem_available,
            "Buffers" => &mut m.buffers,
            "Cached" => &mut m.cached,
            "Shmem" => &mut m.shmem,
            "SReclaimable" => &mut m.s_reclaimable,
            "SwapTotal" => &mut m.swap_total,
            "SwapFree" => &mut m.swap_free,
            _ => continue,
        };
        *slot = Some(kilobytes(FILE, line, key, value)?);
    }
    m.mem_total = total.ok_or_else(|| ParseError::new(FILE, end_line(text), "no MemTotal line"))?;
    m.mem_free = free.ok_or_else(|| ParseError::new(FILE, end_line(text), "no MemFree line"))?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "MemTotal:       24684084 kB\nMemFree:        22960428 kB\nMemAvailable:   24178616 kB\nBuffers:            7364 kB\nCached:          1351504 kB\nSwapCached:            0 kB\nActive:           598400 kB\nSwapTotal:       1048572 kB\nSwapFree:         1048060 kB\nShmem:              8872 kB\nSReclaimable:     186756 kB\nHugePages_Total:       0\n";

    #[test]
    fn used_memory_is_total_minus_available() {
        let m = parse(TEXT).unwrap();
        assert_eq!(m.mem_total, 24684084 * 1024);
        assert_eq!(m.used(), (24684084 - 24178616) * 1024);
        assert_eq!(m.cached, Some(1351504 * 1024));
        assert_eq!(m.swap_used(), Some(512 * 1024));
    }

    #[test]
    fn a_pre_3_14_kernel_without_memavailable_falls_back_to_free_buffers_cached() {
        let m =
            parse("MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 250 kB\n").unwrap();
        assert_eq!(m.mem_available, None);
        assert_eq!(m.used(), 600 * 1024);
        assert_eq!(m.swap_used(), None);
    }

    #[test]
    fn text_without_memtotal_is_an_error() {
        let e = parse("MemFree: 1 kB\n").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("/proc/meminfo", 2));
    }

    #[test]
    fn a_malformed_line_is_an_error_naming_it() {
        let e = parse("MemTotal: 1 kB\nMemFree: x kB\n").unwrap_err();
        assert_eq!(e.line, 2);
    }
}

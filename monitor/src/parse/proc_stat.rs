//! `/proc/stat`: kernel and per-CPU time counters, see proc(5).
//!
//! CPU lines carry up to ten columns in clock ticks; kernels before 2.6
//! have only the first four, `steal` came with 2.6.11 and `guest_nice` with
//! 2.6.33, so the later columns are `Option`s.

use super::number;
use crate::error::ParseError;

const FILE: &str = "/proc/stat";

/// Time one CPU (or all of them) spent in each state, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// Normal user mode.
    pub user: u64,
    /// Niced user mode.
    pub nice: u64,
    /// Kernel mode.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Waiting for I/O (counted as idle here).
    pub iowait: Option<u64>,
    /// Servicing interrupts.
    pub irq: Option<u64>,
    /// Servicing softirqs.
    pub softirq: Option<u64>,
    /// Stolen by the hypervisor.
    pub steal: Option<u64>,
    /// Running a guest (already included in `user`).
    pub guest: Option<u64>,
    /// Running a niced guest (already included in `nice`).
    pub guest_nice: Option<u64>,
}

impl CpuTimes {
    /// Ticks spent idle (idle + iowait).
    pub fn idle_ticks(&self) -> u64 {
        self.idle + self.iowait.unwrap_or(0)
    }

    /// All ticks (guest time is part of user/nice and not added again).
    pub fn total_ticks(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait.unwrap_or(0)
            + self.irq.unwrap_or(0)
            + self.softirq.unwrap_or(0)
            + self.steal.unwrap_or(0)
    }

    /// Percentage of time busy between `prev` and `self`, or `None` if no
    /// time passed (or the counters went backwards).
    pub fn busy_percent_since(&self, prev: &CpuTimes) -> Option<f64> {
        let total = self.total_ticks().checked_sub(prev.total_ticks())?;
        let idle = self.idle_ticks().checked_sub(prev.idle_ticks())?;
        if total == 0 {
            return None;
        }
        Some(100.0 * total.saturating_sub(idle) as f64 / total as f64)
    }
}

/// The parts of `/proc/stat` the sampler uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcStat {
    /// The aggregate `cpu` line.
    pub total: CpuTimes,
    /// The `cpuN` lines as `(N, times)`, in file order. Offline CPUs have no
    /// line.
    pub cpus: Vec<(u32, CpuTimes)>,
    /// `ctxt`: context switches since boot.
    pub ctxt: Option<u64>,
    /// `btime`: boot time in seconds since the Unix epoch.
    pub btime: Option<u64>,
    /// `processes`: forks since boot.
    pub processes: Option<u64>,
    /// `procs_running`.
    pub procs_running: Option<u64>,
    /// `procs_blocked`.
    pub procs_blocked: Option<u64>,
}

fn cpu_times(line: usize, what: &str, fields: &[&str]) -> Result<CpuTimes, ParseError> {
    if fields.len() < 4 {
        return Err(ParseError::new(
            FILE,
            line,
            format!(
                "{what}: expected at least 4 columns, found {}",
                fields.len()
            ),
        ));
    }
    let col = |i: usize| -> Result<Option<u64>, ParseError> {
        fields
            .get(i)
            .map(|t| number(FILE, line, what, t))
            .transpose()
    };
    Ok(CpuTimes {
        user: number(FILE, line, what, fields[0])?,
        nice: number(FILE, line, what, fields[1])?,
        system: number(FILE, line, what, fields[2])?,
        idle: number(FILE, line, what, fields[3])?,
        iowait: col(4)?,
        irq: col(5)?,
        softirq: col(6)?,
        steal: col(7)?,
        guest: col(8)?,
        guest_nice: col(9)?,
    })
}

/// Parses the text of `/proc/stat`.
pub fn parse(text: &str) -> Result<ProcStat, ParseError> {
    let mut s = ProcStat::default();
    let mut saw_total = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let mut it = line.split_ascii_whitespace();
        let Some(key) = it.next() else { continue };
        if let Some(idx) = key.strip_prefix("cpu") {
            let fields: Vec<&str> = it.collect();
            if idx.is_empty() {
                s.total = cpu_times(n, "cpu", &fields)?;
                saw_total = true;
            } else {
                let index = number(FILE, n, "cpu index", idx)?;
                s.cpus.push((index, cpu_times(n, key, &fields)?));
            }
            continue;
        }
        let slot = match key {
            "ctxt" => &mut s.ctxt,
            "btime" => &mut s.btime,
            "processes" => &mut s.processes,
            "procs_running" => &mut s.procs_running,
            "procs_blocked" => &mut s.procs_blocked,
            _ => continue,
        };
        let value = it
            .next()
            .ok_or_else(|| ParseError::new(FILE, n, format!("{key}: no value")))?;
        *slot = Some(number(FILE, n, key, value)?);
    }
    if !saw_total {
        return Err(ParseError::new(FILE, end(text), "no aggregate `cpu` line"));
    }
    Ok(s)
}

fn end(text: &str) -> usize {
    super::end_line(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "cpu  141588 0 33914 153979 1100 0 147 464 0 0\ncpu0 71995 0 16187 76920 229 0 21 242 0 0\ncpu1 69593 0 17727 77058 870 0 125 222 0 0\nintr 1043642 0 0 0\nctxt 1554463\nbtime 1795217977\nprocesses 63890\nprocs_running 3\nprocs_blocked 0\nsoftirq 528446 0 87253 4 6812 91840 0 170 101178 0 241189\n";

    #[test]
    fn aggregate_and_per_cpu_lines_are_read() {
        let s = parse(TEXT).unwrap();
        assert_eq!(s.total.user, 141588);
        assert_eq!(s.total.steal, Some(464));
        assert_eq!(s.cpus.len(), 2);
        assert_eq!(s.cpus[1].0, 1);
        assert_eq!(s.cpus[1].1.idle, 77058);
        assert_eq!(s.ctxt, Some(1554463));
        assert_eq!(s.btime, Some(1795217977));
        assert_eq!(s.procs_running, Some(3));
    }

    #[test]
    fn busy_percent_comes_from_the_deltas_of_two_readings() {
        let a = parse("cpu 100 0 100 800 0 0 0 0 0 0\n").unwrap().total;
        let b = parse("cpu 150 0 150 900 0 0 0 0 0 0\n").unwrap().total;
        assert_eq!(b.busy_percent_since(&a), Some(50.0));
        assert_eq!(a.busy_percent_since(&a), None);
        assert_eq!(a.busy_percent_since(&b), None);
    }

    #[test]
    fn an_old_kernel_with_four_columns_leaves_the_rest_none() {
        let s = parse("cpu 1 2 3 4\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!(s.total.iowait, None);
        assert_eq!(s.total.steal, None);
        assert_eq!(s.total.total_ticks(), 10);
        assert_eq!(s.ctxt, None);
    }

    #[test]
    fn a_short_cpu_line_is_an_error_naming_the_line() {
        let e = parse("cpu 1 2 3 4\ncpu0 1 2\n").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("/proc/stat", 2));
    }
}

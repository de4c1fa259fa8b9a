//! cgroup v2 files: a process's membership (`/proc/<pid>/cgroup`) and the
//! accounting files of a cgroup directory (`cpu.stat`, `io.stat`,
//! `memory.peak`, `cgroup.procs`), as described in the kernel's
//! `Documentation/admin-guide/cgroup-v2.rst`.
//!
//! A cgroup's counters cover every process that ever ran in it, including
//! the ones that started and ended between two samples.

use super::number;
use crate::error::ParseError;

/// The cgroup v2 path of a process (the `0::<path>` line of
/// `/proc/<pid>/cgroup`), or `None` on a kernel or system without the
/// unified hierarchy.
pub fn v2_path(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(str::trim)
        .filter(|p| p.starts_with('/'))
}

/// CPU time charged to a cgroup (`cpu.stat`), in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuStat {
    /// `usage_usec`: all CPU time.
    pub usage_usec: u64,
    /// `user_usec`: user-mode CPU time.
    pub user_usec: u64,
    /// `system_usec`: kernel-mode CPU time.
    pub system_usec: u64,
}

/// Parses `cpu.stat`. `usage_usec` is required (it is there without the
/// `cpu` controller); the others default to zero.
pub fn parse_cpu_stat(text: &str) -> Result<CpuStat, ParseError> {
    const FILE: &str = "<cgroup>/cpu.stat";
    let mut out = CpuStat::default();
    let mut usage = false;
    for (i, line) in text.lines().enumerate() {
        let Some((key, value)) = line.split_once(' ') else {
            continue;
        };
        let slot = match key {
            "usage_usec" => {
                usage = true;
                &mut out.usage_usec
            }
            "user_usec" => &mut out.user_usec,
            "system_usec" => &mut out.system_usec,
            _ => continue,
        };
        *slot = number(FILE, i + 1, key, value)?;
    }
    if !usage {
        return Err(ParseError::new(
            FILE,
            super::end_line(text),
            "no `usage_usec` line",
        ));
    }
    Ok(out)
}

/// Block I/O of a cgroup (`io.stat`), summed over devices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoStat {
    /// Bytes read (`rbytes`).
    pub rbytes: u64,
    /// Bytes written (`wbytes`).
    pub wbytes: u64,
    /// Read operations (`rios`).
    pub rios: u64,
    /// Write operations (`wios`).
    pub wios: u64,
}

/// Parses `io.stat`: one line per device, `MAJ:MIN key=value ...`. Keys
/// other than the four kept (`dbytes`, `dios`, cost fields) are skipped.
/// An empty file (no I/O yet) gives zeros.
pub fn parse_io_stat(text: &str) -> Result<IoStat, ParseError> {
    const FILE: &str = "<cgroup>/io.stat";
    let mut out = IoStat::default();
    for (i, line) in text.lines().enumerate() {
        for field in line.split_ascii_whitespace().skip(1) {
            let Some((key, value)) = field.split_once('=') else {
                continue;
            };
            let slot = match key {
                "rbytes" => &mut out.rbytes,
                "wbytes" => &mut out.wbytes,
                "rios" => &mut out.rios,
                "wios" => &mut out.wios,
                _ => continue,
            };
            let v: u64 = number(FILE, i + 1, key, value)?;
            *slot = slot.saturating_add(v);
        }
    }
    Ok(out)
}

/// Parses `cgroup.procs`: one pid per line.
pub fn parse_procs(text: &str) -> Result<Vec<i32>, ParseError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| number("<cgroup>/cgroup.procs", i + 1, "pid", l))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unified_hierarchy_line_gives_the_path() {
        let hybrid = "4:memory:/user.slice\n1:name=systemd:/x\n0::/system.slice/slurmstepd.scope/job_42/step_0\n";
        assert_eq!(
            v2_path(hybrid),
            Some("/system.slice/slurmstepd.scope/job_42/step_0")
        );
        assert_eq!(v2_path("0::/\n"), Some("/"));
        assert_eq!(v2_path("4:memory:/user.slice\n"), None);
    }

    #[test]
    fn cpu_stat_gives_usage_user_and_system() {
        let text = "usage_usec 2512345\nuser_usec 2400000\nsystem_usec 112345\nnr_periods 0\n";
        assert_eq!(
            parse_cpu_stat(text).unwrap(),
            CpuStat {
                usage_usec: 2_512_345,
                user_usec: 2_400_000,
                system_usec: 112_345
            }
        );
        let e = parse_cpu_stat("user_usec 1\n").unwrap_err();
        assert!(e.to_string().contains("usage_usec"), "{e}");
        assert!(parse_cpu_stat("usage_usec x\n").is_err());
    }

    #[test]
    fn io_stat_sums_every_device() {
        let text = "8:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n\
                    259:0 rbytes=100 wbytes=0 rios=3 wios=0 dbytes=0 dios=0\n";
        assert_eq!(
            parse_io_stat(text).unwrap(),
            IoStat {
                rbytes: 4196,
                wbytes: 8192,
                rios: 4,
                wios: 2
            }
        );
        assert_eq!(parse_io_stat("").unwrap(), IoStat::default());
    }

    #[test]
    fn cgroup_procs_lists_pids() {
        assert_eq!(parse_procs("12\n345\n").unwrap(), vec![12, 345]);
        assert!(parse_procs("12\nx\n").is_err());
    }
}

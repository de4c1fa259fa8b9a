//! `/proc/<pid>/stat`: one line of space-separated fields, see proc(5).
//!
//! The command name (field 2) is enclosed in parentheses and may itself
//! contain spaces and parentheses, so the fields after it are found from the
//! last `)` of the line.

use super::number;
use crate::error::ParseError;

const FILE: &str = "/proc/<pid>/stat";

/// The fields of `/proc/<pid>/stat` the sampler uses. Times are in clock
/// ticks (`sysconf(_SC_CLK_TCK)`), `rss` in pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PidStat {
    /// Process id (field 1).
    pub pid: i32,
    /// Command name without the parentheses (field 2).
    pub comm: String,
    /// State letter: R, S, D, Z, T, t, X, I... (field 3).
    pub state: char,
    /// Parent process id (field 4).
    pub ppid: i32,
    /// Minor faults (field 10).
    pub minflt: u64,
    /// Major faults (field 12).
    pub majflt: u64,
    /// User-mode CPU time in ticks (field 14).
    pub utime: u64,
    /// Kernel-mode CPU time in ticks (field 15).
    pub stime: u64,
    /// User time of waited-for children in ticks (field 16).
    pub cutime: i64,
    /// System time of waited-for children in ticks (field 17).
    pub cstime: i64,
    /// Number of threads (field 20).
    pub num_threads: u64,
    /// Start time after boot in ticks (field 22); with the pid it identifies
    /// a process across pid reuse.
    pub starttime: u64,
    /// Virtual memory size in bytes (field 23).
    pub vsize: u64,
    /// Resident set size in pages (field 24).
    pub rss_pages: u64,
    /// CPU last run on (field 39, since Linux 2.2.8).
    pub processor: Option<i32>,
    /// Aggregated block I/O delay in ticks (field 42, since Linux 2.6.18).
    pub delayacct_blkio_ticks: Option<u64>,
}

/// Parses the text of `/proc/<pid>/stat`.
pub fn parse(text: &str) -> Result<PidStat, ParseError> {
    let line = text.trim_end_matches('\n');
    if line.contains('\n') {
        return Err(ParseError::new(FILE, 2, "expected a single line"));
    }
    let open = line
        .find(" (")
        .ok_or_else(|| ParseError::new(FILE, 1, "no `(` opening the command name"))?;
    let close = line
        .rfind(')')
        .filter(|&c| c > open)
        .ok_or_else(|| ParseError::new(FILE, 1, "no `)` closing the command name"))?;
    let pid = number(FILE, 1, "pid", &line[..open])?;
    let comm = line[open + 2..close].to_string();
    // rest[0] is field 3.
    let rest: Vec<&str> = line[close + 1..].split_ascii_whitespace().collect();
    let field = |n: usize| -> Result<&str, ParseError> {
        rest.get(n - 3)
            .copied()
            .ok_or_else(|| ParseError::new(FILE, 1, format!("line ends before field {n}")))
    };
    let optional = |n: usize| rest.get(n - 3).copied();
    let state_text = field(3)?;
    let mut chars = state_text.chars();
    let state = match (chars.next(), chars.next()) {
        (Some(c), None) => c,
        _ => {
            return Err(ParseError::new(
                FILE,
                1,
                format!("state: expected one letter, found `{state_text}`"),
            ))
        }
    };
    Ok(PidStat {
        pid,
        comm,
        state,
        ppid: number(FILE, 1, "ppid", field(4)?)?,
        minflt: number(FILE, 1, "minflt", field(10)?)?,
        majflt: number(FILE, 1, "majflt", field(12)?)?,
        utime: number(FILE, 1, "utime", field(14)?)?,
        stime: number(FILE, 1, "stime", field(15)?)?,
        cutime: number(FILE, 1, "cutime", field(16)?)?,
        cstime: number(FILE, 1, "cstime", field(17)?)?,
        num_threads: number(FILE, 1, "num_threads", field(20)?)?,
        starttime: number(FILE, 1, "starttime", field(22)?)?,
        vsize: number(FILE, 1, "vsize", field(23)?)?,
        rss_pages: number(FILE, 1, "rss", field(24)?)?,
        processor: optional(39)
            .map(|t| number(FILE, 1, "processor", t))
            .transpose()?,
        delayacct_blkio_ticks: optional(42)
            .map(|t| number(FILE, 1, "delayacct_blkio_ticks", t))
            .transpose()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAT: &str = "31405 (cat) R 31399 31399 27787 0 -1 4194304 98 0 0 0 3 1 0 0 20 0 1 0 166146 3133440 382 18446744073709551615 94724824039424 94724824059305 140731485177296 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94724824075312 94724824076928 94724875079680 140731485178594 140731485178614 140731485178614 140731485179883 0\n";

    #[test]
    fn a_current_kernel_line_gives_times_memory_and_optional_fields() {
        let s = parse(CAT).unwrap();
        assert_eq!(s.pid, 31405);
        assert_eq!(s.comm, "cat");
        assert_eq!(s.state, 'R');
        assert_eq!(s.ppid, 31399);
        assert_eq!(s.minflt, 98);
        assert_eq!((s.utime, s.stime), (3, 1));
        assert_eq!(s.num_threads, 1);
        assert_eq!(s.starttime, 166146);
        assert_eq!(s.vsize, 3133440);
        assert_eq!(s.rss_pages, 382);
        assert_eq!(s.processor, Some(1));
        assert_eq!(s.delayacct_blkio_ticks, Some(0));
    }

    #[test]
    fn a_command_name_with_spaces_and_parentheses_is_read_whole() {
        let text = "42 (my (odd) name) S 1 42 42 0 -1 0 0 0 0 0 7 8 0 0 20 0 3 0 500 1000 10 0";
        let s = parse(text).unwrap();
        assert_eq!(s.comm, "my (odd) name");
        assert_eq!(s.ppid, 1);
        assert_eq!((s.utime, s.stime, s.num_threads), (7, 8, 3));
    }

    #[test]
    fn an_old_kernel_line_without_processor_leaves_it_none() {
        let text = "42 (old) S 1 42 42 0 -1 0 0 0 0 0 7 8 0 0 20 0 3 0 500 1000 10 0";
        let s = parse(text).unwrap();
        assert_eq!(s.processor, None);
        assert_eq!(s.delayacct_blkio_ticks, None);
    }

    #[test]
    fn a_truncated_line_is_an_error_naming_the_file_and_field() {
        let e = parse("42 (x) S 1 42 42 0").unwrap_err();
        assert_eq!(e.file, "/proc/<pid>/stat");
        assert_eq!(e.line, 1);
        assert!(e.message.contains("field 10"), "{e}");
    }

    #[test]
    fn a_non_numeric_time_is_an_error_naming_the_field() {
        let text = CAT.replacen(" 3 1 ", " x 1 ", 1);
        let e = parse(&text).unwrap_err();
        assert!(e.message.starts_with("utime"), "{e}");
    }
}

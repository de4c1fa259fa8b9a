//! `/proc/<pid>/status`: `Key:\tvalue` lines, see proc(5).
//!
//! Kernel threads have no `Vm*` lines; `RssAnon`, `RssFile` and `RssShmem`
//! appeared in Linux 4.5. Absent lines leave their field `None`.

use super::{key_values, kilobytes, number};
use crate::error::ParseError;

const FILE: &str = "/proc/<pid>/status";

/// The fields of `/proc/<pid>/status` the sampler uses; sizes in bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PidStatus {
    /// `Name`: the command name (possibly escaped by the kernel).
    pub name: Option<String>,
    /// `Tgid`: the process id.
    pub tgid: Option<i32>,
    /// `PPid`: the parent's process id.
    pub ppid: Option<i32>,
    /// `Threads`: number of threads.
    pub threads: Option<u64>,
    /// `VmSize`: virtual memory size.
    pub vm_size: Option<u64>,
    /// `VmHWM`: peak resident set size.
    pub vm_hwm: Option<u64>,
    /// `VmRSS`: resident set size.
    pub vm_rss: Option<u64>,
    /// `RssAnon`: resident anonymous memory.
    pub rss_anon: Option<u64>,
    /// `RssFile`: resident file mappings.
    pub rss_file: Option<u64>,
    /// `RssShmem`: resident shared memory.
    pub rss_shmem: Option<u64>,
    /// `VmSwap`: swapped-out anonymous memory.
    pub vm_swap: Option<u64>,
    /// `voluntary_ctxt_switches`.
    pub voluntary_ctxt_switches: Option<u64>,
    /// `nonvoluntary_ctxt_switches`.
    pub nonvoluntary_ctxt_switches: Option<u64>,
}

impl PidStatus {
    /// Resident memory that may be shared with other processes
    /// (`RssFile + RssShmem`, the same quantity as the third field of
    /// `/proc/<pid>/statm`), if the kernel reports both.
    pub fn shared(&self) -> Option<u64> {
        Some(self.rss_file? + self.rss_shmem?)
    }
}

/// Parses the text of `/proc/<pid>/status`.
pub fn parse(text: &str) -> Result<PidStatus, ParseError> {
    let mut s = PidStatus::default();
    for (line, key, value) in key_values(text) {
        let kb = || kilobytes(FILE, line, key, value).map(Some);
        let n = || number::<u64>(FILE, line, key, value).map(Some);
        let id = || number::<i32>(FILE, line, key, value).map(Some);
        match key {
            "Name" => s.name = Some(value.to_string()),
            "Tgid" => s.tgid = id()?,
            "PPid" => s.ppid = id()?,
            "Threads" => s.threads = n()?,
            "VmSize" => s.vm_size = kb()?,
            "VmHWM" => s.vm_hwm = kb()?,
            "VmRSS" => s.vm_rss = kb()?,
            "RssAnon" => s.rss_anon = kb()?,
            "RssFile" => s.rss_file = kb()?,
            "RssShmem" => s.rss_shmem = kb()?,
            "VmSwap" => s.vm_swap = kb()?,
            "voluntary_ctxt_switches" => s.voluntary_ctxt_switches = n()?,
            "nonvoluntary_ctxt_switches" => s.nonvoluntary_ctxt_switches = n()?,
            _ => {}
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAT: &str = "Name:\tcat\nUmask:\t0022\nState:\tR (running)\nTgid:\t31406\nNgid:\t0\nPid:\t31406\nPPid:\t31399\nTracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t256\nGroups:\t \nVmPeak:\t    3060 kB\nVmSize:\t    3060 kB\nVmLck:\t       0 kB\nVmHWM:\t    1756 kB\nVmRSS:\t    1756 kB\nRssAnon:\t     116 kB\nRssFile:\t    1640 kB\nRssShmem:\t       0 kB\nVmData:\t     360 kB\nVmSwap:\t       8 kB\nThreads:\t1\nSigQ:\t0/96365\nCpus_allowed_list:\t0-1\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n";

    #[test]
    fn a_user_process_gives_memory_in_bytes_and_context_switches() {
        let s = parse(CAT).unwrap();
        assert_eq!(s.name.as_deref(), Some("cat"));
        assert_eq!(s.tgid, Some(31406));
        assert_eq!(s.ppid, Some(31399));
        assert_eq!(s.threads, Some(1));
        assert_eq!(s.vm_size, Some(3060 * 1024));
        assert_eq!(s.vm_rss, Some(1756 * 1024));
        assert_eq!(s.shared(), Some(1640 * 1024));
        assert_eq!(s.vm_swap, Some(8 * 1024));
        assert_eq!(s.voluntary_ctxt_switches, Some(12));
        assert_eq!(s.nonvoluntary_ctxt_switches, Some(3));
    }

    #[test]
    fn a_kernel_thread_without_vm_lines_leaves_memory_none() {
        let text = "Name:\tkworker/0:1\nState:\tI (idle)\nTgid:\t7\nPPid:\t2\nThreads:\t1\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t0\n";
        let s = parse(text).unwrap();
        assert_eq!(s.vm_rss, None);
        assert_eq!(s.vm_swap, None);
        assert_eq!(s.shared(), None);
        assert_eq!(s.voluntary_ctxt_switches, Some(5));
    }

    #[test]
    fn a_pre_4_5_kernel_without_rss_breakdown_has_no_shared_figure() {
        let text = "Name:\told\nVmRSS:\t 100 kB\nThreads:\t2\n";
        let s = parse(text).unwrap();
        assert_eq!(s.vm_rss, Some(100 * 1024));
        assert_eq!(s.shared(), None);
    }

    #[test]
    fn a_malformed_size_is_an_error_naming_the_line() {
        let text = "Name:\tx\nVmRSS:\tlots kB\n";
        let e = parse(text).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("/proc/<pid>/status", 2));
        assert!(e.message.contains("VmRSS"), "{e}");
    }
}

//! The process tree of a root pid: the process and all its descendants,
//! found again at every sample.
//!
//! Descendants are found through `/proc/<pid>/task/<tid>/children`
//! (`CONFIG_PROC_CHILDREN`, present in distribution kernels); without it,
//! every `/proc/<pid>/stat` is scanned for parent ids.
//!
//! Reading is split in two tiers to keep the cost per sample low:
//!
//! - every sample: `stat` (CPU times, threads, RSS, VMS), and `io` and
//!   the `children` files unless [`ProcessDetail::io_interval`] and
//!   [`ProcessDetail::tree_interval`] space them out. Their descriptors stay open between samples (up to
//!   [`ProcessDetail::max_open_files`]) and are re-read from offset 0 with
//!   `pread`, which saves the open and close and about half the cost.
//! - details, refreshed at most every [`ProcessDetail::detail_interval`]
//!   and on a process's first sample: `status` (shared size, swap,
//!   context switches; `statm` stands in for the shared size on kernels
//!   older than 4.5), `smaps_rollup` (USS; the kernel walks every mapping)
//!   and the `fd` directory. Between refreshes the last values are carried;
//!   context-switch rates are given on refresh samples only, over the time
//!   since the previous refresh.
//!
//! Tree totals of counters (I/O, context switches) include the last values
//! seen of processes that have since exited, so they only grow; I/O of a
//! process reaped by a parent in the tree is in the parent's `io` file and
//! is counted there (see [`CpuAccounting`] for the same rule on CPU time). RSS, VMS
//! and shared sizes are summed over processes and so count shared pages
//! once per process; USS does not.
//!
//! CPU time is accounted so that processes which start and end between two
//! samples, and what a process did after the last sample before its exit,
//! are counted ([`CpuAccounting`]):
//!
//! - `cgroup`: where the roots' cgroup v2 (their common ancestor) holds the
//!   job's processes and nothing else, as SLURM and Flux arrange, the
//!   cgroup's `cpu.stat` gives the CPU time of everything that ever ran in
//!   it; `memory.peak` and `io.stat` are read too.
//! - `reaped-children` otherwise: each live process's own time plus the
//!   times of its children it has reaped (`cutime`, `cstime` of
//!   `/proc/<pid>/stat`, which the kernel adds up recursively at each
//!   `wait`). A process that disappears is counted with its last values
//!   only if its parent is not in the tree (an orphan, or a root), since a
//!   parent in the tree has reaped it and carries its full time.

use super::{clock_ticks_per_second, page_size, KeptFile, TextReader};
use crate::error::Error;
use crate::fd::{open_high, Kept};
use crate::parse::{cgroup, io, smaps_rollup, stat, statm, status};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// I/O counters (cumulative), as in `/proc/<pid>/io`. `None` where the
/// file is absent or unreadable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoCounters {
    /// Bytes read from storage (`read_bytes`).
    pub read_bytes: Option<u64>,
    /// Bytes written to storage, charged when page cache is dirtied
    /// (`write_bytes`).
    pub write_bytes: Option<u64>,
    /// Bytes passed to read-like calls (`rchar`).
    pub read_chars: Option<u64>,
    /// Bytes passed to write-like calls (`wchar`).
    pub write_chars: Option<u64>,
    /// Read-like calls (`syscr`).
    pub read_calls: Option<u64>,
    /// Write-like calls (`syscw`).
    pub write_calls: Option<u64>,
}

/// Per-second rates of [`IoCounters`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IoRates {
    /// `read_bytes` per second.
    pub read_bytes: Option<f64>,
    /// `write_bytes` per second.
    pub write_bytes: Option<f64>,
    /// `rchar` per second.
    pub read_chars: Option<f64>,
    /// `wchar` per second.
    pub write_chars: Option<f64>,
    /// `syscr` per second.
    pub read_calls: Option<f64>,
    /// `syscw` per second.
    pub write_calls: Option<f64>,
}

/// How the tree's CPU time is accounted (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuAccounting {
    /// The job's own cgroup v2 directory (absolute path).
    Cgroup(PathBuf),
    /// Live processes' times plus their reaped children's.
    ReapedChildren,
}

impl CpuAccounting {
    /// `cgroup` or `reaped-children`, as the metadata names the method.
    pub fn method(&self) -> &'static str {
        match self {
            CpuAccounting::Cgroup(_) => "cgroup",
            CpuAccounting::ReapedChildren => "reaped-children",
        }
    }
}

/// What the job's own cgroup reports (the `cgroup` accounting only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CgroupTotals {
    /// CPU time of every process that ran in the cgroup, microseconds.
    pub usage_usec: u64,
    /// Highest memory use of the cgroup, bytes (`memory.peak`, Linux 5.19
    /// and later).
    pub memory_peak_bytes: Option<u64>,
    /// Block I/O of the cgroup (`io.stat`, with the `io` controller).
    pub io: Option<crate::parse::cgroup::IoStat>,
}

/// One process of the tree at one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessSample {
    /// Process id.
    pub pid: i32,
    /// Parent process id.
    pub ppid: i32,
    /// Command name.
    pub name: String,
    /// State letter from `stat`.
    pub state: char,
    /// User-mode CPU time in seconds (cumulative).
    pub user_time_s: f64,
    /// Kernel-mode CPU time in seconds (cumulative).
    pub system_time_s: f64,
    /// User-mode CPU time of the children it has reaped, seconds.
    pub children_user_time_s: f64,
    /// Kernel-mode CPU time of the children it has reaped, seconds.
    pub children_system_time_s: f64,
    /// CPU use since the previous sample, in percent of one core.
    pub cpu_percent: Option<f64>,
    /// Threads.
    pub threads: u64,
    /// Open file descriptors (`None` if `/proc/<pid>/fd` is unreadable).
    pub fds: Option<u64>,
    /// Resident set size in bytes.
    pub rss_bytes: u64,
    /// Virtual memory size in bytes.
    pub vms_bytes: u64,
    /// Resident memory that may be shared, in bytes.
    pub shared_bytes: Option<u64>,
    /// Unique set size in bytes (from `smaps_rollup`).
    pub uss_bytes: Option<u64>,
    /// Swapped-out memory in bytes.
    pub swap_bytes: Option<u64>,
    /// RSS as a percentage of `MemTotal`.
    pub memory_percent: Option<f64>,
    /// I/O counters.
    pub io: IoCounters,
    /// Voluntary context switches (cumulative).
    pub voluntary_ctxt_switches: Option<u64>,
    /// Involuntary context switches (cumulative).
    pub nonvoluntary_ctxt_switches: Option<u64>,
}

/// Sums over the whole tree. Counters include exited processes (see the
/// module documentation).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TreeTotals {
    /// Processes in the tree now.
    pub processes: usize,
    /// Threads in the tree now.
    pub threads: u64,
    /// Open file descriptors of the processes whose `fd` directory is
    /// readable.
    pub fds: Option<u64>,
    /// User-mode CPU time in seconds of every process the tree has run,
    /// by the [`CpuAccounting`] method.
    pub user_time_s: f64,
    /// Kernel-mode CPU time in seconds, likewise.
    pub system_time_s: f64,
    /// The job's cgroup figures, with the `cgroup` accounting.
    pub cgroup: Option<CgroupTotals>,
    /// Sum of RSS in bytes.
    pub rss_bytes: u64,
    /// Sum of VMS in bytes.
    pub vms_bytes: u64,
    /// Sum of shared sizes in bytes.
    pub shared_bytes: Option<u64>,
    /// Sum of USS in bytes.
    pub uss_bytes: Option<u64>,
    /// Sum of swap in bytes.
    pub swap_bytes: Option<u64>,
    /// Sum of RSS as a percentage of `MemTotal`.
    pub memory_percent: Option<f64>,
    /// I/O counters.
    pub io: IoCounters,
    /// Voluntary context switches.
    pub voluntary_ctxt_switches: Option<u64>,
    /// Involuntary context switches.
    pub nonvoluntary_ctxt_switches: Option<u64>,
}

/// Rates of the tree since the previous sample (`None` on the first, but
/// for the CPU percentage).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TreeRates {
    /// CPU use in percent of one core (above 100 for parallel work). On
    /// the first sample, the average since the earliest root started.
    pub cpu_percent: Option<f64>,
    /// I/O per second.
    pub io: IoRates,
    /// Voluntary context switches per second.
    pub voluntary_ctxt_switches: Option<f64>,
    /// Involuntary context switches per second.
    pub nonvoluntary_ctxt_switches: Option<f64>,
}

/// The process tree at one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessTreeSample {
    /// The root of the tree.
    pub root_pid: i32,
    /// Every process of the tree, root first, parents before children.
    pub processes: Vec<ProcessSample>,
    /// Sums.
    pub totals: TreeTotals,
    /// Rates.
    pub rates: TreeRates,
    /// True if this sample refreshed the detail tier (shared, USS, swap,
    /// descriptors, context switches); otherwise those are carried over.
    pub detail_fresh: bool,
}

/// What the process source reads beyond `stat`, and how often.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessDetail {
    /// Read `/proc/<pid>/io` at every sample.
    pub io: bool,
    /// Read `smaps_rollup` for USS at detail refreshes.
    pub uss: bool,
    /// Count the entries of `/proc/<pid>/fd` at detail refreshes.
    pub fds: bool,
    /// Least time between detail refreshes (`Duration::ZERO`: every
    /// sample). Default 1 s.
    pub detail_interval: Duration,
    /// Least time between reads of `/proc/<pid>/io` (`Duration::ZERO`, the
    /// default: every sample). In between, each process's last I/O counters
    /// are carried and no I/O rate is given; a new process is read at once.
    pub io_interval: Duration,
    /// Least time between reads of the `children` files that find new
    /// descendants (`Duration::ZERO`, the default: every sample). In
    /// between, each known process keeps the children found last; a
    /// process started meanwhile is found at the next read. Also in
    /// between, an idle process without children (its `stat` unchanged
    /// over two reads) is not read again, unless its parent has just
    /// reaped a child: its values stand, and every process is read at
    /// each tree read.
    pub tree_interval: Duration,
    /// Most descriptors kept open between samples; past that, files are
    /// opened and closed at each read. Default 256.
    pub max_open_files: usize,
}

impl Default for ProcessDetail {
    fn default() -> Self {
        ProcessDetail {
            io: true,
            uss: true,
            fds: true,
            detail_interval: Duration::from_secs(1),
            io_interval: Duration::ZERO,
            tree_interval: Duration::ZERO,
            max_open_files: 256,
        }
    }
}

/// Cumulative counters read at every sample.
#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    ticks_user: u64,
    ticks_system: u64,
    /// Reaped children's ticks (`cutime`, `cstime`).
    cticks_user: u64,
    cticks_system: u64,
    io: IoCounters,
}

/// Values of the detail tier, carried between refreshes.
#[derive(Debug, Clone, Copy, Default)]
struct Detail {
    shared: Option<u64>,
    uss: Option<u64>,
    swap: Option<u64>,
    fds: Option<u64>,
    vol: Option<u64>,
    nonvol: Option<u64>,
}

/// Descriptors kept open for one process.
#[derive(Debug, Default)]
struct Files {
    stat: Option<Kept<File>>,
    io: Option<Kept<File>>,
    children: Vec<(i32, Kept<File>)>,
}

impl Files {
    fn count(&self) -> usize {
        usize::from(self.stat.is_some()) + usize::from(self.io.is_some()) + self.children.len()
    }
}

/// What is kept of a process between samples.
#[derive(Debug, Default)]
struct Tracked {
    /// Read at least once (so `starttime` and `counters` are valid).
    seen: bool,
    starttime: u64,
    /// Parent at the last read.
    ppid: i32,
    counters: Counters,
    detail: Detail,
    /// Context switches at the last global refresh, the base of the rate.
    ctx_base: Option<(Option<u64>, Option<u64>)>,
    files: Files,
    /// Children found at the last tree read.
    kids: Vec<i32>,
    /// `stat` at the last read, and how many reads in a row found it
    /// unchanged (an idle process).
    last_stat: Option<stat::PidStat>,
    idle_reads: u8,
}

/// A process whose `stat` did not change over this many reads in a row
/// is idle.
const IDLE_READS: u8 = 2;

fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.saturating_add(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

fn add_io(a: IoCounters, b: IoCounters) -> IoCounters {
    IoCounters {
        read_bytes: add(a.read_bytes, b.read_bytes),
        write_bytes: add(a.write_bytes, b.write_bytes),
        read_chars: add(a.read_chars, b.read_chars),
        write_chars: add(a.write_chars, b.write_chars),
        read_calls: add(a.read_calls, b.read_calls),
        write_calls: add(a.write_calls, b.write_calls),
    }
}

/// Growth of a counter; a process without a previous reading contributes
/// its whole value (it started after the previous reading).
fn growth(prev: Option<Option<u64>>, cur: Option<u64>) -> Option<u64> {
    match prev {
        Some(p) => Some(cur?.saturating_sub(p?)),
        None => cur,
    }
}

fn io_growth(prev: Option<&IoCounters>, cur: &IoCounters) -> IoCounters {
    IoCounters {
        read_bytes: growth(prev.map(|x| x.read_bytes), cur.read_bytes),
        write_bytes: growth(prev.map(|x| x.write_bytes), cur.write_bytes),
        read_chars: growth(prev.map(|x| x.read_chars), cur.read_chars),
        write_chars: growth(prev.map(|x| x.write_chars), cur.write_chars),
        read_calls: growth(prev.map(|x| x.read_calls), cur.read_calls),
        write_calls: growth(prev.map(|x| x.write_calls), cur.write_calls),
    }
}

/// Reads the process tree of one root pid.
#[derive(Debug)]
pub struct ProcessSource {
    proc_root: PathBuf,
    root_pid: i32,
    /// Further roots followed beside `root_pid` (a job with several
    /// processes started apart, such as the tasks of a scheduler's step).
    extra_roots: Vec<i32>,
    children_files: bool,
    detail: ProcessDetail,
    reader: TextReader,
    ticks_per_s: f64,
    page: u64,
    mem_total: Option<u64>,
    tracked: HashMap<i32, Tracked>,
    open_files: usize,
    retired: (Counters, Detail),
    /// Processes gone during the current sample, accounted at its end.
    gone: Vec<Tracked>,
    sys_root: PathBuf,
    accounting: CpuAccounting,
    cgroup_files: Option<CgroupFiles>,
    /// CPU ticks (or cgroup microseconds) at the previous sample.
    prev_cpu: Option<f64>,
    prev_time: Option<Instant>,
    last_refresh: Option<Instant>,
    /// When the `children` files were last read.
    last_tree: Option<Instant>,
    /// When the `io` files were last read.
    last_io: Option<Instant>,
    root_gone: bool,
}

/// A file of one process, re-read through a kept descriptor when there is
/// one, else opened (and kept if the budget allows). The path is built
/// only when the file must be opened or an error named.
fn read_kept<'r>(
    reader: &'r mut TextReader,
    kept: &mut Option<Kept<File>>,
    path: &dyn Fn() -> PathBuf,
    may_keep: bool,
    open_files: &mut usize,
) -> Result<&'r str, Error> {
    // One identity check per read: the descriptor is checked ours once
    // and then used.
    let ours = kept.as_ref().map(Kept::get);
    let file = match ours {
        Some(Some(f)) => f,
        _ => {
            if ours.is_some() {
                // Closed or replaced by the program hosting the sampler:
                // forgotten (never closed) and opened again.
                *kept = None;
                *open_files = open_files.saturating_sub(1);
            }
            let p = path();
            if !may_keep {
                let mut f = File::open(&p).map_err(|e| Error::io(&p, e))?;
                return reader.read_open(&mut f, &p);
            }
            let f = open_high(&p).map_err(|e| Error::io(&p, e))?;
            *kept = Kept::new(f);
            match kept.as_ref() {
                Some(k) => {
                    *open_files += 1;
                    k.just_kept()
                }
                None => return Err(Error::io(&p, std::io::ErrorKind::NotFound.into())),
            }
        }
    };
    if let Err(e) = reader.reread(file, Path::new("")) {
        let p = path();
        return Err(match e {
            Error::Io { source, .. } => Error::io(&p, source),
            other => other,
        });
    }
    Ok(reader.text())
}

impl ProcessSource {
    /// Checks that `root_pid` exists under `proc_root`; the error is the
    /// reason the source is unavailable.
    pub fn probe(
        proc_root: &Path,
        sys_root: &Path,
        root_pid: i32,
        detail: ProcessDetail,
    ) -> Result<Self, String> {
        let stat = proc_root.join(format!("{root_pid}/stat"));
        let mut reader = TextReader::default();
        if let Err(e) = reader.read(&stat) {
            return Err(if e.is_not_found() {
                format!(
                    "process {root_pid} does not exist ({} not found)",
                    stat.display()
                )
            } else {
                format!("cannot read process {root_pid}: {e}")
            });
        }
        let children_files = proc_root
            .join(format!("{root_pid}/task/{root_pid}/children"))
            .exists();
        let mem_total = reader
            .read(&proc_root.join("meminfo"))
            .ok()
            .and_then(|t| crate::parse::meminfo::parse(t).ok())
            .map(|m| m.mem_total);
        let mut source = ProcessSource {
            proc_root: proc_root.to_path_buf(),
            root_pid,
            extra_roots: Vec::new(),
            children_files,
            detail,
            reader,
            ticks_per_s: clock_ticks_per_second(),
            page: page_size(),
            mem_total,
            tracked: HashMap::new(),
            open_files: 0,
            retired: (Counters::default(), Detail::default()),
            gone: Vec::new(),
            sys_root: sys_root.to_path_buf(),
            accounting: CpuAccounting::ReapedChildren,
            cgroup_files: None,
            prev_cpu: None,
            prev_time: None,
            last_refresh: None,
            last_tree: None,
            last_io: None,
            root_gone: false,
        };
        source.detect_cgroup();
        Ok(source)
    }

    /// How CPU time is accounted.
    pub fn accounting(&self) -> &CpuAccounting {
        &self.accounting
    }

    /// Chooses the CPU accounting for the current roots: their cgroup if
    /// it is the job's own (see [`job_cgroup`]), else reaped children.
    fn detect_cgroup(&mut self) {
        let roots = self.roots();
        let own = job_cgroup(&self.proc_root, &self.sys_root, &roots);
        self.cgroup_files = own.as_ref().map(|dir| CgroupFiles {
            cpu: KeptFile::new(dir.join("cpu.stat")),
            peak: KeptFile::new(dir.join("memory.peak")),
            io: KeptFile::new(dir.join("io.stat")),
            peak_absent: false,
            io_absent: false,
            last_peak: None,
            last_io: None,
        });
        let next = match own {
            Some(dir) => CpuAccounting::Cgroup(dir),
            None => CpuAccounting::ReapedChildren,
        };
        if next != self.accounting {
            // The two methods count from different origins.
            self.prev_cpu = None;
            self.accounting = next;
        }
    }

    /// Whether descendants are found through `children` files (`true`) or
    /// by scanning all processes.
    pub fn uses_children_files(&self) -> bool {
        self.children_files
    }

    /// Follows `roots` from the next sample on: the first one becomes the
    /// root, the others are followed beside it (their trees are summed
    /// with its tree; a process found twice counts once). A source whose
    /// roots had all exited samples again if one of the new roots exists.
    /// An empty list leaves the roots as they are.
    pub fn set_roots(&mut self, roots: &[i32]) {
        let Some((&first, rest)) = roots.split_first() else {
            return;
        };
        let before = self.roots();
        self.root_pid = first;
        self.extra_roots = rest.iter().copied().filter(|&p| p != first).collect();
        self.root_gone = false;
        if self.roots() != before {
            self.detect_cgroup();
        }
    }

    /// The roots followed: the root first, then the others.
    pub fn roots(&self) -> Vec<i32> {
        let mut v = vec![self.root_pid];
        v.extend(&self.extra_roots);
        v
    }

    /// Descriptors currently kept open.
    pub fn open_files(&self) -> usize {
        self.open_files
    }

    fn path(&self, pid: i32, rest: &str) -> PathBuf {
        let mut p = self.proc_root.join(pid.to_string());
        p.push(rest);
        p
    }

    fn may_keep(&self) -> bool {
        self.open_files < self.detail.max_open_files
    }

    /// Children of `pid` from the `children` file of each of its threads.
    fn children_of(&mut self, pid: i32, threads: u64, files: &mut Files, out: &mut Vec<i32>) {
        let tids: Vec<i32> = if threads <= 1 {
            vec![pid]
        } else {
            numeric_entries(&self.path(pid, "task"))
        };
        let mut kept = std::mem::take(&mut files.children);
        for tid in tids {
            let may_keep = self.may_keep();
            let root = &self.proc_root;
            let path = || root.join(format!("{pid}/task/{tid}/children"));
            let mut slot = kept
                .iter()
                .position(|(t, _)| *t == tid)
                .map(|i| kept.swap_remove(i).1);
            if let Ok(text) = read_kept(
                &mut self.reader,
                &mut slot,
                &path,
                may_keep,
                &mut self.open_files,
            ) {
                out.extend(
                    text.split_ascii_whitespace()
                        .filter_map(|t| t.parse::<i32>().ok()),
                );
            }
            if let Some(f) = slot {
                files.children.push((tid, f));
            }
        }
        // Descriptors of threads that have exited are closed here.
        self.open_files = self.open_files.saturating_sub(kept.len());
    }

    /// Parent ids of every process, for kernels without `children` files.
    fn parent_map(&mut self) -> HashMap<i32, Vec<i32>> {
        let mut map: HashMap<i32, Vec<i32>> = HashMap::new();
        for pid in numeric_entries(&self.proc_root) {
            let path = self.path(pid, "stat");
            if let Ok(Ok(s)) = self.reader.read(&path).map(stat::parse) {
                map.entry(s.ppid).or_default().push(pid);
            }
        }
        map
    }

    fn read_detail(&mut self, pid: i32, notes: &mut Vec<String>) -> Detail {
        let mut d = Detail::default();
        let status_path = self.path(pid, "status");
        if let Ok(Ok(st)) = self.reader.read(&status_path).map(status::parse) {
            d.shared = st.shared();
            d.swap = st.vm_swap;
            d.vol = st.voluntary_ctxt_switches;
            d.nonvol = st.nonvoluntary_ctxt_switches;
        }
        if d.shared.is_none() {
            if let Ok(Ok(m)) = self.reader.read(&self.path(pid, "statm")).map(statm::parse) {
                d.shared = Some(m.shared * self.page);
            }
        }
        if self.detail.uss {
            let path = self.path(pid, "smaps_rollup");
            let rollup = self
                .reader
                .read(&path)
                .map(|text| smaps_rollup::parse(text).unwrap_or_default());
            match rollup {
                Ok(r) => {
                    d.uss = r.uss();
                    d.swap = d.swap.or(r.swap);
                }
                Err(e) if e.is_permission_denied() => notes.push(
                    "/proc/<pid>/smaps_rollup is not readable for some processes (permission denied); no USS for them"
                        .to_string(),
                ),
                Err(e) if e.is_not_found() && self.path(pid, "").exists() => notes.push(
                    "/proc/<pid>/smaps_rollup is absent (kernel older than 4.14); no USS".to_string(),
                ),
                Err(_) => {}
            }
        }
        if self.detail.fds {
            let dir = self.path(pid, "fd");
            match std::fs::read_dir(&dir) {
                Ok(entries) => d.fds = Some(entries.count() as u64),
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => notes.push(
                    "/proc/<pid>/fd is not readable for some processes (permission denied); their descriptors are not counted"
                        .to_string(),
                ),
                Err(_) => {}
            }
        }
        d
    }

    /// Reads one process's every-sample files; `None` if it has gone.
    fn read_fast(
        &mut self,
        pid: i32,
        files: &mut Files,
        notes: &mut Vec<String>,
        read_io: bool,
    ) -> Option<(stat::PidStat, IoCounters)> {
        let root = &self.proc_root;
        let path = || root.join(format!("{pid}/stat"));
        let may_keep = self.open_files < self.detail.max_open_files;
        let st = match read_kept(
            &mut self.reader,
            &mut files.stat,
            &path,
            may_keep,
            &mut self.open_files,
        ) {
            Ok(text) => match stat::parse(text) {
                Ok(s) => s,
                Err(e) => {
                    notes.push(format!("unreadable stat file: {}", e.in_file(&path())));
                    return None;
                }
            },
            Err(_) => return None,
        };
        let mut io = IoCounters::default();
        if self.detail.io && read_io {
            let root = &self.proc_root;
            let path = || root.join(format!("{pid}/io"));
            let may_keep = self.open_files < self.detail.max_open_files;
            let parsed = read_kept(
                &mut self.reader,
                &mut files.io,
                &path,
                may_keep,
                &mut self.open_files,
            )
            .map(|text| io::parse(text).unwrap_or_default());
            match parsed {
                Ok(p) => {
                    io = IoCounters {
                        read_bytes: p.read_bytes,
                        write_bytes: p.write_bytes,
                        read_chars: p.rchar,
                        write_chars: p.wchar,
                        read_calls: p.syscr,
                        write_calls: p.syscw,
                    };
                }
                Err(e) if e.is_permission_denied() => notes.push(
                    "/proc/<pid>/io is not readable for some processes (permission denied); their I/O is left out"
                        .to_string(),
                ),
                Err(e) if e.is_not_found() && self.path(pid, "").exists() => notes.push(
                    "/proc/<pid>/io is absent (kernel without CONFIG_TASK_IO_ACCOUNTING); no process I/O"
                        .to_string(),
                ),
                Err(_) => {}
            }
        }
        Some((st, io))
    }

    /// Samples the tree. `None` once every root has exited (noted
    /// once in `notes`).
    pub fn sample(&mut self, now: Instant, notes: &mut Vec<String>) -> Option<ProcessTreeSample> {
        if self.root_gone {
            return None;
        }
        let dt = self
            .prev_time
            .map(|t| now.duration_since(t).as_secs_f64())
            .filter(|&d| d > 0.0);
        let refresh = self
            .last_refresh
            .is_none_or(|t| now.duration_since(t) >= self.detail.detail_interval);
        let refresh_dt = self
            .last_refresh
            .map(|t| now.duration_since(t).as_secs_f64())
            .filter(|&d| d > 0.0);
        let tree = self
            .last_tree
            .is_none_or(|t| now.duration_since(t) >= self.detail.tree_interval);
        let io_refresh = self
            .last_io
            .is_none_or(|t| now.duration_since(t) >= self.detail.io_interval);
        let io_dt = self
            .last_io
            .map(|t| now.duration_since(t).as_secs_f64())
            .filter(|&d| d > 0.0 && io_refresh);
        let parents = (!self.children_files && tree).then(|| self.parent_map());

        let mut found: Vec<(ProcessSample, Tracked)> = Vec::new();
        let mut next: HashMap<i32, Tracked> = HashMap::new();
        let mut seen = HashSet::new();
        let mut queue = self.roots();
        let mut i = 0;
        let mut grow_io = IoCounters::default();
        let (mut grow_vol, mut grow_nonvol) = (None, None);
        // Processes whose reaped children's times grew in this sample.
        let mut reaped_by: HashSet<i32> = HashSet::new();
        while i < queue.len() {
            let pid = queue[i];
            i += 1;
            if !seen.insert(pid) {
                continue;
            }
            let mut t = self.tracked.remove(&pid).unwrap_or_default();
            // Between tree reads, an idle process without children is not
            // read again, unless its parent has just reaped a child (it
            // may be that child).
            let skip = !tree
                && t.seen
                && t.idle_reads >= IDLE_READS
                && t.kids.is_empty()
                && !reaped_by.contains(&t.ppid);
            let read_io = !skip && (io_refresh || !t.seen);
            let mut fast = match (&t.last_stat, skip) {
                (Some(last), true) => Some((last.clone(), IoCounters::default())),
                _ => self.read_fast(pid, &mut t.files, notes, read_io),
            };
            if fast.is_none() && t.seen {
                // The kept descriptors belong to a process that has gone;
                // the pid may have been reused.
                self.retire(std::mem::take(&mut t));
                fast = self.read_fast(pid, &mut t.files, notes, true);
            }
            let Some((st, mut io)) = fast else {
                self.retire(t);
                continue;
            };
            // A reused pid is a new process.
            let prev = if t.seen && t.starttime == st.starttime {
                Some(t.counters)
            } else {
                if t.seen {
                    let files = std::mem::take(&mut t.files);
                    let mut old = std::mem::take(&mut t);
                    t.files = files;
                    old.files = Files::default();
                    self.retire(old);
                }
                None
            };
            let first_sight = prev.is_none();
            if !read_io {
                // Between I/O reads the last counters stand.
                io = prev.map(|p| p.io).unwrap_or_default();
            }
            let counters = Counters {
                ticks_user: st.utime,
                ticks_system: st.stime,
                cticks_user: u64::try_from(st.cutime).unwrap_or(0),
                cticks_system: u64::try_from(st.cstime).unwrap_or(0),
                io,
            };
            if let Some(p) = prev {
                if counters.cticks_user + counters.cticks_system > p.cticks_user + p.cticks_system {
                    reaped_by.insert(pid);
                }
            }
            if !skip {
                let same = t.last_stat.as_ref().is_some_and(|o| {
                    (o.utime, o.stime, o.cutime, o.cstime, o.starttime)
                        == (st.utime, st.stime, st.cutime, st.cstime, st.starttime)
                        && (o.rss_pages, o.num_threads, o.state)
                            == (st.rss_pages, st.num_threads, st.state)
                });
                t.idle_reads = if same {
                    t.idle_reads.saturating_add(1)
                } else {
                    0
                };
                t.last_stat = Some(st.clone());
            }
            if first_sight || refresh {
                t.detail = self.read_detail(pid, notes);
            }
            if refresh {
                let base = t.ctx_base;
                grow_vol = add(grow_vol, growth(base.map(|b| b.0), t.detail.vol));
                grow_nonvol = add(grow_nonvol, growth(base.map(|b| b.1), t.detail.nonvol));
                t.ctx_base = Some((t.detail.vol, t.detail.nonvol));
            }
            let ticks = st.utime + st.stime;
            let d_ticks = match prev {
                Some(p) => ticks.saturating_sub(p.ticks_user + p.ticks_system),
                None => ticks,
            };
            grow_io = add_io(grow_io, io_growth(prev.as_ref().map(|p| &p.io), &io));

            if tree || first_sight {
                let mut kids = Vec::new();
                match &parents {
                    Some(map) => kids.extend(map.get(&pid).into_iter().flatten().copied()),
                    None if self.children_files => {
                        self.children_of(pid, st.num_threads, &mut t.files, &mut kids)
                    }
                    // Between parent-map reads: a new process keeps no
                    // children until the next one.
                    None => {}
                }
                t.kids = kids;
            }
            queue.extend(t.kids.iter().copied());

            let rss = st.rss_pages * self.page;
            let sample = ProcessSample {
                pid: st.pid,
                ppid: st.ppid,
                name: st.comm,
                state: st.state,
                user_time_s: st.utime as f64 / self.ticks_per_s,
                system_time_s: st.stime as f64 / self.ticks_per_s,
                children_user_time_s: counters.cticks_user as f64 / self.ticks_per_s,
                children_system_time_s: counters.cticks_system as f64 / self.ticks_per_s,
                cpu_percent: dt
                    .filter(|_| prev.is_some())
                    .map(|dt| 100.0 * d_ticks as f64 / self.ticks_per_s / dt),
                threads: st.num_threads,
                fds: t.detail.fds,
                rss_bytes: rss,
                vms_bytes: st.vsize,
                shared_bytes: t.detail.shared,
                uss_bytes: t.detail.uss,
                swap_bytes: t.detail.swap,
                memory_percent: self
                    .mem_total
                    .filter(|&m| m > 0)
                    .map(|m| 100.0 * rss as f64 / m as f64),
                io,
                voluntary_ctxt_switches: t.detail.vol,
                nonvoluntary_ctxt_switches: t.detail.nonvol,
            };
            t.seen = true;
            t.starttime = st.starttime;
            t.ppid = st.ppid;
            t.counters = counters;
            found.push((sample, t));
        }
        // What is left in `tracked` has exited: keep its last counters.
        for (_, t) in std::mem::take(&mut self.tracked) {
            self.retire(t);
        }
        let live: HashSet<i32> = found.iter().map(|p| p.0.pid).collect();
        self.account_gone(&live);
        let roots = self.roots();
        if !found.iter().any(|p| roots.contains(&p.0.pid)) {
            self.root_gone = true;
            for (_, t) in found {
                self.retire(t);
            }
            self.account_gone(&HashSet::new());
            let which = match roots.len() {
                1 => format!("root process {} has", self.root_pid),
                n => format!("all {n} root processes have"),
            };
            notes.push(format!(
                "{which} exited; the process tree is no longer sampled"
            ));
            return None;
        }
        self.prev_time = Some(now);
        if refresh {
            self.last_refresh = Some(now);
        }
        if tree {
            self.last_tree = Some(now);
        }
        if io_refresh {
            self.last_io = Some(now);
        }

        let (rc, rd) = self.retired;
        let (mut user, mut system) = (
            rc.ticks_user + rc.cticks_user,
            rc.ticks_system + rc.cticks_system,
        );
        for (_, tr) in &found {
            user += tr.counters.ticks_user + tr.counters.cticks_user;
            system += tr.counters.ticks_system + tr.counters.cticks_system;
        }
        let (mut user_s, mut system_s) = (
            user as f64 / self.ticks_per_s,
            system as f64 / self.ticks_per_s,
        );
        let cgroup = self.read_cgroup(refresh, notes);
        if let Some(c) = &cgroup {
            (user_s, system_s) = (c.1 as f64 / 1e6, c.2 as f64 / 1e6);
        }
        let cpu_s = match &cgroup {
            Some(c) => c.0.usage_usec as f64 / 1e6,
            None => user_s + system_s,
        };
        let cpu_percent = match (self.prev_cpu, dt) {
            (Some(prev), Some(dt)) => Some(100.0 * (cpu_s - prev).max(0.0) / dt),
            _ => self.lifetime_percent(cpu_s, &found),
        };
        self.prev_cpu = Some(cpu_s);
        let per_s = |v: Option<u64>, dt: Option<f64>| Some(v? as f64 / dt?);
        let rates = TreeRates {
            cpu_percent,
            io: IoRates {
                read_bytes: per_s(grow_io.read_bytes, io_dt),
                write_bytes: per_s(grow_io.write_bytes, io_dt),
                read_chars: per_s(grow_io.read_chars, io_dt),
                write_chars: per_s(grow_io.write_chars, io_dt),
                read_calls: per_s(grow_io.read_calls, io_dt),
                write_calls: per_s(grow_io.write_calls, io_dt),
            },
            voluntary_ctxt_switches: per_s(grow_vol, refresh_dt.filter(|_| refresh)),
            nonvoluntary_ctxt_switches: per_s(grow_nonvol, refresh_dt.filter(|_| refresh)),
        };

        let mut t = TreeTotals {
            processes: found.len(),
            cgroup: cgroup.map(|c| c.0),
            io: rc.io,
            voluntary_ctxt_switches: rd.vol,
            nonvoluntary_ctxt_switches: rd.nonvol,
            ..TreeTotals::default()
        };
        for (p, _) in &found {
            t.threads += p.threads;
            t.fds = add(t.fds, p.fds);
            t.rss_bytes += p.rss_bytes;
            t.vms_bytes += p.vms_bytes;
            t.shared_bytes = add(t.shared_bytes, p.shared_bytes);
            t.uss_bytes = add(t.uss_bytes, p.uss_bytes);
            t.swap_bytes = add(t.swap_bytes, p.swap_bytes);
            t.io = add_io(t.io, p.io);
            t.voluntary_ctxt_switches = add(t.voluntary_ctxt_switches, p.voluntary_ctxt_switches);
            t.nonvoluntary_ctxt_switches =
                add(t.nonvoluntary_ctxt_switches, p.nonvoluntary_ctxt_switches);
        }
        t.user_time_s = user_s;
        t.system_time_s = system_s;
        t.memory_percent = self
            .mem_total
            .filter(|&m| m > 0)
            .map(|m| 100.0 * t.rss_bytes as f64 / m as f64);

        let mut processes = Vec::with_capacity(found.len());
        for (p, tr) in found {
            next.insert(p.pid, tr);
            processes.push(p);
        }
        self.tracked = next;
        Some(ProcessTreeSample {
            root_pid: self.root_pid,
            processes,
            totals: t,
            rates,
            detail_fresh: refresh,
        })
    }

    /// Closes the descriptors of a process that has gone and keeps its
    /// last counters for [`ProcessSource::account_gone`].
    fn retire(&mut self, mut t: Tracked) {
        self.open_files = self.open_files.saturating_sub(t.files.count());
        t.files = Files::default();
        if t.seen {
            self.gone.push(t);
        }
    }

    /// Folds the last counters of the processes gone in this sample into
    /// the retired totals. Their CPU time and I/O are left out where their
    /// parent is `live`: the parent reaped them, and its `cutime`/`cstime`
    /// and its `io` file (the kernel adds a reaped child's I/O counters to
    /// its parent's) carry all they did, after the last sample too.
    fn account_gone(&mut self, live: &HashSet<i32>) {
        for t in std::mem::take(&mut self.gone) {
            let (c, d) = &mut self.retired;
            if !live.contains(&t.ppid) {
                c.ticks_user += t.counters.ticks_user;
                c.ticks_system += t.counters.ticks_system;
                c.cticks_user += t.counters.cticks_user;
                c.cticks_system += t.counters.cticks_system;
                c.io = add_io(c.io, t.counters.io);
            }
            d.vol = add(d.vol, t.detail.vol);
            d.nonvol = add(d.nonvol, t.detail.nonvol);
        }
    }

    /// CPU percent since the earliest live root started, for the first
    /// sample (which has no previous one).
    fn lifetime_percent(&mut self, cpu_s: f64, found: &[(ProcessSample, Tracked)]) -> Option<f64> {
        let roots = self.roots();
        let start_ticks = found
            .iter()
            .filter(|(p, _)| roots.contains(&p.pid))
            .map(|(_, t)| t.starttime)
            .min()?;
        let uptime = self.reader.read(&self.proc_root.join("uptime")).ok()?;
        let up_s: f64 = uptime.split_ascii_whitespace().next()?.parse().ok()?;
        // `uptime` has 10 ms steps: a root started within the last step
        // has lived for at least one clock tick.
        let alive_s = (up_s - start_ticks as f64 / self.ticks_per_s).max(1.0 / self.ticks_per_s);
        Some(100.0 * cpu_s / alive_s)
    }

    /// The job's cgroup figures and its user and system microseconds, with
    /// the `cgroup` accounting. `memory.peak` and `io.stat` are read on
    /// detail refreshes only. A `cpu.stat` that cannot be read any more
    /// (the cgroup was removed) switches to reaped-children accounting.
    fn read_cgroup(
        &mut self,
        refresh: bool,
        notes: &mut Vec<String>,
    ) -> Option<(CgroupTotals, u64, u64)> {
        let files = self.cgroup_files.as_mut()?;
        let cpu = files
            .cpu
            .read(&mut self.reader)
            .map_err(|e| e.to_string())
            .and_then(|t| cgroup::parse_cpu_stat(t).map_err(|e| e.to_string()));
        let cpu = match cpu {
            Ok(c) => c,
            Err(e) => {
                notes.push(format!(
                    "the job's cgroup can no longer be read ({e}); CPU time from reaped children from now on"
                ));
                self.cgroup_files = None;
                self.accounting = CpuAccounting::ReapedChildren;
                self.prev_cpu = None;
                return None;
            }
        };
        if refresh {
            if !files.peak_absent {
                match files.peak.read(&mut self.reader) {
                    Ok(t) => {
                        files.last_peak = crate::parse::sysfs::parse_u64("memory.peak", t).ok()
                    }
                    Err(_) => files.peak_absent = true,
                }
            }
            if !files.io_absent {
                match files.io.read(&mut self.reader) {
                    Ok(t) => files.last_io = cgroup::parse_io_stat(t).ok(),
                    Err(_) => files.io_absent = true,
                }
            }
        }
        Some((
            CgroupTotals {
                usage_usec: cpu.usage_usec,
                memory_peak_bytes: files.last_peak,
                io: files.last_io,
            },
            cpu.user_usec,
            cpu.system_usec,
        ))
    }
}

/// The cgroup files read with the `cgroup` accounting.
#[derive(Debug)]
struct CgroupFiles {
    cpu: KeptFile,
    peak: KeptFile,
    io: KeptFile,
    /// `memory.peak` or `io.stat` found missing: not tried again.
    peak_absent: bool,
    io_absent: bool,
    /// Values carried between detail refreshes.
    last_peak: Option<u64>,
    last_io: Option<cgroup::IoStat>,
}

/// The cgroup v2 hierarchy under `sys_root`: `fs/cgroup` on a unified
/// system, `fs/cgroup/unified` on a hybrid one.
fn cgroup2_mount(sys_root: &Path) -> Option<PathBuf> {
    ["fs/cgroup", "fs/cgroup/unified"]
        .into_iter()
        .map(|d| sys_root.join(d))
        .find(|d| d.join("cgroup.controllers").exists())
}

/// The cgroup directory that is the job's own, if there is one: the
/// deepest common ancestor of the roots' cgroup v2 paths, provided it is
/// not the hierarchy's root, its `cpu.stat` is readable, and every process
/// in it and below it descends from one of `roots` (so neither the
/// monitor nor anything else is charged to it).
pub fn job_cgroup(proc_root: &Path, sys_root: &Path, roots: &[i32]) -> Option<PathBuf> {
    let mount = cgroup2_mount(sys_root)?;
    let mut common: Option<Vec<String>> = None;
    for &r in roots {
        let text = std::fs::read_to_string(proc_root.join(format!("{r}/cgroup"))).ok()?;
        let parts: Vec<String> = cgroup::v2_path(&text)?
            .split('/')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        common = Some(match common {
            None => parts,
            Some(c) => c
                .into_iter()
                .zip(parts)
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect(),
        });
    }
    let common = common.filter(|c| !c.is_empty())?;
    let dir = common.iter().fold(mount, |d, p| d.join(p));
    let cpu = std::fs::read_to_string(dir.join("cpu.stat")).ok()?;
    cgroup::parse_cpu_stat(&cpu).ok()?;
    let mut dirs = vec![dir.clone()];
    while let Some(d) = dirs.pop() {
        let procs = std::fs::read_to_string(d.join("cgroup.procs")).ok()?;
        for pid in cgroup::parse_procs(&procs).ok()? {
            if !descends_from(proc_root, pid, roots) {
                return None;
            }
        }
        for e in std::fs::read_dir(&d).ok()?.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(e.path());
            }
        }
    }
    Some(dir)
}

/// True if `pid` is one of `roots` or has one among its ancestors. A
/// process that exits during the walk counts as descending (it was in
/// the cgroup, which only the job's processes enter).
fn descends_from(proc_root: &Path, pid: i32, roots: &[i32]) -> bool {
    let mut cur = pid;
    for _ in 0..4096 {
        if roots.contains(&cur) {
            return true;
        }
        if cur <= 1 {
            return false;
        }
        let Ok(text) = std::fs::read_to_string(proc_root.join(format!("{cur}/stat"))) else {
            return true;
        };
        match stat::parse(&text) {
            Ok(s) => cur = s.ppid,
            Err(_) => return false,
        }
    }
    false
}

fn numeric_entries(dir: &Path) -> Vec<i32> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
                .collect()
        })
        .unwrap_or_default()
}

/// Every task (thread id) of every process in the tree of `root`, root's
/// tasks first. Used to attach perf counters.
pub(crate) fn tree_tasks(proc_root: &Path, root: i32) -> Vec<i32> {
    let children_files = proc_root
        .join(format!("{root}/task/{root}/children"))
        .exists();
    let parents: HashMap<i32, Vec<i32>> = if children_files {
        HashMap::new()
    } else {
        let mut map: HashMap<i32, Vec<i32>> = HashMap::new();
        for pid in numeric_entries(proc_root) {
            if let Ok(text) = std::fs::read_to_string(proc_root.join(format!("{pid}/stat"))) {
                if let Ok(s) = stat::parse(&text) {
                    map.entry(s.ppid).or_default().push(pid);
                }
            }
        }
        map
    };
    let mut tasks = Vec::new();
    let mut seen = HashSet::new();
    let mut queue = vec![root];
    let mut i = 0;
    while i < queue.len() {
        let pid = queue[i];
        i += 1;
        if !seen.insert(pid) {
            continue;
        }
        let tids = numeric_entries(&proc_root.join(format!("{pid}/task")));
        for &tid in &tids {
            if children_files {
                if let Ok(text) =
                    std::fs::read_to_string(proc_root.join(format!("{pid}/task/{tid}/children")))
                {
                    queue.extend(
                        text.split_ascii_whitespace()
                            .filter_map(|t| t.parse::<i32>().ok()),
                    );
                }
            }
        }
        if !children_files {
            queue.extend(parents.get(&pid).into_iter().flatten().copied());
        }
        // Main thread first, so the probe uses a task that lives as long as
        // the process.
        let mut tids = tids;
        tids.sort_by_key(|&t| (t != pid, t));
        tasks.extend(tids);
    }
    tasks
}

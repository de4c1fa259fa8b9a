//! perf events for the process tree, through `perf_event_open(2)` (the
//! `perf-event` crate).
//!
//! One counter per event is attached to every task (thread) of the tree at
//! probe time, with `inherit` set: tasks created later are counted through
//! their ancestor's counter, and the kernel folds the counts of exited
//! children into it, so the totals only grow. Counters are not grouped
//! (the kernel refuses `inherit` with group reads), so hardware counters
//! may be time-multiplexed; counts are scaled by `time_enabled /
//! time_running`.
//!
//! The probe first tries to count in kernel and user mode and falls back
//! to user mode only when `perf_event_paranoid` forbids kernel counting
//! (value 2 for unprivileged users). Context switches and CPU migrations
//! happen in kernel mode, so a user-only counter would always read zero:
//! they are reported unavailable in that case. Events the CPU or hypervisor
//! do not provide (virtual machines often have no PMU: `ENOENT`) are
//! reported unavailable one by one; the software events usually remain.

use crate::fd::Kept;
use crate::parse::group::{EventGroup, EventSpec, GenericEvent};
use perf_event::events::{Event, Hardware, Software};
use perf_event::{Builder, Counter};
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Instant;

/// Which privilege levels the counters cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfScope {
    /// Kernel and user mode.
    KernelAndUser,
    /// User mode only (`exclude_kernel`), as `perf_event_paranoid` >= 2
    /// requires of unprivileged users.
    UserOnly,
}

/// One event's total over the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfEventSample {
    /// The event's name: a generic name (`cycles`, `task-clock`...) or
    /// `<GROUP>.<EVENT>` for group events.
    pub name: String,
    /// Cumulative count since the probe, scaled for multiplexing
    /// (`task-clock` in nanoseconds).
    pub count: u64,
    /// Count over the interval since the previous sample (since the probe
    /// for the first sample), as `perf stat -I` prints it.
    pub interval_count: Option<u64>,
    /// Count per second since the previous sample.
    pub per_s: Option<f64>,
    /// True if some counter was not on the PMU all the time (the count is
    /// an estimate).
    pub multiplexed: bool,
}

/// Metrics derived from the generic events over the last interval, where
/// their inputs are available.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PerfDerived {
    /// Instructions per cycle.
    pub ipc: Option<f64>,
    /// Cache misses per cache reference, in percent.
    pub cache_miss_percent: Option<f64>,
    /// Branch misses per branch, in percent.
    pub branch_miss_percent: Option<f64>,
    /// CPUs kept busy by the tree (task-clock time per wall time).
    pub cpus_utilized: Option<f64>,
}

/// One derived metric of a group.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricValue {
    /// Metric name.
    pub name: String,
    /// Unit, if the group gives one.
    pub unit: Option<String>,
    /// Value over the last interval (since the probe on the first sample;
    /// `None` without inputs).
    pub value: Option<f64>,
}

/// The metrics of one event group.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupSample {
    /// The group's name.
    pub group: String,
    /// Its metrics in file order.
    pub metrics: Vec<MetricValue>,
}

/// perf counts at one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfSample {
    /// What the counters cover.
    pub scope: PerfScope,
    /// Tasks counters were attached to at probe time.
    pub tasks: usize,
    /// Every working event.
    pub events: Vec<PerfEventSample>,
    /// Derived generic metrics.
    pub derived: PerfDerived,
    /// Group metrics.
    pub groups: Vec<GroupSample>,
}

/// What an event is, for `perf_event_open`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Generic(GenericEvent),
    Raw(u64),
}

#[derive(Debug)]
struct OpenEvent {
    name: String,
    kind: Kind,
    /// Checked ours before each read (see [`crate::fd`]).
    counters: Vec<Kept<Counter>>,
    prev: Option<u64>,
    delta: Option<u64>,
}

#[derive(Debug)]
struct OpenGroup {
    group: EventGroup,
    /// Index in `events` of each group event, in group order.
    events: Vec<usize>,
}

/// The perf counters of one process tree.
#[derive(Debug)]
pub struct PerfSource {
    scope: PerfScope,
    tasks: usize,
    events: Vec<OpenEvent>,
    groups: Vec<OpenGroup>,
    prev_time: Option<Instant>,
}

fn generic_event(g: GenericEvent) -> Event {
    match g {
        GenericEvent::Cycles => Hardware::CPU_CYCLES.into(),
        GenericEvent::Instructions => Hardware::INSTRUCTIONS.into(),
        GenericEvent::CacheReferences => Hardware::CACHE_REFERENCES.into(),
        GenericEvent::CacheMisses => Hardware::CACHE_MISSES.into(),
        GenericEvent::Branches => Hardware::BRANCH_INSTRUCTIONS.into(),
        GenericEvent::BranchMisses => Hardware::BRANCH_MISSES.into(),
        GenericEvent::TaskClock => Software::TASK_CLOCK.into(),
        GenericEvent::ContextSwitches => Software::CONTEXT_SWITCHES.into(),
        GenericEvent::CpuMigrations => Software::CPU_MIGRATIONS.into(),
        GenericEvent::PageFaults => Software::PAGE_FAULTS.into(),
    }
}

/// `PERF_TYPE_RAW` from `<linux/perf_event.h>`.
const PERF_TYPE_RAW: u32 = 4;

fn open(kind: Kind, tid: i32, scope: PerfScope) -> io::Result<Counter> {
    let event = match kind {
        Kind::Generic(g) => generic_event(g),
        // Replaced below by the raw type and config.
        Kind::Raw(_) => Hardware::INSTRUCTIONS.into(),
    };
    let mut b = Builder::new().kind(event).observe_pid(tid);
    b.inherit(true)
        .exclude_kernel(scope == PerfScope::UserOnly)
        .exclude_hv(true);
    if let Kind::Raw(config) = kind {
        let attrs = b.attrs_mut();
        attrs.type_ = PERF_TYPE_RAW;
        attrs.config = config;
    }
    let mut c = b.build()?;
    c.enable()?;
    Ok(c)
}

/// Reads `(count, time_enabled, time_running)` of a counter opened with the
/// builder's default read format.
fn read_counter(c: &Counter) -> io::Result<(u64, u64, u64)> {
    let mut buf = [0u64; 3];
    // SAFETY: the descriptor belongs to `c` and stays open for the call; the
    // buffer holds the 24 bytes asked for.
    let n = unsafe {
        libc::read(
            c.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            std::mem::size_of_val(&buf),
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n as usize != std::mem::size_of_val(&buf) {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "short perf counter read",
        ));
    }
    Ok((buf[0], buf[1], buf[2]))
}

/// The count scaled for time-multiplexing, and whether it was multiplexed.
pub fn scale_count(count: u64, enabled: u64, running: u64) -> (u64, bool) {
    if running == 0 {
        return (0, enabled > 0);
    }
    if running >= enabled {
        return (count, false);
    }
    let scaled = u128::from(count) * u128::from(enabled) / u128::from(running);
    (u64::try_from(scaled).unwrap_or(u64::MAX), true)
}

/// Why `perf_event_open` refused an event, in words.
fn refusal(e: &io::Error, paranoid: Option<i32>) -> String {
    let level = paranoid.map_or_else(|| "unknown".to_string(), |p| p.to_string());
    match e.raw_os_error() {
        Some(libc::ENOENT) => "not provided by this CPU or hypervisor (ENOENT)".to_string(),
        Some(libc::EOPNOTSUPP) => "not supported (EOPNOTSUPP)".to_string(),
        Some(libc::ENODEV) => "no PMU for this event (ENODEV)".to_string(),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            format!("not permitted (perf_event_paranoid = {level})")
        }
        Some(libc::EINVAL) => "rejected by the kernel (EINVAL)".to_string(),
        Some(libc::ESRCH) => "the task has exited (ESRCH)".to_string(),
        Some(libc::ENOSYS) => "perf_event_open is not available (ENOSYS)".to_string(),
        _ => e.to_string(),
    }
}

/// Which event groups the perf source tries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum GroupSelection {
    /// Every group whose `CPU` lines match this processor.
    #[default]
    Matching,
    /// These groups by name (each must match the processor).
    Named(Vec<String>),
    /// No groups.
    None,
}

/// The processor identity groups are matched against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuId {
    /// `vendor_id`.
    pub vendor: String,
    /// `cpu family`.
    pub family: u32,
    /// `model`.
    pub model: u32,
}

impl CpuId {
    /// The identity of the first processor in `/proc/cpuinfo`, if it has
    /// the x86 fields.
    pub fn read(proc_root: &Path) -> Option<CpuId> {
        let text = std::fs::read_to_string(proc_root.join("cpuinfo")).ok()?;
        CpuId::from_cpuinfo(&text)
    }

    /// The identity of the first processor of a `/proc/cpuinfo` text.
    pub fn from_cpuinfo(text: &str) -> Option<CpuId> {
        let procs = crate::parse::cpuinfo::parse(text).ok()?;
        let p = procs.first()?;
        Some(CpuId {
            vendor: p.vendor.clone()?,
            family: p.family?,
            model: p.model?,
        })
    }
}

/// Inputs of [`PerfSource::probe`].
#[derive(Debug, Clone)]
pub struct PerfRequest<'a> {
    /// `/proc` (for the task list, `perf_event_paranoid` and `cpuinfo`).
    pub proc_root: &'a Path,
    /// Root of the process tree.
    pub root_pid: i32,
    /// Groups to try.
    pub groups: &'a GroupSelection,
    /// Every known group (built in and loaded).
    pub known_groups: &'a [EventGroup],
}

impl PerfSource {
    /// Opens what the kernel allows. `Err` is the reason the whole source is
    /// unavailable; `notes` receives the events and groups that are not.
    pub fn probe(req: &PerfRequest<'_>, notes: &mut Vec<String>) -> Result<Self, String> {
        let tasks = super::process::tree_tasks(req.proc_root, req.root_pid);
        let Some(&first) = tasks.first() else {
            return Err(format!("process {} does not exist", req.root_pid));
        };
        let paranoid =
            std::fs::read_to_string(req.proc_root.join("sys/kernel/perf_event_paranoid"))
                .ok()
                .and_then(|t| t.trim().parse::<i32>().ok());

        // 1. Scope: kernel and user mode if allowed, else user mode only.
        let probe_kind = Kind::Generic(GenericEvent::TaskClock);
        let scope = match open(probe_kind, first, PerfScope::KernelAndUser) {
            Ok(_) => PerfScope::KernelAndUser,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM)) => {
                match open(probe_kind, first, PerfScope::UserOnly) {
                    Ok(_) => PerfScope::UserOnly,
                    Err(e) => return Err(format!("task-clock: {}", refusal(&e, paranoid))),
                }
            }
            Err(e) => return Err(format!("task-clock: {}", refusal(&e, paranoid))),
        };

        // 2. Generic events, probed on the first task.
        let mut events: Vec<OpenEvent> = Vec::new();
        for g in GenericEvent::ALL {
            if scope == PerfScope::UserOnly && g.kernel_only() {
                notes.push(format!(
                    "{}: occurs only in kernel mode, which perf_event_paranoid = {} forbids counting",
                    g.name(),
                    paranoid.map_or_else(|| "?".to_string(), |p| p.to_string())
                ));
                continue;
            }
            match open(Kind::Generic(g), first, scope) {
                Ok(c) => events.push(OpenEvent {
                    name: g.name().to_string(),
                    kind: Kind::Generic(g),
                    counters: Kept::new(c).into_iter().collect(),
                    prev: Some(0),
                    delta: None,
                }),
                Err(e) => notes.push(format!("{}: {}", g.name(), refusal(&e, paranoid))),
            }
        }

        // 3. Groups.
        let cpu = CpuId::read(req.proc_root);
        let (wanted, group_notes) =
            crate::groups::select(req.known_groups, cpu.as_ref(), req.groups);
        notes.extend(group_notes);
        let mut groups = Vec::new();
        'groups: for g in wanted {
            let mut idx = Vec::new();
            let mut opened = Vec::new();
            for ev in &g.events {
                match ev.spec {
                    EventSpec::Generic(gen) => {
                        match events.iter().position(|e| e.kind == Kind::Generic(gen)) {
                            Some(i) => idx.push(i),
                            None => {
                                notes.push(format!(
                                    "group {}: needs {}, which is unavailable",
                                    g.name,
                                    gen.name()
                                ));
                                continue 'groups;
                            }
                        }
                    }
                    EventSpec::Raw { config } => match open(Kind::Raw(config), first, scope) {
                        Ok(c) => {
                            idx.push(events.len() + opened.len());
                            opened.push(OpenEvent {
                                name: format!("{}.{}", g.name, ev.name),
                                kind: Kind::Raw(config),
                                counters: Kept::new(c).into_iter().collect(),
                                prev: Some(0),
                                delta: None,
                            });
                        }
                        Err(e) => {
                            notes.push(format!(
                                "group {}: raw event {} (config {config:#x}) {}",
                                g.name,
                                ev.name,
                                refusal(&e, paranoid)
                            ));
                            continue 'groups;
                        }
                    },
                }
            }
            events.extend(opened);
            groups.push(OpenGroup {
                group: g.clone(),
                events: idx,
            });
        }
        if events.is_empty() {
            return Err("no perf event can be counted here".to_string());
        }

        // 4. The remaining tasks. A task that exited meanwhile is skipped.
        let mut attached = 1;
        for &tid in &tasks[1..] {
            let mut all = true;
            for ev in events.iter_mut() {
                match open(ev.kind, tid, scope) {
                    Ok(c) => ev.counters.extend(Kept::new(c)),
                    Err(_) => all = false,
                }
            }
            if all {
                attached += 1;
            }
        }
        // Counting started at the probe: the first sample's interval
        // begins here.
        Ok(PerfSource {
            scope,
            tasks: attached,
            events,
            groups,
            prev_time: Some(Instant::now()),
        })
    }

    /// The scope the probe settled on.
    pub fn scope(&self) -> PerfScope {
        self.scope
    }

    /// Reads every counter; failures are added to `notes`.
    pub fn sample(&mut self, now: Instant, notes: &mut Vec<String>) -> PerfSample {
        let dt = self
            .prev_time
            .map(|t| now.duration_since(t).as_secs_f64())
            .filter(|&d| d > 0.0);
        let mut out = Vec::with_capacity(self.events.len());
        for ev in &mut self.events {
            let (mut total, mut multiplexed) = (0u64, false);
            let mut lost = 0;
            for c in &ev.counters {
                let Some(c) = c.get() else {
                    lost += 1;
                    continue;
                };
                match read_counter(c) {
                    Ok((count, enabled, running)) => {
                        let (v, m) = scale_count(count, enabled, running);
                        total = total.saturating_add(v);
                        multiplexed |= m;
                    }
                    Err(e) => notes.push(format!("reading {}: {e}", ev.name)),
                }
            }
            if lost > 0 {
                // Forgotten, never closed: the numbers are the program's now.
                ev.counters.retain(|c| c.get().is_some());
                notes.push(format!(
                    "{}: the program closed or replaced {lost} counter descriptors; \
                     they are no longer read",
                    ev.name
                ));
            }
            ev.delta = ev.prev.map(|p| total.saturating_sub(p));
            ev.prev = Some(total);
            out.push(PerfEventSample {
                name: ev.name.clone(),
                count: total,
                interval_count: ev.delta,
                per_s: ev.delta.zip(dt).map(|(d, dt)| d as f64 / dt),
                multiplexed,
            });
        }
        let delta = |g: GenericEvent| -> Option<f64> {
            self.events
                .iter()
                .find(|e| e.kind == Kind::Generic(g))
                .and_then(|e| e.delta)
                .map(|d| d as f64)
        };
        let ratio = |a: Option<f64>, b: Option<f64>| -> Option<f64> {
            let (a, b) = (a?, b?);
            (b > 0.0).then(|| a / b)
        };
        let derived = PerfDerived {
            ipc: ratio(
                delta(GenericEvent::Instructions),
                delta(GenericEvent::Cycles),
            ),
            cache_miss_percent: ratio(
                delta(GenericEvent::CacheMisses),
                delta(GenericEvent::CacheReferences),
            )
            .map(|r| 100.0 * r),
            branch_miss_percent: ratio(
                delta(GenericEvent::BranchMisses),
                delta(GenericEvent::Branches),
            )
            .map(|r| 100.0 * r),
            cpus_utilized: ratio(delta(GenericEvent::TaskClock), dt.map(|d| d * 1e9)),
        };
        let groups = self
            .groups
            .iter()
            .map(|og| {
                let count = |name: &str| -> Option<f64> {
                    let pos = og.group.events.iter().position(|e| e.name == name)?;
                    self.events
                        .get(*og.events.get(pos)?)?
                        .delta
                        .map(|d| d as f64)
                };
                let metrics = match dt {
                    Some(dt) => og
                        .group
                        .evaluate(&count, dt)
                        .into_iter()
                        .map(|(name, unit, value)| MetricValue { name, unit, value })
                        .collect(),
                    None => og
                        .group
                        .metrics
                        .iter()
                        .map(|m| MetricValue {
                            name: m.name.clone(),
                            unit: m.unit.clone(),
                            value: None,
                        })
                        .collect(),
                };
                GroupSample {
                    group: og.group.name.clone(),
                    metrics,
                }
            })
            .collect();
        self.prev_time = Some(now);
        PerfSample {
            scope: self.scope,
            tasks: self.tasks,
            events: out,
            derived,
            groups,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_that_ran_all_the_time_is_not_scaled() {
        assert_eq!(scale_count(1000, 50, 50), (1000, false));
    }

    #[test]
    fn a_multiplexed_counter_is_scaled_by_enabled_over_running() {
        assert_eq!(scale_count(1000, 100, 25), (4000, true));
    }

    #[test]
    fn a_counter_that_never_ran_counts_zero() {
        assert_eq!(scale_count(0, 100, 0), (0, true));
    }

    #[test]
    fn refusals_are_described_by_their_errno() {
        let e = io::Error::from_raw_os_error(libc::ENOENT);
        assert!(refusal(&e, Some(2)).contains("ENOENT"));
        let e = io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(
            refusal(&e, Some(2)),
            "not permitted (perf_event_paranoid = 2)"
        );
    }
}

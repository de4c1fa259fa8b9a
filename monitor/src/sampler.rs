//! The orchestrator: probes the requested sources once, then takes
//! snapshots of every available one.

use crate::error::Error;
use crate::groups;
use crate::source::gpu::{GpuSample, GpuSource};
use crate::source::infiniband::{IbSample, IbSource};
use crate::source::net::{NetSample, NetSource};
use crate::source::perf::{GroupSelection, PerfRequest, PerfSample, PerfSource};
use crate::source::process::{CpuAccounting, ProcessDetail, ProcessSource, ProcessTreeSample};
use crate::source::rapl::{RaplSample, RaplSource};
use crate::source::system::{SystemSample, SystemSource};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A kind of metric the sampler can collect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// The process tree of the root pid (`/proc/<pid>/...`).
    Proc,
    /// System-wide CPU, load, memory and CPU frequency.
    System,
    /// Network interfaces (`/proc/net/dev`).
    Net,
    /// InfiniBand port counters.
    Ib,
    /// RAPL energy.
    Rapl,
    /// perf events of the process tree.
    Perf,
    /// NVIDIA GPUs through NVML.
    Gpu,
}

/// The accepted source names, as error messages list them.
pub const SOURCE_NAMES: &str = "proc, system, net, ib, rapl, perf, gpu";

impl Source {
    /// Every source, in the order they are sampled.
    pub const ALL: [Source; 7] = [
        Source::Proc,
        Source::System,
        Source::Net,
        Source::Ib,
        Source::Rapl,
        Source::Perf,
        Source::Gpu,
    ];

    /// The source's name (`proc`, `system`...).
    pub fn name(self) -> &'static str {
        match self {
            Source::Proc => "proc",
            Source::System => "system",
            Source::Net => "net",
            Source::Ib => "ib",
            Source::Rapl => "rapl",
            Source::Perf => "perf",
            Source::Gpu => "gpu",
        }
    }

    /// Parses a comma-separated list such as `proc,system,gpu`. Spaces
    /// around names are ignored; repeated names count once.
    pub fn parse_list(text: &str) -> Result<Vec<Source>, Error> {
        let mut out: Vec<Source> = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let s: Source = part.parse()?;
            if !out.contains(&s) {
                out.push(s);
            }
        }
        Ok(out)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Source {
    type Err = Error;

    fn from_str(s: &str) -> Result<Source, Error> {
        let t = s.trim();
        Source::ALL
            .into_iter()
            .find(|src| src.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| Error::UnknownSource {
                given: t.to_string(),
                accepted: SOURCE_NAMES,
            })
    }
}

/// What to sample and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplerConfig {
    /// Root of the process tree (default: this process).
    pub root_pid: i32,
    /// Sources to sample (default: all).
    pub sources: Vec<Source>,
    /// Where procfs is mounted (default `/proc`).
    pub proc_root: PathBuf,
    /// Where sysfs is mounted (default `/sys`).
    pub sys_root: PathBuf,
    /// Which per-process files to read beyond `stat` and `status`.
    pub process_detail: ProcessDetail,
    /// Which perf event groups to try.
    pub perf_groups: GroupSelection,
    /// A directory of extra event group files (`*.txt`).
    pub group_dir: Option<PathBuf>,
    /// Least time between reads of the perf counters (`Duration::ZERO`,
    /// the default: every sample). Snapshots in between have no perf part;
    /// the next read covers the whole time since the previous one.
    pub perf_interval: Duration,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        SamplerConfig {
            root_pid: std::process::id() as i32,
            sources: Source::ALL.to_vec(),
            proc_root: PathBuf::from("/proc"),
            sys_root: PathBuf::from("/sys"),
            process_detail: ProcessDetail::default(),
            perf_groups: GroupSelection::default(),
            group_dir: None,
            perf_interval: Duration::ZERO,
        }
    }
}

/// A source, or part of one, that cannot be sampled here, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// The source concerned.
    pub source: Source,
    /// Why, in words (a whole source, or one event, device query or file).
    pub reason: String,
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.source, self.reason)
    }
}

/// One sample of every available source.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// When the sample was taken, in nanoseconds since the Unix epoch.
    pub timestamp_ns: u64,
    /// Seconds since the previous snapshot (`None` for the first).
    pub interval_s: Option<f64>,
    /// The process tree.
    pub process: Option<ProcessTreeSample>,
    /// System-wide figures.
    pub system: Option<SystemSample>,
    /// Network interfaces.
    pub net: Option<NetSample>,
    /// InfiniBand ports.
    pub ib: Option<IbSample>,
    /// RAPL domains.
    pub rapl: Option<RaplSample>,
    /// perf events (`None` between reads spaced by
    /// [`SamplerConfig::perf_interval`]).
    pub perf: Option<PerfSample>,
    /// NVIDIA GPUs.
    pub gpu: Option<GpuSample>,
}

/// Samples the configured sources. See the crate documentation.
#[derive(Debug)]
pub struct Sampler {
    config: SamplerConfig,
    process: Option<ProcessSource>,
    system: Option<SystemSource>,
    net: Option<NetSource>,
    ib: Option<IbSource>,
    rapl: Option<RaplSource>,
    perf: Option<PerfSource>,
    gpu: Option<GpuSource>,
    unavailable: Vec<Unavailable>,
    prev: Option<Instant>,
    /// When the perf counters were last read.
    last_perf: Option<Instant>,
}

impl Sampler {
    /// Probes every configured source. Never fails: what cannot work here
    /// is recorded in [`Sampler::unavailable`].
    pub fn new(config: SamplerConfig) -> Sampler {
        let mut s = Sampler {
            config,
            process: None,
            system: None,
            net: None,
            ib: None,
            rapl: None,
            perf: None,
            gpu: None,
            unavailable: Vec::new(),
            prev: None,
            last_perf: None,
        };
        let sources = s.config.sources.clone();
        let (proc_root, sys_root) = (s.config.proc_root.clone(), s.config.sys_root.clone());
        for src in sources {
            match src {
                Source::Proc => {
                    match ProcessSource::probe(
                        &proc_root,
                        &sys_root,
                        s.config.root_pid,
                        s.config.process_detail,
                    ) {
                        Ok(p) => s.process = Some(p),
                        Err(r) => s.report(src, r),
                    }
                }
                Source::System => match SystemSource::probe(&proc_root, &sys_root) {
                    Ok(sys) => {
                        if let Some(n) = sys.frequency_note() {
                            s.report(src, n.to_string());
                        }
                        s.system = Some(sys);
                    }
                    Err(r) => s.report(src, r),
                },
                Source::Net => match NetSource::probe(&proc_root) {
                    Ok(n) => s.net = Some(n),
                    Err(r) => s.report(src, r),
                },
                Source::Ib => match IbSource::probe(&sys_root) {
                    Ok(i) => s.ib = Some(i),
                    Err(r) => s.report(src, r),
                },
                Source::Rapl => match RaplSource::probe(&sys_root) {
                    Ok(r) => s.rapl = Some(r),
                    Err(r) => s.report(src, r),
                },
                Source::Perf => s.probe_perf(),
                Source::Gpu => match GpuSource::probe() {
                    Ok(g) => s.gpu = Some(g),
                    Err(r) => s.report(src, r),
                },
            }
        }
        s
    }

    fn probe_perf(&mut self) {
        let mut known = match groups::builtin() {
            Ok(g) => g,
            Err(e) => {
                self.report(Source::Perf, format!("built-in event groups: {e}"));
                Vec::new()
            }
        };
        if let Some(dir) = self.config.group_dir.clone() {
            match groups::load_dir(&dir) {
                Ok(g) => known.extend(g),
                Err(e) => self.report(Source::Perf, format!("event groups: {e}")),
            }
        }
        let mut notes = Vec::new();
        let req = PerfRequest {
            proc_root: &self.config.proc_root,
            root_pid: self.config.root_pid,
            groups: &self.config.perf_groups,
            known_groups: &known,
        };
        let result = PerfSource::probe(&req, &mut notes);
        for n in notes {
            self.report(Source::Perf, n);
        }
        match result {
            Ok(p) => self.perf = Some(p),
            Err(r) => self.report(Source::Perf, r),
        }
    }

    /// Records `reason` unless the same one was already recorded.
    fn report(&mut self, source: Source, reason: String) {
        if !self
            .unavailable
            .iter()
            .any(|u| u.source == source && u.reason == reason)
        {
            self.unavailable.push(Unavailable { source, reason });
        }
    }

    fn report_all(&mut self, source: Source, notes: &mut Vec<String>) {
        for n in notes.drain(..) {
            self.report(source, n);
        }
    }

    /// Takes one sample of every available source.
    pub fn sample(&mut self) -> Snapshot {
        let now = Instant::now();
        let timestamp_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        let interval_s = self.prev.map(|p| now.duration_since(p).as_secs_f64());
        self.prev = Some(now);
        let mut notes = Vec::new();

        let process = self
            .process
            .as_mut()
            .and_then(|p| p.sample(now, &mut notes));
        self.report_all(Source::Proc, &mut notes);
        let system = self.system.as_mut().map(|s| s.sample(now, &mut notes));
        self.report_all(Source::System, &mut notes);
        let net = self.net.as_mut().and_then(|n| n.sample(now, &mut notes));
        self.report_all(Source::Net, &mut notes);
        let ib = self.ib.as_mut().map(|i| i.sample(now, &mut notes));
        self.report_all(Source::Ib, &mut notes);
        let rapl = self.rapl.as_mut().map(|r| r.sample(now, &mut notes));
        self.report_all(Source::Rapl, &mut notes);
        let perf_due = self
            .last_perf
            .is_none_or(|t| now.duration_since(t) >= self.config.perf_interval);
        let perf = match self.perf.as_mut() {
            Some(p) if perf_due => {
                self.last_perf = Some(now);
                Some(p.sample(now, &mut notes))
            }
            _ => None,
        };
        self.report_all(Source::Perf, &mut notes);
        let gpu = self.gpu.as_mut().map(|g| g.sample(now, &mut notes));
        self.report_all(Source::Gpu, &mut notes);

        Snapshot {
            timestamp_ns,
            interval_s,
            process,
            system,
            net,
            ib,
            rapl,
            perf,
            gpu,
        }
    }

    /// Follows the process trees of `roots` from the next sample on (see
    /// [`ProcessSource::set_roots`]); probes the process source again if
    /// it was unavailable. perf counters stay on the tasks found at probe
    /// time.
    pub fn set_roots(&mut self, roots: &[i32]) {
        let Some(&first) = roots.first() else {
            return;
        };
        if !self.config.sources.contains(&Source::Proc) {
            return;
        }
        match self.process.as_mut() {
            Some(p) => p.set_roots(roots),
            None => {
                let probed = ProcessSource::probe(
                    &self.config.proc_root,
                    &self.config.sys_root,
                    first,
                    self.config.process_detail,
                );
                if let Ok(mut p) = probed {
                    p.set_roots(roots);
                    self.process = Some(p);
                }
            }
        }
    }

    /// Everything reported unavailable so far, each reason once, in the
    /// order found. The list only grows; a caller that logs it can remember
    /// how many entries it has already seen.
    pub fn unavailable(&self) -> &[Unavailable] {
        &self.unavailable
    }

    /// The sources that probed successfully.
    pub fn available(&self) -> Vec<Source> {
        let mut v = Vec::new();
        let flags = [
            (Source::Proc, self.process.is_some()),
            (Source::System, self.system.is_some()),
            (Source::Net, self.net.is_some()),
            (Source::Ib, self.ib.is_some()),
            (Source::Rapl, self.rapl.is_some()),
            (Source::Perf, self.perf.is_some()),
            (Source::Gpu, self.gpu.is_some()),
        ];
        for (s, ok) in flags {
            if ok {
                v.push(s);
            }
        }
        v
    }

    /// How the process tree's CPU time is accounted (`None` without the
    /// process source).
    pub fn cpu_accounting(&self) -> Option<&CpuAccounting> {
        self.process.as_ref().map(ProcessSource::accounting)
    }

    /// The configuration the sampler was built with.
    pub fn config(&self) -> &SamplerConfig {
        &self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_list_parses_every_name_once() {
        let v = Source::parse_list("proc, system,net,ib,rapl,perf,gpu,proc").unwrap();
        assert_eq!(v, Source::ALL.to_vec());
    }

    #[test]
    fn an_unknown_source_name_is_an_error_listing_the_accepted_values() {
        let e = "disk".parse::<Source>().unwrap_err();
        let text = e.to_string();
        assert!(text.contains("`disk`"), "{text}");
        assert!(text.contains(SOURCE_NAMES), "{text}");
    }
}

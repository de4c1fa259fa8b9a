//! System-wide CPU, load, memory and CPU frequency: `/proc/stat`,
//! `/proc/loadavg`, `/proc/meminfo`, and
//! `/sys/devices/system/cpu/cpu<N>/cpufreq/scaling_cur_freq` (or, where
//! `cpufreq` is absent, as on most virtual machines, the `cpu MHz` lines of
//! `/proc/cpuinfo`).

use super::{rate, KeptFile, TextReader};
use crate::parse::loadavg::LoadAvg;
use crate::parse::meminfo::Meminfo;
use crate::parse::proc_stat::{CpuTimes, ProcStat};
use crate::parse::{cpuinfo, loadavg, meminfo, proc_stat, sysfs};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One logical CPU at one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreSample {
    /// CPU number.
    pub cpu: u32,
    /// Busy percentage since the previous sample.
    pub percent: Option<f64>,
    /// Current frequency in MHz, if the kernel reports it.
    pub freq_mhz: Option<f64>,
}

/// System-wide state at one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemSample {
    /// Busy percentage of all CPUs together since the previous sample
    /// (100 = every CPU busy); on the first sample, since boot.
    pub cpu_percent: Option<f64>,
    /// Raw aggregate CPU times (ticks).
    pub cpu_times: Option<CpuTimes>,
    /// Per-CPU figures.
    pub cores: Vec<CoreSample>,
    /// Context switches per second, system-wide.
    pub context_switches_per_s: Option<f64>,
    /// Load averages.
    pub load: Option<LoadAvg>,
    /// Memory.
    pub memory: Option<Meminfo>,
}

/// Where CPU frequencies come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FreqSource {
    Cpufreq,
    Cpuinfo,
    None,
}

/// Reads the system-wide figures.
#[derive(Debug)]
pub struct SystemSource {
    sys_root: PathBuf,
    reader: TextReader,
    stat: KeptFile,
    loadavg: KeptFile,
    meminfo: KeptFile,
    cpuinfo: KeptFile,
    cpufreq: Vec<(u32, KeptFile)>,
    freq: FreqSource,
    prev: Option<ProcStat>,
    prev_time: Option<Instant>,
}

impl SystemSource {
    /// Checks that `/proc/stat` parses; the error is the reason the source
    /// is unavailable.
    pub fn probe(proc_root: &Path, sys_root: &Path) -> Result<Self, String> {
        let mut reader = TextReader::default();
        let stat = proc_root.join("stat");
        match reader.read(&stat) {
            Ok(text) => {
                proc_stat::parse(text).map_err(|e| e.in_file(&stat).to_string())?;
            }
            Err(e) => return Err(e.to_string()),
        }
        let freq = if sys_root
            .join("devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")
            .exists()
        {
            FreqSource::Cpufreq
        } else if reader
            .read(&proc_root.join("cpuinfo"))
            .ok()
            .and_then(|t| cpuinfo::parse(t).ok())
            .is_some_and(|p| p.iter().any(|c| c.mhz.is_some()))
        {
            FreqSource::Cpuinfo
        } else {
            FreqSource::None
        };
        Ok(SystemSource {
            sys_root: sys_root.to_path_buf(),
            reader,
            stat: KeptFile::new(stat),
            loadavg: KeptFile::new(proc_root.join("loadavg")),
            meminfo: KeptFile::new(proc_root.join("meminfo")),
            cpuinfo: KeptFile::new(proc_root.join("cpuinfo")),
            cpufreq: Vec::new(),
            freq,
            prev: None,
            prev_time: None,
        })
    }

    /// A note for the sampler if no CPU frequency is available.
    pub fn frequency_note(&self) -> Option<&'static str> {
        (self.freq == FreqSource::None)
            .then_some("CPU frequency: neither cpufreq nor `cpu MHz` in /proc/cpuinfo is available")
    }

    fn frequencies(&mut self, cpus: &[u32]) -> Vec<Option<f64>> {
        match self.freq {
            FreqSource::None => vec![None; cpus.len()],
            FreqSource::Cpufreq => cpus
                .iter()
                .map(|&c| {
                    let i = match self.cpufreq.iter().position(|(cpu, _)| *cpu == c) {
                        Some(i) => i,
                        None => {
                            let p = self.sys_root.join(format!(
                                "devices/system/cpu/cpu{c}/cpufreq/scaling_cur_freq"
                            ));
                            self.cpufreq.push((c, KeptFile::new(p)));
                            self.cpufreq.len() - 1
                        }
                    };
                    self.cpufreq[i]
                        .1
                        .read(&mut self.reader)
                        .ok()
                        .and_then(|t| sysfs::parse_cpufreq_mhz(t).ok())
                })
                .collect(),
            FreqSource::Cpuinfo => {
                let procs = self
                    .cpuinfo
                    .read(&mut self.reader)
                    .ok()
                    .and_then(|t| cpuinfo::parse(t).ok())
                    .unwrap_or_default();
                cpus.iter()
                    .map(|c| procs.iter().find(|p| p.index == *c).and_then(|p| p.mhz))
                    .collect()
            }
        }
    }

    /// Samples; problems with single files are added to `notes`.
    pub fn sample(&mut self, now: Instant, notes: &mut Vec<String>) -> SystemSample {
        let dt = self.prev_time.map(|t| now.duration_since(t).as_secs_f64());
        let stat = match self.stat.read(&mut self.reader).map(proc_stat::parse) {
            Ok(Ok(s)) => Some(s),
            Ok(Err(e)) => {
                notes.push(e.in_file(self.stat.path()).to_string());
                None
            }
            Err(e) => {
                notes.push(e.to_string());
                None
            }
        };
        let load = match self.loadavg.read(&mut self.reader).map(loadavg::parse) {
            Ok(Ok(l)) => Some(l),
            Ok(Err(e)) => {
                notes.push(e.in_file(self.loadavg.path()).to_string());
                None
            }
            Err(e) => {
                notes.push(e.to_string());
                None
            }
        };
        let memory = match self.meminfo.read(&mut self.reader).map(meminfo::parse) {
            Ok(Ok(m)) => Some(m),
            Ok(Err(e)) => {
                notes.push(e.in_file(self.meminfo.path()).to_string());
                None
            }
            Err(e) => {
                notes.push(e.to_string());
                None
            }
        };
        let cpus: Vec<u32> = stat
            .as_ref()
            .map(|s| s.cpus.iter().map(|(c, _)| *c).collect())
            .unwrap_or_default();
        let freqs = self.frequencies(&cpus);
        let prev = self.prev.as_ref();
        let cores = stat
            .as_ref()
            .map(|s| {
                s.cpus
                    .iter()
                    .zip(freqs)
                    .map(|((cpu, times), freq_mhz)| CoreSample {
                        cpu: *cpu,
                        percent: match prev {
                            Some(p) => p
                                .cpus
                                .iter()
                                .find(|(c, _)| c == cpu)
                                .and_then(|(_, pt)| times.busy_percent_since(pt)),
                            None => times.busy_percent_since(&CpuTimes::default()),
                        },
                        freq_mhz,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let sample = SystemSample {
            cpu_percent: stat.as_ref().and_then(|s| {
                let since = prev.map_or_else(CpuTimes::default, |p| p.total);
                s.total.busy_percent_since(&since)
            }),
            cpu_times: stat.as_ref().map(|s| s.total),
            cores,
            context_switches_per_s: rate(
                prev.and_then(|p| p.ctxt),
                stat.as_ref().and_then(|s| s.ctxt),
                dt,
            ),
            load,
            memory,
        };
        if stat.is_some() {
            self.prev = stat;
            self.prev_time = Some(now);
        }
        sample
    }
}

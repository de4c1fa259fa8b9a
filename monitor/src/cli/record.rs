//! A [`Snapshot`] as rows of the perfmon-compatible metric files.
//!
//! Each row belongs to one file (`cpu`, `perf`, `gpu`) and one host key
//! (the node, or `gpu-<n>.<node>` for GPUs) and holds flat keys: nested
//! keys are joined with `.` (`memory_info.rss`), as in the files' `units`.
//! perfmon's names are used where perfmon has the metric; names taken from
//! the machine (interfaces, RAPL domains, perf events) have their `.`
//! replaced by `_` so the nesting stays unambiguous.

use crate::sampler::Snapshot;
use std::borrow::Cow;

/// The metric file a row goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricFile {
    /// `cpu_metrics.json`.
    Cpu,
    /// `perf_metrics.json`.
    Perf,
    /// `nv_gpu_metrics.json`.
    Gpu,
}

impl MetricFile {
    /// Every file, in the order they are written.
    pub const ALL: [MetricFile; 3] = [MetricFile::Cpu, MetricFile::Perf, MetricFile::Gpu];

    /// The short name used in node files.
    pub fn key(self) -> &'static str {
        match self {
            MetricFile::Cpu => "cpu",
            MetricFile::Perf => "perf",
            MetricFile::Gpu => "gpu",
        }
    }

    /// The per-job file name.
    pub fn file_name(self) -> &'static str {
        match self {
            MetricFile::Cpu => "cpu_metrics.json",
            MetricFile::Perf => "perf_metrics.json",
            MetricFile::Gpu => "nv_gpu_metrics.json",
        }
    }

    /// The file named by [`MetricFile::key`].
    pub fn from_key(key: &str) -> Option<MetricFile> {
        MetricFile::ALL.into_iter().find(|f| f.key() == key)
    }
}

/// One sample for one host key of one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The file.
    pub file: MetricFile,
    /// The host key (`node` or `gpu-<n>.node`).
    pub host: String,
    /// Unix time in seconds.
    pub time: f64,
    /// `(key, unit, value)`; `None` where the value was missing.
    pub values: Vec<(String, Cow<'static, str>, Option<f64>)>,
}

impl Row {
    fn new(file: MetricFile, host: String, time: f64) -> Row {
        Row {
            file,
            host,
            time,
            values: Vec::new(),
        }
    }

    fn f(&mut self, key: impl Into<String>, unit: impl Into<Cow<'static, str>>, v: Option<f64>) {
        self.values
            .push((key.into(), unit.into(), v.filter(|x| x.is_finite())));
    }

    fn u(&mut self, key: impl Into<String>, unit: &'static str, v: Option<u64>) {
        self.f(key, unit, v.map(|x| x as f64));
    }
}

/// A name from the machine, safe as one level of a dotted key.
pub fn key_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c == '.' || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

fn sum(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values.fold(None, |acc, v| match (acc, v) {
        (Some(a), Some(b)) => Some(a + b),
        (a, None) => a,
        (None, b) => b,
    })
}

/// Software perf events, as perfmon files them apart from hardware ones.
const SOFTWARE_EVENTS: [&str; 9] = [
    "task-clock",
    "cpu-clock",
    "context-switches",
    "cpu-migrations",
    "page-faults",
    "minor-faults",
    "major-faults",
    "alignment-faults",
    "emulation-faults",
];

/// The rows of one snapshot for node `host`: always a `cpu` row, a `perf`
/// row if perf counters work, one `gpu` row per GPU.
pub fn rows(s: &Snapshot, host: &str) -> Vec<Row> {
    let time = (s.timestamp_ns / 1_000) as f64 / 1e6;
    let mut cpu = Row::new(MetricFile::Cpu, host.to_string(), time);
    if let Some(p) = &s.process {
        let t = &p.totals;
        let r = &p.rates;
        cpu.f("cpu_percent", "%", r.cpu_percent);
        cpu.f("cpu_time", "s", Some(t.user_time_s + t.system_time_s));
        cpu.f("cpu_time_user", "s", Some(t.user_time_s));
        cpu.f("cpu_time_system", "s", Some(t.system_time_s));
        cpu.f("memory_percent", "%", t.memory_percent);
        cpu.u("memory_info.rss", "bytes", Some(t.rss_bytes));
        cpu.u("memory_info.vms", "bytes", Some(t.vms_bytes));
        cpu.u("memory_info.shared", "bytes", t.shared_bytes);
        cpu.u("memory_full_info.uss", "bytes", t.uss_bytes);
        cpu.u("memory_full_info.swap", "bytes", t.swap_bytes);
        cpu.u("io_counters.read_bytes", "bytes", t.io.read_bytes);
        cpu.u("io_counters.write_bytes", "bytes", t.io.write_bytes);
        cpu.u("io_counters.read_count", "count", t.io.read_calls);
        cpu.u("io_counters.write_count", "count", t.io.write_calls);
        cpu.u("io_counters.read_chars", "bytes", t.io.read_chars);
        cpu.u("io_counters.write_chars", "bytes", t.io.write_chars);
        cpu.f("io_rates.read_bytes", "bytes/s", r.io.read_bytes);
        cpu.f("io_rates.write_bytes", "bytes/s", r.io.write_bytes);
        cpu.f("io_rates.read_chars", "bytes/s", r.io.read_chars);
        cpu.f("io_rates.write_chars", "bytes/s", r.io.write_chars);
        cpu.u("num_threads", "count", Some(t.threads));
        cpu.u("num_fds", "count", t.fds);
        cpu.u("num_procs", "count", Some(t.processes as u64));
        cpu.f("ctx_switches.voluntary", "1/s", r.voluntary_ctxt_switches);
        cpu.f(
            "ctx_switches.involuntary",
            "1/s",
            r.nonvoluntary_ctxt_switches,
        );
    }
    if let Some(sys) = &s.system {
        cpu.f("cpu_percent_sys", "%", sys.cpu_percent);
        if let Some(l) = &sys.load {
            cpu.f("load_average.1m", "tasks", Some(l.one));
            cpu.f("load_average.5m", "tasks", Some(l.five));
            cpu.f("load_average.15m", "tasks", Some(l.fifteen));
        }
        if let Some(m) = &sys.memory {
            cpu.u("system_memory.total", "bytes", Some(m.mem_total));
            cpu.u("system_memory.used", "bytes", Some(m.used()));
            cpu.u("system_memory.available", "bytes", m.mem_available);
            cpu.u("system_memory.swap_used", "bytes", m.swap_used());
        }
        let freqs: Vec<f64> = sys.cores.iter().filter_map(|c| c.freq_mhz).collect();
        if !freqs.is_empty() {
            cpu.f(
                "cpu_freq_mean",
                "MHz",
                Some(freqs.iter().sum::<f64>() / freqs.len() as f64),
            );
        }
    }
    if let Some(n) = &s.net {
        let ifs: Vec<_> = n
            .interfaces
            .iter()
            .filter(|i| i.counters.name != "lo")
            .collect();
        cpu.f(
            "net_io_counters.bytes_recv",
            "bytes/s",
            sum(ifs.iter().map(|i| i.rx_bytes_per_s)),
        );
        cpu.f(
            "net_io_counters.bytes_sent",
            "bytes/s",
            sum(ifs.iter().map(|i| i.tx_bytes_per_s)),
        );
        cpu.f(
            "net_io_counters.packets_recv",
            "1/s",
            sum(ifs.iter().map(|i| i.rx_packets_per_s)),
        );
        cpu.f(
            "net_io_counters.packets_sent",
            "1/s",
            sum(ifs.iter().map(|i| i.tx_packets_per_s)),
        );
    }
    if let Some(ib) = &s.ib {
        if !ib.ports.is_empty() {
            let p = &ib.ports;
            cpu.f(
                "ib_io_counters.port_rcv_data",
                "bytes/s",
                sum(p.iter().map(|x| x.rx_bytes_per_s)),
            );
            cpu.f(
                "ib_io_counters.port_xmit_data",
                "bytes/s",
                sum(p.iter().map(|x| x.tx_bytes_per_s)),
            );
            cpu.f(
                "ib_io_counters.port_rcv_packets",
                "1/s",
                sum(p.iter().map(|x| x.rx_packets_per_s)),
            );
            cpu.f(
                "ib_io_counters.port_xmit_packets",
                "1/s",
                sum(p.iter().map(|x| x.tx_packets_per_s)),
            );
        }
    }
    if let Some(r) = &s.rapl {
        for d in &r.domains {
            let name = key_part(&d.name.replace('/', "-"));
            cpu.f(format!("rapl_powercap.{name}"), "W", d.power_w);
            cpu.f(format!("rapl_energy.{name}"), "J", Some(d.energy_total_j));
        }
    }
    let mut out = vec![cpu];

    if let Some(p) = &s.perf {
        let mut row = Row::new(MetricFile::Perf, host.to_string(), time);
        for e in &p.events {
            match e.name.split_once('.') {
                Some((group, event)) => row.f(
                    format!("{}.{}", key_part(group), key_part(event)),
                    "1/s",
                    e.per_s,
                ),
                None if SOFTWARE_EVENTS.contains(&e.name.as_str()) => {
                    let name = key_part(&e.name);
                    if e.name == "task-clock" {
                        row.f(
                            format!("software_events.{name}"),
                            "CPUs",
                            p.derived.cpus_utilized,
                        );
                    } else if e.name == "cpu-clock" {
                        // ns of CPU per s of wall time = CPUs busy.
                        row.f(
                            format!("software_events.{name}"),
                            "CPUs",
                            e.per_s.map(|v| v / 1e9),
                        );
                    } else {
                        row.f(format!("software_events.{name}"), "1/s", e.per_s);
                    }
                }
                None => row.f(
                    format!("hardware_events.{}", key_part(&e.name)),
                    "1/s",
                    e.per_s,
                ),
            }
        }
        row.f("derived.ipc", "instructions/cycle", p.derived.ipc);
        row.f(
            "derived.cache_miss_percent",
            "%",
            p.derived.cache_miss_percent,
        );
        row.f(
            "derived.branch_miss_percent",
            "%",
            p.derived.branch_miss_percent,
        );
        for g in &p.groups {
            for m in &g.metrics {
                let unit = m.unit.clone().unwrap_or_else(|| "ratio".to_string());
                row.f(
                    format!("{}.{}", key_part(&g.group), key_part(&m.name)),
                    unit,
                    m.value,
                );
            }
        }
        out.push(row);
    }

    if let Some(g) = &s.gpu {
        for d in &g.devices {
            let mut row = Row::new(MetricFile::Gpu, format!("gpu-{}.{host}", d.index), time);
            let f32 = |v: Option<u32>| v.map(f64::from);
            row.f("utilization_rates.gpu", "%", f32(d.utilization_gpu_percent));
            row.f(
                "utilization_rates.memory",
                "%",
                f32(d.utilization_memory_percent),
            );
            row.f("encoder_util", "%", f32(d.encoder_percent));
            row.f("decoder_util", "%", f32(d.decoder_percent));
            row.u("memory_info.used", "bytes", d.memory_used_bytes);
            row.u("memory_info.total", "bytes", d.memory_total_bytes);
            row.u("bar1_memory.used", "bytes", d.bar1_used_bytes);
            row.f("power_usage", "W", d.power_w);
            row.f("energy", "J", d.energy_j);
            row.f("temperature", "C", f32(d.temperature_c));
            row.f("fan_speed", "%", f32(d.fan_percent));
            row.f("clock_info.graphics", "MHz", f32(d.clock_graphics_mhz));
            row.f("clock_info.sm", "MHz", f32(d.clock_sm_mhz));
            row.f("clock_info.memory", "MHz", f32(d.clock_memory_mhz));
            row.f("pci_thgpt.send", "bytes/s", d.pcie_tx_bytes_per_s);
            row.f("pci_thgpt.recv", "bytes/s", d.pcie_rx_bytes_per_s);
            row.f("violation.power", "%", d.power_violation_percent);
            row.f("violation.thermal", "%", d.thermal_violation_percent);
            row.u("ecc_errors.corrected", "count", d.ecc_corrected);
            row.u("ecc_errors.uncorrected", "count", d.ecc_uncorrected);
            row.u(
                "num_procs",
                "count",
                d.processes.as_ref().map(|p| p.len() as u64),
            );
            out.push(row);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_names_never_add_a_nesting_level() {
        assert_eq!(key_part("eth0.100"), "eth0_100");
        assert_eq!(key_part("package 0"), "package_0");
    }
}

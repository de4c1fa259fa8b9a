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

/// perfmon's name for a RAPL domain: `package-<n>` for a package, and
/// `<domain>-<n>` for a domain inside package `n` (`core-0`, `dram-0`,
/// `uncore-0`). Other domains keep their own name.
pub fn rapl_key(domain: &str) -> String {
    let key = match domain.split_once('/') {
        Some((parent, own)) => match parent.strip_prefix("package-") {
            Some(n) => format!("{own}-{n}"),
            None => format!("{parent}-{own}"),
        },
        None => domain.to_string(),
    };
    key_part(&key)
}

/// The name of the perf group whose metrics give memory bandwidth.
pub const MEMORY_GROUP: &str = "MEM";

/// The rows of one snapshot for node `host`: always a `cpu` row, a `perf`
/// row if perf counters were read, one `gpu` row per GPU.
///
/// perfmon's keys carry perfmon's units and meaning (raw counters where
/// perfmon writes raw counters, counts per interval for perf events);
/// everything else has keys of its own. `docs/monitor-metrics.md` lists
/// both.
pub fn rows(s: &Snapshot, host: &str) -> Vec<Row> {
    let time = (s.timestamp_ns / 1_000) as f64 / 1e6;
    let mut cpu = Row::new(MetricFile::Cpu, host.to_string(), time);
    if let Some(p) = &s.process {
        let t = &p.totals;
        let r = &p.rates;
        cpu.f("cpu_percent", "%", r.cpu_percent);
        // perfmon: the user-mode CPU time of the parent and its children.
        cpu.f("cpu_time", "s", Some(t.user_time_s));
        cpu.f("cpu_time_user", "s", Some(t.user_time_s));
        cpu.f("cpu_time_system", "s", Some(t.system_time_s));
        cpu.f("memory_percent", "%", t.memory_percent);
        cpu.u("memory_info.rss", "bytes", Some(t.rss_bytes));
        cpu.u("memory_info.vms", "bytes", Some(t.vms_bytes));
        cpu.u("memory_info.shared", "bytes", t.shared_bytes);
        cpu.u("memory_full_info.uss", "bytes", t.uss_bytes);
        // perfmon's schema types `memory_full_info.swap` as a string: the
        // number has a key of its own.
        cpu.u("memory_swap", "bytes", t.swap_bytes);
        cpu.u("io_counters.read_bytes", "bytes", t.io.read_bytes);
        cpu.u("io_counters.write_bytes", "bytes", t.io.write_bytes);
        cpu.u("io_counters.read_count", "count", t.io.read_calls);
        cpu.u("io_counters.write_count", "count", t.io.write_calls);
        cpu.u("io_chars.read_chars", "bytes", t.io.read_chars);
        cpu.u("io_chars.write_chars", "bytes", t.io.write_chars);
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
        if let Some(c) = &t.cgroup {
            cpu.f("cgroup.cpu_usage", "s", Some(c.usage_usec as f64 / 1e6));
            cpu.u("cgroup.memory_peak", "bytes", c.memory_peak_bytes);
            if let Some(io) = &c.io {
                cpu.u("cgroup_io.read_bytes", "bytes", Some(io.rbytes));
                cpu.u("cgroup_io.write_bytes", "bytes", Some(io.wbytes));
                cpu.u("cgroup_io.read_count", "count", Some(io.rios));
                cpu.u("cgroup_io.write_count", "count", Some(io.wios));
            }
        }
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
        // Every interface, loopback included, as psutil's
        // `net_io_counters(pernic=False)` sums them.
        let ifs = &n.interfaces;
        let raw = |f: fn(&crate::parse::net_dev::NetDevice) -> u64| {
            Some(ifs.iter().map(|i| f(&i.counters)).sum::<u64>())
        };
        cpu.u("net_io_counters.bytes_recv", "bytes", raw(|c| c.rx_bytes));
        cpu.u("net_io_counters.bytes_sent", "bytes", raw(|c| c.tx_bytes));
        cpu.u(
            "net_io_counters.packets_recv",
            "count",
            raw(|c| c.rx_packets),
        );
        cpu.u(
            "net_io_counters.packets_sent",
            "count",
            raw(|c| c.tx_packets),
        );
        type NetRate = fn(&crate::source::net::NetInterfaceSample) -> Option<f64>;
        let rates: [(&str, &str, NetRate); 4] = [
            ("bytes_recv", "bytes/s", |i| i.rx_bytes_per_s),
            ("bytes_sent", "bytes/s", |i| i.tx_bytes_per_s),
            ("packets_recv", "1/s", |i| i.rx_packets_per_s),
            ("packets_sent", "1/s", |i| i.tx_packets_per_s),
        ];
        for (key, unit, rate) in rates {
            cpu.f(
                format!("net_io_rates.{key}"),
                unit,
                sum(ifs.iter().map(rate)),
            );
        }
    }
    if let Some(ib) = &s.ib {
        if !ib.ports.is_empty() {
            let p = &ib.ports;
            let raw = |f: fn(&crate::parse::infiniband::IbPortCounters) -> Option<u64>| {
                sum(p.iter().map(|x| f(&x.counters).map(|v| v as f64)))
            };
            cpu.f(
                "ib_io_counters.port_rcv_data",
                "bytes",
                raw(|c| c.rcv_bytes()),
            );
            cpu.f(
                "ib_io_counters.port_xmit_data",
                "bytes",
                raw(|c| c.xmit_bytes()),
            );
            cpu.f(
                "ib_io_counters.port_rcv_packets",
                "count",
                raw(|c| c.rcv_packets),
            );
            cpu.f(
                "ib_io_counters.port_xmit_packets",
                "count",
                raw(|c| c.xmit_packets),
            );
            type IbRate = fn(&crate::source::infiniband::IbPortSample) -> Option<f64>;
            let rates: [(&str, &str, IbRate); 4] = [
                ("port_rcv_data", "bytes/s", |x| x.rx_bytes_per_s),
                ("port_xmit_data", "bytes/s", |x| x.tx_bytes_per_s),
                ("port_rcv_packets", "1/s", |x| x.rx_packets_per_s),
                ("port_xmit_packets", "1/s", |x| x.tx_packets_per_s),
            ];
            for (key, unit, rate) in rates {
                cpu.f(format!("ib_io_rates.{key}"), unit, sum(p.iter().map(rate)));
            }
        }
    }
    if let Some(r) = &s.rapl {
        for d in &r.domains {
            let name = rapl_key(&d.name);
            cpu.u(format!("rapl_powercap.{name}"), "uJ", Some(d.energy_uj));
            cpu.f(format!("rapl_power.{name}"), "W", d.power_w);
            cpu.f(format!("rapl_energy.{name}"), "J", Some(d.energy_total_j));
        }
    }
    if let Some(p) = &s.perf {
        // perfmon's `memory_bw`: read bandwidth from last-level cache
        // misses, in bytes per second.
        let bw = p
            .groups
            .iter()
            .filter(|g| g.group == MEMORY_GROUP)
            .flat_map(|g| &g.metrics)
            .find(|m| m.unit.as_deref() == Some("MBytes/s"));
        if let Some(m) = bw {
            cpu.f("memory_bw", "bytes/s", m.value.map(|v| v * 1e6));
        }
    }
    let mut out = vec![cpu];

    if let Some(p) = &s.perf {
        let mut row = Row::new(MetricFile::Perf, host.to_string(), time);
        let count = |e: &crate::source::perf::PerfEventSample| e.interval_count.map(|c| c as f64);
        for e in &p.events {
            match e.name.split_once('.') {
                Some((group, event)) => row.f(
                    format!("{}.{}", key_part(group), key_part(event)),
                    "count",
                    count(e),
                ),
                None if SOFTWARE_EVENTS.contains(&e.name.as_str()) => {
                    let key = format!("software_events.{}", key_part(&e.name));
                    if e.name == "task-clock" || e.name == "cpu-clock" {
                        // perf stat prints CPU clocks in milliseconds.
                        row.f(key, "ms", count(e).map(|ns| ns / 1e6));
                    } else {
                        row.f(key, "count", count(e));
                    }
                }
                None => row.f(
                    format!("hardware_events.{}", key_part(&e.name)),
                    "count",
                    count(e),
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
        row.f("derived.cpus_utilized", "CPUs", p.derived.cpus_utilized);
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
            row.u("memory_used.gpu_memory", "bytes", d.memory_used_bytes);
            row.u("memory_used.bar1_memory", "bytes", d.bar1_used_bytes);
            row.u("memory_total.gpu_memory", "bytes", d.memory_total_bytes);
            row.u("memory_total.bar1_memory", "bytes", d.bar1_total_bytes);
            row.f("power_usage", "mW", f32(d.power_mw));
            row.f("energy", "J", d.energy_j);
            row.f("temperature", "C", f32(d.temperature_c));
            row.f("fan_speed", "%", f32(d.fan_percent));
            row.f("clock_info.graphics", "MHz", f32(d.clock_graphics_mhz));
            row.f("clock_info.sm", "MHz", f32(d.clock_sm_mhz));
            row.f("clock_info.memory", "MHz", f32(d.clock_memory_mhz));
            row.f("pci_thgpt.send", "KB/s", f32(d.pcie_tx_kb_s));
            row.f("pci_thgpt.recv", "KB/s", f32(d.pcie_rx_kb_s));
            row.u("violation", "ns", d.violation_ns);
            row.f("violation_percent.power", "%", d.power_violation_percent);
            row.f(
                "violation_percent.thermal",
                "%",
                d.thermal_violation_percent,
            );
            // perfmon's `sp` and `dp` are NVML's single-bit (corrected) and
            // double-bit (uncorrected) aggregate counts.
            row.u("ecc_errors.sp", "count", d.ecc_corrected);
            row.u("ecc_errors.dp", "count", d.ecc_uncorrected);
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
    fn rapl_domains_take_perfmon_names() {
        assert_eq!(rapl_key("package-0"), "package-0");
        assert_eq!(rapl_key("package-1/core"), "core-1");
        assert_eq!(rapl_key("package-0/dram"), "dram-0");
        assert_eq!(rapl_key("package-0/uncore"), "uncore-0");
        assert_eq!(rapl_key("psys"), "psys");
    }

    #[test]
    fn machine_names_never_add_a_nesting_level() {
        assert_eq!(key_part("eth0.100"), "eth0_100");
        assert_eq!(key_part("package 0"), "package_0");
    }
}

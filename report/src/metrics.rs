//! Node metrics as the reports see them: borrowed views of each metric
//! group's hosts and series (the monitor parses its files; this crate never
//! reads them), sorted into panels of a kind (CPU, memory, I/O, network,
//! energy, perf, GPU), and turned into chart lines.
//!
//! Series names come from the data. A series is placed by its group and
//! the first part of its name; counters that only grow (`io_counters`,
//! `net_io_counters`, `ib_io_counters`, energies) are drawn as rates per
//! second, since a rising total says little at a glance.

use std::collections::BTreeMap;

use crate::chart::Series;
use crate::units::Unit;

/// One host's samples in a group.
#[derive(Debug, Clone, Copy)]
pub struct HostView<'a> {
    /// The host (for GPUs `gpu-<n>.<host>`).
    pub host: &'a str,
    /// Unix seconds.
    pub times: &'a [f64],
    /// Series by dotted name, each as long as `times`.
    pub series: &'a BTreeMap<String, Vec<Option<f64>>>,
}

/// One metric group (`cpu_metrics`, `perf_metrics`, `nv_gpu_metrics`).
#[derive(Debug, Clone)]
pub struct GroupView<'a> {
    /// The group's name.
    pub name: &'a str,
    /// Unit strings by series name.
    pub units: &'a BTreeMap<String, String>,
    /// The hosts, in file order.
    pub hosts: Vec<HostView<'a>>,
}

impl GroupView<'_> {
    /// Every series name of any host, sorted.
    pub fn series_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .hosts
            .iter()
            .flat_map(|h| h.series.keys().map(String::as_str))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The unit string of `series`, if any.
    pub fn unit(&self, series: &str) -> Option<&str> {
        self.units
            .get(series)
            .map(String::as_str)
            .filter(|u| !u.is_empty())
    }
}

/// The kinds of panel, in page order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Cpu,
    Memory,
    Io,
    Network,
    Energy,
    Perf,
    Gpu,
    Other,
}

impl Kind {
    /// Every kind, in page order.
    pub const ALL: [Kind; 8] = [
        Kind::Cpu,
        Kind::Memory,
        Kind::Io,
        Kind::Network,
        Kind::Energy,
        Kind::Perf,
        Kind::Gpu,
        Kind::Other,
    ];

    /// Its heading.
    pub fn title(self) -> &'static str {
        match self {
            Kind::Cpu => "CPU",
            Kind::Memory => "Memory",
            Kind::Io => "I/O",
            Kind::Network => "Network",
            Kind::Energy => "Energy",
            Kind::Perf => "Perf events",
            Kind::Gpu => "GPU",
            Kind::Other => "Other",
        }
    }

    /// Its anchor.
    pub fn id(self) -> &'static str {
        match self {
            Kind::Cpu => "cpu",
            Kind::Memory => "memory",
            Kind::Io => "io",
            Kind::Network => "network",
            Kind::Energy => "energy",
            Kind::Perf => "perf",
            Kind::Gpu => "gpu",
            Kind::Other => "other",
        }
    }

    /// The kind of series `key` of group `group`.
    pub fn of(group: &str, key: &str) -> Kind {
        if group.contains("gpu") {
            return Kind::Gpu;
        }
        if group.contains("perf") {
            return Kind::Perf;
        }
        let head = key.split('.').next().unwrap_or(key);
        if head.starts_with("rapl") || head.contains("energy") || head.contains("power") {
            Kind::Energy
        } else if head.starts_with("net_") || head.starts_with("ib_") {
            Kind::Network
        } else if head.starts_with("io_") || head == "num_fds" || head.contains("disk") {
            Kind::Io
        } else if head.contains("mem") || head.contains("swap") || head.contains("rss") {
            Kind::Memory
        } else if head.starts_with("cpu")
            || head.starts_with("load")
            || head == "num_threads"
            || head == "num_procs"
            || head.contains("ctx_switches")
        {
            Kind::Cpu
        } else {
            Kind::Other
        }
    }
}

/// Whether series `key` (unit `unit`) is a running total better read as a
/// rate.
pub fn is_counter(key: &str, unit: Option<&str>) -> bool {
    let head = key.split('.').next().unwrap_or(key);
    let total_unit = matches!(unit, Some("bytes" | "count" | "uJ" | "J" | "packets"));
    total_unit
        && (head.ends_with("io_counters") || head.starts_with("rapl") || head.contains("energy"))
}

/// The unit string of a counter's rate.
pub fn rate_unit(unit: Option<&str>) -> &'static str {
    match unit {
        Some("bytes") => "bytes/s",
        Some("uJ") | Some("J") => "W",
        _ => "1/s",
    }
}

/// Forward differences per second of a running total, in the counter's
/// base unit per second (joules per second for `uJ`); a drop (a restart or
/// a wrap) or a missing neighbour leaves a gap. The first sample has no
/// rate.
pub fn rates(times: &[f64], values: &[Option<f64>], unit: Option<&str>) -> Vec<Option<f64>> {
    let factor = Unit::base_factor(unit);
    let mut out = Vec::with_capacity(values.len());
    for i in 0..values.len() {
        let rate = if i == 0 {
            None
        } else {
            match (values[i - 1], values[i]) {
                (Some(a), Some(b)) if b >= a && times[i] > times[i - 1] => {
                    Some((b - a) * factor / (times[i] - times[i - 1]))
                }
                _ => None,
            }
        };
        out.push(rate);
    }
    out
}

/// A series ready to draw: its values per host in base units, and the
/// unit string they are in.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The series' name in the data.
    pub key: String,
    /// Unit string of the values (a rate's for counters).
    pub unit: Option<String>,
    /// Whether the values are rates made from a running total.
    pub rate: bool,
    /// One line per host that has the series, styled by the host's
    /// position in the group.
    pub lines: Vec<Series>,
}

/// Prepares series `key` of `group`, times counted from `t0`. Values are
/// brought to the unit's base (`MHz` to Hz, `uJ` to J).
pub fn prepare(group: &GroupView, key: &str, t0: f64, styles: &HostStyles) -> Prepared {
    let unit = group.unit(key);
    let rate = is_counter(key, unit);
    let factor = Unit::base_factor(unit);
    let lines = group
        .hosts
        .iter()
        .filter_map(|h| {
            let values = h.series.get(key)?;
            let values: Vec<Option<f64>> = if rate {
                rates(h.times, values, unit)
            } else {
                values.iter().map(|v| v.map(|v| v * factor)).collect()
            };
            Some(Series {
                label: h.host.to_string(),
                style: styles.of(h.host),
                points: h.times.iter().map(|t| t - t0).zip(values).collect(),
            })
        })
        .collect();
    let unit = if rate {
        Some(rate_unit(unit).to_string())
    } else {
        unit.map(|u| base_unit_text(u).to_string())
    };
    Prepared {
        key: key.to_string(),
        unit,
        rate,
        lines,
    }
}

/// The unit string of values brought to their base (see
/// [`Unit::base_factor`]).
fn base_unit_text(unit: &str) -> &str {
    match unit {
        "MHz" => "Hz",
        "mW" => "W",
        "uJ" | "µJ" => "J",
        "KiB" => "bytes",
        "ns" => "s",
        u => u,
    }
}

/// Whether a series has anything to draw: a finite non-zero value.
pub fn worth_drawing(p: &Prepared) -> bool {
    p.lines
        .iter()
        .flat_map(|l| l.points.iter().filter_map(|p| p.1))
        .any(|v| v.is_finite() && v != 0.0)
}

/// A fixed style number per host, kept across every chart of a report:
/// hosts are numbered in the order first given; GPUs (`gpu-<n>.<host>`)
/// are numbered among themselves.
#[derive(Debug, Clone, Default)]
pub struct HostStyles {
    order: Vec<String>,
}

impl HostStyles {
    /// Styles for `hosts`, in that order.
    pub fn new<'a>(hosts: impl IntoIterator<Item = &'a str>) -> HostStyles {
        let mut s = HostStyles::default();
        for h in hosts {
            if !s.order.iter().any(|o| o == h) {
                s.order.push(h.to_string());
            }
        }
        s
    }

    /// Adds `host` at the end if it is new.
    pub fn add(&mut self, host: &str) {
        if !self.order.iter().any(|o| o == host) {
            self.order.push(host.to_string());
        }
    }

    /// The style number of `host` (unknown hosts after every known one).
    pub fn of(&self, host: &str) -> usize {
        self.order
            .iter()
            .position(|o| o == host)
            .unwrap_or(self.order.len())
    }

    /// `(host, style)` for the legend.
    pub fn entries(&self) -> Vec<(String, usize)> {
        self.order
            .iter()
            .enumerate()
            .map(|(i, h)| (h.clone(), i))
            .collect()
    }
}

/// Mean and max of the finite values.
pub fn mean_max(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (mut sum, mut n, mut max) = (0.0, 0usize, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        sum += v;
        n += 1;
        max = max.max(v);
    }
    (n > 0).then(|| (sum / n as f64, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_fall_into_panels_by_group_and_name() {
        assert_eq!(Kind::of("cpu_metrics", "cpu_percent_sys"), Kind::Cpu);
        assert_eq!(Kind::of("cpu_metrics", "load_average.1m"), Kind::Cpu);
        assert_eq!(Kind::of("cpu_metrics", "memory_info.rss"), Kind::Memory);
        assert_eq!(Kind::of("cpu_metrics", "system_memory.used"), Kind::Memory);
        assert_eq!(Kind::of("cpu_metrics", "io_counters.read_bytes"), Kind::Io);
        assert_eq!(
            Kind::of("cpu_metrics", "net_io_counters.bytes_recv"),
            Kind::Network
        );
        assert_eq!(
            Kind::of("cpu_metrics", "ib_io_counters.port_rcv_data"),
            Kind::Network
        );
        assert_eq!(
            Kind::of("cpu_metrics", "rapl_powercap.package-0"),
            Kind::Energy
        );
        assert_eq!(
            Kind::of("perf_metrics", "hardware_events.cycles"),
            Kind::Perf
        );
        assert_eq!(Kind::of("nv_gpu_metrics", "memory_info.used"), Kind::Gpu);
    }

    #[test]
    fn running_totals_become_rates_with_gaps_at_drops() {
        let t = [0.0, 1.0, 3.0, 4.0, 5.0];
        let v = [Some(0.0), Some(100.0), Some(300.0), Some(50.0), None];
        assert_eq!(
            rates(&t, &v, Some("bytes")),
            [None, Some(100.0), Some(100.0), None, None]
        );
        let uj = rates(&[0.0, 2.0], &[Some(0.0), Some(4e6)], Some("uJ"));
        assert_eq!(uj[1], Some(2.0));
        assert!(is_counter("net_io_counters.bytes_recv", Some("bytes")));
        assert!(!is_counter("net_io_counters.bytes_recv", Some("bytes/s")));
        assert!(is_counter("rapl_powercap.package-0", Some("uJ")));
    }

    #[test]
    fn hosts_keep_their_style_everywhere() {
        let mut s = HostStyles::new(["b", "a"]);
        s.add("a");
        s.add("c");
        assert_eq!((s.of("b"), s.of("a"), s.of("c")), (0, 1, 2));
    }
}

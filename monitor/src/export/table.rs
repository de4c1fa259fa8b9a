//! A group as a table: one row per (host, time stamp), with perfmon's
//! column names.
//!
//! Columns are `Host`, `Timestamps` (Unix seconds), then every series of
//! any host in name order. A series' column is named as perfmon names it
//! where perfmon documents the name, with the unit the data gives:
//!
//! - `rapl_powercap.<domain>-<socket>` (domain `package`, `dram`, `core` or
//!   `uncore`) is `RAPL <domain> <socket> [<unit>]`;
//! - `memory_bw` is `Memory (read) bandwidth [<unit>]`;
//! - in `perf_metrics`, an event under one of perfmon's event groups
//!   (`L2`, `L2cache`, `L3`, `L3cache`, `FLOPS_SP`, `FLOPS_DP`) is the
//!   event's name alone, when no other column has that name.
//!
//! Any other series is `<series> [<unit>]`, or `<series>` when it has no
//! unit; nested objects give dotted names (`utilization.gpu`). Names come
//! from the data, so a series the monitor adds is exported without a change
//! here. A host without a series has missing values in its column.

use std::collections::BTreeSet;

use crate::report::input::{HostSeries, MetricGroup};

/// Header of the host column.
pub const HOST: &str = "Host";
/// Header of the time column, Unix seconds.
pub const TIME: &str = "Timestamps";

/// perfmon's groups of perf events, whose events are columns of their own
/// name.
const PERF_EVENT_GROUPS: [&str; 6] = ["L2", "L2cache", "L3", "L3cache", "FLOPS_SP", "FLOPS_DP"];

/// A column header: the series name, then its unit in brackets if any.
pub fn header(series: &str, unit: Option<&str>) -> String {
    match unit {
        Some(u) => format!("{series} [{u}]"),
        None => series.to_string(),
    }
}

/// The column name perfmon gives `series` of `group`, if it documents one.
fn perfmon_name(group: &str, series: &str, unit: Option<&str>) -> Option<String> {
    let with_unit = |name: String| match unit {
        Some(u) => format!("{name} [{u}]"),
        None => name,
    };
    if series == "memory_bw" {
        return Some(with_unit("Memory (read) bandwidth".to_string()));
    }
    if let Some(rest) = series.strip_prefix("rapl_powercap.") {
        let (domain, socket) = rest.rsplit_once('-')?;
        let known = ["package", "dram", "core", "uncore"].contains(&domain);
        if known && !socket.is_empty() && socket.bytes().all(|b| b.is_ascii_digit()) {
            return Some(with_unit(format!("RAPL {domain} {socket}")));
        }
        return None;
    }
    if group == "perf_metrics" {
        let (events, event) = series.split_once('.')?;
        if PERF_EVENT_GROUPS.contains(&events) {
            return Some(event.to_string());
        }
    }
    None
}

/// A group seen as rows and columns.
pub struct Table<'a> {
    group: &'a MetricGroup,
    series: Vec<&'a str>,
    headers: Vec<String>,
}

impl<'a> Table<'a> {
    /// The table of `group`.
    pub fn new(group: &'a MetricGroup) -> Table<'a> {
        let series = group.series_names();
        let plain: Vec<String> = series.iter().map(|s| header(s, group.unit(s))).collect();
        let mut taken: BTreeSet<String> = plain.iter().cloned().collect();
        taken.insert(HOST.to_string());
        taken.insert(TIME.to_string());
        let headers = series
            .iter()
            .zip(plain)
            .map(
                |(s, plain)| match perfmon_name(&group.name, s, group.unit(s)) {
                    Some(name) if !taken.contains(&name) => {
                        taken.insert(name.clone());
                        name
                    }
                    _ => plain,
                },
            )
            .collect();
        Table {
            group,
            series,
            headers,
        }
    }

    /// The group's name (`cpu_metrics`, ...).
    pub fn name(&self) -> &str {
        &self.group.name
    }

    /// Headers of the series columns (after `Host` and `Timestamps`).
    pub fn series_headers(&self) -> &[String] {
        &self.headers
    }

    /// Every header, `Host` and `Timestamps` first.
    pub fn headers(&self) -> Vec<String> {
        let mut all = vec![HOST.to_string(), TIME.to_string()];
        all.extend(self.headers.iter().cloned());
        all
    }

    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.group.hosts.iter().map(|h| h.time_stamps.len()).sum()
    }

    /// Number of series columns.
    pub fn num_series(&self) -> usize {
        self.series.len()
    }

    /// The rows, host by host, each host's samples in file order.
    pub fn rows(&self) -> impl Iterator<Item = Row<'a>> + '_ {
        self.group.hosts.iter().flat_map(move |h| {
            let columns: Vec<Option<&'a [Option<f64>]>> = self
                .series
                .iter()
                .map(|s| h.series.get(*s).map(Vec::as_slice))
                .collect();
            (0..h.time_stamps.len()).map(move |i| Row {
                host: &h.host,
                time_stamp: h.time_stamps[i],
                values: columns.iter().map(|c| c.and_then(|v| v[i])).collect(),
            })
        })
    }

    /// The host of every row.
    pub fn host_column(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.group
            .hosts
            .iter()
            .flat_map(|h| std::iter::repeat_n(h.host.as_str(), h.time_stamps.len()))
    }

    /// The time stamp of every row.
    pub fn time_column(&self) -> impl Iterator<Item = f64> + '_ {
        self.group
            .hosts
            .iter()
            .flat_map(|h| h.time_stamps.iter().copied())
    }

    /// The values of series column `j` (0-based among series columns).
    pub fn series_column(&self, j: usize) -> impl Iterator<Item = Option<f64>> + 'a {
        let name = self.series[j];
        self.group.hosts.iter().flat_map(move |h: &'a HostSeries| {
            let values = h.series.get(name);
            (0..h.time_stamps.len()).map(move |i| values.and_then(|v| v[i]))
        })
    }
}

/// One row of a [`Table`].
pub struct Row<'a> {
    /// The host.
    pub host: &'a str,
    /// Fractional Unix seconds.
    pub time_stamp: f64,
    /// One value per series column; `None` when missing.
    pub values: Vec<Option<f64>>,
}

#[cfg(test)]
mod tests {
    use super::perfmon_name;

    #[test]
    fn perfmon_names_where_perfmon_documents_them() {
        let rapl = perfmon_name("cpu_metrics", "rapl_powercap.package-0", Some("uJ"));
        assert_eq!(rapl.as_deref(), Some("RAPL package 0 [uJ]"));
        let dram = perfmon_name("cpu_metrics", "rapl_powercap.dram-1", Some("uJ"));
        assert_eq!(dram.as_deref(), Some("RAPL dram 1 [uJ]"));
        assert_eq!(
            perfmon_name("cpu_metrics", "rapl_powercap.package-0-core", Some("W")),
            None
        );
        assert_eq!(
            perfmon_name("cpu_metrics", "memory_bw", Some("MiB/s")).as_deref(),
            Some("Memory (read) bandwidth [MiB/s]")
        );
        assert_eq!(
            perfmon_name("perf_metrics", "L3.LLC_MISSES", None).as_deref(),
            Some("LLC_MISSES")
        );
        assert_eq!(perfmon_name("perf_metrics", "hardware.cycles", None), None);
        assert_eq!(perfmon_name("cpu_metrics", "cpu_percent", Some("%")), None);
    }
}

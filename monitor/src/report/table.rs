//! A group as a table: one row per (host, time stamp).
//!
//! Columns are `host`, `time_stamp [s]`, then every series of any host in
//! name order, headed `<series> [<unit>]`, or `<series>` when the series has
//! no unit. A host without a series has missing values in its column.

use super::input::{HostSeries, MetricGroup};

/// Header of the host column.
pub const HOST: &str = "host";
/// Header of the time column.
pub const TIME: &str = "time_stamp [s]";

/// A column header: the series name, then its unit in brackets if any.
pub fn header(series: &str, unit: Option<&str>) -> String {
    match unit {
        Some(u) => format!("{series} [{u}]"),
        None => series.to_string(),
    }
}

/// A group seen as rows and columns.
pub struct Table<'a> {
    group: &'a MetricGroup,
    series: Vec<&'a str>,
}

impl<'a> Table<'a> {
    /// The table of `group`.
    pub fn new(group: &'a MetricGroup) -> Table<'a> {
        Table {
            group,
            series: group.series_names(),
        }
    }

    /// Headers of the series columns (after `host` and `time_stamp [s]`).
    pub fn series_headers(&self) -> Vec<String> {
        self.series
            .iter()
            .map(|s| header(s, self.group.unit(s)))
            .collect()
    }

    /// Every header, `host` and `time_stamp [s]` first.
    pub fn headers(&self) -> Vec<String> {
        let mut all = vec![HOST.to_string(), TIME.to_string()];
        all.extend(self.series_headers());
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

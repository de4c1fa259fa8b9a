//! Which plots a group gets, their file names, and drawing them.
//!
//! Selection: a series is plotted when at least one host has a finite,
//! non-zero value in it (all-missing and all-zero series are skipped). Each
//! plotted series gets one combined plot with a line per host that has the
//! series, named `<group>.<series>.png`. When the group has 2 to
//! [`PER_HOST_MAX`] hosts, each host whose own values pass the same test
//! also gets `<group>.<series>.<host>.png` (one host would repeat the
//! combined plot; many would flood the report). Characters other than ASCII
//! letters, digits, `.`, `_` and `-` become `_` in file names, and a name
//! already taken gets `-2`, `-3`, ... before `.png`.
//!
//! The x axis is seconds since the job's `start_time` (or the group's first
//! time stamp when the metadata has none).

use std::collections::HashSet;

use super::chart::{self, Chart, Line};
use super::input::MetricGroup;
use super::png;
use super::table::header;

/// The largest host count for which per-host plots are drawn.
pub const PER_HOST_MAX: usize = 8;

/// One plot to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    /// The group it belongs to.
    pub group: String,
    /// The series it shows.
    pub series: String,
    /// The one host it shows, or `None` for every host.
    pub host: Option<String>,
    /// Its file name under `plots/`.
    pub file_name: String,
    /// Its title.
    pub title: String,
}

/// Whether `values` hold anything worth a plot: a finite non-zero value.
pub fn worth_plotting(values: &[Option<f64>]) -> bool {
    values.iter().flatten().any(|v| v.is_finite() && *v != 0.0)
}

/// The plots of `group`, series by series (combined plot first).
pub fn plan(group: &MetricGroup) -> Vec<Plot> {
    let mut taken = HashSet::new();
    let mut plots = Vec::new();
    let per_host = (2..=PER_HOST_MAX).contains(&group.hosts.len());
    for series in group.series_names() {
        let worthy: Vec<&str> = group
            .hosts
            .iter()
            .filter(|h| h.series.get(series).is_some_and(|v| worth_plotting(v)))
            .map(|h| h.host.as_str())
            .collect();
        if worthy.is_empty() {
            continue;
        }
        let mut add = |host: Option<&str>| {
            let stem = match host {
                None => format!("{}.{series}", group.name),
                Some(h) => format!("{}.{series}.{h}", group.name),
            };
            let title = match host {
                None => format!("{series} ({})", group.name),
                Some(h) => format!("{series} on {h} ({})", group.name),
            };
            plots.push(Plot {
                group: group.name.clone(),
                series: series.to_string(),
                host: host.map(str::to_string),
                file_name: unique_name(&file_safe(&stem), &mut taken),
                title,
            });
        };
        add(None);
        if per_host {
            for host in worthy {
                add(Some(host));
            }
        }
    }
    plots
}

fn unique_name(stem: &str, taken: &mut HashSet<String>) -> String {
    let mut name = format!("{stem}.png");
    let mut n = 2;
    while !taken.insert(name.clone()) {
        name = format!("{stem}-{n}.png");
        n += 1;
    }
    name
}

/// `name` with every character other than ASCII letters, digits, `.`, `_`
/// and `-` replaced by `_`.
pub fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Draws `plot` of `group` as a PNG file's bytes; times are counted from
/// `start` (Unix seconds), or from the group's first time stamp.
pub fn draw(group: &MetricGroup, plot: &Plot, start: Option<f64>) -> Vec<u8> {
    let t0 = start.or_else(|| group.first_time()).unwrap_or(0.0);
    let lines = group
        .hosts
        .iter()
        .enumerate()
        .filter(|(_, h)| plot.host.as_ref().is_none_or(|p| *p == h.host))
        .filter_map(|(i, h)| {
            let values = h.series.get(&plot.series)?;
            let points = h
                .time_stamps
                .iter()
                .zip(values)
                .map(|(t, v)| (t - t0, *v))
                .collect();
            Some(Line {
                label: h.host.clone(),
                color: i,
                points,
            })
        })
        .collect();
    let chart = Chart {
        title: plot.title.clone(),
        x_label: "time since job start [s]".to_string(),
        y_label: header(&plot.series, group.unit(&plot.series)),
        lines,
    };
    png::encode(&chart::render(&chart))
}

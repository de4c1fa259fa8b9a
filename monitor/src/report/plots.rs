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
//! The x axis is time since the job's `start_time` (or the group's first
//! time stamp when the metadata has none), in seconds, or in hours when the
//! plotted data reaches [`HOURS_FROM`] (3 h).

use std::collections::HashSet;

use super::chart::{self, Chart, Line};
use super::input::MetricGroup;
use super::png;
use crate::export::table::header;

/// The largest host count for which per-host plots are drawn.
pub const PER_HOST_MAX: usize = 8;

/// From this many seconds of data on, the time axis counts hours.
pub const HOURS_FROM: f64 = 3.0 * 3600.0;

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
    png::encode(&chart::render(&chart_of(group, plot, start)))
}

/// What [`draw`] draws: the lines, titles and axis labels of `plot`.
pub fn chart_of(group: &MetricGroup, plot: &Plot, start: Option<f64>) -> Chart {
    let t0 = start.or_else(|| group.first_time()).unwrap_or(0.0);
    let shown = || {
        group
            .hosts
            .iter()
            .enumerate()
            .filter(|(_, h)| plot.host.as_ref().is_none_or(|p| *p == h.host))
    };
    let last = shown()
        .filter_map(|(_, h)| h.time_stamps.last())
        .fold(0.0f64, |a, t| a.max(t - t0));
    let (per, unit) = if last >= HOURS_FROM {
        (3600.0, "h")
    } else {
        (1.0, "s")
    };
    let lines = shown()
        .filter_map(|(i, h)| {
            let values = h.series.get(&plot.series)?;
            let points = h
                .time_stamps
                .iter()
                .zip(values)
                .map(|(t, v)| ((t - t0) / per, *v))
                .collect();
            Some(Line {
                label: h.host.clone(),
                color: i,
                points,
            })
        })
        .collect();
    Chart {
        title: plot.title.clone(),
        x_label: format!("time since job start [{unit}]"),
        y_label: header(&plot.series, group.unit(&plot.series)),
        lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::input::parse_group;

    fn group(seconds: f64) -> MetricGroup {
        let text = format!(
            r#"{{"host_names": ["a", "b"], "units": {{"x.y": "W"}},
                "a": {{"time_stamps": [100, {end}], "x": {{"y": [1, null]}}}},
                "b": {{"time_stamps": [100], "x": {{"y": [0]}}, "z": [0]}}}}"#,
            end = 100.0 + seconds
        );
        parse_group("cpu_metrics", &text).unwrap()
    }

    #[test]
    fn all_zero_series_and_hosts_get_no_plot() {
        let names: Vec<String> = plan(&group(10.0))
            .into_iter()
            .map(|p| p.file_name)
            .collect();
        assert_eq!(names, ["cpu_metrics.x.y.png", "cpu_metrics.x.y.a.png"]);
    }

    #[test]
    fn time_counts_seconds_from_the_start_and_hours_for_long_jobs() {
        let g = group(10.0);
        let plot = &plan(&g)[0];
        let chart = chart_of(&g, plot, Some(90.0));
        assert_eq!(chart.x_label, "time since job start [s]");
        assert_eq!(chart.y_label, "x.y [W]");
        assert_eq!(chart.lines[0].points, [(10.0, Some(1.0)), (20.0, None)]);
        assert_eq!(chart.lines[1].points, [(10.0, Some(0.0))]);
        let g = group(4.0 * 3600.0);
        let chart = chart_of(&g, &plan(&g)[0], None);
        assert_eq!(chart.x_label, "time since job start [h]");
        assert_eq!(chart.lines[0].points[1], (4.0, None));
    }

    #[test]
    fn file_names_are_safe_and_unique() {
        let mut taken = HashSet::new();
        assert_eq!(unique_name(&file_safe("a/b c"), &mut taken), "a_b_c.png");
        assert_eq!(unique_name(&file_safe("a:b c"), &mut taken), "a_b_c-2.png");
    }
}

//! The node-metric sections of a page: one section per kind of panel (CPU,
//! memory, I/O, network, energy, perf, GPU) holding small multiples (one
//! chart per series, one line per host, a shared host legend above the
//! grid), a per-series summary table, and the hardware as one row per
//! distinct configuration.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::chart::{self, Chart, YScale};
use crate::html::{self, escape, Page};
use crate::metrics::{mean_max, prepare, worth_drawing, GroupView, HostStyles, Kind, Prepared};
use crate::units::Unit;

/// Width and height of a panel's chart, px (the page scales it).
pub const PANEL: (f64, f64) = (520.0, 230.0);

/// Series drawn first in their section, in this order; the rest follow by
/// name.
const FIRST: [&str; 12] = [
    "cpu_percent",
    "cpu_percent_sys",
    "cpu_time",
    "load_average",
    "memory_percent",
    "memory_info.rss",
    "system_memory.used",
    "net_io_counters.bytes_recv",
    "net_io_counters.bytes_sent",
    "utilization",
    "power_usage",
    "memory_info.used",
];

fn rank(key: &str) -> (usize, &str) {
    let r = FIRST
        .iter()
        .position(|f| {
            key == *f || key.starts_with(&format!("{f}.")) || key.starts_with(&format!("{f}_"))
        })
        .unwrap_or(FIRST.len());
    (r, key)
}

/// One drawn series of a section.
pub struct Panel {
    /// The group it came from.
    pub group: String,
    /// The prepared series.
    pub series: Prepared,
    /// Its chart as SVG.
    pub svg: String,
}

/// Every series worth drawing, as panels by kind (kinds in page order,
/// panels in [`FIRST`] order then by name). Times count from `t0`.
pub fn panels(groups: &[GroupView], t0: f64, styles: &HostStyles) -> Vec<(Kind, Vec<Panel>)> {
    let mut by_kind: BTreeMap<Kind, Vec<Panel>> = BTreeMap::new();
    for g in groups {
        let mut keys = g.series_names();
        keys.sort_by(|a, b| rank(a).cmp(&rank(b)));
        for key in keys {
            let p = prepare(g, key, t0, styles);
            if !worth_drawing(&p) {
                continue;
            }
            let unit = Unit::parse(p.unit.as_deref());
            let title = if p.rate {
                format!("{key} (rate)")
            } else {
                key.to_string()
            };
            let leaf = key.rsplit('.').next().unwrap_or(key);
            let svg = chart::svg(&Chart {
                title,
                unit,
                y_label: leaf.to_string(),
                series: p.lines.clone(),
                y_scale: YScale::Linear,
                width: PANEL.0,
                height: PANEL.1,
                legend: false,
            });
            by_kind
                .entry(Kind::of(g.name, key))
                .or_default()
                .push(Panel {
                    group: g.name.to_string(),
                    series: p,
                    svg,
                });
        }
    }
    by_kind.into_iter().collect()
}

/// Adds a section per kind of panel to `page`, each with the legend of
/// the hosts it shows. Returns how many charts were added.
pub fn panel_sections(
    page: &mut Page,
    panels: &[(Kind, Vec<Panel>)],
    styles: &HostStyles,
) -> usize {
    let mut n = 0;
    for (kind, list) in panels {
        page.section(kind.id(), kind.title());
        let mut hosts: Vec<(String, usize)> = styles
            .entries()
            .into_iter()
            .filter(|(h, _)| {
                list.iter()
                    .any(|p| p.series.lines.iter().any(|l| &l.label == h))
            })
            .collect();
        hosts.sort_by_key(|(_, s)| *s);
        page.push(&html::legend(&hosts));
        let cells: Vec<(String, Option<String>)> = list
            .iter()
            .map(|p| {
                let note = format!("{} · {}", p.group, p.series.key);
                (p.svg.clone(), Some(note))
            })
            .collect();
        n += cells.len();
        page.push(&html::grid(&cells));
    }
    n
}

/// The summary: one row per drawn series with its mean over every host
/// and sample, its largest value and where it was.
pub fn summary_section(page: &mut Page, panels: &[(Kind, Vec<Panel>)]) {
    page.section("summary", "Summary");
    if panels.is_empty() {
        page.push("<p class=\"none\">No series had a non-zero value.</p>\n");
        return;
    }
    let mut rows = Vec::new();
    for (kind, list) in panels {
        for p in list {
            let unit = Unit::parse(p.series.unit.as_deref());
            let all = p
                .series
                .lines
                .iter()
                .flat_map(|l| l.points.iter().filter_map(|p| p.1));
            let Some((mean, max)) = mean_max(all) else {
                continue;
            };
            let top = p
                .series
                .lines
                .iter()
                .filter_map(|l| {
                    mean_max(l.points.iter().filter_map(|p| p.1)).map(|(_, m)| (m, &l.label))
                })
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, h)| h.clone())
                .unwrap_or_default();
            rows.push(vec![
                kind.title().to_string(),
                p.series.key.clone() + if p.series.rate { " (rate)" } else { "" },
                unit.format(mean),
                unit.format(max),
                top,
                p.series.lines.len().to_string(),
            ]);
        }
    }
    page.push(&html::table(
        &["Kind", "Series", "Mean", "Max", "Max on", "Hosts"],
        &rows,
        &[2, 3, 5],
    ));
}

/// Text of the first of `paths` (dotted, into nested objects) that holds
/// a scalar.
fn pick(hw: &Map<String, Value>, paths: &[&str]) -> Option<String> {
    paths.iter().find_map(|p| {
        let mut v: &Value = hw.get(p.split('.').next()?)?;
        for part in p.split('.').skip(1) {
            v = v.get(part)?;
        }
        match v {
            Value::String(s) if !s.is_empty() => Some(s.trim().to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    })
}

fn number(hw: &Map<String, Value>, paths: &[&str]) -> Option<f64> {
    pick(hw, paths).and_then(|s| s.split_whitespace().next()?.parse().ok())
}

/// One host's hardware in a row: CPU, sockets/cores/threads, memory,
/// GPUs, kernel.
pub fn hardware_row(hw: &Map<String, Value>) -> Vec<String> {
    let cpu = pick(
        hw,
        &["cpu.model_name", "cpu.model", "Model name", "model_name"],
    );
    let topo = [
        ("socket", number(hw, &["cpu.sockets", "Socket(s)"])),
        ("core", number(hw, &["cpu.cores", "Core(s) per socket"])),
        ("thread", number(hw, &["cpu.threads", "CPU(s)"])),
    ]
    .iter()
    .filter_map(|(n, v)| v.map(|v| format!("{v} {n}{}", if v == 1.0 { "" } else { "s" })))
    .collect::<Vec<_>>()
    .join(", ");
    let memory = number(hw, &["memory_total_bytes", "memory.total", "mem_total"])
        .map(|b| Unit::Bytes.format(b));
    let gpus = match hw.get("gpus") {
        Some(Value::Array(items)) if !items.is_empty() => {
            let mut names: BTreeMap<String, usize> = BTreeMap::new();
            for g in items {
                let name = g
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("GPU")
                    .to_string();
                *names.entry(name).or_default() += 1;
            }
            names
                .into_iter()
                .map(|(n, c)| format!("{c} × {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
        _ => "none".to_string(),
    };
    let kernel = pick(hw, &["kernel.release", "kernel", "os"]);
    let dash = || "–".to_string();
    vec![
        cpu.unwrap_or_else(dash),
        if topo.is_empty() { dash() } else { topo },
        memory.unwrap_or_else(dash),
        gpus,
        kernel.unwrap_or_else(dash),
    ]
}

/// The hardware: one row per distinct configuration with the hosts that
/// have it, then each host's full description folded away.
pub fn hardware_section(page: &mut Page, hosts: &[(&str, &Map<String, Value>)]) {
    page.section("hardware", "Hardware");
    if hosts.is_empty() {
        page.push("<p class=\"none\">No hosts recorded.</p>\n");
        return;
    }
    let mut configs: Vec<(Vec<String>, Vec<&str>)> = Vec::new();
    for (host, hw) in hosts {
        let row = hardware_row(hw);
        match configs.iter_mut().find(|(r, _)| *r == row) {
            Some((_, hs)) => hs.push(host),
            None => configs.push((row, vec![host])),
        }
    }
    let rows: Vec<Vec<String>> = configs
        .into_iter()
        .map(|(row, hs)| {
            let mut r = vec![format!("{} ({})", compact_hosts(&hs), hs.len())];
            r.extend(row);
            r
        })
        .collect();
    page.push(&html::table(
        &["Hosts", "CPU", "Topology", "Memory", "GPUs", "Kernel"],
        &rows,
        &[],
    ));
    let mut details = String::from("<details><summary>Full description of each host</summary>\n");
    for (host, hw) in hosts {
        let _ = writeln!(details, "<h3>{}</h3>", escape(host));
        let mut flat = Vec::new();
        flatten("", hw, &mut flat);
        if flat.is_empty() {
            details.push_str("<p class=\"none\">No hardware description.</p>\n");
            continue;
        }
        let rows: Vec<(&str, Option<String>)> = flat
            .iter()
            .map(|(k, v)| (k.as_str(), Some(v.clone())))
            .collect();
        details.push_str(&html::kv_table(&rows));
    }
    details.push_str("</details>\n");
    page.push(&details);
}

/// Up to six host names, then how many more.
fn compact_hosts(hosts: &[&str]) -> String {
    if hosts.len() <= 6 {
        hosts.join(", ")
    } else {
        format!("{}, … {}", hosts[..3].join(", "), hosts[hosts.len() - 1])
    }
}

/// Free-form JSON as (dotted key, text) rows; arrays of scalars are joined
/// with commas, other arrays are numbered `key[i]`.
pub fn flatten(prefix: &str, map: &Map<String, Value>, rows: &mut Vec<(String, String)>) {
    for (k, v) in map {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        flatten_value(key, v, rows);
    }
}

fn flatten_value(key: String, value: &Value, rows: &mut Vec<(String, String)>) {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    match value {
        Value::Object(map) => flatten(&key, map, rows),
        Value::Array(items) if items.iter().all(|v| !v.is_object() && !v.is_array()) => {
            rows.push((key, items.iter().map(text).collect::<Vec<_>>().join(", ")));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                flatten_value(format!("{key}[{i}]"), item, rows);
            }
        }
        scalar => rows.push((key, text(scalar))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hardware_reads_as_one_row_of_words() {
        let hw = json!({
            "cpu": {"model_name": "Xeon 9999", "sockets": 2, "cores": 64, "threads": 128},
            "memory_total_bytes": 274877906944u64,
            "gpus": [{"name": "H100"}, {"name": "H100"}],
            "kernel": {"release": "6.1.0"}
        });
        let row = hardware_row(hw.as_object().unwrap());
        assert_eq!(
            row,
            [
                "Xeon 9999",
                "2 sockets, 64 cores, 128 threads",
                "256 GiB",
                "2 × H100",
                "6.1.0"
            ]
        );
    }
}

//! perfmon's job report: `job-report-<jobid>.pdf`, A4 pages with perfmon's
//! header line (Job ID, User, # Nodes, Date), a page number at the foot,
//! and its plots of the CPU metrics, grouped as perfmon groups them:
//!
//! 1. CPU Load, Memory and Memory Bandwidth (Read): averaged over nodes;
//! 2. Output and Input Traffic, Packets Output and Input: totals, log y;
//! 3. the same for the interconnect (InfiniBand): totals, log y;
//! 4. RAPL Package, DRAM, Core and Uncore Power: totals.
//!
//! Pages 1–4 hold the plots across all nodes (one line: the nodes' total
//! or average at each sample index, as perfmon combines them); then the
//! same four pages per node (one line per node), each plot titled with the
//! average and the maximum per node. A page whose plots have no data is
//! left out (perfmon printed it empty). Each plot is also written as
//! `plots/<Name>_all_nodes.png` and `plots/<Name>_per_node.png`, perfmon's
//! file names.
//!
//! Series are found by their name in the data, whatever it is this
//! release: running totals (perfmon's raw `net_io_counters`, RAPL energy
//! in µJ) are turned into rates; series already in rates are used as they
//! are. Negative values become 0 as perfmon's plots make them.

use std::fmt::Write as _;

use crate::chart::{self, Chart, Series, YScale, FONT};
use crate::html::escape;
use crate::metrics::{is_counter, mean_max, rate_unit, rates, GroupView, HostStyles};
use crate::units::Unit;

/// How perfmon combines the nodes' values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Mean over nodes.
    Average,
    /// Sum over nodes.
    Total,
}

/// One of perfmon's plots.
#[derive(Debug, Clone, Copy)]
pub struct PlotSpec {
    /// Its name (`CPU Load`).
    pub name: &'static str,
    /// How nodes combine.
    pub combine: Combine,
    /// Log y axis.
    pub log: bool,
    /// Which series of `cpu_metrics` it sums per node.
    pub matches: fn(&str) -> bool,
}

fn rapl_domain(key: &str) -> Option<&str> {
    let domain = key.strip_prefix("rapl_powercap.")?;
    Some(domain)
}

const fn spec(
    name: &'static str,
    combine: Combine,
    log: bool,
    matches: fn(&str) -> bool,
) -> PlotSpec {
    PlotSpec {
        name,
        combine,
        log,
        matches,
    }
}

/// perfmon's pages, each a list of plots.
pub const PAGES: [&[PlotSpec]; 4] = [
    &[
        spec("CPU Load", Combine::Average, false, |k| k == "cpu_percent"),
        spec("Memory", Combine::Average, false, |k| {
            k == "memory_info.rss" || k == "memory_rss"
        }),
        spec("Memory Bandwidth (Read)", Combine::Average, false, |k| {
            let k = k.to_ascii_lowercase();
            k.contains("bandwidth") && k.contains("read")
        }),
    ],
    &[
        spec("Output Traffic", Combine::Total, true, |k| {
            k == "net_io_counters.bytes_sent"
        }),
        spec("Input Traffic", Combine::Total, true, |k| {
            k == "net_io_counters.bytes_recv"
        }),
        spec("Packets Output", Combine::Total, true, |k| {
            k == "net_io_counters.packets_sent"
        }),
        spec("Packets Input", Combine::Total, true, |k| {
            k == "net_io_counters.packets_recv"
        }),
    ],
    &[
        spec("Interconnect Output Traffic", Combine::Total, true, |k| {
            k == "ib_io_counters.port_xmit_data"
        }),
        spec("Interconnect Input Traffic", Combine::Total, true, |k| {
            k == "ib_io_counters.port_rcv_data"
        }),
        spec("Interconnect Packets Output", Combine::Total, true, |k| {
            k == "ib_io_counters.port_xmit_packets"
        }),
        spec("Interconnect Packets Input", Combine::Total, true, |k| {
            k == "ib_io_counters.port_rcv_packets"
        }),
    ],
    &[
        spec("RAPL Package Power", Combine::Total, false, |k| {
            rapl_domain(k).is_some_and(|d| {
                d.strip_prefix("package-")
                    .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
            })
        }),
        spec("RAPL DRAM Power", Combine::Total, false, |k| {
            rapl_domain(k).is_some_and(|d| d.contains("dram"))
        }),
        spec("RAPL Core Power", Combine::Total, false, |k| {
            rapl_domain(k).is_some_and(|d| d.contains("core") && !d.contains("uncore"))
        }),
        spec("RAPL Uncore Power", Combine::Total, false, |k| {
            rapl_domain(k).is_some_and(|d| d.contains("uncore"))
        }),
    ],
];

/// One plot's data: per node, and combined.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotData {
    /// Which plot.
    pub name: &'static str,
    /// How nodes combine.
    pub combine: Combine,
    /// Log y.
    pub log: bool,
    /// Unit string of the values.
    pub unit: String,
    /// One line per node.
    pub per_node: Vec<Series>,
    /// The combined line.
    pub all_nodes: Series,
}

impl PlotData {
    /// perfmon's file stem: the name with `_` for spaces.
    pub fn file_stem(&self) -> String {
        self.name.replace(' ', "_")
    }
}

/// The data of `spec` from `cpu` (times from `t0`); `None` when no node
/// has a matching series with a value.
pub fn plot_data(
    spec: &PlotSpec,
    cpu: &GroupView,
    t0: f64,
    styles: &HostStyles,
) -> Option<PlotData> {
    let keys: Vec<&str> = cpu
        .series_names()
        .into_iter()
        .filter(|k| (spec.matches)(k))
        .collect();
    let first = *keys.first()?;
    let src_unit = cpu.unit(first);
    let counter = is_counter(first, src_unit);
    let unit = if counter {
        rate_unit(src_unit).to_string()
    } else {
        match src_unit {
            Some("uJ") | Some("J") => "W".to_string(),
            Some(u) => u.to_string(),
            None => String::new(),
        }
    };
    let factor = Unit::base_factor(src_unit);
    let mut per_node = Vec::new();
    for h in &cpu.hosts {
        let mut total: Option<Vec<Option<f64>>> = None;
        for k in &keys {
            let Some(values) = h.series.get(*k) else {
                continue;
            };
            let vals: Vec<Option<f64>> = if counter {
                rates(h.times, values, cpu.unit(k))
            } else {
                values.iter().map(|v| v.map(|v| v * factor)).collect()
            };
            total = Some(match total {
                None => vals,
                Some(t) => t
                    .iter()
                    .zip(&vals)
                    .map(|(a, b)| match (a, b) {
                        (Some(a), Some(b)) => Some(a + b),
                        (a, b) => a.or(*b),
                    })
                    .collect(),
            });
        }
        let Some(total) = total else { continue };
        // perfmon: a negative value takes the one before it.
        let mut last = 0.0;
        let points = h
            .times
            .iter()
            .zip(total)
            .map(|(t, v)| {
                let v = v.map(|v| {
                    if v < 0.0 {
                        last
                    } else {
                        last = v;
                        v
                    }
                });
                (t - t0, v)
            })
            .collect();
        per_node.push(Series {
            label: h.host.to_string(),
            style: styles.of(h.host),
            points,
        });
    }
    let has_value = per_node
        .iter()
        .any(|s| s.points.iter().any(|p| p.1.is_some_and(|v| v.is_finite())));
    if !has_value {
        return None;
    }
    let len = per_node.iter().map(|s| s.points.len()).max().unwrap_or(0);
    let mut combined = Vec::with_capacity(len);
    for i in 0..len {
        let at: Vec<&(f64, Option<f64>)> =
            per_node.iter().filter_map(|s| s.points.get(i)).collect();
        let t = at.iter().map(|p| p.0).sum::<f64>() / at.len() as f64;
        let vals: Vec<f64> = at.iter().filter_map(|p| p.1).collect();
        let v = if vals.is_empty() {
            None
        } else {
            let sum: f64 = vals.iter().sum();
            Some(match spec.combine {
                Combine::Total => sum,
                Combine::Average => sum / vals.len() as f64,
            })
        };
        combined.push((t, v));
    }
    let label = match spec.combine {
        Combine::Total => "total of all nodes",
        Combine::Average => "average of all nodes",
    };
    Some(PlotData {
        name: spec.name,
        combine: spec.combine,
        log: spec.log,
        unit,
        per_node,
        all_nodes: Series {
            label: label.to_string(),
            style: 0,
            points: combined,
        },
    })
}

/// The plots perfmon would draw from `cpu`, page by page (pages with no
/// plot left out).
pub fn plan(cpu: &GroupView, t0: f64, styles: &HostStyles) -> Vec<Vec<PlotData>> {
    PAGES
        .iter()
        .map(|page| {
            page.iter()
                .filter_map(|spec| plot_data(spec, cpu, t0, styles))
                .collect::<Vec<_>>()
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// Width of a plot on the page, pt.
const PLOT_W: f64 = 515.0;

/// The per-node chart of `plot` (legend under it), `height` pt tall.
pub fn per_node_chart(plot: &PlotData, height: f64) -> Chart {
    let unit = Unit::parse(Some(&plot.unit));
    let host_means = plot
        .per_node
        .iter()
        .filter_map(|s| mean_max(s.points.iter().filter_map(|p| p.1)))
        .collect::<Vec<_>>();
    let avg = host_means.iter().map(|m| m.0).sum::<f64>() / host_means.len().max(1) as f64;
    let max = host_means
        .iter()
        .map(|m| m.1)
        .fold(f64::NEG_INFINITY, f64::max);
    Chart {
        title: format!(
            "Average {n}/Node: {}, Max {n}/Node: {}",
            unit.format(avg),
            unit.format(max),
            n = plot.name
        ),
        unit,
        y_label: String::new(),
        series: plot.per_node.clone(),
        y_scale: if plot.log {
            YScale::Log
        } else {
            YScale::Linear
        },
        width: PLOT_W,
        height,
        legend: true,
    }
}

/// The all-nodes chart of `plot`.
pub fn all_nodes_chart(plot: &PlotData, height: f64) -> Chart {
    let unit = Unit::parse(Some(&plot.unit));
    let (mean, max) =
        mean_max(plot.all_nodes.points.iter().filter_map(|p| p.1)).unwrap_or((0.0, 0.0));
    let what = match plot.combine {
        Combine::Total => "Total",
        Combine::Average => "Average",
    };
    Chart {
        title: format!(
            "{what} {n} (all nodes): mean {}, max {}",
            unit.format(mean),
            unit.format(max),
            n = plot.name
        ),
        unit,
        y_label: String::new(),
        series: vec![plot.all_nodes.clone()],
        y_scale: if plot.log {
            YScale::Log
        } else {
            YScale::Linear
        },
        width: PLOT_W,
        height,
        legend: false,
    }
}

/// perfmon's header fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub job_id: String,
    pub user: String,
    pub nodes: usize,
    /// As perfmon writes it: `MM/DD/YYYY hh:mm:ss`.
    pub date: String,
}

/// A4 in points.
pub const A4: (f64, f64) = (595.0, 842.0);

/// One page as SVG: the header, `charts` stacked, the page number.
pub fn page_svg(header: &Header, charts: &[String], heights: &[f64], number: usize) -> String {
    let (w, h) = A4;
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" \
         font-family=\"{FONT}\"><rect width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>"
    );
    let line = format!(
        "Job ID: {}     User: {}     # Nodes: {}     Date: {}",
        header.job_id, header.user, header.nodes, header.date
    );
    let line = chart::fit(&line, w - 60.0, 9.0);
    let _ = write!(
        out,
        "<rect x=\"28.5\" y=\"24.5\" width=\"{}\" height=\"18\" fill=\"none\" stroke=\"#000\"/>\
         <text x=\"{}\" y=\"37\" font-size=\"9\" font-weight=\"bold\" text-anchor=\"middle\" \
         xml:space=\"preserve\">{}</text>",
        w - 57.0,
        w / 2.0,
        escape(&line)
    );
    let mut y = 56.0;
    for (svg, ch) in charts.iter().zip(heights) {
        let _ = write!(out, "<g transform=\"translate(40 {y})\">{}</g>", inner(svg));
        y += ch + 6.0;
    }
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"{}\" font-size=\"8\" font-style=\"italic\" fill=\"#808080\" \
         text-anchor=\"middle\">Page {number}</text></svg>",
        w / 2.0,
        h - 20.0
    );
    out
}

/// The content of an SVG document, without its `<svg>` element.
fn inner(svg: &str) -> &str {
    let start = svg.find('>').map_or(0, |i| i + 1);
    let end = svg.rfind("</svg>").unwrap_or(svg.len());
    &svg[start..end]
}

/// The pages of a report as SVG, and its plots as `(file name, SVG)` for
/// `plots/`.
pub type Pages = (Vec<String>, Vec<(String, String)>);

/// Every page of the report as SVG, and every plot as `(file name, SVG)`
/// for `plots/`.
pub fn pages(header: &Header, plan: &[Vec<PlotData>]) -> Pages {
    let mut pages = Vec::new();
    let mut plots = Vec::new();
    let room = A4.1 - 56.0 - 40.0;
    for per_node in [false, true] {
        for page in plan {
            let n = page.len().max(3) as f64;
            let mut charts = Vec::new();
            let mut heights = Vec::new();
            for plot in page {
                let legend_rows = if per_node {
                    let c = per_node_chart(plot, 100.0);
                    chart::legend_layout(&c.series, PLOT_W - 16.0)
                        .iter()
                        .map(|e| e.row + 1)
                        .max()
                        .unwrap_or(0)
                } else {
                    0
                };
                let ch = (room / n - 6.0 - legend_rows as f64 * 17.0).max(120.0);
                let (chart, suffix) = if per_node {
                    (per_node_chart(plot, ch), "per_node")
                } else {
                    (all_nodes_chart(plot, ch), "all_nodes")
                };
                let svg = chart::svg(&chart);
                plots.push((format!("{}_{suffix}.png", plot.file_stem()), svg.clone()));
                heights
                    .push(ch + legend_rows as f64 * 17.0 + if legend_rows > 0 { 6.0 } else { 0.0 });
                charts.push(svg);
            }
            pages.push(page_svg(header, &charts, &heights, pages.len() + 1));
        }
    }
    (pages, plots)
}

/// perfmon's date format of a Unix time (UTC).
pub fn date(unix: f64) -> String {
    let t = crate::html::Utc::of(unix);
    format!(
        "{:02}/{:02}/{:04} {:02}:{:02}:{:02}",
        t.month, t.day, t.year, t.hour, t.minute, t.second
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn rapl_domains_match_one_plot_each() {
        let find = |k: &str| -> Vec<&str> {
            PAGES[3]
                .iter()
                .filter(|s| (s.matches)(k))
                .map(|s| s.name)
                .collect()
        };
        assert_eq!(find("rapl_powercap.package-0"), ["RAPL Package Power"]);
        assert_eq!(find("rapl_powercap.package-0-core"), ["RAPL Core Power"]);
        assert_eq!(find("rapl_powercap.core-1"), ["RAPL Core Power"]);
        assert_eq!(find("rapl_powercap.uncore-0"), ["RAPL Uncore Power"]);
        assert_eq!(find("rapl_powercap.dram-0"), ["RAPL DRAM Power"]);
    }

    #[test]
    fn totals_sum_nodes_and_counters_become_rates() {
        let units = BTreeMap::from([(
            "net_io_counters.bytes_sent".to_string(),
            "bytes".to_string(),
        )]);
        let a = BTreeMap::from([(
            "net_io_counters.bytes_sent".to_string(),
            vec![Some(0.0), Some(10.0), Some(30.0)],
        )]);
        let b = BTreeMap::from([(
            "net_io_counters.bytes_sent".to_string(),
            vec![Some(5.0), Some(10.0), Some(15.0)],
        )]);
        let t = [0.0, 1.0, 2.0];
        let g = GroupView {
            name: "cpu_metrics",
            units: &units,
            hosts: vec![
                crate::metrics::HostView {
                    host: "a",
                    times: &t,
                    series: &a,
                },
                crate::metrics::HostView {
                    host: "b",
                    times: &t,
                    series: &b,
                },
            ],
        };
        let p = plot_data(&PAGES[1][0], &g, 0.0, &HostStyles::new(["a", "b"])).unwrap();
        assert_eq!(p.unit, "bytes/s");
        assert_eq!(p.per_node[0].points[2], (2.0, Some(20.0)));
        assert_eq!(p.all_nodes.points[1], (1.0, Some(15.0)));
        assert_eq!(p.all_nodes.points[2], (2.0, Some(25.0)));
        assert_eq!(p.file_stem(), "Output_Traffic");
    }

    #[test]
    fn dates_are_written_the_way_perfmon_writes_them() {
        assert_eq!(date(1_763_700_000.0), "11/21/2025 04:40:00");
    }
}

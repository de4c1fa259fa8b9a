//! The workflow report: one self-contained HTML page about a run made of
//! many processes, drawn with `perfflow-report` (the same charts and pages
//! as the monitor's job report).
//!
//! - a timeline overview: one lane per process (`host pid`) across the
//!   run, each pixel column coloured by the innermost function running
//!   there (deepest span of any of the process's threads), the ten
//!   functions with the most self time in colour and the rest grey;
//! - the top functions by self time (calls, inclusive and self time, mean
//!   and max duration);
//! - the imbalance across processes: for each top function, its inclusive
//!   time per process (min, mean, max, and max over mean);
//! - with a database of labelled runs: each factor's effect on a score
//!   ([`crate::treatments`]), as a table and as bars with their intervals;
//! - with the monitor's results directory: its node metrics for the hosts
//!   of the traces (all hosts when none match), over the run's interval.
//!
//! The traces are read twice, as streams: once to summarise (time span and
//! functions), once to paint the timeline and count per process; memory
//! holds the open spans, one row of pixels per process and one total per
//! process and top function, whatever the files' sizes.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use perfflow_report::chart::{style, FONT};
use perfflow_report::html::{self, escape, Page};
use perfflow_report::metrics::{GroupView, HostStyles, HostView};
use perfflow_report::nodes;
use perfflow_report::units::Unit;

use crate::critical_path::{critical_path, Step};
use crate::event::{Event, Phase};
use crate::model::load;
use crate::output::{same_file, write_whole};
use crate::read::stream_trace;
use crate::summary::{summarize_exactly, FunctionStats, Summarizer, Summary};
use crate::treatments::{
    scored_runs, treatments, FactorEffect, Score, ScoredRun, TreatmentOptions,
};
use crate::TraceError;

/// How many functions get a colour of their own.
pub const TOP: usize = 10;

/// Width of the timeline's drawing area, px (one column per pixel).
const COLUMNS: usize = 1000;

/// One process of the run: its lane in the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    /// The host: from the runtime's `perfflow_process` metadata, else from
    /// the file name (`perfflow.array.<host>.<pid>.pfw`).
    pub host: String,
    /// The process id.
    pub pid: i64,
    /// Per pixel column: the innermost top function running there
    /// (`Some(i)`: index into the top list; `Some(TOP)`: another function),
    /// with its depth.
    columns: Vec<Option<(usize, usize)>>,
    /// Inclusive time per top function, ns.
    pub inclusive_ns: Vec<i64>,
}

impl Lane {
    fn new(host: &str, pid: i64, top: usize) -> Lane {
        Lane {
            host: host.to_string(),
            pid,
            columns: vec![None; COLUMNS],
            inclusive_ns: vec![0; top],
        }
    }

    /// The label of the lane.
    pub fn label(&self) -> String {
        format!("{} {}", self.host, self.pid)
    }
}

/// What the report shows of a run.
#[derive(Debug, Clone)]
pub struct Overview {
    /// Where the time went, over every file.
    pub summary: Summary,
    /// The functions with the most self time, most first.
    pub top: Vec<FunctionStats>,
    /// The processes, by host then pid.
    pub lanes: Vec<Lane>,
}

/// The host of a trace file named `perfflow.array.<host>.<pid>.pfw` (the
/// file's stem otherwise).
pub fn host_of(path: &Path) -> String {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let stem = name.strip_suffix(".pfw").unwrap_or(&name);
    let rest = stem
        .strip_prefix("perfflow.array.")
        .or_else(|| stem.strip_prefix("perfflow."))
        .unwrap_or(stem);
    match rest.rsplit_once('.') {
        Some((host, pid)) if pid.chars().all(|c| c.is_ascii_digit()) && !host.is_empty() => {
            host.to_string()
        }
        _ => rest.to_string(),
    }
}

/// A span found while painting: start and end in ns, depth on its thread.
struct Span<'a> {
    name: &'a str,
    start: i64,
    end: i64,
    depth: usize,
}

/// The open spans of each thread of one file.
#[derive(Default)]
struct Stacks {
    /// `B` events not yet ended: (name, start).
    begun: HashMap<(i64, i64), Vec<(String, i64)>>,
    /// `X` events that may still hold later ones: end times.
    complete: HashMap<(i64, i64), Vec<i64>>,
}

impl Stacks {
    /// Feeds `event`; calls `found` with the span it closes, if any.
    fn push(&mut self, event: &Event, found: &mut dyn FnMut(i64, Span)) {
        let (Some(thread), Some(ts)) = (event.thread(), event.ts_ns) else {
            return;
        };
        let name = event.name.as_deref().unwrap_or("(unnamed)");
        match event.ph {
            Some(Phase::Begin) => {
                self.begun
                    .entry(thread)
                    .or_default()
                    .push((name.to_string(), ts));
            }
            Some(Phase::End) => {
                let stack = self.begun.entry(thread).or_default();
                if let Some((name, start)) = stack.pop() {
                    // `X` spans that ended before this `E` no longer hold it.
                    let holding = self.complete.get(&thread).map_or(0, |outer| {
                        outer.iter().filter(|&&e| e > ts && e > start).count()
                    });
                    let depth = stack.len() + holding;
                    if ts >= start {
                        found(
                            thread.0,
                            Span {
                                name: &name,
                                start,
                                end: ts,
                                depth,
                            },
                        );
                    }
                }
            }
            Some(Phase::Complete) => {
                let Some(end) = event
                    .end_ns()
                    .filter(|_| event.dur_ns.is_some_and(|d| d >= 0))
                else {
                    return;
                };
                let outer = self.complete.entry(thread).or_default();
                outer.retain(|&e| e > ts);
                let depth = outer.len() + self.begun.get(&thread).map_or(0, Vec::len);
                outer.push(end);
                found(
                    thread.0,
                    Span {
                        name,
                        start: ts,
                        end,
                        depth,
                    },
                );
            }
            _ => {}
        }
    }
}

/// Reads `files` twice and gathers what the report shows.
pub fn analyse(files: &[PathBuf]) -> Result<Overview, TraceError> {
    let summary = summarize_exactly(Summarizer::new, |summarizer, _| {
        for file in files {
            let info = stream_trace(file, |event| summarizer.push(&event))?;
            summarizer.end_trace(info.truncated);
        }
        Ok(())
    })?;
    let mut top = summary.functions.clone();
    top.sort_by(|a, b| b.self_ns.cmp(&a.self_ns).then_with(|| a.name.cmp(&b.name)));
    top.truncate(TOP);
    let index: HashMap<&str, usize> = top
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    let (start, end) = (
        summary.start_ns.unwrap_or(0),
        summary
            .end_ns
            .unwrap_or(0)
            .max(summary.start_ns.unwrap_or(0) + 1),
    );
    let column = |t: i64| {
        let c = (t - start) as f64 / (end - start) as f64 * COLUMNS as f64;
        (c.max(0.0) as usize).min(COLUMNS - 1)
    };
    // By host, pid and file: two files of one host with one pid (the pid
    // reused, or processes of several containers) are two processes.
    let mut lanes: BTreeMap<(String, i64, usize), Lane> = BTreeMap::new();
    for (at, file) in files.iter().enumerate() {
        let from_name = host_of(file);
        let mut hosts: HashMap<i64, String> = HashMap::new();
        let mut stacks = Stacks::default();
        stream_trace(file, |event| {
            // The runtime names the host in its `perfflow_process` metadata.
            if event.is_metadata() && event.name.as_deref() == Some("perfflow_process") {
                if let (Some(pid), Some(h)) = (event.pid, event.args["host"].as_str()) {
                    hosts.insert(pid, h.to_string());
                }
            }
            stacks.push(&event, &mut |pid, span| {
                let host = hosts.get(&pid).unwrap_or(&from_name);
                let lane = lanes
                    .entry((host.clone(), pid, at))
                    .or_insert_with(|| Lane::new(host, pid, top.len()));
                let which = index.get(span.name).copied();
                if let Some(i) = which {
                    lane.inclusive_ns[i] += span.end - span.start;
                }
                let paint = which.unwrap_or(TOP);
                for c in column(span.start)..=column(span.end) {
                    let cell = &mut lane.columns[c];
                    if cell.is_none_or(|(_, d)| span.depth >= d) {
                        *cell = Some((paint, span.depth));
                    }
                }
            });
        })?;
    }
    Ok(Overview {
        summary,
        top,
        lanes: lanes.into_values().collect(),
    })
}

/// Microseconds-or-more text of a time in ns.
fn time(ns: i64) -> String {
    Unit::Seconds.format(ns as f64 / 1e9)
}

/// The timeline overview as SVG.
pub fn timeline_svg(w: &Overview) -> String {
    let label_w = 150.0;
    let lane_h = 16.0;
    let top = 8.0;
    let width = label_w + COLUMNS as f64 + 24.0;
    let height = top + w.lanes.len() as f64 * lane_h + 28.0;
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" \
         width=\"{width}\" height=\"{height}\" font-family=\"{FONT}\" font-size=\"11\" \
         role=\"img\"><rect width=\"{width}\" height=\"{height}\" fill=\"#fff\"/>"
    );
    for (row, lane) in w.lanes.iter().enumerate() {
        let y = top + row as f64 * lane_h;
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#333\">{}</text>\
             <rect x=\"{label_w}\" y=\"{}\" width=\"{COLUMNS}\" height=\"{}\" fill=\"#f3f4f6\"/>",
            label_w - 6.0,
            y + 11.5,
            escape(&perfflow_report::chart::fit(
                &lane.label(),
                label_w - 10.0,
                11.0
            )),
            y + 1.0,
            lane_h - 2.0
        );
        // Runs of equal columns as one rectangle each.
        let mut c = 0;
        while c < COLUMNS {
            let Some((paint, _)) = lane.columns[c] else {
                c += 1;
                continue;
            };
            let mut e = c + 1;
            while e < COLUMNS && lane.columns[e].map(|x| x.0) == Some(paint) {
                e += 1;
            }
            let color = if paint < TOP {
                style(paint).0
            } else {
                "#b0b4ba"
            };
            let name = w
                .top
                .get(paint)
                .map_or("other functions", |f| f.name.as_str());
            let _ = write!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\"><title>{}</title></rect>",
                label_w + c as f64,
                y + 1.0,
                e - c,
                lane_h - 2.0,
                escape(name)
            );
            c = e;
        }
    }
    // Time axis.
    let span = w.summary.span_ns().unwrap_or(0).max(1) as f64 / 1e9;
    let axis_y = top + w.lanes.len() as f64 * lane_h + 4.0;
    let step = perfflow_report::chart::nice_step(span / 8.0);
    // Ticks count from the run's start, as `m:ss` (`0.5 s` below a second).
    let mut k = 0.0;
    while k <= span + 1e-9 {
        let x = label_w + k / span * COLUMNS as f64;
        let _ = write!(
            out,
            "<line x1=\"{x}\" x2=\"{x}\" y1=\"{axis_y}\" y2=\"{}\" stroke=\"#888\"/>\
             <text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>",
            axis_y + 4.0,
            axis_y + 16.0,
            perfflow_report::chart::clock(k, step)
        );
        k += step;
    }
    out.push_str("</svg>");
    out
}

/// A database of labelled runs and the score to compare them by, for the
/// report's treatment effects.
#[derive(Debug, Clone, PartialEq)]
pub struct RunsInput<'a> {
    /// The database made by `perfflow-trace db`.
    pub db: &'a Path,
    /// The score of a run.
    pub score: &'a Score,
}

/// Writes the report page; `metrics` is a monitor results directory
/// (its `metrics/` files) or `None`; `runs` adds the treatment effects of
/// a database of labelled runs.
pub fn write_report(
    files: &[PathBuf],
    metrics: Option<&Path>,
    runs: Option<RunsInput>,
    output: &Path,
) -> Result<(), String> {
    let db = runs.as_ref().map(|runs| runs.db);
    if let Some(input) = files
        .iter()
        .map(PathBuf::as_path)
        .chain(db)
        .find(|input| same_file(input, output))
    {
        return Err(format!(
            "{} is both an input and the output; expected another -o file",
            input.display()
        ));
    }
    let w = analyse(files).map_err(|e| e.to_string())?;
    let mut page = Page::new("Workflow report");
    let span = w.summary.span_ns().unwrap_or(0);
    let mut cards = vec![
        ("Processes", w.lanes.len().to_string()),
        ("Hosts", {
            let mut hosts: Vec<&str> = w.lanes.iter().map(|l| l.host.as_str()).collect();
            hosts.dedup();
            hosts.len().to_string()
        }),
        ("Duration", time(span)),
        ("Functions", w.summary.functions.len().to_string()),
        ("Events", w.summary.events.to_string()),
    ];
    if w.summary.truncated_traces > 0 {
        // Their spans still open at the end are in no figure.
        cards.push((
            "Cut short",
            format!(
                "{} of {} files",
                w.summary.truncated_traces, w.summary.traces
            ),
        ));
    }
    page.push(&html::cards(&cards));

    page.section("timeline", "Timeline");
    page.push("<div class=\"panel\">");
    page.push(&timeline_svg(&w));
    page.push("</div>\n");
    let mut legend: Vec<(String, usize)> = w
        .top
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.clone(), i))
        .collect();
    if w.summary.functions.len() > w.top.len() {
        legend.push(("other functions (grey)".to_string(), usize::MAX));
    }
    page.push(&legend_html(&legend));

    page.section("functions", "Top functions");
    let rows: Vec<Vec<String>> = w
        .top
        .iter()
        .map(|f| {
            vec![
                f.name.clone(),
                f.calls.to_string(),
                time(f.total_ns),
                time(f.self_ns),
                time(f.mean_ns()),
                time(f.max_ns),
            ]
        })
        .collect();
    page.push(&html::table(
        &["Function", "Calls", "Inclusive", "Self", "Mean", "Max"],
        &rows,
        &[1, 2, 3, 4, 5],
    ));

    page.section("imbalance", "Imbalance across processes");
    let mut rows = Vec::new();
    for (i, f) in w.top.iter().enumerate() {
        let per: Vec<i64> = w
            .lanes
            .iter()
            .map(|l| l.inclusive_ns[i])
            .filter(|t| *t > 0)
            .collect();
        if per.is_empty() {
            continue;
        }
        let mean = per.iter().sum::<i64>() as f64 / per.len() as f64;
        let (min, max) = (
            *per.iter().min().unwrap_or(&0),
            *per.iter().max().unwrap_or(&0),
        );
        rows.push(vec![
            f.name.clone(),
            per.len().to_string(),
            time(min),
            time(mean as i64),
            time(max),
            format!("{:.2}", max as f64 / mean.max(1.0)),
        ]);
    }
    page.push(&html::table(
        &["Function", "Processes", "Min", "Mean", "Max", "Max / mean"],
        &rows,
        &[1, 2, 3, 4, 5],
    ));

    critical_path_section(&mut page, files)?;
    if let Some(runs) = runs {
        treatment_section(&mut page, runs)?;
    }
    if let Some(dir) = metrics {
        node_metrics(&mut page, &w, dir)?;
    }
    write_whole(output, page.finish().as_bytes())
        .map_err(|e| format!("{}: cannot write: {e}", output.display()))
}

/// The span names longest on the critical path, and its longest steps.
const PATH_ROWS: usize = 12;

/// The critical path (see `critical_path`): its total, the time in spans
/// and waiting, the span names longest on it and its longest steps in time
/// order.
fn critical_path_section(page: &mut Page, files: &[PathBuf]) -> Result<(), String> {
    let workflow = load(files, false).map_err(|e| e.to_string())?;
    let path = critical_path(&workflow);
    drop(workflow);
    page.section("critical-path", "Critical path");
    let Some(start) = path.start_ns else {
        page.push("<p>No span was recorded, so there is no critical path.</p>\n");
        return Ok(());
    };
    let processes: std::collections::BTreeSet<&str> =
        path.steps.iter().map(|s| &*s.place.process).collect();
    page.push(&html::cards(&[
        ("Length", time(path.total_ns)),
        ("In spans", time(path.in_spans_ns)),
        ("Waiting", time(path.waiting_ns)),
        ("Steps", path.steps.len().to_string()),
        ("Processes on it", processes.len().to_string()),
    ]));
    let share = |ns: i64| format!("{:.1} %", 100.0 * ns as f64 / path.total_ns.max(1) as f64);
    let rows: Vec<Vec<String>> = path
        .by_name
        .iter()
        .take(PATH_ROWS)
        .map(|n| {
            vec![
                n.name.clone(),
                n.steps.to_string(),
                time(n.on_path_ns),
                share(n.on_path_ns),
            ]
        })
        .collect();
    page.push(&html::table(
        &["Function on the path", "Steps", "Time on the path", "Share"],
        &rows,
        &[1, 2, 3],
    ));
    let mut longest: Vec<&Step> = path.steps.iter().collect();
    longest.sort_by_key(|s| std::cmp::Reverse(s.duration_ns));
    longest.truncate(PATH_ROWS);
    longest.sort_by_key(|s| s.start_ns);
    let rows: Vec<Vec<String>> = longest
        .iter()
        .map(|s| {
            let kind = serde_json::to_value(s.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            vec![
                format!("+{}", time(s.start_ns - start)),
                kind,
                s.name.to_string(),
                s.place.process.to_string(),
                time(s.duration_ns),
                share(s.duration_ns),
            ]
        })
        .collect();
    page.push(&html::table(
        &["At", "Step", "Name", "Process", "Duration", "Share"],
        &rows,
        &[4, 5],
    ));
    if path.skewed_links > 0 {
        page.push(&format!(
            "<p>{} links arrive before they depart (the hosts' clocks disagree): \
             <code>perfflow-trace critical-path --fix-clocks</code> shifts the hosts first.</p>\n",
            path.skewed_links
        ));
    }
    Ok(())
}

/// A score's value in its unit (`ns` for times).
/// A score (not a change) in its unit, without a sign.
fn value_text(unit: &str, v: f64) -> String {
    if unit == "ns" {
        Unit::Seconds.format(v / 1e9)
    } else {
        format!("{v:.4} {unit}")
    }
}

fn score_text(unit: &str, v: f64) -> String {
    if unit == "ns" {
        let sign = if v < 0.0 { "-" } else { "+" };
        format!("{sign}{}", Unit::Seconds.format(v.abs() / 1e9))
    } else {
        format!("{v:+.4} {unit}")
    }
}

/// The effect of each factor on the runs' score: a table, and a chart of
/// each mean effect with its 95% interval.
fn treatment_section(page: &mut Page, runs: RunsInput) -> Result<(), String> {
    page.section("treatments", "Treatment effects");
    let (scored, unit) = scored_runs(runs.db, runs.score).map_err(|e| e.to_string())?;
    let result = treatments(
        &runs.score.to_string(),
        &unit,
        &scored,
        &TreatmentOptions::default(),
    )?;
    if result.factors.is_empty() {
        page.push("<p class=\"none\">No two runs differ in one label only.</p>\n");
        return Ok(());
    }
    let level = |l: &Option<String>| l.clone().unwrap_or_else(|| "(none)".to_string());
    let rows: Vec<Vec<String>> = result
        .factors
        .iter()
        .map(|f| {
            let e = &f.effect;
            vec![
                f.factor.clone(),
                format!("{} → {}", level(&f.from), level(&f.to)),
                e.pairs.to_string(),
                score_text(&unit, e.mean),
                e.mean_pct
                    .map_or_else(|| "–".to_string(), |p| format!("{p:+.1} %")),
                e.interval.as_ref().map_or_else(
                    || "–".to_string(),
                    |i| {
                        format!(
                            "{} … {}",
                            score_text(&unit, i.low),
                            score_text(&unit, i.high)
                        )
                    },
                ),
            ]
        })
        .collect();
    page.push(&format!(
        "<p>Score: {} over {} runs; a change is the score at the level less the score at the baseline, \
         for runs whose other labels are equal.</p>\n",
        escape(&result.score),
        result.runs
    ));
    page.push(&html::table(
        &[
            "Factor",
            "Change",
            "Pairs",
            "Mean effect",
            "Mean effect (%)",
            "95% interval",
        ],
        &rows,
        &[2, 3, 4, 5],
    ));
    page.push("<div class=\"panel\">");
    page.push(&effects_svg(&result.factors, &unit));
    page.push("</div>\n");
    page.push(
        "<p>Before and after: one point per set of other labels, the mean score of its runs at \
         the baseline (across) and at the level (up), coloured by another factor's level; points \
         above the diagonal got slower.</p>\n",
    );
    page.push("<div class=\"panel scatters\">");
    for f in &result.factors {
        page.push(&before_after_svg(f, &result.factors, &scored, &unit));
    }
    page.push("</div>\n");
    Ok(())
}

/// One point of a before/after scatter: the mean scores of the runs of
/// one set of other labels at the baseline and at the level, and the
/// level of the colouring factor in that set.
struct BeforeAfter {
    before: f64,
    after: f64,
    colour_level: String,
}

/// The before/after points of factor `f`: runs grouped by their other
/// labels, each group's mean score at `f.from` and at `f.to`.
fn before_after(f: &FactorEffect, runs: &[ScoredRun], colour_by: Option<&str>) -> Vec<BeforeAfter> {
    type Sums = ((f64, usize), (f64, usize));
    let mut groups: BTreeMap<Vec<(String, String)>, Sums> = BTreeMap::new();
    for run in runs {
        let Some(score) = run.score else { continue };
        let level = run.labels.get(&f.factor);
        let side = if level == f.from.as_ref() {
            0
        } else if level == f.to.as_ref() {
            1
        } else {
            continue;
        };
        let others: Vec<(String, String)> = run
            .labels
            .iter()
            .filter(|(k, _)| **k != f.factor)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let sums = groups.entry(others).or_default();
        let sum = if side == 0 { &mut sums.0 } else { &mut sums.1 };
        sum.0 += score;
        sum.1 += 1;
    }
    groups
        .into_iter()
        .filter(|(_, ((_, a), (_, b)))| *a > 0 && *b > 0)
        .map(|(others, ((sa, na), (sb, nb)))| BeforeAfter {
            before: sa / na as f64,
            after: sb / nb as f64,
            colour_level: colour_by
                .and_then(|c| others.iter().find(|(k, _)| k == c).map(|(_, v)| v.clone()))
                .unwrap_or_else(|| "(none)".to_string()),
        })
        .collect()
}

/// A before/after scatter of factor `f` with the diagonal, its points
/// coloured by the level of the first other factor.
fn before_after_svg(
    f: &FactorEffect,
    factors: &[FactorEffect],
    runs: &[ScoredRun],
    unit: &str,
) -> String {
    let colour_by = factors
        .iter()
        .map(|o| o.factor.as_str())
        .find(|o| *o != f.factor);
    let points = before_after(f, runs, colour_by);
    let (size, pad) = (260.0, 46.0);
    let (lo, hi) = points
        .iter()
        .flat_map(|p| [p.before, p.after])
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let (lo, hi) = if lo.is_finite() && hi > lo {
        (lo - (hi - lo) * 0.08, hi + (hi - lo) * 0.08)
    } else if lo.is_finite() {
        (lo * 0.9, lo * 1.1 + 1.0)
    } else {
        (0.0, 1.0)
    };
    let plot = size - pad - 10.0;
    let x = |v: f64| pad + (v - lo) / (hi - lo) * plot;
    let y = |v: f64| 10.0 + plot - (v - lo) / (hi - lo) * plot;
    let level = |l: &Option<String>| l.clone().unwrap_or_else(|| "(none)".to_string());
    let height = size + 34.0;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {size} {height}\" width=\"{size}\" \
         height=\"{height}\" font-family=\"{FONT}\" font-size=\"10\" role=\"img\" \
         style=\"max-width: {size}px; margin-right: 16px\">\
         <rect width=\"{size}\" height=\"{height}\" fill=\"#fff\"/>\
         <rect x=\"{pad}\" y=\"10\" width=\"{plot}\" height=\"{plot}\" fill=\"none\" stroke=\"#ccc\"/>\
         <line x1=\"{pad}\" y1=\"{}\" x2=\"{}\" y2=\"10\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>",
        10.0 + plot,
        pad + plot
    );
    for (v, anchor) in [(lo, "start"), (hi, "end")] {
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\" fill=\"#444\">{}</text>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">{2}</text>",
            x(v),
            plot + 24.0,
            escape(&value_text(unit, v)),
            pad - 4.0,
            y(v) + if anchor == "start" { 0.0 } else { 8.0 },
        );
    }
    let mut levels: Vec<&str> = points.iter().map(|p| p.colour_level.as_str()).collect();
    levels.sort_unstable();
    levels.dedup();
    for p in &points {
        let i = levels
            .iter()
            .position(|l| *l == p.colour_level)
            .unwrap_or(0);
        let _ = write!(
            out,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{}\" fill-opacity=\"0.85\">\
             <title>{}</title></circle>",
            x(p.before),
            y(p.after),
            style(i).0,
            escape(&format!(
                "{}: {} → {}{}",
                f.factor,
                value_text(unit, p.before),
                value_text(unit, p.after),
                colour_by.map_or(String::new(), |c| format!(" ({c}={})", p.colour_level))
            ))
        );
    }
    let _ = write!(
        out,
        "<text x=\"{pad}\" y=\"{}\" fill=\"#222\" font-weight=\"bold\">{}</text>",
        plot + 38.0,
        escape(&format!(
            "{}: {} (across) → {} (up)",
            f.factor,
            level(&f.from),
            level(&f.to)
        ))
    );
    if let Some(c) = colour_by {
        let mut at = pad;
        let _ = write!(
            out,
            "<text x=\"{at}\" y=\"{}\" fill=\"#666\">{}:</text>",
            plot + 52.0,
            escape(c)
        );
        at += 8.0 + 6.0 * c.chars().count() as f64;
        for (i, l) in levels.iter().enumerate() {
            let _ = write!(
                out,
                "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/>\
                 <text x=\"{}\" y=\"{}\" fill=\"#666\">{}</text>",
                at + 4.0,
                plot + 48.5,
                style(i).0,
                at + 11.0,
                plot + 52.0,
                escape(l)
            );
            at += 20.0 + 6.0 * l.chars().count() as f64;
        }
    }
    out.push_str("</svg>");
    out
}

/// Horizontal bars of each factor's mean effect with its interval as a
/// whisker, around a zero line.
fn effects_svg(factors: &[FactorEffect], unit: &str) -> String {
    let (label_w, bar_h, width) = (220.0, 22.0, 760.0);
    let height = factors.len() as f64 * bar_h + 30.0;
    let extent = factors
        .iter()
        .flat_map(|f| {
            let i = f.effect.interval.as_ref();
            [
                f.effect.mean,
                i.map_or(0.0, |i| i.low),
                i.map_or(0.0, |i| i.high),
            ]
        })
        .fold(0.0f64, |a, v| a.max(v.abs()))
        .max(f64::MIN_POSITIVE);
    let plot = width - label_w - 20.0;
    let zero = label_w + plot / 2.0;
    let x = |v: f64| zero + v / extent * plot / 2.0;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" \
         height=\"{height}\" font-family=\"{FONT}\" font-size=\"11\" role=\"img\" \
         style=\"max-width: {width}px\"><rect width=\"{width}\" height=\"{height}\" fill=\"#fff\"/>"
    );
    for (row, f) in factors.iter().enumerate() {
        let y = 6.0 + row as f64 * bar_h;
        let m = f.effect.mean;
        let color = if m > 0.0 { "#d62728" } else { "#2ca02c" };
        let to = f.to.clone().unwrap_or_else(|| "(none)".to_string());
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#333\">{}</text>\
             <rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\" fill-opacity=\"0.75\">\
             <title>{}</title></rect>",
            label_w - 8.0,
            y + 14.0,
            escape(&format!("{}={}", f.factor, to)),
            x(m.min(0.0)),
            y + 3.0,
            (x(m) - zero).abs().max(1.0),
            bar_h - 6.0,
            escape(&score_text(unit, m))
        );
        if let Some(i) = &f.effect.interval {
            let yc = y + bar_h / 2.0;
            let _ = write!(
                out,
                "<line x1=\"{}\" x2=\"{}\" y1=\"{yc}\" y2=\"{yc}\" stroke=\"#222\"/>\
                 <line x1=\"{0}\" x2=\"{0}\" y1=\"{2}\" y2=\"{3}\" stroke=\"#222\"/>\
                 <line x1=\"{1}\" x2=\"{1}\" y1=\"{2}\" y2=\"{3}\" stroke=\"#222\"/>",
                x(i.low),
                x(i.high),
                yc - 4.0,
                yc + 4.0
            );
        }
    }
    let axis = 6.0 + factors.len() as f64 * bar_h;
    let _ = write!(
        out,
        "<line x1=\"{zero}\" x2=\"{zero}\" y1=\"2\" y2=\"{axis}\" stroke=\"#888\"/>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"start\" fill=\"#444\">{}</text>\
         <text x=\"{zero}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">0</text>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#444\">{}</text></svg>",
        label_w,
        axis + 16.0,
        escape(&score_text(unit, -extent)),
        axis + 16.0,
        width - 20.0,
        axis + 16.0,
        escape(&score_text(unit, extent))
    );
    out
}

/// The legend of the timeline; `usize::MAX` is the grey of other
/// functions.
fn legend_html(entries: &[(String, usize)]) -> String {
    let mut out = String::from("<div class=\"legend\">");
    for (name, i) in entries {
        let color = if *i == usize::MAX {
            "#b0b4ba"
        } else {
            style(*i).0
        };
        let _ = write!(
            out,
            "<span><svg width=\"14\" height=\"10\"><rect width=\"14\" height=\"10\" \
             fill=\"{color}\"/></svg>{}</span>",
            escape(name)
        );
    }
    out.push_str("</div>\n");
    out
}

/// The monitor's node metrics of the run's hosts and interval.
fn node_metrics(page: &mut Page, w: &Overview, dir: &Path) -> Result<(), String> {
    let groups = perfflow_monitor::report::input::read_groups(dir).map_err(|e| e.to_string())?;
    let start = w.summary.start_ns.unwrap_or(0) as f64 / 1e9;
    let end = w.summary.end_ns.unwrap_or(0) as f64 / 1e9;
    let hosts: Vec<&str> = w.lanes.iter().map(|l| l.host.as_str()).collect();
    let mut styles = HostStyles::default();
    let mut views = Vec::new();
    for g in &groups {
        let matches = |h: &str| {
            hosts
                .iter()
                .any(|t| h == *t || h.ends_with(&format!(".{t}")))
        };
        let any = g.hosts.iter().any(|h| matches(&h.host));
        let mut view = GroupView {
            name: &g.name,
            units: &g.units,
            hosts: Vec::new(),
        };
        for h in &g.hosts {
            if any && !matches(&h.host) {
                continue;
            }
            styles.add(&h.host);
            view.hosts.push(HostView {
                host: &h.host,
                times: &h.time_stamps,
                series: &h.series,
            });
        }
        views.push(view);
    }
    // Samples a sampling interval around the run, so its edges show.
    let margin = 5.0;
    let window = |t: &f64| *t >= start - margin && *t <= end + margin;
    let windowed: Vec<Vec<(usize, usize)>> = views
        .iter()
        .map(|v| {
            v.hosts
                .iter()
                .map(|h| {
                    let first = h.times.iter().position(window).unwrap_or(h.times.len());
                    let last = h.times.iter().rposition(window).map_or(first, |l| l + 1);
                    (first, last)
                })
                .collect()
        })
        .collect();
    let trimmed: Vec<Vec<BTreeMap<String, Vec<Option<f64>>>>> = views
        .iter()
        .zip(&windowed)
        .map(|(v, ranges)| {
            v.hosts
                .iter()
                .zip(ranges)
                .map(|(h, (a, b))| {
                    h.series
                        .iter()
                        .map(|(k, vals)| (k.clone(), vals[*a..*b].to_vec()))
                        .collect()
                })
                .collect()
        })
        .collect();
    let views: Vec<GroupView> = views
        .iter()
        .zip(&windowed)
        .zip(&trimmed)
        .map(|((v, ranges), series)| GroupView {
            name: v.name,
            units: v.units,
            hosts: v
                .hosts
                .iter()
                .zip(ranges)
                .zip(series)
                .map(|((h, (a, b)), s)| HostView {
                    host: h.host,
                    times: &h.times[*a..*b],
                    series: s,
                })
                .collect(),
        })
        .collect();
    let panels = nodes::panels(&views, start, &styles);
    if panels.is_empty() {
        page.section("nodes", "Node metrics");
        page.push(
            "<p class=\"none\">The monitor recorded nothing on these hosts during the run.</p>\n",
        );
        return Ok(());
    }
    nodes::panel_sections(page, &panels, &styles);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_come_from_the_file_names() {
        assert_eq!(
            host_of(Path::new("/r/perfflow.array.node7.4242.pfw")),
            "node7"
        );
        assert_eq!(host_of(Path::new("perfflow.array.a.b.c.12.pfw")), "a.b.c");
        assert_eq!(host_of(Path::new("trace.pfw")), "trace");
    }

    #[test]
    fn files_of_one_host_and_pid_are_processes_of_their_own() {
        let dir =
            std::env::temp_dir().join(format!("perfflow-report-lanes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files: Vec<PathBuf> = [10, 20, 90]
            .iter()
            .enumerate()
            .map(|(n, dur)| {
                let path = dir.join(format!("task{n}.pfw"));
                let text = format!(
                    r#"[{{"name":"perfflow_process","ph":"M","pid":1,"tid":1,"args":{{"host":"h"}}}},
{{"name":"main","ph":"X","pid":1,"tid":1,"ts":0,"dur":100}},
{{"name":"a","ph":"X","pid":1,"tid":1,"ts":0,"dur":{dur}}}]"#
                );
                std::fs::write(&path, text).unwrap();
                path
            })
            .collect();
        let overview = analyse(&files).expect("readable traces");
        assert_eq!(overview.lanes.len(), 3);
        let a = overview.top.iter().position(|f| f.name == "a").expect("a");
        let mut times: Vec<i64> = overview.lanes.iter().map(|l| l.inclusive_ns[a]).collect();
        times.sort_unstable();
        assert_eq!(times, [10_000, 20_000, 90_000]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

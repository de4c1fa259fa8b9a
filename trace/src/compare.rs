//! Comparing two sets of runs, A (the baseline) and B, function by
//! function.
//!
//! Each side is one or more repeated runs ([`RunProfile`]s). Per function,
//! and for the runs' wall time, [`compare`] takes the median over each
//! side's runs of the calls, the inclusive time and the self time per run,
//! and the difference of the medians, B less A.
//!
//! # The interval, and what is significant
//!
//! The 95 % interval of each difference is a percentile bootstrap that
//! resamples the *runs* of each side with replacement, not the calls
//! inside a run: calls of one run share its machine, input and neighbours,
//! so they are not independent draws, and resampling them would give
//! intervals far narrower than the variation from one run to the next.
//! Every row is resampled with the same draws of runs (a resample is a
//! set of runs), from a ChaCha8 generator with a fixed seed, so the output
//! is the same on every invocation. A side with one run has no spread to
//! resample, and a side of 2 to 4 runs too little (such intervals leave
//! out zero 3 to 7 times as often as they should, see
//! [`crate::stats::MIN_RUNS`]): with fewer than 5 runs on a side the
//! differences have no interval and are never significant.
//!
//! A difference is significant when its interval leaves out zero: B is
//! then `slower` or `faster` than A; otherwise `same`, and `unknown`
//! without an interval.

use std::fmt;

use serde::Serialize;

use crate::runs::{FunctionTotals, RunProfile};
use crate::stats::{median, median_difference_interval, Interval, CONFIDENCE};
use crate::summary::write_table;

/// How [`compare`] resamples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompareOptions {
    /// How many bootstrap resamples each interval is drawn from.
    pub resamples: usize,
    /// The seed of the resampling.
    pub seed: u64,
}

impl Default for CompareOptions {
    fn default() -> CompareOptions {
        CompareOptions {
            resamples: crate::stats::DEFAULT_RESAMPLES,
            seed: crate::stats::DEFAULT_SEED,
        }
    }
}

/// What a difference says about B against A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// B takes significantly longer.
    Slower,
    /// B takes significantly less time.
    Faster,
    /// The interval holds zero.
    Same,
    /// No interval: a side has fewer than [`crate::stats::MIN_RUNS`] runs.
    Unknown,
}

impl Verdict {
    fn of(interval: Option<Interval>) -> Verdict {
        match interval {
            None => Verdict::Unknown,
            Some(i) if i.low > 0.0 => Verdict::Slower,
            Some(i) if i.high < 0.0 => Verdict::Faster,
            Some(_) => Verdict::Same,
        }
    }

    /// The word the table and CSV print.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Slower => "slower",
            Verdict::Faster => "faster",
            Verdict::Same => "same",
            Verdict::Unknown => "unknown",
        }
    }
}

/// One measure compared: medians of each side and their difference, in
/// nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The median over A's runs.
    pub a_ns: f64,
    /// The median over B's runs.
    pub b_ns: f64,
    /// `b_ns - a_ns`.
    pub delta_ns: f64,
    /// The difference in percent of `a_ns`; `None` when `a_ns` is zero.
    pub delta_pct: Option<f64>,
    /// The bootstrap interval of the difference; `None` when a side has
    /// one run.
    pub interval_ns: Option<Interval>,
    pub verdict: Verdict,
}

impl Change {
    fn new(a: &[f64], b: &[f64], options: &CompareOptions) -> Change {
        let a_ns = median(a).unwrap_or(0.0);
        let b_ns = median(b).unwrap_or(0.0);
        let delta_ns = b_ns - a_ns;
        let interval_ns = median_difference_interval(a, b, options.resamples, options.seed);
        Change {
            a_ns,
            b_ns,
            delta_ns,
            delta_pct: (a_ns != 0.0).then(|| 100.0 * delta_ns / a_ns),
            interval_ns,
            verdict: Verdict::of(interval_ns),
        }
    }
}

/// One function compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionChange {
    /// The span name.
    pub name: String,
    /// Median calls per run of A, then of B.
    pub calls_a: f64,
    pub calls_b: f64,
    /// Inclusive time per run.
    pub inclusive: Change,
    /// Self time per run.
    #[serde(rename = "self")]
    pub self_time: Change,
}

/// The comparison of two sets of runs; see [`compare`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The runs of A, then of B, by name.
    pub runs_a: Vec<String>,
    pub runs_b: Vec<String>,
    /// The intervals' confidence, resamples and seed.
    pub confidence: f64,
    pub resamples: usize,
    pub seed: u64,
    /// The runs' wall time (from their first to their last event).
    pub wall: Change,
    /// Every function of either side, the largest difference in inclusive
    /// time (either way) first.
    pub functions: Vec<FunctionChange>,
}

/// A significant slowdown beyond a threshold; see
/// [`Comparison::slowdowns`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Slowdown {
    /// The function, or `(wall)` for the runs' wall time.
    pub name: String,
    pub delta_pct: f64,
}

/// The name the wall time has in tables and in [`Slowdown`]s.
pub const WALL: &str = "(wall)";

/// Compares the runs `b` with the runs `a`, the baseline. Both must be
/// non-empty.
pub fn compare(a: &[RunProfile], b: &[RunProfile], options: &CompareOptions) -> Comparison {
    let wall = |runs: &[RunProfile]| -> Vec<f64> {
        runs.iter()
            .map(|run| run.wall_ns.unwrap_or(0) as f64)
            .collect()
    };
    let mut names: Vec<&String> = a
        .iter()
        .chain(b)
        .flat_map(|run| run.functions.keys())
        .collect();
    names.sort();
    names.dedup();
    let per_run = |runs: &[RunProfile], name: &str, measure: fn(&FunctionTotals) -> f64| {
        runs.iter()
            .map(|run| run.functions.get(name).map_or(0.0, measure))
            .collect::<Vec<f64>>()
    };
    let calls = |t: &FunctionTotals| t.calls as f64;
    let inclusive = |t: &FunctionTotals| t.inclusive_ns as f64;
    let self_time = |t: &FunctionTotals| t.self_ns as f64;
    let mut functions: Vec<FunctionChange> = names
        .into_iter()
        .map(|name| FunctionChange {
            name: name.clone(),
            calls_a: median(&per_run(a, name, calls)).unwrap_or(0.0),
            calls_b: median(&per_run(b, name, calls)).unwrap_or(0.0),
            inclusive: Change::new(
                &per_run(a, name, inclusive),
                &per_run(b, name, inclusive),
                options,
            ),
            self_time: Change::new(
                &per_run(a, name, self_time),
                &per_run(b, name, self_time),
                options,
            ),
        })
        .collect();
    functions.sort_by(|x, y| {
        y.inclusive
            .delta_ns
            .abs()
            .total_cmp(&x.inclusive.delta_ns.abs())
            .then_with(|| x.name.cmp(&y.name))
    });
    Comparison {
        runs_a: a.iter().map(|run| run.name.clone()).collect(),
        runs_b: b.iter().map(|run| run.name.clone()).collect(),
        confidence: CONFIDENCE,
        resamples: options.resamples,
        seed: options.seed,
        wall: Change::new(&wall(a), &wall(b), options),
        functions,
    }
}

impl Comparison {
    /// Whether every difference has an interval (each side has at least
    /// two runs).
    pub fn has_intervals(&self) -> bool {
        self.wall.interval_ns.is_some()
    }

    /// The significant slowdowns of the wall time and of each function's
    /// inclusive time by more than `pct` percent of A's median. A function
    /// A never ran has no percentage and is not listed (the wall time shows
    /// what it costs).
    pub fn slowdowns(&self, pct: f64) -> Vec<Slowdown> {
        std::iter::once((WALL, &self.wall))
            .chain(
                self.functions
                    .iter()
                    .map(|f| (f.name.as_str(), &f.inclusive)),
            )
            .filter(|(_, change)| change.verdict == Verdict::Slower)
            .filter_map(|(name, change)| {
                let delta_pct = change.delta_pct?;
                (delta_pct > pct).then(|| Slowdown {
                    name: name.to_string(),
                    delta_pct,
                })
            })
            .collect()
    }

    /// The comparison as CSV: a header, then one row for the wall time
    /// (named `(wall)`, with empty calls and self columns) and one per
    /// function. Times in nanoseconds.
    pub fn to_csv(&self) -> String {
        let mut writer = csv::Writer::from_writer(Vec::new());
        let mut header: Vec<String> = ["function", "calls_a", "calls_b"].map(String::from).into();
        for measure in ["inclusive", "self"] {
            header.extend(CHANGE_COLUMNS.map(|column| format!("{measure}_{column}")));
        }
        let mut records = vec![header];
        let mut wall = vec![WALL.to_string(), String::new(), String::new()];
        wall.extend(change_cells(&self.wall));
        wall.extend(std::iter::repeat_n(String::new(), CHANGE_COLUMNS.len()));
        records.push(wall);
        for f in &self.functions {
            let mut row = vec![f.name.clone(), number(f.calls_a), number(f.calls_b)];
            row.extend(change_cells(&f.inclusive));
            row.extend(change_cells(&f.self_time));
            records.push(row);
        }
        for record in records {
            // Writing to a Vec cannot fail.
            let _ = writer.write_record(&record);
        }
        let bytes = writer.into_inner().unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

const CHANGE_COLUMNS: [&str; 7] = [
    "a_ns",
    "b_ns",
    "delta_ns",
    "delta_pct",
    "low_ns",
    "high_ns",
    "verdict",
];

fn change_cells(change: &Change) -> Vec<String> {
    let interval = change.interval_ns;
    vec![
        number(change.a_ns),
        number(change.b_ns),
        number(change.delta_ns),
        change.delta_pct.map(number).unwrap_or_default(),
        interval.map(|i| number(i.low)).unwrap_or_default(),
        interval.map(|i| number(i.high)).unwrap_or_default(),
        change.verdict.word().to_string(),
    ]
}

/// A number as CSV and JSON readers take it: integers without a fraction.
fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value:.3}")
    }
}

/// A unit for a table's times, chosen from the largest time it shows so
/// that it reads with a few digits before the point.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TimeUnit {
    pub name: &'static str,
    pub nanos: f64,
}

impl TimeUnit {
    pub(crate) fn for_largest(largest_ns: f64) -> TimeUnit {
        let units = [("s", 1e9), ("ms", 1e6), ("us", 1e3)];
        let (name, nanos) = units
            .into_iter()
            .find(|(_, nanos)| largest_ns.abs() >= 10.0 * nanos)
            .unwrap_or(("ns", 1.0));
        TimeUnit { name, nanos }
    }

    pub(crate) fn show(self, nanos: f64) -> String {
        format!("{:.3}", nanos / self.nanos)
    }

    pub(crate) fn signed(self, nanos: f64) -> String {
        format!("{:+.3}", nanos / self.nanos)
    }

    pub(crate) fn interval(self, interval: Option<Interval>) -> String {
        interval.map_or_else(
            || "-".to_string(),
            |i| format!("[{}, {}]", self.signed(i.low), self.signed(i.high)),
        )
    }
}

fn percent(pct: Option<f64>) -> String {
    pct.map_or_else(|| "-".to_string(), |p| format!("{p:+.1}%"))
}

/// One row of the table: the name, the calls, the inclusive change and the
/// self change (blank where absent).
fn table_row(
    unit: TimeUnit,
    name: &str,
    calls: Option<(f64, f64)>,
    inclusive: &Change,
    self_time: Option<&Change>,
) -> Vec<String> {
    let count = |n: f64| {
        if n.fract() == 0.0 {
            format!("{}", n as i64)
        } else {
            format!("{n:.1}")
        }
    };
    let (calls_a, calls_b) = calls.map_or((String::new(), String::new()), |(a, b)| {
        (count(a), count(b))
    });
    let mut row = vec![
        name.to_string(),
        calls_a,
        calls_b,
        unit.show(inclusive.a_ns),
        unit.show(inclusive.b_ns),
        unit.signed(inclusive.delta_ns),
        unit.interval(inclusive.interval_ns),
        percent(inclusive.delta_pct),
        inclusive.verdict.word().to_string(),
    ];
    match self_time {
        Some(change) => row.extend([
            unit.signed(change.delta_ns),
            unit.interval(change.interval_ns),
            change.verdict.word().to_string(),
        ]),
        None => row.extend([String::new(), String::new(), String::new()]),
    }
    row
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: usize| if n == 1 { "run" } else { "runs" };
        writeln!(
            f,
            "A: {} {} ({}); B: {} {} ({})",
            self.runs_a.len(),
            plural(self.runs_a.len()),
            self.runs_a.join(", "),
            self.runs_b.len(),
            plural(self.runs_b.len()),
            self.runs_b.join(", ")
        )?;
        if self.has_intervals() {
            writeln!(
                f,
                "medians over runs; {:.0}% intervals of B - A from {} bootstrap resamples of the runs (seed {})",
                self.confidence * 100.0,
                self.resamples,
                self.seed
            )?;
        } else {
            writeln!(
                f,
                "note: a side has a single run, so no difference has an interval; repeat runs for significance"
            )?;
        }
        writeln!(f)?;
        let largest = self
            .functions
            .iter()
            .flat_map(|x| [x.inclusive.a_ns, x.inclusive.b_ns])
            .chain([self.wall.a_ns, self.wall.b_ns])
            .fold(0.0, f64::max);
        let unit = TimeUnit::for_largest(largest);
        let u = unit.name;
        let header: Vec<String> = [
            "function".to_string(),
            "calls A".to_string(),
            "calls B".to_string(),
            format!("incl A ({u})"),
            format!("incl B ({u})"),
            format!("diff ({u})"),
            "95% interval".to_string(),
            "diff %".to_string(),
            "incl".to_string(),
            format!("self diff ({u})"),
            "95% interval".to_string(),
            "self".to_string(),
        ]
        .to_vec();
        let mut rows = vec![table_row(unit, WALL, None, &self.wall, None)];
        rows.extend(self.functions.iter().map(|x| {
            let calls = Some((x.calls_a, x.calls_b));
            table_row(unit, &x.name, calls, &x.inclusive, Some(&x.self_time))
        }));
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let right = [
            false, true, true, true, true, true, true, true, false, true, true, false,
        ];
        write_table(f, &header, &right, &rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, wall: i64, functions: &[(&str, u64, i64, i64)]) -> RunProfile {
        RunProfile {
            name: name.to_string(),
            wall_ns: Some(wall),
            functions: functions
                .iter()
                .map(|&(name, calls, inclusive_ns, self_ns)| {
                    let totals = FunctionTotals {
                        calls,
                        inclusive_ns,
                        self_ns,
                    };
                    (name.to_string(), totals)
                })
                .collect(),
            truncated_files: 0,
        }
    }

    #[test]
    fn a_function_only_one_side_ran_is_compared_with_zero() {
        let a = [run("a", 10, &[("f", 1, 10, 10)])];
        let b = [run("b", 10, &[("g", 2, 4, 4)])];
        let c = compare(&a, &b, &CompareOptions::default());
        let g = c.functions.iter().find(|x| x.name == "g").expect("g");
        assert_eq!(
            (g.calls_a, g.calls_b, g.inclusive.delta_ns),
            (0.0, 2.0, 4.0)
        );
        assert_eq!(g.inclusive.delta_pct, None);
        assert_eq!(g.inclusive.verdict, Verdict::Unknown);
        assert!(!c.has_intervals());
    }

    #[test]
    fn the_csv_has_a_wall_row_and_one_row_per_function() {
        let a = [
            run("a1", 100, &[("f", 1, 60, 60)]),
            run("a2", 110, &[("f", 1, 70, 70)]),
        ];
        let b = [
            run("b1", 100, &[("f", 1, 60, 60)]),
            run("b2", 120, &[("f", 1, 80, 80)]),
        ];
        let csv = compare(&a, &b, &CompareOptions::default()).to_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3, "{csv}");
        assert!(lines[0].starts_with("function,calls_a,calls_b,inclusive_a_ns,"));
        assert!(lines[1].starts_with("(wall),,,105,110,5,"), "{csv}");
        assert!(lines[2].starts_with("f,1,1,65,70,5,"), "{csv}");
    }

    #[test]
    fn units_follow_the_largest_time() {
        assert_eq!(TimeUnit::for_largest(25e9).name, "s");
        assert_eq!(TimeUnit::for_largest(9e9).name, "ms");
        assert_eq!(TimeUnit::for_largest(50e3).name, "us");
        assert_eq!(TimeUnit::for_largest(900.0).name, "ns");
    }
}

//! What each treatment factor does to a score, alone and given the others.
//!
//! The runs of a database carry labels, `key=value`: each key is a
//! *factor*, each value one of its *levels*, and a run without the key is
//! at the level `(none)`. For a factor t, a run X and a run Y form a pair
//! when t is at its baseline level in X and at another level in Y while
//! every other label is equal: Y is "X with t applied". The labels the
//! two share are the pair's *context*. [`treatments`] collects every such
//! pair and reports the score's difference Y - X per factor and level:
//! the number of pairs and contexts, the median and mean difference, and a
//! 95 % bootstrap interval of the mean; then the same restricted to the
//! contexts where another factor u is at each of its levels, which shows
//! how t's effect depends on u (an interaction).
//!
//! A factor's baseline is the level given for it in
//! [`TreatmentOptions::baselines`], otherwise `(none)` when some run lacks
//! the key, otherwise the lowest level (in numeric order when every level
//! is a number).
//!
//! Runs with the same labels are repeats: each pairs with every run of the
//! matching cell. The mean over pairs weighs a context by the number of
//! pairs it holds. The interval resamples the contexts with replacement
//! and, inside each drawn context, the repeated runs of both cells: the
//! contexts are the spread of situations the effect is averaged over, the
//! repeats the noise of measuring each. With a single pair there is
//! nothing to resample and no interval.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use rusqlite::{params, params_from_iter};
use serde::Serialize;

use crate::compare::TimeUnit;
use crate::runs::{open_database, query_failed, RunsError};
use crate::stats::{median, percentile_interval, Interval, Resampler, CONFIDENCE};
use crate::summary::write_table;

/// How a metric's samples in one run make its score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reduce {
    Mean,
    Max,
}

/// The score of a run; see [`Score::from_str`] for the syntax.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Score {
    /// The run's wall time: from its first span's start to its last
    /// span's end, in nanoseconds.
    Wall,
    /// The mean duration of the run's spans of this name that ended
    /// (returned or raised), in nanoseconds.
    Span(String),
    /// A perfflow-monitor metric over every host of the run: the mean (or
    /// the maximum) of its samples.
    Metric {
        group: String,
        series: String,
        reduce: Reduce,
    },
}

impl FromStr for Score {
    type Err = String;

    /// `wall`, `span:NAME`, `metric:GROUP.SERIES` (the mean of the
    /// samples) or `metric:GROUP.SERIES:max` (their maximum; `:mean` may
    /// be written too).
    fn from_str(text: &str) -> Result<Score, String> {
        let expected = "expected `wall`, `span:NAME` or `metric:GROUP.SERIES[:mean|:max]`";
        if text == "wall" {
            return Ok(Score::Wall);
        }
        if let Some(name) = text.strip_prefix("span:") {
            if name.is_empty() {
                return Err(format!("`{text}` names no span; {expected}"));
            }
            return Ok(Score::Span(name.to_string()));
        }
        if let Some(metric) = text.strip_prefix("metric:") {
            let (metric, reduce) = match metric.rsplit_once(':') {
                Some((metric, "max")) => (metric, Reduce::Max),
                Some((metric, "mean")) => (metric, Reduce::Mean),
                _ => (metric, Reduce::Mean),
            };
            return match metric.split_once('.') {
                Some((group, series)) if !group.is_empty() && !series.is_empty() => {
                    Ok(Score::Metric {
                        group: group.to_string(),
                        series: series.to_string(),
                        reduce,
                    })
                }
                _ => Err(format!(
                    "`{text}` needs a metric group and series, such as \
                     `metric:cpu_metrics.cpu_percent`; {expected}"
                )),
            };
        }
        Err(format!("unknown score `{text}`; {expected}"))
    }
}

impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Score::Wall => write!(f, "wall"),
            Score::Span(name) => write!(f, "span:{name}"),
            Score::Metric {
                group,
                series,
                reduce,
            } => {
                let reduce = match reduce {
                    Reduce::Mean => "mean",
                    Reduce::Max => "max",
                };
                write!(f, "metric:{group}.{series}:{reduce}")
            }
        }
    }
}

/// A run with its labels and score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoredRun {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    /// `None` when the run has nothing to score (no spans of the name, no
    /// samples of the metric).
    pub score: Option<f64>,
}

/// Every run of the database at `db`, with its labels and its `score`, and
/// the score's unit (`ns` for times, the metric's unit otherwise).
pub fn scored_runs(db: &Path, score: &Score) -> Result<(Vec<ScoredRun>, String), RunsError> {
    let conn = open_database(db)?;
    let failed = query_failed(db);
    let mut runs: Vec<(i64, ScoredRun)> = conn
        .prepare("SELECT id, name FROM run ORDER BY id")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| {
                    let run = ScoredRun {
                        name: row.get(1)?,
                        labels: BTreeMap::new(),
                        score: None,
                    };
                    Ok((row.get(0)?, run))
                })?
                .collect()
        })
        .map_err(&failed)?;
    let at: BTreeMap<i64, usize> = runs
        .iter()
        .enumerate()
        .map(|(at, (id, _))| (*id, at))
        .collect();
    let labels: Vec<(i64, String, String)> = conn
        .prepare("SELECT run, key, value FROM run_label")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
                .collect()
        })
        .map_err(&failed)?;
    for (run, key, value) in labels {
        if let Some(&at) = at.get(&run) {
            runs[at].1.labels.insert(key, value);
        }
    }
    let (sql, unit) = match score {
        Score::Wall => (
            "SELECT id, end_ns - start_ns FROM run WHERE end_ns IS NOT NULL".to_string(),
            "ns".to_string(),
        ),
        Score::Span(_) => (
            "SELECT p.run, AVG(s.end_ns - s.start_ns) FROM span s JOIN process p ON p.id = s.process
             WHERE s.name = ?1 AND s.outcome IN ('returned', 'raised') AND s.end_ns IS NOT NULL
             GROUP BY p.run"
                .to_string(),
            "ns".to_string(),
        ),
        Score::Metric {
            group,
            series,
            reduce,
        } => {
            let function = match reduce {
                Reduce::Mean => "AVG",
                Reduce::Max => "MAX",
            };
            let unit: Option<String> = conn
                .query_row(
                    "SELECT unit FROM metric WHERE metric_group = ?1 AND series = ?2 LIMIT 1",
                    params![group, series],
                    |row| row.get(0),
                )
                .or_else(|error| match error {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    other => Err(other),
                })
                .map_err(&failed)?;
            (
                format!(
                    "SELECT run, {function}(value) FROM metric
                     WHERE metric_group = ?1 AND series = ?2 GROUP BY run"
                ),
                unit.unwrap_or_default(),
            )
        }
    };
    let mut statement = conn.prepare(&sql).map_err(&failed)?;
    let values: Vec<&str> = match score {
        Score::Wall => Vec::new(),
        Score::Span(name) => vec![name],
        Score::Metric { group, series, .. } => vec![group, series],
    };
    let scores: Vec<(i64, Option<f64>)> = statement
        .query_map(params_from_iter(values), |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .and_then(Iterator::collect)
        .map_err(&failed)?;
    for (run, score) in scores {
        if let Some(&at) = at.get(&run) {
            runs[at].1.score = score;
        }
    }
    Ok((runs.into_iter().map(|(_, run)| run).collect(), unit))
}

/// How [`treatments`] chooses baselines and resamples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreatmentOptions {
    /// The baseline level of a factor, `(factor, level)`.
    pub baselines: Vec<(String, String)>,
    /// Labels left out of the analysis (such as a repeat number).
    pub ignore: Vec<String>,
    pub resamples: usize,
    pub seed: u64,
}

impl Default for TreatmentOptions {
    fn default() -> TreatmentOptions {
        TreatmentOptions {
            baselines: Vec::new(),
            ignore: Vec::new(),
            resamples: crate::stats::DEFAULT_RESAMPLES,
            seed: crate::stats::DEFAULT_SEED,
        }
    }
}

/// The differences of the score over a set of pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Effect {
    /// How many pairs (X, Y).
    pub pairs: usize,
    /// How many distinct contexts they come from.
    pub contexts: usize,
    /// The median of the differences Y - X.
    pub median: f64,
    /// Their mean.
    pub mean: f64,
    /// The mean in percent of the mean score of the X runs over the
    /// pairs; `None` when that is zero.
    pub mean_pct: Option<f64>,
    /// The bootstrap interval of the mean; `None` for a single pair.
    pub interval: Option<Interval>,
}

/// A factor's effect where another factor is at one level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Given {
    pub factor: String,
    /// `None`: runs without that label.
    pub level: Option<String>,
    pub effect: Effect,
}

/// The effect of moving one factor from its baseline to one other level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FactorEffect {
    pub factor: String,
    /// The baseline level; `None` is the level of runs without the label.
    pub from: Option<String>,
    pub to: Option<String>,
    pub effect: Effect,
    /// The effect given each level of each other factor.
    pub given: Vec<Given>,
}

/// The effects of every factor on a score; see [`treatments`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Treatments {
    /// The score, as given.
    pub score: String,
    /// Its unit: `ns` for times.
    pub unit: String,
    /// How many runs were scored.
    pub runs: usize,
    /// Runs left out because they have nothing to score.
    pub unscored: Vec<String>,
    pub confidence: f64,
    pub resamples: usize,
    pub seed: u64,
    /// Per factor and level other than its baseline, by factor then level.
    pub factors: Vec<FactorEffect>,
}

/// The labels of a run as levels of every factor (`None`: without it).
type Cell = BTreeMap<String, Option<String>>;

/// One context of a contrast: the scores of its runs at the baseline and
/// at the level.
struct Context<'a> {
    labels: &'a Cell,
    before: &'a [f64],
    after: &'a [f64],
}

/// Orders levels: `(none)` first, then numbers in numeric order when
/// every level is one, otherwise text order.
fn sort_levels(levels: &mut [Option<String>]) {
    let numeric = levels
        .iter()
        .flatten()
        .all(|level| level.parse::<f64>().is_ok());
    levels.sort_by(|a, b| match (a, b) {
        (None, None) => std::cmp::Ordering::Equal,
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (Some(a), Some(b)) if numeric => {
            let (x, y) = (a.parse::<f64>(), b.parse::<f64>());
            x.unwrap_or(0.0)
                .total_cmp(&y.unwrap_or(0.0))
                .then_with(|| a.cmp(b))
        }
        (Some(a), Some(b)) => a.cmp(b),
    });
}

/// Every factor's effect on the scores of `runs`; an error names a
/// baseline that no scored run has.
pub fn treatments(
    score: &str,
    unit: &str,
    runs: &[ScoredRun],
    options: &TreatmentOptions,
) -> Result<Treatments, String> {
    let ignored = |key: &String| options.ignore.contains(key);
    let scored: Vec<&ScoredRun> = runs.iter().filter(|run| run.score.is_some()).collect();
    for (key, level) in &options.baselines {
        let mut levels: Vec<Option<String>> = scored
            .iter()
            .map(|run| run.labels.get(key).cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if !levels.contains(&Some(level.clone())) {
            sort_levels(&mut levels);
            let known: Vec<&str> = levels.iter().map(level_name).collect();
            return Err(format!(
                "baseline {key}={level}: no scored run has it; the runs' levels of {key}: {}",
                known.join(", ")
            ));
        }
    }
    let factors: BTreeSet<String> = scored
        .iter()
        .flat_map(|run| run.labels.keys())
        .filter(|key| !ignored(key))
        .cloned()
        .collect();
    // The runs of each cell, by their full labels.
    let mut cells: BTreeMap<Cell, Vec<f64>> = BTreeMap::new();
    for run in &scored {
        let cell: Cell = factors
            .iter()
            .map(|factor| (factor.clone(), run.labels.get(factor).cloned()))
            .collect();
        cells
            .entry(cell)
            .or_default()
            .push(run.score.unwrap_or(0.0));
    }
    let mut effects = Vec::new();
    for factor in &factors {
        let mut levels: Vec<Option<String>> = cells
            .keys()
            .map(|cell| cell[factor].clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        sort_levels(&mut levels);
        let chosen = options
            .baselines
            .iter()
            .find(|(key, _)| key == factor)
            .map(|(_, level)| Some(level.clone()));
        let baseline = chosen.unwrap_or_else(|| levels[0].clone());
        for level in levels.iter().filter(|level| **level != baseline) {
            let contexts = contexts(&cells, factor, &baseline, level);
            if contexts.is_empty() {
                continue;
            }
            let effect = effect_of(&contexts, options);
            let given = factors
                .iter()
                .filter(|other| *other != factor)
                .flat_map(|other| {
                    let mut levels: Vec<Option<String>> = contexts
                        .iter()
                        .map(|context| context.labels[other].clone())
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .collect();
                    sort_levels(&mut levels);
                    let contexts = &contexts;
                    levels.into_iter().map(move |at| {
                        let some: Vec<&Context> = contexts
                            .iter()
                            .filter(|context| context.labels[other] == at)
                            .collect();
                        Given {
                            factor: other.clone(),
                            level: at,
                            effect: effect_of_refs(&some, options),
                        }
                    })
                })
                .collect();
            effects.push(FactorEffect {
                factor: factor.clone(),
                from: baseline.clone(),
                to: level.clone(),
                effect,
                given,
            });
        }
    }
    Ok(Treatments {
        score: score.to_string(),
        unit: unit.to_string(),
        runs: scored.len(),
        unscored: runs
            .iter()
            .filter(|run| run.score.is_none())
            .map(|run| run.name.clone())
            .collect(),
        confidence: CONFIDENCE,
        resamples: options.resamples,
        seed: options.seed,
        factors: effects,
    })
}

/// The contexts where `factor` is both at `from` and at `to`.
fn contexts<'a>(
    cells: &'a BTreeMap<Cell, Vec<f64>>,
    factor: &str,
    from: &Option<String>,
    to: &Option<String>,
) -> Vec<Context<'a>> {
    cells
        .iter()
        .filter(|(cell, _)| cell[factor] == *from)
        .filter_map(|(cell, before)| {
            let mut other = cell.clone();
            other.insert(factor.to_string(), to.clone());
            let (labels, after) = cells.get_key_value(&other)?;
            Some(Context {
                labels,
                before,
                after,
            })
        })
        .collect()
}

fn effect_of(contexts: &[Context], options: &TreatmentOptions) -> Effect {
    let refs: Vec<&Context> = contexts.iter().collect();
    effect_of_refs(&refs, options)
}

/// The mean difference over every pair of `contexts`, each weighed by its
/// pairs: `(mean difference, mean score before)`.
fn mean_over_pairs(contexts: &[(&[f64], &[f64])]) -> (f64, f64) {
    let (mut pairs, mut difference, mut before) = (0.0, 0.0, 0.0);
    for (x, y) in contexts {
        let weight = (x.len() * y.len()) as f64;
        let mean_x = x.iter().sum::<f64>() / x.len() as f64;
        let mean_y = y.iter().sum::<f64>() / y.len() as f64;
        pairs += weight;
        difference += weight * (mean_y - mean_x);
        before += weight * mean_x;
    }
    (difference / pairs, before / pairs)
}

fn effect_of_refs(contexts: &[&Context], options: &TreatmentOptions) -> Effect {
    let mut differences: Vec<f64> = Vec::new();
    for context in contexts {
        for x in context.before {
            differences.extend(context.after.iter().map(|y| y - x));
        }
    }
    let sides: Vec<(&[f64], &[f64])> = contexts
        .iter()
        .map(|context| (context.before, context.after))
        .collect();
    let (mean, before) = mean_over_pairs(&sides);
    let interval = (differences.len() >= 2 && options.resamples > 0)
        .then(|| {
            let mut resampler = Resampler::new(options.seed);
            let means = (0..options.resamples)
                .map(|_| {
                    let (mut pairs, mut difference) = (0.0, 0.0);
                    for _ in 0..sides.len() {
                        let (x, y) = sides[resampler.index(sides.len())];
                        let weight = (x.len() * y.len()) as f64;
                        let mean_x = resampler.resampled_mean(x);
                        let mean_y = resampler.resampled_mean(y);
                        pairs += weight;
                        difference += weight * (mean_y - mean_x);
                    }
                    difference / pairs
                })
                .collect();
            percentile_interval(means)
        })
        .flatten();
    Effect {
        pairs: differences.len(),
        contexts: contexts.len(),
        median: median(&differences).unwrap_or(0.0),
        mean,
        mean_pct: (before != 0.0).then(|| 100.0 * mean / before),
        interval,
    }
}

fn level_name(level: &Option<String>) -> &str {
    level.as_deref().unwrap_or("(none)")
}

impl Treatments {
    /// One row per factor effect and per conditional effect under it:
    /// `(factor, from, to, given factor, given level, effect)`.
    fn rows(&self) -> Vec<(&FactorEffect, Option<&Given>)> {
        self.factors
            .iter()
            .flat_map(|factor| {
                std::iter::once((factor, None))
                    .chain(factor.given.iter().map(move |g| (factor, Some(g))))
            })
            .collect()
    }

    /// The effects as CSV: one row per factor and level, followed by its
    /// effects given each level of each other factor (`given_factor` and
    /// `given_level` set). Scores in the score's unit.
    pub fn to_csv(&self) -> String {
        let mut writer = csv::Writer::from_writer(Vec::new());
        let header = [
            "factor",
            "from",
            "to",
            "given_factor",
            "given_level",
            "pairs",
            "contexts",
            "median",
            "mean",
            "mean_pct",
            "low",
            "high",
            "unit",
        ];
        let _ = writer.write_record(header);
        for (factor, given) in self.rows() {
            let effect = given.map_or(&factor.effect, |g| &g.effect);
            let number = |x: f64| format!("{x}");
            let record = [
                factor.factor.clone(),
                level_name(&factor.from).to_string(),
                level_name(&factor.to).to_string(),
                given.map(|g| g.factor.clone()).unwrap_or_default(),
                given
                    .map(|g| level_name(&g.level).to_string())
                    .unwrap_or_default(),
                effect.pairs.to_string(),
                effect.contexts.to_string(),
                number(effect.median),
                number(effect.mean),
                effect.mean_pct.map(number).unwrap_or_default(),
                effect.interval.map(|i| number(i.low)).unwrap_or_default(),
                effect.interval.map(|i| number(i.high)).unwrap_or_default(),
                self.unit.clone(),
            ];
            let _ = writer.write_record(&record);
        }
        let bytes = writer.into_inner().unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl fmt::Display for Treatments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let is_time = self.unit == "ns";
        let largest = self
            .factors
            .iter()
            .flat_map(|x| [x.effect.median.abs(), x.effect.mean.abs()])
            .fold(0.0, f64::max);
        let unit = if is_time {
            TimeUnit::for_largest(largest)
        } else {
            TimeUnit {
                name: "",
                nanos: 1.0,
            }
        };
        let unit_name = if is_time {
            unit.name
        } else {
            self.unit.as_str()
        };
        writeln!(
            f,
            "score: {} ({}), {} runs; effect = score(X with the factor at `to`) - score(X at `from`)",
            self.score,
            if unit_name.is_empty() { "no unit" } else { unit_name },
            self.runs
        )?;
        if !self.unscored.is_empty() {
            writeln!(
                f,
                "note: {} runs have nothing to score and are left out: {}",
                self.unscored.len(),
                self.unscored.join(", ")
            )?;
        }
        writeln!(
            f,
            "{:.0}% intervals of the mean from {} bootstrap resamples of contexts and repeats (seed {})",
            self.confidence * 100.0,
            self.resamples,
            self.seed
        )?;
        writeln!(f)?;
        if self.factors.is_empty() {
            return writeln!(
                f,
                "no pairs: no two runs differ in exactly one label (label the runs with `db --label KEY=VALUE`)"
            );
        }
        let suffix = if unit_name.is_empty() {
            String::new()
        } else {
            format!(" ({unit_name})")
        };
        let header = [
            "factor".to_string(),
            "from".to_string(),
            "to".to_string(),
            "given".to_string(),
            "pairs".to_string(),
            format!("median{suffix}"),
            format!("mean{suffix}"),
            "95% interval".to_string(),
            "mean %".to_string(),
        ];
        let rows: Vec<Vec<String>> = self
            .rows()
            .into_iter()
            .map(|(factor, given)| {
                let effect = given.map_or(&factor.effect, |g| &g.effect);
                let (name, from, to, given) = match given {
                    None => (
                        factor.factor.clone(),
                        level_name(&factor.from).to_string(),
                        level_name(&factor.to).to_string(),
                        String::new(),
                    ),
                    Some(g) => (
                        String::new(),
                        String::new(),
                        String::new(),
                        format!("{}={}", g.factor, level_name(&g.level)),
                    ),
                };
                vec![
                    name,
                    from,
                    to,
                    given,
                    effect.pairs.to_string(),
                    unit.signed(effect.median),
                    unit.signed(effect.mean),
                    unit.interval(effect.interval),
                    effect
                        .mean_pct
                        .map_or_else(|| "-".to_string(), |p| format!("{p:+.1}%")),
                ]
            })
            .collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        write_table(
            f,
            &header,
            &[false, false, false, false, true, true, true, true, true],
            &rows,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_are_read_from_their_expressions() {
        assert_eq!("wall".parse(), Ok(Score::Wall));
        assert_eq!("span:solve".parse(), Ok(Score::Span("solve".into())));
        assert_eq!(
            "metric:cpu_metrics.rapl.package-0:max".parse(),
            Ok(Score::Metric {
                group: "cpu_metrics".into(),
                series: "rapl.package-0".into(),
                reduce: Reduce::Max
            })
        );
        let error = "metric:cpu".parse::<Score>().unwrap_err();
        assert!(error.contains("group and series"), "{error}");
        let error = "walls".parse::<Score>().unwrap_err();
        assert!(error.contains("unknown score `walls`"), "{error}");
    }

    #[test]
    fn numeric_levels_sort_as_numbers_after_none() {
        let mut levels = vec![Some("10".into()), None, Some("9".into())];
        sort_levels(&mut levels);
        assert_eq!(levels, [None, Some("9".into()), Some("10".into())]);
    }
}

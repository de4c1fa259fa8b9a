//! `perfflow-trace treatments`: what each run label does to a score, as a
//! table, CSV or JSON. The analysis is [`perfflow_trace::treatments`].

use std::io::Write;
use std::path::PathBuf;

use perfflow_trace::{scored_runs, treatments, Score, TreatmentOptions};

use super::compare::{print_as, Output, Resampling};
use super::db::label;
use super::{say, EXIT_FAILED, EXIT_OK, EXIT_USAGE};

/// Show what each treatment factor (run label) does to a score
///
/// For every label key t, pairs the runs that differ only in t (every other
/// label equal) and reports per level of t: the pairs, the median and mean
/// difference of the score with a 95% bootstrap interval, and the same
/// given each level of every other label (interactions). See
/// docs/compare.md.
#[derive(Debug, Clone, PartialEq, clap::Args)]
#[command(after_help = "\
Scores: wall (the run's wall time), span:NAME (the mean duration of the spans named NAME),
metric:GROUP.SERIES (the mean of a perfflow-monitor metric's samples in the run, all hosts),
metric:GROUP.SERIES:max (their maximum).

Examples:
  perfflow-trace treatments runs.sqlite --score wall
  perfflow-trace treatments runs.sqlite --score span:solve --baseline fs=disk --csv")]
pub struct Args {
    /// The database of labelled runs (made by `perfflow-trace db`)
    #[arg(value_name = "DATABASE")]
    db: PathBuf,
    /// The score of a run: wall, span:NAME, metric:GROUP.SERIES[:mean|:max]
    #[arg(long, value_name = "EXPR", default_value = "wall",
          value_parser = |s: &str| s.parse::<Score>())]
    score: Score,
    /// The baseline level of a factor (default: runs without the label,
    /// else its lowest level)
    #[arg(long, value_name = "KEY=VALUE", value_parser = label)]
    baseline: Vec<(String, String)>,
    /// Leave a label out of the analysis (such as a repeat number)
    #[arg(long, value_name = "KEY")]
    ignore: Vec<String>,
    #[command(flatten)]
    output: Output,
    #[command(flatten)]
    resampling: Resampling,
}

/// Runs `treatments`; returns the exit status.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let (runs, unit) = match scored_runs(&args.db, &args.score) {
        Ok(found) => found,
        Err(error) => {
            say(err, format_args!("perfflow-trace: treatments: {error}"));
            return EXIT_FAILED;
        }
    };
    let options = TreatmentOptions {
        baselines: args.baseline.clone(),
        ignore: args.ignore.clone(),
        resamples: args.resampling.resamples,
        seed: args.resampling.seed,
    };
    let result = match treatments(&args.score.to_string(), &unit, &runs, &options) {
        Ok(result) => result,
        Err(error) => {
            say(err, format_args!("perfflow-trace: treatments: {error}"));
            return EXIT_USAGE;
        }
    };
    print_as(&args.output, &result, || result.to_csv(), out);
    EXIT_OK
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::super::Command;
    use super::*;

    #[test]
    fn a_database_a_score_baselines_and_ignored_labels() {
        let Ok(Command::Treatments(args)) = parse(&[
            "treatments",
            "runs.sqlite",
            "--score",
            "span:solve",
            "--baseline",
            "fs=disk",
            "--ignore",
            "repeat",
        ])
        .map(|c| c.command) else {
            panic!("expected treatments arguments");
        };
        assert_eq!(args.db, PathBuf::from("runs.sqlite"));
        assert_eq!(args.score, Score::Span("solve".to_string()));
        assert_eq!(args.baseline, [("fs".to_string(), "disk".to_string())]);
        assert_eq!(args.ignore, ["repeat"]);
        let Ok(Command::Treatments(args)) = parse(&["treatments", "x"]).map(|c| c.command) else {
            panic!("expected treatments arguments");
        };
        assert_eq!(args.score, Score::Wall);
        let error = parse(&["treatments", "x", "--score", "time"]).unwrap_err();
        assert!(error.contains("unknown score `time`"), "{error}");
    }
}

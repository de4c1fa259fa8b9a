//! `perfflow-trace compare`: two sets of runs side by side, function by
//! function, as a table, CSV or JSON; with `--fail-if-slower`, a
//! performance gate. The analysis is [`perfflow_trace::compare`].

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;

use perfflow_trace::stats::MIN_RUNS;
use perfflow_trace::{compare, db_run, read_run, CompareOptions, RunProfile, RunsError};

use super::{say, EXIT_FAILED, EXIT_OK, EXIT_USAGE};

/// Exit status of `compare --fail-if-slower`: a significant slowdown
/// beyond the threshold.
pub const EXIT_SLOWER: u8 = 3;

/// How an analysis prints its result.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Output {
    /// Print CSV instead of a table
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

/// How the bootstrap intervals are drawn.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Resampling {
    /// Bootstrap resamples per interval
    #[arg(long, value_name = "N", default_value_t = perfflow_trace::stats::DEFAULT_RESAMPLES,
          value_parser = resamples)]
    pub resamples: usize,
    /// Seed of the resampling (the same seed prints the same intervals)
    #[arg(long, value_name = "N", default_value_t = perfflow_trace::stats::DEFAULT_SEED)]
    pub seed: u64,
}

/// Compare two sets of runs function by function
///
/// Per function, and for the runs' wall time: median calls, inclusive and
/// self time over each side's runs, the difference B - A with a 95%
/// bootstrap interval (resampling runs), and whether it is significant.
/// See docs/compare.md.
#[derive(Debug, Clone, PartialEq, clap::Args)]
#[command(after_help = "\
A run is a trace file or a directory of trace files (the processes of one run), or with --db a run
name in the database. Give each side several repeated runs: with one run on a side there is no
interval and nothing is significant.

Exit status: 0 no significant slowdown beyond --fail-if-slower, 1 unreadable input, 2 bad command
line (or --fail-if-slower with a single run on a side), 3 a significant slowdown beyond PCT.

Examples:
  perfflow-trace compare base1/,base2/,base3/ new1/,new2/,new3/
  perfflow-trace compare --a base/* --b new/* --fail-if-slower 5
  perfflow-trace compare --db runs.sqlite baseline-1,baseline-2 tuned-1,tuned-2 --json")]
pub struct Args {
    /// The baseline runs, comma-separated
    #[arg(value_name = "A")]
    a: Option<String>,
    /// The runs compared with them, comma-separated
    #[arg(value_name = "B")]
    b: Option<String>,
    /// More baseline runs (repeatable; several may follow one --a)
    #[arg(long = "a", short = 'a', value_name = "RUN", num_args = 1.., value_delimiter = ',')]
    more_a: Vec<String>,
    /// More runs of B (repeatable; several may follow one --b)
    #[arg(long = "b", short = 'b', value_name = "RUN", num_args = 1.., value_delimiter = ',')]
    more_b: Vec<String>,
    /// Runs are run names in this database (made by `perfflow-trace db`)
    #[arg(long, value_name = "DATABASE")]
    db: Option<PathBuf>,
    /// Exit with status 3 when the wall time or a function's inclusive time
    /// is significantly slower by more than PCT percent of A's median
    #[arg(long, value_name = "PCT", value_parser = non_negative)]
    fail_if_slower: Option<f64>,
    #[command(flatten)]
    output: Output,
    #[command(flatten)]
    resampling: Resampling,
}

fn resamples(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("`{text}` is not a number of resamples >= 1")),
    }
}

fn non_negative(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(format!("`{text}` is not a percentage >= 0")),
    }
}

/// Writes `text`; output errors (a closed pipe) are ignored, the exit
/// status tells the outcome.
fn print(out: &mut dyn Write, text: &str) {
    let _ = out.write_all(text.as_bytes());
}

pub(super) fn print_as(
    output: &Output,
    value: &(impl Serialize + std::fmt::Display),
    csv: impl FnOnce() -> String,
    out: &mut dyn Write,
) {
    if output.json {
        let text = serde_json::to_string_pretty(value).unwrap_or_default();
        print(out, &format!("{text}\n"));
    } else if output.csv {
        print(out, &csv());
    } else {
        print(out, &value.to_string());
    }
}

/// The runs of one side: `listed` (comma-separated) and `more`.
fn side(listed: &Option<String>, more: &[String]) -> Vec<String> {
    listed
        .iter()
        .flat_map(|list| list.split(','))
        .map(str::to_string)
        .chain(more.iter().cloned())
        .filter(|run| !run.is_empty())
        .collect()
}

fn load(runs: &[String], db: Option<&PathBuf>) -> Result<Vec<RunProfile>, RunsError> {
    runs.iter()
        .map(|run| match db {
            Some(db) => db_run(db, run),
            None => read_run(run, &[PathBuf::from(run)]),
        })
        .collect()
}

/// Runs `compare`; returns the exit status.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let a = side(&args.a, &args.more_a);
    let b = side(&args.b, &args.more_b);
    if a.is_empty() || b.is_empty() {
        say(
            err,
            "perfflow-trace: compare: needs runs on both sides: `compare A B` (each \
             comma-separated) or `--a RUN... --b RUN...`",
        );
        return EXIT_USAGE;
    }
    if args.fail_if_slower.is_some() && (a.len() < MIN_RUNS || b.len() < MIN_RUNS) {
        let (a, b) = (a.len(), b.len());
        say(
            err,
            format_args!(
                "perfflow-trace: compare: --fail-if-slower needs at least {MIN_RUNS} runs on each \
                 side (A has {a}, B has {b}): with fewer, the 95% intervals leave out zero far \
                 more often than 5% of the time, and nothing is called significant"
            ),
        );
        return EXIT_USAGE;
    }
    let (runs_a, runs_b) = match (load(&a, args.db.as_ref()), load(&b, args.db.as_ref())) {
        (Ok(runs_a), Ok(runs_b)) => (runs_a, runs_b),
        (Err(error), _) | (_, Err(error)) => {
            say(err, format_args!("perfflow-trace: compare: {error}"));
            return EXIT_FAILED;
        }
    };
    for run in runs_a.iter().chain(&runs_b) {
        if run.truncated_files > 0 {
            say(
                err,
                format_args!(
                    "perfflow-trace: compare: note: run {}: {} trace file{} cut short \
                     (`perfflow-trace check --allow-truncated` names {}); spans still open at \
                     the end are not counted",
                    run.name,
                    run.truncated_files,
                    if run.truncated_files == 1 {
                        " is"
                    } else {
                        "s are"
                    },
                    if run.truncated_files == 1 {
                        "it"
                    } else {
                        "them"
                    },
                ),
            );
        }
    }
    let options = CompareOptions {
        resamples: args.resampling.resamples,
        seed: args.resampling.seed,
    };
    let comparison = compare(&runs_a, &runs_b, &options);
    print_as(&args.output, &comparison, || comparison.to_csv(), out);
    let Some(pct) = args.fail_if_slower else {
        return EXIT_OK;
    };
    let slowdowns = comparison.slowdowns(pct);
    for slowdown in &slowdowns {
        say(
            err,
            format_args!(
                "perfflow-trace: compare: {} is {:.1}% slower (significant, and more than {pct}%)",
                slowdown.name, slowdown.delta_pct
            ),
        );
    }
    if slowdowns.is_empty() {
        EXIT_OK
    } else {
        EXIT_SLOWER
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::super::Command;
    use super::*;

    fn args(list: &[&str]) -> Args {
        match parse(list).map(|c| c.command) {
            Ok(Command::Compare(args)) => args,
            other => panic!("expected compare arguments, got {other:?}"),
        }
    }

    #[test]
    fn each_side_is_a_comma_separated_list_plus_its_a_or_b_runs() {
        let parsed = args(&["compare", "x,y", "z", "--a", "p", "q", "-b", "r,s"]);
        assert_eq!(side(&parsed.a, &parsed.more_a), ["x", "y", "p", "q"]);
        assert_eq!(side(&parsed.b, &parsed.more_b), ["z", "r", "s"]);
        let parsed = args(&["compare", "--a", "p", "--b", "r"]);
        assert_eq!(side(&parsed.a, &parsed.more_a), ["p"]);
        assert_eq!(parsed.resampling.resamples, 2000);
    }

    #[test]
    fn the_gate_takes_a_percentage_and_resamples_a_positive_count() {
        assert_eq!(
            args(&["compare", "a", "b", "--fail-if-slower", "2.5"]).fail_if_slower,
            Some(2.5)
        );
        let error = parse(&["compare", "a", "b", "--fail-if-slower=-1"]).unwrap_err();
        assert!(error.contains("not a percentage"), "{error}");
        let error = parse(&["compare", "a", "b", "--resamples", "0"]).unwrap_err();
        assert!(error.contains("resamples >= 1"), "{error}");
        let error = parse(&["compare", "a", "b", "--csv", "--json"]).unwrap_err();
        assert!(error.contains("cannot be used with"), "{error}");
    }
}

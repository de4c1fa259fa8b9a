//! `perfflow-trace report`: the workflow report page.

use std::io::Write;
use std::path::PathBuf;

use perfflow_trace::{write_workflow_report, RunsInput, Score};

use super::{say, EXIT_FAILED, EXIT_OK};

/// Write a workflow report: timeline, top functions, imbalance, node metrics
///
/// One self-contained HTML page: a timeline of every process across the
/// run coloured by the innermost function, the functions with the most self
/// time, each one's inclusive time across processes (min, mean, max), and,
/// with --db, each run label's effect on --score (as `treatments` computes
/// it), and with --metrics, perfflow-monitor's node metrics for the traces'
/// hosts over the run's interval.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Args {
    /// Trace files of one run
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The page to write
    #[arg(short = 'o', long, value_name = "FILE", default_value = "report.html")]
    pub output: PathBuf,
    /// perfflow-monitor's results directory (holding metrics/) for the same run
    #[arg(long, value_name = "DIR")]
    pub metrics: Option<PathBuf>,
    /// A database of labelled runs (perfflow-trace db): adds each label's effect on --score
    #[arg(long, value_name = "DATABASE")]
    pub db: Option<PathBuf>,
    /// The score the runs of --db are compared by: wall, span:NAME, metric:GROUP.SERIES[:mean|:max]
    #[arg(long, value_name = "EXPR", default_value = "wall", value_parser = |s: &str| s.parse::<Score>())]
    pub score: Score,
}

pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let runs = args.db.as_deref().map(|db| RunsInput {
        db,
        score: &args.score,
    });
    match write_workflow_report(&args.files, args.metrics.as_deref(), runs, &args.output) {
        Ok(()) => {
            say(out, format_args!("wrote {}", args.output.display()));
            EXIT_OK
        }
        Err(e) => {
            say(err, format_args!("perfflow-trace report: {e}"));
            EXIT_FAILED
        }
    }
}

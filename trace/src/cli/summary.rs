//! `perfflow-trace summary`: where the time went.

use std::io::Write;
use std::path::{Path, PathBuf};

use perfflow_trace::{stream_trace, summarize_exactly, trace_files, Summarizer, Summary};

use super::{say, EXIT_FAILED, EXIT_OK};

/// Summarise where the time went: per function and per thread
///
/// Prints the number of processes, threads and events and the time span,
/// then per function name: calls, total (inclusive) and self (exclusive)
/// time and min/mean/max duration, sorted by total time, then the event
/// count of each thread.
///
/// Several FILEs are summarised as the processes of one run. Times are in
/// microseconds.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Args {
    /// Trace files, summarised together (a DIR stands for the perfflow.*.pfw and
    /// perfflow.*.pftrace files in it)
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print the summary as JSON, times in nanoseconds, with each name's
    /// 50th, 90th and 99th percentile of span durations (this keeps every
    /// duration in memory, 8 bytes a span)
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print one CSV line per name, times in nanoseconds, with the
    /// percentiles of --json
    #[arg(long)]
    pub csv: bool,
}

pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    // A directory stands for the traces in it, as for every command.
    let files = match trace_files(&args.files, Path::new("")) {
        Ok(files) => files,
        Err(error) => {
            say(err, format_args!("perfflow-trace: summary: {error}"));
            return EXIT_FAILED;
        }
    };
    let files = &files;
    let fresh = || {
        if args.json || args.csv {
            Summarizer::with_percentiles()
        } else {
            Summarizer::new()
        }
    };
    let mut status = EXIT_OK;
    let result: Result<Summary, std::convert::Infallible> =
        summarize_exactly(fresh, |summarizer, again| {
            for file in files {
                match stream_trace(file, |event| summarizer.push(&event)) {
                    Ok(info) => summarizer.end_trace(info.truncated),
                    Err(error) => {
                        if !again {
                            say(err, error);
                        }
                        status = EXIT_FAILED;
                        // Events of an unreadable file must not mix with the next.
                        summarizer.end_trace(false);
                    }
                }
            }
            Ok(())
        });
    let summary = match result {
        Ok(summary) => summary,
        Err(never) => match never {},
    };
    if status == EXIT_OK {
        let _ = if args.json {
            writeln!(out, "{:#}", summary.to_json())
        } else if args.csv {
            write!(out, "{}", summary.to_csv())
        } else {
            write!(out, "{summary}")
        };
    }
    status
}

//! `perfflow-trace summary`: where the time went.

use std::io::Write;
use std::path::PathBuf;

use perfflow_trace::{stream_trace, Summarizer};

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
    /// Trace files, summarised together
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let files = &args.files;
    let mut summarizer = Summarizer::new();
    let mut status = EXIT_OK;
    for file in files {
        match stream_trace(file, |event| summarizer.push(&event)) {
            Ok(info) => summarizer.end_trace(info.truncated),
            Err(error) => {
                say(err, error);
                status = EXIT_FAILED;
                // Events of an unreadable file must not mix with the next.
                summarizer.end_trace(false);
            }
        }
    }
    if status == EXIT_OK {
        let _ = write!(out, "{}", summarizer.finish());
    }
    status
}

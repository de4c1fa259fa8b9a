//! `perfflow-trace profile`: call trees, and their export for Hatchet.

use std::io::Write;
use std::path::PathBuf;

use perfflow_trace::{profile, write_whole, MAX_INDENT};

use super::critical_path::{workflow, Inputs};
use super::{say, EXIT_FAILED, EXIT_OK};

/// Print the call-tree profile, aggregated over processes or per process
///
/// Builds each process's call tree from its nested spans: calls, inclusive
/// and exclusive time per calling context (asynchronous spans are roots;
/// spans never ended are left out, as in `summary`). The aggregate sums
/// the processes and gives, per context, the minimum, mean and maximum
/// inclusive time of the processes that have it and their imbalance
/// (max / mean). Times are in microseconds.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub workflow: Inputs,
    /// Print each process's call tree rather than the aggregate
    #[arg(long)]
    pub by_process: bool,
    /// Print the profile as JSON: per process and aggregated, times in
    /// nanoseconds (indented, or on one line when a call tree is more than
    /// 32 levels deep)
    #[arg(long)]
    pub json: bool,
    /// Also write the profile for LLNL's Hatchet, read with
    /// `hatchet.GraphFrame.from_literal(json.load(open(OUTPUT)))` (times in
    /// seconds); with --by-process, one root per process
    #[arg(long, value_name = "OUTPUT")]
    pub hatchet: Option<PathBuf>,
}

pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let fail = |err: &mut dyn Write, message: &dyn std::fmt::Display| {
        say(err, format_args!("perfflow-trace: profile: {message}"));
        EXIT_FAILED
    };
    let (workflow, _) = match workflow(&args.workflow, false, args.hatchet.as_deref()) {
        Ok(loaded) => loaded,
        Err(message) => return fail(err, &message),
    };
    super::critical_path::note_truncated(err, "profile", &workflow);
    let profile = profile(&workflow);
    if let Some(hatchet) = &args.hatchet {
        let literal = profile.hatchet_literal(args.by_process);
        if let Err(error) = write_whole(hatchet, literal.to_string().as_bytes()) {
            return fail(err, &format_args!("{}: {error}", hatchet.display()));
        }
    }
    let written = if args.json {
        // Indented JSON grows with the square of the depth.
        if profile.depth() > MAX_INDENT {
            serde_json::to_writer(&mut *out, &profile)
        } else {
            serde_json::to_writer_pretty(&mut *out, &profile)
        }
        .map_err(std::io::Error::from)
        .and_then(|()| writeln!(out))
    } else if args.by_process {
        write!(out, "{}", profile.by_process())
    } else {
        write!(out, "{profile}")
    };
    match written {
        Ok(()) => EXIT_OK,
        Err(error) => fail(err, &error),
    }
}

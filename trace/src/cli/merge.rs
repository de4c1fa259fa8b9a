//! `perfflow-trace merge`: one timeline from many processes and hosts.

use std::io::Write;
use std::path::PathBuf;

use perfflow_trace::{merge, trace_files, MergeOptions};

use super::{say, EXIT_FAILED, EXIT_OK};

/// Merge the traces of many processes and hosts into one timeline
///
/// Writes the traces of many processes and hosts, and the monitor's
/// counter traces, as one trace Perfetto opens.
///
/// A DIR stands for the perfflow.*.pfw and perfflow.*.pftrace files in it. Every process gets a
/// pid of its own (two hosts may reuse a pid) and is named
/// `host · exe [pid]`, with ` rank N` when an MPI rank is known; a host's
/// monitor counters sort first among its processes. Flows keep their ids
/// and link across processes; async ids below 2^40 become
/// `new pid × 2^40 + id`, so that spans of different processes never pair.
/// Inputs may be cut short. Timestamps are wall time; every flow from one
/// host to another whose arrival precedes its departure is reported per
/// pair of hosts.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Args {
    /// Trace files or directories of them
    #[arg(required = true, value_name = "FILE|DIR")]
    pub inputs: Vec<PathBuf>,
    /// The merged trace to write: Perfetto's format when its name ends in
    /// .pftrace, Chrome JSON otherwise
    #[arg(short, long, value_name = "OUTPUT")]
    pub output: PathBuf,
    /// Shift each host's timestamps by the smallest offset (>= 0) that
    /// makes every cross-host flow arrive at or after its departure, and
    /// print the offset of each host and how many cross-host flows touch
    /// it; fails when no offsets satisfy every flow
    #[arg(long)]
    pub fix_clocks: bool,
}

/// Microseconds with three decimals and a sign, for offsets.
fn micros(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "+" };
    let abs = ns.unsigned_abs();
    format!("{sign}{}.{:03} µs", abs / 1000, abs % 1000)
}

pub fn run(command: &Args, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let output = &command.output;
    let options = MergeOptions {
        fix_clocks: command.fix_clocks,
    };
    let report = match trace_files(&command.inputs, output)
        .and_then(|files| merge(&files, output, options))
    {
        Ok(report) => report,
        Err(error) => {
            say(err, format_args!("perfflow-trace: merge: {error}"));
            return EXIT_FAILED;
        }
    };
    let cut = match report.truncated_files {
        0 => String::new(),
        n => format!(" ({n} cut short)"),
    };
    say(
        out,
        format_args!(
            "{}: {} events of {} processes on {} hosts from {} files{cut}",
            output.display(),
            report.events,
            report.processes.len(),
            report.hosts.len(),
            report.files.len()
        ),
    );
    for process in &report.processes {
        say(
            out,
            format_args!(
                "  pid {:>4}  {}  ({})",
                process.new_pid,
                process.display_name(),
                process.file.display()
            ),
        );
    }
    say(
        out,
        format_args!("cross-host flows: {}", report.cross_host_flows),
    );
    for found in &report.violations {
        say(
            err,
            format_args!(
                "perfflow-trace: merge: {} flow{} from {} to {} arrive{} before {} depart{} \
                 (the earliest by {}): the hosts' clocks disagree{}",
                found.count,
                if found.count == 1 { "" } else { "s" },
                found.from,
                found.to,
                if found.count == 1 { "s" } else { "" },
                if found.count == 1 { "it" } else { "they" },
                if found.count == 1 { "s" } else { "" },
                micros(found.worst_ns).trim_start_matches('+'),
                if command.fix_clocks {
                    "; shifted below"
                } else {
                    "; --fix-clocks shifts the hosts to remove this"
                }
            ),
        );
    }
    if let Some(offsets) = &report.offsets {
        say(out, "clock offsets:");
        for offset in offsets {
            say(
                out,
                format_args!(
                    "  {}: {} ({} cross-host flows)",
                    offset.host,
                    micros(offset.offset_ns),
                    offset.flows
                ),
            );
        }
    }
    if report.async_ids_kept > 0 {
        say(
            err,
            format_args!(
                "perfflow-trace: merge: {} async events kept their id (not a number below 2^40): \
                 spans of different processes with the same category and id may pair",
                report.async_ids_kept
            ),
        );
    }
    EXIT_OK
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::super::Command;
    use super::*;

    #[test]
    fn inputs_an_output_and_fix_clocks_come_in_any_order() {
        let parsed = parse(&["merge", "a.pfw", "-o", "out.pfw", "dir", "--fix-clocks"]);
        let Ok(Command::Merge(args)) = parsed.map(|cli| cli.command) else {
            panic!("expected merge arguments");
        };
        assert_eq!(
            args,
            Args {
                inputs: vec![PathBuf::from("a.pfw"), PathBuf::from("dir")],
                output: PathBuf::from("out.pfw"),
                fix_clocks: true,
            }
        );
        let parsed = parse(&["merge", "--output=o.pfw", "a.pfw"]);
        assert!(matches!(
            parsed.map(|cli| cli.command),
            Ok(Command::Merge(Args {
                fix_clocks: false,
                ..
            }))
        ));
    }

    #[test]
    fn an_output_and_an_input_are_needed() {
        assert!(parse(&["merge", "a.pfw"])
            .unwrap_err()
            .contains("--output <OUTPUT>"));
        assert!(parse(&["merge", "-o", "x.pfw"])
            .unwrap_err()
            .contains("<FILE|DIR>"));
        assert!(parse(&["merge", "a", "-o", "x", "-o", "y"])
            .unwrap_err()
            .contains("cannot be used multiple times"));
    }
}

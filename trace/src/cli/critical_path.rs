//! `perfflow-trace critical-path`: what the workflow's end waited for.

use std::io::Write;
use std::path::{Path, PathBuf};

use perfflow_trace::{
    is_pftrace_name, load, load_db, merge, same_file, trace_files, CompactPath, LinkKind,
    MergeOptions, Workflow,
};

use super::{say, EXIT_FAILED, EXIT_OK};

/// Print the chain of spans that determines when the workflow ends
///
/// Walks back from the span that ends last: on a thread through the
/// innermost span open at each moment, across to another thread, process
/// or host where a flow (or an asynchronous span begun elsewhere) arrives
/// after the thread's previous span boundary. Prints one row per step with
/// its time on the path (a span, with the spans around it, or a wait: a
/// flow, an asynchronous span, idle time on a thread, or an inferred link
/// where no flow says what started a thread), then the time on the path
/// per span name. Times are in microseconds; docs/critical-path.md gives
/// the rules and their assumptions.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub workflow: Inputs,
    /// Shift each host's clock as `merge --fix-clocks` does before the walk
    #[arg(long)]
    pub fix_clocks: bool,
    /// Print the path as JSON (times in nanoseconds since the epoch)
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the path as CSV, one line per step (times in nanoseconds)
    #[arg(long)]
    pub csv: bool,
    /// Also write the inputs merged as `merge` merges them, with the path
    /// as a process of its own named "critical path" (trace files only)
    #[arg(short, long, value_name = "OUTPUT")]
    pub output: Option<PathBuf>,
}

/// The inputs of a command that reads a whole workflow.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Inputs {
    /// Trace files, directories of perfflow.*.pfw files, or one database
    /// that `db` wrote
    #[arg(required = true, value_name = "FILE|DIR|DB")]
    pub inputs: Vec<PathBuf>,
    /// The run to read, when the database holds several
    #[arg(long, value_name = "NAME")]
    pub run: Option<String>,
}

/// Whether `path` is a SQLite database (by its 16-byte header).
fn is_database(path: &Path) -> bool {
    let mut header = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut file| std::io::Read::read_exact(&mut file, &mut header))
        .is_ok_and(|()| &header == b"SQLite format 3\0")
}

/// The workflow of `inputs`: one database, or trace files and directories
/// (leaving out `output`), with the trace files read.
pub(super) fn workflow(
    Inputs { inputs, run }: &Inputs,
    fix_clocks: bool,
    output: Option<&Path>,
) -> Result<(Workflow, Vec<PathBuf>), String> {
    let run = run.as_deref();
    if let Some(input) = output.and_then(|out| inputs.iter().find(|input| same_file(input, out))) {
        return Err(format!(
            "{} is both an input and the output; expected another output file",
            input.display()
        ));
    }
    if let [single] = inputs.as_slice() {
        if is_database(single) {
            return load_db(single, run, fix_clocks)
                .map(|workflow| (workflow, Vec::new()))
                .map_err(|error| error.to_string());
        }
    }
    if run.is_some() {
        return Err("--run names a run of a database; the inputs are trace files".to_string());
    }
    let files = trace_files(inputs, output.unwrap_or(Path::new(""))).map_err(|e| e.to_string())?;
    let workflow = load(&files, fix_clocks).map_err(|e| e.to_string())?;
    Ok((workflow, files))
}

/// Says on `err` how many of the traces `command` read were cut short.
pub(super) fn note_truncated(err: &mut dyn Write, command: &str, workflow: &Workflow) {
    let n = workflow.truncated_files;
    if n > 0 {
        say(
            err,
            format_args!(
                "perfflow-trace: {command}: note: {n} trace file{} cut short (`perfflow-trace \
                 check --allow-truncated` names {}); spans still open at the end of {} run to \
                 the last event of their process",
                if n == 1 { " is" } else { "s are" },
                if n == 1 { "it" } else { "them" },
                if n == 1 { "it" } else { "each" },
            ),
        );
    }
}

/// Says on `err` how many flows of the workflow arrive before they depart,
/// on the path or not: their hosts' clocks disagree, and the walk may have
/// left a flow it should have followed, as `merge` warns.
fn note_backward_flows(err: &mut dyn Write, workflow: &Workflow) {
    let backward = workflow
        .links
        .iter()
        .filter(|link| matches!(link.kind, LinkKind::Flow { .. }) && link.to_ns < link.from_ns)
        .count();
    if backward > 0 {
        say(
            err,
            format_args!(
                "perfflow-trace: critical-path: note: {backward} flow{} arrive{} before {} \
                 depart{}: the hosts' clocks disagree, and the path may miss {}; --fix-clocks \
                 shifts the hosts to remove this",
                if backward == 1 { "" } else { "s" },
                if backward == 1 { "s" } else { "" },
                if backward == 1 { "it" } else { "they" },
                if backward == 1 { "s" } else { "" },
                if backward == 1 { "it" } else { "them" },
            ),
        );
    }
}

pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let fail = |err: &mut dyn Write, message: &dyn std::fmt::Display| {
        say(
            err,
            format_args!("perfflow-trace: critical-path: {message}"),
        );
        EXIT_FAILED
    };
    let (workflow, files) = match workflow(&args.workflow, args.fix_clocks, args.output.as_deref())
    {
        Ok(loaded) => loaded,
        Err(message) => return fail(err, &message),
    };
    note_truncated(err, "critical-path", &workflow);
    if !args.fix_clocks {
        note_backward_flows(err, &workflow);
    }
    // Steps are made one at a time as they are printed, not held.
    let path = CompactPath::new(&workflow);
    if let Some(output) = &args.output {
        if files.is_empty() {
            return fail(
                err,
                &"-o writes a merged trace, which needs trace files, not a database",
            );
        }
        if is_pftrace_name(output) {
            return fail(
                err,
                &format_args!(
                    "{}: -o writes a Chrome JSON trace (.pfw), with the path added at its end; \
                     `perfflow-trace convert` makes a .pftrace of it",
                    output.display()
                ),
            );
        }
        let options = MergeOptions {
            fix_clocks: args.fix_clocks,
        };
        let report = match merge(&files, output, options) {
            Ok(report) => report,
            Err(error) => return fail(err, &error),
        };
        let pid = report
            .processes
            .iter()
            .map(|p| p.new_pid)
            .max()
            .unwrap_or(0)
            + 1;
        if let Err(error) = path.write_track(output, pid) {
            return fail(err, &format_args!("{}: {error}", output.display()));
        }
        say(
            err,
            format_args!(
                "{}: the inputs merged, with the critical path as process {pid}",
                output.display()
            ),
        );
    }
    let written = if args.json {
        path.write_json(out)
    } else if args.csv {
        path.write_csv(out)
    } else {
        path.write_table(out)
    };
    match written {
        Ok(()) => EXIT_OK,
        Err(error) => fail(err, &error),
    }
}

//! The `perfflow-trace` command line: argument parsing and the commands.

use std::collections::{BTreeSet, BinaryHeap};
use std::ffi::OsString;
use std::fmt::Display;
use std::io::Write;
use std::path::PathBuf;

use perfflow_trace::{
    default_run_name, import, input_files, merge, query, stream_trace, trace_files, CheckOptions,
    Checker, Event, Format, Imported, MergeOptions, Phase, Summarizer,
};

/// Exit status: everything was valid.
pub const EXIT_OK: u8 = 0;
/// Exit status: a trace was unreadable, invalid or missed an expectation.
pub const EXIT_FAILED: u8 = 1;
/// Exit status: the command line was wrong.
pub const EXIT_USAGE: u8 = 2;

const USAGE: &str = "\
usage: perfflow-trace check FILE... [--expect-events N] [--expect-names A,B,...]
                             [--expect-phases P,Q,...] [--min-threads N]
                             [--allow-truncated]
       perfflow-trace summary FILE...
       perfflow-trace merge FILE|DIR... -o OUTPUT [--fix-clocks]
       perfflow-trace db -o DATABASE FILE|DIR... [--run NAME] [--label KEY=VALUE]...
       perfflow-trace sql DATABASE QUERY [--csv | --json]
       perfflow-trace --help";

const HELP: &str = "\
perfflow-trace: check, summarise and merge perfflow trace files

A program built with perfflow writes one Chrome trace file per process,
perfflow.array.<host>.<pid>.pfw, which Perfetto opens. This tool checks that
such files are well formed and summarises where the time went.

USAGE
  perfflow-trace check FILE... [OPTIONS]
  perfflow-trace summary FILE...
  perfflow-trace merge FILE|DIR... -o OUTPUT [--fix-clocks]
  perfflow-trace db -o DATABASE FILE|DIR... [--run NAME] [--label KEY=VALUE]...
  perfflow-trace sql DATABASE QUERY [--csv | --json]
  perfflow-trace --help | --version

COMMANDS
  check    Validate each FILE: required fields are present and typed; every
           B is closed by an E on the same thread, in stack order, with the
           same name; B/E timestamps never decrease on a thread; every b
           pairs with an e of the same pid, cat, id and name at or after
           its time, wherever the two are in the file (a span begun on one
           thread and ended on another may have its e written first); X
           events have dur >= 0; the file is not truncated. A valid FILE prints `FILE: ok, N events, M threads`;
           otherwise every problem is printed to standard error as
           `FILE: INDEX: MESSAGE` (INDEX is the event's position in the
           file, counting from 0; at most 10,000 per FILE are listed).
           Expectations apply to each FILE on its own. Metadata (M) events
           are never counted.
  summary  Print the number of processes, threads and events and the time
           span, then per function name: calls, total (inclusive) and self
           (exclusive) time and min/mean/max duration, sorted by total time,
           then the event count of each thread. Several FILEs are merged as
           the processes of one run. Times are in microseconds.

  merge    Write the traces of many processes and hosts, and the
           monitor's counter traces, as one trace Perfetto opens. A DIR
           stands for the perfflow.*.pfw files in it. Every process gets a
           pid of its own (two hosts may reuse a pid) and is named
           `host · exe [pid]`, with ` rank N` when an MPI rank is known; a
           host's monitor counters sort first among its processes. Flows
           keep their ids and link across processes; async ids below 2^40
           become `new pid × 2^40 + id`, so that spans of different
           processes never pair. Inputs may be cut short. Timestamps are
           wall time; every flow from one host to another whose arrival
           precedes its departure is reported per pair of hosts.
  db       Import each FILE (a DIR stands for its perfflow.*.pfw files) into
           the SQLite DATABASE (created if missing) as one run: processes,
           threads, spans with depth and parent, instants, flows between
           spans, counters. A perfflow-monitor results DIR (holding
           metrics/) also adds its metric samples. Each run of `db` adds to the DATABASE; a file
           already imported is skipped with a message. The schema is in
           docs/database.md.
  sql      Run QUERY on DATABASE and print the rows as an aligned table,
           or as CSV (--csv) or a JSON array of objects (--json). QUERY
           is SQL, or a named query: `span-types` (spans per category and
           name, with min/mean/max duration in microseconds) or
           `event-sequences` (the sequences of span names directly under
           a parent, most common first).

All commands read each FILE as a stream: memory does not grow with its
size (check keeps what is open; summary also keeps one entry per name;
merge keeps the thread numbers and the ends of flows).

CHECK OPTIONS
  --expect-events N      the file has exactly N events
  --expect-names LIST    the distinct event names are exactly the
                         comma-separated LIST (repeat the option to add more)
  --expect-phases LIST   the distinct ph codes are exactly the
                         comma-separated LIST, such as B,E
  --min-threads N        the events come from at least N threads
  --allow-truncated      accept a trace cut short (no closing `]`), the
                         B and b events it leaves open, and e events whose
                         b was not written

  An option's value follows it as the next argument or after `=`.
  `--` ends the options; every later argument is a FILE.

MERGE OPTIONS
  -o, --output OUTPUT    the merged trace (required)
  --fix-clocks           shift each host's timestamps by the smallest
                         offset (>= 0) that makes every cross-host flow
                         arrive at or after its departure, and print the
                         offset of each host and how many cross-host
                         flows touch it; fails when no offsets satisfy
                         every flow

DB OPTIONS
  -o, --output DATABASE  the SQLite database to add to (required)
  --run NAME             the run the files belong to (default: `run-N`,
                         the next number); files added to an existing
                         NAME join that run
  --label KEY=VALUE      a label of the run (repeatable; a KEY given again
                         replaces its value)

EXIT STATUS
  0  every FILE is valid and meets the expectations
  1  a FILE cannot be read, is invalid, or misses an expectation
  2  the command line is wrong

EXAMPLES
  perfflow-trace check perfflow.array.node1.4242.pfw
  perfflow-trace check --expect-names main,solve --expect-phases B,E trace.pfw
  perfflow-trace check --allow-truncated --min-threads 4 killed.pfw
  perfflow-trace summary perfflow.array.*.pfw
  perfflow-trace merge --fix-clocks run/ -o workflow.pfw
  perfflow-trace db -o runs.sqlite run/ --run baseline --label nodes=4
  perfflow-trace sql runs.sqlite \"SELECT name, COUNT(*) FROM span GROUP BY name\"";

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Command {
    Help,
    Version,
    Check(CheckCommand),
    Summary(Vec<PathBuf>),
    Merge(MergeCommand),
    Db(DbCommand),
    Sql(SqlCommand),
}

/// The arguments of `db`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct DbCommand {
    inputs: Vec<PathBuf>,
    output: Option<PathBuf>,
    run: Option<String>,
    labels: Vec<(String, String)>,
}

/// The arguments of `sql`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct SqlCommand {
    database: PathBuf,
    query: String,
    format: Format,
}

/// The arguments of `merge`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct MergeCommand {
    inputs: Vec<PathBuf>,
    output: Option<PathBuf>,
    fix_clocks: bool,
}

/// The arguments of `check`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct CheckCommand {
    files: Vec<PathBuf>,
    expect_events: Option<usize>,
    expect_names: Option<BTreeSet<String>>,
    expect_phases: Option<BTreeSet<String>>,
    min_threads: Option<usize>,
    allow_truncated: bool,
}

/// A command line that cannot be run, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
struct UsageError(String);

/// Runs the tool with `args` (without the program name), writing normal
/// output to `out` and diagnostics to `err`; returns the exit status.
pub fn run(args: Vec<OsString>, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match parse(args) {
        Ok(Command::Help) => {
            say(out, HELP);
            EXIT_OK
        }
        Ok(Command::Version) => {
            say(
                out,
                format_args!("perfflow-trace {}", env!("CARGO_PKG_VERSION")),
            );
            EXIT_OK
        }
        Ok(Command::Check(command)) => run_check(&command, out, err),
        Ok(Command::Summary(files)) => run_summary(&files, out, err),
        Ok(Command::Merge(command)) => run_merge(&command, out, err),
        Ok(Command::Db(command)) => run_db(&command, out, err),
        Ok(Command::Sql(command)) => run_sql(&command, out, err),
        Err(UsageError(message)) => {
            say(err, format_args!("perfflow-trace: {message}"));
            say(err, USAGE);
            say(err, "Run `perfflow-trace --help` for details.");
            EXIT_USAGE
        }
    }
}

/// Writes one line. Output errors (such as a closed pipe) are ignored: the
/// exit status already tells the outcome.
fn say(stream: &mut dyn Write, text: impl Display) {
    let _ = writeln!(stream, "{text}");
}

fn parse(args: Vec<OsString>) -> Result<Command, UsageError> {
    let before_separator = args.iter().take_while(|arg| *arg != "--");
    if before_separator
        .clone()
        .any(|arg| arg == "--help" || arg == "-h")
    {
        return Ok(Command::Help);
    }
    let mut args = args.into_iter();
    let Some(command) = args.next() else {
        return Err(UsageError("missing command".to_string()));
    };
    let rest: Vec<OsString> = args.collect();
    match command.to_str() {
        Some("check") => parse_check(rest).map(Command::Check),
        Some("summary") => parse_summary(rest).map(Command::Summary),
        Some("merge") => parse_merge(rest).map(Command::Merge),
        Some("db") => parse_db(rest).map(Command::Db),
        Some("sql") => parse_sql(rest).map(Command::Sql),
        Some("help") => Ok(Command::Help),
        Some("--version" | "-V") => Ok(Command::Version),
        Some(option) if option.starts_with('-') => {
            Err(UsageError(format!("unknown option `{option}`")))
        }
        _ => Err(UsageError(format!(
            "unknown command `{}`; expected `check`, `summary`, `merge`, `db` or `sql`",
            command.to_string_lossy()
        ))),
    }
}

/// One command-line argument, classified.
enum Arg {
    /// `--name` or `--name=value`.
    Option { name: String, value: Option<String> },
    /// Anything else.
    File(PathBuf),
}

/// Splits arguments into options and files; everything after `--` is a
/// file, as is `-` and any argument that is not valid UTF-8.
fn classify(args: Vec<OsString>) -> Vec<Arg> {
    let mut classified = Vec::new();
    let mut files_only = false;
    for arg in args {
        match arg.to_str() {
            Some("--") if !files_only => files_only = true,
            Some(text) if !files_only && text.starts_with('-') && text != "-" => {
                let (name, value) = match text.split_once('=') {
                    Some((name, value)) => (name.to_string(), Some(value.to_string())),
                    None => (text.to_string(), None),
                };
                classified.push(Arg::Option { name, value });
            }
            _ => classified.push(Arg::File(PathBuf::from(arg))),
        }
    }
    classified
}

fn parse_check(args: Vec<OsString>) -> Result<CheckCommand, UsageError> {
    let mut command = CheckCommand::default();
    let mut args = classify(args).into_iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg {
            Arg::File(path) => {
                command.files.push(path);
                continue;
            }
            Arg::Option { name, value } => (name, value),
        };
        if name == "--allow-truncated" {
            if inline.is_some() {
                return Err(UsageError(format!("option `{name}` takes no value")));
            }
            command.allow_truncated = true;
            continue;
        }
        if !matches!(
            name.as_str(),
            "--expect-events" | "--expect-names" | "--expect-phases" | "--min-threads"
        ) {
            return Err(UsageError(format!("unknown option `{name}` for `check`")));
        }
        let value = match inline {
            Some(value) => value,
            None => match args.next() {
                Some(Arg::File(path)) => path.to_string_lossy().into_owned(),
                _ => return Err(UsageError(format!("option `{name}` needs a value"))),
            },
        };
        match name.as_str() {
            "--expect-events" => {
                set_once(&mut command.expect_events, &name, count(&name, &value)?)?
            }
            "--min-threads" => set_once(&mut command.min_threads, &name, count(&name, &value)?)?,
            "--expect-names" => command
                .expect_names
                .get_or_insert_with(BTreeSet::new)
                .extend(list(&value)),
            _ => {
                let phases = command.expect_phases.get_or_insert_with(BTreeSet::new);
                for code in list(&value) {
                    let phase = Phase::from_code(&code);
                    if phase == Phase::Metadata {
                        return Err(UsageError(format!(
                            "`{name}` does not take `M`: metadata events are not counted"
                        )));
                    }
                    if !phase.is_known() {
                        return Err(UsageError(format!(
                            "unknown phase `{code}` in `{name}`; phases are codes such as B, E, X, i, b, e"
                        )));
                    }
                    phases.insert(code);
                }
            }
        }
    }
    if command.files.is_empty() {
        return Err(UsageError("`check` needs at least one FILE".to_string()));
    }
    Ok(command)
}

fn parse_summary(args: Vec<OsString>) -> Result<Vec<PathBuf>, UsageError> {
    let mut files = Vec::new();
    for arg in classify(args) {
        match arg {
            Arg::File(path) => files.push(path),
            Arg::Option { name, .. } => {
                return Err(UsageError(format!("unknown option `{name}` for `summary`")))
            }
        }
    }
    if files.is_empty() {
        return Err(UsageError("`summary` needs at least one FILE".to_string()));
    }
    Ok(files)
}

fn parse_merge(args: Vec<OsString>) -> Result<MergeCommand, UsageError> {
    let mut command = MergeCommand::default();
    let mut args = classify(args).into_iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg {
            Arg::File(path) => {
                command.inputs.push(path);
                continue;
            }
            Arg::Option { name, value } => (name, value),
        };
        match name.as_str() {
            "--fix-clocks" if inline.is_none() => command.fix_clocks = true,
            "--fix-clocks" => return Err(UsageError(format!("option `{name}` takes no value"))),
            "-o" | "--output" => {
                let value = match inline {
                    Some(value) => PathBuf::from(value),
                    None => match args.next() {
                        Some(Arg::File(path)) => path,
                        _ => return Err(UsageError(format!("option `{name}` needs a value"))),
                    },
                };
                set_once(&mut command.output, &name, value)?;
            }
            _ => return Err(UsageError(format!("unknown option `{name}` for `merge`"))),
        }
    }
    needs_inputs_and_output(
        "merge",
        &command.inputs,
        &command.output,
        "`-o OUTPUT`, the file to write",
    )?;
    Ok(command)
}

/// Checks that `command` was given inputs and an `-o` (described as
/// `output_help`).
fn needs_inputs_and_output(
    command: &str,
    inputs: &[PathBuf],
    output: &Option<PathBuf>,
    output_help: &str,
) -> Result<(), UsageError> {
    if inputs.is_empty() {
        return Err(UsageError(format!(
            "`{command}` needs at least one FILE or DIR"
        )));
    }
    if output.is_none() {
        return Err(UsageError(format!("`{command}` needs {output_help}")));
    }
    Ok(())
}

fn parse_db(args: Vec<OsString>) -> Result<DbCommand, UsageError> {
    let mut command = DbCommand::default();
    let mut args = classify(args).into_iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg {
            Arg::File(path) => {
                command.inputs.push(path);
                continue;
            }
            Arg::Option { name, value } => (name, value),
        };
        let value = match inline {
            Some(value) => value,
            None => match args.next() {
                Some(Arg::File(path)) => path.to_string_lossy().into_owned(),
                _ => return Err(UsageError(format!("option `{name}` needs a value"))),
            },
        };
        match name.as_str() {
            "-o" | "--output" => set_once(&mut command.output, &name, PathBuf::from(value))?,
            "--run" => set_once(&mut command.run, &name, value)?,
            "--label" => match value.split_once('=') {
                Some((key, label)) if !key.is_empty() => {
                    command.labels.push((key.to_string(), label.to_string()))
                }
                _ => {
                    return Err(UsageError(format!(
                        "`--label` needs KEY=VALUE, found `{value}`"
                    )))
                }
            },
            _ => return Err(UsageError(format!("unknown option `{name}` for `db`"))),
        }
    }
    needs_inputs_and_output(
        "db",
        &command.inputs,
        &command.output,
        "`-o DATABASE`, the SQLite file to add to",
    )?;
    Ok(command)
}

fn parse_sql(args: Vec<OsString>) -> Result<SqlCommand, UsageError> {
    let mut format = None;
    let mut positional = Vec::new();
    for arg in args {
        match arg.to_str() {
            Some("--csv") => set_once(&mut format, "--csv", Format::Csv)?,
            Some("--json") => set_once(&mut format, "--json", Format::Json)?,
            _ => positional.push(arg),
        }
    }
    let [database, query] = <[OsString; 2]>::try_from(positional)
        .map_err(|_| UsageError("`sql` needs a DATABASE and one QUERY".to_string()))?;
    Ok(SqlCommand {
        database: PathBuf::from(database),
        query: query.to_string_lossy().into_owned(),
        format: format.unwrap_or_default(),
    })
}

fn set_once<T>(slot: &mut Option<T>, name: &str, value: T) -> Result<(), UsageError> {
    if slot.is_some() {
        return Err(UsageError(format!(
            "option `{name}` is given more than once"
        )));
    }
    *slot = Some(value);
    Ok(())
}

fn count(name: &str, value: &str) -> Result<usize, UsageError> {
    value.trim().parse().map_err(|_| {
        UsageError(format!(
            "invalid value `{value}` for `{name}`: expected a whole number such as 12"
        ))
    })
}

/// The non-empty items of a comma-separated list, without surrounding spaces.
fn list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_string)
        .collect()
}

/// At most this many problems of one file are listed; the count covers
/// them all.
const LISTED_PROBLEMS: usize = 10_000;

/// The problems of one file in event order, at most [`LISTED_PROBLEMS`]
/// of them: those of the lowest event indexes.
#[derive(Default)]
struct Listed {
    /// `(index, arrival, message)`, a max-heap on the index.
    kept: BinaryHeap<(usize, usize, String)>,
    total: usize,
}

impl Listed {
    fn add(&mut self, index: Option<usize>, message: String) {
        self.total += 1;
        self.kept
            .push((index.unwrap_or(usize::MAX), self.total, message));
        if self.kept.len() > LISTED_PROBLEMS {
            self.kept.pop();
        }
    }

    fn into_messages(self) -> (Vec<String>, usize) {
        let total = self.total;
        let messages = self
            .kept
            .into_sorted_vec()
            .into_iter()
            .map(|(_, _, message)| message)
            .collect();
        (messages, total)
    }
}

/// What `check` counts for its one-line report and the expectations.
#[derive(Default)]
struct Tally {
    events: usize,
    threads: BTreeSet<(i64, i64)>,
    names: BTreeSet<String>,
    phases: BTreeSet<String>,
}

impl Tally {
    fn add(&mut self, event: &Event, names: bool) {
        if event.is_metadata() {
            return;
        }
        self.events += 1;
        if let Some(thread) = event.thread() {
            self.threads.insert(thread);
        }
        if names {
            if let Some(name) = &event.name {
                if !self.names.contains(name) {
                    self.names.insert(name.clone());
                }
            }
        }
        if let Some(phase) = &event.ph {
            if !self.phases.contains(phase.code()) {
                self.phases.insert(phase.code().to_string());
            }
        }
    }
}

fn run_check(command: &CheckCommand, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let options = CheckOptions {
        allow_truncated: command.allow_truncated,
    };
    let mut status = EXIT_OK;
    for file in &command.files {
        let shown = file.display();
        let mut checker = Checker::new(options);
        let mut tally = Tally::default();
        let mut listed = Listed::default();
        let read = stream_trace(file, |event| {
            tally.add(&event, command.expect_names.is_some());
            checker.push(&event, &mut |problem| {
                listed.add(problem.index, problem.to_string())
            });
        });
        let info = match read {
            Ok(info) => info,
            Err(error) => {
                say(err, error);
                status = EXIT_FAILED;
                continue;
            }
        };
        checker.finish(info.truncated, info.partial_line, &mut |problem| {
            listed.add(problem.index, problem.to_string())
        });
        for unmet in unmet_expectations(command, &tally) {
            listed.add(None, unmet);
        }
        let (failures, total) = listed.into_messages();
        if total == 0 {
            let state = if info.truncated {
                "ok (truncated)"
            } else {
                "ok"
            };
            say(
                out,
                format_args!(
                    "{shown}: {state}, {} events, {} threads",
                    tally.events,
                    tally.threads.len()
                ),
            );
        } else {
            for failure in &failures {
                say(err, format_args!("{shown}: {failure}"));
            }
            if total > failures.len() {
                say(
                    err,
                    format_args!(
                        "{shown}: ... and {} more problems, not listed",
                        total - failures.len()
                    ),
                );
            }
            let plural = if total == 1 { "" } else { "s" };
            say(
                err,
                format_args!("{shown}: FAILED, {total} problem{plural}"),
            );
            status = EXIT_FAILED;
        }
    }
    status
}

fn unmet_expectations(command: &CheckCommand, tally: &Tally) -> Vec<String> {
    let mut unmet = Vec::new();
    if let Some(expected) = command.expect_events {
        let found = tally.events;
        if found != expected {
            unmet.push(format!("expected {expected} events, found {found}"));
        }
    }
    if let Some(expected) = &command.expect_names {
        if let Some(difference) = set_difference(expected, &tally.names, true) {
            unmet.push(format!(
                "event names differ from --expect-names: {difference}"
            ));
        }
    }
    if let Some(expected) = &command.expect_phases {
        if let Some(difference) = set_difference(expected, &tally.phases, false) {
            unmet.push(format!(
                "event phases differ from --expect-phases: {difference}"
            ));
        }
    }
    if let Some(minimum) = command.min_threads {
        let found = tally.threads.len();
        if found < minimum {
            unmet.push(format!(
                "expected at least {minimum} threads, found {found}"
            ));
        }
    }
    unmet
}

/// Describes how `found` differs from `expected`, or `None` if they are
/// equal.
fn set_difference(
    expected: &BTreeSet<String>,
    found: &BTreeSet<String>,
    quote: bool,
) -> Option<String> {
    let show = |items: Vec<&String>| {
        items
            .iter()
            .map(|item| {
                if quote {
                    format!("\"{item}\"")
                } else {
                    item.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let missing: Vec<&String> = expected.difference(found).collect();
    let unexpected: Vec<&String> = found.difference(expected).collect();
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!("missing {}", show(missing)));
    }
    if !unexpected.is_empty() {
        parts.push(format!("unexpected {}", show(unexpected)));
    }
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("; "))
    }
}

fn run_summary(files: &[PathBuf], out: &mut dyn Write, err: &mut dyn Write) -> u8 {
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

/// Microseconds with three decimals and a sign, for offsets.
fn micros(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "+" };
    let abs = ns.unsigned_abs();
    format!("{sign}{}.{:03} µs", abs / 1000, abs % 1000)
}

fn run_db(command: &DbCommand, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let Some(output) = &command.output else {
        return EXIT_USAGE;
    };
    let files = match input_files(&command.inputs, output) {
        Ok(files) => files,
        Err(error) => {
            say(err, format_args!("perfflow-trace: db: {error}"));
            return EXIT_FAILED;
        }
    };
    let run = match &command.run {
        Some(run) => run.clone(),
        None => default_run_name(output),
    };
    match import(output, &files, &run, &command.labels) {
        Ok(done) => {
            for imported in done {
                match imported {
                    Imported::New {
                        path,
                        events,
                        spans,
                        truncated,
                    } => say(
                        out,
                        format_args!(
                            "{}: {events} events, {spans} spans into run {run}{}",
                            path.display(),
                            if truncated { " (cut short)" } else { "" }
                        ),
                    ),
                    Imported::Metrics { path, samples } => say(
                        out,
                        format_args!("{}: {samples} metric samples into run {run}", path.display()),
                    ),
                    Imported::Skipped { path, as_path, run } => say(
                        err,
                        format_args!(
                            "perfflow-trace: db: {}: already imported (as {as_path}, run {run}); skipped",
                            path.display()
                        ),
                    ),
                }
            }
            EXIT_OK
        }
        Err(error) => {
            say(err, format_args!("perfflow-trace: db: {error}"));
            EXIT_FAILED
        }
    }
}

fn run_sql(command: &SqlCommand, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match query(&command.database, &command.query, command.format, out) {
        Ok(()) => EXIT_OK,
        Err(error) => {
            say(err, format_args!("perfflow-trace: sql: {error}"));
            EXIT_FAILED
        }
    }
}

fn run_merge(command: &MergeCommand, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let Some(output) = &command.output else {
        return EXIT_USAGE;
    };
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
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    fn usage_error(list: &[&str]) -> String {
        match parse(args(list)) {
            Err(UsageError(message)) => message,
            Ok(command) => panic!("expected a usage error, got {command:?}"),
        }
    }

    #[test]
    fn merge_takes_inputs_an_output_and_fix_clocks_in_any_order() {
        let parsed = parse(args(&[
            "merge",
            "a.pfw",
            "-o",
            "out.pfw",
            "dir",
            "--fix-clocks",
        ]));
        assert_eq!(
            parsed,
            Ok(Command::Merge(MergeCommand {
                inputs: vec![PathBuf::from("a.pfw"), PathBuf::from("dir")],
                output: Some(PathBuf::from("out.pfw")),
                fix_clocks: true,
            }))
        );
        let parsed = parse(args(&["merge", "--output=o.pfw", "a.pfw"]));
        assert!(matches!(
            parsed,
            Ok(Command::Merge(MergeCommand {
                fix_clocks: false,
                ..
            }))
        ));
    }

    #[test]
    fn merge_needs_an_output_and_an_input() {
        assert!(usage_error(&["merge", "a.pfw"]).contains("needs `-o OUTPUT`"));
        assert!(usage_error(&["merge", "-o", "x.pfw"]).contains("at least one FILE or DIR"));
        assert!(usage_error(&["merge", "a.pfw", "-o"]).contains("`-o` needs a value"));
        assert!(usage_error(&["merge", "a", "-o", "x", "-o", "y"]).contains("more than once"));
    }

    #[test]
    fn db_takes_inputs_an_output_a_run_and_labels_in_any_order() {
        let parsed = parse(args(&[
            "db",
            "a.pfw",
            "--label",
            "k=v=w",
            "-o",
            "x.sqlite",
            "--run=r",
            "dir",
            "--label=n=",
        ]));
        assert_eq!(
            parsed,
            Ok(Command::Db(DbCommand {
                inputs: vec![PathBuf::from("a.pfw"), PathBuf::from("dir")],
                output: Some(PathBuf::from("x.sqlite")),
                run: Some("r".to_string()),
                labels: vec![
                    ("k".to_string(), "v=w".to_string()),
                    ("n".to_string(), String::new())
                ],
            }))
        );
        assert!(usage_error(&["db", "a.pfw"]).contains("needs `-o DATABASE`"));
        assert!(usage_error(&["db", "-o", "x"]).contains("at least one FILE or DIR"));
        assert!(usage_error(&["db", "a", "-o", "x", "--label", "k"]).contains("KEY=VALUE"));
        assert!(usage_error(&["db", "a", "-o", "x", "--run"]).contains("needs a value"));
    }

    #[test]
    fn sql_takes_a_database_a_query_and_one_format() {
        assert_eq!(
            parse(args(&["sql", "--csv", "x.sqlite", "SELECT 1"])),
            Ok(Command::Sql(SqlCommand {
                database: PathBuf::from("x.sqlite"),
                query: "SELECT 1".to_string(),
                format: Format::Csv,
            }))
        );
        assert!(usage_error(&["sql", "x.sqlite"]).contains("a DATABASE and one QUERY"));
        assert!(usage_error(&["sql", "x", "q", "--json", "--json"]).contains("more than once"));
    }

    #[test]
    fn check_options_are_parsed_in_any_position() {
        let parsed = parse(args(&[
            "check",
            "--expect-events=4",
            "a.pfw",
            "--expect-names",
            "main, solve",
            "--expect-names=step",
            "--expect-phases",
            "B,E",
            "--min-threads",
            "2",
            "--allow-truncated",
            "b.pfw",
        ]));
        let expected = CheckCommand {
            files: vec![PathBuf::from("a.pfw"), PathBuf::from("b.pfw")],
            expect_events: Some(4),
            expect_names: Some(["main", "solve", "step"].map(String::from).into()),
            expect_phases: Some(["B", "E"].map(String::from).into()),
            min_threads: Some(2),
            allow_truncated: true,
        };
        assert_eq!(parsed, Ok(Command::Check(expected)));
    }

    #[test]
    fn arguments_after_double_dash_are_files() {
        let parsed = parse(args(&["summary", "--", "--odd-name.pfw"]));
        assert_eq!(
            parsed,
            Ok(Command::Summary(vec![PathBuf::from("--odd-name.pfw")]))
        );
    }

    #[test]
    fn help_wins_anywhere_before_double_dash() {
        assert_eq!(parse(args(&["check", "x", "--help"])), Ok(Command::Help));
        assert_eq!(parse(args(&["help"])), Ok(Command::Help));
    }

    #[test]
    fn unknown_option_is_named() {
        assert_eq!(
            usage_error(&["check", "a.pfw", "--expect-evnts", "3"]),
            "unknown option `--expect-evnts` for `check`"
        );
        assert_eq!(
            usage_error(&["summary", "-v", "a.pfw"]),
            "unknown option `-v` for `summary`"
        );
    }

    #[test]
    fn missing_command_and_unknown_command_are_usage_errors() {
        assert_eq!(usage_error(&[]), "missing command");
        assert!(usage_error(&["verify"]).starts_with("unknown command `verify`"));
    }

    #[test]
    fn option_without_value_is_a_usage_error() {
        assert_eq!(
            usage_error(&["check", "a.pfw", "--min-threads"]),
            "option `--min-threads` needs a value"
        );
        assert_eq!(
            usage_error(&["check", "a.pfw", "--min-threads", "--allow-truncated"]),
            "option `--min-threads` needs a value"
        );
    }

    #[test]
    fn bad_numbers_are_usage_errors() {
        assert_eq!(
            usage_error(&["check", "a.pfw", "--expect-events", "-3"]),
            "option `--expect-events` needs a value"
        );
        assert_eq!(
            usage_error(&["check", "a.pfw", "--expect-events=many"]),
            "invalid value `many` for `--expect-events`: expected a whole number such as 12"
        );
    }

    #[test]
    fn repeated_counts_are_usage_errors() {
        assert_eq!(
            usage_error(&["check", "a.pfw", "--min-threads=1", "--min-threads=2"]),
            "option `--min-threads` is given more than once"
        );
    }

    #[test]
    fn unknown_and_metadata_phases_are_rejected() {
        assert!(usage_error(&["check", "a.pfw", "--expect-phases=B,Q"])
            .starts_with("unknown phase `Q`"));
        assert!(usage_error(&["check", "a.pfw", "--expect-phases=M"])
            .contains("metadata events are not counted"));
    }

    #[test]
    fn commands_need_files() {
        assert_eq!(
            usage_error(&["check", "--allow-truncated"]),
            "`check` needs at least one FILE"
        );
        assert_eq!(
            usage_error(&["summary"]),
            "`summary` needs at least one FILE"
        );
    }

    #[test]
    fn usage_errors_exit_with_status_two() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let status = run(args(&["check", "--bogus", "x"]), &mut out, &mut err);
        assert_eq!(status, EXIT_USAGE);
        assert!(out.is_empty());
        let err = String::from_utf8(err).expect("UTF-8");
        assert!(err.starts_with("perfflow-trace: unknown option `--bogus` for `check`\nusage:"));
    }
}

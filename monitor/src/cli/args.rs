//! The command line, parsed by clap (derive) into a [`Config`].
//!
//! perfmon's flags are kept (perfmon's `--save_dir` spellings are aliases
//! of `--save-dir`), so its users switch with a change of name. Parsing
//! never touches the environment or a file: it only turns words into
//! values, and every refusal is a [`UsageError`] naming the flag, the value
//! given and what was expected. `completions SHELL` and `man DIR` write the
//! shell completions and manual pages from the same definition.

use std::ffi::OsString;
use std::fmt;

use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

/// The export formats of `-e` are the report module's.
pub use crate::report::ExportFormat;

/// What the monitor follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The job of the batch scheduler found in the environment.
    Scheduler,
    /// The process tree of one running process (`--pid`).
    Pid(i32),
    /// A command the monitor starts and follows (`-- COMMAND ARGS...`).
    Command(Vec<OsString>),
}

/// Everything the command line sets for one monitoring run.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Base directory of the results (`-d`, default: the working directory).
    pub save_dir: PathBuf,
    /// Sub-directory of `save_dir` holding the results (`-p`).
    pub prefix: Option<String>,
    /// The launcher of the job's parallel tasks, as metadata (`-l`).
    pub launcher: Option<String>,
    /// Time between samples (`-i`, default 30 s).
    pub interval: Duration,
    /// Time between checkpoints of the node's data (`-c`, default 900 s).
    pub checkpoint: Duration,
    /// Make plots and a report after the run (`-r`).
    pub report: bool,
    /// Export the metrics to these formats after the run (`-e`).
    pub exports: Vec<ExportFormat>,
    /// Metadata: system name (`--system`).
    pub system: Option<String>,
    /// Metadata: partition (`--partition`).
    pub partition: Option<String>,
    /// Metadata: environment (`--env`).
    pub env: Option<String>,
    /// Metadata: test or run name (`--name`).
    pub name: Option<String>,
    /// Log to stderr too (`-v`).
    pub verbose: bool,
    /// What to follow.
    pub target: Target,
    /// The name this node goes by in the results (`--host-name`; default:
    /// `PERFFLOW_MONITOR_HOST`, else the host name).
    pub host_name: Option<String>,
    /// Lines to print on stderr before the run: what was assumed (a
    /// duration given without a unit is read as seconds).
    pub notes: Vec<String>,
    /// perf event groups to count (`--perf-groups`, default: all that
    /// apply to this processor).
    pub perf_groups: crate::GroupSelection,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            save_dir: PathBuf::from("."),
            prefix: None,
            launcher: None,
            interval: Duration::from_secs(30),
            checkpoint: Duration::from_secs(900),
            report: false,
            exports: Vec::new(),
            system: None,
            partition: None,
            env: None,
            name: None,
            verbose: false,
            target: Target::Scheduler,
            host_name: None,
            notes: Vec::new(),
            perf_groups: crate::GroupSelection::Matching,
        }
    }
}

impl Config {
    /// The directory that receives the results: `save_dir[/prefix]`.
    pub fn out_dir(&self) -> PathBuf {
        match &self.prefix {
            Some(p) => self.save_dir.join(p),
            None => self.save_dir.clone(),
        }
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Invocation {
    /// Monitor a job.
    Run(Box<Config>),
    /// Combine the node files of a results directory again, then make the
    /// exports and the report asked for.
    Merge {
        /// The results directory (or its `metrics` directory).
        dir: PathBuf,
        /// `-e` formats.
        exports: Vec<ExportFormat>,
        /// `-r`.
        report: bool,
    },
    /// Print this help text.
    Help(String),
    /// Print this version line.
    Version(String),
    /// Print the completion script for a shell.
    Completions(clap_complete::Shell),
    /// Write the manual pages into a directory.
    Man(PathBuf),
}

/// A command line that cannot be run, with the reason in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

fn err<T>(msg: impl Into<String>) -> Result<T, UsageError> {
    Err(UsageError(msg.into()))
}

/// Parses one export format name.
pub fn parse_export(flag: &str, text: &str) -> Result<ExportFormat, UsageError> {
    match text.parse::<ExportFormat>() {
        Ok(format) if !format.available() => {
            err(format!("{flag}: {format}: {}", crate::export::WITHOUT_HDF5))
        }
        Ok(format) => Ok(format),
        Err(e) => err(format!("{flag}: {e}")),
    }
}

/// The longest interval the monitor accepts for `-i` and `-c`: a week.
pub const LONGEST_INTERVAL: Duration = Duration::from_secs(7 * 24 * 3600);

/// Parses a duration with the syntax every perfflow tool shares (see
/// [`crate::duration`]): `500ms`, `2s`, `1.5m`, `1h`; a number alone is
/// seconds, and `notes` gets a line saying so. At least 1 ms, at most
/// [`LONGEST_INTERVAL`].
pub fn parse_duration(
    flag: &str,
    text: &str,
    notes: &mut Vec<String>,
) -> Result<Duration, UsageError> {
    match crate::duration::parse(text, Duration::from_millis(1), LONGEST_INTERVAL) {
        Ok(parsed) => {
            notes.extend(parsed.note(text).map(|n| format!("{flag}: {n}")));
            Ok(parsed.duration)
        }
        Err(e) => err(format!("{flag}: {e}; expected {}", crate::duration::SYNTAX)),
    }
}

/// A node name becomes part of file names: it must be one path component.
pub fn check_host_name(flag: &str, name: &str) -> Result<(), UsageError> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return err(format!(
            "{flag}: `{name}` cannot name a node; expected a name without `/` (it becomes part of file names)"
        ));
    }
    Ok(())
}

/// The parsed value of `-i` or `-c`: the duration, and the note to print
/// when it was given without a unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    /// The duration.
    pub duration: Duration,
    /// What was assumed, if anything.
    pub note: Option<String>,
}

/// The parser of `-i`/`-c`: notes name the short flag, refusals both.
fn interval(
    short: &'static str,
    long: &'static str,
) -> impl Fn(&str) -> Result<Interval, String> + Clone {
    move |text| {
        let mut notes = Vec::new();
        match parse_duration(short, text, &mut notes) {
            Ok(duration) => Ok(Interval {
                duration,
                note: notes.pop(),
            }),
            Err(e) => Err(parse_duration(&format!("{short}/{long}"), text, &mut notes)
                .err()
                .map_or(e.0, |both| both.0)),
        }
    }
}

fn nonempty(flag: &'static str) -> impl Fn(&str) -> Result<String, String> + Clone {
    move |text| {
        if text.is_empty() {
            Err(format!("{flag}: the value is empty"))
        } else {
            Ok(text.to_string())
        }
    }
}

fn export_format(flag: &'static str) -> impl Fn(&str) -> Result<ExportFormat, String> + Clone {
    move |text| parse_export(flag, text).map_err(|e| e.0)
}

fn host_name(text: &str) -> Result<String, String> {
    check_host_name("--host-name", text).map_err(|e| e.0)?;
    Ok(text.to_string())
}

fn perf_groups(text: &str) -> Result<crate::GroupSelection, String> {
    crate::GroupSelection::parse(text).map_err(|e| format!("--perf-groups: {e}"))
}

fn pid(text: &str) -> Result<i32, String> {
    match text.trim().parse::<i32>() {
        Ok(p) if p > 0 => Ok(p),
        _ => Err(format!(
            "--pid: `{text}` is not a process id; expected a positive integer"
        )),
    }
}

const ABOUT: &str = "Sample the processes of a job and the node they run on";

const LONG_ABOUT: &str = "\
perfflow-monitor: samples the processes of a job and the node they run on,
and writes perfmon-compatible metric files and a Perfetto counter trace.

Run one monitor per node beside the job. It finds the job from the batch
scheduler (SLURM, PBS, OAR, Flux), or follows --pid, or starts the command
after `--`. It stops when the job's processes are gone, when the file
.ipc-<jobid> in the working directory contains FINISHED, or on SIGINT or
SIGTERM, and then writes its results.";

const AFTER_HELP: &str = "\
Merge:
  perfflow-monitor merge DIR [-r] [-e FMT...]
      combines the node files under DIR/metrics into the per-job files again
      (for the job of the node that started last), then makes the exports
      and report asked for

Output (under DIR[/NAME]):
  metrics/cpu_metrics.json, perf_metrics.json, nv_gpu_metrics.json,
  meta_data.json            per-job metrics of every node
  metrics/.nodes/           each node's own data, written at checkpoints
  perfflow.monitor.<host>.<pid>.pfw   counter tracks for Perfetto
  perfflow-monitor.<host>.log         the monitor's log
  <group>.csv, .records.json, .parquet, .feather, .orc, .pkl   with -e
  job-report-<jobid>.html, job-report-<jobid>.pdf, plots/*.png   with -r

Exit status:
  0    the job was followed to its end and the results were written
  1    the results could not be written, or setup failed
  2    the command line is wrong, or there is nothing to follow (no
       scheduler job, no such --pid)
  127  the command after `--` could not be started
  N    with `-- COMMAND`: the command's own exit status (128+SIGNAL when
       a signal ended it)
  A command line that is refused leaves no file behind.

Examples:
  # SLURM: one monitor per node, then the job
  srun -n $SLURM_JOB_NUM_NODES --ntasks-per-node 1 perfflow-monitor -i 5s -d $HOME/runs -p $SLURM_JOB_ID &
  srun ./app
  echo FINISHED > .ipc-$SLURM_JOB_ID
  wait

  # PBS: share the node file with every node
  cp $PBS_NODEFILE $PWD/nodefile
  mpirun --map-by node -np 2 -x PBS_NODEFILE_LOCAL=$PWD/nodefile perfflow-monitor -i 5s &
  mpirun ./app
  echo FINISHED > .ipc-$PBS_JOBID
  wait

  # Flux
  flux run -N 2 --tasks-per-node 1 perfflow-monitor -i 5s &
  flux run -N 2 ./app
  wait

  # Any machine: run a command and follow it
  perfflow-monitor -i 500ms -e parquet -- ./app input.dat";

#[derive(Debug, Parser)]
#[command(
    name = "perfflow-monitor",
    version = crate::install::static_version_line(env!("CARGO_PKG_VERSION")),
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = AFTER_HELP,
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Sub>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Subcommand)]
enum Sub {
    /// Combine the node files of a results directory again, then export and report
    Merge(MergeArgs),
    /// Print the completion script for SHELL on standard output
    Completions {
        /// The shell to complete for
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Write the manual pages (roff) into DIR
    Man {
        /// The directory to write the pages into (created if missing)
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

#[derive(Debug, clap::Args)]
struct MergeArgs {
    /// The results directory (or its metrics directory)
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Make the HTML and PDF reports
    #[arg(short = 'r', long = "gen-report", alias = "gen_report")]
    report: bool,
    /// Export to these formats
    #[arg(short = 'e', long = "export", value_name = "FMT", num_args = 0.., value_delimiter = ',',
          default_missing_value = "csv", value_parser = export_format("-e"))]
    exports: Vec<ExportFormat>,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// Base directory of the results
    #[arg(short = 'd', long = "save-dir", alias = "save_dir", value_name = "DIR",
          default_value = ".", value_parser = nonempty("--save-dir"))]
    save_dir: String,
    /// Results go to DIR/NAME
    #[arg(short = 'p', long, value_name = "NAME", value_parser = nonempty("--prefix"))]
    prefix: Option<String>,
    /// Launcher of the job's tasks (metadata)
    #[arg(short = 'l', long, value_name = "NAME", value_parser = nonempty("--launcher"))]
    launcher: Option<String>,
    /// Time between samples: a number with a unit (500ms, 2s, 1m, 1h); a number alone is seconds, and a note says so [default: 30s]
    #[arg(short = 'i', long = "sampling-freq", alias = "sampling_freq", value_name = "TIME",
          allow_negative_numbers = true, value_parser = interval("-i", "--sampling-freq"))]
    interval: Option<Interval>,
    /// Time between writes of the node's data to disk [default: 900s]
    #[arg(short = 'c', long = "check-point", alias = "check_point", value_name = "TIME",
          allow_negative_numbers = true, value_parser = interval("-c", "--check-point"))]
    checkpoint: Option<Interval>,
    /// Make the HTML and PDF reports and plots after the run
    #[arg(short = 'r', long = "gen-report", alias = "gen_report")]
    report: bool,
    /// Export to csv, json, parquet, feather, orc, pickle and/or hdf5 after the run (a bare -e means csv)
    #[arg(short = 'e', long = "export", value_name = "FMT", num_args = 0.., value_delimiter = ',',
          default_missing_value = "csv", value_parser = export_format("-e"))]
    exports: Vec<ExportFormat>,
    /// Metadata: system name
    #[arg(long, value_name = "NAME", value_parser = nonempty("--system"))]
    system: Option<String>,
    /// Metadata: partition
    #[arg(long, value_name = "NAME", value_parser = nonempty("--partition"))]
    partition: Option<String>,
    /// Metadata: environment
    #[arg(long, value_name = "NAME", value_parser = nonempty("--env"))]
    env: Option<String>,
    /// Metadata: test name
    #[arg(long, value_name = "NAME", value_parser = nonempty("--name"))]
    name: Option<String>,
    /// Follow the process tree of PID
    #[arg(long, value_name = "PID", value_parser = pid)]
    pid: Option<i32>,
    /// Name of this node in the results [default: $PERFFLOW_MONITOR_HOST, else the host name]
    #[arg(long = "host-name", value_name = "NAME", value_parser = host_name)]
    host_name: Option<String>,
    /// perf event groups: all (those for this processor), none, or names from FLOPS, FLOPS_DP, FLOPS_SP, L2, L3, MEM [default: all]
    #[arg(long = "perf-groups", value_name = "LIST", value_parser = perf_groups)]
    perf_groups: Option<crate::GroupSelection>,
    /// Log to stderr as well as to the log file (never to stdout: it is the job's)
    #[arg(short = 'v', long)]
    verbose: bool,
    /// The command to start and follow, after `--`
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// The clap description of the command line (for completions and pages).
pub fn command() -> clap::Command {
    Cli::command()
}

/// `exports` without repeats, in order.
fn unique(exports: Vec<ExportFormat>) -> Vec<ExportFormat> {
    let mut out = Vec::new();
    for f in exports {
        if !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

/// A clap refusal in the words of this tool: the flag, the value and
/// what was expected.
fn usage(e: clap::Error, merge: bool) -> UsageError {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    let arg = context(ContextKind::InvalidArg).unwrap_or_default();
    let flag = arg.split(' ').next().unwrap_or_default().to_string();
    let merge_usage = "`perfflow-monitor merge DIR [-r] [-e FMT...]`";
    let text = match e.kind() {
        ErrorKind::ValueValidation => match std::error::Error::source(&e) {
            Some(source) => source.to_string(),
            None => first_line(&e),
        },
        ErrorKind::InvalidValue
            if context(ContextKind::InvalidValue)
                .unwrap_or_default()
                .is_empty() =>
        {
            format!("{flag}: expected a value after {flag}")
        }
        ErrorKind::UnknownArgument | ErrorKind::InvalidSubcommand => {
            if merge {
                format!("merge: unexpected `{arg}`; expected {merge_usage}")
            } else if arg.starts_with('-') {
                format!("unknown option `{arg}`; see `perfflow-monitor --help`")
            } else {
                format!("unexpected argument `{arg}`; to run a command, put it after `--`")
            }
        }
        ErrorKind::MissingRequiredArgument if merge => {
            format!("merge: expected the results directory first, as in {merge_usage}")
        }
        _ => first_line(&e),
    };
    UsageError(text)
}

/// clap's message without its `error: ` prefix and usage lines.
fn first_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let line = text.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}

/// Parses the arguments after the program name.
pub fn parse<I, S>(args: I) -> Result<Invocation, UsageError>
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let merge = args.first().is_some_and(|a| a == "merge");
    let argv = std::iter::once(OsString::from("perfflow-monitor")).chain(args.iter().cloned());
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(e) => {
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp => Ok(Invocation::Help(e.render().to_string())),
                clap::error::ErrorKind::DisplayVersion => {
                    Ok(Invocation::Version(e.render().to_string()))
                }
                _ => Err(usage(e, merge)),
            }
        }
    };
    match cli.command {
        Some(Sub::Merge(m)) => {
            return Ok(Invocation::Merge {
                dir: m.dir,
                exports: unique(m.exports),
                report: m.report,
            })
        }
        Some(Sub::Completions { shell }) => return Ok(Invocation::Completions(shell)),
        Some(Sub::Man { dir }) => return Ok(Invocation::Man(dir)),
        None => {}
    }
    let r = cli.run;
    let dashes = args.iter().any(|a| a == "--");
    let target = match (r.pid, r.command.is_empty()) {
        (Some(p), false) => {
            return err(format!(
                "--pid {p} and `-- COMMAND` both name what to follow; give one"
            ))
        }
        (Some(p), true) => Target::Pid(p),
        (None, false) => Target::Command(r.command),
        (None, true) if dashes => return err("--: expected a command to run after `--`"),
        (None, true) => Target::Scheduler,
    };
    let mut c = Config {
        save_dir: PathBuf::from(r.save_dir),
        prefix: r.prefix,
        launcher: r.launcher,
        report: r.report,
        exports: unique(r.exports),
        system: r.system,
        partition: r.partition,
        env: r.env,
        name: r.name,
        verbose: r.verbose,
        target,
        host_name: r.host_name,
        perf_groups: r.perf_groups.unwrap_or(crate::GroupSelection::Matching),
        ..Config::default()
    };
    if let Some(i) = r.interval {
        c.interval = i.duration;
        c.notes.extend(i.note);
    }
    if let Some(i) = r.checkpoint {
        c.checkpoint = i.duration;
        c.notes.extend(i.note);
    }
    Ok(Invocation::Run(Box::new(c)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_accept_seconds_and_units() {
        let d = |t| parse_duration("-i", t, &mut Vec::new()).unwrap();
        assert_eq!(d("30"), Duration::from_secs(30));
        assert_eq!(d("0.2"), Duration::from_millis(200));
        assert_eq!(d("500ms"), Duration::from_millis(500));
        assert_eq!(d("2s"), Duration::from_secs(2));
        assert_eq!(d("1m"), Duration::from_secs(60));
    }

    #[test]
    fn zero_negative_and_garbage_durations_are_refused() {
        for t in [
            "0", "-1", "abc", "5x", "", "0ms", "nan", "inf", "1e300", "1e300s",
        ] {
            let e = parse_duration("-i", t, &mut Vec::new()).unwrap_err().0;
            assert!(e.contains("-i") && e.contains(&format!("`{t}`")), "{e}");
        }
    }
}

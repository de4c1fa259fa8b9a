//! The command line, parsed by hand into a [`Config`].
//!
//! perfmon's flags are kept (both `--save-dir` and perfmon's `--save_dir`
//! spellings), so its users switch with a change of name. Parsing never
//! touches the environment or a file: it only turns words into values, and
//! every refusal is a [`UsageError`] naming the flag, the value given and
//! what was expected.

use std::ffi::OsString;
use std::fmt;
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
    /// Log to stdout too (`-v`).
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
    /// Print the help.
    Help,
    /// Print the version.
    Version,
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

/// Formats perfmon accepted that this monitor does not write.
const UNSUPPORTED_EXPORTS: [&str; 4] = ["hdf5", "pickle", "feather", "orc"];

/// Parses one export format name.
pub fn parse_export(flag: &str, text: &str) -> Result<ExportFormat, UsageError> {
    let t = text.trim().to_ascii_lowercase();
    match t.as_str() {
        "csv" => Ok(ExportFormat::Csv),
        "json" => Ok(ExportFormat::Json),
        "parquet" => Ok(ExportFormat::Parquet),
        _ if UNSUPPORTED_EXPORTS.contains(&t.as_str()) => err(format!(
            "{flag}: export format `{text}` is not supported (perfmon wrote it; \
             use parquet, which pandas and pyarrow read, or csv or json)"
        )),
        _ => err(format!(
            "{flag}: unknown export format `{text}`; expected csv, json or parquet"
        )),
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

/// The flags that take one value, with their long names.
fn value_flag(word: &str) -> Option<&'static str> {
    Some(match word {
        "-d" | "--save-dir" | "--save_dir" => "--save-dir",
        "-p" | "--prefix" => "--prefix",
        "-l" | "--launcher" => "--launcher",
        "-i" | "--sampling-freq" | "--sampling_freq" => "--sampling-freq",
        "-c" | "--check-point" | "--check_point" => "--check-point",
        "--system" => "--system",
        "--partition" => "--partition",
        "--env" => "--env",
        "--name" => "--name",
        "--pid" => "--pid",
        "--host-name" => "--host-name",
        "--perf-groups" => "--perf-groups",
        _ => return None,
    })
}

/// A word that is a flag rather than a value: `-x`, `--xyz`, but not a
/// negative number (so `-i -3` is refused for its value, not its form).
fn looks_like_flag(word: &str) -> bool {
    let mut c = word.chars();
    c.next() == Some('-') && c.next().is_some_and(|n| !(n.is_ascii_digit() || n == '.'))
}

fn set_once(slot: &mut Option<String>, flag: &str, value: String) -> Result<(), UsageError> {
    if value.is_empty() {
        return err(format!("{flag}: the value is empty"));
    }
    *slot = Some(value);
    Ok(())
}

/// Parses the arguments after the program name.
pub fn parse<I, S>(args: I) -> Result<Invocation, UsageError>
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    if args.first().and_then(|a| a.to_str()) == Some("merge") {
        return parse_merge(&args[1..]);
    }
    let mut c = Config::default();
    let mut i = 0;
    while i < args.len() {
        let Some(word) = args[i].to_str().map(str::to_string) else {
            return err(format!(
                "argument `{}` is not valid UTF-8",
                args[i].to_string_lossy()
            ));
        };
        i += 1;
        if word == "--" {
            let command: Vec<OsString> = args[i..].to_vec();
            if command.is_empty() {
                return err("--: expected a command to run after `--`");
            }
            if let Target::Pid(p) = c.target {
                return err(format!(
                    "--pid {p} and `-- COMMAND` both name what to follow; give one"
                ));
            }
            c.target = Target::Command(command);
            break;
        }
        // `--flag=value`, or `-iVALUE` for one-letter flags.
        let (name, attached) = match word.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ if word.len() > 2
                && word.starts_with('-')
                && !word.starts_with("--")
                && word.get(..2).and_then(value_flag).is_some() =>
            {
                (word[..2].to_string(), Some(word[2..].to_string()))
            }
            _ => (word.clone(), None),
        };
        if let Some(flag) = value_flag(&name) {
            let value = match attached {
                Some(v) => v,
                None => match args.get(i).and_then(|a| a.to_str()) {
                    Some(v) if !looks_like_flag(v) => {
                        i += 1;
                        v.to_string()
                    }
                    _ => return err(format!("{name}: expected a value after {name}")),
                },
            };
            match flag {
                "--save-dir" => {
                    if value.is_empty() {
                        return err(format!("{name}: the directory is empty"));
                    }
                    c.save_dir = PathBuf::from(value);
                }
                "--prefix" => set_once(&mut c.prefix, &name, value)?,
                "--launcher" => set_once(&mut c.launcher, &name, value)?,
                "--sampling-freq" => c.interval = parse_duration(&name, &value, &mut c.notes)?,
                "--check-point" => c.checkpoint = parse_duration(&name, &value, &mut c.notes)?,
                "--system" => set_once(&mut c.system, &name, value)?,
                "--partition" => set_once(&mut c.partition, &name, value)?,
                "--env" => set_once(&mut c.env, &name, value)?,
                "--name" => set_once(&mut c.name, &name, value)?,
                "--host-name" => {
                    check_host_name(&name, &value)?;
                    set_once(&mut c.host_name, &name, value)?
                }
                "--perf-groups" => {
                    c.perf_groups = crate::GroupSelection::parse(&value)
                        .or_else(|e| err(format!("{name}: {e}")))?
                }
                "--pid" => match value.trim().parse::<i32>() {
                    Ok(p) if p > 0 => c.target = Target::Pid(p),
                    _ => {
                        return err(format!(
                            "{name}: `{value}` is not a process id; expected a positive integer"
                        ))
                    }
                },
                _ => unreachable!("every value flag is handled"),
            }
            continue;
        }
        if attached.is_some() && name != "-e" && name != "--export" {
            return err(format!("{name}: this flag takes no value (given `{word}`)"));
        }
        match name.as_str() {
            "-h" | "--help" => return Ok(Invocation::Help),
            "-V" | "--version" => return Ok(Invocation::Version),
            "-r" | "--gen-report" | "--gen_report" => c.report = true,
            "-v" | "--verbose" => c.verbose = true,
            "-e" | "--export" => {
                let mut values: Vec<String> = attached.into_iter().collect();
                while let Some(v) = args.get(i).and_then(|a| a.to_str()) {
                    if v.starts_with('-') {
                        break;
                    }
                    values.push(v.to_string());
                    i += 1;
                }
                if values.is_empty() {
                    // perfmon's examples pass a bare `-e`.
                    values.push("csv".to_string());
                }
                for v in values.iter().flat_map(|v| v.split(',')) {
                    if v.trim().is_empty() {
                        continue;
                    }
                    let f = parse_export(&name, v)?;
                    if !c.exports.contains(&f) {
                        c.exports.push(f);
                    }
                }
            }
            _ if name.starts_with('-') => {
                return err(format!(
                    "unknown option `{name}`; see `perfflow-monitor --help`"
                ))
            }
            _ => {
                return err(format!(
                    "unexpected argument `{word}`; to run a command, put it after `--`"
                ))
            }
        }
    }
    Ok(Invocation::Run(Box::new(c)))
}

fn parse_merge(rest: &[OsString]) -> Result<Invocation, UsageError> {
    let dir = match rest.first() {
        Some(h) if h == "-h" || h == "--help" => return Ok(Invocation::Help),
        Some(d) if !d.to_string_lossy().starts_with('-') => PathBuf::from(d),
        _ => {
            return err("merge: expected the results directory first, as in \
                 `perfflow-monitor merge DIR [-r] [-e FMT...]`")
        }
    };
    let (mut exports, mut report) = (Vec::new(), false);
    let mut format_flag: Option<String> = None;
    for word in &rest[1..] {
        let word = word.to_string_lossy();
        match word.as_ref() {
            "-r" | "--gen-report" | "--gen_report" => {
                report = true;
                format_flag = None;
            }
            "-e" | "--export" => format_flag = Some(word.to_string()),
            _ => match &format_flag {
                Some(flag) if !word.starts_with('-') => {
                    for v in word.split(',').filter(|v| !v.trim().is_empty()) {
                        let f = parse_export(flag, v)?;
                        if !exports.contains(&f) {
                            exports.push(f);
                        }
                    }
                }
                _ => {
                    return err(format!(
                        "merge: unexpected `{word}`; expected `perfflow-monitor merge DIR [-r] [-e FMT...]`"
                    ))
                }
            },
        }
    }
    Ok(Invocation::Merge {
        dir,
        exports,
        report,
    })
}

/// The text of `--help`.
pub const HELP: &str = "\
perfflow-monitor: samples the processes of a job and the node they run on,
and writes perfmon-compatible metric files and a Perfetto counter trace.

Run one monitor per node beside the job. It finds the job from the batch
scheduler (SLURM, PBS, OAR, Flux), or follows --pid, or starts the command
after `--`. It stops when the job's processes are gone, when the file
.ipc-<jobid> in the working directory contains FINISHED, or on SIGINT or
SIGTERM, and then writes its results.

USAGE:
    perfflow-monitor [OPTIONS]
    perfflow-monitor [OPTIONS] --pid PID
    perfflow-monitor [OPTIONS] -- COMMAND [ARGS...]
    perfflow-monitor merge DIR [-r] [-e FMT...]

OPTIONS:
    -d, --save-dir DIR        base directory of the results (default: .)
    -p, --prefix NAME         results go to DIR/NAME
    -l, --launcher NAME       launcher of the job's tasks (metadata)
    -i, --sampling-freq TIME  time between samples (default 30s): a number
                              with a unit (500ms, 2s, 1m, 1h); a number
                              alone is seconds, and a note says so
    -c, --check-point TIME    time between writes of the node's data to
                              disk (default 900)
    -r, --gen-report          make plots and a report after the run
    -e, --export FMT...       export to csv, json and/or parquet
        --system NAME         metadata: system name
        --partition NAME      metadata: partition
        --env NAME            metadata: environment
        --name NAME           metadata: test name
        --pid PID             follow the process tree of PID
        --host-name NAME      name of this node in the results (default:
                              $PERFFLOW_MONITOR_HOST, else the host name)
        --perf-groups LIST    perf event groups: all (default: those for
                              this processor), none, or names from
                              FLOPS, FLOPS_DP, FLOPS_SP, L2, L3, MEM
    -v, --verbose             log to stdout as well as to the log file
    -h, --help                this help
    -V, --version             the version

MERGE:
    perfflow-monitor merge DIR [-r] [-e FMT...]
                                 combines the node files under DIR/metrics
                                 into the per-job files again (for the job
                                 of the node that started last), then makes
                                 the exports and report asked for

OUTPUT (under DIR[/NAME]):
    metrics/cpu_metrics.json, perf_metrics.json, nv_gpu_metrics.json,
    meta_data.json            per-job metrics of every node
    metrics/.nodes/           each node's own data, written at checkpoints
    perfflow.monitor.<host>.<pid>.pfw   counter tracks for Perfetto
    perfflow-monitor.<host>.log         the monitor's log
    <group>.csv, <group>.records.json, <group>.parquet   with -e
    plots/*.png, job-report-<jobid>.html                 with -r

EXAMPLES:
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
    perfflow-monitor -i 500ms -e parquet -- ./app input.dat
";

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

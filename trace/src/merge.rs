//! Merging the traces of many processes and hosts into one trace.
//!
//! A workflow leaves one trace per process (`perfflow.<layout>...<host>.<pid>.pfw`)
//! and one counter trace per node from the monitor
//! (`perfflow.monitor.<host>.<pid>.pfw`). [`merge`] writes them as one Chrome
//! JSON array that Perfetto opens, streaming: each event's text is copied
//! with `pid` and `tid` rewritten, while the pass learns who each process
//! is (host, executable, pid, MPI rank, from the runtime's
//! `perfflow_process` metadata, the monitor's `process_name`, the object
//! layout's `otherData`, or the file name) and keeps the ends of every flow
//! (`s` and `f` events), the only thing kept per event. The process names
//! follow the events. Memory holds one input buffer, the thread numbers
//! and the flow ends. When clocks are fixed and a host moves, a second
//! pass rewrites the file with `ts` shifted.
//!
//! Identity: processes are numbered 1, 2, ... in input order, so two hosts'
//! processes with the same pid stay distinct; a process's main thread
//! (tid = pid) takes the process's new number and other threads numbers
//! from 1,000,000 on, so no thread is taken for another process's. Each process is named `host · exe [pid]`, with
//! ` rank N` when the runtime knew an MPI rank, and sorted by host, the
//! monitor's counters first, then rank and pid, so a node's counters sit
//! above its processes.
//!
//! Ids: flow ids (`s`/`t`/`f`) are kept, since a flow links processes by
//! its category and id. Async ids (`b`/`n`/`e`) are scoped by category and
//! id across the whole file in the Chrome format, so two processes that
//! each count from 1 would pair each other's spans: a numeric id below
//! 2^40 becomes `new_pid × 2^40 + id` (the original is `id mod 2^40`);
//! other async ids are kept as they are and counted in the report.
//!
//! Clocks: the runtime's timestamps are wall-clock microseconds since the
//! epoch, so processes are already aligned on wall time. Every flow whose
//! ends are on different hosts is checked: its arrival must not precede its
//! departure. With [`MergeOptions::fix_clocks`], each host is shifted by the
//! smallest non-negative offset that satisfies every such flow: a flow
//! from host u to host v asks `off[v] − off[u] ≥ depart − arrive`, a system
//! of difference constraints whose least non-negative solution is the
//! longest path from a virtual source (Bellman–Ford; a positive cycle means
//! no shift satisfies every flow, and [`MergeError::Clocks`] says so).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::convert::{convert, is_pftrace_name};
use crate::error::TraceError;
use crate::event::{Event, Phase};
use crate::output::{same_file, OutputFile};
use crate::read::{stream_trace_text, TraceInfo};

/// How [`merge`] treats clocks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeOptions {
    /// Shift each host by the smallest offset that makes every cross-host
    /// flow arrive at or after its departure.
    pub fix_clocks: bool,
}

/// Why a merge failed.
#[derive(Debug)]
pub enum MergeError {
    /// An input trace could not be read.
    Read(TraceError),
    /// A directory given as input holds no `perfflow.*.pfw` file.
    NoTraces {
        /// The directory.
        path: PathBuf,
    },
    /// One file given twice (by two names, or as a file and in its
    /// directory): merged twice, its processes would be counted twice.
    Repeated {
        /// The two names.
        first: PathBuf,
        second: PathBuf,
    },
    /// A directory holds one trace in both formats (`X.pfw` and
    /// `X.pftrace`, as `convert` writes them): read both, its processes
    /// would be counted twice.
    TwoFormats {
        /// The two files.
        json: PathBuf,
        perfetto: PathBuf,
    },
    /// An input path is neither a file nor a directory that can be listed.
    Input {
        /// The path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An input file is also the output, which writing would destroy.
    OutputIsInput {
        /// The file.
        path: PathBuf,
    },
    /// The merged trace could not be written.
    Write {
        /// The output file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An event could not be copied: its text is not an object of members.
    Event {
        /// The input file.
        path: PathBuf,
        /// The event's 1-based line.
        line: usize,
        /// What went wrong.
        detail: String,
    },
    /// No shift of the hosts' clocks satisfies every cross-host flow.
    Clocks {
        /// Hosts on a cycle of flows whose lower bounds add up to more
        /// than zero.
        hosts: Vec<String>,
    },
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::Read(error) => write!(f, "{error}"),
            MergeError::NoTraces { path } => write!(
                f,
                "{}: no trace in this directory; expected files named perfflow.*.pfw",
                path.display()
            ),
            MergeError::Input { path, source } => {
                write!(f, "cannot read {}: {source}", path.display())
            }
            MergeError::Repeated { first, second } => write!(
                f,
                "{} and {} are one file; expected each trace once",
                first.display(),
                second.display()
            ),
            MergeError::TwoFormats { json, perfetto } => write!(
                f,
                "{} and {} are one trace in two formats (`perfflow-trace convert` writes one \
                 from the other); expected each trace once: name the files to read, or move one \
                 out of the directory",
                json.display(),
                perfetto.display()
            ),
            MergeError::OutputIsInput { path } => write!(
                f,
                "{} is both an input and the output; expected another -o file",
                path.display()
            ),
            MergeError::Write { path, source } => {
                write!(f, "cannot write {}: {source}", path.display())
            }
            MergeError::Event { path, line, detail } => write!(
                f,
                "{}: line {line}: cannot copy the event: {detail}",
                path.display()
            ),
            MergeError::Clocks { hosts } => write!(
                f,
                "no clock offsets satisfy every cross-host flow: flows between {} \
                 each way ask for more than the other allows (a flow that arrives \
                 before it departs on its own host, or ids paired wrongly)",
                hosts.join(", ")
            ),
        }
    }
}

impl std::error::Error for MergeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MergeError::Read(error) => Some(error),
            MergeError::Input { source, .. } | MergeError::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<TraceError> for MergeError {
    fn from(error: TraceError) -> MergeError {
        MergeError::Read(error)
    }
}

/// The trace files named by `paths`: files as given, directories as the
/// `perfflow.*.pfw` and `perfflow.*.pftrace` files they hold (sorted by
/// name), leaving out `output`.
pub fn trace_files(paths: &[PathBuf], output: &Path) -> Result<Vec<PathBuf>, MergeError> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            if same_file(path, output) {
                return Err(MergeError::OutputIsInput { path: path.clone() });
            }
            files.push(path.clone());
            continue;
        }
        let entries = std::fs::read_dir(path).map_err(|source| MergeError::Input {
            path: path.clone(),
            source,
        })?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|file| {
                let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.starts_with("perfflow.")
                    && (name.ends_with(".pfw") || name.ends_with(".pftrace"))
                    && file.is_file()
            })
            .filter(|file| !same_file(file, output))
            .collect();
        if found.is_empty() {
            return Err(MergeError::NoTraces { path: path.clone() });
        }
        found.sort();
        for json in found
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "pfw"))
        {
            let perfetto = json.with_extension("pftrace");
            if found.contains(&perfetto) {
                return Err(MergeError::TwoFormats {
                    json: json.clone(),
                    perfetto,
                });
            }
        }
        files.extend(found);
    }
    let mut seen: HashMap<(u64, u64), &PathBuf> = HashMap::new();
    for file in &files {
        if let Ok(meta) = std::fs::metadata(file) {
            if let Some(first) = seen.insert((meta.dev(), meta.ino()), file) {
                return Err(MergeError::Repeated {
                    first: first.clone(),
                    second: file.clone(),
                });
            }
        }
    }
    Ok(files)
}

/// One process of the merged trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Process {
    /// The file it was read from.
    pub file: PathBuf,
    /// Its pid in that file.
    pub pid: i64,
    /// Its pid in the merged trace.
    pub new_pid: i64,
    /// The host it ran on (`unknown` when no input says).
    pub host: String,
    /// The executable's name.
    pub exe: String,
    /// The MPI rank, when the runtime found one.
    pub rank: Option<u64>,
    /// Whether this is the monitor's counter trace of its host.
    pub monitor: bool,
    /// The host's clock error estimate (`adjtimex` `esterror`), in µs.
    pub clock_esterror_us: Option<f64>,
}

impl Process {
    /// Process `pid` of `file`, numbered `new_pid`, until its metadata
    /// says more.
    pub(crate) fn new(file: &Path, pid: i64, new_pid: i64) -> Process {
        Process {
            file: file.to_path_buf(),
            pid,
            new_pid,
            host: "unknown".to_string(),
            exe: "?".to_string(),
            rank: None,
            monitor: false,
            clock_esterror_us: None,
        }
    }

    /// The name shown in Perfetto: `host · exe [pid]`, plus ` rank N`.
    pub fn display_name(&self) -> String {
        let mut name = format!("{} · {} [{}]", self.host, self.exe, self.pid);
        if let Some(rank) = self.rank {
            name.push_str(&format!(" rank {rank}"));
        }
        name
    }
}

/// What one input file holds, from [`survey`].
#[derive(Debug, Clone)]
struct Source {
    /// Index into [`Survey::processes`] by pid in the file.
    pids: HashMap<i64, usize>,
    truncated: bool,
}

/// One end of a flow.
#[derive(Debug, Clone)]
struct FlowEnd {
    start: bool,
    ts_ns: i64,
    process: usize,
}

/// What the first pass learns: the processes and the flows.
#[derive(Debug, Default)]
struct Survey {
    sources: Vec<Source>,
    processes: Vec<Process>,
    /// Flow ends by (cat, id).
    flows: HashMap<(String, String), Vec<FlowEnd>>,
    /// Events copied, metadata not counted.
    events: u64,
    /// Async ids kept as they were.
    async_ids_kept: u64,
}

/// What a file's metadata says about one of its pids.
#[derive(Debug, Default)]
pub(crate) struct Facts {
    process_name: Option<String>,
    host: Option<String>,
    exe: Option<String>,
    rank: Option<u64>,
    monitor: bool,
    esterror_us: Option<f64>,
}

impl Facts {
    pub(crate) fn learn(&mut self, event: &Event) {
        let args = &event.args;
        match event.name.as_deref() {
            Some("process_name") => {
                self.process_name = args.get("name").and_then(Value::as_str).map(String::from)
            }
            Some("perfflow_process") => {
                let text = |key: &str| args.get(key).and_then(Value::as_str).map(String::from);
                self.host = text("host").or(self.host.take());
                self.exe = text("exe").or(self.exe.take());
                self.rank = args.get("rank").and_then(Value::as_u64).or(self.rank);
                self.esterror_us = args
                    .pointer("/clock/esterror_us")
                    .and_then(Value::as_f64)
                    .or(self.esterror_us);
            }
            Some("perfflow_monitor") => self.monitor = true,
            _ => {}
        }
    }
}

/// The host named by a file name `perfflow.<layout>.<host>.<pid>.pfw` (the
/// runtime's and the monitor's default names).
fn host_from_file_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let rest = name.strip_prefix("perfflow.")?;
    let rest = rest
        .strip_suffix(".pfw")
        .or_else(|| rest.strip_suffix(".pftrace"))?;
    let (layout, rest) = rest.split_once('.')?;
    if !matches!(layout, "array" | "object" | "monitor" | "perfetto") {
        return None;
    }
    let (host, pid) = rest.rsplit_once('.')?;
    (!host.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then(|| host.to_string())
}

/// Fills in who the processes of the file at `path` are, from what its
/// metadata said (`facts`) and, failing that, its `otherData` or name.
pub(crate) fn identify(
    processes: &mut [Process],
    pids: &HashMap<i64, usize>,
    mut facts: HashMap<i64, Facts>,
    path: &Path,
    info: &TraceInfo,
) {
    let file_host = info
        .other_data
        .as_ref()
        .and_then(|data| data.get("hostname"))
        .and_then(Value::as_str)
        .map(String::from)
        .or_else(|| host_from_file_name(path));
    for (pid, &index) in pids {
        let facts = facts.remove(pid).unwrap_or_default();
        let monitor_host = facts
            .process_name
            .as_deref()
            .and_then(|name| name.strip_prefix("perfflow-monitor "))
            .map(String::from);
        let monitor = facts.monitor || monitor_host.is_some();
        let process = &mut processes[index];
        process.host = facts
            .host
            .or(if monitor { monitor_host } else { None })
            .or_else(|| file_host.clone())
            .unwrap_or_else(|| "unknown".to_string());
        process.exe = facts
            .exe
            .or(if monitor {
                Some("perfflow-monitor".to_string())
            } else {
                None
            })
            .or(facts.process_name)
            .unwrap_or_else(|| "?".to_string());
        process.rank = facts.rank;
        process.monitor = monitor;
        process.clock_esterror_us = facts.esterror_us;
    }
}

/// A flow whose departure and arrival are on different hosts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CrossFlow {
    pub from: usize,
    pub to: usize,
    pub depart_ns: i64,
    pub arrive_ns: i64,
}

/// Pairs each (cat, id)'s departures with its arrivals in time order and
/// keeps the pairs that cross hosts (host indexes into `hosts`).
fn cross_host_flows(survey: &Survey, host_of: &[usize]) -> Vec<CrossFlow> {
    let mut cross = Vec::new();
    for ends in survey.flows.values() {
        let mut starts: Vec<&FlowEnd> = ends.iter().filter(|end| end.start).collect();
        let mut arrivals: Vec<&FlowEnd> = ends.iter().filter(|end| !end.start).collect();
        starts.sort_by_key(|end| end.ts_ns);
        arrivals.sort_by_key(|end| end.ts_ns);
        for (start, arrival) in starts.iter().zip(&arrivals) {
            let (from, to) = (host_of[start.process], host_of[arrival.process]);
            if from != to {
                cross.push(CrossFlow {
                    from,
                    to,
                    depart_ns: start.ts_ns,
                    arrive_ns: arrival.ts_ns,
                });
            }
        }
    }
    cross
}

/// Flows from one host to another that arrive before they depart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violations {
    /// The departure host.
    pub from: String,
    /// The arrival host.
    pub to: String,
    /// How many flows arrive early.
    pub count: usize,
    /// The earliest arrival before its departure, in nanoseconds.
    pub worst_ns: i64,
}

/// The shift applied to one host's timestamps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostOffset {
    /// The host.
    pub host: String,
    /// Nanoseconds added to every timestamp of the host.
    pub offset_ns: i64,
    /// Cross-host flows with an end on this host.
    pub flows: usize,
}

/// What [`merge`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MergeReport {
    /// The input files, in order.
    pub files: Vec<PathBuf>,
    /// Inputs cut short (read up to where they end).
    pub truncated_files: usize,
    /// The processes, in input order (`new_pid` 1, 2, ...).
    pub processes: Vec<Process>,
    /// The distinct hosts, sorted.
    pub hosts: Vec<String>,
    /// Events written, metadata not counted.
    pub events: u64,
    /// Flows whose ends are on different hosts.
    pub cross_host_flows: usize,
    /// Cross-host flows that arrive before they depart, per pair of hosts,
    /// with the clocks as the inputs have them.
    pub violations: Vec<Violations>,
    /// The shift of each host, with [`MergeOptions::fix_clocks`].
    pub offsets: Option<Vec<HostOffset>>,
    /// Async ids kept as they were (not a number below 2^40).
    pub async_ids_kept: u64,
}

/// Async ids below this are made distinct per process.
const ASYNC_ID_SPACE: u64 = 1 << 40;

/// The least non-negative host offsets satisfying every cross-host flow.
pub(crate) fn solve_offsets(hosts: &[String], cross: &[CrossFlow]) -> Result<Vec<i64>, MergeError> {
    // The tightest bound per ordered pair of hosts: off[to] - off[from] >= bound.
    let mut bounds: BTreeMap<(usize, usize), i64> = BTreeMap::new();
    for flow in cross {
        let bound = flow.depart_ns - flow.arrive_ns;
        let slot = bounds.entry((flow.from, flow.to)).or_insert(bound);
        *slot = (*slot).max(bound);
    }
    let mut offsets = vec![0i64; hosts.len()];
    // A longest path has at most one edge fewer than there are hosts: the
    // round after it changes nothing unless a cycle keeps raising offsets.
    for _ in 0..=hosts.len() {
        let mut changed = false;
        for (&(from, to), &bound) in &bounds {
            let need = offsets[from].saturating_add(bound);
            if need > offsets[to] {
                offsets[to] = need;
                changed = true;
            }
        }
        if !changed {
            return Ok(offsets);
        }
    }
    // Still relaxing after as many rounds as hosts: a positive cycle.
    let mut on_cycle: Vec<String> = bounds
        .iter()
        .filter(|(&(from, to), &bound)| offsets[from].saturating_add(bound) > offsets[to])
        .flat_map(|(&(from, to), _)| [hosts[from].clone(), hosts[to].clone()])
        .collect();
    on_cycle.sort();
    on_cycle.dedup();
    Err(MergeError::Clocks { hosts: on_cycle })
}

fn violations(hosts: &[String], cross: &[CrossFlow], offsets: &[i64]) -> Vec<Violations> {
    let mut found: BTreeMap<(usize, usize), (usize, i64)> = BTreeMap::new();
    for flow in cross {
        let early = (flow.depart_ns + offsets[flow.from]) - (flow.arrive_ns + offsets[flow.to]);
        if early > 0 {
            let slot = found.entry((flow.from, flow.to)).or_insert((0, 0));
            slot.0 += 1;
            slot.1 = slot.1.max(early);
        }
    }
    found
        .into_iter()
        .map(|((from, to), (count, worst_ns))| Violations {
            from: hosts[from].clone(),
            to: hosts[to].clone(),
            count,
            worst_ns,
        })
        .collect()
}

/// Merges the trace `files` into one Chrome JSON array at `output`, or,
/// when its name ends in `.pftrace`, one Perfetto trace (the JSON array
/// written beside it first, then converted).
///
/// One pass copies the events and learns the processes and flows; the
/// process names follow the events. A second pass rewrites the file only
/// when [`MergeOptions::fix_clocks`] shifts a host.
pub fn merge(
    files: &[PathBuf],
    output: &Path,
    options: MergeOptions,
) -> Result<MergeReport, MergeError> {
    if is_pftrace_name(output) {
        let write_error = |source| MergeError::Write {
            path: output.to_path_buf(),
            source,
        };
        let json = tempfile::Builder::new()
            .prefix(".merged.")
            .suffix(".pfw")
            .tempfile_in(crate::output::directory_of(output))
            .map_err(write_error)?;
        let report = merge(files, json.path(), options)?;
        convert(json.path(), output)
            .map_err(|error| write_error(std::io::Error::other(error.to_string())))?;
        return Ok(report);
    }
    let mut survey = Survey::default();
    write_merged(files, output, &mut survey, None)?;
    let mut hosts: Vec<String> = survey.processes.iter().map(|p| p.host.clone()).collect();
    hosts.sort();
    hosts.dedup();
    let host_of: Vec<usize> = survey
        .processes
        .iter()
        .map(|p| hosts.binary_search(&p.host).unwrap_or(0))
        .collect();
    let cross = cross_host_flows(&survey, &host_of);
    let mut report = MergeReport {
        files: files.to_vec(),
        truncated_files: survey.sources.iter().filter(|s| s.truncated).count(),
        hosts: hosts.clone(),
        cross_host_flows: cross.len(),
        violations: violations(&hosts, &cross, &vec![0; hosts.len()]),
        ..MergeReport::default()
    };
    if options.fix_clocks {
        let offsets = solve_offsets(&hosts, &cross)?;
        let mut touching = vec![0usize; hosts.len()];
        for flow in &cross {
            touching[flow.from] += 1;
            touching[flow.to] += 1;
        }
        report.offsets = Some(
            hosts
                .iter()
                .enumerate()
                .map(|(index, host)| HostOffset {
                    host: host.clone(),
                    offset_ns: offsets[index],
                    flows: touching[index],
                })
                .collect(),
        );
        if offsets.iter().any(|&offset| offset != 0) {
            let shift: Vec<i64> = host_of.iter().map(|&host| offsets[host]).collect();
            write_merged(files, output, &mut survey, Some(&shift))?;
        }
    }
    report.processes = survey.processes;
    report.events = survey.events;
    report.async_ids_kept = survey.async_ids_kept;
    Ok(report)
}

/// Writes the merged trace at `output` (see [`copy_events`]).
fn write_merged(
    files: &[PathBuf],
    output: &Path,
    survey: &mut Survey,
    shift: Option<&[i64]>,
) -> Result<(), MergeError> {
    let write_error = |source| MergeError::Write {
        path: output.to_path_buf(),
        source,
    };
    // Written whole or not at all: an error below leaves what was at
    // `output` as it was.
    let mut staged = OutputFile::create(output).map_err(write_error)?;
    let mut writer = Writer {
        out: BufWriter::with_capacity(1 << 20, staged.file()),
        line: Vec::with_capacity(4096),
        first: true,
    };
    let written = copy_events(&mut writer, files, survey, shift)
        .and_then(|()| write_process_names(&mut writer, &survey.processes))
        .and_then(|()| {
            writer.out.write_all(b"\n]\n")?;
            writer.out.flush().map_err(Failure::Io)
        });
    drop(writer);
    match written {
        Ok(()) => staged.commit().map_err(write_error),
        Err(Failure::Io(source)) => Err(write_error(source)),
        Err(Failure::Merge(error)) => Err(error),
    }
}

/// Why writing stopped.
enum Failure {
    Io(std::io::Error),
    Merge(MergeError),
}

impl From<std::io::Error> for Failure {
    fn from(error: std::io::Error) -> Failure {
        Failure::Io(error)
    }
}

struct Writer<'a> {
    out: BufWriter<&'a mut File>,
    line: Vec<u8>,
    first: bool,
}

impl Writer<'_> {
    /// Writes the event in `line`, after a separator unless it is the first.
    fn emit(&mut self) -> std::io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        self.out.write_all(&self.line)
    }
}

/// The sort position of each process: by host, the monitor first, then
/// rank and pid.
fn sort_indexes(processes: &[Process]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..processes.len()).collect();
    order.sort_by(|&a, &b| {
        let key = |p: &Process| (p.host.clone(), !p.monitor, p.rank.is_none(), p.rank, p.pid);
        key(&processes[a]).cmp(&key(&processes[b]))
    });
    let mut index = vec![0; processes.len()];
    for (position, process) in order.into_iter().enumerate() {
        index[process] = position;
    }
    index
}

/// The process names and sort order, after the events (Chrome JSON
/// readers take metadata anywhere in the file).
fn write_process_names(writer: &mut Writer<'_>, processes: &[Process]) -> Result<(), Failure> {
    let sort = sort_indexes(processes);
    for (index, process) in processes.iter().enumerate() {
        for (name, args) in [
            (
                "process_name",
                serde_json::json!({ "name": process.display_name() }),
            ),
            (
                "process_sort_index",
                serde_json::json!({ "sort_index": sort[index] }),
            ),
        ] {
            writer.line.clear();
            let event = serde_json::json!({"name": name, "ph": "M", "pid": process.new_pid,
                "tid": process.new_pid, "args": args});
            serde_json::to_writer(&mut writer.line, &event).map_err(std::io::Error::from)?;
            writer.emit()?;
        }
    }
    Ok(())
}

/// Threads other than a process's main thread are numbered from here on;
/// processes take 1, 2, ... below it.
const FIRST_THREAD: i64 = 1_000_000;

/// Copies the events of every file, renumbering processes and threads and
/// dropping the inputs' `process_name` and `process_sort_index`. The first
/// pass (`shift` is `None`) also learns who each process is and the ends of
/// every flow; a later pass adds `shift[process]` to each event's `ts`.
fn copy_events(
    writer: &mut Writer<'_>,
    files: &[PathBuf],
    survey: &mut Survey,
    shift: Option<&[i64]>,
) -> Result<(), Failure> {
    let learn = shift.is_none();
    let mut next_tid = FIRST_THREAD;
    let mut tids: HashMap<(usize, i64), i64> = HashMap::new();
    writer.out.write_all(b"[\n")?;
    for (file_index, path) in files.iter().enumerate() {
        let mut pids = survey
            .sources
            .get(file_index)
            .map(|source| source.pids.clone())
            .unwrap_or_default();
        let mut facts: HashMap<i64, Facts> = HashMap::new();
        let mut failure: Option<Failure> = None;
        let info = stream_trace_text(path, |event, text| {
            if failure.is_some() {
                return;
            }
            let process = event.pid.map(|pid| {
                *pids.entry(pid).or_insert_with(|| {
                    let index = survey.processes.len();
                    survey
                        .processes
                        .push(Process::new(path, pid, index as i64 + 1));
                    index
                })
            });
            let edit = match process {
                Some(index) => {
                    if learn {
                        learn_from(&event, index, &mut facts, &mut survey.flows);
                    }
                    if event.is_metadata()
                        && matches!(
                            event.name.as_deref(),
                            Some("process_name" | "process_sort_index")
                        )
                    {
                        return;
                    }
                    let proc = &survey.processes[index];
                    let tid = event.tid.map(|tid| {
                        if tid == proc.pid {
                            proc.new_pid
                        } else {
                            *tids.entry((index, tid)).or_insert_with(|| {
                                next_tid += 1;
                                next_tid - 1
                            })
                        }
                    });
                    let async_id = match event.ph {
                        Some(Phase::AsyncBegin | Phase::AsyncInstant | Phase::AsyncEnd) => {
                            match event.id.as_deref().and_then(|id| id.parse::<u64>().ok()) {
                                Some(id) if id < ASYNC_ID_SPACE => {
                                    Some((proc.new_pid as u64) * ASYNC_ID_SPACE + id)
                                }
                                _ => {
                                    survey.async_ids_kept += u64::from(learn);
                                    None
                                }
                            }
                        }
                        _ => None,
                    };
                    let shift_ns = shift.map_or(0, |shift| shift[index]);
                    Some(Edit {
                        pid: proc.new_pid,
                        tid,
                        ts_ns: event.ts_ns.filter(|_| shift_ns != 0),
                        shift_ns,
                        async_id,
                    })
                }
                None => None,
            };
            writer.line.clear();
            let copied = match &edit {
                Some(edit) => rewrite(text, edit, &mut writer.line),
                None => {
                    writer.line.extend_from_slice(text.as_bytes());
                    Ok(())
                }
            };
            if let Err(detail) = copied {
                failure = Some(Failure::Merge(MergeError::Event {
                    path: path.clone(),
                    line: event.line,
                    detail,
                }));
                return;
            }
            if let Err(error) = writer.emit() {
                failure = Some(Failure::Io(error));
                return;
            }
            if learn && !event.is_metadata() {
                survey.events += 1;
            }
        })
        .map_err(|error| Failure::Merge(MergeError::Read(error)))?;
        if let Some(failure) = failure {
            return Err(failure);
        }
        if learn {
            identify(&mut survey.processes, &pids, facts, path, &info);
            survey.sources.push(Source {
                pids,
                truncated: info.truncated,
            });
        }
    }
    Ok(())
}

/// What the first pass keeps of `event` of process `index`: metadata
/// about the process, and the ends of flows.
fn learn_from(
    event: &Event,
    index: usize,
    facts: &mut HashMap<i64, Facts>,
    flows: &mut HashMap<(String, String), Vec<FlowEnd>>,
) {
    let Some(pid) = event.pid else { return };
    if event.is_metadata() {
        facts.entry(pid).or_default().learn(event);
        return;
    }
    let start = match event.ph {
        Some(Phase::FlowStart) => true,
        Some(Phase::FlowEnd) => false,
        _ => return,
    };
    if let (Some(id), Some(ts_ns)) = (&event.id, event.ts_ns) {
        let cat = event.cat.clone().unwrap_or_default();
        flows.entry((cat, id.clone())).or_default().push(FlowEnd {
            start,
            ts_ns,
            process: index,
        });
    }
}

/// The fields of one event that change.
struct Edit {
    pid: i64,
    tid: Option<i64>,
    /// The event's time, when it is shifted.
    ts_ns: Option<i64>,
    shift_ns: i64,
    async_id: Option<u64>,
}

/// The members of an event object, in order, as raw text: for events
/// whose keys have escapes.
struct Members<'a>(Vec<(std::borrow::Cow<'a, str>, &'a RawValue)>);

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Members<'de>, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an event object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::with_capacity(10);
                while let Some(member) = map.next_entry()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

/// Writes `ns` nanoseconds as microseconds with three decimals.
fn write_micros(out: &mut Vec<u8>, ns: i64) {
    let sign = if ns < 0 { "-" } else { "" };
    let abs = ns.unsigned_abs();
    let _ = write!(out, "{sign}{}.{:03}", abs / 1000, abs % 1000);
}

/// Copies the event `text` into `out` with the members `edit` changes.
fn rewrite(text: &str, edit: &Edit, out: &mut Vec<u8>) -> Result<(), String> {
    let start = out.len();
    if splice(text.as_bytes(), edit, out).is_some() {
        return Ok(());
    }
    // A key with escapes: parse the members to compare keys exactly.
    out.truncate(start);
    let members: Members<'_> = serde_json::from_str(text).map_err(|error| error.to_string())?;
    out.push(b'{');
    for (position, (key, value)) in members.0.iter().enumerate() {
        if position > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, key.as_ref()).map_err(|error| error.to_string())?;
        out.push(b':');
        if !write_edited(key.as_bytes(), edit, out) {
            out.extend_from_slice(value.get().as_bytes());
        }
    }
    out.push(b'}');
    Ok(())
}

/// Writes the new value of the member `key` when `edit` changes it.
fn write_edited(key: &[u8], edit: &Edit, out: &mut Vec<u8>) -> bool {
    match (key, edit.tid, edit.ts_ns, edit.async_id) {
        (b"pid", ..) => {
            let _ = write!(out, "{}", edit.pid);
        }
        (b"tid", Some(tid), ..) => {
            let _ = write!(out, "{tid}");
        }
        (b"ts", _, Some(ts_ns), _) => write_micros(out, ts_ns + edit.shift_ns),
        (b"id", .., Some(id)) => {
            let _ = write!(out, "{id}");
        }
        _ => return false,
    }
    true
}

/// Copies `text`, one event object (already validated by the reader),
/// into `out` with the values `edit` changes, everything else byte for
/// byte. `None` when a key has escapes (or the text is not an object).
fn splice(text: &[u8], edit: &Edit, out: &mut Vec<u8>) -> Option<()> {
    let mut copied = 0;
    let mut at = skip_space(text, 0);
    if text.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_space(text, at + 1);
    if text.get(at) != Some(&b'}') {
        loop {
            let key_end = string_end(text, at)?;
            let key = &text[at + 1..key_end - 1];
            if key.contains(&b'\\') {
                return None;
            }
            at = skip_space(text, key_end);
            if text.get(at) != Some(&b':') {
                return None;
            }
            let value_start = skip_space(text, at + 1);
            let value_end = value_end(text, value_start)?;
            let mark = out.len();
            out.extend_from_slice(&text[copied..value_start]);
            if write_edited(key, edit, out) {
                copied = value_end;
            } else {
                out.truncate(mark);
            }
            at = skip_space(text, value_end);
            match text.get(at) {
                Some(b',') => at = skip_space(text, at + 1),
                Some(b'}') => break,
                _ => return None,
            }
        }
    }
    out.extend_from_slice(&text[copied..]);
    Some(())
}

fn skip_space(text: &[u8], mut at: usize) -> usize {
    while matches!(text.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The end (exclusive) of the string whose `"` is at `at`.
fn string_end(text: &[u8], mut at: usize) -> Option<usize> {
    if text.get(at) != Some(&b'"') {
        return None;
    }
    at += 1;
    loop {
        match text.get(at)? {
            b'\\' => at += 2,
            b'"' => return Some(at + 1),
            _ => at += 1,
        }
    }
}

/// The end (exclusive) of the JSON value starting at `at`.
fn value_end(text: &[u8], at: usize) -> Option<usize> {
    match text.get(at)? {
        b'"' => string_end(text, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match text.get(i)? {
                    b'"' => {
                        i = string_end(text, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let rest = &text[at..];
            let len = rest
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(rest.len());
            Some(at + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(from: usize, to: usize, depart_ns: i64, arrive_ns: i64) -> CrossFlow {
        CrossFlow {
            from,
            to,
            depart_ns,
            arrive_ns,
        }
    }

    fn hosts(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("h{i}")).collect()
    }

    #[test]
    fn two_hosts_take_the_largest_lower_bound() {
        let cross = [
            flow(0, 1, 100, 40),
            flow(0, 1, 200, 170),
            flow(1, 0, 50, 500),
        ];
        assert_eq!(solve_offsets(&hosts(2), &cross).unwrap(), [0, 60]);
    }

    #[test]
    fn bounds_chain_through_a_third_host() {
        let cross = [flow(0, 1, 100, 90), flow(1, 2, 100, 95)];
        assert_eq!(solve_offsets(&hosts(3), &cross).unwrap(), [0, 10, 15]);
    }

    #[test]
    fn a_positive_cycle_is_infeasible() {
        let cross = [flow(0, 1, 100, 90), flow(1, 0, 100, 95)];
        match solve_offsets(&hosts(2), &cross) {
            Err(MergeError::Clocks { hosts }) => assert_eq!(hosts, ["h0", "h1"]),
            other => panic!("expected infeasible clocks, got {other:?}"),
        }
    }

    #[test]
    fn an_event_is_copied_with_its_other_members_as_they_were() {
        let edit = Edit {
            pid: 3,
            tid: Some(7),
            ts_ns: Some(1_000_500),
            shift_ns: -1_000,
            async_id: None,
        };
        let mut out = Vec::new();
        rewrite(
            r#"{"name":"a\"b","ph":"f","bp":"e","pid":42,"tid":43,"ts":1000.500,"id":9,"args":{"x":[1, 2]}}"#,
            &edit,
            &mut out,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"name":"a\"b","ph":"f","bp":"e","pid":3,"tid":7,"ts":999.500,"id":9,"args":{"x":[1, 2]}}"#
        );
    }

    #[test]
    fn escaped_keys_nested_values_and_spacing_are_copied_exactly() {
        let edit = Edit {
            pid: 3,
            tid: Some(7),
            ts_ns: None,
            shift_ns: 0,
            async_id: Some(99),
        };
        let cases = [
            (
                r#"{ "args" : {"pid": [1, "}\"{"]}, "pid" : 42 , "tid":43,"ts":1.5,"id":"x"}"#,
                r#"{ "args" : {"pid": [1, "}\"{"]}, "pid" : 3 , "tid":7,"ts":1.5,"id":99}"#,
            ),
            (r#"{"p\u0069d":42,"tid":43}"#, r#"{"pid":3,"tid":7}"#),
            (r#"{}"#, r#"{}"#),
        ];
        for (text, expected) in cases {
            let mut out = Vec::new();
            rewrite(text, &edit, &mut out).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), expected, "{text}");
        }
    }

    #[test]
    fn an_input_that_is_also_the_output_is_refused() {
        let dir = std::env::temp_dir().join(format!("perfflow-merge-self-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("perfflow.array.n.1.pfw");
        std::fs::write(&file, "[]").unwrap();
        let refused = trace_files(
            std::slice::from_ref(&file),
            &dir.join(".").join("perfflow.array.n.1.pfw"),
        );
        let listed = trace_files(std::slice::from_ref(&dir), &file);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(matches!(refused, Err(MergeError::OutputIsInput { .. })));
        assert!(
            matches!(listed, Err(MergeError::NoTraces { .. })),
            "{listed:?}"
        );
    }

    #[test]
    fn host_comes_from_the_default_file_names() {
        let host = |name: &str| host_from_file_name(Path::new(name));
        assert_eq!(
            host("perfflow.array.node1.lab.42.pfw").as_deref(),
            Some("node1.lab")
        );
        assert_eq!(host("perfflow.monitor.n2.7.pfw").as_deref(), Some("n2"));
        assert_eq!(host("trace.json"), None);
    }
}

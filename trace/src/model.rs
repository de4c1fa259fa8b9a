//! A workflow held in memory: its processes, threads, spans and the links
//! between threads (flows and asynchronous spans), for the analyses that
//! need every span at once (the critical path, call-tree profiles).
//!
//! Spans are paired by the same matcher as `check`, `summary` and `db`, so
//! all of them agree on what a span is. Processes are identified as
//! [`crate::merge`] identifies them (host, executable, pid, MPI rank), one
//! per pid of each file, so two hosts' processes with one pid stay apart.
//! Flow ends (`s`, `t`, `f`) of one category and id are paired in time
//! order, the k-th departure with the k-th arrival, as `merge` pairs them
//! (a `t` step is the arrival of one link and the departure of the next).
//!
//! Clocks: with `fix_clocks`, each host is shifted by the offsets `merge
//! --fix-clocks` computes from the cross-host flows, so the analyses see
//! the times the merged trace shows.
//!
//! Memory holds every span (about 80 bytes plus its name's share), unlike
//! `check` and `summary`, which hold only what is open.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

use crate::db::DbError;
use crate::event::{Event, Phase};
use crate::merge::{identify, solve_offsets, CrossFlow, Facts, MergeError, Process};
use crate::read::stream_trace;
use crate::spans::{Matched, Matcher, Mismatch, Seen};

/// One process of the workflow.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProcessInfo {
    /// The host it ran on (`unknown` when no input says).
    pub host: String,
    /// The executable's name.
    pub exe: String,
    /// Its pid in its trace.
    pub pid: i64,
    /// The MPI rank, when the runtime found one.
    pub rank: Option<u64>,
    /// `host · exe [pid]`, plus ` rank N`, as `merge` names it.
    pub name: String,
    /// The trace file it was read from.
    pub file: PathBuf,
    /// The latest time any of its events shows, clock shift applied.
    pub last_ns: Option<i64>,
}

/// One thread of the workflow.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadInfo {
    /// Index into [`Workflow::processes`].
    pub process: usize,
    /// Its tid in its trace.
    pub tid: i64,
    /// The name from a `thread_name` metadata event, if any.
    pub name: Option<String>,
}

/// A span: a `B`/`E` pair or an `X` event (nested on its thread), or a
/// `b`/`e` pair (asynchronous).
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub name: String,
    /// Index into [`Workflow::threads`] of the thread it began on.
    pub thread: usize,
    pub start_ns: i64,
    /// `None` for a span still open when its trace ended.
    pub end_ns: Option<i64>,
    /// Nested on its thread (`B`/`E`, `X`) rather than asynchronous.
    pub nested: bool,
    /// The thread an asynchronous span ended on.
    pub end_thread: Option<usize>,
    /// The position of its begin (or `X`) event among its file's events:
    /// of two spans of a thread with one start and end, the one begun
    /// first is the outer one.
    pub order: usize,
}

/// What links two threads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LinkKind {
    /// A flow (`s` to `f`, through any `t`) of this category and id.
    Flow {
        name: String,
        category: String,
        id: String,
    },
    /// An asynchronous span begun on one thread and ended on another;
    /// `span` indexes [`Workflow::spans`].
    Async { name: String, span: usize },
}

impl LinkKind {
    /// The flow's or the asynchronous span's name.
    pub fn name(&self) -> &str {
        match self {
            LinkKind::Flow { name, .. } | LinkKind::Async { name, .. } => name,
        }
    }
}

/// A departure on one thread that an arrival on another waited for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub kind: LinkKind,
    pub from_thread: usize,
    pub from_ns: i64,
    pub to_thread: usize,
    pub to_ns: i64,
}

/// The shift applied to one host's times.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClockShift {
    pub host: String,
    /// Nanoseconds added to every time of the host.
    pub offset_ns: i64,
}

/// A workflow's processes, threads, spans and links.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Workflow {
    pub processes: Vec<ProcessInfo>,
    pub threads: Vec<ThreadInfo>,
    pub spans: Vec<Span>,
    pub links: Vec<Link>,
    /// The shift of each host that moved (with `fix_clocks`).
    pub shifts: Vec<ClockShift>,
    /// Input files that were cut short.
    pub truncated_files: usize,
}

/// One end of a flow, before pairing.
#[derive(Clone)]
struct FlowEnd {
    category: String,
    id: String,
    name: String,
    phase: Phase,
    thread: usize,
    ts_ns: i64,
}

/// What is learned while reading one file.
struct FileLoad<'a> {
    workflow: &'a mut Workflow,
    flow_ends: &'a mut Vec<FlowEnd>,
    path: &'a Path,
    /// Processes of this file by pid: index into `workflow.processes`.
    pids: HashMap<i64, usize>,
    threads: HashMap<(i64, i64), usize>,
    facts: HashMap<i64, Facts>,
    matcher: Matcher,
}

impl FileLoad<'_> {
    fn process(&mut self, pid: i64) -> usize {
        if let Some(&index) = self.pids.get(&pid) {
            return index;
        }
        let index = self.workflow.processes.len();
        self.workflow.processes.push(ProcessInfo {
            host: "unknown".to_string(),
            exe: "?".to_string(),
            pid,
            rank: None,
            name: String::new(),
            file: self.path.to_path_buf(),
            last_ns: None,
        });
        self.pids.insert(pid, index);
        index
    }

    fn thread(&mut self, (pid, tid): (i64, i64)) -> usize {
        if let Some(&index) = self.threads.get(&(pid, tid)) {
            return index;
        }
        let process = self.process(pid);
        let index = self.workflow.threads.len();
        self.workflow.threads.push(ThreadInfo {
            process,
            tid,
            name: None,
        });
        self.threads.insert((pid, tid), index);
        index
    }

    fn event(&mut self, index: usize, event: &Event) {
        let Some(pid) = event.pid else {
            return;
        };
        let process = self.process(pid);
        if event.is_metadata() {
            self.facts.entry(pid).or_default().learn(event);
            if event.name.as_deref() == Some("thread_name") {
                if let (Some(thread), Some(name)) = (event.thread(), event.args["name"].as_str()) {
                    let thread = self.thread(thread);
                    self.workflow.threads[thread].name = Some(name.to_string());
                }
            }
            return;
        }
        if let Some(end) = event.end_ns() {
            let last = &mut self.workflow.processes[process].last_ns;
            *last = Some(last.map_or(end, |last| last.max(end)));
        }
        match (&event.ph, event.thread(), event.ts_ns) {
            (Some(Phase::Complete), Some(thread), Some(start)) => {
                if let Some(dur) = event.dur_ns.filter(|&dur| dur >= 0) {
                    let thread = self.thread(thread);
                    self.workflow.spans.push(Span {
                        name: span_name(event.name.as_deref()),
                        thread,
                        start_ns: start,
                        end_ns: Some(start.saturating_add(dur)),
                        nested: true,
                        end_thread: None,
                        order: index,
                    });
                }
            }
            (
                Some(phase @ (Phase::FlowStart | Phase::FlowStep | Phase::FlowEnd)),
                Some(thread),
                Some(ts),
            ) => {
                if let Some(id) = &event.id {
                    let thread = self.thread(thread);
                    self.flow_ends.push(FlowEnd {
                        category: event.cat.clone().unwrap_or_default(),
                        id: id.clone(),
                        name: event.name.clone().unwrap_or_default(),
                        phase: phase.clone(),
                        thread,
                        ts_ns: ts,
                    });
                }
            }
            _ => {}
        }
        let mut found = Vec::new();
        self.matcher
            .push(index, event, &mut |matched| found.push(matched));
        for matched in found {
            self.matched(matched);
        }
    }

    /// Keeps a pair, or a span left open at the end of the file.
    fn matched(&mut self, matched: Matched) {
        let (begin, end_ns, end_thread, nested) = match matched {
            Matched::Pair {
                begin,
                end_ts_ns,
                end_thread,
                nested,
                ..
            } => (begin, end_ts_ns, end_thread, nested),
            Matched::Mismatch(mismatch) => match *mismatch {
                Mismatch::Unclosed { begin } => (begin, None, None, true),
                Mismatch::AsyncUnclosed { begin } => (begin, None, None, false),
                _ => return,
            },
        };
        let Seen {
            index: order,
            thread: Some(thread),
            ts_ns: Some(start),
            name,
            ..
        } = begin
        else {
            return;
        };
        if end_ns.is_some_and(|end| end < start) {
            return;
        }
        let thread = self.thread(thread);
        let end_thread = end_thread.map(|end| self.thread(end));
        self.workflow.spans.push(Span {
            name: span_name(name.as_deref()),
            thread,
            start_ns: start,
            end_ns,
            nested,
            end_thread: if nested { None } else { end_thread },
            order,
        });
    }
}

fn span_name(name: Option<&str>) -> String {
    name.unwrap_or("(unnamed)").to_string()
}

/// Reads the trace `files` (each one process or many, as `merge` writes
/// them) into one workflow. With `fix_clocks`, hosts are shifted as `merge
/// --fix-clocks` shifts them; [`MergeError::Clocks`] when no shift
/// satisfies every cross-host flow.
pub fn load(files: &[PathBuf], fix_clocks: bool) -> Result<Workflow, MergeError> {
    let mut workflow = Workflow::default();
    let mut flow_ends = Vec::new();
    for path in files {
        let mut load = FileLoad {
            workflow: &mut workflow,
            flow_ends: &mut flow_ends,
            path,
            pids: HashMap::new(),
            threads: HashMap::new(),
            facts: HashMap::new(),
            matcher: Matcher::default(),
        };
        let mut index = 0;
        let info = stream_trace(path, |event| {
            load.event(index, &event);
            index += 1;
        })?;
        let matcher = std::mem::take(&mut load.matcher);
        let mut left = Vec::new();
        matcher.finish(&mut |found| left.push(found));
        for found in left {
            load.matched(found);
        }
        // Who each process is, through merge's rules.
        let mut order: Vec<(i64, usize)> = load.pids.iter().map(|(&p, &i)| (p, i)).collect();
        order.sort_by_key(|&(_, index)| index);
        let mut processes: Vec<Process> = order
            .iter()
            .map(|&(pid, index)| Process::new(path, pid, index as i64))
            .collect();
        let positions: HashMap<i64, usize> = order
            .iter()
            .enumerate()
            .map(|(position, &(pid, _))| (pid, position))
            .collect();
        identify(
            &mut processes,
            &positions,
            std::mem::take(&mut load.facts),
            path,
            &info,
        );
        for (process, &(_, index)) in processes.iter().zip(&order) {
            let info = &mut workflow.processes[index];
            info.host = process.host.clone();
            info.exe = process.exe.clone();
            info.rank = process.rank;
            info.name = process.display_name();
        }
        if info.truncated {
            workflow.truncated_files += 1;
        }
    }
    workflow.links = pair_flows(flow_ends.clone());
    for (index, span) in workflow.spans.iter().enumerate() {
        if let (false, Some(end_ns), Some(end_thread)) = (span.nested, span.end_ns, span.end_thread)
        {
            if end_thread != span.thread {
                workflow.links.push(Link {
                    kind: LinkKind::Async {
                        name: span.name.clone(),
                        span: index,
                    },
                    from_thread: span.thread,
                    from_ns: span.start_ns,
                    to_thread: end_thread,
                    to_ns: end_ns,
                });
            }
        }
    }
    if fix_clocks {
        shift_clocks(&mut workflow)?;
        let shift = thread_shifts(&workflow);
        for end in &mut flow_ends {
            end.ts_ns += shift[end.thread];
        }
        pair_again(&mut workflow, flow_ends);
    }
    Ok(workflow)
}

/// The clock shift of each thread's host, as [`shift_clocks`] made it.
fn thread_shifts(workflow: &Workflow) -> Vec<i64> {
    workflow
        .threads
        .iter()
        .map(|thread| {
            let host = &workflow.processes[thread.process].host;
            workflow
                .shifts
                .iter()
                .find(|shift| &shift.host == host)
                .map_or(0, |shift| shift.offset_ns)
        })
        .collect()
}

/// Pairs the flows again from `ends`, at the times after the clocks were
/// shifted: the order of departures or arrivals on different hosts can
/// change with the shift, and the trace `merge --fix-clocks` writes pairs
/// them at its shifted times. Other links stay.
fn pair_again(workflow: &mut Workflow, ends: Vec<FlowEnd>) {
    if workflow.shifts.is_empty() {
        return;
    }
    workflow
        .links
        .retain(|link| !matches!(link.kind, LinkKind::Flow { .. }));
    let mut links = pair_flows(ends);
    links.append(&mut workflow.links);
    workflow.links = links;
}

/// Why a workflow could not be loaded from a database.
#[derive(Debug)]
pub enum LoadError {
    /// The database cannot be opened or read.
    Db(DbError),
    /// No run, or no run of the name asked for, or several runs and no
    /// name.
    Run {
        path: PathBuf,
        wanted: Option<String>,
        runs: Vec<String>,
    },
    /// The hosts' clocks cannot be aligned.
    Merge(MergeError),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Db(error) => write!(f, "{error}"),
            LoadError::Merge(error) => write!(f, "{error}"),
            LoadError::Run { path, wanted, runs } => {
                let known = if runs.is_empty() {
                    "it holds no run".to_string()
                } else {
                    format!("its runs are {}", runs.join(", "))
                };
                match wanted {
                    Some(name) => write!(f, "{}: no run named {name}; {known}", path.display()),
                    None => write!(
                        f,
                        "{}: expected one run or --run NAME; {known}",
                        path.display()
                    ),
                }
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// Loads run `run` (or the database's only run) of the database at `db`
/// that `perfflow-trace db` wrote. The database keeps no end thread of an
/// asynchronous span and no flow name, so asynchronous spans link no
/// threads and flows are named by their category; a flow end outside
/// every span has no thread and is left out.
pub fn load_db(db: &Path, run: Option<&str>, fix_clocks: bool) -> Result<Workflow, LoadError> {
    let fail = |source| {
        LoadError::Db(DbError::Database {
            path: db.to_path_buf(),
            source,
        })
    };
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(fail)?;
    let runs: Vec<(i64, String)> = conn
        .prepare("SELECT id, name FROM run ORDER BY id")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
                .collect()
        })
        .map_err(fail)?;
    let chosen = match run {
        Some(name) => runs.iter().find(|(_, n)| n == name),
        None if runs.len() == 1 => runs.first(),
        None => None,
    };
    let Some(&(run_id, _)) = chosen else {
        return Err(LoadError::Run {
            path: db.to_path_buf(),
            wanted: run.map(String::from),
            runs: runs.into_iter().map(|(_, name)| name).collect(),
        });
    };
    let mut workflow = Workflow::default();
    read_db(&conn, run_id, &mut workflow).map_err(fail)?;
    if fix_clocks {
        shift_clocks(&mut workflow).map_err(LoadError::Merge)?;
        // The database's flow rows hold the paired ends (at shifted times
        // now); those are paired again.
        let ends: Vec<FlowEnd> = workflow
            .links
            .iter()
            .filter_map(|link| match &link.kind {
                LinkKind::Flow { name, category, id } => Some([
                    FlowEnd {
                        category: category.clone(),
                        id: id.clone(),
                        name: name.clone(),
                        phase: Phase::FlowStart,
                        thread: link.from_thread,
                        ts_ns: link.from_ns,
                    },
                    FlowEnd {
                        category: category.clone(),
                        id: id.clone(),
                        name: name.clone(),
                        phase: Phase::FlowEnd,
                        thread: link.to_thread,
                        ts_ns: link.to_ns,
                    },
                ]),
                _ => None,
            })
            .flatten()
            .collect();
        pair_again(&mut workflow, ends);
    }
    Ok(workflow)
}

fn read_db(conn: &Connection, run: i64, workflow: &mut Workflow) -> rusqlite::Result<()> {
    let mut processes: HashMap<i64, usize> = HashMap::new();
    let mut statement = conn.prepare(
        "SELECT p.id, p.host, p.pid, p.rank, p.exe, f.path,
                (SELECT MAX(COALESCE(s.end_ns, s.start_ns)) FROM span s WHERE s.process = p.id)
         FROM process p JOIN source_file f ON f.id = p.file
         WHERE p.run = ?1 AND p.monitor = 0 ORDER BY p.id",
    )?;
    let mut rows = statement.query([run])?;
    while let Some(row) = rows.next()? {
        let rank: Option<i64> = row.get(3)?;
        let file: String = row.get(5)?;
        let mut process = Process::new(Path::new(&file), row.get(2)?, row.get(0)?);
        process.host = row.get(1)?;
        process.exe = row.get(4)?;
        process.rank = rank.and_then(|rank| u64::try_from(rank).ok());
        processes.insert(row.get(0)?, workflow.processes.len());
        workflow.processes.push(ProcessInfo {
            name: process.display_name(),
            host: process.host,
            exe: process.exe,
            pid: process.pid,
            rank: process.rank,
            file: process.file,
            last_ns: row.get(6)?,
        });
    }
    let mut threads: HashMap<i64, usize> = HashMap::new();
    let mut statement = conn.prepare(
        "SELECT t.id, t.process, t.tid, t.name FROM thread t
         JOIN process p ON p.id = t.process WHERE p.run = ?1 ORDER BY t.id",
    )?;
    let mut rows = statement.query([run])?;
    while let Some(row) = rows.next()? {
        let Some(&process) = processes.get(&row.get::<_, i64>(1)?) else {
            continue;
        };
        threads.insert(row.get(0)?, workflow.threads.len());
        workflow.threads.push(ThreadInfo {
            process,
            tid: row.get(2)?,
            name: row.get(3)?,
        });
    }
    let mut statement = conn.prepare(
        "SELECT s.thread, s.name, s.start_ns, s.end_ns, s.depth IS NOT NULL, s.id FROM span s
         JOIN process p ON p.id = s.process
         WHERE p.run = ?1 AND s.thread IS NOT NULL AND s.start_ns IS NOT NULL ORDER BY s.id",
    )?;
    let mut rows = statement.query([run])?;
    while let Some(row) = rows.next()? {
        let Some(&thread) = threads.get(&row.get::<_, i64>(0)?) else {
            continue;
        };
        let name: Option<String> = row.get(1)?;
        workflow.spans.push(Span {
            name: span_name(name.as_deref()),
            thread,
            start_ns: row.get(2)?,
            end_ns: row.get(3)?,
            nested: row.get(4)?,
            end_thread: None,
            // Ids are given at the begin (B) or at the X event.
            order: row.get::<_, i64>(5)? as usize,
        });
    }
    let mut statement = conn.prepare(
        "SELECT f.category, f.flow_id, a.thread, f.from_ns, b.thread, f.to_ns FROM flow f
         JOIN span a ON a.id = f.from_span JOIN span b ON b.id = f.to_span
         WHERE f.run = ?1 AND f.from_ns IS NOT NULL AND f.to_ns IS NOT NULL
           AND a.thread IS NOT NULL AND b.thread IS NOT NULL ORDER BY f.id",
    )?;
    let mut rows = statement.query([run])?;
    while let Some(row) = rows.next()? {
        let (Some(&from_thread), Some(&to_thread)) = (
            threads.get(&row.get::<_, i64>(2)?),
            threads.get(&row.get::<_, i64>(4)?),
        ) else {
            continue;
        };
        let category: String = row.get(0)?;
        workflow.links.push(Link {
            kind: LinkKind::Flow {
                name: category.clone(),
                category,
                id: row.get(1)?,
            },
            from_thread,
            from_ns: row.get(3)?,
            to_thread,
            to_ns: row.get(5)?,
        });
    }
    let truncated: i64 = conn.query_row(
        "SELECT COUNT(*) FROM source_file WHERE run = ?1 AND truncated",
        [run],
        |row| row.get(0),
    )?;
    workflow.truncated_files = truncated as usize;
    Ok(())
}

/// Pairs flow ends per category and id: departures (`s`, `t`) and arrivals
/// (`t`, `f`), each in time order, the k-th with the k-th.
fn pair_flows(mut ends: Vec<FlowEnd>) -> Vec<Link> {
    ends.sort_by(|a, b| (&a.category, &a.id, a.ts_ns).cmp(&(&b.category, &b.id, b.ts_ns)));
    let mut links = Vec::new();
    let mut at = 0;
    while at < ends.len() {
        let group_end = ends[at..]
            .iter()
            .position(|end| end.category != ends[at].category || end.id != ends[at].id)
            .map_or(ends.len(), |len| at + len);
        let group = &ends[at..group_end];
        let departures = group.iter().filter(|e| e.phase != Phase::FlowEnd);
        let arrivals = group.iter().filter(|e| e.phase != Phase::FlowStart);
        for (from, to) in departures.zip(arrivals) {
            if std::ptr::eq(from, to) {
                continue;
            }
            links.push(Link {
                kind: LinkKind::Flow {
                    name: from.name.clone(),
                    category: from.category.clone(),
                    id: from.id.clone(),
                },
                from_thread: from.thread,
                from_ns: from.ts_ns,
                to_thread: to.thread,
                to_ns: to.ts_ns,
            });
        }
        at = group_end;
    }
    links
}

/// Shifts each host by the least offsets that make every cross-host flow
/// arrive at or after its departure, as `merge --fix-clocks` does.
fn shift_clocks(workflow: &mut Workflow) -> Result<(), MergeError> {
    let mut hosts: Vec<String> = workflow.processes.iter().map(|p| p.host.clone()).collect();
    hosts.sort();
    hosts.dedup();
    let host_of_process: Vec<usize> = workflow
        .processes
        .iter()
        .map(|p| hosts.binary_search(&p.host).unwrap_or(0))
        .collect();
    let host_of = |thread: usize| host_of_process[workflow.threads[thread].process];
    let cross: Vec<CrossFlow> = workflow
        .links
        .iter()
        .filter(|link| matches!(link.kind, LinkKind::Flow { .. }))
        .filter(|link| host_of(link.from_thread) != host_of(link.to_thread))
        .map(|link| CrossFlow {
            from: host_of(link.from_thread),
            to: host_of(link.to_thread),
            depart_ns: link.from_ns,
            arrive_ns: link.to_ns,
        })
        .collect();
    let offsets = solve_offsets(&hosts, &cross)?;
    if offsets.iter().all(|&offset| offset == 0) {
        return Ok(());
    }
    let thread_shift: Vec<i64> = workflow
        .threads
        .iter()
        .map(|thread| offsets[host_of_process[thread.process]])
        .collect();
    for span in &mut workflow.spans {
        let shift = thread_shift[span.thread];
        span.start_ns += shift;
        span.end_ns = span.end_ns.map(|end| end + shift);
    }
    for link in &mut workflow.links {
        link.from_ns += thread_shift[link.from_thread];
        link.to_ns += thread_shift[link.to_thread];
    }
    for (process, host) in workflow.processes.iter_mut().zip(&host_of_process) {
        process.last_ns = process.last_ns.map(|last| last + offsets[*host]);
    }
    workflow.shifts = hosts
        .into_iter()
        .zip(offsets)
        .filter(|&(_, offset)| offset != 0)
        .map(|(host, offset_ns)| ClockShift { host, offset_ns })
        .collect();
    Ok(())
}

/// The nested spans of each thread in nesting order: by start, then the
/// longer first (an open span counts as ending at `open_end(span)`), then
/// the one begun first. A span's parent is the nearest earlier span in this
/// order that is still open at its start, as `summary` nests them.
pub(crate) fn nesting_order(
    workflow: &Workflow,
    include: impl Fn(&Span) -> bool,
    open_end: impl Fn(&Span) -> i64,
) -> Vec<Vec<usize>> {
    let mut by_thread: Vec<Vec<usize>> = vec![Vec::new(); workflow.threads.len()];
    for (index, span) in workflow.spans.iter().enumerate() {
        if span.nested && include(span) {
            by_thread[span.thread].push(index);
        }
    }
    let end = |index: usize| {
        let span = &workflow.spans[index];
        span.end_ns.unwrap_or_else(|| open_end(span))
    };
    for spans in &mut by_thread {
        spans.sort_by(|&a, &b| {
            let (sa, sb) = (&workflow.spans[a], &workflow.spans[b]);
            sa.start_ns
                .cmp(&sb.start_ns)
                .then(end(b).cmp(&end(a)))
                .then(sa.order.cmp(&sb.order))
                .then(a.cmp(&b))
        });
    }
    by_thread
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(id: &str, phase: Phase, thread: usize, ts_ns: i64) -> FlowEnd {
        FlowEnd {
            category: "flow".to_string(),
            id: id.to_string(),
            name: "hop".to_string(),
            phase,
            thread,
            ts_ns,
        }
    }

    fn hops(links: &[Link]) -> Vec<(usize, i64, usize, i64)> {
        links
            .iter()
            .map(|l| (l.from_thread, l.from_ns, l.to_thread, l.to_ns))
            .collect()
    }

    #[test]
    fn a_flow_through_a_step_is_two_links() {
        let links = pair_flows(vec![
            end("1", Phase::FlowEnd, 2, 30),
            end("1", Phase::FlowStart, 0, 10),
            end("1", Phase::FlowStep, 1, 20),
        ]);
        assert_eq!(hops(&links), [(0, 10, 1, 20), (1, 20, 2, 30)]);
    }

    #[test]
    fn ends_of_one_id_pair_in_time_order_and_ids_stay_apart() {
        let links = pair_flows(vec![
            end("7", Phase::FlowStart, 0, 10),
            end("7", Phase::FlowStart, 0, 40),
            end("8", Phase::FlowStart, 3, 15),
            end("7", Phase::FlowEnd, 1, 50),
            end("7", Phase::FlowEnd, 2, 20),
            end("8", Phase::FlowEnd, 4, 16),
        ]);
        assert_eq!(
            hops(&links),
            [(0, 10, 2, 20), (0, 40, 1, 50), (3, 15, 4, 16)]
        );
    }
}

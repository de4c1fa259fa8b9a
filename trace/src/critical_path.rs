//! The critical path of a workflow: the chain of spans, across threads,
//! processes and hosts, that determines when the workflow ends.
//!
//! The walk goes backward from the end of the span that ends last. On a
//! thread it passes through the innermost span open at each moment. A link
//! into the thread (a flow's arrival, or the end of an asynchronous span
//! begun on another thread) is a second predecessor of the point where it
//! arrives: the walk follows it when its departure is at or after the
//! thread's previous span boundary (begin or end), that is when the
//! departure is the latest-finishing of the two predecessors, and
//! otherwise stays on the thread. At a thread's first span boundary, with
//! no link to follow, the walk goes on at the latest span end on any
//! thread before it (an inferred link, marked as such), or stops when
//! there is none. `docs/critical-path.md` describes the rules and their
//! assumptions.
//!
//! The walk keeps a fixed-size record per step ([`CompactPath`]), which
//! prints the path a step at a time: a step's name, stack and place are
//! made when it is shown. [`CriticalPath`] is the same path as plain data,
//! every step made; [`CriticalPath::to_csv`], its `Display` (a table) and
//! serde give its outputs, and [`write_track`] adds it to a merged trace as
//! a track of its own. Both print the same text.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::fs::OpenOptions;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use serde_json::json;

use crate::model::{nesting_order, ClockShift, LinkKind, Workflow};
use crate::summary::{micros, write_rows, write_table};

/// What a step of the path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// Time in a span: the innermost span open on the thread.
    Span,
    /// Time on a thread with no span open.
    Idle,
    /// From a flow's departure to its arrival on another thread.
    Flow,
    /// An asynchronous span begun on one thread and ended on another.
    Async,
    /// From the latest span end before a thread's first span, with no
    /// flow to say what started it.
    Inferred,
}

impl StepKind {
    /// Whether the step is time spent waiting rather than in a span.
    pub fn is_waiting(self) -> bool {
        self != StepKind::Span
    }

    fn label(self) -> &'static str {
        match self {
            StepKind::Span => "span",
            StepKind::Idle => "idle",
            StepKind::Flow => "flow",
            StepKind::Async => "async",
            StepKind::Inferred => "inferred",
        }
    }
}

/// Where a step is: a thread of a process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Place {
    /// The process's name, `host · exe [pid]` (plus ` rank N`).
    pub process: Arc<str>,
    pub host: Arc<str>,
    pub pid: i64,
    pub tid: i64,
}

/// One step of the critical path, in time order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    pub kind: StepKind,
    /// The span's name; for a link, the flow's or asynchronous span's name.
    pub name: Arc<str>,
    /// For a span, the names of the spans open around it on its thread,
    /// outermost first, ending with its own. Deeper than
    /// [`STACK_OUTER`] + [`STACK_INNER`] spans (deep recursion), the
    /// outermost and the innermost of them, with one `… N more` between.
    pub stack: Vec<Arc<str>>,
    /// Where the step is (for a link, where it arrives).
    pub place: Place,
    /// For a link, where it departs.
    pub from: Option<Place>,
    /// The step's time on the path.
    pub start_ns: i64,
    pub end_ns: i64,
    pub duration_ns: i64,
    /// For a span, its whole extent (it may be on the path only in part).
    pub span_start_ns: Option<i64>,
    pub span_end_ns: Option<i64>,
    /// A span still open when its trace ended; its end is taken as the
    /// last time its process shows.
    pub open: bool,
}

/// The time one span name spends on the path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NameOnPath {
    pub name: String,
    /// Time on the path as the innermost span.
    pub on_path_ns: i64,
    /// Steps with this name.
    pub steps: usize,
}

/// The critical path of a workflow.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CriticalPath {
    /// When the path starts and ends (the end is the last span end).
    pub start_ns: Option<i64>,
    pub end_ns: Option<i64>,
    pub total_ns: i64,
    /// Time in spans and time waiting (idle, flows, asynchronous spans,
    /// inferred links); they add up to `total_ns`.
    pub in_spans_ns: i64,
    pub waiting_ns: i64,
    pub steps: Vec<Step>,
    /// Span names by decreasing time on the path.
    pub by_name: Vec<NameOnPath>,
    /// Links followed that arrive before they depart (clock skew between
    /// hosts); the walk goes on from the arrival's time.
    pub skewed_links: usize,
    /// Host clock shifts applied before the walk.
    pub clock_shifts: Vec<ClockShift>,
}

/// No span, link or thread, in the compact records below.
const NONE: u32 = u32::MAX;

/// Of a stack deeper than both together, the outermost and the innermost
/// names a step shows (see [`Step::stack`]).
pub const STACK_OUTER: usize = 4;
pub const STACK_INNER: usize = 12;

/// An index as a compact record holds it.
fn index32(index: usize) -> u32 {
    u32::try_from(index).expect("fewer than 2^32 spans, links and threads")
}

fn index_of(index: u32) -> Option<usize> {
    (index != NONE).then_some(index as usize)
}

/// The spans of one thread as a sequence of intervals, each with the
/// innermost span open over it.
#[derive(Debug, Default)]
struct Timeline {
    /// Distinct span boundary times, ascending.
    times: Vec<i64>,
    /// `inner[k]`: the innermost span over `[times[k], times[k + 1])`, or
    /// [`NONE`].
    inner: Vec<u32>,
}

impl Timeline {
    /// The latest boundary strictly before `at`.
    fn before(&self, at: i64) -> Option<i64> {
        let k = self.times.partition_point(|&t| t < at);
        k.checked_sub(1).map(|k| self.times[k])
    }

    /// The pieces of `[from, to)` with their innermost span, latest first.
    fn pieces(&self, from: i64, to: i64, mut out: impl FnMut(i64, i64, u32)) {
        let mut end = to;
        while end > from {
            let k = self.times.partition_point(|&t| t < end);
            // The interval that holds the instant just before `end`.
            let (start, inner) = match k.checked_sub(1) {
                Some(k) => (self.times[k].max(from), self.inner[k]),
                None => (from, NONE),
            };
            out(start, end, inner);
            end = start;
        }
    }
}

/// One step of the path as the walk finds it: 32 bytes, no text. Names,
/// stacks and places are looked up when the step is shown.
#[derive(Debug, Clone, Copy)]
struct Record {
    kind: StepKind,
    /// A thread step's thread; an inferred link's arrival thread.
    thread: u32,
    /// An inferred link's departure thread.
    from: u32,
    /// A span step's span; a flow or async step's link.
    what: u32,
    start: i64,
    end: i64,
}

/// The totals of a path, without its steps.
#[derive(Debug, Clone, Default)]
struct Totals {
    start_ns: Option<i64>,
    end_ns: Option<i64>,
    total_ns: i64,
    in_spans_ns: i64,
    waiting_ns: i64,
    by_name: Vec<NameOnPath>,
    skewed_links: usize,
    clock_shifts: Vec<ClockShift>,
}

/// The critical path of a workflow with its steps kept compact: a record
/// of 32 bytes per step and a parent per span, the names, stacks and
/// places of a step made only when it is shown. It prints as
/// [`CriticalPath`] prints, a step at a time: its memory is that of the
/// workflow plus about 60 bytes per span and 32 per step, where a
/// [`CriticalPath`] holds every step's stack of names.
pub struct CompactPath<'w> {
    workflow: &'w Workflow,
    /// Each span's parent on its thread, or [`NONE`].
    parent: Vec<u32>,
    /// Each span's depth on its thread (0: no parent), and its ancestor
    /// at depth [`STACK_OUTER`] - 1 (itself when not that deep), where
    /// the outermost names of a deep stack begin.
    depth: Vec<u32>,
    anchor: Vec<u32>,
    records: Vec<Record>,
    places: Vec<Place>,
    totals: Totals,
}

impl<'w> CompactPath<'w> {
    /// Finds the critical path of `workflow` (see the module's
    /// description).
    pub fn new(workflow: &'w Workflow) -> CompactPath<'w> {
        let spans = &workflow.spans;
        let places: Vec<Place> = workflow
            .threads
            .iter()
            .map(|thread| {
                let process = &workflow.processes[thread.process];
                Place {
                    process: Arc::from(process.name.as_str()),
                    host: Arc::from(process.host.as_str()),
                    pid: process.pid,
                    tid: thread.tid,
                }
            })
            .collect();
        let mut path = CompactPath {
            workflow,
            parent: vec![NONE; spans.len()],
            depth: vec![0; spans.len()],
            anchor: vec![NONE; spans.len()],
            records: Vec::new(),
            places,
            totals: Totals {
                clock_shifts: workflow.shifts.clone(),
                ..Totals::default()
            },
        };

        // 1. Each thread's timeline, and each span's parent.
        let order = nesting_order(workflow, |_| true, |span| path.open_end(span));
        let mut timelines: Vec<Timeline> = Vec::with_capacity(order.len());
        for thread_spans in order {
            let mut stack: Vec<usize> = Vec::new();
            for &span in &thread_spans {
                while stack
                    .last()
                    .is_some_and(|&top| path.end_of(top) <= spans[span].start_ns)
                {
                    stack.pop();
                }
                path.parent[span] = stack.last().map_or(NONE, |&p| index32(p));
                path.depth[span] = index32(stack.len());
                path.anchor[span] = index32(stack.get(STACK_OUTER - 1).copied().unwrap_or(span));
                stack.push(span);
            }
            timelines.push(timeline(&thread_spans, spans, &|span| path.end_of(span)));
        }

        // 2. Links by the thread they arrive on, by arrival time.
        let mut arrivals: Vec<Vec<u32>> = vec![Vec::new(); workflow.threads.len()];
        for (index, link) in workflow.links.iter().enumerate() {
            arrivals[link.to_thread].push(index32(index));
        }
        for links in &mut arrivals {
            links.sort_by_key(|&link| (workflow.links[link as usize].to_ns, link));
        }
        // Span ends on every thread, for inferred links.
        let mut ends: Vec<(i64, u32)> = spans
            .iter()
            .enumerate()
            .filter(|(_, span)| span.nested)
            .map(|(index, span)| (path.end_of(index), index32(span.thread)))
            .collect();
        ends.sort_unstable();

        // 3. The start: the end of the span that ends last.
        let last = spans
            .iter()
            .enumerate()
            .map(|(index, span)| {
                let thread = if span.nested {
                    span.thread
                } else {
                    span.end_thread.unwrap_or(span.thread)
                };
                let end = path.end_of(index);
                (end, end - span.start_ns, thread)
            })
            .max_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)));
        let Some((end, _, mut thread)) = last else {
            return path;
        };

        // 4. The walk, backward; a run of one span on a thread is one step.
        let mut records: Vec<Record> = Vec::new();
        // The thread and span of the latest thread step since a link.
        let mut run: Option<(u32, u32)> = None;
        let mut used = vec![false; workflow.links.len()];
        let mut skewed = 0;
        let mut at = end;
        loop {
            let line = &timelines[thread];
            let first = line.times.first().map_or(at, |&t| t.min(at));
            // The latest link into this thread, at or before `at`, that is
            // the latest-finishing predecessor of its arrival.
            let into = &arrivals[thread];
            let arrived = into.partition_point(|&link| workflow.links[link as usize].to_ns <= at);
            let follow = into[..arrived]
                .iter()
                .rev()
                .map(|&link| link as usize)
                .filter(|&link| !used[link])
                .find(|&link| {
                    let link = &workflow.links[link];
                    line.before(link.to_ns)
                        .is_none_or(|local| link.from_ns >= local)
                });
            let stop = follow.map_or(first, |link| workflow.links[link].to_ns);
            let on = index32(thread);
            line.pieces(stop, at, |start, end, span| {
                if end <= start {
                    return;
                }
                if run == Some((on, span)) {
                    if let Some(step) = records.last_mut().filter(|step| step.start == end) {
                        step.start = start;
                        return;
                    }
                }
                run = Some((on, span));
                let kind = if span == NONE {
                    StepKind::Idle
                } else {
                    StepKind::Span
                };
                records.push(Record {
                    kind,
                    thread: on,
                    from: NONE,
                    what: span,
                    start,
                    end,
                });
            });
            if let Some(link) = follow {
                used[link] = true;
                let l = &workflow.links[link];
                if l.from_ns > l.to_ns {
                    skewed += 1;
                }
                let start = l.from_ns.min(l.to_ns);
                run = None;
                let kind = match &l.kind {
                    LinkKind::Flow { .. } => StepKind::Flow,
                    LinkKind::Async { .. } => StepKind::Async,
                };
                records.push(Record {
                    kind,
                    thread: index32(l.to_thread),
                    from: index32(l.from_thread),
                    what: index32(link),
                    start,
                    end: l.to_ns,
                });
                thread = l.from_thread;
                at = start;
                continue;
            }
            // No link: the latest span end on another thread before `first`.
            let k = ends.partition_point(|&(end, _)| end < first);
            let Some(&(end, from)) = k.checked_sub(1).map(|k| &ends[k]) else {
                break;
            };
            run = None;
            records.push(Record {
                kind: StepKind::Inferred,
                thread: index32(thread),
                from,
                what: NONE,
                start: end,
                end: first,
            });
            thread = from as usize;
            at = end;
        }
        records.reverse();
        drop(timelines);

        // 5. Totals.
        let totals = &mut path.totals;
        let mut by_name: HashMap<&str, (i64, usize)> = HashMap::new();
        for step in &records {
            let duration = step.end - step.start;
            if step.kind.is_waiting() {
                totals.waiting_ns += duration;
            } else {
                totals.in_spans_ns += duration;
                let name = spans[step.what as usize].name.as_str();
                let entry = by_name.entry(name).or_default();
                entry.0 += duration;
                entry.1 += 1;
            }
        }
        totals.by_name = by_name
            .into_iter()
            .map(|(name, (on_path_ns, steps))| NameOnPath {
                name: name.to_string(),
                on_path_ns,
                steps,
            })
            .collect();
        totals
            .by_name
            .sort_by(|a, b| b.on_path_ns.cmp(&a.on_path_ns).then(a.name.cmp(&b.name)));
        let start_ns = records.first().map_or(end, |step| step.start);
        totals.start_ns = Some(start_ns);
        totals.end_ns = Some(end);
        totals.total_ns = end - start_ns;
        totals.skewed_links = skewed;
        path.records = records;
        path
    }

    /// The time taken as the end of `span`, open when its trace ended:
    /// the last time its process shows.
    fn open_end(&self, span: &crate::model::Span) -> i64 {
        let process = self.workflow.threads[span.thread].process;
        self.workflow.processes[process]
            .last_ns
            .unwrap_or(span.start_ns)
            .max(span.start_ns)
    }

    fn end_of(&self, index: usize) -> i64 {
        let span = &self.workflow.spans[index];
        span.end_ns.unwrap_or_else(|| self.open_end(span))
    }

    /// The number of steps.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether the path has no step.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The names on `span`'s stack, outermost first (see [`Step::stack`]):
    /// a walk of at most [`STACK_OUTER`] + [`STACK_INNER`] parents,
    /// whatever the depth.
    fn stack_of(&self, span: usize, name: &mut dyn FnMut(usize) -> Arc<str>) -> Vec<Arc<str>> {
        let names_up = |from: usize, most: usize, name: &mut dyn FnMut(usize) -> Arc<str>| {
            let mut names = Vec::new();
            let mut at = Some(from);
            while let Some(s) = at.filter(|_| names.len() < most) {
                names.push(name(s));
                at = index_of(self.parent[s]);
            }
            names.reverse();
            names
        };
        let depth = self.depth[span] as usize + 1;
        if depth <= STACK_OUTER + STACK_INNER {
            return names_up(span, depth, name);
        }
        let mut stack = names_up(self.anchor[span] as usize, STACK_OUTER, name);
        let elided = depth - STACK_OUTER - STACK_INNER;
        stack.push(Arc::from(format!("… {elided} more")));
        stack.extend(names_up(span, STACK_INNER, name));
        stack
    }

    /// Step `index` as [`CriticalPath::steps`] holds it; `name` gives a
    /// span's name.
    fn step_with(&self, index: usize, name: &mut dyn FnMut(usize) -> Arc<str>) -> Step {
        let record = self.records[index];
        let place = |thread: u32| self.places[thread as usize].clone();
        let spans = &self.workflow.spans;
        let (start, end) = (record.start, record.end);
        match record.kind {
            StepKind::Span | StepKind::Idle => {
                let mut step =
                    Step::new(StepKind::Idle, "(idle)", place(record.thread), start, end);
                if let Some(span) = index_of(record.what) {
                    let stack = self.stack_of(span, name);
                    step.kind = StepKind::Span;
                    step.name = stack.last().cloned().unwrap_or_default();
                    step.stack = stack;
                    step.span_start_ns = Some(spans[span].start_ns);
                    step.span_end_ns = Some(self.end_of(span));
                    step.open = spans[span].end_ns.is_none();
                }
                step
            }
            StepKind::Flow | StepKind::Async => {
                let link = &self.workflow.links[record.what as usize];
                let extent = match &link.kind {
                    LinkKind::Flow { .. } => None,
                    LinkKind::Async { span, .. } => Some(*span),
                };
                let mut step = Step::new(
                    record.kind,
                    link.kind.name(),
                    place(index32(link.to_thread)),
                    start,
                    end,
                );
                step.from = Some(place(index32(link.from_thread)));
                step.span_start_ns = extent.map(|span| spans[span].start_ns);
                step.span_end_ns = extent.map(|span| self.end_of(span));
                step
            }
            StepKind::Inferred => {
                let mut step = Step::new(
                    StepKind::Inferred,
                    "(no link)",
                    place(record.thread),
                    start,
                    end,
                );
                step.from = Some(place(record.from));
                step
            }
        }
    }

    /// Every step made, names shared between them: the path as plain
    /// data.
    pub fn into_path(self) -> CriticalPath {
        let mut names: HashMap<&str, Arc<str>> = HashMap::new();
        let spans = &self.workflow.spans;
        let mut name = |span: usize| -> Arc<str> {
            let text = spans[span].name.as_str();
            names.entry(text).or_insert_with(|| Arc::from(text)).clone()
        };
        let steps = (0..self.len())
            .map(|index| self.step_with(index, &mut name))
            .collect();
        let totals = self.totals;
        CriticalPath {
            start_ns: totals.start_ns,
            end_ns: totals.end_ns,
            total_ns: totals.total_ns,
            in_spans_ns: totals.in_spans_ns,
            waiting_ns: totals.waiting_ns,
            steps,
            by_name: totals.by_name,
            skewed_links: totals.skewed_links,
            clock_shifts: totals.clock_shifts,
        }
    }

    /// Prints the path as [`CriticalPath`]'s `Display` does.
    pub fn write_table(&self, out: &mut dyn Write) -> std::io::Result<()> {
        write!(out, "{}", Table(self))
    }

    /// Prints the path as [`CriticalPath::to_csv`] does.
    pub fn write_csv(&self, out: &mut dyn Write) -> std::io::Result<()> {
        write_csv(self, out)
    }

    /// Prints the path as `serde_json::to_writer_pretty` prints a
    /// [`CriticalPath`], and a line break.
    pub fn write_json(&self, out: &mut dyn Write) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, &Json(self))?;
        writeln!(out)
    }

    /// Appends the path as a track to the merged trace at `trace`, as
    /// [`write_track`] does.
    pub fn write_track(&self, trace: &Path, pid: i64) -> std::io::Result<()> {
        append_track(trace, self, pid)
    }
}

/// Finds the critical path of `workflow` (see the module's description).
pub fn critical_path(workflow: &Workflow) -> CriticalPath {
    CompactPath::new(workflow).into_path()
}

/// What the outputs read of a path: its totals and its steps one at a
/// time.
trait PathView {
    fn totals(&self) -> Totals;
    fn steps(&self) -> usize;
    fn step(&self, index: usize) -> Cow<'_, Step>;
}

impl PathView for CriticalPath {
    fn totals(&self) -> Totals {
        Totals {
            start_ns: self.start_ns,
            end_ns: self.end_ns,
            total_ns: self.total_ns,
            in_spans_ns: self.in_spans_ns,
            waiting_ns: self.waiting_ns,
            by_name: self.by_name.clone(),
            skewed_links: self.skewed_links,
            clock_shifts: self.clock_shifts.clone(),
        }
    }
    fn steps(&self) -> usize {
        self.steps.len()
    }
    fn step(&self, index: usize) -> Cow<'_, Step> {
        Cow::Borrowed(&self.steps[index])
    }
}

impl PathView for CompactPath<'_> {
    fn totals(&self) -> Totals {
        self.totals.clone()
    }
    fn steps(&self) -> usize {
        self.len()
    }
    fn step(&self, index: usize) -> Cow<'_, Step> {
        let spans = &self.workflow.spans;
        let mut name = |span: usize| Arc::from(spans[span].name.as_str());
        Cow::Owned(self.step_with(index, &mut name))
    }
}

/// The timeline of one thread's spans, given in nesting order.
fn timeline(
    thread_spans: &[usize],
    spans: &[crate::model::Span],
    end_of: &impl Fn(usize) -> i64,
) -> Timeline {
    // (time, what: 0 end, 1 begin, rank in nesting order)
    let mut edges: Vec<(i64, u8, u32)> = Vec::with_capacity(2 * thread_spans.len());
    for (rank, &span) in thread_spans.iter().enumerate() {
        let (start, end) = (spans[span].start_ns, end_of(span));
        let rank = index32(rank);
        if end > start {
            edges.push((start, 1, rank));
            edges.push((end, 0, rank));
        } else {
            // A span of no duration covers no time but is a boundary.
            edges.push((start, 2, rank));
        }
    }
    edges.sort_unstable();
    let mut line = Timeline::default();
    let mut open: BTreeSet<u32> = BTreeSet::new();
    let mut k = 0;
    while k < edges.len() {
        let time = edges[k].0;
        while k < edges.len() && edges[k].0 == time {
            let (_, what, rank) = edges[k];
            match what {
                0 => {
                    open.remove(&rank);
                }
                1 => {
                    open.insert(rank);
                }
                _ => {}
            }
            k += 1;
        }
        line.times.push(time);
        line.inner.push(
            open.last()
                .map_or(NONE, |&rank| index32(thread_spans[rank as usize])),
        );
    }
    line.times.shrink_to_fit();
    line.inner.shrink_to_fit();
    line
}

fn percent(part: i64, whole: i64) -> String {
    if whole <= 0 {
        return "-".to_string();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

impl Place {
    fn label(&self) -> String {
        format!("{} tid {}", self.process, self.tid)
    }
}

impl Step {
    /// A step from `start` to `end` with nothing more known.
    fn new(kind: StepKind, name: &str, place: Place, start: i64, end: i64) -> Step {
        Step {
            kind,
            name: Arc::from(name),
            stack: Vec::new(),
            place,
            from: None,
            start_ns: start,
            end_ns: end,
            duration_ns: end - start,
            span_start_ns: None,
            span_end_ns: None,
            open: false,
        }
    }

    /// What the table and CSV show as the step's name: a span's stack, a
    /// link's kind and name.
    fn shown_name(&self) -> String {
        match self.kind {
            StepKind::Span => self.stack.join(" > "),
            _ => self.name.to_string(),
        }
    }

    fn shown_place(&self) -> String {
        match &self.from {
            Some(from) => format!("{} -> {}", from.label(), self.place.label()),
            None => self.place.label(),
        }
    }
}

impl CriticalPath {
    /// One line per step: times in nanoseconds, from the epoch.
    pub fn to_csv(&self) -> String {
        let mut out = Vec::new();
        write_csv(self, &mut out).expect("writing to memory");
        String::from_utf8(out).expect("UTF-8 fields")
    }
}

/// Writes one CSV line per step of `path`, after a header line.
fn write_csv(path: &impl PathView, out: &mut dyn Write) -> std::io::Result<()> {
    out.write_all(
        b"kind,name,stack,process,host,pid,tid,from_process,from_tid,start_ns,end_ns,duration_ns,open\n",
    )?;
    for index in 0..path.steps() {
        let step = path.step(index);
        let fields = [
            step.kind.label().to_string(),
            step.name.to_string(),
            step.stack.join(" > "),
            step.place.process.to_string(),
            step.place.host.to_string(),
            step.place.pid.to_string(),
            step.place.tid.to_string(),
            step.from
                .as_ref()
                .map(|f| f.process.to_string())
                .unwrap_or_default(),
            step.from
                .as_ref()
                .map(|f| f.tid.to_string())
                .unwrap_or_default(),
            step.start_ns.to_string(),
            step.end_ns.to_string(),
            step.duration_ns.to_string(),
            step.open.to_string(),
        ];
        let quoted: Vec<String> = fields.iter().map(|field| csv_field(field)).collect();
        out.write_all(quoted.join(",").as_bytes())?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// A path serialised as serde serialises [`CriticalPath`], its steps made
/// one at a time.
struct Json<'a, V>(&'a V);

/// The steps of a path as a sequence.
struct JsonSteps<'a, V>(&'a V);

impl<V: PathView> Serialize for JsonSteps<'_, V> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((0..self.0.steps()).map(|index| self.0.step(index)))
    }
}

impl<V: PathView> Serialize for Json<'_, V> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let totals = self.0.totals();
        let mut out = serializer.serialize_struct("CriticalPath", 9)?;
        out.serialize_field("start_ns", &totals.start_ns)?;
        out.serialize_field("end_ns", &totals.end_ns)?;
        out.serialize_field("total_ns", &totals.total_ns)?;
        out.serialize_field("in_spans_ns", &totals.in_spans_ns)?;
        out.serialize_field("waiting_ns", &totals.waiting_ns)?;
        out.serialize_field("steps", &JsonSteps(self.0))?;
        out.serialize_field("by_name", &totals.by_name)?;
        out.serialize_field("skewed_links", &totals.skewed_links)?;
        out.serialize_field("clock_shifts", &totals.clock_shifts)?;
        out.end()
    }
}

/// A CSV field, quoted when it holds a comma, quote or line break.
pub(crate) fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

impl fmt::Display for CriticalPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Table(self).fmt(f)
    }
}

/// A path as a table: its totals, a row per step and the time per name.
struct Table<'a, V>(&'a V);

impl<V: PathView> fmt::Display for Table<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.0;
        let totals = path.totals();
        let Some(start) = totals.start_ns else {
            return writeln!(f, "no spans: no critical path");
        };
        writeln!(
            f,
            "critical path: {} us, {} us in spans ({}), {} us waiting ({}), {} steps",
            micros(totals.total_ns),
            micros(totals.in_spans_ns),
            percent(totals.in_spans_ns, totals.total_ns),
            micros(totals.waiting_ns),
            percent(totals.waiting_ns, totals.total_ns),
            path.steps()
        )?;
        for shift in &totals.clock_shifts {
            writeln!(
                f,
                "note: clock of {} shifted by {} us",
                shift.host,
                micros(shift.offset_ns)
            )?;
        }
        if totals.skewed_links > 0 {
            writeln!(
                f,
                "note: {} link{} on the path arrive{} before departing (clock skew; try --fix-clocks)",
                totals.skewed_links,
                if totals.skewed_links == 1 { "" } else { "s" },
                if totals.skewed_links == 1 { "s" } else { "" },
            )?;
        }
        writeln!(f)?;
        let row = |index: usize| {
            let step = path.step(index);
            let mut name = step.shown_name();
            if step.open {
                name.push_str(" (open)");
            }
            vec![
                micros(step.start_ns - start),
                micros(step.duration_ns),
                step.kind.label().to_string(),
                name,
                step.shown_place(),
            ]
        };
        write_rows(
            f,
            &["at (us)", "on path (us)", "kind", "step", "where"],
            &[true, true, false, false, false],
            path.steps(),
            row,
        )?;
        if !totals.by_name.is_empty() {
            writeln!(f)?;
            let rows: Vec<Vec<String>> = totals
                .by_name
                .iter()
                .map(|entry| {
                    vec![
                        entry.name.clone(),
                        micros(entry.on_path_ns),
                        percent(entry.on_path_ns, totals.total_ns),
                        entry.steps.to_string(),
                    ]
                })
                .collect();
            write_table(
                f,
                &["span", "on path (us)", "share", "steps"],
                &[false, true, true, true],
                &rows,
            )?;
        }
        Ok(())
    }
}

/// The events that show `path` as a track of its own, process `pid`
/// named "critical path" and sorted first: one complete (`X`) event per
/// step, named after it, with its kind and place in `args`. Each is one
/// JSON object's text, its times written to the nanosecond (an `f64` of
/// microseconds since the epoch is coarser).
pub fn track_events(path: &CriticalPath, pid: i64) -> Vec<String> {
    let mut events = Vec::new();
    track_lines(path, pid, &mut |event| {
        events.push(event);
        Ok(())
    })
    .expect("collecting in memory");
    events
}

/// Hands the events of [`track_events`] to `each`, one at a time.
fn track_lines(
    path: &impl PathView,
    pid: i64,
    each: &mut dyn FnMut(String) -> std::io::Result<()>,
) -> std::io::Result<()> {
    for (name, args) in [
        ("process_name", json!({"name": "critical path"})),
        ("process_sort_index", json!({"sort_index": -1})),
        ("thread_name", json!({"name": "critical path"})),
    ] {
        each(json!({"name": name, "ph": "M", "pid": pid, "tid": pid, "args": args}).to_string())?;
    }
    for index in 0..path.steps() {
        let step = path.step(index);
        let name = match step.kind {
            StepKind::Span => step.name.to_string(),
            StepKind::Idle | StepKind::Inferred => format!("wait: {}", step.kind.label()),
            StepKind::Flow | StepKind::Async => {
                format!("wait: {} {}", step.kind.label(), step.name)
            }
        };
        let mut args = json!({
            "kind": step.kind.label(),
            "where": step.shown_place(),
        });
        if step.kind == StepKind::Span {
            args["stack"] = json!(step.stack.join(" > "));
        }
        let event = json!({
            "name": name,
            "cat": "critical_path",
            "ph": "X",
            "pid": pid,
            "tid": pid,
            "args": args,
        })
        .to_string();
        // `{` then the times, then the other members.
        each(format!(
            "{{\"ts\":{},\"dur\":{},{}",
            micros(step.start_ns),
            micros(step.duration_ns),
            &event[1..]
        ))?;
    }
    Ok(())
}

/// Appends `path` as a track (see [`track_events`]) to the Chrome JSON
/// array at `trace`, which must end as `merge` ends it (`\n]\n`); `pid`
/// must be free in it.
pub fn write_track(trace: &Path, path: &CriticalPath, pid: i64) -> std::io::Result<()> {
    append_track(trace, path, pid)
}

/// [`write_track`] of any path, its events written one at a time.
fn append_track(trace: &Path, path: &impl PathView, pid: i64) -> std::io::Result<()> {
    let mut file = OpenOptions::new().read(true).write(true).open(trace)?;
    let length = file.seek(SeekFrom::End(0))?;
    let tail_at = length.saturating_sub(3);
    file.seek(SeekFrom::Start(tail_at))?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail)?;
    if tail != b"\n]\n" {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{}: expected a trace ending in \"]\" as merge writes it",
                trace.display()
            ),
        ));
    }
    file.set_len(tail_at)?;
    file.seek(SeekFrom::Start(tail_at))?;
    let mut out = BufWriter::new(file);
    track_lines(path, pid, &mut |event| {
        out.write_all(b",\n")?;
        out.write_all(event.as_bytes())
    })?;
    out.write_all(b"\n]\n")?;
    out.flush()
}

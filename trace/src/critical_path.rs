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
//! The result is plain data ([`CriticalPath`]); [`CriticalPath::to_csv`],
//! its `Display` (a table) and serde give its outputs, and
//! [`write_track`] adds it to a merged trace as a track of its own.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
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
    /// outermost first, ending with its own.
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

/// The spans of one thread as a sequence of intervals, each with the
/// innermost span open over it.
#[derive(Debug, Default)]
struct Timeline {
    /// Distinct span boundary times, ascending.
    times: Vec<i64>,
    /// `inner[k]`: the innermost span over `[times[k], times[k + 1])`.
    inner: Vec<Option<usize>>,
}

impl Timeline {
    /// The latest boundary strictly before `at`.
    fn before(&self, at: i64) -> Option<i64> {
        let k = self.times.partition_point(|&t| t < at);
        k.checked_sub(1).map(|k| self.times[k])
    }

    /// The pieces of `[from, to)` with their innermost span, latest first.
    fn pieces(&self, from: i64, to: i64, out: &mut Vec<(i64, i64, Option<usize>)>) {
        let mut end = to;
        while end > from {
            let k = self.times.partition_point(|&t| t < end);
            // The interval that holds the instant just before `end`.
            let (start, inner) = match k.checked_sub(1) {
                Some(k) => (self.times[k].max(from), self.inner[k]),
                None => (from, None),
            };
            out.push((start, end, inner));
            end = start;
        }
    }
}

/// What the walk collects, latest first.
enum Piece {
    Thread {
        thread: usize,
        start: i64,
        end: i64,
        span: Option<usize>,
    },
    Link {
        link: usize,
        start: i64,
        end: i64,
    },
    Inferred {
        from: usize,
        to: usize,
        start: i64,
        end: i64,
    },
}

/// Finds the critical path of `workflow` (see the module's description).
pub fn critical_path(workflow: &Workflow) -> CriticalPath {
    let spans = &workflow.spans;
    let open_end = |span: &crate::model::Span| {
        let process = workflow.threads[span.thread].process;
        workflow.processes[process]
            .last_ns
            .unwrap_or(span.start_ns)
            .max(span.start_ns)
    };
    let end_of = |index: usize| {
        spans[index]
            .end_ns
            .unwrap_or_else(|| open_end(&spans[index]))
    };

    // 1. Each thread's timeline, and each span's parent.
    let order = nesting_order(workflow, |_| true, open_end);
    let mut parent: Vec<Option<usize>> = vec![None; spans.len()];
    let timelines: Vec<Timeline> = order
        .iter()
        .map(|thread_spans| {
            let mut stack: Vec<usize> = Vec::new();
            for &span in thread_spans {
                while stack
                    .last()
                    .is_some_and(|&top| end_of(top) <= spans[span].start_ns)
                {
                    stack.pop();
                }
                parent[span] = stack.last().copied();
                stack.push(span);
            }
            timeline(thread_spans, spans, &end_of)
        })
        .collect();

    // 2. Links by the thread they arrive on, by arrival time.
    let mut arrivals: Vec<Vec<usize>> = vec![Vec::new(); workflow.threads.len()];
    for (index, link) in workflow.links.iter().enumerate() {
        arrivals[link.to_thread].push(index);
    }
    for links in &mut arrivals {
        links.sort_by_key(|&link| (workflow.links[link].to_ns, link));
    }
    // Span ends on every thread, for inferred links.
    let mut ends: Vec<(i64, usize)> = spans
        .iter()
        .enumerate()
        .filter(|(_, span)| span.nested)
        .map(|(index, span)| (end_of(index), span.thread))
        .collect();
    ends.sort();

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
            (end_of(index), end_of(index) - span.start_ns, thread)
        })
        .max_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)));
    let Some((end, _, mut thread)) = last else {
        return CriticalPath {
            clock_shifts: workflow.shifts.clone(),
            ..CriticalPath::default()
        };
    };

    // 4. The walk, backward.
    let mut pieces: Vec<Piece> = Vec::new();
    let mut used = vec![false; workflow.links.len()];
    let mut skewed = 0;
    let mut at = end;
    let mut buffer = Vec::new();
    loop {
        let line = &timelines[thread];
        let first = line.times.first().map_or(at, |&t| t.min(at));
        // The latest link into this thread, at or before `at`, that is the
        // latest-finishing predecessor of its arrival.
        let arrived = arrivals[thread].partition_point(|&link| workflow.links[link].to_ns <= at);
        let follow = arrivals[thread][..arrived]
            .iter()
            .rev()
            .copied()
            .filter(|&link| !used[link])
            .find(|&link| {
                let link = &workflow.links[link];
                line.before(link.to_ns)
                    .is_none_or(|local| link.from_ns >= local)
            });
        let stop = follow.map_or(first, |link| workflow.links[link].to_ns);
        buffer.clear();
        line.pieces(stop, at, &mut buffer);
        pieces.extend(buffer.iter().map(|&(start, end, span)| Piece::Thread {
            thread,
            start,
            end,
            span,
        }));
        if let Some(link) = follow {
            used[link] = true;
            let l = &workflow.links[link];
            if l.from_ns > l.to_ns {
                skewed += 1;
            }
            let start = l.from_ns.min(l.to_ns);
            pieces.push(Piece::Link {
                link,
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
        pieces.push(Piece::Inferred {
            from,
            to: thread,
            start: end,
            end: first,
        });
        thread = from;
        at = end;
    }
    pieces.reverse();

    // 5. Steps, in time order, with runs of one span merged.
    // Names and places are shared by the steps (a path may have a step
    // per span boundary of a thread).
    let mut names: HashMap<&str, Arc<str>> = HashMap::new();
    let mut name = |span: usize| -> Arc<str> {
        let text = spans[span].name.as_str();
        names.entry(text).or_insert_with(|| Arc::from(text)).clone()
    };
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
    let place = |thread: usize| places[thread].clone();
    let mut stack_of = |span: usize| {
        let mut stack = vec![name(span)];
        let mut up = parent[span];
        while let Some(p) = up {
            stack.push(name(p));
            up = parent[p];
        }
        stack.reverse();
        stack
    };
    let mut steps: Vec<Step> = Vec::new();
    let mut last_thread_piece: Option<(usize, Option<usize>)> = None;
    for piece in pieces {
        match piece {
            Piece::Thread {
                thread,
                start,
                end,
                span,
            } => {
                if end <= start {
                    continue;
                }
                if last_thread_piece == Some((thread, span)) {
                    if let Some(step) = steps.last_mut().filter(|step| step.end_ns == start) {
                        step.end_ns = end;
                        step.duration_ns = end - step.start_ns;
                        continue;
                    }
                }
                last_thread_piece = Some((thread, span));
                let mut step = Step::new(StepKind::Idle, "(idle)", place(thread), start, end);
                if let Some(span) = span {
                    step.kind = StepKind::Span;
                    step.stack = stack_of(span);
                    step.name = step.stack.last().cloned().unwrap_or_default();
                    step.span_start_ns = Some(spans[span].start_ns);
                    step.span_end_ns = Some(end_of(span));
                    step.open = spans[span].end_ns.is_none();
                }
                steps.push(step);
            }
            Piece::Link { link, start, end } => {
                last_thread_piece = None;
                let link = &workflow.links[link];
                let (kind, extent) = match &link.kind {
                    LinkKind::Flow { .. } => (StepKind::Flow, None),
                    LinkKind::Async { span, .. } => (StepKind::Async, Some(*span)),
                };
                let mut step = Step::new(kind, link.kind.name(), place(link.to_thread), start, end);
                step.from = Some(place(link.from_thread));
                step.span_start_ns = extent.map(|span| spans[span].start_ns);
                step.span_end_ns = extent.map(end_of);
                steps.push(step);
            }
            Piece::Inferred {
                from,
                to,
                start,
                end,
            } => {
                last_thread_piece = None;
                let mut step = Step::new(StepKind::Inferred, "(no link)", place(to), start, end);
                step.from = Some(place(from));
                steps.push(step);
            }
        }
    }

    // 6. Totals.
    let in_spans_ns = steps
        .iter()
        .filter(|step| !step.kind.is_waiting())
        .map(|step| step.duration_ns)
        .sum();
    let waiting_ns = steps
        .iter()
        .filter(|step| step.kind.is_waiting())
        .map(|step| step.duration_ns)
        .sum();
    let mut by_name: Vec<NameOnPath> = Vec::new();
    for step in steps.iter().filter(|step| step.kind == StepKind::Span) {
        match by_name.iter_mut().find(|entry| *entry.name == *step.name) {
            Some(entry) => {
                entry.on_path_ns += step.duration_ns;
                entry.steps += 1;
            }
            None => by_name.push(NameOnPath {
                name: step.name.to_string(),
                on_path_ns: step.duration_ns,
                steps: 1,
            }),
        }
    }
    by_name.sort_by(|a, b| b.on_path_ns.cmp(&a.on_path_ns).then(a.name.cmp(&b.name)));
    let start_ns = steps.first().map_or(end, |step| step.start_ns);
    CriticalPath {
        start_ns: Some(start_ns),
        end_ns: Some(end),
        total_ns: end - start_ns,
        in_spans_ns,
        waiting_ns,
        steps,
        by_name,
        skewed_links: skewed,
        clock_shifts: workflow.shifts.clone(),
    }
}

/// The timeline of one thread's spans, given in nesting order.
fn timeline(
    thread_spans: &[usize],
    spans: &[crate::model::Span],
    end_of: &impl Fn(usize) -> i64,
) -> Timeline {
    // (time, what: 0 end, 1 begin, rank in nesting order)
    let mut edges: Vec<(i64, u8, usize)> = Vec::with_capacity(2 * thread_spans.len());
    for (rank, &span) in thread_spans.iter().enumerate() {
        let (start, end) = (spans[span].start_ns, end_of(span));
        if end > start {
            edges.push((start, 1, rank));
            edges.push((end, 0, rank));
        } else {
            // A span of no duration covers no time but is a boundary.
            edges.push((start, 2, rank));
        }
    }
    edges.sort();
    let mut line = Timeline::default();
    let mut open: BTreeSet<usize> = BTreeSet::new();
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
        line.inner.push(open.last().map(|&rank| thread_spans[rank]));
    }
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
        let mut out = String::from(
            "kind,name,stack,process,host,pid,tid,from_process,from_tid,start_ns,end_ns,duration_ns,open\n",
        );
        for step in &self.steps {
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
            out.push_str(&quoted.join(","));
            out.push('\n');
        }
        out
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
        let Some(start) = self.start_ns else {
            return writeln!(f, "no spans: no critical path");
        };
        writeln!(
            f,
            "critical path: {} us, {} us in spans ({}), {} us waiting ({}), {} steps",
            micros(self.total_ns),
            micros(self.in_spans_ns),
            percent(self.in_spans_ns, self.total_ns),
            micros(self.waiting_ns),
            percent(self.waiting_ns, self.total_ns),
            self.steps.len()
        )?;
        for shift in &self.clock_shifts {
            writeln!(
                f,
                "note: clock of {} shifted by {} us",
                shift.host,
                micros(shift.offset_ns)
            )?;
        }
        if self.skewed_links > 0 {
            writeln!(
                f,
                "note: {} link{} on the path arrive{} before departing (clock skew; try --fix-clocks)",
                self.skewed_links,
                if self.skewed_links == 1 { "" } else { "s" },
                if self.skewed_links == 1 { "s" } else { "" },
            )?;
        }
        writeln!(f)?;
        let row = |index: usize| {
            let step = &self.steps[index];
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
            self.steps.len(),
            row,
        )?;
        if !self.by_name.is_empty() {
            writeln!(f)?;
            let rows: Vec<Vec<String>> = self
                .by_name
                .iter()
                .map(|entry| {
                    vec![
                        entry.name.clone(),
                        micros(entry.on_path_ns),
                        percent(entry.on_path_ns, self.total_ns),
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
    let mut events: Vec<String> = [
        ("process_name", json!({"name": "critical path"})),
        ("process_sort_index", json!({"sort_index": -1})),
        ("thread_name", json!({"name": "critical path"})),
    ]
    .into_iter()
    .map(|(name, args)| {
        json!({"name": name, "ph": "M", "pid": pid, "tid": pid, "args": args}).to_string()
    })
    .collect();
    for step in &path.steps {
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
        events.push(format!(
            "{{\"ts\":{},\"dur\":{},{}",
            micros(step.start_ns),
            micros(step.duration_ns),
            &event[1..]
        ));
    }
    events
}

/// Appends `path` as a track (see [`track_events`]) to the Chrome JSON
/// array at `trace`, which must end as `merge` ends it (`\n]\n`); `pid`
/// must be free in it.
pub fn write_track(trace: &Path, path: &CriticalPath, pid: i64) -> std::io::Result<()> {
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
    let mut out = Vec::new();
    for event in track_events(path, pid) {
        out.extend_from_slice(b",\n");
        out.extend_from_slice(event.as_bytes());
    }
    out.extend_from_slice(b"\n]\n");
    file.write_all(&out)?;
    file.flush()
}

//! Per-function and per-thread statistics of one or more traces.
//!
//! A *span* is a matched `B`/`E` pair, an `X` event, or a matched `b`/`e`
//! pair. Spans on one thread (`B`/`E` and `X`) nest by time: the self time
//! of a span is its duration less the time covered by the spans directly
//! inside it. Asynchronous spans (`b`/`e`, paired by pid, category, id,
//! name and time, wherever they are in the file) do not nest, so their self
//! time is their whole duration. A function that calls itself contributes every
//! level of the recursion to its total.

use std::collections::{BTreeMap, BTreeSet};

use foldhash::HashMap;
use serde::Serialize;
use std::fmt;

use crate::event::{Event, Phase};
use crate::read::Trace;
use crate::spans::{Matched, Matcher, Mismatch, Seen, Thread};

/// Statistics of all spans with one name. Times are in nanoseconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionStats {
    /// The span name.
    pub name: String,
    /// How many spans completed.
    pub calls: u64,
    /// Sum of the durations (inclusive time).
    pub total_ns: i64,
    /// Sum of the durations less the time spent in nested spans.
    pub self_ns: i64,
    /// The shortest duration.
    pub min_ns: i64,
    /// The longest duration.
    pub max_ns: i64,
    /// The median and 90th and 99th percentiles of the durations, from a
    /// [`Summarizer::with_percentiles`].
    pub percentiles: Option<Percentiles>,
    /// Every duration, while percentiles are to be computed.
    #[serde(skip)]
    durations: Option<Vec<i64>>,
}

/// Percentiles of span durations, in nanoseconds: each the duration of a
/// span (nearest rank: the smallest duration that at least that share of
/// the spans do not exceed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Percentiles {
    pub p50_ns: i64,
    pub p90_ns: i64,
    pub p99_ns: i64,
}

impl Percentiles {
    /// The percentiles of `durations`, sorted here; `None` for none.
    pub fn of(durations: &mut [i64]) -> Option<Percentiles> {
        if durations.is_empty() {
            return None;
        }
        durations.sort_unstable();
        let n = durations.len();
        // Nearest rank: ceil(p / 100 * n), counting from 1.
        let rank = |p: usize| durations[(p * n).div_ceil(100).clamp(1, n) - 1];
        Some(Percentiles {
            p50_ns: rank(50),
            p90_ns: rank(90),
            p99_ns: rank(99),
        })
    }
}

impl FunctionStats {
    fn new(name: &str) -> FunctionStats {
        FunctionStats {
            name: name.to_string(),
            calls: 0,
            total_ns: 0,
            self_ns: 0,
            min_ns: 0,
            max_ns: 0,
            percentiles: None,
            durations: None,
        }
    }

    /// The mean duration, rounded to the nearest nanosecond.
    pub fn mean_ns(&self) -> i64 {
        if self.calls == 0 {
            return 0;
        }
        let calls = i128::from(self.calls);
        let mean = (2 * i128::from(self.total_ns) + calls) / (2 * calls);
        i64::try_from(mean).unwrap_or(i64::MAX)
    }

    fn add(&mut self, duration: i64, self_time: i64) {
        if self.calls == 0 {
            self.min_ns = duration;
            self.max_ns = duration;
        } else {
            self.min_ns = self.min_ns.min(duration);
            self.max_ns = self.max_ns.max(duration);
        }
        self.calls += 1;
        if let Some(durations) = &mut self.durations {
            durations.push(duration);
        }
        self.total_ns = self.total_ns.saturating_add(duration);
        self.self_ns = self.self_ns.saturating_add(self_time);
    }
}

/// Event counts of one thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadStats {
    /// The process id.
    pub pid: i64,
    /// The thread id.
    pub tid: i64,
    /// The name from a `thread_name` metadata event, if any.
    pub name: Option<String>,
    /// The number of non-metadata events on the thread.
    pub events: usize,
}

/// A summary of one or more traces; see [`summary`] and [`summarize`].
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Summary {
    /// How many traces were summarised.
    pub traces: usize,
    /// How many of them were truncated.
    pub truncated_traces: usize,
    /// The number of processes (distinct pids per trace).
    pub processes: usize,
    /// The number of non-metadata events.
    pub events: usize,
    /// The earliest timestamp, in nanoseconds since the epoch.
    pub start_ns: Option<i64>,
    /// The latest timestamp (or end of an `X` event), in nanoseconds since
    /// the epoch.
    pub end_ns: Option<i64>,
    /// Spans begun but never ended; they are not in `functions`.
    pub open_spans: usize,
    /// Events that make no span and are not in `functions` either: ends
    /// that close nothing (or, named otherwise than the innermost open
    /// begin, close it unpaired, which leaves both out), spans that end
    /// before they begin, and complete events without a usable duration.
    /// `perfflow-trace check` names each one.
    pub uncounted_events: usize,
    /// Per-name statistics, by decreasing total time (then by name).
    pub functions: Vec<FunctionStats>,
    /// Per-thread event counts, by pid and tid.
    pub threads: Vec<ThreadStats>,
}

impl Summary {
    /// The time from the first to the last timestamp, in nanoseconds.
    pub fn span_ns(&self) -> Option<i64> {
        Some(self.end_ns?.saturating_sub(self.start_ns?))
    }

    /// The statistics of the spans named `name`.
    pub fn function(&self, name: &str) -> Option<&FunctionStats> {
        self.functions.iter().find(|stats| stats.name == name)
    }

    /// The summary as JSON: its fields, with `span_ns` and each function's
    /// `mean_ns` added.
    pub fn to_json(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        value["span_ns"] = serde_json::json!(self.span_ns());
        if let Some(functions) = value["functions"].as_array_mut() {
            for (value, stats) in functions.iter_mut().zip(&self.functions) {
                value["mean_ns"] = serde_json::json!(stats.mean_ns());
            }
        }
        value
    }

    /// One line per function: calls and times in nanoseconds; percentile
    /// columns are empty unless they were computed.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "name,calls,total_ns,self_ns,min_ns,mean_ns,max_ns,p50_ns,p90_ns,p99_ns\n",
        );
        for stats in &self.functions {
            let p = |pick: fn(&Percentiles) -> i64| {
                stats
                    .percentiles
                    .as_ref()
                    .map(|p| pick(p).to_string())
                    .unwrap_or_default()
            };
            let fields = [
                crate::critical_path::csv_field(&stats.name),
                stats.calls.to_string(),
                stats.total_ns.to_string(),
                stats.self_ns.to_string(),
                stats.min_ns.to_string(),
                stats.mean_ns().to_string(),
                stats.max_ns.to_string(),
                p(|p| p.p50_ns),
                p(|p| p.p90_ns),
                p(|p| p.p99_ns),
            ];
            out.push_str(&fields.join(","));
            out.push('\n');
        }
        out
    }
}

/// How many events a mismatch met while reading leaves out of the spans.
/// An `E` of another name than the innermost open `B` closes that `B`
/// without a span: both are out. Begins still open at the end are
/// counted apart, as open spans.
fn uncounted_by(mismatch: &Mismatch) -> usize {
    match mismatch {
        Mismatch::EndWithoutBegin { .. } | Mismatch::AsyncEndWithoutBegin { .. } => 1,
        Mismatch::WrongName { .. } => 2,
        // The outer `B` named by the `E` is paired with it.
        Mismatch::OutOfOrder { .. } => 0,
        Mismatch::Unclosed { .. } | Mismatch::AsyncUnclosed { .. } => 0,
    }
}

/// Summarises one trace.
pub fn summary(trace: &Trace) -> Summary {
    summarize(std::slice::from_ref(trace))
}

/// Summarises several traces together, as the processes of one run.
///
/// Spans are matched within each trace; statistics of the same name are
/// merged across traces. [`Summarizer`] does the same one event at a time.
pub fn summarize<'a>(traces: impl IntoIterator<Item = &'a Trace> + Clone) -> Summary {
    let result: Result<Summary, std::convert::Infallible> =
        summarize_exactly(Summarizer::new, |summarizer, _| {
            for trace in traces.clone() {
                for event in &trace.events {
                    summarizer.push(event);
                }
                summarizer.end_trace(trace.truncated);
            }
            Ok(())
        });
    match result {
        Ok(summary) => summary,
        Err(never) => match never {},
    }
}

/// Summarises what `pass` pushes into the summariser `fresh` makes (`pass`
/// is told whether it runs again); when that could not nest every span
/// (see [`Summarizer::is_exact`]), once more keeping every span.
pub fn summarize_exactly<E>(
    fresh: impl Fn() -> Summarizer,
    mut pass: impl FnMut(&mut Summarizer, bool) -> Result<(), E>,
) -> Result<Summary, E> {
    let mut summarizer = fresh();
    pass(&mut summarizer, false)?;
    if !summarizer.is_exact() {
        summarizer = fresh().keeping_every_span();
        pass(&mut summarizer, true)?;
    }
    Ok(summarizer.finish())
}

/// Summarises traces one event at a time, as [`summarize`] does.
///
/// Memory holds the statistics of each distinct name, the threads, the
/// `B`s not yet closed and the `b`s and `e`s not yet paired, and the spans
/// of a thread that a span yet to be read could still contain or be
/// contained in. An `X` event is written at its end, after the spans it
/// encloses, so a span is kept until a span that contains it has been
/// read: on a thread with only `B`/`E` events, the spans directly inside
/// the open `B`s (merged into runs of 8 bytes a span) and the latest
/// one; `X` events are kept as spans (a thread whose `X` events come in
/// order of their start keeps only the spans around the latest one).
#[derive(Debug, Default)]
pub struct Summarizer {
    result: Summary,
    /// Index into `stats` of each name.
    names: HashMap<String, usize>,
    stats: Vec<FunctionStats>,
    threads: Vec<ThreadStats>,
    trace: TraceState,
    percentiles: bool,
    /// Keep the children of every span: see [`Summarizer::keeping_every_span`].
    keep_all: bool,
    /// Some span could not be nested right: see [`Summarizer::is_exact`].
    lost: bool,
}

/// What a [`Summarizer`] keeps about the trace being read.
#[derive(Debug, Default)]
struct TraceState {
    matcher: Matcher,
    index: usize,
    nesting: HashMap<Thread, Nesting>,
    pids: BTreeSet<i64>,
    counts: BTreeMap<Thread, usize>,
    thread_names: BTreeMap<Thread, String>,
}

impl Summarizer {
    /// A summariser with nothing read yet.
    pub fn new() -> Summarizer {
        Summarizer::default()
    }

    /// A summariser that also gives each name's [`Percentiles`]. It keeps
    /// every span's duration, 8 bytes a span, until [`Summarizer::finish`].
    pub fn with_percentiles() -> Summarizer {
        Summarizer {
            percentiles: true,
            ..Summarizer::default()
        }
    }

    /// The same summariser keeping the children of every span, for traces
    /// whose spans come in no order it can rely on: memory then grows
    /// with the spans of each thread.
    pub fn keeping_every_span(mut self) -> Summarizer {
        self.keep_all = true;
        self
    }

    /// False when a span came inside one whose children had already been
    /// dropped: a thread's spans came in order of their end, then broke
    /// it. Self times are then not exact; summarise the same traces again
    /// with [`Summarizer::keeping_every_span`].
    pub fn is_exact(&self) -> bool {
        !self.lost
    }

    /// Adds the next event of the current trace.
    pub fn push(&mut self, event: &Event) {
        let index = self.trace.index;
        self.trace.index += 1;
        if event.is_metadata() {
            if event.name.as_deref() == Some("thread_name") {
                if let (Some(thread), Some(name)) = (event.thread(), event.args["name"].as_str()) {
                    self.trace.thread_names.insert(thread, name.to_string());
                }
            }
        } else {
            self.count(event);
        }

        // An event closes at most one span.
        let mut pair = None;
        let mut uncounted = 0;
        self.trace
            .matcher
            .push(index, event, &mut |matched| match matched {
                Matched::Pair {
                    begin,
                    end_ts_ns,
                    nested,
                    ..
                } => pair = Some((begin, end_ts_ns, nested)),
                Matched::Mismatch(mismatch) => uncounted += uncounted_by(&mismatch),
            });
        self.result.uncounted_events += uncounted;
        if let Some((begin, end_ts_ns, nested)) = pair {
            match (begin.ts_ns, end_ts_ns) {
                (Some(start), Some(end)) if end >= start => {
                    let name = self.name_index(span_name(begin.name.as_deref()));
                    match (nested, begin.thread) {
                        (true, Some(thread)) => self.nest(thread, start, end, name, false),
                        _ => self.stats[name].add(end - start, end - start),
                    }
                }
                _ => self.result.uncounted_events += 2,
            }
        }

        if event.ph == Some(Phase::Complete) {
            // A complete event without a usable duration ends where it
            // starts (`end_ns`) and is no span.
            match (event.ts_ns, event.end_ns()) {
                (Some(start), Some(end)) if event.dur_ns.is_some_and(|d| d >= 0) => {
                    let name = self.name_index(span_name(event.name.as_deref()));
                    match event.thread() {
                        Some(thread) => self.nest(thread, start, end, name, true),
                        None => self.stats[name].add(end - start, end - start),
                    }
                }
                _ => self.result.uncounted_events += 1,
            }
        }
    }

    /// Ends the current trace; `truncated` says whether it was. What is
    /// pushed next belongs to another trace.
    pub fn end_trace(&mut self, truncated: bool) {
        let trace = std::mem::take(&mut self.trace);
        self.result.traces += 1;
        if truncated {
            self.result.truncated_traces += 1;
        }
        let (mut open, mut uncounted) = (0, 0);
        trace.matcher.finish(&mut |matched| {
            if let Matched::Mismatch(mismatch) = matched {
                if matches!(
                    *mismatch,
                    Mismatch::Unclosed { .. } | Mismatch::AsyncUnclosed { .. }
                ) {
                    open += 1;
                }
                uncounted += uncounted_by(&mismatch);
            }
        });
        self.result.open_spans += open;
        self.result.uncounted_events += uncounted;
        self.result.processes += trace.pids.len();
        let names = trace.thread_names;
        self.threads.extend(
            trace
                .counts
                .into_iter()
                .map(|((pid, tid), events)| ThreadStats {
                    pid,
                    tid,
                    name: names.get(&(pid, tid)).cloned(),
                    events,
                }),
        );
    }

    /// The summary of every trace ended with [`Summarizer::end_trace`].
    pub fn finish(mut self) -> Summary {
        let mut result = self.result;
        self.stats.retain(|stats| stats.calls > 0);
        for stats in &mut self.stats {
            if let Some(mut durations) = stats.durations.take() {
                stats.percentiles = Percentiles::of(&mut durations);
            }
        }
        result.functions = self.stats;
        result.functions.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then_with(|| a.name.cmp(&b.name))
        });
        self.threads.sort_by_key(|thread| (thread.pid, thread.tid));
        result.threads = self.threads;
        result
    }

    fn count(&mut self, event: &Event) {
        self.result.events += 1;
        if let Some(pid) = event.pid {
            self.trace.pids.insert(pid);
        }
        if let Some(thread) = event.thread() {
            *self.trace.counts.entry(thread).or_default() += 1;
        }
        if let (Some(start), Some(end)) = (event.ts_ns, event.end_ns()) {
            let result = &mut self.result;
            result.start_ns = Some(result.start_ns.map_or(start, |s| s.min(start)));
            result.end_ns = Some(result.end_ns.map_or(end, |e| e.max(end)));
        }
    }

    fn name_index(&mut self, name: &str) -> usize {
        if let Some(&index) = self.names.get(name) {
            return index;
        }
        let index = self.stats.len();
        let mut stats = FunctionStats::new(name);
        if self.percentiles {
            stats.durations = Some(Vec::new());
        }
        self.stats.push(stats);
        self.names.insert(name.to_string(), index);
        index
    }

    /// Adds the span `[start, end]` named `name` on `thread`, where spans
    /// nest by time.
    fn nest(&mut self, thread: Thread, start: i64, end: i64, name: usize, complete: bool) {
        let open = self.trace.matcher.open_on(thread);
        let keep_all = self.keep_all;
        let nesting = self.trace.nesting.entry(thread).or_insert_with(|| Nesting {
            keep_all,
            ..Nesting::default()
        });
        nesting.insert(
            Span {
                start,
                end,
                name,
                complete,
            },
            open,
            &mut self.stats,
        );
        self.lost |= nesting.lost;
    }
}

fn span_name(name: Option<&str>) -> &str {
    name.unwrap_or("(unnamed)")
}

/// A completed span of a thread.
struct Span {
    start: i64,
    end: i64,
    /// Index of its name's statistics.
    name: usize,
    /// An `X` event rather than a `B`/`E` pair.
    complete: bool,
}

/// A span kept because a span yet to be read may contain it or be
/// contained in it, or a run of such spans merged into one.
#[derive(Debug)]
struct Node {
    start: i64,
    end: i64,
    /// The time a parent loses to it: its duration, or the sum of the
    /// durations of a merged run.
    weight: i64,
    /// Index of its name's statistics; `None` for a merged run.
    name: Option<usize>,
    /// Its direct children, by start.
    children: Vec<Node>,
    /// For a merged run of sibling spans: the start of each (from the
    /// run's `start`) and its duration, in order, so that an `X` read
    /// later that starts among them takes exactly those after its start
    /// (8 bytes a span; a span that does not fit is not merged). Empty for
    /// a span.
    marks: Vec<(u32, u32)>,
    /// Its children were dropped (spans came in order of their end): a
    /// span read later that lies inside it cannot be nested right.
    pruned: bool,
}

impl Node {
    /// The time of this node inside a parent that ends at `end`.
    fn weight_before(&self, end: i64) -> i64 {
        self.weight.min(end - self.start).max(0)
    }

    fn is_run(&self) -> bool {
        !self.marks.is_empty()
    }

    /// Whether the sibling `next` (which starts after this node ends) can
    /// join this node's run: every start from this node's start, and
    /// every duration, fits in 32 bits.
    fn can_take(&self, next: &Node) -> bool {
        let fits = |value: i64| u32::try_from(value).is_ok();
        let own = self.is_run() || fits(self.weight);
        let theirs = next.is_run() || fits(next.weight);
        own && theirs && fits(next.end - self.start)
    }

    /// Appends the sibling `next` to this node, which becomes a run; see
    /// [`Node::can_take`].
    fn merge(&mut self, next: Node) {
        let offset = |start: i64| (start - self.start) as u32;
        if !self.is_run() {
            self.marks.push((0, self.weight as u32));
            self.name = None;
            self.children = Vec::new();
        }
        let shift = offset(next.start);
        if next.is_run() {
            let rebased = next.marks.iter().map(|&(at, w)| (at + shift, w));
            self.marks.extend(rebased);
        } else {
            self.marks.push((shift, next.weight as u32));
        }
        self.end = self.end.max(next.end);
        self.weight = self.weight.saturating_add(next.weight);
    }

    /// Splits a run at `at`: the spans that start at or after it leave
    /// this run as a run of their own, returned.
    fn split_off(&mut self, at: i64) -> Option<Node> {
        let from_start = at.saturating_sub(self.start);
        let first = self
            .marks
            .partition_point(|&(start, _)| i64::from(start) < from_start);
        if first == 0 || first == self.marks.len() {
            return None;
        }
        let mut marks = self.marks.split_off(first);
        let base = marks[0].0;
        let mut weight = 0i64;
        for (start, w) in &mut marks {
            *start -= base;
            weight += i64::from(*w);
        }
        let tail = Node {
            start: self.start + i64::from(base),
            end: self.end,
            weight,
            name: None,
            children: Vec::new(),
            marks,
            pruned: false,
        };
        self.weight -= weight;
        // What starts before `at` ends by then, nested properly.
        self.end = self.end.min(at);
        Some(tail)
    }
}

/// The spans of one thread, nested by time: a parent starts no later than
/// its child, and when both start together the longer one (or the one
/// read first) is the parent.
///
/// Statistics are updated when a span is inserted, whatever the order in
/// which spans arrive: a span takes as children the kept spans it
/// contains, and its parent (if kept) loses the span's time in place of
/// theirs. What can no longer change is dropped, once the order is known
/// (spans that are all siblings come in both orders): spans that end
/// before the start of the latest span when spans come in order of their
/// start and no `B` is open; and the children of a span when spans come
/// in order of their end. A thread whose order breaks after something was
/// dropped makes the summariser not exact ([`Summarizer::is_exact`]), and
/// [`summarize_exactly`] reads its traces again keeping every span. On a thread without `X` events so far, whose
/// `B`/`E` spans come in order of their end, the siblings before the
/// outermost open `B` and between two open `B`s are merged into runs that
/// keep only each span's start and duration.
#[derive(Debug)]
struct Nesting {
    roots: Vec<Node>,
    by_start: bool,
    by_end: bool,
    last_start: i64,
    last_end: i64,
    has_complete: bool,
    /// Keep every span's children (see [`Summarizer::keeping_every_span`]).
    keep_all: bool,
    /// A span lay inside one whose children had been dropped.
    lost: bool,
    /// Spans were dropped while spans came in order of their start.
    dropped: bool,
}

impl Default for Nesting {
    fn default() -> Nesting {
        Nesting {
            roots: Vec::new(),
            by_start: true,
            by_end: true,
            last_start: i64::MIN,
            last_end: i64::MIN,
            has_complete: false,
            keep_all: false,
            lost: false,
            dropped: false,
        }
    }
}

impl Nesting {
    /// Inserts `span`; `open` are the `B`s open on the thread, outermost
    /// first.
    fn insert(&mut self, span: Span, open: &[Seen], stats: &mut [FunctionStats]) {
        let Span {
            start,
            end,
            name,
            complete,
        } = span;
        if self.dropped && start < self.last_start {
            // Spans dropped while they came in order of their start may
            // be inside this one.
            self.lost = true;
        }
        self.by_start &= start >= self.last_start;
        self.by_end &= end >= self.last_end;
        self.last_start = start;
        self.last_end = end;
        self.has_complete |= complete;
        // The order is known once the other one has been broken: spans
        // that are all siblings so far come in both. An open B may end up
        // around any span that starts after it.
        let by_start = self.by_start && !self.by_end && open.is_empty() && !self.keep_all;
        let by_end = self.by_end && !self.by_start;

        // 1. Walk down to the innermost kept span that contains this one.
        let mut level = &mut self.roots;
        let mut parent: Option<(i64, Option<usize>)> = None;
        loop {
            if by_start {
                let done = level
                    .iter()
                    .take_while(|node| node.end <= start && node.start < start)
                    .count();
                level.drain(..done);
                self.dropped |= done > 0;
            }
            let candidate = level.partition_point(|node| node.start <= start);
            // A kept span with the same start and end contains this one
            // when it was read first, except when this one is a B/E pair:
            // on a thread B/E pairs close in stack order, so the one that
            // closed first, kept, is the inner one. A merged run is
            // siblings, not a span, and contains nothing.
            let contains = candidate > 0 && {
                let node = &level[candidate - 1];
                !node.is_run()
                    && start < node.end
                    && (node.start < start || end < node.end || (end == node.end && complete))
            };
            if !contains {
                break;
            }
            let node = &mut level[candidate - 1];
            self.lost |= node.pruned;
            parent = Some((node.end, node.name));
            level = &mut node.children;
        }

        // 2. Take the kept spans this one contains as its children; of a
        // run that it starts inside, those after its start.
        let first = level.partition_point(|node| node.start < start);
        if let Some(tail) = first
            .checked_sub(1)
            .and_then(|before| level[before].split_off(start))
        {
            level.insert(first, tail);
        }
        let first = first
            + level[first..]
                .iter()
                .take_while(|node| node.start == start && node.end > end)
                .count();
        let last = first
            + level[first..]
                .iter()
                .take_while(|node| node.start < end)
                .count();
        let children: Vec<Node> = level.drain(first..last).collect();
        let covered: i64 = children.iter().map(|child| child.weight_before(end)).sum();
        let duration = end - start;
        stats[name].add(duration, (duration - covered).max(0));

        // 3. The parent loses this span's time in place of its children's.
        if let Some((parent_end, Some(parent_name))) = parent {
            let before: i64 = children
                .iter()
                .map(|child| child.weight_before(parent_end))
                .sum();
            let now = duration.min(parent_end - start).max(0);
            let parent = &mut stats[parent_name];
            parent.self_ns = parent.self_ns.saturating_add(before - now);
        }

        // In order of their end, nothing read later fits inside, unless
        // the order breaks later: that is noted (`lost`) when it happens.
        let prune = by_end && !self.keep_all;
        let node = Node {
            start,
            end,
            weight: duration,
            name: Some(name),
            children: if prune { Vec::new() } else { children },
            marks: Vec::new(),
            pruned: prune,
        };
        level.insert(first, node);

        // 4. B/E only so far, in order: a B/E span read later is one of an
        // open B (or of a B not yet read, which starts after everything
        // kept), so the siblings that start between two open Bs (or before
        // the outermost one) only ever count for it as a whole. An `X` read
        // later may still start among them (an `X` is written at its end,
        // after the spans it encloses), so they merge into a run that keeps
        // each one's start and duration, not into one span. The latest
        // span stays whole: an `X` with its start and end is inside it.
        if parent.is_none() && self.by_end && !self.has_complete {
            let starts =
                |node: &Node| open.partition_point(|b| b.ts_ns.is_none_or(|ts| ts <= node.start));
            let mut latest = None;
            if self.roots.len() > 1 {
                latest = self.roots.pop();
            }
            while let [.., before, last] = self.roots.as_slice() {
                if starts(before) != starts(last) || !before.can_take(last) {
                    break;
                }
                let last = self.roots.pop().expect("two kept spans");
                self.roots.last_mut().expect("one kept span").merge(last);
            }
            self.roots.extend(latest);
        }
    }
}

/// Formats nanoseconds as microseconds with three decimals, exactly.
pub(crate) fn micros(nanos: i64) -> String {
    let sign = if nanos < 0 { "-" } else { "" };
    let magnitude = nanos.unsigned_abs();
    format!("{sign}{}.{:03}", magnitude / 1000, magnitude % 1000)
}

/// Writes rows as columns separated by two spaces; `right[i]` right-aligns
/// column `i`. Trailing spaces are not written.
pub(crate) fn write_table(
    f: &mut fmt::Formatter<'_>,
    header: &[&str],
    right: &[bool],
    rows: &[Vec<String>],
) -> fmt::Result {
    write_rows(f, header, right, rows.len(), |row| rows[row].clone())
}

/// Like [`write_table`], with rows made on demand by `row(index)` (twice
/// each: once to size the columns, once to write), so that a long table
/// is never held whole.
pub(crate) fn write_rows(
    f: &mut fmt::Formatter<'_>,
    header: &[&str],
    right: &[bool],
    count: usize,
    row: impl Fn(usize) -> Vec<String>,
) -> fmt::Result {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for index in 0..count {
        for (width, cell) in widths.iter_mut().zip(row(index)) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(header).chain((0..count).map(row)) {
        let mut line = String::new();
        for (column, cell) in row.iter().enumerate() {
            if column > 0 {
                line.push_str("  ");
            }
            // Padded by hand: `format!`'s width is limited to 65,535, and a
            // name may be longer.
            let width = widths.get(column).copied().unwrap_or(0);
            let padding = " ".repeat(width.saturating_sub(cell.chars().count()));
            if right.get(column).copied().unwrap_or(false) {
                line.push_str(&padding);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&padding);
            }
        }
        writeln!(f, "{}", line.trim_end())?;
    }
    Ok(())
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut facts = Vec::new();
        if self.traces != 1 {
            facts.push(format!("traces: {}", self.traces));
        }
        facts.push(format!("processes: {}", self.processes));
        facts.push(format!("threads: {}", self.threads.len()));
        facts.push(format!("events: {}", self.events));
        facts.push(match self.span_ns() {
            Some(span) => format!("time span: {} us", micros(span)),
            None => "time span: -".to_string(),
        });
        writeln!(f, "{}", facts.join(", "))?;

        if self.truncated_traces > 0 {
            if self.traces == 1 {
                writeln!(f, "note: the trace is truncated")?;
            } else {
                writeln!(
                    f,
                    "note: {} of the traces are truncated",
                    self.truncated_traces
                )?;
            }
        }
        if self.uncounted_events > 0 {
            writeln!(
                f,
                "note: {} event{} make{} no span and {} not counted (`perfflow-trace check` names them)",
                self.uncounted_events,
                if self.uncounted_events == 1 { "" } else { "s" },
                if self.uncounted_events == 1 { "s" } else { "" },
                if self.uncounted_events == 1 { "is" } else { "are" }
            )?;
        }
        if self.open_spans > 0 {
            writeln!(
                f,
                "note: {} span{} never ended and {} not counted",
                self.open_spans,
                if self.open_spans == 1 { "" } else { "s" },
                if self.open_spans == 1 { "is" } else { "are" }
            )?;
        }

        writeln!(f)?;
        if self.functions.is_empty() {
            writeln!(f, "no completed spans")?;
        } else {
            let rows: Vec<Vec<String>> = self
                .functions
                .iter()
                .map(|stats| {
                    vec![
                        stats.name.clone(),
                        stats.calls.to_string(),
                        micros(stats.total_ns),
                        micros(stats.self_ns),
                        micros(stats.min_ns),
                        micros(stats.mean_ns()),
                        micros(stats.max_ns),
                    ]
                })
                .collect();
            write_table(
                f,
                &[
                    "function",
                    "calls",
                    "total (us)",
                    "self (us)",
                    "min (us)",
                    "mean (us)",
                    "max (us)",
                ],
                &[false, true, true, true, true, true, true],
                &rows,
            )?;
        }

        if !self.threads.is_empty() {
            writeln!(f)?;
            let rows: Vec<Vec<String>> = self
                .threads
                .iter()
                .map(|thread| {
                    vec![
                        thread.pid.to_string(),
                        thread.tid.to_string(),
                        thread.events.to_string(),
                        thread.name.clone().unwrap_or_default(),
                    ]
                })
                .collect();
            write_table(
                f,
                &["pid", "tid", "events", "thread"],
                &[true, true, true, false],
                &rows,
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::parse_trace;

    fn summarise(text: &str) -> Summary {
        summary(&parse_trace(text).expect("readable trace"))
    }

    const NESTED: &str = r#"[
{"name":"thread_name","ph":"M","pid":7,"tid":1,"args":{"name":"main thread"}},
{"name":"main","ph":"B","pid":7,"tid":1,"ts":0},
{"name":"solve","ph":"B","pid":7,"tid":1,"ts":10},
{"name":"step","ph":"B","pid":7,"tid":1,"ts":20},
{"name":"step","ph":"E","pid":7,"tid":1,"ts":30},
{"name":"step","ph":"X","pid":7,"tid":1,"ts":40,"dur":20},
{"name":"solve","ph":"E","pid":7,"tid":1,"ts":70},
{"name":"tick","ph":"i","pid":7,"tid":1,"ts":80},
{"name":"main","ph":"E","pid":7,"tid":1,"ts":100},
{"name":"step","ph":"X","pid":7,"tid":2,"ts":5,"dur":50}
]"#;

    #[test]
    fn self_time_excludes_directly_nested_spans() {
        let s = summarise(NESTED);
        let main = s.function("main").expect("main");
        assert_eq!(
            (main.calls, main.total_ns, main.self_ns),
            (1, 100_000, 40_000)
        );
        let solve = s.function("solve").expect("solve");
        assert_eq!(
            (solve.calls, solve.total_ns, solve.self_ns),
            (1, 60_000, 30_000)
        );
        let step = s.function("step").expect("step");
        assert_eq!(
            (step.calls, step.total_ns, step.self_ns),
            (3, 80_000, 80_000)
        );
        assert_eq!((step.min_ns, step.max_ns), (10_000, 50_000));
        assert_eq!(step.mean_ns(), 26_667);
    }

    #[test]
    fn durations_at_epoch_timestamps_are_exact_to_the_nanosecond() {
        let text = r#"[
{"name":"short","ph":"B","pid":1,"tid":1,"ts":1712345678901234.567},
{"name":"short","ph":"E","pid":1,"tid":1,"ts":1712345678901234.968},
{"name":"tiny","ph":"X","pid":1,"tid":1,"ts":1712345678901235.001,"dur":0.003}
]"#;
        let s = summarise(text);
        assert_eq!(s.function("short").map(|f| f.total_ns), Some(401));
        assert_eq!(s.function("tiny").map(|f| f.total_ns), Some(3));
        assert_eq!(s.span_ns(), Some(437));
    }

    #[test]
    fn functions_are_sorted_by_total_time() {
        let names: Vec<_> = summarise(NESTED)
            .functions
            .iter()
            .map(|stats| stats.name.clone())
            .collect();
        assert_eq!(names, ["main", "step", "solve"]);
    }

    #[test]
    fn threads_processes_and_time_span_are_counted() {
        let s = summarise(NESTED);
        assert_eq!(s.processes, 1);
        assert_eq!(s.events, 9);
        assert_eq!(s.span_ns(), Some(100_000));
        assert_eq!(
            s.threads,
            [
                ThreadStats {
                    pid: 7,
                    tid: 1,
                    name: Some("main thread".to_string()),
                    events: 8
                },
                ThreadStats {
                    pid: 7,
                    tid: 2,
                    name: None,
                    events: 1
                }
            ]
        );
    }

    #[test]
    fn a_child_that_ended_before_a_sibling_began_counts_for_the_outer_span() {
        let text = r#"[
{"name":"main","ph":"B","pid":1,"tid":1,"ts":0},
{"name":"a","ph":"B","pid":1,"tid":1,"ts":1},
{"name":"a","ph":"E","pid":1,"tid":1,"ts":2},
{"name":"f","ph":"B","pid":1,"tid":1,"ts":3},
{"name":"g","ph":"B","pid":1,"tid":1,"ts":4},
{"name":"g","ph":"E","pid":1,"tid":1,"ts":5},
{"name":"f","ph":"E","pid":1,"tid":1,"ts":6},
{"name":"main","ph":"E","pid":1,"tid":1,"ts":10}
]"#;
        let s = summarise(text);
        assert_eq!(s.function("main").map(|f| f.self_ns), Some(6_000));
        assert_eq!(s.function("f").map(|f| f.self_ns), Some(2_000));
    }

    /// Self time per name computed from all spans at once: sorted by start
    /// (then longer first), nested with a stack.
    fn reference_self_times(spans: &[(i64, i64, String)]) -> BTreeMap<String, i64> {
        let mut order: Vec<usize> = (0..spans.len()).collect();
        order.sort_by(|&a, &b| {
            spans[a]
                .0
                .cmp(&spans[b].0)
                .then(spans[b].1.cmp(&spans[a].1))
        });
        let mut inner = vec![0; spans.len()];
        let mut open: Vec<usize> = Vec::new();
        for index in order {
            while open.last().is_some_and(|&p| spans[p].1 <= spans[index].0) {
                open.pop();
            }
            if let Some(&parent) = open.last() {
                inner[parent] += spans[index].1 - spans[index].0;
            }
            open.push(index);
        }
        let mut by_name = BTreeMap::new();
        for (span, inner) in spans.iter().zip(inner) {
            *by_name.entry(span.2.clone()).or_default() += span.1 - span.0 - inner;
        }
        by_name
    }

    /// Self time per name, in ns, as summary finds it in the trace of
    /// `lines` and as [`reference_self_times`] finds it in `spans` (times
    /// in microseconds).
    fn self_times_and_reference(
        lines: &[String],
        spans: &[(i64, i64, String)],
    ) -> (BTreeMap<String, i64>, BTreeMap<String, i64>) {
        let summary = summarise(&format!("[\n{}\n]", lines.join(",\n")));
        let found = summary
            .functions
            .iter()
            .map(|f| (f.name.clone(), f.self_ns))
            .collect();
        let expected = reference_self_times(spans)
            .into_iter()
            .map(|(name, micros)| (name, micros * 1000))
            .collect();
        (found, expected)
    }

    /// A pseudo-random tree of calls on one thread: `(start, end, name)`
    /// of each, in the order they end.
    fn calls(seed: &mut u64, count: usize) -> Vec<(i64, i64, String)> {
        let mut next = || {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed
        };
        let (mut now, mut open, mut done) = (0i64, Vec::new(), Vec::new());
        while done.len() < count {
            now += 1 + (next() % 3) as i64;
            if open.is_empty() || (open.len() < 6 && next() % 2 == 0) {
                open.push((now, format!("f{}", next() % 4)));
            } else {
                let (start, name) = open.pop().expect("open call");
                done.push((start, now, name));
            }
        }
        while let Some((start, name)) = open.pop() {
            now += 1;
            done.push((start, now, name));
        }
        done
    }

    #[test]
    fn self_times_match_nesting_all_spans_at_once_in_every_order() {
        let mut seed = 0x2545_f491_4f6c_dd1d;
        for round in 0..60 {
            let spans = calls(&mut seed, 40);
            let x = |&(start, end, ref name): &(i64, i64, String)| {
                format!(
                    r#"{{"name":"{name}","ph":"X","pid":1,"tid":1,"ts":{start},"dur":{}}}"#,
                    end - start
                )
            };
            let mut lines: Vec<String> = Vec::new();
            match round % 4 {
                // B/E in time order.
                0 => {
                    let mut edges: Vec<(i64, bool, &str)> = Vec::new();
                    for (start, end, name) in &spans {
                        edges.push((*start, true, name));
                        edges.push((*end, false, name));
                    }
                    // At one time, ends before begins.
                    edges.sort_by_key(|&(at, begin, _)| (at, begin));
                    for (at, begin, name) in edges {
                        let ph = if begin { "B" } else { "E" };
                        lines.push(format!(
                            r#"{{"name":"{name}","ph":"{ph}","pid":1,"tid":1,"ts":{at}}}"#
                        ));
                    }
                }
                // X in the order they end, as a runtime writes them.
                1 => lines.extend(spans.iter().map(x)),
                // Some B/E, some X, each written when it happens: an X
                // after the spans it encloses.
                3 => {
                    let mut written: Vec<((i64, usize), String)> = Vec::new();
                    for (at, (start, end, name)) in spans.iter().enumerate() {
                        if (start ^ end) % 3 == 0 {
                            written.push(((*end, at), x(&spans[at])));
                            continue;
                        }
                        for (ts, ph) in [(start, "B"), (end, "E")] {
                            written.push((
                                (*ts, at),
                                format!(
                                    r#"{{"name":"{name}","ph":"{ph}","pid":1,"tid":1,"ts":{ts}}}"#
                                ),
                            ));
                        }
                    }
                    written.sort();
                    lines.extend(written.into_iter().map(|(_, line)| line));
                }
                // X in the order they start.
                _ => {
                    let mut sorted = spans.clone();
                    sorted.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
                    lines.extend(sorted.iter().map(x));
                }
            }
            let (found, expected) = self_times_and_reference(&lines, &spans);
            assert_eq!(found, expected, "round {round}:\n{}", lines.join("\n"));
        }
    }

    #[test]
    fn x_events_in_any_order_give_the_self_times_of_their_nesting() {
        // Three spans nested outer > late > c1, in each of the six orders.
        let spans = [(0, 100, "outer"), (5, 50, "late"), (10, 20, "c1")];
        let orders = [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ];
        for order in orders {
            let lines: Vec<String> = order
                .iter()
                .map(|&i| {
                    let (start, end, name) = spans[i];
                    let dur = end - start;
                    format!(
                        r#"{{"name":"{name}","ph":"X","pid":1,"tid":1,"ts":{start},"dur":{dur}}}"#
                    )
                })
                .collect();
            let text = format!("[\n{}\n]", lines.join(",\n"));
            let trace = parse_trace(&text).expect("readable trace");
            let s = summary(&trace);
            let self_us = |name: &str| s.function(name).map(|f| f.self_ns / 1000);
            assert_eq!(
                (self_us("outer"), self_us("late"), self_us("c1")),
                (Some(55), Some(35), Some(10)),
                "order {order:?}"
            );
            // Streaming alone says when it could not nest them.
            let mut streaming = Summarizer::new();
            for event in &trace.events {
                streaming.push(event);
            }
            let exact = streaming.is_exact();
            let streamed = streaming.finish();
            if exact {
                assert_eq!(streamed.functions, s.functions, "order {order:?}");
            }
        }
        // c1, outer, late: outer drops c1 before late comes inside it.
        let mut streaming = Summarizer::new();
        for (start, end, name) in [(10, 20, "c1"), (0, 100, "outer"), (5, 50, "late")] {
            let event = parse_trace(&format!(
                r#"[{{"name":"{name}","ph":"X","pid":1,"tid":1,"ts":{start},"dur":{}}}]"#,
                end - start
            ))
            .expect("one event")
            .events
            .remove(0);
            streaming.push(&event);
        }
        assert!(!streaming.is_exact());
    }

    #[test]
    fn x_events_shuffled_give_the_self_times_of_their_nesting() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        for round in 0..40 {
            let spans = calls(&mut seed, 30);
            let mut lines: Vec<String> = spans
                .iter()
                .map(|(start, end, name)| {
                    format!(
                        r#"{{"name":"{name}","ph":"X","pid":1,"tid":1,"ts":{start},"dur":{}}}"#,
                        end - start
                    )
                })
                .collect();
            // Fisher-Yates with the same generator.
            for i in (1..lines.len()).rev() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                lines.swap(i, (seed % (i as u64 + 1)) as usize);
            }
            let (found, expected) = self_times_and_reference(&lines, &spans);
            assert_eq!(found, expected, "round {round}:\n{}", lines.join("\n"));
            // Streaming alone is right whenever it says it is exact.
            let trace = parse_trace(&format!("[\n{}\n]", lines.join(",\n"))).expect("trace");
            let mut streaming = Summarizer::new();
            for event in &trace.events {
                streaming.push(event);
            }
            if streaming.is_exact() {
                let streamed: BTreeMap<String, i64> = streaming
                    .finish()
                    .functions
                    .iter()
                    .map(|f| (f.name.clone(), f.self_ns))
                    .collect();
                assert_eq!(streamed, expected, "round {round}, streamed");
            }
        }
    }

    #[test]
    fn an_x_among_spans_seconds_apart_takes_those_after_its_start() {
        // Starts more than 2^32 ns apart, and a span longer than that:
        // runs of them are split rather than merged.
        let spans: Vec<(i64, i64, String)> = [
            (0, 20_000_000, "main"),
            (1, 2, "a"),
            (5_000_000, 5_000_001, "b"),
            (10_000_000, 10_000_002, "c"),
            (4_000_000, 10_500_000, "phase"),
            (11_000_000, 16_000_000, "d"),
            (10_900_000, 17_000_000, "late"),
        ]
        .iter()
        .map(|&(start, end, name)| (start, end, name.to_string()))
        .collect();
        let line = |name: &str, ph: &str, ts: i64| {
            format!(r#"{{"name":"{name}","ph":"{ph}","pid":1,"tid":1,"ts":{ts}}}"#)
        };
        let mut lines = vec![line("main", "B", 0)];
        for (start, end, name) in &spans[1..] {
            if name == "phase" || name == "late" {
                lines.push(format!(
                    r#"{{"name":"{name}","ph":"X","pid":1,"tid":1,"ts":{start},"dur":{}}}"#,
                    end - start
                ));
            } else {
                lines.push(line(name, "B", *start));
                lines.push(line(name, "E", *end));
            }
        }
        lines.push(line("main", "E", 20_000_000));
        let (found, expected) = self_times_and_reference(&lines, &spans);
        assert_eq!(found, expected);
        assert_eq!(found["phase"], 6_499_997_000);
    }

    #[test]
    fn a_span_that_begins_and_ends_with_its_caller_is_its_child() {
        let text = r#"[
{"name":"main","ph":"B","pid":1,"tid":1,"ts":0},
{"name":"f","ph":"B","pid":1,"tid":1,"ts":0},
{"name":"f","ph":"E","pid":1,"tid":1,"ts":3},
{"name":"main","ph":"E","pid":1,"tid":1,"ts":3}
]"#;
        let s = summarise(text);
        assert_eq!(s.function("main").map(|f| f.self_ns), Some(0));
        assert_eq!(s.function("f").map(|f| f.self_ns), Some(3_000));
        // Two children from the caller's begin to its end.
        let text = r#"[
{"name":"main","ph":"B","pid":1,"tid":1,"ts":0},
{"name":"step","ph":"B","pid":1,"tid":1,"ts":0},
{"name":"step","ph":"E","pid":1,"tid":1,"ts":1},
{"name":"step","ph":"B","pid":1,"tid":1,"ts":1},
{"name":"step","ph":"E","pid":1,"tid":1,"ts":3},
{"name":"main","ph":"E","pid":1,"tid":1,"ts":3}
]"#;
        let s = summarise(text);
        assert_eq!(s.function("main").map(|f| f.self_ns), Some(0));
        assert_eq!(s.function("step").map(|f| f.self_ns), Some(3_000));
    }

    #[test]
    fn recursive_calls_count_at_every_level() {
        let text = r#"[
{"name":"f","ph":"B","pid":1,"tid":1,"ts":0},
{"name":"f","ph":"B","pid":1,"tid":1,"ts":2},
{"name":"f","ph":"E","pid":1,"tid":1,"ts":8},
{"name":"f","ph":"E","pid":1,"tid":1,"ts":10}
]"#;
        let f = summarise(text).functions[0].clone();
        assert_eq!((f.calls, f.total_ns, f.self_ns), (2, 16_000, 10_000));
    }

    #[test]
    fn back_to_back_spans_are_siblings() {
        let text = r#"[
{"name":"p","ph":"X","pid":1,"tid":1,"ts":0,"dur":10},
{"name":"a","ph":"X","pid":1,"tid":1,"ts":0,"dur":5},
{"name":"b","ph":"X","pid":1,"tid":1,"ts":5,"dur":5}
]"#;
        let s = summarise(text);
        assert_eq!(s.function("p").map(|p| p.self_ns), Some(0));
        assert_eq!(s.function("a").map(|a| a.self_ns), Some(5_000));
        assert_eq!(s.function("b").map(|b| b.self_ns), Some(5_000));
    }

    #[test]
    fn async_spans_count_their_whole_duration_as_self_time() {
        let text = r#"[
{"name":"req","cat":"io","ph":"b","id":1,"pid":1,"tid":1,"ts":0},
{"name":"work","ph":"X","pid":1,"tid":1,"ts":1,"dur":2},
{"name":"req","cat":"io","ph":"e","id":1,"pid":1,"tid":2,"ts":10}
]"#;
        let s = summarise(text);
        let req = s.function("req").expect("req");
        assert_eq!((req.total_ns, req.self_ns), (10_000, 10_000));
    }

    #[test]
    fn open_spans_of_a_truncated_trace_are_not_counted() {
        let text = "[\n{\"name\":\"main\",\"ph\":\"B\",\"pid\":1,\"tid\":1,\"ts\":0},\n{\"name\":\"f\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},\n";
        let s = summarise(text);
        assert_eq!(s.open_spans, 1);
        assert_eq!(s.truncated_traces, 1);
        assert!(s.function("main").is_none());
        let shown = s.to_string();
        assert!(shown.contains("note: the trace is truncated"), "{shown}");
        assert!(shown.contains("note: 1 span never ended and is not counted"));
    }

    #[test]
    fn events_that_make_no_span_are_counted_and_said() {
        let text = r#"[
{"name":"ok","ph":"X","pid":1,"tid":1,"ts":0,"dur":1},
{"name":"stray","ph":"E","pid":1,"tid":1,"ts":2},
{"name":"a","ph":"B","pid":1,"tid":1,"ts":3},
{"name":"b","ph":"E","pid":1,"tid":1,"ts":4},
{"name":"back","ph":"B","pid":1,"tid":2,"ts":9},
{"name":"back","ph":"E","pid":1,"tid":2,"ts":5},
{"name":"neg","ph":"X","pid":1,"tid":1,"ts":6,"dur":-1},
{"name":"r","cat":"c","ph":"e","id":7,"pid":1,"tid":1,"ts":8}
]"#;
        let s = summarise(text);
        // stray E 1, a/b 2, back 2, neg 1, the async end 1.
        assert_eq!(s.uncounted_events, 7);
        assert_eq!(s.open_spans, 0);
        assert_eq!(s.function("ok").map(|f| f.calls), Some(1));
        assert!(s.function("a").is_none() && s.function("back").is_none());
        let shown = s.to_string();
        assert!(
            shown.contains("note: 7 events make no span and are not counted"),
            "{shown}"
        );
        assert_eq!(s.to_json()["uncounted_events"], 7);
        let clean = summarise(r#"[{"name":"f","ph":"X","pid":1,"tid":1,"ts":0,"dur":4}]"#);
        assert_eq!(clean.uncounted_events, 0);
        assert!(!clean.to_string().contains("no span"));
    }

    #[test]
    fn several_traces_merge_as_processes() {
        let a = parse_trace(r#"[{"name":"f","ph":"X","pid":1,"tid":1,"ts":0,"dur":4}]"#)
            .expect("valid trace");
        let b = parse_trace(r#"[{"name":"f","ph":"X","pid":2,"tid":2,"ts":10,"dur":6}]"#)
            .expect("valid trace");
        let s = summarize([&a, &b]);
        assert_eq!(s.traces, 2);
        assert_eq!(s.processes, 2);
        assert_eq!(s.threads.len(), 2);
        assert_eq!(s.span_ns(), Some(16_000));
        let f = s.function("f").expect("f");
        assert_eq!((f.calls, f.total_ns), (2, 10_000));
    }

    #[test]
    fn percentiles_are_durations_of_spans_by_nearest_rank() {
        let lines: Vec<String> = (1..=200)
            .map(|k| format!(r#"{{"name":"f","ph":"X","pid":1,"tid":{k},"ts":0,"dur":{k}}}"#))
            .collect();
        let trace = parse_trace(&format!("[\n{}\n]", lines.join(",\n"))).expect("valid trace");
        let mut summarizer = Summarizer::with_percentiles();
        for event in &trace.events {
            summarizer.push(event);
        }
        summarizer.end_trace(false);
        let s = summarizer.finish();
        let p = s.functions[0].percentiles.expect("percentiles kept");
        assert_eq!((p.p50_ns, p.p90_ns, p.p99_ns), (100_000, 180_000, 198_000));
        assert!(summary(&trace).functions[0].percentiles.is_none());
        let csv = s.to_csv();
        assert_eq!(
            csv.lines().nth(1),
            Some("f,200,20100000,20100000,1000,100500,200000,100000,180000,198000")
        );
        assert_eq!(s.to_json()["functions"][0]["mean_ns"], 100_500);
    }

    #[test]
    fn table_is_aligned_and_stable() {
        let text = r#"[
{"name":"main","ph":"X","pid":1,"tid":1,"ts":0,"dur":1500},
{"name":"compute_step","ph":"X","pid":1,"tid":1,"ts":100,"dur":250.5}
]"#;
        let expected = "\
processes: 1, threads: 1, events: 2, time span: 1500.000 us

function      calls  total (us)  self (us)  min (us)  mean (us)  max (us)
main              1    1500.000   1249.500  1500.000   1500.000  1500.000
compute_step      1     250.500    250.500   250.500    250.500   250.500

pid  tid  events  thread
  1    1       2
";
        assert_eq!(summarise(text).to_string(), expected);
    }
}

//! Per-function and per-thread statistics of one or more traces.
//!
//! A *span* is a matched `B`/`E` pair, an `X` event, or a matched `b`/`e`
//! pair. Spans on one thread (`B`/`E` and `X`) nest by time: the self time
//! of a span is its duration less the time covered by the spans directly
//! inside it. Asynchronous spans (`b`/`e`) do not nest, so their self time
//! is their whole duration. A function that calls itself contributes every
//! level of the recursion to its total.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::event::{Event, Phase};
use crate::read::Trace;
use crate::spans::{match_events, Mismatch, Thread};

/// Statistics of all spans with one name. Times are in nanoseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
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
        self.total_ns = self.total_ns.saturating_add(duration);
        self.self_ns = self.self_ns.saturating_add(self_time);
    }
}

/// Event counts of one thread.
#[derive(Debug, Clone, PartialEq, Eq)]
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
#[derive(Debug, Clone, PartialEq, Default)]
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
}

/// Summarises one trace.
pub fn summary(trace: &Trace) -> Summary {
    summarize(std::slice::from_ref(trace))
}

/// Summarises several traces together, as the processes of one run.
///
/// Spans are matched within each trace; statistics of the same name are
/// merged across traces.
pub fn summarize<'a>(traces: impl IntoIterator<Item = &'a Trace>) -> Summary {
    let mut result = Summary::default();
    let mut functions: BTreeMap<String, FunctionStats> = BTreeMap::new();
    let mut threads: Vec<ThreadStats> = Vec::new();

    for trace in traces {
        result.traces += 1;
        if trace.truncated {
            result.truncated_traces += 1;
        }
        add_spans(trace, &mut functions, &mut result.open_spans);
        add_counts(trace, &mut result, &mut threads);
    }

    result.functions = functions.into_values().collect();
    result.functions.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    threads.sort_by_key(|thread| (thread.pid, thread.tid));
    result.threads = threads;
    result
}

/// A completed span of one trace.
struct Span<'a> {
    name: &'a str,
    start: i64,
    end: i64,
    /// The thread, for spans that nest (`B`/`E` and `X`).
    nested_on: Option<Thread>,
}

fn add_spans(
    trace: &Trace,
    functions: &mut BTreeMap<String, FunctionStats>,
    open_spans: &mut usize,
) {
    let events = &trace.events;
    let matching = match_events(events);
    *open_spans += matching
        .mismatches
        .iter()
        .filter(|m| {
            matches!(
                m,
                Mismatch::Unclosed { .. } | Mismatch::AsyncUnclosed { .. }
            )
        })
        .count();

    let mut spans: Vec<Span> = Vec::new();
    for pair in &matching.pairs {
        let (begin, end) = (&events[pair.begin], &events[pair.end]);
        if let (Some(start), Some(stop)) = (begin.ts_ns, end.ts_ns) {
            if stop >= start {
                spans.push(Span {
                    name: span_name(begin),
                    start,
                    end: stop,
                    nested_on: if pair.nested { begin.thread() } else { None },
                });
            }
        }
    }
    for event in events {
        if event.ph != Some(Phase::Complete) {
            continue;
        }
        // A complete event without a usable duration ends where it starts
        // (`end_ns`) and is no span.
        if let (Some(start), Some(end)) = (event.ts_ns, event.end_ns()) {
            if event.dur_ns.is_some_and(|d| d >= 0) {
                spans.push(Span {
                    name: span_name(event),
                    start,
                    end,
                    nested_on: event.thread(),
                });
            }
        }
    }

    let nested_time = time_in_children(&spans);
    for (span, inner) in spans.iter().zip(nested_time) {
        let duration = span.end - span.start;
        let self_time = (duration - inner).max(0);
        functions
            .entry(span.name.to_string())
            .or_insert_with(|| FunctionStats::new(span.name))
            .add(duration, self_time);
    }
}

fn span_name(event: &Event) -> &str {
    event.name.as_deref().unwrap_or("(unnamed)")
}

/// For each span, the time covered by the spans directly inside it on the
/// same thread.
fn time_in_children(spans: &[Span]) -> Vec<i64> {
    let mut inner = vec![0; spans.len()];
    let mut by_thread: BTreeMap<Thread, Vec<usize>> = BTreeMap::new();
    for (index, span) in spans.iter().enumerate() {
        if let Some(thread) = span.nested_on {
            by_thread.entry(thread).or_default().push(index);
        }
    }
    for mut order in by_thread.into_values() {
        // Outer spans first: earlier start, then later end.
        order.sort_by(|&a, &b| {
            spans[a]
                .start
                .cmp(&spans[b].start)
                .then_with(|| spans[b].end.cmp(&spans[a].end))
        });
        let mut open: Vec<usize> = Vec::new();
        for index in order {
            let span = &spans[index];
            while open
                .last()
                .is_some_and(|&parent| spans[parent].end <= span.start)
            {
                open.pop();
            }
            if let Some(&parent) = open.last() {
                let covered = span.end.min(spans[parent].end) - span.start;
                inner[parent] += covered.max(0);
            }
            open.push(index);
        }
    }
    inner
}

fn add_counts(trace: &Trace, result: &mut Summary, threads: &mut Vec<ThreadStats>) {
    let mut names: BTreeMap<Thread, String> = BTreeMap::new();
    for event in &trace.events {
        if event.is_metadata() && event.name.as_deref() == Some("thread_name") {
            if let (Some(thread), Some(name)) = (event.thread(), event.args["name"].as_str()) {
                names.insert(thread, name.to_string());
            }
        }
    }

    let mut counts: BTreeMap<Thread, usize> = BTreeMap::new();
    let mut pids = BTreeSet::new();
    for event in trace.non_metadata() {
        result.events += 1;
        if let Some(pid) = event.pid {
            pids.insert(pid);
        }
        if let Some(thread) = event.thread() {
            *counts.entry(thread).or_default() += 1;
        }
        if let (Some(start), Some(end)) = (event.ts_ns, event.end_ns()) {
            result.start_ns = Some(result.start_ns.map_or(start, |s| s.min(start)));
            result.end_ns = Some(result.end_ns.map_or(end, |e| e.max(end)));
        }
    }
    result.processes += pids.len();
    threads.extend(counts.into_iter().map(|((pid, tid), events)| ThreadStats {
        pid,
        tid,
        name: names.get(&(pid, tid)).cloned(),
        events,
    }));
}

/// Formats nanoseconds as microseconds with three decimals, exactly.
pub(crate) fn micros(nanos: i64) -> String {
    let sign = if nanos < 0 { "-" } else { "" };
    let magnitude = nanos.unsigned_abs();
    format!("{sign}{}.{:03}", magnitude / 1000, magnitude % 1000)
}

/// Writes rows as columns separated by two spaces; `right[i]` right-aligns
/// column `i`. Trailing spaces are not written.
fn write_table(
    f: &mut fmt::Formatter<'_>,
    header: &[&str],
    right: &[bool],
    rows: &[Vec<String>],
) -> fmt::Result {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
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

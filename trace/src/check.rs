//! Structural validation of a [`Trace`].

mod overlap;

use foldhash::HashMap;
use std::fmt;

use crate::event::{json_kind, Event, Phase};
use crate::read::Trace;
use crate::spans::{Matched, Matcher, Mismatch, Seen, Thread};
use crate::summary::micros;

/// What kind of problem a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProblemKind {
    /// The trace text ended before the trace was closed.
    Truncated,
    /// A required field is absent.
    MissingField,
    /// A field has the wrong JSON type.
    WrongType,
    /// The `ph` code is not one the Chrome trace format defines.
    UnknownPhase,
    /// An `E` event with no open `B` on its thread.
    EndWithoutBegin,
    /// An `E` event that closes an outer `B` while an inner one is open.
    OutOfOrder,
    /// An `E` event whose name differs from that of the open `B`.
    NameMismatch,
    /// A `B` event never closed by an `E`.
    Unclosed,
    /// A `B`/`E` timestamp earlier than the previous one on its thread,
    /// other than the begin of a slice written at its end (a `B` directly
    /// followed on its thread by its `E`).
    TimeGoesBackwards,
    /// A span (a `B`/`E` pair or an `X`) that overlaps another span of its
    /// thread without enclosing it or lying within it.
    Overlap,
    /// An `e` event that no `b` of the same pid, category, id and name, at
    /// or before its time, pairs with.
    AsyncEndWithoutBegin,
    /// A `b` event never closed by an `e`.
    AsyncUnclosed,
    /// An `X` event with a negative `dur`.
    NegativeDuration,
}

/// One thing wrong with a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The index of the event in [`Trace::events`]; `None` for problems
    /// with the trace as a whole.
    pub index: Option<usize>,
    /// The 1-based line of the trace text the problem is on, if known.
    pub line: Option<usize>,
    /// What kind of problem this is.
    pub kind: ProblemKind,
    /// A description for people.
    pub message: String,
}

impl fmt::Display for Problem {
    /// Formats as `INDEX: MESSAGE`, or just the message for problems with
    /// the trace as a whole.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(index) => write!(f, "{}: {}", index, self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Options for [`check_with`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckOptions {
    /// Accept a truncated trace: do not report the truncation itself, nor
    /// `B` and `b` events left open when the trace ends (a program killed
    /// mid-run has spans that never ended).
    pub allow_truncated: bool,
}

/// Validates the structure of `trace` with the default options.
///
/// See [`check_with`].
pub fn check(trace: &Trace) -> Vec<Problem> {
    check_with(trace, &CheckOptions::default())
}

/// Validates the structure of `trace`:
///
/// * required fields are present and have the right types;
/// * every `B` is closed by an `E` on the same thread, in stack order, with
///   the same name (an `E` without a name closes the innermost `B`);
/// * `B`/`E` timestamps do not decrease on any thread, except that a slice
///   may be written when it ends, as compact writers do: a `B` directly
///   followed on its thread by its `E` may be earlier than what precedes
///   it (Perfetto sorts by time);
/// * the spans of a thread (`B`/`E` pairs and `X` events) nest: two of them
///   either do not overlap or one lies within the other;
/// * `b`/`e` events pair up by pid, category, id and name, an `e` at or
///   after its `b` whatever their order in the file;
/// * `X` events have a non-negative `dur`;
/// * the trace is not truncated (unless allowed by `options`).
///
/// Problems are ordered by event index; problems with the whole trace come
/// last. [`Checker`] does the same one event at a time.
pub fn check_with(trace: &Trace, options: &CheckOptions) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut checker = Checker::new(*options);
    for event in &trace.events {
        checker.push(event, &mut |problem| problems.push(problem));
    }
    checker.finish(trace.truncated, trace.partial_line, &mut |problem| {
        problems.push(problem)
    });
    problems.sort_by_key(|problem| problem.index.unwrap_or(usize::MAX));
    problems
}

/// Checks a trace one event at a time, as [`check_with`] does, holding only
/// what is open: the `B`s not yet closed, the `b`s and `e`s not yet paired,
/// the last `B`/`E` of each thread (and a `B` earlier than it, until the
/// next `B`/`E` says whether it is a slice written at its end), and the
/// outermost spans of each thread that a span read later may enclose (see
/// `check/overlap.rs`: at most 8,192 a thread one by one, older ones merged
/// into one range).
///
/// Problems are reported as they are found: those about one event when it
/// is pushed, those about what was never closed or paired (and the
/// truncation) by [`Checker::finish`].
#[derive(Debug)]
pub struct Checker {
    options: CheckOptions,
    /// The index of the next event.
    index: usize,
    /// Non-metadata events so far.
    events: usize,
    matcher: Matcher,
    /// The last `B`/`E` of each thread.
    last: HashMap<Thread, LastOnThread>,
    /// The outermost spans of each thread, for [`ProblemKind::Overlap`].
    outermost: HashMap<Thread, overlap::Outermost>,
}

impl Checker {
    /// A checker for one trace.
    pub fn new(options: CheckOptions) -> Checker {
        Checker {
            options,
            index: 0,
            events: 0,
            matcher: Matcher::default(),
            last: HashMap::default(),
            outermost: HashMap::default(),
        }
    }

    /// Checks the next event of the trace.
    pub fn push(&mut self, event: &Event, report: &mut dyn FnMut(Problem)) {
        let index = self.index;
        self.index += 1;
        if !event.is_metadata() {
            self.events += 1;
        }
        check_fields(index, event, report);
        self.check_time_order(index, event, report);
        let mut span = None;
        self.matcher
            .push(index, event, &mut |matched| match matched {
                Matched::Mismatch(mismatch) => {
                    if let Some(problem) = describe(&mismatch, false) {
                        report(problem);
                    }
                }
                Matched::Pair {
                    begin,
                    end_ts_ns: Some(end),
                    nested: true,
                    ..
                } => {
                    if let (Some(thread), Some(start)) = (begin.thread, begin.ts_ns) {
                        span = Some((thread, start, end, Some(begin)));
                    }
                }
                Matched::Pair { .. } => {}
            });
        if event.ph == Some(Phase::Complete) && event.dur_ns.is_some_and(|d| d >= 0) {
            if let (Some(thread), Some(start), Some(end)) =
                (event.thread(), event.ts_ns, event.end_ns())
            {
                span = Some((thread, start, end, None));
            }
        }
        if let Some((thread, start, end, begun)) = span {
            // A span closed inside an open `B` lies within it: checked,
            // not kept.
            let keep = self.matcher.open_on(thread).is_empty();
            let outermost = self.outermost.entry(thread).or_default();
            if let Some(other) = outermost.add(start, end, index, keep) {
                // Described only when reported: nothing is allocated per span.
                let what = match begun {
                    Some(begin) => format!("{} (event {}) closed here", begin.label(), begin.index),
                    None => event.label(),
                };
                report(Problem {
                    index: Some(index),
                    line: Some(event.line),
                    kind: ProblemKind::Overlap,
                    message: format!(
                        "{what}, from ts {} to {} on {}, overlaps the span ended by event {} (ts {} to {}) without lying within it or enclosing it; the spans of a thread must nest",
                        micros(start),
                        micros(end),
                        thread_name(thread),
                        other.index,
                        micros(other.start),
                        micros(other.end)
                    ),
                });
            }
        }
    }

    /// Ends the trace, reporting what was left open and, unless allowed,
    /// the truncation. `truncated` and `partial_line` are those of the
    /// trace the events came from.
    pub fn finish(
        self,
        truncated: bool,
        partial_line: Option<usize>,
        report: &mut dyn FnMut(Problem),
    ) {
        for (thread, last) in &self.last {
            if let Some(held) = &last.held {
                report(held.problem(*thread));
            }
        }
        let tolerate_open = self.options.allow_truncated && truncated;
        self.matcher.finish(&mut |matched| {
            if let Matched::Mismatch(mismatch) = matched {
                if let Some(problem) = describe(&mismatch, tolerate_open) {
                    report(problem);
                }
            }
        });
        if truncated && !self.options.allow_truncated {
            let recovered = self.events;
            let mut message = format!(
                "the trace is truncated (it ends before its closing bracket, or a Perfetto trace before the runtime's closing record); {} complete event{} recovered",
                recovered,
                if recovered == 1 { " was" } else { "s were" }
            );
            if let Some(line) = partial_line {
                message.push_str(&format!(
                    ", and the incomplete data from line {line} on was dropped"
                ));
            }
            report(Problem {
                index: None,
                line: partial_line,
                kind: ProblemKind::Truncated,
                message,
            });
        }
    }

    fn check_time_order(&mut self, index: usize, event: &Event, report: &mut dyn FnMut(Problem)) {
        if !matches!(event.ph, Some(Phase::Begin | Phase::End)) {
            return;
        }
        let (Some(thread), Some(ts)) = (event.thread(), event.ts_ns) else {
            return;
        };
        let last = self.last.entry(thread).or_default();
        let begin = event.ph == Some(Phase::Begin);
        let held = last.held.take();
        // A slice written at its end: its begin and end in turn, after the
        // slices it encloses (Perfetto sorts by time).
        let written_at_its_end = held.as_ref().is_some_and(|held| {
            let closes = event.name.is_none() || event.name.as_deref() == Some(&held.name);
            !begin && closes && ts >= held.ts
        });
        if let (false, Some(held)) = (written_at_its_end, held) {
            report(held.problem(thread));
            last.ts = Some(held.ts);
            last.index = held.index;
            last.begin = true;
            last.named = true;
            last.name.clear();
            last.name.push_str(&held.name);
        }
        let earlier = last
            .ts
            .filter(|&previous| ts < previous && !written_at_its_end);
        if let Some(previous_ts) = earlier {
            if begin {
                // Reported unless its end comes next on the thread.
                last.held = Some(Held {
                    index,
                    line: event.line,
                    ts,
                    name: event.name.clone().unwrap_or_default(),
                    label: event.label(),
                    previous: format!("{} (event {})", last.label(), last.index),
                    previous_ts,
                });
                return;
            }
            report(Problem {
                index: Some(index),
                line: Some(event.line),
                kind: ProblemKind::TimeGoesBackwards,
                message: format!(
                    "{} at ts {} is earlier than {} (event {}) at ts {} on {}; B/E timestamps must not decrease on a thread",
                    event.label(),
                    micros(ts),
                    last.label(),
                    last.index,
                    micros(previous_ts),
                    thread_name(thread)
                ),
            });
        }
        // After a slice written at its end, the thread's time is the later
        // of its end and what came before it.
        last.ts = if written_at_its_end {
            last.ts.max(Some(ts))
        } else {
            Some(ts)
        };
        last.index = index;
        last.begin = begin;
        // The name's buffer is reused: nothing is allocated per event.
        last.name.clear();
        last.named = event.name.is_some();
        last.name.push_str(event.name.as_deref().unwrap_or(""));
    }
}

/// The last `B`/`E` event of a thread, for the message when the next one
/// is earlier.
#[derive(Debug, Default)]
struct LastOnThread {
    ts: Option<i64>,
    index: usize,
    begin: bool,
    named: bool,
    name: String,
    /// A `B` earlier than `ts`, fine if its `E` comes next.
    held: Option<Held>,
}

/// A `B` stamped before the previous `B`/`E` of its thread: the begin of a
/// slice written at its end when its `E` directly follows, else a
/// [`ProblemKind::TimeGoesBackwards`].
#[derive(Debug)]
struct Held {
    index: usize,
    line: usize,
    ts: i64,
    name: String,
    label: String,
    /// The event before it, for the message.
    previous: String,
    previous_ts: i64,
}

impl Held {
    fn problem(&self, thread: Thread) -> Problem {
        Problem {
            index: Some(self.index),
            line: Some(self.line),
            kind: ProblemKind::TimeGoesBackwards,
            message: format!(
                "{} at ts {} is earlier than {} at ts {} on {}, and its E does not follow it; B/E timestamps must not decrease on a thread, except for a slice written at its end (a B directly followed by its E)",
                self.label,
                micros(self.ts),
                self.previous,
                micros(self.previous_ts),
                thread_name(thread)
            ),
        }
    }
}

impl LastOnThread {
    fn label(&self) -> String {
        let code = if self.begin { "B" } else { "E" };
        if self.named {
            format!("{code} \"{}\"", self.name)
        } else {
            code.to_string()
        }
    }
}

/// Which fields an event of each phase must have.
struct Required {
    name: bool,
    tid: bool,
    ts: bool,
    dur: bool,
    id: bool,
    args: bool,
}

fn required(phase: &Phase) -> Required {
    let mut required = Required {
        name: true,
        tid: true,
        ts: true,
        dur: false,
        id: false,
        args: false,
    };
    match phase {
        // An `E` closes whatever is innermost; its name is optional.
        Phase::End => required.name = false,
        Phase::Complete => required.dur = true,
        Phase::AsyncBegin
        | Phase::AsyncInstant
        | Phase::AsyncEnd
        | Phase::FlowStart
        | Phase::FlowStep
        | Phase::FlowEnd => required.id = true,
        Phase::Counter => {
            required.tid = false;
            required.args = true;
        }
        Phase::Metadata => {
            required.tid = false;
            required.ts = false;
            required.args = true;
        }
        Phase::Begin | Phase::Instant => {}
        Phase::Other(_) => {
            required.name = false;
            required.tid = false;
            required.ts = false;
        }
    }
    required
}

fn check_fields(index: usize, event: &Event, problems: &mut dyn FnMut(Problem)) {
    let mut report = |kind, message: String| {
        problems(Problem {
            index: Some(index),
            line: Some(event.line),
            kind,
            message,
        })
    };
    for error in &event.field_errors {
        report(
            ProblemKind::WrongType,
            format!("{} {}", event.label(), error),
        );
    }

    let Some(phase) = &event.ph else {
        if !event.has_field_error("ph") {
            report(
                ProblemKind::MissingField,
                "event has no \"ph\" field".to_string(),
            );
        }
        return;
    };
    if !phase.is_known() {
        report(
            ProblemKind::UnknownPhase,
            format!("{} has an unknown phase \"{}\"", event.label(), phase),
        );
    }

    let required = required(phase);
    let present = [
        ("name", required.name, event.name.is_some()),
        ("pid", true, event.pid.is_some()),
        ("tid", required.tid, event.tid.is_some()),
        ("ts", required.ts, event.ts.is_some()),
        ("dur", required.dur, event.dur.is_some()),
        ("id", required.id, event.id.is_some()),
        ("args", required.args, !event.args.is_null()),
    ];
    for (field, needed, is_present) in present {
        if needed && !is_present && !event.has_field_error(field) {
            report(
                ProblemKind::MissingField,
                format!("{} has no \"{}\" field", event.label(), field),
            );
        }
    }

    if *phase == Phase::Counter {
        if let Some(values) = event.args.as_object() {
            for (series, value) in values {
                if !value.is_number() {
                    report(
                        ProblemKind::WrongType,
                        format!(
                            "{} counter value \"{}\" must be a number, found {}",
                            event.label(),
                            series,
                            json_kind(value)
                        ),
                    );
                }
            }
        }
    }

    if *phase == Phase::Complete {
        if let Some(dur) = event.dur.filter(|dur| *dur < 0.0) {
            report(
                ProblemKind::NegativeDuration,
                format!("{} has a negative \"dur\" ({})", event.label(), dur),
            );
        }
    }
}

fn thread_name((pid, tid): (i64, i64)) -> String {
    format!("pid {pid} tid {tid}")
}

/// Where an event is, for messages: `pid 1 tid 2`.
fn where_is(event: &Seen) -> String {
    event
        .thread
        .map_or_else(|| "an unknown thread".to_string(), thread_name)
}

fn async_key(event: &Seen) -> String {
    let pid = event
        .thread
        .map_or_else(String::new, |(pid, _)| format!("pid {pid}, "));
    format!(
        "{pid}cat \"{}\", id \"{}\"",
        event.cat.as_deref().unwrap_or(""),
        event.id.as_deref().unwrap_or("")
    )
}

/// Turns a mismatch into a problem, or `None` when it is tolerated:
/// `tolerate_open` accepts what a truncated trace leaves open or unpaired.
fn describe(mismatch: &Mismatch, tolerate_open: bool) -> Option<Problem> {
    let hint = |elsewhere: &Option<Seen>| match elsewhere {
        Some(other) => format!(
            "; {} (event {}) is open on {}, but a B must be closed on its own thread",
            other.label(),
            other.index,
            where_is(other)
        ),
        None => String::new(),
    };
    let (kind, message) = match mismatch {
        Mismatch::EndWithoutBegin { end, elsewhere } => (
            ProblemKind::EndWithoutBegin,
            format!(
                "{} on {} has no open B to close{}",
                end.label(),
                where_is(end),
                hint(elsewhere)
            ),
        ),
        Mismatch::OutOfOrder { end, begin, inner } => (
            ProblemKind::OutOfOrder,
            format!(
                "{} closes {} (event {}) while {} (event {}), opened after it, is still open; ends must come in the reverse order of their begins",
                end.label(),
                begin.label(),
                begin.index,
                inner.label(),
                inner.index
            ),
        ),
        Mismatch::WrongName {
            end,
            begin,
            elsewhere,
        } => (
            ProblemKind::NameMismatch,
            format!(
                "{} does not match the innermost open {} (event {}) on {}{}",
                end.label(),
                begin.label(),
                begin.index,
                where_is(end),
                hint(elsewhere)
            ),
        ),
        Mismatch::Unclosed { begin } if !tolerate_open => (
            ProblemKind::Unclosed,
            format!(
                "{} on {} is never closed by an E",
                begin.label(),
                where_is(begin)
            ),
        ),
        // In a truncated trace, the b of an e may be among what was lost:
        // each thread's events are written separately.
        Mismatch::AsyncEndWithoutBegin { end } if !tolerate_open => (
            ProblemKind::AsyncEndWithoutBegin,
            format!(
                "{} ({}) has no b with the same pid, cat, id and name at or before it",
                end.label(),
                async_key(end)
            ),
        ),
        Mismatch::AsyncUnclosed { begin } if !tolerate_open => (
            ProblemKind::AsyncUnclosed,
            format!(
                "{} ({}) is never closed by an e with the same pid, cat, id and name",
                begin.label(),
                async_key(begin)
            ),
        ),
        Mismatch::Unclosed { .. }
        | Mismatch::AsyncEndWithoutBegin { .. }
        | Mismatch::AsyncUnclosed { .. } => return None,
    };
    let at = mismatch.at();
    Some(Problem {
        index: Some(at.index),
        line: Some(at.line),
        kind,
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::parse_trace;

    fn problems(text: &str) -> Vec<Problem> {
        check(&parse_trace(text).expect("readable trace"))
    }

    fn kinds(text: &str) -> Vec<(Option<usize>, ProblemKind)> {
        problems(text)
            .into_iter()
            .map(|problem| (problem.index, problem.kind))
            .collect()
    }

    const NESTED: &str = r#"[
{"name":"process_name","ph":"M","pid":1,"tid":1,"args":{"name":"app"}},
{"name":"main","cat":"app","ph":"B","pid":1,"tid":1,"ts":100},
{"name":"solve","cat":"app","ph":"B","pid":1,"tid":1,"ts":110},
{"name":"step","cat":"app","ph":"B","pid":1,"tid":1,"ts":120},
{"name":"step","cat":"app","ph":"E","pid":1,"tid":1,"ts":130},
{"name":"solve","cat":"app","ph":"E","pid":1,"tid":1,"ts":150},
{"name":"worker","cat":"app","ph":"B","pid":1,"tid":2,"ts":105},
{"name":"worker","cat":"app","ph":"E","pid":1,"tid":2,"ts":105},
{"name":"main","cat":"app","ph":"E","pid":1,"tid":1,"ts":200}
]"#;

    #[test]
    fn valid_nested_trace_passes() {
        assert_eq!(problems(NESTED), []);
    }

    #[test]
    fn end_without_begin_is_reported() {
        let text = r#"[
{"name":"a","ph":"E","pid":1,"tid":1,"ts":1}
]"#;
        let found = problems(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, ProblemKind::EndWithoutBegin);
        assert_eq!(found[0].index, Some(0));
        assert_eq!(found[0].line, Some(2));
        assert_eq!(
            found[0].to_string(),
            "0: E \"a\" on pid 1 tid 1 has no open B to close"
        );
    }

    #[test]
    fn ends_in_the_wrong_order_are_reported_once() {
        let text = r#"[
{"name":"outer","ph":"B","pid":1,"tid":1,"ts":1},
{"name":"inner","ph":"B","pid":1,"tid":1,"ts":2},
{"name":"outer","ph":"E","pid":1,"tid":1,"ts":3},
{"name":"inner","ph":"E","pid":1,"tid":1,"ts":4}
]"#;
        let found = problems(text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, ProblemKind::OutOfOrder);
        assert_eq!(found[0].index, Some(2));
        assert!(found[0].message.contains("B \"inner\" (event 1)"));
    }

    #[test]
    fn end_with_the_wrong_name_is_reported() {
        let text = r#"[
{"name":"a","ph":"B","pid":1,"tid":1,"ts":1},
{"name":"b","ph":"E","pid":1,"tid":1,"ts":2}
]"#;
        let found = problems(text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, ProblemKind::NameMismatch);
        assert_eq!(
            found[0].message,
            "E \"b\" does not match the innermost open B \"a\" (event 0) on pid 1 tid 1"
        );
    }

    #[test]
    fn end_without_a_name_closes_the_innermost_begin() {
        let text = r#"[
{"name":"a","ph":"B","pid":1,"tid":1,"ts":1},
{"ph":"E","pid":1,"tid":1,"ts":2}
]"#;
        assert_eq!(problems(text), []);
    }

    #[test]
    fn unclosed_begin_is_reported() {
        let text = r#"[
{"name":"a","ph":"B","pid":1,"tid":1,"ts":1},
{"name":"b","ph":"B","pid":1,"tid":1,"ts":2},
{"name":"b","ph":"E","pid":1,"tid":1,"ts":3}
]"#;
        assert_eq!(kinds(text), [(Some(0), ProblemKind::Unclosed)]);
    }

    #[test]
    fn begin_and_end_on_different_threads_are_reported() {
        let text = r#"[
{"name":"a","ph":"B","pid":1,"tid":1,"ts":1},
{"name":"a","ph":"E","pid":1,"tid":2,"ts":2}
]"#;
        let found = problems(text);
        assert_eq!(
            found.iter().map(|p| (p.index, p.kind)).collect::<Vec<_>>(),
            [
                (Some(0), ProblemKind::Unclosed),
                (Some(1), ProblemKind::EndWithoutBegin)
            ]
        );
        assert!(
            found[1]
                .message
                .ends_with("B \"a\" (event 0) is open on pid 1 tid 1, but a B must be closed on its own thread"),
            "{}",
            found[1].message
        );
    }

    #[test]
    fn same_tid_in_different_processes_is_a_different_thread() {
        let text = r#"[
{"name":"a","ph":"B","pid":1,"tid":1,"ts":1},
{"name":"a","ph":"E","pid":2,"tid":1,"ts":2}
]"#;
        assert_eq!(
            kinds(text),
            [
                (Some(0), ProblemKind::Unclosed),
                (Some(1), ProblemKind::EndWithoutBegin)
            ]
        );
    }

    #[test]
    fn decreasing_timestamps_on_a_thread_are_reported() {
        let text = r#"[
{"name":"a","ph":"B","pid":1,"tid":1,"ts":10},
{"name":"a","ph":"E","pid":1,"tid":1,"ts":5}
]"#;
        assert_eq!(kinds(text), [(Some(1), ProblemKind::TimeGoesBackwards)]);
    }

    #[test]
    fn slices_written_at_their_end_after_the_slices_they_enclose_pass() {
        // As compact writers lay out nested slices: inner, then outer.
        let text = r#"[
{"name":"inner","ph":"B","pid":1,"tid":1,"ts":2},
{"name":"inner","ph":"E","pid":1,"tid":1,"ts":3},
{"name":"inner","ph":"B","pid":1,"tid":1,"ts":4},
{"ph":"E","pid":1,"tid":1,"ts":5},
{"name":"outer","ph":"B","pid":1,"tid":1,"ts":1},
{"name":"outer","ph":"E","pid":1,"tid":1,"ts":6},
{"name":"later","ph":"B","pid":1,"tid":1,"ts":7},
{"name":"later","ph":"E","pid":1,"tid":1,"ts":8},
{"name":"main","ph":"B","pid":1,"tid":1,"ts":0},
{"name":"main","ph":"E","pid":1,"tid":1,"ts":9}
]"#;
        assert_eq!(problems(text), []);
    }

    #[test]
    fn an_earlier_begin_whose_end_does_not_follow_it_is_reported() {
        let text = r#"[
{"name":"a","ph":"B","pid":1,"tid":1,"ts":10},
{"name":"a","ph":"E","pid":1,"tid":1,"ts":20},
{"name":"b","ph":"B","pid":1,"tid":1,"ts":5},
{"name":"c","ph":"B","pid":1,"tid":1,"ts":25},
{"name":"c","ph":"E","pid":1,"tid":1,"ts":26},
{"name":"b","ph":"E","pid":1,"tid":1,"ts":30}
]"#;
        let found = problems(text);
        assert_eq!(
            found.iter().map(|p| (p.index, p.kind)).collect::<Vec<_>>(),
            [(Some(2), ProblemKind::TimeGoesBackwards)],
            "{found:?}"
        );
        assert!(found[0].message.contains("its E does not follow it"));
    }

    #[test]
    fn a_slice_written_at_its_end_across_another_slice_is_reported() {
        // b from 3 to 8 starts inside a (1 to 5) and ends after it.
        let text = r#"[
{"name":"a","ph":"B","pid":1,"tid":1,"ts":1},
{"name":"a","ph":"E","pid":1,"tid":1,"ts":5},
{"name":"b","ph":"B","pid":1,"tid":1,"ts":3},
{"name":"b","ph":"E","pid":1,"tid":1,"ts":8}
]"#;
        let found = problems(text);
        assert_eq!(
            found.iter().map(|p| (p.index, p.kind)).collect::<Vec<_>>(),
            [(Some(3), ProblemKind::Overlap)]
        );
        assert_eq!(
            found[0].message,
            "B \"b\" (event 2) closed here, from ts 3.000 to 8.000 on pid 1 tid 1, overlaps \
             the span ended by event 1 (ts 1.000 to 5.000) without lying within it or \
             enclosing it; the spans of a thread must nest"
        );
    }

    #[test]
    fn complete_events_that_overlap_on_a_thread_are_reported() {
        let text = r#"[
{"name":"a","ph":"X","pid":1,"tid":1,"ts":1,"dur":4},
{"name":"a","ph":"X","pid":1,"tid":2,"ts":3,"dur":5},
{"name":"b","ph":"X","pid":1,"tid":1,"ts":3,"dur":5}
]"#;
        assert_eq!(kinds(text), [(Some(2), ProblemKind::Overlap)]);
    }

    #[test]
    fn equal_timestamps_are_allowed() {
        let text = r#"[
{"name":"a","ph":"B","pid":1,"tid":1,"ts":10},
{"name":"a","ph":"E","pid":1,"tid":1,"ts":10}
]"#;
        assert_eq!(problems(text), []);
    }

    #[test]
    fn timestamps_of_other_threads_do_not_interfere() {
        let text = r#"[
{"name":"a","ph":"B","pid":1,"tid":1,"ts":10},
{"name":"b","ph":"B","pid":1,"tid":2,"ts":5},
{"name":"b","ph":"E","pid":1,"tid":2,"ts":6},
{"name":"a","ph":"E","pid":1,"tid":1,"ts":11}
]"#;
        assert_eq!(problems(text), []);
    }

    #[test]
    fn instant_and_complete_events_are_fine() {
        let text = r#"[
{"name":"tick","cat":"app","ph":"i","pid":1,"tid":1,"ts":1,"s":"t"},
{"name":"work","cat":"app","ph":"X","pid":1,"tid":1,"ts":2,"dur":0},
{"name":"work","cat":"app","ph":"X","pid":1,"tid":1,"ts":1,"dur":7.5}
]"#;
        assert_eq!(problems(text), []);
    }

    #[test]
    fn negative_duration_is_reported() {
        let text = r#"[{"name":"w","ph":"X","pid":1,"tid":1,"ts":2,"dur":-1}]"#;
        assert_eq!(kinds(text), [(Some(0), ProblemKind::NegativeDuration)]);
    }

    #[test]
    fn async_events_pair_by_category_and_id() {
        let text = r#"[
{"name":"req","cat":"io","ph":"b","id":7,"pid":1,"tid":1,"ts":1},
{"name":"req","cat":"io","ph":"n","id":7,"pid":1,"tid":2,"ts":2},
{"name":"req","cat":"io","ph":"e","id":"7","pid":1,"tid":2,"ts":3}
]"#;
        assert_eq!(problems(text), []);
    }

    #[test]
    fn async_end_with_another_category_is_reported() {
        let text = r#"[
{"name":"req","cat":"io","ph":"b","id":7,"pid":1,"tid":1,"ts":1},
{"name":"req","cat":"net","ph":"e","id":7,"pid":1,"tid":1,"ts":3}
]"#;
        assert_eq!(
            kinds(text),
            [
                (Some(0), ProblemKind::AsyncUnclosed),
                (Some(1), ProblemKind::AsyncEndWithoutBegin)
            ]
        );
    }

    #[test]
    fn missing_required_fields_are_reported() {
        let text = r#"[{"name":"a","ph":"B","tid":1}, {"pid":1}]"#;
        let found = problems(text);
        let messages: Vec<_> = found.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "0: B \"a\" has no \"pid\" field",
                "0: B \"a\" has no \"ts\" field",
                "1: event has no \"ph\" field"
            ]
        );
    }

    #[test]
    fn wrongly_typed_fields_are_reported() {
        let text = r#"[{"name":"a","ph":"i","pid":"1","tid":1,"ts":"5"}]"#;
        let found = problems(text);
        assert_eq!(
            found.iter().map(|p| p.kind).collect::<Vec<_>>(),
            [ProblemKind::WrongType, ProblemKind::WrongType]
        );
        assert_eq!(
            found[1].message,
            "i \"a\" field \"ts\" must be a number, found a string"
        );
    }

    #[test]
    fn counter_values_must_be_numbers() {
        let text = r#"[{"name":"mem","ph":"C","pid":1,"ts":1,"args":{"rss":10,"note":"x"}}]"#;
        assert_eq!(kinds(text), [(Some(0), ProblemKind::WrongType)]);
    }

    #[test]
    fn unknown_phase_is_reported() {
        let text = r#"[{"name":"a","ph":"Q","pid":1,"tid":1,"ts":1}]"#;
        assert_eq!(kinds(text), [(Some(0), ProblemKind::UnknownPhase)]);
    }

    #[test]
    fn truncated_trace_is_reported_by_default() {
        let text = "[\n{\"name\":\"a\",\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":1},\n{\"na";
        let found = problems(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, ProblemKind::Truncated);
        assert_eq!(found[0].index, None);
        assert_eq!(found[0].line, Some(3));
        assert!(found[0].message.contains("1 complete event was recovered"));
    }

    #[test]
    fn allowed_truncation_tolerates_spans_left_open() {
        let text = "[\n{\"name\":\"main\",\"ph\":\"B\",\"pid\":1,\"tid\":1,\"ts\":1},\n{\"name\":\"x\",\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":2},\n";
        let trace = parse_trace(text).expect("recovered");
        let options = CheckOptions {
            allow_truncated: true,
        };
        let found = check_with(&trace, &options);
        assert_eq!(
            found.iter().map(|p| p.kind).collect::<Vec<_>>(),
            [ProblemKind::EndWithoutBegin]
        );
    }

    #[test]
    fn unclosed_spans_in_a_complete_trace_are_reported_even_when_truncation_is_allowed() {
        let text = r#"[{"name":"a","ph":"B","pid":1,"tid":1,"ts":1}]"#;
        let trace = parse_trace(text).expect("valid trace");
        let options = CheckOptions {
            allow_truncated: true,
        };
        assert_eq!(
            check_with(&trace, &options)
                .iter()
                .map(|p| p.kind)
                .collect::<Vec<_>>(),
            [ProblemKind::Unclosed]
        );
    }
}

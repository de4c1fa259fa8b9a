//! Matching begin events with end events, one event at a time.
//!
//! Both [`crate::check`] (which reports what does not match) and
//! [`crate::summary`] (which measures what does) use the same [`Matcher`],
//! so the two always agree about which events form a span.
//!
//! `B`/`E` events pair on their thread in stack order: a thread's events
//! are in time order in the file. `b`/`e` events pair by pid, category, id
//! and name, and by time rather than by position: the Chrome format does
//! not order events, and a span begun on one thread and ended on another
//! is written with each thread's events, so its `e` may come first.
//!
//! The matcher keeps only what is open: the `B`s not yet closed and the
//! `b`s and `e`s not yet paired.

use foldhash::HashMap;

use crate::event::{Event, Phase};
use crate::outcome::Outcome;

/// A thread: `(pid, tid)`.
pub(crate) type Thread = (i64, i64);

/// What is kept of an event that a pair or a message may need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The position of the event in the file, counting from 0.
    pub index: usize,
    /// The 1-based line the event starts on.
    pub line: usize,
    pub ph: Option<Phase>,
    pub name: Option<String>,
    pub cat: Option<String>,
    pub id: Option<String>,
    pub thread: Option<Thread>,
    pub ts_ns: Option<i64>,
    /// How an end event says its span ended (see [`crate::outcome`]).
    pub outcome: Outcome,
}

impl Seen {
    pub fn of(index: usize, event: &Event) -> Seen {
        // Only asynchronous events are described by category and id.
        let keyed = matches!(event.ph, Some(Phase::AsyncBegin | Phase::AsyncEnd));
        Seen {
            index,
            line: event.line,
            ph: event.ph.clone(),
            name: event.name.clone(),
            cat: if keyed { event.cat.clone() } else { None },
            id: if keyed { event.id.clone() } else { None },
            thread: event.thread(),
            ts_ns: event.ts_ns,
            outcome: Outcome::of_end(event),
        }
    }

    /// The event's time and position in the file, which pairing orders by.
    fn when(&self) -> (Option<i64>, u64) {
        (self.ts_ns, self.index as u64)
    }

    /// A short description for messages, such as `B "main"`.
    pub fn label(&self) -> String {
        let code = self.ph.as_ref().map_or("?", Phase::code);
        match &self.name {
            Some(name) => format!("{code} \"{name}\""),
            None => code.to_string(),
        }
    }
}

/// Something that did not match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mismatch {
    /// An `E` with nothing open on its thread. `elsewhere` is an open `B` of
    /// the same name on another thread, if there is one.
    EndWithoutBegin { end: Seen, elsewhere: Option<Seen> },
    /// An `E` that closes an outer `B` while `inner` is still open.
    OutOfOrder { end: Seen, begin: Seen, inner: Seen },
    /// An `E` whose name matches no open `B` on its thread; it is taken to
    /// close the innermost one, `begin`.
    WrongName {
        end: Seen,
        begin: Seen,
        elsewhere: Option<Seen>,
    },
    /// A `B` still open at the end of the trace.
    Unclosed { begin: Seen },
    /// An `e` that no `b` with the same key, at or before its time, pairs
    /// with.
    AsyncEndWithoutBegin { end: Seen },
    /// A `b` that no `e` with the same key, at or after its time, pairs
    /// with.
    AsyncUnclosed { begin: Seen },
}

impl Mismatch {
    /// The event the mismatch is reported at.
    pub fn at(&self) -> &Seen {
        match self {
            Mismatch::EndWithoutBegin { end, .. }
            | Mismatch::OutOfOrder { end, .. }
            | Mismatch::WrongName { end, .. }
            | Mismatch::AsyncEndWithoutBegin { end } => end,
            Mismatch::Unclosed { begin } | Mismatch::AsyncUnclosed { begin } => begin,
        }
    }
}

/// What the matcher found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Matched {
    /// A begin paired with its end. `nested`: `B`/`E` (nested on a
    /// thread) rather than `b`/`e` (asynchronous).
    Pair {
        begin: Seen,
        end_ts_ns: Option<i64>,
        /// The thread of the end event (for `b`/`e`, maybe not the
        /// beginning's).
        end_thread: Option<Thread>,
        nested: bool,
        /// How the end says the span ended.
        outcome: Outcome,
    },
    /// Boxed: mismatches are rare, pairs are not.
    Mismatch(Box<Mismatch>),
}

/// The key `b` and `e` events pair by: pid, category, id and name.
type AsyncKey = (Option<i64>, String, String, Option<String>);

/// The `b`s and `e`s of one key not yet paired.
#[derive(Debug, Default)]
struct Unpaired {
    begins: Vec<Seen>,
    ends: Vec<Seen>,
}

/// Whether a begin at `begin` may pair with an end at `end`; events
/// without a time pair with anything.
fn in_time(begin: Option<i64>, end: Option<i64>) -> bool {
    match (begin, end) {
        (Some(begin), Some(end)) => begin <= end,
        _ => true,
    }
}

/// Of `ends` waiting for a begin of their key, the position of the one a
/// begin at `ts` closes: the earliest at or after it (then the first in
/// the file). `at` gives an end's time and file position.
pub(crate) fn end_for_begin<T>(
    ends: &[T],
    ts: Option<i64>,
    at: impl Fn(&T) -> (Option<i64>, u64),
) -> Option<usize> {
    ends.iter()
        .map(at)
        .enumerate()
        .filter(|(_, (end, _))| in_time(ts, *end))
        .min_by_key(|(_, end)| *end)
        .map(|(position, _)| position)
}

/// Of `begins` open for a key, the position of the one an end at `ts`
/// closes: the latest at or before it (then the last in the file), the
/// innermost of nested spans with one id. `at` gives a begin's time and
/// file position.
pub(crate) fn begin_for_end<T>(
    begins: &[T],
    ts: Option<i64>,
    at: impl Fn(&T) -> (Option<i64>, u64),
) -> Option<usize> {
    begins
        .iter()
        .map(at)
        .enumerate()
        .filter(|(_, (begin, _))| in_time(*begin, ts))
        .max_by_key(|(_, begin)| *begin)
        .map(|(position, _)| position)
}

/// Matches `B` with `E` per thread in stack order, and `b` with `e` by key
/// and time. Events without the fields needed to match them are skipped
/// (the checker reports those fields separately).
#[derive(Debug, Default)]
pub(crate) struct Matcher {
    stacks: HashMap<Thread, Vec<Seen>>,
    unpaired: HashMap<AsyncKey, Unpaired>,
}

impl Matcher {
    /// Matches the event at `index`, reporting what it closes or breaks.
    pub fn push(&mut self, index: usize, event: &Event, found: &mut dyn FnMut(Matched)) {
        match event.ph {
            Some(Phase::Begin) => {
                if let Some(thread) = event.thread() {
                    self.stacks
                        .entry(thread)
                        .or_default()
                        .push(Seen::of(index, event));
                }
            }
            Some(Phase::End) => {
                if let Some(thread) = event.thread() {
                    self.close(index, event, thread, found);
                }
            }
            Some(Phase::AsyncBegin) => {
                if let Some(key) = async_key(event) {
                    let unpaired = self.unpaired.entry(key.clone()).or_default();
                    match end_for_begin(&unpaired.ends, event.ts_ns, Seen::when) {
                        Some(at) => {
                            let end = unpaired.ends.remove(at);
                            self.forget_if_paired(&key);
                            found(Matched::Pair {
                                begin: Seen::of(index, event),
                                end_ts_ns: end.ts_ns,
                                end_thread: end.thread,
                                nested: false,
                                outcome: end.outcome,
                            });
                        }
                        None => unpaired.begins.push(Seen::of(index, event)),
                    }
                }
            }
            Some(Phase::AsyncEnd) => {
                if let Some(key) = async_key(event) {
                    let unpaired = self.unpaired.entry(key.clone()).or_default();
                    match begin_for_end(&unpaired.begins, event.ts_ns, Seen::when) {
                        Some(at) => {
                            let begin = unpaired.begins.remove(at);
                            self.forget_if_paired(&key);
                            found(Matched::Pair {
                                begin,
                                end_ts_ns: event.ts_ns,
                                end_thread: event.thread(),
                                nested: false,
                                outcome: Outcome::of_end(event),
                            });
                        }
                        None => unpaired.ends.push(Seen::of(index, event)),
                    }
                }
            }
            _ => {}
        }
    }

    fn forget_if_paired(&mut self, key: &AsyncKey) {
        if self
            .unpaired
            .get(key)
            .is_some_and(|u| u.begins.is_empty() && u.ends.is_empty())
        {
            self.unpaired.remove(key);
        }
    }

    /// The `B`s open on `thread`, outermost first.
    pub fn open_on(&self, thread: Thread) -> &[Seen] {
        self.stacks.get(&thread).map_or(&[], Vec::as_slice)
    }

    /// Ends the trace: everything still open or unpaired is a mismatch,
    /// reported in file order.
    pub fn finish(self, found: &mut dyn FnMut(Matched)) {
        let mut left: Vec<Mismatch> = self
            .stacks
            .into_values()
            .flatten()
            .map(|begin| Mismatch::Unclosed { begin })
            .collect();
        for unpaired in self.unpaired.into_values() {
            left.extend(
                unpaired
                    .begins
                    .into_iter()
                    .map(|begin| Mismatch::AsyncUnclosed { begin }),
            );
            left.extend(
                unpaired
                    .ends
                    .into_iter()
                    .map(|end| Mismatch::AsyncEndWithoutBegin { end }),
            );
        }
        left.sort_by_key(|mismatch| mismatch.at().index);
        for mismatch in left {
            found(Matched::Mismatch(Box::new(mismatch)));
        }
    }

    /// Handles the `E` event at `index` on `thread`.
    fn close(
        &mut self,
        index: usize,
        event: &Event,
        thread: Thread,
        found: &mut dyn FnMut(Matched),
    ) {
        let name = event.name.as_deref();
        let names_match = |begin: &Seen| name.is_none() || begin.name.as_deref() == name;
        let stack = self.stacks.entry(thread).or_default();
        let Some(innermost) = stack.last() else {
            let elsewhere = self.open_elsewhere(name, thread);
            found(Matched::Mismatch(Box::new(Mismatch::EndWithoutBegin {
                end: Seen::of(index, event),
                elsewhere,
            })));
            return;
        };
        if names_match(innermost) {
            let begin = stack.pop().expect("an open B");
            found(Matched::Pair {
                begin,
                end_ts_ns: event.ts_ns,
                end_thread: Some(thread),
                nested: true,
                outcome: Outcome::of_end(event),
            });
        } else if let Some(position) = stack.iter().rposition(names_match) {
            let inner = innermost.clone();
            let begin = stack.remove(position);
            found(Matched::Mismatch(Box::new(Mismatch::OutOfOrder {
                end: Seen::of(index, event),
                begin: begin.clone(),
                inner,
            })));
            found(Matched::Pair {
                begin,
                end_ts_ns: event.ts_ns,
                end_thread: Some(thread),
                nested: true,
                outcome: Outcome::of_end(event),
            });
        } else {
            let begin = stack.pop().expect("an open B");
            let elsewhere = self.open_elsewhere(name, thread);
            found(Matched::Mismatch(Box::new(Mismatch::WrongName {
                end: Seen::of(index, event),
                begin,
                elsewhere,
            })));
        }
        if self.stacks.get(&thread).is_some_and(Vec::is_empty) {
            self.stacks.remove(&thread);
        }
    }

    /// An open `B` named `name` on a thread other than `thread`: the
    /// innermost one of the thread with the lowest `(pid, tid)`.
    fn open_elsewhere(&self, name: Option<&str>, thread: Thread) -> Option<Seen> {
        let name = name?;
        let mut others: Vec<(&Thread, &Vec<Seen>)> = self
            .stacks
            .iter()
            .filter(|(other, _)| **other != thread)
            .collect();
        others.sort_by_key(|(other, _)| **other);
        others
            .into_iter()
            .flat_map(|(_, stack)| stack.iter().rev())
            .find(|begin| begin.name.as_deref() == Some(name))
            .cloned()
    }
}

fn async_key(event: &Event) -> Option<AsyncKey> {
    let id = event.id.clone()?;
    Some((
        event.pid,
        event.cat.clone().unwrap_or_default(),
        id,
        event.name.clone(),
    ))
}

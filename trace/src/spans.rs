//! Matching begin events with end events.
//!
//! Both [`crate::check`] (which reports what does not match) and
//! [`crate::summary`] (which measures what does) use the same matching, so
//! the two always agree about which events form a span.

use std::collections::BTreeMap;

use crate::event::{Event, Phase};

/// A thread: `(pid, tid)`.
pub(crate) type Thread = (i64, i64);

/// A matched begin/end pair, by event index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pair {
    pub begin: usize,
    pub end: usize,
    /// `B`/`E` (nested on a thread) rather than `b`/`e` (asynchronous).
    pub nested: bool,
}

/// Something that did not match, by event index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mismatch {
    /// An `E` with nothing open on its thread. `elsewhere` is an open `B` of
    /// the same name on another thread, if there is one.
    EndWithoutBegin {
        end: usize,
        elsewhere: Option<usize>,
    },
    /// An `E` that closes an outer `B` while `inner` is still open.
    OutOfOrder {
        end: usize,
        begin: usize,
        inner: usize,
    },
    /// An `E` whose name matches no open `B` on its thread; it is taken to
    /// close the innermost one, `begin`.
    WrongName {
        end: usize,
        begin: usize,
        elsewhere: Option<usize>,
    },
    /// A `B` still open at the end of the trace.
    Unclosed { begin: usize },
    /// An `e` with no open `b` of the same category and id.
    AsyncEndWithoutBegin { end: usize },
    /// A `b` still open at the end of the trace.
    AsyncUnclosed { begin: usize },
}

/// The result of matching a trace's events.
#[derive(Debug, Default)]
pub(crate) struct Matching {
    pub pairs: Vec<Pair>,
    pub mismatches: Vec<Mismatch>,
}

/// Matches `B` with `E` per thread in stack order, and `b` with `e` by
/// category and id. Events without the fields needed to match them are
/// skipped (the checker reports those fields separately).
pub(crate) fn match_events(events: &[Event]) -> Matching {
    let mut matching = Matching::default();
    let mut stacks: BTreeMap<Thread, Vec<usize>> = BTreeMap::new();
    let mut async_open: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();

    for (index, event) in events.iter().enumerate() {
        match event.ph {
            Some(Phase::Begin) => {
                if let Some(thread) = event.thread() {
                    stacks.entry(thread).or_default().push(index);
                }
            }
            Some(Phase::End) => {
                if let Some(thread) = event.thread() {
                    close(events, index, thread, &mut stacks, &mut matching);
                }
            }
            Some(Phase::AsyncBegin) => {
                if let Some(id) = event.id.as_deref() {
                    let key = (event.cat.as_deref().unwrap_or(""), id);
                    async_open.entry(key).or_default().push(index);
                }
            }
            Some(Phase::AsyncEnd) => {
                if let Some(id) = event.id.as_deref() {
                    let key = (event.cat.as_deref().unwrap_or(""), id);
                    match async_open.get_mut(&key).and_then(Vec::pop) {
                        Some(begin) => matching.pairs.push(Pair {
                            begin,
                            end: index,
                            nested: false,
                        }),
                        None => matching
                            .mismatches
                            .push(Mismatch::AsyncEndWithoutBegin { end: index }),
                    }
                }
            }
            _ => {}
        }
    }

    let mut unclosed: Vec<Mismatch> = stacks
        .into_values()
        .flatten()
        .map(|begin| Mismatch::Unclosed { begin })
        .chain(
            async_open
                .into_values()
                .flatten()
                .map(|begin| Mismatch::AsyncUnclosed { begin }),
        )
        .collect();
    unclosed.sort_by_key(|mismatch| match mismatch {
        Mismatch::Unclosed { begin } | Mismatch::AsyncUnclosed { begin } => *begin,
        _ => 0,
    });
    matching.mismatches.extend(unclosed);
    matching
}

/// Handles the `E` event at `index` on `thread`.
fn close(
    events: &[Event],
    index: usize,
    thread: Thread,
    stacks: &mut BTreeMap<Thread, Vec<usize>>,
    matching: &mut Matching,
) {
    let name = events[index].name.as_deref();
    let stack = stacks.entry(thread).or_default();
    let Some(&innermost) = stack.last() else {
        let elsewhere = open_elsewhere(events, name, thread, stacks);
        matching.mismatches.push(Mismatch::EndWithoutBegin {
            end: index,
            elsewhere,
        });
        return;
    };
    let names_match = |begin: usize| name.is_none() || events[begin].name.as_deref() == name;
    if names_match(innermost) {
        stack.pop();
        matching.pairs.push(Pair {
            begin: innermost,
            end: index,
            nested: true,
        });
    } else if let Some(position) = stack.iter().rposition(|&begin| names_match(begin)) {
        let begin = stack.remove(position);
        matching.mismatches.push(Mismatch::OutOfOrder {
            end: index,
            begin,
            inner: innermost,
        });
        matching.pairs.push(Pair {
            begin,
            end: index,
            nested: true,
        });
    } else {
        stack.pop();
        let elsewhere = open_elsewhere(events, name, thread, stacks);
        matching.mismatches.push(Mismatch::WrongName {
            end: index,
            begin: innermost,
            elsewhere,
        });
    }
}

/// An open `B` named `name` on a thread other than `thread`.
fn open_elsewhere(
    events: &[Event],
    name: Option<&str>,
    thread: Thread,
    stacks: &BTreeMap<Thread, Vec<usize>>,
) -> Option<usize> {
    let name = name?;
    stacks
        .iter()
        .filter(|(other, _)| **other != thread)
        .flat_map(|(_, stack)| stack.iter().rev())
        .copied()
        .find(|&begin| events[begin].name.as_deref() == Some(name))
}

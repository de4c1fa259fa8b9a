//! Whether the spans of one thread nest: two spans of a thread either do
//! not overlap or one lies within the other, whatever the order in which
//! they are read. Perfetto sorts a trace by time before it nests slices,
//! so a span may be read after the spans it encloses (an `X` event, or a
//! compact slice's begin and end, written when the slice ends); a span
//! that overlaps another without enclosing it or lying within it cannot be
//! drawn on one track, and is reported.
//!
//! Memory: per thread, the outermost spans read so far that no span read
//! since encloses ([`Outermost`]): a span read later may enclose them. A
//! span closed while a `B` of its thread is still open is checked but not
//! kept (that `B` encloses it), so a thread of `B`/`E` pairs keeps its
//! top-level spans only. At most [`WINDOW`] twice over are kept one by one;
//! older ones are merged into one range that keeps only where it starts
//! and ends, inside which a crossing is no longer seen (it is never
//! reported falsely).

/// How many outermost spans a thread keeps one by one: when twice as many
/// are kept, the oldest `WINDOW` merge into one range.
pub(crate) const WINDOW: usize = 4096;

/// A kept span, or (`merged`) a range of older kept spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kept {
    pub start: i64,
    pub end: i64,
    /// The event that completed the span (its `E`, or the `X`).
    pub index: usize,
    pub merged: bool,
}

/// The outermost spans of a thread, by start; they do not overlap.
#[derive(Debug, Default)]
pub(crate) struct Outermost {
    kept: Vec<Kept>,
}

impl Outermost {
    /// Adds the span from `start` to `end` completed by event `index`;
    /// `keep`: whether a span read later may still enclose it. Returns the
    /// kept span it overlaps without nesting, if any (the span is then
    /// not kept).
    pub fn add(&mut self, start: i64, end: i64, index: usize, keep: bool) -> Option<Kept> {
        // The kept spans that end after this one starts and start before
        // it ends: those it encloses, lies within, or crosses.
        let first = self.kept.partition_point(|k| k.end <= start);
        let mut last = first;
        let (mut from, mut to, mut blurred) = (start, end, false);
        while let Some(k) = self.kept.get(last).filter(|k| k.start < end) {
            let encloses = start <= k.start && k.end <= end;
            let within = k.start <= start && end <= k.end;
            if within && !encloses {
                // Inside a kept span (or a merged range): what it holds
                // was checked against that span's own children when they
                // were read, or is no longer known.
                return None;
            }
            if !encloses {
                if !k.merged {
                    return Some(*k);
                }
                // Across a merged range: its own spans are no longer
                // known; the range grows to take this one.
                blurred = true;
                from = from.min(k.start);
                to = to.max(k.end);
            }
            last += 1;
        }
        if !keep && first == last {
            return None;
        }
        let merged = blurred || (first..last).any(|i| self.kept[i].merged);
        let span = Kept {
            start: from,
            end: to,
            index,
            merged,
        };
        if keep || first < last {
            // A span not to keep still replaces those it encloses, which
            // lie within the span that will enclose it.
            self.kept.splice(first..last, [span]);
        }
        if self.kept.len() >= 2 * WINDOW {
            let old: Vec<Kept> = self.kept.drain(..WINDOW).collect();
            let range = Kept {
                start: old[0].start,
                end: old[WINDOW - 1].end,
                index: old[WINDOW - 1].index,
                merged: true,
            };
            self.kept.insert(0, range);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add_all(spans: &[(i64, i64)]) -> Vec<Option<usize>> {
        let mut outermost = Outermost::default();
        spans
            .iter()
            .enumerate()
            .map(|(i, &(s, e))| outermost.add(s, e, i, true).map(|k| k.index))
            .collect()
    }

    #[test]
    fn spans_read_after_the_spans_they_enclose_nest() {
        // Compact order: each span when it ends.
        let found = add_all(&[(2, 3), (4, 5), (1, 6), (8, 9), (0, 10)]);
        assert_eq!(found, [None; 5]);
    }

    #[test]
    fn spans_read_before_the_spans_they_enclose_nest() {
        let found = add_all(&[(0, 10), (1, 6), (2, 3), (4, 5), (8, 9)]);
        assert_eq!(found, [None; 5]);
    }

    #[test]
    fn spans_that_touch_or_are_equal_nest() {
        let found = add_all(&[(1, 3), (3, 5), (3, 5), (5, 5), (1, 5)]);
        assert_eq!(found, [None; 5]);
    }

    #[test]
    fn a_span_across_the_end_of_another_is_reported_with_it() {
        assert_eq!(add_all(&[(1, 5), (3, 8)]), [None, Some(0)]);
        assert_eq!(add_all(&[(3, 8), (1, 5)]), [None, Some(0)]);
        // Across an older sibling that a later span would enclose.
        assert_eq!(add_all(&[(1, 2), (3, 5), (1, 4)]), [None, None, Some(1)]);
    }

    #[test]
    fn a_span_not_kept_is_still_checked() {
        let mut outermost = Outermost::default();
        assert_eq!(outermost.add(1, 5, 0, true), None);
        assert_eq!(outermost.add(4, 9, 1, false).map(|k| k.index), Some(0));
        assert_eq!(outermost.add(6, 7, 2, false), None);
        assert_eq!(outermost.kept.len(), 1);
    }

    #[test]
    fn old_spans_merge_into_a_range_that_reports_nothing_falsely() {
        let mut outermost = Outermost::default();
        let n = 2 * WINDOW as i64;
        for i in 0..n {
            assert_eq!(outermost.add(10 * i, 10 * i + 5, i as usize, true), None);
        }
        assert_eq!(outermost.kept.len(), WINDOW + 1);
        assert!(outermost.kept[0].merged);
        // Across a span of the merged range: no longer seen.
        assert_eq!(outermost.add(3, 12, 0, true), None);
        // Across a span kept one by one: reported.
        let recent = 10 * (n - 1);
        assert!(outermost.add(recent + 3, recent + 12, 0, true).is_some());
        // One span around all of them: they all nest.
        assert_eq!(outermost.add(-1, 10 * n, 0, true), None);
        assert_eq!(outermost.kept.len(), 1);
    }
}

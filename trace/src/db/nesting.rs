//! The span tree of the threads of a file that hold `X` events.
//!
//! While a file streams in, a span's parent and depth come from the `B`s
//! open on its thread: right for `B`/`E` pairs, but an `X` is written when
//! it ends (the runtime's compact mode, PerfFlowAspect's compact traces),
//! so its children come before it in the file and an `X` read after them
//! cannot be their parent then. After the file is read, inside its
//! transaction, [`renest`] goes once more over the spans and instants of
//! each thread that had an `X`, ordered by time, and gives every one the
//! parent, depth or enclosing span that its times say; the flow ends of
//! those threads, not written yet, get their enclosing span the same way.
//!
//! A span encloses another that starts at or after its start and ends at
//! or before its end (a span without an end encloses what starts after
//! it); of two spans with the same start and end, the one read first (the
//! smaller id) encloses the other. An instant is inside the innermost span
//! that starts at or before it and does not end before it. The pass holds
//! a stack of the spans enclosing the current one: memory grows with the
//! nesting depth, not with the file; SQLite sorts the rows, spilling to a
//! temporary file for a large trace.

use rusqlite::{params, Transaction};

/// A span on the stack: its id and end (`None`: no end).
struct Enclosing {
    id: i64,
    end: Option<i64>,
}

impl Enclosing {
    /// Whether a span ending at `end` (`None`: no end), that starts at or
    /// after this one, lies inside it.
    fn holds(&self, end: Option<i64>) -> bool {
        match (self.end, end) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(mine), Some(theirs)) => theirs <= mine,
        }
    }
}

/// Gives the spans with a depth (not async) and the instants of the
/// threads `threads` (row ids), written by this file (span ids from
/// `first_span`, instant ids after `instants_before`), the parent, depth
/// and enclosing span of their times. `flows` are flow ends of those
/// threads, `(n, thread, time)`: returns the enclosing span of each, by
/// its `n`.
pub(super) fn renest(
    tx: &Transaction<'_>,
    threads: &[i64],
    first_span: i64,
    instants_before: i64,
    flows: &[(usize, i64, i64)],
) -> rusqlite::Result<Vec<(usize, Option<i64>)>> {
    let mut enclosing = Vec::with_capacity(flows.len());
    if threads.is_empty() {
        return Ok(enclosing);
    }
    let threads = serde_json::to_string(threads).expect("integers serialize");
    let flows = serde_json::to_string(flows).expect("integers serialize");
    // Kind 0 (a span) before kind 1 (an instant) and 2 (a flow end) at
    // the same time: a span that starts at an instant's time holds it.
    let mut rows = tx.prepare(
        "SELECT thread, 0 AS kind, id, start_ns AS at, end_ns, depth, parent FROM span
           WHERE id >= ?1 AND depth IS NOT NULL AND start_ns IS NOT NULL
             AND thread IN (SELECT value FROM json_each(?3))
         UNION ALL
         SELECT thread, 1, id, ts_ns, NULL, NULL, span FROM instant
           WHERE id > ?2 AND ts_ns IS NOT NULL AND thread IN (SELECT value FROM json_each(?3))
         UNION ALL
         SELECT value ->> 1, 2, value ->> 0, value ->> 2, NULL, NULL, NULL FROM json_each(?4)
         ORDER BY thread, at, kind, end_ns DESC NULLS FIRST, id",
    )?;
    let mut span = tx.prepare("UPDATE span SET depth = ?2, parent = ?3 WHERE id = ?1")?;
    let mut instant = tx.prepare("UPDATE instant SET span = ?2 WHERE id = ?1")?;
    let mut stack: Vec<Enclosing> = Vec::new();
    let mut thread_now = None;
    // The query's rows are sorted before the first is returned, so the
    // updates below do not disturb it.
    let mut found = rows.query(params![first_span, instants_before, threads, flows])?;
    while let Some(row) = found.next()? {
        let thread: i64 = row.get(0)?;
        if thread_now != Some(thread) {
            thread_now = Some(thread);
            stack.clear();
        }
        let kind: i64 = row.get(1)?;
        let id: i64 = row.get(2)?;
        let at: i64 = row.get(3)?;
        let parent: Option<i64> = row.get(6)?;
        if kind != 0 {
            while stack
                .last()
                .is_some_and(|top| top.end.is_some_and(|end| end < at))
            {
                stack.pop();
            }
            let span_now = stack.last().map(|top| top.id);
            if kind == 2 {
                enclosing.push((id as usize, span_now));
            } else if span_now != parent {
                instant.execute(params![id, span_now])?;
            }
            continue;
        }
        let end: Option<i64> = row.get(4)?;
        let depth: i64 = row.get(5)?;
        while stack.last().is_some_and(|top| !top.holds(end)) {
            stack.pop();
        }
        let (depth_now, parent_now) = (stack.len() as i64, stack.last().map(|top| top.id));
        if (depth_now, parent_now) != (depth, parent) {
            span.execute(params![id, depth_now, parent_now])?;
        }
        stack.push(Enclosing { id, end });
    }
    Ok(enclosing)
}

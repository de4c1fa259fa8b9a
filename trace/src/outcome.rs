//! How a span ended: the `outcome` of the database's spans.
//!
//! * `returned`: its end was recorded on a normal way out of the function;
//! * `raised`: its end says the function was left by an exception: in JSON
//!   an `E`, `e` or `X` event with `"args":{"outcome":"raised"}`, in a
//!   Perfetto trace a slice end with the debug annotation `outcome` =
//!   `"raised"` (both written by the runtime from the weaver's cleanup
//!   landing pad, and by the Python decorators);
//! * `open_at_end`: no end, in a trace that was completed normally (the
//!   process exited inside the span, or it was never closed);
//! * `killed`: no end, and the process was killed: a fatal signal
//!   completed its trace (the runtime's `perfflow_signal` metadata), or the
//!   trace was cut short (the file is truncated, or it is a perfflow trace,
//!   with its opening `perfflow_process` record, that lacks the final
//!   `perfflow_runtime` record: a `SIGKILL`).

use std::collections::HashMap;

use rusqlite::Connection;
use serde_json::Value;

use crate::event::{Event, Phase};

/// How one span ended (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Returned,
    Raised,
    OpenAtEnd,
    Killed,
}

impl Outcome {
    /// The value of the `outcome` column.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Outcome::Returned => "returned",
            Outcome::Raised => "raised",
            Outcome::OpenAtEnd => "open_at_end",
            Outcome::Killed => "killed",
        }
    }

    /// The outcome of a span with an end: `raised` says the end event.
    pub(crate) fn ended(raised: bool) -> Outcome {
        if raised {
            Outcome::Raised
        } else {
            Outcome::Returned
        }
    }
}

/// True when `event` ends a span whose function was left by an exception.
pub(crate) fn raised(event: &Event) -> bool {
    matches!(
        event.ph,
        Some(Phase::End | Phase::AsyncEnd | Phase::Complete)
    ) && event.args.get("outcome").and_then(Value::as_str) == Some("raised")
}

/// What a process's metadata said about how its trace ended.
#[derive(Debug, Default, Clone, Copy)]
struct Ending {
    /// The runtime's opening record: a perfflow trace.
    opened: bool,
    /// The runtime's final record: the trace was completed.
    completed: bool,
    /// A fatal signal completed the trace.
    signal: bool,
}

/// How the processes of one trace ended, learnt from their metadata.
#[derive(Debug, Default)]
pub(crate) struct Endings(HashMap<i64, Ending>);

impl Endings {
    /// Takes note of a metadata event.
    pub(crate) fn learn(&mut self, event: &Event) {
        let Some(pid) = event.pid else { return };
        let ending = match event.name.as_deref() {
            Some("perfflow_process" | "perfflow_runtime" | "perfflow_signal") => {
                self.0.entry(pid).or_default()
            }
            _ => return,
        };
        match event.name.as_deref() {
            Some("perfflow_process") => ending.opened = true,
            Some("perfflow_runtime") => ending.completed = true,
            _ => ending.signal = true,
        }
    }

    /// The outcome of a span of process `pid` still open at the end of its
    /// trace; `truncated`: the file was cut short.
    pub(crate) fn unended(&self, pid: i64, truncated: bool) -> Outcome {
        let ending = self.0.get(&pid).copied().unwrap_or_default();
        if truncated || ending.signal || (ending.opened && !ending.completed) {
            Outcome::Killed
        } else {
            Outcome::OpenAtEnd
        }
    }
}

/// The `outcome` constraint of databases made before `raised` and
/// `killed`, and the one that replaces it.
const OLD_CHECK: &str = "CHECK (outcome IN ('returned', 'open_at_end'))";
const CHECK: &str = "CHECK (outcome IN ('returned', 'raised', 'open_at_end', 'killed'))";

/// Widens the `outcome` constraint of a database made before `raised` and
/// `killed` were outcomes, in place: SQLite's documented way to loosen a
/// CHECK constraint (the table's definition is edited with
/// `writable_schema` and the schema version bumped), which needs no change
/// to the rows, however many there are.
pub(crate) fn widen_check(conn: &Connection) -> rusqlite::Result<()> {
    let table: String = conn.query_row(
        "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'span'",
        [],
        |row| row.get(0),
    )?;
    if !table.contains(OLD_CHECK) {
        return Ok(());
    }
    let version: i64 = conn.query_row("PRAGMA schema_version", [], |row| row.get(0))?;
    conn.execute_batch("BEGIN IMMEDIATE; PRAGMA writable_schema = ON;")?;
    let widened = conn
        .execute(
            "UPDATE sqlite_schema SET sql = ?1 WHERE type = 'table' AND name = 'span'",
            [table.replace(OLD_CHECK, CHECK)],
        )
        .and_then(|_| {
            conn.execute_batch(&format!(
                "PRAGMA schema_version = {}; PRAGMA writable_schema = OFF;",
                version + 1
            ))
        });
    match widened {
        Ok(()) => conn.execute_batch("COMMIT"),
        Err(error) => {
            let _ = conn.execute_batch("PRAGMA writable_schema = OFF; ROLLBACK");
            Err(error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(json: &str) -> Event {
        let Value::Object(map) = serde_json::from_str(json).unwrap() else {
            panic!("an object")
        };
        Event::from_json(map, 1)
    }

    #[test]
    fn only_an_end_with_the_raised_outcome_is_raised() {
        assert!(raised(&event(r#"{"ph":"E","args":{"outcome":"raised"}}"#)));
        assert!(raised(&event(r#"{"ph":"X","args":{"outcome":"raised"}}"#)));
        assert!(!raised(&event(r#"{"ph":"E"}"#)));
        assert!(!raised(&event(r#"{"ph":"B","args":{"outcome":"raised"}}"#)));
        assert!(!raised(&event(
            r#"{"ph":"E","args":{"outcome":"returned"}}"#
        )));
    }

    #[test]
    fn an_open_span_is_killed_only_in_a_trace_cut_short_or_ended_by_a_signal() {
        let opened = event(r#"{"name":"perfflow_process","ph":"M","pid":1}"#);
        let completed = event(r#"{"name":"perfflow_runtime","ph":"M","pid":1}"#);
        let signal = event(r#"{"name":"perfflow_signal","ph":"M","pid":1}"#);
        let mut endings = Endings::default();
        // Not a perfflow trace: nothing says it was cut short.
        assert_eq!(endings.unended(1, false), Outcome::OpenAtEnd);
        assert_eq!(endings.unended(1, true), Outcome::Killed);
        endings.learn(&opened);
        assert_eq!(endings.unended(1, false), Outcome::Killed);
        endings.learn(&completed);
        assert_eq!(endings.unended(1, false), Outcome::OpenAtEnd);
        assert_eq!(endings.unended(2, false), Outcome::OpenAtEnd);
        endings.learn(&signal);
        assert_eq!(endings.unended(1, false), Outcome::Killed);
    }
}

//! How a span ended: the `outcome` of the database's spans.
//!
//! An end event (`E`, `e`, `X`) may say how its span ended: in JSON
//! `"args":{"outcome":"raised"}` (or `open_at_end`, `killed`), in a
//! Perfetto trace the same as the slice end's debug annotation `outcome`.
//! The runtime writes `raised` for a function left by an exception (the
//! weaver's cleanup landing pad, the Python decorators), and
//! `open_at_end` or `killed` on the ends it writes itself for slices still
//! open when their thread or process ends (`exit()` inside a woven
//! function; a fatal signal). A span is
//!
//! * `returned`: its end says nothing;
//! * `raised`, `open_at_end`, `killed`: as its end says;
//! * without an end, `killed` when its process was: a fatal signal
//!   completed its trace (the runtime's `perfflow_signal` metadata), or the
//!   trace was cut short (the file is truncated, or it is a perfflow trace,
//!   with its opening `perfflow_process` record, that lacks the final
//!   `perfflow_runtime` record: a `SIGKILL`); `open_at_end` otherwise.

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

    /// The outcome an end event says (`returned` when it says none, or
    /// is not an end).
    pub(crate) fn of_end(event: &Event) -> Outcome {
        if !matches!(
            event.ph,
            Some(Phase::End | Phase::AsyncEnd | Phase::Complete)
        ) {
            return Outcome::Returned;
        }
        match event.args.get("outcome").and_then(Value::as_str) {
            Some("raised") => Outcome::Raised,
            Some("open_at_end") => Outcome::OpenAtEnd,
            Some("killed") => Outcome::Killed,
            _ => Outcome::Returned,
        }
    }
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
    fn an_end_says_its_outcome_and_other_events_say_none() {
        let of = |json| Outcome::of_end(&event(json));
        assert_eq!(
            of(r#"{"ph":"E","args":{"outcome":"raised"}}"#),
            Outcome::Raised
        );
        assert_eq!(
            of(r#"{"ph":"X","args":{"outcome":"raised"}}"#),
            Outcome::Raised
        );
        assert_eq!(
            of(r#"{"ph":"e","args":{"outcome":"killed"}}"#),
            Outcome::Killed
        );
        assert_eq!(
            of(r#"{"ph":"E","args":{"outcome":"open_at_end"}}"#),
            Outcome::OpenAtEnd
        );
        assert_eq!(of(r#"{"ph":"E"}"#), Outcome::Returned);
        assert_eq!(
            of(r#"{"ph":"B","args":{"outcome":"raised"}}"#),
            Outcome::Returned
        );
        assert_eq!(
            of(r#"{"ph":"E","args":{"outcome":"odd"}}"#),
            Outcome::Returned
        );
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

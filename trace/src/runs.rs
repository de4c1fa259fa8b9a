//! Runs as the analyses that compare them see them: per function, the
//! calls and the inclusive and self time of one whole run, and the run's
//! wall time.
//!
//! A run is read from its trace files (all the processes of one run: a
//! directory or a list of files) or from a run in a database made by
//! [`crate::import`]. Either way the numbers come from the same
//! [`Summarizer`]: a run in a database has its spans handed back to it as
//! complete events, so the two agree on self time.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags};
use serde::Serialize;

use crate::db::DbError;
use crate::error::TraceError;
use crate::event::{Event, Phase};
use crate::merge::{trace_files, MergeError};
use crate::read::stream_trace;
use crate::summary::{summarize_exactly, Summarizer, Summary};

/// What one run spent in one function, summed over its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct FunctionTotals {
    pub calls: u64,
    pub inclusive_ns: i64,
    pub self_ns: i64,
}

/// One run of a program or workflow, reduced to what comparisons need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunProfile {
    /// The run's name: its database name, or the path it was read from.
    pub name: String,
    /// From the first to the last timestamp of the run's events (of its
    /// spans, for a run in a database); `None` for a run without any.
    pub wall_ns: Option<i64>,
    /// Per span name.
    pub functions: BTreeMap<String, FunctionTotals>,
    /// How many of the run's trace files were cut short (their spans still
    /// open at the end are not counted).
    pub truncated_files: usize,
}

impl RunProfile {
    /// The profile of a run summarised as `summary`.
    pub fn from_summary(name: &str, summary: &Summary) -> RunProfile {
        RunProfile {
            name: name.to_string(),
            wall_ns: summary.span_ns(),
            functions: summary
                .functions
                .iter()
                .map(|f| {
                    let totals = FunctionTotals {
                        calls: f.calls,
                        inclusive_ns: f.total_ns,
                        self_ns: f.self_ns,
                    };
                    (f.name.clone(), totals)
                })
                .collect(),
            truncated_files: summary.truncated_traces,
        }
    }
}

/// Why runs could not be read; every variant names its input.
#[derive(Debug)]
pub enum RunsError {
    /// A trace file that cannot be read.
    Trace(TraceError),
    /// A path that names no trace files.
    Files(MergeError),
    /// A database that cannot be opened or queried.
    Database(DbError),
    /// A run name the database does not hold.
    NoSuchRun {
        db: PathBuf,
        run: String,
        known: Vec<String>,
    },
}

impl fmt::Display for RunsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunsError::Trace(error) => write!(f, "{error}"),
            RunsError::Files(error) => write!(f, "{error}"),
            RunsError::Database(error) => write!(f, "{error}"),
            RunsError::NoSuchRun { db, run, known } => {
                write!(f, "{}: no run named `{run}`; ", db.display())?;
                if known.is_empty() {
                    write!(f, "the database holds no runs")
                } else {
                    write!(f, "expected one of: {}", known.join(", "))
                }
            }
        }
    }
}

impl std::error::Error for RunsError {}

/// The profile of the run whose trace files are `paths` (files as given,
/// directories as the `perfflow.*.pfw` files in them), named `name`.
/// Each file is streamed: memory holds what is open, not the file.
pub fn read_run(name: &str, paths: &[PathBuf]) -> Result<RunProfile, RunsError> {
    let files = trace_files(paths, Path::new("")).map_err(RunsError::Files)?;
    let summary = summarize_exactly(Summarizer::new, |summarizer, _| {
        for file in &files {
            let info =
                stream_trace(file, |event| summarizer.push(&event)).map_err(RunsError::Trace)?;
            summarizer.end_trace(info.truncated);
        }
        Ok(())
    })?;
    Ok(RunProfile::from_summary(name, &summary))
}

/// Opens the database at `db` for reading.
pub(crate) fn open_database(db: &Path) -> Result<Connection, RunsError> {
    let failed = |source| {
        RunsError::Database(DbError::Database {
            path: db.to_path_buf(),
            source,
        })
    };
    if !db.is_file() {
        return Err(RunsError::Database(DbError::Input {
            path: db.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such database file"),
        }));
    }
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(failed)?;
    // A file that is not a database made by `db` fails here.
    conn.query_row("SELECT COUNT(*) FROM run", [], |row| row.get::<_, i64>(0))
        .map_err(failed)?;
    Ok(conn)
}

/// A query on the database at `db` failed.
pub(crate) fn query_failed(db: &Path) -> impl Fn(rusqlite::Error) -> RunsError + '_ {
    move |source| {
        RunsError::Database(DbError::Database {
            path: db.to_path_buf(),
            source,
        })
    }
}

/// The names of the runs in the database, in the order they were made.
pub(crate) fn run_names(conn: &Connection, db: &Path) -> Result<Vec<String>, RunsError> {
    let mut statement = conn
        .prepare("SELECT name FROM run ORDER BY id")
        .map_err(query_failed(db))?;
    let names = statement
        .query_map([], |row| row.get(0))
        .and_then(Iterator::collect)
        .map_err(query_failed(db))?;
    Ok(names)
}

/// The profile of run `run` in the database at `db`.
///
/// The run's ended spans are handed to a [`Summarizer`] process by
/// process, each thread's in order of start (the enclosing span first), as
/// `X` events, and asynchronous spans as a `b`/`e` pair; spans still open
/// at the end of their trace are left out, as `summary` leaves them out.
pub fn db_run(db: &Path, run: &str) -> Result<RunProfile, RunsError> {
    let conn = open_database(db)?;
    let failed = query_failed(db);
    let id: Option<i64> = conn
        .query_row("SELECT id FROM run WHERE name = ?1", [run], |row| {
            row.get(0)
        })
        .map(Some)
        .or_else(|error| match error {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            other => Err(other),
        })
        .map_err(&failed)?;
    let Some(id) = id else {
        return Err(RunsError::NoSuchRun {
            db: db.to_path_buf(),
            run: run.to_string(),
            known: run_names(&conn, db)?,
        });
    };
    let mut statement = conn
        .prepare(
            "SELECT p.id, p.pid, t.tid, s.name, s.category, s.start_ns, s.end_ns, s.async_id,
                    s.depth IS NULL AND s.async_id IS NOT NULL
             FROM span s JOIN process p ON p.id = s.process LEFT JOIN thread t ON t.id = s.thread
             WHERE p.run = ?1 AND s.start_ns IS NOT NULL AND s.end_ns IS NOT NULL
             ORDER BY p.id, t.tid, s.start_ns, s.end_ns DESC, s.depth, s.id",
        )
        .map_err(&failed)?;
    let mut rows = statement.query(params![id]).map_err(&failed)?;
    let mut summarizer = Summarizer::new();
    let mut process = None;
    while let Some(row) = rows.next().map_err(&failed)? {
        let this: i64 = row.get(0).map_err(&failed)?;
        if process.is_some_and(|p| p != this) {
            summarizer.end_trace(false);
        }
        process = Some(this);
        let start: i64 = row.get(5).map_err(&failed)?;
        let end: i64 = row.get(6).map_err(&failed)?;
        let event = Event {
            name: row.get(3).map_err(&failed)?,
            cat: row.get(4).map_err(&failed)?,
            pid: row.get(1).map_err(&failed)?,
            tid: row.get(2).map_err(&failed)?,
            ts_ns: Some(start),
            ts: Some(start as f64 / 1000.0),
            ..Event::default()
        };
        let is_async: bool = row.get(8).map_err(&failed)?;
        if is_async {
            let id: Option<String> = row.get(7).map_err(&failed)?;
            let begin = Event {
                ph: Some(Phase::AsyncBegin),
                id: id.clone(),
                ..event.clone()
            };
            let end = Event {
                ph: Some(Phase::AsyncEnd),
                id,
                ts_ns: Some(end),
                ts: Some(end as f64 / 1000.0),
                ..event
            };
            summarizer.push(&begin);
            summarizer.push(&end);
        } else {
            summarizer.push(&Event {
                ph: Some(Phase::Complete),
                dur_ns: Some(end - start),
                dur: Some((end - start) as f64 / 1000.0),
                ..event
            });
        }
    }
    if process.is_some() {
        summarizer.end_trace(false);
    }
    let mut profile = RunProfile::from_summary(run, &summarizer.finish());
    let truncated: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM source_file WHERE run = ?1 AND truncated",
            [id],
            |row| row.get(0),
        )
        .map_err(&failed)?;
    profile.truncated_files = truncated as usize;
    Ok(profile)
}

//! Importing traces into one SQLite database, and querying it.
//!
//! [`import`] streams each trace file into the tables described in
//! `docs/database.md`: one `run` per name, its processes (identified as
//! [`crate::merge`] identifies them: host, executable, MPI rank from the
//! runtime's `perfflow_process` metadata), threads, spans (one row per
//! `B`/`E` pair, `X` event or `b`/`e` pair, with its depth and parent
//! span), instants, flows between spans and counter samples. Pairing uses
//! the same matcher as `check` and `summary`, so the three agree on what a
//! span is.
//!
//! Each file is one transaction with prepared statements; memory holds
//! what is open (spans not yet ended, the current file's threads). Flows
//! are paired through the database, so a flow's two ends may be in
//! different files of the run. A file already imported (same size and the
//! same first and last 64 KiB) is skipped, so re-importing changes nothing.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, OptionalExtension, Statement, Transaction};
use serde_json::Value;

use perfflow_monitor::report::input::{parse_group, GROUPS};

use crate::error::TraceError;
use crate::event::{Event, Phase};
use crate::merge::{identify, trace_files, Facts, MergeError, Process};
use crate::outcome::{Endings, Outcome};
use crate::read::stream_trace_in_place;
use crate::spans::{Matched, Matcher, Mismatch};

mod nesting;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS run (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
    start_ns INTEGER, end_ns INTEGER, host_count INTEGER NOT NULL DEFAULT 0, command TEXT);
CREATE TABLE IF NOT EXISTS run_label (
    run INTEGER NOT NULL REFERENCES run(id), key TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (run, key));
CREATE TABLE IF NOT EXISTS source_file (
    id INTEGER PRIMARY KEY, run INTEGER NOT NULL REFERENCES run(id), path TEXT NOT NULL,
    size INTEGER NOT NULL, digest TEXT NOT NULL, events INTEGER NOT NULL,
    truncated INTEGER NOT NULL, UNIQUE (size, digest));
CREATE TABLE IF NOT EXISTS process (
    id INTEGER PRIMARY KEY, run INTEGER NOT NULL REFERENCES run(id),
    file INTEGER NOT NULL REFERENCES source_file(id),
    host TEXT NOT NULL, pid INTEGER NOT NULL, rank INTEGER, exe TEXT NOT NULL,
    monitor INTEGER NOT NULL DEFAULT 0, command TEXT);
CREATE TABLE IF NOT EXISTS thread (
    id INTEGER PRIMARY KEY, process INTEGER NOT NULL REFERENCES process(id),
    tid INTEGER NOT NULL, name TEXT);
CREATE TABLE IF NOT EXISTS span (
    id INTEGER PRIMARY KEY, thread INTEGER REFERENCES thread(id),
    process INTEGER NOT NULL REFERENCES process(id),
    name TEXT, category TEXT, start_ns INTEGER, end_ns INTEGER,
    depth INTEGER, parent INTEGER REFERENCES span(id) DEFERRABLE INITIALLY DEFERRED, async_id TEXT,
    outcome TEXT NOT NULL CHECK (outcome IN ('returned', 'raised', 'open_at_end', 'killed')));
CREATE INDEX IF NOT EXISTS span_by_parent ON span(parent);
CREATE TABLE IF NOT EXISTS instant (
    id INTEGER PRIMARY KEY, thread INTEGER REFERENCES thread(id),
    process INTEGER NOT NULL REFERENCES process(id),
    name TEXT, category TEXT, ts_ns INTEGER, span INTEGER REFERENCES span(id) DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE IF NOT EXISTS flow (
    id INTEGER PRIMARY KEY, run INTEGER NOT NULL REFERENCES run(id),
    category TEXT NOT NULL, flow_id TEXT NOT NULL,
    from_span INTEGER REFERENCES span(id) DEFERRABLE INITIALLY DEFERRED, from_ns INTEGER,
    to_span INTEGER REFERENCES span(id) DEFERRABLE INITIALLY DEFERRED, to_ns INTEGER);
CREATE INDEX IF NOT EXISTS flow_by_key ON flow(run, category, flow_id);
CREATE TABLE IF NOT EXISTS metric (
    run INTEGER NOT NULL REFERENCES run(id), file INTEGER NOT NULL REFERENCES source_file(id),
    host TEXT NOT NULL, metric_group TEXT NOT NULL, series TEXT NOT NULL, unit TEXT,
    ts_ns INTEGER NOT NULL, value REAL NOT NULL);
CREATE TABLE IF NOT EXISTS counter (
    process INTEGER NOT NULL REFERENCES process(id), track TEXT NOT NULL,
    series TEXT NOT NULL, ts_ns INTEGER NOT NULL, value REAL);
";

/// The indexes only queries use, made after the rows are in: building an
/// index over a table at once costs less than keeping it up to date row by
/// row. (`span_by_parent` is also in [`SCHEMA`], as databases made before
/// this have it; [`DROP_INDEXES`] removes it from a database without
/// spans. `flow_by_key` stays: the import pairs flows with it.)
const INDEXES: &str = "
CREATE INDEX IF NOT EXISTS span_by_name ON span(name);
CREATE INDEX IF NOT EXISTS span_by_parent ON span(parent);
";

/// [`INDEXES`] undone, before the first rows go into a new database.
const DROP_INDEXES: &str = "
DROP INDEX IF EXISTS span_by_name;
DROP INDEX IF EXISTS span_by_parent;
";

/// Why an import or a query failed; every variant names its input.
#[derive(Debug)]
pub enum DbError {
    /// The database cannot be opened, created or written.
    Database {
        path: PathBuf,
        source: rusqlite::Error,
    },
    /// A trace cannot be read.
    Trace(TraceError),
    /// A file cannot be read.
    Input {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A metric file of perfflow-monitor that cannot be read.
    Metrics { path: PathBuf, problem: String },
    /// A query SQLite rejected.
    Query {
        sql: String,
        source: rusqlite::Error,
    },
    /// A query that holds no statement (empty, blank or only comments).
    EmptyQuery { sql: String },
    /// A query of more than one statement: only one result can be printed.
    SeveralStatements { sql: String },
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbError::Database { path, source } => {
                write!(
                    f,
                    "{}: cannot use as a SQLite database: {source}",
                    path.display()
                )
            }
            DbError::Trace(error) => write!(f, "{error}"),
            DbError::Input { path, source } => write!(f, "{}: {source}", path.display()),
            DbError::Metrics { path, problem } => {
                write!(
                    f,
                    "{}: not a perfflow-monitor metric file: {problem}",
                    path.display()
                )
            }
            DbError::Query { sql, source } => write!(f, "query `{sql}` failed: {source}"),
            DbError::EmptyQuery { sql } => write!(
                f,
                "query `{sql}` holds no SQL statement; expected one, or the name of a canned query"
            ),
            DbError::SeveralStatements { sql } => write!(
                f,
                "query `{sql}` holds more than one SQL statement; expected one (run each on its own)"
            ),
        }
    }
}

impl std::error::Error for DbError {}

/// What [`import`] did with one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Imported {
    /// Imported: events read, spans written, whether it was cut short.
    New {
        path: PathBuf,
        events: u64,
        spans: u64,
        truncated: bool,
    },
    /// A metric group file of perfflow-monitor: samples written.
    Metrics { path: PathBuf, samples: u64 },
    /// Already in the database (as `as_path`, in run `run`): skipped.
    Skipped {
        path: PathBuf,
        as_path: String,
        run: String,
    },
}

/// Imports `files` into the database at `db` (created if missing) as run
/// `run`, adding `labels` to it. Files already imported are skipped.
pub fn import(
    db: &Path,
    files: &[PathBuf],
    run: &str,
    labels: &[(String, String)],
) -> Result<Vec<Imported>, DbError> {
    let database = |source| DbError::Database {
        path: db.to_path_buf(),
        source,
    };
    let mut conn = Connection::open(db).map_err(database)?;
    // Each file is committed once; a crash loses at most the file being
    // imported, which WAL with NORMAL sync guarantees without a sync per
    // commit.
    //
    // The importer keeps the foreign keys itself (every id it writes is
    // one it made in the same transaction; see `FileImport::unlink`), so
    // SQLite does not check them: checking a deferred `parent` key costs
    // a B-tree lookup per span and, while any child waits for its parent,
    // a search of every table that may point at the new span. Likewise
    // the `CHECK` on `span.outcome`: the importer writes only the outcomes
    // of `Outcome::as_str`, and SQLite checks an `IN` list of a `CHECK` by
    // building a temporary index of it for every row.
    //
    // A new database gets pages of 16 KiB (a database that exists keeps
    // its own): a quarter of the writes to the WAL and to the database
    // file, and about half of the import's system time (docs/benchmarks.md).
    conn.execute_batch(
        "PRAGMA page_size = 16384;
         PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF;
         PRAGMA ignore_check_constraints = ON;",
    )
    .map_err(database)?;
    conn.execute_batch(SCHEMA).map_err(database)?;
    add_columns(&conn).map_err(database)?;
    crate::outcome::widen_check(&conn).map_err(database)?;
    // Into a database without spans, the indexes only queries use are
    // made once after the rows are in (one sort) instead of kept up to
    // date row by row; a database that has spans keeps them.
    let empty: bool = conn
        .query_row("SELECT NOT EXISTS (SELECT 1 FROM span)", [], |row| {
            row.get(0)
        })
        .map_err(database)?;
    if empty {
        conn.execute_batch(DROP_INDEXES).map_err(database)?;
    }
    // The run is made, and labelled, with its first new file, so that a
    // command whose files are all imported already changes nothing.
    let mut run_id = None;
    let mut done = Vec::new();
    for path in files {
        let (size, digest) = fingerprint(path)?;
        let seen: Option<(String, String)> = conn
            .query_row(
                "SELECT f.path, r.name FROM source_file f JOIN run r ON r.id = f.run
                 WHERE f.size = ?1 AND f.digest = ?2",
                params![size as i64, digest],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(database)?;
        if let Some((as_path, run)) = seen {
            done.push(Imported::Skipped {
                path: path.clone(),
                as_path,
                run,
            });
            continue;
        }
        let tx = conn.transaction().map_err(database)?;
        let run_id = match run_id {
            Some(id) => id,
            None => *run_id.insert(make_run(&tx, run, labels).map_err(database)?),
        };
        let new = NewFile {
            db,
            run: run_id,
            path,
            size,
            digest: &digest,
        };
        let imported = match metric_group(path) {
            Some(group) => import_metrics(&tx, &new, group)?,
            None => import_file(&tx, &new)?,
        };
        tx.commit().map_err(database)?;
        done.push(imported);
    }
    // SQLite sorts the keys of a new index in memory up to the size of
    // its page cache (at least 250 pages, 4 MiB here), then in runs merged
    // through a temporary file: a 16 MiB cache makes a quarter as many
    // runs, about 4% less CPU for the whole import of 11 M events, for
    // 26 MiB more peak RSS whatever the input's size (docs/benchmarks.md).
    conn.execute_batch("PRAGMA cache_size = -16384")
        .map_err(database)?;
    conn.execute_batch(INDEXES).map_err(database)?;
    let Some(run_id) = run_id else {
        return Ok(done);
    };
    // (`start_ns` and `end_ns` are kept with each file: see `import_file`.)
    conn.execute(
        "UPDATE run SET
           host_count = (SELECT COUNT(DISTINCT host) FROM
                           (SELECT host FROM process WHERE run = ?1
                            UNION SELECT host FROM metric WHERE run = ?1)),
           command = COALESCE(command, (SELECT command FROM process
                                        WHERE run = ?1 AND command IS NOT NULL
                                        ORDER BY id LIMIT 1))
         WHERE id = ?1",
        [run_id],
    )
    .map_err(database)?;
    Ok(done)
}

/// Columns added to the schema after its first release, as (table,
/// column, declaration): added to a database made before them.
const ADDED_COLUMNS: &[(&str, &str, &str)] =
    &[("run", "command", "TEXT"), ("process", "command", "TEXT")];

fn add_columns(conn: &Connection) -> Sql<()> {
    for (table, column, declaration) in ADDED_COLUMNS {
        let present: i64 = conn.query_row(
            &format!("SELECT COUNT(*) FROM pragma_table_info('{table}') WHERE name = ?1"),
            [column],
            |row| row.get(0),
        )?;
        if present == 0 {
            conn.execute_batch(&format!(
                "ALTER TABLE {table} ADD COLUMN {column} {declaration}"
            ))?;
        }
    }
    Ok(())
}

/// The id of run `name`, made if new, with `labels` set.
fn make_run(tx: &Transaction<'_>, name: &str, labels: &[(String, String)]) -> Sql<i64> {
    tx.execute("INSERT OR IGNORE INTO run (name) VALUES (?1)", [name])?;
    let id = tx.query_row("SELECT id FROM run WHERE name = ?1", [name], |row| {
        row.get(0)
    })?;
    for (key, value) in labels {
        tx.execute(
            "INSERT OR REPLACE INTO run_label (run, key, value) VALUES (?1, ?2, ?3)",
            params![id, key, value],
        )?;
    }
    Ok(id)
}

/// The size of the file at `path` and a digest of its first and last
/// 64 KiB (FNV-1a, 64 bits, in hex).
fn fingerprint(path: &Path) -> Result<(u64, String), DbError> {
    let input = |source| DbError::Input {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(input)?;
    let size = file.metadata().map_err(input)?.len();
    const PART: u64 = 64 * 1024;
    let mut bytes = Vec::new();
    (&mut file)
        .take(PART)
        .read_to_end(&mut bytes)
        .map_err(input)?;
    if size > PART {
        file.seek(SeekFrom::Start(size.saturating_sub(PART).max(PART)))
            .map_err(input)?;
        file.take(PART).read_to_end(&mut bytes).map_err(input)?;
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    Ok((size, format!("{hash:016x}")))
}

/// A file about to be imported into run `run` of the database at `db`.
struct NewFile<'a> {
    db: &'a Path,
    run: i64,
    path: &'a Path,
    size: u64,
    digest: &'a str,
}

impl NewFile<'_> {
    fn error(&self, source: rusqlite::Error) -> DbError {
        DbError::Database {
            path: self.db.to_path_buf(),
            source,
        }
    }

    /// Records the file in `source_file` (its counts filled in later) and
    /// returns its id.
    fn add(&self, tx: &Transaction<'_>) -> Result<i64, DbError> {
        tx.execute(
            "INSERT INTO source_file (run, path, size, digest, events, truncated)
             VALUES (?1, ?2, ?3, ?4, 0, 0)",
            params![
                self.run,
                self.path.to_string_lossy(),
                self.size as i64,
                self.digest
            ],
        )
        .map_err(|source| self.error(source))?;
        Ok(tx.last_insert_rowid())
    }
}

/// The files `db` imports for `paths`: a trace file as given; a directory
/// holding a `metrics` directory of perfflow-monitor (or that directory
/// itself) as the metric group files in it and the `perfflow.*.pfw` files
/// beside it; any other directory as its `perfflow.*.pfw` files.
pub fn input_files(paths: &[PathBuf], output: &Path) -> Result<Vec<PathBuf>, MergeError> {
    let mut files = Vec::new();
    for path in paths {
        let metrics = if path.join("metrics").is_dir() {
            path.join("metrics")
        } else if path.is_dir() && path.file_name().is_some_and(|name| name == "metrics") {
            path.clone()
        } else {
            files.extend(trace_files(std::slice::from_ref(path), output)?);
            continue;
        };
        let groups: Vec<PathBuf> = GROUPS
            .iter()
            .map(|group| metrics.join(format!("{group}.json")))
            .filter(|file| file.is_file())
            .collect();
        let traces = match trace_files(std::slice::from_ref(path), output) {
            Err(MergeError::NoTraces { .. }) if !groups.is_empty() => Vec::new(),
            other => other?,
        };
        files.extend(groups);
        files.extend(traces);
    }
    Ok(files)
}

/// The metric group a file `metrics/<group>.json` holds.
fn metric_group(path: &Path) -> Option<&'static str> {
    let parent = path.parent()?.file_name()?;
    let stem = path.file_stem()?.to_str()?;
    let is_json = path.extension().is_some_and(|ext| ext == "json");
    (parent == "metrics" && is_json)
        .then(|| GROUPS.iter().copied().find(|group| *group == stem))
        .flatten()
}

/// Imports the metric group file at `path`: one `metric` row per sample
/// with a value (missing samples are left out).
fn import_metrics(tx: &Transaction<'_>, new: &NewFile, group: &str) -> Result<Imported, DbError> {
    let (run, path) = (new.run, new.path);
    let database = |source| new.error(source);
    let text = std::fs::read_to_string(path).map_err(|source| DbError::Input {
        path: path.to_path_buf(),
        source,
    })?;
    let parsed = parse_group(group, &text).map_err(|problem| DbError::Metrics {
        path: path.to_path_buf(),
        problem,
    })?;
    let file = new.add(tx)?;
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO metric (run, file, host, metric_group, series, unit, ts_ns, value)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )
        .map_err(database)?;
    let mut samples = 0u64;
    for host in &parsed.hosts {
        for (series, values) in &host.series {
            let unit = parsed.unit(series);
            for (ts, value) in host.time_stamps.iter().zip(values) {
                let Some(value) = value else { continue };
                // Seconds as an f64 resolve about 0.24 µs at present-day
                // times: keep whole microseconds.
                let ts_ns = (ts * 1e6).round() as i64 * 1000;
                insert
                    .execute(params![
                        run, file, host.host, group, series, unit, ts_ns, value
                    ])
                    .map_err(database)?;
                samples += 1;
            }
        }
    }
    tx.execute(
        "UPDATE source_file SET events = ?2 WHERE id = ?1",
        params![file, samples as i64],
    )
    .map_err(database)?;
    Ok(Imported::Metrics {
        path: path.to_path_buf(),
        samples,
    })
}

/// A span begun and not yet written: its row id is chosen at the begin so
/// that spans inside it can name it as their parent.
struct Open {
    id: i64,
    cat: Option<String>,
    parent: Option<i64>,
    depth: i64,
}

/// A `span` row.
#[derive(PartialEq)]
struct SpanRow {
    id: i64,
    thread: Option<i64>,
    process: i64,
    name: Option<String>,
    cat: Option<String>,
    start_ns: Option<i64>,
    end_ns: Option<i64>,
    depth: Option<i64>,
    parent: Option<i64>,
    async_id: Option<String>,
    outcome: &'static str,
}

impl SpanRow {
    /// Binds the row to the parameters of [`Statements::span`] (each by
    /// its index: rusqlite's `params!` builds a slice of trait objects),
    /// leaving out the columns that have the value of `last`, the row
    /// bound before: SQLite keeps a statement's bindings from one run to
    /// the next, and a span usually has the process, thread, category,
    /// outcome and often the name and parent of the one before.
    fn bind(&self, statement: &mut Statement<'_>, last: Option<&SpanRow>) -> Sql<()> {
        macro_rules! bind {
            ($index:literal, $field:ident) => {
                if last.is_none_or(|last| last.$field != self.$field) {
                    statement.raw_bind_parameter($index, &self.$field)?;
                }
            };
        }
        bind!(1, id);
        bind!(2, thread);
        bind!(3, process);
        bind!(4, name);
        bind!(5, cat);
        bind!(6, start_ns);
        bind!(7, end_ns);
        bind!(8, depth);
        bind!(9, parent);
        bind!(10, async_id);
        bind!(11, outcome);
        Ok(())
    }
}

/// The statements run per event, prepared once per file (looking a
/// statement up in rusqlite's cache hashes its text, on every event).
struct Statements<'a> {
    span: Statement<'a>,
    /// The row whose values [`Statements::span`] has bound.
    span_bound: Option<SpanRow>,
    instant: Statement<'a>,
    counter: Statement<'a>,
}

impl<'a> Statements<'a> {
    fn new(tx: &'a Transaction<'a>) -> Sql<Statements<'a>> {
        Ok(Statements {
            span: tx.prepare(
                "INSERT INTO span (id, thread, process, name, category, start_ns, end_ns, depth,
                                   parent, async_id, outcome)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?,
            span_bound: None,
            instant: tx.prepare(
                "INSERT INTO instant (thread, process, name, category, ts_ns, span)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?,
            counter: tx.prepare(
                "INSERT INTO counter (process, track, series, ts_ns, value)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?,
        })
    }
}

/// The import of one file, inside its transaction.
struct FileImport<'a> {
    tx: &'a Transaction<'a>,
    statements: Statements<'a>,
    run: i64,
    file: i64,
    path: PathBuf,
    next_span: i64,
    /// Processes of this file by pid: (row id, index into `processes`).
    pids: foldhash::HashMap<i64, (i64, usize)>,
    processes: Vec<Process>,
    facts: HashMap<i64, Facts>,
    /// The command line of each pid, as the JSON array the runtime wrote.
    commands: HashMap<i64, String>,
    threads: foldhash::HashMap<(i64, i64), i64>,
    /// The last process and thread looked up, and their rows.
    last_process: Option<(i64, i64)>,
    last_thread: Option<((i64, i64), i64)>,
    /// Open `B`s by their position in the file.
    open: foldhash::HashMap<usize, Open>,
    /// The threads (row ids) whose spans are nested by time after the
    /// file is read ([`nesting::renest`]): those with an `X`, or a `B`
    /// earlier than an event before it (a compact `.pftrace` writes each
    /// slice's begin and end when it ends).
    renest: foldhash::HashSet<i64>,
    /// The latest time seen on each thread but the current one, and the
    /// current thread's (events come in runs of one thread).
    latest: foldhash::HashMap<i64, i64>,
    latest_now: Option<(i64, i64)>,
    matcher: Matcher,
    spans: u64,
    /// The earliest start and the latest end (or start, for a span
    /// without an end) of the spans written.
    first_ns: Option<i64>,
    last_ns: Option<i64>,
    /// The first span id of this file, and the largest `instant` row id
    /// before it.
    first_span: i64,
    instants_before: i64,
    /// Ids given to `B`s that turned out to be no span (closed by an `E`
    /// of another name): rows written before that point at them.
    dropped: Vec<i64>,
    /// What the matcher found at the current event (kept to reuse).
    found: Vec<Matched>,
    /// The flow ends of this file, written and paired once it is read.
    flows: Vec<FlowEnd>,
    /// The `labels` of the runtime's `perfflow_process` metadata.
    labels: Vec<(String, String)>,
    /// How each process's trace ended, and whether the file was cut short:
    /// the outcome of the spans left open.
    endings: Endings,
    truncated: bool,
}

/// One end of a flow read from a file: a departure (`s`) or an arrival
/// (`f`), and the span it lies in.
struct FlowEnd {
    departs: bool,
    category: String,
    id: String,
    thread: Option<i64>,
    ts_ns: Option<i64>,
    span: Option<i64>,
}

/// Writes `ends` into the `flow` table of run `run` and pairs the ends of
/// each flow (category and id) they belong to again, with those other
/// files of the run gave before: departures and arrivals in order of
/// time, the first departure with the first arrival, as `merge` and
/// `critical-path` pair them, whichever file holds each end and in
/// whatever order the files come.
fn pair_flows(tx: &Transaction<'_>, run: i64, ends: Vec<FlowEnd>) -> Sql<()> {
    /// An end: time, span, and the order it was read in.
    type Side = (Option<i64>, Option<i64>, i64);
    let mut keys: BTreeMap<(String, String), [Vec<Side>; 2]> = BTreeMap::new();
    for (n, end) in ends.into_iter().enumerate() {
        let sides = keys.entry((end.category, end.id)).or_default();
        sides[usize::from(!end.departs)].push((end.ts_ns, end.span, i64::MAX / 2 + n as i64));
    }
    let mut earlier = tx.prepare_cached(
        "SELECT id, from_ns, from_span, to_ns, to_span FROM flow
         WHERE run = ?1 AND category = ?2 AND flow_id = ?3",
    )?;
    let mut forget =
        tx.prepare_cached("DELETE FROM flow WHERE run = ?1 AND category = ?2 AND flow_id = ?3")?;
    let mut insert = tx.prepare_cached(
        "INSERT INTO flow (run, category, flow_id, from_span, from_ns, to_span, to_ns)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for ((category, id), mut sides) in keys {
        let mut rows = earlier.query(params![run, category, id])?;
        while let Some(row) = rows.next()? {
            let order: i64 = row.get(0)?;
            for (side, at) in [(0, 1), (1, 3)] {
                let ts: Option<i64> = row.get(at)?;
                let span: Option<i64> = row.get(at + 1)?;
                if ts.is_some() || span.is_some() {
                    sides[side].push((ts, span, order));
                }
            }
        }
        drop(rows);
        forget.execute(params![run, category, id])?;
        for side in &mut sides {
            side.sort_by_key(|&(ts, _, order)| (ts, order));
        }
        let [departures, arrivals] = sides;
        let paired = departures.len().max(arrivals.len());
        for k in 0..paired {
            let (from_ns, from_span, _) = departures.get(k).copied().unwrap_or((None, None, 0));
            let (to_ns, to_span, _) = arrivals.get(k).copied().unwrap_or((None, None, 0));
            insert.execute(params![
                run, category, id, from_span, from_ns, to_span, to_ns
            ])?;
        }
    }
    Ok(())
}

fn import_file(tx: &Transaction<'_>, new: &NewFile) -> Result<Imported, DbError> {
    let (run, path) = (new.run, new.path);
    let database = |source| new.error(source);
    let file = new.add(tx)?;
    let next_span: i64 = tx
        .query_row("SELECT COALESCE(MAX(id), 0) + 1 FROM span", [], |row| {
            row.get(0)
        })
        .map_err(database)?;
    let instants_before: i64 = tx
        .query_row("SELECT COALESCE(MAX(id), 0) FROM instant", [], |row| {
            row.get(0)
        })
        .map_err(database)?;
    let mut state = FileImport {
        tx,
        statements: Statements::new(tx).map_err(database)?,
        run,
        file,
        path: path.to_path_buf(),
        next_span,
        pids: Default::default(),
        processes: Vec::new(),
        facts: HashMap::new(),
        commands: HashMap::new(),
        threads: Default::default(),
        last_process: None,
        last_thread: None,
        open: Default::default(),
        renest: Default::default(),
        latest: Default::default(),
        latest_now: None,
        matcher: Matcher::default(),
        spans: 0,
        first_ns: None,
        last_ns: None,
        first_span: next_span,
        instants_before,
        dropped: Vec::new(),
        found: Vec::new(),
        flows: Vec::new(),
        labels: Vec::new(),
        endings: Endings::default(),
        truncated: false,
    };
    let mut events = 0u64;
    let mut failed = None;
    let info = stream_trace_in_place(path, |event| {
        if failed.is_some() {
            return;
        }
        if let Err(error) = state.event(events as usize, event) {
            failed = Some(error);
        }
        events += 1;
    })
    .map_err(DbError::Trace)?;
    if let Some(error) = failed {
        return Err(database(error));
    }
    state.truncated = info.truncated;
    let matcher = std::mem::take(&mut state.matcher);
    let mut left = Vec::new();
    matcher.finish(&mut |found| left.push(found));
    for found in left {
        state.matched(found).map_err(database)?;
    }
    state.unlink().map_err(database)?;
    let mut renest: Vec<i64> = state.renest.iter().copied().collect();
    renest.sort_unstable();
    // A flow end on a thread nested by time lies in the span its time
    // says, as an instant does.
    let moved: Vec<(usize, i64, i64)> = state
        .flows
        .iter()
        .enumerate()
        .filter_map(|(n, end)| match (end.thread, end.ts_ns) {
            (Some(thread), Some(ts)) if state.renest.contains(&thread) => Some((n, thread, ts)),
            _ => None,
        })
        .collect();
    let found = nesting::renest(tx, &renest, state.first_span, state.instants_before, &moved)
        .map_err(database)?;
    for (n, span) in found {
        state.flows[n].span = span;
    }
    let flows = std::mem::take(&mut state.flows);
    pair_flows(tx, run, flows).map_err(database)?;
    let indexes = state
        .pids
        .iter()
        .map(|(&pid, &(_, at))| (pid, at))
        .collect();
    let facts = std::mem::take(&mut state.facts);
    identify(&mut state.processes, &indexes, facts, path, &info);
    for (pid, (row, at)) in &state.pids {
        let process = &state.processes[*at];
        tx.execute(
            "UPDATE process SET host = ?2, exe = ?3, rank = ?4, monitor = ?5, command = ?6
             WHERE id = ?1",
            params![
                row,
                process.host,
                process.exe,
                process.rank.map(|rank| rank as i64),
                process.monitor,
                state.commands.get(pid)
            ],
        )
        .map_err(database)?;
    }
    // A label given on the command line was set with the run and wins.
    for (key, value) in &state.labels {
        tx.execute(
            "INSERT OR IGNORE INTO run_label (run, key, value) VALUES (?1, ?2, ?3)",
            params![run, key, value],
        )
        .map_err(database)?;
    }
    // The run's first start and last end take in this file's spans in the
    // file's transaction (SQLite's min() and max() of a NULL are NULL),
    // so they cover exactly the files committed, without reading `span`.
    tx.execute(
        "UPDATE run SET start_ns = COALESCE(min(start_ns, ?2), start_ns, ?2),
                        end_ns = COALESCE(max(end_ns, ?3), end_ns, ?3)
         WHERE id = ?1",
        params![run, state.first_ns, state.last_ns],
    )
    .map_err(database)?;
    tx.execute(
        "UPDATE source_file SET events = ?2, truncated = ?3 WHERE id = ?1",
        params![file, events as i64, info.truncated],
    )
    .map_err(database)?;
    Ok(Imported::New {
        path: path.to_path_buf(),
        events,
        spans: state.spans,
        truncated: info.truncated,
    })
}

type Sql<T> = Result<T, rusqlite::Error>;

impl FileImport<'_> {
    fn event(&mut self, index: usize, event: &mut Event) -> Sql<()> {
        let Some(pid) = event.pid else {
            return Ok(());
        };
        let process = self.process(pid)?;
        if event.is_metadata() {
            self.facts.entry(pid).or_default().learn(event);
            self.endings.learn(event);
            if event.name.as_deref() == Some("perfflow_process") {
                if let Some(words @ Value::Array(_)) = event.args.get("command") {
                    self.commands.insert(pid, words.to_string());
                }
                if let Some(labels) = event.args.get("labels").and_then(Value::as_object) {
                    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), String::from);
                    self.labels
                        .extend(labels.iter().map(|(k, v)| (k.clone(), text(v))));
                }
            }
            if event.name.as_deref() == Some("thread_name") {
                if let (Some(tid), Some(name)) =
                    (event.tid, event.args.get("name").and_then(Value::as_str))
                {
                    let thread = self.thread(process, pid, tid)?;
                    let mut update = self
                        .tx
                        .prepare_cached("UPDATE thread SET name = ?2 WHERE id = ?1")?;
                    update.execute(params![thread, name])?;
                }
            }
            return Ok(());
        }
        let thread = match event.tid {
            Some(tid) => Some(self.thread(process, pid, tid)?),
            None => None,
        };
        // The innermost open B on this thread, and how many are open.
        let enclosing = |this: &Self| -> (Option<i64>, i64) {
            let open = event.thread().map_or(&[][..], |t| this.matcher.open_on(t));
            let parent = open
                .last()
                .and_then(|seen| this.open.get(&seen.index))
                .map(|open| open.id);
            (parent, open.len() as i64)
        };
        if let (Some(thread), Some(ts)) = (thread, event.ts_ns) {
            if self.goes_back(thread, ts) && event.ph == Some(Phase::Begin) {
                self.renest.insert(thread);
            }
        }
        match event.ph {
            Some(Phase::Begin) => {
                let (parent, depth) = enclosing(self);
                let id = self.take_span_id();
                self.open.insert(
                    index,
                    Open {
                        id,
                        // The matcher keeps no category of a `B`.
                        cat: event.cat.take(),
                        parent,
                        depth,
                    },
                );
            }
            Some(Phase::Complete) => {
                let (parent, depth) = enclosing(self);
                let id = self.take_span_id();
                if let Some(thread) = thread {
                    self.renest.insert(thread);
                }
                // The matcher has no use for an `X`: its strings are taken.
                self.write_span(SpanRow {
                    id,
                    thread,
                    process,
                    name: event.name.take(),
                    cat: event.cat.take(),
                    start_ns: event.ts_ns,
                    end_ns: event.end_ns(),
                    depth: Some(depth),
                    parent,
                    async_id: None,
                    outcome: Outcome::of_end(event).as_str(),
                })?;
            }
            Some(Phase::Instant) | Some(Phase::AsyncInstant) => {
                let (parent, _) = enclosing(self);
                self.statements.instant.execute(params![
                    thread,
                    process,
                    event.name,
                    event.cat,
                    event.ts_ns,
                    parent
                ])?;
            }
            Some(Phase::FlowStart) | Some(Phase::FlowEnd) => {
                let (span, _) = enclosing(self);
                if let Some(id) = event.id.take() {
                    self.flows.push(FlowEnd {
                        departs: event.ph == Some(Phase::FlowStart),
                        category: event.cat.take().unwrap_or_default(),
                        id,
                        thread,
                        ts_ns: event.ts_ns,
                        span,
                    });
                }
            }
            Some(Phase::Counter) => {
                if let Some(args) = event.args.as_object() {
                    let insert = &mut self.statements.counter;
                    let track = event.name.as_deref().unwrap_or("");
                    for (series, value) in args {
                        if let (Some(ts), Some(value)) = (event.ts_ns, value.as_f64()) {
                            insert.execute(params![process, track, series, ts, value])?;
                        }
                    }
                }
            }
            _ => {}
        }
        let mut found = std::mem::take(&mut self.found);
        self.matcher.push(index, event, &mut |m| found.push(m));
        for matched in found.drain(..) {
            self.matched(matched)?;
        }
        self.found = found;
        Ok(())
    }

    /// Whether `ts` is earlier than the latest time seen on `thread`
    /// (which it then becomes if later).
    fn goes_back(&mut self, thread: i64, ts: i64) -> bool {
        let latest = match self.latest_now {
            Some((now, latest)) if now == thread => latest,
            other => {
                if let Some((now, latest)) = other {
                    self.latest.insert(now, latest);
                }
                self.latest.get(&thread).copied().unwrap_or(i64::MIN)
            }
        };
        self.latest_now = Some((thread, latest.max(ts)));
        ts < latest
    }

    fn take_span_id(&mut self) -> i64 {
        let id = self.next_span;
        self.next_span += 1;
        self.spans += 1;
        id
    }

    /// Writes what the matcher paired, or left open at the end.
    fn matched(&mut self, matched: Matched) -> Sql<()> {
        let (begin, end_ns, ended) = match matched {
            Matched::Pair {
                begin,
                end_ts_ns,
                outcome,
                ..
            } => (begin, end_ts_ns, Some(outcome)),
            Matched::Mismatch(mismatch) => match *mismatch {
                Mismatch::Unclosed { begin } | Mismatch::AsyncUnclosed { begin } => {
                    (begin, None, None)
                }
                Mismatch::WrongName { begin, .. } => {
                    if let Some(open) = self.open.remove(&begin.index) {
                        self.dropped.push(open.id);
                        self.spans -= 1;
                    }
                    return Ok(());
                }
                _ => return Ok(()),
            },
        };
        let Some(pid) = begin.thread.map(|(pid, _)| pid) else {
            return Ok(());
        };
        let outcome = match ended {
            Some(outcome) => outcome,
            None => self.endings.unended(pid, self.truncated),
        };
        let process = self.process(pid)?;
        let (id, depth, parent, cat) = match self.open.remove(&begin.index) {
            Some(open) => (open.id, Some(open.depth), open.parent, open.cat),
            // An async span: no depth or parent.
            None => (self.take_span_id(), None, None, begin.cat),
        };
        let thread = match begin.thread {
            Some((pid, tid)) => Some(self.thread(process, pid, tid)?),
            None => None,
        };
        self.write_span(SpanRow {
            id,
            thread,
            process,
            name: begin.name,
            cat,
            start_ns: begin.ts_ns,
            end_ns,
            depth,
            parent,
            async_id: begin.id,
            outcome: outcome.as_str(),
        })
    }

    fn write_span(&mut self, row: SpanRow) -> Sql<()> {
        if let Some(start) = row.start_ns {
            self.first_ns = Some(self.first_ns.map_or(start, |first| first.min(start)));
        }
        if let Some(end) = row.end_ns.or(row.start_ns) {
            self.last_ns = Some(self.last_ns.map_or(end, |last| last.max(end)));
        }
        let statements = &mut self.statements;
        row.bind(&mut statements.span, statements.span_bound.as_ref())?;
        statements.span.raw_execute()?;
        statements.span_bound = Some(row);
        Ok(())
    }

    /// Takes the ids of [`FileImport::dropped`] spans out of the rows of
    /// this file that name them as parent or enclosing span, and out of
    /// its flow ends, so that every key names a row.
    fn unlink(&mut self) -> Sql<()> {
        if self.dropped.is_empty() {
            return Ok(());
        }
        let ids = serde_json::to_string(&self.dropped).expect("integers serialize");
        let dropped = "(SELECT value FROM json_each(?2))";
        self.tx.execute(
            &format!("UPDATE span SET parent = NULL WHERE id >= ?1 AND parent IN {dropped}"),
            params![self.first_span, ids],
        )?;
        self.tx.execute(
            &format!("UPDATE instant SET span = NULL WHERE id > ?1 AND span IN {dropped}"),
            params![self.instants_before, ids],
        )?;
        for end in &mut self.flows {
            if end.span.is_some_and(|span| self.dropped.contains(&span)) {
                end.span = None;
            }
        }
        Ok(())
    }

    /// The row id of process `pid` of this file, created on first sight;
    /// who it is gets filled in at the end of the file.
    fn process(&mut self, pid: i64) -> Sql<i64> {
        // Events come in runs of one thread: the last answer, then the map.
        if let Some((last, row)) = self.last_process {
            if last == pid {
                return Ok(row);
            }
        }
        if let Some(&(row, _)) = self.pids.get(&pid) {
            self.last_process = Some((pid, row));
            return Ok(row);
        }
        self.tx.execute(
            "INSERT INTO process (run, file, host, pid, exe) VALUES (?1, ?2, 'unknown', ?3, '?')",
            params![self.run, self.file, pid],
        )?;
        let row = self.tx.last_insert_rowid();
        self.pids.insert(pid, (row, self.processes.len()));
        self.processes.push(Process::new(&self.path, pid, row));
        Ok(row)
    }

    fn thread(&mut self, process: i64, pid: i64, tid: i64) -> Sql<i64> {
        if let Some((last, row)) = self.last_thread {
            if last == (pid, tid) {
                return Ok(row);
            }
        }
        if let Some(&row) = self.threads.get(&(pid, tid)) {
            self.last_thread = Some(((pid, tid), row));
            return Ok(row);
        }
        let mut insert = self
            .tx
            .prepare_cached("INSERT INTO thread (process, tid) VALUES (?1, ?2)")?;
        insert.execute(params![process, tid])?;
        let row = self.tx.last_insert_rowid();
        self.threads.insert((pid, tid), row);
        Ok(row)
    }
}

/// Named queries `sql` accepts in place of SQL text, after dnpc's: the
/// kinds of span with their counts and durations, and the most common
/// sequences of span names directly under a parent.
pub const CANNED: &[(&str, &str)] = &[
    (
        "span-types",
        "SELECT category, name, COUNT(*) AS spans,
                SUM(outcome = 'open_at_end') AS open_at_end,
                SUM(outcome = 'raised') AS raised, SUM(outcome = 'killed') AS killed,
                MIN(end_ns - start_ns) / 1e3 AS min_us,
                ROUND(AVG(end_ns - start_ns) / 1e3, 3) AS mean_us,
                MAX(end_ns - start_ns) / 1e3 AS max_us
         FROM span GROUP BY category, name ORDER BY spans DESC, category, name",
    ),
    (
        "event-sequences",
        "SELECT p.name AS parent, c.sequence, COUNT(*) AS times
         FROM (SELECT parent, group_concat(name, ' > ' ORDER BY start_ns, id) AS sequence
               FROM span WHERE parent IS NOT NULL GROUP BY parent) c
         JOIN span p ON p.id = c.parent
         GROUP BY p.name, c.sequence ORDER BY times DESC, parent, c.sequence",
    ),
];

/// How [`query`] prints its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// An aligned text table with a header.
    #[default]
    Table,
    /// CSV with a header row.
    Csv,
    /// A JSON array of objects, one per row.
    Json,
}

/// Runs `sql` (SQL text, or the name of one of the [`CANNED`] queries) on
/// the existing database at `db` and writes its rows to `out` in `format`.
pub fn query(
    db: &Path,
    sql: &str,
    format: Format,
    out: &mut dyn std::io::Write,
) -> Result<(), DbError> {
    let conn = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|source| DbError::Database {
            path: db.to_path_buf(),
            source,
        })?;
    let sql = CANNED
        .iter()
        .find(|(name, _)| *name == sql)
        .map_or(sql, |(_, text)| text);
    let failed = |source| DbError::Query {
        sql: sql.to_string(),
        source,
    };
    // Text without a statement (blank, or comments only) prepares to
    // nothing, whose first step SQLite reports as a misuse that is `not an
    // error`.
    let refused = |e| match e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::ApiMisuse => {
            DbError::EmptyQuery {
                sql: sql.to_string(),
            }
        }
        e => failed(e),
    };
    // Prepared one statement at a time, so that text after the first one
    // is not left out without a word.
    let mut batch = rusqlite::Batch::new(&conn, sql);
    let Some(mut statement) = batch.next().map_err(refused)? else {
        return Err(DbError::EmptyQuery {
            sql: sql.to_string(),
        });
    };
    if batch.next().map_err(failed)?.is_some() {
        return Err(DbError::SeveralStatements {
            sql: sql.to_string(),
        });
    }
    let columns: Vec<String> = statement
        .column_names()
        .into_iter()
        .map(String::from)
        .collect();
    let mut rows = statement.query([]).map_err(refused)?;
    let mut cells: Vec<Vec<Value>> = Vec::new();
    while let Some(row) = rows.next().map_err(refused)? {
        let mut values = Vec::with_capacity(columns.len());
        for at in 0..columns.len() {
            values.push(match row.get_ref(at).map_err(failed)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(n) => Value::from(n),
                ValueRef::Real(x) => Value::from(x),
                ValueRef::Text(t) | ValueRef::Blob(t) => {
                    Value::from(String::from_utf8_lossy(t).into_owned())
                }
            });
        }
        cells.push(values);
    }
    let text = |value: &Value| match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let write = |out: &mut dyn std::io::Write, line: String| {
        let _ = writeln!(out, "{line}");
    };
    match format {
        Format::Json => {
            // Written by hand to keep the query's column order (a JSON map
            // would sort the keys); a name the query repeats gets `:2`,
            // `:3`, ... so that no column is lost.
            let mut keys: Vec<String> = Vec::with_capacity(columns.len());
            for (at, name) in columns.iter().enumerate() {
                let seen = columns[..at].iter().filter(|c| *c == name).count();
                let key = match seen {
                    0 => name.clone(),
                    n => format!("{name}:{}", n + 1),
                };
                keys.push(Value::from(key).to_string());
            }
            let mut text = String::from("[");
            for (n, row) in cells.iter().enumerate() {
                text.push_str(if n == 0 { "{" } else { ",{" });
                for (at, (key, value)) in keys.iter().zip(row).enumerate() {
                    if at > 0 {
                        text.push(',');
                    }
                    text.push_str(key);
                    text.push(':');
                    text.push_str(&value.to_string());
                }
                text.push('}');
            }
            text.push(']');
            write(out, text);
        }
        Format::Csv => {
            let field = |s: String| {
                if s.contains([',', '"', '\n', '\r']) {
                    format!("\"{}\"", s.replace('"', "\"\""))
                } else {
                    s
                }
            };
            write(
                out,
                columns
                    .iter()
                    .cloned()
                    .map(field)
                    .collect::<Vec<_>>()
                    .join(","),
            );
            for row in &cells {
                write(
                    out,
                    row.iter()
                        .map(|v| field(text(v)))
                        .collect::<Vec<_>>()
                        .join(","),
                );
            }
        }
        Format::Table => {
            let rows: Vec<Vec<String>> = cells
                .iter()
                .map(|row| row.iter().map(text).collect())
                .collect();
            let mut widths: Vec<usize> = columns.iter().map(|c| c.chars().count()).collect();
            for row in &rows {
                for (width, cell) in widths.iter_mut().zip(row) {
                    *width = (*width).max(cell.chars().count());
                }
            }
            let numeric: Vec<bool> = (0..columns.len())
                .map(|at| {
                    cells
                        .iter()
                        .all(|row| matches!(row[at], Value::Number(_) | Value::Null))
                })
                .collect();
            let line = |row: &[String]| {
                let parts: Vec<String> = row
                    .iter()
                    .enumerate()
                    .map(|(at, cell)| {
                        let pad = " ".repeat(widths[at] - cell.chars().count());
                        if numeric[at] {
                            format!("{pad}{cell}")
                        } else {
                            format!("{cell}{pad}")
                        }
                    })
                    .collect();
                parts.join("  ").trim_end().to_string()
            };
            write(out, line(&columns));
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            write(out, rule.join("  "));
            for row in &rows {
                write(out, line(row));
            }
        }
    }
    Ok(())
}

/// `run-N` for the smallest N from 1 that names no run in the database
/// at `db` (which may not exist yet).
pub fn default_run_name(db: &Path) -> String {
    let taken = |name: &str| -> bool {
        if !db.exists() {
            return false;
        }
        Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|conn| {
                conn.query_row("SELECT COUNT(*) FROM run WHERE name = ?1", [name], |row| {
                    row.get::<_, i64>(0)
                })
            })
            .is_ok_and(|count| count > 0)
    };
    (1..)
        .map(|n| format!("run-{n}"))
        .find(|name| !taken(name))
        .expect("a free run name")
}

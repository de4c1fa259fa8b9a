//! Exporting the trace database as Parquet tables, for DuckDB, Polars,
//! Spark or pyarrow.
//!
//! [`export_parquet`] writes every table of the database that
//! [`crate::import`] fills (`docs/database.md`) as a Hive-partitioned
//! Parquet dataset, one directory per table:
//!
//! ```text
//! DIR/span/run=<run name>/host=<host>/part-0.parquet
//! DIR/flow/run=<run name>/part-0.parquet
//! ```
//!
//! Tables whose rows belong to a host (`process`, `thread`, `span`,
//! `instant`, `counter`, `metric`) are partitioned by run and host, the
//! others (`run`, `run_label`, `source_file`, `flow`) by run. The partition
//! values come from the directory names, so a table's own `run` column (a
//! run id in SQLite) and `host` column are not repeated inside the files:
//! readers with Hive partitioning turned on (DuckDB's `read_parquet(...,
//! hive_partitioning = true)`, `pyarrow.dataset(..., partitioning="hive")`)
//! give them back as `run` (the run's name) and `host`. Every other column
//! keeps its SQLite name, order and nullability; INTEGER columns whose name
//! ends in `_ns` are typed as Parquet timestamps in nanoseconds.
//!
//! The columns are read from the database's own schema, so a column added
//! to a table is exported without a change here. Rows are streamed: one
//! query per table, ordered by partition, turned into Arrow record batches
//! of [`BATCH_ROWS`] rows, so memory holds one batch and the row group
//! being encoded, whatever the database's size. Files are zstd-compressed
//! with dictionary encoding and page statistics, in row groups of at most
//! [`perfflow_monitor::export::parquet::ROW_GROUP_ROWS`] rows.

use std::collections::HashMap;
use std::fmt;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, Float64Builder, Int64Builder, StringBuilder, TimestampNanosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::errors::ParquetError;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use crate::db::{import, input_files, DbError};
use crate::merge::MergeError;

/// Rows per record batch handed to the Parquet writer.
pub const BATCH_ROWS: usize = 64 * 1024;

/// The time zone of exported timestamps: the trace's times are nanoseconds
/// since the Unix epoch, in UTC.
const TIME_ZONE: &str = "UTC";

/// A table of the database and how its rows find their run and host.
struct Table {
    name: &'static str,
    /// SQL giving the run's name, with `t` the table.
    run: &'static str,
    /// SQL giving the host, or `None` for tables partitioned by run alone.
    host: Option<&'static str>,
    /// The joins `run` and `host` need.
    joins: &'static str,
}

const BY_RUN: &str = "JOIN run r ON r.id = t.run";
const BY_PROCESS: &str = "JOIN process p ON p.id = t.process JOIN run r ON r.id = p.run";

const TABLES: &[Table] = &[
    Table {
        name: "run",
        run: "t.name",
        host: None,
        joins: "",
    },
    Table {
        name: "run_label",
        run: "r.name",
        host: None,
        joins: BY_RUN,
    },
    Table {
        name: "source_file",
        run: "r.name",
        host: None,
        joins: BY_RUN,
    },
    Table {
        name: "process",
        run: "r.name",
        host: Some("t.host"),
        joins: BY_RUN,
    },
    Table {
        name: "thread",
        run: "r.name",
        host: Some("p.host"),
        joins: BY_PROCESS,
    },
    Table {
        name: "span",
        run: "r.name",
        host: Some("p.host"),
        joins: BY_PROCESS,
    },
    Table {
        name: "instant",
        run: "r.name",
        host: Some("p.host"),
        joins: BY_PROCESS,
    },
    Table {
        name: "flow",
        run: "r.name",
        host: None,
        joins: BY_RUN,
    },
    Table {
        name: "counter",
        run: "r.name",
        host: Some("p.host"),
        joins: BY_PROCESS,
    },
    Table {
        name: "metric",
        run: "r.name",
        host: Some("t.host"),
        joins: BY_RUN,
    },
];

/// Why an export failed; every variant names its input or output.
#[derive(Debug)]
pub enum ExportError {
    /// The inputs given name no trace, or cannot be listed.
    Inputs(MergeError),
    /// The traces given could not be imported first.
    Import(DbError),
    /// The database cannot be opened or read.
    Database {
        path: PathBuf,
        source: rusqlite::Error,
    },
    /// A column whose values do not fit its declared type.
    Column {
        path: PathBuf,
        table: String,
        column: String,
        problem: String,
    },
    /// The output directory exists and holds files.
    NotEmpty { path: PathBuf },
    /// A file or directory cannot be written.
    Output {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The Parquet writer failed on a file.
    Parquet { path: PathBuf, source: ParquetError },
    /// Two inputs hold a run of one name: their rows would share its
    /// partitions, with ids that collide.
    SameRun {
        run: String,
        first: PathBuf,
        second: PathBuf,
    },
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Inputs(error) => write!(f, "{error}"),
            ExportError::SameRun { run, first, second } => write!(
                f,
                "{} and {} both hold a run named {run}: their rows would share its partitions, \
                 with ids that collide; expected runs of different names (`perfflow-trace db \
                 --run NAME`)",
                first.display(),
                second.display()
            ),
            ExportError::Import(error) => write!(f, "{error}"),
            ExportError::Database { path, source } => {
                write!(
                    f,
                    "{}: cannot read as a trace database: {source}",
                    path.display()
                )
            }
            ExportError::Column {
                path,
                table,
                column,
                problem,
            } => write!(f, "{}: {table}.{column}: {problem}", path.display()),
            ExportError::NotEmpty { path } => write!(
                f,
                "{}: not empty; export writes into a new or empty directory",
                path.display()
            ),
            ExportError::Output { path, source } => write!(f, "{}: {source}", path.display()),
            ExportError::Parquet { path, source } => {
                write!(f, "{}: cannot write Parquet: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for ExportError {}

/// What [`export_parquet`] wrote for one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// The table's name, which is also its directory under the output.
    pub table: String,
    /// Rows written, over all files.
    pub rows: u64,
    /// Files written, one per partition and database.
    pub files: usize,
}

/// Where [`export`] takes its rows from, and the run traces go into.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// The run name of traces given as files or directories (`run-1`
    /// when `None`).
    pub run: Option<String>,
    /// Labels of that run.
    pub labels: Vec<(String, String)>,
}

/// Exports `inputs` as Parquet into `out_dir` (created if missing; it must
/// be empty). Inputs that are SQLite databases are exported as they are,
/// each into its own `part-<n>.parquet` files; trace files and directories
/// (what `db` accepts) are imported first, all into one run, through a
/// temporary database in `out_dir` that is removed afterwards.
pub fn export(
    inputs: &[PathBuf],
    out_dir: &Path,
    options: &ExportOptions,
) -> Result<Vec<Exported>, ExportError> {
    make_empty_dir(out_dir)?;
    let (databases, traces): (Vec<PathBuf>, Vec<PathBuf>) =
        inputs.iter().cloned().partition(|path| is_sqlite(path));
    let scratch = out_dir.join(".perfflow-export.sqlite");
    let mut sources = databases;
    let result = (|| {
        if !traces.is_empty() {
            let files = input_files(&traces, &scratch).map_err(ExportError::Inputs)?;
            let run = options.run.as_deref().unwrap_or("run-1");
            import(&scratch, &files, run, &options.labels).map_err(ExportError::Import)?;
            sources.push(scratch.clone());
        }
        let mut runs: HashMap<String, &PathBuf> = HashMap::new();
        for source in &sources {
            let database = |error| ExportError::Database {
                path: source.clone(),
                source: error,
            };
            let conn = Connection::open_with_flags(source, OpenFlags::SQLITE_OPEN_READ_ONLY)
                .map_err(database)?;
            let names: Vec<String> = match conn.prepare("SELECT name FROM run") {
                Ok(mut statement) => statement
                    .query_map([], |row| row.get(0))
                    .and_then(Iterator::collect)
                    .map_err(database)?,
                // A database without runs (no run table yet) has none.
                Err(_) => Vec::new(),
            };
            for run in names {
                if let Some(first) = runs.insert(run.clone(), source) {
                    let shown = |path: &PathBuf| {
                        if path == &scratch {
                            // The traces given, imported here.
                            PathBuf::from("the traces given")
                        } else {
                            path.clone()
                        }
                    };
                    return Err(ExportError::SameRun {
                        run,
                        first: shown(first),
                        second: shown(source),
                    });
                }
            }
        }
        let mut totals: Vec<Exported> = Vec::new();
        for (part, source) in sources.iter().enumerate() {
            for exported in export_parquet(source, out_dir, part)? {
                match totals.iter_mut().find(|t| t.table == exported.table) {
                    Some(total) => {
                        total.rows += exported.rows;
                        total.files += exported.files;
                    }
                    None => totals.push(exported),
                }
            }
        }
        Ok(totals)
    })();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = scratch.clone().into_os_string();
        name.push(suffix);
        let _ = fs::remove_file(PathBuf::from(name));
    }
    result
}

/// Whether `path` is a file that starts as SQLite databases do.
fn is_sqlite(path: &Path) -> bool {
    let mut head = [0u8; 16];
    File::open(path)
        .and_then(|mut file| std::io::Read::read_exact(&mut file, &mut head))
        .is_ok_and(|()| &head == b"SQLite format 3\0")
}

/// Creates `dir`, or checks that it is an empty directory.
fn make_empty_dir(dir: &Path) -> Result<(), ExportError> {
    let output = |source| ExportError::Output {
        path: dir.to_path_buf(),
        source,
    };
    fs::create_dir_all(dir).map_err(output)?;
    if fs::read_dir(dir).map_err(output)?.next().is_some() {
        return Err(ExportError::NotEmpty {
            path: dir.to_path_buf(),
        });
    }
    Ok(())
}

/// Writes every table of the database at `db` under `out_dir`, as files
/// `<table>/run=<run>[/host=<host>]/part-<part>.parquet`. Tables the
/// database lacks, and tables without rows, get no files.
pub fn export_parquet(
    db: &Path,
    out_dir: &Path,
    part: usize,
) -> Result<Vec<Exported>, ExportError> {
    let database = |source| ExportError::Database {
        path: db.to_path_buf(),
        source,
    };
    let conn =
        Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(database)?;
    let mut done = Vec::new();
    for table in TABLES {
        let columns = columns(&conn, table.name).map_err(database)?;
        if columns.is_empty() {
            continue;
        }
        done.push(export_table(&conn, db, table, &columns, out_dir, part)?);
    }
    Ok(done)
}

/// A column of a table as exported.
struct Column {
    name: String,
    kind: Kind,
    nullable: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Integer,
    Real,
    Text,
    Time,
}

impl Kind {
    fn data_type(self) -> DataType {
        match self {
            Kind::Integer => DataType::Int64,
            Kind::Real => DataType::Float64,
            Kind::Text => DataType::Utf8,
            Kind::Time => DataType::Timestamp(TimeUnit::Nanosecond, Some(TIME_ZONE.into())),
        }
    }
}

/// The columns of `table` as its schema declares them, less the `run` and
/// `host` columns that the partition directories stand for; empty when the
/// database has no such table.
fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<Column>> {
    let mut info = conn.prepare(&format!("PRAGMA table_info({table})"))?;
    let rows = info.query_map([], |row| {
        let name: String = row.get(1)?;
        let declared: String = row.get(2)?;
        let not_null: bool = row.get(3)?;
        let key: i64 = row.get(5)?;
        Ok((name, declared, not_null, key))
    })?;
    let mut columns = Vec::new();
    for row in rows {
        let (name, declared, not_null, key) = row?;
        if name == "run" || name == "host" {
            continue;
        }
        // SQLite's type affinity rules: INT anywhere means integer, then
        // CHAR/CLOB/TEXT text, REAL/FLOA/DOUB real.
        let declared = declared.to_ascii_uppercase();
        let kind = if declared.contains("INT") {
            if name.ends_with("_ns") {
                Kind::Time
            } else {
                Kind::Integer
            }
        } else if ["CHAR", "CLOB", "TEXT"]
            .iter()
            .any(|t| declared.contains(t))
        {
            Kind::Text
        } else {
            Kind::Real
        };
        // An INTEGER PRIMARY KEY is the row id, never NULL.
        let row_id = key == 1 && declared == "INTEGER";
        columns.push(Column {
            name,
            kind,
            nullable: !(not_null || row_id),
        });
    }
    Ok(columns)
}

/// One column's values of the batch being built.
enum Builder {
    Integer(Int64Builder),
    Real(Float64Builder),
    Text(StringBuilder),
    Time(TimestampNanosecondBuilder),
}

impl Builder {
    fn new(kind: Kind) -> Builder {
        match kind {
            Kind::Integer => Builder::Integer(Int64Builder::with_capacity(BATCH_ROWS)),
            Kind::Real => Builder::Real(Float64Builder::with_capacity(BATCH_ROWS)),
            Kind::Text => Builder::Text(StringBuilder::with_capacity(BATCH_ROWS, BATCH_ROWS * 16)),
            Kind::Time => Builder::Time(
                TimestampNanosecondBuilder::with_capacity(BATCH_ROWS).with_timezone(TIME_ZONE),
            ),
        }
    }

    /// Appends `value`, or says why it does not fit.
    fn push(&mut self, value: ValueRef<'_>) -> Result<(), String> {
        match (self, value) {
            (Builder::Integer(b), ValueRef::Null) => b.append_null(),
            (Builder::Real(b), ValueRef::Null) => b.append_null(),
            (Builder::Text(b), ValueRef::Null) => b.append_null(),
            (Builder::Time(b), ValueRef::Null) => b.append_null(),
            (Builder::Integer(b), ValueRef::Integer(n)) => b.append_value(n),
            (Builder::Time(b), ValueRef::Integer(n)) => b.append_value(n),
            (Builder::Real(b), ValueRef::Real(x)) => b.append_value(x),
            (Builder::Real(b), ValueRef::Integer(n)) => b.append_value(n as f64),
            (Builder::Text(b), ValueRef::Text(bytes)) => match std::str::from_utf8(bytes) {
                Ok(text) => b.append_value(text),
                Err(_) => return Err("text that is not UTF-8".to_string()),
            },
            (Builder::Text(b), ValueRef::Integer(n)) => b.append_value(n.to_string()),
            (Builder::Text(b), ValueRef::Real(x)) => b.append_value(x.to_string()),
            (_, other) => {
                return Err(format!(
                    "a {} value in a column of another type",
                    other.data_type()
                ))
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Integer(b) => Arc::new(b.finish()),
            Builder::Real(b) => Arc::new(b.finish()),
            Builder::Text(b) => Arc::new(b.finish()),
            Builder::Time(b) => Arc::new(b.finish()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Builder::Integer(b) => b.len(),
            Builder::Real(b) => b.len(),
            Builder::Text(b) => b.len(),
            Builder::Time(b) => b.len(),
        }
    }
}

/// The writer of the partition being written, with its path.
struct Partition {
    key: (String, Option<String>),
    path: PathBuf,
    writer: ArrowWriter<File>,
}

/// Streams `table` into its partition files.
fn export_table(
    conn: &Connection,
    db: &Path,
    table: &Table,
    columns: &[Column],
    out_dir: &Path,
    part: usize,
) -> Result<Exported, ExportError> {
    let database = |source| ExportError::Database {
        path: db.to_path_buf(),
        source,
    };
    let schema: SchemaRef = Arc::new(Schema::new(
        columns
            .iter()
            .map(|c| Field::new(&c.name, c.kind.data_type(), c.nullable))
            .collect::<Vec<_>>(),
    ));
    let list: Vec<String> = columns
        .iter()
        .map(|c| format!("t.\"{}\"", c.name.replace('"', "\"\"")))
        .collect();
    let sql = format!(
        "SELECT {run}, {host}, {list} FROM {name} t {joins} ORDER BY 1, 2, t.rowid",
        run = table.run,
        host = table.host.unwrap_or("NULL"),
        list = list.join(", "),
        name = table.name,
        joins = table.joins,
    );
    let mut statement = conn.prepare(&sql).map_err(database)?;
    let mut rows = statement.query([]).map_err(database)?;
    let mut builders: Vec<Builder> = columns.iter().map(|c| Builder::new(c.kind)).collect();
    let mut current: Option<Partition> = None;
    let mut exported = Exported {
        table: table.name.to_string(),
        rows: 0,
        files: 0,
    };
    while let Some(row) = rows.next().map_err(database)? {
        let text = |at: usize| -> Result<Option<String>, ExportError> {
            match row.get_ref(at).map_err(database)? {
                ValueRef::Null => Ok(None),
                ValueRef::Text(t) => Ok(Some(String::from_utf8_lossy(t).into_owned())),
                ValueRef::Integer(n) => Ok(Some(n.to_string())),
                ValueRef::Real(x) => Ok(Some(x.to_string())),
                ValueRef::Blob(b) => Ok(Some(String::from_utf8_lossy(b).into_owned())),
            }
        };
        let run = text(0)?.unwrap_or_default();
        let host = match table.host {
            Some(_) => Some(text(1)?.unwrap_or_default()),
            None => None,
        };
        if current
            .as_ref()
            .is_none_or(|p| p.key.0 != run || p.key.1 != host)
        {
            if let Some(mut done) = current.take() {
                write_batch_into(&mut builders, &schema, &mut done)?;
                close(done)?;
            }
            let mut dir = out_dir
                .join(table.name)
                .join(format!("run={}", escape(&run)));
            if let Some(host) = &host {
                dir = dir.join(format!("host={}", escape(host)));
            }
            current = Some(open(&dir, part, &schema, (run, host))?);
            exported.files += 1;
        }
        for (at, (builder, column)) in builders.iter_mut().zip(columns).enumerate() {
            let value = row.get_ref(at + 2).map_err(database)?;
            let problem = match value {
                ValueRef::Null if !column.nullable => Some("NULL in a NOT NULL column".to_string()),
                _ => builder.push(value).err(),
            };
            if let Some(problem) = problem {
                return Err(ExportError::Column {
                    path: db.to_path_buf(),
                    table: table.name.to_string(),
                    column: column.name.clone(),
                    problem,
                });
            }
        }
        exported.rows += 1;
        if builders[0].len() == BATCH_ROWS {
            if let Some(partition) = &mut current {
                write_batch_into(&mut builders, &schema, partition)?;
            }
        }
    }
    if let Some(mut done) = current.take() {
        write_batch_into(&mut builders, &schema, &mut done)?;
        close(done)?;
    }
    Ok(exported)
}

/// Creates `dir/part-<part>.parquet` and its writer.
fn open(
    dir: &Path,
    part: usize,
    schema: &SchemaRef,
    key: (String, Option<String>),
) -> Result<Partition, ExportError> {
    let path = dir.join(format!("part-{part}.parquet"));
    let output = |source| ExportError::Output {
        path: path.clone(),
        source,
    };
    fs::create_dir_all(dir).map_err(output)?;
    let file = File::create(&path).map_err(output)?;
    let properties = perfflow_monitor::export::parquet::properties(format!(
        "perfflow-trace {}",
        env!("CARGO_PKG_VERSION")
    ));
    let writer =
        ArrowWriter::try_new(file, schema.clone(), Some(properties)).map_err(|source| {
            ExportError::Parquet {
                path: path.clone(),
                source,
            }
        })?;
    Ok(Partition { key, path, writer })
}

/// Hands the rows built so far to the partition's writer.
fn write_batch_into(
    builders: &mut [Builder],
    schema: &SchemaRef,
    partition: &mut Partition,
) -> Result<(), ExportError> {
    if builders.first().is_none_or(|b| b.len() == 0) {
        return Ok(());
    }
    let arrays: Vec<ArrayRef> = builders.iter_mut().map(Builder::finish).collect();
    let failed = |source| ExportError::Parquet {
        path: partition.path.clone(),
        source,
    };
    let batch = RecordBatch::try_new(schema.clone(), arrays)
        .map_err(|error| failed(ParquetError::ArrowError(error.to_string())))?;
    partition.writer.write(&batch).map_err(failed)
}

/// Writes the footer of a partition's file.
fn close(partition: Partition) -> Result<(), ExportError> {
    let Partition { path, writer, .. } = partition;
    writer
        .close()
        .map(|_| ())
        .map_err(|source| ExportError::Parquet { path, source })
}

/// A partition value as a directory name: bytes other than ASCII letters,
/// digits, `-`, `_`, `.` and `~` percent-encoded, as Hive, pyarrow and
/// DuckDB decode them; an empty value as Hive's
/// `__HIVE_DEFAULT_PARTITION__`.
fn escape(value: &str) -> String {
    if value.is_empty() {
        return "__HIVE_DEFAULT_PARTITION__".to_string();
    }
    let mut name = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            name.push(byte as char);
        } else {
            name.push_str(&format!("%{byte:02X}"));
        }
    }
    // `.` and `..` are not directory names to make.
    if name.chars().all(|c| c == '.') {
        name = name.replace('.', "%2E");
    }
    name
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn partition_values_are_percent_encoded() {
        assert_eq!(escape("node-1.cluster"), "node-1.cluster");
        assert_eq!(escape("a b/c=d"), "a%20b%2Fc%3Dd");
        assert_eq!(escape(".."), "%2E%2E");
        assert_eq!(escape(""), "__HIVE_DEFAULT_PARTITION__");
    }
}

//! Read, check and summarise the trace files that perfflow-instrumented
//! programs write.
//!
//! A run writes one file per process, `perfflow.array.<host>.<pid>.pfw`, in
//! the Chrome trace format that Perfetto opens. Two layouts are accepted:
//!
//! * a JSON array of event objects, one per line;
//! * an object `{"displayTimeUnit": "us", "otherData": {...},
//!   "traceEvents": [...]}`.
//!
//! Perfetto protobuf traces (`.pftrace`, the runtime's `log-format=perfetto`)
//! are read wherever these are, as the same events (see `pftrace.rs`): a
//! file is taken as one when it is named `*.pftrace` or starts like one.
//!
//! A program killed mid-run (for example by `SIGKILL`) leaves an array
//! without its closing `]`, possibly ending in a half-written line. Such a
//! trace is still read: every complete event is kept and
//! [`Trace::truncated`] is set.
//!
//! The crate has seven parts:
//!
//! * reading: [`stream_trace`] hands each typed [`Event`] of a file to a
//!   closure as it is read, holding one buffer of input whatever the
//!   file's size; [`read_trace`] and [`parse_trace`] collect them into a
//!   [`Trace`]. Errors are [`TraceError`]s naming the file, line and what
//!   was expected;
//! * checking: [`Checker`] takes events one at a time and reports
//!   structural [`Problem`]s, such as an `E` without a `B` or a `B` never
//!   closed; [`check`] runs it over a [`Trace`];
//! * summarising: [`Summarizer`] takes events one at a time and gives
//!   per-function call counts and inclusive and self times, and per-thread
//!   event counts; [`summary`] (or [`summarize`] for several files) runs it
//!   over [`Trace`]s. The [`Summary`]'s `Display` prints it as a table;
//! * merging: [`merge`] writes the traces of many processes and hosts, and
//!   the monitor's counter traces, as one trace with a distinct, named
//!   process each, checking (and with [`MergeOptions::fix_clocks`]
//!   correcting) the hosts' clocks against the flows between them. It
//!   copies each event's text ([`stream_trace_text`]) with a few fields
//!   rewritten;
//! * storing: [`import`] streams traces into one SQLite database (runs and
//!   their labels, processes, threads, spans with depth and parent,
//!   instants, flows between spans, counters), skipping files already
//!   there; [`query`] runs SQL (or a [`CANNED`] query) on it and prints a
//!   table, CSV or JSON;
//! * comparing runs: [`compare`] sets two sets of repeated runs
//!   ([`RunProfile`]s, from [`read_run`] or [`db_run`]) side by side per
//!   function, and [`treatments`] gives each run label's effect on a
//!   score, alone and given the other labels; both with bootstrap
//!   intervals ([`stats`]) and plain serialisable results;
//! * following a workflow: [`load`] (or [`load_db`]) reads every span,
//!   thread, process and link between threads (flows, asynchronous spans)
//!   into a [`Workflow`]; [`critical_path`] finds the chain of spans that
//!   determines when it ends, and [`profile`] its call trees per process
//!   and aggregated, with an export for Hatchet. These hold every span.
//!
//! Checking and summarising read only events, never the file format, and
//! keep only what is open (spans not yet ended, names, threads), so a trace
//! of any size is read in bounded memory.
//!
//! Timestamps are read from the decimal text to the nanosecond
//! ([`Event::ts_ns`]): an `f64` of microseconds since the epoch resolves only
//! about a quarter of a microsecond, too coarse for short functions.
//!
//! ```
//! let text = r#"[
//! {"name":"main","cat":"app","ph":"B","pid":1,"tid":1,"ts":100.0},
//! {"name":"work","cat":"app","ph":"X","pid":1,"tid":1,"ts":110.0,"dur":30.0},
//! {"name":"main","cat":"app","ph":"E","pid":1,"tid":1,"ts":200.0}
//! ]"#;
//! let trace = perfflow_trace::parse_trace(text)?;
//! assert!(perfflow_trace::check(&trace).is_empty());
//!
//! let summary = perfflow_trace::summary(&trace);
//! let main = summary.function("main").unwrap();
//! assert_eq!((main.total_ns, main.self_ns), (100_000, 70_000));
//! # Ok::<(), perfflow_trace::TraceError>(())
//! ```
//!
//! The `perfflow-trace` command-line tool wraps these functions; run
//! `perfflow-trace --help` for its usage.

mod check;
mod compare;
mod convert;
mod critical_path;
mod db;
mod error;
mod event;
mod export;
mod merge;
mod model;
mod outcome;
mod output;
mod pftrace;
mod profile;
mod read;
mod runs;
mod spans;
pub mod stats;
mod summary;
mod treatments;
mod workflow_report;

pub use check::{check, check_with, CheckOptions, Checker, Problem, ProblemKind};
pub use compare::{compare, Change, CompareOptions, Comparison, FunctionChange, Slowdown, Verdict};
pub use convert::{convert, is_pftrace_name, ConvertError, Converted};
pub use critical_path::{
    critical_path, track_events, write_track, CompactPath, CriticalPath, NameOnPath, Place, Step,
    StepKind,
};
pub use db::{default_run_name, import, input_files, query, DbError, Format, Imported, CANNED};
pub use error::TraceError;
pub use event::{Event, FieldError, Phase};
pub use export::{export, export_parquet, ExportError, ExportOptions, Exported};
pub use merge::{
    merge, trace_files, HostOffset, MergeError, MergeOptions, MergeReport, Process, Violations,
};
pub use model::{
    load, load_db, ClockShift, Link, LinkKind, LoadError, ProcessInfo, Span, ThreadInfo, Workflow,
};
pub use output::{same_file, write_whole, OutputFile};
pub use profile::{profile, AggregateNode, CallNode, ProcessProfile, Profile, MAX_INDENT};
pub use read::{
    parse_trace, read_trace, stream_reader, stream_trace, stream_trace_text, Layout, Trace,
    TraceInfo,
};
pub use runs::{db_run, read_run, FunctionTotals, RunProfile, RunsError};
pub use summary::{
    summarize, summarize_exactly, summary, FunctionStats, Percentiles, Summarizer, Summary,
    ThreadStats,
};
pub use treatments::{
    scored_runs, treatments, Effect, FactorEffect, Given, Reduce, Score, ScoredRun,
    TreatmentOptions, Treatments,
};
pub use workflow_report::{
    analyse as analyse_workflow, write_report as write_workflow_report, Overview, RunsInput,
};

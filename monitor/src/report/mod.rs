//! Exports, plots and the HTML job report, made from a job directory's
//! `metrics/` files after a run.
//!
//! The data flows one way: [`input`] parses `metrics/*.json` into typed
//! groups and metadata; [`crate::export`] writes them as tables; the
//! report (charts, pages, perfmon's PDF) is drawn by the `perfflow-report`
//! crate from borrowed views of the groups ([`job_report`]).
//!
//! - [`export`] (from [`crate::export`]) writes `<group>.csv`,
//!   `<group>.parquet`, ... beside `metrics/`, one of each per group file
//!   present (`cpu_metrics`, `perf_metrics`, `nv_gpu_metrics`).
//! - [`generate_report`] writes `job-report-<job id>.html`, perfmon's
//!   `job-report-<job id>.pdf` and its `plots/*.png`.
//!
//! Rules, each stated in full where it is applied:
//!
//! - Tables ([`crate::export::table`]): one row per host and time stamp,
//!   with perfmon's column names. Nested objects give dotted names
//!   (`rapl_powercap.package-0`); arrays of strings are metadata and left
//!   out.
//! - Series of another length than `time_stamps` ([`input`]): padded with
//!   missing values when shorter, truncated when longer.
//! - Plots: a series is drawn when some host has a non-zero value in it,
//!   one line per host, in a panel of its kind (CPU, memory, I/O, network,
//!   energy, perf, GPU).
//! - Malformed input is a [`ReportError`] naming the file and what was
//!   expected where; nothing here panics on input.
//!
//! Nothing here needs Python or a browser; the PDF and PNG files need a
//! system font (DejaVu Sans).

pub mod error;
pub mod input;
pub mod job_report;

use std::path::{Path, PathBuf};

pub use crate::export::{export, ExportFormat, UnknownFormat};
pub use error::ReportError;

/// Writes `out_dir/job-report-<job id>.html`, and perfmon's
/// `job-report-<job id>.pdf` with its `plots/*.png` when the CPU metrics
/// hold one of perfmon's plots; returns the page's path.
pub fn generate_report(out_dir: &Path) -> Result<PathBuf, ReportError> {
    let meta = input::read_metadata(out_dir)?;
    let groups = input::read_groups(out_dir)?;
    job_report::write(out_dir, &meta, &groups).map(|w| w.html)
}

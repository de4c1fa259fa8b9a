//! Exports, plots and the HTML job report, made from a job directory's
//! `metrics/` files after a run.
//!
//! The data flows one way: [`input`] parses `metrics/*.json` into typed
//! groups and metadata; [`table`] sees a group as rows (one per host and
//! time stamp), which [`csv`], [`records`] and [`parquet`] write; the
//! report (charts, pages, perfmon's PDF) is drawn by the `perfflow-report`
//! crate from borrowed views of the groups ([`job_report`]).
//!
//! - [`export`] writes `<group>.csv`, `<group>.parquet` and
//!   `<group>.records.json` beside `metrics/`, one of each per group file
//!   present (`cpu_metrics`, `perf_metrics`, `nv_gpu_metrics`).
//! - [`generate_report`] writes `job-report-<job id>.html`, perfmon's
//!   `job-report-<job id>.pdf` and its `plots/*.png`.
//!
//! Rules, each stated in full where it is applied:
//!
//! - Tables ([`table`]): one row per host and time stamp; columns `host`,
//!   `time_stamp [s]`, then the union of every host's series in name order,
//!   headed `<series> [<unit>]` or `<series>` without a unit. Nested objects
//!   give dotted names (`rapl_powercap.package-0`); arrays of strings are
//!   metadata and left out.
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

pub mod csv;
pub mod error;
pub mod input;
pub mod job_report;
pub mod parquet;
pub mod records;
pub mod table;
mod thrift;

use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use error::ReportError;

/// A table format [`export`] can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    /// `<group>.csv`
    Csv,
    /// `<group>.records.json`: an array of row objects.
    Json,
    /// `<group>.parquet`
    Parquet,
}

impl ExportFormat {
    /// The file name suffix, after the group name.
    pub fn suffix(self) -> &'static str {
        match self {
            ExportFormat::Csv => "csv",
            ExportFormat::Json => "records.json",
            ExportFormat::Parquet => "parquet",
        }
    }
}

impl fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            ExportFormat::Csv => "csv",
            ExportFormat::Json => "json",
            ExportFormat::Parquet => "parquet",
        })
    }
}

/// A format name [`ExportFormat::from_str`] does not accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFormat(pub String);

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = &self.0;
        match name.to_ascii_lowercase().as_str() {
            "hdf5" | "pickle" | "feather" | "orc" => {
                write!(f, "{name} is not supported; use parquet")
            }
            _ => write!(
                f,
                "unknown export format `{name}`; accepted values: csv, json, parquet"
            ),
        }
    }
}

impl std::error::Error for UnknownFormat {}

impl FromStr for ExportFormat {
    type Err = UnknownFormat;

    /// `csv`, `json` or `parquet`, in any case.
    fn from_str(s: &str) -> Result<ExportFormat, UnknownFormat> {
        match s.to_ascii_lowercase().as_str() {
            "csv" => Ok(ExportFormat::Csv),
            "json" => Ok(ExportFormat::Json),
            "parquet" => Ok(ExportFormat::Parquet),
            _ => Err(UnknownFormat(s.to_string())),
        }
    }
}

/// Writes each metric group of `out_dir/metrics/` in each of `formats`
/// into `out_dir`, and returns the paths written (group by group, formats
/// in the order given). It is an error if no group file exists.
pub fn export(out_dir: &Path, formats: &[ExportFormat]) -> Result<Vec<PathBuf>, ReportError> {
    let groups = input::read_groups(out_dir)?;
    if groups.is_empty() {
        return Err(ReportError::new(
            &out_dir.join("metrics"),
            "no metric files (cpu_metrics.json, perf_metrics.json, nv_gpu_metrics.json)",
        ));
    }
    let mut written = Vec::new();
    for group in &groups {
        let table = table::Table::new(group);
        for &format in formats {
            let path = out_dir.join(format!("{}.{}", group.name, format.suffix()));
            write_file(&path, |out| match format {
                ExportFormat::Csv => csv::write_csv(&table, out),
                ExportFormat::Json => records::write_records(&table, out),
                ExportFormat::Parquet => parquet::write_parquet(&table, out),
            })?;
            if !written.contains(&path) {
                written.push(path);
            }
        }
    }
    Ok(written)
}

/// Writes `out_dir/job-report-<job id>.html`, and perfmon's
/// `job-report-<job id>.pdf` with its `plots/*.png` when the CPU metrics
/// hold one of perfmon's plots; returns the page's path.
pub fn generate_report(out_dir: &Path) -> Result<PathBuf, ReportError> {
    let meta = input::read_metadata(out_dir)?;
    let groups = input::read_groups(out_dir)?;
    job_report::write(out_dir, &meta, &groups).map(|w| w.html)
}

/// Creates `path` and fills it through a buffered writer.
fn write_file(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), ReportError> {
    let file = File::create(path).map_err(|e| ReportError::io(path, "cannot create", e))?;
    let mut out = BufWriter::new(file);
    fill(&mut out)
        .and_then(|()| out.flush())
        .map_err(|e| ReportError::io(path, "cannot write", e))
}

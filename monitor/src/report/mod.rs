//! Exports, plots and the HTML job report, made from a job directory's
//! `metrics/` files after a run.
//!
//! The data flows one way: [`input`] parses `metrics/*.json` into typed
//! groups and metadata; [`crate::export`] writes them as tables; [`plots`]
//! chooses and draws the charts ([`chart`] lays one out on a [`canvas`] with
//! the built-in [`font`], [`png`] encodes it); [`html`] puts the metadata, a
//! summary table and the plots into one self-contained page.
//!
//! - [`export`] (from [`crate::export`]) writes `<group>.csv`,
//!   `<group>.parquet`, ... beside `metrics/`, one of each per group file
//!   present (`cpu_metrics`, `perf_metrics`, `nv_gpu_metrics`).
//! - [`generate_report`] writes `plots/*.png` and
//!   `job-report-<job id>.html`.
//!
//! Rules, each stated in full where it is applied:
//!
//! - Tables ([`crate::export::table`]): one row per host and time stamp,
//!   with perfmon's column names. Nested objects give dotted names
//!   (`rapl_powercap.package-0`); arrays of strings are metadata and left
//!   out.
//! - Series of another length than `time_stamps` ([`input`]): padded with
//!   missing values when shorter, truncated when longer.
//! - Plots ([`plots`]): a series is plotted when some host has a non-zero
//!   value in it; one combined plot always, one per host for 2 to 8 hosts.
//! - Malformed input is a [`ReportError`] naming the file and what was
//!   expected where; nothing here panics on input.
//!
//! Nothing here needs Python, a browser or fonts at run time.

pub mod canvas;
pub mod chart;
pub mod error;
pub mod font;
pub mod html;
pub mod input;
pub mod plots;
pub mod png;

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub use crate::export::{export, ExportFormat, UnknownFormat};
pub use error::ReportError;

/// Draws the plots into `out_dir/plots/` and writes
/// `out_dir/job-report-<job id>.html`; returns the page's path. Characters
/// of the job id other than ASCII letters, digits, `.`, `_` and `-` become
/// `_` in the file name.
pub fn generate_report(out_dir: &Path) -> Result<PathBuf, ReportError> {
    let meta = input::read_metadata(out_dir)?;
    let groups = input::read_groups(out_dir)?;
    let plot_dir = out_dir.join("plots");
    fs::create_dir_all(&plot_dir)
        .map_err(|e| ReportError::io(&plot_dir, "cannot create directory", e))?;
    let start = meta.number("start_time");
    let mut drawn = Vec::new();
    for group in &groups {
        for plot in plots::plan(group) {
            let png = plots::draw(group, &plot, start);
            let path = plot_dir.join(&plot.file_name);
            fs::write(&path, &png).map_err(|e| ReportError::io(&path, "cannot write", e))?;
            drawn.push((plot, png));
        }
    }
    let path = out_dir.join(format!(
        "job-report-{}.html",
        plots::file_safe(&meta.job_id)
    ));
    write_file(&path, |out| html::write_report(&meta, &groups, &drawn, out))?;
    Ok(path)
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

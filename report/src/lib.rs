//! perfflow-report: the charts and report pages of perfflow's tools.
//!
//! `perfflow-monitor` writes its job report with it, and `perfflow-trace`'s
//! workflow report reuses its pages and node-metric panels. Nothing here
//! reads a trace or a metric file: callers parse their data and hand over
//! borrowed views ([`metrics::GroupView`]).
//!
//! The layers, in the order data flows through them:
//!
//! - [`units`]: values in units people read (MiB/GiB, %, W, k/s);
//! - [`chart`]: line charts over time as SVG text;
//! - [`html`]: self-contained pages (inline CSS and SVG, no script);
//! - [`render`]: SVG to PNG (resvg) and SVG pages to PDF (svg2pdf and
//!   pdf-writer), with the system's fonts;
//! - [`metrics`] and [`nodes`]: node metrics as panels of small multiples,
//!   a summary table and a hardware table;
//! - [`perfmon`]: perfmon's PDF report pages;
//! - [`job`]: one monitored job's report (HTML, PDF and PNG plots).

pub mod chart;
pub mod html;
pub mod job;
pub mod metrics;
pub mod nodes;
pub mod perfmon;
pub mod render;
pub mod units;

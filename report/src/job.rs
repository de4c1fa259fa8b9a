//! The job report of one monitored job, written into its results
//! directory:
//!
//! - `job-report-<jobid>.html`: the job, the hardware (one row per
//!   distinct configuration), the sources that were unavailable, panels of
//!   small multiples per kind (CPU, memory, I/O, network, energy, perf,
//!   GPU) with one legend of the hosts, and a summary of every series;
//! - `job-report-<jobid>.pdf`: perfmon's report ([`crate::perfmon`]);
//! - `plots/*.png`: perfmon's plots, at twice their size.
//!
//! Characters of the job id other than ASCII letters, digits, `.`, `_` and
//! `-` become `_` in the file names.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::html::{self, Page};
use crate::metrics::{GroupView, HostStyles};
use crate::nodes;
use crate::perfmon::{self, Header};
use crate::render::{self, RenderError};

/// What a job report is made of.
pub struct Job<'a> {
    /// The job id.
    pub job_id: &'a str,
    /// `meta_data.json`'s top-level fields (scheduler, user, start and end
    /// times, command, ...).
    pub fields: &'a Map<String, Value>,
    /// Each host's hardware description.
    pub hardware: Vec<(&'a str, &'a Map<String, Value>)>,
    /// `(host, what)` for every source that could not run.
    pub unavailable: Vec<(&'a str, &'a str)>,
    /// The metric groups.
    pub groups: Vec<GroupView<'a>>,
}

/// Why a report could not be written.
#[derive(Debug)]
pub enum JobReportError {
    /// A file could not be written.
    Io(PathBuf, io::Error),
    /// A chart could not be drawn as PNG or PDF.
    Render(PathBuf, RenderError),
}

impl std::fmt::Display for JobReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JobReportError::Io(p, e) => write!(f, "{}: cannot write: {e}", p.display()),
            JobReportError::Render(p, e) => write!(f, "{}: {e}", p.display()),
        }
    }
}

impl std::error::Error for JobReportError {}

/// The files a report wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// The HTML page.
    pub html: PathBuf,
    /// perfmon's PDF, when the CPU metrics had one of its plots.
    pub pdf: Option<PathBuf>,
    /// The PNG plots.
    pub plots: Vec<PathBuf>,
}

/// `name` with every character other than ASCII letters, digits, `.`, `_`
/// and `-` replaced by `_`.
pub fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

impl Job<'_> {
    fn text(&self, key: &str) -> Option<String> {
        match self.fields.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    fn number(&self, key: &str) -> Option<f64> {
        self.fields.get(key)?.as_f64()
    }

    fn command(&self) -> Option<String> {
        match self.fields.get("command")? {
            Value::Array(words) => Some(
                words
                    .iter()
                    .map(|w| w.as_str().map_or_else(|| w.to_string(), str::to_string))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Value::String(s) => Some(s.clone()),
            _ => None,
        }
    }

    /// Start of the time axes: the job's start, else the first sample.
    fn t0(&self) -> f64 {
        self.number("start_time")
            .or_else(|| {
                self.groups
                    .iter()
                    .flat_map(|g| g.hosts.iter().filter_map(|h| h.times.first().copied()))
                    .reduce(f64::min)
            })
            .unwrap_or(0.0)
    }

    fn styles(&self) -> HostStyles {
        let mut s = HostStyles::new(self.hardware.iter().map(|(h, _)| *h));
        for g in &self.groups {
            for h in &g.hosts {
                s.add(h.host);
            }
        }
        s
    }

    fn node_count(&self) -> usize {
        if !self.hardware.is_empty() {
            return self.hardware.len();
        }
        self.groups
            .iter()
            .find(|g| g.name == "cpu_metrics")
            .map_or(0, |g| g.hosts.len())
    }

    /// perfmon's header: the user from the metadata, else `$USER`; the date
    /// of the job's end, else of now.
    fn header(&self) -> Header {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        Header {
            job_id: self.job_id.to_string(),
            user: self
                .text("user")
                .or_else(|| std::env::var("USER").ok())
                .unwrap_or_else(|| "unknown".to_string()),
            nodes: self.node_count(),
            date: perfmon::date(self.number("end_time").unwrap_or(now)),
        }
    }

    /// The HTML page, whose PDF (if any) is named `pdf_name`.
    pub fn html(&self, pdf_name: Option<&str>) -> String {
        let t0 = self.t0();
        let styles = self.styles();
        let mut page = Page::new(&format!("Job report {}", self.job_id));
        let (start, end) = (self.number("start_time"), self.number("end_time"));
        let mut cards = vec![
            ("Job", self.job_id.to_string()),
            ("Nodes", self.node_count().to_string()),
        ];
        if let (Some(s), Some(e)) = (start, end) {
            cards.push(("Duration", html::duration(e - s)));
        }
        if let Some(status) = self.text("exit_status") {
            cards.push(("Exit status", status));
        }
        if let Some(i) = self.number("sampling_frequency") {
            cards.push(("Sampling interval", format!("{i} s")));
        }
        page.push(&html::cards(&cards));
        if let Some(pdf) = pdf_name {
            page.push(&format!(
                "<p>perfmon's PDF report: <a href=\"{0}\">{0}</a></p>\n",
                html::escape(pdf)
            ));
        }

        page.section("job", "Job");
        let mut rows: Vec<(&str, Option<String>)> = vec![
            ("Job id", Some(self.job_id.to_string())),
            ("Scheduler", self.text("scheduler")),
            ("Name", self.text("name")),
            ("System", self.text("system")),
            ("Partition", self.text("partition")),
            ("Environment", self.text("env")),
            ("Launcher", self.text("launcher")),
            ("User", self.text("user")),
            ("Start", start.map(html::utc)),
            ("End", end.map(html::utc)),
        ];
        if let (Some(s), Some(e)) = (start, end) {
            rows.push(("Duration", Some(html::duration(e - s))));
        }
        rows.push(("Command", self.command()));
        rows.push(("Exit status", self.text("exit_status")));
        rows.push((
            "Sampling interval",
            self.number("sampling_frequency").map(|s| format!("{s} s")),
        ));
        let hosts: Vec<&str> = self.hardware.iter().map(|(h, _)| *h).collect();
        rows.push((
            "Hosts",
            Some(format!("{} ({})", hosts.join(", "), hosts.len())),
        ));
        page.push(&html::kv_table(&rows));

        nodes::hardware_section(&mut page, &self.hardware);

        page.section("unavailable", "Unavailable sources");
        if self.unavailable.is_empty() {
            page.push("<p class=\"none\">Every requested source was available.</p>\n");
        } else {
            let rows: Vec<Vec<String>> = self
                .unavailable
                .iter()
                .map(|(h, w)| vec![h.to_string(), w.to_string()])
                .collect();
            page.push(&html::table(&["Host", "Source and reason"], &rows, &[]));
        }

        let panels = nodes::panels(&self.groups, t0, &styles);
        if panels.is_empty() {
            page.section("metrics", "Metrics");
            page.push("<p class=\"none\">No series had a non-zero value to plot.</p>\n");
        }
        nodes::panel_sections(&mut page, &panels, &styles);
        nodes::summary_section(&mut page, &panels);
        page.finish()
    }

    /// perfmon's pages and plots, or `None` when no perfmon plot has data.
    pub fn perfmon_pages(&self) -> Option<perfmon::Pages> {
        let cpu = self.groups.iter().find(|g| g.name == "cpu_metrics")?;
        let plan = perfmon::plan(cpu, self.t0(), &self.styles());
        if plan.is_empty() {
            return None;
        }
        Some(perfmon::pages(&self.header(), &plan))
    }

    /// Writes the report into `out_dir`.
    pub fn write(&self, out_dir: &Path) -> Result<Written, JobReportError> {
        let stem = format!("job-report-{}", file_safe(self.job_id));
        let html_path = out_dir.join(format!("{stem}.html"));
        let pdf_path = out_dir.join(format!("{stem}.pdf"));
        let mut plots = Vec::new();
        let pdf = match self.perfmon_pages() {
            Some((pages, pngs)) => {
                let dir = out_dir.join("plots");
                fs::create_dir_all(&dir).map_err(|e| JobReportError::Io(dir.clone(), e))?;
                for (name, svg) in pngs {
                    let path = dir.join(name);
                    let png = render::png(&svg, 2.0)
                        .map_err(|e| JobReportError::Render(path.clone(), e))?;
                    fs::write(&path, png).map_err(|e| JobReportError::Io(path.clone(), e))?;
                    plots.push(path);
                }
                let title = format!("Job report {}", self.job_id);
                let bytes = render::pdf(&pages, &title)
                    .map_err(|e| JobReportError::Render(pdf_path.clone(), e))?;
                fs::write(&pdf_path, bytes).map_err(|e| JobReportError::Io(pdf_path.clone(), e))?;
                Some(pdf_path)
            }
            None => None,
        };
        let pdf_name = pdf
            .as_ref()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned());
        let page = self.html(pdf_name.as_deref());
        fs::write(&html_path, page).map_err(|e| JobReportError::Io(html_path.clone(), e))?;
        Ok(Written {
            html: html_path,
            pdf,
            plots,
        })
    }
}

//! The job report, drawn by `perfflow-report` from borrowed views of the
//! parsed metric groups and metadata.

use std::path::Path;

use perfflow_report::job::{Job, JobReportError, Written};
use perfflow_report::metrics::{GroupView, HostView};

use super::error::ReportError;
use super::input::{JobMetadata, MetricGroup};

/// The view `perfflow-report` draws from.
pub fn view(group: &MetricGroup) -> GroupView<'_> {
    GroupView {
        name: &group.name,
        units: &group.units,
        hosts: group
            .hosts
            .iter()
            .map(|h| HostView {
                host: &h.host,
                times: &h.time_stamps,
                series: &h.series,
            })
            .collect(),
    }
}

/// Writes the report of `meta` and `groups` into `out_dir`.
pub fn write(
    out_dir: &Path,
    meta: &JobMetadata,
    groups: &[MetricGroup],
) -> Result<Written, ReportError> {
    let job = Job {
        job_id: &meta.job_id,
        fields: &meta.fields,
        hardware: meta
            .hosts
            .iter()
            .map(|h| (h.host.as_str(), &h.hardware))
            .collect(),
        unavailable: meta
            .hosts
            .iter()
            .flat_map(|h| h.unavailable.iter().map(|u| (h.host.as_str(), u.as_str())))
            .collect(),
        groups: groups.iter().map(view).collect(),
    };
    job.write(out_dir).map_err(|e| match e {
        JobReportError::Io(path, source) => ReportError::io(&path, "cannot write", source),
        JobReportError::Render(path, problem) => ReportError::new(&path, problem.to_string()),
    })
}

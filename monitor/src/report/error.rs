//! The report module's error type.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// A file of the job directory that could not be read, parsed or written.
///
/// Its text names the file and the problem, for example
/// `out/metrics/cpu_metrics.json: host `nodeA`: expected an object`.
#[derive(Debug)]
pub struct ReportError {
    /// The file or directory concerned.
    pub path: PathBuf,
    /// What was expected and what was found, or what failed.
    pub problem: String,
    source: Option<io::Error>,
}

impl ReportError {
    /// A problem with the content of `path`.
    pub fn new(path: &Path, problem: impl Into<String>) -> ReportError {
        ReportError {
            path: path.to_path_buf(),
            problem: problem.into(),
            source: None,
        }
    }

    /// An I/O failure while doing `what` with `path`.
    pub fn io(path: &Path, what: &str, source: io::Error) -> ReportError {
        ReportError {
            path: path.to_path_buf(),
            problem: what.to_string(),
            source: Some(source),
        }
    }
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.problem)?;
        if let Some(source) = &self.source {
            write!(f, ": {source}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|e| e as _)
    }
}

//! The error type of the crate.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why a trace could not be read.
///
/// Every variant names the input (`path` is `None` for text handed to
/// [`crate::parse_trace`]) and, where it applies, the 1-based line and
/// column and a description of what was expected there.
#[derive(Debug)]
pub enum TraceError {
    /// The file could not be read at all.
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The text is not valid JSON (and not a cleanly truncated trace).
    Json {
        /// The file, if the text came from one.
        path: Option<PathBuf>,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What went wrong, usually what was expected.
        detail: String,
    },
    /// The text is JSON but not laid out as a trace.
    Layout {
        /// The file, if the text came from one.
        path: Option<PathBuf>,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What was expected and what was found.
        detail: String,
    },
}

impl TraceError {
    /// The file the error is about, if known.
    pub fn path(&self) -> Option<&Path> {
        match self {
            TraceError::Io { path, .. } => Some(path),
            TraceError::Json { path, .. } | TraceError::Layout { path, .. } => path.as_deref(),
        }
    }

    /// The 1-based line the error is about, if any.
    pub fn line(&self) -> Option<usize> {
        match self {
            TraceError::Io { .. } => None,
            TraceError::Json { line, .. } | TraceError::Layout { line, .. } => Some(*line),
        }
    }

    /// The same error, naming `file` as its input.
    pub(crate) fn in_file(self, file: &Path) -> TraceError {
        match self {
            TraceError::Io { source, .. } => TraceError::Io {
                path: file.to_path_buf(),
                source,
            },
            TraceError::Json {
                line,
                column,
                detail,
                ..
            } => TraceError::Json {
                path: Some(file.to_path_buf()),
                line,
                column,
                detail,
            },
            TraceError::Layout {
                line,
                column,
                detail,
                ..
            } => TraceError::Layout {
                path: Some(file.to_path_buf()),
                line,
                column,
                detail,
            },
        }
    }
}

fn input_name(path: &Option<PathBuf>) -> String {
    match path {
        Some(path) => path.display().to_string(),
        None => "<input>".to_string(),
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Io { path, source } => {
                write!(f, "cannot read {}: {}", path.display(), source)
            }
            TraceError::Json {
                path,
                line,
                column,
                detail,
            } => write!(
                f,
                "{}: line {}, column {}: invalid JSON: {}",
                input_name(path),
                line,
                column,
                detail
            ),
            TraceError::Layout {
                path,
                line,
                column,
                detail,
            } => write!(
                f,
                "{}: line {}, column {}: not a trace: {}",
                input_name(path),
                line,
                column,
                detail
            ),
        }
    }
}

impl std::error::Error for TraceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TraceError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

//! The crate's error type.
//!
//! Parsers return [`ParseError`], which names the file and the 1-based line
//! that did not read as expected. Readers wrap it, or the I/O failure that
//! stopped them, in [`Error`] together with the path, the event or the
//! device concerned. A source that is simply absent (no InfiniBand port, no
//! GPU, a counter the kernel refuses) is not an error: the sampler records it
//! once as [`crate::Unavailable`].

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Text that did not read as the kernel (or a group file) lays it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The file: its real path once a reader has attached it, otherwise the
    /// kind of file the parser expects (for example `/proc/<pid>/stat`).
    pub file: String,
    /// 1-based line of the offending text.
    pub line: usize,
    /// What was expected and what was found.
    pub message: String,
}

impl ParseError {
    /// A new error about `line` of `file`.
    pub fn new(file: &str, line: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            file: file.to_string(),
            line,
            message: message.into(),
        }
    }

    /// The same error, naming the file it was read from.
    pub fn in_file(mut self, path: &Path) -> ParseError {
        self.file = path.display().to_string();
        self
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Everything that can go wrong while probing or sampling.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A file's text did not parse.
    Parse(ParseError),
    /// A file or directory could not be read.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// `perf_event_open` or a counter read failed.
    Perf {
        /// The event, as named in tracks (for example `cycles`).
        event: String,
        /// The task (thread id) the counter observes.
        tid: i32,
        /// The underlying error.
        source: io::Error,
    },
    /// NVML refused a query or could not be loaded.
    Gpu {
        /// The device index, if the error concerns one device.
        device: Option<u32>,
        /// NVML's description of the failure.
        message: String,
    },
    /// A results directory without the node files the monitor writes
    /// (`merge` of the wrong directory).
    NoNodeData {
        /// The metrics directory searched.
        dir: PathBuf,
    },
    /// A node file that does not read as the monitor writes it; the
    /// per-job files are not written from it.
    BadNodeFile {
        /// The node's data or metadata file.
        path: PathBuf,
        /// What was expected and what was found.
        message: String,
    },
    /// A source name that is not one of the accepted values.
    UnknownSource {
        /// What was given.
        given: String,
        /// The accepted values, comma separated.
        accepted: &'static str,
    },
}

impl Error {
    /// An I/O error about `path`.
    pub fn io(path: &Path, source: io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// True if the error says the file or directory does not exist (a
    /// process that exited, a kernel without the feature).
    pub fn is_not_found(&self) -> bool {
        match self {
            Error::Io { source, .. } => source.kind() == io::ErrorKind::NotFound,
            _ => false,
        }
    }

    /// True if the error says the caller may not read the file.
    pub fn is_permission_denied(&self) -> bool {
        match self {
            Error::Io { source, .. } | Error::Perf { source, .. } => {
                source.kind() == io::ErrorKind::PermissionDenied
            }
            _ => false,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Parse(e) => e.fmt(f),
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Perf { event, tid, source } => {
                write!(f, "perf event {event} on task {tid}: {source}")
            }
            Error::Gpu {
                device: Some(d),
                message,
            } => write!(f, "GPU {d}: {message}"),
            Error::Gpu {
                device: None,
                message,
            } => write!(f, "NVML: {message}"),
            Error::NoNodeData { dir } => write!(
                f,
                "{}: no node data (expected the directory .nodes/ that perfflow-monitor writes)",
                dir.display()
            ),
            Error::BadNodeFile { path, message } => write!(
                f,
                "{}: {message}; the per-job files were left as they were",
                path.display()
            ),
            Error::UnknownSource { given, accepted } => {
                write!(f, "unknown source `{given}`; accepted values: {accepted}")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Parse(e) => Some(e),
            Error::Io { source, .. } | Error::Perf { source, .. } => Some(source),
            Error::Gpu { .. }
            | Error::NoNodeData { .. }
            | Error::BadNodeFile { .. }
            | Error::UnknownSource { .. } => None,
        }
    }
}

impl From<ParseError> for Error {
    fn from(e: ParseError) -> Error {
        Error::Parse(e)
    }
}

//! The crate's error type.

use std::fmt;
use std::io;

/// Everything that can go wrong in the runtime's cold paths. The C ABI never
/// returns these: they are reported once on stderr and the program carries
/// on (with tracing off where it has to be). `PERFFLOW_OPTIONS` parsing will
/// add its variants here.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Creating or writing the trace file failed.
    Io(io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "trace file: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}

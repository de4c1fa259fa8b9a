//! Pure parsers: kernel text in, typed structs out. Nothing here opens a
//! file; the readers in [`crate::source`] and [`crate::metadata`] do that and
//! attach the real path to any [`ParseError`].
//!
//! Each parser takes the whole text of one file and reports malformed input
//! as a [`ParseError`] naming the file (by its kind, e.g.
//! `/proc/<pid>/stat`, until a reader substitutes the path) and the 1-based
//! line. Fields that some kernels or configurations do not provide are
//! `Option`s; a missing optional field is never an error.

pub mod cgroup;
pub mod cpuinfo;
pub mod group;
pub mod infiniband;
pub mod io;
pub mod loadavg;
pub mod meminfo;
pub mod net_dev;
pub mod proc_stat;
pub mod rapl;
pub mod smaps_rollup;
pub mod stat;
pub mod statm;
pub mod status;
pub mod sysfs;

use crate::error::ParseError;
use std::str::FromStr;

/// Parses `text` as a number, or says which field of which line was bad.
pub(crate) fn number<T: FromStr>(
    file: &str,
    line: usize,
    what: &str,
    text: &str,
) -> Result<T, ParseError> {
    text.trim().parse().map_err(|_| {
        ParseError::new(
            file,
            line,
            format!("{what}: expected a number, found `{}`", text.trim()),
        )
    })
}

/// Parses a `"<n> kB"` value (as in `/proc/meminfo` and `/proc/<pid>/status`)
/// into bytes. A bare number is taken as a count and returned unchanged.
pub(crate) fn kilobytes(
    file: &str,
    line: usize,
    key: &str,
    value: &str,
) -> Result<u64, ParseError> {
    let value = value.trim();
    match value.strip_suffix("kB") {
        Some(n) => {
            let kib: u64 = number(file, line, key, n)?;
            Ok(kib.saturating_mul(1024))
        }
        None => number(file, line, key, value),
    }
}

/// The lines of `text` as `(1-based line number, key, value)` for lines of
/// the form `Key: value`. Lines without a colon are skipped.
pub(crate) fn key_values(text: &str) -> impl Iterator<Item = (usize, &str, &str)> {
    text.lines().enumerate().filter_map(|(i, line)| {
        line.split_once(':')
            .map(|(k, v)| (i + 1, k.trim(), v.trim()))
    })
}

/// The 1-based number of the line after the last one, used when a required
/// line is missing altogether.
pub(crate) fn end_line(text: &str) -> usize {
    text.lines().count() + 1
}

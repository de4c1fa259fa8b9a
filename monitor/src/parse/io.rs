//! `/proc/<pid>/io`: I/O accounting, see proc(5).
//!
//! `rchar`/`wchar` count bytes passed to `read(2)`/`write(2)` and similar
//! calls, whether or not storage was touched. `read_bytes`/`write_bytes`
//! count bytes the process caused to be fetched from or sent to the storage
//! layer: page-cache writes are charged when they are dirtied, and a file on
//! tmpfs never reaches storage, so `write_bytes` stays 0 there. The file
//! exists only with `CONFIG_TASK_IO_ACCOUNTING` and reading another user's
//! process needs ptrace access; readers treat its absence as `None`.

use super::{key_values, number};
use crate::error::ParseError;

const FILE: &str = "/proc/<pid>/io";

/// I/O counters of one process (all cumulative).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PidIo {
    /// Bytes passed to read-like system calls.
    pub rchar: Option<u64>,
    /// Bytes passed to write-like system calls.
    pub wchar: Option<u64>,
    /// Read-like system calls.
    pub syscr: Option<u64>,
    /// Write-like system calls.
    pub syscw: Option<u64>,
    /// Bytes fetched from storage.
    pub read_bytes: Option<u64>,
    /// Bytes sent (or to be sent) to storage.
    pub write_bytes: Option<u64>,
    /// Bytes whose write-out was cancelled (truncated dirty page cache).
    pub cancelled_write_bytes: Option<u64>,
}

/// Parses the text of `/proc/<pid>/io`.
pub fn parse(text: &str) -> Result<PidIo, ParseError> {
    let mut io = PidIo::default();
    for (line, key, value) in key_values(text) {
        let slot = match key {
            "rchar" => &mut io.rchar,
            "wchar" => &mut io.wchar,
            "syscr" => &mut io.syscr,
            "syscw" => &mut io.syscw,
            "read_bytes" => &mut io.read_bytes,
            "write_bytes" => &mut io.write_bytes,
            "cancelled_write_bytes" => &mut io.cancelled_write_bytes,
            _ => continue,
        };
        *slot = Some(number(FILE, line, key, value)?);
    }
    Ok(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_seven_counters_are_read() {
        let text = "rchar: 6976\nwchar: 67108864\nsyscr: 10\nsyscw: 64\nread_bytes: 4096\nwrite_bytes: 67108864\ncancelled_write_bytes: 0\n";
        let io = parse(text).unwrap();
        assert_eq!(io.rchar, Some(6976));
        assert_eq!(io.wchar, Some(64 << 20));
        assert_eq!(io.syscw, Some(64));
        assert_eq!(io.read_bytes, Some(4096));
        assert_eq!(io.write_bytes, Some(64 << 20));
        assert_eq!(io.cancelled_write_bytes, Some(0));
    }

    #[test]
    fn a_kernel_without_storage_accounting_leaves_byte_counters_none() {
        let io = parse("rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\n").unwrap();
        assert_eq!(io.wchar, Some(2));
        assert_eq!(io.read_bytes, None);
        assert_eq!(io.write_bytes, None);
    }

    #[test]
    fn a_malformed_counter_is_an_error_naming_the_line() {
        let e = parse("rchar: 1\nwchar: -2\n").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("/proc/<pid>/io", 2));
    }
}

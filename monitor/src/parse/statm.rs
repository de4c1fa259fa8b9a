//! `/proc/<pid>/statm`: seven page counts on one line, see proc(5). Used for
//! the shared size on kernels whose `status` lacks `RssFile`/`RssShmem`.

use super::number;
use crate::error::ParseError;

const FILE: &str = "/proc/<pid>/statm";

/// Memory of one process in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PidStatm {
    /// Total program size (as `VmSize`).
    pub size: u64,
    /// Resident set size (as `VmRSS`).
    pub resident: u64,
    /// Resident shared pages (file-backed and shared memory).
    pub shared: u64,
    /// Text (code).
    pub text: u64,
    /// Data and stack.
    pub data: u64,
}

/// Parses the text of `/proc/<pid>/statm`.
pub fn parse(text: &str) -> Result<PidStatm, ParseError> {
    let mut fields = text.split_ascii_whitespace();
    let mut next = |what: &str| -> Result<u64, ParseError> {
        let t = fields
            .next()
            .ok_or_else(|| ParseError::new(FILE, 1, format!("line ends before {what}")))?;
        number(FILE, 1, what, t)
    };
    let size = next("size")?;
    let resident = next("resident")?;
    let shared = next("shared")?;
    let text_pages = next("text")?;
    let _lib = next("lib")?;
    let data = next("data")?;
    Ok(PidStatm {
        size,
        resident,
        shared,
        text: text_pages,
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seven_page_counts_are_read() {
        let s = parse("765 442 413 5 0 123 0\n").unwrap();
        assert_eq!(
            (s.size, s.resident, s.shared, s.text, s.data),
            (765, 442, 413, 5, 123)
        );
    }

    #[test]
    fn a_short_line_is_an_error() {
        let e = parse("765 442\n").unwrap_err();
        assert_eq!(e.file, "/proc/<pid>/statm");
        assert!(e.message.contains("shared"), "{e}");
    }
}

//! Readers: the thin layer that binds the parsers to `/proc`, `/sys`, perf
//! and NVML. Each source is probed once (by [`crate::Sampler::new`]); a
//! source that cannot work here says why, and the sampler reports that once
//! as unavailable. Paths are built from the roots in
//! [`crate::SamplerConfig`] so tests can point a reader at a fake tree.
//!
//! Counters that only grow are kept raw and also turned into rates against
//! the previous sample; the first sample of a source has no rates.

pub mod gpu;
pub mod infiniband;
pub mod net;
pub mod perf;
pub mod process;
pub mod rapl;
pub mod system;

use crate::error::Error;
use crate::fd::{open_high, Kept};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Reads whole files into one reused buffer, so sampling does not allocate
/// per file. Text that is not UTF-8 (a process name can hold any bytes) is
/// converted lossily rather than refused.
#[derive(Debug, Default)]
pub(crate) struct TextReader {
    bytes: Vec<u8>,
}

/// Initial buffer size; `/proc/<pid>` files are far smaller.
const INITIAL: usize = 16 * 1024;

impl TextReader {
    /// The text of the last read.
    pub(crate) fn text(&mut self) -> &str {
        if std::str::from_utf8(&self.bytes).is_err() {
            self.bytes = String::from_utf8_lossy(&self.bytes)
                .into_owned()
                .into_bytes();
        }
        std::str::from_utf8(&self.bytes).unwrap_or_default()
    }

    /// The text of `path`, read with plain `read` calls until end of file
    /// (no `stat` or `lseek`, which `read_to_string` would add).
    pub(crate) fn read(&mut self, path: &Path) -> Result<&str, Error> {
        let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
        self.read_open(&mut f, path)
    }

    /// The rest of the already open `f` (`path` names it in errors).
    pub(crate) fn read_open(&mut self, f: &mut File, path: &Path) -> Result<&str, Error> {
        self.bytes.clear();
        let mut chunk = [0u8; 4096];
        loop {
            match f.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => self.bytes.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(path, e)),
            }
        }
        Ok(self.text())
    }

    /// The whole text of an open procfs file, read again from offset 0 with
    /// `pread`: procfs regenerates the text on each read from the start,
    /// so a descriptor can be kept open across samples.
    ///
    /// One `pread` returns the whole text of a single-record file, and up
    /// to a page of a multi-record one (`cpuinfo`, `net/dev`, `children`),
    /// so a read that ends short of the last [`PAGE_SLACK`] bytes of the
    /// first page is complete; otherwise reading continues at the offset
    /// reached until the kernel returns 0.
    /// The text is left in the reader: take it with [`TextReader::text`].
    pub(crate) fn reread(&mut self, f: &File, path: &Path) -> Result<(), Error> {
        // Read straight into the reused buffer: no allocation once it has
        // grown to the largest file.
        let mut len = 0;
        loop {
            self.bytes.resize(len + INITIAL, 0);
            let n = loop {
                match f.read_at(&mut self.bytes[len..], len as u64) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.bytes.clear();
                        return Err(Error::io(path, e));
                    }
                }
            };
            let first = len == 0;
            len += n;
            if n == 0 || (first && n < 4096 - PAGE_SLACK) {
                break;
            }
        }
        self.bytes.truncate(len);
        Ok(())
    }
}

/// A multi-record seq file returns at most one page per read; a first
/// read this close to a page may have stopped early.
const PAGE_SLACK: usize = 256;

/// A file read at every sample through a descriptor kept open (at a high
/// number, checked ours before each read: see [`crate::fd`]).
#[derive(Debug)]
pub(crate) struct KeptFile {
    path: std::path::PathBuf,
    file: Option<Kept<File>>,
}

impl KeptFile {
    pub(crate) fn new(path: std::path::PathBuf) -> KeptFile {
        KeptFile { path, file: None }
    }

    /// The file's current text; opens it on first use, and again after an
    /// error or when its descriptor was closed or replaced.
    pub(crate) fn read<'r>(&mut self, reader: &'r mut TextReader) -> Result<&'r str, Error> {
        // One identity check per read (see `crate::fd`).
        let checked = self.file.as_ref().and_then(Kept::get).is_some();
        if !checked {
            self.file = None;
            let file = open_high(&self.path).map_err(|e| Error::io(&self.path, e))?;
            self.file = Kept::new(file);
        }
        let Some(f) = self.file.as_ref().map(Kept::just_kept) else {
            return Err(Error::io(&self.path, std::io::ErrorKind::NotFound.into()));
        };
        if let Err(e) = reader.reread(f, &self.path) {
            self.file = None;
            return Err(e);
        }
        Ok(reader.text())
    }

    /// The path, for messages.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// Per-second rate of a counter between two readings `dt_s` apart; `None`
/// without a previous reading, when no time passed, or if the counter went
/// backwards (a reset).
pub(crate) fn rate(prev: Option<u64>, cur: Option<u64>, dt_s: Option<f64>) -> Option<f64> {
    let (p, c, dt) = (prev?, cur?, dt_s?);
    if c < p || dt <= 0.0 {
        return None;
    }
    Some((c - p) as f64 / dt)
}

/// `sysconf(_SC_CLK_TCK)`, the unit of `/proc` CPU times (100 if unknown).
pub(crate) fn clock_ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// `sysconf(_SC_PAGESIZE)` (4096 if unknown).
pub(crate) fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_needs_a_previous_reading_and_a_forward_counter() {
        assert_eq!(rate(Some(100), Some(300), Some(2.0)), Some(100.0));
        assert_eq!(rate(None, Some(300), Some(2.0)), None);
        assert_eq!(rate(Some(300), Some(100), Some(2.0)), None);
        assert_eq!(rate(Some(1), Some(2), Some(0.0)), None);
    }
}

#[cfg(test)]
mod reader_tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_kept_file_longer_than_a_page_is_read_whole_and_again_after_a_rewrite() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("long");
        let text: String = (0..2000).map(|i| format!("{i}\n")).collect();
        std::fs::write(&path, &text).expect("write");
        let mut kept = KeptFile::new(path.clone());
        let mut reader = TextReader::default();
        assert_eq!(kept.read(&mut reader).expect("read"), text);
        std::fs::write(&path, "short\n").expect("rewrite");
        assert_eq!(kept.read(&mut reader).expect("reread"), "short\n");
    }

    #[test]
    fn text_that_is_not_utf8_is_read_lossily() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("stat");
        let mut f = File::create(&path).expect("create");
        f.write_all(b"1 (a\xffb) S 0\n").expect("write");
        let mut reader = TextReader::default();
        assert_eq!(reader.read(&path).expect("read"), "1 (a\u{fffd}b) S 0\n");
    }
}

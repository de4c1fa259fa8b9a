//! The trace file as the writer's destination: a descriptor that the
//! program may close or take over, checked before every write.
//!
//! The descriptor is kept at a high number (see [`crate::fd`]) and its
//! device and inode are checked with `fstat` before each write, that is
//! once per block of about a megabyte. When the program has closed it or
//! put a file of its own under its number, the runtime never writes there
//! (nor closes it): it opens its trace again by path, appending, if the
//! path still leads to the same file, and says so in one line on stderr;
//! otherwise writing fails with an error that says why, the writer stops
//! and counts the events it could not write.

use std::ffi::CString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::IntoRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::fd::{self, Identity};
use crate::options::{show_size, FreeSpace};

/// A trace file opened by the runtime.
#[derive(Debug)]
pub struct TraceFile {
    /// The descriptor while it is (believed) ours; `None` once the trace
    /// cannot be written any more.
    fd: Option<libc::c_int>,
    id: Identity,
    path: PathBuf,
    limits: Limits,
    /// Bytes written to the file.
    written: u64,
}

/// How far a trace file may grow (`max-trace-size`, `min-free-space`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    pub max_size: Option<u64>,
    pub min_free: Option<FreeSpace>,
}

impl TraceFile {
    /// Takes over `file`, just created at `path`, moving its descriptor to
    /// a high number. A relative `path` is kept from the current directory
    /// now, so the trace is opened again at the right place after the
    /// program changes directory (a daemon's `chdir("/")`).
    pub fn new(file: File, path: PathBuf) -> io::Result<TraceFile> {
        let path = std::path::absolute(&path).unwrap_or(path);
        let fd = fd::move_high(file.into_raw_fd());
        let Some(id) = fd::identity(fd) else {
            return Err(io::Error::last_os_error());
        };
        Ok(TraceFile {
            fd: Some(fd),
            id,
            path,
            limits: Limits::default(),
            written: 0,
        })
    }

    /// Keeps every later write within `limits`.
    pub fn limit(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Fails unless `len` more bytes keep the file within its limits. Each
    /// write is a block of about a megabyte or less, so the file system's
    /// free space is read (`fstatvfs`) at most once per block.
    fn room_for(&self, fd: libc::c_int, len: usize) -> io::Result<()> {
        let len = len as u64;
        if let Some(max) = self.limits.max_size {
            if self.written.saturating_add(len) > max {
                return Err(io::Error::other(format!(
                    "{} would pass max-trace-size, {}",
                    self.path.display(),
                    show_size(max)
                )));
            }
        }
        if let Some(keep) = self.limits.min_free {
            // SAFETY: an all-zero statvfs is valid; fstatvfs fills it.
            let mut fs: libc::statvfs = unsafe { std::mem::zeroed() };
            // SAFETY: a descriptor checked ours, a valid out pointer.
            if unsafe { libc::fstatvfs(fd, &mut fs) } == 0 {
                let unit = fs.f_frsize as u64;
                let free = (fs.f_bavail as u64).saturating_mul(unit);
                let floor = keep.bytes_of((fs.f_blocks as u64).saturating_mul(unit));
                if free < floor.saturating_add(len) {
                    return Err(io::Error::other(format!(
                        "the file system of {} has {} free, and min-free-space keeps {keep} \
                         for the program",
                        self.path.display(),
                        show_size(free)
                    )));
                }
            }
        }
        Ok(())
    }

    /// The descriptor to write to: the kept one if it is still ours, else
    /// the trace opened again for appending.
    fn ours(&mut self) -> io::Result<libc::c_int> {
        let Some(old) = self.fd else {
            return Err(io::Error::other("the trace file was lost earlier"));
        };
        if fd::is(old, self.id) {
            return Ok(old);
        }
        // Not ours any more: forget the number without closing it.
        self.fd = None;
        match self.reopen() {
            Ok(fd) => {
                crate::shield::stderr_line(format_args!(
                    "perfflow: the program closed or replaced the trace's descriptor {old}; \
                     {} was opened again and the trace goes on",
                    self.path.display()
                ));
                self.fd = Some(fd);
                Ok(fd)
            }
            Err(why) => Err(io::Error::other(format!(
                "the program closed or replaced its descriptor {old}, and {} {why}",
                self.path.display()
            ))),
        }
    }

    /// Opens the trace's path for appending; fails (and closes what it
    /// opened) unless it is the very file created.
    fn reopen(&self) -> Result<libc::c_int, String> {
        let path = CString::new(self.path.as_os_str().as_bytes())
            .map_err(|_| "has a NUL in its path".to_string())?;
        // SAFETY: a NUL-terminated path; flags without O_CREAT need no mode.
        let fd = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_WRONLY | libc::O_APPEND | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(format!(
                "cannot be opened again ({})",
                io::Error::last_os_error()
            ));
        }
        let fd = fd::move_high(fd);
        if fd::is(fd, self.id) {
            Ok(fd)
        } else {
            // SAFETY: opened just above, never shared.
            unsafe { libc::close(fd) };
            Err("is now another file".to_string())
        }
    }
}

impl Write for TraceFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let fd = self.ours()?;
        self.room_for(fd, buf.len())?;
        // Past the file size limit this fails with EFBIG rather than
        // ending the program by SIGXFSZ (see `crate::shield`).
        let n = crate::shield::shielded(|| {
            // SAFETY: writing from a valid buffer to a descriptor checked ours.
            let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
            if n < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(n as usize)
            }
        })?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for TraceFile {
    fn drop(&mut self) {
        if let Some(fd) = self.fd.take() {
            fd::close_if(fd, self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("perfflow-trace-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn writes_stop_before_a_limit_and_say_which() {
        let dir = scratch("limits");
        let path = dir.join("t.pfw");
        let mut t = TraceFile::new(File::create(&path).unwrap(), path.clone()).unwrap();
        t.limit(Limits {
            max_size: Some(10),
            min_free: None,
        });
        t.write_all(b"0123456789").unwrap();
        let e = t.write_all(b"x").unwrap_err().to_string();
        assert!(e.contains("would pass max-trace-size, 10 bytes"), "{e}");
        assert!(e.contains(path.to_str().unwrap()), "{e}");
        // No file system has room for a limit of half of all bytes.
        t.limit(Limits {
            max_size: None,
            min_free: Some(FreeSpace::Bytes(u64::MAX / 2)),
        });
        let e = t.write_all(b"x").unwrap_err().to_string();
        assert!(e.contains("min-free-space keeps 8388608 TiB"), "{e}");
        assert!(
            e.contains(&format!("the file system of {}", path.display())),
            "{e}"
        );
        t.limit(Limits {
            max_size: Some(11),
            min_free: Some(FreeSpace::Bytes(0)),
        });
        t.write_all(b"x").unwrap();
        drop(t);
        assert_eq!(std::fs::read(&path).unwrap(), b"0123456789x");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_closed_descriptor_is_opened_again_and_the_trace_appended() {
        let dir = scratch("closed");
        let path = dir.join("t.pfw");
        let mut t = TraceFile::new(File::create(&path).unwrap(), path.clone()).unwrap();
        t.write_all(b"[\n").unwrap();
        // SAFETY: closing the test's own descriptor behind the writer.
        unsafe { libc::close(t.fd.unwrap()) };
        t.write_all(b"]\n").unwrap();
        drop(t);
        assert_eq!(std::fs::read(&path).unwrap(), b"[\n]\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_replaced_descriptor_is_never_written_and_a_removed_trace_stops() {
        let dir = scratch("replaced");
        let path = dir.join("t.pfw");
        let other = dir.join("program.dat");
        let mut t = TraceFile::new(File::create(&path).unwrap(), path.clone()).unwrap();
        t.write_all(b"[\n").unwrap();
        std::fs::remove_file(&path).unwrap();
        let program = File::create(&other).unwrap();
        let num = t.fd.unwrap();
        // SAFETY: the program takes the trace's number for its own file.
        unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&program), num) };
        let e = t.write_all(b"{}").unwrap_err().to_string();
        assert!(e.contains("cannot be opened again"), "{e}");
        drop(t);
        assert!(
            fd::identity(num).is_some(),
            "the program's descriptor stays open"
        );
        assert_eq!(std::fs::read(&other).unwrap(), b"");
        // SAFETY: the test's copy.
        unsafe { libc::close(num) };
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! Descriptors kept open across samples, checked before each use.
//!
//! The sampler also runs inside traced programs (perfflow's runtime hosts
//! it), and a program may close every descriptor from 3 up (a daemon,
//! `closefrom`) and open its own files, which take the lowest free numbers.
//! A descriptor used by number after that would read, or close, the
//! program's file. So kept descriptors are moved to high numbers
//! ([`move_high`]), out of the way of the numbers `open` hands out, and
//! wrapped in [`Kept`], which remembers the device and inode of the file
//! ([`Identity`]) and gives the descriptor out only while `fstat` still
//! finds that file behind it. A descriptor that is no longer ours is never
//! read or closed; the caller opens its file again.
//!
//! Cost: one `fstat` per use. perf event descriptors all share one
//! anonymous inode, so a program's own perf event under one of their
//! numbers is not told apart; any other file is.

use std::fs::File;
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, RawFd};
use std::path::Path;

/// The lowest number kept descriptors move to, unless the descriptor limit
/// is lower (then three quarters of it).
pub const FD_BASE: RawFd = 1024;

/// Device and inode of an open file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
}

/// The identity of the file `fd` refers to; `None` when `fd` is not open.
/// Async-signal-safe (one `fstat`).
pub fn identity(fd: RawFd) -> Option<Identity> {
    if fd < 0 {
        return None;
    }
    // SAFETY: `st` is a valid, writable stat buffer.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return None;
        }
        Some(Identity {
            dev: st.st_dev,
            ino: st.st_ino,
        })
    }
}

/// Moves `fd`, just opened by the caller, to the lowest free number from
/// [`FD_BASE`] up (close-on-exec), closing the low number. Returns the
/// descriptor to keep: `fd` itself when it cannot be moved.
pub fn move_high(fd: RawFd) -> RawFd {
    if fd < 0 {
        return fd;
    }
    // SAFETY: `lim` is a valid rlimit buffer; F_DUPFD_CLOEXEC duplicates a
    // descriptor the caller owns, and the original is closed only once the
    // copy exists.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        let base = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            let limit = RawFd::try_from(lim.rlim_cur).unwrap_or(RawFd::MAX);
            FD_BASE.min(limit / 4 * 3)
        } else {
            FD_BASE
        };
        if fd >= base {
            return fd;
        }
        let high = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, base);
        if high < 0 {
            return fd;
        }
        libc::close(fd);
        high
    }
}

/// Opens `path` for reading at a high number (see [`move_high`]).
pub fn open_high(path: &Path) -> io::Result<File> {
    let fd = move_high(File::open(path)?.into_raw_fd());
    // SAFETY: `fd` is open and owned by nothing else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// A descriptor owner (`File`, a perf counter) whose descriptor is given
/// out only while it still refers to the file it was opened on, and closed
/// on drop only then.
#[derive(Debug)]
pub struct Kept<T: AsRawFd> {
    inner: ManuallyDrop<T>,
    id: Identity,
}

impl<T: AsRawFd> Kept<T> {
    /// Keeps `inner`; `None` when its descriptor is not open.
    pub fn new(inner: T) -> Option<Kept<T>> {
        let id = identity(inner.as_raw_fd())?;
        Some(Kept {
            inner: ManuallyDrop::new(inner),
            id,
        })
    }

    /// The owner, while its descriptor is still ours.
    pub fn get(&self) -> Option<&T> {
        (identity(self.inner.as_raw_fd()) == Some(self.id)).then_some(&*self.inner)
    }

    /// The owner without the check, for use right after [`Kept::new`],
    /// which has just taken the descriptor's identity.
    pub(crate) fn just_kept(&self) -> &T {
        &self.inner
    }
}

impl<T: AsRawFd> Drop for Kept<T> {
    fn drop(&mut self) {
        if self.get().is_some() {
            // SAFETY: dropped once, here; the descriptor is ours.
            unsafe { ManuallyDrop::drop(&mut self.inner) };
        }
        // Otherwise the number belongs to the program now: the owner is
        // leaked rather than let it close the program's file.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_file_replaced_under_its_number_is_not_given_out_nor_closed() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("ours");
        let theirs = dir.path().join("theirs");
        std::fs::write(&ours, "ours").unwrap();
        std::fs::write(&theirs, "theirs").unwrap();
        let kept = Kept::new(open_high(&ours).unwrap()).unwrap();
        let fd = kept.get().unwrap().as_raw_fd();
        assert!(fd >= 3);
        let program = File::open(&theirs).unwrap();
        // SAFETY: the test stands in for the program taking the number.
        unsafe { libc::dup2(program.as_raw_fd(), fd) };
        assert!(kept.get().is_none());
        drop(kept);
        assert!(identity(fd).is_some(), "the program's file stays open");
        // SAFETY: the test's own copy.
        unsafe { libc::close(fd) };
    }
}

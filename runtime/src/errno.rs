//! The program's `errno`, kept across the runtime's own work.
//!
//! A woven call returns with `errno` as the function left it: a program
//! that tests `errno` after a call that failed (or `perror`s it) must read
//! the function's value, not one a system call of the runtime left on the
//! way out (`mkdir` of an existing log directory: `EEXIST`). The hot path
//! makes no system call; each cold path the program's thread can take
//! (the runtime's start, a full chunk's hand-off, `cpu-mem-usage` reads,
//! the API's region and async calls, fork and exit hooks, the
//! `-finstrument-functions` hooks' first call of a function) keeps
//! `errno` with a [`Kept`] for its whole length.

/// The calling thread's `errno` when made, put back when dropped.
pub(crate) struct Kept(libc::c_int);

impl Kept {
    #[inline]
    pub(crate) fn now() -> Kept {
        // SAFETY: `__errno_location` returns the calling thread's errno.
        Kept(unsafe { *libc::__errno_location() })
    }
}

impl Drop for Kept {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: as above; the same thread (the guard is not Send).
        unsafe { *libc::__errno_location() = self.0 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_comes_back_as_it_was() {
        // SAFETY: this thread's errno.
        unsafe { *libc::__errno_location() = libc::ENOENT };
        {
            let _kept = Kept::now();
            // SAFETY: a failing system call that sets errno.
            unsafe { libc::mkdir(c"/".as_ptr(), 0o755) };
            // SAFETY: as above.
            assert_eq!(unsafe { *libc::__errno_location() }, libc::EEXIST);
        }
        // SAFETY: as above.
        assert_eq!(unsafe { *libc::__errno_location() }, libc::ENOENT);
    }
}

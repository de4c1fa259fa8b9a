//! Descriptors the runtime keeps open inside a program that may close or
//! reuse any descriptor.
//!
//! A daemon-style program closes every descriptor from 3 up (a loop to the
//! limit, or `closefrom`) and then opens its own files, which get the
//! lowest free numbers: the numbers the runtime's trace file, signal pipes
//! and `/proc/self/statm` had. Writing or reading by number would then put
//! the trace into the program's file or consume the program's data. So:
//!
//! * every kept descriptor is moved to a high number (`move_high`, shared
//!   with the metric sampler's kept files in [`perfflow_monitor::fd`]), out
//!   of the way of the low numbers `open` hands out, so a closed one is
//!   seen as closed (`EBADF`) rather than as someone else's file;
//! * its identity (device and inode, [`Identity`]) is remembered when it is
//!   opened and checked with `fstat` before each use (a write block of the
//!   trace, a read of `statm`, a signal request): a descriptor that is no
//!   longer ours is never read, written or closed. The caller then opens
//!   its own again, or stops.
//!
//! `fstat` is async-signal-safe, so signal handlers check the same way.
//! A program that closes a descriptor and gets the same number back for a
//! file of its own between the check and the use (a window of one system
//! call, at a number above `perfflow_monitor::fd::FD_BASE`) is not caught;
//! any other closing or replacing is.

use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) use perfflow_monitor::fd::{identity, move_high, open_high, Identity, Kept};

/// True when `fd` still refers to the file `id`. Async-signal-safe.
pub(crate) fn is(fd: libc::c_int, id: Identity) -> bool {
    identity(fd) == Some(id)
}

/// Closes `fd` if it still refers to `id`; a descriptor the program has
/// taken over is left alone.
pub(crate) fn close_if(fd: libc::c_int, id: Identity) {
    if is(fd, id) {
        // SAFETY: the descriptor is ours (checked just above).
        unsafe { libc::close(fd) };
    }
}

/// A descriptor and its identity in one atomic word, for descriptors
/// shared with signal handlers or other threads: the number in the high
/// half, the low 32 bits of the inode in the low half (pipes and `/proc`
/// files have 32-bit inode numbers), on a device kept beside it.
#[derive(Debug)]
pub(crate) struct Shared {
    word: AtomicU64,
    dev: AtomicU64,
}

/// The word of a [`Shared`] that holds no descriptor.
const NONE: u64 = u64::MAX;

impl Shared {
    pub(crate) const fn new() -> Shared {
        Shared {
            word: AtomicU64::new(NONE),
            dev: AtomicU64::new(0),
        }
    }

    /// Publishes `fd` with its identity; false (nothing published) when
    /// `fd` is not open.
    pub(crate) fn publish(&self, fd: libc::c_int) -> bool {
        let Some(id) = identity(fd) else { return false };
        self.dev.store(id.dev, Ordering::Relaxed);
        self.word.store(pack(fd, id.ino), Ordering::Release);
        true
    }

    /// The published descriptor if it is still ours, else `None`.
    /// Async-signal-safe.
    pub(crate) fn get(&self) -> Option<libc::c_int> {
        let word = self.word.load(Ordering::Acquire);
        if word == NONE {
            return None;
        }
        let fd = (word >> 32) as libc::c_int;
        let id = identity(fd)?;
        let ours = id.dev == self.dev.load(Ordering::Relaxed) && id.ino as u32 == word as u32;
        ours.then_some(fd)
    }

    /// The published word, to pass to [`Shared::publish_over`].
    pub(crate) fn word(&self) -> u64 {
        self.word.load(Ordering::Acquire)
    }

    /// Publishes `fd` in place of the word `seen`, unless another thread
    /// published first: then closes `fd` and returns false. The descriptor
    /// `seen` held is not closed (it is no longer ours).
    pub(crate) fn publish_over(&self, seen: u64, fd: libc::c_int) -> bool {
        let Some(id) = identity(fd) else { return false };
        self.dev.store(id.dev, Ordering::Relaxed);
        let won = self
            .word
            .compare_exchange(seen, pack(fd, id.ino), Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if !won {
            // SAFETY: opened by the caller and never shared.
            unsafe { libc::close(fd) };
        }
        won
    }

    /// Unpublishes the descriptor and closes it if it is still ours.
    pub(crate) fn close(&self) {
        if let Some(fd) = self.get() {
            self.word.store(NONE, Ordering::Release);
            // SAFETY: checked ours just above.
            unsafe { libc::close(fd) };
        } else {
            self.word.store(NONE, Ordering::Release);
        }
    }
}

fn pack(fd: libc::c_int, ino: u64) -> u64 {
    (u64::from(fd as u32) << 32) | (ino & 0xffff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipe() -> [libc::c_int; 2] {
        let mut fds = [0; 2];
        // SAFETY: room for two descriptors.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        fds
    }

    #[test]
    fn a_descriptor_moved_high_keeps_its_file_and_leaves_the_low_number_free() {
        let [r, w] = pipe();
        let id = identity(r).unwrap();
        let high = move_high(r);
        assert!(high >= 3 && high != r, "{r} -> {high}");
        assert!(is(high, id));
        close_if(high, id);
        close_if(w, identity(w).unwrap());
    }

    #[test]
    fn a_shared_descriptor_closed_or_replaced_is_no_longer_given_out() {
        let [r, w] = pipe();
        let shared = Shared::new();
        assert!(shared.publish(r));
        assert_eq!(shared.get(), Some(r));
        // The program replaces our number by another file of its own.
        let [r2, w2] = pipe();
        // SAFETY: test descriptors.
        unsafe { libc::dup2(r2, r) };
        assert_eq!(shared.get(), None);
        shared.close();
        assert!(identity(r).is_some(), "the program's file stays open");
        // SAFETY: test descriptors.
        unsafe {
            libc::close(r);
            libc::close(w);
            libc::close(r2);
            libc::close(w2);
        }
    }
}

//! Writes that cannot end the program.
//!
//! A write to a pipe that nobody reads any more raises SIGPIPE, and one
//! past the file size limit (`RLIMIT_FSIZE`, `ulimit -f`, which batch
//! systems pass on to jobs) raises SIGXFSZ. Either ends the process unless
//! the program chose otherwise. The runtime writes its trace and its
//! stderr lines from the program's own threads too (the first event, the
//! final flush at exit, a thread's hand-off without a writer thread), so a
//! failed write of the runtime's would end a program that would have run
//! to its end untraced: a trace that outgrows the limit, or a warning
//! written to a closed pipe (`prog 2>&1 | head`).
//!
//! [`shielded`] runs a write with both signals blocked on its thread. The
//! kernel directs either signal at the writing thread and makes the write
//! fail with `EPIPE` or `EFBIG`; before the signals are unblocked, the one
//! that write raised is taken back, so the caller sees an error and the
//! program nothing. A signal already pending before the write (the
//! program's own) is left pending.
//!
//! [`stderr_line`] also never writes into a program's own file: a program
//! that closed its stderr may have been given descriptor 2 for a results
//! file, and a warning written there would corrupt it. Descriptor 2 is
//! written only while it is the file the program started with (its device
//! and inode, taken before `main`), or a terminal, pipe or socket it put
//! there since; a regular file put there since, or a descriptor 2 that was
//! closed at start, gets no warnings.

use std::fmt;
use std::io::{self, Write};
use std::mem::MaybeUninit;
use std::sync::OnceLock;

use crate::fd::{identity, Identity};

/// The signals a failed write raises, with the error it fails with.
const RAISED_BY_WRITES: [(libc::c_int, libc::c_int); 2] =
    [(libc::SIGPIPE, libc::EPIPE), (libc::SIGXFSZ, libc::EFBIG)];

fn set_of(signals: &[libc::c_int]) -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: `sigemptyset` initializes the set; `sigaddset` is given valid
    // signal numbers.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        for &sig in signals {
            libc::sigaddset(set.as_mut_ptr(), sig);
        }
        set.assume_init()
    }
}

/// Runs `write` with SIGPIPE and SIGXFSZ blocked on this thread; a signal
/// that its failure raised is taken back before they are unblocked (see
/// the module's documentation). Async-signal-safe but for what `write`
/// does.
pub(crate) fn shielded<T>(write: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let block = set_of(&RAISED_BY_WRITES.map(|(sig, _)| sig));
    let mut old = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: valid sets; `old` is written by the call.
    if unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &block, old.as_mut_ptr()) } != 0 {
        return write();
    }
    let mut pending = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: `sigpending` writes the set; read only when it succeeded.
    let pending = (unsafe { libc::sigpending(pending.as_mut_ptr()) } == 0)
        .then(|| unsafe { pending.assume_init() });
    let result = write();
    if let Err(e) = &result {
        for (sig, errno) in RAISED_BY_WRITES {
            // SAFETY: `pending` is an initialized set.
            let was_pending = pending
                .as_ref()
                .is_none_or(|set| unsafe { libc::sigismember(set, sig) } == 1);
            if e.raw_os_error() == Some(errno) && !was_pending {
                let only = set_of(&[sig]);
                let now = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                // SAFETY: valid set and timeout; no siginfo wanted. The
                // signal is blocked, so it waits here if the write raised
                // it; a zero timeout returns at once either way.
                unsafe { libc::sigtimedwait(&only, std::ptr::null_mut(), &now) };
            }
        }
    }
    // SAFETY: `old` was written by the successful call above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, old.as_ptr(), std::ptr::null_mut()) };
    result
}

/// Descriptor 2 as the program started with it: taken before `main` (or
/// at the first warning, in a program that loaded the runtime later).
static STDERR_AT_START: OnceLock<Option<Identity>> = OnceLock::new();

extern "C" fn note_stderr_before_main() {
    let _errno = crate::errno::Kept::now();
    STDERR_AT_START.get_or_init(|| identity(libc::STDERR_FILENO));
}

#[used]
#[link_section = ".init_array"]
static NOTE_STDERR_BEFORE_MAIN: extern "C" fn() = note_stderr_before_main;

/// Whether a warning may go to descriptor 2 now (see the module's
/// documentation).
fn stderr_is_the_programs() -> bool {
    let mut st = MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `st` is a valid stat buffer, read only when `fstat` filled it.
    let st = unsafe {
        if libc::fstat(libc::STDERR_FILENO, st.as_mut_ptr()) != 0 {
            return false;
        }
        st.assume_init()
    };
    let now = Identity {
        dev: st.st_dev,
        ino: st.st_ino,
    };
    match *STDERR_AT_START.get_or_init(|| Some(now)) {
        Some(at_start) if at_start == now => true,
        Some(_) => matches!(
            st.st_mode & libc::S_IFMT,
            libc::S_IFCHR | libc::S_IFIFO | libc::S_IFSOCK
        ),
        None => false,
    }
}

/// Writes `args` and a newline on stderr in one write, which a closed pipe
/// or a full disk fails quietly (see [`shielded`]), unless descriptor 2 is
/// no longer the program's stderr. Control characters in `args` (a site or
/// file name may hold any byte) are written as `\u{..}` escapes, so a
/// warning is one line and cannot move a terminal's cursor or change its
/// state.
pub(crate) fn stderr_line(args: fmt::Arguments<'_>) {
    if !stderr_is_the_programs() {
        return;
    }
    let line = one_line(&args.to_string());
    let _ = shielded(|| io::stderr().lock().write_all(line.as_bytes()));
}

/// `text` with each control character (C0, DEL, C1) escaped as Rust
/// writes it in a debug string, and a newline after it.
fn one_line(text: &str) -> String {
    let mut line = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        if c.is_control() {
            line.extend(c.escape_debug());
        } else {
            line.push(c);
        }
    }
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(sig: libc::c_int) -> bool {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: `sigpending` fills the set.
        unsafe {
            libc::sigpending(set.as_mut_ptr());
            libc::sigismember(set.as_ptr(), sig) == 1
        }
    }

    fn blocked(sig: libc::c_int) -> bool {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: querying the mask only.
        unsafe {
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), set.as_mut_ptr());
            libc::sigismember(set.as_ptr(), sig) == 1
        }
    }

    /// A write to a pipe without a reader fails with EPIPE and leaves no
    /// SIGPIPE pending; one already pending stays; the thread's mask is
    /// restored. (Rust's test harness ignores SIGPIPE, so the thread blocks
    /// it itself: a signal the write raised would stay pending, not be
    /// discarded, if it were not taken back.)
    #[test]
    fn a_warning_is_one_line_whatever_its_names_hold() {
        assert_eq!(one_line("plain text, é"), "plain text, é\n");
        assert_eq!(
            one_line("site \u{1b}[2J\rname\nnext\u{7f}\u{9b}"),
            "site \\u{1b}[2J\\rname\\nnext\\u{7f}\\u{9b}\n"
        );
    }

    #[test]
    fn a_broken_pipe_gives_an_error_and_leaves_no_signal() {
        std::thread::spawn(|| {
            let mut fds = [0; 2];
            // SAFETY: a pipe into a valid array; its read end closed at once.
            unsafe {
                assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
                libc::close(fds[0]);
            }
            let write = || {
                // SAFETY: writing one byte from a valid buffer.
                let n = unsafe { libc::write(fds[1], b"x".as_ptr().cast(), 1) };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(())
                }
            };
            assert!(!blocked(libc::SIGPIPE));
            assert!(shielded(write).is_err());
            assert!(!blocked(libc::SIGPIPE), "mask not restored");

            let block = set_of(&[libc::SIGPIPE]);
            // SAFETY: valid set.
            unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &block, std::ptr::null_mut()) };
            assert!(!pending(libc::SIGPIPE));
            let e = shielded(write).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EPIPE));
            assert!(!pending(libc::SIGPIPE), "the write's SIGPIPE left pending");
            assert!(blocked(libc::SIGPIPE), "mask not restored");

            // SAFETY: raising a blocked signal at this thread.
            unsafe { libc::pthread_kill(libc::pthread_self(), libc::SIGPIPE) };
            assert!(pending(libc::SIGPIPE));
            assert!(shielded(write).is_err());
            assert!(pending(libc::SIGPIPE), "the thread's own SIGPIPE was taken");
            let now = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: takes the pending signal back; closes our end.
            unsafe {
                libc::sigtimedwait(&block, std::ptr::null_mut(), &now);
                libc::close(fds[1]);
            }
        })
        .join()
        .unwrap();
    }
}

//! Cooperation with the sanitizers a program may be built with.
//!
//! ThreadSanitizer ends a forked child that starts a thread when the parent
//! had several (ours always has its service threads), so under it a forked
//! child starts none: its threads format their own records, as when a
//! thread cannot be started. (Its reports about the runtime's own data are
//! false positives: see runtime/sanitizers/tsan.supp.)
//!
//! With LeakSanitizer (`-fsanitize=address` or `=leak`): a forked child has
//! only the thread that called `fork`. Whatever the runtime's service
//! threads (writer, signal watcher, sampler) held at that moment (the Rust
//! standard library's thread records, a spare chunk being allocated, the
//! sampler's state and a sample under way) is pointed to only by those
//! threads' stacks and registers, which LeakSanitizer does not scan in the
//! child, and glibc reuses those stacks for the child's own threads. That
//! memory is not a leak of the child, and the program must still exit with
//! its own status, so LeakSanitizer is told to ignore what a service thread
//! allocates ([`untracked_thread`]) and what is allocated to start one
//! ([`spawn_untracked`]). Ignored memory is still scanned for pointers, so
//! nothing it points to is reported either. (The record buffers of the
//! parent's threads are not kept in the child: the child frees them.)

use std::ffi::c_void;
use std::sync::OnceLock;

/// `__lsan_disable` and `__lsan_enable` (sanitizer/lsan_interface.h), when
/// the program has them.
struct Lsan {
    disable: unsafe extern "C" fn(),
    enable: unsafe extern "C" fn(),
}

fn lsan() -> Option<&'static Lsan> {
    static FOUND: OnceLock<Option<Lsan>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let find = |name: &std::ffi::CStr| {
                // SAFETY: dlsym with a NUL-terminated name.
                let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
                // SAFETY: both symbols, when present, take and return
                // nothing.
                (!f.is_null()).then(|| unsafe {
                    std::mem::transmute::<*mut c_void, unsafe extern "C" fn()>(f)
                })
            };
            Some(Lsan {
                disable: find(c"__lsan_disable")?,
                enable: find(c"__lsan_enable")?,
            })
        })
        .as_ref()
}

/// Whether a symbol of the program is defined.
fn defined(name: &std::ffi::CStr) -> bool {
    // SAFETY: dlsym with a NUL-terminated name.
    !unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }.is_null()
}

/// Whether this process may start a thread: not in a forked child under
/// ThreadSanitizer.
pub(crate) fn may_start_thread() -> bool {
    static UNDER_TSAN: OnceLock<bool> = OnceLock::new();
    // The process that started the first service thread: the parent of any
    // forked child.
    static FIRST_PID: OnceLock<u32> = OnceLock::new();
    *FIRST_PID.get_or_init(std::process::id) == std::process::id()
        || !*UNDER_TSAN.get_or_init(|| defined(c"__tsan_init"))
}

/// Runs `spawn`, which starts a thread that lives as long as the process,
/// with what it allocates on the calling thread for the new thread never
/// reported as a leak.
pub(crate) fn spawn_untracked<T>(spawn: impl FnOnce() -> T) -> T {
    let lsan = lsan();
    if let Some(l) = lsan {
        // SAFETY: LeakSanitizer's own calls, paired on this thread.
        unsafe { (l.disable)() };
    }
    let result = spawn();
    if let Some(l) = lsan {
        // SAFETY: as above.
        unsafe { (l.enable)() };
    }
    result
}

/// Makes LeakSanitizer ignore everything the calling thread allocates from
/// now on. Called first by each service thread: none of its memory is
/// reported, in particular not in a forked child, where the thread does not
/// exist.
pub(crate) fn untracked_thread() {
    if let Some(l) = lsan() {
        // SAFETY: LeakSanitizer's own call; left unpaired on purpose, the
        // thread stays untracked until it ends.
        unsafe { (l.disable)() };
    }
}

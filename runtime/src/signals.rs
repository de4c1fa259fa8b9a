//! Completing the trace when the program is killed by a signal the
//! `signals` option names: by default SIGTERM and SIGABRT.
//!
//! Why those two. A traced program must behave exactly as without perfflow,
//! and a handler is visible: a program that installs its own handler only
//! where the action is still the default (embedded CPython does so for
//! SIGINT, to raise `KeyboardInterrupt`) skips it when ours is there. So the
//! runtime takes only the signals that end a run without anyone asking
//! what their action is: SIGTERM, which a batch scheduler sends at the end
//! of the walltime (then SIGKILL) and `kill` sends by default; and SIGABRT,
//! which the program raises itself (`abort()`, a failed `assert`, an
//! uncaught C++ exception) and which ends it with the same signal and core
//! dump either way. SIGINT, SIGHUP and SIGQUIT belong to terminals and
//! interpreters; `signals=TERM,INT,HUP,QUIT,ABRT` takes them too, and
//! `signals=none` takes none. Without a handler, the periodic writes of the
//! trace keep all but the events of the last moments.
//!
//! Formatting and writing the trace allocates, which is not safe inside a
//! signal handler (the interrupted code may hold the allocator's lock). So
//! the handler only wakes a small watcher thread through a pipe, waits for it
//! to complete the trace (at most [`FLUSH_TIMEOUT_MS`], after which the trace
//! keeps whatever was already written: still readable as a truncated trace),
//! then restores the default action and raises the signal again, so the
//! process ends exactly as it would have without perfflow.
//!
//! Handlers are installed only for signals whose action is still the
//! default when tracing starts: a program's own handlers are left alone,
//! and a handler the program installs later replaces ours.
//!
//! The watcher thread runs whatever the signals (it also ends the process
//! when only perfflow's threads are left). It and every other thread of
//! the runtime block every signal (see [`spawn_service`]): the kernel
//! delivers a process-directed signal to a thread that does not block it,
//! and a runtime thread must never be that thread, or a program that
//! blocks a signal everywhere to read it from a `signalfd` would see it
//! taken by the default action or by our handler instead.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// How long a handler waits for the watcher to complete the trace.
pub const FLUSH_TIMEOUT_MS: libc::c_int = 3000;

/// Write end of the request pipe (handler → watcher), -1 when none.
static REQUEST: AtomicI32 = AtomicI32::new(-1);
/// Read end of the reply pipe (watcher → handler), -1 when none.
static REPLY: AtomicI32 = AtomicI32::new(-1);
/// Set by the first handler to run: later signals go straight to the
/// default action.
static HANDLING: AtomicBool = AtomicBool::new(false);
/// The process whose watcher the pipes lead to: a `vfork` child shares
/// this memory and those descriptors, and must not complete the parent's
/// trace.
static OWNER: AtomicI32 = AtomicI32::new(0);

/// Installs the handlers for `signals` (once per process) and starts the
/// watcher thread (again in a forked child, which has no threads but the
/// forking one).
pub fn install(signals: &[libc::c_int]) {
    if REQUEST.load(Ordering::Relaxed) >= 0 {
        return;
    }
    if let Err(e) = start_watcher() {
        let _ = writeln!(
            std::io::stderr(),
            "perfflow: cannot watch for fatal signals ({e}); a killed program keeps the events written so far"
        );
        return;
    }
    for &sig in signals {
        // SAFETY: querying and setting signal actions with valid pointers.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            if old.sa_sigaction != libc::SIG_DFL {
                continue; // the program's own handler, or ours already
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigfillset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// In a forked child: the watcher thread did not survive the fork; the
/// next [`install`] starts a new one. The handlers themselves stay.
pub fn after_fork() {
    for fd in [
        REQUEST.swap(-1, Ordering::Relaxed),
        REPLY.swap(-1, Ordering::Relaxed),
    ] {
        if fd >= 0 {
            // SAFETY: closing a descriptor this module opened.
            unsafe { libc::close(fd) };
        }
    }
    HANDLING.store(false, Ordering::Relaxed);
    if let Ok(mut tids) = SERVICE_TIDS.lock() {
        tids.clear();
    }
}

/// Every signal blocked on the calling thread until dropped, which restores
/// the thread's previous mask. Held around the runtime's cold paths that
/// take its locks on the program's threads, so a fatal signal's handler
/// never runs on a thread holding a lock the watcher needs to complete the
/// trace: the kernel delivers the signal to another thread, or here once
/// the locks are released.
pub(crate) struct Masked {
    old: libc::sigset_t,
}

impl Masked {
    pub(crate) fn all() -> Masked {
        // SAFETY: valid sets; pthread_sigmask cannot fail with SIG_BLOCK
        // and a valid set.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
            Masked { old }
        }
    }
}

impl Drop for Masked {
    fn drop(&mut self) {
        // SAFETY: restoring a mask read by `all` on the same thread.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
}

fn pipe() -> std::io::Result<[libc::c_int; 2]> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fds)
}

/// Kernel thread ids of perfflow's own threads (watcher, sampler): the only
/// threads that may be left when the watcher ends the process.
static SERVICE_TIDS: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// Starts one of perfflow's own threads: with every signal blocked (so
/// signals meant for the program never land on it), and registered as a
/// service thread.
pub(crate) fn spawn_service(
    name: &str,
    body: impl FnOnce() + Send + 'static,
) -> std::io::Result<()> {
    // Every signal blocked around the spawn: the new thread inherits the
    // mask, the caller gets its own back when `masked` is dropped.
    let masked = Masked::all();
    let spawned = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            if let Ok(mut tids) = SERVICE_TIDS.lock() {
                tids.push(crate::buffer::current_tid());
            }
            body();
        });
    drop(masked);
    spawned.map(|_| ())
}

fn start_watcher() -> std::io::Result<()> {
    let [request_read, request_write] = pipe()?;
    let [reply_read, reply_write] = pipe()?;
    spawn_service("perfflow-signal", move || watch(request_read, reply_write))?;
    // SAFETY: getpid has no preconditions.
    OWNER.store(unsafe { libc::getpid() }, Ordering::Relaxed);
    REPLY.store(reply_read, Ordering::Relaxed);
    REQUEST.store(request_write, Ordering::Release);
    Ok(())
}

/// The watcher: waits for a handler's request, completes the trace, replies.
///
/// It must never keep the process alive: when the main thread has called
/// `pthread_exit` and every other thread of the program has ended, glibc
/// would end the process with `exit(0)` — but this thread still exists. So
/// it checks every [`IDLE_CHECK_MS`] whether it is the last thread, and then
/// calls `exit(0)` itself, exactly as glibc would have.
fn watch(request: libc::c_int, reply: libc::c_int) {
    // Started with every signal blocked (see `spawn_service`): a
    // process-directed signal handled here would wait for this very thread.
    let mut byte = 0u8;
    loop {
        let mut fd = libc::pollfd {
            fd: request,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: polling one valid descriptor.
        let ready = unsafe { libc::poll(&mut fd, 1, IDLE_CHECK_MS) };
        if ready == 0 {
            if only_thread_left() {
                // SAFETY: ends the process as the last thread's exit would.
                unsafe { libc::exit(0) };
            }
            continue;
        }
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        // SAFETY: reading one byte into a valid buffer.
        let n = unsafe { libc::read(request, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            crate::buffer::finish();
            // SAFETY: writing one byte from a valid buffer.
            unsafe { libc::write(reply, (&byte as *const u8).cast(), 1) };
        } else if n == 0 {
            return;
        }
    }
}

/// How often the watcher checks whether it is the last thread left.
const IDLE_CHECK_MS: libc::c_int = 200;

/// True when no thread of the program is left, only perfflow's own
/// (registered by [`spawn_service`]). A main thread that called
/// `pthread_exit` stays listed as a zombie task until the process ends, so
/// tasks are judged by their state, not counted.
fn only_thread_left() -> bool {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return false;
    };
    let service = match SERVICE_TIDS.lock() {
        Ok(tids) => tids.clone(),
        Err(_) => return false,
    };
    for task in tasks.flatten() {
        let tid: Option<u32> = task.file_name().to_str().and_then(|t| t.parse().ok());
        if tid.is_some_and(|t| service.contains(&t)) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue; // ended meanwhile
        };
        // The state follows the command name, which is in parentheses and
        // may contain spaces and parentheses.
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next());
        if !matches!(state, Some("Z" | "X" | "x")) {
            return false;
        }
    }
    true
}

/// Only async-signal-safe calls here: getpid, write, poll, read, sigaction,
/// raise.
extern "C" fn handler(sig: libc::c_int) {
    // SAFETY: errno is thread-local; restored before returning.
    let errno = unsafe { *libc::__errno_location() };
    // SAFETY: getpid is async-signal-safe.
    let ours = unsafe { libc::getpid() } == OWNER.load(Ordering::Relaxed);
    if ours && !HANDLING.swap(true, Ordering::AcqRel) {
        let request = REQUEST.load(Ordering::Acquire);
        let reply = REPLY.load(Ordering::Relaxed);
        if request >= 0 && reply >= 0 {
            let byte = sig as u8;
            // SAFETY: async-signal-safe calls on descriptors this module owns.
            unsafe {
                if libc::write(request, (&byte as *const u8).cast(), 1) == 1 {
                    let mut fd = libc::pollfd {
                        fd: reply,
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    if libc::poll(&mut fd, 1, FLUSH_TIMEOUT_MS) == 1 {
                        let mut answer = 0u8;
                        libc::read(reply, (&mut answer as *mut u8).cast(), 1);
                    }
                }
            }
        }
    }
    // SAFETY: restoring the default action and raising again; the signal is
    // blocked inside this handler, so it is delivered on return.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(sig, &action, std::ptr::null_mut());
        libc::raise(sig);
        *libc::__errno_location() = errno;
    }
}

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

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicUsize, Ordering};

use crate::fd::{self, Shared};

/// How long a handler waits for the watcher to complete the trace.
pub const FLUSH_TIMEOUT_MS: libc::c_int = 3000;

/// Write end of the request pipe (handler → watcher).
static REQUEST: Shared = Shared::new();
/// Read end of the reply pipe (watcher → handler).
static REPLY: Shared = Shared::new();
/// The watcher's ends: read end of the request pipe, write end of the
/// reply pipe.
static WATCH_REQUEST: Shared = Shared::new();
static WATCH_REPLY: Shared = Shared::new();
/// Set while this process has a watcher thread.
static WATCHING: AtomicBool = AtomicBool::new(false);
/// Set by the first handler to run. A later signal (another thread's, while
/// the first handler waits) waits for [`HANDLED`], then takes the default
/// action: it would otherwise end the process in the middle of the trace's
/// completion (a launcher and the batch system both sending SIGTERM).
static HANDLING: AtomicBool = AtomicBool::new(false);
/// Set by the first handler once the trace is complete or its wait is over.
static HANDLED: AtomicBool = AtomicBool::new(false);
/// The signal whose handler asked the watcher to complete the trace; 0
/// before any.
static FATAL: AtomicI32 = AtomicI32::new(0);

/// The fatal signal that is ending the process, once its handler asked
/// for the trace to be completed.
pub(crate) fn fatal_signal() -> Option<libc::c_int> {
    Some(FATAL.load(Ordering::Relaxed)).filter(|&n| n != 0)
}

/// The `perfflow_signal` metadata of a trace completed because of a fatal
/// signal (`{"signal":15,"name":"TERM"}`): readers tell from it that the
/// process was killed, and the spans still open were cut short. `None`
/// when no fatal signal came.
pub(crate) fn fatal_signal_json() -> Option<String> {
    let number = fatal_signal()?;
    let name = crate::options::EndSignal::ALL
        .iter()
        .find(|s| s.number() == number)
        .map_or("", |s| s.name());
    Some(serde_json::json!({ "signal": number, "name": name }).to_string())
}

/// The process whose watcher the pipes lead to: a `vfork` child shares
/// this memory and those descriptors, and must not complete the parent's
/// trace.
static OWNER: AtomicI32 = AtomicI32::new(0);

/// Installs the handlers for `signals` (once per process) and starts the
/// watcher thread (again in a forked child, which has no threads but the
/// forking one).
pub fn install(signals: &[libc::c_int]) {
    if WATCHING.swap(true, Ordering::AcqRel) {
        return;
    }
    if let Err(e) = start_watcher() {
        WATCHING.store(false, Ordering::Release);
        if e.kind() == std::io::ErrorKind::Unsupported {
            return; // a forked child under ThreadSanitizer: said nothing
        }
        crate::shield::stderr_line(format_args!("perfflow: cannot watch for fatal signals ({e}); a killed program keeps the events written so far"
        ));
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
    close_pipes();
    WATCHING.store(false, Ordering::Release);
    HANDLING.store(false, Ordering::Relaxed);
    HANDLED.store(false, Ordering::Relaxed);
    FATAL.store(0, Ordering::Relaxed);
    for tid in &SERVICE_TIDS {
        tid.store(0, Ordering::Relaxed);
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

/// Opens both pipes at high numbers and publishes their ends.
fn open_pipes() -> std::io::Result<()> {
    let mut fds = [0; 4];
    // SAFETY: `fds` has room for two descriptors at each offset.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::pipe2(fds[2..].as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            let e = std::io::Error::last_os_error();
            libc::close(fds[0]);
            libc::close(fds[1]);
            return Err(e);
        }
    }
    let [request_read, request_write, reply_read, reply_write] = fds.map(fd::move_high);
    WATCH_REQUEST.publish(request_read);
    WATCH_REPLY.publish(reply_write);
    REPLY.publish(reply_read);
    REQUEST.publish(request_write);
    Ok(())
}

/// Unpublishes the pipes, closing the ends that are still ours.
fn close_pipes() {
    for end in [&REQUEST, &REPLY, &WATCH_REQUEST, &WATCH_REPLY] {
        end.close();
    }
}

/// Kernel thread ids of perfflow's own threads (watcher, sampler): the only
/// threads that may be left when the watcher ends the process; 0 marks a
/// free entry. Lock-free: the watcher reads them every [`IDLE_CHECK_MS`], and
/// a lock it held when another thread forks would stay held in the child.
static SERVICE_TIDS: [AtomicU32; 8] = [const { AtomicU32::new(0) }; 8];

/// Spawns of service threads under way, two counts each: one until the
/// spawning call has returned and freed what it allocated, one until the new
/// thread is through its start-up (the C library's and the sanitizers',
/// which allocate) and runs its own code. A fork waits for it to reach zero
/// ([`wait_for_spawns`]): some allocators (AddressSanitizer's before LLVM
/// 17) do not lock themselves across `fork`, and a child forked while a
/// thread of ours held one of their locks would hang.
static SPAWNING: AtomicUsize = AtomicUsize::new(0);

/// Set by a fork, with every lock of the runtime held, from its wait for
/// [`SPAWNING`] until just before it releases them; a spawn waits for it to
/// clear before it begins (at most [`SPAWN_WAIT`]).
static FORKING: AtomicBool = AtomicBool::new(false);

/// How long a fork waits for a service thread to start, and a spawn for a
/// fork to end: one that has not by then (a machine overloaded for seconds)
/// is no reason to hold the program up longer.
const SPAWN_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Called by the fork handler with every lock of the runtime held: waits
/// until no service thread is being started, and keeps new spawns from
/// beginning until [`fork_done`]. A spawn never holds a lock of the runtime
/// while it waits, so this cannot deadlock.
pub(crate) fn wait_for_spawns() {
    FORKING.store(true, Ordering::SeqCst);
    let start = std::time::Instant::now();
    while SPAWNING.load(Ordering::SeqCst) != 0 && start.elapsed() < SPAWN_WAIT {
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
}

/// The fork is over, in the parent or the child: spawns may begin. In the
/// child, a spawn that was under way does not exist.
pub(crate) fn fork_done(child: bool) {
    if child {
        SPAWNING.store(0, Ordering::SeqCst);
    }
    FORKING.store(false, Ordering::SeqCst);
}

/// Starts one of perfflow's own threads: with every signal blocked (so
/// signals meant for the program never land on it), and registered as a
/// service thread. Never while a fork is under way (see [`SPAWNING`]).
pub(crate) fn spawn_service(
    name: &str,
    body: impl FnOnce() + Send + 'static,
) -> std::io::Result<()> {
    if !crate::sanitizers::may_start_thread() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "ThreadSanitizer ends a forked child that starts a thread",
        ));
    }
    // Counted first, then checked: a fork either sees this spawn and waits
    // for it, or this spawn sees the fork and waits for its end.
    let start = std::time::Instant::now();
    loop {
        SPAWNING.fetch_add(2, Ordering::SeqCst);
        if !FORKING.load(Ordering::SeqCst) || start.elapsed() >= SPAWN_WAIT {
            break;
        }
        SPAWNING.fetch_sub(2, Ordering::SeqCst);
        while FORKING.load(Ordering::SeqCst) && start.elapsed() < SPAWN_WAIT {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }
    let spawned = {
        // Every signal blocked around the spawn: the new thread inherits
        // the mask, the caller gets its own back when `masked` is dropped.
        let masked = Masked::all();
        let builder = std::thread::Builder::new().name(name.into());
        let spawned = crate::sanitizers::spawn_untracked(|| {
            builder.spawn(move || {
                crate::sanitizers::untracked_thread();
                let tid = crate::buffer::current_tid();
                // With every entry taken (never, with three service
                // threads), the watcher just never ends the process early.
                let _ = SERVICE_TIDS.iter().find(|t| {
                    t.compare_exchange(0, tid, Ordering::Relaxed, Ordering::Relaxed)
                        .is_ok()
                });
                SPAWNING.fetch_sub(1, Ordering::SeqCst);
                body();
            })
        });
        drop(masked);
        // The handle is dropped (the thread detached) before the count.
        spawned.map(|_| ())
    };
    // A thread that was not created never runs to take its own count off.
    let counts = if spawned.is_ok() { 1 } else { 2 };
    SPAWNING.fetch_sub(counts, Ordering::SeqCst);
    spawned
}

fn start_watcher() -> std::io::Result<()> {
    // SAFETY: getpid has no preconditions.
    OWNER.store(unsafe { libc::getpid() }, Ordering::Relaxed);
    open_pipes()?;
    if let Err(e) = spawn_service("perfflow-signal", watch) {
        close_pipes();
        return Err(e);
    }
    Ok(())
}

/// The watcher: waits for a handler's request, completes the trace, replies.
///
/// It must never keep the process alive: when the main thread has called
/// `pthread_exit` and every other thread of the program has ended, glibc
/// would end the process with `exit(0)` — but this thread still exists. So
/// it checks every [`IDLE_CHECK_MS`] whether it is the last thread, and then
/// calls `exit(0)` itself, exactly as glibc would have.
fn watch() {
    // Started with every signal blocked (see `spawn_service`): a
    // process-directed signal handled here would wait for this very thread.
    let mut byte = 0u8;
    let mut renewals_failed = false;
    loop {
        // The program may have closed or replaced our ends (see
        // `crate::fd`): then they are opened anew, never read or written.
        let Some(request) = WATCH_REQUEST.get() else {
            match renew() {
                Ok(()) => continue,
                Err(e) => {
                    if !renewals_failed {
                        renewals_failed = true;
                        // Formatting the error allocates (see `only_thread_left`).
                        let _quiet = crate::buffer::service_quiet();
                        crate::shield::stderr_line(format_args!(
                            "perfflow: the program closed the signal watcher's pipes and new ones \
                             cannot be opened ({e}); a signal now ends the program without \
                             completing the trace"
                        ));
                    }
                    // Nothing to wait on: sleep as the poll would have.
                    // SAFETY: polling no descriptor is a plain sleep.
                    unsafe { libc::poll(std::ptr::null_mut(), 0, IDLE_CHECK_MS) };
                    if only_thread_left() {
                        // SAFETY: ends the process as the last thread's exit would.
                        unsafe { libc::exit(0) };
                    }
                    continue;
                }
            }
        };
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
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                WATCH_REQUEST.close();
            }
            continue;
        }
        // Closed or replaced while we polled: checked before reading.
        if WATCH_REQUEST.get() != Some(request) || fd.revents & libc::POLLNVAL != 0 {
            WATCH_REQUEST.close();
            continue;
        }
        // SAFETY: reading one byte into a valid buffer, from a descriptor
        // checked ours just above.
        let n = unsafe { libc::read(request, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            FATAL.store(i32::from(byte), Ordering::Relaxed);
            // Leaves a third of the handler's wait to write the end.
            crate::buffer::finish_within(std::time::Duration::from_millis(
                FLUSH_TIMEOUT_MS as u64 * 2 / 3,
            ));
            if let Some(reply) = WATCH_REPLY.get() {
                // SAFETY: writing one byte to a descriptor checked ours.
                unsafe { libc::write(reply, (&byte as *const u8).cast(), 1) };
            }
        } else if n == 0
            || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
        {
            // End of file (the handlers' end was closed) or an error: the
            // pipe is of no use any more.
            WATCH_REQUEST.close();
        }
    }
}

/// Replaces both pipes (the ends still ours are closed).
fn renew() -> std::io::Result<()> {
    close_pipes();
    open_pipes()
}

/// How often the watcher checks whether it is the last thread left.
const IDLE_CHECK_MS: libc::c_int = 200;

/// True when no thread of the program is left, only perfflow's own
/// (registered by [`spawn_service`]). A main thread that called
/// `pthread_exit` stays listed as a zombie task until the process ends, so
/// tasks are judged by their state, not counted.
///
/// The program may close or replace any descriptor meanwhile (a daemon's
/// `close_range`): the listing and each `stat` are read through a
/// descriptor moved to a high number and checked to be still ours, never
/// closed unless it is, and anything that cannot be read counts as a
/// thread of the program still running. Ending the process on a failed
/// read would end a program that is not done.
fn only_thread_left() -> bool {
    // Reading the task list allocates and frees: not while a fork is under
    // way (see `crate::buffer::service_quiet`). Declared first, released
    // after every other local here is freed.
    let _quiet = crate::buffer::service_quiet();
    let listing = read_kept(std::path::Path::new("/proc/self/task"), true);
    let Some(listing) = listing.ok().and_then(|records| task_ids(&records)) else {
        return false;
    };
    let service: Vec<u32> = SERVICE_TIDS
        .iter()
        .map(|t| t.load(Ordering::Relaxed))
        .filter(|&t| t != 0)
        .collect();
    for tid in listing {
        if service.contains(&tid) {
            continue;
        }
        let stat = match read_kept(format!("/proc/self/task/{tid}/stat").as_ref(), false) {
            Ok(stat) => stat,
            // Ended meanwhile: its directory is gone.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(_) => return false,
        };
        let stat = String::from_utf8_lossy(&stat);
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

/// Reads `path` (a directory's `getdents64` records when `dir`, else a
/// small file) through a descriptor at a high number that is checked to be
/// still ours before each read, and closed only if it is (see
/// [`crate::fd`]); an error when the program closed or replaced it.
fn read_kept(path: &std::path::Path, dir: bool) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let lost = || std::io::Error::from_raw_os_error(libc::EBADF);
    let kept = crate::fd::Kept::new(crate::fd::open_high(path)?).ok_or_else(lost)?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 8192];
    loop {
        let mut file = kept.get().ok_or_else(lost)?;
        let n = if dir {
            // SAFETY: a descriptor checked ours, a buffer of `buf.len()` bytes.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_getdents64,
                    file.as_raw_fd(),
                    buf.as_mut_ptr(),
                    buf.len(),
                )
            };
            usize::try_from(n).map_err(|_| std::io::Error::last_os_error())?
        } else {
            file.read(&mut buf)?
        };
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n]);
        if out.len() > 16 << 20 {
            return Err(std::io::Error::from_raw_os_error(libc::EFBIG));
        }
    }
}

/// The entries named by numbers among `getdents64` records; `None` when
/// they are malformed.
fn task_ids(records: &[u8]) -> Option<Vec<u32>> {
    // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1),
    // then the NUL-terminated name.
    let mut tids = Vec::new();
    let mut at = 0;
    while at + 19 <= records.len() {
        let reclen = usize::from(u16::from_ne_bytes([records[at + 16], records[at + 17]]));
        if reclen < 19 || at + reclen > records.len() {
            return None;
        }
        let name = &records[at + 19..at + reclen];
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        if let Some(tid) = std::str::from_utf8(name).ok().and_then(|t| t.parse().ok()) {
            tids.push(tid);
        }
        at += reclen;
    }
    Some(tids)
}

/// Only async-signal-safe calls here: getpid, fstat, write, poll, read,
/// sigaction, raise.
extern "C" fn handler(sig: libc::c_int) {
    // SAFETY: errno is thread-local; restored before returning.
    let errno = unsafe { *libc::__errno_location() };
    // SAFETY: getpid is async-signal-safe.
    let ours = unsafe { libc::getpid() } == OWNER.load(Ordering::Relaxed);
    if ours && HANDLING.swap(true, Ordering::AcqRel) {
        // Another thread's handler is completing the trace: wait for it,
        // as long as it may wait itself.
        let mut waited = 0;
        while !HANDLED.load(Ordering::Acquire) && waited < FLUSH_TIMEOUT_MS {
            // SAFETY: polling no descriptor is a plain sleep.
            unsafe { libc::poll(std::ptr::null_mut(), 0, 5) };
            waited += 5;
        }
    } else if ours {
        // Both ends checked ours (`fstat` is async-signal-safe): a pipe the
        // program closed or replaced is never written or read.
        if let (Some(request), Some(reply)) = (REQUEST.get(), REPLY.get()) {
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
        HANDLED.store(true, Ordering::Release);
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

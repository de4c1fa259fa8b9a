//! SIGINT and SIGTERM end the run cleanly: they are blocked in every
//! thread and taken by one thread in `sigwait`, which forwards them to the
//! followed command (if the monitor started one) and asks the sampling
//! loop to stop. The loop then writes its outputs as on any other end.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Why the sampling loop stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// A signal reached the monitor.
    Signal(i32),
    /// The job's processes are gone.
    JobEnded,
    /// The `.ipc-<jobid>` file says FINISHED.
    Finished,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Signal(s) => write!(f, "signal {s} received"),
            StopReason::JobEnded => f.write_str("the job's processes are gone"),
            StopReason::Finished => f.write_str("the IPC file says FINISHED"),
        }
    }
}

/// A stop request shared between the signal thread and the loop.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<(Mutex<Option<StopReason>>, Condvar)>);

impl Stop {
    /// Asks the loop to stop (the first reason is kept).
    pub fn request(&self, reason: StopReason) {
        let (m, c) = &*self.0;
        let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() {
            *g = Some(reason);
        }
        c.notify_all();
    }

    /// The reason, once a stop was requested.
    pub fn reason(&self) -> Option<StopReason> {
        self.0 .0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Waits up to `d` for a stop request; true if there is one.
    pub fn wait(&self, d: Duration) -> bool {
        let (m, c) = &*self.0;
        let g = m.lock().unwrap_or_else(|e| e.into_inner());
        let (g, _) = c
            .wait_timeout_while(g, d, |r| r.is_none())
            .unwrap_or_else(|e| e.into_inner());
        g.is_some()
    }
}

fn signal_set() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set it is given; sigaddset only
    // adds valid signal numbers to it.
    unsafe {
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        set
    }
}

/// Unblocks SIGINT and SIGTERM in the calling thread; for a child between
/// fork and exec, which otherwise inherits the blocked mask (a command
/// that could not be stopped by `timeout` or `kill`).
pub fn unblock() -> std::io::Result<()> {
    let set = signal_set();
    // SAFETY: `set` is a valid signal set; pthread_sigmask is
    // async-signal-safe, so it may run between fork and exec.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Blocks SIGINT and SIGTERM in the calling thread (and so in every thread
/// started after) and starts the thread that takes them. Call it before
/// starting any other thread. `child` holds the pid to forward signals to
/// (0: none).
pub fn install(stop: Stop, child: Arc<AtomicI32>) -> std::io::Result<()> {
    let set = signal_set();
    // SAFETY: `set` is a valid signal set; a null old set is allowed.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    std::thread::Builder::new()
        .name("perfflow-monitor-signals".into())
        .spawn(move || loop {
            let mut sig: libc::c_int = 0;
            // SAFETY: `set` is valid and `sig` is writable.
            let rc = unsafe { libc::sigwait(&set, &mut sig) };
            if rc != 0 {
                continue;
            }
            let pid = child.load(Ordering::SeqCst);
            if pid > 0 {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(pid, sig) };
            }
            stop.request(StopReason::Signal(sig));
        })?;
    Ok(())
}

//! Readings for `cpu-mem-usage=True`: the calling thread's CPU time and the
//! process's current resident set size.
//!
//! Both are read by the recording thread, next to the timestamp of an
//! `around` enter or exit, and stored in a payload record after the event
//! (see [`crate::event`]). The decoder turns them into the counter events of
//! the region when it ends.
//!
//! Cost: the thread CPU clock is a system call (`clock_gettime` with
//! `CLOCK_THREAD_CPUTIME_ID`; the vDSO serves only the wall clocks), and the
//! resident set size is one `pread` of `/proc/self/statm` through a file
//! descriptor opened once. Threads share that descriptor; the kernel
//! serialises reads of one `/proc` file, so threads that leave regions at
//! the same moment wait briefly for each other.
//!
//! Parsing is separate from reading: [`parse_statm_resident_pages`] and
//! [`cpu_percent`] never touch a file.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

/// CPU time consumed by the calling thread, in nanoseconds.
#[inline]
pub fn thread_cpu_ns() -> u64 {
    crate::clock::read(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The resident set size in pages: the second field of `/proc/<pid>/statm`
/// (`size resident shared text lib data dt`). `None` when the text does not
/// have one.
pub fn parse_statm_resident_pages(text: &[u8]) -> Option<u64> {
    let field = text
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
        .nth(1)?;
    std::str::from_utf8(field).ok()?.parse().ok()
}

/// CPU usage of a region in percent: CPU time spent by its thread over the
/// wall time it lasted. 0 for a region that lasted no time.
pub fn cpu_percent(cpu_ns: u64, wall_ns: u64) -> f64 {
    if wall_ns == 0 {
        0.0
    } else {
        cpu_ns as f64 / wall_ns as f64 * 100.0
    }
}

/// `/proc/self/statm` opened for reading, [`UNOPENED`] before the first
/// reading, or [`UNAVAILABLE`] when it cannot be opened.
static STATM_FD: AtomicI32 = AtomicI32::new(UNOPENED);
const UNOPENED: i32 = -1;
const UNAVAILABLE: i32 = -2;

/// Page size in bytes, stored before the descriptor is published.
static PAGE_BYTES: AtomicU64 = AtomicU64::new(4096);

/// The process's current resident set size in KiB, 0 when it cannot be read.
#[inline]
pub fn resident_kib() -> u64 {
    let mut fd = STATM_FD.load(Ordering::Acquire);
    if fd == UNOPENED {
        fd = open_statm();
    }
    if fd < 0 {
        return 0;
    }
    let mut buf = [0u8; 128];
    // SAFETY: `buf` is writable for its full length; a descriptor closed by
    // the program makes the call fail, which reads as 0.
    let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n <= 0 {
        return 0;
    }
    let pages = parse_statm_resident_pages(&buf[..n as usize]).unwrap_or(0);
    pages.saturating_mul(PAGE_BYTES.load(Ordering::Relaxed)) / 1024
}

/// Opens `/proc/self/statm` once per process; threads racing here keep the
/// first descriptor published and close their own.
#[cold]
#[inline(never)]
fn open_statm() -> i32 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if page > 0 {
        PAGE_BYTES.store(page as u64, Ordering::Relaxed);
    }
    // SAFETY: the path is a NUL-terminated constant.
    let fd = unsafe {
        libc::open(
            c"/proc/self/statm".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    let fd = if fd >= 0 {
        fd
    } else {
        report_unavailable();
        UNAVAILABLE
    };
    match STATM_FD.compare_exchange(UNOPENED, fd, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => fd,
        Err(published) => {
            if fd >= 0 {
                // SAFETY: `fd` was opened above and never shared.
                unsafe { libc::close(fd) };
            }
            published
        }
    }
}

fn report_unavailable() {
    static REPORTED: AtomicBool = AtomicBool::new(false);
    if !REPORTED.swap(true, Ordering::Relaxed) {
        let _ = writeln!(
            std::io::stderr(),
            "perfflow: /proc/self/statm is unavailable; cpu-mem-usage writes memory_usage as 0"
        );
    }
}

/// In a forked child: the inherited descriptor still reads the parent's
/// `statm`, so it is closed and the child's own is opened on its next
/// reading. Call from the `pthread_atfork` child handler (only the forking
/// thread exists there; `close` is async-signal-safe).
pub(crate) fn after_fork() {
    let fd = STATM_FD.swap(UNOPENED, Ordering::AcqRel);
    if fd >= 0 {
        // SAFETY: the descriptor was opened by `open_statm` and is no longer
        // published, so nothing reads it any more.
        unsafe { libc::close(fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statm_resident_field_is_the_second_number() {
        assert_eq!(
            parse_statm_resident_pages(b"11234 2868 1919 5 0 1067 0\n"),
            Some(2868)
        );
    }

    #[test]
    fn statm_without_a_second_number_reads_as_none() {
        assert_eq!(parse_statm_resident_pages(b"11234\n"), None);
        assert_eq!(parse_statm_resident_pages(b""), None);
        assert_eq!(parse_statm_resident_pages(b"1 x 3"), None);
    }

    #[test]
    fn cpu_percent_is_cpu_time_over_wall_time() {
        assert_eq!(cpu_percent(500, 1000), 50.0);
        assert_eq!(cpu_percent(0, 1000), 0.0);
        assert_eq!(cpu_percent(10, 0), 0.0);
    }

    #[test]
    fn resident_size_of_this_process_is_read_from_proc() {
        let kib = resident_kib();
        assert!(kib > 0, "resident size {kib} KiB");
        after_fork();
        assert!(resident_kib() > 0, "read again after reopening");
    }

    #[test]
    fn thread_cpu_time_advances_while_the_thread_spins() {
        // Spin until the thread's CPU clock has moved by 5 ms. How much wall
        // time that takes depends on the machine's load, so the wall clock
        // only bounds the wait; the assertion is on the CPU clock alone.
        let start = thread_cpu_ns();
        let wall = std::time::Instant::now();
        let mut now = start;
        while now - start < 5_000_000 && wall.elapsed() < std::time::Duration::from_secs(120) {
            std::hint::black_box(now);
            now = thread_cpu_ns();
        }
        assert!(
            now - start >= 5_000_000,
            "CPU time moved {} ns",
            now - start
        );
    }
}

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
//! descriptor opened once, after one `fstat` that checks the program has
//! not closed or replaced it. Threads share that descriptor; the kernel
//! serialises reads of one `/proc` file, so threads that leave regions at
//! the same moment wait briefly for each other.
//!
//! Parsing is separate from reading: [`parse_statm_resident_pages`] and
//! [`cpu_percent`] never touch a file.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::fd::Shared;

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

/// `/proc/self/statm` opened for reading, kept at a high number and
/// checked ours before each read (see [`crate::fd`]): a program that
/// closes it or puts a file of its own under its number is never read.
static STATM: Shared = Shared::new();
/// Set when `/proc/self/statm` cannot be opened.
static UNAVAILABLE: AtomicBool = AtomicBool::new(false);

/// Page size in bytes, stored before the descriptor is published.
static PAGE_BYTES: AtomicU64 = AtomicU64::new(4096);

/// The process's current resident set size in KiB, 0 when it cannot be read.
#[inline]
pub fn resident_kib() -> u64 {
    let Some(fd) = STATM.get().or_else(open_statm) else {
        return 0;
    };
    let mut buf = [0u8; 128];
    // SAFETY: `buf` is writable for its full length; `fd` was checked ours
    // just above.
    let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n <= 0 {
        return 0;
    }
    let pages = parse_statm_resident_pages(&buf[..n as usize]).unwrap_or(0);
    pages.saturating_mul(PAGE_BYTES.load(Ordering::Relaxed)) / 1024
}

/// Opens `/proc/self/statm`: on first use, and again when the program has
/// closed or replaced the descriptor. Threads racing here keep the first
/// descriptor published and close their own.
#[cold]
#[inline(never)]
fn open_statm() -> Option<libc::c_int> {
    if UNAVAILABLE.load(Ordering::Relaxed) {
        return None;
    }
    let seen = STATM.word();
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
    if fd < 0 {
        UNAVAILABLE.store(true, Ordering::Relaxed);
        report_unavailable();
        return None;
    }
    let fd = crate::fd::move_high(fd);
    if STATM.publish_over(seen, fd) {
        Some(fd)
    } else {
        STATM.get()
    }
}

fn report_unavailable() {
    static REPORTED: AtomicBool = AtomicBool::new(false);
    if !REPORTED.swap(true, Ordering::Relaxed) {
        crate::shield::stderr_line(format_args!(
            "perfflow: /proc/self/statm is unavailable; cpu-mem-usage writes memory_usage as 0"
        ));
    }
}

/// In a forked child: the inherited descriptor still reads the parent's
/// `statm`, so it is closed and the child's own is opened on its next
/// reading. Call from the `pthread_atfork` child handler (only the forking
/// thread exists there; `close` is async-signal-safe).
pub(crate) fn after_fork() {
    STATM.close();
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

        // The program puts a file of its own under the descriptor's number:
        // a file that would read as 1e9 resident pages. It is never read.
        let fd = STATM.get().expect("statm open");
        let path = std::env::temp_dir().join(format!("perfflow-statm-{}", std::process::id()));
        std::fs::write(&path, "1 1000000000 0 0 0 0 0\n").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: the test stands in for the program, replacing the number.
        unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&file), fd) };
        let kib = resident_kib();
        assert!(kib > 0 && kib < 1_000_000_000, "resident size {kib} KiB");
        assert!(
            crate::fd::identity(fd).is_some(),
            "the program's file is left open"
        );
        // SAFETY: the test's own copy.
        unsafe { libc::close(fd) };
        assert!(resident_kib() > 0, "read after the program closed it");
        std::fs::remove_file(&path).unwrap();
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

//! Child processes doing known work, for tests on the real `/proc`.
//!
//! A test binary re-executes itself with `PERFFLOW_MONITOR_WORKLOAD` naming
//! a workload and the name of its entry test (which calls
//! [`run_workload_if_requested`]) as the test filter. The child prints
//! `ready <pid> <descendant pids...>` once its work is in place, then holds
//! still until its stdin closes, and closes its own children's stdin before
//! exiting, so dropping a [`Workload`] takes the whole tree down.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

const WORKLOAD: &str = "PERFFLOW_MONITOR_WORKLOAD";
const ENTRY: &str = "PERFFLOW_MONITOR_WORKLOAD_ENTRY";

/// A running workload process and its descendants.
pub struct Workload {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The workload's pid, then its descendants' pids.
    pub pids: Vec<i32>,
    /// Lines the workload printed after `ready`.
    lines: Receiver<String>,
}

impl Workload {
    /// The workload process's pid.
    pub fn pid(&self) -> i32 {
        self.pids[0]
    }

    /// Sends `request` as one line to the workload's stdin and returns the
    /// rest of the first line it prints that starts with `reply`.
    pub fn ask(&mut self, request: &str, reply: &str) -> String {
        let stdin = self.stdin.as_mut().expect("workload stdin is open");
        writeln!(stdin, "{request}").expect("write to the workload");
        stdin.flush().expect("flush the workload's stdin");
        loop {
            let line = self
                .lines
                .recv()
                .unwrap_or_else(|_| panic!("workload exited before answering `{request}`"));
            if let Some(rest) = line.strip_prefix(reply) {
                return rest.trim().to_string();
            }
        }
    }

    /// Closes the workload's stdin and waits for it to exit.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => break,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts `workload` in a re-executed copy of this test binary whose entry
/// test is `entry`, and waits until it reports ready.
pub fn spawn(entry: &str, workload: &str) -> Workload {
    let exe = std::env::current_exe().expect("test binary path");
    let mut child = Command::new(exe)
        .args([entry, "--exact", "--nocapture", "--test-threads=1", "-q"])
        .env(WORKLOAD, workload)
        .env(ENTRY, entry)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn workload");
    let stdin = child.stdin.take();
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let pids = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(rest) = line.strip_prefix("ready ") {
                    break rest
                        .split_ascii_whitespace()
                        .map(|p| p.parse().expect("pid"))
                        .collect::<Vec<i32>>();
                }
            }
            _ => panic!("workload `{workload}` exited before it was ready"),
        }
    };
    // Keep draining stdout so the child never blocks on a full pipe.
    let (send, receive) = channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    Workload {
        child,
        stdin,
        pids,
        lines: receive,
    }
}

fn wait_for_stdin_eof() {
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
}

fn ready(pids: &[i32]) {
    let list: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
    println!("ready {}", list.join(" "));
    let _ = std::io::stdout().flush();
}

/// CPU time the calling thread has used, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write into.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Spins until the calling thread has used `ns` more nanoseconds of CPU
/// time, however long that takes on a loaded machine; returns the CPU time
/// used.
pub fn burn_cpu(ns: u64) -> u64 {
    let start = thread_cpu_ns();
    let mut x = 0u64;
    loop {
        let used = thread_cpu_ns() - start;
        if used >= ns {
            std::hint::black_box(x);
            return used;
        }
        for _ in 0..10_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
    }
}

/// Maps `pages` fresh anonymous pages without huge pages and writes to
/// each, so each takes exactly one user-mode page fault.
pub fn fault_pages(pages: usize) {
    let page = 4096;
    let len = pages * page;
    if len == 0 {
        return;
    }
    // SAFETY: a fresh private anonymous mapping, written within its bounds
    // and unmapped before returning.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert_ne!(p, libc::MAP_FAILED, "mmap");
        assert_eq!(libc::madvise(p, len, libc::MADV_NOHUGEPAGE), 0, "madvise");
        for i in 0..pages {
            std::ptr::write_volatile((p as *mut u8).add(i * page), 1);
        }
        libc::munmap(p, len);
    }
}

fn spin_thread(stop: Arc<AtomicBool>, fault: bool) {
    std::thread::spawn(move || {
        let mut x = 0u64;
        let mut last = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            std::hint::black_box(x);
            if fault && last.elapsed() > Duration::from_millis(50) {
                // 64 MiB is above glibc's largest mmap threshold, so every
                // round maps fresh pages and faults them in.
                let mut v = vec![0u8; 64 << 20];
                for i in (0..v.len()).step_by(4096) {
                    v[i] = 1;
                }
                std::hint::black_box(&v);
                last = Instant::now();
            }
        }
    });
}

/// CPU time (user + system) of the calling process (`RUSAGE_SELF`) or of
/// its reaped children (`RUSAGE_CHILDREN`), in nanoseconds.
pub fn rusage_cpu_ns(who: libc::c_int) -> u64 {
    // SAFETY: an all-zero rusage is a valid value to overwrite.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `r` is a valid rusage to write into.
    let rc = unsafe { libc::getrusage(who, &mut r) };
    assert_eq!(rc, 0, "getrusage");
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    ns(r.ru_utime) + ns(r.ru_stime)
}

/// Writes `bytes` zero bytes to `/dev/null`.
fn write_null(bytes: usize) {
    let mut null = std::fs::File::create("/dev/null").expect("open /dev/null");
    let chunk = vec![0u8; 64 << 10];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len());
        null.write_all(&chunk[..n]).expect("write /dev/null");
        left -= n;
    }
}

/// Runs one short task, a copy of this binary that uses `ms` of CPU time,
/// writes `bytes` to `/dev/null` and exits, and waits for it.
fn run_task(entry: &str, ms: u64, bytes: u64) {
    let exe = std::env::current_exe().expect("test binary path");
    let status = Command::new(exe)
        .args([entry, "--exact", "--nocapture", "--test-threads=1", "-q"])
        .env(WORKLOAD, format!("task:{ms}:{bytes}"))
        .env(ENTRY, entry)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("run a task");
    assert!(status.success(), "task failed: {status}");
}

/// Runs the workload named in the environment and exits, if there is one;
/// otherwise returns at once.
pub fn run_workload_if_requested() {
    let Ok(workload) = std::env::var(WORKLOAD) else {
        return;
    };
    let entry = std::env::var(ENTRY).unwrap_or_default();
    let me = std::process::id() as i32;
    let (kind, arg) = workload.split_once(':').unwrap_or((&workload, ""));
    let stop = Arc::new(AtomicBool::new(false));
    let mut children = Vec::new();
    match kind {
        "task" => {
            let (ms, bytes) = arg.split_once(':').unwrap_or((arg, "0"));
            burn_cpu(ms.parse::<u64>().unwrap_or(50) * 1_000_000);
            write_null(bytes.parse().unwrap_or(0));
            std::process::exit(0);
        }
        "tasks" => {
            // On each request `<n> <ms> [<bytes>]`: runs n tasks of `ms`
            // CPU time each, writing `bytes` each, one after the other,
            // then answers `tasks <CPU ns of the reaped tasks> <own CPU
            // ns>` from getrusage and `<wchar>` of its own /proc/self/io.
            ready(&[me]);
            for line in std::io::stdin().lines().map_while(Result::ok) {
                let mut words = line.split_ascii_whitespace().map(|w| w.parse().unwrap());
                let (n, ms) = (words.next().unwrap_or(0), words.next().unwrap_or(0));
                let bytes = words.next().unwrap_or(0);
                for _ in 0..n {
                    run_task(&entry, ms, bytes);
                }
                let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
                let wchar = io
                    .lines()
                    .find_map(|l| l.strip_prefix("wchar: "))
                    .unwrap_or("0")
                    .to_string();
                println!(
                    "tasks {} {} {wchar}",
                    rusage_cpu_ns(libc::RUSAGE_CHILDREN),
                    rusage_cpu_ns(libc::RUSAGE_SELF)
                );
                let _ = std::io::stdout().flush();
            }
            std::process::exit(0);
        }
        "writer" => {
            // Writes `arg` bytes to /dev/null, then holds still.
            write_null(arg.parse().unwrap_or(0));
            ready(&[me]);
        }
        "reaper" => {
            // A `writer:<arg>` child; on the request `reap` it is ended
            // and reaped, and the answer is `reaped <own wchar>`.
            let c = spawn(&entry, &format!("writer:{arg}"));
            let mut all = vec![me];
            all.extend(&c.pids);
            ready(&all);
            let mut child = Some(c);
            for line in std::io::stdin().lines().map_while(Result::ok) {
                if line.trim() == "reap" {
                    if let Some(c) = child.take() {
                        c.finish();
                    }
                    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
                    let wchar = io.lines().find_map(|l| l.strip_prefix("wchar: "));
                    println!("reaped {}", wchar.unwrap_or("0"));
                    let _ = std::io::stdout().flush();
                }
            }
            std::process::exit(0);
        }
        "idle" => ready(&[me]),
        "alloc" => {
            let mib: usize = arg.parse().unwrap_or(256);
            let mut v = vec![0u8; mib << 20];
            for i in (0..v.len()).step_by(4096) {
                v[i] = 1;
            }
            std::hint::black_box(&v);
            ready(&[me]);
            wait_for_stdin_eof();
            drop(v);
            std::process::exit(0);
        }
        "write" => {
            let mut f = std::fs::File::create(arg).expect("create output file");
            let chunk = vec![7u8; 1 << 20];
            for _ in 0..64 {
                f.write_all(&chunk).expect("write");
            }
            f.sync_all().expect("fsync");
            ready(&[me]);
        }
        "spin" => {
            spin_thread(stop.clone(), false);
            ready(&[me]);
        }
        "busy" => {
            spin_thread(stop.clone(), true);
            ready(&[me]);
        }
        "burn" => {
            // On each request `<ms> <pages>`: uses that much CPU time and
            // faults that many pages, then answers `burnt <cpu ns>`.
            ready(&[me]);
            for line in std::io::stdin().lines().map_while(Result::ok) {
                let mut words = line.split_ascii_whitespace().map(|w| w.parse().unwrap());
                let (ms, pages) = (words.next().unwrap_or(0), words.next().unwrap_or(0));
                let used = burn_cpu(ms * 1_000_000);
                fault_pages(pages as usize);
                println!("burnt {used}");
                let _ = std::io::stdout().flush();
            }
            std::process::exit(0);
        }
        "tree" => {
            // Three idle children and one child with an idle child of its
            // own: five descendants on two levels.
            let mut all = vec![me];
            for w in ["idle", "idle", "idle", "subtree"] {
                let c = spawn(&entry, w);
                all.extend(&c.pids);
                children.push(c);
            }
            ready(&all);
        }
        "subtree" => {
            let c = spawn(&entry, "idle");
            let mut all = vec![me];
            all.extend(&c.pids);
            children.push(c);
            ready(&all);
        }
        other => panic!("unknown workload `{other}`"),
    }
    wait_for_stdin_eof();
    stop.store(true, Ordering::Relaxed);
    for c in children {
        c.finish();
    }
    std::process::exit(0);
}

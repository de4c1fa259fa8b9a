//! Measures the CPU use of the `perfflow-monitor` command itself while it
//! follows a job tree of 50 `sleep` processes under one `sh`, at 1 s and
//! at 100 ms sampling with every source. The monitor's user + system time
//! comes from `/proc/<pid>/stat`, read after a warm-up and again after the
//! measured window; it is printed as a percentage of one core over the
//! window's wall time.
//!
//! ```sh
//! cargo build --release -p perfflow-monitor --bins --examples
//! target/release/examples/monitor_cost [SECONDS]
//! ```
//!
//! The monitor binary is taken from beside the example's directory
//! (`target/<profile>/perfflow-monitor`), or from `PERFFLOW_MONITOR_BIN`.
//! `SECONDS` is the measured window (default 20). Figures only; nothing
//! here fails on time.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CHILDREN: usize = 50;
const WARM_UP: Duration = Duration::from_secs(3);

fn monitor_binary() -> PathBuf {
    if let Ok(p) = std::env::var("PERFFLOW_MONITOR_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("the example's own path");
    exe.parent()
        .and_then(|examples| examples.parent())
        .map(|profile| profile.join("perfflow-monitor"))
        .expect("target/<profile>/perfflow-monitor")
}

/// user + system clock ticks of `pid`.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of stat; `after` starts at field 3.
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

fn count_children(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .map(|t| t.split_whitespace().count())
        .unwrap_or(0)
}

fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cpus} CPUs, {model}")
}

fn measure(bin: &PathBuf, job: &Child, interval: &str, window: Duration) -> (f64, usize) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut mon = Command::new(bin)
        .args(["-i", interval, "--host-name", "bench", "--pid"])
        .arg(job.id().to_string())
        .arg("-d")
        .arg(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start perfflow-monitor");
    std::thread::sleep(WARM_UP);
    let t0 = Instant::now();
    let c0 = cpu_ticks(mon.id()).expect("the monitor's stat");
    std::thread::sleep(window);
    let c1 = cpu_ticks(mon.id()).expect("the monitor's stat");
    let wall = t0.elapsed().as_secs_f64();
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(mon.id() as i32, libc::SIGTERM) };
    let _ = mon.wait();
    let rows = std::fs::read_to_string(dir.path().join("metrics/.nodes/bench.jsonl"))
        .map(|t| {
            t.lines()
                .filter(|l| l.contains("\"f\":\"cpu\",\"h\""))
                .count()
        })
        .unwrap_or(0);
    let percent = 100.0 * (c1 - c0) as f64 / ticks_per_second() / wall;
    (percent, rows)
}

fn main() {
    let window = std::env::args()
        .nth(1)
        .and_then(|s| s.parse::<f64>().ok())
        .map_or(Duration::from_secs(20), Duration::from_secs_f64);
    let bin = monitor_binary();
    assert!(bin.is_file(), "no monitor binary at {}", bin.display());
    let mut job = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "for i in $(seq {CHILDREN}); do sleep 1000 & done; wait"
        ))
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start the job tree");
    let deadline = Instant::now() + Duration::from_secs(10);
    while count_children(job.id()) < CHILDREN && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    println!("machine: {}", machine());
    println!(
        "job: sh + {} sleep processes; window {:.0} s after {:.0} s warm-up; monitor {}",
        count_children(job.id()),
        window.as_secs_f64(),
        WARM_UP.as_secs_f64(),
        bin.display()
    );
    println!("| sampling | monitor CPU (% of one core) | samples written |");
    println!("|---|---|---|");
    for interval in ["1s", "100ms"] {
        let (percent, rows) = measure(&bin, &job, interval, window);
        println!("| {interval} | {percent:.2} | {rows} |");
    }
    // SAFETY: kill has no memory-safety preconditions; the job runs in
    // its own process group.
    unsafe { libc::kill(-(job.id() as i32), libc::SIGKILL) };
    let _ = job.wait();
}

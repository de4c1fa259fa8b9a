//! Measures the CPU cost of sampling: spawns a tree of 50 `sleep`
//! processes under one `sh`, then takes 100 samples (5 rounds of 20; the
//! median round counts) with every available source and with each source
//! alone, and prints the CPU time per sample (user + system, from
//! `getrusage(RUSAGE_SELF)`, so helper threads count too) and what that
//! costs at 10 samples per second.
//!
//! The process source reads some files only at detail refreshes (at most
//! once per second by default). Samples here are taken back to back, so
//! each row is measured twice, with details refreshed at every sample and
//! never, and the cost at 10 Hz with the default interval is computed from
//! the two.
//!
//! A last row samples as `perfflow-monitor` does at 100 ms: 50 samples
//! 100 ms apart, with the `children` files and idle processes read at
//! most every second, perf counters and `io` files every second, and the
//! detail files every 5 s.
//!
//! ```sh
//! cargo run --release -p perfflow-monitor --example sample_cost
//! ```
//!
//! Figures only; nothing here fails on time.

use perfflow_monitor::{ProcessDetail, Sampler, SamplerConfig, Source};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILDREN: usize = 50;
const SAMPLES: u32 = 100;
/// Samples are timed in rounds; each figure is the median round.
const ROUNDS: u32 = 5;

fn cpu_time() -> Duration {
    // SAFETY: rusage is plain data filled in by getrusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

struct Cost {
    cpu_us: f64,
    wall_us: f64,
    tracks: usize,
}

fn measure(config: SamplerConfig) -> Result<Cost, String> {
    let mut s = Sampler::new(config);
    if s.available().is_empty() {
        let why: Vec<String> = s.unavailable().iter().map(|u| u.reason.clone()).collect();
        return Err(why.join("; "));
    }
    s.sample(); // warm-up: first sample, descriptors, allocations
    let mut tracks = 0;
    let mut cpu = Vec::new();
    let mut wall = Vec::new();
    for _ in 0..ROUNDS {
        let (c0, w0) = (cpu_time(), Instant::now());
        for _ in 0..SAMPLES / ROUNDS {
            tracks = s.sample().tracks().len();
        }
        let n = f64::from(SAMPLES / ROUNDS);
        cpu.push((cpu_time() - c0).as_secs_f64() * 1e6 / n);
        wall.push(w0.elapsed().as_secs_f64() * 1e6 / n);
    }
    Ok(Cost {
        cpu_us: median(cpu),
        wall_us: median(wall),
        tracks,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn with_interval(mut c: SamplerConfig, interval: Duration) -> SamplerConfig {
    c.process_detail.detail_interval = interval;
    c
}

/// One row: the cost with details refreshed at every sample, with details
/// never refreshed (after the first sample), and what the default (details
/// every 1 s) costs at 10 samples per second: the second plus a tenth of
/// the difference.
fn row(label: &str, config: SamplerConfig) {
    let every = measure(with_interval(config.clone(), Duration::ZERO));
    let never = measure(with_interval(config, Duration::from_secs(3600)));
    match (every, never) {
        (Ok(e), Ok(n)) => {
            let at_10hz = n.cpu_us + (e.cpu_us - n.cpu_us).max(0.0) / 10.0;
            // At 10 Hz, cpu_us per sample is cpu_us * 10 per second of one core.
            println!(
                "| {label:<38} | {:>9.1} | {:>9.1} | {:>9.1} | {:>7.2}% | {:>9.1} | {:>6} |",
                e.cpu_us,
                n.cpu_us,
                at_10hz,
                at_10hz * 10.0 / 1e6 * 100.0,
                e.wall_us,
                e.tracks
            )
        }
        (Err(why), _) | (_, Err(why)) => println!("| {label:<38} | unavailable: {why}"),
    }
}

/// CPU time per sample of `PACED` samples `PACE` apart, the way the
/// monitor samples at 10 Hz.
fn paced(label: &str, config: SamplerConfig) {
    const PACED: u32 = 50;
    const PACE: Duration = Duration::from_millis(100);
    let mut s = Sampler::new(config);
    s.sample();
    let mut tracks = 0;
    let c0 = cpu_time();
    let mut next = Instant::now();
    for _ in 0..PACED {
        next += PACE;
        if let Some(d) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
        tracks = s.sample().tracks().len();
    }
    let cpu_us = (cpu_time() - c0).as_secs_f64() * 1e6 / f64::from(PACED);
    println!(
        "| {label:<38} | {:>9} | {:>9} | {cpu_us:>9.1} | {:>7.2}% | {:>9} | {tracks:>6} |",
        "-",
        "-",
        cpu_us * 10.0 / 1e6 * 100.0,
        "-"
    );
}

fn main() {
    let mut tree = match Command::new("sh")
        .arg("-c")
        .arg(format!(
            "for i in $(seq {CHILDREN}); do sleep 1000 & done; wait"
        ))
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sample_cost: cannot start sh: {e}");
            std::process::exit(1);
        }
    };
    let root = tree.id() as i32;
    let children = format!("/proc/{root}/task/{root}/children");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&children)
        .map(|t| t.split_ascii_whitespace().count())
        .unwrap_or(0)
        < CHILDREN
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }

    let base = SamplerConfig {
        root_pid: root,
        ..SamplerConfig::default()
    };
    println!("process tree: sh (pid {root}) + {CHILDREN} sleep children; {SAMPLES} samples per figure, median of {ROUNDS} rounds");
    println!();
    println!(
        "CPU us per sample: details refreshed every sample | never | default 1 s interval at 10 Hz"
    );
    println!();
    println!("| sources                                | every     | never     | 1 s@10 Hz | 10 Hz CPU | wall us   | tracks |");
    println!("|----------------------------------------|-----------|-----------|-----------|-----------|-----------|--------|");
    row("all available", base.clone());
    for src in Source::ALL {
        row(
            src.name(),
            SamplerConfig {
                sources: vec![src],
                ..base.clone()
            },
        );
    }
    let proc_only = |io, uss, fds| SamplerConfig {
        sources: vec![Source::Proc],
        process_detail: ProcessDetail {
            io,
            uss,
            fds,
            ..ProcessDetail::default()
        },
        ..base.clone()
    };
    row(
        "proc: stat + children (+ status)",
        proc_only(false, false, false),
    );
    row("proc: + io", proc_only(true, false, false));
    row("proc: + io, fd count", proc_only(true, false, true));
    row(
        "proc: + io, fd count, smaps_rollup",
        proc_only(true, true, true),
    );
    let no_kept_files = SamplerConfig {
        sources: vec![Source::Proc],
        process_detail: ProcessDetail {
            max_open_files: 0,
            ..ProcessDetail::default()
        },
        ..base.clone()
    };
    row("proc: no descriptors kept open", no_kept_files);
    paced(
        "all, as perfflow-monitor at 10 Hz",
        SamplerConfig {
            process_detail: ProcessDetail {
                detail_interval: Duration::from_secs(5),
                tree_interval: Duration::from_secs(1),
                io_interval: Duration::from_secs(1),
                ..ProcessDetail::default()
            },
            perf_interval: Duration::from_secs(1),
            ..base.clone()
        },
    );

    // SAFETY: kill has no memory preconditions; the group is the tree's.
    unsafe {
        libc::kill(-root, libc::SIGTERM);
    }
    let _ = tree.wait();
}

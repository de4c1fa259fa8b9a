//! The process source on the real `/proc` of children doing known work.

mod common;

use perfflow_monitor::{Sampler, SamplerConfig, Source};
use std::time::Duration;

const ENTRY: &str = "child_workloads_start_here_and_nowhere_else";

#[test]
fn child_workloads_start_here_and_nowhere_else() {
    common::run_workload_if_requested();
}

fn proc_sampler(pid: i32) -> Sampler {
    let s = Sampler::new(SamplerConfig {
        root_pid: pid,
        sources: vec![Source::Proc],
        ..SamplerConfig::default()
    });
    assert!(s
        .unavailable()
        .iter()
        .all(|u| u.source != Source::Proc || !u.reason.contains("does not exist")));
    s
}

#[test]
fn a_child_touching_256_mib_shows_an_rss_of_at_least_256_mib() {
    let w = common::spawn(ENTRY, "alloc:256");
    let mut s = proc_sampler(w.pid());
    let snap = s.sample();
    let tree = snap.process.expect("process tree");
    let rss = tree.totals.rss_bytes;
    assert!(rss >= 256 << 20, "rss {rss}");
    if let Some(uss) = tree.totals.uss_bytes {
        assert!(uss >= 256 << 20, "uss {uss}");
    }
    assert!(tree.totals.memory_percent.is_some_and(|p| p > 0.0));
    w.finish();
}

/// `wchar` counts every byte passed to `write(2)`, so it is exact whatever
/// the file system. `write_bytes` counts bytes sent to storage and stays 0
/// on tmpfs (where the temporary directory often is), so it is printed but
/// not asserted.
#[test]
fn a_child_writing_64_mib_shows_at_least_64_mib_passed_to_write() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("out.bin");
    let w = common::spawn(ENTRY, &format!("write:{}", path.display()));
    let mut s = proc_sampler(w.pid());
    let tree = s.sample().process.expect("process tree");
    let io = tree.totals.io;
    println!(
        "wchar {:?}, write_bytes {:?}",
        io.write_chars, io.write_bytes
    );
    let wchar = io
        .write_chars
        .expect("/proc/<pid>/io of our own child is readable");
    assert!(wchar >= 64 << 20, "wchar {wchar}");
    assert!(io.write_calls.is_some_and(|c| c >= 64));
    w.finish();
}

/// The child uses a fixed amount of CPU time (not wall time) between two
/// samples, so a loaded machine makes the test slower, never wrong.
#[test]
fn the_cpu_time_a_child_uses_between_samples_is_its_cpu_percent() {
    let mut w = common::spawn(ENTRY, "burn");
    let mut s = proc_sampler(w.pid());
    let first = s.sample().process.expect("process tree");
    // The first sample averages over the tree's life so far.
    assert!(first.rates.cpu_percent.is_some_and(|c| c >= 0.0));
    let burnt: f64 = w
        .ask("300 0", "burnt ")
        .parse::<u64>()
        .expect("CPU time the child used") as f64
        / 1e9;
    let second = s.sample();
    let interval = second.interval_s.expect("an interval on the second sample");
    let tree = second.process.expect("process tree");
    let cpu_s =
        |p: &perfflow_monitor::source::process::ProcessSample| p.user_time_s + p.system_time_s;
    let used = cpu_s(&tree.processes[0]) - cpu_s(&first.processes[0]);
    // /proc reports CPU time in clock ticks, truncated: allow two.
    assert!(
        used >= burnt - 0.02,
        "{used} s of CPU time seen, the child used {burnt} s"
    );
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    let expected = 100.0 * used / interval;
    let root = &tree.processes[0];
    assert!(
        root.cpu_percent.is_some_and(|c| close(c, expected)),
        "cpu {:?}%, expected {expected}%",
        root.cpu_percent
    );
    assert!(
        tree.rates.cpu_percent.is_some_and(|c| close(c, expected)),
        "tree cpu {:?}%, expected {expected}%",
        tree.rates.cpu_percent
    );
    assert!(tree.totals.threads >= 1, "threads {}", tree.totals.threads);
    w.finish();
}

#[test]
fn a_tree_of_five_descendants_is_found_whole() {
    let w = common::spawn(ENTRY, "tree");
    assert_eq!(w.pids.len(), 6, "workload reported {:?}", w.pids);
    let mut s = proc_sampler(w.pid());
    let tree = s.sample().process.expect("process tree");
    let mut found: Vec<i32> = tree.processes.iter().map(|p| p.pid).collect();
    let mut expected = w.pids.clone();
    found.sort_unstable();
    expected.sort_unstable();
    assert_eq!(found, expected);
    assert_eq!(tree.totals.processes, 6);
    assert_eq!(tree.processes[0].pid, w.pid(), "root first");
    // Every process's parent is in the tree, except the root's.
    for p in &tree.processes[1..] {
        assert!(
            expected.contains(&p.ppid),
            "{} has parent {}",
            p.pid,
            p.ppid
        );
    }
    w.finish();
}

#[test]
fn the_tree_is_reported_unavailable_once_after_its_root_exits() {
    let w = common::spawn(ENTRY, "idle");
    let pid = w.pid();
    let mut s = proc_sampler(pid);
    assert!(s.sample().process.is_some());
    w.finish();
    for _ in 0..3 {
        assert!(s.sample().process.is_none());
    }
    let gone: Vec<_> = s
        .unavailable()
        .iter()
        .filter(|u| u.source == Source::Proc && u.reason.contains("has exited"))
        .collect();
    assert_eq!(gone.len(), 1, "{:?}", s.unavailable());
}

#[test]
fn a_root_pid_that_does_not_exist_makes_the_source_unavailable() {
    // Pids are below 2^22 on Linux.
    let s = Sampler::new(SamplerConfig {
        root_pid: 99_999_999,
        sources: vec![Source::Proc],
        ..SamplerConfig::default()
    });
    assert_eq!(s.unavailable().len(), 1);
    assert!(s.unavailable()[0].reason.contains("does not exist"));
    assert!(s.available().is_empty());
}

#[test]
fn details_are_carried_between_refreshes_and_rates_of_them_come_on_refreshes() {
    use perfflow_monitor::ProcessDetail;
    let w = common::spawn(ENTRY, "spin");
    let config = |interval| SamplerConfig {
        root_pid: w.pid(),
        sources: vec![Source::Proc],
        process_detail: ProcessDetail {
            detail_interval: interval,
            ..ProcessDetail::default()
        },
        ..SamplerConfig::default()
    };

    let mut slow = Sampler::new(config(Duration::from_secs(3600)));
    let first = slow.sample().process.expect("tree");
    assert!(first.detail_fresh);
    std::thread::sleep(Duration::from_millis(50));
    let second = slow.sample().process.expect("tree");
    assert!(!second.detail_fresh);
    assert_eq!(second.totals.uss_bytes, first.totals.uss_bytes);
    assert_eq!(second.rates.voluntary_ctxt_switches, None);
    assert!(
        second.rates.cpu_percent.is_some(),
        "CPU is read at every sample"
    );

    let mut every = Sampler::new(config(Duration::ZERO));
    every.sample();
    std::thread::sleep(Duration::from_millis(50));
    let tree = every.sample().process.expect("tree");
    assert!(tree.detail_fresh);
    assert!(tree.rates.voluntary_ctxt_switches.is_some());
    assert!(tree.rates.nonvoluntary_ctxt_switches.is_some());
    w.finish();
}

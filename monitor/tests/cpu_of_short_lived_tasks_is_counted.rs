//! A job of many short tasks (the Parsl pattern) must not look idle: the
//! CPU time of processes that start and end between two samples is
//! counted, through the reaped children's times of their parent.

mod common;

use perfflow_monitor::source::process::CpuAccounting;
use perfflow_monitor::{Sampler, SamplerConfig, Source};

const ENTRY: &str = "child_workloads_start_here_and_nowhere_else";

#[test]
fn child_workloads_start_here_and_nowhere_else() {
    common::run_workload_if_requested();
}

/// Fifty tasks of 50 ms of CPU each run between two samples. The sampled
/// CPU time of the tree must be within 10% of what getrusage says the
/// parent and its reaped tasks used. Both sides count consumed CPU time,
/// so a loaded machine makes the test slower, never wrong.
#[test]
fn fifty_tasks_of_fifty_ms_between_two_samples_are_counted() {
    const TASKS: u64 = 50;
    const MS: u64 = 50;
    let mut w = common::spawn(ENTRY, "tasks");
    let mut s = Sampler::new(SamplerConfig {
        root_pid: w.pid(),
        sources: vec![Source::Proc],
        ..SamplerConfig::default()
    });
    // The parent shares this test's cgroup, which is therefore not the
    // job's own.
    assert_eq!(s.cpu_accounting(), Some(&CpuAccounting::ReapedChildren));
    let cpu_s = |t: &perfflow_monitor::source::process::TreeTotals| t.user_time_s + t.system_time_s;
    let first = s.sample().process.expect("process tree");
    let reply = w.ask(&format!("{TASKS} {MS}"), "tasks ");
    let mut words = reply
        .split_ascii_whitespace()
        .map(|x| x.parse::<u64>().unwrap());
    let (children_ns, own_ns) = (words.next().unwrap(), words.next().unwrap());
    let second = s.sample().process.expect("process tree");
    assert_eq!(second.totals.processes, 1, "every task has exited");

    let used = (children_ns + own_ns) as f64 / 1e9;
    assert!(
        children_ns >= TASKS * MS * 1_000_000,
        "the tasks used {children_ns} ns"
    );
    let seen = cpu_s(&second.totals);
    assert!(
        (seen - used).abs() <= 0.1 * used,
        "sampled {seen} s of CPU, getrusage says {used} s"
    );
    let grown = seen - cpu_s(&first.totals);
    assert!(
        grown >= 0.9 * children_ns as f64 / 1e9,
        "the tree's CPU time grew {grown} s while its tasks used {} s",
        children_ns as f64 / 1e9
    );
    w.finish();
}

/// The kernel adds a reaped child's I/O counters to its parent's `io`
/// file: a child seen alive by one sample and reaped before the next is
/// counted once, through its parent.
#[test]
fn io_of_a_reaped_child_is_counted_once() {
    const BYTES: u64 = 16 << 20;
    let mut w = common::spawn(ENTRY, &format!("reaper:{BYTES}"));
    let mut s = Sampler::new(SamplerConfig {
        root_pid: w.pid(),
        sources: vec![Source::Proc],
        ..SamplerConfig::default()
    });
    let first = s.sample().process.expect("process tree");
    assert_eq!(first.totals.processes, 2, "the writer is alive");
    let wchar: u64 = w.ask("reap", "reaped ").parse().unwrap();
    let tree = s.sample().process.expect("process tree");
    assert_eq!(tree.totals.processes, 1, "the writer is reaped");
    let seen = tree
        .totals
        .io
        .write_chars
        .expect("/proc/<pid>/io is readable");
    assert!(wchar >= BYTES, "the parent's wchar {wchar}");
    // The reply line itself is written after wchar was read.
    assert!(
        seen >= wchar && seen < wchar + 4096,
        "sampled {seen} bytes written, the parent's io file says {wchar}"
    );
    w.finish();
}

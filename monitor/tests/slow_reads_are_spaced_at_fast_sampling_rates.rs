//! At fast sampling rates the costliest reads, perf counters and the
//! processes' `io` files, can be spaced out: in between, I/O counters are
//! carried and no rate is given, and snapshots have no perf part.

use perfflow_monitor::{ProcessDetail, Sampler, SamplerConfig, Source};
use std::fs;
use std::path::Path;
use std::time::Duration;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, text).expect("write");
}

fn io_file(read_bytes: u64) -> String {
    format!(
        "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: {read_bytes}\nwrite_bytes: 0\ncancelled_write_bytes: 0\n"
    )
}

fn stat_line(pid: i32, ppid: i32, utime: u64, cutime: u64) -> String {
    format!(
        "{pid} (p{pid}) S {ppid} {pid} {pid} 0 -1 4194304 10 0 0 0 {utime} 0 {cutime} 0 20 0 1 0 500 1000000 100 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
    )
}

/// A fake `/proc` with process 100 (children `kids`), and a sampler of
/// its tree with `detail`.
fn fake_tree(dir: &Path, kids: &str, detail: ProcessDetail) -> (std::path::PathBuf, Sampler) {
    let proc_root = dir.join("proc");
    write(
        &proc_root,
        "meminfo",
        "MemTotal: 2048 kB\nMemFree: 1024 kB\n",
    );
    write(&proc_root, "uptime", "1000.00 1800.00\n");
    write(&proc_root, "100/stat", &stat_line(100, 1, 10, 0));
    write(&proc_root, "100/task/100/children", kids);
    for kid in kids.split_ascii_whitespace() {
        let pid: i32 = kid.parse().expect("pid");
        write(
            &proc_root,
            &format!("{pid}/stat"),
            &stat_line(pid, 100, 50, 0),
        );
        write(&proc_root, &format!("{pid}/task/{pid}/children"), "");
    }
    let s = Sampler::new(SamplerConfig {
        root_pid: 100,
        sources: vec![Source::Proc],
        proc_root: proc_root.clone(),
        sys_root: dir.join("sys"),
        process_detail: detail,
        ..SamplerConfig::default()
    });
    (proc_root, s)
}

#[test]
fn io_counters_are_carried_between_spaced_reads() {
    let dir = tempfile::tempdir().expect("tmp");
    let proc_root = dir.path().join("proc");
    write(&proc_root, "100/io", &io_file(4096));
    let detail = ProcessDetail {
        io_interval: Duration::from_secs(3600),
        ..ProcessDetail::default()
    };
    let (proc_root, mut s) = fake_tree(dir.path(), "", detail);
    let first = s.sample().process.expect("tree");
    assert_eq!(first.totals.io.read_bytes, Some(4096));
    write(&proc_root, "100/io", &io_file(8192));
    let second = s.sample().process.expect("tree");
    assert_eq!(second.totals.io.read_bytes, Some(4096), "carried");
    assert_eq!(second.rates.io.read_bytes, None, "no rate between reads");
}

#[test]
fn perf_counters_are_read_at_most_once_per_perf_interval() {
    let mut s = Sampler::new(SamplerConfig {
        sources: vec![Source::Perf],
        perf_interval: Duration::from_secs(3600),
        ..SamplerConfig::default()
    });
    if !s.available().contains(&Source::Perf) {
        println!("skipped: perf unavailable: {:?}", s.unavailable());
        return;
    }
    assert!(s.sample().perf.is_some(), "the first sample reads perf");
    assert!(s.sample().perf.is_none(), "the next one is too early");
}

/// Between tree reads an idle leaf is not read again; once its parent's
/// reaped-children time grows, it is read (it may be the reaped one), so
/// its time is never counted both in itself and in its parent.
#[test]
fn idle_leaves_wait_for_the_tree_read_unless_their_parent_reaped() {
    let dir = tempfile::tempdir().expect("tmp");
    let detail = ProcessDetail {
        io: false,
        tree_interval: Duration::from_secs(3600),
        // Opened at each read, so a removed file is a process gone.
        max_open_files: 0,
        ..ProcessDetail::default()
    };
    let (proc_root, mut s) = fake_tree(dir.path(), "101", detail);
    let ticks = |s: &mut Sampler| {
        let t = s.sample().process.expect("tree").totals;
        t.user_time_s + t.system_time_s
    };
    let first = ticks(&mut s);
    // Two unchanged reads make the leaf idle.
    assert_eq!(ticks(&mut s), first);
    assert_eq!(ticks(&mut s), first);
    // Changed behind the sampler's back: not read until the next tree read.
    write(&proc_root, "101/stat", &stat_line(101, 100, 70, 0));
    assert_eq!(ticks(&mut s), first, "the idle leaf is not read");
    // The leaf exits and its parent reaps it: the parent's cutime carries
    // its 70 ticks, and the leaf is read (and found gone), not kept.
    fs::remove_dir_all(proc_root.join("101")).expect("rm");
    write(&proc_root, "100/task/100/children", "");
    write(&proc_root, "100/stat", &stat_line(100, 1, 10, 70));
    let after = s.sample().process.expect("tree");
    assert_eq!(after.totals.processes, 1);
    let per_tick = first / 60.0;
    let total = after.totals.user_time_s + after.totals.system_time_s;
    assert!(
        (total - 80.0 * per_tick).abs() < 1e-9,
        "{total} s, expected 80 ticks"
    );
}

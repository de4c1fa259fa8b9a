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

#[test]
fn io_counters_are_carried_between_spaced_reads() {
    let dir = tempfile::tempdir().expect("tmp");
    let proc_root = dir.path().join("proc");
    write(
        &proc_root,
        "meminfo",
        "MemTotal: 2048 kB\nMemFree: 1024 kB\n",
    );
    write(&proc_root, "uptime", "1000.00 1800.00\n");
    write(
        &proc_root,
        "100/stat",
        "100 (job) S 1 100 100 0 -1 4194304 10 0 0 0 10 5 0 0 20 0 1 0 500 1000000 100 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
    );
    write(&proc_root, "100/task/100/children", "");
    write(&proc_root, "100/io", &io_file(4096));
    let mut s = Sampler::new(SamplerConfig {
        root_pid: 100,
        sources: vec![Source::Proc],
        proc_root: proc_root.clone(),
        sys_root: dir.path().join("sys"),
        process_detail: ProcessDetail {
            io_interval: Duration::from_secs(3600),
            ..ProcessDetail::default()
        },
        ..SamplerConfig::default()
    });
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

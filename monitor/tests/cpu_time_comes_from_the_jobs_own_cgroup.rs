//! A job with a cgroup v2 of its own (SLURM and Flux put each job step in
//! one) is accounted from that cgroup, which counts every process that
//! ever ran in it. Tested on fake `/proc` and `/sys` trees.

use perfflow_monitor::source::process::CpuAccounting;
use perfflow_monitor::{Sampler, SamplerConfig, Source};
use std::fs;
use std::path::Path;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    fs::write(p, text).expect("write");
}

/// A `/proc/<pid>/stat` line with user and system ticks.
fn stat(pid: i32, ppid: i32, utime: u64, stime: u64) -> String {
    format!(
        "{pid} (task) S {ppid} {pid} {pid} 0 -1 4194304 10 0 0 0 {utime} {stime} 0 0 20 0 1 0 500 1000000 100 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
    )
}

/// Root 100 with child 101, both in `/job_7/step_0`; `others` adds pids
/// (children of init) to the cgroup.
fn fake_job(
    dir: &Path,
    cgroup_path: &str,
    others: &[i32],
) -> (std::path::PathBuf, std::path::PathBuf) {
    let (proc_root, sys) = (dir.join("proc"), dir.join("sys"));
    write(
        &proc_root,
        "meminfo",
        "MemTotal: 2048 kB\nMemFree: 1024 kB\n",
    );
    write(&proc_root, "uptime", "1000.00 1800.00\n");
    for (pid, ppid, kids) in [(100, 1, "101"), (101, 100, "")] {
        write(&proc_root, &format!("{pid}/stat"), &stat(pid, ppid, 10, 5));
        write(
            &proc_root,
            &format!("{pid}/cgroup"),
            &format!("0::{cgroup_path}\n"),
        );
        write(&proc_root, &format!("{pid}/task/{pid}/children"), kids);
    }
    for &o in others {
        write(&proc_root, &format!("{o}/stat"), &stat(o, 1, 0, 0));
    }
    write(&sys, "fs/cgroup/cgroup.controllers", "cpu io memory\n");
    let job = "fs/cgroup/job_7/step_0";
    write(
        &sys,
        &format!("{job}/cpu.stat"),
        "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n",
    );
    let mut procs = vec![100, 101];
    procs.extend(others);
    let procs: String = procs.iter().map(|p| format!("{p}\n")).collect();
    write(&sys, &format!("{job}/cgroup.procs"), &procs);
    write(&sys, &format!("{job}/memory.peak"), "73400320\n");
    write(
        &sys,
        &format!("{job}/io.stat"),
        "8:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n",
    );
    (proc_root, sys)
}

fn sampler(proc_root: &Path, sys: &Path) -> Sampler {
    Sampler::new(SamplerConfig {
        root_pid: 100,
        sources: vec![Source::Proc],
        proc_root: proc_root.to_path_buf(),
        sys_root: sys.to_path_buf(),
        ..SamplerConfig::default()
    })
}

#[test]
fn the_jobs_own_cgroup_gives_cpu_time_peak_memory_and_io() {
    let dir = tempfile::tempdir().expect("tmp");
    let (proc_root, sys) = fake_job(dir.path(), "/job_7/step_0", &[]);
    let mut s = sampler(&proc_root, &sys);
    assert_eq!(
        s.cpu_accounting(),
        Some(&CpuAccounting::Cgroup(sys.join("fs/cgroup/job_7/step_0")))
    );
    let first = s.sample().process.expect("tree");
    assert_eq!(first.totals.user_time_s, 2.0);
    assert_eq!(first.totals.system_time_s, 0.5);
    let c = first.totals.cgroup.expect("cgroup figures");
    assert_eq!(c.usage_usec, 2_500_000);
    assert_eq!(c.memory_peak_bytes, Some(73_400_320));
    let io = c.io.expect("io.stat");
    assert_eq!((io.rbytes, io.wbytes, io.rios, io.wios), (4096, 8192, 1, 2));

    // One more second of CPU, spent by a task that has come and gone.
    write(
        &sys,
        "fs/cgroup/job_7/step_0/cpu.stat",
        "usage_usec 3500000\nuser_usec 2900000\nsystem_usec 600000\n",
    );
    let snap = s.sample();
    let second = snap.process.expect("tree");
    let interval = snap.interval_s.expect("interval");
    let expected = 100.0 * 1.0 / interval;
    let got = second.rates.cpu_percent.expect("cpu percent");
    assert!(
        (got - expected).abs() <= 1e-6 * expected,
        "{got} vs {expected}"
    );
}

#[test]
fn a_cgroup_shared_with_other_processes_is_not_the_jobs_own() {
    let dir = tempfile::tempdir().expect("tmp");
    let (proc_root, sys) = fake_job(dir.path(), "/job_7/step_0", &[999]);
    let s = sampler(&proc_root, &sys);
    assert_eq!(s.cpu_accounting(), Some(&CpuAccounting::ReapedChildren));
}

#[test]
fn the_root_cgroup_is_never_the_jobs_own() {
    let dir = tempfile::tempdir().expect("tmp");
    let (proc_root, sys) = fake_job(dir.path(), "/", &[]);
    let mut s = sampler(&proc_root, &sys);
    assert_eq!(s.cpu_accounting(), Some(&CpuAccounting::ReapedChildren));
    // Reaped-children accounting: own ticks of root and child (10 + 5
    // each), at the test machine's clock tick.
    let tree = s.sample().process.expect("tree");
    assert!(tree.totals.cgroup.is_none());
    assert!(tree.totals.user_time_s > 0.0 && tree.totals.system_time_s > 0.0);
    assert_eq!(tree.totals.user_time_s, 2.0 * tree.totals.system_time_s);
}

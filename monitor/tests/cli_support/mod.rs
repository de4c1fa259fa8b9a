//! Running the `perfflow-monitor` binary in tests: a clean environment
//! (no scheduler variables from the machine running the tests), waiting
//! with a deadline, and reading its results.

#![allow(dead_code)]

use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// Variables that would make the monitor think it runs in a job.
const SCHEDULER_VARS: [&str; 12] = [
    "SLURM_JOB_ID",
    "SLURM_JOBID",
    "SLURM_STEP_ID",
    "SLURM_STEPID",
    "PBS_JOBID",
    "PBS_NODEFILE",
    "PBS_NODEFILE_LOCAL",
    "OAR_JOB_ID",
    "OAR_JOBID",
    "OAR_NODEFILE",
    "FLUX_JOB_ID",
    "FLUX_URI",
];

/// The monitor binary, with no scheduler variables, run in `cwd`.
pub fn monitor(cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perfflow-monitor"));
    for v in SCHEDULER_VARS {
        c.env_remove(v);
    }
    c.env_remove("PERFFLOW_MONITOR_HOST");
    c.current_dir(cwd);
    c.stdin(Stdio::null());
    // Its own process group, so a run past its deadline is ended whole.
    c.process_group(0);
    c
}

/// Kills the process group led by `child`.
fn kill_group(child: &Child) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
}

/// Runs `c` to completion (at most `limit`) and returns its output.
pub fn run(mut c: Command, limit: Duration) -> Output {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = c.spawn().expect("start perfflow-monitor");
    wait_output(child, limit)
}

/// Waits for `child` (its stdout and stderr piped) at most `limit`.
pub fn wait_output(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait().expect("wait") {
            Some(_) => return child.wait_with_output().expect("output"),
            None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            None => {
                kill_group(&child);
                let out = child.wait_with_output().expect("output");
                panic!(
                    "perfflow-monitor did not exit within {limit:?}; stderr: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}

/// Waits for `child` at most `limit`.
pub fn wait_status(child: &mut Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().expect("wait") {
            return s;
        }
        if Instant::now() > deadline {
            kill_group(child);
            panic!("process {} did not exit within {limit:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `cond` holds, at most `limit`.
pub fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

/// A JSON file.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The metrics directory under `out`.
pub fn metrics(out: &Path) -> PathBuf {
    out.join("metrics")
}

/// Rows of file `f` (`cpu`, `perf`, `gpu`) in a node data file.
pub fn node_rows(path: &Path, f: &str) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["f"] == f && v.get("t").is_some())
        .count()
}

/// Sends `sig` to `pid`.
pub fn signal(pid: u32, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    let rc = unsafe { libc::kill(pid as i32, sig) };
    assert_eq!(rc, 0, "kill {pid} {sig}");
}

/// A `sleep` process, in its own process (not a child of a shell).
pub fn sleeper(seconds: f64) -> Child {
    Command::new("sleep")
        .arg(seconds.to_string())
        .stdin(Stdio::null())
        .spawn()
        .expect("start sleep")
}

/// Writes an executable shell script `name` into `dir`.
pub fn script(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// `PATH` with `dir` first.
pub fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Starts `c` (stdout and stderr piped) and waits until the log at `log`
/// says sampling has started, then `settle` more.
pub fn spawn_sampling(mut c: Command, log: &Path, settle: Duration) -> Child {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = c.spawn().expect("start perfflow-monitor");
    assert!(
        wait_until(Duration::from_secs(30), || std::fs::read_to_string(log)
            .is_ok_and(|t| t.contains("sources:"))),
        "the monitor did not start sampling"
    );
    std::thread::sleep(settle);
    child
}

/// Runs `c` to completion, checks it exited 0, and returns the job's
/// `meta_data.json` under `out`.
pub fn run_ok(c: Command, out: &Path) -> Value {
    let o = run(c, Duration::from_secs(30));
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    read_json(&metrics(out).join("meta_data.json"))
}

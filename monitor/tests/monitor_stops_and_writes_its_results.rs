//! The monitor stops when the job's processes are gone, when
//! `.ipc-<jobid>` says FINISHED, and on SIGTERM or SIGINT, and writes its
//! results each time; with `--` the command's exit status is passed
//! through and signals reach the command.

mod cli_support;

use cli_support::{metrics, monitor, read_json, run, signal, sleeper, spawn_sampling, wait_output};
use std::process::Stdio;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);

/// The monitor running `sh -c script` at 10 Hz, results in `out`.
fn sh_under_monitor(dir: &std::path::Path, script: &str) -> std::process::Command {
    let mut c = monitor(dir);
    c.args(["-i", "100ms", "-d", "out", "--", "sh", "-c", script]);
    c
}

fn samples(out: &std::path::Path, host: &str) -> usize {
    let cpu = read_json(&metrics(out).join("cpu_metrics.json"));
    cpu[host]["time_stamps"].as_array().map_or(0, Vec::len)
}

#[test]
fn the_monitor_stops_when_the_followed_process_exits() {
    let tmp = tempfile::tempdir().unwrap();
    let mut job = sleeper(1.0);
    let mut c = monitor(tmp.path());
    c.args(["-i", "100ms", "--host-name", "n1", "--pid"])
        .arg(job.id().to_string())
        .args(["-d", "out"]);
    let started = Instant::now();
    let out = run(c, LIMIT);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let _ = job.wait();
    let meta = read_json(&metrics(&tmp.path().join("out")).join("meta_data.json"));
    assert_eq!(meta["job_id"], format!("local-{}", job.id()));
    assert_eq!(meta["scheduler"], "local");
    assert!(samples(&tmp.path().join("out"), "n1") >= 3);
}

#[test]
fn an_ipc_file_saying_finished_stops_the_monitor() {
    let tmp = tempfile::tempdir().unwrap();
    let mut job = sleeper(60.0);
    let mut c = monitor(tmp.path());
    c.args(["-i", "100ms", "--host-name", "n1", "-d", "out", "--pid"])
        .arg(job.id().to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    std::fs::write(
        tmp.path().join(format!(".ipc-local-{}", job.id())),
        "FINISHED\n",
    )
    .unwrap();
    let out = wait_output(child, LIMIT);
    assert_eq!(out.status.code(), Some(0));
    assert!(job.try_wait().unwrap().is_none(), "the job is left running");
    let _ = job.kill();
    let _ = job.wait();
    let meta = read_json(&metrics(&tmp.path().join("out")).join("meta_data.json"));
    assert!(meta["n1"]["stop_reason"]
        .as_str()
        .unwrap()
        .contains("FINISHED"));
    assert!(samples(&tmp.path().join("out"), "n1") >= 3);
}

#[test]
fn sigterm_makes_the_monitor_write_its_results_and_exit_0() {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let tmp = tempfile::tempdir().unwrap();
        let mut job = sleeper(60.0);
        let mut c = monitor(tmp.path());
        c.args(["-i", "100ms", "--host-name", "n1", "-d", "out", "--pid"])
            .arg(job.id().to_string());
        let log = tmp.path().join("out/perfflow-monitor.n1.log");
        let child = spawn_sampling(c, &log, Duration::from_millis(500));
        signal(child.id(), sig);
        let out = wait_output(child, LIMIT);
        let _ = job.kill();
        let _ = job.wait();
        assert_eq!(out.status.code(), Some(0), "signal {sig}");
        assert!(samples(&tmp.path().join("out"), "n1") >= 3, "signal {sig}");
        let pfw = std::fs::read_dir(tmp.path().join("out"))
            .unwrap()
            .flatten()
            .find(|e| e.file_name().to_string_lossy().ends_with(".pfw"))
            .expect("a .pfw file");
        let trace = read_json(&pfw.path());
        assert!(trace.as_array().unwrap().len() > 2);
    }
}

#[test]
fn a_commands_exit_status_is_passed_through() {
    let tmp = tempfile::tempdir().unwrap();
    let c = sh_under_monitor(tmp.path(), "sleep 0.3; exit 7");
    let out = run(c, LIMIT);
    assert_eq!(out.status.code(), Some(7));
    let meta = read_json(&metrics(&tmp.path().join("out")).join("meta_data.json"));
    assert_eq!(meta["exit_status"], 7);
    assert_eq!(meta["command"][0], "sh");
}

#[test]
fn a_command_killed_by_a_signal_gives_128_plus_the_signal() {
    let tmp = tempfile::tempdir().unwrap();
    let c = sh_under_monitor(tmp.path(), "sleep 0.2; kill -9 $$");
    let out = run(c, LIMIT);
    assert_eq!(out.status.code(), Some(128 + 9));
}

#[test]
fn sigterm_to_the_monitor_reaches_the_command() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("got-term");
    let script = format!(
        "trap 'echo term > {}; exit 5' TERM; while :; do sleep 0.05; done",
        marker.display()
    );
    let mut c = monitor(tmp.path());
    c.args([
        "-i",
        "100ms",
        "--host-name",
        "n1",
        "-d",
        "out",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    let log = tmp.path().join("out/perfflow-monitor.n1.log");
    let child = spawn_sampling(c, &log, Duration::from_millis(300));
    signal(child.id(), libc::SIGTERM);
    let out = wait_output(child, LIMIT);
    assert!(marker.exists(), "the command did not get SIGTERM");
    assert_eq!(out.status.code(), Some(5));
    assert!(samples(&tmp.path().join("out"), "n1") >= 2);
}

#[test]
fn a_command_that_cannot_start_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = monitor(tmp.path());
    c.args(["-d", "out", "--", "/nonexistent/program"]);
    let out = run(c, LIMIT);
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/program"));
}

#[test]
fn a_command_can_be_stopped_by_sigterm_like_any_other_process() {
    let tmp = tempfile::tempdir().unwrap();
    let c = sh_under_monitor(tmp.path(), "kill -TERM $$; sleep 60; exit 0");
    let started = Instant::now();
    let out = run(c, LIMIT);
    assert_eq!(out.status.code(), Some(128 + libc::SIGTERM));
    // A command started with SIGTERM blocked would sleep until LIMIT
    // killed it; far from any start-up delay of a loaded machine.
    assert!(
        started.elapsed() < LIMIT - Duration::from_secs(5),
        "SIGTERM waited {:?}",
        started.elapsed()
    );
}

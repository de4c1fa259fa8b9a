//! Each node's data reaches disk at every checkpoint, so a monitor killed
//! with SIGKILL keeps all but the last interval; monitors of several nodes
//! finishing together into one directory lose nothing; `merge` redoes the
//! combination.

mod cli_support;

use cli_support::{metrics, monitor, node_rows, read_json, run, sleeper, spawn_sampling};
use std::time::Duration;

#[test]
fn a_monitor_killed_with_sigkill_keeps_the_samples_of_its_checkpoints() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut job = sleeper(60.0);
    let mut c = monitor(tmp.path());
    c.args([
        "-i",
        "100ms",
        "-c",
        "300ms",
        "--host-name",
        "k1",
        "-d",
        "out",
        "--pid",
    ])
    .arg(job.id().to_string());
    let mut mon = spawn_sampling(c, &out.join("perfflow-monitor.k1.log"), Duration::ZERO);
    std::thread::sleep(Duration::from_millis(1500));
    mon.kill().unwrap();
    let _ = mon.wait();
    let _ = job.kill();
    let _ = job.wait();

    // 1.5 s at 10 Hz is 15 samples; checkpoints every 300 ms lose at most
    // the last 3 or so.
    let rows = node_rows(&metrics(&out).join(".nodes/k1.jsonl"), "cpu");
    assert!(rows >= 9, "only {rows} samples on disk");
    assert!(!metrics(&out).join("cpu_metrics.json").exists());

    let mut m = monitor(tmp.path());
    m.args(["merge", "out"]);
    let o = run(m, Duration::from_secs(30));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let cpu = read_json(&metrics(&out).join("cpu_metrics.json"));
    assert_eq!(cpu["host_names"], serde_json::json!(["k1"]));
    assert_eq!(cpu["k1"]["time_stamps"].as_array().unwrap().len(), rows);
}

#[test]
fn two_monitors_finishing_together_both_land_in_the_per_job_files() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut job = sleeper(1.5);
    let spawn = |host: &str| {
        let mut c = monitor(tmp.path());
        c.args(["-i", "100ms", "--host-name", host, "-d", "out", "--pid"])
            .arg(job.id().to_string())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c.spawn().unwrap()
    };
    let a = spawn("nodeA");
    let b = spawn("nodeB");
    // Both see the job end at the same moment.
    std::thread::sleep(Duration::from_millis(1600));
    let _ = job.wait();
    for m in [a, b] {
        let o = cli_support::wait_output(m, Duration::from_secs(30));
        assert_eq!(o.status.code(), Some(0));
    }
    let cpu = read_json(&metrics(&out).join("cpu_metrics.json"));
    assert_eq!(cpu["host_names"], serde_json::json!(["nodeA", "nodeB"]));
    for host in ["nodeA", "nodeB"] {
        let on_disk = node_rows(&metrics(&out).join(format!(".nodes/{host}.jsonl")), "cpu");
        let combined = cpu[host]["time_stamps"].as_array().unwrap().len();
        assert!(on_disk >= 10, "{host}: {on_disk} samples");
        assert_eq!(combined, on_disk, "{host}");
        assert_eq!(cpu[host]["cpu_percent"].as_array().unwrap().len(), on_disk);
    }
    let meta = read_json(&metrics(&out).join("meta_data.json"));
    assert_eq!(meta["host_names"], serde_json::json!(["nodeA", "nodeB"]));
    assert!(meta["nodeA"]["cpu"].is_object() && meta["nodeB"]["cpu"].is_object());
    let perf = read_json(&metrics(&out).join("perf_metrics.json"));
    assert_eq!(perf["host_names"], serde_json::json!(["nodeA", "nodeB"]));
}

#[test]
fn merge_of_a_directory_without_node_data_says_what_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    // A directory without node data, and one that does not exist.
    for (dir, missing) in [
        ("empty", ".nodes"),
        ("nowhere", "nowhere: No such file or directory"),
    ] {
        let mut m = monitor(tmp.path());
        m.args(["merge", dir]);
        let o = run(m, Duration::from_secs(10));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(missing), "{dir}: {stderr}");
    }
}

#[test]
fn a_second_monitor_with_the_same_node_name_and_directory_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut job = sleeper(60.0);
    let mut first = monitor(tmp.path());
    first
        .args(["-i", "100ms", "--host-name", "same", "-d", "out", "--pid"])
        .arg(job.id().to_string());
    let mut first = spawn_sampling(
        first,
        &out.join("perfflow-monitor.same.log"),
        Duration::ZERO,
    );

    let mut second = monitor(tmp.path());
    second.args([
        "-i",
        "100ms",
        "--host-name",
        "same",
        "-d",
        "out",
        "--",
        "true",
    ]);
    let o = run(second, Duration::from_secs(30));
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("same.jsonl") && stderr.contains("another perfflow-monitor"),
        "{stderr}"
    );
    // The first one's data and log are untouched and it goes on.
    std::thread::sleep(Duration::from_millis(400));
    let _ = job.kill();
    let _ = job.wait();
    let status = first.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(node_rows(&metrics(&out).join(".nodes/same.jsonl"), "cpu") >= 3);
    let log = std::fs::read_to_string(out.join("perfflow-monitor.same.log")).unwrap();
    assert!(log.contains("sources:"), "{log}");
}

#[test]
fn node_files_of_an_earlier_job_are_left_out_and_merge_remakes_the_exports() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    for host in ["earlier", "later"] {
        let mut c = monitor(tmp.path());
        c.args([
            "-i",
            "100ms",
            "--host-name",
            host,
            "-d",
            "out",
            "--",
            "sleep",
            "0.3",
        ]);
        let o = run(c, Duration::from_secs(30));
        assert_eq!(o.status.code(), Some(0));
    }
    let cpu = read_json(&metrics(&out).join("cpu_metrics.json"));
    assert_eq!(cpu["host_names"], serde_json::json!(["later"]));

    let mut m = monitor(tmp.path());
    m.args(["merge", "out", "-e", "csv"]);
    let o = run(m, Duration::from_secs(30));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let csv = std::fs::read_to_string(out.join("cpu_metrics.csv")).expect("merge wrote the CSV");
    assert!(
        csv.lines().skip(1).all(|l| l.starts_with("later,")),
        "{csv}"
    );
    assert!(csv.lines().count() > 1);
}

//! `merge` skips the torn last line a killed node leaves and says so; a node
//! data file without a sample or a metadata file that does not parse stops
//! it with an error naming the file, and the results already there (the
//! per-job files, the exports) are left as they were.

mod cli_support;

use cli_support::{metrics, monitor, node_rows, read_json, run, run_ok};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The results of a monitored `sleep`, with a CSV export, under `dir/out`.
fn results(dir: &Path) -> PathBuf {
    let out = dir.join("out");
    let mut c = monitor(dir);
    c.args([
        "-i",
        "100ms",
        "--host-name",
        "n1",
        "-d",
        "out",
        "-e",
        "csv",
        "--",
        "sleep",
        "0.5",
    ]);
    run_ok(c, &out);
    assert!(out.join("cpu_metrics.csv").is_file());
    out
}

/// Every file under `dir` but the node files, with its bytes.
fn files_beside_the_node_files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let path = e.path();
        if path.file_name().is_some_and(|n| n == ".nodes") {
            continue;
        }
        if path.is_dir() {
            out.extend(files_beside_the_node_files(&path));
        } else {
            out.insert(path.clone(), std::fs::read(&path).unwrap());
        }
    }
    out
}

/// Checks that the files under `out` but the node files are `before`.
fn assert_unchanged(out: &Path, before: &BTreeMap<PathBuf, Vec<u8>>) {
    let after = files_beside_the_node_files(out);
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in before {
        assert!(after[path] == *bytes, "{} was rewritten", path.display());
    }
}

/// Runs `merge out -e csv` in `dir`.
fn merge(dir: &Path) -> std::process::Output {
    let mut m = monitor(dir);
    m.args(["merge", "out", "-e", "csv"]);
    run(m, Duration::from_secs(30))
}

/// `n` bytes from a fixed xorshift sequence.
fn noise(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn a_node_data_file_of_random_bytes_fails_the_merge_and_leaves_the_results() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results(tmp.path());
    let data = metrics(&out).join(".nodes/n1.jsonl");
    std::fs::write(&data, noise(5000)).unwrap();
    let before = files_beside_the_node_files(&out);
    assert!(before.contains_key(&metrics(&out).join("cpu_metrics.json")));

    let o = merge(tmp.path());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("metrics/.nodes/n1.jsonl") && stderr.contains("no sample"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("wrote"));
    assert_unchanged(&out, &before);
}

#[test]
fn a_torn_last_line_is_skipped_with_a_warning_and_the_samples_are_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results(tmp.path());
    let data = metrics(&out).join(".nodes/n1.jsonl");
    let rows = node_rows(&data, "cpu");
    assert!(rows > 0);
    let mut text = std::fs::read_to_string(&data).unwrap();
    assert!(text.ends_with('\n'));
    text.push_str(r#"{"f":"cpu","h":"n1","t":1763700000.1,"v":{"cpu_perc"#);
    std::fs::write(&data, &text).unwrap();
    let torn = text.lines().count();

    let o = merge(tmp.path());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("metrics/.nodes/n1.jsonl")
            && warnings[0].contains("skipped 1 line")
            && warnings[0].contains(&format!("line {torn}")),
        "{stderr}"
    );
    let cpu = read_json(&metrics(&out).join("cpu_metrics.json"));
    assert_eq!(cpu["n1"]["time_stamps"].as_array().unwrap().len(), rows);
    assert_eq!(cpu["n1"]["cpu_percent"].as_array().unwrap().len(), rows);
}

#[test]
fn a_node_metadata_file_that_is_not_json_fails_the_merge_and_leaves_the_results() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results(tmp.path());
    let meta = metrics(&out).join(".nodes/n1.meta.json");
    std::fs::write(&meta, "{").unwrap();
    let before = files_beside_the_node_files(&out);
    assert_eq!(
        read_json(&metrics(&out).join("meta_data.json"))["host_names"],
        serde_json::json!(["n1"])
    );

    let o = merge(tmp.path());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("metrics/.nodes/n1.meta.json") && stderr.contains("metadata"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("wrote"));
    assert_unchanged(&out, &before);
}

#[test]
fn a_node_stopped_during_its_first_write_adds_no_samples_and_fails_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results(tmp.path());
    let rows = node_rows(&metrics(&out).join(".nodes/n1.jsonl"), "cpu");
    // The node wrote its metadata, then was stopped inside its first line.
    let meta = std::fs::read_to_string(metrics(&out).join(".nodes/n1.meta.json")).unwrap();
    std::fs::write(
        metrics(&out).join(".nodes/n2.meta.json"),
        meta.replace("\"n1\"", "\"n2\""),
    )
    .unwrap();
    std::fs::write(
        metrics(&out).join(".nodes/n2.jsonl"),
        r#"{"f":"cpu","h":"n2","t":1763700000.1,"v":{"cpu_perc"#,
    )
    .unwrap();

    let o = merge(tmp.path());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("metrics/.nodes/n2.jsonl") && stderr.contains("skipped 1 line"),
        "{stderr}"
    );
    let cpu = read_json(&metrics(&out).join("cpu_metrics.json"));
    assert_eq!(cpu["n1"]["time_stamps"].as_array().unwrap().len(), rows);
}

//! `perfflow-trace compare --fail-if-slower PCT` as a CI gate: it exits 3
//! and names what is slower when a function or the wall time is
//! significantly slower by more than PCT, 0 otherwise, and 2 when a side
//! has a single run (nothing could be significant). The table, CSV and
//! JSON carry the same comparison.

mod support;

use std::path::{Path, PathBuf};

use support::*;

/// Five runs per side under `root`; B's `work` takes `work_ms`.
fn sides(root: &Path, work_ms: u64) -> (String, String) {
    let run = |side: &str, i: u64, work: u64| -> PathBuf {
        program_run(
            &root.join(format!("{side}{i}")),
            2 * MS + i * 100_000,
            work * MS + i * 200_000,
            3 * MS,
            MS,
        )
    };
    let list = |side: &str, work: u64| -> String {
        (0..5)
            .map(|i| path_str(&run(side, i, work)).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    (list("a", 10), list("b", work_ms))
}

#[test]
fn the_gate_fails_with_status_3_on_a_significant_slowdown_beyond_pct() {
    let root = scratch("compare_gate_fails");
    let (a, b) = sides(&root, 15);
    let output = perfflow_trace(&["compare", &a, &b, "--fail-if-slower", "40"]);
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("work is 48.1% slower"), "{stderr}");
    assert!(!stderr.contains("main"), "{stderr}");
    let table = text(&output.stdout);
    assert!(table.contains("A: 5 runs"), "{table}");
    let work = table
        .lines()
        .find(|l| l.starts_with("work "))
        .expect("a work row");
    assert!(work.contains("slower"), "{table}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_gate_passes_when_the_slowdown_is_within_pct_or_not_significant() {
    let root = scratch("compare_gate_passes");
    let (a, b) = sides(&root, 15);
    let output = perfflow_trace(&["compare", "--a", &a, "--b", &b, "--fail-if-slower", "60"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let (a, b) = sides(&root.join("same"), 10);
    let output = perfflow_trace(&["compare", &a, &b, "--fail-if-slower", "0"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn the_gate_refuses_a_side_with_a_single_run() {
    let root = scratch("compare_gate_single");
    let (a, b) = sides(&root, 15);
    let first_b = b.split(',').next().expect("a run");
    let output = perfflow_trace(&["compare", &a, first_b, "--fail-if-slower", "5"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("at least 5 runs on each side"));
    // Without the gate a single run compares, without intervals.
    let output = perfflow_trace(&["compare", &a, first_b]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("unknown"));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn csv_and_json_carry_the_same_comparison() {
    let root = scratch("compare_formats");
    let (a, b) = sides(&root, 15);
    let json = perfflow_trace(&["compare", &a, &b, "--json"]);
    assert!(json.status.success(), "{}", text(&json.stderr));
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let work = value["functions"]
        .as_array()
        .expect("functions")
        .iter()
        .find(|f| f["name"] == "work")
        .expect("work");
    assert_eq!(work["self"]["delta_ns"], 5_000_000.0);
    assert_eq!(work["self"]["verdict"], "slower");
    let csv = perfflow_trace(&["compare", &a, &b, "--csv"]);
    let csv = text(&csv.stdout);
    let row = csv
        .lines()
        .find(|l| l.starts_with("work,"))
        .expect("a work row");
    assert!(row.starts_with("work,2,2,"), "{csv}");
    assert!(row.ends_with(",slower"), "{csv}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_missing_run_is_named_with_status_1() {
    let root = scratch("compare_missing");
    let (a, _) = sides(&root, 15);
    let missing = root.join("nowhere");
    let output = perfflow_trace(&["compare", &a, path_str(&missing)]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("nowhere"),
        "{}",
        text(&output.stderr)
    );
    let _ = std::fs::remove_dir_all(&root);
}

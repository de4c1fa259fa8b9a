//! Five runs of a program against five runs in which one function,
//! `work`, takes 5 ms longer: `compare` calls `work` slower in inclusive
//! and self time, its caller `main` slower only in inclusive time, and
//! every other function the same, with the same intervals every time. The
//! traces are written with exact durations, so nothing depends on timing.

mod support;

use std::path::Path;

use perfflow_trace::{compare, read_run, CompareOptions, RunProfile, Verdict};
use support::*;

fn runs(root: &Path, side: &str, work_ms: u64) -> Vec<RunProfile> {
    // Run-to-run spread of a few hundred microseconds in every function,
    // in a different order on each side.
    let spread: [u64; 5] = if side == "a" {
        [0, 1, 2, 3, 4]
    } else {
        [2, 4, 0, 3, 1]
    };
    (0..5)
        .map(|i| {
            let jitter = spread[i] * 200_000;
            let dir = root.join(format!("{side}{i}"));
            program_run(
                &dir,
                2 * MS + jitter,
                work_ms * MS + jitter,
                3 * MS + spread[(i + 1) % 5] * 200_000,
                MS + spread[(i + 2) % 5] * 100_000,
            );
            read_run(&format!("{side}{i}"), &[dir]).expect("readable run")
        })
        .collect()
}

#[test]
fn compare_finds_the_slowed_function_and_not_the_others() {
    let root = scratch("compare_slowed");
    let a = runs(&root, "a", 10);
    let b = runs(&root, "b", 15);
    let options = CompareOptions::default();
    let comparison = compare(&a, &b, &options);

    let verdicts: Vec<(&str, Verdict, Verdict)> = comparison
        .functions
        .iter()
        .map(|f| (f.name.as_str(), f.inclusive.verdict, f.self_time.verdict))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("work", Verdict::Slower, Verdict::Slower),
            ("main", Verdict::Slower, Verdict::Same),
            ("finish", Verdict::Same, Verdict::Same),
            ("setup", Verdict::Same, Verdict::Same),
        ],
        "{comparison}"
    );
    let work = &comparison.functions[0];
    assert_eq!((work.calls_a, work.calls_b), (2.0, 2.0));
    assert_eq!(work.self_time.delta_ns, 5.0 * MS as f64);
    let interval = work.self_time.interval_ns.expect("an interval");
    assert!(
        interval.low <= 5.0 * MS as f64 && 5.0 * MS as f64 <= interval.high,
        "{interval:?}"
    );
    assert_eq!(comparison.wall.verdict, Verdict::Slower);

    // work is 50 % slower; the wall time and main about 30 %.
    let over = |pct: f64| -> Vec<String> {
        comparison
            .slowdowns(pct)
            .into_iter()
            .map(|s| s.name)
            .collect()
    };
    assert_eq!(over(40.0), ["work"]);
    assert_eq!(over(20.0), ["(wall)", "work", "main"]);
    assert!(over(60.0).is_empty());

    // The same input gives the same intervals and the same table.
    let again = compare(&a, &b, &options);
    assert_eq!(again, comparison);
    assert_eq!(again.to_string(), comparison.to_string());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_run_read_back_from_the_database_has_the_profile_of_its_traces() {
    let root = scratch("compare_db_profile");
    let dir = program_run(&root.join("run"), 2 * MS, 10 * MS, 3 * MS, MS);
    let from_files = read_run("r", std::slice::from_ref(&dir)).expect("readable run");
    let db = root.join("runs.sqlite");
    import(&db, &[path_str(&dir), "--run", "r"]);
    let from_db = perfflow_trace::db_run(&db, "r").expect("run in the database");
    assert_eq!(from_db, from_files);
    assert_eq!(from_files.functions["main"].self_ns, MS as i64);

    let error = perfflow_trace::db_run(&db, "nope").unwrap_err().to_string();
    assert!(error.contains("no run named `nope`"), "{error}");
    assert!(error.contains("expected one of: r"), "{error}");
    let _ = std::fs::remove_dir_all(&root);
}

//! A perfflow-monitor results directory given to `db` brings its
//! `metrics/cpu_metrics.json` into `metric`: one row per sample with a
//! value, by host, group, series (nested objects dotted) and unit, times
//! to the microsecond; the monitor's counter trace beside it is imported
//! too, and importing the directory again changes nothing.

mod support;

use support::*;

const CPU: &str = r#"{
  "host_names": ["nodeA", "nodeB"],
  "sampling_frequency": 1.0,
  "units": {"cpu_percent": "%", "rapl_powercap.package-0": "W"},
  "nodeA": {
    "time_stamps": [1763700000.0, 1763700001.5],
    "cpu_percent": [10.0, null],
    "rapl_powercap": {"package-0": [50.5, 60]},
    "child_proc_md": ["mpirun", "a.out"]
  },
  "nodeB": {"time_stamps": [1763700000.25], "cpu_percent": [5]}
}"#;

#[test]
fn a_monitor_results_directory_imports_its_metric_samples() {
    let dir = scratch("db_metrics");
    let results = dir.join("job");
    std::fs::create_dir_all(results.join("metrics")).unwrap();
    write(&results.join("metrics"), "cpu_metrics.json", CPU);
    monitor_file(&results);
    let db = dir.join("runs.sqlite");
    let output = import(&db, &[path_str(&results)]);
    assert!(
        text(&output.stdout).contains("4 metric samples"),
        "{}",
        text(&output.stdout)
    );

    let query = "SELECT host, metric_group, series, unit, ts_ns, value FROM metric
                 ORDER BY host, series, ts_ns";
    let expected = [
        "nodeA,cpu_metrics,cpu_percent,%,1763700000000000000,10.0",
        "nodeA,cpu_metrics,rapl_powercap.package-0,W,1763700000000000000,50.5",
        "nodeA,cpu_metrics,rapl_powercap.package-0,W,1763700001500000000,60.0",
        "nodeB,cpu_metrics,cpu_percent,%,1763700000250000000,5.0",
    ];
    assert_eq!(sql(&db, query), expected);
    assert_eq!(sql(&db, "SELECT COUNT(*) FROM counter"), ["2"]);
    // beta (the counter trace), nodeA and nodeB.
    assert_eq!(sql(&db, "SELECT host_count FROM run"), ["3"]);

    let output = import(&db, &[path_str(&results.join("metrics"))]);
    assert!(text(&output.stderr).contains("already imported"));
    assert_eq!(sql(&db, query), expected);

    let broken = dir.join("broken");
    std::fs::create_dir_all(broken.join("metrics")).unwrap();
    let bad = write(
        &broken.join("metrics"),
        "cpu_metrics.json",
        "{\"host_names\": 3}",
    );
    let output = perfflow_trace(&["db", "-o", path_str(&db), path_str(&broken)]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(stderr.contains(path_str(&bad)), "{stderr}");
    assert!(stderr.contains("host_names"), "{stderr}");
}

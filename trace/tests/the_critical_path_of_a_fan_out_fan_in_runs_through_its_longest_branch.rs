//! A driver process fans out to three worker processes over flows and
//! gathers their results over flows; the second worker takes longest. The
//! traces are written with exact times, so the whole critical path is
//! known: the driver's launch up to the second departure, the flow, the
//! long worker's task (and the compute inside it), the flow back, and the
//! driver's gather and report.

mod support;

use std::path::PathBuf;

use perfflow_trace::{critical_path, import, load, load_db, StepKind};
use support::*;

const DRIVER: u32 = 100;

/// Flow ids of the results: `BACK + k` for worker k (the runtime's ids
/// differ per scope too).
const BACK: u64 = 1 << 20;

/// The driver: `spawn` sends `go` ids 1..3 at 1, 2, 3 µs; `gather` receives
/// `back` ids at the given times (ns); then `report` until 60 µs.
fn driver(arrivals: &[(u64, u64)]) -> String {
    let mut text = opening("node0", "driver", DRIVER, None);
    text += &event("main", "app", "B", DRIVER, DRIVER, 0);
    text += &event("spawn", "app", "B", DRIVER, DRIVER, 0);
    for k in 1..=3 {
        text += &flow("go", "s", DRIVER, DRIVER, 1000 * k, k);
    }
    text += &event("spawn", "app", "E", DRIVER, DRIVER, 3000);
    text += &event("gather", "app", "B", DRIVER, DRIVER, 3000);
    for &(id, at) in arrivals {
        text += &flow("back", "f", DRIVER, DRIVER, at, BACK + id);
    }
    text += &event("gather", "app", "E", DRIVER, DRIVER, 51_000);
    text += &event("report", "app", "B", DRIVER, DRIVER, 51_000);
    text += &event("report", "app", "E", DRIVER, DRIVER, 60_000);
    text += &event("main", "app", "E", DRIVER, DRIVER, 60_000);
    text + &closing(DRIVER)
}

/// Worker `k` on its own host (its events in the order the runtime writes
/// them: a flow arrives just after the begin it is bound to): `task` from the arrival of `go` k to the
/// departure of `back` k, with `compute` inside when given.
fn worker(k: u32, start: u64, end: u64, compute: Option<(u64, u64)>) -> String {
    let pid = 200 + k;
    let mut text = opening(&format!("node{k}"), "worker", pid, None);
    text += &event("task", "app", "B", pid, pid, start);
    text += &flow("go", "f", pid, pid, start, u64::from(k));
    if let Some((from, to)) = compute {
        text += &event("compute", "app", "B", pid, pid, from);
        text += &event("compute", "app", "E", pid, pid, to);
    }
    text += &flow("back", "s", pid, pid, end, BACK + u64::from(k));
    text += &event("task", "app", "E", pid, pid, end);
    text + &closing(pid)
}

/// The traces of the fan-out / fan-in, in a fresh directory for `test`.
fn fan_out(test: &str) -> Vec<PathBuf> {
    let dir = scratch(test);
    vec![
        write(
            &dir,
            "perfflow.array.node0.100.pfw",
            &driver(&[(1, 10_500), (3, 30_500), (2, 50_500)]),
        ),
        write(
            &dir,
            "perfflow.array.node1.201.pfw",
            &worker(1, 1_200, 10_000, None),
        ),
        write(
            &dir,
            "perfflow.array.node2.202.pfw",
            &worker(2, 2_300, 50_000, Some((2_500, 49_000))),
        ),
        write(
            &dir,
            "perfflow.array.node3.203.pfw",
            &worker(3, 3_100, 30_000, None),
        ),
    ]
}

#[test]
fn the_critical_path_of_a_fan_out_fan_in_runs_through_its_longest_branch() {
    let files = fan_out("critical_path_fan_out");
    let path = critical_path(&load(&files, false).expect("readable traces"));

    let steps: Vec<(StepKind, &str, i64, i64, i64)> = path
        .steps
        .iter()
        .map(|s| (s.kind, &*s.name, s.place.pid, s.start_ns, s.end_ns))
        .collect();
    assert_eq!(
        steps,
        [
            (StepKind::Span, "spawn", 100, 0, 2_000),
            (StepKind::Flow, "go", 202, 2_000, 2_300),
            (StepKind::Span, "task", 202, 2_300, 2_500),
            (StepKind::Span, "compute", 202, 2_500, 49_000),
            (StepKind::Span, "task", 202, 49_000, 50_000),
            (StepKind::Flow, "back", 100, 50_000, 50_500),
            (StepKind::Span, "gather", 100, 50_500, 51_000),
            (StepKind::Span, "report", 100, 51_000, 60_000),
        ]
    );
    assert_eq!(path.steps[0].stack.join(" > "), "main > spawn");
    assert_eq!(path.steps[3].stack.join(" > "), "task > compute");
    assert_eq!(&*path.steps[3].place.process, "node2 · worker [202]");
    assert_eq!(path.steps[1].from.as_ref().map(|from| from.pid), Some(100));
    assert_eq!(
        (path.total_ns, path.in_spans_ns, path.waiting_ns),
        (60_000, 59_200, 800)
    );
    let first = &path.by_name[0];
    assert_eq!((first.name.as_str(), first.on_path_ns), ("compute", 46_500));
    assert_eq!(path.skewed_links, 0);
}

#[test]
fn a_result_that_arrives_after_its_receiver_went_on_working_is_not_followed() {
    // The driver's `step` begins at 7 µs, after every worker's result has
    // left (4, 5 and 6 µs) and before each arrives: the driver was working,
    // not waiting, so the path stays on the driver.
    let dir = scratch("critical_path_busy_receiver");
    let text = driver(&[(1, 10_500), (3, 30_500), (2, 50_500)]).replace(
        &event("gather", "app", "B", DRIVER, DRIVER, 3000),
        &(event("gather", "app", "B", DRIVER, DRIVER, 3000)
            + &event("step", "app", "B", DRIVER, DRIVER, 7000)),
    );
    let text = text.replace(
        &event("gather", "app", "E", DRIVER, DRIVER, 51_000),
        &(event("step", "app", "E", DRIVER, DRIVER, 50_800)
            + &event("gather", "app", "E", DRIVER, DRIVER, 51_000)),
    );
    let files = vec![
        write(&dir, "perfflow.array.node0.100.pfw", &text),
        write(
            &dir,
            "perfflow.array.node1.201.pfw",
            &worker(1, 1_200, 4_000, None),
        ),
        write(
            &dir,
            "perfflow.array.node2.202.pfw",
            &worker(2, 2_300, 5_000, None),
        ),
        write(
            &dir,
            "perfflow.array.node3.203.pfw",
            &worker(3, 3_100, 6_000, None),
        ),
    ];
    let path = critical_path(&load(&files, false).expect("readable traces"));
    let names: Vec<(&str, i64)> = path.steps.iter().map(|s| (&*s.name, s.place.pid)).collect();
    assert_eq!(
        names,
        [
            ("spawn", 100),
            ("gather", 100),
            ("step", 100),
            ("gather", 100),
            ("report", 100)
        ]
    );
    assert_eq!(path.waiting_ns, 0);
}

#[test]
fn the_critical_path_of_a_run_in_a_database_is_that_of_its_traces() {
    let files = fan_out("critical_path_database");
    let db = files[0].with_file_name("runs.sqlite");
    import(&db, &files, "fan-out", &[]).expect("import");
    let from_db = critical_path(&load_db(&db, None, false).expect("one run"));
    let from_files = critical_path(&load(&files, false).expect("readable traces"));
    // The database keeps a flow's category, not its name.
    let steps = |path: &perfflow_trace::CriticalPath| -> Vec<(StepKind, String, i64, i64, i64)> {
        path.steps
            .iter()
            .map(|s| {
                let name = if s.kind == StepKind::Flow {
                    String::new()
                } else {
                    s.name.to_string()
                };
                (s.kind, name, s.place.pid, s.start_ns, s.end_ns)
            })
            .collect()
    };
    assert_eq!(steps(&from_db), steps(&from_files));
    assert_eq!(from_db.steps.len(), 8);
}

/// The fan-out with node2's clock `ahead` ns ahead.
fn fan_out_with_skew(test: &str, ahead: u64) -> Vec<PathBuf> {
    let dir = scratch(test);
    vec![
        write(
            &dir,
            "perfflow.array.node0.100.pfw",
            &driver(&[(1, 10_500), (3, 30_500), (2, 50_500)]),
        ),
        write(
            &dir,
            "perfflow.array.node1.201.pfw",
            &worker(1, 1_200, 10_000, None),
        ),
        write(
            &dir,
            "perfflow.array.node2.202.pfw",
            &worker(
                2,
                2_300 + ahead,
                50_000 + ahead,
                Some((2_500 + ahead, 49_000 + ahead)),
            ),
        ),
        write(
            &dir,
            "perfflow.array.node3.203.pfw",
            &worker(3, 3_100, 30_000, None),
        ),
    ]
}

fn shape(path: &perfflow_trace::CriticalPath) -> Vec<(StepKind, String, i64)> {
    path.steps
        .iter()
        .map(|s| (s.kind, s.name.to_string(), s.place.pid))
        .collect()
}

#[test]
fn a_host_whose_clock_runs_ahead_is_shifted_back_into_place_with_fix_clocks() {
    let reference =
        critical_path(&load(&fan_out("critical_path_clock_reference"), false).expect("traces"));

    // 100 µs ahead: node2's task seems to end last, after the driver.
    let files = fan_out_with_skew("critical_path_clock_far_ahead", 100_000);
    let skewed = critical_path(&load(&files, false).expect("readable traces"));
    let last = skewed.steps.last().expect("a path");
    assert_eq!((&*last.name, last.place.pid), ("task", 202));
    let fixed = critical_path(&load(&files, true).expect("clocks that can be aligned"));
    assert_eq!(fixed.skewed_links, 0);
    assert!(!fixed.clock_shifts.is_empty());
    assert_eq!(shape(&fixed), shape(&reference));
    assert_eq!(fixed.total_ns, reference.total_ns);

    // 1 µs ahead: the result arrives before it departs; the walk counts it
    // and goes on from the arrival.
    let files = fan_out_with_skew("critical_path_clock_ahead", 1_000);
    let skewed = critical_path(&load(&files, false).expect("readable traces"));
    assert_eq!(skewed.skewed_links, 1);
    assert_eq!(shape(&skewed), shape(&reference));
    let fixed = critical_path(&load(&files, true).expect("clocks that can be aligned"));
    assert_eq!(fixed.skewed_links, 0);
}

fn succeeds(args: &[&str]) -> String {
    let output = perfflow_trace(args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&output.stderr)
    );
    text(&output.stdout)
}

#[test]
fn the_command_prints_the_path_as_a_table_csv_json_and_a_merged_track() {
    let files = fan_out("critical_path_command");
    let dir = files[0].parent().expect("a directory");
    let table = succeeds(&["critical-path", path_str(dir)]);
    assert!(
        table.starts_with("critical path: 60.000 us, 59.200 us in spans (98.7%), 0.800 us waiting"),
        "{table}"
    );
    assert!(table.contains("task > compute"), "{table}");
    assert!(table.contains("node0 · driver [100] tid 100 -> node2 · worker [202] tid 202"));

    let csv = succeeds(&["critical-path", path_str(dir), "--csv"]);
    assert_eq!(csv.lines().count(), 9, "{csv}");
    assert!(csv
        .lines()
        .nth(4)
        .is_some_and(|line| line.starts_with("span,compute,task > compute,")));

    let json: serde_json::Value =
        serde_json::from_str(&succeeds(&["critical-path", path_str(dir), "--json"])).expect("JSON");
    assert_eq!(json["steps"].as_array().map(Vec::len), Some(8));
    assert_eq!(json["waiting_ns"], 800);

    let merged = dir.join("merged.json");
    succeeds(&["critical-path", path_str(dir), "-o", path_str(&merged)]);
    let events = events(&merged);
    let track: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["cat"] == "critical_path")
        .collect();
    assert_eq!(track.len(), 8);
    assert_eq!(track[3]["name"], "compute");
    assert_eq!(ts_ns(track[3]) % 1_000_000_000, 2_500);
    let names = process_names(&events);
    assert!(
        names.iter().any(|(_, name)| name == "critical path"),
        "{names:?}"
    );
    succeeds(&["check", path_str(&merged)]);
}

#[test]
fn a_database_of_several_runs_needs_the_run_named() {
    let files = fan_out("critical_path_two_runs");
    let db = files[0].with_file_name("runs.sqlite");
    import(&db, &files[..2], "first", &[]).expect("import");
    import(&db, &files[2..], "second", &[]).expect("import");
    let output = perfflow_trace(&["critical-path", path_str(&db)]);
    assert_eq!(output.status.code(), Some(1));
    let message = text(&output.stderr);
    assert!(
        message.contains("expected one run or --run NAME; its runs are first, second"),
        "{message}"
    );
    succeeds(&["critical-path", path_str(&db), "--run", "second"]);
    let output = perfflow_trace(&[
        "critical-path",
        path_str(&db),
        "--run",
        "second",
        "-o",
        "never.pfw",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).contains("needs trace files, not a database"));
}

#[test]
fn profile_prints_the_call_tree_and_writes_it_for_hatchet() {
    let files = fan_out("profile_command");
    let dir = files[0].parent().expect("a directory");
    let tree = succeeds(&["profile", path_str(dir)]);
    assert!(tree.contains("\n  compute "), "{tree}");
    let by_process = succeeds(&["profile", path_str(dir), "--by-process"]);
    assert!(
        by_process.contains("node2 · worker [202]\ncontext"),
        "{by_process}"
    );
    let hatchet = dir.join("profile.json");
    succeeds(&["profile", path_str(dir), "--hatchet", path_str(&hatchet)]);
    let literal: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&hatchet).expect("written")).expect("JSON");
    let task = literal
        .as_array()
        .and_then(|roots| roots.iter().find(|root| root["frame"]["name"] == "task"))
        .expect("task is a root");
    assert_eq!(task["metrics"]["calls"], 3);
    assert_eq!(task["metrics"]["processes"], 3);
}

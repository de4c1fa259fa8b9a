//! The labels the runtime writes into a trace's `perfflow_process`
//! metadata (its `labels` option) become the labels of the run `db`
//! imports it into; a `--label` with the same key given to `db` wins.

mod support;

use support::*;

/// A trace whose opening carries the labels `fs=shm`, `size=2`.
fn labelled_trace(dir: &std::path::Path) -> std::path::PathBuf {
    let opening = "[\n{\"name\":\"perfflow_process\",\"ph\":\"M\",\"pid\":7,\"tid\":7,\
                   \"args\":{\"host\":\"n1\",\"exe\":\"app\",\"labels\":{\"fs\":\"shm\",\"size\":\"2\"}}},\n";
    let body = event("main", "app", "B", 7, 7, 1_000) + &event("main", "app", "E", 7, 7, 5_000);
    write(
        dir,
        "perfflow.array.n1.7.pfw",
        &format!("{opening}{body}{}", closing(7)),
    )
}

#[test]
fn labels_in_a_trace_become_run_labels() {
    let dir = scratch("labels_from_trace");
    let trace = labelled_trace(&dir);
    let db = dir.join("runs.sqlite");
    import(&db, &[path_str(&trace), "--run", "r"]);
    let labels = sql(&db, "SELECT key, value FROM run_label ORDER BY key");
    assert_eq!(labels, ["fs,shm", "size,2"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_label_on_the_command_line_wins_over_the_trace() {
    let dir = scratch("labels_command_line_wins");
    let trace = labelled_trace(&dir);
    let db = dir.join("runs.sqlite");
    import(
        &db,
        &[
            path_str(&trace),
            "--run",
            "r",
            "--label",
            "fs=disk",
            "--label",
            "nodes=4",
        ],
    );
    let labels = sql(&db, "SELECT key, value FROM run_label ORDER BY key");
    assert_eq!(labels, ["fs,disk", "nodes,4", "size,2"]);
    let _ = std::fs::remove_dir_all(&dir);
}

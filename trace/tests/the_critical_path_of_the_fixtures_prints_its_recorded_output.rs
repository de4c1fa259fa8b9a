//! `critical-path` makes each step only when it prints it; what it prints
//! is what was recorded in `tests/data/critical_path/*.expected`: the
//! table, `--csv`, `--json` and the track `-o` adds, on a workflow with
//! spans, idle time, a flow, an async span ended on another thread and an
//! inferred link, on a nested single-thread trace and on a producer and
//! consumer joined by flows. The library's [`critical_path`] gives the
//! same steps.

mod support;

use std::path::PathBuf;

use perfflow_trace::{critical_path, load, track_events};

use support::{data, path_str, perfflow_trace, scratch, text};

/// The recorded output `name`.
fn expected(name: &str) -> String {
    let path = data("critical_path").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The fixtures: a name and the trace files of its workflow.
fn fixtures() -> Vec<(&'static str, Vec<PathBuf>)> {
    vec![
        (
            "workflow",
            vec![data("critical_path").join("workflow.json")],
        ),
        ("nest", vec![data("nest.json")]),
        (
            "queue",
            vec![data("queue.produce.json"), data("queue.consume.json")],
        ),
    ]
}

#[test]
fn the_table_csv_and_json_are_the_recorded_ones() {
    for (name, files) in fixtures() {
        let files: Vec<&str> = files.iter().map(|f| path_str(f)).collect();
        for (format, flag) in [
            ("table", None),
            ("csv", Some("--csv")),
            ("json", Some("--json")),
        ] {
            let mut args = vec!["critical-path"];
            args.extend(flag);
            args.extend(&files);
            let printed = perfflow_trace(&args);
            assert!(printed.status.success(), "{}", text(&printed.stderr));
            assert_eq!(
                text(&printed.stdout),
                expected(&format!("{name}.{format}.expected")),
                "{name} as {format}"
            );
        }
        // The library holds the same steps.
        let files: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
        let path = critical_path(&load(&files, false).expect("readable traces"));
        assert_eq!(
            path.to_string(),
            expected(&format!("{name}.table.expected"))
        );
        assert_eq!(path.to_csv(), expected(&format!("{name}.csv.expected")));
    }
}

#[test]
fn the_track_added_to_the_merged_trace_is_the_recorded_one() {
    let dir = scratch("critical_path_recorded_track");
    let merged = dir.join("merged.pfw");
    let input = data("critical_path").join("workflow.json");
    let done = perfflow_trace(&["critical-path", "-o", path_str(&merged), path_str(&input)]);
    assert!(done.status.success(), "{}", text(&done.stderr));
    let written = std::fs::read_to_string(&merged).expect("the merged trace");
    let track: Vec<&str> = written
        .lines()
        .filter(|line| line.contains("\"pid\":3,"))
        .collect();
    let recorded = expected("workflow.track.expected");
    assert_eq!(track, recorded.lines().collect::<Vec<_>>());
    // `track_events` of the library's path gives the same events.
    let path = critical_path(&load(&[input], false).expect("readable trace"));
    let events = track_events(&path, 3);
    let with_comma: Vec<String> = events.iter().map(|e| format!("{e},")).collect();
    let (last, rest) = recorded
        .lines()
        .collect::<Vec<_>>()
        .split_last()
        .map_or((String::new(), Vec::new()), |(last, rest)| {
            (last.to_string(), rest.to_vec())
        });
    assert_eq!(&with_comma[..rest.len()], rest);
    assert_eq!(events.last().cloned().unwrap_or_default(), last);
    std::fs::remove_dir_all(&dir).unwrap();
}

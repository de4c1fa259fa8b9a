//! The `flow` table pairs a flow's departures and arrivals in order of
//! time, the k-th with the k-th, whichever files hold them and in whatever
//! order they are imported, as `critical-path` pairs them from the files;
//! and a flow end on a thread of `X` events (compact traces, written at
//! each span's end) lies in the span its time says, not in none.

mod support;

use support::*;

/// A driver (pid 1) that runs `launch`, waits, and collects in `collect`
/// from 500 µs, where flow 77 arrives; two workers, each leaving by one
/// departure of flow 77, at 300 and 100 µs. Compact: `X` events only.
fn workflow(dir: &std::path::Path) -> [std::path::PathBuf; 3] {
    let x = |name: &str, pid: u32, ts: u64, dur: u64| {
        format!(
            r#"{{"name":"{name}","cat":"c","ph":"X","pid":{pid},"tid":{pid},"ts":{ts},"dur":{dur}}}"#
        )
    };
    let flow = |ph: &str, pid: u32, ts: u64| {
        let bp = if ph == "f" { r#","bp":"e""# } else { "" };
        format!(
            r#"{{"name":"w","cat":"flow","ph":"{ph}","pid":{pid},"tid":{pid},"ts":{ts},"id":77{bp}}}"#
        )
    };
    let file = |name: &str, host: &str, exe: &str, pid: u32, events: Vec<String>| {
        let opening = format!(
            r#"{{"name":"perfflow_process","ph":"M","pid":{pid},"tid":{pid},"args":{{"exe":"{exe}","host":"{host}"}}}}"#
        );
        let mut lines = vec![opening];
        lines.extend(events);
        write(dir, name, &format!("[\n{}\n]\n", lines.join(",\n")))
    };
    [
        file(
            "perfflow.array.h0.1.pfw",
            "h0",
            "driver",
            1,
            vec![
                x("launch", 1, 0, 10),
                flow("f", 1, 500),
                x("collect", 1, 500, 60),
            ],
        ),
        file(
            "perfflow.array.h1.2.pfw",
            "h1",
            "slow",
            2,
            vec![flow("s", 2, 300), x("work_slow", 2, 20, 280)],
        ),
        file(
            "perfflow.array.h2.3.pfw",
            "h2",
            "fast",
            3,
            vec![flow("s", 3, 100), x("work_fast", 3, 10, 90)],
        ),
    ]
}

#[test]
fn flows_in_the_database_pair_by_time_and_lie_in_the_spans_their_times_say() {
    let dir = scratch("db_flows_by_time");
    let files = workflow(&dir);
    let paths: Vec<&str> = files.iter().map(|p| path_str(p)).collect();
    let query = "SELECT a.name, f.from_ns, b.name, f.to_ns FROM flow f
                 LEFT JOIN span a ON a.id = f.from_span LEFT JOIN span b ON b.id = f.to_span
                 ORDER BY f.from_ns";
    // The earliest departure pairs with the arrival; the other is left
    // unpaired, whatever the order of the imports.
    let expected = ["work_fast,100000,collect,500000", "work_slow,300000,,"];
    for order in [[0, 1, 2], [1, 2, 0], [2, 0, 1], [1, 0, 2]] {
        let db = dir.join(format!("runs-{}{}{}.sqlite", order[0], order[1], order[2]));
        for at in order {
            let output = import(&db, &["--run", "one", paths[at]]);
            assert!(output.status.success(), "{}", text(&output.stderr));
        }
        assert_eq!(sql(&db, query), expected, "imported in order {order:?}");
        // Both ends named: the critical path from the database goes
        // through the fast worker, as it does from the files.
        let from_db = perfflow_trace(&["critical-path", path_str(&db)]);
        let shown = text(&from_db.stdout);
        assert!(shown.contains("work_fast"), "{order:?}: {shown}");
        assert!(!shown.contains("work_slow"), "{order:?}: {shown}");
    }
    let from_files = perfflow_trace(&[
        "critical-path",
        path_str(&dir.join("perfflow.array.h0.1.pfw")),
        paths[1],
        paths[2],
    ]);
    assert!(
        text(&from_files.stdout).contains("work_fast"),
        "{}",
        text(&from_files.stdout)
    );
}

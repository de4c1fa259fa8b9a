//! `critical-path --fix-clocks` pairs flows at the times after the hosts'
//! clocks are shifted, as the trace `merge --fix-clocks` writes shows
//! them: host hB's clock is about 1 ms behind, so before the shift its
//! departure of flow 5 looks earlier than hC's, and after it, later. The
//! files, their merged trace and their database give one path, through
//! `b_work`.

mod support;

use support::*;

#[test]
fn critical_path_with_fixed_clocks_pairs_flows_at_the_shifted_times() {
    let dir = scratch("critical_path_shifted_pairs");
    let run = dir.join("run");
    std::fs::create_dir_all(&run).expect("run dir");
    let opening = |pid: u32, exe: &str, host: &str| {
        format!(
            r#"{{"name":"perfflow_process","ph":"M","pid":{pid},"tid":{pid},"args":{{"exe":"{exe}","host":"{host}"}}}}"#
        )
    };
    let file = |name: &str, lines: &[String]| {
        write(&run, name, &format!("[\n{}\n]\n", lines.join(",\n")));
    };
    let ev = |pid: u32, name: &str, ph: &str, ts: u64| {
        format!(r#"{{"name":"{name}","ph":"{ph}","pid":{pid},"tid":{pid},"ts":{ts}}}"#)
    };
    let flow = |pid: u32, ph: &str, ts: u64, id: u32| {
        let bp = if ph == "f" { r#","bp":"e""# } else { "" };
        format!(
            r#"{{"name":"f{id}","cat":"flow","ph":"{ph}","pid":{pid},"tid":{pid},"ts":{ts},"id":{id}{bp}}}"#
        )
    };
    let x = |pid: u32, name: &str, ts: u64, dur: u64| {
        format!(r#"{{"name":"{name}","ph":"X","pid":{pid},"tid":{pid},"ts":{ts},"dur":{dur}}}"#)
    };
    file(
        "perfflow.array.hA.1.pfw",
        &[
            opening(1, "driver", "hA"),
            ev(1, "main", "B", 1_000_000),
            flow(1, "s", 1_000_000, 9),
            ev(1, "wait", "B", 1_000_150),
            flow(1, "f", 1_000_400, 5),
            flow(1, "f", 1_000_500, 5),
            ev(1, "wait", "E", 1_000_510),
            ev(1, "main", "E", 1_000_600),
        ],
    );
    file(
        "perfflow.array.hB.2.pfw",
        &[
            opening(2, "b", "hB"),
            ev(2, "task_b", "B", 999_010),
            flow(2, "f", 999_010, 9),
            x(2, "b_work", 999_020, 270),
            flow(2, "s", 999_290, 5),
            ev(2, "task_b", "E", 999_295),
        ],
    );
    file(
        "perfflow.array.hC.3.pfw",
        &[
            opening(3, "c", "hC"),
            ev(3, "task_c", "B", 1_000_100),
            x(3, "c_work", 1_000_100, 100),
            flow(3, "s", 1_000_200, 5),
            ev(3, "task_c", "E", 1_000_205),
        ],
    );
    let path_of = |args: &[&str]| {
        let output = perfflow_trace(args);
        assert!(
            output.status.success(),
            "{args:?}: {}",
            text(&output.stderr)
        );
        let shown = text(&output.stdout);
        let first = shown.lines().next().unwrap_or_default().to_string();
        let through_b = shown.contains("b_work");
        let through_c = shown.contains("c_work");
        (first, through_b, through_c)
    };
    // Without --fix-clocks the flow that arrives before it departs is said.
    let unfixed = perfflow_trace(&["critical-path", path_str(&run)]);
    assert!(
        text(&unfixed.stderr).contains("note: 1 flow arrives before it departs"),
        "{}",
        text(&unfixed.stderr)
    );
    let fixed = perfflow_trace(&["critical-path", "--fix-clocks", path_str(&run)]);
    assert!(
        !text(&fixed.stderr).contains("arrive"),
        "{}",
        text(&fixed.stderr)
    );
    let from_files = path_of(&["critical-path", "--fix-clocks", path_str(&run)]);
    assert!(from_files.1 && !from_files.2, "{from_files:?}");
    let merged = dir.join("merged.pfw");
    let output = perfflow_trace(&[
        "merge",
        "--fix-clocks",
        path_str(&run),
        "-o",
        path_str(&merged),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(path_of(&["critical-path", path_str(&merged)]), from_files);
    let db = dir.join("runs.sqlite");
    import(&db, &[path_str(&run)]);
    assert_eq!(
        path_of(&["critical-path", "--fix-clocks", path_str(&db)]),
        from_files
    );
}

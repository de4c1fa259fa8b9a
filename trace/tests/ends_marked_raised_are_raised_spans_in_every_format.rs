//! An end that says `"args":{"outcome":"raised"}` (`E`, `X`, or an async
//! `e`, even one written before its `b`) makes its span `raised` in the
//! database; the same trace converted to Perfetto (the outcome as a debug
//! annotation on the slice end) and back gives the same rows.

mod support;

use support::*;

/// `line` (an event line) with `"args":{"outcome":"raised"}`.
fn raised(line: String) -> String {
    line.replacen("\"},\n", "\",\"args\":{\"outcome\":\"raised\"}},\n", 1)
}

#[test]
fn ends_marked_raised_are_raised_spans_in_every_format() {
    let dir = scratch("db_raised");
    let x = "{\"name\":\"quick\",\"cat\":\"app.c\",\"pid\":1,\"tid\":1,\"ts\":4.000,\"ph\":\"X\",\"dur\":1.000,\"args\":{\"outcome\":\"raised\"}},\n";
    let async_end = "{\"name\":\"task\",\"cat\":\"io\",\"pid\":1,\"tid\":2,\"ts\":9.000,\"ph\":\"e\",\"id\":7,\"args\":{\"outcome\":\"raised\"}},\n";
    let async_begin = "{\"name\":\"task\",\"cat\":\"io\",\"pid\":1,\"tid\":1,\"ts\":8.000,\"ph\":\"b\",\"id\":7},\n";
    let sync = [
        event("outer", "app.c", "B", 1, 1, 1_000),
        event("inner", "app.c", "B", 1, 1, 2_000),
        raised(event("inner", "app.c", "E", 1, 1, 3_000)),
        x.to_string(),
        event("outer", "app.c", "E", 1, 1, 6_000),
    ]
    .concat();
    let json = runtime_file(
        &dir,
        "h",
        "app",
        1,
        &[&sync, async_begin, async_end].concat(),
    );
    // Thread 2's events first in the file: the `e` before its `b`.
    let swapped = runtime_file(
        &dir,
        "h",
        "app",
        2,
        &[&sync, async_end, async_begin].concat(),
    );
    let pftrace = dir.join("perfflow.perfetto.h.1.pftrace");
    let back = dir.join("back.pfw");
    let converted = perfflow_trace(&["convert", path_str(&json), path_str(&pftrace)]);
    assert!(converted.status.success(), "{}", text(&converted.stderr));
    let returned = perfflow_trace(&["convert", path_str(&pftrace), path_str(&back)]);
    assert!(returned.status.success(), "{}", text(&returned.stderr));
    for file in [&json, &swapped, &pftrace, &back] {
        let db = dir.join(format!(
            "{}.sqlite",
            file.file_name().unwrap().to_string_lossy()
        ));
        import(&db, &[path_str(file)]);
        let rows = sql(
            &db,
            "SELECT s.name, s.outcome, p.name FROM span s LEFT JOIN span p ON p.id = s.parent
             ORDER BY s.start_ns",
        );
        assert_eq!(
            rows,
            [
                "outer,returned,",
                "inner,raised,outer",
                "quick,raised,outer",
                "task,raised,"
            ],
            "{}",
            file.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

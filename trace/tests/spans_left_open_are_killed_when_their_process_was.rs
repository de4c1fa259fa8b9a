//! A span without an end is `killed` when its process was (a fatal signal
//! completed the trace, the file is truncated, or a perfflow trace lacks
//! its closing `perfflow_runtime` record), and `open_at_end` in a trace
//! that was completed normally or that says nothing of how it ended.

mod support;

use support::*;

/// `main` begun, `work` begun and ended, then nothing more of `main`.
fn body(pid: u32) -> String {
    [
        event("main", "app.c", "B", pid, pid, 1_000),
        event("work", "app.c", "B", pid, pid, 2_000),
        event("work", "app.c", "E", pid, pid, 3_000),
    ]
    .concat()
}

fn signal(pid: u32) -> String {
    format!(
        "{{\"name\":\"perfflow_signal\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{pid},\"args\":{{\"signal\":15,\"name\":\"TERM\"}}}},\n"
    )
}

#[test]
fn spans_left_open_are_killed_when_their_process_was() {
    let dir = scratch("db_killed");
    let files = [
        // Completed normally: open_at_end.
        runtime_file(&dir, "h", "app", 1, &body(1)),
        // Completed by the runtime after SIGTERM: killed.
        runtime_file(&dir, "h", "app", 2, &format!("{}{}", body(2), signal(2))),
        // Cut short inside an event line (SIGKILL): killed.
        write(
            &dir,
            "cut.pfw",
            &format!("{}{}{{\"name\":\"ma", opening("h", "app", 3, None), body(3)),
        ),
        // A whole array without the closing record: killed.
        write(
            &dir,
            "unclosed.pfw",
            &format!("{}{}{{}}\n]\n", opening("h", "app", 4, None), body(4)),
        ),
        // Not the runtime's (no opening record), complete: open_at_end.
        write(&dir, "foreign.json", &format!("[\n{}{{}}\n]\n", body(5))),
    ];
    let db = dir.join("runs.sqlite");
    let args: Vec<&str> = files.iter().map(|f| path_str(f)).collect();
    import(&db, &args);
    let rows = sql(
        &db,
        "SELECT p.pid, s.name, s.outcome, s.end_ns IS NULL FROM span s
         JOIN process p ON p.id = s.process ORDER BY p.pid, s.name",
    );
    assert_eq!(
        rows,
        [
            "1,main,open_at_end,1",
            "1,work,returned,0",
            "2,main,killed,1",
            "2,work,returned,0",
            "3,main,killed,1",
            "3,work,returned,0",
            "4,main,killed,1",
            "4,work,returned,0",
            "5,main,open_at_end,1",
            "5,work,returned,0",
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

//! A thread pool's async spans: begun (`b`) on one thread and ended (`e`)
//! on another. The runtime writes each thread's events as a block, so the
//! ending thread's block, and every `e` in it, may come before the `b`s.
//! `check` and `summary` pair `b` with `e` by pid, category, id, name and
//! time, not by position in the file.

use std::path::PathBuf;
use std::process::{Command, Output};

fn trace_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("perfflow-trace-async-order");
    std::fs::create_dir_all(&dir).expect("create test directory");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write trace file");
    path
}

fn perfflow_trace(args: &[&str], file: &PathBuf) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfflow-trace"))
        .args(args)
        .arg(file)
        .output()
        .expect("run perfflow-trace")
}

fn event(name: &str, ph: &str, tid: u32, ts: u64, id: u64) -> String {
    format!(
        "{{\"name\":\"{name}\",\"cat\":\"pool\",\"pid\":9,\"tid\":{tid},\"ts\":{ts}.000,\"ph\":\"{ph}\",\"id\":{id}}}"
    )
}

/// The worker's block (tid 2: every `e`) comes before the main thread's
/// (tid 1: every `b`), as the runtime writes them when the worker exits
/// first. Operation `i` runs from `10 i` to `10 i + 4` us; id 7 is used
/// twice, one operation after the other.
fn pool_trace(operations: u64) -> String {
    let id = |i: u64| if i == operations - 1 { 7 } else { 100 + i };
    let mut lines = Vec::new();
    for i in 0..operations {
        lines.push(event("task", "e", 2, 10 * i + 4, id(i)));
    }
    lines.push(event("task", "e", 2, 3, 7));
    for i in 0..operations {
        lines.push(event("task", "b", 1, 10 * i, id(i)));
    }
    lines.push(event("task", "b", 1, 1, 7));
    format!("[\n{}\n]\n", lines.join(",\n"))
}

#[test]
fn async_spans_ended_on_another_thread_pair_whatever_the_file_order() {
    let operations = 1000;
    let file = trace_file("pool.pfw", &pool_trace(operations));
    let events = 2 * (operations + 1);

    let output = perfflow_trace(&["check"], &file);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("{}: ok, {events} events, 2 threads\n", file.display())
    );

    let output = perfflow_trace(&["summary"], &file);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    // 1000 operations of 4 us and one of 2 us (id 7 from 1 to 3 us).
    assert!(
        stdout
            .contains("\ntask       1001    4002.000   4002.000     2.000      3.998     4.000\n"),
        "{stdout}"
    );
}

#[test]
fn an_end_earlier_than_every_begin_of_its_id_is_still_reported() {
    let text = format!(
        "[\n{},\n{}\n]\n",
        event("task", "e", 2, 5, 1),
        event("task", "b", 1, 6, 1)
    );
    let file = trace_file("early_end.pfw", &text);
    let output = perfflow_trace(&["check"], &file);
    assert_eq!(output.status.code(), Some(1));
    let shown = file.display();
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "{shown}: 0: e \"task\" (pid 9, cat \"pool\", id \"1\") has no b with the same pid, cat, id and name at or before it\n\
             {shown}: 1: b \"task\" (pid 9, cat \"pool\", id \"1\") is never closed by an e with the same pid, cat, id and name\n\
             {shown}: FAILED, 2 problems\n"
        )
    );
}

#[test]
fn a_truncated_trace_may_hold_an_end_whose_begin_was_not_written() {
    // The worker's block was written, the main thread's was not: killed.
    let text = format!(
        "[\n{},\n{},\n",
        event("task", "e", 2, 5, 1),
        event("task", "b", 1, 6, 2)
    );
    let file = trace_file("killed.pfw", &text);
    let output = perfflow_trace(&["check", "--allow-truncated"], &file);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = perfflow_trace(&["check"], &file);
    assert_eq!(output.status.code(), Some(1));
}

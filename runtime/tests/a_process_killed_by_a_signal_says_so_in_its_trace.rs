//! A process ended by a signal the runtime takes (SIGTERM here) leaves a
//! complete trace that says so: the `perfflow_signal` metadata names the
//! signal, and the slices it was inside end with
//! `"args":{"outcome":"killed"}`. A process that exits leaves no such
//! record.

mod support;

use std::time::Duration;

use support::{command, pfw_names, program, run, start_until_ready, Scratch, Trace};

fn only_trace(dir: &Scratch) -> Trace {
    let names = pfw_names(&dir.path);
    assert_eq!(names.len(), 1, "{names:?}");
    Trace::read(&dir.join(&names[0]))
}

fn signal_record(trace: &Trace) -> Option<serde_json::Value> {
    trace
        .events
        .iter()
        .find(|e| e.name() == "perfflow_signal")
        .map(|e| e.value["args"].clone())
}

#[test]
fn a_process_killed_by_a_signal_says_so_in_its_trace() {
    let dir = Scratch::new("killed_outcome");
    let running = start_until_ready(&mut command(&program("e2e_wait_for_signal"), &dir.path));
    running.send(libc::SIGTERM);
    let done = running.wait(Duration::from_secs(20));
    assert_eq!(done.signal(), Some(libc::SIGTERM), "{}", done.stderr);
    let trace = only_trace(&dir);
    assert_eq!(
        signal_record(&trace),
        Some(serde_json::json!({"signal": libc::SIGTERM, "name": "TERM"}))
    );
    let killed: Vec<&str> = trace
        .events
        .iter()
        .filter(|e| e.value["args"]["outcome"] == "killed")
        .map(|e| e.name())
        .collect();
    // The main thread was inside `serve` and `wait`, its worker inside
    // `worker_loop` and perhaps one of its `tick`s.
    let mut sorted: Vec<&str> = killed.iter().copied().filter(|n| *n != "tick").collect();
    sorted.sort_unstable();
    assert_eq!(sorted, ["serve", "wait", "worker_loop"], "{killed:?}");
    assert!(killed.len() <= 4, "{killed:?}");
    assert!(trace
        .events
        .iter()
        .filter(|e| e.ph() == "E" && e.name() == "step")
        .all(|e| e.value.get("args").is_none()));
    assert!(trace
        .events
        .iter()
        .any(|e| e.ph() == "E" && e.name() == "step"));

    let exited = Scratch::new("exited_outcome");
    let done = run(&mut command(&program("e2e_fib"), &exited.path));
    assert!(done.status.success(), "{}", done.stderr);
    assert_eq!(signal_record(&only_trace(&exited)), None);
}

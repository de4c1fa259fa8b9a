//! Region names built at run time are interned: each distinct name costs
//! the runtime about 480 bytes for the rest of the process (its site, its
//! strings, the writer's cached prefix). A program that makes a new name per
//! request must not grow the runtime's memory without end: past
//! [`LIMIT`] distinct names, events under new names are dropped and
//! counted (one line on stderr), while names seen before keep recording.

mod support;

use std::collections::HashSet;

use support::*;

/// Distinct names the runtime interns at most (see `site.rs`).
const LIMIT: u64 = 100_000;
/// Names past the limit in this run.
const OVER: u64 = 50;

#[test]
fn names_past_the_limit_are_dropped_and_counted_and_known_names_still_record() {
    let scratch = Scratch::new("region-names");
    let bin = program("region_names_built_at_run_time");
    let done = run(command(&bin, &scratch.path).arg((LIMIT + OVER).to_string()));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    let files = pfw_files(&scratch.path);
    assert_eq!(files.len(), 1, "{files:?}");
    let trace = Trace::read(&files[0]);
    trace.assert_complete(done.pid());
    let names: HashSet<&str> = trace
        .body()
        .iter()
        .filter(|e| e.ph() == "B")
        .map(|e| e.name())
        .collect();
    assert_eq!(names.len() as u64, LIMIT, "distinct names in the trace");
    // The name used again at the end, interned before the limit, records.
    assert_eq!(trace.named("request-0").len(), 4);
    assert!(trace
        .named(&format!("request-{}", LIMIT + OVER - 1))
        .is_empty());
    // Each name past the limit lost its begin and its end.
    assert_eq!(
        trace.summary()["events_dropped"].as_u64(),
        Some(2 * OVER),
        "stderr: {}",
        done.stderr
    );
    assert_eq!(
        done.stderr
            .lines()
            .filter(|l| l.contains("distinct run-time names"))
            .count(),
        1,
        "one line says why: {}",
        done.stderr
    );
}

/// With tracing off, names are not even looked up: nothing is interned,
/// dropped or said, however many names the program makes.
#[test]
fn with_tracing_off_names_cost_nothing_and_say_nothing() {
    let scratch = Scratch::new("region-names-off");
    let bin = program("region_names_built_at_run_time");
    let done = run(command(&bin, &scratch.path)
        .arg((LIMIT + OVER).to_string())
        .env("PERFFLOW_OPTIONS", "log-enable=False"));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    assert_eq!(done.stderr, "", "nothing on stderr");
    assert_eq!(done.printed("dropped").as_deref(), Some("0"));
    assert!(pfw_files(&scratch.path).is_empty());
}

//! A process killed mid-run leaves a trace without its closing `]`, maybe
//! ending in half an event, and one killed at once leaves only its opening.
//! `merge` takes every complete event of such traces and says how many
//! inputs were cut short; the merged file itself is complete JSON.

mod support;

use support::*;

#[test]
fn truncated_traces_merge_with_every_complete_event() {
    let dir = scratch("truncated");
    let mut killed = opening("node1", "killed", 31, None);
    killed += &event("main", "app.c", "B", 31, 31, 1_000_000);
    killed += &event("step", "app.c", "X", 31, 31, 1_000_100).replace("},\n", ",\"dur\":5},\n");
    killed += "{\"name\":\"step\",\"cat\":\"ap";
    write(&dir, "perfflow.array.node1.31.pfw", &killed);
    write(
        &dir,
        "perfflow.object.node2.32.pfw",
        &opening("node2", "opening-only", 32, None).replacen(
            '[',
            "{\"displayTimeUnit\":\"us\",\"traceEvents\":[",
            1,
        ),
    );
    let merged = dir.join("workflow.pfw");
    let output = merge(&[path_str(&dir), "-o", path_str(&merged)]);
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("2 events of 2 processes on 2 hosts from 2 files (2 cut short)"),
        "{stdout}"
    );

    let events = events(&merged);
    let names = process_names(&events);
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.iter().any(|(_, n)| n == "node2 · opening-only [32]"));
    let steps = events.iter().filter(|e| e["name"] == "step").count();
    assert_eq!(
        steps, 1,
        "the complete X is kept, the half-written one is not"
    );
}

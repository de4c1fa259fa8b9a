//! The periodic flush copies what threads have published while they go on
//! recording into the same chunks, which are later handed over full: every
//! event is still written exactly once, in order, on its own thread.

mod support;

use std::collections::HashMap;
use std::fs;

use support::{command, program, read_event_line, run, Scratch};

#[test]
fn four_threads_flushed_every_10ms_write_each_of_their_events_once() {
    let dir = Scratch::new("periodic-once");
    let done = run(command(&program("many_threads"), &dir.path)
        .args(["4", "100000"])
        .env("PERFFLOW_OPTIONS", "flush-interval=10ms"));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    let name = format!("perfflow.array.{}.{}.pfw", done.host(), done.pid());
    let text = fs::read_to_string(dir.join(&name)).expect("read the trace");
    assert!(text.ends_with("\n]\n"), "a complete trace");
    let mut per_thread: HashMap<u64, (u64, Vec<String>)> = HashMap::new();
    let mut events = 0;
    for (i, line) in text.lines().enumerate().skip(1) {
        let Some(object) = line.strip_suffix(',') else {
            continue; // the summary, then `]`
        };
        let e = read_event_line(object, i % 1000 == 0);
        if e.ph == "M" {
            continue;
        }
        events += 1;
        let (last_ts, open) = per_thread.entry(e.tid).or_default();
        let ts = e.ts_ns.expect("ts");
        assert!(ts >= *last_ts, "time went back on {}: {line}", e.tid);
        *last_ts = ts;
        match e.ph.as_ref() {
            "B" => open.push(e.name.to_string()),
            "E" => assert_eq!(open.pop().as_deref(), Some(e.name.as_ref()), "{line}"),
            other => panic!("phase {other}: {line}"),
        }
    }
    assert_eq!(per_thread.len(), 4);
    assert!(per_thread.values().all(|(_, open)| open.is_empty()));
    assert_eq!(events, 4 * 100_000, "each event once");
}

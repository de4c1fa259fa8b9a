//! A vfork child runs in its parent's memory until it calls exec or ends.
//! One that enters woven functions and leaves them through `_exit` after a
//! failed exec must not write into the parent's buffers: the parent's trace
//! holds exactly the parent's events, balanced, and the child's events,
//! written nowhere, are counted as dropped.

mod support;

use support::*;

const SPAWNS: u64 = 4;

#[test]
fn the_parent_trace_is_complete_and_holds_none_of_the_vfork_childs_events() {
    let scratch = Scratch::new("vfork");
    let bin = program("vfork_failed_exec");
    let done = run(command(&bin, &scratch.path).arg(SPAWNS.to_string()));
    assert!(done.status.success(), "stderr: {}", done.stderr);
    assert_eq!(done.printed("failed").as_deref(), Some("0"));
    assert!(
        !done.stderr.contains("without a matching enter"),
        "stderr: {}",
        done.stderr
    );
    let files = pfw_files(&scratch.path);
    assert_eq!(files.len(), 1, "{files:?}");
    let trace = Trace::read(&files[0]);
    trace.assert_complete(done.pid());
    let count =
        |name: &str, ph: &str| trace.named(name).iter().filter(|e| e.ph() == ph).count() as u64;
    assert_eq!(count("in_child", "B") + count("in_child", "E"), 0);
    for name in ["spawn", "after"] {
        assert_eq!(count(name, "B"), SPAWNS, "{name}");
        assert_eq!(count(name, "E"), SPAWNS, "{name}");
    }
    // Each child recorded three events (enter and exit of in_child, exit of
    // spawn) that no trace holds: they are counted.
    let dropped = trace.summary()["events_dropped"].as_u64();
    assert_eq!(dropped, Some(3 * SPAWNS));
    assert_eq!(done.printed("dropped"), Some((3 * SPAWNS).to_string()));
}

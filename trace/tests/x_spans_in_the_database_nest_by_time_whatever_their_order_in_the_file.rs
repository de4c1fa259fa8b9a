//! An `X` event is written when its span ends: in a compact trace (the
//! runtime's `log-event=compact`, and its `.pftrace`) a parent comes after
//! its children. `db` still gives each span the parent and depth its times
//! say, and each instant the span it lies in, as for `B`/`E` pairs.

mod support;

use std::path::Path;

use support::nest::{build_nest, run};
use support::*;

/// Each span of `db` as name, depth and parent name, sorted (the runs of
/// one program differ in their times, not in their tree).
fn tree(db: &Path) -> Vec<String> {
    let mut rows = sql(
        db,
        "SELECT s.name, s.depth, p.name, s.outcome FROM span s LEFT JOIN span p ON p.id = s.parent",
    );
    rows.sort();
    rows
}

#[test]
fn a_compact_run_has_the_parents_depths_and_sequences_of_its_begin_end_twin() {
    let dir = scratch("db_compact_tree");
    let bin = build_nest(&dir);
    let verbose = run(&bin, &dir, "log-event=verbose");
    let compact = run(&bin, &dir, "log-event=compact");
    let pftrace = run(&bin, &dir, "log-event=compact:log-format=perfetto");
    let mut found = Vec::new();
    for (name, trace) in [
        ("verbose", &verbose),
        ("compact", &compact),
        ("pftrace", &pftrace),
    ] {
        let db = dir.join(format!("{name}.sqlite"));
        import(&db, &[path_str(trace)]);
        found.push((name, tree(&db), sql(&db, "event-sequences")));
    }
    let (_, tree_be, sequences_be) = &found[0];
    // The B/E run: main > outer (2) > inner (3 each), worker on its own
    // thread, the async transfer without depth or parent.
    assert_eq!(
        tree_be,
        &[
            "inner,2,outer,returned",
            "inner,2,outer,returned",
            "inner,2,outer,returned",
            "inner,2,outer,returned",
            "inner,2,outer,returned",
            "inner,2,outer,returned",
            "main,0,,returned",
            "outer,1,main,returned",
            "outer,1,main,returned",
            "transfer,,,returned",
            "worker,0,,returned",
        ]
    );
    assert_eq!(
        sequences_be,
        &["outer,inner > inner > inner,2", "main,outer > outer,1"]
    );
    for (name, tree, sequences) in &found[1..] {
        assert_eq!(tree, tree_be, "{name}");
        assert_eq!(sequences, sequences_be, "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An `X` line, times in microseconds.
fn x(name: &str, ts: u64, dur: u64) -> String {
    format!("{{\"name\":\"{name}\",\"cat\":\"app\",\"pid\":1,\"tid\":1,\"ts\":{ts},\"dur\":{dur},\"ph\":\"X\"}},\n")
}

#[test]
fn x_spans_read_before_and_after_their_children_and_b_e_pairs_inside_them_nest_by_time() {
    let dir = scratch("db_x_any_order");
    let us = 1000;
    let mut body = opening("h", "app", 1, None);
    body += &event("main", "app", "B", 1, 1, 0);
    // Read before the X that holds them: a child and an instant in it.
    body += &x("child", 10, 10);
    body += &event("mark", "app", "i", 1, 1, 15 * us);
    body += &x("parent", 5, 30);
    // Read before what it holds: an X and a B/E pair.
    body += &x("late", 40, 20);
    body += &x("leaf", 45, 5);
    body += &event("inner", "app", "B", 1, 1, 52 * us);
    body += &event("inner", "app", "E", 1, 1, 55 * us);
    // The same times: the one read first holds the other.
    body += &x("twin_a", 70, 10);
    body += &x("twin_b", 70, 10);
    body += &event("tick", "app", "i", 1, 1, 65 * us);
    body += &event("main", "app", "E", 1, 1, 100 * us);
    // Another thread of B/E pairs only: nested as it always was.
    body += &event("other", "app", "B", 1, 2, 0);
    body += &event("below", "app", "B", 1, 2, 20 * us);
    body += &event("below", "app", "E", 1, 2, 30 * us);
    body += &event("other", "app", "E", 1, 2, 50 * us);
    body += &closing(1);
    let trace = write(&dir, "perfflow.h.1.pfw", &body);
    let db = dir.join("runs.sqlite");
    import(&db, &[path_str(&trace)]);

    let spans = sql(
        &db,
        "SELECT s.id, s.name, s.start_ns / 1000, s.end_ns / 1000, s.depth, s.parent
         FROM span s ORDER BY s.id",
    );
    assert_eq!(
        spans,
        [
            "1,main,0,100,0,",
            "2,child,10,20,2,3",
            "3,parent,5,35,1,1",
            "4,late,40,60,1,1",
            "5,leaf,45,50,2,4",
            "6,inner,52,55,2,4",
            "7,twin_a,70,80,1,1",
            "8,twin_b,70,80,2,7",
            "9,other,0,50,0,",
            "10,below,20,30,1,9",
        ]
    );
    let instants = sql(
        &db,
        "SELECT name, ts_ns / 1000, span FROM instant ORDER BY id",
    );
    assert_eq!(instants, ["mark,15,2", "tick,65,1"]);
    assert_eq!(
        sql(&db, "event-sequences"),
        [
            "late,leaf > inner,1",
            "main,parent > late > twin_a,1",
            "other,below,1",
            "parent,child,1",
            "twin_a,twin_b,1",
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

//! Two hosts run a process with the same pid (and thread ids): `merge`
//! gives each its own pid and threads and names it `host · exe [pid]`, with
//! the MPI rank when the trace has one.

mod support;

use std::collections::BTreeSet;

use support::*;

#[test]
fn two_hosts_with_the_same_pid_merge_into_distinct_named_processes() {
    let dir = scratch("same_pid");
    for (host, rank) in [("node1", 0), ("node2", 1)] {
        let mut text = opening(host, "solver", 4242, Some(rank));
        text += &event("main", "app.c", "B", 4242, 4242, 1_000_000);
        text += &event("work", "app.c", "B", 4242, 4243, 1_000_100);
        text += &event("work", "app.c", "E", 4242, 4243, 1_000_200);
        text += &event("main", "app.c", "E", 4242, 4242, 1_000_900);
        text += &closing(4242);
        write(&dir, &format!("perfflow.array.{host}.4242.pfw"), &text);
    }
    let merged = dir.join("workflow.pfw");
    merge(&[path_str(&dir), "-o", path_str(&merged)]);

    let events = events(&merged);
    let names = process_names(&events);
    let shown: BTreeSet<&str> = names.iter().map(|(_, name)| name.as_str()).collect();
    assert_eq!(
        shown,
        BTreeSet::from([
            "node1 · solver [4242] rank 0",
            "node2 · solver [4242] rank 1"
        ])
    );
    let pids: BTreeSet<i64> = names.iter().map(|(pid, _)| *pid).collect();
    assert_eq!(pids.len(), 2, "{names:?}");

    let threads: BTreeSet<(i64, i64)> = events
        .iter()
        .filter(|e| e["ph"] != "M")
        .map(|e| (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap()))
        .collect();
    assert_eq!(threads.len(), 4, "{threads:?}");
    let tids: BTreeSet<i64> = threads.iter().map(|(_, tid)| *tid).collect();
    assert_eq!(tids.len(), 4, "thread ids are distinct across processes");
    for (pid, name) in &names {
        let works = events
            .iter()
            .filter(|e| e["pid"] == *pid && e["name"] == "work")
            .count();
        assert_eq!(works, 2, "{name}");
    }
}

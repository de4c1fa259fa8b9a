//! What `merge` writes is a valid trace by our own `check`: every span,
//! async span, flow and counter of the inputs, with async spans of
//! different processes that share an id kept apart.

mod support;

use support::*;

#[test]
fn a_merged_trace_passes_check() {
    let dir = scratch("passes_check");
    for (host, pid) in [("node1", 10), ("node2", 10), ("node3", 77)] {
        let mut text = event("main", "app.c", "B", pid, pid, 5_000_000);
        // Every process counts its async ids from 1.
        text += &event("io", "disk", "b", pid, pid + 1, 5_000_100).replace("},\n", ",\"id\":1},\n");
        text += &event("io", "disk", "e", pid, pid + 2, 5_000_300).replace("},\n", ",\"id\":1},\n");
        text += &flow("queue", "s", pid, pid, 5_000_400, 1);
        text += &flow("queue", "f", pid, pid, 5_000_500, 1);
        text += &event("main", "app.c", "E", pid, pid, 5_000_900);
        runtime_file(&dir, host, "app", pid, &text);
    }
    write(
        &dir,
        "perfflow.monitor.node1.5.pfw",
        "[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":5,\"tid\":5,\"args\":{\"name\":\"perfflow-monitor node1\"}}\n\
         ,{\"name\":\"cpu total (%)\",\"ph\":\"C\",\"pid\":5,\"tid\":5,\"ts\":5000.000,\"args\":{\"value\":50}}\n]\n",
    );
    let merged = dir.join("workflow.pfw");
    merge(&[path_str(&dir), "-o", path_str(&merged)]);

    assert_check_passes(&[
        "--expect-events",
        "19",
        "--expect-phases",
        "B,E,b,e,s,f,C",
        path_str(&merged),
    ]);

    let events = events(&merged);
    let mut async_ids: Vec<String> = events
        .iter()
        .filter(|e| e["ph"] == "b")
        .map(|e| e["id"].to_string())
        .collect();
    async_ids.sort();
    async_ids.dedup();
    assert_eq!(async_ids.len(), 3, "async ids stay distinct: {async_ids:?}");
    let flow_ids: Vec<&Value> = events
        .iter()
        .filter(|e| e["cat"] == "flow")
        .map(|e| &e["id"])
        .collect();
    assert!(flow_ids.iter().all(|id| **id == 1), "flow ids are kept");
}

use serde_json::Value;

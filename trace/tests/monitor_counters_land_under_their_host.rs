//! The monitor's counter trace of a node (`perfflow.monitor.<host>.<pid>.pfw`)
//! becomes a process named after that host, sorted first among the host's
//! processes, with its counters unchanged.

mod support;

use serde_json::Value;
use support::*;

#[test]
fn monitor_counters_land_under_their_host() {
    let dir = scratch("monitor");
    for (host, pid) in [("alpha", 300), ("beta", 300)] {
        let text = event("main", "app.c", "B", pid, pid, 2_000_000)
            + &event("main", "app.c", "E", pid, pid, 2_000_500);
        runtime_file(&dir, host, "app", pid, &text);
    }
    // As perfflow-monitor writes it, with the same pid as an application.
    monitor_file(&dir);
    let merged = dir.join("workflow.pfw");
    merge(&[path_str(&dir), "-o", path_str(&merged)]);

    let events = events(&merged);
    let names = process_names(&events);
    let monitor = names
        .iter()
        .find(|(_, name)| name == "beta · perfflow-monitor [300]")
        .unwrap_or_else(|| panic!("no monitor process in {names:?}"));
    let counters: Vec<&Value> = events.iter().filter(|e| e["ph"] == "C").collect();
    assert_eq!(counters.len(), 2);
    for counter in &counters {
        assert_eq!(counter["pid"], monitor.0, "{counter}");
    }
    assert_eq!(counters[0]["args"]["value"], 37.5);
    assert_eq!(counters[0]["ts"].to_string(), "2000100.0");

    // Sorted by host, the monitor first among its host's processes.
    let sort_index = |pid: i64| {
        events
            .iter()
            .find(|e| e["name"] == "process_sort_index" && e["pid"] == pid)
            .and_then(|e| e["args"]["sort_index"].as_i64())
            .expect("a sort index")
    };
    let mut order: Vec<(i64, &str)> = names
        .iter()
        .map(|(pid, name)| (sort_index(*pid), name.as_str()))
        .collect();
    order.sort();
    let order: Vec<&str> = order.into_iter().map(|(_, name)| name).collect();
    assert_eq!(
        order,
        [
            "alpha · app [300]",
            "beta · perfflow-monitor [300]",
            "beta · app [300]"
        ]
    );
}

//! A producer on one host sends flows to a consumer on another whose clock
//! runs 2.5 s behind. `merge` reports the flows that arrive before they
//! depart; `merge --fix-clocks` shifts the consumer's host by an offset
//! within the flows' latency of the true 2.5 s, prints it, and every flow
//! of the merged trace then arrives after it departs.

mod support;

use std::collections::HashMap;

use support::*;

const BEHIND_NS: u64 = 2_500_000_000;
const BASE_NS: u64 = 1_000_000_000_000;

#[test]
fn a_clock_offset_between_hosts_is_reported_and_recovered_by_fix_clocks() {
    let dir = scratch("clock_offset");
    let mut producer = opening("sender", "producer", 7, Some(0));
    let mut consumer = opening("receiver", "consumer", 7, Some(1));
    // Latencies between 40 and 103 µs; the smallest one bounds the error.
    let latency = |k: u64| 40_000 + (k * 7_919) % 64_000;
    let min_latency = (0..20).map(latency).min().unwrap();
    for k in 0..20 {
        let depart = BASE_NS + k * 1_000_000;
        let arrive = depart + latency(k) - BEHIND_NS;
        producer += &event("send", "p.c", "B", 7, 7, depart - 1_000);
        producer += &flow("work", "s", 7, 7, depart, k);
        producer += &event("send", "p.c", "E", 7, 7, depart + 1_000);
        consumer += &event("receive", "c.c", "B", 7, 7, arrive - 1_000);
        consumer += &flow("work", "f", 7, 7, arrive, k);
        consumer += &event("receive", "c.c", "E", 7, 7, arrive + 1_000);
    }
    producer += &closing(7);
    consumer += &closing(7);
    let a = write(&dir, "perfflow.array.sender.7.pfw", &producer);
    let b = write(&dir, "perfflow.array.receiver.7.pfw", &consumer);

    let plain = dir.join("plain.pfw");
    let output = merge(&[path_str(&a), path_str(&b), "-o", path_str(&plain)]);
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("20 flows from sender to receiver arrive before they depart"),
        "{stderr}"
    );
    assert!(text(&output.stdout).contains("cross-host flows: 20"));

    let fixed = dir.join("fixed.pfw");
    let expected_ns = BEHIND_NS - min_latency;
    let output = merge_fixing_clocks(&a, &b, &fixed, "receiver", expected_ns, 20);
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("  sender: +0.000 µs (20 cross-host flows)"),
        "{stdout}"
    );
    assert!(BEHIND_NS - expected_ns <= min_latency);

    let events = events(&fixed);
    let mut departures = HashMap::new();
    for e in events.iter().filter(|e| e["ph"] == "s") {
        departures.insert(e["id"].as_u64().unwrap(), ts_ns(e));
    }
    let arrivals: Vec<_> = events.iter().filter(|e| e["ph"] == "f").collect();
    assert_eq!(arrivals.len(), 20);
    for e in arrivals {
        let id = e["id"].as_u64().unwrap();
        let true_latency = latency(id) as i64;
        let seen = ts_ns(e) - departures[&id];
        assert!(
            (0..=true_latency).contains(&seen),
            "flow {id}: arrives {seen} ns after departing, latency {true_latency} ns"
        );
    }
    // The consumer's spans moved with its flows.
    let receive = events
        .iter()
        .find(|e| e["name"] == "receive" && e["ph"] == "B")
        .unwrap();
    assert_eq!(
        ts_ns(receive),
        (BASE_NS + latency(0) - BEHIND_NS - 1_000 + expected_ns) as i64
    );
}

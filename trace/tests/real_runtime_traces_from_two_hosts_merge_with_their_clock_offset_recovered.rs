//! Two traces the runtime wrote (`tests/data/queue.c`: a producer process
//! sends five flows on the scope "queue", a consumer process receives
//! them), made into two hosts: the consumer's copy says it ran on `node2`,
//! with the producer's pid, and a clock 1.5 s behind. `merge` keeps them
//! apart and names them; it reports the five flows that now arrive before
//! they depart; `--fix-clocks` shifts `node2` by 1.5 s less at most the
//! shortest real flow latency, and the merged trace passes `check`.

mod support;

use std::path::{Path, PathBuf};

use support::*;

const BEHIND_NS: i64 = 1_500_000_000;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// `ts` of a trace line in nanoseconds, exactly, and where its text is.
fn ts_of(line: &str) -> Option<(i64, std::ops::Range<usize>)> {
    let start = line.find("\"ts\":")? + 5;
    let len = line[start..].find([',', '}'])?;
    let text = &line[start..start + len];
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    let frac = format!("{frac:0<3}");
    let ns = whole.parse::<i64>().ok()? * 1000 + frac[..3].parse::<i64>().ok()?;
    Some((ns, start..start + len))
}

/// The flow ends (`ph` code, id, ts) of a trace file.
fn flow_ends(text: &str) -> Vec<(String, String, i64)> {
    text.lines()
        .filter(|line| line.contains("\"cat\":\"flow\""))
        .map(|line| {
            let value: serde_json::Value =
                serde_json::from_str(line.trim_end_matches(',')).expect("an event line");
            let (ts, _) = ts_of(line).expect("a ts");
            (
                value["ph"].as_str().unwrap().to_string(),
                value["id"].to_string(),
                ts,
            )
        })
        .collect()
}

#[test]
fn real_runtime_traces_from_two_hosts_merge_with_their_clock_offset_recovered() {
    let dir = scratch("real_two_hosts");
    let producer = std::fs::read_to_string(data("queue.produce.json")).unwrap();
    let consumer = std::fs::read_to_string(data("queue.consume.json")).unwrap();

    // The true latencies, from the traces as written on one host.
    let departures = flow_ends(&producer);
    let arrivals = flow_ends(&consumer);
    assert_eq!((departures.len(), arrivals.len()), (5, 5));
    let min_latency = departures
        .iter()
        .map(|(ph, id, depart)| {
            assert_eq!(ph, "s");
            let (_, _, arrive) = arrivals.iter().find(|(_, other, _)| other == id).unwrap();
            arrive - depart
        })
        .min()
        .unwrap();
    assert!(min_latency > 0);

    // The consumer as another host with the same pid and a late clock.
    let moved: String = consumer
        .lines()
        .map(|line| {
            let mut line = line
                .replace("\"pid\":20148,\"tid\":20148", "\"pid\":20145,\"tid\":20145")
                .replace("\"host\":\"vm\"", "\"host\":\"node2\"");
            if let Some((ns, range)) = ts_of(&line) {
                let shifted = ns - BEHIND_NS;
                line.replace_range(range, &format!("{}.{:03}", shifted / 1000, shifted % 1000));
            }
            line + "\n"
        })
        .collect();
    let a = write(&dir, "perfflow.array.vm.20145.pfw", &producer);
    let b = write(&dir, "perfflow.array.node2.20145.pfw", &moved);

    let plain = dir.join("plain.pfw");
    let output = merge(&[path_str(&a), path_str(&b), "-o", path_str(&plain)]);
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("5 flows from vm to node2 arrive before they depart"),
        "{stderr}"
    );
    let names = process_names(&events(&plain));
    let shown: Vec<&str> = names.iter().map(|(_, name)| name.as_str()).collect();
    assert_eq!(shown, ["vm · queue [20145]", "node2 · queue [20145]"]);

    let fixed = dir.join("fixed.pfw");
    let offset_ns = (BEHIND_NS - min_latency) as u64;
    let output = merge_fixing_clocks(&a, &b, &fixed, "node2", offset_ns, 5);
    assert!(text(&output.stderr).contains("shifted below"));

    assert_check_passes(&[
        "--expect-phases",
        "B,E,s,f",
        "--expect-events",
        "30",
        path_str(&fixed),
    ]);
}

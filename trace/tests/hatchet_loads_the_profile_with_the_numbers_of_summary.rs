//! The call-tree profile read by LLNL's Hatchet (`GraphFrame.from_literal`),
//! the reader of record for such profiles. Needs `python3` with
//! `llnl-hatchet` (`pip install llnl-hatchet`); without it the test fails
//! and says so.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use perfflow_trace::{load, profile, read_trace, summarize};
use serde_json::Value;
use support::*;

/// Loads the literal at argv[1] into a GraphFrame and prints, per node
/// name, the sums of its metrics, and per node path its imbalance metrics.
const READER: &str = r#"
import json, sys
import hatchet as ht
with open(sys.argv[1]) as f:
    gf = ht.GraphFrame.from_literal(json.load(f))
df = gf.dataframe
sums = df.groupby("name")[["calls", "time (inc)", "time"]].sum()
spread = {}
for node in gf.graph.traverse():
    path = " > ".join(str(n.frame["name"]) for n in node.path())
    row = df.loc[node]
    spread[path] = [float(row["time (inc) min"]), float(row["time (inc) mean"]),
                    float(row["time (inc) max"]), int(row["processes"])]
print(json.dumps({"sums": {name: [int(r["calls"]), r["time (inc)"], r["time"]]
                           for name, r in sums.iterrows()},
                  "spread": spread,
                  "inc": sorted(gf.inc_metrics), "exc": sorted(gf.exc_metrics)}))
"#;

fn read_with_hatchet(path: &Path) -> Value {
    let out = Command::new("python3")
        .arg("-c")
        .arg(READER)
        .arg(path)
        .output()
        .expect("python3 is needed for this test (with llnl-hatchet: pip install llnl-hatchet)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("No module named 'hatchet'"),
        "llnl-hatchet is needed for this test: pip install llnl-hatchet"
    );
    assert!(
        out.status.success(),
        "hatchet could not read {}:\n{stderr}",
        path.display()
    );
    serde_json::from_slice(&out.stdout).expect("the reader prints JSON")
}

fn write_literal(dir: &Path, files: &[PathBuf], by_process: bool) -> PathBuf {
    let workflow = load(files, false).expect("readable traces");
    let literal = profile(&workflow).hatchet_literal(by_process);
    let path = dir.join(format!("profile-{by_process}.json"));
    std::fs::write(&path, literal.to_string()).expect("write the profile");
    path
}

#[test]
fn hatchet_loads_the_profile_with_the_numbers_of_summary() {
    // Real runtime traces of three processes: nested regions on two
    // threads with an asynchronous span, a producer and a consumer.
    let dir = scratch("hatchet_real_traces");
    let files: Vec<PathBuf> = ["nest.json", "queue.produce.json", "queue.consume.json"]
        .iter()
        .map(|name| data(name))
        .collect();
    let read = read_with_hatchet(&write_literal(&dir, &files, false));
    assert_eq!(
        read["inc"],
        serde_json::json!([
            "time (inc)",
            "time (inc) max",
            "time (inc) mean",
            "time (inc) min"
        ])
    );

    let traces: Vec<_> = files
        .iter()
        .map(|f| read_trace(f).expect("trace"))
        .collect();
    let summary = summarize(&traces);
    let sums = read["sums"].as_object().expect("sums per name");
    assert_eq!(sums.len(), summary.functions.len(), "{sums:?}");
    for stats in &summary.functions {
        let row = &sums[&stats.name];
        let seconds = |value: &Value| value.as_f64().expect("a number") * 1e9;
        assert_eq!(row[0].as_u64(), Some(stats.calls), "{}", stats.name);
        assert!(
            (seconds(&row[1]) - stats.total_ns as f64).abs() < 0.5,
            "{}: {row}",
            stats.name
        );
        assert!(
            (seconds(&row[2]) - stats.self_ns as f64).abs() < 0.5,
            "{}: {row}",
            stats.name
        );
    }
}

#[test]
fn the_spread_across_processes_gives_the_load_imbalance() {
    // Two ranks run `solve` for 10 and 30 µs under `main`.
    let dir = scratch("hatchet_imbalance");
    let files: Vec<PathBuf> = [(1u32, 10_000u64), (2, 30_000)]
        .iter()
        .map(|&(rank, solve)| {
            let pid = 300 + rank;
            let text = opening("node", "app", pid, Some(rank))
                + &event("main", "app", "B", pid, pid, 0)
                + &event("solve", "app", "B", pid, pid, 1_000)
                + &event("solve", "app", "E", pid, pid, 1_000 + solve)
                + &event("main", "app", "E", pid, pid, 40_000)
                + &closing(pid);
            write(&dir, &format!("perfflow.array.node.{pid}.pfw"), &text)
        })
        .collect();
    let read = read_with_hatchet(&write_literal(&dir, &files, false));
    let solve = &read["spread"]["main > solve"];
    let micros = |k: usize| (solve[k].as_f64().expect("number") * 1e6 * 1000.0).round() / 1000.0;
    assert_eq!((micros(0), micros(1), micros(2)), (10.0, 20.0, 30.0));
    assert_eq!(solve[3], 2);
    assert_eq!(read["sums"]["solve"][0], 2);

    // Per process: each rank a root above its own tree.
    let read = read_with_hatchet(&write_literal(&dir, &files, true));
    let solve = &read["spread"]["node · app [302] rank 2 > main > solve"];
    assert_eq!(solve[3], 1);
    assert_eq!((solve[0].as_f64().expect("number") * 1e9).round(), 30_000.0);
    assert_eq!(read["sums"]["solve"][0], 2);
}

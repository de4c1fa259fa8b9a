//! An `X` event is written at its end, so one that encloses `B`/`E` pairs
//! of its thread comes after them in the file. `summary` nests it around
//! them all the same: its self time leaves them out, and the span around
//! it loses the `X`'s time in place of theirs. The numbers are exact and
//! agree with those of the same trace read back from a database.

mod support;

use std::collections::BTreeMap;

use perfflow_trace::{db_run, FunctionTotals};

use support::{path_str, perfflow_trace, scratch, text, write};

/// Thread 1: `a` ends before `p`, which encloses it, is read, with no `B`
/// open around them; inside `main`, `q` starts between `c` and `d` and
/// encloses `d` only. Thread 2: inside `outer`, `phase` starts between `f`
/// and `g` and encloses `g` and `h`. Times in microseconds.
const TRACE: &str = r#"[
{"name":"a","ph":"B","pid":1,"tid":1,"ts":2},
{"name":"a","ph":"E","pid":1,"tid":1,"ts":4},
{"name":"p","ph":"X","pid":1,"tid":1,"ts":1,"dur":7},
{"name":"main","ph":"B","pid":1,"tid":1,"ts":10},
{"name":"c","ph":"B","pid":1,"tid":1,"ts":11},
{"name":"c","ph":"E","pid":1,"tid":1,"ts":12},
{"name":"d","ph":"B","pid":1,"tid":1,"ts":13},
{"name":"d","ph":"E","pid":1,"tid":1,"ts":15},
{"name":"q","ph":"X","pid":1,"tid":1,"ts":12.5,"dur":3},
{"name":"main","ph":"E","pid":1,"tid":1,"ts":20},
{"name":"outer","ph":"B","pid":1,"tid":2,"ts":0},
{"name":"f","ph":"B","pid":1,"tid":2,"ts":1},
{"name":"f","ph":"E","pid":1,"tid":2,"ts":2},
{"name":"g","ph":"B","pid":1,"tid":2,"ts":3},
{"name":"g","ph":"E","pid":1,"tid":2,"ts":4},
{"name":"h","ph":"B","pid":1,"tid":2,"ts":5},
{"name":"h","ph":"E","pid":1,"tid":2,"ts":6},
{"name":"phase","ph":"X","pid":1,"tid":2,"ts":2.5,"dur":4},
{"name":"outer","ph":"E","pid":1,"tid":2,"ts":10}
]"#;

/// `(name, calls, inclusive ns, self ns)` worked out by hand.
const EXPECTED: [(&str, u64, i64, i64); 11] = [
    ("a", 1, 2_000, 2_000),
    ("c", 1, 1_000, 1_000),
    ("d", 1, 2_000, 2_000),
    ("f", 1, 1_000, 1_000),
    ("g", 1, 1_000, 1_000),
    ("h", 1, 1_000, 1_000),
    ("main", 1, 10_000, 6_000),
    ("outer", 1, 10_000, 5_000),
    ("p", 1, 7_000, 5_000),
    ("phase", 1, 4_000, 2_000),
    ("q", 1, 3_000, 1_000),
];

fn expected() -> BTreeMap<String, FunctionTotals> {
    EXPECTED
        .iter()
        .map(|&(name, calls, inclusive_ns, self_ns)| {
            let totals = FunctionTotals {
                calls,
                inclusive_ns,
                self_ns,
            };
            (name.to_string(), totals)
        })
        .collect()
}

#[test]
fn summary_self_time_counts_an_x_read_after_the_spans_it_encloses() {
    let dir = scratch("summary_x_after_its_children");
    let trace = write(&dir, "mixed.pfw", TRACE);

    let summary = perfflow_trace(&["summary", "--json", path_str(&trace)]);
    assert!(summary.status.success(), "{}", text(&summary.stderr));
    let json: serde_json::Value = serde_json::from_slice(&summary.stdout).expect("JSON summary");
    let found: BTreeMap<String, FunctionTotals> = json["functions"]
        .as_array()
        .expect("functions")
        .iter()
        .map(|f| {
            let totals = FunctionTotals {
                calls: f["calls"].as_u64().expect("calls"),
                inclusive_ns: f["total_ns"].as_i64().expect("total_ns"),
                self_ns: f["self_ns"].as_i64().expect("self_ns"),
            };
            (f["name"].as_str().expect("name").to_string(), totals)
        })
        .collect();
    assert_eq!(found, expected());

    // The database's spans, nested by time, give the same numbers.
    let db = dir.join("mixed.db");
    let imported = perfflow_trace(&[
        "db",
        "-o",
        path_str(&db),
        "--run",
        "mixed",
        path_str(&trace),
    ]);
    assert!(imported.status.success(), "{}", text(&imported.stderr));
    let from_db = db_run(&db, "mixed").expect("the run in the database");
    assert_eq!(from_db.functions, expected());
    std::fs::remove_dir_all(&dir).unwrap();
}

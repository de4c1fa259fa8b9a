//! `summary --json` and `--csv`: the table's numbers in nanoseconds, with
//! each name's percentiles of span durations.

mod support;

use support::*;

#[test]
fn summary_prints_json_and_csv_with_percentiles() {
    let dir = scratch("summary_json_csv");
    // `step` lasts 1, 2, ..., 10 µs; `main` holds them all.
    let mut trace_text = opening("node", "app", 7, None);
    trace_text += &event("main", "app", "B", 7, 7, 0);
    let mut at = 0;
    for k in 1..=10u64 {
        trace_text += &event("step", "app", "B", 7, 7, at);
        at += k * 1000;
        trace_text += &event("step", "app", "E", 7, 7, at);
    }
    trace_text += &event("main", "app", "E", 7, 7, at);
    trace_text += &closing(7);
    let trace = write(&dir, "perfflow.array.node.7.pfw", &trace_text);

    let output = perfflow_trace(&["summary", path_str(&trace), "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let step = json["functions"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["name"] == "step"))
        .expect("step");
    assert_eq!(step["calls"], 10);
    assert_eq!(step["total_ns"], 55_000);
    assert_eq!(step["mean_ns"], 5_500);
    assert_eq!(step["percentiles"]["p50_ns"], 5_000);
    assert_eq!(step["percentiles"]["p90_ns"], 9_000);
    assert_eq!(step["percentiles"]["p99_ns"], 10_000);
    assert_eq!(json["span_ns"], 55_000);

    let output = perfflow_trace(&["summary", path_str(&trace), "--csv"]);
    let csv = text(&output.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines,
        [
            "name,calls,total_ns,self_ns,min_ns,mean_ns,max_ns,p50_ns,p90_ns,p99_ns",
            "main,1,55000,0,55000,55000,55000,55000,55000,55000",
            "step,10,55000,55000,1000,5500,10000,5000,9000,10000",
        ]
    );

    // The table stays as it was.
    let output = perfflow_trace(&["summary", path_str(&trace)]);
    assert!(text(&output.stdout).contains("function  calls  total (us)"));
}

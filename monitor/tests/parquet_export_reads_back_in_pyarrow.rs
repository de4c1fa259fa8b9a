//! The Parquet export read by an independent reader: Apache Arrow's
//! `pyarrow.parquet`, which also reports how it is encoded (zstd,
//! dictionary, statistics, a timestamp column). Needs `python3` with
//! `pyarrow` (`pip install pyarrow`); without it the test fails and says
//! so.

mod job_dir;

use std::process::Command;

use perfflow_monitor::export::{export, ExportFormat};
use serde_json::{json, Value};

const READER: &str = r#"
import json, sys
import pyarrow.parquet as pq
f = pq.ParquetFile(sys.argv[1])
t = f.read()
print(json.dumps({
    "num_row_groups": f.metadata.num_row_groups,
    "types": {field.name: str(field.type) for field in t.schema},
    "nullable": {field.name: field.nullable for field in t.schema},
    "compression": sorted({f.metadata.row_group(0).column(i).compression
                           for i in range(f.metadata.num_columns)}),
    "dictionary": f.metadata.row_group(0).column(0).has_dictionary_page,
    "statistics": all(f.metadata.row_group(0).column(i).is_stats_set
                      for i in range(f.metadata.num_columns)),
    "time": [str(v) for v in t.column("Time").to_pylist()],
    "columns": t.drop_columns(["Time"]).to_pydict(),
}))
"#;

fn read_with_pyarrow(path: &std::path::Path) -> Value {
    let out = Command::new("python3")
        .arg("-c")
        .arg(READER)
        .arg(path)
        .output()
        .expect("python3 is needed for this test (with pyarrow: pip install pyarrow)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("No module named 'pyarrow'"),
        "pyarrow is needed for this test: pip install pyarrow"
    );
    assert!(
        out.status.success(),
        "pyarrow could not read {}:\n{stderr}",
        path.display()
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn pyarrow_reads_the_cpu_table_with_strings_doubles_and_nulls() {
    let dir = tempfile::tempdir().unwrap();
    job_dir::write_fixture(dir.path());
    export(dir.path(), &[ExportFormat::Parquet]).unwrap();
    let read = read_with_pyarrow(&dir.path().join("cpu_metrics.parquet"));
    assert_eq!(read["num_row_groups"], 1);
    assert_eq!(read["types"]["Host"], "string");
    assert_eq!(read["nullable"]["Host"], false);
    assert_eq!(read["types"]["Timestamps"], "double");
    assert_eq!(read["types"]["Time"], "timestamp[ns, tz=UTC]");
    assert_eq!(read["compression"], json!(["ZSTD"]));
    assert_eq!(read["dictionary"], true);
    assert_eq!(read["statistics"], true);
    assert_eq!(read["time"][1], "2025-11-21 04:40:01+00:00");
    assert_eq!(read["time"][3], "2025-11-21 04:40:00.250000+00:00");
    assert_eq!(read["types"]["cpu_percent [%]"], "double");
    assert_eq!(read["nullable"]["cpu_percent [%]"], true);
    let t = 1_763_700_000.0;
    assert_eq!(
        read["columns"],
        json!({
            "Host": ["nodeA", "nodeA", "nodeA", "nodeB", "nodeB", "nodeB"],
            "Timestamps": [t, t + 1.0, t + 2.0, t + 0.25, t + 1.25, t + 2.25],
            "cpu_percent [%]": [10.0, 20.5, null, 5.0, 6.0, null],
            "idle": [0.0, 0.0, 0.0, null, null, null],
            "memory_rss [bytes]": [1000.0, 2000.0, 3000.0, 10.0, 20.0, 30.0],
            "only_b [count, \"raw\"]": [null, null, null, 1.0, 2.0, 3.0],
            "RAPL dram 0 [W]": [1.0, 2.0, 3.0, null, null, null],
            "RAPL package 0 [W]": [50.5, 60.0, 70.0, null, null, null]
        })
    );
}

#[test]
fn pyarrow_reads_a_table_longer_than_one_bit_packed_run_and_fifteen_columns() {
    // 1000 rows over two hosts and 20 series: level runs of many groups of
    // 8, list headers in the long form, every fifth value missing.
    let dir = tempfile::tempdir().unwrap();
    let metrics = dir.path().join("metrics");
    std::fs::create_dir_all(&metrics).unwrap();
    let mut group = json!({"host_names": ["h1", "h2"], "units": {}});
    for host in ["h1", "h2"] {
        let mut obj = json!({"time_stamps": (0..500).map(f64::from).collect::<Vec<_>>()});
        for s in 0..20 {
            let series: Vec<Value> = (0..500)
                .map(|i| {
                    if i % 5 == s % 5 {
                        Value::Null
                    } else {
                        json!(i * s)
                    }
                })
                .collect();
            obj[format!("s{s:02}")] = Value::Array(series);
        }
        group[host] = obj;
    }
    std::fs::write(metrics.join("perf_metrics.json"), group.to_string()).unwrap();
    export(dir.path(), &[ExportFormat::Parquet]).unwrap();
    let read = read_with_pyarrow(&dir.path().join("perf_metrics.parquet"));
    let columns = read["columns"].as_object().unwrap();
    assert_eq!(columns.len(), 22);
    for s in 0..20i64 {
        let col = columns[&format!("s{s:02}")].as_array().unwrap();
        assert_eq!(col.len(), 1000);
        for (row, v) in col.iter().enumerate() {
            let i = (row % 500) as i64;
            let expected = if i % 5 == s % 5 {
                Value::Null
            } else {
                json!((i * s) as f64)
            };
            assert_eq!(*v, expected, "series s{s:02} row {row}");
        }
    }
}

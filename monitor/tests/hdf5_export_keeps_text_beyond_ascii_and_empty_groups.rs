//! The HDF5 export read back by `pandas.read_hdf` keeps host and column
//! names beyond ASCII (UTF-8 in the file's fixed-length strings and in the
//! pickled host column), and a group without samples reads back as an
//! empty frame with the group's columns. Needs `python3` with `pandas`
//! and `tables` (PyTables). Built with the monitor's feature `hdf5`.
#![cfg(feature = "hdf5")]

use std::fs;
use std::process::Command;

use perfflow_monitor::export::{export, ExportFormat};
use serde_json::{json, Value};

const READER: &str = r#"
import json, sys
import pandas as pd

out = {}
for group in sys.argv[2:]:
    df = pd.read_hdf(f"{sys.argv[1]}/{group}.h5", group)
    out[group] = {
        "columns": list(df.columns),
        "hosts": list(df["Host"]),
        "dtypes": [str(t) for t in df.dtypes],
        "rows": [[None if pd.isna(v) else float(v) for v in row]
                 for row in df.drop(columns=["Host"]).itertuples(index=False)],
    }
print(json.dumps(out))
"#;

#[test]
fn hdf5_export_keeps_text_beyond_ascii_and_empty_groups() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = dir.path().join("metrics");
    fs::create_dir_all(&metrics).unwrap();
    let cpu = json!({
        "host_names": ["nœud-1", "n2"],
        "sampling_frequency": 1.0,
        "units": {"latency": "µs"},
        "nœud-1": {"time_stamps": [100.5, 101.5], "latency": [1.5, null]},
        "n2": {"time_stamps": [100.0], "latency": [7.0]}
    });
    let perf = json!({
        "host_names": ["n1"],
        "sampling_frequency": 1.0,
        "n1": {"time_stamps": [], "cycles": []}
    });
    fs::write(metrics.join("cpu_metrics.json"), cpu.to_string()).unwrap();
    fs::write(metrics.join("perf_metrics.json"), perf.to_string()).unwrap();
    export(dir.path(), &[ExportFormat::Hdf5]).unwrap();

    let out = Command::new("python3")
        .arg("-c")
        .arg(READER)
        .arg(dir.path())
        .args(["cpu_metrics", "perf_metrics"])
        .output()
        .expect("python3 with pandas and tables is needed for this test");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("Missing optional dependency 'pytables'"),
        "PyTables is needed for this test (pandas.read_hdf): pip install tables"
    );
    assert!(
        out.status.success(),
        "pandas could not read the export:\n{stderr}"
    );
    let read: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        read["cpu_metrics"],
        json!({
            "columns": ["Host", "Timestamps", "latency [µs]"],
            "hosts": ["nœud-1", "nœud-1", "n2"],
            "dtypes": ["object", "float64", "float64"],
            "rows": [[100.5, 1.5], [101.5, null], [100.0, 7.0]],
        })
    );
    assert_eq!(
        read["perf_metrics"]["columns"],
        json!(["Host", "Timestamps", "cycles"])
    );
    assert_eq!(read["perf_metrics"]["rows"], json!([]));
}

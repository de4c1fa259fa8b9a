//! Each of perfmon's export formats that perfflow-monitor writes, read back
//! by pandas with its own reader (`read_csv`, `read_json`, `read_parquet`,
//! `read_feather`, `read_orc`, `DataFrame(read_pickle(...))` and
//! `read_hdf`), gives the same table: perfmon's column names in the same
//! order, the same hosts, times and values, missing values as NaN; the
//! HDF5 file's frame equals the CSV file's, dtypes included. Needs
//! `python3` with `pandas`, `pyarrow` and `tables` (PyTables, which
//! `read_hdf` reads with); without them the test fails and says so.

mod job_dir;

use std::process::Command;

use perfflow_monitor::export::{export, ExportFormat};
use serde_json::{json, Value};

const READER: &str = r#"
import json, sys
import pandas as pd

d = sys.argv[1]
with_hdf5 = sys.argv[2] == "hdf5"
frames = {
    "csv": pd.read_csv(f"{d}/cpu_metrics.csv"),
    # Without convert_dates=False, pandas parses a column named Timestamps as dates.
    "json": pd.read_json(f"{d}/cpu_metrics.records.json", orient="records", convert_dates=False),
    "parquet": pd.read_parquet(f"{d}/cpu_metrics.parquet"),
    "feather": pd.read_feather(f"{d}/cpu_metrics.feather"),
    "orc": pd.read_orc(f"{d}/cpu_metrics.orc"),
    "pickle": pd.DataFrame(pd.read_pickle(f"{d}/cpu_metrics.pkl")),
}
if with_hdf5:
    frames["hdf5"] = pd.read_hdf(f"{d}/cpu_metrics.h5", "cpu_metrics")
# The HDF5 frame is the CSV frame (values, names, host names as text, every
# other column float64, where read_csv makes integers of whole numbers),
# also when read without a key (the file holds one frame).
if with_hdf5:
    csv = frames["csv"].astype({c: "float64" for c in frames["csv"].columns if c != "Host"})
    pd.testing.assert_frame_equal(frames["hdf5"], csv)
    pd.testing.assert_frame_equal(pd.read_hdf(f"{d}/cpu_metrics.h5"), csv)
out = {}
for name, df in frames.items():
    typed = {}
    if "Time" in df.columns:
        typed = {"Time": [str(v) for v in df["Time"]], "Time dtype": str(df["Time"].dtype)}
        df = df.drop(columns=["Time"])
    out[name] = {
        "columns": list(df.columns),
        "hosts": [str(h) for h in df["Host"]],
        "rows": [[None if pd.isna(v) else float(v) for v in row]
                 for row in df.drop(columns=["Host"]).itertuples(index=False)],
        **typed,
    }
print(json.dumps(out))
"#;

#[test]
fn every_export_format_reads_back_in_pandas() {
    let dir = tempfile::tempdir().unwrap();
    job_dir::write_fixture(dir.path());
    // HDF5 where this build has it (the feature `hdf5`).
    let formats: Vec<ExportFormat> = ExportFormat::ALL
        .into_iter()
        .filter(|f| f.available())
        .collect();
    export(dir.path(), &formats).unwrap();
    let with_hdf5 = if cfg!(feature = "hdf5") { "hdf5" } else { "" };
    let out = Command::new("python3")
        .arg("-c")
        .arg(READER)
        .arg(dir.path())
        .arg(with_hdf5)
        .output()
        .expect("python3 with pandas, pyarrow and tables is needed for this test");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for module in ["pandas", "pyarrow"] {
        assert!(
            !stderr.contains(&format!("No module named '{module}'")),
            "{module} is needed for this test: pip install {module}"
        );
    }
    assert!(
        !stderr.contains("Missing optional dependency 'pytables'"),
        "PyTables is needed for this test (pandas.read_hdf): pip install tables"
    );
    assert!(
        out.status.success(),
        "pandas could not read an export:\n{stderr}"
    );
    let read: Value = serde_json::from_slice(&out.stdout).unwrap();

    let t = job_dir::START;
    let expected = json!({
        "columns": ["Host", "Timestamps", "cpu_percent [%]", "idle", "memory_rss [bytes]",
                    "only_b [count, \"raw\"]", "RAPL dram 0 [W]", "RAPL package 0 [W]"],
        "hosts": ["nodeA", "nodeA", "nodeA", "nodeB", "nodeB", "nodeB"],
        "rows": [
            [t, 10.0, 0.0, 1000.0, null, 1.0, 50.5],
            [t + 1.0, 20.5, 0.0, 2000.0, null, 2.0, 60.0],
            [t + 2.0, null, 0.0, 3000.0, null, 3.0, 70.0],
            [t + 0.25, 5.0, null, 10.0, 1.0, null, null],
            [t + 1.25, 6.0, null, 20.0, 2.0, null, null],
            [t + 2.25, null, null, 30.0, 3.0, null, null],
        ],
    });
    for format in ["csv", "json", "parquet", "feather", "orc", "pickle", "hdf5"] {
        if format == "hdf5" && !cfg!(feature = "hdf5") {
            continue;
        }
        let table = &read[format];
        for key in ["columns", "hosts", "rows"] {
            assert_eq!(table[key], expected[key], "{format}: {key}");
        }
    }
    for format in ["parquet", "feather", "orc"] {
        let table = &read[format];
        assert_eq!(
            table["Time"][3], "2025-11-21 04:40:00.250000+00:00",
            "{format}"
        );
        assert!(
            table["Time dtype"]
                .as_str()
                .unwrap()
                .starts_with("datetime64[ns"),
            "{format}: {}",
            table["Time dtype"]
        );
    }
}

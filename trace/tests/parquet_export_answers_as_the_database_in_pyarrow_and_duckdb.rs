//! The database exported as Parquet, read back by pyarrow and by DuckDB
//! (`pip install pyarrow duckdb`; without them the test fails and says
//! so): both give the same answers as the SQLite query on the same data
//! (calls per function, the parent of each span, metric max per host,
//! rows per table), the partitions are by run and host, and the files are
//! zstd-compressed, dictionary-encoded, with statistics and nanosecond
//! timestamps.

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use support::*;

const CPU: &str = r#"{
  "host_names": ["nodeA", "nodeB"],
  "units": {"cpu_percent": "%"},
  "nodeA": {"time_stamps": [1763700000.0, 1763700001.0], "cpu_percent": [10.0, 42.5]},
  "nodeB": {"time_stamps": [1763700000.0, 1763700001.0], "cpu_percent": [7.0, null]}
}"#;

/// Two hosts with the same pid: nested calls on alpha, a flow from alpha
/// to beta.
fn traces(dir: &Path) {
    let t = 1_700_000_000_000_000_000u64;
    let mut alpha = String::new();
    alpha += &event("main", "app.c", "B", 100, 100, t);
    for call in 0..2u64 {
        let at = t + 1000 + call * 10_000;
        alpha += &event("outer", "app.c", "B", 100, 100, at);
        for inner in 0..3u64 {
            let start = at + 100 + inner * 1000;
            alpha += &event("inner", "app.c", "B", 100, 100, start);
            alpha += &event("inner", "app.c", "E", 100, 100, start + 500);
        }
        alpha += &event("outer", "app.c", "E", 100, 100, at + 5000);
    }
    alpha += &flow("send", "s", 100, 100, t + 30_000, 7);
    alpha += &event("main", "app.c", "E", 100, 100, t + 40_000);
    runtime_file(dir, "alpha", "app", 100, &alpha);
    let mut beta = String::new();
    beta += &event("worker", "app.c", "B", 100, 101, t + 31_000);
    beta += &flow("send", "f", 100, 101, t + 32_000, 7);
    beta += &event("worker", "app.c", "E", 100, 101, t + 33_000);
    runtime_file(dir, "beta", "app", 100, &beta);
}

const READER: &str = r#"
import json, sys
import duckdb
import pyarrow.dataset as ds
import pyarrow.parquet as pq

root = sys.argv[1]
out = {}

def table(name):
    return ds.dataset(f"{root}/{name}", format="parquet", partitioning="hive").to_table()

rows = {}
for name in ["run", "run_label", "source_file", "process", "thread", "span", "instant",
             "flow", "counter", "metric"]:
    try:
        rows[name] = table(name).num_rows
    except FileNotFoundError:
        rows[name] = 0
out["pyarrow_rows"] = rows

span = table("span")
out["span_types"] = {f.name: str(f.type) for f in span.schema}
calls = {}
for name in span.column("name").to_pylist():
    calls[name] = calls.get(name, 0) + 1
out["pyarrow_calls"] = sorted(f"{k},{v}" for k, v in calls.items())

def q(sql):
    return [",".join("" if v is None else str(v) for v in row) for row in duckdb.sql(sql).fetchall()]

def src(name):
    return f"read_parquet('{root}/{name}/**/*.parquet', hive_partitioning = true)"

out["duckdb_calls"] = q(f"SELECT name, COUNT(*) FROM {src('span')} GROUP BY name ORDER BY name")
out["duckdb_parents"] = q(
    f"SELECT s.name, p.name FROM {src('span')} s JOIN {src('span')} p ON p.id = s.parent "
    "ORDER BY s.id")
out["duckdb_span_hosts"] = q(
    f"SELECT run, host, COUNT(*) FROM {src('span')} GROUP BY run, host ORDER BY run, host")
out["duckdb_metric_max"] = q(
    f"SELECT run, host, MAX(value) FROM {src('metric')} WHERE series = 'cpu_percent' "
    "GROUP BY run, host ORDER BY run, host")
out["duckdb_durations"] = q(
    f"SELECT name, SUM(epoch_ns(end_ns) - epoch_ns(start_ns)) FROM {src('span')} "
    "GROUP BY name ORDER BY name")
out["duckdb_flow"] = q(
    f"SELECT a.name, b.name, epoch_ns(f.to_ns) - epoch_ns(f.from_ns) FROM {src('flow')} f "
    f"JOIN {src('span')} a ON a.id = f.from_span JOIN {src('span')} b ON b.id = f.to_span")

files = sorted(str(p) for p in __import__("pathlib").Path(root).rglob("*.parquet"))
out["files"] = [f[len(root) + 1:] for f in files]
meta = pq.ParquetFile(f"{root}/span/run=first/host=alpha/part-0.parquet").metadata
columns = {}
for i in range(meta.num_columns):
    c = meta.row_group(0).column(i)
    columns[c.path_in_schema] = {
        "compression": c.compression,
        "dictionary": c.has_dictionary_page,
        "statistics": c.is_stats_set,
    }
out["span_columns"] = columns
print(json.dumps(out))
"#;

fn read_back(root: &Path) -> Value {
    let out = Command::new("python3")
        .arg("-c")
        .arg(READER)
        .arg(root)
        .output()
        .expect("python3 is needed for this test (with pyarrow and duckdb)");
    let stderr = text(&out.stderr);
    for module in ["pyarrow", "duckdb"] {
        assert!(
            !stderr.contains(&format!("No module named '{module}'")),
            "{module} is needed for this test: pip install {module}"
        );
    }
    assert!(out.status.success(), "reading the export failed:\n{stderr}");
    serde_json::from_slice(&out.stdout).expect("the reader prints JSON")
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}

#[test]
fn parquet_export_answers_as_the_database_in_pyarrow_and_duckdb() {
    let dir = scratch("export_parquet");
    let first = dir.join("first");
    std::fs::create_dir_all(first.join("metrics")).unwrap();
    traces(&first);
    write(&first.join("metrics"), "cpu_metrics.json", CPU);
    let second = dir.join("second");
    std::fs::create_dir_all(second.join("metrics")).unwrap();
    write(
        &second.join("metrics"),
        "cpu_metrics.json",
        &CPU.replace("42.5", "99.0"),
    );
    let db = dir.join("runs.sqlite");
    for (run, input) in [("first", &first), ("second", &second)] {
        let output = perfflow_trace(&["db", "-o", path_str(&db), "--run", run, path_str(input)]);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    }

    let out = dir.join("parquet");
    let output = perfflow_trace(&["export", "--parquet", path_str(&out), path_str(&db)]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("span: 10 rows in 2 files"),
        "{}",
        text(&output.stdout)
    );
    let exported = perfflow_trace::export(
        std::slice::from_ref(&db),
        &dir.join("again"),
        &Default::default(),
    )
    .expect("export");
    let read = read_back(&out);

    // Rows per table: the database's, in both pyarrow and the report.
    for done in &exported {
        let count = sql(&db, &format!("SELECT COUNT(*) FROM {}", done.table));
        assert_eq!(count, [done.rows.to_string()], "{}", done.table);
        assert_eq!(
            read["pyarrow_rows"][&done.table], done.rows,
            "{}",
            done.table
        );
    }
    assert_eq!(exported.len(), 10);

    let calls = sql(
        &db,
        "SELECT name, COUNT(*) FROM span GROUP BY name ORDER BY name",
    );
    assert_eq!(calls, ["inner,6", "main,1", "outer,2", "worker,1"]);
    assert_eq!(strings(&read["pyarrow_calls"]), calls);
    assert_eq!(strings(&read["duckdb_calls"]), calls);

    let parents = sql(
        &db,
        "SELECT s.name, p.name FROM span s JOIN span p ON p.id = s.parent ORDER BY s.id",
    );
    assert_eq!(parents.len(), 8);
    assert_eq!(strings(&read["duckdb_parents"]), parents);

    let span_hosts = sql(
        &db,
        "SELECT r.name, p.host, COUNT(*) FROM span s JOIN process p ON p.id = s.process
         JOIN run r ON r.id = p.run GROUP BY r.name, p.host ORDER BY r.name, p.host",
    );
    assert_eq!(span_hosts, ["first,alpha,9", "first,beta,1"]);
    assert_eq!(strings(&read["duckdb_span_hosts"]), span_hosts);

    let metric_max = sql(
        &db,
        "SELECT r.name, m.host, MAX(m.value) FROM metric m JOIN run r ON r.id = m.run
         WHERE m.series = 'cpu_percent' GROUP BY r.name, m.host ORDER BY r.name, m.host",
    );
    assert_eq!(
        metric_max,
        [
            "first,nodeA,42.5",
            "first,nodeB,7.0",
            "second,nodeA,99.0",
            "second,nodeB,7.0"
        ]
    );
    assert_eq!(strings(&read["duckdb_metric_max"]), metric_max);

    // Nanoseconds survive: durations and the flow's latency to the ns.
    let durations = sql(
        &db,
        "SELECT name, SUM(end_ns - start_ns) FROM span GROUP BY name ORDER BY name",
    );
    assert_eq!(strings(&read["duckdb_durations"]), durations);
    assert_eq!(strings(&read["duckdb_flow"]), ["main,worker,2000"]);

    assert_eq!(read["span_types"]["start_ns"], "timestamp[ns, tz=UTC]");
    assert_eq!(read["span_types"]["name"], "string");
    assert_eq!(read["span_types"]["id"], "int64");
    for (column, facts) in read["span_columns"].as_object().unwrap() {
        assert_eq!(facts["compression"], "ZSTD", "{column}");
        assert_eq!(facts["statistics"], true, "{column}");
    }
    assert_eq!(read["span_columns"]["name"]["dictionary"], true);

    let files = strings(&read["files"]);
    for expected in [
        "span/run=first/host=alpha/part-0.parquet",
        "span/run=first/host=beta/part-0.parquet",
        "metric/run=second/host=nodeB/part-0.parquet",
        "flow/run=first/part-0.parquet",
        "run/run=second/part-0.parquet",
    ] {
        assert!(
            files.contains(&expected.to_string()),
            "{expected} in {files:?}"
        );
    }
    assert!(!files.iter().any(|f| f.starts_with("span/run=second")));

    // A second export into the same, now full, directory is refused.
    let again = perfflow_trace(&["export", "--parquet", path_str(&out), path_str(&db)]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again.stderr).contains("not empty"),
        "{}",
        text(&again.stderr)
    );

    // Traces given directly are imported on the way, and the temporary
    // database does not stay.
    let direct = dir.join("direct");
    let output = perfflow_trace(&[
        "export",
        "--parquet",
        path_str(&direct),
        "--run",
        "first",
        path_str(&first),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("span: 10 rows in 2 files"));
    assert!(direct
        .join("span/run=first/host=alpha/part-0.parquet")
        .is_file());
    let left: Vec<_> = std::fs::read_dir(&direct)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

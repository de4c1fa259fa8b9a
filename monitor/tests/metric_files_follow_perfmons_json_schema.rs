//! Every metric file the monitor writes, checked by an independent
//! validator (Python's `jsonschema`) against perfmon's published schema of
//! `cpu_metrics.json` and against perfmon's layout for the others: numbers
//! only, never `null`. Needs `python3` with `jsonschema` (`pip install
//! jsonschema`); without it the test fails and says so.

mod cli_support;

use cli_support::{metrics, monitor, read_json, run_ok};
use std::path::Path;
use std::process::Command;

const VALIDATOR: &str = r#"
import glob, json, os, sys
import jsonschema
cpu_schema = json.load(open(sys.argv[1]))
layout = json.load(open(sys.argv[2]))
Validator = jsonschema.Draft202012Validator
# The validator must reject a null where the schema says number.
bad = {"host_names": ["h"], "sampling_frequency": 1,
       "node-0-hostname": {"cpu_percent": [None], "time_stamps": [1]}}
assert not Validator(cpu_schema).is_valid(bad)
assert not Validator(layout).is_valid(bad)
checked = {}
for path in sorted(glob.glob(os.path.join(sys.argv[3], "*_metrics.json"))):
    doc = json.load(open(path))
    name = os.path.basename(path)
    schemas = [layout] + ([cpu_schema] if name == "cpu_metrics.json" else [])
    for host in doc["host_names"]:
        # "node-0-hostname" stands for each host's name.
        inst = {k: v for k, v in doc.items() if k not in doc["host_names"]}
        inst["node-0-hostname"] = doc[host]
        for schema in schemas:
            Validator(schema).validate(inst)
    checked[name] = len(doc["host_names"])
print(json.dumps(checked))
"#;

fn validate(metrics_dir: &Path) -> serde_json::Value {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let out = Command::new("python3")
        .arg("-c")
        .arg(VALIDATOR)
        .arg(data.join("perfmon_cpu_metrics.schema.json"))
        .arg(data.join("perfmon_metric_file.schema.json"))
        .arg(metrics_dir)
        .output()
        .expect("python3 is needed for this test (with jsonschema: pip install jsonschema)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("No module named 'jsonschema'"),
        "jsonschema is needed for this test: pip install jsonschema"
    );
    assert!(out.status.success(), "validation failed:\n{stderr}");
    serde_json::from_slice(&out.stdout).expect("validator output")
}

#[test]
fn cpu_and_perf_files_of_a_short_job_follow_perfmons_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut c = monitor(tmp.path());
    c.args(["-i", "100ms", "-v", "-d"]).arg(&out).args([
        "--host-name",
        "schema",
        "--",
        "sh",
        "-c",
        "for i in 1 2 3 4; do sleep 0.2 & wait; done",
    ]);
    run_ok(c, &out);
    let checked = validate(&metrics(&out));
    assert_eq!(checked["cpu_metrics.json"], 1, "{checked}");
    assert_eq!(checked["perf_metrics.json"], 1, "{checked}");

    let cpu = read_json(&metrics(&out).join("cpu_metrics.json"));
    let host = &cpu["schema"];
    let units = &cpu["units"];
    // perfmon's keys with perfmon's units.
    for (key, unit) in [
        ("cpu_time", "s"),
        ("cpu_percent", "%"),
        ("cpu_percent_sys", "%"),
        ("net_io_counters.bytes_recv", "bytes"),
        ("net_io_counters.packets_sent", "count"),
        ("io_counters.read_count", "count"),
        ("memory_info.rss", "bytes"),
    ] {
        assert_eq!(units[key], unit, "{key}");
    }
    // Raw network counters never go down.
    let recv: Vec<f64> = host["net_io_counters"]["bytes_recv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(recv.windows(2).all(|w| w[0] <= w[1]), "{recv:?}");
    assert_eq!(host["parent_proc_md"]["name"], "sh");

    // perfmon's list of the perf events counted, and with -v the run's
    // configuration (JSON text, which YAML parsers read).
    let list = read_json(&out.join(".perf_event_list.json"));
    assert_eq!(list["host_name"], "schema");
    assert!(list["software_events"]["task-clock"] == serde_json::json!([]));
    let config = read_json(&out.join("configs/schema_run_config.yml"));
    assert_eq!(config["sampling_freq"], 0.1);
    assert_eq!(config["cpu_accounting"], "reaped-children");
    let meta = read_json(&metrics(&out).join("meta_data.json"));
    assert_eq!(
        meta["schema"]["cpu_accounting"]["method"],
        "reaped-children"
    );
}

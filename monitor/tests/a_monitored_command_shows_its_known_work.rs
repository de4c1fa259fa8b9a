//! An end-to-end run: `perfflow-monitor -i 200ms -r -e csv json parquet
//! -- sh -c '...'` over processes doing known CPU, memory and file work.
//! The per-job files follow the schema the report reads and their values
//! reflect the work; the CSV, records JSON and Parquet exports hold the
//! same samples (the Parquet file read back by pyarrow); the plots and the
//! report exist and the report renders in headless Chromium; the counter
//! trace parses, the log exists and stdout stays empty.

mod cli_support;
mod job_dir;

use cli_support::{metrics, monitor, read_json, run};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const MIB: f64 = 1024.0 * 1024.0;

/// Checks one metric file against the schema; returns the series by
/// dotted key for `host`.
fn validate(file: &Value, host: &str) -> Vec<(String, Vec<Option<f64>>)> {
    let hosts: Vec<&str> = file["host_names"]
        .as_array()
        .expect("host_names")
        .iter()
        .map(|h| h.as_str().expect("host name"))
        .collect();
    let mut sorted = hosts.clone();
    sorted.sort();
    assert_eq!(hosts, sorted, "host_names sorted");
    assert!(file["sampling_frequency"].as_f64().unwrap() > 0.0);
    let units = file["units"].as_object().expect("units");
    let mut out = Vec::new();
    for h in &hosts {
        let obj = file[*h].as_object().expect("host object");
        let times = obj["time_stamps"].as_array().expect("time_stamps");
        assert!(!times.is_empty());
        let t: Vec<f64> = times.iter().map(|v| v.as_f64().unwrap()).collect();
        assert!(t.windows(2).all(|w| w[0] < w[1]), "time stamps increase");
        assert!(t[0] > 1.6e9 && t[0] < 4e9, "Unix seconds: {}", t[0]);
        let mut stack: Vec<(String, &Value)> = obj.iter().map(|(k, v)| (k.clone(), v)).collect();
        while let Some((key, v)) = stack.pop() {
            if key == "time_stamps" {
                continue;
            }
            if key == "parent_proc_md" {
                assert!(v["pid"].is_number(), "parent_proc_md {v}");
                continue;
            }
            match v {
                Value::Object(m) => stack.extend(m.iter().map(|(k, v)| (format!("{key}.{k}"), v))),
                Value::Array(a) if a.iter().all(Value::is_string) && !a.is_empty() => {}
                Value::Array(a) if key == "child_proc_md" => assert!(a.is_empty()),
                Value::Array(a) => {
                    assert_eq!(a.len(), times.len(), "{key}: one value per time stamp");
                    assert!(a.iter().all(Value::is_number), "{key}: numbers only");
                    assert!(units.contains_key(&key), "{key} has no unit");
                    if *h == host {
                        out.push((key, a.iter().map(Value::as_f64).collect()));
                    }
                }
                other => panic!("{key}: unexpected {other}"),
            }
        }
    }
    out
}

fn max_of(series: &[(String, Vec<Option<f64>>)], key: &str) -> f64 {
    series
        .iter()
        .find(|(k, _)| k == key)
        .unwrap_or_else(|| panic!("no series {key}"))
        .1
        .iter()
        .flatten()
        .fold(f64::MIN, |a, &b| a.max(b))
}

#[test]
fn cpu_memory_and_writes_of_a_command_show_in_the_metrics() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let work = "\
        timeout 60 sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done' & \
        x=$(head -c 200000000 /dev/zero | tr '\\0' a); \
        dd if=/dev/zero of=data.bin bs=1M count=64 conv=fsync 2>/dev/null; \
        sleep 1.5; wait";
    let mut c = monitor(tmp.path());
    c.args(["-i", "200ms", "-d"]).arg(&out).args([
        "--host-name",
        "e2e",
        "-e",
        "csv",
        "json",
        "parquet",
        "-r",
        "--",
        "sh",
        "-c",
        work,
    ]);
    let o = run(c, Duration::from_secs(60));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stdout.is_empty(),
        "stdout: {}",
        String::from_utf8_lossy(&o.stdout)
    );

    let cpu = read_json(&metrics(&out).join("cpu_metrics.json"));
    assert_eq!(cpu["sampling_frequency"], 0.2);
    let s = validate(&cpu, "e2e");
    assert_eq!(cpu["units"]["cpu_percent"], "%");
    assert_eq!(cpu["units"]["memory_info.rss"], "bytes");
    // A fixed amount of work (about 0.3 s of CPU), not a time: how much
    // of a core it gets depends on what else the machine runs.
    assert!(
        max_of(&s, "cpu_percent") > 0.0,
        "cpu {}",
        max_of(&s, "cpu_percent")
    );
    let cpu_time = max_of(&s, "cpu_time");
    assert!(cpu_time >= 0.1, "cpu_time {cpu_time} s");
    let rss = max_of(&s, "memory_info.rss");
    assert!(rss > 150.0 * MIB, "rss {} MiB", rss / MIB);
    let written = max_of(&s, "io_chars.write_chars");
    assert!(written >= 64.0 * MIB, "written {} MiB", written / MIB);
    assert!(max_of(&s, "num_procs") >= 3.0);
    assert!(
        cpu["e2e"]["child_proc_md"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p.as_str().unwrap().starts_with("timeout (")),
        "the spinner's parent, timeout, is named among the job's processes"
    );
    validate(&read_json(&metrics(&out).join("perf_metrics.json")), "e2e");

    let meta = read_json(&metrics(&out).join("meta_data.json"));
    for key in [
        "job_id",
        "scheduler",
        "user",
        "start_time",
        "end_time",
        "host_names",
    ] {
        assert!(!meta[key].is_null(), "meta_data lacks {key}");
    }
    assert!(meta["end_time"].as_f64() > meta["start_time"].as_f64());
    assert_eq!(meta["exit_status"], 0);
    assert!(meta["e2e"]["unavailable"].is_array());
    assert!(meta["e2e"]["cpu"].is_object());

    let pfw = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("perfflow.monitor.e2e.") && n.ends_with(".pfw")
        })
        .expect("the counter trace");
    let trace = read_json(&pfw);
    let events = trace.as_array().unwrap();
    let counters: Vec<&Value> = events.iter().filter(|e| e["ph"] == "C").collect();
    assert!(counters.len() > 20);
    let pid = &counters[0]["pid"];
    assert!(counters
        .iter()
        .all(|e| &e["pid"] == pid && e["args"]["value"].is_number()));
    assert!(counters.iter().any(|e| e["name"] == "proc cpu (%)"));
    let ts = counters[0]["ts"].as_f64().unwrap();
    assert!(
        ts > 1.6e15 && ts < 4e15,
        "microseconds since the epoch: {ts}"
    );
    assert!(events
        .iter()
        .any(|e| e["name"] == "process_name" && &e["pid"] == pid));

    let log = std::fs::read_to_string(out.join("perfflow-monitor.e2e.log")).unwrap();
    assert!(log.contains("exported"), "{log}");
    assert!(log.contains("report "), "{log}");

    let samples = cpu["e2e"]["time_stamps"].as_array().unwrap().len();
    let max_cpu = max_of(&s, "cpu_percent");
    exports_hold_the_samples(&out, samples, max_cpu);
    let job_id = meta["job_id"].as_str().expect("job id");
    report_has_plots_and_renders(&out, job_id);
}

/// The CSV, records JSON and Parquet tables of `cpu_metrics` have one row
/// per sample of host `e2e`, and their CPU column peaks at `max_cpu`.
fn exports_hold_the_samples(out: &Path, samples: usize, max_cpu: f64) {
    const CPU: &str = "cpu_percent [%]";
    let csv = std::fs::read_to_string(out.join("cpu_metrics.csv")).expect("CSV export");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[..2], ["Host", "Timestamps"]);
    let col = header.iter().position(|h| *h == CPU).expect("CPU column");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), samples, "CSV rows");
    assert!(rows
        .iter()
        .all(|r| r[0] == "e2e" && r.len() == header.len()));
    let csv_max = rows
        .iter()
        .filter_map(|r| r[col].parse::<f64>().ok())
        .fold(f64::MIN, f64::max);
    assert!(
        (csv_max - max_cpu).abs() < 1e-6,
        "CSV {csv_max} vs {max_cpu}"
    );

    let records = read_json(&out.join("cpu_metrics.records.json"));
    let records = records.as_array().expect("records");
    assert_eq!(records.len(), samples, "records");
    assert!(records.iter().all(|r| r["Host"] == "e2e"));
    let json_max = records
        .iter()
        .filter_map(|r| r[CPU].as_f64())
        .fold(f64::MIN, f64::max);
    assert!((json_max - max_cpu).abs() < 1e-6, "JSON {json_max}");

    let read = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, pyarrow.parquet as pq\n\
             t = pq.read_table(sys.argv[1])\n\
             c = [v for v in t.column(sys.argv[2]).to_pylist() if v is not None]\n\
             print(t.num_rows, max(c), set(t.column('Host').to_pylist()) == {'e2e'})",
        )
        .arg(out.join("cpu_metrics.parquet"))
        .arg(CPU)
        .output()
        .expect("python3 with pyarrow is needed for this test (pip install pyarrow)");
    assert!(
        read.status.success(),
        "pyarrow could not read the Parquet export: {}",
        String::from_utf8_lossy(&read.stderr)
    );
    let text = String::from_utf8_lossy(&read.stdout);
    let fields: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(fields.len(), 3, "{text}");
    assert_eq!(fields[0].parse::<usize>().unwrap(), samples, "Parquet rows");
    let parquet_max: f64 = fields[1].parse().unwrap();
    assert!(
        (parquet_max - max_cpu).abs() < 1e-6,
        "Parquet {parquet_max}"
    );
    assert_eq!(fields[2], "True", "every Parquet row is host e2e");
}

/// `plots/` holds perfmon's CPU Load plots, the PDF is beside the page,
/// the page draws the CPU series as an SVG panel, and Chromium renders the
/// page to a screenshot that is not blank.
fn report_has_plots_and_renders(out: &Path, job_id: &str) {
    let plots: Vec<String> = std::fs::read_dir(out.join("plots"))
        .expect("plots directory")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(plots.iter().all(|p| p.ends_with(".png")), "{plots:?}");
    assert!(
        plots.iter().any(|p| p == "CPU_Load_per_node.png"),
        "no CPU Load plot in {plots:?}"
    );
    assert!(
        out.join(format!("job-report-{job_id}.pdf")).is_file(),
        "no PDF report"
    );
    let page = out.join(format!("job-report-{job_id}.html"));
    let html = std::fs::read_to_string(&page).expect("the report");
    assert!(html.contains("<p class=\"note\">cpu_metrics · cpu_percent</p>"));
    let profile = tempfile::tempdir().unwrap();
    let shot = out.join("report.png");
    job_dir::chromium(
        profile.path(),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,1600",
        ],
        &page,
    );
    let png = job_dir::decode_png(&std::fs::read(&shot).expect("screenshot")).unwrap();
    assert!(png.inked() > 50_000, "the rendered report is nearly blank");
}

#[test]
fn a_prefix_puts_the_results_in_a_sub_directory_and_the_host_variable_names_the_node() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = monitor(tmp.path());
    c.env("PERFFLOW_MONITOR_HOST", "envhost")
        .args(["-i", "100ms", "-d", "base", "-p", "run1", "--", "true"]);
    let o = run(c, Duration::from_secs(30));
    assert_eq!(o.status.code(), Some(0));
    let run1 = tmp.path().join("base/run1");
    assert!(run1.join("metrics/cpu_metrics.json").is_file());
    assert!(run1.join("perfflow-monitor.envhost.log").is_file());
    let cpu = read_json(&run1.join("metrics/cpu_metrics.json"));
    assert_eq!(cpu["host_names"], serde_json::json!(["envhost"]));
}

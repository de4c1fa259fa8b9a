//! Measures what the report module costs on a job of realistic size:
//! 2 hosts × 1 hour at 1 s sampling × 40 series (synthetic, deterministic),
//! then times each export format and the HTML report with its plots.
//!
//! ```sh
//! cargo run --release -p perfflow-monitor --example report_cost [DIR]
//! ```
//!
//! The job directory is `DIR` (kept, to look at) or a fresh directory under
//! the system temporary directory (removed at the end). Figures only;
//! nothing here fails on time.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use perfflow_monitor::report::{export, generate_report, ExportFormat};
use serde_json::{json, Map, Value};

const HOSTS: [&str; 2] = ["node001", "node002"];
const SAMPLES: usize = 3600;
const SERIES: usize = 40;
const START: f64 = 1_763_700_000.0;

/// A synthetic series: a slow wave, a trend and some deterministic noise.
fn series(host: usize, s: usize) -> Vec<Value> {
    let mut state = (host * 1000 + s + 1) as u64;
    (0..SAMPLES)
        .map(|i| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let noise = (state >> 40) as f64 / (1u64 << 24) as f64;
            let t = i as f64 / SAMPLES as f64;
            let v = 50.0
                + 30.0 * (t * (s + 1) as f64 * std::f64::consts::TAU).sin()
                + 10.0 * noise
                + 5.0 * host as f64;
            json!(v * 10f64.powi((s % 7) as i32))
        })
        .collect()
}

fn write_job(dir: &Path) {
    let metrics = dir.join("metrics");
    fs::create_dir_all(&metrics).unwrap();
    let mut group = Map::new();
    group.insert("host_names".into(), json!(HOSTS));
    group.insert("sampling_frequency".into(), json!(1.0));
    let units: Map<String, Value> = (0..SERIES)
        .map(|s| {
            (
                format!("metric_{s:02}.value"),
                json!(["%", "bytes", "W", "bytes/s"][s % 4]),
            )
        })
        .collect();
    group.insert("units".into(), Value::Object(units));
    for (h, host) in HOSTS.iter().enumerate() {
        let mut obj = Map::new();
        let times: Vec<f64> = (0..SAMPLES).map(|i| START + i as f64).collect();
        obj.insert("time_stamps".into(), json!(times));
        for s in 0..SERIES {
            obj.insert(format!("metric_{s:02}"), json!({ "value": series(h, s) }));
        }
        group.insert(host.to_string(), Value::Object(obj));
    }
    fs::write(
        metrics.join("cpu_metrics.json"),
        Value::Object(group).to_string(),
    )
    .unwrap();
    let meta = json!({
        "job_id": "bench", "scheduler": "local", "name": "report_cost", "user": "bench",
        "start_time": START, "end_time": START + SAMPLES as f64, "sampling_frequency": 1.0,
        "host_names": HOSTS,
    });
    fs::write(metrics.join("meta_data.json"), meta.to_string()).unwrap();
}

fn size(path: &Path) -> String {
    format!("{:.1} MB", fs::metadata(path).unwrap().len() as f64 / 1e6)
}

fn main() {
    let keep = std::env::args().nth(1).map(PathBuf::from);
    let dir = keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("perfflow-report-cost-{}", std::process::id()))
    });
    write_job(&dir);
    println!(
        "job: {} hosts x {SAMPLES} samples x {SERIES} series ({} rows); cpu_metrics.json {}",
        HOSTS.len(),
        HOSTS.len() * SAMPLES,
        size(&dir.join("metrics/cpu_metrics.json"))
    );
    for format in ExportFormat::ALL {
        let t = Instant::now();
        let files = export(&dir, &[format]).unwrap();
        println!(
            "export {format:<8} {:>7.3} s  {}",
            t.elapsed().as_secs_f64(),
            size(&files[0])
        );
    }
    let t = Instant::now();
    let page = generate_report(&dir).unwrap();
    // The page draws its charts inline as SVG; plots/ holds the PNGs of
    // the job report, when one was written.
    let charts = fs::read_to_string(&page).unwrap().matches("<svg").count();
    println!(
        "report          {:>7.3} s  {} charts, {} ({})",
        t.elapsed().as_secs_f64(),
        charts,
        page.file_name().unwrap().to_string_lossy(),
        size(&page)
    );
    if keep.is_none() {
        fs::remove_dir_all(&dir).unwrap();
    }
}

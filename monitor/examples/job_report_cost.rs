//! Measures the job report on a job of realistic size: HOSTS hosts × 1 hour
//! at 1 s sampling with the monitor's CPU series (process, system, I/O,
//! network, RAPL) and perf series, synthetic and deterministic; times the
//! HTML page, perfmon's PDF and its PNG plots.
//!
//! ```sh
//! cargo run --release -p perfflow-monitor --example job_report_cost [HOSTS] [DIR]
//! ```
//!
//! HOSTS defaults to 16. The job directory is `DIR` (kept, to look at) or a
//! fresh directory under the system temporary directory (removed at the
//! end). Figures only; nothing here fails on time.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use perfflow_monitor::report::generate_report;
use serde_json::{json, Map, Value};

const SAMPLES: usize = 3600;
const START: f64 = 1_763_700_000.0;

/// Deterministic noise in 0..1 from a seed and a sample number.
fn noise(seed: usize, i: usize) -> f64 {
    let mut s = (seed as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i as u64;
    s = s
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (s >> 40) as f64 / (1u64 << 24) as f64
}

/// A level series: `base` with a slow wave of `swing` and `jitter` noise.
fn level(seed: usize, base: f64, swing: f64, jitter: f64) -> Vec<f64> {
    (0..SAMPLES)
        .map(|i| {
            let t = i as f64 / SAMPLES as f64;
            base + swing * (t * 3.0 * std::f64::consts::TAU + seed as f64).sin()
                + jitter * noise(seed, i)
        })
        .collect()
}

/// A running total growing by about `per_s` a second.
fn total(seed: usize, per_s: f64) -> Vec<f64> {
    let mut sum = 0.0;
    (0..SAMPLES)
        .map(|i| {
            sum += per_s * (0.5 + noise(seed, i));
            sum.round()
        })
        .collect()
}

fn host_cpu(h: usize) -> Value {
    let times: Vec<f64> = (0..SAMPLES).map(|i| START + i as f64).collect();
    json!({
        "time_stamps": times,
        "cpu_percent": level(h, 3000.0, 800.0, 200.0),
        "cpu_percent_sys": level(h + 100, 70.0, 25.0, 10.0),
        "memory_percent": level(h + 200, 40.0, 10.0, 2.0),
        "memory_info": {"rss": level(h + 300, 6.0e10, 1.5e10, 1e9), "vms": level(h + 301, 9.0e10, 1e10, 1e9)},
        "io_counters": {"read_bytes": total(h + 400, 5.0e7), "write_bytes": total(h + 401, 2.0e7)},
        "load_average": {"1m": level(h + 500, 48.0, 12.0, 4.0)},
        "num_threads": level(h + 600, 64.0, 0.0, 0.0),
        "cpu_freq_mean": level(h + 700, 2400.0, 300.0, 50.0),
        "system_memory": {"used": level(h + 800, 1.2e11, 2e10, 1e9)},
        "net_io_counters": {
            "bytes_recv": total(h + 900, 1.0e8), "bytes_sent": total(h + 901, 9.0e7),
            "packets_recv": total(h + 902, 7.0e4), "packets_sent": total(h + 903, 6.5e4)
        },
        "ib_io_counters": {
            "port_rcv_data": total(h + 1000, 2.0e9), "port_xmit_data": total(h + 1001, 2.0e9),
            "port_rcv_packets": total(h + 1002, 1.0e6), "port_xmit_packets": total(h + 1003, 1.0e6)
        },
        "rapl_powercap": {
            "package-0": total(h + 1100, 1.6e8), "package-1": total(h + 1101, 1.5e8),
            "dram-0": total(h + 1102, 2.0e7), "dram-1": total(h + 1103, 2.0e7)
        }
    })
}

fn host_perf(h: usize) -> Value {
    let times: Vec<f64> = (0..SAMPLES).map(|i| START + i as f64).collect();
    json!({
        "time_stamps": times,
        "hardware_events": {"cycles": level(h, 1.5e11, 3e10, 1e10), "instructions": level(h + 1, 2.2e11, 5e10, 1e10)},
        "derived": {"ipc": level(h + 2, 1.4, 0.3, 0.1), "cache_miss_percent": level(h + 3, 12.0, 4.0, 2.0)},
        "software_events": {"context-switches": level(h + 4, 4.0e3, 1e3, 5e2)}
    })
}

fn write_job(dir: &Path, hosts: usize) {
    let metrics = dir.join("metrics");
    fs::create_dir_all(&metrics).unwrap();
    let names: Vec<String> = (1..=hosts).map(|h| format!("node{h:03}")).collect();
    let cpu_units = json!({
        "cpu_percent": "%", "cpu_percent_sys": "%", "memory_percent": "%",
        "memory_info.rss": "bytes", "memory_info.vms": "bytes",
        "io_counters.read_bytes": "bytes", "io_counters.write_bytes": "bytes",
        "load_average.1m": "tasks", "num_threads": "count", "cpu_freq_mean": "MHz",
        "system_memory.used": "bytes",
        "net_io_counters.bytes_recv": "bytes", "net_io_counters.bytes_sent": "bytes",
        "net_io_counters.packets_recv": "count", "net_io_counters.packets_sent": "count",
        "ib_io_counters.port_rcv_data": "bytes", "ib_io_counters.port_xmit_data": "bytes",
        "ib_io_counters.port_rcv_packets": "count", "ib_io_counters.port_xmit_packets": "count",
        "rapl_powercap.package-0": "uJ", "rapl_powercap.package-1": "uJ",
        "rapl_powercap.dram-0": "uJ", "rapl_powercap.dram-1": "uJ"
    });
    let perf_units = json!({
        "hardware_events.cycles": "1/s", "hardware_events.instructions": "1/s",
        "derived.ipc": "instructions/cycle", "derived.cache_miss_percent": "%",
        "software_events.context-switches": "1/s"
    });
    for (file, units, host) in [
        ("cpu_metrics", cpu_units, host_cpu as fn(usize) -> Value),
        ("perf_metrics", perf_units, host_perf),
    ] {
        let mut group = Map::new();
        group.insert("host_names".into(), json!(names));
        group.insert("sampling_frequency".into(), json!(1.0));
        group.insert("units".into(), units);
        for (h, name) in names.iter().enumerate() {
            group.insert(name.clone(), host(h));
        }
        fs::write(
            metrics.join(format!("{file}.json")),
            Value::Object(group).to_string(),
        )
        .unwrap();
    }
    let mut meta = json!({
        "job_id": "bench", "scheduler": "slurm", "name": "job_report_cost", "user": "bench",
        "start_time": START, "end_time": START + SAMPLES as f64, "sampling_frequency": 1.0,
        "command": ["srun", "./app"], "exit_status": 0, "host_names": names,
    });
    for name in &names {
        meta[name] = json!({
            "cpu": {"model_name": "AMD EPYC 7763 64-Core Processor", "sockets": 2, "cores": 128, "threads": 256},
            "memory_total_bytes": 549755813888u64,
            "kernel": {"release": "6.1.0-28-amd64"},
            "gpus": []
        });
    }
    fs::write(metrics.join("meta_data.json"), meta.to_string()).unwrap();
}

/// CPU time of this process so far (user + system), seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

fn size(path: &Path) -> String {
    format!("{:.1} MB", fs::metadata(path).unwrap().len() as f64 / 1e6)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let hosts: usize = args
        .next()
        .map_or(16, |h| h.parse().expect("HOSTS: a number"));
    let keep = args.next().map(PathBuf::from);
    let dir = keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("perfflow-job-report-cost-{}", std::process::id()))
    });
    write_job(&dir, hosts);
    println!(
        "job: {hosts} hosts x {SAMPLES} samples; cpu_metrics.json {}, perf_metrics.json {}",
        size(&dir.join("metrics/cpu_metrics.json")),
        size(&dir.join("metrics/perf_metrics.json"))
    );
    let (t, cpu) = (Instant::now(), cpu_seconds());
    let page = generate_report(&dir).unwrap();
    let elapsed = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    let plots = fs::read_dir(dir.join("plots")).map_or(0, |d| d.count());
    let pdf = page.with_extension("pdf");
    println!(
        "report {elapsed:.3} s ({cpu:.3} s CPU): {} ({}), {} ({}), {plots} PNG plots",
        page.file_name().unwrap().to_string_lossy(),
        size(&page),
        pdf.file_name().unwrap().to_string_lossy(),
        size(&pdf)
    );
    if keep.is_none() {
        fs::remove_dir_all(&dir).unwrap();
    }
}

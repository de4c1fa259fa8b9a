//! The HTML job report and its PNG plots, made from the fixture job.

mod job_dir;

use std::fs;
use std::path::{Path, PathBuf};

use perfflow_monitor::report::chart::PALETTE;
use perfflow_monitor::report::generate_report;

fn report() -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    job_dir::write_fixture(dir.path());
    let page = generate_report(dir.path()).unwrap();
    let html = fs::read_to_string(&page).unwrap();
    (dir, page, html)
}

fn plot_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir.join("plots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn report_is_named_after_the_job_id() {
    let (dir, page, _) = report();
    assert_eq!(page, dir.path().join("job-report-1234.html"));
}

#[test]
fn plots_cover_every_nonzero_series_combined_and_per_host() {
    let (dir, _, _) = report();
    assert_eq!(
        plot_names(dir.path()),
        [
            "cpu_metrics.cpu_percent.nodeA.png",
            "cpu_metrics.cpu_percent.nodeB.png",
            "cpu_metrics.cpu_percent.png",
            "cpu_metrics.memory_rss.nodeA.png",
            "cpu_metrics.memory_rss.nodeB.png",
            "cpu_metrics.memory_rss.png",
            "cpu_metrics.only_b.nodeB.png",
            "cpu_metrics.only_b.png",
            "cpu_metrics.rapl_powercap.dram-0.nodeA.png",
            "cpu_metrics.rapl_powercap.dram-0.png",
            "cpu_metrics.rapl_powercap.package-0.nodeA.png",
            "cpu_metrics.rapl_powercap.package-0.png",
            "nv_gpu_metrics.power.gpu-0.nodeA.png",
            "nv_gpu_metrics.power.gpu-1.nodeA.png",
            "nv_gpu_metrics.power.png",
            "nv_gpu_metrics.utilization.gpu.gpu-0.nodeA.png",
            "nv_gpu_metrics.utilization.gpu.gpu-1.nodeA.png",
            "nv_gpu_metrics.utilization.gpu.png",
        ]
    );
}

#[test]
fn every_plot_is_a_valid_nonblank_png_with_its_host_colours() {
    let (dir, _, _) = report();
    for name in plot_names(dir.path()) {
        let bytes = fs::read(dir.path().join("plots").join(&name)).unwrap();
        let png = job_dir::decode_png(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((png.width, png.height), (1000, 500), "{name}");
        assert!(png.inked() > 5000, "{name} is nearly blank");
        if name == "cpu_metrics.cpu_percent.png" {
            // One line per host, in the host's colour.
            assert!(png.count(PALETTE[0]) > 100, "{name}: no nodeA line");
            assert!(png.count(PALETTE[1]) > 100, "{name}: no nodeB line");
        }
        if name == "cpu_metrics.cpu_percent.nodeB.png" {
            assert_eq!(png.count(PALETTE[0]), 0, "{name} shows nodeA");
            assert!(png.count(PALETTE[1]) > 100, "{name}: no nodeB line");
        }
    }
}

#[test]
fn plots_are_the_same_bytes_every_time() {
    let (a, _, html_a) = report();
    let (b, _, html_b) = report();
    for name in plot_names(a.path()) {
        let pa = fs::read(a.path().join("plots").join(&name)).unwrap();
        let pb = fs::read(b.path().join("plots").join(&name)).unwrap();
        assert!(pa == pb, "{name} differs between runs");
    }
    assert!(html_a == html_b, "the report differs between runs");
}

#[test]
fn summary_has_a_row_per_metric_and_host_with_units() {
    let (_, _, html) = report();
    let rows = [
        ("cpu_percent", "%", "nodeA", "10", "15.25", "20.5", "20.5"),
        ("cpu_percent", "%", "nodeB", "5", "5.5", "6", "6"),
        ("idle", "", "nodeA", "0", "0", "0", "0"),
        (
            "memory_rss",
            "bytes",
            "nodeA",
            "1000",
            "2000",
            "3000",
            "3000",
        ),
        ("memory_rss", "bytes", "nodeB", "10", "20", "30", "30"),
        (
            "only_b",
            "count, &quot;raw&quot;",
            "nodeB",
            "1",
            "2",
            "3",
            "3",
        ),
        ("rapl_powercap.dram-0", "W", "nodeA", "1", "2", "3", "3"),
        (
            "rapl_powercap.package-0",
            "W",
            "nodeA",
            "50.5",
            "60.1667",
            "70",
            "70",
        ),
        ("power", "W", "gpu-0.nodeA", "100", "196.6667", "250", "240"),
        ("utilization.gpu", "%", "gpu-1.nodeA", "0", "40", "80", "80"),
    ];
    for (series, unit, host, min, mean, max, last) in rows {
        let row = format!(
            "<tr><td>{series}</td><td>{unit}</td><td>{host}</td>\
             <td class=\"num\">{min}</td><td class=\"num\">{mean}</td>\
             <td class=\"num\">{max}</td><td class=\"num\">{last}</td></tr>"
        );
        assert!(html.contains(&row), "no summary row {row}");
    }
    assert_eq!(html.matches("<tr><td>").count(), 12, "summary rows");
    assert!(
        !html.contains("child_proc_md"),
        "metadata arrays are not series"
    );
}

#[test]
fn every_plot_is_embedded_as_a_data_uri() {
    let (dir, _, html) = report();
    let names = plot_names(dir.path());
    assert_eq!(
        html.matches("<img src=\"data:image/png;base64,").count(),
        names.len()
    );
    for name in names {
        assert!(
            html.contains(&format!("plots/{name}</figcaption>")),
            "{name} not in the report"
        );
    }
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "the report links out"
    );
    assert!(!html.contains("<script"), "the report has a script");
    assert!(html.contains("<a href=\"#plots-cpu_metrics\">cpu_metrics (12)</a>"));
    assert!(html.contains("<h3 id=\"plots-nv_gpu_metrics\">nv_gpu_metrics</h3>"));
}

#[test]
fn job_metadata_hardware_and_unavailable_sources_are_shown() {
    let (_, _, html) = report();
    for text in [
        "<tr><th>Scheduler</th><td>slurm</td></tr>",
        "<tr><th>Start</th><td>2025-11-21 04:40:00 UTC</td></tr>",
        "<tr><th>Duration</th><td>1 h 02 min 03 s</td></tr>",
        "<tr><th>Command</th><td>mpirun -np 2 ./matmul</td></tr>",
        "<tr><th>Exit status</th><td>0</td></tr>",
        "<tr><th>Hosts</th><td>nodeA, nodeB (2)</td></tr>",
        "<tr><th>cpu.model</th><td>Xeon Test 9999</td></tr>",
        "<tr><th>gpus[0].name</th><td>H100</td></tr>",
        "<li><b>nodeA</b>: perf: perf_event_paranoid is 3</li>",
        "<li><b>nodeA</b>: ib: no InfiniBand port</li>",
    ] {
        assert!(html.contains(text), "report lacks {text}");
    }
}

#[test]
fn a_hostile_job_name_is_escaped() {
    let (_, _, html) = report();
    assert!(!html.contains(job_dir::HOSTILE_NAME));
    assert!(html.contains(
        "<tr><th>Name</th><td>&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt; \
         &amp; &lt;b&gt;co&lt;/b&gt;</td></tr>"
    ));
}

#[test]
fn a_missing_meta_data_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    job_dir::write_fixture(dir.path());
    let meta = dir.path().join("metrics").join("meta_data.json");
    fs::remove_file(&meta).unwrap();
    let err = generate_report(dir.path()).unwrap_err();
    assert_eq!(err.path, meta);
    fs::write(&meta, "{\"name\": \"x\"}").unwrap();
    let err = generate_report(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("meta_data.json") && err.contains("job_id"),
        "{err}"
    );
}

#[test]
fn a_group_of_many_hosts_gets_combined_plots_only() {
    let dir = tempfile::tempdir().unwrap();
    job_dir::write_fixture(dir.path());
    let hosts: Vec<String> = (0..12).map(|i| format!("gpu-{i}.nodeA")).collect();
    let mut group = serde_json::json!({"host_names": hosts, "units": {"power": "W"}});
    for (i, host) in hosts.iter().enumerate() {
        group[host] = serde_json::json!({"time_stamps": [0.0, 1.0], "power": [i, i + 1]});
    }
    let gpu = dir.path().join("metrics").join("nv_gpu_metrics.json");
    fs::write(&gpu, group.to_string()).unwrap();
    generate_report(dir.path()).unwrap();
    let gpu_plots: Vec<String> = plot_names(dir.path())
        .into_iter()
        .filter(|n| n.starts_with("nv_gpu_metrics."))
        .collect();
    assert_eq!(gpu_plots, ["nv_gpu_metrics.power.png"]);
    let bytes = fs::read(dir.path().join("plots").join(&gpu_plots[0])).unwrap();
    let png = job_dir::decode_png(&bytes).unwrap();
    for color in PALETTE {
        assert!(png.count(color) > 0, "no line or legend in {color:?}");
    }
}

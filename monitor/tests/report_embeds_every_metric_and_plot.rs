//! The HTML job report made from the fixture job: a panel per series in
//! its kind's section, hosts in fixed colours, a summary in readable units,
//! the hardware as one row per configuration.

mod job_dir;

use std::fs;
use std::path::{Path, PathBuf};

use perfflow_monitor::report::generate_report;
use perfflow_report::chart::{style, PALETTE};

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

/// The HTML of section `id`: from its heading to the next one.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<h2 id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section {id}"));
    let rest = &html[start + 4..];
    let end = rest.find("<h2 ").map_or(rest.len(), |e| e + 4);
    &html[start..start + end]
}

/// The series named in each panel of `part`, in order.
fn panels(part: &str) -> Vec<String> {
    part.split("<div class=\"panel\">")
        .skip(1)
        .map(|p| {
            let note = &p[p.find("<p class=\"note\">").expect("a panel note") + 16..];
            note[..note.find("</p>").unwrap()].to_string()
        })
        .collect()
}

#[test]
fn every_nonzero_series_gets_one_panel_in_its_kinds_section() {
    let (_, _, html) = report();
    assert_eq!(panels(section(&html, "cpu")), ["cpu_metrics · cpu_percent"]);
    assert_eq!(
        panels(section(&html, "memory")),
        ["cpu_metrics · memory_rss"]
    );
    assert_eq!(
        panels(section(&html, "energy")),
        [
            "cpu_metrics · rapl_powercap.dram-0",
            "cpu_metrics · rapl_powercap.package-0"
        ]
    );
    assert_eq!(panels(section(&html, "other")), ["cpu_metrics · only_b"]);
    assert_eq!(
        panels(section(&html, "gpu")),
        ["nv_gpu_metrics · utilization.gpu", "nv_gpu_metrics · power"]
    );
    assert_eq!(html.matches("<div class=\"panel\">").count(), 7);
    assert!(!html.contains("· idle<"), "an all-zero series got a panel");
    assert!(
        !html.contains("child_proc_md"),
        "metadata arrays are not series"
    );
}

#[test]
fn each_host_keeps_its_colour_and_the_legend_names_it() {
    let (_, _, html) = report();
    let cpu = section(&html, "cpu");
    assert!(cpu.contains("<title>nodeA</title><path d=\"M"));
    assert!(cpu.contains(&format!("stroke=\"{}\" stroke-width", PALETTE[0])));
    assert!(cpu.contains(&format!("stroke=\"{}\" stroke-width", PALETTE[1])));
    let legend = &cpu[cpu.find("<div class=\"legend\">").unwrap()..];
    let legend = &legend[..legend.find("</div>").unwrap()];
    assert!(legend.contains("nodeA") && legend.contains("nodeB"));
    // GPUs come after the hosts of the metadata.
    let gpu = section(&html, "gpu");
    assert!(gpu.contains(&format!("stroke=\"{}\"", style(2).0)));
    assert!(!gpu.contains(&format!("stroke=\"{}\"", PALETTE[0])));
}

#[test]
fn reports_are_the_same_bytes_every_time() {
    let (a, _, html_a) = report();
    let (b, _, html_b) = report();
    assert!(html_a == html_b, "the report differs between runs");
    for name in plot_names(a.path()) {
        let pa = fs::read(a.path().join("plots").join(&name)).unwrap();
        let pb = fs::read(b.path().join("plots").join(&name)).unwrap();
        assert!(pa == pb, "{name} differs between runs");
    }
}

#[test]
fn summary_has_a_row_per_series_in_readable_units() {
    let (_, _, html) = report();
    let summary = section(&html, "summary");
    for row in [
        ["CPU", "cpu_percent", "10.4 %", "20.5 %", "nodeA", "2"],
        ["Memory", "memory_rss", "1010 B", "2.93 KiB", "nodeA", "2"],
        [
            "Energy",
            "rapl_powercap.package-0",
            "60.2 W",
            "70.0 W",
            "nodeA",
            "1",
        ],
        ["GPU", "power", "190 W", "260 W", "gpu-1.nodeA", "2"],
    ] {
        let cells: String = row
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if [2, 3, 5].contains(&i) {
                    format!("<td class=\"num\">{c}</td>")
                } else {
                    format!("<td>{c}</td>")
                }
            })
            .collect();
        assert!(
            summary.contains(&format!("<tr>{cells}</tr>")),
            "no summary row {row:?}"
        );
    }
    assert_eq!(summary.matches("<tr><td>").count(), 7, "summary rows");
    assert!(
        !summary.contains("e+") && !summary.contains("e3<"),
        "exponents in the summary"
    );
}

#[test]
fn units_are_human_on_every_axis() {
    let (_, _, html) = report();
    let memory = section(&html, "memory");
    assert!(
        memory.contains("memory_rss [KiB]"),
        "the bytes axis is not in KiB"
    );
    let cpu = section(&html, "cpu");
    // A percentage axis ends at 100.
    assert!(cpu.contains(">100</text>") && !cpu.contains(">120</text>"));
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
        "<tr><td>nodeA (1)</td><td>Xeon Test 9999</td><td>64 cores</td><td>250 GiB</td>\
         <td>1 × H100</td><td>–</td></tr>",
        "<tr><td>nodeB (1)</td><td>Xeon Test 9999</td><td>64 cores</td><td>–</td>\
         <td>none</td><td>–</td></tr>",
        "<tr><th>cpu.model</th><td>Xeon Test 9999</td></tr>",
        "<tr><th>gpus[0].name</th><td>H100</td></tr>",
        "<tr><td>nodeA</td><td>perf: perf_event_paranoid is 3</td></tr>",
        "<tr><td>nodeA</td><td>ib: no InfiniBand port</td></tr>",
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
fn a_group_of_many_hosts_shows_every_host_in_its_legend() {
    let dir = tempfile::tempdir().unwrap();
    job_dir::write_fixture(dir.path());
    let hosts: Vec<String> = (0..12).map(|i| format!("gpu-{i}.nodeA")).collect();
    let mut group = serde_json::json!({"host_names": hosts, "units": {"power": "W"}});
    for (i, host) in hosts.iter().enumerate() {
        group[host] = serde_json::json!({"time_stamps": [0.0, 1.0], "power": [i, i + 1]});
    }
    let gpu = dir.path().join("metrics").join("nv_gpu_metrics.json");
    fs::write(&gpu, group.to_string()).unwrap();
    let html = fs::read_to_string(generate_report(dir.path()).unwrap()).unwrap();
    let gpu = section(&html, "gpu");
    assert_eq!(panels(gpu), ["nv_gpu_metrics · power"]);
    let legend = &gpu[gpu.find("<div class=\"legend\">").unwrap()..];
    let legend = &legend[..legend.find("</div>").unwrap()];
    for host in &hosts {
        assert!(
            legend.contains(&format!("</svg>{host}</span>")),
            "{host} not in the legend"
        );
        assert!(
            gpu.contains(&format!("<title>{host}</title>")),
            "{host} has no line"
        );
    }
    // Past the ten colours, lines are dashed.
    assert!(gpu.contains("stroke-dasharray=\"6 3\""));
}

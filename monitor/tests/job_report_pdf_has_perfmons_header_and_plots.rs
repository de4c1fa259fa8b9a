//! perfmon's `job-report-<jobid>.pdf`, read back with poppler's `pdfinfo`
//! and `pdftotext` (Debian package `poppler-utils`; without them the test
//! fails and says so): a valid PDF with perfmon's header on every page,
//! the pages that have plots, and one title per plot.
//!
//! The fixture has `cpu_percent` (CPU Load), `memory_rss` (Memory) and
//! RAPL package and DRAM power: perfmon's first and fourth pages, across
//! all nodes and per node, so 4 pages and 8 plots.

mod job_dir;

use std::fs;
use std::path::Path;
use std::process::Command;

use perfflow_monitor::report::generate_report;

fn poppler(tool: &str, pdf: &Path) -> String {
    let out = Command::new(tool)
        .arg(pdf)
        .arg("-")
        .output()
        .unwrap_or_else(|e| {
            panic!("{tool} is needed for this test (Debian: apt-get install poppler-utils): {e}")
        });
    assert!(
        out.status.success(),
        "{tool} refused {}: {}",
        pdf.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn report() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    job_dir::write_fixture(dir.path());
    generate_report(dir.path()).unwrap();
    let pdf = dir.path().join("job-report-1234.pdf");
    assert!(pdf.is_file(), "no PDF beside the HTML report");
    (dir, pdf)
}

#[test]
fn the_pdf_is_valid_and_has_a_page_per_group_with_plots() {
    let (_dir, pdf) = report();
    assert!(fs::read(&pdf).unwrap().starts_with(b"%PDF-"));
    let info = Command::new("pdfinfo")
        .arg(&pdf)
        .output()
        .expect("pdfinfo is needed for this test (Debian: apt-get install poppler-utils)");
    assert!(info.status.success(), "pdfinfo refused the PDF");
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(
        info.lines()
            .any(|l| l.starts_with("Pages:") && l.ends_with(" 4")),
        "{info}"
    );
    assert!(info.contains("Job report 1234"), "{info}");
}

#[test]
fn every_page_has_perfmons_header_and_its_number() {
    let (_dir, pdf) = report();
    let text = poppler("pdftotext", &pdf);
    let pages: Vec<&str> = text
        .split('\u{c}')
        .filter(|p| !p.trim().is_empty())
        .collect();
    assert_eq!(pages.len(), 4);
    for (i, page) in pages.iter().enumerate() {
        for field in [
            "Job ID: 1234",
            "User: alice",
            "# Nodes: 2",
            "Date: 11/21/2025 05:42:03",
        ] {
            assert!(
                page.contains(field),
                "page {} lacks {field}:\n{page}",
                i + 1
            );
        }
        assert!(
            page.contains(&format!("Page {}", i + 1)),
            "page {} unnumbered",
            i + 1
        );
    }
}

#[test]
fn plots_are_across_nodes_first_then_per_node_with_average_and_max() {
    let (dir, pdf) = report();
    let text = poppler("pdftotext", &pdf);
    let titles: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("(all nodes):") || l.contains("/Node:"))
        .collect();
    assert_eq!(
        titles,
        [
            "Average CPU Load (all nodes): mean 10.4 %, max 13.2 %",
            "Average Memory (all nodes): mean 1010 B, max 1.48 KiB",
            "Total RAPL Package Power (all nodes): mean 60.2 W, max 70.0 W",
            "Total RAPL DRAM Power (all nodes): mean 2.00 W, max 3.00 W",
            "Average CPU Load/Node: 10.4 %, Max CPU Load/Node: 20.5 %",
            "Average Memory/Node: 1010 B, Max Memory/Node: 2.93 KiB",
            "Average RAPL Package Power/Node: 60.2 W, Max RAPL Package Power/Node: 70.0 W",
            "Average RAPL DRAM Power/Node: 2.00 W, Max RAPL DRAM Power/Node: 3.00 W",
        ]
    );
    let mut pngs: Vec<String> = fs::read_dir(dir.path().join("plots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pngs.sort();
    assert_eq!(
        pngs,
        [
            "CPU_Load_all_nodes.png",
            "CPU_Load_per_node.png",
            "Memory_all_nodes.png",
            "Memory_per_node.png",
            "RAPL_DRAM_Power_all_nodes.png",
            "RAPL_DRAM_Power_per_node.png",
            "RAPL_Package_Power_all_nodes.png",
            "RAPL_Package_Power_per_node.png",
        ]
    );
    for name in pngs {
        let bytes = fs::read(dir.path().join("plots").join(&name)).unwrap();
        let png = job_dir::decode_png(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(png.inked() > 5000, "{name} is nearly blank");
    }
}

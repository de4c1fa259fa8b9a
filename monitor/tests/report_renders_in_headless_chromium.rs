//! The job report opened offline in headless Chromium: a screenshot that
//! is not blank and shows the first host's lines (so Chromium drew our
//! inline SVG charts), and a DOM with every panel's chart as an SVG element
//! and the hostile job name still text. Needs the `chromium` binary
//! (Debian package `chromium`); without it the test fails and says so.
//!
//! The page and the screenshot stay in
//! `$CARGO_TARGET_TMPDIR/report-in-chromium/{screenshot,dom}/` to be looked
//! at.

mod job_dir;

use std::fs;
use std::path::{Path, PathBuf};

use job_dir::chromium;

use perfflow_monitor::report::generate_report;
use perfflow_report::chart::PALETTE;

/// The fixture job in `$CARGO_TARGET_TMPDIR/report-in-chromium/<name>`.
fn job(name: &str) -> (PathBuf, PathBuf) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("report-in-chromium")
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    job_dir::write_fixture(&dir);
    let page = generate_report(&dir).unwrap();
    (dir, page)
}

/// `#rrggbb` as bytes.
fn rgb(hex: &str) -> [u8; 3] {
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap();
    [byte(1), byte(3), byte(5)]
}

#[test]
fn screenshot_of_the_report_shows_the_page_and_its_charts() {
    let (dir, page) = job("screenshot");
    let profile = tempfile::tempdir().unwrap();
    let shot = dir.join("screenshot.png");
    chromium(
        profile.path(),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,2400",
        ],
        &page,
    );
    let bytes = fs::read(&shot).expect("chromium wrote no screenshot");
    let png = job_dir::decode_png(&bytes).unwrap();
    assert_eq!((png.width, png.height), (1280, 2400));
    assert!(png.inked() > 50_000, "the screenshot is nearly blank");
    // Lines are anti-aliased: look for colours near the first host's.
    let blue = rgb(PALETTE[0]);
    let near = |p: &[u8; 3]| (0..3).all(|i| p[i].abs_diff(blue[i]) < 40);
    let n = png.pixels.iter().filter(|p| near(p)).count();
    assert!(n > 200, "no chart line visible ({n} bluish pixels)");
}

#[test]
fn dom_of_the_report_has_every_panel_as_an_svg_chart() {
    let (_, page) = job("dom");
    let profile = tempfile::tempdir().unwrap();
    let out = chromium(profile.path(), &["--dump-dom"], &page);
    let dom = String::from_utf8_lossy(&out.stdout);
    let panels = dom.matches("<div class=\"panel\">").count();
    assert_eq!(panels, 7);
    // One chart per panel (the legend's swatches are small SVGs too).
    assert_eq!(
        dom.matches("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox")
            .count(),
        panels
    );
    assert!(dom.contains("<h1>Job report 1234</h1>"));
    assert!(
        !dom.contains("<script>alert"),
        "the hostile name became markup"
    );
    assert!(
        dom.contains("&lt;script&gt;alert(") && dom.contains("&amp; &lt;b&gt;co&lt;/b&gt;"),
        "the hostile name is not shown as text"
    );
}

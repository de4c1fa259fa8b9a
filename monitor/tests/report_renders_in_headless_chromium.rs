//! The job report opened offline in headless Chromium: a screenshot that
//! is not blank and shows a plot line (so Chromium decoded our PNG), and a
//! DOM with every plot as an image and the hostile job name still text.
//! Needs the `chromium` binary (Debian package `chromium`); without it the
//! test fails and says so.
//!
//! The page, its plots and the screenshot stay in
//! `$CARGO_TARGET_TMPDIR/report-in-chromium/{screenshot,dom}/` to be looked
//! at.

mod job_dir;

use std::fs;
use std::path::{Path, PathBuf};

use job_dir::chromium;

use perfflow_monitor::report::chart::PALETTE;
use perfflow_monitor::report::generate_report;

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

#[test]
fn screenshot_of_the_report_shows_the_page_and_its_plots() {
    let (dir, page) = job("screenshot");
    let profile = tempfile::tempdir().unwrap();
    let shot = dir.join("screenshot.png");
    chromium(
        profile.path(),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000",
        ],
        &page,
    );
    let bytes = fs::read(&shot).expect("chromium wrote no screenshot");
    let png = job_dir::decode_png(&bytes).unwrap();
    assert_eq!((png.width, png.height), (1280, 2000));
    assert!(png.inked() > 50_000, "the screenshot is nearly blank");
    // The first plot is scaled, so look for colours near a host's line.
    let near = |c: [u8; 3], p: &[u8; 3]| (0..3).all(|i| p[i].abs_diff(c[i]) < 40);
    let blue = png.pixels.iter().filter(|p| near(PALETTE[0], p)).count();
    assert!(blue > 200, "no plot line visible ({blue} bluish pixels)");
}

#[test]
fn dom_of_the_report_has_every_plot_as_an_image() {
    let (dir, page) = job("dom");
    let profile = tempfile::tempdir().unwrap();
    let out = chromium(profile.path(), &["--dump-dom"], &page);
    let dom = String::from_utf8_lossy(&out.stdout);
    let plots = fs::read_dir(dir.join("plots")).unwrap().count();
    assert_eq!(
        dom.matches("<img src=\"data:image/png;base64,").count(),
        plots
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

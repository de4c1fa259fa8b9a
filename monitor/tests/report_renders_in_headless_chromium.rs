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
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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

/// How long Chromium may take before the test gives up on it.
const PATIENCE: Duration = Duration::from_secs(120);

fn chromium(profile: &Path, args: &[&str], page: &Path) -> Output {
    let mut child = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium is needed for this test (Debian: apt-get install chromium)");
    // Read the pipes on threads so a full pipe cannot stall Chromium.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stdout.read_to_end(&mut buf).map(|_| buf)
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stderr.read_to_end(&mut buf).map(|_| buf)
    });
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if began.elapsed() > PATIENCE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = Output {
        status,
        stdout: out_reader.join().unwrap().unwrap(),
        stderr: err_reader.join().unwrap().unwrap(),
    };
    assert!(
        out.status.success(),
        "chromium failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
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
}

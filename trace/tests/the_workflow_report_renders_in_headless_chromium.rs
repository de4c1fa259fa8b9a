//! `perfflow-trace report` on a run of four processes on two hosts, one of
//! them slower in `solve`, with the monitor's results for those hosts and a
//! database holding that run (`solver=old`) and a faster one
//! (`solver=new`): the page names the slow process in the imbalance table,
//! has one timeline lane per process, the effect of `solver` on `solve`,
//! the node metrics of the two hosts only, and headless Chromium draws it (Debian package `chromium`; without it the
//! test fails and says so). The page and the screenshot stay in
//! `$CARGO_TARGET_TMPDIR/workflow-report/` to be looked at.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

const START_US: f64 = 1_763_700_000e6;

/// One process's trace: `main` around 10 rounds of `solve` (with a
/// nested `kernel` X event) and `exchange`; `solve` lasts `solve_ms`.
fn write_trace(dir: &Path, host: &str, pid: i64, solve_ms: f64) -> PathBuf {
    let mut events = vec![
        json!({"name":"perfflow_process","ph":"M","pid":pid,"tid":pid,"args":{"host":host}}),
        json!({"name":"main","ph":"B","pid":pid,"tid":pid,"ts":START_US}),
    ];
    let mut t = START_US;
    for _ in 0..10 {
        events.push(json!({"name":"solve","ph":"B","pid":pid,"tid":pid,"ts":t}));
        events.push(json!({"name":"kernel","ph":"X","pid":pid,"tid":pid,"ts":t + 1000.0,"dur":solve_ms * 500.0}));
        t += solve_ms * 1000.0;
        events.push(json!({"name":"solve","ph":"E","pid":pid,"tid":pid,"ts":t}));
        events.push(json!({"name":"exchange","ph":"B","pid":pid,"tid":pid,"ts":t}));
        t += 200_000.0;
        events.push(json!({"name":"exchange","ph":"E","pid":pid,"tid":pid,"ts":t}));
    }
    events.push(json!({"name":"main","ph":"E","pid":pid,"tid":pid,"ts":t}));
    let text: Vec<String> = events.iter().map(|e| e.to_string()).collect();
    let path = dir.join(format!("perfflow.array.{host}.{pid}.pfw"));
    fs::write(&path, format!("[\n{}\n]\n", text.join(",\n"))).unwrap();
    path
}

/// The monitor's results for hosts a, b and an unrelated host c.
fn write_metrics(dir: &Path) {
    let metrics = dir.join("metrics");
    fs::create_dir_all(&metrics).unwrap();
    let t: Vec<f64> = (0..30).map(|i| START_US / 1e6 + i as f64).collect();
    let mut cpu = json!({"host_names": ["a", "b", "c"], "units": {"cpu_percent": "%"}});
    for (i, h) in ["a", "b", "c"].iter().enumerate() {
        cpu[*h] = json!({"time_stamps": t, "cpu_percent": vec![10.0 * (i + 1) as f64; 30]});
    }
    fs::write(metrics.join("cpu_metrics.json"), cpu.to_string()).unwrap();
}

/// Runs `command`, failing the test with its stderr when it fails.
fn succeed(command: &mut Command) {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn chromium(profile: &Path, args: &[&str], page: &Path) -> Output {
    let mut child = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .args([
            "--disable-background-networking",
            "--disable-component-update",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium is needed for this test (Debian: apt-get install chromium)");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stdout.read_to_end(&mut buf).map(|_| buf)
    });
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if began.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "chromium failed");
    Output {
        status,
        stdout: reader.join().unwrap().unwrap(),
        stderr: Vec::new(),
    }
}

#[test]
fn the_workflow_report_shows_lanes_imbalance_and_the_hosts_metrics() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("workflow-report");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let traces = [
        write_trace(&dir, "a", 10, 100.0),
        write_trace(&dir, "a", 11, 100.0),
        write_trace(&dir, "b", 10, 100.0),
        write_trace(&dir, "b", 12, 300.0),
    ];
    write_metrics(&dir);
    let faster = dir.join("faster");
    fs::create_dir_all(&faster).unwrap();
    let fast: Vec<PathBuf> = [("a", 10), ("a", 11), ("b", 10), ("b", 12)]
        .iter()
        .map(|(h, p)| write_trace(&faster, h, *p, 50.0))
        .collect();
    let tool = || Command::new(env!("CARGO_BIN_EXE_perfflow-trace"));
    let db = dir.join("runs.sqlite");
    for (files, run, label) in [
        (&traces[..], "old", "solver=old"),
        (&fast[..], "new", "solver=new"),
    ] {
        let mut import = tool();
        import.args(["db", "-o"]).arg(&db).args(files);
        succeed(import.args(["--run", run, "--label", label]));
    }
    let page = dir.join("report.html");
    let mut report = tool();
    report.arg("report").args(&traces).arg("--db").arg(&db);
    report
        .args(["--score", "span:solve", "--metrics"])
        .arg(&dir);
    succeed(report.arg("-o").arg(&page));
    let html = fs::read_to_string(&page).unwrap();

    // One lane per process, named by the metadata's host.
    for lane in ["a 10", "a 11", "b 10", "b 12"] {
        assert!(html.contains(&format!(">{lane}</text>")), "no lane {lane}");
    }
    // The innermost function colours the lane: kernel inside solve.
    for name in ["kernel", "solve", "exchange"] {
        assert!(
            html.contains(&format!("<title>{name}</title></rect>")),
            "{name} not drawn"
        );
    }
    // solve: three processes at 1.00 s, one at 3.00 s: mean 1.50 s.
    assert!(
        html.contains(
            "<tr><td>solve</td><td class=\"num\">4</td><td class=\"num\">1.00 s</td>\
             <td class=\"num\">1.50 s</td><td class=\"num\">3.00 s</td><td class=\"num\">2.00</td></tr>"
        ),
        "no imbalance row for solve"
    );
    // solve: 150 ms on average with the old solver, 50 ms with the new.
    assert!(
        html.contains(
            "<tr><td>solver</td><td>new → old</td><td class=\"num\">1</td>\
             <td class=\"num\">+100 ms</td>"
        ),
        "no treatment row for solver"
    );
    // The before/after scatter of solver: one point, 50 ms with the new
    // solver and 150 ms with the old.
    assert!(
        html.contains("<title>solver: 50.0 ms → 150 ms</title></circle>"),
        "no before/after point for solver"
    );
    // The critical path: all of process b 12, which ends last, 5 s long.
    let path = &html[html
        .find("<h2 id=\"critical-path\">")
        .expect("no critical path section")..];
    let path = &path[..path[1..].find("<h2 ").map_or(path.len(), |end| end + 1)];
    assert!(path.contains("5.00 s"), "{path}");
    assert!(path.contains("<td>exchange</td>"), "{path}");
    assert!(
        path.contains("[12]</td>") && !path.contains("[11]</td>"),
        "{path}"
    );
    // The node metrics of hosts a and b only.
    assert!(html.contains("<h2 id=\"cpu\">CPU</h2>"));
    assert!(html.contains("<title>a</title>") && html.contains("<title>b</title>"));
    assert!(
        !html.contains("<title>c</title>"),
        "host c is not in the run"
    );

    let profile = dir.join("chromium-profile");
    let dom = chromium(&profile, &["--dump-dom"], &page);
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains("<h1>Workflow report</h1>"));
    assert_eq!(
        dom.matches("<div class=\"panel\">").count(),
        3,
        "timeline, treatment effects and one CPU panel"
    );

    let shot = dir.join("screenshot.png");
    chromium(
        &profile,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,1600",
        ],
        &page,
    );
    let png = fs::read(&shot).expect("chromium wrote no screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let size = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!((size(16), size(20)), (1280, 1600));
    // A blank page of that size compresses to a few kilobytes.
    assert!(
        png.len() > 30_000,
        "the screenshot looks blank ({} bytes)",
        png.len()
    );
    let _ = fs::remove_dir_all(&profile);
}

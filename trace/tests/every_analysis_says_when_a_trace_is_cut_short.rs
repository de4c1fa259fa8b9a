//! A run whose trace file is cut short (a process killed, a disk full)
//! still analyses, and every analysis says so: `critical-path`, `profile`
//! and `compare` in one stderr line naming the count, `report` in a card
//! of its page. A complete run says nothing.

mod support;

use support::*;

#[test]
fn every_analysis_says_when_a_trace_is_cut_short() {
    let dir = scratch("cut_short_notes");
    let complete = dir.join("complete");
    let cut = dir.join("cut");
    std::fs::create_dir_all(&complete).expect("dir");
    std::fs::create_dir_all(&cut).expect("dir");
    let events = r#"{"name":"main","ph":"B","pid":1,"tid":1,"ts":0},
{"name":"work","ph":"X","pid":1,"tid":1,"ts":10,"dur":50}"#;
    write(
        &complete,
        "perfflow.array.h.1.pfw",
        &format!(
            "[\n{events},\n{{\"name\":\"main\",\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":100}}\n]\n"
        ),
    );
    // No closing `]`, and `main` never ended.
    write(&cut, "perfflow.array.h.1.pfw", &format!("[\n{events},\n"));

    for command in ["critical-path", "profile"] {
        let said = perfflow_trace(&[command, path_str(&cut)]);
        assert!(said.status.success(), "{command}: {}", text(&said.stderr));
        let stderr = text(&said.stderr);
        assert!(
            stderr.contains(&format!(
                "perfflow-trace: {command}: note: 1 trace file is cut short"
            )),
            "{command}: {stderr}"
        );
        let quiet = perfflow_trace(&[command, path_str(&complete)]);
        assert!(quiet.status.success());
        assert!(!text(&quiet.stderr).contains("cut short"), "{command}");
    }

    let compared = perfflow_trace(&["compare", path_str(&complete), path_str(&cut)]);
    assert!(compared.status.success(), "{}", text(&compared.stderr));
    let stderr = text(&compared.stderr);
    assert!(
        stderr.contains(&format!(
            "note: run {}: 1 trace file is cut short",
            path_str(&cut)
        )),
        "{stderr}"
    );
    assert!(
        !stderr.contains(&format!("run {}:", path_str(&complete))),
        "{stderr}"
    );

    let page = dir.join("report.html");
    let files = [
        dir.join("cut").join("perfflow.array.h.1.pfw"),
        dir.join("complete").join("perfflow.array.h.1.pfw"),
    ];
    let reported = perfflow_trace(&[
        "report",
        path_str(&files[0]),
        path_str(&files[1]),
        "-o",
        path_str(&page),
    ]);
    assert!(reported.status.success(), "{}", text(&reported.stderr));
    let html = std::fs::read_to_string(&page).expect("the report");
    assert!(html.contains("Cut short"), "no card");
    assert!(html.contains("1 of 2 files"), "no count");
}

//! The runtime writes the opening of a trace (`[` and metadata lines, or
//! `{"traceEvents":[` ...) when it creates the file, so a process killed
//! before its first flush leaves only that. `check --allow-truncated` and
//! `summary` read it as a truncated trace of no events; plain `check`
//! reports the truncation. A file of 0 bytes is no trace at all.

use std::path::PathBuf;
use std::process::{Command, Output};

const META: &str = r#"{"name":"process_name","ph":"M","pid":7,"tid":7,"args":{"name":"app"}}"#;

fn trace_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("perfflow-trace-opening-only");
    std::fs::create_dir_all(&dir).expect("create test directory");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write trace file");
    path
}

fn perfflow_trace(args: &[&str], file: &PathBuf) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfflow-trace"))
        .args(args)
        .arg(file)
        .output()
        .expect("run perfflow-trace")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_trace_holding_only_its_opening_is_read_as_truncated() {
    let openings = [
        ("bracket.pfw", "[".to_string()),
        ("bracket_newline.pfw", "[\n".to_string()),
        ("metadata.pfw", format!("[\n{META},\n")),
        ("metadata_twice.pfw", format!("[\n{META},\n{META},\n")),
        ("metadata_cut.pfw", format!("[\n{META},\n{}", &META[..30])),
        ("zeros.pfw", format!("[\n{META},\n\0\0\0\0")),
        ("object.pfw", "{\"traceEvents\":[".to_string()),
        (
            "object_metadata.pfw",
            format!("{{\"displayTimeUnit\":\"us\",\"traceEvents\":[\n{META},\n"),
        ),
    ];
    for (name, opening) in openings {
        let file = trace_file(name, &opening);
        let shown = file.display();

        let output = perfflow_trace(&["check", "--allow-truncated"], &file);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{name}: {}",
            text(&output.stderr)
        );
        assert_eq!(
            text(&output.stdout),
            format!("{shown}: ok (truncated), 0 events, 0 threads\n")
        );

        let output = perfflow_trace(&["check"], &file);
        assert_eq!(output.status.code(), Some(1), "{name}");
        assert!(
            text(&output.stderr).contains("the trace is truncated (it ends before its closing bracket, or a Perfetto trace before the runtime's closing record); 0 complete events were recovered"),
            "{name}: {}",
            text(&output.stderr)
        );

        let output = perfflow_trace(&["summary"], &file);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{name}: {}",
            text(&output.stderr)
        );
        assert_eq!(
            text(&output.stdout),
            "processes: 0, threads: 0, events: 0, time span: -\n\
             note: the trace is truncated\n\nno completed spans\n",
            "{name}"
        );
    }
}

#[test]
fn an_empty_file_is_no_trace() {
    let file = trace_file("empty.pfw", "");
    for args in [&["check", "--allow-truncated"][..], &["summary"][..]] {
        let output = perfflow_trace(args, &file);
        assert_eq!(output.status.code(), Some(1));
        assert_eq!(
            text(&output.stderr),
            format!(
                "{}: line 1, column 1: not a trace: the input is empty; expected `[` (an array of events) or `{{` (an object with \"traceEvents\")\n",
                file.display()
            )
        );
    }
}

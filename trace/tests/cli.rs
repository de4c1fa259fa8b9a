//! Runs the built `perfflow-trace` binary on trace files and checks exit
//! statuses and messages.

use std::path::PathBuf;
use std::process::{Command, Output};

const VALID: &str = r#"[
{"name":"process_name","ph":"M","pid":10,"tid":10,"args":{"name":"app"}},
{"name":"main","cat":"app","ph":"B","pid":10,"tid":10,"ts":1000.0},
{"name":"solve","cat":"app","ph":"B","pid":10,"tid":10,"ts":1010.0},
{"name":"solve","cat":"app","ph":"E","pid":10,"tid":10,"ts":1070.0},
{"name":"worker","cat":"app","ph":"X","pid":10,"tid":11,"ts":1020.0,"dur":30.0},
{"name":"main","cat":"app","ph":"E","pid":10,"tid":10,"ts":1100.0}
]
"#;

const BROKEN: &str = r#"[
{"name":"main","cat":"app","ph":"B","pid":10,"tid":10,"ts":1000.0},
{"name":"solve","cat":"app","ph":"E","pid":10,"tid":10,"ts":1010.0},
{"name":"other","cat":"app","ph":"E","pid":10,"tid":10,"ts":1020.0}
]
"#;

const KILLED: &str = "[\n\
{\"name\":\"main\",\"cat\":\"app\",\"ph\":\"B\",\"pid\":10,\"tid\":10,\"ts\":1000.0},\n\
{\"name\":\"solve\",\"cat\":\"app\",\"ph\":\"X\",\"pid\":10,\"tid\":10,\"ts\":1010.0,\"dur\":5.0},\n\
{\"name\":\"solve\",\"cat\":\"ap";

/// Writes `text` to a fresh file named `name` for the test `test`.
fn trace_file(test: &str, name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("perfflow-trace-cli")
        .join(test);
    std::fs::create_dir_all(&dir).expect("create test directory");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write trace file");
    path
}

fn perfflow_trace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfflow-trace"))
        .args(args)
        .output()
        .expect("run perfflow-trace")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn path_str(path: &std::path::Path) -> &str {
    path.to_str().expect("UTF-8 temporary path")
}

#[test]
fn valid_trace_passes_check_with_a_one_line_summary() {
    let file = trace_file("valid_check", "app.pfw", VALID);
    let output = perfflow_trace(&["check", path_str(&file)]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stdout),
        format!("{}: ok, 5 events, 2 threads\n", file.display())
    );
    assert!(output.stderr.is_empty());
}

#[test]
fn met_expectations_pass() {
    let file = trace_file("expectations_met", "app.pfw", VALID);
    let output = perfflow_trace(&[
        "check",
        path_str(&file),
        "--expect-events",
        "5",
        "--expect-names=main,solve,worker",
        "--expect-phases",
        "B,E,X",
        "--min-threads",
        "2",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
}

#[test]
fn unmet_expectations_fail_with_each_difference() {
    let file = trace_file("expectations_unmet", "app.pfw", VALID);
    let output = perfflow_trace(&[
        "check",
        path_str(&file),
        "--expect-events=4",
        "--expect-names=main,solve,missing",
        "--expect-phases=B,E",
        "--min-threads=3",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let shown = file.display();
    assert_eq!(
        text(&output.stderr),
        format!(
            "{shown}: expected 4 events, found 5\n\
             {shown}: event names differ from --expect-names: missing \"missing\"; unexpected \"worker\"\n\
             {shown}: event phases differ from --expect-phases: unexpected X\n\
             {shown}: expected at least 3 threads, found 2\n\
             {shown}: FAILED, 4 problems\n"
        )
    );
}

#[test]
fn structural_problems_are_listed_with_file_and_index() {
    let file = trace_file("broken", "broken.pfw", BROKEN);
    let output = perfflow_trace(&["check", path_str(&file)]);
    assert_eq!(output.status.code(), Some(1));
    let shown = file.display();
    assert_eq!(
        text(&output.stderr),
        format!(
            "{shown}: 1: E \"solve\" does not match the innermost open B \"main\" (event 0) on pid 10 tid 10\n\
             {shown}: 2: E \"other\" on pid 10 tid 10 has no open B to close\n\
             {shown}: FAILED, 2 problems\n"
        )
    );
}

#[test]
fn every_file_is_checked_even_after_a_failure() {
    let broken = trace_file("several", "broken.pfw", BROKEN);
    let valid = trace_file("several", "valid.pfw", VALID);
    let output = perfflow_trace(&["check", path_str(&broken), path_str(&valid)]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stdout),
        format!("{}: ok, 5 events, 2 threads\n", valid.display())
    );
}

#[test]
fn truncated_trace_fails_check_unless_allowed() {
    let file = trace_file("truncated", "killed.pfw", KILLED);
    let output = perfflow_trace(&["check", path_str(&file)]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("the trace is truncated"), "{stderr}");
    assert!(
        stderr.contains("incomplete data from line 4 on was dropped"),
        "{stderr}"
    );
    assert!(
        stderr.contains("B \"main\" on pid 10 tid 10 is never closed"),
        "{stderr}"
    );

    let output = perfflow_trace(&["check", "--allow-truncated", path_str(&file)]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stdout),
        format!("{}: ok (truncated), 2 events, 1 threads\n", file.display())
    );
}

#[test]
fn invalid_json_names_file_and_line() {
    let file = trace_file(
        "invalid_json",
        "bad.pfw",
        "[\n{\"ph\":\"i\"},\n{\"ph\" \"i\"}\n]\n",
    );
    let output = perfflow_trace(&["check", path_str(&file)]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        format!(
            "{}: line 3, column 7: invalid JSON: expected `:`\n",
            file.display()
        )
    );
}

#[test]
fn missing_file_is_reported_and_fails() {
    let output = perfflow_trace(&["check", "/nonexistent/dir/trace.pfw"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).starts_with("cannot read /nonexistent/dir/trace.pfw: "));
}

#[test]
fn summary_prints_the_table() {
    let file = trace_file("summary", "app.pfw", VALID);
    let output = perfflow_trace(&["summary", path_str(&file)]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stdout),
        "\
processes: 1, threads: 2, events: 5, time span: 100.000 us

function  calls  total (us)  self (us)  min (us)  mean (us)  max (us)
main          1     100.000     40.000   100.000    100.000   100.000
solve         1      60.000     60.000    60.000     60.000    60.000
worker        1      30.000     30.000    30.000     30.000    30.000

pid  tid  events  thread
 10   10       4
 10   11       1
"
    );
}

#[test]
fn summary_merges_several_files() {
    let first = trace_file("summary_merge", "a.pfw", VALID);
    let second = trace_file(
        "summary_merge",
        "b.pfw",
        r#"{"displayTimeUnit":"us","otherData":{},"traceEvents":[
{"name":"main","ph":"X","pid":20,"tid":20,"ts":1000.0,"dur":50.0}
]}"#,
    );
    let output = perfflow_trace(&["summary", path_str(&first), path_str(&second)]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(
        stdout.starts_with("traces: 2, processes: 2, threads: 3, events: 6,"),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("\nmain          2     150.000     90.000    50.000     75.000   100.000\n"),
        "{stdout}"
    );
}

#[test]
fn unknown_flag_is_a_usage_error_naming_it() {
    let output = perfflow_trace(&["check", "--frobnicate", "x.pfw"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = text(&output.stderr);
    assert!(
        stderr.starts_with("error: unexpected argument '--frobnicate' found\n"),
        "{stderr}"
    );
    assert!(stderr.contains("Usage: perfflow-trace check [OPTIONS] <FILE>..."));
}

#[test]
fn no_arguments_prints_the_usage_and_is_a_usage_error() {
    let output = perfflow_trace(&[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("Usage: perfflow-trace <COMMAND>"));
}

#[test]
fn help_shows_usage_and_examples() {
    let output = perfflow_trace(&["--help"]);
    assert_eq!(output.status.code(), Some(0));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("Usage: perfflow-trace <COMMAND>"));
    assert!(stdout.contains("Examples:"));
    assert!(stdout.contains("Exit status:"));
    let output = perfflow_trace(&["check", "--help"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(text(&output.stdout).contains("--expect-names"));
}

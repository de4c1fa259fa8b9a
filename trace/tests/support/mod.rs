//! Helpers of the `merge` tests: traces laid out as the runtime and the
//! monitor write them, scratch directories, and running `perfflow-trace`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub mod nest;

/// A fresh, empty directory for the test `test`.
pub fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("perfflow-trace-merge")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create test directory");
    dir
}

/// The opening the runtime writes: the process name and the
/// `perfflow_process` metadata with its host, executable and rank.
pub fn opening(host: &str, exe: &str, pid: u32, rank: Option<u32>) -> String {
    let rank = rank.map(|r| format!(",\"rank\":{r}")).unwrap_or_default();
    format!(
        "[\n{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{pid},\"args\":{{\"name\":\"{exe}\"}}}},\n\
         {{\"name\":\"perfflow_process\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{pid},\"args\":{{\"host\":\"{host}\",\"exe\":\"{exe}\"{rank},\
         \"clock\":{{\"realtime_ns\":1700000000000000000,\"monotonic_ns\":5000,\"esterror_us\":16,\"maxerror_us\":250}}}}}},\n"
    )
}

/// An event line as the runtime writes it, `ts` given in nanoseconds.
pub fn event(name: &str, cat: &str, ph: &str, pid: u32, tid: u32, ts_ns: u64) -> String {
    format!(
        "{{\"name\":\"{name}\",\"cat\":\"{cat}\",\"pid\":{pid},\"tid\":{tid},\"ts\":{}.{:03},\"ph\":\"{ph}\"}},\n",
        ts_ns / 1000,
        ts_ns % 1000
    )
}

/// A flow end (`s` or `f`) as the runtime writes it.
pub fn flow(scope: &str, ph: &str, pid: u32, tid: u32, ts_ns: u64, id: u64) -> String {
    let bind = if ph == "f" { ",\"bp\":\"e\"" } else { "" };
    format!(
        "{{\"name\":\"{scope}\",\"cat\":\"flow\",\"pid\":{pid},\"tid\":{tid},\"ts\":{}.{:03},\"ph\":\"{ph}\"{bind},\"id\":{id}}},\n",
        ts_ns / 1000,
        ts_ns % 1000
    )
}

/// The closing line the runtime writes at exit.
pub fn closing(pid: u32) -> String {
    format!(
        "{{\"name\":\"perfflow_runtime\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{pid},\"args\":{{\"events_dropped\":0}}}}\n]\n"
    )
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write trace file");
    path
}

/// The names of the entries of `dir`, sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list the directory")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

pub fn perfflow_trace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfflow-trace"))
        .args(args)
        .output()
        .expect("run perfflow-trace")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Decodes the `.pftrace` at `path` with Perfetto's generated classes
/// (pip package perfetto) through the runtime tests' script, which follows
/// Perfetto's rules and fails on what they reject; its JSON answer.
pub fn perfetto_decodes(path: &Path) -> Value {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/tests/support/pftrace_events.py");
    let decoded = Command::new("python3")
        .arg(script)
        .arg(path)
        .output()
        .expect("run python3");
    assert!(
        decoded.status.success(),
        "Perfetto's classes (pip package perfetto) cannot decode it: {}",
        text(&decoded.stderr)
    );
    serde_json::from_slice(&decoded.stdout).expect("the script's JSON")
}

pub fn path_str(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temporary path")
}

/// Runs `perfflow-trace merge` with `args` and asserts it succeeded.
pub fn merge(args: &[&str]) -> Output {
    let mut all = vec!["merge"];
    all.extend_from_slice(args);
    let output = perfflow_trace(&all);
    assert_eq!(
        output.status.code(),
        Some(0),
        "merge {args:?}: {}",
        text(&output.stderr)
    );
    output
}

/// The events of a merged trace.
pub fn events(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("read merged trace");
    match serde_json::from_str(&text).expect("the merged trace is one JSON array") {
        Value::Array(events) => events,
        other => panic!("expected an array, found {other}"),
    }
}

/// The `process_name` of each pid in a merged trace.
pub fn process_names(events: &[Value]) -> Vec<(i64, String)> {
    events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
        .map(|e| {
            (
                e["pid"].as_i64().expect("pid"),
                e["args"]["name"].as_str().expect("name").to_string(),
            )
        })
        .collect()
}

/// `ts` of an event in nanoseconds, read from its decimal text.
pub fn ts_ns(event: &Value) -> i64 {
    let text = event["ts"].to_string();
    let (whole, frac) = text.split_once('.').unwrap_or((&text, "0"));
    let frac = format!("{frac:0<3}");
    whole.parse::<i64>().expect("ts") * 1000 + frac[..3].parse::<i64>().expect("ts decimals")
}

/// Writes `perfflow.array.<host>.<pid>.pfw` in `dir` as the runtime does:
/// the opening, the `body` lines, the closing.
pub fn runtime_file(dir: &Path, host: &str, exe: &str, pid: u32, body: &str) -> PathBuf {
    let text = format!("{}{body}{}", opening(host, exe, pid, None), closing(pid));
    write(dir, &format!("perfflow.array.{host}.{pid}.pfw"), &text)
}

/// Runs `merge --fix-clocks a b -o out` and asserts it printed `host`'s
/// offset as `offset_ns` with `flows` cross-host flows.
pub fn merge_fixing_clocks(
    a: &Path,
    b: &Path,
    out: &Path,
    host: &str,
    offset_ns: u64,
    flows: usize,
) -> Output {
    let output = merge(&[
        "--fix-clocks",
        path_str(a),
        path_str(b),
        "-o",
        path_str(out),
    ]);
    let stdout = text(&output.stdout);
    let line = format!(
        "  {host}: +{}.{:03} µs ({flows} cross-host flows)",
        offset_ns / 1000,
        offset_ns % 1000
    );
    assert!(stdout.contains(&line), "expected `{line}` in {stdout}");
    output
}

/// Asserts that `perfflow-trace check ARGS` passes.
pub fn assert_check_passes(args: &[&str]) {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    let output = perfflow_trace(&all);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
}

/// A trace the runtime wrote, kept in `tests/data`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Runs `perfflow-trace db -o DB ARGS...` and asserts it succeeded.
pub fn import(db: &Path, args: &[&str]) -> Output {
    let mut all = vec!["db", "-o", path_str(db)];
    all.extend_from_slice(args);
    let output = perfflow_trace(&all);
    assert!(
        output.status.success(),
        "db failed: {}",
        text(&output.stderr)
    );
    output
}

/// The rows `query` gives on `db`, as CSV lines after the header.
pub fn sql(db: &Path, query: &str) -> Vec<String> {
    let output = perfflow_trace(&["sql", path_str(db), query, "--csv"]);
    assert!(
        output.status.success(),
        "sql failed: {}",
        text(&output.stderr)
    );
    text(&output.stdout)
        .lines()
        .skip(1)
        .map(String::from)
        .collect()
}

/// The counter trace perfflow-monitor writes for host `beta` as pid 300:
/// two samples at 2,000,100 µs, `cpu total (%)` 37.5 and
/// `mem used (bytes)` 1,048,576.
pub fn monitor_file(dir: &Path) -> PathBuf {
    write(
        dir,
        "perfflow.monitor.beta.300.pfw",
        "[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":300,\"tid\":300,\"args\":{\"name\":\"perfflow-monitor beta\"}}\n\
         ,{\"name\":\"perfflow_monitor\",\"ph\":\"M\",\"pid\":300,\"tid\":300,\"args\":{\"interval\":\"100ms\"}}\n\
         ,{\"name\":\"cpu total (%)\",\"ph\":\"C\",\"pid\":300,\"tid\":300,\"ts\":2000100.000,\"args\":{\"value\":37.5}}\n\
         ,{\"name\":\"mem used (bytes)\",\"ph\":\"C\",\"pid\":300,\"tid\":300,\"ts\":2000100.000,\"args\":{\"value\":1048576}}\n]\n",
    )
}

/// A millisecond in nanoseconds.
pub const MS: u64 = 1_000_000;

/// Writes one run of a program in `dir`: `main` (a B/E pair) around
/// `setup`, `work` (two X events of half `work` each) and `finish`, with
/// `gap` of main's own time before `setup`; durations in nanoseconds.
pub fn program_run(dir: &Path, setup: u64, work: u64, finish: u64, gap: u64) -> PathBuf {
    std::fs::create_dir_all(dir).expect("run directory");
    let start = 1_000 * MS;
    let x = |name: &str, ts: u64, dur: u64| {
        format!(
            "{{\"name\":\"{name}\",\"cat\":\"app\",\"pid\":5,\"tid\":5,\"ts\":{}.{:03},\"dur\":{}.{:03},\"ph\":\"X\"}},\n",
            ts / 1000,
            ts % 1000,
            dur / 1000,
            dur % 1000
        )
    };
    let mut body = event("main", "app", "B", 5, 5, start);
    let mut now = start + gap;
    body += &x("setup", now, setup);
    now += setup;
    for _ in 0..2 {
        body += &x("work", now, work / 2);
        now += work / 2;
    }
    body += &x("finish", now, finish);
    now += finish;
    body += &event("main", "app", "E", 5, 5, now);
    runtime_file(dir, "n1", "app", 5, &body);
    dir.to_path_buf()
}

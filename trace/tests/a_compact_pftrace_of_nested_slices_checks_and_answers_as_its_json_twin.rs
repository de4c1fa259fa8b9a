//! A compact trace (`log-event=compact`) writes each slice when it ends, so
//! a parent's begin comes after its children's ends: in the runtime's own
//! `.pftrace` and in `convert`'s `.pftrace` of a `.pfw` of nested `X`
//! events. Perfetto sorts by time and reads both; so must `check`, and
//! `summary`, `db` and `critical-path` answer for the `.pftrace` as they do
//! for the JSON trace of the same run.
//!
//! The program is `tests/data/nest.c` (regions nested three deep, an async
//! span ended on another thread), built against the runtime library of
//! this test run.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use support::{assert_check_passes, import, path_str, perfflow_trace, scratch, sql, text};

/// The runtime's static library, built beside this test as a
/// dev-dependency: next to the test binary, or one level up.
fn runtime_library() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("deps directory");
    [deps, deps.parent().expect("profile directory")]
        .iter()
        .map(|dir| dir.join("libperfflow_runtime.a"))
        .find(|lib| lib.is_file())
        .expect("libperfflow_runtime.a next to the test binary")
}

fn build_nest(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = dir.join("nest");
    let built = Command::new("cc")
        .args(["-O1", "-I"])
        .arg(root.join("../runtime/include"))
        .arg(root.join("tests/data/nest.c"))
        .arg(runtime_library())
        .args(["-lpthread", "-ldl", "-lm", "-Wl,--strip-debug", "-o"])
        .arg(&bin)
        .output()
        .expect("run cc");
    assert!(built.status.success(), "{}", text(&built.stderr));
    bin
}

/// Runs `bin` in a directory of its own under `dir` with `options`, and
/// returns the one trace it wrote.
fn run(bin: &Path, dir: &Path, options: &str) -> PathBuf {
    let work = dir.join(options.replace([':', '='], "_"));
    std::fs::create_dir_all(&work).unwrap();
    let mut cmd = Command::new(bin);
    for (key, _) in std::env::vars() {
        if key.starts_with("PERFFLOW_") {
            cmd.env_remove(key);
        }
    }
    let done = cmd
        .current_dir(&work)
        .env("PERFFLOW_OPTIONS", options)
        .output()
        .expect("run the program");
    assert!(done.status.success(), "{}", text(&done.stderr));
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&work)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("perfflow.")
        })
        .collect();
    assert_eq!(traces.len(), 1, "{traces:?}");
    traces.pop().unwrap()
}

/// The compact JSON trace of one run, its `.pftrace` by `convert`, and the
/// `.pftrace` of another run written by the runtime.
struct Compact {
    dir: PathBuf,
    json: PathBuf,
    converted: PathBuf,
    runtime: PathBuf,
}

fn compact(test: &str) -> Compact {
    let dir = scratch(test);
    let bin = build_nest(&dir);
    let json = run(&bin, &dir, "log-event=compact");
    let runtime = run(&bin, &dir, "log-event=compact:log-format=perfetto");
    let converted = dir.join("converted.pftrace");
    perfflow_trace::convert(&json, &converted).expect("convert");
    Compact {
        dir,
        json,
        converted,
        runtime,
    }
}

fn summary_functions(trace: &Path) -> Value {
    let out = perfflow_trace(&["summary", "--json", path_str(trace)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    summary["functions"].clone()
}

/// Each span of the database of `trace`: name, times, depth and parent.
fn spans(dir: &Path, trace: &Path, times: bool) -> Vec<String> {
    let db = dir.join(format!(
        "{}.db",
        trace.file_name().unwrap().to_string_lossy()
    ));
    import(&db, &[path_str(trace)]);
    let columns = if times {
        "s.name, s.start_ns, s.end_ns, s.depth, p.name, s.outcome"
    } else {
        "s.name, s.depth, p.name, s.outcome"
    };
    let mut rows = sql(
        &db,
        &format!(
            "SELECT {columns} FROM span s LEFT JOIN span p ON p.id = s.parent \
             ORDER BY s.start_ns, s.depth"
        ),
    );
    if !times {
        rows.sort();
    }
    rows
}

fn critical_path(trace: &Path) -> Value {
    let out = perfflow_trace(&["critical-path", "--json", path_str(trace)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn check_accepts_the_runtimes_compact_pftrace_and_the_conversion_of_nested_x_events() {
    let run = compact("compact_pftrace_checks");
    for trace in [&run.json, &run.converted, &run.runtime] {
        assert_check_passes(&[path_str(trace)]);
    }
    std::fs::remove_dir_all(&run.dir).unwrap();
}

#[test]
fn summary_db_and_critical_path_answer_for_the_pftrace_as_for_the_json_trace() {
    let run = compact("compact_pftrace_answers");
    // The same run: every figure agrees.
    assert_eq!(
        summary_functions(&run.converted),
        summary_functions(&run.json)
    );
    assert_eq!(
        spans(&run.dir, &run.converted, true),
        spans(&run.dir, &run.json, true)
    );
    assert_eq!(critical_path(&run.converted), critical_path(&run.json));

    // The runtime's own .pftrace of another run: the same spans at the
    // same depths under the same parents, with the same calls.
    let nested = spans(&run.dir, &run.runtime, false);
    assert_eq!(nested, spans(&run.dir, &run.json, false));
    let inner = nested
        .iter()
        .filter(|row| row.starts_with("inner,"))
        .count();
    assert_eq!(inner, 6, "{nested:?}");
    let calls = |functions: Value| {
        let mut calls: Vec<(String, u64)> = functions
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["name"].as_str().unwrap().to_string(),
                    f["calls"].as_u64().unwrap(),
                )
            })
            .collect();
        calls.sort();
        calls
    };
    assert_eq!(
        calls(summary_functions(&run.runtime)),
        calls(summary_functions(&run.json))
    );
    std::fs::remove_dir_all(&run.dir).unwrap();
}

#[test]
fn check_still_rejects_compact_slices_that_cross_on_a_thread() {
    let dir = scratch("compact_pftrace_crossing");
    // "late" starts inside "early" and ends after it: no nesting, in
    // whatever order they are sorted.
    let json = support::write(
        &dir,
        "crossing.pfw",
        "[\n{\"name\":\"early\",\"cat\":\"app\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":40},\n\
         {\"name\":\"late\",\"cat\":\"app\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":30,\"dur\":40}\n]\n",
    );
    let pftrace = dir.join("crossing.pftrace");
    perfflow_trace::convert(&json, &pftrace).expect("convert");
    for trace in [&json, &pftrace] {
        let out = perfflow_trace(&["check", path_str(trace)]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("overlaps the span ended by event")
                && stderr.contains("FAILED, 1 problem"),
            "{stderr}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

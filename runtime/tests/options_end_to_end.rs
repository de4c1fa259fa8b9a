//! End-to-end tests of `PERFFLOW_OPTIONS`: programs from `tests/c/` run
//! with one setting each, and the file they leave (or do not leave), its
//! name and its content are checked. Every trace is parsed with
//! `serde_json`.

mod support;

use std::fs;

use serde_json::Value;

use support::{
    command, pfw_files, pfw_names, program, read_event_line, run, sha1_hex, Event, Finished,
    Scratch, Trace,
};

/// Runs `e2e_options` (which prints its identity and instance path) in
/// `dir` with `PERFFLOW_OPTIONS=options` and the extra variables `env`.
fn run_options_program(dir: &Scratch, options: &str, env: &[(&str, &str)]) -> Finished {
    let mut cmd = command(&program("e2e_options"), &dir.path);
    cmd.env("PERFFLOW_OPTIONS", options);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let done = run(&mut cmd);
    assert!(
        done.status.success(),
        "{}; stderr: {}",
        done.status,
        done.stderr
    );
    assert_eq!(done.printed("sum").as_deref(), Some("4950"));
    done
}

/// The program's quiet run (it prints only `sum=4950`) with `options`.
fn run_quiet(dir: &Scratch, options: &str) -> Finished {
    let mut cmd = command(&program("e2e_options"), &dir.path);
    cmd.arg("quiet").env("PERFFLOW_OPTIONS", options);
    run(&mut cmd)
}

/// The one `.pfw` file directly in `dir`, which must be named `name`.
fn only_trace(dir: &std::path::Path, name: &str) -> Trace {
    assert_eq!(
        pfw_names(dir),
        [name.to_string()],
        "trace files in {}",
        dir.display()
    );
    Trace::read(&dir.join(name))
}

fn phases(events: &[&Event]) -> Vec<(String, String)> {
    events
        .iter()
        .map(|e| (e.name().to_string(), e.ph().to_string()))
        .collect()
}

/// The first eight hexadecimal digits of the SHA-1 of `text`.
fn short_sha1(text: &str) -> String {
    sha1_hex(text.as_bytes())[..8].to_string()
}

// --- log-enable -------------------------------------------------------------

#[test]
fn log_enable_false_writes_no_trace_and_leaves_the_output_unchanged() {
    let traced = Scratch::new("enable-default");
    let off = Scratch::new("enable-false");
    let with_trace = run_quiet(&traced, "");
    let without = run_quiet(&off, "log-enable=False");
    assert!(with_trace.status.success() && without.status.success());
    assert_eq!(with_trace.stdout, "sum=4950\n");
    assert_eq!(
        without.stdout, with_trace.stdout,
        "same output with tracing off"
    );
    assert_eq!(without.stderr, "", "nothing on stderr with tracing off");
    assert_eq!(with_trace.stderr, "");
    assert_eq!(
        pfw_files(&traced.path).len(),
        1,
        "the traced run leaves its file"
    );
    assert_eq!(
        pfw_files(&off.path),
        Vec::<std::path::PathBuf>::new(),
        "no trace file at all"
    );
}

// --- log-dir ------------------------------------------------------------------

#[test]
fn log_dir_receives_the_trace_instead_of_the_working_directory() {
    let dir = Scratch::new("log-dir");
    let logs = dir.join("logs");
    fs::create_dir(&logs).expect("create logs");
    let done = run_options_program(&dir, &format!("log-dir={}", logs.display()), &[]);
    assert_eq!(
        pfw_names(&dir.path),
        Vec::<String>::new(),
        "nothing in the working directory"
    );
    let trace = only_trace(
        &logs,
        &format!("perfflow.array.{}.{}.pfw", done.host(), done.pid()),
    );
    trace.assert_complete(done.pid());
    assert_eq!(trace.body().len(), 202);
}

#[test]
fn a_missing_log_dir_is_created_with_its_parents() {
    let dir = Scratch::new("log-dir-missing");
    let done = run_options_program(&dir, "log-dir=a/b/c", &[]);
    let logs = dir.join("a/b/c");
    assert!(logs.is_dir(), "a/b/c was created");
    let trace = only_trace(
        &logs,
        &format!("perfflow.array.{}.{}.pfw", done.host(), done.pid()),
    );
    trace.assert_complete(done.pid());
    assert_eq!(pfw_files(&dir.path).len(), 1);
}

#[test]
fn an_unwritable_log_dir_gives_one_stderr_line_and_the_program_runs_on() {
    let dir = Scratch::new("log-dir-unwritable");
    fs::write(dir.join("file.txt"), "a regular file\n").expect("create file.txt");
    let done = run_quiet(&dir, "log-dir=file.txt/sub");
    assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);
    assert_eq!(done.stdout, "sum=4950\n");
    let lines: Vec<&str> = done.stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "exactly one line on stderr: {:?}",
        done.stderr
    );
    assert!(lines[0].contains("tracing is off"), "stderr: {}", lines[0]);
    assert_eq!(pfw_files(&dir.path), Vec::<std::path::PathBuf>::new());
    assert_eq!(
        fs::read_to_string(dir.join("file.txt")).expect("file.txt"),
        "a regular file\n",
        "the file in the way is left alone"
    );
}

// --- log-filename-include -------------------------------------------------

#[test]
fn log_filename_include_name_and_pid_names_the_file_after_the_workflow_name() {
    let dir = Scratch::new("include-name-pid");
    let done = run_options_program(&dir, "name=wf:log-filename-include=name,pid", &[]);
    let trace = only_trace(&dir.path, &format!("perfflow.array.wf.{}.pfw", done.pid()));
    trace.assert_complete(done.pid());
}

#[test]
fn log_filename_include_keeps_the_order_pid_then_hostname() {
    let dir = Scratch::new("include-pid-host");
    let done = run_options_program(&dir, "log-filename-include=pid,hostname", &[]);
    let trace = only_trace(
        &dir.path,
        &format!("perfflow.array.{}.{}.pfw", done.pid(), done.host()),
    );
    trace.assert_complete(done.pid());
}

#[test]
fn a_flux_job_id_appears_in_braces_in_the_file_name() {
    let dir = Scratch::new("instance-flux");
    let done = run_options_program(
        &dir,
        "log-filename-include=instance-path,pid",
        &[("FLUX_JOB_ID", "ƒeF9QZG3")],
    );
    let trace = only_trace(
        &dir.path,
        &format!("perfflow.array.{{ƒeF9QZG3}}.{}.pfw", done.pid()),
    );
    trace.assert_complete(done.pid());
}

#[test]
fn a_slurm_job_and_step_give_the_short_sha1_of_job_dot_step_as_instance_path() {
    // `printf '1234.0' | sha1sum` starts with 8262e563.
    let expected = short_sha1("1234.0");
    assert_eq!(expected, "8262e563");
    let dir = Scratch::new("instance-slurm");
    let done = run_options_program(
        &dir,
        "log-filename-include=instance-path",
        &[("SLURM_JOB_ID", "1234"), ("SLURM_STEP_ID", "0")],
    );
    let trace = only_trace(&dir.path, &format!("perfflow.array.{{{expected}}}.pfw"));
    trace.assert_complete(done.pid());
    assert_eq!(done.printed("instance_path"), Some(expected));
}

#[test]
fn the_instance_path_is_exported_to_the_program_and_the_processes_it_starts() {
    // Without a workload manager the instance id is the hash of "1".
    let expected = short_sha1("1");
    assert_eq!(expected, "356a192b");
    let dir = Scratch::new("instance-export");
    let done = run_options_program(&dir, "", &[]);
    assert_eq!(
        done.printed("instance_path"),
        Some(expected.clone()),
        "stdout: {}",
        done.stdout
    );
    assert_eq!(
        done.printed("child_instance_path"),
        Some(expected),
        "stdout: {}",
        done.stdout
    );
}

#[test]
fn with_tracing_off_the_environment_is_left_as_it_is() {
    let dir = Scratch::new("instance-off");
    let done = run_options_program(&dir, "log-enable=False", &[]);
    assert_eq!(
        done.printed("instance_path").as_deref(),
        Some("(unset)"),
        "stdout: {}",
        done.stdout
    );
    assert_eq!(
        done.printed("child_instance_path").as_deref(),
        Some("(unset)"),
        "stdout: {}",
        done.stdout
    );
}

#[test]
fn an_inherited_instance_path_is_extended_by_the_own_job_id() {
    let dir = Scratch::new("instance-inherited");
    let done = run_options_program(
        &dir,
        "log-filename-include=instance-path,pid",
        &[
            ("PERFFLOW_INSTANCE_PATH", "0badcafe"),
            ("FLUX_JOB_ID", "f42"),
        ],
    );
    assert_eq!(
        done.printed("instance_path").as_deref(),
        Some("0badcafe.f42")
    );
    assert_eq!(
        done.printed("child_instance_path").as_deref(),
        Some("0badcafe.f42")
    );
    let trace = only_trace(
        &dir.path,
        &format!("perfflow.array.{{0badcafe.f42}}.{}.pfw", done.pid()),
    );
    trace.assert_complete(done.pid());
}

// --- log-format -------------------------------------------------------------

#[test]
fn log_format_object_writes_an_object_with_other_data_and_trace_events() {
    let dir = Scratch::new("format-object");
    let done = run_options_program(&dir, "log-format=Object:name=solver", &[]);
    let (pid, host) = (done.pid(), done.host());
    let trace = only_trace(&dir.path, &format!("perfflow.object.{host}.{pid}.pfw"));
    assert_eq!(
        trace.top_level_keys,
        ["displayTimeUnit", "otherData", "traceEvents"]
    );
    let header = trace.header.as_ref().expect("an object, not an array");
    assert_eq!(header.len(), 2, "{header:?}");
    assert_eq!(header["displayTimeUnit"], "us");
    let other = header["otherData"]
        .as_object()
        .expect("otherData is an object");
    assert_eq!(other["name"], "solver");
    assert_eq!(other["hostname"], host.as_str());
    let other_pid = match &other["pid"] {
        Value::String(text) => text.clone(),
        Value::Number(n) => n.to_string(),
        v => panic!("otherData.pid is {v}"),
    };
    assert_eq!(other_pid, pid.to_string());
    trace.assert_complete(pid);
    assert_eq!(trace.body().len(), 202);
    assert!(trace.body().iter().all(|e| e.ph() == "B" || e.ph() == "E"));
}

// --- log-event ----------------------------------------------------------------

#[test]
fn log_event_compact_writes_one_complete_event_per_call_and_no_begin_or_end() {
    let dir = Scratch::new("compact");
    let done = run_options_program(&dir, "log-event=Compact", &[]);
    let trace = only_trace(
        &dir.path,
        &format!("perfflow.array.{}.{}.pfw", done.host(), done.pid()),
    );
    trace.assert_complete(done.pid());
    let body = trace.body();
    assert!(body.iter().all(|e| e.ph() == "X"), "{:?}", phases(&body));
    assert_eq!(body.len(), 101);
    // Written when each call ends: the steps, then the call around them.
    assert!(body[..100].iter().all(|e| e.name() == "step"));
    let main = body[100];
    assert_eq!(main.name(), "main_work");
    for e in &body {
        assert_eq!(e.value["cat"], "e2e_options.c");
        let dur = support::number_text(&e.line, "dur").expect("dur");
        let decimals = dur.split_once('.').map(|(_, d)| d.len());
        assert_eq!(
            decimals,
            Some(3),
            "dur in microseconds with nanosecond decimals: {dur}"
        );
    }
    for step in &body[..100] {
        assert!(
            support::within(step, main),
            "{} outside {}",
            step.line,
            main.line
        );
    }
    for pair in body[..100].windows(2) {
        assert!(
            pair[0].end() <= pair[1].ts(),
            "steps overlap: {} / {}",
            pair[0].line,
            pair[1].line
        );
    }
}

/// The calls of `fib(n)` as nested parentheses, callees in call order.
fn fib_shape(n: u32) -> String {
    if n < 2 {
        "()".to_string()
    } else {
        format!("({}{})", fib_shape(n - 1), fib_shape(n - 2))
    }
}

#[test]
fn compact_recursion_gives_one_complete_event_per_call_inside_its_caller() {
    let dir = Scratch::new("compact-fib");
    let mut cmd = command(&program("e2e_fib"), &dir.path);
    cmd.env("PERFFLOW_OPTIONS", "log-event=compact");
    let done = run(&mut cmd);
    assert!(done.status.success(), "stderr: {}", done.stderr);
    assert_eq!(done.printed("fib").as_deref(), Some("8"));
    let trace = only_trace(
        &dir.path,
        &format!("perfflow.array.{}.{}.pfw", done.host(), done.pid()),
    );
    trace.assert_complete(done.pid());
    let body = trace.body();
    assert_eq!(body.len(), 25, "fib(6) makes 25 calls");
    assert!(body.iter().all(|e| e.ph() == "X" && e.name() == "fib"));

    // Events are written as calls end, so the file lists the call tree in
    // post-order: each event adopts the finished calls that lie within it.
    struct Node {
        ts: u64,
        end: u64,
        shape: String,
    }
    let mut finished: Vec<Node> = Vec::new();
    for e in &body {
        let mut children = Vec::new();
        while finished
            .last()
            .is_some_and(|c| e.ts() <= c.ts && c.end <= e.end())
        {
            children.push(finished.pop().expect("a child"));
        }
        children.reverse();
        for pair in children.windows(2) {
            assert!(
                pair[0].end <= pair[1].ts,
                "sibling calls overlap at {}",
                e.line
            );
        }
        let shape = format!(
            "({})",
            children
                .iter()
                .map(|c| c.shape.as_str())
                .collect::<String>()
        );
        finished.push(Node {
            ts: e.ts(),
            end: e.end(),
            shape,
        });
    }
    assert_eq!(finished.len(), 1, "one outermost call");
    assert_eq!(
        finished[0].shape,
        fib_shape(6),
        "calls nest as fib's call tree"
    );
}

/// Eight threads make 50 000 calls each (an `outer` call around an `inner`
/// one, 25 000 times) in compact mode: 400 000 `X` events. The lines are
/// read with [`support::read_event_line`]; every 1000th goes through
/// `serde_json`.
#[test]
fn compact_mode_with_eight_threads_keeps_every_call_and_its_nesting() {
    let dir = Scratch::new("compact-threads");
    let mut cmd = command(&program("e2e_threads"), &dir.path);
    cmd.args(["8", "50000"])
        .env("PERFFLOW_OPTIONS", "log-event=Compact");
    let done = run(&mut cmd);
    assert!(done.status.success(), "stderr: {}", done.stderr);
    let pid = done.pid();
    let name = format!("perfflow.array.{}.{pid}.pfw", done.host());
    assert_eq!(pfw_names(&dir.path), [name.as_str()]);
    let text = fs::read_to_string(dir.join(&name)).expect("read the trace");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.first(), Some(&"["));
    assert_eq!(lines.last(), Some(&"]"));
    let body = &lines[1..lines.len() - 1];

    // Per thread: the inner call that has just ended, waiting for its outer.
    let mut pending: std::collections::HashMap<u64, Option<(u64, u64)>> = Default::default();
    let mut calls: std::collections::HashMap<u64, usize> = Default::default();
    let mut events = 0u64;
    let mut summary = Value::Null;
    for (i, line) in body.iter().enumerate() {
        let last = i + 1 == body.len();
        let object = if last {
            line
        } else {
            line.strip_suffix(',')
                .unwrap_or_else(|| panic!("line {} does not end with a comma", i + 2))
        };
        let e = read_event_line(object, i % 1000 == 0 || last);
        assert_eq!(e.pid, u64::from(pid));
        if e.ph == "M" {
            if e.name == "perfflow_runtime" {
                assert!(last, "the summary is the last event");
                let value: Value = serde_json::from_str(object).expect("summary");
                summary = value["args"].clone();
            }
            continue;
        }
        events += 1;
        assert_eq!(e.ph, "X", "line {}: {object}", i + 2);
        assert_ne!(e.tid, u64::from(pid), "main makes no calls");
        let ts = e.ts_ns.expect("ts");
        let end = ts + e.dur_ns.expect("dur");
        let slot = pending.entry(e.tid).or_default();
        match (e.name.as_ref(), slot.take()) {
            ("inner", None) => *slot = Some((ts, end)),
            ("outer", Some((inner_ts, inner_end))) => {
                assert!(
                    ts <= inner_ts && inner_end <= end,
                    "inner [{inner_ts}, {inner_end}] outside outer [{ts}, {end}] on tid {}",
                    e.tid
                );
                *calls.entry(e.tid).or_default() += 2;
            }
            (name, inner) => panic!(
                "line {}: {name} on tid {} after {inner:?}: not inner, outer, inner, ...",
                i + 2,
                e.tid
            ),
        }
    }
    assert_eq!(calls.len(), 8, "eight threads");
    for (tid, n) in &calls {
        assert_eq!(*n, 50_000, "calls on tid {tid}");
        assert_eq!(
            pending[tid], None,
            "an inner call without its outer on tid {tid}"
        );
    }
    assert_eq!(events, 400_000);
    assert_eq!(summary["events_written"], events, "summary: {summary}");
    assert_eq!(summary["events_dropped"], 0, "summary: {summary}");
}

#[test]
fn an_unknown_log_event_value_gives_one_warning_line_and_a_verbose_trace() {
    let dir = Scratch::new("log-event-loud");
    let done = run_options_program(&dir, "log-event=loud", &[]);
    let lines: Vec<&str> = done.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stderr: {:?}", done.stderr);
    for part in ["log-event", "'loud'", "Verbose", "Compact"] {
        assert!(lines[0].contains(part), "{part} missing from: {}", lines[0]);
    }
    let trace = only_trace(
        &dir.path,
        &format!("perfflow.array.{}.{}.pfw", done.host(), done.pid()),
    );
    trace.assert_complete(done.pid());
    let body = trace.body();
    assert_eq!(body.len(), 202);
    assert!(body.iter().all(|e| e.ph() == "B" || e.ph() == "E"));
}

#[test]
fn option_values_are_matched_without_regard_to_case() {
    let dir = Scratch::new("value-case");
    let done = run_options_program(
        &dir,
        "log-event=cOmPaCt:log-format=OBJECT:log-enable=TRUE",
        &[],
    );
    assert_eq!(done.stderr, "", "no warning");
    let trace = only_trace(
        &dir.path,
        &format!("perfflow.object.{}.{}.pfw", done.host(), done.pid()),
    );
    trace.assert_complete(done.pid());
    assert!(trace.header.is_some(), "object layout");
    let body = trace.body();
    assert_eq!(body.len(), 101);
    assert!(body.iter().all(|e| e.ph() == "X"));
}

// --- the closing summary ------------------------------------------------------

#[test]
fn the_last_event_is_a_runtime_summary_counting_the_events_in_the_file() {
    let dir = Scratch::new("summary");
    let done = run_options_program(&dir, "", &[]);
    let trace = only_trace(
        &dir.path,
        &format!("perfflow.array.{}.{}.pfw", done.host(), done.pid()),
    );
    trace.assert_complete(done.pid());
    let last = trace.events.last().expect("events");
    assert_eq!(last.name(), "perfflow_runtime");
    assert_eq!(last.ph(), "M");
    let args = trace.summary();
    assert_eq!(args["events_written"], 202);
    assert_eq!(args["events_dropped"], 0);
    let bytes = args["bytes_written"].as_u64().expect("bytes_written");
    // Everything before the summary line was written by then.
    let before = fs::read_to_string(&trace.path)
        .expect("trace")
        .find("{\"name\":\"perfflow_runtime\"")
        .expect("summary line") as u64;
    assert!(
        bytes >= before - 2 && bytes <= trace.len as u64,
        "bytes_written {bytes}, summary at byte {before}"
    );
}

//! End-to-end tests: C programs under `tests/c/` are compiled against the
//! runtime library built for this test run, executed in a scratch directory,
//! and their `.pfw` trace is parsed.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod support;
use support::{include_dir, lib_dir, source_dir};

/// How a test program links the runtime.
#[derive(Clone, Copy)]
enum Link {
    Static,
    Shared,
}

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("perfflow-runtime-{test}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

fn compile(program: &str, dir: &Path, link: Link) -> PathBuf {
    let out = dir.join(program);
    let cxx = source_dir().join(format!("{program}.cpp")).is_file();
    let source = source_dir().join(format!("{program}.{}", if cxx { "cpp" } else { "c" }));
    let mut cmd = Command::new(if cxx { "c++" } else { "cc" });
    cmd.arg("-O1")
        .arg("-g")
        .arg("-Wall")
        .arg("-Werror")
        .arg("-I")
        .arg(include_dir())
        .arg("-I")
        .arg(source_dir())
        .arg(source)
        .arg("-o")
        .arg(&out);
    match link {
        Link::Static => {
            cmd.arg(lib_dir("libperfflow_runtime.a").join("libperfflow_runtime.a"));
        }
        Link::Shared => {
            let dir = lib_dir("libperfflow_runtime.so");
            cmd.arg("-L")
                .arg(&dir)
                .arg("-lperfflow_runtime")
                .arg(format!("-Wl,-rpath,{}", dir.display()));
        }
    }
    cmd.args(["-lpthread", "-ldl", "-lm"]);
    let result = cmd.output().expect("run cc");
    assert!(
        result.status.success(),
        "compiling {program} failed:\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    out
}

/// What a run left behind.
struct Run {
    output: Output,
    pid: u32,
    host: String,
    trace_path: PathBuf,
    text: String,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Value of a `key=value` line printed by the program.
    fn printed(&self, key: &str) -> Option<String> {
        self.stdout().lines().find_map(|l| {
            l.split_whitespace()
                .find_map(|kv| kv.strip_prefix(&format!("{key}=")).map(str::to_string))
        })
    }

    /// The whole trace, parsed as one JSON document.
    fn events(&self) -> Vec<Value> {
        let doc: Value = serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("{} is not valid JSON: {e}", self.trace_path.display()));
        doc.as_array().expect("trace is a JSON array").clone()
    }

    /// Trace events without metadata.
    fn trace_events(&self) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["ph"] != "M")
            .collect()
    }
}

fn run_in(dir: &Path, bin: &Path, args: &[&str]) -> Run {
    let output = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run test program");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let ident = stdout
        .lines()
        .find(|l| l.starts_with("pid="))
        .unwrap_or_else(|| panic!("program printed no identity: {stdout}"));
    let mut pid = 0;
    let mut host = String::new();
    for kv in ident.split_whitespace() {
        if let Some(v) = kv.strip_prefix("pid=") {
            pid = v.parse().expect("pid");
        } else if let Some(v) = kv.strip_prefix("host=") {
            host = v.to_string();
        }
    }
    let trace_path = dir.join(format!("perfflow.array.{host}.{pid}.pfw"));
    let text = fs::read_to_string(&trace_path).unwrap_or_else(|e| {
        panic!(
            "no trace at {}: {e}\nstderr: {}",
            trace_path.display(),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    Run {
        output,
        pid,
        host,
        trace_path,
        text,
    }
}

fn build_and_run(test: &str, program: &str, link: Link, args: &[&str]) -> (PathBuf, Run) {
    let dir = scratch(test);
    let bin = compile(program, &dir, link);
    let run = run_in(&dir, &bin, args);
    (dir, run)
}

fn names_and_phases(events: &[Value]) -> Vec<(String, String)> {
    events
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap_or_default().to_string(),
                e["ph"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Checks that per thread every `E` closes the innermost open `B` of the same
/// name and that timestamps never go backwards. Returns (B+E count, open B
/// count) per tid.
fn check_stacks(events: &[Value]) -> HashMap<u64, (usize, usize)> {
    let mut stacks: HashMap<u64, Vec<String>> = HashMap::new();
    let mut counts: HashMap<u64, usize> = HashMap::new();
    let mut last_ts: HashMap<u64, f64> = HashMap::new();
    for e in events {
        let tid = e["tid"].as_u64().expect("tid");
        let ts = e["ts"].as_f64().expect("ts");
        let prev = last_ts.insert(tid, ts).unwrap_or(ts);
        assert!(ts >= prev, "time went backwards on tid {tid}: {e}");
        let name = e["name"].as_str().expect("name").to_string();
        match e["ph"].as_str() {
            Some("B") => {
                stacks.entry(tid).or_default().push(name);
                *counts.entry(tid).or_default() += 1;
            }
            Some("E") => {
                let top = stacks.entry(tid).or_default().pop();
                assert_eq!(top.as_deref(), Some(&name[..]), "unbalanced E on tid {tid}");
                *counts.entry(tid).or_default() += 1;
            }
            _ => {}
        }
    }
    counts
        .into_iter()
        .map(|(tid, n)| (tid, (n, stacks.get(&tid).map_or(0, Vec::len))))
        .collect()
}

fn assert_well_formed_lines(text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.first(), Some(&"["), "first line");
    assert_eq!(lines.last(), Some(&"]"), "last line");
    for (i, line) in lines[1..lines.len() - 1].iter().enumerate() {
        assert!(
            line.starts_with('{'),
            "line {} is not one event: {line}",
            i + 2
        );
    }
}

/// The fields of one trace line that the stack check needs, read without a
/// full JSON parse. Only for lines written by the runtime with plain names.
struct LineEvent<'a> {
    name: &'a str,
    tid: u64,
    ts: f64,
    ph: &'a str,
}

impl<'a> LineEvent<'a> {
    fn string_field(line: &'a str, key: &str) -> &'a str {
        let start = line
            .find(&format!("\"{key}\":\""))
            .unwrap_or_else(|| panic!("no {key} in {line}"))
            + key.len()
            + 4;
        let len = line[start..].find('"').expect("closing quote");
        &line[start..start + len]
    }

    fn read(line: &'a str) -> LineEvent<'a> {
        let tid_at = line.find("\"tid\":").expect("tid") + 6;
        let digits: String = line[tid_at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let ts = match line.find("\"ts\":") {
            Some(at) => {
                let text: String = line[at + 5..]
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                text.parse().expect("ts value")
            }
            None => 0.0,
        };
        LineEvent {
            name: LineEvent::string_field(line, "name"),
            tid: digits.parse().expect("tid value"),
            ts,
            ph: LineEvent::string_field(line, "ph"),
        }
    }
}

#[test]
fn nested_sites_produce_matching_begin_and_end_events_in_stack_order() {
    let (dir, run) = build_and_run("nested", "nested", Link::Static, &[]);
    assert!(run.output.status.success(), "stderr: {}", run.stderr());
    assert_well_formed_lines(&run.text);
    let events = run.trace_events();
    let got = names_and_phases(&events);
    let baz = "baz \"quoted\"\n";
    let one = [
        ("foo", "B"),
        ("bar", "B"),
        (baz, "B"),
        (baz, "E"),
        ("bar", "E"),
        ("foo", "E"),
    ];
    let want: Vec<(String, String)> = one
        .iter()
        .chain(one.iter())
        .map(|(n, p)| (n.to_string(), p.to_string()))
        .collect();
    assert_eq!(got, want);
    for e in &events {
        assert_eq!(e["cat"], "nested.c");
        assert_eq!(e["pid"].as_u64(), Some(u64::from(run.pid)));
        assert_eq!(e["tid"].as_u64(), Some(u64::from(run.pid)));
    }
    let all = run.events();
    assert_eq!(all[0]["name"], "process_name");
    assert_eq!(all[0]["args"]["name"], "nested");
    fs::remove_dir_all(dir).ok();
}

#[test]
fn timestamps_are_epoch_microseconds_with_nanosecond_decimals() {
    let (dir, run) = build_and_run("timestamps", "nested", Link::Static, &[]);
    assert!(run.output.status.success(), "stderr: {}", run.stderr());
    let now_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_micros() as f64;
    for e in run.trace_events() {
        let ts = e["ts"].as_f64().expect("ts");
        assert!(
            (now_us - ts).abs() < 600e6,
            "ts {ts} is not close to now {now_us}"
        );
    }
    let line = run
        .text
        .lines()
        .find(|line| line.contains("\"ts\":"))
        .expect("an event line");
    let ts_text = line.split("\"ts\":").nth(1).expect("ts field");
    let frac = ts_text.split(',').next().expect("ts value");
    let decimals = frac.split('.').nth(1).expect("fractional part");
    assert_eq!(decimals.len(), 3, "ts {frac}");
    fs::remove_dir_all(dir).ok();
}

#[test]
fn trace_file_is_named_after_host_and_pid() {
    let (dir, run) = build_and_run("filename", "nested", Link::Static, &[]);
    let name = run
        .trace_path
        .file_name()
        .and_then(|n| n.to_str())
        .expect("name");
    assert_eq!(name, format!("perfflow.array.{}.{}.pfw", run.host, run.pid));
    let pfw: Vec<_> = fs::read_dir(&dir)
        .expect("scratch dir")
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "pfw"))
        .collect();
    assert_eq!(pfw.len(), 1, "exactly one trace file");
    fs::remove_dir_all(dir).ok();
}

#[test]
fn exit_called_inside_a_woven_function_still_completes_the_trace() {
    let (dir, run) = build_and_run("exit", "exit_inside", Link::Static, &[]);
    assert_eq!(run.output.status.code(), Some(3));
    assert_well_formed_lines(&run.text);
    let events = run.trace_events();
    let got = names_and_phases(&events);
    // quit() gets its exit event right before exit(); the enclosing outer
    // slice is ended when the trace is completed.
    let tail: Vec<_> = got[got.len() - 4..].to_vec();
    let want: Vec<(String, String)> =
        [("outer", "B"), ("quit", "B"), ("quit", "E"), ("outer", "E")]
            .iter()
            .map(|(n, p)| (n.to_string(), p.to_string()))
            .collect();
    assert_eq!(tail, want);
    // 11 quit slices and two outer slices, all closed.
    let counts = check_stacks(&events);
    assert_eq!(counts[&u64::from(run.pid)], (2 * 11 + 2 * 2, 0));
    fs::remove_dir_all(dir).ok();
}

#[test]
fn main_ending_with_pthread_exit_keeps_events_of_threads_that_finish_later() {
    let (dir, run) = build_and_run("pthread-exit", "pthread_exit_main", Link::Static, &[]);
    assert!(run.output.status.success(), "stderr: {}", run.stderr());
    assert_well_formed_lines(&run.text);
    let events = run.trace_events();
    let counts = check_stacks(&events);
    let main = u64::from(run.pid);
    assert_eq!(counts.get(&main), Some(&(2, 0)), "main thread slice");
    let mut workers: Vec<(usize, usize)> = counts
        .iter()
        .filter(|(tid, _)| **tid != main)
        .map(|(_, c)| *c)
        .collect();
    workers.sort();
    // Worker n records one outer slice and 100 * (n + 1) steps.
    assert_eq!(workers, [(2 * 101, 0), (2 * 201, 0), (2 * 301, 0)]);
    fs::remove_dir_all(dir).ok();
}

#[test]
fn eight_threads_recording_200k_events_each_keep_memory_flat_and_lose_nothing() {
    let dir = scratch("threads");
    let bin = compile("many_threads", &dir, Link::Static);

    // A smaller run that fills every thread's chunk twice, so the writer's
    // queue and spare chunks are in use, gives the memory baseline; the
    // full run must not need noticeably more.
    let small_dir = dir.join("small");
    fs::create_dir_all(&small_dir).expect("small dir");
    let small = run_in(&small_dir, &bin, &["8", "140000"]);
    let small_rss: u64 = small
        .printed("maxrss_kib")
        .expect("rss")
        .parse()
        .expect("number");
    drop(small);
    fs::remove_dir_all(&small_dir).ok();

    let run = run_in(&dir, &bin, &["8", "200000"]);
    assert!(run.output.status.success(), "stderr: {}", run.stderr());
    let rss: u64 = run
        .printed("maxrss_kib")
        .expect("rss")
        .parse()
        .expect("number");
    println!("peak RSS: {small_rss} KiB for 8 x 140k events, {rss} KiB for 8 x 200k events");
    assert!(
        rss < small_rss + 8 * 1024,
        "memory grew with the event count: {small_rss} KiB -> {rss} KiB"
    );
    assert!(
        !run.stderr().contains("events are not in the trace"),
        "stderr: {}",
        run.stderr()
    );

    // One event per line is part of the format, so the file is checked line
    // by line: every line is an object, every line but the last ends with a
    // comma, and a sample of lines goes through a full JSON parse (parsing
    // all 1.6 million lines would dominate the test's run time).
    let lines: Vec<&str> = run.text.lines().collect();
    assert_eq!(lines.first(), Some(&"["));
    assert_eq!(lines.last(), Some(&"]"));
    let body = &lines[1..lines.len() - 1];
    let mut events = Vec::with_capacity(body.len());
    for (i, line) in body.iter().enumerate() {
        let last = i + 1 == body.len();
        let obj = if last {
            line
        } else {
            line.strip_suffix(',')
                .expect("every line but the last ends with a comma")
        };
        assert!(
            obj.starts_with('{') && obj.ends_with('}'),
            "line {i}: {obj}"
        );
        if i % 97 == 0 || last {
            let v: Value = serde_json::from_str(obj).expect("one JSON object per line");
            assert!(v.is_object());
        }
        let ev = LineEvent::read(obj);
        if ev.ph != "M" {
            events.push(ev);
        }
    }
    assert_eq!(events.len(), 8 * 200_000, "event count");
    let mut stacks: HashMap<u64, Vec<&str>> = HashMap::new();
    let mut counts: HashMap<u64, usize> = HashMap::new();
    let mut last_ts: HashMap<u64, f64> = HashMap::new();
    for e in &events {
        assert_ne!(e.tid, u64::from(run.pid), "main records nothing");
        let prev = last_ts.insert(e.tid, e.ts).unwrap_or(e.ts);
        assert!(e.ts >= prev, "time went backwards on tid {}", e.tid);
        let stack = stacks.entry(e.tid).or_default();
        match e.ph {
            "B" => stack.push(e.name),
            "E" => assert_eq!(stack.pop(), Some(e.name), "unbalanced E on tid {}", e.tid),
            other => panic!("unexpected phase {other}"),
        }
        *counts.entry(e.tid).or_default() += 1;
    }
    assert_eq!(counts.len(), 8, "eight recording threads");
    for (tid, n) in &counts {
        assert_eq!(*n, 200_000, "events of tid {tid}");
        assert!(stacks[tid].is_empty(), "open slices on tid {tid}");
    }
    drop(events);
    fs::remove_dir_all(dir).ok();
}

#[test]
fn before_and_after_pointcuts_produce_instant_events() {
    let (dir, run) = build_and_run("instants", "pointcuts", Link::Static, &[]);
    assert!(run.output.status.success(), "stderr: {}", run.stderr());
    let events = run.trace_events();
    let before: Vec<_> = events
        .iter()
        .filter(|e| e["name"] == "before_only")
        .collect();
    let after: Vec<_> = events
        .iter()
        .filter(|e| e["name"] == "after_only")
        .collect();
    assert_eq!(before.len(), 1);
    assert_eq!(after.len(), 1);
    for e in before.iter().chain(after.iter()) {
        assert_eq!(e["ph"], "i");
        assert_eq!(e["s"], "t");
        assert_eq!(e["cat"], "pointcuts.c");
    }
    fs::remove_dir_all(dir).ok();
}

#[test]
fn async_pointcuts_produce_paired_async_events_with_the_scope_as_category() {
    let (dir, run) = build_and_run("async", "pointcuts", Link::Static, &[]);
    assert!(run.output.status.success(), "stderr: {}", run.stderr());
    let events = run.trace_events();
    let pick =
        |name: &str| -> Vec<&Value> { events.iter().filter(|e| e["name"] == name).collect() };
    let work = pick("async_work");
    let plain = pick("async_plain");
    assert_eq!(
        names_and_phases(&work.iter().map(|v| (*v).clone()).collect::<Vec<_>>())
            .iter()
            .map(|(_, p)| p.as_str())
            .collect::<Vec<_>>(),
        ["b", "e"]
    );
    assert_eq!(work[0]["id"], work[1]["id"]);
    assert_eq!(work[0]["cat"], "io");
    assert_eq!(plain[0]["cat"], "default");
    assert_eq!(plain[0]["id"], plain[1]["id"]);
    assert_ne!(plain[0]["id"], work[0]["id"]);
    let mark = pick("async_mark");
    assert_eq!(mark.len(), 1);
    assert_eq!(mark[0]["ph"], "n");
    assert!(mark[0]["id"].is_u64());
    fs::remove_dir_all(dir).ok();
}

#[test]
fn exit_without_enter_is_reported_once_on_stderr_and_not_fatal() {
    let (dir, run) = build_and_run("misuse", "pointcuts", Link::Static, &[]);
    assert!(run.output.status.success());
    let stderr = run.stderr();
    assert_eq!(
        stderr.matches("exit without a matching enter").count(),
        1,
        "stderr: {stderr}"
    );
    assert!(stderr.contains("lonely"));
    assert!(run.trace_events().iter().all(|e| e["name"] != "lonely"));
    fs::remove_dir_all(dir).ok();
}

#[test]
fn upstream_abi_shows_a_demangled_name_for_a_mangled_function() {
    let (dir, run) = build_and_run("upstream", "upstream_abi", Link::Static, &[]);
    assert!(run.output.status.success(), "stderr: {}", run.stderr());
    let events = run.trace_events();
    let foo: Vec<_> = events
        .iter()
        .filter(|e| e["cat"] == "smoketest.cpp")
        .collect();
    let got: Vec<(String, String)> =
        names_and_phases(&foo.iter().map(|v| (*v).clone()).collect::<Vec<_>>());
    let one = [
        ("SmokeTest::foo", "B"),
        ("bar", "i"),
        ("SmokeTest::foo", "E"),
    ];
    let want: Vec<(String, String)> = one
        .iter()
        .cycle()
        .take(9)
        .map(|(n, p)| (n.to_string(), p.to_string()))
        .collect();
    assert_eq!(got, want);
    let fetch: Vec<_> = events.iter().filter(|e| e["name"] == "fetch").collect();
    assert_eq!(fetch.len(), 2);
    assert_eq!(fetch[0]["ph"], "b");
    assert_eq!(fetch[1]["ph"], "e");
    assert_eq!(fetch[0]["cat"], "net");
    assert_eq!(fetch[0]["id"], fetch[1]["id"]);
    fs::remove_dir_all(dir).ok();
}

#[test]
fn upstream_abi_in_a_cxx_program_demangles_templates_and_operators() {
    let (dir, run) = build_and_run("upstream-cxx", "upstream_cxx", Link::Static, &[]);
    assert!(run.output.status.success(), "stderr: {}", run.stderr());
    let got = names_and_phases(&run.trace_events());
    let want: Vec<(String, String)> = [
        ("ns::work<int>", "B"),
        ("ns::work<int>", "E"),
        ("Foo::operator()", "B"),
        ("Foo::operator()", "E"),
    ]
    .iter()
    .map(|(n, p)| (n.to_string(), p.to_string()))
    .collect();
    assert_eq!(got, want);
    fs::remove_dir_all(dir).ok();
}

#[test]
fn region_api_records_named_regions_even_from_a_reused_buffer() {
    let (dir, run) = build_and_run("regions", "upstream_abi", Link::Static, &[]);
    assert!(run.output.status.success(), "stderr: {}", run.stderr());
    let events: Vec<Value> = run
        .trace_events()
        .into_iter()
        .filter(|e| e["cat"] == "region")
        .collect();
    let got = names_and_phases(&events);
    let want: Vec<(String, String)> = [
        ("phase-one", "B"),
        ("inner region", "B"),
        ("inner region", "E"),
        ("phase-one", "E"),
        ("phase-two", "B"),
        ("inner region", "B"),
        ("inner region", "E"),
        ("phase-two", "E"),
    ]
    .iter()
    .map(|(n, p)| (n.to_string(), p.to_string()))
    .collect();
    assert_eq!(got, want);
    fs::remove_dir_all(dir).ok();
}

#[test]
fn events_after_the_final_flush_are_dropped_and_counted_without_crashing() {
    let (dir, run) = build_and_run("late", "late_events", Link::Static, &[]);
    assert!(run.output.status.success(), "stderr: {}", run.stderr());
    assert_eq!(run.printed("late_dropped").as_deref(), Some("2"));
    assert_well_formed_lines(&run.text);
    let events = run.trace_events();
    assert!(events.iter().all(|e| e["name"] != "late"));
    assert!(events.iter().any(|e| e["name"] == "spin"));
    assert!(events.iter().any(|e| e["name"] == "main"));
    fs::remove_dir_all(dir).ok();
}

#[test]
fn events_of_exit_handlers_registered_after_the_first_event_are_in_the_trace() {
    for mode in ["return", "exit"] {
        let (dir, run) = build_and_run(
            &format!("exit-handlers-{mode}"),
            "exit_handlers_after_the_first_event",
            Link::Static,
            &[mode],
        );
        assert!(
            run.output.status.success(),
            "{mode}: stderr: {}",
            run.stderr()
        );
        assert!(
            !run.stderr().contains("not in the trace"),
            "{mode}: {}",
            run.stderr()
        );
        let events = run.trace_events();
        let finalize = events.iter().filter(|e| e["name"] == "finalize").count();
        assert_eq!(finalize, 6, "{mode}: the handler's three calls");
        assert_eq!(check_stacks(&events)[&u64::from(run.pid)], (8, 0), "{mode}");
        fs::remove_dir_all(dir).ok();
    }
}

#[test]
fn a_siglongjmp_out_of_a_handler_that_cut_a_store_short_loses_no_later_event() {
    let (dir, run) = build_and_run(
        "siglongjmp",
        "siglongjmp_out_of_a_handler",
        Link::Static,
        &["20", "1000"],
    );
    assert!(run.output.status.success(), "stderr: {}", run.stderr());
    assert_eq!(run.printed("rounds").as_deref(), Some("20"));
    let events = run.trace_events();
    let after = events.iter().filter(|e| e["name"] == "after").count();
    assert_eq!(
        after,
        2000,
        "the 1000 pairs after the jumps; stderr: {}",
        run.stderr()
    );
    fs::remove_dir_all(dir).ok();
}

#[test]
fn a_program_closing_descriptors_in_a_loop_is_never_ended_early() {
    let (dir, run) = build_and_run(
        "close-loop",
        "closes_descriptors_while_it_runs",
        Link::Static,
        &["2.5"],
    );
    assert!(run.output.status.success(), "stderr: {}", run.stderr());
    let stdout = String::from_utf8_lossy(&run.output.stdout);
    assert!(
        stdout.contains("loop finished"),
        "ended before its loop did; stdout: {stdout}; stderr: {}",
        run.stderr()
    );
    assert!(!run.stderr().contains("panicked"), "{}", run.stderr());
    fs::remove_dir_all(dir).ok();
}

#[test]
fn forked_child_writes_its_own_trace_and_leaves_the_parent_trace_intact() {
    let (dir, run) = build_and_run("fork", "forked", Link::Static, &[]);
    assert!(run.output.status.success(), "stderr: {}", run.stderr());
    assert_eq!(run.printed("child_status").as_deref(), Some("0"));
    assert_well_formed_lines(&run.text);
    let events = run.trace_events();
    assert!(events.iter().all(|e| e["name"] == "parent_work"));
    assert!(events
        .iter()
        .all(|e| e["pid"].as_u64() == Some(u64::from(run.pid))));
    let counts = check_stacks(&events);
    assert_eq!(counts[&u64::from(run.pid)], (4, 0));

    let child: u32 = run
        .printed("child")
        .and_then(|c| c.parse().ok())
        .expect("child pid printed");
    let suffix = format!(".{child}.pfw");
    let child_trace = fs::read_dir(&dir)
        .expect("scratch dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(&suffix))
        .expect("the child writes its own trace");
    let text = fs::read_to_string(&child_trace).expect("child trace readable");
    assert_well_formed_lines(&text);
    let child_events: Vec<Value> = serde_json::from_str::<Value>(&text)
        .expect("child trace is JSON")
        .as_array()
        .expect("array")
        .iter()
        .filter(|e| e["ph"] != "M")
        .cloned()
        .collect();
    assert!(child_events
        .iter()
        .all(|e| e["pid"].as_u64() == Some(u64::from(child))));
    // The slice it forked inside of, once, then only its own work.
    let parent_work: Vec<&str> = child_events
        .iter()
        .filter(|e| e["name"] == "parent_work")
        .map(|e| e["ph"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(parent_work, ["B", "E"]);
    assert_eq!(
        child_events
            .iter()
            .filter(|e| e["name"] == "child_work")
            .count(),
        200_000
    );
    let child_counts = check_stacks(&child_events);
    assert_eq!(child_counts[&u64::from(child)], (100_001 * 2, 0));
    fs::remove_dir_all(dir).ok();
}

#[test]
fn tracing_switches_itself_off_when_the_trace_file_cannot_be_created() {
    let dir = scratch("no-dir");
    let bin = compile("no_trace_dir", &dir, Link::Static);
    let output = Command::new(&bin)
        .current_dir(&dir)
        .output()
        .expect("run test program");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "done\n");
    assert_eq!(
        stderr.matches("tracing is off").count(),
        1,
        "stderr: {stderr}"
    );
    assert!(
        !stderr.contains("events are not in the trace"),
        "with tracing off nothing is recorded, so nothing is lost: {stderr}"
    );
    fs::remove_dir_all(dir).ok();
}

#[test]
fn shared_library_build_links_and_traces() {
    let (dir, run) = build_and_run("shared", "nested", Link::Shared, &[]);
    assert!(run.output.status.success(), "stderr: {}", run.stderr());
    let events = run.trace_events();
    assert_eq!(events.len(), 12);
    let counts = check_stacks(&events);
    assert_eq!(counts[&u64::from(run.pid)], (12, 0));
    // The binary really uses the shared library.
    let ldd = Command::new("ldd")
        .arg(dir.join("nested"))
        .output()
        .expect("ldd (part of the C library) runs");
    let ldd = String::from_utf8_lossy(&ldd.stdout);
    assert!(ldd.contains("libperfflow_runtime.so"), "ldd: {ldd}");
    fs::remove_dir_all(dir).ok();
}

/// Prints the cost per enter/exit pair next to a bare clock-and-store
/// baseline. Timing only, never a pass/fail criterion; run with
/// `cargo test --release -p perfflow-runtime -- --ignored --nocapture`.
#[test]
#[ignore]
fn hot_path_cost_is_printed_next_to_a_clock_and_store_baseline() {
    let dir = scratch("bench");
    let out = dir.join("bench_hot_path");
    let status = Command::new("cc")
        .args(["-O2", "-I"])
        .arg(include_dir())
        .arg("-I")
        .arg(source_dir())
        .arg(source_dir().join("bench_hot_path.c"))
        .arg(lib_dir("libperfflow_runtime.a").join("libperfflow_runtime.a"))
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&out)
        .status()
        .expect("run cc");
    assert!(status.success());
    let run = run_in(&dir, &out, &[]);
    print!("{}", run.stdout());
    fs::remove_dir_all(dir).ok();
}

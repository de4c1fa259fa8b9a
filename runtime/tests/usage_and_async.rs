//! End-to-end tests of `cpu-mem-usage=True` and of async operations that
//! end on another thread than the one that began them (the manual async API
//! and PerfFlowAspect's ABI with `async=1`), plus the annotation macro of
//! `perfflow.h`.
//!
//! Each test compiles a program from `tests/c/` against the runtime built
//! for this test run, runs it in a scratch directory and parses its trace
//! with `serde_json`. The programs run one at a time, so a region that
//! spins is not slowed down by another test's program.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use serde_json::Value;

mod support;
use support::{include_dir, lib_dir, source_dir};

/// Held while a test program runs.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A scratch directory, removed when the test ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "perfflow-usage-async-{test}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Compiles `tests/c/<program>.c` against the static runtime.
fn compile(program: &str, dir: &Path) -> PathBuf {
    let out = dir.join(program);
    let result = Command::new("cc")
        .args(["-O1", "-g", "-Wall", "-Werror", "-I"])
        .arg(include_dir())
        .arg("-I")
        .arg(source_dir())
        .arg(source_dir().join(format!("{program}.c")))
        .arg("-o")
        .arg(&out)
        .arg(lib_dir("libperfflow_runtime.a").join("libperfflow_runtime.a"))
        .args(["-lpthread", "-ldl", "-lm"])
        .output()
        .expect("run cc");
    assert!(
        result.status.success(),
        "compiling {program} failed:\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    out
}

/// One trace event: the parsed object, and its `ts` and `dur` in whole
/// nanoseconds, read from the text (an `f64` holds a microsecond timestamp
/// of today only to a quarter of a microsecond).
#[derive(Debug)]
struct Event {
    json: Value,
    ts_ns: u64,
    dur_ns: Option<u64>,
}

impl Event {
    fn ph(&self) -> &str {
        self.json["ph"].as_str().unwrap_or_default()
    }

    fn name(&self) -> &str {
        self.json["name"].as_str().unwrap_or_default()
    }

    fn is(&self, name: &str, ph: &str) -> bool {
        self.name() == name && self.ph() == ph
    }
}

/// A `ts` or `dur` value as written (`<µs>.<3 digits>`) in nanoseconds.
fn field_ns(line: &str, key: &str) -> Option<u64> {
    let at = line.find(&format!("\"{key}\":"))? + key.len() + 3;
    let text: String = line[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let (micros, frac) = text.split_once('.').unwrap_or((&text, "0"));
    assert_eq!(frac.len().max(3), 3, "{key} has at most 3 decimals: {line}");
    let frac = format!("{frac:0<3}");
    Some(micros.parse::<u64>().ok()? * 1000 + frac.parse::<u64>().ok()?)
}

/// What a run left behind.
struct Run {
    output: Output,
    text: String,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Value of a `key=value` word printed by the program.
    fn printed(&self, key: &str) -> String {
        let prefix = format!("{key}=");
        self.stdout()
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(&prefix).map(str::to_string))
            .unwrap_or_else(|| panic!("the program printed no {key}: {}", self.stdout()))
    }

    /// Trace events without metadata, in file order. The whole trace must
    /// be one JSON array with one event per line.
    fn events(&self) -> Vec<Event> {
        let doc: Value = serde_json::from_str(&self.text).expect("the trace is one JSON document");
        let count = doc.as_array().expect("the trace is a JSON array").len();
        let lines: Vec<&str> = self.text.lines().collect();
        assert_eq!(lines.len(), count + 2, "one event per line");
        lines[1..lines.len() - 1]
            .iter()
            .map(|line| {
                let object = line.strip_suffix(',').unwrap_or(line);
                let json: Value = serde_json::from_str(object).expect("one event per line");
                Event {
                    ts_ns: field_ns(object, "ts").unwrap_or(0),
                    dur_ns: field_ns(object, "dur"),
                    json,
                }
            })
            .filter(|e| e.ph() != "M")
            .collect()
    }
}

/// Builds `program`, runs it with `PERFFLOW_OPTIONS=options` and reads its
/// trace.
fn run(program: &str, options: &str, args: &[&str]) -> Run {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Scratch::new(program);
    let bin = compile(program, &dir.0);
    let output = Command::new(&bin)
        .args(args)
        .current_dir(&dir.0)
        .env("PERFFLOW_OPTIONS", options)
        .env_remove("PERFFLOW_INSTANCE_PATH")
        .output()
        .expect("run test program");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{program} failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let ident = stdout
        .lines()
        .find(|l| l.starts_with("pid="))
        .unwrap_or_else(|| panic!("program printed no identity: {stdout}"));
    let mut pid = "";
    let mut host = "";
    for kv in ident.split_whitespace() {
        if let Some(v) = kv.strip_prefix("pid=") {
            pid = v;
        } else if let Some(v) = kv.strip_prefix("host=") {
            host = v;
        }
    }
    let trace = dir.0.join(format!("perfflow.array.{host}.{pid}.pfw"));
    let text = fs::read_to_string(&trace)
        .unwrap_or_else(|e| panic!("no trace at {}: {e}", trace.display()));
    Run { output, text }
}

const CPU_MEM: &str = "cpu-mem-usage=True";
const CPU_MEM_COMPACT: &str = "cpu-mem-usage=True:log-event=Compact";

fn count(events: &[Event], name: &str, ph: &str) -> usize {
    events.iter().filter(|e| e.is(name, ph)).count()
}

/// One `around` slice of the trace: name, begin and end in nanoseconds.
#[derive(Debug)]
struct Slice {
    name: String,
    begin_ns: u64,
    end_ns: u64,
}

/// The slices of a trace: `B`/`E` paired per thread on a stack, or `X`.
fn slices(events: &[Event]) -> Vec<Slice> {
    let mut open: HashMap<u64, Vec<(String, u64)>> = HashMap::new();
    let mut out = Vec::new();
    for e in events {
        let tid = e.json["tid"].as_u64().expect("tid");
        let name = e.name().to_string();
        match e.ph() {
            "B" => open.entry(tid).or_default().push((name, e.ts_ns)),
            "E" => {
                let (begun, begin_ns) = open
                    .entry(tid)
                    .or_default()
                    .pop()
                    .unwrap_or_else(|| panic!("E without B: {e:?}"));
                assert_eq!(begun, name, "E closes the innermost B");
                out.push(Slice {
                    name,
                    begin_ns,
                    end_ns: e.ts_ns,
                });
            }
            "X" => out.push(Slice {
                name,
                begin_ns: e.ts_ns,
                end_ns: e.ts_ns + e.dur_ns.expect("dur"),
            }),
            _ => {}
        }
    }
    assert!(open.values().all(Vec::is_empty), "slices left open");
    out
}

/// Asserts that every slice has its two `cpu-mem-usage` samples — at its
/// begin the usage, at its end zeros — and that there are no others;
/// returns each slice with the `args` of its begin sample.
fn usage_of(events: &[Event]) -> Vec<(Slice, Value)> {
    let mut samples: HashMap<(String, u64), Vec<&Value>> = HashMap::new();
    for e in events.iter().filter(|e| e.ph() == "C") {
        samples
            .entry((e.name().to_string(), e.ts_ns))
            .or_default()
            .push(&e.json["args"]);
    }
    let all = slices(events);
    let total: usize = samples.values().map(Vec::len).sum();
    assert_eq!(total, 2 * all.len(), "two counter samples per slice");
    all.into_iter()
        .map(|slice| {
            let at = |ns: u64| -> Value {
                let found = samples
                    .get(&(slice.name.clone(), ns))
                    .unwrap_or_else(|| panic!("no sample at {ns} for {slice:?}"));
                assert_eq!(found.len(), 1, "one sample at {ns} for {slice:?}");
                found[0].clone()
            };
            let end = at(slice.end_ns);
            assert_eq!(end["cpu_usage"].as_f64(), Some(0.0), "{slice:?}");
            assert_eq!(end["memory_usage"].as_f64(), Some(0.0), "{slice:?}");
            let begin = at(slice.begin_ns);
            (slice, begin)
        })
        .collect()
}

fn begin_args(events: &[Event], name: &str) -> Value {
    let found: Vec<Value> = usage_of(events)
        .into_iter()
        .filter(|(s, _)| s.name == name)
        .map(|(_, args)| args)
        .collect();
    assert_eq!(found.len(), 1, "one slice named {name}");
    found[0].clone()
}

#[test]
fn a_spinning_region_shows_cpu_usage_near_one_hundred_percent() {
    let run = run("usage_regions", CPU_MEM, &[]);
    let args = begin_args(&run.events(), "spin");
    let cpu = args["cpu_usage"].as_f64().expect("cpu_usage");
    assert!(cpu <= 100.5, "cpu_usage {cpu}");
    // The program measured its own CPU share over nearly the same interval;
    // it is below 100 % only when other processes took the CPU from it.
    let own: f64 = run.printed("spin_share").parse().expect("spin_share");
    assert!((cpu - own).abs() <= 5.0, "cpu_usage {cpu}, measured {own}");
    if own >= 50.0 {
        assert!(cpu >= 50.0, "cpu_usage {cpu}, measured {own}");
    } else {
        println!("the machine is busy: the spinning thread had {own} % of a CPU");
    }
}

#[test]
fn a_sleeping_region_shows_cpu_usage_near_zero() {
    let run = run("usage_regions", CPU_MEM, &[]);
    let args = begin_args(&run.events(), "nap");
    let cpu = args["cpu_usage"].as_f64().expect("cpu_usage");
    assert!((0.0..=20.0).contains(&cpu), "cpu_usage {cpu}");
}

#[test]
fn memory_usage_is_the_resident_size_at_the_exit_of_a_region_that_touched_64_mib() {
    let run = run("usage_regions", CPU_MEM, &[]);
    assert_eq!(run.printed("touched"), "1");
    let events = run.events();
    let touch = begin_args(&events, "touch")["memory_usage"]
        .as_f64()
        .expect("memory_usage");
    let before = begin_args(&events, "spin")["memory_usage"]
        .as_f64()
        .expect("memory_usage");
    assert!(touch >= 64.0 * 1024.0, "memory_usage {touch} KiB");
    assert!(
        touch - before >= 60.0 * 1024.0,
        "the block shows in the resident size: {before} KiB -> {touch} KiB"
    );
    // Whole KiB, as PerfFlowAspect writes them.
    assert_eq!(touch.fract(), 0.0);
}

#[test]
fn recursion_gets_one_counter_pair_per_call() {
    let run = run("usage_fib", CPU_MEM, &[]);
    assert_eq!(run.printed("fib"), "5");
    let events = run.events();
    assert_eq!(count(&events, "fib", "B"), 15, "fib(5) makes 15 calls");
    assert_eq!(count(&events, "fib", "E"), 15);
    let usage = usage_of(&events);
    assert_eq!(usage.len(), 15);
    for (slice, args) in &usage {
        let cpu = args["cpu_usage"].as_f64().expect("cpu_usage");
        assert!((0.0..=100.5).contains(&cpu), "{slice:?}: cpu_usage {cpu}");
        assert!(args["memory_usage"].as_f64().expect("memory_usage") > 0.0);
    }
    // Each pair is written just before the end of its slice.
    for (i, e) in events.iter().enumerate() {
        if e.ph() == "E" {
            assert!(events[i - 2].is("fib", "C") && events[i - 1].is("fib", "C"));
            assert_eq!(events[i - 1].ts_ns, e.ts_ns);
        }
    }
}

#[test]
fn compact_log_with_cpu_mem_usage_writes_the_pair_before_each_complete_event() {
    let run = run("usage_fib", CPU_MEM_COMPACT, &[]);
    let events = run.events();
    assert_eq!(count(&events, "fib", "B"), 0);
    assert_eq!(count(&events, "fib", "X"), 15);
    assert_eq!(usage_of(&events).len(), 15);
    for (i, e) in events.iter().enumerate() {
        if e.ph() == "X" {
            assert!(events[i - 2].is("fib", "C") && events[i - 1].is("fib", "C"));
            assert_eq!(events[i - 2].ts_ns, e.ts_ns, "begin sample at the X's ts");
        }
    }
}

#[test]
fn payload_records_never_split_across_chunks_so_every_region_has_its_counters() {
    let run = run("usage_many", CPU_MEM, &["30000"]);
    assert_eq!(run.printed("steps"), "30000");
    assert!(
        !run.stderr().contains("events are not in the trace"),
        "{}",
        run.stderr()
    );
    let events = run.events();
    // 30000 x (B, i, E) = 90000 events: more than one chunk of 65536
    // records even without their payloads.
    assert_eq!(count(&events, "tick", "i"), 30_000);
    let usage = usage_of(&events);
    assert_eq!(usage.len(), 30_000);
    for (slice, args) in &usage {
        assert!(
            args["memory_usage"].as_f64().expect("memory_usage") > 0.0,
            "{slice:?}: {args}"
        );
    }
}

#[test]
fn without_the_option_no_counter_events_are_written() {
    let run = run("usage_fib", "", &[]);
    let events = run.events();
    assert_eq!(count(&events, "fib", "B"), 15);
    assert!(events.iter().all(|e| e.ph() != "C"));
}

/// `(name, cat, tid, id)` of the async events with phase `ph`, in file order.
fn async_events(events: &[Event], ph: &str) -> Vec<(String, String, u64, u64)> {
    events
        .iter()
        .filter(|e| e.ph() == ph)
        .map(|e| &e.json)
        .map(|e| {
            (
                e["name"].as_str().expect("name").to_string(),
                e["cat"].as_str().expect("cat").to_string(),
                e["tid"].as_u64().expect("tid"),
                e["id"].as_u64().expect("numeric id"),
            )
        })
        .collect()
}

#[test]
fn async_begin_on_one_thread_and_end_on_another_pair_by_id() {
    let run = run("async_threads", "", &[]);
    let ids: Vec<u64> = run
        .printed("ids")
        .split(',')
        .map(|i| i.parse().expect("id"))
        .collect();
    let begin_tid: u64 = run.printed("begin_tid").parse().expect("tid");
    let end_tid: u64 = run.printed("end_tid").parse().expect("tid");
    assert_ne!(begin_tid, end_tid);
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "ids are unique: {ids:?}");
    assert!(ids.iter().all(|&id| id != 0));

    let events = run.events();
    let begins = async_events(&events, "b");
    let ends = async_events(&events, "e");
    let want_begins: Vec<_> = [
        ("transfer", "io", ids[0]),
        ("transfer", "io", ids[1]),
        ("transfer", "io", ids[2]),
        ("plain", "default", ids[3]),
    ]
    .iter()
    .map(|(n, c, id)| (n.to_string(), c.to_string(), begin_tid, *id))
    .collect();
    assert_eq!(begins, want_begins);
    let want_ends: Vec<_> = [
        ("plain", "default", ids[3]),
        ("transfer", "io", ids[2]),
        ("transfer", "io", ids[1]),
        ("transfer", "io", ids[0]),
    ]
    .iter()
    .map(|(n, c, id)| (n.to_string(), c.to_string(), end_tid, *id))
    .collect();
    assert_eq!(ends, want_ends);
    assert!(run.stderr().is_empty(), "{}", run.stderr());
}

#[test]
fn upstream_async_before_and_after_on_different_threads_pair_first_in_first_out() {
    let run = run("upstream_async_fifo", "", &[]);
    let begin_tid: u64 = run.printed("begin_tid").parse().expect("tid");
    let end_tid: u64 = run.printed("end_tid").parse().expect("tid");
    let events = run.events();
    let ids_of = |ph: &str, name: &str, tid: u64| -> Vec<u64> {
        async_events(&events, ph)
            .into_iter()
            .filter(|(n, c, t, _)| n == name && c == "net" && *t == tid)
            .map(|(_, _, _, id)| id)
            .collect()
    };
    let fetch_begins = ids_of("b", "fetch", begin_tid);
    let store_begins = ids_of("b", "store", begin_tid);
    assert_eq!(fetch_begins.len(), 3);
    assert_eq!(store_begins.len(), 2);
    // The k-th after ends the k-th before of the same function.
    assert_eq!(ids_of("e", "fetch", end_tid), fetch_begins);
    assert_eq!(ids_of("e", "store", end_tid), store_begins);
    let mut all: Vec<u64> = fetch_begins.iter().chain(&store_begins).copied().collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 5, "ids differ within and across functions");
    assert_eq!(events.len(), 10);
}

#[test]
fn async_sites_are_interned_by_name_and_scope_with_a_default_category() {
    use perfflow_runtime::site::{intern_async, Pointcut};
    use perfflow_runtime::writer::category;

    let io = intern_async(b"transfer", Some(b"io")).unwrap();
    assert!(std::ptr::eq(
        io,
        intern_async(b"transfer", Some(b"io")).unwrap()
    ));
    assert_eq!(io.pointcut(), Pointcut::AroundAsync);
    assert_eq!(io.name(), b"transfer");
    assert_eq!(category(io), b"io");
    let plain = intern_async(b"transfer", None).unwrap();
    assert!(!std::ptr::eq(io, plain));
    assert!(std::ptr::eq(
        plain,
        intern_async(b"transfer", Some(b"")).unwrap()
    ));
    assert_eq!(category(plain), b"default");
}

/// The annotation strings of a preprocessed C file: the string literals
/// inside each `annotate(...)`, joined as the compiler joins adjacent
/// literals.
fn annotations(preprocessed: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in preprocessed.split("annotate(").skip(1) {
        let mut text = String::new();
        let mut rest = part.trim_start();
        while let Some(body) = rest.strip_prefix('"') {
            let close = body.find('"').expect("closing quote");
            let literal = &body[..close];
            assert!(!literal.contains('\\'), "no escapes expected: {literal}");
            text.push_str(literal);
            rest = body[close + 1..].trim_start();
        }
        out.push(text);
    }
    out
}

#[test]
fn critical_path_macro_turns_its_arguments_into_the_annotation_string() {
    let compiler = ["clang-19", "clang", "cc"]
        .into_iter()
        .find(|c| Command::new(c).arg("--version").output().is_ok())
        .expect("a C compiler");
    let output = Command::new(compiler)
        .arg("-E")
        .arg("-I")
        .arg(include_dir())
        .arg(source_dir().join("critical_path_macro.c"))
        .output()
        .expect("run the preprocessor");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        annotations(&text),
        [
            "@critical_path(pointcut='around', scope='io')",
            "@critical_path()",
            "@critical_path(pointcut = 'around_async', flow='in')",
        ]
    );
}

/// Prints the cost per enter/exit pair with `cpu-mem-usage=True`, next to
/// the clock-and-store baseline of `bench_hot_path.c`. Timing only, never a
/// pass/fail criterion; run with
/// `cargo test --release -p perfflow-runtime --test usage_and_async -- --ignored --nocapture`.
#[test]
#[ignore]
fn cpu_mem_usage_cost_per_call_is_printed() {
    let run = run("bench_hot_path", CPU_MEM, &["200000"]);
    print!("cpu-mem-usage=True: {}", run.stdout());
}

/// (ph, name, id, tid) of the flow events, in file order.
fn flow_events(events: &[Event]) -> Vec<(String, String, u64, u64)> {
    events
        .iter()
        .filter(|e| e.json["cat"] == "flow")
        .map(|e| {
            (
                e.json["ph"].as_str().unwrap_or("").to_string(),
                e.json["name"].as_str().unwrap_or("").to_string(),
                e.json["id"].as_u64().expect("flow id"),
                e.json["tid"].as_u64().expect("tid"),
            )
        })
        .collect()
}

#[test]
fn flow_out_and_flow_in_on_one_scope_pair_by_count_with_distinct_ids() {
    let run = run("flows", "", &[]);
    let events = run.events();
    let flows = flow_events(&events);
    let ids = |ph: &str, name: &str| -> Vec<u64> {
        flows
            .iter()
            .filter(|f| f.0 == ph && f.1 == name)
            .map(|f| f.2)
            .collect()
    };
    let outs = ids("s", "queue");
    let ins = ids("f", "queue");
    assert_eq!(outs.len(), 3, "{flows:?}");
    assert_eq!(outs, ins, "the k-th out pairs with the k-th in");
    let mut distinct = outs.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "each pair has its own id: {outs:?}");
    // inout: an arrival at entry and a departure at exit on its own scope,
    // with ids that never collide with the other scope's.
    assert_eq!(ids("f", "relay").len(), 3);
    assert_eq!(ids("s", "relay").len(), 3);
    assert!(ids("s", "relay").iter().all(|id| !outs.contains(id)));
    // Every f binds to its enclosing slice.
    assert!(events
        .iter()
        .filter(|e| e.json["ph"] == "f")
        .all(|e| e.json["bp"] == "e"));
}

#[test]
fn a_flow_start_is_written_inside_its_slice_before_the_slice_ends() {
    let run = run("flows", "", &[]);
    let events = run.events();
    let lines: Vec<(String, String)> = events
        .iter()
        .filter(|e| {
            e.json["name"] == "produce"
                || (e.json["cat"] == "flow" && e.json["name"] == "queue" && e.json["ph"] == "s")
        })
        .map(|e| {
            (
                e.json["name"].as_str().unwrap_or("").to_string(),
                e.json["ph"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [("produce", "B"), ("queue", "s"), ("produce", "E")]
        .iter()
        .cycle()
        .take(9)
        .map(|(n, p)| (n.to_string(), p.to_string()))
        .collect();
    assert_eq!(lines, expected);
}

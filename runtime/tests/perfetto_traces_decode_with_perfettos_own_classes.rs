//! `log-format=perfetto` writes a `.pftrace` that Perfetto's own generated
//! protobuf classes decode (`tests/support/pftrace_events.py`, which
//! resolves interned ids, incremental timestamps and tracks by Perfetto's
//! rules), holding the same events as the JSON trace of the same program:
//! slices nest, flows link, async slices pair on their tracks, counters,
//! metadata and the closing record are there, a forked child writes its own
//! file and a killed program leaves a prefix that decodes.

mod support;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use support::{command, pfw_files, program, run, start_until_ready, Scratch, Trace};

/// The decoded trace: what `pftrace_events.py` prints.
fn decode(path: &Path) -> Value {
    support::decode_pftrace(path)
}

fn pftrace_files(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pftrace"))
        .collect();
    found.sort();
    found
}

/// Runs `name` with `options` twice, as JSON and as Perfetto, and returns
/// both traces.
fn both(name: &str, args: &[&str], options: &str, test: &str) -> (Trace, Value, Scratch) {
    let dir = Scratch::new(test);
    let json_dir = dir.join("json");
    let pf_dir = dir.join("perfetto");
    for (sub, format) in [(&json_dir, "array"), (&pf_dir, "perfetto")] {
        std::fs::create_dir_all(sub).unwrap();
        let opts = format!("log-format={format}{options}");
        let done = run(command(&program(name), sub)
            .args(args)
            .env("PERFFLOW_OPTIONS", &opts));
        assert!(done.status.success(), "{name} {opts}: {}", done.stderr);
    }
    let json = pfw_files(&json_dir);
    let pf = pftrace_files(&pf_dir);
    assert_eq!(json.len(), 1, "{json:?}");
    assert_eq!(pf.len(), 1, "{pf:?}");
    assert!(
        pfw_files(&pf_dir).is_empty(),
        "log-format=perfetto wrote no .pfw"
    );
    (Trace::read(&json[0]), decode(&pf[0]), dir)
}

fn events(decoded: &Value) -> &Vec<Value> {
    decoded["events"].as_array().expect("events")
}

/// `(name, ph)` in order, per thread, threads numbered by first event.
fn per_thread_json(trace: &Trace) -> Vec<Vec<(String, String)>> {
    let mut order: Vec<u64> = Vec::new();
    let mut seqs: HashMap<u64, Vec<(String, String)>> = HashMap::new();
    for e in trace.body() {
        if !matches!(e.ph(), "B" | "E" | "i" | "s" | "f") {
            continue;
        }
        if !order.contains(&e.tid()) {
            order.push(e.tid());
        }
        seqs.entry(e.tid())
            .or_default()
            .push((e.name().to_string(), e.ph().to_string()));
    }
    order.iter().map(|t| seqs.remove(t).unwrap()).collect()
}

fn per_thread_pf(decoded: &Value) -> Vec<Vec<(String, String)>> {
    let mut order: Vec<u64> = Vec::new();
    let mut seqs: HashMap<u64, Vec<(String, String)>> = HashMap::new();
    for e in events(decoded) {
        let ph = e["ph"].as_str().unwrap();
        if !matches!(ph, "B" | "E" | "i" | "s" | "f") {
            continue;
        }
        let tid = e["tid"].as_u64().unwrap();
        if !order.contains(&tid) {
            order.push(tid);
        }
        let name = e["name"].as_str().unwrap().to_string();
        seqs.entry(tid).or_default().push((name, ph.to_string()));
    }
    order.iter().map(|t| seqs.remove(t).unwrap()).collect()
}

/// Events of each `(name, ph)`, for phases whose order across threads is
/// up to the scheduler.
fn counts_json(trace: &Trace) -> BTreeMap<(String, String), usize> {
    let mut counts = BTreeMap::new();
    for e in trace.body() {
        *counts
            .entry((e.name().to_string(), e.ph().to_string()))
            .or_default() += 1;
    }
    counts
}

fn counts_pf(decoded: &Value) -> BTreeMap<(String, String), usize> {
    let mut counts = BTreeMap::new();
    for e in events(decoded) {
        let key = (
            e["name"].as_str().unwrap().to_string(),
            e["ph"].as_str().unwrap().to_string(),
        );
        *counts.entry(key).or_default() += 1;
    }
    counts
}

/// The checks every complete trace passes: the closing record counts the
/// events, the opening names the process, every event belongs to it.
fn assert_complete(decoded: &Value, slices_as_two: usize) {
    assert_eq!(decoded["complete"], true, "the whole file is one Trace");
    let meta = &decoded["metadata"];
    let runtime = &meta["perfflow_runtime"];
    let n = events(decoded).len();
    assert_eq!(
        runtime["events_written"].as_u64(),
        Some((n - slices_as_two) as u64),
        "perfflow_runtime counts the events: {runtime}"
    );
    assert_eq!(runtime["events_dropped"], 0, "{runtime}");
    let process = &meta["perfflow_process"];
    assert!(process["host"].is_string(), "{process}");
    assert!(process["exe"].is_string(), "{process}");
    assert!(process["clock"]["realtime_ns"].is_u64(), "{process}");
    let tracks = decoded["tracks"].as_object().unwrap();
    let processes: Vec<&Value> = tracks
        .values()
        .filter(|t| t["process_name"].is_string())
        .collect();
    assert_eq!(processes.len(), 1, "one process track: {tracks:?}");
    let pid = &processes[0]["pid"];
    for e in events(decoded) {
        assert_eq!(&e["pid"], pid, "{e}");
    }
}

#[test]
fn nested_slices_keep_their_order_names_categories_and_source_lines() {
    let (json, pf, _dir) = both("nested", &[], "", "pf-nested");
    assert_eq!(per_thread_pf(&pf), per_thread_json(&json));
    assert_complete(&pf, 0);
    for e in events(&pf) {
        if e["ph"] == "B" {
            assert_eq!(e["cat"], "nested.c", "{e}");
            assert_eq!(e["loc"]["file"], "nested.c", "{e}");
            assert!(e["loc"]["line"].as_u64().unwrap() > 0, "{e}");
        }
    }
    // Timestamps: the same clock as the JSON writer's (epoch ns), in order
    // on the thread.
    let ts: Vec<u64> = events(&pf)
        .iter()
        .map(|e| e["ts"].as_u64().unwrap())
        .collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]), "{ts:?}");
    let json_first = json.body()[0].ts();
    let pf_first = ts[0];
    assert!(
        pf_first.abs_diff(json_first) < 3_600_000_000_000,
        "both traces are on the epoch time base: {pf_first} vs {json_first}"
    );
}

#[test]
fn threads_each_get_a_sequence_and_a_named_track() {
    let (json, pf, _dir) = both("e2e_threads", &["3", "200"], "", "pf-threads");
    let mut a = per_thread_pf(&pf);
    let mut b = per_thread_json(&json);
    a.sort();
    b.sort();
    assert_eq!(a, b);
    assert_complete(&pf, 0);
    let tracks = pf["tracks"].as_object().unwrap();
    let named = tracks
        .values()
        .filter(|t| t["tid"].is_u64() && t["thread_name"].is_string())
        .count();
    assert_eq!(named, json.tids().len(), "{tracks:?}");
    let seqs: std::collections::BTreeSet<u64> = events(&pf)
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs.len(), json.tids().len(), "one sequence per thread");
}

#[test]
fn flows_link_their_two_ends_by_id() {
    let (json, pf, _dir) = both("flows", &[], "", "pf-flows");
    assert_eq!(counts_pf(&pf), counts_json(&json));
    let ids = |ph: &str| {
        let mut v: Vec<u64> = events(&pf)
            .iter()
            .filter(|e| e["ph"] == ph)
            .map(|e| e["id"].as_u64().unwrap())
            .collect();
        v.sort();
        v
    };
    let json_ids = |ph: &str| {
        let mut v: Vec<u64> = json
            .body()
            .into_iter()
            .filter(|e| e.ph() == ph)
            .map(|e| e.value["id"].as_u64().unwrap())
            .collect();
        v.sort();
        v
    };
    assert!(!ids("s").is_empty());
    assert_eq!(ids("s"), ids("f"), "every flow that leaves arrives");
    assert_eq!(ids("s"), json_ids("s"), "the ids of the JSON trace");
    for e in events(&pf) {
        if e["ph"] == "s" || e["ph"] == "f" {
            assert_eq!(e["cat"], "flow");
        }
    }
}

#[test]
fn async_slices_pair_on_tracks_of_their_own() {
    let (json, pf, _dir) = both("pointcuts", &[], "", "pf-async");
    assert_eq!(counts_pf(&pf), counts_json(&json));
    let mut open: HashMap<u64, String> = HashMap::new();
    let mut pairs = 0;
    for e in events(&pf) {
        match e["ph"].as_str().unwrap() {
            "b" => {
                assert!(e["tid"].is_null(), "not on a thread's track: {e}");
                let prev = open.insert(e["id"].as_u64().unwrap(), e["name"].to_string());
                assert!(prev.is_none(), "one slice at a time per async track");
            }
            "e" => {
                let name = open.remove(&e["id"].as_u64().unwrap()).expect("begun");
                assert_eq!(name, e["name"].to_string());
                pairs += 1;
            }
            _ => {}
        }
    }
    assert!(pairs > 0 && open.is_empty(), "{open:?}");
}

#[test]
fn async_slices_begun_on_one_thread_end_on_another() {
    let (json, pf, _dir) = both("async_threads", &[], "", "pf-async-threads");
    assert_eq!(counts_pf(&pf), counts_json(&json));
}

#[test]
fn cpu_mem_usage_counters_carry_both_values_in_one_sample() {
    let (json, pf, _dir) = both("e2e_fib", &[], ":cpu-mem-usage=True", "pf-usage");
    let samples: Vec<&Value> = events(&pf).iter().filter(|e| e["ph"] == "C").collect();
    let json_samples = json.body().into_iter().filter(|e| e.ph() == "C").count();
    assert_eq!(samples.len(), json_samples);
    assert!(!samples.is_empty());
    for s in samples {
        assert_eq!(s["name"], "fib", "{s}");
        let args = s["args"].as_object().unwrap();
        assert!(
            args.contains_key("cpu_usage") && args.contains_key("memory_usage"),
            "{s}"
        );
    }
    assert_eq!(per_thread_pf(&pf), per_thread_json(&json));
}

#[test]
fn compact_slices_become_begin_and_end_pairs() {
    let (json, pf, _dir) = both("e2e_fib", &[], ":log-event=compact", "pf-compact");
    let x = json.body().into_iter().filter(|e| e.ph() == "X").count();
    let counts = counts_pf(&pf);
    assert_eq!(counts.get(&("fib".into(), "B".into())), Some(&x));
    assert_eq!(counts.get(&("fib".into(), "E".into())), Some(&x));
    // Each compact slice is one event in the count, two in the file.
    assert_complete(&pf, x);
}

#[test]
fn a_forked_child_writes_a_pftrace_of_its_own() {
    let dir = Scratch::new("pf-fork");
    let done = run(
        command(&program("e2e_fork"), &dir.path).env("PERFFLOW_OPTIONS", "log-format=perfetto")
    );
    assert!(done.status.success(), "{}", done.stderr);
    let files = pftrace_files(&dir.path);
    assert_eq!(files.len(), 2, "{files:?}");
    let mut pids = Vec::new();
    for file in &files {
        let decoded = decode(file);
        assert_eq!(decoded["complete"], true);
        let pid = events(&decoded)[0]["pid"].as_u64().unwrap();
        pids.push(pid);
        assert!(
            file.to_string_lossy().ends_with(&format!(".{pid}.pftrace")),
            "{file:?} is named after its process {pid}"
        );
        assert_eq!(
            decoded["metadata"]["perfflow_runtime"]["events_dropped"], 0,
            "{file:?}"
        );
    }
    assert!(pids.contains(&u64::from(done.pid())));
    assert_ne!(pids[0], pids[1]);
}

#[test]
fn sigkill_leaves_a_prefix_of_whole_packets_that_decodes() {
    let dir = Scratch::new("pf-killed");
    let running = start_until_ready(command(&program("e2e_killed"), &dir.path).arg("5").env(
        "PERFFLOW_OPTIONS",
        "log-format=perfetto:flush-interval=50ms",
    ));
    // Waits, as long as a loaded machine may need, for the periodic flush
    // to write the slice the program is idle in.
    let deadline = Instant::now() + Duration::from_secs(20);
    let count = |decoded: &Value, name: &str, ph: &str| {
        events(decoded)
            .iter()
            .filter(|e| e["name"] == name && e["ph"] == ph)
            .count()
    };
    while Instant::now() < deadline {
        if let Some(file) = pftrace_files(&dir.path).first() {
            if count(&decode(file), "wait", "B") == 1 {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    running.send(libc::SIGKILL);
    let done = running.wait(Duration::from_secs(20));
    assert_eq!(done.signal(), Some(libc::SIGKILL));
    let files = pftrace_files(&dir.path);
    assert_eq!(files.len(), 1, "{files:?}");
    let decoded = decode(&files[0]);
    assert_eq!(
        decoded["partial_tail_bytes"], 0,
        "packets are written whole"
    );
    assert_eq!(count(&decoded, "work", "B"), 5);
    assert_eq!(count(&decoded, "work", "E"), 5);
    assert_eq!(count(&decoded, "wait", "B"), 1);
    assert!(
        decoded["metadata"]["perfflow_runtime"].is_null(),
        "a killed process writes no closing record"
    );
    assert!(decoded["metadata"]["perfflow_process"]["host"].is_string());
}

//! The runtime's two writers, handed the same events, write a `.pfw` and a
//! `.pftrace` that `perfflow-trace` reads as the same events (names,
//! categories, phases, processes, threads, nanosecond times, flow ids,
//! counter values, metadata); async slices pair by their own ids in each.
//! `check` passes on both, `summary` prints the same table for both, and
//! a `.pftrace` cut short is read up to its last whole packet. A string
//! that is both a name and a category (a function named as its file) is
//! interned in each of Perfetto's tables.

mod support;

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};

use perfflow_runtime::clock::Epoch;
use perfflow_runtime::decode::{Phase, TraceEvent};
use perfflow_runtime::perfetto::PerfettoWriter;
use perfflow_runtime::site::{Flow, Pointcut, Site};
use perfflow_runtime::writer::{ChromeJsonWriter, Sink};
use perfflow_trace::{read_trace, Event, Layout};

use support::{path_str, perfetto_decodes, perfflow_trace, scratch, text};

static FOO: Site = Site::new(Pointcut::Around, Flow::None, c"foo", c"app.c", None, c"foo");
static BAR: Site = Site::new(
    Pointcut::Around,
    Flow::None,
    c"bar \"q\"",
    c"app.c",
    None,
    c"bar",
);
static MARK: Site = Site::new(
    Pointcut::Before,
    Flow::None,
    c"mark",
    c"lib.c",
    None,
    c"mark",
);
static IO: Site = Site::new(
    Pointcut::AroundAsync,
    Flow::None,
    c"read",
    c"app.c",
    Some(c"io"),
    c"read",
);
static SEND: Site = Site::new(
    Pointcut::Around,
    Flow::Out,
    c"send",
    c"app.c",
    Some(c"queue"),
    c"send",
);

/// Named as the category of [`FOO`] (its file), which comes first.
static NAMED_AS_A_FILE: Site = Site::new(
    Pointcut::Around,
    Flow::None,
    c"app.c",
    c"lib.c",
    None,
    c"app_c",
);
/// In a file named as [`FOO`], which comes first.
static IN_A_FILE_NAMED_AS_A_FUNCTION: Site =
    Site::new(Pointcut::Around, Flow::None, c"load", c"foo", None, c"load");

const PID: u32 = 4242;
const T0: u64 = 1_700_000_000_123_456_789;

fn ev(site: &'static Site, tid: u32, dt: u64, phase: Phase) -> TraceEvent<'static> {
    TraceEvent {
        site,
        tid,
        ts_ns: T0 + dt,
        phase,
    }
}

/// The run both writers get: two threads with nested slices, an instant,
/// an async slice begun on one thread and ended on the other, a flow, a
/// compact slice, counters and the metadata the runtime writes.
fn feed<S: Sink>(sink: &mut S, json_args: &mut dyn FnMut(&mut S, &[u8], &str)) {
    sink.process_name(PID, "app");
    json_args(
        sink,
        b"perfflow_process",
        r#"{"host":"node1","exe":"app","rank":3}"#,
    );
    let events = [
        ev(&FOO, PID, 0, Phase::Begin),
        ev(&BAR, PID, 1_000, Phase::Begin),
        ev(&MARK, PID, 1_500, Phase::Instant),
        ev(&IO, PID, 1_700, Phase::AsyncBegin(7)),
        ev(&BAR, PID, 2_000, Phase::End),
        ev(&NAMED_AS_A_FILE, PID, 2_010, Phase::Begin),
        ev(&NAMED_AS_A_FILE, PID, 2_020, Phase::End),
        ev(&IN_A_FILE_NAMED_AS_A_FUNCTION, PID, 2_030, Phase::Begin),
        ev(&IN_A_FILE_NAMED_AS_A_FUNCTION, PID, 2_040, Phase::End),
        ev(&FOO, PID + 1, 2_100, Phase::Begin),
        ev(&SEND, PID + 1, 2_200, Phase::FlowStart(99)),
        ev(&IO, PID + 1, 2_300, Phase::AsyncEnd(7)),
        ev(&FOO, PID + 1, 2_400, Phase::End),
        ev(&BAR, PID + 1, 2_500, Phase::Complete(1_250)),
        ev(&SEND, PID, 2_600, Phase::FlowEnd(99)),
        ev(&FOO, PID, 3_000_000_123, Phase::End),
    ];
    for (i, e) in events.iter().enumerate() {
        sink.event(e);
        if i == 8 {
            sink.counter(
                b"foo",
                PID,
                T0 + 500,
                &[("cpu_usage", 93.5), ("memory_usage", 2048.0)],
            );
            sink.counter(b"node.cpu", PID, T0 + 600, &[("value", 12.25)]);
        }
    }
    sink.thread_name(PID + 1, "worker");
    sink.thread_name(PID, "app");
}

fn write_both(dir: &Path) -> (PathBuf, PathBuf) {
    let json = dir.join("perfflow.array.node1.4242.pfw");
    let pf = dir.join("perfflow.perfetto.node1.4242.pftrace");
    let mut w = ChromeJsonWriter::new(File::create(&json).unwrap(), PID);
    feed(&mut w, &mut |w, name, args| {
        w.metadata_args(name, PID, args)
    });
    w.runtime_cost(PID, 0, 1 << 20);
    w.finish().unwrap();
    let epoch = Epoch::new(5_000, T0 - 1_000_000);
    let mut p = PerfettoWriter::new(File::create(&pf).unwrap(), PID, epoch);
    feed(&mut p, &mut |p, name, args| {
        p.metadata_args(name, PID, args)
    });
    p.runtime_cost(PID, 0, 1 << 20);
    p.finish().unwrap();
    (json, pf)
}

/// What must agree between the two files, per event; `X` events become a
/// begin and an end, as the `.pftrace` holds them.
fn key(e: &Event) -> Vec<String> {
    let mut args = e.args.clone();
    if e.name.as_deref() == Some("perfflow_runtime") {
        // The byte counts differ with the format.
        args = serde_json::json!({ "events_written": args["events_written"] });
    }
    vec![
        format!("{:?}", e.name),
        format!("{:?}", e.cat),
        e.ph.as_ref().map_or("?", |p| p.code()).to_string(),
        format!("{:?}/{:?}", e.pid, e.tid),
        format!("{:?}", e.ts_ns),
        args.to_string(),
    ]
}

fn keys(events: &[Event]) -> (Vec<Vec<String>>, Vec<(String, String)>) {
    let mut plain = Vec::new();
    let mut ids = Vec::new();
    for e in events {
        let ph = e.ph.as_ref().map_or("?", |p| p.code());
        match ph {
            "X" => {
                let mut b = e.clone();
                b.ph = Some(perfflow_trace::Phase::Begin);
                plain.push(key(&b));
                let mut end = e.clone();
                end.ph = Some(perfflow_trace::Phase::End);
                end.ts_ns = Some(e.ts_ns.unwrap() + e.dur_ns.unwrap());
                plain.push(key(&end));
            }
            "b" | "e" | "n" => ids.push((ph.to_string(), e.id.clone().unwrap())),
            _ => plain.push(key(e)),
        }
        if matches!(ph, "s" | "f") {
            ids.push((ph.to_string(), e.id.clone().unwrap()));
        }
    }
    plain.sort();
    (plain, ids)
}

/// A process's `.pftrace` cut between two packets, before the runtime's
/// closing record (a process killed with SIGKILL leaves one), is read as
/// truncated: no packet is cut, but the record that completes it is
/// missing.
#[test]
fn a_pftrace_without_the_runtime_s_closing_record_is_truncated() {
    let dir = scratch("pftrace_no_closing");
    let pf = dir.join("perfflow.perfetto.node1.4242.pftrace");
    let epoch = Epoch::new(5_000, T0 - 1_000_000);
    let mut p = PerfettoWriter::new(File::create(&pf).unwrap(), PID, epoch);
    feed(&mut p, &mut |p, name, args| {
        p.metadata_args(name, PID, args)
    });
    p.finish().unwrap();
    let read = read_trace(&pf).unwrap();
    assert!(read.truncated);
    let (_, complete) = write_both(&dir);
    assert!(!read_trace(&complete).unwrap().truncated);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_pftrace_reads_as_the_same_events_as_its_json_twin() {
    let dir = scratch("pftrace_twin");
    let (json, pf) = write_both(&dir);
    let a = read_trace(&json).unwrap();
    let b = read_trace(&pf).unwrap();
    assert_eq!(b.layout, Layout::Perfetto);
    assert!(!b.truncated);
    let (a_plain, a_ids) = keys(&a.events);
    let (b_plain, b_ids) = keys(&b.events);
    assert_eq!(b_plain, a_plain);
    // Flow ids are the same; async ids differ but pair the same way.
    let pairing = |ids: &[(String, String)]| {
        let mut first: HashMap<&str, usize> = HashMap::new();
        ids.iter()
            .enumerate()
            .map(|(i, (ph, id))| (ph.clone(), *first.entry(id.as_str()).or_insert(i)))
            .collect::<Vec<_>>()
    };
    assert_eq!(pairing(&b_ids), pairing(&a_ids));
    let flows = |ids: &[(String, String)]| {
        ids.iter()
            .filter(|(ph, _)| ph == "s" || ph == "f")
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(flows(&b_ids), flows(&a_ids));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_passes_and_summary_prints_the_same_table_for_both() {
    let dir = scratch("pftrace_twin_cli");
    let (json, pf) = write_both(&dir);
    for file in [&json, &pf] {
        let out = perfflow_trace(&["check", path_str(file)]);
        assert!(
            out.status.success(),
            "{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
    let table = |file: &Path| text(&perfflow_trace(&["summary", path_str(file)]).stdout);
    let (a, b) = (table(&json), table(&pf));
    // The function table (a compact slice is one event of the `.pfw` and
    // two of the `.pftrace`, so the event counts differ by one).
    let body = |t: &str| t.split("\n\n").nth(1).unwrap_or_default().to_string();
    assert_eq!(body(&b), body(&a));
    assert!(a.contains("foo"), "{a}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_pftrace_cut_inside_a_packet_keeps_every_whole_packet() {
    let dir = scratch("pftrace_cut");
    let (_, pf) = write_both(&dir);
    let whole = read_trace(&pf).unwrap();
    let bytes = std::fs::read(&pf).unwrap();
    let mut seen = BTreeMap::new();
    for cut in [bytes.len() - 1, bytes.len() * 2 / 3, bytes.len() / 2, 40] {
        let path = dir.join(format!("cut{cut}.pftrace"));
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let t = read_trace(&path).unwrap();
        assert!(t.truncated, "cut at {cut}");
        assert!(t.partial_line.is_some(), "cut at {cut}");
        assert_eq!(t.events[..], whole.events[..t.events.len()], "cut at {cut}");
        seen.insert(cut, t.events.len());
    }
    assert!(seen.values().any(|&n| n > 0), "{seen:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_that_is_not_a_perfetto_trace_gets_an_error_naming_it() {
    let dir = scratch("pftrace_bad");
    let path = dir.join("bad.pftrace");
    std::fs::write(&path, [0x0a, 0x03, 0xff, 0xff, 0xff]).unwrap();
    let err = read_trace(&path).unwrap_err().to_string();
    assert!(
        err.contains("bad.pftrace") && err.contains("TracePacket"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What `convert` must keep of every event.
fn exact(e: &Event) -> (Vec<String>, Option<String>) {
    (key(e), e.id.clone())
}

#[test]
fn convert_writes_a_pftrace_as_the_pfw_of_the_same_events() {
    let dir = scratch("pftrace_convert_to_pfw");
    let (_, pf) = write_both(&dir);
    let out = dir.join("converted.pfw");
    let done = perfflow_trace::convert(&pf, &out).unwrap();
    assert!(!done.to_perfetto && !done.truncated);
    let a = read_trace(&pf).unwrap();
    let b = read_trace(&out).unwrap();
    assert_eq!(b.layout, Layout::Array);
    assert_eq!(done.events as usize, a.events.len());
    let a: Vec<_> = a.events.iter().map(exact).collect();
    let b: Vec<_> = b.events.iter().map(exact).collect();
    assert_eq!(b, a);
    let check = perfflow_trace(&["check", path_str(&out)]);
    assert!(check.status.success(), "{}", text(&check.stdout));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn convert_writes_a_pfw_as_a_pftrace_that_perfettos_classes_decode() {
    let dir = scratch("pftrace_convert_to_pftrace");
    let (json, _) = write_both(&dir);
    let out = dir.join("converted.pftrace");
    let done = perfflow_trace::convert(&json, &out).unwrap();
    assert!(done.to_perfetto);
    let a = read_trace(&json).unwrap();
    let b = read_trace(&out).unwrap();
    assert_eq!(b.layout, Layout::Perfetto);
    let (a_plain, a_ids) = keys(&a.events);
    let (b_plain, b_ids) = keys(&b.events);
    assert_eq!(b_plain, a_plain);
    assert_eq!(b_ids.len(), a_ids.len());
    // Perfetto's own classes read it as well.
    let decoded = perfetto_decodes(&out);
    let slices = b.events.iter().filter(|e| !e.is_metadata()).count();
    assert_eq!(decoded["events"].as_array().unwrap().len(), slices);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_convert_command_says_what_it_wrote_and_names_a_bad_input() {
    let dir = scratch("pftrace_convert_cli");
    let (_, pf) = write_both(&dir);
    let out = dir.join("back.pfw");
    let done = perfflow_trace(&["convert", path_str(&pf), path_str(&out)]);
    assert!(done.status.success(), "{}", text(&done.stderr));
    assert!(
        text(&done.stdout).contains("events as Chrome JSON"),
        "{}",
        text(&done.stdout)
    );
    let bad = dir.join("bad.pftrace");
    std::fs::write(&bad, [0x0a, 0x03, 0xff, 0xff, 0xff]).unwrap();
    let failed = perfflow_trace(&["convert", path_str(&bad), path_str(&out)]);
    assert_eq!(failed.status.code(), Some(1));
    assert!(
        text(&failed.stderr).contains("bad.pftrace"),
        "{}",
        text(&failed.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

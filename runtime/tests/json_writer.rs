//! The Chrome Trace Format JSON writer, driven in memory.

use perfflow_runtime::decode::{Phase, TraceEvent};
use perfflow_runtime::site::{Flow, Pointcut, Site};
use perfflow_runtime::writer::{write_json_string, write_ts, ChromeJsonWriter, Sink, FLUSH_BYTES};
use serde_json::Value;

static PLAIN: Site = Site::new(
    Pointcut::Around,
    Flow::None,
    c"work",
    c"/src/app.c",
    None,
    c"work",
);

static NASTY: Site = Site::new(
    Pointcut::Around,
    Flow::None,
    c"say \"hi\" \\ to\n\tthe\x01world",
    c"dir\\with \"quotes\".c",
    None,
    c"nasty",
);

static ASYNC: Site = Site::new(
    Pointcut::AroundAsync,
    Flow::None,
    c"fetch",
    c"net.c",
    Some(c"network"),
    c"fetch",
);

fn ev(site: &'static Site, ts_ns: u64, phase: Phase) -> TraceEvent<'static> {
    TraceEvent {
        site,
        tid: 42,
        ts_ns,
        phase,
    }
}

fn finish(mut w: ChromeJsonWriter<Vec<u8>>) -> String {
    w.finish().expect("writing into memory cannot fail");
    String::from_utf8(w.into_inner()).expect("output is UTF-8")
}

#[test]
fn json_writer_escapes_quotes_backslashes_and_control_characters_in_names() {
    let mut w = ChromeJsonWriter::new(Vec::new(), 7);
    w.event(&ev(&NASTY, 1_000_000_000_000, Phase::Begin));
    w.event(&ev(&NASTY, 1_000_000_000_500, Phase::End));
    let text = finish(w);
    let parsed: Value = serde_json::from_str(&text).expect("valid JSON");
    let first = &parsed[0];
    assert_eq!(first["name"], "say \"hi\" \\ to\n\tthe\u{1}world");
    assert_eq!(first["cat"], "dir\\with \"quotes\".c");
    assert!(text.contains("\\u0001"));
}

#[test]
fn json_string_escaping_replaces_invalid_utf8() {
    let mut out = Vec::new();
    write_json_string(&mut out, b"ok\xffend");
    let text = String::from_utf8(out).expect("escaped output is UTF-8");
    let back: String = serde_json::from_str(&text).expect("valid JSON string");
    assert_eq!(back, "ok\u{fffd}end");
}

#[test]
fn timestamps_are_microseconds_with_three_decimals() {
    let mut out = Vec::new();
    write_ts(&mut out, 1_679_127_184_455_376_042);
    assert_eq!(out, b"1679127184455376.042");
    out.clear();
    write_ts(&mut out, 1_000_000_000_000_000_007);
    assert_eq!(out, b"1000000000000000.007");
    out.clear();
    write_ts(&mut out, 1_500);
    assert_eq!(out, b"1.500");
    out.clear();
    write_ts(&mut out, 0);
    assert_eq!(out, b"0.000");
}

#[test]
fn event_lines_carry_name_category_pid_tid_ts_and_phase() {
    let mut w = ChromeJsonWriter::new(Vec::new(), 7);
    w.event(&ev(&PLAIN, 1_679_127_184_455_376_042, Phase::Begin));
    w.event(&ev(&PLAIN, 1_679_127_184_455_377_000, Phase::End));
    w.event(&ev(&PLAIN, 1_679_127_184_455_378_000, Phase::Instant));
    let text = finish(w);
    // Doubles cannot hold all 19 digits, so check the text for the exact value.
    assert!(text.contains("\"ts\":1679127184455376.042,"));
    let parsed: Value = serde_json::from_str(&text).expect("valid JSON");
    let b = &parsed[0];
    assert_eq!(b["name"], "work");
    assert_eq!(b["cat"], "/src/app.c");
    assert_eq!(b["pid"], 7);
    assert_eq!(b["tid"], 42);
    assert_eq!(b["ph"], "B");
    assert!((b["ts"].as_f64().unwrap() - 1_679_127_184_455_376.042).abs() < 0.5);
    assert_eq!(parsed[1]["ph"], "E");
    assert_eq!(parsed[2]["ph"], "i");
    assert_eq!(parsed[2]["s"], "t");
}

#[test]
fn async_events_use_the_scope_as_category_and_carry_the_id() {
    let mut w = ChromeJsonWriter::new(Vec::new(), 7);
    w.event(&ev(&ASYNC, 5_000_000_000, Phase::AsyncBegin(9)));
    w.event(&ev(&ASYNC, 6_000_000_000, Phase::AsyncEnd(9)));
    w.event(&ev(&ASYNC, 7_000_000_000, Phase::AsyncInstant(10)));
    let parsed: Value = serde_json::from_str(&finish(w)).expect("valid JSON");
    assert_eq!(parsed[0]["cat"], "network");
    assert_eq!(parsed[0]["ph"], "b");
    assert_eq!(parsed[0]["id"], 9);
    assert_eq!(parsed[1]["ph"], "e");
    assert_eq!(parsed[1]["id"], 9);
    assert_eq!(parsed[2]["ph"], "n");
}

#[test]
fn empty_trace_is_an_empty_json_array() {
    let w = ChromeJsonWriter::new(Vec::new(), 1);
    let text = finish(w);
    assert_eq!(text, "[\n]\n");
    let parsed: Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(parsed.as_array().map(Vec::len), Some(0));
}

#[test]
fn metadata_names_the_process_and_threads() {
    let mut w = ChromeJsonWriter::new(Vec::new(), 7);
    w.process_name(7, "my \"app\"");
    w.thread_name(8, "worker");
    let parsed: Value = serde_json::from_str(&finish(w)).expect("valid JSON");
    assert_eq!(parsed[0]["name"], "process_name");
    assert_eq!(parsed[0]["ph"], "M");
    assert_eq!(parsed[0]["args"]["name"], "my \"app\"");
    assert_eq!(parsed[1]["name"], "thread_name");
    assert_eq!(parsed[1]["tid"], 8);
}

#[test]
fn large_traces_stay_one_valid_array_with_one_event_per_line() {
    let mut w = ChromeJsonWriter::new(Vec::new(), 7);
    // Enough lines to cross the flush threshold several times.
    let n = 3 * FLUSH_BYTES / 80;
    for i in 0..n as u64 {
        let phase = if i % 2 == 0 { Phase::Begin } else { Phase::End };
        w.event(&ev(&PLAIN, 1_700_000_000_000_000_000 + i * 1000, phase));
    }
    assert_eq!(w.events_written(), n as u64);
    let text = finish(w);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.first(), Some(&"["));
    assert_eq!(lines.last(), Some(&"]"));
    assert_eq!(lines.len(), n + 2);
    for line in &lines[1..lines.len() - 1] {
        let obj = line.strip_suffix(',').unwrap_or(line);
        serde_json::from_str::<Value>(obj).expect("each line is one JSON object");
    }
    let parsed: Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(parsed.as_array().map(Vec::len), Some(n));
}

#[test]
fn events_after_finish_are_counted_as_lost() {
    let mut w = ChromeJsonWriter::new(Vec::new(), 7);
    w.finish().expect("finish");
    w.event(&ev(&PLAIN, 1, Phase::Begin));
    assert_eq!(w.events_lost(), 1);
    assert_eq!(w.into_inner(), b"[\n]\n");
}

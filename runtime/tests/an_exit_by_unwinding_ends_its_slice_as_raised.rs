//! An exit followed by the `Unwound` payload (what the weaver's cleanup
//! landing pad records through `perfflow_site_exit_unwind`) ends its slice
//! through `Sink::ended` as raised: the JSON writer gives that `E` (or compact `X`,
//! or async `e`) `"args":{"outcome":"raised"}`, the Perfetto writer gives
//! the slice end the debug annotation `outcome` = `"raised"`, read back
//! with Perfetto's own classes. Other ends stay as they were.

mod support;

use perfflow_runtime::clock::Epoch;
use perfflow_runtime::decode::{DecodeContext, Outcome, Phase, ThreadDecoder, TraceEvent};
use perfflow_runtime::event::{Kind, Payload, RawEvent};
use perfflow_runtime::perfetto::PerfettoWriter;
use perfflow_runtime::site::{Flow, Pointcut, Site};
use perfflow_runtime::writer::{ChromeJsonWriter, Sink};
use serde_json::Value;

use support::Scratch;

static OUTER: Site = Site::new(
    Pointcut::Around,
    Flow::None,
    c"outer",
    c"t.cpp",
    None,
    c"outer",
);
static INNER: Site = Site::new(
    Pointcut::Around,
    Flow::None,
    c"inner",
    c"t.cpp",
    None,
    c"inner",
);
static TASK: Site = Site::new(
    Pointcut::AroundAsync,
    Flow::None,
    c"task",
    c"t.cpp",
    Some(c"io"),
    c"task",
);

const SECOND: u64 = 1_000_000_000;

/// `outer` calls `inner`, which raises; `outer` catches and returns; then
/// the async `task` is left by an exception too.
fn records() -> Vec<RawEvent> {
    vec![
        RawEvent::new(SECOND, &OUTER, Kind::Enter),
        RawEvent::new(SECOND + 10, &INNER, Kind::Enter),
        RawEvent::new(SECOND + 20, &INNER, Kind::Exit),
        Payload::Unwound.record(),
        RawEvent::new(SECOND + 30, &OUTER, Kind::Exit),
        RawEvent::new(SECOND + 40, &TASK, Kind::Enter),
        RawEvent::new(SECOND + 50, &TASK, Kind::Exit),
        Payload::Unwound.record(),
    ]
}

fn decode(compact: bool, sink: &mut dyn Sink) {
    let mut cx = DecodeContext::new(Epoch::new(0, 0));
    cx.compact = compact;
    let mut d = ThreadDecoder::new(7);
    // SAFETY: every record points at one of the static sites above.
    unsafe { d.decode(&records(), &mut cx, sink) };
}

/// Which events reached `ended` as raised rather than `event`.
#[derive(Default)]
struct Recorder(Vec<(String, Phase, bool)>);

impl Sink for Recorder {
    fn event(&mut self, ev: &TraceEvent<'_>) {
        let name = String::from_utf8_lossy(ev.site.name()).into_owned();
        self.0.push((name, ev.phase, false));
    }
    fn ended(&mut self, ev: &TraceEvent<'_>, outcome: Outcome) {
        let name = String::from_utf8_lossy(ev.site.name()).into_owned();
        self.0.push((name, ev.phase, outcome == Outcome::Raised));
    }
}

#[test]
fn only_the_end_of_the_unwound_slice_is_raised() {
    let mut sink = Recorder::default();
    decode(false, &mut sink);
    let raised: Vec<(&str, bool)> = sink
        .0
        .iter()
        .filter(|(_, phase, _)| matches!(phase, Phase::End | Phase::AsyncEnd(_)))
        .map(|(name, _, raised)| (name.as_str(), *raised))
        .collect();
    assert_eq!(raised, [("inner", true), ("outer", false), ("task", true)]);
}

fn json_events(compact: bool) -> Vec<Value> {
    let mut w = ChromeJsonWriter::new(Vec::new(), 7);
    decode(compact, &mut w);
    w.finish().unwrap();
    let text = String::from_utf8(w.into_inner()).unwrap();
    serde_json::from_str::<Vec<Value>>(&text).expect("a JSON array")
}

/// `(name, ph, args.outcome)` of every event.
fn outcomes(events: &[Value]) -> Vec<(String, String, Option<String>)> {
    events
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap_or("").to_string(),
                e["ph"].as_str().unwrap_or("").to_string(),
                e["args"]["outcome"].as_str().map(String::from),
            )
        })
        .collect()
}

fn row(name: &str, ph: &str, outcome: Option<&str>) -> (String, String, Option<String>) {
    (name.into(), ph.into(), outcome.map(String::from))
}

#[test]
fn the_json_end_of_a_raised_slice_says_so_in_its_args() {
    let events = json_events(false);
    assert_eq!(
        outcomes(&events),
        [
            row("outer", "B", None),
            row("inner", "B", None),
            row("inner", "E", Some("raised")),
            row("outer", "E", None),
            row("task", "b", None),
            row("task", "e", Some("raised")),
        ]
    );
    // The raised end is an ordinary end otherwise.
    assert_eq!(events[2]["ts"], 1_000_000.02);
    assert_eq!(events[2]["tid"], 7);
    assert_eq!(events[5]["id"], events[4]["id"]);
    assert_eq!(events[5]["cat"], "io");
}

#[test]
fn a_compact_raised_slice_says_so_in_its_args() {
    let events = json_events(true);
    let inner = events.iter().find(|e| e["name"] == "inner").unwrap();
    assert_eq!(inner["ph"], "X");
    assert_eq!(inner["dur"], 0.01);
    assert_eq!(inner["args"]["outcome"], "raised");
    let outer = events.iter().find(|e| e["name"] == "outer").unwrap();
    assert!(outer.get("args").is_none(), "{outer}");
}

#[test]
fn the_perfetto_end_of_a_raised_slice_carries_the_outcome_annotation() {
    for compact in [false, true] {
        let mut w = PerfettoWriter::new(Vec::new(), 7, Epoch::new(0, 0));
        w.process_name(7, "t");
        decode(compact, &mut w);
        w.finish().unwrap();
        let dir = Scratch::new("raised_perfetto");
        let path = dir.join("raised.pftrace");
        std::fs::write(&path, w.into_inner()).unwrap();
        let decoded = support::decode_pftrace(&path);
        let events = decoded["events"].as_array().expect("events");
        let (outer, inner) = (
            [row("outer", "B", None), row("outer", "E", None)],
            [row("inner", "B", None), row("inner", "E", Some("raised"))],
        );
        let task = [row("task", "b", None), row("task", "e", Some("raised"))];
        // Compact slices are written whole when they end: inner first.
        let (expected, times) = if compact {
            (
                [inner.clone(), outer.clone(), task],
                [10, 20, 0, 30, 40, 50],
            )
        } else {
            let [ob, oe] = outer;
            let [ib, ie] = inner;
            ([[ob, ib], [ie, oe], task], [0, 10, 20, 30, 40, 50])
        };
        assert_eq!(outcomes(events), expected.concat(), "compact: {compact}");
        let ts: Vec<u64> = events.iter().map(|e| e["ts"].as_u64().unwrap()).collect();
        let times: Vec<u64> = times.iter().map(|t| SECOND + t).collect();
        assert_eq!(ts, times, "compact: {compact}");
    }
}

#[test]
fn slices_open_when_their_thread_ends_end_as_open_at_end() {
    let mut w = ChromeJsonWriter::new(Vec::new(), 7);
    let mut cx = DecodeContext::new(Epoch::new(0, 0));
    let mut d = ThreadDecoder::new(7);
    let records = [
        RawEvent::new(SECOND, &OUTER, Kind::Enter),
        RawEvent::new(SECOND + 10, &INNER, Kind::Enter),
    ];
    // SAFETY: every record points at one of the static sites above.
    unsafe { d.decode(&records, &mut cx, &mut w) };
    d.close_open(SECOND + 50, &mut cx, &mut w);
    w.finish().unwrap();
    let text = String::from_utf8(w.into_inner()).unwrap();
    let events: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(
        outcomes(&events),
        [
            row("outer", "B", None),
            row("inner", "B", None),
            row("inner", "E", Some("open_at_end")),
            row("outer", "E", Some("open_at_end")),
        ]
    );
}

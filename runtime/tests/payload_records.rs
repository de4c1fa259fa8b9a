//! Payload records: their layout, and how the decoder reads them after the
//! event they belong to (usage counters, async ids, numbered async events).

use perfflow_runtime::clock::Epoch;
use perfflow_runtime::decode::{DecodeContext, Misuse, Phase, ThreadDecoder, TraceEvent};
use perfflow_runtime::event::{Kind, Payload, RawEvent, PAYLOAD_BITS, PAYLOAD_B_MAX};
use perfflow_runtime::site::{Flow, Pointcut, Site};
use perfflow_runtime::writer::{ChromeJsonWriter, Sink};

static FOO: Site = Site::new(Pointcut::Around, Flow::None, c"foo", c"f.c", None, c"foo");
static BAR: Site = Site::new(Pointcut::Around, Flow::None, c"bar", c"f.c", None, c"bar");
static IO: Site = Site::new(
    Pointcut::AroundAsync,
    Flow::None,
    c"io",
    c"f.c",
    Some(c"disk"),
    c"io",
);

/// What a sink received, in order.
#[derive(Debug, PartialEq)]
enum Got {
    Event(&'static str, u32, u64, Phase),
    Counter(String, u32, u64, Vec<(String, f64)>),
}

#[derive(Default)]
struct Recorder {
    got: Vec<Got>,
    misuse: Vec<Misuse>,
}

fn static_name(site: &Site) -> &'static str {
    match site.name() {
        b"foo" => "foo",
        b"bar" => "bar",
        b"io" => "io",
        _ => "?",
    }
}

impl Sink for Recorder {
    fn event(&mut self, ev: &TraceEvent<'_>) {
        self.got
            .push(Got::Event(static_name(ev.site), ev.tid, ev.ts_ns, ev.phase));
    }
    fn counter(&mut self, name: &[u8], tid: u32, ts_ns: u64, values: &[(&str, f64)]) {
        self.got.push(Got::Counter(
            String::from_utf8_lossy(name).into_owned(),
            tid,
            ts_ns,
            values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        ));
    }
    fn misuse(&mut self, what: Misuse, _site: &Site) {
        self.misuse.push(what);
    }
}

fn enter(ts: u64, site: &'static Site) -> RawEvent {
    RawEvent::new(ts, site, Kind::Enter)
}

fn exit(ts: u64, site: &'static Site) -> RawEvent {
    RawEvent::new(ts, site, Kind::Exit)
}

fn usage(cpu_ns: u64, rss_kib: u64) -> RawEvent {
    Payload::Usage { cpu_ns, rss_kib }.record()
}

fn decode_with(cx: &mut DecodeContext, tid: u32, records: &[RawEvent]) -> Recorder {
    let mut d = ThreadDecoder::new(tid);
    let mut sink = Recorder::default();
    // SAFETY: every record points at one of the static sites above.
    unsafe { d.decode(records, cx, &mut sink) };
    sink
}

fn decode(compact: bool, records: &[RawEvent]) -> Recorder {
    let mut cx = DecodeContext::new(Epoch::new(0, 0));
    cx.compact = compact;
    decode_with(&mut cx, 7, records)
}

fn counter(name: &str, ts: u64, cpu: f64, mem: f64) -> Got {
    Got::Counter(
        name.to_string(),
        7,
        ts,
        vec![
            ("cpu_usage".to_string(), cpu),
            ("memory_usage".to_string(), mem),
        ],
    )
}

#[test]
fn every_payload_reads_back_as_written() {
    for payload in [
        Payload::Usage {
            cpu_ns: u64::MAX,
            rss_kib: PAYLOAD_B_MAX,
        },
        Payload::Usage {
            cpu_ns: 0,
            rss_kib: 0,
        },
        Payload::AsyncId(u64::MAX),
        Payload::Sequence(42),
    ] {
        let rec = payload.record();
        assert_eq!(rec.tagged_site & 0b11, PAYLOAD_BITS);
        assert_eq!(Payload::from_record(&rec), Some(payload));
    }
}

#[test]
fn a_payload_record_is_not_an_event() {
    let rec = Payload::AsyncId(3).record();
    assert!(rec.is_payload());
    assert_eq!(rec.kind(), None);
    let ev = enter(1, &FOO);
    assert!(!ev.is_payload());
    assert_eq!(Payload::from_record(&ev), None);
}

#[test]
fn a_resident_size_beyond_56_bits_is_stored_as_the_maximum() {
    let rec = usage(1, u64::MAX);
    assert_eq!(
        Payload::from_record(&rec),
        Some(Payload::Usage {
            cpu_ns: 1,
            rss_kib: PAYLOAD_B_MAX
        })
    );
}

#[test]
fn a_payload_of_an_unknown_sub_kind_is_skipped() {
    let unknown = RawEvent {
        ts_ns: 5,
        tagged_site: (63 << 2) | PAYLOAD_BITS,
    };
    assert_eq!(Payload::from_record(&unknown), None);
    let r = decode(false, &[enter(0, &FOO), unknown, exit(10, &FOO), unknown]);
    assert_eq!(
        r.got,
        [
            Got::Event("foo", 7, 0, Phase::Begin),
            Got::Event("foo", 7, 10, Phase::End)
        ]
    );
}

#[test]
fn a_slice_with_usage_at_both_ends_gets_two_counter_samples_before_its_end() {
    let r = decode(
        false,
        &[
            enter(1_000, &FOO),
            usage(500, 0),
            exit(3_000, &FOO),
            usage(1_500, 2048),
        ],
    );
    assert_eq!(
        r.got,
        [
            Got::Event("foo", 7, 1_000, Phase::Begin),
            counter("foo", 1_000, 50.0, 2048.0),
            counter("foo", 3_000, 0.0, 0.0),
            Got::Event("foo", 7, 3_000, Phase::End),
        ]
    );
}

#[test]
fn compact_slices_get_the_samples_before_their_complete_event() {
    let r = decode(
        true,
        &[enter(0, &FOO), usage(0, 0), exit(400, &FOO), usage(100, 8)],
    );
    assert_eq!(
        r.got,
        [
            counter("foo", 0, 25.0, 8.0),
            counter("foo", 400, 0.0, 0.0),
            Got::Event("foo", 7, 0, Phase::Complete(400)),
        ]
    );
}

#[test]
fn nested_calls_of_one_function_each_get_their_own_usage() {
    // foo(outer) 0..1000 with foo(inner) 200..400; the inner call runs all
    // the time, the outer one half of the time.
    let r = decode(
        true,
        &[
            enter(0, &FOO),
            usage(10_000, 0),
            enter(200, &FOO),
            usage(10_100, 0),
            exit(400, &FOO),
            usage(10_300, 100),
            exit(1_000, &FOO),
            usage(10_500, 200),
        ],
    );
    assert_eq!(
        r.got,
        [
            counter("foo", 200, 100.0, 100.0),
            counter("foo", 400, 0.0, 0.0),
            Got::Event("foo", 7, 200, Phase::Complete(200)),
            counter("foo", 0, 50.0, 200.0),
            counter("foo", 1_000, 0.0, 0.0),
            Got::Event("foo", 7, 0, Phase::Complete(1_000)),
        ]
    );
}

#[test]
fn slices_without_usage_at_their_enter_get_no_samples() {
    let r = decode(false, &[enter(0, &FOO), exit(10, &FOO), usage(5, 1)]);
    assert_eq!(
        r.got,
        [
            Got::Event("foo", 7, 0, Phase::Begin),
            Got::Event("foo", 7, 10, Phase::End)
        ]
    );
}

#[test]
fn slices_ended_because_their_thread_ended_get_no_samples() {
    let mut cx = DecodeContext::new(Epoch::new(0, 0));
    let mut d = ThreadDecoder::new(7);
    let mut sink = Recorder::default();
    // SAFETY: the records point at static sites.
    unsafe { d.decode(&[enter(0, &FOO), usage(0, 0)], &mut cx, &mut sink) };
    d.close_open(50, &mut cx, &mut sink);
    assert_eq!(
        sink.got,
        [
            Got::Event("foo", 7, 0, Phase::Begin),
            Got::Event("foo", 7, 50, Phase::End)
        ]
    );
}

#[test]
fn an_outer_exit_gives_its_usage_to_inner_slices_left_open() {
    let r = decode(
        true,
        &[
            enter(0, &FOO),
            usage(0, 0),
            enter(50, &BAR),
            usage(50, 0),
            exit(100, &FOO),
            usage(100, 4),
        ],
    );
    assert_eq!(
        r.got,
        [
            counter("bar", 50, 100.0, 4.0),
            counter("bar", 100, 0.0, 0.0),
            Got::Event("bar", 7, 50, Phase::Complete(50)),
            counter("foo", 0, 100.0, 4.0),
            counter("foo", 100, 0.0, 0.0),
            Got::Event("foo", 7, 0, Phase::Complete(100)),
        ]
    );
    assert_eq!(r.misuse, [Misuse::UnbalancedExit]);
}

#[test]
fn a_payload_that_follows_no_event_is_skipped() {
    let r = decode(false, &[usage(1, 1), Payload::AsyncId(9).record()]);
    assert!(r.got.is_empty());
}

#[test]
fn async_ids_from_payloads_pair_a_begin_and_an_end_decoded_on_different_threads() {
    let mut cx = DecodeContext::new(Epoch::new(0, 0));
    let a = decode_with(&mut cx, 1, &[enter(5, &IO), Payload::AsyncId(77).record()]);
    let b = decode_with(&mut cx, 2, &[exit(9, &IO), Payload::AsyncId(77).record()]);
    assert_eq!(a.got, [Got::Event("io", 1, 5, Phase::AsyncBegin(77))]);
    assert_eq!(b.got, [Got::Event("io", 2, 9, Phase::AsyncEnd(77))]);
    assert!(b.misuse.is_empty());
}

#[test]
fn numbered_async_events_pair_the_nth_enter_with_the_nth_exit_in_any_decoding_order() {
    let mut cx = DecodeContext::new(Epoch::new(0, 0));
    let seq = |n| Payload::Sequence(n).record();
    // The ending thread's records are decoded first.
    let ends = decode_with(&mut cx, 2, &[exit(20, &IO), seq(0), exit(21, &IO), seq(1)]);
    let begins = decode_with(
        &mut cx,
        1,
        &[enter(10, &IO), seq(0), enter(11, &IO), seq(1)],
    );
    let ids = |r: &Recorder| -> Vec<u64> {
        r.got
            .iter()
            .map(|g| match g {
                Got::Event(_, _, _, Phase::AsyncBegin(id) | Phase::AsyncEnd(id)) => *id,
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    };
    assert_eq!(ids(&begins), ids(&ends));
    assert_ne!(ids(&begins)[0], ids(&begins)[1]);
    assert_eq!(cx.unpaired_async(), 0);
}

#[test]
fn the_json_writer_writes_usage_samples_as_counter_events() {
    let mut w = ChromeJsonWriter::new(Vec::new(), 7);
    let mut cx = DecodeContext::new(Epoch::new(0, 1_000_000_000_000));
    let mut d = ThreadDecoder::new(7);
    // SAFETY: the records point at static sites.
    unsafe {
        d.decode(
            &[
                enter(0, &FOO),
                usage(0, 0),
                exit(2_000, &FOO),
                usage(1_000, 10_944),
            ],
            &mut cx,
            &mut w,
        )
    };
    w.finish().expect("finish");
    let text = String::from_utf8(w.into_inner()).expect("utf-8");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let c: Vec<&serde_json::Value> = v
        .as_array()
        .expect("array")
        .iter()
        .filter(|e| e["ph"] == "C")
        .collect();
    assert_eq!(c.len(), 2);
    assert_eq!(c[0]["name"], "foo");
    assert_eq!(c[0]["args"]["cpu_usage"], 50.0);
    assert_eq!(c[0]["args"]["memory_usage"], 10944);
    assert_eq!(c[1]["args"]["cpu_usage"], 0);
    assert_eq!(c[1]["args"]["memory_usage"], 0);
}

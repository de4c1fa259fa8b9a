//! An async exit followed by the `AsyncIdUnwound` payload (what
//! `perfflow_async_end_unwind` records: a Python coroutine left by an
//! exception) ends the operation of that id, not the latest one begun, and
//! reaches `Sink::ended` as raised; the operation interleaved with it ends
//! as usual.

use perfflow_runtime::clock::Epoch;
use perfflow_runtime::decode::{DecodeContext, Outcome, Phase, ThreadDecoder, TraceEvent};
use perfflow_runtime::event::{Kind, Payload, RawEvent};
use perfflow_runtime::site::{Flow, Pointcut, Site};
use perfflow_runtime::writer::Sink;

static FETCH: Site = Site::new(
    Pointcut::AroundAsync,
    Flow::None,
    c"fetch",
    c"NA",
    Some(c"io"),
    c"fetch",
);

/// Every end written: its async id and whether it was `ended` as raised.
#[derive(Default)]
struct Ends(Vec<(u64, Option<Outcome>)>);

impl Sink for Ends {
    fn event(&mut self, ev: &TraceEvent<'_>) {
        if let Phase::AsyncEnd(id) = ev.phase {
            self.0.push((id, None));
        }
    }
    fn ended(&mut self, ev: &TraceEvent<'_>, outcome: Outcome) {
        if let Phase::AsyncEnd(id) = ev.phase {
            self.0.push((id, Some(outcome)));
        }
    }
}

#[test]
fn an_async_end_left_by_an_exception_keeps_its_id_and_is_raised() {
    // Operations 5 and 6 begin on one thread; 5, begun first, raises after
    // 6 began; 6 then returns.
    let records = [
        RawEvent::new(10, &FETCH, Kind::Enter),
        Payload::AsyncId(5).record(),
        RawEvent::new(20, &FETCH, Kind::Enter),
        Payload::AsyncId(6).record(),
        RawEvent::new(30, &FETCH, Kind::Exit),
        Payload::AsyncIdUnwound(5).record(),
        RawEvent::new(40, &FETCH, Kind::Exit),
        Payload::AsyncId(6).record(),
    ];
    let mut cx = DecodeContext::new(Epoch::new(0, 0));
    let mut sink = Ends::default();
    // SAFETY: every record points at the static site above.
    unsafe { ThreadDecoder::new(1).decode(&records, &mut cx, &mut sink) };
    assert_eq!(sink.0, [(5, Some(Outcome::Raised)), (6, None)]);
}

#[test]
fn the_async_id_unwound_payload_reads_back_as_written() {
    let payload = Payload::AsyncIdUnwound(u64::MAX);
    assert_eq!(Payload::from_record(&payload.record()), Some(payload));
    assert!(payload.record().is_payload());
}

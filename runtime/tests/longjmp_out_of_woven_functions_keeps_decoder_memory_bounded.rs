//! A woven function left by `longjmp` never records its exit. When no
//! enclosing woven function exits either (the `setjmp` sits in code that is
//! not woven), each jump leaves one more slice open on the thread's
//! decoder. The decoder must keep its open-slice stacks bounded however
//! many jumps the program makes, and the trace must stay balanced.

use perfflow_runtime::clock::Epoch;
use perfflow_runtime::decode::{DecodeContext, Misuse, Phase, ThreadDecoder, TraceEvent};
use perfflow_runtime::event::{Kind, RawEvent};
use perfflow_runtime::site::{Flow, Pointcut, Site};
use perfflow_runtime::writer::Sink;

static OUTER: Site = Site::new(
    Pointcut::Around,
    Flow::None,
    c"outer",
    c"f.c",
    None,
    c"outer",
);
static JUMPED: Site = Site::new(
    Pointcut::Around,
    Flow::None,
    c"jumped",
    c"f.c",
    None,
    c"jumped",
);
static ASYNC: Site = Site::new(
    Pointcut::AroundAsync,
    Flow::None,
    c"io",
    c"f.c",
    Some(c"io"),
    c"io",
);

/// Jumps made out of the woven function: far more than any bound.
const JUMPS: u64 = 200_000;

/// Most slices the decoder may keep open per stack.
const BOUND: usize = 65_536;

#[derive(Default)]
struct Counts {
    begins: u64,
    ends: u64,
    async_begins: u64,
    async_ends: u64,
    too_many: u64,
    outer_ended: bool,
}

impl Sink for Counts {
    fn event(&mut self, ev: &TraceEvent<'_>) {
        match ev.phase {
            Phase::Begin => self.begins += 1,
            Phase::End => {
                self.ends += 1;
                if std::ptr::eq(ev.site, &OUTER) {
                    self.outer_ended = true;
                }
            }
            Phase::AsyncBegin(_) => self.async_begins += 1,
            Phase::AsyncEnd(_) => self.async_ends += 1,
            _ => {}
        }
    }
    fn misuse(&mut self, what: Misuse, _site: &Site) {
        if what == Misuse::TooManyOpenSlices {
            self.too_many += 1;
        }
    }
}

#[test]
fn slices_left_open_by_longjmp_stay_bounded_and_the_trace_balanced() {
    let mut cx = DecodeContext::new(Epoch::new(0, 0));
    let mut decoder = ThreadDecoder::new(7);
    let mut sink = Counts::default();
    let mut peak = 0;
    let mut peak_async = 0;
    // The outer slice is truly open for the whole run.
    let first = [RawEvent::new(1, &OUTER, Kind::Enter)];
    // SAFETY: every record points at one of the static sites above.
    unsafe { decoder.decode(&first, &mut cx, &mut sink) };
    // One chunk of records per 1,000 jumps, as the writer would see them.
    let mut ts = 2;
    for _ in 0..JUMPS / 1000 {
        let mut chunk = Vec::with_capacity(2000);
        for _ in 0..1000 {
            chunk.push(RawEvent::new(ts, &JUMPED, Kind::Enter));
            chunk.push(RawEvent::new(ts, &ASYNC, Kind::Enter));
            ts += 1;
        }
        // SAFETY: as above.
        unsafe { decoder.decode(&chunk, &mut cx, &mut sink) };
        peak = peak.max(decoder.open_slices());
        peak_async = peak_async.max(decoder.open_async_slices());
    }
    assert!(peak <= BOUND, "{peak} slices open after {JUMPS} jumps");
    assert!(peak_async <= BOUND, "{peak_async} async slices open");
    assert!(sink.too_many >= 1, "the cut is reported");
    assert!(!sink.outer_ended, "the outer slice, truly open, stays open");
    // The outer slice's exit ends everything still open: every begin has
    // its end, in the right order.
    let last = [RawEvent::new(ts, &OUTER, Kind::Exit)];
    // SAFETY: as above.
    unsafe { decoder.decode(&last, &mut cx, &mut sink) };
    decoder.close_open(ts + 1, &mut cx, &mut sink);
    assert!(sink.outer_ended);
    assert_eq!(sink.begins, JUMPS + 1);
    assert_eq!(sink.ends, sink.begins);
    assert_eq!(sink.async_begins, JUMPS);
    assert_eq!(sink.async_ends, JUMPS);
    assert_eq!(decoder.open_slices(), 0);
}

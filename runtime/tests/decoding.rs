//! Pointcut rules applied to raw records, observed through a recording sink.

use perfflow_runtime::clock::Epoch;
use perfflow_runtime::decode::{DecodeContext, Misuse, Phase, ThreadDecoder, TraceEvent};
use perfflow_runtime::event::{Kind, RawEvent};
use perfflow_runtime::site::{Flow, Pointcut, Site};
use perfflow_runtime::writer::Sink;

macro_rules! site {
    ($name:ident, $pc:expr, $scope:expr) => {
        static $name: Site = Site::new($pc, Flow::None, c"name", c"file.c", $scope, c"sym");
    };
}

site!(AROUND, Pointcut::Around, None);
site!(INNER, Pointcut::Around, None);
site!(BEFORE, Pointcut::Before, None);
site!(AFTER, Pointcut::After, None);
site!(ASYNC, Pointcut::AroundAsync, Some(c"io"));
site!(ASYNC2, Pointcut::AroundAsync, None);
site!(BEFORE_ASYNC, Pointcut::BeforeAsync, None);
site!(AFTER_ASYNC, Pointcut::AfterAsync, None);

#[derive(Default)]
struct Recorder {
    events: Vec<(*const Site, u32, u64, Phase)>,
    misuse: Vec<Misuse>,
}

impl Sink for Recorder {
    fn event(&mut self, ev: &TraceEvent<'_>) {
        self.events
            .push((ev.site as *const Site, ev.tid, ev.ts_ns, ev.phase));
    }
    fn misuse(&mut self, what: Misuse, _site: &Site) {
        self.misuse.push(what);
    }
}

fn rec(ts: u64, site: &'static Site, kind: Kind) -> RawEvent {
    RawEvent::new(ts, site, kind)
}

fn decode(records: &[RawEvent]) -> Recorder {
    let mut cx = DecodeContext::new(Epoch::new(0, 0));
    let mut d = ThreadDecoder::new(5);
    let mut sink = Recorder::default();
    // SAFETY: every record points at one of the static sites above.
    unsafe { d.decode(records, &mut cx, &mut sink) };
    sink
}

fn phases(r: &Recorder) -> Vec<Phase> {
    r.events.iter().map(|e| e.3).collect()
}

#[test]
fn around_sites_produce_begin_at_enter_and_end_at_exit() {
    let r = decode(&[
        rec(1, &AROUND, Kind::Enter),
        rec(2, &INNER, Kind::Enter),
        rec(3, &INNER, Kind::Exit),
        rec(4, &AROUND, Kind::Exit),
    ]);
    assert_eq!(
        phases(&r),
        [Phase::Begin, Phase::Begin, Phase::End, Phase::End]
    );
    assert_eq!(r.events[1].0, &INNER as *const Site);
    assert!(r.events.iter().all(|e| e.1 == 5));
    assert!(r.misuse.is_empty());
}

#[test]
fn before_site_produces_an_instant_at_enter_only() {
    let r = decode(&[rec(1, &BEFORE, Kind::Enter), rec(2, &BEFORE, Kind::Exit)]);
    assert_eq!(phases(&r), [Phase::Instant]);
    assert_eq!(r.events[0].2, 1);
    assert!(r.misuse.is_empty());
}

#[test]
fn after_site_produces_an_instant_at_exit_only() {
    let r = decode(&[rec(1, &AFTER, Kind::Enter), rec(2, &AFTER, Kind::Exit)]);
    assert_eq!(phases(&r), [Phase::Instant]);
    assert_eq!(r.events[0].2, 2);
}

#[test]
fn exit_without_enter_is_dropped_and_reported_as_misuse() {
    let r = decode(&[rec(1, &AROUND, Kind::Exit), rec(2, &ASYNC, Kind::Exit)]);
    assert!(r.events.is_empty());
    assert_eq!(
        r.misuse,
        [Misuse::ExitWithoutEnter, Misuse::ExitWithoutEnter]
    );
}

#[test]
fn exit_of_an_outer_site_closes_inner_slices_left_open() {
    let r = decode(&[
        rec(1, &AROUND, Kind::Enter),
        rec(2, &INNER, Kind::Enter),
        rec(3, &AROUND, Kind::Exit),
    ]);
    assert_eq!(
        phases(&r),
        [Phase::Begin, Phase::Begin, Phase::End, Phase::End]
    );
    assert_eq!(r.events[2].0, &INNER as *const Site);
    assert_eq!(r.events[3].0, &AROUND as *const Site);
    assert_eq!(r.misuse, [Misuse::UnbalancedExit]);
}

#[test]
fn async_begin_and_end_share_an_id_on_one_thread() {
    let r = decode(&[
        rec(1, &ASYNC, Kind::Enter),
        rec(2, &ASYNC2, Kind::Enter),
        rec(3, &ASYNC2, Kind::Exit),
        rec(4, &ASYNC, Kind::Exit),
    ]);
    let p = phases(&r);
    let (Phase::AsyncBegin(a), Phase::AsyncBegin(b)) = (p[0], p[1]) else {
        panic!("expected two async begins, got {p:?}");
    };
    assert_ne!(a, b);
    assert_eq!(p[2], Phase::AsyncEnd(b));
    assert_eq!(p[3], Phase::AsyncEnd(a));
}

#[test]
fn one_sided_async_pointcuts_produce_async_instants() {
    let r = decode(&[
        rec(1, &BEFORE_ASYNC, Kind::Enter),
        rec(2, &BEFORE_ASYNC, Kind::Exit),
        rec(3, &AFTER_ASYNC, Kind::Enter),
        rec(4, &AFTER_ASYNC, Kind::Exit),
    ]);
    let p = phases(&r);
    assert_eq!(p.len(), 2);
    assert!(matches!(p[0], Phase::AsyncInstant(_)));
    assert!(matches!(p[1], Phase::AsyncInstant(_)));
    assert_eq!(r.events[0].2, 1);
    assert_eq!(r.events[1].2, 4);
}

#[test]
fn decoder_state_carries_over_between_chunks() {
    let mut cx = DecodeContext::new(Epoch::new(0, 0));
    let mut d = ThreadDecoder::new(9);
    let mut sink = Recorder::default();
    // SAFETY: the records point at static sites.
    unsafe {
        d.decode(&[rec(1, &AROUND, Kind::Enter)], &mut cx, &mut sink);
        assert_eq!(d.open_slices(), 1);
        d.decode(&[rec(2, &AROUND, Kind::Exit)], &mut cx, &mut sink);
    }
    assert_eq!(d.open_slices(), 0);
    assert_eq!(phases(&sink), [Phase::Begin, Phase::End]);
    assert!(sink.misuse.is_empty());
}

#[test]
fn timestamps_are_converted_from_monotonic_to_epoch_time() {
    let mut cx = DecodeContext::new(Epoch::new(1_000, 1_700_000_000_000_000_000));
    let mut d = ThreadDecoder::new(1);
    let mut sink = Recorder::default();
    // SAFETY: the records point at static sites.
    unsafe {
        d.decode(
            &[
                rec(1_500, &BEFORE, Kind::Enter),
                rec(900, &BEFORE, Kind::Enter),
            ],
            &mut cx,
            &mut sink,
        )
    };
    assert_eq!(sink.events[0].2, 1_700_000_000_000_000_500);
    assert_eq!(sink.events[1].2, 1_699_999_999_999_999_900);
}

#[test]
fn records_with_reserved_kind_bits_are_skipped() {
    let junk = RawEvent {
        ts_ns: 1,
        tagged_site: (&AROUND as *const Site as u64) | 3,
    };
    let zero = RawEvent {
        ts_ns: 0,
        tagged_site: 0,
    };
    let r = decode(&[junk, zero]);
    assert!(r.events.is_empty());
}

#[test]
fn slices_left_open_are_ended_innermost_first_when_closed() {
    let mut cx = DecodeContext::new(Epoch::new(0, 0));
    let mut d = ThreadDecoder::new(3);
    let mut sink = Recorder::default();
    // SAFETY: the records point at static sites.
    unsafe {
        d.decode(
            &[
                rec(1, &AROUND, Kind::Enter),
                rec(2, &ASYNC, Kind::Enter),
                rec(3, &INNER, Kind::Enter),
            ],
            &mut cx,
            &mut sink,
        )
    };
    d.close_open(10, &mut cx, &mut sink);
    assert_eq!(d.open_slices(), 0);
    let ends: Vec<_> = sink.events[3..].iter().map(|e| (e.0, e.2, e.3)).collect();
    let Phase::AsyncBegin(id) = sink.events[1].3 else {
        panic!("expected an async begin");
    };
    assert_eq!(
        ends,
        [
            (&INNER as *const Site, 10, Phase::End),
            (&AROUND as *const Site, 10, Phase::End),
            (&ASYNC as *const Site, 10, Phase::AsyncEnd(id)),
        ]
    );
}

//! The decoder writes runs of plain slice begins and ends in one loop
//! (`ThreadDecoder::plain_run`): into any writer's `Sink` calls from
//! `ThreadDecoder::decode`, and with the Perfetto writer's own loop from
//! `PerfettoWriter::decode`; every other record goes to the general
//! decoder. The file must be, byte for byte, what decoding event by event
//! (`ThreadDecoder::decode_one` into the writer's `Sink` calls) writes for
//! the same records, in both formats: checked here on long random streams
//! of several threads that mix plain slices with everything that leaves the
//! loop (payloads, other pointcuts, flows, unbalanced exits, zeroed records,
//! stamps that go back, TSC stamps outside the cached calibration segment,
//! more sites than a Perfetto sequence keeps packets for, block writes).

use std::ffi::CString;

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use perfflow_runtime::clock::{Epoch, Point, Timebase};
use perfflow_runtime::decode::{DecodeContext, ThreadDecoder};
use perfflow_runtime::event::{Kind, Payload, RawEvent};
use perfflow_runtime::perfetto::PerfettoWriter;
use perfflow_runtime::site::{Flow, Pointcut, Site};
use perfflow_runtime::writer::{ChromeJsonWriter, Sink};

/// A writer under test, into memory.
trait Writer: Sink + Sized {
    fn start(epoch: Epoch) -> Self;
    /// Decodes `records` the way the runtime does (in runs).
    ///
    /// # Safety
    /// As `ThreadDecoder::decode`.
    unsafe fn runs(&mut self, d: &mut ThreadDecoder, records: &[RawEvent], cx: &mut DecodeContext);
    fn file(self) -> (Vec<u8>, u64);
}

impl Writer for PerfettoWriter<Vec<u8>> {
    fn start(epoch: Epoch) -> Self {
        PerfettoWriter::new(Vec::new(), 4242, epoch)
    }
    unsafe fn runs(&mut self, d: &mut ThreadDecoder, records: &[RawEvent], cx: &mut DecodeContext) {
        // SAFETY: the caller's promise.
        unsafe { self.decode(d, records, cx) }
    }
    fn file(self) -> (Vec<u8>, u64) {
        let n = self.output().events_written();
        (self.into_inner(), n)
    }
}

impl Writer for ChromeJsonWriter<Vec<u8>> {
    fn start(_epoch: Epoch) -> Self {
        ChromeJsonWriter::new(Vec::new(), 4242)
    }
    unsafe fn runs(&mut self, d: &mut ThreadDecoder, records: &[RawEvent], cx: &mut DecodeContext) {
        // SAFETY: the caller's promise.
        unsafe { d.decode(records, cx, self) }
    }
    fn file(self) -> (Vec<u8>, u64) {
        let n = self.output().events_written();
        (self.into_inner(), n)
    }
}

/// A fixed stream of test choices from a seed.
struct Rng(ChaCha8Rng);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0.random_range(0..n)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn leak(s: String) -> &'static std::ffi::CStr {
    Box::leak(CString::new(s).unwrap().into_boxed_c_str())
}

/// `plain` around sites without a flow (more than a sequence's 64 packet
/// slots), then sites of every other kind.
fn sites(plain: usize) -> (Vec<&'static Site>, Vec<&'static Site>) {
    let site = |i: usize, pc: Pointcut, flow: Flow, scope: Option<&'static std::ffi::CStr>| {
        &*Box::leak(Box::new(Site::new(
            pc,
            flow,
            leak(format!("f{i}")),
            leak(format!("src/file{}.c", i % 7)),
            scope,
            leak(format!("sym{i}")),
        )))
    };
    let plain_sites = (0..plain)
        .map(|i| site(i, Pointcut::Around, Flow::None, None))
        .collect();
    let other = vec![
        site(1000, Pointcut::Before, Flow::None, None),
        site(1001, Pointcut::After, Flow::None, None),
        site(1002, Pointcut::Around, Flow::Out, Some(c"stage")),
        site(1003, Pointcut::Around, Flow::In, Some(c"stage")),
        site(1004, Pointcut::AroundAsync, Flow::None, Some(c"io")),
        site(1005, Pointcut::BeforeAsync, Flow::None, None),
        site(1006, Pointcut::AfterAsync, Flow::None, None),
    ];
    (plain_sites, other)
}

/// One thread's records: mostly nested plain slices, with `case.odd` per
/// cent of events that are something else (with payloads or without).
fn stream(
    rng: &mut Rng,
    len: usize,
    plain: &[&'static Site],
    other: &[&'static Site],
    case: &Case,
) -> Vec<RawEvent> {
    let mut out = Vec::with_capacity(len);
    let mut open: Vec<&'static Site> = Vec::new();
    let mut ts: u64 = 1_000 + rng.below(1_000);
    while out.len() < len {
        // Mostly forward by a few hundred ticks; now and then back a bit or
        // a long way forward (another calibration segment).
        ts = match rng.below(100) {
            0 => ts.saturating_sub(rng.below(500)),
            1 => ts + 2_000_000 + rng.below(1_000_000),
            _ => ts + rng.below(600),
        };
        if rng.chance(case.odd) {
            match rng.below(if case.payloads { 7 } else { 3 }) {
                0 => out.push(RawEvent {
                    ts_ns: 0,
                    tagged_site: 0,
                }),
                1 => {
                    // Instants and flows (async events get their ids below:
                    // an id the decoder draws is global, and would differ
                    // between the two runs compared).
                    let s = other[rng.below(4) as usize];
                    let kind = if rng.chance(50) {
                        Kind::Enter
                    } else {
                        Kind::Exit
                    };
                    out.push(RawEvent::new(ts, s, kind));
                }
                2 => {
                    // An exit of a site that is not the innermost open one.
                    let s = plain[rng.below(plain.len() as u64) as usize];
                    out.push(RawEvent::new(ts, s, Kind::Exit));
                    if let Some(at) = open.iter().rposition(|o| std::ptr::eq(*o, s)) {
                        open.truncate(at);
                    }
                }
                3 => {
                    let s = plain[rng.below(plain.len() as u64) as usize];
                    out.push(RawEvent::new(ts, s, Kind::Enter));
                    out.push(
                        Payload::Usage {
                            cpu_ns: ts / 2,
                            rss_kib: 1000 + rng.below(100),
                        }
                        .record(),
                    );
                    open.push(s);
                }
                4 => {
                    if let Some(s) = open.pop() {
                        out.push(RawEvent::new(ts, s, Kind::Exit));
                        out.push(Payload::Unwound.record());
                    }
                }
                5 => out.push(Payload::AsyncId(rng.below(50) + 1).record()),
                _ => {
                    let s = other[4 + rng.below(3) as usize];
                    let kind = if rng.chance(50) {
                        Kind::Enter
                    } else {
                        Kind::Exit
                    };
                    out.push(RawEvent::new(ts, s, kind));
                    out.push(Payload::AsyncId(rng.below(20) + 1).record());
                }
            }
            continue;
        }
        let enter = open.is_empty() || (open.len() < 40 && rng.chance(52));
        if enter {
            // A few sites most of the time, so their packets are ready.
            let s = if rng.chance(80) {
                plain[rng.below(4) as usize]
            } else {
                plain[rng.below(plain.len() as u64) as usize]
            };
            out.push(RawEvent::new(ts, s, Kind::Enter));
            open.push(s);
        } else {
            let s = open.pop().unwrap();
            out.push(RawEvent::new(ts, s, Kind::Exit));
        }
    }
    out
}

/// Calibration points up to tick 2^50: every stamp of [`stream`] lies
/// before the newest, so converting never reads the real clocks (which
/// would differ between the two runs compared).
fn timebase(epoch: Epoch, tsc: bool) -> Timebase {
    if !tsc {
        return Timebase::monotonic(epoch);
    }
    let mut t = Timebase::tsc(
        epoch,
        Point {
            tsc: 0,
            mono_ns: 5_000,
        },
    );
    let (mut tick, mut ns) = (0u64, 5_000u64);
    for i in 1..2_000u64 {
        // Segments of different lengths and slopes (0.3 to 0.5 ns a tick).
        let dt = 700_000 + (i * 7_919) % 900_000;
        tick += dt;
        ns += dt * (3 + i % 3) / 10;
        t.add(Point {
            tsc: tick,
            mono_ns: ns,
        });
    }
    t.add(Point {
        tsc: 1 << 50,
        mono_ns: 1 << 50,
    });
    t
}

/// One comparison: the random streams' seed, the per cent of events that
/// leave the common case, the clock, the log format and whether any
/// record is a payload (when not, the runs are decoded with
/// `DecodeContext::payloads` false, as the runtime does).
struct Case {
    seed: u64,
    odd: u64,
    tsc: bool,
    compact: bool,
    payloads: bool,
}

/// Decodes `threads` (tid, records) into a fresh writer, batch by batch
/// in a fixed interleaving, in runs (`batch`) or event by event; returns
/// the file and the events written.
fn write<W: Writer>(
    threads: &[(u32, Vec<RawEvent>)],
    cuts: &[usize],
    case: &Case,
    batch: bool,
) -> (Vec<u8>, u64) {
    // The epoch's monotonic time lies just after a monotonic stream's
    // first stamps and before a TSC stream's (5 us, the first calibration
    // point): a sequence's clock starts at the epoch, so the events stamped
    // before it are written as events stamped before the sequence's last
    // one, and the rest as the common case.
    let epoch = Epoch::new(1_500, 2_000_000_000_000_000_000);
    let mut w = W::start(epoch);
    w.process_name(4242, "batch-test");
    let mut cx = DecodeContext::new(epoch);
    cx.time = timebase(epoch, case.tsc);
    cx.compact = case.compact;
    let mut decoders: Vec<ThreadDecoder> = threads
        .iter()
        .map(|(tid, _)| ThreadDecoder::new(*tid))
        .collect();
    let mut done = vec![0usize; threads.len()];
    let mut cut = 0;
    while done.iter().zip(threads).any(|(d, (_, r))| *d < r.len()) {
        for (i, (_, records)) in threads.iter().enumerate() {
            if done[i] == records.len() {
                continue;
            }
            let mut upto = (done[i] + cuts[cut % cuts.len()]).min(records.len());
            cut += 1;
            // A batch never ends between an event and its payloads.
            while upto < records.len() && records[upto].is_payload() {
                upto += 1;
            }
            let batch_records = &records[done[i]..upto];
            // SAFETY: every record's site is a leaked, immutable `Site`.
            unsafe {
                if batch {
                    cx.payloads = case.payloads;
                    w.runs(&mut decoders[i], batch_records, &mut cx);
                    cx.payloads = true;
                } else {
                    let mut next = 0;
                    while next < batch_records.len() {
                        next = decoders[i].decode_one(batch_records, next, &mut cx, &mut w);
                    }
                }
            }
            done[i] = upto;
        }
    }
    for (i, (tid, records)) in threads.iter().enumerate() {
        let last = records.iter().map(|r| r.ts_ns).max().unwrap_or(0);
        decoders[i].close_open(last, &mut cx, &mut w);
        w.thread_name(*tid, &format!("worker-{tid}"));
    }
    w.finish().expect("finish");
    w.file()
}

/// Both formats, on the same random threads.
fn check(case: Case) {
    let mut rng = Rng(ChaCha8Rng::seed_from_u64(case.seed));
    let (plain, other) = sites(90);
    let threads: Vec<(u32, Vec<RawEvent>)> = (0..3u32)
        .map(|t| {
            let len = 60_000 + t as usize * 7_000;
            (100 + t, stream(&mut rng, len, &plain, &other, &case))
        })
        .collect();
    if !case.payloads {
        assert!(threads
            .iter()
            .all(|(_, r)| !r.iter().any(RawEvent::is_payload)));
    }
    let cuts: Vec<usize> = (0..64).map(|_| 1 + rng.below(3_000) as usize).collect();
    compare::<PerfettoWriter<Vec<u8>>>(&threads, &cuts, &case, "Perfetto");
    compare::<ChromeJsonWriter<Vec<u8>>>(&threads, &cuts, &case, "JSON");
}

fn compare<W: Writer>(threads: &[(u32, Vec<RawEvent>)], cuts: &[usize], case: &Case, format: &str) {
    let Case {
        seed,
        odd,
        tsc,
        compact,
        payloads,
    } = case;
    let what = format!(
        "{format}, seed {seed:#x}, odd {odd}%, tsc {tsc}, compact {compact}, payloads {payloads}"
    );
    let (batched, n_batched) = write::<W>(threads, cuts, case, true);
    let (reference, n_reference) = write::<W>(threads, cuts, case, false);
    // A compact trace has one event per slice.
    let least = if *compact { 45_000 } else { 90_000 };
    assert!(
        n_reference > least,
        "too few events written: {n_reference} ({what})"
    );
    assert_eq!(n_batched, n_reference, "events written ({what})");
    assert_eq!(batched.len(), reference.len(), "trace length ({what})");
    if let Some(at) = batched.iter().zip(&reference).position(|(a, b)| a != b) {
        panic!("traces differ from byte {at} ({what})");
    }
}

#[test]
fn plain_slices_only_with_the_tsc() {
    check(Case {
        seed: 0x9e37_79b9_7f4a_7c15,
        odd: 0,
        tsc: true,
        compact: false,
        payloads: false,
    });
}

#[test]
fn a_few_odd_events_with_the_tsc() {
    check(Case {
        seed: 0x1234_5678_9abc_def1,
        odd: 2,
        tsc: true,
        compact: false,
        payloads: true,
    });
}

#[test]
fn many_odd_events_with_the_tsc() {
    check(Case {
        seed: 0x0bad_cafe_f00d_d00d,
        odd: 30,
        tsc: true,
        compact: false,
        payloads: true,
    });
}

#[test]
fn odd_events_without_payloads_skip_the_look_for_one() {
    check(Case {
        seed: 0x0dd0_dd0d_d0dd_0dd0,
        odd: 20,
        tsc: true,
        compact: false,
        payloads: false,
    });
}

#[test]
fn odd_events_with_the_monotonic_clock() {
    check(Case {
        seed: 0x5eed_5eed_5eed_5eed,
        odd: 5,
        tsc: false,
        compact: false,
        payloads: true,
    });
    check(Case {
        seed: 0x5eed_5eed_0000_0001,
        odd: 5,
        tsc: false,
        compact: false,
        payloads: false,
    });
}

#[test]
fn the_compact_format_takes_the_general_path() {
    check(Case {
        seed: 0x7777_1111_2222_3333,
        odd: 5,
        tsc: true,
        compact: true,
        payloads: true,
    });
}

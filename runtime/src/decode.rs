//! Turns one thread's raw records into trace events.
//!
//! The hot path stores only `(timestamp, site, enter|exit)`, sometimes
//! followed by payload records of plain numbers. Everything that depends on
//! the pointcut — which Chrome phase to write, whether an exit is
//! paired with an enter, which async id a slice gets — is decided here, on
//! the writer side, by a small per-thread state machine that survives from
//! one chunk of records to the next.
//!
//! Rules:
//! - `around`: enter → `B`, exit → `E`. An exit must close an open slice of
//!   the same site; slices opened above it that were never closed (a
//!   `longjmp` out of woven code) are closed at the same time. An exit with
//!   no open slice for its site is a misuse: it is dropped and reported.
//! - `before` / `after`: an instant at enter / at exit; the other half is
//!   ignored.
//! - `around_async`: enter → `b`, exit → `e`, with the same `id`. How the
//!   two are paired depends on the payload that follows the records (see
//!   [`crate::event`]):
//!   - [`Payload::AsyncId`] (the manual async API): the id was chosen when
//!     the begin was recorded and handed back to the program, which passes
//!     it to the end, possibly on another thread;
//!   - [`Payload::Sequence`] (the upstream ABI): the n-th exit of a site
//!     ends its n-th enter, on whatever thread each happens; the first of
//!     the two to be decoded picks the id and leaves it in the
//!     [`DecodeContext`] for the other;
//!   - no payload (woven sites): a per-thread stack pairs an exit with the
//!     latest open enter of the same site.
//!
//!   All ids come from one process-wide counter ([`next_async_id`]), so ids
//!   chosen when recording and ids chosen here never collide.
//! - `before_async` / `after_async`: an async instant `n`.
//! - An exit followed by [`Payload::Unwound`] (the weaver's cleanup
//!   landing pad: the function was left by an exception), or by
//!   [`Payload::AsyncIdUnwound`] (an async operation left by one), ends its `around`
//!   or `around_async` slice through [`Sink::ended`] with
//!   [`Outcome::Raised`] instead of [`Sink::event`], so writers mark the
//!   slice's end `raised`. The ends [`ThreadDecoder::close_open`] writes
//!   go the same way, as [`Outcome::OpenAtEnd`], or [`Outcome::Killed`]
//!   when a fatal signal ends the process.
//! - Slices still open when their thread exits or the trace is completed
//!   are ended at that moment ([`ThreadDecoder::close_open`]), so every
//!   `B` has its `E` even when `exit()` is called deep inside woven code.
//!
//! - Compact log format (`log-event=compact`): no `B`; when a slice ends, one
//!   `X` event at its begin time with its duration. The open-slice stack
//!   holds the begin times, so recursion and nested calls of the same
//!   function each get their own duration.
//! - `cpu-mem-usage`: `around` enters and exits are followed by a
//!   [`Payload::Usage`]. When a slice ends with one at both ends, two
//!   counter samples named after the function come before its `E` (or `X`):
//!   at the begin, `cpu_usage` (thread CPU time over wall time of the slice,
//!   in percent) and `memory_usage` (resident set size at the exit, KiB);
//!   at the end, both 0 — PerfFlowAspect's shape. The values live on the
//!   open-slice stack, so recursion gets one pair per call. Slices ended
//!   without an exit record ([`ThreadDecoder::close_open`]) have no CPU
//!   reading at their end and get no samples.
//!
//! Speed: most records are the common case of `around` (an enter, or the
//! exit of the innermost open slice, at a site without a flow and with no
//! payload). [`ThreadDecoder::plain_run`] takes runs of them in one loop
//! and hands each to a [`SliceRun`] (a writer's begin and end); a leaf
//! call's enter and exit, adjacent records, go together without touching
//! the open-slice stack. Every other record goes through
//! [`ThreadDecoder::decode_one`], which applies the rules above to any
//! record, the common case included, so the two agree (a test compares
//! their files byte for byte).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::clock::{Epoch, Timebase};
use crate::event::{Kind, Payload, RawEvent};
use crate::site::{Pointcut, Site};
use crate::usage;
use crate::writer::Sink;

/// Chrome trace phase of an event, with the async id where there is one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// `B`
    Begin,
    /// `E`
    End,
    /// `i` with thread scope
    Instant,
    /// `b`
    AsyncBegin(u64),
    /// `e`
    AsyncEnd(u64),
    /// `n`
    AsyncInstant(u64),
    /// A whole slice as one `X` event (compact log format): the event's
    /// timestamp is the begin, this is the duration in nanoseconds.
    Complete(u64),
    /// `s`: data leaves the enclosing slice along flow `id`.
    FlowStart(u64),
    /// `f` (bound to the enclosing slice): data arrives along flow `id`.
    FlowEnd(u64),
}

/// One decoded event, handed to a [`Sink`].
#[derive(Clone, Copy, Debug)]
pub struct TraceEvent<'a> {
    /// The site the event belongs to.
    pub site: &'a Site,
    /// Kernel thread id of the recording thread.
    pub tid: u32,
    /// Nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// What to write.
    pub phase: Phase,
}

/// How a slice ended when not by a return: written on its end event (see
/// [`Sink::ended`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Its function was left by unwinding (an exception).
    Raised,
    /// Its thread or process ended inside it (`exit()` called in a woven
    /// function, a thread that ended inside it): it ends at that moment.
    OpenAtEnd,
    /// A fatal signal ended the process inside it.
    Killed,
}

impl Outcome {
    /// The name trace files use: `raised`, `open_at_end`, `killed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Raised => "raised",
            Outcome::OpenAtEnd => "open_at_end",
            Outcome::Killed => "killed",
        }
    }
}

/// Ways in which recorded events did not fit the pointcut rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misuse {
    /// An exit with no matching enter on the same thread.
    ExitWithoutEnter,
    /// An exit closed a slice that still had open slices above it.
    UnbalancedExit,
    /// A site whose `abi_version` this runtime does not know.
    UnknownSiteVersion,
    /// An enter found [`MAX_OPEN_SLICES`] slices already open on its thread
    /// (woven functions left by `longjmp`, which never record their exit):
    /// the newest half of them ended at that enter.
    TooManyOpenSlices,
}

/// Most `around` (and, separately, `around_async`) slices one thread's
/// decoder keeps open. A woven function left by `longjmp` never records its
/// exit; when its slice is not closed by the exit of an enclosing woven
/// function, it stays open, and a program that jumps out of one in a loop
/// would grow the open-slice stack (32 bytes per slice) without end. When
/// an enter finds the stack full, the newest half of the open slices end at
/// that enter's time (reported once as [`Misuse::TooManyOpenSlices`]); the
/// outer half, where the slices that are truly still open sit, stays.
/// Recursion of woven (or traced Python) functions deeper than this is cut
/// the same way; at most 2 MiB per thread.
pub const MAX_OPEN_SLICES: usize = 65_536;

/// Source of every async id in the process; 0 is never handed out.
static NEXT_ASYNC_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh async id, unique in the process (and in a forked child, which
/// continues from its parent's count).
pub fn next_async_id() -> u64 {
    NEXT_ASYNC_ID.fetch_add(1, Ordering::Relaxed)
}

/// Process-wide decoding state shared by all threads.
#[derive(Debug)]
pub struct DecodeContext {
    /// Converts event stamps (monotonic ns or TSC ticks) to epoch time.
    pub time: Timebase,
    /// `log-event=compact`: one `X` event per slice instead of `B` + `E`.
    pub compact: bool,
    /// Whether the records decoded may hold payloads (true unless set):
    /// false only where the caller knows that none does (the runtime, for
    /// records taken before any payload was recorded), which spares
    /// [`ThreadDecoder::plain_run`] its look for one after each event.
    pub payloads: bool,
    /// Ids of `around_async` enters or exits numbered by [`Payload::Sequence`]
    /// whose other half has not been decoded yet, keyed by site address and
    /// number.
    unpaired: HashMap<(usize, u64), u64>,
    /// Flows numbered so far per scope: (outs, ins).
    flows: HashMap<Vec<u8>, (u64, u64)>,
    /// Put with a `/` in front of every flow scope before its ids are
    /// computed (`PERFFLOW_FLOW_PREFIX`); empty: none.
    pub flow_prefix: Vec<u8>,
}

/// Direction of one flow event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FlowDir {
    Out,
    In,
}

/// The flow event a site's enter or exit writes, if any: `in` arrives at
/// entry, `out` leaves at exit, `inout` does both, `outin` the reverse.
fn flow_dir(flow: u32, kind: Kind) -> Option<FlowDir> {
    // Values of enum perfflow_flow.
    match (flow, kind) {
        (1 | 3, Kind::Enter) | (4, Kind::Exit) => Some(FlowDir::In),
        (2 | 3, Kind::Exit) | (4, Kind::Enter) => Some(FlowDir::Out),
        _ => None,
    }
}

/// The id of the `k`-th flow of `scope`: 20 bits of a hash of the scope
/// (FNV-1a) above the count in the lower 32 bits, so every process computes
/// the same ids for the same scope, and ids stay below 2^53 (exact as a
/// JavaScript number, which trace viewers may use).
pub fn flow_id(scope: &[u8], k: u64) -> u64 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in scope {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    (u64::from(h & 0xf_ffff) << 32) | (k & 0xffff_ffff)
}

impl DecodeContext {
    /// Numbers the next flow of `scope` in direction `dir`.
    fn next_flow(&mut self, scope: &[u8], dir: FlowDir) -> u64 {
        let scope = if self.flow_prefix.is_empty() {
            scope.to_vec()
        } else {
            [&self.flow_prefix[..], b"/", scope].concat()
        };
        let counts = self.flows.entry(scope.clone()).or_insert((0, 0));
        let slot = match dir {
            FlowDir::Out => &mut counts.0,
            FlowDir::In => &mut counts.1,
        };
        let k = *slot;
        *slot += 1;
        flow_id(&scope, k)
    }

    /// A context with the given clock pairing, for stamps in monotonic ns
    /// (set `time` for TSC stamps).
    pub fn new(epoch: Epoch) -> DecodeContext {
        DecodeContext {
            time: Timebase::monotonic(epoch),
            compact: false,
            payloads: true,
            unpaired: HashMap::new(),
            flows: HashMap::new(),
            flow_prefix: Vec::new(),
        }
    }

    /// The id shared by the n-th enter and the n-th exit of `site`: chosen
    /// by whichever of the two is decoded first, taken by the other.
    fn sequence_id(&mut self, site: *const Site, n: u64) -> u64 {
        match self.unpaired.remove(&(site as usize, n)) {
            Some(id) => id,
            None => {
                let id = next_async_id();
                self.unpaired.insert((site as usize, n), id);
                id
            }
        }
    }

    /// Number of numbered async enters and exits still waiting for their
    /// other half.
    pub fn unpaired_async(&self) -> usize {
        self.unpaired.len()
    }
}

/// What the payload records after one event said.
#[derive(Clone, Copy, Debug, Default)]
struct Extras {
    /// Thread CPU time (ns) and resident set size (KiB).
    usage: Option<(u64, u64)>,
    async_id: Option<u64>,
    sequence: Option<u64>,
    /// The exit was taken by unwinding.
    unwound: bool,
}

impl Extras {
    fn add(&mut self, payload: Payload) {
        match payload {
            Payload::Usage { cpu_ns, rss_kib } => self.usage = Some((cpu_ns, rss_kib)),
            Payload::AsyncId(id) => self.async_id = Some(id),
            Payload::Sequence(n) => self.sequence = Some(n),
            Payload::Unwound => self.unwound = true,
            Payload::AsyncIdUnwound(id) => {
                self.async_id = Some(id);
                self.unwound = true;
            }
        }
    }
}

/// An `around` slice that has begun and not ended.
#[derive(Clone, Copy, Debug)]
struct OpenSlice {
    site: *const Site,
    /// Begin time, epoch ns.
    begin_ns: u64,
    /// Thread CPU time at the begin, with `cpu-mem-usage`.
    cpu_ns: Option<u64>,
}

/// Ends one `around` slice at `end_ns`: with usage readings at both ends,
/// the two counter samples of `cpu-mem-usage` first; then an `E` at
/// `end_ns`, or in compact mode one `X` at the begin lasting until `end_ns`.
/// `end_usage` is the thread CPU time and resident set size at the end;
/// `outcome`: how it ended, when not by a return.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn end_slice<S: Sink + ?Sized>(
    site: &Site,
    tid: u32,
    slice: &OpenSlice,
    end_ns: u64,
    end_usage: Option<(u64, u64)>,
    compact: bool,
    outcome: Option<Outcome>,
    sink: &mut S,
) {
    let begin_ns = slice.begin_ns;
    if let (Some(cpu_begin), Some(end)) = (slice.cpu_ns, end_usage) {
        usage_samples(site, tid, (begin_ns, cpu_begin), (end_ns, end), sink);
    }
    let (ts_ns, phase) = if compact {
        (begin_ns, Phase::Complete(end_ns.saturating_sub(begin_ns)))
    } else {
        (end_ns, Phase::End)
    };
    let end = TraceEvent {
        site,
        tid,
        ts_ns,
        phase,
    };
    match outcome {
        Some(outcome) => sink.ended(&end, outcome),
        None => sink.event(&end),
    }
}

/// The two counter samples of `cpu-mem-usage` for a slice from `begin`
/// (epoch ns, thread CPU ns) to `end` (epoch ns, thread CPU ns and
/// resident KiB).
#[cold]
#[inline(never)]
fn usage_samples<S: Sink + ?Sized>(
    site: &Site,
    tid: u32,
    (begin_ns, cpu_begin): (u64, u64),
    (end_ns, (cpu_end, rss_kib)): (u64, (u64, u64)),
    sink: &mut S,
) {
    let percent = usage::cpu_percent(
        cpu_end.saturating_sub(cpu_begin),
        end_ns.saturating_sub(begin_ns),
    );
    sink.counter(
        site.name(),
        tid,
        begin_ns,
        &[("cpu_usage", percent), ("memory_usage", rss_kib as f64)],
    );
    sink.counter(
        site.name(),
        tid,
        end_ns,
        &[("cpu_usage", 0.0), ("memory_usage", 0.0)],
    );
}

/// A writer's way to write a run of one thread's slice begins and ends
/// (see [`ThreadDecoder::plain_run`]) with its per-thread state looked up
/// once for the run.
pub trait SliceRun {
    /// Writes the begin of a slice of `site` at `ts_ns` as
    /// [`Sink::slice_begin`] would, or writes nothing and returns false
    /// (the event is then decoded the general way).
    fn begin(&mut self, site: &Site, ts_ns: u64) -> bool;
    /// Writes the end of the innermost open slice, of `site`, at `ts_ns`
    /// as [`Sink::slice_end`] would, or writes nothing and returns false.
    fn end(&mut self, site: &Site, ts_ns: u64) -> bool;
}

/// The [`SliceRun`] of any [`Sink`]: its own [`Sink::slice_begin`] and
/// [`Sink::slice_end`] for thread `tid`, which always write.
struct SinkRun<'a, S: Sink + ?Sized> {
    sink: &'a mut S,
    tid: u32,
}

impl<S: Sink + ?Sized> SliceRun for SinkRun<'_, S> {
    #[inline(always)]
    fn begin(&mut self, site: &Site, ts_ns: u64) -> bool {
        self.sink.slice_begin(site, self.tid, ts_ns);
        true
    }

    #[inline(always)]
    fn end(&mut self, site: &Site, ts_ns: u64) -> bool {
        self.sink.slice_end(site, self.tid, ts_ns);
        true
    }
}

/// The stamp, in epoch ns, of the exit at `follower` when it is the exit
/// of `enter`'s site with no payload after it and a stamp that converts
/// without calibration work; `None` otherwise.
///
/// # Safety
/// `follower` and `end` must point into or just past the records `enter`
/// lies in, `follower` right after `enter`.
#[inline(always)]
unsafe fn leaf_exit<const TSC: bool, const PAYLOADS: bool>(
    enter: &RawEvent,
    follower: *const RawEvent,
    end: *const RawEvent,
    time: &Timebase,
) -> Option<u64> {
    if follower >= end {
        return None;
    }
    // SAFETY: below `end`, so within the records.
    let exit = unsafe { &*follower };
    // The same site with the kind bits of an exit instead of an enter.
    if exit.tagged_site != enter.tagged_site ^ (Kind::Enter as u64 ^ Kind::Exit as u64) {
        return None;
    }
    // SAFETY: as above; `after` is read only below `end`.
    let after = unsafe { follower.add(1) };
    if PAYLOADS && after < end && unsafe { (*after).is_payload() } {
        return None;
    }
    time.quick_epoch_ns::<TSC>(exit.ts_ns)
}

/// Decoding state of one thread.
#[derive(Debug)]
pub struct ThreadDecoder {
    tid: u32,
    /// Open `around` slices, innermost last.
    open: Vec<OpenSlice>,
    /// Open `around_async` slices paired on this thread: site and id.
    open_async: Vec<(*const Site, u64)>,
}

// SAFETY: the site pointers are only compared and, during `decode`,
// dereferenced under the caller's guarantee that sites are immutable and
// live for the whole program; they carry no thread affinity.
unsafe impl Send for ThreadDecoder {}

impl ThreadDecoder {
    /// A decoder for the thread with kernel id `tid`.
    pub fn new(tid: u32) -> ThreadDecoder {
        ThreadDecoder {
            tid,
            open: Vec::new(),
            open_async: Vec::new(),
        }
    }

    /// The thread's id changes in a forked child (its only thread).
    pub fn set_tid(&mut self, tid: u32) {
        self.tid = tid;
    }

    /// The thread this decoder belongs to.
    pub fn tid(&self) -> u32 {
        self.tid
    }

    /// In a forked child: the slices this thread was inside of when the
    /// process forked are the child's too. They begin again at the fork
    /// (monotonic `fork_ns`) in the child's own trace.
    pub fn reopen_after_fork<S: Sink + ?Sized>(
        &mut self,
        fork_ns: u64,
        cx: &mut DecodeContext,
        sink: &mut S,
    ) {
        let ts_ns = cx.time.to_epoch_ns(fork_ns);
        for slice in &mut self.open {
            slice.begin_ns = ts_ns;
            // The child's thread is a new task whose CPU clock starts at 0.
            slice.cpu_ns = slice.cpu_ns.map(|_| 0);
            if !cx.compact {
                // SAFETY: pushed by `decode`, whose caller vouched for the site.
                let site: &Site = unsafe { &*slice.site };
                sink.event(&TraceEvent {
                    site,
                    tid: self.tid,
                    ts_ns,
                    phase: Phase::Begin,
                });
            }
        }
        for &(site, id) in &self.open_async {
            // SAFETY: as above.
            let site: &Site = unsafe { &*site };
            sink.event(&TraceEvent {
                site,
                tid: self.tid,
                ts_ns,
                phase: Phase::AsyncBegin(id),
            });
        }
    }

    /// Number of `around` slices still open.
    pub fn open_slices(&self) -> usize {
        self.open.len()
    }

    /// Number of `around_async` slices paired on this thread still open.
    pub fn open_async_slices(&self) -> usize {
        self.open_async.len()
    }

    /// Ends the open `around` slices above the first `keep` at epoch
    /// `ts_ns`, innermost first, as `outcome` says when given.
    fn end_open_above<S: Sink + ?Sized>(
        &mut self,
        keep: usize,
        ts_ns: u64,
        compact: bool,
        outcome: Option<Outcome>,
        sink: &mut S,
    ) {
        while self.open.len() > keep {
            let Some(slice) = self.open.pop() else { break };
            // SAFETY: pushed by `decode`, whose caller vouched for the site.
            let site: &Site = unsafe { &*slice.site };
            end_slice(site, self.tid, &slice, ts_ns, None, compact, outcome, sink);
        }
    }

    /// Ends the open `around_async` slices above the first `keep` at epoch
    /// `ts_ns`, newest first, as `outcome` says when given.
    fn end_async_above<S: Sink + ?Sized>(
        &mut self,
        keep: usize,
        ts_ns: u64,
        outcome: Option<Outcome>,
        sink: &mut S,
    ) {
        while self.open_async.len() > keep {
            let Some((site, id)) = self.open_async.pop() else {
                break;
            };
            // SAFETY: as above.
            let site: &Site = unsafe { &*site };
            let end = TraceEvent {
                site,
                tid: self.tid,
                ts_ns,
                phase: Phase::AsyncEnd(id),
            };
            match outcome {
                Some(outcome) => sink.ended(&end, outcome),
                None => sink.event(&end),
            }
        }
    }

    /// Ends every slice still open on this thread at monotonic time
    /// `mono_ns`, innermost first: the thread or the process ended inside
    /// them (for example `exit()` called from a woven function, where only
    /// the innermost function gets its exit event). Their ends say so:
    /// [`Outcome::OpenAtEnd`], or [`Outcome::Killed`] once a fatal signal
    /// is completing the trace.
    pub fn close_open<S: Sink + ?Sized>(
        &mut self,
        mono_ns: u64,
        cx: &mut DecodeContext,
        sink: &mut S,
    ) {
        let ts_ns = cx.time.to_epoch_ns(mono_ns);
        let outcome = if crate::signals::fatal_signal().is_some() {
            Outcome::Killed
        } else {
            Outcome::OpenAtEnd
        };
        self.end_open_above(0, ts_ns, cx.compact, Some(outcome), sink);
        self.end_async_above(0, ts_ns, Some(outcome), sink);
    }

    /// The common case of [`ThreadDecoder::decode`], taken first: an
    /// event with no payload at an `around` site without a flow, an enter
    /// below [`MAX_OPEN_SLICES`] or an exit of the innermost open slice.
    /// Decodes it as the general rules would, handing the begin or end to
    /// [`Sink::slice_begin`] or [`Sink::slice_end`], and returns true, or
    /// returns false (nothing done) for any other event.
    ///
    /// # Safety
    /// As [`ThreadDecoder::decode`].
    #[inline(always)]
    unsafe fn plain_around<S: Sink + ?Sized>(
        &mut self,
        rec: &RawEvent,
        kind: Kind,
        cx: &mut DecodeContext,
        sink: &mut S,
    ) -> bool {
        let site_ptr = rec.site();
        if site_ptr.is_null() {
            return false;
        }
        // SAFETY: guaranteed by the caller.
        let site: &Site = unsafe { &*site_ptr };
        if !site.is_plain_around() {
            return false;
        }
        match kind {
            Kind::Enter if self.open.len() < MAX_OPEN_SLICES => {
                let ts_ns = cx.time.to_epoch_ns(rec.ts_ns);
                self.open.push(OpenSlice {
                    site: site_ptr,
                    begin_ns: ts_ns,
                    cpu_ns: None,
                });
                if !cx.compact {
                    sink.slice_begin(site, self.tid, ts_ns);
                }
                true
            }
            Kind::Exit if self.open.last().is_some_and(|o| o.site == site_ptr) => {
                let ts_ns = cx.time.to_epoch_ns(rec.ts_ns);
                if let Some(slice) = self.open.pop() {
                    if cx.compact {
                        end_slice(site, self.tid, &slice, ts_ns, None, true, None, sink);
                    } else {
                        sink.slice_end(site, self.tid, ts_ns);
                    }
                }
                true
            }
            _ => false,
        }
    }

    /// [`ThreadDecoder::plain_run`] compiled for `cx`'s clock and
    /// [`DecodeContext::payloads`]: the loop tests neither.
    ///
    /// # Safety
    /// As [`ThreadDecoder::decode`].
    #[inline(always)]
    pub unsafe fn run_from<R: SliceRun>(
        &mut self,
        records: &[RawEvent],
        from: usize,
        cx: &DecodeContext,
        run: &mut R,
    ) -> usize {
        let time = &cx.time;
        // SAFETY: the caller's promise.
        unsafe {
            match (time.is_tsc(), cx.payloads) {
                (true, true) => self.plain_run::<true, true, R>(records, from, time, run),
                (true, false) => self.plain_run::<true, false, R>(records, from, time, run),
                (false, true) => self.plain_run::<false, true, R>(records, from, time, run),
                (false, false) => self.plain_run::<false, false, R>(records, from, time, run),
            }
        }
    }

    /// Hands the longest run of `records` from index `from` that are the
    /// common case of `plain_around` (without payloads, at
    /// an `around` site without a flow, an enter below [`MAX_OPEN_SLICES`]
    /// or an exit of the innermost open slice) and whose stamps convert
    /// without calibration work to `run`, one loop for all of them; returns
    /// the index of the first record it did not take, which
    /// [`ThreadDecoder::decode_one`] then decodes. Not for the compact log
    /// format, which writes no begins. `TSC` must be
    /// [`Timebase::is_tsc`] of `time`; `PAYLOADS` false means no record is
    /// a payload (see [`DecodeContext::payloads`]).
    ///
    /// # Safety
    /// As [`ThreadDecoder::decode`].
    #[inline(always)]
    pub unsafe fn plain_run<const TSC: bool, const PAYLOADS: bool, R: SliceRun>(
        &mut self,
        records: &[RawEvent],
        from: usize,
        time: &Timebase,
        run: &mut R,
    ) -> usize {
        // The open-slice stack in locals: the run writes within the
        // capacity it has and sets the length once, at the end (a writer
        // that panicked in `run` would leave the stack as it was before
        // the run, which is safe; no writer's begin or end panics).
        let stack = self.open.as_mut_ptr();
        let room = self.open.capacity().min(MAX_OPEN_SLICES);
        let mut depth = self.open.len();
        let first = records.as_ptr();
        // SAFETY: `from` is at most `records.len()` (the caller's use).
        let (mut at, end) =
            unsafe { (first.add(from.min(records.len())), first.add(records.len())) };
        while at < end {
            // SAFETY: `at` is within `records`, and `follower` when below
            // `end`.
            let (rec, follower) = unsafe { (&*at, at.add(1)) };
            if PAYLOADS && follower < end && unsafe { (*follower).is_payload() } {
                break;
            }
            // Only an event's site address is one (a payload's is not).
            let Some(kind) = rec.kind() else {
                break;
            };
            let site_ptr = rec.site();
            if site_ptr.is_null() {
                break;
            }
            // SAFETY: guaranteed by the caller.
            let site: &Site = unsafe { &*site_ptr };
            if !site.is_plain_around() {
                break;
            }
            let Some(ts_ns) = time.quick_epoch_ns::<TSC>(rec.ts_ns) else {
                break;
            };
            match kind {
                Kind::Enter if depth < room => {
                    if !run.begin(site, ts_ns) {
                        break;
                    }
                    // A call that made no woven call (most do not): the
                    // next record is this site's exit, which ends the slice
                    // just begun, with nothing pushed or popped.
                    // SAFETY: `follower` is right after `rec`, in or just
                    // past `records`, whose end is `end`.
                    if let Some(exit_ts) =
                        unsafe { leaf_exit::<TSC, PAYLOADS>(rec, follower, end, time) }
                    {
                        if run.end(site, exit_ts) {
                            // SAFETY: the exit is below `end`.
                            at = unsafe { at.add(2) };
                            continue;
                        }
                    }
                    // SAFETY: below the stack's capacity.
                    unsafe {
                        stack.add(depth).write(OpenSlice {
                            site: site_ptr,
                            begin_ns: ts_ns,
                            cpu_ns: None,
                        })
                    };
                    depth += 1;
                }
                // SAFETY: `depth - 1` is an initialized entry.
                Kind::Exit if depth > 0 && unsafe { (*stack.add(depth - 1)).site } == site_ptr => {
                    if !run.end(site, ts_ns) {
                        break;
                    }
                    depth -= 1;
                }
                _ => break,
            }
            // SAFETY: below `end`, so at most `end`.
            at = unsafe { at.add(1) };
        }
        // SAFETY: entries below `depth` are initialized (the ones kept and
        // the ones written above); `OpenSlice` has no drop.
        unsafe { self.open.set_len(depth) };
        // SAFETY: both within `records`.
        unsafe { at.offset_from(first) as usize }
    }

    /// Decodes `records`, in order, into `sink`. The payload records that
    /// follow an event are read with it; `records` never ends between an
    /// event and its payloads (the recording thread publishes them together).
    /// Runs of the common case go through [`ThreadDecoder::plain_run`], one
    /// loop; every other event through [`ThreadDecoder::decode_one`], which
    /// decodes any record the same way.
    ///
    /// # Safety
    /// Every record's site address must point to a live [`Site`] (the C ABI
    /// contract: sites are constants that outlive the program's events).
    pub unsafe fn decode<S: Sink + ?Sized>(
        &mut self,
        records: &[RawEvent],
        cx: &mut DecodeContext,
        sink: &mut S,
    ) {
        let mut next = 0;
        while next < records.len() {
            if !cx.compact {
                let tid = self.tid;
                let mut run = SinkRun {
                    sink: &mut *sink,
                    tid,
                };
                // SAFETY: the caller's promise.
                next = unsafe { self.run_from(records, next, cx, &mut run) };
                if next == records.len() {
                    break;
                }
            }
            // SAFETY: the caller's promise.
            next = unsafe { self.decode_one(records, next, cx, sink) };
        }
    }

    /// Decodes the record at `records[at]` and the payloads that follow it
    /// (see [`ThreadDecoder::decode`]); returns the index after them.
    ///
    /// # Safety
    /// As [`ThreadDecoder::decode`].
    #[inline(always)]
    pub unsafe fn decode_one<S: Sink + ?Sized>(
        &mut self,
        records: &[RawEvent],
        at: usize,
        cx: &mut DecodeContext,
        sink: &mut S,
    ) -> usize {
        let rec = &records[at];
        let mut next = at + 1;
        // A payload not directly after an event, or zeroed memory.
        let Some(kind) = rec.kind() else {
            return next;
        };
        if !records.get(next).is_some_and(RawEvent::is_payload) {
            // SAFETY: guaranteed by the caller.
            if unsafe { self.plain_around(rec, kind, cx, sink) } {
                return next;
            }
        }
        let mut extras = Extras::default();
        while let Some(follower) = records.get(next).filter(|r| r.is_payload()) {
            if let Some(payload) = Payload::from_record(follower) {
                extras.add(payload);
            }
            next += 1;
        }
        let site_ptr = rec.site();
        if site_ptr.is_null() {
            return next;
        }
        // SAFETY: guaranteed by the caller.
        let site: &Site = unsafe { &*site_ptr };
        let ts_ns = cx.time.to_epoch_ns(rec.ts_ns);
        let tid = self.tid;
        let unwound = extras.unwound;
        let emit = |sink: &mut S, phase: Phase| {
            let event = TraceEvent {
                site,
                tid,
                ts_ns,
                phase,
            };
            match phase {
                Phase::AsyncEnd(_) if unwound => sink.ended(&event, Outcome::Raised),
                _ => sink.event(&event),
            }
        };
        let flow = flow_dir(site.flow_raw(), kind).map(|dir| {
            let id = cx.next_flow(site.scope().unwrap_or(b"flow"), dir);
            match dir {
                FlowDir::Out => Phase::FlowStart(id),
                FlowDir::In => Phase::FlowEnd(id),
            }
        });
        // At an exit the flow is written while the slice is still open.
        if let (Some(phase), Kind::Exit) = (flow, kind) {
            emit(sink, phase);
        }
        match (site.pointcut(), kind) {
            (Pointcut::Around, Kind::Enter) => {
                if self.open.len() >= MAX_OPEN_SLICES {
                    sink.misuse(Misuse::TooManyOpenSlices, site);
                    self.end_open_above(MAX_OPEN_SLICES / 2, ts_ns, cx.compact, None, sink);
                }
                self.open.push(OpenSlice {
                    site: site_ptr,
                    begin_ns: ts_ns,
                    cpu_ns: extras.usage.map(|(cpu_ns, _)| cpu_ns),
                });
                if !cx.compact {
                    emit(sink, Phase::Begin);
                }
            }
            (Pointcut::Around, Kind::Exit) => {
                match self.open.iter().rposition(|o| o.site == site_ptr) {
                    Some(at) => {
                        if at + 1 != self.open.len() {
                            sink.misuse(Misuse::UnbalancedExit, site);
                        }
                        // Slices opened above this one and never closed
                        // (a longjmp out of them) end here too, with the
                        // same usage reading.
                        while let Some(slice) = self.open.pop() {
                            // SAFETY: pushed from a record above, so it
                            // satisfies the same contract.
                            let inner: &Site = unsafe { &*slice.site };
                            end_slice(
                                inner,
                                tid,
                                &slice,
                                ts_ns,
                                extras.usage,
                                cx.compact,
                                // Only the function the exit is of
                                // unwound; slices above it were left
                                // by longjmp.
                                (extras.unwound && self.open.len() == at)
                                    .then_some(Outcome::Raised),
                                sink,
                            );
                            if self.open.len() == at {
                                break;
                            }
                        }
                    }
                    None => sink.misuse(Misuse::ExitWithoutEnter, site),
                }
            }
            (Pointcut::Before, Kind::Enter) | (Pointcut::After, Kind::Exit) => {
                emit(sink, Phase::Instant)
            }
            (Pointcut::AroundAsync, Kind::Enter) => {
                let id = match (extras.async_id, extras.sequence) {
                    (Some(id), _) => id,
                    (None, Some(n)) => cx.sequence_id(site_ptr, n),
                    (None, None) => {
                        let id = next_async_id();
                        if self.open_async.len() >= MAX_OPEN_SLICES {
                            sink.misuse(Misuse::TooManyOpenSlices, site);
                            self.end_async_above(MAX_OPEN_SLICES / 2, ts_ns, None, sink);
                        }
                        self.open_async.push((site_ptr, id));
                        id
                    }
                };
                emit(sink, Phase::AsyncBegin(id));
            }
            (Pointcut::AroundAsync, Kind::Exit) => match (extras.async_id, extras.sequence) {
                (Some(id), _) => emit(sink, Phase::AsyncEnd(id)),
                (None, Some(n)) => emit(sink, Phase::AsyncEnd(cx.sequence_id(site_ptr, n))),
                (None, None) => match self.open_async.iter().rposition(|&(p, _)| p == site_ptr) {
                    Some(at) => {
                        let (_, id) = self.open_async.remove(at);
                        emit(sink, Phase::AsyncEnd(id));
                    }
                    None => sink.misuse(Misuse::ExitWithoutEnter, site),
                },
            },
            (Pointcut::BeforeAsync, Kind::Enter) | (Pointcut::AfterAsync, Kind::Exit) => {
                let id = extras.async_id.unwrap_or_else(next_async_id);
                emit(sink, Phase::AsyncInstant(id));
            }
            // The other half of a one-sided pointcut: nothing to write.
            (Pointcut::Before | Pointcut::BeforeAsync, Kind::Exit)
            | (Pointcut::After | Pointcut::AfterAsync, Kind::Enter) => {}
        }
        // At an enter the flow is written once the slice is open.
        if let (Some(phase), Kind::Enter) = (flow, kind) {
            emit(sink, phase);
        }
        next
    }
}

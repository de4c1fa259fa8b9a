//! Clocks used by the runtime.
//!
//! Events are stamped with the event clock (see [`stamp`] below): the TSC,
//! converted to `CLOCK_MONOTONIC` on the writer thread, or `CLOCK_MONOTONIC`
//! itself (read through the vDSO, so it is not a system call on Linux).
//! Either way the trace's time base is the monotonic clock. The trace wants
//! microseconds since the Unix epoch, so the runtime captures one
//! `(CLOCK_REALTIME, CLOCK_MONOTONIC)` pair when it starts and converts each
//! monotonic stamp with
//! `epoch_ns = realtime0 + (mono - mono0)`. Later wall-clock adjustments
//! (NTP steps) therefore never reorder events of one trace.

use std::mem::MaybeUninit;

/// Nanoseconds on `clock`.
#[inline(always)]
pub(crate) fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = MaybeUninit::<libc::timespec>::uninit();
    // SAFETY: `ts` points to writable memory for one timespec; the clocks
    // used (monotonic, real time, the calling thread's CPU time) are always
    // available on Linux, so the call cannot fail and checking it would
    // only cost the hot path.
    let ts = unsafe {
        libc::clock_gettime(clock, ts.as_mut_ptr());
        ts.assume_init()
    };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// Monotonic time in nanoseconds. This is the only clock read on the hot path.
#[inline(always)]
pub fn now_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// Wall-clock time in nanoseconds since the Unix epoch.
pub fn realtime_ns() -> u64 {
    read(libc::CLOCK_REALTIME)
}

/// One pairing of the monotonic and the wall clock, taken at start-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Epoch {
    /// `CLOCK_MONOTONIC` at the moment of capture, in ns.
    pub mono0_ns: u64,
    /// `CLOCK_REALTIME` at the same moment, in ns since the Unix epoch.
    pub real0_ns: u64,
}

impl Epoch {
    /// Captures the pair now. The monotonic clock is read on both sides of
    /// the wall clock and averaged, which halves the pairing error.
    pub fn capture() -> Epoch {
        let before = now_ns();
        let real0_ns = realtime_ns();
        let after = now_ns();
        Epoch {
            mono0_ns: before + (after.saturating_sub(before)) / 2,
            real0_ns,
        }
    }

    /// An epoch for tests: monotonic `mono0_ns` corresponds to wall `real0_ns`.
    pub const fn new(mono0_ns: u64, real0_ns: u64) -> Epoch {
        Epoch { mono0_ns, real0_ns }
    }

    /// Converts a monotonic stamp into ns since the Unix epoch. Stamps taken a
    /// little before the capture (the very first event) convert correctly too.
    #[inline]
    pub fn to_epoch_ns(&self, mono_ns: u64) -> u64 {
        let delta = mono_ns.wrapping_sub(self.mono0_ns) as i64;
        self.real0_ns.wrapping_add_signed(delta)
    }
}

// ---------------------------------------------------------------------------
// The event clock: CLOCK_MONOTONIC or the TSC
// ---------------------------------------------------------------------------
//
// Records are stamped by [`stamp`]: in nanoseconds of `CLOCK_MONOTONIC`, or,
// with `clock=tsc` (the default where the CPU's time stamp counter is
// invariant), in TSC ticks read by `rdtsc`, which costs a fraction of a
// `clock_gettime`. Ticks become nanoseconds on the writer thread, never on
// the hot path: [`Timebase`] keeps calibration points, pairs of
// (`rdtsc`, `CLOCK_MONOTONIC`) read together, one when the runtime starts,
// then one before each batch of records is formatted (at most one per
// millisecond), one whenever a stamp later than the newest point is
// converted, and one at the end. A stamp between two points is
// interpolated linearly between them; every stamp converted lies before
// the newest point, so stamps are interpolated, not extrapolated, and
// converted stamps keep their order. Written timestamps
// stay on the monotonic clock's time base, paired once with the wall clock
// ([`Epoch`]), so traces of processes on one host line up whatever clock
// each used.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, Ordering};

/// The clock the runtime stamps records with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockSource {
    /// `CLOCK_MONOTONIC` through the vDSO.
    Monotonic,
    /// The time stamp counter (`rdtsc`), calibrated against
    /// `CLOCK_MONOTONIC`.
    Tsc,
}

impl ClockSource {
    /// The option value naming this clock.
    pub fn word(self) -> &'static str {
        match self {
            ClockSource::Monotonic => "monotonic",
            ClockSource::Tsc => "tsc",
        }
    }
}

const UNDECIDED: u8 = 0;
const MODE_MONOTONIC: u8 = 1;
const MODE_TSC: u8 = 2;

/// The event clock, decided on the first stamp of the process.
static MODE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// Whether this CPU's TSC can stamp events: x86-64 with `constant_tsc`
/// (constant rate whatever the frequency) and `nonstop_tsc` (running in
/// every sleep state) in `/proc/cpuinfo`'s flags.
pub fn tsc_is_invariant() -> bool {
    cfg!(target_arch = "x86_64")
        && std::fs::read_to_string("/proc/cpuinfo")
            .is_ok_and(|text| cpuinfo_has_invariant_tsc(&text))
}

/// Whether the first `flags` line of `cpuinfo` text lists both
/// `constant_tsc` and `nonstop_tsc`.
pub fn cpuinfo_has_invariant_tsc(cpuinfo: &str) -> bool {
    cpuinfo
        .lines()
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == "flags").then_some(value)
        })
        .is_some_and(|flags| {
            let has = |w: &str| flags.split_whitespace().any(|f| f == w);
            has("constant_tsc") && has("nonstop_tsc")
        })
}

/// Decides the event clock from `wanted` (`None`: the default), once per
/// process; later calls return the clock decided first. A TSC asked for
/// on a CPU without an invariant one gives the monotonic clock and a
/// message for stderr.
pub fn decide(wanted: Option<ClockSource>) -> (ClockSource, Option<String>) {
    let current = MODE.load(Ordering::Relaxed);
    if current != UNDECIDED {
        return (mode_source(current), None);
    }
    let invariant = tsc_is_invariant();
    let (source, note) = match wanted {
        None if invariant => (ClockSource::Tsc, None),
        None | Some(ClockSource::Monotonic) => (ClockSource::Monotonic, None),
        Some(ClockSource::Tsc) if invariant => (ClockSource::Tsc, None),
        Some(ClockSource::Tsc) => (
            ClockSource::Monotonic,
            Some(
                "perfflow: clock=tsc: this CPU has no invariant TSC (x86-64 with constant_tsc \
                 and nonstop_tsc); events are stamped with CLOCK_MONOTONIC"
                    .to_string(),
            ),
        ),
    };
    let mode = match source {
        ClockSource::Tsc => MODE_TSC,
        ClockSource::Monotonic => MODE_MONOTONIC,
    };
    match MODE.compare_exchange(UNDECIDED, mode, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => (source, note),
        Err(other) => (mode_source(other), None),
    }
}

fn mode_source(mode: u8) -> ClockSource {
    if mode == MODE_TSC {
        ClockSource::Tsc
    } else {
        ClockSource::Monotonic
    }
}

/// The event clock of this process (deciding it from the options if no
/// event has yet).
pub fn source() -> ClockSource {
    match MODE.load(Ordering::Relaxed) {
        UNDECIDED => decide_from_options(),
        mode => mode_source(mode),
    }
}

/// Reads the time stamp counter.
#[inline(always)]
pub fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc exists on every x86-64 CPU and has no preconditions.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        now_ns()
    }
}

/// The stamp of an event now, on the event clock: TSC ticks or monotonic
/// nanoseconds. One relaxed load and a predictable branch before the read.
#[inline(always)]
pub fn stamp() -> u64 {
    // The TSC is tested first: one comparison before its read.
    let mode = MODE.load(Ordering::Relaxed);
    if mode == MODE_TSC {
        rdtsc()
    } else if mode == MODE_MONOTONIC {
        now_ns()
    } else {
        stamp_first()
    }
}

/// The first stamp of the process: decides the clock from the options.
#[cold]
#[inline(never)]
fn stamp_first() -> u64 {
    decide_from_options();
    stamp()
}

fn decide_from_options() -> ClockSource {
    let (options, _) = crate::options::Options::from_env();
    // The runtime's start prints the options' warnings; the clock's own
    // note goes out here, once.
    let (source, note) = decide(options.clock);
    if let Some(note) = note {
        crate::shield::stderr_line(format_args!("{note}"));
    }
    source
}

/// One calibration point: the TSC and `CLOCK_MONOTONIC` read together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    /// TSC ticks.
    pub tsc: u64,
    /// `CLOCK_MONOTONIC` ns.
    pub mono_ns: u64,
}

impl Point {
    /// Reads both clocks: `rdtsc` between two readings of the monotonic
    /// clock, paired with their middle. Up to eight tries keep the
    /// tightest pair (a preempted try is wide); the pairing error is at
    /// most half the width returned with it, in ns.
    pub fn read() -> (Point, u64) {
        let mut best: Option<(u64, Point)> = None;
        for _ in 0..8 {
            let a = now_ns();
            let tsc = rdtsc();
            let b = now_ns();
            let width = b.saturating_sub(a);
            let p = Point {
                tsc,
                mono_ns: a + width / 2,
            };
            if best.is_none_or(|(w, _)| width < w) {
                best = Some((width, p));
            }
            if width < 200 {
                break;
            }
        }
        let (width, p) = best.expect("eight readings");
        (p, width)
    }
}

/// Most calibration points kept: the oldest are dropped (stamps older than
/// the oldest kept point are extrapolated from the oldest segment).
pub const MAX_POINTS: usize = 4096;

/// Least time between two calibration points taken before formatting.
pub const MIN_POINT_SPACING_NS: u64 = 1_000_000;

/// Converts event stamps into ns since the Unix epoch.
#[derive(Debug, Clone)]
pub struct Timebase {
    /// The wall-clock pairing of the monotonic clock.
    pub epoch: Epoch,
    /// TSC calibration points, oldest first; empty with the monotonic
    /// clock.
    points: VecDeque<Point>,
    tsc: bool,
    /// Points taken in all (kept or dropped).
    taken: u64,
    /// The widest pairing of a point taken (twice its largest error), ns.
    widest_ns: u64,
    /// Tick of the newest point (`u64::MAX` while there is none).
    newest_tsc: u64,
    /// The segment last used.
    cached: Option<Segment>,
    /// The part of the cached segment at or after its first point and
    /// before the newest point, with that first point in epoch ns: what
    /// [`Timebase::to_epoch_ns`] converts with one multiply (nearly every
    /// stamp of a batch lies there).
    fast: Fast,
}

/// Ticks `from..from + span` convert to `epoch_ns + (tick - from) * mult`,
/// the product rounded from 32.32 fixed point (and within 64 bits, see
/// [`Fast::window`]). Empty (`span == 0`) when no
/// segment is cached. A span rather than an end, so that a tick is tested
/// with one comparison of the `tick - from` the conversion needs anyway.
#[derive(Debug, Clone, Copy, Default)]
struct Fast {
    from: u64,
    span: u64,
    epoch_ns: u64,
    mult: u64,
    /// What the product is rounded with: the half, plus the fraction of a
    /// ns that `from` lies past the segment's first point.
    round: u64,
}

/// Largest [`Fast::round`]: a fraction below 1 plus the half.
const MAX_ROUND: u64 = (1 << MULT_SHIFT) - 1 + (1 << (MULT_SHIFT - 1));

impl Fast {
    /// The window of segment `seg` from tick `from` (at or after the
    /// segment's first point) to the newest point: it converts a tick as
    /// [`Timebase::to_mono_ns`] does, `seg.mono_ns + ((tick - seg.tsc) *
    /// mult + half) >> MULT_SHIFT`, split at `from` into a whole part
    /// (in `epoch_ns`) and a fraction (in `round`), all in 64 bits.
    fn window(seg: Segment, from: u64, newest_tsc: u64, epoch: Epoch) -> Fast {
        let ahead = u128::from(from - seg.tsc) * u128::from(seg.mult);
        let fraction = (ahead as u64) & ((1 << MULT_SHIFT) - 1);
        let whole = u64::try_from(ahead >> MULT_SHIFT)
            .ok()
            .and_then(|w| seg.mono_ns.checked_add(w));
        let Some(mono_ns) = whole else {
            // Beyond any real clock: the slow path clamps.
            return Fast::default();
        };
        Fast {
            from,
            span: seg
                .to
                .min(newest_tsc)
                .saturating_sub(from)
                .min(Fast::most_ticks(seg.mult)),
            epoch_ns: epoch.to_epoch_ns(mono_ns),
            mult: seg.mult,
            round: fraction + (1 << (MULT_SHIFT - 1)),
        }
    }

    /// Most ticks a window of slope `mult` converts in 64-bit arithmetic:
    /// `ticks * mult + round` stays below 2^64 (about 4 s of ticks at 0.4
    /// ns a tick). A stamp further on takes the slow path, which moves the
    /// window there.
    fn most_ticks(mult: u64) -> u64 {
        (u64::MAX - MAX_ROUND).checked_div(mult).unwrap_or(u64::MAX)
    }
}

/// The line between two calibration points.
#[derive(Debug, Clone, Copy)]
struct Segment {
    /// Ticks it converts: `from..to`.
    from: u64,
    to: u64,
    /// Its first point.
    tsc: u64,
    mono_ns: u64,
    /// Ns per tick in 32.32 fixed point: integer arithmetic converts a
    /// tick in a handful of instructions, within 1 ns over 2^32 ticks.
    mult: u64,
}

/// Bits after the point of [`Segment::mult`].
const MULT_SHIFT: u32 = 32;

impl Timebase {
    /// Stamps are `CLOCK_MONOTONIC` ns.
    pub fn monotonic(epoch: Epoch) -> Timebase {
        Timebase {
            epoch,
            points: VecDeque::new(),
            tsc: false,
            taken: 0,
            widest_ns: 0,
            newest_tsc: u64::MAX,
            cached: None,
            fast: Fast::default(),
        }
    }

    /// Stamps are TSC ticks; `first` is the calibration point at start.
    pub fn tsc(epoch: Epoch, first: Point) -> Timebase {
        let mut t = Timebase::monotonic(epoch);
        t.tsc = true;
        t.add(first);
        t
    }

    fn add_read(&mut self) {
        let (p, width) = Point::read();
        self.widest_ns = self.widest_ns.max(width);
        self.add(p);
    }

    /// The time base for `source`, calibrated now.
    pub fn start(epoch: Epoch, source: ClockSource) -> Timebase {
        match source {
            ClockSource::Tsc => {
                let mut t = Timebase::monotonic(epoch);
                t.tsc = true;
                t.add_read();
                t
            }
            ClockSource::Monotonic => Timebase::monotonic(epoch),
        }
    }

    /// Whether stamps are TSC ticks.
    pub fn is_tsc(&self) -> bool {
        self.tsc
    }

    /// Adds a calibration point (ignored unless it is later on both clocks
    /// than the last one).
    pub fn add(&mut self, p: Point) {
        if let Some(last) = self.points.back() {
            if p.tsc <= last.tsc || p.mono_ns < last.mono_ns {
                return;
            }
        }
        if self.points.len() == MAX_POINTS {
            self.points.pop_front();
        }
        self.points.push_back(p);
        self.newest_tsc = p.tsc;
        self.taken += 1;
        self.cached = None;
        self.fast = Fast::default();
    }

    /// Takes a calibration point now if the last one is older than
    /// [`MIN_POINT_SPACING_NS`] or the only one (TSC clock only). Called
    /// before records are formatted, so they lie before the newest point.
    pub fn calibrate(&mut self) {
        if !self.tsc {
            return;
        }
        let due = match (self.points.len(), self.points.back()) {
            (0 | 1, _) => true,
            (_, Some(last)) => now_ns().saturating_sub(last.mono_ns) >= MIN_POINT_SPACING_NS,
            _ => true,
        };
        if due {
            self.add_read();
        }
    }

    /// The line through the two points around `tick` (the first or last
    /// two for a tick outside them), and the ticks it is used for.
    fn segment(&self, tick: u64) -> Segment {
        let n = self.points.len();
        if n < 2 {
            // One point: 1 ns per tick until a second one exists (never
            // used for formatting, which calibrates first).
            let p = self
                .points
                .front()
                .copied()
                .unwrap_or(Point { tsc: 0, mono_ns: 0 });
            return Segment {
                from: 0,
                to: u64::MAX,
                tsc: p.tsc,
                mono_ns: p.mono_ns,
                mult: 1 << MULT_SHIFT,
            };
        }
        // The first point after `tick`, clamped so that both ends exist.
        let i = self
            .points
            .partition_point(|p| p.tsc <= tick)
            .clamp(1, n - 1);
        let (a, b) = (self.points[i - 1], self.points[i]);
        Segment {
            from: if i == 1 { 0 } else { a.tsc },
            to: if i == n - 1 { u64::MAX } else { b.tsc },
            tsc: a.tsc,
            mono_ns: a.mono_ns,
            mult: ((u128::from(b.mono_ns - a.mono_ns) << MULT_SHIFT) / u128::from(b.tsc - a.tsc))
                .min(u128::from(u64::MAX)) as u64,
        }
    }

    /// Monotonic ns of stamp `stamp`.
    #[inline]
    pub fn to_mono_ns(&mut self, stamp: u64) -> u64 {
        if !self.tsc {
            return stamp;
        }
        if stamp >= self.newest_tsc {
            // Stamped after the newest point (a stamp taken while no batch
            // was formatted, such as a fork's): a point now, which is later
            // still, so that it is interpolated as well.
            self.add_read();
        }
        let seg = match self.cached {
            Some(seg) if seg.from <= stamp && stamp < seg.to => seg,
            _ => {
                let seg = self.segment(stamp);
                self.cached = Some(seg);
                self.fast = Fast::window(seg, seg.from.max(seg.tsc), self.newest_tsc, self.epoch);
                seg
            }
        };
        // Past the fast window of its segment (a long one, cut at
        // `Fast::most_ticks`): the window moves to start at this stamp, so
        // that the stamps after it convert quickly again.
        if stamp >= seg.tsc && stamp.wrapping_sub(self.fast.from) >= self.fast.span {
            self.fast = Fast::window(seg, stamp, self.newest_tsc, self.epoch);
        }
        // Signed: a stamp before the first point is extrapolated back.
        let delta = i128::from(stamp) - i128::from(seg.tsc);
        let half = 1i128 << (MULT_SHIFT - 1);
        let ns = i128::from(seg.mono_ns) + ((delta * i128::from(seg.mult) + half) >> MULT_SHIFT);
        ns.clamp(0, i128::from(u64::MAX)) as u64
    }

    /// Ns since the Unix epoch of stamp `stamp`.
    #[inline(always)]
    pub fn to_epoch_ns(&mut self, stamp: u64) -> u64 {
        let quick = if self.tsc {
            self.quick_epoch_ns::<true>(stamp)
        } else {
            self.quick_epoch_ns::<false>(stamp)
        };
        match quick {
            Some(ns) => ns,
            None => self.epoch_ns_cold(stamp),
        }
    }

    /// [`Timebase::to_epoch_ns`] of a stamp that needs no calibration
    /// work: every monotonic stamp, and a TSC stamp within the cached
    /// segment; `None` for any other. `TSC` must be
    /// [`Timebase::is_tsc`] (a constant, so a loop tests it once).
    #[inline(always)]
    pub fn quick_epoch_ns<const TSC: bool>(&self, stamp: u64) -> Option<u64> {
        debug_assert_eq!(TSC, self.tsc);
        if !TSC {
            return Some(self.epoch.to_epoch_ns(stamp));
        }
        let f = self.fast;
        let ticks = stamp.wrapping_sub(f.from);
        if ticks < f.span {
            // As `to_mono_ns` computes it (no clamp can apply: the stamp is
            // at or after the segment's first point), moved to the epoch.
            // In 64 bits: `span` keeps the sum below 2^64.
            let scaled = (ticks * f.mult + f.round) >> MULT_SHIFT;
            return Some(f.epoch_ns.wrapping_add(scaled));
        }
        None
    }

    /// [`Timebase::to_epoch_ns`] of a stamp outside the fast segment.
    #[cold]
    #[inline(never)]
    fn epoch_ns_cold(&mut self, stamp: u64) -> u64 {
        let mono = self.to_mono_ns(stamp);
        self.epoch.to_epoch_ns(mono)
    }

    /// The clock's record for the trace's metadata, as JSON: the source
    /// and, for the TSC, the least-squares line through the calibration
    /// points kept (ns per tick, and the monotonic ns at tick 0 of the
    /// first kept point) with the largest and root-mean-square distance of
    /// a point from it.
    pub fn metadata_json(&self) -> String {
        if !self.tsc {
            return r#"{"source":"monotonic"}"#.to_string();
        }
        let fit = fit(self.points.iter().copied());
        let mut m = serde_json::Map::new();
        m.insert("source".into(), "tsc".into());
        m.insert("points_taken".into(), self.taken.into());
        m.insert("points_kept".into(), (self.points.len() as u64).into());
        m.insert(
            "mapping".into(),
            "piecewise linear between calibration points".into(),
        );
        m.insert("pairing_width_max_ns".into(), self.widest_ns.into());
        if let Some(fit) = fit {
            m.insert("ns_per_tick".into(), fit.ns_per_tick.into());
            m.insert("tsc_ghz".into(), (1.0 / fit.ns_per_tick).into());
            m.insert("fit_first_tsc".into(), fit.first_tsc.into());
            m.insert("fit_first_monotonic_ns".into(), fit.first_mono_ns.into());
            m.insert("fit_residual_max_ns".into(), fit.residual_max_ns.into());
            m.insert("fit_residual_rms_ns".into(), fit.residual_rms_ns.into());
        }
        serde_json::Value::Object(m).to_string()
    }
}

/// A least-squares line `mono = first_mono_ns + (tsc - first_tsc) *
/// ns_per_tick` through calibration points, and how far they lie from it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// Slope.
    pub ns_per_tick: f64,
    /// Tick of the first point.
    pub first_tsc: u64,
    /// Monotonic ns of the line at `first_tsc`.
    pub first_mono_ns: f64,
    /// Largest distance of a point from the line, ns.
    pub residual_max_ns: f64,
    /// Root-mean-square distance, ns.
    pub residual_rms_ns: f64,
}

/// The least-squares line through `points` (at least two, distinct ticks).
pub fn fit(points: impl Iterator<Item = Point> + Clone) -> Option<Fit> {
    let first = points.clone().next()?;
    let xy = || {
        points.clone().map(move |p| {
            (
                (p.tsc - first.tsc) as f64,
                p.mono_ns as f64 - first.mono_ns as f64,
            )
        })
    };
    let n = xy().count() as f64;
    if n < 2.0 {
        return None;
    }
    let (mx, my) = xy().fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let (sxx, sxy) = xy().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x - mx) * (x - mx), b + (x - mx) * (y - my))
    });
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let (max, sq) = xy().fold((0.0f64, 0.0), |(m, s), (x, y)| {
        let r = y - (intercept + slope * x);
        (m.max(r.abs()), s + r * r)
    });
    Some(Fit {
        ns_per_tick: slope,
        first_tsc: first.tsc,
        first_mono_ns: first.mono_ns as f64 + intercept,
        residual_max_ns: max,
        residual_rms_ns: (sq / n).sqrt(),
    })
}

#[cfg(test)]
mod tests {
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};

    use super::*;

    #[test]
    fn an_invariant_tsc_needs_both_flags() {
        let cpu = |flags: &str| {
            format!("processor\t: 0\nflags\t\t: fpu {flags} sse2\n\nprocessor\t: 1\n")
        };
        assert!(cpuinfo_has_invariant_tsc(&cpu("constant_tsc nonstop_tsc")));
        assert!(!cpuinfo_has_invariant_tsc(&cpu("constant_tsc")));
        assert!(!cpuinfo_has_invariant_tsc(&cpu("nonstop_tsc tsc")));
        assert!(!cpuinfo_has_invariant_tsc("processor : 0\n"));
    }

    #[test]
    fn ticks_between_points_are_interpolated_and_keep_their_order() {
        let p = |tsc, mono_ns| Point { tsc, mono_ns };
        let mut t = Timebase::tsc(Epoch::new(0, 1_000), p(1_000, 10_000));
        t.add(p(3_000, 11_000)); // 0.5 ns per tick
        t.add(p(5_000, 13_000)); // 1 ns per tick
        t.add(p(4_000, 20_000)); // earlier tick: ignored
        assert_eq!(t.to_mono_ns(2_000), 10_500);
        assert_eq!(t.to_mono_ns(4_000), 12_000);
        assert_eq!(t.to_mono_ns(0), 9_500, "before the first: the first slope");
        assert_eq!(t.to_epoch_ns(3_000), 12_000);
        let mono: Vec<u64> = (0..5_000).step_by(7).map(|k| t.to_mono_ns(k)).collect();
        assert!(mono.windows(2).all(|w| w[0] <= w[1]));
        // A stamp at or after the newest point: a point is read now.
        let taken = t.taken;
        t.to_mono_ns(5_000);
        assert_eq!(t.taken, taken + 1);
    }

    #[test]
    fn the_one_multiply_conversion_matches_the_full_one() {
        // Segments of 0.3 to 2.5 ns a tick, some long enough that the
        // 64-bit conversion covers only their start (`Fast::most_ticks`).
        let mut t = Timebase::tsc(Epoch::new(7, 1_000_000), Point { tsc: 0, mono_ns: 0 });
        let (mut tick, mut ns) = (0u64, 0u64);
        let mut rng = ChaCha8Rng::seed_from_u64(0x2545_f491_4f6c_dd1d);
        let mut next = || rng.random::<u64>();
        let mut ticks = vec![0];
        for i in 0..200u64 {
            let dt = if i % 10 == 0 {
                1 << 36
            } else {
                1_000 + next() % 50_000_000
            };
            tick += dt;
            ns += dt / 10 * (3 + next() % 23) + next() % 1_000;
            t.add(Point {
                tsc: tick,
                mono_ns: ns,
            });
            ticks.push(tick);
        }
        for _ in 0..200_000 {
            // A segment, then a tick in it.
            let i = (next() % 200) as usize;
            let stamp = ticks[i] + next() % (ticks[i + 1] - ticks[i]);
            // The full computation in 128 bits, moved to the epoch; it
            // leaves a fast window that holds the stamp.
            let mono = t.to_mono_ns(stamp);
            let full = t.epoch.to_epoch_ns(mono);
            assert_eq!(t.quick_epoch_ns::<true>(stamp), Some(full), "stamp {stamp}");
            assert_eq!(t.to_epoch_ns(stamp), full, "stamp {stamp}");
        }
        // A long segment is cut: from its first tick the window does not
        // reach its middle. A stamp there moves the window, and the stamps
        // after it convert quickly, to the same values.
        for i in (0..200).step_by(10) {
            let middle = ticks[i] + (ticks[i + 1] - ticks[i]) / 2;
            t.to_epoch_ns(ticks[i]);
            assert!(t.quick_epoch_ns::<true>(ticks[i] + 1_000).is_some());
            assert_eq!(
                t.quick_epoch_ns::<true>(middle),
                None,
                "segment {i} not cut"
            );
            t.to_epoch_ns(middle);
            for k in 0..1_000u64 {
                let stamp = middle + k * 997;
                let fast = t.quick_epoch_ns::<true>(stamp);
                let mono = t.to_mono_ns(stamp);
                assert_eq!(fast, Some(t.epoch.to_epoch_ns(mono)), "stamp {stamp}");
            }
        }
    }

    #[test]
    fn the_fit_of_points_on_a_line_has_no_residual() {
        let points = (0..10u64).map(|i| Point {
            tsc: 100 + i * 3_000,
            mono_ns: 50 + i * 1_000,
        });
        let fit = fit(points).unwrap();
        assert!((fit.ns_per_tick - 1.0 / 3.0).abs() < 1e-12);
        assert!(fit.residual_max_ns < 1e-6 && fit.residual_rms_ns < 1e-6);
        assert!((fit.first_mono_ns - 50.0).abs() < 1e-6);
    }

    #[test]
    fn monotonic_stamps_are_already_nanoseconds() {
        let mut t = Timebase::monotonic(Epoch::new(100, 1_000_000));
        assert_eq!(t.to_epoch_ns(150), 1_000_050);
        assert_eq!(t.metadata_json(), r#"{"source":"monotonic"}"#);
    }
}

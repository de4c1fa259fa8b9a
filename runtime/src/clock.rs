//! Clocks used by the runtime.
//!
//! Events are stamped with `CLOCK_MONOTONIC` (read through the vDSO, so it is
//! not a system call on Linux). The trace wants microseconds since the Unix
//! epoch, so the runtime captures one `(CLOCK_REALTIME, CLOCK_MONOTONIC)` pair
//! when it starts and converts each monotonic stamp with
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

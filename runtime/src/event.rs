//! The raw event record stored on the hot path.
//!
//! One record is 16 bytes: a monotonic timestamp and the address of the
//! site, with the event kind packed into the low bits of the address (sites
//! are at least 4-byte aligned; on 64-bit targets they are 8-aligned). The
//! record carries no strings and no thread id: the thread is implied by the
//! buffer the record sits in, and everything else is read from the site when
//! the record is formatted, long after it was taken.
//!
//! # Payload records
//!
//! An event may be followed by payload records that carry numbers belonging
//! to it (the thread CPU time for `cpu-mem-usage`, an async id). A payload
//! has the kind bits `0b11` ([`PAYLOAD_BITS`]) and no site; its 16 bytes are
//! laid out as
//!
//! ```text
//! ts_ns        bits 0..=63  value `a` (64 bits)
//! tagged_site  bits 0..=1   0b11, a payload
//!              bits 2..=7   sub-kind (see `Payload`)
//!              bits 8..=63  value `b` (56 bits)
//! ```
//!
//! | sub-kind | payload | `a` | `b` |
//! |---|---|---|---|
//! | 1 | [`Payload::Usage`] | thread CPU time in ns (`CLOCK_THREAD_CPUTIME_ID`) | resident set size in KiB after an exit, 0 after an enter |
//! | 2 | [`Payload::AsyncId`] | async id chosen when recording | 0 |
//! | 3 | [`Payload::Sequence`] | the event is the n-th enter (or exit) of its site, from 0 | 0 |
//! | 4 | [`Payload::Unwound`] | 0 | 0 |
//! | 5 | [`Payload::AsyncIdUnwound`] | async id chosen when recording | 0 |
//!
//! [`Payload::Unwound`] follows an exit recorded on the way out of a woven
//! function by unwinding (a C++ exception, a forced unwind), from the
//! weaver's cleanup landing pad: the slice it ends is marked `raised`.
//! [`Payload::AsyncIdUnwound`] is both [`Payload::AsyncId`] and
//! [`Payload::Unwound`] in one record: the end of an async operation of the
//! manual async API left by an exception (a Python coroutine that raised).
//!
//! The recording thread writes an event and its payloads into the same
//! chunk and publishes them with one length store, so a reader sees all of
//! them or none. A reader takes the payload records that directly follow an
//! event as belonging to it; a payload anywhere else, and a payload of an
//! unknown sub-kind, is skipped.

use crate::site::Site;

/// Version of the raw record layout. Bump it when [`RawEvent`], the kind
/// encoding or the payload layout changes (an on-disk raw dump, if one is
/// added, starts with it). Version 2 added payload records; version 3 the
/// [`Payload::Unwound`] sub-kind; version 4 [`Payload::AsyncIdUnwound`].
pub const FORMAT_VERSION: u32 = 4;

/// Bits of the site address that hold the [`Kind`].
pub const KIND_MASK: u64 = 0b11;

/// Kind bits of a payload record (see the module documentation).
pub const PAYLOAD_BITS: u64 = 0b11;

/// What happened at a site.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// The woven function (or region) was entered.
    Enter = 1,
    /// The woven function (or region) was left.
    Exit = 2,
    // 3 ([`PAYLOAD_BITS`]) marks a payload record, which belongs to the event
    // before it and is read through [`Payload::from_record`].
    // 0 never appears in a written record, so zeroed memory decodes as junk
    // that the decoder skips.
}

impl Kind {
    /// Decodes the kind bits of a record; `None` for payload records and for
    /// the unused value 0.
    #[inline]
    pub fn from_bits(bits: u64) -> Option<Kind> {
        match bits & KIND_MASK {
            1 => Some(Kind::Enter),
            2 => Some(Kind::Exit),
            _ => None,
        }
    }
}

/// One recorded event. `#[repr(C)]` so that a raw dump is readable from C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct RawEvent {
    /// The event clock's stamp ([`crate::clock::stamp`]): `CLOCK_MONOTONIC`
    /// in nanoseconds, or TSC ticks with `clock=tsc`.
    pub ts_ns: u64,
    /// Site address with [`Kind`] in the low [`KIND_MASK`] bits.
    pub tagged_site: u64,
}

impl RawEvent {
    /// Packs an event. `site` must be aligned to at least 4 bytes (the C ABI
    /// entry points drop misaligned pointers before getting here).
    #[inline(always)]
    pub fn new(ts_ns: u64, site: *const Site, kind: Kind) -> RawEvent {
        RawEvent {
            ts_ns,
            tagged_site: (site as usize as u64) | kind as u64,
        }
    }

    /// The site address stored in the record.
    #[inline]
    pub fn site(&self) -> *const Site {
        (self.tagged_site & !KIND_MASK) as usize as *const Site
    }

    /// The kind stored in the record, `None` for payload records and for
    /// zeroed memory.
    #[inline]
    pub fn kind(&self) -> Option<Kind> {
        Kind::from_bits(self.tagged_site)
    }

    /// True for a payload record (whatever its sub-kind).
    #[inline]
    pub fn is_payload(&self) -> bool {
        self.tagged_site & KIND_MASK == PAYLOAD_BITS
    }
}

/// Largest value the 56-bit `b` field of a payload holds.
pub const PAYLOAD_B_MAX: u64 = (1 << 56) - 1;

const SUB_KIND_SHIFT: u32 = 2;
const SUB_KIND_MASK: u64 = 0b11_1111;
const B_SHIFT: u32 = 8;

const SUB_USAGE: u64 = 1;
const SUB_ASYNC_ID: u64 = 2;
const SUB_SEQUENCE: u64 = 3;
const SUB_UNWOUND: u64 = 4;
const SUB_ASYNC_ID_UNWOUND: u64 = 5;

/// Numbers that follow an event in a payload record (layout in the module
/// documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload {
    /// `cpu-mem-usage`: the thread's CPU time when the event was stamped and,
    /// after an exit, the process's resident set size (0 after an enter or
    /// when it could not be read). Values above [`PAYLOAD_B_MAX`] are stored
    /// as that maximum.
    Usage {
        /// `CLOCK_THREAD_CPUTIME_ID` in nanoseconds.
        cpu_ns: u64,
        /// Resident set size in KiB.
        rss_kib: u64,
    },
    /// The async id the event belongs to, chosen when it was recorded (the
    /// manual async API), so begin and end pair across threads.
    AsyncId(u64),
    /// The event is the n-th enter, or the n-th exit, of its site (counted
    /// from 0 per site and per kind): the n-th exit ends the n-th enter.
    Sequence(u64),
    /// The exit it follows was taken by unwinding out of the function (an
    /// exception), not by a return.
    Unwound,
    /// An [`Payload::AsyncId`] exit that was also [`Payload::Unwound`]: the
    /// async operation was left by an exception.
    AsyncIdUnwound(u64),
}

impl Payload {
    /// The payload as a record.
    #[inline(always)]
    pub fn record(self) -> RawEvent {
        let (sub, a, b) = match self {
            Payload::Usage { cpu_ns, rss_kib } => (SUB_USAGE, cpu_ns, rss_kib.min(PAYLOAD_B_MAX)),
            Payload::AsyncId(id) => (SUB_ASYNC_ID, id, 0),
            Payload::Sequence(n) => (SUB_SEQUENCE, n, 0),
            Payload::Unwound => (SUB_UNWOUND, 0, 0),
            Payload::AsyncIdUnwound(id) => (SUB_ASYNC_ID_UNWOUND, id, 0),
        };
        RawEvent {
            ts_ns: a,
            tagged_site: (b << B_SHIFT) | (sub << SUB_KIND_SHIFT) | PAYLOAD_BITS,
        }
    }

    /// Reads a payload record; `None` for an event record, zeroed memory or
    /// a sub-kind this version does not know.
    #[inline]
    pub fn from_record(rec: &RawEvent) -> Option<Payload> {
        if !rec.is_payload() {
            return None;
        }
        let a = rec.ts_ns;
        let b = rec.tagged_site >> B_SHIFT;
        match (rec.tagged_site >> SUB_KIND_SHIFT) & SUB_KIND_MASK {
            SUB_USAGE => Some(Payload::Usage {
                cpu_ns: a,
                rss_kib: b,
            }),
            SUB_ASYNC_ID => Some(Payload::AsyncId(a)),
            SUB_SEQUENCE => Some(Payload::Sequence(a)),
            SUB_UNWOUND => Some(Payload::Unwound),
            SUB_ASYNC_ID_UNWOUND => Some(Payload::AsyncIdUnwound(a)),
            _ => None,
        }
    }
}

/// True when `site` can be packed into a record: non-null and aligned so the
/// kind bits are free.
///
/// One test for both, on the entry points' hot path: rotating the kind bits
/// to the top leaves an aligned address below `u64::MAX >> KIND_BITS`, and
/// subtracting one sends null to `u64::MAX`, while any kind bit set keeps
/// the value at or above `u64::MAX >> KIND_BITS`.
#[inline(always)]
pub fn packable(site: *const Site) -> bool {
    const KIND_BITS: u32 = KIND_MASK.count_ones();
    const _: () = assert!(KIND_MASK == (1 << KIND_BITS) - 1);
    let addr = site as usize as u64;
    addr.rotate_right(KIND_BITS).wrapping_sub(1) < u64::MAX >> KIND_BITS
}

//! The raw event record stored on the hot path.
//!
//! One record is 16 bytes: a monotonic timestamp and the address of the
//! site, with the event kind packed into the low bits of the address (sites
//! are at least 4-byte aligned; on 64-bit targets they are 8-aligned). The
//! record carries no strings and no thread id: the thread is implied by the
//! buffer the record sits in, and everything else is read from the site when
//! the record is formatted, long after it was taken.

use crate::site::Site;

/// Version of the raw record layout. Bump it when [`RawEvent`] or the kind
/// encoding changes (an on-disk raw dump, if one is added, starts with it).
pub const FORMAT_VERSION: u32 = 1;

/// Bits of the site address that hold the [`Kind`].
pub const KIND_MASK: u64 = 0b11;

/// What happened at a site.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// The woven function (or region) was entered.
    Enter = 1,
    /// The woven function (or region) was left.
    Exit = 2,
    // 3 is reserved for extension records: per-event metadata (counters,
    // flow ids, user arguments) will be stored as an `Extension` record whose
    // site bits point at a side table entry, following the event it extends.
    // 0 never appears in a written record, so zeroed memory decodes as junk
    // that the decoder skips.
}

impl Kind {
    /// Decodes the kind bits of a record; `None` for reserved values.
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
    /// `CLOCK_MONOTONIC` in nanoseconds.
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

    /// The kind stored in the record, `None` for reserved bit patterns.
    #[inline]
    pub fn kind(&self) -> Option<Kind> {
        Kind::from_bits(self.tagged_site)
    }
}

/// True when `site` can be packed into a record: non-null and aligned so the
/// kind bits are free.
#[inline(always)]
pub fn packable(site: *const Site) -> bool {
    let addr = site as usize;
    addr != 0 && (addr as u64) & KIND_MASK == 0
}

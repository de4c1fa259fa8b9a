//! Sites: the constant descriptor of one woven function or region.
//!
//! [`Site`] mirrors `struct perfflow_site` from `include/perfflow.h`
//! byte for byte. The weaver emits one per woven function as a constant, and
//! the runtime stores only its address per event. The string ABI inherited
//! from PerfFlowAspect (`perfflow_weave_before/after`) and the manual region
//! API and the manual async API have no such constant, so they are mapped
//! onto sites here by *interning*: the first call with a given set of strings
//! builds a site, leaks it (it must outlive every record that points at it),
//! and later calls find it again — first in a small per-thread cache keyed by
//! the string pointers (no lock), then in a global map (locked, cold).
//!
//! An interned site is an [`Interned`]: the site followed by two counters
//! that number its enters and exits. An upstream `around_async` call may
//! begin on one thread and end on another; the n-th exit ends the n-th enter,
//! and the counters give each its n without a lock.
//!
//! # Owned copies of woven sites
//!
//! A woven site lives in the image of the library that holds the woven
//! function, and that library may be `dlclose`d (unmapped) long before the
//! writer formats its records, or replaced by another library loaded at the
//! same address. So the runtime never records the address of a woven site:
//! the first event of a site copies it, strings included, into memory the
//! runtime owns for the rest of the process ([`owned`]), and records carry
//! the copy's address. The site points at a writable word of its own library
//! (`struct perfflow_site::copy`, emitted by the weaver) where the copy's
//! address is kept, so a later event finds it with one load; a library
//! loaded again, at the same address or not, brings fresh zeroed words and
//! copies its sites anew. Copies are shared by content, so loading and
//! unloading a library in a loop does not grow memory. Copies are made under
//! the intern lock (cold, once per site and load).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::demangle;

/// Value of `PERFFLOW_SITE_ABI_VERSION` this runtime writes and understands.
/// Version 2 added the `copy` word; version 1 sites (without it) are still
/// read, and recorded by address as before.
pub const SITE_ABI_VERSION: u32 = 2;

/// True for the site layouts this runtime reads.
pub fn known_version(version: u32) -> bool {
    version == 1 || version == SITE_ABI_VERSION
}

/// `enum perfflow_pointcut`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Pointcut {
    /// Begin at entry, end at exit.
    Around = 0,
    /// Instant at entry only.
    Before = 1,
    /// Instant at exit only.
    After = 2,
    /// Async begin at entry, async end at exit.
    AroundAsync = 3,
    /// Async instant at entry only.
    BeforeAsync = 4,
    /// Async instant at exit only.
    AfterAsync = 5,
}

impl Pointcut {
    /// Decodes the C value; unknown values read as `Around`, the default
    /// pointcut of an annotation.
    pub fn from_raw(raw: u32) -> Pointcut {
        match raw {
            1 => Pointcut::Before,
            2 => Pointcut::After,
            3 => Pointcut::AroundAsync,
            4 => Pointcut::BeforeAsync,
            5 => Pointcut::AfterAsync,
            _ => Pointcut::Around,
        }
    }

    /// Parses an upstream pointcut string (`"around"`, `"before_async"`, ...).
    /// `force_async` (the upstream `async` argument) turns a sync pointcut
    /// into its async form. Missing or unknown strings mean `around`.
    pub fn parse(text: Option<&[u8]>, force_async: bool) -> Pointcut {
        let text = text.unwrap_or(b"around");
        let lower: Vec<u8> = text.iter().map(u8::to_ascii_lowercase).collect();
        let (base, is_async) = match lower.strip_suffix(b"_async") {
            Some(base) => (base, true),
            None => (&lower[..], false),
        };
        let is_async = is_async || force_async;
        match (base, is_async) {
            (b"before", false) => Pointcut::Before,
            (b"after", false) => Pointcut::After,
            (b"before", true) => Pointcut::BeforeAsync,
            (b"after", true) => Pointcut::AfterAsync,
            (_, true) => Pointcut::AroundAsync,
            _ => Pointcut::Around,
        }
    }

    /// True for the three `_async` pointcuts.
    pub fn is_async(self) -> bool {
        matches!(
            self,
            Pointcut::AroundAsync | Pointcut::BeforeAsync | Pointcut::AfterAsync
        )
    }
}

/// `enum perfflow_flow`. The decoder turns it into Chrome `s`/`f` flow
/// events (see `decode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Flow {
    /// No flow.
    None = 0,
    /// Flow ends here.
    In = 1,
    /// Flow starts here.
    Out = 2,
    /// Flow ends at entry and starts at exit.
    InOut = 3,
    /// Flow starts at entry and ends at exit.
    OutIn = 4,
}

impl Flow {
    /// Parses an upstream flow string; `"NA"`, empty or unknown mean `None`.
    pub fn parse(text: Option<&[u8]>) -> Flow {
        let lower: Vec<u8> = text
            .unwrap_or(b"")
            .iter()
            .map(u8::to_ascii_lowercase)
            .collect();
        match &lower[..] {
            b"in" => Flow::In,
            b"out" => Flow::Out,
            b"inout" => Flow::InOut,
            b"outin" => Flow::OutIn,
            _ => Flow::None,
        }
    }
}

/// `struct perfflow_site`.
///
/// Invariant: every string pointer is null or points to a NUL-terminated
/// string that lives at least as long as the site. Rust code can only build
/// sites through [`Site::new`] (from `'static` strings) or by interning or
/// copying, and C code promises it through the ABI, so the accessors below
/// are safe. A version 1 site ends before `copy`, which is only read after
/// the version says it is there.
#[derive(Debug)]
#[repr(C)]
pub struct Site {
    abi_version: u32,
    pointcut: u32,
    flow: u32,
    line: u32,
    name: *const c_char,
    file: *const c_char,
    scope: *const c_char,
    symbol: *const c_char,
    /// Writable word of the site's own library holding the address of the
    /// runtime's copy (null until the first event); null when the producer
    /// gave none (the site is then recorded by address).
    copy: *const AtomicPtr<Site>,
}

// SAFETY: a site is immutable after construction (its `copy` word is a
// separate atomic) and its strings are immutable `'static` data, so
// sharing it between threads is sound.
unsafe impl Sync for Site {}
// SAFETY: as above; nothing in a site is tied to a thread.
unsafe impl Send for Site {}

impl Site {
    /// Builds a site from static strings, as the weaver would emit it.
    pub const fn new(
        pointcut: Pointcut,
        flow: Flow,
        name: &'static CStr,
        file: &'static CStr,
        scope: Option<&'static CStr>,
        symbol: &'static CStr,
    ) -> Site {
        Site {
            abi_version: SITE_ABI_VERSION,
            pointcut: pointcut as u32,
            flow: flow as u32,
            line: 0,
            name: name.as_ptr(),
            file: file.as_ptr(),
            scope: match scope {
                Some(s) => s.as_ptr(),
                None => ptr::null(),
            },
            symbol: symbol.as_ptr(),
            copy: ptr::null(),
        }
    }

    /// Builds a site that keeps the address of its runtime copy in `copy`,
    /// as the weaver emits it.
    pub const fn with_copy_word(mut self, copy: &'static AtomicPtr<Site>) -> Site {
        self.copy = copy;
        self
    }

    /// `abi_version` as written by the producer of the site.
    pub fn abi_version(&self) -> u32 {
        self.abi_version
    }

    /// The pointcut of the site.
    pub fn pointcut(&self) -> Pointcut {
        Pointcut::from_raw(self.pointcut)
    }

    /// True for an `around` site (raw pointcut 0) without a flow: the
    /// decoder's common case, tested in one comparison of the two adjacent
    /// words.
    #[inline(always)]
    pub fn is_plain_around(&self) -> bool {
        // SAFETY: `pointcut` and `flow` are adjacent `u32` fields of this
        // `#[repr(C)]` struct, so 8 bytes from `pointcut` are its own; read
        // unaligned as one `u64`, which is 0 only when both are.
        let both = unsafe { ptr::addr_of!(self.pointcut).cast::<u64>().read_unaligned() };
        both == 0
    }

    /// The flow annotation of the site (raw value).
    pub fn flow_raw(&self) -> u32 {
        self.flow
    }

    /// Source line, 0 when unknown.
    pub fn line(&self) -> u32 {
        self.line
    }

    fn text(p: *const c_char) -> Option<&'static [u8]> {
        if p.is_null() {
            None
        } else {
            // SAFETY: by the type invariant a non-null string pointer is a
            // NUL-terminated string that outlives the site.
            Some(unsafe { CStr::from_ptr(p) }.to_bytes())
        }
    }

    /// Display name (demangled, without parameters); empty when missing.
    pub fn name(&self) -> &[u8] {
        Site::text(self.name)
            .or_else(|| Site::text(self.symbol))
            .unwrap_or(b"")
    }

    /// Source file; empty when missing.
    pub fn file(&self) -> &[u8] {
        Site::text(self.file).unwrap_or(b"")
    }

    /// Annotation scope, `None` when the annotation gave none.
    pub fn scope(&self) -> Option<&[u8]> {
        Site::text(self.scope).filter(|s| !s.is_empty())
    }

    /// Linkage name; empty when missing.
    pub fn symbol(&self) -> &[u8] {
        Site::text(self.symbol).unwrap_or(b"")
    }
}

// ---------------------------------------------------------------------------
// Interning
// ---------------------------------------------------------------------------

/// A site created at run time, with counters of its enters and exits.
///
/// `#[repr(C)]` with the site first, so the address of an `Interned` is the
/// address of its site (records store the site address).
#[derive(Debug)]
#[repr(C)]
pub struct Interned {
    site: Site,
    enters: AtomicU64,
    exits: AtomicU64,
}

impl Interned {
    fn leak(site: Site) -> &'static Interned {
        Box::leak(Box::new(Interned {
            site,
            enters: AtomicU64::new(0),
            exits: AtomicU64::new(0),
        }))
    }

    /// The site.
    pub fn site(&'static self) -> &'static Site {
        &self.site
    }

    /// Numbers one more enter of the site: 0 for the first, then 1, 2, ...
    #[inline]
    pub fn next_enter(&self) -> u64 {
        self.enters.fetch_add(1, Ordering::Relaxed)
    }

    /// Numbers one more exit of the site: 0 for the first, then 1, 2, ...
    #[inline]
    pub fn next_exit(&self) -> u64 {
        self.exits.fetch_add(1, Ordering::Relaxed)
    }
}

/// Global map from the full string key to the interned site. Only reached on
/// a per-thread cache miss.
type InternKey = (u8, Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>);

/// Everything a copied site holds: its numbers and its strings.
type CopyKey = ([u32; 4], Vec<u8>, Vec<u8>, Option<Vec<u8>>, Vec<u8>);

/// Sites made at run time, under the intern lock.
#[derive(Default)]
pub(crate) struct Sites {
    interned: HashMap<InternKey, &'static Interned>,
    copies: HashMap<CopyKey, &'static Site>,
    /// Set once reaching [`MAX_INTERNED`] was reported.
    full_reported: bool,
}

fn intern_map() -> &'static Mutex<Sites> {
    static MAP: OnceLock<Mutex<Sites>> = OnceLock::new();
    MAP.get_or_init(|| Mutex::new(Sites::default()))
}

/// Holds the intern lock across `fork()` (taken by the runtime's prepare
/// handler, released in the parent and the child), so a child never
/// inherits it held by a thread that does not exist there.
pub(crate) type ForkGuard = std::sync::MutexGuard<'static, Sites>;

/// The intern lock, for [`ForkGuard`].
pub(crate) fn lock_for_fork() -> ForkGuard {
    intern_map().lock().unwrap_or_else(|e| e.into_inner())
}

/// Most sites interned at run time (upstream-ABI functions, manual regions
/// and async operations together). Each costs about 480 bytes for the rest
/// of the process (the site, its strings, its key, the writer's cached
/// prefix), since records may point at it until the trace is complete: the
/// limit holds that to about 48 MB for a program that builds a new name per
/// request. Past it, events under new names are dropped and counted.
pub const MAX_INTERNED: usize = 100_000;

/// Finds the site interned under `key`, or interns the one `make` builds;
/// `None` once [`MAX_INTERNED`] sites exist and `key` is not one of them.
fn intern(key: InternKey, make: impl FnOnce() -> Site) -> Option<&'static Interned> {
    let mut map = intern_map().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = map.interned.get(&key) {
        return Some(found);
    }
    if map.interned.len() >= MAX_INTERNED {
        if !map.full_reported {
            map.full_reported = true;
            crate::shield::stderr_line(format_args!(
                "perfflow: {MAX_INTERNED} distinct run-time names (regions, async operations, \
                 upstream functions) is the limit; events under names not seen before are \
                 dropped and counted"
            ));
        }
        return None;
    }
    let interned = Interned::leak(make());
    map.interned.insert(key, interned);
    Some(interned)
}

/// Number of sites interned at run time so far.
pub fn interned_sites() -> usize {
    intern_map()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .interned
        .len()
}

/// Number of distinct woven sites copied so far (see [`owned`]).
pub fn copied_sites() -> usize {
    intern_map()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .copies
        .len()
}

/// The site to record for woven site `site`: the runtime's own copy of it,
/// made on its first event (see the module documentation), or `site` itself
/// for a site without a `copy` word (version 1, or hand-made with none),
/// which must then stay mapped until the trace is complete. `None` when the
/// copy cannot be made (out of memory).
///
/// Cost: two loads from the site and one from its word per event.
///
/// # Safety
/// `site` must be non-null, aligned, and point to a site whose version
/// field is readable; when that says 2, to a whole version 2 site.
#[inline(always)]
pub unsafe fn owned(site: *const Site) -> Option<*const Site> {
    // SAFETY: forwarded; the caller promises a non-null site.
    unsafe { owned_nonnull(NonNull::new_unchecked(site.cast_mut())) }
        .map(|copy| copy.as_ptr().cast_const())
}

/// [`owned`] as the entry points call it: a `NonNull`, so that the option
/// is one pointer (null for `None`) and costs the hot path no tag.
///
/// # Safety
/// As for [`owned`].
#[inline(always)]
pub(crate) unsafe fn owned_nonnull(site: NonNull<Site>) -> Option<NonNull<Site>> {
    let ptr = site.as_ptr().cast_const();
    // SAFETY: the caller's contract; `copy` is read only once the version
    // says the site has it.
    let word = unsafe {
        if ptr::addr_of!((*ptr).abi_version).read() != SITE_ABI_VERSION {
            return Some(site);
        }
        ptr::addr_of!((*ptr).copy).read()
    };
    if word.is_null() {
        return Some(site);
    }
    // SAFETY: a non-null word points to a writable pointer-sized word of the
    // site's library (the ABI), alive while code of that library runs.
    let copy = unsafe { &*word }.load(Ordering::Acquire);
    if let Some(copy) = NonNull::new(copy) {
        return Some(copy);
    }
    // SAFETY: forwarded.
    unsafe { own_cold(site, word) }
}

thread_local! {
    /// Set while this thread makes a site's copy: an event recorded meanwhile
    /// (the program's own `malloc` woven, which the copy calls) is dropped
    /// and counted rather than start another copy, which would call the
    /// allocator again without end.
    static COPYING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cold]
#[inline(never)]
unsafe fn own_cold(site: NonNull<Site>, word: *const AtomicPtr<Site>) -> Option<NonNull<Site>> {
    if crate::buffer::in_vfork_child() {
        // Its events are dropped: take no lock, allocate nothing.
        return Some(site);
    }
    // Signals blocked: a handler that leaves by `siglongjmp` must not leave
    // `COPYING` set (every later event of the site would be dropped) or the
    // table's lock held (the next copy would wait for ever).
    let masked = crate::signals::Masked::all();
    if COPYING.try_with(|copying| copying.replace(true)) != Ok(false) {
        return None;
    }
    // SAFETY: forwarded.
    let copy = unsafe { make_copy(site, word) };
    let _ = COPYING.try_with(|copying| copying.set(false));
    drop(masked);
    copy
}

/// The copy of `site` (made, or found by its content), stored in `word`.
///
/// # Safety
/// As for [`owned`].
unsafe fn make_copy(site: NonNull<Site>, word: *const AtomicPtr<Site>) -> Option<NonNull<Site>> {
    std::panic::catch_unwind(|| {
        // SAFETY: a whole version 2 site (the caller's contract), whose
        // strings are alive while its library is.
        let site = unsafe { site.as_ref() };
        let key: CopyKey = (
            [site.abi_version, site.pointcut, site.flow, site.line],
            Site::text(site.name).unwrap_or(b"").to_vec(),
            site.file().to_vec(),
            Site::text(site.scope).map(<[u8]>::to_vec),
            site.symbol().to_vec(),
        );
        let mut map = intern_map().lock().unwrap_or_else(|e| e.into_inner());
        let copy: &'static Site = match map.copies.get(&key) {
            Some(copy) => copy,
            None => {
                let copy = Box::leak(Box::new(Site {
                    abi_version: site.abi_version,
                    pointcut: site.pointcut,
                    flow: site.flow,
                    line: site.line,
                    name: Site::text(site.name).map_or(ptr::null(), |t| leak_str(t).as_ptr()),
                    file: leak_str(&key.2).as_ptr(),
                    scope: key
                        .3
                        .as_deref()
                        .map_or(ptr::null(), |t| leak_str(t).as_ptr()),
                    symbol: leak_str(&key.4).as_ptr(),
                    copy: ptr::null(),
                }));
                map.copies.insert(key, copy);
                copy
            }
        };
        // SAFETY: as in `owned`. Release: a thread that finds the copy
        // through the word sees it complete.
        unsafe { &*word }.store(copy as *const Site as *mut Site, Ordering::Release);
        NonNull::from(copy)
    })
    .ok()
}

fn leak_str(bytes: &[u8]) -> &'static CStr {
    // Interior NULs cannot occur: the bytes came from a C string.
    let owned = CString::new(bytes.to_vec()).unwrap_or_default();
    Box::leak(owned.into_boxed_c_str())
}

/// `"NA"` and empty strings mean "not given" in the upstream ABI.
fn given(text: Option<&[u8]>) -> Option<&[u8]> {
    text.filter(|t| !t.is_empty() && !t.eq_ignore_ascii_case(b"NA"))
}

/// Category used for sites created by the manual region API.
pub const REGION_FILE: &str = "region";

/// Source file recorded for sites created by the manual async API (their
/// category is the scope, as for every async site).
pub const ASYNC_FILE: &str = "async";

/// Returns the interned site for an upstream-ABI call, `None` past
/// [`MAX_INTERNED`]. Cold path: takes the intern lock and may allocate.
pub fn intern_upstream(
    force_async: bool,
    module: Option<&[u8]>,
    function: Option<&[u8]>,
    scope: Option<&[u8]>,
    flow: Option<&[u8]>,
    pcut: Option<&[u8]>,
) -> Option<&'static Site> {
    intern_upstream_entry(force_async, module, function, scope, flow, pcut).map(Interned::site)
}

fn intern_upstream_entry(
    force_async: bool,
    module: Option<&[u8]>,
    function: Option<&[u8]>,
    scope: Option<&[u8]>,
    flow: Option<&[u8]>,
    pcut: Option<&[u8]>,
) -> Option<&'static Interned> {
    let key: InternKey = (
        force_async as u8,
        module.unwrap_or(b"").to_vec(),
        function.unwrap_or(b"").to_vec(),
        scope.unwrap_or(b"").to_vec(),
        flow.unwrap_or(b"").to_vec(),
        pcut.unwrap_or(b"").to_vec(),
    );
    intern(key, || {
        let symbol = function.unwrap_or(b"");
        let name = demangle::display_name(symbol);
        Site::new(
            Pointcut::parse(given(pcut), force_async),
            Flow::parse(given(flow)),
            leak_str(name.as_bytes()),
            leak_str(module.unwrap_or(b"")),
            given(scope).map(leak_str),
            leak_str(symbol),
        )
    })
}

/// Returns the interned site for a manual region (`around` pointcut, category
/// [`REGION_FILE`]). Cold path.
pub fn intern_region(name: &[u8]) -> Option<&'static Site> {
    intern_region_entry(name).map(Interned::site)
}

fn intern_region_entry(name: &[u8]) -> Option<&'static Interned> {
    // Region keys use a tag value no upstream key has, so a region named like
    // an upstream function still gets its own site.
    let key: InternKey = (
        REGION_TAG as u8,
        REGION_FILE.as_bytes().to_vec(),
        name.to_vec(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    intern(key, || {
        let name = leak_str(name);
        Site::new(
            Pointcut::Around,
            Flow::None,
            name,
            leak_str(REGION_FILE.as_bytes()),
            None,
            name,
        )
    })
}

/// Returns the interned site for the manual async API: an `around_async`
/// site named `name` whose category is `scope`, or `"default"` when `scope`
/// is missing or empty. Cold path.
pub fn intern_async(name: &[u8], scope: Option<&[u8]>) -> Option<&'static Site> {
    intern_async_entry(name, scope).map(Interned::site)
}

fn intern_async_entry(name: &[u8], scope: Option<&[u8]>) -> Option<&'static Interned> {
    let scope = scope.filter(|s| !s.is_empty());
    // The tag keeps async sites apart from regions and upstream sites; a
    // missing and an empty scope share a key, as both mean "default".
    let key: InternKey = (
        ASYNC_TAG as u8,
        ASYNC_FILE.as_bytes().to_vec(),
        name.to_vec(),
        scope.unwrap_or(b"").to_vec(),
        Vec::new(),
        Vec::new(),
    );
    intern(key, || {
        let name = leak_str(name);
        Site::new(
            Pointcut::AroundAsync,
            Flow::None,
            name,
            leak_str(ASYNC_FILE.as_bytes()),
            scope.map(leak_str),
            name,
        )
    })
}

// ---------------------------------------------------------------------------
// Per-thread lookup cache
// ---------------------------------------------------------------------------

const CACHE_SLOTS: usize = 32;

/// Marks a region entry in the cache key (upstream entries hold 0 or 1).
const REGION_TAG: usize = 2;

/// Marks a manual async entry in the cache key.
const ASYNC_TAG: usize = 3;

#[derive(Clone, Copy)]
struct CacheEntry {
    /// `[async flag (0 or 1) or REGION_TAG or ASYNC_TAG, module, function,
    /// scope, flow, pcut]` as addresses.
    key: [usize; 6],
    site: *const Interned,
}

const EMPTY_ENTRY: CacheEntry = CacheEntry {
    key: [usize::MAX; 6],
    site: ptr::null(),
};

thread_local! {
    static CACHE: RefCell<[CacheEntry; CACHE_SLOTS]> =
        const { RefCell::new([EMPTY_ENTRY; CACHE_SLOTS]) };
}

#[inline]
fn slot_of(addr: usize) -> usize {
    ((addr >> 3) ^ (addr >> 11)) % CACHE_SLOTS
}

fn cache_get(key: &[usize; 6]) -> Option<&'static Interned> {
    CACHE
        .try_with(|c| {
            let c = c.try_borrow().ok()?;
            let e = &c[slot_of(key[2])];
            // SAFETY: cached pointers come from `intern`, which leaks them.
            (e.key == *key).then(|| unsafe { &*e.site })
        })
        .ok()
        .flatten()
}

fn cache_put(key: [usize; 6], site: &'static Interned) {
    let _ = CACHE.try_with(|c| {
        if let Ok(mut c) = c.try_borrow_mut() {
            c[slot_of(key[2])] = CacheEntry { key, site };
        }
    });
}

/// Reads an optional C string.
///
/// # Safety
/// `p` must be null or a valid NUL-terminated string.
unsafe fn opt_bytes<'a>(p: *const c_char) -> Option<&'a [u8]> {
    if p.is_null() {
        None
    } else {
        // SAFETY: guaranteed by the caller.
        Some(unsafe { CStr::from_ptr(p) }.to_bytes())
    }
}

/// Finds the site for an upstream-ABI call. The cache is keyed by the string
/// addresses: the weaver passes string constants, so equal addresses mean
/// equal strings and a hit costs no string work.
///
/// # Safety
/// Each pointer must be null or a valid NUL-terminated string.
pub unsafe fn lookup_upstream(
    is_async: bool,
    module: *const c_char,
    function: *const c_char,
    scope: *const c_char,
    flow: *const c_char,
    pcut: *const c_char,
) -> Option<&'static Interned> {
    let key = [
        is_async as usize,
        module as usize,
        function as usize,
        scope as usize,
        flow as usize,
        pcut as usize,
    ];
    if let Some(site) = cache_get(&key) {
        return Some(site);
    }
    lookup_upstream_cold(key, module, function, scope, flow, pcut)
}

#[cold]
#[inline(never)]
unsafe fn lookup_upstream_cold(
    key: [usize; 6],
    module: *const c_char,
    function: *const c_char,
    scope: *const c_char,
    flow: *const c_char,
    pcut: *const c_char,
) -> Option<&'static Interned> {
    let found = std::panic::catch_unwind(|| {
        // SAFETY: forwarded from the caller's contract.
        let (m, f, s, fl, p) = unsafe {
            (
                opt_bytes(module),
                opt_bytes(function),
                opt_bytes(scope),
                opt_bytes(flow),
                opt_bytes(pcut),
            )
        };
        intern_upstream_entry(key[0] != 0, m, f, s, fl, p)
    })
    .ok()??;
    cache_put(key, found);
    Some(found)
}

/// Finds the site for a manual region. The cache is keyed by the name's
/// address, but the name is also compared on a hit, because callers may
/// build names at run time in a reused buffer.
///
/// # Safety
/// `name` must be null or a valid NUL-terminated string.
pub unsafe fn lookup_region(name: *const c_char) -> Option<&'static Interned> {
    if name.is_null() {
        return None;
    }
    let key = [REGION_TAG, 0, name as usize, 0, 0, 0];
    if let Some(found) = cache_get(&key) {
        // SAFETY: interned region sites have a valid `symbol`; `name` is
        // valid by the caller's contract.
        if unsafe { libc::strcmp(found.site.symbol, name) } == 0 {
            return Some(found);
        }
    }
    let found = std::panic::catch_unwind(|| {
        // SAFETY: `name` is a valid C string by the caller's contract.
        intern_region_entry(unsafe { CStr::from_ptr(name) }.to_bytes())
    })
    .ok()??;
    cache_put(key, found);
    Some(found)
}

/// Finds the site for the manual async API ([`intern_async`]). Like regions,
/// the cache is keyed by the string addresses and the strings are compared
/// on a hit.
///
/// # Safety
/// `name` and `scope` must each be null or a valid NUL-terminated string.
pub unsafe fn lookup_async(name: *const c_char, scope: *const c_char) -> Option<&'static Interned> {
    if name.is_null() {
        return None;
    }
    // SAFETY: forwarded from the caller's contract.
    let (name_bytes, scope_bytes) = unsafe { (CStr::from_ptr(name).to_bytes(), opt_bytes(scope)) };
    let key = [ASYNC_TAG, 0, name as usize, scope as usize, 0, 0];
    if let Some(found) = cache_get(&key) {
        let site = found.site();
        if site.symbol() == name_bytes && site.scope() == scope_bytes.filter(|s| !s.is_empty()) {
            return Some(found);
        }
    }
    let found = std::panic::catch_unwind(|| intern_async_entry(name_bytes, scope_bytes)).ok()??;
    cache_put(key, found);
    Some(found)
}

//! `-finstrument-functions` hooks: GCC, Intel, NVHPC and clang call
//! `__cyg_profile_func_enter(fn, call_site)` and `__cyg_profile_func_exit`
//! on entry to and exit from every function of a file compiled with
//! `-finstrument-functions`. Only such programs ever call them: a program
//! woven by the plugin, or compiled without the flag, never does, so these
//! definitions change nothing for it.
//!
//! The hooks trace the functions that the filter file in
//! `PERFFLOW_WEAVE_FILTER` selects by name (the file the weaver reads; see
//! `perfflow_parser::filter`), or every instrumented function when the
//! variable is not set. `file` rules are not applied: a function's address
//! does not tell its source file without debug info, so they are reported
//! once and skipped.
//!
//! Hot path, per call: one relaxed load of `perfflow_enabled`, a hash of
//! the function's address and a lock-free probe of a table of addresses
//! already seen; a traced function then records its event as woven code
//! does. The first call of each address takes the cold path, under a lock:
//! it finds the loaded object that holds the address (`dl_iterate_phdr`),
//! its symbol table (`.symtab` and `.dynsym`; read once per object), the
//! function's name, demangled as the weaver does, and the filter's
//! decision, and fills the table. A filtered-out function so costs a probe
//! per call; a function the symbol tables do not name (a stripped program)
//! is reported once and treated as filtered out.
//!
//! The table holds [`SLOTS`] addresses. Past 3/4 of that, new addresses are
//! reported once and not traced (their calls take the cold path's lock).
//! A hand-written open-addressing table rather than a `HashMap` behind a
//! lock: the hot path must take no lock.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{c_int, c_void, CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use perfflow_parser::filter::{Filter, Target};
use perfflow_parser::names::display_name;
use perfflow_parser::Aspect;

use crate::buffer;
use crate::site::{Flow, Pointcut, Site};

/// Addresses the table holds (a power of two; 16 bytes each, allocated on
/// the first call, touched page by page).
pub const SLOTS: usize = 1 << 18;
const MAX_FILLED: usize = SLOTS / 4 * 3;

/// A table value: not traced.
const FILTERED_OUT: usize = 1;

struct Slot {
    /// Function address; 0 while the slot is free.
    key: AtomicUsize,
    /// 0 while being filled, [`FILTERED_OUT`], or the address of the site.
    value: AtomicUsize,
}

static TABLE: AtomicPtr<Slot> = AtomicPtr::new(std::ptr::null_mut());

thread_local! {
    /// Set while this thread is on the cold path: a signal handler that
    /// calls an instrumented function meanwhile is not traced, rather than
    /// wait for a lock its own thread holds.
    static RESOLVING: Cell<bool> = const { Cell::new(false) };
}

#[inline(always)]
fn slot_index(addr: usize) -> usize {
    ((addr as u64 >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros()))
        as usize
}

/// The site of `addr`, `None` when it is not traced. Lock-free once the
/// address has been seen.
#[inline(always)]
fn site_of(addr: usize) -> Option<*const Site> {
    let table = TABLE.load(Ordering::Acquire);
    if !table.is_null() {
        let mut i = slot_index(addr);
        loop {
            // SAFETY: the table has SLOTS slots and is never freed.
            let slot = unsafe { &*table.add(i) };
            let key = slot.key.load(Ordering::Acquire);
            if key == addr {
                match slot.value.load(Ordering::Acquire) {
                    0 => break,
                    FILTERED_OUT => return None,
                    site => return Some(site as *const Site),
                }
            }
            if key == 0 {
                break;
            }
            i = (i + 1) & (SLOTS - 1);
        }
    }
    site_of_cold(addr)
}

/// Called by code compiled with `-finstrument-functions` on entry to each
/// function.
#[no_mangle]
pub extern "C" fn __cyg_profile_func_enter(this_fn: *mut c_void, _call_site: *mut c_void) {
    if !buffer::perfflow_enabled.load(Ordering::Relaxed) {
        return;
    }
    if let Some(site) = site_of(this_fn as usize) {
        buffer::record_enter(site);
    }
}

/// Called by code compiled with `-finstrument-functions` on each way out of
/// a function, unwinding included.
#[no_mangle]
pub extern "C" fn __cyg_profile_func_exit(this_fn: *mut c_void, _call_site: *mut c_void) {
    if !buffer::perfflow_enabled.load(Ordering::Relaxed) {
        return;
    }
    if let Some(site) = site_of(this_fn as usize) {
        buffer::record_exit(site);
    }
}

// Cold path
// ---------------------------------------------------------------------------

/// What the cold path keeps, under its lock.
#[derive(Default)]
struct Resolver {
    /// The filter, `None` when every function is traced.
    filter: Option<Filter>,
    /// The filter file could not be used: nothing is traced.
    broken: bool,
    /// Symbol tables by object path.
    objects: HashMap<PathBuf, Option<Symbols>>,
    filled: usize,
    reported_full: bool,
    reported_unnamed: bool,
}

fn resolver() -> &'static Mutex<Resolver> {
    static RESOLVER: OnceLock<Mutex<Resolver>> = OnceLock::new();
    RESOLVER.get_or_init(|| Mutex::new(Resolver::load()))
}

impl Resolver {
    fn load() -> Resolver {
        let mut resolver = Resolver::default();
        let Some(path) = std::env::var_os("PERFFLOW_WEAVE_FILTER").filter(|p| !p.is_empty()) else {
            return resolver;
        };
        match Filter::load(Path::new(&path)) {
            Ok(filter) => {
                let file_rules: Vec<String> = filter
                    .rules
                    .iter()
                    .filter(|r| r.target == Target::File)
                    .map(|r| r.describe())
                    .collect();
                if !file_rules.is_empty() {
                    warn(&format!(
                        "PERFFLOW_WEAVE_FILTER={}: the -finstrument-functions hooks know functions \
                         by name only and skip its file rules ({}); compile only the files to \
                         trace with -finstrument-functions",
                        Path::new(&path).display(),
                        file_rules.join(", ")
                    ));
                }
                resolver.filter = Some(filter);
            }
            Err(message) => {
                warn(&format!(
                    "PERFFLOW_WEAVE_FILTER: {message}; the -finstrument-functions hooks trace nothing"
                ));
                resolver.broken = true;
            }
        }
        resolver
    }
}

fn warn(message: &str) {
    crate::shield::stderr_line(format_args!("perfflow: {message}"));
}

#[cold]
#[inline(never)]
fn site_of_cold(addr: usize) -> Option<*const Site> {
    let _errno = crate::errno::Kept::now();
    // Signals blocked, as for a site's copy (see `site::own_cold`).
    let masked = crate::signals::Masked::all();
    if RESOLVING.with(|r| r.replace(true)) {
        return None;
    }
    let result = std::panic::catch_unwind(|| resolve(addr)).unwrap_or(None);
    RESOLVING.with(|r| r.set(false));
    drop(masked);
    result
}

fn resolve(addr: usize) -> Option<*const Site> {
    let mut resolver = resolver().lock().unwrap_or_else(|e| e.into_inner());
    let table = table();
    // Another thread may have filled it while this one waited.
    let mut i = slot_index(addr);
    loop {
        let slot = &table[i];
        match slot.key.load(Ordering::Acquire) {
            0 => break,
            key if key == addr => {
                return match slot.value.load(Ordering::Acquire) {
                    FILTERED_OUT => None,
                    site => Some(site as *const Site),
                }
            }
            _ => i = (i + 1) & (SLOTS - 1),
        }
    }
    let site = resolver.decide(addr);
    if resolver.filled >= MAX_FILLED {
        if !resolver.reported_full {
            resolver.reported_full = true;
            warn(&format!(
                "{MAX_FILLED} distinct instrumented functions is the limit of the \
                 -finstrument-functions hooks; functions called for the first time from now on \
                 are not traced"
            ));
        }
        return None;
    }
    resolver.filled += 1;
    let slot = &table[i];
    slot.key.store(addr, Ordering::Release);
    slot.value
        .store(site.map_or(FILTERED_OUT, |s| s as usize), Ordering::Release);
    site
}

/// The table, allocated zeroed on first use and never freed.
fn table() -> &'static [Slot] {
    let mut table = TABLE.load(Ordering::Acquire);
    if table.is_null() {
        let slots: Box<[Slot]> = (0..SLOTS)
            .map(|_| Slot {
                key: AtomicUsize::new(0),
                value: AtomicUsize::new(0),
            })
            .collect();
        table = Box::leak(slots).as_mut_ptr();
        // Only the cold path's lock holder stores it.
        TABLE.store(table, Ordering::Release);
    }
    // SAFETY: SLOTS slots, leaked, so valid for the rest of the process.
    unsafe { std::slice::from_raw_parts(table, SLOTS) }
}

impl Resolver {
    /// The site to record for the function at `addr`, `None` when it is not
    /// traced.
    fn decide(&mut self, addr: usize) -> Option<*const Site> {
        if self.broken {
            return None;
        }
        let Some(symbol) = self.symbol_of(addr) else {
            if !self.reported_unnamed {
                self.reported_unnamed = true;
                warn(&format!(
                    "-finstrument-functions: no symbol names the function at {addr:#x} (a stripped \
                     program or library?); functions without a name are not traced"
                ));
            }
            return None;
        };
        let name = display_name(&symbol);
        let aspect = match &self.filter {
            None => Aspect::default(),
            Some(filter) => filter.decide(&name, None).aspect?,
        };
        Some(leak_site(&name, &symbol, &aspect))
    }

    fn symbol_of(&mut self, addr: usize) -> Option<String> {
        let (path, bias) = object_of(addr)?;
        let symbols = self
            .objects
            .entry(path.clone())
            .or_insert_with(|| Symbols::read(&path));
        symbols.as_ref()?.find(addr.wrapping_sub(bias))
    }
}

fn leak_site(name: &str, symbol: &str, aspect: &Aspect) -> *const Site {
    let leak = |s: &str| -> &'static CStr {
        Box::leak(
            CString::new(s.replace('\0', ""))
                .unwrap_or_default()
                .into_boxed_c_str(),
        )
    };
    let site = Site::new(
        Pointcut::from_raw(aspect.pointcut as u32),
        Flow::parse(Some(aspect.flow.as_str().as_bytes())),
        leak(name),
        leak(""),
        aspect.scope.as_deref().map(leak),
        leak(symbol),
    );
    Box::leak(Box::new(site))
}

/// The file of the loaded object holding `addr`, and its load bias.
fn object_of(addr: usize) -> Option<(PathBuf, usize)> {
    struct Search {
        addr: usize,
        found: Option<(PathBuf, usize)>,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: the loader passes a valid info; `data` is our Search.
        let (info, search) = unsafe { (&*info, &mut *(data as *mut Search)) };
        let bias = info.dlpi_addr as usize;
        for k in 0..info.dlpi_phnum as usize {
            // SAFETY: dlpi_phdr has dlpi_phnum entries.
            let ph = unsafe { &*info.dlpi_phdr.add(k) };
            let start = bias.wrapping_add(ph.p_vaddr as usize);
            if ph.p_type == libc::PT_LOAD
                && search.addr >= start
                && search.addr < start + ph.p_memsz as usize
            {
                let name = if info.dlpi_name.is_null() {
                    &[][..]
                } else {
                    // SAFETY: a NUL-terminated name owned by the loader.
                    unsafe { CStr::from_ptr(info.dlpi_name) }.to_bytes()
                };
                let path = if name.is_empty() {
                    PathBuf::from("/proc/self/exe")
                } else {
                    PathBuf::from(OsStr::from_bytes(name))
                };
                search.found = Some((path, bias));
                return 1;
            }
        }
        0
    }
    let mut search = Search { addr, found: None };
    // SAFETY: `visit` only reads what the loader hands it.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut search as *mut Search as *mut c_void) };
    search.found
}

/// The function symbols of one object file, sorted by address.
struct Symbols {
    /// (address, size, name) relative to the object's load bias.
    functions: Vec<(usize, usize, String)>,
}

impl Symbols {
    fn read(path: &Path) -> Option<Symbols> {
        use object::{Object, ObjectSymbol, SymbolKind};
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: the object file is mapped read-only for the time it is
        // read; a program's own files are not rewritten while it runs.
        let map = unsafe { Mmap::of(&file)? };
        let parsed = object::File::parse(map.bytes()).ok()?;
        let mut functions: Vec<(usize, usize, String)> = parsed
            .symbols()
            .chain(parsed.dynamic_symbols())
            .filter(|s| s.kind() == SymbolKind::Text && s.is_definition())
            .filter_map(|s| {
                Some((
                    s.address() as usize,
                    s.size() as usize,
                    s.name().ok()?.to_string(),
                ))
            })
            .filter(|(addr, _, name)| *addr != 0 && !name.is_empty())
            .collect();
        functions.sort_unstable_by_key(|f| f.0);
        functions.dedup_by_key(|f| f.0);
        Some(Symbols { functions })
    }

    fn find(&self, addr: usize) -> Option<String> {
        let i = self
            .functions
            .partition_point(|f| f.0 <= addr)
            .checked_sub(1)?;
        let (start, size, name) = &self.functions[i];
        (addr == *start || addr < start + size).then(|| name.clone())
    }
}

/// A read-only mapping of a whole file.
struct Mmap {
    ptr: *mut c_void,
    len: usize,
}

impl Mmap {
    /// # Safety
    /// The file must not change while the mapping lives.
    unsafe fn of(file: &std::fs::File) -> Option<Mmap> {
        use std::os::fd::AsRawFd;
        let len = usize::try_from(file.metadata().ok()?.len()).ok()?;
        if len == 0 {
            return None;
        }
        // SAFETY: a fresh private read-only mapping of an open file.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        (ptr != libc::MAP_FAILED).then_some(Mmap { ptr, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` mapped readable bytes.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `of` mapped.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

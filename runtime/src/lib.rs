//! perfflow runtime: records the events of woven C/C++ programs and writes
//! them as a Chrome Trace Format JSON array (`perfflow.array.<host>.<pid>.pfw`)
//! that Perfetto and `chrome://tracing` open.
//!
//! The C interface is declared in `include/perfflow.h`; this file only
//! adapts it. The work is split as follows:
//!
//! - [`site`]: the `struct perfflow_site` mirror and interning of the string
//!   ABI, the region API and the async API into sites;
//! - [`event`]: the 16-byte raw record stored per event, and the payload
//!   records that may follow it;
//! - `buffer`: per-thread buffers, the registry, hand-off and final flush
//!   (the hot path lives there);
//! - [`usage`]: the CPU time and resident set size read per `around` event
//!   with `cpu-mem-usage=True`;
//! - [`decode`]: raw records to trace events (pointcut rules, async ids,
//!   usage counters);
//! - [`writer`]: the [`writer::Sink`] trait and the Chrome JSON writer;
//! - [`perfetto`] (on [`protobuf`]): the Perfetto protobuf writer of
//!   `log-format=perfetto`; [`trace_writer`] holds whichever of the two the
//!   options chose;
//! - [`process_info`]: host, executable, MPI rank and clock of the
//!   process, written at the opening of its trace;
//! - [`clock`], [`demangle`], [`error`]: support.
//!
//! No function of the C interface panics or unwinds into C: the hot path has
//! no panicking operation, and the cold paths run under `catch_unwind`.

pub mod block_output;
pub mod clock;
pub mod decode;
pub mod demangle;
pub mod error;
pub mod event;
pub mod instance;
pub mod options;
pub mod perfetto;
pub mod process_info;
pub mod protobuf;
pub mod site;
pub mod trace_writer;
pub mod usage;
pub mod writer;

mod buffer;
mod cyg_hooks;
mod errno;
mod fd;
mod sampler;
mod sanitizers;
mod shield;
mod signals;
mod site_table;
mod trace_file;
mod vfork;

use std::ffi::{c_char, c_int};

use event::Payload;
use site::{Interned, Pointcut};

pub use buffer::{dropped_events, CHUNK_RECORDS};
pub use error::Error;
pub use site::Site;

/// The site to record for `site` as passed to an entry point (see
/// [`site::owned`]), or `None` for a null or misaligned pointer or a copy
/// that cannot be made.
///
/// # Safety
/// As for [`perfflow_site_enter`].
#[inline(always)]
unsafe fn recordable(site: *const Site) -> Option<std::ptr::NonNull<Site>> {
    if !event::packable(site) {
        return None;
    }
    // SAFETY: a packable site is non-null and aligned; the rest is the
    // caller's contract.
    unsafe { site::owned_nonnull(std::ptr::NonNull::new_unchecked(site.cast_mut())) }
}

/// Records entry into a woven function.
///
/// # Safety
/// `site` must be null or point to a `struct perfflow_site`. A site with a
/// `copy` word is copied on its first event and may then be unmapped (its
/// library `dlclose`d); one without must stay valid and unchanged until the
/// process exits.
#[no_mangle]
pub unsafe extern "C" fn perfflow_site_enter(site: *const Site) {
    // SAFETY: the caller's contract is `recordable`'s.
    match unsafe { recordable(site) } {
        Some(site) => buffer::record_enter(site.as_ptr()),
        None => buffer::reject_site(),
    }
}

/// Records exit from a woven function.
///
/// # Safety
/// As for [`perfflow_site_enter`].
#[no_mangle]
pub unsafe extern "C" fn perfflow_site_exit(site: *const Site) {
    // SAFETY: the caller's contract is `recordable`'s.
    match unsafe { recordable(site) } {
        Some(site) => buffer::record_exit(site.as_ptr()),
        None => buffer::reject_site(),
    }
}

/// Records exit from a woven function by unwinding (an exception): the
/// weaver's cleanup landing pad calls it in place of
/// [`perfflow_site_exit`], and the slice it ends is marked `raised`.
///
/// # Safety
/// As for [`perfflow_site_enter`].
#[no_mangle]
pub unsafe extern "C" fn perfflow_site_exit_unwind(site: *const Site) {
    let _errno = errno::Kept::now();
    // SAFETY: as in perfflow_site_enter.
    match unsafe { recordable(site) } {
        Some(site) => buffer::record_exit_with(site.as_ptr(), Payload::Unwound),
        None => buffer::reject_site(),
    }
}

/// Records entry into `site` with the async id `id`: for an `around_async`
/// site a `b` event, for a `before_async` one an `n` event, with that id
/// instead of one the runtime picks (the caller pairs its ids). Id 0 is
/// ignored.
///
/// # Safety
/// As for [`perfflow_site_enter`].
#[no_mangle]
pub unsafe extern "C" fn perfflow_site_enter_id(site: *const Site, id: u64) {
    let _errno = errno::Kept::now();
    // SAFETY: as in perfflow_site_enter.
    match (id != 0).then(|| unsafe { recordable(site) }).flatten() {
        Some(site) => buffer::record_enter_with(site.as_ptr(), Payload::AsyncId(id)),
        None => buffer::reject_site(),
    }
}

/// Records exit from `site` with the async id `id`: for an `around_async`
/// site the `e` event that ends the operation `id`. Id 0 is ignored.
///
/// # Safety
/// As for [`perfflow_site_enter`].
#[no_mangle]
pub unsafe extern "C" fn perfflow_site_exit_id(site: *const Site, id: u64) {
    let _errno = errno::Kept::now();
    // SAFETY: as in perfflow_site_enter.
    match (id != 0).then(|| unsafe { recordable(site) }).flatten() {
        Some(site) => buffer::record_exit_with(site.as_ptr(), Payload::AsyncId(id)),
        None => buffer::reject_site(),
    }
}

/// PerfFlowAspect ABI: entry advice.
///
/// # Safety
/// Every string argument must be null or a NUL-terminated string that stays
/// valid and unchanged until the process exits (the weaver passes string
/// constants; repeated calls are recognised by address).
#[no_mangle]
pub unsafe extern "C" fn perfflow_weave_before(
    is_async: c_int,
    module: *const c_char,
    function: *const c_char,
    scope: *const c_char,
    flow: *const c_char,
    pcut: *const c_char,
) {
    let _errno = errno::Kept::now();
    if tracing_off() {
        return;
    }
    // SAFETY: forwarded from the caller's contract.
    match unsafe { site::lookup_upstream(is_async != 0, module, function, scope, flow, pcut) } {
        Some(found) if is_around_async(found) => {
            buffer::record_enter_with(found.site(), Payload::Sequence(found.next_enter()))
        }
        Some(found) => buffer::record_enter(found.site()),
        None => buffer::reject_site(),
    }
}

/// Upstream `around_async` calls may begin and end on different threads:
/// their enters and exits are numbered per site, and the n-th exit ends the
/// n-th enter.
fn is_around_async(found: &'static Interned) -> bool {
    found.site().pointcut() == Pointcut::AroundAsync
}

/// PerfFlowAspect ABI: exit advice.
///
/// # Safety
/// As for [`perfflow_weave_before`].
#[no_mangle]
pub unsafe extern "C" fn perfflow_weave_after(
    is_async: c_int,
    module: *const c_char,
    function: *const c_char,
    scope: *const c_char,
    flow: *const c_char,
    pcut: *const c_char,
) {
    let _errno = errno::Kept::now();
    if tracing_off() {
        return;
    }
    // SAFETY: forwarded from the caller's contract.
    match unsafe { site::lookup_upstream(is_async != 0, module, function, scope, flow, pcut) } {
        Some(found) if is_around_async(found) => {
            buffer::record_exit_with(found.site(), Payload::Sequence(found.next_exit()))
        }
        Some(found) => buffer::record_exit(found.site()),
        None => buffer::reject_site(),
    }
}

/// True once the runtime has started with tracing off (`log-enable=False`,
/// or a trace file it could not create): the name-based entry points then
/// return before looking a name up, so they intern nothing and say nothing.
#[inline(always)]
fn tracing_off() -> bool {
    !buffer::perfflow_enabled.load(std::sync::atomic::Ordering::Relaxed)
}

/// Opens a manually marked region named `name` on the calling thread.
///
/// # Safety
/// `name` must be null (ignored) or a NUL-terminated string valid for the
/// duration of the call.
#[no_mangle]
pub unsafe extern "C" fn perfflow_region_begin(name: *const c_char) {
    let _errno = errno::Kept::now();
    if tracing_off() {
        return;
    }
    // SAFETY: forwarded from the caller's contract.
    match unsafe { site::lookup_region(name) } {
        Some(found) => buffer::record_enter(found.site()),
        None => buffer::reject_site(),
    }
}

/// Closes the innermost open region named `name` on the calling thread.
///
/// # Safety
/// As for [`perfflow_region_begin`].
#[no_mangle]
pub unsafe extern "C" fn perfflow_region_end(name: *const c_char) {
    let _errno = errno::Kept::now();
    if tracing_off() {
        return;
    }
    // SAFETY: forwarded from the caller's contract.
    match unsafe { site::lookup_region(name) } {
        Some(found) => buffer::record_exit(found.site()),
        None => buffer::reject_site(),
    }
}

/// [`perfflow_region_end`] for a region left by an exception (a block of a
/// language binding that raised): the slice it ends is marked `raised`.
///
/// # Safety
/// As for [`perfflow_region_begin`].
#[no_mangle]
pub unsafe extern "C" fn perfflow_region_end_unwind(name: *const c_char) {
    let _errno = errno::Kept::now();
    if tracing_off() {
        return;
    }
    // SAFETY: forwarded from the caller's contract.
    match unsafe { site::lookup_region(name) } {
        Some(found) => buffer::record_exit_with(found.site(), Payload::Unwound),
        None => buffer::reject_site(),
    }
}

/// Begins an async operation named `name` in category `scope` (`"default"`
/// when null or empty) and returns its id, unique in the process; 0 when
/// `name` is null or a new name past [`site::MAX_INTERNED`] (nothing is
/// recorded).
///
/// # Safety
/// `name` and `scope` must each be null or a NUL-terminated string valid for
/// the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn perfflow_async_begin(name: *const c_char, scope: *const c_char) -> u64 {
    let _errno = errno::Kept::now();
    // SAFETY: forwarded from the caller's contract.
    match unsafe { site::lookup_async(name, scope) } {
        Some(found) => {
            let id = decode::next_async_id();
            buffer::record_enter_with(found.site(), Payload::AsyncId(id));
            id
        }
        None => {
            buffer::reject_site();
            0
        }
    }
}

/// Ends the async operation `id` returned by [`perfflow_async_begin`] with
/// the same `name` and `scope`, on any thread. Id 0 is ignored.
///
/// # Safety
/// As for [`perfflow_async_begin`].
#[no_mangle]
pub unsafe extern "C" fn perfflow_async_end(name: *const c_char, scope: *const c_char, id: u64) {
    let _errno = errno::Kept::now();
    // SAFETY: forwarded from the caller's contract.
    unsafe { async_end(name, scope, id, Payload::AsyncId) }
}

/// [`perfflow_async_end`] for an operation left by an exception (a Python
/// coroutine that raised): its `e` is marked `raised`.
///
/// # Safety
/// As for [`perfflow_async_begin`].
#[no_mangle]
pub unsafe extern "C" fn perfflow_async_end_unwind(
    name: *const c_char,
    scope: *const c_char,
    id: u64,
) {
    let _errno = errno::Kept::now();
    // SAFETY: forwarded from the caller's contract.
    unsafe { async_end(name, scope, id, Payload::AsyncIdUnwound) }
}

/// The exit of the async operation `id`, followed by `payload(id)`.
///
/// # Safety
/// As for [`perfflow_async_begin`].
unsafe fn async_end(
    name: *const c_char,
    scope: *const c_char,
    id: u64,
    payload: fn(u64) -> Payload,
) {
    if id == 0 {
        buffer::reject_site();
        return;
    }
    // SAFETY: forwarded from the caller's contract.
    match unsafe { site::lookup_async(name, scope) } {
        Some(found) => buffer::record_exit_with(found.site(), payload(id)),
        None => buffer::reject_site(),
    }
}

/// Completes the trace now, as `exit()` would: for processes that end
/// without running exit handlers (`_exit`, as Python's `multiprocessing`
/// workers do). Later events are dropped and counted; later calls, and the
/// exit handler, do nothing.
#[no_mangle]
pub extern "C" fn perfflow_finish() {
    let _errno = errno::Kept::now();
    let _ = std::panic::catch_unwind(buffer::finish);
}

/// Number of events dropped so far (see [`dropped_events`]).
#[no_mangle]
pub extern "C" fn perfflow_dropped_events() -> u64 {
    dropped_events()
}

//! Per-thread event buffers, the global registry and the final flush.
//!
//! # Concurrency protocol
//!
//! Each thread owns one [`ThreadBuffer`]: its current chunk of
//! [`CHUNK_RECORDS`] raw records and a published length `len`, held as the
//! pointers `end` (one past the chunk) and `at` (the slot `len`). Two locks
//! guard the rest: the *output lock* (trace file, decoders) and the
//! *registry lock* (live threads, queue of full chunks, spare chunks). The
//! output lock is always taken first when both are held, and the registry
//! lock is only held for bookkeeping, never while formatting a queued chunk.
//!
//! * **Record (hot path, owner thread only).** Read `at` (Relaxed: only the
//!   owner ever changes it outside the lock), compare it with `end`, write
//!   the record there, then store `at + 1` with **Release** (an event with a
//!   payload record writes both, then stores `at + 2`). No lock, no
//!   allocation, no system call, no string work.
//! * **First event of a thread (cold).** Allocate a buffer and chunk, read
//!   the kernel thread id, and register a [`Slot`] under the registry lock.
//!   The first event of the process also starts the runtime: clock pairing,
//!   trace file (its opening, `[` and the process name, written at once),
//!   `atexit` registration, writer thread.
//! * **Chunk full (cold, once per chunk).** Under the registry lock the
//!   owner queues the full chunk and swaps in a spare one (allocated if
//!   none), then wakes the writer thread (`perfflow-writer`), which
//!   decodes and formats queued chunks in order under the output lock and
//!   returns them to the spares. Recording threads never format; when more
//!   than [`MAX_QUEUED`] chunks wait, the owner waits until the writer has
//!   taken one, so memory stays bounded. Without a writer thread (it could
//!   not start, or ended), owners format the queue themselves.
//! * **Periodic flush (writer thread, every `flush-interval`).** Under the
//!   output lock, and the registry lock for a memory copy only, the writer
//!   copies each live chunk's records from the slot's `drained` up to its
//!   published `len` (read with **Acquire**), moves `drained` there,
//!   formats the copy and writes everything formatted to the file. A
//!   thread with a chunk still queued waits for the next round, so each
//!   thread's records reach its decoder in order; hand-off, thread exit,
//!   fork and the final flush all start from `drained`, so nothing is
//!   decoded twice. The recording side is unchanged: the Release store of
//!   `len` it already makes is what the writer pairs with.
//! * **Final flush (`atexit`, fatal signal).** Sets `closing` (the writer
//!   stops at its next chunk; each thread may queue at most one more
//!   chunk, and then waits in its hand-off until the flush is done, so
//!   busy threads stop competing with it for the CPU), takes the output
//!   lock, formats the queue, then, keeping the
//!   registry lock, each live chunk's published records (`len` read with
//!   **Acquire**, pairing with the owners' Release stores), ends slices
//!   left open, closes the JSON array and sets `finished`. Records taken
//!   after that are dropped and counted. From a fatal signal, each slot
//!   gets a `cut` (its chunk and published length when the flush began):
//!   records after it exist only because the runtime holds the process's
//!   end back, and are counted as dropped rather than formatted. The flush
//!   then has a deadline (two thirds of the handler's wait): past it,
//!   nothing more is formatted for any thread, the rest is counted as
//!   dropped, and the file is completed all the same. One stderr line
//!   gives the counts.
//! * **Thread exit.** The thread-local destructor queues the thread's last
//!   records with its name and exit time (the writer ends the slices it
//!   left open), removes the slot and frees the buffer. At most
//!   [`COPIED_AT_EXIT`] records (a short-lived thread's) go as a copy and
//!   the chunk back to the spares at once, for the next thread; the copies
//!   queued are bounded by [`MAX_COPIED_BYTES`], past which an ending
//!   thread's records are dropped and counted rather than wait, so threads
//!   that end faster than the writer formats (a thread-per-request server)
//!   never pile up waiting. More records go with their chunk and, like a
//!   hand-off, first wait while [`MAX_QUEUED`] chunks wait for the writer:
//!   buffer memory follows the threads alive, not the threads ever
//!   created. A new thread takes a spare chunk when there is one.
//!
//! Chunks are only swapped under the registry lock and only formatted by
//! the holder of the output lock, so no chunk is read while reused. A
//! per-thread `busy` flag turns re-entry (an event recorded from inside the
//! runtime's own cold path, e.g. through a woven allocator, or on the
//! runtime's own threads) into a dropped event instead of a self-deadlock.
//! A per-thread `PUSHING` flag (a bit of the thread's gate byte), set around
//! the hot path's timestamp, read and publication of `len` with compiler
//! fences only, does the same for an event recorded by a signal handler
//! that interrupted the hot path on the same thread (it would otherwise
//! overwrite the interrupted record, or land before a record stamped
//! earlier); the cold paths run with signals blocked.
//!
//! # Options, fork and signals
//!
//! * `PERFFLOW_OPTIONS` is read in [`Runtime::start`]: `log-enable=False`
//!   (or a trace file that cannot be created) clears [`ENABLED`], which the
//!   hot path reads first; the other options shape the file and the decoder.
//! * `fork`: `pthread_atfork` handlers hold the intern, output and registry
//!   locks across the fork; in the child only the forking thread's slot is
//!   kept, its records so far (queued and live) are left to the parent, and
//!   the child's own file, writer thread and signal watcher start on its
//!   first recorded event (a child that only calls exec leaves no file):
//!   the forking thread's chunk is marked full and drained, so that event
//!   takes the cold path.
//! * Fatal signals: the handler wakes the watcher thread of `signals`,
//!   which runs [`finish_within`]; if it cannot get the locks in time, the
//!   trace keeps what was written.
//! * `vfork`: the runtime's `vfork` hides the thread's buffer in the child,
//!   whose events then take the cold path and are dropped and counted (see
//!   the vfork section below).
//! * Sites: records carry the runtime's own copy of a woven site (see
//!   `site::owned`), so a `dlclose`d library's records are formatted without
//!   reading its memory.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};
use std::sync::atomic::{compiler_fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use crate::clock::{self, Epoch, Timebase};
use crate::decode::{DecodeContext, ThreadDecoder};
use crate::event::{Kind, RawEvent};
use crate::instance;
use crate::options::{self, LogEvent, LogFormat, Options};
use crate::perfetto::PerfettoWriter;
use crate::process_info;
use crate::sampler;
use crate::signals;
use crate::site::Site;
use crate::trace_file::{Limits, TraceFile};
use crate::trace_writer::TraceWriter;
use crate::writer::{write_json_string, ChromeJsonWriter, Layout, Sink};

/// Records per thread chunk (16 bytes each: 1 MiB per thread).
pub const CHUNK_RECORDS: usize = 64 * 1024;

/// Events that could not be recorded, or were recorded and never handed to
/// the writer.
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Events the trace writer could not write (an I/O error, an exit without
/// a matching enter): a copy of its count, kept by the holder of the
/// output lock.
static WRITER_LOST: AtomicU64 = AtomicU64::new(0);

/// Set once the final flush has taken every record it will.
static TRACE_DONE: AtomicBool = AtomicBool::new(false);

/// Of [`DROPPED`]: events recorded after a fatal signal, while the runtime
/// completed the trace (see [`Slot::cut`]).
static AFTER_SIGNAL: AtomicU64 = AtomicU64::new(0);

fn drop_events(n: u64) {
    if n > 0 {
        DROPPED.fetch_add(n, Ordering::Relaxed);
    }
}

/// Events among `records`: a payload record belongs to the event before it.
fn events_in(records: &[RawEvent]) -> u64 {
    records.iter().filter(|r| !r.is_payload()).count() as u64
}

/// Number of events not in the trace so far, each counted once as an
/// event (not as records, lines or bytes): recorded after the final flush
/// (also by threads still running when the process ends), recorded while
/// thread-local storage was already torn down, exits without a matching
/// enter, and events the file could not take (a full disk).
pub fn dropped_events() -> u64 {
    count_after_finish();
    DROPPED.load(Ordering::Relaxed) + WRITER_LOST.load(Ordering::Relaxed)
}

/// Once the trace is complete, counts the records threads have published
/// since (the ones still in their chunks; a later hand-off or thread exit
/// counts only what comes after).
fn count_after_finish() {
    if !TRACE_DONE.load(Ordering::Acquire) {
        return;
    }
    let Some(rt) = RUNTIME.get() else { return };
    let _masked = signals::Masked::all();
    count_published_after_finish(&mut rt.registry());
}

/// [`DROPPED`] when the trace's closing record was written.
static DROPPED_AT_CLOSE: AtomicU64 = AtomicU64::new(0);

/// Runs last in the process (`.fini_array`), after the exit handlers and
/// C++ static destructors that come after the final flush: says once how
/// many events were recorded after the trace was complete, which are
/// counted but not in it.
extern "C" fn report_late_events() {
    let _errno = crate::errno::Kept::now();
    let _ = catch_unwind(|| {
        if !TRACE_DONE.load(Ordering::Acquire) || in_vfork_child() {
            return;
        }
        let Some(rt) = RUNTIME.get() else { return };
        let _masked = signals::Masked::all();
        // Without waiting: a thread still running may hold the lock.
        if let Ok(mut reg) = rt.registry.try_lock() {
            count_published_after_finish(&mut reg);
        }
        let late = DROPPED
            .load(Ordering::Relaxed)
            .saturating_sub(DROPPED_AT_CLOSE.load(Ordering::Relaxed));
        if late > 0 {
            crate::shield::stderr_line(format_args!(
                "perfflow: {late} events were recorded after the trace was complete (by exit \
                 handlers or static destructors that ran after it, or threads still running) \
                 and are not in it"
            ));
        }
    });
}

#[used]
#[link_section = ".fini_array"]
static REPORT_LATE_EVENTS: extern "C" fn() = report_late_events;

/// Counts the records threads have published since the trace was
/// complete; `reg` is the registry, locked.
fn count_published_after_finish(reg: &mut Registry) {
    for slot in reg.slots.iter_mut() {
        // SAFETY: registered buffers are live.
        let b = unsafe { slot.buf.as_ref() };
        let len = b.len(Ordering::Acquire);
        if len > slot.drained {
            // SAFETY: published up to `len` (Acquire above); the chunk is
            // replaced only under the registry lock, held here.
            drop_events(events_in(unsafe { b.chunk().records(slot.drained, len) }));
            slot.drained = len;
        }
    }
}

/// Chunks allocated and not freed.
static CHUNKS_LIVE: AtomicUsize = AtomicUsize::new(0);

/// The most chunks allocated at once.
static CHUNKS_PEAK: AtomicUsize = AtomicUsize::new(0);

/// The most bytes of record chunks the process held at once (threads'
/// chunks, chunks waiting for the writer, spares).
pub fn buffer_bytes_peak() -> u64 {
    (CHUNKS_PEAK.load(Ordering::Relaxed) * Chunk::layout().size()) as u64
}

/// A chunk of [`CHUNK_RECORDS`] records.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Chunk(NonNull<RawEvent>);

// SAFETY: a chunk is plain memory; who may touch it is decided by the
// protocol above (its owner thread, or whoever holds its queue entry).
unsafe impl Send for Chunk {}

impl Chunk {
    fn layout() -> std::alloc::Layout {
        // CHUNK_RECORDS * 16 bytes cannot overflow.
        std::alloc::Layout::array::<RawEvent>(CHUNK_RECORDS)
            .unwrap_or_else(|_| std::alloc::Layout::new::<RawEvent>())
    }

    /// Allocates a chunk, `None` when memory is exhausted.
    fn allocate() -> Option<Chunk> {
        // SAFETY: the layout has a non-zero size. The memory is left
        // uninitialised; only slots below a published length are ever
        // read, and each of those was written first.
        let chunk = NonNull::new(unsafe { std::alloc::alloc(Self::layout()) }.cast()).map(Chunk)?;
        let live = CHUNKS_LIVE.fetch_add(1, Ordering::Relaxed) + 1;
        CHUNKS_PEAK.fetch_max(live, Ordering::Relaxed);
        Some(chunk)
    }

    /// Allocates a chunk and touches every page of it, so the thread that
    /// fills it later takes no page faults; `None` when memory is exhausted.
    fn allocate_warm() -> Option<Chunk> {
        let chunk = Chunk::allocate()?;
        // SAFETY: the whole allocation is writable; zeroes are valid bytes
        // for records, which are plain integers.
        unsafe { std::ptr::write_bytes(chunk.0.as_ptr().cast::<u8>(), 0, Self::layout().size()) };
        Some(chunk)
    }

    /// Frees the chunk.
    ///
    /// # Safety
    /// Nothing may refer to the chunk any more.
    unsafe fn free(self) {
        // SAFETY: allocated in `allocate` with the same layout; the caller
        // promises this is the last reference.
        unsafe { std::alloc::dealloc(self.0.as_ptr().cast(), Self::layout()) };
        CHUNKS_LIVE.fetch_sub(1, Ordering::Relaxed);
    }

    /// The records `from..upto`.
    ///
    /// # Safety
    /// The records must be published (written before a Release store of a
    /// length at least `upto` that the caller observed with Acquire, or
    /// written by the caller) and not written again while the slice lives.
    unsafe fn records<'a>(self, from: usize, upto: usize) -> &'a [RawEvent] {
        let upto = upto.min(CHUNK_RECORDS);
        let from = from.min(upto);
        // SAFETY: slots below a published length are initialised and no
        // longer written; the range is inside the allocation.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().add(from), upto - from) }
    }
}

/// One thread's current chunk and its published length, kept as two
/// pointers so that the hot path's store is a compare, two stores and an
/// add: `at`, the next free slot, and `end`, one past the chunk's last slot.
pub(crate) struct ThreadBuffer {
    /// One past the last slot of the chunk being filled. Replaced only by
    /// the owner thread, under the registry lock; read by others only under
    /// that lock.
    end: AtomicPtr<RawEvent>,
    /// The next free slot of the chunk: the records below it are published
    /// (see the protocol above).
    at: AtomicPtr<RawEvent>,
}

impl ThreadBuffer {
    /// Allocates a buffer around `chunk`.
    fn allocate(chunk: Chunk) -> Option<NonNull<ThreadBuffer>> {
        let start = chunk.0.as_ptr();
        let buf = Box::new(ThreadBuffer {
            // SAFETY: one past the end of the chunk's allocation.
            end: AtomicPtr::new(unsafe { start.add(CHUNK_RECORDS) }),
            at: AtomicPtr::new(start),
        });
        NonNull::new(Box::into_raw(buf))
    }

    fn chunk(&self) -> Chunk {
        // `end` is never null: set one past an allocated chunk and only
        // replaced by others of the same kind.
        let start = self.end.load(Ordering::Relaxed).wrapping_sub(CHUNK_RECORDS);
        Chunk(NonNull::new(start).unwrap_or(NonNull::dangling()))
    }

    /// Records published in the chunk, `at` read with `order` (Acquire to
    /// read them from another thread, under the registry lock).
    fn len(&self, order: Ordering) -> usize {
        let at = self.at.load(order) as usize;
        let start = self.chunk().0.as_ptr() as usize;
        at.wrapping_sub(start) / std::mem::size_of::<RawEvent>()
    }

    /// Sets the published length to `n` (at most [`CHUNK_RECORDS`]; owner
    /// thread, or the forking thread in the child).
    fn set_len(&self, n: usize) {
        let start = self.chunk().0.as_ptr();
        self.at
            .store(start.wrapping_add(n.min(CHUNK_RECORDS)), Ordering::Relaxed);
    }

    /// Makes `fresh` the chunk being filled, empty (owner thread, under the
    /// registry lock).
    fn replace_chunk(&self, fresh: Chunk) {
        let start = fresh.0.as_ptr();
        self.end
            .store(start.wrapping_add(CHUNK_RECORDS), Ordering::Relaxed);
        self.at.store(start, Ordering::Relaxed);
    }

    /// Appends one record if there is room (owner thread only).
    #[inline(always)]
    fn push(&self, ev: RawEvent) -> bool {
        let at = self.at.load(Ordering::Relaxed);
        if at >= self.end.load(Ordering::Relaxed) {
            return false;
        }
        // SAFETY: `at` is below `end`, so the slot is inside the chunk; it
        // is above the published length, so no other thread reads it. Only
        // this thread replaces the chunk.
        unsafe {
            at.write(ev);
            self.at.store(at.add(1), Ordering::Release);
        }
        true
    }

    /// Appends an event and its payload record if both fit (owner thread
    /// only). One Release store publishes the two, so a reader sees both or
    /// neither, and a chunk never ends between them.
    #[inline(always)]
    fn push_pair(&self, ev: RawEvent, payload: RawEvent) -> bool {
        let at = self.at.load(Ordering::Relaxed);
        if self.end.load(Ordering::Relaxed) as usize - (at as usize)
            < 2 * std::mem::size_of::<RawEvent>()
        {
            return false;
        }
        // Before the records, so that whoever sees them (after the Release
        // store of the length below) sees the flag too.
        if !PAYLOADS_RECORDED.load(Ordering::Relaxed) {
            PAYLOADS_RECORDED.store(true, Ordering::Relaxed);
        }
        // SAFETY: two slots are free below `end`, so both are inside the
        // chunk; they are above the published length, so no other thread
        // reads them.
        unsafe {
            at.write(ev);
            at.add(1).write(payload);
            self.at.store(at.add(2), Ordering::Release);
        }
        true
    }
}

/// Set (for good) when the first payload record is stored. Until then no
/// event has a payload after it, and the writer's decoder skips looking
/// for one (see [`DecodeContext::payloads`]).
static PAYLOADS_RECORDED: AtomicBool = AtomicBool::new(false);

/// [`Local::gate`]: set while the hot path of this thread is between
/// taking an event's timestamp and publishing it. An event recorded then
/// can only come from a signal handler that interrupted it, and is dropped
/// and counted (see [`Local::push`]).
const PUSHING: u8 = 1;
/// [`Local::gate`]: the thread has no buffer (before its first event, in a
/// vfork child, or after its thread-locals are gone).
const NO_BUFFER: u8 = 2;
/// [`Local::gate`]: an event needs more than a TSC stamp and a store (see
/// [`PLAIN_TSC`]).
const NOT_PLAIN_TSC: u8 = 4;

/// This thread's handle on its buffer.
struct Local {
    /// Changed only through [`Local::set_buf`], which keeps `gate` in step.
    buf: Cell<*mut ThreadBuffer>,
    /// Set while this thread runs a cold path of the runtime (and for the
    /// whole life of the runtime's own threads).
    busy: Cell<bool>,
    /// [`PUSHING`], [`NO_BUFFER`] and [`NOT_PLAIN_TSC`]. Zero when the next
    /// event takes the common case, which then tests this one byte (see
    /// [`record`]). Only this thread changes it; a signal handler on this
    /// thread that records leaves it as it found it.
    gate: Cell<u8>,
    /// The stack pointer of the store that set [`PUSHING`]: set before the
    /// flag, and put back as it was after the flag is cleared (so that a
    /// signal handler that stores between the two, finding the flag clear,
    /// leaves the value of the store it interrupted). A store that finds
    /// the flag set from a frame no deeper than this is not inside a signal
    /// handler that interrupted that store, which was left for good (the
    /// handler jumped out with `siglongjmp`). See [`Local::push`].
    push_sp: Cell<usize>,
}

/// Less than the stack a signal handler's frame takes below the frame it
/// interrupts (the kernel's signal frame alone: over 1 KiB on x86-64 with
/// its vector registers, over 4 KiB on AArch64), more than the runtime's
/// own frames between an entry point and [`Local::push`].
const SIGNAL_FRAME_MIN: usize = 1024;

/// The stack pointer, or near it.
#[inline(always)]
fn stack_pointer() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let sp: usize;
        // SAFETY: reads a register.
        unsafe {
            std::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags))
        };
        sp
    }
    #[cfg(target_arch = "aarch64")]
    {
        let sp: usize;
        // SAFETY: reads a register.
        unsafe {
            std::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags))
        };
        sp
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let here = 0u8;
        std::ptr::addr_of!(here) as usize
    }
}

impl Local {
    /// Makes `buf` (null for none) this thread's buffer. The gate is
    /// closed before a buffer goes and opened after one comes, so that a
    /// signal handler on this thread never finds it open without a buffer.
    fn set_buf(&self, buf: *mut ThreadBuffer) {
        if buf.is_null() {
            self.gate.set(self.gate.get() | NO_BUFFER);
            compiler_fence(Ordering::SeqCst);
            self.buf.set(buf);
            return;
        }
        self.buf.set(buf);
        compiler_fence(Ordering::SeqCst);
        let gate = if PLAIN_TSC.load(Ordering::Relaxed) {
            self.gate.get() & PUSHING
        } else {
            (self.gate.get() & PUSHING) | NOT_PLAIN_TSC
        };
        self.gate.set(gate);
    }

    /// Takes this thread's buffer away; returns it (null for none).
    fn take_buf(&self) -> *mut ThreadBuffer {
        let buf = self.buf.get();
        self.set_buf(ptr::null_mut());
        buf
    }

    fn set_pushing(&self, on: bool) {
        let gate = self.gate.get();
        self.gate
            .set(if on { gate | PUSHING } else { gate & !PUSHING });
    }

    /// Stores one event at `site` (and its payload) in `b`, this thread's
    /// buffer, its timestamp and payload taken by `stamp` once the store is
    /// guarded. Returns `Err` with what `stamp` took when the chunk is full
    /// (nothing was stored); [`PUSHING`] then stays set, and [`record_slow`]
    /// clears it once `busy` guards instead.
    ///
    /// Safe against a signal handler on this thread that records while it
    /// interrupts the store: the inner event is dropped and counted. It
    /// would otherwise land in the slot the interrupted store is about to
    /// write, or, when the handler runs between the timestamp and the
    /// store, land before an event stamped earlier than its own (time would
    /// go back on the thread). The flag is a plain thread-local; compiler
    /// fences keep its two stores around the timestamp and the store of the
    /// record, which is all a handler on the same thread needs (no lock, no
    /// atomic read-modify-write, no system call).
    #[inline(always)]
    fn push(
        &self,
        b: &ThreadBuffer,
        site: *const Site,
        kind: Kind,
        stamp: impl FnOnce() -> (u64, Option<RawEvent>),
    ) -> Result<(), (u64, Option<RawEvent>)> {
        let sp = stack_pointer();
        if self.gate.get() & PUSHING != 0 && sp + SIGNAL_FRAME_MIN <= self.push_sp.get() {
            // Inside a signal handler that interrupted a store of this
            // thread (a frame at least a signal frame below it).
            drop_events(1);
            return Ok(());
        }
        // Otherwise the store that set it was left for good: a handler
        // that interrupted it jumped out (`siglongjmp`) and never returned
        // to it; events go on from here.
        let outer_sp = self.push_sp.replace(sp);
        compiler_fence(Ordering::SeqCst);
        self.set_pushing(true);
        compiler_fence(Ordering::SeqCst);
        let (ts, payload) = stamp();
        let ev = RawEvent::new(ts, site, kind);
        let stored = match payload {
            Some(payload) => b.push_pair(ev, payload),
            None => b.push(ev),
        };
        if !stored {
            return Err((ts, payload));
        }
        compiler_fence(Ordering::SeqCst);
        self.set_pushing(false);
        compiler_fence(Ordering::SeqCst);
        self.push_sp.set(outer_sp);
        Ok(())
    }
}

thread_local! {
    /// No destructor (see [`LocalGuard`]): the hot path reads it without
    /// a check of its registration state, and touching it never allocates.
    static LOCAL: Local = const {
        Local {
            buf: Cell::new(ptr::null_mut()),
            busy: Cell::new(false),
            gate: Cell::new(NO_BUFFER | NOT_PLAIN_TSC),
            push_sp: Cell::new(0),
        }
    };
}

/// Gives this thread's buffer back when the thread ends. A thread-local
/// of its own, touched when the thread registers its buffer, so that
/// [`LOCAL`] needs no destructor.
struct LocalGuard;

impl Drop for LocalGuard {
    fn drop(&mut self) {
        // The process's first thread keeps its buffer. glibc's `exit()`
        // ends the calling thread's thread-locals before it runs the exit
        // handlers, and those the program registered after its first
        // event (an `MPI_Finalize`, results written at exit) run before the
        // runtime's final flush, which takes the buffer's records. When
        // that thread ends by `pthread_exit` instead, the process goes on:
        // its records are taken by the periodic and final flushes, and its
        // slices still open end at the final flush.
        if current_tid() == std::process::id() {
            return;
        }
        let _ = LOCAL.try_with(|local| {
            // `busy` stays set: what the thread records from now on (in
            // other thread-locals' destructors) is dropped and counted.
            local.busy.set(true);
            if let Some(buf) = NonNull::new(local.take_buf()) {
                let _ = catch_unwind(AssertUnwindSafe(|| retire(buf)));
            }
        });
    }
}

thread_local! {
    static GUARD: LocalGuard = const { LocalGuard };
}

/// Registry entry of one live thread; only touched under the registry lock.
struct Slot {
    buf: NonNull<ThreadBuffer>,
    /// Identifies the thread's decoder in [`Output`].
    id: u64,
    tid: u32,
    /// Records of the current chunk already formatted (by a flush).
    drained: usize,
    /// Set when the thread handed a chunk over while the final flush was
    /// under way: the flush takes that one chunk, later ones are dropped.
    late_chunk: bool,
    /// Set by a final flush after a fatal signal: the thread's chunk and
    /// its published length when the signal came. Records after that
    /// exist only because the runtime delays the process's end; they are
    /// counted as dropped, not formatted.
    cut: Option<(Chunk, usize)>,
}

impl Slot {
    /// The end of the records `from..len` of `chunk` that the trace takes:
    /// `len`, or with a cut the records before it; the rest are counted as
    /// dropped.
    ///
    /// # Safety
    /// `chunk` must be published up to `len` (see [`Chunk::records`]).
    unsafe fn before_cut(&self, chunk: Chunk, from: usize, len: usize) -> usize {
        let upto = match self.cut {
            None => return len,
            Some((at, cut)) if at == chunk => cut.max(from).min(len),
            Some(_) => from,
        };
        // SAFETY: the caller's promise.
        let after = events_in(unsafe { chunk.records(upto, len) });
        drop_events(after);
        AFTER_SIGNAL.fetch_add(after, Ordering::Relaxed);
        upto
    }
}

// SAFETY: the buffer pointer is only dereferenced under the registry lock
// (or by its owner thread following the protocol above).
unsafe impl Send for Slot {}

/// A chunk handed over by its thread, or the last records of a thread
/// that ended, waiting to be formatted.
struct Full {
    id: u64,
    tid: u32,
    held: Held,
    /// Set when the thread has exited: its open slices end at this
    /// monotonic time, and its name (read while it still existed) is
    /// written.
    retired: Option<(u64, Option<String>)>,
}

/// Where the records of a [`Full`] are.
enum Held {
    /// Records `from..upto` of a chunk, which is reused once they are
    /// formatted.
    Chunk {
        chunk: Chunk,
        from: usize,
        upto: usize,
    },
    /// A copy of the few records a thread left when it ended (at most
    /// [`COPIED_AT_EXIT`]), whose chunk went back to the spares at once.
    Copied(Box<[RawEvent]>),
}

/// Most records a thread that ends hands over as a copy rather than with
/// its chunk (4 KiB). A short-lived thread (one request of a
/// thread-per-request server) records a few events: its 1 MiB chunk is
/// reused by the next thread at once, instead of waiting in the queue
/// until the writer has formatted those few.
const COPIED_AT_EXIT: usize = 256;

/// Bytes of copies of ended threads' records the queue holds at most: an
/// ending thread whose copy would pass this drops its records, counted,
/// rather than wait for the writer. A thread-per-request server that ends
/// threads faster than the writer formats them would otherwise keep them
/// all alive, waiting, until it cannot start new ones.
const MAX_COPIED_BYTES: usize = 16 << 20;

/// Queue entries beyond which an ending thread waits for the writer all the
/// same (each one, copy aside, is about a hundred bytes).
const MAX_QUEUED_EXITS: usize = 1 << 16;

impl Full {
    /// The records to format.
    ///
    /// # Safety
    /// A chunk's records must be published up to `upto` (see
    /// [`Chunk::records`]): true of every queued chunk.
    unsafe fn records(&self) -> &[RawEvent] {
        match &self.held {
            // SAFETY: the caller's promise.
            Held::Chunk { chunk, from, upto } => unsafe { chunk.records(*from, *upto) },
            Held::Copied(records) => records,
        }
    }

    /// The chunk to reuse once the records are formatted, if they are in
    /// one.
    fn chunk(&self) -> Option<Chunk> {
        match self.held {
            Held::Chunk { chunk, .. } => Some(chunk),
            Held::Copied(_) => None,
        }
    }
}

/// Whether a writer thread formats handed-over chunks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum WriterState {
    /// Not started yet (or not in this forked child yet).
    Idle,
    /// Running: hand-offs queue their chunk and return.
    Running,
    /// Could not be started: threads format their own chunks.
    Unavailable,
}

/// Chunks handed over and not yet formatted beyond which a handing-over
/// thread waits for the writer (4 MiB of records).
const MAX_QUEUED: usize = 4;

/// Spare chunks kept for reuse; more are freed.
const MAX_SPARES: usize = 8;

/// Spare chunks the writer thread keeps ready, their pages already
/// touched, so that a thread swapping in a fresh chunk takes no page faults
/// on its recording path.
const WARM_SPARES: usize = 2;

/// Live threads and handed-over chunks, under the registry lock. The lock
/// is held only for short bookkeeping, never while formatting a queued
/// chunk.
struct Registry {
    slots: Vec<Slot>,
    /// Use [`Registry::enqueue`] and [`Registry::dequeue`], which keep
    /// `queued_chunks` and `queued_copies`.
    queue: VecDeque<Full>,
    /// Entries of `queue` that hold a chunk.
    queued_chunks: usize,
    /// Bytes of the copies `queue` holds.
    queued_copied_bytes: usize,
    spares: Vec<Chunk>,
    next_id: u64,
    writer: WriterState,
    /// Set when the final flush begins: the writer stops, and each thread
    /// may queue one more chunk for the flush to take.
    closing: bool,
    /// Set when the final flush has taken every record it will; later
    /// records are dropped and counted.
    finished: bool,
}

impl Registry {
    fn enqueue(&mut self, full: Full) {
        match &full.held {
            Held::Chunk { .. } => self.queued_chunks += 1,
            Held::Copied(records) => self.queued_copied_bytes += std::mem::size_of_val(&**records),
        }
        self.queue.push_back(full);
    }

    fn dequeue(&mut self) -> Option<Full> {
        let full = self.queue.pop_front()?;
        match &full.held {
            Held::Chunk { .. } => self.queued_chunks -= 1,
            Held::Copied(records) => self.queued_copied_bytes -= std::mem::size_of_val(&**records),
        }
        Some(full)
    }

    fn slot_of(&self, buf: NonNull<ThreadBuffer>) -> Option<usize> {
        self.slots.iter().position(|s| s.buf == buf)
    }

    /// A chunk for a thread to fill next.
    fn fresh_chunk(&mut self) -> Option<Chunk> {
        self.spares.pop().or_else(Chunk::allocate)
    }

    /// Takes back a formatted (or discarded) chunk.
    fn recycle(&mut self, chunk: Chunk) {
        if self.spares.len() < MAX_SPARES {
            self.spares.push(chunk);
        } else {
            // SAFETY: the chunk came out of a queue entry that is gone.
            unsafe { chunk.free() };
        }
    }
}

/// What the options decided, kept for the life of the process (and for a
/// forked child, which opens its own file).
struct Config {
    options: Options,
    instance_path: String,
    hostname: String,
    /// The clock pairing the events are converted with.
    epoch: Epoch,
}

impl Config {
    fn path(&self, pid: u32) -> PathBuf {
        options::trace_path(&self.options, &self.instance_path, &self.hostname, pid)
    }

    /// Creates the trace file of process `pid` and writes its header, or
    /// says once why it cannot and returns `None` (tracing is then off).
    fn open_sink(&self, pid: u32) -> Option<TraceWriter<TraceFile>> {
        let path = self.path(pid);
        let dir = &self.options.log_dir;
        if !dir.as_os_str().is_empty() {
            if let Err(e) = std::fs::create_dir_all(dir) {
                crate::shield::stderr_line(format_args!("perfflow: cannot create log-dir {}: {e}; tracing is off and the program runs on",
                    dir.display()
                ));
                return None;
            }
        }
        let created = create_unique(&path, pid)
            .and_then(|(file, made)| TraceFile::new(file, made.clone()).map(|file| (file, made)));
        match created {
            Ok((mut file, made)) => {
                file.limit(Limits {
                    max_size: self.options.max_trace_size,
                    min_free: self.options.min_free_space,
                });
                let layout = match self.options.log_format {
                    LogFormat::Array => Some(Layout::Array),
                    LogFormat::Object => Some(Layout::Object {
                        other_data: self.other_data(pid),
                    }),
                    LogFormat::Perfetto => None,
                };
                let mut w = match layout {
                    Some(layout) => {
                        TraceWriter::Json(ChromeJsonWriter::with_layout(file, pid, layout))
                    }
                    None => TraceWriter::Perfetto(PerfettoWriter::new(file, pid, self.epoch)),
                };
                let exe = process_name();
                w.process_name(pid, &exe);
                let rank = process_info::rank_from(|name| std::env::var(name).ok());
                let command = process_info::command_line(std::env::args_os());
                let about = process_info::metadata(
                    &self.hostname,
                    &exe,
                    rank,
                    &command,
                    &self.epoch,
                    process_info::clock_error(),
                    &self.options.labels,
                );
                w.metadata_args(b"perfflow_process", pid, &about);
                // The opening reaches the file now: a process killed at any
                // later moment leaves a trace our tools read as cut short.
                w.write_pending();
                if w.has_failed() && std::fs::metadata(&made).is_ok_and(|m| m.len() == 0) {
                    // Not a byte of the opening could be written (a full
                    // disk, `min-free-space`): an empty file would only stop
                    // the tools that read the run's directory. The writer
                    // stays, failed, and counts the events as dropped.
                    let _ = std::fs::remove_file(&made);
                }
                Some(w)
            }
            Err(e) => {
                crate::shield::stderr_line(format_args!(
                    "perfflow: cannot create {}: {e}; tracing is off and the program runs on",
                    path.display()
                ));
                None
            }
        }
    }

    /// `otherData` of the object layout.
    fn other_data(&self, pid: u32) -> String {
        let mut out = Vec::new();
        let field = |out: &mut Vec<u8>, key: &[u8], value: &str| {
            out.extend_from_slice(if out.is_empty() { b"{" } else { b"," });
            write_json_string(out, key);
            out.push(b':');
            write_json_string(out, value.as_bytes());
        };
        field(&mut out, b"name", &self.options.name);
        field(&mut out, b"hostname", &self.hostname);
        field(&mut out, b"pid", &pid.to_string());
        field(&mut out, b"instance_path", &self.instance_path);
        field(&mut out, b"perfflow_version", env!("CARGO_PKG_VERSION"));
        field(
            &mut out,
            b"log_event",
            match self.options.log_event {
                LogEvent::Verbose => "Verbose",
                LogEvent::Compact => "Compact",
            },
        );
        out.push(b'}');
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// The trace file and the decoding state, under the output lock.
struct Output {
    sink: Option<TraceWriter<TraceFile>>,
    cx: DecodeContext,
    /// Per-thread decoders by slot id.
    decoders: HashMap<u64, ThreadDecoder>,
    finished: bool,
    /// Process that owns `sink`.
    pid: u32,
    config: Config,
    /// In a forked child: the monotonic time of the fork, until the child's
    /// own file is created (on its first written event, so a child that
    /// only calls exec leaves no file behind).
    forked_at: Option<u64>,
}

impl Output {
    /// The writer, creating a forked child's file on first use. In the new
    /// file, slices the child inherited open from its parent begin at the
    /// fork.
    fn sink(&mut self) -> Option<&mut TraceWriter<TraceFile>> {
        if let Some(fork_ns) = self.forked_at.take() {
            CHILD_FILE_PENDING.store(false, Ordering::Relaxed);
            self.sink = self.config.open_sink(self.pid);
            if self.sink.is_some() {
                start_writer();
                start_services(&self.config.options);
            }
            if let Some(sink) = self.sink.as_mut() {
                for decoder in self.decoders.values_mut() {
                    decoder.reopen_after_fork(fork_ns, &mut self.cx, sink);
                }
            }
        }
        self.sink.as_mut()
    }

    fn writable(&mut self) -> bool {
        !self.finished && self.sink().is_some_and(|s| s.is_open())
    }

    /// Formats `records` of thread `id`, or counts them as dropped when the
    /// trace is complete or there is no file.
    ///
    /// # Safety
    /// As [`ThreadDecoder::decode`]: every site pointer is live.
    unsafe fn format(&mut self, id: u64, tid: u32, records: &[RawEvent]) {
        if records.is_empty() {
            return;
        }
        if !self.writable() {
            drop_events(events_in(records));
            return;
        }
        let Output {
            sink, cx, decoders, ..
        } = self;
        // The records lie before the calibration point taken now.
        cx.time.calibrate();
        let decoder = decoders
            .entry(id)
            .or_insert_with(|| ThreadDecoder::new(tid));
        if let Some(sink) = sink.as_mut() {
            // Read after the records were acquired (their owner published
            // them, or queued their chunk under the registry lock, after it
            // set the flag for any payload among them).
            cx.payloads = PAYLOADS_RECORDED.load(Ordering::Relaxed);
            // SAFETY: the caller's promise.
            unsafe { sink.decode(decoder, records, cx) }
            cx.payloads = true;
        }
        self.note_lost();
    }

    /// Publishes the writer's count of events it could not write.
    fn note_lost(&self) {
        if let Some(sink) = self.sink.as_ref() {
            WRITER_LOST.store(sink.events_lost(), Ordering::Relaxed);
        }
    }

    /// Ends the slices thread `id` left open at monotonic `now_ns`, names
    /// the thread, and forgets its decoder when `forget`.
    fn close_thread(&mut self, id: u64, now_ns: u64, name: Option<&str>, forget: bool) {
        if !self.finished {
            let needs_file = self.decoders.get(&id).is_some_and(|d| d.open_slices() > 0);
            if needs_file || self.sink.is_some() {
                let _ = self.sink();
            }
            let Output {
                sink, cx, decoders, ..
            } = self;
            if let (Some(sink), Some(decoder)) = (sink.as_mut(), decoders.get_mut(&id)) {
                cx.time.calibrate();
                decoder.close_open(now_ns, cx, sink);
                if let Some(name) = name {
                    sink.thread_name(decoder.tid(), name);
                }
            }
            self.note_lost();
        }
        if forget {
            self.decoders.remove(&id);
        }
    }

    /// Formats one handed-over chunk.
    fn format_full(&mut self, full: &Full) {
        // SAFETY: a queued chunk was published up to `upto` by its owner
        // before it queued it under the registry lock (which this thread
        // took to dequeue it), and nobody writes it until it is recycled.
        // Site pointers: the C ABI contract.
        unsafe { self.format(full.id, full.tid, full.records()) };
        if let Some((now_ns, name)) = &full.retired {
            self.close_thread(full.id, *now_ns, name.as_deref(), true);
        }
    }
}

/// Creates the trace file without ever truncating an existing one: another
/// live process may be writing it (a forked or started child whose file
/// name has no pid). If `path` exists, the pid goes before the extension
/// (`.pfw`, `.pftrace`), and one
/// line on stderr says where the trace went.
fn create_unique(path: &Path, pid: u32) -> std::io::Result<(File, PathBuf)> {
    let create = |p: &Path| File::options().write(true).create_new(true).open(p);
    match create(path) {
        Ok(file) => Ok((file, path.to_path_buf())),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (stem, ext) = name.rsplit_once('.').unwrap_or((&name, "pfw"));
            // `.<pid>.<ext>`, then `.<pid>.2.<ext>` and on: the same pid
            // comes back (pid namespaces sharing a directory, an exec
            // chain, pids reused in a long workflow).
            let mut last = e;
            for n in 1..=MAX_NAME_TRIES {
                let other = if n == 1 {
                    path.with_file_name(format!("{stem}.{pid}.{ext}"))
                } else {
                    path.with_file_name(format!("{stem}.{pid}.{n}.{ext}"))
                };
                match create(&other) {
                    Ok(file) => {
                        crate::shield::stderr_line(format_args!(
                            "perfflow: {} exists; this process ({pid}) writes {}",
                            path.display(),
                            other.display()
                        ));
                        return Ok((file, other));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = e,
                    Err(e) => {
                        return Err(std::io::Error::new(
                            e.kind(),
                            format!("{}: {e}", other.display()),
                        ))
                    }
                }
            }
            Err(std::io::Error::new(
                last.kind(),
                format!(
                    "{} and {MAX_NAME_TRIES} names after it exist",
                    path.display()
                ),
            ))
        }
        Err(e) => Err(e),
    }
}

/// Names [`create_unique`] tries after the trace's own.
const MAX_NAME_TRIES: u32 = 1000;

/// The process-wide runtime, created by the first event.
struct Runtime {
    /// Taken before `registry` whenever both are held.
    output: Mutex<Output>,
    registry: Mutex<Registry>,
    /// Wakes the writer thread when a chunk is queued or the trace ends.
    wake: Condvar,
    /// Wakes threads waiting for the queue to shrink (back-pressure).
    drained: Condvar,
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// Threads other than the writer waiting for the output lock.
static OUTPUT_WANTED: AtomicUsize = AtomicUsize::new(0);

/// Set in a forked child until its own trace file exists: its first
/// recorded event creates the file and starts its writer and signal
/// watcher (see [`fork_child`]).
static CHILD_FILE_PENDING: AtomicBool = AtomicBool::new(false);

/// Cleared when events must not be recorded at all: `log-enable=False`, or
/// no trace file could be created. The hot path reads it first, and woven
/// code reads it before calling the runtime at all (an `i8`: `AtomicBool`
/// has the layout of `u8`), so a program with tracing off pays a load and
/// a branch per advice. It starts set, so the first advice starts the
/// runtime.
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static perfflow_enabled: AtomicBool = AtomicBool::new(true);

use perfflow_enabled as ENABLED;

/// Set by `cpu-mem-usage=True`: `around` enters and exits are followed by a
/// usage payload (see [`record_usage`]). Read only when [`ENABLED`] is set.
static CPU_MEM_USAGE: AtomicBool = AtomicBool::new(false);

/// Turns the usage payloads of `cpu-mem-usage` on or off; set once, when
/// the runtime starts.
pub(crate) fn set_cpu_mem_usage(on: bool) {
    CPU_MEM_USAGE.store(on, Ordering::Relaxed);
}

/// Set once the runtime has started when an event needs nothing but a TSC
/// stamp and a store: tracing is on ([`ENABLED`]), `cpu-mem-usage` is off
/// and the clock is the TSC. A thread's [`Local::gate`] carries it (as
/// [`NOT_PLAIN_TSC`] when unset) from the moment the thread gets its
/// buffer, so the hot path tests the gate alone (see [`record`]); it is
/// never cleared, since none of the three changes after start-up.
static PLAIN_TSC: AtomicBool = AtomicBool::new(false);

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its full length.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let host = String::from_utf8_lossy(&buf[..end]).replace('/', "_");
    if rc != 0 || host.is_empty() {
        "localhost".to_string()
    } else {
        host
    }
}

fn read_comm(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let name = text.trim_end_matches('\n');
    (!name.is_empty()).then(|| name.to_string())
}

/// Program name for the `process_name` metadata: the base name of argv[0]
/// (not truncated, unlike `comm`), else `comm`.
fn process_name() -> String {
    let argv0 = std::fs::read("/proc/self/cmdline").ok().and_then(|cmd| {
        let first = cmd.split(|&b| b == 0).next()?;
        let base = first.rsplit(|&b| b == b'/').next()?;
        (!base.is_empty()).then(|| String::from_utf8_lossy(base).into_owned())
    });
    argv0
        .or_else(|| read_comm("/proc/self/comm"))
        .unwrap_or_else(|| "unknown".to_string())
}

fn thread_name(tid: u32) -> Option<String> {
    read_comm(&format!("/proc/self/task/{tid}/comm"))
}

/// The calling thread's kernel id.
pub(crate) fn current_tid() -> u32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

extern "C" fn flush_at_exit() {
    let _errno = crate::errno::Kept::now();
    let _ = catch_unwind(finish);
}

/// Starts what runs beside a traced program: the watcher of fatal signals
/// and, with `sampler=True`, the metric sampler, which writes through the
/// runtime at once. Called once the runtime exists, and again in a forked
/// child when it creates its own trace.
fn start_services(options: &Options) {
    let signals: Vec<libc::c_int> = options.signals.iter().map(|s| s.number()).collect();
    signals::install(&signals);
    if options.sampler {
        sampler::start(options.sampler_interval, options.sampler_metrics.clone());
    }
}

impl Runtime {
    /// The runtime, started by the first caller; its service threads start
    /// right after it exists (cold paths only: first event, fork).
    fn get() -> &'static Runtime {
        static SERVICES: std::sync::Once = std::sync::Once::new();
        register_fork_handlers();
        let rt = RUNTIME.get_or_init(Runtime::start);
        SERVICES.call_once(|| {
            if ENABLED.load(Ordering::Relaxed) {
                let options = rt.output().config.options.clone();
                // The writer runs from the start: it writes what threads
                // publish every `flush-interval`, full chunk or not.
                start_writer();
                start_services(&options);
            }
        });
        rt
    }

    /// Starts tracing (cold, once per process): reads `PERFFLOW_OPTIONS`,
    /// works out the instance path, creates the trace file, and registers
    /// the exit handler ([`Runtime::get`] registered the fork handlers
    /// just before). Signal and sampler threads start in [`Runtime::get`]
    /// once the runtime exists, the writer thread at the first hand-off.
    fn start() -> Runtime {
        let (options, warnings) = Options::from_env();
        for warning in &warnings {
            crate::shield::stderr_line(format_args!("{warning}"));
        }
        let instance_path = instance::for_this_process().to_string();
        let config = Config {
            options,
            instance_path,
            hostname: hostname(),
            epoch: Epoch::capture(),
        };
        let pid = std::process::id();
        let mut cx = DecodeContext::new(config.epoch);
        cx.time = Timebase::start(config.epoch, clock::source());
        cx.compact = config.options.log_event == LogEvent::Compact;
        cx.flow_prefix = std::env::var_os("PERFFLOW_FLOW_PREFIX")
            .map(std::os::unix::ffi::OsStringExt::into_vec)
            .unwrap_or_default();
        set_cpu_mem_usage(config.options.cpu_mem_usage);
        let sink = if config.options.log_enable {
            config.open_sink(pid)
        } else {
            None
        };
        if sink.is_none() {
            ENABLED.store(false, Ordering::Relaxed);
        } else {
            PLAIN_TSC.store(
                !config.options.cpu_mem_usage && cx.time.is_tsc(),
                Ordering::Relaxed,
            );
            // Registered twice. glibc runs each exit handler once, on
            // whichever exiting thread takes it first; a second thread
            // calling `exit()` meanwhile takes the next ones and then ends
            // the process, cutting short the trace the first is completing.
            // With two registrations, the thread that takes the other one
            // waits for the completion on the output lock, then finds the
            // trace finished.
            // SAFETY: registering plain `extern "C"` functions is always
            // valid; glibc also accepts them from a shared library.
            unsafe {
                if libc::atexit(flush_at_exit) != 0 || libc::atexit(flush_at_exit) != 0 {
                    crate::shield::stderr_line(format_args!(
                        "perfflow: cannot register the exit handler; the trace may be incomplete"
                    ));
                }
            }
        }
        Runtime {
            output: Mutex::new(Output {
                sink,
                cx,
                decoders: HashMap::new(),
                finished: false,
                pid,
                config,
                forked_at: None,
            }),
            registry: Mutex::new(Registry {
                slots: Vec::new(),
                queue: VecDeque::new(),
                queued_chunks: 0,
                queued_copied_bytes: 0,
                spares: Vec::new(),
                next_id: 0,
                writer: WriterState::Idle,
                closing: false,
                finished: false,
            }),
            wake: Condvar::new(),
            drained: Condvar::new(),
        }
    }

    fn output(&self) -> MutexGuard<'_, Output> {
        self.output.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The output lock for a thread other than the writer: the writer,
    /// which may keep the lock through a long queue, hands it over after
    /// its current chunk.
    fn output_soon(&self) -> MutexGuard<'_, Output> {
        OUTPUT_WANTED.fetch_add(1, Ordering::AcqRel);
        let out = self.output();
        OUTPUT_WANTED.fetch_sub(1, Ordering::AcqRel);
        out
    }

    fn registry(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates and registers the calling thread's buffer.
    fn register(&self) -> Option<NonNull<ThreadBuffer>> {
        let tid = current_tid();
        let mut reg = self.registry();
        let chunk = reg.fresh_chunk()?;
        let Some(buf) = ThreadBuffer::allocate(chunk) else {
            reg.recycle(chunk);
            return None;
        };
        let id = reg.next_id;
        reg.next_id += 1;
        reg.slots.push(Slot {
            buf,
            id,
            tid,
            drained: 0,
            late_chunk: false,
            cut: None,
        });
        Some(buf)
    }

    /// Hands the calling thread's full chunk over and gives the thread an
    /// empty one. With a writer thread running, the chunk is queued for it;
    /// otherwise, or when the queue is long, this thread formats queued
    /// chunks itself.
    fn hand_off(&self, buf: NonNull<ThreadBuffer>) {
        // SAFETY: `buf` belongs to the calling thread, which is alive.
        let b = unsafe { buf.as_ref() };
        let mut reg = self.registry();
        if reg.writer == WriterState::Idle {
            drop(reg);
            start_writer();
            reg = self.registry();
        }
        let len = b.len(Ordering::Relaxed);
        let index = reg.slot_of(buf);
        let late = reg.closing && index.is_some_and(|i| reg.slots[i].late_chunk);
        let Some(index) = index.filter(|_| !reg.finished && !late) else {
            let drained = index.map_or(0, |i| reg.slots[i].drained);
            // SAFETY: this thread's own chunk, written by it up to `len`.
            drop_events(events_in(unsafe { b.chunk().records(drained, len) }));
            if let Some(i) = index {
                reg.slots[i].drained = 0;
            }
            b.set_len(0);
            return;
        };
        let Some(fresh) = reg.fresh_chunk() else {
            // Out of memory: the chunk's records are lost, the chunk reused.
            let drained = reg.slots[index].drained;
            // SAFETY: as above.
            drop_events(events_in(unsafe { b.chunk().records(drained, len) }));
            reg.slots[index].drained = 0;
            b.set_len(0);
            return;
        };
        let closing = reg.closing;
        let slot = &mut reg.slots[index];
        slot.late_chunk = closing;
        let full = Full {
            id: slot.id,
            tid: slot.tid,
            held: Held::Chunk {
                chunk: b.chunk(),
                from: slot.drained,
                // SAFETY: this thread's own chunk, written by it up to `len`.
                upto: unsafe { slot.before_cut(b.chunk(), slot.drained, len) },
            },
            retired: None,
        };
        slot.drained = 0;
        // Swapped under the lock: a flush reads the chunk pointer and the
        // length only under it.
        b.replace_chunk(fresh);
        reg.enqueue(full);
        let mut help = false;
        if closing {
            // The final flush is under way and takes this chunk: stop here
            // until it is done, so the flush does not compete for the CPU
            // with threads that would only record events it cannot take.
            reg = self
                .drained
                .wait_while(reg, |r| r.closing && !r.finished)
                .unwrap_or_else(|e| e.into_inner());
        } else {
            if reg.writer == WriterState::Running && reg.queued_chunks > MAX_QUEUED {
                // Back-pressure: wait until the writer is one chunk behind
                // the limit again (not until it has drained everything), so
                // both keep running.
                self.wake.notify_one();
                reg = self
                    .drained
                    .wait_while(reg, |r| {
                        r.queued_chunks > MAX_QUEUED
                            && r.writer == WriterState::Running
                            && !r.closing
                    })
                    .unwrap_or_else(|e| e.into_inner());
            }
            help = reg.writer != WriterState::Running && !reg.closing;
        }
        drop(reg);
        if help {
            self.format_queue(false);
        } else {
            self.wake.notify_one();
        }
    }

    /// Formats queued chunks in order until the queue is empty (or, for
    /// the writer thread, until the final flush begins). Two threads doing
    /// this at once take turns on the output lock, so chunks are formatted
    /// in the order they were queued. Returns as soon as the final flush
    /// begins, which takes the rest.
    fn format_queue(&self, until_closed: bool) {
        if until_closed {
            self.keep_spares_warm();
        }
        let mut out = self.output();
        let interval = out.config.options.flush_interval;
        let mut next_drain = Instant::now() + interval;
        loop {
            if until_closed && Instant::now() >= next_drain {
                self.drain_live(&mut out);
                next_drain = Instant::now() + interval;
            }
            let next = {
                let mut reg = self.registry();
                if reg.closing {
                    return;
                }
                reg.dequeue()
            };
            match next {
                Some(full) => {
                    out.format_full(&full);
                    if let Some(chunk) = full.chunk() {
                        self.registry().recycle(chunk);
                    }
                    // Freed before the file is lent out below: a fork then
                    // would leave the thread name to no thread of the child.
                    drop(full);
                    self.drained.notify_all();
                    if OUTPUT_WANTED.load(Ordering::Acquire) > 0 {
                        // Someone else needs the file (a fork, the sampler):
                        // let them have it between two chunks, however busy
                        // the recording threads keep the queue.
                        drop(out);
                        while OUTPUT_WANTED.load(Ordering::Acquire) > 0 {
                            std::thread::yield_now();
                        }
                        out = self.output();
                    }
                }
                None if until_closed => {
                    let reg = self.registry();
                    if reg.closing {
                        return;
                    }
                    drop(reg);
                    // Idle: what was formatted reaches the file now, not
                    // with the next chunk.
                    if let Some(sink) = out.sink.as_mut() {
                        sink.write_pending();
                    }
                    drop(out);
                    self.keep_spares_warm();
                    let reg = self.registry();
                    // Waiting on the registry lock only: never with the
                    // output lock held; at the latest until the next drain.
                    let wait = next_drain.saturating_duration_since(Instant::now());
                    let woken = self
                        .wake
                        .wait_timeout_while(reg, wait, |r| r.queue.is_empty() && !r.closing);
                    drop(woken);
                    out = self.output();
                }
                None => return,
            }
        }
    }
}

impl Runtime {
    /// Periodic flush (writer thread, output lock held): formats the
    /// records each live thread has published since the last look and
    /// writes them out. A thread with a chunk still queued is left for the
    /// next round, so its records stay in order. One thread at a time, the
    /// records are copied under the registry lock (a memory copy of at most
    /// one chunk) and formatted after it is released; `drained` remembers
    /// where the copy ended, so the chunk's later hand-off, the final flush
    /// and a fork start there.
    fn drain_live(&self, out: &mut Output) {
        // A calibration point per round, busy or idle (TSC clock).
        out.cx.time.calibrate();
        let ids: Vec<u64> = self.registry().slots.iter().map(|s| s.id).collect();
        let mut copied: Vec<RawEvent> = Vec::new();
        for id in ids {
            copied.clear();
            let tid = {
                let mut reg = self.registry();
                if reg.closing || reg.finished {
                    return;
                }
                if reg.queue.iter().any(|full| full.id == id) {
                    continue;
                }
                let Some(slot) = reg.slots.iter_mut().find(|s| s.id == id) else {
                    continue; // exited meanwhile: its records were queued
                };
                // SAFETY: registered buffers are live.
                let b = unsafe { slot.buf.as_ref() };
                let len = b.len(Ordering::Acquire);
                if len <= slot.drained {
                    continue;
                }
                // SAFETY: published up to `len` (Acquire above, pairing with
                // the owner's Release); the owner replaces the chunk only
                // under the registry lock, held here.
                copied.extend_from_slice(unsafe { b.chunk().records(slot.drained, len) });
                slot.drained = len;
                slot.tid
            };
            // SAFETY: site pointers: the C ABI contract.
            unsafe { out.format(id, tid, &copied) };
        }
        if let Some(sink) = out.sink.as_mut() {
            sink.write_pending();
        }
    }

    /// Tops the spare chunks up to [`WARM_SPARES`] (writer thread; only
    /// [`service_quiet`] is held while touching the memory, so a fork
    /// waits for the chunk to reach the spares).
    fn keep_spares_warm(&self) {
        let _quiet = service_quiet();
        while self.registry().spares.len() < WARM_SPARES {
            let Some(chunk) = Chunk::allocate_warm() else {
                return;
            };
            self.registry().recycle(chunk);
        }
    }
}

/// Starts the writer thread if none runs in this process yet; when it
/// cannot start, threads format their own chunks.
fn start_writer() {
    let Some(rt) = RUNTIME.get() else { return };
    {
        let mut reg = rt.registry();
        if reg.writer != WriterState::Idle {
            return;
        }
        reg.writer = WriterState::Running;
    }
    let spawned = signals::spawn_service("perfflow-writer", || {
        // Events recorded on this thread (a woven allocator) are dropped.
        let _ = LOCAL.try_with(|l| l.busy.set(true));
        if let Some(rt) = RUNTIME.get() {
            let _ = catch_unwind(AssertUnwindSafe(|| rt.format_queue(true)));
            // Ended by the final flush (or a panic): threads waiting for it
            // format their own chunks from now on.
            rt.registry().writer = WriterState::Unavailable;
            rt.drained.notify_all();
        }
    });
    if spawned.is_err() {
        rt.registry().writer = WriterState::Unavailable;
    }
}

/// Runs `write` on the trace writer, with the trace's time base (to put
/// event-clock stamps on the spans' time base), unless the trace is complete
/// or tracing is off; returns whether it ran. Used by the metric sampler.
pub(crate) fn with_sink(write: impl FnOnce(&mut TraceWriter<TraceFile>, &mut Timebase)) -> bool {
    let Some(rt) = RUNTIME.get() else {
        return false;
    };
    // Events recorded by this thread under the lock (a woven allocator)
    // must not try to take it again.
    let was_busy = LOCAL.try_with(|l| l.busy.replace(true)).ok();
    let written = {
        let mut out = rt.output_soon();
        if out.finished || out.pid != std::process::id() {
            false
        } else {
            let _ = out.sink();
            let Output { sink, cx, .. } = &mut *out;
            match sink.as_mut() {
                Some(sink) if sink.is_open() => {
                    cx.time.calibrate();
                    write(sink, &mut cx.time);
                    true
                }
                _ => false,
            }
        }
    };
    if let Some(was_busy) = was_busy {
        let _ = LOCAL.try_with(|l| l.busy.set(was_busy));
    }
    written
}

/// Final flush: formats every queued and published record and completes
/// the file. Runs from `atexit` (or a fatal signal); later calls do
/// nothing.
pub fn finish() {
    finish_before(None);
}

/// [`finish`] for a fatal signal, whose handler waits only so long: what
/// is not formatted within `limit` is counted as dropped (one stderr line
/// says so) and the file is completed all the same.
pub fn finish_within(limit: std::time::Duration) {
    finish_before(Instant::now().checked_add(limit));
}

fn finish_before(deadline: Option<Instant>) {
    if in_vfork_child() {
        // `exit()` in a vfork child: the trace is the parent's.
        return;
    }
    let Some(rt) = RUNTIME.get() else { return };
    // Events recorded by this thread while it holds the locks below must
    // not try to take them again.
    let masked = signals::Masked::all();
    let was_busy = LOCAL.try_with(|l| l.busy.replace(true)).ok();
    // The writer stops at its next chunk, and the queue stops growing but
    // for one chunk per thread.
    {
        let mut reg = rt.registry();
        reg.closing = true;
        if deadline.is_some() {
            // A fatal signal: the trace ends with what was recorded when it
            // came, as the process would have ended then untraced.
            for slot in &mut reg.slots {
                // SAFETY: registered buffers are live.
                let b = unsafe { slot.buf.as_ref() };
                slot.cut = Some((b.chunk(), b.len(Ordering::Acquire)));
            }
        }
    }
    rt.wake.notify_all();
    rt.drained.notify_all();
    let _ = catch_unwind(AssertUnwindSafe(|| finish_runtime(rt, deadline)));
    // Threads waiting in a hand-off for the end of the flush go on (even
    // had it failed), dropping and counting what they record from now on.
    rt.registry().finished = true;
    rt.drained.notify_all();
    if let Some(was_busy) = was_busy {
        let _ = LOCAL.try_with(|l| l.busy.set(was_busy));
    }
    drop(masked);
}

fn finish_runtime(rt: &Runtime, deadline: Option<Instant>) {
    let mut out = rt.output();
    if out.finished {
        return;
    }
    // Once past the deadline nothing more is formatted, for any thread (so
    // no decoder sees a thread's records with a gap): the rest is counted.
    let past = || deadline.is_some_and(|d| Instant::now() >= d);
    let mut skipped = 0;
    // Queued chunks first, then each live chunk: each thread's records in
    // order. The last look at the queue keeps the registry lock, so no
    // chunk can be queued behind the live ones.
    let mut reg = loop {
        let mut reg = rt.registry();
        match reg.dequeue() {
            Some(full) => {
                drop(reg);
                if past() {
                    // SAFETY: as in `Output::format_full`.
                    skipped += events_in(unsafe { full.records() });
                    if let Some((now_ns, name)) = &full.retired {
                        out.close_thread(full.id, *now_ns, name.as_deref(), true);
                    }
                } else {
                    out.format_full(&full);
                }
                if let Some(chunk) = full.chunk() {
                    rt.registry().recycle(chunk);
                }
            }
            None => break reg,
        }
    };
    for index in 0..reg.slots.len() {
        let slot = &reg.slots[index];
        // SAFETY: registered buffers are live.
        let b = unsafe { slot.buf.as_ref() };
        let len = b.len(Ordering::Acquire);
        // Read after the length: every record below it is stamped earlier,
        // so the slices closed here never end before they began.
        let now = clock::stamp();
        // SAFETY: published up to `len` (Acquire above); the owner replaces
        // the chunk only under the registry lock, held here; site pointers:
        // the C ABI contract.
        let upto = unsafe { slot.before_cut(b.chunk(), slot.drained, len) };
        // SAFETY: as above.
        let records = unsafe { b.chunk().records(slot.drained, upto) };
        if past() {
            skipped += events_in(records);
        } else {
            // SAFETY: as above.
            unsafe { out.format(slot.id, slot.tid, records) };
        }
        let (id, tid) = (slot.id, slot.tid);
        reg.slots[index].drained = len;
        // The process ends inside slices still open.
        out.close_thread(id, now, thread_name(tid).as_deref(), false);
    }
    reg.finished = true;
    drop(reg);
    drop_events(skipped);
    let pid = out.pid;
    out.cx.time.calibrate();
    let clock_json = out.cx.time.metadata_json();
    if let Some(sink) = out.sink.as_mut() {
        // How timestamps were taken: the clock and, for the TSC, its fit.
        sink.metadata_args(b"perfflow_clock", pid, &clock_json);
        // The fatal signal that ends the process, if one does.
        if let Some(signal_json) = signals::fatal_signal_json() {
            sink.metadata_args(b"perfflow_signal", pid, &signal_json);
        }
        // The writer adds its own count of events it could not write.
        let dropped = DROPPED.load(Ordering::Relaxed);
        DROPPED_AT_CLOSE.store(dropped, Ordering::Relaxed);
        sink.runtime_cost(pid, dropped, buffer_bytes_peak());
        let reported = sink.has_failed();
        if let Err(e) = sink.finish() {
            if !reported {
                crate::shield::stderr_line(format_args!("perfflow: {e}"));
            }
        }
        let lost = sink.events_lost();
        if lost > 0 {
            crate::shield::stderr_line(format_args!(
                "perfflow: {lost} events could not be written: recorded after the trace \
                 stopped, cut off by a write that failed, or exits without a matching enter"
            ));
        }
    }
    out.note_lost();
    out.finished = true;
    TRACE_DONE.store(true, Ordering::Release);
    let dropped = dropped_events();
    let after_signal = AFTER_SIGNAL.load(Ordering::Relaxed);
    let why = if skipped > 0 {
        format!(
            "; {skipped} of them could not be written in the time a fatal signal leaves, \
             and the trace was completed without them"
        )
    } else {
        String::new()
    };
    let after = if after_signal > 0 {
        format!("; {after_signal} of them were recorded after the fatal signal")
    } else {
        String::new()
    };
    if dropped > 0 {
        crate::shield::stderr_line(format_args!("perfflow: {dropped} events are not in the trace (counted as events_dropped){why}{after}"
        ));
    }
}

/// Thread exit: hands the thread's remaining records over (its open slices
/// end now) and frees its buffer.
fn retire(buf: NonNull<ThreadBuffer>) {
    let Some(rt) = RUNTIME.get() else { return };
    let _masked = signals::Masked::all();
    // SAFETY: the exiting thread's own live buffer.
    let b = unsafe { buf.as_ref() };
    let mut reg = rt.registry();
    // Whether this thread's records go as a copy (see `COPIED_AT_EXIT`),
    // its chunk reused at once: then it waits only for a queue of
    // `MAX_QUEUED_EXITS` entries.
    let copies = reg.slot_of(buf).is_some_and(|i| {
        b.len(Ordering::Relaxed)
            .saturating_sub(reg.slots[i].drained)
            <= COPIED_AT_EXIT
    });
    let backlogged = |r: &Registry| {
        if copies {
            r.queue.len() >= MAX_QUEUED_EXITS
        } else {
            r.queued_chunks >= MAX_QUEUED
        }
    };
    if reg.writer == WriterState::Running && backlogged(&reg) {
        // Back-pressure, as in `hand_off`. The slot stays registered while
        // waiting, so a final flush meanwhile still takes its records.
        rt.wake.notify_one();
        reg = rt
            .drained
            .wait_while(reg, |r| {
                backlogged(r) && r.writer == WriterState::Running && !r.closing
            })
            .unwrap_or_else(|e| e.into_inner());
    }
    let help = match reg.slot_of(buf) {
        Some(index) => {
            let slot = reg.slots.swap_remove(index);
            let len = b.len(Ordering::Relaxed);
            if reg.finished {
                // SAFETY: this thread's own chunk, written by it up to `len`.
                drop_events(events_in(unsafe { b.chunk().records(slot.drained, len) }));
                let chunk = b.chunk();
                reg.recycle(chunk);
                false
            } else {
                let closing = reg.closing;
                // The thread ends inside slices still open.
                let now = clock::stamp();
                let name = thread_name(slot.tid);
                let chunk = b.chunk();
                // SAFETY: this thread's own chunk, written up to `len`.
                let upto = unsafe { slot.before_cut(chunk, slot.drained, len) };
                let held = if upto - slot.drained <= COPIED_AT_EXIT {
                    // SAFETY: as above.
                    let records = unsafe { chunk.records(slot.drained, upto) };
                    let bytes = std::mem::size_of_val(records);
                    let copy = if reg.queued_copied_bytes + bytes <= MAX_COPIED_BYTES {
                        records.into()
                    } else {
                        // The writer is that far behind: the records are
                        // counted, and the entry still ends the thread.
                        drop_events(events_in(records));
                        Box::default()
                    };
                    reg.recycle(chunk);
                    Held::Copied(copy)
                } else {
                    Held::Chunk {
                        chunk,
                        from: slot.drained,
                        upto,
                    }
                };
                reg.enqueue(Full {
                    id: slot.id,
                    tid: slot.tid,
                    held,
                    retired: Some((now, name)),
                });
                !closing && reg.writer != WriterState::Running
            }
        }
        None => {
            // Not registered (a forked child's other threads): just free.
            let chunk = b.chunk();
            // SAFETY: an unregistered chunk is referred to by nothing else.
            unsafe { chunk.free() };
            false
        }
    };
    drop(reg);
    // SAFETY: the buffer is no longer registered and its owner (this thread)
    // has dropped its handle, so nothing refers to it any more; its chunk
    // now belongs to the queue or the spares.
    drop(unsafe { Box::from_raw(buf.as_ptr()) });
    if help {
        rt.format_queue(false);
    } else {
        rt.wake.notify_one();
    }
}

// --- vfork ------------------------------------------------------------------
//
// A vfork child runs on its parent's thread's memory, thread-locals included,
// until it calls exec or ends, and may call woven functions meanwhile (and
// their exit advice before `_exit`). The runtime's `vfork` (see `vfork.rs`)
// calls `vfork_child` in the child, which hides the thread's buffer: the
// child's events take the cold path, which drops and counts them without
// touching a lock or allocating. `vfork_parent`, once the parent runs again,
// puts the buffer back. The hot path is unchanged.

/// vfork state of one thread. No destructor, so touching it from a vfork
/// child registers nothing.
struct Vfork {
    /// Set in a vfork child until the parent resumes.
    child: Cell<bool>,
    /// The parent's buffer, hidden from the child.
    hidden: Cell<*mut ThreadBuffer>,
    /// Set once [`LOCAL`] holds a buffer on this thread: only then is
    /// there a buffer to hide.
    has_buffer: Cell<bool>,
}

thread_local! {
    static VFORK: Vfork = const {
        Vfork {
            child: Cell::new(false),
            hidden: Cell::new(ptr::null_mut()),
            has_buffer: Cell::new(false),
        }
    };
}

/// True in a vfork child, until it calls exec or ends.
pub(crate) fn in_vfork_child() -> bool {
    VFORK.with(|v| v.child.get())
}

/// Runs in a vfork child right after `vfork` returns there.
pub(crate) extern "C" fn vfork_child() {
    VFORK.with(|v| {
        v.child.set(true);
        compiler_fence(Ordering::SeqCst);
        if v.has_buffer.get() {
            let _ = LOCAL.try_with(|l| v.hidden.set(l.take_buf()));
        }
    });
}

/// Runs in the parent when `vfork` returns there (the child has called
/// exec or ended).
///
/// The buffer comes back before the thread stops counting as a vfork
/// child: a signal handler that records in between has its event dropped
/// (no buffer yet) or stored in the buffer back in place, and never
/// registers a second buffer for the thread.
pub(crate) extern "C" fn vfork_parent() {
    VFORK.with(|v| {
        if v.child.get() {
            let hidden = v.hidden.replace(ptr::null_mut());
            if !hidden.is_null() {
                let _ = LOCAL.try_with(|l| l.set_buf(hidden));
            }
            compiler_fence(Ordering::SeqCst);
            v.child.set(false);
        }
    });
}

// --- fork -------------------------------------------------------------------
//
// The output and registry locks are held across fork() so that the child
// never inherits them held by a thread that does not exist there. The guards
// live in a thread-local of the forking thread from `prepare` to
// `parent`/`child`.
//
// The start of the runtime is guarded the same way: the handlers are
// registered before any thread begins it, and `prepare` waits until it is
// done, so a fork from another thread meanwhile never leaves the child a
// start-up that no thread of its own will finish (its first event would wait
// for it forever).

/// Registers the fork handlers, once per process, before the runtime
/// starts. `pthread_once` rather than a Rust `Once`: glibc starts it over in
/// a child forked while another thread was inside it.
fn register_fork_handlers() {
    extern "C" fn register() {
        // SAFETY: registering plain `extern "C"` functions is always valid;
        // glibc also accepts them from a shared library.
        unsafe { libc::pthread_atfork(Some(fork_prepare), Some(fork_parent), Some(fork_child)) };
    }
    struct Control(std::cell::UnsafeCell<libc::pthread_once_t>);
    // SAFETY: only ever passed to `pthread_once`, which synchronises.
    unsafe impl Sync for Control {}
    static ONCE: Control = Control(std::cell::UnsafeCell::new(libc::PTHREAD_ONCE_INIT));
    // SAFETY: a static once-control and a function without arguments.
    unsafe { libc::pthread_once(ONCE.0.get(), register) };
}

/// Held by a service thread while it allocates or frees outside the locks
/// the fork handlers take (the sampler's sample and its writing, the
/// writer's spare chunks, the signal watcher's look at the task list), and
/// by `fork_prepare` first of all: a fork never happens while one of them
/// is inside the allocator. Some allocators (AddressSanitizer's
/// before LLVM 17) do not lock themselves across `fork`, and a child
/// forked while another thread held one of their locks hangs at its next
/// allocation of that size. Taken before any other lock of the runtime,
/// and never while holding one.
static SERVICE_QUIET: Mutex<()> = Mutex::new(());

/// Takes [`SERVICE_QUIET`].
pub(crate) fn service_quiet() -> MutexGuard<'static, ()> {
    SERVICE_QUIET.lock().unwrap_or_else(|e| e.into_inner())
}

struct ForkGuards {
    _quiet: MutexGuard<'static, ()>,
    _interned: crate::site::ForkGuard,
    output: MutexGuard<'static, Output>,
    registry: MutexGuard<'static, Registry>,
    /// Dropped last: signals stay blocked until the locks are released.
    masked: signals::Masked,
}

thread_local! {
    static FORK_GUARDS: std::cell::RefCell<Option<ForkGuards>> =
        const { std::cell::RefCell::new(None) };
}

extern "C" fn fork_prepare() {
    let _errno = crate::errno::Kept::now();
    let _ = catch_unwind(|| {
        // These handlers are registered right before start-up, so it has
        // begun or is about to: wait for it to finish (another thread may
        // be inside it), or the child would inherit it half done.
        let rt = Runtime::get();
        if !ENABLED.load(Ordering::Relaxed) {
            // Tracing is off: nothing to hand over to the child.
            return;
        }
        // Events recorded by this thread until the fork is over (a woven
        // allocator) must not take the locks it holds.
        let _ = LOCAL.try_with(|l| l.busy.set(true));
        let masked = signals::Masked::all();
        // Lock order as everywhere: the service threads' quiet lock first
        // (never taken with another held); the intern lock is never held
        // while taking the others elsewhere, so taking it next is safe;
        // then output before registry.
        let quiet = service_quiet();
        let interned = crate::site::lock_for_fork();
        let output = rt.output_soon();
        let registry = rt.registry();
        // Last, with every lock held: a service thread still starting (its
        // start-up allocates) gets through it first.
        signals::wait_for_spawns();
        let kept = FORK_GUARDS.try_with(|g| {
            *g.borrow_mut() = Some(ForkGuards {
                _quiet: quiet,
                _interned: interned,
                output,
                registry,
                masked,
            })
        });
        if kept.is_err() {
            // The locks are released already (this thread's storage is
            // gone): spawns need not wait for this fork.
            signals::fork_done(false);
        }
    });
}

extern "C" fn fork_parent() {
    let _errno = crate::errno::Kept::now();
    let _ = catch_unwind(|| {
        let guards = FORK_GUARDS.try_with(|g| g.borrow_mut().take());
        if let Ok(Some(guards)) = guards {
            // Spawns may begin again before the locks are released: another
            // fork that takes them next then sets the flag anew.
            signals::fork_done(false);
            drop(guards);
        }
    });
    let _ = LOCAL.try_with(|l| l.busy.set(false));
}

/// In the child: only the forking thread exists. Its records so far belong
/// to the parent's trace; the child writes its own file under its own pid,
/// starting with the slices it is inside of.
extern "C" fn fork_child() {
    let _errno = crate::errno::Kept::now();
    let _ = catch_unwind(|| {
        let Some(guards) = FORK_GUARDS
            .try_with(|g| g.borrow_mut().take())
            .ok()
            .flatten()
        else {
            return;
        };
        let ForkGuards {
            _quiet: quiet,
            _interned: interned,
            mut output,
            mut registry,
            masked,
        } = guards;
        let out = &mut *output;
        let reg = &mut *registry;
        let own = LOCAL.try_with(|l| l.buf.get()).unwrap_or(ptr::null_mut());
        let own_slot = reg.slots.iter().position(|s| s.buf.as_ptr() == own);
        let own_id = own_slot.map(|i| reg.slots[i].id);
        // Whatever a batch interrupted by a panic left there: these records
        // may hold payloads.
        out.cx.payloads = true;
        // Learn which slices the forking thread is inside of, without
        // writing anything: its queued chunks in order, then its live one.
        while let Some(full) = reg.dequeue() {
            if Some(full.id) == own_id {
                let decoder = out
                    .decoders
                    .entry(full.id)
                    .or_insert_with(|| ThreadDecoder::new(full.tid));
                // SAFETY: as in `Output::format_full`.
                unsafe { decoder.decode(full.records(), &mut out.cx, &mut NullSink) };
            }
            if let Some(chunk) = full.chunk() {
                reg.recycle(chunk);
            }
        }
        let tid = current_tid();
        if let Some(index) = own_slot {
            let slot = &mut reg.slots[index];
            // SAFETY: the forking thread's own buffer, published up to its
            // current length.
            let b = unsafe { slot.buf.as_ref() };
            let len = b.len(Ordering::Relaxed);
            let decoder = out
                .decoders
                .entry(slot.id)
                .or_insert_with(|| ThreadDecoder::new(slot.tid));
            // SAFETY: as in `Output::format`.
            unsafe {
                decoder.decode(
                    b.chunk().records(slot.drained, len),
                    &mut out.cx,
                    &mut NullSink,
                )
            };
            decoder.set_tid(tid);
            slot.tid = tid;
            // The chunk reads as full and drained: the thread's next event
            // takes the cold path, which creates the child's file.
            slot.drained = CHUNK_RECORDS;
            b.set_len(CHUNK_RECORDS);
        }
        // Other threads do not exist in the child: their slots and decoders
        // go, and their buffers are freed (their records are the parent's).
        let (own, gone): (Vec<Slot>, Vec<Slot>) = std::mem::take(&mut reg.slots)
            .into_iter()
            .partition(|s| Some(s.id) == own_id);
        reg.slots = own;
        for slot in gone {
            // SAFETY: the thread that owned the buffer does not exist here
            // and its slot is gone: nothing refers to the buffer any more.
            let buf = unsafe { Box::from_raw(slot.buf.as_ptr()) };
            reg.recycle(buf.chunk());
        }
        out.decoders.retain(|&id, _| Some(id) == own_id);
        reg.writer = WriterState::Idle;
        out.sink = None;
        out.pid = std::process::id();
        out.forked_at = Some(clock::stamp());
        CHILD_FILE_PENDING.store(true, Ordering::Relaxed);
        DROPPED.store(0, Ordering::Relaxed);
        AFTER_SIGNAL.store(0, Ordering::Relaxed);
        WRITER_LOST.store(0, Ordering::Relaxed);
        // Threads of the parent waiting for the output lock do not exist
        // here.
        OUTPUT_WANTED.store(0, Ordering::Release);
        signals::after_fork();
        crate::usage::after_fork();
        drop(registry);
        drop(output);
        drop(interned);
        drop(quiet);
        drop(masked);
    });
    // Whatever happened above: the only thread of the child is this one,
    // and no spawn of the parent exists here.
    signals::fork_done(true);
    let _ = LOCAL.try_with(|l| l.busy.set(false));
}

/// Decodes into nothing: used to replay state.
struct NullSink;
impl Sink for NullSink {}

/// Runs `f`, code of the runtime on a thread of the program outside its
/// recording path (a start-up hook before `main`), as a cold path: an
/// event recorded on this thread meanwhile (by the program's own allocator,
/// traced, which `f` calls) is dropped and counted instead of starting the
/// runtime from inside `f`.
pub(crate) fn as_cold_path<R>(f: impl FnOnce() -> R) -> R {
    let was_busy = LOCAL.try_with(|l| l.busy.replace(true)).ok();
    let result = f();
    if let Some(was_busy) = was_busy {
        let _ = LOCAL.try_with(|l| l.busy.set(was_busy));
    }
    result
}

/// Cold half of [`record`] and [`record_extra`]: first event of the thread
/// or full chunk. `stamp` is the exit timestamp already taken; enters are
/// stamped here, after the hand-off, so its cost stays outside the slice.
/// `extra` is what follows the event; an event and its payload always land
/// in the same chunk.
#[cold]
#[inline(never)]
fn record_slow(local: &Local, site: *const Site, kind: Kind, stamp: Option<u64>, extra: Extra) {
    let _errno = crate::errno::Kept::now();
    if in_vfork_child() {
        // The parent's buffers are not ours to touch (see `vfork_child`);
        // hidden from the child, they never reach `Local::push` there.
        drop_events(1);
        return;
    }
    // Signals are blocked before `busy` is set and after it is cleared: a
    // handler that leaves by `siglongjmp` can never leave it set, which
    // would drop every later event of the thread.
    let masked = signals::Masked::all();
    // `busy` now keeps a signal handler on this thread out, in place of the
    // `PUSHING` a full chunk left set (see `Local::push`).
    let was_busy = local.busy.replace(true);
    compiler_fence(Ordering::SeqCst);
    local.set_pushing(false);
    if was_busy {
        drop_events(1);
        return;
    }
    let stored = catch_unwind(AssertUnwindSafe(|| {
        let rt = Runtime::get();
        if !ENABLED.load(Ordering::Relaxed) {
            // log-enable=False, or no trace file: nothing is recorded.
            return Some(());
        }
        let buf = match NonNull::new(local.buf.get()) {
            Some(buf) => {
                rt.hand_off(buf);
                buf
            }
            None => {
                // Registers the guard's destructor; a thread whose
                // thread-locals are being destroyed gets no buffer.
                GUARD.try_with(|_| ()).ok()?;
                let buf = rt.register()?;
                local.set_buf(buf.as_ptr());
                VFORK.with(|v| v.has_buffer.set(true));
                buf
            }
        };
        if CHILD_FILE_PENDING.load(Ordering::Relaxed) {
            // A forked child's first event: its file, writer and signal
            // watcher start now, so that a signal or SIGKILL from here on
            // finds them.
            let _ = rt.output_soon().sink();
        }
        let extra = match extra {
            // The process's first event started the runtime just above,
            // which may have turned cpu-mem-usage on.
            Extra::None if kind == Kind::Enter && wants_usage(site) => Extra::EnterUsage,
            other => other,
        };
        let (ts, payload) = stamp_with(stamp, extra);
        let ev = RawEvent::new(ts, site, kind);
        // SAFETY: the calling thread's own live buffer.
        let b = unsafe { buf.as_ref() };
        match payload {
            Some(payload) => b.push_pair(ev, payload),
            None => b.push(ev),
        }
        .then_some(())
    }));
    if !matches!(stored, Ok(Some(()))) {
        drop_events(1);
    }
    local.busy.set(false);
    compiler_fence(Ordering::SeqCst);
    drop(masked);
}

/// Records one event. Its timestamp is taken inside the hot path's guard
/// (see [`Local::push`]). When the chunk is full, an exit (`STAMP_FIRST`)
/// keeps that timestamp, so the hand-off's cost lands inside the slice, and
/// an enter reads the clock again after the hand-off, so its cost stays
/// outside. With `cpu-mem-usage` the event goes through [`record_usage`]
/// instead.
///
/// The common case (the thread has a buffer, no store of its is
/// interrupted, and [`PLAIN_TSC`]) is one test of the thread's
/// [`Local::gate`], and inlines into the C entry points with the TSC read
/// and the store; every other case is [`record_any`], out of line.
#[inline(always)]
fn record<const STAMP_FIRST: bool>(site: *const Site, kind: Kind) {
    // The closure only takes the address, so it inlines whatever follows.
    let Ok(local) = LOCAL.try_with(|local| local as *const Local) else {
        drop_events(1);
        return;
    };
    // SAFETY: `LOCAL` has no destructor, so its storage stays valid for as
    // long as this thread runs, past the closure above.
    let local = unsafe { &*local };
    if local.gate.get() != 0 {
        record_any::<STAMP_FIRST>(site, kind);
        return;
    }
    // As `Local::push` does it.
    let outer_sp = local.push_sp.replace(stack_pointer());
    compiler_fence(Ordering::SeqCst);
    local.gate.set(PUSHING);
    compiler_fence(Ordering::SeqCst);
    let ts = clock::rdtsc();
    store_plain::<STAMP_FIRST>(local, site, kind, ts, 0, outer_sp);
}

/// [`record`] before the thread's first event, with tracing off, with
/// `cpu-mem-usage`, with the monotonic clock, or from a signal handler
/// that interrupted a store.
#[inline(never)]
fn record_any<const STAMP_FIRST: bool>(site: *const Site, kind: Kind) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    if CPU_MEM_USAGE.load(Ordering::Relaxed) {
        record_usage(site, kind);
        return;
    }
    record_plain::<STAMP_FIRST>(site, kind);
}

/// [`record_extra`] of an event with nothing after it, written out without
/// closures: the common case (a buffer with room, no signal handler
/// interrupted) is a thread-local read, the flag stores, the clock read
/// and the store. Any other case goes to [`record_extra`], out of line.
#[inline(always)]
fn record_plain<const STAMP_FIRST: bool>(site: *const Site, kind: Kind) {
    let Ok(local) = LOCAL.try_with(|local| local as *const Local) else {
        drop_events(1);
        return;
    };
    // SAFETY: as in `record`.
    let local = unsafe { &*local };
    let gate = local.gate.get();
    if gate & (NO_BUFFER | PUSHING) != 0 {
        record_plain_cold::<STAMP_FIRST>(site, kind);
        return;
    }
    // As `Local::push` does it.
    let outer_sp = local.push_sp.replace(stack_pointer());
    compiler_fence(Ordering::SeqCst);
    local.gate.set(gate | PUSHING);
    compiler_fence(Ordering::SeqCst);
    let ts = clock::stamp();
    store_plain::<STAMP_FIRST>(local, site, kind, ts, gate, outer_sp);
}

/// Stores the event at `site` stamped `ts` in this thread's buffer, which
/// `local` has (its gate, [`PUSHING`] now set, was `gate` before), and
/// puts the gate back; when the chunk is full, goes to
/// [`record_plain_full`] instead.
#[inline(always)]
fn store_plain<const STAMP_FIRST: bool>(
    local: &Local,
    site: *const Site,
    kind: Kind,
    ts: u64,
    gate: u8,
    outer_sp: usize,
) {
    // SAFETY: the gate said the thread has a buffer, and a buffer is freed
    // only by this thread's `LocalGuard` destructor.
    if unsafe { &*local.buf.get() }.push(RawEvent::new(ts, site, kind)) {
        compiler_fence(Ordering::SeqCst);
        local.gate.set(gate);
        compiler_fence(Ordering::SeqCst);
        local.push_sp.set(outer_sp);
        return;
    }
    record_plain_full::<STAMP_FIRST>(local, site, kind, ts);
}

/// [`store_plain`] when the chunk is full: [`PUSHING`] stays set until
/// `record_slow` guards with `busy` instead; an exit keeps its stamp `ts`.
/// Out of line and called last, so the common case keeps no stack frame
/// for it.
#[cold]
#[inline(never)]
fn record_plain_full<const STAMP_FIRST: bool>(
    local: &Local,
    site: *const Site,
    kind: Kind,
    ts: u64,
) {
    let _errno = crate::errno::Kept::now();
    let stamp = if STAMP_FIRST { Some(ts) } else { None };
    record_slow(local, site, kind, stamp, Extra::None);
}

/// [`record_plain`] on the thread's first event, or while a signal
/// handler interrupts a store.
#[cold]
#[inline(never)]
fn record_plain_cold<const STAMP_FIRST: bool>(site: *const Site, kind: Kind) {
    let _errno = crate::errno::Kept::now();
    record_extra::<STAMP_FIRST>(site, kind, || Extra::None);
}

/// Records entry into `site` (must satisfy [`crate::event::packable`]).
#[inline(always)]
pub fn record_enter(site: *const Site) {
    record::<false>(site, Kind::Enter);
}

/// Records exit from `site` (must satisfy [`crate::event::packable`]).
#[inline(always)]
pub fn record_exit(site: *const Site) {
    record::<true>(site, Kind::Exit);
}

/// Records entry into `site` followed by `payload` (an async id or number).
/// `site` must satisfy [`crate::event::packable`].
#[inline]
pub fn record_enter_with(site: *const Site, payload: crate::event::Payload) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    record_extra::<false>(site, Kind::Enter, || Extra::Ready(payload.record()));
}

/// Records exit from `site` followed by `payload`, stamped as in
/// [`record_exit`].
#[inline]
pub fn record_exit_with(site: *const Site, payload: crate::event::Payload) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    record_extra::<true>(site, Kind::Exit, || Extra::Ready(payload.record()));
}

/// What follows an event record in its thread's buffer.
#[derive(Clone, Copy)]
enum Extra {
    /// Nothing.
    None,
    /// A usage payload with the thread's CPU time, read right after the
    /// event's timestamp (`around` enters with `cpu-mem-usage`).
    EnterUsage,
    /// A usage payload with the thread's CPU time, read right before the
    /// event's timestamp, and the resident set size (`around` exits with
    /// `cpu-mem-usage`).
    ExitUsage,
    /// A payload record prepared by the caller.
    Ready(RawEvent),
}

/// True when an event at `site` carries a usage payload: `cpu-mem-usage`
/// is on and the site is an `around` site.
fn wants_usage(site: *const Site) -> bool {
    // SAFETY: recorded site pointers point at live sites (the C ABI
    // contract, checked for null and alignment by the entry points).
    CPU_MEM_USAGE.load(Ordering::Relaxed)
        && unsafe { &*site }.pointcut() == crate::site::Pointcut::Around
}

/// The event's timestamp (`stamp`, or the clock now) and its payload.
#[inline(always)]
fn stamp_with(stamp: Option<u64>, extra: Extra) -> (u64, Option<RawEvent>) {
    let usage = |cpu_ns, rss_kib| Some(crate::event::Payload::Usage { cpu_ns, rss_kib }.record());
    match extra {
        Extra::None => (stamp.unwrap_or_else(clock::stamp), None),
        Extra::EnterUsage => {
            let ts = stamp.unwrap_or_else(clock::stamp);
            (ts, usage(crate::usage::thread_cpu_ns(), 0))
        }
        Extra::ExitUsage => {
            let cpu_ns = crate::usage::thread_cpu_ns();
            let ts = stamp.unwrap_or_else(clock::stamp);
            (ts, usage(cpu_ns, crate::usage::resident_kib()))
        }
        Extra::Ready(payload) => (stamp.unwrap_or_else(clock::stamp), Some(payload)),
    }
}

/// A timestamp and payload already taken, as [`record_slow`] takes them.
fn taken((ts, payload): (u64, Option<RawEvent>)) -> (Option<u64>, Extra) {
    (Some(ts), payload.map_or(Extra::None, Extra::Ready))
}

/// [`record`] with `cpu-mem-usage` on. An `around` enter reads the thread
/// CPU time right after its timestamp; an `around` exit reads it right
/// before its timestamp, then the resident set size. The CPU interval thus
/// lies inside the slice, and usage never reads above 100 % for time the
/// thread spent running. Other sites record as usual.
///
/// Cost: one `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` system call per enter,
/// and that plus one `pread` of `/proc/self/statm` per exit.
#[inline(never)]
fn record_usage(site: *const Site, kind: Kind) {
    let _errno = crate::errno::Kept::now();
    // SAFETY: as in `wants_usage`.
    let around = unsafe { &*site }.pointcut() == crate::site::Pointcut::Around;
    match (around, kind) {
        (true, Kind::Enter) => record_extra::<false>(site, kind, || Extra::EnterUsage),
        (true, Kind::Exit) => record_extra::<true>(site, kind, || Extra::ExitUsage),
        (false, Kind::Enter) => record_extra::<false>(site, kind, || Extra::None),
        (false, Kind::Exit) => record_extra::<true>(site, kind, || Extra::None),
    }
}

/// Records an event and what `extra` says follows it. With `STAMP_FIRST`
/// (exits) the timestamp taken on the hot path is kept when the chunk is
/// full; without it the clock is read again after the hand-off (see
/// [`record`]).
///
/// `extra` is a closure, not a value, so that each caller gets its own
/// copy of this function with what follows known when compiling: the
/// plain enter and exit then inline to a few dozen instructions, rather
/// than sharing one out-of-line body that matches on every kind of extra.
#[inline(always)]
fn record_extra<const STAMP_FIRST: bool>(site: *const Site, kind: Kind, extra: impl Fn() -> Extra) {
    let _errno = crate::errno::Kept::now();
    // The closure only takes the address, so it inlines whatever follows.
    let Ok(local) = LOCAL.try_with(|local| local as *const Local) else {
        drop_events(1);
        return;
    };
    // SAFETY: `LOCAL` has no destructor, so its storage stays valid for as
    // long as this thread runs, past the closure above.
    let local = unsafe { &*local };
    let extra = extra();
    let stamp_first = STAMP_FIRST;
    let buf = local.buf.get();
    let (stamp, extra) = if buf.is_null() {
        // The thread's first event (or its thread-locals are going away).
        if local.busy.get() {
            // Recorded from inside this thread's own cold path (a traced
            // allocator of the program, called while the runtime starts).
            drop_events(1);
            return;
        }
        if stamp_first {
            // The process's first stamp reads the options to choose the
            // clock, which allocates: an event recorded meanwhile (a traced
            // allocator) is dropped by the test above. Signals are blocked
            // meanwhile: a handler that leaves by `siglongjmp` would leave
            // `busy` set, and the clock's choice half made.
            let masked = signals::Masked::all();
            local.busy.set(true);
            let stamped = taken(stamp_with(None, extra));
            local.busy.set(false);
            compiler_fence(Ordering::SeqCst);
            drop(masked);
            stamped
        } else {
            (None, extra)
        }
    } else {
        // SAFETY: a non-null handle points to this thread's buffer,
        // which is freed only by this thread's `LocalGuard` destructor.
        let b = unsafe { &*buf };
        match local.push(b, site, kind, || stamp_with(None, extra)) {
            Ok(()) => return,
            Err(took) if stamp_first => taken(took),
            Err(_) => (None, extra),
        }
    };
    record_slow(local, site, kind, stamp, extra);
}

/// Counts an event whose site pointer could not be recorded (an atomic
/// add: `errno` is not touched, and no guard of it may make the entry
/// points that inline this keep a stack frame).
pub fn reject_site() {
    drop_events(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_trace_name_gives_the_next_free_one_for_the_same_pid() {
        let dir = std::env::temp_dir().join(format!("perfflow-unique-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("perfflow.array.h.7.pfw");
        let names: Vec<String> = (0..4)
            .map(|_| {
                let (_, made) = create_unique(&path, 7).expect("a free name");
                made.file_name().unwrap().to_string_lossy().into_owned()
            })
            .collect();
        assert_eq!(
            names,
            [
                "perfflow.array.h.7.pfw",
                "perfflow.array.h.7.7.pfw",
                "perfflow.array.h.7.7.2.pfw",
                "perfflow.array.h.7.7.3.pfw"
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! Per-thread event buffers, the global registry and the final flush.
//!
//! # Concurrency protocol
//!
//! Each thread owns one [`ThreadBuffer`]: a fixed chunk of
//! [`CHUNK_RECORDS`] raw records and a published length `len`.
//!
//! * **Record (hot path, owner thread only).** Read `len` (Relaxed: only the
//!   owner ever changes it outside the lock), write the record at index
//!   `len`, then store `len + 1` with **Release**. No lock, no allocation, no
//!   system call, no string work. Slots at or above `len` are never read by
//!   anyone else, so the write races with nothing.
//! * **First event of a thread (cold).** Allocate the chunk, read the kernel
//!   thread id, and push a [`Slot`] for the buffer into the registry under the
//!   registry lock. The first event of the process also starts the runtime:
//!   clock pairing, trace file, `atexit` registration.
//! * **Chunk full (cold, once per chunk).** The owner takes the registry lock,
//!   decodes and formats the records not yet written (`drained..len`) into
//!   the writer, and resets `drained` and `len` to 0 while still holding the
//!   lock. The chunk is reused in place, so memory stays flat. The writer
//!   turns records into JSON in memory and writes the file in blocks of about
//!   a megabyte.
//! * **Final flush (`atexit`).** Takes the registry lock, reads each buffer's
//!   `len` with **Acquire** (pairing with the owners' Release stores, so every
//!   record below it is fully written), formats `drained..len`, sets `drained
//!   = len`, ends slices left open, closes the JSON array and marks the
//!   registry finished. Owners may keep recording meanwhile; they only touch
//!   slots above the published length. Records taken after the flush are
//!   dropped and counted when their chunk fills or their thread exits.
//! * **Thread exit.** The thread-local destructor takes the lock, formats what
//!   is left (ending slices the thread left open), removes the slot and frees
//!   the chunk. Because chunks are only reset or freed under the lock, and
//!   the flusher reads only under the lock, the flusher never sees freed or
//!   half-reset memory.
//!
//! Lock order: the registry lock is the only lock taken while recording (the
//! intern lock in `site` is never held at the same time). A per-thread `busy`
//! flag turns re-entry (an event recorded from inside the runtime's own cold
//! path, e.g. through a woven allocator) into a dropped event instead of a
//! self-deadlock.
//!
//! # Where the next stage plugs in
//!
//! * `PERFFLOW_OPTIONS` is parsed in [`Runtime::start`]: `log-enable=False`
//!   leaves the writer out (events are then dropped without formatting; a
//!   later refinement gives threads a zero-capacity buffer so they never
//!   allocate), `log-dir` and `log-filename-include` feed [`trace_file_name`],
//!   and `log-event=compact` / `log-format=object` select writer variants.
//! * `fork`: for now a forked child writes nothing (every write path checks
//!   the pid, so the child cannot corrupt the parent's file; its events are
//!   dropped). Next, a `pthread_atfork` prepare handler takes the registry
//!   lock (so the child never inherits it held), and the child handler resets
//!   the registry to the forking thread, updates the pid and opens a new
//!   file.
//! * A background writer thread plugs into the hand-off: swap the full chunk
//!   for a spare under the lock, queue it, and let the thread format it, so
//!   recording threads never format. Drains must then take queued chunks
//!   before a thread's live chunk to keep each thread's order.
//! * Fatal signals: a handler calls the final flush with `try_lock` so a
//!   thread interrupted inside a hand-off cannot deadlock it.
//! * Sites in a `dlclose`d library must be formatted before it unmaps; an
//!   unload hook emitted by the weaver would call a full flush.

use std::cell::Cell;
use std::fs::File;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::clock::{self, Epoch};
use crate::decode::{DecodeContext, ThreadDecoder};
use crate::event::{Kind, RawEvent};
use crate::site::Site;
use crate::writer::{ChromeJsonWriter, Sink};

/// Records per thread chunk (16 bytes each: 1 MiB per thread).
pub const CHUNK_RECORDS: usize = 64 * 1024;

/// Events that could not be recorded or written.
static DROPPED: AtomicU64 = AtomicU64::new(0);

fn drop_events(n: u64) {
    if n > 0 {
        DROPPED.fetch_add(n, Ordering::Relaxed);
    }
}

/// Number of events dropped so far: recorded after the final flush, recorded
/// while thread-local storage was already torn down, or not writable.
pub fn dropped_events() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

/// One thread's chunk of records.
pub(crate) struct ThreadBuffer {
    records: NonNull<RawEvent>,
    /// Records published in the chunk (see the protocol above).
    len: AtomicUsize,
    tid: u32,
}

impl ThreadBuffer {
    fn layout() -> std::alloc::Layout {
        // CHUNK_RECORDS * 16 bytes cannot overflow.
        std::alloc::Layout::array::<RawEvent>(CHUNK_RECORDS)
            .unwrap_or_else(|_| std::alloc::Layout::new::<RawEvent>())
    }

    /// Allocates a buffer, `None` when memory is exhausted.
    fn allocate(tid: u32) -> Option<NonNull<ThreadBuffer>> {
        // SAFETY: the layout has a non-zero size. The memory is left
        // uninitialised; only slots below `len` are ever read, and each of
        // those was written first.
        let records = NonNull::new(unsafe { std::alloc::alloc(Self::layout()) }.cast())?;
        let buf = Box::new(ThreadBuffer {
            records,
            len: AtomicUsize::new(0),
            tid,
        });
        NonNull::new(Box::into_raw(buf))
    }

    /// The published records `from..upto`.
    ///
    /// # Safety
    /// `upto` must not exceed a length published by the owner and observed
    /// with Acquire (or by the owner itself), and the chunk must not be reset
    /// or freed while the slice is alive (hold the registry lock).
    unsafe fn published(&self, from: usize, upto: usize) -> &[RawEvent] {
        let upto = upto.min(CHUNK_RECORDS);
        let from = from.min(upto);
        // SAFETY: slots below a published length are initialised and no
        // longer written; the range is inside the allocation.
        unsafe { std::slice::from_raw_parts(self.records.as_ptr().add(from), upto - from) }
    }

    /// Appends one record if there is room (owner thread only).
    #[inline(always)]
    fn push(&self, ev: RawEvent) -> bool {
        let n = self.len.load(Ordering::Relaxed);
        if n >= CHUNK_RECORDS {
            return false;
        }
        // SAFETY: `n < CHUNK_RECORDS`, so the slot is inside the allocation;
        // it is above the published length, so no other thread reads it.
        unsafe { self.records.as_ptr().add(n).write(ev) };
        self.len.store(n + 1, Ordering::Release);
        true
    }
}

impl Drop for ThreadBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `allocate` with the same layout; freed once.
        unsafe { std::alloc::dealloc(self.records.as_ptr().cast(), Self::layout()) };
    }
}

/// This thread's handle on its buffer.
struct Local {
    buf: Cell<*mut ThreadBuffer>,
    /// Set while this thread runs a cold path of the runtime.
    busy: Cell<bool>,
}

impl Drop for Local {
    fn drop(&mut self) {
        let buf = self.buf.replace(ptr::null_mut());
        if let Some(buf) = NonNull::new(buf) {
            self.busy.set(true);
            let _ = catch_unwind(AssertUnwindSafe(|| retire(buf)));
        }
    }
}

thread_local! {
    static LOCAL: Local = const {
        Local {
            buf: Cell::new(ptr::null_mut()),
            busy: Cell::new(false),
        }
    };
}

/// Registry entry of one live thread; only touched under the registry lock.
struct Slot {
    buf: NonNull<ThreadBuffer>,
    /// Records of the current chunk already handed to the writer.
    drained: usize,
    decoder: ThreadDecoder,
}

// SAFETY: the buffer pointer is only dereferenced under the registry lock
// (or by its owner thread following the protocol above).
unsafe impl Send for Slot {}

struct State {
    slots: Vec<Slot>,
    sink: Option<ChromeJsonWriter<File>>,
    cx: DecodeContext,
    finished: bool,
    /// Process that owns the trace file.
    pid: u32,
}

impl State {
    /// True when nothing may be written any more: the trace is complete, or
    /// this is a forked child (the file belongs to the parent).
    fn closed(&self) -> bool {
        self.finished || std::process::id() != self.pid
    }

    /// Formats `slot`'s records `drained..upto`, or counts them as dropped
    /// when `closed` or there is no file.
    fn drain(
        slot: &mut Slot,
        upto: usize,
        sink: &mut Option<ChromeJsonWriter<File>>,
        cx: &mut DecodeContext,
        closed: bool,
    ) {
        // SAFETY: the slot's buffer is live while it is registered, the
        // caller holds the registry lock and `upto` is a published length.
        let records = unsafe { slot.buf.as_ref().published(slot.drained, upto) };
        match sink {
            Some(sink) if !closed && sink.is_open() => {
                // SAFETY: every record was stored by `perfflow_*` entry
                // points from a site pointer the caller promised is live for
                // the program's lifetime.
                unsafe { slot.decoder.decode(records, cx, sink) }
            }
            _ => drop_events(records.len() as u64),
        }
        slot.drained += records.len();
    }
}

/// The process-wide runtime, created by the first event.
struct Runtime {
    state: Mutex<State>,
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// Name of the trace file for `host` and `pid`. `log-dir` and
/// `log-filename-include` will shape this name.
pub fn trace_file_name(host: &str, pid: u32) -> String {
    format!("perfflow.array.{host}.{pid}.pfw")
}

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

fn current_tid() -> u32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

extern "C" fn flush_at_exit() {
    let _ = catch_unwind(finish);
}

impl Runtime {
    fn get() -> &'static Runtime {
        RUNTIME.get_or_init(Runtime::start)
    }

    /// Starts tracing (cold, once per process). Option parsing
    /// (`PERFFLOW_OPTIONS`) goes here.
    fn start() -> Runtime {
        let epoch = Epoch::capture();
        let pid = std::process::id();
        let path = trace_file_name(&hostname(), pid);
        let sink = match File::create(&path) {
            Ok(file) => {
                let mut w = ChromeJsonWriter::new(file, pid);
                w.process_name(pid, &process_name());
                Some(w)
            }
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "perfflow: cannot create {path}: {e}; tracing is off"
                );
                None
            }
        };
        // SAFETY: registering a plain `extern "C"` function is always valid;
        // glibc also accepts it from a shared library (it then runs at exit
        // or at unload, whichever comes first).
        if unsafe { libc::atexit(flush_at_exit) } != 0 {
            let _ = writeln!(
                std::io::stderr(),
                "perfflow: cannot register the exit handler; the trace may be incomplete"
            );
        }
        Runtime {
            state: Mutex::new(State {
                slots: Vec::new(),
                sink,
                cx: DecodeContext::new(epoch),
                finished: false,
                pid,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates and registers the calling thread's buffer.
    fn register(&self) -> Option<NonNull<ThreadBuffer>> {
        let tid = current_tid();
        let buf = ThreadBuffer::allocate(tid)?;
        self.lock().slots.push(Slot {
            buf,
            drained: 0,
            decoder: ThreadDecoder::new(tid),
        });
        Some(buf)
    }

    /// Writes out the calling thread's full chunk and empties it.
    fn hand_off(&self, buf: NonNull<ThreadBuffer>) {
        let mut guard = self.lock();
        let closed = guard.closed();
        let State {
            slots, sink, cx, ..
        } = &mut *guard;
        // SAFETY: `buf` belongs to the calling thread, which is alive.
        let b = unsafe { buf.as_ref() };
        let len = b.len.load(Ordering::Relaxed);
        match slots.iter_mut().find(|s| s.buf == buf) {
            Some(slot) => {
                State::drain(slot, len, sink, cx, closed);
                slot.drained = 0;
            }
            None => drop_events(len as u64),
        }
        // Reset under the lock: the flusher reads lengths only under it.
        b.len.store(0, Ordering::Relaxed);
    }
}

/// Final flush: formats every published record and completes the file.
/// Runs from `atexit`; later calls do nothing.
pub fn finish() {
    let Some(rt) = RUNTIME.get() else { return };
    // Events recorded by this thread while it holds the lock below must not
    // try to take it again.
    let was_busy = LOCAL.try_with(|l| l.busy.replace(true)).ok();
    {
        let mut guard = rt.lock();
        let closed = guard.closed();
        let State {
            slots,
            sink,
            cx,
            finished,
            ..
        } = &mut *guard;
        if closed {
            // Already complete, or a forked child: the file is not ours.
            *finished = true;
        } else {
            for slot in slots.iter_mut() {
                // SAFETY: registered buffers are live.
                let len = unsafe { slot.buf.as_ref() }.len.load(Ordering::Acquire);
                State::drain(slot, len, sink, cx, false);
                if let Some(sink) = sink.as_mut() {
                    // The process ends inside slices still open.
                    slot.decoder.close_open(clock::now_ns(), cx, sink);
                    if let Some(name) = thread_name(slot.decoder.tid()) {
                        sink.thread_name(slot.decoder.tid(), &name);
                    }
                }
            }
            if let Some(sink) = sink.as_mut() {
                let reported = sink.has_failed();
                if let Err(e) = sink.finish() {
                    if !reported {
                        let _ = writeln!(std::io::stderr(), "perfflow: {e}");
                    }
                }
            }
            *finished = true;
            let dropped = dropped_events();
            if dropped > 0 {
                let _ = writeln!(
                    std::io::stderr(),
                    "perfflow: {dropped} events could not be recorded"
                );
            }
        }
    }
    if let Some(was_busy) = was_busy {
        let _ = LOCAL.try_with(|l| l.busy.set(was_busy));
    }
}

/// Thread exit: writes out the thread's remaining records and frees its
/// buffer.
fn retire(buf: NonNull<ThreadBuffer>) {
    let Some(rt) = RUNTIME.get() else { return };
    // SAFETY: `buf` is the exiting thread's own live buffer.
    let tid = unsafe { buf.as_ref() }.tid;
    let name = thread_name(tid);
    let mut guard = rt.lock();
    let closed = guard.closed();
    let State {
        slots, sink, cx, ..
    } = &mut *guard;
    if let Some(pos) = slots.iter().position(|s| s.buf == buf) {
        let mut slot = slots.swap_remove(pos);
        // SAFETY: as above; the owner is the caller.
        let len = unsafe { buf.as_ref() }.len.load(Ordering::Relaxed);
        State::drain(&mut slot, len, sink, cx, closed);
        if let (false, Some(sink)) = (closed, sink.as_mut()) {
            // The thread ends inside slices still open.
            slot.decoder.close_open(clock::now_ns(), cx, sink);
            if let Some(name) = name {
                sink.thread_name(tid, &name);
            }
        }
    }
    drop(guard);
    // SAFETY: the buffer is no longer registered and its owner (this thread)
    // has dropped its handle, so nothing refers to it any more.
    drop(unsafe { Box::from_raw(buf.as_ptr()) });
}

/// Cold half of [`record`]: first event of the thread or full chunk.
/// `stamp` is the exit timestamp already taken; enters are stamped here,
/// after the hand-off, so its cost stays outside the slice.
#[cold]
#[inline(never)]
fn record_slow(local: &Local, site: *const Site, kind: Kind, stamp: Option<u64>) {
    if local.busy.replace(true) {
        drop_events(1);
        return;
    }
    let stored = catch_unwind(AssertUnwindSafe(|| {
        let rt = Runtime::get();
        let buf = match NonNull::new(local.buf.get()) {
            Some(buf) => {
                rt.hand_off(buf);
                buf
            }
            None => {
                let buf = rt.register()?;
                local.buf.set(buf.as_ptr());
                buf
            }
        };
        let ts = stamp.unwrap_or_else(clock::now_ns);
        // SAFETY: the calling thread's own live buffer.
        unsafe { buf.as_ref() }
            .push(RawEvent::new(ts, site, kind))
            .then_some(())
    }));
    if !matches!(stored, Ok(Some(()))) {
        drop_events(1);
    }
    local.busy.set(false);
}

/// Records one event. `STAMP_FIRST` reads the clock before anything else
/// (for exits, so the runtime's own cost lands inside the slice); otherwise
/// it is read last (for enters, for the same reason).
#[inline(always)]
fn record<const STAMP_FIRST: bool>(site: *const Site, kind: Kind) {
    let early = if STAMP_FIRST { clock::now_ns() } else { 0 };
    let recorded = LOCAL.try_with(|local| {
        let buf = local.buf.get();
        if !buf.is_null() {
            // SAFETY: a non-null handle points to this thread's buffer,
            // which is freed only by this thread's `Local` destructor.
            let b = unsafe { &*buf };
            let ts = if STAMP_FIRST { early } else { clock::now_ns() };
            if b.push(RawEvent::new(ts, site, kind)) {
                return;
            }
        }
        record_slow(local, site, kind, STAMP_FIRST.then_some(early));
    });
    if recorded.is_err() {
        drop_events(1);
    }
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

/// Counts an event whose site pointer could not be recorded.
pub fn reject_site() {
    drop_events(1);
}

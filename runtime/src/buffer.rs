//! Per-thread event buffers, the global registry and the final flush.
//!
//! # Concurrency protocol
//!
//! Each thread owns one [`ThreadBuffer`]: a fixed chunk of
//! [`CHUNK_RECORDS`] raw records and a published length `len`.
//!
//! * **Record (hot path, owner thread only).** Read `len` (Relaxed: only the
//!   owner ever changes it outside the lock), write the record at index
//!   `len`, then store `len + 1` with **Release** (an event with a payload
//!   record writes both, then stores `len + 2`). No lock, no allocation, no
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
//! # Options, fork and signals
//!
//! * `PERFFLOW_OPTIONS` is read in [`Runtime::start`]: `log-enable=False`
//!   (or a trace file that cannot be created) clears [`ENABLED`], which the
//!   hot path reads first; the other options shape the file and the decoder.
//! * `fork`: `pthread_atfork` handlers hold the registry lock across the
//!   fork; in the child only the forking thread's slot is kept, its records
//!   so far are left to the parent, and the child's own file is created on
//!   its first written event (a child that only calls exec leaves none).
//! * Fatal signals: the handler wakes the watcher thread of `signals`,
//!   which runs [`finish`]; a thread interrupted while holding the registry
//!   lock makes that wait time out, and the trace keeps what was written.
//!
//! # Next
//!
//! * A background writer thread plugs into the hand-off: swap the full chunk
//!   for a spare under the lock, queue it, and let the thread format it, so
//!   recording threads never format. Drains must then take queued chunks
//!   before a thread's live chunk to keep each thread's order.
//! * Sites in a `dlclose`d library must be formatted before it unmaps; an
//!   unload hook emitted by the weaver would call a full flush.

use std::cell::Cell;
use std::fs::File;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::clock::{self, Epoch};
use crate::decode::{DecodeContext, ThreadDecoder};
use crate::event::{Kind, RawEvent};
use crate::instance;
use crate::options::{self, LogEvent, LogFormat, Options};
use crate::sampler;
use crate::signals;
use crate::site::Site;
use crate::writer::{write_json_string, ChromeJsonWriter, Layout, Sink};

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
}

impl ThreadBuffer {
    fn layout() -> std::alloc::Layout {
        // CHUNK_RECORDS * 16 bytes cannot overflow.
        std::alloc::Layout::array::<RawEvent>(CHUNK_RECORDS)
            .unwrap_or_else(|_| std::alloc::Layout::new::<RawEvent>())
    }

    /// Allocates a buffer, `None` when memory is exhausted.
    fn allocate() -> Option<NonNull<ThreadBuffer>> {
        // SAFETY: the layout has a non-zero size. The memory is left
        // uninitialised; only slots below `len` are ever read, and each of
        // those was written first.
        let records = NonNull::new(unsafe { std::alloc::alloc(Self::layout()) }.cast())?;
        let buf = Box::new(ThreadBuffer {
            records,
            len: AtomicUsize::new(0),
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

/// What the options decided, kept for the life of the process (and for a
/// forked child, which opens its own file).
struct Config {
    options: Options,
    instance_path: String,
    hostname: String,
}

impl Config {
    fn path(&self, pid: u32) -> PathBuf {
        options::trace_path(&self.options, &self.instance_path, &self.hostname, pid)
    }

    /// Creates the trace file of process `pid` and writes its header, or
    /// says once why it cannot and returns `None` (tracing is then off).
    fn open_sink(&self, pid: u32) -> Option<ChromeJsonWriter<File>> {
        let path = self.path(pid);
        let dir = &self.options.log_dir;
        if !dir.as_os_str().is_empty() {
            if let Err(e) = std::fs::create_dir_all(dir) {
                let _ = writeln!(
                    std::io::stderr(),
                    "perfflow: cannot create log-dir {}: {e}; tracing is off and the program runs on",
                    dir.display()
                );
                return None;
            }
        }
        match create_unique(&path, pid) {
            Ok((file, _)) => {
                let layout = match self.options.log_format {
                    LogFormat::Array => Layout::Array,
                    LogFormat::Object => Layout::Object {
                        other_data: self.other_data(pid),
                    },
                };
                let mut w = ChromeJsonWriter::with_layout(file, pid, layout);
                w.process_name(pid, &process_name());
                Some(w)
            }
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "perfflow: cannot create {}: {e}; tracing is off and the program runs on",
                    path.display()
                );
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

struct State {
    slots: Vec<Slot>,
    sink: Option<ChromeJsonWriter<File>>,
    cx: DecodeContext,
    finished: bool,
    /// Process that owns `sink`.
    pid: u32,
    config: Config,
    /// In a forked child: the monotonic time of the fork, until the child's
    /// own file is created (on its first written event, so a child that
    /// only calls exec leaves no file behind).
    forked_at: Option<u64>,
}

impl State {
    /// True when nothing may be written any more.
    fn closed(&self) -> bool {
        self.finished
    }

    /// The writer, creating a forked child's file on first use. In the new
    /// file, slices the child inherited open from its parent begin at the
    /// fork.
    fn sink(&mut self) -> Option<&mut ChromeJsonWriter<File>> {
        if let Some(fork_ns) = self.forked_at.take() {
            self.sink = self.config.open_sink(self.pid);
            signals::install();
            if self.sink.is_some() && self.config.options.sampler {
                let options = &self.config.options;
                sampler::start(options.sampler_interval, options.sampler_metrics.clone());
            }
            if let Some(sink) = self.sink.as_mut() {
                for slot in &mut self.slots {
                    slot.decoder.reopen_after_fork(fork_ns, &mut self.cx, sink);
                }
            }
        }
        self.sink.as_mut()
    }

    /// Formats slot `index`'s records `drained..upto`, or counts them as
    /// dropped when closed or there is no file.
    fn drain(&mut self, index: usize, upto: usize) {
        let from = self.slots[index].drained;
        let count = upto.min(CHUNK_RECORDS).saturating_sub(from);
        if count > 0 {
            if !self.closed() && self.sink().is_some_and(|s| s.is_open()) {
                let State {
                    slots, sink, cx, ..
                } = self;
                let slot = &mut slots[index];
                // SAFETY: the slot's buffer is live while it is registered,
                // the caller holds the registry lock and `upto` is a
                // published length.
                let records = unsafe { slot.buf.as_ref().published(from, upto) };
                if let Some(sink) = sink.as_mut() {
                    // SAFETY: every record was stored by `perfflow_*` entry
                    // points from a site pointer the caller promised is live
                    // for the program's lifetime.
                    unsafe { slot.decoder.decode(records, cx, sink) }
                }
            } else {
                drop_events(count as u64);
            }
        }
        self.slots[index].drained += count;
    }

    /// Ends the slices slot `index` left open and names its thread.
    fn close_thread(&mut self, index: usize, now_ns: u64) {
        if self.closed() {
            return;
        }
        let needs_file = self.slots[index].decoder.open_slices() > 0;
        if needs_file || self.sink.is_some() {
            let _ = self.sink();
        }
        let State {
            slots, sink, cx, ..
        } = self;
        let slot = &mut slots[index];
        if let Some(sink) = sink.as_mut() {
            slot.decoder.close_open(now_ns, cx, sink);
            if let Some(name) = thread_name(slot.decoder.tid()) {
                sink.thread_name(slot.decoder.tid(), &name);
            }
        }
    }

    fn slot_of(&self, buf: NonNull<ThreadBuffer>) -> Option<usize> {
        self.slots.iter().position(|s| s.buf == buf)
    }
}

/// Creates the trace file without ever truncating an existing one: another
/// live process may be writing it (a forked or started child whose file
/// name has no pid). If `path` exists, the pid goes before `.pfw`, and one
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
            let stem = name.strip_suffix(".pfw").unwrap_or(&name);
            let other = path.with_file_name(format!("{stem}.{pid}.pfw"));
            let file = create(&other)?;
            let _ = writeln!(
                std::io::stderr(),
                "perfflow: {} exists; this process ({pid}) writes {}",
                path.display(),
                other.display()
            );
            Ok((file, other))
        }
        Err(e) => Err(e),
    }
}

/// The process-wide runtime, created by the first event.
struct Runtime {
    state: Mutex<State>,
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// Cleared when events must not be recorded at all: `log-enable=False`, or
/// no trace file could be created. The hot path reads it first.
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Set by `cpu-mem-usage=True`: `around` enters and exits are followed by a
/// usage payload (see [`record_usage`]). Read only when [`ENABLED`] is set.
static CPU_MEM_USAGE: AtomicBool = AtomicBool::new(false);

/// Turns the usage payloads of `cpu-mem-usage` on or off; set once, when
/// the runtime starts.
pub(crate) fn set_cpu_mem_usage(on: bool) {
    CPU_MEM_USAGE.store(on, Ordering::Relaxed);
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

    /// Starts tracing (cold, once per process): reads `PERFFLOW_OPTIONS`,
    /// works out the instance path, creates the trace file, and registers
    /// the exit, fork and signal handlers.
    fn start() -> Runtime {
        let (options, warnings) = Options::from_env();
        for warning in &warnings {
            let _ = writeln!(std::io::stderr(), "{warning}");
        }
        let instance_path = instance::for_this_process().to_string();
        let config = Config {
            options,
            instance_path,
            hostname: hostname(),
        };
        let pid = std::process::id();
        let mut cx = DecodeContext::new(Epoch::capture());
        cx.compact = config.options.log_event == LogEvent::Compact;
        set_cpu_mem_usage(config.options.cpu_mem_usage);
        let sink = if config.options.log_enable {
            config.open_sink(pid)
        } else {
            None
        };
        if sink.is_none() {
            ENABLED.store(false, Ordering::Relaxed);
        } else {
            // SAFETY: registering plain `extern "C"` functions is always
            // valid; glibc also accepts them from a shared library.
            unsafe {
                if libc::atexit(flush_at_exit) != 0 {
                    let _ = writeln!(
                        std::io::stderr(),
                        "perfflow: cannot register the exit handler; the trace may be incomplete"
                    );
                }
                libc::pthread_atfork(Some(fork_prepare), Some(fork_parent), Some(fork_child));
            }
            signals::install();
            if config.options.sampler {
                sampler::start(
                    config.options.sampler_interval,
                    config.options.sampler_metrics.clone(),
                );
            }
        }
        Runtime {
            state: Mutex::new(State {
                slots: Vec::new(),
                sink,
                cx,
                finished: false,
                pid,
                config,
                forked_at: None,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates and registers the calling thread's buffer.
    fn register(&self) -> Option<NonNull<ThreadBuffer>> {
        let tid = current_tid();
        let buf = ThreadBuffer::allocate()?;
        self.lock().slots.push(Slot {
            buf,
            drained: 0,
            decoder: ThreadDecoder::new(tid),
        });
        Some(buf)
    }

    /// Writes out the calling thread's full chunk and empties it.
    fn hand_off(&self, buf: NonNull<ThreadBuffer>) {
        let mut state = self.lock();
        // SAFETY: `buf` belongs to the calling thread, which is alive.
        let b = unsafe { buf.as_ref() };
        let len = b.len.load(Ordering::Relaxed);
        match state.slot_of(buf) {
            Some(index) => {
                state.drain(index, len);
                state.slots[index].drained = 0;
            }
            None => drop_events(len as u64),
        }
        // Reset under the lock: the flusher reads lengths only under it.
        b.len.store(0, Ordering::Relaxed);
    }
}

/// Runs `write` on the trace writer, unless the trace is complete or
/// tracing is off; returns whether it ran. Used by the metric sampler.
pub(crate) fn with_sink(write: impl FnOnce(&mut ChromeJsonWriter<File>)) -> bool {
    let Some(rt) = RUNTIME.get() else {
        return false;
    };
    // Events recorded by this thread under the lock (a woven allocator)
    // must not try to take it again.
    let was_busy = LOCAL.try_with(|l| l.busy.replace(true)).ok();
    let written = {
        let mut state = rt.lock();
        if state.closed() || state.pid != std::process::id() {
            false
        } else {
            match state.sink() {
                Some(sink) if sink.is_open() => {
                    write(sink);
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

/// Waits (at most a few seconds) until the runtime's start-up is complete;
/// for threads that start-up itself spawns.
pub(crate) fn wait_until_started() {
    for _ in 0..500 {
        if RUNTIME.get().is_some() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Final flush: formats every published record and completes the file.
/// Runs from `atexit` (or a fatal signal); later calls do nothing.
pub fn finish() {
    let Some(rt) = RUNTIME.get() else { return };
    // Events recorded by this thread while it holds the lock below must not
    // try to take it again.
    let was_busy = LOCAL.try_with(|l| l.busy.replace(true)).ok();
    {
        let mut state = rt.lock();
        finish_locked(&mut state);
    }
    if let Some(was_busy) = was_busy {
        let _ = LOCAL.try_with(|l| l.busy.set(was_busy));
    }
}

fn finish_locked(state: &mut State) {
    if state.closed() {
        return;
    }
    for index in 0..state.slots.len() {
        // SAFETY: registered buffers are live.
        let len = unsafe { state.slots[index].buf.as_ref() }
            .len
            .load(Ordering::Acquire);
        // Read after the length: every record below it is stamped earlier,
        // so the slices closed here never end before they began.
        let now = clock::now_ns();
        state.drain(index, len);
        // The process ends inside slices still open.
        state.close_thread(index, now);
    }
    let pid = state.pid;
    if let Some(sink) = state.sink.as_mut() {
        sink.runtime_cost(pid, dropped_events());
        let reported = sink.has_failed();
        if let Err(e) = sink.finish() {
            if !reported {
                let _ = writeln!(std::io::stderr(), "perfflow: {e}");
            }
        }
    }
    state.finished = true;
    let dropped = dropped_events();
    if dropped > 0 {
        let _ = writeln!(
            std::io::stderr(),
            "perfflow: {dropped} events could not be recorded"
        );
    }
}

/// Thread exit: writes out the thread's remaining records and frees its
/// buffer.
fn retire(buf: NonNull<ThreadBuffer>) {
    let Some(rt) = RUNTIME.get() else { return };
    let mut state = rt.lock();
    if let Some(index) = state.slot_of(buf) {
        // SAFETY: the exiting thread's own live buffer.
        let len = unsafe { buf.as_ref() }.len.load(Ordering::Relaxed);
        state.drain(index, len);
        // The thread ends inside slices still open.
        state.close_thread(index, clock::now_ns());
        state.slots.swap_remove(index);
    }
    drop(state);
    // SAFETY: the buffer is no longer registered and its owner (this thread)
    // has dropped its handle, so nothing refers to it any more.
    drop(unsafe { Box::from_raw(buf.as_ptr()) });
}

// --- fork -------------------------------------------------------------------
//
// The registry lock is held across fork() so that the child never inherits
// it held by a thread that does not exist there. The guard lives in a
// thread-local of the forking thread from `prepare` to `parent`/`child`.

thread_local! {
    static INTERN_FORK_GUARD: std::cell::RefCell<Option<crate::site::ForkGuard>> =
        const { std::cell::RefCell::new(None) };
    static FORK_GUARD: std::cell::RefCell<Option<MutexGuard<'static, State>>> =
        const { std::cell::RefCell::new(None) };
}

extern "C" fn fork_prepare() {
    let _ = catch_unwind(|| {
        // These handlers are registered during start-up, so start-up has
        // begun: wait for it to finish (another thread may be inside it),
        // or the child would inherit it half done.
        let rt = Runtime::get();
        // Events recorded by this thread until the fork is over (a woven
        // allocator) must not take the lock it holds.
        let _ = LOCAL.try_with(|l| l.busy.set(true));
        // Lock order as everywhere: the intern lock is never held while
        // taking the registry lock elsewhere, so taking it first is safe.
        let interned = crate::site::lock_for_fork();
        let guard = rt.lock();
        let _ = FORK_GUARD.try_with(|g| *g.borrow_mut() = Some(guard));
        let _ = INTERN_FORK_GUARD.try_with(|g| *g.borrow_mut() = Some(interned));
    });
}

extern "C" fn fork_parent() {
    let _ = catch_unwind(|| {
        let _ = FORK_GUARD.try_with(|g| g.borrow_mut().take());
        let _ = INTERN_FORK_GUARD.try_with(|g| g.borrow_mut().take());
    });
    let _ = LOCAL.try_with(|l| l.busy.set(false));
}

/// In the child: only the forking thread exists. Its records so far belong
/// to the parent's trace; the child writes its own file under its own pid,
/// starting with the slices it is inside of.
extern "C" fn fork_child() {
    let _ = catch_unwind(|| {
        let Some(mut state) = FORK_GUARD
            .try_with(|g| g.borrow_mut().take())
            .ok()
            .flatten()
        else {
            return;
        };
        let own = LOCAL.try_with(|l| l.buf.get()).unwrap_or(ptr::null_mut());
        let mut kept = Vec::new();
        for mut slot in std::mem::take(&mut state.slots) {
            if slot.buf.as_ptr() == own {
                // SAFETY: the forking thread's own buffer, published up to
                // its current length.
                let len = unsafe { slot.buf.as_ref() }.len.load(Ordering::Relaxed);
                let records = unsafe { slot.buf.as_ref().published(slot.drained, len) };
                // Learn which slices are open without writing anything.
                // SAFETY: as in `drain`.
                unsafe { slot.decoder.decode(records, &mut state.cx, &mut NullSink) };
                slot.drained = len;
                slot.decoder.set_tid(current_tid());
                kept.push(slot);
            }
            // Other threads do not exist in the child: their buffers are
            // dropped with their slots (the memory is simply not reused).
        }
        state.slots = kept;
        state.sink = None;
        state.pid = std::process::id();
        state.forked_at = Some(clock::now_ns());
        DROPPED.store(0, Ordering::Relaxed);
        signals::after_fork();
        crate::usage::after_fork();
        drop(state);
    });
    let _ = LOCAL.try_with(|l| l.busy.set(false));
    let _ = INTERN_FORK_GUARD.try_with(|g| g.borrow_mut().take());
}

/// Decodes into nothing: used to replay state.
struct NullSink;
impl Sink for NullSink {}

/// Cold half of [`record`] and [`record_extra`]: first event of the thread
/// or full chunk. `stamp` is the exit timestamp already taken; enters are
/// stamped here, after the hand-off, so its cost stays outside the slice.
/// `extra` is what follows the event; an event and its payload always land
/// in the same chunk.
#[cold]
#[inline(never)]
fn record_slow(local: &Local, site: *const Site, kind: Kind, stamp: Option<u64>, extra: Extra) {
    if local.busy.replace(true) {
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
                let buf = rt.register()?;
                local.buf.set(buf.as_ptr());
                buf
            }
        };
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
}

/// Records one event. `STAMP_FIRST` reads the clock before anything else
/// (for exits, so the runtime's own cost lands inside the slice); otherwise
/// it is read last (for enters, for the same reason). With `cpu-mem-usage`
/// the event goes through [`record_usage`] instead.
#[inline(always)]
fn record<const STAMP_FIRST: bool>(site: *const Site, kind: Kind) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    if CPU_MEM_USAGE.load(Ordering::Relaxed) {
        record_usage(site, kind);
        return;
    }
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
        record_slow(local, site, kind, STAMP_FIRST.then_some(early), Extra::None);
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

/// Records entry into `site` followed by `payload` (an async id or number).
/// `site` must satisfy [`crate::event::packable`].
#[inline]
pub fn record_enter_with(site: *const Site, payload: crate::event::Payload) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    record_extra(site, Kind::Enter, None, Extra::Ready(payload.record()));
}

/// Records exit from `site` followed by `payload`, stamped first as in
/// [`record_exit`].
#[inline]
pub fn record_exit_with(site: *const Site, payload: crate::event::Payload) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    let ts = clock::now_ns();
    record_extra(site, Kind::Exit, Some(ts), Extra::Ready(payload.record()));
}

/// What follows an event record in its thread's buffer.
#[derive(Clone, Copy)]
enum Extra {
    /// Nothing.
    None,
    /// A usage payload with the thread's CPU time, read right after the
    /// event's timestamp (`around` enters with `cpu-mem-usage`).
    EnterUsage,
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
    let ts = stamp.unwrap_or_else(clock::now_ns);
    let payload = match extra {
        Extra::None => None,
        Extra::EnterUsage => Some(
            crate::event::Payload::Usage {
                cpu_ns: crate::usage::thread_cpu_ns(),
                rss_kib: 0,
            }
            .record(),
        ),
        Extra::Ready(payload) => Some(payload),
    };
    (ts, payload)
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
    // SAFETY: as in `wants_usage`.
    let around = unsafe { &*site }.pointcut() == crate::site::Pointcut::Around;
    match (around, kind) {
        (true, Kind::Enter) => record_extra(site, kind, None, Extra::EnterUsage),
        (true, Kind::Exit) => {
            let cpu_ns = crate::usage::thread_cpu_ns();
            let ts = clock::now_ns();
            let rss_kib = crate::usage::resident_kib();
            let payload = crate::event::Payload::Usage { cpu_ns, rss_kib }.record();
            record_extra(site, kind, Some(ts), Extra::Ready(payload));
        }
        (false, Kind::Enter) => record_extra(site, kind, None, Extra::None),
        (false, Kind::Exit) => record_extra(site, kind, Some(clock::now_ns()), Extra::None),
    }
}

/// Records an event and what follows it. `stamp` is the timestamp already
/// taken (exits); without one the clock is read here, last.
#[inline(always)]
fn record_extra(site: *const Site, kind: Kind, stamp: Option<u64>, extra: Extra) {
    let recorded = LOCAL.try_with(|local| {
        let buf = local.buf.get();
        if !buf.is_null() {
            // SAFETY: as in `record`.
            let b = unsafe { &*buf };
            let (ts, payload) = stamp_with(stamp, extra);
            let ev = RawEvent::new(ts, site, kind);
            let stored = match payload {
                Some(payload) => b.push_pair(ev, payload),
                None => b.push(ev),
            };
            if stored {
                return;
            }
        }
        record_slow(local, site, kind, stamp, extra);
    });
    if recorded.is_err() {
        drop_events(1);
    }
}

impl ThreadBuffer {
    /// Appends an event and its payload record if both fit (owner thread
    /// only). One Release store publishes the two, so a reader sees both or
    /// neither, and a chunk never ends between them.
    #[inline(always)]
    fn push_pair(&self, ev: RawEvent, payload: RawEvent) -> bool {
        let n = self.len.load(Ordering::Relaxed);
        if n + 2 > CHUNK_RECORDS {
            return false;
        }
        // SAFETY: `n + 2 <= CHUNK_RECORDS`, so both slots are inside the
        // allocation; they are above the published length, so no other
        // thread reads them.
        unsafe {
            let at = self.records.as_ptr().add(n);
            at.write(ev);
            at.add(1).write(payload);
        }
        self.len.store(n + 2, Ordering::Release);
        true
    }
}

/// Counts an event whose site pointer could not be recorded.
pub fn reject_site() {
    drop_events(1);
}

//! Trace output: the [`Sink`] trait and the Chrome Trace Format JSON writer.
//!
//! The decoder hands every event to a [`Sink`]. [`ChromeJsonWriter`] is the
//! sink used at run time; tests implement [`Sink`] with a recorder.
//!
//! File layout (a complete JSON array that `jq` and Perfetto accept):
//!
//! ```text
//! [
//! {"name":"process_name","ph":"M","pid":7,"tid":7,"args":{"name":"app"}},
//! {"name":"foo","cat":"app.c","pid":7,"tid":7,"ts":1700000000000000.125,"ph":"B"},
//! ...
//! {"name":"thread_name","ph":"M","pid":7,"tid":7,"args":{"name":"app"}}
//! ]
//! ```
//!
//! Every line is produced as `{...},` and the writer always holds the last
//! `,` back in memory until it knows whether another event follows, so the
//! final flush can drop it without seeking. Output goes to the destination
//! in blocks of about [`FLUSH_BYTES`]; nothing is written per event.
//!
//! Formatting is cheap per event, which is why this writer is hand-made
//! rather than built on `serde_json` or `fmt`: the JSON formatting runs for
//! every event on a core the traced program may want (see
//! docs/benchmarks.md, "JSON writer cost per event"). A line is four
//! pieces copied into the output block, with no per-event allocation,
//! escaping or formatting machinery:
//!
//! 1. the site prefix `{"name":…,"cat":…,"pid":P,"tid":`, escaped once per
//!    site and found again through the writer's `site_table::SiteTable` by site
//!    address;
//! 2. `T,"ts":M`, the thread id and the whole milliseconds of the
//!    timestamp, formatted once per thread switch or millisecond;
//! 3. the rest of the timestamp, `uuu.nnn`, from a table of three-digit
//!    groups;
//! 4. the phase tail (`,"ph":"B"},` and the newline).
//!
//! The fixed-size pieces are copied whole from fixed-size arrays into room
//! reserved beforehand (a few register moves), and only their real length
//! is kept; the next piece overwrites the rest.
//!
//! The `log-format=object` option of PerfFlowAspect plugs in here as a
//! different header/footer (`{"traceEvents":[` ... `]}`); compact `X` events
//! add one more [`Phase`] with a duration.

use std::hash::Hasher;
use std::io::{self, Write};
use std::ptr;
use std::sync::Arc;

use crate::block_output::BlockOutput;
use crate::decode::{Misuse, Outcome, Phase, TraceEvent};
use crate::error::Error;
use crate::site::{Pointcut, Site};
use crate::site_table::SiteTable;

/// Bytes buffered before they are written to the destination.
pub const FLUSH_BYTES: usize = 1 << 20;

/// Receiver of decoded trace data. Every method has a no-op default.
pub trait Sink {
    /// Name of the traced process (written once, at the start).
    fn process_name(&mut self, _pid: u32, _name: &str) {}
    /// Name of a thread, written when the thread's records are complete.
    fn thread_name(&mut self, _tid: u32, _name: &str) {}
    /// One trace event.
    fn event(&mut self, _event: &TraceEvent<'_>) {}
    /// The begin (`B`) of an `around` slice: [`Sink::event`] with
    /// [`Phase::Begin`], which is what it does unless a writer has a
    /// shorter way. The decoder's common case calls it (and
    /// [`Sink::slice_end`]) with the event's fields as arguments, so a
    /// writer's fast path needs no dispatch on the phase.
    #[inline(always)]
    fn slice_begin(&mut self, site: &Site, tid: u32, ts_ns: u64) {
        self.event(&TraceEvent {
            site,
            tid,
            ts_ns,
            phase: Phase::Begin,
        });
    }
    /// The end (`E`) of an `around` slice that ended by a return:
    /// [`Sink::event`] with [`Phase::End`] unless a writer has a shorter
    /// way.
    #[inline(always)]
    fn slice_end(&mut self, site: &Site, tid: u32, ts_ns: u64) {
        self.event(&TraceEvent {
            site,
            tid,
            ts_ns,
            phase: Phase::End,
        });
    }
    /// The end (`E`, `e` or compact `X`) of a slice that did not end by
    /// a return: its function was left by an exception (see
    /// [`crate::event::Payload::Unwound`]), or its thread or process ended
    /// inside it. By default written as any other event.
    fn ended(&mut self, event: &TraceEvent<'_>, _outcome: Outcome) {
        self.event(event);
    }
    /// One counter sample: the values of the counter track `name` at
    /// `ts_ns` (epoch ns).
    fn counter(&mut self, _name: &[u8], _tid: u32, _ts_ns: u64, _values: &[(&str, f64)]) {}
    /// Recorded events broke a pointcut rule (see [`Misuse`]).
    fn misuse(&mut self, _what: Misuse, _site: &Site) {}
    /// No more data follows.
    fn finish(&mut self) -> Result<(), Error> {
        Ok(())
    }
}

/// Hasher for site addresses and thread ids: one multiply, which is all
/// such a key needs.
#[derive(Default)]
pub struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_usize(n as usize);
    }
}

/// Writes `bytes` as a JSON string literal (with quotes). Invalid UTF-8 is
/// replaced by U+FFFD so the output is always valid JSON.
pub fn write_json_string(out: &mut Vec<u8>, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    out.push(b'"');
    for c in text.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            c if (c as u32) < 0x20 => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let v = c as u32 as usize;
                out.extend_from_slice(b"\\u00");
                out.push(HEX[v >> 4]);
                out.push(HEX[v & 0xf]);
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends the decimal digits of `v`.
#[inline]
pub fn write_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    }
    if v >= 10 {
        let d = v as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends a Chrome `ts` value: microseconds with three decimals, so the
/// nanosecond stamp survives exactly.
#[inline]
pub fn write_ts(out: &mut Vec<u8>, epoch_ns: u64) {
    let secs = epoch_ns / 1_000_000_000;
    let mut frac = [0u8; 10];
    // SAFETY: `frac` has the ten bytes.
    unsafe { put_sub_second(frac.as_mut_ptr(), (epoch_ns % 1_000_000_000) as u32) };
    let skip = if secs == 0 {
        // Within the first second of the epoch the microseconds lead,
        // without their leading zeros.
        frac[..5].iter().take_while(|&&c| c == b'0').count()
    } else {
        write_u64(out, secs);
        0
    };
    out.extend_from_slice(&frac[skip..]);
}

/// Appends a JSON number for `v`: finite values as Rust prints them (always
/// valid JSON), anything else as 0 — JSON has no NaN or infinity.
pub fn write_f64(out: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        let _ = write!(out, "{v}");
    } else {
        out.push(b'0');
    }
}

/// Category of an event: the source file for sync pointcuts, the scope (or
/// `"default"`) for async ones.
pub fn category(site: &Site) -> &[u8] {
    if site.pointcut().is_async() {
        site.scope().unwrap_or(b"default")
    } else {
        site.file()
    }
}

/// Streams a Chrome Trace Format JSON array into `W`.
pub struct ChromeJsonWriter<W: Write> {
    o: BlockOutput<W>,
    out: Vec<u8>,
    pid: u32,
    /// Each site's prefix, by site address.
    slots: SiteTable<SiteSlot>,
    /// `T,"ts":S` of the last event.
    thread: ThreadText,
    /// Closes the layout: `]` or `]}`.
    footer: &'static [u8],
}

/// First size of the site-prefix table.
const SITE_SLOTS: usize = 256;

/// One entry of the site-prefix table.
#[derive(Clone)]
struct SiteSlot {
    /// The prefix's length.
    len: usize,
    /// Its first [`HEAD`] bytes, copied whole when the prefix fits.
    head: [u8; HEAD],
    /// The prefix; `None` only in an empty entry, so that a table is made
    /// without allocating.
    prefix: Option<Arc<[u8]>>,
}

/// Bytes of a site prefix kept in its table entry: a prefix this long or
/// shorter is copied as one fixed-size block rather than by `memcpy`.
const HEAD: usize = 64;

impl Default for SiteSlot {
    fn default() -> SiteSlot {
        SiteSlot {
            len: 0,
            head: [0; HEAD],
            prefix: None,
        }
    }
}

impl SiteSlot {
    fn new(prefix: Arc<[u8]>) -> SiteSlot {
        let mut head = [0u8; HEAD];
        let n = prefix.len().min(HEAD);
        head[..n].copy_from_slice(&prefix[..n]);
        SiteSlot {
            len: prefix.len(),
            head,
            prefix: Some(prefix),
        }
    }
}

/// Bytes of [`ThreadText::text`], copied whole: a `u32` thread id (10
/// digits), `,"ts":` and the milliseconds of a `u64` stamp (14 digits) fit.
const THREAD_TEXT: usize = 32;

/// `T,"ts":M` for thread `tid` and the millisecond `M` that begins at
/// `base_ns`: an event's `ts` is that and `uuu.nnn`.
struct ThreadText {
    /// `u64::MAX` (no thread id) until the first event, and while the text
    /// must not be used (see [`ThreadText::set`]).
    tid: u64,
    /// The stamp of the millisecond's start, in epoch ns.
    base_ns: u64,
    len: usize,
    text: [u8; THREAD_TEXT],
}

impl ThreadText {
    #[cold]
    fn set(&mut self, tid: u32, ts_ns: u64) {
        let millis = ts_ns / 1_000_000;
        let mut t = Vec::with_capacity(THREAD_TEXT);
        write_u64(&mut t, u64::from(tid));
        t.extend_from_slice(b",\"ts\":");
        // Within the first millisecond of the epoch the microseconds lead.
        if millis != 0 {
            write_u64(&mut t, millis);
        }
        self.text[..t.len()].copy_from_slice(&t);
        self.len = t.len();
        self.base_ns = millis * 1_000_000;
        // In the last millisecond a u64 holds, an offset from it could wrap
        // around to look small; in the first millisecond of the epoch (only
        // tests stamp events there) the microseconds lose their leading
        // zeros. Such a text is used by the event that set it, in
        // `ChromeJsonWriter::line_cold`, and never by the fast path.
        self.tid = if self.base_ns > u64::MAX - 1_000_000 || self.base_ns == 0 {
            u64::MAX
        } else {
            u64::from(tid)
        };
    }
}

/// Bytes of a [`Tail`], copied whole.
const TAIL: usize = 24;

/// The end of an event line after its timestamp: `len` bytes of `text`.
struct Tail {
    len: usize,
    text: [u8; TAIL],
}

impl Tail {
    const fn new(s: &[u8]) -> Tail {
        let mut text = [0u8; TAIL];
        let mut i = 0;
        while i < s.len() {
            text[i] = s[i];
            i += 1;
        }
        Tail { len: s.len(), text }
    }
}

const TAIL_BEGIN: Tail = Tail::new(b",\"ph\":\"B\"},\n");
const TAIL_END: Tail = Tail::new(b",\"ph\":\"E\"},\n");
const TAIL_INSTANT: Tail = Tail::new(b",\"ph\":\"i\",\"s\":\"t\"},\n");
/// For the phases that go on with an id or a duration.
const TAIL_NONE: Tail = Tail::new(b"");

/// Room reserved after a site prefix for the rest of a line, the whole
/// copies included.
const LINE_ROOM: usize = THREAD_TEXT + 16 + TAIL;

/// The digit pairs `00` to `99` (and 28 unused), to index with a masked
/// value.
const PAIRS: [[u8; 2]; 128] = {
    let mut t = [[b'0'; 2]; 128];
    let mut i = 0;
    while i < 100 {
        t[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    t
};

/// `000.` to `999.`: three digits and a point, stored as one `u32`.
static TRIPLES: [[u8; 4]; 1000] = {
    let mut t = [[b'.'; 4]; 1000];
    let mut i = 0;
    while i < 1000 {
        t[i] = [
            b'0' + (i / 100) as u8,
            b'0' + (i / 10 % 10) as u8,
            b'0' + (i % 10) as u8,
            b'.',
        ];
        i += 1;
    }
    t
};

/// Writes `uuu.nnn`, the microseconds and nanoseconds of `off` (below 10^6
/// nanoseconds), at `at` with two four-byte stores from [`TRIPLES`] (the
/// eighth byte, a `.`, is not part of it).
///
/// # Safety
/// `at` must be valid for writing eight bytes, and `off` below 10^6.
#[inline(always)]
unsafe fn put_sub_milli(at: *mut u8, off: u32) {
    let micros = off / 1000;
    let nanos = off - micros * 1000;
    // SAFETY: both are below 1000 as `off` is below 10^6 (the caller's
    // promise), and `at` has the eight bytes; unaligned stores.
    unsafe {
        let u = *TRIPLES.get_unchecked(micros as usize);
        let n = *TRIPLES.get_unchecked(nanos as usize);
        ptr::write_unaligned(at.cast::<[u8; 4]>(), u);
        ptr::write_unaligned(at.add(4).cast::<[u8; 4]>(), n);
    }
}

/// Writes `uuuuuu.nnn`, the microseconds and nanoseconds of `sub` (below
/// 10^9 nanoseconds), at `at`: five two-byte stores and no loop.
///
/// # Safety
/// `at` must be valid for writing ten bytes.
#[inline(always)]
unsafe fn put_sub_second(at: *mut u8, sub: u32) {
    let micros = sub / 1000;
    let nanos = sub - micros * 1000;
    let a = micros / 10_000;
    let bc = micros - a * 10_000;
    let b = bc / 100;
    let c = bc - b * 100;
    let d = nanos / 10;
    let pair = |v: u32| PAIRS[(v & 127) as usize];
    // SAFETY: the caller's promise; unaligned two-byte stores.
    unsafe {
        ptr::write_unaligned(at.cast::<[u8; 2]>(), pair(a));
        ptr::write_unaligned(at.add(2).cast::<[u8; 2]>(), pair(b));
        ptr::write_unaligned(at.add(4).cast::<[u8; 2]>(), pair(c));
        ptr::write_unaligned(at.add(6).cast::<[u8; 2]>(), [b'.', pair(d)[0]]);
        ptr::write_unaligned(
            at.add(8).cast::<[u8; 2]>(),
            [pair(d)[1], b'0' + (nanos - d * 10) as u8],
        );
    }
}

/// How the events are wrapped (`log-format`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// A JSON array of events.
    Array,
    /// `{"displayTimeUnit":"us","otherData":{…},"traceEvents":[…]}`; the
    /// string is the `otherData` object, already JSON.
    Object { other_data: String },
}

impl<W: Write> ChromeJsonWriter<W> {
    /// Starts an array trace for process `pid` (writes nothing to `dest` yet).
    pub fn new(dest: W, pid: u32) -> ChromeJsonWriter<W> {
        Self::with_layout(dest, pid, Layout::Array)
    }

    /// Starts a trace in the given layout (writes nothing to `dest` yet).
    pub fn with_layout(dest: W, pid: u32, layout: Layout) -> ChromeJsonWriter<W> {
        let mut out = Vec::with_capacity(FLUSH_BYTES + 4096);
        let footer: &'static [u8] = match &layout {
            Layout::Array => {
                out.extend_from_slice(b"[\n");
                b"]\n"
            }
            Layout::Object { other_data } => {
                out.extend_from_slice(b"{\"displayTimeUnit\":\"us\",\"otherData\":");
                out.extend_from_slice(other_data.as_bytes());
                out.extend_from_slice(b",\"traceEvents\":[\n");
                b"]}\n"
            }
        };
        ChromeJsonWriter {
            o: BlockOutput::new(dest),
            out,
            pid,
            slots: SiteTable::new(SITE_SLOTS),
            thread: ThreadText {
                tid: u64::MAX,
                base_ns: 0,
                len: 0,
                text: [0; THREAD_TEXT],
            },
            footer,
        }
    }

    /// One counter ("C") event: a sample of one or more values on the
    /// counter track `name` (Perfetto draws one track per argument).
    pub fn counter(&mut self, name: &[u8], tid: u32, ts_ns: u64, values: &[(&str, f64)]) {
        if !self.is_open() {
            self.o.lost += 1;
            return;
        }
        self.out.extend_from_slice(b"{\"name\":");
        write_json_string(&mut self.out, name);
        self.out.extend_from_slice(b",\"ph\":\"C\",\"pid\":");
        write_u64(&mut self.out, u64::from(self.pid));
        self.out.extend_from_slice(b",\"tid\":");
        write_u64(&mut self.out, u64::from(tid));
        self.out.extend_from_slice(b",\"ts\":");
        write_ts(&mut self.out, ts_ns);
        self.out.extend_from_slice(b",\"args\":{");
        for (i, (key, value)) in values.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            write_json_string(&mut self.out, key.as_bytes());
            self.out.push(b':');
            write_f64(&mut self.out, *value);
        }
        self.out.extend_from_slice(b"}},\n");
        self.o.formatted();
        self.maybe_flush();
    }

    /// A flow event: named after the flow's scope (`flow` without one),
    /// category `flow`, so both ends match whatever functions they are in.
    fn flow_event(&mut self, ev: &TraceEvent<'_>, id: u64) {
        self.out.extend_from_slice(b"{\"name\":");
        write_json_string(&mut self.out, ev.site.scope().unwrap_or(b"flow"));
        self.out.extend_from_slice(b",\"cat\":\"flow\",\"pid\":");
        write_u64(&mut self.out, u64::from(self.pid));
        self.out.extend_from_slice(b",\"tid\":");
        write_u64(&mut self.out, u64::from(ev.tid));
        self.out.extend_from_slice(b",\"ts\":");
        write_ts(&mut self.out, ev.ts_ns);
        let ph: &[u8] = match ev.phase {
            Phase::FlowEnd(_) => b",\"ph\":\"f\",\"bp\":\"e\",\"id\":",
            _ => b",\"ph\":\"s\",\"id\":",
        };
        self.out.extend_from_slice(ph);
        write_u64(&mut self.out, id);
        self.out.extend_from_slice(b"},\n");
        self.o.formatted();
        self.maybe_flush();
    }

    /// A metadata (`"M"`) event `name` whose `args` is `args_json`, an
    /// object already written as JSON.
    pub fn metadata_args(&mut self, name: &[u8], tid: u32, args_json: &str) {
        if !self.is_open() {
            return;
        }
        self.out.extend_from_slice(b"{\"name\":");
        write_json_string(&mut self.out, name);
        self.out.extend_from_slice(b",\"ph\":\"M\",\"pid\":");
        write_u64(&mut self.out, u64::from(self.pid));
        self.out.extend_from_slice(b",\"tid\":");
        write_u64(&mut self.out, u64::from(tid));
        self.out.extend_from_slice(b",\"args\":");
        self.out.extend_from_slice(args_json.as_bytes());
        self.out.extend_from_slice(b"},\n");
        self.maybe_flush();
    }

    /// Bytes handed to the destination so far.
    pub fn bytes_written(&self) -> u64 {
        self.o.bytes_written()
    }

    /// The last line of the trace: a metadata record of what tracing cost
    /// (events written, bytes, events dropped, the most bytes of record
    /// buffers held at once). Readers find it under the
    /// name `perfflow_runtime`; a trace without it was cut short.
    pub fn runtime_cost(&mut self, pid_tid: u32, dropped: u64, buffer_bytes_peak: u64) {
        if !self.is_open() {
            return;
        }
        let bytes = self.o.bytes_written() + self.out.len() as u64;
        self.out
            .extend_from_slice(b"{\"name\":\"perfflow_runtime\",\"ph\":\"M\",\"pid\":");
        write_u64(&mut self.out, u64::from(self.pid));
        self.out.extend_from_slice(b",\"tid\":");
        write_u64(&mut self.out, u64::from(pid_tid));
        self.out
            .extend_from_slice(b",\"args\":{\"events_written\":");
        write_u64(&mut self.out, self.o.written);
        self.out.extend_from_slice(b",\"bytes_written\":");
        write_u64(&mut self.out, bytes);
        self.out.extend_from_slice(b",\"events_dropped\":");
        write_u64(&mut self.out, dropped + self.o.lost);
        self.out.extend_from_slice(b",\"buffer_bytes_peak\":");
        write_u64(&mut self.out, buffer_bytes_peak);
        self.out.extend_from_slice(b",\"format_version\":");
        write_u64(&mut self.out, u64::from(crate::event::FORMAT_VERSION));
        self.out.extend_from_slice(b"}},\n");
    }

    /// The destination and the counts of events written and lost.
    pub fn output(&self) -> &BlockOutput<W> {
        &self.o
    }

    /// Events written so far.
    pub fn events_written(&self) -> u64 {
        self.o.events_written()
    }

    /// Events that did not reach the destination (see
    /// [`BlockOutput::events_lost`]).
    pub fn events_lost(&self) -> u64 {
        self.o.events_lost()
    }

    /// The destination, for tests that write into a `Vec<u8>`.
    pub fn into_inner(self) -> W {
        self.o.into_inner()
    }

    /// True while events are still written (not finished, no I/O error).
    pub fn is_open(&self) -> bool {
        self.o.is_open()
    }

    /// True once writing failed (the failure was reported on stderr).
    pub fn has_failed(&self) -> bool {
        self.o.has_failed()
    }

    /// The whole line of a slice begin or end, `tail` being its phase's.
    #[inline(always)]
    fn slice_line(&mut self, site: &Site, tid: u32, ts_ns: u64, tail: &Tail) {
        if !self.is_open() {
            self.o.lost += 1;
            return;
        }
        self.line(site, tid, ts_ns, tail);
        self.o.formatted();
        self.maybe_flush();
    }

    /// Formats an event line up to `tail` (included): the site's prefix,
    /// the thread text, `uuu.nnn` and the tail, copied whole into room
    /// reserved once. An event whose site is not in the table yet, or
    /// whose thread or millisecond is not the thread text's, takes
    /// [`ChromeJsonWriter::line_cold`].
    #[inline(always)]
    fn line(&mut self, site: &Site, tid: u32, ts_ns: u64, tail: &Tail) {
        let addr = site as *const Site as usize;
        // The thread text holds while the thread stays and the stamp is
        // within the same millisecond (stamps of different threads are not
        // in order: an earlier one wraps to a large offset).
        let off = ts_ns.wrapping_sub(self.thread.base_ns);
        let s = match self.slots.get(addr) {
            Some(s) if self.thread.tid == u64::from(tid) && off < 1_000_000 => s,
            _ => return self.line_cold(site, tid, ts_ns, tail),
        };
        let out = &mut self.out;
        out.reserve(s.len + HEAD + LINE_ROOM);
        // SAFETY: the reserve above leaves room for the prefix copied
        // whole (HEAD bytes, or its length when longer) and LINE_ROOM more
        // bytes: the whole copies of the thread text (THREAD_TEXT), the
        // eight bytes of `uuu.nnn` (`off` is below 10^6) and the tail
        // (TAIL). Every byte up to the new length is written, in order; the
        // bytes a whole copy leaves past a piece's real length are
        // overwritten by the next piece or lie beyond the length.
        unsafe {
            let start = out.as_mut_ptr().add(out.len());
            let mut at = start;
            if s.len <= HEAD {
                ptr::copy_nonoverlapping(s.head.as_ptr(), at, HEAD);
                at = at.add(s.len);
            } else {
                // `SiteSlot::new` set `len` to this prefix's length.
                let prefix = s.prefix.as_deref().unwrap_or_default();
                ptr::copy_nonoverlapping(prefix.as_ptr(), at, prefix.len());
                at = at.add(prefix.len());
            }
            ptr::copy_nonoverlapping(self.thread.text.as_ptr(), at, THREAD_TEXT);
            at = at.add(self.thread.len);
            put_sub_milli(at, off as u32);
            at = at.add(7);
            ptr::copy_nonoverlapping(tail.text.as_ptr(), at, TAIL);
            at = at.add(tail.len);
            out.set_len(out.len() + at.offset_from(start) as usize);
        }
    }

    /// [`ChromeJsonWriter::line`] for an event it does not format: puts
    /// the site in the table and sets the thread text as needed, then
    /// formats the line field by field.
    #[cold]
    #[inline(never)]
    fn line_cold(&mut self, site: &Site, tid: u32, ts_ns: u64, tail: &Tail) {
        let addr = site as *const Site as usize;
        let prefix = self.site_prefix(addr, site);
        let off = ts_ns.wrapping_sub(self.thread.base_ns);
        if self.thread.tid != u64::from(tid) || off >= 1_000_000 {
            self.thread.set(tid, ts_ns);
        }
        self.out.extend_from_slice(&prefix);
        write_u64(&mut self.out, u64::from(tid));
        self.out.extend_from_slice(b",\"ts\":");
        write_ts(&mut self.out, ts_ns);
        self.out.extend_from_slice(&tail.text[..tail.len]);
    }

    /// The rest of an event line whose phase has an id or a duration.
    fn phase_with_number(&mut self, phase: Phase) {
        let (ph, id): (&[u8], Option<u64>) = match phase {
            Phase::AsyncBegin(id) => (b",\"ph\":\"b\",\"id\":", Some(id)),
            Phase::AsyncEnd(id) => (b",\"ph\":\"e\",\"id\":", Some(id)),
            Phase::AsyncInstant(id) => (b",\"ph\":\"n\",\"id\":", Some(id)),
            Phase::Complete(dur_ns) => {
                self.out.extend_from_slice(b",\"ph\":\"X\",\"dur\":");
                write_ts(&mut self.out, dur_ns);
                (b"}", None)
            }
            // Written whole by `event` or `flow_event`.
            Phase::Begin
            | Phase::End
            | Phase::Instant
            | Phase::FlowStart(_)
            | Phase::FlowEnd(_) => return,
        };
        self.out.extend_from_slice(ph);
        if let Some(id) = id {
            write_u64(&mut self.out, id);
            self.out.push(b'}');
        }
        self.out.extend_from_slice(b",\n");
    }

    /// The line prefix of `site` (at `addr`): from the table, or built
    /// and put there.
    fn site_prefix(&mut self, addr: usize, site: &Site) -> Arc<[u8]> {
        if let Some(SiteSlot {
            prefix: Some(prefix),
            ..
        }) = self.slots.get(addr)
        {
            return prefix.clone();
        }
        let prefix: Arc<[u8]> = self.build_prefix(site).into();
        self.slots.insert(addr, SiteSlot::new(prefix.clone()));
        prefix
    }

    fn build_prefix(&mut self, site: &Site) -> Box<[u8]> {
        if !crate::site::known_version(site.abi_version()) {
            self.misuse(Misuse::UnknownSiteVersion, site);
        }
        let mut p = Vec::with_capacity(64);
        p.extend_from_slice(b"{\"name\":");
        write_json_string(&mut p, site.name());
        p.extend_from_slice(b",\"cat\":");
        write_json_string(&mut p, category(site));
        p.extend_from_slice(b",\"pid\":");
        write_u64(&mut p, u64::from(self.pid));
        p.extend_from_slice(b",\"tid\":");
        p.into_boxed_slice()
    }

    fn metadata(&mut self, what: &[u8], tid: u32, name: &str) {
        if !self.is_open() {
            return;
        }
        self.out.extend_from_slice(b"{\"name\":\"");
        self.out.extend_from_slice(what);
        self.out.extend_from_slice(b"\",\"ph\":\"M\",\"pid\":");
        write_u64(&mut self.out, u64::from(self.pid));
        self.out.extend_from_slice(b",\"tid\":");
        write_u64(&mut self.out, u64::from(tid));
        self.out.extend_from_slice(b",\"args\":{\"name\":");
        write_json_string(&mut self.out, name.as_bytes());
        self.out.extend_from_slice(b"}},\n");
        self.maybe_flush();
    }

    /// Writes the lines buffered so far (but a trailing separator), so an
    /// idle program's file holds every event formatted.
    pub fn write_pending(&mut self) {
        if self.is_open() && self.out.len() > 2 {
            self.flush_block();
        }
    }

    #[inline]
    fn maybe_flush(&mut self) {
        if self.out.len() >= FLUSH_BYTES {
            self.flush_block();
        }
    }

    /// Writes the buffered lines except a trailing `,\n`, which stays behind
    /// until the next line (or the end of the array) decides its fate.
    fn flush_block(&mut self) {
        let keep = if self.out.ends_with(b",\n") { 2 } else { 0 };
        let upto = self.out.len() - keep;
        if let Err(e) = self.write_out(upto) {
            self.fail(e);
            return;
        }
        self.out.drain(..upto);
    }

    /// Hands `out[..upto]` to the destination (see
    /// [`BlockOutput::write_block`]).
    fn write_out(&mut self, upto: usize) -> io::Result<()> {
        self.o.write_block(&self.out[..upto], event_lines_within)
    }

    fn fail(&mut self, e: io::Error) {
        self.o.fail(e);
        self.out.clear();
    }
}

impl<W: Write> Sink for ChromeJsonWriter<W> {
    fn process_name(&mut self, pid: u32, name: &str) {
        self.metadata(b"process_name", pid, name);
    }

    fn thread_name(&mut self, tid: u32, name: &str) {
        self.metadata(b"thread_name", tid, name);
    }

    fn counter(&mut self, name: &[u8], tid: u32, ts_ns: u64, values: &[(&str, f64)]) {
        ChromeJsonWriter::counter(self, name, tid, ts_ns, values);
    }

    #[inline]
    fn event(&mut self, ev: &TraceEvent<'_>) {
        if !self.is_open() {
            self.o.lost += 1;
            return;
        }
        if let Phase::FlowStart(id) | Phase::FlowEnd(id) = ev.phase {
            self.flow_event(ev, id);
            return;
        }
        let tail = match ev.phase {
            Phase::Begin => &TAIL_BEGIN,
            Phase::End => &TAIL_END,
            Phase::Instant => &TAIL_INSTANT,
            _ => &TAIL_NONE,
        };
        self.line(ev.site, ev.tid, ev.ts_ns, tail);
        if tail.len == 0 {
            self.phase_with_number(ev.phase);
        }
        self.o.formatted();
        self.maybe_flush();
    }

    #[inline(always)]
    fn slice_begin(&mut self, site: &Site, tid: u32, ts_ns: u64) {
        self.slice_line(site, tid, ts_ns, &TAIL_BEGIN);
    }

    #[inline(always)]
    fn slice_end(&mut self, site: &Site, tid: u32, ts_ns: u64) {
        self.slice_line(site, tid, ts_ns, &TAIL_END);
    }

    /// The end with `"args":{"outcome":"raised"}` (or `open_at_end`,
    /// `killed`). Cold: one line per exception that leaves a woven
    /// function, and per slice open when a thread or the process ends.
    #[cold]
    fn ended(&mut self, ev: &TraceEvent<'_>, outcome: Outcome) {
        if !matches!(
            ev.phase,
            Phase::End | Phase::AsyncEnd(_) | Phase::Complete(_)
        ) {
            return self.event(ev);
        }
        if !self.is_open() {
            self.o.lost += 1;
            return;
        }
        let prefix = self.site_prefix(ev.site as *const Site as usize, ev.site);
        self.out.extend_from_slice(&prefix);
        write_u64(&mut self.out, u64::from(ev.tid));
        self.out.extend_from_slice(b",\"ts\":");
        write_ts(&mut self.out, ev.ts_ns);
        match ev.phase {
            Phase::AsyncEnd(id) => {
                self.out.extend_from_slice(b",\"ph\":\"e\",\"id\":");
                write_u64(&mut self.out, id);
            }
            Phase::Complete(dur_ns) => {
                self.out.extend_from_slice(b",\"ph\":\"X\",\"dur\":");
                write_ts(&mut self.out, dur_ns);
            }
            _ => self.out.extend_from_slice(b",\"ph\":\"E\""),
        }
        self.out.extend_from_slice(b",\"args\":{\"outcome\":\"");
        self.out.extend_from_slice(outcome.as_str().as_bytes());
        self.out.extend_from_slice(b"\"}},\n");
        self.o.formatted();
        self.maybe_flush();
    }

    fn misuse(&mut self, what: Misuse, site: &Site) {
        self.o.misuse(what, site);
    }

    fn finish(&mut self) -> Result<(), Error> {
        if !self.o.start_finish().map_err(Error::Io)? {
            return Ok(());
        }
        if self.out.ends_with(b",\n") {
            let n = self.out.len();
            self.out.truncate(n - 2);
            self.out.push(b'\n');
        }
        self.out.extend_from_slice(self.footer);
        let result = self.write_out(self.out.len()).and_then(|()| self.o.flush());
        self.out = Vec::new();
        result.map_err(Error::Io)
    }
}

/// Says once per kind of misuse, on stderr, what happened at `site` and
/// what the trace does about it; `reported` remembers the kinds said.
pub(crate) fn report_misuse(reported: &mut [bool; 4], what: Misuse, site: &Site) {
    let idx = what as usize;
    if reported[idx] {
        return;
    }
    reported[idx] = true;
    let name = String::from_utf8_lossy(site.name());
    if what == Misuse::TooManyOpenSlices {
        crate::shield::stderr_line(format_args!(
            "perfflow: warning: {} slices open on one thread at `{name}` (woven functions \
             left by longjmp, or a deeper recursion?); the newest half of them end here and \
             further cases are not reported",
            crate::decode::MAX_OPEN_SLICES
        ));
        return;
    }
    let (text, outcome) = match what {
        Misuse::ExitWithoutEnter => (
            "exit without a matching enter",
            "the exit is dropped and counted in events_dropped",
        ),
        Misuse::UnbalancedExit => (
            "exit while inner regions were still open",
            "the exit is written and the inner regions are closed at the same time",
        ),
        Misuse::UnknownSiteVersion => (
            "site with an unknown ABI version",
            "its events are written with the site read as this runtime's version",
        ),
        Misuse::TooManyOpenSlices => return,
    };
    let pointcut = match site.pointcut() {
        Pointcut::Around => "around",
        Pointcut::AroundAsync => "around_async",
        _ => "one-sided",
    };
    crate::shield::stderr_line(format_args!(
        "perfflow: warning: {text} at `{name}` ({pointcut}); \
         {outcome}; further cases are not reported"
    ));
}

/// Event lines (not metadata) of `block` whose object ends within its
/// first `done` bytes: those that reached the destination in full.
fn event_lines_within(block: &[u8], done: usize) -> u64 {
    let mut reached = 0;
    let mut start = 0;
    for line in block.split(|&b| b == b'\n') {
        if start >= done {
            break;
        }
        let object = line.strip_suffix(b",").unwrap_or(line);
        let is_event =
            object.starts_with(b"{\"name\":") && !object.windows(8).any(|w| w == b"\"ph\":\"M\"");
        if is_event && start + object.len() <= done {
            reached += 1;
        }
        start += line.len() + 1;
    }
    reached
}

#[cfg(test)]
mod counter_tests {
    use super::*;

    #[test]
    fn counter_events_carry_every_value_as_a_json_number() {
        let mut w = ChromeJsonWriter::new(Vec::new(), 7);
        w.counter(
            b"mem (bytes)",
            7,
            1_500_000_000_000,
            &[("used", 1024.0), ("bad", f64::NAN)],
        );
        w.finish().unwrap();
        let text = String::from_utf8(w.into_inner()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v[0]["ph"], "C");
        assert_eq!(v[0]["args"]["used"], 1024.0);
        assert_eq!(v[0]["args"]["bad"], 0);
        assert_eq!(v[0]["ts"], 1_500_000_000.0);
    }
}

//! The Perfetto writer (`log-format=perfetto`): Perfetto's native protobuf
//! trace (`.pftrace`), a `Trace` message written as a stream of
//! `TracePacket`s.
//!
//! Layout of the stream:
//!
//! - Sequence 1 (the process): a clock snapshot, the process's track
//!   descriptor, the metadata records as `chrome_events.metadata` entries
//!   whose `json_value` is the object the JSON writer puts in `args`
//!   (`perfflow_process`, `perfflow_sampler`, …, and last
//!   `perfflow_runtime`), counter track descriptors and counter samples.
//! - One sequence per thread, opened by its first event: a packet that
//!   clears the incremental state and carries a clock snapshot and the
//!   sequence's defaults (timestamps on the incremental clock 64, events on
//!   the thread's track), then the thread's track descriptor, then its
//!   events. A thread's descriptor is written again with its name when its
//!   records are complete.
//!
//! Timestamps are nanoseconds since the Unix epoch, the time base of the
//! JSON writer. Every sequence declares the sequence-scoped incremental
//! clock 64 as equal to `BUILTIN_CLOCK_REALTIME` at the process's clock
//! pairing, so an event's `timestamp` is its distance from the previous one
//! on its sequence (one or two bytes); an event stamped before the previous
//! one (a compact slice's begin, a counter sample at a slice's begin)
//! carries an absolute `timestamp` with `timestamp_clock_id` REALTIME.
//!
//! Names, categories (the source file, or the async scope) and source
//! locations are interned per sequence: a site's first event on a sequence
//! carries `interned_data` for it; later ones carry the ids. Sync slices are
//! `TYPE_SLICE_BEGIN`/`TYPE_SLICE_END` on the thread's track; async slices
//! (`around_async`) go on a track of their own per async id, whose
//! descriptor (child of the process track, named after the site) precedes
//! each of its events. Flows are instants (category `flow`, named after
//! the flow scope) on the thread's track carrying `flow_ids` where data
//! leaves and `terminating_flow_ids` where it arrives. A counter sample is
//! one `TYPE_COUNTER` event for all its values (`extra_double_counter_*`),
//! each value on a track named after its key, grouped under a track named
//! after the counter. The end of a slice whose function was left by an
//! exception carries the debug annotation `outcome` = `"raised"` (the
//! trace processor puts it among the slice's args as `debug.outcome`);
//! one ended because its thread or process ended inside it,
//! `"open_at_end"` or `"killed"`.
//!
//! Only packets that define interned data carry `sequence_flags`
//! (`SEQ_NEEDS_INCREMENTAL_STATE`): the flag lets a reader skip packets of
//! a sequence whose incremental state was lost (a ring buffer that
//! wrapped), which cannot happen to a file written from its start, so the
//! event packets leave it out (2 bytes per event).
//!
//! The common events take a fast path ([`put_event`]): a slice end, and a
//! slice begin whose site the sequence has seen. Each sequence keeps the
//! whole packet of its slice end and of the begins of the sites it has
//! seen (a `site_table::SiteTable` by site address) but for
//! the timestamp's varint ([`Template`]: headers, body, sequence id, then
//! the timestamp's tag), so such an event is two 16-byte stores, the
//! varint and the packet's length. Runs of them are written in one loop
//! ([`PerfettoWriter::decode`] with the decoder's
//! [`ThreadDecoder::plain_run`]), with the thread's sequence, the buffer's
//! end and the sequence's clock held in locals for the run.
//!
//! Every packet is formatted whole in memory and blocks of whole packets
//! go to the destination, so a file cut short by a kill holds a sequence of
//! complete packets, perhaps followed by one partial packet that readers
//! drop. An event is one packet whose first field is `track_event` (a
//! compact slice writes its begin as a second packet that starts
//! differently), which lets a failed write count what reached the file.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::io::Write;

use crate::block_output::BlockOutput;
use crate::clock::Epoch;
use crate::decode::{DecodeContext, Misuse, Outcome, Phase, SliceRun, ThreadDecoder, TraceEvent};
use crate::error::Error;
use crate::event::RawEvent;
use crate::protobuf::Encoder;
use crate::site::Site;
use crate::site_table::{SiteTable, SiteView};
use crate::writer::{category, AddrHasher, Sink, FLUSH_BYTES};

// Field numbers (perfetto/trace/trace.proto, trace_packet.proto and the
// messages below).
const TRACE_PACKET: u32 = 1;
const PKT_TIMESTAMP: u32 = 8;
const PKT_SEQUENCE_ID: u32 = 10;
const PKT_TRACK_EVENT: u32 = 11;
const PKT_INTERNED_DATA: u32 = 12;
const PKT_SEQUENCE_FLAGS: u32 = 13;
const PKT_CHROME_EVENTS: u32 = 5;
const PKT_CLOCK_SNAPSHOT: u32 = 6;
const PKT_TIMESTAMP_CLOCK_ID: u32 = 58;
const PKT_DEFAULTS: u32 = 59;
const PKT_TRACK_DESCRIPTOR: u32 = 60;
const PKT_FIRST_ON_SEQUENCE: u32 = 87;

const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;

const TE_CATEGORY_IIDS: u32 = 3;
const TE_TYPE: u32 = 9;
const TE_NAME_IID: u32 = 10;
const TE_TRACK_UUID: u32 = 11;
const TE_SOURCE_LOCATION_IID: u32 = 34;
const TE_DOUBLE_COUNTER_VALUE: u32 = 44;
const TE_EXTRA_DOUBLE_COUNTER_TRACKS: u32 = 45;
const TE_EXTRA_DOUBLE_COUNTER_VALUES: u32 = 46;
const TE_FLOW_IDS: u32 = 47;
const TE_TERMINATING_FLOW_IDS: u32 = 48;
const TE_DEBUG_ANNOTATIONS: u32 = 4;
const DA_NAME: u32 = 10;
const DA_STRING_VALUE: u32 = 6;

const TYPE_SLICE_BEGIN: u64 = 1;
const TYPE_SLICE_END: u64 = 2;
const TYPE_INSTANT: u64 = 3;
const TYPE_COUNTER: u64 = 4;

const TD_UUID: u32 = 1;
const TD_NAME: u32 = 2;
const TD_PROCESS: u32 = 3;
const TD_THREAD: u32 = 4;
const TD_PARENT_UUID: u32 = 5;
const TD_COUNTER: u32 = 8;
const PD_PID: u32 = 1;
const PD_PROCESS_NAME: u32 = 6;
const THD_PID: u32 = 1;
const THD_TID: u32 = 2;
const THD_THREAD_NAME: u32 = 5;

const ID_CATEGORIES: u32 = 1;
const ID_EVENT_NAMES: u32 = 2;
const ID_SOURCE_LOCATIONS: u32 = 4;
const IID: u32 = 1;
const IID_NAME: u32 = 2;
const SL_FILE_NAME: u32 = 2;
const SL_FUNCTION_NAME: u32 = 3;
const SL_LINE_NUMBER: u32 = 4;

const CS_CLOCKS: u32 = 1;
const CS_PRIMARY_TRACE_CLOCK: u32 = 2;
const CLOCK_ID: u32 = 1;
const CLOCK_TIMESTAMP: u32 = 2;
const CLOCK_IS_INCREMENTAL: u32 = 3;

const DEFAULTS_TIMESTAMP_CLOCK_ID: u32 = 58;
const DEFAULTS_TRACK_EVENT: u32 = 11;
const TED_TRACK_UUID: u32 = 11;

const BUNDLE_METADATA: u32 = 2;
const META_NAME: u32 = 1;
const META_JSON_VALUE: u32 = 5;

/// `BUILTIN_CLOCK_REALTIME`.
pub const CLOCK_REALTIME: u64 = 1;
/// The sequence-scoped incremental clock every sequence declares.
pub const CLOCK_INCREMENTAL: u64 = 64;

/// Sequence id of the process's own packets.
const PROCESS_SEQUENCE: u64 = 1;

/// [`PerfettoWriter::current_tid`] when no sequence is current (thread ids
/// are `u32`).
const NO_THREAD: u64 = u64::MAX;

/// First byte of an event packet's body: the tag of `track_event`.
const EVENT_TAG: u8 = ((PKT_TRACK_EVENT as u8) << 3) | 2;

fn mix(mut x: u64) -> u64 {
    // splitmix64's finaliser.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A track uuid for the `n`-th track of kind `kind` in process `pid`:
/// distinct across the processes of one host, so traces merge.
fn track_uuid(pid: u32, kind: u64, n: u64) -> u64 {
    mix(mix((u64::from(pid) << 8) | kind) ^ n) >> 1
}

const KIND_PROCESS: u64 = 0;
const KIND_THREAD: u64 = 1;
const KIND_ASYNC: u64 = 2;
const KIND_COUNTER: u64 = 3;
const KIND_COUNTER_GROUP: u64 = 4;

/// Interned ids of one site: name, category, source location (0: none).
#[derive(Clone, Copy)]
struct SiteIds {
    name: u64,
    category: u64,
    location: u64,
}

/// One packet sequence: its id and incremental state.
struct Sequence {
    id: u64,
    /// Value of the incremental clock: the last timestamp written on it.
    last_ts: u64,
    /// Interned ids already defined on this sequence (a bit per id).
    defined: Vec<u64>,
    /// The packet of a slice end on this sequence, but for its timestamp's
    /// value (see [`Template`]).
    end: Template,
    /// Sites whose ids this sequence has seen, with the packet of their
    /// slice begins (but for the timestamp's value), by the site's
    /// address: a begin of a site found there copies it.
    ready: SiteTable<Template>,
}

/// First size of [`Sequence::ready`].
const READY_SLOTS: usize = 64;

/// An event packet whose fields are known before its timestamp: the
/// packet's tag and length, `track_event` (tag, length, body),
/// `trusted_packet_sequence_id`, and the tag of `timestamp`, whose varint
/// comes last. Up to 32 bytes, copied whole; [`put_event`] appends the
/// varint and sets the length.
#[derive(Clone, Copy, Default)]
struct Template {
    bytes: [u128; 2],
    len: usize,
}

impl Template {
    /// The packet of `track_event` body `body` on sequence `seq`, `None`
    /// when it does not fit.
    fn of(body: &[u8], seq: u64) -> Option<Template> {
        let mut packet = Vec::with_capacity(32);
        packet.extend_from_slice(&[((TRACE_PACKET as u8) << 3) | 2, 0, EVENT_TAG]);
        packet.push(u8::try_from(body.len()).ok().filter(|&n| n < 0x80)?);
        packet.extend_from_slice(body);
        Encoder::new(&mut packet).uint(PKT_SEQUENCE_ID, seq);
        packet.push((PKT_TIMESTAMP as u8) << 3);
        let mut b = [0u8; 32];
        b.get_mut(..packet.len())?.copy_from_slice(&packet);
        Some(Template {
            bytes: [
                u128::from_le_bytes(b[..16].try_into().ok()?),
                u128::from_le_bytes(b[16..].try_into().ok()?),
            ],
            len: packet.len(),
        })
    }
}

impl Sequence {
    fn new(id: u64, last_ts: u64) -> Sequence {
        Sequence {
            id,
            last_ts,
            defined: Vec::new(),
            // A type and a sequence id always fit.
            end: Template::of(&END_BODY, id).unwrap_or_default(),
            ready: SiteTable::new(READY_SLOTS),
        }
    }

    fn is_defined(&self, iid: u64) -> bool {
        let (word, bit) = ((iid / 64) as usize, iid % 64);
        self.defined.get(word).is_some_and(|w| w & (1 << bit) != 0)
    }

    fn define(&mut self, iid: u64) {
        let (word, bit) = ((iid / 64) as usize, iid % 64);
        if self.defined.len() <= word {
            self.defined.resize(word + 1, 0);
        }
        self.defined[word] |= 1 << bit;
    }
}

type AddrMap<V> = HashMap<usize, V, BuildHasherDefault<AddrHasher>>;

/// A source location: file, function, line.
type LocationKey = (Box<[u8]>, Box<[u8]>, u32);

/// A counter track: the counter's name and the value's key.
type CounterKey = (Box<[u8]>, Box<[u8]>);

/// What names a track event: the site's interned ids, and where their
/// strings come from when a sequence has not seen them yet.
type Named<'a> = (SiteIds, NameSource<'a>);

/// The strings behind interned ids, read only when they are interned.
#[derive(Clone, Copy)]
enum NameSource<'a> {
    /// A site: its name, category and source location.
    Site(&'a Site),
    /// A name and a category (flows).
    Text(&'a [u8], &'a [u8]),
}

/// Writes byte `$b` at `$n` of `$buf` and moves `$n` on. Only for the
/// stack packet of [`PerfettoWriter::small_event`], whose 62 bytes at most
/// always fit its 96-byte buffer.
macro_rules! put {
    ($buf:ident, $n:ident, $b:expr) => {{
        // SAFETY: `$n` stays below 62 (see `small_event`), within `$buf`.
        unsafe { *$buf.get_unchecked_mut($n) = $b };
        $n += 1;
    }};
}

/// [`put!`] for a varint.
macro_rules! put_varint {
    ($buf:ident, $n:ident, $v:expr) => {{
        let mut v: u64 = $v;
        while v >= 0x80 {
            put!($buf, $n, (v as u8) | 0x80);
            v >>= 7;
        }
        put!($buf, $n, v as u8);
    }};
}

/// Streams a Perfetto protobuf trace into `W`.
pub struct PerfettoWriter<W: Write> {
    o: BlockOutput<W>,
    out: Vec<u8>,
    pid: u32,
    epoch: Epoch,
    process_track: u64,
    process: Sequence,
    /// The live threads' sequences, and the index of the last one used:
    /// records come a chunk of one thread at a time, so the lookup is
    /// nearly always that one.
    threads: Vec<(u32, Sequence)>,
    current: usize,
    /// The thread of `threads[current]`, or [`NO_THREAD`] when `current`
    /// is stale (a sequence was removed): one comparison finds the common
    /// case.
    current_tid: u64,
    next_sequence: u64,
    sites: AddrMap<SiteIds>,
    /// Interned event names, categories and source locations (keyed by
    /// file, function and line). Each is its own table in Perfetto, so a
    /// string that is both a name and a category has an id in each; the
    /// ids are distinct across all three, so that [`Sequence::defined`]
    /// holds one bit per id.
    names: HashMap<Box<[u8]>, u64>,
    categories: HashMap<Box<[u8]>, u64>,
    locations: HashMap<LocationKey, u64>,
    next_iid: u64,
    /// Counter tracks by (counter name, value key): uuid; and the group
    /// track of each counter name.
    counters: HashMap<CounterKey, u64>,
    counter_groups: HashMap<Box<[u8]>, u64>,
}

impl<W: Write> PerfettoWriter<W> {
    /// Starts the trace of process `pid`, whose events are converted with
    /// `epoch` (writes nothing to `dest` yet).
    pub fn new(dest: W, pid: u32, epoch: Epoch) -> PerfettoWriter<W> {
        let process_track = track_uuid(pid, KIND_PROCESS, 0);
        let mut w = PerfettoWriter {
            o: BlockOutput::new(dest),
            out: Vec::with_capacity(FLUSH_BYTES + FLUSH_ROOM),
            pid,
            epoch,
            process_track,
            process: Sequence::new(PROCESS_SEQUENCE, epoch.real0_ns),
            threads: Vec::new(),
            current: 0,
            current_tid: NO_THREAD,
            next_sequence: PROCESS_SEQUENCE + 1,
            sites: HashMap::default(),
            names: HashMap::new(),
            categories: HashMap::new(),
            locations: HashMap::new(),
            next_iid: 1,
            counters: HashMap::new(),
            counter_groups: HashMap::new(),
        };
        w.open_sequence(PROCESS_SEQUENCE, None);
        w
    }

    /// The packet that starts sequence `id`: incremental state cleared, a
    /// clock snapshot declaring clock 64, and the sequence's defaults.
    fn open_sequence(&mut self, id: u64, track: Option<u64>) {
        let real0 = self.epoch.real0_ns;
        let mut e = Encoder::new(&mut self.out);
        let packet = e.begin(TRACE_PACKET);
        e.uint(PKT_SEQUENCE_ID, id);
        e.uint(PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
        e.uint(PKT_FIRST_ON_SEQUENCE, 1);
        let snapshot = e.begin(PKT_CLOCK_SNAPSHOT);
        let clock = e.begin(CS_CLOCKS);
        e.uint(CLOCK_ID, CLOCK_INCREMENTAL);
        e.uint(CLOCK_TIMESTAMP, real0);
        e.uint(CLOCK_IS_INCREMENTAL, 1);
        e.end(clock);
        let clock = e.begin(CS_CLOCKS);
        e.uint(CLOCK_ID, CLOCK_REALTIME);
        e.uint(CLOCK_TIMESTAMP, real0);
        e.end(clock);
        e.uint(CS_PRIMARY_TRACE_CLOCK, CLOCK_REALTIME);
        e.end(snapshot);
        let defaults = e.begin(PKT_DEFAULTS);
        e.uint(DEFAULTS_TIMESTAMP_CLOCK_ID, CLOCK_INCREMENTAL);
        if let Some(track) = track {
            let te = e.begin(DEFAULTS_TRACK_EVENT);
            e.uint(TED_TRACK_UUID, track);
            e.end(te);
        }
        e.end(defaults);
        e.end(packet);
    }

    /// A track descriptor packet on the process sequence.
    fn track_descriptor(
        &mut self,
        uuid: u64,
        parent: Option<u64>,
        body: impl FnOnce(&mut Encoder),
    ) {
        let mut e = Encoder::new(&mut self.out);
        let packet = e.begin(TRACE_PACKET);
        e.uint(PKT_SEQUENCE_ID, PROCESS_SEQUENCE);
        let td = e.begin(PKT_TRACK_DESCRIPTOR);
        e.uint(TD_UUID, uuid);
        if let Some(parent) = parent {
            e.uint(TD_PARENT_UUID, parent);
        }
        body(&mut e);
        e.end(td);
        e.end(packet);
    }

    fn thread_descriptor(&mut self, tid: u32, uuid: u64, name: Option<&str>) {
        let (pid, parent) = (self.pid, self.process_track);
        self.track_descriptor(uuid, Some(parent), |e| {
            let thread = e.begin(TD_THREAD);
            e.uint(THD_PID, u64::from(pid));
            e.uint(THD_TID, u64::from(tid));
            if let Some(name) = name {
                e.text(THD_THREAD_NAME, name.as_bytes());
            }
            e.end(thread);
        });
    }

    /// The index in `threads` of thread `tid`'s sequence, opened (with
    /// its track) on its first event.
    #[inline(always)]
    fn sequence(&mut self, tid: u32) -> usize {
        if u64::from(tid) == self.current_tid {
            return self.current;
        }
        self.switch_sequence(tid)
    }

    /// [`PerfettoWriter::sequence`] when the thread is not the last one's.
    #[cold]
    #[inline(never)]
    fn switch_sequence(&mut self, tid: u32) -> usize {
        self.current = match self.threads.iter().position(|(t, _)| *t == tid) {
            Some(i) => i,
            None => self.open_thread(tid),
        };
        self.current_tid = u64::from(tid);
        self.current
    }

    #[cold]
    fn open_thread(&mut self, tid: u32) -> usize {
        let id = self.next_sequence;
        self.next_sequence += 1;
        let track = track_uuid(self.pid, KIND_THREAD, u64::from(tid));
        self.open_sequence(id, Some(track));
        self.thread_descriptor(tid, track, None);
        let seq = Sequence::new(id, self.epoch.real0_ns);
        self.threads.push((tid, seq));
        self.threads.len() - 1
    }

    /// The id of `text` in `table` (the writer's names or categories),
    /// the next of `next_iid` when it has none yet.
    fn string_iid(table: &mut HashMap<Box<[u8]>, u64>, next_iid: &mut u64, text: &[u8]) -> u64 {
        if let Some(&iid) = table.get(text) {
            return iid;
        }
        let iid = *next_iid;
        *next_iid += 1;
        table.insert(text.into(), iid);
        iid
    }

    fn name_iid(&mut self, text: &[u8]) -> u64 {
        Self::string_iid(&mut self.names, &mut self.next_iid, text)
    }

    fn category_iid(&mut self, text: &[u8]) -> u64 {
        Self::string_iid(&mut self.categories, &mut self.next_iid, text)
    }

    fn site_ids(&mut self, site: &Site) -> SiteIds {
        let key = site as *const Site as usize;
        if let Some(ids) = self.sites.get(&key) {
            return *ids;
        }
        if !crate::site::known_version(site.abi_version()) {
            Sink::misuse(self, Misuse::UnknownSiteVersion, site);
        }
        let name = self.name_iid(site.name());
        let category = self.category_iid(category(site));
        let location = if site.line() == 0 || site.pointcut().is_async() {
            0
        } else {
            let key = (site.file().into(), site.name().into(), site.line());
            match self.locations.get(&key) {
                Some(&iid) => iid,
                None => {
                    let iid = self.next_iid;
                    self.next_iid += 1;
                    self.locations.insert(key, iid);
                    iid
                }
            }
        };
        let ids = SiteIds {
            name,
            category,
            location,
        };
        self.sites.insert(key, ids);
        ids
    }

    /// The destination and the counts of events written and lost.
    pub fn output(&self) -> &BlockOutput<W> {
        &self.o
    }

    /// The destination, for tests that write into a `Vec<u8>`.
    pub fn into_inner(self) -> W {
        self.o.into_inner()
    }

    fn is_open(&self) -> bool {
        self.o.is_open()
    }

    /// A metadata record `name` whose value is `args_json`, an object
    /// already written as JSON: a `chrome_events.metadata` entry.
    pub fn metadata_args(&mut self, name: &[u8], _tid: u32, args_json: &str) {
        if !self.is_open() {
            return;
        }
        let mut e = Encoder::new(&mut self.out);
        let packet = e.begin(TRACE_PACKET);
        e.uint(PKT_SEQUENCE_ID, PROCESS_SEQUENCE);
        let bundle = e.begin(PKT_CHROME_EVENTS);
        let meta = e.begin(BUNDLE_METADATA);
        e.text(META_NAME, name);
        e.text(META_JSON_VALUE, args_json.as_bytes());
        e.end(meta);
        e.end(bundle);
        e.end(packet);
        self.maybe_flush();
    }

    /// The last record of the trace: what tracing cost, as the JSON writer
    /// writes it, under the name `perfflow_runtime`.
    pub fn runtime_cost(&mut self, pid_tid: u32, dropped: u64, buffer_bytes_peak: u64) {
        let args = serde_json::json!({
            "events_written": self.o.written,
            "bytes_written": self.o.bytes_written() + self.out.len() as u64,
            "events_dropped": dropped + self.o.lost,
            "buffer_bytes_peak": buffer_bytes_peak,
            "format_version": crate::event::FORMAT_VERSION,
        });
        self.metadata_args(b"perfflow_runtime", pid_tid, &args.to_string());
    }

    /// Writes the packets formatted so far (all whole), so an idle
    /// program's file holds every event formatted.
    pub fn write_pending(&mut self) {
        if !self.out.is_empty() && self.is_open() {
            if let Err(e) = self.o.write_block(&self.out, event_packets_within) {
                self.o.fail(e);
            }
            self.out.clear();
        }
    }

    /// Writes the buffer out once it holds a block's worth.
    #[inline]
    fn maybe_flush(&mut self) {
        if self.out.len() >= FLUSH_BYTES {
            self.write_pending();
        }
    }

    /// Writes the timestamp of an event at `ts_ns` on `seq`: the distance
    /// from the sequence's last one, or the absolute time when it is
    /// earlier.
    #[inline]
    fn timestamp(e: &mut Encoder, seq: &mut Sequence, ts_ns: u64) {
        if ts_ns >= seq.last_ts {
            e.uint(PKT_TIMESTAMP, ts_ns - seq.last_ts);
            seq.last_ts = ts_ns;
        } else {
            e.uint(PKT_TIMESTAMP, ts_ns);
            e.uint(PKT_TIMESTAMP_CLOCK_ID, CLOCK_REALTIME);
        }
    }

    /// The `interned_data` for whichever of `ids` `seq` has not seen yet;
    /// true when there was any.
    fn intern(e: &mut Encoder, seq: &mut Sequence, ids: SiteIds, source: NameSource<'_>) -> bool {
        let need_name = !seq.is_defined(ids.name);
        let need_category = ids.category != 0 && !seq.is_defined(ids.category);
        let need_location = ids.location != 0 && !seq.is_defined(ids.location);
        if !(need_name || need_category || need_location) {
            return false;
        }
        let (name, category, site) = match source {
            NameSource::Site(site) => (site.name(), category(site), Some(site)),
            NameSource::Text(name, category) => (name, category, None),
        };
        let data = e.begin(PKT_INTERNED_DATA);
        let mut string = |e: &mut Encoder, field: u32, iid: u64, text: &[u8]| {
            let m = e.begin(field);
            e.uint(IID, iid);
            e.text(IID_NAME, text);
            e.end(m);
            seq.define(iid);
        };
        if need_category {
            string(e, ID_CATEGORIES, ids.category, category);
        }
        if need_name {
            string(e, ID_EVENT_NAMES, ids.name, name);
        }
        if let (true, Some(site)) = (need_location, site) {
            let m = e.begin(ID_SOURCE_LOCATIONS);
            e.uint(IID, ids.location);
            e.text(SL_FILE_NAME, site.file());
            e.text(SL_FUNCTION_NAME, site.name());
            e.uint(SL_LINE_NUMBER, u64::from(site.line()));
            e.end(m);
            seq.define(ids.location);
        }
        e.end(data);
        true
    }

    /// One track event on thread `tid`'s sequence. `track` overrides the
    /// thread's track (async slices); `flows` adds flow ids (field, id);
    /// `lead_with_timestamp` starts the packet with its timestamp, so it
    /// does not count as an event (the begin of a compact slice).
    #[allow(clippy::too_many_arguments)]
    fn track_event(
        &mut self,
        tid: u32,
        ts_ns: u64,
        kind: u64,
        named: Option<Named<'_>>,
        track: Option<u64>,
        flow: Option<(u32, u64)>,
        lead_with_timestamp: bool,
    ) {
        let index = self.sequence(tid);
        let seq = &mut self.threads[index].1;
        if track.is_none() && flow.is_none() && !lead_with_timestamp && ts_ns >= seq.last_ts {
            let interned = named.is_none_or(|(ids, _)| {
                seq.is_defined(ids.name)
                    && (ids.category == 0 || seq.is_defined(ids.category))
                    && (ids.location == 0 || seq.is_defined(ids.location))
            });
            if interned {
                Self::small_event(&mut self.out, seq, kind, named.map(|(ids, _)| ids), ts_ns);
                if let (Some((ids, NameSource::Site(site))), TYPE_SLICE_BEGIN) = (named, kind) {
                    // A site whose ids the sequence knows but whose packet
                    // it no longer keeps (its table was emptied).
                    Self::keep_begin(seq, ids, site);
                }
                return;
            }
        }
        let mut e = Encoder::new(&mut self.out);
        let packet = e.begin(TRACE_PACKET);
        if lead_with_timestamp {
            Self::timestamp(&mut e, seq, ts_ns);
        }
        let te = e.begin(PKT_TRACK_EVENT);
        e.uint(TE_TYPE, kind);
        if let Some((ids, _)) = named {
            e.uint(TE_NAME_IID, ids.name);
            if ids.category != 0 {
                e.uint(TE_CATEGORY_IIDS, ids.category);
            }
            if ids.location != 0 && kind == TYPE_SLICE_BEGIN {
                e.uint(TE_SOURCE_LOCATION_IID, ids.location);
            }
        }
        if let Some(track) = track {
            e.uint(TE_TRACK_UUID, track);
        }
        if let Some((field, id)) = flow {
            e.fixed64(field, id);
        }
        e.end(te);
        if !lead_with_timestamp {
            Self::timestamp(&mut e, seq, ts_ns);
        }
        let interned = named.is_some_and(|(ids, source)| Self::intern(&mut e, seq, ids, source));
        e.uint(PKT_SEQUENCE_ID, seq.id);
        if interned {
            e.uint(PKT_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
        }
        e.end(packet);
        if let (Some((ids, NameSource::Site(site))), None, None, TYPE_SLICE_BEGIN) =
            (named, track, flow, kind)
        {
            // The sequence now knows the site's ids: its next begins take
            // the fast path of `event`.
            Self::keep_begin(seq, ids, site);
        }
    }

    /// Keeps the packet of a begin of `site` (whose ids the sequence has
    /// defined) for the fast path.
    fn keep_begin(seq: &mut Sequence, ids: SiteIds, site: &Site) {
        if let Some(packet) = Template::of(&begin_body(ids), seq.id) {
            seq.ready.insert(site as *const Site as usize, packet);
        }
    }

    /// [`PerfettoWriter::track_event`] for the common case, byte for byte
    /// the same packet: an event on its thread's track whose ids the
    /// sequence has seen, stamped no earlier than the previous one.
    #[inline]
    fn small_event(
        out: &mut Vec<u8>,
        seq: &mut Sequence,
        kind: u64,
        ids: Option<SiteIds>,
        ts_ns: u64,
    ) {
        const TAG_TYPE: u8 = (TE_TYPE as u8) << 3;
        const TAG_NAME: u8 = (TE_NAME_IID as u8) << 3;
        const TAG_CATEGORY: u8 = (TE_CATEGORY_IIDS as u8) << 3;
        const TAG_LOCATION: u64 = (TE_SOURCE_LOCATION_IID as u64) << 3;
        const TAG_TIMESTAMP: u8 = (PKT_TIMESTAMP as u8) << 3;
        const TAG_SEQUENCE: u8 = (PKT_SEQUENCE_ID as u8) << 3;
        // Packet tag, its length, track_event's tag, its length: both
        // lengths are below 128 (one byte) and filled in at the end. At
        // most 4 + 2 + 11 + 11 + 12 + 11 + 11 = 62 bytes, with ids
        // and sequence ids below 2^64.
        let mut buf = [0u8; 96];
        let mut n = 4usize;
        put!(buf, n, TAG_TYPE);
        put_varint!(buf, n, kind);
        if let Some(ids) = ids {
            put!(buf, n, TAG_NAME);
            put_varint!(buf, n, ids.name);
            if ids.category != 0 {
                put!(buf, n, TAG_CATEGORY);
                put_varint!(buf, n, ids.category);
            }
            if ids.location != 0 && kind == TYPE_SLICE_BEGIN {
                put_varint!(buf, n, TAG_LOCATION);
                put_varint!(buf, n, ids.location);
            }
        }
        let te_len = n - 4;
        put!(buf, n, TAG_TIMESTAMP);
        put_varint!(buf, n, ts_ns - seq.last_ts);
        seq.last_ts = ts_ns;
        put!(buf, n, TAG_SEQUENCE);
        put_varint!(buf, n, seq.id);
        buf[0] = ((TRACE_PACKET as u8) << 3) | 2;
        buf[1] = (n - 2) as u8;
        buf[2] = EVENT_TAG;
        buf[3] = te_len as u8;
        out.extend_from_slice(&buf[..n]);
    }

    /// The track of async id `id`, described (again) before each of its
    /// events so that no table of async ids grows with the trace.
    fn async_track(&mut self, site: &Site, id: u64) -> u64 {
        let uuid = track_uuid(self.pid, KIND_ASYNC, id);
        let parent = self.process_track;
        self.track_descriptor(uuid, Some(parent), |e| e.text(TD_NAME, site.name()));
        uuid
    }

    /// The uuid of the counter track for value `key` of counter `name`,
    /// described on first use.
    fn counter_track(&mut self, name: &[u8], key: &str) -> u64 {
        let k = (Box::<[u8]>::from(name), Box::<[u8]>::from(key.as_bytes()));
        if let Some(&uuid) = self.counters.get(&k) {
            return uuid;
        }
        let group = match self.counter_groups.get(name) {
            Some(&uuid) => uuid,
            None => {
                let uuid = track_uuid(
                    self.pid,
                    KIND_COUNTER_GROUP,
                    self.counter_groups.len() as u64,
                );
                let parent = self.process_track;
                self.track_descriptor(uuid, Some(parent), |e| e.text(TD_NAME, name));
                self.counter_groups.insert(name.into(), uuid);
                uuid
            }
        };
        let uuid = track_uuid(self.pid, KIND_COUNTER, self.counters.len() as u64);
        self.track_descriptor(uuid, Some(group), |e| {
            e.text(TD_NAME, key.as_bytes());
            let counter = e.begin(TD_COUNTER);
            e.end(counter);
        });
        self.counters.insert(k, uuid);
        uuid
    }

    /// One counter sample: a `TYPE_COUNTER` event on the track of the
    /// first value, the others as extra counter values.
    pub fn counter(&mut self, name: &[u8], _tid: u32, ts_ns: u64, values: &[(&str, f64)]) {
        if !self.is_open() {
            self.o.lost += 1;
            return;
        }
        let Some(((first_key, first), rest)) = values.split_first() else {
            return;
        };
        let first_track = self.counter_track(name, first_key);
        let extra: Vec<(u64, f64)> = rest
            .iter()
            .map(|(key, v)| (self.counter_track(name, key), *v))
            .collect();
        let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
        let mut e = Encoder::new(&mut self.out);
        let packet = e.begin(TRACE_PACKET);
        let te = e.begin(PKT_TRACK_EVENT);
        e.uint(TE_TYPE, TYPE_COUNTER);
        e.uint(TE_TRACK_UUID, first_track);
        e.double(TE_DOUBLE_COUNTER_VALUE, finite(*first));
        for (track, _) in &extra {
            e.uint(TE_EXTRA_DOUBLE_COUNTER_TRACKS, *track);
        }
        for (_, v) in &extra {
            e.double(TE_EXTRA_DOUBLE_COUNTER_VALUES, finite(*v));
        }
        e.end(te);
        Self::timestamp(&mut e, &mut self.process, ts_ns);
        e.uint(PKT_SEQUENCE_ID, PROCESS_SEQUENCE);
        e.end(packet);
        self.o.formatted();
        self.maybe_flush();
    }

    fn flow_event(&mut self, ev: &TraceEvent<'_>, id: u64) {
        let name = ev.site.scope().unwrap_or(b"flow");
        let ids = SiteIds {
            name: self.name_iid(name),
            category: self.category_iid(b"flow"),
            location: 0,
        };
        let field = match ev.phase {
            Phase::FlowEnd(_) => TE_TERMINATING_FLOW_IDS,
            _ => TE_FLOW_IDS,
        };
        self.track_event(
            ev.tid,
            ev.ts_ns,
            TYPE_INSTANT,
            Some((ids, NameSource::Text(name, b"flow"))),
            None,
            Some((field, id)),
            false,
        );
    }
}

/// The `track_event` body of a slice end: its type.
const END_BODY: [u8; 2] = [(TE_TYPE as u8) << 3, TYPE_SLICE_END as u8];

/// The `track_event` body of a slice begin with `ids`, as
/// [`PerfettoWriter::track_event`] writes it.
fn begin_body(ids: SiteIds) -> Vec<u8> {
    let mut body = Vec::with_capacity(32);
    let mut e = Encoder::new(&mut body);
    e.uint(TE_TYPE, TYPE_SLICE_BEGIN);
    e.uint(TE_NAME_IID, ids.name);
    if ids.category != 0 {
        e.uint(TE_CATEGORY_IIDS, ids.category);
    }
    if ids.location != 0 {
        e.uint(TE_SOURCE_LOCATION_IID, ids.location);
    }
    body
}

/// Free room below which the buffer is written out before a slice's
/// event: the buffer is made with `FLUSH_BYTES + FLUSH_ROOM` bytes, so
/// this is a block's worth, and it leaves room for [`put_event`].
const FLUSH_ROOM: usize = 4096;
const _: () = assert!(FLUSH_ROOM >= EVENT_ROOM);

/// Room an event of [`put_event`] needs in the buffer: the template's 32
/// bytes and a varint of 10.
const EVENT_ROOM: usize = 48;

/// Appends `packet` stamped `ts_ns` (no earlier than the sequence's last
/// timestamp): the template's bytes, the timestamp's varint, the packet's
/// length. The packet [`PerfettoWriter::track_event`] writes for the same
/// event has the same fields (its sequence id after the timestamp).
///
/// # Safety
/// `out` must have room for [`EVENT_ROOM`] more bytes.
#[inline(always)]
unsafe fn put_event(out: &mut Vec<u8>, seq: &mut Sequence, packet: &Template, ts_ns: u64) {
    let delta = ts_ns - seq.last_ts;
    seq.last_ts = ts_ns;
    let start = out.len();
    // SAFETY: `EVENT_ROOM` bytes from `start` are free (the caller's
    // promise); `set_len` covers only bytes written.
    unsafe {
        let n = put_packet(out.as_mut_ptr().add(start), packet, delta);
        out.set_len(start + n);
    }
}

/// Writes `packet` with a timestamp varint of `delta` at `p`; returns
/// the bytes written.
///
/// # Safety
/// `p` must be valid for [`EVENT_ROOM`] bytes of writes.
#[inline(always)]
unsafe fn put_packet(p: *mut u8, packet: &Template, delta: u64) -> usize {
    // SAFETY: the 32 bytes of the template, then at most 10 of varint
    // from its length, at most 32: within `EVENT_ROOM` (the caller's
    // promise). The packet's length, at most 32 + 10 - 2, takes one byte.
    unsafe {
        p.cast::<[u128; 2]>()
            .write_unaligned(packet.bytes.map(u128::to_le));
        let n = packet.len + write_varint(p.add(packet.len), delta);
        *p.add(1) = (n - 2) as u8;
        n
    }
}

/// A run of slice begins and ends on one sequence (see
/// [`PerfettoWriter::plain_run`]), each written as
/// [`PerfettoWriter::slice`] writes it when the sequence has the packet
/// and the buffer the room. The buffer's end and the sequence's clock are
/// kept here and stored back once, after the run.
struct Run<'a> {
    /// Where the next packet goes.
    at: *mut u8,
    /// The last position at which [`FLUSH_ROOM`] bytes are still free.
    limit: *mut u8,
    last_ts: u64,
    ready: SiteView<'a, Template>,
    end: &'a Template,
    /// The last site begun in this run and its packet: a loop calling one
    /// function begins the same site again and again.
    last_site: usize,
    last_packet: &'a Template,
}

impl<'a> Run<'a> {
    /// Writes `packet` at `ts_ns`, or nothing and false when the stamp is
    /// earlier than the sequence's last or the buffer lacks the room.
    #[inline(always)]
    fn put(&mut self, packet: &'a Template, ts_ns: u64) -> bool {
        if ts_ns < self.last_ts || self.at > self.limit {
            return false;
        }
        // SAFETY: at `limit` or before it, `FLUSH_ROOM` (more than
        // `EVENT_ROOM`) bytes are free.
        self.at = unsafe {
            self.at
                .add(put_packet(self.at, packet, ts_ns - self.last_ts))
        };
        self.last_ts = ts_ns;
        true
    }
}

impl SliceRun for Run<'_> {
    #[inline(always)]
    fn begin(&mut self, site: &Site, ts_ns: u64) -> bool {
        let addr = site as *const Site as usize;
        if addr != self.last_site {
            match self.ready.get(addr) {
                Some(packet) => {
                    self.last_site = addr;
                    self.last_packet = packet;
                }
                None => return false,
            }
        }
        self.put(self.last_packet, ts_ns)
    }

    #[inline(always)]
    fn end(&mut self, _site: &Site, ts_ns: u64) -> bool {
        self.put(self.end, ts_ns)
    }
}

/// Writes the varint of `v` at `p`; returns its length.
///
/// # Safety
/// `p` must be valid for 10 bytes of writes.
#[inline(always)]
unsafe fn write_varint(p: *mut u8, mut v: u64) -> usize {
    // SAFETY: at most 10 bytes from `p` (the caller's promise).
    unsafe {
        if v < 0x80 {
            *p = v as u8;
            return 1;
        }
        if v < 0x4000 {
            *p = (v as u8) | 0x80;
            *p.add(1) = (v >> 7) as u8;
            return 2;
        }
        let mut n = 0;
        while v >= 0x80 {
            *p.add(n) = (v as u8) | 0x80;
            v >>= 7;
            n += 1;
        }
        *p.add(n) = v as u8;
        n + 1
    }
}

/// Event packets (those whose body starts with `track_event`) that lie
/// whole within the first `done` bytes of `block`, a run of whole packets.
fn event_packets_within(block: &[u8], done: usize) -> u64 {
    let mut reached = 0;
    let mut at = 0;
    while at < block.len() {
        // Tag of Trace.packet, then the length varint.
        let mut len = 0u64;
        let mut shift = 0;
        let mut i = at + 1;
        while i < block.len() {
            let b = block[i];
            len |= u64::from(b & 0x7f) << shift;
            shift += 7;
            i += 1;
            if b < 0x80 {
                break;
            }
        }
        let end = i + len as usize;
        if end > done {
            break;
        }
        if block.get(i) == Some(&EVENT_TAG) {
            reached += 1;
        }
        at = end;
    }
    reached
}

impl<W: Write> Sink for PerfettoWriter<W> {
    fn process_name(&mut self, pid: u32, name: &str) {
        if !self.is_open() {
            return;
        }
        let uuid = self.process_track;
        self.track_descriptor(uuid, None, |e| {
            let process = e.begin(TD_PROCESS);
            e.uint(PD_PID, u64::from(pid));
            e.text(PD_PROCESS_NAME, name.as_bytes());
            e.end(process);
        });
        self.maybe_flush();
    }

    fn thread_name(&mut self, tid: u32, name: &str) {
        if !self.is_open() {
            return;
        }
        let uuid = track_uuid(self.pid, KIND_THREAD, u64::from(tid));
        self.thread_descriptor(tid, uuid, Some(name));
        // The thread is done: a later thread with the same id opens a new
        // sequence.
        if let Some(i) = self.threads.iter().position(|(t, _)| *t == tid) {
            self.threads.swap_remove(i);
            self.current_tid = NO_THREAD;
        }
        self.maybe_flush();
    }

    fn counter(&mut self, name: &[u8], tid: u32, ts_ns: u64, values: &[(&str, f64)]) {
        PerfettoWriter::counter(self, name, tid, ts_ns, values);
    }

    #[inline(always)]
    fn event(&mut self, ev: &TraceEvent<'_>) {
        match ev.phase {
            Phase::Begin | Phase::End => self.slice(ev.site, ev.tid, ev.ts_ns, ev.phase),
            _ if !self.is_open() => self.o.lost += 1,
            _ => {
                self.event_cold(ev);
                self.o.formatted();
                self.maybe_flush();
            }
        }
    }

    #[inline(always)]
    fn slice_begin(&mut self, site: &Site, tid: u32, ts_ns: u64) {
        self.slice(site, tid, ts_ns, Phase::Begin);
    }

    #[inline(always)]
    fn slice_end(&mut self, site: &Site, tid: u32, ts_ns: u64) {
        self.slice(site, tid, ts_ns, Phase::End);
    }

    /// A slice end with the debug annotation `outcome` = `"raised"` (or
    /// `open_at_end`, `killed`). Cold: one per exception that leaves a
    /// woven function, and per slice open when a thread or the process
    /// ends.
    #[cold]
    fn ended(&mut self, ev: &TraceEvent<'_>, outcome: Outcome) {
        let (track, end_ns) = match ev.phase {
            Phase::End => (None, ev.ts_ns),
            Phase::AsyncEnd(id) if self.is_open() => {
                (Some(self.async_track(ev.site, id)), ev.ts_ns)
            }
            Phase::Complete(dur_ns) if self.is_open() => {
                let ids = self.site_ids(ev.site);
                let named = Some((ids, NameSource::Site(ev.site)));
                self.track_event(ev.tid, ev.ts_ns, TYPE_SLICE_BEGIN, named, None, None, true);
                (None, ev.ts_ns.saturating_add(dur_ns))
            }
            _ => return self.event(ev),
        };
        if !self.is_open() {
            self.o.lost += 1;
            return;
        }
        let index = self.sequence(ev.tid);
        let seq = &mut self.threads[index].1;
        let mut e = Encoder::new(&mut self.out);
        let packet = e.begin(TRACE_PACKET);
        let te = e.begin(PKT_TRACK_EVENT);
        e.uint(TE_TYPE, TYPE_SLICE_END);
        if let Some(track) = track {
            e.uint(TE_TRACK_UUID, track);
        }
        let annotation = e.begin(TE_DEBUG_ANNOTATIONS);
        e.text(DA_NAME, b"outcome");
        e.text(DA_STRING_VALUE, outcome.as_str().as_bytes());
        e.end(annotation);
        e.end(te);
        Self::timestamp(&mut e, seq, end_ns);
        e.uint(PKT_SEQUENCE_ID, seq.id);
        e.end(packet);
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
        let result = self
            .o
            .write_block(&self.out, event_packets_within)
            .and_then(|()| self.o.flush());
        self.out = Vec::new();
        result.map_err(Error::Io)
    }
}

impl<W: Write> PerfettoWriter<W> {
    /// A slice begin or end (`phase` is [`Phase::Begin`] or [`Phase::End`],
    /// a constant once inlined): [`put_event`] with the end's body, or the
    /// begin's body the sequence keeps for its site, when the stamp is no
    /// earlier than the sequence's last; [`PerfettoWriter::event_cold`]
    /// otherwise.
    #[inline(always)]
    fn slice(&mut self, site: &Site, tid: u32, ts_ns: u64, phase: Phase) {
        // One test for a closed output and a buffer without room for the
        // packet (a block's worth to write out).
        if !self.o.is_open() || self.out.capacity() - self.out.len() < FLUSH_ROOM {
            return self.slice_cold(site, tid, ts_ns, phase);
        }
        let index = self.sequence(tid);
        // SAFETY: `sequence` returns an index within `threads`.
        let seq = unsafe { &mut self.threads.get_unchecked_mut(index).1 };
        let packet = if phase == Phase::End {
            Some(seq.end)
        } else {
            seq.ready.get(site as *const Site as usize).copied()
        };
        match packet {
            // SAFETY: `FLUSH_ROOM` (more than `EVENT_ROOM`) bytes are free.
            Some(packet) if ts_ns >= seq.last_ts => unsafe {
                put_event(&mut self.out, seq, &packet, ts_ns)
            },
            _ => self.event_cold(&TraceEvent {
                site,
                tid,
                ts_ns,
                phase,
            }),
        }
        self.o.formatted();
    }

    /// Decodes `records` of one thread with `decoder` (see
    /// [`ThreadDecoder::decode`]): runs of plain slice begins and ends
    /// through [`ThreadDecoder::plain_run`], with the thread's sequence,
    /// the test of the output and the event count taken once per run; any
    /// other event through [`ThreadDecoder::decode_one`] and
    /// [`Sink`]'s calls. Writes what `decoder.decode` would.
    ///
    /// # Safety
    /// As [`ThreadDecoder::decode`].
    pub unsafe fn decode(
        &mut self,
        decoder: &mut ThreadDecoder,
        records: &[RawEvent],
        cx: &mut DecodeContext,
    ) {
        let mut next = 0;
        while next < records.len() {
            if !cx.compact {
                // SAFETY: the caller's promise.
                next = unsafe { self.plain_run(decoder, records, next, cx) };
                if next == records.len() {
                    break;
                }
            }
            // SAFETY: the caller's promise.
            next = unsafe { decoder.decode_one(records, next, cx, self) };
        }
    }

    /// [`ThreadDecoder::plain_run`] from `from` with the sequence of the
    /// decoder's thread, when it has one and the output takes events
    /// (otherwise nothing is taken: the general path opens the sequence
    /// or makes room).
    ///
    /// # Safety
    /// As [`ThreadDecoder::decode`].
    #[inline(always)]
    unsafe fn plain_run(
        &mut self,
        decoder: &mut ThreadDecoder,
        records: &[RawEvent],
        from: usize,
        cx: &DecodeContext,
    ) -> usize {
        let capacity = self.out.capacity();
        if !self.o.is_open() || capacity < FLUSH_ROOM {
            return from;
        }
        let tid = decoder.tid();
        let index = if u64::from(tid) == self.current_tid {
            self.current
        } else {
            match self.threads.iter().position(|(t, _)| *t == tid) {
                Some(i) => {
                    self.current = i;
                    self.current_tid = u64::from(tid);
                    i
                }
                None => return from,
            }
        };
        // SAFETY: `index` is within `threads` (just found or kept current).
        let seq = unsafe { &mut self.threads.get_unchecked_mut(index).1 };
        let base = self.out.as_mut_ptr();
        // SAFETY: both within the buffer's allocation (`capacity` is at
        // least `FLUSH_ROOM`).
        let (at, limit) = unsafe { (base.add(self.out.len()), base.add(capacity - FLUSH_ROOM)) };
        let mut run = Run {
            at,
            limit,
            last_ts: seq.last_ts,
            ready: seq.ready.view(),
            end: &seq.end,
            // No site is at address 0.
            last_site: 0,
            last_packet: &seq.end,
        };
        // SAFETY: the caller's promise.
        let next = unsafe { decoder.run_from(records, from, cx, &mut run) };
        seq.last_ts = run.last_ts;
        // SAFETY: the run wrote every byte up to `at`, within the capacity.
        unsafe { self.out.set_len(run.at.offset_from(base) as usize) };
        // Each record the run took is one event written.
        self.o.formatted_n((next - from) as u64);
        next
    }

    /// [`PerfettoWriter::slice`] when the output is closed or the buffer
    /// needs writing out first.
    #[cold]
    #[inline(never)]
    fn slice_cold(&mut self, site: &Site, tid: u32, ts_ns: u64, phase: Phase) {
        if !self.is_open() {
            self.o.lost += 1;
            return;
        }
        if self.out.len() >= FLUSH_BYTES {
            self.write_pending();
        }
        // Room for a block's worth again (`write_pending` kept it).
        self.out.reserve(FLUSH_BYTES + FLUSH_ROOM);
        self.slice(site, tid, ts_ns, phase);
    }

    /// The events [`Sink::event`] does not write with [`put_event`]: the
    /// first begin of a site on a sequence, instants, flows, compact and
    /// async slices, and events stamped before the sequence's last one.
    #[inline(never)]
    fn event_cold(&mut self, ev: &TraceEvent<'_>) {
        let site = ev.site;
        match ev.phase {
            Phase::FlowStart(id) | Phase::FlowEnd(id) => self.flow_event(ev, id),
            Phase::End => {
                self.track_event(ev.tid, ev.ts_ns, TYPE_SLICE_END, None, None, None, false)
            }
            Phase::Begin | Phase::Instant => {
                let ids = self.site_ids(site);
                let kind = if ev.phase == Phase::Begin {
                    TYPE_SLICE_BEGIN
                } else {
                    TYPE_INSTANT
                };
                let named = Some((ids, NameSource::Site(site)));
                self.track_event(ev.tid, ev.ts_ns, kind, named, None, None, false);
            }
            Phase::Complete(dur_ns) => {
                let ids = self.site_ids(site);
                let named = Some((ids, NameSource::Site(site)));
                self.track_event(ev.tid, ev.ts_ns, TYPE_SLICE_BEGIN, named, None, None, true);
                let end = ev.ts_ns.saturating_add(dur_ns);
                self.track_event(ev.tid, end, TYPE_SLICE_END, None, None, None, false);
            }
            Phase::AsyncBegin(id) | Phase::AsyncEnd(id) | Phase::AsyncInstant(id) => {
                let ids = self.site_ids(site);
                let track = self.async_track(site, id);
                let kind = match ev.phase {
                    Phase::AsyncBegin(_) => TYPE_SLICE_BEGIN,
                    Phase::AsyncEnd(_) => TYPE_SLICE_END,
                    _ => TYPE_INSTANT,
                };
                let named = Some((ids, NameSource::Site(site)));
                self.track_event(ev.tid, ev.ts_ns, kind, named, Some(track), None, false);
            }
        }
    }
}

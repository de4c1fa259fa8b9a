//! Reading Perfetto protobuf traces (`.pftrace`, written by the runtime's
//! `log-format=perfetto`) into the same [`Event`]s as the JSON traces.
//!
//! The file is a `Trace` message: a run of `packet` fields. The reader
//! frames one packet at a time and decodes it: by hand when it is one plain
//! track event (nearly every packet; see [`fast_packet`]), else with
//! `prost` (the message types below declare only the fields the runtime
//! writes; others are skipped). Memory holds one packet, the tracks, the
//! interned strings, up to [`SHARED_TEXTS`] names given as text and the
//! open slices, never the file. A file that ends inside a packet
//! (its writer was killed) is read up to the last whole packet and marked
//! truncated.
//!
//! Perfetto's rules are followed: interned names, categories and defaults
//! belong to a packet sequence and are dropped when it clears its
//! incremental state; timestamps are on the clock the packet (or its
//! sequence's defaults) names, sequence-scoped incremental clocks advancing
//! by each timestamp from the value their clock snapshot gave; a slice end
//! closes the latest open slice of its track. Perfetto sorts packets by
//! time; this reader does not (memory would grow with the file): a slice
//! written when it ends (compact), its begin after the ends of the slices
//! it encloses, reads as a `B` stamped before what precedes it and then
//! its `E`, which the analyses take as a slice written at its end; an
//! async slice end on a track with nothing open (its thread's packets
//! reached the file before the beginning's) reads as an `e` that pairs
//! with its `b` by key and time.
//!
//! The events are those the JSON writer writes for the same run: `B`/`E`
//! and `i` on thread tracks, `b`/`e`/`n` on other tracks (the async id is
//! the event's `async_id` debug annotation, which `convert` writes, else
//! the track's uuid), `s`/`t`/`f` for instants that carry flow ids (`t`
//! when the id continues a flow begun earlier and not terminated), `C` with one
//! argument per counter track of the sample (named after the track, under
//! the counter named after its parent track), and `M` events for the
//! process and thread names and for each `chrome_events.metadata` entry
//! whose value is JSON. A slice end's string debug annotations become its
//! `args` (`{"outcome":"raised"}`). An event's [`Event::line`] is the number of its
//! packet, from 1.

use std::io::{self, BufRead, BufReader, Read};
use std::rc::Rc;

use foldhash::{HashMap, HashSet};

use prost::Message;
use serde_json::{json, Map, Value};

use crate::error::TraceError;
use crate::event::{Event, Phase};

/// `BUILTIN_CLOCK_REALTIME`: the time base of perfflow traces.
pub(crate) const CLOCK_REALTIME: u32 = 1;
/// `BUILTIN_CLOCK_BOOTTIME`, Perfetto's default trace clock.
const CLOCK_BOOTTIME: u32 = 6;
pub(crate) const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;

pub(crate) const TYPE_SLICE_BEGIN: i32 = 1;
pub(crate) const TYPE_SLICE_END: i32 = 2;
pub(crate) const TYPE_INSTANT: i32 = 3;
pub(crate) const TYPE_COUNTER: i32 = 4;

/// The debug annotation whose string is an async event's id, as `convert`
/// writes it: without it, the id is the async track's uuid.
pub(crate) const ASYNC_ID: &str = "async_id";

/// How many flows a reader remembers as begun and not yet terminated, to
/// read a later event with one of their ids as a step (`t`): the most
/// recently begun, about 24 bytes each.
const OPEN_FLOWS: usize = 1 << 16;

#[derive(Clone, PartialEq, Message)]
pub(crate) struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub(crate) timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "58")]
    pub(crate) timestamp_clock_id: Option<u32>,
    #[prost(uint32, optional, tag = "10")]
    pub(crate) trusted_packet_sequence_id: Option<u32>,
    #[prost(uint32, optional, tag = "13")]
    pub(crate) sequence_flags: Option<u32>,
    #[prost(bool, optional, tag = "41")]
    pub(crate) incremental_state_cleared: Option<bool>,
    #[prost(message, optional, tag = "11")]
    pub(crate) track_event: Option<TrackEvent>,
    #[prost(message, optional, tag = "12")]
    pub(crate) interned_data: Option<InternedData>,
    #[prost(message, optional, tag = "6")]
    pub(crate) clock_snapshot: Option<ClockSnapshot>,
    #[prost(message, optional, tag = "59")]
    pub(crate) trace_packet_defaults: Option<TracePacketDefaults>,
    #[prost(message, optional, tag = "60")]
    pub(crate) track_descriptor: Option<TrackDescriptor>,
    #[prost(message, optional, tag = "5")]
    pub(crate) chrome_events: Option<ChromeEventBundle>,
    /// The process the packet is of: set on the metadata of a converted
    /// trace of many processes (a merged one).
    #[prost(int32, optional, tag = "79")]
    pub(crate) trusted_pid: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct TrackEvent {
    #[prost(int32, optional, tag = "9")]
    pub(crate) r#type: Option<i32>,
    #[prost(uint64, optional, tag = "10")]
    pub(crate) name_iid: Option<u64>,
    #[prost(string, optional, tag = "23")]
    pub(crate) name: Option<String>,
    #[prost(uint64, repeated, packed = "false", tag = "3")]
    pub(crate) category_iids: Vec<u64>,
    #[prost(string, repeated, tag = "22")]
    pub(crate) categories: Vec<String>,
    #[prost(uint64, optional, tag = "11")]
    pub(crate) track_uuid: Option<u64>,
    #[prost(int64, optional, tag = "30")]
    pub(crate) counter_value: Option<i64>,
    #[prost(double, optional, tag = "44")]
    pub(crate) double_counter_value: Option<f64>,
    #[prost(uint64, repeated, packed = "false", tag = "45")]
    pub(crate) extra_double_counter_track_uuids: Vec<u64>,
    #[prost(double, repeated, packed = "false", tag = "46")]
    pub(crate) extra_double_counter_values: Vec<f64>,
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub(crate) flow_ids: Vec<u64>,
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub(crate) terminating_flow_ids: Vec<u64>,
    #[prost(message, repeated, tag = "4")]
    pub(crate) debug_annotations: Vec<DebugAnnotation>,
}

/// A debug annotation with a name and a string value (the runtime writes
/// `outcome` = `"raised"` on the end of a slice left by an exception).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct DebugAnnotation {
    #[prost(string, optional, tag = "10")]
    pub(crate) name: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub(crate) string_value: Option<String>,
    /// Any JSON value (`convert` writes each of an event's `args` so).
    #[prost(string, optional, tag = "9")]
    pub(crate) legacy_json_value: Option<String>,
}

/// The named string and JSON annotations of an event as its `args`;
/// `Null` when it has none.
fn annotation_args(annotations: &[DebugAnnotation]) -> Value {
    let args: Map<String, Value> = annotations
        .iter()
        .filter(|a| a.name.as_deref() != Some(ASYNC_ID))
        .filter_map(|a| {
            let value = match (&a.string_value, &a.legacy_json_value) {
                (Some(text), _) => Value::from(text.clone()),
                (None, Some(json)) => {
                    serde_json::from_str(json).unwrap_or_else(|_| Value::from(json.clone()))
                }
                (None, None) => return None,
            };
            Some((a.name.clone()?, value))
        })
        .collect();
    if args.is_empty() {
        Value::Null
    } else {
        Value::Object(args)
    }
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct InternedData {
    #[prost(message, repeated, tag = "1")]
    pub(crate) event_categories: Vec<InternedString>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) event_names: Vec<InternedString>,
}

/// `EventName` and `EventCategory`: an id and a string.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct InternedString {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) iid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub(crate) name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ClockSnapshot {
    #[prost(message, repeated, tag = "1")]
    pub(crate) clocks: Vec<Clock>,
    #[prost(uint32, optional, tag = "2")]
    pub(crate) primary_trace_clock: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Clock {
    #[prost(uint32, optional, tag = "1")]
    pub(crate) clock_id: Option<u32>,
    #[prost(uint64, optional, tag = "2")]
    pub(crate) timestamp: Option<u64>,
    #[prost(bool, optional, tag = "3")]
    pub(crate) is_incremental: Option<bool>,
    #[prost(uint64, optional, tag = "4")]
    pub(crate) unit_multiplier_ns: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct TracePacketDefaults {
    #[prost(uint32, optional, tag = "58")]
    pub(crate) timestamp_clock_id: Option<u32>,
    #[prost(message, optional, tag = "11")]
    pub(crate) track_event_defaults: Option<TrackEventDefaults>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct TrackEventDefaults {
    #[prost(uint64, optional, tag = "11")]
    pub(crate) track_uuid: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) uuid: Option<u64>,
    #[prost(uint64, optional, tag = "5")]
    pub(crate) parent_uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub(crate) name: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub(crate) process: Option<ProcessDescriptor>,
    #[prost(message, optional, tag = "4")]
    pub(crate) thread: Option<ThreadDescriptor>,
    #[prost(message, optional, tag = "8")]
    pub(crate) counter: Option<CounterDescriptor>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ProcessDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub(crate) pid: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub(crate) process_name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ThreadDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub(crate) pid: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub(crate) tid: Option<i32>,
    #[prost(string, optional, tag = "5")]
    pub(crate) thread_name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct CounterDescriptor {}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ChromeEventBundle {
    #[prost(message, repeated, tag = "2")]
    pub(crate) metadata: Vec<ChromeMetadata>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ChromeMetadata {
    #[prost(string, optional, tag = "1")]
    pub(crate) name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub(crate) string_value: Option<String>,
    #[prost(int64, optional, tag = "4")]
    pub(crate) int_value: Option<i64>,
    #[prost(string, optional, tag = "5")]
    pub(crate) json_value: Option<String>,
}

/// A sequence-scoped clock: its current value in its own units, and how
/// it maps to REALTIME nanoseconds: `value * unit + offset`.
#[derive(Clone, Copy)]
struct SeqClock {
    value: u64,
    offset: i128,
    unit: u64,
    incremental: bool,
}

#[derive(Default)]
struct Sequence {
    names: HashMap<u64, Rc<str>>,
    categories: HashMap<u64, Rc<str>>,
    defaults: Option<TracePacketDefaults>,
    clocks: HashMap<u32, SeqClock>,
}

#[derive(Default)]
struct Track {
    parent: Option<u64>,
    name: Option<String>,
    pid: Option<i64>,
    tid: Option<i64>,
    is_counter: bool,
    /// The slices open on the track, innermost last.
    open: Vec<OpenSlice>,
}

/// The name, category and async id of an open slice.
type OpenSlice = (Rc<str>, Option<Rc<str>>, Option<String>);

/// The flows begun (an event with their id in `flow_ids`) and not yet
/// terminated, the latest [`OPEN_FLOWS`] of them: Perfetto reads a later
/// event carrying one of their ids as a step of that flow.
#[derive(Default)]
struct OpenFlows {
    open: std::collections::HashSet<u64>,
    /// In the order they began, to forget the oldest.
    order: std::collections::VecDeque<u64>,
}

impl OpenFlows {
    /// Whether `id` continues a flow; it is open from now on.
    fn step(&mut self, id: u64) -> bool {
        if self.open.contains(&id) {
            return true;
        }
        self.open.insert(id);
        self.order.push_back(id);
        if self.order.len() > OPEN_FLOWS {
            if let Some(oldest) = self.order.pop_front() {
                self.open.remove(&oldest);
            }
        }
        false
    }

    fn terminate(&mut self, id: u64) {
        self.open.remove(&id);
    }
}

/// What a pftrace says about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PftraceInfo {
    /// The file ended inside a packet.
    pub truncated: bool,
    /// Number of the packet cut short, from 1.
    pub partial_packet: Option<usize>,
}

/// Whether a file named `name` whose first bytes are `head` is a
/// Perfetto trace: named `*.pftrace` and not starting as JSON does (`[` or
/// `{`, which no field of a `Trace` begins with), or starting with a
/// `packet` field (byte 0x0a) that is not a newline before JSON's `[` or
/// `{`.
pub(crate) fn is_pftrace(name: &std::path::Path, head: &[u8]) -> bool {
    if name.extension().is_some_and(|x| x == "pftrace") {
        return !matches!(head.first(), Some(b'[' | b'{'));
    }
    head.first() == Some(&0x0a)
        && head
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b != b'[' && b != b'{')
}

/// Reads `input` to its end; true when it held only zero bytes.
fn zero_run_to_end(input: &mut impl BufRead) -> std::io::Result<bool> {
    loop {
        let buffered = input.fill_buf()?;
        if buffered.is_empty() {
            return Ok(true);
        }
        if buffered.iter().any(|&b| b != 0) {
            return Ok(false);
        }
        let n = buffered.len();
        input.consume(n);
    }
}

/// Reads a pftrace from `input`, handing each event and its JSON text (as
/// the JSON writer would write it) to `sink`; the text is empty unless
/// `text` (writing it costs about as much as reading the event, and `db`
/// has no use for it). Errors name no file; the caller adds it.
pub(crate) fn stream(
    input: impl Read,
    text: bool,
    sink: &mut dyn FnMut(&mut Event, &str),
) -> Result<PftraceInfo, TraceError> {
    let reader = Reader {
        no_text: !text,
        ..Reader::default()
    };
    // A process whose trace the runtime opened (`perfflow_process`) and
    // never closed (`perfflow_runtime`, written by its final flush) was cut
    // short, even where the cut fell between two packets.
    let mut opened: HashSet<Option<i64>> = HashSet::default();
    let mut closed: HashSet<Option<i64>> = HashSet::default();
    let mut watch = |event: &mut Event, text: &str| {
        if event.ph == Some(Phase::Metadata) {
            match event.name.as_deref() {
                Some("perfflow_process") => {
                    opened.insert(event.pid);
                }
                Some("perfflow_runtime") => {
                    closed.insert(event.pid);
                }
                _ => {}
            }
        }
        sink(event, text)
    };
    let mut info = reader.run(BufReader::with_capacity(1 << 20, input), &mut watch)?;
    if !info.truncated && !opened.is_subset(&closed) {
        info.truncated = true;
    }
    Ok(info)
}

#[derive(Default)]
struct Reader {
    /// Hand over `""` for each event's text.
    no_text: bool,
    sequences: HashMap<u32, Sequence>,
    tracks: HashMap<u64, Track>,
    /// The pid of the file's process track, for metadata and counters.
    pid: Option<i64>,
    packet: usize,
    flows: OpenFlows,
    /// Handed to the sink for every event, its strings' allocations kept.
    event: Event,
    /// The category ids of the last fast-path track event, kept allocated.
    category_iids: Vec<u64>,
    /// Names and categories given as text, shared (see [`shared_text`]).
    texts: foldhash::HashSet<Rc<str>>,
}

/// How many distinct names and categories given as text a reader shares.
const SHARED_TEXTS: usize = 4096;

/// `text` as a shared string: the one `texts` holds, else a new one, which
/// `texts` keeps while it holds fewer than [`SHARED_TEXTS`]. A trace that
/// gives its names as text (as `convert` writes them) repeats a few of them
/// in every packet.
fn shared_text(texts: &mut foldhash::HashSet<Rc<str>>, text: &str) -> Rc<str> {
    if let Some(shared) = texts.get(text) {
        return shared.clone();
    }
    let shared: Rc<str> = Rc::from(text);
    if texts.len() < SHARED_TEXTS {
        texts.insert(shared.clone());
    }
    shared
}

fn bad(packet: usize, detail: String) -> TraceError {
    TraceError::Layout {
        path: None,
        line: packet,
        column: 0,
        detail: format!("packet {packet} of the Perfetto trace: {detail}"),
    }
}

/// Reads a varint from `input`; `Ok(None)` at a clean end of input,
/// `Err(true)` when the input ends inside it.
fn read_varint(input: &mut impl Read) -> io::Result<Option<(u64, bool)>> {
    let mut value = 0u64;
    let mut shift = 0;
    let mut byte = [0u8];
    let mut first = true;
    loop {
        if input.read(&mut byte)? == 0 {
            return Ok(if first { None } else { Some((value, true)) });
        }
        first = false;
        if shift < 64 {
            value |= u64::from(byte[0] & 0x7f) << shift;
        }
        shift += 7;
        if byte[0] & 0x80 == 0 {
            return Ok(Some((value, false)));
        }
    }
}

/// The next field of the `Trace` at the start of `bytes`, when it is a
/// length-delimited field whose tag, length and body all lie in `bytes`:
/// its number and the range of its body. `None` asks for the slow path,
/// which also reports what is wrong.
fn framed_in(bytes: &[u8]) -> Option<(u64, std::ops::Range<usize>)> {
    let mut at = 0;
    let tag = varint_in(bytes, &mut at)?;
    if tag & 7 != 2 {
        return None;
    }
    let len = usize::try_from(varint_in(bytes, &mut at)?).ok()?;
    let end = at.checked_add(len).filter(|&end| end <= bytes.len())?;
    Some((tag >> 3, at..end))
}

/// A varint of `bytes` at `at`, which it moves past it; `None` when it is
/// cut short, longer than ten bytes, or beyond 64 bits (a tenth byte over
/// 1, which `prost` rejects).
fn varint_in(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        if shift == 63 && byte > 1 {
            return None;
        }
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// What the fast path keeps of a packet (see [`fast_packet`]): the track
/// event without its strings, which stay in the packet's bytes.
struct FastPacket<'a> {
    timestamp: Option<u64>,
    clock: Option<u32>,
    sequence: u32,
    event: TrackEvent,
    name: Option<&'a str>,
    /// The first of the event's categories given as text.
    category: Option<&'a str>,
}

/// Decodes, without `prost`, a packet that is one track event of the kind
/// the runtime writes for each slice begin, end and instant: a timestamp,
/// its clock and sequence, and a `track_event` of type, track, name and
/// categories (interned or as text) and source location id only (what the
/// runtime and `convert` write). Any other field, a field of another wire
/// type, text that is not UTF-8, or flags that clear the sequence's state:
/// `Err`, and the packet takes the general path, which also reports what
/// is wrong. Same reading as `prost`: the last value of a field wins,
/// repeated categories keep their order. `categories` is the vector to
/// fill with the category ids, handed back either way.
fn fast_packet(bytes: &[u8], mut categories: Vec<u64>) -> Result<FastPacket<'_>, Vec<u64>> {
    categories.clear();
    let mut p = FastPacket {
        timestamp: None,
        clock: None,
        sequence: 0,
        event: TrackEvent::default(),
        name: None,
        category: None,
    };
    let mut event_bytes = None;
    let mut at = 0;
    let ok = (|| {
        while at < bytes.len() {
            let tag = varint_in(bytes, &mut at)?;
            match tag {
                // timestamp (8), trusted_packet_sequence_id (10),
                // sequence_flags (13), timestamp_clock_id (58): varints.
                0x40 => p.timestamp = Some(varint_in(bytes, &mut at)?),
                0x50 => p.sequence = varint_in(bytes, &mut at)? as u32,
                0x68 => {
                    let flags = varint_in(bytes, &mut at)? as u32;
                    if flags & SEQ_INCREMENTAL_STATE_CLEARED != 0 {
                        return None;
                    }
                }
                0x1d0 => p.clock = Some(varint_in(bytes, &mut at)? as u32),
                // track_event (11), once.
                0x5a if event_bytes.is_none() => {
                    let len = usize::try_from(varint_in(bytes, &mut at)?).ok()?;
                    let end = at.checked_add(len).filter(|&end| end <= bytes.len())?;
                    event_bytes = Some(at..end);
                    at = end;
                }
                _ => return None,
            }
        }
        let range = event_bytes.clone()?;
        let body = &bytes[range.clone()];
        let mut at = 0;
        while at < body.len() {
            let tag = varint_in(body, &mut at)?;
            let value = varint_in(body, &mut at);
            // The text of a string field, whose length is `value`.
            let text = |at: &mut usize| {
                let end = usize::try_from(value?)
                    .ok()?
                    .checked_add(*at)
                    .filter(|&end| end <= body.len())?;
                let text = std::str::from_utf8(&body[*at..end]).ok()?;
                *at = end;
                Some(text)
            };
            match tag {
                // type (9), name_iid (10), category_iids (3, unpacked),
                // track_uuid (11), source_location_iid (34, not read).
                0x48 => p.event.r#type = Some(value? as i32),
                0x50 => p.event.name_iid = Some(value?),
                0x18 => categories.push(value?),
                0x58 => p.event.track_uuid = Some(value?),
                0x110 => drop(value?),
                // name (23) and categories (22) as text.
                0xba => p.name = Some(text(&mut at)?),
                0xb2 => {
                    let category = text(&mut at)?;
                    p.category = p.category.or(Some(category));
                }
                _ => return None,
            }
        }
        Some(())
    })();
    if ok.is_none() {
        return Err(categories);
    }
    p.event.category_iids = categories;
    Ok(p)
}

/// A packet's `timestamp` in REALTIME nanoseconds: on the clock `clock`,
/// else the one its sequence's defaults name, else BOOTTIME; a sequence's
/// incremental clock advances by it.
fn timestamp_ns(
    seq: &mut Sequence,
    seq_id: u32,
    ts: u64,
    clock: Option<u32>,
    n: usize,
) -> Result<i64, TraceError> {
    let clock = clock
        .or_else(|| seq.defaults.as_ref()?.timestamp_clock_id)
        .unwrap_or(CLOCK_BOOTTIME);
    if clock == CLOCK_REALTIME {
        Ok(ts as i64)
    } else if let Some(c) = seq.clocks.get_mut(&clock) {
        c.value = if c.incremental {
            c.value.wrapping_add(ts)
        } else {
            ts
        };
        Ok((i128::from(c.value) * i128::from(c.unit) + c.offset) as i64)
    } else {
        Err(bad(
            n,
            format!(
                "timestamp on clock {clock}, which no clock snapshot of sequence {seq_id} \
                 relates to REALTIME"
            ),
        ))
    }
}

impl Reader {
    fn run(
        mut self,
        mut input: impl BufRead,
        sink: &mut dyn FnMut(&mut Event, &str),
    ) -> Result<PftraceInfo, TraceError> {
        let io_error = |source| TraceError::Io {
            path: Default::default(),
            source,
        };
        let truncated = |packet| {
            Ok(PftraceInfo {
                truncated: true,
                partial_packet: Some(packet),
            })
        };
        let mut body = Vec::new();
        loop {
            let packet = self.packet + 1;
            // A packet read where it lies in the input's buffer, when all
            // of it is there (nearly always): no copy.
            let buffered = input.fill_buf().map_err(io_error)?;
            if buffered.first() == Some(&0) {
                // No field has number 0: zero bytes where a packet would
                // begin are what a file system leaves after the data of a
                // file whose writer died. Read to their end, they are
                // ignored, as in a JSON trace; anything after them is an
                // error.
                return match zero_run_to_end(&mut input).map_err(io_error)? {
                    true => Ok(PftraceInfo {
                        truncated: false,
                        partial_packet: None,
                    }),
                    false => Err(bad(
                        packet,
                        "zero bytes, then more data, where a packet should begin; is this a \
                         Perfetto trace?"
                            .into(),
                    )),
                };
            }
            if let Some((field, range)) = framed_in(buffered) {
                self.packet = packet;
                let used = range.end;
                if field == 1 {
                    self.packet_bytes(&buffered[range], sink)?;
                }
                input.consume(used);
                continue;
            }
            let Some((tag, cut)) = read_varint(&mut input).map_err(io_error)? else {
                return Ok(PftraceInfo {
                    truncated: false,
                    partial_packet: None,
                });
            };
            if cut {
                return truncated(packet);
            }
            let (field, wire) = (tag >> 3, tag & 7);
            let len = match wire {
                2 => match read_varint(&mut input).map_err(io_error)? {
                    Some((len, false)) => len,
                    _ => return truncated(packet),
                },
                _ => {
                    return Err(bad(
                        packet,
                        format!("expected a length-delimited field, found wire type {wire} (field {field}); is this a Perfetto trace?"),
                    ))
                }
            };
            body.clear();
            let got = (&mut input)
                .take(len)
                .read_to_end(&mut body)
                .map_err(io_error)?;
            if (got as u64) < len {
                return truncated(packet);
            }
            self.packet = packet;
            if field != 1 {
                continue; // another field of `Trace`: nothing of ours
            }
            self.packet_bytes(&body, sink)?;
        }
    }

    /// The events of one packet: a plain track event by the fast path,
    /// anything else decoded by `prost`.
    fn packet_bytes(
        &mut self,
        bytes: &[u8],
        sink: &mut dyn FnMut(&mut Event, &str),
    ) -> Result<(), TraceError> {
        match fast_packet(bytes, std::mem::take(&mut self.category_iids)) {
            Ok(mut p) => {
                let n = self.packet;
                let seq = self.sequences.entry(p.sequence).or_default();
                let Some(ts) = p.timestamp else {
                    return Err(bad(n, "a track event without a timestamp".into()));
                };
                let ts_ns = timestamp_ns(seq, p.sequence, ts, p.clock, n)?;
                let result =
                    self.track_event(&p.event, p.name, p.category, p.sequence, ts_ns, sink);
                self.category_iids = std::mem::take(&mut p.event.category_iids);
                result
            }
            Err(categories) => {
                self.category_iids = categories;
                let decoded = TracePacket::decode(bytes)
                    .map_err(|e| bad(self.packet, format!("not a TracePacket: {e}")))?;
                self.packet_events(decoded, sink)
            }
        }
    }

    fn packet_events(
        &mut self,
        p: TracePacket,
        sink: &mut dyn FnMut(&mut Event, &str),
    ) -> Result<(), TraceError> {
        let n = self.packet;
        let seq_id = p.trusted_packet_sequence_id.unwrap_or(0);
        let cleared = p.sequence_flags.unwrap_or(0) & SEQ_INCREMENTAL_STATE_CLEARED != 0
            || p.incremental_state_cleared == Some(true);
        if cleared {
            self.sequences.insert(seq_id, Sequence::default());
        }
        let seq = self.sequences.entry(seq_id).or_default();
        if let Some(defaults) = p.trace_packet_defaults {
            seq.defaults = Some(defaults);
        }
        if let Some(snapshot) = &p.clock_snapshot {
            let real = snapshot
                .clocks
                .iter()
                .find(|c| c.clock_id == Some(CLOCK_REALTIME))
                .and_then(|c| c.timestamp);
            for c in &snapshot.clocks {
                let id = c.clock_id.unwrap_or(0);
                if (64..128).contains(&id) {
                    let Some(real) = real else {
                        return Err(bad(
                            n,
                            format!("clock snapshot of clock {id} without a REALTIME reading"),
                        ));
                    };
                    let unit = c.unit_multiplier_ns.unwrap_or(1).max(1);
                    let value = c.timestamp.unwrap_or(0);
                    seq.clocks.insert(
                        id,
                        SeqClock {
                            value,
                            offset: i128::from(real) - i128::from(value) * i128::from(unit),
                            unit,
                            incremental: c.is_incremental == Some(true),
                        },
                    );
                }
            }
        }
        if let Some(data) = &p.interned_data {
            for s in &data.event_names {
                let name = Rc::from(s.name.as_deref().unwrap_or_default());
                seq.names.insert(s.iid.unwrap_or(0), name);
            }
            for s in &data.event_categories {
                let name = Rc::from(s.name.as_deref().unwrap_or_default());
                seq.categories.insert(s.iid.unwrap_or(0), name);
            }
        }
        let ts_ns = match p.timestamp {
            None => None,
            Some(ts) => Some(timestamp_ns(seq, seq_id, ts, p.timestamp_clock_id, n)?),
        };
        if let Some(td) = p.track_descriptor {
            self.describe(td, sink);
        }
        if let Some(bundle) = p.chrome_events {
            for m in bundle.metadata {
                let args = match (&m.json_value, &m.string_value, m.int_value) {
                    (Some(text), _, _) => serde_json::from_str(text)
                        .map_err(|e| bad(n, format!("metadata {:?} is not JSON: {e}", m.name)))?,
                    (None, Some(text), _) => json!(text),
                    (None, None, Some(v)) => json!(v),
                    _ => Value::Null,
                };
                let name = m.name.unwrap_or_default();
                let pid = p.trusted_pid.map(i64::from).or(self.pid);
                self.emit(
                    sink,
                    Phase::Metadata,
                    Some(&name),
                    None,
                    pid,
                    pid,
                    None,
                    None,
                    args,
                );
            }
        }
        if let Some(te) = p.track_event {
            let Some(ts_ns) = ts_ns else {
                return Err(bad(n, "a track event without a timestamp".into()));
            };
            let (name, category) = (te.name.as_deref(), te.categories.first());
            self.track_event(&te, name, category.map(String::as_str), seq_id, ts_ns, sink)?;
        }
        Ok(())
    }

    fn describe(&mut self, td: TrackDescriptor, sink: &mut dyn FnMut(&mut Event, &str)) {
        let uuid = td.uuid.unwrap_or(0);
        let track = self.tracks.entry(uuid).or_default();
        if td.parent_uuid.is_some() {
            track.parent = td.parent_uuid;
        }
        if td.name.is_some() {
            track.name = td.name;
        }
        track.is_counter |= td.counter.is_some();
        let mut named = None;
        if let Some(process) = td.process {
            let pid = process.pid.map(i64::from);
            track.pid = pid;
            self.pid = self.pid.or(pid);
            if let Some(name) = process.process_name {
                named = Some(("process_name", pid, pid, name));
            }
        }
        if let Some(thread) = td.thread {
            let (pid, tid) = (thread.pid.map(i64::from), thread.tid.map(i64::from));
            track.pid = pid;
            track.tid = tid;
            if let Some(name) = thread.thread_name {
                named = Some(("thread_name", pid, tid, name));
            }
        }
        if let Some((what, pid, tid, name)) = named {
            let args = json!({ "name": name });
            self.emit(
                sink,
                Phase::Metadata,
                Some(what),
                None,
                pid,
                tid,
                None,
                None,
                args,
            );
        }
    }

    /// The pid of `uuid`'s track or of its nearest ancestor that has one.
    fn pid_of(&self, mut uuid: u64) -> Option<i64> {
        for _ in 0..64 {
            let track = self.tracks.get(&uuid)?;
            if track.pid.is_some() {
                return track.pid;
            }
            uuid = track.parent?;
        }
        None
    }

    /// The event of a track event packet; `name` and `category` are its
    /// name and first category given as text (they take precedence over
    /// the interned ones).
    fn track_event(
        &mut self,
        te: &TrackEvent,
        name: Option<&str>,
        category: Option<&str>,
        seq_id: u32,
        ts_ns: i64,
        sink: &mut dyn FnMut(&mut Event, &str),
    ) -> Result<(), TraceError> {
        let n = self.packet;
        let seq = &self.sequences[&seq_id];
        let uuid = te
            .track_uuid
            .or_else(|| {
                seq.defaults
                    .as_ref()?
                    .track_event_defaults
                    .as_ref()?
                    .track_uuid
            })
            .ok_or_else(|| bad(n, "a track event without a track".into()))?;
        let name: Option<Rc<str>> = match (te.name_iid, name) {
            (_, Some(name)) => Some(shared_text(&mut self.texts, name)),
            (Some(iid), None) => Some(seq.names.get(&iid).cloned().ok_or_else(|| {
                bad(
                    n,
                    format!("event name {iid} was never interned on sequence {seq_id}"),
                )
            })?),
            (None, None) => None,
        };
        let cat: Option<Rc<str>> = match (te.category_iids.first(), category) {
            (_, Some(cat)) => Some(shared_text(&mut self.texts, cat)),
            (Some(iid), None) => Some(seq.categories.get(iid).cloned().ok_or_else(|| {
                bad(
                    n,
                    format!("category {iid} was never interned on sequence {seq_id}"),
                )
            })?),
            (None, None) => None,
        };
        let pid = self.pid_of(uuid);
        // An event on a track of its own (async) happened on the thread
        // whose sequence carries it.
        let seq_thread = seq
            .defaults
            .as_ref()
            .and_then(|d| d.track_event_defaults.as_ref()?.track_uuid)
            .and_then(|t| self.tracks.get(&t)?.tid);
        let Some(track) = self.tracks.get_mut(&uuid) else {
            return Err(bad(n, format!("an event on track {uuid}, never described")));
        };
        let on_thread = track.tid.is_some();
        let tid = if on_thread {
            track.tid
        } else {
            seq_thread.or(pid)
        };
        let given_id = te
            .debug_annotations
            .iter()
            .find(|a| a.name.as_deref() == Some(ASYNC_ID))
            .and_then(|a| a.string_value.clone());
        let async_id = (!on_thread).then(|| given_id.unwrap_or_else(|| uuid.to_string()));
        let pick = |thread: Phase, other: Phase| if on_thread { thread } else { other };
        let (ph, name, cat, tid, id, args) = match te.r#type.unwrap_or(0) {
            TYPE_SLICE_BEGIN => {
                let begun = (
                    name.clone().unwrap_or_else(|| Rc::from("")),
                    cat.clone(),
                    async_id.clone(),
                );
                track.open.push(begun);
                let ph = pick(Phase::Begin, Phase::AsyncBegin);
                let args = annotation_args(&te.debug_annotations);
                (ph, name, cat, tid, async_id, args)
            }
            TYPE_SLICE_END => {
                let (begun, begun_cat, begun_id) = match (track.open.pop(), on_thread) {
                    (Some(begun), _) => begun,
                    // An async slice ended on another thread: that thread's
                    // sequence may reach the file before the beginning's.
                    // Perfetto sorts by time; the `e` pairs with its `b` by
                    // key and time, as in a JSON trace.
                    (None, false) => (name.unwrap_or_else(|| Rc::from("")), None, None),
                    (None, true) => {
                        let detail = format!("a slice end on track {uuid}, where none is open");
                        return Err(bad(n, detail));
                    }
                };
                if !on_thread && track.open.is_empty() {
                    // An async track carries one slice; it is described again
                    // before any later event.
                    self.tracks.remove(&uuid);
                }
                let ph = pick(Phase::End, Phase::AsyncEnd);
                // An end written without the id takes its begin's.
                let given = te
                    .debug_annotations
                    .iter()
                    .any(|a| a.name.as_deref() == Some(ASYNC_ID));
                let id = if given {
                    async_id
                } else {
                    begun_id.or(async_id)
                };
                (
                    ph,
                    Some(begun),
                    cat.or(begun_cat),
                    tid,
                    id,
                    annotation_args(&te.debug_annotations),
                )
            }
            TYPE_INSTANT => {
                let (ph, id) = if let Some(&id) = te.flow_ids.first() {
                    let ph = if self.flows.step(id) {
                        Phase::FlowStep
                    } else {
                        Phase::FlowStart
                    };
                    (ph, Some(id.to_string()))
                } else if let Some(&id) = te.terminating_flow_ids.first() {
                    self.flows.terminate(id);
                    (Phase::FlowEnd, Some(id.to_string()))
                } else {
                    (pick(Phase::Instant, Phase::AsyncInstant), async_id)
                };
                (
                    ph,
                    name,
                    cat,
                    tid,
                    id,
                    annotation_args(&te.debug_annotations),
                )
            }
            TYPE_COUNTER => {
                let (group, key) = self.counter_names(uuid);
                let value = te
                    .double_counter_value
                    .or(te.counter_value.map(|v| v as f64))
                    .unwrap_or(0.0);
                let mut args = Map::new();
                args.insert(key, number(value));
                for (t, v) in te
                    .extra_double_counter_track_uuids
                    .iter()
                    .zip(&te.extra_double_counter_values)
                {
                    args.insert(self.counter_names(*t).1, number(*v));
                }
                let args = Value::Object(args);
                (Phase::Counter, Some(Rc::from(group)), None, pid, None, args)
            }
            other => return Err(bad(n, format!("a track event of unknown type {other}"))),
        };
        self.emit(
            sink,
            ph,
            name.as_deref(),
            cat.as_deref(),
            pid,
            tid,
            Some(ts_ns),
            id,
            args,
        );
        Ok(())
    }

    /// The counter a counter track belongs to and the key of its value:
    /// the parent track's name and the track's, or the track's name and
    /// `value` for a counter track without a named parent.
    fn counter_names(&self, uuid: u64) -> (String, String) {
        let track = self.tracks.get(&uuid);
        let own = track.and_then(|t| t.name.clone()).unwrap_or_default();
        let parent = track
            .and_then(|t| t.parent)
            .and_then(|p| self.tracks.get(&p))
            .filter(|p| p.pid.is_none())
            .and_then(|p| p.name.clone());
        match parent {
            Some(group) => (group, own),
            None => (own, "value".to_string()),
        }
    }

    /// Hands the event over in [`Reader::event`], whose strings keep
    /// their allocations from one event to the next.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        sink: &mut dyn FnMut(&mut Event, &str),
        ph: Phase,
        name: Option<&str>,
        cat: Option<&str>,
        pid: Option<i64>,
        tid: Option<i64>,
        ts_ns: Option<i64>,
        id: Option<String>,
        args: Value,
    ) {
        let event = &mut self.event;
        set_text(&mut event.name, name);
        set_text(&mut event.cat, cat);
        event.ph = Some(ph);
        event.pid = pid;
        event.tid = tid;
        event.ts = ts_ns.map(|ns| ns as f64 / 1000.0);
        event.ts_ns = ts_ns;
        event.dur = None;
        event.dur_ns = None;
        event.id = id;
        event.args = args;
        event.line = self.packet;
        event.field_errors.clear();
        let text = match self.no_text {
            true => String::new(),
            false => event_json(event),
        };
        sink(event, &text);
    }
}

/// Sets `slot` to `text`, reusing the string it holds.
fn set_text(slot: &mut Option<String>, text: Option<&str>) {
    match (slot.as_mut(), text) {
        (Some(held), Some(text)) => {
            held.clear();
            held.push_str(text);
        }
        (None, Some(text)) => *slot = Some(text.to_owned()),
        (_, None) => *slot = None,
    }
}

/// A counter value as the JSON writer writes it: whole numbers without a
/// fraction, so both formats read back alike.
fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

/// An event as one line of a Chrome JSON trace, in the JSON writer's field
/// order; `ts` in microseconds with three decimals, so the nanosecond
/// survives.
pub(crate) fn event_json(event: &Event) -> String {
    let mut out = String::with_capacity(128);
    let field = |out: &mut String, key: &str, value: &str| {
        out.push_str(if out.is_empty() { "{" } else { "," });
        out.push('"');
        out.push_str(key);
        out.push_str("\":");
        out.push_str(value);
    };
    let text = |s: &str| Value::from(s).to_string();
    if let Some(name) = &event.name {
        field(&mut out, "name", &text(name));
    }
    if let Some(cat) = &event.cat {
        field(&mut out, "cat", &text(cat));
    }
    if let Some(ph) = &event.ph {
        field(&mut out, "ph", &text(ph.code()));
    }
    if let Some(pid) = event.pid {
        field(&mut out, "pid", &pid.to_string());
    }
    if let Some(tid) = event.tid {
        field(&mut out, "tid", &tid.to_string());
    }
    if let Some(ns) = event.ts_ns {
        let sign = if ns < 0 { "-" } else { "" };
        let abs = ns.unsigned_abs();
        field(
            &mut out,
            "ts",
            &format!("{sign}{}.{:03}", abs / 1000, abs % 1000),
        );
    }
    if let Some(ns) = event.dur_ns {
        field(
            &mut out,
            "dur",
            &format!("{}.{:03}", ns / 1000, ns.rem_euclid(1000)),
        );
    }
    match event.ph {
        Some(Phase::Instant) => field(&mut out, "s", "\"t\""),
        Some(Phase::FlowEnd) => field(&mut out, "bp", "\"e\""),
        _ => {}
    }
    if let Some(id) = &event.id {
        let numeric = !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
        field(&mut out, "id", &if numeric { id.clone() } else { text(id) });
    }
    if !event.args.is_null() {
        field(&mut out, "args", &event.args.to_string());
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests;

//! Reading Perfetto protobuf traces (`.pftrace`, written by the runtime's
//! `log-format=perfetto`) into the same [`Event`]s as the JSON traces.
//!
//! The file is a `Trace` message: a run of `packet` fields. The reader
//! frames one packet at a time and decodes it with `prost` (the message
//! types below declare only the fields the runtime writes; others are
//! skipped), so memory holds one packet, the tracks, the interned strings
//! and the open slices, never the file. A file that ends inside a packet
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

use std::collections::HashMap;
use std::io::{self, BufReader, Read};

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
}

/// The named string annotations of an event as its `args`; `Null` when it
/// has none.
fn annotation_args(annotations: &[DebugAnnotation]) -> Value {
    let args: Map<String, Value> = annotations
        .iter()
        .filter(|a| a.name.as_deref() != Some(ASYNC_ID))
        .filter_map(|a| Some((a.name.clone()?, Value::from(a.string_value.clone()?))))
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
    names: HashMap<u64, String>,
    categories: HashMap<u64, String>,
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
    /// Names, categories and async ids of the slices open on the track,
    /// innermost last.
    open: Vec<(String, Option<String>, Option<String>)>,
}

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
/// Perfetto trace: named `*.pftrace`, or starting with a `packet` field
/// (byte 0x0a) that is not a newline before JSON's `[` or `{`.
pub(crate) fn is_pftrace(name: &std::path::Path, head: &[u8]) -> bool {
    if name.extension().is_some_and(|x| x == "pftrace") {
        return true;
    }
    head.first() == Some(&0x0a)
        && head
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b != b'[' && b != b'{')
}

/// Reads a pftrace from `input`, handing each event and its JSON text (as
/// the JSON writer would write it) to `sink`; the text is empty unless
/// `text` (writing it costs about as much as reading the event, and `db`
/// has no use for it). Errors name no file; the caller adds it.
pub(crate) fn stream(
    input: impl Read,
    text: bool,
    sink: &mut dyn FnMut(Event, &str),
) -> Result<PftraceInfo, TraceError> {
    let reader = Reader {
        no_text: !text,
        ..Reader::default()
    };
    reader.run(BufReader::with_capacity(1 << 20, input), sink)
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

impl Reader {
    fn run(
        mut self,
        mut input: impl Read,
        sink: &mut dyn FnMut(Event, &str),
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
            let decoded = TracePacket::decode(&body[..])
                .map_err(|e| bad(packet, format!("not a TracePacket: {e}")))?;
            self.packet_events(decoded, sink)?;
        }
    }

    fn packet_events(
        &mut self,
        p: TracePacket,
        sink: &mut dyn FnMut(Event, &str),
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
                seq.names
                    .insert(s.iid.unwrap_or(0), s.name.clone().unwrap_or_default());
            }
            for s in &data.event_categories {
                seq.categories
                    .insert(s.iid.unwrap_or(0), s.name.clone().unwrap_or_default());
            }
        }
        let ts_ns = match p.timestamp {
            None => None,
            Some(ts) => {
                let clock = p
                    .timestamp_clock_id
                    .or_else(|| seq.defaults.as_ref()?.timestamp_clock_id)
                    .unwrap_or(CLOCK_BOOTTIME);
                if clock == CLOCK_REALTIME {
                    Some(ts as i64)
                } else if let Some(c) = seq.clocks.get_mut(&clock) {
                    c.value = if c.incremental {
                        c.value.wrapping_add(ts)
                    } else {
                        ts
                    };
                    Some((i128::from(c.value) * i128::from(c.unit) + c.offset) as i64)
                } else {
                    return Err(bad(
                        n,
                        format!(
                            "timestamp on clock {clock}, which no clock snapshot of sequence \
                             {seq_id} relates to REALTIME"
                        ),
                    ));
                }
            }
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
                let pid = self.pid;
                self.emit(
                    sink,
                    Phase::Metadata,
                    Some(name),
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
            self.track_event(te, seq_id, ts_ns, sink)?;
        }
        Ok(())
    }

    fn describe(&mut self, td: TrackDescriptor, sink: &mut dyn FnMut(Event, &str)) {
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
                Some(what.into()),
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

    fn track_event(
        &mut self,
        te: TrackEvent,
        seq_id: u32,
        ts_ns: i64,
        sink: &mut dyn FnMut(Event, &str),
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
        let name = match (te.name_iid, &te.name) {
            (_, Some(name)) => Some(name.clone()),
            (Some(iid), None) => Some(seq.names.get(&iid).cloned().ok_or_else(|| {
                bad(
                    n,
                    format!("event name {iid} was never interned on sequence {seq_id}"),
                )
            })?),
            (None, None) => None,
        };
        let cat = match (te.category_iids.first(), te.categories.first()) {
            (_, Some(cat)) => Some(cat.clone()),
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
                    name.clone().unwrap_or_default(),
                    cat.clone(),
                    async_id.clone(),
                );
                track.open.push(begun);
                let ph = pick(Phase::Begin, Phase::AsyncBegin);
                (ph, name, cat, tid, async_id, Value::Null)
            }
            TYPE_SLICE_END => {
                let (begun, begun_cat, begun_id) = match (track.open.pop(), on_thread) {
                    (Some(begun), _) => begun,
                    // An async slice ended on another thread: that thread's
                    // sequence may reach the file before the beginning's.
                    // Perfetto sorts by time; the `e` pairs with its `b` by
                    // key and time, as in a JSON trace.
                    (None, false) => (name.unwrap_or_default(), None, None),
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
                (ph, name, cat, tid, id, Value::Null)
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
                (Phase::Counter, Some(group), None, pid, None, args)
            }
            other => return Err(bad(n, format!("a track event of unknown type {other}"))),
        };
        self.emit(sink, ph, name, cat, pid, tid, Some(ts_ns), id, args);
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

    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        sink: &mut dyn FnMut(Event, &str),
        ph: Phase,
        name: Option<String>,
        cat: Option<String>,
        pid: Option<i64>,
        tid: Option<i64>,
        ts_ns: Option<i64>,
        id: Option<String>,
        args: Value,
    ) {
        let event = Event {
            name,
            cat,
            ph: Some(ph),
            pid,
            tid,
            ts: ts_ns.map(|ns| ns as f64 / 1000.0),
            ts_ns,
            dur: None,
            dur_ns: None,
            id,
            args,
            line: self.packet,
            field_errors: Vec::new(),
        };
        let text = match self.no_text {
            true => String::new(),
            false => event_json(&event),
        };
        sink(event, &text);
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

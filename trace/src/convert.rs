//! `convert`: a trace in one format written in the other, event by event.
//!
//! - To Chrome JSON (`.pfw`, any output not named `*.pftrace`): the events
//!   as [`crate::read`] hands them over, one per line of a JSON array, as
//!   the runtime's JSON writer lays them out. A `.pftrace` becomes the
//!   `.pfw` the runtime would have written for the same run (async ids are
//!   those of the `async_id` annotations this module writes, else the async
//!   tracks' uuids; compact `X` slices stay begin/end pairs; a flow event
//!   that continues a flow begun earlier is a step, `t`).
//! - To Perfetto (`*.pftrace`): packet sequences whose clock is
//!   `BUILTIN_CLOCK_REALTIME` (timestamps absolute, the events' epoch ns):
//!   one per thread with async events, whose default track is the thread's
//!   (how a reader knows the thread of an event on an async track), and one
//!   for the rest; async events carry their JSON id as the debug annotation
//!   `async_id`; a track per process, thread, async span and counter value, names and
//!   categories as strings in each event (no interning: converting is not
//!   the hot path), `X` as a begin and an end, flows as instants with flow
//!   ids, other metadata as `chrome_events.metadata` JSON values in packets
//!   with the process's `trusted_pid`. Packets
//!   are encoded by `prost` from the message types the reader decodes.
//!
//! A `.pftrace` closes a slice on its track, in the order of the packets;
//! a JSON array need not be in time order. `b`/`e` events pair as
//! [`crate::spans`] pairs them (by pid, category, id and name, and by
//! time, whatever their order in the file), and each pair gets an async
//! track of its own, written as its begin and then its end. An `e` read
//! before its `b` (a span ended on another thread, or files merged) waits
//! for it. An input that no `.pftrace` can hold (an `E` with nothing open
//! on its thread, an `e` that no `b` pairs with) is an error that names
//! the event.
//!
//! Memory holds the tracks described so far and the async events not yet
//! paired, not the file.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use prost::Message;
use serde_json::Value;

use crate::error::TraceError;
use crate::event::{Event, Phase};
use crate::output::{same_file, OutputFile};
use crate::pftrace::{
    ChromeEventBundle, ChromeMetadata, Clock, ClockSnapshot, CounterDescriptor, DebugAnnotation,
    ProcessDescriptor, ThreadDescriptor, TracePacket, TracePacketDefaults, TrackDescriptor,
    TrackEvent, TrackEventDefaults, ASYNC_ID, CLOCK_REALTIME, SEQ_INCREMENTAL_STATE_CLEARED,
    TYPE_COUNTER, TYPE_INSTANT, TYPE_SLICE_BEGIN, TYPE_SLICE_END,
};
use crate::read::stream_trace_text;
use crate::spans;

/// Why a conversion failed.
#[derive(Debug)]
pub enum ConvertError {
    /// The input could not be read as a trace.
    Read(TraceError),
    /// The output could not be written.
    Write {
        /// The output file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The output is the input.
    OutputIsInput {
        /// The file named as both.
        path: PathBuf,
    },
    /// An event of the input that a Perfetto trace cannot hold; the
    /// output is removed.
    Unrepresentable {
        /// The input file.
        path: PathBuf,
        /// The 1-based line (packet, for a `.pftrace`) of the event.
        line: usize,
        /// The event and why.
        detail: String,
    },
}

impl std::fmt::Display for ConvertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConvertError::Read(e) => write!(f, "{e}"),
            ConvertError::Write { path, source } => {
                write!(f, "cannot write {}: {source}", path.display())
            }
            ConvertError::OutputIsInput { path } => write!(
                f,
                "{} is both the input and the output; expected another output file",
                path.display()
            ),
            ConvertError::Unrepresentable { path, line, detail } => write!(
                f,
                "{}:{line}: {detail}; a Perfetto trace cannot hold it",
                path.display()
            ),
        }
    }
}

impl std::error::Error for ConvertError {}

/// What a conversion did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    /// Events read from the input (metadata included).
    pub events: u64,
    /// Whether the output is a Perfetto trace.
    pub to_perfetto: bool,
    /// Whether the input ended before it was complete (it is converted
    /// up to its last whole event).
    pub truncated: bool,
}

/// Whether `path` names a Perfetto trace to write.
pub fn is_pftrace_name(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "pftrace")
}

/// Converts the trace at `input` into `output`, whose name chooses the
/// format (`*.pftrace`: Perfetto, anything else: Chrome JSON).
pub fn convert(input: &Path, output: &Path) -> Result<Converted, ConvertError> {
    if same_file(input, output) {
        return Err(ConvertError::OutputIsInput {
            path: input.to_path_buf(),
        });
    }
    let write_error = |source| ConvertError::Write {
        path: output.to_path_buf(),
        source,
    };
    // Written whole or not at all: an error below leaves what was at
    // `output` as it was.
    let mut staged = OutputFile::create(output).map_err(write_error)?;
    let mut out = BufWriter::with_capacity(1 << 20, staged.file());
    let to_perfetto = is_pftrace_name(output);
    let mut events = 0u64;
    let mut failed: Option<io::Error> = None;
    let mut unfit: Option<Unfit> = None;
    let info = if to_perfetto {
        let mut enc = PerfettoEncoder::default();
        enc.start(&mut out).map_err(write_error)?;
        let info = stream_trace_text(input, |event, _| {
            events += 1;
            if failed.is_none() && unfit.is_none() {
                match enc.event(&event, &mut out) {
                    Ok(()) => {}
                    Err(Encode::Io(e)) => failed = Some(e),
                    Err(Encode::Unfit(e)) => unfit = Some(e),
                }
            }
        });
        if info.is_ok() && unfit.is_none() {
            unfit = enc.unpaired_end();
        }
        info
    } else {
        out.write_all(b"[\n").map_err(write_error)?;
        let mut first = true;
        stream_trace_text(input, |_, text| {
            events += 1;
            if failed.is_some() {
                return;
            }
            // The event's text as the input has it; for a `.pftrace`, as the
            // JSON writer would have written it.
            let sep: &[u8] = if first { b"" } else { b",\n" };
            first = false;
            if let Err(e) = out
                .write_all(sep)
                .and_then(|()| out.write_all(text.as_bytes()))
            {
                failed = Some(e);
            }
        })
    };
    let info = info.map_err(ConvertError::Read)?;
    if let Some(e) = failed {
        return Err(write_error(e));
    }
    if let Some(Unfit { line, detail }) = unfit {
        return Err(ConvertError::Unrepresentable {
            path: input.to_path_buf(),
            line,
            detail,
        });
    }
    if !to_perfetto {
        // An input cut short stays so: without its `]`, the output is read
        // (and checked) as a trace cut short, whose open slices were open
        // when it was cut, not slices a complete trace never closed.
        let end: &[u8] = if info.truncated { b"\n" } else { b"\n]\n" };
        out.write_all(end).map_err(write_error)?;
    }
    out.flush().map_err(write_error)?;
    drop(out);
    staged.commit().map_err(write_error)?;
    Ok(Converted {
        events,
        to_perfetto,
        truncated: info.truncated,
    })
}

const SEQUENCE: u32 = 1;

fn uuid_of(parts: impl Hash) -> u64 {
    // A stable hash (not randomised per run), so one input converts to
    // the same bytes every time.
    let mut h = FnvHasher(0xcbf2_9ce4_8422_2325);
    parts.hash(&mut h);
    h.0 >> 1
}

struct FnvHasher(u64);

impl Hasher for FnvHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// An input event that a Perfetto trace cannot hold.
struct Unfit {
    line: usize,
    detail: String,
}

/// Why an event was not written.
enum Encode {
    Io(io::Error),
    Unfit(Unfit),
}

impl From<io::Error> for Encode {
    fn from(e: io::Error) -> Encode {
        Encode::Io(e)
    }
}

/// What `b` and `e` events pair by: pid, category, id and name.
type AsyncKey = (i64, Option<String>, Option<String>, Option<String>);

/// A `b` written whose `e` is not read yet: its track and time, and its
/// position in the file (the later of two begins at one time is the
/// inner one).
struct OpenAsync {
    track: u64,
    ts: i64,
    index: u64,
}

/// An `e` read before any `b` it could close: what its slice end needs.
struct WaitingEnd {
    ts: i64,
    index: u64,
    line: usize,
    /// The sequence of its thread.
    sequence: u32,
    event: TrackEvent,
}

/// Writes events as packets of one sequence.
#[derive(Default)]
struct PerfettoEncoder {
    /// Process and thread tracks described so far.
    described: HashSet<u64>,
    /// Counter value tracks by (pid, counter, key).
    counters: HashMap<(i64, String, String), u64>,
    /// The names of the slices open on each thread track (`B`s not yet
    /// ended), innermost last.
    open_on_thread: HashMap<u64, Vec<Option<String>>>,
    /// Per async key, the begins written and not yet ended, and the ends
    /// waiting for their begin.
    open_async: HashMap<AsyncKey, Vec<OpenAsync>>,
    waiting: HashMap<AsyncKey, Vec<WaitingEnd>>,
    /// Events handed over so far, and async slices begun.
    index: u64,
    async_slices: u64,
    /// The packet sequence of each thread with async events, by (pid, tid).
    sequences: HashMap<(i64, i64), u32>,
    buf: Vec<u8>,
}

impl PerfettoEncoder {
    fn packet(&mut self, packet: TracePacket, out: &mut impl Write) -> io::Result<()> {
        self.buf.clear();
        self.buf.push(0x0a);
        packet
            .encode_length_delimited(&mut self.buf)
            .map_err(io::Error::other)?;
        out.write_all(&self.buf)
    }

    fn base() -> TracePacket {
        TracePacket {
            trusted_packet_sequence_id: Some(SEQUENCE),
            ..Default::default()
        }
    }

    fn start(&mut self, out: &mut impl Write) -> io::Result<()> {
        self.open_sequence(SEQUENCE, None, out)
    }

    /// The first packet of sequence `id`: clears its state, declares the
    /// clock, and gives `thread`'s track as the default of its events, so a
    /// reader knows which thread an async event on it happened on.
    fn open_sequence(
        &mut self,
        id: u32,
        thread: Option<u64>,
        out: &mut impl Write,
    ) -> io::Result<()> {
        let clock = |id| Clock {
            clock_id: Some(id),
            timestamp: Some(0),
            ..Default::default()
        };
        self.packet(
            TracePacket {
                trusted_packet_sequence_id: Some(id),
                sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED),
                clock_snapshot: Some(ClockSnapshot {
                    clocks: vec![clock(CLOCK_REALTIME)],
                    primary_trace_clock: Some(CLOCK_REALTIME),
                }),
                trace_packet_defaults: thread.map(|track| TracePacketDefaults {
                    timestamp_clock_id: Some(CLOCK_REALTIME),
                    track_event_defaults: Some(TrackEventDefaults {
                        track_uuid: Some(track),
                    }),
                }),
                ..Default::default()
            },
            out,
        )
    }

    /// The packet sequence of thread `tid` of process `pid`, opened on its
    /// first use.
    fn thread_sequence(&mut self, pid: i64, tid: i64, out: &mut impl Write) -> io::Result<u32> {
        if let Some(&id) = self.sequences.get(&(pid, tid)) {
            return Ok(id);
        }
        let track = self.thread_track(pid, tid, None, out)?;
        let id = SEQUENCE + 1 + self.sequences.len() as u32;
        self.open_sequence(id, Some(track), out)?;
        self.sequences.insert((pid, tid), id);
        Ok(id)
    }

    fn describe(&mut self, td: TrackDescriptor, out: &mut impl Write) -> io::Result<()> {
        self.packet(
            TracePacket {
                track_descriptor: Some(td),
                ..Self::base()
            },
            out,
        )
    }

    fn process_track(&mut self, pid: i64, out: &mut impl Write) -> io::Result<u64> {
        let uuid = uuid_of(("process", pid));
        if self.described.insert(uuid) {
            let td = TrackDescriptor {
                uuid: Some(uuid),
                process: Some(ProcessDescriptor {
                    pid: Some(pid as i32),
                    process_name: None,
                }),
                ..Default::default()
            };
            self.describe(td, out)?;
        }
        Ok(uuid)
    }

    fn thread_track(
        &mut self,
        pid: i64,
        tid: i64,
        name: Option<&str>,
        out: &mut impl Write,
    ) -> io::Result<u64> {
        let parent = self.process_track(pid, out)?;
        let uuid = uuid_of(("thread", pid, tid));
        if self.described.insert(uuid) || name.is_some() {
            let td = TrackDescriptor {
                uuid: Some(uuid),
                parent_uuid: Some(parent),
                thread: Some(ThreadDescriptor {
                    pid: Some(pid as i32),
                    tid: Some(tid as i32),
                    thread_name: name.map(str::to_string),
                }),
                ..Default::default()
            };
            self.describe(td, out)?;
        }
        Ok(uuid)
    }

    fn counter_track(
        &mut self,
        pid: i64,
        counter: &str,
        key: &str,
        out: &mut impl Write,
    ) -> io::Result<u64> {
        let k = (pid, counter.to_string(), key.to_string());
        if let Some(&uuid) = self.counters.get(&k) {
            return Ok(uuid);
        }
        let parent = self.process_track(pid, out)?;
        let group = uuid_of(("counter", pid, counter));
        if self.described.insert(group) {
            let td = TrackDescriptor {
                uuid: Some(group),
                parent_uuid: Some(parent),
                name: Some(counter.to_string()),
                ..Default::default()
            };
            self.describe(td, out)?;
        }
        let uuid = uuid_of(("counter", pid, counter, key));
        let td = TrackDescriptor {
            uuid: Some(uuid),
            parent_uuid: Some(group),
            name: Some(key.to_string()),
            counter: Some(CounterDescriptor {}),
            ..Default::default()
        };
        self.describe(td, out)?;
        self.counters.insert(k, uuid);
        Ok(uuid)
    }

    fn track_event(&mut self, ts_ns: i64, te: TrackEvent, out: &mut impl Write) -> io::Result<()> {
        self.track_event_on(SEQUENCE, ts_ns, te, out)
    }

    fn track_event_on(
        &mut self,
        sequence: u32,
        ts_ns: i64,
        te: TrackEvent,
        out: &mut impl Write,
    ) -> io::Result<()> {
        self.packet(
            TracePacket {
                timestamp: Some(ts_ns.max(0) as u64),
                timestamp_clock_id: Some(CLOCK_REALTIME),
                trusted_packet_sequence_id: Some(sequence),
                track_event: Some(te),
                ..Default::default()
            },
            out,
        )
    }

    fn event(&mut self, e: &Event, out: &mut impl Write) -> Result<(), Encode> {
        self.index += 1;
        let pid = e.pid.unwrap_or(0);
        let tid = e.tid.unwrap_or(pid);
        let Some(ph) = &e.ph else { return Ok(()) };
        // The event's `args`, each a JSON annotation (an end's `outcome` a
        // string one, as the runtime writes it).
        let args: Vec<DebugAnnotation> = e
            .args
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(key, _)| key.as_str() != "outcome")
            .map(|(key, value)| DebugAnnotation {
                name: Some(key.clone()),
                legacy_json_value: Some(value.to_string()),
                ..Default::default()
            })
            .collect();
        let named = |kind: i32, track: u64| TrackEvent {
            r#type: Some(kind),
            name: e.name.clone(),
            categories: e.cat.iter().cloned().collect(),
            track_uuid: Some(track),
            debug_annotations: args.clone(),
            ..Default::default()
        };
        // An end that says how its span ended keeps its outcome.
        let outcome = crate::outcome::Outcome::of_end(e);
        let ending = |track: u64, with_args: bool| {
            let mut end = named(TYPE_SLICE_END, track);
            if !with_args {
                end.debug_annotations.clear();
            }
            if outcome != crate::outcome::Outcome::Returned {
                end.debug_annotations.push(DebugAnnotation {
                    name: Some("outcome".to_string()),
                    string_value: Some(outcome.as_str().to_string()),
                    ..Default::default()
                });
            }
            end
        };
        let Some(ts) = e.ts_ns else {
            if *ph == Phase::Metadata {
                return Ok(self.metadata(e, pid, tid, out)?);
            }
            return Ok(()); // an event without a time has no place on a track
        };
        if ts < 0 {
            return Err(Encode::Unfit(Unfit {
                line: e.line,
                detail: format!(
                    "{} is stamped before 1970 ({ts} ns), which a Perfetto trace cannot hold",
                    e.label()
                ),
            }));
        }
        match ph {
            Phase::Metadata => Ok(self.metadata(e, pid, tid, out)?),
            Phase::Begin | Phase::End | Phase::Instant | Phase::Complete => {
                let track = self.thread_track(pid, tid, None, out)?;
                match ph {
                    Phase::Begin => {
                        self.open_on_thread
                            .entry(track)
                            .or_default()
                            .push(e.name.clone());
                        Ok(self.track_event(ts, named(TYPE_SLICE_BEGIN, track), out)?)
                    }
                    Phase::End => {
                        let open = self.open_on_thread.entry(track).or_default();
                        match open.last() {
                            None => {
                                return Err(Encode::Unfit(Unfit {
                                    line: e.line,
                                    detail: format!(
                                        "{} ends a slice on thread {tid} of process {pid}, \
                                         where none is open",
                                        e.label()
                                    ),
                                }))
                            }
                            // A slice end in Perfetto ends the innermost
                            // slice: an `E` named for an outer one would
                            // end another slice than it does here.
                            Some(Some(inner)) if e.name.as_ref().is_some_and(|n| n != inner) => {
                                return Err(Encode::Unfit(Unfit {
                                    line: e.line,
                                    detail: format!(
                                        "{} ends a slice on thread {tid} of process {pid} whose \
                                         innermost open slice is B \"{inner}\", which a Perfetto \
                                         slice end would end instead (`perfflow-trace check` says \
                                         more)",
                                        e.label()
                                    ),
                                }))
                            }
                            Some(_) => {
                                open.pop();
                            }
                        }
                        Ok(self.track_event(ts, ending(track, true), out)?)
                    }
                    Phase::Instant => Ok(self.track_event(ts, named(TYPE_INSTANT, track), out)?),
                    _ => {
                        self.track_event(ts, named(TYPE_SLICE_BEGIN, track), out)?;
                        // An `X` event's args go with its begin.
                        let end = ts.saturating_add(e.dur_ns.unwrap_or(0).max(0));
                        Ok(self.track_event(end, ending(track, false), out)?)
                    }
                }
            }
            Phase::AsyncBegin => {
                let key: AsyncKey = (pid, e.cat.clone(), e.id.clone(), e.name.clone());
                self.async_slices += 1;
                let track = uuid_of(("async", &key, self.async_slices));
                self.async_track(pid, track, e, out)?;
                let sequence = self.thread_sequence(pid, tid, out)?;
                let begin = with_async_id(named(TYPE_SLICE_BEGIN, track), e);
                self.track_event_on(sequence, ts, begin, out)?;
                // The waiting end this begin closes, as `check` pairs them.
                let waiting = self.waiting.get_mut(&key);
                let end = waiting.as_ref().and_then(|ends| {
                    spans::end_for_begin(ends, Some(ts), |end| (Some(end.ts), end.index))
                });
                match (waiting, end) {
                    (Some(ends), Some(at)) => {
                        let end = ends.remove(at);
                        if ends.is_empty() {
                            self.waiting.remove(&key);
                        }
                        let event = TrackEvent {
                            track_uuid: Some(track),
                            ..end.event
                        };
                        self.track_event_on(end.sequence, end.ts, event, out)?;
                    }
                    _ => self.open_async.entry(key).or_default().push(OpenAsync {
                        track,
                        ts,
                        index: self.index,
                    }),
                }
                Ok(())
            }
            Phase::AsyncEnd => {
                let key: AsyncKey = (pid, e.cat.clone(), e.id.clone(), e.name.clone());
                // The open begin this end closes, as `check` pairs them.
                let open = self.open_async.get_mut(&key);
                let begin = open.as_ref().and_then(|begins| {
                    spans::begin_for_end(begins, Some(ts), |begin| (Some(begin.ts), begin.index))
                });
                match (open, begin) {
                    (Some(begins), Some(at)) => {
                        let begin = begins.remove(at);
                        if begins.is_empty() {
                            self.open_async.remove(&key);
                        }
                        self.async_track(pid, begin.track, e, out)?;
                        let sequence = self.thread_sequence(pid, tid, out)?;
                        let end = with_async_id(ending(begin.track, true), e);
                        Ok(self.track_event_on(sequence, ts, end, out)?)
                    }
                    _ => {
                        let end = WaitingEnd {
                            ts,
                            index: self.index,
                            line: e.line,
                            sequence: self.thread_sequence(pid, tid, out)?,
                            event: with_async_id(ending(0, true), e),
                        };
                        self.waiting.entry(key).or_default().push(end);
                        Ok(())
                    }
                }
            }
            Phase::AsyncInstant => {
                let track = uuid_of(("async", pid, &e.cat, &e.id, &e.name));
                self.async_track(pid, track, e, out)?;
                let sequence = self.thread_sequence(pid, tid, out)?;
                let instant = with_async_id(named(TYPE_INSTANT, track), e);
                Ok(self.track_event_on(sequence, ts, instant, out)?)
            }
            Phase::FlowStart | Phase::FlowStep | Phase::FlowEnd => {
                let track = self.thread_track(pid, tid, None, out)?;
                let id = e.id.as_deref().unwrap_or("");
                let id = id.parse::<u64>().unwrap_or_else(|_| uuid_of(id));
                let mut te = named(TYPE_INSTANT, track);
                if *ph == Phase::FlowEnd {
                    te.terminating_flow_ids = vec![id];
                } else {
                    te.flow_ids = vec![id];
                }
                Ok(self.track_event(ts, te, out)?)
            }
            Phase::Counter => {
                let Value::Object(args) = &e.args else {
                    return Ok(());
                };
                let name = e.name.as_deref().unwrap_or("");
                let mut tracks = Vec::new();
                for (key, value) in args {
                    let Some(v) = value.as_f64() else { continue };
                    tracks.push((self.counter_track(pid, name, key, out)?, v));
                }
                let Some(((first, v), rest)) = tracks.split_first() else {
                    return Ok(());
                };
                let te = TrackEvent {
                    r#type: Some(TYPE_COUNTER),
                    track_uuid: Some(*first),
                    double_counter_value: Some(*v),
                    extra_double_counter_track_uuids: rest.iter().map(|(t, _)| *t).collect(),
                    extra_double_counter_values: rest.iter().map(|(_, v)| *v).collect(),
                    ..Default::default()
                };
                Ok(self.track_event(ts, te, out)?)
            }
            Phase::Other(_) => Ok(()),
        }
    }

    /// Describes the async track `track` of process `pid`, named after
    /// `e`: before each of its events, as the reader forgets an async track
    /// once its slice has ended.
    fn async_track(
        &mut self,
        pid: i64,
        track: u64,
        e: &Event,
        out: &mut impl Write,
    ) -> io::Result<()> {
        let parent = self.process_track(pid, out)?;
        let td = TrackDescriptor {
            uuid: Some(track),
            parent_uuid: Some(parent),
            name: e.name.clone(),
            ..Default::default()
        };
        self.describe(td, out)
    }

    /// The first `e` (in file order) that no `b` paired with, once the
    /// input is read.
    fn unpaired_end(&self) -> Option<Unfit> {
        let end = self
            .waiting
            .values()
            .flatten()
            .min_by_key(|end| end.index)?;
        let name = end.event.name.as_deref().unwrap_or("(unnamed)");
        Some(Unfit {
            line: end.line,
            detail: format!(
                "e \"{name}\" ends an async span that no b of its pid, category, id and \
                 name begins at or before its time"
            ),
        })
    }

    fn metadata(&mut self, e: &Event, pid: i64, tid: i64, out: &mut impl Write) -> io::Result<()> {
        let name = e.name.as_deref().unwrap_or("");
        let text = e.args.get("name").and_then(Value::as_str);
        match (name, text) {
            ("process_name", Some(process)) => {
                let uuid = uuid_of(("process", pid));
                self.described.insert(uuid);
                let td = TrackDescriptor {
                    uuid: Some(uuid),
                    process: Some(ProcessDescriptor {
                        pid: Some(pid as i32),
                        process_name: Some(process.to_string()),
                    }),
                    ..Default::default()
                };
                self.describe(td, out)
            }
            ("thread_name", Some(thread)) => {
                self.thread_track(pid, tid, Some(thread), out).map(|_| ())
            }
            _ => self.packet(
                TracePacket {
                    chrome_events: Some(ChromeEventBundle {
                        metadata: vec![ChromeMetadata {
                            name: Some(name.to_string()),
                            json_value: Some(e.args.to_string()),
                            ..Default::default()
                        }],
                    }),
                    trusted_pid: i32::try_from(pid).ok(),
                    ..Self::base()
                },
                out,
            ),
        }
    }
}

/// `te` with the debug annotation `async_id` carrying the id of the async
/// event `e` as its JSON text has it, which the reader gives back as the
/// event's id (a track's uuid cannot be the id: two spans may share one,
/// and an id need not be a number).
fn with_async_id(mut te: TrackEvent, e: &Event) -> TrackEvent {
    if let Some(id) = &e.id {
        te.debug_annotations.push(DebugAnnotation {
            name: Some(ASYNC_ID.to_string()),
            string_value: Some(id.clone()),
            ..Default::default()
        });
    }
    te
}

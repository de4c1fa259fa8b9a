//! The trace writer of a process: the Chrome JSON writer or the Perfetto
//! writer, as `log-format` chose. One enum rather than a trait object, so
//! the per-event call is a predictable branch the compiler can inline.

use std::io::Write;

use crate::decode::{DecodeContext, Misuse, Outcome, ThreadDecoder, TraceEvent};
use crate::error::Error;
use crate::event::RawEvent;
use crate::perfetto::PerfettoWriter;
use crate::site::Site;
use crate::writer::{ChromeJsonWriter, Sink};

/// Either trace writer, with the operations the runtime uses. One per
/// process, so the size of the larger variant costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum TraceWriter<W: Write> {
    /// `log-format=array|object`: Chrome Trace Format JSON (`.pfw`).
    Json(ChromeJsonWriter<W>),
    /// `log-format=perfetto`: Perfetto's protobuf trace (`.pftrace`).
    Perfetto(PerfettoWriter<W>),
}

macro_rules! each {
    ($self:expr, $w:ident => $body:expr) => {
        match $self {
            TraceWriter::Json($w) => $body,
            TraceWriter::Perfetto($w) => $body,
        }
    };
}

impl<W: Write> TraceWriter<W> {
    /// A metadata record `name` whose value is the JSON object `args_json`.
    pub fn metadata_args(&mut self, name: &[u8], tid: u32, args_json: &str) {
        each!(self, w => w.metadata_args(name, tid, args_json))
    }

    /// Writes what was formatted so far.
    pub fn write_pending(&mut self) {
        each!(self, w => w.write_pending())
    }

    /// True while events are still written.
    pub fn is_open(&self) -> bool {
        each!(self, w => w.output().is_open())
    }

    /// True once writing failed.
    pub fn has_failed(&self) -> bool {
        each!(self, w => w.output().has_failed())
    }

    /// Events that did not reach the destination.
    pub fn events_lost(&self) -> u64 {
        each!(self, w => w.output().events_lost())
    }

    /// Events written so far.
    pub fn events_written(&self) -> u64 {
        each!(self, w => w.output().events_written())
    }

    /// Bytes handed to the destination so far.
    pub fn bytes_written(&self) -> u64 {
        each!(self, w => w.output().bytes_written())
    }

    /// One counter sample (see [`Sink::counter`]).
    pub fn counter(&mut self, name: &[u8], tid: u32, ts_ns: u64, values: &[(&str, f64)]) {
        each!(self, w => w.counter(name, tid, ts_ns, values))
    }

    /// Decodes `records` of one thread with `decoder` into this writer (see
    /// [`ThreadDecoder::decode`]): one branch on the format per batch, so
    /// the decoder's loop is compiled for each writer rather than testing
    /// the format per event.
    ///
    /// # Safety
    /// As [`ThreadDecoder::decode`].
    pub unsafe fn decode(
        &mut self,
        decoder: &mut ThreadDecoder,
        records: &[RawEvent],
        cx: &mut DecodeContext,
    ) {
        // SAFETY: the caller's promise.
        match self {
            TraceWriter::Json(w) => unsafe { decoder.decode(records, cx, w) },
            TraceWriter::Perfetto(w) => unsafe { w.decode(decoder, records, cx) },
        }
    }

    /// The closing record of what tracing cost.
    pub fn runtime_cost(&mut self, pid_tid: u32, dropped: u64, buffer_bytes_peak: u64) {
        each!(self, w => w.runtime_cost(pid_tid, dropped, buffer_bytes_peak))
    }
}

impl<W: Write> Sink for TraceWriter<W> {
    fn process_name(&mut self, pid: u32, name: &str) {
        each!(self, w => w.process_name(pid, name))
    }

    fn thread_name(&mut self, tid: u32, name: &str) {
        each!(self, w => w.thread_name(tid, name))
    }

    #[inline(always)]
    fn event(&mut self, event: &TraceEvent<'_>) {
        each!(self, w => w.event(event))
    }

    #[inline(always)]
    fn slice_begin(&mut self, site: &Site, tid: u32, ts_ns: u64) {
        each!(self, w => w.slice_begin(site, tid, ts_ns))
    }

    #[inline(always)]
    fn slice_end(&mut self, site: &Site, tid: u32, ts_ns: u64) {
        each!(self, w => w.slice_end(site, tid, ts_ns))
    }

    fn ended(&mut self, event: &TraceEvent<'_>, outcome: Outcome) {
        each!(self, w => w.ended(event, outcome))
    }

    fn counter(&mut self, name: &[u8], tid: u32, ts_ns: u64, values: &[(&str, f64)]) {
        TraceWriter::counter(self, name, tid, ts_ns, values)
    }

    fn misuse(&mut self, what: Misuse, site: &Site) {
        each!(self, w => w.misuse(what, site))
    }

    fn finish(&mut self) -> Result<(), Error> {
        each!(self, w => w.finish())
    }
}

//! Reading trace text into a [`Trace`].
//!
//! The reader walks the outer layer of the document (the array of events, or
//! the object that holds `traceEvents`) by hand and hands each member to
//! `serde_json`. That keeps the line number of every event, and it lets a
//! trace whose writer was killed part-way through be recovered: when the
//! input ends inside the outer layer, every event read so far is kept and
//! [`Trace::truncated`] is set. Any other malformation is an error.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde_json::Value;

use crate::error::TraceError;
use crate::event::{json_kind, Event, Phase, RawEvent};

/// Which of the two trace layouts the text used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A bare JSON array of events.
    Array,
    /// An object with a `traceEvents` array (and `displayTimeUnit`,
    /// `otherData`, ...).
    Object,
    /// Perfetto's protobuf trace (`.pftrace`, `log-format=perfetto`), read
    /// by [`crate::pftrace`]; line numbers are packet numbers.
    Perfetto,
}

/// A trace read from text.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The events, in file order.
    pub events: Vec<Event>,
    /// Which layout the text used.
    pub layout: Layout,
    /// Whether the text ended before the trace was closed (for example, no
    /// final `]`). The events that were complete are all in `events`.
    pub truncated: bool,
    /// When truncated in the middle of a value (usually a half-written
    /// event), the line on which that incomplete value starts. It is not
    /// part of `events`.
    pub partial_line: Option<usize>,
    /// `displayTimeUnit` of the object layout.
    pub display_time_unit: Option<String>,
    /// `otherData` of the object layout.
    pub other_data: Option<Value>,
}

impl Trace {
    /// A trace of `events` read with [`stream_trace`], which returned `info`.
    pub fn new(info: TraceInfo, events: Vec<Event>) -> Trace {
        Trace {
            events,
            layout: info.layout,
            truncated: info.truncated,
            partial_line: info.partial_line,
            display_time_unit: info.display_time_unit,
            other_data: info.other_data,
        }
    }

    /// Events other than metadata (`M`) events.
    pub fn non_metadata(&self) -> impl Iterator<Item = &Event> + '_ {
        self.events.iter().filter(|event| !event.is_metadata())
    }

    /// The number of events other than metadata (`M`) events.
    pub fn event_count(&self) -> usize {
        self.non_metadata().count()
    }

    /// The number of distinct `(pid, tid)` pairs among non-metadata events.
    pub fn thread_count(&self) -> usize {
        self.non_metadata()
            .filter_map(Event::thread)
            .collect::<BTreeSet<_>>()
            .len()
    }

    /// The number of distinct `pid`s among non-metadata events.
    pub fn process_count(&self) -> usize {
        self.non_metadata()
            .filter_map(|event| event.pid)
            .collect::<BTreeSet<_>>()
            .len()
    }

    /// The distinct names of non-metadata events.
    pub fn names(&self) -> BTreeSet<&str> {
        self.non_metadata()
            .filter_map(|event| event.name.as_deref())
            .collect()
    }

    /// The distinct phases of non-metadata events.
    pub fn phases(&self) -> BTreeSet<&Phase> {
        self.non_metadata()
            .filter_map(|event| event.ph.as_ref())
            .collect()
    }
}

/// What a trace says about itself, apart from its events: everything
/// [`stream_trace`] learns besides the events it hands over.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceInfo {
    /// Which layout the text used.
    pub layout: Layout,
    /// Whether the text ended before the trace was closed (for example, no
    /// final `]`). Every complete event was handed over.
    pub truncated: bool,
    /// When truncated in the middle of a value (usually a half-written
    /// event), the line on which that incomplete value starts.
    pub partial_line: Option<usize>,
    /// `displayTimeUnit` of the object layout.
    pub display_time_unit: Option<String>,
    /// `otherData` of the object layout.
    pub other_data: Option<Value>,
}

impl TraceInfo {
    fn new(layout: Layout) -> TraceInfo {
        TraceInfo {
            layout,
            truncated: false,
            partial_line: None,
            display_time_unit: None,
            other_data: None,
        }
    }
}

/// Reads and parses the trace file at `path` into memory.
///
/// Errors name the file. A file whose last multi-byte character was cut in
/// half is treated like any other truncated trace. To read a large file
/// without holding its events, use [`stream_trace`].
pub fn read_trace(path: impl AsRef<Path>) -> Result<Trace, TraceError> {
    let mut events = Vec::new();
    let info = stream_trace(path, |event| events.push(event))?;
    Ok(Trace::new(info, events))
}

/// Parses trace text in either layout, recovering a truncated trace.
pub fn parse_trace(text: &str) -> Result<Trace, TraceError> {
    parse_bytes(text.as_bytes())
}

fn parse_bytes(bytes: &[u8]) -> Result<Trace, TraceError> {
    let mut events = Vec::new();
    let info = stream_reader(bytes, |event| events.push(event))?;
    Ok(Trace::new(info, events))
}

/// Reads the trace file at `path` event by event, handing each event to
/// `sink` in file order, and returns what the trace says about itself.
///
/// Memory does not grow with the file: the reader holds one buffer of
/// input (1 MiB, or the size of the largest event) and the event being
/// parsed. Errors name the file; events handed over before an error stay
/// handed over.
pub fn stream_trace(
    path: impl AsRef<Path>,
    mut sink: impl FnMut(Event),
) -> Result<TraceInfo, TraceError> {
    stream_file(path.as_ref(), false, &mut |event, _| {
        sink(std::mem::take(event))
    })
}

/// Like [`stream_trace`], handing each event over in one [`Event`] that
/// the reader fills again for the next: its strings keep their
/// allocations from one event to the next, which saves reading a large
/// trace an allocation per string. A sink that keeps a string takes it
/// (`event.name.take()`).
pub(crate) fn stream_trace_in_place(
    path: impl AsRef<Path>,
    mut sink: impl FnMut(&mut Event),
) -> Result<TraceInfo, TraceError> {
    stream_file(path.as_ref(), false, &mut |event, _| sink(event))
}

/// Like [`stream_trace`], also handing over each event's JSON text exactly
/// as the file has it (one object, without the separating comma), for
/// tools that rewrite a few fields and copy the rest.
pub fn stream_trace_text(
    path: impl AsRef<Path>,
    mut sink: impl FnMut(Event, &str),
) -> Result<TraceInfo, TraceError> {
    stream_file(path.as_ref(), true, &mut |event, text| {
        sink(std::mem::take(event), text)
    })
}

/// [`stream_trace_text`]; the text handed over is empty unless `text`.
fn stream_file(
    path: &Path,
    text: bool,
    sink: &mut dyn FnMut(&mut Event, &str),
) -> Result<TraceInfo, TraceError> {
    let io_error = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(io_error)?;
    // The first bytes tell a Perfetto trace from JSON text.
    let mut head = Vec::with_capacity(64);
    (&mut file)
        .take(64)
        .read_to_end(&mut head)
        .map_err(io_error)?;
    let input = std::io::Cursor::new(head).chain(file);
    if crate::pftrace::is_pftrace(path, input.get_ref().0.get_ref()) {
        let read =
            crate::pftrace::stream(input, text, sink).map_err(|error| error.in_file(path))?;
        let mut info = TraceInfo::new(Layout::Perfetto);
        info.truncated = read.truncated;
        info.partial_line = read.partial_packet;
        return Ok(info);
    }
    let mut parser = Parser::new(input);
    parser.text = text;
    parser.trace(sink).map_err(|error| error.in_file(path))
}

/// Like [`stream_trace`], for trace text from any reader. Errors name no
/// file (I/O errors name an empty path).
pub fn stream_reader(
    input: impl Read,
    mut sink: impl FnMut(Event),
) -> Result<TraceInfo, TraceError> {
    Parser::new(input).trace(&mut |event, _| sink(std::mem::take(event)))
}

/// `error`, from parsing a value at the start of `text`, or the error that
/// says the value is incomplete when it is. When skipping over a raw value,
/// `serde_json` reports some numbers cut short by the end of the input
/// (`1e`, `12.`) as invalid rather than incomplete; parsing as a `Value`
/// tells the two apart reliably.
fn eof_or(error: serde_json::Error, text: &[u8]) -> serde_json::Error {
    if error.is_eof() {
        return error;
    }
    match serde_json::Deserializer::from_slice(text)
        .into_iter::<Value>()
        .next()
    {
        Some(Err(again)) => again,
        _ => error,
    }
}

/// The number of characters in UTF-8 `bytes`.
fn utf8_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b & 0xc0 != 0x80).count()
}

/// Why parsing stopped early.
enum Stop {
    /// The input ended inside the trace.
    Truncated { partial_line: Option<usize> },
    /// The input is malformed.
    Failed(TraceError),
}

const TOP_LEVEL: &str = "`[` (an array of events) or `{` (an object with \"traceEvents\")";

/// How much input is read at a time.
const CHUNK: usize = 1 << 20;

/// A remembered cursor position (offsets from the start of the input).
#[derive(Debug, Clone, Copy)]
struct Mark {
    pos: usize,
    line: usize,
    line_start: usize,
}

/// The reader walks the outer layer of the document (the array of events,
/// or the object that holds `traceEvents`) by hand over a buffer it refills
/// from the input, and hands each member to `serde_json`. Offsets are from
/// the start of the input; `buf` holds the input from `buf_start` on.
struct Parser<R> {
    input: R,
    /// How much to read at a time, at least.
    chunk: usize,
    buf: Vec<u8>,
    buf_start: usize,
    /// The end of the input that may be parsed: valid UTF-8, without the
    /// zero bytes the buffer ends with (some file systems leave zero bytes
    /// after the data of a file whose writer died).
    avail: usize,
    /// The end of the input checked to be valid UTF-8.
    checked: usize,
    /// The input holds invalid UTF-8 at `checked`.
    invalid_utf8: bool,
    /// The input has no more bytes.
    input_done: bool,
    pos: usize,
    line: usize,
    line_start: usize,
    /// Characters of the cursor's line that are no longer in `buf`.
    line_chars_dropped: usize,
    /// Whether the sink is handed each event's text (checking that it is
    /// UTF-8 again costs a few percent of reading it); otherwise it gets
    /// `""`.
    text: bool,
    /// The event handed to the sink, filled again for each event.
    event: Event,
}

impl<R: Read> Parser<R> {
    fn new(input: R) -> Parser<R> {
        Parser::with_chunk(input, CHUNK)
    }

    fn with_chunk(input: R, chunk: usize) -> Parser<R> {
        Parser {
            input,
            chunk,
            buf: Vec::new(),
            buf_start: 0,
            avail: 0,
            checked: 0,
            invalid_utf8: false,
            input_done: false,
            pos: 0,
            line: 1,
            line_start: 0,
            line_chars_dropped: 0,
            text: true,
            event: Event::default(),
        }
    }

    fn trace(mut self, sink: &mut dyn FnMut(&mut Event, &str)) -> Result<TraceInfo, TraceError> {
        let outcome = self.layout(sink);
        // Reaching invalid UTF-8 explains whatever else went wrong there.
        let at_invalid = self.invalid_utf8 && self.pos >= self.avail;
        let (mut info, outcome) = match outcome {
            Err(Stop::Failed(_)) | Err(Stop::Truncated { .. }) if at_invalid => {
                return Err(self.utf8_error())
            }
            Ok((info, outcome)) => (info, outcome),
            Err(Stop::Failed(error)) => return Err(error),
            Err(Stop::Truncated { .. }) => unreachable!("an empty input is an error"),
        };
        match outcome {
            Ok(()) => {
                self.skip_whitespace()
                    .map_err(|stop| self.stop_error(stop))?;
                if self.invalid_utf8 || self.cut_character() {
                    return Err(self.utf8_error());
                }
                if self.peek().map_err(|stop| self.stop_error(stop))?.is_some() {
                    return Err(self.json_error(format!(
                        "expected nothing after the end of the trace, found {}",
                        self.found()
                    )));
                }
            }
            Err(Stop::Truncated { partial_line }) => {
                if self.invalid_utf8 {
                    return Err(self.utf8_error());
                }
                info.truncated = true;
                info.partial_line = partial_line;
            }
            Err(Stop::Failed(error)) => {
                return Err(if at_invalid { self.utf8_error() } else { error })
            }
        }
        Ok(info)
    }

    fn stop_error(&self, stop: Stop) -> TraceError {
        match stop {
            Stop::Failed(error) => error,
            Stop::Truncated { .. } => self.utf8_error(),
        }
    }

    /// Reads the top level: which layout, then its events. The outer
    /// `Result` is for an input that is no trace at all.
    #[allow(clippy::type_complexity)]
    fn layout(
        &mut self,
        sink: &mut dyn FnMut(&mut Event, &str),
    ) -> Result<(TraceInfo, Result<(), Stop>), Stop> {
        self.skip_bom()?;
        self.skip_whitespace()?;
        match self.peek()? {
            Some(b'[') => {
                let info = TraceInfo::new(Layout::Array);
                let outcome = self.events(sink);
                Ok((info, outcome))
            }
            Some(b'{') => {
                let mut info = TraceInfo::new(Layout::Object);
                let outcome = self.object(&mut info, sink);
                Ok((info, outcome))
            }
            None if self.checked > self.avail => Err(Stop::Failed(self.layout_error(format!(
                "the input holds only zero bytes (its writer may have died before writing any \
                 data); expected {TOP_LEVEL}"
            )))),
            None => Err(Stop::Failed(
                self.layout_error(format!("the input is empty; expected {TOP_LEVEL}")),
            )),
            Some(_) => Err(Stop::Failed(
                self.layout_error(format!("expected {TOP_LEVEL}, found {}", self.found())),
            )),
        }
    }

    fn skip_bom(&mut self) -> Result<(), Stop> {
        while self.buf.len() < 3 && self.fill()? {}
        if self.buf.starts_with("\u{feff}".as_bytes()) {
            self.pos = 3;
            self.line_start = 3;
        }
        Ok(())
    }

    /// Parses an array of events; the cursor is on `[`.
    fn events(&mut self, sink: &mut dyn FnMut(&mut Event, &str)) -> Result<(), Stop> {
        self.bump();
        self.skip_whitespace()?;
        match self.peek()? {
            None => return Err(Stop::Truncated { partial_line: None }),
            Some(b']') => {
                self.bump();
                return Ok(());
            }
            Some(_) => {}
        }
        loop {
            let start = self.mark();
            if self.peek()? != Some(b'{') {
                let other = self.value()?;
                return Err(Stop::Failed(self.layout_error_at(
                    start,
                    format!("expected an event object, found {}", json_kind(&other)),
                )));
            }
            let line = start.line;
            let rest = &self.buf[self.pos - self.buf_start..self.avail - self.buf_start];
            let plain = crate::event::plain::parse_into(rest, line, &mut self.event);
            if let Some(plain) = plain {
                // The reader counted the event's line breaks.
                if plain.newlines > 0 {
                    self.line += plain.newlines;
                    self.line_start = self.pos + plain.line_start;
                    self.line_chars_dropped = 0;
                }
                self.pos += plain.len;
            } else {
                self.event = self.serde_event(line)?;
            }
            // The event's text is still buffered: input is only dropped
            // before the cursor, which stayed at its start while parsing.
            let text = match self.text {
                true => &self.buf[start.pos - self.buf_start..self.pos - self.buf_start],
                false => &[][..],
            };
            sink(
                &mut self.event,
                std::str::from_utf8(text).unwrap_or_default(),
            );
            if !self.another_item(b']', "event")? {
                return Ok(());
            }
        }
    }

    /// Parses the event at the cursor with `serde_json`.
    fn serde_event(&mut self, line: usize) -> Result<Event, Stop> {
        self.parse_one(|bytes| {
            let mut stream =
                serde_json::Deserializer::from_slice(bytes).into_iter::<RawEvent<'_>>();
            let parsed = stream.next()?;
            let end = stream.byte_offset();
            Some(parsed.and_then(|raw| Ok((raw.into_event(line)?, end))))
        })
    }

    /// Parses the object layout; the cursor is on `{`.
    fn object(
        &mut self,
        info: &mut TraceInfo,
        sink: &mut dyn FnMut(&mut Event, &str),
    ) -> Result<(), Stop> {
        let start = self.mark();
        let mut has_events = false;
        self.bump();
        self.skip_whitespace()?;
        match self.peek()? {
            None => return Err(Stop::Truncated { partial_line: None }),
            Some(b'}') => self.bump(),
            Some(_) => loop {
                if self.peek()? != Some(b'"') {
                    return Err(Stop::Failed(self.json_error(format!(
                        "expected a member name in double quotes, found {}",
                        self.found()
                    ))));
                }
                let key = match self.value()? {
                    Value::String(key) => key,
                    other => {
                        return Err(Stop::Failed(self.json_error(format!(
                            "expected a member name, found {}",
                            json_kind(&other)
                        ))))
                    }
                };
                self.skip_whitespace()?;
                match self.peek()? {
                    None => return Err(Stop::Truncated { partial_line: None }),
                    Some(b':') => self.bump(),
                    Some(_) => {
                        return Err(Stop::Failed(self.json_error(format!(
                            "expected `:` after member name \"{key}\", found {}",
                            self.found()
                        ))))
                    }
                }
                self.skip_whitespace()?;
                let value_start = self.mark();
                match (key.as_str(), self.peek()?) {
                    (_, None) => return Err(Stop::Truncated { partial_line: None }),
                    ("traceEvents", _) if has_events => {
                        return Err(Stop::Failed(self.layout_error_at(
                            value_start,
                            "\"traceEvents\" appears more than once".to_string(),
                        )))
                    }
                    ("traceEvents", Some(b'[')) => {
                        has_events = true;
                        self.events(sink)?;
                    }
                    ("traceEvents", Some(_)) => {
                        let value = self.value()?;
                        return Err(Stop::Failed(self.layout_error_at(
                            value_start,
                            format!(
                                "\"traceEvents\" must be an array of events, found {}",
                                json_kind(&value)
                            ),
                        )));
                    }
                    ("displayTimeUnit", Some(_)) => match self.value()? {
                        Value::String(unit) => info.display_time_unit = Some(unit),
                        other => {
                            return Err(Stop::Failed(self.layout_error_at(
                                value_start,
                                format!(
                                    "\"displayTimeUnit\" must be a string, found {}",
                                    json_kind(&other)
                                ),
                            )))
                        }
                    },
                    ("otherData", Some(_)) => info.other_data = Some(self.value()?),
                    (_, Some(_)) => {
                        self.value()?;
                    }
                }
                if !self.another_item(b'}', "member")? {
                    break;
                }
            },
        }
        if has_events {
            Ok(())
        } else {
            Err(Stop::Failed(self.layout_error_at(
                start,
                "the object has no \"traceEvents\" member".to_string(),
            )))
        }
    }

    /// Parses one JSON value and moves past it.
    fn value(&mut self) -> Result<Value, Stop> {
        self.parse_one(|bytes| {
            let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<Value>();
            let parsed = stream.next()?;
            let end = stream.byte_offset();
            Some(parsed.map(|value| (value, end)))
        })
    }

    /// Parses one value at the cursor with `parse`, which returns it and
    /// the number of bytes it took (`None` when there is nothing but
    /// whitespace), and moves past it. Reads more input while the value
    /// is incomplete.
    fn parse_one<T>(
        &mut self,
        parse: impl Fn(&[u8]) -> Option<Result<(T, usize), serde_json::Error>>,
    ) -> Result<T, Stop> {
        let start_line = self.line;
        loop {
            let rest = &self.buf[self.pos - self.buf_start..self.avail - self.buf_start];
            let outcome = parse(rest).map(|parsed| parsed.map_err(|error| eof_or(error, rest)));
            let complete = match &outcome {
                // A number that reaches the end of the buffer may go on.
                Some(Ok((_, end))) => *end < rest.len() || self.input_done,
                Some(Err(error)) => !error.is_eof(),
                None => false,
            };
            if !complete && self.fill()? {
                continue;
            }
            return match outcome {
                Some(Ok((value, end))) => {
                    self.advance_to(self.pos + end);
                    Ok(value)
                }
                Some(Err(error)) if error.is_eof() => Err(Stop::Truncated {
                    partial_line: Some(start_line),
                }),
                Some(Err(error)) => Err(Stop::Failed(self.serde_error(&error))),
                None => Err(Stop::Truncated { partial_line: None }),
            };
        }
    }

    /// Reads more input; false when there is no more to parse.
    fn fill(&mut self) -> Result<bool, Stop> {
        loop {
            if self.input_done || self.invalid_utf8 {
                return Ok(false);
            }
            // Drop what the cursor has passed once it is most of the buffer.
            let passed = self.pos - self.buf_start;
            if passed > 0 && passed >= self.buf.len() / 2 {
                if self.line_start < self.pos {
                    let from = self.line_start.max(self.buf_start) - self.buf_start;
                    self.line_chars_dropped += utf8_chars(&self.buf[from..passed]);
                }
                self.buf.drain(..passed);
                self.buf_start = self.pos;
            }
            // Read at least as much as is buffered, so that a value much
            // larger than a chunk is parsed a bounded number of times.
            let want = self.chunk.max(self.buf.len());
            let read = match (&mut self.input)
                .take(want as u64)
                .read_to_end(&mut self.buf)
            {
                Ok(read) => read,
                Err(source) => {
                    return Err(Stop::Failed(TraceError::Io {
                        path: Default::default(),
                        source,
                    }))
                }
            };
            if read == 0 {
                self.input_done = true;
                return Ok(false);
            }
            let unchecked = &self.buf[self.checked - self.buf_start..];
            match std::str::from_utf8(unchecked) {
                Ok(_) => self.checked += unchecked.len(),
                Err(error) => {
                    self.checked += error.valid_up_to();
                    // An incomplete character may be completed by the next
                    // read.
                    self.invalid_utf8 = error.error_len().is_some();
                }
            }
            let checked = &self.buf[..self.checked - self.buf_start];
            let zeros = checked.iter().rev().take_while(|&&b| b == 0).count();
            let avail = self.checked - zeros;
            if zeros > 1 && self.checked == self.buf_start + self.buf.len() {
                // A run of zero bytes: only its first is kept, where an
                // error is reported should anything but zero bytes follow
                // (a file of zero bytes, or `/dev/zero`, is read in bounded
                // memory).
                self.buf.truncate(avail + 1 - self.buf_start);
                self.checked = avail + 1;
            }
            let grew = avail > self.avail;
            self.avail = self.avail.max(avail);
            if grew {
                return Ok(true);
            }
            // Zero bytes or part of a character: read on.
        }
    }

    /// Whether the input ends in part of a character.
    fn cut_character(&self) -> bool {
        self.input_done && self.checked < self.buf_start + self.buf.len()
    }

    /// After an item of an array or object: consumes `,` (true: another
    /// item follows) or the closing `close` (false). The end of the input is
    /// truncation; a `,` right before `close` or any other byte is an error.
    fn another_item(&mut self, close: u8, item: &str) -> Result<bool, Stop> {
        let close_char = char::from(close);
        let article = if item.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        self.skip_whitespace()?;
        match self.peek()? {
            None => Err(Stop::Truncated { partial_line: None }),
            Some(b',') => {
                self.bump();
                self.skip_whitespace()?;
                match self.peek()? {
                    None => Err(Stop::Truncated { partial_line: None }),
                    Some(c) if c == close => Err(Stop::Failed(self.json_error(format!(
                        "expected another {item} after `,`, found `{close_char}`"
                    )))),
                    Some(_) => Ok(true),
                }
            }
            Some(c) if c == close => {
                self.bump();
                Ok(false)
            }
            Some(_) => Err(Stop::Failed(self.json_error(format!(
                "expected `,` or `{close_char}` after {article} {item}, found {}",
                self.found()
            )))),
        }
    }

    /// The byte at the cursor, reading more input if needed; `None` at the
    /// end of what can be parsed.
    fn peek(&mut self) -> Result<Option<u8>, Stop> {
        while self.pos >= self.avail {
            if !self.fill()? {
                return Ok(None);
            }
        }
        Ok(Some(self.buf[self.pos - self.buf_start]))
    }

    /// Moves past one ASCII byte.
    fn bump(&mut self) {
        self.advance_to(self.pos + 1);
    }

    fn skip_whitespace(&mut self) -> Result<(), Stop> {
        while let Some(byte) = self.peek()? {
            if !matches!(byte, b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            let rest = &self.buf[self.pos - self.buf_start..self.avail - self.buf_start];
            let skipped = rest
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                .count();
            self.advance_to(self.pos + skipped);
        }
        Ok(())
    }

    fn advance_to(&mut self, end: usize) {
        let end = end.min(self.avail);
        let from = self.pos - self.buf_start;
        let passed = &self.buf[from..end - self.buf_start];
        let newlines = passed.iter().filter(|&&b| b == b'\n').count();
        if newlines > 0 {
            self.line += newlines;
            let last = passed.iter().rposition(|&b| b == b'\n').unwrap_or(0);
            self.line_start = self.pos + last + 1;
            self.line_chars_dropped = 0;
        }
        self.pos = end;
    }

    /// The position of the cursor, to report an error about what follows.
    fn mark(&self) -> Mark {
        Mark {
            pos: self.pos,
            line: self.line,
            line_start: self.line_start,
        }
    }

    /// The 1-based column of a position, in characters. Computed only for
    /// errors: counting is linear in the length of the line, and a trace
    /// may be one very long line.
    fn column_of(&self, mark: Mark) -> usize {
        let from = mark.line_start.max(self.buf_start) - self.buf_start;
        let to = mark.pos.max(self.buf_start) - self.buf_start;
        let dropped = if mark.line_start < self.buf_start {
            self.line_chars_dropped
        } else {
            0
        };
        dropped + self.buf.get(from..to).map_or(0, utf8_chars) + 1
    }

    /// The 1-based column of the cursor, in characters.
    fn column(&self) -> usize {
        self.column_of(self.mark())
    }

    /// Describes what is at the cursor, for messages.
    fn found(&self) -> String {
        let rest = &self.buf[self.pos - self.buf_start..self.avail - self.buf_start];
        let head = &rest[..rest.len().min(4)];
        let head = match std::str::from_utf8(head) {
            Ok(text) => text,
            Err(error) => std::str::from_utf8(&head[..error.valid_up_to()]).unwrap_or_default(),
        };
        match head.chars().next() {
            None => "the end of the input".to_string(),
            Some(c) if c.is_control() => format!("character {:?}", c),
            Some(c) => format!("`{c}`"),
        }
    }

    /// The input is not UTF-8 at `checked`: positioned there.
    fn utf8_error(&self) -> TraceError {
        let (mut line, mut line_start) = (self.line, self.line_start);
        let from = self.pos.max(self.buf_start) - self.buf_start;
        let to = self.checked - self.buf_start;
        for (offset, byte) in self.buf[from..to].iter().enumerate() {
            if *byte == b'\n' {
                line += 1;
                line_start = from + self.buf_start + offset + 1;
            }
        }
        TraceError::Json {
            path: None,
            line,
            column: self.column_of(Mark {
                pos: self.checked,
                line,
                line_start,
            }),
            detail: "the text is not valid UTF-8".to_string(),
        }
    }

    fn json_error(&self, detail: String) -> TraceError {
        TraceError::Json {
            path: None,
            line: self.line,
            column: self.column(),
            detail,
        }
    }

    fn layout_error(&self, detail: String) -> TraceError {
        self.layout_error_at(self.mark(), detail)
    }

    fn layout_error_at(&self, mark: Mark, detail: String) -> TraceError {
        TraceError::Layout {
            path: None,
            line: mark.line,
            column: self.column_of(mark),
            detail,
        }
    }

    /// Converts an error from `serde_json`, whose position is relative to
    /// the cursor, into one positioned in the whole text.
    fn serde_error(&self, error: &serde_json::Error) -> TraceError {
        let (line, column) = if error.line() <= 1 {
            (self.line, self.column() + error.column().saturating_sub(1))
        } else {
            (self.line + error.line() - 1, error.column())
        };
        let message = error.to_string();
        let suffix = format!(" at line {} column {}", error.line(), error.column());
        let detail = message
            .strip_suffix(&suffix)
            .unwrap_or(&message)
            .to_string();
        TraceError::Json {
            path: None,
            line,
            column: column.max(1),
            detail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARRAY: &str = r#"[
{"name":"main","cat":"c","ph":"B","pid":1,"tid":1,"ts":1.5},
{"name":"main","cat":"c","ph":"E","pid":1,"tid":1,"ts":9.25}
]
"#;

    fn json_error(text: &str) -> (usize, usize, String) {
        match parse_trace(text) {
            Err(TraceError::Json {
                line,
                column,
                detail,
                ..
            }) => (line, column, detail),
            other => panic!("expected a JSON error, got {other:?}"),
        }
    }

    fn layout_error(text: &str) -> String {
        match parse_trace(text) {
            Err(TraceError::Layout { detail, .. }) => detail,
            other => panic!("expected a layout error, got {other:?}"),
        }
    }

    #[test]
    fn array_form_is_read_with_line_numbers() {
        let trace = parse_trace(ARRAY).expect("valid trace");
        assert_eq!(trace.layout, Layout::Array);
        assert!(!trace.truncated);
        assert_eq!(trace.events.len(), 2);
        assert_eq!(trace.events[0].line, 2);
        assert_eq!(trace.events[1].line, 3);
        assert_eq!(trace.events[1].ts, Some(9.25));
    }

    #[test]
    fn object_form_is_read() {
        let text = r#"{"displayTimeUnit":"us","otherData":{"host":"node1"},
"traceEvents":[
{"name":"a","ph":"X","pid":1,"tid":1,"ts":1,"dur":2}
]}"#;
        let trace = parse_trace(text).expect("valid trace");
        assert_eq!(trace.layout, Layout::Object);
        assert_eq!(trace.display_time_unit.as_deref(), Some("us"));
        assert_eq!(trace.other_data, Some(serde_json::json!({"host": "node1"})));
        assert_eq!(trace.events.len(), 1);
        assert_eq!(trace.events[0].line, 3);
        assert!(!trace.truncated);
    }

    #[test]
    fn object_form_may_put_trace_events_first() {
        let text =
            r#"{"traceEvents":[{"name":"a","ph":"i","pid":1,"tid":1,"ts":1}],"otherData":{}}"#;
        let trace = parse_trace(text).expect("valid trace");
        assert_eq!(trace.events.len(), 1);
        assert_eq!(trace.other_data, Some(serde_json::json!({})));
    }

    #[test]
    fn array_without_closing_bracket_is_recovered_as_truncated() {
        let text = "[\n{\"name\":\"a\",\"ph\":\"B\",\"pid\":1,\"tid\":1,\"ts\":1},\n{\"name\":\"a\",\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":2},\n";
        let trace = parse_trace(text).expect("recovered");
        assert!(trace.truncated);
        assert_eq!(trace.partial_line, None);
        assert_eq!(trace.events.len(), 2);
    }

    #[test]
    fn partial_last_line_is_dropped_and_its_line_reported() {
        let text = "[\n{\"name\":\"a\",\"ph\":\"B\",\"pid\":1,\"tid\":1,\"ts\":1},\n{\"name\":\"a\",\"ph\":\"E\",\"pi";
        let trace = parse_trace(text).expect("recovered");
        assert!(trace.truncated);
        assert_eq!(trace.partial_line, Some(3));
        assert_eq!(trace.events.len(), 1);
        assert_eq!(trace.events[0].name.as_deref(), Some("a"));
    }

    #[test]
    fn every_prefix_of_a_valid_trace_is_recovered() {
        let text = r#"{"displayTimeUnit":"us","otherData":{"v":[1,2.5e3,true,null,"x\"y"]},"traceEvents":[
{"name":"ä","ph":"X","pid":1,"tid":1,"ts":-1.5e-3,"dur":2E+1,"args":{"a":[-0,1e5,false,"\u00e9\n"],"b":null}},
{"name":"b","ph":"i","pid":1,"tid":1,"ts":3}
]}"#;
        let full = parse_trace(text).expect("valid trace");
        for end in 1..text.len() {
            let Some(prefix) = text.get(..end) else {
                continue;
            };
            let trace = parse_trace(prefix)
                .unwrap_or_else(|error| panic!("prefix of {end} bytes: {error}"));
            assert!(trace.truncated, "prefix of {end} bytes");
            assert!(
                full.events.starts_with(&trace.events),
                "prefix of {end} bytes"
            );
        }
    }

    #[test]
    fn input_read_in_small_chunks_gives_the_same_trace_and_errors() {
        let texts: [&[u8]; 8] = [
            ARRAY.as_bytes(),
            "\u{feff}[\n{\"name\":\"ä\",\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":12.5}\n]\0\0"
                .as_bytes(),
            b"{\"otherData\":{\"n\":12345},\"traceEvents\":[{\"ph\":\"i\",\"ts\":1}],\"x\":12}",
            b"[\n{\"ph\":\"i\"},\n{\"ph\":\"i\",\"ts\":1.5",
            b"[\n{\"ph\":\"i\"},\n  {\"ph\" \"i\"}\n]",
            b"[\n{\"name\":\"\xff\"}]",
            b"[\n{\"name\":\"a\",\"ph\":\"i\"},\n{\"name\":\"\xc3",
            b"[] x",
        ];
        for text in texts {
            let whole = parse_bytes(text).map_err(|error| error.to_string());
            for chunk in 1..=7 {
                let mut events = Vec::new();
                let read = Parser::with_chunk(text, chunk)
                    .trace(&mut |event, _| events.push(std::mem::take(event)))
                    .map(|info| Trace::new(info, events))
                    .map_err(|error| error.to_string());
                assert_eq!(
                    read,
                    whole,
                    "{} in chunks of {chunk}",
                    String::from_utf8_lossy(text)
                );
            }
        }
    }

    #[test]
    fn trailing_zero_bytes_are_ignored() {
        let text = format!("{ARRAY}\0\0\0");
        let trace = parse_trace(&text).expect("valid trace");
        assert!(!trace.truncated);
    }

    /// Zero bytes without end, as `/dev/zero` or a long zero tail gives
    /// them: the buffer keeps one of them, whatever the reads.
    #[test]
    fn a_run_of_zero_bytes_is_read_in_bounded_memory() {
        let input = ARRAY.as_bytes().chain(std::io::repeat(0).take(64 << 20));
        let mut parser = Parser::with_chunk(input, 4096);
        let mut largest = 0;
        while let Ok(true) = parser.fill() {
            largest = largest.max(parser.buf.len());
        }
        assert!(parser.input_done, "the zero bytes were read to their end");
        largest = largest.max(parser.buf.len());
        assert!(
            largest <= 2 * 4096 + ARRAY.len(),
            "{largest} bytes buffered"
        );
        assert_eq!(parser.avail, ARRAY.len());
    }

    #[test]
    fn data_after_zero_bytes_is_an_error_at_the_first_zero() {
        let text = format!("{}\0\0\0\0x", &ARRAY[..ARRAY.len() - 3]);
        let (line, column, detail) = json_error(&text);
        assert_eq!((line, column), (3, 61), "{detail}");
        assert!(detail.contains("found character '\\0'"), "{detail}");
    }

    #[test]
    fn a_file_of_zero_bytes_says_so() {
        assert!(layout_error("\0\0\0\0").contains("only zero bytes"));
    }

    #[test]
    fn cut_multibyte_character_counts_as_truncation() {
        let mut bytes =
            b"[\n{\"name\":\"a\",\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":1},\n{\"name\":\""
                .to_vec();
        bytes.push(0xc3);
        let trace = parse_bytes(&bytes).expect("recovered");
        assert!(trace.truncated);
        assert_eq!(trace.events.len(), 1);
    }

    #[test]
    fn invalid_utf8_in_the_middle_is_an_error() {
        let bytes = b"[\n{\"name\":\"\xff\"}]";
        match parse_bytes(bytes) {
            Err(TraceError::Json { line, detail, .. }) => {
                assert_eq!(line, 2);
                assert!(detail.contains("UTF-8"));
            }
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn missing_comma_names_line_and_expectation() {
        let text = "[\n{\"ph\":\"i\"}\n{\"ph\":\"i\"}\n]";
        let (line, column, detail) = json_error(text);
        assert_eq!((line, column), (3, 1));
        assert_eq!(detail, "expected `,` or `]` after an event, found `{`");
    }

    #[test]
    fn syntax_error_inside_an_event_is_positioned_in_the_file() {
        let text = "[\n{\"ph\":\"i\"},\n  {\"ph\" \"i\"}\n]";
        let (line, column, detail) = json_error(text);
        assert_eq!(line, 3);
        assert_eq!(column, 9);
        assert_eq!(detail, "expected `:`");
    }

    #[test]
    fn trailing_comma_before_bracket_is_an_error() {
        let (line, _, detail) = json_error("[\n{\"ph\":\"i\"},\n]");
        assert_eq!(line, 3);
        assert!(detail.contains("expected another event"));
    }

    #[test]
    fn content_after_the_trace_is_an_error() {
        let (_, _, detail) = json_error("[] x");
        assert_eq!(
            detail,
            "expected nothing after the end of the trace, found `x`"
        );
    }

    #[test]
    fn empty_input_is_an_error() {
        assert!(layout_error("  \n").contains("the input is empty"));
    }

    #[test]
    fn other_top_level_values_are_rejected() {
        assert!(layout_error("42").starts_with("expected `[`"));
    }

    #[test]
    fn non_object_events_are_rejected() {
        assert_eq!(
            layout_error("[{\"ph\":\"i\"}, 3]"),
            "expected an event object, found a number"
        );
    }

    #[test]
    fn object_without_trace_events_is_rejected() {
        assert_eq!(
            layout_error(r#"{"otherData":{}}"#),
            "the object has no \"traceEvents\" member"
        );
    }

    #[test]
    fn trace_events_must_be_an_array() {
        assert_eq!(
            layout_error(r#"{"traceEvents":{}}"#),
            "\"traceEvents\" must be an array of events, found an object"
        );
    }

    #[test]
    fn errors_from_files_name_the_file() {
        let dir = std::env::temp_dir().join(format!("perfflow-trace-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("bad.pfw");
        std::fs::write(&path, "[\n{\"ph\":\"i\"} x\n]").expect("write");
        let error = read_trace(&path).expect_err("invalid");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(error.path(), Some(path.as_path()));
        assert_eq!(error.line(), Some(2));
        let message = error.to_string();
        assert!(
            message.starts_with(&path.display().to_string()),
            "{message}"
        );
        assert!(message.contains("line 2, column 12"), "{message}");
    }

    #[test]
    fn missing_files_are_reported_with_their_path() {
        let error = read_trace("/nonexistent/perfflow.array.pfw").expect_err("missing");
        assert!(matches!(error, TraceError::Io { .. }));
        assert!(error
            .to_string()
            .starts_with("cannot read /nonexistent/perfflow.array.pfw: "));
    }

    #[test]
    fn counts_exclude_metadata() {
        let text = r#"[
{"name":"thread_name","ph":"M","pid":1,"tid":9,"args":{"name":"w"}},
{"name":"a","ph":"i","pid":1,"tid":1,"ts":1},
{"name":"b","ph":"i","pid":2,"tid":2,"ts":1}
]"#;
        let trace = parse_trace(text).expect("valid trace");
        assert_eq!(trace.event_count(), 2);
        assert_eq!(trace.thread_count(), 2);
        assert_eq!(trace.process_count(), 2);
        assert_eq!(trace.names().into_iter().collect::<Vec<_>>(), ["a", "b"]);
    }
}

//! Reading trace text into a [`Trace`].
//!
//! The reader walks the outer layer of the document (the array of events, or
//! the object that holds `traceEvents`) by hand and hands each member to
//! `serde_json`. That keeps the line number of every event, and it lets a
//! trace whose writer was killed part-way through be recovered: when the
//! input ends inside the outer layer, every event read so far is kept and
//! [`Trace::truncated`] is set. Any other malformation is an error.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::TraceError;
use crate::event::{json_kind, Event, Phase};

/// Which of the two trace layouts the text used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A bare JSON array of events.
    Array,
    /// An object with a `traceEvents` array (and `displayTimeUnit`,
    /// `otherData`, ...).
    Object,
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
    fn empty(layout: Layout) -> Trace {
        Trace {
            events: Vec::new(),
            layout,
            truncated: false,
            partial_line: None,
            display_time_unit: None,
            other_data: None,
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

/// Reads and parses the trace file at `path`.
///
/// Errors name the file. A file whose last multi-byte character was cut in
/// half is treated like any other truncated trace.
pub fn read_trace(path: impl AsRef<Path>) -> Result<Trace, TraceError> {
    let path = path.as_ref();
    let bytes = fs::read(path).map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_bytes(&bytes).map_err(|error| error.in_file(path))
}

/// Parses trace text in either layout, recovering a truncated trace.
pub fn parse_trace(text: &str) -> Result<Trace, TraceError> {
    Parser::new(text).trace()
}

fn parse_bytes(bytes: &[u8]) -> Result<Trace, TraceError> {
    let error = match std::str::from_utf8(bytes) {
        Ok(text) => return parse_trace(text),
        Err(error) => error,
    };
    let valid = &bytes[..error.valid_up_to()];
    let text = std::str::from_utf8(valid).unwrap_or_default();
    let (line, column) = end_position(text);
    let invalid = || TraceError::Json {
        path: None,
        line,
        column,
        detail: "the text is not valid UTF-8".to_string(),
    };
    if error.error_len().is_some() {
        return Err(invalid());
    }
    // The input ends inside a multi-byte character: a write was cut short.
    let trace = parse_trace(text)?;
    if trace.truncated {
        Ok(trace)
    } else {
        Err(invalid())
    }
}

/// The 1-based line and column just past the end of `text`.
fn end_position(text: &str) -> (usize, usize) {
    let line = 1 + text.bytes().filter(|&b| b == b'\n').count();
    let last_line = text.rsplit('\n').next().unwrap_or("");
    (line, last_line.chars().count() + 1)
}

/// Why parsing stopped early.
enum Stop {
    /// The input ended inside the trace.
    Truncated { partial_line: Option<usize> },
    /// The input is malformed.
    Failed(TraceError),
}

const TOP_LEVEL: &str = "`[` (an array of events) or `{` (an object with \"traceEvents\")";

/// A remembered cursor position.
#[derive(Debug, Clone, Copy)]
struct Mark {
    pos: usize,
    line: usize,
    line_start: usize,
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
    line_start: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        // Some file systems leave zero bytes after the data of a file whose
        // writer died; they are not part of the trace.
        let text = text.trim_end_matches('\0');
        Parser {
            text,
            pos: 0,
            line: 1,
            line_start: 0,
        }
    }

    fn trace(mut self) -> Result<Trace, TraceError> {
        self.skip_whitespace();
        let (mut trace, outcome) = match self.peek() {
            Some(b'[') => {
                let mut trace = Trace::empty(Layout::Array);
                let outcome = self.events(&mut trace.events);
                (trace, outcome)
            }
            Some(b'{') => {
                let mut trace = Trace::empty(Layout::Object);
                let outcome = self.object(&mut trace);
                (trace, outcome)
            }
            None => {
                return Err(self.layout_error(format!("the input is empty; expected {TOP_LEVEL}")))
            }
            Some(_) => {
                return Err(
                    self.layout_error(format!("expected {TOP_LEVEL}, found {}", self.found()))
                )
            }
        };
        match outcome {
            Ok(()) => {
                self.skip_whitespace();
                if self.peek().is_some() {
                    return Err(self.json_error(format!(
                        "expected nothing after the end of the trace, found {}",
                        self.found()
                    )));
                }
            }
            Err(Stop::Truncated { partial_line }) => {
                trace.truncated = true;
                trace.partial_line = partial_line;
            }
            Err(Stop::Failed(error)) => return Err(error),
        }
        Ok(trace)
    }

    /// Parses an array of events; the cursor is on `[`.
    fn events(&mut self, events: &mut Vec<Event>) -> Result<(), Stop> {
        self.bump();
        self.skip_whitespace();
        match self.peek() {
            None => return Err(Stop::Truncated { partial_line: None }),
            Some(b']') => {
                self.bump();
                return Ok(());
            }
            Some(_) => {}
        }
        loop {
            let start = self.mark();
            if self.peek() != Some(b'{') {
                let other = self.value()?;
                return Err(Stop::Failed(self.layout_error_at(
                    start,
                    format!("expected an event object, found {}", json_kind(&other)),
                )));
            }
            let members: BTreeMap<String, &RawValue> = self.parse_one()?;
            let event = Event::from_raw(members, start.line)
                .map_err(|error| Stop::Failed(self.layout_error_at(start, error.to_string())))?;
            events.push(event);
            if !self.another_item(b']', "event")? {
                return Ok(());
            }
        }
    }

    /// Parses the object layout; the cursor is on `{`.
    fn object(&mut self, trace: &mut Trace) -> Result<(), Stop> {
        let start = self.mark();
        let mut has_events = false;
        self.bump();
        self.skip_whitespace();
        match self.peek() {
            None => return Err(Stop::Truncated { partial_line: None }),
            Some(b'}') => self.bump(),
            Some(_) => loop {
                if self.peek() != Some(b'"') {
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
                self.skip_whitespace();
                match self.peek() {
                    None => return Err(Stop::Truncated { partial_line: None }),
                    Some(b':') => self.bump(),
                    Some(_) => {
                        return Err(Stop::Failed(self.json_error(format!(
                            "expected `:` after member name \"{key}\", found {}",
                            self.found()
                        ))))
                    }
                }
                self.skip_whitespace();
                let value_start = self.mark();
                match (key.as_str(), self.peek()) {
                    (_, None) => return Err(Stop::Truncated { partial_line: None }),
                    ("traceEvents", _) if has_events => {
                        return Err(Stop::Failed(self.layout_error_at(
                            value_start,
                            "\"traceEvents\" appears more than once".to_string(),
                        )))
                    }
                    ("traceEvents", Some(b'[')) => {
                        has_events = true;
                        self.events(&mut trace.events)?;
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
                        Value::String(unit) => trace.display_time_unit = Some(unit),
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
                    ("otherData", Some(_)) => trace.other_data = Some(self.value()?),
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
        self.parse_one()
    }

    /// Parses one JSON value into `T` with `serde_json` and moves past it.
    fn parse_one<T: Deserialize<'a>>(&mut self) -> Result<T, Stop> {
        let start_line = self.line;
        let text: &'a str = self.text;
        let rest = &text[self.pos..];
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<T>();
        match stream.next() {
            Some(Ok(value)) => {
                let end = self.pos + stream.byte_offset();
                self.advance_to(end);
                Ok(value)
            }
            Some(Err(error)) => {
                // When skipping over a raw value, `serde_json` reports some
                // numbers cut short by the end of the input (`1e`) as invalid
                // rather than incomplete; parsing as a `Value` tells the two
                // apart reliably.
                let error = if error.is_eof() {
                    error
                } else {
                    match serde_json::Deserializer::from_str(rest)
                        .into_iter::<Value>()
                        .next()
                    {
                        Some(Err(again)) => again,
                        _ => error,
                    }
                };
                if error.is_eof() {
                    Err(Stop::Truncated {
                        partial_line: Some(start_line),
                    })
                } else {
                    Err(Stop::Failed(self.serde_error(&error)))
                }
            }
            None => Err(Stop::Truncated { partial_line: None }),
        }
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
        self.skip_whitespace();
        match self.peek() {
            None => Err(Stop::Truncated { partial_line: None }),
            Some(b',') => {
                self.bump();
                self.skip_whitespace();
                match self.peek() {
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

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    /// Moves past one ASCII byte.
    fn bump(&mut self) {
        self.advance_to(self.pos + 1);
    }

    fn skip_whitespace(&mut self) {
        let skipped = self.text.as_bytes()[self.pos..]
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .count();
        self.advance_to(self.pos + skipped);
    }

    fn advance_to(&mut self, end: usize) {
        let end = end.min(self.text.len());
        for (offset, byte) in self.text.as_bytes()[self.pos..end].iter().enumerate() {
            if *byte == b'\n' {
                self.line += 1;
                self.line_start = self.pos + offset + 1;
            }
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
        self.text
            .get(mark.line_start..mark.pos)
            .map_or(0, |prefix| prefix.chars().count())
            + 1
    }

    /// The 1-based column of the cursor, in characters.
    fn column(&self) -> usize {
        self.column_of(self.mark())
    }

    /// Describes what is at the cursor, for messages.
    fn found(&self) -> String {
        match self
            .text
            .get(self.pos..)
            .and_then(|rest| rest.chars().next())
        {
            None => "the end of the input".to_string(),
            Some(c) if c.is_control() => format!("character {:?}", c),
            Some(c) => format!("`{c}`"),
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
    fn trailing_zero_bytes_are_ignored() {
        let text = format!("{ARRAY}\0\0\0");
        let trace = parse_trace(&text).expect("valid trace");
        assert!(!trace.truncated);
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

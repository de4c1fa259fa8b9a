//! The typed view of one trace event.
//!
//! Conversion from JSON is lenient: a field that is missing is `None`, and a
//! field that is present with the wrong JSON type is also `None` but leaves a
//! [`FieldError`] behind, so that [`crate::check`] can report it without the
//! reader having to reject the whole trace.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The `ph` (phase) field of an event.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// `B`: a duration begins on a thread.
    Begin,
    /// `E`: the innermost open duration on a thread ends.
    End,
    /// `X`: a complete duration with `ts` and `dur`.
    Complete,
    /// `i`: an instant.
    Instant,
    /// `b`: an asynchronous span begins; matched by `cat` and `id`.
    AsyncBegin,
    /// `n`: an instant inside an asynchronous span.
    AsyncInstant,
    /// `e`: an asynchronous span ends.
    AsyncEnd,
    /// `C`: counter values in `args`.
    Counter,
    /// `M`: metadata such as process and thread names.
    Metadata,
    /// `s`: a flow starts.
    FlowStart,
    /// `t`: a flow passes through a step.
    FlowStep,
    /// `f`: a flow finishes.
    FlowEnd,
    /// Any other phase code, kept verbatim.
    Other(String),
}

/// Phase codes of the Chrome trace format that have no variant of their own
/// but are still legitimate.
const OTHER_KNOWN_CODES: &[&str] = &[
    "I", "S", "T", "p", "F", "P", "N", "O", "D", "V", "v", "R", "c", "(", ")",
];

impl Phase {
    /// The phase for a `ph` code.
    pub fn from_code(code: &str) -> Phase {
        match code {
            "B" => Phase::Begin,
            "E" => Phase::End,
            "X" => Phase::Complete,
            "i" => Phase::Instant,
            "b" => Phase::AsyncBegin,
            "n" => Phase::AsyncInstant,
            "e" => Phase::AsyncEnd,
            "C" => Phase::Counter,
            "M" => Phase::Metadata,
            "s" => Phase::FlowStart,
            "t" => Phase::FlowStep,
            "f" => Phase::FlowEnd,
            other => Phase::Other(other.to_string()),
        }
    }

    /// The `ph` code of this phase.
    pub fn code(&self) -> &str {
        match self {
            Phase::Begin => "B",
            Phase::End => "E",
            Phase::Complete => "X",
            Phase::Instant => "i",
            Phase::AsyncBegin => "b",
            Phase::AsyncInstant => "n",
            Phase::AsyncEnd => "e",
            Phase::Counter => "C",
            Phase::Metadata => "M",
            Phase::FlowStart => "s",
            Phase::FlowStep => "t",
            Phase::FlowEnd => "f",
            Phase::Other(code) => code,
        }
    }

    /// Whether the Chrome trace format defines this phase code.
    pub fn is_known(&self) -> bool {
        match self {
            Phase::Other(code) => OTHER_KNOWN_CODES.contains(&code.as_str()),
            _ => true,
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A field that was present in an event but had the wrong JSON type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field name, such as `"ts"`.
    pub field: &'static str,
    /// What the field should have been, such as `"a number"`.
    pub expected: &'static str,
    /// What it was, such as `"a string"`.
    pub found: &'static str,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "field \"{}\" must be {}, found {}",
            self.field, self.expected, self.found
        )
    }
}

/// One trace event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Event {
    /// `name`: the function or region name.
    pub name: Option<String>,
    /// `cat`: the category.
    pub cat: Option<String>,
    /// `ph`: the phase.
    pub ph: Option<Phase>,
    /// `pid`: the process id.
    pub pid: Option<i64>,
    /// `tid`: the thread id.
    pub tid: Option<i64>,
    /// `ts`: microseconds since the epoch, as the nearest `f64`.
    ///
    /// An `f64` resolves only about a quarter of a microsecond at present-day
    /// epoch times; [`Event::ts_ns`] holds the exact value.
    pub ts: Option<f64>,
    /// `ts` in nanoseconds since the epoch, taken exactly from the decimal
    /// text (rounded to the nearest nanosecond). Present exactly when `ts`
    /// is.
    pub ts_ns: Option<i64>,
    /// `dur`: duration in microseconds (`X` events), as the nearest `f64`.
    pub dur: Option<f64>,
    /// `dur` in nanoseconds, exact like [`Event::ts_ns`].
    pub dur_ns: Option<i64>,
    /// `id`: the async or flow id; numeric ids are kept as their decimal text.
    pub id: Option<String>,
    /// `args`: free-form arguments, `Value::Null` when absent.
    pub args: Value,
    /// The 1-based line of the trace text on which the event starts.
    pub line: usize,
    /// Fields that were present with the wrong type.
    pub field_errors: Vec<FieldError>,
}

impl Event {
    /// Builds an event from a JSON object that started on `line`.
    ///
    /// The nanosecond times come from the numbers as `serde_json` holds them
    /// (`f64` unless they are integers); the trace reader keeps the exact
    /// text instead.
    pub fn from_json(object: Map<String, Value>, line: usize) -> Event {
        Event::build(object, line, None, None)
    }

    /// Builds an event from its members as raw JSON text, so that `ts` and
    /// `dur` are read to the nanosecond.
    pub(crate) fn from_raw(
        members: BTreeMap<String, &RawValue>,
        line: usize,
    ) -> Result<Event, serde_json::Error> {
        let mut object = Map::new();
        let (mut ts_text, mut dur_text) = (None, None);
        for (key, raw) in members {
            match key.as_str() {
                "ts" => ts_text = Some(raw.get()),
                "dur" => dur_text = Some(raw.get()),
                _ => {}
            }
            object.insert(key, serde_json::from_str(raw.get())?);
        }
        Ok(Event::build(object, line, ts_text, dur_text))
    }

    fn build(
        mut object: Map<String, Value>,
        line: usize,
        ts_text: Option<&str>,
        dur_text: Option<&str>,
    ) -> Event {
        let mut errors = Vec::new();
        let name = take_string(&mut object, "name", &mut errors);
        let cat = take_string(&mut object, "cat", &mut errors);
        let ph = take_string(&mut object, "ph", &mut errors).map(|code| Phase::from_code(&code));
        let pid = take_integer(&mut object, "pid", &mut errors);
        let tid = take_integer(&mut object, "tid", &mut errors);
        let (ts, ts_ns) = take_time(&mut object, "ts", ts_text, &mut errors);
        let (dur, dur_ns) = take_time(&mut object, "dur", dur_text, &mut errors);
        let id = take_id(&mut object, &mut errors);
        let args = match object.remove("args") {
            None => Value::Null,
            Some(Value::Object(map)) => Value::Object(map),
            Some(other) => {
                errors.push(FieldError {
                    field: "args",
                    expected: "an object",
                    found: json_kind(&other),
                });
                Value::Null
            }
        };
        Event {
            name,
            cat,
            ph,
            pid,
            tid,
            ts,
            ts_ns,
            dur,
            dur_ns,
            id,
            args,
            line,
            field_errors: errors,
        }
    }

    /// Whether this is a metadata (`M`) event.
    pub fn is_metadata(&self) -> bool {
        self.ph == Some(Phase::Metadata)
    }

    /// The `(pid, tid)` pair, when both are present.
    pub fn thread(&self) -> Option<(i64, i64)> {
        Some((self.pid?, self.tid?))
    }

    /// When the event ends, in nanoseconds: `ts + dur` for `X` events with
    /// a valid `dur`, `ts` otherwise.
    pub fn end_ns(&self) -> Option<i64> {
        let ts = self.ts_ns?;
        match (&self.ph, self.dur_ns) {
            (Some(Phase::Complete), Some(dur)) if dur >= 0 => Some(ts.saturating_add(dur)),
            _ => Some(ts),
        }
    }

    /// Whether a field of this name was present with the wrong type.
    pub fn has_field_error(&self, field: &str) -> bool {
        self.field_errors.iter().any(|error| error.field == field)
    }

    /// A short description for messages, such as `B "main"`.
    pub fn label(&self) -> String {
        let code = self.ph.as_ref().map_or("?", Phase::code);
        match &self.name {
            Some(name) => format!("{code} \"{name}\""),
            None => code.to_string(),
        }
    }
}

/// Describes the JSON type of a value, with an article, for messages.
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn take_string(
    object: &mut Map<String, Value>,
    field: &'static str,
    errors: &mut Vec<FieldError>,
) -> Option<String> {
    match object.remove(field)? {
        Value::String(text) => Some(text),
        other => {
            errors.push(FieldError {
                field,
                expected: "a string",
                found: json_kind(&other),
            });
            None
        }
    }
}

fn take_integer(
    object: &mut Map<String, Value>,
    field: &'static str,
    errors: &mut Vec<FieldError>,
) -> Option<i64> {
    let value = object.remove(field)?;
    if let Some(number) = value.as_i64() {
        return Some(number);
    }
    let found = match value {
        Value::Number(_) => "a number that is not a 64-bit integer",
        ref other => json_kind(other),
    };
    errors.push(FieldError {
        field,
        expected: "an integer",
        found,
    });
    None
}

/// Reads a time in microseconds as `f64` and as exact nanoseconds; `text`
/// is the number as written, when known.
fn take_time(
    object: &mut Map<String, Value>,
    field: &'static str,
    text: Option<&str>,
    errors: &mut Vec<FieldError>,
) -> (Option<f64>, Option<i64>) {
    let Some(value) = object.remove(field) else {
        return (None, None);
    };
    let Value::Number(number) = &value else {
        errors.push(FieldError {
            field,
            expected: "a number",
            found: json_kind(&value),
        });
        return (None, None);
    };
    let nanos = match text {
        Some(text) => micros_text_to_ns(text),
        None => micros_text_to_ns(&number.to_string()),
    };
    match (number.as_f64(), nanos) {
        (Some(micros), Some(nanos)) => (Some(micros), Some(nanos)),
        _ => {
            errors.push(FieldError {
                field,
                expected: "a number of microseconds within 292 years of the epoch",
                found: "a number out of that range",
            });
            (None, None)
        }
    }
}

/// Converts a JSON number of microseconds, as text, to whole nanoseconds,
/// rounding halves away from zero. `None` if it is not a JSON number or
/// does not fit in an `i64`.
pub(crate) fn micros_text_to_ns(text: &str) -> Option<i64> {
    let text = text.trim();
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], unsigned[at + 1..].parse::<i64>().ok()?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty()
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    // The value in nanoseconds is `digits * 10^scale`.
    let all_digits = format!("{whole}{fraction}");
    let digits = all_digits.trim_start_matches('0');
    let scale = exponent
        .checked_add(3)?
        .checked_sub(i64::try_from(fraction.len()).ok()?)?;
    if digits.is_empty() {
        return Some(0);
    }
    let length = i64::try_from(digits.len()).ok()?;
    let (kept, round_up) = if scale >= 0 {
        // More than 19 digits does not fit in an i64.
        if length.checked_add(scale)? > 19 {
            return None;
        }
        let zeros = "0".repeat(usize::try_from(scale).ok()?);
        (format!("{digits}{zeros}"), false)
    } else {
        let keep = length.checked_add(scale)?;
        if keep <= 0 {
            (String::new(), keep == 0 && digits.as_bytes()[0] >= b'5')
        } else {
            let keep = usize::try_from(keep).ok()?;
            (digits[..keep].to_string(), digits.as_bytes()[keep] >= b'5')
        }
    };
    if kept.len() > 19 {
        return None;
    }
    let mut nanos: i128 = if kept.is_empty() {
        0
    } else {
        kept.parse().ok()?
    };
    if round_up {
        nanos += 1;
    }
    if negative {
        nanos = -nanos;
    }
    i64::try_from(nanos).ok()
}

fn take_id(object: &mut Map<String, Value>, errors: &mut Vec<FieldError>) -> Option<String> {
    match object.remove("id")? {
        Value::String(text) => Some(text),
        Value::Number(number) => Some(number.to_string()),
        other => {
            errors.push(FieldError {
                field: "id",
                expected: "a string or a number",
                found: json_kind(&other),
            });
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(value: Value) -> Event {
        match value {
            Value::Object(map) => Event::from_json(map, 1),
            _ => Event::default(),
        }
    }

    #[test]
    fn all_typed_fields_are_read() {
        let e = event(json!({
            "name": "foo", "cat": "c", "ph": "b", "pid": 1, "tid": 2,
            "ts": 10.5, "dur": 3, "id": "0x1", "args": {"k": 1}
        }));
        assert_eq!(e.name.as_deref(), Some("foo"));
        assert_eq!(e.cat.as_deref(), Some("c"));
        assert_eq!(e.ph, Some(Phase::AsyncBegin));
        assert_eq!(e.thread(), Some((1, 2)));
        assert_eq!(e.ts, Some(10.5));
        assert_eq!(e.dur, Some(3.0));
        assert_eq!(e.id.as_deref(), Some("0x1"));
        assert_eq!(e.args, json!({"k": 1}));
        assert!(e.field_errors.is_empty());
    }

    #[test]
    fn numeric_ids_are_kept_as_text() {
        assert_eq!(event(json!({"id": 42})).id.as_deref(), Some("42"));
    }

    #[test]
    fn wrongly_typed_fields_are_recorded_not_fatal() {
        let e = event(json!({"name": 3, "ts": "10", "pid": 1.5, "args": []}));
        assert_eq!(e.name, None);
        assert_eq!(e.ts, None);
        assert_eq!(e.pid, None);
        let fields: Vec<_> = e.field_errors.iter().map(|f| f.field).collect();
        assert_eq!(fields, ["name", "pid", "ts", "args"]);
        assert_eq!(
            e.field_errors[2].to_string(),
            "field \"ts\" must be a number, found a string"
        );
    }

    #[test]
    fn phase_codes_round_trip() {
        for code in [
            "B", "E", "X", "i", "b", "n", "e", "C", "M", "s", "t", "f", "I",
        ] {
            assert_eq!(Phase::from_code(code).code(), code);
            assert!(Phase::from_code(code).is_known());
        }
        assert!(!Phase::from_code("Q").is_known());
    }

    #[test]
    fn complete_events_end_after_their_duration() {
        let e = event(json!({"ph": "X", "ts": 10, "dur": 5.5}));
        assert_eq!(e.end_ns(), Some(15_500));
    }

    #[test]
    fn microsecond_text_converts_exactly_to_nanoseconds() {
        let cases = [
            ("1712345678901234.567", Some(1_712_345_678_901_234_567)),
            ("0", Some(0)),
            ("-0.0", Some(0)),
            ("12", Some(12_000)),
            ("-2.5", Some(-2_500)),
            ("0.0004", Some(0)),
            ("0.0005", Some(1)),
            ("-0.0005", Some(-1)),
            ("1.2345678", Some(1_235)),
            ("1.5e3", Some(1_500_000)),
            ("15E-4", Some(2)),
            ("1e-999999999999", Some(0)),
            ("9223372036854775.807", Some(i64::MAX)),
            ("9223372036854775.808", None),
            ("1e300", None),
            ("abc", None),
            (".5", None),
        ];
        for (text, expected) in cases {
            assert_eq!(micros_text_to_ns(text), expected, "{text}");
        }
    }

    #[test]
    fn raw_members_keep_nanosecond_precision() {
        let text = r#"{"ph":"B","ts":1712345678901234.567,"dur":0.001}"#;
        let members: BTreeMap<String, &RawValue> =
            serde_json::from_str(text).expect("valid object");
        let e = Event::from_raw(members, 1).expect("valid members");
        assert_eq!(e.ts_ns, Some(1_712_345_678_901_234_567));
        assert_eq!(e.dur_ns, Some(1));
        assert_eq!(e.ph, Some(Phase::Begin));
    }

    #[test]
    fn out_of_range_times_are_recorded_as_field_errors() {
        let e = event(json!({"ts": 1e300}));
        assert_eq!(e.ts, None);
        assert_eq!(e.field_errors.len(), 1);
        assert_eq!(e.field_errors[0].field, "ts");
    }
}

//! The typed view of one trace event.
//!
//! Conversion from JSON is lenient: a field that is missing is `None`, and a
//! field that is present with the wrong JSON type is also `None` but leaves a
//! [`FieldError`] behind, so that [`crate::check`] can report it without the
//! reader having to reject the whole trace.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

pub(crate) mod plain;

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

    /// The phase for a `ph` code given as bytes; `None` when they are not
    /// UTF-8.
    pub(crate) fn from_code_bytes(code: &[u8]) -> Option<Phase> {
        Some(match code {
            b"B" => Phase::Begin,
            b"E" => Phase::End,
            b"X" => Phase::Complete,
            b"i" => Phase::Instant,
            b"b" => Phase::AsyncBegin,
            b"n" => Phase::AsyncInstant,
            b"e" => Phase::AsyncEnd,
            b"C" => Phase::Counter,
            b"M" => Phase::Metadata,
            b"s" => Phase::FlowStart,
            b"t" => Phase::FlowStep,
            b"f" => Phase::FlowEnd,
            other => Phase::Other(std::str::from_utf8(other).ok()?.to_string()),
        })
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
        Event::build(object, line)
    }

    fn build(mut object: Map<String, Value>, line: usize) -> Event {
        let mut errors = Vec::new();
        let name = take_string(&mut object, "name", &mut errors);
        let cat = take_string(&mut object, "cat", &mut errors);
        let ph = take_string(&mut object, "ph", &mut errors).map(|code| Phase::from_code(&code));
        let pid = take_integer(&mut object, "pid", &mut errors);
        let tid = take_integer(&mut object, "tid", &mut errors);
        let (ts, ts_ns) = take_time(&mut object, "ts", None, &mut errors);
        let (dur, dur_ns) = take_time(&mut object, "dur", None, &mut errors);
        let id = take_id(&mut object, &mut errors);
        let args = take_args(&mut object, &mut errors);
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

/// The members of one event object as raw JSON text, as the trace reader
/// reads them: the members an [`Event`] has are kept borrowed from the
/// input, the others are skipped. Converting to an [`Event`] then parses
/// each member into its type directly.
#[derive(Default)]
pub(crate) struct RawEvent<'a> {
    name: Option<Typed<Cow<'a, str>>>,
    cat: Option<Typed<Cow<'a, str>>>,
    ph: Option<Typed<Cow<'a, str>>>,
    pid: Option<Typed<i64>>,
    tid: Option<Typed<i64>>,
    ts: Option<&'a RawValue>,
    dur: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    args: Option<&'a RawValue>,
}

/// A member read as the type it should have, or, when it has another JSON
/// type, what it is (for a [`FieldError`]).
type Typed<T> = Result<T, &'static str>;

/// Reads a string member in one pass, borrowed when it has no escapes.
struct Text<'a>(Typed<Cow<'a, str>>);

/// Reads an integer member in one pass.
struct Integer(Typed<i64>);

/// What a value of a JSON type other than the expected one is.
macro_rules! other_kinds {
    ($value:ty) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<$value, E> {
            Ok(Err("a boolean"))
        }
        fn visit_unit<E: de::Error>(self) -> Result<$value, E> {
            Ok(Err("null"))
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<$value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Err("an array"))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<$value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Err("an object"))
        }
    };
}

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Text<'de>, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Typed<Cow<'de, str>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Ok(Cow::Borrowed(text)))
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Ok(Cow::Owned(text.to_string())))
            }
            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(Ok(Cow::Owned(text)))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Err("a number"))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Err("a number"))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Err("a number"))
            }
            other_kinds!(Self::Value);
        }
        deserializer.deserialize_any(TextVisitor).map(Text)
    }
}

impl<'de> Deserialize<'de> for Integer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Integer, D::Error> {
        struct IntegerVisitor;
        const NOT_I64: &str = "a number that is not a 64-bit integer";
        impl<'de> Visitor<'de> for IntegerVisitor {
            type Value = Typed<i64>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
                Ok(Ok(value))
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
                Ok(i64::try_from(value).map_err(|_| NOT_I64))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Err(NOT_I64))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Err("a string"))
            }
            other_kinds!(Self::Value);
        }
        deserializer.deserialize_any(IntegerVisitor).map(Integer)
    }
}

/// A member name of an event object.
pub(crate) enum Member {
    Name,
    Cat,
    Ph,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    Args,
    Other,
}

impl Member {
    /// The member of this name.
    pub(crate) fn of(name: &[u8]) -> Member {
        match name {
            b"name" => Member::Name,
            b"cat" => Member::Cat,
            b"ph" => Member::Ph,
            b"pid" => Member::Pid,
            b"tid" => Member::Tid,
            b"ts" => Member::Ts,
            b"dur" => Member::Dur,
            b"id" => Member::Id,
            b"args" => Member::Args,
            _ => Member::Other,
        }
    }
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Member, D::Error> {
        struct MemberVisitor;
        impl Visitor<'_> for MemberVisitor {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Member, E> {
                Ok(Member::of(name.as_bytes()))
            }
        }
        deserializer.deserialize_identifier(MemberVisitor)
    }
}

impl<'de> Deserialize<'de> for RawEvent<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RawEvent<'de>, D::Error> {
        struct EventVisitor;
        impl<'de> Visitor<'de> for EventVisitor {
            type Value = RawEvent<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an event object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawEvent<'de>, A::Error> {
                let mut raw = RawEvent::default();
                // A repeated member takes its last value, as in a map.
                while let Some(member) = map.next_key::<Member>()? {
                    match member {
                        Member::Name => raw.name = Some(map.next_value::<Text<'de>>()?.0),
                        Member::Cat => raw.cat = Some(map.next_value::<Text<'de>>()?.0),
                        Member::Ph => raw.ph = Some(map.next_value::<Text<'de>>()?.0),
                        Member::Pid => raw.pid = Some(map.next_value::<Integer>()?.0),
                        Member::Tid => raw.tid = Some(map.next_value::<Integer>()?.0),
                        Member::Ts => raw.ts = Some(map.next_value()?),
                        Member::Dur => raw.dur = Some(map.next_value()?),
                        Member::Id => raw.id = Some(map.next_value()?),
                        Member::Args => raw.args = Some(map.next_value()?),
                        Member::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(raw)
            }
        }
        deserializer.deserialize_map(EventVisitor)
    }
}

impl RawEvent<'_> {
    /// The event, with the same lenient typing as [`Event::from_json`] and
    /// `ts` and `dur` read to the nanosecond from their text.
    pub(crate) fn into_event(self, line: usize) -> Result<Event, serde_json::Error> {
        let mut errors = Vec::new();
        let name = typed(self.name, "name", "a string", &mut errors).map(Cow::into_owned);
        let cat = typed(self.cat, "cat", "a string", &mut errors).map(Cow::into_owned);
        let ph = typed(self.ph, "ph", "a string", &mut errors).map(|code| Phase::from_code(&code));
        let pid = typed(self.pid, "pid", "an integer", &mut errors);
        let tid = typed(self.tid, "tid", "an integer", &mut errors);
        let (ts, ts_ns) = raw_time(self.ts, "ts", &mut errors)?;
        let (dur, dur_ns) = raw_time(self.dur, "dur", &mut errors)?;
        // `id` and `args` as `Event::from_json` reads them; their errors
        // come after those of the fields above. Most events have neither.
        let mut event = if self.id.is_none() && self.args.is_none() {
            Event {
                line,
                ..Event::default()
            }
        } else {
            let mut object = Map::new();
            for (field, raw) in [("id", self.id), ("args", self.args)] {
                if let Some(raw) = raw {
                    object.insert(field.to_string(), serde_json::from_str(raw.get())?);
                }
            }
            Event::build(object, line)
        };
        errors.append(&mut event.field_errors);
        Ok(Event {
            name,
            cat,
            ph,
            pid,
            tid,
            ts,
            ts_ns,
            dur,
            dur_ns,
            field_errors: errors,
            ..event
        })
    }
}

/// The value of a member read with [`Text`] or [`Integer`], recording a
/// [`FieldError`] when it had another JSON type.
fn typed<T>(
    member: Option<Typed<T>>,
    field: &'static str,
    expected: &'static str,
    errors: &mut Vec<FieldError>,
) -> Option<T> {
    match member? {
        Ok(value) => Some(value),
        Err(found) => {
            errors.push(FieldError {
                field,
                expected,
                found,
            });
            None
        }
    }
}

fn raw_time(
    raw: Option<&RawValue>,
    field: &'static str,
    errors: &mut Vec<FieldError>,
) -> Result<(Option<f64>, Option<i64>), serde_json::Error> {
    let Some(raw) = raw else {
        return Ok((None, None));
    };
    // The usual case, a JSON number, is also Rust's float syntax.
    let text = raw.get();
    if text.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
        if let (Ok(micros), Some(nanos)) = (text.parse::<f64>(), micros_text_to_ns(text)) {
            if micros.is_finite() {
                return Ok((Some(micros), Some(nanos)));
            }
        }
    }
    let mut object = Map::new();
    object.insert(field.to_string(), serde_json::from_str(raw.get())?);
    Ok(take_time(&mut object, field, Some(raw.get()), errors))
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
    errors.push(FieldError {
        field,
        expected: "an integer",
        found: not_an_integer(&value),
    });
    None
}

/// What a value that should be an `i64` is, for messages.
fn not_an_integer(value: &Value) -> &'static str {
    match value {
        Value::Number(_) => "a number that is not a 64-bit integer",
        other => json_kind(other),
    }
}

fn take_args(object: &mut Map<String, Value>, errors: &mut Vec<FieldError>) -> Value {
    match object.remove("args") {
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
    }
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
    if let Some(nanos) = plain_micros_to_ns(text) {
        return Some(nanos);
    }
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

/// [`micros_text_to_ns`] for the usual `-?digits(.digits)?` without an
/// exponent, in one pass without allocating; `None` for anything else and
/// on overflow.
fn plain_micros_to_ns(text: &str) -> Option<i64> {
    plain_micros_bytes_to_ns(text.as_bytes())
}

/// [`plain_micros_to_ns`] of text as bytes.
pub(crate) fn plain_micros_bytes_to_ns(bytes: &[u8]) -> Option<i64> {
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    let mut nanos: i64 = 0;
    let mut whole_digits = 0;
    // Fraction digits seen, or `None` before the `.`.
    let mut fraction: Option<usize> = None;
    let mut round_up = false;
    for &byte in digits {
        match (byte, fraction) {
            (b'0'..=b'9', None) => {
                nanos = nanos.checked_mul(10)?.checked_add(i64::from(byte - b'0'))?;
                whole_digits += 1;
            }
            (b'0'..=b'9', Some(seen)) => {
                if seen < 3 {
                    nanos = nanos.checked_mul(10)?.checked_add(i64::from(byte - b'0'))?;
                } else if seen == 3 {
                    // Halves round away from zero.
                    round_up = byte >= b'5';
                }
                fraction = Some(seen + 1);
            }
            (b'.', None) if whole_digits > 0 => fraction = Some(0),
            _ => return None,
        }
    }
    // `12.` is no JSON number.
    if whole_digits == 0 || fraction == Some(0) {
        return None;
    }
    let seen = fraction.unwrap_or(0);
    for _ in seen.min(3)..3 {
        nanos = nanos.checked_mul(10)?;
    }
    if round_up {
        nanos = nanos.checked_add(1)?;
    }
    Some(if negative { -nanos } else { nanos })
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
    fn the_one_pass_conversion_agrees_with_the_general_one() {
        for text in [
            "0",
            "7",
            "-7",
            "12.5",
            "12.",
            "1.2345",
            "1.2344",
            "-1.2345",
            "0.0005",
            "-0.0004",
            "1712345678901234.567",
            "1712345678901234.5678",
            "9223372036854775.807",
            "9223372036854775.808",
            "99999999999999999999",
            "-",
            ".5",
            "1..2",
            "1e3",
            "01.5",
        ] {
            if let Some(fast) = plain_micros_to_ns(text) {
                let mantissa = text.trim_start_matches('-');
                let general = format!(
                    "{}{mantissa}e0",
                    if text.starts_with('-') { "-" } else { "" }
                );
                assert_eq!(Some(fast), micros_text_to_ns(&general), "{text}");
            }
        }
        assert_eq!(
            plain_micros_to_ns("1712345678901234.5675"),
            Some(1_712_345_678_901_234_568)
        );
        assert_eq!(plain_micros_to_ns("12."), None);
        assert_eq!(plain_micros_to_ns("9223372036854775.808"), None);
    }

    #[test]
    fn raw_members_keep_nanosecond_precision() {
        let text = r#"{"ph":"B","ts":1712345678901234.567,"dur":0.001}"#;
        let raw: RawEvent<'_> = serde_json::from_str(text).expect("valid object");
        let e = raw.into_event(1).expect("valid members");
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

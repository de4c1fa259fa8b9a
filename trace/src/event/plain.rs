//! Reading an event in the plain form the runtime writes, without serde.
//!
//! Hand-written for a measured need: `perfflow-trace db` aims at a million
//! events per CPU second, and reading each event through `serde_json`
//! (a `Deserialize` visitor per member, then a second parse of `ts`) took
//! about 40% of the import's instructions (docs/benchmarks.md). [`parse`]
//! reads only the common case: one object whose member names are strings
//! without escapes and whose values are strings without escapes or
//! numbers without an exponent (no `args`, no nested value). For anything
//! else, including malformed or incomplete text, it returns `None` and the
//! reader hands the same bytes to `serde_json`, so errors and unusual
//! events are read exactly as before. What it accepts it reads into the
//! same [`Event`] as [`super::RawEvent::into_event`]: a test compares the
//! two on every kind of member.

use super::{plain_micros_bytes_to_ns, Event, Member as Key, Phase};

/// What [`parse_into`] read besides the event.
#[derive(Debug, PartialEq)]
pub(crate) struct Plain {
    /// The number of bytes the event took.
    pub len: usize,
    /// The line breaks in it (only its whitespace may hold them), and
    /// where the line after the last one starts: the reader keeps its line
    /// count without going over the bytes again.
    pub newlines: usize,
    pub line_start: usize,
}

/// Reads the event at the start of `bytes` (which may have more input
/// after it) into `event`, when it has the plain form; `line` is the line
/// it starts on. The strings `event` holds keep their allocations for the
/// new one (the reader hands every event over in the same [`Event`]).
/// When it returns `None`, what `event` holds is left to be replaced.
pub(crate) fn parse_into(bytes: &[u8], line: usize, event: &mut Event) -> Option<Plain> {
    let mut at = Cursor {
        bytes,
        at: 0,
        newlines: 0,
        line_start: 0,
    };
    at.expect(b'{')?;
    let (mut name, mut cat, mut id) = (event.name.take(), event.cat.take(), event.id.take());
    *event = Event {
        line,
        ..Event::default()
    };
    at.whitespace();
    if at.peek()? == b'}' {
        return Some(at.done());
    }
    loop {
        let key = at.key()?;
        at.whitespace();
        at.expect(b':')?;
        at.whitespace();
        match key {
            Key::Name => event.name = Some(refill(name.take(), at.string()?)?),
            Key::Cat => event.cat = Some(refill(cat.take(), at.string()?)?),
            Key::Ph => event.ph = Some(Phase::from_code_bytes(at.string()?)?),
            Key::Pid => event.pid = Some(at.integer()?),
            Key::Tid => event.tid = Some(at.integer()?),
            Key::Ts => (event.ts, event.ts_ns) = at.time()?,
            Key::Dur => (event.dur, event.dur_ns) = at.time()?,
            // A numeric id is kept as its decimal text, as serde_json
            // writes a non-negative integer.
            Key::Id => {
                event.id = Some(if at.peek()? == b'"' {
                    refill(id.take(), at.string()?)?
                } else {
                    at.integer()?.to_string()
                })
            }
            Key::Args => return None,
            Key::Other => {
                if at.peek()? == b'"' {
                    at.string()?;
                } else {
                    at.number()?;
                }
            }
        }
        at.whitespace();
        match at.peek()? {
            b',' => {
                at.at += 1;
                at.whitespace();
            }
            b'}' => return Some(at.done()),
            _ => return None,
        }
    }
}

/// A number [`Cursor::parts`] read: where it starts, its sign, how many
/// digits it has before and after the point, and those digits as one
/// integer (exact when they are at most 19).
struct Number {
    start: usize,
    negative: bool,
    whole: usize,
    fraction: usize,
    digits: u64,
}

/// The string of UTF-8 `bytes`, in `buffer` when there is one (a string
/// the event before had): unchanged when it holds the same text already,
/// as the name and category of consecutive events often are, which saves
/// checking the bytes as UTF-8 again. `None` when they are not UTF-8.
fn refill(buffer: Option<String>, bytes: &[u8]) -> Option<String> {
    match buffer {
        Some(buffer) if buffer.as_bytes() == bytes => Some(buffer),
        Some(mut buffer) => {
            buffer.clear();
            buffer.push_str(std::str::from_utf8(bytes).ok()?);
            Some(buffer)
        }
        None => Some(std::str::from_utf8(bytes).ok()?.to_string()),
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    newlines: usize,
    line_start: usize,
}

impl<'a> Cursor<'a> {
    /// The event read, up to the `}` at the cursor.
    fn done(&self) -> Plain {
        Plain {
            len: self.at + 1,
            newlines: self.newlines,
            line_start: self.line_start,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    fn whitespace(&mut self) {
        while let Some(byte @ (b' ' | b'\t' | b'\n' | b'\r')) = self.peek() {
            self.at += 1;
            if byte == b'\n' {
                self.newlines += 1;
                self.line_start = self.at;
            }
        }
    }

    /// A member name, without escapes or control characters. The names
    /// the runtime writes are told from their first two bytes and
    /// compared whole, without a search for the closing quote.
    fn key(&mut self) -> Option<Key> {
        let rest = &self.bytes[self.at..];
        let known = |name: &[u8]| {
            rest.len() > name.len() + 1
                && &rest[1..=name.len()] == name
                && rest[name.len() + 1] == b'"'
        };
        let (key, length) = match (rest.get(1), rest.get(2)) {
            (Some(b'n'), _) if known(b"name") => (Key::Name, 4),
            (Some(b'c'), _) if known(b"cat") => (Key::Cat, 3),
            (Some(b'p'), Some(b'h')) if known(b"ph") => (Key::Ph, 2),
            (Some(b'p'), _) if known(b"pid") => (Key::Pid, 3),
            (Some(b't'), Some(b's')) if known(b"ts") => (Key::Ts, 2),
            (Some(b't'), _) if known(b"tid") => (Key::Tid, 3),
            (Some(b'd'), _) if known(b"dur") => (Key::Dur, 3),
            (Some(b'i'), _) if known(b"id") => (Key::Id, 2),
            _ => return Some(Key::of(self.string()?)),
        };
        // Past the two quotes and the name.
        self.at += length + 2;
        Some(key)
    }

    /// The bytes of a string without escapes or control characters.
    fn string(&mut self) -> Option<&'a [u8]> {
        self.expect(b'"')?;
        let start = self.at;
        let length = self.bytes[start..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        self.at = start + length;
        self.expect(b'"')?;
        Some(&self.bytes[start..start + length])
    }

    /// A JSON number without an exponent, as text.
    fn number(&mut self) -> Option<&'a [u8]> {
        let number = self.parts()?;
        Some(&self.bytes[number.start..self.at])
    }

    /// A JSON number without an exponent, read in one pass.
    fn parts(&mut self) -> Option<Number> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let (whole, digits) = self.digits(0);
        // JSON allows no leading zero before another digit.
        if whole == 0 || (whole > 1 && self.bytes[self.at - whole] == b'0') {
            return None;
        }
        let (mut fraction, mut digits) = (0, digits);
        if self.peek() == Some(b'.') {
            self.at += 1;
            (fraction, digits) = self.digits(digits);
            if fraction == 0 {
                return None;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            return None;
        }
        Some(Number {
            start,
            negative,
            whole,
            fraction,
            digits,
        })
    }

    /// Moves over digits: how many, and `value` with them appended
    /// (exact while it has at most 19 digits in all).
    fn digits(&mut self, mut value: u64) -> (usize, u64) {
        let start = self.at;
        while let Some(&byte) = self.bytes.get(self.at) {
            if !byte.is_ascii_digit() {
                break;
            }
            value = value.wrapping_mul(10).wrapping_add(u64::from(byte - b'0'));
            self.at += 1;
        }
        (self.at - start, value)
    }

    /// A non-negative integer that fits an `i64` (serde_json reads `-0` as
    /// a float; negative ids and pids are left to it).
    fn integer(&mut self) -> Option<i64> {
        let number = self.parts()?;
        if number.negative || number.fraction > 0 || number.whole > 19 {
            return None;
        }
        i64::try_from(number.digits).ok()
    }

    /// A time in microseconds, as `f64` and as exact nanoseconds.
    fn time(&mut self) -> Option<(Option<f64>, Option<i64>)> {
        let number = self.parts()?;
        let (negative, fraction) = (number.negative, number.fraction);
        let text = &self.bytes[number.start..self.at];
        // The usual case, at most 19 digits (which fit a u64) of which at
        // most 3 decimals (the number is exact in nanoseconds), read in the
        // same pass as the text.
        let exact = fraction <= 3;
        let nanos = if exact && number.whole + fraction <= 19 {
            let scale = 10u64.pow(3 - fraction as u32);
            let value = i64::try_from(number.digits.checked_mul(scale)?).ok()?;
            if negative {
                -value
            } else {
                value
            }
        } else {
            plain_micros_bytes_to_ns(text)?
        };
        let micros = match exact.then(|| nanos_to_micros(nanos, negative)) {
            Some(Some(micros)) => micros,
            _ => std::str::from_utf8(text).ok()?.parse().ok()?,
        };
        micros.is_finite().then_some((Some(micros), Some(nanos)))
    }
}

/// The `f64` nearest to `nanos / 1000` (halves to even), which is what
/// parsing the decimal text of a number of microseconds with at most three
/// decimals gives; `negative` is its sign (the text `-0` gives `-0.0`).
/// `None` below 4,096 ns and from 2^62 ns (146 years after the epoch) on,
/// where the arithmetic below would not fit 64 bits; the text is then
/// parsed.
fn nanos_to_micros(nanos: i64, negative: bool) -> Option<f64> {
    let n = nanos.unsigned_abs();
    if n == 0 {
        return Some(if negative { -0.0 } else { 0.0 });
    }
    // With q = n * 2^shift / 1000 of 53 bits, q rounded to an integer is
    // the significand and 2^-shift the scale. n has `bits` bits, so q has
    // 53 or 54 bits with shift = 63 - bits.
    let bits = 64 - n.leading_zeros();
    let mut shift = 63u32.checked_sub(bits)?;
    if !(1..=50).contains(&shift) {
        return None;
    }
    let (whole, part) = (n / 1000, n % 1000);
    // (q, remainder) of n * 2^shift / 1000, without overflow: whole <<
    // shift has at most 54 bits, part << shift at most 60.
    let divide = |shift: u32| {
        let low = part << shift;
        ((whole << shift) + low / 1000, low % 1000)
    };
    let (mut q, mut rest) = divide(shift);
    if q >= 1 << 53 {
        shift -= 1;
        (q, rest) = divide(shift);
    }
    if rest > 500 || (rest == 500 && q % 2 == 1) {
        q += 1;
    }
    // q <= 2^53 is exact in an f64, and dividing by a power of two is exact.
    let micros = q as f64 / (1u64 << shift) as f64;
    Some(if negative { -micros } else { micros })
}

#[cfg(test)]
mod tests {
    use super::super::RawEvent;
    use super::*;

    /// The event [`parse_into`] reads at the start of `text`, and its
    /// length.
    fn by_plain(text: &str, line: usize) -> Option<(Event, usize)> {
        let mut event = Event::default();
        parse_into(text.as_bytes(), line, &mut event).map(|plain| (event, plain.len))
    }

    /// The event serde_json reads at the start of `text`, and its length.
    fn by_serde(text: &str, line: usize) -> Option<(Event, usize)> {
        let mut stream =
            serde_json::Deserializer::from_slice(text.as_bytes()).into_iter::<RawEvent<'_>>();
        let raw = stream.next()?.ok()?;
        let end = stream.byte_offset();
        Some((raw.into_event(line).ok()?, end))
    }

    #[test]
    fn plain_events_read_as_serde_json_reads_them() {
        let texts = [
            r#"{"name":"solve","cat":"bench.c","pid":4242,"tid":4243,"ts":1700000000000000.137,"ph":"B"},"#,
            r#"{"name":"transfer","cat":"bench.c","pid":1,"tid":2,"ts":1.5,"ph":"b","id":4425225064153088}"#,
            r#"{"name":"q","cat":"flow","pid":1,"tid":2,"ts":3,"ph":"f","bp":"e","id":"0x1f"}"#,
            r#"{"name":"x","ph":"X","pid":1,"tid":1,"ts":-2.5,"dur":0.0005}"#,
            r#"{ "name" : "ä ü" ,	"ph":"i",
"pid":0,"tid":9223372036854775807,"ts":0,"s":"t","extra":-12.75}  "#,
            r#"{}"#,
            r#"{"ph":"Q","ph":"B","name":"twice","name":"last"}"#,
            r#"{"ts":1712345678901234.5675,"dur":12.0001}"#,
            r#"{"ts":9223372036854775.807}"#,
            r#"{"ts":-9223372036854775.807,"dur":-0.000}"#,
            r#"{"ts":0.5,"dur":4.096}"#,
            r#"{"ts":1.23456,"dur":123456789012345.6789}"#,
            r#"{"names":"x","pi":1,"tsx":2,"i":3,"p":4,"t":5,"":6,"n":"7","idx":8,"durs":9,"ph":"i"}"#,
            r#"{"pid":1,"tid":2,"cat":"c","ts":3,"name":"n","dur":4,"id":"i","ph":"X"}"#,
        ];
        for text in texts {
            let plain = by_plain(text, 7);
            assert!(plain.is_some(), "{text}");
            assert_eq!(plain, by_serde(text, 7), "{text}");
        }
        // Read into the event that held the one before, each reads the same.
        let mut event = Event::default();
        for text in texts.iter().chain(&texts) {
            let plain = parse_into(text.as_bytes(), 7, &mut event).expect("plain");
            assert_eq!(
                Some((event.clone(), plain.len)),
                by_serde(text, 7),
                "{text}"
            );
        }
    }

    #[test]
    fn the_line_breaks_of_an_event_are_counted() {
        let text = "{ \"ph\":\"i\",\n\"pid\":1\r\n,\n  \"ts\":2 }\n,";
        let mut event = Event::default();
        let plain = parse_into(text.as_bytes(), 1, &mut event).expect("plain");
        assert_eq!(plain.len, text.len() - 2);
        assert_eq!(plain.newlines, 3);
        assert_eq!(&text[plain.line_start..plain.len], "  \"ts\":2 }");
        let one_line = parse_into(br#"{"ph":"B","ph":"Q"}"#, 1, &mut event).expect("plain");
        assert_eq!((one_line.newlines, one_line.line_start), (0, 0));
        assert_eq!(event.ph, Some(Phase::Other("Q".to_string())));
    }

    #[test]
    fn microseconds_from_nanoseconds_round_as_parsing_does() {
        // A fixed pseudo-random sequence (xorshift) of magnitudes and digits.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..200_000 {
            let nanos = ((next() >> (next() % 64)) & i64::MAX as u64) as i64;
            let negative = round % 3 == 0;
            let text = format!(
                "{}{}.{:03}",
                if negative { "-" } else { "" },
                nanos / 1000,
                nanos % 1000
            );
            let parsed: f64 = text.parse().unwrap();
            if let Some(micros) = nanos_to_micros(nanos, negative) {
                assert_eq!(micros.to_bits(), parsed.to_bits(), "{text}");
            }
        }
        // Halfway between two f64s (which are half a microsecond apart
        // from 2^51 to 2^52 microseconds): to the even one.
        for text in [
            "2251799813685248.250",
            "2251799813685248.750",
            "2251799813685249.250",
            "-2251799813685249.750",
            "4503599627370495.5",
        ] {
            let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
            let nanos: i64 = format!("{whole}{fraction:0<3}").parse().unwrap();
            let parsed: f64 = text.parse().unwrap();
            let micros = nanos_to_micros(nanos, text.starts_with('-')).expect("in range");
            assert_eq!(micros.to_bits(), parsed.to_bits(), "{text}");
        }
    }

    #[test]
    fn anything_else_is_left_to_serde_json() {
        let texts = [
            r#"{"name":"a\"b","ph":"B"}"#,
            r#"{"n\u0061me":"a"}"#,
            r#"{"name":"a","args":{"k":1}}"#,
            r#"{"name":3}"#,
            r#"{"pid":-1}"#,
            r#"{"pid":-0}"#,
            r#"{"pid":1.0}"#,
            r#"{"pid":99999999999999999999}"#,
            r#"{"id":-3}"#,
            r#"{"ts":1e3}"#,
            r#"{"ts":01}"#,
            r#"{"ts":1.}"#,
            r#"{"ts":9223372036854775.808}"#,
            r#"{"ts":9999999999999999.999}"#,
            r#"{"dur":12345678901234567890.1}"#,
            r#"{"x":true}"#,
            r#"{"x":[1]}"#,
            r#"{"name":"a""#,
            r#"{"name""#,
            r#"{"nam"#,
            r#"{"name":"a","#,
            r#"{"name":"a" "ph":"B"}"#,
            r#"{"name":"a",}"#,
            "{\"name\":\"tab\there\"}",
            r#"[]"#,
        ];
        for text in texts {
            assert_eq!(by_plain(text, 1), None, "{text}");
        }
    }
}

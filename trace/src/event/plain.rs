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

use super::{micros_text_to_ns, Event, Phase};

/// The event at the start of `bytes` (which may have more input after it)
/// and the number of bytes it took, when it has the plain form; `line` is
/// the line it starts on.
pub(crate) fn parse(bytes: &[u8], line: usize) -> Option<(Event, usize)> {
    let mut at = Cursor { bytes, at: 0 };
    at.expect(b'{')?;
    let mut event = Event {
        line,
        ..Event::default()
    };
    at.whitespace();
    if at.peek()? == b'}' {
        return Some((event, at.at + 1));
    }
    loop {
        let key = at.string()?;
        at.whitespace();
        at.expect(b':')?;
        at.whitespace();
        match key {
            b"name" => event.name = Some(at.text()?.to_string()),
            b"cat" => event.cat = Some(at.text()?.to_string()),
            b"ph" => event.ph = Some(Phase::from_code(at.text()?)),
            b"pid" => event.pid = Some(at.integer()?),
            b"tid" => event.tid = Some(at.integer()?),
            b"ts" => (event.ts, event.ts_ns) = at.time()?,
            b"dur" => (event.dur, event.dur_ns) = at.time()?,
            // A numeric id is kept as its decimal text, as serde_json
            // writes a non-negative integer.
            b"id" => {
                event.id = Some(if at.peek()? == b'"' {
                    at.text()?.to_string()
                } else {
                    at.integer()?.to_string()
                })
            }
            b"args" => return None,
            _ => {
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
            b'}' => return Some((event, at.at + 1)),
            _ => return None,
        }
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    fn whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
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

    fn text(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.string()?).ok()
    }

    /// A JSON number without an exponent, as text.
    fn number(&mut self) -> Option<&'a str> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let whole = self.digits();
        // JSON allows no leading zero before another digit.
        if whole == 0 || (whole > 1 && self.bytes[self.at - whole] == b'0') {
            return None;
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return None;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            return None;
        }
        std::str::from_utf8(&self.bytes[start..self.at]).ok()
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        self.at - start
    }

    /// A non-negative integer that fits an `i64` (serde_json reads `-0` as
    /// a float; negative ids and pids are left to it).
    fn integer(&mut self) -> Option<i64> {
        let text = self.number()?;
        if text.starts_with('-') || text.contains('.') {
            return None;
        }
        text.parse().ok()
    }

    /// A time in microseconds, as `f64` and as exact nanoseconds.
    fn time(&mut self) -> Option<(Option<f64>, Option<i64>)> {
        let text = self.number()?;
        let micros: f64 = text.parse().ok()?;
        let nanos = micros_text_to_ns(text)?;
        micros.is_finite().then_some((Some(micros), Some(nanos)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::RawEvent;
    use super::*;

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
        ];
        for text in texts {
            let plain = parse(text.as_bytes(), 7);
            assert!(plain.is_some(), "{text}");
            assert_eq!(plain, by_serde(text, 7), "{text}");
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
            r#"{"x":true}"#,
            r#"{"x":[1]}"#,
            r#"{"name":"a""#,
            r#"{"name":"a","#,
            r#"{"name":"a" "ph":"B"}"#,
            r#"{"name":"a",}"#,
            "{\"name\":\"tab\there\"}",
            r#"[]"#,
        ];
        for text in texts {
            assert_eq!(parse(text.as_bytes(), 1), None, "{text}");
        }
    }
}

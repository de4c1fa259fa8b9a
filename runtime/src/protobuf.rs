//! A minimal protocol buffers encoder: varints, fixed64, doubles and
//! length-delimited fields appended to a `Vec<u8>`.
//!
//! Hand-written on purpose. The Perfetto writer encodes one small
//! `TracePacket` per event on the writer thread, and that thread's CPU per
//! event is taken from the traced application (on an HPC node every core
//! runs it). A generated encoder (prost) builds an owned message struct per
//! packet, computes its length in a separate pass and allocates for its
//! repeated fields; appending tags and varints straight into the output
//! buffer costs a fraction of that. The few message types written are
//! spelled out with their field numbers in [`crate::perfetto`].
//!
//! Nested messages are written in place: [`Encoder::begin`] reserves one
//! byte for the length and [`Encoder::end`] fills it in, moving the body
//! only in the rare case where it is 128 bytes or longer.

/// Wire type of varint fields (`int32`, `uint64`, `bool`, enums).
const VARINT: u8 = 0;
/// Wire type of `fixed64` and `double` fields.
const FIXED64: u8 = 1;
/// Wire type of strings, bytes and nested messages.
const LEN: u8 = 2;

/// Appends the base-128 varint encoding of `v`.
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Bytes the varint encoding of `v` takes.
#[inline]
pub fn varint_len(v: u64) -> usize {
    // 1 + floor(bits / 7), with 0 taking one byte.
    ((64 - (v | 1).leading_zeros()) as usize).div_ceil(7)
}

#[inline]
fn put_tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    put_varint(out, (u64::from(field) << 3) | u64::from(wire));
}

/// A nested message under way: where its length byte sits.
#[must_use = "a nested message must be closed with Encoder::end"]
pub struct Nested(usize);

/// Appends fields to a byte buffer.
pub struct Encoder<'a> {
    /// The buffer written to.
    pub out: &'a mut Vec<u8>,
}

impl<'a> Encoder<'a> {
    /// An encoder appending to `out`.
    #[inline]
    pub fn new(out: &'a mut Vec<u8>) -> Encoder<'a> {
        Encoder { out }
    }

    /// A varint field (`uint32`, `uint64`, `int32` ≥ 0, `bool`, enum).
    #[inline]
    pub fn uint(&mut self, field: u32, v: u64) {
        put_tag(self.out, field, VARINT);
        put_varint(self.out, v);
    }

    /// An `int64` field: negative values take ten bytes, as protobuf says.
    #[inline]
    pub fn int(&mut self, field: u32, v: i64) {
        self.uint(field, v as u64);
    }

    /// A `fixed64` field.
    #[inline]
    pub fn fixed64(&mut self, field: u32, v: u64) {
        put_tag(self.out, field, FIXED64);
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    /// A `double` field.
    #[inline]
    pub fn double(&mut self, field: u32, v: f64) {
        self.fixed64(field, v.to_bits());
    }

    /// A `string` or `bytes` field. Strings must be UTF-8: callers pass
    /// text that is, or replace what is not (see [`Encoder::text`]).
    #[inline]
    pub fn bytes(&mut self, field: u32, v: &[u8]) {
        put_tag(self.out, field, LEN);
        put_varint(self.out, v.len() as u64);
        self.out.extend_from_slice(v);
    }

    /// A `string` field from bytes that may not be UTF-8: invalid
    /// sequences become U+FFFD, so every decoder accepts the message.
    pub fn text(&mut self, field: u32, v: &[u8]) {
        match std::str::from_utf8(v) {
            Ok(_) => self.bytes(field, v),
            Err(_) => self.bytes(field, String::from_utf8_lossy(v).as_bytes()),
        }
    }

    /// Opens a nested message in `field`; close it with [`Encoder::end`].
    #[inline]
    pub fn begin(&mut self, field: u32) -> Nested {
        put_tag(self.out, field, LEN);
        self.out.push(0);
        Nested(self.out.len())
    }

    /// Closes a nested message: writes its length before its body.
    #[inline]
    pub fn end(&mut self, nested: Nested) {
        let start = nested.0;
        let len = self.out.len() - start;
        if len < 0x80 {
            self.out[start - 1] = len as u8;
        } else {
            let mut prefix = Vec::with_capacity(10);
            put_varint(&mut prefix, len as u64);
            // The reserved byte takes the first of the prefix; the rest is
            // inserted before the body.
            self.out[start - 1] = prefix[0];
            let rest = &prefix[1..];
            self.out.splice(start..start, rest.iter().copied());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_take_seven_bits_per_byte() {
        for (v, bytes) in [
            (0u64, vec![0u8]),
            (1, vec![1]),
            (127, vec![0x7f]),
            (128, vec![0x80, 1]),
            (300, vec![0xac, 0x02]),
            (
                u64::MAX,
                vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1],
            ),
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out, bytes, "{v}");
            assert_eq!(varint_len(v), bytes.len(), "{v}");
        }
    }

    #[test]
    fn a_nested_message_of_any_length_gets_its_length_prefix() {
        for body in [0usize, 5, 127, 128, 300, 20_000] {
            let mut out = Vec::new();
            let mut e = Encoder::new(&mut out);
            let m = e.begin(3);
            e.bytes(1, &vec![b'x'; body]);
            e.end(m);
            e.uint(2, 7);
            // Tag of field 3, length, then the body: tag 1, length, bytes.
            let inner = 1 + varint_len(body as u64) + body;
            let mut expect = vec![(3 << 3) | 2];
            put_varint(&mut expect, inner as u64);
            expect.push((1 << 3) | 2);
            put_varint(&mut expect, body as u64);
            expect.extend(std::iter::repeat_n(b'x', body));
            expect.extend([2 << 3, 7]);
            assert_eq!(out, expect, "body of {body} bytes");
        }
    }

    #[test]
    fn text_that_is_not_utf8_is_replaced() {
        let mut out = Vec::new();
        Encoder::new(&mut out).text(1, b"a\xffb");
        assert_eq!(out, [0x0a, 5, b'a', 0xef, 0xbf, 0xbd, b'b']);
    }
}

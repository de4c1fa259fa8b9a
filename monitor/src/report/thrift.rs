//! The few parts of the Thrift compact protocol that Parquet metadata needs:
//! structs with i32, i64, binary, list and nested struct fields.
//!
//! A field header is one byte, `(id delta) << 4 | type`, while the delta
//! from the previous field id of the same struct is 1 to 15 (always so
//! here: callers write fields in increasing id order, and the writer checks
//! it). Integers are zigzag varints; a list header is `size << 4 | element
//! type` below 15 elements and `0xF0 | element type` then a varint size
//! otherwise; a struct ends with a zero byte.

/// Compact protocol type codes.
#[derive(Clone, Copy)]
#[repr(u8)]
pub enum Type {
    I32 = 5,
    I64 = 6,
    Binary = 8,
    List = 9,
    Struct = 12,
}

/// Writes one top-level struct into a byte vector.
pub struct Writer {
    buf: Vec<u8>,
    last_ids: Vec<i16>,
}

impl Writer {
    /// A writer positioned inside a top-level struct.
    pub fn new() -> Writer {
        Writer {
            buf: Vec::new(),
            last_ids: vec![0],
        }
    }

    /// Ends the top-level struct and returns the bytes.
    pub fn finish(mut self) -> Vec<u8> {
        self.end_struct();
        assert!(self.last_ids.is_empty(), "unbalanced thrift structs");
        self.buf
    }

    fn field(&mut self, id: i16, ty: Type) {
        let last = self.last_ids.last_mut().expect("inside a struct");
        let delta = id - *last;
        assert!((1..=15).contains(&delta), "thrift field ids out of order");
        *last = id;
        self.buf.push(((delta as u8) << 4) | ty as u8);
    }

    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn zigzag(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }

    /// An i32 field.
    pub fn i32(&mut self, id: i16, v: i32) {
        self.field(id, Type::I32);
        self.zigzag(v.into());
    }

    /// An i64 field.
    pub fn i64(&mut self, id: i16, v: i64) {
        self.field(id, Type::I64);
        self.zigzag(v);
    }

    /// A string field.
    pub fn string(&mut self, id: i16, s: &str) {
        self.field(id, Type::Binary);
        self.string_value(s);
    }

    fn string_value(&mut self, s: &str) {
        self.varint(s.len() as u64);
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// A list field header for `len` elements of type `elem`; the caller
    /// then writes the elements.
    pub fn list(&mut self, id: i16, elem: Type, len: usize) {
        self.field(id, Type::List);
        if len < 15 {
            self.buf.push(((len as u8) << 4) | elem as u8);
        } else {
            self.buf.push(0xF0 | elem as u8);
            self.varint(len as u64);
        }
    }

    /// A list of i32 field.
    pub fn i32_list(&mut self, id: i16, items: &[i32]) {
        self.list(id, Type::I32, items.len());
        for &v in items {
            self.zigzag(v.into());
        }
    }

    /// A list of strings field.
    pub fn string_list(&mut self, id: i16, items: &[&str]) {
        self.list(id, Type::Binary, items.len());
        for s in items {
            self.string_value(s);
        }
    }

    /// Starts a struct field; end it with [`Writer::end_struct`].
    pub fn begin_struct(&mut self, id: i16) {
        self.field(id, Type::Struct);
        self.last_ids.push(0);
    }

    /// Starts a struct that is a list element.
    pub fn begin_element(&mut self) {
        self.last_ids.push(0);
    }

    /// Ends the innermost struct.
    pub fn end_struct(&mut self) {
        self.buf.push(0);
        self.last_ids.pop();
    }
}

//! Parquet export, written directly: one row group, one uncompressed
//! version-1 data page per column, PLAIN encoding.
//!
//! Schema: `host` (required BYTE_ARRAY, UTF8), `time_stamp [s]` (required
//! DOUBLE), then every series as an optional DOUBLE. File layout:
//!
//! ```text
//! "PAR1"
//! per column: PageHeader (thrift compact) | definition levels | values
//! FileMetaData (thrift compact) | its length (4 bytes LE) | "PAR1"
//! ```
//!
//! Definition levels (optional columns only; bit width 1) are one
//! RLE/bit-packed hybrid run of bit-packed groups of 8, behind the 4-byte
//! length that data page v1 requires. Values are the present ones only:
//! doubles as 8 bytes LE, strings as a 4-byte LE length and the bytes.
//!
//! Thrift field ids follow `parquet.thrift` of apache/parquet-format.

use std::io::{self, Write};

use super::table::{Table, HOST, TIME};
use super::thrift::{Type, Writer};

const MAGIC: &[u8; 4] = b"PAR1";

// Enum values from parquet.thrift.
const TYPE_DOUBLE: i32 = 5;
const TYPE_BYTE_ARRAY: i32 = 6;
const REQUIRED: i32 = 0;
const OPTIONAL: i32 = 1;
const CONVERTED_UTF8: i32 = 0;
const ENCODING_PLAIN: i32 = 0;
const ENCODING_RLE: i32 = 3;
const CODEC_UNCOMPRESSED: i32 = 0;
const PAGE_DATA: i32 = 0;

/// One column chunk as written, for the footer.
struct Chunk {
    name: String,
    physical: i32,
    offset: u64,
    size: u64,
    num_values: usize,
}

/// Writes `table` as a Parquet file.
pub fn write_parquet(table: &Table, out: &mut dyn Write) -> io::Result<()> {
    let rows = table.num_rows();
    let mut offset = MAGIC.len() as u64;
    out.write_all(MAGIC)?;
    let mut chunks = Vec::with_capacity(table.num_series() + 2);
    if i32::try_from(rows).is_err() {
        return Err(too_large(&format!("{rows} rows")));
    }
    let mut emit = |name: &str, physical: i32, page: Vec<u8>, out: &mut dyn Write| {
        if i32::try_from(page.len()).is_err() {
            return Err(too_large(&format!("column `{name}`")));
        }
        let header = page_header(page.len(), rows);
        out.write_all(&header)?;
        out.write_all(&page)?;
        let size = (header.len() + page.len()) as u64;
        chunks.push(Chunk {
            name: name.to_string(),
            physical,
            offset,
            size,
            num_values: rows,
        });
        offset += size;
        io::Result::Ok(())
    };

    let mut hosts = Vec::new();
    for host in table.host_column() {
        hosts.extend_from_slice(&(host.len() as u32).to_le_bytes());
        hosts.extend_from_slice(host.as_bytes());
    }
    emit(HOST, TYPE_BYTE_ARRAY, hosts, out)?;

    let mut times = Vec::with_capacity(rows * 8);
    for t in table.time_column() {
        times.extend_from_slice(&t.to_le_bytes());
    }
    emit(TIME, TYPE_DOUBLE, times, out)?;

    let headers = table.series_headers();
    for (j, name) in headers.iter().enumerate() {
        let values: Vec<Option<f64>> = table.series_column(j).collect();
        emit(name, TYPE_DOUBLE, optional_doubles(&values), out)?;
    }

    let footer = file_metadata(&chunks, rows);
    out.write_all(&footer)?;
    out.write_all(&(footer.len() as u32).to_le_bytes())?;
    out.write_all(MAGIC)
}

/// A table too large for one page per column (2 GiB, 2^31 values).
fn too_large(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{what}: too large for a one-page Parquet column"),
    )
}

/// The page body of an optional DOUBLE column: definition levels, then the
/// present values.
fn optional_doubles(values: &[Option<f64>]) -> Vec<u8> {
    let groups = values.len().div_ceil(8);
    let mut levels = Vec::with_capacity(groups + 5);
    let mut header = ((groups as u64) << 1) | 1;
    while header >= 0x80 {
        levels.push((header as u8) | 0x80);
        header >>= 7;
    }
    levels.push(header as u8);
    for group in values.chunks(8) {
        let mut byte = 0u8;
        for (bit, v) in group.iter().enumerate() {
            if v.is_some() {
                byte |= 1 << bit;
            }
        }
        levels.push(byte);
    }
    let present = values.iter().flatten().count();
    let mut page = Vec::with_capacity(4 + levels.len() + present * 8);
    page.extend_from_slice(&(levels.len() as u32).to_le_bytes());
    page.extend_from_slice(&levels);
    for v in values.iter().flatten() {
        page.extend_from_slice(&v.to_le_bytes());
    }
    page
}

fn page_header(size: usize, rows: usize) -> Vec<u8> {
    let mut w = Writer::new();
    w.i32(1, PAGE_DATA);
    w.i32(2, size as i32);
    w.i32(3, size as i32);
    w.begin_struct(5); // DataPageHeader
    w.i32(1, rows as i32);
    w.i32(2, ENCODING_PLAIN);
    w.i32(3, ENCODING_RLE);
    w.i32(4, ENCODING_RLE);
    w.end_struct();
    w.finish()
}

fn file_metadata(chunks: &[Chunk], rows: usize) -> Vec<u8> {
    let mut w = Writer::new();
    w.i32(1, 1); // version
    w.list(2, Type::Struct, chunks.len() + 1); // schema
    w.begin_element();
    w.string(4, "schema");
    w.i32(5, chunks.len() as i32);
    w.end_struct();
    for (i, c) in chunks.iter().enumerate() {
        w.begin_element();
        w.i32(1, c.physical);
        w.i32(3, if i < 2 { REQUIRED } else { OPTIONAL });
        w.string(4, &c.name);
        if c.physical == TYPE_BYTE_ARRAY {
            w.i32(6, CONVERTED_UTF8);
        }
        w.end_struct();
    }
    w.i64(3, rows as i64);
    w.list(4, Type::Struct, 1); // row_groups
    w.begin_element();
    w.list(1, Type::Struct, chunks.len());
    let mut total = 0;
    for c in chunks {
        total += c.size;
        w.begin_element();
        w.i64(2, c.offset as i64); // file_offset
        w.begin_struct(3); // ColumnMetaData
        w.i32(1, c.physical);
        w.i32_list(2, &[ENCODING_PLAIN, ENCODING_RLE]);
        w.string_list(3, &[&c.name]);
        w.i32(4, CODEC_UNCOMPRESSED);
        w.i64(5, c.num_values as i64);
        w.i64(6, c.size as i64);
        w.i64(7, c.size as i64);
        w.i64(9, c.offset as i64); // data_page_offset
        w.end_struct();
        w.end_struct();
    }
    w.i64(2, total as i64);
    w.i64(3, rows as i64);
    w.end_struct();
    w.string(
        6,
        concat!("perfflow-monitor version ", env!("CARGO_PKG_VERSION")),
    );
    w.finish()
}

//! ORC export through `orc-rust`'s Arrow writer, zstd-compressed;
//! `pandas.read_orc` and `pyarrow.orc` read it. Columns as
//! [`super::arrow`] gives them (`Time` as an ORC `timestamp with local
//! time zone`, in UTC).

use std::io::Write;

use orc_rust::arrow_writer::ArrowWriterBuilder;
use orc_rust::compression::CompressionType;

use super::arrow::record_batch;
use super::table::Table;
use super::WriteError;

/// Writes `table` as an ORC file.
pub fn write_orc<W: Write>(table: &Table, out: W) -> Result<(), WriteError> {
    let batch = record_batch(table)?;
    let mut writer = ArrowWriterBuilder::new(out, batch.schema())
        .with_compression(CompressionType::Zstd)
        .try_build()?;
    writer.write(&batch)?;
    writer.close()?;
    Ok(())
}

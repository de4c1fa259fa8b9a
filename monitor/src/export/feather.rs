//! Feather (version 2: the Arrow IPC file format) through arrow-rs's
//! `arrow-ipc`, zstd-compressed; `pandas.read_feather` and
//! `pyarrow.feather` read it. Columns as [`super::arrow`] gives them.

use std::io::Write;

use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_ipc::CompressionType;

use super::arrow::record_batch;
use super::table::Table;
use super::WriteError;

/// Writes `table` as a Feather file.
pub fn write_feather<W: Write>(table: &Table, out: W) -> Result<(), WriteError> {
    let batch = record_batch(table)?;
    let options = IpcWriteOptions::default().try_with_compression(Some(CompressionType::ZSTD))?;
    let mut writer = FileWriter::try_new_with_options(out, &batch.schema(), options)?;
    writer.write(&batch)?;
    writer.finish()?;
    Ok(())
}

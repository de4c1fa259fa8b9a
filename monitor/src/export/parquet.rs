//! Parquet export through arrow-rs's `parquet` crate: zstd compression,
//! dictionary encoding, page statistics, row groups of at most
//! [`ROW_GROUP_ROWS`] rows. Columns as [`super::arrow`] gives them.

use std::io::Write;

use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use super::arrow::record_batch;
use super::table::Table;
use super::WriteError;

/// Rows per row group.
pub const ROW_GROUP_ROWS: usize = 1024 * 1024;

/// Writes `table` as a Parquet file.
pub fn write_parquet<W: Write + Send>(table: &Table, out: W) -> Result<(), WriteError> {
    let batch = record_batch(table)?;
    let created_by = format!("perfflow-monitor {}", env!("CARGO_PKG_VERSION"));
    let mut writer = ArrowWriter::try_new(out, batch.schema(), Some(properties(created_by)))?;
    writer.write(&batch)?;
    writer.close()?;
    Ok(())
}

/// How perfflow writes Parquet, here and in `perfflow-trace export`: zstd
/// at its default level, dictionary encoding, page statistics, row groups
/// of at most [`ROW_GROUP_ROWS`] rows; `created_by` names the tool.
pub fn properties(created_by: String) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_dictionary_enabled(true)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_created_by(created_by)
        .build()
}

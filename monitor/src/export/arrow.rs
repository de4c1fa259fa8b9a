//! A [`Table`] as one Arrow record batch, which the Parquet, Feather and
//! ORC writers take.
//!
//! Columns: `Host` (UTF-8, never null), `Timestamps` (Unix seconds as a
//! double, as perfmon writes them and its scripts read them), every series
//! as a nullable double, and last `Time`: the same instant typed as a
//! timestamp in nanoseconds, UTC, for readers that want a time type
//! (rounded to the microsecond: the monitor writes seconds as a double,
//! which resolves about 0.24 µs).

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray, TimestampNanosecondArray};
use arrow_schema::{ArrowError, DataType, Field, Schema, TimeUnit};

use super::table::{Table, HOST, TIME};

/// Header of the typed time column.
pub const TYPED_TIME: &str = "Time";

/// The record batch of `table`.
pub fn record_batch(table: &Table) -> Result<RecordBatch, ArrowError> {
    let mut fields = vec![
        Field::new(HOST, DataType::Utf8, false),
        Field::new(TIME, DataType::Float64, false),
    ];
    let mut columns: Vec<ArrayRef> = vec![
        // Collected first: the flattened iterators have no exact size,
        // which arrow's `from_iter_values` needs.
        Arc::new(StringArray::from(table.host_column().collect::<Vec<_>>())),
        Arc::new(Float64Array::from(table.time_column().collect::<Vec<_>>())),
    ];
    for (j, header) in table.series_headers().iter().enumerate() {
        fields.push(Field::new(header, DataType::Float64, true));
        columns.push(Arc::new(Float64Array::from(
            table.series_column(j).collect::<Vec<_>>(),
        )));
    }
    fields.push(Field::new(
        TYPED_TIME,
        DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        false,
    ));
    let ns = table.time_column().map(|s| (s * 1e6).round() as i64 * 1000);
    columns.push(Arc::new(
        TimestampNanosecondArray::from_iter_values(ns).with_timezone("UTC"),
    ));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

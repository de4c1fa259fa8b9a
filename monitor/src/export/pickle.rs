//! Pickle export: what `pandas.read_pickle` loads, through `serde-pickle`
//! (pickle protocol 3).
//!
//! The file holds a `dict` from column name to `list`, columns in table
//! order (`Host`, `Timestamps`, then the series): host names as `str`,
//! everything else as `float`, missing values as `nan` (as perfmon pads
//! them). It is not a pickled `DataFrame` (that would tie the file to one
//! pandas version's internals): `pandas.DataFrame(pandas.read_pickle(path))`
//! makes the table, with the same columns, order and values as the other
//! exports.

use std::io::Write;

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::table::{Table, HOST, TIME};
use super::WriteError;

/// The table as a map of columns, serialised column by column.
struct Columns<'t, 'a>(&'t Table<'a>);

impl Serialize for Columns<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let table = self.0;
        let mut map = serializer.serialize_map(Some(table.num_series() + 2))?;
        map.serialize_entry(HOST, &table.host_column().collect::<Vec<_>>())?;
        map.serialize_entry(TIME, &table.time_column().collect::<Vec<_>>())?;
        for (j, header) in table.series_headers().iter().enumerate() {
            let values: Vec<f64> = table
                .series_column(j)
                .map(|v| v.unwrap_or(f64::NAN))
                .collect();
            map.serialize_entry(header, &values)?;
        }
        map.end()
    }
}

/// Writes `table` as a pickled `dict` of column lists.
pub fn write_pickle<W: Write>(table: &Table, mut out: W) -> Result<(), WriteError> {
    serde_pickle::to_writer(&mut out, &Columns(table), serde_pickle::SerOptions::new())?;
    Ok(())
}

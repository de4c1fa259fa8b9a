//! JSON records export: an array with one object per row, keyed by the
//! column headers (`pandas.read_json(path, orient="records")` reads it).
//! Missing values are `null`; numbers always carry a decimal point or an
//! exponent, so every series column reads as floats.

use std::io::{self, Write};

use serde_json::Value;

use super::table::{Table, HOST, TIME};

/// Writes `table` as a JSON array of row objects, one row per line.
pub fn write_records(table: &Table, out: &mut dyn Write) -> io::Result<()> {
    let key = |h: &str| Value::from(h).to_string();
    let host_key = key(HOST);
    let time_key = key(TIME);
    let series_keys: Vec<String> = table.series_headers().iter().map(|h| key(h)).collect();
    out.write_all(b"[")?;
    let mut line = String::new();
    for (i, row) in table.rows().enumerate() {
        line.clear();
        line.push_str(if i == 0 { "\n{" } else { ",\n{" });
        line.push_str(&format!(
            "{host_key}:{},{time_key}:{}",
            key(row.host),
            number(Some(row.time_stamp))
        ));
        for (k, v) in series_keys.iter().zip(&row.values) {
            line.push_str(&format!(",{k}:{}", number(*v)));
        }
        line.push('}');
        out.write_all(line.as_bytes())?;
    }
    out.write_all(b"\n]\n")
}

/// A JSON number that reads back as a float (`3000.0`, not `3000`), or
/// `null`.
fn number(v: Option<f64>) -> String {
    v.and_then(serde_json::Number::from_f64)
        .map_or_else(|| "null".to_string(), |n| n.to_string())
}

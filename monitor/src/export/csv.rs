//! CSV export: a header line, then one line per row, fields separated by
//! commas and lines ended by `\n`. A field holding a comma, a double quote,
//! a carriage return or a line feed is quoted as RFC 4180 says (inside double
//! quotes, quotes doubled). Missing values are empty fields. Numbers are
//! written in the shortest form that reads back to the same `f64`.

use std::io::{self, Write};

use super::table::Table;

/// Writes `table` as CSV.
pub fn write_csv(table: &Table, out: &mut dyn Write) -> io::Result<()> {
    let headers: Vec<String> = table.headers().iter().map(|h| quote(h)).collect();
    writeln!(out, "{}", headers.join(","))?;
    let mut line = String::new();
    for row in table.rows() {
        line.clear();
        line.push_str(&quote(row.host));
        line.push(',');
        line.push_str(&row.time_stamp.to_string());
        for v in &row.values {
            line.push(',');
            if let Some(v) = v {
                line.push_str(&v.to_string());
            }
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// `field` as a CSV field, quoted only where needed.
pub fn quote(field: &str) -> String {
    if field.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

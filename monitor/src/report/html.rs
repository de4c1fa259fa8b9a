//! The job report: one self-contained HTML page (inline CSS, plots as
//! base64 `data:` URIs, no script, nothing fetched) with the job metadata,
//! each host's hardware, the sources that were unavailable, a summary of
//! every series per host (min, mean, max and last value over the non-missing
//! samples) and every plot. All text from the job directory is escaped.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde_json::{Map, Value};

use super::input::{scalar_text, JobMetadata, MetricGroup};
use super::plots::Plot;

const STYLE: &str = "
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #1e1e1e; }
h1 { border-bottom: 2px solid #1f77b4; padding-bottom: .2em; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border: 1px solid #ccc; padding: .2em .6em; text-align: left; vertical-align: top; }
th { background: #eef3f8; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.kv th { width: 12em; }
figure { margin: 1em 0 2em; }
figure img { width: 100%; max-width: 1000px; border: 1px solid #ddd; }
figcaption { font-size: .9em; color: #555; }
.none { color: #777; font-style: italic; }
nav { margin-bottom: 1em; }
";

/// Statistics of one series on one host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// Smallest value.
    pub min: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Largest value.
    pub max: f64,
    /// The last non-missing value.
    pub last: f64,
}

/// Min, mean, max and last over the finite values, `None` if there are none.
pub fn stats(values: &[Option<f64>]) -> Option<Stats> {
    let mut it = values.iter().flatten().copied().filter(|v| v.is_finite());
    let first = it.next()?;
    let mut s = Stats {
        min: first,
        mean: 0.0,
        max: first,
        last: first,
    };
    let (mut sum, mut n) = (first, 1.0);
    for v in it {
        s.min = s.min.min(v);
        s.max = s.max.max(v);
        s.last = v;
        sum += v;
        n += 1.0;
    }
    s.mean = sum / n;
    Some(s)
}

/// Writes the report page.
pub fn write_report(
    meta: &JobMetadata,
    groups: &[MetricGroup],
    plots: &[(Plot, Vec<u8>)],
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut page = String::new();
    let id = escape(&meta.job_id);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>Job report {id}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>Job report {id}</h1>\n"
    );
    contents(groups, plots, &mut page);
    job_section(meta, &mut page);
    hardware_section(meta, &mut page);
    unavailable_section(meta, &mut page);
    summary_section(groups, &mut page);
    plot_section(groups, plots, &mut page);
    page.push_str("</body>\n</html>\n");
    out.write_all(page.as_bytes())
}

/// Links to the sections and to each group's plots.
fn contents(groups: &[MetricGroup], plots: &[(Plot, Vec<u8>)], page: &mut String) {
    page.push_str(
        "<nav><a href=\"#job\">Job</a> | <a href=\"#hardware\">Hardware</a> | \
         <a href=\"#unavailable\">Unavailable sources</a> | <a href=\"#summary\">Summary</a> | \
         <a href=\"#plots\">Plots</a>",
    );
    for group in groups {
        let n = plots.iter().filter(|(p, _)| p.group == group.name).count();
        if n > 0 {
            let name = escape(&group.name);
            let _ = write!(page, " | <a href=\"#plots-{name}\">{name} ({n})</a>");
        }
    }
    page.push_str("</nav>\n");
}

fn job_section(meta: &JobMetadata, page: &mut String) {
    let start = meta.number("start_time");
    let end = meta.number("end_time");
    let mut rows: Vec<(&str, Option<String>)> = vec![
        ("Job id", Some(meta.job_id.clone())),
        ("Scheduler", meta.text("scheduler")),
        ("Name", meta.text("name")),
        ("System", meta.text("system")),
        ("Partition", meta.text("partition")),
        ("Environment", meta.text("env")),
        ("Launcher", meta.text("launcher")),
        ("User", meta.text("user")),
        ("Start", start.map(utc)),
        ("End", end.map(utc)),
    ];
    if let (Some(s), Some(e)) = (start, end) {
        rows.push(("Duration", Some(duration(e - s))));
    }
    rows.push(("Command", meta.command()));
    rows.push(("Exit status", meta.text("exit_status")));
    rows.push((
        "Sampling interval",
        meta.number("sampling_frequency").map(|s| format!("{s} s")),
    ));
    let hosts: Vec<&str> = meta.hosts.iter().map(|h| h.host.as_str()).collect();
    rows.push((
        "Hosts",
        Some(format!("{} ({})", hosts.join(", "), hosts.len())),
    ));
    page.push_str("<section id=\"job\">\n<h2>Job</h2>\n<table class=\"kv\">\n");
    for (key, value) in rows {
        let value = match value {
            Some(v) => format!("<td>{}</td>", escape(&v)),
            None => "<td class=\"none\">not recorded</td>".to_string(),
        };
        let _ = writeln!(page, "<tr><th>{key}</th>{value}</tr>");
    }
    page.push_str("</table>\n</section>\n");
}

fn hardware_section(meta: &JobMetadata, page: &mut String) {
    page.push_str("<section id=\"hardware\">\n<h2>Hardware</h2>\n");
    if meta.hosts.is_empty() {
        page.push_str("<p class=\"none\">No hosts recorded.</p>\n");
    }
    for host in &meta.hosts {
        let _ = writeln!(page, "<h3>{}</h3>", escape(&host.host));
        let mut rows = Vec::new();
        flatten("", &host.hardware, &mut rows);
        if rows.is_empty() {
            page.push_str("<p class=\"none\">No hardware description.</p>\n");
            continue;
        }
        page.push_str("<table class=\"kv\">\n");
        for (k, v) in rows {
            let _ = writeln!(
                page,
                "<tr><th>{}</th><td>{}</td></tr>",
                escape(&k),
                escape(&v)
            );
        }
        page.push_str("</table>\n");
    }
    page.push_str("</section>\n");
}

/// Free-form JSON as (dotted key, text) rows; arrays of scalars are joined
/// with commas, other arrays are numbered `key[i]`.
fn flatten(prefix: &str, map: &Map<String, Value>, rows: &mut Vec<(String, String)>) {
    for (k, v) in map {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        flatten_value(key, v, rows);
    }
}

fn flatten_value(key: String, value: &Value, rows: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => flatten(&key, map, rows),
        Value::Array(items) if items.iter().all(|v| !v.is_object() && !v.is_array()) => {
            let words: Vec<String> = items
                .iter()
                .map(|v| scalar_text(v).unwrap_or_default())
                .collect();
            rows.push((key, words.join(", ")));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                flatten_value(format!("{key}[{i}]"), item, rows);
            }
        }
        Value::Null => rows.push((key, String::new())),
        scalar => rows.push((key, scalar_text(scalar).unwrap_or_default())),
    }
}

fn unavailable_section(meta: &JobMetadata, page: &mut String) {
    page.push_str("<section id=\"unavailable\">\n<h2>Unavailable sources</h2>\n");
    let items: Vec<(&str, &str)> = meta
        .hosts
        .iter()
        .flat_map(|h| {
            h.unavailable
                .iter()
                .map(move |u| (h.host.as_str(), u.as_str()))
        })
        .collect();
    if items.is_empty() {
        page.push_str("<p class=\"none\">Every requested source was available.</p>\n");
    } else {
        page.push_str("<ul>\n");
        for (host, what) in items {
            let _ = writeln!(page, "<li><b>{}</b>: {}</li>", escape(host), escape(what));
        }
        page.push_str("</ul>\n");
    }
    page.push_str("</section>\n");
}

fn summary_section(groups: &[MetricGroup], page: &mut String) {
    page.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n");
    if groups.is_empty() {
        page.push_str("<p class=\"none\">No metric files were found.</p>\n");
    }
    for group in groups {
        let _ = writeln!(page, "<h3>{}</h3>", escape(&group.name));
        page.push_str(
            "<table class=\"summary\">\n<tr><th>Metric</th><th>Unit</th><th>Host</th>\
             <th>Min</th><th>Mean</th><th>Max</th><th>Last</th></tr>\n",
        );
        for series in group.series_names() {
            let unit = escape(group.unit(series).unwrap_or(""));
            for host in &group.hosts {
                let Some(values) = host.series.get(series) else {
                    continue;
                };
                let cells = match stats(values) {
                    Some(s) => [s.min, s.mean, s.max, s.last]
                        .iter()
                        .map(|v| format!("<td class=\"num\">{}</td>", number(*v)))
                        .collect::<String>(),
                    None => "<td class=\"none\" colspan=\"4\">no values</td>".to_string(),
                };
                let _ = writeln!(
                    page,
                    "<tr><td>{}</td><td>{unit}</td><td>{}</td>{cells}</tr>",
                    escape(series),
                    escape(&host.host)
                );
            }
        }
        page.push_str("</table>\n");
    }
    page.push_str("</section>\n");
}

fn plot_section(groups: &[MetricGroup], plots: &[(Plot, Vec<u8>)], page: &mut String) {
    page.push_str("<section id=\"plots\">\n<h2>Plots</h2>\n");
    if plots.is_empty() {
        page.push_str("<p class=\"none\">No series had a non-zero value to plot.</p>\n");
    }
    for group in groups {
        let mine: Vec<&(Plot, Vec<u8>)> = plots
            .iter()
            .filter(|(p, _)| p.group == group.name)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let name = escape(&group.name);
        let _ = writeln!(page, "<h3 id=\"plots-{name}\">{name}</h3>");
        for (plot, png) in mine {
            let title = escape(&plot.title);
            let _ = writeln!(
                page,
                "<figure><img src=\"data:image/png;base64,{}\" alt=\"{title}\">\
                 <figcaption>{title} &mdash; plots/{}</figcaption></figure>",
                base64(png),
                escape(&plot.file_name)
            );
        }
    }
    page.push_str("</section>\n");
}

/// `text` with `&`, `<`, `>`, `"` and `'` replaced by entities.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A value for the summary table: up to 4 decimals, trailing zeros
/// dropped; exponent form from a million up and below a thousandth.
pub fn number(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".to_string()
    } else if !(1e-3..1e6).contains(&a) {
        format!("{v:.3e}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A Unix time as a UTC calendar date and time of day.
pub struct Utc {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub milli: i64,
}

impl Utc {
    /// The calendar date and time of `unix` seconds (before 1970 too).
    pub fn of(unix: f64) -> Utc {
        let ms = (unix * 1000.0).floor() as i64;
        let secs = ms.div_euclid(1000);
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        Utc {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day,
            hour: rem / 3600,
            minute: rem % 3600 / 60,
            second: rem % 60,
            milli: ms.rem_euclid(1000),
        }
    }
}

/// Unix seconds as `YYYY-MM-DD hh:mm:ss UTC`.
pub fn utc(unix: f64) -> String {
    let t = Utc::of(unix);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

/// Seconds as `1 h 02 min 03 s`, or `12.3 s` under a minute.
pub fn duration(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return format!("{secs} s");
    }
    if secs < 60.0 {
        return format!("{} s", number(secs));
    }
    let s = secs.round() as u64;
    let (h, m, s) = (s / 3600, s % 3600 / 60, s % 60);
    if h > 0 {
        format!("{h} h {m:02} min {s:02} s")
    } else {
        format!("{m} min {s:02} s")
    }
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_test_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn utc_dates_follow_the_civil_calendar() {
        assert_eq!(utc(0.0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400.5), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_763_700_000.0), "2025-11-21 04:40:00 UTC");
    }

    #[test]
    fn durations_read_in_hours_minutes_and_seconds() {
        assert_eq!(duration(12.25), "12.25 s");
        assert_eq!(duration(3723.0), "1 h 02 min 03 s");
        assert_eq!(duration(125.0), "2 min 05 s");
    }

    #[test]
    fn stats_skip_missing_values() {
        let s = stats(&[None, Some(2.0), None, Some(4.0), None]).unwrap();
        assert_eq!((s.min, s.mean, s.max, s.last), (2.0, 3.0, 4.0, 4.0));
        assert_eq!(stats(&[None, None]), None);
    }
}

//! Self-contained HTML pages: inline CSS, charts as inline SVG, no script,
//! nothing fetched. [`Page`] collects sections; helpers write the pieces
//! every report shares (key/value tables, tables, panel grids, the host
//! legend). All text from data passes through [`escape`].

use std::fmt::Write as _;

use crate::chart::{dash_attr, style, FONT};

const STYLE: &str = "
:root { color-scheme: light; }
body { font-family: FONT; margin: 0; background: #f4f5f7; color: #1f2328; font-size: 14px; }
main { max-width: 1400px; margin: 0 auto; padding: 1.2em 2em 3em; }
h1 { font-size: 1.6em; margin: .4em 0 .2em; }
h2 { font-size: 1.2em; margin: 1.6em 0 .6em; padding-bottom: .25em; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 1em; margin: 1.2em 0 .4em; color: #444; }
nav { margin: .4em 0 1em; color: #57606a; }
nav a { color: #0969da; text-decoration: none; margin-right: 1em; }
table { border-collapse: collapse; background: #fff; margin: .3em 0 1em; }
th, td { border: 1px solid #d8dee4; padding: .3em .65em; text-align: left; vertical-align: top; }
th { background: #f0f3f6; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.kv th { width: 11em; }
.none { color: #6e7781; font-style: italic; }
.cards { display: flex; flex-wrap: wrap; gap: .8em; margin: .8em 0; }
.card { background: #fff; border: 1px solid #d8dee4; border-radius: 6px; padding: .55em .9em; min-width: 9em; }
.card b { display: block; font-size: 1.25em; margin-top: .15em; }
.card span { color: #57606a; font-size: .85em; }
.legend { display: flex; flex-wrap: wrap; gap: .3em 1.1em; margin: .3em 0 .8em; font-size: .9em; }
.legend span { white-space: nowrap; }
.legend svg { vertical-align: middle; margin-right: .3em; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); gap: .8em; }
.panel { background: #fff; border: 1px solid #d8dee4; border-radius: 6px; padding: .3em .4em .1em; }
.panel svg { width: 100%; height: auto; display: block; }
.panel .note { font-size: .8em; color: #57606a; margin: 0 .4em .3em; }
details { margin: .4em 0 1em; }
summary { cursor: pointer; color: #0969da; }
";

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

/// A page under construction.
pub struct Page {
    title: String,
    nav: Vec<(String, String)>,
    body: String,
}

impl Page {
    /// An empty page titled `title` (shown as its heading too).
    pub fn new(title: &str) -> Page {
        Page {
            title: title.to_string(),
            nav: Vec::new(),
            body: String::new(),
        }
    }

    /// Starts a section with heading `heading` and anchor `id`, listed in
    /// the navigation bar.
    pub fn section(&mut self, id: &str, heading: &str) {
        self.nav.push((id.to_string(), heading.to_string()));
        let _ = writeln!(
            self.body,
            "<h2 id=\"{}\">{}</h2>",
            escape(id),
            escape(heading)
        );
    }

    /// Appends raw HTML (the caller escapes what came from data).
    pub fn push(&mut self, html: &str) {
        self.body.push_str(html);
    }

    /// The whole document.
    pub fn finish(self) -> String {
        let title = escape(&self.title);
        let mut out = String::with_capacity(self.body.len() + 4096);
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{title}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n<h1>{title}</h1>\n<nav>",
            STYLE.replace("FONT", FONT)
        );
        for (id, heading) in &self.nav {
            let _ = write!(out, "<a href=\"#{}\">{}</a>", escape(id), escape(heading));
        }
        out.push_str("</nav>\n");
        out.push_str(&self.body);
        out.push_str("</main>\n</body>\n</html>\n");
        out
    }
}

/// A two-column table of `(key, value)` rows; `None` shows as "not
/// recorded".
pub fn kv_table(rows: &[(&str, Option<String>)]) -> String {
    let mut out = String::from("<table class=\"kv\">\n");
    for (k, v) in rows {
        let v = match v {
            Some(v) => format!("<td>{}</td>", escape(v)),
            None => "<td class=\"none\">not recorded</td>".to_string(),
        };
        let _ = writeln!(out, "<tr><th>{}</th>{v}</tr>", escape(k));
    }
    out.push_str("</table>\n");
    out
}

/// A table with `headers` and text `rows`; columns whose index is in
/// `numeric` are right-aligned.
pub fn table(headers: &[&str], rows: &[Vec<String>], numeric: &[usize]) -> String {
    let mut out = String::from("<table>\n<tr>");
    for h in headers {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr>\n");
    for row in rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let class = if numeric.contains(&i) {
                " class=\"num\""
            } else {
                ""
            };
            let _ = write!(out, "<td{class}>{}</td>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// Summary cards: `(label, value)`.
pub fn cards(items: &[(&str, String)]) -> String {
    let mut out = String::from("<div class=\"cards\">");
    for (label, value) in items {
        let _ = write!(
            out,
            "<div class=\"card\"><span>{}</span><b>{}</b></div>",
            escape(label),
            escape(value)
        );
    }
    out.push_str("</div>\n");
    out
}

/// The legend of a set of charts that share their series' styles: one
/// swatch and name per `(label, style)`.
pub fn legend(entries: &[(String, usize)]) -> String {
    let mut out = String::from("<div class=\"legend\">");
    for (label, i) in entries {
        let (color, dash) = style(*i);
        let dash = dash_attr(dash);
        let _ = write!(
            out,
            "<span><svg width=\"22\" height=\"8\"><line x1=\"1\" x2=\"21\" y1=\"4\" y2=\"4\" \
             stroke=\"{color}\" stroke-width=\"3\"{dash}/></svg>{}</span>",
            escape(label)
        );
    }
    out.push_str("</div>\n");
    out
}

/// A grid of panels, each an SVG chart with an optional note under it.
pub fn grid(panels: &[(String, Option<String>)]) -> String {
    let mut out = String::from("<div class=\"grid\">\n");
    for (svg, note) in panels {
        out.push_str("<div class=\"panel\">");
        out.push_str(svg);
        if let Some(n) = note {
            let _ = write!(out, "<p class=\"note\">{}</p>", escape(n));
        }
        out.push_str("</div>\n");
    }
    out.push_str("</div>\n");
    out
}

/// A Unix time as a UTC calendar date and time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Whole seconds as hours, minutes and seconds.
pub fn hms(secs: u64) -> (u64, u64, u64) {
    (secs / 3600, secs % 3600 / 60, secs % 60)
}

/// Seconds as `1 h 02 min 03 s`, `2 min 05 s`, or `12.25 s` under a
/// minute.
pub fn duration(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return format!("{secs} s");
    }
    if secs < 60.0 {
        let s = format!("{secs:.2}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        return format!("{s} s");
    }
    let (h, m, s) = hms(secs.round() as u64);
    if h > 0 {
        format!("{h} h {m:02} min {s:02} s")
    } else {
        format!("{m} min {s:02} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn pages_escape_their_title_and_list_their_sections() {
        let mut p = Page::new("<x>");
        p.section("a", "A & B");
        let html = p.finish();
        assert!(html.contains("<h1>&lt;x&gt;</h1>"));
        assert!(html.contains("<a href=\"#a\">A &amp; B</a>"));
    }
}

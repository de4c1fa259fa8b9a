//! Line charts over time as SVG text.
//!
//! The SVG is written directly rather than through a plotting crate: the
//! page's browser draws its text with real, anti-aliased fonts, and
//! [`crate::render`] hands the same text to resvg (PNG) and svg2pdf (PDF).
//! Every layout decision (ticks, units, legends) is ours either way, and
//! writing the elements keeps each chart a few kilobytes with no font
//! machinery at run time in the HTML path.
//!
//! - The x axis is time since the start, ticks at round durations
//!   (`0:30`, `1:00:00`).
//! - The y axis is linear from 0 for data that is not negative (or from
//!   the data's minimum), or log10 ([`YScale::Log`]); ticks at 1, 2, 5
//!   times a power of ten *of the displayed unit* ([`Unit::scale`]), so a
//!   bytes axis reads `0, 256 MiB, 512 MiB`... as `0, 200 MiB, 400 MiB`.
//! - Percentages ([`Unit::Percent`]) are clamped to 0..100 unless the data
//!   is a sum over CPUs and goes beyond 100; negative values are clamped to
//!   0 for units that cannot be negative.
//! - A missing value breaks its line; a value alone is drawn as a dot.
//! - Series denser than two samples per pixel column are drawn as each
//!   column's mean, over a grey band from the smallest to the largest value
//!   of any series in the column: trends stay readable with many hosts,
//!   spikes stay visible, and the file stays small.
//! - The legend (optional) sits under the plot, every entry shown, rows
//!   added as needed: it never covers the data. Series beyond the palette's
//!   ten colours are dashed, then dotted.

use std::fmt::Write as _;
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::html::escape;
use crate::units::{Scale, Unit};

/// Tableau 10 (matplotlib's default colour cycle).
pub const PALETTE: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// The dash pattern for the `n`th pass over [`PALETTE`].
const DASHES: [&str; 3] = ["", "6 3", "1.5 2.5"];

/// Colour and dash pattern of series number `i`.
pub fn style(i: usize) -> (&'static str, &'static str) {
    (
        PALETTE[i % PALETTE.len()],
        DASHES[(i / PALETTE.len()) % DASHES.len()],
    )
}

/// The SVG attribute of a dash pattern (nothing for a solid line).
pub fn dash_attr(dash: &str) -> String {
    if dash.is_empty() {
        String::new()
    } else {
        format!(" stroke-dasharray=\"{dash}\"")
    }
}

/// The font stack of every chart and page.
pub const FONT: &str = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif";

/// How the y axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YScale {
    /// Evenly spaced values.
    Linear,
    /// Evenly spaced powers of ten; values ≤ 0 are not drawn.
    Log,
}

/// One line.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend and hover text.
    pub label: String,
    /// Its style number (see [`style`]): the same host keeps the same
    /// colour in every chart.
    pub style: usize,
    /// (seconds since the start, value in the unit's base) in time order;
    /// `None` breaks the line.
    pub points: Vec<(f64, Option<f64>)>,
}

/// What a chart shows and how big it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Bold text above the plot; empty for none.
    pub title: String,
    /// The values' unit.
    pub unit: Unit,
    /// Text along the y axis (the unit's name is added); empty for the
    /// unit alone.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
    /// Linear or log.
    pub y_scale: YScale,
    /// Width in px.
    pub width: f64,
    /// Height of the plot part in px (the legend adds to it).
    pub height: f64,
    /// Draw the legend under the plot.
    pub legend: bool,
}

const TICK_FONT: f64 = 11.0;
const TITLE_FONT: f64 = 12.5;
const INK: &str = "#222";
const MUTED: &str = "#555";
const GRID: &str = "#e6e6e6";
const LEGEND_ROW: f64 = 17.0;

/// Approximate width of `text` in DejaVu Sans at `size` px; layout only
/// needs to err on the wide side.
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars()
        .map(|c| match c {
            'i' | 'l' | 'j' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | ' ' => 0.34,
            'm' | 'w' | 'M' | 'W' | '%' | '@' => 0.92,
            c if c.is_ascii_uppercase() => 0.70,
            _ => 0.62,
        })
        .sum::<f64>()
        * size
}

/// The chart as a standalone SVG document.
pub fn svg(chart: &Chart) -> String {
    let mut out = String::with_capacity(16 * 1024);
    let legend = if chart.legend {
        legend_layout(&chart.series, chart.width - 16.0)
    } else {
        Vec::new()
    };
    let legend_rows = legend.iter().map(|e| e.row + 1).max().unwrap_or(0);
    let total_h =
        chart.height + legend_rows as f64 * LEGEND_ROW + if legend_rows > 0 { 6.0 } else { 0.0 };
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" \
         height=\"{h}\" font-family=\"{FONT}\" role=\"img\">",
        w = chart.width,
        h = total_h
    );
    let _ = write!(
        out,
        "<rect width=\"{}\" height=\"{}\" fill=\"#fff\"/>",
        chart.width, total_h
    );
    if !chart.title.is_empty() {
        let _ = write!(out, "<title>{}</title>", escape(&chart.title));
    }

    let y = YAxis::of(chart);
    let x = XAxis::of(&chart.series);
    let label_w = y
        .ticks
        .iter()
        .map(|(_, l)| text_width(l, TICK_FONT))
        .fold(0.0, f64::max);
    let left = 8.0 + 14.0 + label_w + 8.0;
    let right = chart.width - 14.0;
    let top = if chart.title.is_empty() { 10.0 } else { 30.0 };
    let bottom = chart.height - 24.0;

    if !chart.title.is_empty() {
        // A long title gets a smaller font (down to 9 px) before it loses
        // its middle.
        let room = chart.width - 16.0;
        let size =
            (TITLE_FONT * room / text_width(&chart.title, TITLE_FONT)).clamp(9.0, TITLE_FONT);
        let size = (size * 10.0).floor() / 10.0;
        let title = fit(&chart.title, room, size);
        let _ = write!(
            out,
            "<text x=\"{}\" y=\"18\" font-size=\"{size}\" font-weight=\"bold\" \
             text-anchor=\"middle\" fill=\"{INK}\">{}</text>",
            chart.width / 2.0,
            escape(&title)
        );
    }

    // Grid and y ticks.
    out.push_str("<g font-size=\"11\" fill=\"#444\">");
    for (v, label) in &y.ticks {
        let py = round1(y.map(*v, bottom, top));
        let _ = write!(
            out,
            "<line x1=\"{left}\" x2=\"{right}\" y1=\"{py}\" y2=\"{py}\" stroke=\"{GRID}\"/>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            py + 4.0,
            escape(label)
        );
    }
    for (t, label) in x.ticks() {
        let px = round1(x.map(t, left, right));
        let _ = write!(
            out,
            "<line x1=\"{px}\" x2=\"{px}\" y1=\"{top}\" y2=\"{bottom}\" stroke=\"{GRID}\"/>\
             <text x=\"{px}\" y=\"{}\" text-anchor=\"middle\">{label}</text>",
            bottom + 15.0
        );
    }
    out.push_str("</g>");
    let _ = write!(
        out,
        "<rect x=\"{left}\" y=\"{top}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>",
        right - left,
        bottom - top
    );
    // y label, turned.
    let y_label = match (chart.y_label.as_str(), y.scale.name.as_str()) {
        (label, "") => label.to_string(),
        ("", name) => format!("[{name}]"),
        (label, name) => format!("{label} [{name}]"),
    };
    let y_label = fit(&y_label, bottom - top, TICK_FONT);
    let cy = (top + bottom) / 2.0;
    let _ = write!(
        out,
        "<text transform=\"translate(13 {cy}) rotate(-90)\" font-size=\"{TICK_FONT}\" \
         text-anchor=\"middle\" fill=\"{MUTED}\">{}</text>",
        escape(&y_label)
    );

    // Lines, clipped to the plot area.
    // Ids are global in a page: name the clip after what it clips, so the
    // same chart gets the same id on every run and distinct charts differ.
    let mut hasher = DefaultHasher::new();
    out.hash(&mut hasher);
    let clip = format!("c{:016x}", hasher.finish());
    let _ = write!(
        out,
        "<clipPath id=\"{clip}\"><rect x=\"{left}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath>\
         <g clip-path=\"url(#{clip})\" fill=\"none\" stroke-width=\"1.6\" stroke-linejoin=\"round\" \
         stroke-linecap=\"round\">",
        top - 2.0,
        right - left,
        bottom - top + 4.0
    );
    if chart.series.iter().any(|s| dense(&s.points, right - left)) {
        // The lines show each column's mean; the band keeps every sample's
        // extremes in sight.
        let band = envelope(&chart.series, right - left, &x);
        let px = |c: usize| round1(left + c as f64 + 0.5);
        let py = |v: f64| y.value(v).map(|v| round1(y.map(v, bottom, top)));
        let mut d = String::new();
        for (i, (c, _, hi)) in band.iter().enumerate() {
            if let Some(py) = py(*hi) {
                let _ = write!(d, "{}{} {py}", if i == 0 { "M" } else { "L" }, px(*c));
            }
        }
        for (c, lo, _) in band.iter().rev() {
            if let Some(py) = py(*lo).or(Some(bottom)) {
                let _ = write!(d, "L{} {py}", px(*c));
            }
        }
        if !d.is_empty() {
            let _ = write!(
                out,
                "<path d=\"{d}Z\" fill=\"#8a94a6\" fill-opacity=\"0.22\" stroke=\"none\"/>"
            );
        }
    }
    let width = if chart.series.len() > 8 { 1.1 } else { 1.6 };
    for s in &chart.series {
        let (color, dash) = style(s.style);
        let pts = thin(&s.points, right - left, &x);
        let mut d = String::new();
        let mut dots = String::new();
        let mut run: Vec<(f64, f64)> = Vec::new();
        let flush = |run: &mut Vec<(f64, f64)>, d: &mut String, dots: &mut String| {
            match run.len() {
                0 => {}
                1 => {
                    let _ = write!(
                        dots,
                        "<circle cx=\"{}\" cy=\"{}\" r=\"2.2\" fill=\"{color}\" stroke=\"none\"/>",
                        run[0].0, run[0].1
                    );
                }
                _ => {
                    for (i, (px, py)) in run.iter().enumerate() {
                        let _ = write!(d, "{}{px} {py}", if i == 0 { "M" } else { "L" });
                    }
                }
            }
            run.clear();
        };
        for (t, v) in pts {
            match v.and_then(|v| y.value(v)) {
                Some(v) => run.push((round1(x.map(t, left, right)), round1(y.map(v, bottom, top)))),
                None => flush(&mut run, &mut d, &mut dots),
            }
        }
        flush(&mut run, &mut d, &mut dots);
        let dash = dash_attr(dash);
        let _ = write!(
            out,
            "<g><title>{}</title><path d=\"{d}\" stroke=\"{color}\"{dash} stroke-width=\"{width}\" stroke-opacity=\"0.9\"/>{dots}</g>",
            escape(&s.label)
        );
    }
    out.push_str("</g>");

    // Legend.
    if !legend.is_empty() {
        out.push_str("<g font-size=\"11\" fill=\"#333\">");
        let y0 = chart.height + 4.0;
        for e in &legend {
            let (color, dash) = style(e.style);
            let ly = y0 + e.row as f64 * LEGEND_ROW;
            let dash = dash_attr(dash);
            let _ = write!(
                out,
                "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{color}\" stroke-width=\"2.5\"{dash}/>\
                 <text x=\"{}\" y=\"{}\">{}</text>",
                e.x,
                e.x + 18.0,
                ly + 6.0,
                ly + 6.0,
                e.x + 23.0,
                ly + 10.0,
                escape(&e.text)
            );
        }
        out.push_str("</g>");
    }
    out.push_str("</svg>");
    out
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// One legend entry's place.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    /// The text (shortened in its middle if longer than a row).
    pub text: String,
    /// Its series' style number.
    pub style: usize,
    /// Left edge, px.
    pub x: f64,
    /// Row number from 0.
    pub row: usize,
}

/// Every series gets an entry, left to right from x = 12 up to `limit`,
/// in as many rows as needed.
pub fn legend_layout(series: &[Series], limit: f64) -> Vec<LegendEntry> {
    let mut out = Vec::with_capacity(series.len());
    let (mut x, mut row) = (12.0, 0);
    for s in series {
        let text = fit(&s.label, limit - 40.0, TICK_FONT);
        let w = 23.0 + text_width(&text, TICK_FONT) + 14.0;
        if x > 12.0 && x + w > limit {
            row += 1;
            x = 12.0;
        }
        out.push(LegendEntry {
            text,
            style: s.style,
            x,
            row,
        });
        x += w;
    }
    out
}

/// `text`, with `…` in place of middle characters where needed to fit
/// `width` px: the start and the end (a unit, a host's number) stay.
pub fn fit(text: &str, width: f64, size: f64) -> String {
    if text_width(text, size) <= width {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let room = ((width / (0.66 * size)) as usize).saturating_sub(1).max(2);
    let tail = room / 2;
    let head = room - tail;
    let start: String = chars[..head.min(chars.len())].iter().collect();
    let end: String = chars[chars.len().saturating_sub(tail)..].iter().collect();
    format!("{start}…{end}")
}

/// Whether `points` are more than the plot can show apart (over two per
/// pixel column of `width` px).
fn dense(points: &[(f64, Option<f64>)], width: f64) -> bool {
    points.len() > 2 * width.max(1.0) as usize
}

/// The pixel column of time `t`, out of `columns`.
fn column(t: f64, x: &XAxis, columns: usize) -> usize {
    (x.map(t, 0.0, columns as f64).max(0.0) as usize).min(columns)
}

/// Thins dense `points` to the mean of each pixel column of `width` px
/// (at the column's mean time); a missing value still breaks the line.
/// Points that fit are returned as they are.
fn thin(points: &[(f64, Option<f64>)], width: f64, x: &XAxis) -> Vec<(f64, Option<f64>)> {
    if !dense(points, width) {
        return points.to_vec();
    }
    let columns = width.max(1.0) as usize;
    let mut out = Vec::with_capacity(columns + 16);
    let (mut current, mut st, mut sv, mut n) = (usize::MAX, 0.0, 0.0, 0.0);
    for &(t, v) in points {
        let col = column(t, x, columns);
        if col != current && n > 0.0 {
            out.push((st / n, Some(sv / n)));
            (st, sv, n) = (0.0, 0.0, 0.0);
        }
        current = col;
        match v {
            Some(v) if v.is_finite() => {
                st += t;
                sv += v;
                n += 1.0;
            }
            _ => {
                if n > 0.0 {
                    out.push((st / n, Some(sv / n)));
                    (st, sv, n) = (0.0, 0.0, 0.0);
                }
                out.push((t, None));
            }
        }
    }
    if n > 0.0 {
        out.push((st / n, Some(sv / n)));
    }
    out
}

/// The smallest and largest value of any of `series` in each pixel column
/// of `width` px that holds a value: `(column, min, max)`.
fn envelope(series: &[Series], width: f64, x: &XAxis) -> Vec<(usize, f64, f64)> {
    let columns = width.max(1.0) as usize;
    let mut band: Vec<Option<(f64, f64)>> = vec![None; columns + 1];
    for s in series {
        for &(t, v) in &s.points {
            let Some(v) = v.filter(|v| v.is_finite()) else {
                continue;
            };
            let c = &mut band[column(t, x, columns)];
            *c = Some(match *c {
                None => (v, v),
                Some((lo, hi)) => (lo.min(v), hi.max(v)),
            });
        }
    }
    band.into_iter()
        .enumerate()
        .filter_map(|(i, b)| b.map(|(lo, hi)| (i, lo, hi)))
        .collect()
}

/// The time axis.
struct XAxis {
    lo: f64,
    hi: f64,
}

impl XAxis {
    fn of(series: &[Series]) -> XAxis {
        let (mut lo, mut hi) = (0.0f64, f64::NEG_INFINITY);
        for s in series {
            for (t, _) in &s.points {
                if t.is_finite() {
                    lo = lo.min(*t);
                    hi = hi.max(*t);
                }
            }
        }
        // Also when either is NaN.
        if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
            hi = lo + 1.0;
        }
        XAxis { lo, hi }
    }

    fn map(&self, t: f64, a: f64, b: f64) -> f64 {
        a + (t - self.lo) / (self.hi - self.lo) * (b - a)
    }

    /// Ticks at round durations, about six of them.
    fn ticks(&self) -> Vec<(f64, String)> {
        const STEPS: [f64; 22] = [
            0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0,
            60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0,
        ];
        let span = self.hi - self.lo;
        let raw = span / 6.0;
        let step = STEPS
            .iter()
            .copied()
            .find(|s| *s >= raw)
            .unwrap_or_else(|| (raw / 3600.0).ceil() * 3600.0);
        let first = (self.lo / step - 1e-9).ceil() as i64;
        let last = (self.hi / step + 1e-9).floor() as i64;
        (first..=last)
            .take(60)
            .map(|k| {
                let t = k as f64 * step;
                (t, clock(t, step))
            })
            .collect()
    }
}

/// Seconds as `m:ss` or `h:mm:ss` (with decimals for steps under 1 s).
pub fn clock(t: f64, step: f64) -> String {
    let sign = if t < 0.0 { "-" } else { "" };
    let a = t.abs();
    if step < 1.0 {
        let decimals = (-step.log10()).ceil().max(1.0) as usize;
        return format!("{sign}{a:.decimals$} s");
    }
    let (h, m, s) = crate::html::hms(a.round() as u64);
    if h > 0 {
        format!("{sign}{h}:{m:02}:{s:02}")
    } else {
        format!("{sign}{m}:{s:02}")
    }
}

/// The value axis.
struct YAxis {
    scale: Scale,
    log: bool,
    lo: f64,
    hi: f64,
    /// (value in the axis' space: base units, or log10 of them; label)
    ticks: Vec<(f64, String)>,
    clamp_low: Option<f64>,
    clamp_high: Option<f64>,
}

impl YAxis {
    fn of(chart: &Chart) -> YAxis {
        let values = || {
            chart
                .series
                .iter()
                .flat_map(|s| s.points.iter().filter_map(|p| p.1))
                .filter(|v| v.is_finite())
        };
        let nonneg_unit = !matches!(chart.unit, Unit::Other(_) | Unit::Number);
        if chart.y_scale == YScale::Log {
            let positive = || values().filter(|v| *v > 0.0);
            let lo = positive().fold(f64::INFINITY, f64::min);
            let hi = positive().fold(f64::NEG_INFINITY, f64::max);
            let binary = matches!(chart.unit, Unit::Bytes | Unit::BytesPerSecond);
            // Bytes tick at 1, 10 and 100 of each binary unit.
            let steps: Vec<f64> = (0..7)
                .flat_map(|i| [1.0, 10.0, 100.0].map(|m| (m * 1024f64.powi(i)).log10()))
                .collect();
            let (lo, hi) = if !lo.is_finite() {
                (0.0, 1.0)
            } else if binary {
                let (l, h) = (lo.log10(), hi.log10());
                let below = steps
                    .iter()
                    .copied()
                    .filter(|k| *k <= l + 1e-9)
                    .fold(0.0, f64::max);
                let above = steps
                    .iter()
                    .copied()
                    .find(|k| *k >= h - 1e-9)
                    .unwrap_or(h.ceil());
                (below, above.max(below + 1.0))
            } else {
                (
                    lo.log10().floor(),
                    hi.log10().ceil().max(lo.log10().floor() + 1.0),
                )
            };
            let scale = chart.unit.scale(10f64.powf(hi));
            let every = ((hi - lo) / 6.0).ceil().max(1.0) as i64;
            let ticks = if binary {
                // `1 MiB/s`, `10 MiB/s`, `100 MiB/s`, `1 GiB/s`, rather
                // than `954 MiB/s`.
                steps
                    .iter()
                    .copied()
                    .filter(|k| *k >= lo - 1e-9 && *k <= hi + 1e-9)
                    .enumerate()
                    .filter(|(i, _)| *i as i64 % every == 0)
                    .map(|(_, k)| {
                        let v = 10f64.powf(k);
                        let s = chart.unit.scale(v);
                        (k, s.label(s.apply(v).round(), 0))
                    })
                    .collect()
            } else {
                (lo as i64..=hi as i64)
                    .filter(|k| (k - lo as i64) % every == 0)
                    .map(|k| {
                        let v = 10f64.powi(k as i32);
                        let s = chart.unit.scale(v);
                        (k as f64, s.label(s.apply(v), 0))
                    })
                    .collect()
            };
            return YAxis {
                scale: Scale::named(scale.factor, ""),
                log: true,
                lo,
                hi,
                ticks,
                clamp_low: None,
                clamp_high: None,
            };
        }
        let mut lo = values().fold(f64::INFINITY, f64::min);
        let mut hi = values().fold(f64::NEG_INFINITY, f64::max);
        if !lo.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        let (mut clamp_low, mut clamp_high) = (None, None);
        if nonneg_unit || lo >= 0.0 {
            // Quantities that cannot go negative start their axis at zero.
            lo = 0.0;
            if nonneg_unit {
                clamp_low = Some(0.0);
            }
        }
        if chart.unit == Unit::Percent && hi <= 100.5 {
            hi = 100.0;
            clamp_high = Some(100.0);
        }
        if hi <= lo {
            hi = if lo == 0.0 { 1.0 } else { lo + lo.abs() * 0.1 };
        }
        let scale = chart.unit.scale(lo.abs().max(hi.abs()));
        let (slo, shi) = (scale.apply(lo), scale.apply(hi));
        let step = nice_step((shi - slo) / 5.0);
        let slo = (slo / step + 1e-9).floor() * step;
        let shi = (shi / step - 1e-9).ceil() * step;
        let decimals = (-step.log10().floor()).clamp(0.0, 6.0) as usize;
        let first = (slo / step).round() as i64;
        let last = (shi / step).round() as i64;
        let ticks = (first..=last)
            .map(|k| {
                let v = k as f64 * step;
                (v * scale.factor, plain(v, decimals))
            })
            .collect();
        YAxis {
            lo: slo * scale.factor,
            hi: shi * scale.factor,
            scale,
            log: false,
            ticks,
            clamp_low,
            clamp_high,
        }
    }

    /// A value in the axis' space, or `None` where it cannot be drawn.
    fn value(&self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            return None;
        }
        let v = match self.clamp_low {
            Some(c) => v.max(c),
            None => v,
        };
        let v = match self.clamp_high {
            Some(c) => v.min(c),
            None => v,
        };
        if self.log {
            (v > 0.0).then(|| v.log10())
        } else {
            Some(v)
        }
    }

    fn map(&self, v: f64, a: f64, b: f64) -> f64 {
        a + (v - self.lo) / (self.hi - self.lo) * (b - a)
    }
}

fn plain(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

/// The smallest of 1, 2, 5 times a power of ten that is at least `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if !raw.is_finite() || raw <= 0.0 {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let k = if norm <= 1.0 + 1e-9 {
        1.0
    } else if norm <= 2.0 + 1e-9 {
        2.0
    } else if norm <= 5.0 + 1e-9 {
        5.0
    } else {
        10.0
    };
    k * mag
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(unit: &str, values: &[f64]) -> Chart {
        Chart {
            title: "t".into(),
            unit: Unit::parse(Some(unit)),
            y_label: "y".into(),
            series: vec![Series {
                label: "a".into(),
                style: 0,
                points: values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (i as f64, Some(*v)))
                    .collect(),
            }],
            y_scale: YScale::Linear,
            width: 600.0,
            height: 250.0,
            legend: true,
        }
    }

    #[test]
    fn byte_axes_tick_in_binary_units_not_exponents() {
        let y = YAxis::of(&chart("bytes", &[0.0, 6.24e8]));
        assert_eq!(y.scale.name, "MiB");
        let labels: Vec<&str> = y.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0", "200", "400", "600"]);
        assert!(!svg(&chart("bytes", &[0.0, 6.24e8])).contains("e8"));
    }

    #[test]
    fn percentages_stay_within_zero_and_a_hundred() {
        let y = YAxis::of(&chart("%", &[-3.0, 40.0, 100.2]));
        assert_eq!((y.lo, y.hi), (0.0, 100.0));
        assert_eq!(y.value(-3.0), Some(0.0));
        assert_eq!(y.value(100.2), Some(100.0));
        // A sum over CPUs may pass 100.
        let y = YAxis::of(&chart("%", &[0.0, 350.0]));
        assert!(y.hi >= 350.0);
    }

    #[test]
    fn log_axes_tick_at_powers_of_ten() {
        let mut c = chart("bytes/s", &[3.0, 2e6]);
        c.y_scale = YScale::Log;
        let y = YAxis::of(&c);
        assert_eq!(y.lo, 0.0);
        assert!((y.hi - 10_485_760f64.log10()).abs() < 1e-12, "{}", y.hi);
        let labels: Vec<&str> = y.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["1 B/s", "100 B/s", "10 KiB/s", "1 MiB/s"]);
        assert_eq!(y.value(0.0), None);
        let mut c = chart("W", &[3.0, 2e6]);
        c.y_scale = YScale::Log;
        assert_eq!((YAxis::of(&c).lo, YAxis::of(&c).hi), (0.0, 7.0));
        assert_eq!(y.value(0.0), None);
    }

    #[test]
    fn every_legend_entry_is_shown_on_rows_under_the_plot() {
        let series: Vec<Series> = (0..16)
            .map(|i| Series {
                label: format!("node{i:03}.cluster.example.org"),
                style: i,
                points: vec![],
            })
            .collect();
        let legend = legend_layout(&series, 584.0);
        assert_eq!(legend.len(), 16);
        assert!(legend.iter().map(|e| e.row).max().unwrap() >= 2);
        for e in &legend {
            assert!(
                e.x + 23.0 + text_width(&e.text, TICK_FONT) <= 584.0,
                "{e:?}"
            );
        }
        assert_eq!(style(3), ("#d62728", ""));
        assert_eq!(style(13), ("#d62728", "6 3"));
    }

    #[test]
    fn dense_series_thin_to_column_means_and_the_band_keeps_spikes() {
        let mut points: Vec<(f64, Option<f64>)> =
            (0..10_000).map(|i| (i as f64, Some(1.0))).collect();
        points[5000].1 = Some(99.0);
        points[7000].1 = None;
        let x = XAxis {
            lo: 0.0,
            hi: 9999.0,
        };
        let thin = thin(&points, 100.0, &x);
        assert!(thin.len() <= 101 + 2, "{}", thin.len());
        assert!(thin.contains(&(7000.0, None)));
        assert!(thin.iter().all(|p| p.1.is_none_or(|v| v < 99.0)));
        let s = Series {
            label: "a".into(),
            style: 0,
            points,
        };
        let band = envelope(&[s], 100.0, &x);
        assert!(band.iter().any(|b| b.2 == 99.0));
        assert!(band.iter().all(|b| b.1 == 1.0));
    }

    #[test]
    fn time_ticks_read_as_clock_durations() {
        assert_eq!(clock(90.0, 30.0), "1:30");
        assert_eq!(clock(3600.0, 600.0), "1:00:00");
        assert_eq!(clock(0.5, 0.1), "0.5 s");
    }

    #[test]
    fn text_from_the_data_is_escaped() {
        let mut c = chart("W", &[1.0, 2.0]);
        c.series[0].label = "<b>&".into();
        let s = svg(&c);
        assert!(s.contains("&lt;b&gt;&amp;") && !s.contains("<b>"));
    }
}

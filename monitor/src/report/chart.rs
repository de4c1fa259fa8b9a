//! Line charts: a title, a framed plot area with grid lines at "nice" ticks
//! (1, 2 or 5 times a power of ten), axis labels (the y label turned a
//! quarter left) and a legend below that flows over up to three rows.
//!
//! A missing value breaks its line; a value with no neighbour shows as a
//! dot. The y axis spans the data rounded out to ticks (a constant series
//! gets a band around its value); the x axis spans every time stamp of the
//! lines, missing values included, and 0.

use super::canvas::{text_width, Canvas, Rgb};
use super::font;

/// Chart width in pixels.
pub const WIDTH: usize = 1000;
/// Chart height in pixels.
pub const HEIGHT: usize = 500;

const SCALE: i64 = 2;
const CHAR_H: i64 = 7 * SCALE;
const WHITE: Rgb = [255, 255, 255];
const INK: Rgb = [30, 30, 30];
const AXIS: Rgb = [90, 90, 90];
const GRID: Rgb = [225, 225, 225];
const LEGEND_ROW: i64 = 22;
const LEGEND_ROWS: usize = 3;

/// Line colours, used in turn.
pub const PALETTE: [Rgb; 10] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [127, 127, 127],
    [188, 189, 34],
    [23, 190, 207],
];

/// One line of a chart.
pub struct Line {
    /// Its legend text.
    pub label: String,
    /// Index into [`PALETTE`] (taken modulo its length).
    pub color: usize,
    /// (x, y) points in x order; a missing y breaks the line.
    pub points: Vec<(f64, Option<f64>)>,
}

/// What a chart shows.
pub struct Chart {
    /// Text above the plot.
    pub title: String,
    /// Text under the x axis.
    pub x_label: String,
    /// Text beside the y axis.
    pub y_label: String,
    /// The lines, in legend order.
    pub lines: Vec<Line>,
}

/// Draws `chart` on a new [`WIDTH`] × [`HEIGHT`] canvas.
pub fn render(chart: &Chart) -> Canvas {
    let (w, h) = (WIDTH as i64, HEIGHT as i64);
    let mut canvas = Canvas::new(WIDTH, HEIGHT, WHITE);

    let title = fit(&chart.title, w - 20);
    canvas.text((w - text_width(&title, SCALE)) / 2, 12, &title, SCALE, INK);

    let points = || chart.lines.iter().flat_map(|l| l.points.iter());
    let (x_lo, x_hi) = x_range(points().map(|p| p.0));
    let (y_lo, y_hi, y_step) = y_range(points().filter_map(|p| p.1));
    let y_ticks = ticks(y_lo, y_hi, y_step);
    let y_labels: Vec<String> = y_ticks
        .iter()
        .map(|&t| tick_label(t, y_step, y_lo, y_hi))
        .collect();
    let label_w = y_labels
        .iter()
        .map(|l| text_width(l, SCALE))
        .max()
        .unwrap_or(0);

    let legend = legend_layout(&chart.lines, w - 20);
    let legend_h = legend.iter().map(|e| e.row + 1).max().unwrap_or(0) as i64 * LEGEND_ROW;
    let top = 12 + CHAR_H + 20;
    let left = 12 + CHAR_H + 14 + label_w + 8;
    let right = w - 24;
    let bottom = h - 10 - legend_h - 8 - CHAR_H - 12 - CHAR_H - 10;

    // Grid, ticks and their labels.
    for (t, label) in y_ticks.iter().zip(&y_labels) {
        let y = map(*t, y_lo, y_hi, bottom, top);
        canvas.fill(left, y, right - left, 1, GRID);
        canvas.fill(left - 5, y, 5, 1, AXIS);
        canvas.text(
            left - 8 - text_width(label, SCALE),
            y - CHAR_H / 2,
            label,
            SCALE,
            INK,
        );
    }
    let x_step = nice_step((x_hi - x_lo) / 6.0);
    for t in ticks(x_lo, x_hi, x_step) {
        let x = map(t, x_lo, x_hi, left, right);
        let label = tick_label(t, x_step, x_lo, x_hi);
        canvas.fill(x, top, 1, bottom - top, GRID);
        canvas.fill(x, bottom, 1, 5, AXIS);
        let lw = text_width(&label, SCALE);
        let lx = (x - lw / 2).clamp(0, w - lw);
        canvas.text(lx, bottom + 9, &label, SCALE, INK);
    }
    canvas.fill(left, top, 1, bottom - top + 1, AXIS);
    canvas.fill(left, bottom, right - left + 1, 1, AXIS);

    // Axis labels.
    let x_label = fit(&chart.x_label, right - left);
    let x_label_y = bottom + 9 + CHAR_H + 12;
    let x_label_x = left + (right - left - text_width(&x_label, SCALE)) / 2;
    canvas.text(x_label_x, x_label_y, &x_label, SCALE, INK);
    let y_label = fit(&chart.y_label, bottom - top);
    let y_label_y = bottom - (bottom - top - text_width(&y_label, SCALE)) / 2;
    canvas.text_up(12, y_label_y, &y_label, SCALE, INK);

    // Lines.
    for line in &chart.lines {
        let color = PALETTE[line.color % PALETTE.len()];
        let px: Vec<Option<(i64, i64)>> = line
            .points
            .iter()
            .map(|&(x, y)| {
                y.map(|y| {
                    (
                        map(x, x_lo, x_hi, left, right),
                        map(y, y_lo, y_hi, bottom, top),
                    )
                })
            })
            .collect();
        for (i, p) in px.iter().enumerate() {
            let Some(p) = *p else { continue };
            let next = px.get(i + 1).copied().flatten();
            let prev = if i > 0 { px[i - 1] } else { None };
            match next {
                Some(q) => canvas.line(p, q, 2, color),
                None if prev.is_none() => canvas.fill(p.0 - 2, p.1 - 2, 5, 5, color),
                None => {}
            }
        }
    }

    // Legend.
    let legend_top = h - 10 - legend_h;
    for entry in &legend {
        let y = legend_top + entry.row as i64 * LEGEND_ROW;
        if let Some(color) = entry.color {
            canvas.fill(
                entry.x,
                y + 2,
                24,
                CHAR_H - 4,
                PALETTE[color % PALETTE.len()],
            );
        }
        canvas.text(entry.x + 30, y, &entry.text, SCALE, INK);
    }
    canvas
}

struct LegendEntry {
    text: String,
    color: Option<usize>,
    x: i64,
    row: usize,
}

/// Places legend entries left to right from x = 20 up to x = `limit`, over
/// at most [`LEGEND_ROWS`] rows; entries that do not fit are counted in a
/// last `+N more`.
fn legend_layout(lines: &[Line], limit: i64) -> Vec<LegendEntry> {
    let entry_w = |text: &str| 30 + text_width(text, SCALE) + 24;
    let mut out = Vec::new();
    let (mut x, mut row) = (20, 0);
    for (i, line) in lines.iter().enumerate() {
        let text = fit(&line.label, limit - 80);
        let ew = entry_w(&text);
        let more = format!("+{} more", lines.len() - i);
        if row + 1 < LEGEND_ROWS && x > 20 && x + ew > limit {
            row += 1;
            x = 20;
        }
        if row + 1 == LEGEND_ROWS {
            let needed = if i + 1 < lines.len() {
                ew + entry_w(&more)
            } else {
                ew
            };
            if x + needed > limit {
                out.push(LegendEntry {
                    text: more,
                    color: None,
                    x,
                    row,
                });
                return out;
            }
        }
        out.push(LegendEntry {
            text,
            color: Some(line.color),
            x,
            row,
        });
        x += ew;
    }
    out
}

/// `text`, with `...` in place of middle characters where needed to fit
/// `width` pixels: the start and the end (a unit, a host's number) stay.
fn fit(text: &str, width: i64) -> String {
    if text_width(text, SCALE) <= width {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let room = (width / (SCALE * font::ADVANCE as i64) - 3).max(2) as usize;
    let tail = room / 2;
    let head = room - tail;
    let start: String = chars[..head.min(chars.len())].iter().collect();
    let end: String = chars[chars.len().saturating_sub(tail)..].iter().collect();
    format!("{start}...{end}")
}

fn map(v: f64, lo: f64, hi: f64, to_lo: i64, to_hi: i64) -> i64 {
    let f = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    (to_lo as f64 + f * (to_hi - to_lo) as f64).round() as i64
}

fn x_range(xs: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = min_max(xs).unwrap_or((0.0, 1.0));
    let lo = lo.min(0.0);
    (lo, if hi > lo { hi } else { lo + 1.0 })
}

/// The y axis: data extent widened by 5 % on each side (not below 0 for
/// data that is not negative) and rounded out to ticks, and the tick step.
fn y_range(ys: impl Iterator<Item = f64>) -> (f64, f64, f64) {
    let (mut lo, mut hi) = min_max(ys).unwrap_or((0.0, 1.0));
    let pad = if hi > lo {
        (hi - lo) * 0.05
    } else if lo == 0.0 {
        1.0
    } else {
        lo.abs() * 0.1
    };
    let floor = if lo >= 0.0 { 0.0 } else { f64::NEG_INFINITY };
    lo = (lo - pad).max(floor);
    hi += pad;
    let step = nice_step((hi - lo) / 5.0);
    ((lo / step).floor() * step, (hi / step).ceil() * step, step)
}

fn min_max(vs: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    vs.filter(|v| v.is_finite()).fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// The smallest of 1, 2, 5 times a power of ten that is at least `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if !raw.is_finite() || raw <= 0.0 {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let k = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    k * mag
}

/// Multiples of `step` within [`lo`, `hi`].
fn ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).take(50).map(|k| k as f64 * step).collect()
}

/// A tick value with as many digits as the step needs; exponent form when
/// the axis reaches a million or stays under a thousandth.
pub fn tick_label(v: f64, step: f64, lo: f64, hi: f64) -> String {
    if v.abs() < step * 1e-6 {
        return "0".to_string();
    }
    let big = lo.abs().max(hi.abs());
    if !(1e-3..1e6).contains(&big) {
        let digits = (v.abs().log10().floor() - step.log10().floor()).clamp(0.0, 4.0) as usize;
        let text = format!("{v:.digits$e}");
        match text.split_once('e') {
            Some((mantissa, exp)) if mantissa.contains('.') => {
                let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
                format!("{mantissa}e{exp}")
            }
            _ => text,
        }
    } else {
        let digits = (-step.log10().floor()).clamp(0.0, 6.0) as usize;
        format!("{v:.digits$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<Line> {
        (0..n)
            .map(|i| Line {
                label: format!("gpu-{i}.node{i:03}"),
                color: i,
                points: vec![(0.0, Some(1.0))],
            })
            .collect()
    }

    #[test]
    fn a_legend_of_many_hosts_ends_in_a_count_of_the_rest() {
        let legend = legend_layout(&lines(40), WIDTH as i64 - 20);
        assert!(legend.iter().all(|e| e.row < LEGEND_ROWS));
        let last = legend.last().unwrap();
        assert_eq!(last.color, None);
        let shown = legend.len() - 1;
        assert_eq!(last.text, format!("+{} more", 40 - shown));
        for e in &legend {
            assert!(
                e.x + 30 + text_width(&e.text, SCALE) <= WIDTH as i64 - 20,
                "{}",
                e.text
            );
        }
    }

    #[test]
    fn a_legend_that_fits_shows_every_host() {
        let legend = legend_layout(&lines(3), WIDTH as i64 - 20);
        assert_eq!(legend.len(), 3);
        assert!(legend.iter().all(|e| e.color.is_some() && e.row == 0));
    }

    #[test]
    fn long_labels_lose_their_middle_and_keep_the_unit() {
        let label = "net_io_counters.bytes_recv_per_interface.eth0 [bytes/s]";
        let cut = fit(label, 300);
        assert!(text_width(&cut, SCALE) <= 300, "{cut}");
        assert!(
            cut.starts_with("net_io") && cut.ends_with("[bytes/s]"),
            "{cut}"
        );
        assert_eq!(fit("short", 300), "short");
    }

    #[test]
    fn nice_steps_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(1.3), 2.0);
        assert_eq!(nice_step(33.0), 50.0);
        assert_eq!(nice_step(6000.0), 10000.0);
    }

    #[test]
    fn tick_labels_use_exponents_only_for_large_axes() {
        assert_eq!(tick_label(2.5, 0.5, 0.0, 10.0), "2.5");
        assert_eq!(tick_label(40.0, 20.0, 0.0, 100.0), "40");
        assert_eq!(tick_label(2e9, 1e9, 0.0, 5e9), "2e9");
        assert_eq!(tick_label(1.5e9, 5e8, 0.0, 5e9), "1.5e9");
        assert_eq!(tick_label(1e7, 2e6, 0.0, 1e7), "1e7");
        assert_eq!(tick_label(8e6, 2e6, 0.0, 1e7), "8e6");
        assert_eq!(tick_label(2.5e-4, 5e-5, 0.0, 5e-4), "2.5e-4");
    }
}

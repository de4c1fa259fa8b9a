//! An RGB pixel buffer with the few drawing operations charts need:
//! rectangles, thick lines and text in the built-in font ([`super::font`]).

use super::font;

/// An RGB colour.
pub type Rgb = [u8; 3];

/// A `width` × `height` RGB image, rows top to bottom.
pub struct Canvas {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
}

impl Canvas {
    /// A canvas filled with `background`.
    pub fn new(width: usize, height: usize, background: Rgb) -> Canvas {
        Canvas {
            width,
            height,
            pixels: background.repeat(width * height),
        }
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The pixels, 3 bytes each, row by row.
    pub fn pixels(&self) -> &[u8] {
        &self.pixels
    }

    /// Sets one pixel; points outside the canvas are ignored.
    pub fn set(&mut self, x: i64, y: i64, color: Rgb) {
        if x >= 0 && y >= 0 && (x as usize) < self.width && (y as usize) < self.height {
            let i = (y as usize * self.width + x as usize) * 3;
            self.pixels[i..i + 3].copy_from_slice(&color);
        }
    }

    /// Fills the rectangle of `w` × `h` pixels whose top left is (`x`, `y`).
    pub fn fill(&mut self, x: i64, y: i64, w: i64, h: i64, color: Rgb) {
        for yy in y..y + h {
            for xx in x..x + w {
                self.set(xx, yy, color);
            }
        }
    }

    /// A line from (`x0`, `y0`) to (`x1`, `y1`), `thickness` pixels wide
    /// (Bresenham's walk with a square pen).
    pub fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), thickness: i64, color: Rgb) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        let back = (thickness - 1) / 2;
        loop {
            self.fill(x - back, y - back, thickness, thickness, color);
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Writes `text` left to right with its top left at (`x`, `y`), each
    /// font pixel drawn as a `scale` × `scale` square.
    pub fn text(&mut self, x: i64, y: i64, text: &str, scale: i64, color: Rgb) {
        for (i, c) in text.chars().enumerate() {
            let left = x + (i * font::ADVANCE) as i64 * scale;
            let top = y + font::drop(c) as i64 * scale;
            for gy in 0..font::HEIGHT {
                for gx in 0..font::WIDTH {
                    if font::ink(c, gx, gy) {
                        self.fill(
                            left + gx as i64 * scale,
                            top + gy as i64 * scale,
                            scale,
                            scale,
                            color,
                        );
                    }
                }
            }
        }
    }

    /// Writes `text` bottom to top (turned a quarter left), the glyph tops
    /// facing left at column `x`, the text starting at row `y` going up.
    pub fn text_up(&mut self, x: i64, y: i64, text: &str, scale: i64, color: Rgb) {
        for (i, c) in text.chars().enumerate() {
            let bottom = y - (i * font::ADVANCE) as i64 * scale;
            for gy in 0..font::HEIGHT {
                for gx in 0..font::WIDTH {
                    if font::ink(c, gx, gy) {
                        let px = x + (gy + font::drop(c)) as i64 * scale;
                        let py = bottom - (gx as i64 + 1) * scale;
                        self.fill(px, py, scale, scale, color);
                    }
                }
            }
        }
    }
}

/// Width in pixels of `text` drawn at `scale`, without the trailing gap.
pub fn text_width(text: &str, scale: i64) -> i64 {
    let n = text.chars().count() as i64;
    if n == 0 {
        0
    } else {
        (n * font::ADVANCE as i64 - 1) * scale
    }
}

//! SVG to PNG (resvg) and SVG pages to one PDF (svg2pdf, assembled with
//! pdf-writer).
//!
//! Both read text with the system's fonts (DejaVu Sans first; Debian:
//! `fonts-dejavu-core`), loaded once per process. With no font at all
//! they refuse ([`RenderError::NoFonts`]) rather than drop every label.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, TextStr};
use resvg::{tiny_skia, usvg};

/// Why an SVG could not be turned into a PNG or a PDF.
#[derive(Debug, Clone, PartialEq)]
pub enum RenderError {
    /// The system has no font for the text.
    NoFonts,
    /// The SVG text did not parse (our own output: a bug).
    Svg(String),
    /// A size of zero, or too large for one image.
    Size(f64, f64),
    /// svg2pdf refused the drawing.
    Pdf(String),
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RenderError::NoFonts => f.write_str(
                "no system font found to draw the charts' text; install one \
                 (Debian: apt-get install fonts-dejavu-core)",
            ),
            RenderError::Svg(e) => write!(f, "chart SVG does not parse: {e}"),
            RenderError::Size(w, h) => write!(f, "cannot draw an image of {w} × {h} px"),
            RenderError::Pdf(e) => write!(f, "cannot convert a chart to PDF: {e}"),
        }
    }
}

impl std::error::Error for RenderError {}

fn fonts() -> Result<Arc<usvg::fontdb::Database>, RenderError> {
    static DB: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    let db = DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        db.set_sans_serif_family("DejaVu Sans");
        Arc::new(db)
    });
    if db.is_empty() {
        Err(RenderError::NoFonts)
    } else {
        Ok(db.clone())
    }
}

fn tree(svg: &str) -> Result<usvg::Tree, RenderError> {
    let options = usvg::Options {
        fontdb: fonts()?,
        font_family: "DejaVu Sans".to_string(),
        ..usvg::Options::default()
    };
    usvg::Tree::from_str(svg, &options).map_err(|e| RenderError::Svg(e.to_string()))
}

/// The PNG file of `svg` drawn at `zoom` times its size (2 gives sharp
/// images on high-density screens and in print).
pub fn png(svg: &str, zoom: f32) -> Result<Vec<u8>, RenderError> {
    let tree = tree(svg)?;
    let size = tree.size();
    let (w, h) = (size.width() * zoom, size.height() * zoom);
    let mut pixmap = tiny_skia::Pixmap::new(w.ceil() as u32, h.ceil() as u32)
        .ok_or(RenderError::Size(f64::from(w), f64::from(h)))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(zoom, zoom),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| RenderError::Svg(e.to_string()))
}

/// One PDF with one page per SVG, each page the SVG's size in points
/// (1 SVG unit = 1 pt; A4 is 595 × 842). Text stays text (selectable and
/// searchable), with the fonts embedded.
pub fn pdf(pages: &[String], title: &str) -> Result<Vec<u8>, RenderError> {
    let mut alloc = Ref::new(1);
    let catalog = alloc.bump();
    let page_tree = alloc.bump();
    let info = alloc.bump();
    let mut pdf = Pdf::new();
    let mut kids = Vec::with_capacity(pages.len());
    let mut chunks = Vec::with_capacity(pages.len());
    for svg in pages {
        let tree = tree(svg)?;
        let size = tree.size();
        let (chunk, root) = svg2pdf::to_chunk(&tree, svg2pdf::ConversionOptions::default())
            .map_err(|e| RenderError::Pdf(e.to_string()))?;
        let mut map = HashMap::new();
        let chunk = chunk.renumber(|old| *map.entry(old).or_insert_with(|| alloc.bump()));
        let root = map[&root];
        let page = alloc.bump();
        let content = alloc.bump();
        let (w, h) = (size.width(), size.height());
        let mut writer = pdf.page(page);
        writer.media_box(Rect::new(0.0, 0.0, w, h));
        writer.parent(page_tree);
        writer.contents(content);
        writer.resources().x_objects().pair(Name(b"P"), root);
        writer.finish();
        let mut c = Content::new();
        c.transform([w, 0.0, 0.0, h, 0.0, 0.0]).x_object(Name(b"P"));
        pdf.stream(content, &c.finish());
        kids.push(page);
        chunks.push(chunk);
    }
    pdf.catalog(catalog).pages(page_tree);
    pdf.pages(page_tree)
        .kids(kids.iter().copied())
        .count(kids.len() as i32);
    pdf.document_info(info)
        .title(TextStr(title))
        .producer(TextStr("perfflow"));
    for chunk in &chunks {
        pdf.extend(chunk);
    }
    Ok(pdf.finish())
}

//! PNG versions of the charts: the SVG that plotters drew, rasterised with
//! resvg, with text set in an embedded font (Noto Sans Regular, from the
//! `notosans` crate, SIL Open Font License 1.1).
//!
//! No system font is ever looked up: the font database holds the embedded
//! font alone and every generic family (`sans-serif`, `serif`, `monospace`,
//! …) maps to it. So the same SVG gives the same PNG bytes on any machine
//! running the same build, whatever fonts it has.

use std::sync::{Arc, OnceLock};

use resvg::{tiny_skia, usvg};

/// The family name of the embedded font.
pub const FONT_FAMILY: &str = "Noto Sans";

/// The largest PNG side drawn, in pixels (a guard against absurd SVG sizes).
const MAX_SIDE: u32 = 8192;

fn fontdb() -> Arc<usvg::fontdb::Database> {
    static DB: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_font_data(notosans::REGULAR_TTF.to_vec());
        db.set_sans_serif_family(FONT_FAMILY);
        db.set_serif_family(FONT_FAMILY);
        db.set_monospace_family(FONT_FAMILY);
        db.set_cursive_family(FONT_FAMILY);
        db.set_fantasy_family(FONT_FAMILY);
        Arc::new(db)
    })
    .clone()
}

/// Rasterises an SVG document at its own size (1 SVG unit = 1 pixel) on
/// its own background, and encodes it as PNG (8-bit RGBA).
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, String> {
    let opt = usvg::Options {
        font_family: FONT_FAMILY.to_string(),
        fontdb: fontdb(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| format!("bad SVG: {e}"))?;
    let size = tree.size().to_int_size();
    let (w, h) = (size.width(), size.height());
    if w > MAX_SIDE || h > MAX_SIDE {
        return Err(format!("SVG of {w}x{h} pixels is too large to rasterise"));
    }
    let mut pixmap = tiny_skia::Pixmap::new(w, h).ok_or("SVG of zero size")?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap
        .encode_png()
        .map_err(|e| format!("PNG encoding: {e}"))
}

/// Whether `name` (`x.svg`) has a PNG twin; its name (`x.png`).
pub fn png_name(svg_name: &str) -> Option<String> {
    svg_name
        .strip_suffix(".svg")
        .map(|stem| format!("{stem}.png"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Decodes a PNG into (width, height, RGBA pixels).
    pub(crate) fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let pixmap = tiny_skia::Pixmap::decode_png(png_bytes).expect("a PNG");
        (pixmap.width(), pixmap.height(), pixmap.data().to_vec())
    }

    fn distinct_colours(rgba: &[u8]) -> usize {
        let mut v: Vec<&[u8]> = rgba.chunks_exact(4).collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    }

    const TEXT: &str = r##"<svg width="200" height="60" viewBox="0 0 200 60" xmlns="http://www.w3.org/2000/svg"><rect x="0" y="0" width="200" height="60" fill="#FFFFFF"/><text x="10" y="40" font-family="sans-serif" font-size="24" fill="#000000">GPU 42</text></svg>"##;

    #[test]
    fn text_is_drawn_with_the_embedded_font() {
        let png = svg_to_png(TEXT).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let (w, h, px) = decode(&png);
        assert_eq!((w, h), (200, 60));
        // Glyphs: dark pixels and anti-aliased greys on the white page.
        let dark = px.chunks_exact(4).filter(|p| p[0] < 100).count();
        assert!(dark > 100, "{dark} dark pixels: no text drawn");
        assert!(distinct_colours(&px) > 5);
        // The same page without its text is white only.
        let blank = TEXT.replace("GPU 42", "");
        let (_, _, px2) = decode(&svg_to_png(&blank).unwrap());
        assert_eq!(distinct_colours(&px2), 1);
        // Other text draws other pixels; any family falls back to the embedded font.
        let other = TEXT.replace("GPU 42", "GPU 43");
        assert_ne!(decode(&svg_to_png(&other).unwrap()).2, px);
        let serif = TEXT.replace("sans-serif", "Some Font Nobody Has");
        assert_eq!(decode(&svg_to_png(&serif).unwrap()).2, px);
    }

    #[test]
    fn bytes_are_stable_and_errors_are_errors() {
        assert_eq!(svg_to_png(TEXT).unwrap(), svg_to_png(TEXT).unwrap());
        assert!(svg_to_png("not svg").unwrap_err().contains("bad SVG"));
        let huge = r#"<svg width="100000" height="10" xmlns="http://www.w3.org/2000/svg"/>"#;
        assert!(svg_to_png(huge).unwrap_err().contains("too large"));
        assert_eq!(
            png_name("utilization.svg").as_deref(),
            Some("utilization.png")
        );
        assert_eq!(png_name("report.html"), None);
    }
}

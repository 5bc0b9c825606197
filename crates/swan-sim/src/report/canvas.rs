//! Drawing plumbing shared by the figures: output backends, fonts, colours, titles,
//! legends and the data helpers (gap splitting, decimation, clipping).
//!
//! Text is laid out without asking the font engine wherever plotters allows it (no
//! plotters captions or series-label boxes), so that SVG output works on a machine
//! with no fonts at all; PNG output rasterises text and needs a system font.

use std::fs;
use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use thiserror::Error;

use super::{Format, ReportError};

/// Font family used for all text.
pub const FONT: &str = "sans-serif";

/// A figure that can be drawn on any plotters backend.
pub trait Figure {
    /// Size in pixels (SVG user units for SVG).
    fn size(&self) -> (u32, u32);
    /// Draw the figure onto `root` (already filled white).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>;
}

/// A drawing call that plotters refused. Only its text is kept: plotters' error type
/// depends on the backend the figure is drawn on.
#[derive(Debug, Error)]
#[error("drawing failed: {0}")]
pub struct PlotError(String);

/// Render `fig` to `path` in `format`; errors name `path`.
pub fn render<F: Figure>(fig: &F, path: &Path, format: Format) -> Result<(), ReportError> {
    let size = fig.size();
    let drawn = |source| ReportError::Draw { path: path.to_path_buf(), source };
    match format {
        Format::Svg => {
            let mut buf = String::new();
            {
                let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
                root.fill(&WHITE).map_err(pe).map_err(drawn)?;
                fig.draw(&root).map_err(drawn)?;
                root.present().map_err(pe).map_err(drawn)?;
            }
            fs::write(path, buf).map_err(|source| ReportError::Write { path: path.to_path_buf(), source })?;
        }
        Format::Png => {
            ensure_png_fonts()?;
            let root = BitMapBackend::new(path, size).into_drawing_area();
            root.fill(&WHITE).map_err(pe).map_err(drawn)?;
            fig.draw(&root).map_err(drawn)?;
            root.present().map_err(|e| ReportError::WritePng { path: path.to_path_buf(), reason: e.to_string() })?;
        }
    }
    Ok(())
}

/// Turn a plotters error into a [`PlotError`].
pub fn pe<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError(e.to_string())
}

/// Well-known places of a sans-serif TrueType font.
const FONT_CANDIDATES: [&str; 6] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
];

/// Make sure text can be rasterised for PNG output.
///
/// With plotters' `ab_glyph` font engine, fonts must be registered by hand: we register
/// the first system TrueType font found. With the `ttf` engine (which plotters prefers
/// when both features are enabled, as in this workspace) fonts are found through
/// fontconfig. Either way we then ask plotters to lay out a string, and turn a failure
/// into an actionable message.
pub fn ensure_png_fonts() -> Result<(), ReportError> {
    // The font engine's error is kept as text, to hand a copy to every later call.
    static CHECK: OnceLock<Result<(), String>> = OnceLock::new();
    CHECK
        .get_or_init(|| {
            if let Some(bytes) = find_system_font() {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                // An unparsable file only means we fall back to the font engine's own lookup.
                let _ = plotters::style::register_font(FONT, FontStyle::Normal, bytes);
            }
            (FONT, 16).into_font().layout_box("Ag 0.9").map(drop).map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|reason| ReportError::NoFont { reason })
}

fn find_system_font() -> Option<Vec<u8>> {
    for candidate in FONT_CANDIDATES {
        if let Ok(bytes) = fs::read(candidate) {
            return Some(bytes);
        }
    }
    // Any DejaVuSans*.ttf / *.ttf below /usr/share/fonts, shallow search.
    let mut stack = vec![std::path::PathBuf::from("/usr/share/fonts")];
    let mut fallback = None;
    let mut visited = 0;
    while let Some(dir) = stack.pop() {
        visited += 1;
        if visited > 200 {
            break;
        }
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("ttf")) {
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                if name == "DejaVuSans.ttf" {
                    return fs::read(&path).ok();
                }
                if fallback.is_none() && !name.contains("Mono") && !name.contains("Serif") {
                    fallback = Some(path);
                }
            }
        }
    }
    fallback.and_then(|p| fs::read(p).ok())
}

// ---------------------------------------------------------------------------------------
// Colours and styles

/// Distinct colours (Tableau 10), one per run.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Colour of series `i`.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Write throughput in the per-SSD figure (SWAN Fig. 6: blue).
pub const WRITE_BLUE: RGBColor = RGBColor(31, 90, 210);
/// Read throughput in the per-SSD figure (SWAN Fig. 6: red).
pub const READ_RED: RGBColor = RGBColor(215, 35, 35);
/// Neutral dark grey for reference marks.
pub const GREY: RGBColor = RGBColor(90, 90, 90);
/// Grid lines.
pub const GRID: RGBColor = RGBColor(225, 225, 225);

/// Text style of a given size and colour.
pub fn text(size: f64, color: RGBColor) -> TextStyle<'static> {
    let mut style = TextStyle::from((FONT, size).into_font());
    style.color = color.to_backend_color();
    style
}

/// Rough width of `s` in pixels at font size `size`, used when the font engine can't
/// tell (SVG without fonts). Generous for DejaVu Sans, the widest common sans font.
pub fn heuristic_width(s: &str, size: f64) -> i32 {
    let em = size / 1.24;
    let w: f64 = s
        .chars()
        .map(|c| match c {
            'i' | 'l' | 'j' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | ' ' | '(' | ')' | '[' | ']' => 0.34,
            'f' | 't' | 'r' | 'I' => 0.45,
            'm' | 'w' | 'M' | 'W' => 0.92,
            c if c.is_ascii_uppercase() => 0.72,
            _ => 0.62,
        })
        .sum();
    (w * em).ceil() as i32
}

/// Width of `s` on `area`: the font engine's answer, or the heuristic.
pub fn text_width<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, s: &str, style: &TextStyle) -> i32 {
    match area.estimate_text_size(s, style) {
        Ok((w, _)) => w as i32,
        Err(_) => heuristic_width(s, style.font.get_size()),
    }
}

/// Draw `s` with the given anchor at `pos` (pixels relative to `area`).
pub fn put_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &str,
    style: &TextStyle,
    pos: (i32, i32),
    h: HPos,
    v: VPos,
) -> Result<(), PlotError> {
    area.draw_text(s, &style.pos(Pos::new(h, v)), pos).map_err(pe)
}

/// Draw a figure title centred at the top of `area`; returns the area below it.
pub fn title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    main: &str,
    sub: &str,
) -> Result<DrawingArea<DB, Shift>, PlotError> {
    let (w, _) = area.dim_in_pixel();
    put_text(area, main, &text(24.0, BLACK), (w as i32 / 2, 10), HPos::Center, VPos::Top)?;
    let mut height = 44;
    if !sub.is_empty() {
        put_text(area, sub, &text(16.0, GREY), (w as i32 / 2, 42), HPos::Center, VPos::Top)?;
        height = 66;
    }
    Ok(area.split_vertically(height).1)
}

// ---------------------------------------------------------------------------------------
// Legends

/// How a legend entry's swatch looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swatch {
    /// A solid line.
    Line,
    /// A dashed line.
    Dashed,
    /// A line with a dot on it.
    LineDot,
}

/// One legend entry.
#[derive(Debug, Clone)]
pub struct LegendEntry {
    /// Text.
    pub label: String,
    /// Colour of the swatch.
    pub color: RGBColor,
    /// Swatch shape.
    pub swatch: Swatch,
}

impl LegendEntry {
    /// A new entry.
    pub fn new(label: impl Into<String>, color: RGBColor, swatch: Swatch) -> Self {
        LegendEntry { label: label.into(), color, swatch }
    }
}

const LEGEND_FONT: f64 = 16.0;
const LEGEND_ROW: i32 = 24;
const SWATCH_W: i32 = 30;
const ENTRY_GAP: i32 = 26;

/// Lay entries out in rows no wider than `width`: returns for each row the entries'
/// `(index, x offset)` and the row width.
fn legend_layout<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
    width: i32,
) -> Vec<(Vec<(usize, i32)>, i32)> {
    let style = text(LEGEND_FONT, BLACK);
    let mut rows: Vec<(Vec<(usize, i32)>, i32)> = Vec::new();
    let mut row: Vec<(usize, i32)> = Vec::new();
    let mut x = 0;
    for (i, e) in entries.iter().enumerate() {
        let w = SWATCH_W + 8 + text_width(area, &e.label, &style);
        if !row.is_empty() && x + w > width {
            rows.push((std::mem::take(&mut row), x - ENTRY_GAP));
            x = 0;
        }
        row.push((i, x));
        x += w + ENTRY_GAP;
    }
    if !row.is_empty() {
        rows.push((row, x - ENTRY_GAP));
    }
    rows
}

/// Height a legend with these entries needs across `area`'s width.
pub fn legend_height<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[LegendEntry]) -> u32 {
    let (w, _) = area.dim_in_pixel();
    let rows = legend_layout(area, entries, w as i32 - 40).len() as i32;
    (rows * LEGEND_ROW + 10) as u32
}

/// Draw a centred legend at the top of `area`; returns the area below it.
pub fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
) -> Result<DrawingArea<DB, Shift>, PlotError> {
    if entries.is_empty() {
        return Ok(area.clone());
    }
    let (w, _) = area.dim_in_pixel();
    let style = text(LEGEND_FONT, BLACK);
    let rows = legend_layout(area, entries, w as i32 - 40);
    for (r, (row, row_w)) in rows.iter().enumerate() {
        let x0 = (w as i32 - row_w) / 2;
        let y = r as i32 * LEGEND_ROW + LEGEND_ROW / 2 + 2;
        for &(i, dx) in row {
            let e = &entries[i];
            let x = x0 + dx;
            draw_swatch(area, e, x, y)?;
            put_text(area, &e.label, &style, (x + SWATCH_W + 8, y), HPos::Left, VPos::Center)?;
        }
    }
    let used = legend_height(area, entries);
    Ok(area.split_vertically(used).1)
}

fn draw_swatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    e: &LegendEntry,
    x: i32,
    y: i32,
) -> Result<(), PlotError> {
    let style = e.color.stroke_width(3);
    match e.swatch {
        Swatch::Line | Swatch::LineDot => {
            area.draw(&PathElement::new(vec![(x, y), (x + SWATCH_W, y)], style)).map_err(pe)?;
            if e.swatch == Swatch::LineDot {
                area.draw(&Circle::new((x + SWATCH_W / 2, y), 4, e.color.filled())).map_err(pe)?;
            }
        }
        Swatch::Dashed => {
            let style = e.color.stroke_width(2);
            for k in 0..3 {
                let a = x + k * 11;
                area.draw(&PathElement::new(vec![(a, y), (a + 7, y)], style)).map_err(pe)?;
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Data helpers

/// Pair `t` with `v`, splitting into runs of consecutive present values.
pub fn segments(t: &[f64], v: &[Option<f64>]) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for (&x, y) in t.iter().zip(v) {
        match y {
            Some(y) => cur.push((x, *y)),
            None => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Like [`segments`], but a run of empty cells spanning at most `max_gap` (in `t`)
/// does not break the line: for sampled quantities (e.g. victim utilization, known
/// only in intervals where victims were chosen) a short gap means "no sample", not zero.
pub fn bridged_segments(t: &[f64], v: &[Option<f64>], max_gap: f64) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for (&x, y) in t.iter().zip(v) {
        if let Some(y) = *y {
            if cur.last().is_some_and(|&(px, _)| x - px > max_gap) {
                out.push(std::mem::take(&mut cur));
            }
            cur.push((x, y));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Reduce a polyline to at most about `2 * buckets` points, keeping each bucket's
/// minimum and maximum (in their original order) so peaks and dips survive.
pub fn decimate(points: &[(f64, f64)], buckets: usize) -> Vec<(f64, f64)> {
    let buckets = buckets.max(1);
    if points.len() <= 2 * buckets {
        return points.to_vec();
    }
    let chunk = points.len().div_ceil(buckets);
    let mut out = Vec::with_capacity(2 * buckets + 2);
    for c in points.chunks(chunk) {
        let (mut lo, mut hi) = (0, 0);
        for (i, p) in c.iter().enumerate() {
            if p.1 < c[lo].1 {
                lo = i;
            }
            if p.1 > c[hi].1 {
                hi = i;
            }
        }
        let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        out.push(c[a]);
        if b != a {
            out.push(c[b]);
        }
    }
    // Keep the true end points so the line spans the full time range.
    if out.first() != points.first() {
        out.insert(0, points[0]);
    }
    if out.last() != points.last() {
        out.push(points[points.len() - 1]);
    }
    out
}

/// Keep the part of a non-decreasing-in-y polyline with `y >= y_min`, interpolating the
/// crossing point.
pub fn clip_below(points: &[(f64, f64)], y_min: f64) -> Vec<(f64, f64)> {
    let Some(first) = points.iter().position(|p| p.1 >= y_min) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(points.len() - first + 1);
    if first > 0 {
        let (a, b) = (points[first - 1], points[first]);
        if b.1 > a.1 {
            let f = (y_min - a.1) / (b.1 - a.1);
            out.push((a.0 + f * (b.0 - a.0), y_min));
        }
    }
    out.extend(points[first..].iter().filter(|p| p.1 >= y_min));
    out
}

/// Max of the present values (`None` if none).
pub fn max_of<'a>(values: impl IntoIterator<Item = &'a Option<f64>>) -> Option<f64> {
    values.into_iter().flatten().copied().reduce(f64::max)
}

/// A "nice" upper bound for an axis showing values up to `max` (≥ max, 1, 2, 2.5 or 5 × 10^k).
pub fn nice_ceil(max: f64) -> f64 {
    // NaN fails `max > 0.0` too, so it also gets the default.
    if max.is_nan() || max <= 0.0 || !max.is_finite() {
        return 1.0;
    }
    let max = max * 1.04;
    let p = 10f64.powf(max.log10().floor());
    for m in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if m * p >= max {
            return m * p;
        }
    }
    10.0 * p
}

/// Compact number for tick labels: `950`, `1.2k`, `15k`, `2M`, `0.25`.
pub fn compact(v: f64) -> String {
    let a = v.abs();
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if a >= 1e6 {
        trim(format!("{:.1}", v / 1e6)) + "M"
    } else if a >= 1e4 {
        trim(format!("{:.0}", v / 1e3)) + "k"
    } else if a >= 1e3 {
        trim(format!("{:.1}", v / 1e3)) + "k"
    } else if a >= 10.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        trim(format!("{v:.1}"))
    } else {
        trim(format!("{v:.2}"))
    }
}

/// Tick label for a time axis in seconds: plain numbers up to 99 999 s.
pub fn seconds(v: f64) -> String {
    if v.abs() >= 1e5 {
        compact(v)
    } else if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// 1, 2 or 5 × 10^k at or below `v` (> 0).
pub fn nice_floor_125(v: f64) -> f64 {
    let p = 10f64.powf(v.log10().floor());
    let m = v / p;
    let f = if m >= 5.0 - 1e-9 {
        5.0
    } else if m >= 2.0 - 1e-9 {
        2.0
    } else {
        1.0
    };
    f * p
}

/// 1, 2 or 5 × 10^k at or above `v` (> 0).
pub fn nice_ceil_125(v: f64) -> f64 {
    let p = 10f64.powf(v.log10().floor());
    let m = v / p;
    let f = if m <= 1.0 + 1e-9 {
        1.0
    } else if m <= 2.0 + 1e-9 {
        2.0
    } else if m <= 5.0 + 1e-9 {
        5.0
    } else {
        10.0
    };
    f * p
}

/// Tick positions on a log axis spanning `lo..hi` (both > 0): the mantissas that leave
/// room for their labels (1-2-3-5 for about a decade, 1-2-5 for a few, 1 beyond).
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let ratio = hi / lo;
    let keep: &[f64] = if ratio <= 12.0 {
        &[1.0, 2.0, 3.0, 5.0]
    } else if ratio <= 2e4 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut ticks = Vec::new();
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    for e in first..=last {
        for m in keep {
            let v = m * 10f64.powi(e);
            if v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9) {
                ticks.push(v);
            }
        }
    }
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimate_keeps_extremes_and_ends() {
        let pts: Vec<(f64, f64)> =
            (0..10_000).map(|i| (i as f64, if i == 5000 { 99.0 } else { (i % 7) as f64 })).collect();
        let d = decimate(&pts, 100);
        assert!(d.len() <= 204, "{}", d.len());
        assert!(d.iter().any(|p| p.1 == 99.0));
        assert_eq!(d.first(), pts.first());
        assert_eq!(d.last(), pts.last());
        assert!(d.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn clip_interpolates() {
        let c = clip_below(&[(1.0, 0.5), (3.0, 0.9), (5.0, 1.0)], 0.95);
        assert_eq!(c.len(), 2);
        assert!((c[0].0 - 4.0).abs() < 1e-9 && (c[0].1 - 0.95).abs() < 1e-12);
        assert!(clip_below(&[(1.0, 0.5)], 0.95).is_empty());
    }

    #[test]
    fn segments_split_on_gaps() {
        let s = segments(&[1.0, 2.0, 3.0, 4.0], &[Some(1.0), None, Some(2.0), Some(3.0)]);
        assert_eq!(s, vec![vec![(1.0, 1.0)], vec![(3.0, 2.0), (4.0, 3.0)]]);
    }

    #[test]
    fn log_axis_helpers() {
        assert_eq!(nice_floor_125(31.0), 20.0);
        assert_eq!(nice_floor_125(100.0), 100.0);
        assert_eq!(nice_ceil_125(1600.0), 2000.0);
        assert_eq!(nice_ceil_125(5000.0), 5000.0);
        assert_eq!(nice_ceil_125(5100.0), 10000.0);
        assert_eq!(log_ticks(20.0, 2000.0), vec![20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0]);
        assert_eq!(log_ticks(1000.0, 10000.0), vec![1000.0, 2000.0, 3000.0, 5000.0, 10000.0]);
        assert_eq!(log_ticks(1.0, 1e6), vec![1.0, 10.0, 100.0, 1000.0, 1e4, 1e5, 1e6]);
        assert_eq!(seconds(1200.0), "1200");
        assert_eq!(seconds(0.5), "0.5");
    }

    #[test]
    fn bridged_segments_bridge_short_gaps_only() {
        let t = [1.0, 2.0, 3.0, 4.0, 10.0, 11.0];
        let v = [Some(1.0), None, Some(2.0), None, Some(3.0), Some(4.0)];
        let s = bridged_segments(&t, &v, 2.0);
        assert_eq!(s, vec![vec![(1.0, 1.0), (3.0, 2.0)], vec![(10.0, 3.0), (11.0, 4.0)]]);
    }

    #[test]
    fn compact_labels() {
        assert_eq!(compact(0.0), "0");
        assert_eq!(compact(950.0), "950");
        assert_eq!(compact(1500.0), "1.5k");
        assert_eq!(compact(20000.0), "20k");
        assert_eq!(compact(2_000_000.0), "2M");
        assert_eq!(compact(0.25), "0.25");
        assert_eq!(nice_ceil(0.0), 1.0);
        assert!(nice_ceil(812.0) >= 812.0 * 1.04);
    }
}

//! Harmonia's figures: response time against a swept parameter (Fig. 7, Fig. 8) and each
//! SSD's request latencies over a short window (Fig. 9). The caller computes the series
//! from its runs; this module only draws them.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::canvas::{
    color, legend, legend_height, pe, render, text, title, Figure, LegendEntry, PlotError, Swatch, GRID,
};
use super::{create_dir, Format, ReportError};

/// One line of an [`XyFigure`].
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Drawn as dots only (a scatter), not joined.
    pub dots: bool,
}

/// One panel: lines over a linear x axis.
pub struct Panel {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub series: Vec<Series>,
}

/// Panels stacked vertically under one title, sharing one legend (series by position).
pub struct XyFigure {
    pub title: String,
    pub subtitle: String,
    pub panels: Vec<Panel>,
}

const WIDTH: u32 = 1100;
const PANEL_H: u32 = 380;

impl Figure for XyFigure {
    fn size(&self) -> (u32, u32) {
        (WIDTH, 130 + PANEL_H * self.panels.len().max(1) as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let body = title(root, &self.title, &self.subtitle)?;
        let entries: Vec<LegendEntry> = self
            .panels
            .first()
            .map(|p| {
                p.series
                    .iter()
                    .enumerate()
                    .map(|(i, s)| LegendEntry::new(s.label.clone(), color(i), Swatch::Line))
                    .collect()
            })
            .unwrap_or_default();
        let (leg, body) = body.split_vertically(legend_height(&body, &entries));
        legend(&leg, &entries)?;
        let areas = body.split_evenly((self.panels.len().max(1), 1));
        for (panel, area) in self.panels.iter().zip(areas) {
            draw_panel(&area, panel)?;
        }
        Ok(())
    }
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, p: &Panel) -> Result<(), PlotError> {
    let all = p.series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        return Ok(());
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let y1 = if y1 > 0.0 { y1 * 1.08 } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(46)
        .y_label_area_size(78)
        .build_cartesian_2d(x0..x1, 0.0..y1)
        .map_err(pe)?;
    chart
        .configure_mesh()
        .x_desc(p.x_desc.as_str())
        .y_desc(p.y_desc.as_str())
        .max_light_lines(0)
        .bold_line_style(GRID)
        .label_style(text(14.0, BLACK))
        .axis_desc_style(text(16.0, BLACK))
        .draw()
        .map_err(pe)?;
    for (i, s) in p.series.iter().enumerate() {
        let c = color(i);
        if s.dots {
            chart.draw_series(s.points.iter().map(|&pt| Circle::new(pt, 2, c.filled()))).map_err(pe)?;
        } else {
            chart.draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2))).map_err(pe)?;
            chart.draw_series(s.points.iter().map(|&pt| Circle::new(pt, 4, c.filled()))).map_err(pe)?;
        }
    }
    area.draw_text(&p.title, &text(15.0, BLACK), (90, 4)).map_err(pe)?;
    Ok(())
}

/// Writes `fig` as `dir/stem.{svg,png}`; returns the path.
pub fn write(fig: &XyFigure, dir: &Path, stem: &str, format: Format) -> Result<PathBuf, ReportError> {
    create_dir(dir)?;
    let path = dir.join(format!("{stem}.{}", format.extension()));
    render(fig, &path, format)?;
    Ok(path)
}

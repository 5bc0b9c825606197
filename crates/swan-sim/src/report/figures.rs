//! The figures themselves.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::canvas::{
    bridged_segments, clip_below, compact, decimate, legend, log_ticks, max_of, nice_ceil, nice_ceil_125,
    nice_floor_125, pe, put_text, seconds, segments, text, title, Figure, LegendEntry, PlotError, Swatch, GREY, GRID,
    READ_RED, WRITE_BLUE,
};
use super::load::{Run, TimeSeries};

/// A run with its legend label and colour (the same in every figure).
pub struct RunStyle<'a> {
    /// The run.
    pub run: &'a Run,
    /// Legend name.
    pub label: String,
    /// Line colour.
    pub color: RGBColor,
}

const WIDTH: u32 = 1200;
const TICK_FONT: f64 = 15.0;
const DESC_FONT: f64 = 17.0;
/// Points per polyline beyond which lines are min/max-decimated.
const MAX_BUCKETS: usize = 1500;

type Lin = Cartesian2d<RangedCoordf64, RangedCoordf64>;

fn timeseries_with_rows(run: &Run) -> Option<&TimeSeries> {
    run.timeseries.as_ref().filter(|t| !t.is_empty())
}

/// Upper end of the time axis for these series.
fn time_max<'a>(series: impl IntoIterator<Item = &'a TimeSeries>) -> f64 {
    let m = series.into_iter().filter_map(|t| t.time().last().copied()).fold(0.0, f64::max);
    if m > 0.0 {
        m
    } else {
        1.0
    }
}

/// Axis labels, tick labels and a light grid for a linear chart.
fn mesh<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Lin>,
    x_desc: &str,
    y_desc: &str,
    y_fmt: &dyn Fn(&f64) -> String,
) -> Result<(), PlotError> {
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(12)
        .y_labels(8)
        .max_light_lines(0)
        .bold_line_style(GRID)
        .label_style(text(TICK_FONT, BLACK))
        .axis_desc_style(text(DESC_FONT, BLACK))
        .x_label_formatter(&|v| seconds(*v))
        .y_label_formatter(y_fmt)
        .draw()
        .map_err(pe)?;
    Ok(())
}

/// Draw `values` over `t` as lines broken at empty cells.
fn draw_gapped<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Lin>,
    t: &[f64],
    values: &[Option<f64>],
    style: ShapeStyle,
    buckets: usize,
) -> Result<(), PlotError> {
    for seg in segments(t, values) {
        chart.draw_series(LineSeries::new(decimate(&seg, buckets), style)).map_err(pe)?;
    }
    Ok(())
}

/// A dashed vertical line at `x` from 0 to `y_max`.
fn vline<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Lin>,
    x: f64,
    y_max: f64,
    color: RGBColor,
) -> Result<(), PlotError> {
    chart.draw_series(DashedLineSeries::new(vec![(x, 0.0), (x, y_max)], 9, 6, color.stroke_width(2))).map_err(pe)?;
    Ok(())
}

/// A box around the plotting area.
fn frame<DB: DrawingBackend>(chart: &mut ChartContext<'_, DB, Lin>, x_max: f64, y_max: f64) -> Result<(), PlotError> {
    chart
        .draw_series(std::iter::once(Rectangle::new([(0.0, 0.0), (x_max, y_max)], BLACK.stroke_width(1))))
        .map_err(pe)?;
    Ok(())
}

/// Line width for a time series of `rows` points: 2 px while sparse, 1 px when dense.
/// (Thick polylines that zigzag sharply get long miter spikes in the bitmap backend.)
fn line_width(rows: usize) -> u32 {
    if rows <= 300 {
        2
    } else {
        1
    }
}

/// Elementwise sum where either side may be missing (missing + missing = missing).
fn sum_opt(a: &[Option<f64>], b: &[Option<f64>]) -> Vec<Option<f64>> {
    a.iter()
        .zip(b)
        .map(|(x, y)| match (x, y) {
            (None, None) => None,
            _ => Some(x.unwrap_or(0.0) + y.unwrap_or(0.0)),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Fig. 5: user write throughput over time

/// `fig5_throughput`: user write MB/s over time, one line per run.
pub struct Throughput<'a> {
    runs: Vec<&'a RunStyle<'a>>,
}

impl<'a> Throughput<'a> {
    /// The runs that have a non-empty time series.
    pub fn new(all: &'a [RunStyle<'a>]) -> Self {
        Throughput { runs: all.iter().filter(|s| timeseries_with_rows(s.run).is_some()).collect() }
    }

    /// True when at least one run has data.
    pub fn has_data(&self) -> bool {
        !self.runs.is_empty()
    }

    fn series(&self) -> impl Iterator<Item = (&'a RunStyle<'a>, &'a TimeSeries)> + '_ {
        self.runs.iter().filter_map(|s| Some((*s, timeseries_with_rows(s.run)?)))
    }
}

impl Figure for Throughput<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH, 680)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let area = title(
            root,
            "User write throughput over time",
            "reproduces SWAN Fig. 1 / 4 / 5 \u{2014} one line per run; dashed vertical line: the run's GC onset",
        )?;
        let mut entries: Vec<LegendEntry> =
            self.runs.iter().map(|s| LegendEntry::new(s.label.clone(), s.color, Swatch::Line)).collect();
        if self.runs.iter().any(|s| s.run.gc_onset_s().is_some()) {
            entries.push(LegendEntry::new("GC onset (colour of its run)", GREY, Swatch::Dashed));
        }
        let area = legend(&area, &entries)?;

        let t_max = time_max(self.series().map(|(_, t)| t));
        let y_max =
            nice_ceil(self.series().filter_map(|(_, t)| max_of(t.numeric("user_write_mbps")?)).fold(0.0, f64::max));
        let mut chart = ChartBuilder::on(&area)
            .margin(12)
            .margin_right(40)
            .x_label_area_size(56)
            .y_label_area_size(90)
            .build_cartesian_2d(0.0..t_max, 0.0..y_max)
            .map_err(pe)?;
        mesh(&mut chart, "Simulated time (s)", "User write throughput (MB/s)", &|v| compact(*v))?;
        let width = line_width(self.series().map(|(_, t)| t.len()).max().unwrap_or(0));
        for (s, ts) in self.series() {
            if let Some(v) = ts.numeric("user_write_mbps") {
                draw_gapped(&mut chart, ts.time(), v, s.color.stroke_width(width), MAX_BUCKETS)?;
            }
        }
        for (s, _) in self.series() {
            if let Some(g) = s.run.gc_onset_s().filter(|g| (0.0..=t_max).contains(g)) {
                vline(&mut chart, g, y_max, s.color)?;
            }
        }
        frame(&mut chart, t_max, y_max)?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Fig. 6: per-SSD throughput

/// `fig6_per_ssd_<run>`: one row per SSD plus a row for the array's user writes.
pub struct PerSsd<'a> {
    style: &'a RunStyle<'a>,
}

const FIG6_FOOTER: u32 = 54;
const FIG6_HEADER: u32 = 66 + 34;
const FIG6_NAME_W: u32 = 86;
const ARRAY_COLOR: RGBColor = RGBColor(30, 30, 30);

impl<'a> PerSsd<'a> {
    /// The figure for one run.
    pub fn new(style: &'a RunStyle<'a>) -> Self {
        PerSsd { style }
    }

    fn ts(&self) -> Option<&'a TimeSeries> {
        timeseries_with_rows(self.style.run).filter(|t| t.num_ssds() > 0)
    }

    /// True when the run has a time series with per-SSD columns.
    pub fn has_data(&self) -> bool {
        self.ts().is_some()
    }

    fn row_height(&self) -> u32 {
        match self.ts().map_or(1, |t| t.num_ssds()) + 1 {
            0..=5 => 130,
            6..=8 => 104,
            _ => 90,
        }
    }
}

impl Figure for PerSsd<'_> {
    fn size(&self) -> (u32, u32) {
        let rows = self.ts().map_or(1, |t| t.num_ssds()) as u32 + 1;
        (WIDTH, FIG6_HEADER + rows * self.row_height() + FIG6_FOOTER + 14)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let Some(ts) = self.ts() else { return Ok(()) };
        let run = self.style.run;
        let n = ts.num_ssds();
        let t = ts.time();
        let t_max = time_max([ts]);
        let area = title(
            root,
            &format!("Per-SSD throughput \u{2014} {}", self.style.label),
            &format!(
                "reproduces SWAN Fig. 6 \u{2014} run `{}`; each SSD row: user + GC traffic; bottom row: array user writes",
                run.name
            ),
        )?;
        let mut entries = vec![
            LegendEntry::new("SSD write MB/s (user + GC)", WRITE_BLUE, Swatch::Line),
            LegendEntry::new("SSD read MB/s (user + GC)", READ_RED, Swatch::Line),
            LegendEntry::new("array user write MB/s", ARRAY_COLOR, Swatch::Line),
        ];
        let onset = run.gc_onset_s().filter(|g| (0.0..=t_max).contains(g));
        if onset.is_some() {
            entries.push(LegendEntry::new("GC onset", GREY, Swatch::Dashed));
        }
        let area = legend(&area, &entries)?;

        // Per-SSD write and read, user + GC.
        let col = |i: usize, kind: &str| ts.ssd_column(i, kind).unwrap_or(&[]);
        let writes: Vec<Vec<Option<f64>>> =
            (0..n).map(|i| sum_opt(col(i, "write_mbps"), col(i, "gc_write_mbps"))).collect();
        let reads: Vec<Vec<Option<f64>>> =
            (0..n).map(|i| sum_opt(col(i, "read_mbps"), col(i, "gc_read_mbps"))).collect();
        let ssd_max = nice_ceil(writes.iter().chain(&reads).filter_map(max_of).fold(0.0, f64::max));
        let array = ts.numeric("user_write_mbps").unwrap_or(&[]);
        let array_max = nice_ceil(max_of(array).unwrap_or(0.0));

        let row_h = self.row_height();
        let (strip, rest) = area.split_horizontally(34);
        let (_, rest_h) = rest.dim_in_pixel();
        let breaks: Vec<u32> = (1..=n as u32).map(|k| k * row_h).filter(|&y| y < rest_h).collect();
        let rows = rest.split_by_breakpoints(Vec::<u32>::new(), breaks);
        put_text(
            &strip,
            "Throughput (MB/s)",
            &text(DESC_FONT, BLACK).transform(FontTransform::Rotate270),
            (16, (n as u32 * row_h / 2) as i32),
            HPos::Center,
            VPos::Center,
        )?;

        let plot_width = (WIDTH - 34 - FIG6_NAME_W - 60 - 24) as usize;
        for (r, row) in rows.iter().enumerate() {
            let last = r == rows.len() - 1;
            let (name_area, chart_area) = row.split_horizontally(FIG6_NAME_W);
            let (_, name_h) = name_area.dim_in_pixel();
            let centre = if last { (name_h as i32 - FIG6_FOOTER as i32 - 14) / 2 } else { name_h as i32 / 2 };
            row_label(&name_area, (r < n).then_some(r), centre)?;
            let row = Row { t, t_max, last, onset, plot_width };
            if r < n {
                row.chart(
                    &chart_area,
                    ssd_max,
                    &[(&writes[r], WRITE_BLUE.stroke_width(1)), (&reads[r], READ_RED.stroke_width(1))],
                )?;
            } else {
                row.chart(&chart_area, array_max, &[(array, ARRAY_COLOR.stroke_width(1))])?;
            }
        }
        Ok(())
    }
}

/// A row's name: "SSD r", or for the array's row (`ssd` None) "Array / user write".
fn row_label<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ssd: Option<usize>,
    centre: i32,
) -> Result<(), PlotError> {
    let x = FIG6_NAME_W as i32 / 2;
    match ssd {
        Some(r) => put_text(area, &format!("SSD {r}"), &text(16.0, BLACK), (x, centre), HPos::Center, VPos::Center),
        None => {
            let style = text(15.0, BLACK);
            put_text(area, "Array", &style, (x, centre - 10), HPos::Center, VPos::Center)?;
            put_text(area, "user write", &style, (x, centre + 10), HPos::Center, VPos::Center)
        }
    }
}

/// What every row of Fig. 6 shares: the time axis, whether it is the bottom row (which
/// carries the axis), the GC onset line, and the plot's width in pixels.
struct Row<'a> {
    t: &'a [f64],
    t_max: f64,
    last: bool,
    onset: Option<f64>,
    plot_width: usize,
}

impl Row<'_> {
    /// One row's chart: `series` over time on a 0..`y_max` axis.
    fn chart<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        y_max: f64,
        series: &[(&[Option<f64>], ShapeStyle)],
    ) -> Result<(), PlotError> {
        let mut builder = ChartBuilder::on(area);
        builder.margin_top(9).margin_right(24).y_label_area_size(60);
        if self.last {
            builder.x_label_area_size(FIG6_FOOTER).margin_bottom(14);
        } else {
            builder.margin_bottom(5);
        }
        let mut chart = builder.build_cartesian_2d(0.0..self.t_max, 0.0..y_max).map_err(pe)?;
        let mut m = chart.configure_mesh();
        m.x_labels(12)
            .y_labels(4)
            .max_light_lines(0)
            .bold_line_style(GRID)
            .label_style(text(13.0, BLACK))
            .axis_desc_style(text(DESC_FONT, BLACK))
            .x_label_formatter(&|v| seconds(*v))
            .y_label_formatter(&|v| compact(*v));
        if self.last {
            m.x_desc("Simulated time (s)");
        }
        m.draw().map_err(pe)?;
        for (values, style) in series {
            draw_gapped(&mut chart, self.t, values, *style, self.plot_width)?;
        }
        if let Some(g) = self.onset {
            chart
                .draw_series(DashedLineSeries::new(vec![(g, 0.0), (g, y_max)], 6, 5, GREY.stroke_width(1)))
                .map_err(pe)?;
        }
        frame(&mut chart, self.t_max, y_max)
    }
}

// ---------------------------------------------------------------------------------------
// Fig. 7: victim utilization and free segments

/// `fig7_victims_<run>`: victim utilization (left axis) and free segments (right axis).
pub struct Victims<'a> {
    style: &'a RunStyle<'a>,
}

const FREE_COLOR: RGBColor = RGBColor(235, 120, 0);

impl<'a> Victims<'a> {
    /// The figure for one run.
    pub fn new(style: &'a RunStyle<'a>) -> Self {
        Victims { style }
    }

    fn ts(&self) -> Option<&'a TimeSeries> {
        timeseries_with_rows(self.style.run)
            .filter(|t| t.numeric("victim_util").is_some_and(|v| v.iter().any(Option::is_some)))
    }

    /// True when the run chose at least one victim.
    pub fn has_data(&self) -> bool {
        self.ts().is_some()
    }
}

impl Figure for Victims<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH, 660)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let Some(ts) = self.ts() else { return Ok(()) };
        let run = self.style.run;
        let t = ts.time();
        let t_max = time_max([ts]);
        let util = ts.numeric("victim_util").unwrap_or(&[]);
        let free = ts.numeric("free_segments").unwrap_or(&[]);
        let free_max = nice_ceil(max_of(free).unwrap_or(0.0));

        let area = title(
            root,
            &format!("Victim utilization and free segments \u{2014} {}", self.style.label),
            &format!(
                "reproduces SWAN Fig. 7 \u{2014} run `{}`; utilization: mean valid fraction of the victims chosen in each interval",
                run.name
            ),
        )?;
        let mut entries = vec![
            LegendEntry::new("victim utilization (left axis)", WRITE_BLUE, Swatch::Line),
            LegendEntry::new("free segments (right axis)", FREE_COLOR, Swatch::Line),
        ];
        let onset = run.gc_onset_s().filter(|g| (0.0..=t_max).contains(g));
        if onset.is_some() {
            entries.push(LegendEntry::new("GC onset", GREY, Swatch::Dashed));
        }
        let area = legend(&area, &entries)?;

        let mut chart = ChartBuilder::on(&area)
            .margin(12)
            .x_label_area_size(56)
            .y_label_area_size(80)
            .right_y_label_area_size(95)
            .build_cartesian_2d(0.0..t_max, 0.0..1.0)
            .map_err(pe)?
            .set_secondary_coord(0.0..t_max, 0.0..free_max);
        chart
            .configure_mesh()
            .x_desc("Simulated time (s)")
            .y_desc("Victim utilization (valid fraction)")
            .x_labels(12)
            .y_labels(11)
            .max_light_lines(0)
            .bold_line_style(GRID)
            .label_style(text(TICK_FONT, BLACK))
            .axis_desc_style(text(DESC_FONT, BLACK))
            .x_label_formatter(&|v| seconds(*v))
            .y_label_formatter(&|v| format!("{v:.1}"))
            .draw()
            .map_err(pe)?;
        chart
            .configure_secondary_axes()
            .y_desc("Free segments")
            .y_labels(8)
            .label_style(text(TICK_FONT, BLACK))
            .axis_desc_style(text(DESC_FONT, BLACK))
            .y_label_formatter(&|v| compact(*v))
            .draw()
            .map_err(pe)?;

        let width = line_width(ts.len());
        for seg in segments(t, free) {
            chart
                .draw_secondary_series(LineSeries::new(decimate(&seg, MAX_BUCKETS), FREE_COLOR.stroke_width(width)))
                .map_err(pe)?;
        }
        // Victim utilization is sampled (known only where victims were chosen): bridge
        // short gaps, break the line at long ones, and dot the points a line can't show.
        let dt = if t.len() > 1 { (t[t.len() - 1] - t[0]) / (t.len() - 1) as f64 } else { 1.0 };
        let util_segments = bridged_segments(t, util, (0.05 * t_max).max(4.0 * dt));
        let points: usize = util_segments.iter().map(Vec::len).sum();
        for seg in &util_segments {
            chart
                .draw_series(LineSeries::new(decimate(seg, MAX_BUCKETS), WRITE_BLUE.stroke_width(width)))
                .map_err(pe)?;
            if seg.len() == 1 || points <= 100 {
                chart.draw_series(seg.iter().map(|&p| Circle::new(p, 3, WRITE_BLUE.filled()))).map_err(pe)?;
            }
        }
        if let Some(g) = onset {
            chart
                .draw_series(DashedLineSeries::new(vec![(g, 0.0), (g, 1.0)], 9, 6, GREY.stroke_width(2)))
                .map_err(pe)?;
        }
        chart
            .draw_series(std::iter::once(Rectangle::new([(0.0, 0.0), (t_max, 1.0)], BLACK.stroke_width(1))))
            .map_err(pe)?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Latency CDFs

/// One CDF line.
pub(super) struct CdfLine<'a> {
    pub(super) label: String,
    pub(super) op: &'a str,
    pub(super) points: &'a [(f64, f64)],
    pub(super) color: RGBColor,
    pub(super) dashed: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CdfKind {
    User,
    Ssd,
}

/// `latency_cdf` (user requests) or `ssd_latency_cdf` (SSD-internal, SWAN Fig. 12).
pub struct LatencyCdf<'a> {
    kind: CdfKind,
    runs: Vec<&'a RunStyle<'a>>,
    lines: Vec<CdfLine<'a>>,
}

/// Lower end of the y axis in the tail panels.
const TAIL_FROM: f64 = 0.95;

impl<'a> LatencyCdf<'a> {
    /// User request latency: per run, `write` and `read` (or `all` if neither exists).
    pub fn user(all: &'a [RunStyle<'a>]) -> Self {
        let mut lines = Vec::new();
        let mut runs = Vec::new();
        for s in all {
            let Some(cdf) = &s.run.latency_cdf else { continue };
            let has_rw = cdf.get("read").is_some() || cdf.get("write").is_some();
            let ops: &[&str] = if has_rw { &["write", "read"] } else { &["all"] };
            let before = lines.len();
            for &op in ops {
                if let Some(series) = cdf.get(op).filter(|c| !c.points.is_empty()) {
                    lines.push(CdfLine {
                        label: format!("{} {op}", s.label),
                        op: &series.op,
                        points: &series.points,
                        color: s.color,
                        dashed: op == "read",
                    });
                }
            }
            if lines.len() > before {
                runs.push(s);
            }
        }
        LatencyCdf { kind: CdfKind::User, runs, lines }
    }

    /// SSD-internal latency: per run, `read` and `write`.
    pub fn ssd(all: &'a [RunStyle<'a>]) -> Self {
        let mut lines = Vec::new();
        let mut runs = Vec::new();
        for s in all {
            let Some(cdf) = &s.run.ssd_latency_cdf else { continue };
            let before = lines.len();
            for op in ["read", "write"] {
                if let Some(series) = cdf.get(op).filter(|c| !c.points.is_empty()) {
                    lines.push(CdfLine {
                        label: s.label.clone(),
                        op: &series.op,
                        points: &series.points,
                        color: s.color,
                        dashed: false,
                    });
                }
            }
            if lines.len() > before {
                runs.push(s);
            }
        }
        LatencyCdf { kind: CdfKind::Ssd, runs, lines }
    }

    /// True when at least one line can be drawn.
    pub fn has_data(&self) -> bool {
        !self.lines.is_empty()
    }
}

impl Figure for LatencyCdf<'_> {
    fn size(&self) -> (u32, u32) {
        match self.kind {
            CdfKind::User => (WIDTH, 680),
            CdfKind::Ssd => (WIDTH, 900),
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        match self.kind {
            CdfKind::User => {
                let area = title(
                    root,
                    "User request latency CDF",
                    "cf. SWAN Fig. 10 \u{2014} one line per run and op (solid: write, dashed: read); right: the tail",
                )?;
                let entries: Vec<LegendEntry> = self
                    .lines
                    .iter()
                    .map(|l| {
                        LegendEntry::new(l.label.clone(), l.color, if l.dashed { Swatch::Dashed } else { Swatch::Line })
                    })
                    .collect();
                let area = legend(&area, &entries)?;
                let (w, _) = area.dim_in_pixel();
                let (left, right) = area.split_horizontally(w * 58 / 100);
                let all: Vec<&CdfLine> = self.lines.iter().collect();
                cdf_panel(&left, "All requests", &all, 0.0)?;
                cdf_panel(&right, &format!("Tail (fraction \u{2265} {TAIL_FROM})"), &all, TAIL_FROM)?;
            }
            CdfKind::Ssd => {
                let area = title(
                    root,
                    "SSD-internal latency CDF",
                    "reproduces SWAN Fig. 12 \u{2014} per-operation latency inside the SSDs, over all SSDs; bottom: the tail",
                )?;
                let entries: Vec<LegendEntry> =
                    self.runs.iter().map(|s| LegendEntry::new(s.label.clone(), s.color, Swatch::Line)).collect();
                let area = legend(&area, &entries)?;
                let panels = area.split_evenly((2, 2));
                for (k, op) in ["read", "write"].into_iter().enumerate() {
                    let lines: Vec<&CdfLine> = self.lines.iter().filter(|l| l.op == op).collect();
                    cdf_panel(&panels[k], &format!("(a{}) SSD {op} latency", k + 1), &lines, 0.0)?;
                    cdf_panel(
                        &panels[k + 2],
                        &format!("(b{}) SSD {op} latency, tail (fraction \u{2265} {TAIL_FROM})", k + 1),
                        &lines,
                        TAIL_FROM,
                    )?;
                }
            }
        }
        Ok(())
    }
}

/// 1-2-5 bounds around `lo..hi` (both > 0).
fn log_bounds(lo: f64, hi: f64) -> (f64, f64) {
    let lo_b = nice_floor_125(lo);
    let mut hi_b = nice_ceil_125(hi);
    if hi_b <= lo_b {
        hi_b = nice_ceil_125(lo_b * 1.5);
    }
    (lo_b, hi_b)
}

/// One CDF panel: caption, log-x latency axis, y from `y_lo` to 1.
pub(super) fn cdf_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    lines: &[&CdfLine],
    y_lo: f64,
) -> Result<(), PlotError> {
    let (w, h) = area.dim_in_pixel();
    put_text(area, caption, &text(17.0, BLACK), (w as i32 / 2 + 30, 4), HPos::Center, VPos::Top)?;
    let area = area.split_vertically(28).1;

    let clipped: Vec<Vec<(f64, f64)>> =
        lines.iter().map(|l| if y_lo > 0.0 { clip_below(l.points, y_lo) } else { l.points.to_vec() }).collect();
    let positive = clipped.iter().flatten().map(|p| p.0).filter(|&x| x > 0.0);
    let lo = positive.clone().fold(f64::INFINITY, f64::min);
    let hi = positive.fold(0.0, f64::max);
    if !lo.is_finite() {
        put_text(&area, "no data", &text(16.0, GREY), (w as i32 / 2, (h as i32 - 28) / 2), HPos::Center, VPos::Center)?;
        return Ok(());
    }
    let (x_lo, x_hi) = log_bounds(lo, hi);

    let mut chart = ChartBuilder::on(&area)
        .margin(10)
        .margin_right(28)
        .x_label_area_size(58)
        .y_label_area_size(72)
        .build_cartesian_2d((x_lo..x_hi).log_scale().with_key_points(log_ticks(x_lo, x_hi)), y_lo..1.0)
        .map_err(pe)?;
    // Enough digits to tell the ticks apart: 2 from 0.95, 3 from 0.99.
    let y_digits = if y_lo > 0.0 { (1e-9 - (1.0 - y_lo).log10()).floor() as usize + 1 } else { 1 };
    chart
        .configure_mesh()
        .x_desc("Latency (\u{b5}s, log scale)")
        .y_desc("Cumulative fraction")
        .y_labels(6)
        .max_light_lines(0)
        .bold_line_style(GRID)
        .label_style(text(TICK_FONT, BLACK))
        .axis_desc_style(text(DESC_FONT, BLACK))
        .x_label_formatter(&|v| compact(*v))
        .y_label_formatter(&|v| format!("{v:.y_digits$}"))
        .draw()
        .map_err(pe)?;
    for (line, pts) in lines.iter().zip(&clipped) {
        let pts: Vec<(f64, f64)> = pts.iter().map(|&(x, y)| (x.max(x_lo), y)).collect();
        let style = line.color.stroke_width(2);
        if line.dashed {
            chart.draw_series(DashedLineSeries::new(pts, 8, 5, style)).map_err(pe)?;
        } else {
            chart.draw_series(LineSeries::new(pts, style)).map_err(pe)?;
        }
    }
    chart
        .draw_series(std::iter::once(Rectangle::new([(x_lo, y_lo), (x_hi, 1.0)], BLACK.stroke_width(1))))
        .map_err(pe)?;
    Ok(())
}

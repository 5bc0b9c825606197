//! The read-latency tails of a trace's phases (SWAN Fig. 10/11): one panel per phase, one
//! line per array. The caller reads each run's `window_read_cdf.csv`; this module only draws.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::canvas::{color, legend, render, title, Figure, LegendEntry, PlotError, Swatch};
use super::figures::{cdf_panel, CdfLine};
use super::{create_dir, Format, ReportError};

/// One array's read-latency CDF in one phase: (latency µs, cumulative fraction) points.
pub struct PhaseCdf {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// Every phase's CDFs, in the order the panels are drawn.
pub struct PhaseTails {
    pub subtitle: String,
    /// Lower end of every panel's y axis: the tail starts here.
    pub from: f64,
    pub phases: Vec<(String, Vec<PhaseCdf>)>,
}

const COLUMNS: usize = 3;

impl Figure for PhaseTails {
    fn size(&self) -> (u32, u32) {
        let rows = self.phases.len().div_ceil(COLUMNS).max(1) as u32;
        (1500, 170 + 420 * rows)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let area = title(root, "Read latency tail per phase", &self.subtitle)?;
        let labels: Vec<&str> =
            self.phases.first().map_or(Vec::new(), |(_, c)| c.iter().map(|l| l.label.as_str()).collect());
        let entries: Vec<LegendEntry> =
            labels.iter().enumerate().map(|(i, l)| LegendEntry::new(*l, color(i), Swatch::Line)).collect();
        let area = legend(&area, &entries)?;
        let rows = self.phases.len().div_ceil(COLUMNS).max(1);
        let panels = area.split_evenly((rows, COLUMNS));
        for ((name, cdfs), panel) in self.phases.iter().zip(&panels) {
            let lines: Vec<CdfLine> = cdfs
                .iter()
                .map(|c| {
                    let i = labels.iter().position(|l| *l == c.label).unwrap_or(0);
                    CdfLine { label: c.label.clone(), op: "read", points: &c.points, color: color(i), dashed: false }
                })
                .collect();
            let refs: Vec<&CdfLine> = lines.iter().collect();
            cdf_panel(panel, &format!("{name}: reads, fraction \u{2265} {}", self.from), &refs, self.from)?;
        }
        Ok(())
    }
}

/// Writes `fig` as `STEM.svg` (or `.png`) in `dir`; returns the path.
pub fn write(fig: &PhaseTails, dir: &Path, stem: &str, format: Format) -> Result<PathBuf, ReportError> {
    create_dir(dir)?;
    let path = dir.join(format!("{stem}.{}", format.extension()));
    render(fig, &path, format)?;
    Ok(path)
}

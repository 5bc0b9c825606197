//! # Figures of the SWAN paper, drawn from simulator run directories
//!
//! [`draw`] reads run directories (the files `OUTPUT.md` describes) and writes one file
//! per figure into [`ReportOptions::out_dir`]:
//!
//! | file | shows | paper |
//! |---|---|---|
//! | `fig5_throughput.{svg,png}` | user write MB/s over time, one line per run, dashed line at each run's `gc_onset_s` | Fig. 1/4/5 |
//! | `fig6_per_ssd_<run>.{svg,png}` | per run: one row per SSD (write = user + GC in blue, read = user + GC in red), bottom row the array's user write MB/s | Fig. 6 |
//! | `fig7_victims_<run>.{svg,png}` | per run with victims: victim utilization (left axis) and free segments (right axis) | Fig. 7 |
//! | `latency_cdf.{svg,png}` | user request latency CDFs (log µs), one line per run and op, with a tail panel | (Fig. 10) |
//! | `ssd_latency_cdf.{svg,png}` | SSD-internal latency CDFs, read and write panels, each with a tail panel | Fig. 12 |
//!
//! [`windows`] draws the read-latency tails of a trace's phases, one panel each, for
//! `swan repro ycsb` (SWAN Fig. 10/11).
//!
//! A figure is skipped when no run has the data for it. SVG output needs no fonts;
//! PNG output needs a TrueType font on the machine (e.g. `fonts-dejavu-core`).

mod canvas;
mod figures;
pub mod harmonia;
mod load;
pub mod windows;

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use thiserror::Error;

pub use canvas::PlotError;
pub use load::{
    load_run, parse_cdf, parse_summary, parse_timeseries, Cdf, CdfSeries, CellProblem, Column, LoadError, Run,
    TimeSeries, LATENCY_CDF_FILE, REQUIRED_TIMESERIES_COLUMNS, SSD_COLUMN_KINDS, SSD_LATENCY_CDF_FILE, SUMMARY_FILE,
    TIMESERIES_FILE,
};

use canvas::{render, Figure};

/// Output file format of the figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// Scalable vector graphics; works without any fonts installed.
    #[default]
    Svg,
    /// PNG bitmap (about 1200 px wide); needs a TrueType font on the machine.
    Png,
}

impl Format {
    /// File extension (`svg` or `png`).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Svg => "svg",
            Format::Png => "png",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.extension())
    }
}

/// Error for an unknown [`Format`] name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown figure format `{0}`: expected `svg` or `png`")]
pub struct ParseFormatError(pub String);

impl FromStr for Format {
    type Err = ParseFormatError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "svg" => Ok(Format::Svg),
            "png" => Ok(Format::Png),
            _ => Err(ParseFormatError(s.to_string())),
        }
    }
}

/// Why the figures could not be made: a run directory that could not be read, or the
/// figure file (named) that could not be drawn or written.
#[derive(Debug, Error)]
pub enum ReportError {
    #[error("no run directories given")]
    NoRuns,
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("{}: cannot create output directory", .path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "PNG output needs a TrueType font, but none is usable ({reason}); \
         install one (e.g. `apt-get install fonts-dejavu-core`) or use --format svg"
    )]
    NoFont { reason: String },
    #[error("{}: cannot draw figure", .path.display())]
    Draw {
        path: PathBuf,
        #[source]
        source: PlotError,
    },
    #[error("{}: cannot write", .path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The PNG encoder's error type is not one plotters exports, so only its text is kept.
    #[error("{}: cannot write PNG: {reason}", .path.display())]
    WritePng { path: PathBuf, reason: String },
}

/// Where and how to write the figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportOptions {
    /// Directory the figure files are written into (created if missing).
    pub out_dir: PathBuf,
    /// File format of every figure.
    pub format: Format,
}

/// Draw every figure that the given run directories support; return the paths written.
pub fn draw(runs: &[PathBuf], opts: &ReportOptions) -> Result<Vec<PathBuf>, ReportError> {
    if runs.is_empty() {
        return Err(ReportError::NoRuns);
    }
    let loaded = runs.iter().map(|dir| load_run(dir)).collect::<Result<Vec<_>, _>>()?;
    draw_runs(&loaded, opts)
}

/// Like [`draw`], for runs already loaded with [`load_run`].
pub fn draw_runs(runs: &[Run], opts: &ReportOptions) -> Result<Vec<PathBuf>, ReportError> {
    create_dir(&opts.out_dir)?;
    if opts.format == Format::Png {
        canvas::ensure_png_fonts()?;
    }
    let labels = run_labels(runs);
    let stems = run_file_stems(runs);
    let series: Vec<figures::RunStyle> = runs
        .iter()
        .enumerate()
        .map(|(i, run)| figures::RunStyle { run, label: labels[i].clone(), color: canvas::color(i) })
        .collect();

    let mut out = Output { dir: &opts.out_dir, format: opts.format, written: Vec::new() };

    let fig5 = figures::Throughput::new(&series);
    if fig5.has_data() {
        out.emit("fig5_throughput", &fig5)?;
    }
    for (i, s) in series.iter().enumerate() {
        let fig6 = figures::PerSsd::new(s);
        if fig6.has_data() {
            out.emit(&format!("fig6_per_ssd_{}", stems[i]), &fig6)?;
        }
    }
    for (i, s) in series.iter().enumerate() {
        let fig7 = figures::Victims::new(s);
        if fig7.has_data() {
            out.emit(&format!("fig7_victims_{}", stems[i]), &fig7)?;
        }
    }
    let lat = figures::LatencyCdf::user(&series);
    if lat.has_data() {
        out.emit("latency_cdf", &lat)?;
    }
    let ssd_lat = figures::LatencyCdf::ssd(&series);
    if ssd_lat.has_data() {
        out.emit("ssd_latency_cdf", &ssd_lat)?;
    }
    Ok(out.written)
}

struct Output<'a> {
    dir: &'a Path,
    format: Format,
    written: Vec<PathBuf>,
}

impl Output<'_> {
    fn emit<F: Figure>(&mut self, stem: &str, fig: &F) -> Result<(), ReportError> {
        let path = self.dir.join(format!("{stem}.{}", self.format.extension()));
        render(fig, &path, self.format)?;
        self.written.push(path);
        Ok(())
    }
}

/// Creates the directory figures are written into, and the directories above it.
fn create_dir(dir: &Path) -> Result<(), ReportError> {
    fs::create_dir_all(dir).map_err(|source| ReportError::CreateDir { path: dir.to_path_buf(), source })
}

/// Legend names: the scheme from `summary.json` (the directory name if none); runs that
/// share a scheme get their directory name appended, and still-equal names a number.
pub fn run_labels(runs: &[Run]) -> Vec<String> {
    let base: Vec<String> = runs.iter().map(|r| r.scheme().map_or_else(|| r.name.clone(), str::to_string)).collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for b in &base {
        *counts.entry(b.as_str()).or_default() += 1;
    }
    let labels: Vec<String> = runs
        .iter()
        .zip(&base)
        .map(|(r, b)| if counts[b.as_str()] > 1 && *b != r.name { format!("{b} ({})", r.name) } else { b.clone() })
        .collect();
    number_duplicates(labels, " #")
}

/// File-name-safe, unique versions of the run directory names.
fn run_file_stems(runs: &[Run]) -> Vec<String> {
    let names = runs
        .iter()
        .map(|r| {
            r.name
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
                .collect()
        })
        .collect();
    number_duplicates(names, "_")
}

/// Append `{sep}{k}` (k = 2, 3, …) to the second and later copies of equal strings.
fn number_duplicates(names: Vec<String>, sep: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let mut candidate = n.clone();
        let mut k = 1;
        while seen.contains_key(&candidate) {
            k += 1;
            candidate = format!("{n}{sep}{k}");
        }
        seen.insert(candidate.clone(), 1);
        out.push(candidate);
    }
    out
}

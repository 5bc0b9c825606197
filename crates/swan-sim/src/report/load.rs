//! Reading simulator run directories (the files described in `OUTPUT.md`).
//!
//! Parsing is strict: every error names the file, and for CSV files the line and the
//! column that is wrong. Empty cells are valid in numeric columns and mean "no value"
//! (e.g. `victim_util` in an interval without victims), except in `t_s`.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;
use thiserror::Error;

/// File names inside a run directory.
pub const SUMMARY_FILE: &str = "summary.json";
/// See [`SUMMARY_FILE`].
pub const TIMESERIES_FILE: &str = "timeseries.csv";
/// See [`SUMMARY_FILE`].
pub const LATENCY_CDF_FILE: &str = "latency_cdf.csv";
/// See [`SUMMARY_FILE`].
pub const SSD_LATENCY_CDF_FILE: &str = "ssd_latency_cdf.csv";

/// Columns of `timeseries.csv` that every run must have (besides the per-SSD ones).
pub const REQUIRED_TIMESERIES_COLUMNS: [&str; 7] =
    ["t_s", "user_read_mbps", "user_write_mbps", "free_segments", "victim_util", "front_group", "gc_group"];

/// Columns of `timeseries.csv` that hold free text rather than numbers.
const TEXT_COLUMNS: [&str; 1] = ["gc_group"];

/// The four per-SSD column suffixes, in the order `OUTPUT.md` lists them.
pub const SSD_COLUMN_KINDS: [&str; 4] = ["read_mbps", "write_mbps", "gc_read_mbps", "gc_write_mbps"];

/// One simulator run directory, parsed.
#[derive(Debug, Clone)]
pub struct Run {
    /// The directory the run was read from.
    pub dir: PathBuf,
    /// The directory's own name (used in figure file names and legends).
    pub name: String,
    /// `summary.json` as written by the simulator; see the typed accessors.
    pub summary: Value,
    /// `timeseries.csv`, if the run has one.
    pub timeseries: Option<TimeSeries>,
    /// `latency_cdf.csv` (user request latency), if the run has one.
    pub latency_cdf: Option<Cdf>,
    /// `ssd_latency_cdf.csv` (SSD-internal latency), if the run has one.
    pub ssd_latency_cdf: Option<Cdf>,
}

impl Run {
    /// `summary.scheme`, if present.
    pub fn scheme(&self) -> Option<&str> {
        self.summary.get("scheme").and_then(Value::as_str)
    }

    /// `summary.seed`, if present.
    pub fn seed(&self) -> Option<u64> {
        self.summary.get("seed").and_then(Value::as_u64)
    }

    /// `summary.gc_onset_s`: first simulated second in which array-level GC moved data.
    pub fn gc_onset_s(&self) -> Option<f64> {
        self.summary_f64("gc_onset_s")
    }

    /// `summary.ssd_write_mbps`: one SSD's nominal sequential write bandwidth.
    pub fn ssd_write_mbps(&self) -> Option<f64> {
        self.summary_f64("ssd_write_mbps")
    }

    /// Any numeric top-level field of `summary.json`.
    pub fn summary_f64(&self, key: &str) -> Option<f64> {
        self.summary.get(key).and_then(Value::as_f64)
    }

    /// Number of SSDs with columns in `timeseries.csv` (0 without a time series).
    pub fn num_ssds(&self) -> usize {
        self.timeseries.as_ref().map_or(0, TimeSeries::num_ssds)
    }
}

/// A column of `timeseries.csv`.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// A numeric column; `None` for an empty cell.
    Numeric(Vec<Option<f64>>),
    /// A text column (`gc_group`, and any column `OUTPUT.md` does not describe).
    Text(Vec<String>),
}

/// `timeseries.csv`, stored column by column.
#[derive(Debug, Clone)]
pub struct TimeSeries {
    names: Vec<String>,
    index: HashMap<String, usize>,
    columns: Vec<Column>,
    time: Vec<f64>,
    num_ssds: usize,
}

impl TimeSeries {
    /// Number of rows (intervals).
    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// True when the file has a header but no rows.
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// Column names in file order.
    pub fn column_names(&self) -> &[String] {
        &self.names
    }

    /// The `t_s` column (end of each interval, simulated seconds); never empty cells.
    pub fn time(&self) -> &[f64] {
        &self.time
    }

    /// A column by name.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.index.get(name).map(|&i| &self.columns[i])
    }

    /// A numeric column by name (`None` if absent or a text column).
    pub fn numeric(&self, name: &str) -> Option<&[Option<f64>]> {
        match self.column(name)? {
            Column::Numeric(v) => Some(v),
            Column::Text(_) => None,
        }
    }

    /// A text column by name (`None` if absent or numeric).
    pub fn text(&self, name: &str) -> Option<&[String]> {
        match self.column(name)? {
            Column::Text(v) => Some(v),
            Column::Numeric(_) => None,
        }
    }

    /// Number of SSDs that have `ssd{i}_*` columns.
    pub fn num_ssds(&self) -> usize {
        self.num_ssds
    }

    /// `ssd{ssd}_{kind}`, e.g. `ssd_column(2, "gc_read_mbps")`.
    pub fn ssd_column(&self, ssd: usize, kind: &str) -> Option<&[Option<f64>]> {
        self.numeric(&format!("ssd{ssd}_{kind}"))
    }
}

/// A latency CDF file: one series per `op`, in the order they first appear.
#[derive(Debug, Clone, Default)]
pub struct Cdf {
    /// The series, one per distinct `op`.
    pub series: Vec<CdfSeries>,
}

impl Cdf {
    /// The series of one op (`all`, `read`, `write`).
    pub fn get(&self, op: &str) -> Option<&CdfSeries> {
        self.series.iter().find(|s| s.op == op)
    }
}

/// One op's latency CDF.
#[derive(Debug, Clone, PartialEq)]
pub struct CdfSeries {
    /// `all`, `read` or `write`.
    pub op: String,
    /// `(latency_us, fraction)`, latency and fraction non-decreasing, fraction in (0, 1].
    pub points: Vec<(f64, f64)>,
}

/// Why a run directory could not be read. Every message names the file, and for CSV and
/// JSON files the line (and the column) that is wrong.
#[derive(Debug, Error)]
pub enum LoadError {
    #[error("{}: not a directory (expected a simulator run directory)", .dir.display())]
    NotADirectory { dir: PathBuf },
    #[error("{}: no such run directory", .dir.display())]
    NoSuchDirectory { dir: PathBuf },
    #[error("{}: not found; is `{}` a simulator run directory (see OUTPUT.md)?", .summary.display(), .dir.display())]
    NoSummary { summary: PathBuf, dir: PathBuf },
    #[error("{}: cannot read", .path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}:{line}: not valid UTF-8 text", .path.display())]
    NotUtf8 { path: PathBuf, line: usize },
    #[error("{}:{line}: invalid JSON", .path.display())]
    Json {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: expected a JSON object at the top level", .path.display())]
    NotAnObject { path: PathBuf },
    #[error("{}: field `{key}` must be {want}, found `{found}`", .path.display())]
    FieldType { path: PathBuf, key: &'static str, want: &'static str, found: Value },
    #[error("{}:1: empty file; expected a header line", .path.display())]
    Empty { path: PathBuf },
    #[error("{}:{line}: column {column} of the header has no name", .path.display())]
    UnnamedColumn { path: PathBuf, line: usize, column: usize },
    #[error("{}:{line}: column `{name}` appears twice in the header", .path.display())]
    DuplicateColumn { path: PathBuf, line: usize, name: String },
    #[error("{}:{line}: missing column `{name}` (see OUTPUT.md)", .path.display())]
    MissingColumn { path: PathBuf, line: usize, name: String },
    #[error("{}:{line}: missing column `{name}` (the header has columns for {ssds} SSDs)", .path.display())]
    MissingSsdColumn { path: PathBuf, line: usize, name: String, ssds: usize },
    #[error("{}:{line}: row has {got} fields but the header has {want} columns", .path.display())]
    Ragged { path: PathBuf, line: usize, got: usize, want: usize },
    /// A cell that is not what its column holds; `column` counts from 1. The problem is part
    /// of the message rather than its source, as the cell's text follows it; it is boxed to
    /// keep every `Result` of this module small.
    #[error("{}:{line}: column {column} (`{name}`): {problem}: `{cell}`", .path.display())]
    Cell { path: PathBuf, line: usize, column: usize, name: String, cell: String, problem: Box<CellProblem> },
}

/// What is wrong with one CSV cell.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CellProblem {
    #[error("not a number")]
    NotANumber,
    #[error("not a finite number")]
    NotFinite,
    #[error("time must not be empty")]
    EmptyTime,
    #[error("time goes backwards (previous row had {prev})")]
    TimeBackwards { prev: f64 },
    #[error("op must not be empty")]
    EmptyOp,
    #[error("value must not be empty")]
    EmptyValue,
    #[error("latency must not be negative")]
    NegativeLatency,
    #[error("fraction must be within 0..1")]
    FractionOutOfRange,
    #[error("latency decreases within op `{op}` (previous row had {prev})")]
    LatencyDecreases { op: String, prev: f64 },
    #[error("cumulative fraction decreases within op `{op}` (previous row had {prev})")]
    FractionDecreases { op: String, prev: f64 },
}

/// Load one run directory: `summary.json` is required; each CSV file is optional,
/// but strictly checked when present. Errors name the file and line that is wrong.
pub fn load_run(dir: &Path) -> Result<Run, LoadError> {
    if !dir.is_dir() {
        if dir.exists() {
            return Err(LoadError::NotADirectory { dir: dir.to_path_buf() });
        }
        return Err(LoadError::NoSuchDirectory { dir: dir.to_path_buf() });
    }
    let summary_path = dir.join(SUMMARY_FILE);
    if !summary_path.is_file() {
        return Err(LoadError::NoSummary { summary: summary_path, dir: dir.to_path_buf() });
    }
    let summary = parse_summary(&summary_path, &read_text(&summary_path)?)?;

    let optional = |file: &str| -> Result<Option<(PathBuf, String)>, LoadError> {
        let path = dir.join(file);
        if path.exists() {
            let text = read_text(&path)?;
            Ok(Some((path, text)))
        } else {
            Ok(None)
        }
    };
    let timeseries = match optional(TIMESERIES_FILE)? {
        Some((path, text)) => Some(parse_timeseries(&path, &text)?),
        None => None,
    };
    let latency_cdf = match optional(LATENCY_CDF_FILE)? {
        Some((path, text)) => Some(parse_cdf(&path, &text)?),
        None => None,
    };
    let ssd_latency_cdf = match optional(SSD_LATENCY_CDF_FILE)? {
        Some((path, text)) => Some(parse_cdf(&path, &text)?),
        None => None,
    };

    Ok(Run { dir: dir.to_path_buf(), name: dir_name(dir), summary, timeseries, latency_cdf, ssd_latency_cdf })
}

/// The last component of a run directory's path (resolving `.` and `..` if needed).
fn dir_name(dir: &Path) -> String {
    let from = |p: &Path| {
        p.file_name().map(|n| n.to_string_lossy().into_owned()).filter(|n| !n.is_empty() && n != "." && n != "..")
    };
    from(dir).or_else(|| dir.canonicalize().ok().as_deref().and_then(from)).unwrap_or_else(|| "run".to_string())
}

fn read_text(path: &Path) -> Result<String, LoadError> {
    let bytes = fs::read(path).map_err(|source| LoadError::Read { path: path.to_path_buf(), source })?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
        LoadError::NotUtf8 { path: path.to_path_buf(), line }
    })
}

/// Parse and type-check `summary.json`.
pub fn parse_summary(path: &Path, text: &str) -> Result<Value, LoadError> {
    let value: Value = serde_json::from_str(text).map_err(|source| LoadError::Json {
        path: path.to_path_buf(),
        line: source.line(),
        source,
    })?;
    let Some(obj) = value.as_object() else {
        return Err(LoadError::NotAnObject { path: path.to_path_buf() });
    };
    let bad = |key: &'static str, want: &'static str, found: &Value| LoadError::FieldType {
        path: path.to_path_buf(),
        key,
        want,
        found: found.clone(),
    };
    if let Some(v) = obj.get("scheme") {
        if !v.is_string() {
            return Err(bad("scheme", "a string", v));
        }
    }
    if let Some(v) = obj.get("seed") {
        if !(v.is_u64() || v.is_null()) {
            return Err(bad("seed", "a non-negative integer", v));
        }
    }
    for key in ["gc_onset_s", "ssd_write_mbps"] {
        if let Some(v) = obj.get(key) {
            if !(v.is_number() || v.is_null()) {
                return Err(bad(key, "a number or null", v));
            }
        }
    }
    Ok(value)
}

/// Lines of a CSV text with their 1-based numbers; a trailing `\r` is dropped and
/// blank lines are skipped.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .filter(|(_, l)| !l.trim().is_empty())
}

fn parse_header(path: &Path, line_no: usize, line: &str) -> Result<(Vec<String>, HashMap<String, usize>), LoadError> {
    let line = line.strip_prefix('\u{feff}').unwrap_or(line);
    let names: Vec<String> = line.split(',').map(|s| s.trim().to_string()).collect();
    let mut index = HashMap::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        if name.is_empty() {
            return Err(LoadError::UnnamedColumn { path: path.to_path_buf(), line: line_no, column: i + 1 });
        }
        if index.insert(name.clone(), i).is_some() {
            return Err(LoadError::DuplicateColumn { path: path.to_path_buf(), line: line_no, name: name.clone() });
        }
    }
    Ok((names, index))
}

/// Error for the cell in 0-based column `col` of `line`.
fn cell_error(path: &Path, line: usize, col: usize, name: &str, cell: &str, problem: CellProblem) -> LoadError {
    LoadError::Cell {
        path: path.to_path_buf(),
        line,
        column: col + 1,
        name: name.to_string(),
        cell: cell.to_string(),
        problem: Box::new(problem),
    }
}

/// Parse a numeric cell: `Ok(None)` for an empty cell.
fn parse_number(path: &Path, line: usize, col: usize, name: &str, cell: &str) -> Result<Option<f64>, LoadError> {
    let cell = cell.trim();
    if cell.is_empty() {
        return Ok(None);
    }
    match cell.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Some(v)),
        Ok(_) => Err(cell_error(path, line, col, name, cell, CellProblem::NotFinite)),
        Err(_) => Err(cell_error(path, line, col, name, cell, CellProblem::NotANumber)),
    }
}

fn missing_column(path: &Path, line: usize, name: &str) -> LoadError {
    LoadError::MissingColumn { path: path.to_path_buf(), line, name: name.to_string() }
}

fn ragged(path: &Path, line: usize, got: usize, want: usize) -> LoadError {
    LoadError::Ragged { path: path.to_path_buf(), line, got, want }
}

/// `ssd{i}_{kind}` → `Some(i)` when kind is one of [`SSD_COLUMN_KINDS`].
fn ssd_column_index(name: &str) -> Option<usize> {
    let rest = name.strip_prefix("ssd")?;
    let digits = rest.find('_')?;
    let (num, kind) = rest.split_at(digits);
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !SSD_COLUMN_KINDS.contains(&&kind[1..]) {
        return None;
    }
    num.parse().ok()
}

/// Checks that the header of `timeseries.csv` has every column it must have; returns the
/// number of SSDs it has columns for.
fn timeseries_ssds(
    path: &Path,
    line: usize,
    names: &[String],
    index: &HashMap<String, usize>,
) -> Result<usize, LoadError> {
    for required in REQUIRED_TIMESERIES_COLUMNS {
        if !index.contains_key(required) {
            return Err(missing_column(path, line, required));
        }
    }
    // Per-SSD columns: indices must run 0..n, each SSD with all four kinds.
    let ssds = names.iter().filter_map(|n| ssd_column_index(n)).max().map_or(0, |m| m + 1);
    for ssd in 0..ssds {
        for kind in SSD_COLUMN_KINDS {
            let name = format!("ssd{ssd}_{kind}");
            if !index.contains_key(&name) {
                return Err(LoadError::MissingSsdColumn { path: path.to_path_buf(), line, name, ssds });
            }
        }
    }
    Ok(ssds)
}

/// Parse `timeseries.csv` (linear in the file size).
pub fn parse_timeseries(path: &Path, text: &str) -> Result<TimeSeries, LoadError> {
    let mut it = lines(text);
    let Some((header_line, header)) = it.next() else {
        return Err(LoadError::Empty { path: path.to_path_buf() });
    };
    let (names, index) = parse_header(path, header_line, header)?;
    let num_ssds = timeseries_ssds(path, header_line, &names, &index)?;
    // Which columns are numeric: the ones OUTPUT.md describes as numbers. Columns it
    // does not describe are kept as text, so that new columns do not break old readers.
    let numeric: Vec<bool> = names
        .iter()
        .map(|n| {
            !TEXT_COLUMNS.contains(&n.as_str())
                && (REQUIRED_TIMESERIES_COLUMNS.contains(&n.as_str()) || ssd_column_index(n).is_some())
        })
        .collect();
    let t_col = index["t_s"];

    let rows_hint = text.len() / header.len().max(1) + 1;
    let mut columns: Vec<Column> = numeric
        .iter()
        .map(|&num| {
            if num {
                Column::Numeric(Vec::with_capacity(rows_hint))
            } else {
                Column::Text(Vec::with_capacity(rows_hint))
            }
        })
        .collect();
    let mut time = Vec::with_capacity(rows_hint);
    let ncols = names.len();

    for (line_no, line) in it {
        let mut count = 0;
        for (col, cell) in line.split(',').enumerate() {
            if col >= ncols {
                return Err(ragged(path, line_no, line.split(',').count(), ncols));
            }
            count += 1;
            match &mut columns[col] {
                Column::Numeric(v) => {
                    let value = parse_number(path, line_no, col, &names[col], cell)?;
                    if col == t_col {
                        let Some(t) = value else {
                            return Err(cell_error(path, line_no, col, &names[col], cell, CellProblem::EmptyTime));
                        };
                        if let Some(&prev) = time.last() {
                            if t < prev {
                                return Err(cell_error(
                                    path,
                                    line_no,
                                    col,
                                    &names[col],
                                    cell,
                                    CellProblem::TimeBackwards { prev },
                                ));
                            }
                        }
                        time.push(t);
                    }
                    v.push(value);
                }
                Column::Text(v) => v.push(cell.trim().to_string()),
            }
        }
        if count != ncols {
            return Err(ragged(path, line_no, count, ncols));
        }
    }

    Ok(TimeSeries { names, index, columns, time, num_ssds })
}

/// Parse a latency CDF file (`op,latency_us,fraction`; other columns are ignored).
pub fn parse_cdf(path: &Path, text: &str) -> Result<Cdf, LoadError> {
    let mut it = lines(text);
    let Some((header_line, header)) = it.next() else {
        return Err(LoadError::Empty { path: path.to_path_buf() });
    };
    let (names, index) = parse_header(path, header_line, header)?;
    let col = |name: &str| index.get(name).copied().ok_or_else(|| missing_column(path, header_line, name));
    let (op_col, lat_col, frac_col) = (col("op")?, col("latency_us")?, col("fraction")?);
    let ncols = names.len();

    let mut cdf = Cdf::default();
    let mut by_op: HashMap<String, usize> = HashMap::new();
    let mut cells: Vec<&str> = Vec::with_capacity(ncols);
    for (line_no, line) in it {
        cells.clear();
        cells.extend(line.split(',').map(str::trim));
        if cells.len() != ncols {
            return Err(ragged(path, line_no, cells.len(), ncols));
        }
        let op = cells[op_col];
        if op.is_empty() {
            return Err(cell_error(path, line_no, op_col, "op", op, CellProblem::EmptyOp));
        }
        let required = |c: usize| -> Result<f64, LoadError> {
            parse_number(path, line_no, c, &names[c], cells[c])?
                .ok_or_else(|| cell_error(path, line_no, c, &names[c], cells[c], CellProblem::EmptyValue))
        };
        let latency = required(lat_col)?;
        let fraction = required(frac_col)?;
        if latency < 0.0 {
            return Err(cell_error(path, line_no, lat_col, "latency_us", cells[lat_col], CellProblem::NegativeLatency));
        }
        if !(0.0..=1.0 + 1e-9).contains(&fraction) {
            return Err(cell_error(
                path,
                line_no,
                frac_col,
                "fraction",
                cells[frac_col],
                CellProblem::FractionOutOfRange,
            ));
        }
        let slot = match by_op.get(op) {
            Some(&i) => i,
            None => {
                by_op.insert(op.to_string(), cdf.series.len());
                cdf.series.push(CdfSeries { op: op.to_string(), points: Vec::new() });
                cdf.series.len() - 1
            }
        };
        let points = &mut cdf.series[slot].points;
        if let Some(&(prev_lat, prev_frac)) = points.last() {
            if latency < prev_lat {
                return Err(cell_error(
                    path,
                    line_no,
                    lat_col,
                    "latency_us",
                    cells[lat_col],
                    CellProblem::LatencyDecreases { op: op.to_string(), prev: prev_lat },
                ));
            }
            if fraction + 1e-9 < prev_frac {
                return Err(cell_error(
                    path,
                    line_no,
                    frac_col,
                    "fraction",
                    cells[frac_col],
                    CellProblem::FractionDecreases { op: op.to_string(), prev: prev_frac },
                ));
            }
        }
        points.push((latency, fraction.min(1.0)));
    }
    Ok(cdf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssd_column_names() {
        assert_eq!(ssd_column_index("ssd0_read_mbps"), Some(0));
        assert_eq!(ssd_column_index("ssd12_gc_write_mbps"), Some(12));
        assert_eq!(ssd_column_index("ssd_read_mbps"), None);
        assert_eq!(ssd_column_index("ssd1_other"), None);
        assert_eq!(ssd_column_index("ssdx_read_mbps"), None);
    }

    #[test]
    fn timeseries_errors_name_line_and_column() {
        let p = Path::new("r/timeseries.csv");
        let head = "t_s,user_read_mbps,user_write_mbps,free_segments,victim_util,front_group,gc_group";
        let ok = format!("{head}\n1,0,10,5,,0,\n2,0,11,4,0.5,1,0;1\n");
        let ts = parse_timeseries(p, &ok).unwrap();
        assert_eq!(ts.len(), 2);
        assert_eq!(ts.numeric("victim_util").unwrap(), &[None, Some(0.5)]);
        assert_eq!(ts.text("gc_group").unwrap(), &["".to_string(), "0;1".to_string()]);

        let e = parse_timeseries(p, &format!("{head}\n1,0,x,5,,0,\n")).unwrap_err().to_string();
        assert!(e.contains("r/timeseries.csv:2") && e.contains("user_write_mbps"), "{e}");
        let e = parse_timeseries(p, &format!("{head}\n1,0,1,5,,0,,9\n")).unwrap_err().to_string();
        assert!(e.contains(":2:") && e.contains("8 fields"), "{e}");
        let e = parse_timeseries(p, &format!("{head}\n1,0,1,5,,0,\n2,0,1\n")).unwrap_err().to_string();
        assert!(e.contains(":3:") && e.contains("3 fields"), "{e}");
        let e = parse_timeseries(p, "t_s,user_read_mbps\n").unwrap_err().to_string();
        assert!(e.contains("missing column `user_write_mbps`"), "{e}");
        let e = parse_timeseries(p, &format!("{head},ssd0_read_mbps\n")).unwrap_err().to_string();
        assert!(e.contains("missing column `ssd0_write_mbps`"), "{e}");
    }

    #[test]
    fn summary_errors_keep_the_json_error_as_their_cause() {
        let p = Path::new("r/summary.json");
        let e = parse_summary(p, "{\n  \"seed\": 1,,\n}").unwrap_err();
        assert_eq!(e.to_string(), "r/summary.json:2: invalid JSON");
        let json = std::error::Error::source(&e).map(ToString::to_string).unwrap_or_default();
        assert!(json.contains("line 2"), "{json}");
        let e = parse_summary(p, "{\"scheme\": 7}").unwrap_err();
        assert_eq!(e.to_string(), "r/summary.json: field `scheme` must be a string, found `7`");
    }

    #[test]
    fn cdf_parse() {
        let p = Path::new("latency_cdf.csv");
        let cdf = parse_cdf(p, "op,latency_us,fraction\nwrite,10,0.5\nwrite,20,1\nread,5,1\n").unwrap();
        assert_eq!(cdf.series.len(), 2);
        assert_eq!(cdf.get("write").unwrap().points, vec![(10.0, 0.5), (20.0, 1.0)]);
        let e = parse_cdf(p, "op,latency_us,fraction\nwrite,10,0.5\nwrite,20,0.4\n").unwrap_err().to_string();
        assert!(e.contains("latency_cdf.csv:3") && e.contains("fraction"), "{e}");
        let e = parse_cdf(p, "op,fraction\n").unwrap_err().to_string();
        assert!(e.contains("missing column `latency_us`"), "{e}");
    }
}

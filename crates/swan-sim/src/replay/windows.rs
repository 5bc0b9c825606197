//! Named windows of a trace's own time, measured apart: the phases of an application run
//! recorded as one trace (YCSB's Load and its run phases A–D), so one replay, over the array
//! state each phase leaves to the next, reports each phase on its own.
//!
//! A window holds the requests whose *recorded* time falls in `[start, end)`, whatever the
//! replay mode: in a closed loop the requests keep the window they were recorded in.
//!
//! The file is text, one window per line: `NAME START_S END_S`, seconds from the trace's
//! start (the times its records carry), separated by white space; `#` starts a comment.
//! Windows may leave gaps (a file system's mkfs before the Load) but may not overlap.

use serde::{Deserialize, Serialize};
use std::path::Path;
use thiserror::Error;

/// One named window of trace time, in seconds from the trace's start.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub name: String,
    pub start_s: f64,
    pub end_s: f64,
}

/// A bad windows file; every message names the file, and the line where one is to blame.
#[derive(Debug, Error)]
pub enum WindowsError {
    #[error("cannot read the windows file {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("{path}:{line}: {why}")]
    Line { path: String, line: usize, why: String },
    #[error("{path}: no window in the file (expected lines `NAME START_S END_S`)")]
    Empty { path: String },
}

/// Most windows a replay measures apart (they are numbered in a `u16` per request).
pub const MAX_WINDOWS: usize = 1024;

/// Reads and checks a windows file (see the module comment); returns them sorted by start.
pub fn read_windows(path: &Path) -> Result<Vec<Window>, WindowsError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| WindowsError::Read { path: name.clone(), error })?;
    parse_windows(&text, &name)
}

/// Parses windows from `text`, naming `path` in errors.
pub fn parse_windows(text: &str, path: &str) -> Result<Vec<Window>, WindowsError> {
    let mut out: Vec<(usize, Window)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let bad = |why: String| WindowsError::Line { path: path.to_string(), line, why };
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let f: Vec<&str> = content.split_whitespace().collect();
        if f.len() != 3 {
            return Err(bad(format!("expected `NAME START_S END_S`, got {} fields", f.len())));
        }
        let secs = |s: &str, what: &str| match s.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            _ => Err(bad(format!("{what} '{s}' is not a number of seconds ≥ 0"))),
        };
        let (start_s, end_s) = (secs(f[1], "start")?, secs(f[2], "end")?);
        if end_s <= start_s {
            return Err(bad(format!("window '{}' ends ({end_s}) at or before it starts ({start_s})", f[0])));
        }
        if let Some((l, _)) = out.iter().find(|(_, w)| w.name == f[0]) {
            return Err(bad(format!("window '{}' is named twice (first on line {l})", f[0])));
        }
        out.push((line, Window { name: f[0].to_string(), start_s, end_s }));
    }
    if out.is_empty() {
        return Err(WindowsError::Empty { path: path.to_string() });
    }
    if out.len() > MAX_WINDOWS {
        let why = format!("{} windows; at most {MAX_WINDOWS}", out.len());
        return Err(WindowsError::Line { path: path.to_string(), line: out[MAX_WINDOWS].0, why });
    }
    out.sort_by(|a, b| a.1.start_s.total_cmp(&b.1.start_s));
    for pair in out.windows(2) {
        let ((_, a), (line, b)) = (&pair[0], &pair[1]);
        if b.start_s < a.end_s {
            let why = format!("window '{}' starts ({}) before '{}' ends ({})", b.name, b.start_s, a.name, a.end_s);
            return Err(WindowsError::Line { path: path.to_string(), line: *line, why });
        }
    }
    Ok(out.into_iter().map(|(_, w)| w).collect())
}

/// Finds the window of a recorded time quickly: windows sorted by start, as nanoseconds.
#[derive(Clone, Debug, Default)]
pub struct WindowIndex {
    /// (start_ns, end_ns) per window, sorted and disjoint.
    bounds: Vec<(u64, u64)>,
}

impl WindowIndex {
    pub fn new(windows: &[Window]) -> Self {
        let ns = |s: f64| (s * 1e9).round() as u64;
        WindowIndex { bounds: windows.iter().map(|w| (ns(w.start_s), ns(w.end_s))).collect() }
    }

    /// The window holding `trace_ns`, if any.
    pub fn find(&self, trace_ns: u64) -> Option<u16> {
        let i = self.bounds.partition_point(|&(start, _)| start <= trace_ns);
        let i = i.checked_sub(1)?;
        (trace_ns < self.bounds[i].1).then_some(i as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_read_sorted_and_found_by_recorded_time() {
        let w = parse_windows("# phases\nload 1.5 10\n\na 10 20.25 # run A\nmkfs 0 1\n", "p.tsv").unwrap();
        let names: Vec<&str> = w.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["mkfs", "load", "a"]);
        let idx = WindowIndex::new(&w);
        assert_eq!(idx.find(0), Some(0));
        assert_eq!(idx.find(1_200_000_000), None, "the gap between mkfs and load");
        assert_eq!(idx.find(1_500_000_000), Some(1));
        assert_eq!(idx.find(10_000_000_000), Some(2), "a window's end is the next one's start");
        assert_eq!(idx.find(20_250_000_000), None, "after the last window");
    }

    #[test]
    fn bad_windows_name_the_file_and_line() {
        let err = |text: &str| parse_windows(text, "p.tsv").unwrap_err().to_string();
        assert_eq!(err("load 0 1\na 1\n"), "p.tsv:2: expected `NAME START_S END_S`, got 2 fields");
        assert_eq!(err("load x 1\n"), "p.tsv:1: start 'x' is not a number of seconds ≥ 0");
        assert_eq!(err("load 2 1\n"), "p.tsv:1: window 'load' ends (1) at or before it starts (2)");
        assert_eq!(err("a 0 1\na 2 3\n"), "p.tsv:2: window 'a' is named twice (first on line 1)");
        assert_eq!(err("a 0 2\nb 1 3\n"), "p.tsv:2: window 'b' starts (1) before 'a' ends (2)");
        assert!(err("# nothing\n").contains("no window in the file"));
    }
}

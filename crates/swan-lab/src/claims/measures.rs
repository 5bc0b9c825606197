//! What a reproduction measured, by name: the numbers claims are judged on, written beside
//! its runs (`measures.json`) and checked in as the reference (`repro/measures/NAME.json`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// One measured number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    /// What it is, as a reader says it: "Log-RAID0 after GC".
    pub label: String,
    /// "MB/s", "ms", "%" (a fraction shown as a percentage), "" for a plain number.
    pub unit: String,
    /// The value claims are judged on (the mean, over seeds).
    pub value: f64,
    /// Over several seeds: the lowest and highest, and how many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<(f64, f64, u32)>,
}

/// A reproduction's measures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Measures {
    pub experiment: String,
    pub measures: BTreeMap<String, Measure>,
}

#[derive(Debug, thiserror::Error)]
pub enum MeasuresError {
    #[error("reading {path}")]
    Read { path: String, source: std::io::Error },
    #[error("{path} is not a measures file")]
    Parse { path: String, source: serde_json::Error },
    #[error("writing {path}")]
    Write { path: String, source: std::io::Error },
}

impl Measures {
    pub fn new(experiment: &str) -> Self {
        Measures { experiment: experiment.into(), measures: BTreeMap::new() }
    }

    /// A measured value; one that could not be measured (not finite) is left out, so the
    /// claims that need it say so.
    pub fn set(&mut self, name: &str, label: &str, unit: &str, value: f64) {
        if !value.is_finite() {
            return;
        }
        self.measures.insert(name.into(), Measure { label: label.into(), unit: unit.into(), value, spread: None });
    }

    /// A measure over seeds: its mean is the value claims are judged on.
    pub fn set_seeds(&mut self, name: &str, label: &str, unit: &str, values: &[f64]) {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return;
        }
        let n = values.len().max(1) as f64;
        let mean = values.iter().sum::<f64>() / n;
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let spread = (values.len() > 1).then_some((lo, hi, values.len() as u32));
        self.measures.insert(name.into(), Measure { label: label.into(), unit: unit.into(), value: mean, spread });
    }

    pub fn value(&self, name: &str) -> Option<f64> {
        self.measures.get(name).map(|m| m.value).filter(|v| v.is_finite())
    }

    pub fn label(&self, name: &str) -> Option<&str> {
        self.measures.get(name).map(|m| m.label.as_str())
    }

    /// "label value unit", with the seeds' range when there are several (the table says how
    /// many).
    pub fn show(&self, name: &str) -> String {
        let Some(m) = self.measures.get(name) else {
            return format!("{name}: not measured");
        };
        let one = |v: f64| format_value(v, &m.unit);
        let unit = if m.unit.is_empty() || m.unit == "%" { String::new() } else { format!(" {}", m.unit) };
        match m.spread {
            Some((lo, hi, _)) => format!("{} {}{unit} ({}–{})", m.label, one(m.value), one(lo), one(hi)),
            None => format!("{} {}{unit}", m.label, one(m.value)),
        }
    }

    pub fn read(path: &Path) -> Result<Measures, MeasuresError> {
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| MeasuresError::Read { path: p.clone(), source })?;
        serde_json::from_str(&text).map_err(|source| MeasuresError::Parse { path: p, source })
    }

    pub fn write(&self, path: &Path) -> Result<(), MeasuresError> {
        let text = serde_json::to_string_pretty(self).expect("measures serialize") + "\n";
        std::fs::write(path, text).map_err(|source| MeasuresError::Write { path: path.display().to_string(), source })
    }
}

/// A value as the tables print it: shares as percentages, large numbers whole, small ones
/// to three significant digits.
pub(crate) fn format_value(v: f64, unit: &str) -> String {
    if unit == "%" {
        return format!("{:.1} %", v * 100.0);
    }
    if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
        let s = format!("{v:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_print_as_a_reader_expects() {
        assert_eq!(format_value(810.4, "MB/s"), "810");
        assert_eq!(format_value(0.017, "%"), "1.7 %");
        assert_eq!(format_value(0.4243, ""), "0.424");
        assert_eq!(format_value(1.0, ""), "1");
        assert_eq!(format_value(0.5, ""), "0.5");
        let mut m = Measures::new("x");
        m.set_seeds("a", "A", "ms", &[1.0, 2.0, 3.0]);
        assert_eq!(m.show("a"), "A 2 ms (1–3)");
    }

    #[test]
    fn a_measures_file_reads_back_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = Measures::new("fig5");
        m.set("swan0.after_gc_mbps", "SWAN0 after GC", "MB/s", 798.0);
        m.set_seeds("x", "X", "", &[1.0, 3.0]);
        let p = dir.path().join("measures.json");
        m.write(&p).unwrap();
        assert_eq!(Measures::read(&p).unwrap(), m);
        std::fs::write(&p, "{").unwrap();
        assert!(Measures::read(&p).unwrap_err().to_string().contains("not a measures file"));
    }
}

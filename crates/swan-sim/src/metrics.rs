//! Per-interval measurements and latency distributions of a run.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Bytes a member moved in one interval, by direction and by who asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemberTraffic {
    pub user_read: u64,
    pub user_write: u64,
    pub gc_read: u64,
    pub gc_write: u64,
}

/// One interval of the time series (see OUTPUT.md).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub t_s: f64,
    pub user_read_mbps: f64,
    pub user_write_mbps: f64,
    pub free_segments: u64,
    pub victim_util: Option<f64>,
    pub front_group: Option<u32>,
    pub gc_groups: u64,
    /// SSD-internal GC pages copied in the interval, over all SSDs.
    pub ssd_gc_pages: u64,
    /// Array-level GC blocks written in the interval (moves, their summaries and parity).
    pub array_gc_write_blocks: u64,
    pub members: Vec<MemberTrafficMbps>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct MemberTrafficMbps {
    pub read: f64,
    pub write: f64,
    pub gc_read: f64,
    pub gc_write: f64,
}

/// Latency histograms in microseconds (1 µs to 1 hour, 3 significant digits). `all` is
/// filled by [`Latencies::close`] from the other two, so each request is recorded once.
#[derive(Clone, Debug)]
pub struct Latencies {
    pub read: Histogram<u64>,
    pub write: Histogram<u64>,
    pub all: Histogram<u64>,
}

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("static histogram bounds are valid")
}

impl Default for Latencies {
    fn default() -> Self {
        Self { read: new_histogram(), write: new_histogram(), all: new_histogram() }
    }
}

impl Latencies {
    pub fn record(&mut self, is_read: bool, latency_ns: u64) {
        let us = (latency_ns / 1000).clamp(1, 3_600_000_000);
        let h = if is_read { &mut self.read } else { &mut self.write };
        h.saturating_record(us);
    }

    /// Fill `all` from `read` and `write`; call once, when the run ends.
    pub fn close(&mut self) {
        self.all.reset();
        self.all.add(&self.read).expect("same histogram bounds");
        self.all.add(&self.write).expect("same histogram bounds");
    }
}

/// Mean and coefficient of variation (population) of a series; `None` if empty.
pub fn mean_cv(values: &[f64]) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let cv = if mean > 0.0 { var.sqrt() / mean } else { 0.0 };
    Some((mean, cv))
}

/// The cumulative distribution of a histogram as (latency_us, fraction) points, one per
/// distinct recorded bucket: compact yet exact to the histogram's precision.
pub fn cdf_points(h: &Histogram<u64>) -> Vec<(u64, f64)> {
    let total = h.len();
    if total == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut seen = 0u64;
    for v in h.iter_recorded() {
        seen += v.count_at_value();
        out.push((h.highest_equivalent(v.value_iterated_to()), seen as f64 / total as f64));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_cv() {
        assert_eq!(mean_cv(&[]), None);
        let (m, cv) = mean_cv(&[2.0, 2.0, 2.0]).unwrap();
        assert_eq!((m, cv), (2.0, 0.0));
        let (m, cv) = mean_cv(&[1.0, 3.0]).unwrap();
        assert_eq!(m, 2.0);
        assert!((cv - 0.5).abs() < 1e-12);
    }

    #[test]
    fn cdf_ends_at_one() {
        let mut l = Latencies::default();
        for i in 1..=100 {
            l.record(i % 2 == 0, i * 1000);
        }
        l.close();
        assert_eq!(l.all.len(), 100);
        let c = cdf_points(&l.all);
        assert_eq!(c.last().unwrap().1, 1.0);
        assert!(c.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
    }
}

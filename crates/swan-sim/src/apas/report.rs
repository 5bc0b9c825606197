//! What an Apas run reports: one row per time period (Figs. 3–5 plot mean, read and write
//! response times per period) and a summary of the whole run.

use super::cleaning_log::CleaningRecord;
use super::disks::DiskCounters;
use serde::{Deserialize, Serialize};

/// The two systems the paper compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    Apas,
    Hwsr,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Apas => "apas",
            Policy::Hwsr => "hwsr",
        }
    }
}

/// Requests arriving in one period, and what the cache and the disks did in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PeriodRow {
    pub period: u64,
    /// Start of the period, seconds from the run's start.
    pub start_s: f64,
    pub reads: u64,
    pub writes: u64,
    /// Mean response times in ms (`None` if no such request arrived).
    pub mean_ms: Option<f64>,
    pub read_ms: Option<f64>,
    pub write_ms: Option<f64>,
    /// Cache lookups in blocks.
    pub read_hits: u64,
    pub read_misses: u64,
    pub write_hits: u64,
    /// Dirty blocks written to the disks (on eviction and on re-partitioning).
    pub destaged_blocks: u64,
    pub disk: DiskCounters,
    /// Media writes per host write on the SWDs in this period (`None` without destages).
    pub smr_write_amplification: Option<f64>,
}

/// Sums of one period (or the run) before the means are taken.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    pub reads: u64,
    pub writes: u64,
    pub read_ns: u128,
    pub write_ns: u128,
    /// Reads that needed a disk (at least one block missed the cache), and their time.
    pub disk_reads: u64,
    pub disk_read_ns: u128,
    pub read_hits: u64,
    pub read_misses: u64,
    pub write_hits: u64,
    pub destaged_blocks: u64,
}

fn mean_ms(sum: u128, n: u64) -> Option<f64> {
    (n > 0).then(|| sum as f64 / n as f64 / 1e6)
}

impl Tally {
    pub fn add(&mut self, o: &Tally) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.read_ns += o.read_ns;
        self.write_ns += o.write_ns;
        self.disk_reads += o.disk_reads;
        self.disk_read_ns += o.disk_read_ns;
        self.read_hits += o.read_hits;
        self.read_misses += o.read_misses;
        self.write_hits += o.write_hits;
        self.destaged_blocks += o.destaged_blocks;
    }

    pub fn row(&self, period: u64, start_s: f64, disk: DiskCounters) -> PeriodRow {
        PeriodRow {
            period,
            start_s,
            reads: self.reads,
            writes: self.writes,
            mean_ms: mean_ms(self.read_ns + self.write_ns, self.reads + self.writes),
            read_ms: mean_ms(self.read_ns, self.reads),
            write_ms: mean_ms(self.write_ns, self.writes),
            read_hits: self.read_hits,
            read_misses: self.read_misses,
            write_hits: self.write_hits,
            destaged_blocks: self.destaged_blocks,
            disk,
            smr_write_amplification: disk.write_amplification(),
        }
    }
}

/// The whole run of one policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub requests: u64,
    pub mean_ms: Option<f64>,
    pub read_ms: Option<f64>,
    /// Reads that needed a disk (a block missed the cache) and their mean response time; the
    /// others were served from the cache alone (`cached_read_ms`).
    #[serde(default)]
    pub disk_reads: u64,
    #[serde(default)]
    pub disk_read_ms: Option<f64>,
    #[serde(default)]
    pub cached_read_ms: Option<f64>,
    pub write_ms: Option<f64>,
    pub read_hit_ratio: Option<f64>,
    pub destaged_blocks: u64,
    pub disk: DiskCounters,
    pub smr_write_amplification: Option<f64>,
    /// Dirty blocks still in the cache at the end (not destaged: the run measures the trace).
    pub dirty_at_end: u64,
}

/// Cost of the simulation itself (not part of the result: wall time varies).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Speed {
    pub wall_s: f64,
    pub requests_per_wall_s: f64,
    /// Estimated bytes of the cache, the SSD model and the disks' tables at the end, per block the trace touches.
    pub model_bytes_per_footprint_block: f64,
}

/// One policy's run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicyReport {
    pub policy: Policy,
    pub cache_blocks: u64,
    pub period_s: f64,
    /// When the run started: the prefill took this long on the disks before it.
    pub prefill_s: f64,
    /// Each disk's free blocks when the run starts, as a share of its shingled blocks.
    #[serde(default)]
    pub free_at_start: Vec<f64>,
    pub footprint_blocks: u64,
    pub applications: u64,
    pub rows: Vec<PeriodRow>,
    pub summary: Summary,
    /// Every idle and lazy band cleaning, in the order queued.
    #[serde(default)]
    pub cleanings: Vec<CleaningRecord>,
    pub speed: Speed,
}

impl PolicyReport {
    /// The run's result without its wall-clock cost (what must repeat exactly).
    pub fn result(&self) -> (&[PeriodRow], &Summary) {
        (&self.rows, &self.summary)
    }
}

fn f(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.3}"))
}

/// Per-period rows of the policies side by side: mean, read and write response times (ms).
pub fn side_by_side(reports: &[PolicyReport]) -> String {
    let mut s = String::from("period  start_s");
    for r in reports {
        let p = r.policy.name();
        s += &format!("  {p:>5}_mean  {p:>5}_read {p:>5}_write {p:>5}_hits {p:>5}_clean");
    }
    s.push('\n');
    let n = reports.iter().map(|r| r.rows.len()).max().unwrap_or(0);
    for i in 0..n {
        let Some(first) = reports.iter().find_map(|r| r.rows.get(i)) else { continue };
        s += &format!("{:>6} {:>8.2}", first.period, first.start_s);
        for r in reports {
            match r.rows.get(i) {
                Some(w) => {
                    let cleanings = w.disk.idle_cleanings + w.disk.lazy_cleanings + w.disk.forced_cleanings;
                    s += &format!(
                        "  {:>10} {:>10} {:>11} {:>10} {:>11}",
                        f(w.mean_ms),
                        f(w.read_ms),
                        f(w.write_ms),
                        w.read_hits + w.write_hits,
                        cleanings
                    );
                }
                None => s += &format!("  {:>10} {:>10} {:>11} {:>10} {:>11}", "-", "-", "-", "-", "-"),
            }
        }
        s.push('\n');
    }
    s
}

/// The summaries of the policies, one line each.
pub fn summaries(reports: &[PolicyReport]) -> String {
    let mut s = String::new();
    for r in reports {
        let m = &r.summary;
        s += &format!(
            "{}: {} requests, mean {} ms (reads {} ms, writes {} ms), read hit ratio {}, {} blocks destaged, \
             SMR write amplification {}, cleanings {} idle / {} lazy / {} forced ({} blocks moved); \
             cache {} blocks, {} periods of {} s\n",
            r.policy.name(),
            m.requests,
            f(m.mean_ms),
            f(m.read_ms),
            f(m.write_ms),
            f(m.read_hit_ratio),
            m.destaged_blocks,
            f(m.smr_write_amplification),
            m.disk.idle_cleanings,
            m.disk.lazy_cleanings,
            m.disk.forced_cleanings,
            m.disk.moved_blocks,
            r.cache_blocks,
            r.rows.len(),
            r.period_s,
        );
    }
    s
}

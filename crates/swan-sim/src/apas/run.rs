//! The replay loop (see [`super`] for what each request costs).
//!
//! Open loop: requests arrive at the trace's own times divided by the acceleration, whatever
//! the system's state; each carries its application id. The trace's footprint (every block
//! it touches) is written to the disks first, sequentially, so that a read finds data on
//! the disk; the run starts when that prefill is done, and times are reported from there.
//! Periods are counted from the run's start; a request belongs to the period it arrives in.

use super::disks::{Cleaner, Disks};
use super::hwsr;
use super::layout::DiskLayout;
use super::report::{Policy, PolicyReport, Speed, Summary, Tally};
use super::ApasRunError;
use crate::replay::{self, OpenTrace, ReplayError, ReplayMode, ReplayRequest, ReplaySpec};
use crate::trace::{AddressPolicy, TraceFormat, TraceOp};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::path::Path;
use std::time::Instant;
use swan_core::apas::{ApasCache, Cpp, CppConfig, GcConfig, GcPolicy, Monitor, Op, ReadOutcome};
use swan_core::io::IoClass;
use swan_models::smr::{atlas_10k_iv_smr, SmrConfig, DEFAULT_BAND_BYTES};
use swan_models::ssd::{presets, Ssd};
use swan_models::{DevOp, DevOpKind, Device, Nanos};

/// The paper's period: 10,000 s.
pub const PAPER_PERIOD_S: f64 = 10_000.0;
/// With no period given, the trace's span is cut into this many periods (the traces here
/// last 0.14 s to 2 h, far less than the paper's 100 × 10,000 s).
pub const AUTO_PERIODS: u64 = 25;
/// Default number of disks: "several SWDs"; 4 hold the widest trace here (TPC-C addresses
/// 135 GB) with room, and spread its chunks.
pub const DEFAULT_DISKS: u32 = 4;
/// Default cache: this share of the trace's footprint (the paper gives no cache size).
pub const DEFAULT_CACHE_FRACTION: f64 = 0.10;
/// A disk is idle once no request has reached it for this long (the paper: "when idle time
/// is detected"). 100 ms: several disk accesses' worth of silence.
pub const DEFAULT_IDLE_TIMEOUT_NS: Nanos = 100_000_000;

/// Under `--disk-fill auto`, free space above the lazy threshold: this share of the blocks
/// the trace writes to the disk (the run crosses the threshold even where the write cache
/// absorbs half of the writes).
pub const DEFAULT_AUTO_HEADROOM: f64 = 0.25;

fn default_auto_headroom() -> f64 {
    DEFAULT_AUTO_HEADROOM
}

/// How full the SWDs are when the run starts: aged disks hold older data besides the trace's
/// footprint ([`Smr::fill_foreign`](swan_models::smr::Smr::fill_foreign)), so that lazy
/// cleaning, which Algorithm 2 runs below 20 % free space, happens within the run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum DiskFill {
    /// Each disk's free space starts at the lazy threshold plus a share (a quarter by
    /// default, [`ApasSimConfig::auto_headroom`]) of the blocks the trace writes to that
    /// disk: the run's destages cross the threshold even where the write cache absorbs half
    /// of the writes.
    Auto,
    /// This share of each disk's shingled blocks holds valid data at the start (older data
    /// and the footprint); 0: the footprint alone, on otherwise empty disks.
    Fraction(f64),
}

/// One run's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApasSimConfig {
    /// Cache size in 4 KiB blocks; `None`: [`DEFAULT_CACHE_FRACTION`] of the footprint.
    pub cache_blocks: Option<u64>,
    pub cache_fraction: f64,
    pub disks: u32,
    pub band_bytes: u64,
    /// The stripe chunk (blocks of the volume kept together on one disk); `None`: one band,
    /// so that a band-size sweep can hold it fixed or let it follow.
    #[serde(default)]
    pub chunk_bytes: Option<u64>,
    /// Period length; `None`: the trace's span / [`AUTO_PERIODS`].
    pub period_ns: Option<Nanos>,
    /// Arrival times divided by this.
    pub accel: f64,
    pub seed: u64,
    pub idle_timeout_ns: Nanos,
    pub hwsr_read_fraction: f64,
    /// An experiment, not HWSR: its greedy cleaner leaves partly written bands out of the
    /// choice (docs/findings/apas.md, "Why: the sweep's open results").
    #[serde(default)]
    pub hwsr_whole_bands_only: bool,
    pub disk_fill: DiskFill,
    /// Under [`DiskFill::Auto`], the share of the trace's writes to a disk left free above
    /// the lazy threshold ([`DEFAULT_AUTO_HEADROOM`]); it sets when each disk first crosses
    /// the threshold, which the disk-count result turns on (docs/findings/apas.md, "Why: the
    /// sweep's open results").
    #[serde(default = "default_auto_headroom")]
    pub auto_headroom: f64,
    pub cpp: CppConfig,
    pub gc: GcConfig,
}

impl Default for ApasSimConfig {
    fn default() -> Self {
        ApasSimConfig {
            cache_blocks: None,
            cache_fraction: DEFAULT_CACHE_FRACTION,
            disks: DEFAULT_DISKS,
            band_bytes: DEFAULT_BAND_BYTES,
            chunk_bytes: None,
            period_ns: None,
            accel: 1.0,
            seed: 1,
            idle_timeout_ns: DEFAULT_IDLE_TIMEOUT_NS,
            hwsr_read_fraction: hwsr::DEFAULT_READ_FRACTION,
            hwsr_whole_bands_only: false,
            disk_fill: DiskFill::Auto,
            auto_headroom: DEFAULT_AUTO_HEADROOM,
            cpp: CppConfig::default(),
            gc: GcConfig::default(),
        }
    }
}

impl ApasSimConfig {
    pub fn smr(&self) -> SmrConfig {
        SmrConfig { band_bytes: self.band_bytes, ..atlas_10k_iv_smr() }
    }

    fn validate(&self) -> Result<(), ApasRunError> {
        if !(self.accel.is_finite() && self.accel > 0.0) {
            return Err(ApasRunError::Accel { accel: self.accel });
        }
        if self.period_ns == Some(0) {
            return Err(ApasRunError::ZeroPeriod);
        }
        if !(self.cache_fraction > 0.0 && self.cache_fraction <= 1.0) {
            return Err(ApasRunError::CacheFraction { fraction: self.cache_fraction });
        }
        if self.disks == 0 {
            return Err(ApasRunError::NoDisks);
        }
        self.smr().validate().map_err(|error| ApasRunError::BandSize { band_bytes: self.band_bytes, error })?;
        if let Some(c) = self.chunk_bytes {
            if c == 0 || c % crate::trace::BLOCK_BYTES != 0 {
                return Err(ApasRunError::Chunk { bytes: c });
            }
        }
        if !(self.auto_headroom.is_finite() && self.auto_headroom >= 0.0) {
            return Err(ApasRunError::Headroom { headroom: self.auto_headroom });
        }
        if let DiskFill::Fraction(f) = self.disk_fill {
            let c = self.smr();
            let most = c.logical_blocks() as f64 / c.shingled_bands() as f64 / c.band_blocks() as f64;
            if !(0.0..=most).contains(&f) {
                return Err(ApasRunError::DiskFill { fill: f, most });
            }
        }
        Ok(())
    }
}

/// A trace opened for Apas runs (its first pass done: a bad line is an error naming it).
#[derive(Clone, Debug)]
pub struct ApasTrace {
    trace: OpenTrace,
    spec: ReplaySpec,
}

impl ApasTrace {
    pub fn open(path: &Path, format: Option<TraceFormat>, accel: f64) -> Result<Self, ReplayError> {
        let mode = if accel == 1.0 { ReplayMode::Recorded } else { ReplayMode::Accel(accel) };
        let spec = ReplaySpec {
            path: path.to_path_buf(),
            format,
            mode,
            policy: AddressPolicy::Wrap,
            skip_bad: false,
            max_requests: None,
            windows: Vec::new(),
        };
        let trace = replay::open(&spec)?;
        Ok(ApasTrace { trace, spec })
    }

    pub fn applications(&self) -> usize {
        self.trace.scan.application_names.len().max(1)
    }

    pub fn application_warning(&self) -> Option<&str> {
        self.trace.scan.application_warning.as_deref()
    }

    /// The replayed span, accelerated.
    pub fn span_ns(&self) -> Nanos {
        self.spec.mode.arrival_ns(self.trace.scan.duration_ns)
    }

    /// What is replayed and how (printed before a run).
    pub fn statement(&self, cfg: &ApasSimConfig) -> String {
        let s = &self.trace.scan;
        let apps = self.applications();
        let mut out = format!(
            "trace {}: {} format, {} requests ({} reads, {} writes), {} application{} ({}), {:.3} s recorded\n  \
             open loop at the trace's times{}; {} disks (Atlas 10K IV SWDs, {} MiB bands) striped in {} MiB \
             chunks, addresses wrap modulo the volume, the trace's start at a chunk chosen by seed {}",
            self.trace.path.display(),
            self.trace.format,
            s.requests,
            s.reads,
            s.writes,
            apps,
            if apps == 1 { "" } else { "s" },
            s.application_names.join(", "),
            s.duration_ns as f64 / 1e9,
            if cfg.accel == 1.0 { String::new() } else { format!(" divided by {}", cfg.accel) },
            cfg.disks,
            cfg.band_bytes as f64 / f64::from(1u32 << 20),
            cfg.chunk_bytes.unwrap_or(cfg.band_bytes) as f64 / f64::from(1u32 << 20),
            cfg.seed,
        );
        if let Some(note) = s.other_events_note() {
            out += &format!("\n  {note}");
        }
        if cfg.disk_fill == DiskFill::Auto && cfg.auto_headroom != DEFAULT_AUTO_HEADROOM {
            out += &format!(
                "\nexperiment: each disk starts {} of the trace's writes to it above the lazy threshold",
                cfg.auto_headroom
            );
        }
        if cfg.hwsr_whole_bands_only {
            out += "\nexperiment: HWSR's greedy cleaner leaves partly written bands out of its choice";
        }
        if let Some(w) = self.application_warning() {
            out += &format!("\nwarning: {w}");
        }
        out
    }

    fn requests(
        &self,
        volume_blocks: u64,
    ) -> Result<impl Iterator<Item = Result<ReplayRequest, ReplayError>>, ReplayError> {
        self.trace.replayer(&self.spec, volume_blocks)
    }
}

/// The period length a run of `trace` under `cfg` uses.
pub fn period_ns(trace: &ApasTrace, cfg: &ApasSimConfig) -> Result<Nanos, ApasRunError> {
    match cfg.period_ns {
        Some(p) => Ok(p),
        None => {
            let span = trace.span_ns();
            if span < AUTO_PERIODS {
                return Err(ApasRunError::NoSpan);
            }
            Ok(span.div_ceil(AUTO_PERIODS))
        }
    }
}

/// Blocks of older data each disk is aged with before the prefill, so that the disk fill is
/// met once the footprint (`on_disk`) is written too; never more than leaves the host room
/// for the footprint.
fn foreign_blocks(cfg: &ApasSimConfig, shingled: u64, logical: u64, on_disk: &[u64], written: &[u64]) -> Vec<u64> {
    on_disk
        .iter()
        .zip(written)
        .map(|(&fp, &w)| {
            let held = match cfg.disk_fill {
                DiskFill::Auto => {
                    let threshold = (u128::from(shingled) * u128::from(cfg.gc.lazy_threshold_percent)).div_ceil(100);
                    // Floored, so 0.25 gives exactly w / 4.
                    let headroom = (w as f64 * cfg.auto_headroom) as u64;
                    shingled.saturating_sub(threshold as u64 + headroom)
                }
                DiskFill::Fraction(f) => (shingled as f64 * f) as u64,
            };
            held.min(logical).saturating_sub(fp)
        })
        .collect()
}

/// The cache in front of the disks: Apas's, re-partitioned every period, or HWSR's fixed one.
enum Manager {
    Apas { monitor: Monitor, cpp: Cpp },
    Hwsr,
}

struct Sim {
    ssd: Ssd,
    ssd_pages: u64,
    cache: ApasCache,
    manager: Manager,
    disks: Disks,
    layout: DiskLayout,
    /// SSD writes of read-miss fills, due when their disk read completes.
    fills: BinaryHeap<Reverse<(Nanos, u64)>>,
    tally: Tally,
}

impl Sim {
    fn ssd_op(&mut self, now: Nanos, kind: DevOpKind, lba: u64) -> Nanos {
        let op = DevOp { kind, block: lba % self.ssd_pages, count: 1, class: IoClass::User };
        self.ssd.submit(now, op)
    }

    /// Submits the fills due by `t` (the SSD takes operations in time order).
    fn fills_until(&mut self, t: Nanos) {
        while let Some(&Reverse((at, lba))) = self.fills.peek() {
            if at > t {
                break;
            }
            self.fills.pop();
            self.ssd_op(at, DevOpKind::Write, lba);
        }
    }

    /// Writes dirty blocks to their disks at `now` (each read off the SSD first); returns when
    /// the last is on its disk.
    fn destage(&mut self, now: Nanos, blocks: &[(u64, u64)]) -> Nanos {
        if blocks.is_empty() {
            return now;
        }
        self.tally.destaged_blocks += blocks.len() as u64;
        let mut out = now;
        for &(lba, _) in blocks {
            out = out.max(self.ssd_op(now, DevOpKind::Read, lba));
        }
        for run in self.layout.sorted_runs(blocks.iter().map(|&(b, _)| b)) {
            out = out.max(self.disks.write(now, &run));
        }
        out
    }

    fn app(&self, app: u32) -> u32 {
        match self.manager {
            Manager::Apas { .. } => app,
            Manager::Hwsr => 0,
        }
    }

    fn request(&mut self, t: Nanos, req: &ReplayRequest) {
        let app = self.app(req.app);
        let op = if req.op == TraceOp::Read { Op::Read } else { Op::Write };
        if let Manager::Apas { monitor, .. } = &mut self.manager {
            monitor.request(app, op, req.blocks * crate::trace::BLOCK_BYTES);
        }
        let mut done = t;
        let mut hits = Vec::new();
        match op {
            Op::Read => {
                let mut missed = Vec::new();
                for lba in req.block..req.block + req.blocks {
                    match self.cache.read(app, lba) {
                        ReadOutcome::Hit { .. } => hits.push(true),
                        ReadOutcome::Miss => {
                            hits.push(false);
                            missed.push(lba);
                        }
                    }
                }
                for (i, lba) in (req.block..req.block + req.blocks).enumerate() {
                    if hits[i] {
                        self.tally.read_hits += 1;
                        done = done.max(self.ssd_op(t, DevOpKind::Read, lba));
                    }
                }
                for run in self.layout.runs(missed.iter().copied()) {
                    let got = self.disks.read(t, &run);
                    done = done.max(got);
                }
                for &lba in &missed {
                    self.tally.read_misses += 1;
                    self.cache.fill(app, lba, 0);
                    self.fills.push(Reverse((done, lba)));
                }
                self.tally.reads += 1;
                self.tally.read_ns += u128::from(done - t);
                if !missed.is_empty() {
                    self.tally.disk_reads += 1;
                    self.tally.disk_read_ns += u128::from(done - t);
                }
            }
            Op::Write => {
                let mut destage = Vec::new();
                for lba in req.block..req.block + req.blocks {
                    let w = self.cache.write(app, lba, 0);
                    hits.push(w.hit);
                    self.tally.write_hits += u64::from(w.hit);
                    destage.extend(w.destage);
                    done = done.max(self.ssd_op(t, DevOpKind::Write, lba));
                }
                done = done.max(self.destage(t, &destage));
                self.tally.writes += 1;
                self.tally.write_ns += u128::from(done - t);
            }
        }
        if let Manager::Apas { monitor, .. } = &mut self.manager {
            for h in hits {
                monitor.lookup(app, op, h);
            }
            monitor.completion(app, done - t);
            let (r, w) = self.cache.occupancy(app);
            monitor.allocated(app, r, w);
        }
    }

    /// The end of a period at `t`: Algorithm 1 re-partitions Apas's cache (its evicted dirty
    /// blocks destaged at once); HWSR's stays as it is.
    fn end_period(&mut self, t: Nanos) {
        let destage = match &mut self.manager {
            Manager::Apas { monitor, cpp } => {
                let stats = monitor.end_period();
                self.cache.resize(cpp.adjust(&stats))
            }
            Manager::Hwsr => return,
        };
        self.fills_until(t);
        self.destage(t, &destage);
    }
}

/// Replays `trace` under `policy`.
pub fn run_policy(trace: &ApasTrace, cfg: &ApasSimConfig, policy: Policy) -> Result<PolicyReport, ApasRunError> {
    cfg.validate()?;
    let wall = Instant::now();
    let period = period_ns(trace, cfg)?;
    let apps = trace.applications();
    let cleaner = match policy {
        Policy::Apas => Cleaner::Apas(GcPolicy::new(cfg.gc)?),
        Policy::Hwsr => Cleaner::Greedy {
            threshold_percent: cfg.gc.lazy_threshold_percent,
            whole_bands_only: cfg.hwsr_whole_bands_only,
        },
    };
    let mut disks = Disks::new(&cfg.smr(), cfg.disks, cleaner, cfg.idle_timeout_ns)?;
    let chunk = cfg.chunk_bytes.map_or(disks.band_blocks(), |c| c / crate::trace::BLOCK_BYTES);
    let layout = DiskLayout::new(cfg.disks, chunk, disks.logical_blocks(), cfg.seed)?;

    // First pass: the footprint, written to the disks before the run, and each disk's share
    // of it and of the trace's writes (what the disk fill is reckoned from).
    let mut seen = HashSet::new();
    let mut written = vec![0u64; cfg.disks as usize];
    for req in trace.requests(layout.volume_blocks())? {
        let req = req?;
        seen.extend(req.block..req.block + req.blocks);
        if req.op != TraceOp::Read {
            for lba in req.block..req.block + req.blocks {
                written[layout.place(lba).0] += 1;
            }
        }
    }
    let mut footprint: Vec<u64> = seen.into_iter().collect();
    footprint.sort_unstable();
    let footprint_blocks = footprint.len() as u64;
    let runs = layout.sorted_runs(footprint);
    let mut on_disk = vec![0u64; cfg.disks as usize];
    for r in &runs {
        on_disk[r.disk] += r.count;
    }
    disks.age(&foreign_blocks(cfg, disks.shingled_blocks(), disks.logical_blocks(), &on_disk, &written))?;
    disks.prefill(&runs);
    let free_at_start = disks.free_fractions();
    let t0 = disks.busy_until();
    disks.start(t0);

    let cache_blocks = cfg.cache_blocks.unwrap_or(((footprint_blocks as f64) * cfg.cache_fraction).ceil() as u64);
    let (cache, manager) = match policy {
        Policy::Apas => {
            let cpp = Cpp::new(cfg.cpp, cache_blocks, apps)?;
            (ApasCache::new(cpp.partition()), Manager::Apas { monitor: Monitor::new(apps), cpp })
        }
        Policy::Hwsr => (ApasCache::new(&hwsr::partition(cache_blocks, cfg.hwsr_read_fraction)?), Manager::Hwsr),
    };
    let ssd_cfg = presets::apas_slc();
    let ssd_pages = cache_blocks.max(ssd_cfg.min_user_pages(ssd_cfg.user_pages).ok_or(ApasRunError::NoSsdFits)?);
    let ssd = Ssd::new(ssd_cfg.with_user_pages(ssd_pages))?;
    let mut sim =
        Sim { ssd, ssd_pages, cache, manager, disks, layout, fills: BinaryHeap::new(), tally: Tally::default() };

    let mut rows = Vec::new();
    let mut total = Tally::default();
    let mut period_end = t0 + period;
    let mut disk_before = sim.disks.counters();
    let mut close = |sim: &mut Sim, end: Nanos, rows: &mut Vec<_>, total: &mut Tally| {
        sim.end_period(end);
        let now = sim.disks.counters();
        let k = rows.len() as u64;
        rows.push(sim.tally.row(k, (k * period) as f64 / 1e9, now.minus(&disk_before)));
        disk_before = now;
        total.add(&sim.tally);
        sim.tally = Tally::default();
    };
    let mut requests = 0u64;
    for req in trace.requests(sim.layout.volume_blocks())? {
        let req = req?;
        let t = t0 + req.at_ns;
        while t >= period_end {
            close(&mut sim, period_end, &mut rows, &mut total);
            period_end += period;
        }
        sim.disks.idle_until(t);
        sim.fills_until(t);
        sim.request(t, &req);
        requests += 1;
    }
    close(&mut sim, period_end, &mut rows, &mut total);

    let disk = sim.disks.counters();
    let lookups = total.read_hits + total.read_misses;
    let mean = |sum: u128, n: u64| (n > 0).then(|| sum as f64 / n as f64 / 1e6);
    let summary = Summary {
        requests,
        mean_ms: mean(total.read_ns + total.write_ns, total.reads + total.writes),
        read_ms: mean(total.read_ns, total.reads),
        disk_reads: total.disk_reads,
        disk_read_ms: mean(total.disk_read_ns, total.disk_reads),
        cached_read_ms: mean(total.read_ns - total.disk_read_ns, total.reads - total.disk_reads),
        write_ms: mean(total.write_ns, total.writes),
        read_hit_ratio: (lookups > 0).then(|| total.read_hits as f64 / lookups as f64),
        destaged_blocks: total.destaged_blocks,
        disk,
        smr_write_amplification: disk.write_amplification(),
        dirty_at_end: sim.cache.dirty_blocks(),
    };
    let wall_s = wall.elapsed().as_secs_f64();
    // Cache: a node (block, tag, list, links: 32 B) and an index entry (~24 B) per cached block.
    let cached: u64 = (0..sim.cache.apps() as u32)
        .map(|a| {
            let (r, w) = sim.cache.occupancy(a);
            r + w
        })
        .sum();
    let model_bytes = sim.disks.model_bytes() + cached * 56 + sim.ssd.model_bytes();
    Ok(PolicyReport {
        policy,
        cache_blocks,
        period_s: period as f64 / 1e9,
        prefill_s: t0 as f64 / 1e9,
        free_at_start,
        footprint_blocks,
        applications: apps as u64,
        rows,
        summary,
        cleanings: sim.disks.cleaning_log().to_vec(),
        speed: Speed {
            wall_s,
            requests_per_wall_s: requests as f64 / wall_s.max(1e-9),
            model_bytes_per_footprint_block: model_bytes as f64 / footprint_blocks.max(1) as f64,
        },
    })
}

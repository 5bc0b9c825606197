//! The SWDs behind the cache, in virtual time, and who cleans their bands when.
//!
//! - **Apas** ([`Cleaner::Apas`], Algorithm 2): when a disk is idle, aggressive cleaning of
//!   the bands [`GcPolicy`] picks, in its order, until the next request arrives (a cleaning
//!   started runs to its end: a band is moved whole); after host writes, lazy cleaning when
//!   the disk's free space is below 20 %.
//! - **HWSR** ([`Cleaner::Greedy`]): no idle-time cleaning (the Apas paper credits only
//!   Apas with using idle time); lazy cleaning below the same 20 %, of the bands with the
//!   fewest valid blocks first (the drive's own greedy choice).
//!
//! Both: when a host write finds no room at all, the drive cleans by itself
//! ([`Smr::write`]'s forced cleaning). A disk is idle once no host operation has been
//! submitted to it for the idle timeout ([`IdleDetector`]) and it has finished its queue.

use super::cleaning_log::{CleaningKind, CleaningLog, CleaningRecord};
use super::layout::DiskRun;
use serde::{Deserialize, Serialize};
use swan_core::apas::GcPolicy;
use swan_core::ggc::IdleDetector;
use swan_models::smr::{Smr, SmrConfig, SmrConfigError, SmrError};
use swan_models::{Device, Nanos};

/// At most this many bands per lazy cleaning call: once live data exceeds 80 % of a disk no
/// plan reaches the target, and a request must not wait for the whole disk to be cleaned.
pub const LAZY_BANDS_PER_CALL: usize = 4;

/// Who picks the bands to clean.
#[derive(Clone, Copy, Debug)]
pub enum Cleaner {
    Apas(GcPolicy),
    /// Lazy only, fewest valid blocks first, below `threshold_percent` free, back to it.
    /// `whole_bands_only` (an experiment, not HWSR: docs/findings/apas.md, "Why: the sweep's open
    /// results") leaves partly written bands out of the choice.
    Greedy {
        threshold_percent: u32,
        whole_bands_only: bool,
    },
}

/// What the disks did (summed over disks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskCounters {
    /// Blocks the host (the cache's destages and the prefill excluded) wrote.
    pub host_blocks_written: u64,
    pub host_blocks_read: u64,
    /// Valid blocks moved by cleaning, of every kind.
    pub moved_blocks: u64,
    pub idle_cleanings: u64,
    pub lazy_cleanings: u64,
    pub forced_cleanings: u64,
    /// Disk time spent cleaning, per kind (summed over disks, so it can exceed the run).
    #[serde(default)]
    pub idle_cleaning_ns: u64,
    #[serde(default)]
    pub lazy_cleaning_ns: u64,
    #[serde(default)]
    pub forced_cleaning_ns: u64,
}

impl DiskCounters {
    /// The SWDs' write amplification: blocks written to the media per block the host wrote.
    pub fn write_amplification(&self) -> Option<f64> {
        (self.host_blocks_written > 0)
            .then(|| (self.host_blocks_written + self.moved_blocks) as f64 / self.host_blocks_written as f64)
    }

    pub fn minus(&self, o: &DiskCounters) -> DiskCounters {
        DiskCounters {
            host_blocks_written: self.host_blocks_written - o.host_blocks_written,
            host_blocks_read: self.host_blocks_read - o.host_blocks_read,
            moved_blocks: self.moved_blocks - o.moved_blocks,
            idle_cleanings: self.idle_cleanings - o.idle_cleanings,
            lazy_cleanings: self.lazy_cleanings - o.lazy_cleanings,
            forced_cleanings: self.forced_cleanings - o.forced_cleanings,
            idle_cleaning_ns: self.idle_cleaning_ns - o.idle_cleaning_ns,
            lazy_cleaning_ns: self.lazy_cleaning_ns - o.lazy_cleaning_ns,
            forced_cleaning_ns: self.forced_cleaning_ns - o.forced_cleaning_ns,
        }
    }
}

/// One disk: the SWD, its idle detector and a lower bound on its free blocks (free space
/// falls only by writes, so the bound spares a scan of every band after each write); and
/// whether its bands changed since an idle-time plan last ran to its end (if not, the same
/// plan would find nothing new, and the scan of every band is spared).
struct Disk {
    smr: Smr,
    idle: IdleDetector,
    free_at_least: u64,
    changed: bool,
}

pub struct Disks {
    disks: Vec<Disk>,
    cleaner: Cleaner,
    counters: DiskCounters,
    log: CleaningLog,
}

impl Disks {
    pub fn new(config: &SmrConfig, n: u32, cleaner: Cleaner, idle_timeout_ns: Nanos) -> Result<Self, SmrConfigError> {
        let disks = (0..n)
            .map(|_| {
                let smr = Smr::new(config.clone())?;
                let free_at_least = smr.free_blocks();
                Ok(Disk { smr, idle: IdleDetector::new(idle_timeout_ns), free_at_least, changed: true })
            })
            .collect::<Result<Vec<_>, SmrConfigError>>()?;
        Ok(Disks { disks, cleaner, counters: DiskCounters::default(), log: CleaningLog::new(n as usize) })
    }

    pub fn counters(&self) -> DiskCounters {
        self.counters
    }

    /// Every idle and lazy cleaning so far, in the order they were queued.
    pub fn cleaning_log(&self) -> &[CleaningRecord] {
        &self.log.records
    }

    /// Blocks each disk lets the host address.
    pub fn logical_blocks(&self) -> u64 {
        self.disks[0].smr.logical_blocks()
    }

    pub fn band_blocks(&self) -> u64 {
        self.disks[0].smr.config().band_blocks()
    }

    /// When every disk has finished its queue.
    pub fn busy_until(&self) -> Nanos {
        self.disks.iter().map(|d| d.smr.busy_until()).max().unwrap_or(0)
    }

    /// Writes `runs` before the measured run (the data a trace reads must exist): timed like
    /// any write, not counted; the idle detectors start afresh at `start` (the run's start).
    pub fn prefill(&mut self, runs: &[DiskRun]) {
        for r in runs {
            let d = &mut self.disks[r.disk];
            let t = d.smr.busy_until();
            d.smr.write(t, r.block, r.count).expect("the layout places blocks inside the disk");
        }
        for d in &mut self.disks {
            d.free_at_least = d.smr.free_blocks();
        }
    }

    pub fn start(&mut self, start: Nanos) {
        self.log.start(start);
        for d in &mut self.disks {
            d.idle.arrival(start);
        }
    }

    pub fn read(&mut self, now: Nanos, r: &DiskRun) -> Nanos {
        let d = &mut self.disks[r.disk];
        d.idle.arrival(now);
        self.log.host_op(r.disk, now);
        self.counters.host_blocks_read += r.count;
        d.smr.read(now, r.block, r.count).expect("the layout places blocks inside the disk")
    }

    /// A host write (a destage); lazy cleaning follows it if space is short (it delays the
    /// requests after, not this one).
    pub fn write(&mut self, now: Nanos, r: &DiskRun) -> Nanos {
        let d = &mut self.disks[r.disk];
        d.idle.arrival(now);
        self.log.host_op(r.disk, now);
        let w = d.smr.write(now, r.block, r.count).expect("the layout places blocks inside the disk");
        self.counters.host_blocks_written += r.count;
        self.counters.forced_cleanings += u64::from(w.forced_cleanings);
        self.counters.forced_cleaning_ns += w.cleaning_ns;
        self.counters.moved_blocks += w.moved_blocks;
        d.free_at_least = d.free_at_least.saturating_sub(r.count);
        d.changed = true;
        self.lazy(now, r.disk);
        w.done
    }

    fn threshold_percent(&self) -> u32 {
        match self.cleaner {
            Cleaner::Apas(gc) => gc.config().lazy_threshold_percent,
            Cleaner::Greedy { threshold_percent, .. } => threshold_percent,
        }
    }

    fn lazy(&mut self, now: Nanos, disk: usize) {
        let threshold = u128::from(self.threshold_percent());
        let d = &mut self.disks[disk];
        let total = d.smr.shingled_blocks();
        if u128::from(d.free_at_least) * 100 >= u128::from(total) * threshold {
            return;
        }
        let free = d.smr.free_blocks();
        d.free_at_least = free;
        if u128::from(free) * 100 >= u128::from(total) * threshold {
            return;
        }
        let bands: Vec<u32> = match self.cleaner {
            Cleaner::Apas(gc) => {
                let plan = gc.plan(&d.smr.victim_states(), free, total, false);
                plan.now().iter().map(|v| v.band).collect()
            }
            Cleaner::Greedy { threshold_percent, whole_bands_only } => {
                let mut states = d.smr.victim_states();
                if whole_bands_only {
                    states.retain(|b| b.free == 0);
                }
                states.sort_by_key(|b| (b.valid, b.band));
                let target = u128::from(total) * u128::from(threshold_percent);
                let mut gained = u128::from(free) * 100;
                let mut take = Vec::new();
                for b in states {
                    if gained >= target {
                        break;
                    }
                    gained += u128::from(b.invalid) * 100;
                    take.push(b.band);
                }
                take
            }
        };
        let mut t = now;
        for band in bands.into_iter().take(LAZY_BANDS_PER_CALL) {
            let state = d.smr.band_state(band);
            match d.smr.clean(t, band) {
                Ok(c) => {
                    self.log.cleaned(disk, CleaningKind::Lazy, &state, &c, t);
                    self.counters.lazy_cleaning_ns += c.done - t;
                    t = c.done;
                    self.counters.lazy_cleanings += 1;
                    self.counters.moved_blocks += c.moved_blocks;
                }
                Err(_) => break, // no free band left to clean into: the drive's forced cleaning takes over
            }
        }
        d.free_at_least = d.smr.free_blocks();
    }

    /// Aggressive cleaning (Apas only) in every idle period that began before `next`, the
    /// next request's arrival: Algorithm 2's victims in order, each started before `next`.
    pub fn idle_until(&mut self, next: Nanos) {
        let Cleaner::Apas(gc) = self.cleaner else { return };
        for (i, d) in self.disks.iter_mut().enumerate() {
            let Some(due) = d.idle.due() else { continue };
            let start = due.max(d.smr.busy_until());
            if start >= next || !d.idle.take_idle(start) || !d.changed {
                continue;
            }
            let free = d.smr.free_blocks();
            let plan = gc.plan(&d.smr.victim_states(), free, d.smr.shingled_blocks(), true);
            let mut t = start;
            d.changed = false;
            for v in plan.now() {
                if t >= next {
                    d.changed = true; // victims left for the next idle period
                    break;
                }
                let state = d.smr.band_state(v.band);
                match d.smr.clean(t, v.band) {
                    Ok(c) => {
                        self.log.cleaned(i, CleaningKind::Idle, &state, &c, t);
                        self.counters.idle_cleaning_ns += c.done - t;
                        t = c.done;
                        self.counters.idle_cleanings += 1;
                        self.counters.moved_blocks += c.moved_blocks;
                    }
                    Err(_) => break,
                }
            }
            d.free_at_least = free; // cleaning only adds free space: still a lower bound
        }
    }

    /// Bytes the disk models' tables hold ([`Smr::model_bytes`]).
    pub fn model_bytes(&self) -> u64 {
        self.disks.iter().map(|d| d.smr.model_bytes()).sum()
    }

    /// Ages every disk before the prefill: disk `i` gets `foreign[i]` blocks of older data
    /// ([`Smr::fill_foreign`]).
    pub fn age(&mut self, foreign: &[u64]) -> Result<(), SmrError> {
        for (d, &blocks) in self.disks.iter_mut().zip(foreign) {
            d.smr.fill_foreign(blocks)?;
            d.free_at_least = d.smr.free_blocks();
        }
        Ok(())
    }

    /// Each disk's free blocks as a share of its shingled blocks.
    pub fn free_fractions(&self) -> Vec<f64> {
        self.disks.iter().map(|d| d.smr.free_blocks() as f64 / d.smr.shingled_blocks() as f64).collect()
    }

    /// Blocks of one disk's shingled bands.
    pub fn shingled_blocks(&self) -> u64 {
        self.disks[0].smr.shingled_blocks()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swan_core::apas::GcConfig;
    use swan_models::smr::atlas_10k_iv_smr;

    /// The Atlas disk cut to its first 40 cylinders (~138 MB), 1 MiB bands, 4 spare.
    fn small_disk() -> SmrConfig {
        let mut c = atlas_10k_iv_smr();
        c.hdd.zones.truncate(1);
        c.hdd.zones[0].cylinders = 40;
        c.band_bytes = 1 << 20;
        c.spare_bands = 4;
        c
    }

    /// Half the disk written, then random single-block overwrites within that half until
    /// three times its blocks have been rewritten: free space must fall below 20 %.
    fn overwrite(cleaner: Cleaner) -> (DiskCounters, u64, u64) {
        let cfg = small_disk();
        let mut d = Disks::new(&cfg, 1, cleaner, DEFAULT_TIMEOUT).unwrap();
        let live = d.logical_blocks() / 2;
        d.prefill(&[DiskRun { disk: 0, block: 0, count: live }]);
        let mut t = d.busy_until();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..3 * live {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            t = d.write(t, &DiskRun { disk: 0, block: x % live, count: 1 }).max(t);
        }
        let smr = &d.disks[0].smr;
        (d.counters(), smr.free_blocks(), smr.shingled_blocks())
    }

    const DEFAULT_TIMEOUT: Nanos = 100_000_000;

    #[test]
    fn lazy_cleaning_keeps_free_space_near_20_percent_under_both_cleaners() {
        let apas = Cleaner::Apas(GcPolicy::new(GcConfig::default()).unwrap());
        for cleaner in [apas, Cleaner::Greedy { threshold_percent: 20, whole_bands_only: false }] {
            let (c, free, total) = overwrite(cleaner);
            assert!(c.lazy_cleanings > 0, "{cleaner:?}: {c:?}");
            assert_eq!(c.forced_cleanings, 0, "{cleaner:?}: lazy cleaning keeps room ahead of the writes: {c:?}");
            assert_eq!(c.idle_cleanings, 0, "no idle time was offered");
            assert!(c.write_amplification().unwrap() > 1.0, "{c:?}");
            // Each call stops at the target; a band's worth of writes later it runs again.
            let band = small_disk().band_blocks();
            assert!(free * 100 >= total * 20 - 100 * band, "{cleaner:?}: {free} of {total} free");
        }
    }
}

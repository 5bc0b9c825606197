//! Algorithm 2, the GC policy of the shingled disk: Fig. 2's five band types, their weights,
//! and which bands to clean now.
//!
//! §III-C: apart from free bands, every shingled band is one of five types by the distribution
//! of its valid data. **A**: nearly all blocks invalid — reclaimed with very little migration.
//! **B**: nearly all blocks valid — need not be reclaimed. **C**: valid blocks mainly in the
//! back half — reclaiming the front half is not enough, the back half's data must move
//! anyway. **D**: valid blocks mainly in the front half — the back half is easy to reclaim.
//! **E**: valid blocks across the whole band — much migration. Algorithm 2 weights them
//! B=0, E=1, C=2, D=3, A=4, reclaims the heaviest first and, within a type, the band with
//! fewer valid blocks first; it cleans **aggressively** when idle time is detected and
//! **lazily** when the SWD's free space falls below 20 %.
//!
//! The paper gives no numbers for "nearly all" and "mainly", nor how far each cleaning goes;
//! they are [`GcConfig`]'s parameters. Proportions are of a band's *written* blocks (valid +
//! invalid): its free blocks hold no data. The "front half" is the first half of the written
//! blocks, where shingled writing starts. A band is cleaned whole (the SMR model's
//! `Smr::clean` moves its valid blocks to a free band): the C/D distinction survives as the
//! paper's weights, which say which bands to take first.
//!
//! The policy is pure: the driver passes every shingled band's counts as a [`BandState`]
//! (leaving out the band the host is appending to), the disk's free blocks, and whether it is
//! idle now, and gets the victims in order and how many of them to clean now.

use super::ApasError;
use serde::{Deserialize, Serialize};

/// Fig. 2's band types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum BandClass {
    A,
    B,
    C,
    D,
    E,
}

impl BandClass {
    /// Algorithm 2's weights: the higher, the sooner the band is reclaimed.
    pub fn weight(self) -> u8 {
        match self {
            BandClass::B => 0,
            BandClass::E => 1,
            BandClass::C => 2,
            BandClass::D => 3,
            BandClass::A => 4,
        }
    }
}

/// One shingled band's counts, as the SMR model keeps them (`band_stats`, `valid_in`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BandState {
    pub band: u32,
    pub valid: u32,
    pub invalid: u32,
    /// Blocks not yet written (past the band's write pointer).
    pub free: u32,
    /// Valid blocks among the first half of the written ones, `0 .. (valid + invalid) / 2`.
    pub valid_front: u32,
}

impl BandState {
    pub fn written(&self) -> u32 {
        self.valid + self.invalid
    }
}

/// The thresholds and extents the paper leaves open.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GcConfig {
    /// "Nearly all": a band is A when at least this percentage of its written blocks is
    /// invalid, B when at least this percentage is valid. 90: at most a tenth of the band
    /// left to move (A) or to gain (B); the types are "coarse grain", and within a type the
    /// order by valid count refines it.
    pub nearly_all_percent: u32,
    /// "Mainly": a band is D when at least this percentage of its valid blocks is in the front
    /// half, C when at least this percentage is in the back half, E otherwise. 75: one half
    /// holds three times what the other holds.
    pub mainly_percent: u32,
    /// Lazy cleaning starts when the disk's free blocks fall below this percentage: 20, the
    /// paper's "predefined threshold (such as 20%)".
    pub lazy_threshold_percent: u32,
    /// Lazy cleaning stops once the free blocks are back to this percentage. 20 (= the threshold):
    /// lazy cleaning does no more than it must; cleaning a band frees all its invalid blocks
    /// at once, which is hysteresis enough.
    pub lazy_target_percent: u32,
    /// In idle time, every band whose weight is at least this is cleaned (in order, until
    /// the idle period ends). 2 (types A, D, C): B "need not be reclaimed", and an E band
    /// moves most of its blocks for little space; its valid data may still be overwritten,
    /// and freed for nothing, before space runs short — then lazy cleaning takes it.
    pub aggressive_min_weight: u8,
}

impl Default for GcConfig {
    fn default() -> Self {
        GcConfig {
            nearly_all_percent: 90,
            mainly_percent: 75,
            lazy_threshold_percent: 20,
            lazy_target_percent: 20,
            aggressive_min_weight: 2,
        }
    }
}

/// Why the plan cleans.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CleaningMode {
    /// Not idle and enough free space: nothing to clean now.
    None,
    /// Free space below the threshold: clean until it is back to the target.
    Lazy,
    /// Idle time detected: clean every band worth it while the idle time lasts (and at least
    /// what lazy cleaning would, if space is also short).
    Aggressive,
}

/// A band to reclaim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Victim {
    pub band: u32,
    pub class: BandClass,
    pub valid: u32,
    pub invalid: u32,
}

/// What to clean.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CleaningPlan {
    pub mode: CleaningMode,
    /// Every band worth cleaning (one with an invalid block), in Algorithm 2's order:
    /// weight descending, then fewer valid blocks, then lower band number.
    pub victims: Vec<Victim>,
    /// How many of `victims`, from the first, to clean now.
    pub clean_now: usize,
}

impl CleaningPlan {
    pub fn now(&self) -> &[Victim] {
        &self.victims[..self.clean_now]
    }
}

/// Algorithm 2.
#[derive(Clone, Copy, Debug)]
pub struct GcPolicy {
    cfg: GcConfig,
}

impl GcPolicy {
    pub fn new(cfg: GcConfig) -> Result<Self, ApasError> {
        // "Nearly all" and "mainly" below one half would let a band be two types at once.
        let percent = |name: &str, v: u32, lo: u32| {
            if v > lo && v <= 100 {
                Ok(())
            } else {
                Err(ApasError::Gc(format!("{name} {v} must be above {lo} and at most 100")))
            }
        };
        percent("nearly_all_percent", cfg.nearly_all_percent, 50)?;
        percent("mainly_percent", cfg.mainly_percent, 50)?;
        percent("lazy_threshold_percent", cfg.lazy_threshold_percent, 0)?;
        percent("lazy_target_percent", cfg.lazy_target_percent, 0)?;
        if cfg.lazy_target_percent < cfg.lazy_threshold_percent {
            return Err(ApasError::Gc(format!(
                "lazy_target_percent {} must be at least lazy_threshold_percent {}",
                cfg.lazy_target_percent, cfg.lazy_threshold_percent
            )));
        }
        if cfg.aggressive_min_weight > BandClass::A.weight() {
            return Err(ApasError::Gc(format!(
                "aggressive_min_weight {} exceeds the highest weight (4, type A)",
                cfg.aggressive_min_weight
            )));
        }
        Ok(GcPolicy { cfg })
    }

    pub fn config(&self) -> GcConfig {
        self.cfg
    }

    /// Fig. 2's type of a band; `None` for a free band (nothing written).
    ///
    /// # Panics
    /// If `valid_front` exceeds `valid`.
    pub fn classify(&self, b: &BandState) -> Option<BandClass> {
        assert!(
            b.valid_front <= b.valid,
            "band {}: {} valid in the front half of {} valid",
            b.band,
            b.valid_front,
            b.valid
        );
        if b.written() == 0 {
            return None;
        }
        // In integers, exactly: `part / whole >= percent / 100`.
        let at_least =
            |part: u32, whole: u32, percent: u32| u64::from(part) * 100 >= u64::from(whole) * u64::from(percent);
        let (nearly_all, mainly) = (self.cfg.nearly_all_percent, self.cfg.mainly_percent);
        Some(if at_least(b.invalid, b.written(), nearly_all) {
            BandClass::A
        } else if at_least(b.valid, b.written(), nearly_all) {
            BandClass::B
        } else if at_least(b.valid_front, b.valid, mainly) {
            BandClass::D
        } else if at_least(b.valid - b.valid_front, b.valid, mainly) {
            BandClass::C
        } else {
            BandClass::E
        })
    }

    /// Every band worth cleaning, in Algorithm 2's order.
    pub fn victims(&self, bands: &[BandState]) -> Vec<Victim> {
        let mut v: Vec<Victim> = bands
            .iter()
            .filter(|b| b.invalid > 0)
            .filter_map(|b| {
                let class = self.classify(b)?;
                Some(Victim { band: b.band, class, valid: b.valid, invalid: b.invalid })
            })
            .collect();
        v.sort_by_key(|x| (std::cmp::Reverse(x.class.weight()), x.valid, x.band));
        v
    }

    /// What to clean now, for a disk of `total_blocks` with `free_blocks` free, idle or not.
    pub fn plan(&self, bands: &[BandState], free_blocks: u64, total_blocks: u64, idle: bool) -> CleaningPlan {
        let victims = self.victims(bands);
        let short =
            u128::from(free_blocks) * 100 < u128::from(total_blocks) * u128::from(self.cfg.lazy_threshold_percent);
        let lazy = if short {
            // The fewest victims, in order, whose invalid blocks bring the free space back.
            let need = (u128::from(total_blocks) * u128::from(self.cfg.lazy_target_percent)).div_ceil(100) as u64;
            let mut free = free_blocks;
            let mut n = 0;
            while free < need && n < victims.len() {
                free += u64::from(victims[n].invalid);
                n += 1;
            }
            n
        } else {
            0
        };
        let (mode, clean_now) = if idle {
            let min = self.cfg.aggressive_min_weight;
            let worth = victims.iter().take_while(|v| v.class.weight() >= min).count();
            (CleaningMode::Aggressive, worth.max(lazy))
        } else if short {
            (CleaningMode::Lazy, lazy)
        } else {
            (CleaningMode::None, 0)
        };
        CleaningPlan { mode, victims, clean_now }
    }
}

#[cfg(test)]
#[path = "bands_tests.rs"]
mod tests;

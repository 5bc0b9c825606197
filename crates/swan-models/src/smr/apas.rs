//! The SWD's counters as Apas's GC policy reads them ([`swan_core::apas::GcPolicy`]): one
//! [`BandState`] per shingled band holding data, and the disk's free space.

use super::Smr;
use swan_core::apas::BandState;

impl Smr {
    /// Every shingled band holding data except the one open for host appends (cleaning it
    /// would only move the blocks just written), in band order. `valid_front` counts the
    /// valid blocks in the first half of the band's written blocks.
    pub fn band_states(&self) -> Vec<BandState> {
        self.used_bands().filter(|&b| Some(b) != self.open).map(|b| self.band_state(b)).collect()
    }

    /// The states of the bands a cleaning can gain space in: those of [`Smr::band_states`]
    /// with an invalid block, read from a set kept live, not by scanning every band. The
    /// only ones Algorithm 2 (and any greedy cleaner) picks victims from.
    pub fn victim_states(&self) -> Vec<BandState> {
        self.dirty_bands().filter(|&b| Some(b) != self.open).map(|b| self.band_state(b)).collect()
    }

    /// One band's counts as Algorithm 2 reads them (whatever the band's state).
    pub fn band_state(&self, band: u32) -> BandState {
        let s = self.band_stats(band);
        let written = s.valid + s.invalid;
        let count = |x: u64| u32::try_from(x).expect("a band holds fewer than 2^32 blocks");
        BandState {
            band,
            valid: count(s.valid),
            invalid: count(s.invalid),
            free: count(s.free),
            valid_front: count(self.valid_in(band, 0, written / 2)),
        }
    }

    /// Blocks of the shingled bands (the host's capacity plus the spare bands).
    pub fn shingled_blocks(&self) -> u64 {
        self.config.shingled_bands() * self.media.band_blocks()
    }

    /// Blocks not yet written: the free bands and the rest of every partly written band.
    /// Invalid blocks are not free until their band is cleaned. Kept live, not scanned.
    pub fn free_blocks(&self) -> u64 {
        self.shingled_blocks() - self.media.shingled_written()
    }
}

#[cfg(test)]
#[path = "apas_tests.rs"]
mod tests;

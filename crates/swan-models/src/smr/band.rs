//! The shingled media under the STL: the disk cut into fixed-size bands, the first
//! `unshingled` of them conventional (written in place, like any disk) and the rest
//! shingled. A shingled band has a write pointer and must be written in order: a write
//! below the pointer overwrites, with its wide write head, the tracks after the last track
//! it writes, so those tracks (up to the pointer) are first read out and then rewritten
//! after it. Bands are separated by guard tracks, so no write damages the next band.
//!
//! Optionally the media remembers a tag per block (what was written there), so a model
//! check can tell a block the STL serves from the block it should serve.

use std::collections::HashMap;

use crate::hdd::{Hdd, HddAccess};
use crate::Nanos;

/// What one band write cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BandWrite {
    pub start: Nanos,
    pub done: Nanos,
    /// Blocks after the written tracks that had to be read out and rewritten.
    pub rewritten_blocks: u64,
}

/// A band operation that cannot be done.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BandOpError {
    #[error("band {band} does not exist (the disk has {bands})")]
    NoBand { band: u32, bands: u32 },
    #[error("blocks {offset}..{end} reach past the band's {band_blocks} blocks")]
    PastBand { offset: u64, end: u64, band_blocks: u64 },
}

/// The disk seen as bands (see the module documentation).
#[derive(Clone, Debug)]
pub struct Bands {
    hdd: Hdd,
    band_blocks: u64,
    bands: u32,
    unshingled: u32,
    /// Blocks written from the start of each band (the write pointer).
    wp: Vec<u64>,
    /// The write pointers of the shingled bands, summed (kept as they move, so the disk's
    /// free space needs no scan of every band).
    shingled_written: u64,
    /// Physical block → tag of the data on it, when the media keeps tags.
    tags: Option<HashMap<u64, u64>>,
}

impl Bands {
    /// `bands` bands of `band_blocks` blocks from the start of `hdd`; the caller has
    /// checked that they fit.
    pub(crate) fn new(hdd: Hdd, band_blocks: u64, bands: u32, unshingled: u32) -> Self {
        Bands { hdd, band_blocks, bands, unshingled, wp: vec![0; bands as usize], shingled_written: 0, tags: None }
    }

    pub(crate) fn keep_tags(&mut self) {
        self.tags.get_or_insert_with(HashMap::new);
    }

    pub fn hdd(&self) -> &Hdd {
        &self.hdd
    }

    pub fn band_blocks(&self) -> u64 {
        self.band_blocks
    }

    pub fn bands(&self) -> u32 {
        self.bands
    }

    pub fn is_shingled(&self, band: u32) -> bool {
        band >= self.unshingled
    }

    /// Blocks written in every shingled band, summed.
    pub fn shingled_written(&self) -> u64 {
        self.shingled_written
    }

    /// Moves `band`'s write pointer, keeping the sum of the shingled ones.
    fn set_wp(&mut self, band: u32, wp: u64) {
        let old = std::mem::replace(&mut self.wp[band as usize], wp);
        if self.is_shingled(band) {
            self.shingled_written = self.shingled_written - old + wp;
        }
    }

    /// The band's write pointer: blocks written from its start.
    pub fn write_pointer(&self, band: u32) -> u64 {
        self.wp[band as usize]
    }

    /// Physical block (the STL's Target_LBA) of `offset` in `band`.
    pub fn target(&self, band: u32, offset: u64) -> u64 {
        u64::from(band) * self.band_blocks + offset
    }

    fn check(&self, band: u32, offset: u64, count: u64) -> Result<(), BandOpError> {
        if band >= self.bands {
            return Err(BandOpError::NoBand { band, bands: self.bands });
        }
        let end = offset.saturating_add(count);
        if end > self.band_blocks {
            return Err(BandOpError::PastBand { offset, end, band_blocks: self.band_blocks });
        }
        Ok(())
    }

    fn io(&mut self, now: Nanos, block: u64, count: u64) -> HddAccess {
        self.hdd.access_blocks(now, block, count).expect("bands lie inside the disk")
    }

    /// Read `count` blocks from `offset` of `band`.
    pub fn read_at(&mut self, now: Nanos, band: u32, offset: u64, count: u64) -> Result<HddAccess, BandOpError> {
        self.check(band, offset, count)?;
        Ok(self.io(now, self.target(band, offset), count))
    }

    /// The first block of `band`, at or after `from`, that a write ending at block `end`
    /// (exclusive) damages: the first block not wholly on the tracks that write touches.
    fn first_damaged(&self, band: u32, end: u64) -> u64 {
        let spb = self.hdd.sectors_per_block();
        let last_sector = self.target(band, end) * spb - 1;
        let (_, track_end) = self.hdd.track_of(last_sector);
        // A block straddling the track end has sectors on the next track: damaged.
        (track_end / spb).max(self.target(band, end)) - self.target(band, 0)
    }

    /// Write `count` blocks at `offset` of `band`, tagging them with `tags` when the media
    /// keeps tags. Conventional bands are written in place. In a shingled band a write at
    /// or past the write pointer is a plain append; a write below it reads out the blocks
    /// from the first damaged track up to the pointer, writes, and rewrites them.
    pub fn write_at(
        &mut self,
        now: Nanos,
        band: u32,
        offset: u64,
        count: u64,
        tags: Option<&[u64]>,
    ) -> Result<BandWrite, BandOpError> {
        self.check(band, offset, count)?;
        let end = offset + count;
        let wp = self.wp[band as usize];
        let damaged = if self.is_shingled(band) && offset < wp { self.first_damaged(band, end) } else { wp };
        let mut w = BandWrite::default();
        let mut t = now;
        if damaged < wp {
            let r = self.io(t, self.target(band, damaged), wp - damaged);
            (w.start, t) = (r.start, r.done);
        }
        let a = self.io(t, self.target(band, offset), count);
        if damaged >= wp {
            w.start = a.start;
        }
        t = a.done;
        if damaged < wp {
            t = self.io(t, self.target(band, damaged), wp - damaged).done;
            w.rewritten_blocks = wp - damaged;
        }
        w.done = t;
        self.set_wp(band, wp.max(end));
        let first = self.target(band, offset);
        if let Some(map) = self.tags.as_mut() {
            for i in 0..count {
                match tags.and_then(|t| t.get(i as usize)) {
                    Some(&tag) => map.insert(first + i, tag),
                    None => map.remove(&(first + i)),
                };
            }
        }
        Ok(w)
    }

    /// Sets `band`'s write pointer to `blocks`, as if written before time 0 with no tags.
    pub(crate) fn fill_untimed(&mut self, band: u32, blocks: u64) {
        self.set_wp(band, blocks);
    }

    /// Forget everything in `band` and rewind its write pointer: the band is free.
    pub fn free(&mut self, band: u32) {
        let (first, wp) = (self.target(band, 0), self.wp[band as usize]);
        if let Some(map) = self.tags.as_mut() {
            for b in first..first + wp {
                map.remove(&b);
            }
        }
        self.set_wp(band, 0);
    }

    /// Put (or clear) the tag on physical block `target`, when the media keeps tags.
    pub(crate) fn set_tag(&mut self, target: u64, tag: Option<u64>) {
        if let Some(map) = self.tags.as_mut() {
            match tag {
                Some(t) => map.insert(target, t),
                None => map.remove(&target),
            };
        }
    }

    /// The tag on physical block `target`, when the media keeps tags.
    pub fn tag(&self, target: u64) -> Option<u64> {
        self.tags.as_ref().and_then(|m| m.get(&target).copied())
    }
}

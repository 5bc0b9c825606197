//! A drive-managed shingled write disk (SWD) in virtual time, as Apas §IV-A builds it:
//! one unshingled band holding the mapping table, shingled data bands that must be
//! written in order ([`Bands`]), and a shingle translation layer (STL) that translates
//! addresses "in a log-structured way" through a hash table of entries {SMR_LBA,
//! Target_LBA, valid, band}, counting each band's invalid blocks as it goes.
//!
//! # The STL
//! - **Write**: every block already mapped has its old Target_LBA marked invalid (its
//!   band's invalid count rises), and the data is appended at the write pointer of the
//!   open band, so host writes never land below a write pointer and never damage tracks.
//!   When the open band fills, the next is a partly written band (one a cleaning left
//!   room in) or else a free band; the last free band is kept for cleaning.
//! - **Read**: each block's Target_LBA is looked up; runs of consecutive Target_LBAs are
//!   read as one disk access. A block never written reads as nothing, with no disk work.
//! - **Cleaning** ([`Smr::clean`]): read a band's valid blocks, write them in order to a
//!   free band, free the old band. Choosing when and which band is the GC policy's job
//!   (Apas's Algorithm 2, outside this model), fed by [`Smr::band_stats`] and
//!   [`Smr::valid_in`]. Only when a host write finds no room at all does the drive clean
//!   by itself (greedy: the band with fewest valid blocks), as a real drive-managed disk
//!   must; [`SmrWrite::forced_cleanings`] reports it.
//!
//! # What is not timed
//! The mapping table is assumed to live in drive memory and to be written back to the
//! unshingled band at no cost (the paper does not say when it is written back).

mod apas;
mod band;
mod config;
#[cfg(test)]
mod tests;

pub use band::{BandOpError, BandWrite, Bands};
pub use config::{atlas_10k_iv_smr, SmrConfig, SmrConfigError, DEFAULT_BAND_BYTES};

use std::collections::{BTreeSet, HashMap};

use crate::hdd::Hdd;
use crate::{DevOp, DevOpKind, Device, Nanos};

/// One STL hash-table entry: where the valid copy of an SMR_LBA lives. The paper's
/// `hashvalue` is the table's own hashing; `valid_state` is 1 for every entry in the
/// table (an invalidated Target_LBA is marked in its band's reverse table instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StlEntry {
    pub target_lba: u64,
    pub band: u32,
}

/// The inputs a band-cleaning policy classifies a band by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BandStats {
    pub valid: u64,
    pub invalid: u64,
    /// Blocks past the write pointer, not yet written.
    pub free: u64,
}

/// What a host write did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SmrWrite {
    pub done: Nanos,
    pub forced_cleanings: u32,
    /// Valid blocks those cleanings moved.
    pub moved_blocks: u64,
}

/// What one band cleaning did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cleaning {
    pub victim: u32,
    /// Where the valid blocks went (`None` if there were none).
    pub destination: Option<u32>,
    pub moved_blocks: u64,
    pub start: Nanos,
    pub done: Nanos,
}

/// An SWD operation that cannot be done.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SmrError {
    #[error("blocks {block}..{end} reach past the {blocks} blocks the host may address")]
    OutOfRange { block: u64, end: u64, blocks: u64 },
    #[error("band {band} is not a shingled data band in use")]
    NotCleanable { band: u32 },
    #[error("no free band to clean into")]
    NoFreeBand,
}

const NONE: u32 = u32::MAX;

/// A drive-managed SMR disk (see the module documentation).
#[derive(Clone, Debug)]
pub struct Smr {
    config: SmrConfig,
    media: Bands,
    /// The STL's hash table: SMR_LBA → its valid copy.
    stl: HashMap<u64, StlEntry>,
    /// Per band, per block: the SMR_LBA whose valid copy is there, or `NONE` (invalid or
    /// unwritten). Allocated when a band is first written.
    owner: Vec<Vec<u32>>,
    valid: Vec<u64>,
    invalid: Vec<u64>,
    free: BTreeSet<u32>,
    /// Partly written bands not open for host writes (a cleaning's destination).
    partial: BTreeSet<u32>,
    open: Option<u32>,
}

impl Smr {
    pub fn new(config: SmrConfig) -> Result<Self, SmrConfigError> {
        config.validate()?;
        let hdd = Hdd::new(config.hdd.clone())?;
        let bands = config.bands() as u32;
        let media = Bands::new(hdd, config.band_blocks(), bands, config.unshingled_bands);
        let n = bands as usize;
        Ok(Smr {
            free: (config.unshingled_bands..bands).collect(),
            config,
            media,
            stl: HashMap::new(),
            owner: vec![Vec::new(); n],
            valid: vec![0; n],
            invalid: vec![0; n],
            partial: BTreeSet::new(),
            open: None,
        })
    }

    /// The same drive, whose media remembers a tag per block ([`Smr::write_tagged`]).
    pub fn with_tags(mut self) -> Self {
        self.media.keep_tags();
        self
    }

    pub fn config(&self) -> &SmrConfig {
        &self.config
    }

    pub fn media(&self) -> &Bands {
        &self.media
    }

    /// The band layer itself, for writing a band directly (below its write pointer, too).
    /// Such writes bypass the STL: its tables do not learn of them.
    pub fn media_mut(&mut self) -> &mut Bands {
        &mut self.media
    }

    pub fn logical_blocks(&self) -> u64 {
        self.config.logical_blocks()
    }

    pub fn lookup(&self, smr_lba: u64) -> Option<StlEntry> {
        self.stl.get(&smr_lba).copied()
    }

    pub fn band_stats(&self, band: u32) -> BandStats {
        let b = band as usize;
        let free = self.media.band_blocks() - self.media.write_pointer(band);
        BandStats { valid: self.valid[b], invalid: self.invalid[b], free }
    }

    /// Valid blocks among `from..to` of `band` (e.g. its front and back halves).
    pub fn valid_in(&self, band: u32, from: u64, to: u64) -> u64 {
        let o = &self.owner[band as usize];
        let to = (to as usize).min(o.len());
        o.get(from as usize..to).map_or(0, |s| s.iter().filter(|&&x| x != NONE).count() as u64)
    }

    pub fn free_bands(&self) -> usize {
        self.free.len()
    }

    /// Shingled bands holding data, in band order.
    pub fn used_bands(&self) -> impl Iterator<Item = u32> + '_ {
        (self.config.unshingled_bands..self.media.bands()).filter(|b| !self.free.contains(b))
    }

    fn check(&self, block: u64, count: u64) -> Result<(), SmrError> {
        let end = block.saturating_add(count);
        if end > self.logical_blocks() {
            return Err(SmrError::OutOfRange { block, end, blocks: self.logical_blocks() });
        }
        Ok(())
    }

    fn invalidate(&mut self, smr_lba: u64) {
        if let Some(e) = self.stl.remove(&smr_lba) {
            let b = e.band as usize;
            let offset = e.target_lba - self.media.target(e.band, 0);
            self.owner[b][offset as usize] = NONE;
            self.valid[b] -= 1;
            self.invalid[b] += 1;
        }
    }

    fn place(&mut self, smr_lba: u64, band: u32, offset: u64) {
        let b = band as usize;
        if self.owner[b].is_empty() {
            self.owner[b] = vec![NONE; self.media.band_blocks() as usize];
        }
        self.owner[b][offset as usize] = smr_lba as u32;
        self.valid[b] += 1;
        self.stl.insert(smr_lba, StlEntry { target_lba: self.media.target(band, offset), band });
    }

    /// A band with room for host appends, cleaning first if there is none.
    fn open_band(&mut self, t: &mut Nanos, w: &mut SmrWrite) -> u32 {
        loop {
            if let Some(b) = self.open.filter(|&b| self.band_stats(b).free > 0) {
                return b;
            }
            self.open = self.partial.pop_first();
            if self.open.is_none() && self.free.len() > 1 {
                self.open = self.free.pop_first();
            }
            if self.open.is_some() {
                continue;
            }
            let victim = self
                .used_bands()
                .min_by_key(|&b| self.valid[b as usize])
                .expect("the spare bands guarantee a used band");
            let c = self.clean(*t, victim).expect("the last free band is kept for cleaning");
            *t = c.done;
            w.forced_cleanings += 1;
            w.moved_blocks += c.moved_blocks;
        }
    }

    /// Write `tags.len()` blocks from `block`, the media remembering `tags` if it keeps tags.
    pub fn write_tagged(&mut self, now: Nanos, block: u64, tags: &[u64]) -> Result<SmrWrite, SmrError> {
        self.write_inner(now, block, tags.len() as u64, Some(tags))
    }

    pub fn write(&mut self, now: Nanos, block: u64, count: u64) -> Result<SmrWrite, SmrError> {
        self.write_inner(now, block, count, None)
    }

    fn write_inner(&mut self, now: Nanos, block: u64, count: u64, tags: Option<&[u64]>) -> Result<SmrWrite, SmrError> {
        self.check(block, count)?;
        for lba in block..block + count {
            self.invalidate(lba);
        }
        let mut w = SmrWrite::default();
        let mut t = now;
        let mut done = 0;
        while done < count {
            let band = self.open_band(&mut t, &mut w);
            let offset = self.media.write_pointer(band);
            let n = (count - done).min(self.media.band_blocks() - offset);
            let part = tags.map(|tg| &tg[done as usize..(done + n) as usize]);
            t = self.media.write_at(t, band, offset, n, part).expect("appends stay inside the band").done;
            for i in 0..n {
                self.place(block + done + i, band, offset + i);
            }
            done += n;
        }
        w.done = t.max(now);
        Ok(w)
    }

    /// Read `count` blocks from `block`; returns when the last is read.
    pub fn read(&mut self, now: Nanos, block: u64, count: u64) -> Result<Nanos, SmrError> {
        self.check(block, count)?;
        let mut t = now;
        let bb = self.media.band_blocks();
        let mut run: Option<(u64, u64)> = None;
        for lba in block..block + count {
            let target = self.stl.get(&lba).map(|e| e.target_lba);
            match (run, target) {
                // A run continues on the next physical block of the same band.
                (Some((first, n)), Some(x)) if first + n == x && x % bb != 0 => run = Some((first, n + 1)),
                (_, next) => {
                    if let Some((first, n)) = run {
                        t = self.read_run(t, first, n);
                    }
                    run = next.map(|x| (x, 1));
                }
            }
        }
        if let Some((first, n)) = run {
            t = self.read_run(t, first, n);
        }
        Ok(t.max(now))
    }

    fn read_run(&mut self, t: Nanos, target: u64, n: u64) -> Nanos {
        let bb = self.media.band_blocks();
        let (band, offset) = ((target / bb) as u32, target % bb);
        self.media.read_at(t, band, offset, n).expect("mapped blocks lie inside their band").done
    }

    /// The tags the media holds for `count` blocks from `block` (no time passes).
    pub fn read_tags(&self, block: u64, count: u64) -> Vec<Option<u64>> {
        (block..block + count).map(|lba| self.stl.get(&lba).and_then(|e| self.media.tag(e.target_lba))).collect()
    }

    /// Unmap `count` blocks from `block`: their copies become invalid.
    pub fn trim(&mut self, block: u64, count: u64) -> Result<(), SmrError> {
        self.check(block, count)?;
        (block..block + count).for_each(|lba| self.invalidate(lba));
        Ok(())
    }

    /// Clean `victim`: read its valid blocks, write them in order from the start of the
    /// lowest free band, and free `victim`.
    pub fn clean(&mut self, now: Nanos, victim: u32) -> Result<Cleaning, SmrError> {
        if !self.media.is_shingled(victim) || victim >= self.media.bands() || self.free.contains(&victim) {
            return Err(SmrError::NotCleanable { band: victim });
        }
        let moving: Vec<(u64, u32)> = self.owner[victim as usize]
            .iter()
            .enumerate()
            .filter(|&(_, &o)| o != NONE)
            .map(|(i, &o)| (i as u64, o))
            .collect();
        let destination =
            if moving.is_empty() { None } else { Some(self.free.pop_first().ok_or(SmrError::NoFreeBand)?) };
        let mut t = now;
        let mut start = None;
        let mut tags = Vec::with_capacity(moving.len());
        let mut i = 0;
        while i < moving.len() {
            let mut j = i + 1;
            while j < moving.len() && moving[j].0 == moving[j - 1].0 + 1 {
                j += 1;
            }
            let r = self.media.read_at(t, victim, moving[i].0, (j - i) as u64).expect("inside the band");
            start.get_or_insert(r.start);
            t = r.done;
            i = j;
        }
        for &(offset, _) in &moving {
            tags.push(self.media.tag(self.media.target(victim, offset)));
        }
        if let Some(dest) = destination {
            t = self.media.write_at(t, dest, 0, moving.len() as u64, None).expect("a band holds a band").done;
            for (k, &(_, lba)) in moving.iter().enumerate() {
                self.invalidate(u64::from(lba));
                self.place(u64::from(lba), dest, k as u64);
                self.media.set_tag(self.media.target(dest, k as u64), tags[k]);
            }
            if self.band_stats(dest).free > 0 {
                self.partial.insert(dest);
            }
        }
        self.media.free(victim);
        self.owner[victim as usize] = Vec::new();
        self.valid[victim as usize] = 0;
        self.invalid[victim as usize] = 0;
        self.partial.remove(&victim);
        if self.open == Some(victim) {
            self.open = None;
        }
        self.free.insert(victim);
        let start = start.unwrap_or(now);
        Ok(Cleaning { victim, destination, moved_blocks: moving.len() as u64, start, done: t.max(now) })
    }
}

impl Device for Smr {
    /// # Panics
    /// If the operation reaches past the host's capacity.
    fn submit(&mut self, now: Nanos, op: DevOp) -> Nanos {
        let (block, count) = (op.block, u64::from(op.count));
        let r = match op.kind {
            DevOpKind::Read => self.read(now, block, count),
            DevOpKind::Write => self.write(now, block, count).map(|w| w.done),
            DevOpKind::Trim => self.trim(block, count).map(|()| now),
            DevOpKind::Flush => Ok(now.max(self.busy_until())),
        };
        r.unwrap_or_else(|e| panic!("{e}"))
    }

    fn busy_until(&self) -> Nanos {
        self.media.hdd().busy_until()
    }
}

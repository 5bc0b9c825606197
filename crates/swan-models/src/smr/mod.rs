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
    /// Time those cleanings took (the write waited for it).
    pub cleaning_ns: Nanos,
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
    #[error("cannot age the disk with {blocks} blocks of older data: it must be empty, and the host may address only {logical}")]
    CannotAge { blocks: u64, logical: u64 },
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
    /// Per band: valid blocks at its front that belong to no host address the STL maps
    /// ([`Smr::fill_foreign`]: an aged disk's older data). Counted in `valid`.
    foreign: Vec<u64>,
    valid: Vec<u64>,
    invalid: Vec<u64>,
    free: BTreeSet<u32>,
    /// Bands holding an invalid block, in band order: the only ones a cleaning frees space
    /// in, kept as blocks are invalidated and bands cleaned so that a cleaning policy need
    /// not scan every band.
    dirty: BTreeSet<u32>,
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
            foreign: vec![0; n],
            valid: vec![0; n],
            invalid: vec![0; n],
            dirty: BTreeSet::new(),
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
        let b = band as usize;
        let foreign = self.foreign[b].min(to).saturating_sub(from);
        let o = &self.owner[b];
        let (from, to) = (from.max(self.foreign[b]) as usize, (to as usize).min(o.len()));
        foreign + o.get(from..to).map_or(0, |s| s.iter().filter(|&&x| x != NONE).count() as u64)
    }

    /// Valid blocks of the disk that no host address maps to ([`Smr::fill_foreign`]).
    pub fn foreign_blocks(&self) -> u64 {
        self.foreign.iter().sum()
    }

    /// Ages an empty disk: `blocks` valid blocks of older data, which no host address the
    /// STL maps, written before time 0 in whole bands spread evenly over the shingled bands
    /// (an aged log-structured disk's free bands lie wherever cleaning left them) and one
    /// partly written band for the rest, which the host's writes then continue. The data
    /// is never invalidated (no host write reaches it), so its bands are cleaned only by
    /// choice or force, and then moved like any valid data.
    ///
    /// The host must keep its own live data within [`Smr::logical_blocks`] less `blocks`:
    /// the spare bands' guarantee of room for cleaning counts both.
    pub fn fill_foreign(&mut self, blocks: u64) -> Result<(), SmrError> {
        if self.used_bands().next().is_some() || blocks > self.logical_blocks() {
            return Err(SmrError::CannotAge { blocks, logical: self.logical_blocks() });
        }
        let bb = self.media.band_blocks();
        let first = u64::from(self.config.unshingled_bands);
        let shingled = u64::from(self.media.bands()) - first;
        let (whole, rest) = (blocks / bb, blocks % bb);
        for i in 0..whole {
            // Strictly increasing, since whole <= shingled: `whole` distinct bands.
            self.seal(first + i * shingled / whole, bb);
        }
        if rest > 0 {
            let band = *self.free.first().expect("the spare bands are free");
            self.seal(u64::from(band), rest);
            self.partial.insert(band);
        }
        Ok(())
    }

    /// Bytes the STL's tables hold, estimated from their entries: a hash entry per mapped
    /// block (8 B key + 16 B entry + ~8 B of hashing overhead) and a 4 B reverse entry per
    /// block of every band the host has written (older data needs neither).
    pub fn model_bytes(&self) -> u64 {
        let reverse = self.owner.iter().filter(|o| !o.is_empty()).count() as u64;
        self.stl.len() as u64 * 32 + reverse * self.media.band_blocks() * 4
    }

    fn seal(&mut self, band: u64, blocks: u64) {
        let b = band as u32;
        self.free.remove(&b);
        self.media.fill_untimed(b, blocks);
        self.foreign[band as usize] = blocks;
        self.valid[band as usize] = blocks;
    }

    pub fn free_bands(&self) -> usize {
        self.free.len()
    }

    /// Shingled bands holding an invalid block, in band order.
    pub fn dirty_bands(&self) -> impl Iterator<Item = u32> + '_ {
        self.dirty.iter().copied()
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
            self.dirty.insert(e.band);
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
            w.cleaning_ns += c.done - *t;
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
        let foreign = self.foreign[victim as usize];
        let owned: Vec<(u64, u32)> = self.owner[victim as usize]
            .iter()
            .enumerate()
            .filter(|&(_, &o)| o != NONE)
            .map(|(i, &o)| (i as u64, o))
            .collect();
        // Every valid offset in order: the older data at the front, then the host's.
        let offsets: Vec<u64> = (0..foreign).chain(owned.iter().map(|&(i, _)| i)).collect();
        let destination =
            if offsets.is_empty() { None } else { Some(self.free.pop_first().ok_or(SmrError::NoFreeBand)?) };
        let mut t = now;
        let mut start = None;
        let mut i = 0;
        while i < offsets.len() {
            let mut j = i + 1;
            while j < offsets.len() && offsets[j] == offsets[j - 1] + 1 {
                j += 1;
            }
            let r = self.media.read_at(t, victim, offsets[i], (j - i) as u64).expect("inside the band");
            start.get_or_insert(r.start);
            t = r.done;
            i = j;
        }
        let tags: Vec<Option<u64>> =
            owned.iter().map(|&(offset, _)| self.media.tag(self.media.target(victim, offset))).collect();
        if let Some(dest) = destination {
            t = self.media.write_at(t, dest, 0, offsets.len() as u64, None).expect("a band holds a band").done;
            self.foreign[dest as usize] = foreign;
            self.valid[dest as usize] = foreign;
            for (k, &(_, lba)) in owned.iter().enumerate() {
                let at = foreign + k as u64;
                self.invalidate(u64::from(lba));
                self.place(u64::from(lba), dest, at);
                self.media.set_tag(self.media.target(dest, at), tags[k]);
            }
            if self.band_stats(dest).free > 0 {
                self.partial.insert(dest);
            }
        }
        self.media.free(victim);
        self.owner[victim as usize] = Vec::new();
        self.foreign[victim as usize] = 0;
        self.valid[victim as usize] = 0;
        self.invalid[victim as usize] = 0;
        self.dirty.remove(&victim);
        self.partial.remove(&victim);
        if self.open == Some(victim) {
            self.open = None;
        }
        self.free.insert(victim);
        let start = start.unwrap_or(now);
        Ok(Cleaning { victim, destination, moved_blocks: offsets.len() as u64, start, done: t.max(now) })
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

//! Block-level FTL: a logical block (`pages_per_block` consecutive logical pages) maps to
//! one physical block, and a page keeps its offset inside the block. The map is tiny
//! (4 bytes per block), the price is the *merge*.
//!
//! - A write at or after the block's write pointer appends in place (cheap: NAND blocks
//!   are programmed in page order, and skipped pages simply stay erased).
//! - A write before the write pointer (overwrite or out of order) merges: a fresh block
//!   is allocated, the old block's still-valid pages around the new data are copied, the
//!   new data is programmed, and the old block is released. One merge per logical block
//!   touched by a host operation, however many of its pages that operation writes. This
//!   is the pure block-mapping scheme, without log blocks (BAST/FAST): sequential
//!   overwrites *without* TRIM merge on every operation.
//! - TRIM marks pages invalid; a block left with no valid page (e.g. a whole-block TRIM)
//!   is unmapped and released.
//! - Released blocks are erased lazily, when next allocated, and the erase is charged to
//!   the allocating write; so TRIM itself costs no die time.
//! - Host pages are striped over the units the way a superblock-based controller does:
//!   within each *superblock* of `units × pages_per_block` host pages, page `i` goes to
//!   unit `i % units`, at offset `i / units` of that unit's logical block. A sequential
//!   stream so keeps every die busy, and a TRIM of a whole superblock (SWAN's aligned
//!   segment) empties one block on every unit. The map is still one entry per block. A
//!   partial superblock at the end of the device is mapped without striping.
//! - A logical block's physical block sits on unit `lbn % units`.
//! - Copies are charged before the new data's programs: all on one unit, whose FIFO
//!   makes the order irrelevant to timing.

use super::config::SsdConfig;
use super::ftl_error::FtlInvariantError;
use super::nand::Nand;
use super::stats::SsdStats;

const NIL: u32 = u32::MAX;

#[derive(Clone)]
pub(crate) struct BlockFtl {
    pages_per_block: u32,
    units: u32,
    /// Logical block → physical block, or NIL.
    map: Vec<u32>,
    /// Next programmable offset of each physical block.
    write_ptr: Vec<u16>,
    block_unit: Vec<u16>,
    /// Released but not yet erased.
    needs_erase: Vec<bool>,
    /// Valid-page bitmap, `words_per_block` words per physical block.
    valid: Vec<u64>,
    words_per_block: usize,
    free: Vec<u32>,
    /// With payload tracking on (see [`super::Ssd::enable_payload`]): one token per
    /// physical page (`block × pages_per_block + offset`), moved with every merge copy;
    /// a page that is not valid carries 0.
    payload: Option<Vec<u64>>,
}

/// `(word index within a block, mask)` pairs covering offsets `[off, off + n)`, `n ≥ 1`.
fn word_masks(off: u32, n: u32) -> impl Iterator<Item = (usize, u64)> {
    let (first, last) = (off as usize, (off + n - 1) as usize);
    (first / 64..=last / 64).map(move |w| {
        let lo = if w == first / 64 { first % 64 } else { 0 };
        let hi = if w == last / 64 { last % 64 + 1 } else { 64 };
        let mask = if hi - lo == 64 { u64::MAX } else { ((1u64 << (hi - lo)) - 1) << lo };
        (w, mask)
    })
}

/// Splits pages `[lpn, lpn + count)` at logical-block boundaries into
/// `(logical block, first offset, pages)` runs.
fn runs(pages_per_block: u32, lpn: u64, count: u32) -> impl Iterator<Item = (usize, u32, u32)> {
    let ppb = u64::from(pages_per_block);
    let end = lpn + u64::from(count);
    let mut p = lpn;
    std::iter::from_fn(move || {
        (p < end).then(|| {
            let off = (p % ppb) as u32;
            let n = (ppb - u64::from(off)).min(end - p) as u32;
            let run = ((p / ppb) as usize, off, n);
            p += u64::from(n);
            run
        })
    })
}

impl BlockFtl {
    pub(crate) fn new(config: &SsdConfig) -> Self {
        let blocks = config.raw_blocks() as usize;
        let words_per_block = (config.pages_per_block as usize).div_ceil(64);
        Self {
            pages_per_block: config.pages_per_block,
            units: config.units(),
            map: vec![NIL; config.logical_blocks() as usize],
            write_ptr: vec![0; blocks],
            block_unit: vec![0; blocks],
            needs_erase: vec![false; blocks],
            valid: vec![0; blocks * words_per_block],
            words_per_block,
            free: (0..blocks as u32).rev().collect(),
            payload: None,
        }
    }

    /// Starts tracking one token per physical page; pages mapped before carry token 0.
    pub(crate) fn enable_payload(&mut self) {
        if self.payload.is_none() {
            self.payload = Some(vec![0; self.write_ptr.len() * self.pages_per_block as usize]);
        }
    }

    pub(crate) fn has_payload(&self) -> bool {
        self.payload.is_some()
    }

    /// Host page → page of the FTL's logical blocks (see the module comment on striping).
    fn striped(&self, lpn: u64) -> u64 {
        let (ppb, units) = (u64::from(self.pages_per_block), u64::from(self.units));
        let superblock = ppb * units;
        let striped_pages = self.map.len() as u64 / units * units * ppb;
        if lpn >= striped_pages {
            return lpn;
        }
        let (sb, i) = (lpn / superblock, lpn % superblock);
        (sb * units + i % units) * ppb + i / units
    }

    /// The physical page holding `lpn`'s current copy, if any.
    fn ppn_of(&self, lpn: u64) -> Option<usize> {
        let lpn = self.striped(lpn);
        let ppb = u64::from(self.pages_per_block);
        let (pb, off) = (self.map[(lpn / ppb) as usize], (lpn % ppb) as u32);
        (pb != NIL && self.is_valid(pb, off)).then(|| pb as usize * self.pages_per_block as usize + off as usize)
    }

    /// The token of `lpn`'s current copy, 0 if unmapped or if payload tracking is off.
    pub(crate) fn token(&self, lpn: u64) -> u64 {
        match (&self.payload, self.ppn_of(lpn)) {
            (Some(p), Some(ppn)) => p[ppn],
            _ => 0,
        }
    }

    /// Stores `token` in the physical page holding `lpn`'s current copy.
    ///
    /// # Panics
    /// If payload tracking is off or `lpn` is unmapped.
    pub(crate) fn set_token(&mut self, lpn: u64, token: u64) {
        let ppn = self.ppn_of(lpn).unwrap_or_else(|| panic!("page {lpn} is unmapped: write it first"));
        self.payload.as_mut().expect("payload tracking is off")[ppn] = token;
    }

    fn words(&self, pb: u32) -> &[u64] {
        let start = pb as usize * self.words_per_block;
        &self.valid[start..start + self.words_per_block]
    }

    fn words_mut(&mut self, pb: u32) -> &mut [u64] {
        let start = pb as usize * self.words_per_block;
        &mut self.valid[start..start + self.words_per_block]
    }

    fn count_valid(&self, pb: u32) -> u32 {
        self.words(pb).iter().map(|w| w.count_ones()).sum()
    }

    fn count_valid_in(&self, pb: u32, off: u32, n: u32) -> u32 {
        let words = self.words(pb);
        word_masks(off, n).map(|(w, m)| (words[w] & m).count_ones()).sum()
    }

    fn set_valid(&mut self, pb: u32, off: u32, n: u32) {
        let words = self.words_mut(pb);
        word_masks(off, n).for_each(|(w, m)| words[w] |= m);
    }

    fn clear_valid(&mut self, pb: u32, off: u32, n: u32) {
        let words = self.words_mut(pb);
        word_masks(off, n).for_each(|(w, m)| words[w] &= !m);
    }

    fn is_valid(&self, pb: u32, off: u32) -> bool {
        self.words(pb)[off as usize / 64] >> (off % 64) & 1 == 1
    }

    pub(crate) fn die_of(&self, lpn: u64) -> Option<u32> {
        let lpn = self.striped(lpn);
        let ppb = u64::from(self.pages_per_block);
        let pb = self.map[(lpn / ppb) as usize];
        (pb != NIL && self.is_valid(pb, (lpn % ppb) as u32)).then(|| u32::from(self.block_unit[pb as usize]))
    }

    pub(crate) fn free_blocks(&self) -> u64 {
        self.free.len() as u64
    }

    pub(crate) fn write(&mut self, lpn: u64, count: u32, nand: &mut impl Nand, stats: &mut SsdStats) {
        // Consecutive host pages sit on different units' blocks: one run per page. Pages of
        // one host operation that share a block are `units` apart and arrive in order, so
        // the second appends behind the first instead of merging again.
        for p in lpn..lpn + u64::from(count) {
            for (lbn, off, n) in runs(self.pages_per_block, self.striped(p), 1) {
                self.write_run(lbn, off, n, nand, stats);
            }
        }
    }

    /// Writes offsets `[off, off + n)` of logical block `lbn`.
    fn write_run(&mut self, lbn: usize, off: u32, n: u32, nand: &mut impl Nand, stats: &mut SsdStats) {
        let unit = lbn as u32 % self.units;
        let old = self.map[lbn];
        let target = if old == NIL {
            self.allocate(unit, nand, stats)
        } else if off >= u32::from(self.write_ptr[old as usize]) {
            old
        } else {
            // Merge: everything still valid in the old block, except what this write replaces.
            let new = self.allocate(unit, nand, stats);
            let copies = self.count_valid(old) - self.count_valid_in(old, off, n);
            nand.copy_many(u32::from(self.block_unit[old as usize]), unit, copies);
            stats.gc_pages_copied += u64::from(copies);
            stats.merges += 1;
            if let Some(mut p) = self.payload.take() {
                // The pages the merge copies: valid in the old block, not replaced by this write.
                let ppb = self.pages_per_block as usize;
                for o in (0..self.pages_per_block).filter(|&o| !(off..off + n).contains(&o) && self.is_valid(old, o)) {
                    p[new as usize * ppb + o as usize] = p[old as usize * ppb + o as usize];
                }
                self.payload = Some(p);
            }
            let (src, dst) = (old as usize * self.words_per_block, new as usize * self.words_per_block);
            self.valid.copy_within(src..src + self.words_per_block, dst);
            self.write_ptr[new as usize] = self.write_ptr[old as usize];
            self.release(old);
            new
        };
        self.map[lbn] = target;
        self.set_valid(target, off, n);
        let wp = &mut self.write_ptr[target as usize];
        *wp = (*wp).max((off + n) as u16);
        for _ in 0..n {
            nand.program(unit);
        }
    }

    /// Takes a free block for `unit`, erasing it first if it was released dirty.
    fn allocate(&mut self, unit: u32, nand: &mut impl Nand, stats: &mut SsdStats) -> u32 {
        let pb = self.free.pop().expect("no free block: SsdConfig::validate keeps one spare for merges");
        if self.needs_erase[pb as usize] {
            nand.erase(unit);
            stats.erases += 1;
            self.needs_erase[pb as usize] = false;
        }
        self.block_unit[pb as usize] = unit as u16;
        self.write_ptr[pb as usize] = 0;
        pb
    }

    /// Returns a block to the pool; it is erased when next allocated.
    fn release(&mut self, pb: u32) {
        self.words_mut(pb).fill(0);
        if let Some(p) = &mut self.payload {
            let ppb = self.pages_per_block as usize;
            p[pb as usize * ppb..(pb as usize + 1) * ppb].fill(0);
        }
        self.write_ptr[pb as usize] = 0;
        self.needs_erase[pb as usize] = true;
        self.free.push(pb);
    }

    pub(crate) fn trim(&mut self, lpn: u64, count: u32) {
        for p in lpn..lpn + u64::from(count) {
            self.trim_run(self.striped(p), 1);
        }
    }

    fn trim_run(&mut self, lpn: u64, count: u32) {
        for (lbn, off, n) in runs(self.pages_per_block, lpn, count) {
            let pb = self.map[lbn];
            if pb != NIL {
                self.clear_valid(pb, off, n);
                if let Some(p) = &mut self.payload {
                    let first = pb as usize * self.pages_per_block as usize + off as usize;
                    p[first..first + n as usize].fill(0);
                }
                if self.count_valid(pb) == 0 {
                    self.map[lbn] = NIL;
                    self.release(pb);
                }
            }
        }
    }

    /// Mapping-table DRAM a real controller needs: one 4-byte entry per logical block.
    pub(crate) fn map_dram_bytes(&self) -> u64 {
        4 * self.map.len() as u64
    }

    pub(crate) fn model_bytes(&self) -> u64 {
        let blocks = self.write_ptr.len();
        let payload = self.payload.as_ref().map_or(0, |p| 8 * p.len());
        (4 * (self.map.len() + self.free.capacity()) + 8 * self.valid.len() + blocks * (2 + 2 + 1) + payload) as u64
    }

    /// Every physical block is either free or mapped by exactly one logical block; free
    /// blocks hold no valid page; no valid page lies at or past its block's write pointer;
    /// with payload tracking on, no page that is not valid carries a token.
    pub(crate) fn check_invariants(&self) -> Result<(), FtlInvariantError> {
        if let Some(p) = &self.payload {
            let ppb = self.pages_per_block as usize;
            if let Some(ppn) =
                (0..p.len()).find(|&ppn| p[ppn] != 0 && !self.is_valid((ppn / ppb) as u32, (ppn % ppb) as u32))
            {
                return Err(FtlInvariantError::TokenOnInvalidPage { ppn, token: p[ppn] });
            }
        }
        let mut owners = vec![0u32; self.write_ptr.len()];
        for &pb in &self.free {
            owners[pb as usize] += 1;
            if self.count_valid(pb) != 0 {
                return Err(FtlInvariantError::FreeBlockValid { block: pb });
            }
        }
        for (lbn, &pb) in self.map.iter().enumerate() {
            if pb == NIL {
                continue;
            }
            owners[pb as usize] += 1;
            if self.count_valid(pb) == 0 {
                return Err(FtlInvariantError::MappedEmpty { lbn, block: pb });
            }
            let wp = u32::from(self.write_ptr[pb as usize]);
            if wp < self.pages_per_block && self.count_valid_in(pb, wp, self.pages_per_block - wp) != 0 {
                return Err(FtlInvariantError::ValidPastWritePointer { block: pb, wp });
            }
        }
        match owners.iter().position(|&o| o != 1) {
            Some(pb) => Err(FtlInvariantError::Owners { block: pb, owners: owners[pb] }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::FtlKind;
    use super::super::nand::Untimed;
    use super::super::presets;
    use super::*;

    #[test]
    fn striping_is_a_bijection_over_units() {
        let ftl = BlockFtl::new(&tiny());
        let pages = ftl.map.len() as u64 * u64::from(ftl.pages_per_block);
        let mut seen: Vec<u64> = (0..pages).map(|p| ftl.striped(p)).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..pages).collect::<Vec<_>>());
        // Consecutive host pages land on consecutive units.
        let unit = |p: u64| (ftl.striped(p) / u64::from(ftl.pages_per_block)) % u64::from(ftl.units);
        assert!(ftl.units == 1 || unit(0) != unit(1));
    }

    fn tiny() -> SsdConfig {
        SsdConfig { name: "tiny-block".into(), user_pages: 100 * 128, ftl: FtlKind::Block, ..presets::sata850pro() }
    }

    #[test]
    fn runs_split_at_block_boundaries() {
        assert_eq!(runs(8, 6, 12).collect::<Vec<_>>(), vec![(0, 6, 2), (1, 0, 8), (2, 0, 2)]);
        assert_eq!(runs(8, 3, 0).count(), 0);
    }

    #[test]
    fn word_masks_cover_exactly_the_range() {
        let bits: Vec<u32> = word_masks(60, 70)
            .flat_map(|(w, m)| (0..64).filter(move |b| m >> b & 1 == 1).map(move |b| w as u32 * 64 + b))
            .collect();
        assert_eq!(bits, (60..130).collect::<Vec<_>>());
        assert_eq!(word_masks(0, 64).collect::<Vec<_>>(), vec![(0, u64::MAX)]);
    }

    #[test]
    fn in_order_writes_append_and_overwrites_merge() {
        let c = tiny();
        let superblock = u64::from(c.units() * c.pages_per_block);
        let mut f = BlockFtl::new(&c);
        let mut s = SsdStats::default();
        // A whole superblock in two sequential halves: every unit's block appends in order.
        f.write(0, (superblock / 2) as u32, &mut Untimed, &mut s);
        f.write(superblock / 2, (superblock / 2) as u32, &mut Untimed, &mut s);
        assert_eq!((s.merges, s.gc_pages_copied), (0, 0));
        // Pages 10 and 11 sit at offset 0 of two units' blocks: each overwrite merges.
        f.write(10, 2, &mut Untimed, &mut s);
        let ppb = u64::from(c.pages_per_block);
        assert_eq!((s.merges, s.gc_pages_copied), (2, 2 * (ppb - 1)));
        f.check_invariants().unwrap();
        // The pool is a stack: the second merge already reused (and erased) the block the
        // first released, and the next allocation reuses the second's.
        f.write(superblock, 1, &mut Untimed, &mut s);
        assert_eq!(s.erases, 2);
        assert!(f.die_of(10).is_some() && f.die_of(superblock + 5).is_none());
    }

    #[test]
    fn trimming_a_whole_block_frees_it() {
        let c = tiny();
        let superblock = c.units() * c.pages_per_block;
        let mut f = BlockFtl::new(&c);
        let mut s = SsdStats::default();
        let free = f.free_blocks();
        f.write(0, superblock, &mut Untimed, &mut s);
        assert_eq!(f.free_blocks(), free - u64::from(c.units()));
        f.trim(0, 1000);
        assert_eq!(f.free_blocks(), free - u64::from(c.units()), "a partial trim keeps every block");
        assert!(f.die_of(999).is_none() && f.die_of(1000).is_some());
        f.trim(1000, superblock - 1000);
        assert_eq!(f.free_blocks(), free, "trimming the whole superblock frees a block on every unit");
        f.check_invariants().unwrap();
    }
}

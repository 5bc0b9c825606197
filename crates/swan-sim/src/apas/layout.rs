//! Where a logical block lives: the volume is striped over the disks in chunks of one band.
//!
//! Chunk `c` of the volume is on disk `c mod N`, at that disk's chunk `c div N`. A band-sized
//! chunk keeps a sequential run on one disk for as long as one band would hold it (the
//! disks' STL appends it to its open band anyway) while spreading a trace's hot regions
//! over every disk. The paper's disks are "several SWDs" with no layout given.
//!
//! The trace's block 0 sits at volume chunk `base` (a seed picks it: where a workload lies in
//! the volume is not in the paper); addresses past the volume's end wrap modulo its size.

use super::DiskLayoutError;
use crate::rng::SimRng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskLayout {
    disks: u64,
    chunk: u64,
    per_disk: u64,
    base: u64,
}

/// A run of consecutive blocks on one disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskRun {
    pub disk: usize,
    pub block: u64,
    pub count: u64,
}

impl DiskLayout {
    /// `disks` disks of `per_disk` blocks each, striped in chunks of `chunk` blocks; the
    /// trace's start placed by `seed`. `per_disk` is cut to whole chunks.
    pub fn new(disks: u32, chunk: u64, per_disk: u64, seed: u64) -> Result<Self, DiskLayoutError> {
        if disks == 0 {
            return Err(DiskLayoutError::NoDisks);
        }
        if chunk == 0 || per_disk < chunk {
            return Err(DiskLayoutError::NoChunk { per_disk, chunk });
        }
        let per_disk = per_disk / chunk * chunk;
        let chunks = u64::from(disks) * (per_disk / chunk);
        let base = SimRng::fork(seed, 0xA9A5_1A7E).below(chunks);
        Ok(DiskLayout { disks: u64::from(disks), chunk, per_disk, base })
    }

    /// Blocks in the whole volume.
    pub fn volume_blocks(&self) -> u64 {
        self.disks * self.per_disk
    }

    pub fn base_chunk(&self) -> u64 {
        self.base
    }

    pub fn chunk_blocks(&self) -> u64 {
        self.chunk
    }

    /// (disk, block on that disk) of logical block `lba`.
    pub fn place(&self, lba: u64) -> (usize, u64) {
        let v = (lba % self.volume_blocks() + self.base * self.chunk) % self.volume_blocks();
        let c = v / self.chunk;
        ((c % self.disks) as usize, (c / self.disks) * self.chunk + v % self.chunk)
    }

    /// `blocks` as runs of consecutive blocks per disk, sorted by disk and address (a destage
    /// batch is written in address order, as any write-back cache sorts it).
    pub fn sorted_runs(&self, blocks: impl IntoIterator<Item = u64>) -> Vec<DiskRun> {
        let mut placed: Vec<(usize, u64)> = blocks.into_iter().map(|b| self.place(b)).collect();
        placed.sort_unstable();
        placed.dedup();
        Self::merge(placed)
    }

    /// `blocks` as runs per disk in the order given (a read's blocks, already in order).
    pub fn runs(&self, blocks: impl IntoIterator<Item = u64>) -> Vec<DiskRun> {
        Self::merge(blocks.into_iter().map(|b| self.place(b)).collect())
    }

    fn merge(placed: Vec<(usize, u64)>) -> Vec<DiskRun> {
        let mut runs: Vec<DiskRun> = Vec::new();
        for (disk, block) in placed {
            match runs.last_mut() {
                Some(r) if r.disk == disk && r.block + r.count == block => r.count += 1,
                _ => runs.push(DiskRun { disk, block, count: 1 }),
            }
        }
        runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_base_zero(disks: u32, chunk: u64, per_disk: u64) -> DiskLayout {
        let mut l = DiskLayout::new(disks, chunk, per_disk, 0).unwrap();
        l.base = 0;
        l
    }

    #[test]
    fn chunks_go_round_the_disks() {
        let l = at_base_zero(3, 4, 12);
        assert_eq!(l.volume_blocks(), 36);
        assert_eq!(l.place(0), (0, 0));
        assert_eq!(l.place(3), (0, 3));
        assert_eq!(l.place(4), (1, 0));
        assert_eq!(l.place(11), (2, 3));
        assert_eq!(l.place(12), (0, 4), "the second row of chunks");
        assert_eq!(l.place(36), (0, 0), "wraps at the volume's end");
        // Every block of the volume lands on exactly one (disk, block).
        let mut seen: Vec<(usize, u64)> = (0..36).map(|b| l.place(b)).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 36);
        assert!(seen.iter().all(|&(d, b)| d < 3 && b < 12));
    }

    #[test]
    fn runs_merge_consecutive_blocks_of_one_disk() {
        let l = at_base_zero(2, 4, 8);
        let r = l.runs(2..7);
        assert_eq!(r, vec![DiskRun { disk: 0, block: 2, count: 2 }, DiskRun { disk: 1, block: 0, count: 3 }]);
        let s = l.sorted_runs([9, 1, 0, 8, 1]);
        assert_eq!(s, vec![DiskRun { disk: 0, block: 0, count: 2 }, DiskRun { disk: 0, block: 4, count: 2 }]);
    }

    #[test]
    fn the_seed_moves_the_trace_and_bad_layouts_are_errors() {
        let bases: Vec<u64> = (1..=5).map(|s| DiskLayout::new(4, 8, 800, s).unwrap().base_chunk()).collect();
        assert!(bases.windows(2).any(|w| w[0] != w[1]), "{bases:?}");
        assert_eq!(DiskLayout::new(0, 8, 800, 1), Err(DiskLayoutError::NoDisks));
        assert_eq!(DiskLayout::new(2, 8, 4, 1), Err(DiskLayoutError::NoChunk { per_disk: 4, chunk: 8 }));
    }
}

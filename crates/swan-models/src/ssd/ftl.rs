//! The mapping of one device: [`Ftl`] dispatches to the page-level or block-level mapping
//! once per host operation, never per page; both report their NAND work through [`Nand`].

use super::config::{FtlKind, SsdConfig};
use super::domain::Domain;
use super::ftl_block::BlockFtl;
use super::ftl_error::FtlInvariantError;
use super::ftl_page::PageFtl;
use super::nand::Nand;
use super::stats::SsdStats;

/// The mapping of one device.
#[derive(Clone)]
pub(crate) enum Ftl {
    Page(PageFtl),
    Block(BlockFtl),
}

impl Ftl {
    pub(crate) fn new(config: &SsdConfig) -> Self {
        match config.ftl {
            FtlKind::Page => Ftl::Page(PageFtl::new(config)),
            FtlKind::Block => Ftl::Block(BlockFtl::new(config)),
        }
    }

    /// Calls `read(die)` for every mapped page of `[lpn, lpn + count)`, in order.
    pub(crate) fn for_each_mapped(&self, lpn: u64, count: u32, mut read: impl FnMut(u32)) {
        match self {
            Ftl::Page(f) => (lpn..lpn + u64::from(count)).filter_map(|p| f.die_of(p)).for_each(&mut read),
            Ftl::Block(f) => (lpn..lpn + u64::from(count)).filter_map(|p| f.die_of(p)).for_each(&mut read),
        }
    }

    pub(crate) fn write(&mut self, lpn: u64, count: u32, nand: &mut impl Nand, stats: &mut SsdStats) {
        match self {
            Ftl::Page(f) => f.write(lpn, count, nand, stats),
            Ftl::Block(f) => f.write(lpn, count, nand, stats),
        }
    }

    /// Starts tracking one token per physical page, moved with the FTL's own copies.
    pub(crate) fn enable_payload(&mut self) {
        match self {
            Ftl::Page(f) => f.enable_payload(),
            Ftl::Block(f) => f.enable_payload(),
        }
    }

    pub(crate) fn has_payload(&self) -> bool {
        match self {
            Ftl::Page(f) => f.has_payload(),
            Ftl::Block(f) => f.has_payload(),
        }
    }

    /// Stores `tokens` in the pages now holding `[lpn, lpn + tokens.len())` (all mapped).
    pub(crate) fn set_tokens(&mut self, lpn: u64, tokens: &[u64]) {
        match self {
            Ftl::Page(f) => (lpn..).zip(tokens).for_each(|(p, &t)| f.set_token(p, t)),
            Ftl::Block(f) => (lpn..).zip(tokens).for_each(|(p, &t)| f.set_token(p, t)),
        }
    }

    /// Fills `out` with the tokens of `[lpn, lpn + out.len())`; 0 for unmapped pages.
    pub(crate) fn tokens(&self, lpn: u64, out: &mut [u64]) {
        match self {
            Ftl::Page(f) => (lpn..).zip(out).for_each(|(p, t)| *t = f.token(p)),
            Ftl::Block(f) => (lpn..).zip(out).for_each(|(p, t)| *t = f.token(p)),
        }
    }

    pub(crate) fn trim(&mut self, lpn: u64, count: u32) {
        match self {
            Ftl::Page(f) => f.trim(lpn, count),
            Ftl::Block(f) => f.trim(lpn, count),
        }
    }

    pub(crate) fn free_blocks(&self) -> u64 {
        match self {
            Ftl::Page(f) => f.free_blocks(),
            Ftl::Block(f) => f.free_blocks(),
        }
    }

    /// Forced GC in every GC domain ([`PageFtl::force_collect`]), each cleaning past
    /// `threshold(domain's soft limit)` free blocks; returns the victims collected. The block
    /// FTL has no GC: its blocks are released by merges and trims as they happen.
    pub(crate) fn force_collect(
        &mut self,
        threshold: impl Fn(u64) -> u64,
        max_victims: Option<u32>,
        nand: &mut impl Nand,
        stats: &mut SsdStats,
    ) -> u32 {
        match self {
            Ftl::Page(f) => (0..f.domains().len())
                .map(|d| {
                    let t = threshold(f.domains()[d].soft_limit);
                    f.force_collect(d, t, max_victims, nand, stats)
                })
                .sum(),
            Ftl::Block(_) => 0,
        }
    }

    /// The GC domains (none for the block FTL).
    pub(crate) fn domains(&self) -> &[Domain] {
        match self {
            Ftl::Page(f) => f.domains(),
            Ftl::Block(_) => &[],
        }
    }

    /// GC domains at or below their soft limit (the block FTL's whole device, if it is).
    pub(crate) fn domains_at_soft_limit(&self) -> u32 {
        match self {
            Ftl::Page(f) => f.domains_at_soft_limit(),
            Ftl::Block(_) => 0,
        }
    }

    pub(crate) fn map_dram_bytes(&self) -> u64 {
        match self {
            Ftl::Page(f) => f.map_dram_bytes(),
            Ftl::Block(f) => f.map_dram_bytes(),
        }
    }

    pub(crate) fn model_bytes(&self) -> u64 {
        match self {
            Ftl::Page(f) => f.model_bytes(),
            Ftl::Block(f) => f.model_bytes(),
        }
    }

    pub(crate) fn check_invariants(&self) -> Result<(), FtlInvariantError> {
        match self {
            Ftl::Page(f) => f.check_invariants(),
            Ftl::Block(f) => f.check_invariants(),
        }
    }
}

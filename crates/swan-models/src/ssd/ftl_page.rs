//! Page-level FTL: any logical page may live in any physical page of its GC domain. Owns
//! the L2P and P2L maps, per-block valid counts, one open (active) block per unit, and
//! greedy foreground GC; each [`Domain`] keeps its own free blocks and victims.
//!
//! - One device-wide domain ([`GcDomain::Device`]): writes stripe round-robin across all
//!   units; GC copies join the same stripe, so GC programs spread over every unit, as a real
//!   controller's parallel GC does, while a victim's reads fall on its own unit. (Copying
//!   each victim within its own unit instead piles a whole run's work onto a few dies; at
//!   QD 32 the rest then idle and random-write bandwidth halves.) A block is bound to the
//!   unit that opens it, not to a fixed die: one shared pool cannot strand a reduced-scale
//!   device with one die out of free blocks while another has spares.
//! - A domain per unit ([`GcDomain::Unit`], DiskSim's SSD extension): each unit owns an
//!   equal share of the blocks; a page goes to its unit by [`Placement`]; a unit at its low
//!   watermark cleans one victim at a time, copying inside itself (by copy-back if the
//!   config says so), so only requests that need that unit wait.
//! - Where consecutive pages go in a device-wide domain is the config's [`WriteLayout`]
//!   (the cursor is in `frontier`); with a GC frontier, GC copies fill open blocks of their
//!   own, kept beside the host's in `active` (slots `units..2 × units`).
//! - Memory: 4 bytes of L2P per logical page, 4 bytes of P2L per physical page, ~16 bytes
//!   per block: under 8 bytes per physical page for the presets.

use super::config::{GcDomain, Placement, SsdConfig, WriteLayout};
use super::domain::Domain;
use super::ftl_error::FtlInvariantError;
use super::nand::Nand;
use super::stats::SsdStats;
use swan_core::divisor::Divisor;
use swan_core::prefetch::prefetch;

/// "No page" in both maps and "no block" in `active`.
const NIL: u32 = u32::MAX;

/// What the FTL keeps per erase block.
#[derive(Clone, Copy, Default)]
struct BlockInfo {
    /// Valid pages.
    valid: u16,
    /// Unit the block was opened on (meaningless while it is free).
    unit: u16,
}

/// How many pages ahead a multi-page write or a TRIM asks for the next pages' old copies.
const PREFETCH_DISTANCE: u64 = 8;

/// How far past a write's last page its L2P entry is hinted: one 64-byte line of entries.
const L2P_LINE_AHEAD: u64 = 16;

#[derive(Clone)]
pub(crate) struct PageFtl {
    pages_per_block: u32,
    /// Logical page → physical page, or NIL if unmapped.
    l2p: Vec<u32>,
    /// Physical page → logical page whose current copy it holds, or NIL (free or stale).
    /// GC reads it to find a victim's valid pages and to update their L2P entries.
    p2l: Vec<u32>,
    /// Per erase block, side by side: an invalidation reads both, and one cache miss
    /// instead of two is most of its cost on a map far larger than the caches.
    blocks: Vec<BlockInfo>,
    /// Open block of each unit for host writes, then (with a GC frontier) of each unit for
    /// GC copies; NIL if none. Pages of an open block are written in order.
    active: Vec<u32>,
    /// Next page offset in each open block, by the same slots.
    fill: Vec<u32>,
    /// The first GC slot of `active` with a GC frontier (the unit count), else 0: GC copies
    /// then share the host's slots.
    gc_slot: usize,
    domains: Vec<Domain>,
    /// `pages_per_block`, to divide by with a multiply: every page written or invalidated
    /// asks its block.
    per_block: Divisor,
    /// Blocks each domain owns (block `b` is domain `b / domain_blocks`'s), likewise.
    per_domain: Divisor,
    placement: Placement,
    /// Striped placement: the domain that receives the next page.
    next_domain: u32,
    copy_back: bool,
    /// Domains at or below their soft limit, kept as free counts cross it.
    at_soft_limit: u32,
    /// With payload tracking on (see [`super::Ssd::enable_payload`]): one token per
    /// physical page, moved with every GC copy; a page holding no live data carries 0.
    payload: Option<Vec<u64>>,
}

impl PageFtl {
    pub(crate) fn new(config: &SsdConfig) -> Self {
        let blocks = config.raw_blocks() as usize;
        let units = config.units() as usize;
        let (n, per_units) = (config.domains(), config.domain_units());
        let domain_blocks = u32::try_from(config.domain_blocks()).expect("validated: page numbers are 32-bit");
        let limits = (
            config.gc_trigger_blocks(),
            config.gc_trigger_blocks() + u64::from(config.gc_reclaim_blocks),
            config.gc_soft_limit_blocks(),
        );
        let domains = (0..n)
            .map(|d| {
                let chunk = match config.layout {
                    WriteLayout::PageStriped => 1,
                    WriteLayout::Chunked { pages } => pages,
                };
                let (first_block, ppb) = (d * domain_blocks, config.pages_per_block);
                Domain::new(d * per_units, per_units, first_block, domain_blocks, ppb, chunk, limits)
            })
            .collect();
        let mut ftl = Self {
            pages_per_block: config.pages_per_block,
            l2p: vec![NIL; config.user_pages as usize],
            p2l: vec![NIL; config.raw_pages() as usize],
            blocks: vec![BlockInfo::default(); blocks],
            active: vec![NIL; units * config.open_blocks_per_unit() as usize],
            fill: vec![0; units * config.open_blocks_per_unit() as usize],
            gc_slot: if config.gc_frontier { units } else { 0 },
            domains,
            per_block: Divisor::new(u64::from(config.pages_per_block)),
            per_domain: Divisor::new(u64::from(domain_blocks)),
            placement: match config.gc_domain {
                GcDomain::Device => Placement::Striped,
                GcDomain::Unit => config.placement,
            },
            next_domain: 0,
            copy_back: config.copy_back,
            at_soft_limit: 0,
            payload: None,
        };
        ftl.at_soft_limit = ftl.domains.iter().filter(|d| d.free_blocks() <= d.soft_limit).count() as u32;
        ftl
    }

    /// Starts tracking one token per physical page; pages mapped before carry token 0.
    pub(crate) fn enable_payload(&mut self) {
        if self.payload.is_none() {
            self.payload = Some(vec![0; self.p2l.len()]);
        }
    }

    pub(crate) fn has_payload(&self) -> bool {
        self.payload.is_some()
    }

    /// The token of `lpn`'s current copy, 0 if unmapped or if payload tracking is off.
    pub(crate) fn token(&self, lpn: u64) -> u64 {
        match (&self.payload, self.l2p[lpn as usize]) {
            (Some(p), ppn) if ppn != NIL => p[ppn as usize],
            _ => 0,
        }
    }

    /// Stores `token` in the physical page holding `lpn`'s current copy.
    ///
    /// # Panics
    /// If payload tracking is off or `lpn` is unmapped.
    pub(crate) fn set_token(&mut self, lpn: u64, token: u64) {
        let ppn = self.l2p[lpn as usize];
        assert!(ppn != NIL, "page {lpn} is unmapped: write it before storing its token");
        self.payload.as_mut().expect("payload tracking is off")[ppn as usize] = token;
    }

    fn block_of(&self, ppn: u32) -> u32 {
        self.per_block.quotient(u64::from(ppn)) as u32
    }

    fn domain_of_block(&self, block: u32) -> usize {
        self.per_domain.quotient(u64::from(block)) as usize
    }

    fn is_open(&self, block: u32) -> bool {
        let u = usize::from(self.blocks[block as usize].unit);
        // Without a GC frontier both compare the same slot, which costs less than a branch.
        self.active[u] == block || self.active[u + self.gc_slot] == block
    }

    pub(crate) fn die_of(&self, lpn: u64) -> Option<u32> {
        let ppn = self.l2p[lpn as usize];
        (ppn != NIL).then(|| u32::from(self.blocks[self.block_of(ppn) as usize].unit))
    }

    pub(crate) fn free_blocks(&self) -> u64 {
        self.domains.iter().map(Domain::free_blocks).sum()
    }

    pub(crate) fn domains(&self) -> &[Domain] {
        &self.domains
    }

    /// Domains at or below their soft limit.
    pub(crate) fn domains_at_soft_limit(&self) -> u32 {
        self.at_soft_limit
    }

    /// The domain that receives a write of `lpn`.
    fn domain_for(&mut self, lpn: u64) -> usize {
        let n = self.domains.len() as u32;
        if n == 1 {
            return 0;
        }
        match self.placement {
            Placement::Static => (lpn % u64::from(n)) as usize,
            Placement::Striped => {
                let d = self.next_domain;
                self.next_domain = if d + 1 == n { 0 } else { d + 1 };
                d as usize
            }
        }
    }

    /// Writes one host page. If its domain's free blocks are at the trigger level,
    /// foreground GC runs there first, and its NAND work is reported before the page's own
    /// program, so the page (and everything queued behind it on those units) waits for it.
    pub(crate) fn write_page(&mut self, lpn: u64, nand: &mut impl Nand, stats: &mut SsdStats) {
        // Invalidate first, so GC never copies the version this write is replacing.
        self.invalidate(lpn);
        let d = self.domain_for(lpn);
        if self.domains[d].free_blocks() <= self.domains[d].trigger {
            stats.gc_invocations += 1;
            let target = self.domains[d].reclaim_to;
            self.collect_until(d, target, nand, stats);
        }
        let unit = self.domains[d].next_unit();
        let ppn = self.place(lpn as u32, unit, 0, d);
        self.l2p[lpn as usize] = ppn;
        nand.program(unit);
    }

    /// Writes `count` host pages from `lpn` ([`PageFtl::write_page`] each).
    pub(crate) fn write(&mut self, lpn: u64, count: u32, nand: &mut impl Nand, stats: &mut SsdStats) {
        let end = lpn + u64::from(count);
        // A log-structured array writes each member in short sequential runs, interleaved
        // with other members' and the trims': too sparse for the hardware's stream
        // detection, so the L2P line a few writes on is asked for here.
        if let Some(e) = self.l2p.get((end + L2P_LINE_AHEAD) as usize) {
            prefetch(e);
        }
        for p in lpn..end {
            self.prefetch_old_copy(p + PREFETCH_DISTANCE, end);
            self.write_page(p, nand, stats);
        }
    }

    pub(crate) fn trim(&mut self, lpn: u64, count: u32) {
        let end = lpn + u64::from(count);
        for p in lpn..end {
            self.prefetch_old_copy(p + PREFETCH_DISTANCE, end);
            self.invalidate(p);
        }
    }

    /// Warms the cache for what invalidating `lpn` (if below `end`) will touch: its old
    /// copy's P2L entry, its block and the block's victim links, all scattered over maps
    /// far larger than the caches. The L2P entries of a run are sequential and need no hint.
    fn prefetch_old_copy(&self, lpn: u64, end: u64) {
        if lpn >= end {
            return;
        }
        let ppn = self.l2p[lpn as usize];
        if ppn == NIL {
            return;
        }
        prefetch(&self.p2l[ppn as usize]);
        let block = self.block_of(ppn);
        prefetch(&self.blocks[block as usize]);
        self.domains[self.domain_of_block(block)].prefetch(block);
    }

    /// Marks the current copy of `lpn` stale and unmaps it.
    fn invalidate(&mut self, lpn: u64) {
        let ppn = self.l2p[lpn as usize];
        if ppn == NIL {
            return;
        }
        self.l2p[lpn as usize] = NIL;
        debug_assert_eq!(self.p2l[ppn as usize] as u64, lpn, "P2L of page {ppn} names another logical page");
        self.p2l[ppn as usize] = NIL;
        if let Some(p) = &mut self.payload {
            p[ppn as usize] = 0;
        }
        let block = self.block_of(ppn);
        let v = self.blocks[block as usize].valid;
        debug_assert!(v > 0, "block {block} valid count underflow");
        self.blocks[block as usize].valid = v - 1;
        if !self.is_open(block) {
            let d = self.domain_of_block(block);
            self.domains[d].invalidated(block, u32::from(v));
        }
    }

    /// Takes an erased block from domain `d`, counting a crossing of its soft limit.
    fn take_free(&mut self, d: usize) -> u32 {
        let dom = &mut self.domains[d];
        let block = dom.take_free();
        if dom.free_blocks() == dom.soft_limit {
            self.at_soft_limit += 1;
        }
        block
    }

    /// Returns an erased block to domain `d`, counting a crossing of its soft limit.
    fn give_free(&mut self, d: usize, block: u32) {
        let dom = &mut self.domains[d];
        dom.give_free(block);
        if dom.free_blocks() == dom.soft_limit + 1 {
            self.at_soft_limit -= 1;
        }
    }

    /// Takes the next page of `unit`'s open block (in domain `d`) for `lpn`, opening a block
    /// from the domain's free pool if needed and closing it (making it a GC candidate) once
    /// full. `slot` is 0 for the host's open blocks, `gc_slot` for GC's. Returns the physical
    /// page; the caller sets L2P.
    fn place(&mut self, lpn: u32, unit: u32, slot: usize, d: usize) -> u32 {
        let u = unit as usize + slot;
        let mut block = self.active[u];
        if block == NIL {
            block = self.take_free(d);
            self.blocks[block as usize].unit = unit as u16;
            self.active[u] = block;
            self.fill[u] = 0;
        }
        let offset = self.fill[u];
        let ppn = block * self.pages_per_block + offset;
        debug_assert_eq!(self.p2l[ppn as usize], NIL, "page {ppn} programmed twice without an erase");
        self.p2l[ppn as usize] = lpn;
        self.blocks[block as usize].valid += 1;
        if offset + 1 == self.pages_per_block {
            self.active[u] = NIL;
            self.domains[d].close(block, u32::from(self.blocks[block as usize].valid));
        } else {
            self.fill[u] = offset + 1;
        }
        ppn
    }

    /// Greedy GC in domain `d` until `target_free` of its blocks are free or no closed block
    /// has an invalid page left; returns whether any victim was collected.
    pub(crate) fn collect_until(
        &mut self,
        d: usize,
        target_free: u64,
        nand: &mut impl Nand,
        stats: &mut SsdStats,
    ) -> bool {
        let mut collected = false;
        while self.domains[d].free_blocks() < target_free && self.collect_one(d, nand, stats) {
            collected = true;
        }
        collected
    }

    /// Forced GC in domain `d` (Harmonia's FORCE GC reaching one of an SSD's elements): at
    /// least one victim if any has an invalid page, then on while its free blocks are at
    /// most `threshold`, up to `max_victims`. Returns the victims collected.
    pub(crate) fn force_collect(
        &mut self,
        d: usize,
        threshold: u64,
        max_victims: Option<u32>,
        nand: &mut impl Nand,
        stats: &mut SsdStats,
    ) -> u32 {
        let mut n = 0;
        while max_victims.is_none_or(|m| n < m)
            && (n == 0 || self.domains[d].free_blocks() <= threshold)
            && self.collect_one(d, nand, stats)
        {
            n += 1;
        }
        n
    }

    /// Copies the valid pages of domain `d`'s block with the fewest out and erases it: each
    /// read on the victim's unit, programmed on the domain's next unit (or, by copy-back,
    /// on the victim's own), into the GC frontier's open blocks if there is one. A block
    /// with no valid pages costs only the erase. Returns false if no block would gain
    /// anything.
    fn collect_one(&mut self, d: usize, nand: &mut impl Nand, stats: &mut SsdStats) -> bool {
        let Some((victim, valid)) = self.domains[d].take_victim(self.pages_per_block) else {
            return false;
        };
        let victim_unit = u32::from(self.blocks[victim as usize].unit);
        let base = victim * self.pages_per_block;
        let mut left = valid;
        let mut ppn = base;
        let end = base + self.pages_per_block;
        while left > 0 {
            // The moved pages' L2P entries are scattered: ask for one a few pages on.
            let ahead = ppn + PREFETCH_DISTANCE as u32;
            if ahead < end && self.p2l[ahead as usize] != NIL {
                prefetch(&self.l2p[self.p2l[ahead as usize] as usize]);
            }
            let lpn = self.p2l[ppn as usize];
            if lpn != NIL {
                self.p2l[ppn as usize] = NIL;
                let unit = if self.copy_back {
                    victim_unit
                } else if self.gc_slot != 0 {
                    self.domains[d].next_gc_unit()
                } else {
                    self.domains[d].next_unit()
                };
                let to = self.place(lpn, unit, self.gc_slot, d);
                self.l2p[lpn as usize] = to;
                if let Some(p) = &mut self.payload {
                    p[to as usize] = p[ppn as usize];
                }
                if self.copy_back {
                    nand.copy_back(unit);
                } else {
                    nand.copy(victim_unit, unit);
                }
                left -= 1;
            }
            ppn += 1;
        }
        stats.gc_pages_copied += u64::from(valid);
        self.blocks[victim as usize].valid = 0;
        if let Some(p) = &mut self.payload {
            p[base as usize..(base + self.pages_per_block) as usize].fill(0);
        }
        nand.erase(victim_unit);
        stats.erases += 1;
        self.give_free(d, victim);
        true
    }

    /// Mapping-table DRAM a real controller needs: one 4-byte entry per logical page.
    pub(crate) fn map_dram_bytes(&self) -> u64 {
        4 * self.l2p.len() as u64
    }

    /// Host memory this model uses for the device.
    pub(crate) fn model_bytes(&self) -> u64 {
        let u32s = self.l2p.len() + self.p2l.len() + self.active.len() + self.fill.len();
        let per_block = std::mem::size_of::<BlockInfo>();
        let payload = self.payload.as_ref().map_or(0, |p| 8 * p.len());
        let domains: u64 = self.domains.iter().map(Domain::heap_bytes).sum();
        (4 * u32s + per_block * self.blocks.len() + payload) as u64 + domains
    }

    /// Every mapped logical page maps to a physical page whose P2L points back; valid
    /// counts match P2L; every block is exactly one of free, open or bucketed by its count,
    /// in its own domain; the soft-limit count is right; with payload tracking on, no page
    /// outside a live mapping carries a token.
    pub(crate) fn check_invariants(&self) -> Result<(), FtlInvariantError> {
        if let Some(p) = &self.payload {
            if let Some(ppn) = (0..p.len()).find(|&ppn| self.p2l[ppn] == NIL && p[ppn] != 0) {
                return Err(FtlInvariantError::TokenOnDeadPage { ppn, token: p[ppn] });
            }
        }
        for (lpn, &ppn) in self.l2p.iter().enumerate() {
            if ppn != NIL && self.p2l[ppn as usize] as usize != lpn {
                return Err(FtlInvariantError::L2pNotP2l { lpn, ppn, p2l: self.p2l[ppn as usize] });
            }
        }
        let ppb = self.pages_per_block as usize;
        // Bit flags: 1 free, 2 open, 4 closed; a block must carry exactly one.
        let mut state = vec![0u8; self.blocks.len()];
        let mut at_soft = 0;
        for (d, dom) in self.domains.iter().enumerate() {
            at_soft += u32::from(dom.free_blocks() <= dom.soft_limit);
            let mine = |b: u32| self.domain_of_block(b) == d;
            for &b in dom.free_list() {
                if !mine(b) {
                    return Err(FtlInvariantError::FreeInOtherDomain { block: b, domain: d });
                }
                state[b as usize] |= 1;
            }
            for v in 0..=self.pages_per_block {
                for b in dom.bucket(v) {
                    if !mine(b) {
                        return Err(FtlInvariantError::ClosedInOtherDomain { block: b, domain: d });
                    }
                    if u32::from(self.blocks[b as usize].valid) != v {
                        let valid = self.blocks[b as usize].valid;
                        return Err(FtlInvariantError::WrongBucket { block: b, bucket: v, valid });
                    }
                    state[b as usize] |= 4;
                }
            }
            let units = dom.first_unit()..dom.first_unit() + dom.units();
            for u in units.clone() {
                for slot in [u as usize, u as usize + self.gc_slot] {
                    let b = self.active[slot];
                    if b != NIL && !mine(b) {
                        return Err(FtlInvariantError::OpenInOtherDomain { unit: u, block: b, domain: d });
                    }
                    if b != NIL && u32::from(self.blocks[b as usize].unit) != u {
                        let opened_on = u32::from(self.blocks[b as usize].unit);
                        return Err(FtlInvariantError::OpenOnOtherUnit { unit: u, block: b, opened_on });
                    }
                }
            }
        }
        if at_soft != self.at_soft_limit {
            return Err(FtlInvariantError::SoftLimitCount { at_soft, counted: self.at_soft_limit });
        }
        for &b in self.active.iter().filter(|&&b| b != NIL) {
            if state[b as usize] & 2 != 0 {
                return Err(FtlInvariantError::OpenTwice { block: b });
            }
            state[b as usize] |= 2;
        }
        for (b, pages) in self.p2l.chunks(ppb).enumerate() {
            let mut live = 0;
            for (off, &lpn) in pages.iter().enumerate() {
                if lpn != NIL {
                    live += 1;
                    let ppn = (b * ppb + off) as u32;
                    if self.l2p[lpn as usize] != ppn {
                        return Err(FtlInvariantError::P2lNotL2p { ppn, lpn, l2p: self.l2p[lpn as usize] });
                    }
                }
            }
            if live != usize::from(self.blocks[b].valid) {
                return Err(FtlInvariantError::LiveCount { block: b, count: self.blocks[b].valid, live });
            }
            match state[b] {
                1 if live != 0 => return Err(FtlInvariantError::FreeBlockLive { block: b, live }),
                1 | 2 | 4 => {}
                s => return Err(FtlInvariantError::StateFlags { block: b, flags: s }),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::FtlKind;
    use super::super::nand::Untimed;
    use super::super::presets;
    use super::*;

    /// A small device: 4 units, 32-page blocks, 4096 user pages, 15 % spare.
    pub(crate) fn tiny() -> SsdConfig {
        SsdConfig {
            name: "tiny".into(),
            user_pages: 4096,
            pages_per_block: 32,
            channels: 2,
            dies_per_channel: 2,
            planes_per_die: 1,
            over_provisioning: 0.15,
            gc_threshold: 0.05,
            gc_soft_limit: 0.1,
            ftl: FtlKind::Page,
            ..presets::sata850pro()
        }
    }

    #[test]
    fn overwrites_invalidate_and_gc_reclaims() {
        let c = tiny();
        c.validate().unwrap();
        let mut f = PageFtl::new(&c);
        let mut stats = SsdStats::default();
        for round in 0..5 {
            for lpn in 0..c.user_pages {
                f.write_page(lpn, &mut Untimed, &mut stats);
            }
            f.check_invariants().unwrap_or_else(|e| panic!("round {round}: {e}"));
        }
        assert!(stats.gc_invocations > 0);
        // Sequential overwrites leave whole blocks stale: GC only erases.
        assert_eq!(stats.gc_pages_copied, 0);
        assert!(stats.erases > 0);
    }

    #[test]
    fn the_map_stays_consistent_under_a_long_random_mix() {
        let c = tiny();
        let mut f = PageFtl::new(&c);
        let mut stats = SsdStats::default();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in 0..200_000 {
            let x = swan_testkit::rng::xorshift64(&mut x);
            let lpn = x % c.user_pages;
            let n = (1 + (x >> 40) % 8).min(c.user_pages - lpn) as u32;
            if (x >> 20) % 10 == 9 {
                f.trim(lpn, n);
            } else {
                for p in lpn..lpn + u64::from(n) {
                    f.write_page(p, &mut Untimed, &mut stats);
                }
            }
            if i % 20_000 == 0 {
                f.check_invariants().unwrap_or_else(|e| panic!("op {i}: {e}"));
            }
        }
        f.check_invariants().unwrap();
        assert!(stats.gc_pages_copied > 0, "random overwrites must make GC copy");
    }
}

#[cfg(test)]
#[path = "ftl_page_layout_tests.rs"]
mod layout_tests;

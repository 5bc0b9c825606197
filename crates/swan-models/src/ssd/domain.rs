//! A GC domain: the part of an SSD that keeps its own free blocks, watermarks and greedy
//! victims (the whole device, or one unit, per [`super::config::GcDomain`]). It owns a
//! contiguous range of erase blocks and of units; the page FTL asks it for a fresh block on
//! one of its units, tells it when a closed block loses a valid page, and asks it for the
//! next victim. It knows nothing of logical pages or time.

use super::frontier::Cursor;
use super::victim::VictimBuckets;

#[derive(Clone)]
pub(crate) struct Domain {
    /// The units it writes to: `first_unit..first_unit + units`.
    first_unit: u32,
    units: u32,
    /// The erase blocks it owns: `first_block..first_block + blocks`.
    first_block: u32,
    /// Erased blocks, used as a stack.
    free: Vec<u32>,
    /// Closed blocks by valid count, indexed from `first_block`.
    victims: VictimBuckets,
    /// Where its next host page goes (and its next GC copy, without a GC frontier).
    host: Cursor,
    /// Where its next GC copy goes with a GC frontier: page by page over its units.
    gc: Cursor,
    /// Foreground GC runs before a write when free blocks are at or below this (the low
    /// watermark, the hard limit)...
    pub(crate) trigger: u64,
    /// ...until this many blocks are free.
    pub(crate) reclaim_to: u64,
    /// At or below this many free blocks the domain is at its soft limit.
    pub(crate) soft_limit: u64,
}

impl Domain {
    /// A domain of `blocks` erased blocks from `first_block` and `units` units from
    /// `first_unit`, host writes going `chunk` pages to a unit.
    pub(crate) fn new(
        first_unit: u32,
        units: u32,
        first_block: u32,
        blocks: u32,
        pages_per_block: u32,
        chunk: u32,
        limits: (u64, u64, u64),
    ) -> Self {
        let (trigger, reclaim_to, soft_limit) = limits;
        Self {
            first_unit,
            units,
            first_block,
            // Reversed so blocks are handed out in ascending order: deterministic and easy to read.
            free: (first_block..first_block + blocks).rev().collect(),
            victims: VictimBuckets::new(blocks as usize, pages_per_block),
            host: Cursor::new(first_unit, units, chunk),
            gc: Cursor::new(first_unit, units, 1),
            trigger,
            reclaim_to,
            soft_limit,
        }
    }

    pub(crate) fn free_blocks(&self) -> u64 {
        self.free.len() as u64
    }

    pub(crate) fn first_unit(&self) -> u32 {
        self.first_unit
    }

    pub(crate) fn units(&self) -> u32 {
        self.units
    }

    /// The unit that receives this domain's next host page (or GC copy, without a GC frontier).
    #[inline]
    pub(crate) fn next_unit(&mut self) -> u32 {
        self.host.next()
    }

    /// The unit that receives this domain's next GC copy with a GC frontier.
    #[inline]
    pub(crate) fn next_gc_unit(&mut self) -> u32 {
        self.gc.next()
    }

    /// An erased block to open.
    ///
    /// # Panics
    /// If none is left: the config's validation keeps a GC reserve so it never happens.
    pub(crate) fn take_free(&mut self) -> u32 {
        self.free.pop().expect("free pool exhausted: SsdConfig::validate should keep a GC reserve")
    }

    pub(crate) fn give_free(&mut self, block: u32) {
        self.free.push(block);
    }

    pub(crate) fn close(&mut self, block: u32, valid: u32) {
        self.victims.insert(block - self.first_block, valid);
    }

    /// A closed block had `valid` valid pages and now has one fewer.
    pub(crate) fn invalidated(&mut self, block: u32, valid: u32) {
        self.victims.decrement(block - self.first_block, valid);
    }

    /// The closed block with the fewest valid pages, if collecting it would gain anything;
    /// taken out of the victims.
    pub(crate) fn take_victim(&mut self, pages_per_block: u32) -> Option<(u32, u32)> {
        let (local, valid) = self.victims.peek_min()?;
        if valid == pages_per_block {
            return None;
        }
        self.victims.remove(local, valid);
        Some((local + self.first_block, valid))
    }

    /// Warms the cache for `block`'s victim links ([`swan_core::prefetch`]).
    pub(crate) fn prefetch(&self, block: u32) {
        self.victims.prefetch(block.wrapping_sub(self.first_block));
    }

    /// Free blocks (for consistency checks).
    pub(crate) fn free_list(&self) -> &[u32] {
        &self.free
    }

    /// Closed blocks with `valid` valid pages (for consistency checks; allocates).
    pub(crate) fn bucket(&self, valid: u32) -> Vec<u32> {
        self.victims.bucket(valid).into_iter().map(|b| b + self.first_block).collect()
    }

    pub(crate) fn heap_bytes(&self) -> u64 {
        4 * self.free.capacity() as u64 + self.victims.heap_bytes()
    }
}

//! Greedy victim selection: closed blocks bucketed by valid-page count, so the block with
//! the fewest valid pages is found in O(1) amortised instead of by a scan over all blocks.
//!
//! Each bucket is an intrusive doubly linked list threaded through two `Vec<u32>` indexed
//! by block number, so moving a block between buckets when one of its pages is invalidated
//! costs a handful of stores and never allocates. The owner keeps the valid counts; every
//! call says which bucket the block is in.

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Links {
    prev: u32,
    next: u32,
}

#[derive(Clone)]
pub(crate) struct VictimBuckets {
    /// First block of each bucket, indexed by valid count `0..=pages_per_block`.
    head: Vec<u32>,
    /// Each block's previous and next block in its bucket, side by side so that unlinking
    /// a block costs one cache miss, not two.
    links: Vec<Links>,
    /// No bucket below this one is non-empty. Lowered on insert, raised lazily on search:
    /// it only ever rises while scanning, and each invalidation lowers it by at most one.
    lowest: usize,
}

impl VictimBuckets {
    pub(crate) fn new(blocks: usize, pages_per_block: u32) -> Self {
        Self {
            head: vec![NIL; pages_per_block as usize + 1],
            links: vec![Links { prev: NIL, next: NIL }; blocks],
            lowest: pages_per_block as usize + 1,
        }
    }

    pub(crate) fn insert(&mut self, block: u32, valid: u32) {
        let v = valid as usize;
        let first = self.head[v];
        self.links[block as usize] = Links { prev: NIL, next: first };
        if first != NIL {
            self.links[first as usize].prev = block;
        }
        self.head[v] = block;
        self.lowest = self.lowest.min(v);
    }

    pub(crate) fn remove(&mut self, block: u32, valid: u32) {
        let Links { prev: p, next: n } = self.links[block as usize];
        if p == NIL {
            self.head[valid as usize] = n;
        } else {
            self.links[p as usize].next = n;
        }
        if n != NIL {
            self.links[n as usize].prev = p;
        }
    }

    /// The block had `valid` valid pages and now has one fewer.
    pub(crate) fn decrement(&mut self, block: u32, valid: u32) {
        self.remove(block, valid);
        self.insert(block, valid - 1);
    }

    /// The closed block with the fewest valid pages, and that count; it stays in its bucket.
    pub(crate) fn peek_min(&mut self) -> Option<(u32, u32)> {
        while self.lowest < self.head.len() {
            let b = self.head[self.lowest];
            if b != NIL {
                return Some((b, self.lowest as u32));
            }
            self.lowest += 1;
        }
        None
    }

    /// Warms the cache for `block`'s links (a block outside the domain: nothing).
    pub(crate) fn prefetch(&self, block: u32) {
        if let Some(l) = self.links.get(block as usize) {
            swan_core::prefetch::prefetch(l);
        }
    }

    pub(crate) fn heap_bytes(&self) -> u64 {
        (4 * self.head.len() + std::mem::size_of::<Links>() * self.links.len()) as u64
    }

    /// Blocks in the bucket of `valid` valid pages (for consistency checks; allocates).
    pub(crate) fn bucket(&self, valid: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut b = self.head[valid as usize];
        while b != NIL {
            out.push(b);
            b = self.links[b as usize].next;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_emptiest_block_comes_first() {
        let mut v = VictimBuckets::new(10, 8);
        v.insert(3, 5);
        v.insert(4, 2);
        v.insert(7, 8);
        assert_eq!(v.peek_min(), Some((4, 2)));
        v.remove(4, 2);
        assert_eq!(v.peek_min(), Some((3, 5)));
        v.decrement(7, 8);
        v.decrement(7, 7);
        v.decrement(7, 6);
        v.decrement(7, 5);
        assert_eq!(v.peek_min(), Some((7, 4)));
        v.remove(7, 4);
        v.remove(3, 5);
        assert_eq!(v.peek_min(), None);
    }

    #[test]
    fn removing_from_the_middle_keeps_the_list_linked() {
        let mut v = VictimBuckets::new(5, 4);
        for b in 0..5 {
            v.insert(b, 1);
        }
        v.remove(2, 1);
        let mut left = v.bucket(1);
        left.sort_unstable();
        assert_eq!(left, vec![0, 1, 3, 4]);
    }
}

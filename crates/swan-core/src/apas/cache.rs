//! The partitioned SSD cache: per application, an LRU read cache of clean blocks and a
//! write-back write cache of dirty blocks, sized by [`Cpp`](super::Cpp).
//!
//! §III-A: the SSD cache "is shared by applications"; CPP divides it into a read cache and a
//! write cache, each divided per application. The paper names no replacement policy: each
//! partition here is LRU (the common choice, and what HWSR's comparison in §IV implies Apas
//! improves on by sizing, not by replacement). Writes are absorbed by the writer's write
//! cache and reach the shingled disk only when evicted (**destaged**), least recently
//! written first; reads that miss are filled into the reader's read cache.
//!
//! One copy per block: the cache is keyed by logical block, and a block sits in at most one
//! partition. A write invalidates a clean copy in any read cache and takes over a dirty copy
//! in another application's write cache (the new data supersedes it, nothing is destaged);
//! a read hits wherever the block is. So no partition ever holds data older than another's,
//! and a block's newest data is in the cache or, once destaged, on the disk.
//!
//! The cache holds a caller's tag per block (what the data is; the simulator can pass 0) and
//! does no I/O: it says which blocks to destage, and the driver writes them to the SMR model.

use super::cpp::Partition;
use super::AppId;
use std::collections::HashMap;

/// What a read of one block found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// In the cache, with its tag; no disk access.
    Hit { tag: u64 },
    /// Not cached: read it from the disk, then [`ApasCache::fill`] it.
    Miss,
}

/// What a write of one block did.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct WriteOutcome {
    /// The block was already dirty in a write cache (its old data is never destaged).
    pub hit: bool,
    /// Dirty blocks evicted to make room, `(block, tag)`, oldest first: write them to the disk.
    pub destage: Vec<(u64, u64)>,
}

const NONE: u32 = u32::MAX;

/// Read (clean) or write (dirty) partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Read,
    Write,
}

#[derive(Clone, Debug)]
struct Node {
    block: u64,
    tag: u64,
    list: u32,
    prev: u32,
    next: u32,
}

/// One partition: an LRU list (head = most recent) and its capacity.
#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
    len: u64,
    cap: u64,
}

/// The partitioned cache. Lists are numbered `2 × app` (read) and `2 × app + 1` (write).
#[derive(Clone, Debug)]
pub struct ApasCache {
    nodes: Vec<Node>,
    free_nodes: Vec<u32>,
    lists: Vec<List>,
    index: HashMap<u64, u32>,
}

fn list_of(app: AppId, kind: Kind) -> u32 {
    2 * app + u32::from(kind == Kind::Write)
}

impl ApasCache {
    /// An empty cache partitioned as `partition` says.
    pub fn new(partition: &Partition) -> Self {
        let lists = partition
            .apps
            .iter()
            .flat_map(|a| [a.read_blocks, a.write_blocks])
            .map(|cap| List { head: NONE, tail: NONE, len: 0, cap })
            .collect();
        ApasCache { nodes: Vec::new(), free_nodes: Vec::new(), lists, index: HashMap::new() }
    }

    pub fn apps(&self) -> usize {
        self.lists.len() / 2
    }

    /// Blocks held by `app`: (read cache, write cache).
    pub fn occupancy(&self, app: AppId) -> (u64, u64) {
        (self.lists[list_of(app, Kind::Read) as usize].len, self.lists[list_of(app, Kind::Write) as usize].len)
    }

    /// Dirty blocks in all write caches.
    pub fn dirty_blocks(&self) -> u64 {
        self.lists.iter().skip(1).step_by(2).map(|l| l.len).sum()
    }

    /// Whether `block` is cached, and if so dirty (`Some(true)`) or clean.
    pub fn is_dirty(&self, block: u64) -> Option<bool> {
        self.index.get(&block).map(|&n| self.nodes[n as usize].list % 2 == 1)
    }

    /// A read of `block` by `app` (a hit moves the block to the front of its partition).
    pub fn read(&mut self, app: AppId, block: u64) -> ReadOutcome {
        self.check_app(app);
        match self.index.get(&block) {
            Some(&n) => {
                let list = self.nodes[n as usize].list;
                self.unlink(n);
                self.push_front(list, n);
                ReadOutcome::Hit { tag: self.nodes[n as usize].tag }
            }
            None => ReadOutcome::Miss,
        }
    }

    /// After a read miss: `block`, read from the disk with `tag`, into `app`'s read cache (its
    /// least recently used clean block is dropped if full). Does nothing if the block was
    /// cached meanwhile (a write since the miss has newer data) or the partition is empty.
    pub fn fill(&mut self, app: AppId, block: u64, tag: u64) {
        self.check_app(app);
        let list = list_of(app, Kind::Read);
        if self.index.contains_key(&block) || self.lists[list as usize].cap == 0 {
            return;
        }
        let mut dropped = Vec::new();
        self.make_room(list, 1, &mut dropped);
        debug_assert!(dropped.is_empty(), "a read cache holds no dirty block");
        let n = self.alloc(block, tag, list);
        self.push_front(list, n);
    }

    /// A write of `block` with `tag` by `app`: into `app`'s write cache (through to the disk,
    /// in `destage`, if that partition has no room at all; CPP never sizes one so).
    pub fn write(&mut self, app: AppId, block: u64, tag: u64) -> WriteOutcome {
        self.check_app(app);
        let list = list_of(app, Kind::Write);
        let mut out = WriteOutcome::default();
        if let Some(n) = self.index.remove(&block) {
            // A clean copy anywhere, or a dirty one in another write cache: superseded.
            out.hit = self.nodes[n as usize].list % 2 == 1;
            self.unlink(n);
            self.free_nodes.push(n);
        }
        if self.lists[list as usize].cap == 0 {
            // No write cache at all: the write goes through to the disk.
            out.destage.push((block, tag));
            return out;
        }
        self.make_room(list, 1, &mut out.destage);
        let n = self.alloc(block, tag, list);
        self.push_front(list, n);
        out
    }

    /// Re-sizes every partition (CPP's new partition); partitions over their new size give
    /// up their least recently used blocks: the dirty ones are returned, oldest first, to be
    /// destaged, the clean ones dropped.
    ///
    /// # Panics
    /// If `partition` has another number of applications.
    pub fn resize(&mut self, partition: &Partition) -> Vec<(u64, u64)> {
        assert_eq!(partition.apps.len(), self.apps(), "a partition for another number of applications");
        let mut destage = Vec::new();
        for (app, p) in partition.apps.iter().enumerate() {
            for (kind, cap) in [(Kind::Read, p.read_blocks), (Kind::Write, p.write_blocks)] {
                let list = list_of(app as AppId, kind);
                self.lists[list as usize].cap = cap;
                self.make_room(list, 0, &mut destage);
            }
        }
        destage
    }

    /// Empties every write cache: its dirty blocks, oldest first per application, to be
    /// destaged (at the end of a run).
    pub fn flush(&mut self) -> Vec<(u64, u64)> {
        let mut destage = Vec::new();
        for app in 0..self.apps() as AppId {
            let list = list_of(app, Kind::Write);
            while self.lists[list as usize].len > 0 {
                destage.push(self.evict_tail(list));
            }
        }
        destage
    }

    fn check_app(&self, app: AppId) {
        assert!((app as usize) < self.apps(), "application {app} out of range (the cache has {})", self.apps());
    }

    /// Evicts from `list` until `extra` more blocks fit; dirty evictions go to `destage`.
    fn make_room(&mut self, list: u32, extra: u64, destage: &mut Vec<(u64, u64)>) {
        while self.lists[list as usize].len + extra > self.lists[list as usize].cap && self.lists[list as usize].len > 0
        {
            let (block, tag) = self.evict_tail(list);
            if list % 2 == 1 {
                destage.push((block, tag));
            }
        }
    }

    fn evict_tail(&mut self, list: u32) -> (u64, u64) {
        let n = self.lists[list as usize].tail;
        self.unlink(n);
        let Node { block, tag, .. } = self.nodes[n as usize];
        self.index.remove(&block);
        self.free_nodes.push(n);
        (block, tag)
    }

    fn alloc(&mut self, block: u64, tag: u64, list: u32) -> u32 {
        let node = Node { block, tag, list, prev: NONE, next: NONE };
        let n = match self.free_nodes.pop() {
            Some(n) => {
                self.nodes[n as usize] = node;
                n
            }
            None => {
                self.nodes.push(node);
                u32::try_from(self.nodes.len() - 1).expect("fewer than 2^32 cached blocks")
            }
        };
        self.index.insert(block, n);
        n
    }

    fn push_front(&mut self, list: u32, n: u32) {
        let l = &mut self.lists[list as usize];
        let old = l.head;
        l.head = n;
        if old == NONE {
            l.tail = n;
        }
        l.len += 1;
        let node = &mut self.nodes[n as usize];
        (node.list, node.prev, node.next) = (list, NONE, old);
        if old != NONE {
            self.nodes[old as usize].prev = n;
        }
    }

    fn unlink(&mut self, n: u32) {
        let Node { list, prev, next, .. } = self.nodes[n as usize];
        let l = &mut self.lists[list as usize];
        l.len -= 1;
        if prev == NONE {
            l.head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NONE {
            l.tail = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;

//! The segment table: each segment's state, valid-block count and sequence number, and
//! per-R-group *buckets* of sealed segments by valid count, so greedy victim selection
//! ("the segment that has the least number of valid blocks", §3.4) never scans every
//! segment.
//!
//! Every user write kills an old copy somewhere, so `remove_valid` runs once per written
//! block against a segment picked at random: its cost matters far more than the victim
//! choice, which runs once per thousands of writes. Hence:
//!
//! - **One record per segment.** A segment's valid count, list links, state and R-group are
//!   one 16-byte, 16-aligned `Seg`, so a write touches one cache line of the table
//!   (parallel `Vec`s cost one line each — several misses per write at full scale, where the
//!   table has ~1 M segments). The seal sequence, cold, lives apart.
//! - **Coarse buckets, not one per valid count.** Sealed segments are linked into intrusive
//!   doubly linked lists by `valid >> bucket_shift`, at most [`MAX_BUCKETS`] buckets per
//!   R-group (`bucket_shift` is the least that fits `payload_slots`, so small segments keep
//!   one bucket per count). A block
//!   death relinks its segment only when the count crosses a bucket boundary — once per
//!   `2^bucket_shift` deaths — instead of on every death (an unlink and a link, touching the
//!   neighbours' records and the bucket head). A bit mask per R-group says which buckets are
//!   non-empty.
//! - **The greedy minimum, kept exactly.** Each R-group caches its minimum sealed segment
//!   under the order (valid count, segment number). A death can only lower one segment's
//!   key, so keeping the cache is one comparison against a record that stays hot; only when
//!   the minimum itself leaves (chosen as victim) or gains a block is it recomputed, by a
//!   scan of the lowest non-empty bucket. So `min_valid` is O(1) and exactly greedy, with ties
//!   to the lowest-numbered segment — deterministic, independent of list order.
//!
//! [`SegmentTable::lowest_valid`] (cost-benefit's candidates) walks the buckets upward,
//! sorting each bucket it takes by (valid count, segment number).

use thiserror::Error;

/// The life of a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegState {
    /// Holds nothing; may be opened.
    Free,
    /// Being filled by user writes (front-end) or by GC.
    Open,
    /// Full and summarised; a GC candidate.
    Sealed,
    /// Chosen as a GC victim; its valid blocks are being moved out.
    Victim,
}

const NIL: u32 = u32::MAX;

/// An invariant of the segment table that [`SegmentTable::check_buckets`] found broken; each
/// names the segment, R-group or bucket it found it at.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SegmentTableError {
    #[error("bucket tables sized wrongly")]
    TablesSized,
    #[error("{buckets} buckets of shift {shift} for {slots} slots")]
    BucketShape { buckets: u32, shift: u32, slots: u32 },
    #[error("non-empty mask of group {group} wrong at bucket {bucket}")]
    NonEmptyMask { group: usize, bucket: u32 },
    #[error("segment {segment} linked twice (a cycle?)")]
    LinkedTwice { segment: u32 },
    #[error("segment {segment} in a bucket but {state:?}")]
    BucketedUnsealed { segment: u32, state: SegState },
    #[error("segment {segment} (valid {valid}) in the wrong bucket")]
    WrongBucket { segment: u32, valid: u32 },
    #[error("segment {segment} has a broken back link")]
    BrokenBackLink { segment: u32 },
    #[error("non-empty mask has bits beyond the last bucket")]
    MaskBeyondLastBucket,
    #[error("segment {segment} records group {group} wrongly")]
    WrongGroup { segment: usize, group: u16 },
    #[error("segment {segment} counts {valid} valid blocks")]
    TooManyValid { segment: usize, valid: u32 },
    #[error("segment {segment} is {state:?} but linked={linked}")]
    LinkedState { segment: usize, state: SegState, linked: bool },
    #[error("unlinked segment {segment} keeps links")]
    StaleLinks { segment: usize },
    #[error("greedy minimum per group is {min:?}, cached {cached:?}")]
    GreedyMinimum { min: Vec<u32>, cached: Vec<u32> },
    #[error("segment {segment} in free list of group {group} is {state:?}")]
    FreeListed { segment: u32, group: usize, state: SegState },
    #[error("free list and free states disagree")]
    FreeCount,
    #[error("total valid count drifted")]
    TotalValid,
}

/// Buckets per R-group at most: one bit each in a `u64` mask.
pub const MAX_BUCKETS: u32 = 64;

/// A segment's hot fields, together (see the module comment).
#[derive(Clone, Copy, Debug)]
#[repr(align(16))]
struct Seg {
    valid: u32,
    /// Neighbours in the bucket list (sealed segments only).
    prev: u32,
    next: u32,
    state: SegState,
    group: u16,
}

const _: () = assert!(std::mem::size_of::<Seg>() == 16);

#[derive(Clone, Debug)]
pub struct SegmentTable {
    segments_per_group: u64,
    payload_slots: u32,
    /// A sealed segment lies in bucket `valid >> bucket_shift`.
    bucket_shift: u32,
    /// Buckets per R-group: `(payload_slots >> bucket_shift) + 1`, at most [`MAX_BUCKETS`].
    buckets: u32,
    segs: Vec<Seg>,
    /// Order in which segments were sealed (0 = never): the "age" for cost-benefit.
    seq: Vec<u64>,
    /// heads[group * buckets + bucket]
    heads: Vec<u32>,
    /// Per R-group, bit `b` set iff bucket `b` is non-empty.
    nonempty: Vec<u64>,
    /// Per R-group, the sealed segment least in (valid count, segment number), or NIL.
    min: Vec<u32>,
    /// Free segments of each group, as a stack (LIFO keeps reuse local; any order is correct).
    free: Vec<Vec<u32>>,
    total_valid: u64,
}

impl SegmentTable {
    pub fn new(groups: u32, segments_per_group: u64, payload_slots: u32) -> Self {
        let n = groups as usize * segments_per_group as usize;
        assert!(n < NIL as usize, "too many segments for 32-bit links");
        assert!(groups <= u32::from(u16::MAX) + 1, "too many R-groups for 16-bit group numbers");
        let mut bucket_shift = 0;
        while payload_slots >> bucket_shift >= MAX_BUCKETS {
            bucket_shift += 1;
        }
        let buckets = (payload_slots >> bucket_shift) + 1;
        let free = (0..groups)
            .map(|g| {
                let first = u64::from(g) * segments_per_group;
                // Reverse so segments are handed out in ascending order.
                (first..first + segments_per_group).rev().map(|s| s as u32).collect()
            })
            .collect();
        let segs = (0..n)
            .map(|i| Seg {
                valid: 0,
                prev: NIL,
                next: NIL,
                state: SegState::Free,
                group: (i as u64 / segments_per_group) as u16,
            })
            .collect();
        Self {
            segments_per_group,
            payload_slots,
            bucket_shift,
            buckets,
            segs,
            seq: vec![0; n],
            heads: vec![NIL; groups as usize * buckets as usize],
            nonempty: vec![0; groups as usize],
            min: vec![NIL; groups as usize],
            free,
            total_valid: 0,
        }
    }

    pub fn len(&self) -> u64 {
        self.segs.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    pub fn groups(&self) -> u32 {
        self.free.len() as u32
    }

    pub fn state(&self, seg: u64) -> SegState {
        self.segs[seg as usize].state
    }

    pub fn valid(&self, seg: u64) -> u32 {
        self.segs[seg as usize].valid
    }

    pub fn seq(&self, seg: u64) -> u64 {
        self.seq[seg as usize]
    }

    pub fn total_valid(&self) -> u64 {
        self.total_valid
    }

    pub fn free_count(&self, group: u32) -> u64 {
        self.free[group as usize].len() as u64
    }

    pub fn free_total(&self) -> u64 {
        self.free.iter().map(|f| f.len() as u64).sum()
    }

    /// Valid blocks per bucket (the buckets' width).
    pub fn bucket_width(&self) -> u32 {
        1 << self.bucket_shift
    }

    fn group_of(&self, seg: u64) -> usize {
        (seg / self.segments_per_group) as usize
    }

    fn bucket_of(&self, valid: u32) -> u32 {
        valid >> self.bucket_shift
    }

    /// Push `seg` onto the front of bucket `bucket` of its R-group.
    fn link(&mut self, seg: u32, bucket: u32) {
        let group = self.segs[seg as usize].group as usize;
        let h = group * self.buckets as usize + bucket as usize;
        let old = self.heads[h];
        let e = &mut self.segs[seg as usize];
        e.next = old;
        e.prev = NIL;
        if old != NIL {
            self.segs[old as usize].prev = seg;
        }
        self.heads[h] = seg;
        self.nonempty[group] |= 1 << bucket;
    }

    /// Take `seg` out of bucket `bucket` of its R-group.
    fn unlink(&mut self, seg: u32, bucket: u32) {
        let Seg { prev: p, next: n, group, .. } = self.segs[seg as usize];
        let group = group as usize;
        if p != NIL {
            self.segs[p as usize].next = n;
        } else {
            let h = group * self.buckets as usize + bucket as usize;
            debug_assert_eq!(self.heads[h], seg);
            self.heads[h] = n;
            if n == NIL {
                self.nonempty[group] &= !(1 << bucket);
            }
        }
        if n != NIL {
            self.segs[n as usize].prev = p;
        }
        let e = &mut self.segs[seg as usize];
        e.next = NIL;
        e.prev = NIL;
    }

    /// Whether sealed `a` precedes sealed `b` in greedy order: fewer valid blocks, then the
    /// lower segment number.
    #[inline]
    fn greedier(&self, a: u32, b: u32) -> bool {
        (self.segs[a as usize].valid, a) < (self.segs[b as usize].valid, b)
    }

    /// `seg`'s key fell or `seg` just joined its R-group's candidates: it may be the new minimum.
    #[inline]
    fn offer_min(&mut self, seg: u32, group: usize) {
        let m = self.min[group];
        if m == NIL || (m != seg && self.greedier(seg, m)) {
            self.min[group] = seg;
        }
    }

    /// Recompute `group`'s minimum: the least sealed segment of its lowest non-empty bucket.
    fn recompute_min(&mut self, group: usize) {
        let mask = self.nonempty[group];
        if mask == 0 {
            self.min[group] = NIL;
            return;
        }
        let bucket = mask.trailing_zeros() as usize;
        let mut best = self.heads[group * self.buckets as usize + bucket];
        let mut s = self.segs[best as usize].next;
        while s != NIL {
            if self.greedier(s, best) {
                best = s;
            }
            s = self.segs[s as usize].next;
        }
        self.min[group] = best;
    }

    /// Take a free segment of `group` and mark it open.
    pub fn open(&mut self, group: u32) -> Option<u64> {
        let seg = u64::from(self.free[group as usize].pop()?);
        let e = &mut self.segs[seg as usize];
        debug_assert_eq!(e.state, SegState::Free);
        debug_assert_eq!(e.valid, 0);
        e.state = SegState::Open;
        Some(seg)
    }

    /// Mark a specific free segment open, when rebuilding a table from a map. The free
    /// lists are stale until [`SegmentTable::rebuild_free`].
    pub fn take(&mut self, seg: u64) {
        let e = &mut self.segs[seg as usize];
        assert_eq!(e.state, SegState::Free, "segment {seg} taken twice");
        e.state = SegState::Open;
    }

    /// Recompute the free lists from the segments' states (after [`SegmentTable::take`]).
    pub fn rebuild_free(&mut self) {
        for (g, list) in self.free.iter_mut().enumerate() {
            let first = g as u64 * self.segments_per_group;
            list.clear();
            list.extend(
                (first..first + self.segments_per_group)
                    .rev()
                    .filter(|&s| self.segs[s as usize].state == SegState::Free)
                    .map(|s| s as u32),
            );
        }
    }

    /// An open segment is full: it becomes a GC candidate, aged by `seq`.
    pub fn seal(&mut self, seg: u64, seq: u64) {
        let e = &mut self.segs[seg as usize];
        debug_assert_eq!(e.state, SegState::Open);
        e.state = SegState::Sealed;
        let (valid, group) = (e.valid, e.group as usize);
        self.seq[seg as usize] = seq;
        self.link(seg as u32, self.bucket_of(valid));
        self.offer_min(seg as u32, group);
    }

    /// A sealed segment adopted without a seal (sequence 0) gets its summary now: it is
    /// aged from `seq` on, as if it had been sealed then.
    pub fn seal_adopted(&mut self, seg: u64, seq: u64) {
        debug_assert_eq!(self.segs[seg as usize].state, SegState::Sealed);
        assert_eq!(self.seq[seg as usize], 0, "segment {seg} is sealed already");
        self.seq[seg as usize] = seq;
    }

    /// A sealed segment was chosen as a GC victim.
    pub fn mark_victim(&mut self, seg: u64) {
        let e = self.segs[seg as usize];
        debug_assert_eq!(e.state, SegState::Sealed);
        self.unlink(seg as u32, self.bucket_of(e.valid));
        self.segs[seg as usize].state = SegState::Victim;
        if self.min[e.group as usize] == seg as u32 {
            self.recompute_min(e.group as usize);
        }
    }

    /// A victim has been emptied: it returns to the free pool.
    pub fn release(&mut self, seg: u64) {
        let e = &mut self.segs[seg as usize];
        debug_assert_eq!(e.state, SegState::Victim);
        assert_eq!(e.valid, 0, "segment {seg} freed while holding live blocks");
        e.state = SegState::Free;
        let group = e.group as usize;
        self.seq[seg as usize] = 0;
        self.free[group].push(seg as u32);
    }

    pub fn add_valid(&mut self, seg: u64) {
        let e = &mut self.segs[seg as usize];
        let old = e.valid;
        e.valid = old + 1;
        debug_assert!(e.valid <= self.payload_slots);
        self.total_valid += 1;
        if e.state == SegState::Sealed {
            let group = e.group as usize;
            let (from, to) = (self.bucket_of(old), self.bucket_of(old + 1));
            if from != to {
                self.unlink(seg as u32, from);
                self.link(seg as u32, to);
            }
            if self.min[group] == seg as u32 {
                self.recompute_min(group);
            }
        }
    }

    /// Warms the cache for `seg`'s record ([`crate::prefetch`]): a write's
    /// [`SegmentTable::remove_valid`] lands on a segment picked at random.
    #[inline]
    pub fn prefetch(&self, seg: u64) {
        if let Some(e) = self.segs.get(seg as usize) {
            crate::prefetch::prefetch(e);
        }
    }

    /// One of `seg`'s blocks died: the hot path (once per user write that overwrites).
    #[inline]
    pub fn remove_valid(&mut self, seg: u64) {
        let e = &mut self.segs[seg as usize];
        let old = e.valid;
        debug_assert!(old > 0, "segment {seg} valid count underflow");
        debug_assert!(e.state != SegState::Free, "a block died in free segment {seg}");
        e.valid = old - 1;
        self.total_valid -= 1;
        if e.state == SegState::Sealed {
            let group = e.group as usize;
            let (from, to) = (self.bucket_of(old), self.bucket_of(old - 1));
            if from != to {
                self.unlink(seg as u32, from);
                self.link(seg as u32, to);
            }
            self.offer_min(seg as u32, group);
        }
    }

    /// The sealed segment of `group` with the fewest valid blocks (greedy), if any; ties go
    /// to the lowest-numbered segment.
    pub fn min_valid(&self, group: u32) -> Option<u64> {
        let m = self.min[group as usize];
        (m != NIL).then_some(u64::from(m))
    }

    /// Sealed segments of `group` in ascending (valid count, segment number), at most
    /// `limit` of them.
    pub fn lowest_valid(&self, group: u32, limit: usize, out: &mut Vec<u64>) {
        out.clear();
        let mut mask = self.nonempty[group as usize];
        while mask != 0 && out.len() < limit {
            let bucket = mask.trailing_zeros();
            mask &= mask - 1;
            let start = out.len();
            let mut s = self.heads[group as usize * self.buckets as usize + bucket as usize];
            while s != NIL {
                out.push(u64::from(s));
                s = self.segs[s as usize].next;
            }
            out[start..].sort_unstable_by_key(|&s| (self.segs[s as usize].valid, s));
        }
        out.truncate(limit);
    }

    /// Recount everything from scratch and compare (for tests; O(segments)).
    pub fn check_buckets(&self) -> Result<(), SegmentTableError> {
        let groups = self.free.len();
        let buckets = self.buckets as usize;
        if self.heads.len() != groups * buckets || self.nonempty.len() != groups || self.min.len() != groups {
            return Err(SegmentTableError::TablesSized);
        }
        if self.buckets > MAX_BUCKETS || self.bucket_of(self.payload_slots) != self.buckets - 1 {
            return Err(SegmentTableError::BucketShape {
                buckets: self.buckets,
                shift: self.bucket_shift,
                slots: self.payload_slots,
            });
        }
        let mut linked = vec![false; self.segs.len()];
        for (h, &head) in self.heads.iter().enumerate() {
            let (group, bucket) = (h / buckets, (h % buckets) as u32);
            if (head != NIL) != (self.nonempty[group] & (1 << bucket) != 0) {
                return Err(SegmentTableError::NonEmptyMask { group, bucket });
            }
            let mut s = head;
            let mut prev = NIL;
            while s != NIL {
                let i = s as usize;
                if linked[i] {
                    return Err(SegmentTableError::LinkedTwice { segment: s });
                }
                let e = &self.segs[i];
                if e.state != SegState::Sealed {
                    return Err(SegmentTableError::BucketedUnsealed { segment: s, state: e.state });
                }
                if self.bucket_of(e.valid) != bucket || self.group_of(u64::from(s)) != group {
                    return Err(SegmentTableError::WrongBucket { segment: s, valid: e.valid });
                }
                if e.prev != prev {
                    return Err(SegmentTableError::BrokenBackLink { segment: s });
                }
                linked[i] = true;
                prev = s;
                s = e.next;
            }
        }
        if self.buckets < 64 && self.nonempty.iter().any(|&m| m >> self.buckets != 0) {
            return Err(SegmentTableError::MaskBeyondLastBucket);
        }
        let mut min = vec![NIL; groups];
        for (i, e) in self.segs.iter().enumerate() {
            if usize::from(e.group) != self.group_of(i as u64) {
                return Err(SegmentTableError::WrongGroup { segment: i, group: e.group });
            }
            if e.valid > self.payload_slots {
                return Err(SegmentTableError::TooManyValid { segment: i, valid: e.valid });
            }
            if (e.state == SegState::Sealed) != linked[i] {
                return Err(SegmentTableError::LinkedState { segment: i, state: e.state, linked: linked[i] });
            }
            if e.state != SegState::Sealed && (e.prev != NIL || e.next != NIL) {
                return Err(SegmentTableError::StaleLinks { segment: i });
            }
            let g = usize::from(e.group);
            if e.state == SegState::Sealed && (min[g] == NIL || self.greedier(i as u32, min[g])) {
                min[g] = i as u32;
            }
        }
        if min != self.min {
            return Err(SegmentTableError::GreedyMinimum { min, cached: self.min.clone() });
        }
        for (g, f) in self.free.iter().enumerate() {
            for &s in f {
                if self.segs[s as usize].state != SegState::Free || self.group_of(u64::from(s)) != g {
                    return Err(SegmentTableError::FreeListed {
                        segment: s,
                        group: g,
                        state: self.segs[s as usize].state,
                    });
                }
            }
        }
        let free_states = self.segs.iter().filter(|e| e.state == SegState::Free).count();
        if free_states != self.free.iter().map(Vec::len).sum::<usize>() {
            return Err(SegmentTableError::FreeCount);
        }
        if self.segs.iter().map(|e| u64::from(e.valid)).sum::<u64>() != self.total_valid {
            return Err(SegmentTableError::TotalValid);
        }
        Ok(())
    }

    /// Memory used, for the bytes-per-block accounting.
    pub fn heap_bytes(&self) -> u64 {
        let n = self.segs.len() as u64;
        let per_group = self.buckets as u64 * 4 + 8 + 4;
        n * (std::mem::size_of::<Seg>() as u64 + 8) + self.free.len() as u64 * per_group + n * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_xoshiro::rand_core::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn greedy_finds_the_emptiest_sealed_segment() {
        let mut t = SegmentTable::new(2, 4, 8);
        let a = t.open(0).unwrap();
        let b = t.open(0).unwrap();
        for _ in 0..5 {
            t.add_valid(a);
        }
        for _ in 0..3 {
            t.add_valid(b);
        }
        assert_eq!(t.min_valid(0), None, "open segments are not candidates");
        t.seal(a, 1);
        t.seal(b, 2);
        assert_eq!(t.min_valid(0), Some(b));
        for _ in 0..3 {
            t.remove_valid(a);
        }
        assert_eq!(t.min_valid(0), Some(a));
        assert_eq!(t.min_valid(1), None);
        t.check_buckets().unwrap();
        t.mark_victim(a);
        assert_eq!(t.min_valid(0), Some(b));
        t.remove_valid(a);
        t.remove_valid(a);
        t.release(a);
        assert_eq!(t.free_count(0), 3);
        t.check_buckets().unwrap();
        let mut out = Vec::new();
        t.lowest_valid(0, 10, &mut out);
        assert_eq!(out, vec![b]);
    }

    #[test]
    fn buckets_cover_the_payload_in_at_most_64() {
        for (slots, width, buckets) in
            [(8, 1, 9), (63, 1, 64), (64, 2, 33), (4094, 64, 64), (4095, 64, 64), (4096, 128, 33)]
        {
            let t = SegmentTable::new(1, 1, slots);
            assert_eq!((t.bucket_width(), t.buckets), (width, buckets), "{slots} slots");
            t.check_buckets().unwrap();
        }
    }

    #[test]
    fn greedy_is_exact_within_a_bucket_and_ties_go_to_the_lowest_number() {
        let mut t = SegmentTable::new(1, 6, 1000); // buckets 16 blocks wide
        assert_eq!(t.bucket_width(), 16);
        let segs: Vec<u64> = (0..5).map(|_| t.open(0).unwrap()).collect();
        for (&s, v) in segs.iter().zip([40, 37, 35, 35, 47]) {
            for _ in 0..v {
                t.add_valid(s);
            }
            t.seal(s, s + 1);
        }
        // 32..47 is one bucket: the minimum is still exact, ties to the lower number.
        assert_eq!(t.min_valid(0), Some(segs[2]));
        let mut out = Vec::new();
        t.lowest_valid(0, 3, &mut out);
        assert_eq!(out, vec![segs[2], segs[3], segs[1]]);
        t.remove_valid(segs[3]);
        assert_eq!(t.min_valid(0), Some(segs[3]));
        t.add_valid(segs[3]);
        t.add_valid(segs[3]);
        assert_eq!(t.min_valid(0), Some(segs[2]));
        t.mark_victim(segs[2]);
        assert_eq!(t.min_valid(0), Some(segs[3]));
        t.check_buckets().unwrap();
        t.lowest_valid(0, 10, &mut out);
        assert_eq!(out, vec![segs[3], segs[1], segs[0], segs[4]]);
    }

    /// Random operations against a brute-force model, over bucket widths 1 to 64.
    #[test]
    fn bucketed_table_matches_brute_force() {
        for (slots, seed) in [(7u32, 1u64), (100, 2), (333, 3), (4095, 4)] {
            let (groups, per_group) = (3u32, 20u64);
            let mut t = SegmentTable::new(groups, per_group, slots);
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut seq = 0;
            let mut out = Vec::new();
            for step in 0..40_000u32 {
                let seg = rng.next_u64() % t.len();
                let group = (seg / per_group) as u32;
                match (t.state(seg), rng.next_u32() % 8) {
                    (SegState::Free, _) => {
                        t.open(group);
                    }
                    (SegState::Open, 0) => {
                        seq += 1;
                        t.seal(seg, seq);
                    }
                    (SegState::Open, _) if t.valid(seg) < slots => {
                        for _ in 0..=rng.next_u32() % slots.div_ceil(4) {
                            if t.valid(seg) < slots {
                                t.add_valid(seg);
                            }
                        }
                    }
                    (SegState::Sealed, 0) => t.mark_victim(seg),
                    (SegState::Sealed, 1) if t.valid(seg) < slots => t.add_valid(seg),
                    (SegState::Sealed | SegState::Victim, _) if t.valid(seg) > 0 => t.remove_valid(seg),
                    (SegState::Victim, _) => t.release(seg),
                    _ => {}
                }
                for g in 0..groups {
                    let mut sealed: Vec<(u32, u64)> = (0..t.len())
                        .filter(|&s| s / per_group == u64::from(g) && t.state(s) == SegState::Sealed)
                        .map(|s| (t.valid(s), s))
                        .collect();
                    sealed.sort_unstable();
                    assert_eq!(t.min_valid(g), sealed.first().map(|&(_, s)| s), "slots {slots} step {step}");
                    let limit = (step % 7) as usize;
                    t.lowest_valid(g, limit, &mut out);
                    let want: Vec<u64> = sealed.iter().take(limit).map(|&(_, s)| s).collect();
                    assert_eq!(out, want, "slots {slots} step {step}");
                }
                if step % 97 == 0 {
                    t.check_buckets().unwrap();
                }
            }
            t.check_buckets().unwrap();
        }
    }

    #[test]
    #[should_panic(expected = "holding live blocks")]
    fn refuses_to_free_live_data() {
        let mut t = SegmentTable::new(1, 2, 8);
        let a = t.open(0).unwrap();
        t.add_valid(a);
        t.seal(a, 1);
        t.mark_victim(a);
        t.release(a);
    }
}

//! The segment table: each segment's state, valid-block count and sequence number, and
//! per-R-group *buckets* of sealed segments by valid count, so greedy victim selection
//! ("the segment that has the least number of valid blocks", §3.4) is a short scan of
//! bucket heads instead of a scan of every segment.
//!
//! Buckets are intrusive doubly linked lists threaded through two `Vec<u32>`, so moving a
//! segment between buckets when one of its blocks dies is O(1) and allocation-free.

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

#[derive(Clone, Debug)]
pub struct SegmentTable {
    segments_per_group: u64,
    payload_slots: u32,
    state: Vec<SegState>,
    valid: Vec<u32>,
    /// Order in which segments were sealed (0 = never): the "age" for cost-benefit.
    seq: Vec<u64>,
    next: Vec<u32>,
    prev: Vec<u32>,
    /// heads[group * (payload_slots + 1) + valid]
    heads: Vec<u32>,
    /// Free segments of each group, as a stack (LIFO keeps reuse local; any order is correct).
    free: Vec<Vec<u32>>,
    total_valid: u64,
}

impl SegmentTable {
    pub fn new(groups: u32, segments_per_group: u64, payload_slots: u32) -> Self {
        let n = groups as usize * segments_per_group as usize;
        assert!(n < NIL as usize, "too many segments for 32-bit links");
        let free = (0..groups)
            .map(|g| {
                let first = u64::from(g) * segments_per_group;
                // Reverse so segments are handed out in ascending order.
                (first..first + segments_per_group).rev().map(|s| s as u32).collect()
            })
            .collect();
        Self {
            segments_per_group,
            payload_slots,
            state: vec![SegState::Free; n],
            valid: vec![0; n],
            seq: vec![0; n],
            next: vec![NIL; n],
            prev: vec![NIL; n],
            heads: vec![NIL; groups as usize * (payload_slots as usize + 1)],
            free,
            total_valid: 0,
        }
    }

    pub fn len(&self) -> u64 {
        self.state.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.state.is_empty()
    }

    pub fn groups(&self) -> u32 {
        self.free.len() as u32
    }

    pub fn state(&self, seg: u64) -> SegState {
        self.state[seg as usize]
    }

    pub fn valid(&self, seg: u64) -> u32 {
        self.valid[seg as usize]
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

    fn group_of(&self, seg: u64) -> usize {
        (seg / self.segments_per_group) as usize
    }

    fn head_index(&self, seg: u64, valid: u32) -> usize {
        self.group_of(seg) * (self.payload_slots as usize + 1) + valid as usize
    }

    fn link(&mut self, seg: u64) {
        let h = self.head_index(seg, self.valid[seg as usize]);
        let s = seg as u32;
        let old = self.heads[h];
        self.next[seg as usize] = old;
        self.prev[seg as usize] = NIL;
        if old != NIL {
            self.prev[old as usize] = s;
        }
        self.heads[h] = s;
    }

    fn unlink(&mut self, seg: u64) {
        let (p, n) = (self.prev[seg as usize], self.next[seg as usize]);
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            let h = self.head_index(seg, self.valid[seg as usize]);
            debug_assert_eq!(self.heads[h], seg as u32);
            self.heads[h] = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        }
        self.next[seg as usize] = NIL;
        self.prev[seg as usize] = NIL;
    }

    /// Take a free segment of `group` and mark it open.
    pub fn open(&mut self, group: u32) -> Option<u64> {
        let seg = u64::from(self.free[group as usize].pop()?);
        debug_assert_eq!(self.state[seg as usize], SegState::Free);
        debug_assert_eq!(self.valid[seg as usize], 0);
        self.state[seg as usize] = SegState::Open;
        Some(seg)
    }

    /// An open segment is full: it becomes a GC candidate, aged by `seq`.
    pub fn seal(&mut self, seg: u64, seq: u64) {
        debug_assert_eq!(self.state[seg as usize], SegState::Open);
        self.state[seg as usize] = SegState::Sealed;
        self.seq[seg as usize] = seq;
        self.link(seg);
    }

    /// A sealed segment was chosen as a GC victim.
    pub fn mark_victim(&mut self, seg: u64) {
        debug_assert_eq!(self.state[seg as usize], SegState::Sealed);
        self.unlink(seg);
        self.state[seg as usize] = SegState::Victim;
    }

    /// A victim has been emptied: it returns to the free pool.
    pub fn release(&mut self, seg: u64) {
        debug_assert_eq!(self.state[seg as usize], SegState::Victim);
        assert_eq!(self.valid[seg as usize], 0, "segment {seg} freed while holding live blocks");
        self.state[seg as usize] = SegState::Free;
        self.seq[seg as usize] = 0;
        let g = self.group_of(seg);
        self.free[g].push(seg as u32);
    }

    pub fn add_valid(&mut self, seg: u64) {
        let sealed = self.state[seg as usize] == SegState::Sealed;
        if sealed {
            self.unlink(seg);
        }
        self.valid[seg as usize] += 1;
        debug_assert!(self.valid[seg as usize] <= self.payload_slots);
        self.total_valid += 1;
        if sealed {
            self.link(seg);
        }
    }

    pub fn remove_valid(&mut self, seg: u64) {
        let sealed = self.state[seg as usize] == SegState::Sealed;
        if sealed {
            self.unlink(seg);
        }
        debug_assert!(self.valid[seg as usize] > 0, "segment {seg} valid count underflow");
        self.valid[seg as usize] -= 1;
        self.total_valid -= 1;
        if sealed {
            self.link(seg);
        }
    }

    /// The sealed segment of `group` with the fewest valid blocks (greedy), if any.
    pub fn min_valid(&self, group: u32) -> Option<u64> {
        let base = group as usize * (self.payload_slots as usize + 1);
        self.heads[base..base + self.payload_slots as usize + 1].iter().find(|&&h| h != NIL).map(|&h| u64::from(h))
    }

    /// Sealed segments of `group` in ascending valid count, at most `limit` of them.
    pub fn lowest_valid(&self, group: u32, limit: usize, out: &mut Vec<u64>) {
        out.clear();
        let base = group as usize * (self.payload_slots as usize + 1);
        for v in 0..=self.payload_slots as usize {
            let mut s = self.heads[base + v];
            while s != NIL {
                if out.len() == limit {
                    return;
                }
                out.push(u64::from(s));
                s = self.next[s as usize];
            }
        }
    }

    /// Recount everything from scratch and compare (for tests; O(segments)).
    pub fn check_buckets(&self) -> Result<(), String> {
        let mut linked = vec![false; self.state.len()];
        for (h, &head) in self.heads.iter().enumerate() {
            let valid = (h % (self.payload_slots as usize + 1)) as u32;
            let group = h / (self.payload_slots as usize + 1);
            let mut s = head;
            let mut prev = NIL;
            while s != NIL {
                let i = s as usize;
                if self.state[i] != SegState::Sealed {
                    return Err(format!("segment {s} in a bucket but {:?}", self.state[i]));
                }
                if self.valid[i] != valid || self.group_of(u64::from(s)) != group {
                    return Err(format!("segment {s} in the wrong bucket"));
                }
                if self.prev[i] != prev {
                    return Err(format!("segment {s} has a broken back link"));
                }
                linked[i] = true;
                prev = s;
                s = self.next[i];
            }
        }
        for (i, st) in self.state.iter().enumerate() {
            if (*st == SegState::Sealed) != linked[i] {
                return Err(format!("segment {i} is {st:?} but linked={}", linked[i]));
            }
        }
        for (g, f) in self.free.iter().enumerate() {
            for &s in f {
                if self.state[s as usize] != SegState::Free || self.group_of(u64::from(s)) != g {
                    return Err(format!("segment {s} in free list of group {g} is {:?}", self.state[s as usize]));
                }
            }
        }
        let free_states = self.state.iter().filter(|s| **s == SegState::Free).count();
        if free_states != self.free.iter().map(Vec::len).sum::<usize>() {
            return Err("free list and free states disagree".into());
        }
        if self.valid.iter().map(|&v| u64::from(v)).sum::<u64>() != self.total_valid {
            return Err("total valid count drifted".into());
        }
        Ok(())
    }

    /// Memory used, for the bytes-per-block accounting.
    pub fn heap_bytes(&self) -> u64 {
        let n = self.state.len() as u64;
        n * (1 + 4 + 8 + 4 + 4) + self.heads.len() as u64 * 4 + n * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

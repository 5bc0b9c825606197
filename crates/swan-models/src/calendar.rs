//! A busy calendar for one shared wire: the intervals during which it is already carrying
//! something, and the earliest gap where a new transfer fits. The Triple-A models
//! ([`crate::fabric`], [`crate::fimm`]) use it for PCIe links, a cluster's local bus and a
//! FIMM's channel, where contention on the wire *is* what they measure.
//!
//! Why not the SSD model's fluid pipe (`ssd/timing.rs`)? A fluid pipe counts its backlog
//! from the submission time, so two transfers submitted together whose data becomes ready
//! together (two reads finishing their array sense at the same moment) would both cross
//! at once: the pipe enforces only the average bandwidth. Triple-A's link contention is
//! exactly that collision (its Eq. 1 charges `tDMA` once per FIMM sharing the bus), so
//! here a transfer really occupies the wire. And why not a strict busy-until? A transfer
//! reserved far in the future (data waiting behind a long program on its die) would block
//! every later-submitted transfer whose data is ready now, although the wire is idle until
//! then. The calendar keeps that gap usable: a transfer takes the earliest idle stretch,
//! at or after its data is ready, that is long enough for it.
//!
//! Cost: intervals that end before the caller's `now` can never matter again (callers
//! submit in non-decreasing `now`, and no data is ready before its submission) and are
//! dropped, so the calendar holds only the transfers still in flight; fitting and
//! inserting are linear in that number. Dropping moves a start index rather than the
//! intervals behind it: every transfer prunes first, so shifting the vector each time cost
//! more than the fitting.

use crate::Nanos;

/// Dead intervals kept before they are dropped in one go.
const COMPACT_AT: usize = 64;

/// Busy intervals of one wire, sorted and disjoint (touching intervals are merged).
#[derive(Clone, Debug, Default)]
pub struct Calendar {
    /// The intervals from `head` on are live; those before it ended and wait to be dropped.
    busy: Vec<(Nanos, Nanos)>,
    head: usize,
    /// Total time ever reserved: the wire's utilisation over a run is this over the run's length.
    reserved_ns: Nanos,
}

impl Calendar {
    pub fn new() -> Self {
        Self::default()
    }

    /// The live intervals, sorted and disjoint.
    fn live(&self) -> &[(Nanos, Nanos)] {
        &self.busy[self.head..]
    }

    /// Forgets intervals that ended at or before `now`.
    pub fn prune(&mut self, now: Nanos) {
        self.head += self.live().partition_point(|&(_, end)| end <= now);
        // Drop the dead prefix once it outweighs the live part: amortised constant per interval.
        if self.head >= COMPACT_AT && self.head * 2 >= self.busy.len() {
            self.busy.drain(..self.head);
            self.head = 0;
        }
    }

    /// The earliest start `>= ready` at which the wire is idle for `dur`.
    pub fn fit(&self, ready: Nanos, dur: Nanos) -> Nanos {
        let mut start = ready;
        let live = self.live();
        let first = live.partition_point(|&(_, end)| end <= ready);
        for &(b, e) in &live[first..] {
            if start + dur <= b {
                break;
            }
            start = start.max(e);
        }
        start
    }

    /// Marks `[start, start + dur)` busy. The caller found `start` with [`Calendar::fit`]
    /// (or a joint fit), so it overlaps nothing.
    pub fn occupy(&mut self, start: Nanos, dur: Nanos) {
        if dur == 0 {
            return;
        }
        let end = start + dur;
        self.reserved_ns += dur;
        let i = self.head + self.live().partition_point(|&(b, _)| b < start);
        debug_assert!(i == self.head || self.busy[i - 1].1 <= start, "overlaps the interval before");
        debug_assert!(i == self.busy.len() || end <= self.busy[i].0, "overlaps the interval after");
        let joins_prev = i > self.head && self.busy[i - 1].1 == start;
        let joins_next = i < self.busy.len() && self.busy[i].0 == end;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.busy[i - 1].1 = self.busy[i].1;
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = end,
            (false, true) => self.busy[i].0 = start,
            // Before every live interval: reuse a dead slot rather than shift the rest.
            (false, false) if i == self.head && self.head > 0 => {
                self.head -= 1;
                self.busy[self.head] = (start, end);
            }
            (false, false) => self.busy.insert(i, (start, end)),
        }
    }

    /// Reserves the earliest fitting stretch; returns its start.
    pub fn reserve(&mut self, ready: Nanos, dur: Nanos) -> Nanos {
        let start = self.fit(ready, dur);
        self.occupy(start, dur);
        start
    }

    /// The first idle stretch at or after `t`: its start and end (`Nanos::MAX` if open).
    fn next_gap(&self, t: Nanos) -> (Nanos, Nanos) {
        let live = self.live();
        let i = live.partition_point(|&(b, _)| b <= t);
        let start = if i > 0 { t.max(live[i - 1].1) } else { t };
        let end = live.get(i).map_or(Nanos::MAX, |&(b, _)| b);
        (start, end)
    }

    /// Reserves `dur` of idle time from `ready` on, split over as many gaps as it takes;
    /// returns when the last piece ends. For a wire that interleaves packets from many
    /// sources (a PCIe link carries TLPs of several requests in turn), so that no idle
    /// stretch is lost for being shorter than a whole transfer.
    pub fn fill(&mut self, ready: Nanos, dur: Nanos) -> Nanos {
        let (mut t, mut left) = (ready, dur);
        while left > 0 {
            let (start, end) = self.next_gap(t);
            let take = left.min(end - start);
            self.occupy(start, take);
            left -= take;
            t = start + take;
        }
        t.max(ready)
    }

    /// When the last reservation ends (0 if none is held).
    pub fn busy_until(&self) -> Nanos {
        self.live().last().map_or(0, |&(_, e)| e)
    }

    /// Total time reserved so far.
    pub fn reserved_ns(&self) -> Nanos {
        self.reserved_ns
    }

    /// Intervals currently held (in flight or in the future).
    pub fn len(&self) -> usize {
        self.busy.len() - self.head
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The earliest start `>= ready` at which *both* wires are idle for `dur`: a transfer that
/// crosses two wires at once (cut-through), such as a page moving over a FIMM's channel
/// and its cluster's local bus.
pub fn joint_fit(a: &Calendar, b: &Calendar, ready: Nanos, dur: Nanos) -> Nanos {
    let mut t = ready;
    loop {
        let ta = a.fit(t, dur);
        let tb = b.fit(ta, dur);
        if tb == ta {
            return ta;
        }
        t = tb;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfers_ready_together_serialise() {
        let mut c = Calendar::new();
        assert_eq!(c.reserve(100, 10), 100);
        assert_eq!(c.reserve(100, 10), 110, "the second waits for the first");
        assert_eq!(c.reserve(100, 10), 120);
        assert_eq!(c.len(), 1, "touching intervals merge");
        assert_eq!(c.reserved_ns(), 30);
    }

    #[test]
    fn a_far_future_reservation_leaves_the_gap_before_it_usable() {
        let mut c = Calendar::new();
        c.reserve(1_000_000, 10);
        assert_eq!(c.reserve(5, 10), 5, "the wire is idle now");
        assert_eq!(c.reserve(999_995, 10), 1_000_010, "a gap too short is skipped");
        assert_eq!(c.reserve(14, 2), 15);
    }

    #[test]
    fn prune_forgets_only_what_ended() {
        let mut c = Calendar::new();
        c.reserve(0, 10);
        c.reserve(20, 10);
        c.prune(10);
        assert_eq!(c.len(), 1);
        assert_eq!(c.fit(20, 5), 30);
        c.prune(31);
        assert!(c.is_empty());
    }

    #[test]
    fn fill_uses_every_gap() {
        let mut c = Calendar::new();
        c.reserve(10, 10); // 10..20
        c.reserve(25, 10); // 25..35
        assert_eq!(c.fill(0, 18), 38, "0..10, 20..25, then 35..38");
        assert_eq!(c.len(), 1);
        assert_eq!(c.reserved_ns(), 38);
        assert_eq!(c.fill(100, 0), 100);
        assert_eq!(c.fill(12, 4), 42, "from inside a busy stretch");
    }

    #[test]
    fn joint_fit_needs_both_wires_idle() {
        let mut a = Calendar::new();
        let mut b = Calendar::new();
        a.reserve(0, 10); // a busy 0..10
        b.reserve(10, 10); // b busy 10..20
        b.reserve(25, 10); // b busy 25..35
        assert_eq!(joint_fit(&a, &b, 0, 5), 20, "a frees at 10, b is busy until 20");
        assert_eq!(joint_fit(&a, &b, 0, 6), 35, "20..26 overlaps b's 25..35");
    }
}

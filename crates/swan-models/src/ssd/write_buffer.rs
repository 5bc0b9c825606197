//! The controller's DRAM write buffer ([`super::SsdConfig::write_buffer_pages`]): a host page
//! holds a slot from the moment it is admitted until its program ends. The timing model
//! computes completions directly rather than from events, so the buffer is the set of
//! program-end times of the pages it holds; occupancy at an instant is how many end later.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::Nanos;

#[derive(Clone, Debug)]
pub(crate) struct WriteBuffer {
    capacity: usize,
    /// Program ends of the pages holding a slot, earliest first. They are the ends as first
    /// timed: a read that later overtakes a page's program frees its slot a little early.
    ends: BinaryHeap<Reverse<Nanos>>,
}

impl WriteBuffer {
    pub(crate) fn new(pages: u32) -> Self {
        assert!(pages > 0, "a write buffer of 0 pages is no buffer");
        Self { capacity: pages as usize, ends: BinaryHeap::with_capacity(pages as usize) }
    }

    /// When a page whose data arrived at `arrived` gets a slot: at once if one is free then,
    /// otherwise when the earliest buffered program ends. Takes that slot; the caller must
    /// [`WriteBuffer::hold`] the page's program end next.
    pub(crate) fn admit(&mut self, arrived: Nanos) -> Nanos {
        while self.ends.peek().is_some_and(|&Reverse(end)| end <= arrived) {
            self.ends.pop();
        }
        if self.ends.len() < self.capacity {
            return arrived;
        }
        let Reverse(freed) = self.ends.pop().expect("a full buffer holds pages");
        freed.max(arrived)
    }

    /// The admitted page's program ends at `end`; it holds its slot until then.
    pub(crate) fn hold(&mut self, end: Nanos) {
        self.ends.push(Reverse(end));
    }

    /// Pages whose program has not ended at `at`.
    #[cfg(test)]
    pub(crate) fn held_at(&self, at: Nanos) -> usize {
        self.ends.iter().filter(|&&Reverse(end)| end > at).count()
    }

    /// Empties the buffer (an idle copy of the device, [`super::timing::Timing::idle_like`]).
    pub(crate) fn clear(&mut self) {
        self.ends.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_buffer_admits_when_the_earliest_program_ends() {
        let mut b = WriteBuffer::new(2);
        assert_eq!(b.admit(10), 10);
        b.hold(500);
        assert_eq!(b.admit(20), 20);
        b.hold(300);
        // Full: the third page waits for the program ending at 300, not the one at 500.
        assert_eq!(b.admit(30), 300);
        b.hold(900);
        assert_eq!(b.held_at(400), 2);
        // By 600 the first two programs have ended: a slot is free at once.
        assert_eq!(b.admit(600), 600);
        b.hold(700);
        assert_eq!(b.held_at(650), 2);
    }
}

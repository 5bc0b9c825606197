//! Credit-based flow control (Triple-A §2.1): a receiver's buffer of fixed capacity, and
//! a transmitter that may send a packet only when the receiver has an entry for it. A
//! [`CreditQueue`] is one such buffer. An entry is taken when a packet is admitted and
//! given back when the packet leaves; a packet that finds no free entry waits for the
//! earliest one to be given back — the queue stall the paper measures.
//!
//! In "completion time at submission" style each entry holds the time it will be given
//! back, which the caller knows once it has routed the packet onward, so the queue is a
//! min-heap of release times. Each entry also remembers *why* its holder stayed (link or
//! storage contention), so a packet stalled behind a full queue inherits the cause.
//!
//! Approximation: an entry whose release time has passed the arrival of the packet being
//! admitted is freed for good. A later-submitted packet that arrives earlier (a shorter
//! path) cannot use it in between; it then waits a little longer than it would. Arrivals
//! at one queue come almost in submission order, so this is rare.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Cause;
use crate::Nanos;

/// One receiver buffer of `capacity` entries.
#[derive(Clone, Debug)]
pub(crate) struct CreditQueue {
    capacity: usize,
    held: BinaryHeap<Reverse<(Nanos, Cause)>>,
    peak: usize,
}

impl CreditQueue {
    pub(crate) fn new(capacity: u32) -> Self {
        let capacity = capacity as usize;
        Self { capacity, held: BinaryHeap::with_capacity(capacity + 1), peak: 0 }
    }

    /// Admits a train of `n` packets arriving at `at`: returns when `n` entries are free
    /// and why it waited (the cause of the last entry it waited for). A train longer than
    /// the buffer streams through it and needs only the whole buffer.
    pub(crate) fn acquire(&mut self, at: Nanos, n: u32) -> (Nanos, Cause) {
        let n = (n as usize).clamp(1, self.capacity);
        self.free_given_back_by(at);
        let mut admitted = at;
        let mut cause = Cause::Link;
        while self.held.len() + n > self.capacity {
            let Reverse((t, c)) = self.held.pop().expect("a full queue holds entries");
            admitted = admitted.max(t);
            cause = c;
        }
        (admitted, cause)
    }

    /// Whether a train of `n` packets arriving at `at` finds too few free entries and must
    /// wait. Entries given back by `at` are freed, as [`CreditQueue::acquire`] would.
    pub(crate) fn full_at(&mut self, at: Nanos, n: u32) -> bool {
        let n = (n as usize).clamp(1, self.capacity);
        self.free_given_back_by(at);
        self.held.len() + n > self.capacity
    }

    /// Frees for good the entries given back by `at` (see the module's approximation).
    fn free_given_back_by(&mut self, at: Nanos) {
        while self.held.peek().is_some_and(|Reverse((t, _))| *t <= at) {
            self.held.pop();
        }
    }

    /// Gives the `n` entries taken by [`CreditQueue::acquire`] back at `at`; `cause` says
    /// why their holder stayed.
    pub(crate) fn release(&mut self, at: Nanos, n: u32, cause: Cause) {
        let n = (n as usize).clamp(1, self.capacity);
        for _ in 0..n {
            self.held.push(Reverse((at, cause)));
        }
        self.peak = self.peak.max(self.held.len());
    }

    /// Entries held (given back at a time not yet passed by an admission).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.held.len()
    }

    /// Most entries ever held at once.
    pub(crate) fn peak(&self) -> usize {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_makes_a_packet_wait_for_the_first_entry_given_back() {
        let mut q = CreditQueue::new(2);
        let (t, _) = q.acquire(0, 1);
        q.release(t + 100, 1, Cause::Storage);
        let (t, _) = q.acquire(0, 1);
        q.release(t + 50, 1, Cause::Link);
        assert_eq!(q.len(), 2);
        let (t, cause) = q.acquire(10, 1);
        assert_eq!((t, cause), (50, Cause::Link), "waits for the entry given back first");
        q.release(t + 100, 1, Cause::Link);
        let (t, cause) = q.acquire(10, 1);
        assert_eq!((t, cause), (100, Cause::Storage));
    }

    #[test]
    fn entries_given_back_before_arrival_are_free() {
        let mut q = CreditQueue::new(1);
        q.acquire(0, 1);
        q.release(30, 1, Cause::Storage);
        assert_eq!(q.acquire(30, 1).0, 30);
        q.release(40, 1, Cause::Link);
        assert_eq!(q.peak(), 1);
    }

    #[test]
    fn a_train_waits_for_as_many_entries_as_it_has_packets() {
        let mut q = CreditQueue::new(4);
        for t in [10, 20, 30, 40] {
            q.acquire(0, 1);
            q.release(t, 1, Cause::Link);
        }
        assert_eq!(q.acquire(0, 3).0, 30);
        q.release(100, 3, Cause::Link);
        assert_eq!(q.len(), 4);
        assert_eq!(q.acquire(0, 9).0, 100, "a train longer than the buffer needs all of it");
    }
}

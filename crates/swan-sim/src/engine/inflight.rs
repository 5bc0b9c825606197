//! Bookkeeping of work in flight, shared by user requests and GC jobs: the member I/O a
//! multi-phase plan still has to submit, and a pool of reusable slots that events name by
//! index (so an event stays a small `Copy` value and nothing is allocated per request).

use std::ops::{Index, IndexMut};
use swan_core::io::{IoPlan, MemberIo};

/// Member I/O waiting for earlier phases: flattened, with phase boundaries.
#[derive(Debug, Default)]
pub(super) struct Pending {
    pub(super) ios: Vec<MemberIo>,
    ends: Vec<usize>,
    next: usize,
}

impl Pending {
    pub(super) fn load(&mut self, plan: &IoPlan) {
        self.ios.clear();
        self.ends.clear();
        self.next = 1;
        for k in 0..plan.phase_count() {
            self.ios.extend_from_slice(plan.phase(k));
            self.ends.push(self.ios.len());
        }
    }

    /// Keep every phase of `plan`, the first included, for later.
    pub(super) fn load_all(&mut self, plan: &IoPlan) {
        self.load(plan);
        self.next = 0;
    }

    /// Nothing is left to submit: the plan had a single phase, or none.
    pub(super) fn clear(&mut self) {
        self.ends.clear();
    }

    #[inline]
    pub(super) fn has_next(&self) -> bool {
        self.next < self.ends.len()
    }

    #[inline]
    pub(super) fn take_next(&mut self) -> (usize, usize) {
        let start = if self.next == 0 { 0 } else { self.ends[self.next - 1] };
        let range = (start, self.ends[self.next]);
        self.next += 1;
        range
    }
}

/// Slots of in-flight work, reused once freed.
#[derive(Debug, Default)]
pub(super) struct Slots<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T: Default> Slots<T> {
    /// A free slot: the last one freed, or a new one.
    pub(super) fn take(&mut self) -> u32 {
        match self.free.pop() {
            Some(s) => s,
            None => {
                self.items.push(T::default());
                (self.items.len() - 1) as u32
            }
        }
    }

    /// Slot `slot`'s work is over; its contents stay until it is taken again.
    pub(super) fn give(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// Slots taken and not given back.
    pub(super) fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

impl<T> Index<u32> for Slots<T> {
    type Output = T;

    fn index(&self, slot: u32) -> &T {
        &self.items[slot as usize]
    }
}

impl<T> IndexMut<u32> for Slots<T> {
    fn index_mut(&mut self, slot: u32) -> &mut T {
        &mut self.items[slot as usize]
    }
}

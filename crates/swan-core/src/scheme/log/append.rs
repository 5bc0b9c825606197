//! Appending to the log: the open user segment and each R-group's open GC segment, the
//! stripe rows' parity and the seal (summary) of a full segment, whether a write has room,
//! and SWAN's rotation of the front-end R-group.

use super::{Cursor, Layout, LogArray};
use crate::io::{IoClass, IoKind, IoPlan, MemberIo, Src};
use crate::scheme::MapChange;

impl LogArray {
    /// Segments of `group` that user writes may still take.
    pub(super) fn allocatable(&self, group: u32) -> u64 {
        self.segs.free_count(group).saturating_sub(self.cfg.reserve_segments)
    }

    /// Payload slots user writes can fill before GC must free something.
    fn user_capacity(&self) -> u64 {
        let open = self.user_open.map_or(0, |c| u64::from(self.geo.payload_slots() - c.next));
        let payload = u64::from(self.geo.payload_slots());
        let groups: u64 = match self.cfg.layout {
            Layout::LogRaid => self.allocatable(0) * payload,
            Layout::Swan => (0..self.geo.rgroups).map(|g| self.allocatable(g) * payload).sum(),
        };
        open + groups
    }

    /// Whether user writes can fill `n` more payload slots before GC must free something:
    /// [`LogArray::user_capacity`] `>= n`, answered by the open segment alone when it can
    /// (every write asks, and the full count walks every R-group).
    pub(super) fn has_room(&self, n: u64) -> bool {
        if let Some(c) = self.user_open {
            if u64::from(self.geo.payload_slots() - c.next) >= n {
                return true;
            }
        }
        self.user_capacity() >= n
    }

    /// Write slot `slot` of `seg` from `src`, and the row's parity if the slot completes it.
    pub(super) fn push_slot_write(&self, plan: &mut IoPlan, seg: u64, slot: u32, src: Src, class: IoClass) {
        let (member, block) = self.geo.slot_location(seg, slot);
        plan.push_merged(MemberIo { member, block, count: 1, kind: IoKind::Write(src), class });
        if self.geo.slot_ends_row(slot) {
            self.push_parity(plan, seg, slot, class);
        }
    }

    /// Write the parity of the stripe row holding `slot` of `seg` (no-op for RAID0).
    pub(super) fn push_parity(&self, plan: &mut IoPlan, seg: u64, slot: u32, class: IoClass) {
        let (_, block) = self.geo.slot_location(seg, slot);
        if let Some(col) = self.geo.parity_column(block) {
            let group = self.geo.group_of_segment(seg);
            plan.push(MemberIo {
                member: self.geo.member(group, col),
                block,
                count: 1,
                kind: IoKind::Write(Src::Parity { group, row: block }),
                class,
            });
        }
    }

    /// Write the summary of a full segment and make it a GC candidate.
    pub(super) fn seal(&mut self, seg: u64, plan: &mut IoPlan, class: IoClass) {
        let payload = self.geo.payload_slots();
        for index in 0..self.geo.summary_blocks {
            self.push_slot_write(plan, seg, payload + index, Src::Summary { segment: seg, index }, class);
        }
        self.seal_seq += 1;
        self.segs.seal(seg, self.seal_seq);
        if let Some(log) = self.changes.as_mut() {
            log.push(MapChange::Sealed { segment: seg, seq: self.seal_seq });
        }
    }

    /// SWAN: the back-end R-group to become front-end, if any has room: a healthy one
    /// before a degraded one.
    fn next_front(&self) -> Option<u32> {
        (0..self.geo.rgroups).filter(|&g| g != self.front && self.allocatable(g) > 0).max_by_key(|&g| {
            (!self.degraded[g as usize], self.allocatable(g), std::cmp::Reverse(self.last_front[g as usize]))
        })
    }

    /// SWAN: whether the front-end should hand over before it is full, because it is
    /// degraded and a healthy R-group has room.
    fn leave_degraded_front(&self) -> bool {
        self.degraded[self.front as usize] && self.next_front().is_some_and(|g| !self.degraded[g as usize])
    }

    /// The next payload slot for a user write. The caller has checked `user_capacity`.
    pub(super) fn user_slot(&mut self, plan: &mut IoPlan) -> u64 {
        loop {
            if let Some(c) = self.user_open.as_mut() {
                if c.next < self.geo.payload_slots() {
                    c.next += 1;
                    return self.geo.pba(c.seg, c.next - 1);
                }
                let seg = c.seg;
                self.user_open = None;
                self.seal(seg, plan, IoClass::User);
            }
            if self.allocatable(self.front) == 0 || self.leave_degraded_front() {
                let next = self.next_front().expect("user_capacity promised a free segment");
                self.front = next;
                self.counters.front_rotations += 1;
                self.last_front[next as usize] = self.counters.front_rotations;
            }
            let seg = self.segs.open(self.front).expect("allocatable segment");
            self.gc_written[seg as usize] = false;
            self.user_open = Some(Cursor { seg, next: 0 });
        }
    }

    /// Up to `max` consecutive slots of `group`'s GC segment: (segment, first slot, count).
    pub(super) fn gc_take(&mut self, group: u32, max: u32) -> (u64, u32, u32) {
        let g = group as usize;
        let payload = self.geo.payload_slots();
        let c = match self.gc_open[g] {
            Some(c) => c,
            None => {
                let seg = self
                    .segs
                    .open(group)
                    .unwrap_or_else(|| panic!("R-group {group} has no free segment for GC: the reserve was violated"));
                self.gc_written[seg as usize] = true;
                Cursor { seg, next: 0 }
            }
        };
        let count = max.min(payload - c.next);
        let next = c.next + count;
        if next == payload {
            self.gc_open[g] = None;
            self.gc_full[g].push(c.seg);
        } else {
            self.gc_open[g] = Some(Cursor { seg: c.seg, next });
        }
        (c.seg, c.next, count)
    }
}

//! Writing through a failed member: rows at risk, and padding them.
//!
//! A degraded R-group keeps filling every slot of its rows, the failed member's included,
//! as a degraded RAID-5 does: the row's parity, written when the row completes, holds the
//! missing block. (Leaving the failed member's slots unused would cost the R-group a slot
//! in every row, a third of a three-SSD Log-RAID's capacity, and a full volume would then
//! be refused writes.) Until its row completes, though, such a block exists only in the
//! driver's running XOR: the row is *at risk*. Before a driver makes writes durable it
//! calls [`LogArray::pad_rows_at_risk`], which completes every such row with zeroes so its
//! parity reaches the members. A GC segment's row can be completed only between jobs (a
//! job's writes are in flight until it finishes, and padding must follow them), so a
//! driver finishes the degraded R-groups' jobs before a sync.
//!
//! Padding never needs a free segment (a row lies inside its segment) and its slots hold no
//! live block, so GC gives them back like any dead slot. It costs less than a row per open
//! segment per sync, not per GC job: a job's own padding could eat all it frees from a
//! victim with few dead blocks, and GC would then run without end.

use super::{Cursor, LogArray};
use crate::io::{IoClass, IoPlan, Src};

impl LogArray {
    /// The slot at which to stop padding a cursor at `next` in `seg`, if the row it is
    /// filling holds a block written on its R-group's failed member.
    fn risky_row_end(&self, seg: u64, next: u32) -> Option<u32> {
        let failed = self.failed_member[self.geo.group_of_segment(seg) as usize]?;
        let dm = self.geo.data_members;
        let row_start = next - next % dm;
        if next == row_start {
            return None;
        }
        let written_there = (row_start..next).any(|s| self.geo.slot_location(seg, s).0 == failed);
        written_there.then(|| (row_start + dm).min(self.geo.payload_slots()))
    }

    /// Zeroes into slots `from..to` of `seg`, with the parity of a row they complete.
    fn push_padding(&self, plan: &mut IoPlan, seg: u64, from: u32, to: u32, class: IoClass) {
        for slot in from..to {
            self.push_slot_write(plan, seg, slot, Src::Zero, class);
        }
    }

    /// Complete every row still filling that holds a block of a failed member: the open
    /// user segment's, and the GC segment's of each R-group with no job in flight. A segment whose payload the padding fills is sealed, which completes the last
    /// row. Plans into `plan` (not cleared) and returns the rows completed.
    pub fn pad_rows_at_risk(&mut self, plan: &mut IoPlan) -> u32 {
        let (mut rows, mut padded) = (0, 0);
        if let Some(c) = self.user_open {
            if let Some(end) = self.risky_row_end(c.seg, c.next) {
                self.push_padding(plan, c.seg, c.next, end, IoClass::User);
                (rows, padded) = (rows + 1, padded + end - c.next);
                self.user_open = Some(Cursor { seg: c.seg, next: end });
                if end == self.geo.payload_slots() {
                    self.user_open = None;
                    self.seal(c.seg, plan, IoClass::User);
                }
            }
        }
        for g in 0..self.gc_open.len() {
            let Some(c) = self.gc_open[g] else { continue };
            if self.job_in_flight[g] {
                continue;
            }
            let Some(end) = self.risky_row_end(c.seg, c.next) else { continue };
            self.push_padding(plan, c.seg, c.next, end, IoClass::Gc);
            (rows, padded) = (rows + 1, padded + end - c.next);
            self.gc_open[g] = Some(Cursor { seg: c.seg, next: end });
            if end == self.geo.payload_slots() {
                // No job is in flight here, so none has moves pending into it.
                self.gc_open[g] = None;
                debug_assert_eq!(self.inbound[c.seg as usize], 0);
                self.seal(c.seg, plan, IoClass::Gc);
            }
        }
        self.counters.padded_slots += u64::from(padded);
        rows
    }
}

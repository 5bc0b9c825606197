//! Coming back from a crash: rebuilding the array from a recovered map, trimming the free
//! space for SSDs that did not see the format, and the consistency check that recovery (and
//! every test) relies on.

use super::{Layout, LogArray, LogConfig};
use crate::io::{IoClass, IoKind, IoPlan, MemberIo};
use crate::l2p::{PackedMap, UNMAPPED};
use crate::scheme::{ConsistencyError, RestoreError};
use crate::segment::SegState;

impl LogArray {
    /// Rebuild the array from a recovered map: `map[lba]` is where block `lba` lives
    /// ([`UNMAPPED`] if nowhere) and `seal_seqs[segment]` the sequence number its summary was
    /// sealed with (0 if it never was). A segment holding live blocks becomes sealed, even one
    /// that was still open at the crash (the rest of its slots stay unused until GC); a
    /// segment holding none is free. Fails, naming the block, on a map that cannot be right.
    /// The map becomes the array's own (no second copy is made).
    pub fn restore(cfg: LogConfig, map: PackedMap, seal_seqs: &[u64]) -> Result<Self, RestoreError> {
        if map.len() != cfg.volume_blocks {
            return Err(RestoreError::MapLength { map: map.len(), volume: cfg.volume_blocks });
        }
        let mut a = Self::with_l2p(cfg, PackedMap::new(0));
        let geo = a.geo;
        if seal_seqs.len() as u64 != geo.segments() {
            return Err(RestoreError::SeqCount { given: seal_seqs.len(), segments: geo.segments() });
        }
        let slots = geo.segments() * u64::from(geo.data_slots);
        for lba in 0..a.cfg.volume_blocks {
            let pba = map.get(lba);
            if pba == UNMAPPED {
                continue;
            }
            if pba >= slots {
                return Err(RestoreError::BeyondSlots { lba, pba, slots });
            }
            let (seg, slot) = geo.split_pba(pba);
            if slot >= geo.payload_slots() {
                return Err(RestoreError::IntoSummary { lba, segment: seg });
            }
            if a.is_live(pba) {
                return Err(match a.p2l.is_dense() {
                    true => RestoreError::SlotHeldBy { lba, pba, holder: a.p2l.get(pba) },
                    false => RestoreError::SlotHeld { lba, pba },
                });
            }
            if a.segs.state(seg) == SegState::Free {
                a.segs.take(seg);
            }
            if a.p2l.is_dense() {
                a.p2l.set(pba, lba);
            }
            a.segs.add_valid(seg);
            a.set_live(pba, true);
        }
        a.l2p = map;
        a.segs.rebuild_free();
        for seg in 0..geo.segments() {
            if a.segs.state(seg) == SegState::Open {
                let seq = seal_seqs[seg as usize];
                a.seal_seq = a.seal_seq.max(seq);
                a.segs.seal(seg, seq);
            }
        }
        if a.cfg.layout == Layout::Swan {
            // The R-group with the most room takes the writes, as at rotation.
            a.front = (0..geo.rgroups).max_by_key(|&g| (a.allocatable(g), std::cmp::Reverse(g))).unwrap_or(0);
        }
        Ok(a)
    }

    /// Give adopted segment `seg` (holding live blocks, no seal: see
    /// [`LogArray::adopted_segments`]) a seal now, with the next sequence number, which it
    /// returns. The driver writes its summary ([`LogArray::summary_of`], carrying the CRC of
    /// each live block as the driver found and checked it) and makes it durable before the
    /// seal is: recorded as [`MapChange::Sealed`](crate::scheme::MapChange) in the change
    /// log, and in the next checkpoint's sequence numbers. From then on the segment is one
    /// like any other, so its blocks are verified by what its summary says rather than by
    /// CRCs a driver held in memory since the restart. Its free slots stay unused.
    pub fn seal_adopted(&mut self, seg: u64) -> u64 {
        let seq = self.seal_seq + 1;
        self.seal_adopted_as(seg, seq);
        seq
    }

    /// Give adopted segment `seg` the seal numbered `seq` that its summary, found whole on
    /// the members, already carries: the crash came after the summary was written and
    /// before its seal was logged, and a zone takes no second summary. Such a seal numbers
    /// above every logged one, and later seals number above it.
    pub fn seal_adopted_as(&mut self, seg: u64, seq: u64) {
        assert!(
            self.segs.state(seg) == SegState::Sealed && self.segs.seq(seg) == 0 && self.segs.valid(seg) > 0,
            "segment {seg} is not an adopted one"
        );
        assert!(seq > 0, "seal numbers start at 1");
        self.seal_seq = self.seal_seq.max(seq);
        self.segs.seal_adopted(seg, seq);
        if let Some(log) = self.changes.as_mut() {
            log.push(crate::scheme::MapChange::Sealed { segment: seg, seq });
        }
    }

    /// Plan a TRIM of every free segment (cleared first), for telling SSDs that met the array
    /// only after it was formatted (an emulator aged before serving) which space is free, as
    /// [`Scheme::format`](crate::scheme::Scheme::format) told the real ones.
    pub fn plan_free_trims(&self, plan: &mut IoPlan) {
        plan.clear();
        for seg in (0..self.geo.segments()).filter(|&seg| self.segs.state(seg) == SegState::Free) {
            let group = self.geo.group_of_segment(seg);
            for member in self.geo.group_members(group) {
                plan.push_merged(MemberIo {
                    member,
                    block: self.geo.row_block(seg, 0),
                    count: self.geo.segment_rows,
                    kind: IoKind::Trim,
                    class: IoClass::Gc,
                });
            }
        }
    }

    /// The invariants between the maps, the live bits and the segment table, naming the
    /// first that fails: what [`Scheme::check`](crate::scheme::Scheme::check) answers.
    pub(super) fn check_consistency(&self) -> Result<(), ConsistencyError> {
        self.segs.check_buckets()?;
        let mut live = vec![0u32; self.geo.segments() as usize];
        for lba in 0..self.cfg.volume_blocks {
            let pba = self.l2p.get(lba);
            if pba == UNMAPPED {
                continue;
            }
            let (seg, slot) = self.geo.split_pba(pba);
            if slot >= self.geo.payload_slots() {
                return Err(ConsistencyError::MappedIntoSummary { lba, segment: seg });
            }
            if self.p2l.knows(seg) && self.p2l.get(pba) != lba {
                return Err(ConsistencyError::P2lDisagrees { lba, pba, p2l: self.p2l.get(pba) });
            }
            match self.segs.state(seg) {
                SegState::Free => return Err(ConsistencyError::InFreeSegment { lba, segment: seg }),
                SegState::Open | SegState::Sealed | SegState::Victim => {}
            }
            live[seg as usize] += 1;
        }
        let bits: u64 = self.live.iter().map(|w| u64::from(w.count_ones())).sum();
        let mapped: u64 = live.iter().map(|&n| u64::from(n)).sum();
        if bits != mapped {
            return Err(ConsistencyError::LiveBits { bits, mapped });
        }
        for lba in 0..self.cfg.volume_blocks {
            let pba = self.l2p.get(lba);
            if pba != UNMAPPED && !self.is_live(pba) {
                return Err(ConsistencyError::NotLive { lba, pba });
            }
        }
        for (seg, &n) in live.iter().enumerate() {
            if self.segs.valid(seg as u64) != n {
                return Err(ConsistencyError::ValidCount {
                    segment: seg as u64,
                    counted: self.segs.valid(seg as u64),
                    holds: n,
                });
            }
        }
        // Every live block is mapped once: distinct lbas map to distinct slots because each
        // live slot's P2L names exactly one lba (checked above).
        for (g, full) in self.gc_full.iter().enumerate() {
            for &seg in full {
                if self.segs.state(seg) != SegState::Open {
                    return Err(ConsistencyError::FullGcSegment {
                        segment: seg,
                        group: g,
                        state: self.segs.state(seg),
                    });
                }
            }
        }
        Ok(())
    }
}

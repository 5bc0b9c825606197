//! In-place RAID0/4/5, as mdadm does it: a logical block always lives at the same place.
//!
//! Writes go where the block lives, so random user writes stay random at the SSDs and the
//! SSDs' own GC pays for them (SWAN Fig. 4: RAID0 is the slowest under random writes).
//! Partial-stripe writes on RAID4/5 read the old data and old parity, then write the new
//! data and parity (read-modify-write); a write covering a whole stripe writes parity
//! straight away. TRIM passes down to RAID0 members; on RAID4/5 only whole stripes are
//! trimmed (data and parity together, so parity stays consistent), as md's raid456 only
//! discards what it can keep consistent.

use super::{
    check_range, ConsistencyError, Counters, GcJobId, ReqOp, Request, RequestError, Scheme, SchemeKind, Status,
    Submitted,
};
use crate::geometry::{RaidLevel, StripeGeometry};
use crate::io::{Dst, IoClass, IoKind, IoPlan, MemberBlock, MemberId, MemberIo, Src};

pub struct InPlaceRaid {
    geo: StripeGeometry,
    counters: Counters,
}

impl InPlaceRaid {
    pub fn new(geo: StripeGeometry) -> Self {
        Self { geo, counters: Counters::default() }
    }

    pub fn geometry(&self) -> &StripeGeometry {
        &self.geo
    }

    fn io(member: MemberId, block: MemberBlock, count: u32, kind: IoKind) -> MemberIo {
        MemberIo { member, block, count, kind, class: IoClass::User }
    }

    fn plan_parity_write(&self, req: &Request, plan: &mut IoPlan) {
        let per_stripe = self.geo.stripe_data_blocks();
        let chunk = u64::from(self.geo.chunk_blocks);
        let end = req.lba + u64::from(req.blocks);
        let first_stripe = req.lba / per_stripe;
        let last_stripe = (end - 1) / per_stripe;
        // Phase 1: for every partial stripe, read the old data being replaced and the old
        // parity of the rows it touches.
        let mut slot = 0u32;
        for stripe in first_stripe..=last_stripe {
            let (s_lo, s_hi) = (stripe * per_stripe, (stripe + 1) * per_stripe);
            let (lo, hi) = (req.lba.max(s_lo), end.min(s_hi));
            if lo == s_lo && hi == s_hi {
                continue; // full stripe: no reads needed
            }
            let parity = self.geo.parity_member(stripe).expect("parity level");
            let mut rows_lo = u64::MAX;
            let mut rows_hi = 0;
            for lba in lo..hi {
                let (_, m, b) = self.geo.locate(lba);
                plan.push_merged(Self::io(m, b, 1, IoKind::Read(Dst::Staged { slot })));
                slot += 1;
                rows_lo = rows_lo.min(b);
                rows_hi = rows_hi.max(b);
            }
            // The parity rows touched: if the write spans chunks, every row of the chunk.
            let (row_lo, row_hi) = if hi - lo >= chunk {
                (self.geo.stripe_block(stripe), self.geo.stripe_block(stripe) + chunk - 1)
            } else {
                (rows_lo, rows_hi)
            };
            for row in row_lo..=row_hi {
                plan.push_merged(Self::io(parity, row, 1, IoKind::Read(Dst::Staged { slot })));
                slot += 1;
            }
        }
        plan.barrier();
        // Phase 2: new data, then the parity of every touched row.
        for (i, lba) in (req.lba..end).enumerate() {
            let (_, m, b) = self.geo.locate(lba);
            plan.push_merged(Self::io(m, b, 1, IoKind::Write(Src::User { offset: i as u32 })));
        }
        for stripe in first_stripe..=last_stripe {
            let (s_lo, s_hi) = (stripe * per_stripe, (stripe + 1) * per_stripe);
            let (lo, hi) = (req.lba.max(s_lo), end.min(s_hi));
            let parity = self.geo.parity_member(stripe).expect("parity level");
            let base = self.geo.stripe_block(stripe);
            let rows: Vec<MemberBlock> = if hi - lo >= chunk {
                (base..base + chunk).collect()
            } else {
                let mut r: Vec<MemberBlock> = (lo..hi).map(|l| self.geo.locate(l).2).collect();
                r.sort_unstable();
                r.dedup();
                r
            };
            for row in rows {
                plan.push(Self::io(parity, row, 1, IoKind::Write(Src::Parity { group: 0, row })));
            }
        }
    }
}

impl Scheme for InPlaceRaid {
    fn kind(&self) -> SchemeKind {
        SchemeKind::Raid(self.geo.raid)
    }

    fn volume_blocks(&self) -> u64 {
        self.geo.volume_blocks()
    }

    fn members(&self) -> u32 {
        self.geo.members
    }

    fn format(&mut self, plan: &mut IoPlan) {
        plan.clear();
    }

    fn submit(&mut self, req: &Request, plan: &mut IoPlan) -> Result<Submitted, RequestError> {
        plan.clear();
        check_range(req, self.volume_blocks())?;
        let n = u64::from(req.blocks);
        match req.op {
            ReqOp::Read => {
                self.counters.user_blocks_read += n;
                for (i, lba) in (req.lba..req.lba + n).enumerate() {
                    let (_, m, b) = self.geo.locate(lba);
                    plan.push_merged(Self::io(m, b, 1, IoKind::Read(Dst::User { offset: i as u32 })));
                }
            }
            ReqOp::Write => {
                self.counters.user_blocks_written += n;
                if self.geo.raid == RaidLevel::Raid0 {
                    for (i, lba) in (req.lba..req.lba + n).enumerate() {
                        let (_, m, b) = self.geo.locate(lba);
                        plan.push_merged(Self::io(m, b, 1, IoKind::Write(Src::User { offset: i as u32 })));
                    }
                } else {
                    self.plan_parity_write(req, plan);
                }
                if req.fua {
                    push_flushes(plan, self.geo.members);
                }
            }
            ReqOp::Trim => {
                self.counters.user_blocks_trimmed += n;
                let per_stripe = self.geo.stripe_data_blocks();
                for lba in req.lba..req.lba + n {
                    if self.geo.raid == RaidLevel::Raid0 {
                        let (_, m, b) = self.geo.locate(lba);
                        plan.push_merged(Self::io(m, b, 1, IoKind::Trim));
                    } else if lba % per_stripe == 0 && lba + per_stripe <= req.lba + n {
                        let stripe = lba / per_stripe;
                        for m in 0..self.geo.members {
                            plan.push(Self::io(m, self.geo.stripe_block(stripe), self.geo.chunk_blocks, IoKind::Trim));
                        }
                    }
                }
            }
            ReqOp::Flush => push_flushes(plan, self.geo.members),
        }
        Ok(Submitted::Planned)
    }

    fn start_gc(&mut self, plan: &mut IoPlan) -> Option<GcJobId> {
        plan.clear();
        None
    }

    /// The TRIM goes to the members, and what an SSD returns for a trimmed block is its own
    /// affair (zeroes only if it promises deterministic zeroes after TRIM).
    fn trimmed_reads_zero(&self) -> bool {
        false
    }

    /// Writes stay where they are: a failed member's blocks are served from parity, and
    /// there is nowhere else to put new ones.
    fn set_failed_member(&mut self, _member: u32, _failed: bool) {}

    fn finish_gc(&mut self, job: GcJobId, _plan: &mut IoPlan) {
        unreachable!("in-place RAID never starts GC jobs (job {job})")
    }

    fn status(&self) -> Status {
        Status::default()
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn locate(&self, lba: u64) -> Option<(MemberId, MemberBlock)> {
        (lba < self.volume_blocks()).then(|| {
            let (_, m, b) = self.geo.locate(lba);
            (m, b)
        })
    }

    fn check(&self) -> Result<(), ConsistencyError> {
        Ok(())
    }

    fn heap_bytes(&self) -> u64 {
        0
    }
}

/// A barrier, then a flush of every member.
pub(crate) fn push_flushes(plan: &mut IoPlan, members: u32) {
    plan.barrier();
    for m in 0..members {
        plan.push(MemberIo { member: m, block: 0, count: 0, kind: IoKind::Flush, class: IoClass::User });
    }
}

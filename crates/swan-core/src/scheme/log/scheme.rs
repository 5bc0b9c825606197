//! The [`Scheme`] interface of a log-structured array: user requests turned into plans
//! (reads from where the L2P map says, writes appended to the log, trims unmapped), GC
//! entry points, failed members, and what the driver reads back (status, counters, check).

use super::{Layout, LogArray};
use crate::io::{Dst, IoClass, IoKind, IoPlan, MemberBlock, MemberId, MemberIo, Src};
use crate::l2p::UNMAPPED;
use crate::scheme::inplace::push_flushes;
use crate::scheme::{
    check_range, ConsistencyError, Counters, GcJobId, NoSummaries, ReqOp, Request, RequestError, Scheme, SchemeKind,
    Status, Submitted,
};

impl Scheme for LogArray {
    fn kind(&self) -> SchemeKind {
        match self.cfg.layout {
            Layout::LogRaid => SchemeKind::LogRaid(self.geo.raid),
            Layout::Swan => SchemeKind::Swan(self.geo.raid),
        }
    }

    fn volume_blocks(&self) -> u64 {
        self.cfg.volume_blocks
    }

    fn largest_write_blocks(&self) -> u64 {
        self.cfg.guaranteed_write_blocks().min(self.cfg.volume_blocks)
    }

    fn members(&self) -> u32 {
        self.geo.members()
    }

    /// A trimmed block is unmapped, and an unmapped block reads as zeroes.
    fn trimmed_reads_zero(&self) -> bool {
        true
    }

    fn format(&mut self, plan: &mut IoPlan) {
        plan.clear();
        let g = &self.geo;
        for member in 0..g.members() {
            let mut block = g.member_offset;
            let end = g.segments_end();
            while block < end {
                let count = (end - block).min(u64::from(u32::MAX)) as u32;
                plan.push(MemberIo { member, block, count, kind: IoKind::Trim, class: IoClass::Gc });
                block += u64::from(count);
            }
        }
    }

    fn prefetch(&self, req: &Request, near: bool) {
        let end = req.lba.saturating_add(u64::from(req.blocks)).min(self.cfg.volume_blocks);
        // One hint per cache line is enough, but a request's entries span a line or two:
        // its first and last entries cover them.
        for lba in [req.lba, end.saturating_sub(1)].into_iter().filter(|&l| l < end) {
            if !near {
                self.l2p.prefetch(lba);
                continue;
            }
            // The entry is cached by now: warm the live bit a write will clear and the old
            // copy's segment record it will count down.
            let pba = self.l2p.get(lba);
            if req.op == ReqOp::Write && pba != UNMAPPED {
                if let Some(word) = self.live.get((pba / 64) as usize) {
                    crate::prefetch::prefetch(word);
                }
                self.segs.prefetch(self.seg_of(pba));
            }
        }
    }

    fn submit(&mut self, req: &Request, plan: &mut IoPlan) -> Result<Submitted, RequestError> {
        plan.clear();
        check_range(req, self.cfg.volume_blocks)?;
        let n = u64::from(req.blocks);
        match req.op {
            ReqOp::Read => {
                self.counters.user_blocks_read += n;
                let class = self.read_class();
                for i in 0..req.blocks {
                    let pba = self.l2p.get(req.lba + u64::from(i));
                    if pba == UNMAPPED {
                        continue; // never written or trimmed: the executor's reply stays zero
                    }
                    let (seg, slot) = self.geo.split_pba(pba);
                    let (member, block) = self.geo.slot_location(seg, slot);
                    plan.push_merged(MemberIo {
                        member,
                        block,
                        count: 1,
                        kind: IoKind::Read(Dst::User { offset: i }),
                        class,
                    });
                }
            }
            ReqOp::Write => {
                if !self.has_room(n) {
                    self.counters.no_space += 1;
                    self.starved_for = n;
                    return Ok(Submitted::NoSpace);
                }
                self.starved_for = 0;
                self.counters.user_blocks_written += n;
                let mut last = None;
                for i in 0..req.blocks {
                    let lba = req.lba + u64::from(i);
                    let pba = self.user_slot(plan);
                    self.p2l.set(pba, lba);
                    self.remap(lba, pba);
                    let (seg, slot) = self.geo.split_pba(pba);
                    self.push_slot_write(plan, seg, slot, Src::User { offset: i }, IoClass::User);
                    last = Some((seg, slot));
                }
                if let Some((seg, slot)) = last {
                    self.log_partial_parity(plan, seg, slot, IoClass::User);
                }
                if req.fua {
                    push_flushes(plan, self.geo.members());
                }
            }
            ReqOp::Trim => {
                self.counters.user_blocks_trimmed += n;
                for lba in req.lba..req.lba + n {
                    if self.l2p.get(lba) != UNMAPPED {
                        self.remap(lba, UNMAPPED);
                    }
                }
            }
            ReqOp::Flush => push_flushes(plan, self.geo.members()),
        }
        Ok(Submitted::Planned)
    }

    fn start_gc(&mut self, plan: &mut IoPlan) -> Option<GcJobId> {
        self.start_gc_with(plan, &mut NoSummaries)
    }

    fn finish_gc(&mut self, job: GcJobId, plan: &mut IoPlan) {
        self.finish_job(job, plan);
    }

    fn set_failed_member(&mut self, member: u32, failed: bool) {
        if self.geo.raid == crate::geometry::RaidLevel::Raid0 || member >= self.geo.members() {
            return;
        }
        let group = (member / self.geo.ssds_per_rgroup) as usize;
        match (failed, self.failed_member[group]) {
            (true, _) => self.failed_member[group] = Some(member),
            (false, Some(m)) if m == member => self.failed_member[group] = None,
            _ => {}
        }
        self.degraded[group] = self.failed_member[group].is_some();
    }

    fn status(&self) -> Status {
        let gc_groups = self.jobs.values().fold(0u64, |acc, j| acc | 1u64 << (j.group % 64));
        Status {
            front_group: Some(self.front),
            free_segments: self.segs.free_total(),
            gc_groups,
            segments: self.geo.segments(),
        }
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn locate(&self, lba: u64) -> Option<(MemberId, MemberBlock)> {
        if lba >= self.cfg.volume_blocks {
            return None;
        }
        let pba = self.l2p.get(lba);
        (pba != UNMAPPED).then(|| {
            let (seg, slot) = self.geo.split_pba(pba);
            self.geo.slot_location(seg, slot)
        })
    }

    fn check(&self) -> Result<(), ConsistencyError> {
        self.check_consistency()
    }

    fn heap_bytes(&self) -> u64 {
        self.l2p.heap_bytes()
            + self.p2l.heap_bytes()
            + self.victim_p2l.capacity() as u64 * 8
            + self.live.len() as u64 * 8
            + self.segs.heap_bytes()
            + self.inbound.len() as u64 * 4
    }
}

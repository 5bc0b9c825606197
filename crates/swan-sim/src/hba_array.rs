//! SSDs behind one shared host-bus-adapter bus ([`swan_models::hba`]): the array DiskSim
//! builds for Harmonia's simulator, where every member's data crosses the same bus. The
//! SSDs keep everything else (FTL, elements, GC); their own host link is the bus, so it
//! costs nothing inside them.
//!
//! With a member queue bound ([`SimConfig::member_queue`]), at most that many requests are
//! outstanding at an SSD (a request's operations on it count once, as DiskSim's one
//! sub-request per member); the rest wait and go to it as earlier ones complete, each
//! timed from then ([`Completion::Later`]), as DiskSim's per-device queue holds them. The
//! next to go is the one DiskSim's scheduler picks ([`QueueOrder`]): by default CYCLE_LBN,
//! what the SSD extension's configurations set, or first come, first served.

use crate::engine::{QueueOrder, SimConfig, SimError};
use crate::members::{Completion, Dispatched, Members};
use std::collections::VecDeque;
use swan_core::io::IoClass;
use swan_models::hba::{HbaBus, HbaBusConfig};
use swan_models::ssd::{Ssd, SsdStats};
use swan_models::{DevOp, DevOpKind, Device, Nanos};

/// Bytes per member block (a 4 KiB page).
const BLOCK_BYTES: u64 = 4096;

/// A host link so fast it takes no time: the shared bus carries the data instead.
const LINK_ON_THE_BUS_MBPS: u64 = 1 << 40;

/// The members and the bus they share.
#[derive(Debug)]
pub struct HbaArray {
    ssds: Vec<Ssd>,
    bus: HbaBus,
    /// Per member: when its last transfer over the bus ends (a read is not through until
    /// its data has crossed).
    carried_until: Vec<Nanos>,
    /// The per-device queues, when their depth is bounded.
    queues: Option<MemberQueues>,
}

/// DiskSim's per-device queues: at most `depth` requests outstanding at each member. A
/// request's operations on one member are one entry, as DiskSim gives a member one
/// sub-request per request: here, the operations of one batch (one token).
#[derive(Debug)]
struct MemberQueues {
    depth: usize,
    order: QueueOrder,
    /// Per member, the first block of the request it let out last (DiskSim's `lastblkno`).
    last_block: Vec<u64>,
    /// Per member, the entries outstanding at it: token and when its last operation completes.
    outstanding: Vec<Vec<(u64, Nanos)>>,
    /// Per member, the operations waiting for room, oldest first, with their tokens.
    waiting: Vec<VecDeque<(u64, DevOp)>>,
    /// Operations that left a queue for their SSD, not yet reported.
    reported: VecDeque<Dispatched>,
    /// The time the engine was last asked to wake the array at.
    asked: Option<Nanos>,
}

impl MemberQueues {
    /// Forget `member`'s entries complete by `now`.
    fn retire(&mut self, member: usize, now: Nanos) {
        self.outstanding[member].retain(|&(_, done)| done > now);
    }

    /// The request waiting at `member` to let out next: its token and first block.
    fn next(&self, member: usize) -> Option<(u64, u64)> {
        let waiting = &self.waiting[member];
        let first_block = |token: u64| {
            waiting.iter().filter(|(t, _)| *t == token).map(|(_, op)| op.block).min().expect("a waiting token")
        };
        let (front, _) = *waiting.front()?;
        match self.order {
            QueueOrder::Fcfs => Some((front, first_block(front))),
            QueueOrder::CycleLbn => {
                let last = self.last_block[member];
                // At or after the last block first, in block order; then, wrapping round,
                // from the lowest. The first to arrive wins a tie.
                let mut best: Option<((bool, u64), u64)> = None;
                for &(token, _) in waiting {
                    let block = first_block(token);
                    let key = (block < last, block);
                    if best.is_none_or(|(k, _)| key < k) {
                        best = Some((key, token));
                    }
                }
                best.map(|((_, block), token)| (token, block))
            }
        }
    }

    /// The earliest completion that would make room where operations wait.
    fn next_room(&self) -> Option<Nanos> {
        (0..self.waiting.len())
            .filter(|&m| !self.waiting[m].is_empty())
            .filter_map(|m| self.outstanding[m].iter().map(|&(_, done)| done).min())
            .min()
    }
}

impl HbaArray {
    /// `members` SSDs as `cfg` builds them, behind a bus of `bus`.
    pub fn new(cfg: &SimConfig, bus: HbaBusConfig, members: u32) -> Result<Self, SimError> {
        if bus.mbps == 0 {
            return Err(SimError::Config("the shared HBA bus needs a rate above 0 MB/s".into()));
        }
        let mut inner = cfg.clone();
        inner.ssd.host_mbps = LINK_ON_THE_BUS_MBPS;
        let ssds = crate::engine::build_ssds(&inner, members)?;
        let n = ssds.len();
        let queues = cfg.member_queue.map(|depth| MemberQueues {
            depth: depth as usize,
            order: cfg.member_queue_order,
            last_block: vec![0; n],
            outstanding: vec![Vec::new(); n],
            waiting: vec![VecDeque::new(); n],
            reported: VecDeque::new(),
            asked: None,
        });
        Ok(Self { bus: HbaBus::new(bus, n), carried_until: vec![0; n], ssds, queues })
    }

    pub fn bus(&self) -> &HbaBus {
        &self.bus
    }
}

impl Members for HbaArray {
    #[inline]
    fn count(&self) -> usize {
        self.ssds.len()
    }

    fn submit(&mut self, member: u32, now: Nanos, op: DevOp) -> Nanos {
        let done = self.ssds[member as usize].submit(now, op);
        match op.kind {
            DevOpKind::Read | DevOpKind::Write => {
                let end = self.bus.carry(member, now, done, u64::from(op.count) * BLOCK_BYTES);
                let until = &mut self.carried_until[member as usize];
                *until = (*until).max(end);
                end
            }
            DevOpKind::Trim | DevOpKind::Flush => done,
        }
    }

    fn submit_tracked(&mut self, member: u32, now: Nanos, op: DevOp, token: u64) -> Completion {
        let Some(q) = &mut self.queues else { return Completion::At(self.submit(member, now, op)) };
        let m = member as usize;
        q.retire(m, now);
        // Behind others waiting, or with its request's entry waiting: it waits too.
        if !q.waiting[m].is_empty() {
            q.waiting[m].push_back((token, op));
            return Completion::Later;
        }
        // Its request's entry is out, or there is room for one: it goes now.
        let entry = q.outstanding[m].iter().position(|&(t, _)| t == token);
        if entry.is_none() && q.outstanding[m].len() >= q.depth {
            q.waiting[m].push_back((token, op));
            return Completion::Later;
        }
        let done = self.submit(member, now, op);
        let q = self.queues.as_mut().expect("queues");
        match entry {
            Some(i) => q.outstanding[m][i].1 = q.outstanding[m][i].1.max(done),
            None => {
                q.outstanding[m].push((token, done));
                q.last_block[m] = op.block;
            }
        }
        Completion::At(done)
    }

    fn completed(&mut self) -> Option<Dispatched> {
        self.queues.as_mut()?.reported.pop_front()
    }

    fn wakeup(&mut self) -> Option<Nanos> {
        let q = self.queues.as_mut()?;
        let next = q.next_room()?;
        if q.asked == Some(next) {
            return None;
        }
        q.asked = Some(next);
        Some(next)
    }

    /// Requests waiting go to their SSDs as room is made, in the queue's order
    /// ([`QueueOrder`]), each with all its operations there, in the order they came.
    fn wake(&mut self, now: Nanos) {
        let Some(members) = self.queues.as_ref().map(|q| q.waiting.len()) else { return };
        for m in 0..members {
            loop {
                let q = self.queues.as_mut().expect("queues");
                q.retire(m, now);
                if q.outstanding[m].len() >= q.depth {
                    break;
                }
                let Some((token, block)) = q.next(m) else { break };
                q.outstanding[m].push((token, now));
                q.last_block[m] = block;
                let ops: Vec<DevOp> = q.waiting[m].iter().filter(|(t, _)| *t == token).map(|&(_, op)| op).collect();
                q.waiting[m].retain(|(t, _)| *t != token);
                for op in ops {
                    let member = m as u32;
                    let done = self.submit(member, now, op);
                    let q = self.queues.as_mut().expect("queues");
                    let entry = q.outstanding[m].last_mut().expect("the entry just made");
                    entry.1 = entry.1.max(done);
                    q.reported.push_back(Dispatched { token, member, kind: op.kind, class: op.class, at: now, done });
                }
            }
        }
    }

    /// The SSD's wait only: the bus, shared by all, would delay a read around a busy
    /// member as much as one on it.
    fn read_wait(&self, member: u32, now: Nanos, block: u64, count: u32, class: IoClass) -> Nanos {
        self.ssds[member as usize].read_wait(now, block, count, class)
    }

    fn busy_until(&self, member: u32) -> Nanos {
        self.ssds[member as usize].busy_until().max(self.carried_until[member as usize])
    }

    fn apply_untimed(&mut self, member: u32, op: DevOp) {
        self.ssds[member as usize].apply_untimed(op);
    }

    fn reset_stats(&mut self) {
        self.ssds.iter_mut().for_each(Ssd::reset_stats);
    }

    fn stats(&self, member: u32) -> &SsdStats {
        self.ssds[member as usize].stats()
    }

    fn ssds(&mut self) -> &mut [Ssd] {
        &mut self.ssds
    }

    fn slow_ns(&mut self, member: u32, now: Nanos) -> Nanos {
        self.ssds[member as usize].slow_ns(now)
    }

    fn busy_fraction(&self, member: u32, elapsed: Nanos) -> f64 {
        self.ssds[member as usize].die_busy_fraction(elapsed)
    }

    fn user_blocks(&self, member: u32) -> u64 {
        self.ssds[member as usize].config().user_pages
    }

    fn map_dram_bytes(&self, member: u32) -> u64 {
        self.ssds[member as usize].map_dram_bytes()
    }

    fn model_bytes(&self, member: u32) -> u64 {
        self.ssds[member as usize].model_bytes()
    }
}

#[cfg(test)]
#[path = "hba_array_tests.rs"]
mod tests;

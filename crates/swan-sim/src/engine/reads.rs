//! How the engine plans user reads and what it measures of them: reads around a busy SSD
//! (the scheme decides; the SSD models supply its input, how long a read would wait on
//! each member), and reads by the role of the R-group they land on (SWAN's Table 4), with
//! how long each waited before its SSDs started it and whether user writes were ahead of it.

use super::{Engine, Members};
use serde::Serialize;
use swan_core::io::{IoClass, IoKind, MemberBlock, MemberId};
use swan_core::scheme::{ArrayScheme, ReadWaits, ReqOp, Request, RequestError, SchemeKind, Submitted};
use swan_models::Nanos;

/// The R-group a read lands on, as SWAN's Table 4 splits reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// The front-end R-group, taking every write.
    Front,
    /// A back-end R-group with no GC job in flight.
    IdleBack,
    /// A back-end R-group collecting (a GC job in flight).
    Collecting,
}

/// What a read met on its SSDs when it was handed to them: measured by asking the models,
/// which changes nothing they do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct ReadQueue {
    /// How long the models predict it waits before its SSDs start it (the longest of its
    /// member reads).
    pub(super) wait_ns: Nanos,
    /// Whether a user write handed to one of its SSDs had not yet completed there.
    pub(super) behind_writes: bool,
}

/// Reads and their summed latency, for one role; and the same for those of them that found
/// user writes in flight on their SSD, so that the cost of sharing an SSD with the write
/// stream can be read off without a second run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RoleTally {
    pub reads: u64,
    pub latency_ns_sum: u64,
    /// Summed predicted wait before their SSDs started them.
    pub wait_ns_sum: u64,
    /// Reads that found a user write in flight on one of their SSDs, and their summed latency.
    pub behind_writes: u64,
    pub behind_writes_latency_ns_sum: u64,
}

/// User reads by the role of the R-group they landed on (SWAN only; measured reads only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ReadRoles {
    pub front_end: RoleTally,
    pub idle_back_end: RoleTally,
    pub collecting_back_end: RoleTally,
}

impl ReadRoles {
    pub(super) fn record(&mut self, role: Role, latency_ns: Nanos, queue: ReadQueue) {
        let t = match role {
            Role::Front => &mut self.front_end,
            Role::IdleBack => &mut self.idle_back_end,
            Role::Collecting => &mut self.collecting_back_end,
        };
        t.reads += 1;
        t.latency_ns_sum += latency_ns;
        t.wait_ns_sum += queue.wait_ns;
        if queue.behind_writes {
            t.behind_writes += 1;
            t.behind_writes_latency_ns_sum += latency_ns;
        }
    }
}

/// The member models' prediction of how long a read would wait, at one instant.
struct ModelWaits<'a, M> {
    members: &'a M,
    now: Nanos,
    class: IoClass,
}

impl<M: Members> ReadWaits for ModelWaits<'_, M> {
    fn wait_ns(&mut self, member: MemberId, block: MemberBlock) -> u64 {
        self.members.read_wait(member, self.now, block, 1, self.class)
    }
}

impl<M: Members> Engine<M> {
    /// Plan `req` into the engine's plan: reads around busy SSDs when the run asks for it.
    pub(super) fn plan_request(&mut self, req: &Request) -> Result<Submitted, RequestError> {
        match (&mut self.scheme, self.cfg.reads.parity_policy(), req.op) {
            (ArrayScheme::Log(la), Some(policy), ReqOp::Read) => {
                let class = if la.read_priority() { IoClass::UserPreempt } else { IoClass::User };
                let mut waits = ModelWaits { members: &self.members, now: self.clock.now, class };
                la.submit_read_around(req, &mut self.plan, &mut waits, policy)
            }
            _ => self.scheme.submit(req, &mut self.plan),
        }
    }

    /// The role of the R-group the read just planned lands on (SWAN; `None` otherwise, or
    /// for a read of nothing mapped).
    pub(super) fn read_role(&self) -> Option<Role> {
        let SchemeKind::Swan(_) = self.cfg.array.kind else { return None };
        let first = self.plan.ios().first()?;
        let group = first.member / self.cfg.array.ssds_per_rgroup;
        let status = self.scheme.status();
        Some(if status.front_group == Some(group) {
            Role::Front
        } else if status.gc_groups & (1u64 << (group % 64)) != 0 {
            Role::Collecting
        } else {
            Role::IdleBack
        })
    }

    /// What the read just planned meets on its SSDs, asked of the models before it is handed
    /// to them.
    pub(super) fn read_queue(&self) -> ReadQueue {
        let now = self.clock.now;
        let mut q = ReadQueue::default();
        for io in self.plan.phase(0).iter().filter(|io| matches!(io.kind, IoKind::Read(_))) {
            let wait = self.members.read_wait(io.member, now, io.block, io.count, io.class);
            q.wait_ns = q.wait_ns.max(wait);
            q.behind_writes |= self.user_writes_until[io.member as usize] > now;
        }
        q
    }
}

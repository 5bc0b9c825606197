//! How the engine plans user reads and what it measures of them: reads around a busy SSD
//! (the scheme decides; the SSD models supply its input, how long a read would wait on
//! each member), and reads by the role of the R-group they land on (SWAN's Table 4).

use super::{Engine, Members};
use serde::Serialize;
use swan_core::io::{IoClass, MemberBlock, MemberId};
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

/// Reads and their summed latency, for one role.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RoleTally {
    pub reads: u64,
    pub latency_ns_sum: u64,
}

/// User reads by the role of the R-group they landed on (SWAN only; measured reads only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ReadRoles {
    pub front_end: RoleTally,
    pub idle_back_end: RoleTally,
    pub collecting_back_end: RoleTally,
}

impl ReadRoles {
    pub(super) fn record(&mut self, role: Role, latency_ns: Nanos) {
        let t = match role {
            Role::Front => &mut self.front_end,
            Role::IdleBack => &mut self.idle_back_end,
            Role::Collecting => &mut self.collecting_back_end,
        };
        t.reads += 1;
        t.latency_ns_sum += latency_ns;
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
}

//! How the engine plans user reads and what it measures of them: reads around a busy SSD
//! (the scheme decides; the SSD models supply its input, how long a read would wait on
//! each member), and reads by the role of the R-group they land on (SWAN's Table 4), with
//! how long each waited before its SSDs started it and whether user writes were ahead of it.

use super::{Engine, Members};
use serde::Serialize;
use swan_core::driver::reads::read_class;
use swan_core::driver::{GroupRole, ReadsAround};
use swan_core::io::{IoClass, IoKind, MemberBlock, MemberId};
use swan_core::scheme::{ReadWaits, Request, RequestError, SchemeKind, Submitted};
use swan_models::Nanos;

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
    pub(super) fn record(&mut self, role: GroupRole, latency_ns: Nanos, queue: ReadQueue) {
        let t = match role {
            GroupRole::FrontEnd => &mut self.front_end,
            GroupRole::Idle => &mut self.idle_back_end,
            GroupRole::Collecting => &mut self.collecting_back_end,
            // Not SWAN's R-groups: Table 4 has no row for them.
            GroupRole::Log { .. } | GroupRole::InPlace => return,
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
    /// Plan `req` into the engine's plan, through the driver: reads around busy SSDs when
    /// the run asks for it.
    pub(super) fn plan_request(&mut self, req: &Request) -> Result<Submitted, RequestError> {
        let class = read_class(&self.scheme);
        let mut waits = ModelWaits { members: &self.members, now: self.clock.now, class };
        let around = self.cfg.reads.parity_policy().map(|policy| ReadsAround { waits: &mut waits, policy });
        self.thread.driver.plan(&mut self.scheme, req, &mut self.plan, around)
    }

    /// The role of the R-group the read just planned lands on (SWAN; `None` otherwise, or
    /// for a read of nothing mapped).
    pub(super) fn read_role(&self) -> Option<GroupRole> {
        let kind = self.cfg.array.kind;
        let SchemeKind::Swan(_) = kind else { return None };
        let first = self.plan.ios().first()?;
        Some(GroupRole::of(kind, &self.scheme.status(), first.member / self.cfg.array.ssds_per_rgroup))
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

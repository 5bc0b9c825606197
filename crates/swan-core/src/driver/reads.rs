//! How a user request is planned: a read directly, or around members the driver predicts
//! slow ([`crate::scheme::log::parity_read`]), and never through one that cannot answer.
//!
//! The simulator predicts each member's wait from its SSD models; the server from its
//! emulated SSDs, and a member that is not healthy as waiting forever. The rule that uses
//! the prediction is this one.

use crate::io::{Dst, IoClass, IoKind, IoPlan};
use crate::scheme::{ArrayScheme, ParityReadPolicy, ReadWaits, ReqOp, Request, RequestError, Submitted};

/// Reads around busy members, when a run or a server asks for them: each member's predicted
/// wait, and the policy that weighs it.
pub struct ReadsAround<'a> {
    pub waits: &'a mut dyn ReadWaits,
    pub policy: ParityReadPolicy,
}

/// The class a user read is queued in on its members: SWAN's reads overtake GC's work there
/// when the scheme says so ([`crate::scheme::LogArray::set_read_priority`]).
pub fn read_class(scheme: &ArrayScheme) -> IoClass {
    match scheme {
        ArrayScheme::Log(la) if la.read_priority() => IoClass::UserPreempt,
        _ => IoClass::User,
    }
}

/// Plan user request `req` into `plan` (cleared first). A read of a log-structured array
/// goes around the members `around` predicts slow; should its row need a member predicted
/// never to answer (`u64::MAX`: failed, say, beside the one it avoids), it is planned
/// directly after all. Everything else is planned as the scheme plans it.
pub fn plan_request(
    scheme: &mut ArrayScheme,
    req: &Request,
    plan: &mut IoPlan,
    around: Option<ReadsAround<'_>>,
) -> Result<Submitted, RequestError> {
    let (ArrayScheme::Log(la), Some(around), ReqOp::Read) = (&mut *scheme, around, req.op) else {
        return scheme.submit(req, plan);
    };
    let submitted = la.submit_read_around(req, plan, around.waits, around.policy)?;
    let through_unanswering = plan.ios().iter().any(|p| {
        matches!(p.kind, IoKind::Read(Dst::Rebuild { .. })) && around.waits.wait_ns(p.member, p.block) == u64::MAX
    });
    if through_unanswering {
        return scheme.submit(req, plan);
    }
    Ok(submitted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::RaidLevel;
    use crate::io::{MemberBlock, MemberId};
    use crate::scheme::{ArraySpec, SchemeKind};
    use crate::victim::VictimPolicy;

    /// Member 0 busy; `dead` predicted never to answer.
    struct Waits {
        dead: Option<MemberId>,
    }

    impl ReadWaits for Waits {
        fn wait_ns(&mut self, member: MemberId, _block: MemberBlock) -> u64 {
            match member {
                m if Some(m) == self.dead => u64::MAX,
                0 => 10_000_000,
                _ => 0,
            }
        }
    }

    fn filled_swan5() -> (ArrayScheme, Request) {
        let spec = ArraySpec {
            kind: SchemeKind::Swan(RaidLevel::Raid5),
            rgroups: 2,
            ssds_per_rgroup: 3,
            member_blocks: 4096,
            member_offset: 0,
            segment_rows: 64,
            chunk_blocks: 16,
            victim: VictimPolicy::Greedy,
            tuning: Default::default(),
        };
        let mut s = spec.build().expect("scheme");
        let mut plan = IoPlan::new();
        // Fill more than a segment so the first one is sealed: its rows may be read around.
        let seg_blocks = 64 * 2;
        for lba in 0..2 * seg_blocks {
            assert_eq!(s.submit(&Request::new(ReqOp::Write, lba, 1), &mut plan), Ok(Submitted::Planned));
        }
        let first_on_0 = (0..seg_blocks).find(|&l| s.locate(l).is_some_and(|(m, _)| m == 0)).expect("a block on 0");
        (s, Request::new(ReqOp::Read, first_on_0, 1))
    }

    fn rebuilds(plan: &IoPlan) -> usize {
        plan.ios().iter().filter(|p| matches!(p.kind, IoKind::Read(Dst::Rebuild { .. }))).count()
    }

    #[test]
    fn a_read_goes_around_a_busy_member_but_never_through_a_dead_one() {
        let (mut s, read) = filled_swan5();
        let policy = ParityReadPolicy { min_gain_ns: 1_000 };
        let mut plan = IoPlan::new();
        plan_request(&mut s, &read, &mut plan, None).expect("planned");
        assert_eq!(rebuilds(&plan), 0, "no prediction: read directly");
        let mut waits = Waits { dead: None };
        plan_request(&mut s, &read, &mut plan, Some(ReadsAround { waits: &mut waits, policy })).expect("planned");
        assert!(rebuilds(&plan) > 0, "member 0 busy: read around it");
        let mut waits = Waits { dead: Some(1) };
        plan_request(&mut s, &read, &mut plan, Some(ReadsAround { waits: &mut waits, policy })).expect("planned");
        assert_eq!(rebuilds(&plan), 0, "its row needs a member that never answers: read directly");
        assert_eq!(plan.ios()[0].member, 0);
    }
}

//! GC jobs in flight: each one's plan and how far a driver has handed it out, and how a
//! thread that shares itself between GC and user requests paces them.
//!
//! The scheme plans a job whole ([`crate::scheme::Scheme::start_gc`]): read the victim's
//! live blocks, then write them to their new slots, then (in the follow-up
//! [`crate::scheme::Scheme::finish_gc`] plans) seal and trim. A driver hands the phases out
//! in order, a phase only once the one before it has completed on the members. The server's
//! engine thread carries them out an operation at a time between batches of user requests
//! ([`GcPacing::SERVED`]); a host whose GC has a thread of its own (the SWAN paper's) hands
//! a phase to the SSDs whole ([`GcPacing::WHOLE`]).

use crate::io::{IoPlan, MemberIo};
use crate::scheme::{ArrayScheme, GcJobId, SummarySource};

/// How a thread shares itself between user requests and GC, round by round
/// ([`super::ArrayDriver`]): up to `batch` user requests a round, then `ops_busy` GC steps
/// (member operations, or finishing a job) while requests wait or `ops_idle` while none do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcPacing {
    pub batch: usize,
    pub ops_busy: usize,
    pub ops_idle: usize,
}

impl GcPacing {
    /// The server's: a request waits for at most one GC operation after a batch of 64.
    pub const SERVED: GcPacing = GcPacing { batch: 64, ops_busy: 1, ops_idle: 16 };

    /// Unpaced: every request waiting is taken, and every GC phase that may go out goes
    /// out whole, as GC on a thread of its own does (the SWAN paper's kernel thread, or a
    /// simulated array with no host modelled).
    pub const WHOLE: GcPacing = GcPacing { batch: usize::MAX, ops_busy: usize::MAX, ops_idle: usize::MAX };

    /// Whether a phase goes out whole: GC unpaced.
    pub fn is_whole(&self) -> bool {
        self.ops_busy == usize::MAX
    }

    /// GC operations this round, with user requests waiting or not.
    pub fn ops(&self, requests_waiting: bool) -> usize {
        if requests_waiting {
            self.ops_busy
        } else {
            self.ops_idle
        }
    }
}

/// One GC job: its plan and the operations of it handed out so far.
#[derive(Debug)]
pub struct GcJob {
    pub id: GcJobId,
    /// The R-group it collects in (`None` for a scheme without R-groups of its own).
    pub group: Option<u32>,
    plan: IoPlan,
    phase: usize,
    next: usize,
}

impl GcJob {
    /// The next GC job the scheme wants now, planned (a log-structured array reads its
    /// victim's P2L through `summaries`); `None` when it wants none.
    pub fn start(scheme: &mut ArrayScheme, summaries: &mut dyn SummarySource) -> Option<GcJob> {
        let mut plan = IoPlan::new();
        let id = scheme.start_gc_with(&mut plan, summaries)?;
        let group = scheme.gc_group(id);
        Some(GcJob { id, group, plan, phase: 0, next: 0 })
    }

    pub fn plan(&self) -> &IoPlan {
        &self.plan
    }

    /// The phase being handed out (the plan's phase count once all are).
    pub fn phase(&self) -> usize {
        self.phase
    }

    /// Every phase has been handed out (at once, for a job with no I/O).
    pub fn handed_out_whole(&self) -> bool {
        self.phase >= self.plan.phase_count()
    }

    /// The current phase's operations not handed out yet.
    pub fn pending(&self) -> &[MemberIo] {
        if self.handed_out_whole() {
            return &[];
        }
        &self.plan.phase(self.phase)[self.next..]
    }

    /// `n` more of the current phase's operations were handed out. True when that was the
    /// phase's last: the next phase is current, to be handed out once this one completes.
    pub fn hand_out(&mut self, n: usize) -> bool {
        assert!(n <= self.pending().len(), "handing out {n} of {} pending GC operations", self.pending().len());
        self.next += n;
        if self.next < self.plan.phase(self.phase).len() {
            return false;
        }
        self.phase += 1;
        self.next = 0;
        true
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::geometry::RaidLevel;
    use crate::scheme::{ArraySpec, NoSummaries, ReqOp, Request, SchemeKind, GC_WRITE_PHASE};
    use crate::victim::VictimPolicy;

    /// A small SWAN0 array: 3 R-groups of 2 members of 2048 blocks, 32-row segments.
    pub(crate) fn small_swan0() -> ArrayScheme {
        small_swan0_spec().build().expect("scheme")
    }

    pub(crate) fn small_swan0_spec() -> ArraySpec {
        ArraySpec {
            kind: SchemeKind::Swan(RaidLevel::Raid0),
            rgroups: 3,
            ssds_per_rgroup: 2,
            member_blocks: 2048,
            member_offset: 0,
            segment_rows: 32,
            chunk_blocks: 16,
            victim: VictimPolicy::Greedy,
            tuning: Default::default(),
        }
    }

    /// A SWAN0 array overwritten at random until GC starts a job that moves live blocks.
    pub(crate) fn a_job_that_moves_blocks() -> (ArrayScheme, GcJob) {
        let mut s = small_swan0();
        let (mut plan, mut follow) = (IoPlan::new(), IoPlan::new());
        let volume = s.volume_blocks();
        let mut lba: u64 = 1;
        for _ in 0..20 * volume {
            lba = lba.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            s.submit(&Request::new(ReqOp::Write, (lba >> 33) % volume, 1), &mut plan).expect("write");
            while let Some(job) = GcJob::start(&mut s, &mut NoSummaries) {
                if job.plan().phase_count() > GC_WRITE_PHASE {
                    return (s, job);
                }
                s.finish_gc(job.id, &mut follow);
            }
        }
        panic!("no GC job moved a block");
    }

    #[test]
    fn a_job_is_handed_out_phase_by_phase_in_the_scheme_s_order() {
        let (_, mut job) = a_job_that_moves_blocks();
        assert!(job.group.is_some_and(|g| g < 3), "the job names its R-group");
        assert!(job.plan().phase_count() > GC_WRITE_PHASE, "reads, then writes");
        let reads = job.plan().phase(0).len();
        assert_eq!(job.pending().len(), reads);
        assert!(!job.hand_out(1) || reads == 1);
        assert_eq!(job.pending().len(), reads - 1, "one handed out");
        assert!(job.hand_out(reads - 1), "the read phase is handed out");
        assert_eq!(job.phase(), GC_WRITE_PHASE);
        assert_eq!(job.pending(), job.plan().phase(GC_WRITE_PHASE));
        while !job.handed_out_whole() {
            let n = job.pending().len();
            assert!(job.hand_out(n));
        }
        assert!(job.pending().is_empty());
    }

    #[test]
    fn pacing_gives_gc_one_operation_while_requests_wait() {
        assert_eq!(GcPacing::SERVED.ops(true), 1);
        assert_eq!(GcPacing::SERVED.ops(false), 16);
    }
}

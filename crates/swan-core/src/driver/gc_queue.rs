//! The GC jobs in flight, in the order they started: which may hand out an operation now,
//! and when each phase is done.
//!
//! A job's phase may go out only once every operation of the phase before it has completed
//! on the members. The faces keep their jobs here through [`super::ArrayDriver`] and only
//! carry the operations out: the server does each at once and knows when it completes (on
//! the emulated model, or now); the simulator learns when a phase is done from its models
//! and lands it ([`GcQueue::phase_landed`]). Each face keeps its own state beside a job
//! (`X`: the server's staged copies, the simulator's phase on the members).

use super::GcJob;
use crate::scheme::GcJobId;
use std::collections::VecDeque;

/// A job in the queue, with what the face keeps beside it.
#[derive(Debug)]
pub struct GcRun<X> {
    pub job: GcJob,
    pub face: X,
    /// The current phase may go out from this time (nanoseconds, the driver's clock);
    /// `None` while the phase before it still has operations on the members.
    open_at: Option<u64>,
    /// When the operations handed out so far complete, the latest.
    phase_end: u64,
    /// Operations handed out whose completion is not known yet.
    in_flight: u32,
    /// The members the phase being handed out (or handed out last) went to.
    members: u64,
    /// The phase handed out last has not been asked whether its members are through with it
    /// ([`GcQueue::pushed_back`]).
    unchecked: bool,
}

impl<X> GcRun<X> {
    /// When the current phase may go out, if that is known.
    pub fn open_at(&self) -> Option<u64> {
        self.open_at
    }

    /// The job may proceed at `now`: hand out its current phase's next operation, or, every
    /// phase done, be finished.
    fn ready(&self, now: u64) -> bool {
        self.open_at.is_some_and(|t| t <= now)
    }
}

/// A phase of no operations completes as it opens: the job's current phase is the next
/// with an operation (or none is left).
fn skip_empty_phases(job: &mut GcJob) {
    while !job.handed_out_whole() && job.pending().is_empty() {
        job.hand_out(0);
    }
}

/// The GC jobs in flight, oldest first.
#[derive(Debug)]
pub struct GcQueue<X> {
    runs: VecDeque<GcRun<X>>,
}

impl<X> Default for GcQueue<X> {
    fn default() -> Self {
        Self { runs: VecDeque::new() }
    }
}

impl<X> GcQueue<X> {
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// A job started at `now`: its first phase may go out at once.
    pub(crate) fn push(&mut self, mut job: GcJob, face: X, now: u64) {
        skip_empty_phases(&mut job);
        self.runs.push_back(GcRun {
            job,
            face,
            open_at: Some(now),
            phase_end: now,
            in_flight: 0,
            members: 0,
            unchecked: false,
        });
    }

    fn index(&self, id: GcJobId) -> usize {
        self.runs.iter().position(|r| r.job.id == id).unwrap_or_else(|| panic!("GC job {id} is not in the queue"))
    }

    pub fn get(&self, id: GcJobId) -> &GcRun<X> {
        &self.runs[self.index(id)]
    }

    pub fn get_mut(&mut self, id: GcJobId) -> &mut GcRun<X> {
        let i = self.index(id);
        &mut self.runs[i]
    }

    /// The first job, in the order they started, that may proceed at `now`.
    pub fn first_ready(&self, now: u64) -> Option<GcJobId> {
        self.first_ready_run(now).map(|r| r.job.id)
    }

    pub(crate) fn first_ready_run(&self, now: u64) -> Option<&GcRun<X>> {
        self.runs.iter().find(|r| r.ready(now))
    }

    /// `n` more of job `id`'s current phase were handed out; `done`: when they complete on
    /// the members, if known now (else the face lands the phase, [`GcQueue::phase_landed`]). True when that
    /// was the phase's last: the next goes out once all of this one completed.
    pub(crate) fn handed_out(&mut self, id: GcJobId, n: usize, done: Option<u64>) -> bool {
        let r = self.get_mut(id);
        for io in &r.job.pending()[..n] {
            r.members |= 1u64 << (io.member % 64);
        }
        match done {
            Some(t) => r.phase_end = r.phase_end.max(t),
            None => r.in_flight += u32::try_from(n).expect("a phase's operations fit u32"),
        }
        let phase_ended = r.job.hand_out(n);
        if phase_ended {
            r.unchecked = true;
            r.open_at = (r.in_flight == 0).then_some(r.phase_end);
            skip_empty_phases(&mut r.job);
        }
        phase_ended
    }

    /// Every operation of job `id` handed out without a completion time completed by `at`
    /// (the face learned it from its members): once its phase is handed out whole, the next
    /// may go out from `at`, or the job be finished.
    pub(crate) fn phase_landed(&mut self, id: GcJobId, at: u64) {
        let r = self.get_mut(id);
        assert!(r.open_at.is_none(), "GC job {id} landed a phase it was still handing out");
        r.in_flight = 0;
        r.phase_end = r.phase_end.max(at);
        r.open_at = Some(r.phase_end);
    }

    /// Whether job `id`'s last phase, said complete by now, is not: a member it went to is
    /// still busy (`busy_until`, the face's members' own word) because work that overtook
    /// it there (SWAN's reads preempt GC) pushed it back. Then it opens when they are
    /// through, to be asked again then; else the phase is done with.
    pub(crate) fn pushed_back(&mut self, id: GcJobId, now: u64, busy_until: &dyn Fn(u32) -> u64) -> bool {
        let r = self.get_mut(id);
        if !r.unchecked {
            return false;
        }
        let late = (0..64u32).filter(|m| r.members & (1 << m) != 0).map(busy_until).max().unwrap_or(0);
        if late > now {
            r.phase_end = r.phase_end.max(late);
            r.open_at = Some(late);
            return true;
        }
        r.members = 0;
        r.unchecked = false;
        false
    }

    /// Job `id`, every phase of it handed out and completed, leaves the queue to be finished
    /// with the scheme.
    pub(crate) fn finish(&mut self, id: GcJobId) -> GcRun<X> {
        let i = self.index(id);
        let r = self.runs.remove(i).expect("index");
        assert!(
            r.job.handed_out_whole() && r.in_flight == 0,
            "GC job {id} finished before its every operation completed"
        );
        r
    }

    /// Every job, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &GcRun<X>> {
        self.runs.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::gc::tests::a_job_that_moves_blocks;
    use crate::io::IoPlan;
    use crate::scheme::{ArrayScheme, NoSummaries, ReqOp, Request};

    /// More random overwrites until the scheme wants another job.
    fn a_second_job(s: &mut ArrayScheme) -> GcJob {
        let mut plan = IoPlan::new();
        let volume = s.volume_blocks();
        let mut lba: u64 = 7;
        for _ in 0..volume {
            if let Some(j) = GcJob::start(s, &mut NoSummaries) {
                return j;
            }
            lba = lba.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            s.submit(&Request::new(ReqOp::Write, (lba >> 33) % volume, 1), &mut plan).expect("write");
        }
        panic!("the array wants no second GC job");
    }

    #[test]
    fn a_phase_opens_when_the_one_before_it_completed() {
        let (_, job) = a_job_that_moves_blocks();
        let id = job.id;
        let reads = job.pending().len();
        let mut q: GcQueue<()> = GcQueue::default();
        q.push(job, (), 100);
        assert_eq!(q.first_ready(99), None, "not before it started");
        assert_eq!(q.first_ready(100), Some(id));
        // The reads complete at 500, the last of them at 700.
        for k in 0..reads {
            let ended = q.handed_out(id, 1, Some(if k + 1 == reads { 700 } else { 500 }));
            assert_eq!(ended, k + 1 == reads);
        }
        assert_eq!(q.first_ready(699), None, "the writes wait for the last read");
        assert_eq!(q.first_ready(700), Some(id));
        assert!(!q.get(id).job.pending().is_empty(), "with the writes to hand out");
    }

    #[test]
    fn operations_in_flight_hold_the_next_phase_until_it_lands() {
        let (_, job) = a_job_that_moves_blocks();
        let id = job.id;
        let reads = job.pending().len();
        let mut q: GcQueue<u8> = GcQueue::default();
        q.push(job, 7, 0);
        assert!(q.handed_out(id, reads, None), "the read phase, handed out whole");
        assert_eq!(q.get(id).open_at(), None, "its completion is not known");
        assert_eq!(q.first_ready(u64::MAX), None);
        q.phase_landed(id, 5_000);
        assert_eq!(q.first_ready(4_999), None, "not before it landed");
        assert_eq!(q.first_ready(5_000), Some(id));
        assert_eq!(q.get(id).face, 7);
    }

    #[test]
    fn the_oldest_ready_job_goes_first_and_a_job_finishes_once_whole() {
        let (mut s, a) = a_job_that_moves_blocks();
        let (ida, reads) = (a.id, a.pending().len());
        let mut q: GcQueue<()> = GcQueue::default();
        q.push(a, (), 0);
        // A second job: GC of another victim, started later.
        let b = a_second_job(&mut s);
        let idb = b.id;
        q.push(b, (), 10);
        q.handed_out(ida, reads, Some(50));
        assert_eq!(q.first_ready(20), Some(idb), "the first waits for its reads");
        assert_eq!(q.first_ready(50), Some(ida), "then it is first again");
        while !q.get(ida).job.handed_out_whole() {
            let n = q.get(ida).job.pending().len();
            q.handed_out(ida, n, Some(60));
        }
        assert_eq!(q.first_ready(60), Some(ida), "it is ready to finish");
        assert!(q.get(ida).job.handed_out_whole());
        q.finish(ida);
        assert_eq!(q.len(), 1);
        assert_eq!(q.first_ready(60), Some(idb));
    }
}

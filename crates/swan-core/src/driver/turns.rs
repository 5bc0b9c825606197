//! The engine thread's turns: what a face does next around the scheme, decided here once.
//!
//! Both faces run one thread of decisions around the scheme: the server's engine thread, and
//! the simulator's model of it (with a host model, a thread whose turns take CPU time;
//! without one, a thread of infinite speed). [`ArrayDriver::next`] says what that thread does
//! next, and the face only carries it out: the server turns member operations into bytes,
//! journal records and CRCs, the simulator into device times. Its answers follow a round:
//!
//! 1. a **batch**: up to [`GcPacing::batch`] user requests waiting are taken
//!    ([`Turn::Take`]), each planned through [`ArrayDriver::plan`]; then [`Turn::EndBatch`];
//! 2. **GC**: the jobs the scheme wants are started ([`Turn::GcStarted`]), then up to
//!    [`GcPacing::ops`] GC steps, each one member operation of the oldest job that may
//!    proceed ([`Turn::GcOp`]) or the finish of a job whose every phase completed
//!    ([`Turn::FinishGc`]);
//! 3. the round's **end**: a sync point releases the victims waiting if core's
//!    [`ReleaseClock`] says one is due ([`Turn::Release`], at most once a round); then
//!    [`Turn::EndRound`], or [`Turn::Wait`] when the round did nothing.
//!
//! A write the scheme has no room for stays first in line ([`ArrayDriver::plan`] said
//! [`Submitted::NoSpace`]) and no request is taken past it: until space comes, the turns
//! are those [`ForSpace`] gives (GC steps, unpaced; a sync point that releases victims,
//! which ends the batch; or [`Turn::NoSpace`] when nothing can free space). It is taken
//! again once victims are released, or once a job finishes whose victim a scheme that does
//! not defer release freed at once.
//!
//! Fed the same requests at the same times and the same member completion times, two faces
//! get the same turns; [`ArrayDriver::record`] keeps the decisions ([`Decision`]) so a test
//! can compare them.

use super::gc_queue::{GcQueue, GcRun};
use super::reads::{plan_request, ReadsAround};
use super::release::{ForSpace, ReleaseClock, RELEASE_BATCH};
use super::{GcJob, GcPacing};
use crate::io::{IoPlan, MemberId, MemberIo};
use crate::scheme::{ArrayScheme, GcJobId, ReqOp, Request, RequestError, Submitted, SummarySource};

/// What the driver asks of a face's members: a GC victim's summary (a scheme that keeps
/// no P2L of sealed segments reads it there), and when each member will have finished
/// everything given it so far, its own work included. The second is how a face's models
/// say that work which overtook GC there (SWAN's reads preempt it) pushed a phase back
/// past what its operations said when they went out; a face with no model says 0.
pub trait MemberView: SummarySource {
    fn busy_until(&self, member: MemberId) -> u64;
}

/// What the engine thread does next ([`ArrayDriver::next`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Take the first request waiting and plan it with [`ArrayDriver::plan`] (a request the
    /// face answers without the scheme, a FLUSH say, is taken all the same).
    Take,
    /// The batch taken this round is complete: its journal record and replies may follow.
    EndBatch,
    /// GC job `job` was started (it is in [`ArrayDriver::gc`]).
    GcStarted { job: GcJobId, group: Option<u32> },
    /// Carry out the next operation of job `job`'s current phase (`whole`: every one of the
    /// phase's operations pending, GC being unpaced), then [`ArrayDriver::handed_out`].
    GcOp { job: GcJobId, whole: bool },
    /// Job `job`'s every phase completed: take it with [`ArrayDriver::finish`], finish it
    /// with the scheme, then [`ArrayDriver::finished`].
    FinishGc(GcJobId),
    /// Run a sync point; if it made the map durable, [`ArrayDriver::release`].
    Release,
    /// The write first in line has no space and nothing can free any: fail it.
    NoSpace,
    /// The round is over; another may follow at once.
    EndRound,
    /// Nothing to do before `until` (a GC phase opening, the release clock; nanoseconds on
    /// the driver's clock), or before a request arrives or a phase the face carries lands.
    Wait { until: Option<u64> },
}

/// One decision, as [`ArrayDriver::trace`] keeps them in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// A user request was planned (`planned` false: no space, it waits first in line).
    Planned { op: ReqOp, lba: u64, blocks: u32, planned: bool },
    /// A GC job was started in R-group `group` (`None`: a scheme without R-groups).
    Started { job: GcJobId, group: Option<u32> },
    /// One of a job's operations was handed out.
    Op { job: GcJobId, io: MemberIo },
    /// A job's every phase completed: it was finished with the scheme.
    Finished { job: GcJobId },
    /// A sync point released `victims` victims.
    Released { victims: usize },
    /// The write first in line was failed for want of space.
    NoSpace,
}

/// Where the round is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Taking requests: `taken` so far; `closed` once no more may be taken this round.
    Batch { taken: usize, closed: bool },
    /// GC's steps, `left` of this round's.
    Gc { left: usize },
    /// The release check.
    End,
    /// The round's end, after a release.
    Close,
}

const ROUND_START: Stage = Stage::Batch { taken: 0, closed: false };

/// The decisions around one array's scheme; `X` is what the face keeps beside a GC job.
#[derive(Debug)]
pub struct ArrayDriver<X> {
    gc: GcQueue<X>,
    release: ReleaseClock,
    pacing: GcPacing,
    rgroups: u32,
    stage: Stage,
    /// The write first in line has no space.
    stalled: bool,
    /// The scheme changed since it last said no GC job can start: only then is it worth
    /// asking again (`start_gc` depends on nothing else).
    may_start: bool,
    /// GC may run (a face stops it after a member error, or while it refuses writes).
    gc_allowed: bool,
    /// A sync point may release victims (a face that can make nothing durable holds them).
    release_allowed: bool,
    /// This round took, stepped, started or released something.
    busy: bool,
    /// This round's GC steps ended because none could proceed (not at the pacing's limit)
    /// and it ran no sync point: a round after it at the same instant finds the same.
    quiet: bool,
    trace: Option<Vec<Decision>>,
}

impl<X: Default> ArrayDriver<X> {
    /// A driver for an array of `rgroups` R-groups whose thread paces GC by `pacing`.
    pub fn new(rgroups: u32, pacing: GcPacing) -> Self {
        ArrayDriver {
            gc: GcQueue::default(),
            release: ReleaseClock::default(),
            pacing,
            rgroups,
            stage: ROUND_START,
            stalled: false,
            may_start: true,
            gc_allowed: true,
            release_allowed: true,
            busy: false,
            quiet: false,
            trace: None,
        }
    }

    /// From now on, keep every decision ([`ArrayDriver::trace`]).
    pub fn record(&mut self) {
        self.trace.get_or_insert_with(Vec::new);
    }

    /// The decisions kept since [`ArrayDriver::record`] (none if it was not called).
    pub fn trace(&self) -> &[Decision] {
        self.trace.as_deref().unwrap_or(&[])
    }

    /// The decisions kept so far, taken (recording goes on).
    pub fn take_trace(&mut self) -> Vec<Decision> {
        self.trace.as_mut().map(std::mem::take).unwrap_or_default()
    }

    fn note(&mut self, d: Decision) {
        if let Some(t) = &mut self.trace {
            t.push(d);
        }
    }

    /// The GC jobs in flight, with what the face keeps beside each.
    pub fn gc(&self) -> &GcQueue<X> {
        &self.gc
    }

    pub fn gc_mut(&mut self) -> &mut GcQueue<X> {
        &mut self.gc
    }

    /// Whether a write waits first in line for space.
    pub fn stalled(&self) -> bool {
        self.stalled
    }

    /// Whether victims wait for a sync point to release them.
    pub fn release_waiting(&self) -> bool {
        self.release.is_waiting()
    }

    /// The face changed the scheme outside these turns (a member's health, say): it may
    /// want a GC job it did not want before.
    pub fn scheme_changed(&mut self) {
        self.may_start = true;
    }

    /// Whether GC may start and step: a face stops it after an error it cannot get past, or
    /// while it refuses writes. Jobs in flight stay.
    pub fn allow_gc(&mut self, allowed: bool) {
        if allowed && !self.gc_allowed {
            self.may_start = true;
        }
        self.gc_allowed = allowed;
    }

    /// Whether the round's end runs a sync point for the victims due: a face that can make
    /// nothing durable now (a full file system) holds it, the sync point could only fail.
    pub fn allow_release(&mut self, allowed: bool) {
        self.release_allowed = allowed;
    }

    /// What to do next, at `now` (nanoseconds from any fixed origin, never going back), with
    /// user requests `waiting` or not, the face's members seen through `members`. See the
    /// module comment for the round the answers follow.
    // Asked three or four times a request: inlined into the face's loop, the round's stage
    // and the face's match on the turn it gives compile into one.
    #[inline(always)]
    pub fn next(&mut self, now: u64, scheme: &mut ArrayScheme, members: &mut dyn MemberView, waiting: bool) -> Turn {
        // The stages in their order, as straight-line code: each either answers or falls to
        // the next, so a round's walk from GC to its end costs no dispatch on the stage.
        if let Stage::Batch { taken, closed } = self.stage {
            if self.stalled && !closed {
                return self.for_space(now, scheme, members);
            }
            if waiting && !closed && taken < self.pacing.batch {
                self.stage = Stage::Batch { taken: taken + 1, closed };
                self.busy = true;
                return Turn::Take;
            }
            if let Some(t) = self.start_job(scheme, members, now) {
                return t;
            }
            self.stage = Stage::Gc { left: self.pacing.ops(waiting) };
            return Turn::EndBatch;
        }
        if let Stage::Gc { left } = self.stage {
            if left > 0 {
                if let Some(t) = self.gc_step(now, scheme, members) {
                    self.stage = Stage::Gc { left: left - 1 };
                    return t;
                }
            }
            self.quiet = left > 0;
            self.stage = Stage::End;
        }
        if self.stage == Stage::End {
            let pending = scheme.pending_release();
            self.release.waiting(pending, now);
            self.stage = Stage::Close;
            if self.release_allowed && self.release.due(pending, self.rgroups, now) {
                self.busy = true;
                self.quiet = false;
                return Turn::Release;
            }
        }
        debug_assert_eq!(self.stage, Stage::Close);
        self.stage = ROUND_START;
        let busy = std::mem::take(&mut self.busy);
        if busy {
            Turn::EndRound
        } else {
            Turn::Wait { until: self.until(now) }
        }
    }

    /// Right after [`Turn::EndRound`], at the same `now`, nothing changed since: whether the
    /// round that would follow, with no request `waiting`, can only end in [`Turn::Wait`]
    /// (nothing stalled, no job to start, no GC step ready, no sync point due), and if so
    /// the time it would wait until. A face may wait at once instead of running that round:
    /// the decisions are the same.
    pub fn quiet_ahead(&self, now: u64, waiting: bool) -> Option<Option<u64>> {
        let job_may_start = self.may_start && self.gc_allowed;
        let active = waiting || self.stalled || job_may_start || !self.quiet;
        (!active && self.stage == ROUND_START).then(|| self.until(now))
    }

    /// The write first in line has no space: start the jobs the scheme gives before deciding
    /// no more victims are coming, then release, collect or give up as [`ForSpace`] says.
    fn for_space(&mut self, now: u64, scheme: &mut ArrayScheme, members: &mut dyn MemberView) -> Turn {
        let pending = scheme.pending_release();
        let due = self.release.due(pending, self.rgroups, now);
        if !due && pending < RELEASE_BATCH {
            if let Some(t) = self.start_job(scheme, members, now) {
                return t;
            }
        }
        let gc_running = self.gc_allowed && !self.gc.is_empty();
        let wait = if due { ForSpace::Release } else { ForSpace::for_waiting_write(pending, gc_running) };
        match wait {
            ForSpace::Release => {
                self.stalled = false;
                self.close_batch();
                self.busy = true;
                Turn::Release
            }
            ForSpace::Nothing => {
                self.stalled = false;
                self.close_batch();
                self.note(Decision::NoSpace);
                Turn::NoSpace
            }
            ForSpace::Collect => match self.gc_step(now, scheme, members) {
                Some(t) => t,
                None => {
                    // Nothing to collect before a phase completes: the batch taken so far
                    // goes out, and the round ends, to wait.
                    self.stage = Stage::Gc { left: 0 };
                    Turn::EndBatch
                }
            },
        }
    }

    /// No more requests this round: the one that waited for space is taken again next round.
    fn close_batch(&mut self) {
        if let Stage::Batch { taken, .. } = self.stage {
            self.stage = Stage::Batch { taken, closed: true };
        }
    }

    /// The next GC job the scheme wants, started, if it may want one.
    fn start_job(&mut self, scheme: &mut ArrayScheme, members: &mut dyn MemberView, now: u64) -> Option<Turn> {
        if !self.may_start || !self.gc_allowed {
            return None;
        }
        let Some(job) = GcJob::start(scheme, members) else {
            self.may_start = false;
            return None;
        };
        let (id, group) = (job.id, job.group);
        self.note(Decision::Started { job: id, group });
        self.gc.push(job, X::default(), now);
        self.busy = true;
        Some(Turn::GcStarted { job: id, group })
    }

    /// The oldest job that may proceed: its next operation, or its finish. Where reads
    /// preempt GC, a phase said complete is first checked against its members, which may
    /// still be busy with it (then it waits for them).
    fn gc_step(&mut self, now: u64, scheme: &ArrayScheme, members: &dyn MemberView) -> Option<Turn> {
        if !self.gc_allowed {
            return None;
        }
        let preemptible = scheme.gc_preemptible();
        loop {
            let run = self.gc.first_ready_run(now)?;
            let (id, whole) = (run.job.id, run.job.handed_out_whole());
            if preemptible && self.gc.pushed_back(id, now, &|m| members.busy_until(m)) {
                continue;
            }
            self.busy = true;
            return Some(if whole {
                Turn::FinishGc(id)
            } else {
                Turn::GcOp { job: id, whole: self.pacing.is_whole() }
            });
        }
    }

    /// A GC step outside the round, for a face that must run its jobs to their end first (the
    /// server before a sync point with a member failed): the oldest job's next operation or
    /// its finish, if one may proceed at `now`.
    pub fn drain_step(&mut self, now: u64, scheme: &ArrayScheme, members: &dyn MemberView) -> Option<Turn> {
        self.gc_step(now, scheme, members)
    }

    /// When something is next due by time alone: a phase opening, or the oldest victim's
    /// release. `None`: nothing is (what comes next is a request, or a phase the face lands).
    fn until(&self, now: u64) -> Option<u64> {
        let phases = self.gc.iter().filter_map(|r| r.open_at());
        phases.chain(self.release.deadline()).filter(|&t| t > now).min()
    }

    /// Plan user request `req` (taken at [`Turn::Take`]) into `plan`, reads around busy
    /// members as `around` says ([`plan_request`]). [`Submitted::NoSpace`]: it stays first
    /// in line, and the turns that follow are those of a write waiting for space.
    pub fn plan(
        &mut self,
        scheme: &mut ArrayScheme,
        req: &Request,
        plan: &mut IoPlan,
        around: Option<ReadsAround<'_>>,
    ) -> Result<Submitted, RequestError> {
        let submitted = plan_request(scheme, req, plan, around)?;
        let planned = submitted == Submitted::Planned;
        self.note(Decision::Planned { op: req.op, lba: req.lba, blocks: req.blocks, planned });
        // Even a write refused for space changes what GC the scheme wants: the room it needs.
        self.may_start = true;
        self.stalled = !planned;
        Ok(submitted)
    }

    /// `n` more of job `id`'s current phase were handed out (at [`Turn::GcOp`]); `done`:
    /// when they complete on the members, if known now (else the face lands the phase with
    /// [`ArrayDriver::phase_landed`]). True when that was the phase's last.
    pub fn handed_out(&mut self, id: GcJobId, n: usize, done: Option<u64>) -> bool {
        if self.trace.is_some() {
            let ios: Vec<MemberIo> = self.gc.get(id).job.pending()[..n].to_vec();
            for io in ios {
                self.note(Decision::Op { job: id, io });
            }
        }
        self.gc.handed_out(id, n, done)
    }

    /// Every operation of job `id`'s phase handed out without a completion time completed
    /// by `at`: the next phase may go out then.
    pub fn phase_landed(&mut self, id: GcJobId, at: u64) {
        self.gc.phase_landed(id, at);
    }

    /// Job `id` leaves the queue (at [`Turn::FinishGc`]) for the face to finish it with the
    /// scheme and carry out the follow-up; then [`ArrayDriver::finished`].
    pub fn finish(&mut self, id: GcJobId) -> GcRun<X> {
        self.note(Decision::Finished { job: id });
        self.gc.finish(id)
    }

    /// A job was finished with the scheme at `now`: its victim awaits release, or (a scheme
    /// that does not defer it) is free already, and the write waiting for space is tried
    /// again.
    pub fn finished(&mut self, now: u64, scheme: &ArrayScheme) {
        self.may_start = true;
        let pending = scheme.pending_release();
        self.release.waiting(pending, now);
        if pending == 0 {
            self.stalled = false;
        }
    }

    /// A sync point made the map durable at [`Turn::Release`]: give the victims back into
    /// `plan` (their TRIMs, for the face to carry out).
    pub fn release(&mut self, scheme: &mut ArrayScheme, plan: &mut IoPlan) {
        let victims = scheme.pending_release();
        scheme.release_deferred(plan);
        self.release.released();
        self.may_start = true;
        self.note(Decision::Released { victims });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::gc::tests::small_swan0_spec;
    use crate::geometry::Geometry;
    use crate::scheme::LogTuning;
    use crate::summary::Summary;

    /// Members with no model (never busy) and no summaries.
    struct Idle;

    impl SummarySource for Idle {
        fn read_summary(&mut self, _geo: &Geometry, _segment: u64) -> Option<Summary> {
            None
        }
    }

    impl MemberView for Idle {
        fn busy_until(&self, _member: MemberId) -> u64 {
            0
        }
    }

    /// The small SWAN0 array as a server runs it: victims released after a sync point, and
    /// 70 % of its payload exposed, the rest spare for GC.
    fn served_swan0() -> ArrayScheme {
        let mut spec = small_swan0_spec();
        let volume = spec.volume_blocks().expect("geometry");
        spec.tuning = LogTuning::served(Some(volume * 7 / 10));
        spec.tuning.p2l_in_summaries = false;
        spec.build().expect("scheme")
    }

    /// Runs rounds at time `now`, doing what each turn asks at once (members complete every
    /// operation at `now`), taking requests from `queue`; stops at a wait.
    fn run_until_wait(
        d: &mut ArrayDriver<()>,
        s: &mut ArrayScheme,
        queue: &mut Vec<Request>,
        now: u64,
        turns: &mut Vec<Turn>,
    ) -> Turn {
        let mut plan = IoPlan::new();
        loop {
            let t = d.next(now, s, &mut Idle, !queue.is_empty());
            turns.push(t);
            match t {
                Turn::Take => {
                    let r = queue[0];
                    if d.plan(s, &r, &mut plan, None).expect("in range") == Submitted::Planned {
                        queue.remove(0);
                    }
                }
                Turn::GcOp { job, whole } => {
                    let n = if whole { d.gc().get(job).job.pending().len() } else { 1 };
                    d.handed_out(job, n, Some(now));
                }
                Turn::FinishGc(job) => {
                    d.finish(job);
                    s.finish_gc(job, &mut plan);
                    d.finished(now, s);
                }
                Turn::Release => d.release(s, &mut plan),
                Turn::NoSpace => {
                    queue.remove(0);
                }
                Turn::Wait { .. } => return t,
                Turn::EndBatch | Turn::EndRound | Turn::GcStarted { .. } => {}
            }
        }
    }

    /// Carries a GC turn out at once, its operations one at a time and completing at `now`
    /// (any other turn: nothing).
    fn gc_at_once(d: &mut ArrayDriver<()>, s: &mut ArrayScheme, t: Turn, now: u64) {
        match t {
            Turn::GcOp { job, .. } => {
                d.handed_out(job, 1, Some(now));
            }
            Turn::FinishGc(job) => {
                d.finish(job);
                s.finish_gc(job, &mut IoPlan::new());
                d.finished(now, s);
            }
            _ => {}
        }
    }

    fn writes(n: usize, volume: u64, seed: u64) -> Vec<Request> {
        let mut lba = seed;
        (0..n)
            .map(|_| {
                lba = lba.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                Request::new(ReqOp::Write, (lba >> 33) % volume, 1)
            })
            .collect()
    }

    #[test]
    fn an_idle_driver_waits_for_nothing() {
        let mut s = served_swan0();
        let mut d: ArrayDriver<()> = ArrayDriver::new(3, GcPacing::SERVED);
        assert_eq!(d.next(0, &mut s, &mut Idle, false), Turn::EndBatch);
        assert_eq!(d.next(0, &mut s, &mut Idle, false), Turn::Wait { until: None });
    }

    #[test]
    fn a_round_takes_a_batch_then_gives_gc_one_step_while_requests_wait() {
        let mut s = served_swan0();
        let volume = s.volume_blocks();
        let mut d: ArrayDriver<()> = ArrayDriver::new(3, GcPacing::SERVED);
        d.record();
        // Overwrite until GC has a job in flight.
        let mut queue = writes(20 * volume as usize, volume, 1);
        let mut turns = Vec::new();
        while d.gc().is_empty() {
            let t = d.next(0, &mut s, &mut Idle, true);
            match t {
                Turn::Take => {
                    let r = queue.remove(0);
                    assert_eq!(d.plan(&mut s, &r, &mut IoPlan::new(), None), Ok(Submitted::Planned));
                }
                Turn::Release => d.release(&mut s, &mut IoPlan::new()),
                _ => {}
            }
        }
        // Rounds from here on, requests always waiting: 64 takes, the batch's end, any jobs
        // started, one GC step, the round's end.
        for round in 0..4 {
            turns.clear();
            let mut short_of_space = false;
            loop {
                let t = d.next(0, &mut s, &mut Idle, true);
                turns.push(t);
                match t {
                    Turn::Take => {
                        let r = queue.remove(0);
                        if d.plan(&mut s, &r, &mut IoPlan::new(), None) == Ok(Submitted::NoSpace) {
                            queue.insert(0, r);
                            short_of_space = true;
                        }
                    }
                    Turn::GcOp { job, whole } => {
                        assert!(!whole, "served GC goes an operation at a time");
                        d.handed_out(job, 1, Some(0));
                    }
                    Turn::FinishGc(job) => {
                        d.finish(job);
                        s.finish_gc(job, &mut IoPlan::new());
                        d.finished(0, &s);
                    }
                    Turn::Release => d.release(&mut s, &mut IoPlan::new()),
                    Turn::EndRound | Turn::Wait { .. } => break,
                    _ => {}
                }
            }
            // The first round was entered midway; a round with a write short of space is
            // another test's.
            if round == 0 || short_of_space || turns.contains(&Turn::Release) {
                continue;
            }
            let takes = turns.iter().take_while(|t| **t == Turn::Take).count();
            assert_eq!(takes, 64, "a batch of 64: {turns:?}");
            let gc_steps = turns.iter().filter(|t| matches!(t, Turn::GcOp { .. } | Turn::FinishGc(_))).count();
            assert!(gc_steps <= 1, "one GC step while requests wait: {turns:?}");
        }
        assert!(d.trace().iter().any(|e| matches!(e, Decision::Started { .. })));
    }

    #[test]
    fn a_write_short_of_space_collects_then_releases_and_is_taken_again() {
        let mut s = served_swan0();
        let volume = s.volume_blocks();
        let mut d: ArrayDriver<()> = ArrayDriver::new(3, GcPacing::SERVED);
        d.record();
        let mut queue = writes(30 * volume as usize, volume, 5);
        let total = queue.len();
        let mut turns = Vec::new();
        let mut now = 0;
        while !queue.is_empty() {
            now += 1_000;
            run_until_wait(&mut d, &mut s, &mut queue, now, &mut turns);
        }
        assert!(!turns.contains(&Turn::NoSpace), "GC always frees space for a random overwrite");
        let trace = d.trace();
        let stalls = trace.iter().filter(|e| matches!(e, Decision::Planned { planned: false, .. })).count();
        assert!(stalls > 0, "the writes outran GC at least once");
        let planned = trace.iter().filter(|e| matches!(e, Decision::Planned { planned: true, .. })).count();
        assert_eq!(planned, total, "every write was planned once in the end");
        // After a write found no space, no request was taken past it: the next one planned
        // is that write.
        let mut waiting: Option<u64> = None;
        for e in trace {
            match *e {
                Decision::Planned { planned: false, lba, .. } => waiting = Some(lba),
                Decision::Planned { planned: true, lba, .. } => {
                    assert!(waiting.is_none_or(|w| w == lba), "a request was taken past the write waiting");
                    waiting = None;
                }
                _ => {}
            }
        }
        assert!(trace.iter().any(|e| matches!(e, Decision::Released { .. })));
    }

    #[test]
    fn a_sync_point_that_fails_is_tried_once_a_round() {
        let mut s = served_swan0();
        let volume = s.volume_blocks();
        let mut d: ArrayDriver<()> = ArrayDriver::new(3, GcPacing::SERVED);
        let mut queue = writes(20 * volume as usize, volume, 11);
        let mut now = 0;
        // Write until victims wait for release.
        while s.pending_release() == 0 {
            now += 1_000;
            loop {
                let t = d.next(now, &mut s, &mut Idle, true);
                match t {
                    Turn::Take => {
                        let r = queue.remove(0);
                        if d.plan(&mut s, &r, &mut IoPlan::new(), None) == Ok(Submitted::NoSpace) {
                            queue.insert(0, r);
                        }
                    }
                    Turn::EndRound | Turn::Wait { .. } => break,
                    t => gc_at_once(&mut d, &mut s, t, now),
                }
            }
        }
        // Every sync point fails from here on (the face never releases): once the oldest
        // victim has waited long enough, each round asks for one and ends.
        now += super::super::release::RELEASE_AFTER_NS;
        for _ in 0..3 {
            let mut releases = 0;
            for step in 0.. {
                assert!(step < 1_000, "a round that never ends");
                match d.next(now, &mut s, &mut Idle, false) {
                    Turn::Release => releases += 1,
                    Turn::EndRound | Turn::Wait { .. } => break,
                    t => gc_at_once(&mut d, &mut s, t, now),
                }
            }
            assert_eq!(releases, 1, "one sync point a round");
        }
    }

    #[test]
    fn a_full_array_with_nothing_to_collect_fails_the_write() {
        let mut s = served_swan0();
        let volume = s.volume_blocks();
        let mut d: ArrayDriver<()> = ArrayDriver::new(3, GcPacing::SERVED);
        d.allow_gc(false);
        let mut queue = writes(4 * volume as usize, volume, 9);
        let mut turns = Vec::new();
        let mut now = 0;
        while !queue.is_empty() && !turns.contains(&Turn::NoSpace) {
            now += 1_000;
            run_until_wait(&mut d, &mut s, &mut queue, now, &mut turns);
        }
        assert!(turns.contains(&Turn::NoSpace), "with GC stopped, the array fills and a write is failed");
        assert!(!d.stalled(), "the failed write no longer waits");
    }

    #[test]
    fn a_round_said_quiet_ahead_would_only_wait() {
        for (pacing, latency) in [(GcPacing::WHOLE, 50), (GcPacing::SERVED, 0), (GcPacing::SERVED, 50)] {
            let mut s = served_swan0();
            let volume = s.volume_blocks();
            let mut d: ArrayDriver<()> = ArrayDriver::new(3, pacing);
            let mut queue = writes(20 * volume as usize, volume, 7);
            let mut plan = IoPlan::new();
            let (mut now, mut checked) = (0u64, 0);
            for _ in 0..300_000 {
                // Requests now and then, as a closed loop of small depth hands them over.
                let waiting = !queue.is_empty() && now % 3 == 0;
                match d.next(now, &mut s, &mut Idle, waiting) {
                    Turn::Take if d.plan(&mut s, &queue[0], &mut plan, None) == Ok(Submitted::Planned) => {
                        queue.remove(0);
                    }
                    Turn::GcOp { job, whole } => {
                        let n = if whole { d.gc().get(job).job.pending().len() } else { 1 };
                        d.handed_out(job, n, Some(now + latency));
                    }
                    Turn::FinishGc(job) => {
                        d.finish(job);
                        s.finish_gc(job, &mut plan);
                        d.finished(now, &s);
                    }
                    Turn::Release => d.release(&mut s, &mut plan),
                    Turn::EndRound => {
                        let Some(until) = d.quiet_ahead(now, false) else { continue };
                        // The round it stands for: nothing but its batch's end, then the wait.
                        let round = [d.next(now, &mut s, &mut Idle, false), d.next(now, &mut s, &mut Idle, false)];
                        assert_eq!(round, [Turn::EndBatch, Turn::Wait { until }], "{pacing:?}, latency {latency}");
                        checked += 1;
                        now += 1;
                    }
                    Turn::Wait { .. } => now += 1,
                    _ => {}
                }
            }
            assert!(checked > 100, "quiet rounds checked: {checked}");
        }
    }

    #[test]
    fn a_phase_not_yet_open_is_waited_for_until_it_opens() {
        let mut s = served_swan0();
        let volume = s.volume_blocks();
        let mut d: ArrayDriver<()> = ArrayDriver::new(3, GcPacing::SERVED);
        let mut queue = writes(20 * volume as usize, volume, 3);
        // Every GC operation completes 1 ms after it goes out.
        let mut plan = IoPlan::new();
        let mut now = 0u64;
        let mut waited_for_phase = false;
        for _ in 0..200_000 {
            let t = d.next(now, &mut s, &mut Idle, !queue.is_empty());
            match t {
                Turn::Take if d.plan(&mut s, &queue[0], &mut plan, None) == Ok(Submitted::Planned) => {
                    queue.remove(0);
                }
                Turn::GcOp { job, .. } => {
                    d.handed_out(job, 1, Some(now + 1_000_000));
                }
                Turn::FinishGc(job) => {
                    d.finish(job);
                    s.finish_gc(job, &mut plan);
                    d.finished(now, &s);
                }
                Turn::Release => d.release(&mut s, &mut plan),
                Turn::Wait { until } => {
                    let Some(t) = until else { break };
                    assert!(t > now);
                    waited_for_phase |= !d.gc().is_empty();
                    now = t;
                }
                _ => {}
            }
            now += 1;
        }
        assert!(waited_for_phase, "a job's next phase was waited for");
    }
}

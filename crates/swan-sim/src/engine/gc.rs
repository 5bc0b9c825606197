//! Driving the array's own GC: starting the jobs the scheme asks for (core's [`GcJob`], kept
//! in core's [`GcQueue`], as the server's), handing each phase to the members whole once the
//! one before it completed, finishing them, releasing deferred victims, and retrying the
//! writes that waited for the space a job freed.
//!
//! (Harmonia's coordination of the SSDs' internal GC is [`crate::ggc`]'s.)

use super::clock::{gc_key, GcKey, What};
use super::gc_paced::PacedGc;
use super::{Engine, IoFrom, Members};
use std::collections::VecDeque;
use swan_core::driver::{ForSpace, GcJob, GcQueue, ReleaseClock};
use swan_core::io::MemberIo;
use swan_core::scheme::{GcJobId, NoSummaries, Submitted};
use swan_models::Nanos;

/// What the simulator keeps beside a GC job in core's [`GcQueue`].
#[derive(Debug, Default)]
pub(super) struct SimGc {
    /// The members the job's current phase went to.
    pub(super) members_mask: u64,
    /// GC paced on the engine (`gc_paced.rs`): operations booked on the engine thread and
    /// not yet gone to their members.
    pub(super) to_submit: VecDeque<MemberIo>,
}

/// The GC jobs in flight, and when it is worth asking the scheme for more.
#[derive(Debug)]
pub(super) struct GcJobs {
    /// The jobs in flight, and which may proceed when: core's, as the server's.
    pub(super) queue: GcQueue<SimGc>,
    /// The scheme changed since it last said no GC job can start: `start_gc` depends on
    /// nothing else, so only then is it worth asking again.
    pub(super) may_start: bool,
    /// Reads prefer to preempt GC (SWAN): re-check GC phase completions against the
    /// members' backlog, which preempting reads push back.
    preemptible: bool,
    /// Deferred release: since when the oldest finished job's victim has waited.
    release: ReleaseClock,
    pub(super) paced: PacedGc,
}

impl GcJobs {
    pub(super) fn new(preemptible: bool) -> Self {
        Self {
            queue: GcQueue::default(),
            may_start: true,
            preemptible,
            release: ReleaseClock::default(),
            paced: PacedGc::default(),
        }
    }
}

impl<M: Members> Engine<M> {
    /// Start every GC job the scheme wants now.
    pub(super) fn pump_gc(&mut self) {
        if !self.gc.may_start {
            return;
        }
        // The simulator's GC reads its victims' P2L from the map, not from summaries.
        while let Some(job) = GcJob::start(&mut self.scheme, &mut NoSummaries) {
            self.meter.gc_groups(self.scheme.status().gc_groups);
            if job.handed_out_whole() {
                self.finish_gc(job.id);
                continue;
            }
            let id = job.id;
            let now = self.clock.now;
            self.gc.queue.push(job, SimGc::default(), now);
            if self.gc_paced() {
                self.open_paced_phase(id);
                continue;
            }
            let done = self.hand_out_phase(id);
            self.clock.push(done, What::GcPhase(gc_key(id)));
        }
        self.gc.may_start = false;
    }

    /// Hand the job's current phase to the members whole; when it completes there.
    fn hand_out_phase(&mut self, id: GcJobId) -> Nanos {
        let n = self.gc.queue.get(id).job.pending().len();
        let done = self.submit_ios(0, n, IoFrom::GcJob(id));
        self.gc.queue.handed_out(id, n, Some(done));
        done
    }

    /// The GC job in flight an event names by its key.
    pub(super) fn gc_job(&self, key: GcKey) -> GcJobId {
        self.gc.queue.iter().map(|r| r.job.id).find(|&id| gc_key(id) == key).expect("an event of a GC job in flight")
    }

    pub(super) fn gc_phase_done(&mut self, id: GcJobId) {
        if self.gc.preemptible {
            // Reads that preempted this phase pushed its work back inside the SSDs.
            let mask = self.gc.queue.get(id).face.members_mask;
            let late = (0..self.members.count().min(64) as u32)
                .filter(|m| mask & (1 << m) != 0)
                .map(|m| self.members.busy_until(m))
                .max()
                .unwrap_or(0);
            if late > self.clock.now {
                self.gc.queue.completes_later(id, late);
                self.clock.push(late, What::GcPhase(gc_key(id)));
                return;
            }
        }
        if !self.gc.queue.get(id).job.handed_out_whole() {
            if self.gc_paced() {
                self.open_paced_phase(id);
                return;
            }
            let done = self.hand_out_phase(id);
            self.clock.push(done, What::GcPhase(gc_key(id)));
            return;
        }
        self.gc.queue.finish(id);
        self.finish_gc(id);
    }

    fn finish_gc(&mut self, id: GcJobId) {
        self.scheme.finish_gc(id, &mut self.plan);
        self.gc.may_start = true;
        // The follow-up (summaries of sealed GC segments, TRIM of the victim) is
        // fire-and-forget: it occupies the members but nothing waits for it.
        let n = self.plan.len();
        self.submit_ios(0, n, IoFrom::Plan);
        self.pace_release();
        self.retry_stalled();
    }

    /// Deferred release ([`swan_core::scheme::LogConfig::defer_release`], as the server
    /// runs): give victims back when core's [`ReleaseClock`] says a sync point would, or at
    /// once when writes wait for space and core's [`ForSpace`] says so (as the server's
    /// writes that run out of space do). The sync point itself costs nothing here: the
    /// modelled SSDs keep no volatile cache to flush.
    pub(super) fn pace_release(&mut self) {
        let pending = self.scheme.pending_release();
        let now = self.clock.now;
        if let Some(at) = self.gc.release.waiting(pending, now) {
            self.clock.push(at, What::Release);
        }
        if pending == 0 {
            return;
        }
        let gc_running = !self.gc.queue.is_empty();
        let starved = !self.reqs.stalled.queue.is_empty()
            && ForSpace::for_waiting_write(pending, gc_running) == ForSpace::Release;
        if starved || self.gc.release.due(pending, self.cfg.array.rgroups, now) {
            self.scheme.release_deferred(&mut self.plan);
            let n = self.plan.len();
            self.submit_ios(0, n, IoFrom::Plan);
            self.gc.release.released();
            self.gc.may_start = true;
        }
    }

    /// Space was freed: retry writes that were waiting for it, in arrival order.
    pub(super) fn retry_stalled(&mut self) {
        while let Some(&slot) = self.reqs.stalled.queue.front() {
            let req = self.reqs.slots[slot].req.expect("stalled request");
            match self.scheme.submit(&req, &mut self.plan).expect("validated request") {
                Submitted::NoSpace => break,
                Submitted::Planned => {
                    self.reqs.stalled.queue.pop_front();
                    self.execute(slot);
                }
            }
        }
        if self.reqs.stalled.queue.is_empty() {
            self.reqs.stalled.close(self.clock.now);
        }
    }
}

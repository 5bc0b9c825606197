//! Driving the array's own GC: starting the jobs the scheme asks for (core's [`GcJob`], as
//! the server's), handing each phase to the members whole once the one before it completed,
//! finishing them, releasing deferred victims, and retrying the writes that waited for the
//! space a job freed.
//!
//! (Harmonia's coordination of the SSDs' internal GC is [`crate::ggc`]'s.)

use super::clock::What;
use super::gc_paced::PacedGc;
use super::inflight::Slots;
use super::{Engine, IoFrom, Members};
use std::collections::VecDeque;
use swan_core::driver::{ForSpace, GcJob, ReleaseClock};
use swan_core::io::MemberIo;
use swan_core::scheme::{GcJobId, NoSummaries, Submitted};
use swan_models::Nanos;

#[derive(Debug, Default)]
pub(super) struct GcSlot {
    pub(super) job: Option<GcJob>,
    /// The members the job's current phase went to.
    pub(super) members_mask: u64,
    /// GC paced on the engine (`gc_paced.rs`): the current phase's operations may go out...
    pub(super) phase_open: bool,
    /// ...those booked on the engine thread and not yet gone to their members...
    pub(super) to_submit: VecDeque<MemberIo>,
    /// ...and when the last gone completes there.
    pub(super) phase_done: Nanos,
}

/// The GC jobs in flight, and when it is worth asking the scheme for more.
#[derive(Debug, Default)]
pub(super) struct GcJobs {
    pub(super) slots: Slots<GcSlot>,
    /// The scheme changed since it last said no GC job can start: `start_gc` depends on
    /// nothing else, so only then is it worth asking again.
    pub(super) may_start: bool,
    /// Reads prefer to preempt GC (SWAN): re-check GC phase completions against the
    /// members' backlog, which preempting reads push back.
    preemptible: bool,
    /// Deferred release: since when the oldest finished job's victim has waited.
    release: ReleaseClock,
    /// The live slots in the order their jobs started (the server steps the first that may
    /// proceed).
    pub(super) order: VecDeque<u32>,
    pub(super) paced: PacedGc,
}

impl GcJobs {
    pub(super) fn new(preemptible: bool) -> Self {
        Self {
            slots: Slots::default(),
            may_start: true,
            preemptible,
            release: ReleaseClock::default(),
            order: VecDeque::new(),
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
            let slot = self.gc.slots.take();
            self.gc.slots[slot].job = Some(job);
            self.gc.order.push_back(slot);
            if self.gc_paced() {
                self.open_paced_phase(slot);
                continue;
            }
            let done = self.hand_out_phase(slot);
            self.clock.push(done, What::GcPhase(slot));
        }
        self.gc.may_start = false;
    }

    /// Hand the job's current phase to the members whole; when it completes there.
    fn hand_out_phase(&mut self, slot: u32) -> Nanos {
        let n = self.gc.slots[slot].job.as_ref().expect("a live GC job").pending().len();
        let done = self.submit_ios(0, n, IoFrom::GcJob(slot));
        self.gc.slots[slot].job.as_mut().expect("a live GC job").hand_out(n);
        done
    }

    pub(super) fn gc_phase_done(&mut self, slot: u32) {
        if self.gc.preemptible {
            // Reads that preempted this phase pushed its work back inside the SSDs.
            let mask = self.gc.slots[slot].members_mask;
            let late = (0..self.members.count().min(64) as u32)
                .filter(|m| mask & (1 << m) != 0)
                .map(|m| self.members.busy_until(m))
                .max()
                .unwrap_or(0);
            if late > self.clock.now {
                self.clock.push(late, What::GcPhase(slot));
                return;
            }
        }
        let job = self.gc.slots[slot].job.as_ref().expect("a live GC job");
        if !job.handed_out_whole() {
            if self.gc_paced() {
                self.open_paced_phase(slot);
                return;
            }
            let done = self.hand_out_phase(slot);
            self.clock.push(done, What::GcPhase(slot));
            return;
        }
        let id = job.id;
        self.gc.slots[slot].job = None;
        self.gc.slots.give(slot);
        self.gc.order.retain(|&s| s != slot);
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
        let gc_running = self.gc.slots.live() > 0;
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

//! The array's own GC carried out in virtual time, as core's driver hands it out
//! ([`super::turns`]): a job's member operations submitted to the SSD models (after the
//! engine thread's CPU work on each, when GC runs on it), jobs finished with the scheme,
//! and deferred victims released.
//!
//! (Harmonia's coordination of the SSDs' internal GC is [`crate::ggc`]'s.)

use super::clock::{gc_key, GcKey, What};
use super::{Engine, IoFrom, Members, Owner};
use std::collections::VecDeque;
use swan_core::io::MemberIo;
use swan_core::scheme::GcJobId;
use swan_models::Nanos;

/// What the simulator keeps beside a GC job in core's queue: its current phase's operations
/// whose CPU work on the engine thread comes before they go to their members.
#[derive(Debug, Default)]
pub(super) struct SimGc {
    /// When the operations of the current phase submitted so far complete, the latest.
    phase_end: Nanos,
    /// Operations handed out and not yet gone to their members.
    to_submit: VecDeque<MemberIo>,
    /// The current phase is handed out whole: it lands once all of it is submitted (and
    /// every batch of it a member held back has completed).
    phase_out: bool,
    /// Batches of the current phase a member holds back, not yet complete
    /// ([`crate::members::Completion::Later`]): the phase lands through the face then.
    held: u32,
    /// Some batch of the current phase was held back: the driver waits for the face to land it.
    phase_held: bool,
}

impl<M: Members> Engine<M> {
    /// The GC job in flight an event names by its key.
    pub(super) fn gc_job(&self, key: GcKey) -> GcJobId {
        self.thread
            .driver
            .gc()
            .iter()
            .map(|r| r.job.id)
            .find(|&id| gc_key(id) == key)
            .expect("an event of a GC job in flight")
    }

    /// Hand out job `id`'s next operation, or (`whole`) its phase's every pending one.
    /// GC on the engine thread: each goes to its member once the thread's work on it is
    /// done. Otherwise they go at once, the phase done no sooner than its CPU work on GC's
    /// own thread (when the host has one).
    pub(super) fn gc_op(&mut self, id: GcJobId, whole: bool) {
        let now = self.clock.now;
        let pending = self.thread.driver.gc().get(id).job.pending();
        if !self.gc_on_engine() {
            let n = if whole { pending.len() } else { 1 };
            let done = self.submit_ios(0, n, IoFrom::GcJob(id), Owner::GcJob(id));
            let face = &mut self.thread.driver.gc_mut().get_mut(id).face;
            if done.is_none() {
                face.held += 1;
                face.phase_held = true;
            }
            // A phase with a batch held back lands through the face; else the driver knows
            // its end now.
            let held = face.phase_held;
            let ended = self.thread.driver.handed_out(id, n, if held { None } else { done });
            if held {
                let face = &mut self.thread.driver.gc_mut().get_mut(id).face;
                face.phase_end = face.phase_end.max(done.unwrap_or(now));
                face.phase_out = ended;
                self.land_if_complete(id);
            }
            return;
        }
        debug_assert!(!whole, "GC on the engine thread goes an operation at a time");
        let io = pending[0];
        let at = self.host.as_mut().expect("GC on the engine has a host").gc_op(now, super::gc_bytes(&io));
        self.thread.round_end = self.thread.round_end.max(at);
        let phase_ended = self.thread.driver.handed_out(id, 1, None);
        let face = &mut self.thread.driver.gc_mut().get_mut(id).face;
        face.to_submit.push_back(io);
        face.phase_out = phase_ended;
        if at == now {
            self.gc_submit(id);
        } else {
            self.clock.push(at, What::GcOp(gc_key(id)));
        }
    }

    /// The engine thread's work on job `id`'s next operation is done: it goes to its member.
    /// Once the phase's last has gone, the phase lands when they all complete.
    pub(super) fn gc_submit(&mut self, id: GcJobId) {
        let io = self.thread.driver.gc_mut().get_mut(id).face.to_submit.pop_front().expect("a booked GC operation");
        let batch = self.held.open(self.clock.now);
        self.submit_io(io, batch);
        let done = self.held.close(batch, Owner::GcJob(id));
        let face = &mut self.thread.driver.gc_mut().get_mut(id).face;
        match done {
            Some(done) => face.phase_end = face.phase_end.max(done),
            None => face.held += 1,
        }
        self.land_if_complete(id);
    }

    /// A batch of job `id` a member held back completes at `done`.
    pub(super) fn gc_batch_done(&mut self, id: GcJobId, done: Nanos) {
        let face = &mut self.thread.driver.gc_mut().get_mut(id).face;
        face.phase_end = face.phase_end.max(done);
        face.held -= 1;
        self.land_if_complete(id);
    }

    /// Land job `id`'s phase with the driver once it is handed out whole, all of it has gone
    /// to the members, and nothing of it is held back.
    fn land_if_complete(&mut self, id: GcJobId) {
        let face = &mut self.thread.driver.gc_mut().get_mut(id).face;
        if face.phase_out && face.to_submit.is_empty() && face.held == 0 {
            face.phase_out = false;
            face.phase_held = false;
            let end = face.phase_end;
            self.thread.driver.phase_landed(id, end);
            self.wake_engine(end);
        }
    }

    /// Finish job `id` with the scheme. The follow-up (summaries of sealed GC segments, the
    /// victim's TRIM) is fire-and-forget: it occupies the members but nothing waits for it.
    pub(super) fn finish_gc(&mut self, id: GcJobId) {
        self.thread.driver.finish(id);
        self.scheme.finish_gc(id, &mut self.plan);
        let n = self.plan.len();
        self.submit_ios(0, n, IoFrom::Plan, Owner::Nobody);
        self.thread.driver.finished(self.clock.now, &self.scheme);
    }

    /// Deferred release ([`swan_core::scheme::LogConfig::defer_release`], as the server
    /// runs), when the driver says a sync point would release the victims waiting. The sync
    /// point itself costs nothing here: the modelled SSDs keep no volatile cache to flush.
    pub(super) fn release(&mut self) {
        self.thread.driver.release(&mut self.scheme, &mut self.plan);
        let n = self.plan.len();
        self.submit_ios(0, n, IoFrom::Plan, Owner::Nobody);
    }
}

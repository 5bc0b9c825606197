//! GC's member operations carried out by the engine thread, paced as `swan serve` paces them.
//!
//! With a host model whose GC runs on the engine ([`swan_models::host::HostModel::gc_on_engine`]),
//! a GC phase is not handed to the SSDs whole: the engine thread carries its operations out
//! one at a time, each going to its member once the thread's CPU work on it is done, as the
//! server's round does (core's [`GcPacing`]): while the thread is idle, `ops_idle` of them
//! back to back (a request arriving meanwhile waits for them); while requests keep it busy,
//! `ops_busy` after every `batch` requests it takes. A phase is done when its last operation
//! completes on its member; the next is opened then.

use super::clock::{gc_key, What};
use super::{Engine, Members};
use swan_core::driver::GcPacing;
use swan_core::io::MemberIo;
use swan_core::scheme::GcJobId;

const PACING: GcPacing = GcPacing::SERVED;

/// The paced hand-out's state beside the GC jobs in flight (core's queue holds which job's
/// operation is next).
#[derive(Debug, Default)]
pub(super) struct PacedGc {
    /// A `What::GcTurn` is queued.
    turn_queued: bool,
    /// User requests the engine took since GC last had an operation while they waited.
    taken_since_op: usize,
}

impl<M: Members> Engine<M> {
    /// Whether this run's GC phases go through the engine thread op by op.
    pub(super) fn gc_paced(&self) -> bool {
        self.host.as_ref().is_some_and(|h| h.model().gc_on_engine)
    }

    /// Job `id`'s current phase may go out: the engine thread takes it up at its next turn.
    pub(super) fn open_paced_phase(&mut self, id: GcJobId) {
        self.gc.queue.get_mut(id).face.members_mask = 0;
        self.queue_gc_turn();
    }

    fn queue_gc_turn(&mut self) {
        if self.gc.paced.turn_queued {
            return;
        }
        let at = self.host.as_ref().expect("paced GC has a host").engine_free().max(self.clock.now);
        self.gc.paced.turn_queued = true;
        self.clock.push(at, What::GcTurn);
    }

    /// The engine thread's turn for GC: if nothing else holds it now, `ops_idle` operations.
    pub(super) fn gc_turn(&mut self) {
        self.gc.paced.turn_queued = false;
        let now = self.clock.now;
        let free = self.host.as_ref().expect("paced GC has a host").engine_free();
        if free > now {
            // The thread took requests since the turn was queued: GC's turn is after them.
            if self.gc.queue.first_with_ops(now).is_some() {
                self.queue_gc_turn();
            }
            return;
        }
        let mut handed = 0;
        while handed < PACING.ops_idle && self.paced_op() {
            handed += 1;
        }
        if self.gc.queue.first_with_ops(now).is_some() {
            self.queue_gc_turn();
        }
    }

    /// A request the engine takes now: after every `batch` of them while GC operations
    /// wait, `ops_busy` of those first (the server's round ends its batch with them).
    pub(super) fn owed_gc_ops(&mut self) {
        if !self.gc_paced() || self.gc.queue.first_with_ops(self.clock.now).is_none() {
            self.gc.paced.taken_since_op = 0;
            return;
        }
        self.gc.paced.taken_since_op += 1;
        if self.gc.paced.taken_since_op < PACING.batch {
            return;
        }
        self.gc.paced.taken_since_op = 0;
        for _ in 0..PACING.ops_busy {
            if !self.paced_op() {
                break;
            }
        }
    }

    /// Book the next GC operation's CPU on the engine thread; it goes to its member when
    /// that is done (`What::GcOp`). False if none waits.
    fn paced_op(&mut self) -> bool {
        let now = self.clock.now;
        let Some(id) = self.gc.queue.first_with_ops(now) else { return false };
        let io = self.gc.queue.get(id).job.pending()[0];
        // Its completion is known once it reaches its member.
        self.gc.queue.handed_out(id, 1, None);
        let at = self.host.as_mut().expect("paced GC has a host").gc_op(now, super::gc_bytes(&io));
        self.gc.queue.get_mut(id).face.to_submit.push_back(io);
        self.clock.push(at, What::GcOp(gc_key(id)));
        true
    }

    /// The engine thread's work on job `id`'s next operation is done: it goes to its member.
    /// The phase is done once its last operation completes there.
    pub(super) fn gc_op_ready(&mut self, id: GcJobId) {
        let io: MemberIo = self.gc.queue.get_mut(id).face.to_submit.pop_front().expect("a booked GC operation");
        let done = self.submit_io(io);
        self.gc.queue.get_mut(id).face.members_mask |= 1u64 << (io.member % 64);
        if let Some(at) = self.gc.queue.landed(id, done) {
            // Its phase's last: the next may go out once it is done.
            self.clock.push(at, What::GcPhase(gc_key(id)));
        }
    }
}

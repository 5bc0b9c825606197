//! The engine thread: core's [`ArrayDriver`] says what it does next, as it says it to
//! `swan serve`'s engine thread, and this carries each turn out in virtual time.
//!
//! Requests handed to the engine wait in arrival order until the driver takes them. With a
//! host modelled, the thread is the host's engine thread. Its work on a request
//! ([`Host::engine_in`]) is booked when the request reaches it, behind what it has already:
//! the thread is runnable from then on and, busy from one request to the next, keeps its
//! core rather than queue behind work other threads book later. A round begins once the
//! thread is through with the last one, after everything else that happened at that instant
//! (a late event, so requests arriving at the same instant are in its queue, as they would
//! be in the server's channel); it takes the requests that waited, each request's member
//! I/O going out when the thread's work on it is done, and GC's steps, each operation's
//! work ([`Host::gc_op`]) booked on the thread before it goes to its member. GC on that thread is paced as the server paces it
//! ([`GcPacing::SERVED`]); a host whose GC has a thread of its own, and a run with no host,
//! hands phases out whole ([`GcPacing::WHOLE`]). With no host the thread takes no time: its
//! turns are taken as soon as anything they depend on happens.
//!
//! [`Host::engine_in`]: swan_models::host::Host::engine_in
//! [`Host::gc_op`]: swan_models::host::Host::gc_op

use super::clock::What;
use super::gc::SimGc;
use super::{Engine, Members, SimError};
use std::collections::VecDeque;
use swan_core::driver::{ArrayDriver, GcPacing, MemberView, Turn};
use swan_core::geometry::Geometry;
use swan_core::io::MemberId;
use swan_core::scheme::{ReqOp, Submitted, SummarySource};
use swan_core::summary::Summary;
use swan_models::Nanos;

/// The members as the driver sees them: the SSD models' word on when each is through with
/// its work. The simulator's GC reads its victims' P2L from the map, not from summaries.
struct Seen<'a, M> {
    members: &'a M,
}

impl<M: Members> SummarySource for Seen<'_, M> {
    fn read_summary(&mut self, _geo: &Geometry, _segment: u64) -> Option<Summary> {
        None
    }
}

impl<M: Members> MemberView for Seen<'_, M> {
    fn busy_until(&self, member: MemberId) -> u64 {
        self.members.busy_until(member)
    }
}

/// The engine thread's state beside the driver.
#[derive(Debug)]
pub(super) struct EngineThread {
    pub(super) driver: ArrayDriver<SimGc>,
    /// Requests handed to the engine and not yet taken, in arrival order.
    pub(super) waiting: VecDeque<u32>,
    /// No host: something the turns depend on changed since they last ran.
    due: bool,
    /// Host modelled: the earliest turn event queued and not yet taken.
    queued: Option<Nanos>,
    /// Host modelled: when the engine thread is through with the last round's work (the
    /// requests it took, its GC steps): the next round begins no sooner.
    pub(super) round_end: Nanos,
}

impl EngineThread {
    pub(super) fn new(rgroups: u32, pacing: GcPacing) -> Self {
        EngineThread {
            driver: ArrayDriver::new(rgroups, pacing),
            waiting: VecDeque::new(),
            due: true,
            queued: None,
            round_end: 0,
        }
    }
}

impl<M: Members> Engine<M> {
    /// Something the engine thread's turns depend on changes at `at`: a request reaches it,
    /// a GC phase lands, the release clock runs out.
    pub(super) fn wake_engine(&mut self, at: Nanos) {
        let at = at.max(self.clock.now);
        if self.host.is_none() && at == self.clock.now {
            self.thread.due = true;
            return;
        }
        if self.thread.queued.is_none_or(|q| at < q) {
            self.thread.queued = Some(at);
            self.clock.push_late(at, What::EngineTurn);
        }
    }

    /// A queued turn event has come.
    pub(super) fn engine_turn_event(&mut self) {
        if self.thread.queued == Some(self.clock.now) {
            self.thread.queued = None;
        }
        if self.host.is_none() {
            self.thread.due = true;
            return;
        }
        self.engine_turns();
    }

    /// No host: take the turns due after the event just handled.
    pub(super) fn take_due_turns(&mut self) {
        if self.thread.due {
            self.thread.due = false;
            self.engine_turns();
        }
    }

    /// Carry the driver's turns out until it waits. With a host modelled, a round begins only
    /// once the engine thread is through with the last one; what it takes is what waited
    /// when it began, as in the server.
    fn engine_turns(&mut self) {
        let now = self.clock.now;
        if self.thread.round_end > now {
            return self.wake_engine(self.thread.round_end);
        }
        loop {
            let waiting = !self.thread.waiting.is_empty();
            let mut members = Seen { members: &self.members };
            let turn = self.thread.driver.next(now, &mut self.scheme, &mut members, waiting);
            match turn {
                Turn::Take => self.take(),
                Turn::GcStarted { .. } => self.meter.gc_groups(self.scheme.status().gc_groups),
                Turn::GcOp { job, whole } => self.gc_op(job, whole),
                Turn::FinishGc(job) => self.finish_gc(job),
                Turn::Release => self.release(),
                Turn::NoSpace => {
                    let volume = self.scheme.volume_blocks();
                    self.error = Some(SimError::Config(format!(
                        "no space for a write and GC can free none: the workload overfills the {volume}-block volume's log"
                    )));
                    let slot = self.thread.waiting.pop_front().expect("the write that waited");
                    self.reqs.slots[slot].req = None;
                    self.reqs.slots.give(slot);
                    return;
                }
                Turn::EndBatch => {}
                Turn::EndRound => {
                    if self.thread.round_end > now {
                        return self.wake_engine(self.thread.round_end);
                    }
                    // A round that could only wait is not worth running: one per request.
                    if let Some(until) = self.thread.driver.quiet_ahead(now, !self.thread.waiting.is_empty()) {
                        if let Some(t) = until {
                            self.wake_engine(t);
                        }
                        return;
                    }
                }
                Turn::Wait { until } => {
                    if let Some(t) = until {
                        self.wake_engine(t);
                    }
                    return;
                }
            }
        }
    }

    /// Take the first request waiting and plan it; one the array has no space for stays
    /// first in line (the driver then has GC free some).
    fn take(&mut self) {
        let slot = *self.thread.waiting.front().expect("the driver takes only a waiting request");
        let req = self.reqs.slots[slot].req.expect("live request");
        let now = self.clock.now;
        match self.plan_request(&req).expect("sources stay inside the volume") {
            Submitted::NoSpace => {
                self.reqs.stalled.begin(now);
                return;
            }
            Submitted::Planned => {
                self.thread.waiting.pop_front();
                self.reqs.stalled.close(now);
            }
        }
        let role = if req.op == ReqOp::Read { self.read_role() } else { None };
        self.reqs.slots[slot].role = role.map(|r| (r, self.read_queue()));
        if self.host.is_none() {
            return self.execute(slot);
        }
        // The engine's CPU work on it comes first; its member I/O goes out once that is done.
        let done = self.reqs.slots[slot].engine_done;
        self.thread.round_end = self.thread.round_end.max(done);
        if done <= now {
            return self.execute(slot);
        }
        let plan = std::mem::take(&mut self.plan);
        self.reqs.slots[slot].pending.load_all(&plan);
        self.plan = plan;
        self.clock.push(done, What::Execute(slot));
    }
}

//! The user side of a run: where requests come from, and each one's way through the array
//! from issue to completion (network in, member phases, network out).
//!
//! The engine asks its [`ArrivalSource`] for a request only when one is due: at once in a
//! closed loop (when a request completes), or at the source's own time for a timed source.
//! A request that reaches the engine waits there until its thread takes it
//! ([`super::turns`]); a write the scheme has no room for waits first in line until GC frees
//! space.

use super::clock::What;
use super::inflight::{Pending, Slots};
use super::{Engine, IoFrom, Members, Owner, NO_IO_LATENCY_NS};
use crate::source::{ArrivalSource, Next, Pacing};
use swan_core::scheme::{ReqOp, Request};
use swan_core::BLOCK_BYTES;
use swan_models::Nanos;

/// A user request between its issue and its completion.
#[derive(Debug, Default)]
pub(super) struct InFlight {
    pub(super) req: Option<Request>,
    issued_at: Nanos,
    /// Host modelled: when the engine thread's work on it (`engine_in`) is done, booked on
    /// the thread when the request reached it.
    pub(super) engine_done: Nanos,
    /// A read's R-group role when it was planned, and what it met on its SSDs (SWAN).
    pub(super) role: Option<(swan_core::driver::GroupRole, super::reads::ReadQueue)>,
    /// The trace window it is measured in, if the source has windows.
    window: Option<u16>,
    pub(super) pending: Pending,
}

/// How long writes waited first in line for GC to free space, over the run.
#[derive(Debug, Default)]
pub(super) struct Stalled {
    /// When the current wait began.
    since: Option<Nanos>,
    /// Time writes spent waiting for free space, over the run.
    pub(super) total_ns: Nanos,
}

impl Stalled {
    /// A write found no space at `now` (a wait begins, if none is running).
    pub(super) fn begin(&mut self, now: Nanos) {
        self.since.get_or_insert(now);
    }

    /// End the current wait at `now`, if one is running.
    pub(super) fn close(&mut self, now: Nanos) {
        if let Some(since) = self.since.take() {
            self.total_ns += now - since;
        }
    }
}

/// The request source and every request issued and not yet completed.
pub(super) struct Requests {
    pub(super) source: Box<dyn ArrivalSource>,
    pub(super) pacing: Pacing,
    /// A timed source's next request, already scheduled as an `Issue` event.
    upcoming: Option<Next>,
    /// The source has no more requests: the run ends once the outstanding ones complete.
    exhausted: bool,
    /// Why the source failed; ends the run after the current event.
    pub(super) source_error: Option<crate::source::SourceError>,
    pub(super) slots: Slots<InFlight>,
    pub(super) stalled: Stalled,
    /// When a user request last completed (or an idle array got one): the stall watchdog
    /// measures quiet time from here.
    pub(super) last_completion: Nanos,
}

impl Requests {
    pub(super) fn new(source: Box<dyn ArrivalSource>) -> Self {
        Self {
            pacing: source.pacing(),
            source,
            upcoming: None,
            exhausted: false,
            source_error: None,
            slots: Slots::default(),
            stalled: Stalled::default(),
            last_completion: 0,
        }
    }

    /// Requests issued and not yet completed (waiting for space included).
    pub(super) fn outstanding(&self) -> usize {
        self.slots.live()
    }
}

impl<M: Members> Engine<M> {
    /// Ask a timed source for its next request and schedule its arrival.
    pub(super) fn schedule_next(&mut self) {
        match self.reqs.source.next(self.clock.now) {
            Ok(Some(next)) => {
                self.reqs.upcoming = Some(next);
                self.clock.push(next.at.max(self.clock.now), What::Issue);
            }
            Ok(None) => self.exhaust(),
            Err(e) => self.reqs.source_error = Some(e),
        }
    }

    fn exhaust(&mut self) {
        self.reqs.exhausted = true;
        self.end_if_drained();
    }

    /// Once the source is exhausted, the run ends with its last request.
    fn end_if_drained(&mut self) {
        if self.reqs.exhausted && !self.clock.stopping && self.reqs.outstanding() == 0 {
            self.clock.stop();
        }
    }

    pub(super) fn issue(&mut self) {
        if self.clock.stopping {
            return;
        }
        let now = self.clock.now;
        let next = match self.reqs.pacing {
            Pacing::Timed => match self.reqs.upcoming.take() {
                Some(next) => next,
                None => return,
            },
            Pacing::Closed { .. } => match self.reqs.source.next(now) {
                Ok(Some(next)) => next,
                Ok(None) => return self.exhaust(),
                Err(e) => {
                    self.reqs.source_error = Some(e);
                    return;
                }
            },
        };
        if self.reqs.outstanding() == 0 {
            // An idle array is not a stalled one: measure quiet time from here (a trace may
            // pause for minutes).
            self.reqs.last_completion = now;
        }
        if let Some(at) = self.ggc.on_arrival(now) {
            self.clock.push(at, What::Ggc);
        }
        let req = next.req;
        // Warm the scheme's maps for the requests coming next: their memory waits overlap
        // this one's work (the hot path waits on memory more than it computes).
        if let Some(r) = self.reqs.source.ahead(crate::source::LOOKAHEAD) {
            self.scheme.prefetch(r, false);
        }
        if let Some(r) = self.reqs.source.ahead(crate::source::LOOKAHEAD / 2) {
            self.scheme.prefetch(r, true);
        }
        let slot = self.reqs.slots.take();
        let r = &mut self.reqs.slots[slot];
        r.req = Some(req);
        r.issued_at = now;
        r.window = next.window;
        if self.reqs.pacing == Pacing::Timed {
            // Only now, with this request outstanding, may an exhausted source end the run.
            self.schedule_next();
        }
        if let Some(host) = &mut self.host {
            let sent = host.client(now, carried(&req));
            self.clock.push(sent, What::Sent(slot));
            return;
        }
        if req.op == ReqOp::Write {
            let arrives = self.link.inbound(now, u64::from(req.blocks) * BLOCK_BYTES);
            if arrives > now {
                self.clock.push(arrives, What::Arrive(slot));
                return;
            }
        }
        self.arrive(slot);
    }

    /// Host modelled: the client has sent the request; its payload crosses the network and
    /// the connection reader takes it off the socket.
    pub(super) fn sent(&mut self, slot: u32) {
        let req = self.reqs.slots[slot].req.expect("live request");
        let (now, bytes) = (self.clock.now, u64::from(req.blocks) * BLOCK_BYTES);
        let on_socket = if req.op == ReqOp::Write { self.link.inbound(now, bytes) } else { now };
        let host = self.host.as_mut().expect("host events come only with a host");
        let read = host.reader(now, on_socket, carried(&req));
        self.clock.push(read, What::ToEngine(slot));
    }

    /// Host modelled: the reader has handed the request to the engine. Its work on the
    /// request is booked on the engine thread now, behind what the thread has already (the
    /// thread is runnable from now on, and keeps its core while it has work); the driver
    /// takes the request at the next round.
    pub(super) fn hand_to_engine(&mut self, slot: u32) {
        let req = self.reqs.slots[slot].req.expect("live request");
        let host = self.host.as_mut().expect("host events come only with a host");
        self.reqs.slots[slot].engine_done = host.engine_in(self.clock.now, carried(&req));
        self.thread.waiting.push_back(slot);
        self.wake_engine(self.clock.now);
    }

    /// No host modelled: the request has reached the engine.
    pub(super) fn arrive(&mut self, slot: u32) {
        self.thread.waiting.push_back(slot);
        self.wake_engine(self.clock.now);
    }

    /// Hand the request's freshly planned I/O to the members.
    pub(super) fn execute(&mut self, slot: u32) {
        if self.plan.is_empty() {
            self.reqs.slots[slot].pending.clear();
            self.clock.push(self.clock.now + NO_IO_LATENCY_NS, What::ReqPhase(slot));
            return;
        }
        let n0 = self.plan.phase(0).len();
        let done = self.submit_ios(0, n0, IoFrom::Plan, Owner::Request(slot));
        if self.plan.phase_count() > 1 {
            let plan = std::mem::take(&mut self.plan);
            self.reqs.slots[slot].pending.load(&plan);
            self.plan = plan;
        } else {
            self.reqs.slots[slot].pending.clear();
        }
        // Else a member holds some of it back and the phase ends when it says.
        if let Some(done) = done {
            self.clock.push(done, What::ReqPhase(slot));
        }
    }

    /// The engine thread's work on a request it took is done: hand its I/O, kept whole in its
    /// slot, to the members.
    pub(super) fn execute_pending(&mut self, slot: u32) {
        if !self.reqs.slots[slot].pending.has_next() {
            self.clock.push(self.clock.now + NO_IO_LATENCY_NS, What::ReqPhase(slot));
            return;
        }
        self.req_phase_done(slot);
    }

    pub(super) fn req_phase_done(&mut self, slot: u32) {
        if self.reqs.slots[slot].pending.has_next() {
            let (a, b) = self.reqs.slots[slot].pending.take_next();
            if let Some(done) = self.submit_ios(a, b, IoFrom::Request(slot), Owner::Request(slot)) {
                self.clock.push(done, What::ReqPhase(slot));
            }
            return;
        }
        if let Some(host) = &mut self.host {
            let req = self.reqs.slots[slot].req.expect("live request");
            let replied = host.engine_out(self.clock.now, carried(&req));
            self.clock.push(replied, What::Replied(slot));
            return;
        }
        self.replied(slot);
    }

    /// The reply is sent: a read's payload crosses the network back.
    #[inline]
    pub(super) fn replied(&mut self, slot: u32) {
        let req = self.reqs.slots[slot].req.expect("live request");
        if req.op == ReqOp::Read {
            let now = self.clock.now;
            let delivered = self.link.outbound(now, u64::from(req.blocks) * BLOCK_BYTES);
            if delivered > now {
                self.clock.push(delivered, What::Deliver(slot));
                return;
            }
        }
        self.complete(slot);
    }

    #[inline]
    pub(super) fn complete(&mut self, slot: u32) {
        let now = self.clock.now;
        let r = &mut self.reqs.slots[slot];
        let req = r.req.take().expect("live request");
        let issued_at = r.issued_at;
        let role = r.role.take();
        let window = r.window.take();
        self.reqs.slots.give(slot);
        self.reqs.last_completion = now;
        self.meter.complete(&req, issued_at, now);
        if let Some((role, queue)) = role {
            self.meter.read_role(role, issued_at, now, queue);
        }
        if let Some(w) = window {
            self.meter.window(w).complete(&req, issued_at, now, role);
        }
        if let (ReqOp::Write, Some(limit)) = (req.op, self.cfg.stop.write_bytes) {
            if !self.clock.stopping && self.meter.user_write_blocks * BLOCK_BYTES >= limit {
                // Close the run now: the last interval is cut short rather than padded with
                // the idle tail of requests no longer being issued.
                self.clock.stop();
            }
        }
        if matches!(self.reqs.pacing, Pacing::Closed { .. }) {
            self.issue();
        }
        self.end_if_drained();
    }
}

/// What `req` carries across the host: a write's payload in, a read's out.
pub(super) fn carried(req: &Request) -> swan_models::host::Carried {
    let bytes = u64::from(req.blocks) * BLOCK_BYTES;
    match req.op {
        ReqOp::Write => swan_models::host::Carried { written: bytes, read: 0 },
        ReqOp::Read => swan_models::host::Carried { written: 0, read: bytes },
        ReqOp::Trim | ReqOp::Flush => swan_models::host::Carried::default(),
    }
}

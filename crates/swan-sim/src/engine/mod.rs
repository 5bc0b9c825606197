//! The event-driven engine: one scheme, its member SSD models, a network link and a
//! workload, run in virtual time.
//!
//! Requests come from an [`ArrivalSource`](crate::source::ArrivalSource) (the fio-like
//! generator, or a block trace through [`crate::replay`]), which the engine asks for the next
//! request when one is due.
//!
//! Events are typed values in a binary heap ordered by (time, insertion sequence), so ties
//! resolve in a fixed order and a seed reproduces a run exactly. The hot path is per
//! request, not per page: a phase of member I/O is handed to the SSD models, which answer
//! with completion times computed from their dies' and links' busy-until times, and the
//! engine schedules one event for the whole phase.
//!
//! The engine reads no clock and touches no file: progress is reported through a callback
//! and results are returned as values; `output` writes them.
//!
//! [`Engine`] owns the simulated hardware (scheme, SSDs, link) and one part per job:
//!
//! - `clock`: virtual time and the event queue;
//! - `requests`: the request source and each user request from issue to completion;
//! - `reads`: how user reads are planned (around busy SSDs, if asked) and which R-group
//!   role each lands on;
//! - `turns`: the engine thread, taking the turns core's array driver gives it (requests
//!   taken, GC stepped, victims released, writes short of space), as `swan serve`'s does;
//! - `gc`: the array's GC jobs carried out on the members, and deferred release;
//! - `host` (when the run models one, [`swan_models::host`]): the client's, the connection
//!   reader's and the engine's CPU on the way in and out, and GC's on the engine;
//! - `meter`: interval rows, latencies and totals, and the [`RunOutput`];
//! - `windows`: each measured window of a trace (an application's phases) on its own;
//! - `setup` and `config`: building the engine, and what a run depends on.
//!
//! This file holds the event loop and the one path by which member I/O reaches the SSDs.

mod clock;
mod config;
mod gc;
mod held;
mod inflight;
mod meter;
mod reads;
mod requests;
mod setup;
mod turns;
mod windows;

pub use crate::members::Members;
pub use config::{AppendGroups, QueueOrder, SimConfig, SimError, StopRule, ZonedSpec};
pub use meter::{RunOutput, SsdLoad};
pub use reads::{ReadRoles, RoleTally};
pub use setup::{build, build_synthetic, Built};
pub(crate) use setup::{build_ssd, build_ssds};
pub use swan_core::scheme::ReadRules;
pub use windows::WindowOutput;

use crate::ggc::GgcDriver;
use crate::member_trace::MemberIoSink;
use crate::members::Completion;
use crate::prefill::PrefillReport;
use crate::source::Pacing;
use clock::{Clock, What};
use held::{Held, Owner};
use meter::Meter;
use requests::Requests;
use swan_core::io::{IoClass, IoKind, IoPlan, MemberIo};
use swan_core::scheme::{ArrayScheme, GcJobId};
use swan_core::BLOCK_BYTES;
use swan_models::host::Host;
use swan_models::link::Link;
use swan_models::ssd::Ssd;
use swan_models::{DevOp, DevOpKind, Nanos};
use turns::EngineThread;

const NS_PER_S: f64 = 1e9;

/// Array software time of a request that needs no member I/O (a read of never-written
/// blocks, a trim): it completes through the event queue after this long, so simulated
/// time always advances and a closed loop of such requests cannot recurse.
pub const NO_IO_LATENCY_NS: Nanos = 1_000;

/// The engine over members `M` (independent SSDs unless said otherwise).
pub struct Engine<M: Members = Vec<Ssd>> {
    cfg: SimConfig,
    scheme: ArrayScheme,
    /// The plan the scheme fills at each call, reused.
    plan: IoPlan,
    /// A GC phase's operations as they are handed to the members, reused.
    gc_ios: Vec<MemberIo>,
    members: M,
    link: Link,
    clock: Clock,
    reqs: Requests,
    /// The engine thread and core's driver that says what it does next.
    thread: EngineThread,
    ggc: GgcDriver,
    meter: Meter,
    /// Per member, when the user writes handed to it so far complete: whether a read found
    /// writes ahead of it (SWAN's Table 4 by cause).
    user_writes_until: Vec<Nanos>,
    /// Batches of member operations some member holds back, and who waits for each.
    held: Held,
    /// The host's cores and threads a request crosses, when the run models them
    /// ([`SimConfig::host`]); `None`: requests reach the scheme as they are sent.
    host: Option<Host>,
    /// What ended the run early, found while handling an event.
    error: Option<SimError>,
    /// Where every member operation goes as it is submitted, when the run records the
    /// members' traces ([`Engine::record_member_io`]).
    member_io: Option<Box<dyn MemberIoSink>>,
}

/// The bytes a GC member operation moves through the engine thread (a TRIM moves none).
fn gc_bytes(io: &MemberIo) -> u64 {
    if matches!(io.kind, IoKind::Trim) {
        0
    } else {
        u64::from(io.count) * BLOCK_BYTES
    }
}

/// Where the member I/O [`Engine::submit_ios`] submits is held.
#[derive(Clone, Copy, Debug)]
enum IoFrom {
    /// The scheme's plan as it stands.
    Plan,
    /// The pending phases of a user request.
    Request(u32),
    /// The phase of a GC job being handed out.
    GcJob(GcJobId),
}

impl<M: Members> Engine<M> {
    pub fn scheme(&self) -> &ArrayScheme {
        &self.scheme
    }

    /// Keep every decision the array driver makes ([`RunOutput::decisions`]): what a test
    /// compares with the server's.
    pub fn record_decisions(&mut self) {
        self.thread.driver.record();
    }

    /// Hand every member operation to `sink` as it is submitted, with its time: each
    /// member's trace ([`crate::member_trace`]). Measures nothing and changes nothing.
    pub fn record_member_io(&mut self, sink: Box<dyn MemberIoSink>) {
        self.member_io = Some(sink);
    }

    /// What the untimed pre-fill did, if this run had one.
    pub fn prefill_report(&self) -> Option<&PrefillReport> {
        self.meter.prefill()
    }

    fn interval_ns(&self) -> Nanos {
        self.cfg.interval_ms * 1_000_000
    }

    /// Run to the stop rule. `progress` is called once per interval with the fraction done.
    pub fn run(mut self, progress: &mut dyn FnMut(f64)) -> Result<RunOutput, SimError> {
        if self.cfg.prefill.is_none() {
            // A pre-filled array was formatted before its fill.
            self.scheme.format(&mut self.plan);
            self.thread.driver.scheme_changed();
            let n = self.plan.len();
            self.submit_ios(0, n, IoFrom::Plan, Owner::Nobody);
        }
        match self.reqs.pacing {
            Pacing::Closed { depth } => {
                for _ in 0..depth.max(1) {
                    self.clock.push(0, What::Issue);
                }
            }
            Pacing::Timed => self.schedule_next(),
        }
        let first_tick = self.interval_ns();
        self.clock.push(first_tick, What::Tick);
        while let Some(what) = self.clock.pop() {
            match what {
                What::Issue => self.issue(),
                What::Sent(slot) => self.sent(slot),
                What::ToEngine(slot) => self.hand_to_engine(slot),
                What::Arrive(slot) => self.arrive(slot),
                What::Execute(slot) => self.execute_pending(slot),
                What::Replied(slot) => self.replied(slot),
                What::ReqPhase(slot) => self.req_phase_done(slot),
                What::Deliver(slot) => self.complete(slot),
                What::GcOp(key) => self.gc_submit(self.gc_job(key)),
                What::EngineTurn => self.engine_turn_event(),
                What::Ggc => {
                    if let Some(at) = self.ggc.on_wakeup(self.members.ssds(), self.clock.now) {
                        self.clock.push(at, What::Ggc);
                    }
                }
                What::Members => {
                    self.members.wake(self.clock.now);
                    self.take_completions();
                    self.schedule_members();
                }
                What::Tick => {
                    if self.tick(progress)? {
                        break;
                    }
                }
            }
            if let Some(e) = self.reqs.source_error.take() {
                return Err(SimError::Source(e));
            }
            self.take_due_turns();
            if let Some(e) = self.error.take() {
                return Err(e);
            }
        }
        if let Some(mut sink) = self.member_io.take() {
            sink.finish().map_err(SimError::Recorder)?;
        }
        Ok(self.finish())
    }

    /// Close an interval; returns true when the run is over.
    fn tick(&mut self, progress: &mut dyn FnMut(f64)) -> Result<bool, SimError> {
        let now = self.clock.now;
        if now == self.meter.interval_start {
            // The stop landed exactly on an interval boundary: nothing left to record.
            return Ok(self.clock.stopping);
        }
        let log_structured = self.cfg.array.kind.is_log_structured();
        self.meter.close_interval(now, &self.scheme, &self.members, log_structured);

        let t = now as f64 / NS_PER_S;
        let mut done = self.clock.stopping;
        let mut fraction: f64 = 0.0;
        if let Some(limit) = self.cfg.stop.sim_seconds {
            done |= t >= limit - 1e-9;
            fraction = fraction.max(t / limit);
        }
        if let Some(limit) = self.cfg.stop.write_bytes {
            fraction = fraction.max((self.meter.user_write_blocks * BLOCK_BYTES) as f64 / limit as f64);
        }
        if let Some(f) = self.reqs.source.fraction_done() {
            fraction = fraction.max(f);
        }
        progress(fraction.min(1.0));
        if done {
            return Ok(true);
        }
        let quiet = (now - self.reqs.last_completion) as f64 / NS_PER_S;
        if quiet > self.cfg.stall_limit_s && self.reqs.outstanding() > 0 {
            let stalled = if self.thread.driver.stalled() { self.thread.waiting.len() } else { 0 };
            return Err(SimError::Stalled { seconds: quiet, at_s: t, stalled });
        }
        if !self.clock.stopping {
            let next = now + self.interval_ns();
            self.clock.push(next, What::Tick);
        }
        Ok(false)
    }

    /// Submit `[start..end]` of the I/O held `from` to the members at `now`, as one batch
    /// `owner` waits for; returns when the last completes, or `None` when a member held one
    /// back: then `owner` hears when it completes ([`Engine::resume`]).
    fn submit_ios(&mut self, start: usize, end: usize, from: IoFrom, owner: Owner) -> Option<Nanos> {
        let batch = self.held.open(self.clock.now);
        match from {
            IoFrom::Plan => {
                for i in start..end {
                    self.submit_io(self.plan.ios()[i], batch);
                }
            }
            IoFrom::Request(s) => {
                for i in start..end {
                    self.submit_io(self.reqs.slots[s].pending.ios[i], batch);
                }
            }
            IoFrom::GcJob(id) => {
                // The job is looked up once: its operations are copied out, as submitting
                // each needs the whole engine.
                let mut ios = std::mem::take(&mut self.gc_ios);
                ios.clear();
                ios.extend_from_slice(&self.thread.driver.gc().get(id).job.pending()[start..end]);
                for &io in &ios {
                    self.submit_io(io, batch);
                }
                if let Some(host) = &mut self.host {
                    // A host whose GC has a thread of its own (GC on the engine thread books
                    // each operation there first, `gc.rs`): the phase is not done before its
                    // CPU work is.
                    let bytes: u64 = ios.iter().map(gc_bytes).sum();
                    self.held.done_at(batch, host.gc(self.clock.now, ios.len() as u64, bytes));
                }
                self.gc_ios = ios;
            }
        }
        self.held.close(batch, owner)
    }

    /// Completions the members now know of operations they held back: each batch that
    /// completes with them resumes its owner.
    fn take_completions(&mut self) {
        while let Some(d) = self.members.completed() {
            debug_assert!(d.done >= self.clock.now, "a completion reported after it happened");
            self.member_io_timed(d.member, d.kind, d.class, d.at, d.done);
            if let Some((owner, done)) = self.held.reported(d.token, d.done) {
                self.resume(owner, done);
            }
        }
    }

    /// What follows a member operation's timing, once known: the record of when each
    /// member's user writes complete, and Harmonia's GGC, which watches each SSD's writes.
    fn member_io_timed(&mut self, member: u32, kind: DevOpKind, class: IoClass, at: Nanos, done: Nanos) {
        if kind == DevOpKind::Write && class == IoClass::User {
            let until = &mut self.user_writes_until[member as usize];
            *until = (*until).max(done);
        }
        if let Some(t) = self.ggc.after_member_io(self.members.ssds(), member, kind, class, at, done) {
            self.clock.push(t, What::Ggc);
        }
    }

    /// The batch `owner` waited for completes at `done`.
    fn resume(&mut self, owner: Owner, done: Nanos) {
        match owner {
            Owner::Request(slot) => self.clock.push(done, What::ReqPhase(slot)),
            Owner::GcJob(id) => self.gc_batch_done(id, done),
            Owner::Nobody => {}
        }
    }

    /// Whether this run's GC member operations are carried out by the engine thread, paced
    /// among the user requests ([`swan_models::host::HostModel::gc_on_engine`]).
    fn gc_on_engine(&self) -> bool {
        self.host.as_ref().is_some_and(|h| h.model().gc_on_engine)
    }

    /// Submit `io` to its member as part of `batch`.
    #[inline(always)]
    fn submit_io(&mut self, io: MemberIo, batch: u64) -> Completion {
        let kind = match io.kind {
            IoKind::Read(_) => DevOpKind::Read,
            IoKind::Write(_) => DevOpKind::Write,
            IoKind::Trim => DevOpKind::Trim,
            IoKind::Flush => DevOpKind::Flush,
        };
        self.meter.member_io(&io, kind);
        let now = self.clock.now;
        let user_write = kind == DevOpKind::Write && io.class == IoClass::User;
        // The experiment of `reads_overtake_writes`: a user write is handed to its SSD in the
        // lane SWAN's reads overtake, the array GC's, and is counted as the user's all the same.
        let class = if user_write && self.cfg.reads_overtake_writes { IoClass::Gc } else { io.class };
        let op = DevOp { kind, block: io.block, count: io.count, class };
        if let Some(sink) = &mut self.member_io {
            // The class the array gave it: who issued it, whatever lane it is queued in.
            sink.record(now, io.member, &DevOp { class: io.class, ..op });
        }
        let completion = self.members.submit_tracked(io.member, now, op, batch);
        match completion {
            Completion::At(done) => {
                self.held.done_at(batch, done);
                self.member_io_timed(io.member, kind, io.class, now, done);
            }
            // Held back: timed when it goes to its device (`take_completions`).
            Completion::Later => self.held.held(batch),
        }
        self.schedule_members();
        completion
    }

    /// Schedule the members' own work, if they want a time not yet scheduled.
    #[inline]
    fn schedule_members(&mut self) {
        while let Some(at) = self.members.wakeup() {
            self.clock.push(at.max(self.clock.now), What::Members);
        }
    }
}

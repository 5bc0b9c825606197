//! The engine's round loop: the parts below composed into one state machine on one thread.
//!
//! The core is a single-threaded state machine, so one thread drives it, as the simulator's
//! event loop does. What the thread does next around the scheme is core's
//! [`ArrayDriver`](swan_core::driver::ArrayDriver)'s to say, turn by turn, as it says it to
//! the simulator: a round takes a batch of queued requests, plans each with the scheme (the
//! same SWAN / Log-RAID / RAID code the simulator runs) and has the [`Executor`] carry the
//! plan out before the next is planned; then GC's steps ([`GcRunner`]); then a sync point if
//! victims are due for release. Here the round then rebuilds a slice ([`MemberIo`]),
//! journals the batch ([`Durability`]) and replies ([`Replies`]), and runs a sync point for
//! the FLUSHes waiting. Because every plan's I/O is done
//! before the next request is planned, reads always see the writes replied to before them,
//! a write on a connection that dies still lands before any later write, and parity
//! read-modify-writes never interleave.
//!
//! GC victims are released (and trimmed) only after a sync point, so a victim is never
//! overwritten while the durable map could still point into it.
//!
//! On O_DIRECT members a batch's user data is written by the pool while the engine goes on;
//! in a plain round (no GC job, no failed member, no rebuild, no sync point asked for) the
//! batch is left in flight and its journal record and replies wait a round, for the next
//! batch's planning, rather than the engine waiting for the device ([`InFlight`]).

use super::cpu::{CpuAccount, Part};
use super::full_stop::Probe;
use super::gc::GcRunner;
use super::replies::{ModelSpan, Replies};
use super::resume::recover_in_place;
use super::status::StatusReport;
use super::store::Store;
use super::zone_holds::Owner;
use super::{EngineError, Msg};
use crate::member::BLOCK;
use crate::pool::Retry;
use crate::service::{BlockOp, BlockRequest, Completion};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use swan_core::driver::Turn;
use swan_core::io::IoPlan;
use swan_core::scheme::{ReqOp, Request, Submitted};
use swan_nbd::Errno;

pub(super) struct Worker {
    store: Store,
    gc: GcRunner,
    replies: Replies,
    /// Requests waiting for the engine, each with when a connection handed it over.
    pub queue: VecDeque<(BlockRequest, Completion, Instant)>,
    /// The request being served must not go to the pool.
    no_pool: bool,
    plan: IoPlan,
    stopping: bool,
    started: Instant,
    /// The batch whose writes are in flight, while the executor holds one sealed.
    in_flight: Option<InFlight>,
    /// Where the read pool hands back reads a member failed under (given to each pool).
    retry: Option<Retry>,
    /// Times the array resumed after a full file system ([`super::resume`]).
    pub resumes: u64,
    /// Where the engine thread's CPU goes ([`super::cpu`]).
    cpu: CpuAccount,
    /// How the last round ended: [`Turn::EndRound`] (more to do at once) or [`Turn::Wait`].
    last_end: Turn,
    /// Where the batch being taken begins in the journal queue and among the replies.
    batch_starts: Option<InFlight>,
}

/// A request carried out: its reply's data, when the model SSDs complete it (emulating),
/// or the token its later phases wait for the model under ([`super::later_phases`]).
struct CarriedOut {
    reply: Vec<u8>,
    model: Option<ModelSpan>,
    later: Option<u64>,
}

/// Where a sealed batch begins in the journal queue and among the replies: what comes
/// before it has landed and may be journaled and answered.
#[derive(Clone, Copy)]
struct InFlight {
    changes: usize,
    replies: usize,
}

impl Worker {
    /// A worker over a recovered array, its time from `clock`. `pooled`: member I/O may go
    /// to a pool of threads (serving); otherwise every operation is done on the engine's
    /// thread in plan order, so a seed gives the same member I/O every time (the stepper).
    /// The round loop over a recovered array's [`Store`].
    pub fn new(store: Store) -> Self {
        let started = store.clock.now();
        Worker {
            gc: GcRunner::new(store.io.sb.rgroups, started),
            started,
            store,
            replies: Replies::default(),
            queue: VecDeque::new(),
            no_pool: false,
            plan: IoPlan::new(),
            stopping: false,
            in_flight: None,
            retry: None,
            resumes: 0,
            cpu: CpuAccount::default(),
            last_end: Turn::EndRound,
            batch_starts: None,
        }
    }

    /// Tell the read pool (and any started after a resume) where reads a member failed
    /// under go.
    pub fn set_retry(&mut self, retry: Retry) {
        if let Some(pool) = self.store.exec.pool.as_mut() {
            pool.set_retry(Arc::clone(&retry));
        }
        self.retry = Some(retry);
    }

    pub fn set_checkpoint_every(&mut self, records: u64) {
        self.store.durability.checkpoint_every = records;
    }

    pub fn rebuilding(&self) -> bool {
        self.store.io.rebuilding()
    }

    /// Before serving: see [`Store::open_for_writes`].
    pub fn open_for_writes(&mut self) -> Result<(), EngineError> {
        self.store.open_for_writes()
    }

    pub fn run(mut self, rx: Receiver<Msg>) -> Result<(), EngineError> {
        loop {
            if !self.receive(&rx) && self.queue.is_empty() {
                // Every sender is gone: nobody can ask for anything more.
                self.stopping = true;
            }
            self.round();
            if self.stopping && self.queue.is_empty() {
                break;
            }
        }
        self.finish()
    }

    fn now(&self) -> Instant {
        self.store.clock.now()
    }

    /// One round: the driver's turns (a batch, GC's steps, a sync point if victims are due),
    /// then a rebuild's slice, the batch's journal record and replies, and a sync point for
    /// the FLUSHes waiting. Returns how the driver ended it: [`Turn::EndRound`] (more to do
    /// at once) or [`Turn::Wait`] (nothing before its time, or before a request comes).
    pub fn round(&mut self) -> Turn {
        self.cpu.switch(Part::Replies);
        let now = self.now();
        self.advance_model(now, false);
        self.replies.deliver_due(now);
        self.cpu.switch(Part::Serving);
        self.resume_if_room();
        self.store.fail_members_reads_met();
        let end = self.turns();
        self.cpu.switch(Part::Rebuild);
        // A rebuild takes a slice per round, more while no user request waits.
        for _ in 0..if self.queue.is_empty() { 8 } else { 1 } {
            if !self.store.io.rebuilding() {
                break;
            }
            if !self.store.io.rebuild_at_end() {
                // The pool's writes to the row's peers must have landed before it is rebuilt.
                self.store.wait_writes();
            }
            self.store.rebuild_step();
        }
        self.store.protect_after_failure();
        self.cpu.switch(Part::Durability);
        self.store.journal_tail(self.landed().map(|f| f.changes));
        self.cpu.switch(Part::Replies);
        self.send_landed();
        if !self.replies.sync_waiters.is_empty() {
            self.cpu.switch(Part::Durability);
            self.sync_point();
            self.cpu.switch(Part::Replies);
            self.send_landed();
        }
        self.cpu.switch(Part::Receiving);
        self.last_end = end;
        end
    }

    /// Carry out the driver's turns until it ends the round.
    fn turns(&mut self) -> Turn {
        // Stopped by a full file system, GC would only write more that a resume drops, and a
        // sync point for GC's release can only fail.
        let refusing = self.store.durability.refusing_writes;
        self.gc.driver.allow_gc(self.gc.broken.is_none() && !self.store.read_only && !refusing);
        self.gc.driver.allow_release(!refusing);
        loop {
            self.store.tell_scheme_health();
            if std::mem::take(&mut self.store.scheme_changed) {
                self.gc.driver.scheme_changed();
            }
            let stalled = self.gc.driver.stalled();
            let now = self.now();
            let s = &mut self.store;
            let turn = self.gc.next(now, &mut s.scheme, &s.io, s.exec.emu.as_ref(), !self.queue.is_empty());
            match turn {
                Turn::Take => {
                    self.cpu.switch(Part::Serving);
                    self.take_one();
                }
                Turn::EndBatch => self.end_batch(),
                Turn::GcStarted { .. } => {}
                Turn::GcOp { job, .. } => {
                    self.cpu.switch(Part::Gc);
                    // GC reads and remaps: the batch in flight lands first.
                    self.store.wait_writes();
                    let now = self.now();
                    let s = &mut self.store;
                    if let Err(e) = self.gc.step(job, now, &mut s.io, &mut s.exec, &mut s.crcs, &s.scheme) {
                        self.gc_broken(e);
                    }
                    self.store.protect_after_failure();
                    self.deliver_due_replies();
                }
                Turn::FinishGc(job) => {
                    self.cpu.switch(Part::Gc);
                    self.store.wait_writes();
                    self.finish_gc(job);
                }
                Turn::Release => {
                    self.cpu.switch(Part::Durability);
                    self.sync_point();
                    if stalled && self.store.durability.lost.is_some() && self.store.scheme.pending_release() > 0 {
                        // Victims wait for a sync point that can no longer come: fail the
                        // write waiting for their space rather than spin.
                        if let Some((_, done, _)) = self.queue.pop_front() {
                            done(Err(Errno::Io));
                        }
                    }
                }
                Turn::NoSpace => {
                    // Nothing can free space: fail the waiting write rather than hang.
                    self.store.report_no_space(self.gc.broken.as_deref());
                    if let Some((_, done, _)) = self.queue.pop_front() {
                        done(Err(Errno::NoSpc));
                    }
                }
                Turn::EndRound | Turn::Wait { .. } => return turn,
            }
        }
    }

    /// Send the replies whose changes are journaled: all but a sealed batch's. Writes that
    /// failed after their request was carried out fail their reply; once a full file
    /// system stopped durability, the writes not sent were not journaled
    /// (`Store::journal_tail`) and a resume would drop them: they fail with ENOSPC.
    fn send_landed(&mut self) {
        for i in self.store.failed_replies.drain(..) {
            self.replies.fail(i);
        }
        if self.store.durability.refusing_writes {
            self.replies.fail_writes(Errno::NoSpc);
        }
        self.replies.send_before(self.landed().map(|f| f.replies));
    }

    /// The batch still in flight, if the executor still holds it sealed (any full wait
    /// lands it).
    fn landed(&self) -> Option<InFlight> {
        self.in_flight.filter(|_| self.store.exec.has_sealed())
    }

    /// Whether this round's batch may be left in flight: a plain round, where nothing
    /// after the batch reads the members or asks for a sync point, and another round
    /// follows to finish it.
    fn may_leave_in_flight(&self) -> bool {
        !self.stopping
            && self.gc.is_idle()
            && !self.gc.driver.release_waiting()
            && self.replies.sync_waiters.is_empty()
            && !self.store.io.rebuilding()
            && self.store.io.members.all_healthy()
            && self.store.durability.lost.is_none()
    }

    /// Shutdown: reads handed out and replies still held by emulation go out now; then
    /// make it all durable.
    pub fn finish(&mut self) -> Result<(), EngineError> {
        self.store.wait_writes();
        self.store.journal_tail(None);
        self.send_landed();
        drop(self.store.exec.pool.take());
        let now = self.now();
        self.advance_model(now, true);
        self.replies.deliver_all_held();
        self.store.close()
    }

    /// Wait for work (or take what is there without waiting when busy). False once every
    /// sender has hung up.
    fn receive(&mut self, rx: &Receiver<Msg>) -> bool {
        // The driver had more to do, or a request waits that it will take (one waiting for
        // space waits with the driver).
        let busy = self.last_end == Turn::EndRound
            || (!self.queue.is_empty() && !self.gc.driver.stalled())
            || self.store.io.rebuilding()
            || self.store.exec.has_sealed();
        let now = self.now();
        let idle_wait = match self.last_end {
            Turn::Wait { until: Some(t) } => self.gc.instant(t).saturating_duration_since(now),
            _ => Duration::from_millis(100),
        }
        .min(Duration::from_millis(100));
        let first = if busy {
            match rx.try_recv() {
                Ok(m) => Some(m),
                Err(mpsc::TryRecvError::Empty) => None,
                Err(mpsc::TryRecvError::Disconnected) => return false,
            }
        } else {
            let model = self.store.exec.model_due().map(|t| t.saturating_duration_since(now));
            let wait = self.replies.wait_before_due(now, idle_wait).min(model.unwrap_or(idle_wait));
            self.cpu.sleeping();
            let got = rx.recv_timeout(wait);
            self.cpu.woke();
            match got {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => {
                    self.store.exec.drop_spares();
                    None
                }
                Err(RecvTimeoutError::Disconnected) => return false,
            }
        };
        let mut next = first;
        while let Some(m) = next {
            match m {
                Msg::Req(r, d, handed) => self.queue.push_back((r, d, handed)),
                Msg::Retry(r, d) => {
                    // Fail the member first, then read around it on this thread.
                    self.store.fail_members_reads_met();
                    self.no_pool = true;
                    let _ = self.serve(r, d);
                    self.no_pool = false;
                }
                Msg::Status(tx) => {
                    let _ = tx.send(self.status());
                }
                Msg::Fail(m, tx) => {
                    let _ = tx.send(self.store.fail_by_request(m));
                }
                Msg::Replace(m, path, tx) => {
                    let _ = tx.send(self.store.start_replace(m, &path));
                }
                Msg::Stop => self.stopping = true,
            }
            next = rx.try_recv().ok();
        }
        true
    }

    /// Take the first request waiting and carry it out; one the array has no space for
    /// stays first in line (the driver then has GC free some).
    fn take_one(&mut self) {
        if self.batch_starts.is_none() {
            self.batch_starts = Some(self.batch_start_here());
        }
        let Some((req, done, handed)) = self.queue.pop_front() else { return };
        let taken = self.now();
        if let Some((req, done)) = self.serve(req, done) {
            self.queue.push_front((req, done, handed));
            return;
        }
        self.cpu.taken(handed, taken);
        self.deliver_due_replies();
    }

    /// Where a batch taken from now on begins in the journal queue and among the replies.
    fn batch_start_here(&self) -> InFlight {
        InFlight { changes: self.store.durability.pending.len(), replies: self.replies.next_index() }
    }

    /// The batch's journal record and replies follow its data: the last batch's now, this
    /// one's now or, left in flight, next round.
    fn end_batch(&mut self) {
        self.cpu.switch(Part::Serving);
        let starts = self.batch_starts.take().unwrap_or_else(|| self.batch_start_here());
        self.store.wait_sealed();
        let left = self.store.end_batch(self.may_leave_in_flight());
        self.in_flight = left.then_some(starts);
        self.store.protect_after_failure();
    }

    /// Between the steps of a round: send the held replies the model SSDs have finished,
    /// of batches already journaled, rather than at the next round's start.
    fn deliver_due_replies(&mut self) {
        let now = self.now();
        let model_due = self.store.exec.model_due().is_some_and(|t| t <= now);
        if !model_due && !self.replies.journaled_due(now) {
            return;
        }
        let was = self.cpu.switch(Part::Replies);
        if model_due {
            self.advance_model(now, false);
        }
        self.replies.deliver_due_journaled(now);
        self.cpu.switch(was);
    }

    /// Emulating: the later phases and held writes due by `now` (all of them if `all`) go to
    /// the model; the replies whose last operation that was are held until its completion
    /// there, and the GC phases whose held writes have completed land with the driver.
    fn advance_model(&mut self, now: Instant, all: bool) {
        let (mut done, mut landed) = (Vec::new(), Vec::new());
        self.store.exec.advance_model(now, all, &mut done, &mut landed);
        for (token, at) in done {
            self.replies.resolve(token, at);
        }
        for (job, at) in landed {
            self.gc.held_landed(job, at);
        }
    }

    /// Carry out one request. Gives it back if the array has no space for it yet.
    fn serve(&mut self, req: BlockRequest, done: Completion) -> Option<(BlockRequest, Completion)> {
        let block = BLOCK as u64;
        if req.offset % block != 0 || u64::from(req.len) % block != 0 {
            done(Err(Errno::Inval));
            return None;
        }
        let lba = req.offset / block;
        let blocks = req.len / BLOCK as u32;
        let writes = !matches!(req.op, BlockOp::Read | BlockOp::Flush);
        if writes && self.store.read_only {
            done(Err(Errno::Perm));
            return None;
        }
        if writes && self.store.durability.refusing_writes {
            // A full file system stopped durability: the write would be dropped by the
            // recovery that resumes the array, so it is refused, not acknowledged.
            done(Err(Errno::NoSpc));
            return None;
        }
        if req.op == BlockOp::Read {
            // A read may name slots a pooled write of this batch is still filling (and
            // that write may fail).
            self.store.wait_writes();
            let failed = &self.store.failed_lbas;
            if !failed.is_empty() && (lba..lba + u64::from(blocks)).any(|b| failed.contains(&b)) {
                done(Err(Errno::Io));
                return None;
            }
        }
        let (op, zeroes): (ReqOp, Option<Vec<u8>>) = match &req.op {
            BlockOp::Read => (ReqOp::Read, None),
            BlockOp::Flush => {
                self.replies.sync_waiters.push(done);
                return None;
            }
            BlockOp::Trim => (ReqOp::Trim, None),
            // Where the scheme says a trimmed block reads as zeroes (a log array's unmap,
            // journaled like a write), a TRIM is the cheapest way to write them.
            BlockOp::WriteZeroes { may_trim: true } if self.store.scheme.trimmed_reads_zero() => (ReqOp::Trim, None),
            BlockOp::WriteZeroes { .. } => (ReqOp::Write, Some(vec![0u8; req.len as usize])),
            BlockOp::Write(_) => (ReqOp::Write, None),
        };
        let r = Request { op, lba, blocks, fua: false };
        self.store.tell_scheme_health();
        let mut plan = std::mem::take(&mut self.plan);
        let submitted = self.store.plan(&mut self.gc.driver, &r, &mut plan);
        self.store.note_rotation();
        match submitted {
            Err(_) => done(Err(Errno::Inval)),
            Ok(Submitted::NoSpace) => {
                self.plan = plan;
                return Some((req, done));
            }
            Ok(Submitted::Planned) if op == ReqOp::Read && self.pool_can_read(&plan) => {
                self.read_by_pool(&plan, lba, req.len as usize, done);
            }
            Ok(Submitted::Planned) => {
                let user: &[u8] = match (&req.op, &zeroes) {
                    (BlockOp::Write(data), _) => data,
                    (_, Some(zeroes)) => zeroes,
                    _ => &[],
                };
                // Emulating: a plan of several phases may leave its later ones to the model
                // for when the first completes there; its reply then waits for them.
                self.store.exec.later.defer = true;
                self.store.exec.holds.owner = Owner::Request;
                let carried = self.store.carry_out(&plan, &r, user);
                self.store.exec.later.defer = false;
                self.store.exec.holds.owner = Owner::Nobody;
                let floor = carried.as_ref().ok().and_then(|(_, model)| model.map(|span| span.done));
                // Both are asked (`or`, not `or_else`): each forgets the token it gave.
                let later = self.store.exec.later.take_token().or(self.store.exec.holds.take_token(floor));
                let carried = carried.map(|(reply, model)| CarriedOut { reply, model, later });
                self.after_carried(req.fua, writes, &r, carried, done);
            }
        }
        self.plan = plan;
        None
    }

    /// Answer a carried-out request: at once (or when emulation says), or at the next sync
    /// point for a FUA write; a write with data in flight waits for it with its reply.
    fn after_carried(
        &mut self,
        fua: bool,
        writes: bool,
        r: &Request,
        carried: Result<CarriedOut, Errno>,
        done: Completion,
    ) {
        if writes {
            self.store.durability.dirty = true;
        }
        let blocks = r.lba..r.lba + u64::from(r.blocks);
        match carried {
            Ok(_) if fua && writes => {
                // A pooled or gathered write that fails ends durability (`wait_writes`),
                // so this sync point fails.
                self.replies.sync_waiters.push(done);
                self.store.exec.track(None, blocks.clone());
            }
            Ok(CarriedOut { reply, model, later: Some(token) }) => {
                let issued = model.map_or_else(|| self.now(), |span| span.issued);
                self.replies.complete_later(done, Ok(reply), token, issued, writes);
                self.store.exec.track(None, blocks.clone());
            }
            Ok(CarriedOut { reply, model, later: None }) => {
                let now = self.now();
                let index = self.replies.complete(done, Ok(reply), model, now, writes);
                self.store.exec.track(index, blocks.clone());
            }
            Err(e) => {
                done(Err(e));
                return;
            }
        }
        if writes && !self.store.failed_lbas.is_empty() {
            for b in blocks {
                self.store.failed_lbas.remove(&b);
            }
        }
    }

    /// Whether the read pool can carry `plan` out.
    fn pool_can_read(&self, plan: &IoPlan) -> bool {
        !self.no_pool
            // In-place blocks are overwritten where they are: a pooled read could meet a
            // write to the same block between its check and its read. The engine reads them.
            && self.store.crcs.table.is_none()
            && self.store.exec.pool_can_read(&self.store.io, plan)
    }

    /// A plain read: from the page cache here if it holds it whole, else by the pool.
    fn read_by_pool(&mut self, plan: &IoPlan, lba: u64, len: usize, done: Completion) {
        let s = &mut self.store;
        match s.exec.read_from_cache(&mut s.io, plan, len) {
            Some(mut reply) => {
                if s.crcs.verify_read(&s.io, &s.scheme, plan, lba, &mut reply) {
                    let now = self.now();
                    self.replies.complete(done, Ok(reply), None, now, false);
                } else {
                    done(Err(Errno::Io));
                }
            }
            None => {
                let checks = s.crcs.checks_for(&s.scheme, lba, len);
                s.exec.hand_out_read(&mut s.io, plan, len, checks, lba * BLOCK as u64, done);
            }
        }
    }

    /// GC job `job`'s every phase completed: finish it with the scheme.
    fn finish_gc(&mut self, job: swan_core::scheme::GcJobId) {
        let run = self.gc.driver.finish(job);
        if let Err(e) = self.store.finish_gc(run) {
            self.gc_broken(e);
        }
        let now = self.now();
        let now = self.gc.ns(now);
        self.gc.driver.finished(now, &self.store.scheme);
    }

    /// GC stops after `e`. A full file system stops durability as a user write meeting it
    /// does, so that the array resumes (GC with it) once space returns.
    fn gc_broken(&mut self, e: crate::member::MemberError) {
        eprintln!("swan: I/O error: {e}");
        if e.is_full() {
            self.store.durability.lose_to(&e);
        }
        self.gc.broken = Some(e.to_string());
        self.gc.driver.allow_gc(false);
    }

    /// Stopped by a full file system: once a probe finds room again, recover in-process
    /// and serve from the recovered state ([`super::resume`]).
    fn resume_if_room(&mut self) {
        let now = self.now();
        let Some(stop) = self.store.durability.full.as_mut() else { return };
        let first_look = stop.since.is_none();
        if !stop.due(now) {
            return;
        }
        if first_look {
            eprintln!(
                "swan: durability stopped by a full file system ({}): writes are refused with ENOSPC and FLUSH fails \
                 until it has room again; the array then recovers by itself",
                stop.first_path().map_or_else(String::new, |p| p.display().to_string())
            );
        }
        if self.store.io.rebuilding() {
            return self.cannot_resume("a member is being rebuilt".into());
        }
        // The probe writes to the members: nothing else may be in flight there.
        self.store.drain_member_io();
        let Some(stop) = self.store.durability.full.as_mut() else { return };
        let m = match stop.probe(&self.store.io.members, now) {
            Probe::StillFull => return,
            Probe::Cannot(why) => return self.cannot_resume(why),
            Probe::Room(m) => m,
        };
        eprintln!("swan: member {m}: space is back; recovering the array in-process");
        // Emulating: what the model has yet to hear of goes to it now; the recovered store
        // takes the model over, and the zones its open resets and seals.
        self.advance_model(now, true);
        match recover_in_place(&mut self.store) {
            Ok(store) => {
                let jobs = std::mem::take(&mut self.gc.jobs);
                let checks = std::mem::take(&mut self.gc.checks);
                self.store = store;
                self.in_flight = None;
                self.gc = GcRunner::new(self.store.io.sb.rgroups, self.started);
                self.gc.jobs = jobs;
                self.gc.checks = checks;
                if let (Some(pool), Some(retry)) = (self.store.exec.pool.as_mut(), &self.retry) {
                    pool.set_retry(Arc::clone(retry));
                }
                self.resumes += 1;
                eprintln!("swan: member {m}: space is back; array recovered and serving writes");
            }
            Err(e) if self.store.durability.lost.is_some() && is_full_again(&e) => {
                eprintln!("swan: recovering after the full file system: {e}; trying again");
            }
            Err(e) => self.cannot_resume(format!("recovering in-process failed: {e}")),
        }
    }

    /// Durability stays stopped until a restart; said once.
    fn cannot_resume(&mut self, why: String) {
        eprintln!("swan: durability stays stopped until a restart: {why}");
        self.store.durability.full = None;
    }

    /// With a member failed, run the GC jobs in flight to their end first: the scheme can
    /// then complete the rows their GC segments are filling before the sync
    /// ([`Store::relocate_at_risk`]). A row a job is still writing cannot be completed, and
    /// its blocks on the failed member would have to be rewritten as user writes, which
    /// need the free space a waiting write may be short of.
    fn finish_gc_if_degraded(&mut self) {
        if self.store.io.members.all_healthy() {
            return;
        }
        while !self.gc.is_idle() && self.gc.broken.is_none() {
            let now = self.now();
            let s = &self.store;
            match self.gc.drain_step(now, &s.scheme, &s.io, s.exec.emu.as_ref()) {
                Some(Turn::GcOp { job, .. }) => {
                    let s = &mut self.store;
                    if let Err(e) = self.gc.step(job, now, &mut s.io, &mut s.exec, &mut s.crcs, &s.scheme) {
                        self.gc_broken(e);
                    }
                }
                Some(Turn::FinishGc(job)) => self.finish_gc(job),
                // The emulated phases wait for the model's clock.
                _ => {
                    self.advance_model(now, false);
                    self.cpu.sleeping();
                    std::thread::sleep(Duration::from_micros(200));
                    self.cpu.woke();
                }
            }
        }
    }

    /// A sync point: make every completed write durable and journal every change since the
    /// last one ([`Store::sync_point`]); then answer the FLUSHes and FUA writes waiting, and
    /// release GC victims.
    fn sync_point(&mut self) {
        self.finish_gc_if_degraded();
        let synced = self.store.sync_point();
        self.replies.answer_waiters(&if synced { Ok(Vec::new()) } else { Err(Errno::Io) });
        if synced && self.store.scheme.pending_release() > 0 {
            self.store.release_victims(&mut self.gc.driver);
        }
    }

    pub fn status(&self) -> StatusReport {
        let uptime = self.now().saturating_duration_since(self.started);
        super::report::report(
            &self.store,
            &self.gc,
            self.queue.len(),
            uptime,
            self.resumes,
            self.replies.emulation_timing(),
            self.cpu.report(),
        )
    }

    /// Keep core's driver's decisions (the stepper's comparison with the simulator).
    pub fn record_decisions(&mut self) {
        self.gc.driver.record();
    }

    pub fn decisions(&self) -> &[swan_core::driver::Decision] {
        self.gc.driver.trace()
    }

    /// `swan fail`, on this thread.
    pub fn fail_by_request(&mut self, m: u32) -> Result<String, super::FailError> {
        self.store.fail_by_request(m)
    }

    /// `swan replace`, on this thread.
    pub fn start_replace(&mut self, m: u32, path: &Path) -> Result<String, super::ReplaceError> {
        self.store.start_replace(m, path)
    }
}

/// Whether recovering in-process failed only because a file system was full again (then it
/// is tried again at the next probe).
fn is_full_again(e: &super::EngineError) -> bool {
    use super::EngineError as E;
    match e {
        E::Member(m) | E::Checkpoint(crate::checkpoint::CheckpointError::Member(m)) => m.is_full(),
        _ => false,
    }
}

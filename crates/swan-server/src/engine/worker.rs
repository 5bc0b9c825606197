//! The engine's round loop: the parts below composed into one state machine on one thread.
//!
//! The core is a single-threaded state machine, so one thread drives it, as the simulator's
//! event loop does. A round takes a batch of queued requests, plans each with the scheme
//! (the same SWAN / Log-RAID / RAID code the simulator runs) and has the [`Executor`] carry
//! the plan out before the next is planned; then advances GC a step ([`GcRunner`]) and a
//! rebuild a slice ([`MemberIo`]); then journals the batch ([`Durability`]) and replies
//! ([`Replies`]), and runs a sync point if one is asked for. Because every plan's I/O is done
//! before the next request is planned, reads always see the writes replied to before them,
//! a write on a connection that dies still lands before any later write, and parity
//! read-modify-writes never interleave.
//!
//! GC victims are released (and trimmed) only after a sync point, so a victim is never
//! overwritten while the durable map could still point into it.

use super::clock::Clock;
use super::crcs::Crcs;
use super::durability::{Appended, Durability};
use super::executor::{Buffers, Executor};
use super::gc::{GcRun, GcRunner, Step, RELEASE_BATCH};
use super::member_io::MemberIo;
use super::replies::Replies;
use super::status::{GroupStatus, MemberStatus, StatusReport};
use super::{EngineOptions, Msg};
use crate::array::{Opened, Recovered};
use crate::backend::{BlockOp, BlockRequest, Completion};
use crate::member::{Member, MemberError, BLOCK};
use crate::pool::{IoPool, DIRECT_THREADS, THREADS};
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use swan_core::io::IoPlan;
use swan_core::scheme::{MapChange, ReqOp, Request, Scheme, SchemeKind, Submitted};
use swan_core::segment::SegState;
use swan_nbd::Errno;

/// User requests taken per round before GC gets a step.
const BATCH: usize = 64;

pub(super) struct Worker {
    scheme: Box<dyn Scheme>,
    kind: SchemeKind,
    io: MemberIo,
    exec: Executor,
    crcs: Crcs,
    durability: Durability,
    gc: GcRunner,
    replies: Replies,
    pub queue: VecDeque<(BlockRequest, Completion)>,
    /// Logical blocks whose last write failed: reads of them fail rather than return
    /// whatever the slot the map now names holds. A later write or trim clears them.
    failed_lbas: HashSet<u64>,
    /// The request being served must not go to the pool.
    no_pool: bool,
    plan: IoPlan,
    follow: IoPlan,
    changes: Vec<MapChange>,
    read_only: bool,
    verbose: bool,
    stopping: bool,
    clock: Clock,
    started: Instant,
    /// Front-end rotations seen so far (noted to a member tap when it changes).
    rotations_seen: u64,
    /// `io.failures` as of the last sync point.
    failures_synced: u64,
    /// Segments recovery found sealed by an unsynced record: their parity is rewritten
    /// before serving writes ([`Recovered::unsynced_seals`]).
    unsynced_seals: Vec<u64>,
    /// The last stop was clean and nothing came after it ([`Recovered::parity_whole`]):
    /// adopted segments need no new parity.
    parity_whole: bool,
}

impl Worker {
    /// A worker over a recovered array, its time from `clock`. `pooled`: member I/O may go
    /// to a pool of threads (serving); otherwise every operation is done on the engine's
    /// thread in plan order, so a seed gives the same member I/O every time (the stepper).
    pub fn new(
        opened: Opened,
        rec: Recovered,
        opts: EngineOptions,
        clock: Clock,
        pooled: bool,
    ) -> anyhow::Result<Self> {
        let sb = opened.sb;
        let kind = sb.kind;
        if opts.verbose {
            eprintln!(
                "swan: array {} ({kind}, {} members): checkpoint {} + {} journal records ({} changes) replayed",
                sb.uuid_string(),
                sb.members,
                rec.checkpoint_seq,
                rec.records_replayed,
                rec.changes_replayed
            );
        }
        let threads = if opened.members.iter().any(Member::is_direct) { DIRECT_THREADS } else { THREADS };
        let pool = if pooled && opts.emulate.is_none() { Some(IoPool::start(threads)?) } else { None };
        let counts = pool.as_ref().map_or_else(Arc::default, |p| Arc::clone(&p.checks));
        let width = crate::array::parity_width(&sb);
        let rgroups = sb.rgroups;
        let started = clock.now();
        Ok(Worker {
            scheme: rec.scheme,
            kind,
            io: MemberIo::new(sb, opened.members),
            exec: Executor::new(kind, width, pool, opts.emulate),
            crcs: Crcs::new(rec.adopted_crcs, counts),
            durability: Durability::new(rec.ring, rec.checkpoint_seq, rec.next_slot),
            gc: GcRunner::new(rgroups),
            replies: Replies::default(),
            queue: VecDeque::new(),
            failed_lbas: HashSet::new(),
            no_pool: false,
            plan: IoPlan::new(),
            follow: IoPlan::new(),
            changes: Vec::new(),
            read_only: opts.read_only,
            verbose: opts.verbose,
            stopping: false,
            clock,
            started,
            rotations_seen: 0,
            failures_synced: 0,
            unsynced_seals: rec.unsynced_seals,
            parity_whole: rec.parity_whole,
        })
    }

    /// The read pool, to tell it where reads a member failed under go.
    pub fn pool_mut(&mut self) -> Option<&mut IoPool> {
        self.exec.pool.as_mut()
    }

    pub fn set_checkpoint_every(&mut self, records: u64) {
        self.durability.checkpoint_every = records;
    }

    pub fn rebuilding(&self) -> bool {
        self.io.rebuilding()
    }

    /// Before serving: note degraded R-groups, give adopted segments their parity, make
    /// everything durable and write a fresh checkpoint (the journal just rolled forward is
    /// then never needed again).
    pub fn open_for_writes(&mut self) -> anyhow::Result<()> {
        for m in 0..self.io.members.len() as u32 {
            if !self.io.members.is_healthy(m) {
                eprintln!(
                    "swan: member {m} ({}) is failed: serving degraded (swan replace --member {m} NEW ...)",
                    self.io.members[m as usize].path().display()
                );
                self.scheme.set_failed_member(m, true);
            }
        }
        self.open_block_crcs()?;
        if self.read_only {
            return Ok(());
        }
        let rows = self.reparity_adopted()?;
        if self.verbose && rows > 0 {
            eprintln!("swan: parity written for {rows} rows of segments open at the last stop");
        }
        self.sync_all()?;
        self.checkpoint()?;
        Ok(())
    }

    /// In-place RAID: load the CRC table; after an unclean stop, resync first (parity and
    /// CRCs from the data); then mark the tables dirty until the next clean stop.
    fn open_block_crcs(&mut self) -> anyhow::Result<()> {
        use crate::blockcrc::{BlockCrcs, Opened};
        let (members, sb) = (&self.io.members, &self.io.sb);
        if self.kind.is_log_structured() || sb.crc_table_blocks == 0 {
            return Ok(());
        }
        let (crcs, state) = BlockCrcs::load(members, sb)?;
        let crcs = match (state, self.read_only) {
            (Opened::Clean, _) => crcs,
            (Opened::Dirty, true) => {
                eprintln!(
                    "swan: the array was not stopped cleanly and is opened read-only: no resync, and reads are not \
                     verified against block CRCs (serve it read-write once to resync)"
                );
                return Ok(());
            }
            (Opened::Dirty, false) => {
                eprintln!(
                    "swan: the array was not stopped cleanly: resyncing (every stripe row's parity and every block's \
                     CRC from the data) before serving"
                );
                let verbose = self.verbose;
                let (crcs, fixed) = BlockCrcs::resync(members, sb, |done, all| {
                    if verbose && all > 0 {
                        eprintln!("swan: resync {:.0} %", done as f64 * 100.0 / all as f64);
                    }
                })?;
                eprintln!("swan: resync done: {fixed} stripe row(s) had parity that did not match their data");
                crcs
            }
        };
        if !self.read_only {
            crcs.mark_dirty(members, sb)?;
        }
        self.crcs.table = Some(crcs);
        Ok(())
    }

    pub fn run(mut self, rx: Receiver<Msg>) -> anyhow::Result<()> {
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
        self.clock.now()
    }

    /// One round: serve a batch, advance GC, journal the batch, reply, sync if asked.
    pub fn round(&mut self) {
        self.replies.deliver_due(self.now());
        self.fail_members_reads_met();
        self.serve_requests();
        self.protect_after_failure();
        self.advance_gc();
        self.protect_after_failure();
        // A rebuild takes a slice per round, more while no user request waits.
        for _ in 0..if self.queue.is_empty() { 8 } else { 1 } {
            if !self.io.rebuilding() {
                break;
            }
            if !self.io.rebuild_at_end() {
                // The pool's writes to the row's peers must have landed before it is rebuilt.
                self.wait_writes();
            }
            self.io.rebuild_step();
        }
        self.protect_after_failure();
        let now = self.now();
        self.gc.release_check(self.scheme.pending_release(), self.io.sb.rgroups, now);
        self.journal_tail();
        self.replies.send_batch();
        if !self.replies.sync_waiters.is_empty() || self.gc.release_due {
            self.sync_point();
        }
    }

    /// Shutdown: reads handed out and replies still held by emulation go out now; then
    /// make it all durable.
    pub fn finish(&mut self) -> anyhow::Result<()> {
        self.wait_writes();
        drop(self.exec.pool.take());
        self.replies.deliver_all_held();
        if !self.read_only {
            self.sync_all()?;
            // The rows still filling get their parity, so that a member missing at the next
            // start (a stale or lost one) loses nothing; the checkpoint says so.
            let rows = self.parity_of_open_segments()?;
            if self.verbose && rows > 0 {
                eprintln!("swan: parity written for {rows} rows of open segments");
            }
            self.sync_all()?;
            self.checkpoint_as(true)?;
            if let Some(crcs) = &self.crcs.table {
                crcs.write_clean(&self.io.members, &self.io.sb)?;
            }
        }
        Ok(())
    }

    /// Wait for work (or take what is there without waiting when busy). False once every
    /// sender has hung up.
    fn receive(&mut self, rx: &Receiver<Msg>) -> bool {
        let busy = !self.queue.is_empty() || !self.gc.is_idle() || self.gc.release_due || self.io.rebuilding();
        let idle_wait = if self.gc.release_pending_since.is_some() {
            Duration::from_millis(20)
        } else {
            Duration::from_millis(100)
        };
        let first = if busy {
            match rx.try_recv() {
                Ok(m) => Some(m),
                Err(mpsc::TryRecvError::Empty) => None,
                Err(mpsc::TryRecvError::Disconnected) => return false,
            }
        } else {
            match rx.recv_timeout(self.replies.wait_before_due(self.now(), idle_wait)) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => {
                    self.exec.drop_spares();
                    None
                }
                Err(RecvTimeoutError::Disconnected) => return false,
            }
        };
        let mut next = first;
        while let Some(m) = next {
            match m {
                Msg::Req(r, d) => self.queue.push_back((r, d)),
                Msg::Retry(r, d) => {
                    // Fail the member first, then read around it on this thread.
                    self.fail_members_reads_met();
                    self.no_pool = true;
                    let _ = self.serve(r, d);
                    self.no_pool = false;
                }
                Msg::Status(tx) => {
                    let _ = tx.send(self.status());
                }
                Msg::Fail(m, tx) => {
                    let _ = tx.send(self.fail_by_request(m));
                }
                Msg::Replace(m, path, tx) => {
                    let _ = tx.send(self.start_replace(m, &path));
                }
                Msg::Stop => self.stopping = true,
            }
            next = rx.try_recv().ok();
        }
        true
    }

    fn serve_requests(&mut self) {
        for _ in 0..BATCH {
            let Some((req, done)) = self.queue.pop_front() else { break };
            if let Some((req, done)) = self.serve(req, done) {
                // No space until GC frees some: keep it first in line and let GC run.
                self.queue.push_front((req, done));
                self.collect_for_space();
                break;
            }
        }
        // The batch's journal record and replies follow: its data must be written first.
        self.wait_writes();
    }

    /// Wait for the user data in flight; a request whose write failed is answered with an
    /// I/O error instead, and so is the next sync point.
    fn wait_writes(&mut self) {
        self.exec.wait_writes(&mut self.io);
        self.answer_write_failures();
    }

    /// Fail the requests whose data the executor found did not reach the members.
    fn answer_write_failures(&mut self) {
        let Some(f) = self.exec.take_failure() else { return };
        for i in f.replies {
            self.replies.fail(i);
        }
        for blocks in f.blocks {
            self.failed_lbas.extend(blocks);
        }
        // The map names slots the data may never have reached: no journal record or
        // checkpoint may claim them durable from now on (what a run carried that a
        // relocation off a failed member moved, say, has no reply to fail).
        let first = f.first;
        self.durability.lose(|| format!("a user-data write failed: {first}"));
    }

    /// Pass changes of members' health on to the scheme before it plans again.
    fn tell_scheme_health(&mut self) {
        for (m, failed) in self.io.health_news() {
            self.scheme.set_failed_member(m, failed);
        }
    }

    /// Fail the members the pool's reads found broken.
    fn fail_members_reads_met(&mut self) {
        let Some(pool) = &self.exec.pool else { return };
        self.io.fail_where(pool.take_read_errors());
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
        if writes && self.read_only {
            done(Err(Errno::Perm));
            return None;
        }
        if req.op == BlockOp::Read {
            // A read may name slots a pooled write of this batch is still filling (and
            // that write may fail).
            self.wait_writes();
            let range = lba..lba + u64::from(blocks);
            if !self.failed_lbas.is_empty() && range.clone().any(|b| self.failed_lbas.contains(&b)) {
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
            // An unmapped block of a log array reads as zeroes, and the unmap is journaled
            // like a write; in-place RAID must write the zeroes.
            BlockOp::WriteZeroes { may_trim: true } if self.kind.is_log_structured() => (ReqOp::Trim, None),
            BlockOp::WriteZeroes { .. } => (ReqOp::Write, Some(vec![0u8; req.len as usize])),
            BlockOp::Write(_) => (ReqOp::Write, None),
        };
        let r = Request { op, lba, blocks, fua: false };
        self.tell_scheme_health();
        let mut plan = std::mem::take(&mut self.plan);
        let submitted = self.scheme.submit(&r, &mut plan);
        self.note_rotation();
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
                let carried = self.carry_out(&plan, &r, user);
                self.after_carried(req.fua, writes, &r, carried, done);
            }
        }
        self.plan = plan;
        None
    }

    /// Carry out a planned user request whose data (for a write) is `user`; the reply bytes
    /// of a read, and the emulated completion, if emulating.
    fn carry_out(&mut self, plan: &IoPlan, r: &Request, user: &[u8]) -> Result<(Vec<u8>, Option<Instant>), Errno> {
        let read = r.op == ReqOp::Read;
        let mut reply = if read { vec![0u8; r.blocks as usize * BLOCK] } else { Vec::new() };
        let mut staged = Vec::new();
        // Before the plan runs: a write that seals its segment writes the summary, which
        // carries the CRC of every block, these included.
        self.journal_changes(|_, lba, _| {
            let at = (lba - r.lba) as usize * BLOCK;
            crc32c::crc32c(&user[at..at + BLOCK])
        });
        let now = self.now();
        let res = self.exec.execute(
            &mut self.io,
            &mut self.crcs,
            &*self.scheme,
            plan,
            &mut Buffers::new(user, &mut reply, &mut staged),
            now,
        );
        // Every summary the plan sealed is on the members now: the scheme may forget it.
        self.scheme.summaries_written();
        self.answer_write_failures();
        match res {
            Ok(at) => {
                if read && !self.crcs.verify_read(&self.io, &*self.scheme, plan, r.lba, &mut reply) {
                    return Err(Errno::Io);
                }
                Ok((reply, at))
            }
            Err(e) => {
                eprintln!("swan: I/O error: {e}");
                if r.op != ReqOp::Read {
                    // The map may now name a slot the data never reached.
                    self.failed_lbas.extend(r.lba..r.lba + u64::from(r.blocks));
                    self.durability.lose(|| e.to_string());
                }
                Err(Errno::Io)
            }
        }
    }

    /// Answer a carried-out request: at once (or when emulation says), or at the next sync
    /// point for a FUA write; a write with data in flight waits for it with its reply.
    fn after_carried(
        &mut self,
        fua: bool,
        writes: bool,
        r: &Request,
        carried: Result<(Vec<u8>, Option<Instant>), Errno>,
        done: Completion,
    ) {
        if writes {
            self.durability.dirty = true;
        }
        let blocks = r.lba..r.lba + u64::from(r.blocks);
        match carried {
            Ok(_) if fua && writes => {
                // A pooled or gathered write that fails ends durability (`wait_writes`),
                // so this sync point fails.
                self.replies.sync_waiters.push(done);
                self.exec.track(None, blocks.clone());
            }
            Ok((reply, at)) => {
                let now = self.now();
                let index = self.replies.complete(done, Ok(reply), at, now);
                self.exec.track(index, blocks.clone());
            }
            Err(e) => {
                done(Err(e));
                return;
            }
        }
        if writes && !self.failed_lbas.is_empty() {
            for b in blocks {
                self.failed_lbas.remove(&b);
            }
        }
    }

    /// Whether the read pool can carry `plan` out.
    fn pool_can_read(&self, plan: &IoPlan) -> bool {
        !self.no_pool
            // In-place blocks are overwritten where they are: a pooled read could meet a
            // write to the same block between its check and its read. The engine reads them.
            && self.crcs.table.is_none()
            && self.exec.pool_can_read(&self.io, plan)
    }

    /// A plain read: from the page cache here if it holds it whole, else by the pool.
    fn read_by_pool(&mut self, plan: &IoPlan, lba: u64, len: usize, done: Completion) {
        match self.exec.read_from_cache(&mut self.io, plan, len) {
            Some(mut reply) => {
                if self.crcs.verify_read(&self.io, &*self.scheme, plan, lba, &mut reply) {
                    let now = self.now();
                    self.replies.complete(done, Ok(reply), None, now);
                } else {
                    done(Err(Errno::Io));
                }
            }
            None => {
                let checks = self.crcs.checks_for(&*self.scheme, lba, len);
                self.exec.hand_out_read(&mut self.io, plan, len, checks, lba * BLOCK as u64, done);
            }
        }
    }

    /// Move the scheme's new changes into the journal queue; `crc_of(worker, lba, pba)` gives
    /// the CRC of the block a map change puts `lba` at (user writes: from the payload; GC
    /// moves: from the staged copy; anything else: read back from the member).
    fn journal_changes(&mut self, crc_of: impl Fn(&Self, u64, u64) -> u32) {
        let mut changes = std::mem::take(&mut self.changes);
        self.scheme.take_changes(&mut changes);
        let geo = self.scheme.log_array().map(|la| *la.geometry());
        for c in changes.drain(..) {
            let crc = match c {
                MapChange::Map { lba, pba } if pba != swan_core::l2p::UNMAPPED => {
                    let crc = crc_of(self, lba, pba);
                    if let Some(geo) = &geo {
                        self.crcs.note(geo, pba, crc);
                    }
                    crc
                }
                _ => 0,
            };
            self.durability.push(c, crc);
        }
        self.changes = changes;
    }

    /// [`Worker::journal_changes`] for changes whose blocks are read back.
    fn journal_changes_read_back(&mut self) {
        self.journal_changes(|w, _, pba| w.slot_crc(pba));
    }

    /// CRC32C of the block in log slot `pba`, read back ([`MemberIo::slot_crc`]).
    fn slot_crc(&self, pba: u64) -> u32 {
        self.scheme.log_array().map_or(0, |la| self.io.slot_crc(la.geometry(), pba))
    }

    /// Write the batch's tail record (not synced): the replies that follow it survive a
    /// crash of this process.
    fn journal_tail(&mut self) {
        self.journal_changes_read_back();
        if self.durability.pending.is_empty() || !self.kind.is_log_structured() {
            self.durability.forget_pending();
            return;
        }
        if let Err(e) = self.append_records(false) {
            // The batch's changes are not in the journal: no later record may claim to
            // follow on from it.
            eprintln!("swan: journal write failed: {e}");
            self.durability.lose(|| e.to_string());
        }
    }

    /// Append the pending changes as records; checkpoint instead when the ring is full.
    fn append_records(&mut self, synced: bool) -> anyhow::Result<()> {
        match self.durability.append(&mut self.io, synced)? {
            Appended::Written => Ok(()),
            Appended::CheckpointInstead => {
                // The checkpoint holds the whole map as it is now: it covers everything.
                self.sync_all()?;
                self.checkpoint()
            }
        }
    }

    /// Note a front-end rotation to the tap (only looked for when there is a tap).
    fn note_rotation(&mut self) {
        if self.io.has_tap() {
            let r = self.scheme.counters().front_rotations;
            if r != self.rotations_seen {
                self.rotations_seen = r;
                self.io.mark("rotation");
            }
        }
    }

    /// Start the GC jobs the scheme wants and advance them: one member operation per round
    /// while user requests wait, every operation while none do.
    fn advance_gc(&mut self) {
        if self.gc.broken.is_some() || self.read_only {
            return;
        }
        self.start_gc_jobs();
        let steps = if self.queue.is_empty() { 16 } else { 1 };
        for _ in 0..steps {
            if !self.gc_step() {
                break;
            }
        }
    }

    fn start_gc_jobs(&mut self) {
        self.tell_scheme_health();
        let now = self.now();
        self.gc.start_jobs(&mut *self.scheme, &self.io, now);
    }

    /// One member operation of the first GC job that may proceed. False if none could.
    fn gc_step(&mut self) -> bool {
        let now = self.now();
        match self.gc.step(now, &mut self.io, &mut self.exec, &mut self.crcs, &*self.scheme) {
            Step::Idle => false,
            Step::Progressed => true,
            Step::Done(run) => {
                self.finish_gc(run);
                true
            }
            Step::Broken(e) => {
                eprintln!("swan: I/O error: {e}");
                self.gc.broken = Some(e.to_string());
                false
            }
        }
    }

    fn finish_gc(&mut self, run: GcRun) {
        // The victim's live blocks are copied; the remap, seal and release are to come.
        self.io.mark("gc-copied");
        self.tell_scheme_health();
        let mut follow = std::mem::take(&mut self.follow);
        self.scheme.finish_gc(run.id, &mut follow);
        // The moved blocks are on the members: their CRCs go to the journal and to the
        // summaries the follow-up plan writes when it seals their segments (a poisoned
        // slot's CRC inverted). They are the CRCs of the staged copies the job wrote, checked
        // by `gc_verify`: reading every moved block back instead cost a device read per
        // block with O_DIRECT members.
        let staged_at: HashMap<u64, u32> =
            self.scheme.log_array().map(|la| run.destinations(la.geometry())).unwrap_or_default();
        let (poisoned, staged) = (run.poisoned, run.staged);
        self.journal_changes(|w, _, pba| {
            let copy =
                staged_at.get(&pba).and_then(|&slot| staged.get(slot as usize * BLOCK..(slot as usize + 1) * BLOCK));
            let crc = copy.map_or_else(|| w.slot_crc(pba), crc32c::crc32c);
            if poisoned.contains(&pba) {
                !crc
            } else {
                crc
            }
        });
        if let Err(e) = self.execute_follow_up(&follow) {
            eprintln!("swan: I/O error: {e}");
            self.gc.broken = Some(e.to_string());
        }
        self.follow = follow;
        self.durability.dirty = true;
        let now = self.now();
        self.gc.release_pending_since.get_or_insert(now);
    }

    /// Carry out a plan that moves no user data (a GC job's seals and TRIMs, a release).
    fn execute_follow_up(&mut self, plan: &IoPlan) -> Result<(), MemberError> {
        let mut staged = Vec::new();
        let now = self.now();
        let res = self.exec.execute(
            &mut self.io,
            &mut self.crcs,
            &*self.scheme,
            plan,
            &mut Buffers::new(&[], &mut [], &mut staged),
            now,
        );
        self.scheme.summaries_written();
        self.answer_write_failures();
        res.map(|_| ())
    }

    /// Writes wait for space: run GC until a victim is released, or say there is none.
    fn collect_for_space(&mut self) {
        self.wait_writes();
        loop {
            // Each sync point syncs every member: release as many victims with it as GC can
            // free by then, rather than one sync point per victim; start the jobs the
            // scheme will give before deciding that no more victims are coming.
            let mut pending = self.scheme.pending_release();
            if !self.gc.release_due && pending < RELEASE_BATCH && self.gc.broken.is_none() {
                self.start_gc_jobs();
                pending = self.scheme.pending_release();
            }
            let more_coming = !self.gc.is_idle() && pending < RELEASE_BATCH && self.gc.broken.is_none();
            if self.gc.release_due || (pending > 0 && !more_coming) {
                self.sync_point();
                if self.durability.lost.is_some() && self.scheme.pending_release() > 0 {
                    // Victims wait for a sync point that can no longer come: fail the write
                    // rather than spin.
                    if let Some((_, done)) = self.queue.pop_front() {
                        done(Err(Errno::Io));
                    }
                }
                return;
            }
            self.start_gc_jobs();
            if self.gc.is_idle() || self.gc.broken.is_some() {
                // Nothing can free space: fail the waiting write rather than hang.
                self.report_no_space();
                if let Some((_, done)) = self.queue.pop_front() {
                    done(Err(Errno::NoSpc));
                }
                return;
            }
            if !self.gc_step() {
                // Emulated phases wait for the model's clock.
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    /// Why a write finds no space: what an operator needs to see.
    fn report_no_space(&self) {
        let st = self.scheme.status();
        eprintln!(
            "swan: no space for a write and GC cannot free any: {} free segments of {}, front-end R-group {:?}, {} victims awaiting release{}",
            st.free_segments,
            st.segments,
            st.front_group,
            self.scheme.pending_release(),
            self.gc.broken.as_deref().map(|e| format!(", GC stopped after an error: {e}")).unwrap_or_default()
        );
        if let Some(la) = self.scheme.log_array() {
            let segs = la.segments();
            for g in 0..self.io.sb.rgroups {
                eprintln!(
                    "swan:   R-group {g}: {} free, best victim holds {:?} of {} blocks",
                    segs.free_count(g),
                    segs.min_valid(g).map(|s| segs.valid(s)),
                    la.geometry().payload_slots()
                );
            }
        }
    }

    /// Make every completed write durable and journal every change since the last sync
    /// point; then answer the FLUSHes and FUA writes waiting, and release GC victims.
    fn sync_point(&mut self) {
        self.wait_writes();
        if self.durability.lost.is_none() {
            // GC may have left a block's only copy on a failed member's open row with nothing
            // else written since: the victim released below must not be its last copy.
            self.relocate_at_risk();
        }
        let result = match &self.durability.lost {
            Some(why) => Err(anyhow::anyhow!("durability was lost earlier ({why}); restart to recover")),
            None if self.durability.dirty => self.sync_and_journal(),
            None => Ok(()),
        };
        let reply = match &result {
            Ok(()) => Ok(Vec::new()),
            Err(e) => {
                eprintln!("swan: sync failed: {e}");
                self.durability.lose(|| e.to_string());
                Err(Errno::Io)
            }
        };
        self.replies.answer_waiters(&reply);
        if result.is_ok() && self.scheme.pending_release() > 0 {
            self.release_victims();
        }
        self.gc.release_due = false;
    }

    /// Free the GC victims whose moves the sync point just made durable, and TRIM them.
    fn release_victims(&mut self) {
        self.io.mark("release");
        // A read handed out before may still be on its way into a victim: trimming or
        // reusing it now could hand the client someone else's data.
        if let Some(pool) = &self.exec.pool {
            pool.wait_reads();
        }
        self.tell_scheme_health();
        let mut plan = std::mem::take(&mut self.follow);
        self.scheme.release_deferred(&mut plan);
        if let Err(e) = self.execute_follow_up(&plan) {
            eprintln!("swan: I/O error: {e}");
        }
        self.follow = plan;
        self.gc.release_pending_since = None;
        self.protect_after_failure();
    }

    /// A member failed since the last sync point: rewrite what only it held in open rows
    /// to healthy members and make that durable now, not at the next FLUSH. Until then a
    /// crash would lose those blocks (the array would have lost a member and its power:
    /// two faults); this keeps that window to the operation during which the member failed.
    fn protect_after_failure(&mut self) {
        if self.io.failures == self.failures_synced || self.durability.lost.is_some() || self.read_only {
            return;
        }
        self.wait_writes();
        if let Err(e) = self.sync_and_journal() {
            eprintln!("swan: making the array safe after a member failure: {e:#}");
            self.durability.lose(|| e.to_string());
        }
    }

    fn sync_all(&mut self) -> Result<(), MemberError> {
        // Gathered user data must be written (and its errors seen) before the sync that
        // makes it durable: `wait_writes` comes first on every path here.
        assert!(self.exec.no_runs(), "a sync with gathered user data not yet written");
        let parallel = self.exec.pool.is_some();
        self.io.sync_all(parallel)
    }

    fn sync_and_journal(&mut self) -> anyhow::Result<()> {
        // Data whose only copy is a failed member's slot in an open row is rewritten to
        // healthy members first; a member failing during the sync means another round.
        loop {
            let failures = self.io.failures;
            self.relocate_at_risk();
            if let Some(why) = &self.durability.lost {
                anyhow::bail!("durability was lost ({why}); restart to recover");
            }
            self.sync_all()?;
            if self.io.failures == failures {
                break;
            }
        }
        self.failures_synced = self.io.failures;
        self.durability.synced();
        self.journal_changes_read_back();
        if !self.kind.is_log_structured() {
            self.durability.forget_pending();
            return Ok(());
        }
        if self.durability.pending.is_empty() && !self.durability.has_tail() {
            return Ok(());
        }
        self.append_records(true)
    }

    /// Write the whole map to the next checkpoint slot. Data must be durable already.
    fn checkpoint(&mut self) -> anyhow::Result<()> {
        self.checkpoint_as(false)
    }

    /// A checkpoint; `parity_whole` when every row of every open segment has its parity
    /// on the members (at a clean stop, [`Worker::parity_of_open_segments`]).
    fn checkpoint_as(&mut self, parity_whole: bool) -> anyhow::Result<()> {
        // A checkpoint claims the whole map is durable; after a failed sync or write it may
        // not be (the map can name data a failed writeback dropped). Recovery rolls forward
        // from the last good checkpoint instead.
        if let Some(why) = &self.durability.lost {
            anyhow::bail!("no checkpoint: durability was lost ({why}); restart to recover");
        }
        // The map must not name a block whose only copy is in memory (a failed member's
        // slot in an open row): move such blocks first, and make the move durable.
        if !self.read_only && !self.io.members.all_healthy() {
            self.relocate_at_risk();
            if let Some(why) = &self.durability.lost {
                anyhow::bail!("no checkpoint: durability was lost ({why}); restart to recover");
            }
            self.sync_all()?;
        }
        self.durability.forget_pending();
        let Some(la) = self.scheme.log_array() else { return Ok(()) };
        self.durability.checkpoint(&self.io, la, parity_whole)?;
        if self.verbose {
            eprintln!("swan: checkpoint {} written", self.durability.checkpoint_seq());
        }
        if !parity_whole {
            self.restate_open_rows()?;
        }
        Ok(())
    }

    /// After a checkpoint, journal again (synced) the CRC of every live block in a stripe
    /// row still filling. Such a row's parity reaches the members only when the row
    /// completes; if a crash comes first and a member is missing at the restart, its blocks
    /// in that row rebuild as garbage. Blocks journaled after the checkpoint carry a CRC that
    /// recovery keeps and reads are checked against ([`Recovered::adopted_crcs`]); this gives
    /// the blocks written before it one too, so they answer EIO rather than garbage.
    fn restate_open_rows(&mut self) -> anyhow::Result<()> {
        // Changes made since the last record (blocks moved off a failed member just now)
        // go first, so that their CRCs are known.
        self.journal_changes_read_back();
        let Some(la) = self.scheme.log_array() else { return Ok(()) };
        let geo = *la.geometry();
        let mut restated: Vec<(MapChange, u32)> = Vec::new();
        for (_, block, row) in self.io.rows.iter() {
            for &m in &row.written {
                let Some((seg, slot)) = geo.slot_at(m, block) else { continue };
                let pba = geo.pba(seg, slot);
                let Some(lba) = la.live_lba(pba) else { continue };
                if let Some(crc) = self.crcs.open_crc(seg, slot) {
                    restated.push((MapChange::Map { lba, pba }, crc));
                }
            }
        }
        if restated.is_empty() && self.durability.pending.is_empty() {
            return Ok(());
        }
        // The same record whatever order the rows are held in (deterministic replays).
        restated.sort_unstable_by_key(|&(c, _)| match c {
            MapChange::Map { pba, .. } => pba,
            _ => u64::MAX,
        });
        for (c, crc) in restated {
            self.durability.push(c, crc);
        }
        self.append_records(true)
    }

    /// Rewrite, to healthy members, the live blocks whose only copy is the slot of a failed
    /// (or rebuilding) member in a stripe row still open. Such a row has no parity on disk
    /// yet (it gets it when its last block is written): the block lives in the row's running
    /// XOR in memory and nowhere else durable, so a crash would lose it. It got there
    /// written before its member failed (or by GC, which is not told of failures: its
    /// destination slots were chosen before); user writes skip a failed member's slots.
    /// Called before every sync point's sync, so a FLUSH never covers such a block and a GC
    /// victim is never released while its data depends on one.
    fn relocate_at_risk(&mut self) {
        let Some(la) = self.scheme.log_array() else { return };
        if self.io.members.all_healthy() {
            return;
        }
        let geo = *la.geometry();
        let mut at_risk: Vec<(u64, u32, u64)> = Vec::new();
        for (_, row, open) in self.io.rows.iter() {
            for &m in open.written.iter().filter(|&&m| !self.io.members.is_healthy(m)) {
                let live = geo.slot_at(m, row).and_then(|(seg, slot)| la.live_lba(geo.pba(seg, slot)));
                if let Some(lba) = live {
                    at_risk.push((lba, m, row));
                }
            }
        }
        at_risk.sort_unstable();
        let moved = !at_risk.is_empty();
        for (lba, m, block) in at_risk {
            let mut data = vec![0u8; BLOCK];
            if let Err(e) = self.io.reconstruct(m, block, &mut data) {
                self.durability.lose(|| format!("block {lba} of a failed member lost: {e}"));
                continue;
            }
            let req =
                BlockRequest { op: BlockOp::Write(data), offset: lba * BLOCK as u64, len: BLOCK as u32, fua: false };
            if self.serve(req, Box::new(|_| {})).is_some() {
                self.durability
                    .lose(|| format!("no space to move block {lba} off failed member {m}'s open stripe row"));
            }
        }
        if moved {
            // The moves are gathered like any user write: every caller syncs next, and the
            // sync must find them on the members (a failed write ends durability here).
            self.wait_writes();
        }
    }

    /// Give the rows of segments adopted at recovery (and of segments sealed by an unsynced
    /// journal record) their parity. Such a segment was open at the crash: its last rows
    /// were filling and their parity, written when a row completes, never was. Each row's
    /// parity becomes the XOR of what its data columns hold now, so a member failing later
    /// can be rebuilt; the data is untouched.
    fn reparity_adopted(&mut self) -> Result<u64, MemberError> {
        let Some(la) = self.scheme.log_array() else { return Ok(0) };
        let geo = *la.geometry();
        if geo.raid == swan_core::geometry::RaidLevel::Raid0 {
            return Ok(0);
        }
        let segs = la.segments();
        // Also the segments sealed by a record written before its data was synced: the
        // summary made it, the parity of the rows before it may not have.
        let mut adopted: Vec<u64> = if self.parity_whole {
            // Adopted at a clean stop, their rows got their parity then.
            Vec::new()
        } else {
            (0..segs.len()).filter(|&s| segs.seq(s) == 0 && segs.valid(s) > 0).collect()
        };
        adopted.extend(std::mem::take(&mut self.unsynced_seals));
        let mut rows = 0;
        for seg in adopted {
            let group = geo.group_of_segment(seg);
            if let Some(m) =
                (0..geo.ssds_per_rgroup).map(|c| geo.member(group, c)).find(|&m| !self.io.members.is_healthy(m))
            {
                eprintln!(
                    "swan: segment {seg} was open at the crash and member {m} of its R-group has failed: \
                     its last rows have no parity, and what they held on member {m} is lost"
                );
                continue;
            }
            rows += self.io.reparity_segment(&geo, seg)?;
        }
        Ok(rows)
    }

    /// At a clean stop: give every row of every open segment (user, GC) its parity from
    /// what its data columns hold, so that the next start, even with a member missing, finds
    /// every row whole. Open segments of a degraded R-group are left as they are: what its
    /// failed member held in their open rows was moved off ([`Worker::relocate_at_risk`]),
    /// and losing a second member is beyond what parity covers.
    fn parity_of_open_segments(&mut self) -> Result<u64, MemberError> {
        let Some(la) = self.scheme.log_array() else { return Ok(0) };
        let geo = *la.geometry();
        if geo.raid == swan_core::geometry::RaidLevel::Raid0 {
            return Ok(0);
        }
        let segs = la.segments();
        let open: Vec<u64> = (0..segs.len()).filter(|&s| segs.state(s) == SegState::Open).collect();
        let mut rows = 0;
        for seg in open {
            let group = geo.group_of_segment(seg);
            if (0..geo.ssds_per_rgroup).all(|c| self.io.members.is_healthy(geo.member(group, c))) {
                rows += self.io.reparity_segment(&geo, seg)?;
            }
        }
        Ok(rows)
    }

    /// No member I/O of the pool in flight: what changes a member's health or place must
    /// not race with it.
    fn drain_member_io(&mut self) {
        self.wait_writes();
        if let Some(pool) = &self.exec.pool {
            pool.wait_reads();
        }
    }

    /// `swan fail`: take member `m` out of service as if it had failed.
    pub fn fail_by_request(&mut self, m: u32) -> Result<String, String> {
        self.io.refuse_to_fail(m)?;
        self.drain_member_io();
        if !self.io.fail(m, "failed by request (swan fail)") {
            return Err(format!("member {m} cannot be spared"));
        }
        Ok(format!("member {m} ({}) marked failed", self.io.members[m as usize].path().display()))
    }

    /// `swan replace`: rebuild member `m` onto the device or file at `path`.
    pub fn start_replace(&mut self, m: u32, path: &Path) -> Result<String, String> {
        let new = self.io.open_replacement(m, path, self.read_only)?;
        self.drain_member_io();
        self.io.start_rebuild(m, new, path)
    }

    pub fn status(&self) -> StatusReport {
        let counts = &self.crcs.counts;
        let read_count = |f: fn(&crate::pool::ReadChecks) -> &std::sync::atomic::AtomicU64| {
            f(counts).load(std::sync::atomic::Ordering::Relaxed)
        };
        let st = self.scheme.status();
        let c = self.scheme.counters();
        let jobs = &self.gc.jobs;
        let groups = match (self.kind, self.scheme.log_array()) {
            (SchemeKind::Swan(_), Some(la)) => (0..self.io.sb.rgroups)
                .map(|g| GroupStatus {
                    group: g,
                    gc_jobs: jobs[g as usize],
                    role: if st.front_group == Some(g) {
                        "front-end".into()
                    } else if st.gc_groups & (1 << (g % 64)) != 0 {
                        "back-end GC".into()
                    } else {
                        "back-end idle".into()
                    },
                    free_segments: la.segments().free_count(g),
                })
                .collect(),
            (_, Some(la)) => vec![GroupStatus {
                group: 0,
                gc_jobs: jobs[0],
                role: if st.gc_groups != 0 { "log, GC".into() } else { "log".into() },
                free_segments: la.segments().free_count(0),
            }],
            _ => vec![GroupStatus { group: 0, gc_jobs: 0, role: "in-place".into(), free_segments: 0 }],
        };
        let d = &self.durability;
        let checks = &self.gc.checks;
        StatusReport {
            uuid: self.io.sb.uuid_string(),
            scheme: self.kind.to_string(),
            volume_bytes: self.scheme.volume_blocks() * BLOCK as u64,
            uptime_s: self.now().saturating_duration_since(self.started).as_secs_f64(),
            groups,
            members: self
                .io
                .stats
                .iter()
                .enumerate()
                .map(|(i, st)| MemberStatus { health: self.io.members.health(i as u32).name().into(), ..st.clone() })
                .collect(),
            free_segments: st.free_segments,
            segments: st.segments,
            gc_target: self
                .scheme
                .log_array()
                .filter(|la| la.config().layout == swan_core::scheme::Layout::Swan)
                .map(|la| la.config().swan_gc_target),
            user_bytes_written: c.user_blocks_written * BLOCK as u64,
            user_bytes_read: c.user_blocks_read * BLOCK as u64,
            gc_blocks_moved: c.gc_blocks_moved,
            victims: c.victims,
            front_rotations: c.front_rotations,
            sync_points: d.sync_points,
            journal_records: d.journal_records,
            checkpoints: d.checkpoints,
            queued_requests: self.queue.len(),
            reads_verified: read_count(|c| &c.verified),
            read_mismatches: read_count(|c| &c.mismatches),
            read_repairs: read_count(|c| &c.repaired),
            read_failures: read_count(|c| &c.failed),
            reads_unverified: read_count(|c| &c.unverified),
            gc_verified: checks.verified,
            gc_repaired: checks.repaired,
            gc_lost: checks.lost,
            gc_unverified: checks.unverified,
            rebuild: self.io.rebuild_status(),
        }
    }
}

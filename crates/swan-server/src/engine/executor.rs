//! Carries a plan out on the members: each member operation in plan order, the bytes each
//! write carries, the running parity of the rows it fills, and, with emulation, when the
//! modelled SSDs would complete it.
//!
//! Without emulation (which times each operation), log-structured user data is gathered into
//! one write per run of consecutive blocks of a member, across the requests of a batch: a
//! stripe deals a request's blocks out to its members in turn, and a log puts the next
//! request's blocks right after, so written as they come each 4 KiB would cost a system call
//! (and, O_DIRECT, a device write). The runs are written before anything reads the members
//! or waits for writes ([`Executor::wait_writes`]: before a read, a sync point, GC, the
//! batch's journal record and its replies), so nothing can see the difference but the member.

use super::crcs::Crcs;
use super::later_phases::{LaterPhases, ModelOp};
use super::member_io::MemberIo;
use super::run_buf::RunBuf;
use super::zone_holds::{Owner, ZoneHolds};
use crate::emulate::{EmuOp, Emulator};
use crate::member::{MemberError, Op, BLOCK};
use crate::members::Health;
use crate::parity::xor;
use crate::pool::{Check, IoPool, Piece, Tally};
use crate::service::Completion;
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use swan_core::geometry::{Geometry, RaidLevel};
use swan_core::io::{Dst, IoClass, IoKind, IoPlan, MemberIo as PlannedIo, Src};
use swan_core::scheme::{ArrayScheme, GcJobId, SchemeKind};

/// Gathered user data is written out once this much has gathered (or at the batch's end).
const RUNS_FLUSH_AT: usize = 1 << 20;
/// Run buffers kept for reuse while requests keep coming (freed when the engine goes idle).
/// Buffers this large are mapped afresh by malloc each time (`swan-cli`'s alloc.rs), so a
/// new one costs a page fault and a cleared page per 4 KiB filled, and an unmap with TLB
/// shootdowns when freed: a quarter of the server's CPU at 128 KiB sequential writes. A
/// batch writes a run on each member it reaches, and over O_DIRECT members two batches'
/// runs are out at once: enough for two batches over 8 members.
const SPARE_RUNS: usize = 16;

/// Where a plan's bytes come from and go to.
pub(super) struct Buffers<'a> {
    pub user: &'a [u8],
    pub reply: &'a mut [u8],
    pub staged: &'a mut Vec<u8>,
    /// (member, block) → staged slot of this plan's reads, for parity read-modify-write.
    old: HashMap<(u32, u64), u32>,
    summaries: HashMap<u64, Vec<u8>>,
}

impl<'a> Buffers<'a> {
    pub fn new(user: &'a [u8], reply: &'a mut [u8], staged: &'a mut Vec<u8>) -> Self {
        Buffers { user, reply, staged, old: HashMap::new(), summaries: HashMap::new() }
    }
}

/// User data bound for consecutive blocks of one member, gathered from the payloads of the
/// requests of a batch.
struct Gathered {
    member: u32,
    block: u64,
    data: RunBuf,
}

/// Writes that failed after their requests were carried out: the requests to answer with
/// an error instead, and the blocks whose data may not have reached the members.
pub(super) struct WriteFailure {
    pub replies: Vec<usize>,
    pub blocks: Vec<Range<u64>>,
    pub first: String,
    /// Where writes found a member's file system full (member path, operation)...
    pub full: Vec<(PathBuf, Op)>,
    /// ...and whether any write failed otherwise.
    pub other: bool,
}

pub(super) struct Executor {
    /// Where plain user reads and O_DIRECT user-data writes are carried out (none while
    /// emulating, which times every operation, nor under the stepper).
    pub pool: Option<IoPool>,
    pub emu: Option<Emulator>,
    log_structured: bool,
    /// Carry out a log's TRIMs on file members too ([`super::EngineOptions::punch_holes`]).
    punch_holes: bool,
    has_parity: bool,
    /// Members per parity group.
    parity_width: u32,
    runs: Vec<Gathered>,
    run_bytes: usize,
    /// Emptied run buffers, for the next runs ([`SPARE_RUNS`]).
    spare_runs: Vec<RunBuf>,
    /// Runs handed to the pool, taken back once it has written them.
    pooled_runs: Vec<Arc<Vec<u8>>>,
    /// Errors of run writes done on this thread, for the next [`Executor::wait_writes`].
    run_errors: Vec<MemberError>,
    /// The plan being carried out left user data in flight (gathered or pooled).
    in_flight: bool,
    /// Requests with data in flight: their reply (an index into the batch's replies; none
    /// for a FUA write, which waits for a sync point) and logical blocks.
    tickets: Vec<Ticket>,
    /// The pooled writes of the batch being served.
    batch: Arc<Tally>,
    /// The last batch, its writes still in flight while the next one is served.
    sealed: Option<Sealed>,
    /// Batches sealed so far.
    pub batches_overlapped: u64,
    failure: Option<WriteFailure>,
    /// Emulating: user requests' later phases, waiting for the model ([`super::later_phases`]).
    pub later: LaterPhases,
    /// Emulating zoned members: writes waiting for their zones on the model
    /// ([`super::zone_holds`]).
    pub holds: ZoneHolds,
}

/// When a member operation completes on the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ModelDone {
    /// Not emulating: the server knows nothing of its members' queues.
    Unmodelled,
    At(Instant),
    /// A write waiting for its zone ([`super::zone_holds`]): its owner learns when later.
    Held,
}

type Ticket = (Option<usize>, Range<u64>);

/// A served batch whose pooled writes may still be in flight: its journal record and
/// replies wait for them ([`Executor::wait_sealed`]).
struct Sealed {
    writes: Arc<Tally>,
    tickets: Vec<Ticket>,
}

impl Executor {
    pub fn new(
        kind: SchemeKind,
        parity_width: u32,
        pool: Option<IoPool>,
        emu: Option<Emulator>,
        punch_holes: bool,
    ) -> Executor {
        Executor {
            punch_holes,
            pool,
            emu,
            log_structured: kind.is_log_structured(),
            has_parity: kind.raid() != RaidLevel::Raid0,
            parity_width,
            runs: Vec::new(),
            run_bytes: 0,
            spare_runs: Vec::new(),
            pooled_runs: Vec::new(),
            run_errors: Vec::new(),
            in_flight: false,
            tickets: Vec::new(),
            batch: Arc::default(),
            sealed: None,
            batches_overlapped: 0,
            failure: None,
            later: LaterPhases::default(),
            holds: ZoneHolds::default(),
        }
    }

    /// Carry out every phase of `plan`; with emulation, return when the model completes it.
    /// `scheme` gives the summaries the plan writes.
    pub fn execute(
        &mut self,
        io: &mut MemberIo,
        crcs: &mut Crcs,
        scheme: &ArrayScheme,
        plan: &IoPlan,
        b: &mut Buffers<'_>,
        start: Instant,
    ) -> Result<Option<Instant>, MemberError> {
        self.in_flight = false;
        let mut t = start;
        let gather = self.emu.is_none() && self.log_structured;
        // Emulating a user request of several phases: the model hears of the later ones when
        // the first is done on it (their bytes go to the members now).
        let defer = self.later.defer && self.emu.is_some() && plan.phase_count() > 1;
        let mut later = std::collections::VecDeque::new();
        for k in 0..plan.phase_count() {
            if defer && k > 0 {
                if self.writes_outstanding() && plan.phase(k).iter().any(|p| matches!(p.kind, IoKind::Read(_))) {
                    self.wait_writes(io);
                }
                let mut ops = Vec::new();
                for p in plan.phase(k) {
                    if let Some(op) = self.io_bytes(io, crcs, scheme, p, b)? {
                        ops.push(ModelOp { member: p.member, op, block: p.block, count: p.count, class: p.class });
                    }
                }
                later.push_back(ops);
                continue;
            }
            let mut end = t;
            if self.writes_outstanding() && plan.phase(k).iter().any(|p| matches!(p.kind, IoKind::Read(_))) {
                // A read must find what was written before it: written, not only handed to
                // the pool.
                self.wait_writes(io);
            }
            for p in plan.phase(k) {
                if let (true, IoKind::Write(src @ Src::User { .. })) = (gather, p.kind) {
                    self.gather(io, crcs, scheme, p, src, b);
                    continue;
                }
                if matches!(p.kind, IoKind::Write(_))
                    && !self.runs.is_empty()
                    && io.members[p.member as usize].zoned().is_some()
                {
                    // A zone takes its writes in block order: the user data gathered before
                    // this write (a summary after the segment's last blocks) goes first.
                    self.flush_runs(io);
                }
                if let ModelDone::At(done) = self.do_io(io, crcs, scheme, p, b, t)? {
                    end = end.max(done);
                }
            }
            t = end;
        }
        if self.run_bytes >= RUNS_FLUSH_AT {
            self.flush_runs(io);
        }
        if !later.is_empty() {
            self.later.push(t, later);
        }
        Ok(self.emu.is_some().then_some(t))
    }

    /// The request just carried out (its reply at `reply`, none for a FUA write) waits for
    /// the user data it left in flight, if it left any.
    pub fn track(&mut self, reply: Option<usize>, blocks: Range<u64>) {
        if self.in_flight {
            self.tickets.push((reply, blocks));
        }
    }

    /// Add user write `p` to the run it continues, or start a run.
    fn gather(
        &mut self,
        io: &mut MemberIo,
        crcs: &mut Crcs,
        scheme: &ArrayScheme,
        p: &PlannedIo,
        src: Src,
        b: &mut Buffers<'_>,
    ) {
        let data = self.source(io, crcs, scheme, p, src, b);
        let next = |g: &Gathered| g.member == p.member && g.block + (g.data.len() / BLOCK) as u64 == p.block;
        self.run_bytes += data.len();
        // The newest run is the likeliest to continue: look from the back.
        match self.runs.iter_mut().rev().find(|g| next(g)) {
            Some(g) => g.data.extend(&data),
            None => {
                let mut run = self.spare_runs.pop().unwrap_or_else(|| RunBuf::with_capacity(RUNS_FLUSH_AT));
                run.extend(&data);
                self.runs.push(Gathered { member: p.member, block: p.block, data: run });
            }
        }
        self.in_flight = true;
        let s = &mut io.stats[p.member as usize];
        s.user_bytes_written += (p.count as usize * BLOCK) as u64;
        s.writes += 1;
    }

    /// Write every gathered run; errors of those written here wait for `wait_writes`.
    fn flush_runs(&mut self, io: &mut MemberIo) {
        self.run_bytes = 0;
        for g in std::mem::take(&mut self.runs) {
            if let Err(e) = self.write_gathered(io, g) {
                self.run_errors.push(e);
            }
        }
    }

    /// Write a gathered run: by the pool on an O_DIRECT member, else here, starting its
    /// writeback (a log does not write these blocks again soon).
    ///
    /// Through the page cache a run is a copy into memory, cheaper than handing it to a
    /// thread and waiting for that thread's wakeup (docs/server-speed.md has the figures).
    fn write_gathered(&mut self, io: &mut MemberIo, g: Gathered) -> Result<(), MemberError> {
        let count = (g.data.len() / BLOCK) as u64;
        match &self.pool {
            // With O_DIRECT every write waits for the device: hand them to the pool, so the
            // engine does not wait out each device write in turn. Not on a zoned member: two
            // threads could reach a zone's write pointer in the other order.
            Some(pool)
                if io.members[g.member as usize].is_direct()
                    && io.members[g.member as usize].zoned().is_none()
                    && io.members.health(g.member) != Health::Failed =>
            {
                let (data, range) = g.data.into_parts();
                let data = Arc::new(data);
                self.pooled_runs.push(Arc::clone(&data));
                pool.write(&io.members, g.member, g.block, data, range, &self.batch);
                self.in_flight = true;
                Ok(())
            }
            _ => {
                let written = io.write(g.member, g.block, g.data.bytes());
                if written.is_ok() {
                    io.members[g.member as usize].write_behind(g.block, count);
                }
                self.spare_run(g.data);
                written
            }
        }
    }

    /// Keep an emptied run buffer for the next run, unless enough are kept or it grew
    /// past a run's usual size (one large request).
    fn spare_run(&mut self, mut run: RunBuf) {
        if self.spare_runs.len() < SPARE_RUNS && run.capacity() <= 2 * RUNS_FLUSH_AT {
            run.clear();
            self.spare_runs.push(run);
        }
    }

    /// Let the spare run buffers go (the engine is idle: memory at rest is the map's).
    pub fn drop_spares(&mut self) {
        self.spare_runs = Vec::new();
    }

    /// Whether no gathered user data waits to be written.
    pub fn no_runs(&self) -> bool {
        self.runs.is_empty()
    }

    /// Whether user data is gathered or being written by the pool.
    fn writes_outstanding(&self) -> bool {
        !self.runs.is_empty() || self.sealed.is_some() || !self.batch.is_clear()
    }

    /// Whether the last batch's writes may still be in flight ([`Executor::seal_batch`]).
    pub fn has_sealed(&self) -> bool {
        self.sealed.is_some()
    }

    /// End the batch being served without waiting for its writes: what is gathered goes to
    /// the members, and if pooled writes are still in flight the batch is sealed, for
    /// [`Executor::wait_sealed`] to wait for while the next batch is served. False if
    /// nothing is in flight (or a write failed): the caller waits as before
    /// ([`Executor::wait_writes`]). Only one batch is sealed at a time.
    pub fn seal_batch(&mut self, io: &mut MemberIo) -> bool {
        debug_assert!(self.sealed.is_none(), "a batch sealed while the last one is in flight");
        self.flush_runs(io);
        let failed = !self.run_errors.is_empty() || self.pool.as_ref().is_some_and(IoPool::write_failed);
        if failed || self.batch.is_clear() {
            return false;
        }
        let writes = std::mem::take(&mut self.batch);
        self.sealed = Some(Sealed { writes, tickets: std::mem::take(&mut self.tickets) });
        self.batches_overlapped += 1;
        true
    }

    /// Wait for the sealed batch's writes (none may still be gathered for it). A write that
    /// failed fails as [`Executor::wait_writes`] says, for every batch in flight.
    pub fn wait_sealed(&mut self, io: &mut MemberIo) {
        let Some(sealed) = &self.sealed else { return };
        sealed.writes.wait();
        if self.pool.as_ref().is_some_and(IoPool::write_failed) {
            self.wait_writes(io);
            return;
        }
        self.sealed = None;
        self.take_back_runs();
    }

    /// Keep for reuse the run buffers the pool is done with.
    fn take_back_runs(&mut self) {
        for run in std::mem::take(&mut self.pooled_runs) {
            match Arc::try_unwrap(run) {
                Ok(run) => self.spare_run(RunBuf::from_vec(run)),
                Err(still_written) => self.pooled_runs.push(still_written),
            }
        }
    }

    /// Write what is gathered and wait for the writes handed to the pool. A member that
    /// failed under a pooled write is spared if its parity group can spare it (the parity
    /// computed here from the same data keeps the write); any other error fails every
    /// request with data in flight ([`Executor::take_failure`]).
    pub fn wait_writes(&mut self, io: &mut MemberIo) {
        self.flush_runs(io);
        // Run writes done here were spared already where they could be (`MemberIo::write`).
        let mut errors = std::mem::take(&mut self.run_errors);
        if let Some(sealed) = self.sealed.take() {
            // Its tickets first: they are the older requests.
            self.tickets.splice(0..0, sealed.tickets);
        }
        if let Some(pool) = &self.pool {
            let mut pooled = pool.wait_writes();
            // The pool has dropped its references to the runs it wrote.
            self.take_back_runs();
            pooled.retain(|e| !io.spare(e));
            errors.extend(pooled);
        }
        if !errors.is_empty() {
            for e in &errors {
                eprintln!("swan: I/O error: {e}");
            }
            // Which write failed is not known here: every request whose data went to the
            // pool or into a run fails, and its blocks read as errors until rewritten.
            let f = self.failure.get_or_insert_with(|| WriteFailure {
                replies: Vec::new(),
                blocks: Vec::new(),
                first: errors[0].to_string(),
                full: Vec::new(),
                other: false,
            });
            for e in &errors {
                match e.is_full() {
                    true => f.full.push((e.path().to_path_buf(), e.op())),
                    false => f.other = true,
                }
            }
            for (reply, blocks) in std::mem::take(&mut self.tickets) {
                f.replies.extend(reply);
                f.blocks.push(blocks);
            }
        }
        self.tickets.clear();
    }

    /// What the waits since the last call found failed.
    pub fn take_failure(&mut self) -> Option<WriteFailure> {
        self.failure.take()
    }

    /// One member operation. Returns when it completes on the model, if emulating.
    pub fn do_io(
        &mut self,
        io: &mut MemberIo,
        crcs: &mut Crcs,
        scheme: &ArrayScheme,
        p: &PlannedIo,
        b: &mut Buffers<'_>,
        issue: Instant,
    ) -> Result<ModelDone, MemberError> {
        let op = self.io_bytes(io, crcs, scheme, p, b)?;
        let (Some(op), Some(emu)) = (op, self.emu.as_mut()) else { return Ok(ModelDone::Unmodelled) };
        let op = ModelOp { member: p.member, op, block: p.block, count: p.count, class: p.class };
        let later = &mut self.later;
        Ok(match self.holds.submit(emu, issue, op, || later.new_token()) {
            Some(t) => ModelDone::At(t),
            None => ModelDone::Held,
        })
    }

    /// Emulating: give the model the later phases and the held writes due by `now` (all of
    /// them if `all`); the requests whose last operation that was, with their model
    /// completion, go into `done`, and the GC jobs whose held writes have all completed into
    /// `landed`.
    pub fn advance_model(
        &mut self,
        now: Instant,
        all: bool,
        done: &mut Vec<(u64, Instant)>,
        landed: &mut Vec<(GcJobId, Instant)>,
    ) {
        let Some(emu) = self.emu.as_mut() else { return };
        self.later.advance(emu, now, all, done);
        let mut owners = Vec::new();
        self.holds.advance(emu, now, all, &mut owners);
        for (owner, at) in owners {
            match owner {
                Owner::Reply(token) => done.push((token, at)),
                Owner::Gc(id) => landed.push((id, at)),
                Owner::Nobody | Owner::Request => {}
            }
        }
    }

    /// Emulating: when the model is next due to hear of waiting work (a later phase, a held
    /// write).
    pub fn model_due(&self) -> Option<Instant> {
        match (self.later.next_due(), self.holds.next_due()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// One member operation's bytes; what the model SSD is to hear of it (none for a flush).
    fn io_bytes(
        &mut self,
        io: &mut MemberIo,
        crcs: &mut Crcs,
        scheme: &ArrayScheme,
        p: &PlannedIo,
        b: &mut Buffers<'_>,
    ) -> Result<Option<EmuOp>, MemberError> {
        let m = p.member as usize;
        let n = p.count as usize * BLOCK;
        let gc = p.class == IoClass::Gc;
        let emu_op = match p.kind {
            IoKind::Read(dst) => {
                match dst {
                    Dst::User { offset } => {
                        let at = offset as usize * BLOCK;
                        io.read(p.member, p.block, &mut b.reply[at..at + n])?;
                    }
                    Dst::Staged { slot } => {
                        let at = slot as usize * BLOCK;
                        if b.staged.len() < at + n {
                            b.staged.resize(at + n, 0);
                        }
                        io.read(p.member, p.block, &mut b.staged[at..at + n])?;
                        // In-place read-modify-write: old data or parity that rotted would
                        // carry its damage into the new parity.
                        if crcs.table.is_some() {
                            crcs.verify_member_blocks(&io.members, p.member, p.block, &mut b.staged[at..at + n]);
                        }
                        if self.has_parity && !gc {
                            for i in 0..p.count {
                                b.old.insert((p.member, p.block + u64::from(i)), slot + i);
                            }
                        }
                    }
                    Dst::Rebuild { offset } => {
                        // One column of a row read around its member: XORed into the reply,
                        // which the row's other columns complete.
                        let mut column = vec![0u8; n];
                        io.read(p.member, p.block, &mut column)?;
                        if crcs.table.is_some() {
                            crcs.verify_member_blocks(&io.members, p.member, p.block, &mut column);
                        }
                        let at = offset as usize * BLOCK;
                        xor(&mut b.reply[at..at + n], &column);
                    }
                }
                let s = &mut io.stats[m];
                *if gc { &mut s.gc_bytes_read } else { &mut s.bytes_read } += n as u64;
                s.reads += 1;
                EmuOp::Read
            }
            IoKind::Write(src) => {
                let data = self.source(io, crcs, scheme, p, src, b);
                if let Some(table) = crcs.table.as_mut() {
                    table.record(p.member, p.block, &data);
                }
                io.write(p.member, p.block, &data)?;
                let s = &mut io.stats[m];
                *if gc { &mut s.gc_bytes_written } else { &mut s.user_bytes_written } += n as u64;
                s.writes += 1;
                EmuOp::Write
            }
            IoKind::Trim => {
                if let Some(table) = crcs.table.as_mut() {
                    table.forget(p.member, p.block, u64::from(p.count));
                }
                // A log's TRIMs free segments: worth it on an SSD, not on a file (the model
                // of an emulated SSD hears of them all the same).
                if !self.log_structured || self.punch_holes || io.members[m].trims_free_space() {
                    io.trim(p.member, p.block, u64::from(p.count))?;
                }
                io.stats[m].trims += 1;
                EmuOp::Trim
            }
            // Durability is the sync point's job (FLUSH and FUA both wait for one).
            IoKind::Flush => return Ok(None),
        };
        // A zone the rebuild has not reached took nothing: its model hears of nothing either
        // (it takes the zone as the rebuild leaves it).
        if emu_op != EmuOp::Read && io.zone_not_rebuilt(p.member, p.block) {
            return Ok(None);
        }
        Ok(Some(emu_op))
    }

    /// The bytes a member write carries (borrowed from the plan's buffers where they are
    /// there already: no copy of user data); data blocks also go into their row's parity.
    fn source<'b>(
        &mut self,
        io: &mut MemberIo,
        crcs: &mut Crcs,
        scheme: &ArrayScheme,
        p: &PlannedIo,
        src: Src,
        b: &'b mut Buffers<'_>,
    ) -> Cow<'b, [u8]> {
        let n = p.count as usize * BLOCK;
        if let Src::Summary { segment, .. } = src {
            if let std::collections::hash_map::Entry::Vacant(slot) = b.summaries.entry(segment) {
                slot.insert(encode_summary(scheme, crcs.open.remove(&segment), segment));
            }
        }
        let b: &'b Buffers<'_> = b;
        let data: Cow<'b, [u8]> = match src {
            Src::User { offset } => Cow::Borrowed(&b.user[offset as usize * BLOCK..offset as usize * BLOCK + n]),
            Src::Staged { slot } => {
                let at = slot as usize * BLOCK;
                Cow::Borrowed(&b.staged[at..at + n])
            }
            Src::Zero => Cow::Owned(vec![0u8; n]),
            Src::Summary { segment, index } => {
                let at = index as usize * BLOCK;
                Cow::Borrowed(&b.summaries[&segment][at..at + n])
            }
            Src::Parity { group, row } => {
                let mut parity = io.rows.close(group, row);
                if let Some(&slot) = b.old.get(&(p.member, row)) {
                    xor(&mut parity, &b.staged[slot as usize * BLOCK..(slot as usize + 1) * BLOCK]);
                }
                return Cow::Owned(parity);
            }
        };
        if self.has_parity {
            let group = p.member / self.parity_width;
            for i in 0..p.count as usize {
                let block = p.block + i as u64;
                // In-place read-modify-write: the old data leaves the parity.
                let old = b
                    .old
                    .get(&(p.member, block))
                    .map(|&slot| &b.staged[slot as usize * BLOCK..(slot as usize + 1) * BLOCK]);
                io.rows.add(group, block, p.member, &data[i * BLOCK..(i + 1) * BLOCK], old);
            }
        }
        data
    }

    /// Whether the pool can carry `plan` out: one phase of plain member reads into the
    /// reply (and at least one: a read of unmapped blocks is answered here at once), all on
    /// healthy members (a failed member's blocks are rebuilt here, where the open rows'
    /// parity is).
    pub fn pool_can_read(&self, io: &MemberIo, plan: &IoPlan) -> bool {
        self.pool.is_some()
            && plan.phase_count() == 1
            && !plan.ios().is_empty()
            && plan.ios().iter().all(|p| matches!(p.kind, IoKind::Read(Dst::User { .. })))
            && plan.ios().iter().all(|p| io.members.is_healthy(p.member))
    }

    /// A planned read the page cache holds whole, carried out here: cheaper than handing
    /// it to an I/O thread, whose wake-up and reply cost more than the copy (buffered 4 KiB
    /// random reads spent two fifths of the server's samples switching threads). None: some
    /// block is not cached (or the member cannot say); the pool reads it.
    pub fn read_from_cache(&self, io: &mut MemberIo, plan: &IoPlan, len: usize) -> Option<Vec<u8>> {
        let mut reply = vec![0u8; len];
        for p in plan.ios() {
            let IoKind::Read(Dst::User { offset }) = p.kind else { return None };
            let at = offset as usize * BLOCK;
            let buf = &mut reply[at..at + p.count as usize * BLOCK];
            if !io.members[p.member as usize].read_if_cached(p.block, buf) {
                return None;
            }
        }
        for p in plan.ios() {
            let s = &mut io.stats[p.member as usize];
            s.bytes_read += u64::from(p.count) * BLOCK as u64;
            s.reads += 1;
        }
        Some(reply)
    }

    /// Hand a planned read of `len` bytes from volume byte `offset` to the pool, which checks
    /// each block against `checks` and replies from there.
    pub fn hand_out_read(
        &self,
        io: &mut MemberIo,
        plan: &IoPlan,
        len: usize,
        checks: Option<(Geometry, Vec<Check>)>,
        offset: u64,
        done: Completion,
    ) {
        let pool = self.pool.as_ref().expect("checked by pool_can_read");
        let mut pieces = Vec::with_capacity(plan.ios().len());
        for p in plan.ios() {
            let IoKind::Read(Dst::User { offset }) = p.kind else { unreachable!("checked by pool_can_read") };
            pieces.push(Piece { member: p.member, block: p.block, count: p.count, offset });
            let s = &mut io.stats[p.member as usize];
            s.bytes_read += u64::from(p.count) * BLOCK as u64;
            s.reads += 1;
        }
        pool.read(&io.members, pieces, len, checks, offset, done);
    }
}

/// The bytes of `segment`'s summary as the scheme has it, with the CRC of every live block
/// written into it (`crcs`, held since the segment opened).
fn encode_summary(scheme: &ArrayScheme, crcs: Option<Vec<u32>>, segment: u64) -> Vec<u8> {
    scheme.encoded_summary(segment, crcs).unwrap_or_else(|| vec![0u8; BLOCK])
}

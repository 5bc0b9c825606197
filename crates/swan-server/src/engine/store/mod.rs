//! The array as the engine holds it: the scheme, its members, and what keeps them durable.
//!
//! Everything here must agree with what is on the members: the scheme's map, the parity of
//! open rows, the CRCs reads are checked against, the journal and checkpoints. The store
//! carries planned requests out ([`Store::carry_out`]), journals what they changed, runs
//! the durable half of a sync point ([`Store::sync_and_journal`]), writes checkpoints, and
//! keeps data off failed members ([`Store::relocate_at_risk`]). *When* each of these happens
//! is the round loop's business ([`super::worker`]).

mod adopt;
mod at_risk;
mod zoned;
mod zoned_parity;

use super::clock::Clock;
use super::crcs::Crcs;
use super::durability::{Appended, Durability};
use super::executor::{Buffers, Executor};
use super::gc::{GcRun, Staged};
use super::member_io::MemberIo;
use super::replies::ModelSpan;
use super::{EngineError, EngineOptions, FailError, ReplaceError};
use crate::array::{Opened, Recovered};
use crate::member::{Member, MemberError, BLOCK};
use crate::pool::{IoPool, DIRECT_THREADS, THREADS};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use swan_core::driver::reads::read_class;
use swan_core::driver::ArrayDriver;
use swan_core::driver::ReadsAround;
use swan_core::io::IoPlan;
use swan_core::io::{IoClass, MemberBlock, MemberId};
use swan_core::scheme::{
    ArrayScheme, MapChange, ParityReadPolicy, ReadWaits, ReqOp, Request, RequestError, SchemeKind, Submitted,
};
use swan_nbd::Errno;

pub(super) struct Store {
    pub scheme: ArrayScheme,
    pub kind: SchemeKind,
    pub io: MemberIo,
    pub exec: Executor,
    pub crcs: Crcs,
    pub durability: Durability,
    pub clock: Clock,
    /// Logical blocks whose last write failed: reads of them fail rather than return
    /// whatever the slot the map now names holds. A later write or trim clears them.
    pub failed_lbas: HashSet<u64>,
    /// Replies (indices into the round's batch) of requests whose data turned out not to
    /// have reached the members: the round answers them with an error.
    pub failed_replies: Vec<usize>,
    changes: Vec<MapChange>,
    follow: IoPlan,
    pub read_only: bool,
    pub verbose: bool,
    /// Reads around a busy SSD, if on ([`EngineOptions::reads`]).
    parity_reads: Option<ParityReadPolicy>,
    /// What the store was started with, to start it again ([`super::resume`]).
    reads: swan_core::scheme::ReadRules,
    punch_holes: bool,
    /// Front-end rotations seen so far (noted to a member tap when it changes).
    rotations_seen: u64,
    /// `io.failures` as of the last sync point.
    failures_synced: u64,
    /// The store changed the scheme outside the driver's turns since the driver last heard (a
    /// member's health, blocks moved off a failed member, rows padded): the scheme may want a
    /// GC job it did not want before.
    pub scheme_changed: bool,
    /// Segments recovery found sealed by an unsynced record: their parity is rewritten
    /// before serving writes ([`Recovered::unsynced_seals`]).
    unsynced_seals: Vec<u64>,
    /// The last stop was clean and nothing came after it ([`Recovered::parity_whole`]):
    /// adopted segments need no new parity.
    parity_whole: bool,
}

impl Store {
    /// The store of a recovered array. `pooled`: member I/O may go to a pool of threads
    /// (serving); otherwise every operation is done on the engine's thread in plan order.
    pub fn new(
        opened: Opened,
        rec: Recovered,
        opts: EngineOptions,
        clock: Clock,
        pooled: bool,
    ) -> Result<Self, EngineError> {
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
        for lost in &rec.checkpoint_copies_lost {
            eprintln!("swan: checkpoint copy not whole: {lost}; the first checkpoint of this run writes it again");
        }
        let direct = opened.members.iter().any(Member::is_direct);
        let threads = if direct { DIRECT_THREADS } else { THREADS };
        let use_pool = pooled && opts.emulate.is_none();
        let pool = if use_pool { Some(IoPool::start(threads, direct).map_err(EngineError::Pool)?) } else { None };
        let counts = pool.as_ref().map_or_else(Arc::default, |p| Arc::clone(&p.checks));
        let width = crate::array::parity_width(&sb);
        let mut scheme = rec.scheme;
        scheme.set_read_priority(opts.reads.priority);
        Ok(Store {
            parity_reads: opts.reads.parity_policy(),
            reads: opts.reads,
            punch_holes: opts.punch_holes,
            scheme,
            kind,
            io: MemberIo::new(sb, opened.members, opened.source),
            exec: Executor::new(kind, width, pool, opts.emulate, opts.punch_holes),
            crcs: Crcs::new(rec.adopted_crcs, counts),
            durability: Durability::new(rec.ring, rec.checkpoint_seq, rec.next_slot),
            clock,
            failed_lbas: HashSet::new(),
            failed_replies: Vec::new(),
            changes: Vec::new(),
            follow: IoPlan::new(),
            read_only: opts.read_only,
            verbose: opts.verbose,
            rotations_seen: 0,
            failures_synced: 0,
            scheme_changed: false,
            unsynced_seals: rec.unsynced_seals,
            parity_whole: rec.parity_whole,
        })
    }

    /// The options to start this store's array again with, its emulator handed over.
    pub fn reopen_options(&mut self) -> EngineOptions {
        EngineOptions {
            name: String::new(),
            read_only: self.read_only,
            emulate: self.exec.emu.take(),
            verbose: self.verbose,
            punch_holes: self.punch_holes,
            reads: self.reads,
        }
    }

    /// Take over what `status` counts since the server started from the store this one
    /// replaces.
    pub fn carry_counters(&mut self, old: &Store) {
        self.io.stats = old.io.stats.clone();
        let (d, o) = (&mut self.durability, &old.durability);
        d.sync_points += o.sync_points;
        d.journal_records += o.journal_records;
        d.checkpoints += o.checkpoints;
    }

    /// Write `data` to logical block `lba` as a user write would (moving it off a failed
    /// member). False if the array has no space for it.
    fn write_block(&mut self, lba: u64, data: &[u8]) -> bool {
        let r = Request { op: ReqOp::Write, lba, blocks: 1, fua: false };
        self.tell_scheme_health();
        let mut plan = IoPlan::new();
        let submitted = self.scheme.submit(&r, &mut plan);
        self.note_rotation();
        match submitted {
            Ok(Submitted::Planned) => self.scheme_changed = true,
            Ok(Submitted::NoSpace) => return false,
            Err(e) => {
                eprintln!("swan: moving block {lba} off a failed member: {e}");
                return true;
            }
        }
        let carried = self.carry_out(&plan, &r, data);
        self.durability.dirty = true;
        if carried.is_ok() {
            self.exec.track(None, lba..lba + 1);
            self.failed_lbas.remove(&lba);
        }
        true
    }

    /// Before serving: note degraded R-groups, give adopted segments their parity, make
    /// everything durable and write a fresh checkpoint (the journal just rolled forward is
    /// then never needed again).
    pub fn open_for_writes(&mut self) -> Result<(), EngineError> {
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
            return self.show_zones_to_model();
        }
        let adopted = self.scheme.adopted_segments();
        if self.io.sb.zoned {
            let z = self.open_zoned(&adopted)?;
            if z.weak_moved + z.weak_left > 0 {
                eprintln!(
                    "swan: zoned members: {} live block(s) of stripe rows whose parity the crash left not matching \
                     their data moved out, {} left for want of room",
                    z.weak_moved, z.weak_left
                );
            }
            if self.verbose || z.unreadable > 0 || z.zones_reset > 0 {
                eprintln!(
                    "swan: zoned members: {} zone(s) of free segments reset; of the segments open at the last stop, \
                     {} found sealed, {} sealed in place ({} filler block(s)) and {} emptied ({} zone(s) finished, \
                     {} live block(s) moved); {} live block(s) matched, {} unreadable",
                    z.zones_reset,
                    z.found_sealed,
                    z.sealed,
                    z.padded,
                    z.segments,
                    z.zones_finished,
                    z.moved,
                    z.verified,
                    z.unreadable
                );
            }
            self.sync_all()?;
            self.checkpoint()?;
            return self.show_zones_to_model();
        }
        let sealed = self.seal_adopted(&adopted)?;
        if sealed.segments > 0 && (self.verbose || sealed.repaired + sealed.unreadable > 0) {
            eprintln!(
                "swan: {} segment(s) open at the last stop sealed with their blocks' CRCs: {} block(s) matched the \
                 journal, {} first given a CRC, {} rebuilt from parity, {} unreadable",
                sealed.segments, sealed.verified, sealed.first_crcs, sealed.repaired, sealed.unreadable
            );
        }
        let rows = self.reparity_adopted(&adopted)?;
        if self.verbose && rows > 0 {
            eprintln!("swan: parity written for {rows} rows of segments open at the last stop");
        }
        self.sync_all()?;
        self.checkpoint()?;
        Ok(())
    }

    /// In-place RAID: load the CRC table; after an unclean stop, resync first (parity and
    /// CRCs from the data); then mark the tables dirty until the next clean stop.
    fn open_block_crcs(&mut self) -> Result<(), EngineError> {
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
                let (crcs, fixed) = BlockCrcs::resync(members, sb, &sb.stripe_geometry()?, |done, all| {
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

    /// Wait for the user data in flight; a request whose write failed is answered with an
    /// I/O error instead, and so is the next sync point.
    pub fn wait_writes(&mut self) {
        self.exec.wait_writes(&mut self.io);
        self.answer_write_failures();
    }

    /// Wait for the last batch's writes alone ([`Executor::wait_sealed`]).
    pub fn wait_sealed(&mut self) {
        self.exec.wait_sealed(&mut self.io);
        self.answer_write_failures();
    }

    /// End the batch just served: wait for its writes, or, with `may_leave`, seal it and
    /// leave them in flight ([`Executor::seal_batch`]). True if it was sealed.
    pub fn end_batch(&mut self, may_leave: bool) -> bool {
        if may_leave && self.exec.seal_batch(&mut self.io) {
            return true;
        }
        self.wait_writes();
        false
    }

    /// Fail the requests whose data the executor found did not reach the members.
    fn answer_write_failures(&mut self) {
        let Some(f) = self.exec.take_failure() else { return };
        self.failed_replies.extend(f.replies);
        for blocks in f.blocks {
            self.failed_lbas.extend(blocks);
        }
        // The map names slots the data may never have reached: no journal record or
        // checkpoint may claim them durable from now on (what a run carried that a
        // relocation off a failed member moved, say, has no reply to fail).
        let first = f.first;
        let why = || format!("a user-data write failed: {first}");
        match f.other {
            true => self.durability.lose(why),
            false => self.durability.lose_to_full(f.full, why),
        }
    }

    /// Plan user request `r` into `plan`: a read around busy members when reads around are
    /// on, else as the scheme plans it. A member not healthy (the scheme knows failed
    /// members, not one being rebuilt) is predicted to wait forever, so a row is read around
    /// it but never through it; should two of a row be unhealthy, the read is planned again,
    /// directly.
    pub fn plan(
        &mut self,
        driver: &mut ArrayDriver<Staged>,
        r: &Request,
        plan: &mut IoPlan,
    ) -> Result<Submitted, RequestError> {
        let class = read_class(&self.scheme);
        let members = &self.io.members;
        let mut waits = EmulatedWaits { emu: self.exec.emu.as_ref(), members, at: self.clock.now(), class };
        let around = self.parity_reads.map(|policy| ReadsAround { waits: &mut waits, policy });
        driver.plan(&mut self.scheme, r, plan, around)
    }

    /// Pass changes of members' health on to the scheme before it plans again.
    pub fn tell_scheme_health(&mut self) {
        for (m, failed) in self.io.health_news() {
            self.scheme.set_failed_member(m, failed);
            self.scheme_changed = true;
        }
    }

    /// Fail the members the pool's reads found broken.
    pub fn fail_members_reads_met(&mut self) {
        let Some(pool) = &self.exec.pool else { return };
        self.io.fail_where(pool.take_read_errors());
    }

    /// Carry out a planned user request whose data (for a write) is `user`; the reply bytes
    /// of a read, and, emulating, when the model SSDs were given it and completed it.
    pub fn carry_out(
        &mut self,
        plan: &IoPlan,
        r: &Request,
        user: &[u8],
    ) -> Result<(Vec<u8>, Option<ModelSpan>), Errno> {
        let read = r.op == ReqOp::Read;
        let mut reply = if read { vec![0u8; r.blocks as usize * BLOCK] } else { Vec::new() };
        let mut staged = Vec::new();
        // Before the plan runs: a write that seals its segment writes the summary, which
        // carries the CRC of every block, these included.
        self.journal_changes(|_, lba, _| {
            let at = (lba - r.lba) as usize * BLOCK;
            crc32c::crc32c(&user[at..at + BLOCK])
        });
        let res = self.execute(plan, Buffers::new(user, &mut reply, &mut staged));
        match res {
            Ok(at) => {
                if read && !self.crcs.verify_read(&self.io, &self.scheme, plan, r.lba, &mut reply) {
                    return Err(Errno::Io);
                }
                Ok((reply, at))
            }
            Err(e) => {
                eprintln!("swan: I/O error: {e}");
                if r.op != ReqOp::Read {
                    // The map may now name a slot the data never reached.
                    self.failed_lbas.extend(r.lba..r.lba + u64::from(r.blocks));
                    self.durability.lose_to(&e);
                }
                // A full file system is said as such: the client may free space and retry.
                Err(if e.is_full() { Errno::NoSpc } else { Errno::Io })
            }
        }
    }

    /// Move the scheme's new changes into the journal queue; `crc_of(store, lba, pba)` gives
    /// the CRC of the block a map change puts `lba` at (user writes: from the payload; GC
    /// moves: from the staged copy; anything else: read back from the member).
    fn journal_changes(&mut self, crc_of: impl Fn(&Self, u64, u64) -> u32) {
        let mut changes = std::mem::take(&mut self.changes);
        self.scheme.take_changes(&mut changes);
        let geo = self.scheme.log_geometry().copied();
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

    /// [`Store::journal_changes`] for changes whose blocks are read back.
    pub fn journal_changes_read_back(&mut self) {
        self.journal_changes(|w, _, pba| w.slot_crc(pba));
    }

    /// CRC32C of the block in log slot `pba`, read back ([`MemberIo::slot_crc`]).
    fn slot_crc(&self, pba: u64) -> u32 {
        self.scheme.log_geometry().map_or(0, |geo| self.io.slot_crc(geo, pba))
    }

    /// Write the tail record of the changes queued before index `landed` (all without it):
    /// the replies that follow it survive a crash of this process. Those after `landed`
    /// are a sealed batch's, whose writes may still be in flight. Nothing once a full file
    /// system has stopped durability: the batch holds the write that met it, whose blocks
    /// did not all land, and a recovery would drop the record whole, earlier batches'
    /// entries sharing its block included; left out, the journal ends with the last batch
    /// whose writes all landed, and the round answers the unjournaled writes with ENOSPC.
    pub fn journal_tail(&mut self, landed: Option<usize>) {
        self.journal_changes_read_back();
        if self.durability.refusing_writes || !self.kind.is_log_structured() {
            self.durability.forget_pending();
            return;
        }
        let upto = landed.map_or(self.durability.pending.len(), |n| n.min(self.durability.pending.len()));
        if upto == 0 {
            return;
        }
        if let Err(e) = self.append_records(false, upto) {
            // The batch's changes are not in the journal: no later record may claim to
            // follow on from it.
            eprintln!("swan: journal write failed: {e}");
            self.durability.lose_to_engine(&e);
        }
    }

    /// Append the first `upto` pending changes as records; checkpoint instead when the ring
    /// is full.
    fn append_records(&mut self, synced: bool, upto: usize) -> Result<(), EngineError> {
        match self.durability.append(&mut self.io, synced, upto)? {
            Appended::Written => Ok(()),
            Appended::CheckpointInstead => {
                // The checkpoint holds the whole map as it is now, a sealed batch's changes
                // included: their writes must land first. It covers everything.
                self.wait_writes();
                self.sync_all()?;
                self.checkpoint()
            }
        }
    }

    /// Note a front-end rotation to the recorder (only looked for when there is one).
    pub fn note_rotation(&mut self) {
        if self.io.is_recorded() {
            let r = self.scheme.counters().front_rotations;
            if r != self.rotations_seen {
                self.rotations_seen = r;
                self.io.mark("rotation");
            }
        }
    }

    pub fn finish_gc(&mut self, run: GcRun) -> Result<(), MemberError> {
        // The victim's live blocks are copied; the remap, seal and release are to come.
        self.io.mark("gc-copied");
        self.tell_scheme_health();
        // Where each staged copy goes, asked before the scheme forgets the job.
        let staged_at: HashMap<u64, u32> =
            self.scheme.gc_moves(run.job.id).iter().enumerate().map(|(slot, mv)| (mv.to, slot as u32)).collect();
        let mut follow = std::mem::take(&mut self.follow);
        self.scheme.finish_gc(run.job.id, &mut follow);
        // The moved blocks are on the members: their CRCs go to the journal and to the
        // summaries the follow-up plan writes when it seals their segments (a poisoned
        // slot's CRC inverted). They are the CRCs of the staged copies the job wrote, checked
        // by `gc_verify`: reading every moved block back instead cost a device read per
        // block with O_DIRECT members.
        let (poisoned, staged) = (run.face.poisoned, run.face.copies);
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
        let done = self.execute_follow_up(&follow);
        self.follow = follow;
        self.durability.dirty = true;
        done
    }

    /// Carry out a plan that moves no user data (a GC job's seals and TRIMs, a release).
    fn execute_follow_up(&mut self, plan: &IoPlan) -> Result<(), MemberError> {
        let mut staged = Vec::new();
        self.execute(plan, Buffers::new(&[], &mut [], &mut staged)).map(|_| ())
    }

    /// Run `plan` on the members now; then the scheme may forget the summaries it sealed
    /// (they are on the members), and writes that failed in the pool are answered.
    /// Emulating: when the model SSDs were given the plan and when they completed it.
    fn execute(&mut self, plan: &IoPlan, mut buffers: Buffers) -> Result<Option<ModelSpan>, MemberError> {
        let issued = self.clock.now();
        let res = self.exec.execute(&mut self.io, &mut self.crcs, &self.scheme, plan, &mut buffers, issued);
        self.scheme.summaries_written();
        self.answer_write_failures();
        res.map(|done| done.map(|done| ModelSpan { issued, done }))
    }

    /// Why a write finds no space: what an operator needs to see.
    pub fn report_no_space(&self, gc_broken: Option<&str>) {
        let st = self.scheme.status();
        eprintln!(
            "swan: no space for a write and GC cannot free any: {} free segments of {}, front-end R-group {:?}, {} victims awaiting release{}",
            st.free_segments,
            st.segments,
            st.front_group,
            self.scheme.pending_release(),
            gc_broken.map(|e| format!(", GC stopped after an error: {e}")).unwrap_or_default()
        );
        // The log's R-groups: one for a striped log, whatever the superblock was created with.
        let groups = self.scheme.log_geometry().map_or(0, |g| g.rgroups);
        for g in 0..groups {
            if let Some(o) = self.scheme.victim_outlook(g) {
                eprintln!(
                    "swan:   R-group {g}: {} free, best victim holds {:?} of {} blocks",
                    o.free_segments, o.best_victim_valid, o.payload_slots
                );
            }
        }
    }

    /// Free the GC victims whose moves the sync point just made durable, and TRIM them: the
    /// release is core's `driver` to make.
    pub fn release_victims(&mut self, driver: &mut ArrayDriver<Staged>) {
        self.io.mark("release");
        // A read handed out before may still be on its way into a victim: trimming or
        // reusing it now could hand the client someone else's data.
        if let Some(pool) = &self.exec.pool {
            pool.wait_reads();
        }
        self.tell_scheme_health();
        let mut plan = std::mem::take(&mut self.follow);
        driver.release(&mut self.scheme, &mut plan);
        if let Err(e) = self.execute_follow_up(&plan) {
            eprintln!("swan: I/O error: {e}");
        }
        self.follow = plan;
        self.protect_after_failure();
    }

    pub fn sync_all(&mut self) -> Result<(), MemberError> {
        // Gathered user data must be written (and its errors seen) before the sync that
        // makes it durable: `wait_writes` comes first on every path here.
        assert!(self.exec.no_runs(), "a sync with gathered user data not yet written");
        let parallel = self.exec.pool.is_some();
        self.io.sync_all(parallel)
    }

    pub fn sync_and_journal(&mut self) -> Result<(), EngineError> {
        // Data whose only copy is a failed member's slot in an open row is rewritten to
        // healthy members first; a member failing during the sync means another round.
        loop {
            let failures = self.io.failures;
            self.relocate_at_risk();
            if let Some(why) = &self.durability.lost {
                return Err(EngineError::DurabilityLost { why: why.clone() });
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
        self.append_records(true, self.durability.pending.len())
    }

    /// Write the whole map to the next checkpoint slot. Data must be durable already.
    fn checkpoint(&mut self) -> Result<(), EngineError> {
        self.checkpoint_as(false)
    }

    /// A checkpoint; `parity_whole` when every row of every open segment has its parity
    /// on the members (at a clean stop, [`Store::parity_of_open_segments`]).
    pub fn checkpoint_as(&mut self, parity_whole: bool) -> Result<(), EngineError> {
        // A checkpoint claims the whole map is durable; after a failed sync or write it may
        // not be (the map can name data a failed writeback dropped). Recovery rolls forward
        // from the last good checkpoint instead.
        if let Some(why) = &self.durability.lost {
            return Err(EngineError::NoCheckpoint { why: why.clone() });
        }
        // The map must not name a block whose only copy is in memory (a failed member's
        // slot in an open row): move such blocks first, and make the move durable.
        if !self.read_only && !self.io.members.all_healthy() {
            self.relocate_at_risk();
            if let Some(why) = &self.durability.lost {
                return Err(EngineError::NoCheckpoint { why: why.clone() });
            }
            self.sync_all()?;
        }
        self.durability.forget_pending();
        let Some(image) = self.scheme.checkpoint_image() else { return Ok(()) };
        self.durability.checkpoint(&self.io, &image, parity_whole)?;
        if self.verbose {
            eprintln!("swan: checkpoint {} written", self.durability.checkpoint_seq());
        }
        if !parity_whole {
            self.restate_open_rows()?;
        }
        Ok(())
    }

    /// The next slice of the rebuild under way ([`MemberIo::rebuild_step`]). Emulating
    /// zoned members, the replacement's model then takes its zones as they stand: the
    /// rebuild writes them behind its back.
    pub fn rebuild_step(&mut self) {
        let geo = self.scheme.log_geometry().copied();
        let member = self.io.rebuild_status().map(|r| r.member);
        self.io.rebuild_step(geo.as_ref());
        if let (Some(m), Some(emu)) = (member, self.exec.emu.as_mut()) {
            let member = &self.io.members[m as usize];
            if member.zoned().is_some() {
                if let Ok(zones) = member.report_zones() {
                    emu.take_zone_report(m, &zones);
                }
            }
        }
    }

    /// No member I/O of the pool in flight: what changes a member's health or place must
    /// not race with it.
    pub fn drain_member_io(&mut self) {
        self.wait_writes();
        if let Some(pool) = &self.exec.pool {
            pool.wait_reads();
        }
    }

    /// `swan fail`: take member `m` out of service as if it had failed.
    pub fn fail_by_request(&mut self, m: u32) -> Result<String, FailError> {
        self.io.refuse_to_fail(m)?;
        self.drain_member_io();
        if !self.io.fail(m, "failed by request (swan fail)") {
            return Err(FailError::CannotSpare { member: m });
        }
        Ok(format!("member {m} ({}) marked failed", self.io.members[m as usize].path().display()))
    }

    /// `swan replace`: rebuild member `m` onto the device or file at `path`.
    pub fn start_replace(&mut self, m: u32, path: &Path) -> Result<String, ReplaceError> {
        let new = self.io.open_replacement(m, path, self.read_only)?;
        self.drain_member_io();
        Ok(self.io.start_rebuild(m, new, path))
    }
    /// The durable half of a sync point: every completed write made durable and every
    /// change since the last one journaled, after moving data off failed members' open
    /// rows. False: it failed (or durability was lost before), and the FLUSHes waiting fail.
    pub fn sync_point(&mut self) -> bool {
        self.wait_writes();
        if self.durability.lost.is_none() {
            // GC may have left a block's only copy on a failed member's open row with nothing
            // else written since: a victim released after this must not be its last copy.
            self.relocate_at_risk();
        }
        let result = match &self.durability.lost {
            Some(why) => Err(EngineError::LostEarlier { why: why.clone() }),
            None if self.durability.dirty => self.sync_and_journal(),
            None => Ok(()),
        };
        if let Err(e) = &result {
            match (&self.durability.full, e) {
                (Some(_), EngineError::LostEarlier { .. }) => eprintln!(
                    "swan: sync failed: durability is stopped by a full file system; it resumes once there is room"
                ),
                _ => eprintln!("swan: sync failed: {e}"),
            }
            self.durability.lose_to_engine(e);
        }
        result.is_ok()
    }

    /// At a clean stop (after the last writes landed): make it all durable, give the rows
    /// still filling their parity, and write a checkpoint that says so.
    pub fn close(&mut self) -> Result<(), EngineError> {
        if self.read_only {
            return Ok(());
        }
        self.sync_all()?;
        // The rows still filling get their parity, so that a member missing at the next
        // start (a stale or lost one) loses nothing; the checkpoint says so.
        let rows = self.parity_of_open_segments()?;
        if self.verbose && rows > 0 {
            eprintln!("swan: parity written for {rows} rows of open segments");
        }
        self.sync_all()?;
        self.checkpoint_as(true)?;
        self.restate_open_segments()?;
        if let Some(crcs) = &self.crcs.table {
            crcs.write_clean(&self.io.members, &self.io.sb)?;
        }
        Ok(())
    }
}

/// The emulated SSDs' prediction of how long a read would wait; 0 everywhere without
/// emulation (the server then knows nothing of its members' queues), and forever on a
/// member that is not healthy.
struct EmulatedWaits<'a> {
    emu: Option<&'a crate::emulate::Emulator>,
    members: &'a crate::members::Members,
    at: Instant,
    class: IoClass,
}

impl ReadWaits for EmulatedWaits<'_> {
    fn wait_ns(&mut self, member: MemberId, block: MemberBlock) -> u64 {
        if !self.members.is_healthy(member) {
            return u64::MAX;
        }
        self.emu.map_or(0, |e| e.read_wait_ns(self.at, member, block, self.class))
    }
}

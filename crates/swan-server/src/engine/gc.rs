//! The engine's turns around the scheme, and GC jobs carried out on the members a member
//! operation at a time.
//!
//! What the engine thread does next is core's [`ArrayDriver`]'s to say, as it says it to the
//! simulator: a batch of requests, then GC's steps, then a sync point when victims are due
//! for release, a write short of space waiting first in line meanwhile. The scheme plans a
//! GC job whole (read the victim's live blocks, then write them to their new slots); here a
//! [`Turn::GcOp`] is one operation of it, or a run of reads joined into one
//! ([`read_span`]). Between a job's reads and its writes the staged copies are checked
//! against their CRCs ([`gc_verify`]). When every operation is done the engine finishes the
//! job with the scheme; its victim is released only after a sync point.
//!
//! [`gc_verify`]: super::gc_verify

use super::crcs::Crcs;
use super::executor::{Buffers, Executor, ModelDone};
use super::gc_verify::GcChecks;
use super::member_io::MemberIo;
use super::zone_holds::Owner;
use crate::emulate::Emulator;
use crate::member::{MemberError, BLOCK};
use crate::summaries::MemberSummaries;
use std::collections::HashMap;
use std::time::Instant;
use swan_core::driver::{ArrayDriver, GcPacing, MemberView, Turn};
use swan_core::geometry::Geometry;
use swan_core::io::{Dst, IoKind, MemberId, MemberIo as PlannedIo, Src};
use swan_core::scheme::{ArrayScheme, GcJobId, SummarySource, GC_WRITE_PHASE};
use swan_core::summary::Summary;

/// User requests per round, and GC's member operations between rounds: core's pacing for a
/// thread that shares itself between them.
const PACING: GcPacing = GcPacing::SERVED;

/// What the server keeps beside a GC job in core's queue.
#[derive(Debug, Default)]
pub(super) struct Staged {
    /// The victim's live blocks as read, to be written to their new slots.
    pub copies: Vec<u8>,
    /// Destination slots of blocks that failed their CRC and could not be rebuilt: their
    /// recorded CRC is made wrong, so reads of them fail ([`super::gc_verify`]).
    pub poisoned: Vec<u64>,
    /// The order the write phase goes out in, as indices into it, if not the plan's
    /// ([`write_order`]).
    pub write_order: Vec<u32>,
}

/// The order to write a GC job's write phase `ops` in over zoned members with parity: stripe
/// row by stripe row, each row's parity after its data. Over zones the scheme orders the
/// phase member by member, in block order, as a zone takes it; so a row's parity (on one
/// member) can come before the row's data on members later in that order. The simulator
/// moves no bytes; here the parity is taken from the row's running XOR when it is written,
/// which must then hold the whole row, and a member that fails mid-phase must find in that
/// XOR only what reached the members. Row by row keeps each member's writes in block
/// order. Empty: the plan's order will do.
fn write_order(ops: &[PlannedIo], io: &MemberIo) -> Vec<u32> {
    let zoned = io.members.first().is_some_and(|m| m.zoned().is_some());
    if zoned && io.members.has_parity() {
        rows_first(ops)
    } else {
        Vec::new()
    }
}

/// `ops` (one phase) by stripe row, each row's parity after its data, as indices into it.
fn rows_first(ops: &[PlannedIo]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..ops.len() as u32).collect();
    order.sort_by_key(|&i| {
        let op = &ops[i as usize];
        (op.block, matches!(op.kind, IoKind::Write(Src::Parity { .. })), i)
    });
    order
}

/// A GC job being carried out a member operation at a time.
pub(super) type GcRun = swan_core::driver::GcRun<Staged>;

pub(super) struct GcRunner {
    /// What to do next, and the GC jobs in flight: core's, as the simulator's.
    pub driver: ArrayDriver<Staged>,
    /// Set by the error that stopped GC for good.
    pub broken: Option<String>,
    /// Where a GC victim's summary is read.
    summary_buf: Vec<u8>,
    /// GC jobs (victims) started per R-group since the server started.
    pub jobs: Vec<u64>,
    pub checks: GcChecks,
    /// The driver's clock counts nanoseconds from here (the engine's start).
    epoch: Instant,
    /// Emulating zoned members: the jobs whose phase has writes waiting for their zones
    /// ([`super::zone_holds`]).
    held: HashMap<GcJobId, HeldPhase>,
}

/// A GC job's phase with writes held for their zones: it lands with the driver once it is
/// handed out whole and they have all completed on the model.
#[derive(Debug, Default)]
struct HeldPhase {
    /// Writes held and not yet known to have completed.
    waiting: bool,
    /// The phase is handed out whole.
    out: bool,
    /// The latest completion of its held writes, on the driver's clock.
    end: u64,
}

impl GcRunner {
    /// A runner whose driver's clock counts from `epoch` (the engine's start).
    pub fn new(rgroups: u32, epoch: Instant) -> GcRunner {
        GcRunner {
            driver: ArrayDriver::new(rgroups, PACING),
            broken: None,
            summary_buf: Vec::new(),
            jobs: vec![0; rgroups as usize],
            checks: GcChecks::default(),
            epoch,
            held: HashMap::new(),
        }
    }

    /// `t` on the driver's clock.
    pub fn ns(&self, t: Instant) -> u64 {
        ns_since(self.epoch, t)
    }

    /// The instant `ns` on the driver's clock names.
    pub fn instant(&self, ns: u64) -> Instant {
        self.epoch + std::time::Duration::from_nanos(ns)
    }

    /// What the engine does next at `now`, user requests `waiting` or not.
    pub fn next(
        &mut self,
        now: Instant,
        scheme: &mut ArrayScheme,
        io: &MemberIo,
        emu: Option<&Emulator>,
        waiting: bool,
    ) -> Turn {
        let now = self.ns(now);
        let summaries = MemberSummaries { members: &io.members, buf: &mut self.summary_buf };
        let mut members = Seen { summaries, emu, epoch: self.epoch };
        let turn = self.driver.next(now, scheme, &mut members, waiting);
        if let Turn::GcStarted { group, .. } = turn {
            io.mark("gc-start");
            if let Some(n) = group.and_then(|g| self.jobs.get_mut(g as usize)) {
                *n += 1;
            }
        }
        turn
    }

    /// A GC step outside the round (see [`ArrayDriver::drain_step`]).
    pub fn drain_step(
        &mut self,
        now: Instant,
        scheme: &ArrayScheme,
        io: &MemberIo,
        emu: Option<&Emulator>,
    ) -> Option<Turn> {
        let now = self.ns(now);
        let summaries = MemberSummaries { members: &io.members, buf: &mut self.summary_buf };
        let members = Seen { summaries, emu, epoch: self.epoch };
        self.driver.drain_step(now, scheme, &members)
    }

    pub fn is_idle(&self) -> bool {
        self.driver.gc().is_empty()
    }

    /// One member operation of job `id` (or a run of its reads joined into one), carried
    /// out at `now`.
    pub fn step(
        &mut self,
        id: GcJobId,
        now: Instant,
        io: &mut MemberIo,
        exec: &mut Executor,
        crcs: &mut Crcs,
        scheme: &ArrayScheme,
    ) -> Result<(), MemberError> {
        let run = self.driver.gc_mut().get_mut(id);
        let done = match read_span(run, io, exec.emu.is_some()) {
            Some(r) => r.map(|(n, at)| (n, at.map_or(ModelDone::Unmodelled, ModelDone::At))),
            None => one_io(run, io, exec, crcs, scheme, now),
        };
        let (n, done) = done?;
        let at = match done {
            ModelDone::Unmodelled => Some(self.ns(now)),
            ModelDone::At(t) => Some(self.ns(t)),
            ModelDone::Held => {
                self.held.entry(id).or_default().waiting = true;
                None
            }
        };
        let phase_ended = self.driver.handed_out(id, n, at);
        if phase_ended {
            if let Some(h) = self.held.get_mut(&id) {
                h.out = true;
                self.land_if_complete(id);
            }
        }
        let run = self.driver.gc_mut().get_mut(id);
        if phase_ended && run.job.phase() == GC_WRITE_PHASE {
            // Read, not yet written: check what is about to be moved.
            let checks = super::gc_verify::verify_copies(
                run.job.id,
                &mut run.face.copies,
                &mut run.face.poisoned,
                scheme,
                io,
                &crcs.adopted,
            );
            self.checks.add(checks);
            run.face.write_order = write_order(run.job.pending(), io);
        }
        Ok(())
    }

    /// Every write job `id` held for its zones so far has completed on the model, the last
    /// at `at`.
    pub fn held_landed(&mut self, id: GcJobId, at: Instant) {
        let at = self.ns(at);
        if let Some(h) = self.held.get_mut(&id) {
            h.waiting = false;
            h.end = h.end.max(at);
            self.land_if_complete(id);
        }
    }

    fn land_if_complete(&mut self, id: GcJobId) {
        if self.held.get(&id).is_some_and(|h| h.out && !h.waiting) {
            let h = self.held.remove(&id).expect("present");
            self.driver.phase_landed(id, h.end);
        }
    }
}

/// The members as the driver sees them: GC victims' summaries read from them, and, emulating,
/// when each model SSD will be through with the work given it (without emulation the
/// server knows nothing of its members' queues: never busy).
struct Seen<'a> {
    summaries: MemberSummaries<'a>,
    emu: Option<&'a Emulator>,
    epoch: Instant,
}

impl SummarySource for Seen<'_> {
    fn read_summary(&mut self, geo: &Geometry, segment: u64) -> Option<Summary> {
        self.summaries.read_summary(geo, segment)
    }
}

impl MemberView for Seen<'_> {
    fn busy_until(&self, member: MemberId) -> u64 {
        self.emu.map_or(0, |emu| ns_since(self.epoch, emu.busy_until(member)))
    }
}

/// `t` in nanoseconds from `epoch` (0 before it): the driver's clock.
fn ns_since(epoch: Instant, t: Instant) -> u64 {
    u64::try_from(t.saturating_duration_since(epoch).as_nanos()).unwrap_or(u64::MAX)
}

/// The next operation of `run`'s current phase, issued at `issue`. Returns how many it
/// carried out (1) and, emulating, when it completes on the model.
fn one_io(
    run: &mut GcRun,
    io: &mut MemberIo,
    exec: &mut Executor,
    crcs: &mut Crcs,
    scheme: &ArrayScheme,
    issue: Instant,
) -> Result<(usize, ModelDone), MemberError> {
    let order = &run.face.write_order;
    let op = match run.job.plan().phase(run.job.phase()) {
        phase if run.job.phase() == GC_WRITE_PHASE && order.len() == phase.len() => {
            phase[order[phase.len() - run.job.pending().len()] as usize]
        }
        _ => run.job.pending()[0],
    };
    let mut staged = std::mem::take(&mut run.face.copies);
    exec.holds.owner = Owner::Gc(run.job.id);
    let done = exec.do_io(io, crcs, scheme, &op, &mut Buffers::new(&[], &mut [], &mut staged), issue);
    exec.holds.owner = Owner::Nobody;
    run.face.copies = staged;
    Ok((1, done?))
}

/// Without emulation: the next reads of `run`'s phase that fall on one member within a few
/// blocks of each other, as one read. The victim's live blocks are read member by member in
/// runs of consecutive live rows; in a victim half full of live blocks those runs are a few
/// blocks long, and each would be its own system call (with O_DIRECT, its own device read,
/// waited out here). Reading the dead blocks between them costs less. None: the next
/// operation is not such a read.
fn read_span(
    run: &mut GcRun,
    io: &mut MemberIo,
    emulating: bool,
) -> Option<Result<(usize, Option<Instant>), MemberError>> {
    /// Dead blocks read through to join two reads, at most...
    const GAP: u64 = 16;
    /// ...and blocks per joined read.
    const SPAN: u64 = 256;
    if emulating {
        return None;
    }
    let pending = run.job.pending();
    let first = pending[0];
    let IoKind::Read(Dst::Staged { .. }) = first.kind else { return None };
    let mut end = first.block + u64::from(first.count);
    let mut n = 1;
    while let Some(p) = pending.get(n) {
        let next_end = p.block + u64::from(p.count);
        let joins = matches!(p.kind, IoKind::Read(Dst::Staged { .. }))
            && p.member == first.member
            && p.block >= end
            && p.block - end <= GAP
            && next_end - first.block <= SPAN;
        if !joins {
            break;
        }
        end = next_end;
        n += 1;
    }
    if n == 1 {
        return None;
    }
    let mut span = vec![0u8; (end - first.block) as usize * BLOCK];
    if let Err(e) = io.read(first.member, first.block, &mut span) {
        return Some(Err(e));
    }
    for p in &run.job.pending()[..n] {
        let IoKind::Read(Dst::Staged { slot }) = p.kind else { unreachable!("checked above") };
        let (at, len) = (slot as usize * BLOCK, p.count as usize * BLOCK);
        if run.face.copies.len() < at + len {
            run.face.copies.resize(at + len, 0);
        }
        let from = (p.block - first.block) as usize * BLOCK;
        run.face.copies[at..at + len].copy_from_slice(&span[from..from + len]);
    }
    let s = &mut io.stats[first.member as usize];
    s.gc_bytes_read += span.len() as u64;
    s.reads += 1;
    Some(Ok((n, None)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use swan_core::io::IoClass;

    fn write(member: u32, block: u64, count: u32, parity: bool) -> PlannedIo {
        let src = if parity { Src::Parity { group: 0, row: block } } else { Src::Staged { slot: 0 } };
        PlannedIo { member, block, count, kind: IoKind::Write(src), class: IoClass::Gc }
    }

    /// Three members, rows 0..6, parity rotating from the last column: the write phase as
    /// the scheme orders it over zones, member by member. Row by row, every row's parity
    /// goes after all its data, and each member still gets its blocks in order.
    #[test]
    fn a_rows_parity_goes_after_its_data_and_each_member_in_block_order() {
        let mut ops = Vec::new();
        for m in 0..3u32 {
            let mut r = 0u64;
            while r < 6 {
                let parity = |r: u64| 2 - (r % 3) as u32 == m;
                if parity(r) {
                    ops.push(write(m, r, 1, true));
                    r += 1;
                } else {
                    let mut n = 0;
                    while r + n < 6 && !parity(r + n) {
                        n += 1;
                    }
                    ops.push(write(m, r, n as u32, false));
                    r += n;
                }
            }
        }
        let parity_before_data = |placed: &[&PlannedIo]| {
            placed.iter().enumerate().any(|(k, p)| {
                matches!(p.kind, IoKind::Write(Src::Parity { .. }))
                    && placed[k + 1..].iter().any(|q| {
                        !matches!(q.kind, IoKind::Write(Src::Parity { .. }))
                            && q.block <= p.block
                            && p.block < q.block + u64::from(q.count)
                    })
            })
        };
        // As the scheme hands it out, row 2's parity (member 0) goes before that row's data
        // on members 1 and 2.
        assert!(parity_before_data(&ops.iter().collect::<Vec<_>>()), "the case this orders: {ops:?}");
        let order = rows_first(&ops);
        let placed: Vec<&PlannedIo> = order.iter().map(|&i| &ops[i as usize]).collect();
        assert!(!parity_before_data(&placed), "a row's parity goes before some of its data: {placed:?}");
        for m in 0..3 {
            let blocks: Vec<u64> = placed.iter().filter(|p| p.member == m).map(|p| p.block).collect();
            assert!(blocks.windows(2).all(|w| w[0] < w[1]), "member {m} out of block order: {blocks:?}");
        }
        assert_eq!(order.len(), ops.len());
    }
}

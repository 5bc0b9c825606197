//! GC jobs carried out on the members, a member operation at a time.
//!
//! The scheme plans a job whole (read the victim's live blocks, then write them to their new
//! slots); core's [`GcJob`] keeps how far it is handed out and core's [`GcQueue`] which job
//! may proceed when, as in the simulator. Here a job advances one operation per step, so
//! user requests are served between them as core's [`GcPacing`] says: one step per round
//! while requests wait, sixteen while none do. Between a job's reads and its writes the staged copies are checked against their CRCs ([`gc_verify`]).
//! When every operation is done the engine finishes the job with the scheme. Victims are
//! then released only after a sync point; [`GcRunner::release_check`] asks core's
//! [`ReleaseClock`] when one is due, as the simulator does.
//!
//! [`gc_verify`]: super::gc_verify

use super::crcs::Crcs;
use super::executor::{Buffers, Executor};
use super::gc_verify::GcChecks;
use super::member_io::MemberIo;
use crate::member::{MemberError, BLOCK};
use crate::summaries::MemberSummaries;
use std::time::Instant;
use swan_core::driver::{GcJob, GcQueue, ReleaseClock};
use swan_core::io::{Dst, IoKind};
use swan_core::scheme::{ArrayScheme, GC_WRITE_PHASE};

/// What the server keeps beside a GC job in core's [`GcQueue`].
#[derive(Debug, Default)]
pub(super) struct Staged {
    /// The victim's live blocks as read, to be written to their new slots.
    pub copies: Vec<u8>,
    /// Destination slots of blocks that failed their CRC and could not be rebuilt: their
    /// recorded CRC is made wrong, so reads of them fail ([`super::gc_verify`]).
    pub poisoned: Vec<u64>,
}

/// A GC job being carried out a member operation at a time.
pub(super) type GcRun = swan_core::driver::GcRun<Staged>;

/// What one step did.
pub(super) enum Step {
    /// No job could proceed (none, or each waits for the model's clock).
    Idle,
    Progressed,
    /// A job's every operation is done: the engine finishes it with the scheme.
    Done(GcRun),
    /// A member operation failed and could not be spared: GC stops.
    Broken(MemberError),
}

pub(super) struct GcRunner {
    /// The jobs in flight, and which may proceed when: core's, as the simulator's.
    runs: GcQueue<Staged>,
    /// Set by the error that stopped GC for good.
    pub broken: Option<String>,
    /// Where a GC victim's summary is read.
    summary_buf: Vec<u8>,
    /// GC jobs (victims) started per R-group since the server started.
    pub jobs: Vec<u64>,
    pub checks: GcChecks,
    /// A sync point is due to release the victims waiting.
    pub release_due: bool,
    /// Since when the oldest finished job's victim has waited for release, in nanoseconds
    /// from `epoch`: core's clock, which the simulator keeps too.
    pub release: ReleaseClock,
    epoch: Instant,
}

impl GcRunner {
    /// A runner whose release clock counts from `epoch` (the engine's start).
    pub fn new(rgroups: u32, epoch: Instant) -> GcRunner {
        GcRunner {
            runs: GcQueue::default(),
            broken: None,
            summary_buf: Vec::new(),
            jobs: vec![0; rgroups as usize],
            checks: GcChecks::default(),
            release_due: false,
            release: ReleaseClock::default(),
            epoch,
        }
    }

    /// `t` on the release clock.
    fn ns(&self, t: Instant) -> u64 {
        let since = t.saturating_duration_since(self.epoch);
        u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
    }

    /// A job finished at `now`, leaving `pending` victims awaiting release.
    pub fn victims_waiting(&mut self, pending: usize, now: Instant) {
        let now = self.ns(now);
        self.release.waiting(pending, now);
    }

    pub fn is_idle(&self) -> bool {
        self.runs.is_empty()
    }

    /// Start every GC job the scheme wants now.
    pub fn start_jobs(&mut self, scheme: &mut ArrayScheme, io: &MemberIo, now: Instant) {
        loop {
            // The array keeps no P2L of sealed segments: GC reads the victim's summary.
            let mut source = MemberSummaries { members: &io.members, buf: &mut self.summary_buf };
            let Some(job) = GcJob::start(scheme, &mut source) else { break };
            io.mark("gc-start");
            if let Some(n) = job.group.and_then(|g| self.jobs.get_mut(g as usize)) {
                *n += 1;
            }
            let now = self.ns(now);
            self.runs.push(job, Staged::default(), now);
        }
    }

    /// One member operation of the first job that may proceed.
    pub fn step(
        &mut self,
        now: Instant,
        io: &mut MemberIo,
        exec: &mut Executor,
        crcs: &mut Crcs,
        scheme: &ArrayScheme,
    ) -> Step {
        let Some(id) = self.runs.first_ready(self.ns(now)) else { return Step::Idle };
        if self.runs.get(id).job.handed_out_whole() {
            return Step::Done(self.runs.finish(id));
        }
        // Ready: its phase opened at or before `now`, so the operation goes out now.
        let run = self.runs.get_mut(id);
        let done = match read_span(run, io, exec.emu.is_some()) {
            Some(r) => r,
            None => one_io(run, io, exec, crcs, scheme, now),
        };
        let (n, at) = match done {
            Ok((n, at)) => (n, self.ns(at.unwrap_or(now))),
            Err(e) => return Step::Broken(e),
        };
        let phase_ended = self.runs.handed_out(id, n, Some(at));
        let run = self.runs.get_mut(id);
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
        }
        Step::Progressed
    }

    /// Victims wait for a sync point to be released; one sync point releases many. Due when
    /// enough have gathered (`pending` now, over `rgroups` R-groups) or the oldest has
    /// waited long enough (writes that run out of space release at once).
    pub fn release_check(&mut self, pending: usize, rgroups: u32, now: Instant) {
        let now = self.ns(now);
        self.release.waiting(pending, now);
        if self.release.due(pending, rgroups, now) {
            self.release_due = true;
        }
    }
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
) -> Result<(usize, Option<Instant>), MemberError> {
    let op = run.job.pending()[0];
    let mut staged = std::mem::take(&mut run.face.copies);
    let done = exec.do_io(io, crcs, scheme, &op, &mut Buffers::new(&[], &mut [], &mut staged), issue);
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

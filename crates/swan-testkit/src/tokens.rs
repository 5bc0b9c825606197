//! Deterministic test support: executes [`IoPlan`]s over *tokens* instead of bytes, so tests
//! can check a scheme end to end against a reference of what every block must hold.
//!
//! Like the rest of the core, this module does no I/O and reads no clock; it is
//! deterministic for a given sequence of calls. It holds the pieces every token-level check
//! shares:
//!
//! - [`TokenStore`]: read, write and trim of one `u64` token per member block. [`MemStore`]
//!   keeps them in memory; a store backed by modelled SSDs (which move the tokens through
//!   their FTLs) lives with the simulator's tests.
//! - [`Executor`]: runs a plan's phases against a store. Reads and data writes move tokens;
//!   parity is the XOR of the row's other members once the phase's data has landed; a
//!   summary block gets [`SUMMARY_TOKEN`] `| segment`; zeroes and trims give token 0. A plan
//!   that reads or writes the wrong place, loses a GC move, frees live data or writes parity
//!   from the wrong blocks then shows up as a wrong token.
//! - [`GcQueue`]: GC jobs kept in flight across user requests and advanced one phase at a
//!   time, so a test can interleave them with user I/O.
//! - [`Reference`]: what each logical block must read back as.
//! - [`SummaryStore`]: the summaries a plan wrote, kept as the scheme described them, so a
//!   scheme that keeps victims' P2L only in summaries can read them back.

use std::collections::{HashMap, VecDeque};
use swan_core::driver::{plan_request, ReadsAround};
use swan_core::io::{Dst, IoKind, IoPlan, MemberBlock, MemberId, MemberIo, Src};
use swan_core::scheme::{ArrayScheme, ArraySpec, GcJobId, Scheme, SchemeKind, SummarySource};
use swan_core::summary::{Summary, DEAD};

/// Marker in the high bits of a summary block's token; the low bits hold the segment.
pub const SUMMARY_TOKEN: u64 = 0xD00D << 48;

/// Member blocks holding one `u64` token each. Every block starts as token 0, and a trimmed
/// block reads back as 0.
pub trait TokenStore {
    /// Reads `out.len()` (= `io.count`) tokens from `io.member` starting at `io.block`.
    fn read(&mut self, io: &MemberIo, out: &mut [u64]);
    /// Writes `tokens` (`io.count` of them) to `io.member` starting at `io.block`.
    fn write(&mut self, io: &MemberIo, tokens: &[u64]);
    /// Discards `io.count` blocks of `io.member` from `io.block`: they read back as 0.
    fn trim(&mut self, io: &MemberIo);
    /// Makes completed writes durable; nothing to do for most stores.
    fn flush(&mut self, _io: &MemberIo) {}
    /// `io` reaches its member, in the plan's order (before the phase runs, whose parity
    /// writes land after its data): a store whose members care about that order, as zoned
    /// ones do, checks it here.
    fn admit(&mut self, _io: &MemberIo) {}
    /// The token one block holds now, without it counting as I/O (parity computation and
    /// final checks).
    fn peek(&self, member: MemberId, block: MemberBlock) -> u64;
}

/// Tokens in memory: one vector per member.
#[derive(Clone, Debug)]
pub struct MemStore {
    pub members: Vec<Vec<u64>>,
}

impl MemStore {
    pub fn new(members: u32, member_blocks: u64) -> Self {
        Self { members: vec![vec![0; member_blocks as usize]; members as usize] }
    }

    fn range(io: &MemberIo) -> std::ops::Range<usize> {
        io.block as usize..io.block as usize + io.count as usize
    }
}

impl TokenStore for MemStore {
    fn read(&mut self, io: &MemberIo, out: &mut [u64]) {
        out.copy_from_slice(&self.members[io.member as usize][Self::range(io)]);
    }

    fn write(&mut self, io: &MemberIo, tokens: &[u64]) {
        self.members[io.member as usize][Self::range(io)].copy_from_slice(tokens);
    }

    fn trim(&mut self, io: &MemberIo) {
        self.members[io.member as usize][Self::range(io)].fill(0);
    }

    fn peek(&self, member: MemberId, block: MemberBlock) -> u64 {
        self.members[member as usize][block as usize]
    }
}

/// Members per parity group of `spec`'s array: the R-group for SWAN, every member for
/// Log-RAID and in-place RAID (whose single stripe spans the array).
/// The model checks' request mix, from three random draws: half writes, a third reads,
/// some trims, a few flushes, 1–8 blocks anywhere in `working_set`, one in seven with FUA.
pub fn random_request(roll: u32, size: u32, where_: u64, working_set: u64) -> swan_core::scheme::Request {
    use swan_core::scheme::{ReqOp, Request};
    let roll = roll % 100;
    let blocks = 1 + size % 8;
    let lba = where_ % (working_set - u64::from(blocks));
    let op = match roll {
        0..=49 => ReqOp::Write,
        50..=84 => ReqOp::Read,
        85..=97 => ReqOp::Trim,
        _ => ReqOp::Flush,
    };
    Request { op, lba, blocks, fua: roll.is_multiple_of(7) }
}

/// Fresh tokens `next..` for a write's payload (nothing for other requests).
pub fn payload_tokens(req: &swan_core::scheme::Request, next: u64, out: &mut Vec<u64>) {
    out.clear();
    if req.op == swan_core::scheme::ReqOp::Write {
        out.extend((0..req.blocks).map(|i| next + u64::from(i)));
    }
}

/// Runs plans phase by phase against a [`TokenStore`].
#[derive(Clone, Debug)]
pub struct Executor<S> {
    store: S,
    /// Members per parity group; groups are consecutive member ids.
    group_width: usize,
    /// Tokens of a summary or zero write.
    fill: Vec<u64>,
    /// Parity writes of the phase being run, done after its data writes.
    parity: Vec<MemberIo>,
}

impl<S: TokenStore> Executor<S> {
    /// An executor over `store` whose parity groups are `group_width` consecutive members
    /// (see [`ArraySpec::parity_group_width`]).
    pub fn new(store: S, group_width: u32) -> Self {
        assert!(group_width > 0, "a parity group has at least one member");
        Self { store, group_width: group_width as usize, fill: Vec::new(), parity: Vec::new() }
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }

    pub fn into_store(self) -> S {
        self.store
    }

    pub fn group_width(&self) -> usize {
        self.group_width
    }

    /// Runs one phase: reads and data writes in order, then parity writes (which are defined
    /// as the XOR of their row once the phase's data has landed). The store is first shown
    /// every operation in plan order ([`TokenStore::admit`]), the order members receive
    /// them. `user` is the request's payload, `reply` its read buffer, `staged` the GC job's
    /// (or read-modify-write's) staging buffer, grown as reads fill it.
    ///
    /// # Panics
    /// On a parity write of more than one block, or a buffer too small for the plan.
    pub fn run_phase(&mut self, ios: &[MemberIo], user: &[u64], reply: &mut [u64], staged: &mut Vec<u64>) {
        self.parity.clear();
        for io in ios {
            self.store.admit(io);
        }
        for io in ios {
            let n = io.count as usize;
            match io.kind {
                IoKind::Read(Dst::User { offset }) => {
                    self.store.read(io, &mut reply[offset as usize..offset as usize + n]);
                }
                IoKind::Read(Dst::Rebuild { offset }) => {
                    // One column of a row read around its member, XORed into the reply.
                    let mut column = [0u64];
                    for k in 0..n {
                        let one = MemberIo { block: io.block + k as u64, count: 1, ..*io };
                        self.store.read(&one, &mut column);
                        reply[offset as usize + k] ^= column[0];
                    }
                }
                IoKind::Read(Dst::Staged { slot }) => {
                    let s = slot as usize;
                    if staged.len() < s + n {
                        staged.resize(s + n, 0);
                    }
                    self.store.read(io, &mut staged[s..s + n]);
                }
                IoKind::Write(Src::User { offset }) => {
                    self.store.write(io, &user[offset as usize..offset as usize + n]);
                }
                IoKind::Write(Src::Staged { slot }) => {
                    self.store.write(io, &staged[slot as usize..slot as usize + n]);
                }
                IoKind::Write(Src::Summary { segment, .. }) => {
                    self.fill.clear();
                    self.fill.resize(n, SUMMARY_TOKEN | segment);
                    self.store.write(io, &self.fill);
                }
                IoKind::Write(Src::Zero) => {
                    self.fill.clear();
                    self.fill.resize(n, 0);
                    self.store.write(io, &self.fill);
                }
                IoKind::Write(Src::Parity { .. }) => self.parity.push(*io),
                IoKind::Trim => self.store.trim(io),
                IoKind::Flush => self.store.flush(io),
            }
        }
        for k in 0..self.parity.len() {
            let io = self.parity[k];
            assert_eq!(io.count, 1, "parity is written one row at a time");
            // The row's parity as it stands, at the row's own block or, for a partial-parity
            // log entry (RAIZN's), elsewhere on the parity member.
            let IoKind::Write(Src::Parity { row, .. }) = io.kind else { unreachable!("only parity is deferred") };
            let value = self.row_xor(io.member, row);
            self.store.write(&io, &[value]);
        }
    }

    /// Runs every phase of `plan` in order.
    pub fn run_plan(&mut self, plan: &IoPlan, user: &[u64], reply: &mut [u64], staged: &mut Vec<u64>) {
        for k in 0..plan.phase_count() {
            self.run_phase(plan.phase(k), user, reply, staged);
        }
    }

    /// XOR of the other members of `member`'s group at `row`.
    pub fn row_xor(&self, member: MemberId, row: MemberBlock) -> u64 {
        let first = member as usize / self.group_width * self.group_width;
        (first..first + self.group_width)
            .filter(|&m| m != member as usize)
            .fold(0, |acc, m| acc ^ self.store.peek(m as MemberId, row))
    }

    /// XOR of every member of the group starting at `group_first` at `row`: 0 when the
    /// row's parity holds.
    pub fn row_parity(&self, group_first: MemberId, row: MemberBlock) -> u64 {
        (group_first..group_first + self.group_width as MemberId).fold(0, |acc, m| acc ^ self.store.peek(m, row))
    }
}

/// A GC job in flight: its plan and how far it has run.
#[derive(Clone, Debug)]
pub struct GcJob {
    pub id: GcJobId,
    pub plan: IoPlan,
    /// The next phase to run; `plan.phase_count()` once every phase has run.
    pub next_phase: usize,
    pub staged: Vec<u64>,
}

/// The summaries plans have written, as the scheme described them when they ran: what a
/// member would return for the segment's summary blocks. [`SummarySource`] for GC.
#[derive(Clone, Debug, Default)]
pub struct SummaryStore {
    written: HashMap<u64, Summary>,
    /// Return every summary with its live entries naming the wrong block (a stale or
    /// misdirected summary): the scheme must notice and fall back to its map.
    pub lie: bool,
    /// Summaries read back.
    pub reads: u64,
}

impl SummaryStore {
    /// Keep the summary of every segment `plan` (just run) wrote, then tell the scheme they
    /// are written.
    pub fn record(&mut self, plan: &IoPlan, scheme: &mut ArrayScheme) {
        for k in 0..plan.phase_count() {
            for io in plan.phase(k) {
                if let IoKind::Write(Src::Summary { segment, index: 0 }) = io.kind {
                    if let Some(s) = scheme.summary_of(segment) {
                        self.written.insert(segment, s);
                    }
                }
            }
        }
        scheme.summaries_written();
    }
}

impl SummarySource for SummaryStore {
    fn read_summary(&mut self, _geo: &swan_core::geometry::Geometry, segment: u64) -> Option<Summary> {
        self.reads += 1;
        let mut s = self.written.get(&segment)?.clone();
        if self.lie {
            for e in s.entries.iter_mut().filter(|e| e.lba != DEAD) {
                e.lba += 1;
            }
        }
        Some(s)
    }
}

/// GC jobs of a log-structured array kept in flight across user requests, oldest first.
#[derive(Clone, Debug, Default)]
pub struct GcQueue {
    jobs: VecDeque<GcJob>,
    /// Summaries written so far, for schemes that read victims' P2L back from them.
    pub summaries: SummaryStore,
    follow_up: IoPlan,
    scratch: Vec<u64>,
    started: u64,
    finished: u64,
}

impl GcQueue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Jobs started so far.
    pub fn started(&self) -> u64 {
        self.started
    }

    /// Jobs finished so far.
    pub fn finished(&self) -> u64 {
        self.finished
    }

    /// Starts jobs while the scheme wants one and fewer than `max_in_flight` are in flight.
    pub fn start(&mut self, scheme: &mut ArrayScheme, max_in_flight: usize) {
        while self.jobs.len() < max_in_flight {
            let mut plan = IoPlan::new();
            match scheme.start_gc_with(&mut plan, &mut self.summaries) {
                Some(id) => {
                    self.started += 1;
                    self.jobs.push_back(GcJob { id, plan, next_phase: 0, staged: Vec::new() });
                }
                None => break,
            }
        }
    }

    /// Advances the oldest job by one phase, or, once every phase of it has run, finishes
    /// it: tells the scheme and runs the follow-up (summaries, TRIMs) at once. Returns
    /// whether there was a job.
    pub fn step<S: TokenStore>(&mut self, scheme: &mut ArrayScheme, exec: &mut Executor<S>) -> bool {
        let Some(job) = self.jobs.front_mut() else {
            return false;
        };
        if job.next_phase < job.plan.phase_count() {
            exec.run_phase(job.plan.phase(job.next_phase), &[], &mut [], &mut job.staged);
            job.next_phase += 1;
        } else {
            let job = self.jobs.pop_front().expect("a front job");
            self.finish(job, scheme, exec);
        }
        true
    }

    /// Runs every job in flight to completion, oldest first.
    pub fn drain<S: TokenStore>(&mut self, scheme: &mut ArrayScheme, exec: &mut Executor<S>) {
        while let Some(mut job) = self.jobs.pop_front() {
            for k in job.next_phase..job.plan.phase_count() {
                exec.run_phase(job.plan.phase(k), &[], &mut [], &mut job.staged);
            }
            self.finish(job, scheme, exec);
        }
    }

    fn finish<S: TokenStore>(&mut self, job: GcJob, scheme: &mut ArrayScheme, exec: &mut Executor<S>) {
        scheme.finish_gc(job.id, &mut self.follow_up);
        exec.run_plan(&self.follow_up, &[], &mut [], &mut self.scratch);
        self.summaries.record(&self.follow_up, scheme);
        // A deferring scheme's driver makes the moves durable first; in memory they are.
        if scheme.release_deferred(&mut self.follow_up) > 0 {
            exec.run_plan(&self.follow_up, &[], &mut [], &mut self.scratch);
        }
        self.finished += 1;
    }
}

/// What a logical block must read back as.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Expect {
    Token(u64),
    /// Trimmed on a scheme that may keep old data after a partial-stripe trim.
    Any,
}

/// The reference map: what every logical block of a volume must read back as. A block
/// never written reads back as token 0.
#[derive(Clone, Debug)]
pub struct Reference {
    blocks: Vec<Expect>,
}

impl Reference {
    pub fn new(volume_blocks: u64) -> Self {
        Self { blocks: vec![Expect::Token(0); volume_blocks as usize] }
    }

    /// `tokens` were written from `lba`.
    pub fn write(&mut self, lba: u64, tokens: &[u64]) {
        for (e, &t) in self.blocks[lba as usize..].iter_mut().zip(tokens) {
            *e = Expect::Token(t);
        }
    }

    /// `blocks` blocks from `lba` were trimmed; they read back as 0, or as anything if the
    /// scheme may keep old data after a trim (`keeps_data`).
    pub fn trim(&mut self, lba: u64, blocks: u32, keeps_data: bool) {
        let e = if keeps_data { Expect::Any } else { Expect::Token(0) };
        self.blocks[lba as usize..lba as usize + blocks as usize].fill(e);
    }

    pub fn get(&self, lba: u64) -> Expect {
        self.blocks[lba as usize]
    }

    /// Every block with a definite expected token, as `(lba, token)`.
    pub fn tokens(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.blocks.iter().enumerate().filter_map(|(lba, e)| match *e {
            Expect::Token(t) => Some((lba as u64, t)),
            Expect::Any => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swan_core::io::IoClass;

    fn io(member: u32, block: u64, count: u32, kind: IoKind) -> MemberIo {
        MemberIo { member, block, count, kind, class: IoClass::User }
    }

    #[test]
    fn a_phase_moves_tokens_and_writes_parity_after_the_data() {
        let mut exec = Executor::new(MemStore::new(3, 4), 3);
        let mut staged = Vec::new();
        let mut reply = [0u64; 2];
        let write = [
            io(2, 1, 1, IoKind::Write(Src::Parity { group: 0, row: 1 })),
            io(0, 1, 1, IoKind::Write(Src::User { offset: 0 })),
            io(1, 1, 1, IoKind::Write(Src::User { offset: 1 })),
        ];
        exec.run_phase(&write, &[0b01, 0b10], &mut [], &mut staged);
        assert_eq!(exec.store().peek(2, 1), 0b11, "parity is the XOR of the row as it stands after the data");
        assert_eq!(exec.row_parity(0, 1), 0);
        exec.run_phase(&[io(0, 1, 2, IoKind::Read(Dst::Staged { slot: 3 }))], &[], &mut [], &mut staged);
        assert_eq!(staged, vec![0, 0, 0, 0b01, 0]);
        exec.run_phase(
            &[
                io(1, 2, 2, IoKind::Write(Src::Summary { segment: 7, index: 0 })),
                io(1, 1, 1, IoKind::Trim),
                io(0, 0, 2, IoKind::Read(Dst::User { offset: 0 })),
            ],
            &[],
            &mut reply,
            &mut staged,
        );
        assert_eq!(reply, [0, 0b01]);
        assert_eq!(exec.store().members[1], vec![0, 0, SUMMARY_TOKEN | 7, SUMMARY_TOKEN | 7]);
    }

    #[test]
    fn the_reference_reads_unwritten_blocks_as_zero() {
        let mut r = Reference::new(8);
        r.write(2, &[5, 6]);
        r.trim(3, 2, true);
        assert_eq!((r.get(0), r.get(2), r.get(3)), (Expect::Token(0), Expect::Token(5), Expect::Any));
        assert_eq!(r.tokens().filter(|&(_, t)| t != 0).collect::<Vec<_>>(), vec![(2, 5)]);
    }
}

/// What [`drive`] counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DriveStats {
    pub ops: u64,
    pub reads_checked: u64,
    pub no_space: u64,
    pub gc_jobs: u64,
    /// Live blocks whose content was checked at the end.
    pub live_checked: u64,
    /// Summaries GC read back (schemes keeping P2L in summaries).
    pub summaries_read: u64,
}

/// Hooks a [`drive`] calls; what differs between executors (timing, extra invariants).
pub trait DriveHooks<S> {
    /// Before each operation (e.g. advance the store's virtual time).
    fn before_op(&mut self, _exec: &mut Executor<S>) {}
    /// Check invariants; `when` says where the drive is ("at op N", "at the end").
    fn check(&mut self, scheme: &dyn Scheme, exec: &Executor<S>, when: &str);
    /// Whether summaries read back should lie (see [`SummaryStore::lie`]).
    fn lying_summaries(&self) -> bool {
        false
    }
    /// Reads around busy members: the policy, and the waits the scheme weighs (`None`:
    /// reads are planned as `submit` plans them).
    fn read_around(&mut self) -> Option<(swan_core::scheme::ParityReadPolicy, &mut dyn swan_core::scheme::ReadWaits)> {
        None
    }
}

/// Hooks that check the scheme's own invariants and nothing else: for a store with none of
/// its own to check.
pub struct SchemeChecks;

impl<S> DriveHooks<S> for SchemeChecks {
    fn check(&mut self, scheme: &dyn Scheme, _exec: &Executor<S>, when: &str) {
        scheme.check().unwrap_or_else(|e| panic!("{}: invariant broken {when}: {e}", scheme.kind()));
    }
}

/// The array every model check runs `kind` on: 48 segments of 8 blocks per member, SWAN0 as
/// 4 R-groups × 2, SWAN4/5 as 3 × 3, Log-RAID and RAID over 6 members; SWAN5 picks victims
/// cost-benefit, the others greedily.
pub fn model_check_spec(kind: SchemeKind) -> ArraySpec {
    use swan_core::geometry::RaidLevel;
    let (rgroups, ssds) = match kind {
        SchemeKind::Swan(RaidLevel::Raid0) => (4, 2),
        SchemeKind::Swan(_) => (3, 3),
        SchemeKind::LogRaid(_) | SchemeKind::Raid(_) => (1, 6),
    };
    ArraySpec {
        kind,
        rgroups,
        ssds_per_rgroup: ssds,
        member_blocks: 8 * 48,
        member_offset: 0,
        segment_rows: 8,
        chunk_blocks: 4,
        victim: if matches!(kind, SchemeKind::Swan(RaidLevel::Raid5)) {
            swan_core::victim::VictimPolicy::CostBenefit
        } else {
            swan_core::victim::VictimPolicy::Greedy
        },
        tuning: Default::default(),
    }
}

/// The model checks' drive: format the array, then `ops` random requests from
/// [`random_request`] over 90 % of the volume, GC jobs kept in flight (up to 4) and advanced
/// a phase at a time between requests, every read checked against a [`Reference`],
/// `hooks.check` every `check_every` ops; then drain GC, check again, and check every live
/// block. `draw` is the random source (its top 32 bits serve as 32-bit draws).
pub fn drive<S: TokenStore>(
    label: &str,
    scheme: &mut ArrayScheme,
    exec: &mut Executor<S>,
    ops: u64,
    check_every: u64,
    draw: &mut dyn FnMut() -> u64,
    hooks: &mut dyn DriveHooks<S>,
) -> DriveStats {
    use swan_core::scheme::{ReqOp, Submitted};
    let volume = scheme.volume_blocks();
    // Write over most of the volume so GC has to work hard.
    let working_set = volume * 9 / 10;
    let partial_trims_keep_data = matches!(
        scheme.kind(),
        SchemeKind::Raid(swan_core::geometry::RaidLevel::Raid4 | swan_core::geometry::RaidLevel::Raid5)
    );
    let mut reference = Reference::new(volume);
    let mut plan = IoPlan::new();
    let mut gc = GcQueue::new();
    gc.summaries.lie = hooks.lying_summaries();
    let (mut next_token, mut user, mut reply, mut scratch) = (1u64, Vec::new(), Vec::new(), Vec::new());
    let mut stats = DriveStats { ops, ..DriveStats::default() };
    scheme.format(&mut plan);
    exec.run_plan(&plan, &[], &mut [], &mut scratch);
    for op_index in 0..ops {
        hooks.before_op(exec);
        // Advance in-flight GC jobs by one phase now and then, so user I/O interleaves.
        if !gc.is_empty() && (draw() >> 32).is_multiple_of(3) {
            gc.step(scheme, exec);
        }
        gc.start(scheme, 4);
        let (roll, size) = ((draw() >> 32) as u32, (draw() >> 32) as u32);
        let req = random_request(roll, size, draw(), working_set);
        payload_tokens(&req, next_token, &mut user);
        let around = hooks.read_around().map(|(policy, waits)| ReadsAround { waits, policy });
        let submitted = plan_request(scheme, &req, &mut plan, around);
        match submitted.expect("random requests stay inside the volume") {
            Submitted::NoSpace => {
                // Only legitimate while GC is in flight and will free space.
                assert!(!gc.is_empty(), "{label}: out of space with no GC in flight at op {op_index}");
                stats.no_space += 1;
                continue;
            }
            Submitted::Planned => {}
        }
        reply.clear();
        reply.resize(req.blocks as usize, 0);
        exec.run_plan(&plan, &user, &mut reply, &mut scratch);
        gc.summaries.record(&plan, scheme);
        match req.op {
            ReqOp::Write => {
                reference.write(req.lba, &user);
                next_token += u64::from(req.blocks);
            }
            ReqOp::Trim => reference.trim(req.lba, req.blocks, partial_trims_keep_data),
            ReqOp::Read => {
                for (i, &got) in reply.iter().enumerate() {
                    let lba = req.lba + i as u64;
                    if let Expect::Token(t) = reference.get(lba) {
                        assert_eq!(got, t, "{label}: block {lba} read back wrong at op {op_index}");
                        stats.reads_checked += 1;
                    }
                }
            }
            ReqOp::Flush => {}
        }
        if op_index % check_every == 0 {
            hooks.check(&**scheme, exec, &format!("at op {op_index}"));
        }
    }
    gc.drain(scheme, exec);
    hooks.check(&**scheme, exec, "at the end");
    for (lba, t) in reference.tokens() {
        let got = scheme.locate(lba).map_or(0, |(m, b)| exec.store().peek(m, b));
        assert_eq!(got, t, "{label}: block {lba} lost");
        stats.live_checked += u64::from(t != 0);
    }
    stats.gc_jobs = gc.started();
    stats.summaries_read = gc.summaries.reads;
    stats
}

/// Every stripe row with parity must satisfy it, except rows of log segments still open
/// (one user and one GC segment per R-group at most). Returns the rows checked.
pub fn check_parity<S: TokenStore>(label: &str, spec: &ArraySpec, exec: &Executor<S>) -> u64 {
    if spec.kind.raid() == swan_core::geometry::RaidLevel::Raid0 {
        return 0;
    }
    let width = exec.group_width();
    // Rows of the segments: a partial-parity log after them holds no stripe rows.
    let rows = match spec.log_config() {
        Ok(Some(cfg)) => cfg.geometry.segments_end(),
        _ => spec.member_blocks,
    };
    let (mut checked, mut bad) = (0u64, 0u64);
    for group_first in (0..spec.members()).step_by(width) {
        for row in 0..rows {
            checked += 1;
            bad += u64::from(exec.row_parity(group_first, row) != 0);
        }
    }
    let open_rows = (u64::from(spec.rgroups) + 1) * u64::from(spec.segment_rows) * 2;
    assert!(bad <= open_rows, "{label}: {bad} of {checked} rows fail parity (at most {open_rows} may be open)");
    checked
}

//! Deterministic model check of every scheme: a long random mix of reads, writes, trims and
//! flushes, with GC jobs kept in flight across user requests (their phases executed one at a
//! time, interleaved with user I/O), against a reference map of what each block must hold.
//!
//! The executor moves *tokens* (one u64 per block) instead of bytes: every user write gets a
//! fresh token, parity is the XOR of its row, so a plan that reads or writes the wrong place,
//! loses a GC move, frees live data or writes parity from the wrong blocks is caught at the
//! next read of the block, the next invariant check or the final parity check.
//!
//! `SWAN_MODEL_OPS` sets the operations per scheme (default 1,000,000).

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::{BTreeMap, VecDeque};
use swan_core::geometry::RaidLevel;
use swan_core::io::{Dst, IoKind, IoPlan, MemberIo, Src};
use swan_core::scheme::{ArraySpec, GcJobId, ReqOp, Request, Scheme, SchemeKind, Submitted};
use swan_core::victim::VictimPolicy;

/// What the reference says a block must read back as.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    Token(u64),
    /// Trimmed on a scheme that may keep old data after a partial-stripe trim.
    Any,
}

struct Executor {
    members: Vec<Vec<u64>>,
    /// Members per parity group (the R-group, or every member for in-place RAID).
    group_width: usize,
}

const SUMMARY_TOKEN: u64 = 0xD00D << 48;

impl Executor {
    fn new(members: u32, member_blocks: u64, group_width: u32) -> Self {
        Self { members: vec![vec![0; member_blocks as usize]; members as usize], group_width: group_width as usize }
    }

    /// Run one phase: reads and data writes in order, then parity writes (which are defined
    /// as the XOR of their row once the phase's data has landed).
    fn run_phase(&mut self, ios: &[MemberIo], user: &[u64], reply: &mut [u64], staged: &mut Vec<u64>) {
        let mut parity = Vec::new();
        for io in ios {
            let m = io.member as usize;
            let b = io.block as usize;
            let n = io.count as usize;
            match io.kind {
                IoKind::Read(Dst::User { offset }) => {
                    reply[offset as usize..offset as usize + n].copy_from_slice(&self.members[m][b..b + n])
                }
                IoKind::Read(Dst::Staged { slot }) => {
                    let s = slot as usize;
                    if staged.len() < s + n {
                        staged.resize(s + n, 0);
                    }
                    staged[s..s + n].copy_from_slice(&self.members[m][b..b + n]);
                }
                IoKind::Write(Src::User { offset }) => {
                    self.members[m][b..b + n].copy_from_slice(&user[offset as usize..offset as usize + n])
                }
                IoKind::Write(Src::Staged { slot }) => {
                    self.members[m][b..b + n].copy_from_slice(&staged[slot as usize..slot as usize + n])
                }
                IoKind::Write(Src::Summary { segment, .. }) => self.members[m][b..b + n].fill(SUMMARY_TOKEN | segment),
                IoKind::Write(Src::Zero) => self.members[m][b..b + n].fill(0),
                IoKind::Write(Src::Parity { .. }) => parity.push(*io),
                IoKind::Trim => self.members[m][b..b + n].fill(0),
                IoKind::Flush => {}
            }
        }
        for io in parity {
            assert_eq!(io.count, 1);
            let value = self.row_xor(io.member as usize, io.block as usize);
            self.members[io.member as usize][io.block as usize] = value;
        }
    }

    /// XOR of the other members of `member`'s group at `row`.
    fn row_xor(&self, member: usize, row: usize) -> u64 {
        let first = member / self.group_width * self.group_width;
        (first..first + self.group_width).filter(|&m| m != member).fold(0, |acc, m| acc ^ self.members[m][row])
    }
}

struct PendingGc {
    id: GcJobId,
    plan: IoPlan,
    next_phase: usize,
    staged: Vec<u64>,
}

fn ops_per_scheme() -> u64 {
    std::env::var("SWAN_MODEL_OPS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000)
}

fn spec(kind: SchemeKind) -> ArraySpec {
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
            VictimPolicy::CostBenefit
        } else {
            VictimPolicy::Greedy
        },
        tuning: Default::default(),
    }
}

fn model_check(kind: SchemeKind, seed: u64) {
    let spec = spec(kind);
    let mut scheme = spec.build().unwrap();
    let group_width = if kind.is_log_structured() && matches!(kind, SchemeKind::Swan(_)) {
        spec.ssds_per_rgroup
    } else {
        spec.members()
    };
    let mut exec = Executor::new(spec.members(), spec.member_blocks, group_width);
    let volume = scheme.volume_blocks();
    // Write over most of the volume so GC has to work hard.
    let working_set = volume * 9 / 10;
    let partial_trims_keep_data = matches!(kind, SchemeKind::Raid(RaidLevel::Raid4 | RaidLevel::Raid5));
    let mut reference: BTreeMap<u64, Expect> = BTreeMap::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut plan = IoPlan::new();
    let mut follow_up = IoPlan::new();
    let mut pending: VecDeque<PendingGc> = VecDeque::new();
    let mut next_token = 1u64;
    let mut user = Vec::new();
    let mut reply = Vec::new();
    let mut scratch = Vec::new();
    let ops = ops_per_scheme();
    let mut stats = (0u64, 0u64, 0u64); // reads checked, gc jobs, no-space retries
    for op_index in 0..ops {
        // Advance in-flight GC jobs by one phase now and then, so user I/O interleaves.
        if let Some(job) = pending.front_mut() {
            if rng.next_u32() % 3 == 0 {
                if job.next_phase < job.plan.phase_count() {
                    let ios = job.plan.phase(job.next_phase).to_vec();
                    exec.run_phase(&ios, &[], &mut [], &mut job.staged);
                    job.next_phase += 1;
                } else {
                    let job = pending.pop_front().unwrap();
                    scheme.finish_gc(job.id, &mut follow_up);
                    for k in 0..follow_up.phase_count() {
                        exec.run_phase(follow_up.phase(k), &[], &mut [], &mut scratch);
                    }
                }
            }
        }
        while pending.len() < 4 {
            let mut gc_plan = IoPlan::new();
            match scheme.start_gc(&mut gc_plan) {
                Some(id) => {
                    stats.1 += 1;
                    pending.push_back(PendingGc { id, plan: gc_plan, next_phase: 0, staged: Vec::new() })
                }
                None => break,
            }
        }
        let roll = rng.next_u32() % 100;
        let blocks = 1 + rng.next_u32() % 8;
        let lba = rng.next_u64() % (working_set - u64::from(blocks));
        let op = match roll {
            0..=49 => ReqOp::Write,
            50..=84 => ReqOp::Read,
            85..=97 => ReqOp::Trim,
            _ => ReqOp::Flush,
        };
        let req = Request { op, lba, blocks, fua: roll % 7 == 0 };
        user.clear();
        if op == ReqOp::Write {
            user.extend((0..blocks).map(|i| next_token + u64::from(i)));
        }
        match scheme.submit(&req, &mut plan).unwrap() {
            Submitted::NoSpace => {
                // Only legitimate while GC is in flight and will free space.
                assert!(!pending.is_empty(), "{kind}: out of space with no GC in flight at op {op_index}");
                stats.2 += 1;
                continue;
            }
            Submitted::Planned => {}
        }
        reply.clear();
        reply.resize(blocks as usize, 0);
        for k in 0..plan.phase_count() {
            exec.run_phase(plan.phase(k), &user, &mut reply, &mut scratch);
        }
        match op {
            ReqOp::Write => {
                for i in 0..u64::from(blocks) {
                    reference.insert(lba + i, Expect::Token(next_token + i));
                }
                next_token += u64::from(blocks);
            }
            ReqOp::Trim => {
                for i in 0..u64::from(blocks) {
                    let e = if partial_trims_keep_data { Expect::Any } else { Expect::Token(0) };
                    reference.insert(lba + i, e);
                }
            }
            ReqOp::Read => {
                for i in 0..u64::from(blocks) {
                    let want = reference.get(&(lba + i)).copied().unwrap_or(Expect::Token(0));
                    if let Expect::Token(t) = want {
                        assert_eq!(
                            reply[i as usize],
                            t,
                            "{kind} seed {seed}: block {} read back wrong at op {op_index}",
                            lba + i
                        );
                        stats.0 += 1;
                    }
                }
            }
            ReqOp::Flush => {}
        }
        if op_index % 20_000 == 0 {
            scheme.check().unwrap_or_else(|e| panic!("{kind}: invariant broken at op {op_index}: {e}"));
        }
    }
    // Drain GC, then check everything: invariants, every block's content, and parity.
    while let Some(mut job) = pending.pop_front() {
        for k in job.next_phase..job.plan.phase_count() {
            let ios = job.plan.phase(k).to_vec();
            exec.run_phase(&ios, &[], &mut [], &mut job.staged);
        }
        scheme.finish_gc(job.id, &mut follow_up);
        for k in 0..follow_up.phase_count() {
            exec.run_phase(follow_up.phase(k), &[], &mut [], &mut scratch);
        }
    }
    scheme.check().unwrap_or_else(|e| panic!("{kind}: invariant broken at the end: {e}"));
    for (&lba, &want) in &reference {
        if let Expect::Token(t) = want {
            let got = scheme.locate(lba).map_or(0, |(m, b)| exec.members[m as usize][b as usize]);
            assert_eq!(got, t, "{kind}: block {lba} lost");
        }
    }
    check_parity(kind, &spec, &exec, scheme.as_ref());
    let c = scheme.counters();
    eprintln!(
        "{kind}: {ops} ops, {} reads checked, {} GC jobs ({} blocks moved), {} front-end rotations, {} no-space retries",
        stats.0, stats.1, c.gc_blocks_moved, c.front_rotations, stats.2
    );
    if kind.is_log_structured() {
        assert!(stats.1 > 1000, "{kind}: GC barely ran ({} jobs): the test is too easy", stats.1);
    }
    if matches!(kind, SchemeKind::Swan(_)) {
        assert!(c.front_rotations > 100, "{kind}: the front-end barely rotated");
    }
}

/// Every stripe row that has parity must satisfy it, except rows of log segments still open.
fn check_parity(kind: SchemeKind, spec: &ArraySpec, exec: &Executor, scheme: &dyn Scheme) {
    if kind.raid() == RaidLevel::Raid0 {
        return;
    }
    let _ = scheme;
    let width = exec.group_width;
    let mut checked = 0;
    let mut bad = 0;
    for group_first in (0..spec.members() as usize).step_by(width) {
        for row in 0..spec.member_blocks as usize {
            let xor = (group_first..group_first + width).fold(0u64, |acc, m| acc ^ exec.members[m][row]);
            checked += 1;
            if xor != 0 {
                bad += 1;
            }
        }
    }
    // Open segments (one user, one GC per R-group at most) may hold partial rows.
    let open_rows = (spec.rgroups as usize + 1) * spec.segment_rows as usize * 2;
    assert!(bad <= open_rows, "{kind}: {bad} of {checked} rows fail parity (at most {open_rows} may be open)");
}

macro_rules! model_tests {
    ($($name:ident => $kind:expr, $seed:expr;)*) => {$(
        #[test]
        fn $name() {
            model_check($kind, $seed);
        }
    )*};
}

model_tests! {
    raid0_model => SchemeKind::Raid(RaidLevel::Raid0), 1;
    raid4_model => SchemeKind::Raid(RaidLevel::Raid4), 2;
    raid5_model => SchemeKind::Raid(RaidLevel::Raid5), 3;
    lograid0_model => SchemeKind::LogRaid(RaidLevel::Raid0), 4;
    lograid4_model => SchemeKind::LogRaid(RaidLevel::Raid4), 5;
    lograid5_model => SchemeKind::LogRaid(RaidLevel::Raid5), 6;
    swan0_model => SchemeKind::Swan(RaidLevel::Raid0), 7;
    swan4_model => SchemeKind::Swan(RaidLevel::Raid4), 8;
    swan5_model => SchemeKind::Swan(RaidLevel::Raid5), 9;
}

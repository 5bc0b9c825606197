//! Reads around a busy member (`scheme/log/parity_read.rs`) return the right data: at token
//! level under a long random workload with GC in flight and rows filling, with a member
//! failed, and through the real engine with real bytes (a member failed and rebuilt
//! meanwhile), each beside a control that shows the check would catch a wrong rebuild.

use swan_core::geometry::RaidLevel;
use swan_core::io::{Dst, IoClass, IoKind, IoPlan, MemberBlock, MemberId, MemberIo};
use swan_core::scheme::{
    ArraySpec, LogArray, ParityReadPolicy, ReadRules, ReadWaits, ReqOp, Request, Scheme, SchemeKind,
};
use swan_core::victim::VictimPolicy;
use swan_testkit::crashsim::{Config, Run};
use swan_testkit::rng::SplitMix64;
use swan_testkit::tokens::{check_parity, drive, DriveHooks, Executor, MemStore, TokenStore};

const OPS: u64 = 200_000;
const SLOW_NS: u64 = 5_000_000;
const POLICY: ParityReadPolicy = ParityReadPolicy { min_gain_ns: 1_000_000 };

fn spec(kind: SchemeKind) -> ArraySpec {
    let (rgroups, ssds) = match kind {
        SchemeKind::Swan(_) => (3, 3),
        _ => (1, 6),
    };
    ArraySpec {
        kind,
        rgroups,
        ssds_per_rgroup: ssds,
        member_blocks: 8 * 48,
        member_offset: 0,
        segment_rows: 8,
        chunk_blocks: 4,
        victim: VictimPolicy::Greedy,
        tuning: Default::default(),
    }
}

/// Each member, at each question, slow one time in three: a random share of the reads
/// whose member is slow and whose row is not goes around.
struct RandomWaits(SplitMix64);

impl ReadWaits for RandomWaits {
    fn wait_ns(&mut self, _member: MemberId, _block: MemberBlock) -> u64 {
        if self.0.chance(1, 3) {
            SLOW_NS
        } else {
            0
        }
    }
}

struct Around(RandomWaits);

impl DriveHooks<MemStore> for Around {
    fn check(&mut self, scheme: &dyn Scheme, _exec: &Executor<MemStore>, when: &str) {
        scheme.check().unwrap_or_else(|e| panic!("{}: invariant broken {when}: {e}", scheme.kind()));
    }

    fn read_around(&mut self) -> Option<(ParityReadPolicy, &mut dyn ReadWaits)> {
        Some((POLICY, &mut self.0))
    }
}

fn reads_around_return_the_data(kind: SchemeKind, seed: u64) {
    let spec = spec(kind);
    let mut scheme = spec.build().unwrap();
    let mut exec = Executor::new(MemStore::new(spec.members(), spec.member_blocks), spec.parity_group_width());
    let mut rng = SplitMix64(seed);
    let mut hooks = Around(RandomWaits(SplitMix64(seed ^ 0x5eed)));
    let label = format!("{kind} seed {seed}, reads around");
    let stats = drive(&label, &mut scheme, &mut exec, OPS, 20_000, &mut || rng.next_u64(), &mut hooks);
    check_parity(&label, &spec, &exec);
    let c = scheme.counters();
    eprintln!(
        "{label}: {} reads checked, {} blocks read around ({} extra member reads), {} GC jobs",
        stats.reads_checked, c.parity_read_blocks, c.parity_extra_reads, stats.gc_jobs
    );
    assert!(c.parity_read_blocks > 5_000, "{label}: only {} blocks were read around", c.parity_read_blocks);
    assert!(stats.gc_jobs > 100, "{label}: GC barely ran");
}

#[test]
fn swan4_reads_around_return_the_data() {
    reads_around_return_the_data(SchemeKind::Swan(RaidLevel::Raid4), 41);
}

#[test]
fn swan5_reads_around_return_the_data() {
    reads_around_return_the_data(SchemeKind::Swan(RaidLevel::Raid5), 51);
}

#[test]
fn lograid5_reads_around_return_the_data() {
    reads_around_return_the_data(SchemeKind::LogRaid(RaidLevel::Raid5), 55);
}

/// Waits given per member, whatever the block.
struct Fixed(Vec<u64>);

impl ReadWaits for Fixed {
    fn wait_ns(&mut self, member: MemberId, _block: MemberBlock) -> u64 {
        self.0[member as usize]
    }
}

fn swan5() -> (LogArray, Executor<MemStore>) {
    let spec = spec(SchemeKind::Swan(RaidLevel::Raid5));
    let la = LogArray::new(spec.log_config().unwrap().expect("a log-structured scheme"));
    (la, Executor::new(MemStore::new(spec.members(), spec.member_blocks), spec.parity_group_width()))
}

/// Write `lba` as token `lba + 1`.
fn write(la: &mut LogArray, exec: &mut Executor<MemStore>, lba: u64) {
    let mut plan = IoPlan::new();
    la.submit(&Request::new(ReqOp::Write, lba, 1), &mut plan).unwrap();
    exec.run_plan(&plan, &[lba + 1], &mut [], &mut Vec::new());
}

/// Read `lba` with its own member slow and every other idle.
fn read_slow_member(la: &mut LogArray, exec: &mut Executor<MemStore>, lba: u64) -> u64 {
    let (member, _) = la.locate(lba).unwrap();
    let mut waits = vec![0; la.geometry().members() as usize];
    waits[member as usize] = SLOW_NS;
    let mut plan = IoPlan::new();
    la.submit_read_around(&Request::new(ReqOp::Read, lba, 1), &mut plan, &mut Fixed(waits), POLICY).unwrap();
    let mut reply = [0];
    exec.run_plan(&plan, &[], &mut reply, &mut Vec::new());
    reply[0]
}

/// The reads of a row's other columns, into the reply: what reading around would do.
fn around_plan(la: &LogArray, lba: u64) -> IoPlan {
    let (member, block) = la.locate(lba).unwrap();
    let g = la.geometry();
    let group = member / g.ssds_per_rgroup;
    let mut plan = IoPlan::new();
    for m in g.group_members(group).filter(|&m| m != member) {
        let kind = IoKind::Read(Dst::Rebuild { offset: 0 });
        plan.push(MemberIo { member: m, block, count: 1, kind, class: IoClass::UserPreempt });
    }
    plan
}

#[test]
fn a_row_still_filling_is_read_directly_and_would_be_wrong_around() {
    let (mut la, mut exec) = swan5();
    // One block in the open segment's first row (of two data columns): the row is still
    // filling, and its parity is not on the member.
    write(&mut la, &mut exec, 7);
    assert_eq!(read_slow_member(&mut la, &mut exec, 7), 8);
    assert_eq!(la.counters().parity_read_blocks, 0, "an open row was read around");
    // The control: read around anyway, and the rebuilt block is not the data.
    let mut reply = [0];
    exec.run_plan(&around_plan(&la, 7), &[], &mut reply, &mut Vec::new());
    assert_ne!(reply[0], 8, "the control did not fail: the check cannot see a wrong rebuild");
    // Once its segment is sealed, the same block is read around, rightly.
    let payload = u64::from(la.geometry().payload_slots());
    for lba in 100..100 + 2 * payload {
        write(&mut la, &mut exec, lba);
    }
    assert_eq!(read_slow_member(&mut la, &mut exec, 7), 8);
    assert_eq!(la.counters().parity_read_blocks, 1);
}

/// A member that has failed: its blocks read back as garbage.
const LOST: u64 = 0xBAD_BAD;

fn lose_member(exec: &mut Executor<MemStore>, member: MemberId) {
    exec.store_mut().members[member as usize].fill(LOST);
}

#[test]
fn a_degraded_rgroup_is_read_directly() {
    let (mut la, mut exec) = swan5();
    let payload = u64::from(la.geometry().payload_slots());
    for lba in 0..2 * payload {
        write(&mut la, &mut exec, lba);
    }
    let group_of = |la: &LogArray, lba: u64| la.locate(lba).unwrap().0 / 3;
    let (member0, _) = la.locate(0).unwrap();
    let failed = (0..la.geometry().members()).find(|&m| m / 3 == member0 / 3 && m != member0).unwrap();
    lose_member(&mut exec, failed);
    la.set_failed_member(failed, true);
    let mut checked = 0;
    for lba in 0..2 * payload {
        if la.locate(lba).unwrap().0 == failed || group_of(&la, lba) != failed / 3 {
            continue; // a degraded read of the failed member is the server's to rebuild
        }
        assert_eq!(read_slow_member(&mut la, &mut exec, lba), lba + 1, "block {lba}");
        checked += 1;
    }
    assert!(checked > 10, "too few blocks of the degraded R-group checked: {checked}");
    assert_eq!(la.counters().parity_read_blocks, 0, "a degraded row was read around");
    // The control: told nothing of the failure, the scheme reads around and the lost column
    // shows, so the check above would have caught it.
    la.set_failed_member(failed, false);
    let peers: Vec<u64> = (0..2 * payload)
        .filter(|&lba| la.locate(lba).unwrap().0 != failed && group_of(&la, lba) == failed / 3)
        .collect();
    let wrong = peers.into_iter().any(|lba| read_slow_member(&mut la, &mut exec, lba) != lba + 1);
    assert!(wrong, "the control did not fail: reading around a lost column went unseen");
    assert!(exec.store().peek(failed, 0) == LOST);
}

/// The real engine, real bytes: every read that may go around does (a gain of 0 with no
/// emulation to predict waits), while a member fails three tenths of the way in and is
/// rebuilt onto a fresh one halfway; every read is checked against what was written.
fn engine_reads_around(kind: &str, seed: u64) {
    let reads = ReadRules { priority: true, parity_min_gain_us: Some(0) };
    let cfg = Config { reads, replace: Some(1), ..Config::small(kind.parse().unwrap(), 4_000, seed) };
    let run = Run::new(cfg, &[]).unwrap();
    assert!(run.live_errors.is_empty(), "{kind}: {:?}", &run.live_errors[..run.live_errors.len().min(5)]);
    let s = &run.stats;
    eprintln!("{kind}: {} reads, {} blocks read around, {} victims", s.reads, s.parity_read_blocks, s.victims);
    assert!(s.parity_read_blocks > 500, "{kind}: only {} blocks read around", s.parity_read_blocks);
    assert!(s.victims > 0, "{kind}: GC never ran");
}

#[test]
fn the_engine_reads_swan5_around_with_real_bytes() {
    engine_reads_around("swan5", 23);
}

#[test]
fn the_engine_reads_lograid4_around_with_real_bytes() {
    engine_reads_around("lograid4", 24);
}

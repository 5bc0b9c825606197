//! Deterministic model check of every scheme: a long random mix of reads, writes, trims and
//! flushes, with GC jobs kept in flight across user requests (their phases executed one at a
//! time, interleaved with user I/O), against a reference map of what each block must hold.
//!
//! The executor ([`swan_core::testkit`]) moves *tokens* (one u64 per block) instead of bytes,
//! here over an in-memory store: every user write gets a fresh token, parity is the XOR of
//! its row, so a plan that reads or writes the wrong place, loses a GC move, frees live data
//! or writes parity from the wrong blocks is caught at the next read of the block, the next
//! invariant check or the final parity check. (`swan-sim`'s `deep_check` runs the same
//! executor over modelled SSDs whose FTLs carry the tokens.)
//!
//! `SWAN_MODEL_OPS` sets the operations per scheme (default 1,000,000).

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use swan_core::geometry::RaidLevel;
use swan_core::io::IoPlan;
use swan_core::scheme::{ArraySpec, ReqOp, SchemeKind, Submitted};
use swan_core::testkit;
use swan_core::testkit::{parity_group_width, Executor, Expect, GcQueue, MemStore, Reference};
use swan_core::victim::VictimPolicy;

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
    let mut exec = Executor::new(MemStore::new(spec.members(), spec.member_blocks), parity_group_width(&spec));
    let volume = scheme.volume_blocks();
    // Write over most of the volume so GC has to work hard.
    let working_set = volume * 9 / 10;
    let partial_trims_keep_data = matches!(kind, SchemeKind::Raid(RaidLevel::Raid4 | RaidLevel::Raid5));
    let mut reference = Reference::new(volume);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut plan = IoPlan::new();
    let mut gc = GcQueue::new();
    let mut next_token = 1u64;
    let mut user = Vec::new();
    let mut reply = Vec::new();
    let mut scratch = Vec::new();
    scheme.format(&mut plan);
    exec.run_plan(&plan, &[], &mut [], &mut scratch);
    let ops = ops_per_scheme();
    let mut stats = (0u64, 0u64); // reads checked, no-space retries
    for op_index in 0..ops {
        // Advance in-flight GC jobs by one phase now and then, so user I/O interleaves.
        if !gc.is_empty() && rng.next_u32() % 3 == 0 {
            gc.step(scheme.as_mut(), &mut exec);
        }
        gc.start(scheme.as_mut(), 4);
        let (roll, size, where_) = (rng.next_u32(), rng.next_u32(), rng.next_u64());
        let req = testkit::random_request(roll, size, where_, working_set);
        let (op, lba, blocks) = (req.op, req.lba, req.blocks);
        testkit::payload_tokens(&req, next_token, &mut user);
        match scheme.submit(&req, &mut plan).unwrap() {
            Submitted::NoSpace => {
                // Only legitimate while GC is in flight and will free space.
                assert!(!gc.is_empty(), "{kind}: out of space with no GC in flight at op {op_index}");
                stats.1 += 1;
                continue;
            }
            Submitted::Planned => {}
        }
        reply.clear();
        reply.resize(blocks as usize, 0);
        exec.run_plan(&plan, &user, &mut reply, &mut scratch);
        match op {
            ReqOp::Write => {
                reference.write(lba, &user);
                next_token += u64::from(blocks);
            }
            ReqOp::Trim => reference.trim(lba, blocks, partial_trims_keep_data),
            ReqOp::Read => {
                for i in 0..u64::from(blocks) {
                    if let Expect::Token(t) = reference.get(lba + i) {
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
    gc.drain(scheme.as_mut(), &mut exec);
    scheme.check().unwrap_or_else(|e| panic!("{kind}: invariant broken at the end: {e}"));
    for (lba, t) in reference.tokens() {
        let got = scheme.locate(lba).map_or(0, |(m, b)| exec.store().members[m as usize][b as usize]);
        assert_eq!(got, t, "{kind}: block {lba} lost");
    }
    check_parity(kind, &spec, &exec);
    let c = scheme.counters();
    eprintln!(
        "{kind}: {ops} ops, {} reads checked, {} GC jobs ({} blocks moved), {} front-end rotations, {} no-space retries",
        stats.0,
        gc.started(),
        c.gc_blocks_moved,
        c.front_rotations,
        stats.1
    );
    if kind.is_log_structured() {
        assert!(gc.started() > 1000, "{kind}: GC barely ran ({} jobs): the test is too easy", gc.started());
    }
    if matches!(kind, SchemeKind::Swan(_)) {
        assert!(c.front_rotations > 100, "{kind}: the front-end barely rotated");
    }
}

/// Every stripe row that has parity must satisfy it, except rows of log segments still open.
fn check_parity(kind: SchemeKind, spec: &ArraySpec, exec: &Executor<MemStore>) {
    if kind.raid() == RaidLevel::Raid0 {
        return;
    }
    let width = exec.group_width();
    let mut checked = 0;
    let mut bad = 0;
    for group_first in (0..spec.members()).step_by(width) {
        for row in 0..spec.member_blocks {
            checked += 1;
            if exec.row_parity(group_first, row) != 0 {
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

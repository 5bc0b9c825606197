//! Deterministic model check of every scheme: a long random mix of reads, writes, trims and
//! flushes, with GC jobs kept in flight across user requests (their phases executed one at a
//! time, interleaved with user I/O), against a reference map of what each block must hold.
//!
//! The executor ([`swan_testkit::tokens`]) moves *tokens* (one u64 per block) instead of bytes,
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
use swan_core::scheme::SchemeKind;
use swan_testkit::tokens::{check_parity, drive, model_check_spec, Executor, MemStore, SchemeChecks};

fn ops_per_scheme() -> u64 {
    std::env::var("SWAN_MODEL_OPS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000)
}

fn model_check(kind: SchemeKind, seed: u64) {
    let spec = model_check_spec(kind);
    let mut scheme = spec.build().unwrap();
    let mut exec = Executor::new(MemStore::new(spec.members(), spec.member_blocks), spec.parity_group_width());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let label = format!("{kind} seed {seed}");
    let ops = ops_per_scheme();
    let stats = drive(&label, &mut scheme, &mut exec, ops, 20_000, &mut || rng.next_u64(), &mut SchemeChecks);
    check_parity(&label, &spec, &exec);
    let c = scheme.counters();
    eprintln!(
        "{kind}: {ops} ops, {} reads checked, {} GC jobs ({} blocks moved), {} front-end rotations, {} no-space retries",
        stats.reads_checked, stats.gc_jobs, c.gc_blocks_moved, c.front_rotations, stats.no_space
    );
    if kind.is_log_structured() {
        assert!(stats.gc_jobs > 1000, "{kind}: GC barely ran ({} jobs): the test is too easy", stats.gc_jobs);
    }
    if matches!(kind, SchemeKind::Swan(_)) {
        assert!(c.front_rotations > 100, "{kind}: the front-end barely rotated");
    }
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

//! A log-structured array that keeps victims' P2L only in their segment summaries
//! ([`LogConfig::p2l_in_summaries`], as the server runs) must behave exactly like one that
//! keeps it in memory: the same model check passes, GC reads every victim's P2L from its
//! summary, and summaries that lie (stale, misdirected) cost a map scan, never data.

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use swan_core::geometry::{Geometry, RaidLevel};
use swan_core::scheme::{ArrayScheme, Layout, LogArray, LogConfig, Scheme};
use swan_core::victim::VictimPolicy;
use swan_testkit::tokens::{drive, DriveHooks, Executor, MemStore};

struct Checks {
    lie: bool,
}

impl DriveHooks<MemStore> for Checks {
    fn check(&mut self, scheme: &dyn Scheme, _exec: &Executor<MemStore>, when: &str) {
        scheme.check().unwrap_or_else(|e| panic!("{}: invariant broken {when}: {e}", scheme.kind()));
    }
    fn lying_summaries(&self) -> bool {
        self.lie
    }
}

const MEMBER_BLOCKS: u64 = 8 * 48;

fn run(layout: Layout, raid: RaidLevel, groups: u32, per_group: u32, in_summaries: bool, lie: bool) -> (LogArray, u64) {
    let geo = Geometry::new(groups, per_group, raid, MEMBER_BLOCKS, 0, 8).unwrap();
    let mut cfg = LogConfig::new(geo, layout, VictimPolicy::Greedy);
    cfg.defer_release = true;
    cfg.p2l_in_summaries = in_summaries;
    let mut a: ArrayScheme = LogArray::new(cfg).into();
    let width = if layout == Layout::Swan { per_group } else { groups * per_group };
    let mut exec = Executor::new(MemStore::new(groups * per_group, MEMBER_BLOCKS), width);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let label = format!("{} (P2L in summaries: {in_summaries}, lying: {lie})", a.kind());
    let stats = drive(&label, &mut a, &mut exec, 40_000, 5_000, &mut || rng.next_u64(), &mut Checks { lie });
    assert!(stats.gc_jobs > 50, "{label}: GC barely ran");
    let ArrayScheme::Log(a) = a else { unreachable!() };
    (*a, stats.summaries_read)
}

fn same_as_in_memory(layout: Layout, raid: RaidLevel, groups: u32, per_group: u32) {
    let (dense, _) = run(layout, raid, groups, per_group, false, false);
    let (sparse, read) = run(layout, raid, groups, per_group, true, false);
    let (d, s) = (dense.counters(), sparse.counters());
    assert_eq!(s.p2l_scans, 0, "every victim's P2L should come from its summary");
    assert!(read > 50, "only {read} summaries read back");
    assert_eq!(d, s, "the same requests must lead to the same GC whatever keeps the P2L");
    for lba in 0..dense.volume_blocks() {
        assert_eq!(dense.locate(lba), sparse.locate(lba), "block {lba} placed differently");
    }
    assert!(
        sparse.heap_bytes() < dense.heap_bytes(),
        "P2L in summaries should take less memory: {} against {}",
        sparse.heap_bytes(),
        dense.heap_bytes()
    );
}

#[test]
fn swan0_with_p2l_in_summaries_matches_p2l_in_memory() {
    same_as_in_memory(Layout::Swan, RaidLevel::Raid0, 4, 2);
}

#[test]
fn swan5_with_p2l_in_summaries_matches_p2l_in_memory() {
    same_as_in_memory(Layout::Swan, RaidLevel::Raid5, 3, 3);
}

#[test]
fn lograid4_with_p2l_in_summaries_matches_p2l_in_memory() {
    same_as_in_memory(Layout::LogRaid, RaidLevel::Raid4, 1, 6);
}

#[test]
fn lying_summaries_cost_a_map_scan_and_lose_nothing() {
    // The drive checks every read and every live block against its reference.
    let (a, read) = run(Layout::Swan, RaidLevel::Raid5, 3, 3, true, true);
    let c = a.counters();
    assert!(read > 50, "only {read} summaries read back");
    assert_eq!(c.p2l_scans, read, "a summary the map contradicts must never be used");
}

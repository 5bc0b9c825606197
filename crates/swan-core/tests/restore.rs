//! Restart from a journal: a log-structured array rebuilt from its change log
//! ([`LogArray::take_changes`]) holds every block where the original did, passes every
//! invariant check, and keeps working — allocation, GC over the rebuilt segments, front-end
//! rotation — under another long random run checked against a reference.
//!
//! This is the core half of the server's recovery (checkpoint + journal replay); the
//! server's own tests crash real processes.

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use swan_core::geometry::{Geometry, RaidLevel};
use swan_core::l2p::{PackedMap, UNMAPPED};
use swan_core::scheme::{ArrayScheme, Layout, LogArray, LogConfig, MapChange, RestoreError};
use swan_core::victim::VictimPolicy;
use swan_testkit::tokens::{check_parity, drive, Executor, MemStore, SchemeChecks};

fn config(layout: Layout, raid: RaidLevel, groups: u32, per_group: u32) -> LogConfig {
    let geo = Geometry::new(groups, per_group, raid, 8 * 48, 0, 8).unwrap();
    let mut cfg = LogConfig::new(geo, layout, VictimPolicy::Greedy);
    cfg.defer_release = true;
    cfg
}

/// Replay `changes` over an empty map, as a server's recovery does.
fn replay(cfg: &LogConfig, changes: &[MapChange]) -> (PackedMap, Vec<u64>) {
    let mut map = PackedMap::new(cfg.volume_blocks);
    for lba in 0..cfg.volume_blocks {
        map.set(lba, UNMAPPED);
    }
    let mut seqs = vec![0u64; cfg.geometry.segments() as usize];
    for c in changes {
        match *c {
            MapChange::Map { lba, pba } => map.set(lba, pba),
            MapChange::Sealed { segment, seq } => seqs[segment as usize] = seq,
        }
    }
    (map, seqs)
}

fn restart(layout: Layout, raid: RaidLevel, groups: u32, per_group: u32, seed: u64) {
    let cfg = config(layout, raid, groups, per_group);
    let mut log = LogArray::new(cfg.clone());
    log.enable_change_log();
    let mut a: ArrayScheme = log.into();
    let width = if layout == Layout::Swan { per_group } else { groups * per_group };
    let mut exec = Executor::new(MemStore::new(groups * per_group, 8 * 48), width);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let label = format!("{} seed {seed}", a.kind());
    let stats = drive(&label, &mut a, &mut exec, 60_000, 10_000, &mut || rng.next_u64(), &mut SchemeChecks);
    assert!(stats.gc_jobs > 50, "{label}: GC barely ran");
    let mut changes = Vec::new();
    a.take_changes(&mut changes);
    let (map, seqs) = replay(&cfg, &changes);
    // The restarted array keeps victims' P2L only in their summaries, as a server does.
    let mut b: ArrayScheme =
        LogArray::restore(LogConfig { p2l_in_summaries: true, ..cfg.clone() }, map, &seqs).unwrap().into();
    for lba in 0..cfg.volume_blocks {
        assert_eq!(a.locate(lba), b.locate(lba), "{label}: block {lba} moved across the restart");
    }
    b.check().unwrap_or_else(|e| panic!("{label}: restored array broken: {e}"));
    // A sealed segment holding a live block keeps its summary's sequence number; one still
    // open is adopted without a summary (sequence 0), never given a stale one.
    let holding = segments_holding(&a, cfg.volume_blocks);
    for seg in 0..cfg.geometry.segments() {
        let (before, after) = (a.segment_seq(seg), b.segment_seq(seg));
        if holding.contains(&seg) {
            assert_eq!(after, before, "{label}: segment {seg} restored with the wrong seal");
        } else {
            assert!(after == 0 || after == before, "{label}: empty segment {seg} restored with seal {after}");
        }
    }
    seal_the_adopted(&label, &mut b, cfg.volume_blocks);
    b.check().unwrap_or_else(|e| panic!("{label}: broken after sealing the adopted segments: {e}"));
    // The rebuilt array must keep working: another long run over it.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed + 100);
    let stats = drive(&label, &mut b, &mut exec, 60_000, 10_000, &mut || rng.next_u64(), &mut SchemeChecks);
    assert!(stats.gc_jobs > 50, "{label}: GC barely ran after the restart");
    // Segments sealed before the restart have no summary in this run's store; every later
    // victim's P2L came from its summary.
    let c = b.counters();
    assert!(c.p2l_scans < c.victims / 2, "{label}: {} of {} victims rebuilt from the map", c.p2l_scans, c.victims);
    check_parity(
        &label,
        &swan_core::scheme::ArraySpec {
            kind: b.kind(),
            rgroups: groups,
            ssds_per_rgroup: per_group,
            member_blocks: 8 * 48,
            member_offset: 0,
            segment_rows: 8,
            chunk_blocks: 4,
            victim: VictimPolicy::Greedy,
            tuning: Default::default(),
        },
        &exec,
    );
}

/// The segments holding a live block of the volume's `volume_blocks`.
fn segments_holding(s: &ArrayScheme, volume_blocks: u64) -> std::collections::BTreeSet<u64> {
    (0..volume_blocks).filter_map(|lba| s.log_slot(lba)).map(|at| at.segment).collect()
}

/// What a server does before serving a restored array: seal each adopted segment. Each gets
/// the next sequence number, and its summary names exactly the blocks the map puts in it.
fn seal_the_adopted(label: &str, s: &mut ArrayScheme, volume_blocks: u64) {
    let adopted = s.adopted_segments();
    assert!(!adopted.is_empty(), "{label}: nothing was open at the restart");
    let geo = *s.log_geometry().expect("a log");
    let newest = (0..geo.segments()).map(|seg| s.segment_seq(seg)).max().unwrap_or(0);
    for (k, &seg) in adopted.iter().enumerate() {
        let summary = s.seal_adopted(seg).expect("a log seals");
        assert_eq!((summary.segment, summary.seq), (seg, newest + 1 + k as u64), "{label}: sealed out of order");
        assert_eq!(s.segment_seq(seg), summary.seq, "{label}: segment {seg}'s seal");
        let mut named = 0;
        for (slot, e) in summary.entries.iter().enumerate().filter(|(_, e)| e.lba != swan_core::summary::DEAD) {
            let at = s.log_slot(e.lba).map(|at| at.pba);
            assert_eq!(at, Some(geo.pba(seg, slot as u32)), "{label}: segment {seg} slot {slot} names block {}", e.lba);
            named += 1;
        }
        let live = (0..volume_blocks).filter(|&lba| s.log_slot(lba).is_some_and(|at| at.segment == seg)).count();
        assert_eq!(named, live, "{label}: segment {seg}'s summary misses live blocks");
    }
    assert!(s.adopted_segments().is_empty(), "{label}: a segment is still adopted");
}

#[test]
fn swan0_restarts_from_its_change_log() {
    restart(Layout::Swan, RaidLevel::Raid0, 4, 2, 1);
}

#[test]
fn swan5_restarts_from_its_change_log() {
    restart(Layout::Swan, RaidLevel::Raid5, 3, 3, 2);
}

#[test]
fn lograid4_restarts_from_its_change_log() {
    restart(Layout::LogRaid, RaidLevel::Raid4, 1, 6, 3);
}

#[test]
fn a_map_into_a_summary_slot_is_refused() {
    let cfg = config(Layout::Swan, RaidLevel::Raid0, 2, 2);
    let geo = cfg.geometry;
    let summary_slot = geo.pba(0, geo.payload_slots());
    let seqs = vec![0; geo.segments() as usize];
    let map_of = |f: &dyn Fn(u64) -> u64| {
        let mut m = PackedMap::new(cfg.volume_blocks);
        (0..cfg.volume_blocks).for_each(|lba| m.set(lba, f(lba)));
        m
    };
    let into_summary = map_of(&|lba| if lba == 3 { summary_slot } else { UNMAPPED });
    let err = LogArray::restore(cfg.clone(), into_summary, &seqs).err().expect("refused");
    assert_eq!(err, RestoreError::IntoSummary { lba: 3, segment: 0 });
    assert!(err.to_string().contains("block 3") && err.to_string().contains("summary"), "{err}");
    let twice = map_of(&|lba| if lba < 2 { 5 } else { UNMAPPED });
    let err = LogArray::restore(cfg.clone(), twice.clone(), &seqs).err().expect("refused");
    assert_eq!(err, RestoreError::SlotHeldBy { lba: 1, pba: 5, holder: 0 });
    assert!(err.to_string().contains("block 0 holds too"), "{err}");
    let open_only = LogConfig { p2l_in_summaries: true, ..cfg.clone() };
    let err = LogArray::restore(open_only, twice, &seqs).err().expect("refused");
    assert_eq!(err, RestoreError::SlotHeld { lba: 1, pba: 5 });
    let cfg_volume = cfg.volume_blocks;
    let short = PackedMap::new(cfg.volume_blocks - 1);
    let err = LogArray::restore(cfg, short, &seqs).err().expect("refused");
    assert_eq!(err, RestoreError::MapLength { map: cfg_volume - 1, volume: cfg_volume });
    assert!(err.to_string().contains("map of"), "{err}");
}

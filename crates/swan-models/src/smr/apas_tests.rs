//! The SWD's band states as Algorithm 2 sees them, and Apas's cache, CPP and GC policy
//! driven over the SWD, model-checked against a reference map.

use std::collections::HashMap;

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use swan_core::apas::{
    ApasCache, BandClass, CleaningMode, Cpp, CppConfig, GcConfig, GcPolicy, Monitor, Op, ReadOutcome,
};

use super::super::tests::small;
use super::*;
use crate::Nanos;

#[test]
fn band_states_follow_the_stl() {
    // Bands of 32 blocks. Fill band 1, then overwrite its first half: those 16 blocks go to
    // band 2, the open band, which is left out.
    let mut d = Smr::new(small(100)).unwrap();
    let total = d.shingled_blocks();
    assert_eq!(total, 49 * 32);
    assert_eq!(d.free_blocks(), total);
    d.write(0, 0, 32).unwrap();
    d.write(0, 0, 16).unwrap();
    let states = d.band_states();
    assert_eq!(states, [BandState { band: 1, valid: 16, invalid: 16, free: 0, valid_front: 0 }]);
    assert_eq!(d.free_blocks(), total - 48);
    let policy = GcPolicy::new(GcConfig::default()).unwrap();
    assert_eq!(policy.classify(&states[0]), Some(BandClass::C), "valid data all in the back half");
    // Overwrite the back half too: band 1 is all invalid, type A, and cleaning it frees it.
    d.write(0, 16, 16).unwrap();
    let states = d.band_states();
    assert_eq!(states.len(), 1, "band 2, full now, is still the open band: {states:?}");
    let plan = policy.plan(&d.band_states(), d.free_blocks(), total, true);
    assert_eq!(plan.mode, CleaningMode::Aggressive);
    let a = plan.now().iter().find(|v| v.band == 1).expect("band 1 is a victim");
    assert_eq!((a.class, a.valid, a.invalid), (BandClass::A, 0, 32));
    d.clean(0, 1).unwrap();
    assert_eq!(d.free_blocks(), total - 32, "only band 2's 32 blocks are written now");
}

/// What a run of [`apas_over_smr`] did (equal for equal seeds).
#[derive(Debug, PartialEq, Eq)]
struct Run {
    hits: u64,
    destaged: u64,
    lazy_cleanings: u64,
    idle_cleanings: u64,
    forced_cleanings: u64,
    moved_blocks: u64,
    end: Nanos,
}

/// Random reads and writes of three applications through Apas's cache into the SWD, with
/// CPP re-partitioning every 5,000 operations, lazy cleaning checked every 64 and an idle
/// period (aggressive cleaning) one operation in 100. Every read must return the newest tag
/// written to its block, from the cache or the disk; after the final flush every block on the
/// disk must hold its newest tag. Addresses cover 60 % of the disk, so lazy cleaning can
/// reach its 20 % target.
fn apas_over_smr(ops: u64, seed: u64) -> Run {
    let mut d = Smr::new(small(100)).unwrap().with_tags();
    let total = d.shingled_blocks();
    let span = d.logical_blocks() * 6 / 10;
    let apps = 3;
    let mut monitor = Monitor::new(apps);
    let mut cpp = Cpp::new(CppConfig::default(), 128, apps).unwrap();
    let mut cache = ApasCache::new(cpp.partition());
    let gc = GcPolicy::new(GcConfig::default()).unwrap();
    let mut newest: HashMap<u64, u64> = HashMap::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut run = Run {
        hits: 0,
        destaged: 0,
        lazy_cleanings: 0,
        idle_cleanings: 0,
        forced_cleanings: 0,
        moved_blocks: 0,
        end: 0,
    };
    let mut t: Nanos = 0;
    let destage = |d: &mut Smr, blocks: Vec<(u64, u64)>, t: &mut Nanos, run: &mut Run| {
        for (b, tag) in blocks {
            let w = d.write_tagged(*t, b, &[tag]).unwrap();
            (*t, run.destaged) = (w.done, run.destaged + 1);
            run.forced_cleanings += u64::from(w.forced_cleanings);
            run.moved_blocks += w.moved_blocks;
        }
    };
    let clean = |d: &mut Smr, idle: bool, t: &mut Nanos, run: &mut Run| {
        let plan = gc.plan(&d.band_states(), d.free_blocks(), total, idle);
        for v in plan.now() {
            let c = d.clean(*t, v.band).unwrap();
            (*t, run.moved_blocks) = (c.done, run.moved_blocks + c.moved_blocks);
            match plan.mode {
                CleaningMode::Aggressive => run.idle_cleanings += 1,
                _ => run.lazy_cleanings += 1,
            }
        }
    };
    for op in 0..ops {
        let app = (rng.next_u64() % apps as u64) as u32;
        // Each application has a favourite third of the span; a quarter of its requests go
        // anywhere, so applications share blocks too.
        let block = if rng.next_u64() % 4 == 0 {
            rng.next_u64() % span
        } else {
            (u64::from(app) * span / 3 + rng.next_u64() % (span / 3)) % span
        };
        match rng.next_u64() % 100 {
            0..=39 => {
                monitor.request(app, Op::Read, 4096);
                let want = newest.get(&block).copied();
                match cache.read(app, block) {
                    ReadOutcome::Hit { tag } => {
                        assert_eq!(Some(tag), want, "op {op}: block {block} served stale from the cache");
                        monitor.lookup(app, Op::Read, true);
                        run.hits += 1;
                    }
                    ReadOutcome::Miss => {
                        monitor.lookup(app, Op::Read, false);
                        t = d.read(t, block, 1).unwrap();
                        let on_disk = d.read_tags(block, 1)[0];
                        assert_eq!(on_disk, want, "op {op}: block {block} missed and the disk is stale");
                        if let Some(tag) = on_disk {
                            cache.fill(app, block, tag);
                        }
                    }
                }
            }
            40..=98 => {
                monitor.request(app, Op::Write, 4096);
                let tag = op + 1;
                newest.insert(block, tag);
                let out = cache.write(app, block, tag);
                monitor.lookup(app, Op::Write, out.hit);
                destage(&mut d, out.destage, &mut t, &mut run);
            }
            _ => clean(&mut d, true, &mut t, &mut run),
        }
        if op % 64 == 63 {
            clean(&mut d, false, &mut t, &mut run);
        }
        if op % 5000 == 4999 {
            let stats = monitor.end_period();
            let evicted = cache.resize(cpp.adjust(&stats));
            destage(&mut d, evicted, &mut t, &mut run);
        }
    }
    let rest = cache.flush();
    destage(&mut d, rest, &mut t, &mut run);
    for (&b, &tag) in &newest {
        assert_eq!(d.read_tags(b, 1)[0], Some(tag), "after the flush, block {b}");
    }
    run.end = t;
    run
}

/// `SWAN_APAS_SMR_MODEL_OPS` sets the operation count (default 1,000,000).
#[test]
fn apas_over_the_swd_never_loses_or_serves_stale_data() {
    let ops = std::env::var("SWAN_APAS_SMR_MODEL_OPS").ok().and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let run = apas_over_smr(ops, 22);
    println!("{ops} operations: {run:?}");
    assert!(run.hits > 0 && run.destaged > 0, "{run:?}");
    assert!(run.lazy_cleanings > 0 && run.idle_cleanings > 0, "both cleanings ran: {run:?}");
}

#[test]
fn apas_over_the_swd_is_deterministic() {
    assert_eq!(apas_over_smr(20_000, 5), apas_over_smr(20_000, 5));
    assert_ne!(apas_over_smr(20_000, 5), apas_over_smr(20_000, 6));
}

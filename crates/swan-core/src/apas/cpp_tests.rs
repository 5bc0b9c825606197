//! Algorithm 1 on hand-built monitor states.

use super::*;
use crate::apas::monitor::AppPeriod;
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn period(volumes: &[(u64, u64)]) -> PeriodStats {
    let apps =
        volumes.iter().map(|&(r, w)| AppPeriod { read_bytes: r, write_bytes: w, ..Default::default() }).collect();
    PeriodStats { period: 0, apps }
}

fn sizes(p: &Partition) -> Vec<(u64, u64)> {
    p.apps.iter().map(|a| (a.read_blocks, a.write_blocks)).collect()
}

const NO_RESERVE: CppConfig = CppConfig { share: AppShare::Volume, reserve_fraction: 0.0 };

#[test]
fn one_application_is_algorithm_1_exactly() {
    // C_0 = 1002 blocks, one block each kept back: 1000 split 3:1 by Data_R : Data_W.
    let mut cpp = Cpp::new(NO_RESERVE, 1002, 1).unwrap();
    assert_eq!(cpp.min_blocks(), 1);
    assert_eq!(sizes(cpp.partition()), [(501, 501)], "before any period: half and half");
    assert_eq!(sizes(cpp.adjust(&period(&[(3 << 20, 1 << 20)]))), [(751, 251)]);
    // 19 % reads, Financial's read ratio (Table I).
    assert_eq!(sizes(cpp.adjust(&period(&[(19, 81)]))), [(191, 811)]);
}

#[test]
fn volume_share_splits_the_whole_cache_by_every_partitions_volume() {
    // Reads 600 + 0, writes 200 + 200: C_R = 60 %, C_W = 40 %; app 1 reads nothing.
    let cfg = CppConfig { share: AppShare::Volume, reserve_fraction: 0.04 };
    let mut cpp = Cpp::new(cfg, 1000, 2).unwrap();
    assert_eq!(cpp.min_blocks(), 10, "4 % of 1000 over 4 partitions");
    let p = cpp.adjust(&period(&[(600, 200), (0, 200)])).clone();
    assert_eq!(sizes(&p), [(10 + 576, 10 + 192), (10, 10 + 192)]);
    assert_eq!((p.read_total(), p.write_total()), (596, 404));
}

#[test]
fn equal_share_keeps_each_applications_cache_and_splits_it_by_its_own_volumes() {
    let cfg = CppConfig { share: AppShare::Equal, reserve_fraction: 0.04 };
    let mut cpp = Cpp::new(cfg, 1000, 2).unwrap();
    let p = cpp.adjust(&period(&[(600, 200), (0, 200)])).clone();
    assert_eq!(sizes(&p), [(10 + 360, 10 + 120), (10, 10 + 480)]);
    // App 1 idle next period: its split stays; app 0 turns to writes only.
    assert_eq!(sizes(cpp.adjust(&period(&[(0, 5), (0, 0)]))), [(10, 10 + 480), (10, 10 + 480)]);
}

#[test]
fn a_period_without_requests_keeps_the_partition() {
    let mut cpp = Cpp::new(CppConfig::default(), 4096, 3).unwrap();
    let before = cpp.adjust(&period(&[(1, 2), (3, 4), (5, 6)])).clone();
    assert_eq!(cpp.adjust(&period(&[(0, 0), (0, 0), (0, 0)])), &before);
}

#[test]
fn rounding_gives_the_leftover_blocks_to_the_largest_remainders() {
    assert_eq!(apportion(10, &[1, 1, 1]), [4, 3, 3], "ties to the lower index");
    assert_eq!(apportion(10, &[1, 2, 3]), [2, 3, 5], "quotas 1.67, 3.33, 5");
    assert_eq!(apportion(7, &[0, 0]), [4, 3], "no weight: equal");
    assert_eq!(apportion(0, &[5, 9]), [0, 0]);
    assert_eq!(
        apportion(u64::MAX, &[u64::MAX.into(), 1]).iter().map(|&x| u128::from(x)).sum::<u128>(),
        u64::MAX.into()
    );
}

#[test]
fn invariants_hold_over_random_periods() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(22);
    for case in 0..2000 {
        let apps = 1 + (rng.next_u64() % 8) as usize;
        let cache = 2 * apps as u64 + rng.next_u64() % 100_000;
        let share = if case % 2 == 0 { AppShare::Volume } else { AppShare::Equal };
        let reserve = (rng.next_u64() % 50) as f64 / 100.0;
        let mut cpp = Cpp::new(CppConfig { share, reserve_fraction: reserve }, cache, apps).unwrap();
        let min = cpp.min_blocks();
        assert!(min >= 1 && min * 2 * apps as u64 <= cache);
        for _ in 0..5 {
            // Some applications idle, some with volumes up to 2^40 bytes.
            let v: Vec<(u64, u64)> = (0..apps)
                .map(|_| match rng.next_u64() % 4 {
                    0 => (0, 0),
                    _ => (rng.next_u64() >> 24, rng.next_u64() >> (24 + rng.next_u64() % 40)),
                })
                .collect();
            let p = cpp.adjust(&period(&v));
            assert_eq!(p.total(), cache, "case {case}: sizes sum to the cache");
            assert!(p.apps.iter().all(|a| a.read_blocks >= min && a.write_blocks >= min), "case {case}: minimum");
        }
    }
}

#[test]
fn impossible_configurations_are_errors() {
    let e = |cfg, cache, apps| Cpp::new(cfg, cache, apps).unwrap_err().to_string();
    assert_eq!(e(CppConfig::default(), 100, 0), "cache partitioning: at least one application is needed");
    assert_eq!(
        e(CppConfig::default(), 5, 3),
        "cache partitioning: a cache of 5 blocks cannot give 3 applications a read and a write block each"
    );
    let bad = CppConfig { reserve_fraction: 1.0, ..CppConfig::default() };
    assert_eq!(e(bad, 100, 1), "cache partitioning: reserve_fraction 1 must be in [0, 1)");
}

//! The partitioned cache on hand-built sequences, and a model check against a reference map.

use super::*;
use crate::apas::cpp::AppPartition;
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn partition(sizes: &[(u64, u64)]) -> Partition {
    Partition { apps: sizes.iter().map(|&(r, w)| AppPartition { read_blocks: r, write_blocks: w }).collect() }
}

#[test]
fn reads_fill_the_readers_lru_read_cache() {
    let mut c = ApasCache::new(&partition(&[(2, 1), (1, 1)]));
    assert_eq!(c.read(0, 10), ReadOutcome::Miss);
    c.fill(0, 10, 100);
    c.fill(0, 11, 110);
    assert_eq!(c.read(0, 10), ReadOutcome::Hit { tag: 100 }, "10 is now the most recent");
    c.fill(0, 12, 120);
    assert_eq!(c.read(0, 11), ReadOutcome::Miss, "11 was the least recently used");
    assert_eq!(c.occupancy(0), (2, 0));
    assert_eq!(c.read(1, 12), ReadOutcome::Hit { tag: 120 }, "a block is found whoever cached it");
    assert_eq!(c.occupancy(1), (0, 0));
    assert_eq!(c.is_dirty(12), Some(false));
}

#[test]
fn writes_are_absorbed_and_destaged_least_recently_written_first() {
    let mut c = ApasCache::new(&partition(&[(1, 2)]));
    assert_eq!(c.write(0, 1, 10), WriteOutcome::default());
    assert_eq!(c.write(0, 2, 20), WriteOutcome::default());
    assert_eq!(c.write(0, 1, 11), WriteOutcome { hit: true, destage: vec![] }, "an overwrite is a hit");
    assert_eq!(c.write(0, 3, 30).destage, [(2, 20)], "2 is the least recently written");
    assert_eq!(c.read(0, 1), ReadOutcome::Hit { tag: 11 });
    assert_eq!(c.dirty_blocks(), 2);
    let mut flushed = c.flush();
    flushed.sort_unstable();
    assert_eq!(flushed, [(1, 11), (3, 30)]);
    assert_eq!(c.dirty_blocks(), 0);
    assert_eq!(c.read(0, 3), ReadOutcome::Miss, "flushed blocks leave the cache");
}

#[test]
fn one_copy_per_block_across_partitions() {
    let mut c = ApasCache::new(&partition(&[(2, 2), (2, 2)]));
    c.fill(0, 5, 50);
    assert_eq!(c.write(1, 5, 51), WriteOutcome::default(), "a clean copy is not a write hit");
    assert_eq!(c.occupancy(0), (0, 0), "app 0's clean copy is gone");
    assert_eq!(c.read(0, 5), ReadOutcome::Hit { tag: 51 });
    assert_eq!(c.write(0, 5, 52), WriteOutcome { hit: true, destage: vec![] }, "taken over, not destaged");
    assert_eq!((c.occupancy(0), c.occupancy(1)), ((0, 1), (0, 0)));
    c.fill(1, 5, 0);
    assert_eq!(c.read(1, 5), ReadOutcome::Hit { tag: 52 }, "a stale fill after a write is ignored");
}

#[test]
fn resizing_destages_dirty_overflow_and_drops_clean_overflow() {
    let mut c = ApasCache::new(&partition(&[(3, 3)]));
    for b in 0..3 {
        c.fill(0, b, b);
        c.write(0, 10 + b, 10 + b);
    }
    assert_eq!(c.resize(&partition(&[(5, 1)])), [(10, 10), (11, 11)]);
    assert_eq!(c.occupancy(0), (3, 1));
    assert!(c.resize(&partition(&[(1, 5)])).is_empty());
    assert_eq!(c.occupancy(0), (1, 1));
    assert_eq!(c.read(0, 2), ReadOutcome::Hit { tag: 2 }, "the most recent clean block stays");
}

#[test]
fn an_empty_partition_caches_nothing_and_writes_through() {
    let mut c = ApasCache::new(&partition(&[(0, 0), (1, 1)]));
    c.fill(1, 7, 70);
    assert_eq!(c.write(0, 7, 71), WriteOutcome { hit: false, destage: vec![(7, 71)] });
    assert_eq!(c.read(1, 7), ReadOutcome::Miss, "the clean copy is superseded, not kept");
    c.fill(0, 8, 80);
    assert_eq!(c.read(0, 8), ReadOutcome::Miss);
    assert_eq!(c.occupancy(0), (0, 0));
}

/// Runs `ops` random reads, writes, re-partitions and flushes over 2–4 applications and
/// a few thousand blocks against a reference map of every block's newest tag, with a disk
/// map the destaged blocks are written to. A read hit must return the newest tag; a miss must
/// find it on the disk (else a dirty block was lost). With `lose_one_destage`, the harness
/// drops the first destaged block instead of writing it and never writes that block again
/// (so no newer write makes the loss harmless), which the check must notice.
fn model_check(seed: u64, ops: u64, lose_one_destage: bool) -> Result<(), String> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let apps = 2 + (rng.next_u64() % 3) as usize;
    let blocks = 4096;
    let random_partition = |rng: &mut Xoshiro256PlusPlus| {
        // Sometimes an empty partition (write-through, no read caching).
        partition(&(0..apps).map(|_| (rng.next_u64() % 300, rng.next_u64() % 300)).collect::<Vec<_>>())
    };
    let mut part = random_partition(&mut rng);
    let mut cache = ApasCache::new(&part);
    let mut newest: HashMap<u64, u64> = HashMap::new();
    let mut disk: HashMap<u64, u64> = HashMap::new();
    let mut lose = lose_one_destage;
    let mut lost_block = None;
    let mut apply = |destage: Vec<(u64, u64)>, disk: &mut HashMap<u64, u64>, lost_block: &mut Option<u64>| {
        for (b, tag) in destage {
            if lose {
                (lose, *lost_block) = (false, Some(b));
                continue;
            }
            disk.insert(b, tag);
        }
    };
    for op in 0..ops {
        let app = (rng.next_u64() % apps as u64) as AppId;
        // Skewed addresses: half the operations on a hot eighth of the blocks.
        let block = if rng.next_u64() % 2 == 0 { rng.next_u64() % (blocks / 8) } else { rng.next_u64() % blocks };
        let mut dice = rng.next_u64() % 1000;
        if lost_block == Some(block) && (450..=996).contains(&dice) {
            dice = 0; // the lost block is only read from now on
        }
        match dice {
            0..=449 => {
                let want = newest.get(&block).copied().unwrap_or(0);
                match cache.read(app, block) {
                    ReadOutcome::Hit { tag } if tag != want => {
                        return Err(format!("op {op}: block {block} hit with tag {tag}, newest is {want}"));
                    }
                    ReadOutcome::Hit { .. } => {}
                    ReadOutcome::Miss => {
                        let on_disk = disk.get(&block).copied().unwrap_or(0);
                        if on_disk != want {
                            return Err(format!("op {op}: block {block} missed, disk has {on_disk}, newest is {want}"));
                        }
                        cache.fill(app, block, on_disk);
                    }
                }
            }
            450..=996 => {
                let tag = op + 1;
                newest.insert(block, tag);
                let out = cache.write(app, block, tag);
                apply(out.destage, &mut disk, &mut lost_block);
            }
            997..=998 => {
                part = random_partition(&mut rng);
                let destage = cache.resize(&part);
                apply(destage, &mut disk, &mut lost_block);
            }
            _ => {
                let destage = cache.flush();
                apply(destage, &mut disk, &mut lost_block);
            }
        }
        for (a, p) in part.apps.iter().enumerate() {
            let (r, w) = cache.occupancy(a as AppId);
            if r > p.read_blocks || w > p.write_blocks {
                return Err(format!("op {op}: app {a} holds {r}+{w} blocks over its {p:?}"));
            }
        }
    }
    let destage = cache.flush();
    apply(destage, &mut disk, &mut lost_block);
    for (b, tag) in &newest {
        if disk.get(b) != Some(tag) {
            return Err(format!("after the final flush block {b} is {:?} on disk, newest is {tag}", disk.get(b)));
        }
    }
    Ok(())
}

/// `SWAN_APAS_CACHE_MODEL_OPS` sets the operation count (default 1,000,000).
fn model_ops() -> u64 {
    std::env::var("SWAN_APAS_CACHE_MODEL_OPS").ok().and_then(|s| s.parse().ok()).unwrap_or(1_000_000)
}

#[test]
fn model_check_never_serves_stale_or_loses_data() {
    for seed in [1, 2] {
        model_check(seed, model_ops() / 2, false).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    }
}

#[test]
fn model_check_notices_a_lost_destage() {
    let e = model_check(1, 200_000, true).expect_err("a dropped destage must be noticed");
    assert!(e.contains("newest is"), "{e}");
}

//! The SWD: the in-order rule of shingled bands, the STL's bookkeeping, band cleaning and
//! its cost, forced cleaning when the host fills the disk, a model check of random
//! writes, reads, trims and cleanings against a reference map, determinism, and
//! impossible drives refused.

use std::collections::HashMap;

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::*;
use crate::hdd::{HddConfig, SeekCurve, Zone};

const MS: Nanos = 1_000_000;

/// 6,000 rpm, 2 heads, `cylinders` cylinders of 64 sectors (8 blocks a track); bands of
/// 32 blocks (four tracks), one unshingled, three spare.
pub(super) fn small(cylinders: u32) -> SmrConfig {
    SmrConfig {
        hdd: HddConfig {
            name: "small".into(),
            rpm: 6_000,
            sector_bytes: 512,
            heads: 2,
            zones: vec![Zone { cylinders, sectors_per_track: 64 }],
            seek: SeekCurve { track_to_track_ns: MS, average_ns: 4 * MS, full_stroke_ns: 8 * MS },
            head_switch_ns: MS / 2,
        },
        band_bytes: 32 * 4096,
        unshingled_bands: 1,
        spare_bands: 3,
    }
}

#[test]
fn a_mid_band_write_reads_out_and_rewrites_the_tracks_after_it() {
    let mut d = Smr::new(small(100)).unwrap().with_tags();
    let m = d.media_mut();
    let tags: Vec<u64> = (100..132).collect();
    let fill = m.write_at(0, 1, 0, 32, Some(&tags)).unwrap();
    assert_eq!((fill.rewritten_blocks, m.write_pointer(1)), (0, 32), "an append damages nothing");
    // Block 3 lies on the band's first track (blocks 0..8): tracks 2..4 (blocks 8..32) are
    // damaged, read out and rewritten; blocks 4..8 of the same track are not.
    let t0 = fill.done;
    let w = m.write_at(t0, 1, 3, 1, Some(&[7])).unwrap();
    assert_eq!(w.rewritten_blocks, 24);
    let block = 10 * MS / 8; // 8 of 64 sectors at 10 ms a revolution
    assert!(w.done - w.start > 2 * 24 * block + block, "read-out and rewrite of 24 blocks");
    assert_eq!(m.write_pointer(1), 32);
    let b1 = m.target(1, 0);
    let kept: Vec<_> = (0..32).map(|i| m.tag(b1 + i)).collect();
    assert_eq!(kept[3], Some(7));
    assert!(kept.iter().enumerate().all(|(i, &t)| i == 3 || t == Some(100 + i as u64)), "the tail survives");
    // The same write on the band's last track, or on the unshingled band, damages nothing.
    assert_eq!(m.write_at(w.done, 1, 30, 1, None).unwrap().rewritten_blocks, 0);
    m.write_at(w.done, 0, 0, 32, None).unwrap();
    assert_eq!(m.write_at(w.done, 0, 3, 1, None).unwrap().rewritten_blocks, 0);
    // And a mid-band write costs far more than the append it replaces.
    let append = m.write_at(0, 2, 0, 1, None).unwrap();
    assert!(w.done - w.start > 5 * (append.done - append.start));
}

#[test]
fn the_stl_appends_and_counts_invalid_blocks_per_band() {
    let mut d = Smr::new(small(100)).unwrap();
    d.write(0, 0, 32).unwrap();
    let e = d.lookup(5).unwrap();
    assert_eq!((e.band, e.target_lba), (1, 32 + 5), "first shingled band, in order");
    d.write(0, 5, 1).unwrap();
    let moved = d.lookup(5).unwrap();
    assert_eq!((moved.band, moved.target_lba), (2, 64), "an overwrite appends elsewhere");
    assert_eq!(d.band_stats(1), BandStats { valid: 31, invalid: 1, free: 0 });
    assert_eq!(d.band_stats(2), BandStats { valid: 1, invalid: 0, free: 31 });
    d.write(0, 20, 12).unwrap();
    assert_eq!((d.valid_in(1, 0, 16), d.valid_in(1, 16, 32)), (15, 4), "front and back halves");
    d.trim(0, 2).unwrap();
    assert_eq!(d.band_stats(1).invalid, 15);
    assert_eq!(d.lookup(0), None);
    // The media never saw a write below a write pointer.
    assert!(d.used_bands().all(|b| d.band_stats(b).valid + d.band_stats(b).invalid + d.band_stats(b).free == 32));
}

#[test]
fn cleaning_moves_the_valid_blocks_in_order_and_frees_the_band() {
    let mut d = Smr::new(small(100)).unwrap().with_tags();
    let tags: Vec<u64> = (0..32).map(|i| 1000 + i).collect();
    d.write_tagged(0, 0, &tags).unwrap();
    for lba in (0..32).step_by(2) {
        d.write_tagged(0, lba, &[lba]).unwrap();
    }
    let before_free = d.free_bands();
    let t0 = d.busy_until();
    let c = d.clean(t0, 1).unwrap();
    assert_eq!((c.moved_blocks, c.destination), (16, Some(3)));
    assert_eq!(d.band_stats(1), BandStats { valid: 0, invalid: 0, free: 32 });
    assert_eq!(d.band_stats(3), BandStats { valid: 16, invalid: 0, free: 16 });
    assert_eq!(d.free_bands(), before_free, "one band taken, one freed");
    assert_eq!(d.lookup(1).unwrap().target_lba, d.media().target(3, 0), "odd blocks, in order");
    assert_eq!(d.lookup(31).unwrap().target_lba, d.media().target(3, 15));
    let expect: Vec<Option<u64>> = (0..32).map(|i| Some(if i % 2 == 0 { i } else { 1000 + i })).collect();
    assert_eq!(d.read_tags(0, 32), expect);
    // Cost: 16 scattered one-block reads and one 16-block write, at least their transfer.
    let block = 10 * MS / 8;
    assert!(c.done - c.start >= 32 * block);
    // An empty band is freed without moving anything; a free or unshingled one is refused.
    d.trim(0, 32).unwrap();
    let empty = d.clean(c.done, 2).unwrap();
    assert_eq!((empty.moved_blocks, empty.destination, empty.done), (0, None, c.done));
    assert_eq!(d.clean(0, 2), Err(SmrError::NotCleanable { band: 2 }));
    assert_eq!(d.clean(0, 0), Err(SmrError::NotCleanable { band: 0 }));
}

#[test]
fn a_full_disk_cleans_by_itself_when_the_host_keeps_writing() {
    let mut d = Smr::new(small(100)).unwrap();
    let n = d.logical_blocks();
    let mut forced = 0;
    for round in 0..3 {
        for lba in (0..n).step_by(4) {
            let lba = (lba + round * 7) % (n - 4);
            forced += d.write(0, lba, 4).unwrap().forced_cleanings;
        }
    }
    assert!(forced > 0, "overwrites beyond the spare room force cleanings");
    assert!(d.free_bands() >= 1, "the cleaning band is always kept");
}

/// Random writes, reads, trims and cleanings against a reference map; returns the final
/// time. Every read must serve exactly the last tag written to each block.
fn model_check(ops: u64, seed: u64) -> Nanos {
    model_check_aged(ops, seed, 0)
}

/// The model check on a disk aged with `foreign` blocks of older data first: the host
/// addresses the rest, and the older data must survive every cleaning, whole.
fn model_check_aged(ops: u64, seed: u64, foreign: u64) -> Nanos {
    let mut d = Smr::new(small(100)).unwrap().with_tags();
    d.fill_foreign(foreign).unwrap();
    let n = d.logical_blocks() - foreign;
    let mut reference: HashMap<u64, u64> = HashMap::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut t = 0;
    let mut cleanings = 0;
    for op in 0..ops {
        let len = 1 + rng.next_u64() % 8;
        let lba = rng.next_u64() % (n - len);
        match rng.next_u64() % 20 {
            0..=8 => {
                let tags: Vec<u64> = (0..len).map(|i| op * 8 + i).collect();
                t = d.write_tagged(t, lba, &tags).unwrap().done;
                for i in 0..len {
                    reference.insert(lba + i, op * 8 + i);
                }
            }
            9..=16 => {
                t = d.read(t, lba, len).unwrap();
                let want: Vec<_> = (lba..lba + len).map(|b| reference.get(&b).copied()).collect();
                assert_eq!(d.read_tags(lba, len), want, "op {op}: blocks {lba}..+{len}");
            }
            17 => {
                d.trim(lba, len).unwrap();
                (lba..lba + len).for_each(|b| _ = reference.remove(&b));
            }
            _ => {
                let used: Vec<u32> = d.used_bands().collect();
                if !used.is_empty() {
                    let victim = used[(rng.next_u64() % used.len() as u64) as usize];
                    t = d.clean(t, victim).unwrap().done;
                    cleanings += 1;
                }
            }
        }
        if op % 50_000 == 0 {
            let valid: u64 = d.used_bands().map(|b| d.band_stats(b).valid).sum();
            assert_eq!(valid, reference.len() as u64 + foreign);
            assert_eq!(d.foreign_blocks(), foreign);
            // The live counts equal what a scan of every band finds.
            let bb = d.media().band_blocks();
            let scanned: u64 = d.used_bands().map(|b| d.band_stats(b).free).sum();
            assert_eq!(d.free_blocks(), d.free_bands() as u64 * bb + scanned, "op {op}");
            let mut dirty = d.band_states();
            dirty.retain(|b| b.invalid > 0);
            assert_eq!(d.victim_states(), dirty, "op {op}");
            for b in d.used_bands() {
                let s = d.band_stats(b);
                assert_eq!(s.valid + s.invalid + s.free, 32);
                assert_eq!(d.valid_in(b, 0, 32), s.valid);
            }
        }
    }
    assert!(cleanings > 0);
    let all: Vec<_> = (0..n).map(|b| reference.get(&b).copied()).collect();
    assert_eq!(d.read_tags(0, n), all, "at the end, every block");
    t
}

/// `SWAN_SMR_MODEL_OPS` sets the operation count (default 1,000,000; ~2 s in release).
#[test]
fn the_stl_never_loses_or_serves_stale_data() {
    let ops = std::env::var("SWAN_SMR_MODEL_OPS").ok().and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    model_check(ops, 22);
}

/// The same check with two thirds of the host's capacity held by older data (the bands
/// are chosen at random, so older bands are moved too).
#[test]
fn an_aged_disk_keeps_its_older_data_and_the_hosts() {
    let ops = std::env::var("SWAN_SMR_MODEL_OPS").ok().and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let foreign = Smr::new(small(100)).unwrap().logical_blocks() * 2 / 3 + 5;
    model_check_aged(ops / 2, 23, foreign);
}

#[test]
fn aging_spreads_whole_bands_and_leaves_the_rest_for_the_host() {
    let mut d = Smr::new(small(100)).unwrap();
    let (bands, bb) = (d.media().bands(), d.media().band_blocks());
    let free0 = d.free_blocks();
    d.fill_foreign(10 * bb + 7).unwrap();
    assert_eq!(d.foreign_blocks(), 10 * bb + 7);
    assert_eq!(d.free_blocks(), free0 - 10 * bb - 7, "block-exact");
    let used: Vec<u32> = d.used_bands().collect();
    assert_eq!(used.len(), 11);
    assert!(used.iter().any(|&b| b > bands / 2), "spread over the disk, not packed at its start: {used:?}");
    let full = used.iter().filter(|&&b| d.band_stats(b) == BandStats { valid: bb, invalid: 0, free: 0 }).count();
    assert_eq!(full, 10);
    // The host's first write continues the partly written band, after the older data.
    let part = *used.iter().find(|&&b| d.band_stats(b).free > 0).unwrap();
    d.write(0, 0, 3).unwrap();
    assert_eq!(d.lookup(0).unwrap().band, part);
    assert_eq!(d.lookup(0).unwrap().target_lba, d.media().target(part, 7));
    assert_eq!(d.valid_in(part, 0, 7), 7);
    assert_eq!(d.valid_in(part, 5, 9), 4);
    // Cleaning it moves the older data and the host's, in that order.
    d.write(0, 0, 1).unwrap();
    let c = d.clean(0, part).unwrap();
    assert_eq!(c.moved_blocks, 10, "7 older blocks and the host's 1, 2 and 0");
    let dest = c.destination.unwrap();
    assert_eq!(d.band_stats(dest), BandStats { valid: 10, invalid: 0, free: bb - 10 });
    assert_eq!(d.lookup(1).unwrap().target_lba, d.media().target(dest, 7));
    assert_eq!(d.foreign_blocks(), 10 * bb + 7);
    assert!(d.fill_foreign(1).is_err(), "only an empty disk is aged");
    assert!(Smr::new(small(100)).unwrap().fill_foreign(u64::MAX).is_err());
}

#[test]
fn runs_are_deterministic() {
    assert_eq!(model_check(20_000, 5), model_check(20_000, 5));
    assert_ne!(model_check(20_000, 5), model_check(20_000, 6), "and depend on the workload");
}

#[test]
fn the_preset_shingles_the_atlas_into_32_mib_bands() {
    let c = atlas_10k_iv_smr();
    let d = Smr::new(c.clone()).unwrap();
    assert_eq!(d.media().band_blocks(), 8_192);
    assert_eq!(u64::from(d.media().bands()), c.bands());
    assert_eq!(c.bands(), 4_381);
    assert_eq!(d.logical_blocks(), (4_381 - 1 - 64) * 8_192);
    assert_eq!(d.free_bands(), 4_380);
}

#[test]
fn impossible_drives_and_operations_are_typed_errors() {
    let bad = |f: fn(&mut SmrConfig)| {
        let mut c = small(100);
        f(&mut c);
        Smr::new(c).unwrap_err()
    };
    assert_eq!(bad(|c| c.band_bytes = 5000), SmrConfigError::BandSize { band_bytes: 5000 });
    assert_eq!(bad(|c| c.band_bytes = 0), SmrConfigError::BandSize { band_bytes: 0 });
    assert_eq!(bad(|c| c.unshingled_bands = 0), SmrConfigError::NoUnshingledBand);
    assert_eq!(bad(|c| c.spare_bands = 1), SmrConfigError::TooFewSpares { spare_bands: 1 });
    assert!(matches!(bad(|c| c.band_bytes = 32 << 20), SmrConfigError::TooFewBands { .. }));
    assert!(matches!(bad(|c| c.hdd.rpm = 0), SmrConfigError::Hdd(_)));
    let mut d = Smr::new(small(100)).unwrap();
    let n = d.logical_blocks();
    assert!(matches!(d.write(0, n - 1, 2), Err(SmrError::OutOfRange { .. })));
    assert!(matches!(d.read(0, n, 1), Err(SmrError::OutOfRange { .. })));
    assert!(d.write(0, n - 1, 1).is_ok());
    assert!(matches!(d.media_mut().write_at(0, 1, 30, 3, None), Err(BandOpError::PastBand { .. })));
    assert!(matches!(d.media_mut().read_at(0, 999, 0, 1), Err(BandOpError::NoBand { .. })));
}

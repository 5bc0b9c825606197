//! The conventional disk alone: seek, rotation and transfer against hand-computed values
//! on a small disk, track skew that keeps sequential transfers streaming, the Atlas
//! preset's sequential and random rates in the ratio its parameters imply, a FIFO
//! actuator, determinism, and impossible disks refused.

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::*;

const MS: Nanos = 1_000_000;

/// 6,000 rpm (10 ms a revolution), 2 heads, 100 cylinders of 100 sectors then 100 of 50.
fn small() -> HddConfig {
    HddConfig {
        name: "small".into(),
        rpm: 6_000,
        sector_bytes: 512,
        heads: 2,
        zones: vec![Zone { cylinders: 100, sectors_per_track: 100 }, Zone { cylinders: 100, sectors_per_track: 50 }],
        seek: SeekCurve { track_to_track_ns: MS, average_ns: 4 * MS, full_stroke_ns: 8 * MS },
        head_switch_ns: MS / 2,
    }
}

#[test]
fn seek_is_a_plus_b_root_distance_between_its_bounds() {
    let d = Hdd::new(small()).unwrap();
    assert_eq!(d.seek_ns(0), 0);
    assert_eq!(d.seek_ns(1), MS, "a + b = track-to-track");
    // b = 3 ms / ((8/15)·√200 − 1) = 458 542.25 ns; t(100) = 1 ms + 9b.
    assert!(d.seek_ns(100).abs_diff(5_126_880) <= 1, "{}", d.seek_ns(100));
    let mut capped = small();
    capped.seek.full_stroke_ns = 5 * MS;
    let d = Hdd::new(capped).unwrap();
    assert_eq!(d.seek_ns(199), 5 * MS, "the full-stroke maximum caps the curve");
    assert_eq!(d.seek_ns(100), 5 * MS);
}

#[test]
fn mean_random_seek_matches_the_average_it_was_fitted_to() {
    let d = Hdd::new(small()).unwrap();
    let c = d.config().cylinders();
    let mut sum = 0u128;
    for from in 0..c {
        for to in 0..c {
            sum += u128::from(d.seek_ns(from.abs_diff(to)));
        }
    }
    let mean = (sum / u128::from(c * c)) as f64;
    // The continuous fit is close, not exact, on 200 discrete cylinders.
    assert!((mean / (4 * MS) as f64 - 1.0).abs() < 0.05, "mean seek {mean}");
}

#[test]
fn rotation_waits_for_the_sector_from_the_platters_angle() {
    let mut d = Hdd::new(small()).unwrap();
    // Sector 0 is under the head at time 0: no wait, 8 sectors of 100 pass in 0.8 ms.
    let a = d.access(0, 0, 8).unwrap();
    assert_eq!((a.seek_ns, a.rotate_ns, a.transfer_ns, a.done), (0, 0, 800_000, 800_000));
    // Sector 50 passes at 5 ms into the revolution: wait 4.2 ms.
    let a = d.access(800_000, 50, 8).unwrap();
    assert_eq!((a.rotate_ns, a.done), (4_200_000, 5_800_000));
    // Sector 10 passed at 1 ms; at 5.8 ms the next pass is 5.2 ms away.
    let a = d.access(5_800_000, 10, 8).unwrap();
    assert_eq!((a.rotate_ns, a.done), (5_200_000, 11_800_000));
    // Head 1 of the same cylinder: a head switch, then its skewed sector 0 (0.5 ms into
    // the revolution) is 8.2 ms away from 12.3 ms.
    let a = d.access(11_800_000, 100, 8).unwrap();
    assert_eq!((a.seek_ns, a.rotate_ns, a.done), (MS / 2, 8_200_000, 11_800_000 + 500_000 + 8_200_000 + 800_000));
    assert_eq!(d.position(), (0, 1));
}

#[test]
fn transfer_follows_the_zone() {
    let mut d = Hdd::new(small()).unwrap();
    let inner = 100 * 2 * 100; // first sector of zone 1
    assert_eq!(d.locate(inner).zone, 1);
    let a = d.access(0, inner, 8).unwrap();
    assert_eq!(a.transfer_ns, 1_600_000, "8 of 50 sectors per 10 ms");
    assert_eq!(a.seek_ns, d.seek_ns(100));
}

#[test]
fn track_skew_lets_a_sequential_read_stream() {
    let mut d = Hdd::new(small()).unwrap();
    // Four tracks from LBA 0: head switch, cylinder switch (1 ms seek), head switch, and
    // no rotational wait anywhere.
    let a = d.access(0, 0, 400).unwrap();
    assert_eq!(a.rotate_ns, 0);
    assert_eq!(a.seek_ns, MS / 2 + MS + MS / 2);
    assert_eq!(a.done, 4 * 10 * MS + 2 * MS);
    // The next request, issued as the last one ends, moves one cylinder and continues
    // without a wait.
    let b = d.access(a.done, 400, 100).unwrap();
    assert_eq!((b.rotate_ns, b.seek_ns), (0, MS));
}

#[test]
fn the_actuator_serves_one_request_at_a_time_in_order() {
    let mut d = Hdd::new(small()).unwrap();
    let first = d.access(0, 0, 8).unwrap();
    let second = d.access(0, 0, 8).unwrap();
    assert_eq!(second.start, first.done, "queued behind the first");
    assert_eq!(second.rotate_ns, 10 * MS - 800_000, "a full turn back to sector 0");
    assert_eq!(d.busy_until(), second.done);
}

/// Service rates of the Atlas preset: 1 MiB sequential reads and 4 KiB random reads.
fn atlas_rates() -> (f64, f64) {
    let mut d = Hdd::new(atlas_10k_iv_146gb()).unwrap();
    let mut t = 0;
    let start = t;
    for i in 0..256 {
        t = d.access_blocks(t, i * 256, 256).unwrap().done;
    }
    let seq_mbps = (256.0 * 1_048_576.0) / ((t - start) as f64 / 1e9) / 1e6;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let n = 4_000;
    let start = t;
    for _ in 0..n {
        t = d.access_blocks(t, rng.next_u64() % d.blocks(), 1).unwrap().done;
    }
    let rand_iops = f64::from(n) / ((t - start) as f64 / 1e9);
    (seq_mbps, rand_iops)
}

#[test]
fn sequential_and_random_rates_are_what_the_parameters_imply() {
    let c = atlas_10k_iv_146gb();
    let (seq_mbps, rand_iops) = atlas_rates();
    // Sequential: the outer zone's media rate less the switch time between tracks
    // (7 head switches and one cylinder switch per 8 revolutions).
    let rev = c.rev_ns() as f64;
    let switches = 7.0 * c.head_switch_ns as f64 + c.seek.track_to_track_ns as f64;
    let expect_seq = c.media_bytes_per_s(0) / 1e6 * (8.0 * rev) / (8.0 * rev + switches);
    assert!((seq_mbps / expect_seq - 1.0).abs() < 0.02, "sequential {seq_mbps:.1} MB/s, expected {expect_seq:.1}");
    // Random 4 KiB: average seek + half a revolution + a few sectors of transfer.
    let expect_iops = 1e9 / (c.seek.average_ns as f64 + rev / 2.0 + rev * 8.0 / 650.0);
    assert!((rand_iops / expect_iops - 1.0).abs() < 0.10, "random {rand_iops:.0} IOPS, expected {expect_iops:.0}");
    let ratio = seq_mbps / (rand_iops * 4096.0 / 1e6);
    assert!((80.0..200.0).contains(&ratio), "sequential is {ratio:.0}× random");
}

#[test]
fn the_preset_is_a_146_gb_10k_rpm_disk() {
    let c = atlas_10k_iv_146gb();
    let d = Hdd::new(c.clone()).unwrap();
    assert_eq!(c.rev_ns(), 6 * MS);
    let gb = c.capacity_bytes() as f64 / 1e9;
    assert!((146.8..148.0).contains(&gb), "{gb} GB");
    assert!((c.media_bytes_per_s(0) / 1e6 - 71.9).abs() < 0.1);
    assert!((c.media_bytes_per_s(15) / 1e6 - 40.0).abs() < 0.1);
    assert!(d.seek_ns(c.cylinders() - 1) < c.seek.full_stroke_ns);
}

#[test]
fn runs_are_deterministic() {
    assert_eq!(atlas_rates(), atlas_rates());
}

#[test]
fn impossible_disks_are_typed_errors() {
    let bad = |f: fn(&mut HddConfig)| {
        let mut c = small();
        f(&mut c);
        Hdd::new(c).unwrap_err()
    };
    assert!(matches!(bad(|c| c.rpm = 0), HddConfigError::Zero { field: "rpm", .. }));
    assert!(matches!(bad(|c| c.heads = 0), HddConfigError::Zero { field: "heads", .. }));
    assert!(matches!(bad(|c| c.zones.clear()), HddConfigError::Zero { field: "zones", .. }));
    assert!(matches!(bad(|c| c.zones[1].sectors_per_track = 0), HddConfigError::Zero { .. }));
    assert!(matches!(bad(|c| c.seek.average_ns = 9 * MS), HddConfigError::SeekOrder { .. }));
    assert!(matches!(bad(|c| c.seek.track_to_track_ns = 0), HddConfigError::SeekOrder { .. }));
    assert!(matches!(bad(|c| c.sector_bytes = 3000), HddConfigError::SectorSize { sector_bytes: 3000, .. }));
    assert!(matches!(
        bad(|c| {
            c.heads = u32::MAX;
            c.zones[0].sectors_per_track = u32::MAX;
        }),
        HddConfigError::TooLarge { .. }
    ));
    let mut d = Hdd::new(small()).unwrap();
    let end = d.sectors();
    assert_eq!(d.access(0, end - 1, 2).unwrap_err().end, end + 1);
    assert!(d.access(0, end - 1, 1).is_ok());
}

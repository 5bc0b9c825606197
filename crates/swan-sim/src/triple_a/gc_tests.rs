//! The driver with GC-active FIMMs on a small network: collections happen and cost the
//! requests that meet them, every FIMM's map stays whole (checked at the end of each run),
//! the same seed gives the same run, and each way of treating a collecting FIMM does what
//! it says.

use super::{GcConfig, TripleAConfig, TripleADriver, TripleAReport};
use crate::hot_clusters::HotClusterSpec;
use swan_core::triple_a::{AutonomicConfig, GcLaggard};
use swan_models::fabric::preset;

/// 4x8 with FIMMs of 64 erase units of 512 slots (128 MiB each).
fn config(autonomic: AutonomicConfig, seconds: f64) -> TripleAConfig {
    let mut fabric = preset("4x8").unwrap();
    fabric.fimm.blocks_per_plane = 64;
    fabric.fimm.pages_per_block = 4;
    let mut cfg = TripleAConfig::new(fabric, autonomic, seconds);
    cfg.gc = Some(GcConfig::default());
    cfg.measure_from_s = seconds / 4.0;
    cfg
}

fn run(autonomic: AutonomicConfig, seconds: f64, seed: u64) -> TripleAReport {
    let spec = HotClusterSpec { write_share: 0.5, ..HotClusterSpec::reads(2, 512) };
    TripleADriver::hot_clusters(config(autonomic, seconds), spec, seed).unwrap().run().unwrap()
}

#[test]
fn collections_run_and_cost_the_requests_that_meet_them() {
    let r = run(AutonomicConfig::non_autonomic(), 0.2, 1);
    let gc = r.gc.expect("a GC run reports its collections");
    assert!(gc.collections > 10 && gc.copied_slots > 0, "{gc:?}");
    assert!(gc.collecting_share > 0.0 && gc.collecting_share < 1.0, "{gc:?}");
    assert!(gc.requests_meeting_gc > 0 && gc.requests_meeting_gc < r.requests, "{gc:?}");
    assert!(gc.latency_meeting_gc_us > gc.latency_clear_of_gc_us, "{gc:?}");
    let (stall, sum) = (r.queue_stall_us.total, r.link_contention_us + r.storage_contention_us);
    assert!((stall - sum).abs() < 1e-6 * stall.max(1.0), "stall {stall} = link + storage {sum}");
    assert_eq!(r.label, "non-autonomic gc");
}

#[test]
fn a_seed_fixes_a_gc_run() {
    let a = serde_json::to_string(&run(AutonomicConfig::triple_a(), 0.05, 3)).unwrap();
    let b = serde_json::to_string(&run(AutonomicConfig::triple_a(), 0.05, 3)).unwrap();
    assert_eq!(a, b);
    let c = serde_json::to_string(&run(AutonomicConfig::triple_a(), 0.05, 4)).unwrap();
    assert_ne!(a, c, "another seed, another run");
}

#[test]
fn a_collecting_fimm_is_a_laggard_or_exempt_as_configured() {
    let with = |gc_laggard| AutonomicConfig { gc_laggard, ..AutonomicConfig::triple_a() };
    let laggard = run(with(GcLaggard::Laggard), 0.1, 1);
    assert!(laggard.autonomic.laggards_collecting > 0, "{:?}", laggard.autonomic);
    assert_eq!(laggard.label, "triple-a gc-laggard");
    let exempt = run(with(GcLaggard::Exempt), 0.1, 1);
    assert!(exempt.autonomic.gc_stalls_exempted > 0, "{:?}", exempt.autonomic);
    assert_eq!(exempt.autonomic.laggards_collecting, 0, "{:?}", exempt.autonomic);
}

#[test]
fn unscaled_fimms_and_bad_gc_settings_are_refused_by_name() {
    let spec = HotClusterSpec::reads(2, 8);
    let mut cfg = TripleAConfig::new(preset("4x16").unwrap(), AutonomicConfig::triple_a(), 0.1);
    cfg.gc = Some(GcConfig::default());
    let e = TripleADriver::hot_clusters(cfg, spec, 1).err().unwrap().to_string();
    assert!(e.contains("--gc") && e.contains("--blocks-per-plane"), "{e}");
    let mut cfg = config(AutonomicConfig::triple_a(), 0.1);
    cfg.gc = Some(GcConfig { over_provisioning: 0.6, ..GcConfig::default() });
    let e = TripleADriver::hot_clusters(cfg, spec, 1).err().unwrap().to_string();
    assert!(e.contains("--gc-op"), "{e}");
}

#[test]
fn untimed_collections_place_writes_out_of_place_at_no_cost() {
    let spec = HotClusterSpec { write_share: 0.5, ..HotClusterSpec::reads(2, 512) };
    let mut cfg = config(AutonomicConfig::non_autonomic(), 0.2);
    cfg.gc = Some(GcConfig { timed: false, ..GcConfig::default() });
    let free = TripleADriver::hot_clusters(cfg, spec, 1).unwrap().run().unwrap();
    let timed = run(AutonomicConfig::non_autonomic(), 0.2, 1);
    assert_eq!(free.label, "non-autonomic gc-untimed");
    let (f, t) = (free.gc.unwrap(), timed.gc.unwrap());
    // The FTL still collects (and the run checks every map whole), but no request meets a
    // collection in progress, and without the copies on the dies and bus the array is faster.
    assert!(f.collections > 10 && f.copied_slots > 0, "{f:?}");
    assert_eq!(f.requests_meeting_gc, 0, "{f:?}");
    assert!(t.requests_meeting_gc > 0, "timed collections are met: {t:?}");
    assert_eq!(f.collecting_share, 0.0, "{f:?}");
    assert!(free.iops > timed.iops, "untimed {} against timed {} IOPS", free.iops, timed.iops);
}

//! The Triple-A driver end to end on a small network: determinism, the baseline never
//! moves a page, every page stays where the map says, and migration relieves hot clusters.

use super::{TripleAConfig, TripleADriver, TripleAReport};
use crate::hot_clusters::HotClusterSpec;
use swan_core::triple_a::AutonomicConfig;
use swan_models::fabric::preset;

fn run(autonomic: AutonomicConfig, spec: HotClusterSpec, seconds: f64, seed: u64) -> TripleAReport {
    let cfg = TripleAConfig::new(preset("4x8").unwrap(), autonomic, seconds);
    TripleADriver::hot_clusters(cfg, spec, seed).unwrap().run().unwrap()
}

#[test]
fn a_seed_fixes_the_run() {
    let spec = HotClusterSpec::reads(2, 256);
    let a = serde_json::to_string(&run(AutonomicConfig::triple_a(), spec, 0.05, 7)).unwrap();
    let b = serde_json::to_string(&run(AutonomicConfig::triple_a(), spec, 0.05, 7)).unwrap();
    assert_eq!(a, b);
    let c = serde_json::to_string(&run(AutonomicConfig::triple_a(), spec, 0.05, 8)).unwrap();
    assert_ne!(a, c, "another seed, another run");
}

#[test]
fn the_non_autonomic_array_moves_nothing_and_pays_for_its_hot_clusters() {
    let r = run(AutonomicConfig::non_autonomic(), HotClusterSpec::reads(2, 1024), 0.1, 1);
    assert_eq!((r.moved_pages, r.copies, r.autonomic.extra_page_writes), (0, 0, 0));
    assert!(r.requests > 10_000, "{r:?}");
    let stall = r.queue_stall_us.total;
    let sum = r.link_contention_us + r.storage_contention_us;
    assert!((stall - sum).abs() < 1e-6 * stall.max(1.0), "stall {stall} = link + storage {sum}");
    assert!(r.link_contention_us > 10.0, "two hot clusters' buses are contended: {r:?}");
}

#[test]
fn migration_spreads_hot_data_and_lifts_throughput() {
    let spec = HotClusterSpec::reads(2, 1024);
    let migrate = AutonomicConfig { reshaping: false, ..AutonomicConfig::triple_a() };
    let base = run(AutonomicConfig::non_autonomic(), spec, 1.0, 1);
    let ta = run(migrate, spec, 1.0, 1);
    assert!(ta.autonomic.migrated_pages > 1_000, "{:?}", ta.autonomic);
    // Every migrated page is programmed once; the last few may still be on their way at the end.
    let decided = ta.autonomic.extra_page_writes;
    assert!(ta.copies <= decided && decided <= ta.copies + 64, "{} copies of {decided}", ta.copies);
    assert!(ta.iops > 1.1 * base.iops, "Triple-A {} against {} IOPS", ta.iops, base.iops);
    assert!(ta.link_contention_us < base.link_contention_us);
}

#[test]
fn without_shadow_cloning_each_migrated_page_is_read_again() {
    let spec = HotClusterSpec::reads(2, 1024);
    let cfg = AutonomicConfig { reshaping: false, shadow_cloning: false, ..AutonomicConfig::triple_a() };
    let r = run(cfg, spec, 0.1, 1);
    assert!(r.copy_reads > 0);
    assert!(r.copies <= r.copy_reads && r.copy_reads <= r.copies + u64::from(cfg.max_in_flight), "{r:?}");
}

#[test]
fn shadow_cloning_reads_no_page_again_and_reading_again_senses_each_one() {
    let spec = HotClusterSpec::reads(2, 1024);
    let migrate = AutonomicConfig { reshaping: false, ..AutonomicConfig::triple_a() };
    let shadow = run(migrate, spec, 0.1, 1);
    assert!(shadow.migration_copies.copies > 100, "{:?}", shadow.migration_copies);
    assert_eq!((shadow.copy_reads, shadow.migration_copies.extra_read_us), (0, 0.0));
    let again = run(AutonomicConfig { shadow_cloning: false, ..migrate }, spec, 0.1, 1);
    assert!(again.copy_reads >= again.migration_copies.copies && again.migration_copies.copies > 100);
    // Each extra read senses the page (tR) and crosses the hot cluster's bus, at least.
    let fimm = preset("4x8").unwrap().fimm;
    assert!(again.migration_copies.extra_read_us * 1e3 >= fimm.t_read_ns as f64, "{:?}", again.migration_copies);
    assert!(again.migration_copies.decided_to_landed_us > shadow.migration_copies.decided_to_landed_us);
}

#[test]
fn requests_are_split_into_classes_that_add_up() {
    let spec = HotClusterSpec { write_share: 0.3, ..HotClusterSpec::reads(2, 1024) };
    let r = run(AutonomicConfig::triple_a(), spec, 0.1, 1);
    let n = |name: &str| r.classes.iter().find(|c| c.class == name).unwrap_or_else(|| panic!("{name}")).requests;
    assert_eq!(n("read") + n("write"), r.requests);
    assert_eq!(n("moved page") + n("home page"), r.requests);
    assert!(n("met migration (source)") > 0 && n("met migration (target)") > 0, "{:?}", r.classes);
    assert!(n("clear of migration") < r.requests);
    assert!(n("moved page") > 0);
    // The classes' latencies weigh up to the whole's mean.
    let class = |name: &str| r.classes.iter().find(|c| c.class == name).unwrap();
    let mean =
        (class("read").mean_us * n("read") as f64 + class("write").mean_us * n("write") as f64) / r.requests as f64;
    assert!((mean - r.latency_us.mean).abs() < 1e-6 * r.latency_us.mean, "{mean} against {}", r.latency_us.mean);
    let base = run(AutonomicConfig::non_autonomic(), spec, 0.1, 1);
    assert_eq!(base.classes.iter().find(|c| c.class == "clear of migration").unwrap().requests, base.requests);
    assert_eq!(base.migration_copies.copies, 0);
}

#[test]
fn stalled_writes_are_redirected_without_extra_writes() {
    let spec = HotClusterSpec { write_share: 1.0, ..HotClusterSpec::reads(2, 1024) };
    let cfg = AutonomicConfig { migration: false, ..AutonomicConfig::triple_a() };
    let r = run(cfg, spec, 0.05, 1);
    assert!(r.redirected_writes > 0, "{r:?}");
    assert_eq!(r.copies, 0, "a write pattern has no stalled read to copy");
    assert_eq!(r.extra_writes_pct, Some(0.0));
}

#[test]
fn a_full_switch_queue_is_examined_and_its_laggards_moved() {
    use swan_core::triple_a::LaggardDetection;
    let spec = HotClusterSpec::reads(2, 1024);
    let with = |d| run(AutonomicConfig { laggard_detection: d, ..AutonomicConfig::triple_a() }, spec, 0.2, 1);
    let queue = with(LaggardDetection::Queue);
    assert!(queue.autonomic.laggards_by_queue > 0, "the hot clusters fill their switch queues: {:?}", queue.autonomic);
    assert_eq!(queue.autonomic.laggards_by_latency, 0, "{:?}", queue.autonomic);
    assert!(queue.moved_pages > 0, "{queue:?}");
    let latency = with(LaggardDetection::Latency);
    assert_eq!(latency.autonomic.laggards_by_queue, 0, "{:?}", latency.autonomic);
}

#[test]
fn bad_runs_are_refused_by_name() {
    let spec = HotClusterSpec::reads(2, 8);
    let mut cfg = TripleAConfig::new(preset("4x8").unwrap(), AutonomicConfig::triple_a(), 0.0);
    assert!(TripleADriver::hot_clusters(cfg.clone(), spec, 1).err().unwrap().to_string().contains("positive time"));
    cfg.sim_seconds = 1.0;
    cfg.spare_fraction = 1.0;
    assert!(TripleADriver::hot_clusters(cfg.clone(), spec, 1).err().unwrap().to_string().contains("spare fraction"));
    cfg.spare_fraction = 0.1;
    cfg.fabric.switches = 0;
    assert!(TripleADriver::hot_clusters(cfg, spec, 1).err().unwrap().to_string().contains("invalid fabric"));
}

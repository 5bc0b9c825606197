use super::*;
use crate::engine::{build_synthetic, RunOutput, StopRule};
use crate::runs::{run_config, sata_ssd};
use crate::workload::{Arrival, Distribution, Pattern, WorkloadSpec};
use swan_core::scheme::SchemeKind;

fn spec(preset: &str, gc: bool) -> FabricSpec {
    // 128 MiB FIMMs (16 blocks per plane of 16 pages): a quarter-GiB member fills half of
    // its cluster, so GC comes soon and maps stay small.
    FabricSpec {
        preset: preset.into(),
        gc,
        blocks_per_plane: Some(16),
        pages_per_block: Some(16),
        placement: Placement::SwitchMajor,
    }
}

fn op(kind: DevOpKind, block: u64, count: u32) -> DevOp {
    DevOp { kind, block, count, class: IoClass::User }
}

#[test]
fn a_read_crosses_the_fabric_and_pays_for_every_hop() {
    let s = spec("4x8", false);
    let mut array = FabricArray::new(&s, 2, 1 << 16, 1).unwrap();
    let done = array.submit(1, 0, op(DevOpKind::Read, 0, 1));

    // The same page read from the cluster's own port: no root complex, switch or their links.
    let config = s.config().unwrap();
    let mut alone = Fabric::new(config.clone()).unwrap();
    let local =
        alone.cluster_mut(0, 1).unwrap().submit(0, 0, FimmOp::read(page_addr(0, &config.fimm), SLOT as u32)).unwrap();
    let hops = config.root_complex.latency_ns + config.switch.latency_ns;
    assert!(
        done >= local.done + 2 * hops,
        "a read through the fabric ({done} ns) must pay the RC and switch both ways over the cluster alone ({} ns)",
        local.done
    );
    let report = array.report(done);
    assert_eq!(report.user_read.ops, 1);
    assert_eq!(report.user_read.link_contention_us, 0.0, "one request alone waits for nothing");
}

#[test]
fn two_members_behind_one_switch_contend_and_members_on_two_switches_do_not() {
    // 256 KiB to each member at once: the second waits for the first on their switch's
    // up-link only when they share it.
    let write = op(DevOpKind::Write, 0, 64);
    let alone = FabricArray::new(&spec("4x8", false), 9, 1 << 16, 1).unwrap().submit(1, 0, write);
    let mut shared = FabricArray::new(&spec("4x8", false), 9, 1 << 16, 1).unwrap();
    shared.submit(0, 0, write);
    let behind_one = shared.submit(1, 0, write);
    let mut apart = FabricArray::new(&spec("4x8", false), 9, 1 << 16, 1).unwrap();
    apart.submit(0, 0, write);
    let other_switch = apart.submit(8, 0, write);
    assert!(behind_one > alone, "member 1 behind member 0's switch: {behind_one} ns, alone {alone} ns");
    assert_eq!(other_switch, alone, "member 8 is under switch 1 and shares no link with member 0");
    let r = shared.report(behind_one);
    assert!(r.user_write.link_contention_us > 0.0, "the wait is charged to the link: {:?}", r.user_write);
}

fn spread(gc: bool) -> FabricSpec {
    FabricSpec { placement: Placement::Spread, ..spec("4x8", gc) }
}

#[test]
fn spread_members_take_one_switch_each_before_any_shares_one() {
    // 4x8: members 0-3 go to switches 0-3, member 4 back to switch 0 beside member 0.
    let write = op(DevOpKind::Write, 0, 64);
    let alone = FabricArray::new(&spread(false), 8, 1 << 16, 1).unwrap().submit(1, 0, write);
    let mut array = FabricArray::new(&spread(false), 8, 1 << 16, 1).unwrap();
    array.submit(0, 0, write);
    assert_eq!(array.submit(1, 0, write), alone, "member 1 is under switch 1");
    assert!(array.submit(4, 0, write) > alone, "member 4 shares switch 0 with member 0");
    assert_eq!(array.cluster_of(4), (0, 1));
    assert_eq!(array.report(alone).uplink_busy.len(), 4, "four switches' up-links in use");
}

#[test]
fn spread_members_collect_garbage_in_their_own_clusters() {
    // Writes to member 1 only: under spread it is cluster 0 of switch 1; switch-major would
    // have put it (and its collections) at cluster 1 of switch 0.
    // Members of half a cluster: each FIMM's map covers half its flash, so 200,000 random
    // writes overwrite it enough to collect.
    let mut array = FabricArray::new(&spread(true), 2, 1 << 16, 5).unwrap();
    let mut rng = crate::rng::SimRng::fork(5, 1);
    for i in 0..200_000u64 {
        let now = i * 2_000;
        array.wake(now);
        while array.wakeup().is_some() {}
        array.submit(1, now, op(DevOpKind::Write, rng.below(1 << 16), 1));
    }
    let gc = array.gc.as_ref().unwrap();
    gc.check().unwrap();
    assert!(gc.finish().collections > 0, "the member's FIMMs collected");
    let busy = |s: u32, c: u32| array.fabric().cluster(s, c).unwrap().fimms().iter().map(|f| f.busy_until()).max();
    assert!(busy(1, 0) > Some(0), "member 1's cluster did the work");
    assert_eq!(busy(0, 1), Some(0), "nothing was sent where switch-major would have put member 1");
}

#[test]
fn small_writes_fill_a_flash_page_before_it_is_programmed() {
    let s = spec("4x8", false);
    let mut array = FabricArray::new(&s, 1, 1 << 16, 1).unwrap();
    let page = s.config().unwrap().fimm.page_bytes as u64 / SLOT;
    // One block at a time over the first page of FIMM 0: programmed once, when full.
    for b in 0..page {
        array.submit(0, b * 1_000, op(DevOpKind::Write, b, 1));
    }
    let cluster = array.fabric().cluster(0, 0).unwrap();
    let busy = cluster.fimms()[0].busy_until();
    assert!(busy > 0, "the full page was programmed");
    assert_eq!(array.open[0], None, "no page is left open once full");
    // A flush programs a partly filled page.
    array.submit(0, 10_000, op(DevOpKind::Write, page * 4, 1));
    assert!(array.open[0].is_some());
    let flushed = array.submit(0, 20_000, op(DevOpKind::Flush, 0, 0));
    assert!(flushed > 20_000 && array.open[0].is_none());
}

fn run(kind: SchemeKind, gc: bool, seed: u64, rw: Pattern) -> RunOutput {
    let (g, n) = if matches!(kind, SchemeKind::Swan(_)) { (2, 2) } else { (1, 4) };
    let workload = WorkloadSpec {
        pattern: rw,
        read_fraction: 0.5,
        block_blocks: 1,
        block_blocks_max: 0,
        region_start: 0,
        region_blocks: 0,
        distribution: Distribution::Uniform,
        arrival: Arrival::Closed { iodepth: 32 },
    };
    let mut cfg = run_config(kind, g, n, sata_ssd(0.25, "sata850pro"), workload, 0.5, 0.0, 0.0, seed);
    cfg.array.segment_rows = 256;
    cfg.stop = StopRule { sim_seconds: Some(0.1), write_bytes: None };
    cfg.interval_ms = 10;
    cfg.fabric = Some(spec("4x8", gc));
    build_synthetic(cfg).unwrap().run(&mut |_| {}).unwrap()
}

#[test]
fn a_fabric_run_is_determined_by_its_seed() {
    for kind in [SchemeKind::Swan(swan_core::geometry::RaidLevel::Raid0), "raid5".parse().unwrap()] {
        let a = run(kind, true, 3, Pattern::RandRw);
        let b = run(kind, true, 3, Pattern::RandRw);
        let c = run(kind, true, 4, Pattern::RandRw);
        assert!(a.requests > 1_000, "{kind}: the run did something ({} requests)", a.requests);
        assert_eq!(a.fabric, b.fabric, "{kind}: same seed, same fabric figures");
        assert_eq!((a.requests, a.latencies.all.mean()), (b.requests, b.latencies.all.mean()));
        assert_ne!(a.fabric, c.fabric, "{kind}: another seed, other requests");
    }
}

#[test]
fn fimm_gc_runs_under_in_place_random_writes_and_keeps_every_map_whole() {
    let raid5: SchemeKind = "raid5".parse().unwrap();
    let out = run(raid5, true, 1, Pattern::RandWrite);
    let f = out.fabric.expect("a fabric run reports the fabric");
    let gc = f.fimm_gc.expect("GC-active FIMMs report their collections");
    assert!(gc.collections > 0 && gc.copied_slots > 0, "random overwrites make FIMMs collect and copy: {gc:?}");
    assert!(f.user_meeting_gc.ops > 0, "some user pages went to a collecting FIMM");
    assert_eq!(out.ssd_gc_copied_pages, gc.copied_slots, "member counts are the FIMMs' counts");

    // Maps checked directly, after a run of writes through the members.
    let mut array = FabricArray::new(&spec("4x8", true), 2, 1 << 14, 9).unwrap();
    let mut rng = crate::rng::SimRng::fork(9, 2);
    for i in 0..200_000u64 {
        let now = i * 2_000;
        array.wake(now);
        while array.wakeup().is_some() {}
        array.submit((i % 2) as u32, now, op(DevOpKind::Write, rng.below(1 << 14), 1));
    }
    array.gc.as_ref().unwrap().check().unwrap();
}

#[test]
fn bad_fabric_runs_are_refused_with_a_reason() {
    let err = |r: Result<FabricArray, FabricRunError>| r.err().expect("refused").to_string();
    let e = err(FabricArray::new(&spec("4x8", false), 33, 1 << 16, 1));
    assert!(e.contains("33 members") && e.contains("32 clusters"), "{e}");
    let e = err(FabricArray::new(&spec("9x9", false), 4, 1 << 16, 1));
    assert!(e.contains("--fabric 9x9") && e.contains("4x16"), "{e}");
    let e = err(FabricArray::new(&spec("4x8", true), 4, 1 << 30, 1));
    assert!(e.contains("do not fit a cluster"), "{e}");
    let zero = FabricSpec { blocks_per_plane: Some(0), ..spec("4x8", false) };
    assert!(err(FabricArray::new(&zero, 4, 1, 1)).contains("--fabric 4x8"));

    // Settings for SSD members are refused over a fabric.
    let raid0: SchemeKind = "raid0".parse().unwrap();
    let workload = WorkloadSpec {
        pattern: Pattern::RandWrite,
        read_fraction: 0.0,
        block_blocks: 1,
        block_blocks_max: 0,
        region_start: 0,
        region_blocks: 0,
        distribution: Distribution::Uniform,
        arrival: Arrival::Closed { iodepth: 1 },
    };
    let mut cfg = run_config(raid0, 1, 4, sata_ssd(0.25, "sata850pro"), workload, 0.5, 0.6, 0.0, 1);
    cfg.stop = StopRule { sim_seconds: Some(0.01), write_bytes: None };
    cfg.fabric = Some(spec("4x8", false));
    let e = build_synthetic(cfg.clone()).err().expect("aging refused").to_string();
    assert!(e.contains("--age"), "{e}");
    cfg.age_fraction = 0.0;
    assert!(crate::engine::Engine::new(cfg.clone()).is_err(), "an SSD engine refuses a fabric run");
    build_synthetic(cfg).expect("the same run without aging builds");
}

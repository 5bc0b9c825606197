//! The fabric as a whole: unloaded times are the sum of their parts, wires run at their
//! caps, full queues stall packets (credit flow control), clusters are isolated except
//! for their switch's up-link, every wait is charged once, runs are deterministic, and
//! impossible topologies are named.

use super::*;
use crate::fimm::{FimmConfigError, FimmOp, PageAddr};

fn fabric(config: FabricConfig) -> Fabric {
    Fabric::new(config).unwrap()
}

fn page(package: u32, die: u32, page: u32) -> PageAddr {
    PageAddr { package, die, page, ..PageAddr::default() }
}

fn to(switch: u32, cluster: u32, fimm: u32) -> FimmAddr {
    FimmAddr { switch, cluster, fimm }
}

/// The unloaded read of `bytes`, summed from its parts by hand: RC, request down the
/// up-link, switch, request down the endpoint link, endpoint, command, sense, local bus,
/// endpoint, data up the endpoint link, switch, data up the up-link, RC.
fn unloaded_read(c: &FabricConfig, bytes: u32) -> Nanos {
    let (p, up, ep) = (c.pcie, c.switch.uplink_lanes, c.endpoint.link_lanes);
    2 * c.root_complex.latency_ns
        + 2 * c.switch.latency_ns
        + 2 * c.endpoint.latency_ns
        + p.wire_ns(up, 0)
        + p.wire_ns(ep, 0)
        + c.fimm.t_cmd_ns
        + c.fimm.t_read_ns
        + c.endpoint.local_bus.xfer_ns(u64::from(bytes))
        + p.wire_ns(ep, bytes)
        + p.wire_ns(up, bytes)
}

/// The unloaded buffered write: data down, into the write buffer, acknowledgement up.
fn unloaded_write(c: &FabricConfig, bytes: u32) -> Nanos {
    let (p, up, ep) = (c.pcie, c.switch.uplink_lanes, c.endpoint.link_lanes);
    2 * c.root_complex.latency_ns
        + 2 * c.switch.latency_ns
        + 2 * c.endpoint.latency_ns
        + c.endpoint.write_ack_ns
        + p.wire_ns(up, bytes)
        + p.wire_ns(ep, bytes)
        + p.wire_ns(ep, 0)
        + p.wire_ns(up, 0)
}

fn assert_accounted(c: &Completion) {
    assert_eq!(c.queue_stall.total_ns(), c.link_contention_ns + c.storage_contention_ns, "{c:?}");
    assert!(c.done >= c.submitted + c.queue_stall.total_ns(), "{c:?}");
}

#[test]
fn the_4x16_preset_is_16_tib_and_every_preset_validates() {
    assert_eq!(triple_a_4x16().capacity_bytes(), 16 << 40);
    assert_eq!(preset("4x8").unwrap().capacity_bytes(), 8 << 40);
    assert_eq!(preset("4x20").unwrap().capacity_bytes(), 20 << 40);
    for name in PRESET_NAMES {
        preset(name).unwrap().validate().unwrap();
    }
    assert!(preset("4x17").is_none());
}

#[test]
fn wire_times_follow_the_pcie_figures() {
    let p = triple_a_4x16().pcie;
    // 4096 B + 28 B of TLP overhead over x4 at 985 MB/s per lane.
    assert_eq!(p.wire_ns(4, 4096), (4124 * 1000u64).div_ceil(3940));
    assert_eq!(p.wire_ns(16, 0), (32 * 1000u64).div_ceil(15_760));
    assert_eq!(p.tlps(8192), 2);
    assert_eq!(p.wire_bytes(8192), 8192 + 56);
}

#[test]
fn an_unloaded_read_is_the_sum_of_its_parts() {
    let config = triple_a_4x16();
    let mut f = fabric(config.clone());
    let c = f.submit(1_000, to(2, 7, 3), FimmOp::read(page(5, 1, 9), 4096)).unwrap();
    assert_eq!(c.latency_ns(), unloaded_read(&config, 4096));
    assert_eq!(c.latency_ns(), 124_076, "the 4x16 figure docs/triple-a.md quotes");
    assert_eq!(c.queue_stall, QueueStall::default());
    assert_eq!((c.link_contention_ns, c.storage_contention_ns), (0, 0));
}

#[test]
fn an_unloaded_write_is_acknowledged_from_the_write_buffer() {
    let config = triple_a_4x16();
    let mut f = fabric(config.clone());
    let c = f.submit(0, to(0, 0, 0), FimmOp::program(page(0, 0, 0), 4096)).unwrap();
    assert_eq!(c.latency_ns(), unloaded_write(&config, 4096));
    assert_eq!(c.latency_ns(), 3_921 + 36_700);
    // The page is programmed later: data into the buffer, over the bus, then t_prog.
    let into_buffer =
        c.done - config.endpoint.write_ack_ns - config.endpoint.latency_ns - config.pcie.wire_ns(4, 0) - 150 - 3 - 150;
    assert_eq!(c.media_done, into_buffer + 35 + 5_120 + 1_600_000);
    assert_eq!(f.busy_until(), c.media_done, "the program outlives the acknowledgement");
}

#[test]
fn without_a_write_buffer_a_write_is_acknowledged_when_programmed() {
    let mut config = triple_a_4x16();
    config.endpoint.write_buffer_entries = 0;
    let mut f = fabric(config.clone());
    let c = f.submit(0, to(0, 0, 0), FimmOp::program(page(0, 0, 0), 4096)).unwrap();
    // No buffer, no acknowledgement from it: the program's end is the answer.
    let path = unloaded_write(&config, 4096) - config.endpoint.write_ack_ns;
    assert_eq!(c.latency_ns(), path + 35 + 5_120 + 1_600_000);
    assert_eq!(c.done, c.media_done + 1_000 + 9 + 150 + 3 + 150);
}

#[test]
fn an_erase_is_acknowledged_when_the_block_is_erased() {
    let config = triple_a_4x16();
    let mut f = fabric(config.clone());
    let c = f.submit(0, to(3, 15, 3), FimmOp::erase(page(7, 1, 0))).unwrap();
    let parts = 2 * 150 + 2 * 150 + 2 * 1_000 + 2 * (3 + 9) + 35 + 3_000_000;
    assert_eq!(c.latency_ns(), parts);
}

/// `n` reads of `bytes` on distinct dies of `cluster`, all submitted at 0; returns the
/// completions.
fn burst(f: &mut Fabric, switch: u32, cluster: u32, n: u32, bytes: u32) -> Vec<Completion> {
    (0..n)
        .map(|i| {
            let (fimm, package, die) = (i % 4, (i / 4) % 8, (i / 32) % 2);
            f.submit(0, to(switch, cluster, fimm), FimmOp::read(page(package, die, i / 64), bytes)).unwrap()
        })
        .collect()
}

#[test]
fn a_saturated_local_bus_runs_at_its_cap() {
    let mut f = fabric(triple_a_4x16());
    // 64 dies sense at once; their pages leave one by one over the 800 MB/s bus.
    let done = burst(&mut f, 0, 0, 64, 16_384);
    let first = done.iter().map(|c| c.done).min().unwrap();
    let last = done.iter().map(|c| c.done).max().unwrap();
    let mb_s = 63.0 * 16_384.0 / ((last - first) as f64 / 1e9) / 1e6;
    assert!((mb_s - 800.0).abs() < 8.0, "{mb_s:.1} MB/s");
    assert_eq!(f.cluster(0, 0).unwrap().local_bus().reserved_ns(), 64 * 20_480);
    assert!(done.iter().all(|c| c.storage_contention_ns == 0), "64 distinct dies");
    assert!(done.iter().map(|c| c.link_contention_ns).max().unwrap() >= 63 * 20_480);
    done.iter().for_each(assert_accounted);
}

#[test]
fn two_clusters_on_one_switch_share_its_up_link() {
    // An x1 up-link (985 MB/s) under two clusters each reading at its bus's 800 MB/s.
    let mut config = triple_a_4x16();
    config.switch.uplink_lanes = 1;
    let span = |a: (u32, u32), b: (u32, u32)| {
        let mut f = fabric(config.clone());
        let mut all = burst(&mut f, a.0, a.1, 64, 16_384);
        all.extend(burst(&mut f, b.0, b.1, 64, 16_384));
        all.iter().for_each(assert_accounted);
        let first_data = 35 + 115_000;
        (all.iter().map(|c| c.done).max().unwrap() - first_data, f)
    };
    let (shared, f) = span((0, 0), (0, 1));
    let (apart, _) = span((0, 0), (1, 0));
    let up_ns = config.pcie.wire_ns(1, 16_384);
    // Sharing: 128 pages one after another over the x1 link.
    assert!(shared >= 128 * up_ns, "{shared} vs {}", 128 * up_ns);
    assert!(shared < 130 * up_ns, "{shared}: the up-link, not the buses, sets the pace");
    assert_eq!(f.uplink_reserved_ns(0).unwrap().1, 128 * up_ns);
    // Apart: each switch's up-link carries 64 pages, faster than one bus delivers them,
    // so the buses (64 pages × 20.48 µs) set the pace.
    assert!(apart <= 64 * 20_480 + up_ns + 20_000, "{apart}");
    assert!(shared * 2 > apart * 3, "sharing the up-link costs: {shared} vs {apart}");
}

#[test]
fn contention_on_one_clusters_bus_does_not_slow_another_cluster() {
    let config = triple_a_4x16();
    let mut f = fabric(config.clone());
    let hot = burst(&mut f, 0, 0, 64, 16_384);
    assert!(hot.iter().any(|c| c.queue_stall.endpoint_ns > 1_000_000), "cluster 0's bus is saturated");
    // Cluster 1 under the same switch: its bus, link and dies are its own.
    let cold = f.submit(0, to(0, 1, 0), FimmOp::read(page(0, 0, 0), 16_384)).unwrap();
    assert_eq!(cold.queue_stall.endpoint_ns, 0);
    assert_eq!(cold.storage_contention_ns, 0);
    // Only the switch's up-link is shared: at most one of cluster 0's pages ahead of it.
    assert!(cold.latency_ns() <= unloaded_read(&config, 16_384) + config.pcie.wire_ns(16, 16_384));
}

#[test]
fn a_full_endpoint_buffer_stalls_packets_in_the_switch_queue() {
    let mut config = triple_a_4x16();
    config.endpoint.down_buffer_entries = 2;
    let mut f = fabric(config.clone());
    // Eight reads to one die: the die serves them one by one; two wait in the endpoint,
    // the rest wait in the switch queue for a credit.
    let done: Vec<_> = (0..8).map(|_| f.submit(0, to(1, 2, 3), FimmOp::read(page(4, 0, 0), 4096)).unwrap()).collect();
    done.iter().for_each(assert_accounted);
    assert_eq!(done[0].queue_stall, QueueStall::default());
    let last = done[7];
    assert!(last.queue_stall.switch_ns > 0, "{last:?}");
    assert!(last.storage_contention_ns > last.link_contention_ns, "stalled behind a busy die: {last:?}");
    for (i, pair) in done.windows(2).enumerate() {
        assert!(pair[1].done >= pair[0].done + 115_000, "read {} overlapped on one die", i + 1);
    }
    // With room for all eight in the endpoint, nothing waits in the switch.
    config.endpoint.down_buffer_entries = 64;
    let mut f = fabric(config.clone());
    let roomy: Vec<_> = (0..8).map(|_| f.submit(0, to(1, 2, 3), FimmOp::read(page(4, 0, 0), 4096)).unwrap()).collect();
    // Only the request packets' few nanoseconds on the switch's link to the endpoint.
    assert!(roomy.iter().all(|c| c.queue_stall.switch_ns <= 8 * config.pcie.wire_ns(4, 0)), "{roomy:?}");
    assert_eq!(roomy[7].done, last.done, "the die sets the pace either way");
}

#[test]
fn a_full_write_buffer_is_storage_contention() {
    let mut config = triple_a_4x16();
    config.endpoint.write_buffer_entries = 2;
    let mut f = fabric(config.clone());
    let w: Vec<_> = (0..4).map(|i| f.submit(0, to(0, 0, 0), FimmOp::program(page(0, 0, i), 4096)).unwrap()).collect();
    let ack = config.endpoint.write_ack_ns;
    assert!(w[0].latency_ns() < ack + 5_000 && w[1].latency_ns() < ack + 10_000, "{w:?}");
    // The third waits for the first page's program to give its entry back.
    assert!(w[2].done >= w[0].media_done, "{:?}", w[2]);
    assert!(w[2].storage_contention_ns >= 1_600_000 - 10_000);
    assert_eq!(w[2].queue_stall.endpoint_ns, w[2].storage_contention_ns);
}

#[test]
fn a_write_to_a_page_whose_program_waits_joins_it() {
    // Writes to one die: page 0 programs, page 1's data waits in the cache register,
    // page 2's program waits for both, and a second write of page 2 arrives meanwhile.
    // Merging, it joins that program (the same end, no fourth program); without merging
    // it programs once more, a tPROG later.
    let run = |merging: bool| {
        let mut config = triple_a_4x16();
        config.endpoint.write_merging = merging;
        let mut f = fabric(config);
        let w: Vec<_> = [(0, 0), (1, 1), (2, 2), (2, 100_000)]
            .into_iter()
            .map(|(p, at)| f.submit(at, to(0, 0, 0), FimmOp::program(page(0, 0, p), 4096)).unwrap())
            .collect();
        assert!(w.iter().all(|c| c.latency_ns() < 50_000), "acknowledged from the buffer: {w:?}");
        assert!(w[2].issued > 100_000, "page 2's program still waits: {:?}", w[2]);
        (w[2].media_done, w[3].media_done)
    };
    let (first, second) = run(true);
    assert_eq!(first, second, "the rewrite joins the waiting program");
    let (first_alone, second_alone) = run(false);
    assert_eq!(first_alone, first);
    assert!(second_alone >= first + 1_600_000, "{second_alone} vs {first}");
}

#[test]
fn a_write_after_its_pages_program_began_programs_again() {
    // The die has taken page 0's program: a rewrite cannot join it, it queues its own.
    let mut f = fabric(triple_a_4x16());
    let a = f.submit(0, to(0, 0, 0), FimmOp::program(page(0, 0, 0), 4096)).unwrap();
    let b = f.submit(a.issued + 1, to(0, 0, 0), FimmOp::program(page(0, 0, 0), 4096)).unwrap();
    assert!(b.media_done >= a.media_done + 1_600_000, "{a:?} {b:?}");
}

#[test]
fn every_wait_is_charged_once_and_the_service_time_stays_put() {
    // A random mix on a small network with small queues: whatever the load, latency is
    // the unloaded service time plus the waits, and the waits add up both ways.
    let mut config = triple_a(2, 4);
    config.root_complex.queue_entries = 16;
    config.switch.queue_entries = 8;
    config.endpoint.down_buffer_entries = 4;
    config.endpoint.write_buffer_entries = 8;
    let mut f = fabric(config.clone());
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut now = 0;
    let mut stalled = 0;
    for _ in 0..5_000 {
        let r = swan_testkit::rng::xorshift64(&mut x);
        now += r % 3_000;
        let target = to((r >> 8) as u32 % 2, (r >> 9) as u32 % 4, (r >> 12) as u32 % 4);
        let addr = page((r >> 14) as u32 % 8, (r >> 17) as u32 % 2, (r >> 18) as u32 % 512);
        let (op, service) = if r >> 40 & 3 == 0 {
            (FimmOp::program(addr, 4096), unloaded_write(&config, 4096))
        } else {
            (FimmOp::read(addr, 4096), unloaded_read(&config, 4096))
        };
        let c = f.submit(now, target, op).unwrap();
        assert_accounted(&c);
        assert_eq!(c.service_ns(), service, "{c:?}");
        stalled += u64::from(c.queue_stall.root_complex_ns > 0);
    }
    assert!(stalled > 0, "the load filled the RC queue at least once");
    let (rc_down, _) = f.rc_queue_peaks();
    assert!(rc_down <= 16);
}

#[test]
fn runs_are_deterministic() {
    let run = |seed: u64| {
        let mut f = fabric(triple_a_4x16());
        let mut x = seed;
        (0..2_000u64)
            .map(|i| {
                let r = swan_testkit::rng::xorshift64(&mut x);
                let target = to(r as u32 % 4, (r >> 2) as u32 % 16, (r >> 6) as u32 % 4);
                let op = if r >> 50 & 1 == 0 {
                    FimmOp::read(page((r >> 8) as u32 % 8, 0, 0), 4096)
                } else {
                    FimmOp::program(page((r >> 8) as u32 % 8, 1, 0), 4096)
                };
                f.submit(i * 500, target, op).unwrap()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7), run(8));
}

#[test]
fn a_cluster_is_a_member_device_on_its_own() {
    let config = triple_a_4x16();
    let mut f = fabric(config.clone());
    let cluster = f.cluster_mut(1, 1).unwrap();
    let c = cluster.submit(0, 2, FimmOp::read(page(0, 0, 0), 4096)).unwrap();
    assert_eq!(c.latency_ns(), 2 * 1_000 + 35 + 115_000 + 5_120);
    let b = cluster.submit(0, 3, FimmOp::read(page(0, 0, 0), 4096)).unwrap();
    assert_eq!(b.link_contention_ns, 5_120, "FIMMs 2 and 3 share the cluster's bus");
    assert_eq!(b.queue_stall.endpoint_ns, 5_120);
}

#[test]
fn bad_targets_are_named() {
    let mut f = fabric(triple_a_4x16());
    let err = f.submit(0, to(4, 0, 0), FimmOp::read(page(0, 0, 0), 4096)).unwrap_err();
    assert_eq!(err, FabricOpError::NoSuch { what: "switch", index: 4, count: 4 });
    let err = f.submit(0, to(0, 16, 0), FimmOp::read(page(0, 0, 0), 4096)).unwrap_err();
    assert_eq!(err, FabricOpError::NoSuch { what: "cluster", index: 16, count: 16 });
    let err = f.submit(0, to(0, 0, 4), FimmOp::read(page(0, 0, 0), 4096)).unwrap_err();
    assert_eq!(err, FabricOpError::NoSuch { what: "FIMM", index: 4, count: 4 });
    let err = f.submit(0, to(0, 0, 0), FimmOp::read(page(0, 2, 0), 4096)).unwrap_err();
    assert!(err.to_string().contains("`die` = 2"), "{err}");
}

#[test]
fn impossible_topologies_are_named() {
    let err = |edit: &dyn Fn(&mut FabricConfig)| {
        let mut c = triple_a_4x16();
        edit(&mut c);
        Fabric::new(c).unwrap_err()
    };
    let e = err(&|c| c.switches = 0);
    assert_eq!(e, FabricConfigError::Zero { fabric: "4x16".into(), field: "switches" });
    let e = err(&|c| c.switches = 5);
    assert!(matches!(e, FabricConfigError::MoreSwitchesThanRootPorts { switches: 5, ports: 4, .. }), "{e}");
    let e = err(&|c| c.clusters_per_switch = 24);
    assert!(matches!(e, FabricConfigError::MoreClustersThanSwitchPorts { clusters: 24, ports: 24, .. }), "{e}");
    assert!(e.to_string().contains("23 downstream ports"), "{e}");
    let e = err(&|c| c.endpoint.link_lanes = 8);
    assert!(matches!(e, FabricConfigError::SwitchLanes { needed: 144, lanes: 96, .. }), "{e}");
    let e = err(&|c| c.switch.uplink_lanes = 3);
    assert!(matches!(e, FabricConfigError::LinkWidth { field: "switch.uplink_lanes", lanes: 3, .. }), "{e}");
    let e = err(&|c| c.pcie.max_payload_bytes = 8192);
    assert!(matches!(e, FabricConfigError::MaxPayload { bytes: 8192, .. }), "{e}");
    let e = err(&|c| c.endpoint.down_buffer_entries = 0);
    assert!(e.to_string().contains("endpoint.down_buffer_entries"), "{e}");
    let e = err(&|c| c.fimms_per_cluster = 0);
    assert!(e.to_string().contains("fimms_per_cluster"), "{e}");
    let e = err(&|c| c.fimm.packages = 0);
    let FabricConfigError::Fimm { source, .. } = &e else { panic!("{e}") };
    assert_eq!(source, &FimmConfigError::Zero { fimm: "fimm-64gb".into(), field: "packages" });
    let e = err(&|c| {
        c.root_complex.ports = u32::MAX;
        c.switches = u32::MAX;
        c.switch.ports = u32::MAX;
        c.switch.lanes = u32::MAX;
    });
    assert!(matches!(e, FabricConfigError::TooLarge { .. }), "{e}");
    // The paper's largest network just fits the switch: 16 + 20 × 4 = 96 lanes.
    Fabric::new(triple_a(4, 20)).unwrap();
    assert!(matches!(Fabric::new(triple_a(4, 21)).unwrap_err(), FabricConfigError::SwitchLanes { needed: 100, .. }));
}

#[test]
fn the_4x16_unloaded_times_match_table_2s_service_times() {
    // Table 2's latency − queue stall is each row's unloaded service time (63–140 µs).
    // Mixed by each row's read ratio (Table 1), the model's read and buffered write must
    // give those rows as well as the least-squares write does (the preset's
    // `write_ack_ns` is that fit), and the read must sit near web, the row of reads alone.
    const ROWS: [(f64, f64); 11] = [
        (0.765, 129.0), // cfs: read ratio, latency − stall in µs
        (0.502, 92.0),  // fin
        (0.551, 75.0),  // hm
        (0.259, 72.0),  // mds
        (0.528, 88.0),  // msnfs
        (0.971, 85.0),  // prn
        (0.291, 64.0),  // proj
        (0.611, 77.0),  // prxy
        (0.289, 70.0),  // usr
        (1.0, 140.0),   // web
        (0.543, 63.0),  // websql
    ];
    let config = triple_a_4x16();
    let service =
        |op| Fabric::new(config.clone()).unwrap().submit(0, to(0, 0, 0), op).unwrap().service_ns() as f64 / 1e3;
    let read = service(FimmOp::read(page(0, 0, 0), 4096));
    let write = service(FimmOp::program(page(0, 0, 0), 4096));
    assert!((0.85 * 140.0..=140.0).contains(&read), "{read} µs against web's 140");
    // The write that fits the rows best, given the model's read.
    let fit = ROWS.iter().map(|&(r, s)| (1.0 - r) * (s - r * read)).sum::<f64>()
        / ROWS.iter().map(|&(r, _)| (1.0 - r) * (1.0 - r)).sum::<f64>();
    assert!((write - fit).abs() < 1.0, "write {write} µs, Table 2's rows say {fit:.1}");
    let rms = |w: f64| (ROWS.iter().map(|&(r, s)| (r * read + (1.0 - r) * w - s).powi(2)).sum::<f64>() / 11.0).sqrt();
    assert!(rms(write) < 20.0 && rms(write) < 0.7 * rms(4.0), "rms {} µs (a 4 µs write: {})", rms(write), rms(4.0));
}

#[test]
fn a_migration_crosses_its_switch_only_and_stays_under_it() {
    let config = triple_a_4x16();
    let (p, ep) = (config.pcie, config.endpoint.link_lanes);
    let mut f = fabric(config.clone());
    let c = f.migrate(0, to(1, 2, 0), to(1, 9, 3), FimmOp::program(page(0, 0, 0), 4096)).unwrap();
    // Data up the source endpoint link, the switch, down the target's link, the endpoint
    // into its write buffer, the acknowledgement back up to the switch.
    let want = p.wire_ns(ep, 4096)
        + config.switch.latency_ns
        + p.wire_ns(ep, 4096)
        + 2 * config.endpoint.latency_ns
        + p.wire_ns(ep, 0)
        + config.switch.latency_ns;
    assert_eq!(c.latency_ns(), want, "a copy pays no host write's acknowledgement");
    assert_eq!(c.queue_stall, QueueStall::default());
    assert!(c.issued >= c.submitted && c.media_done > c.done, "{c:?}");
    assert_eq!(f.uplink_reserved_ns(1), Some((0, 0)), "the switch's up-link is not on the path");
    assert_eq!(f.rc_queue_peaks(), (0, 0), "nor is the root complex");
    let e = f.migrate(0, to(0, 2, 0), to(1, 9, 3), FimmOp::program(page(0, 0, 0), 4096)).unwrap_err();
    assert!(matches!(e, FabricOpError::NotAMigration { from: 0, to: 1 }), "{e}");
    assert!(f.migrate(0, to(1, 2, 0), to(1, 9, 3), FimmOp::read(page(0, 0, 0), 4096)).is_err());
}

#[test]
fn a_shadow_clone_spares_the_hot_fimm_and_bus_that_a_second_read_takes() {
    // Shadow cloning (§4.1) migrates a page already in the hot endpoint: no FIMM read, no
    // crossing of the hot cluster's local bus; only the endpoint's link up to the switch
    // carries it once more. Reading it again (Fig. 16(b)) costs a sense and a bus crossing.
    let config = triple_a_4x16();
    let (p, ep) = (config.pcie, config.endpoint.link_lanes);
    let page_bus = config.endpoint.local_bus.xfer_ns(4096);
    let (hot, cold) = (to(1, 2, 0), to(1, 9, 3));
    let mut f = fabric(config.clone());
    f.migrate(0, hot, cold, FimmOp::program(page(0, 0, 0), 4096)).unwrap();
    let source = f.cluster(1, 2).unwrap();
    assert_eq!(source.local_bus().reserved_ns(), 0, "no bus crossing in the hot cluster");
    assert!(source.fimms().iter().all(|m| m.busy_until() == 0), "no FIMM of the hot cluster works");
    assert_eq!(source.link_up.reserved_ns(), p.wire_ns(ep, 4096), "the page goes up its link once");
    assert_eq!(f.cluster(1, 9).unwrap().local_bus().reserved_ns(), page_bus, "and is programmed at the cold one");

    let mut g = fabric(config.clone());
    let read = g.cluster_mut(1, 2).unwrap().submit(0, 0, FimmOp::read(page(0, 0, 0), 4096)).unwrap();
    g.migrate(read.done, hot, cold, FimmOp::program(page(0, 0, 0), 4096)).unwrap();
    let source = g.cluster(1, 2).unwrap();
    assert_eq!(source.local_bus().reserved_ns(), page_bus, "reading again crosses the hot bus");
    assert!(source.fimms()[0].busy_until() >= config.fimm.t_read_ns, "and senses the page on its FIMM");
    assert!(read.latency_ns() >= config.fimm.t_read_ns + page_bus);
}

#[test]
fn a_stalled_read_is_issued_when_its_die_frees() {
    let mut f = fabric(triple_a_4x16());
    let a = f.submit(0, to(0, 0, 0), FimmOp::read(page(0, 0, 0), 4096)).unwrap();
    let b = f.submit(0, to(0, 0, 0), FimmOp::read(page(0, 0, 1), 4096)).unwrap();
    assert!(a.issued < b.issued, "{a:?} {b:?}");
    assert!(b.storage_contention_ns > 0 && b.issued >= a.issued + 115_000, "{b:?}");
}

#[test]
fn a_member_device_behind_an_endpoint_pays_the_path_and_its_contention() {
    let cfg = preset("4x16").unwrap();
    // Unloaded: the read's path without the FIMM's part, plus the device's own time.
    let bare =
        unloaded_read(&cfg, 4096) - cfg.fimm.t_cmd_ns - cfg.fimm.t_read_ns - cfg.endpoint.local_bus.xfer_ns(4096);
    let mut f = fabric(cfg.clone());
    let c = f.carry(0, 1, 2, 0, |at| (at + 100_000, 4096)).unwrap();
    assert_eq!(c.latency_ns(), bare + 100_000);
    assert_eq!(c.media_done - c.issued, 100_000, "the device's time is the caller's");
    assert_eq!(c.queue_stall.total_ns(), 0);
    // 256 writes of 16 KiB at once to the four clusters of switch 0's first ports: the
    // up-link and endpoint links queue them; every wait is charged once, to link or storage.
    let mut f = fabric(cfg);
    let mut last = 0;
    for i in 0..256u32 {
        let c = f.carry(0, 0, i % 4, 16_384, |at| (at + 50_000, 0)).unwrap();
        assert_eq!(c.queue_stall.total_ns(), c.link_contention_ns + c.storage_contention_ns);
        last = last.max(c.done);
    }
    assert!(last > 64 * 16_384 * 1_000 / (4 * 985), "each x4 link moves 64 × 16 KiB: {last} ns");
    assert!(f.carry(0, 4, 0, 0, |at| (at, 0)).is_err(), "no switch 4");
}

#[test]
fn a_request_that_finds_its_switch_queue_full_says_so() {
    // Reads at one instant into one cluster: the switch's queue of 8 entries takes the
    // first 8 and the rest wait at the root complex for an entry, flagged; the other
    // switch's queue stays empty, so a read there is not.
    let mut config = triple_a(2, 4);
    config.switch.queue_entries = 8;
    let mut f = fabric(config);
    let flags: Vec<bool> = (0..20)
        .map(|i| f.submit(0, to(0, 0, i % 4), FimmOp::read(page(0, 0, i), 4096)).unwrap().switch_queue_full)
        .collect();
    assert!(flags[..8].iter().all(|&full| !full), "{flags:?}");
    assert!(flags[8..].iter().all(|&full| full), "{flags:?}");
    let other = f.submit(0, to(1, 0, 0), FimmOp::read(page(0, 0, 0), 4096)).unwrap();
    assert!(!other.switch_queue_full && other.queue_stall.root_complex_ns == 0, "{other:?}");
    // Long after, the queue has drained.
    let later = f.submit(1_000_000_000, to(0, 0, 0), FimmOp::read(page(0, 0, 1), 4096)).unwrap();
    assert!(!later.switch_queue_full, "{later:?}");
}

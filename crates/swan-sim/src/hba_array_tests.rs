//! The shared bus under an array: every member's bytes cross it, one transfer at a time,
//! and it caps what the whole array moves however many SSDs there are.

use super::*;
use crate::engine::{build_synthetic, StopRule};
use crate::runs::{random_writes, run_config, sata_ssd};
use crate::workload::Pattern;
use swan_core::geometry::RaidLevel;
use swan_core::scheme::SchemeKind;
use swan_models::hba::HbaBusConfig;

fn config(members: u32, bus: Option<HbaBusConfig>) -> SimConfig {
    // 128 KiB random requests, half reads, 64 outstanding.
    let workload = crate::workload::WorkloadSpec {
        pattern: Pattern::RandRw,
        read_fraction: 0.5,
        block_blocks: 32,
        ..random_writes(64)
    };
    let mut cfg = run_config(
        SchemeKind::Raid(RaidLevel::Raid0),
        1,
        members,
        sata_ssd(0.25, "sata850pro"),
        workload,
        0.5,
        0.0,
        0.0,
        1,
    );
    cfg.array.chunk_blocks = 1;
    cfg.stop = StopRule { sim_seconds: Some(0.2), write_bytes: None };
    cfg.hba_bus = bus;
    cfg
}

fn read(block: u64) -> DevOp {
    DevOp { kind: DevOpKind::Read, block, count: 1, class: IoClass::User }
}

#[test]
fn two_members_finishing_together_cross_the_bus_one_after_the_other() {
    let bus = HbaBusConfig::DISKSIM_PCIE_X8;
    let cfg = config(2, Some(bus));
    let written = DevOp { kind: DevOpKind::Write, ..read(7) };
    let mut array = HbaArray::new(&cfg, bus, 2).unwrap();
    (0..2).for_each(|m| array.apply_untimed(m, written));
    // The same read on two idle SSDs: both finish at once, then share the bus.
    let idle = |host_mbps: u64| {
        let mut c = cfg.ssd.clone();
        c.host_mbps = host_mbps;
        let mut ssd = Ssd::new(c).unwrap();
        ssd.apply_untimed(written);
        ssd.submit(0, read(7))
    };
    let ssd_done = idle(LINK_ON_THE_BUS_MBPS);
    let a = array.submit(0, 0, read(7));
    let b = array.submit(1, 0, read(7));
    let one = bus.arbitration_ns + bus.xfer_ns(4096);
    assert_eq!(a, ssd_done + one);
    assert_eq!(b, ssd_done + 2 * one);
    assert!(idle(cfg.ssd.host_mbps) > ssd_done, "an SSD alone pays its own link; behind the bus it does not");
    assert_eq!(array.bus().busy_ns(), 2 * one);
    assert_eq!(array.busy_until(1), b, "a member is through once its data has crossed");
}

#[test]
fn a_trim_moves_no_data_over_the_bus() {
    let bus = HbaBusConfig::DISKSIM_PCIE_X8;
    let mut array = HbaArray::new(&config(1, Some(bus)), bus, 1).unwrap();
    array.submit(0, 0, DevOp { kind: DevOpKind::Trim, block: 0, count: 64, class: IoClass::User });
    assert_eq!(array.bus().busy_ns(), 0);
}

#[test]
fn the_bus_caps_what_the_whole_array_moves() {
    // 64 outstanding 128 KiB requests on 8 SSDs move far more than 100 MB/s on their own
    // links; behind a 100 MB/s bus they move at most that.
    let mb_per_s = |cfg: SimConfig| {
        let out = build_synthetic(cfg).unwrap().run(&mut |_| {}).unwrap();
        let bytes = (out.user_write_blocks + out.user_read_blocks) * 4096;
        bytes as f64 / (out.sim_ns as f64 / 1e9) / 1e6
    };
    let own = mb_per_s(config(8, None));
    let capped = mb_per_s(config(8, Some(HbaBusConfig { mbps: 100, arbitration_ns: 0 })));
    assert!(own > 300.0, "own links: {own:.0} MB/s");
    assert!(capped <= 101.0 && capped > 80.0, "behind a 100 MB/s bus: {capped:.0} MB/s");
}

#[test]
fn a_fabric_and_a_bus_together_are_refused() {
    let mut cfg = config(2, Some(HbaBusConfig::DISKSIM_PCIE_X8));
    cfg.fabric = Some(crate::fabric_array::FabricSpec {
        preset: "4x16".into(),
        gc: false,
        blocks_per_plane: None,
        pages_per_block: None,
        placement: Default::default(),
    });
    let e = build_synthetic(cfg).err().expect("refused").to_string();
    assert!(e.contains("HBA bus"), "{e}");
}

#[test]
fn a_member_queue_lets_depth_operations_out_and_the_rest_go_as_they_complete() {
    // Depth 2, six reads handed to one SSD at once: two go now, each other one when an
    // earlier one completes, oldest first, timed from then; every one is reported once.
    let mut cfg = config(2, Some(HbaBusConfig::DISKSIM_PCIE_X8));
    cfg.member_queue = Some(2);
    let mut a = HbaArray::new(&cfg, HbaBusConfig::DISKSIM_PCIE_X8, 2).unwrap();
    let first: Vec<Completion> = (0..6).map(|i| a.submit_tracked(0, 0, read(i * 64), i)).collect();
    assert!(matches!(first[0], Completion::At(_)) && matches!(first[1], Completion::At(_)), "{first:?}");
    assert!(first[2..].iter().all(|c| *c == Completion::Later), "{first:?}");
    // Another member's queue is its own.
    assert!(matches!(a.submit_tracked(1, 0, read(0), 9), Completion::At(_)));
    let mut reported = Vec::new();
    while let Some(at) = a.wakeup() {
        a.wake(at);
        while let Some(d) = a.completed() {
            assert_eq!((d.member, d.at), (0, at));
            reported.push(d);
        }
    }
    assert_eq!(reported.iter().map(|d| d.token).collect::<Vec<_>>(), vec![2, 3, 4, 5]);
    let Completion::At(t0) = first[0] else { unreachable!() };
    assert!(reported[0].at >= t0, "it went only when room was made");
    assert!(reported.windows(2).all(|p| p[1].at >= p[0].at));
}

#[test]
fn a_member_queue_needs_the_bus_and_room_for_one() {
    let mut cfg = config(2, None);
    cfg.member_queue = Some(20);
    assert!(build_synthetic(cfg.clone()).err().unwrap().to_string().contains("--hba-bus"));
    cfg.hba_bus = Some(HbaBusConfig::DISKSIM_PCIE_X8);
    cfg.member_queue = Some(0);
    assert!(build_synthetic(cfg).err().unwrap().to_string().contains("at least one"));
}

#[test]
fn a_requests_operations_on_one_member_are_one_entry_of_its_queue() {
    // Depth 1: the three reads one request (token 7) has on member 0 go together; the next
    // request's waits for them all, and goes with all of its own.
    let mut cfg = config(2, Some(HbaBusConfig::DISKSIM_PCIE_X8));
    cfg.member_queue = Some(1);
    let mut a = HbaArray::new(&cfg, HbaBusConfig::DISKSIM_PCIE_X8, 2).unwrap();
    let first: Vec<Completion> = (0..3).map(|i| a.submit_tracked(0, 0, read(i * 64), 7)).collect();
    assert!(first.iter().all(|c| matches!(c, Completion::At(_))), "{first:?}");
    let last = first.iter().map(|c| if let Completion::At(t) = c { *t } else { 0 }).max().unwrap();
    assert_eq!(a.submit_tracked(0, 0, read(512), 8), Completion::Later);
    assert_eq!(a.submit_tracked(0, 0, read(576), 8), Completion::Later);
    let at = a.wakeup().expect("a wake-up when the first request is through");
    assert_eq!(at, last);
    a.wake(at);
    let went: Vec<_> = std::iter::from_fn(|| a.completed()).collect();
    assert_eq!(went.iter().map(|d| (d.token, d.at)).collect::<Vec<_>>(), vec![(8, last), (8, last)]);
}

/// The order a depth-1 queue lets four waiting requests out in, after one at block 200.
fn let_out(order: crate::engine::QueueOrder) -> Vec<u64> {
    let mut cfg = config(2, Some(HbaBusConfig::DISKSIM_PCIE_X8));
    (cfg.member_queue, cfg.member_queue_order) = (Some(1), order);
    let mut a = HbaArray::new(&cfg, HbaBusConfig::DISKSIM_PCIE_X8, 2).unwrap();
    assert!(matches!(a.submit_tracked(0, 0, read(200), 1), Completion::At(_)));
    for (token, block) in [(2, 500), (3, 100), (4, 300), (5, 50)] {
        assert_eq!(a.submit_tracked(0, 0, read(block), token), Completion::Later);
    }
    let mut blocks = Vec::new();
    while let Some(at) = a.wakeup() {
        a.wake(at);
        blocks.extend(std::iter::from_fn(|| a.completed()).map(|d| [0, 200, 500, 100, 300, 50][d.token as usize]));
    }
    blocks
}

#[test]
fn a_member_queue_lets_requests_out_by_cycle_lbn_as_disksim_or_in_arrival_order() {
    use crate::engine::QueueOrder;
    // CYCLE_LBN: upwards from the last block let out, then round from the lowest.
    assert_eq!(let_out(QueueOrder::CycleLbn), vec![300, 500, 50, 100]);
    assert_eq!(let_out(QueueOrder::Fcfs), vec![500, 100, 300, 50]);
    assert_eq!(QueueOrder::default(), QueueOrder::CycleLbn, "the SSD extension's configurations set policy 3");
}

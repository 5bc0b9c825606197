//! Log-structured arrays over zoned SSDs: each scheme runs through GC with the device model
//! refusing any write off a zone's write pointer (a panic fails the test), segments come
//! back by zone resets, nothing copies inside the drives, and what cannot run on zones is
//! refused with its reason.

use super::*;
use crate::engine::{build_synthetic, AppendGroups, RunOutput, StopRule, ZonedSpec};
use crate::runs::{random_writes, run_config, sata_ssd};
use crate::zone_lock::ZoneLocks;
use swan_core::geometry::RaidLevel;
use swan_core::scheme::SchemeKind;
use swan_models::zns::presets::{pm1731a, zn540};
use swan_models::zns::ZnsConfig;

/// `kind` over `rgroups` × 2 zoned SSDs like `zoned` with `zones` zones each, one segment
/// per zone, 8 KiB random writes over 60 % of the volume until twice the raw capacity
/// is written.
fn config(kind: SchemeKind, rgroups: u32, zoned: ZnsConfig, zones: u32) -> SimConfig {
    let zoned = zoned.with_zones(zones);
    let segment = zoned.zones.capacity_blocks;
    let mut cfg = run_config(kind, rgroups, 2, sata_ssd(0.25, "sata850pro"), random_writes(32), 0.6, 0.0, 2.0, 1);
    cfg.array.member_blocks = u64::from(zones) * segment;
    cfg.array.segment_rows = segment as u32;
    cfg.array.tuning.zoned_members = true;
    cfg.workload.region_blocks = cfg.array.build().expect("a valid array").volume_blocks() * 6 / 10;
    let raw = u64::from(rgroups) * 2 * cfg.array.member_blocks * 4096;
    cfg.stop = StopRule { sim_seconds: None, write_bytes: Some(2 * raw) };
    cfg.zoned = Some(ZonedSpec::one_zone_per_segment(zoned));
    cfg
}

fn run(cfg: SimConfig) -> RunOutput {
    build_synthetic(cfg).expect("a valid run").run(&mut |_| {}).expect("the run completes")
}

#[test]
fn every_log_structured_scheme_runs_through_gc_on_zones_freed_by_resets() {
    for kind in [
        SchemeKind::LogRaid(RaidLevel::Raid0),
        SchemeKind::LogRaid(RaidLevel::Raid5),
        SchemeKind::Swan(RaidLevel::Raid0),
        SchemeKind::Swan(RaidLevel::Raid5),
    ] {
        for primitive in [ZonePrimitive::Append, ZonePrimitive::Write] {
            let mut cfg = config(kind, 3, pm1731a(), 12);
            cfg.zoned.as_mut().unwrap().primitive = primitive;
            let out = run(cfg);
            assert!(out.counters.victims > 20, "{kind}: GC barely ran ({} victims)", out.counters.victims);
            assert!(out.ssd_erases > 0, "{kind}: no zone was reset");
            assert_eq!(out.ssd_gc_copied_pages, 0, "{kind}: a zoned SSD copied pages on its own");
            assert_eq!(out.nand_program_pages, out.ssd_host_write_pages, "{kind}: device WAF is 1");
        }
    }
}

#[test]
fn raizn_logs_partial_parity_in_zones_of_its_own_on_top_of_lograid5s_writes() {
    // 8 KiB writes over 6 SSDs (5 data blocks a row) nearly always leave their row partly
    // filled, so RAIZN logs a header and a parity block for each: about one member block more
    // per user block than Log-RAID5 writes, in zones the drive resets as the log moves on.
    for primitive in [ZonePrimitive::Append, ZonePrimitive::Write] {
        let waf = |raizn: bool| {
            let mut cfg = config(SchemeKind::LogRaid(RaidLevel::Raid5), 3, pm1731a(), 14);
            cfg.array.tuning.partial_parity_log = raizn;
            cfg.workload.region_blocks = cfg.array.build().unwrap().volume_blocks() * 6 / 10;
            cfg.zoned.as_mut().unwrap().primitive = primitive;
            let out = run(cfg);
            assert!(out.counters.victims > 10, "raizn {raizn}: GC barely ran");
            assert_eq!(out.ssd_gc_copied_pages, 0);
            out.member_write_blocks as f64 / out.user_write_blocks as f64
        };
        let (lograid5, raizn) = (waf(false), waf(true));
        assert!(
            raizn - lograid5 > 0.8 && raizn - lograid5 < 1.2,
            "{primitive:?}: Log-RAID5 {lograid5:.3}, RAIZN {raizn:.3}"
        );
    }
}

#[test]
fn zapraid_appends_in_groups_through_gc_each_append_where_the_scheme_planned_it() {
    // Small groups and few appends in flight, so that groups drain and appends wait all
    // through the run, GC's among them; an append off its planned block panics.
    let mut cfg = config(SchemeKind::LogRaid(RaidLevel::Raid5), 3, pm1731a(), 12);
    cfg.zoned.as_mut().unwrap().groups = Some(AppendGroups { stripes: 16, in_flight: 4 });
    assert_eq!(cfg.scheme_label(), "zapraid");
    let out = run(cfg);
    assert!(out.counters.victims > 20, "GC barely ran ({} victims)", out.counters.victims);
    assert!(out.ssd_erases > 0, "no zone was reset");
    assert_eq!(out.nand_program_pages, out.ssd_host_write_pages, "device WAF is 1");
}

#[test]
fn one_open_zone_per_ssd_writes_at_one_zones_rate() {
    // SWAN0 writes one segment, a zone on each of its front-end R-group's two SSDs: on the
    // small-zone drive that is two dies; on the large-zone drive, two whole drives, each
    // taking a 4 KiB half of every 8 KiB write as fast as its controller takes them in
    // (132 k appends a second, 4 KiB at a time: 541 MB/s) or, by Zone Write, one at a time
    // (4 KiB per 11.4 µs: 359 MB/s).
    let mbps = |out: &RunOutput| out.user_write_blocks as f64 * 4096.0 / out.sim_ns as f64 * 1e3;
    let small = run(config(SchemeKind::Swan(RaidLevel::Raid0), 3, pm1731a(), 12));
    assert!((80.0..100.0).contains(&mbps(&small)), "swan0 over pm1731a: {:.1} MB/s", mbps(&small));
    for (primitive, want) in [(ZonePrimitive::Append, 2.0 * 541.0), (ZonePrimitive::Write, 2.0 * 359.0)] {
        let mut large = config(SchemeKind::Swan(RaidLevel::Raid0), 3, zn540(), 4);
        large.zoned.as_mut().unwrap().primitive = primitive;
        large.stop = StopRule { sim_seconds: Some(1.0), write_bytes: None };
        let got = mbps(&run(large));
        assert!((got - want).abs() < want * 0.03, "swan0 over zn540 by {primitive:?}: {got:.0} MB/s");
    }
}

#[test]
fn a_segment_over_several_small_zones_writes_on_that_many_dies_and_gc_keeps_their_order() {
    // SWAN0 and SWAN5 with each segment over 8 zones (8 dies) of every SSD, through GC.
    let mbps = |out: &RunOutput| out.user_write_blocks as f64 * 4096.0 / out.sim_ns as f64 * 1e3;
    let striped = |kind| {
        let mut cfg = config(kind, 3, pm1731a(), 48);
        let spec = cfg.zoned.as_mut().unwrap();
        (spec.zones_per_segment, spec.stripe_blocks) = (8, 1);
        cfg.array.segment_rows *= 8;
        cfg.array.member_blocks = 6 * u64::from(cfg.array.segment_rows);
        cfg.workload.region_blocks = cfg.array.build().unwrap().volume_blocks() * 6 / 10;
        cfg.stop.write_bytes = Some(6 * cfg.array.member_blocks * 4096 * 3 / 2);
        run(cfg)
    };
    let swan0 = striped(SchemeKind::Swan(RaidLevel::Raid0));
    assert!(swan0.counters.victims > 5 && swan0.ssd_erases > 0, "{} victims", swan0.counters.victims);
    // Two SSDs × 8 dies × 45 MB/s, page by page over the dies (64 blocks in flight).
    assert!((500.0..760.0).contains(&mbps(&swan0)), "swan0, 8 zones a segment: {:.0} MB/s", mbps(&swan0));
    let swan5 = striped(SchemeKind::Swan(RaidLevel::Raid5));
    assert!(swan5.counters.victims > 5, "swan5: {} victims", swan5.counters.victims);
}

#[test]
fn in_place_raid_and_the_ssds_own_gc_settings_are_refused_over_zones() {
    let refused = |cfg: SimConfig| build_synthetic(cfg).err().expect("refused").to_string();
    let e = refused(config(SchemeKind::Raid(RaidLevel::Raid5), 1, pm1731a(), 12));
    assert!(e.contains("updates blocks in place"), "{e}");
    let mut aged = config(SchemeKind::Swan(RaidLevel::Raid0), 3, pm1731a(), 12);
    aged.age_fraction = 0.5;
    assert!(refused(aged).contains("--prefill"));
    let mut unordered = config(SchemeKind::LogRaid(RaidLevel::Raid5), 3, pm1731a(), 12);
    unordered.array.tuning.zoned_members = false;
    assert!(refused(unordered).contains("block order"));
    let mut big = config(SchemeKind::Swan(RaidLevel::Raid0), 3, pm1731a(), 12);
    big.array.segment_rows *= 2;
    assert!(refused(big).contains("does not fit a pm1731a zone"));
    let mut odd = config(SchemeKind::Swan(RaidLevel::Raid0), 3, pm1731a(), 12);
    odd.zoned.as_mut().unwrap().zones_per_segment = 5;
    assert!(refused(odd).contains("not whole rows of 5 zones"));
    let mut wide = config(SchemeKind::Swan(RaidLevel::Raid0), 3, zn540(), 20);
    let spec = wide.zoned.as_mut().unwrap();
    (spec.zones_per_segment, spec.stripe_blocks) = (5, 1);
    wide.array.segment_rows *= 5;
    wide.array.member_blocks = 4 * u64::from(wide.array.segment_rows);
    let e = refused(wide);
    assert!(e.contains("keep up to 15 zones active on an SSD") && e.contains("allows 14"), "{e}");
}

/// An array of one zn540 with `zones` zones of one segment each, writing by `primitive`.
fn one_member(primitive: ZonePrimitive, zones: u32) -> ZonedArray {
    let zoned = zn540().with_zones(zones);
    let segment = zoned.zones.capacity_blocks;
    let layout = Layout { segment, k: 1, unit: segment, zone_blocks: zoned.zones.zone_blocks };
    let zone_done = vec![0; zones as usize];
    let member = ZonedMember { ssd: ZnsSsd::new(zoned).unwrap(), layout, primitive, zone_done, groups: None };
    ZonedArray { members: vec![member], locks: ZoneLocks::default() }
}

/// [`one_member`] appending under ZapRAID's group layout.
fn one_member_in_groups(groups: AppendGroups, zones: u32) -> ZonedArray {
    let mut a = one_member(ZonePrimitive::Append, zones);
    a.members[0].groups = Some(GroupedAppends::new(groups, zones));
    a
}

fn write(block: u64, count: u32) -> DevOp {
    DevOp { kind: DevOpKind::Write, block, count, class: IoClass::User }
}

/// Runs the array's own wake-ups to the end, as the engine does: every completion it
/// reports, (token, time), in the order reported.
fn drain(a: &mut ZonedArray) -> Vec<(u64, Nanos)> {
    let mut reported = Vec::new();
    while let Some(at) = a.wakeup() {
        a.wake(at);
        while let Some(d) = a.completed() {
            assert!(d.done >= at && d.at == at, "reported after it completed");
            reported.push((d.token, d.done));
        }
    }
    assert!(a.locks.idle());
    reported
}

#[test]
fn zone_write_keeps_one_write_per_zone_in_flight_and_zone_append_many() {
    // Four 4 KiB writes handed over at once: by Zone Write, the first goes to the drive and
    // each next one when the one before it completes, 11.4 µs apart.
    let mut w = one_member(ZonePrimitive::Write, 2);
    let Completion::At(alone) = w.submit_tracked(0, 0, write(0, 1), 0) else { panic!("the first write was held") };
    assert!((11_350..11_450).contains(&alone), "{alone} ns");
    for token in 1..4 {
        assert_eq!(w.submit_tracked(0, 0, write(token, 1), token), Completion::Later);
    }
    // Another zone's write is not held behind zone 0's: it waits only for the controller
    // to take in the first command (5.38 µs).
    let Completion::At(other) = w.submit_tracked(0, 0, write(w.members[0].layout.segment, 1), 9) else {
        panic!("another zone's write was held")
    };
    assert_eq!(other, alone + 5_380);
    let reported = drain(&mut w);
    assert_eq!(reported, vec![(1, 2 * alone), (2, 3 * alone), (3, 4 * alone)]);
    assert_eq!(w.members[0].ssd.zone_stats().appends, 0);
    assert_eq!(w.members[0].ssd.zones().zone(0).write_pointer, 4);

    // By Zone Append they are in flight together, one taken in per 7.57 µs, each longer
    // alone than a write (14.8 µs against 11.4), and they land where the plan put them (else
    // the adapter panics).
    let mut a = one_member(ZonePrimitive::Append, 2);
    let appended: Vec<Nanos> = (0..4)
        .map(|i| match a.submit_tracked(0, 0, write(i, 1), i) {
            Completion::At(t) => t,
            Completion::Later => panic!("an append was held"),
        })
        .collect();
    assert!((14_750..14_850).contains(&appended[0]), "{appended:?}");
    assert!(appended.windows(2).all(|p| p[1] - p[0] == 7_570), "{appended:?}");
    assert!(appended[3] < 4 * alone, "in flight together: {appended:?}");
    assert_eq!(a.members[0].ssd.zone_stats().appends, 4);
    assert!(drain(&mut a).is_empty());
}

#[test]
fn a_zone_is_finished_after_its_last_write_completes_and_a_reset_follows_it() {
    // A zone whose segment share is shorter than its capacity is finished when the share is
    // written, once its last write has gone to the drive.
    let mut w = one_member(ZonePrimitive::Write, 2);
    w.members[0].layout.segment = 4;
    for token in 0..4 {
        w.submit_tracked(0, 0, write(token, 1), token);
    }
    assert_eq!(w.members[0].ssd.zone_stats().finishes, 0, "finished with writes waiting");
    let last = drain(&mut w).last().unwrap().1;
    assert_eq!(w.members[0].ssd.zone_stats().finishes, 1);
    let reset = w.submit(0, last, DevOp { kind: DevOpKind::Trim, block: 0, count: 4, class: IoClass::Gc });
    assert!(reset > last);
    assert_eq!(w.members[0].zone_done[0], 0, "the next segment's first write goes at once");
}

/// One zone of one zn540 written 4 KiB at a time by a closed loop `depth` deep, the array's
/// wake-ups and completions run as the engine runs them: MiB/s.
fn one_zone_closed_loop(primitive: ZonePrimitive, depth: u64) -> f64 {
    closed_loop(one_member(primitive, 1), depth)
}

fn closed_loop(mut a: ZonedArray, depth: u64) -> f64 {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    const WRITES: u64 = 4000;
    // (time, token or u64::MAX for a wake-up), earliest first.
    let mut events = BinaryHeap::new();
    let (mut next, mut completed, mut end) = (0u64, 0u64, 0);
    let submit = |a: &mut ZonedArray, events: &mut BinaryHeap<Reverse<(Nanos, u64)>>, now: Nanos, next: &mut u64| {
        if let Completion::At(t) = a.submit_tracked(0, now, write(*next, 1), *next) {
            events.push(Reverse((t, *next)));
        }
        *next += 1;
        while let Some(t) = a.wakeup() {
            events.push(Reverse((t, u64::MAX)));
        }
    };
    for _ in 0..depth {
        submit(&mut a, &mut events, 0, &mut next);
    }
    while let Some(Reverse((now, token))) = events.pop() {
        if token == u64::MAX {
            a.wake(now);
            while let Some(d) = a.completed() {
                events.push(Reverse((d.done, d.token)));
            }
            while let Some(t) = a.wakeup() {
                events.push(Reverse((t, u64::MAX)));
            }
            continue;
        }
        completed += 1;
        end = now;
        if completed == WRITES {
            break;
        }
        if next < WRITES {
            submit(&mut a, &mut events, now, &mut next);
        }
    }
    (WRITES * 4096) as f64 / 1048576.0 * 1e9 / end as f64
}

#[test]
fn zone_write_adds_nothing_with_depth_in_one_zone() {
    // One zone, 4 KiB writes, as SPDK issues Zone Writes: one in flight, 4 KiB per 11.4 µs,
    // however deep the loop (the characterisation's 333 MiB/s).
    for depth in [1, 4, 32] {
        let rate = one_zone_closed_loop(ZonePrimitive::Write, depth);
        assert!((rate - 343.0).abs() < 5.0, "depth {depth}: {rate:.0} MiB/s");
    }
}

#[test]
fn random_writes_over_zones_keep_one_in_flight_per_zone_and_each_completes_once() {
    // 3,000 writes of 1–4 blocks to 4 zones, arriving every 0–8 µs, run as the engine runs
    // the array: each write completes exactly once, no sooner than a write alone takes, and
    // a zone's writes complete one after another in the order they came (one in flight).
    use std::cmp::Reverse;
    use std::collections::{BinaryHeap, HashMap};
    const WRITES: u64 = 3000;
    const ZONES: u32 = 4;
    let mut rng = crate::rng::SimRng::new(7);
    let mut a = one_member(ZonePrimitive::Write, ZONES);
    let segment = a.members[0].layout.segment;
    // Events: (time, 0 = a wake-up / 1 = a completion / 2 = an arrival, token).
    let mut events = BinaryHeap::new();
    let mut t = 0;
    let mut ops = Vec::new();
    let mut next_block = [0u64; ZONES as usize];
    for token in 0..WRITES {
        t += rng.below(8_000);
        let zone = rng.below(u64::from(ZONES)) as u32;
        let n = 1 + rng.below(4) as u32;
        ops.push((t, zone, u64::from(zone) * segment + next_block[zone as usize], n));
        next_block[zone as usize] += u64::from(n);
        events.push(Reverse((t, 2u8, token)));
    }
    let mut done: HashMap<u64, Nanos> = HashMap::new();
    let complete = |token: u64, at: Nanos, done: &mut HashMap<u64, Nanos>| {
        assert!(done.insert(token, at).is_none(), "write {token} completed twice");
    };
    while let Some(Reverse((now, kind, token))) = events.pop() {
        match kind {
            2 => {
                let (_, _, block, n) = ops[token as usize];
                if let Completion::At(at) = a.submit_tracked(0, now, write(block, n), token) {
                    complete(token, at, &mut done);
                }
            }
            0 => {
                a.wake(now);
                while let Some(d) = a.completed() {
                    assert!(d.done >= now && d.at == now);
                    complete(d.token, d.done, &mut done);
                }
            }
            _ => unreachable!(),
        }
        while let Some(at) = a.wakeup() {
            events.push(Reverse((at, 0, 0)));
        }
    }
    assert_eq!(done.len() as u64, WRITES, "every write completes");
    assert!(a.locks.idle());
    let mut last = [0; ZONES as usize];
    for (token, &(arrived, zone, _, _)) in ops.iter().enumerate() {
        let at = done[&(token as u64)];
        assert!(at >= arrived + 11_000, "write {token} took {} ns", at - arrived);
        // It reached the drive once the zone's last write completed, and took a write's time.
        assert!(at >= last[zone as usize] + 11_000, "write {token} was in flight beside its zone's last");
        last[zone as usize] = at;
    }
    for zone in 0..ZONES {
        assert_eq!(a.members[0].ssd.zones().zone(zone).write_pointer, next_block[zone as usize]);
    }
}

#[test]
fn appends_in_groups_go_as_one_at_a_time_when_a_group_is_one_stripe_and_together_when_large() {
    // A group of one stripe drains before the next: appends one at a time, 4 KiB per
    // 14.8 µs (the drive's measured 257 MiB/s at depth one). ZapRAID's 256 stripes with 16
    // in flight keep the drive at its 132 k appends a second (516 MiB/s), as plain appends do.
    let one = closed_loop(one_member_in_groups(AppendGroups { stripes: 1, in_flight: 16 }, 1), 32);
    assert!((one - 264.0).abs() < 4.0, "groups of one stripe: {one:.0} MiB/s");
    let plain = one_zone_closed_loop(ZonePrimitive::Append, 32);
    let zapraid = closed_loop(one_member_in_groups(AppendGroups::ZAPRAID, 1), 32);
    assert!((plain - 516.0).abs() < 5.0, "plain appends: {plain:.0} MiB/s");
    assert!(zapraid <= plain && zapraid > 0.97 * plain, "ZapRAID's groups {zapraid:.0}, plain {plain:.0} MiB/s");
}

#[test]
fn random_appends_in_groups_keep_each_group_apart_and_the_limit_in_flight() {
    // 3,000 one-block appends to 4 zones, arriving every 0–8 µs, in groups of 8 stripes with
    // 3 in flight: each completes once; none goes to the drive before every append of its
    // zone's earlier groups has completed, or beside 3 others of its zone in flight.
    use std::cmp::Reverse;
    use std::collections::{BinaryHeap, HashMap};
    const WRITES: u64 = 3000;
    const ZONES: u32 = 4;
    let groups = AppendGroups { stripes: 8, in_flight: 3 };
    let mut rng = crate::rng::SimRng::new(11);
    let mut a = one_member_in_groups(groups, ZONES);
    let segment = a.members[0].layout.segment;
    let mut events = BinaryHeap::new();
    let (mut t, mut ops, mut next_block) = (0, Vec::new(), [0u64; ZONES as usize]);
    for token in 0..WRITES {
        t += rng.below(8_000);
        let zone = rng.below(u64::from(ZONES)) as u32;
        ops.push((t, zone, next_block[zone as usize]));
        next_block[zone as usize] += 1;
        events.push(Reverse((t, 1u8, token)));
    }
    // token -> (went to the drive, completed)
    let mut went: HashMap<u64, (Nanos, Nanos)> = HashMap::new();
    while let Some(Reverse((now, kind, token))) = events.pop() {
        if kind == 1 {
            let (_, zone, offset) = ops[token as usize];
            if let Completion::At(done) = a.submit_tracked(0, now, write(u64::from(zone) * segment + offset, 1), token)
            {
                assert!(went.insert(token, (now, done)).is_none());
            }
        } else {
            a.wake(now);
            while let Some(d) = a.completed() {
                assert!(went.insert(d.token, (d.at, d.done)).is_none(), "append {} completed twice", d.token);
            }
        }
        while let Some(at) = a.wakeup() {
            events.push(Reverse((at, 0, 0)));
        }
    }
    assert_eq!(went.len() as u64, WRITES, "every append completes");
    assert!(a.locks.idle());
    let group = |offset: u64| offset / u64::from(groups.stripes);
    for (token, &(_, zone, offset)) in ops.iter().enumerate() {
        let (start, _) = went[&(token as u64)];
        let zone_ops = ops.iter().enumerate().filter(|(_, o)| o.1 == zone);
        let mut in_flight = 0;
        for (other, &(_, _, o)) in zone_ops {
            let (s, d) = went[&(other as u64)];
            if group(o) < group(offset) {
                assert!(
                    d <= start,
                    "append {token} (group {}) went at {start} before {other} completed at {d}",
                    group(offset)
                );
            }
            in_flight += u32::from(s <= start && start < d);
        }
        assert!(in_flight <= groups.in_flight, "append {token} went with {in_flight} of its zone in flight");
    }
    assert!(went.values().any(|&(s, _)| ops.iter().any(|o| o.0 < s)), "nothing ever waited: the test is too easy");
}

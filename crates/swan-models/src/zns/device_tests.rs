use super::*;
use crate::zns::presets::{pm1731a, zn540, zns_preset, ZNS_PRESET_NAMES};
use crate::zns::{ZoneCondition, ZoneGeometry};

const USER: IoClass = IoClass::User;

fn device(config: ZnsConfig) -> ZnsSsd {
    ZnsSsd::new(config.with_zones(64)).unwrap()
}

/// MB/s (10^6 B/s) of `bytes` over `ns`.
fn mbps(bytes: u64, ns: Nanos) -> f64 {
    bytes as f64 * 1e3 / ns as f64
}

/// Writes `requests` requests of `pages` in each of `zones` zones, each zone a closed loop
/// of depth one (Linux's zoned write lock allows no more), interleaved in time order.
/// Returns the elapsed time.
fn write_zones(d: &mut ZnsSsd, zones: u32, requests: u64, pages: u32) -> Nanos {
    let zone_blocks = d.config().zones.zone_blocks;
    let mut next: Vec<(Nanos, u64)> = (0..zones).map(|z| (0, u64::from(z) * zone_blocks)).collect();
    for _ in 0..requests * u64::from(zones) {
        let z = (0..next.len()).min_by_key(|&z| next[z].0).unwrap();
        let (now, block) = next[z];
        next[z] = (d.write(now, block, pages, USER).unwrap(), block + u64::from(pages));
    }
    next.iter().map(|&(t, _)| t).max().unwrap()
}

#[test]
fn every_preset_is_valid_and_found_by_name() {
    for name in ZNS_PRESET_NAMES {
        let config = zns_preset(name).unwrap();
        assert_eq!(&config.name, name);
        config.validate().unwrap();
    }
    assert!(zns_preset("zn541").is_none());
    // ZRAID §2.1: 904 zones of 1077 MiB; 40,704 of 96 MiB.
    assert_eq!(zn540().capacity_bytes(), (904 * 1077) << 20);
    assert_eq!(pm1731a().capacity_bytes(), (40_704 * 96) << 20);
}

#[test]
fn a_large_zone_spans_every_die_and_a_small_zone_one() {
    let large = zn540();
    let dies: Vec<u32> = (0..33).map(|o| large.die_of(5, o)).collect();
    assert_eq!(dies[..32], (0..32).collect::<Vec<_>>()[..]);
    assert_eq!(dies[32], 0);
    let small = pm1731a();
    assert!((0..1000).all(|o| small.die_of(5, o) == 5));
    assert_eq!(small.die_of(128 + 5, 0), 5, "zones share dies only 128 apart");
    assert_eq!(small.dies_written(7, 1000).collect::<Vec<_>>(), vec![7]);
    assert_eq!(large.dies_written(7, 3).count(), 3);
}

#[test]
fn zn540_writes_one_zone_at_the_rate_zraid_measured() {
    // 128 KiB writes, one zone, depth one: 1230 MB/s (ZRAID §2.1).
    let mut d = device(zn540());
    let requests = 4096;
    let elapsed = write_zones(&mut d, 1, requests, 32);
    let rate = mbps(requests * 32 * 4096, elapsed);
    assert!((rate - 1230.0).abs() < 1230.0 * 0.03, "{rate:.0} MB/s");
}

/// Appends `requests` of `pages` to one zone, `depth` in flight (a closed loop). Returns the
/// elapsed time.
fn append_zone(d: &mut ZnsSsd, depth: usize, requests: u64, pages: u32) -> Nanos {
    let mut free: Vec<Nanos> = vec![0; depth];
    for _ in 0..requests {
        let slot = (0..depth).min_by_key(|&i| free[i]).unwrap();
        free[slot] = d.append(free[slot], 0, pages, USER).unwrap().0;
    }
    free.into_iter().max().unwrap()
}

/// MiB/s, the unit fio reports.
fn mib_s(bytes: u64, ns: Nanos) -> f64 {
    bytes as f64 / 1048576.0 * 1e9 / ns as f64
}

#[test]
fn zn540_commands_take_what_the_characterisation_measured() {
    // Doekemeijer et al.'s ZN540 data (SPDK, 4 KiB format), which the preset's command
    // times are derived from: each figure within 3 %, or 5 % for a rate.
    let near = |got: f64, want: f64, tol: f64, what: &str| {
        assert!((got - want).abs() <= want * tol, "{what}: {got:.1} against {want}");
    };
    let mut d = device(zn540());
    let elapsed = write_zones(&mut d, 1, 200, 1);
    near(elapsed as f64 / 200.0 / 1000.0, 11.4, 0.03, "4 KiB Zone Write at depth 1, µs");
    let mut d = device(zn540());
    near(append_zone(&mut d, 1, 200, 1) as f64 / 200.0 / 1000.0, 14.8, 0.03, "4 KiB Zone Append at depth 1, µs");
    let mut d = device(zn540());
    near(mib_s(8 * 2000 * 4096, write_zones(&mut d, 8, 2000, 1)), 726.0, 0.05, "4 KiB writes, 8 zones, MiB/s");
    for depth in [4, 16] {
        let mut d = device(zn540());
        near(mib_s(8000 * 4096, append_zone(&mut d, depth, 8000, 1)), 516.0, 0.05, "4 KiB appends, one zone, MiB/s");
    }
    // Where the model is known short: its intake costs a command the same whatever its size,
    // so 8 KiB appends at depth 4 stop at 8 KiB per 7.57 µs, about 10 % below the 1145 MiB/s
    // the drive reaches. The ZapRAID comparison runs at 4 KiB, where the intake is measured.
    let mut d = device(zn540());
    let eight = mib_s(8000 * 8192, append_zone(&mut d, 4, 8000, 2));
    assert!((0.85..0.95).contains(&(eight / 1145.0)), "8 KiB appends, depth 4: {eight:.0} MiB/s");
}

#[test]
fn pm1731a_writes_45_mb_s_a_zone_and_zones_on_other_dies_add_up() {
    let mut one = device(pm1731a());
    let rate = mbps(256 * 32 * 4096, write_zones(&mut one, 1, 256, 32));
    assert!((rate - 45.0).abs() < 45.0 * 0.03, "one zone: {rate:.1} MB/s");
    let mut eight = device(pm1731a());
    let rate8 = mbps(8 * 256 * 32 * 4096, write_zones(&mut eight, 8, 256, 32));
    assert!((rate8 / rate - 8.0).abs() < 0.2, "eight zones: {rate8:.1} MB/s against {rate:.1} for one");
}

#[test]
fn a_command_off_the_contract_is_refused_before_it_is_timed() {
    let mut d = device(zn540());
    d.write(0, 0, 8, USER).unwrap();
    let (busy, pages, erases) = (d.busy_until(), d.stats().host_pages_written, d.stats().erases);
    assert!(matches!(d.write(busy, 4, 1, USER), Err(ZoneError::NotAtWritePointer { .. })));
    assert!(matches!(d.append(busy, 64, 1, USER), Err(ZoneError::NoSuchZone { zone: 64 })));
    assert!(matches!(d.read(busy, 64 * d.config().zones.zone_blocks, 1, USER), Err(ZoneError::OutOfRange { .. })));
    let after = (d.busy_until(), d.stats().host_pages_written, d.stats().erases);
    assert_eq!(after, (busy, pages, erases), "a refused command changed the device");
    assert_eq!(d.stats().read_latency_us.len(), 0, "a refused read was counted");
}

#[test]
fn appends_land_one_after_another_and_cost_what_a_write_does() {
    let (mut a, mut w) = (device(pm1731a()), device(pm1731a()));
    let zone_blocks = a.config().zones.zone_blocks;
    let (first, at) = a.append(0, 3, 4, USER).unwrap();
    assert_eq!(at, 3 * zone_blocks);
    let (_, at2) = a.append(first, 3, 4, USER).unwrap();
    assert_eq!(at2, 3 * zone_blocks + 4);
    assert_eq!(first, w.write(0, 3 * zone_blocks, 4, USER).unwrap());
    assert_eq!(a.zone_stats().appends, 2);
}

#[test]
fn a_reset_erases_each_die_the_zone_wrote_and_a_write_after_it_waits_for_the_erase() {
    let mut d = device(pm1731a());
    let written = d.write(0, 0, 8, USER).unwrap();
    let reset = d.reset(written, 0).unwrap();
    assert_eq!(d.stats().erases, 1, "a small zone lives on one die");
    assert!(reset >= written + d.config().t_erase_ns, "{reset} ns");
    assert_eq!(d.zones().zone(0).condition, ZoneCondition::Empty);
    // Unbuffered, the next write's program waits for its die's erase.
    let again = d.write(written, 0, 1, USER).unwrap();
    assert!(again > reset, "write done at {again} ns before the erase ending at {reset} ns");
    let mut large = device(zn540());
    large.write(0, 0, 100, USER).unwrap();
    large.reset(0, 0).unwrap();
    assert_eq!(large.stats().erases, 32, "a large zone is erased on all 32 dies");
    // A zone never written costs no erase.
    large.reset(0, 1).unwrap();
    assert_eq!((large.stats().erases, large.zone_stats().resets), (32, 2));
}

#[test]
fn a_flush_waits_until_every_acknowledged_write_is_programmed() {
    let mut d = device(zn540());
    let acked = d.write(0, 0, 64, USER).unwrap();
    let programmed = d.timing.drained_at();
    assert!(acked < programmed / 2, "writes acknowledged at {acked} ns wait for their programs ({programmed} ns)");
    let flushed = d.flush(acked);
    assert!(flushed >= programmed, "FLUSH done at {flushed} ns before the programs ending at {programmed} ns");
    // Without a buffer, a write is acknowledged only once programmed.
    let mut unbuffered = device(pm1731a());
    let done = unbuffered.write(0, 0, 1, USER).unwrap();
    assert!(done >= unbuffered.timing.drained_at().max(unbuffered.config().t_prog_ns));
}

#[test]
fn reads_of_pages_never_written_cost_no_media_time() {
    let mut d = device(pm1731a());
    let written = d.write(0, 0, 1, USER).unwrap();
    let cmd = d.config().read_cmd_ns;
    assert_eq!(d.read(written, 1, 1, USER).unwrap(), written + cmd);
    assert!(d.read(written, 0, 1, USER).unwrap() >= written + d.config().t_read_ns + cmd);
    // After a Finish, the pages past the last written one still hold nothing.
    d.finish(written, 0).unwrap();
    assert_eq!(d.read(written, 5, 1, USER).unwrap(), written + cmd);
}

#[test]
fn through_the_block_interface_a_trim_of_whole_zones_resets_them() {
    let mut d = device(pm1731a());
    let zone_blocks = d.config().zones.zone_blocks;
    let op = |kind, block, count| DevOp { kind, block, count, class: USER };
    let t = d.submit(0, op(DevOpKind::Write, 0, 8));
    d.submit(t, op(DevOpKind::Write, zone_blocks, 8));
    d.submit(t, op(DevOpKind::Trim, 0, 2 * zone_blocks as u32));
    assert_eq!(d.zone_stats().resets, 2);
    assert!((0..2).all(|z| d.zones().zone(z).condition == ZoneCondition::Empty));
}

#[test]
#[should_panic(expected = "broke the zoned device's contract")]
fn through_the_block_interface_a_write_off_the_write_pointer_panics() {
    let mut d = device(zn540());
    d.submit(0, DevOp { kind: DevOpKind::Write, block: 1, count: 1, class: USER });
}

#[test]
#[should_panic(expected = "only a Zone Reset frees space")]
fn through_the_block_interface_a_trim_of_part_of_a_zone_panics() {
    let mut d = device(zn540());
    d.submit(0, DevOp { kind: DevOpKind::Trim, block: 0, count: 256, class: USER });
}

#[test]
fn a_bad_config_is_refused_with_its_reason() {
    let wide = ZnsConfig { zone_dies: 33, ..zn540() };
    assert!(ZnsSsd::new(wide).err().unwrap().to_string().contains("a zone over 33 dies of 32"));
    let mut geometry = zn540();
    geometry.zones.capacity_blocks = geometry.zones.zone_blocks + 1;
    assert!(ZnsSsd::new(geometry).err().unwrap().to_string().contains("exceeds the zone size"));
}

#[test]
fn an_untimed_fill_moves_the_write_pointers_and_takes_no_time() {
    let mut d = device(pm1731a());
    d.write_untimed(0, 100).unwrap();
    assert_eq!(d.zones().zone(0).write_pointer, 100);
    assert_eq!(d.busy_until(), 0);
    assert!(matches!(d.write_untimed(0, 1), Err(ZoneError::NotAtWritePointer { .. })));
    d.reset_untimed(0).unwrap();
    assert_eq!((d.zones().zone(0).condition, d.busy_until(), d.stats().erases), (ZoneCondition::Empty, 0, 0));
}

#[test]
fn read_wait_sees_the_programs_queued_on_a_pages_die_and_nothing_for_unwritten_pages() {
    let mut d = ZnsSsd::new(pm1731a().with_zones(129)).unwrap();
    d.write_untimed(0, 1).unwrap();
    assert_eq!(d.read_wait(0, 0, 1, USER), 0, "an idle die");
    // Zone 128 shares zone 0's die: a long write there holds the die.
    let zone_128 = 128 * d.config().zones.zone_blocks;
    let busy = d.write(0, zone_128, 64, USER).unwrap();
    let wait = d.read_wait(0, 0, 1, USER);
    assert!(wait > 0 && wait <= busy, "wait {wait} ns, die busy until {busy} ns");
    assert_eq!(d.read_wait(0, 1, 1, USER), 0, "page 1 of zone 0 holds nothing");
}

#[test]
fn a_model_takes_the_zones_a_report_gives_and_its_in_place_area_leaves_them_alone() {
    let geometry =
        ZoneGeometry { zones: 4, zone_blocks: 1024, capacity_blocks: 1024, max_open: None, max_active: None };
    let mut d = ZnsSsd::new(zn540().with_geometry(geometry)).unwrap();
    d.take_zone_untimed(1, 300, false).unwrap();
    d.take_zone_untimed(2, 10, true).unwrap();
    d.take_zone_untimed(3, 1024, true).unwrap();
    let z = |d: &ZnsSsd, zone| *d.zones().zone(zone);
    assert_eq!((z(&d, 1).write_pointer, z(&d, 2).condition, d.busy_until()), (300, ZoneCondition::Full, 0));
    // Taken again (a second report): the same state, not added to.
    d.take_zone_untimed(1, 300, false).unwrap();
    assert_eq!(z(&d, 1).write_pointer, 300);
    assert!(d.write(0, 1024 + 300, 4, USER).is_ok(), "the next write goes at the reported pointer");
    assert!(matches!(d.write(0, 2048 + 10, 1, USER), Err(ZoneError::Full { .. })));
    // The in-place area costs a program per page and touches no zone.
    let report = |d: &ZnsSsd| (0..4).map(|zone| z(d, zone)).collect::<Vec<_>>();
    let before = report(&d);
    let done = d.write_in_place(0, 7, 2, USER);
    assert!(done >= zn540().t_prog_ns, "a page programmed takes at least its program time: {done} ns");
    let read = d.read_in_place(done, 7, 1, USER);
    assert!(read >= done + zn540().t_read_ns, "read at {read} ns");
    assert_eq!(report(&d), before);
    assert_eq!((d.stats().host_pages_written, d.stats().host_pages_read), (6, 1));
}

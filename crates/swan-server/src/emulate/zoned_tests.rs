use super::*;
use swan_models::zns::presets::{pm1731a, zn540};

const USER: IoClass = IoClass::User;
/// Four zones of 1,024 blocks behind 256 conventional blocks.
const LAYOUT: ZonedLayout = ZonedLayout {
    conventional_blocks: 256,
    zones: ZoneGeometry { zones: 4, zone_blocks: 1024, capacity_blocks: 1024, max_open: Some(3), max_active: Some(3) },
};

fn zone_block(zone: u64, offset: u64) -> u64 {
    LAYOUT.conventional_blocks + zone * 1024 + offset
}

#[test]
fn zones_on_other_dies_write_side_by_side_and_a_zones_write_given_early_starts_no_sooner() {
    let mut m = ZonedModel::new(&pm1731a(), &LAYOUT).unwrap();
    let first = m.submit(0, DevOpKind::Write, zone_block(0, 0), 8, USER);
    // Zone 1 sits on another die of a PM1731a: it writes at the same pace, alongside.
    let other = m.submit(0, DevOpKind::Write, zone_block(1, 0), 8, USER);
    assert!(other <= first + first / 20, "zone 1 on its own die: {other} ns against {first}");
    assert_eq!(m.zone_done(0), first);
    // The engine holds a zone's next write until then; given early all the same (the engine
    // stopping), it still starts only once the zone's last write is done.
    let second = m.submit(0, DevOpKind::Write, zone_block(0, 8), 8, USER);
    assert!(second >= 2 * first - first / 20, "one zone, one write at a time: {first} then {second} ns");
    assert_eq!((m.device().zones().zone(0).write_pointer, m.refused()), (16, 0));
}

#[test]
fn the_in_place_area_and_a_reset_are_timed_and_a_write_off_the_pointer_is_counted() {
    let mut m = ZonedModel::new(&zn540(), &LAYOUT).unwrap();
    let meta = m.submit(0, DevOpKind::Write, 10, 4, USER);
    assert!(meta >= zn540().t_prog_ns, "the metadata area is programmed: {meta} ns");
    let w = m.submit(0, DevOpKind::Write, zone_block(2, 0), 1024, USER);
    assert_eq!(m.device().zones().zone(2).condition, ZoneCondition::Full);
    let reset = m.submit(w, DevOpKind::Trim, zone_block(2, 0), 1024, USER);
    assert!(reset >= w + zn540().t_erase_ns, "a reset erases: {reset} ns after {w}");
    assert_eq!(m.device().zones().zone(2).condition, ZoneCondition::Empty);
    assert_eq!(m.refused(), 0);
    m.submit(reset, DevOpKind::Write, zone_block(3, 5), 1, USER);
    assert_eq!(m.refused(), 1, "off the write pointer: the member would have refused it");
}

#[test]
fn a_report_sets_the_zones_and_reads_past_a_pointer_cost_no_media_time() {
    let mut m = ZonedModel::new(&zn540(), &LAYOUT).unwrap();
    let written = |wp| Zone { condition: ZoneCondition::Closed, write_pointer: wp, written: wp };
    let full = Zone { condition: ZoneCondition::Full, write_pointer: 1024, written: 40 };
    let empty = Zone { condition: ZoneCondition::Empty, write_pointer: 0, written: 0 };
    m.take_report(&[written(100), full, empty, empty]);
    assert_eq!(m.device().zones().zone(0).write_pointer, 100);
    assert_eq!(m.device().zones().zone(1).condition, ZoneCondition::Full);
    let held = m.submit(0, DevOpKind::Read, zone_block(0, 0), 1, USER);
    let nothing = m.submit(0, DevOpKind::Read, zone_block(0, 500), 1, USER);
    assert!(held >= zn540().t_read_ns && nothing < zn540().t_read_ns, "{held} ns against {nothing} ns");
    // The next write at the reported pointer is taken; the member's order goes on.
    m.submit(0, DevOpKind::Write, zone_block(0, 100), 4, USER);
    assert_eq!((m.device().zones().zone(0).write_pointer, m.refused()), (104, 0));
}
